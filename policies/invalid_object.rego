# SG401: an object the API server refuses, so the sync fails when Argo CD applies it.
#
# Judges the validity facts (input.validity, model::validity in the semantics crate): built-in
# kinds decoded into the Kubernetes types (a value of the wrong JSON type), custom resources
# against the openAPIV3Schema of a CRD in the same input (types, enums, required fields), the
# metadata rules every kind shares (label keys and values, names, annotation size), and API
# versions Kubernetes no longer serves.
#
# An unknown field is only an error for a server-side apply (the API server's structured merge
# refuses "field not declared in schema"). Argo CD's client-side apply sends no field-validation
# directive (gitops-engine utils/kube/resource_ops.go sets only the client validator), so the API
# server drops an unknown field with a warning; that leaves a difference Argo CD reports forever,
# which is SG305's to say.
#
# With an API server to ask (check --cluster, --ephemeral-cluster) the evidence is the server's own
# refusal, with its message for each field (model::validity::server); an object it accepted has
# no refusal left to judge.
#
# Only rendered manifests are judged: an admitted object has already been decoded by the API
# server, and a live one was accepted.
package syncguard.rules.invalid_object

meta := {
	"id": "SG401",
	"title": "Object the API server refuses",
	"severity": "high",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD applies every object of the sync; one the API server refuses (a number where a string belongs,",
		"an invalid label value, a field the custom resource's schema does not allow, an API version Kubernetes",
		"no longer serves) fails the sync there, and every later wave and PostSync hook waits for the next attempt.",
	]),
	"docs": "docs/rules/SG401.md",
}

violations contains {"msg": msg, "path": v.pointer} if {
	input.context.source == "check"
	is_object(input.validity) # cheap first test: most objects have no violation, and no validity fact
	_applies
	some v in _violations
	v.kind in {"wrong_type", "not_allowed", "missing_field", "not_served"}
	msg := sprintf("%s: the API server refuses it, so the sync fails here: %s%s (%s). %s", [
		_subject, _at(v.pointer), v.message, _evidence, _fix(v),
	])
}

# A change the API server refuses from the live object (review --ephemeral-cluster: the head's
# object dry-run against the base revision's, applied for real on a throwaway server).
violations contains {"msg": msg, "path": v.pointer} if {
	input.context.source == "check"
	is_object(input.validity) # cheap first test: most objects have no violation, and no validity fact
	_applies
	some v in _violations
	v.kind == "immutable"
	msg := sprintf("%s: the API server refuses this change from the live object, so every sync of it fails: %s%s (%s, the live object being the base revision's). %s", [
		_subject, _at(v.pointer), v.message, _evidence, _immutable_fix,
	])
}

_immutable_fix := "Argo CD's Replace=true does not help (a replace is refused the same way). Either delete and re-create the object (sync options Force=true,Replace=true on it; its pods are replaced and, for a StatefulSet, not its volumes), or give it a new name so the old one is pruned; for a Job, make it a hook with BeforeHookCreation or let Argo CD delete it first."


violations contains {"msg": msg, "path": v.pointer} if {
	input.context.source == "check"
	is_object(input.validity) # cheap first test: most objects have no violation, and no validity fact
	_applies
	where := _server_side_source
	some v in _violations
	v.kind == "unknown_field"
	msg := sprintf("%s: %s%s (%s). The object is applied server-side (%s), and a server-side apply refuses a field its type does not declare (\"field not declared in schema\"), so the sync fails here. Remove the field or fix its spelling or indentation.", [
		_subject, _at(v.pointer), v.message, _evidence, where,
	])
}

_at(pointer) := "" if pointer == ""

_at(pointer) := sprintf("%s: ", [pointer]) if pointer != ""

_fix(v) := "Set the field the API server names." if {
	v.kind == "missing_field"
	input.validity.evidence.source == "server"
} else := "Values under a Secret's data must be base64: put plain text under stringData instead, or encode it (Helm: b64enc)." if {
	v.kind == "wrong_type"
	startswith(v.pointer, "/data/")
	input.resource.kind == "Secret"
} else := _fix_kind(v.kind)

_fix_kind("wrong_type") := "Quote the value in the template (a number or boolean from Helm values must be rendered with quote) or give it the type the field takes."

_fix_kind("not_allowed") := "Use a value the field allows."

_fix_kind("missing_field") := "Set the field, or check that the object is the version the CRD describes."

_fix_kind("not_served") := "Move the manifest to the replacement API version."

_violations := vs if {
	validity := object.get(input, "validity", {})
	is_object(validity)
	vs := object.get(validity, "violations", [])
	is_array(vs)
} else := []

_evidence := sprintf("Kubernetes %s API types", [e.types]) if {
	e := input.validity.evidence
	e.source == "kubernetes"
} else := sprintf("schema of version %s in CRD %s, in the input", [e.version, e.crd]) if {
	e := input.validity.evidence
	e.source == "crd"
} else := sprintf("schema of CRD %s in Argo CD %s", [e.crd, e.release]) if {
	e := input.validity.evidence
	e.source == "argo_cd"
} else := sprintf("the Kubernetes %s API server refused it", [e.version]) if {
	e := input.validity.evidence
	e.source == "server"
} else := sprintf("removed in Kubernetes %s", [e.since]) if {
	e := input.validity.evidence
	e.source == "removed"
} else := "metadata rules every kind shares"

_server_side_source := "its own ServerSideApply=true" if {
	"ServerSideApply=true" in _resource_options
} else := "the Application's ServerSideApply=true" if {
	"ServerSideApply=true" in _app_context_options
	not "ServerSideApply=false" in _resource_options
}

_resource_options := items if {
	options := object.get(_sync, "sync_options", {})
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
} else := []

_app_context_options := items if {
	app := object.get(input, "app", {})
	is_object(app)
	options := object.get(app, "sync_options", {})
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
} else := []

# ---- input helpers (the same in every rule file, trimmed to what this rule uses) ----

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

_subject := sprintf("%s %s", [_kind, _qualified_name])
