# Tests for SG113 (policies/hook_job_ttl.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.hook_job_ttl_test

import data.syncguard.rules.hook_job_ttl as rule

# The certgen Job of a Helm chart, rendered with helm template (argo-cd#18884).
certgen_job(annotations, spec) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"name": "gateway-certgen",
		"namespace": "envoy-gateway-system",
		"annotations": annotations,
	},
	"spec": object.union(
		{
			"backoffLimit": 1,
			"activeDeadlineSeconds": 600,
			"template": {"spec": {
				"restartPolicy": "Never",
				"containers": [{"name": "certgen", "image": "docker.io/envoyproxy/gateway:v1.0.2", "command": ["envoy-gateway", "certgen"]}],
			}},
		},
		spec,
	),
}

helm_pre_install := {"helm.sh/hook": "pre-install, pre-upgrade"}

facts(overrides) := object.union(
	{
		"phases": ["PreSync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["PreSync"],
		"invalid_hook_values": [],
		"helm_hooks": ["pre-install", "pre-upgrade"],
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

post_delete_facts := facts({
	"phases": [],
	"hook_types": ["PostDelete"],
	"helm_hooks": [],
	"ignored": {"reason": "delete-hook-only"},
	"delete_policies": ["HookSucceeded"],
	"delete_policy_set": true,
})

# input.argocd as syncguard writes it for "MAJOR.MINOR.PATCH" (patch 99 for "MAJOR.MINOR").
argocd(major, minor, patch) := {
	"version": sprintf("%v.%v.%v", [major, minor, patch]),
	"major": major,
	"minor": minor,
	"patch": patch,
	"release": (major * 100) + minor,
	"number": ((major * 10000) + (minor * 100)) + patch,
}

review(resource, sync, version) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"argocd": version,
	"context": {"source": "check", "dry_run": false},
}

ttl_zero_msg := "Job envoy-gateway-system/gateway-certgen is a PreSync hook with spec.ttlSecondsAfterFinished: 0: Argo CD v2.13.5 has no hook finalizer (it came in v3.0.0), so the TTL controller can delete the Job the moment it finishes before Argo CD has read its result; the hook then stays Running and the sync waits for ever (\"waiting for completion of hook batch/Job/gateway-certgen\", argo-cd#18884). Remove ttlSecondsAfterFinished and let the hook delete policy clean up (HookSucceeded, or BeforeHookCreation at the next sync), or upgrade to Argo CD 3.0 or later."

test_ttl_zero_on_a_presync_hook_before_3_0_is_high if {
	r := review(certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 0}), facts({}), argocd(2, 13, 5))
	v := rule.violations with input as r
	v == {{"msg": ttl_zero_msg, "path": "/spec/ttlSecondsAfterFinished", "severity": "high"}}
}

test_a_short_ttl_is_high_and_says_how_long if {
	r := review(certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 30}), facts({}), argocd(2, 11, 0))
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.severity == "high"
	contains(x.msg, "with spec.ttlSecondsAfterFinished: 30: Argo CD v2.11.0 has no hook finalizer")
	contains(x.msg, "can delete the Job 30 s after it finishes, which is often before Argo CD looks again")
}

test_a_long_ttl_is_low if {
	r := review(certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 360}), facts({}), argocd(2, 13, 5))
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.severity == "low"
	contains(x.msg, "can delete the Job 360 s after it finishes whenever the application controller is slower than that (busy, or restarting)")
}

test_the_boundary_of_a_short_ttl if {
	below := review(certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 59}), facts({}), argocd(2, 13, 5))
	{x.severity | some x in rule.violations} == {"high"} with input as below
	at := review(certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 60}), facts({}), argocd(2, 13, 5))
	{x.severity | some x in rule.violations} == {"low"} with input as at
}

