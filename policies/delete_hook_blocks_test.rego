# Tests for SG118 (policies/delete_hook_blocks.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.delete_hook_blocks_test

import data.syncguard.rules.delete_hook_blocks as rule

hook_path := "/metadata/annotations/argocd.argoproj.io~1hook"

helm_path := "/metadata/annotations/helm.sh~1hook"

obj(api_version, kind, name, annotations) := {
	"apiVersion": api_version,
	"kind": kind,
	"metadata": {"name": name, "namespace": "app-x", "annotations": annotations},
}

cluster_obj(api_version, kind, name, annotations) := {
	"apiVersion": api_version,
	"kind": kind,
	"metadata": {"name": name, "annotations": annotations},
}

post_delete := {"argocd.argoproj.io/hook": "PostDelete"}

facts(overrides) := object.union(
	{
		"phases": [],
		"is_hook": true,
		"skip": false,
		"ignored": {"reason": "delete-hook-only"},
		"hook_types": ["PostDelete"],
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

argocd(major, minor, patch) := {
	"version": sprintf("%v.%v.%v", [major, minor, patch]),
	"major": major,
	"minor": minor,
	"patch": patch,
	"release": (major * 100) + minor,
	"number": ((major * 10000) + (minor * 100)) + patch,
}

review(resource, sync, refs, health_check, version) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"refs": refs,
	"health_check": health_check,
	"argocd": version,
	"context": {"source": "check", "dry_run": false},
}

# A reference of the cleanup Job to an object of the set.
ref(kind, name, role, via, target) := {
	"kind": kind,
	"group": "",
	"name": name,
	"namespace": "app-x",
	"via": via,
	"optional": false,
	"role": role,
	"target": object.union(
		{
			"resolution": "in_set",
			"kind": kind,
			"group": "",
			"name": name,
			"namespace": "app-x",
			"phases": ["Sync"],
			"wave": 0,
			"is_hook": false,
			"hook_types": [],
			"delete_policies": ["BeforeHookCreation"],
			"ignored": null,
			"tasks": [],
			"async_producer": false,
			"health_check": null,
		},
		target,
	),
}

sa_via := "/spec/template/spec/serviceAccountName"

cleanup_job(annotations) := object.union(
	obj("batch/v1", "Job", "cleanup", annotations),
	{"spec": {
		"activeDeadlineSeconds": 600,
		"backoffLimit": 1,
		"template": {"spec": {
			"serviceAccountName": "cleanup",
			"restartPolicy": "Never",
			"containers": [{"name": "c", "image": "bitnami/kubectl:1.30", "args": ["delete", "crd", "widgets.example.com"]}],
		}},
	}},
)

post_delete_sa := {"is_hook": true, "phases": [], "hook_types": ["PostDelete"], "ignored": {"reason": "delete-hook-only"}}

# ---- 1: no health check on 2.10 / 2.11 (argo-cd#17191, #18270) ----

test_a_post_delete_service_account_on_2_10_blocks_the_deletion if {
	r := review(obj("v1", "ServiceAccount", "cleanup", post_delete), facts({}), [], null, argocd(2, 10, 0))
	v := rule.violations with input as r
	v == {{
		"msg": "ServiceAccount app-x/cleanup is a PostDelete hook of a kind without a health check: while the Application is deleted, Argo CD v2.10.0 reads the health of every live PostDelete hook, dereferences the missing status of this one and panics on every attempt, so the Application stays Deleting for ever (argo-cd#18270, argo-cd#17191; fixed in v2.12.0 by argo-cd#18767). Upgrade to Argo CD 2.12 or later, or take cleanup out of the delete hooks (a normal resource with argocd.argoproj.io/sync-options: Delete=false survives the deletion for the hook to use).",
		"path": hook_path,
		"severity": "high",
	}}
}

test_the_health_check_fix_is_in_2_12 if {
	role := obj("rbac.authorization.k8s.io/v1", "Role", "cleanup", post_delete)
	count(rule.violations) == 1 with input as review(role, facts({}), [], null, argocd(2, 11, 14))
	count(rule.violations) == 0 with input as review(role, facts({}), [], null, argocd(2, 12, 0))
	count(rule.violations) == 0 with input as review(role, facts({}), [], null, argocd(2, 9, 9))
}

test_kinds_with_a_health_check_are_fine_on_2_10 if {
	job := cleanup_job(post_delete)
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, post_delete_sa)]
	count(rule.violations) == 0 with input as review(job, facts({}), refs, "builtin", argocd(2, 10, 0))
	cm := obj("v1", "ConfigMap", "cleanup", post_delete)
	count(rule.violations) == 0 with input as review(cm, facts({}), [], "custom", argocd(2, 10, 0))
}

