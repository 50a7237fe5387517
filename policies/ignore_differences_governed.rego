# SG306: an Application's ignoreDifferences held to the objects it governs.
#
# When the input holds an Application together with the objects Argo CD syncs for it (`render`
# output, a GitOps directory), syncguard applies each ignoreDifferences entry to those objects
# as Argo CD's normaliser does (input.governed, computed by model::governed) and reports what the
# entry's shape alone cannot show:
#  1. an entry that applies to none of the Application's objects — with the object it was
#     probably written for when one differs only by group, kind case, name or namespace (an entry
#     without kind, or without the group of a well-known kind, is SG303's);
#  2. a JSON pointer that steps into a list without an index (/spec/containers/image): a pointer
#     names one element by position, so it names no field and hides nothing;
#  3. a pointer that is not a JSON pointer (no leading /, a [0] index);
#  4. a jq expression that does not parse: Argo CD cannot build the normaliser at all, so the
#     whole Application fails comparison (ComparisonError) until it is fixed;
#  5. with RespectIgnoreDifferences=true, an ignored field inside a list that the sync's merge
#     patch replaces whole (every list of a custom resource; a list without a merge key of a
#     built-in kind; every list before 2.11.0 / 2.10.6 / 2.9.11 / 2.8.15 / 2.7.18): the sync
#     takes the whole list from the live object, so Git changes to the rest of it never apply
#     (argo-cd#11876).
package syncguard.rules.ignore_differences_governed

meta := {
	"id": "SG306",
	"title": "ignoreDifferences that cannot work on the objects it governs",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Held to the objects it governs, an ignoreDifferences entry that matches none of them, or a pointer that",
		"names no field, hides nothing: the difference it was written for still shows and auto-sync keeps",
		"reverting it. A jq expression that does not parse stops Argo CD from comparing the whole Application.",
		"With RespectIgnoreDifferences=true an ignored field inside a list freezes the whole list at its live value.",
	]),
	"docs": "docs/rules/SG306.md",
	"kinds": ["Application"], # only these kinds can be reported: others skip the rule
}

# 1. An entry that applies to none of the objects.
violations contains {"msg": msg, "path": entry.at, "severity": severity} if {
	input.resource.kind == "Application"
	some i, entry in _entries
	entry.matched == 0
	_governed.objects > 0
	written := _written(i)
	_str(written, "kind") != ""
	not _sg303_group_case(written, entry)
	severity := _none_severity(entry)
	msg := sprintf(
		"%s: ignoreDifferences[%d] (%s) applies to none of the %d objects of this Application, so it hides nothing and the difference it was written for still shows%s",
		[_subject, i, _target(written), _governed.objects, _near_text(written, entry)],
	)
}

# 2. A pointer through a list without an index.
violations contains {"msg": msg, "path": sprintf("%s/jsonPointers/%d", [entry.at, j])} if {
	input.resource.kind == "Application"
	some i, entry in _entries
	some j, p in entry.pointers
	is_string(p.through_list)
	p.present == 0
	msg := sprintf(
		"%s: ignoreDifferences[%d] pointer %s steps into the list %s without an index. A JSON pointer names one list element by its position (/0), so this one names no field in the %d object(s) it applies to and hides nothing. To hide the field in every element, use jqPathExpressions: [\"%s\"].",
		[_subject, i, p.pointer, p.through_list, entry.matched, p.fix],
	)
}

# 3. Not a JSON pointer.
violations contains {"msg": msg, "path": sprintf("%s/jsonPointers/%d", [entry.at, j])} if {
	input.resource.kind == "Application"
	some i, entry in _entries
	some j, p in entry.pointers
	p.present == 0
	not is_string(p.through_list)
	_bad_pointer(p)
	msg := sprintf(
		"%s: ignoreDifferences[%d] has %q, which is not a JSON pointer%s: Argo CD's remove finds nothing to remove and hides nothing. %s",
		[_subject, i, p.pointer, _bad_reason(p), _bad_fix(p)],
	)
}

