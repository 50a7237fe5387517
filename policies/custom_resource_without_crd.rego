# SG203: a custom resource Argo CD cannot apply for want of its CustomResourceDefinition.
#
# Three findings (meta.severity is the lowest; each finding carries its own severity/action):
#
#  1. The CRD is not in the Application, without SkipDryRunOnMissingResource=true (medium, warn).
#     Before the first step Argo CD dry-runs every task. A kind the cluster does not serve (its
#     CRD is not installed) fails that dry-run unless the CRD is in the same sync (Argo CD then
#     skips the dry-run for that task and applies the CRD first) or SkipDryRunOnMissingResource=true
#     is set on the object or — from Argo CD 3.1 (argo-cd#22679, gitops-engine#712) — on the
#     Application; before 3.1 the Application-level option is ignored (argo-cd#15095). The failure
#     is not limited to that object: the whole operation ends with "one or more synchronization
#     tasks are not valid" and nothing is applied (spec §2.8, conformance case C36). Typical cause:
#     an operator chart and its custom resources in one Application with the CRDs left out.
#  2. The same, for a kind whose CRD a controller creates at runtime, so that no Application can
#     ship it (medium, warn, with that fix instead of "ship the CRD"): Gatekeeper constraints
#     (constraints.gatekeeper.sh, a CRD per ConstraintTemplate: the case Argo CD's docs give for
#     SkipDryRunOnMissingResource, argo-cd#2873), and Crossplane provider kinds (*.crossplane.io
#     other than Crossplane's own groups, and the Upbound provider families *.aws/gcp/azure/
#     azuread(.m).upbound.io), whose CRDs Crossplane's package manager installs from the Provider
#     package. On a fresh cluster the CRD does not exist at the dry-run, and if the object that
#     makes it appear (the ConstraintTemplate, the Provider) is in the same sync, it is never
#     applied either: only the skip option gets the sync past the dry-run.
#  3. The CRD is in the Application but does not serve the object's version (high, "action":
#     "deny"): Argo CD matches the CRD to the object by group and kind only (sync_context.go
#     hasCRDOfGroupKind), so it skips the dry-run, applies the CRD, and then the apply of this
#     object fails (the API server serves no such group/version; kubectl's "no matches for kind"),
#     and the operation fails with "one or more objects failed to apply". Certain: the CRD in the input is what the cluster will serve.
#     Uses the contract fact input.refs[].target.versions ([{name, served, storage}]; [] = unknown,
#     not judged).
#
# With `check --require-crds` (the fact input.context.require_crds) the cluster is declared to have
# no CRD beyond those in the input, so in 1. and 2. the CRD is known not to be installed: the
# finding states that Argo CD will refuse the sync, as a fact, and is a denial (high, "action":
# "deny"). Without it the CRD may well be installed (usually by another Application), so the
# finding warns and says "if".
#
# Only judged on manifests bound for Argo CD (`syncguard check`): an object that reaches the
# admission webhook or the reconciler has a kind the API server already serves, so its CRD is
# installed. Argo CD's own kinds (Application, AppProject, ApplicationSet) are installed with
# Argo CD and never reported as missing.
package syncguard.rules.custom_resource_without_crd

meta := {
	"id": "SG203",
	"title": "Custom resource without its CRD, or at a version its CRD does not serve",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD dry-runs every object before it applies anything. A custom resource whose CRD is neither",
		"installed nor part of the same sync fails that dry-run, and the whole sync stops with 'one or more",
		"synchronization tasks are not valid' unless SkipDryRunOnMissingResource=true is set. A custom resource",
		"at a version its CRD does not serve fails when Argo CD applies it, whatever the options.",
	]),
	"docs": "docs/rules/SG203.md",
}

# 1. and 2. The CRD is not in the Application.
violations contains object.union({"msg": msg, "path": _via(ref)}, _certainty) if {
	# cheap first tests: `some ref in _refs` and count(_list("phases")) > 0 below need both non-empty;
	# the source tests are _desired_state's (OPA makes `not x in s` undefined when x is)
	input.refs != []
	input.sync.phases != []
	input.refs[_].role == "definition" # only custom resources reference their CRD
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
	msg := _missing_msg
}

