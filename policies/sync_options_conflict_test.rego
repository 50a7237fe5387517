# Tests for SG119 (policies/sync_options_conflict.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. input.argocd and input.argocd.config are mocked as the lead's contract
# describes them (issue 13).
package syncguard.rules.sync_options_conflict_test

import data.syncguard.rules.sync_options_conflict as rule

argocd(major, minor, patch) := {
	"version": sprintf("%d.%d.%d", [major, minor, patch]),
	"major": major,
	"minor": minor,
	"patch": patch,
	"release": (major * 100) + minor,
	"number": ((major * 10000) + (minor * 100)) + patch,
}

# "3.3" without a patch: patch 99.
argocd_release(major, minor) := object.union(argocd(major, minor, 99), {"version": sprintf("%d.%d", [major, minor])})

v3_2_11 := argocd(3, 2, 11)

facts(overrides) := object.union(
	{
		"phases": ["Sync"],
		"is_hook": false,
		"skip": false,
		"hook_types": [],
		"helm_hooks": [],
		"wave": 0,
		"wave_source": "default",
		"delete_policies": ["BeforeHookCreation"],
		"delete_policy_set": false,
		"sync_options": {"items": [], "unknown": []},
	},
	overrides,
)

review(resource, sync, version, extra) := object.union(
	{
		"operation": "CHECK",
		"resource": resource,
		"sync": sync,
		"argocd": version,
		"context": {"source": "check", "dry_run": false},
	},
	extra,
)

# ---- 1. Replace=true on RBAC hooks (argo-cd#13100: ingress-nginx with Replace=true) ----

admission_binding(annotations) := {
	"apiVersion": "rbac.authorization.k8s.io/v1",
	"kind": "RoleBinding",
	"metadata": {
		"name": "ingress-nginx-admission",
		"namespace": "ingress-nginx",
		"annotations": object.union(
			{
				"helm.sh/hook": "pre-install,pre-upgrade,post-install,post-upgrade",
				"helm.sh/hook-delete-policy": "before-hook-creation,hook-succeeded",
			},
			annotations,
		),
	},
	"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "ingress-nginx-admission"},
	"subjects": [{"kind": "ServiceAccount", "name": "ingress-nginx-admission", "namespace": "ingress-nginx"}],
}

hook_facts(items) := facts({
	"phases": ["PreSync", "PostSync"],
	"is_hook": true,
	"hook_types": ["PreSync", "PostSync"],
	"helm_hooks": ["pre-install", "pre-upgrade", "post-install", "post-upgrade"],
	"delete_policies": ["BeforeHookCreation", "HookSucceeded"],
	"delete_policy_set": true,
	"sync_options": {"items": items, "unknown": []},
})

app_replace := {"app": {"name": "ingress-nginx", "sync_options": {"items": ["Replace=true", "CreateNamespace=true"], "unknown": []}}}

test_an_rbac_hook_under_app_level_replace_fails_every_sync if {
	v := rule.violations with input as review(admission_binding({}), hook_facts([]), v3_2_11, app_replace)
	v == {{
		"msg": concat("", [
			"RoleBinding ingress-nginx/ingress-nginx-admission is a PreSync/PostSync hook that Argo CD syncs with Replace=true (the Application's spec.syncPolicy.syncOptions): ",
			"a hook is created anew at every sync, and until Argo CD 3.3.13 a create of an rbac.authorization.k8s.io/v1 object first runs kubectl auth reconcile, which already creates it, ",
			"so the kubectl create that follows fails with \"already exists\" and so does the sync, every time, on Argo CD v3.2.11 ",
			"(argo-cd#24154, argo-cd#13100; fixed by argo-cd#26791 in 3.4.0 and 3.3.13). ",
			"Remove Replace=true from the Application's syncOptions and annotate only the resources that need it ",
			"(Replace=false on this hook does not override it: Argo CD never reads Replace=false), or upgrade Argo CD to 3.3.13 or later.",
		]),
		"path": "/metadata",
		"severity": "high",
		"action": "deny",
	}}
}

