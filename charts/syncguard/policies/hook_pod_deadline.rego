# SG104: a bare hook Pod without spec.activeDeadlineSeconds.
#
# A hook Pod is Running for Argo CD while it is Pending or Running (restartPolicy Never or
# OnFailure), and no controller ever gives up on a bare Pod: an image that never pulls, a process
# that hangs or an OnFailure container that crash-loops keeps the sync waiting forever. The Pod's
# own spec.activeDeadlineSeconds is the only bound, so we propose it as a patch. (Hook Jobs are
# SG101.)
package syncguard.rules.hook_pod_deadline

meta := {
	"id": "SG104",
	"title": "Hook Pod without spec.activeDeadlineSeconds",
	"severity": "medium",
	"action": "mutate",
	"why": concat(" ", [
		"Argo CD waits for a hook Pod until it Succeeds or Fails, with no timeout of its own, and nothing",
		"in Kubernetes ever gives up on a bare Pod that hangs, waits for an image or restarts on failure.",
		"The sync then waits forever. spec.activeDeadlineSeconds makes the kubelet fail the Pod after a",
		"bounded time, so the hook and the sync fail with a reason instead of hanging.",
	]),
	"docs": "docs/rules/SG104.md",
	"kinds": ["Pod"], # only these kinds can be reported: others skip the rule
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

# The value proposed in messages and patches: data.syncguard.config.defaults, else this fallback.
default deadline_seconds := 900

deadline_seconds := v if {
	v := object.get(_defaults, "hook_pod_active_deadline_seconds", null)
	is_number(v)
	v >= 1
	round(v) == v
}

violations contains {"msg": msg, "path": "/spec/activeDeadlineSeconds"} if {
	input.resource.kind == "Pod" # cheap first tests, implied by _hook_pod below
	input.sync.is_hook == true
	_hook_pod
	_deadline_missing
	msg := sprintf(
		"%s is %s without spec.activeDeadlineSeconds: if it hangs, never pulls its image or keeps restarting, Argo CD waits for it forever. Set spec.activeDeadlineSeconds (suggested: %v).",
		[_subject, _hook_label, deadline_seconds],
	)
}

# Only `add`, only when the field is absent: an existing value is never touched.
patches contains {"op": "add", "path": "/spec/activeDeadlineSeconds", "value": deadline_seconds} if {
	input.resource.kind == "Pod" # cheap first tests, implied by _hook_pod below
	input.sync.is_hook == true
	_hook_pod
	_deadline_missing
	_spec_is_object
}

_deadline_missing if object.get(_spec, "activeDeadlineSeconds", null) == null

_hook_pod if {
	_applies
	object.get(_sync, "is_hook", false) == true
	_resource.kind == "Pod"
	_str(_resource, "apiVersion") == "v1"
}

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

default _defaults := {}

_defaults := d if {
	d := data.syncguard.config.defaults
	is_object(d)
}

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

default _spec := {}

_spec := s if {
	s := object.get(_resource, "spec", {})
	is_object(s)
}

_spec_is_object if is_object(object.get(_resource, "spec", null))

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
