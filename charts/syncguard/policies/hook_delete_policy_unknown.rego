# SG106: a hook-delete-policy value that Argo CD does not know.
#
# Delete policies are exact, case-sensitive strings: HookSucceeded, HookFailed, BeforeHookCreation
# in argocd.argoproj.io/hook-delete-policy, and hook-succeeded, hook-failed, before-hook-creation
# in helm.sh/hook-delete-policy (Argo CD reads both and takes the union). An unknown item is
# dropped silently; if nothing valid is left the policy becomes BeforeHookCreation. So a hook meant
# to be cleaned up stays behind, and a hook meant to be re-created may be re-applied instead (a
# leftover Complete Job then "succeeds" without running, or fails with "field is immutable").
#
# Only hooks are judged: on a non-hook the whole annotation is ignored, which SG110 reports.
package syncguard.rules.hook_delete_policy_unknown

meta := {
	"id": "SG106",
	"title": "Unknown hook-delete-policy value",
	"severity": "high",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD silently drops delete-policy values it does not know (they are case-sensitive) and falls",
		"back to BeforeHookCreation. The hook is then not deleted when the author expected it to be, or not",
		"re-created when expected: completed hooks pile up, or a leftover Job is re-applied instead of re-run.",
	]),
	"docs": "docs/rules/SG106.md",
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

violations contains {"msg": msg, "path": path} if {
	# cheap first tests, implied by the conditions below (`value in invalid` needs a non-empty list)
	input.sync.invalid_delete_policies != []
	input.sync.is_hook == true
	_applies
	object.get(_sync, "is_hook", false) == true
	invalid := {v | some v in _list("invalid_delete_policies"); is_string(v)}
	some key, style in _policy_annotations
	raw := _annotations[key]
	is_string(raw)
	some value in _csv(raw)
	value in invalid
	not value in _valid[style]
	path := sprintf("/metadata/annotations/%s", [replace(key, "/", "~1")])
	msg := sprintf(
		"%s: hook-delete-policy value \"%s\" in %s is not one Argo CD knows, so it is silently dropped and %s. %s",
		[_subject, value, key, _in_effect, _fix(value, style)],
	)
}

_policy_annotations := {
	"argocd.argoproj.io/hook-delete-policy": "argo",
	"helm.sh/hook-delete-policy": "helm",
}

_valid := {
	"argo": {"HookSucceeded", "HookFailed", "BeforeHookCreation"},
	"helm": {"hook-succeeded", "hook-failed", "before-hook-creation"},
}

_spelling := {
	"succeeded": {"argo": "HookSucceeded", "helm": "hook-succeeded"},
	"failed": {"argo": "HookFailed", "helm": "hook-failed"},
	"before": {"argo": "BeforeHookCreation", "helm": "before-hook-creation"},
}

_hint := {
	"argo": "Use HookSucceeded, HookFailed or BeforeHookCreation (case-sensitive).",
	"helm": "Use hook-succeeded, hook-failed or before-hook-creation.",
}

# What the misspelling most likely meant, by a lower-cased prefix without separators.
_meaning(value) := "succeeded" if {
	startswith(_normalize(value), "hooksucc")
} else := "failed" if {
	startswith(_normalize(value), "hookfail")
} else := "before" if {
	startswith(_normalize(value), "before")
}

# Three mutually exclusive cases rather than an else-chain: regorus's bytecode VM returns
# undefined for `else := x` after a body that indexes a missing key, which would silence SG106
# for values with no likely meaning (e.g. "OnSuccess").
_fix(value, style) := sprintf("Use \"%s\" (values are case-sensitive).", [s]) if {
	s := _spelling[_meaning(value)][style]
	lower(s) == lower(value)
}

_fix(value, style) := sprintf("Did you mean \"%s\"?", [s]) if {
	s := _spelling[_meaning(value)][style]
	lower(s) != lower(value)
}

_fix(value, style) := _hint[style] if not _meaning(value)

_normalize(value) := lower(replace(replace(replace(value, "-", ""), "_", ""), " ", ""))

_policies := [p | some p in _list("delete_policies"); is_string(p)]

default _in_effect := "the policy in effect is BeforeHookCreation"

_in_effect := sprintf("the policy in effect is %s", [_policies[0]]) if count(_policies) == 1

_in_effect := sprintf("the policies in effect are %s", [concat(", ", _policies)]) if count(_policies) > 1

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