test_an_rbac_hook_with_its_own_replace_annotation if {
	binding := admission_binding({"argocd.argoproj.io/sync-options": "Replace=true"})
	v := rule.violations with input as review(binding, hook_facts(["Replace=true"]), argocd(2, 9, 5), app_replace)
	count(v) == 1
	some x in v
	x.path == "/metadata/annotations/argocd.argoproj.io~1sync-options"
	contains(x.msg, "(its argocd.argoproj.io/sync-options annotation)")
	contains(x.msg, "every time, on Argo CD v2.9.5 (argo-cd#24154")
	endswith(x.msg, "Remove Replace=true from the hook (Argo CD creates hooks fresh anyway), or upgrade Argo CD to 3.3.13 or later.")
}

test_the_rbac_replace_bug_is_fixed_in_3_3_13_and_3_4 if {
	count(rule.violations) == 1 with input as review(admission_binding({}), hook_facts([]), argocd(3, 3, 12), app_replace)
	count(rule.violations) == 0 with input as review(admission_binding({}), hook_facts([]), argocd(3, 3, 13), app_replace)
	count(rule.violations) == 0 with input as review(admission_binding({}), hook_facts([]), argocd_release(3, 3), app_replace)
	count(rule.violations) == 0 with input as review(admission_binding({}), hook_facts([]), argocd(3, 4, 0), app_replace)

	# no version given: the newest release
	r := object.remove(review(admission_binding({}), hook_facts([]), {}, app_replace), ["argocd"])
	count(rule.violations) == 0 with input as r

	# a release without a number fact (older binaries): 3.2 counts as affected
	count(rule.violations) == 1 with input as review(admission_binding({}), hook_facts([]), {"version": "3.2", "release": 302}, app_replace)
}

test_replace_on_other_hooks_and_on_normal_rbac_is_not_this_bug if {
	job := {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "ingress-nginx-admission-create", "namespace": "ingress-nginx"}}
	count(rule.violations) == 0 with input as review(job, hook_facts([]), v3_2_11, app_replace)
	count(rule.violations) == 0 with input as review(admission_binding({}), facts({}), v3_2_11, app_replace)
	old := object.union(admission_binding({}), {"apiVersion": "rbac.authorization.k8s.io/v1beta1"})
	count(rule.violations) == 0 with input as review(old, hook_facts([]), v3_2_11, app_replace)
	count(rule.violations) == 0 with input as review(admission_binding({}), hook_facts([]), v3_2_11, {})
}

# ---- 2. Application options this release does not read ----

application(sync_policy) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "operators", "namespace": "argocd"},
	"spec": {
		"project": "platform",
		"source": {"repoURL": "https://git.example.com/platform.git", "path": "operators", "targetRevision": "main"},
		"destination": {"server": "https://kubernetes.default.svc", "namespace": "operators"},
		"syncPolicy": sync_policy,
	},
}

test_app_level_skip_dry_run_before_3_1 if {
	app := application({"syncOptions": ["CreateNamespace=true", " SkipDryRunOnMissingResource=true"]})
	v := rule.violations with input as review(app, facts({}), argocd(3, 0, 5), {})
	v == {{
		"msg": "Application operators sets SkipDryRunOnMissingResource=true in spec.syncPolicy.syncOptions, but Argo CD reads it there only from 3.1.0 (argo-cd#22679; reported as argo-cd#15095); v3.0.5 ignores it: the dry run still fails on a custom resource whose CRD is not in the cluster (\"the server could not find the requested resource\"), and nothing is synced. Annotate the custom resources themselves with argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true, or upgrade Argo CD to 3.1 or later.",
		"path": "/spec/syncPolicy/syncOptions/1",
		"severity": "medium",
	}}
	count(rule.violations) == 0 with input as review(app, facts({}), argocd(3, 1, 0), {})
}

