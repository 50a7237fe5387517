# Tests for SG306 (policies/ignore_differences_governed.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses.
package syncguard.rules.ignore_differences_governed_test

import data.syncguard.rules.ignore_differences_governed as rule

app(entries) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "shop", "namespace": "argocd"},
	"spec": {"ignoreDifferences": entries},
}

entry(at, matched, near, pointers, jq, frozen) := {
	"at": at, "matched": matched, "near": near, "pointers": pointers, "jq": jq, "frozen_lists": frozen,
}

pointer(p, present, through, fix) := {
	"pointer": p, "present": present, "absent": 0, "through_list": through, "invalid": false, "fix": fix,
}

doc(entries, facts) := {
	"operation": "CHECK",
	"resource": app(entries),
	"governed": {"objects": 3, "ignore_differences": facts},
	"context": {"source": "check", "dry_run": false},
}

test_an_entry_that_matches_its_objects_and_names_fields_is_fine if {
	d := doc(
		[{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}],
		[entry("/spec/ignoreDifferences/0", 1, [], [pointer("/spec/replicas", 1, null, null)], [], [])],
	)
	count(rule.violations) == 0 with input as d
}

test_an_entry_for_another_name_names_the_object_it_was_meant_for if {
	d := doc(
		[{"group": "apps", "kind": "Deployment", "name": "web", "jsonPointers": ["/spec/replicas"]}],
		[entry(
			"/spec/ignoreDifferences/0", 0,
			[{"group": "apps", "kind": "Deployment", "name": "web-app", "namespace": "shop", "differs": "name"}],
			[pointer("/spec/replicas", 0, null, null)], [], [],
		)],
	)
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.path == "/spec/ignoreDifferences/0"
	v.severity == "medium"
	v.msg == "Application shop: ignoreDifferences[0] (apps/Deployment web) applies to none of the 3 objects of this Application, so it hides nothing and the difference it was written for still shows. No Deployment is named \"web\" here; Deployment web-app is: correct name, or drop it to match every Deployment."
}

test_a_missing_group_is_left_to_sg303 if {
	d := doc(
		[{"kind": "Deployment", "jsonPointers": ["/spec/replicas"]}],
		[entry(
			"/spec/ignoreDifferences/0", 0,
			[{"group": "apps", "kind": "Deployment", "name": "web", "namespace": "shop", "differs": "group"}],
			[], [], [],
		)],
	)
	count(rule.violations) == 0 with input as d
}

test_an_entry_with_nothing_near_is_low if {
	d := doc(
		[{"group": "apps", "kind": "StatefulSet", "jsonPointers": ["/spec/replicas"]}],
		[entry("/spec/ignoreDifferences/0", 0, [], [], [], [])],
	)
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.severity == "low"
}

test_a_pointer_through_a_list_suggests_the_jq_expression if {
	d := doc(
		[{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/template/spec/containers/image"]}],
		[entry("/spec/ignoreDifferences/0", 2, [], [pointer(
			"/spec/template/spec/containers/image", 0, "/spec/template/spec/containers",
			".spec.template.spec.containers[].image",
		)], [], [])],
	)
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.path == "/spec/ignoreDifferences/0/jsonPointers/0"
	contains(v.msg, "use jqPathExpressions: [\".spec.template.spec.containers[].image\"]")
}

test_a_bracket_index_is_rewritten if {
	d := doc(
		[{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/template/spec/containers[0]/image"]}],
		[entry("/spec/ignoreDifferences/0", 1, [], [pointer(
			"/spec/template/spec/containers[0]/image", 0, null, "/spec/template/spec/containers/0/image",
		)], [], [])],
	)
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	contains(v.msg, "(JSON pointers have no [n] index syntax)")
	contains(v.msg, "Write /spec/template/spec/containers/0/image.")
}

test_an_unparsable_jq_expression_is_high if {
	d := doc(
		[{"group": "apps", "kind": "Deployment", "jqPathExpressions": [".spec | select(.a =="]}],
		[entry("/spec/ignoreDifferences/0", 1, [], [], [{
			"expression": ".spec | select(.a ==", "selects": 0, "fails": 0, "unparsable": "cannot parse",
		}], [])],
	)
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	v.severity == "high"
	v.path == "/spec/ignoreDifferences/0/jqPathExpressions/0"
}

test_a_frozen_list_is_reported_with_the_list if {
	d := doc(
		[{"group": "x.io", "kind": "Route", "jsonPointers": ["/spec/hosts/0/weight"]}],
		[entry("/spec/ignoreDifferences/0", 1, [], [pointer("/spec/hosts/0/weight", 1, null, null)], [], ["Route/r/spec/hosts"])],
	)
	vs := rule.violations with input as d
	count(vs) == 1
	some v in vs
	contains(v.msg, "(Route/r/spec/hosts)")
}

test_a_deletion_is_never_judged if {
	d := object.union(
		doc(
			[{"group": "apps", "kind": "StatefulSet"}],
			[entry("/spec/ignoreDifferences/0", 0, [], [], [], [])],
		),
		{"operation": "DELETE"},
	)
	count(rule.violations) == 0 with input as d
}
