# SG115: hooks (or resources) to which Argo CD gives the same identity in one Application.
#
# Two cases, both from the Argo CD source (argo-cd controller/state.go DeduplicateTargetObjects,
# gitops-engine pkg/sync/sync_context.go getSyncTasks), unchanged from v2.0 to v3.4:
#  1. Hooks with the same generateName (same API group, kind and effective namespace) that run in
#     a common phase. Argo CD names every generateName hook itself, generateName + the first 7
#     characters of the revision + "-" + the phase in lower case + "-" + the Unix second the sync
#     started, so both hooks get the SAME name in that phase: one object, one sync result
#     ("group/kind/namespace/name:phase"). In one wave both are applied at once: the creates race and
#     one fails "already exists", or a Job or Pod lands on the first one and fails "field is
#     immutable" (any other kind is overwritten); in a
#     later wave the second hook finds the first one's result and counts as done: it never runs
#     (argo-cd#9184). Hooks in different phases get different names and are not reported.
#  2. Objects with the same fixed metadata.name. Before the sync, Argo CD keeps only the LAST
#     object of each identity in the rendered manifests and drops the others, with an Application
#     condition RepeatedResourceWarning (objects with only generateName are exempt since v1.7,
#     argo-cd#3878). A dropped hook never runs; when every copy is a normal resource only the last
#     copy's content is applied (low).
#
# Facts used: input.collisions (every OTHER object of the Application with the same identity),
# input.sync (is_hook, phases, hook_types, wave, skip).
package syncguard.rules.hook_name_collision

meta := {
	"id": "SG115",
	"title": "Hooks or resources that Argo CD gives the same name",
	"severity": "high",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD names a generateName hook from its generateName, the revision, the phase and the sync's",
		"start time, so two hooks with the same generateName in one phase become one object with one result:",
		"one of them is overwritten, fails, or never runs. Objects with the same fixed name are deduplicated",
		"before the sync and only the last copy is applied, so a hook can silently disappear.",
	]),
	"docs": "docs/rules/SG115.md",
}

# 1. generateName hooks that Argo CD gives the same name.
violations contains {"msg": msg, "path": "/metadata/generateName", "severity": "high"} if {
	# cheap first tests, implied by the conditions below
	input.collisions != []
	input.sync.is_hook == true
	input.resource.metadata.generateName != ""
	_applies
	_name == ""
	_generate_name != ""
	count(_generate_clashes) > 0
	phase := _first_shared_phase
	msg := sprintf(
		"%s, %s hook, has the same generateName as %s: Argo CD names a generateName hook <generateName><first 7 characters of the revision>-<phase>-<sync start in Unix seconds>, so in %s they all become %s %s, one object with one sync result. In the same wave both are applied at once under that one name and all but one fail (\"already exists\" when the creates race, \"field is immutable\" when a Job or Pod lands on the first one; any other kind is overwritten), and because both share one sync result a failure can be overwritten by the other's success, so the sync may even succeed with one of them never run; in a later wave the second hook finds the first one's result and counts as done, so it never runs (argo-cd#9184). Give each hook its own generateName (e.g. \"%s\" and \"%s\"), or a fixed metadata.name.",
		[
			_subject, _article_label, _clash_list(_generate_clashes), phase, _kind,
			_generated_name(phase), _suggested_name("a"), _suggested_name("b"),
		],
	)
}

# 2. Objects with the same fixed name: only the last copy reaches the sync.
violations contains {"msg": msg, "path": "/metadata/name", "severity": sev, "action": "warn"} if {
	# cheap first tests, implied by _name != "" and count(_name_clashes) > 0 below
	input.collisions != []
	input.resource.metadata.name != ""
	_applies
	_name != ""
	count(_name_clashes) > 0
	sev := _name_severity
	msg := sprintf(
		"%s (%s) has the same identity as %s: before the sync Argo CD keeps only the last of these %d objects in the rendered manifests and drops the others without applying them (Application condition RepeatedResourceWarning, \"appeared %d times among application resources\"). %s",
		[_subject, _label(_sync), _clash_list(_name_clashes), count(_name_clashes) + 1, count(_name_clashes) + 1, _name_consequence],
	)
}

