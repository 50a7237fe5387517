# SG112: Jobs whose name or lifetime fights Argo CD.
#
# Three separate findings, each with its own severity (meta.severity is the worst):
#  1. metadata.name and metadata.generateName together (low): the API server uses name and ignores
#     generateName, so the author's "new Job every sync" never happens.
#  2. A fixed-name Job that is a normal resource, not a hook (info): Argo CD applies it like a
#     Deployment, but a Job's spec.template is immutable, so the first sync after the template
#     changes fails with "field is immutable" (argo-cd#7430). Not reported when the Job has
#     sync-options Force=true,Replace=true (delete and re-create), which Argo CD documents for this.
#  3. spec.ttlSecondsAfterFinished on a normal Job (medium): Kubernetes deletes the finished Job,
#     Argo CD sees the resource Missing, the app goes OutOfSync and the next (auto-)sync creates and
#     runs the Job again — for ever. Hooks are exempt: their lifetime is Argo CD's business.
# Jobs created by a controller (ownerReferences, e.g. from a CronJob) are not Argo CD's and are
# never reported; outside `syncguard check` (manifests bound for Argo CD), cases 2 and 3 also need
# evidence that Argo CD manages the Job (tracking id, instance label, or a known owning app).
package syncguard.rules.job_lifecycle

meta := {
	"id": "SG112",
	"title": "Job naming or TTL that fights Argo CD",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"A Job's pod template is immutable and Argo CD treats a non-hook Job like any other resource: a fixed",
		"name makes the next sync with a changed template fail, and ttlSecondsAfterFinished makes the Job",
		"disappear so Argo CD sees it Missing and runs it again on every sync. name plus generateName",
		"silently means name.",
	]),
	"docs": "docs/rules/SG112.md",
	"kinds": ["Job"], # only these kinds can be reported: others skip the rule
}

# 1. Both names.
violations contains {"msg": msg, "path": "/metadata/generateName", "severity": "low"} if {
	# cheap first tests, implied by _job and _generate_name != "" below
	input.resource.kind == "Job"
	input.resource.metadata.generateName != ""
	_job
	_name != ""
	_generate_name != ""
	msg := sprintf(
		"%s sets both metadata.name and metadata.generateName: Kubernetes and Argo CD use the name and ignore generateName, so every sync targets the same Job instead of a new one. %s",
		[_subject, _both_names_fix],
	)
}

_both_names_fix := "Remove one: keep name (BeforeHookCreation replaces the Job each sync) or keep generateName (add HookSucceeded so old runs are cleaned up)." if {
	object.get(_sync, "is_hook", false) == true
} else := "Remove generateName: a resource that is not a hook needs a fixed name."

# 2. A fixed-name Job managed as a normal resource.
violations contains {"msg": msg, "path": "/spec/template", "severity": "info"} if {
	# cheap first tests, implied by _managed_normal_job below (is_hook absent counts as false, so
	# the test is `not ... == true`)
	input.resource.kind == "Job"
	not input.sync.is_hook == true
	_managed_normal_job
	_name != ""
	not _force_replace
	msg := sprintf(
		"%s is a normal resource, not a hook, with a fixed name: a Job's spec.template is immutable, so the first sync after the template changes (e.g. a new image tag) fails with \"field is immutable\". Make it a hook (argocd.argoproj.io/hook: Sync, re-created each sync) or add argocd.argoproj.io/sync-options: Force=true,Replace=true.",
		[_subject],
	)
}

# 3. A TTL on a Job managed as a normal resource.
violations contains {"msg": msg, "path": "/spec/ttlSecondsAfterFinished", "severity": "medium"} if {
	# cheap first tests, implied by _managed_normal_job and is_number(ttl) below
	input.resource.kind == "Job"
	is_number(input.resource.spec.ttlSecondsAfterFinished)
	_managed_normal_job
	ttl := object.get(_spec, "ttlSecondsAfterFinished", null)
	is_number(ttl)
	msg := sprintf(
		"%s is a normal resource, not a hook, with spec.ttlSecondsAfterFinished: %v: Kubernetes deletes it %v s after it finishes, Argo CD then sees it Missing (OutOfSync) and the next sync runs it again, in a loop. Remove ttlSecondsAfterFinished, or make it a hook (argocd.argoproj.io/hook: Sync) so Argo CD owns its cleanup.",
		[_subject, ttl, ttl],
	)
}

_job if {
	_applies
	_resource.kind == "Job"
	startswith(_str(_resource, "apiVersion"), "batch/")
	not _owned
}

_owned if {
	refs := object.get(_metadata, "ownerReferences", [])
	is_array(refs)
	count(refs) > 0
}

_managed_normal_job if {
	_job
	object.get(_sync, "is_hook", false) == false
	"Sync" in _list("phases")
	_argo_managed
}

_force_replace if {
	options := object.get(_sync, "sync_options", {})
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
	"Force=true" in items
	"Replace=true" in items
}

# Manifests checked by `syncguard check` are bound for Argo CD; live objects must show it.
_argo_managed if {
	context := object.get(input, "context", {})
	is_object(context)
	object.get(context, "source", "") == "check"
}

_argo_managed if object.get(_tracking, "id", null) != null

_argo_managed if object.get(_tracking, "instance_label", null) != null

_argo_managed if is_object(input.app)

default _tracking := {}

_tracking := t if {
	t := object.get(_sync, "tracking", {})
	is_object(t)
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
