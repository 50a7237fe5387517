# Tests for SG108 (policies/hook_never_runs.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.hook_never_runs_test

import data.syncguard.rules.hook_never_runs as rule

hook_path := "/metadata/annotations/argocd.argoproj.io~1hook"

helm_path := "/metadata/annotations/helm.sh~1hook"

# A chart's `helm test` Pod.
helm_test_pod(annotations) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {
		"name": "svc-foo-test-connection",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo", "app.kubernetes.io/managed-by": "Helm"},
		"annotations": annotations,
	},
	"spec": {
		"restartPolicy": "Never",
		"containers": [{"name": "wget", "image": "busybox:1.36", "command": ["wget"], "args": ["svc-foo:8080"]}],
	},
}

# A chart's database migration Job.
helm_job(annotations) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"name": "svc-foo-db-init",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo", "app.kubernetes.io/managed-by": "Helm"},
		"annotations": annotations,
	},
	"spec": {
		"activeDeadlineSeconds": 600,
		"backoffLimit": 1,
		"template": {"spec": {
			"restartPolicy": "Never",
			"containers": [{"name": "init", "image": "registry.example.com/svc-foo/migrate:1.4.2", "args": ["init"]}],
		}},
	},
}

crd := {
	"apiVersion": "apiextensions.k8s.io/v1",
	"kind": "CustomResourceDefinition",
	"metadata": {"name": "widgets.example.com", "annotations": {"argocd.argoproj.io/hook": "Skip"}},
	"spec": {
		"group": "example.com",
		"names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
		"scope": "Namespaced",
		"versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}],
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

skip_facts := facts({"is_hook": false, "skip": true, "hook_types": ["Skip"], "ignored": {"reason": "skip"}})

review(resource, sync) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"context": {"source": "check", "dry_run": false},
}

test_a_helm_test_pod_is_dropped_by_argo_cd if {
	r := review(
		helm_test_pod({"helm.sh/hook": "test"}),
		facts({"helm_hooks": ["test"], "unsupported_helm_hooks": ["test"], "ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Pod app-foo/svc-foo-test-connection: helm.sh/hook \"test\" is a Helm hook Argo CD never runs, and nothing else makes it a hook Argo CD knows, so Argo CD drops the whole object: it is never applied. Argo CD never runs Helm tests: run them with `helm test` outside Argo CD, or make it an Argo CD hook (argocd.argoproj.io/hook: PostSync) to run it after every sync.",
		"path": helm_path,
		"severity": "info",
		"cause": "dropped test",
	}}
}

test_a_dropped_hook_whose_name_is_a_typo_is_medium if {
	r := review(
		helm_job({"helm.sh/hook": "pre-instal"}),
		facts({"helm_hooks": ["pre-instal"], "unsupported_helm_hooks": ["pre-instal"], "ignored": {"reason": "garbage-hook"}}),
	)
	some v in rule.violations with input as r
	v.severity == "medium"
	v.cause == "dropped pre-instal"
}

test_a_rollback_item_next_to_a_usable_one_is_low_and_install_only_is_info if {
	r := review(
		helm_job({"helm.sh/hook": "pre-install,pre-rollback"}),
		facts({
			"phases": ["PreSync"], "hook_types": ["PreSync"],
			"helm_hooks": ["pre-install", "pre-rollback"], "unsupported_helm_hooks": ["pre-rollback"],
		}),
	)
	v := rule.violations with input as r
	v == {
		{
			"msg": "Job app-foo/svc-foo-db-init: helm.sh/hook \"pre-rollback\" is a Helm hook Argo CD never runs; Argo CD ignores it and runs the object only as a PreSync hook. Argo CD has no rollback hooks (a rollback is a sync to an older revision): make it a PreSync or PostSync hook if it must run.",
			"path": helm_path,
			"severity": "info",
			"cause": "ignored pre-rollback",
		},
		{
			"msg": "Job app-foo/svc-foo-db-init has helm.sh/hook \"pre-install\" without \"pre-upgrade\": Argo CD cannot tell an install from an upgrade and runs it as a PreSync hook on every sync, not only on the first install. Make it idempotent, and add pre-upgrade to say so.",
			"path": helm_path,
			"severity": "info",
			"cause": "one-sided pre-install",
		},
	}
}

test_install_and_upgrade_together_is_fine if {
	r := review(
		helm_job({"helm.sh/hook": "pre-install,pre-upgrade", "helm.sh/hook-weight": "-5"}),
		facts({"phases": ["PreSync"], "hook_types": ["PreSync"], "helm_hooks": ["pre-install", "pre-upgrade"], "wave": -5, "wave_source": "hook-weight"}),
	)
	count(rule.violations) == 0 with input as r
}

test_an_upgrade_only_hook_also_runs_on_the_first_sync if {
	r := review(
		helm_job({"helm.sh/hook": "post-upgrade"}),
		facts({"phases": ["PostSync"], "hook_types": ["PostSync"], "helm_hooks": ["post-upgrade"]}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-db-init has helm.sh/hook \"post-upgrade\" without \"post-install\": Argo CD cannot tell an install from an upgrade and runs it as a PostSync hook on every sync, including the very first one. Make it safe on a fresh install, and add post-install to say so.",
		"path": helm_path,
		"severity": "info",
		"cause": "one-sided post-upgrade",
	}}
}

test_a_pre_upgrade_only_hook_warns_about_the_empty_install if {
	r := review(
		helm_job({"helm.sh/hook": "pre-upgrade"}),
		facts({"phases": ["PreSync"], "hook_types": ["PreSync"], "helm_hooks": ["pre-upgrade"]}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	contains(x.msg, "including the very first one, before anything of the release exists. Make it safe on an empty install")
}

test_an_argo_hook_type_makes_helm_hooks_irrelevant if {
	r := review(
		helm_test_pod({"helm.sh/hook": "test", "argocd.argoproj.io/hook": "PostSync"}),
		facts({"phases": ["PostSync"], "hook_types": ["PostSync"], "helm_hooks": ["test"], "unsupported_helm_hooks": ["test"]}),
	)
	count(rule.violations) == 0 with input as r
	s := review(
		helm_job({"helm.sh/hook": "pre-install", "argocd.argoproj.io/hook": "Sync"}),
		facts({"phases": ["Sync"], "hook_types": ["Sync"], "helm_hooks": ["pre-install"]}),
	)
	count(rule.violations) == 0 with input as s
}

test_skip_on_a_helm_admission_job_is_the_documented_workaround if {
	r := review(
		helm_job({"helm.sh/hook": "pre-install,pre-upgrade", "argocd.argoproj.io/hook": "Skip"}),
		object.union(skip_facts, {"helm_hooks": ["pre-install", "pre-upgrade"]}),
	)
	count(rule.violations) == 0 with input as r
}

test_skip_on_a_crd_is_reported if {
	v := rule.violations with input as review(crd, skip_facts)
	v == {{
		"msg": "CustomResourceDefinition widgets.example.com has argocd.argoproj.io/hook: Skip, so Argo CD never applies or updates it: on a fresh cluster its custom resources fail the whole sync (\"one or more synchronization tasks are not valid\"). Remove the annotation, or exempt this object if another Application manages it.",
		"path": hook_path,
		"severity": "medium",
	}}
}

test_skip_on_a_namespace_is_reported if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app-foo", "annotations": {"argocd.argoproj.io/hook": "Skip"}}}
	v := rule.violations with input as review(ns, skip_facts)
	count(v) == 1
	some x in v
	startswith(x.msg, "Namespace app-foo has argocd.argoproj.io/hook: Skip, so Argo CD never applies or updates it: on a fresh cluster everything that lives in it fails to sync")
}

test_skip_with_another_hook_type_is_not_skip if {
	r := review(crd, facts({"phases": ["PreSync"], "hook_types": ["Skip", "PreSync"]}))
	count(rule.violations) == 0 with input as r
}

test_a_separator_typo_gets_the_helm_name if {
	r := review(
		helm_job({"helm.sh/hook": "Pre_Install"}),
		facts({"helm_hooks": ["Pre_Install"], "unsupported_helm_hooks": ["Pre_Install"], "ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	endswith(x.msg, "it is never applied. Did you mean \"pre-install\"?")
}

test_other_unknown_helm_hooks_get_the_list if {
	r := review(
		helm_job({"helm.sh/hook": "pre-instal"}),
		facts({"helm_hooks": ["pre-instal"], "unsupported_helm_hooks": ["pre-instal"], "ignored": {"reason": "garbage-hook"}}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	endswith(x.msg, "Helm hooks Argo CD runs are pre-install, pre-upgrade, post-install, post-upgrade, pre-delete and post-delete.")
}

test_an_unsupported_item_next_to_a_delete_hook_says_when_it_runs if {
	r := review(
		helm_job({"helm.sh/hook": "pre-delete,test-success"}),
		facts({
			"hook_types": ["PreDelete"], "helm_hooks": ["pre-delete", "test-success"],
			"unsupported_helm_hooks": ["test-success"], "ignored": {"reason": "delete-hook-only"},
		}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.severity == "info"
	contains(x.msg, "Argo CD ignores it and runs the object only as a PreDelete hook, when the Application is deleted. Argo CD never runs Helm tests")
}

test_plain_resources_are_fine if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "svc-foo", "namespace": "app-foo"}, "data": {"LOG_LEVEL": "info"}}
	count(rule.violations) == 0 with input as review(cm, facts({"phases": ["Sync"], "is_hook": false}))
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(review(crd, skip_facts), {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	r := {"resource": {"kind": 5}, "sync": {"unsupported_helm_hooks": "test", "helm_hooks": {"a": 1}, "skip": "yes", "ignored": "garbage-hook"}}
	count(rule.violations) == 0 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG108"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG108.md"
}
