# Tests for SG203 (policies/custom_resource_without_crd.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md (input.refs[].target, input.app).
package syncguard.rules.custom_resource_without_crd_test

import data.syncguard.rules.custom_resource_without_crd as rule

certificate := {
	"apiVersion": "cert-manager.io/v1",
	"kind": "Certificate",
	"metadata": {"name": "svc-foo-tls", "namespace": "app-foo"},
	"spec": {
		"secretName": "svc-foo-tls",
		"dnsNames": ["foo.example.com"],
		"issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
	},
}

facts(options) := {
	"phases": ["Sync"],
	"is_hook": false,
	"hook_types": [],
	"wave": 0,
	"sync_options": {"items": options, "unknown": []},
}

crd_ref(resolution) := {
	"kind": "CustomResourceDefinition",
	"group": "apiextensions.k8s.io",
	"name": "Certificate.cert-manager.io",
	"namespace": null,
	"via": "/apiVersion",
	"optional": false,
	"role": "definition",
	"target": {"resolution": resolution, "tasks": []},
}

namespace_ref := {
	"kind": "Namespace", "group": "", "name": "app-foo", "namespace": null, "via": "/metadata/namespace",
	"optional": false, "role": "namespace", "target": {"resolution": "missing"},
}

app(options) := {
	"name": "svc-foo",
	"destination_namespace": "app-foo",
	"sync_options": {"items": options, "unknown": []},
	"automated": true,
	"self_heal": true,
	"auto_prune": false,
	"ignore_differences": [],
}

review(resource, sync, refs, source) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": sync,
	"refs": refs,
	"dependents": [],
	"app": app([]),
	"context": {"source": source, "dry_run": false},
}

certificate_msg := concat("", [
	"Certificate app-foo/svc-foo-tls needs the CRD for cert-manager.io/Certificate, which is not in this Application: ",
	"if that CRD is not installed in the cluster when Argo CD syncs, the dry-run of this object fails and the whole sync stops ",
	"with \"one or more synchronization tasks are not valid\" (nothing is applied). ",
	"Ship the CRD in this Application (Argo CD applies it first); or, if another Application installs it, ",
	"make sure that one syncs first (a lower sync-wave in the app-of-apps) and exempt this object; ",
	"or add SkipDryRunOnMissingResource=true (argocd.argoproj.io/sync-options on this object, or the Application's syncOptions) ",
	"when the CRD is created during the sync, before this object's wave.",
])

# Judged alone, a CRD that is not in the Application usually comes from another Application or
# the platform: recorded at info (nothing to act on), with the condition in its first sentence.
test_a_certificate_without_its_crd_is_reported if {
	v := rule.violations with input as review(certificate, facts([]), [namespace_ref, crd_ref("missing")], "check")
	v == {{"msg": certificate_msg, "path": "/apiVersion", "severity": "info"}}
}

certificate_repository_msg := concat("", [
	"Certificate app-foo/svc-foo-tls needs the CRD for cert-manager.io/Certificate, which no Application of this repository renders: ",
	"unless the cluster's platform installs it before Argo CD syncs, the dry-run of this object fails and the whole sync stops ",
	"with \"one or more synchronization tasks are not valid\" (nothing is applied). ",
	"Ship the CRD in this Application (Argo CD applies it first), or in an Application that syncs first (a lower sync-wave in the app-of-apps); ",
	"or add SkipDryRunOnMissingResource=true (argocd.argoproj.io/sync-options on this object, or the Application's syncOptions) ",
	"when the CRD is created during the sync, before this object's wave.",
])

# With the whole repository in the input (review, several Applications), nobody rendering the
# CRD is known: the rule's own medium warning, saying so.
test_a_crd_no_application_of_the_repository_renders_warns if {
	r := review(certificate, facts([]), [namespace_ref, crd_ref("missing")], "check")
	v := rule.violations with input as object.union(r, {"context": {"source": "check", "dry_run": false, "repository": true}})
	v == {{"msg": certificate_repository_msg, "path": "/apiVersion"}}
}

test_the_crd_in_the_same_application_is_fine if {
	count(rule.violations) == 0 with input as review(certificate, facts([]), [crd_ref("in_set")], "check")
}

