# Tests for SG202 (policies/async_dependency_not_ready.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md (input.plan, input.refs[].target).
package syncguard.rules.async_dependency_not_ready_test

import data.syncguard.rules.async_dependency_not_ready as rule

deployment := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "svc-foo", "namespace": "app-foo", "annotations": {"argocd.argoproj.io/sync-wave": "2"}},
	"spec": {"template": {"spec": {"containers": [{
		"name": "app",
		"image": "registry.example.com/svc-foo:1.4.2",
		"envFrom": [{"secretRef": {"name": "db-credentials"}}],
		"volumeMounts": [{"name": "tls", "mountPath": "/etc/tls"}],
	}]}}},
}

migration_hook := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {"name": "svc-foo-migration", "namespace": "app-foo", "annotations": {"argocd.argoproj.io/hook": "Sync"}},
	"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "m", "image": "registry.example.com/svc-foo/migrate:1.4.2"}]}}},
}

facts(is_hook, wave) := {
	"phases": ["Sync"],
	"is_hook": is_hook,
	"hook_types": [h | some h in ["Sync"]; is_hook],
	"wave": wave,
	"wave_valid": true,
	"sync_options": {"items": [], "unknown": []},
}

task(phase, wave, step) := {"phase": phase, "wave": wave, "step": step, "gated": true, "final": false}

secret_via := "/spec/template/spec/containers/0/envFrom/0/secretRef/name"

tls_via := "/spec/template/spec/volumes/0/secret/secretName"

external_secret(tasks, health) := {
	"kind": "Secret",
	"group": "",
	"name": "db-credentials",
	"namespace": "app-foo",
	"via": secret_via,
	"optional": false,
	"role": "env_from",
	"target": {
		"resolution": "produced_by",
		"kind": "ExternalSecret",
		"group": "external-secrets.io",
		"name": "db-credentials",
		"namespace": "app-foo",
		"phases": ["Sync"],
		"wave": 2,
		"is_hook": false,
		"tasks": tasks,
		"async_producer": true,
		"health_check": health,
	},
}

sealed_tls(tasks, health) := {
	"kind": "Secret",
	"group": "",
	"name": "svc-foo-tls",
	"namespace": "app-foo",
	"via": tls_via,
	"optional": false,
	"role": "volume",
	"target": {
		"resolution": "produced_by",
		"kind": "SealedSecret",
		"group": "bitnami.com",
		"name": "svc-foo-tls",
		"namespace": "app-foo",
		"phases": ["Sync"],
		"wave": 0,
		"is_hook": false,
		"tasks": tasks,
		"async_producer": true,
		"health_check": health,
	},
}

plain_secret(tasks) := {
	"kind": "Secret",
	"group": "",
	"name": "svc-foo-tls",
	"namespace": "app-foo",
	"via": tls_via,
	"optional": false,
	"role": "volume",
	"target": {
		"resolution": "in_set",
		"kind": "Secret",
		"group": "",
		"name": "svc-foo-tls",
		"namespace": "app-foo",
		"phases": ["Sync"],
		"wave": 0,
		"is_hook": false,
		"tasks": tasks,
		"async_producer": false,
		"health_check": null,
	},
}

review(resource, sync, tasks, refs) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"plan": {"tasks": tasks, "steps": 3, "postsync_hooks": 0},
	"refs": refs,
	"dependents": [],
	"context": {"source": "check", "dry_run": false},
}

test_external_secret_in_the_consumers_own_step if {
	r := review(deployment, facts(false, 2), [task("Sync", 2, 1)], [external_secret([task("Sync", 2, 1)], "bundled-lua")])
	v := rule.violations with input as r
	v == {{
		"msg": concat("", [
			"Deployment app-foo/svc-foo may start before Secret app-foo/db-credentials exists: ",
			"it is produced by ExternalSecret app-foo/db-credentials at Sync wave 2, in the same step, ",
			"and the Secret appears only once its controller has reconciled it; until then the pods that need it cannot start, ",
			"and if it never appears this step never becomes Healthy and the sync waits. ",
			"Fix: give ExternalSecret app-foo/db-credentials a lower sync-wave than this Deployment (below 2), ",
			"so that Argo CD waits for it to be Healthy first.",
		]),
		"path": secret_via,
	}}
}

# A sync of one step: Argo CD does not wait for health (gitops-engine multiStep), so the pods
# start once the controller writes the Secret. Info, the condition first (trust-manager's and
# opentelemetry-operator's cert-manager Certificates, all at wave 0).
test_same_step_in_a_one_step_sync_is_info_with_the_condition_first if {
	r := review(deployment, facts(false, 2), [task("Sync", 2, 0)], [external_secret([task("Sync", 2, 0)], "bundled-lua")])
	one := object.union(r, {"plan": {"tasks": [task("Sync", 2, 0)], "steps": 1, "postsync_hooks": 0}})
	v := rule.violations with input as one
	v == {{
		"msg": concat("", [
			"If the controller of ExternalSecret app-foo/db-credentials never writes Secret app-foo/db-credentials, ",
			"Deployment app-foo/svc-foo never starts: it is produced by ExternalSecret app-foo/db-credentials at Sync wave 2, ",
			"in the same step, and its pods wait for the Secret. This sync has one step, so Argo CD does not wait for health ",
			"and the pods start as soon as the Secret appears; nothing to do while that controller runs.",
		]),
		"path": secret_via,
		"severity": "info",
	}}
}

