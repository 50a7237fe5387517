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

test_a_certificate_without_its_crd_is_reported if {
	v := rule.violations with input as review(certificate, facts([]), [namespace_ref, crd_ref("missing")], "check")
	v == {{"msg": certificate_msg, "path": "/apiVersion"}}
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