# Without the health_check fact (an older syncguard) only well-known passive kinds count.
test_without_the_health_check_fact_known_passive_kinds_count if {
	sa := json.remove(review(obj("v1", "ServiceAccount", "cleanup", post_delete), facts({}), [], null, argocd(2, 10, 0)), ["health_check"])
	count(rule.violations) == 1 with input as sa
	cr := json.remove(review(obj("example.com/v1", "Widget", "cleanup", post_delete), facts({}), [], null, argocd(2, 10, 0)), ["health_check"])
	count(rule.violations) == 0 with input as cr
}

# ---- 2: cluster-scoped delete hooks before 3.4.0 (argo-cd#21637) ----

test_a_cluster_role_post_delete_hook_before_3_4 if {
	cr := cluster_obj("rbac.authorization.k8s.io/v1", "ClusterRole", "some-operator-finalizer-cleanup", {"helm.sh/hook": "post-delete"})
	sync := facts({"helm_hooks": ["post-delete"]})
	v := rule.violations with input as review(cr, sync, [], null, argocd(2, 13, 3))
	v == {{
		"msg": "ClusterRole some-operator-finalizer-cleanup is a PostDelete hook of a cluster-scoped kind: Argo CD v2.13.3 gives every delete hook the Application's destination namespace before it looks for the live one, so it never finds the ClusterRole it created, creates it again on the next pass, gets \"already exists\" and keeps the Application in Deleting with that error (argo-cd#21637; from v3.4.0 an existing hook is skipped, argo-cd#26724). Use a namespaced kind for the hook (a Role and RoleBinding instead of a ClusterRole and ClusterRoleBinding), or upgrade to Argo CD 3.4.",
		"path": helm_path,
		"severity": "high",
	}}
	count(rule.violations) == 1 with input as review(cr, sync, [], null, argocd(3, 3, 14))
	count(rule.violations) == 0 with input as review(cr, sync, [], null, argocd(3, 4, 0))
}

# On 2.10 / 2.11 the cluster-scoped finding replaces the health-check one (it fails first).
test_a_cluster_role_on_2_10_is_reported_once if {
	cr := cluster_obj("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "cleanup", post_delete)
	v := rule.violations with input as review(cr, facts({}), [], null, argocd(2, 10, 0))
	count(v) == 1
	some x in v
	contains(x.msg, "of a cluster-scoped kind")
}

test_a_cluster_scoped_pre_delete_hook_on_3_3 if {
	cr := cluster_obj("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", "guard", {"argocd.argoproj.io/hook": "PreDelete"})
	pre := facts({"hook_types": ["PreDelete"]})
	v := rule.violations with input as review(cr, pre, [], null, argocd(3, 3, 0))
	count(v) == 1
	some x in v
	startswith(x.msg, "ValidatingWebhookConfiguration guard is a PreDelete hook of a cluster-scoped kind")
	count(rule.violations) == 0 with input as review(cr, pre, [], null, argocd(3, 2, 11))
}

# ---- 3: a needed object that is gone when the hook runs ----

test_a_post_delete_job_using_a_normal_service_account if {
	job := cleanup_job(post_delete)
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, {})]
	v := rule.violations with input as review(job, facts({}), refs, "builtin", argocd(3, 4, 0))
	v == {{
		"msg": "Job app-x/cleanup, a PostDelete hook, needs ServiceAccount app-x/cleanup (service_account), which is a normal resource of the Application and is deleted with the Application before PostDelete hooks run: the hook's pod cannot start, so the hook stays Progressing and Argo CD waits; when a deadline fails it, Argo CD deletes it, reports a DeletionError and creates it again, so the Application never finishes deleting. Give the hook its own copy, annotated argocd.argoproj.io/hook: PostDelete (under another name if other objects use app-x/cleanup), or keep app-x/cleanup through the deletion with argocd.argoproj.io/sync-options: Delete=false.",
		"path": sa_via,
		"severity": "high",
	}}
}

