# Tests for SG115 (policies/hook_name_collision.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. input.collisions is mocked as the lead's contract describes it (issue 13).
package syncguard.rules.hook_name_collision_test

import data.syncguard.rules.hook_name_collision as rule

# argo-cd#9184: two PostSync Jobs of one chart with the same generateName.
linter_job(metadata) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": object.union(
		{
			"generateName": "linter-",
			"namespace": "app-foo",
			"annotations": {
				"argocd.argoproj.io/hook": "PostSync",
				"argocd.argoproj.io/hook-delete-policy": "HookSucceeded",
			},
		},
		metadata,
	),
	"spec": {
		"backoffLimit": 0,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{"name": "curl", "image": "curlimages/curl:8.8.0", "command": ["curl", "https://example.com"]}],
		}},
	},
}

facts(overrides) := object.union(
	{
		"phases": ["PostSync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["PostSync"],
		"helm_hooks": [],
		"wave": 0,
		"wave_source": "default",
		"delete_policies": ["HookSucceeded"],
		"delete_policy_set": true,
		"sync_options": {"items": [], "unknown": []},
	},
	overrides,
)

collision(overrides) := object.union(
	{
		"kind": "Job",
		"group": "batch",
		"namespace": "app-foo",
		"name": "",
		"generate_name": "linter-",
		"is_hook": true,
		"phases": ["PostSync"],
		"hook_types": ["PostSync"],
		"wave": 0,
		"location": "templates/linter.yaml:21",
	},
	overrides,
)

review(resource, sync, collisions) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": sync,
	"collisions": collisions,
	"context": {"source": "check", "dry_run": false},
}

generate_msg := concat("", [
	"Job app-foo/linter-*, a PostSync hook, has the same generateName as Job app-foo/linter-* (a PostSync hook, at templates/linter.yaml:21): ",
	"Argo CD names a generateName hook <generateName><first 7 characters of the revision>-<phase>-<sync start in Unix seconds>, ",
	"so in PostSync they all become Job app-foo/linter-<rev7>-postsync-<start>, one object with one sync result. ",
	"In the same wave both are applied at once under that one name and all but one fail (\"already exists\" when the creates race, \"field is immutable\" when a Job or Pod lands on the first one; any other kind is overwritten), and because both share one sync result a failure can be overwritten by the other's success, so the sync may even succeed with one of them never run; ",
	"in a later wave the second hook finds the first one's result and counts as done, so it never runs (argo-cd#9184). ",
	"Give each hook its own generateName (e.g. \"linter-a-\" and \"linter-b-\"), or a fixed metadata.name.",
])

test_two_generate_name_hooks_in_one_phase_collide if {
	v := rule.violations with input as review(linter_job({}), facts({}), [collision({})])
	v == {{"msg": generate_msg, "path": "/metadata/generateName", "severity": "high"}}
}

test_a_shared_phase_is_enough if {
	# PreSync,PostSync against PostSync: they meet in PostSync.
	r := review(linter_job({}), facts({"phases": ["PreSync", "PostSync"], "hook_types": ["PreSync", "PostSync"]}), [collision({})])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	contains(x.msg, "Job app-foo/linter-*, a PreSync/PostSync hook, has the same generateName")
	contains(x.msg, "so in PostSync they all become Job app-foo/linter-<rev7>-postsync-<start>")
}

test_the_first_shared_phase_is_named if {
	r := review(
		linter_job({}),
		facts({"phases": ["PreSync", "PostSync"], "hook_types": ["PreSync", "PostSync"]}),
		[collision({"phases": ["PreSync", "PostSync"], "hook_types": ["PreSync", "PostSync"]})],
	)
	some x in rule.violations with input as r
	contains(x.msg, "so in PreSync they all become Job app-foo/linter-<rev7>-presync-<start>")
}

test_different_phases_get_different_names if {
	r := review(linter_job({}), facts({}), [collision({"phases": ["PreSync"], "hook_types": ["PreSync"]})])
	count(rule.violations) == 0 with input as r
}

test_a_delete_only_hook_has_no_sync_phase if {
	r := review(linter_job({}), facts({}), [collision({"phases": [], "hook_types": ["PostDelete"]})])
	count(rule.violations) == 0 with input as r
}

test_a_generate_name_without_dash_gets_one_in_the_suggestion if {
	job := linter_job({"generateName": "linter"})
	r := review(job, facts({}), [collision({"generate_name": "linter", "location": ""})])
	some x in rule.violations with input as r
	contains(x.msg, "has the same generateName as Job app-foo/linter* (a PostSync hook): ")
	contains(x.msg, "(e.g. \"linter-a\" and \"linter-b\")")
}

test_more_than_three_clashes_are_summed_up if {
	clashes := [collision({"location": sprintf("templates/linter.yaml:%d", [n])}) | some n in [10, 20, 30, 40, 50]]
	some x in rule.violations with input as review(linter_job({}), facts({}), clashes)
	contains(x.msg, "(a PostSync hook, at templates/linter.yaml:30) and 2 more: ")
}

