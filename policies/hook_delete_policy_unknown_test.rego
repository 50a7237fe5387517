# Tests for SG106 (policies/hook_delete_policy_unknown.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.hook_delete_policy_unknown_test

import data.syncguard.rules.hook_delete_policy_unknown as rule

argo_path := "/metadata/annotations/argocd.argoproj.io~1hook-delete-policy"

helm_path := "/metadata/annotations/helm.sh~1hook-delete-policy"

migration_job(annotations) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"name": "svc-foo-migration",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo"},
		"annotations": object.union({"argocd.argoproj.io/hook": "PreSync"}, annotations),
	},
	"spec": {
		"activeDeadlineSeconds": 900,
		"backoffLimit": 2,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{"name": "migrate", "image": "registry.example.com/svc-foo/migrate:1.4.2"}],
		}},
	},
}

facts(overrides) := object.union(
	{
		"phases": ["PreSync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["PreSync"],
		"invalid_hook_values": [],
		"helm_hooks": [],
		"unsupported_helm_hooks": [],
		"wave": 0,
		"wave_valid": true,
		"wave_source": "default",
		"delete_policies": ["BeforeHookCreation"],
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

test_a_lowercase_policy_is_named_with_its_fallback if {
	r := review(
		migration_job({"argocd.argoproj.io/hook-delete-policy": "hooksucceeded"}),
		facts({"invalid_delete_policies": ["hooksucceeded"]}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration: hook-delete-policy value \"hooksucceeded\" in argocd.argoproj.io/hook-delete-policy is not one Argo CD knows, so it is silently dropped and the policy in effect is BeforeHookCreation. Use \"HookSucceeded\" (values are case-sensitive).",
		"path": argo_path,
	}}
}

test_a_misspelt_helm_policy_gets_the_helm_spelling if {
	r := review(
		migration_job({"helm.sh/hook-delete-policy": "before-hook-creation,hook-succeed"}),
		facts({"delete_policies": ["BeforeHookCreation"], "invalid_delete_policies": ["hook-succeed"]}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration: hook-delete-policy value \"hook-succeed\" in helm.sh/hook-delete-policy is not one Argo CD knows, so it is silently dropped and the policy in effect is BeforeHookCreation. Did you mean \"hook-succeeded\"?",
		"path": helm_path,
	}}
}

test_a_helm_spelling_in_the_argo_annotation_gets_the_argo_spelling if {
	r := review(
		migration_job({"argocd.argoproj.io/hook-delete-policy": "hook-failed"}),
		facts({"invalid_delete_policies": ["hook-failed"]}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == argo_path
	endswith(x.msg, "Did you mean \"HookFailed\"?")
}

test_the_value_is_blamed_only_in_the_annotation_where_it_is_invalid if {
	# "HookSucceeded" is valid for Argo CD but not in the Helm annotation.
	r := review(
		migration_job({
			"argocd.argoproj.io/hook-delete-policy": "HookSucceeded",
			"helm.sh/hook-delete-policy": "HookSucceeded",
		}),
		facts({"delete_policies": ["HookSucceeded"], "invalid_delete_policies": ["HookSucceeded"]}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == helm_path
	contains(x.msg, "the policy in effect is HookSucceeded. Did you mean \"hook-succeeded\"?")
}

test_several_policies_in_effect_are_listed if {
	r := review(
		migration_job({"argocd.argoproj.io/hook-delete-policy": "HookSucceeded, HookFailed, Always"}),
		facts({"delete_policies": ["HookSucceeded", "HookFailed"], "invalid_delete_policies": ["Always"]}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	endswith(x.msg, "the policies in effect are HookSucceeded, HookFailed. Use HookSucceeded, HookFailed or BeforeHookCreation (case-sensitive).")
}

test_unrecognisable_helm_values_get_the_helm_list if {
	r := review(
		migration_job({"helm.sh/hook-delete-policy": "keep"}),
		facts({"invalid_delete_policies": ["keep"]}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	endswith(x.msg, "Use hook-succeeded, hook-failed or before-hook-creation.")
}

test_each_unknown_value_is_its_own_violation if {
	r := review(
		migration_job({"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreaton,HookSucceded"}),
		facts({"invalid_delete_policies": ["BeforeHookCreaton", "HookSucceded"]}),
	)
	v := rule.violations with input as r
	count(v) == 2
	some a in v
	endswith(a.msg, "Did you mean \"BeforeHookCreation\"?")
	some b in v
	endswith(b.msg, "Did you mean \"HookSucceeded\"?")
}

test_valid_policies_are_fine if {
	r := review(
		migration_job({
			"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded",
			"helm.sh/hook-delete-policy": "hook-failed",
		}),
		facts({"delete_policies": ["BeforeHookCreation", "HookSucceeded", "HookFailed"]}),
	)
	count(rule.violations) == 0 with input as r
}

test_a_non_hook_is_left_to_sg110 if {
	job := json.remove(migration_job({"argocd.argoproj.io/hook-delete-policy": "hooksucceeded"}), [["metadata", "annotations", "argocd.argoproj.io/hook"]])
	r := review(job, facts({"phases": ["Sync"], "is_hook": false, "hook_types": [], "invalid_delete_policies": ["hooksucceeded"]}))
	count(rule.violations) == 0 with input as r
}

test_a_deletion_is_never_judged if {
	r := review(
		migration_job({"argocd.argoproj.io/hook-delete-policy": "hooksucceeded"}),
		facts({"invalid_delete_policies": ["hooksucceeded"]}),
	)
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	r := {
		"resource": {"metadata": {"annotations": {"argocd.argoproj.io/hook-delete-policy": ["x"]}}},
		"sync": {"is_hook": true, "invalid_delete_policies": "x", "delete_policies": 3},
	}
	count(rule.violations) == 0 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG106"
	rule.meta.severity == "high"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG106.md"
}

# Regression: a value with no likely meaning still gets a finding with the generic hint (the
# bytecode VM once returned undefined for the else-branch and dropped the whole violation).
test_value_without_a_likely_meaning_gets_the_generic_hint if {
	r := review(
		migration_job({"argocd.argoproj.io/hook-delete-policy": "OnSuccess"}),
		facts({"invalid_delete_policies": ["OnSuccess"]}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == argo_path
	endswith(x.msg, "Use HookSucceeded, HookFailed or BeforeHookCreation (case-sensitive).")
}
