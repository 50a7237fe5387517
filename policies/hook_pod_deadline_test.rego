# Tests for SG104 (policies/hook_pod_deadline.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, pin data.syncguard.config whenever a configured value matters, and assert exact
# counts, paths and messages so that each test fails when the rule regresses.
package syncguard.rules.hook_pod_deadline_test

import data.syncguard.rules.hook_pod_deadline as rule

# A PostSync smoke test run as a bare Pod.
smoke_pod := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {
		"name": "svc-foo-smoke-test",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo"},
		"annotations": {
			"argocd.argoproj.io/hook": "PostSync",
			"argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded",
		},
	},
	"spec": {
		"restartPolicy": "Never",
		"containers": [{
			"name": "smoke",
			"image": "curlimages/curl:8.10.1",
			"args": ["--fail", "--retry", "5", "http://svc-foo.app-foo.svc/healthz"],
		}],
	},
}

postsync_facts := {
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
	"delete_policies": ["BeforeHookCreation", "HookSucceeded"],
	"delete_policy_set": true,
	"invalid_delete_policies": [],
	"sync_options": {"items": [], "unknown": []},
	"compare_options": [],
	"tracking": {},
}

plain_facts := object.union(postsync_facts, {
	"phases": ["Sync"],
	"is_hook": false,
	"hook_types": [],
	"delete_policies": ["BeforeHookCreation"],
	"delete_policy_set": false,
})

review(resource, facts) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": facts,
	"context": {"source": "admission", "dry_run": false},
}

test_hook_pod_is_reported_with_the_exact_message if {
	v := rule.violations with input as review(smoke_pod, postsync_facts)
		with data.syncguard.config as {}
	v == {{
		"msg": "Pod app-foo/svc-foo-smoke-test is a PostSync hook without spec.activeDeadlineSeconds: if it hangs, never pulls its image or keeps restarting, Argo CD waits for it forever. Set spec.activeDeadlineSeconds (suggested: 900).",
		"path": "/spec/activeDeadlineSeconds",
	}}
}

test_hook_pod_gets_the_fallback_deadline_without_config if {
	p := rule.patches with input as review(smoke_pod, postsync_facts)
		with data.syncguard.config as {}
	p == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}}
}

test_patch_uses_the_pod_default_not_the_job_default if {
	cfg := {"defaults": {"hook_job_active_deadline_seconds": 1800, "hook_pod_active_deadline_seconds": 300}}
	p := rule.patches with input as review(smoke_pod, postsync_facts) with data.syncguard.config as cfg
	p == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 300}}
	v := rule.violations with input as review(smoke_pod, postsync_facts) with data.syncguard.config as cfg
	some x in v
	endswith(x.msg, "(suggested: 300).")
}

test_unusable_configured_values_fall_back_to_900 if {
	every bad in ["300", 0, 2.5, false] {
		p := rule.patches with input as review(smoke_pod, postsync_facts)
			with data.syncguard.config as {"defaults": {"hook_pod_active_deadline_seconds": bad}}
		p == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}}
	}
}

test_an_existing_deadline_is_never_changed if {
	pod := object.union(smoke_pod, {"spec": {"activeDeadlineSeconds": 60}})
	count(rule.violations) == 0 with input as review(pod, postsync_facts)
	count(rule.patches) == 0 with input as review(pod, postsync_facts)
}

test_a_normal_pod_is_not_reported if {
	pod := json.remove(smoke_pod, ["metadata/annotations"])
	count(rule.violations) == 0 with input as review(pod, plain_facts)
	count(rule.patches) == 0 with input as review(pod, plain_facts)
}

test_a_hook_job_is_left_to_sg101 if {
	job := {
		"apiVersion": "batch/v1",
		"kind": "Job",
		"metadata": {"name": "svc-foo-smoke-test", "namespace": "app-foo", "annotations": smoke_pod.metadata.annotations},
		"spec": {"template": {"spec": smoke_pod.spec}},
	}
	count(rule.violations) == 0 with input as review(job, postsync_facts)
}

test_a_custom_resource_called_pod_is_not_a_pod if {
	custom := object.union(smoke_pod, {"apiVersion": "chaos.example.com/v1"})
	count(rule.violations) == 0 with input as review(custom, postsync_facts)
	count(rule.patches) == 0 with input as review(custom, postsync_facts)
}

test_a_deletion_is_never_judged if {
	r := object.union(review(smoke_pod, postsync_facts), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
	count(rule.patches) == 0 with input as r
}

test_an_empty_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.patches) == 0 with input as {"resource": {"kind": "Pod", "apiVersion": "v1"}, "sync": {"is_hook": true}}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG104"
	rule.meta.severity == "medium"
	rule.meta.action == "mutate"
	rule.meta.docs == "docs/rules/SG104.md"
}