test_app_level_server_side_apply_and_respect_ignore_differences_boundaries if {
	app := application({"syncOptions": ["ServerSideApply=true", "RespectIgnoreDifferences=true", "FailOnSharedResource=true"]})
	v := rule.violations with input as review(app, facts({}), argocd(2, 1, 0), {})
	{[x.path, x.severity] | some x in v} == {
		["/spec/syncPolicy/syncOptions/0", "medium"],
		["/spec/syncPolicy/syncOptions/1", "medium"],
		["/spec/syncPolicy/syncOptions/2", "low"],
	}
	{x.path | some x in rule.violations} == {"/spec/syncPolicy/syncOptions/0", "/spec/syncPolicy/syncOptions/1"} with input as review(app, facts({}), argocd(2, 2, 0), {})
	{x.path | some x in rule.violations} == {"/spec/syncPolicy/syncOptions/0"} with input as review(app, facts({}), argocd(2, 4, 12), {})
	count(rule.violations) == 0 with input as review(app, facts({}), argocd(2, 5, 0), {})
}

test_app_level_prune_and_delete_before_3_4 if {
	app := application({"automated": {"prune": true}, "syncOptions": ["Prune=false", "Delete=confirm"]})
	v := rule.violations with input as review(app, facts({}), argocd_release(3, 3), {})
	{[x.path, x.severity] | some x in v} == {["/spec/syncPolicy/syncOptions/0", "high"], ["/spec/syncPolicy/syncOptions/1", "medium"]}
	some x in v
	x.path == "/spec/syncPolicy/syncOptions/0"
	contains(x.msg, "but Argo CD reads it there only from 3.4.0 (argo-cd#23370); v3.3 ignores it: every sync that prunes")
	manual := application({"syncOptions": ["Prune=confirm"]})
	some y in rule.violations with input as review(manual, facts({}), argocd(3, 2, 11), {})
	y.severity == "medium"
	count(rule.violations) == 0 with input as review(app, facts({}), argocd(3, 4, 0), {})
}

test_force_is_never_read_from_sync_options if {
	app := application({"syncOptions": ["Force=true"]})
	v := rule.violations with input as review(app, facts({}), argocd(3, 4, 0), {})
	v == {{
		"msg": "Application operators sets Force=true in spec.syncPolicy.syncOptions, but no Argo CD release reads it there (controller/sync.go takes force from the sync operation's strategy only): objects are applied without --force. Force a single sync (argocd app sync --force, or Force in the UI), or annotate the resources that need it with argocd.argoproj.io/sync-options: Force=true,Replace=true.",
		"path": "/spec/syncPolicy/syncOptions/0",
		"severity": "low",
	}}
}

test_other_kinds_with_a_sync_policy_are_not_applications if {
	rollout := object.union(application({"syncOptions": ["Force=true"]}), {"apiVersion": "example.com/v1", "kind": "Application"})
	count(rule.violations) == 0 with input as review(rollout, facts({}), argocd(3, 0, 0), {})
	count(rule.violations) == 0 with input as review(application({"syncOptions": "Force=true"}), facts({}), argocd(3, 0, 0), {})
}

# ---- 3. resource annotations ----

deployment(options) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "web", "namespace": "shop", "annotations": {"argocd.argoproj.io/sync-options": options}},
}

annotated(items) := facts({"sync_options": {"items": items, "unknown": []}})

test_app_level_options_do_nothing_on_a_resource if {
	v := rule.violations with input as review(deployment("CreateNamespace=true,PrunePropagationPolicy=orphan"), annotated(["CreateNamespace=true", "PrunePropagationPolicy=orphan"]), argocd(3, 4, 0), {})
	v == {
		{
			"msg": "Deployment shop/web: CreateNamespace=true in argocd.argoproj.io/sync-options does nothing on a resource: Argo CD reads it only from the Application's spec.syncPolicy.syncOptions. Move it there, or remove it.",
			"path": "/metadata/annotations/argocd.argoproj.io~1sync-options",
			"severity": "info",
		},
		{
			"msg": "Deployment shop/web: PrunePropagationPolicy=orphan in argocd.argoproj.io/sync-options does nothing on a resource: Argo CD reads it only from the Application's spec.syncPolicy.syncOptions. Move it there, or remove it.",
			"path": "/metadata/annotations/argocd.argoproj.io~1sync-options",
			"severity": "info",
		},
	}
}

