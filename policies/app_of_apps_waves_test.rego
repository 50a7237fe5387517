# Tests for SG208 (policies/app_of_apps_waves.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md and the issue-13 facts (input.health_check,
# input.argocd.config).
package syncguard.rules.app_of_apps_waves_test

import data.syncguard.rules.app_of_apps_waves as rule

# A child Application of the app of apps `platform`, in wave 1 (the database in wave 0, the
# services that need it in wave 2).
child(name, wave, sync_policy) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {
		"name": name,
		"namespace": "argocd",
		"annotations": {"argocd.argoproj.io/sync-wave": format_int(wave, 10)},
	},
	"spec": {
		"project": "default",
		"source": {"repoURL": "https://git.example.com/platform/deploy.git", "path": concat("/", ["apps", name]), "targetRevision": "main"},
		"destination": {"server": "https://kubernetes.default.svc", "namespace": name},
		"syncPolicy": sync_policy,
	},
}

automated := {"automated": {"prune": true, "selfHeal": true}}

payments := child("payments", 1, automated)

task(phase, wave, step, gated, final) := {"phase": phase, "wave": wave, "step": step, "gated": gated, "final": final}

config(source, health_checks) := {"source": source, "health_checks": health_checks, "ignore_differences": [], "exclusions": [], "inclusions": [], "projects": {}}

review(resource, tasks, health_check, cfg) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": {"phases": ["Sync"], "is_hook": false, "hook_types": [], "wave": 1, "wave_source": "sync-wave"},
	"plan": {"tasks": tasks, "steps": 3, "postsync_hooks": 0},
	"refs": [],
	"dependents": [],
	"app": {"name": "platform", "destination_namespace": "argocd", "sync_options": {"items": [], "unknown": []}, "automated": true, "self_heal": true, "auto_prune": true, "ignore_differences": []},
	"argocd": {"version": "3.4", "major": 3, "minor": 4, "release": 304, "config": cfg},
	"health_check": health_check,
	"context": {"source": "check", "dry_run": false},
}

early := [task("Sync", 1, 1, true, false)]

wave_path := "/metadata/annotations/argocd.argoproj.io~1sync-wave"

test_a_child_without_health_check_does_not_hold_the_next_wave if {
	v := rule.violations with input as review(payments, early, null, config("none", []))
	v == {{
		"msg": concat("", [
			"Application argocd/payments at Sync wave 1 is followed by later steps, but its wave only orders when the parent applies the Application object: ",
			"Argo CD starts the next step once every object of this one is Healthy, and an Application has no health check ",
			"(none is built in since v1.8, argo-cd#3781) unless argocd-cm sets resource.customizations.health.argoproj.io_Application: ",
			"without one it counts as done once applied, so the next wave starts as soon as this Application object is created or updated ",
			"(after the wave delay, 2 s by default), without waiting for the child to be Synced and Healthy. Fix: add the Application health check to argocd-cm ",
			"(resource.customizations.health.argoproj.io_Application, Argo CD docs operator-manual/health.md \"Argocd App\"), ",
			"or do not rely on waves between child Applications.",
		]),
		"path": wave_path,
		"severity": "medium",
	}}
}

test_a_known_argocd_cm_without_the_check_is_stated_as_a_fact if {
	v := rule.violations with input as review(payments, early, null, config("input", ["/Service"]))
	count(v) == 1
	some x in v
	contains(x.msg, "and this Argo CD's argocd-cm has no resource.customizations.health.argoproj.io_Application, and without it an Application has no health check")
	not contains(x.msg, "unless argocd-cm")
}

test_a_default_wave_is_low if {
	app := object.remove(payments, ["metadata"])
	unannotated := object.union(app, {"metadata": {"name": "payments", "namespace": "argocd"}})
	r := object.union(review(unannotated, [task("Sync", 0, 0, true, false)], null, config("none", [])), {"sync": {"wave": 0, "wave_source": "default"}})
	v := rule.violations with input as r
	{[x.path, x.severity] | some x in v} == {["/metadata", "low"]}
}

