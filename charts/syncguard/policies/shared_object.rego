# SG403: an object that two Applications of the input render; also a Namespace one Application
# owns while others deploy into it, and two Applications with one source and destination.
#
# Judges the ownership facts (input.ownership, model::ownership in the semantics crate): the
# same identity (group, kind, namespace after the destination fills it, name) rendered by more
# than one Application whose destinations can be the same cluster. Argo CD records one owner per
# object (its tracking label or annotation); each sync of one Application writes its own id over
# the other's, and the other then shows the object OutOfSync, prunes it when it prunes, and
# raises SharedResourceWarning (FailOnSharedResource=true makes the sync fail instead).
package syncguard.rules.shared_object

meta := {
	"id": "SG403",
	"title": "Object rendered by two Applications",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD gives every object one owning Application. When two render the same object, each sync",
		"takes it over from the other: the other is OutOfSync for ever, self-heal makes them fight, and an",
		"Application that prunes deletes what the other one just applied.",
	]),
	"docs": "docs/rules/SG403.md",
}

violations contains {"msg": msg, "path": "/metadata/name"} if {
	is_object(input.ownership) # cheap first test: most objects carry no ownership fact
	_applies
	others := _others
	count(others) > 0
	msg := sprintf(
		"%s is also rendered by Application %s in this input: Argo CD tracks an object for one Application only, so each sync of one writes its tracking id over the other's, the other reports the object OutOfSync (auto-sync and self-heal make them fight, and a pruning sync deletes it), and Argo CD raises SharedResourceWarning (with FailOnSharedResource=true the sync fails). Render it in one Application only: for a chart installed more than once, give each release its own names or namespace, or turn the shared object off in all but one; a Namespace shared by several apps belongs in one of them (or in none, with CreateNamespace=true).",
		[_subject, concat(", ", others)],
	)
}

violations contains {"msg": msg, "path": "/metadata/name", "severity": "medium"} if {
	is_object(input.ownership) # cheap first test: most objects carry no ownership fact
	_applies
	guests := _facts("namespace_hosts")
	count(guests) > 0
	msg := sprintf(
		"%s is rendered by one Application, but objects of Application %s live in it too. Argo CD keeps one owner per object: deleting the owning Application (or a sync that prunes the Namespace) deletes the namespace and everything in it, the other Applications' objects included, and those Applications cannot stop it. Fix: let a dedicated Application (or the platform) own the Namespace, and have the others use CreateNamespace=true or only deploy into it.",
		[_subject, concat(", ", guests)],
	)
}

violations contains {"msg": msg, "path": "/spec/source", "severity": "medium"} if {
	is_object(input.ownership) # cheap first test: most objects carry no ownership fact
	_applies
	others := _facts("same_source_as")
	count(others) > 0
	msg := sprintf(
		"%s renders the same source (repository, path or chart, revision, options) into the same destination as Application %s: both render the same objects, so each sync takes them over from the other, Argo CD raises SharedResourceWarning, and a pruning sync deletes what the other applied. This holds unless the chart names every object after its Helm release (by default the Application's name). Fix: give each Application its own destination namespace or its own values (names), or keep one of them.",
		[_subject, concat(", ", others)],
	)
}

_others := _facts("also_rendered_by")

_facts(key) := v if {
	ownership := object.get(input, "ownership", {})
	is_object(ownership)
	v := object.get(ownership, key, [])
	is_array(v)
} else := []

# ---- input helpers (the same in every rule file, trimmed to what this rule uses) ----

_applies if object.get(input, "operation", "") != "DELETE"

default _resource := {}

_resource := input.resource if is_object(input.resource)

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

_namespace := _str(_metadata, "namespace")

_qualified_name := concat("/", [_namespace, _name]) if _namespace != ""

_qualified_name := _name if _namespace == ""

default _kind := "object"

_kind := k if {
	k := _str(_resource, "kind")
	k != ""
}

_subject := sprintf("%s %s", [_kind, _qualified_name])