# The hook finalizer: v3.0.0 on, and v2.14.3 by accident; v2.14.4 and later 2.14 patches lost it.
test_version_boundaries_of_the_hook_finalizer if {
	job := certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 0})
	count(rule.violations) == 1 with input as review(job, facts({}), argocd(2, 14, 2))
	count(rule.violations) == 0 with input as review(job, facts({}), argocd(2, 14, 3))
	count(rule.violations) == 1 with input as review(job, facts({}), argocd(2, 14, 4))
	count(rule.violations) == 1 with input as review(job, facts({}), argocd(2, 14, 21))
	count(rule.violations) == 0 with input as review(job, facts({}), argocd(3, 0, 0))
	count(rule.violations) == 0 with input as review(job, facts({}), argocd(3, 2, 11))
	count(rule.violations) == 0 with input as review(job, facts({}), argocd(3, 4, 0))
}

# "2.14" alone means the newest 2.14 patch (patch 99): without the finalizer.
test_a_minor_version_alone_is_its_newest_patch if {
	job := certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 0})
	count(rule.violations) == 1 with input as review(job, facts({}), object.union(argocd(2, 14, 99), {"version": "2.14"}))
}

# An older syncguard writes release and version but not number/patch; no argocd at all means
# the newest.
test_the_release_is_enough_and_the_default_is_the_newest if {
	job := certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 0})
	count(rule.violations) == 1 with input as review(job, facts({}), {"version": "2.13", "major": 2, "minor": 13, "release": 213})
	count(rule.violations) == 1 with input as review(job, facts({}), {"version": "2.14", "major": 2, "minor": 14, "release": 214})
	count(rule.violations) == 0 with input as review(job, facts({}), {"version": "3.0", "major": 3, "minor": 0, "release": 300})
	count(rule.violations) == 0 with input as review(job, facts({}), {"version": "v2.14.3", "major": 2, "minor": 14, "release": 214})
	count(rule.violations) == 1 with input as review(job, facts({}), {"version": "2.14.4-rc1", "major": 2, "minor": 14, "release": 214})
	count(rule.violations) == 1 with input as review(job, facts({}), {"version": "2.14.x", "major": 2, "minor": 14, "release": 214})
	r := json.remove(review(job, facts({}), {}), ["argocd"])
	count(rule.violations) == 0 with input as r
}

test_a_post_delete_job_with_a_short_ttl_is_medium_on_every_release if {
	job := certgen_job({"argocd.argoproj.io/hook": "PostDelete", "argocd.argoproj.io/hook-delete-policy": "HookSucceeded"}, {"ttlSecondsAfterFinished": 0})
	v := rule.violations with input as review(job, post_delete_facts, argocd(3, 4, 2))
	v == {{
		"msg": "Job envoy-gateway-system/gateway-certgen is a PostDelete hook with spec.ttlSecondsAfterFinished: 0: Argo CD creates delete hooks without a hook finalizer, so the TTL controller can remove the finished Job before the deleting Application's next pass sees it Complete; that pass finds no gateway-certgen and creates it again, so the clean-up runs again and the Application stays Deleting until a pass catches the Job finished. Remove ttlSecondsAfterFinished (use hook-delete-policy HookSucceeded to remove the Job after the deletion succeeded).",
		"path": "/spec/ttlSecondsAfterFinished",
		"severity": "medium",
	}}
	count(rule.violations) == 1 with input as review(job, post_delete_facts, argocd(2, 10, 0))
	count(rule.violations) == 1 with input as review(job, post_delete_facts, argocd(3, 2, 11))
}

test_delete_hooks_exist_only_from_their_release if {
	post := certgen_job({"argocd.argoproj.io/hook": "PostDelete"}, {"ttlSecondsAfterFinished": 0})
	count(rule.violations) == 0 with input as review(post, post_delete_facts, argocd(2, 9, 9))
	pre := certgen_job({"argocd.argoproj.io/hook": "PreDelete"}, {"ttlSecondsAfterFinished": 10})
	pre_facts := object.union(post_delete_facts, {"hook_types": ["PreDelete"]})
	count(rule.violations) == 0 with input as review(pre, pre_facts, argocd(3, 2, 11))
	v := rule.violations with input as review(pre, pre_facts, argocd(3, 3, 0))
	count(v) == 1
	some x in v
	contains(x.msg, "is a PreDelete hook with spec.ttlSecondsAfterFinished: 10:")
}

