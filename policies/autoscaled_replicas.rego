# SG204: a workload that sets spec.replicas while an autoscaler owns that field.
#
# An HPA (or a KEDA ScaledObject, which drives an HPA) writes spec.replicas of its target. When
# Git also sets it, the live value differs from Git as soon as the autoscaler acts: the
# Application is OutOfSync, and every sync — each self-heal round included — applies the Git
# value again, scaling the workload back until the autoscaler catches up, in a loop (seed 004
# cause 3; spec §10-21, argo-cd#1079). Two ways out:
#  - remove spec.replicas from the manifest (recommended: nothing to fight over);
#  - ignore /spec/replicas in the Application's ignoreDifferences AND set RespectIgnoreDifferences=true:
#    ignoreDifferences alone only affects the comparison, each sync still applies the full
#    manifest (spec §10-22, argo-cd#4912).
#
# Three findings:
#  1. no ignoreDifferences entry of the owning Application covers /spec/replicas of this object;
#  2. one does, but the Application is automated and lacks RespectIgnoreDifferences=true;
#  3. the owning Application is unknown (input.app absent): same as 1, phrased for any app.
# An entry covers the object the way Argo CD matches it (util/argo/normalizers): group and kind
# are globs that must match (an absent group is the core group ""; an absent kind matches
# nothing), name and namespace match when empty or equal; and it covers the field with
# jsonPointers /spec/replicas (or /spec), jqPathExpressions .spec.replicas (or .spec), or
# managedFieldsManagers kube-controller-manager (the HPA controller's field manager).
# Resource customizations in argocd-cm are not part of the input and cannot be seen.
package syncguard.rules.autoscaled_replicas

meta := {
	"id": "SG204",
	"title": "spec.replicas set on a workload an autoscaler scales",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"An HPA or KEDA ScaledObject changes spec.replicas of its target. If Git sets it too, the Application is",
		"OutOfSync whenever the autoscaler acts, and every sync and self-heal puts the Git value back, fighting",
		"the autoscaler. Remove spec.replicas, or ignore /spec/replicas with RespectIgnoreDifferences=true.",
	]),
	"docs": "docs/rules/SG204.md",
}

# 1. The owning Application does not ignore /spec/replicas of this object.
violations contains {"msg": msg, "path": "/spec/replicas"} if {
	# cheap first tests, implied by _autoscaled_with_replicas below
	input.dependents != []
	input.resource.spec.replicas != null
	_autoscaled_with_replicas
	_app_known
	count(_covering_entries) == 0
	msg := sprintf(
		"%s sets spec.replicas and is scaled by %s: the autoscaler changes spec.replicas, so Argo CD shows it OutOfSync and every sync (self-heal included) sets it back to %v, fighting the autoscaler (argo-cd#1079). Remove spec.replicas from the manifest (recommended), or add to Application %s %s and syncOptions: [RespectIgnoreDifferences=true].",
		[_subject, _autoscaler_labels, _replicas, _app_name, _snippet],
	)
}

# 2. It does, but automated syncs still apply the Git value.
violations contains {"msg": msg, "path": "/spec/replicas"} if {
	# cheap first tests, implied by _autoscaled_with_replicas below
	input.dependents != []
	input.resource.spec.replicas != null
	_autoscaled_with_replicas
	_app_known
	count(_covering_entries) > 0
	object.get(_app, "automated", false) == true
	not _respects_ignore_differences
	msg := sprintf(
		"%s is scaled by %s, and Application %s ignores its /spec/replicas without RespectIgnoreDifferences=true: ignoreDifferences only hides the difference, so every automated sync still applies spec.replicas: %v from Git and scales it back until the autoscaler catches up (argo-cd#4912). Add syncOptions: [RespectIgnoreDifferences=true] to Application %s, or remove spec.replicas from the manifest.",
		[_subject, _autoscaler_labels, _app_name, _replicas, _app_name],
	)
}

# 3. The owning Application is unknown.
violations contains {"msg": msg, "path": "/spec/replicas"} if {
	# cheap first tests, implied by _autoscaled_with_replicas below
	input.dependents != []
	input.resource.spec.replicas != null
	_autoscaled_with_replicas
	not _app_known
	msg := sprintf(
		"%s sets spec.replicas and is scaled by %s: the autoscaler changes spec.replicas, so Argo CD shows it OutOfSync and every sync (self-heal included) sets it back to %v, fighting the autoscaler (argo-cd#1079). Remove spec.replicas from the manifest (recommended), or add to the owning Application %s and syncOptions: [RespectIgnoreDifferences=true].",
		[_subject, _autoscaler_labels, _replicas, _snippet],
	)
}

