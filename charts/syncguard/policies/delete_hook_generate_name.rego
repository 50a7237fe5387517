# SG111: a PreDelete/PostDelete hook that has generateName instead of metadata.name.
#
# Delete hooks are run by the Argo CD controller, not the sync engine: while the Application is
# being deleted, each reconcile compares the delete hooks in the manifests with the live ones by
# resource key (kind, namespace, name) and creates the missing ones. An object with only
# generateName has no name to match, so it looks missing every time and a new one is created on
# every reconcile, and the deletion never sees it complete. This is derived from the controller
# code (reference spec §2.6), not from a reported issue; a fixed name is the safe form either way.
package syncguard.rules.delete_hook_generate_name

meta := {
	"id": "SG111",
	"title": "PreDelete/PostDelete hook with generateName",
	"severity": "high",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD matches PreDelete and PostDelete hooks to live objects by name while it deletes an",
		"Application. A hook with only generateName never matches, so the controller creates another copy",
		"on every reconcile and the Application deletion can hang or flood the namespace.",
	]),
	"docs": "docs/rules/SG111.md",
}

violations contains {"msg": msg, "path": "/metadata/generateName"} if {
	# cheap first tests, implied by _generate_name != "" and count(_delete_types) > 0 below
	input.resource.metadata.generateName != ""
	input.sync.hook_types != []
	_applies
	count(_delete_types) > 0
	_name == ""
	_generate_name != ""
	msg := sprintf(
		"%s is a %s hook with generateName: Argo CD finds delete hooks by name, never finds this one, and creates another %s on every reconcile while the Application is being deleted. Set a fixed metadata.name instead of generateName.",
		[_subject, concat("/", _delete_types), _kind],
	)
}

# PreDelete only from Argo CD 3.3 (before, SG105 reports it as a value Argo CD does not know).
_delete_types := [t | some t in _list("hook_types"); _delete_type(t)]

_delete_type("PostDelete") := true

_delete_type("PreDelete") if _release >= 303

# input.argocd.release (major * 100 + minor); the newest release when absent.
default _release := 306

_release := r if {
	r := input.argocd.release
	is_number(r)
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
