# SG102: a hook Job that leaves spec.backoffLimit to the Kubernetes default.
#
# Unset, backoffLimit is 6, and the Job controller waits 10 s, 20 s, 40 s ... (capped at 6 min)
# between attempts; with restartPolicy OnFailure the container restarts count as well. A hook
# whose dependency is missing (seed 000: a Secret created later in the Sync phase) therefore keeps
# the whole sync in "waiting for completion of hook" for many minutes before it can fail. An
# explicit, small backoffLimit makes a broken hook fail fast and visibly.
#
# Jobs that set spec.backoffLimitPerIndex (Indexed Jobs with per-index retries) have chosen their
# retry policy on purpose and are not reported.
#
# At admission the API server has already applied its defaults: a Job without backoffLimit
# arrives with backoffLimit 6. When the client sent its own copy of the object (input.declared,
# from kubectl's last-applied-configuration, which Argo CD's client-side apply writes), a 6 that
# the declared object does not set is Kubernetes' default, not a choice, and is replaced.
package syncguard.rules.hook_job_backoff_limit

meta := {
	"id": "SG102",
	"title": "Hook Job without an explicit spec.backoffLimit",
	"severity": "low",
	"action": "mutate",
	"why": concat(" ", [
		"Without spec.backoffLimit Kubernetes retries a failing Job pod 6 times with back-off growing up to",
		"6 minutes, and Argo CD waits for the hook the whole time: a hook that can never succeed",
		"(missing Secret, wrong image, unreachable database) holds the sync for a long time before it fails.",
		"An explicit small limit makes the hook, and with it the sync, fail fast with a clear reason.",
	]),
	"docs": "docs/rules/SG102.md",
	"kinds": ["Job"], # only these kinds can be reported: others skip the rule
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

# The value proposed in messages and patches: data.syncguard.config.defaults, else this fallback.
default backoff_limit := 2

backoff_limit := v if {
	v := object.get(_defaults, "hook_job_backoff_limit", null)
	is_number(v)
	v >= 0
	round(v) == v
}

violations contains {"msg": msg, "path": "/spec/backoffLimit"} if {
	input.resource.kind == "Job" # cheap first tests, implied by _hook_job below
	input.sync.is_hook == true
	_hook_job
	_backoff_limit_missing
	msg := sprintf(
		"%s is %s without spec.backoffLimit: Kubernetes retries a failing pod up to 6 times, with back-off growing to 6 minutes, while Argo CD waits for the hook. Set spec.backoffLimit explicitly (suggested: %v).",
		[_subject, _hook_label, backoff_limit],
	)
}

# `add` when the field is absent, `replace` when the API server put in its default; a value the
# user chose is never touched.
patches contains {"op": "add", "path": "/spec/backoffLimit", "value": backoff_limit} if {
	input.resource.kind == "Job" # cheap first tests, implied by _hook_job below
	input.sync.is_hook == true
	_hook_job
	_backoff_limit_unset(_spec)
	_spec_is_object
}

# The `test` states the value being replaced: the patch applies only to the 6 judged here, and
# may lower it (syncguard's never-lower guard spares tested paths; src/mutate.rs).
patches contains op if {
	input.resource.kind == "Job" # cheap first tests, implied by _hook_job below
	input.sync.is_hook == true
	_hook_job
	_backoff_limit_defaulted
	some op in [
		{"op": "test", "path": "/spec/backoffLimit", "value": 6},
		{"op": "replace", "path": "/spec/backoffLimit", "value": backoff_limit},
	]
}

_backoff_limit_missing if _backoff_limit_unset(_spec)

_backoff_limit_missing if _backoff_limit_defaulted

_backoff_limit_unset(spec) if {
	object.get(spec, "backoffLimit", null) == null
	object.get(spec, "backoffLimitPerIndex", null) == null
}

# Kubernetes' default (6) in the admitted object, and no backoffLimit in what the client declared.
_backoff_limit_defaulted if {
	object.get(_spec, "backoffLimit", null) == 6
	declared_spec := object.get(object.get(input, "declared", {}), "spec", null)
	is_object(declared_spec)
	_backoff_limit_unset(declared_spec)
}

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

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