_missing_msg := sprintf(
	"%s is a %s, whose CRD %s, so no Application can ship it, and the cluster does not have it (--require-crds declares that only the CRDs in the input exist). The dry-run of this object fails with \"the server could not find the requested resource\", and Argo CD refuses the whole sync with \"one or more synchronization tasks are not valid\" before anything is applied, that object included, so retrying never gets past it. Fix: add SkipDryRunOnMissingResource=true (%s), give this object a sync-wave after whatever makes the CRD appear, and give the Application a syncPolicy.retry: until the CRD exists the apply of this object still fails.%s",
	[_subject, _group_kind, _runtime_installer, _skip_where, _app_option_note],
) if {
	_require_crds
	_runtime_installer
} else := sprintf(
	"%s needs the CRD for %s, which is neither in this Application nor installed in the cluster (--require-crds declares that only the CRDs in the input exist). The dry-run of this object fails, and Argo CD refuses the whole sync with \"one or more synchronization tasks are not valid\" (nothing is applied). Ship the CRD in this Application (Argo CD applies it first); or have another Application install it before this one syncs (a lower sync-wave in the app-of-apps); or add SkipDryRunOnMissingResource=true (%s) when the CRD is created during the sync, before this object's wave.%s",
	[_subject, _group_kind, _skip_where, _app_option_note],
) if {
	_require_crds
} else := sprintf(
	"%s is a %s, whose CRD %s, so no Application can ship it. Where that has not happened yet when Argo CD syncs (a new cluster, or the object that makes it appear is in this same sync), the dry-run of this object fails with \"the server could not find the requested resource\" and the whole sync stops with \"one or more synchronization tasks are not valid\" before anything is applied, that object included, so retrying never gets past it. Fix: add SkipDryRunOnMissingResource=true (%s), give this object a sync-wave after whatever makes the CRD appear, and give the Application a syncPolicy.retry: until the CRD exists the apply of this object still fails.%s",
	[_subject, _group_kind, _runtime_installer, _skip_where, _app_option_note],
) if {
	_runtime_installer
} else := sprintf(
	"%s needs the CRD for %s, which no Application of this repository renders: unless the cluster's platform installs it before Argo CD syncs, the dry-run of this object fails and the whole sync stops with \"one or more synchronization tasks are not valid\" (nothing is applied). Ship the CRD in this Application (Argo CD applies it first), or in an Application that syncs first (a lower sync-wave in the app-of-apps); or add SkipDryRunOnMissingResource=true (%s) when the CRD is created during the sync, before this object's wave.%s",
	[_subject, _group_kind, _skip_where, _app_option_note],
) if {
	_repository
} else := sprintf(
	"%s needs the CRD for %s, which is not in this Application: if that CRD is not installed in the cluster when Argo CD syncs, the dry-run of this object fails and the whole sync stops with \"one or more synchronization tasks are not valid\" (nothing is applied). Ship the CRD in this Application (Argo CD applies it first); or, if another Application installs it, make sure that one syncs first (a lower sync-wave in the app-of-apps) and exempt this object; or add SkipDryRunOnMissingResource=true (%s) when the CRD is created during the sync, before this object's wave.%s",
	[_subject, _group_kind, _skip_where, _app_option_note],
)

# 4. The CRD is not in this Application but another Application of the input installs it
#    (`review`, `check --render`: input.refs[].target.resolution "other_app"). Whether this
#    object's dry-run meets the CRD depends on which Application syncs first, and only an
#    app-of-apps orders them (the sync-waves of the Application objects in one parent), and a
#    parent's waves wait for its children only when argocd-cm gives Applications a health check
#    (SG208): installed by an earlier wave that is waited for, nothing to say; by a later wave
#    that waits, the first sync on a new cluster fails (medium); in the same wave, or in an
#    earlier or later one when waves do not wait, both sync at once (low); in no known order, info.
violations contains {"msg": msg, "path": _via(ref), "severity": severity} if {
	input.refs != []
	input.sync.phases != []
	input.refs[_].role == "definition"
	not input.context.source == "admission"
	not input.context.source == "audit"
	_applies
	_desired_state
	count(_list("phases")) > 0
	not _skip_dry_run
	some ref in _refs
	is_object(ref)
	ref.role == "definition"
	target := object.get(ref, "target", null)
	is_object(target)
	target.resolution == "other_app"
	some order, severity in _other_app_severity
	target.order == order
	msg := sprintf(
		"%s needs the CRD for %s, which is not in this Application: Application %s installs it, %s Until that Application has synced, the dry-run of this object fails and Argo CD refuses this Application's whole sync with \"one or more synchronization tasks are not valid\" (nothing is applied; the next sync after the CRD exists succeeds). Fix: %s%s",
		[_subject, _group_kind, _str(target, "app"), _other_app_order[order], _other_app_fix[order], _app_option_note],
	)
}

_other_app_severity := {"after": "medium", "after_unwaited": "low", "same_wave": "low", "before_unwaited": "low", "unknown": "info"}