test_replace_false_is_never_read if {
	r := review(deployment("Replace=false"), annotated(["Replace=false"]), argocd(3, 4, 0), app_replace)
	some x in rule.violations with input as r
	x.severity == "low"
	x.msg == "Deployment shop/web: Replace=false in argocd.argoproj.io/sync-options does nothing: Argo CD never reads Replace=false, so it cannot turn off Replace=true set in the Application's syncOptions, which applies to this object too. Remove it; to keep this object from being replaced, take Replace=true out of the Application's syncOptions and annotate only the objects that need it."
	some y in rule.violations with input as review(deployment("Replace=false"), annotated(["Replace=false"]), argocd(3, 4, 0), {})
	y.severity == "info"
	contains(y.msg, "so it cannot turn off Replace=true set at the Application level. Remove it;")
}

test_resource_options_before_their_release if {
	r := review(deployment("ServerSideApply=false,Prune=confirm"), annotated(["ServerSideApply=false", "Prune=confirm"]), argocd(2, 13, 4), {})
	v := rule.violations with input as r
	{[x.severity, x.msg] | some x in v} == {
		["low", "Deployment shop/web: ServerSideApply=false in argocd.argoproj.io/sync-options is read on a resource only from Argo CD 2.14.0 (gitops-engine#634); v2.13.4 ignores it, so an Application-level ServerSideApply=true still applies this object server-side. Upgrade Argo CD, or turn ServerSideApply off for the whole Application."],
		["medium", "Deployment shop/web: Prune=confirm in argocd.argoproj.io/sync-options is read on a resource only from Argo CD 2.14.0 (gitops-engine#630); v2.13.4 ignores it, so a sync that prunes deletes this object without waiting for a confirmation. Upgrade Argo CD, or use Prune=false and delete the object by hand when it is time."],
	}
	count(rule.violations) == 0 with input as object.union(r, {"argocd": argocd(2, 14, 0)})
	ssa := review(deployment("ServerSideApply=true"), annotated(["ServerSideApply=true"]), argocd(2, 4, 0), {})
	count(rule.violations) == 1 with input as ssa
	count(rule.violations) == 0 with input as object.union(ssa, {"argocd": argocd(2, 5, 0)})
}

test_ordinary_resource_options_are_fine if {
	r := review(deployment("Prune=false,ServerSideApply=true,Force=true,Replace=true"), annotated(["Prune=false", "ServerSideApply=true", "Force=true", "Replace=true"]), argocd(3, 4, 0), {})
	count(rule.violations) == 0 with input as r
}

# ---- 5. Force=true on a server-side applied object ----

# input.argocd as syncguard builds it: the release plus the release table's answer.
with_force_ignored(version, ignored) := object.union(version, {"behaviours": {"force_with_server_side_apply_ignored": ignored}})

test_force_on_a_server_side_applied_object_fails_before_3_6_and_does_nothing_from_3_6 if {
	own := review(deployment("ServerSideApply=true,Force=true"), annotated(["ServerSideApply=true", "Force=true"]), with_force_ignored(argocd(3, 5, 7), false), {})
	rule.violations == {{
		"msg": "Deployment shop/web: Force=true in argocd.argoproj.io/sync-options on an object applied server-side (its own ServerSideApply=true): Argo CD v3.5.7 passes both to kubectl, which refuses them together (\"--force cannot be used with --server-side\"), so every sync fails to apply this object. Remove Force=true, add Replace=true (the object is then replaced, with force), or set ServerSideApply=false on it; Argo CD 3.6 ignores Force=true here instead.",
		"path": "/metadata/annotations/argocd.argoproj.io~1sync-options",
		"severity": "high",
	}} with input as own
	rule.violations == {{
		"msg": "Deployment shop/web: Force=true in argocd.argoproj.io/sync-options does nothing here: the object is applied server-side (its own ServerSideApply=true), and Argo CD v3.6.0 drops --force for server-side applies (from 3.6), so a change to an immutable field fails the apply instead of re-creating the object. Add Replace=true (Argo CD then replaces the object, with force) or remove Force=true.",
		"path": "/metadata/annotations/argocd.argoproj.io~1sync-options",
		"severity": "low",
	}} with input as object.union(own, {"argocd": with_force_ignored(argocd(3, 6, 0), true)})
	# Without input.argocd.behaviours: the newest release, which ignores it.
	bare := review(deployment("ServerSideApply=true,Force=true"), annotated(["ServerSideApply=true", "Force=true"]), argocd(3, 6, 1), {})
	[x.severity | some x in rule.violations] == ["low"] with input as bare
}

