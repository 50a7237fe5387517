# Tests for SG120 (policies/hook_only_change.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.hook_only_change_test

import data.syncguard.rules.hook_only_change as rule

hook_path := "/metadata/annotations/argocd.argoproj.io~1hook"

# A Sync Job that uploads static files; its image is the only thing that changes (argo-cd#9830).
upload_job(annotations) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {"name": "static-upload", "namespace": "shop", "annotations": annotations},
	"spec": {
		"backoffLimit": 2,
		"activeDeadlineSeconds": 600,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{"name": "upload", "image": "registry.example.com/shop/static:2.3.1"}],
		}},
	},
}

facts(overrides) := object.union(
	{
		"phases": ["Sync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["Sync"],
		"invalid_hook_values": [],
		"helm_hooks": [],
		"unsupported_helm_hooks": [],
		"wave": -1,
		"wave_valid": true,
		"wave_source": "sync-wave",
		"delete_policies": ["BeforeHookCreation"],
		"delete_policy_set": true,
		"invalid_delete_policies": [],
		"sync_options": {"items": [], "unknown": []},
		"compare_options": [],
		"tracking": {},
	},
	overrides,
)

app(automated) := {
	"name": "shop",
	"project": "default",
	"destination_namespace": "shop",
	"sync_options": {"items": [], "unknown": []},
	"automated": automated,
	"self_heal": automated,
	"auto_prune": automated,
	"ignore_differences": [],
	"managed_namespace_metadata": false,
}

review(resource, sync, application, source) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": sync,
	"app": application,
	"context": {"source": source, "dry_run": false},
	"plan": {"tasks": [], "steps": 2, "postsync_hooks": 0, "tracked": 3, "image_tag_shared": false},
}

with_plan(doc, plan) := object.union(doc, {"plan": plan})

sync_hook := {"argocd.argoproj.io/hook": "Sync", "argocd.argoproj.io/sync-wave": "-1"}

test_a_sync_job_of_an_automated_app_is_info if {
	v := rule.violations with input as review(upload_job(sync_hook), facts({}), app(true), "check")
	v == {{
		"msg": "Job shop/static-upload is a Sync hook of Application shop, which syncs automatically, and its image tag (2.3.1) is used by no object Argo CD compares in this Application: a commit that changes only hooks (a new tag for this Job) leaves the Application Synced, automated sync does not start and the hook does not run until another change triggers a sync. When such a commit must run it, sync by hand (argocd app sync shop), or change a tracked object in the same commit, e.g. a checksum or version annotation on the Deployment it belongs to.",
		"path": hook_path,
	}}
}

test_helm_hooks_point_at_the_helm_annotation if {
	job := upload_job({"helm.sh/hook": "post-install,post-upgrade"})
	v := rule.violations with input as review(job, facts({"phases": ["PostSync"], "hook_types": ["PostSync"]}), app(true), "check")
	count(v) == 1
	some x in v
	x.path == "/metadata/annotations/helm.sh~1hook"
	startswith(x.msg, "Job shop/static-upload is a PostSync hook of Application shop")
}

test_pods_and_workflows_are_workers_too if {
	pod := {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "smoke", "namespace": "shop", "annotations": {"argocd.argoproj.io/hook": "PostSync"}}, "spec": {"containers": [{"name": "smoke", "image": "curl:8.8.0"}]}}
	count(rule.violations) == 1 with input as review(pod, facts({"phases": ["PostSync"], "hook_types": ["PostSync"]}), app(true), "check")

	# A Workflow's images are not read: reported only when every object is a hook.
	wf := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "e2e", "namespace": "shop", "annotations": {"argocd.argoproj.io/hook": "PreSync"}}, "spec": {}}
	wf_review := review(wf, facts({"phases": ["PreSync"], "hook_types": ["PreSync"]}), app(true), "check")
	count(rule.violations) == 0 with input as wf_review
	count(rule.violations) == 1 with input as with_plan(wf_review, {"tracked": 0})
}

