# Tests for SG206 (policies/health_gate_may_block.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md (input.plan, input.dependents).
package syncguard.rules.health_gate_may_block_test

import data.syncguard.rules.health_gate_may_block as rule

public_lb := {
	"apiVersion": "v1",
	"kind": "Service",
	"metadata": {"name": "public", "namespace": "shop"},
	"spec": {"type": "LoadBalancer", "selector": {"app": "web"}, "ports": [{"port": 443, "targetPort": 8443}]},
}

web_ingress := {
	"apiVersion": "networking.k8s.io/v1",
	"kind": "Ingress",
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": {
		"ingressClassName": "nginx",
		"rules": [{"host": "shop.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}],
	},
}

data_claim := {
	"apiVersion": "v1",
	"kind": "PersistentVolumeClaim",
	"metadata": {"name": "data", "namespace": "shop"},
	"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
}

facts := {"phases": ["Sync"], "is_hook": false, "hook_types": [], "wave": 0}

task(phase, wave, step, gated, final) := {"phase": phase, "wave": wave, "step": step, "gated": gated, "final": final}

review(resource, tasks, postsync_hooks, dependents) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": facts,
	"plan": {"tasks": tasks, "steps": 3, "postsync_hooks": postsync_hooks},
	"refs": [],
	"dependents": dependents,
	"context": {"source": "check", "dry_run": false},
}

consumer(phase, wave) := {
	"kind": "StatefulSet", "group": "apps", "name": "db", "namespace": "shop", "role": "volume",
	"via": "/spec/template/spec/volumes/0/persistentVolumeClaim/claimName",
	"is_hook": phase == "PreSync", "phases": [phase], "wave": wave,
}

test_load_balancer_in_an_early_wave_blocks_later_waves if {
	v := rule.violations with input as review(public_lb, [task("Sync", 0, 0, true, false)], 0, [])
	v == {{
		"msg": concat("", [
			"Service shop/public (type LoadBalancer) at Sync wave 0 can block every later step: ",
			"Argo CD starts the next step only once every object of this one is Healthy, ",
			"and a LoadBalancer Service stays Progressing until a load-balancer address is assigned, ",
			"for ever on a cluster without a load-balancer controller (argo-cd#14607). ",
			"Fix: put it in the last wave of the sync, or make sure this cluster assigns load-balancer addresses (a cloud load balancer, MetalLB).",
		]),
		"path": "/spec/type",
	}}
}

test_load_balancer_in_the_final_step_is_not_waited_for if {
	count(rule.violations) == 0 with input as review(public_lb, [task("Sync", 2, 2, false, true)], 0, [])
}

test_load_balancer_with_an_address_is_healthy if {
	live := object.union(public_lb, {"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.10"}]}}})
	count(rule.violations) == 0 with input as review(live, [task("Sync", 0, 0, true, false)], 0, [])
}

test_a_cluster_ip_service_is_always_healthy if {
	svc := json.patch(public_lb, [{"op": "replace", "path": "/spec/type", "value": "ClusterIP"}])
	count(rule.violations) == 0 with input as review(svc, [task("Sync", 0, 0, true, false)], 0, [])
}

test_ingress_in_the_sync_phase_keeps_postsync_hooks_from_running if {
	v := rule.violations with input as review(web_ingress, [task("Sync", 3, 2, true, false)], 2, [])
	v == {{
		"msg": concat("", [
			"Ingress shop/web in the Sync phase can keep the PostSync hooks (2) from ever running: ",
			"Argo CD runs PostSync hooks only once every Sync-phase object is Healthy, ",
			"and an Ingress stays Progressing until its controller publishes status.loadBalancer.ingress, ",
			"which some controllers never do (argo-cd#14607). ",
			"Fix: make the ingress controller publish its address (ingress-nginx: --publish-service), ",
			"or do not rely on PostSync hooks in this Application.",
		]),
		"path": "/spec",
	}}
}

test_an_early_ingress_with_postsync_hooks_gets_the_postsync_message_only if {
	v := rule.violations with input as review(web_ingress, [task("Sync", 0, 0, true, false)], 1, [])
	count(v) == 1
	some x in v
	startswith(x.msg, "Ingress shop/web in the Sync phase can keep the PostSync hooks (1) from ever running:")
}

