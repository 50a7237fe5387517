# Tests for SG112 (policies/job_lifecycle.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.job_lifecycle_test

import data.syncguard.rules.job_lifecycle as rule

# A data-seeding Job committed as a plain resource.
seed_data_job(metadata, spec) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": object.union(
		{
			"name": "svc-foo-seed-data",
			"namespace": "app-foo",
			"labels": {"app.kubernetes.io/name": "svc-foo"},
		},
		metadata,
	),
	"spec": object.union(
		{
			"activeDeadlineSeconds": 900,
			"backoffLimit": 2,
			"template": {"spec": {
				"restartPolicy": "Never",
				"containers": [{"name": "seed", "image": "registry.example.com/svc-foo/migrate:1.4.2", "args": ["seed"]}],
			}},
		},
		spec,
	),
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

hook_facts := facts({"phases": ["Sync"], "is_hook": true, "hook_types": ["Sync"]})

review(resource, sync, source) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"context": {"source": source, "dry_run": false},
}

fixed_name_msg := "Job app-foo/svc-foo-seed-data is a normal resource, not a hook, with a fixed name: a Job's spec.template is immutable, so the first sync after the template changes (e.g. a new image tag) fails with \"field is immutable\". Make it a hook (argocd.argoproj.io/hook: Sync, re-created each sync) or add argocd.argoproj.io/sync-options: Force=true,Replace=true."

test_a_fixed_name_normal_job_is_info if {
	v := rule.violations with input as review(seed_data_job({}, {}), facts({}), "check")
	v == {{"msg": fixed_name_msg, "path": "/spec/template", "severity": "info"}}
}

test_a_ttl_on_a_normal_job_is_a_separate_violation if {
	r := review(seed_data_job({}, {"ttlSecondsAfterFinished": 300}), facts({}), "check")
	v := rule.violations with input as r
	v == {
		{"msg": fixed_name_msg, "path": "/spec/template", "severity": "info"},
		{
			"msg": "Job app-foo/svc-foo-seed-data is a normal resource, not a hook, with spec.ttlSecondsAfterFinished: 300: Kubernetes deletes it 300 s after it finishes, Argo CD then sees it Missing (OutOfSync) and the next sync runs it again, in a loop. Remove ttlSecondsAfterFinished, or make it a hook (argocd.argoproj.io/hook: Sync) so Argo CD owns its cleanup.",
			"path": "/spec/ttlSecondsAfterFinished",
			"severity": "medium",
		},
	}
}

test_force_replace_answers_the_immutable_template_but_not_the_ttl if {
	job := seed_data_job({"annotations": {"argocd.argoproj.io/sync-options": "Force=true,Replace=true"}}, {"ttlSecondsAfterFinished": 0})
	r := review(job, facts({"sync_options": {"items": ["Force=true", "Replace=true"], "unknown": []}}), "check")
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == "/spec/ttlSecondsAfterFinished"
	contains(x.msg, "with spec.ttlSecondsAfterFinished: 0: Kubernetes deletes it 0 s after it finishes")
}

test_replace_alone_does_not_help if {
	job := seed_data_job({"annotations": {"argocd.argoproj.io/sync-options": "Replace=true"}}, {})
	r := review(job, facts({"sync_options": {"items": ["Replace=true"], "unknown": []}}), "check")
	count(rule.violations) == 1 with input as r
}

test_hook_jobs_own_their_name_and_ttl if {
	job := seed_data_job({"annotations": {"argocd.argoproj.io/hook": "Sync"}}, {"ttlSecondsAfterFinished": 600})
	count(rule.violations) == 0 with input as review(job, hook_facts, "check")
}

