# SG119: sync options that break hooks, or that this Argo CD release does not honour where they
# are written.
#
# Four findings, each from the Argo CD source (controller/sync.go, gitops-engine sync_context.go
# and utils/kube/resource_ops.go) at the release tags named:
#  1. Replace=true on an RBAC hook (Role, RoleBinding, ClusterRole, ClusterRoleBinding), from the
#     hook's annotation or the Application's syncOptions. Replace makes Argo CD create a missing
#     object with `kubectl create`; until v3.3.13 / v3.4.0 that create first ran `kubectl auth
#     reconcile` for rbac.authorization.k8s.io/v1 objects, which already creates it, so the create
#     fails "already exists" (argo-cd#24154, argo-cd#13100; fixed by argo-cd#26791 in v3.4.0 and the
#     3.3 cherry-pick argo-cd#28266 in v3.3.13). A hook is created anew at every sync, so every sync
#     fails: deny. Other hooks with Replace=true are created with `kubectl create` and work.
#  2. An option in an Application's spec.syncPolicy.syncOptions that this release does not read
#     there: SkipDryRunOnMissingResource (app level from v3.1.0, argo-cd#22679), ServerSideApply
#     (v2.5.0, argo-cd#9711), RespectIgnoreDifferences (v2.3.0, argo-cd#8078), FailOnSharedResource
#     (v2.2.0, argo-cd#7444), Prune=false|confirm and Delete=false|confirm (v3.4.0, argo-cd#23370),
#     and Force=true, which no release reads from syncOptions (force belongs to one sync operation).
#  3. An option in a resource's argocd.argoproj.io/sync-options that Argo CD reads only at the
#     Application level (CreateNamespace, ApplyOutOfSyncOnly, RespectIgnoreDifferences, ...), that
#     it never reads (Replace=false), or that this release does not know yet on a resource
#     (ServerSideApply=true before v2.5.0, ServerSideApply=false before v2.14.0, gitops-engine#634;
#     Prune=confirm and Delete=confirm before v2.14.0, gitops-engine#630).
#  4. CreateNamespace=true on an Application whose AppProject does not permit the cluster-scoped
#     Namespace kind. Argo CD adds a Namespace task whenever the namespace does not exist yet (and
#     at every sync with managedNamespaceMetadata), checks it against the project like every task,
#     and fails the sync: "resource :Namespace is not permitted in project <p>" (argo-cd#20233).
#     Only said when the project is known (input.argocd.config.projects).
#  5. Force=true (without Replace=true) on an object Argo CD applies server-side (its own
#     ServerSideApply=true, or the Application's, and not ServerSideApply=false). Before 3.6 the
#     engine passes both to kubectl, which refuses "--force cannot be used with --server-side", so
#     every apply of the object fails; from 3.6 force is dropped under server-side apply and the
#     option does nothing (gitops-engine sync_context.go, read in v3.6.1 and v3.5.1; the
#     release table's force_with_server_side_apply_ignored, docs/argocd-versions.md).
package syncguard.rules.sync_options_conflict

meta := {
	"id": "SG119",
	"title": "Sync options that break hooks or that Argo CD ignores where they are written",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"Replace=true makes every RBAC hook fail with \"already exists\" until Argo CD 3.3.13; several",
		"Application sync options are read only from some release on and are silently ignored before;",
		"app-level options do nothing in a resource annotation; CreateNamespace=true fails the sync when",
		"the AppProject does not permit Namespaces; and Force=true on a server-side applied object fails",
		"every apply before Argo CD 3.6 and does nothing from 3.6.",
	]),
	"docs": "docs/rules/SG119.md",
}

