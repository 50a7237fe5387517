# Tests for SG103 (policies/hook_restart_on_failure.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses.
package syncguard.rules.hook_restart_on_failure_test

import data.syncguard.rules.hook_restart_on_failure as rule

# The seed-000 migration Job: PreSync hook, restartPolicy OnFailure, no deadline, no backoffLimit.
seed_job := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"name": "svc-foo-migration",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo", "app.kubernetes.io/component": "migration"},
		"annotations": {
			"argocd.argoproj.io/hook": "PreSync",
			"argocd.argoproj.io/sync-wave": "5",
		},
	},
	"spec": {"template": {
		"metadata": {"labels": {"app.kubernetes.io/name": "svc-foo"}},
		"spec": {
			"restartPolicy": "OnFailure",
			"containers": [{
				"name": "migrate",
				"image": "registry.example.com/svc-foo/migrate:1.4.2",
				"args": ["migrate", "up"],
				"envFrom": [{"secretRef": {"name": "svc-foo-db"}}],
			}],
		},
	}},
}

# A PreSync hook Pod that checks the database before the rollout.
db_check_pod := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {
		"name": "svc-foo-db-check",
		"namespace": "app-foo",
		"annotations": {"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation"},
	},
	"spec": {
		"restartPolicy": "OnFailure",
		"containers": [{
			"name": "check",
			"image": "registry.example.com/svc-foo/migrate:1.4.2",
			"args": ["check"],
			"envFrom": [{"secretRef": {"name": "svc-foo-db"}}],
		}],
	},
}

presync_facts := {
	"phases": ["PreSync"],
	"is_hook": true,
	"skip": false,
	"hook_types": ["PreSync"],
	"invalid_hook_values": [],
	"helm_hooks": [],
	"unsupported_helm_hooks": [],
	"wave": 5,
	"wave_raw": "5",
	"wave_valid": true,
	"wave_source": "sync-wave",
	"delete_policies": ["BeforeHookCreation"],
	"delete_policy_set": false,
	"invalid_delete_policies": [],
	"sync_options": {"items": [], "unknown": []},
	"compare_options": [],
	"tracking": {},
}

plain_facts := object.union(presync_facts, {
	"phases": ["Sync"],
	"is_hook": false,
	"hook_types": [],
	"wave": 0,
	"wave_source": "default",
})

review(resource, facts) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": facts,
	"context": {"source": "admission", "dry_run": false},
}

test_seed_job_is_reported_as_unbounded if {
	v := rule.violations with input as review(seed_job, presync_facts)
	v == {{
		"msg": "Job app-foo/svc-foo-migration is a PreSync hook whose pod template sets restartPolicy: OnFailure: a failing container restarts in place, Argo CD shows the hook Progressing, not Degraded, until Kubernetes gives up and deletes the pod with its logs. Nothing bounds the wait: spec.activeDeadlineSeconds is not set (see SG101). Use restartPolicy: Never.",
		"path": "/spec/template/spec/restartPolicy",
	}}
}

test_a_job_deadline_is_named_as_the_bound if {
	job := object.union(seed_job, {"spec": {"activeDeadlineSeconds": 900, "backoffLimit": 2}})
	v := rule.violations with input as review(job, presync_facts)
	count(v) == 1
	some x in v
	x.path == "/spec/template/spec/restartPolicy"
	contains(x.msg, " spec.activeDeadlineSeconds (900 s) bounds the wait. Use restartPolicy: Never.")
}

test_a_job_with_restart_policy_never_is_fine if {
	job := object.union(seed_job, {"spec": {"template": {"spec": {"restartPolicy": "Never"}}}})
	count(rule.violations) == 0 with input as review(job, presync_facts)
}

test_a_normal_job_with_on_failure_is_out_of_scope if {
	job := json.remove(seed_job, [["metadata", "annotations", "argocd.argoproj.io/hook"]])
	count(rule.violations) == 0 with input as review(job, plain_facts)
}

test_a_hook_pod_with_on_failure_is_reported_as_unbounded if {
	v := rule.violations with input as review(db_check_pod, presync_facts)
	v == {{
		"msg": "Pod app-foo/svc-foo-db-check is a PreSync hook with restartPolicy: OnFailure: if it crash-loops, Argo CD shows it Progressing forever (CrashLoopBackOff counts as Degraded only for restartPolicy Always) and the sync never finishes. Nothing bounds the wait: spec.activeDeadlineSeconds is not set (see SG104). Use restartPolicy: Never.",
		"path": "/spec/restartPolicy",
	}}
}

test_a_hook_pod_deadline_is_named_as_the_bound if {
	pod := object.union(db_check_pod, {"spec": {"activeDeadlineSeconds": 600}})
	v := rule.violations with input as review(pod, presync_facts)
	count(v) == 1
	some x in v
	contains(x.msg, " spec.activeDeadlineSeconds (600 s) bounds the wait. ")
}

test_hook_pods_with_never_always_or_no_policy_are_out_of_scope if {
	every policy in ["Never", "Always"] {
		pod := object.union(db_check_pod, {"spec": {"restartPolicy": policy}})
		count(rule.violations) == 0 with input as review(pod, presync_facts)
	}
	count(rule.violations) == 0 with input as review(json.remove(db_check_pod, ["spec/restartPolicy"]), presync_facts)
}

test_a_post_sync_and_sync_fail_hook_names_both_types if {
	facts := object.union(presync_facts, {"phases": ["PostSync", "SyncFail"], "hook_types": ["PostSync", "SyncFail"]})
	v := rule.violations with input as review(seed_job, facts)
	count(v) == 1
	some x in v
	startswith(x.msg, "Job app-foo/svc-foo-migration is a PostSync/SyncFail hook whose pod template")
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(review(seed_job, presync_facts), {"operation": "DELETE"})
}

test_malformed_objects_yield_nothing_and_do_not_fail if {
	count(rule.violations) == 0 with input as {}
	broken := object.union(seed_job, {"spec": {"template": "OnFailure"}})
	count(rule.violations) == 0 with input as review(broken, presync_facts)
	count(rule.violations) == 0 with input as review(object.union(db_check_pod, {"spec": []}), presync_facts)
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG103"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG103.md"
}