test_an_extensions_ingress_in_a_presync_step_blocks_the_sync_phase if {
	legacy := object.union(web_ingress, {"apiVersion": "extensions/v1beta1"})
	v := rule.violations with input as review(legacy, [task("PreSync", 0, 0, true, false)], 1, [])
	count(v) == 1
	some x in v
	startswith(x.msg, "Ingress shop/web at PreSync wave 0 can block every later step:")
	endswith(x.msg, "Fix: put it in the last wave of the sync, or make the ingress controller publish its address (ingress-nginx: --publish-service).")
}

test_an_ingress_with_a_published_address_is_healthy if {
	live := object.union(web_ingress, {"status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"}]}}})
	count(rule.violations) == 0 with input as review(live, [task("Sync", 0, 0, true, false)], 1, [])
}

test_a_claim_used_only_in_a_later_wave_deadlocks if {
	v := rule.violations with input as review(data_claim, [task("Sync", 0, 0, true, false)], 0, [consumer("Sync", 1)])
	v == {{
		"msg": concat("", [
			"PersistentVolumeClaim shop/data at Sync wave 0 can block every later step: ",
			"Argo CD starts the next step only once every object of this one is Healthy, ",
			"and a claim whose StorageClass binds WaitForFirstConsumer (the default class on most clouds) stays Pending, ",
			"which Argo CD reads as Progressing, until a pod uses it, and nothing in this step or before it does (argo-cd#12840). ",
			"Fix: put it in the same wave as its first consumer, or use a StorageClass with volumeBindingMode: Immediate.",
		]),
		"path": "/spec",
	}}
}

test_a_claim_used_in_its_own_wave_or_earlier_is_fine if {
	count(rule.violations) == 0 with input as review(data_claim, [task("Sync", 0, 0, true, false)], 0, [consumer("Sync", 0)])
	count(rule.violations) == 0 with input as review(data_claim, [task("Sync", 0, 1, true, false)], 0, [consumer("PreSync", 5)])
	count(rule.violations) == 0 with input as review(data_claim, [task("Sync", 0, 0, true, false)], 1, [consumer("Sync", -1)])
}

test_a_claim_nobody_uses_keeps_postsync_from_running if {
	v := rule.violations with input as review(data_claim, [task("Sync", 0, 0, true, false)], 1, [])
	count(v) == 1
	some x in v
	startswith(x.msg, "PersistentVolumeClaim shop/data in the Sync phase can keep the PostSync hooks (1) from ever running:")
	endswith(x.msg, "Fix: use a StorageClass with volumeBindingMode: Immediate, or do not rely on PostSync hooks in this Application.")
}

test_a_pre_bound_or_bound_claim_is_fine if {
	prebound := object.union(data_claim, {"spec": {"volumeName": "pv-data-0"}})
	count(rule.violations) == 0 with input as review(prebound, [task("Sync", 0, 0, true, false)], 1, [])
	bound := object.union(data_claim, {"status": {"phase": "Bound"}})
	count(rule.violations) == 0 with input as review(bound, [task("Sync", 0, 0, true, false)], 1, [])
}

test_a_single_step_sync_waits_for_nothing if {
	count(rule.violations) == 0 with input as review(public_lb, [task("Sync", 0, 0, false, true)], 0, [])
}

test_without_a_plan_nothing_is_reported if {
	count(rule.violations) == 0 with input as object.remove(review(public_lb, [], 0, []), ["plan"])
}

test_a_deletion_is_never_judged if {
	r := review(public_lb, [task("Sync", 0, 0, true, false)], 1, [])
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": public_lb, "plan": {"tasks": "x", "postsync_hooks": "2"}}
	count(rule.violations) == 0 with input as {"resource": object.union(public_lb, {"status": {"loadBalancer": "x"}}), "plan": {"tasks": [1, "x"]}}
	r := review(data_claim, [task("Sync", "0", 0, true, false)], 0, [1, {"role": "volume", "phases": "Sync", "wave": 0}, consumer("Sync", "1")])
	count(rule.violations) == 1 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG206"
	rule.meta.severity == "low"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG206.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
