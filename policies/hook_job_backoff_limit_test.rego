# Tests for SG102 (policies/hook_job_backoff_limit.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, pin data.syncguard.config whenever a configured value matters, and assert exact
# counts, paths and messages so that each test fails when the rule regresses.
package syncguard.rules.hook_job_backoff_limit_test

import data.syncguard.rules.hook_job_backoff_limit as rule

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
	"context": {"source": "check", "dry_run": false},
}

test_seed_job_is_reported_with_the_exact_message if {
	v := rule.violations with input as review(seed_job, presync_facts)
		with data.syncguard.config as {}
	v == {{
		"msg": "Job app-foo/svc-foo-migration is a PreSync hook without spec.backoffLimit: Kubernetes retries a failing pod up to 6 times, with back-off growing to 6 minutes, while Argo CD waits for the hook. Set spec.backoffLimit explicitly (suggested: 2).",
		"path": "/spec/backoffLimit",
	}}
}

test_seed_job_gets_the_fallback_limit_without_config if {
	p := rule.patches with input as review(seed_job, presync_facts)
		with data.syncguard.config as {}
	p == {{"op": "add", "path": "/spec/backoffLimit", "value": 2}}
}

test_patch_uses_the_configured_limit_and_zero_is_allowed if {
	p := rule.patches with input as review(seed_job, presync_facts)
		with data.syncguard.config as {"defaults": {"hook_job_backoff_limit": 0}}
	p == {{"op": "add", "path": "/spec/backoffLimit", "value": 0}}
	q := rule.patches with input as review(seed_job, presync_facts)
		with data.syncguard.config as {"defaults": {"hook_job_backoff_limit": 4}}
	q == {{"op": "add", "path": "/spec/backoffLimit", "value": 4}}
}

test_unusable_configured_values_fall_back_to_2 if {
	every bad in ["3", -1, 1.5, null, true] {
		p := rule.patches with input as review(seed_job, presync_facts)
			with data.syncguard.config as {"defaults": {"hook_job_backoff_limit": bad}}
		p == {{"op": "add", "path": "/spec/backoffLimit", "value": 2}}
	}
}

test_an_explicit_limit_is_respected_even_the_kubernetes_default if {
	every limit in [0, 6, 10] {
		job := object.union(seed_job, {"spec": {"backoffLimit": limit}})
		count(rule.violations) == 0 with input as review(job, presync_facts)
		count(rule.patches) == 0 with input as review(job, presync_facts)
	}
}

test_per_index_backoff_is_an_explicit_retry_policy if {
	job := object.union(seed_job, {"spec": {"completionMode": "Indexed", "completions": 3, "backoffLimitPerIndex": 1}})
	count(rule.violations) == 0 with input as review(job, presync_facts)
	count(rule.patches) == 0 with input as review(job, presync_facts)
}

test_a_helm_pre_upgrade_job_is_reported if {
	job := object.union(json.remove(seed_job, ["metadata/annotations"]), {"metadata": {"annotations": {"helm.sh/hook": "pre-upgrade"}}})
	facts := object.union(presync_facts, {"helm_hooks": ["pre-upgrade"], "wave": 0, "wave_source": "default"})
	v := rule.violations with input as review(job, facts)
	count(v) == 1
	some x in v
	x.path == "/spec/backoffLimit"
	startswith(x.msg, "Job app-foo/svc-foo-migration is a PreSync hook without spec.backoffLimit")
}

test_a_normal_job_is_not_reported if {
	job := json.remove(seed_job, [["metadata", "annotations", "argocd.argoproj.io/hook"]])
	count(rule.violations) == 0 with input as review(job, plain_facts)
	count(rule.patches) == 0 with input as review(job, plain_facts)
}

test_a_cronjob_hook_is_not_a_job if {
	cron := {
		"apiVersion": "batch/v1",
		"kind": "CronJob",
		"metadata": {"name": "nightly", "namespace": "app-foo", "annotations": {"argocd.argoproj.io/hook": "PostSync"}},
		"spec": {"schedule": "0 3 * * *", "jobTemplate": seed_job.spec},
	}
	count(rule.violations) == 0 with input as review(cron, presync_facts)
}

test_a_deletion_is_never_judged if {
	r := object.union(review(seed_job, presync_facts), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
	count(rule.patches) == 0 with input as r
}

test_an_empty_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.patches) == 0 with input as {"resource": [], "sync": "x"}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG102"
	rule.meta.severity == "low"
	rule.meta.action == "mutate"
	rule.meta.docs == "docs/rules/SG102.md"
}

# At admission the API server has defaulted backoffLimit to 6 before syncguard sees the Job.
admitted_seed_job := object.union(seed_job, {"spec": object.union(seed_job.spec, {"backoffLimit": 6})})

admission(resource, declared) := {
	"operation": "CREATE",
	"resource": resource,
	"declared": declared,
	"sync": presync_facts,
	"context": {"source": "admission", "dry_run": false},
}

test_a_defaulted_backoff_limit_is_replaced_when_the_client_did_not_declare_one if {
	r := admission(admitted_seed_job, seed_job)
	rule.patches == {
		{"op": "test", "path": "/spec/backoffLimit", "value": 6},
		{"op": "replace", "path": "/spec/backoffLimit", "value": 2},
	} with input as r
		with data.syncguard.config as {}
	count(rule.violations) == 1 with input as r with data.syncguard.config as {}
}

test_a_declared_backoff_limit_of_6_is_the_users_choice if {
	r := admission(admitted_seed_job, admitted_seed_job)
	count(rule.patches) == 0 with input as r with data.syncguard.config as {}
	count(rule.violations) == 0 with input as r with data.syncguard.config as {}
}

test_without_a_declared_copy_a_6_is_left_alone if {
	r := object.remove(admission(admitted_seed_job, seed_job), ["declared"])
	count(rule.patches) == 0 with input as r with data.syncguard.config as {}
	count(rule.violations) == 0 with input as r with data.syncguard.config as {}
}

test_only_kubernetes_default_counts_as_defaulted if {
	three := object.union(seed_job, {"spec": object.union(seed_job.spec, {"backoffLimit": 3})})
	r := admission(three, seed_job)
	count(rule.patches) == 0 with input as r with data.syncguard.config as {}
}
