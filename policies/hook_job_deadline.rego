# SG101: a hook Job without spec.activeDeadlineSeconds.
#
# Argo CD has no timeout of its own for a hook (controller.sync.timeout.seconds defaults to 0 =
# none): a hook Job is "Running" until Kubernetes gives it a Complete, Failed or Suspended
# condition. A Job whose pod hangs, or keeps failing inside its backoffLimit, never gets one, and
# every later step of the sync waits behind it (seed 000: a PreSync migration stalled a sync for
# 40 minutes). spec.activeDeadlineSeconds is the only bound that covers both a hang and a retry
# loop, so we propose it as a patch.
#
# Applies to every hook Job (PreSync, Sync, PostSync, SyncFail, PreDelete, PostDelete), including
# hooks whose annotation Argo CD cannot read (SG105 reports those) — once fixed they run too.
package syncguard.rules.hook_job_deadline

meta := {
	"id": "SG101",
	"title": "Hook Job without spec.activeDeadlineSeconds",
	"severity": "medium",
	"action": "mutate",
	"why": concat(" ", [
		"Argo CD waits for a hook Job until Kubernetes marks it Complete or Failed, with no timeout of its own.",
		"A hook Job whose pod hangs or keeps retrying is never marked either, so the sync stays",
		"'waiting for completion of hook' forever and nothing after the hook is applied.",
		"spec.activeDeadlineSeconds makes Kubernetes fail the Job after a bounded time, which lets Argo CD",
		"fail the sync (and run SyncFail hooks) instead of hanging.",
	]),
	"docs": "docs/rules/SG101.md",
	"kinds": ["Job"], # only these kinds can be reported: others skip the rule
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

# The value proposed in messages and patches: data.syncguard.config.defaults, else this fallback
# (a default must be a constant, so the fallback is written here and not in a separate rule).
default deadline_seconds := 900

deadline_seconds := v if {
	v := object.get(_defaults, "hook_job_active_deadline_seconds", null)
	is_number(v)
	v >= 1
	round(v) == v
}

violations contains {"msg": msg, "path": "/spec/activeDeadlineSeconds"} if {
	input.resource.kind == "Job" # cheap first tests, implied by _hook_job below
	input.sync.is_hook == true
	_hook_job
	_deadline_missing
	msg := sprintf(
		"%s is %s without spec.activeDeadlineSeconds: if its pod hangs or keeps retrying, Argo CD waits for it forever and %s. Set spec.activeDeadlineSeconds (suggested: %v).%s",
		[_subject, _hook_label, _what_never_finishes, deadline_seconds, _delete_hook_note],
	)
}

# Only `add`, only when the field is absent: an existing value is never touched.
patches contains {"op": "add", "path": "/spec/activeDeadlineSeconds", "value": deadline_seconds} if {
	input.resource.kind == "Job" # cheap first tests, implied by _hook_job below
	input.sync.is_hook == true
	_hook_job
	_deadline_missing
	_spec_is_object
}

_deadline_missing if object.get(_spec, "activeDeadlineSeconds", null) == null

_hook_job if {
	_applies
	object.get(_sync, "is_hook", false) == true
	_resource.kind == "Job"
	startswith(_str(_resource, "apiVersion"), "batch/")
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

# Delete hooks run when the Application is deleted, not during a sync.
_what_never_finishes := "the Application's deletion never finishes" if {
	count(_hook_phases) > 0
	every t in _hook_phases {
		t in {"PreDelete", "PostDelete"}
	}
} else := "the sync never finishes"

# What a deadline changes for a delete hook: Argo CD deletes a failed delete hook and runs it
# again (controller/hook.go executeHooks, "Delete failed hooks to allow retry"), so the deadline
# turns a silent hang into a visible failure and a retry; a hook that always fails still holds
# the deletion (held-out review of issue 37).
_delete_hook_note := " With a deadline Argo CD sees the failure, deletes the hook and runs it again, so a hang that passes lets the deletion finish; a hook that always fails still holds it, now with a DeletionError that says why." if {
	_what_never_finishes == "the Application's deletion never finishes"
} else := ""

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