_other_app_order := {
	"after": "and the app-of-apps syncs that Application after this one (its Application object has a later sync-wave in the same parent), so on a new cluster this Application syncs first.",
	"after_unwaited": "in a later sync-wave of the app-of-apps, but argocd-cm gives Applications no health check (resource.customizations.health.argoproj.io_Application), so the parent applies both waves at once (SG208) and on a new cluster this Application may sync before the CRD exists.",
	"same_wave": "and the app-of-apps syncs both in the same sync-wave, at the same time, so on a new cluster this Application may sync before the CRD exists.",
	"before_unwaited": "in an earlier sync-wave of the app-of-apps, but argocd-cm gives Applications no health check (resource.customizations.health.argoproj.io_Application), so the parent starts the next wave as soon as that Application object is applied, without waiting for it to sync (SG208): on a new cluster both may sync at once.",
	"unknown": "and nothing in the input orders the two Applications (no app-of-apps holds both), so on a new cluster this one may sync first.",
}

_other_app_fix := {
	"after": sprintf("give that Application a lower sync-wave than this one in the app-of-apps, or add %s (%s).", [_skip_option, _skip_where]),
	"after_unwaited": sprintf("give that Application a lower sync-wave than this one in the app-of-apps and add the Application health check to argocd-cm, or add %s (%s).", [_skip_option, _skip_where]),
	"same_wave": sprintf("give that Application a lower sync-wave than this one in the app-of-apps, or add %s (%s).", [_skip_option, _skip_where]),
	"before_unwaited": sprintf("add the Application health check to argocd-cm so that the app-of-apps waits for each wave, or add %s (%s).", [_skip_option, _skip_where]),
	"unknown": sprintf("nothing, if that Application is synced first already; otherwise hold both in an app-of-apps with the CRD's Application in a lower sync-wave, or add %s (%s).", [_skip_option, _skip_where]),
}

# 3. The CRD is in the Application but does not serve this object's version.
violations contains {"msg": msg, "path": "/apiVersion", "severity": "high", "action": "deny"} if {
	# cheap first tests, as above
	input.refs != []
	input.sync.phases != []
	input.refs[_].role == "definition" # only custom resources reference their CRD
	not input.context.source == "admission"
	not input.context.source == "audit"
	_applies
	_desired_state
	count(_list("phases")) > 0
	_version != ""
	some ref in _refs
	is_object(ref)
	ref.role == "definition"
	target := object.get(ref, "target", null)
	is_object(target)
	target.resolution == "in_set"
	versions := _crd_versions(target)
	count(versions) > 0
	not _version_served(versions)
	msg := sprintf(
		"%s is written for %s, but the CRD for %s in this Application (%s) %s, and %s. Argo CD matches a CRD to its objects by group and kind only, so it skips this object's dry-run, applies the CRD, and then applying this object fails, because the API server serves no %s (an error such as \"no matches for kind %s in version %s\"). The operation ends with \"one or more objects failed to apply\" after the earlier steps were applied, and every retry fails the same way. Fix: %s",
		[
			_subject, _api_version, _group_kind, _crd_label(target), _version_state(versions),
			_served_phrase(versions), _api_version, _quoted_kind, _quoted_api_version, _version_fix(versions),
		],
	)
}

_crd_versions(target) := [v |
	some v in _array(target, "versions")
	is_object(v)
	is_string(object.get(v, "name", null))
]

# A rule, not `not _version in _served(versions)`: the bytecode VM does not negate a membership
# test on a function's result as the interpreter and OPA do.
_version_served(versions) if {
	some v in versions
	object.get(v, "served", false) == true
	v.name == _version
}

_served(versions) := {name |
	some v in versions
	object.get(v, "served", false) == true
	name := v.name
}

# Two bodies, not `if { some v in ... } else :=`: regorus' bytecode VM left the function
# undefined when the first body failed, instead of taking the `else` (policies/README.md, "The
# bytecode VM and the interpreter"; tests/field_fixtures.rs fires on it).
_version_state(versions) := sprintf("lists %s with served: false", [_version]) if {
	_version_listed(versions)
}

_version_state(versions) := sprintf("does not define %s", [_version]) if {
	not _version_listed(versions)
}

_version_listed(versions) if {
	some v in versions
	v.name == _version
}

_served_phrase(versions) := "serves no version at all" if {
	count(_served(versions)) == 0
} else := sprintf("serves only %s", [concat(", ", sort(_served(versions)))])

_version_fix(versions) := sprintf(
	"write this object for a served version (apiVersion: %s/%s, converting its fields if the schema changed), or serve %s in the CRD again.",
	[_group, _storage_or_first(versions), _version],
) if {
	count(_served(versions)) > 0
} else := sprintf("serve %s in the CRD (served: true), or stop shipping this object.", [_version])

