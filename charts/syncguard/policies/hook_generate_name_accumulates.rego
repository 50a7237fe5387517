# SG109: a hook with generateName and no delete policy that ever removes it.
#
# A hook without metadata.name gets a new name on every sync operation (generateName + revision,
# phase and start time). BeforeHookCreation — the default — deletes the previous object *with the
# same name* before creating the hook, and a new name never matches, so nothing is deleted. Hooks
# are never pruned either. Without HookSucceeded or HookFailed, every sync leaves one more Job or
# Pod behind, for ever (argo-cd#4295). Only hooks that run during a sync are judged: delete-only
# hooks are SG111, and objects Argo CD never applies cannot accumulate.
package syncguard.rules.hook_generate_name_accumulates

meta := {
	"id": "SG109",
	"title": "generateName hook that is never cleaned up",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"A hook with generateName gets a new name on every sync, so BeforeHookCreation (the default) never",
		"finds an old object to delete, and hooks are never pruned. Without HookSucceeded or HookFailed every",
		"sync leaves another completed Job or Pod behind: clutter, quota, and etcd growth that never stops.",
	]),
	"docs": "docs/rules/SG109.md",
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

violations contains {"msg": msg, "path": "/metadata/generateName"} if {
	# cheap first tests, implied by the conditions below
	input.resource.metadata.generateName != ""
	input.sync.is_hook == true
	_applies
	object.get(_sync, "is_hook", false) == true
	count(_list("phases")) > 0
	_name == ""
	_generate_name != ""
	not "HookSucceeded" in _list("delete_policies")
	not "HookFailed" in _list("delete_policies")
	msg := sprintf(
		"%s is %s with generateName and no HookSucceeded/HookFailed delete policy: every sync creates a new %s, BeforeHookCreation never matches the old names, and hooks are never pruned, so they pile up forever. Add argocd.argoproj.io/hook-delete-policy: HookSucceeded (failed runs stay for debugging), or use a fixed metadata.name so BeforeHookCreation replaces the old one.",
		[_subject, _hook_label, _kind],
	)
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

# "Job app-foo/svc-foo-migration"
_subject := sprintf("%s %s", [_kind, _qualified_name])

_hook_phases := [t | some t in _list("hook_types"); is_string(t); t != "Skip"]

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
