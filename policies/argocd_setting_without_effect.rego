# SG307: an Application setting that does not do what it is written for.
#
# Two settings whose effect depends on something else in the Application, judged against it:
#  1. CreateNamespace=true creates the destination namespace, and only that one. When none of the
#     Application's objects land in it — a Kustomize `namespace:` or the chart's own namespace put
#     them elsewhere — it creates a namespace nothing uses, and the namespace the objects need is
#     not created: the sync fails with `namespaces "X" not found` unless X already exists.
#     Needs the Application's objects (input.governed: render output, a GitOps directory).
#  2. In a multi-source Application, `$<ref>` in a Helm valueFiles path is the root of the ref
#     source's repository, whatever the ref source's `path` says: `$values/values.yaml` with
#     `path: envs/prod` on the ref source reads values.yaml at the root, not envs/prod/values.yaml.
#  3. A sync option Argo CD does not know (`ServiceSideApply=true`, `prunelast=true`), in an
#     Application's syncOptions or an object's argocd.argoproj.io/sync-options: Argo CD accepts
#     it and ignores it, so the option meant is never in effect (input.unknown_sync_options).
package syncguard.rules.argocd_setting_without_effect

meta := {
	"id": "SG307",
	"title": "Application setting that does not do what it is written for",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"CreateNamespace=true creates only the destination namespace: objects that a Kustomize namespace or",
		"the chart put elsewhere still need their namespace, and the sync fails without it. `$ref` in a",
		"multi-source valueFiles path is the repository root, not the ref source's path, so the values read",
		"are not the ones meant (or the file is missing).",
	]),
	"docs": "docs/rules/SG307.md",
}

# 1. CreateNamespace=true while every object lands in another namespace.
violations contains {"msg": msg, "path": "/spec/destination/namespace"} if {
	input.resource.kind == "Application"
	_applies
	"CreateNamespace=true" in _sync_options
	destination := _str(_destination, "namespace")
	destination != ""
	count(_governed.namespaces) > 0
	not _lands_in(destination)
	elsewhere := [ns | some pair in _governed.namespaces; ns := pair[0]; not ns in _governed.creates_namespaces]
	count(elsewhere) > 0
	msg := sprintf(
		"Application %s: CreateNamespace=true creates the destination namespace %q, but none of its %d objects land there: they go to %s (a Kustomize namespace, or one the chart sets). Argo CD creates only the destination namespace, so the sync fails with namespaces not found unless %s already exist. Set destination.namespace to the namespace the objects use, or add that Namespace to the Application.",
		[_name, destination, _governed.objects, _quoted(elsewhere), _quoted(elsewhere)],
	)
}

# 2. `$ref/...` written relative to the ref source's path.
violations contains {"msg": msg, "path": sprintf("/spec/sources/%d/helm/valueFiles/%d", [j, k])} if {
	input.resource.kind == "Application"
	_applies
	some ref_source in _sources
	ref := _str(ref_source, "ref")
	ref != ""
	base := trim(_str(ref_source, "path"), "/")
	not base in {"", "."}
	some j, source in _sources
	helm := object.get(source, "helm", {})
	is_object(helm)
	some k, file in object.get(helm, "valueFiles", [])
	is_string(file)
	prefix := sprintf("$%s/", [ref])
	startswith(file, prefix)
	rest := substring(file, count(prefix), -1)
	not startswith(rest, sprintf("%s/", [base]))
	msg := sprintf(
		"Application %s: valueFiles %q reads %q at the root of the %s source's repository: `$%s` always means that repository's root, and the ref source's path %q is not applied to it. Write %q if the file is under that path.",
		[_name, file, rest, ref, ref, base, sprintf("$%s/%s/%s", [ref, base, rest])],
	)
}

# 3a. An unknown option in an Application's syncOptions.
violations contains {"msg": msg, "path": sprintf("/spec/syncPolicy/syncOptions/%d", [i])} if {
	input.unknown_sync_options # cheap first test: absent unless some option is unknown
	_applies
	some u in input.unknown_sync_options
	u.from == "application"
	some i, written in _sync_options
	trim_space(written) == u.option
	msg := sprintf(
		"Application %s: sync option %q is not one Argo CD knows: it is accepted and ignored, so it never takes effect.%s",
		[_name, u.option, _suggestion(u)],
	)
}

# 3b. An unknown option in an object's own sync-options annotation.
violations contains {"msg": msg, "path": "/metadata/annotations/argocd.argoproj.io~1sync-options"} if {
	input.unknown_sync_options # cheap first test: absent unless some option is unknown
	_applies
	some u in input.unknown_sync_options
	u.from == "annotation"
	msg := sprintf(
		"%s %s: sync option %q in argocd.argoproj.io/sync-options is not one Argo CD knows: it is ignored, so it never takes effect.%s",
		[_str(_resource, "kind"), _name, u.option, _suggestion(u)],
	)
}

_suggestion(u) := sprintf(" Did you mean %s?", [u.suggestion]) if is_string(u.suggestion)

else := " See the sync options Argo CD reads: https://argo-cd.readthedocs.io/en/stable/user-guide/sync-options/"

# ---- facts ----

default _governed := {"objects": 0, "namespaces": [], "creates_namespaces": []}

_governed := g if {
	g := input.governed
	is_object(g)
}

_lands_in(ns) if {
	some pair in _governed.namespaces
	pair[0] == ns
}

_quoted(names) := concat(", ", [sprintf("%q", [n]) | some n in names])

default _spec := {}

_spec := s if {
	s := object.get(_resource, "spec", {})
	is_object(s)
}

_destination := d if {
	d := object.get(_spec, "destination", {})
	is_object(d)
} else := {}

_sync_options := o if {
	p := object.get(_spec, "syncPolicy", {})
	is_object(p)
	o := object.get(p, "syncOptions", [])
	is_array(o)
} else := []

_sources := s if {
	s := object.get(_spec, "sources", [])
	is_array(s)
} else := []

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

# Rules never judge a deletion.
_applies if object.get(input, "operation", "") != "DELETE"

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
