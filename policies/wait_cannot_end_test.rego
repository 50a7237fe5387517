# Tests for SG209 (policies/wait_cannot_end.rego). input.waits is written out as model::waits
# computes it; input.plan.tasks as the plan gives them.
package syncguard.rules.wait_cannot_end_test

import data.syncguard.rules.wait_cannot_end as rule

rollout := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "core", "namespace": "shop"}}

pause := {"status": "Suspended", "pointer": "/spec/strategy/canary/steps/1/pause", "reason": "a canary pause step without a duration stops the Rollout until someone promotes it", "when": "every update after the first", "until": "manual"}

gated := {"tasks": [{"phase": "Sync", "wave": 0, "step": 0, "gated": true, "final": false}]}

last := {"tasks": [{"phase": "Sync", "wave": 0, "step": 1, "gated": false, "final": true}]}

base := {
	"resource": rollout,
	"operation": "CREATE",
	"sync": {"is_hook": false},
	"plan": gated,
	"waits": {"no_health": false, "parks": [pause], "needs": [], "bound": null},
}

test_a_pause_step_on_a_waited_rollout_is_reported_medium if {
	vs := rule.violations with input as base
	count(vs) == 1
	some v in vs
	v.severity == "medium"
	v.path == "/spec/strategy/canary/steps/1/pause"
	contains(v.msg, "on every update after the first sync")
	contains(v.msg, "stays Running until someone terminates it (nothing turns this kind Degraded)")
	contains(v.msg, "Promote the Rollout")
}

test_an_object_nothing_waits_for_is_not_reported if {
	count(rule.violations) == 0 with input as object.union(base, {"plan": last})
}

quota_need := {"pointer": "/spec/template/spec/containers/0/resources", "what": "ResourceQuota team limits limits.memory in this namespace and container \"app\" sets no limits.memory", "evidence": "ResourceQuota team", "confidence": "certain"}

deployment := {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"}}

test_a_quota_need_names_the_progress_deadline_that_fails_the_sync if {
	input_ := object.union(base, {"resource": deployment, "waits": {"parks": [], "needs": [quota_need], "bound": {"field": "spec.progressDeadlineSeconds", "seconds": 600, "then": "Degraded"}}})
	vs := rule.violations with input as input_
	count(vs) == 1
	some v in vs
	v.severity == "high"
	contains(v.msg, "after 600s its spec.progressDeadlineSeconds turns it Degraded and the sync fails")
	contains(v.msg, "Set the resource on every container")
}

test_a_quota_need_of_an_unwaited_object_is_still_medium if {
	input_ := object.union(base, {"resource": deployment, "plan": last, "waits": {"parks": [], "needs": [quota_need], "bound": null}})
	vs := rule.violations with input as input_
	count(vs) == 1
	some v in vs
	v.severity == "medium"
	contains(v.msg, "the workload never runs")
}

test_a_hook_says_what_it_holds_up if {
	job := {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "seed", "namespace": "shop"}}
	suspend := {"status": "Suspended", "pointer": "/spec/suspend", "reason": "a suspended Job starts no Pod", "when": "every sync", "until": "manual"}
	vs := rule.violations with input as object.union(base, {"resource": job, "sync": {"is_hook": true}, "waits": {"parks": [suspend], "needs": []}})
	some v in vs
	v.severity == "high"
	contains(v.msg, "a hook: Argo CD waits until it completes")
}

test_a_deletion_is_not_judged if {
	count(rule.violations) == 0 with input as object.union(base, {"operation": "DELETE"})
}

test_a_claim_need_is_left_to_sg206 if {
	claim := {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "shop"}}
	need := {"pointer": "/spec/storageClassName", "what": "StorageClass local binds a claim only once a Pod using it is scheduled", "evidence": "StorageClass local", "confidence": "certain"}
	count(rule.violations) == 0 with input as object.union(base, {"resource": claim, "waits": {"parks": [], "needs": [need]}})
}
