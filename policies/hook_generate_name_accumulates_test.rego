# Tests for SG109 (policies/hook_generate_name_accumulates.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.hook_generate_name_accumulates_test

import data.syncguard.rules.hook_generate_name_accumulates as rule

# A PostSync smoke-test Job that uses generateName.
smoke_job(annotations) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"generateName": "svc-foo-smoke-",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo"},
		"annotations": object.union({"argocd.argoproj.io/hook": "PostSync"}, annotations),
	},
	"spec": {
		"activeDeadlineSeconds": 300,
		"backoffLimit": 0,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{"name": "smoke", "image": "curlimages/curl:8.10.1", "args": ["--fail", "http://svc-foo:8080/healthz"]}],
		}},
	},
}

facts(overrides) := object.union(
	{
		"phases": ["PostSync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["PostSync"],
		"invalid_hook_values": [],
		"helm_hooks": [],
		"unsupported_helm_hooks": [],
		"wave": 0,
		"wave_valid": true,
		"wave_source": "default",
		"delete_policies": ["BeforeHookCreation"],
		"delete_policy_set": false,
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

test_a_generate_name_hook_without_cleanup_is_reported if {
	v := rule.violations with input as review(smoke_job({}), facts({}))
	v == {{
		"msg": "Job app-foo/svc-foo-smoke-* is a PostSync hook with generateName and no HookSucceeded/HookFailed delete policy: every sync creates a new Job, BeforeHookCreation never matches the old names, and hooks are never pruned, so they pile up forever. Add argocd.argoproj.io/hook-delete-policy: HookSucceeded (failed runs stay for debugging), or use a fixed metadata.name so BeforeHookCreation replaces the old one.",
		"path": "/metadata/generateName",
	}}
}

test_an_explicit_before_hook_creation_does_not_help if {
	r := review(
		smoke_job({"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation"}),
		facts({"delete_policy_set": true}),
	)
	count(rule.violations) == 1 with input as r
}

test_hook_succeeded_or_hook_failed_cleans_up if {
	every policies in [["HookSucceeded"], ["HookFailed"], ["BeforeHookCreation", "HookSucceeded"]] {
		r := review(
			smoke_job({"argocd.argoproj.io/hook-delete-policy": concat(",", policies)}),
			facts({"delete_policies": policies, "delete_policy_set": true}),
		)
		count(rule.violations) == 0 with input as r
	}
}

test_a_helm_hook_succeeded_policy_counts_too if {
	job := json.remove(smoke_job({"helm.sh/hook": "post-install,post-upgrade", "helm.sh/hook-delete-policy": "hook-succeeded"}), [["metadata", "annotations", "argocd.argoproj.io/hook"]])
	r := review(job, facts({"helm_hooks": ["post-install", "post-upgrade"], "delete_policies": ["HookSucceeded"], "delete_policy_set": true}))
	count(rule.violations) == 0 with input as r
}

test_a_named_hook_is_replaced_by_before_hook_creation if {
	job := object.union(smoke_job({}), {"metadata": {"name": "svc-foo-smoke"}})
	count(rule.violations) == 0 with input as review(job, facts({}))
}

test_a_bare_pod_hook_is_named_as_a_pod if {
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"generateName": "svc-foo-check-", "namespace": "app-foo", "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
		"spec": {"restartPolicy": "Never", "activeDeadlineSeconds": 120, "containers": [{"name": "check", "image": "busybox:1.36"}]},
	}
	v := rule.violations with input as review(pod, facts({"phases": ["PreSync"], "hook_types": ["PreSync"]}))
	count(v) == 1
	some x in v
	startswith(x.msg, "Pod app-foo/svc-foo-check-* is a PreSync hook with generateName and no HookSucceeded/HookFailed delete policy: every sync creates a new Pod,")
}

test_delete_only_and_dropped_hooks_are_left_to_other_rules if {
	delete_only := facts({"phases": [], "hook_types": ["PostDelete"], "ignored": {"reason": "delete-hook-only"}})
	count(rule.violations) == 0 with input as review(smoke_job({"argocd.argoproj.io/hook": "PostDelete"}), delete_only)
	garbage := facts({"phases": [], "hook_types": [], "invalid_hook_values": ["postsync"], "ignored": {"reason": "garbage-hook"}})
	count(rule.violations) == 0 with input as review(smoke_job({"argocd.argoproj.io/hook": "postsync"}), garbage)
}

test_a_non_hook_is_not_reported if {
	job := json.remove(smoke_job({}), ["metadata/annotations"])
	count(rule.violations) == 0 with input as review(job, facts({"phases": ["Sync"], "is_hook": false, "hook_types": []}))
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(review(smoke_job({}), facts({})), {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	r := {"resource": {"metadata": {"generateName": 7}}, "sync": {"is_hook": true, "phases": "PreSync", "delete_policies": null}}
	count(rule.violations) == 0 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG109"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG109.md"
}
