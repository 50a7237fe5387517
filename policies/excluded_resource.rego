# SG308: an object of a kind argocd-cm's resource.exclusions excludes (or resource.inclusions leaves
# out) on the Application's destination cluster.
#
# Argo CD filters the desired state through the same resource filter it watches the cluster with:
# an object whose group and kind an exclusion matches on that cluster (or that no inclusion
# includes, when inclusions name the cluster) is dropped with an ExcludedResourceWarning condition.
# It is never created, updated or pruned, and the Application can still look Synced.
#
# The fact is computed by syncguard (input.excluded_by) from the argocd-cm it knows (input,
# --argocd-config, cluster) with Argo CD's matching: groups and clusters as globs, kinds exact or
# `*`. Only when the object's Application, and so its destination cluster, is known; a destination
# by name is judged only against entries for every cluster. Argo CD's built-in exclusions (events,
# leases, metrics) are left out: no setting chose them.
package syncguard.rules.excluded_resource

meta := {
	"id": "SG308",
	"title": "Object of a kind argocd-cm excludes on the destination cluster",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD drops objects of kinds resource.exclusions excludes (or resource.inclusions leaves out)",
		"from the desired state with only an ExcludedResourceWarning condition: they are never applied,",
		"so whatever depends on them is missing while the Application can look Synced.",
	]),
	"docs": "docs/rules/SG308.md",
}

violations contains {"msg": msg, "path": "/kind"} if {
	# First: most objects carry no excluded_by, and the rule then costs one lookup.
	x := input.excluded_by
	is_object(x)
	_applies
	x.key == "resource.exclusions"
	msg := sprintf(
		"%s %s: argocd-cm resource.exclusions (entry %d: %s) excludes %s on %s, the destination of Application %s. Argo CD leaves this object out of the desired state (ExcludedResourceWarning): it is never applied, updated or pruned. Remove it from the Application, or narrow the exclusion (its apiGroups, kinds or clusters).",
		[_kind, _name, x.index, _entry(x), _group_kind, _cluster, _app_name],
	)
}

violations contains {"msg": msg, "path": "/kind"} if {
	# First: most objects carry no excluded_by, and the rule then costs one lookup.
	x := input.excluded_by
	is_object(x)
	_applies
	x.key == "resource.inclusions"
	msg := sprintf(
		"%s %s: argocd-cm resource.inclusions names %s, the destination of Application %s, and no entry includes %s there. Argo CD leaves this object out of the desired state (ExcludedResourceWarning): it is never applied, updated or pruned. Add %s to an inclusion for that cluster, or remove the object.",
		[_kind, _name, _cluster, _app_name, _group_kind, _group_kind],
	)
}

# ---- facts ----

_entry(x) := json.marshal(x.entry) if is_object(x.entry)

else := "?"

_group_kind := sprintf("%s/%s", [_group, _kind]) if _group != ""

else := _kind

_group := g if {
	parts := split(_str(_resource, "apiVersion"), "/")
	count(parts) == 2
	g := parts[0]
} else := ""

_kind := _str(_resource, "kind")

_app_name := n if {
	n := _str(input.app, "name")
	n != ""
} else := "?"

_cluster := c if {
	c := _str(input.app, "destination_cluster")
	c != ""
} else := "its destination cluster"

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

# Rules never judge a deletion.
_applies if object.get(input, "operation", "") != "DELETE"

default _resource := {}

_resource := input.resource if is_object(input.resource)

default _metadata := {}

_metadata := m if {
	m := object.get(_resource, "metadata", {})
	is_object(m)
}

_str(obj, key) := v if {
	is_object(obj)
	v := object.get(obj, key, "")
	is_string(v)
} else := ""

_name := _str(_metadata, "name")
