# SG113: a hook Job with spec.ttlSecondsAfterFinished.
#
# Argo CD reads a hook's result from the live object in its cluster cache. Until the hook
# finalizer argocd.argoproj.io/hook-finalizer (gitops-engine#646, first shipped in Argo CD v3.0.0;
# v2.14.3 had it by accident and v2.14.4 took it out again, argo-cd#22163) nothing stopped the
# TTL-after-finished controller from deleting a finished Job before Argo CD had seen it Complete:
# the hook task then has no live object, stays Running, and the sync waits for ever
# (argo-cd#18884, #21055). From v3.0.0 the finalizer holds a sync hook until its result is
# recorded, so a TTL on a sync hook is harmless and not reported.
#
# Delete hooks (PostDelete from 2.10, PreDelete from 3.3) are created by the Application
# controller, not the sync engine, and get no hook finalizer in any release: a delete hook the
# TTL controller has removed looks "not created yet" to the next pass of the deleting
# Application, which creates it again (controller/hook.go executeHooks; code-derived, no public
# report found), so the clean-up runs again and the deletion finishes only if a pass happens to
# see the Job Complete in between.
#
# Bare Pods have no ttlSecondsAfterFinished; TTL on non-hook Jobs is SG112.
package syncguard.rules.hook_job_ttl

meta := {
	"id": "SG113",
	"title": "Hook Job with ttlSecondsAfterFinished",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"Before Argo CD 3.0 the TTL controller can delete a finished hook Job before Argo CD has read its",
		"result; the hook then stays Running and the sync waits for ever. Delete hooks get no hook finalizer",
		"in any release, so a deleting Application re-creates a delete hook the TTL controller removed.",
	]),
	"docs": "docs/rules/SG113.md",
	"kinds": ["Job"], # only these kinds can be reported: others skip the rule
}

# A TTL below this many seconds gives Argo CD almost no time to see the finished Job.
short_ttl_seconds := 60

# 1. A sync hook (PreSync, Sync, PostSync, SyncFail) on a release without the hook finalizer.
violations contains {"msg": msg, "path": "/spec/ttlSecondsAfterFinished", "severity": severity} if {
	# cheap first tests, implied by _hook_job and is_number(ttl) below
	input.resource.kind == "Job"
	input.sync.is_hook == true
	is_number(input.resource.spec.ttlSecondsAfterFinished)
	_hook_job
	count(_list("phases")) > 0
	not _hook_finalizer
	ttl := _spec.ttlSecondsAfterFinished
	severity := _sync_severity(ttl)
	msg := sprintf(
		"%s is %s with spec.ttlSecondsAfterFinished: %v: Argo CD %s has no hook finalizer (it came in v3.0.0), so the TTL controller can delete the Job %s before Argo CD has read its result; the hook then stays Running and the sync waits for ever (\"waiting for completion of hook batch/Job/%s\", argo-cd#18884). Remove ttlSecondsAfterFinished and let the hook delete policy clean up (HookSucceeded, or BeforeHookCreation at the next sync), or upgrade to Argo CD 3.0 or later.",
		[_subject, _sync_hook_label, ttl, _version, _when(ttl), _display_name],
	)
}

# 2. A delete hook: no release adds the hook finalizer to it.
violations contains {"msg": msg, "path": "/spec/ttlSecondsAfterFinished", "severity": "medium"} if {
	# cheap first tests, implied by _hook_job, count(_delete_types) > 0 and is_number(ttl) below
	input.resource.kind == "Job"
	input.sync.hook_types != []
	is_number(input.resource.spec.ttlSecondsAfterFinished)
	_hook_job
	count(_delete_types) > 0
	ttl := _spec.ttlSecondsAfterFinished
	is_number(ttl)
	ttl < short_ttl_seconds
	msg := sprintf(
		"%s is a %s hook with spec.ttlSecondsAfterFinished: %v: Argo CD creates delete hooks without a hook finalizer, so the TTL controller can remove the finished Job before the deleting Application's next pass sees it Complete; that pass finds no %s and creates it again, so the clean-up runs again and the Application stays Deleting until a pass catches the Job finished. Remove ttlSecondsAfterFinished (use hook-delete-policy HookSucceeded to remove the Job after the deletion succeeded).",
		[_subject, concat("/", _delete_types), ttl, _display_name],
	)
}

