# SG107: an argocd.argoproj.io/sync-wave that is not a plain integer.
#
# Argo CD parses the wave with Go's strconv.Atoi: an optional sign and decimal digits, nothing
# else. " 2", "1.5", "0x10", "1_0" and "" all fail, and the failure is silent: the object falls
# back to helm.sh/hook-weight if that parses, else to wave 0. An object that was meant to wait for
# an earlier wave can so run together with it, or before it. The message says which wave Argo CD
# will really use. An unparsable helm.sh/hook-weight is reported too, but only when it is the
# value Argo CD would consult (no valid sync-wave).
package syncguard.rules.sync_wave_invalid

meta := {
	"id": "SG107",
	"title": "sync-wave that is not a plain integer",
	"severity": "high",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD reads sync-wave (and, as a fallback, helm.sh/hook-weight) with Go's strconv.Atoi and",
		"silently uses 0 (or the hook weight) when it does not parse: no error, no event. The object then",
		"runs in a different wave than the author planned, typically before something it depends on.",
	]),
	"docs": "docs/rules/SG107.md",
}

violations contains {"msg": msg, "path": "/metadata/annotations/argocd.argoproj.io~1sync-wave"} if {
	input.sync.wave_valid == false # cheap first test, implied by the object.get below
	_applies
	object.get(_sync, "wave_valid", true) == false
	raw := object.get(_sync, "wave_raw", null)
	is_string(raw)
	msg := sprintf(
		"%s: argocd.argoproj.io/sync-wave \"%s\" is not a plain integer, so Argo CD silently uses %s instead. %s",
		[_subject, raw, _fallback, _fix(raw)],
	)
}

violations contains {"msg": msg, "path": "/metadata/annotations/helm.sh~1hook-weight"} if {
	is_string(input.sync.invalid_hook_weight) # cheap first test, implied by the object.get below
	_applies
	_weight_consulted
	raw := object.get(_sync, "invalid_hook_weight", null)
	is_string(raw)
	msg := sprintf(
		"%s: helm.sh/hook-weight \"%s\" is not a plain integer. Argo CD uses the hook weight as the sync wave when argocd.argoproj.io/sync-wave is missing or invalid, so it silently uses wave 0 instead. %s",
		[_subject, raw, _fix(raw)],
	)
}

# Argo CD only looks at helm.sh/hook-weight when sync-wave is absent or does not parse.
_weight_consulted if object.get(_sync, "wave_raw", null) == null

_weight_consulted if object.get(_sync, "wave_valid", true) == false

default _fallback := "wave 0"

_fallback := sprintf("wave %v from helm.sh/hook-weight", [w]) if {
	object.get(_sync, "wave_source", "") == "hook-weight"
	w := object.get(_sync, "wave", 0)
	is_number(w)
}

_integer := `^[+-]?[0-9]+$`

_fix(raw) := "The value is empty: set a whole number or remove the annotation." if {
	trim_space(raw) == ""
} else := sprintf("Remove the spaces: use \"%s\".", [trimmed]) if {
	trimmed := trim_space(raw)
	trimmed != raw
	regex.match(_integer, trimmed)
} else := "The number is out of range: use a small whole number." if {
	regex.match(_integer, raw)
} else := "Waves are whole numbers: renumber instead (for example 10, 15, 20 rather than 1, 1.5, 2)." if {
	regex.match(`^[+-]?([0-9]+\.[0-9]*|\.[0-9]+)$`, raw)
} else := "Use a plain whole number such as \"-1\", \"0\" or \"5\" (no spaces, units or other characters)."

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