test_external_secret_in_an_earlier_wave_with_a_health_check_is_fine if {
	r := review(deployment, facts(false, 3), [task("Sync", 3, 2)], [external_secret([task("Sync", 2, 1)], "bundled-lua")])
	count(rule.violations) == 0 with input as r
}

test_same_step_without_a_health_check_also_asks_for_one if {
	r := review(deployment, facts(false, 0), [task("Sync", 0, 0)], [sealed_tls([task("Sync", 0, 0)], null)])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == tls_via
	endswith(x.msg, "so that Argo CD waits for it to be Healthy first. Stock Argo CD has no health check for SealedSecret, so also add one (argocd-cm key resource.customizations.health.bitnami.com_SealedSecret).")
}

test_an_earlier_producer_without_a_health_check_does_not_gate if {
	r := review(deployment, facts(false, 2), [task("Sync", 2, 1)], [sealed_tls([task("Sync", 0, 0)], null)])
	v := rule.violations with input as r
	v == {{
		"msg": concat("", [
			"Deployment app-foo/svc-foo may start before Secret app-foo/svc-foo-tls exists: ",
			"it is produced by SealedSecret app-foo/svc-foo-tls at Sync wave 0, but stock Argo CD has no health check for SealedSecret, ",
			"so it does not wait for the Secret before starting Sync wave 2; ",
			"the pods that need it cannot start until the controller has reconciled it. ",
			"Fix: add a health check that reports Healthy once the Secret is written ",
			"(argocd-cm key resource.customizations.health.bitnami.com_SealedSecret), so that the wave order holds.",
		]),
		"path": tls_via,
	}}
}

test_an_unknown_health_check_fact_is_not_reported if {
	ref := json.remove(sealed_tls([task("Sync", 0, 0)], null), ["target/health_check"])
	r := review(deployment, facts(false, 2), [task("Sync", 2, 1)], [ref])
	count(rule.violations) == 0 with input as r
}

test_a_hook_in_the_producers_step_is_left_to_sg201 if {
	r := review(migration_hook, facts(true, 2), [task("Sync", 2, 1)], [external_secret([task("Sync", 2, 1)], "bundled-lua")])
	count(rule.violations) == 0 with input as r
}

test_a_hook_after_an_ungated_producer_is_reported if {
	r := review(migration_hook, facts(true, 2), [task("Sync", 2, 1)], [sealed_tls([task("Sync", 0, 0)], null)])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	startswith(x.msg, "Job app-foo/svc-foo-migration may start before Secret app-foo/svc-foo-tls exists:")
	object.keys(x) == {"msg", "path"}
}

test_a_secret_applied_by_argo_cd_in_the_same_step_is_fine if {
	r := review(deployment, facts(false, 0), [task("Sync", 0, 0)], [plain_secret([task("Sync", 0, 0)])])
	count(rule.violations) == 0 with input as r
}

test_a_dependency_in_a_later_step_is_left_to_sg207 if {
	# SG202's former case 3: a normal workload whose dependency (applied or produced) comes in a
	# later step is now reported by SG207 (policies/forward_dependency.rego) only
	r := review(deployment, facts(false, 0), [task("Sync", 0, 0)], [plain_secret([task("Sync", 1, 1)])])
	count(rule.violations) == 0 with input as r
	p := review(deployment, facts(false, 0), [task("Sync", 0, 0)], [external_secret([task("Sync", 2, 1)], "bundled-lua")])
	count(rule.violations) == 0 with input as p
}

test_optional_references_are_not_reported if {
	ref := object.union(external_secret([task("Sync", 2, 1)], "bundled-lua"), {"optional": true})
	r := review(deployment, facts(false, 2), [task("Sync", 2, 1)], [ref])
	count(rule.violations) == 0 with input as r
}

test_missing_builtin_and_unknown_targets_are_not_this_rules_business if {
	refs := [
		object.union(plain_secret([]), {"target": {"resolution": "missing"}}),
		object.union(plain_secret([]), {"target": {"resolution": "unknown"}}),
		{"kind": "ServiceAccount", "name": "default", "via": "/spec/template/spec/serviceAccountName", "optional": false, "role": "service_account", "target": {"resolution": "builtin"}},
	]
	r := review(deployment, facts(false, 2), [task("Sync", 2, 1)], refs)
	count(rule.violations) == 0 with input as r
}

test_a_deletion_is_never_judged if {
	r := review(deployment, facts(false, 2), [task("Sync", 2, 1)], [external_secret([task("Sync", 2, 1)], "bundled-lua")])
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": 1, "sync": [], "plan": [], "refs": {"a": 1}}
	r := review(deployment, facts(false, 2), "x", [1, {"role": "env_from", "target": []}, external_secret("x", null)])
	count(rule.violations) == 0 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG202"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG202.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
