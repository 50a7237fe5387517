# Tests for SG105 (policies/hook_type_unknown.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.hook_type_unknown_test

import data.syncguard.rules.hook_type_unknown as rule

hook_path := "/metadata/annotations/argocd.argoproj.io~1hook"

# The seed-000 migration Job with its hook annotation set to `value`.
migration_job(annotations) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"name": "svc-foo-migration",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo"},
		"annotations": annotations,
	},
	"spec": {
		"activeDeadlineSeconds": 900,
		"backoffLimit": 2,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{
				"name": "migrate",
				"image": "registry.example.com/svc-foo/migrate:1.4.2",
				"args": ["migrate", "up"],
			}],
		}},
	},
}

facts(overrides) := object.union(
	{
		"phases": [],
		"is_hook": true,
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

review(resource, sync) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"context": {"source": "check", "dry_run": false},
}

test_lowercase_presync_drops_the_object_and_is_critical if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "presync"}),
		facts({"invalid_hook_values": ["presync"], "ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration: argocd.argoproj.io/hook value \"presync\" is not a hook type Argo CD knows, so Argo CD silently drops the whole object: it is never applied, never pruned and not shown in sync status. Use \"PreSync\": hook values are case-sensitive.",
		"path": hook_path,
		"severity": "critical",
	}}
}

test_an_unknown_value_next_to_a_valid_one_is_high if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "PreSync,Postsync"}),
		facts({"phases": ["PreSync"], "hook_types": ["PreSync"], "invalid_hook_values": ["Postsync"]}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration: argocd.argoproj.io/hook value \"Postsync\" is not a hook type Argo CD knows, so Argo CD ignores it and runs the object only as a PreSync hook. Use \"PostSync\": hook values are case-sensitive.",
		"path": hook_path,
		"severity": "high",
	}}
}

test_a_helm_spelling_gets_the_argo_equivalent if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "pre-install"}),
		facts({"invalid_hook_values": ["pre-install"], "ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	endswith(x.msg, "never applied, never pruned and not shown in sync status. Did you mean \"PreSync\"?")
	x.severity == "critical"
}

test_case_mistakes_are_named_as_such if {
	every pair in [["SYNCFAIL", "SyncFail"], ["postdelete", "PostDelete"], ["skip", "Skip"]] {
		r := review(
			migration_job({"argocd.argoproj.io/hook": pair[0]}),
			facts({"invalid_hook_values": [pair[0]], "ignored": {"reason": "garbage-hook"}}),
		)
		v := rule.violations with input as r
		count(v) == 1
		some x in v
		endswith(x.msg, sprintf(". Use \"%s\": hook values are case-sensitive.", [pair[1]]))
	}
}

test_separator_mistakes_get_a_suggestion if {
	every pair in [["Pre-Sync", "PreSync"], ["post_sync", "PostSync"], ["pre delete", "PreDelete"], ["post-upgrade", "PostSync"]] {
		r := review(
			migration_job({"argocd.argoproj.io/hook": pair[0]}),
			facts({"invalid_hook_values": [pair[0]], "ignored": {"reason": "garbage-hook"}}),
		)
		v := rule.violations with input as r
		count(v) == 1
		some x in v
		endswith(x.msg, sprintf(". Did you mean \"%s\"?", [pair[1]]))
	}
}

test_garbage_gets_the_list_of_valid_values if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "BeforeSync"}),
		facts({"invalid_hook_values": ["BeforeSync"], "ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	endswith(x.msg, "Use PreSync, Sync, PostSync, SyncFail, Skip, PreDelete or PostDelete (case-sensitive), or remove the value.")
}

test_each_unknown_value_is_its_own_violation if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "presync, postsync"}),
		facts({"invalid_hook_values": ["presync", "postsync"], "ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	count(v) == 2
	{x.path | some x in v} == {hook_path}
}

test_an_empty_hook_annotation_drops_the_object if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": " , "}),
		facts({"ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration: argocd.argoproj.io/hook is empty, so Argo CD silently drops the whole object: it is never applied, never pruned and not shown in sync status. Set a hook type (PreSync, Sync, PostSync, SyncFail, PreDelete, PostDelete) or remove the annotation.",
		"path": hook_path,
		"severity": "critical",
	}}
}

test_an_empty_hook_annotation_next_to_a_helm_hook_is_harmless if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "", "helm.sh/hook": "pre-install"}),
		facts({"phases": ["PreSync"], "hook_types": ["PreSync"], "helm_hooks": ["pre-install"]}),
	)
	count(rule.violations) == 0 with input as r
}

test_unknown_argo_value_falls_back_to_the_helm_hook if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "presync", "helm.sh/hook": "pre-upgrade"}),
		facts({"phases": ["PreSync"], "hook_types": ["PreSync"], "helm_hooks": ["pre-upgrade"], "invalid_hook_values": ["presync"]}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.severity == "high"
	contains(x.msg, "so Argo CD ignores it and runs the object only as a PreSync hook. ")
}

test_a_typo_next_to_a_delete_hook_says_when_it_runs if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "PreDelete,Presync"}),
		facts({"hook_types": ["PreDelete"], "invalid_hook_values": ["Presync"], "ignored": {"reason": "delete-hook-only"}}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.severity == "high"
	contains(x.msg, "runs the object only as a PreDelete hook, when the Application is deleted. Use \"PreSync\"")
}

test_a_typo_next_to_skip_says_it_is_skipped if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "Skip,Sycn"}),
		facts({"is_hook": false, "skip": true, "hook_types": ["Skip"], "invalid_hook_values": ["Sycn"], "ignored": {"reason": "skip"}}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	contains(x.msg, "so Argo CD ignores it and the object is skipped: never applied.")
}

