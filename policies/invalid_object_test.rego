# Tests for SG401 (policies/invalid_object.rego). input.validity is written out as
# model::validity computes it.
package syncguard.rules.invalid_object_test

import data.syncguard.rules.invalid_object as rule

deployment := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx", "env": [{"name": "ID", "value": 73825}]}]}}},
}

kubernetes := {"source": "kubernetes", "types": "1.37"}

wrong_type := {"pointer": "/spec/template/spec/containers/0/env/0/value", "kind": "wrong_type", "message": "integer `73825`, expected string"}

unknown := {"pointer": "/spec/template/spec/containers/0/imagePullPolicyy", "kind": "unknown_field", "message": "unknown field \"imagePullPolicyy\""}

base(violations) := {
	"resource": deployment,
	"operation": "CREATE",
	"context": {"source": "check"},
	"sync": {"sync_options": {"items": [], "unknown": []}},
	"validity": {"evidence": kubernetes, "violations": violations},
}

test_a_wrong_type_is_denied_at_its_field if {
	vs := rule.violations with input as base([wrong_type])
	count(vs) == 1
	some v in vs
	v.path == "/spec/template/spec/containers/0/env/0/value"
	contains(v.msg, "Deployment shop/web: the API server refuses it, so the sync fails here: /spec/template/spec/containers/0/env/0/value: integer `73825`, expected string (Kubernetes 1.37 API types). Quote the value")
}

test_an_unknown_field_is_not_an_error_for_a_client_side_apply if {
	count(rule.violations) == 0 with input as base([unknown])
}

test_an_unknown_field_fails_a_server_side_apply if {
	vs := rule.violations with input as object.union(base([unknown]), {"app": {"sync_options": {"items": ["ServerSideApply=true"]}}})
	count(vs) == 1
	some v in vs
	contains(v.msg, "the Application's ServerSideApply=true")
	contains(v.msg, "field not declared in schema")
}

test_a_resource_opting_out_of_server_side_apply_is_not_reported if {
	input_ := object.union(base([unknown]), {
		"app": {"sync_options": {"items": ["ServerSideApply=true"]}},
		"sync": {"sync_options": {"items": ["ServerSideApply=false"], "unknown": []}},
	})
	count(rule.violations) == 0 with input as input_
}

test_admitted_and_live_objects_are_not_judged if {
	count(rule.violations) == 0 with input as object.union(base([wrong_type]), {"context": {"source": "admission"}})
	count(rule.violations) == 0 with input as object.union(base([wrong_type]), {"context": {"source": "audit"}})
}

test_secret_data_that_is_not_base64_says_so if {
	secret := {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}, "data": {"password": "{{ randAlphaNum 16 }}"}}
	vs := rule.violations with input as object.union(base([{"pointer": "/data/password", "kind": "wrong_type", "message": "Invalid symbol 123, offset 0."}]), {"resource": secret})
	some v in vs
	contains(v.msg, "Values under a Secret's data must be base64")
}

test_a_crd_schema_violation_names_the_crd if {
	vs := rule.violations with input as object.union(base([{"pointer": "/spec/mode", "kind": "not_allowed", "message": "Unsupported value: \"slow\": supported values: \"fast\""}]), {"validity": {"evidence": {"source": "crd", "crd": "widgets.example.com", "version": "v1"}}})
	some v in vs
	contains(v.msg, "(schema of version v1 in CRD widgets.example.com, in the input)")
}

test_a_removed_api_version_is_denied if {
	vs := rule.violations with input as object.union(base([{"pointer": "/apiVersion", "kind": "not_served", "message": "policy/v1beta1 PodDisruptionBudget is not served since Kubernetes 1.25: use policy/v1"}]), {"validity": {"evidence": {"source": "removed", "since": "1.25", "instead": "policy/v1"}}})
	some v in vs
	contains(v.msg, "(removed in Kubernetes 1.25). Move the manifest to the replacement API version.")
}

test_a_refusal_by_the_api_server_is_denied_with_its_own_message if {
	ingress := {
		"apiVersion": "networking.k8s.io/v1",
		"kind": "Ingress",
		"metadata": {"name": "web", "namespace": "shop"},
		"spec": {"rules": [{"host": "shop.example", "http": {"paths": null}}]},
	}
	refused := {"pointer": "/spec/rules/0/http/paths", "kind": "missing_field", "message": "spec.rules[0].http.paths: Required value"}
	vs := rule.violations with input as object.union(base([refused]), {
		"resource": ingress,
		"validity": {"evidence": {"source": "server", "version": "v1.34.4"}, "violations": [refused]},
	})
	count(vs) == 1
	some v in vs
	v.path == "/spec/rules/0/http/paths"
	contains(v.msg, "Ingress shop/web: the API server refuses it, so the sync fails here: /spec/rules/0/http/paths: spec.rules[0].http.paths: Required value (the Kubernetes v1.34.4 API server refused it)")
}

test_a_change_refused_from_the_live_object_says_what_argo_cd_does if {
	changed := {"pointer": "/spec/selector", "kind": "immutable", "message": "spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"tier\":\"front\"}}: field is immutable"}
	vs := rule.violations with input as object.union(base([changed]), {
		"validity": {"evidence": {"source": "server", "version": "v1.34.4"}, "violations": [changed]},
	})
	count(vs) == 1
	some v in vs
	v.path == "/spec/selector"
	contains(v.msg, "Deployment shop/web: the API server refuses this change from the live object, so every sync of it fails: /spec/selector: spec.selector: Invalid value")
	contains(v.msg, "Force=true,Replace=true")
}