test_a_delete_hook_with_a_long_ttl_is_not_reported if {
	job := certgen_job({"argocd.argoproj.io/hook": "PostDelete"}, {"ttlSecondsAfterFinished": 60})
	count(rule.violations) == 0 with input as review(job, post_delete_facts, argocd(3, 4, 0))
}

# Until v3.3.3 the controller runs a delete hook only when the annotation is exactly the value.
test_a_multi_value_delete_annotation_is_no_delete_hook_before_3_3_3 if {
	job := certgen_job({"helm.sh/hook": "post-install,post-delete"}, {"ttlSecondsAfterFinished": 0})
	both := facts({"phases": ["PostSync"], "hook_types": ["PostSync", "PostDelete"], "helm_hooks": ["post-install", "post-delete"]})
	v := rule.violations with input as review(job, both, argocd(3, 2, 11))
	count(v) == 0
	v2 := rule.violations with input as review(job, both, argocd(3, 3, 3))
	count(v2) == 1
	some x in v2
	contains(x.msg, "is a PostDelete hook with")
	v3 := rule.violations with input as review(job, both, argocd(2, 13, 5))
	{z.severity | some z in v3} == {"high"}
	some y in v3
	contains(y.msg, "is a PostSync hook with")
}

test_a_sync_and_delete_hook_gets_both_findings_before_3_0 if {
	job := certgen_job({"argocd.argoproj.io/hook": "PostDelete", "helm.sh/hook": "post-install"}, {"ttlSecondsAfterFinished": 0})
	both := facts({"phases": ["PostSync"], "hook_types": ["PostSync", "PostDelete"]})
	v := rule.violations with input as review(job, both, argocd(2, 12, 0))
	{x.severity | some x in v} == {"high", "medium"}
}

test_jobs_without_ttl_and_non_hooks_are_not_reported if {
	no_ttl := certgen_job(helm_pre_install, {})
	count(rule.violations) == 0 with input as review(no_ttl, facts({}), argocd(2, 13, 5))
	normal := certgen_job({}, {"ttlSecondsAfterFinished": 0})
	normal_facts := facts({"phases": ["Sync"], "is_hook": false, "hook_types": [], "helm_hooks": []})
	count(rule.violations) == 0 with input as review(normal, normal_facts, argocd(2, 13, 5))
}

test_a_skipped_job_is_never_applied if {
	job := certgen_job({"argocd.argoproj.io/hook": "Skip"}, {"ttlSecondsAfterFinished": 0})
	skipped := facts({"phases": [], "is_hook": false, "skip": true, "hook_types": ["Skip"], "ignored": {"reason": "skip"}})
	count(rule.violations) == 0 with input as review(job, skipped, argocd(2, 13, 5))
}

test_a_deletion_is_never_judged if {
	r := review(certgen_job(helm_pre_install, {"ttlSecondsAfterFinished": 0}), facts({}), argocd(2, 13, 5))
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	r := {
		"resource": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"annotations": "x"}, "spec": {"ttlSecondsAfterFinished": "0"}},
		"sync": {"is_hook": true, "phases": "PreSync", "hook_types": "PostDelete"},
		"argocd": "2.13",
	}
	count(rule.violations) == 0 with input as r
	r2 := {
		"resource": {"apiVersion": "batch/v1", "kind": "Job", "metadata": [], "spec": {"ttlSecondsAfterFinished": 0}},
		"sync": {"is_hook": true, "phases": ["PreSync"], "hook_types": []},
		"argocd": {"release": "213", "number": "21305"},
	}
	count(rule.violations) == 0 with input as r2
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG113"
	rule.meta.severity == "high"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG113.md"
}