test_skip_dry_run_on_the_object_is_fine if {
	r := review(certificate, facts(["SkipDryRunOnMissingResource=true"]), [crd_ref("missing")], "check")
	count(rule.violations) == 0 with input as r
}

test_skip_dry_run_on_the_application_is_fine if {
	r := object.union(review(certificate, facts([]), [crd_ref("missing")], "check"), {"app": app(["CreateNamespace=true", "SkipDryRunOnMissingResource=true"])})
	count(rule.violations) == 0 with input as r
}

test_a_misspelt_or_false_option_does_not_count if {
	r := review(certificate, facts(["SkipDryRunOnMissingResource=false", "skipDryRunOnMissingResource=true"]), [crd_ref("missing")], "check")
	count(rule.violations) == 1 with input as r
}

test_without_an_application_the_object_option_is_all_that_counts if {
	r := object.remove(review(certificate, facts([]), [crd_ref("missing")], "check"), ["app"])
	count(rule.violations) == 1 with input as r
}

test_admission_and_audit_see_only_kinds_the_api_server_serves if {
	count(rule.violations) == 0 with input as review(certificate, facts([]), [crd_ref("missing")], "admission")
	count(rule.violations) == 0 with input as review(certificate, facts([]), [crd_ref("missing")], "audit")
}

test_without_a_context_the_manifest_is_judged if {
	r := object.remove(review(certificate, facts([]), [crd_ref("missing")], "check"), ["context"])
	count(rule.violations) == 1 with input as r
	count(rule.violations) == 1 with input as object.union(r, {"context": "x"})
}

test_argo_cd_kinds_are_installed_with_argo_cd if {
	child := {
		"apiVersion": "argoproj.io/v1alpha1",
		"kind": "Application",
		"metadata": {"name": "svc-foo", "namespace": "argocd"},
		"spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc", "namespace": "app-foo"}},
	}
	ref := object.union(crd_ref("missing"), {"name": "Application.argoproj.io"})
	count(rule.violations) == 0 with input as review(child, facts([]), [ref], "check")
}