test_before_3_3_a_failed_post_delete_hook_does_not_stop_the_deletion if {
	job := cleanup_job(post_delete)
	refs := [ref("Secret", "db-admin", "env_from", "/spec/template/spec/containers/0/envFrom/0/secretRef/name", {"is_hook": true, "phases": ["PreSync"], "hook_types": ["PreSync"]})]
	v := rule.violations with input as review(job, facts({}), refs, "builtin", argocd(3, 2, 11))
	count(v) == 1
	some x in v
	contains(x.msg, "needs Secret app-x/db-admin (env_from), which is a PreSync hook and is deleted with the Application before PostDelete hooks run: the hook's pod cannot start and Argo CD v3.2.11 waits for it for ever; if activeDeadlineSeconds fails it, this release counts the failed hook as done and finishes the deletion without the clean-up having run.")
}

test_the_hooks_namespace_deleted_first if {
	job := cleanup_job(post_delete)
	ns_ref := object.union(
		ref("Namespace", "app-x", "namespace", "/metadata/namespace", {"kind": "Namespace", "namespace": null}),
		{"namespace": null},
	)
	v := rule.violations with input as review(job, facts({}), [ns_ref], "builtin", argocd(3, 4, 0))
	v == {{
		"msg": "Job app-x/cleanup, a PostDelete hook, needs Namespace app-x (namespace), which is a normal resource of the Application and is deleted, with everything in it, before PostDelete hooks run: Argo CD cannot create the hook in a namespace that no longer exists and retries on every pass, so the Application stays Deleting for ever. Leave the Namespace out of the Application (CreateNamespace=true, or create it elsewhere), or keep it through the deletion with argocd.argoproj.io/sync-options: Delete=false.",
		"path": "/metadata/namespace",
		"severity": "high",
	}}
}

test_objects_created_by_the_same_delete_pass_are_fine if {
	job := cleanup_job(post_delete)
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, post_delete_sa)]
	count(rule.violations) == 0 with input as review(job, facts({}), refs, "builtin", argocd(2, 12, 0))
	count(rule.violations) == 0 with input as review(job, facts({}), refs, "builtin", argocd(3, 4, 0))
}

test_pre_delete_hooks_see_the_applications_resources if {
	job := cleanup_job({"argocd.argoproj.io/hook": "PreDelete"})
	pre := facts({"hook_types": ["PreDelete"]})
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, {})]
	count(rule.violations) == 0 with input as review(job, pre, refs, "builtin", argocd(3, 3, 0))
}

test_a_pre_delete_job_using_a_post_delete_only_object if {
	job := cleanup_job({"argocd.argoproj.io/hook": "PreDelete"})
	pre := facts({"hook_types": ["PreDelete"]})
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, post_delete_sa)]
	v := rule.violations with input as review(job, pre, refs, "builtin", argocd(3, 4, 0))
	count(v) == 1
	some x in v
	x.severity == "high"
	contains(x.msg, "which is a PostDelete hook and is created only after the Application's resources are deleted:")
}

# argo-cd#26404: helm.sh/hook "pre-install,pre-upgrade,pre-delete" with hook-succeeded.
test_a_pre_delete_job_using_a_hook_succeeded_pre_sync_and_pre_delete_service_account if {
	job := cleanup_job({"helm.sh/hook": "pre-delete"})
	pre := facts({"hook_types": ["PreDelete"], "helm_hooks": ["pre-delete"]})
	sa := {
		"is_hook": true, "phases": ["PreSync"], "hook_types": ["PreSync", "PreDelete"],
		"delete_policies": ["BeforeHookCreation", "HookSucceeded"],
	}
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, sa)]
	v := rule.violations with input as review(job, pre, refs, "builtin", argocd(3, 3, 0))
	count(v) == 1
	some x in v
	x.severity == "high"
	contains(x.msg, "which is a sync hook with hook-delete-policy HookSucceeded, so it is deleted after every successful sync, and Argo CD v3.3.0 does not create it again for PreDelete because its hook annotation lists several values (argo-cd#26404):")
	count(rule.violations) == 0 with input as review(job, pre, refs, "builtin", argocd(3, 3, 3))
}

