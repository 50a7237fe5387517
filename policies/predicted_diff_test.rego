# Tests for SG305 (policies/predicted_diff.rego). input.diff is written out as model::diff
# predicts it.
package syncguard.rules.predicted_diff_test

import data.syncguard.rules.predicted_diff as rule

role := {
	"apiVersion": "rbac.authorization.k8s.io/v1",
	"kind": "ClusterRole",
	"metadata": {"name": "kyverno"},
	"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"app": "kyverno"}}]},
	"rules": [],
}

aggregated := {"pointer": "/rules", "mechanism": "controller", "evidence": "aggregationRule", "stored": null, "confidence": "certain"}

base := {
	"resource": role,
	"operation": "CREATE",
	"sync": {"is_hook": false, "phases": ["Sync"]},
	"diff": {"predicted": [aggregated]},
}

test_declared_rules_of_an_aggregated_role_are_reported if {
	vs := rule.violations with input as base
	count(vs) == 1
	some v in vs
	v.path == "/rules"
	startswith(v.msg, "ClusterRole kyverno declares rules next to an aggregationRule")
}

test_ignore_aggregated_roles_hides_them if {
	count(rule.violations) == 0 with input as object.union(base, {"argocd": {"config": {"ignore_aggregated_roles": true}}})
}

test_an_application_ignore_differences_entry_hides_a_field if {
	app := {"ignore_differences": [{"group": "rbac.authorization.k8s.io", "kind": "ClusterRole", "jsonPointers": ["/rules"]}]}
	count(rule.violations) == 0 with input as object.union(base, {"app": app})
	other := {"ignore_differences": [{"group": "rbac.authorization.k8s.io", "kind": "Role", "jsonPointers": ["/rules"]}]}
	count(rule.violations) == 1 with input as object.union(base, {"app": other})
}

test_a_system_level_entry_makes_it_audit if {
	vs := rule.violations with input as object.union(base, {"argocd": {"config": {"ignore_differences": ["rbac.authorization.k8s.io/ClusterRole"]}}})
	some v in vs
	v.action == "audit"
}

test_hooks_are_not_judged if {
	count(rule.violations) == 0 with input as object.union(base, {"sync": {"is_hook": true, "phases": ["PreSync"]}})
}

test_a_dropped_field_and_an_unnormalised_quantity_are_explained if {
	deployment := {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}, "spec": {"template": {"spec": {"containers": [{"name": "web", "imagePullPolicyy": "Always", "resources": {"limits": {"cpu": "1000m"}}}]}}}}
	predicted := [
		{"pointer": "/spec/template/spec/containers/0/imagePullPolicyy", "mechanism": "dropped", "evidence": "Kubernetes 1.37 types", "stored": null, "confidence": "certain"},
		{"pointer": "/spec/template/spec/containers/0/resources/limits/cpu", "mechanism": "normalised", "evidence": "Kubernetes 1.37 types: the manifest has a field its type does not declare", "stored": "1", "confidence": "certain"},
	]
	vs := rule.violations with input as object.union(base, {"resource": deployment, "diff": {"predicted": predicted}})
	count(vs) == 2
	some a in vs
	a.path == "/spec/template/spec/containers/0/imagePullPolicyy"
	contains(a.msg, "the API server drops it with a warning")
	some b in vs
	b.path == "/spec/template/spec/containers/0/resources/limits/cpu"
	contains(b.msg, "is written \"1000m\" and stored as \"1\"")
}

test_a_duplicate_key_is_reported_at_the_second_entry if {
	d := {"pointer": "/spec/template/spec/containers/0/env/2", "mechanism": "duplicate_key", "evidence": "env is merged by name; \"X\" is declared twice", "stored": null, "confidence": "certain"}
	vs := rule.violations with input as object.union(base, {"diff": {"predicted": [d]}})
	some v in vs
	v.path == "/spec/template/spec/containers/0/env/2"
	contains(v.msg, "argo-cd#20979")
}

test_a_field_pruned_from_an_application_says_the_setting_does_nothing if {
	app := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "guestbook", "namespace": "argocd"}, "spec": {"syncOptions": ["CreateNamespace=true"]}}
	d := {"pointer": "/spec/syncOptions", "mechanism": "dropped", "evidence": "schema of CRD applications.argoproj.io in Argo CD 3.6.1", "stored": null, "confidence": "certain"}
	vs := rule.violations with input as object.union(base, {"resource": app, "diff": {"predicted": [d]}})
	count(vs) == 1
	some v in vs
	v.severity == "high"
	contains(v.msg, "Argo CD never sees the setting and it does nothing")
	contains(v.msg, "sync options belong under spec.syncPolicy.syncOptions")
}

test_a_value_the_cluster_stores_differently_names_both_and_the_fixes if {
	deployment := {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop"}, "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}}
	d := {"pointer": "/spec/template/spec/containers/0/image", "mechanism": "stored", "evidence": "server-side dry-run", "stored": "mirror.example/nginx:1.27", "confidence": "certain"}
	vs := rule.violations with input as object.union(base, {"resource": deployment, "diff": {"predicted": [d]}})
	count(vs) == 1
	some v in vs
	contains(v.msg, "is declared \"nginx:1.27\", but the cluster stores \"mirror.example/nginx:1.27\" (server-side dry-run)")
	contains(v.msg, "IncludeMutationWebhook=true")
	# and a field it does not store at all
	gone := object.union(d, {"pointer": "/spec/template/spec/containers/0/image", "stored": null})
	ws := rule.violations with input as object.union(base, {"resource": deployment, "diff": {"predicted": [gone]}})
	some w in ws
	contains(w.msg, "but the cluster does not store it")
	# the Application's ignoreDifferences hides it like any other difference
	app := {"ignore_differences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/template/spec/containers/0/image"]}]}
	count(rule.violations) == 0 with input as object.union(base, {"resource": deployment, "diff": {"predicted": [d]}, "app": app})
}
