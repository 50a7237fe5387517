# Tests for SG204 (policies/autoscaled_replicas.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md (input.dependents, input.app).
package syncguard.rules.autoscaled_replicas_test

import data.syncguard.rules.autoscaled_replicas as rule

web := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": {
		"replicas": 3,
		"selector": {"matchLabels": {"app": "web"}},
		"template": {
			"metadata": {"labels": {"app": "web"}},
			"spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:2.3.0"}]},
		},
	},
}

facts := {"phases": ["Sync"], "is_hook": false, "hook_types": [], "wave": 0, "sync_options": {"items": [], "unknown": []}}

hpa := {
	"kind": "HorizontalPodAutoscaler", "group": "autoscaling", "name": "web", "namespace": "shop",
	"role": "scale_target", "via": "/spec/scaleTargetRef/name", "is_hook": false, "phases": ["Sync"], "wave": 0,
}

service := {
	"kind": "PodDisruptionBudget", "group": "policy", "name": "web", "namespace": "shop",
	"role": "workload", "via": "/spec/selector", "is_hook": false, "phases": ["Sync"], "wave": 0,
}

app(ignore, options, automated) := {
	"name": "shop",
	"destination_namespace": "shop",
	"sync_options": {"items": options, "unknown": []},
	"automated": automated,
	"self_heal": automated,
	"auto_prune": automated,
	"ignore_differences": ignore,
	"managed_namespace_metadata": null,
}

review(resource, dependents, application) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": facts,
	"refs": [],
	"dependents": dependents,
	"app": application,
	"context": {"source": "check", "dry_run": false},
}

replicas_entry := {"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/replicas"]}

not_ignored_msg := concat("", [
	"Deployment shop/web sets spec.replicas and is scaled by HorizontalPodAutoscaler shop/web: ",
	"the autoscaler changes spec.replicas, so Argo CD shows it OutOfSync and every sync (self-heal included) sets it back to 3, ",
	"fighting the autoscaler (argo-cd#1079). Remove spec.replicas from the manifest (recommended), or add to Application shop ",
	"ignoreDifferences: [{group: apps, kind: Deployment, name: web, jsonPointers: [/spec/replicas]}] ",
	"and syncOptions: [RespectIgnoreDifferences=true].",
])

test_replicas_with_an_hpa_and_no_ignore_differences if {
	v := rule.violations with input as review(web, [hpa], app([], [], true))
	v == {{"msg": not_ignored_msg, "path": "/spec/replicas"}}
}

test_ignore_differences_with_respect_ignore_differences_is_fine if {
	r := review(web, [hpa], app([replicas_entry], ["RespectIgnoreDifferences=true"], true))
	count(rule.violations) == 0 with input as r
}

test_automated_sync_without_respect_ignore_differences_still_resets_replicas if {
	v := rule.violations with input as review(web, [hpa], app([replicas_entry], ["CreateNamespace=true"], true))
	v == {{
		"msg": concat("", [
			"Deployment shop/web is scaled by HorizontalPodAutoscaler shop/web, and Application shop ignores its /spec/replicas ",
			"without RespectIgnoreDifferences=true: ignoreDifferences only hides the difference, so every automated sync still applies ",
			"spec.replicas: 3 from Git and scales it back until the autoscaler catches up (argo-cd#4912). ",
			"Add syncOptions: [RespectIgnoreDifferences=true] to Application shop, or remove spec.replicas from the manifest.",
		]),
		"path": "/spec/replicas",
	}}
}

test_a_manual_application_with_ignore_differences_is_left_alone if {
	count(rule.violations) == 0 with input as review(web, [hpa], app([replicas_entry], [], false))
}

test_an_entry_without_group_means_the_core_group_and_does_not_cover_a_deployment if {
	entry := object.remove(replicas_entry, ["group"])
	v := rule.violations with input as review(web, [hpa], app([entry], ["RespectIgnoreDifferences=true"], true))
	v == {{"msg": not_ignored_msg, "path": "/spec/replicas"}}
}

test_glob_group_and_kind_with_a_jq_path_cover_every_workload if {
	entry := {"group": "*", "kind": "*", "jqPathExpressions": [" .spec.replicas "]}
	r := review(web, [hpa], app([entry], ["RespectIgnoreDifferences=true"], true))
	count(rule.violations) == 0 with input as r
}

test_a_partial_glob_covers_matching_groups if {
	entry := {"group": "app*", "kind": "Deploy*", "jsonPointers": ["/spec/replicas"]}
	r := review(web, [hpa], app([entry], ["RespectIgnoreDifferences=true"], true))
	count(rule.violations) == 0 with input as r
}

test_the_hpa_field_manager_covers_replicas if {
	entry := {"group": "apps", "kind": "Deployment", "managedFieldsManagers": ["kube-controller-manager"]}
	r := review(web, [hpa], app([entry], ["RespectIgnoreDifferences=true"], true))
	count(rule.violations) == 0 with input as r
}

