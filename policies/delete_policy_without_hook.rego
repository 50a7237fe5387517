# SG110: a hook-delete-policy on an object that is not a hook.
#
# Argo CD consults delete policies only for hooks. On a normal resource
# argocd.argoproj.io/hook-delete-policy (and helm.sh/hook-delete-policy) is ignored without a word:
# the object is applied and kept like any other, never deleted after success and never re-created
# before the next sync (argo-cd#3980). An author who expected "run this Job on every sync" gets a
# Job that runs once and later fails with "field is immutable". Objects with hook: Skip are never
# applied at all, so their (often chart-supplied) policies are not reported. Helm's policy on an
# object without any helm.sh/hook is info: Helm ignores it as well, so nothing differs.
package syncguard.rules.delete_policy_without_hook

meta := {
	"id": "SG110",
	"title": "hook-delete-policy on a resource that is not a hook",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Delete policies only apply to hooks. Without argocd.argoproj.io/hook (or a Helm hook) the object",
		"is a normal resource and Argo CD ignores the policy silently: it is never deleted after it ran and",
		"never re-created, which is usually the opposite of what the author wanted.",
	]),
	"docs": "docs/rules/SG110.md",
}

violations contains object.union({"msg": msg, "path": path}, _helm_alike(key)) if {
	input.sync.delete_policy_set == true # cheap first test, implied by the object.get below
	_applies
	object.get(_sync, "delete_policy_set", false) == true
	object.get(_sync, "is_hook", false) == false
	object.get(_sync, "skip", false) == false
	some key in ["argocd.argoproj.io/hook-delete-policy", "helm.sh/hook-delete-policy"]
	_annotations[key]
	path := sprintf("/metadata/annotations/%s", [replace(key, "/", "~1")])
	msg := sprintf(
		"%s has %s but is not a hook (no argocd.argoproj.io/hook or usable helm.sh/hook), so Argo CD ignores the policy: the object is applied and kept like any other resource, never deleted or re-created by it. %s",
		[_subject, key, _advice(key)],
	)
}

# `keep` is no delete policy: the author meant helm.sh/resource-policy: keep (mastodon's PVCs),
# and turning a PVC into a hook would delete its volume on every sync.
_advice(key) := "\"keep\" is not a delete policy: helm.sh/resource-policy: keep is what keeps an object when its release is removed, and under Argo CD argocd.argoproj.io/sync-options: Delete=false keeps it when the Application is deleted; without either, Argo CD deletes it with the Application." if {
	lower(trim_space(_str_of(_annotations[key]))) == "keep"
} else := "Add argocd.argoproj.io/hook (e.g. PreSync or Sync) if it should be a hook, or remove the policy."

_str_of(v) := v if is_string(v)

else := ""

# Helm's own policy on an object with no helm.sh/hook at all: Helm ignores it there too, so the
# chart behaves under Argo CD exactly as under Helm and nobody can act on it (mastodon 6.9.3
# writes helm.sh/hook-delete-policy: keep on its PVCs, meaning helm.sh/resource-policy). Info.
# With a helm.sh/hook Argo CD does not use (crd-install, test), the author meant a hook: kept.
_helm_alike("helm.sh/hook-delete-policy") := {"severity": "info"} if not _annotations["helm.sh/hook"]

else := {}

_helm_alike("argocd.argoproj.io/hook-delete-policy") := {}

default _annotations := {}

_annotations := a if {
	a := object.get(_metadata, "annotations", {})
	is_object(a)
}

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