test_a_pre_delete_job_using_a_hook_succeeded_sync_hook_is_medium if {
	job := cleanup_job({"argocd.argoproj.io/hook": "PreDelete"})
	pre := facts({"hook_types": ["PreDelete"]})
	sa := {"is_hook": true, "phases": ["PreSync"], "hook_types": ["PreSync"], "delete_policies": ["HookSucceeded"]}
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, sa)]
	v := rule.violations with input as review(job, pre, refs, "builtin", argocd(3, 4, 0))
	{x.severity | some x in v} == {"medium"}
	kept := {"is_hook": true, "phases": ["PreSync"], "hook_types": ["PreSync"], "delete_policies": ["BeforeHookCreation"]}
	count(rule.violations) == 0 with input as review(job, pre, [ref("ServiceAccount", "cleanup", "service_account", sa_via, kept)], "builtin", argocd(3, 4, 0))
}

test_a_produced_secret_is_medium if {
	job := cleanup_job(post_delete)
	refs := [ref("Secret", "db-admin", "env", "/spec/template/spec/containers/0/env/0/valueFrom/secretKeyRef/name", {"resolution": "produced_by", "kind": "ExternalSecret", "group": "external-secrets.io", "async_producer": true})]
	v := rule.violations with input as review(job, facts({}), refs, "builtin", argocd(3, 4, 0))
	count(v) == 1
	some x in v
	x.severity == "medium"
	contains(x.msg, "which is produced by ExternalSecret app-x/db-admin, which is deleted with the Application before PostDelete hooks run (what it produced usually goes with it):")
}

test_a_skipped_target_is_never_applied if {
	job := cleanup_job(post_delete)
	skipped := {"phases": [], "hook_types": ["Skip"], "ignored": {"reason": "skip"}}
	v := rule.violations with input as review(job, facts({}), [ref("ConfigMap", "cleanup-script", "volume", "/spec/template/spec/volumes/0/configMap/name", skipped)], "builtin", argocd(3, 4, 0))
	count(v) == 1
	some x in v
	x.severity == "medium"
	contains(x.msg, "which is never applied by Argo CD")
}

test_optional_builtin_and_missing_targets_are_not_reported if {
	job := cleanup_job(post_delete)
	optional := object.union(ref("Secret", "extra", "env_from", "/spec/template/spec/containers/0/envFrom/0/secretRef/name", {}), {"optional": true})
	builtin := ref("ServiceAccount", "default", "service_account", sa_via, {"resolution": "builtin"})
	missing := ref("Secret", "elsewhere", "env_from", "/spec/template/spec/containers/0/envFrom/1/secretRef/name", {"resolution": "missing"})
	other_role := ref("Deployment", "web", "scale_target", "/spec/scaleTargetRef/name", {})
	count(rule.violations) == 0 with input as review(job, facts({}), [optional, builtin, missing, other_role], "builtin", argocd(3, 4, 0))
}

test_sync_hooks_and_normal_resources_are_not_delete_hooks if {
	job := cleanup_job({"argocd.argoproj.io/hook": "PreSync"})
	refs := [ref("ServiceAccount", "cleanup", "service_account", sa_via, {})]
	sync := facts({"phases": ["PreSync"], "hook_types": ["PreSync"], "ignored": null})
	count(rule.violations) == 0 with input as review(job, sync, refs, "builtin", argocd(2, 10, 0))
	sa := obj("v1", "ServiceAccount", "cleanup", {})
	normal := facts({"phases": ["Sync"], "is_hook": false, "hook_types": [], "ignored": null})
	count(rule.violations) == 0 with input as review(sa, normal, [], null, argocd(2, 10, 0))
}