_sync_severity(ttl) := "high" if ttl < short_ttl_seconds

_sync_severity(ttl) := "low" if ttl >= short_ttl_seconds

_when(ttl) := "the moment it finishes" if ttl == 0

_when(ttl) := sprintf("%v s after it finishes, which is often before Argo CD looks again", [ttl]) if {
	ttl > 0
	ttl < short_ttl_seconds
}

_when(ttl) := sprintf("%v s after it finishes whenever the application controller is slower than that (busy, or restarting)", [ttl]) if {
	ttl >= short_ttl_seconds
}

_hook_job if {
	_applies
	object.get(_sync, "is_hook", false) == true
	_resource.kind == "Job"
	startswith(_str(_resource, "apiVersion"), "batch/")
}

# The sync engine adds argocd.argoproj.io/hook-finalizer to every sync hook from v3.0.0
# (gitops-engine#646 via argo-cd#21113). v2.14.3 shipped it by accident (a cherry-pick moved its
# go.mod to the master engine, argo-cd#21901) and v2.14.4 went back to the release-2.14 engine
# without it (argo-cd#22163).
_hook_finalizer if _number >= 30000

_hook_finalizer if _number == 21403

_sync_hook_label := sprintf("a %s hook", [concat("/", _list("phases"))])

# Delete hooks this release runs: PostDelete from 2.10, PreDelete from 3.3; until v3.3.3 the
# controller recognises one only when its annotation is exactly that value (argo-cd#26420).
_delete_types := [t | some t in _list("hook_types"); _delete_type(t); _recognised(t)]

_delete_type("PostDelete") if _release >= 210

_delete_type("PreDelete") if _release >= 303

_recognised(_) if _number >= 30303

_recognised(t) if {
	some key, value in _exact_values[t]
	_annotation(key) == value
}

_exact_values := {
	"PostDelete": {"argocd.argoproj.io/hook": "PostDelete", "helm.sh/hook": "post-delete"},
	"PreDelete": {"argocd.argoproj.io/hook": "PreDelete", "helm.sh/hook": "pre-delete"},
}

_annotation(key) := v if {
	annotations := object.get(_metadata, "annotations", {})
	is_object(annotations)
	v := object.get(annotations, key, "")
	is_string(v)
} else := ""

# ---- Argo CD release (input.argocd) ----

default _argocd := {}

_argocd := a if {
	a := input.argocd
	is_object(a)
}

# major * 100 + minor; the newest release when absent.
default _release := 306

_release := r if {
	r := _argocd.release
	is_number(r)
}

# major * 10000 + minor * 100 + patch (patch 99 when only "3.2" was given); computed from release
# and patch when an older syncguard leaves the field out.
default _number := 30699

_number := n if {
	n := _argocd.number
	is_number(n)
}

_number := n if {
	not is_number(object.get(_argocd, "number", null))
	r := _argocd.release
	is_number(r)
	n := (r * 100) + _patch
}

# input.argocd.patch, else the third part of input.argocd.version ("v2.14.3", "3.3.0-rc1"), else
# 99 (only "MAJOR.MINOR" given: its newest patch).
default _patch := 99

_patch := p if {
	p := _argocd.patch
	is_number(p)
}

_patch := p if {
	not is_number(object.get(_argocd, "patch", null))
	v := _argocd.version
	is_string(v)
	parts := split(split(trim_prefix(v, "v"), "-")[0], ".")
	count(parts) == 3
	regex.match(`^[0-9]+$`, parts[2])
	p := to_number(parts[2])
}

default _version := "this release"

_version := sprintf("v%s", [v]) if {
	v := _argocd.version
	is_string(v)
	v != ""
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
