# Tests for SG309 (policies/argocd_settings_key.rego).
package syncguard.rules.argocd_settings_key_test

import data.syncguard.rules.argocd_settings_key as rule

cm(name) := {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "argocd"}}

note(configmap, key, issue, meant, detail) := {
	"configmap": configmap, "namespace": "argocd", "source": "input", "key": key,
	"pointer": concat("", ["/data/", key]), "issue": issue, "meant": meant, "detail": detail,
	"removed_in": null,
}

doc(name, notes, release) := {
	"operation": "CHECK",
	"resource": cm(name),
	"argocd": {"release": release, "config": {"source": "input", "notes": notes}},
}

misplaced := note(
	"argocd-cm", "ignore.normalizer.jq.timeout", "misplaced",
	"controller.ignore.normalizer.jq.timeout in argocd-cmd-params-cm",
	"the application controller reads it from argocd-cmd-params-cm; this key is never read",
)

test_a_misplaced_key_is_reported_at_its_line_with_the_key_meant if {
	vs := rule.violations with input as doc("argocd-cm", [misplaced], 300)
	count(vs) == 1
	some v in vs
	v.path == "/data/ignore.normalizer.jq.timeout"
	v.severity == "medium"
	v.msg == "argocd-cm key \"ignore.normalizer.jq.timeout\": the application controller reads it from argocd-cmd-params-cm; this key is never read. Did you mean controller.ignore.normalizer.jq.timeout in argocd-cmd-params-cm?"
}

test_notes_of_another_configmap_or_source_are_not_reported_here if {
	count(rule.violations) == 0 with input as doc("argocd-cmd-params-cm", [misplaced], 300)
	from_file := object.union(misplaced, {"source": "file"})
	count(rule.violations) == 0 with input as doc("argocd-cm", [from_file], 300)
	elsewhere := object.union(misplaced, {"namespace": "other"})
	count(rule.violations) == 0 with input as doc("argocd-cm", [elsewhere], 300)
}

test_a_key_that_breaks_every_customization_is_high if {
	n := note("argocd-cm", "resource.customizations.heath.apps_Deployment", "breaks", "resource.customizations.health.apps_Deployment", "not a type")
	vs := rule.violations with input as doc("argocd-cm", [n], 300)
	some v in vs
	v.severity == "high"
}

test_an_unknown_key_without_a_guess_is_info if {
	n := note("argocd-cm", "my.key", "unknown", null, "not a key Argo CD reads")
	vs := rule.violations with input as doc("argocd-cm", [n], 300)
	some v in vs
	v.severity == "info"
	v.msg == "argocd-cm key \"my.key\": not a key Argo CD reads."
}

test_a_key_of_an_older_release_only_after_its_removal if {
	n := object.union(note("argocd-cm", "repositories", "other_release", null, "read before 3.0 only"), {"removed_in": 300})
	count(rule.violations) == 0 with input as doc("argocd-cm", [n], 214)
	count(rule.violations) == 1 with input as doc("argocd-cm", [n], 300)
}

test_other_objects_are_not_judged if {
	d := object.union(doc("argocd-cm", [misplaced], 300), {"resource": {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "argocd-cm", "namespace": "argocd"}}})
	count(rule.violations) == 0 with input as d
}