# The served storage version, else the first served version in name order.
_storage_or_first(versions) := name if {
	some v in versions
	object.get(v, "served", false) == true
	object.get(v, "storage", false) == true
	name := v.name
} else := sort(_served(versions))[0]

_crd_label(target) := sprintf("CustomResourceDefinition %s", [_str(target, "name")]) if {
	_str(target, "name") != ""
} else := "its CustomResourceDefinition"

_quoted_kind := sprintf("\"%s\"", [_kind])

_quoted_api_version := sprintf("\"%s\"", [_api_version])

_api_version := _str(_resource, "apiVersion")

# "v1alpha2" from "cert-manager.io/v1alpha2"
_version := v if {
	parts := split(_api_version, "/")
	count(parts) == 2
	v := parts[1]
} else := ""

# ---- kinds whose CRD a controller creates at runtime ----

# Gatekeeper creates a CRD in this group for every ConstraintTemplate.
_runtime_installer := "Gatekeeper creates at runtime from the ConstraintTemplate that defines this kind" if {
	_group == "constraints.gatekeeper.sh"
} else := "Crossplane's package manager installs at runtime from the Provider package that defines this kind" if {
	_crossplane_provider_group
}

# Crossplane's own API groups: their CRDs ship with Crossplane (cluster/crds).
_crossplane_core := {
	"apiextensions.crossplane.io", "pkg.crossplane.io", "secrets.crossplane.io",
	"ops.crossplane.io", "protection.crossplane.io", "daytwo.crossplane.io",
}

_crossplane_provider_group if {
	endswith(_group, ".crossplane.io")
	not _group in _crossplane_core
}

# The Upbound provider families: s3.aws.upbound.io, s3.aws.m.upbound.io, aws.upbound.io, ...
_crossplane_provider_group if {
	some family in ["aws", "gcp", "azure", "azuread"]
	some suffix in [sprintf("%s.upbound.io", [family]), sprintf("%s.m.upbound.io", [family])]
	_group_is_or_ends_with(suffix)
}

_group_is_or_ends_with(suffix) if _group == suffix

_group_is_or_ends_with(suffix) if endswith(_group, concat("", [".", suffix]))

# ---- SkipDryRunOnMissingResource ----

# Application-level SkipDryRunOnMissingResource=true: read from Argo CD 3.1.0 (argo-cd#22679).
_app_option_honoured if _release >= 301

_skip_where := "argocd.argoproj.io/sync-options on this object, or the Application's syncOptions" if {
	_app_option_honoured
} else := "argocd.argoproj.io/sync-options on this object; Argo CD before 3.1 ignores it in the Application's syncOptions"

_app_option_note := " The Application's syncOptions set SkipDryRunOnMissingResource=true, but Argo CD before 3.1 reads that option only from the object's own annotation (Application-level support arrived in v3.1.0, argo-cd#22679)." if {
	_app_sets_skip
	not _app_option_honoured
} else := ""

# ---- check --require-crds ----

# The cluster serves no custom kind whose CRD is not in the input (input.context.require_crds).
_require_crds if {
	context := object.get(input, "context", {})
	is_object(context)
	object.get(context, "require_crds", false) == true
}

# What a missing CRD finding carries beyond its message: with --require-crds the refusal is
# certain, so it is a high-severity denial. Without it, a kind whose CRD a controller creates at
# runtime keeps the rule's own warn/medium (no Application can ship it, so on a new cluster the
# dry-run fails unless the skip option is set), and so does a CRD that no Application of a whole
# repository renders (input.context.repository: review, or a check of several Applications).
# A CRD that is simply not in one Application's input is usually installed by another Application
# or the platform: a fact worth recording, nothing to act on, so info.
default _certainty := {"severity": "info"}

_certainty := {"severity": "high", "action": "deny"} if _require_crds

_certainty := {} if {
	not _require_crds
	_runtime_installer
}

_certainty := {} if {
	not _require_crds
	not _runtime_installer
	_repository
}

# The input holds a whole repository's Applications, so "no Application renders it" is known.
_repository if {
	context := object.get(input, "context", {})
	is_object(context)
	object.get(context, "repository", false) == true
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
	_app_sets_skip
	_app_option_honoured
}

_app_sets_skip if {
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

_array(obj, key) := v if {
	v := object.get(obj, key, [])
	is_array(v)
} else := []

# The Argo CD release judged for (major * 100 + minor); the newest when absent.
default _release := 9999

_release := r if {
	is_object(input.argocd)
	r := input.argocd.release
	is_number(r)
}

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
