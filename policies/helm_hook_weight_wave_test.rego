# Tests for SG117 (policies/helm_hook_weight_wave.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync and input.plan facts are written out as model::argo and the plan
# compute them.
package syncguard.rules.helm_hook_weight_wave_test

import data.syncguard.rules.helm_hook_weight_wave as rule

# A chart's migration Job (helm.sh/hook: pre-install,pre-upgrade, weight 10) that the user turned
# into a Sync hook with argocd.argoproj.io/hook, as chatwoot/charts#207 discusses.
migrate_job(annotations) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {"name": "chat-migrate", "namespace": "chat", "annotations": annotations},
	"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "migrate", "image": "registry.example.com/chat/app:4.1.0"}]}}},
}

helm_annotations := {
	"helm.sh/hook": "pre-install,pre-upgrade",
	"helm.sh/hook-weight": "10",
	"helm.sh/hook-delete-policy": "before-hook-creation",
}

facts(overrides) := object.union(
	{
		"phases": ["PreSync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["PreSync"],
		"helm_hooks": ["pre-install", "pre-upgrade"],
		"wave": 10,
		"wave_raw": null,
		"wave_valid": true,
		"wave_source": "hook-weight",
		"delete_policies": ["BeforeHookCreation"],
		"delete_policy_set": true,
		"sync_options": {"items": [], "unknown": []},
	},
	overrides,
)

sync_facts := facts({"phases": ["Sync"], "hook_types": ["Sync"]})

plan(phase, step, steps) := {"tasks": [{"phase": phase, "wave": 10, "step": step, "gated": true, "final": false}], "steps": steps, "postsync_hooks": 0}

review(resource, sync, p) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": sync,
	"plan": p,
	"context": {"source": "check", "dry_run": false},
}

weight_path := "/metadata/annotations/helm.sh~1hook-weight"

test_a_sync_hook_with_a_positive_weight_runs_after_the_lower_waves if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "Sync"}))
	v := rule.violations with input as review(job, sync_facts, plan("Sync", 3, 5))
	v == {{
		"msg": concat("", [
			"Job chat/chat-migrate is a Sync hook whose wave comes from helm.sh/hook-weight: \"10\" (it has no valid argocd.argoproj.io/sync-wave): ",
			"Argo CD runs it in Sync wave 10 (step 4 of 5), only after every Sync-phase object of a lower wave has been applied and is Healthy, ",
			"while Helm uses the weight only to order hooks among themselves. ",
			"argocd.argoproj.io/hook overrides helm.sh/hook (pre-install,pre-upgrade), but the weight still sets the wave. ",
			"If the application's resources need what it does (a migration), give it an argocd.argoproj.io/sync-wave lower than theirs; otherwise set the wave it should have explicitly.",
		]),
		"path": weight_path,
		"severity": "low",
	}}
}

test_without_a_plan_the_step_is_left_out if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "Sync"}))
	r := object.remove(review(job, sync_facts, {}), ["plan"])
	some x in rule.violations with input as r
	contains(x.msg, "Argo CD runs it in Sync wave 10, only after")
}

test_a_plain_argo_sync_hook_with_a_weight_has_no_override_note if {
	job := migrate_job({"argocd.argoproj.io/hook": "Sync", "helm.sh/hook-weight": "3"})
	r := review(job, facts({"phases": ["Sync"], "hook_types": ["Sync"], "helm_hooks": [], "wave": 3}), plan("Sync", 1, 2))
	some x in rule.violations with input as r
	contains(x.msg, "Argo CD runs it in Sync wave 3 (step 2 of 2), only after")
	not contains(x.msg, "overrides helm.sh/hook")
}

# A negative weight puts the hook before the default wave: what a migration wants (SG201 reports a
# hook that needs an object of a later wave).
test_a_sync_hook_with_a_negative_weight_is_not_reported if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "Sync", "helm.sh/hook-weight": "-5"}))
	count(rule.violations) == 0 with input as review(job, facts({"phases": ["Sync"], "hook_types": ["Sync"], "wave": -5}), {})
}

test_a_valid_sync_wave_wins_over_the_weight if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "Sync", "argocd.argoproj.io/sync-wave": "-1"}))
	r := review(job, facts({"phases": ["Sync"], "hook_types": ["Sync"], "wave": -1, "wave_raw": "-1", "wave_source": "sync-wave"}), {})
	count(rule.violations) == 0 with input as r
}

# Plain Helm hooks: the weight orders the hooks of their phase, as in Helm.
test_helm_hooks_in_their_own_phase_are_not_reported if {
	count(rule.violations) == 0 with input as review(migrate_job(helm_annotations), facts({}), plan("PreSync", 0, 5))
	post := migrate_job(object.union(helm_annotations, {"helm.sh/hook": "post-install"}))
	r := review(post, facts({"phases": ["PostSync"], "hook_types": ["PostSync"], "helm_hooks": ["post-install"]}), {})
	count(rule.violations) == 0 with input as r
}

test_an_argo_hook_moving_a_helm_hook_to_another_phase_keeps_the_weight if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "PostSync"}))
	r := review(job, facts({"phases": ["PostSync"], "hook_types": ["PostSync"]}), plan("PostSync", 4, 5))
	v := rule.violations with input as r
	v == {{
		"msg": "Job chat/chat-migrate: argocd.argoproj.io/hook (PostSync) overrides helm.sh/hook (pre-install,pre-upgrade), but Argo CD still takes the wave from helm.sh/hook-weight: \"10\", so it runs at PostSync wave 10 (step 5 of 5). Set argocd.argoproj.io/sync-wave to make that order explicit (a valid sync-wave wins over the weight), or remove the weight.",
		"path": weight_path,
		"severity": "info",
	}}
}

