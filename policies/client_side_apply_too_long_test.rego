package syncguard.rules.client_side_apply_too_long_test

import data.syncguard.rules.client_side_apply_too_long

_crd := {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "prometheuses.monitoring.coreos.com"}}

_input(bytes, object_options, app_options) := {
	"resource": _crd,
	"apply": {"last_applied_bytes": bytes - 100, "annotations_bytes": bytes, "limit": 262144},
	"sync": {"sync_options": {"items": object_options}},
	"app": {"sync_options": {"items": app_options}},
	"context": {"source": "check"},
	"argocd": {"release": 304},
}

test_a_crd_over_the_limit_is_denied_with_the_fix if {
	some v in client_side_apply_too_long.violations with input as _input(400000, [], [])
	contains(v.msg, "metadata.annotations: Too long")
	contains(v.msg, "ServerSideApply=true")
	not contains(v.msg, "Replace=true also")
}

test_under_the_limit_is_silent if {
	count(client_side_apply_too_long.violations) == 0 with input as _input(262144, [], [])
}

test_server_side_apply_on_the_object_or_the_app_fixes_it if {
	count(client_side_apply_too_long.violations) == 0 with input as _input(400000, ["ServerSideApply=true"], [])
	count(client_side_apply_too_long.violations) == 0 with input as _input(400000, [], ["ServerSideApply=true"])
}

test_the_object_can_opt_out_of_the_apps_server_side_apply if {
	count(client_side_apply_too_long.violations) == 1 with input as _input(400000, ["ServerSideApply=false"], ["ServerSideApply=true"])
}

test_replace_avoids_the_annotation if {
	count(client_side_apply_too_long.violations) == 0 with input as _input(400000, ["Replace=true"], [])
}

test_server_side_apply_before_2_5_does_not_count if {
	count(client_side_apply_too_long.violations) == 1 with input as object.union(_input(400000, ["ServerSideApply=true"], []), {"argocd": {"release": 204}})
}

test_other_kinds_are_offered_replace_too if {
	cm := object.union(_input(300000, [], []), {"resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dash", "namespace": "mon"}}})
	some v in client_side_apply_too_long.violations with input as cm
	contains(v.msg, "ConfigMap mon/dash")
	contains(v.msg, "Replace=true also")
}

test_admitted_and_live_objects_are_not_judged if {
	count(client_side_apply_too_long.violations) == 0 with input as object.union(_input(400000, [], []), {"context": {"source": "admission"}})
	count(client_side_apply_too_long.violations) == 0 with input as object.union(_input(400000, [], []), {"context": {"source": "audit"}})
}
