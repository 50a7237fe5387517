# SG309: a key of argocd-cm or argocd-cmd-params-cm that Argo CD never reads, or cannot use.
#
# Argo CD reads each settings ConfigMap by exact key and says nothing about the others. A key
# written in the wrong ConfigMap (controller.* in argocd-cm, timeout.reconciliation in
# argocd-cmd-params-cm, the diffing guide's ignore.normalizer.jq.timeout), in another release's
# form (`repositories` after 3.0, a split key's group_Kind inside the old resource.customizations
# block), or misspelt (resource.customization.health.*, a customization type that does not exist)
# silently leaves the default in force. Some are worse: an unknown customization type, a
# group_Kind with two underscores or a value that does not parse makes Argo CD fail to load every
# resource customization; an unknown applicationsetcontroller.policy stops the controller.
#
# The keys are classified by syncguard's typed readers (input.argocd.config.notes); this rule
# reports the ones of the ConfigMap being checked, at the key's line.
package syncguard.rules.argocd_settings_key

meta := {
	"id": "SG309",
	"title": "Argo CD settings key that is never read or cannot be used",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD reads its settings ConfigMaps by exact key and ignores the rest without a word: a key in the",
		"wrong ConfigMap, in another release's form or misspelt leaves the default in force, and some wrong",
		"customization keys make Argo CD drop every resource customization.",
	]),
	"docs": "docs/rules/SG309.md",
	"kinds": ["ConfigMap"], # only the settings ConfigMaps are reported on: others skip the rule
}

violations contains {"msg": msg, "path": n.pointer, "severity": _severity(n)} if {
	_applies
	_is_settings_configmap
	some n in _notes
	_reported(n)
	msg := sprintf("%s key %q: %s.%s", [_name, n.key, n.detail, _meant(n)])
}

_reported(n) if n.issue != "other_release"

# A key of an older release is reported only on a release that no longer reads it.
_reported(n) if {
	n.issue == "other_release"
	not is_number(n.removed_in)
}

_reported(n) if {
	n.issue == "other_release"
	is_number(n.removed_in)
	r := object.get(object.get(input, "argocd", {}), "release", 0)
	is_number(r)
	r >= n.removed_in
}

_severity(n) := "high" if n.issue == "breaks"

# A key nothing is known about may be a newer release's: worth a look, nothing to fix for sure.
else := "info" if {
	n.issue == "unknown"
	not is_string(n.meant)
} else := "medium"

_meant(n) := sprintf(" Did you mean %s?", [n.meant]) if is_string(n.meant)

else := ""

# ---- facts ----

_is_settings_configmap if {
	_str(_resource, "kind") == "ConfigMap"
	_str(_resource, "apiVersion") == "v1"
	_name in {"argocd-cm", "argocd-cmd-params-cm"}
}

# Notes of this ConfigMap as read from the input (not from --argocd-config or the cluster).
_notes contains n if {
	some n in object.get(_config, "notes", [])
	is_object(n)
	n.source == "input"
	n.configmap == _name
	object.get(n, "namespace", "") == _str(_metadata, "namespace")
}

default _config := {}

_config := c if {
	c := input.argocd.config
	is_object(c)
}

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