test_valid_hook_values_are_fine if {
	every value in ["PreSync", "Sync", "PostSync", "SyncFail", "PostSync,PostDelete"] {
		r := review(
			migration_job({"argocd.argoproj.io/hook": value}),
			facts({"phases": ["PreSync"], "hook_types": ["PreSync"]}),
		)
		count(rule.violations) == 0 with input as r
	}
}

test_an_object_without_hook_annotation_is_fine if {
	r := review(
		migration_job({"argocd.argoproj.io/sync-wave": "1"}),
		facts({"phases": ["Sync"], "is_hook": false, "wave": 1, "wave_raw": "1", "wave_source": "sync-wave"}),
	)
	count(rule.violations) == 0 with input as r
}

test_a_deletion_is_never_judged if {
	r := review(
		migration_job({"argocd.argoproj.io/hook": "presync"}),
		facts({"invalid_hook_values": ["presync"], "ignored": {"reason": "garbage-hook"}}),
	)
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": {"metadata": {"annotations": {"argocd.argoproj.io/hook": 7}}}, "sync": {"invalid_hook_values": [1]}}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG105"
	rule.meta.severity == "critical"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG105.md"
}

# Argo CD 3.2.11 has no PreDelete hook type (docs/argocd-observed.md).
review_for(resource, sync, release, version) := object.union(review(resource, sync), {"argocd": {"release": release, "version": version}})

test_pre_delete_alone_is_dropped_before_argo_cd_3_3 if {
	r := review_for(
		migration_job({"argocd.argoproj.io/hook": "PreDelete"}),
		facts({"hook_types": ["PreDelete"], "ignored": {"reason": "delete-hook-only"}}),
		302, "3.2.11",
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration: argocd.argoproj.io/hook value \"PreDelete\" is a hook type only from Argo CD 3.3; Argo CD 3.2.11 does not know it, so it silently drops the whole object: it is never applied and nothing runs when the Application is deleted. Run the clean-up another way on this version (a PostDelete hook, available since 2.10, runs after the resources are deleted), or upgrade Argo CD.",
		"path": hook_path,
		"severity": "critical",
	}}
}

test_pre_delete_next_to_another_type_leaves_that_type_before_argo_cd_3_3 if {
	r := review_for(
		migration_job({"argocd.argoproj.io/hook": "PreSync,PreDelete"}),
		facts({"phases": ["PreSync"], "hook_types": ["PreSync", "PreDelete"]}),
		302, "3.2",
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.severity == "high"
	contains(x.msg, "so it runs the object only as PreSync.")
}

test_pre_delete_is_a_hook_type_from_argo_cd_3_3 if {
	hook := migration_job({"argocd.argoproj.io/hook": "PreDelete"})
	sync := facts({"hook_types": ["PreDelete"], "ignored": {"reason": "delete-hook-only"}})
	count(rule.violations) == 0 with input as review_for(hook, sync, 303, "3.3")
	count(rule.violations) == 0 with input as review(hook, sync)
}

# Argo CD 3.3.3 and 3.3.4 (argo-cd#26996): a value naming a delete hook and a sync hook type takes
# the object out of the sync. input.argocd as syncguard builds it, with the release table's flag.
review_dropped(value, types, phases, version, dropped) := object.union(
	review(migration_job({"argocd.argoproj.io/hook": value}), facts({"phases": phases, "hook_types": types})),
	{"argocd": {"release": 303, "version": version, "behaviours": {"sync_hook_with_post_delete_dropped": dropped}}},
)

test_a_sync_hook_that_is_also_a_delete_hook_is_dropped_by_3_3_3_and_3_3_4 if {
	v := rule.violations with input as review_dropped("PostSync,PostDelete", ["PostSync", "PostDelete"], ["PostSync"], "3.3.4", true)
	v == {{
		"msg": "Job app-foo/svc-foo-migration: argocd.argoproj.io/hook names PostDelete together with PostSync; Argo CD v3.3.4 (3.3.3 and 3.3.4) takes every object whose hook value names a delete hook out of the sync, so it never runs as PostSync (argo-cd#26996, fixed in 3.3.5). Upgrade to 3.3.5 or later, or split it into two objects: one PostSync hook and one PostDelete hook.",
		"path": hook_path,
		"severity": "high",
	}}
	# PreDelete too, with two sync types.
	w := rule.violations with input as review_dropped("PreSync,Sync,PreDelete", ["PreSync", "Sync", "PreDelete"], ["PreSync", "Sync"], "3.3.3", true)
	count(w) == 1
	some x in w
	contains(x.msg, "so it never runs as PreSync, Sync")
}

test_other_releases_and_single_purpose_hooks_are_not_dropped if {
	# 3.3.5 and later (and 3.3.2 and earlier): the flag is off.
	count(rule.violations) == 0 with input as review_dropped("PostSync,PostDelete", ["PostSync", "PostDelete"], ["PostSync"], "3.3.5", false)
	# Without input.argocd.behaviours: the newest release, which keeps the object.
	count(rule.violations) == 0 with input as review(migration_job({"argocd.argoproj.io/hook": "PostSync,PostDelete"}), facts({"phases": ["PostSync"], "hook_types": ["PostSync", "PostDelete"]}))
	# Only delete hook types, or only sync hook types: nothing to drop from the sync.
	count(rule.violations) == 0 with input as review_dropped("PostDelete", ["PostDelete"], [], "3.3.4", true)
	count(rule.violations) == 0 with input as review_dropped("PreSync,PostSync", ["PreSync", "PostSync"], ["PreSync", "PostSync"], "3.3.4", true)
}
