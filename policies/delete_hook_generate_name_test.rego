# Tests for SG111 (policies/delete_hook_generate_name.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.delete_hook_generate_name_test

import data.syncguard.rules.delete_hook_generate_name as rule

# A PostDelete Job that drops the application's database schema.
cleanup_job(metadata) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": object.union(
		{
			"namespace": "app-foo",
			"labels": {"app.kubernetes.io/name": "svc-foo"},
			"annotations": {"argocd.argoproj.io/hook": "PostDelete", "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"},
		},
		metadata,
	),
	"spec": {
		"activeDeadlineSeconds": 600,
		"backoffLimit": 1,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{"name": "drop", "image": "registry.example.com/svc-foo/migrate:1.4.2", "args": ["drop-schema"]}],
		}},
	},
}

facts(overrides) := object.union(
	{
		"phases": [],
		"is_hook": true,
		"skip": false,
		"ignored": {"reason": "delete-hook-only"},
		"hook_types": ["PostDelete"],
		"invalid_hook_values": [],
		"helm_hooks": [],
		"unsupported_helm_hooks": [],
		"wave": 0,
		"wave_valid": true,
		"wave_source": "default",
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
	"context": {"source": "check", "dry_run": false},
}

test_a_post_delete_hook_with_generate_name_is_denied if {
	v := rule.violations with input as review(cleanup_job({"generateName": "svc-foo-drop-schema-"}), facts({}))
	v == {{
		"msg": "Job app-foo/svc-foo-drop-schema-* is a PostDelete hook with generateName: Argo CD finds delete hooks by name, never finds this one, and creates another Job on every reconcile while the Application is being deleted. Set a fixed metadata.name instead of generateName.",
		"path": "/metadata/generateName",
	}}
}

test_a_helm_pre_delete_hook_with_generate_name_is_denied if {
	job := json.remove(
		cleanup_job({"generateName": "svc-foo-drop-schema-", "annotations": {"helm.sh/hook": "pre-delete"}}),
		[["metadata", "annotations", "argocd.argoproj.io/hook"]],
	)
	v := rule.violations with input as review(job, facts({"hook_types": ["PreDelete"], "helm_hooks": ["pre-delete"]}))
	count(v) == 1
	some x in v
	startswith(x.msg, "Job app-foo/svc-foo-drop-schema-* is a PreDelete hook with generateName:")
}

test_a_sync_and_delete_hook_is_denied_for_its_delete_part if {
	r := review(
		cleanup_job({"generateName": "svc-foo-report-", "annotations": {"argocd.argoproj.io/hook": "PostSync,PostDelete"}}),
		json.remove(facts({"phases": ["PostSync"], "hook_types": ["PostSync", "PostDelete"]}), ["ignored"]),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	contains(x.msg, " is a PostDelete hook with generateName")
}

test_a_named_delete_hook_is_fine if {
	count(rule.violations) == 0 with input as review(cleanup_job({"name": "svc-foo-drop-schema"}), facts({}))
}

test_a_name_next_to_generate_name_wins if {
	job := cleanup_job({"name": "svc-foo-drop-schema", "generateName": "svc-foo-drop-schema-"})
	count(rule.violations) == 0 with input as review(job, facts({}))
}

test_a_sync_hook_with_generate_name_is_left_to_sg109 if {
	r := review(
		cleanup_job({"generateName": "svc-foo-smoke-", "annotations": {"argocd.argoproj.io/hook": "PostSync"}}),
		json.remove(facts({"phases": ["PostSync"], "hook_types": ["PostSync"]}), ["ignored"]),
	)
	count(rule.violations) == 0 with input as r
}

test_a_deletion_is_never_judged if {
	r := review(cleanup_job({"generateName": "svc-foo-drop-schema-"}), facts({}))
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": {"metadata": {"generateName": ["x"]}}, "sync": {"hook_types": "PostDelete"}}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG111"
	rule.meta.severity == "high"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG111.md"
}

# Before Argo CD 3.3 PreDelete is not a hook type (SG105 says so); PostDelete is (since 2.10).
test_a_pre_delete_hook_is_left_to_sg105_before_argo_cd_3_3 if {
	job := cleanup_job({"generateName": "svc-foo-drop-schema-", "annotations": {"argocd.argoproj.io/hook": "PreDelete"}})
	sync := facts({"hook_types": ["PreDelete"]})
	old := object.union(review(job, sync), {"argocd": {"release": 302, "version": "3.2"}})
	count(rule.violations) == 0 with input as old
	new := object.union(review(job, sync), {"argocd": {"release": 303, "version": "3.3"}})
	count(rule.violations) == 1 with input as new
	post := object.union(review(cleanup_job({"generateName": "svc-foo-drop-schema-"}), facts({})), {"argocd": {"release": 302, "version": "3.2"}})
	count(rule.violations) == 1 with input as post
}