test_the_last_wave_waits_for_nothing if {
	count(rule.violations) == 0 with input as review(payments, [task("Sync", 2, 2, false, true)], null, config("none", []))
}

test_without_the_health_check_fact_nothing_is_reported if {
	r := object.remove(review(payments, early, null, config("none", [])), ["health_check"])
	count(rule.violations) == 0 with input as r
}

test_a_custom_health_check_with_an_automated_child if {
	v := rule.violations with input as review(payments, early, "custom", config("input", ["argoproj.io/Application"]))
	v == {{
		"msg": concat("", [
			"Application argocd/payments at Sync wave 1 has a health check, so the parent waits for it on the first sync, but not for later changes: ",
			"the child has its own automated sync, so a change it finds in its own source (a new commit on its targetRevision) is synced by the child at once, ",
			"outside the parent's waves (argo-cd#8778); and when the parent applies a change to this Application, its wave gate can read the child's health ",
			"from before the child saw the change and start the next wave at once (argo-cd#4577). Fix: route changes through the parent ",
			"(pin spec.source.targetRevision to a tag or commit the parent's manifests bump) and make the health check report Progressing ",
			"until status.sync.comparedTo matches spec.source (argo-cd PR #29649).",
		]),
		"path": "/spec/syncPolicy/automated",
		"severity": "low",
	}}
}

test_a_wildcard_in_argocd_cm_counts_as_a_health_check if {
	v := rule.violations with input as review(payments, early, null, config("cluster", ["argoproj.io/*"]))
	{[x.path, x.severity] | some x in v} == {["/spec/syncPolicy/automated", "low"]}
}

test_a_custom_health_check_with_a_manual_child if {
	manual := child("ledger", 1, {"syncOptions": ["CreateNamespace=true"]})
	v := rule.violations with input as review(manual, early, "custom", config("input", ["argoproj.io/Application"]))
	count(v) == 1
	some x in v
	x.path == "/spec"
	x.severity == "info"
	startswith(x.msg, "Application argocd/ledger at Sync wave 1 has a health check but no automated sync: the parent creates or updates the Application object but does not sync the child's resources")
}

test_a_self_managed_parent_is_not_a_child if {
	parent := child("platform", 1, automated)
	count(rule.violations) == 0 with input as review(parent, early, null, config("none", []))
}

test_other_kinds_are_not_judged if {
	set := {
		"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
		"metadata": {"name": "payments", "namespace": "argocd", "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
		"spec": {},
	}
	count(rule.violations) == 0 with input as review(set, early, null, config("none", []))
	lookalike := object.union(payments, {"apiVersion": "example.com/v1"})
	count(rule.violations) == 0 with input as review(lookalike, early, null, config("none", []))
}

test_the_first_waiting_step_is_named if {
	hook := object.union(payments, {"metadata": {"annotations": {"argocd.argoproj.io/hook": "PreSync,Sync"}}})
	v := rule.violations with input as review(hook, [task("Sync", 1, 3, true, false), task("PreSync", 1, 0, true, false)], null, config("none", []))
	count(v) == 1
	some x in v
	startswith(x.msg, "Application argocd/payments at PreSync wave 1 is followed by later steps")
}

test_a_deletion_is_never_judged if {
	r := review(payments, early, null, config("none", []))
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": payments, "plan": {"tasks": "x"}, "health_check": null}
	broken := object.union(payments, {"spec": {"syncPolicy": "auto"}})
	r := object.union(review(broken, [1, task("Sync", "1", "x", true, false)], "custom", "x"), {"app": "x", "sync": []})
	v := rule.violations with input as r
	{[x.path, x.severity] | some x in v} == {["/spec", "info"]}
	w := rule.violations with input as object.union(review(payments, early, null, {"source": 1, "health_checks": [1, "*"]}), {"argocd": {"config": {"health_checks": "x"}}})
	count(w) == 1
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG208"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG208.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
