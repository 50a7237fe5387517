# SG105: an argocd.argoproj.io/hook value that Argo CD does not know.
#
# Hook types are exact, case-sensitive strings (PreSync, Sync, PostSync, SyncFail, Skip, and the
# controller's PreDelete/PostDelete). Anything else is dropped without a word. When nothing valid
# is left, the object is still a hook (the annotation is present) but has no phase: gitops-engine
# removes it before planning, so it is never applied, never pruned and missing from sync status —
# a `presync` migration silently never runs. That case is critical; an unknown value next to a
# valid one (e.g. "PreSync,Postsync") is high: part of what the author asked for never happens.
# Violations carry their own "severity" when it differs by case; meta.severity is the worst case.
package syncguard.rules.hook_type_unknown

meta := {
	"id": "SG105",
	"title": "Unknown argocd.argoproj.io/hook value",
	"severity": "critical",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD silently ignores hook values it does not know (they are case-sensitive: presync is not",
		"PreSync). If no valid value is left the object is dropped before the sync is planned: it is never",
		"applied and never reported, so a migration or a dependency simply does not exist in the cluster.",
	]),
	"docs": "docs/rules/SG105.md",
	# Judges objects Argo CD never applies too (no other rule sees them).
	"unapplied": true,
}

violations contains {"msg": msg, "path": _hook_path, "severity": _severity} if {
	input.sync.invalid_hook_values != [] # cheap first test: `some value in _list(...)` below needs a non-empty array
	_applies
	some value in _list("invalid_hook_values")
	is_string(value)
	msg := sprintf(
		"%s: argocd.argoproj.io/hook value \"%s\" is not a hook type Argo CD knows, %s. %s",
		[_subject, value, _effect, _fix(value)],
	)
}

# An empty (or all-commas) annotation is a hook without a type: dropped just the same.
violations contains {"msg": msg, "path": _hook_path, "severity": "critical"} if {
	input.sync.ignored.reason == "garbage-hook" # cheap first test, implied by _ignored_reason below
	_applies
	is_string(_annotations[_hook_annotation])
	count(_csv(_annotations[_hook_annotation])) == 0
	_ignored_reason == "garbage-hook"
	msg := sprintf(
		"%s: argocd.argoproj.io/hook is empty, %s. Set a hook type (PreSync, Sync, PostSync, SyncFail, PreDelete, PostDelete) or remove the annotation.",
		[_subject, _effect],
	)
}

# PreDelete is a hook type only from Argo CD 3.3: 3.2.11's engine and controller have no such
# value, so there it is dropped like any unknown value — alone, the whole object is dropped
# (never applied, and nothing runs when the Application is deleted); next to another type, only
# that type runs. Seen with the real controller (docs/argocd-observed.md).
violations contains {"msg": msg, "path": _hook_path, "severity": sev} if {
	input.sync.hook_types != [] # cheap first test
	_applies
	_release < 303
	"PreDelete" in _list("hook_types")
	"PreDelete" in _csv(object.get(_annotations, _hook_annotation, ""))
	others := [t | some t in _list("hook_types"); t != "PreDelete"]
	sev := _predelete_severity(others)
	msg := sprintf(
		"%s: argocd.argoproj.io/hook value \"PreDelete\" is a hook type only from Argo CD 3.3; Argo CD %s does not know it, %s. Run the clean-up another way on this version (a PostDelete hook, available since 2.10, runs after the resources are deleted), or upgrade Argo CD.",
		[_subject, input.argocd.version, _predelete_effect(others)],
	)
}

_predelete_severity(others) := "critical" if count(others) == 0

_predelete_severity(others) := "high" if count(others) > 0

_predelete_effect(others) := "so it silently drops the whole object: it is never applied and nothing runs when the Application is deleted" if {
	count(others) == 0
}

_predelete_effect(others) := sprintf("so it runs the object only as %s", [concat(", ", others)]) if {
	count(others) > 0
}

# Argo CD 3.3.3 and 3.3.4 parse delete hook values as comma-separated lists and take every object
# whose value names PreDelete or PostDelete out of the sync (controller/state.go CompareAppState),
# also when the value names a sync hook type as well: "PostSync,PostDelete" never runs as PostSync
# (argo-cd#26996; fixed in 3.3.5 and 3.4.0). The release table's
# sync_hook_with_post_delete_dropped (docs/argocd-versions.md).
violations contains {"msg": msg, "path": _hook_path, "severity": "high"} if {
	input.sync.hook_types != [] # cheap first test
	_applies
	_behaviour_or("sync_hook_with_post_delete_dropped", false)
	deletes := [t | some t in _list("hook_types"); t in {"PreDelete", "PostDelete"}]
	syncs := [t | some t in _list("hook_types"); t in {"PreSync", "Sync", "PostSync", "SyncFail"}]
	count(deletes) > 0
	count(syncs) > 0
	msg := sprintf(
		"%s: argocd.argoproj.io/hook names %s together with %s; Argo CD %s (3.3.3 and 3.3.4) takes every object whose hook value names a delete hook out of the sync, so it never runs as %s (argo-cd#26996, fixed in 3.3.5). Upgrade to 3.3.5 or later, or split it into two objects: one %s hook and one %s hook.",
		[_subject, concat(", ", deletes), concat(", ", syncs), _version_text, concat(", ", syncs), concat("/", syncs), concat("/", deletes)],
	)
}

