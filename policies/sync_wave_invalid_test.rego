# Tests for SG107 (policies/sync_wave_invalid.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.sync_wave_invalid_test

import data.syncguard.rules.sync_wave_invalid as rule

wave_path := "/metadata/annotations/argocd.argoproj.io~1sync-wave"

weight_path := "/metadata/annotations/helm.sh~1hook-weight"

deployment(annotations) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {
		"name": "svc-foo",
		"namespace": "app-foo",
		"labels": {"app.kubernetes.io/name": "svc-foo"},
		"annotations": annotations,
	},
	"spec": {
		"selector": {"matchLabels": {"app.kubernetes.io/name": "svc-foo"}},
		"template": {
			"metadata": {"labels": {"app.kubernetes.io/name": "svc-foo"}},
			"spec": {"containers": [{
				"name": "app",
				"image": "registry.example.com/svc-foo/app:1.4.2",
				"ports": [{"containerPort": 8080}],
				"envFrom": [{"secretRef": {"name": "svc-foo-db"}}],
			}]},
		},
	},
}

facts(overrides) := object.union(
	{
		"phases": ["Sync"],
		"is_hook": false,
		"skip": false,
		"hook_types": [],
		"invalid_hook_values": [],
		"helm_hooks": [],
		"unsupported_helm_hooks": [],
		"wave": 0,
		"wave_valid": true,
		"wave_source": "default",
		"delete_policies": ["BeforeHookCreation"],
		"delete_policy_set": false,
		"invalid_delete_policies": [],
		"sync_options": {"items": [], "unknown": []},
		"compare_options": [],
		"tracking": {},
	},
	overrides,
)

review(resource, sync) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"context": {"source": "check", "dry_run": false},
}

# One Deployment whose sync-wave is `raw` (and invalid).
bad_wave(raw) := review(
	deployment({"argocd.argoproj.io/sync-wave": raw}),
	facts({"wave_raw": raw, "wave_valid": false}),
)

test_a_decimal_wave_silently_becomes_zero if {
	v := rule.violations with input as bad_wave("1.5")
	v == {{
		"msg": "Deployment app-foo/svc-foo: argocd.argoproj.io/sync-wave \"1.5\" is not a plain integer, so Argo CD silently uses wave 0 instead. Waves are whole numbers: renumber instead (for example 10, 15, 20 rather than 1, 1.5, 2).",
		"path": wave_path,
	}}
}

test_spaces_around_a_number_get_the_trimmed_value if {
	v := rule.violations with input as bad_wave(" 2")
	count(v) == 1
	some x in v
	endswith(x.msg, "sync-wave \" 2\" is not a plain integer, so Argo CD silently uses wave 0 instead. Remove the spaces: use \"2\".")
}

test_an_empty_wave_is_named_as_empty if {
	v := rule.violations with input as bad_wave("")
	count(v) == 1
	some x in v
	endswith(x.msg, "The value is empty: set a whole number or remove the annotation.")
}

test_an_out_of_range_wave_is_named_as_such if {
	v := rule.violations with input as bad_wave("99999999999999999999")
	count(v) == 1
	some x in v
	endswith(x.msg, "The number is out of range: use a small whole number.")
}

test_other_garbage_gets_the_generic_fix if {
	every raw in ["0x10", "1_0", "first", "\"1\""] {
		v := rule.violations with input as bad_wave(raw)
		count(v) == 1
		some x in v
		endswith(x.msg, "Use a plain whole number such as \"-1\", \"0\" or \"5\" (no spaces, units or other characters).")
	}
}

test_an_invalid_wave_names_the_hook_weight_it_falls_back_to if {
	r := review(
		deployment({"argocd.argoproj.io/sync-wave": "early", "helm.sh/hook-weight": "-3"}),
		facts({"wave": -3, "wave_raw": "early", "wave_valid": false, "wave_source": "hook-weight"}),
	)
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == wave_path
	contains(x.msg, "so Argo CD silently uses wave -3 from helm.sh/hook-weight instead.")
}

test_an_invalid_hook_weight_is_reported_when_it_would_be_used if {
	r := review(
		deployment({"helm.sh/hook-weight": "-5.5"}),
		facts({"invalid_hook_weight": "-5.5"}),
	)
	v := rule.violations with input as r
	v == {{
		"msg": "Deployment app-foo/svc-foo: helm.sh/hook-weight \"-5.5\" is not a plain integer. Argo CD uses the hook weight as the sync wave when argocd.argoproj.io/sync-wave is missing or invalid, so it silently uses wave 0 instead. Waves are whole numbers: renumber instead (for example 10, 15, 20 rather than 1, 1.5, 2).",
		"path": weight_path,
	}}
}

test_both_invalid_give_two_violations if {
	r := review(
		deployment({"argocd.argoproj.io/sync-wave": "2 ", "helm.sh/hook-weight": "two"}),
		facts({"wave_raw": "2 ", "wave_valid": false, "invalid_hook_weight": "two"}),
	)
	v := rule.violations with input as r
	count(v) == 2
	{x.path | some x in v} == {wave_path, weight_path}
}

test_an_invalid_hook_weight_is_ignored_behind_a_valid_wave if {
	r := review(
		deployment({"argocd.argoproj.io/sync-wave": "5", "helm.sh/hook-weight": "two"}),
		facts({"wave": 5, "wave_raw": "5", "wave_source": "sync-wave", "invalid_hook_weight": "two"}),
	)
	count(rule.violations) == 0 with input as r
}

test_valid_waves_are_fine if {
	every pair in [["0", 0], ["-3", -3], ["+3", 3], ["007", 7]] {
		r := review(
			deployment({"argocd.argoproj.io/sync-wave": pair[0]}),
			facts({"wave": pair[1], "wave_raw": pair[0], "wave_source": "sync-wave"}),
		)
		count(rule.violations) == 0 with input as r
	}
	count(rule.violations) == 0 with input as review(deployment({}), facts({}))
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(bad_wave("1.5"), {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": 1, "sync": {"wave_valid": false, "wave_raw": 15, "invalid_hook_weight": []}}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG107"
	rule.meta.severity == "high"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG107.md"
}