# ---- 4: a delete hook value in a list before v3.3.3 (argo-cd#26420) ----

test_a_helm_pre_delete_in_a_list_is_not_run_before_3_3_3 if {
	sa := obj("v1", "ServiceAccount", "cleanup", {"helm.sh/hook": "pre-install,pre-upgrade,pre-delete"})
	sync := facts({"phases": ["PreSync"], "hook_types": ["PreSync", "PreDelete"], "helm_hooks": ["pre-install", "pre-upgrade", "pre-delete"], "ignored": null})
	v := rule.violations with input as review(sa, sync, [], null, argocd(3, 3, 0))
	v == {{
		"msg": "ServiceAccount app-x/cleanup has helm.sh/hook \"pre-install,pre-upgrade,pre-delete\": Argo CD v3.3.0 runs a PreDelete hook only when that annotation is exactly \"pre-delete\" (a list is recognised from v3.3.3, argo-cd#26420), so nothing creates this ServiceAccount when the Application is deleted; it runs only as a PreSync hook during syncs. Put the PreDelete hook in an object of its own whose annotation is that single value, or upgrade to Argo CD 3.3.3 or later.",
		"path": helm_path,
		"severity": "medium",
	}}
	count(rule.violations) == 0 with input as review(sa, sync, [], null, argocd(3, 3, 3))
	count(rule.violations) == 0 with input as review(sa, sync, [], null, argocd(3, 2, 11))

	# the patch read from the version when number and patch are absent (an older syncguard)
	count(rule.violations) == 1 with input as review(sa, sync, [], null, {"version": "3.3.2", "release": 303})
	count(rule.violations) == 0 with input as review(sa, sync, [], null, {"version": "3.3", "release": 303})
}

test_post_sync_and_post_delete_in_one_annotation_on_3_2 if {
	job := cleanup_job({"argocd.argoproj.io/hook": "PostSync,PostDelete"})
	sync := facts({"phases": ["PostSync"], "hook_types": ["PostSync", "PostDelete"], "ignored": null})
	v := rule.violations with input as review(job, sync, [], "builtin", argocd(3, 2, 11))
	count(v) == 1
	some x in v
	x.path == hook_path
	contains(x.msg, "runs a PostDelete hook only when that annotation is exactly \"PostDelete\"")
	contains(x.msg, "; it runs only as a PostSync hook during syncs.")
}

# An unrecognised delete hook is not run at deletion, so nothing else is said about it.
test_an_unrecognised_delete_hook_gets_only_that_finding if {
	cr := cluster_obj("rbac.authorization.k8s.io/v1", "ClusterRole", "cleanup", {"argocd.argoproj.io/hook": "PostSync, PostDelete"})
	sync := facts({"phases": ["PostSync"], "hook_types": ["PostSync", "PostDelete"], "ignored": null})
	v := rule.violations with input as review(cr, sync, [], null, argocd(2, 11, 0))
	count(v) == 1
	some x in v
	x.severity == "medium"
}

test_a_deletion_is_never_judged if {
	r := review(obj("v1", "ServiceAccount", "cleanup", post_delete), facts({}), [], null, argocd(2, 10, 0))
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	r := {
		"resource": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"annotations": ["PostDelete"]}},
		"sync": {"is_hook": true, "hook_types": "PostDelete"},
		"refs": "none",
		"argocd": {"release": "210"},
	}
	count(rule.violations) == 0 with input as r
	r2 := {
		"resource": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"annotations": {"argocd.argoproj.io/hook": "PostDelete"}}},
		"sync": {"is_hook": true, "hook_types": ["PostDelete"]},
		"refs": [7, {"role": "service_account", "target": "x"}, {"role": "service_account", "optional": "no", "target": {"resolution": "in_set", "hook_types": "PostDelete", "ignored": []}}],
		"health_check": "builtin",
	}
	v := rule.violations with input as r2
	count(v) == 1
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG118"
	rule.meta.severity == "high"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG118.md"
}
