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

# ---- argocd-cm custom health checks (issue-13 facts) ----

test_a_custom_health_check_for_the_kind_decides if {
	custom := object.union(review(public_lb, [task("Sync", 0, 0, true, false)], 1, []), {"health_check": "custom"})
	count(rule.violations) == 0 with input as custom
	listed := object.union(review(web_ingress, [task("Sync", 0, 0, true, false)], 1, []), {"argocd": {"config": {"source": "input", "health_checks": ["networking.k8s.io/*"]}}})
	count(rule.violations) == 0 with input as listed
	core := object.union(review(public_lb, [task("Sync", 0, 0, true, false)], 0, []), {"argocd": {"config": {"source": "file", "health_checks": ["/Service"]}}})
	count(rule.violations) == 0 with input as core
}

test_a_custom_check_for_another_kind_changes_nothing if {
	r := object.union(review(public_lb, [task("Sync", 0, 0, true, false)], 0, []), {"argocd": {"config": {"source": "input", "health_checks": ["/ConfigMap", "argoproj.io/Application"]}}, "health_check": "builtin"})
	count(rule.violations) == 1 with input as r
}

# ---- custom resources with a Lua health check ----

certificate := {
	"apiVersion": "cert-manager.io/v1",
	"kind": "Certificate",
	"metadata": {"name": "shop-tls", "namespace": "shop"},
	"spec": {"secretName": "shop-tls", "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"}, "dnsNames": ["shop.example.com"]},
}

definition_ref := {
	"kind": "CustomResourceDefinition", "group": "apiextensions.k8s.io", "name": "certificates.cert-manager.io", "namespace": "",
	"via": "/apiVersion", "optional": false, "role": "definition", "defines": {"group": "cert-manager.io", "kind": "Certificate"},
	"target": {"resolution": "missing"},
}

cr_review(resource, tasks, postsync_hooks, health_check, source) := object.union(review(resource, tasks, postsync_hooks, []), {
	"health_check": health_check,
	"refs": [definition_ref],
	"context": {"source": source, "dry_run": false},
})

test_a_lua_checked_custom_resource_in_an_early_wave_is_recorded if {
	v := rule.violations with input as cr_review(certificate, [task("Sync", 0, 0, true, false)], 0, "bundled-lua", "check")
	v == {{
		"msg": concat("", [
			"Certificate shop/shop-tls at Sync wave 0 can block the 2 later steps: ",
			"Argo CD starts the next step only once every object of this one is Healthy, ",
			"and its health check (the Lua check bundled with Argo CD for cert-manager.io/Certificate) reads the status its controller writes: ",
			"until that controller has reconciled it, and for ever if the controller is not installed in this cluster or does not watch this namespace, ",
			"there is no status and the check reports it Progressing (most Lua checks do while status is empty). ",
			"Fix: make sure that controller runs before this sync (installed by an earlier Application or wave), ",
			"or, since nothing in this Application references this object, put it in the last wave.",
		]),
		"path": "/spec",
		"severity": "info",
		"action": "audit",
	}}
}

test_the_later_steps_are_counted if {
	v := rule.violations with input as cr_review(certificate, [task("Sync", 1, 1, true, false)], 0, "custom", "check")
	count(v) == 1
	some x in v
	startswith(x.msg, "Certificate shop/shop-tls at Sync wave 1 can block the later step: ")
	contains(x.msg, "(argocd-cm's custom check for cert-manager.io/Certificate)")
	r := object.union(cr_review(certificate, [task("Sync", 0, 0, true, false)], 0, "custom", "check"), {"plan": {"steps": "3"}})
	w := rule.violations with input as r
	some y in w
	startswith(y.msg, "Certificate shop/shop-tls at Sync wave 0 can block every later step: ")
}