default _name_severity := "low"

_name_severity := "high" if _any_hook

_name_consequence := "A hook that is dropped never runs, and the copy that survives decides what runs and in which phase. Give each object its own metadata.name (a hook that must run on every sync can use generateName instead)." if {
	_any_hook
} else := "Only the last copy's content is applied; keep one copy, or give the others their own names."

_any_hook if object.get(_sync, "is_hook", false) == true

_any_hook if {
	some c in _name_clashes
	object.get(c, "is_hook", false) == true
}

# ---- collisions ----

default _collisions := []

_collisions := c if {
	c := input.collisions
	is_array(c)
}

# Other hooks with only the same generateName that share a sync phase with this one.
_generate_clashes := [c |
	some c in _collisions
	is_object(c)
	object.get(c, "is_hook", false) == true
	_str(c, "name") == ""
	_str(c, "generate_name") == _generate_name
	count(_shared_phases(c)) > 0
]

# Other objects with the same fixed name.
_name_clashes := [c |
	some c in _collisions
	is_object(c)
	_str(c, "name") == _name
]

_sync_phases := ["PreSync", "Sync", "PostSync", "SyncFail"]

_phases_of(obj) := p if {
	p := object.get(obj, "phases", [])
	is_array(p)
} else := []

_shared_phases(c) := [p |
	some p in _sync_phases
	p in _list("phases")
	p in _phases_of(c)
]

_first_shared_phase := p if {
	shared := {q | some c in _generate_clashes; some q in _shared_phases(c)}
	ordered := [q | some q in _sync_phases; q in shared]
	p := ordered[0]
}

_generated_name(phase) := sprintf("%s%s<rev7>-%s-<start>", [_namespace_prefix, _generate_name, lower(phase)])

_namespace_prefix := concat("", [_namespace, "/"]) if _namespace != ""

else := ""

# "linter-a-" from "linter-", "linter-a" from "linter"
_suggested_name(suffix) := sprintf("%s%s-", [_generate_name, suffix]) if endswith(_generate_name, "-")

else := sprintf("%s-%s", [_generate_name, suffix])

_max_named := 3

# "Job app-foo/linter-* (a PostSync hook, at templates/jobs.yaml:20)"
_clash_list(clashes) := concat(", ", labels) if {
	count(clashes) <= _max_named
	labels := [_clash_label(c) | some c in clashes]
} else := sprintf("%s and %d more", [
	concat(", ", [_clash_label(c) | some i, c in clashes; i < _max_named]),
	count(clashes) - _max_named,
])

_clash_label(c) := sprintf("%s %s (%s%s)", [_or(_str(c, "kind"), "object"), _clash_name(c), _label(c), _at(c)])

_clash_name(c) := _ns_name(_str(c, "namespace"), _str(c, "name")) if _str(c, "name") != ""

else := _ns_name(_str(c, "namespace"), concat("", [_str(c, "generate_name"), "*"]))

_at(c) := concat("", [", at ", _str(c, "location")]) if _str(c, "location") != ""

else := ""

# What an object is, from its sync facts (input.sync or a collision entry).
_label(facts) := sprintf("a %s hook", [concat("/", types)]) if {
	object.get(facts, "is_hook", false) == true
	types := [t | some t in _types_of(facts); t != "Skip"]
	count(types) > 0
} else := "a hook Argo CD ignores" if {
	object.get(facts, "is_hook", false) == true
} else := "marked hook: Skip, never applied" if {
	"Skip" in _types_of(facts)
} else := "a normal resource"

_types_of(facts) := t if {
	t := object.get(facts, "hook_types", [])
	is_array(t)
} else := []

# "a PostSync" / "an ..." for this object, without the word "hook".
_article_label := sprintf("a %s", [concat("/", types)]) if {
	types := [t | some t in _list("hook_types"); t != "Skip"]
	count(types) > 0
} else := "a"

_ns_name(ns, name) := concat("/", [ns, name]) if ns != ""

else := name

_or(s, fallback) := s if s != ""

else := fallback

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

# "Job app-foo/linter-*"
_subject := sprintf("%s %s", [_kind, _qualified_name])
