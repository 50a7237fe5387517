# Tests for SG621 (policies/project_not_permitted.rego). input.project is mocked as
# src/evaluate/project.rs builds it for an Application whose AppProject is known.
package syncguard.rules.project_not_permitted_test

import data.syncguard.rules.project_not_permitted as rule

application := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": {
		"project": "team-a",
		"source": {"repoURL": "https://github.com/other-org/shop.git", "path": "deploy"},
		"destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
	},
}

destination(overrides) := object.union(
	{
		"verdict": "permitted", "assumed": null, "why": "",
		"server": "https://kubernetes.default.svc", "name": "", "namespace": "shop",
	},
	overrides,
)

review(dest, repos) := {
	"operation": "CHECK",
	"resource": application,
	"project": {"name": "team-a", "destination": dest, "repos": repos},
	"argocd": {
		"version": "3.2.0", "release": 302,
		"config": {"source": "input", "projects": {"team-a": {"source_repos": ["https://github.com/team-a/*"]}}},
	},
}

allowed_repo := [{"pointer": "/spec/source/repoURL", "repo_url": "https://github.com/team-a/shop.git", "permitted": true}]

test_a_permitted_application_is_silent if {
	count(rule.violations) == 0 with input as review(destination({}), allowed_repo)
}

test_a_destination_outside_the_project_denies if {
	d := destination({"verdict": "denied", "why": "no entry of spec.destinations matches it"})
	v := rule.violations with input as review(d, allowed_repo)
	v == {{
		"msg": "Application shop: its destination (server \"https://kubernetes.default.svc\", namespace \"shop\") is not permitted by AppProject team-a: no entry of spec.destinations matches it. Argo CD refuses the Application with \"application destination server 'https://kubernetes.default.svc' and namespace 'shop' do not match any of the allowed destinations in project 'team-a'\" and syncs nothing, automatically or by hand (Argo CD v3.2.0). Add a matching entry to the project's spec.destinations, or change the Application's destination.",
		"path": "/spec/destination",
		"severity": "high",
		"action": "deny",
	}}
}

test_a_verdict_resting_on_the_in_cluster_name_warns if {
	d := destination({"verdict": "denied", "why": "no entry of spec.destinations matches it", "assumed": "the local cluster keeps its default name in-cluster"})
	v := rule.violations with input as review(d, allowed_repo)
	count(v) == 1
	some f in v
	f.action == "warn"
	contains(f.msg, "(assuming the local cluster keeps its default name in-cluster)")
}

test_a_destination_by_name_is_shown_by_name if {
	d := destination({"verdict": "denied", "why": "w", "server": "", "name": "prod"})
	v := rule.violations with input as review(d, allowed_repo)
	some f in v
	contains(f.msg, "its destination (name \"prod\", namespace \"shop\")")
	contains(f.msg, "application destination server '…' and namespace 'shop'")
}

test_unknown_verdicts_say_nothing if {
	count(rule.violations) == 0 with input as review(destination({"verdict": "unknown", "why": "depends"}), allowed_repo)
}

test_a_repository_outside_the_project_denies if {
	repos := [{"pointer": "/spec/source/repoURL", "repo_url": "https://github.com/other-org/shop.git", "permitted": false}]
	v := rule.violations with input as review(destination({}), repos)
	v == {{
		"msg": "Application shop: repository https://github.com/other-org/shop.git is not permitted by AppProject team-a (spec.sourceRepos: [https://github.com/team-a/*]; patterns are globs over the normalised URL in which * stops at /, and a ! pattern that does not match rejects). Argo CD refuses the Application with \"application repo https://github.com/other-org/shop.git is not permitted in project 'team-a'\" and syncs nothing, automatically or by hand (Argo CD v3.2.0). Add the repository (or a pattern for it) to the project's spec.sourceRepos, or use a permitted one.",
		"path": "/spec/source/repoURL",
		"severity": "high",
		"action": "deny",
	}}
}

test_each_refused_source_of_a_multi_source_application if {
	repos := [
		{"pointer": "/spec/sources/0/repoURL", "repo_url": "https://github.com/team-a/shop", "permitted": true},
		{"pointer": "/spec/sources/1/repoURL", "repo_url": "https://charts.example.com", "permitted": false},
	]
	v := rule.violations with input as review(destination({}), repos)
	count(v) == 1
	some f in v
	f.path == "/spec/sources/1/repoURL"
}

test_without_the_project_nothing_is_said if {
	doc := object.remove(review(destination({"verdict": "denied", "why": "w"}), []), ["project"])
	count(rule.violations) == 0 with input as doc
	count(rule.violations) == 0 with input as object.union(review(destination({"verdict": "denied", "why": "w"}), []), {"operation": "DELETE"})
}
