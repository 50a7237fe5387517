# Tests for SG101 (policies/hook_job_deadline.rego).
#
# Convention for every *_test.rego in this directory: the tests of policies/<rule>.rego live in
# their own package, syncguard.rules.<rule>_test, import the rule package, and use only builtins
# that both OPA and regorus implement. Production loaders skip *_test.rego, so a rule package
# exports nothing but meta, violations, patches and its helpers. Every test pins
# data.syncguard.config when a configured value matters, and asserts exact counts, paths and
# messages, so that each one fails when the rule regresses.
package syncguard.rules.hook_job_deadline_test

import data.syncguard.rules.hook_job_deadline as rule

# The seed-000 migration Job, as it was committed: PreSync hook, restartPolicy OnFailure, no
# activeDeadlineSeconds, no backoffLimit.
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
	"app": {"name": "svc-foo"},
	"context": {"source": "admission", "dry_run": false},
}

with_spec(job, extra) := object.union(job, {"spec": extra})

test_seed_job_is_reported_with_the_exact_message if {
	v := rule.violations with input as review(seed_job, presync_facts)
		with data.syncguard.config as {}
	v == {{
		"msg": "Job app-foo/svc-foo-migration is a PreSync hook without spec.activeDeadlineSeconds: if its pod hangs or keeps retrying, Argo CD waits for it forever and the sync never finishes. Set spec.activeDeadlineSeconds (suggested: 900).",
		"path": "/spec/activeDeadlineSeconds",
	}}
}

test_seed_job_gets_the_fallback_deadline_without_config if {
	p := rule.patches with input as review(seed_job, presync_facts)
		with data.syncguard.config as {}
	p == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}}
}

test_patch_and_message_use_the_configured_deadline if {
	cfg := {"defaults": {"hook_job_active_deadline_seconds": 1200}}
	p := rule.patches with input as review(seed_job, presync_facts) with data.syncguard.config as cfg
	p == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 1200}}
	v := rule.violations with input as review(seed_job, presync_facts) with data.syncguard.config as cfg
	count(v) == 1
	some x in v
	endswith(x.msg, "(suggested: 1200).")
}

test_unusable_configured_values_fall_back_to_900 if {
	every bad in ["600", 0, -5, 12.5, null, {"seconds": 600}] {
		p := rule.patches with input as review(seed_job, presync_facts)
			with data.syncguard.config as {"defaults": {"hook_job_active_deadline_seconds": bad}}
		p == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}}
	}
}

test_malformed_defaults_section_falls_back_to_900 if {
	p := rule.patches with input as review(seed_job, presync_facts)
		with data.syncguard.config as {"defaults": null}
	p == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}}
}

test_an_existing_deadline_is_never_changed_even_when_below_the_default if {
	job := with_spec(seed_job, {"activeDeadlineSeconds": 120})
	count(rule.violations) == 0 with input as review(job, presync_facts)
	count(rule.patches) == 0 with input as review(job, presync_facts)
		with data.syncguard.config as {"defaults": {"hook_job_active_deadline_seconds": 900}}
}

test_an_explicit_null_deadline_counts_as_missing if {
	job := with_spec(seed_job, {"activeDeadlineSeconds": null})
	count(rule.violations) == 1 with input as review(job, presync_facts)
	rule.patches == {{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}} with input as review(job, presync_facts)
		with data.syncguard.config as {}
}

test_a_pod_template_deadline_does_not_bound_the_job if {
	job := with_spec(seed_job, {"template": {"spec": {"activeDeadlineSeconds": 300}}})
	count(rule.violations) == 1 with input as review(job, presync_facts)
}

test_a_normal_job_is_not_a_hook_and_is_not_reported if {
	job := json.remove(seed_job, [["metadata", "annotations", "argocd.argoproj.io/hook"]])
	count(rule.violations) == 0 with input as review(job, plain_facts)
	count(rule.patches) == 0 with input as review(job, plain_facts)
}

test_a_skipped_job_is_not_reported if {
	job := object.union(seed_job, {"metadata": {"annotations": {"argocd.argoproj.io/hook": "Skip"}}})
	facts := object.union(plain_facts, {"phases": [], "skip": true, "hook_types": ["Skip"], "ignored": {"reason": "skip"}})
	count(rule.violations) == 0 with input as review(job, facts)
}

test_a_hook_pod_is_left_to_sg104 if {
	pod := {
		"apiVersion": "v1",
		"kind": "Pod",
		"metadata": {"name": "smoke", "namespace": "app-foo", "annotations": {"argocd.argoproj.io/hook": "PostSync"}},
		"spec": {"restartPolicy": "Never", "containers": [{"name": "smoke", "image": "curlimages/curl:8.10.1"}]},
	}
	facts := object.union(presync_facts, {"phases": ["PostSync"], "hook_types": ["PostSync"]})
	count(rule.violations) == 0 with input as review(pod, facts)
}

test_a_post_delete_hook_job_is_reported_with_its_hook_type if {
	job := object.union(seed_job, {"metadata": {"annotations": {"argocd.argoproj.io/hook": "PostDelete"}}})
	facts := object.union(presync_facts, {"phases": [], "hook_types": ["PostDelete"], "ignored": {"reason": "delete-hook-only"}})
	v := rule.violations with input as review(job, facts)
	count(v) == 1
	some x in v
	startswith(x.msg, "Job app-foo/svc-foo-migration is a PostDelete hook without spec.activeDeadlineSeconds")
	contains(x.msg, "the Application's deletion never finishes")
	endswith(x.msg, "a hook that always fails still holds it, now with a DeletionError that says why.")
}

test_a_sync_hook_gets_no_delete_hook_note if {
	v := rule.violations with input as review(seed_job, presync_facts)
	some x in v
	not contains(x.msg, "DeletionError")
}

test_a_generate_name_hook_is_named_by_its_prefix if {
	job := object.union(json.remove(seed_job, ["metadata/name"]), {"metadata": {"generateName": "svc-foo-migration-"}})
	v := rule.violations with input as review(job, presync_facts)
	count(v) == 1
	some x in v
	startswith(x.msg, "Job app-foo/svc-foo-migration-* is a PreSync hook")
}

test_a_deletion_is_never_judged if {
	r := object.union(review(seed_job, presync_facts), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
	count(rule.patches) == 0 with input as r
}

test_no_patch_when_the_job_has_no_spec_object if {
	job := object.remove(seed_job, ["spec"])
	count(rule.violations) == 1 with input as review(job, presync_facts)
	count(rule.patches) == 0 with input as review(job, presync_facts)
}

test_an_empty_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.patches) == 0 with input as {"resource": "not an object", "sync": []}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG101"
	rule.meta.severity == "medium"
	rule.meta.action == "mutate"
	rule.meta.docs == "docs/rules/SG101.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
