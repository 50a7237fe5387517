# Tests for SG110 (policies/delete_policy_without_hook.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.delete_policy_without_hook_test

import data.syncguard.rules.delete_policy_without_hook as rule

argo_path := "/metadata/annotations/argocd.argoproj.io~1hook-delete-policy"

helm_path := "/metadata/annotations/helm.sh~1hook-delete-policy"

# argo-cd#3980: a migration Job in wave -1 with a delete policy but no hook annotation.
wave_job(annotations) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"name": "svc-foo-migration",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo"},
		"annotations": object.union({"argocd.argoproj.io/sync-wave": "-1"}, annotations),
	},
	"spec": {
		"activeDeadlineSeconds": 900,
		"backoffLimit": 2,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{"name": "migrate", "image": "registry.example.com/svc-foo/migrate:1.4.2", "args": ["migrate", "up"]}],
		}},
	},
}

facts(overrides) := object.union(
	{
		"phases": ["Sync"],
		"is_hook": false,
		"skip": false,
		"hook_types": [],
		"invalid_hook_values": [],
		"helm_hooks": [],
		"unsupported_helm_hooks": [],
		"wave": -1,
		"wave_raw": "-1",
		"wave_valid": true,
		"wave_source": "sync-wave",
		"delete_policies": ["HookSucceeded"],
		"delete_policy_set": true,
		"invalid_delete_policies": [],
		"sync_options": {"items": [], "unknown": []},
		"compare_options": [],
		"tracking": {},
	},
	overrides,
)

review(resource, sync) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"context": {"source": "admission", "dry_run": false},
}

test_a_policy_on_a_normal_job_is_reported if {
	r := review(wave_job({"argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}), facts({}))
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration has argocd.argoproj.io/hook-delete-policy but is not a hook (no argocd.argoproj.io/hook or usable helm.sh/hook), so Argo CD ignores the policy: the object is applied and kept like any other resource, never deleted or re-created by it. Add argocd.argoproj.io/hook (e.g. PreSync or Sync) if it should be a hook, or remove the policy.",
		"path": argo_path,
	}}
}

test_each_policy_annotation_is_reported_at_its_own_path if {
	r := review(
		wave_job({"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation", "helm.sh/hook-delete-policy": "hook-succeeded"}),
		facts({"delete_policies": ["BeforeHookCreation", "HookSucceeded"]}),
	)
	v := rule.violations with input as r
	count(v) == 2
	{x.path | some x in v} == {argo_path, helm_path}
}

# helm.sh/hook-delete-policy without any helm.sh/hook: Helm ignores it too (mastodon's
# `keep` on PVCs), so it is recorded at info; Argo CD's own policy stays a warning.
test_helms_policy_without_any_helm_hook_is_info if {
	r := review(
		wave_job({"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation", "helm.sh/hook-delete-policy": "keep"}),
		facts({"delete_policies": ["BeforeHookCreation"]}),
	)
	v := rule.violations with input as r
	{[x.path, object.get(x, "severity", "rule")] | some x in v} == {[argo_path, "rule"], [helm_path, "info"]}
}

test_keep_is_read_as_the_resource_policy_it_was_meant_to_be if {
	v := rule.violations with input as review(wave_job({"helm.sh/hook-delete-policy": "keep"}), facts({}))
	count(v) == 1
	some x in v
	x.severity == "info"
	endswith(x.msg, "\"keep\" is not a delete policy: helm.sh/resource-policy: keep is what keeps an object when its release is removed, and under Argo CD argocd.argoproj.io/sync-options: Delete=false keeps it when the Application is deleted; without either, Argo CD deletes it with the Application.")
}

test_a_helm_crd_install_is_not_a_hook_for_argo_cd if {
	crd := {
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind": "CustomResourceDefinition",
		"metadata": {"name": "widgets.example.com", "annotations": {"helm.sh/hook": "crd-install", "helm.sh/hook-delete-policy": "before-hook-creation"}},
		"spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced", "versions": []},
	}
	r := review(crd, facts({"helm_hooks": ["crd-install"], "delete_policies": ["BeforeHookCreation"], "wave": 0, "wave_source": "default"}))
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == helm_path
	startswith(x.msg, "CustomResourceDefinition widgets.example.com has helm.sh/hook-delete-policy but is not a hook")
}

test_a_hook_with_a_policy_is_fine if {
	r := review(
		wave_job({"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}),
		facts({"phases": ["PreSync"], "is_hook": true, "hook_types": ["PreSync"]}),
	)
	count(rule.violations) == 0 with input as r
}

test_a_skipped_chart_hook_is_not_reported if {
	r := review(
		wave_job({"argocd.argoproj.io/hook": "Skip", "helm.sh/hook": "pre-install", "helm.sh/hook-delete-policy": "hook-succeeded"}),
		facts({"phases": [], "skip": true, "hook_types": ["Skip"], "helm_hooks": ["pre-install"], "ignored": {"reason": "skip"}}),
	)
	count(rule.violations) == 0 with input as r
}

test_a_normal_job_without_policy_is_fine if {
	r := review(wave_job({}), facts({"delete_policies": ["BeforeHookCreation"], "delete_policy_set": false}))
	count(rule.violations) == 0 with input as r
}

test_a_deletion_is_never_judged if {
	r := review(wave_job({"argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}), facts({}))
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": {"metadata": {"annotations": []}}, "sync": {"delete_policy_set": true, "is_hook": false}}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG110"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG110.md"
}