test_an_argo_rollout_is_not_installed_with_argo_cd if {
	rollout := {
		"apiVersion": "argoproj.io/v1alpha1",
		"kind": "Rollout",
		"metadata": {"name": "svc-foo", "namespace": "app-foo"},
		"spec": {"workloadRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "svc-foo"}},
	}
	ref := object.union(crd_ref("missing"), {"name": "Rollout.argoproj.io"})
	v := rule.violations with input as review(rollout, facts([]), [ref], "check")
	count(v) == 1
	some x in v
	startswith(x.msg, "Rollout app-foo/svc-foo needs the CRD for argoproj.io/Rollout, which is not in this Application:")
}

test_builtin_and_unknown_definitions_are_not_reported if {
	count(rule.violations) == 0 with input as review(certificate, facts([]), [crd_ref("builtin")], "check")
	count(rule.violations) == 0 with input as review(certificate, facts([]), [crd_ref("unknown")], "check")
}

test_an_object_argo_cd_never_applies_is_not_reported if {
	skipped := object.union(facts([]), {"phases": [], "skip": true, "ignored": {"reason": "skip"}})
	count(rule.violations) == 0 with input as review(certificate, skipped, [crd_ref("missing")], "check")
}

test_a_deletion_is_never_judged if {
	r := object.union(review(certificate, facts([]), [crd_ref("missing")], "check"), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": "x", "sync": {"phases": "Sync", "sync_options": "x"}, "refs": "x", "app": [], "context": "x"}
	r := review(certificate, {"phases": ["Sync"], "sync_options": {"items": "x"}}, [1, {"role": "definition"}, {"role": "definition", "target": "x"}], "check")
	count(rule.violations) == 0 with input as object.union(r, {"app": {"sync_options": []}})
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG203"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG203.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}

# ---- Application-level SkipDryRunOnMissingResource: honoured from Argo CD 3.1.0 (argo-cd#22679) ----

argocd(minor) := {"version": sprintf("3.%d", [minor]), "major": 3, "minor": minor, "release": 300 + minor, "number": 30099 + (100 * minor)}

with_app_skip(minor) := object.union(
	review(certificate, facts([]), [crd_ref("missing")], "check"),
	{"app": app(["SkipDryRunOnMissingResource=true"]), "argocd": argocd(minor)},
)

test_the_application_level_option_counts_from_argo_cd_3_1 if {
	count(rule.violations) == 0 with input as with_app_skip(1)
	count(rule.violations) == 0 with input as with_app_skip(4)
}

test_before_argo_cd_3_1_the_application_level_option_is_ignored if {
	v := rule.violations with input as with_app_skip(0)
	count(v) == 1
	some x in v
	contains(x.msg, "or add SkipDryRunOnMissingResource=true (argocd.argoproj.io/sync-options on this object; Argo CD before 3.1 ignores it in the Application's syncOptions) when the CRD")
	endswith(x.msg, " The Application's syncOptions set SkipDryRunOnMissingResource=true, but Argo CD before 3.1 reads that option only from the object's own annotation (Application-level support arrived in v3.1.0, argo-cd#22679).")
}

test_before_argo_cd_3_1_the_object_option_still_counts if {
	r := object.union(review(certificate, facts(["SkipDryRunOnMissingResource=true"]), [crd_ref("missing")], "check"), {"argocd": argocd(0)})
	count(rule.violations) == 0 with input as r
}

test_before_argo_cd_3_1_without_any_option_the_fix_names_only_the_annotation if {
	r := object.union(review(certificate, facts([]), [crd_ref("missing")], "check"), {"argocd": argocd(0)})
	v := rule.violations with input as r
	some x in v
	contains(x.msg, "Argo CD before 3.1 ignores it in the Application's syncOptions) when the CRD is created during the sync, before this object's wave.")
	not contains(x.msg, "The Application's syncOptions set")
}

# ---- kinds whose CRD a controller creates at runtime ----

constraint := {
	"apiVersion": "constraints.gatekeeper.sh/v1beta1",
	"kind": "K8sRequiredLabels",
	"metadata": {"name": "ns-must-have-owner"},
	"spec": {"match": {"kinds": [{"apiGroups": [""], "kinds": ["Namespace"]}]}, "parameters": {"labels": ["owner"]}},
}

constraint_ref := object.union(crd_ref("missing"), {"name": "K8sRequiredLabels.constraints.gatekeeper.sh"})

constraint_msg := concat("", [
	"K8sRequiredLabels ns-must-have-owner is a constraints.gatekeeper.sh/K8sRequiredLabels, whose CRD Gatekeeper creates at runtime from the ConstraintTemplate that defines this kind, ",
	"so no Application can ship it. Where that has not happened yet when Argo CD syncs (a new cluster, or the object that makes it appear is in this same sync), ",
	"the dry-run of this object fails with \"the server could not find the requested resource\" and the whole sync stops with \"one or more synchronization tasks are not valid\" ",
	"before anything is applied, that object included, so retrying never gets past it. ",
	"Fix: add SkipDryRunOnMissingResource=true (argocd.argoproj.io/sync-options on this object, or the Application's syncOptions), ",
	"give this object a sync-wave after whatever makes the CRD appear, and give the Application a syncPolicy.retry: until the CRD exists the apply of this object still fails.",
])

test_a_gatekeeper_constraint_gets_the_runtime_crd_advice if {
	v := rule.violations with input as review(constraint, facts([]), [constraint_ref], "check")
	v == {{"msg": constraint_msg, "path": "/apiVersion"}}
}

test_a_gatekeeper_constraint_with_the_skip_option_is_fine if {
	count(rule.violations) == 0 with input as review(constraint, facts(["SkipDryRunOnMissingResource=true"]), [constraint_ref], "check")
}

test_a_gatekeeper_constraint_template_itself_is_a_shipped_crd if {
	template := {"apiVersion": "templates.gatekeeper.sh/v1", "kind": "ConstraintTemplate", "metadata": {"name": "k8srequiredlabels"}, "spec": {}}
	v := rule.violations with input as review(template, facts([]), [crd_ref("missing")], "check")
	some x in v
	contains(x.msg, "needs the CRD for templates.gatekeeper.sh/ConstraintTemplate, which is not in this Application")
}

provider_kind(api_version, kind) := {"apiVersion": api_version, "kind": kind, "metadata": {"name": "assets"}, "spec": {"forProvider": {"region": "eu-west-1"}}}

test_crossplane_provider_kinds_get_the_runtime_crd_advice if {
	every api in ["s3.aws.upbound.io/v1beta1", "s3.aws.m.upbound.io/v1beta1", "s3.m.aws.upbound.io/v1beta1", "aws.upbound.io/v1beta1", "storage.gcp.upbound.io/v1beta1", "kubernetes.crossplane.io/v1alpha2", "s3.aws.crossplane.io/v1beta1"] {
		v := rule.violations with input as review(provider_kind(api, "Bucket"), facts([]), [crd_ref("missing")], "check")
		count(v) == 1
		some x in v
		contains(x.msg, "whose CRD Crossplane's package manager installs at runtime from the Provider package that defines this kind, so no Application can ship it.")
	}
}

test_crossplane_own_kinds_ship_with_crossplane if {
	every api in ["pkg.crossplane.io/v1", "apiextensions.crossplane.io/v1", "protection.crossplane.io/v1beta1", "ops.crossplane.io/v1alpha1", "secrets.crossplane.io/v1alpha1", "daytwo.crossplane.io/v1alpha1"] {
		v := rule.violations with input as review(provider_kind(api, "Provider"), facts([]), [crd_ref("missing")], "check")
		count(v) == 1
		some x in v
		contains(x.msg, "which is not in this Application: if that CRD is not installed")
	}
}

test_groups_that_only_look_like_provider_groups_are_not_runtime_installed if {
	every api in ["spaces.upbound.io/v1beta1", "notaws.upbound.io/v1", "crossplane.io.example.com/v1", "gatekeeper.sh/v1"] {
		v := rule.violations with input as review(provider_kind(api, "Thing"), facts([]), [crd_ref("missing")], "check")
		count(v) == 1
		some x in v
		not contains(x.msg, "at runtime")
	}
}

# ---- the CRD is in the Application but does not serve the object's version ----

old_certificate := object.union(certificate, {"apiVersion": "cert-manager.io/v1alpha2"})

crd_in_set(versions) := object.union(crd_ref("in_set"), {"target": {
	"resolution": "in_set", "kind": "CustomResourceDefinition", "group": "apiextensions.k8s.io",
	"name": "certificates.cert-manager.io", "namespace": null, "phases": ["Sync"], "wave": 0,
	"is_hook": false, "tasks": [{"phase": "Sync", "wave": 0, "step": 0, "gated": false, "final": true}],
	"versions": versions,
}})

v1_only := [{"name": "v1", "served": true, "storage": true}]

version_msg := concat("", [
	"Certificate app-foo/svc-foo-tls is written for cert-manager.io/v1alpha2, but the CRD for cert-manager.io/Certificate in this Application ",
	"(CustomResourceDefinition certificates.cert-manager.io) does not define v1alpha2, and serves only v1. ",
	"Argo CD matches a CRD to its objects by group and kind only, so it skips this object's dry-run, applies the CRD, and then applying this object fails, ",
	"because the API server serves no cert-manager.io/v1alpha2 (an error such as \"no matches for kind \"Certificate\" in version \"cert-manager.io/v1alpha2\"\"). ",
	"The operation ends with \"one or more objects failed to apply\" after the earlier steps were applied, and every retry fails the same way. ",
	"Fix: write this object for a served version (apiVersion: cert-manager.io/v1, converting its fields if the schema changed), or serve v1alpha2 in the CRD again.",
])

test_a_version_the_crd_does_not_define_is_denied if {
	v := rule.violations with input as review(old_certificate, facts([]), [crd_in_set(v1_only)], "check")
	v == {{"msg": version_msg, "path": "/apiVersion", "severity": "high", "action": "deny"}}
}

test_a_version_listed_with_served_false_is_denied if {
	versions := [
		{"name": "v1alpha2", "served": false, "storage": false},
		{"name": "v1beta1", "served": true, "storage": false},
		{"name": "v1", "served": true, "storage": true},
	]
	v := rule.violations with input as review(old_certificate, facts([]), [crd_in_set(versions)], "check")
	count(v) == 1
	some x in v
	contains(x.msg, "(CustomResourceDefinition certificates.cert-manager.io) lists v1alpha2 with served: false, and serves only v1, v1beta1.")
	contains(x.msg, "(apiVersion: cert-manager.io/v1, converting")
}

test_a_crd_serving_nothing_asks_to_serve_the_version if {
	v := rule.violations with input as review(old_certificate, facts([]), [crd_in_set([{"name": "v1alpha2", "served": false, "storage": true}])], "check")
	some x in v
	contains(x.msg, "lists v1alpha2 with served: false, and serves no version at all.")
	endswith(x.msg, "Fix: serve v1alpha2 in the CRD (served: true), or stop shipping this object.")
}

test_without_a_served_storage_version_the_fix_names_the_first_served_one if {
	versions := [{"name": "v1beta1", "served": true, "storage": false}, {"name": "v1", "served": true, "storage": false}]
	v := rule.violations with input as review(old_certificate, facts([]), [crd_in_set(versions)], "check")
	some x in v
	contains(x.msg, "(apiVersion: cert-manager.io/v1, converting")
}

test_a_served_version_is_fine if {
	count(rule.violations) == 0 with input as review(certificate, facts([]), [crd_in_set(v1_only)], "check")
	both := [{"name": "v1alpha2", "served": true, "storage": false}, {"name": "v1", "served": true, "storage": true}]
	count(rule.violations) == 0 with input as review(old_certificate, facts([]), [crd_in_set(both)], "check")
}

test_skip_dry_run_does_not_save_an_unserved_version if {
	r := object.union(review(old_certificate, facts(["SkipDryRunOnMissingResource=true"]), [crd_in_set(v1_only)], "check"), {"app": app(["SkipDryRunOnMissingResource=true"])})
	count(rule.violations) == 1 with input as r
}

test_unknown_versions_are_not_judged if {
	# absent fact (older syncguard), [] (not resolved in_set), malformed entries
	count(rule.violations) == 0 with input as review(old_certificate, facts([]), [crd_ref("in_set")], "check")
	count(rule.violations) == 0 with input as review(old_certificate, facts([]), [crd_in_set([])], "check")
	count(rule.violations) == 0 with input as review(old_certificate, facts([]), [crd_in_set("x")], "check")
	count(rule.violations) == 0 with input as review(old_certificate, facts([]), [crd_in_set([1, {"served": true}])], "check")
}

test_admission_and_audit_never_see_an_unserved_version if {
	count(rule.violations) == 0 with input as review(old_certificate, facts([]), [crd_in_set(v1_only)], "admission")
	count(rule.violations) == 0 with input as review(old_certificate, facts([]), [crd_in_set(v1_only)], "audit")
}

test_an_object_argo_cd_never_applies_is_not_judged_for_its_version if {
	skipped := object.union(facts([]), {"phases": [], "skip": true, "ignored": {"reason": "skip"}})
	count(rule.violations) == 0 with input as review(old_certificate, skipped, [crd_in_set(v1_only)], "check")
}

# ---- check --require-crds: the CRD is known not to be installed ----

require_crds(r) := object.union(r, {"context": {"source": "check", "dry_run": false, "require_crds": true}})

certificate_certain_msg := concat("", [
	"Certificate app-foo/svc-foo-tls needs the CRD for cert-manager.io/Certificate, which is neither in this Application ",
	"nor installed in the cluster (--require-crds declares that only the CRDs in the input exist). ",
	"The dry-run of this object fails, and Argo CD refuses the whole sync with \"one or more synchronization tasks are not valid\" (nothing is applied). ",
	"Ship the CRD in this Application (Argo CD applies it first); or have another Application install it before this one syncs ",
	"(a lower sync-wave in the app-of-apps); ",
	"or add SkipDryRunOnMissingResource=true (argocd.argoproj.io/sync-options on this object, or the Application's syncOptions) ",
	"when the CRD is created during the sync, before this object's wave.",
])

test_with_require_crds_a_missing_crd_is_a_certain_denial if {
	r := require_crds(review(certificate, facts([]), [namespace_ref, crd_ref("missing")], "check"))
	v := rule.violations with input as r
	v == {{"msg": certificate_certain_msg, "path": "/apiVersion", "severity": "high", "action": "deny"}}
	some x in v
	not contains(x.msg, "if that CRD is not installed")
}

test_require_crds_false_or_absent_keeps_the_warning if {
	r := review(certificate, facts([]), [crd_ref("missing")], "check")
	v := rule.violations with input as object.union(r, {"context": {"source": "check", "dry_run": false, "require_crds": false}})
	v == {{"msg": certificate_msg, "path": "/apiVersion", "severity": "info"}}
	rule.violations == v with input as r
}

test_with_require_crds_the_skip_option_or_a_shipped_crd_is_still_fine if {
	count(rule.violations) == 0 with input as require_crds(review(certificate, facts(["SkipDryRunOnMissingResource=true"]), [crd_ref("missing")], "check"))
	count(rule.violations) == 0 with input as require_crds(review(certificate, facts([]), [crd_ref("in_set")], "check"))
}

test_with_require_crds_a_runtime_created_crd_is_a_certain_denial_too if {
	v := rule.violations with input as require_crds(review(constraint, facts([]), [constraint_ref], "check"))
	count(v) == 1
	some x in v
	x.action == "deny"
	x.severity == "high"
	startswith(x.msg, "K8sRequiredLabels ns-must-have-owner is a constraints.gatekeeper.sh/K8sRequiredLabels, whose CRD Gatekeeper creates at runtime from the ConstraintTemplate that defines this kind, so no Application can ship it, and the cluster does not have it (--require-crds declares that only the CRDs in the input exist).")
	contains(x.msg, "Argo CD refuses the whole sync")
}

# 4. The CRD is installed by another Application of the input.
other_app_ref(order) := object.union(crd_ref("other_app"), {"target": {"resolution": "other_app", "app": "platform-crds", "order": order}})

test_a_crd_from_an_application_synced_first_is_fine if {
	r := review(certificate, facts([]), [other_app_ref("before")], "check")
	count(rule.violations) == 0 with input as r
}

test_a_crd_from_an_application_synced_later_is_medium_and_names_it if {
	r := review(certificate, facts([]), [other_app_ref("after")], "check")
	v := rule.violations with input as r
	count(v) == 1
	some f in v
	f.severity == "medium"
	f.path == "/apiVersion"
	contains(f.msg, "Application platform-crds installs it, and the app-of-apps syncs that Application after this one")
	contains(f.msg, "give that Application a lower sync-wave than this one")
}

test_a_crd_from_a_later_wave_nobody_waits_for_is_low if {
	v := rule.violations with input as review(certificate, facts([]), [other_app_ref("after_unwaited")], "check")
	{f.severity | some f in v} == {"low"}
	some f in v
	contains(f.msg, "applies both waves at once")
}

test_a_crd_from_an_application_of_the_same_wave_is_low if {
	v := rule.violations with input as review(certificate, facts([]), [other_app_ref("same_wave")], "check")
	{f.severity | some f in v} == {"low"}
}

test_a_crd_from_an_application_in_no_known_order_is_info if {
	v := rule.violations with input as review(certificate, facts([]), [other_app_ref("unknown")], "check")
	{f.severity | some f in v} == {"info"}
	some f in v
	contains(f.msg, "nothing, if that Application is synced first already")
}

test_a_crd_from_another_application_with_skip_dry_run_is_fine if {
	r := review(certificate, facts(["SkipDryRunOnMissingResource=true"]), [other_app_ref("after")], "check")
	count(rule.violations) == 0 with input as r
}

test_a_crd_from_an_earlier_wave_nobody_waits_for_is_low_and_says_why if {
	v := rule.violations with input as review(certificate, facts([]), [other_app_ref("before_unwaited")], "check")
	{f.severity | some f in v} == {"low"}
	some f in v
	contains(f.msg, "argocd-cm gives Applications no health check")
	contains(f.msg, "add the Application health check to argocd-cm")
}