test_entries_for_another_name_namespace_or_field_do_not_cover if {
	every entry in [
		object.union(replicas_entry, {"name": "api"}),
		object.union(replicas_entry, {"namespace": "staging"}),
		object.union(replicas_entry, {"jsonPointers": ["/spec/template/spec/containers/0/resources"]}),
		object.union(replicas_entry, {"kind": "StatefulSet"}),
		{"group": "(apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]},
	] {
		v := rule.violations with input as review(web, [hpa], app([entry], ["RespectIgnoreDifferences=true"], true))
		v == {{"msg": not_ignored_msg, "path": "/spec/replicas"}}
	}
}

test_an_entry_namespace_matches_the_destination_namespace_of_an_unnamespaced_object if {
	unnamespaced := json.remove(web, ["metadata/namespace"])
	entry := object.union(replicas_entry, {"namespace": "shop"})
	r := review(unnamespaced, [hpa], app([entry], ["RespectIgnoreDifferences=true"], true))
	count(rule.violations) == 0 with input as r
}

test_without_the_owning_application_both_fixes_are_offered if {
	r := object.remove(review(web, [hpa], {}), ["app"])
	v := rule.violations with input as r
	v == {{
		"msg": concat("", [
			"Deployment shop/web sets spec.replicas and is scaled by HorizontalPodAutoscaler shop/web: ",
			"the autoscaler changes spec.replicas, so Argo CD shows it OutOfSync and every sync (self-heal included) sets it back to 3, ",
			"fighting the autoscaler (argo-cd#1079). Remove spec.replicas from the manifest (recommended), or add to the owning Application ",
			"ignoreDifferences: [{group: apps, kind: Deployment, name: web, jsonPointers: [/spec/replicas]}] ",
			"and syncOptions: [RespectIgnoreDifferences=true].",
		]),
		"path": "/spec/replicas",
	}}
}

test_no_replicas_in_the_manifest_is_the_recommended_shape if {
	count(rule.violations) == 0 with input as review(json.remove(web, ["spec/replicas"]), [hpa], app([], [], true))
}

test_replicas_without_an_autoscaler_are_fine if {
	count(rule.violations) == 0 with input as review(web, [service], app([], [], true))
	count(rule.violations) == 0 with input as review(web, [], app([], [], true))
}

test_a_keda_scaled_statefulset_gets_a_snippet_for_its_group_and_kind if {
	sts := object.union(web, {"kind": "StatefulSet", "metadata": {"name": "worker"}, "spec": {"replicas": 1}})
	keda := object.union(hpa, {"kind": "ScaledObject", "group": "keda.sh", "name": "worker"})
	v := rule.violations with input as review(sts, [keda], app([], [], true))
	count(v) == 1
	some x in v
	startswith(x.msg, "StatefulSet shop/worker sets spec.replicas and is scaled by ScaledObject shop/worker:")
	contains(x.msg, "sets it back to 1,")
	contains(x.msg, "ignoreDifferences: [{group: apps, kind: StatefulSet, name: worker, jsonPointers: [/spec/replicas]}]")
}

test_an_argo_rollout_snippet_uses_the_argoproj_group if {
	rollout := object.union(web, {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"})
	v := rule.violations with input as review(rollout, [hpa], app([], [], true))
	count(v) == 1
	some x in v
	contains(x.msg, "ignoreDifferences: [{group: argoproj.io, kind: Rollout, name: web, jsonPointers: [/spec/replicas]}]")
}

test_a_core_group_workload_gets_an_explicit_empty_group if {
	rc := object.union(web, {"apiVersion": "v1", "kind": "ReplicationController"})
	v := rule.violations with input as review(rc, [hpa], app([], [], true))
	some x in v
	contains(x.msg, "ignoreDifferences: [{group: \"\", kind: ReplicationController, name: web, jsonPointers: [/spec/replicas]}]")
}

test_all_autoscalers_are_named_once if {
	keda := object.union(hpa, {"kind": "ScaledObject", "group": "keda.sh", "name": "web-queue"})
	v := rule.violations with input as review(web, [hpa, keda, hpa], app([], [], true))
	count(v) == 1
	some x in v
	startswith(x.msg, "Deployment shop/web sets spec.replicas and is scaled by HorizontalPodAutoscaler shop/web, ScaledObject shop/web-queue:")
}

test_a_hook_is_not_part_of_sync_status if {
	r := object.union(review(web, [hpa], app([], [], true)), {"sync": object.union(facts, {"is_hook": true, "hook_types": ["PostSync"]})})
	count(rule.violations) == 0 with input as r
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(review(web, [hpa], app([], [], true)), {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": web, "dependents": "x", "app": "x"}
	r := review(web, [1, {"role": "scale_target"}], {"name": 1, "ignore_differences": [1, {"group": 1, "jsonPointers": "x", "jqPathExpressions": [1]}], "sync_options": "x", "automated": "yes"})
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	startswith(x.msg, "Deployment shop/web sets spec.replicas and is scaled by an autoscaler:")
	contains(x.msg, "add to Application (unnamed) ignoreDifferences")
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG204"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG204.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