# 1. Replace=true on an RBAC hook.
violations contains {"msg": msg, "path": path, "severity": "high", "action": "deny"} if {
	# cheap first tests, implied by the conditions below
	input.sync.is_hook == true
	startswith(input.resource.apiVersion, "rbac.authorization.k8s.io/")
	_applies
	object.get(_sync, "is_hook", false) == true
	count(_list("phases")) > 0
	_str(_resource, "apiVersion") == "rbac.authorization.k8s.io/v1"
	_kind in {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
	_rbac_create_fails
	some where in _replace_sources
	path := _replace_path[where]
	msg := sprintf(
		"%s is a %s hook that Argo CD syncs with Replace=true (%s): a hook is created anew at every sync, and until Argo CD 3.3.13 a create of an rbac.authorization.k8s.io/v1 object first runs kubectl auth reconcile, which already creates it, so the kubectl create that follows fails with \"already exists\" and so does the sync, every time, on Argo CD %s (argo-cd#24154, argo-cd#13100; fixed by argo-cd#26791 in 3.4.0 and 3.3.13). %s",
		[_subject, concat("/", _hook_phases), _replace_text[where], _version, _replace_fix[where]],
	)
}

_replace_sources contains "resource" if "Replace=true" in _resource_options

_replace_sources contains "app" if {
	not "Replace=true" in _resource_options
	"Replace=true" in _app_context_options
}

_replace_path := {
	"resource": _sync_options_path,
	"app": "/metadata",
}

_replace_text := {
	"resource": "its argocd.argoproj.io/sync-options annotation",
	"app": "the Application's spec.syncPolicy.syncOptions",
}

_replace_fix := {
	"resource": "Remove Replace=true from the hook (Argo CD creates hooks fresh anyway), or upgrade Argo CD to 3.3.13 or later.",
	"app": "Remove Replace=true from the Application's syncOptions and annotate only the resources that need it (Replace=false on this hook does not override it: Argo CD never reads Replace=false), or upgrade Argo CD to 3.3.13 or later.",
}

# 3.2 and older, and 3.3.0 to 3.3.12 (fixed in 3.3.13 by argo-cd#28266 and in 3.4.0).
_rbac_create_fails if _release < 303

_rbac_create_fails if {
	_release == 303
	_number < 30313
}

# 2. An Application option this release does not read at the Application level.
violations contains {"msg": msg, "path": sprintf("/spec/syncPolicy/syncOptions/%d", [i]), "severity": sev} if {
	# cheap first tests, implied by _application below
	input.resource.kind == "Application"
	_applies
	_application
	some i, item in _app_options
	info := _app_level[item]
	_release < info.since
	sev := _app_level_severity(item)
	msg := sprintf(
		"Application %s sets %s in spec.syncPolicy.syncOptions, but %s: %s. %s",
		[_name, item, _not_read_text(info), info.effect, info.fix],
	)
}

_not_read_text(info) := sprintf("Argo CD reads it there only from %s (%s); %s ignores it", [info.from, info.evidence, _version]) if {
	info.since < 9999
} else := sprintf("no Argo CD release reads it there (%s)", [info.evidence])

_app_level := {
	"SkipDryRunOnMissingResource=true": {
		"since": 301, "from": "3.1.0", "severity": "medium",
		"evidence": "argo-cd#22679; reported as argo-cd#15095",
		"effect": "the dry run still fails on a custom resource whose CRD is not in the cluster (\"the server could not find the requested resource\"), and nothing is synced",
		"fix": "Annotate the custom resources themselves with argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true, or upgrade Argo CD to 3.1 or later.",
	},
	"ServerSideApply=true": {
		"since": 205, "from": "2.5.0", "severity": "medium",
		"evidence": "argo-cd#9711",
		"effect": "every object is applied client-side, with the last-applied-configuration annotation and its 262144-byte limit",
		"fix": "Upgrade Argo CD to 2.5 or later.",
	},
	"RespectIgnoreDifferences=true": {
		"since": 203, "from": "2.3.0", "severity": "medium",
		"evidence": "argo-cd#8078",
		"effect": "a sync still applies the fields ignoreDifferences hides, overwriting what a controller set (argo-cd#4912)",
		"fix": "Upgrade Argo CD to 2.3 or later, or remove the fields from the manifests.",
	},
	"FailOnSharedResource=true": {
		"since": 202, "from": "2.2.0", "severity": "low",
		"evidence": "argo-cd#7444",
		"effect": "a sync does not fail when another Application already manages one of the objects",
		"fix": "Upgrade Argo CD to 2.2 or later.",
	},
	"Prune=false": {
		"since": 304, "from": "3.4.0", "severity": "medium",
		"evidence": "argo-cd#23370",
		"effect": "every sync that prunes (automated prune, or Prune in a manual sync) deletes the resources removed from Git; only a resource's own argocd.argoproj.io/sync-options: Prune=false stops it",
		"fix": "Annotate the resources that must never be pruned with argocd.argoproj.io/sync-options: Prune=false, or upgrade Argo CD to 3.4 or later.",
	},
	"Prune=confirm": {
		"since": 304, "from": "3.4.0", "severity": "medium",
		"evidence": "argo-cd#23370",
		"effect": "every sync that prunes deletes the resources removed from Git without waiting for a confirmation; only a resource's own Prune=confirm annotation (from 2.14) waits",
		"fix": "Annotate the resources that need confirmation with argocd.argoproj.io/sync-options: Prune=confirm (Argo CD 2.14 or later), or upgrade Argo CD to 3.4 or later.",
	},
	"Delete=false": {
		"since": 304, "from": "3.4.0", "severity": "medium",
		"evidence": "argo-cd#23370",
		"effect": "deleting the Application with cascade deletes its resources; only a resource's own argocd.argoproj.io/sync-options: Delete=false keeps it",
		"fix": "Annotate the resources that must survive with argocd.argoproj.io/sync-options: Delete=false, or upgrade Argo CD to 3.4 or later.",
	},
	"Delete=confirm": {
		"since": 304, "from": "3.4.0", "severity": "medium",
		"evidence": "argo-cd#23370",
		"effect": "deleting the Application with cascade deletes its resources without waiting for a confirmation; only a resource's own Delete=confirm annotation (from 2.14) waits",
		"fix": "Annotate the resources that need confirmation with argocd.argoproj.io/sync-options: Delete=confirm (Argo CD 2.14 or later), or upgrade Argo CD to 3.4 or later.",
	},
	"Force=true": {
		"since": 9999, "from": "", "severity": "low",
		"evidence": "controller/sync.go takes force from the sync operation's strategy only",
		"effect": "objects are applied without --force",
		"fix": "Force a single sync (argocd app sync --force, or Force in the UI), or annotate the resources that need it with argocd.argoproj.io/sync-options: Force=true,Replace=true.",
	},
}

# Automated prune makes an ignored Prune=false delete things on its own.
_app_level_severity(item) := "high" if {
	item in {"Prune=false", "Prune=confirm"}
	object.get(_automated, "prune", false) == true
} else := info.severity if {
	info := _app_level[item]
}

# 3a. An Application-level option written on a resource.
violations contains {"msg": msg, "path": _sync_options_path, "severity": "info"} if {
	# cheap first test, implied by _resource_options below
	input.sync.sync_options.items != []
	_applies
	some item in _resource_options
	_app_only(item)
	msg := sprintf(
		"%s: %s in argocd.argoproj.io/sync-options does nothing on a resource: Argo CD reads it only from the Application's spec.syncPolicy.syncOptions. Move it there, or remove it.",
		[_subject, item],
	)
}

_app_only(item) if item in {
	"CreateNamespace=true",
	"ApplyOutOfSyncOnly=true",
	"RespectIgnoreDifferences=true",
	"FailOnSharedResource=true",
	"ClientSideApplyMigration=false",
}

_app_only(item) if startswith(item, "PrunePropagationPolicy=")

# 3b. Replace=false: never read.
violations contains {"msg": msg, "path": _sync_options_path, "severity": sev} if {
	# cheap first test, implied by _resource_options below
	input.sync.sync_options.items != []
	_applies
	"Replace=false" in _resource_options
	sev := _replace_false_severity
	msg := sprintf(
		"%s: Replace=false in argocd.argoproj.io/sync-options does nothing: Argo CD never reads Replace=false, so it cannot turn off Replace=true%s. Remove it; to keep this object from being replaced, take Replace=true out of the Application's syncOptions and annotate only the objects that need it.",
		[_subject, _replace_false_context],
	)
}

default _replace_false_severity := "info"

_replace_false_severity := "low" if "Replace=true" in _app_context_options

_replace_false_context := " set in the Application's syncOptions, which applies to this object too" if {
	"Replace=true" in _app_context_options
} else := " set at the Application level"

# 3c. A resource option this release does not know yet.
violations contains {"msg": msg, "path": _sync_options_path, "severity": info.severity} if {
	# cheap first test, implied by _resource_options below
	input.sync.sync_options.items != []
	_applies
	some item in _resource_options
	info := _resource_level[item]
	_release < info.since
	msg := sprintf(
		"%s: %s in argocd.argoproj.io/sync-options is read on a resource only from Argo CD %s (%s); %s ignores it, so %s. Upgrade Argo CD, or %s",
		[_subject, item, info.from, info.evidence, _version, info.effect, info.fix],
	)
}

_resource_level := {
	"ServerSideApply=true": {
		"since": 205, "from": "2.5.0", "severity": "low", "evidence": "argo-cd#9711",
		"effect": "this object is applied client-side",
		"fix": "remove the option.",
	},
	"ServerSideApply=false": {
		"since": 214, "from": "2.14.0", "severity": "low", "evidence": "gitops-engine#634",
		"effect": "an Application-level ServerSideApply=true still applies this object server-side",
		"fix": "turn ServerSideApply off for the whole Application.",
	},
	"Prune=confirm": {
		"since": 214, "from": "2.14.0", "severity": "medium", "evidence": "gitops-engine#630",
		"effect": "a sync that prunes deletes this object without waiting for a confirmation",
		"fix": "use Prune=false and delete the object by hand when it is time.",
	},
	"Delete=confirm": {
		"since": 214, "from": "2.14.0", "severity": "medium", "evidence": "gitops-engine#630",
		"effect": "deleting the Application with cascade deletes this object without waiting for a confirmation",
		"fix": "use Delete=false and delete the object by hand when it is time.",
	},
}

# 4. CreateNamespace=true while the AppProject does not permit Namespaces.
violations contains {"msg": msg, "path": sprintf("/spec/syncPolicy/syncOptions/%d", [i]), "severity": "high", "action": act} if {
	# cheap first tests, implied by _application and the project lookup below
	input.resource.kind == "Application"
	_applies
	_application
	some i, item in _app_options
	item == "CreateNamespace=true"
	ns := _destination_namespace
	ns != ""
	project := _projects[_project_name]
	is_object(project)
	reason := _namespace_denied(project, ns)
	act := _create_namespace_action
	msg := sprintf(
		"Application %s sets CreateNamespace=true, but its AppProject %s does not permit the cluster-scoped Namespace kind (%s): %s, Argo CD adds a Namespace task, checks it against the project like every other task, and fails the sync before anything is applied with \"resource :Namespace is not permitted in project %s\" (argo-cd#20233). Add {group: \"\", kind: Namespace} to the project's spec.clusterResourceWhitelist, or create namespace %s another way and drop CreateNamespace=true.",
		[_name, _project_name, reason, _create_namespace_when(ns), _project_name, ns],
	)
}

_create_namespace_when(ns) := sprintf("at every sync, because spec.syncPolicy.managedNamespaceMetadata is set, Argo CD syncs namespace %s", [ns]) if {
	_managed_namespace_metadata
} else := sprintf("whenever namespace %s does not exist yet (the first sync, or after it was deleted)", [ns])

default _create_namespace_action := "warn"

# With managedNamespaceMetadata every sync has the Namespace task, so every sync fails.
_create_namespace_action := "deny" if _managed_namespace_metadata

_managed_namespace_metadata if {
	policy := object.get(_spec, "syncPolicy", {})
	is_object(policy)
	object.get(policy, "managedNamespaceMetadata", null) != null
}

_destination_namespace := ns if {
	dest := object.get(_spec, "destination", {})
	is_object(dest)
	ns := object.get(dest, "namespace", "")
	is_string(ns)
} else := ""

# spec.project "" means the default project (ApplicationSpec.GetProject).
_project_name := p if {
	p := object.get(_spec, "project", "")
	is_string(p)
	p != ""
} else := "default"

default _projects := {}

_projects := p if {
	argocd := object.get(input, "argocd", {})
	is_object(argocd)
	config := object.get(argocd, "config", {})
	is_object(config)
	not object.get(config, "source", "none") == "none"
	p := object.get(config, "projects", {})
	is_object(p)
}

# Why the project denies a Namespace; undefined when it permits one or when a pattern cannot be
# judged here (say nothing). AppProject.IsGroupKindNamePermitted: a cluster-scoped kind needs a
# matching clusterResourceWhitelist entry (an empty list permits none) and no matching blacklist
# entry; entries are filepath.Match patterns; an entry's name counts from 3.3.
_namespace_denied(project, ns) := "its spec.clusterResourceWhitelist is empty, which permits no cluster-scoped kind" if {
	count(_entries(project, "cluster_resource_whitelist")) == 0
} else := "its spec.clusterResourceWhitelist does not list it" if {
	entries := _entries(project, "cluster_resource_whitelist")
	count(entries) > 0
	every e in entries {
		_entry_match(e, ns) == "no"
	}
} else := "its spec.clusterResourceBlacklist lists it" if {
	some e in _entries(project, "cluster_resource_whitelist")
	_entry_match(e, ns) == "yes"
	some b in _entries(project, "cluster_resource_blacklist")
	_entry_match(b, ns) == "yes"
}

_entries(project, key) := [e | some e in list; is_object(e)] if {
	list := object.get(project, key, [])
	is_array(list)
} else := []

# "yes", "no" or "unknown" (a glob this rule does not evaluate).
_entry_match(e, ns) := "yes" if {
	_glob(_str(e, "group"), "") == "yes"
	_glob(_str(e, "kind"), "Namespace") == "yes"
	_name_match(e, ns) == "yes"
} else := "no" if {
	some verdict in [_glob(_str(e, "group"), ""), _glob(_str(e, "kind"), "Namespace"), _name_match(e, ns)]
	verdict == "no"
} else := "unknown"

# Names in cluster-resource entries exist from 3.3 (older releases drop the field).
_name_match(e, ns) := "yes" if {
	_release < 303
} else := "yes" if {
	_str(e, "name") == ""
} else := _glob(_str(e, "name"), ns)

_glob(pattern, value) := "yes" if {
	pattern == value
} else := "yes" if {
	pattern == "*"
} else := "unknown" if {
	some c in ["*", "?", "[", "\\"]
	contains(pattern, c)
} else := "no"

# 5. Force=true on an object applied server-side.
violations contains {"msg": msg, "path": _sync_options_path, "severity": sev} if {
	_applies
	"Force=true" in _resource_options
	not "Replace=true" in _resource_options
	not "Replace=true" in _app_context_options
	where := _server_side_source
	_force_ignored_under_ssa
	sev := "low"
	msg := sprintf(
		"%s: Force=true in argocd.argoproj.io/sync-options does nothing here: the object is applied server-side (%s), and Argo CD %s drops --force for server-side applies (from 3.6), so a change to an immutable field fails the apply instead of re-creating the object. Add Replace=true (Argo CD then replaces the object, with force) or remove Force=true.",
		[_subject, where, _version],
	)
}

violations contains {"msg": msg, "path": _sync_options_path, "severity": "high"} if {
	_applies
	"Force=true" in _resource_options
	not "Replace=true" in _resource_options
	not "Replace=true" in _app_context_options
	where := _server_side_source
	not _force_ignored_under_ssa
	msg := sprintf(
		"%s: Force=true in argocd.argoproj.io/sync-options on an object applied server-side (%s): Argo CD %s passes both to kubectl, which refuses them together (\"--force cannot be used with --server-side\"), so every sync fails to apply this object. Remove Force=true, add Replace=true (the object is then replaced, with force), or set ServerSideApply=false on it; Argo CD 3.6 ignores Force=true here instead.",
		[_subject, where, _version],
	)
}

_server_side_source := "its own ServerSideApply=true" if {
	"ServerSideApply=true" in _resource_options
} else := "the Application's ServerSideApply=true" if {
	"ServerSideApply=true" in _app_context_options
	not "ServerSideApply=false" in _resource_options
}

# The release table's force_with_server_side_apply_ignored (input.argocd.behaviours); the newest
# release's answer (3.6: yes) when absent.
_force_ignored_under_ssa if _behaviour("force_with_server_side_apply_ignored")

_behaviour(name) if object.get(_behaviours, name, true) == true

_behaviours := b if {
	argocd := object.get(input, "argocd", {})
	is_object(argocd)
	b := object.get(argocd, "behaviours", {})
	is_object(b)
} else := {}

# ---- options ----

# A resource's own argocd.argoproj.io/sync-options items.
_resource_options := items if {
	options := object.get(_sync, "sync_options", {})
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
} else := []

# The owning Application's syncOptions (input.app), which apply to every object it syncs.
_app_context_options := items if {
	app := object.get(input, "app", {})
	is_object(app)
	options := object.get(app, "sync_options", {})
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
} else := []

# spec.syncPolicy.syncOptions of the Application object being judged, trimmed, by index.
_app_options := {i: trim_space(raw) |
	policy := object.get(_spec, "syncPolicy", {})
	is_object(policy)
	list := object.get(policy, "syncOptions", [])
	is_array(list)
	some i, raw in list
	is_string(raw)
}

default _automated := {}

_automated := a if {
	policy := object.get(_spec, "syncPolicy", {})
	is_object(policy)
	a := object.get(policy, "automated", {})
	is_object(a)
}

_application if {
	_kind == "Application"
	startswith(_str(_resource, "apiVersion"), "argoproj.io/")
}

_sync_options_path := "/metadata/annotations/argocd.argoproj.io~1sync-options"

_hook_phases := [t | some t in _list("hook_types"); is_string(t); t != "Skip"]

# ---- the Argo CD release judged for ----

# input.argocd.release (major * 100 + minor); the newest release when absent.
default _release := 306

_release := r if {
	r := input.argocd.release
	is_number(r)
}

# input.argocd.number (major * 10000 + minor * 100 + patch, patch 99 for "3.3"); from the release
# when absent.
_number := n if {
	n := input.argocd.number
	is_number(n)
} else := (_release * 100) + 99

_version := sprintf("v%s", [v]) if {
	v := input.argocd.version
	is_string(v)
	v != ""
} else := "this release"

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

# "RoleBinding ingress-nginx/ingress-nginx-admission"
_subject := sprintf("%s %s", [_kind, _qualified_name])