test_manual_sync_and_unknown_apps_are_not_reported if {
	count(rule.violations) == 0 with input as review(upload_job(sync_hook), facts({}), app(false), "check")
	r := json.remove(review(upload_job(sync_hook), facts({}), {}, "check"), ["app"])
	count(rule.violations) == 0 with input as r
}

test_only_in_check if {
	count(rule.violations) == 0 with input as review(upload_job(sync_hook), facts({}), app(true), "admission")
	count(rule.violations) == 0 with input as review(upload_job(sync_hook), facts({}), app(true), "audit")
}

test_passive_hooks_sync_fail_and_delete_hooks_are_not_reported if {
	sa := {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "uploader", "namespace": "shop", "annotations": sync_hook}}
	count(rule.violations) == 0 with input as review(sa, facts({}), app(true), "check")
	fail := facts({"phases": ["SyncFail"], "hook_types": ["SyncFail"]})
	count(rule.violations) == 0 with input as review(upload_job({"argocd.argoproj.io/hook": "SyncFail"}), fail, app(true), "check")
	post_delete := facts({"phases": [], "hook_types": ["PostDelete"], "ignored": {"reason": "delete-hook-only"}})
	count(rule.violations) == 0 with input as review(upload_job({"argocd.argoproj.io/hook": "PostDelete"}), post_delete, app(true), "check")
}

test_normal_resources_are_compared if {
	normal := facts({"is_hook": false, "hook_types": []})
	count(rule.violations) == 0 with input as review(upload_job({}), normal, app(true), "check")
}

test_a_deletion_is_never_judged if {
	r := review(upload_job(sync_hook), facts({}), app(true), "check")
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	r := {
		"resource": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"annotations": "Sync"}},
		"sync": {"is_hook": true, "phases": "Sync"},
		"app": {"automated": true, "name": 3},
		"context": {"source": "check"},
	}
	count(rule.violations) == 0 with input as r
	r2 := object.union(r, {"sync": {"is_hook": true, "phases": ["Sync"]}, "plan": {"tracked": 0}})
	v := rule.violations with input as r2
	some x in v
	startswith(x.msg, "Job (unnamed) is a Sync hook of Application (unnamed)")
	x.path == "/metadata/annotations/helm.sh~1hook"
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG120"
	rule.meta.severity == "info"
	rule.meta.action == "audit"
	rule.meta.docs == "docs/rules/SG120.md"
}

test_a_hook_sharing_its_tag_with_a_tracked_workload_is_not_reported if {
	doc := with_plan(
		review(upload_job(sync_hook), facts({}), app(true), "check"),
		{"tracked": 3, "image_tag_shared": true},
	)
	count(rule.violations) == 0 with input as doc
}

test_an_app_made_only_of_hooks_is_a_medium_warning if {
	doc := with_plan(
		review(upload_job(sync_hook), facts({}), app(true), "check"),
		{"tracked": 0, "image_tag_shared": false},
	)
	v := rule.violations with input as doc
	v == {{
		"msg": "Job shop/static-upload is a Sync hook of Application shop, which syncs automatically, and every object of shop is a hook: Argo CD does not compare hooks, so the Application is always Synced, automated sync never starts and a new commit never runs this Job. Add a tracked object whose content changes with the hooks (e.g. a ConfigMap holding the version the hooks run), or sync by hand (argocd app sync shop).",
		"path": hook_path,
		"severity": "medium",
		"action": "warn",
	}}
}

test_untagged_images_and_a_missing_plan_say_nothing if {
	job := json.patch(upload_job(sync_hook), [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "registry.example.com:5000/shop/static"}])
	count(rule.violations) == 0 with input as review(job, facts({}), app(true), "check")
	no_plan := json.remove(review(upload_job(sync_hook), facts({}), app(true), "check"), ["plan"])
	count(rule.violations) == 0 with input as no_plan
}
