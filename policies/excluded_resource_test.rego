# Tests for SG308 (policies/excluded_resource.rego).
package syncguard.rules.excluded_resource_test

import data.syncguard.rules.excluded_resource as rule

identity := {
	"apiVersion": "cilium.io/v2",
	"kind": "CiliumIdentity",
	"metadata": {"name": "web"},
}

app := {"name": "net", "destination_cluster": "https://kubernetes.default.svc"}

excluded := {
	"key": "resource.exclusions",
	"index": 0,
	"entry": {"apiGroups": ["cilium.io"], "kinds": ["CiliumIdentity"], "clusters": ["*"]},
}

test_an_excluded_kind_is_reported_on_its_kind if {
	d := {"operation": "CHECK", "resource": identity, "app": app, "excluded_by": excluded}
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.path == "/kind"
	v.msg == "CiliumIdentity web: argocd-cm resource.exclusions (entry 0: {\"apiGroups\":[\"cilium.io\"],\"clusters\":[\"*\"],\"kinds\":[\"CiliumIdentity\"]}) excludes cilium.io/CiliumIdentity on https://kubernetes.default.svc, the destination of Application net. Argo CD leaves this object out of the desired state (ExcludedResourceWarning): it is never applied, updated or pruned. Remove it from the Application, or narrow the exclusion (its apiGroups, kinds or clusters)."
}

test_a_kind_left_out_by_inclusions_is_reported if {
	secret := {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"}}
	d := {"operation": "CHECK", "resource": secret, "app": app, "excluded_by": {"key": "resource.inclusions"}}
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.msg == "Secret db: argocd-cm resource.inclusions names https://kubernetes.default.svc, the destination of Application net, and no entry includes Secret there. Argo CD leaves this object out of the desired state (ExcludedResourceWarning): it is never applied, updated or pruned. Add Secret to an inclusion for that cluster, or remove the object."
}

test_nothing_without_the_fact if {
	d := {"operation": "CHECK", "resource": identity, "app": app}
	count(rule.violations) == 0 with input as d
}

test_deletions_are_not_judged if {
	d := {"operation": "DELETE", "resource": identity, "app": app, "excluded_by": excluded}
	count(rule.violations) == 0 with input as d
}
