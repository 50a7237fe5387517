# SG203: a custom resource whose CustomResourceDefinition is not in the Application, without
# SkipDryRunOnMissingResource=true.
#
# Before the first step Argo CD dry-runs every task. A kind the cluster does not serve (its CRD
# is not installed) fails that dry-run unless the CRD is in the same sync (Argo CD then skips the
# dry-run for that task and applies the CRD first) or SkipDryRunOnMissingResource=true is set on
# the object or the Application — and the failure is not limited to that object: the whole
# operation ends with "one or more synchronization tasks are not valid" and nothing is applied
# (spec §2.8, conformance case C36). Typical cause: an operator chart and its custom resources in
# one Application with the CRDs left out (Helm `--skip-crds`, `crds/` not rendered), or custom
# resources synced before the Application that installs their CRDs.
#
# Only judged on manifests bound for Argo CD (`syncguard check`): an object that reaches the
# admission webhook or the reconciler has a kind the API server already serves, so its CRD is
# installed. Argo CD's own kinds (Application, AppProject, ApplicationSet) are installed with
# Argo CD and never reported.
package syncguard.rules.custom_resource_without_crd

meta := {
	"id": "SG203",
	"title": "Custom resource without its CRD in the Application",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD dry-runs every object before it applies anything. A custom resource whose CRD is neither",
		"installed nor part of the same sync fails that dry-run, and the whole sync stops with 'one or more",
		"synchronization tasks are not valid' unless SkipDryRunOnMissingResource=true is set.",
	]),
	"docs": "docs/rules/SG203.md",
}

violations contains {"msg": msg, "path": _via(ref)} if {
	# cheap first tests: `some ref in _refs` and count(_list("phases")) > 0 below need both non-empty;
	# the source tests are _desired_state's (OPA makes `not x in s` undefined when x is)
	input.refs != []
	input.sync.phases != []
	not input.context.source == "admission"
	not input.context.source == "audit"
	_applies
	_desired_state
	count(_list("phases")) > 0
	not _skip_dry_run
	not _installed_with_argo_cd
	some ref in _refs
	is_object(ref)
	ref.role == "definition"
	target := object.get(ref, "target", null)
	is_object(target)
	target.resolution == "missing"
	msg := sprintf(
		"%s needs the CRD for %s, which is not in this Application: if that CRD is not installed in the cluster when Argo CD syncs, the dry-run of this object fails and the whole sync stops with \"one or more synchronization tasks are not valid\" (nothing is applied). Ship the CRD in this Application (Argo CD applies it first); or, if another Application installs it, make sure that one syncs first (a lower sync-wave in the app-of-apps) and exempt this object; or add SkipDryRunOnMissingResource=true (argocd.argoproj.io/sync-options on this object, or the Application's syncOptions) when the CRD is created during the sync, before this object's wave.",
		[_subject, _group_kind],
	)
}

# Manifests bound for Argo CD: anything but an admission request or a live object.
_desired_state if not _source in {"admission", "audit"}

default _source := ""

_source := s if {
	context := object.get(input, "context", {})
	is_object(context)
	s := object.get(context, "source", "")
}

_skip_option := "SkipDryRunOnMissingResource=true"

_skip_dry_run if _skip_option in _option_items(object.get(_sync, "sync_options", {}))

_skip_dry_run if {
	is_object(input.app)
	_skip_option in _option_items(object.get(input.app, "sync_options", {}))
}

_option_items(options) := items if {
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
} else := []

_installed_with_argo_cd if {
	_group == "argoproj.io"
	_kind in {"Application", "AppProject", "ApplicationSet"}
}

# "cert-manager.io/Certificate"
_group_kind := concat("/", [_group, _kind]) if _group != ""

else := _kind

_group := g if {
	parts := split(_str(_resource, "apiVersion"), "/")
	count(parts) == 2
	g := parts[0]
} else := ""

_via(ref) := v if {
	v := _str(ref, "via")
	startswith(v, "/")
} else := "/apiVersion"

default _refs := []

_refs := r if {
	r := input.refs
	is_array(r)
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

# "Certificate app-foo/svc-foo-tls"
_subject := sprintf("%s %s", [_kind, _qualified_name])