test_a_live_custom_resource_without_status_is_evidence if {
	v := rule.violations with input as cr_review(certificate, [task("Sync", 0, 0, true, false)], 0, "bundled-lua", "audit")
	count(v) == 1
	some x in v
	x.severity == "low"
	not x.action
	contains(x.msg, "and it is live with no status yet: its health check (the Lua check bundled with Argo CD for cert-manager.io/Certificate) reads the status its controller writes, so either that controller is not running")
}

test_a_custom_resource_with_status_has_a_controller if {
	live := object.union(certificate, {"status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Pending"}]}})
	count(rule.violations) == 0 with input as cr_review(live, [task("Sync", 0, 0, true, false)], 1, "bundled-lua", "audit")
}

test_a_custom_resource_before_postsync_hooks if {
	v := rule.violations with input as cr_review(certificate, [task("Sync", 0, 0, true, false)], 2, "bundled-lua", "check")
	count(v) == 1
	some x in v
	startswith(x.msg, "Certificate shop/shop-tls in the Sync phase can keep the PostSync hooks (2) from ever running: ")
	endswith(x.msg, "or do not rely on PostSync hooks in this Application.")
	x.action == "audit"
}

test_custom_resources_that_are_not_waited_for if {
	# the last step
	count(rule.violations) == 0 with input as cr_review(certificate, [task("Sync", 2, 2, false, true)], 0, "bundled-lua", "check")

	# no health check: Healthy as soon as it exists
	count(rule.violations) == 0 with input as cr_review(certificate, [task("Sync", 0, 0, true, false)], 0, null, "check")

	# a compiled-in check (argoproj.io Workflow) is not a controller-written status guess
	workflow := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "seed", "namespace": "shop"}, "spec": {}}
	count(rule.violations) == 0 with input as cr_review(workflow, [task("Sync", 0, 0, true, false)], 0, "builtin", "check")

	# Argo CD's own Application is SG208's
	app := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "payments", "namespace": "argocd"}, "spec": {}}
	count(rule.violations) == 0 with input as object.union(cr_review(app, [task("Sync", 0, 0, true, false)], 0, "custom", "check"), {"refs": []})

	# a built-in kind with a custom check: its controller is part of Kubernetes
	deployment := {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}, "spec": {}}
	count(rule.violations) == 0 with input as object.union(cr_review(deployment, [task("Sync", 0, 0, true, false)], 0, "custom", "check"), {"refs": []})
	crd := {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "certificates.cert-manager.io"}, "spec": {}}
	count(rule.violations) == 0 with input as object.union(cr_review(crd, [task("Sync", 0, 0, true, false)], 0, "bundled-lua", "check"), {"refs": []})
}

test_a_custom_resource_something_needs_is_left_to_the_dependency_rules if {
	reader := {
		"kind": "Deployment", "group": "apps", "name": "web", "namespace": "shop", "role": "volume",
		"via": "/spec/template/spec/volumes/0/secret/secretName", "is_hook": false, "phases": ["Sync"], "wave": 1,
	}
	r := object.union(cr_review(certificate, [task("Sync", 0, 0, true, false)], 0, "bundled-lua", "check"), {"dependents": [reader]})
	count(rule.violations) == 0 with input as r
	live := object.union(r, {"context": {"source": "audit"}})
	count(rule.violations) == 1 with input as live
}

test_without_refs_the_group_tells_a_custom_resource if {
	r := object.union(cr_review(certificate, [task("Sync", 0, 0, true, false)], 0, "bundled-lua", "check"), {"refs": "x"})
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

test_a_claim_a_volume_of_the_input_binds_at_once_is_fine if {
	static := object.union(review(data_claim, [task("Sync", 0, 0, true, false)], 1, []), {"waits": {"no_health": false, "parks": [], "needs": [], "bound": null, "binds": "PersistentVolume pv-data"}})
	count(rule.violations) == 0 with input as static
	# the waits facts without a binding volume change nothing
	unbound := object.union(review(data_claim, [task("Sync", 0, 0, true, false)], 1, []), {"waits": {"no_health": false, "parks": [], "needs": [], "bound": null}})
	count(rule.violations) == 1 with input as unbound
}
