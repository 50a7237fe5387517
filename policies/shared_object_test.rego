# Tests for SG403 (policies/shared_object.rego). input.ownership is written out as
# model::ownership computes it.
package syncguard.rules.shared_object_test

import data.syncguard.rules.shared_object as rule

config_map := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "shop"}}

test_an_object_another_app_renders_is_reported if {
	vs := rule.violations with input as {"resource": config_map, "operation": "CREATE", "ownership": {"also_rendered_by": ["billing", "shop-eu"]}}
	count(vs) == 1
	some v in vs
	v.path == "/metadata/name"
	startswith(v.msg, "ConfigMap shop/settings is also rendered by Application billing, shop-eu in this input: Argo CD tracks an object for one Application only")
}

test_an_object_of_one_app_is_not_reported if {
	count(rule.violations) == 0 with input as {"resource": config_map, "operation": "CREATE"}
	count(rule.violations) == 0 with input as {"resource": config_map, "operation": "CREATE", "ownership": {"also_rendered_by": []}}
}

test_a_deletion_is_not_judged if {
	count(rule.violations) == 0 with input as {"resource": config_map, "operation": "DELETE", "ownership": {"also_rendered_by": ["billing"]}}
}

test_a_namespace_hosting_another_apps_objects_is_reported_medium if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
	vs := rule.violations with input as {"resource": ns, "operation": "CREATE", "ownership": {"namespace_hosts": ["billing"]}}
	count(vs) == 1
	some v in vs
	v.severity == "medium"
	startswith(v.msg, "Namespace shop is rendered by one Application, but objects of Application billing live in it too.")
}

test_two_applications_with_one_source_and_destination_are_reported_on_the_source if {
	app := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application", "metadata": {"name": "test-1", "namespace": "argocd"}}
	vs := rule.violations with input as {"resource": app, "operation": "CREATE", "ownership": {"same_source_as": ["test-2", "test-3"]}}
	count(vs) == 1
	some v in vs
	v.path == "/spec/source"
	contains(v.msg, "into the same destination as Application test-2, test-3")
}
