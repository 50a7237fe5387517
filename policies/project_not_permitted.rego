# SG621: an Application its AppProject does not permit.
#
# Facts: input.project on an Application (src/evaluate/project.rs), present only when the
# Application's AppProject is known (in the input, --argocd-config, or the live cluster). The
# verdicts are Argo CD's own matching (crates/syncguard-argocd/src/config/project.rs:
# IsDestinationPermitted and IsSourcePermitted of app_project_types.go, release by release).
#
# Argo CD checks both in ValidatePermissions (util/argo/argo.go) before anything else: an
# Application that fails gets an InvalidSpecError condition ("application destination server
# '…' and namespace '…' do not match any of the allowed destinations in project '…'", or
# "application repo … is not permitted in project '…'"), its sync and health turn Unknown, and
# nothing is synced, automatically or by hand; `argocd app create` and the API refuse it.
#
#  1. destination not permitted: high; deny when proven from the project alone, warn when it
#     rests on the local cluster keeping its default name in-cluster.
#  2. a source repository not permitted: high, deny.
#
# CreateNamespace=true in a project that permits no Namespace is SG119's (finding 4): this rule
# does not repeat it.
package syncguard.rules.project_not_permitted

meta := {
	"id": "SG621",
	"title": "Application its AppProject does not permit",
	"severity": "high",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD refuses an Application whose destination or source repository its AppProject does",
		"not permit: it gets an InvalidSpecError condition and nothing is ever synced.",
	]),
	"docs": "docs/rules/SG621.md",
	"kinds": ["Application"],
}

# 1. Destination.
violations contains {"msg": msg, "path": "/spec/destination", "severity": "high", "action": act} if {
	input.resource.kind == "Application"
	_applies
	d := _project.destination
	is_object(d)
	d.verdict == "denied"
	act := _destination_action(d)
	msg := sprintf(
		"Application %s: its destination (%s, namespace \"%s\") is not permitted by AppProject %s: %s%s. Argo CD refuses the Application with \"application destination server '%s' and namespace '%s' do not match any of the allowed destinations in project '%s'\" and syncs nothing, automatically or by hand (%s). Add a matching entry to the project's spec.destinations, or change the Application's destination.",
		[_name, _cluster_text(d), d.namespace, _project.name, d.why, _assumed_text(d), _shown_server(d), d.namespace, _project.name, _version],
	)
}

_destination_action(d) := "deny" if d.assumed == null

_destination_action(d) := "warn" if d.assumed != null

_assumed_text(d) := sprintf(" (assuming %s)", [d.assumed]) if is_string(d.assumed) else := ""

_cluster_text(d) := sprintf("name \"%s\"", [d.name]) if d.name != "" else := sprintf("server \"%s\"", [d.server])

# With a cluster name, what the message shows changed across releases (the inferred server
# before 3.0, an empty server in 3.0, the name later): not quoted.
_shown_server(d) := d.server if d.name == "" else := "…"

# 2. Source repositories.
violations contains {"msg": msg, "path": r.pointer, "severity": "high", "action": "deny"} if {
	input.resource.kind == "Application"
	_applies
	repos := _project.repos
	is_array(repos)
	some r in repos
	is_object(r)
	r.permitted == false
	msg := sprintf(
		"Application %s: repository %s is not permitted by AppProject %s (spec.sourceRepos: %s; patterns are globs over the normalised URL in which * stops at /, and a ! pattern that does not match rejects). Argo CD refuses the Application with \"application repo %s is not permitted in project '%s'\" and syncs nothing, automatically or by hand (%s). Add the repository (or a pattern for it) to the project's spec.sourceRepos, or use a permitted one.",
		[_name, r.repo_url, _project.name, _source_repos, r.repo_url, _project.name, _version],
	)
}

_source_repos := sprintf("[%s]", [concat(", ", repos)]) if {
	p := _config_projects[_project.name]
	repos := object.get(p, "source_repos", [])
	is_array(repos)
	count(repos) > 0
} else := "none, which permits no repository"

default _config_projects := {}

_config_projects := p if {
	p := input.argocd.config.projects
	is_object(p)
}

default _project := {}

_project := p if {
	p := input.project
	is_object(p)
	is_string(p.name)
}

_version := sprintf("Argo CD v%s", [v]) if {
	v := input.argocd.version
	is_string(v)
	v != ""
} else := "this Argo CD release"

# ---- input helpers ----

_applies if object.get(input, "operation", "") != "DELETE"

_name := n if {
	m := object.get(input.resource, "metadata", {})
	is_object(m)
	n := object.get(m, "name", "")
	is_string(n)
} else := ""
