# Tests for SG303 (policies/ignore_differences_too_broad.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses.
package syncguard.rules.ignore_differences_too_broad_test

import data.syncguard.rules.ignore_differences_too_broad as rule

shop(ignore, sync_policy) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": {
		"project": "default",
		"source": {"repoURL": "https://git.example.com/shop/deploy.git", "path": "overlays/prod", "targetRevision": "main"},
		"destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
		"ignoreDifferences": ignore,
		"syncPolicy": sync_policy,
	},
}

manual := {"syncOptions": ["CreateNamespace=true"]}

automated_respecting := {
	"automated": {"prune": true, "selfHeal": true},
	"syncOptions": ["CreateNamespace=true", "RespectIgnoreDifferences=true"],
}

replicas_entry := {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/replicas"]}

review(resource) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": {"phases": ["Sync"], "is_hook": false, "hook_types": [], "wave": 0},
	"context": {"source": "check", "dry_run": false},
}

test_a_narrow_entry_with_respect_ignore_differences_is_fine if {
	webhook := {"group": "admissionregistration.k8s.io", "kind": "MutatingWebhookConfiguration", "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle"]}
	istio := {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/template/metadata/annotations/sidecar.istio.io~1status"]}
	count(rule.violations) == 0 with input as review(shop([replicas_entry, webhook, istio], automated_respecting))
}