test_an_argo_hook_that_agrees_with_helm_is_not_reported if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "PreSync"}))
	count(rule.violations) == 0 with input as review(job, facts({}), {})
}

# A weight of 0 is the default wave: nothing changes.
test_a_zero_weight_changes_nothing if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "PostSync", "helm.sh/hook-weight": "0"}))
	count(rule.violations) == 0 with input as review(job, facts({"phases": ["PostSync"], "hook_types": ["PostSync"], "wave": 0}), {})
	deploy := {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "chat", "namespace": "chat", "annotations": {"helm.sh/hook-weight": "0"}}}
	normal := facts({"phases": ["Sync"], "is_hook": false, "hook_types": [], "helm_hooks": [], "wave": 0})
	count(rule.violations) == 0 with input as review(deploy, normal, {})
}

normal_facts(wave) := facts({"phases": ["Sync"], "is_hook": false, "hook_types": [], "helm_hooks": [], "wave": wave, "delete_policy_set": false})

test_a_normal_resource_with_a_stray_weight_leaves_wave_0 if {
	deploy := {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "chat", "namespace": "chat", "annotations": {"helm.sh/hook-weight": "5"}}}
	v := rule.violations with input as review(deploy, normal_facts(5), plan("Sync", 2, 3))
	v == {{
		"msg": "Deployment chat/chat is not a hook, yet Argo CD takes its sync wave from helm.sh/hook-weight: \"5\" (it reads the weight of every object without a valid argocd.argoproj.io/sync-wave): it is applied in Sync wave 5 (step 3 of 3) instead of 0, so it is applied only after every Sync-phase object of a lower wave is Healthy. Helm ignores hook-weight on objects that are not hooks. Remove the weight, or set argocd.argoproj.io/sync-wave to the wave it should have.",
		"path": weight_path,
		"severity": "low",
	}}
}

test_a_negative_stray_weight_gates_wave_0 if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "chat-env", "namespace": "chat", "annotations": {"helm.sh/hook-weight": "-2"}}}
	some x in rule.violations with input as review(cm, normal_facts(-2), {})
	x.severity == "low"
	contains(x.msg, "it is applied in Sync wave -2 instead of 0, before the objects of wave 0, which then wait for it to be Healthy.")
}

test_a_negative_stray_weight_without_a_health_check_is_info if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "chat-env", "namespace": "chat", "annotations": {"helm.sh/hook-weight": "-2"}}}
	r := object.union(review(cm, normal_facts(-2), {}), {"health_check": null})
	some x in rule.violations with input as r
	x.severity == "info"
	contains(x.msg, "it is applied in Sync wave -2 instead of 0, before the objects of wave 0 (it has no health check, so they do not wait for it).")
	deploy := {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "chat", "namespace": "chat", "annotations": {"helm.sh/hook-weight": "-2"}}}
	some y in rule.violations with input as object.union(review(deploy, normal_facts(-2), {}), {"health_check": "builtin"})
	y.severity == "low"
	contains(y.msg, "which then wait for it to be Healthy.")
}

test_a_crd_install_crd_with_a_weight_is_info if {
	crd := {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "widgets.example.com", "annotations": {"helm.sh/hook": "crd-install", "helm.sh/hook-weight": "3"}}}
	f := facts({"phases": ["Sync"], "is_hook": false, "hook_types": [], "helm_hooks": ["crd-install"], "wave": 3})
	v := rule.violations with input as review(crd, f, {})
	count(v) == 1
	some x in v
	x.severity == "info"
	startswith(x.msg, "CustomResourceDefinition widgets.example.com is not a hook (helm.sh/hook: crd-install alone is not a hook for Argo CD), yet Argo CD takes its sync wave from helm.sh/hook-weight: \"3\"")
	contains(x.msg, "is Healthy, unless an object that needs it comes earlier and pulls it forward.")
}

test_skipped_objects_are_never_applied if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "chat-env", "namespace": "chat", "annotations": {"argocd.argoproj.io/hook": "Skip", "helm.sh/hook-weight": "4"}}}
	f := facts({"phases": [], "is_hook": false, "skip": true, "hook_types": ["Skip"], "helm_hooks": [], "wave": 4, "ignored": {"reason": "skip"}})
	count(rule.violations) == 0 with input as review(cm, f, {})
}

test_a_deletion_is_never_judged if {
	job := migrate_job(object.union(helm_annotations, {"argocd.argoproj.io/hook": "Sync"}))
	r := object.union(review(job, sync_facts, {}), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	job := migrate_job("weight")
	r := review(job, {"wave_source": "hook-weight", "is_hook": true, "phases": "Sync", "wave": "10", "helm_hooks": "pre-install"}, "plan")
	count(rule.violations) == 0 with input as r
	r2 := review(migrate_job(helm_annotations), object.union(sync_facts, {"wave": "10"}), {"tasks": "x", "steps": "y"})
	count(rule.violations) == 0 with input as r2
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG117"
	rule.meta.severity == "low"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG117.md"
}