test_force_under_the_applications_server_side_apply if {
	app_ssa := {"app": {"name": "shop", "sync_options": {"items": ["ServerSideApply=true"], "unknown": []}}}
	r := review(deployment("Force=true"), annotated(["Force=true"]), with_force_ignored(argocd(3, 4, 13), false), app_ssa)
	[x.severity | some x in rule.violations] == ["high"] with input as r
	some x in rule.violations with input as r
	contains(x.msg, "(the Application's ServerSideApply=true)")
	# The object opts out of server-side apply, or is replaced: kubectl never sees both.
	count(rule.violations) == 0 with input as review(deployment("Force=true,ServerSideApply=false"), annotated(["Force=true", "ServerSideApply=false"]), with_force_ignored(argocd(3, 4, 13), false), app_ssa)
	count(rule.violations) == 0 with input as review(deployment("Force=true,Replace=true"), annotated(["Force=true", "Replace=true"]), with_force_ignored(argocd(3, 4, 13), false), app_ssa)
	# Client-side apply: Force=true works as documented.
	count(rule.violations) == 0 with input as review(deployment("Force=true"), annotated(["Force=true"]), with_force_ignored(argocd(3, 4, 13), false), {})
}

# ---- 4. CreateNamespace=true and the AppProject (argo-cd#20233) ----

team_app(sync_policy) := object.union(application(sync_policy), {"spec": {"project": "team-a", "destination": {"namespace": "team-a-web"}}})

config(projects) := {"source": "input", "health_checks": [], "ignore_differences": [], "exclusions": [], "inclusions": [], "projects": projects}

project(whitelist, blacklist) := {
	"cluster_resource_whitelist": whitelist,
	"cluster_resource_blacklist": blacklist,
	"namespace_resource_whitelist": null,
	"namespace_resource_blacklist": [],
	"destinations": [{"server": "https://kubernetes.default.svc", "name": "", "namespace": "team-a-*"}],
}

with_config(version, projects) := object.union(version, {"config": config(projects)})

create_ns := {"syncOptions": ["CreateNamespace=true"]}

test_create_namespace_in_a_project_without_cluster_resources if {
	r := review(team_app(create_ns), facts({}), with_config(v3_2_11, {"team-a": project([], [])}), {})
	v := rule.violations with input as r
	v == {{
		"msg": "Application operators sets CreateNamespace=true, but its AppProject team-a does not permit the cluster-scoped Namespace kind (its spec.clusterResourceWhitelist is empty, which permits no cluster-scoped kind): whenever namespace team-a-web does not exist yet (the first sync, or after it was deleted), Argo CD adds a Namespace task, checks it against the project like every other task, and fails the sync before anything is applied with \"resource :Namespace is not permitted in project team-a\" (argo-cd#20233). Add {group: \"\", kind: Namespace} to the project's spec.clusterResourceWhitelist, or create namespace team-a-web another way and drop CreateNamespace=true.",
		"path": "/spec/syncPolicy/syncOptions/0",
		"severity": "high",
		"action": "warn",
	}}
}

test_managed_namespace_metadata_makes_every_sync_fail if {
	policy := object.union(create_ns, {"managedNamespaceMetadata": {"labels": {"team": "a"}}})
	r := review(team_app(policy), facts({}), with_config(v3_2_11, {"team-a": project(null, [])}), {})
	some x in rule.violations with input as r
	x.action == "deny"
	contains(x.msg, ": at every sync, because spec.syncPolicy.managedNamespaceMetadata is set, Argo CD syncs namespace team-a-web, Argo CD adds a Namespace task")
}