# A behaviour of the release table (input.argocd.behaviours), or `newest` (the newest release's
# answer) when syncguard did not say.
_behaviour_or(name, newest) := v if {
	argocd := object.get(input, "argocd", {})
	is_object(argocd)
	behaviours := object.get(argocd, "behaviours", {})
	is_object(behaviours)
	v := object.get(behaviours, name, newest)
	is_boolean(v)
} else := newest

_version_text := sprintf("v%s", [v]) if {
	v := input.argocd.version
	is_string(v)
	v != ""
} else := "this release"

# input.argocd.release (major * 100 + minor); the newest release when absent.
default _release := 306

_release := r if {
	r := input.argocd.release
	is_number(r)
}

_hook_annotation := "argocd.argoproj.io/hook"

_hook_path := "/metadata/annotations/argocd.argoproj.io~1hook"

default _ignored_reason := ""

_ignored_reason := r if {
	ignored := object.get(_sync, "ignored", {})
	is_object(ignored)
	r := object.get(ignored, "reason", "")
	is_string(r)
}

default _severity := "high"

_severity := "critical" if _ignored_reason == "garbage-hook"

# What Argo CD does with the object once the unknown values are dropped.
default _effect := "so Argo CD ignores it"

_effect := "so Argo CD silently drops the whole object: it is never applied, never pruned and not shown in sync status" if {
	_ignored_reason == "garbage-hook"
}

_effect := sprintf("so Argo CD ignores it and runs the object only as %s, when the Application is deleted", [_hook_label]) if {
	_ignored_reason == "delete-hook-only"
}

_effect := "so Argo CD ignores it and the object is skipped: never applied" if _ignored_reason == "skip"

_effect := sprintf("so Argo CD ignores it and runs the object only as %s", [_hook_label]) if {
	_ignored_reason == ""
	count(_list("phases")) > 0
}

# Lower-cased, without separators -> the value Argo CD expects. Helm spellings map like Argo CD
# maps helm.sh/hook (pre-install -> PreSync, ...).
_canonical := {
	"presync": "PreSync",
	"sync": "Sync",
	"postsync": "PostSync",
	"syncfail": "SyncFail",
	"skip": "Skip",
	"predelete": "PreDelete",
	"postdelete": "PostDelete",
	"preinstall": "PreSync",
	"preupgrade": "PreSync",
	"postinstall": "PostSync",
	"postupgrade": "PostSync",
}

# The lookups use object.get, not _canonical[key]: regorus's bytecode VM (the default backend)
# makes the whole function undefined when an index in an `if` body is undefined instead of
# falling through to the `else` (OPA and regorus's interpreter do fall through), which silenced
# this rule for values like "PreSynk".
_fix(value) := sprintf("Use \"%s\": hook values are case-sensitive.", [s]) if {
	s := object.get(_canonical, _normalize(value), "")
	s != ""
	lower(s) == lower(value)
} else := sprintf("Did you mean \"%s\"?", [s]) if {
	s := object.get(_canonical, _normalize(value), "")
	s != ""
} else := "Use PreSync, Sync, PostSync, SyncFail, Skip, PreDelete or PostDelete (case-sensitive), or remove the value."

_normalize(value) := lower(replace(replace(replace(value, "-", ""), "_", ""), " ", ""))

# gitops-engine GetAnnotationCSVs: split on ",", trim, drop empty items.
_csv(value) := {item | some raw in split(value, ","); item := trim_space(raw); item != ""}

default _annotations := {}

_annotations := a if {
	a := object.get(_metadata, "annotations", {})
	is_object(a)
}

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

# Rules never judge a deletion.
_applies if object.get(input, "operation", "") != "DELETE"

default _resource := {}

_resource := input.resource if is_object(input.resource)

default _sync := {}

_sync := input.sync if is_object(input.sync)

# An array fact from input.sync, or [] when absent or malformed (regorus, unlike OPA, raises an
# error when `some x in` meets a non-collection).
_list(key) := v if {
	v := object.get(_sync, key, [])
	is_array(v)
} else := []

default _metadata := {}

_metadata := m if {
	m := object.get(_resource, "metadata", {})
	is_object(m)
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

# "Job app-foo/svc-foo-migration"
_subject := sprintf("%s %s", [_kind, _qualified_name])

_hook_phases := [t | some t in _list("hook_types"); is_string(t); t != "Skip"]

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