test_ignoring_every_annotation_is_too_broad if {
	entry := {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas", "/metadata/annotations"]}
	v := rule.violations with input as review(shop([entry], automated_respecting))
	v == {{
		"msg": concat("", [
			"Application argocd/shop ignores every annotation of apps/Deployment: ",
			"spec.ignoreDifferences[0] (/metadata/annotations) hides every difference there, ",
			"so Argo CD reports Synced while the cluster differs from Git, and auto-sync never corrects it. ",
			"Ignore only the field that drifts (one annotation key, /spec/replicas, a webhook's caBundle), ",
			"or use managedFieldsManagers to ignore only what the controller that changes it owns.",
		]),
		"path": "/spec/ignoreDifferences/0/jsonPointers/1",
	}}
}

test_the_seed_004_jq_example_is_too_broad if {
	# Seed 004 suggests it for injected sidecar annotations, and warns that it hides real changes.
	entry := {"group": "apps", "kind": "Deployment", "jqPathExpressions": [" .spec.template.metadata.annotations "]}
	v := rule.violations with input as review(shop([replicas_entry, entry], automated_respecting))
	count(v) == 1
	some x in v
	x.path == "/spec/ignoreDifferences/1/jqPathExpressions/0"
	startswith(x.msg, "Application argocd/shop ignores every pod template annotation of apps/Deployment: spec.ignoreDifferences[1] (.spec.template.metadata.annotations) hides every difference there,")
}

test_whole_blocks_are_reported_one_by_one if {
	entry := {
		"group": "*",
		"kind": "*",
		"jsonPointers": ["/spec", "/metadata/labels", "/spec/template/spec/containers", "/status"],
		"jqPathExpressions": [".", ".spec.template.spec.containers[]", ".spec.template.spec.containers[] | select(.name == \"istio-proxy\")"],
	}
	v := rule.violations with input as review(shop([entry], automated_respecting))
	{x.path | some x in v} == {
		"/spec/ignoreDifferences/0/jsonPointers/0",
		"/spec/ignoreDifferences/0/jsonPointers/1",
		"/spec/ignoreDifferences/0/jsonPointers/2",
		"/spec/ignoreDifferences/0/jqPathExpressions/0",
		"/spec/ignoreDifferences/0/jqPathExpressions/1",
	}
	some x in v
	x.path == "/spec/ignoreDifferences/0/jsonPointers/0"
	startswith(x.msg, "Application argocd/shop ignores the whole spec of every resource: spec.ignoreDifferences[0] (/spec) hides")
}

test_a_secrets_data_is_too_broad_and_names_the_object if {
	entry := {"kind": "Secret", "name": "shop-tls", "jsonPointers": ["/data"]}
	v := rule.violations with input as review(shop([entry], automated_respecting))
	count(v) == 1
	some x in v
	x.path == "/spec/ignoreDifferences/0/jsonPointers/0"
	startswith(x.msg, "Application argocd/shop ignores all the data of Secret shop-tls:")
}

test_an_entry_without_a_group_for_a_deployment_matches_nothing if {
	entry := object.remove(replicas_entry, ["group"])
	v := rule.violations with input as review(shop([entry], automated_respecting))
	v == {{
		"msg": concat("", [
			"Application argocd/shop has an ignoreDifferences entry for kind Deployment without a group: ",
			"Argo CD matches the group as a glob and an empty one matches only the core API group, ",
			"so spec.ignoreDifferences[0] never matches a Deployment and the drift it was written for still shows. Add group: apps.",
		]),
		"path": "/spec/ignoreDifferences/0",
	}}
}

test_core_kinds_and_globs_need_no_group if {
	entries := [
		{"kind": "ConfigMap", "name": "shop-flags", "jsonPointers": ["/data/last-reload"]},
		{"kind": "*", "jsonPointers": ["/metadata/annotations/example.com~1stamp"]},
	]
	count(rule.violations) == 0 with input as review(shop(entries, automated_respecting))
}

test_an_unknown_kind_without_a_group_gets_a_generic_fix if {
	entry := {"kind": "VirtualService", "jsonPointers": ["/spec/http/0/route/0/weight"]}
	v := rule.violations with input as review(shop([entry], automated_respecting))
	count(v) == 1
	some x in v
	endswith(x.msg, "never matches a VirtualService and the drift it was written for still shows. Add the API group of VirtualService (group: \"*\" matches any).")
}

test_an_entry_without_a_kind_matches_nothing if {
	entry := {"group": "apps", "jsonPointers": ["/spec/replicas"]}
	v := rule.violations with input as review(shop([replicas_entry, entry], automated_respecting))
	v == {{
		"msg": "Application argocd/shop has an ignoreDifferences entry without a kind: Argo CD matches kind as a glob and an empty one matches no resource, so spec.ignoreDifferences[1] never applies and the drift it was written for still shows. Set kind and group (\"*\" matches every one).",
		"path": "/spec/ignoreDifferences/1",
	}}
}

test_automated_sync_without_respect_ignore_differences if {
	policy := {"automated": {"prune": true, "selfHeal": true}, "syncOptions": ["CreateNamespace=true"]}
	v := rule.violations with input as review(shop([replicas_entry], policy))
	v == {{
		"msg": concat("", [
			"Application argocd/shop is auto-synced with ignoreDifferences but without RespectIgnoreDifferences=true: ",
			"ignoreDifferences only changes the comparison, and every automated sync still applies the ignored fields from Git, ",
			"overwriting what the controller set (replica counts, injected caBundles), so the two keep fighting (argo-cd#4912). ",
			"Add RespectIgnoreDifferences=true to spec.syncPolicy.syncOptions.",
		]),
		"path": "/spec/syncPolicy/syncOptions",
	}}
}

test_without_sync_options_the_finding_points_at_automated if {
	v := rule.violations with input as review(shop([replicas_entry], {"automated": {}}))
	{x.path | some x in v} == {"/spec/syncPolicy/automated"}
}

test_manual_or_disabled_automation_needs_no_respect_option if {
	count(rule.violations) == 0 with input as review(shop([replicas_entry], manual))
	count(rule.violations) == 0 with input as review(shop([replicas_entry], {"automated": {"enabled": false}}))
	count(rule.violations) == 0 with input as review(shop([replicas_entry], {"automated": null}))
}

test_automated_without_ignore_differences_is_fine if {
	count(rule.violations) == 0 with input as review(shop([], {"automated": {"selfHeal": true}}))
	count(rule.violations) == 0 with input as review(json.remove(shop([], {"automated": {}}), ["spec/ignoreDifferences"]))
}

test_an_application_set_template_is_checked_at_its_own_paths if {
	appset := {
		"apiVersion": "argoproj.io/v1alpha1",
		"kind": "ApplicationSet",
		"metadata": {"name": "shops", "namespace": "argocd"},
		"spec": {
			"generators": [{"list": {"elements": [{"env": "prod"}]}}],
			"template": {
				"metadata": {"name": "shop-{{env}}"},
				"spec": {
					"project": "default",
					"ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec"]}],
					"syncPolicy": {"automated": {"selfHeal": true}},
				},
			},
		},
	}
	v := rule.violations with input as review(appset)
	{x.path | some x in v} == {"/spec/template/spec/ignoreDifferences/0/jsonPointers/0", "/spec/template/spec/syncPolicy/automated"}
	some x in v
	x.path == "/spec/template/spec/syncPolicy/automated"
	endswith(x.msg, "Add RespectIgnoreDifferences=true to spec.template.spec.syncPolicy.syncOptions.")
}

test_other_kinds_and_groups_are_not_judged if {
	cm := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "spec": {"ignoreDifferences": [{"jsonPointers": ["/spec"]}]}}
	count(rule.violations) == 0 with input as review(cm)
	other := object.union(shop([{"jsonPointers": ["/spec"]}], {}), {"apiVersion": "example.com/v1"})
	count(rule.violations) == 0 with input as review(other)
}

test_a_deletion_is_never_judged if {
	r := object.union(review(shop([{"kind": "Deployment", "jsonPointers": ["/spec"]}], {"automated": {}})), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as review(shop("x", "x"))
	count(rule.violations) == 0 with input as review(object.union(shop([], {}), {"spec": "x"}))
	entries := ["x", 1, {"group": "apps", "kind": "Deployment", "jsonPointers": "x", "jqPathExpressions": [1, null]}]
	count(rule.violations) == 0 with input as review(shop(entries, {"automated": "x", "syncOptions": "x"}))
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG303"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG303.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