_autoscaled_with_replicas if {
	_applies
	object.get(_sync, "is_hook", false) != true
	_replicas != null
	count(_autoscalers) > 0
}

_replicas := object.get(_spec, "replicas", null)

_autoscalers := [d |
	some d in _dependents
	is_object(d)
	d.role == "scale_target"
]

# "HorizontalPodAutoscaler app-foo/svc-foo, ScaledObject app-foo/svc-foo-queue"
_autoscaler_labels := concat(", ", sort({label |
	some d in _autoscalers
	label := _dependent_label(d)
}))

_dependent_label(d) := "an autoscaler" if {
	_str(d, "kind") == ""
	_str(d, "name") == ""
} else := sprintf("%s %s", [_str(d, "kind"), _ns_name(_str(d, "namespace"), _str(d, "name"))])

# ignoreDifferences: [{group: apps, kind: Deployment, name: web, jsonPointers: [/spec/replicas]}]
_snippet := sprintf("ignoreDifferences: [{%s}]", [concat(", ", _snippet_fields)])

_snippet_fields := array.concat(
	[sprintf("group: %s", [_group_yaml]), sprintf("kind: %s", [_kind])],
	array.concat([sprintf("name: %s", [_name]) | _name != ""], ["jsonPointers: [/spec/replicas]"]),
)

_group_yaml := _group if _group != ""

else := "\"\""

default _app_name := "(unnamed)"

_app_name := n if {
	n := _str(_app, "name")
	n != ""
}

_respects_ignore_differences if {
	options := object.get(_app, "sync_options", {})
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
	"RespectIgnoreDifferences=true" in items
}

_covering_entries contains i if {
	entries := object.get(_app, "ignore_differences", [])
	is_array(entries)
	some i, entry in entries
	is_object(entry)
	_glob(_str(entry, "group"), _group)
	_glob(_str(entry, "kind"), _kind)
	_str(entry, "name") in {"", _name}
	_str(entry, "namespace") in {"", _effective_namespace}
	_covers_replicas(entry)
}

_covers_replicas(entry) if {
	some pointer in _array(entry, "jsonPointers")
	pointer in {"/spec/replicas", "/spec"}
}

_covers_replicas(entry) if {
	some expression in _array(entry, "jqPathExpressions")
	is_string(expression)
	trim_space(expression) in {".spec.replicas", ".spec"}
}

_covers_replicas(entry) if "kube-controller-manager" in _array(entry, "managedFieldsManagers")

# Argo CD matches group and kind with globs; only plain names and * are understood here.
_glob(pattern, text) if pattern == text

_glob(pattern, text) if {
	contains(pattern, "*")
	regex.match(`^[A-Za-z0-9.*_-]+$`, pattern)
	regex.match(concat("", ["^", replace(replace(pattern, ".", `\.`), "*", ".*"), "$"]), text)
}

_effective_namespace := _namespace if _namespace != ""

else := _str(_app, "destination_namespace")

_group := g if {
	parts := split(_str(_resource, "apiVersion"), "/")
	count(parts) == 2
	g := parts[0]
} else := ""

_ns_name(ns, name) := concat("/", [ns, name]) if ns != ""

else := name

_array(obj, key) := v if {
	v := object.get(obj, key, [])
	is_array(v)
} else := []

_app_known if is_object(input.app)

default _app := {}

_app := input.app if is_object(input.app)

default _dependents := []

_dependents := d if {
	d := input.dependents
	is_array(d)
}

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

# Rules never judge a deletion.
_applies if object.get(input, "operation", "") != "DELETE"

default _resource := {}

_resource := input.resource if is_object(input.resource)

default _sync := {}

_sync := input.sync if is_object(input.sync)

default _metadata := {}

_metadata := m if {
	m := object.get(_resource, "metadata", {})
	is_object(m)
}

default _spec := {}

_spec := s if {
	s := object.get(_resource, "spec", {})
	is_object(s)
}

_str(obj, key) := v if {
	v := object.get(obj, key, "")
	is_string(v)
} else := ""

_name := _str(_metadata, "name")

_generate_name := _str(_metadata, "generateName")

_namespace := _str(_metadata, "namespace")

default _display_name := "(unnamed)"

_display_name := _name if _name != ""

_display_name := concat("", [_generate_name, "*"]) if {
	_name == ""
	_generate_name != ""
}

_qualified_name := concat("/", [_namespace, _display_name]) if _namespace != ""

_qualified_name := _display_name if _namespace == ""

default _kind := "object"

_kind := k if {
	k := _str(_resource, "kind")
	k != ""
}

# "Deployment app-foo/svc-foo"
_subject := sprintf("%s %s", [_kind, _qualified_name])
