# Tests for SG307 (policies/argocd_setting_without_effect.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses.
package syncguard.rules.argocd_setting_without_effect_test

import data.syncguard.rules.argocd_setting_without_effect as rule

app(spec) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": spec,
}

create_ns := {
	"destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
	"syncPolicy": {"syncOptions": ["ServerSideApply=true", "CreateNamespace=true"]},
}

doc(spec, governed) := {"operation": "CHECK", "resource": app(spec), "governed": governed}

test_create_namespace_while_objects_land_elsewhere if {
	d := doc(create_ns, {"objects": 3, "namespaces": [["shop-prod", 3]], "creates_namespaces": []})
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.path == "/spec/destination/namespace"
	v.msg == "Application shop: CreateNamespace=true creates the destination namespace \"shop\", but none of its 3 objects land there: they go to \"shop-prod\" (a Kustomize namespace, or one the chart sets). Argo CD creates only the destination namespace, so the sync fails with namespaces not found unless \"shop-prod\" already exist. Set destination.namespace to the namespace the objects use, or add that Namespace to the Application."
}

test_create_namespace_used_by_some_object_is_fine if {
	d := doc(create_ns, {"objects": 3, "namespaces": [["shop-prod", 2], ["shop", 1]], "creates_namespaces": []})
	count(rule.violations) == 0 with input as d
}

test_objects_in_a_namespace_the_app_creates_are_fine if {
	d := doc(create_ns, {"objects": 3, "namespaces": [["shop-prod", 2]], "creates_namespaces": ["shop-prod"]})
	count(rule.violations) == 0 with input as d
}

test_without_the_objects_nothing_is_said if {
	count(rule.violations) == 0 with input as {"operation": "CHECK", "resource": app(create_ns)}
}

multi(file) := {
	"destination": {"namespace": "shop"},
	"sources": [
		{"repoURL": "https://charts.example.com", "chart": "shop", "helm": {"valueFiles": [file]}},
		{"repoURL": "https://git.example.com/values.git", "ref": "values", "path": "envs/prod"},
	],
}

test_ref_paths_are_from_the_repository_root if {
	vs := rule.violations with input as {"operation": "CHECK", "resource": app(multi("$values/values.yaml"))}
	count(vs) == 1
	some v in vs
	v.path == "/spec/sources/0/helm/valueFiles/0"
	contains(v.msg, "Write \"$values/envs/prod/values.yaml\"")
}

test_a_ref_path_written_in_full_is_fine if {
	count(rule.violations) == 0 with input as {"operation": "CHECK", "resource": app(multi("$values/envs/prod/values.yaml"))}
}

test_a_deletion_is_never_judged if {
	d := object.union(doc(create_ns, {"objects": 3, "namespaces": [["x", 3]], "creates_namespaces": []}), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as d
}

test_an_unknown_application_sync_option_names_the_one_meant if {
	spec := {"syncPolicy": {"syncOptions": ["CreateNamespace=true", " ServiceSideApply=true"]}}
	d := {
		"operation": "CHECK", "resource": app(spec),
		"unknown_sync_options": [{"option": "ServiceSideApply=true", "from": "application", "suggestion": "ServerSideApply=true"}],
	}
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.path == "/spec/syncPolicy/syncOptions/1"
	v.msg == "Application shop: sync option \"ServiceSideApply=true\" is not one Argo CD knows: it is accepted and ignored, so it never takes effect. Did you mean ServerSideApply=true?"
}

test_an_unknown_annotation_sync_option_without_a_near_one_links_the_list if {
	d := {
		"operation": "CHECK",
		"resource": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
		"unknown_sync_options": [{"option": "Frobnicate=true", "from": "annotation", "suggestion": null}],
	}
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.path == "/metadata/annotations/argocd.argoproj.io~1sync-options"
	contains(v.msg, "ConfigMap c: sync option \"Frobnicate=true\"")
	contains(v.msg, "https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/")
}

test_known_options_are_fine if {
	spec := {"syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}
	count(rule.violations) == 0 with input as {"operation": "CHECK", "resource": app(spec)}
}