# 4. A jq expression that does not parse.
violations contains {"msg": msg, "path": sprintf("%s/jqPathExpressions/%d", [entry.at, j]), "severity": "high"} if {
	input.resource.kind == "Application"
	some i, entry in _entries
	some j, q in entry.jq
	is_string(q.unparsable)
	msg := sprintf(
		"%s: ignoreDifferences[%d] jq expression %q does not parse. Argo CD builds one normaliser from every ignore rule, so it cannot compare this Application at all: it shows a ComparisonError and Unknown sync status, and nothing syncs automatically until the expression is fixed.",
		[_subject, i, q.expression],
	)
}

# 5. RespectIgnoreDifferences freezes a whole list.
violations contains {"msg": msg, "path": entry.at} if {
	input.resource.kind == "Application"
	some i, entry in _entries
	count(entry.frozen_lists) > 0
	msg := sprintf(
		"%s: ignoreDifferences[%d] hides a field inside a list, and with RespectIgnoreDifferences=true each sync copies the live value of the hidden field with a merge patch that replaces that list whole (%s): the sync keeps the live list, so changes in Git to any other part of it never reach the cluster (argo-cd#11876). Ignore a field outside the list, or drop RespectIgnoreDifferences for this entry's object.",
		[_subject, i, concat(", ", entry.frozen_lists)],
	)
}

# ---- facts ----

default _governed := {"objects": 0, "ignore_differences": []}

_governed := g if {
	object.get(input, "operation", "") != "DELETE" # rules never judge a deletion
	g := input.governed
	is_object(g)
}

_entries := _governed.ignore_differences

_written(i) := e if {
	e := object.get(_spec, ["ignoreDifferences", i], {})
	is_object(e)
} else := {}

default _spec := {}

_spec := s if {
	s := object.get(_resource, "spec", {})
	is_object(s)
}

# SG303 already reports a well-known kind written without its group.
_sg303_group_case(written, entry) if {
	_str(written, "group") == ""
	some n in entry.near
	n.differs == "group"
}

_none_severity(entry) := "medium" if count(entry.near) > 0

else := "low"

_near_text(written, entry) := sprintf(
	". %s %s is in the core API group, whose name is empty: remove group.",
	[n.kind, n.name],
) if {
	n := entry.near[0]
	n.differs == "group"
	n.group == ""
} else := sprintf(
	". %s %s is in API group %q: set group: %s.",
	[n.kind, n.name, n.group, n.group],
) if {
	n := entry.near[0]
	n.differs == "group"
} else := sprintf(". The object is %s %s: kinds match case-sensitively, set kind: %s.", [n.kind, n.name, n.kind]) if {
	n := entry.near[0]
	n.differs == "kind"
} else := sprintf(". No %s is named %q here; %s %s is: correct name, or drop it to match every %s.", [n.kind, _str(written, "name"), n.kind, n.name, n.kind]) if {
	n := entry.near[0]
	n.differs == "name"
} else := sprintf(". %s %s is in namespace %q, not %q: correct namespace, or drop it.", [n.kind, n.name, n.namespace, _str(written, "namespace")]) if {
	n := entry.near[0]
	n.differs == "namespace"
} else := ". Remove the entry, or correct its group, kind, name or namespace."

_target(written) := concat(" ", [_group_kind(written), n]) if {
	n := _str(written, "name")
	n != ""
} else := _group_kind(written)

_group_kind(e) := sprintf("kind %s, core group", [_str(e, "kind")]) if _str(e, "group") == ""

else := sprintf("%s/%s", [_str(e, "group"), _str(e, "kind")])

_bad_pointer(p) if p.invalid

_bad_pointer(p) if is_string(p.fix)

_bad_reason(p) := " (it does not start with /)" if p.invalid

else := " (JSON pointers have no [n] index syntax)"

_bad_fix(p) := sprintf("Write %s.", [p.fix]) if is_string(p.fix)

else := "Write it as /path/to/field, list elements as /0."

_subject := sprintf("Application %s", [_name])

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

default _resource := {}

_resource := input.resource if is_object(input.resource)

default _metadata := {}

_metadata := m if {
	m := object.get(_resource, "metadata", {})
	is_object(m)
}

_str(obj, key) := v if {
	is_object(obj)
	v := object.get(obj, key, "")
	is_string(v)
} else := ""

_name := _str(_metadata, "name")