test_both_names_on_a_normal_job if {
	job := seed_data_job({"generateName": "svc-foo-seed-data-"}, {})
	v := rule.violations with input as review(job, facts({}), "check")
	count(v) == 2
	some x in v
	x.path == "/metadata/generateName"
	x.severity == "low"
	x.msg == "Job app-foo/svc-foo-seed-data sets both metadata.name and metadata.generateName: Kubernetes and Argo CD use the name and ignore generateName, so every sync targets the same Job instead of a new one. Remove generateName: a resource that is not a hook needs a fixed name."
}

test_both_names_on_a_hook_job if {
	job := seed_data_job({"generateName": "svc-foo-seed-data-", "annotations": {"argocd.argoproj.io/hook": "Sync"}}, {})
	v := rule.violations with input as review(job, hook_facts, "check")
	count(v) == 1
	some x in v
	endswith(x.msg, "Remove one: keep name (BeforeHookCreation replaces the Job each sync) or keep generateName (add HookSucceeded so old runs are cleaned up).")
}

test_jobs_created_by_a_cronjob_are_not_argo_cds if {
	job := seed_data_job(
		{
			"name": "nightly-report-29012345",
			"ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "nightly-report", "uid": "6f1c2d3e-0000-4000-8000-000000000001", "controller": true}],
		},
		{"ttlSecondsAfterFinished": 3600},
	)
	count(rule.violations) == 0 with input as review(job, facts({}), "audit")
	count(rule.violations) == 0 with input as review(job, facts({}), "check")
}

test_live_jobs_need_evidence_of_argo_cd if {
	job := seed_data_job({}, {"ttlSecondsAfterFinished": 60})
	count(rule.violations) == 0 with input as review(job, facts({}), "audit")
	count(rule.violations) == 0 with input as review(job, facts({}), "admission")
	tracked := facts({"tracking": {"id": {"app_instance": "svc-foo", "group": "batch", "kind": "Job", "namespace": "app-foo", "name": "svc-foo-seed-data"}}})
	count(rule.violations) == 2 with input as review(job, tracked, "audit")
	labelled := facts({"tracking": {"instance_label": "svc-foo"}})
	count(rule.violations) == 2 with input as review(job, labelled, "admission")
	with_app := object.union(review(job, facts({}), "admission"), {"app": {"name": "svc-foo"}})
	count(rule.violations) == 2 with input as with_app
}

test_a_skipped_job_is_never_applied if {
	job := seed_data_job({"annotations": {"argocd.argoproj.io/hook": "Skip"}}, {"ttlSecondsAfterFinished": 60})
	r := review(job, facts({"phases": [], "skip": true, "hook_types": ["Skip"], "ignored": {"reason": "skip"}}), "check")
	count(rule.violations) == 0 with input as r
}

test_other_kinds_are_not_jobs if {
	cron := {
		"apiVersion": "batch/v1",
		"kind": "CronJob",
		"metadata": {"name": "nightly-report", "namespace": "app-foo"},
		"spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"ttlSecondsAfterFinished": 3600, "template": {"spec": {"restartPolicy": "Never", "containers": []}}}}},
	}
	count(rule.violations) == 0 with input as review(cron, facts({}), "check")
}

# model::argo always writes is_hook, but the rule reads an absent one as false (not a hook).
test_sync_facts_without_is_hook_mean_a_normal_resource if {
	r := review(seed_data_job({}, {"ttlSecondsAfterFinished": 300}), {"phases": ["Sync"]}, "check")
	v := rule.violations with input as r
	{x.path | some x in v} == {"/spec/template", "/spec/ttlSecondsAfterFinished"}
}

test_a_deletion_is_never_judged if {
	r := review(seed_data_job({}, {"ttlSecondsAfterFinished": 60}), facts({}), "check")
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	r := {
		"resource": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "x", "ownerReferences": "none"}, "spec": {"ttlSecondsAfterFinished": "60"}},
		"sync": {"phases": ["Sync"], "is_hook": false, "sync_options": "Force=true", "tracking": []},
		"context": "check",
	}
	count(rule.violations) == 0 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG112"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG112.md"
}
