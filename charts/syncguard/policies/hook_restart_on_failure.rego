# SG103: a hook Job (pod template) or hook Pod with restartPolicy: OnFailure.
#
# With OnFailure a failing container is restarted inside the same pod (CrashLoopBackOff). Argo CD
# only turns CrashLoopBackOff into Degraded for restartPolicy Always, so a crash-looping
# OnFailure hook Pod stays Progressing — the hook stays Running — forever. A hook Job stays
# Progressing until Kubernetes gives up after backoffLimit restarts, and then deletes the pod
# together with the logs that would explain the failure. This is exactly the seed-000 incident.
# restartPolicy: Never makes every attempt a separate pod that ends Failed, keeps its logs and
# lets Argo CD see the failure. The message says whether activeDeadlineSeconds bounds the wait.
package syncguard.rules.hook_restart_on_failure

meta := {
	"id": "SG103",
	"title": "Hook Job or Pod with restartPolicy: OnFailure",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"A crash-looping pod with restartPolicy OnFailure never becomes Degraded in Argo CD (only Always",
		"is judged by CrashLoopBackOff), so a hook Pod stays Progressing forever and a hook Job stays",
		"Progressing until Kubernetes gives up — and then the pod and its logs are gone.",
		"With restartPolicy Never every attempt ends Failed, keeps its logs, and the hook fails visibly.",
	]),
	"docs": "docs/rules/SG103.md",
	"kinds": ["Job", "Pod"], # only these kinds can be reported: others skip the rule
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

violations contains {"msg": msg, "path": "/spec/template/spec/restartPolicy"} if {
	# cheap first tests, implied by the conditions below
	input.resource.kind == "Job"
	input.sync.is_hook == true
	input.resource.spec.template.spec.restartPolicy == "OnFailure"
	_hook
	_resource.kind == "Job"
	startswith(_str(_resource, "apiVersion"), "batch/")
	pod_spec := object.get(_spec, "template", {}).spec
	is_object(pod_spec)
	pod_spec.restartPolicy == "OnFailure"
	msg := sprintf(
		"%s is %s whose pod template sets restartPolicy: OnFailure: a failing container restarts in place, Argo CD shows the hook Progressing, not Degraded, until Kubernetes gives up and deletes the pod with its logs. %s Use restartPolicy: Never.",
		[_subject, _hook_label, _bound("SG101")],
	)
}

violations contains {"msg": msg, "path": "/spec/restartPolicy"} if {
	# cheap first tests, implied by the conditions below
	input.resource.kind == "Pod"
	input.sync.is_hook == true
	input.resource.spec.restartPolicy == "OnFailure"
	_hook
	_resource.kind == "Pod"
	_str(_resource, "apiVersion") == "v1"
	_spec.restartPolicy == "OnFailure"
	msg := sprintf(
		"%s is %s with restartPolicy: OnFailure: if it crash-loops, Argo CD shows it Progressing forever (CrashLoopBackOff counts as Degraded only for restartPolicy Always) and %s. %s Use restartPolicy: Never.",
		[_subject, _hook_label, _what_never_finishes, _bound("SG104")],
	)
}

_hook if {
	_applies
	object.get(_sync, "is_hook", false) == true
}

# What limits the wait: the object's own spec.activeDeadlineSeconds (Job or Pod), or nothing.
_bound(rule_id) := sprintf("spec.activeDeadlineSeconds (%v s) bounds the wait.", [d]) if {
	d := object.get(_spec, "activeDeadlineSeconds", null)
	is_number(d)
} else := sprintf("Nothing bounds the wait: spec.activeDeadlineSeconds is not set (see %s).", [rule_id])

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

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