test_whitelists_that_permit_namespaces if {
	permits := [
		[{"group": "", "kind": "Namespace"}],
		[{"group": "*", "kind": "*"}],
		[{"group": "apps", "kind": "*"}, {"group": "", "kind": "Namespace", "name": ""}],
	]
	every wl in permits {
		r := review(team_app(create_ns), facts({}), with_config(v3_2_11, {"team-a": project(wl, [])}), {})
		count(rule.violations) == 0 with input as r
	}
}

test_a_whitelist_that_does_not_list_namespaces if {
	wl := [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole"}, {"group": "", "kind": "PersistentVolume"}]
	r := review(team_app(create_ns), facts({}), with_config(v3_2_11, {"team-a": project(wl, [])}), {})
	some x in rule.violations with input as r
	contains(x.msg, "(its spec.clusterResourceWhitelist does not list it)")
}

test_a_blacklisted_namespace if {
	r := review(team_app(create_ns), facts({}), with_config(v3_2_11, {"team-a": project([{"group": "*", "kind": "*"}], [{"group": "", "kind": "Namespace"}])}), {})
	some x in rule.violations with input as r
	contains(x.msg, "(its spec.clusterResourceBlacklist lists it)")
}

test_patterns_this_rule_cannot_judge_say_nothing if {
	wl := [{"group": "", "kind": "Name*"}]
	r := review(team_app(create_ns), facts({}), with_config(v3_2_11, {"team-a": project(wl, [])}), {})
	count(rule.violations) == 0 with input as r
}

# Names in cluster-resource entries count from Argo CD 3.3.
test_named_whitelist_entries_from_3_3 if {
	other := [{"group": "", "kind": "Namespace", "name": "team-b"}]
	globbed := [{"group": "", "kind": "Namespace", "name": "team-a-*"}]
	count(rule.violations) == 0 with input as review(team_app(create_ns), facts({}), with_config(v3_2_11, {"team-a": project(other, [])}), {})
	some x in rule.violations with input as review(team_app(create_ns), facts({}), with_config(argocd(3, 3, 0), {"team-a": project(other, [])}), {})
	contains(x.msg, "(its spec.clusterResourceWhitelist does not list it)")
	count(rule.violations) == 0 with input as review(team_app(create_ns), facts({}), with_config(argocd(3, 4, 0), {"team-a": project(globbed, [])}), {})
}

test_unknown_projects_and_missing_configuration_say_nothing if {
	count(rule.violations) == 0 with input as review(team_app(create_ns), facts({}), with_config(v3_2_11, {"team-b": project([], [])}), {})
	no_source := object.union(v3_2_11, {"config": {"source": "none", "projects": {"team-a": project([], [])}}})
	count(rule.violations) == 0 with input as review(team_app(create_ns), facts({}), no_source, {})
	count(rule.violations) == 0 with input as review(team_app(create_ns), facts({}), v3_2_11, {})
}

test_an_empty_project_is_the_default_project if {
	app := json.patch(team_app(create_ns), [{"op": "remove", "path": "/spec/project"}])
	some x in rule.violations with input as review(app, facts({}), with_config(v3_2_11, {"default": project([], [])}), {})
	contains(x.msg, "but its AppProject default does not permit")
}

test_no_destination_namespace_no_namespace_task if {
	app := json.patch(team_app(create_ns), [{"op": "remove", "path": "/spec/destination/namespace"}])
	count(rule.violations) == 0 with input as review(app, facts({}), with_config(v3_2_11, {"team-a": project([], [])}), {})
}

test_a_deletion_is_never_judged if {
	r := object.union(review(admission_binding({}), hook_facts([]), v3_2_11, app_replace), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	bad_app := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "x"}, "spec": {"syncPolicy": {"syncOptions": [3, "CreateNamespace=true"]}, "destination": "x"}}
	count(rule.violations) == 0 with input as {"resource": bad_app, "argocd": "3.2", "sync": []}
	r := review(bad_app, {"sync_options": "Replace=true"}, {"release": "302", "config": {"source": "input", "projects": {"default": "x"}}}, {"app": "x"})
	count(rule.violations) == 0 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG119"
	rule.meta.severity == "high"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG119.md"
}