# A normal resource with only generateName is a different problem (kubectl apply needs a name).
test_a_non_hook_with_the_same_generate_name_is_not_a_hook_collision if {
	r := review(linter_job({}), facts({}), [collision({"is_hook": false, "phases": ["Sync"], "hook_types": []})])
	count(rule.violations) == 0 with input as r
}

# capsule#264: a post-install Job and a pre-delete Job with the same fixed name.
named_job := linter_job({"generateName": null, "name": "capsule", "annotations": {"helm.sh/hook": "post-install"}})

named_facts := facts({"helm_hooks": ["post-install"], "delete_policies": ["BeforeHookCreation"], "delete_policy_set": false})

test_hooks_with_the_same_fixed_name_are_deduplicated if {
	other := collision({"name": "capsule", "generate_name": "", "phases": [], "hook_types": ["PreDelete"], "location": "templates/pre-delete-job.yaml:4"})
	v := rule.violations with input as review(named_job, named_facts, [other])
	v == {{
		"msg": concat("", [
			"Job app-foo/capsule (a PostSync hook) has the same identity as Job app-foo/capsule (a PreDelete hook, at templates/pre-delete-job.yaml:4): ",
			"before the sync Argo CD keeps only the last of these 2 objects in the rendered manifests and drops the others without applying them ",
			"(Application condition RepeatedResourceWarning, \"appeared 2 times among application resources\"). ",
			"A hook that is dropped never runs, and the copy that survives decides what runs and in which phase. ",
			"Give each object its own metadata.name (a hook that must run on every sync can use generateName instead).",
		]),
		"path": "/metadata/name",
		"severity": "high",
		"action": "warn",
	}}
}

test_a_normal_resource_named_like_a_hook_is_high if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "app-foo"}, "data": {"a": "1"}}
	other := collision({"kind": "ConfigMap", "group": "", "name": "settings", "generate_name": "", "phases": ["PreSync"], "hook_types": ["PreSync"]})
	r := review(cm, facts({"phases": ["Sync"], "is_hook": false, "hook_types": []}), [other])
	some x in rule.violations with input as r
	x.severity == "high"
	startswith(x.msg, "ConfigMap app-foo/settings (a normal resource) has the same identity as ConfigMap app-foo/settings (a PreSync hook, at templates/linter.yaml:21)")
}

test_duplicated_normal_resources_are_low if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "app-foo"}, "data": {"a": "1"}}
	other := collision({"kind": "ConfigMap", "group": "", "name": "settings", "generate_name": "", "is_hook": false, "phases": ["Sync"], "hook_types": [], "location": ""})
	v := rule.violations with input as review(cm, facts({"phases": ["Sync"], "is_hook": false, "hook_types": []}), [other])
	v == {{
		"msg": "ConfigMap app-foo/settings (a normal resource) has the same identity as ConfigMap app-foo/settings (a normal resource): before the sync Argo CD keeps only the last of these 2 objects in the rendered manifests and drops the others without applying them (Application condition RepeatedResourceWarning, \"appeared 2 times among application resources\"). Only the last copy's content is applied; keep one copy, or give the others their own names.",
		"path": "/metadata/name",
		"severity": "low",
		"action": "warn",
	}}
}

test_skipped_and_ignored_copies_are_labelled if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "app-foo"}}
	skipped := collision({"kind": "ConfigMap", "group": "", "name": "settings", "generate_name": "", "is_hook": false, "phases": [], "hook_types": ["Skip"], "location": ""})
	ignored := collision({"kind": "ConfigMap", "group": "", "name": "settings", "generate_name": "", "is_hook": true, "phases": [], "hook_types": [], "location": ""})
	r := review(cm, facts({"phases": ["Sync"], "is_hook": false, "hook_types": []}), [skipped, ignored])
	some x in rule.violations with input as r
	contains(x.msg, "ConfigMap app-foo/settings (marked hook: Skip, never applied), ConfigMap app-foo/settings (a hook Argo CD ignores): ")
	contains(x.msg, "the last of these 3 objects")
	x.severity == "high"
}

test_no_collision_no_finding if {
	count(rule.violations) == 0 with input as review(linter_job({}), facts({}), [])
	count(rule.violations) == 0 with input as review(named_job, named_facts, [])

	# input of the old binary: no collisions fact at all
	count(rule.violations) == 0 with input as {"operation": "CHECK", "resource": named_job, "sync": named_facts}
}

test_a_deletion_is_never_judged if {
	r := object.union(review(linter_job({}), facts({}), [collision({})]), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": named_job, "sync": named_facts, "collisions": "capsule"}
	r := review(linter_job({}), {"is_hook": true, "phases": "PostSync"}, [7, {"name": 3, "generate_name": "linter-", "is_hook": true, "phases": "PostSync"}])
	count(rule.violations) == 0 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG115"
	rule.meta.severity == "high"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG115.md"
}
