# Tests for SG207 (policies/forward_dependency.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md (input.plan, input.refs[].target) plus the
# issue-13 contract fact input.health_check.
package syncguard.rules.forward_dependency_test

import data.syncguard.rules.forward_dependency as rule

# argo-cd#4288, as syncguard can see it: dex's Deployment mounts the gRPC TLS Secret, which the
# chart ships as a Helm post-install hook (Argo CD: a PostSync hook).
dex := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": {"name": "dex", "namespace": "dex"},
	"spec": {
		"replicas": 1,
		"template": {"spec": {
			"serviceAccountName": "dex",
			"containers": [{
				"name": "dex",
				"image": "ghcr.io/dexidp/dex:v2.41.1",
				"envFrom": [{"configMapRef": {"name": "dex-env"}}],
				"volumeMounts": [{"name": "grpc-tls", "mountPath": "/etc/dex/tls/grpc"}],
			}],
			"imagePullSecrets": [{"name": "registry-creds"}],
			"volumes": [{"name": "grpc-tls", "secret": {"secretName": "dex-grpc-server-tls"}}],
		}},
	},
}

facts(kind_is_hook) := {
	"phases": ["Sync"],
	"is_hook": kind_is_hook,
	"hook_types": [],
	"wave": 0,
	"wave_valid": true,
	"sync_options": {"items": [], "unknown": []},
}

task(phase, wave, step, gated) := {"phase": phase, "wave": wave, "step": step, "gated": gated, "final": false}

plan(tasks) := {"tasks": tasks, "steps": 2, "postsync_hooks": 1}

tls_via := "/spec/template/spec/volumes/0/secret/secretName"

env_via := "/spec/template/spec/containers/0/envFrom/0/configMapRef/name"

sa_via := "/spec/template/spec/serviceAccountName"

pull_via := "/spec/template/spec/imagePullSecrets/0/name"

# The gRPC TLS Secret as a PostSync hook.
tls_ref(tasks) := {
	"kind": "Secret", "group": "", "name": "dex-grpc-server-tls", "namespace": "dex",
	"via": tls_via, "optional": false, "role": "volume",
	"target": {
		"resolution": "in_set", "kind": "Secret", "group": "", "name": "dex-grpc-server-tls", "namespace": "dex",
		"phases": ["PostSync"], "wave": 0, "is_hook": true, "hook_types": ["PostSync"],
		"delete_policies": ["BeforeHookCreation"], "tasks": tasks, "async_producer": false, "health_check": null,
	},
}

# A ConfigMap applied by Argo CD as a normal resource at the given wave.
env_ref(wave, tasks) := {
	"kind": "ConfigMap", "group": "", "name": "dex-env", "namespace": "dex",
	"via": env_via, "optional": false, "role": "env_from",
	"target": {
		"resolution": "in_set", "kind": "ConfigMap", "group": "", "name": "dex-env", "namespace": "dex",
		"phases": ["Sync"], "wave": wave, "is_hook": false, "hook_types": [], "tasks": tasks,
		"async_producer": false, "health_check": null,
	},
}

sa_ref(tasks) := {
	"kind": "ServiceAccount", "group": "", "name": "dex", "namespace": "dex",
	"via": sa_via, "optional": false, "role": "service_account",
	"target": {
		"resolution": "in_set", "kind": "ServiceAccount", "group": "", "name": "dex", "namespace": "dex",
		"phases": ["Sync"], "wave": 3, "is_hook": false, "hook_types": [], "tasks": tasks,
		"async_producer": false, "health_check": null,
	},
}

pull_ref(tasks) := {
	"kind": "Secret", "group": "", "name": "registry-creds", "namespace": "dex",
	"via": pull_via, "optional": false, "role": "image_pull_secret",
	"target": {
		"resolution": "in_set", "kind": "Secret", "group": "", "name": "registry-creds", "namespace": "dex",
		"phases": ["Sync"], "wave": 3, "is_hook": false, "hook_types": [], "tasks": tasks,
		"async_producer": false, "health_check": null,
	},
}

# A Secret an ExternalSecret produces at the given step.
produced_ref(tasks) := {
	"kind": "Secret", "group": "", "name": "dex-grpc-server-tls", "namespace": "dex",
	"via": tls_via, "optional": false, "role": "volume",
	"target": {
		"resolution": "produced_by", "kind": "ExternalSecret", "group": "external-secrets.io",
		"name": "dex-grpc-server-tls", "namespace": "dex", "phases": ["Sync"], "wave": 3, "is_hook": false,
		"hook_types": [], "tasks": tasks, "async_producer": true, "health_check": "bundled-lua",
	},
}

review(resource, refs) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": facts(false),
	"plan": plan([task("Sync", 0, 0, true)]),
	"refs": refs,
	"dependents": [],
	"health_check": "builtin",
	"argocd": {"version": "3.4", "major": 3, "minor": 4, "release": 304, "number": 30499},
	"context": {"source": "check", "dry_run": false},
}

later_step := [task("PostSync", 0, 1, true)]

failed := "so the sync fails (\"one or more synchronization tasks completed unsuccessfully\"); every retry ends the same way, because the step that creates it never runs"

dex_msg := concat("", [
	"Deployment dex/dex needs Secret dex/dex-grpc-server-tls before it exists: it is applied at PostSync wave 0, as a PostSync hook, ",
	"a later step than this Deployment (Sync wave 0). On a sync where Secret dex/dex-grpc-server-tls does not exist yet ",
	"(the first sync of this Application, a new cluster or namespace), Argo CD waits for this Deployment to be Healthy before it starts that step, ",
	"and it cannot become Healthy without it: its pods cannot start, so it stays Progressing until its progressDeadlineSeconds (600 s, the default) run out, ",
	"then turns Degraded, ", failed, ". ",
	"Fix: let Argo CD apply Secret dex/dex-grpc-server-tls before this Deployment: make it a normal resource in the Sync phase with a sync-wave below 0 ",
	"(drop its hook annotations), or a PreSync hook (argocd.argoproj.io/hook: PreSync, which Argo CD follows instead of a helm.sh/hook annotation; a hook is re-created on every sync, SG205). ",
	"A Job that only writes it belongs in PreSync too, or in an init container of this Deployment.",
])

test_a_deployment_mounting_a_postsync_hook_secret_is_denied if {
	v := rule.violations with input as review(dex, [tls_ref(later_step)])
	v == {{"msg": dex_msg, "path": tls_via}}
}

test_the_progress_deadline_is_read_from_the_manifest if {
	d := json.patch(dex, [{"op": "add", "path": "/spec/progressDeadlineSeconds", "value": 120}])
	v := rule.violations with input as review(d, [tls_ref(later_step)])
	some x in v
	contains(x.msg, "until its progressDeadlineSeconds (120 s) run out, then turns Degraded,")
}

test_a_config_map_in_a_later_wave_of_the_same_phase if {
	v := rule.violations with input as review(dex, [env_ref(5, [task("Sync", 5, 1, false)])])
	count(v) == 1
	some x in v
	x.path == env_via
	not x.action
	startswith(x.msg, "Deployment dex/dex needs ConfigMap dex/dex-env before it exists: it is applied at Sync wave 5, a later step than this Deployment (Sync wave 0).")
	endswith(x.msg, "Fix: give ConfigMap dex/dex-env a sync-wave below 0, or give this Deployment a sync-wave after 5.")
}

# Moved from SG202 (its former case 3): the whole message for a normal Secret in a later wave.
test_a_secret_in_a_later_wave_of_the_same_phase_is_denied if {
	ref := json.patch(tls_ref([task("Sync", 2, 1, true)]), [
		{"op": "replace", "path": "/target/phases", "value": ["Sync"]},
		{"op": "replace", "path": "/target/wave", "value": 2},
		{"op": "replace", "path": "/target/is_hook", "value": false},
		{"op": "replace", "path": "/target/hook_types", "value": []},
		{"op": "remove", "path": "/target/delete_policies"},
	])
	v := rule.violations with input as review(dex, [ref])
	v == {{
		"msg": concat("", [
			"Deployment dex/dex needs Secret dex/dex-grpc-server-tls before it exists: it is applied at Sync wave 2, ",
			"a later step than this Deployment (Sync wave 0). On a sync where Secret dex/dex-grpc-server-tls does not exist yet ",
			"(the first sync of this Application, a new cluster or namespace), Argo CD waits for this Deployment to be Healthy before it starts that step, ",
			"and it cannot become Healthy without it: its pods cannot start, so it stays Progressing until its progressDeadlineSeconds (600 s, the default) run out, ",
			"then turns Degraded, ", failed, ". ",
			"Fix: give Secret dex/dex-grpc-server-tls a sync-wave below 0, or give this Deployment a sync-wave after 2.",
		]),
		"path": tls_via,
	}}
}

test_a_later_producer_is_named_in_the_fix if {
	v := rule.violations with input as review(dex, [produced_ref([task("Sync", 3, 1, true)])])
	count(v) == 1
	some x in v
	contains(x.msg, "before it exists: it is produced by ExternalSecret dex/dex-grpc-server-tls at Sync wave 3, a later step")
	endswith(x.msg, "Fix: give ExternalSecret dex/dex-grpc-server-tls a sync-wave below 0, or give this Deployment a sync-wave after 3.")
}

test_a_normal_resource_of_a_later_phase_is_moved_into_this_phase if {
	cm := json.patch(env_ref(0, [task("PostSync", 0, 1, true)]), [{"op": "replace", "path": "/target/phases", "value": ["PostSync"]}])
	v := rule.violations with input as review(dex, [cm])
	some x in v
	endswith(x.msg, "Fix: let Argo CD apply ConfigMap dex/dex-env before this Deployment: in the Sync phase with a sync-wave below 0 (it runs at PostSync wave 0 now).")
}

statefulset := {
	"apiVersion": "apps/v1",
	"kind": "StatefulSet",
	"metadata": {"name": "dex-db", "namespace": "dex"},
	"spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}},
}

test_a_statefulset_waits_for_ever if {
	v := rule.violations with input as review(statefulset, [env_ref(5, [task("Sync", 5, 1, false)])])
	some x in v
	contains(x.msg, "it cannot become Healthy without it: its pods cannot start (Kubernetes gives a StatefulSet no progress deadline), so it stays Progressing and Argo CD waits for it for ever (unless argocd-cmd-params-cm sets controller.sync.timeout.seconds), and the step that would create it never starts.")
}

test_before_argo_cd_2_14_there_is_no_sync_timeout_to_mention if {
	old := object.union(review(statefulset, [env_ref(5, [task("Sync", 5, 1, false)])]), {"argocd": {"version": "2.13", "major": 2, "minor": 13, "release": 213}})
	v := rule.violations with input as old
	some x in v
	contains(x.msg, "so it stays Progressing and Argo CD waits for it for ever, and the step that would create it never starts.")
	not contains(x.msg, "controller.sync.timeout.seconds")
	at := object.union(old, {"argocd": {"version": "2.14", "major": 2, "minor": 14, "release": 214}})
	w := rule.violations with input as at
	some y in w
	contains(y.msg, "controller.sync.timeout.seconds")
}

pod(restart) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {"name": "dex-probe", "namespace": "dex"},
	"spec": object.union(
		{"serviceAccountName": "dex", "containers": [{"name": "p", "image": "ghcr.io/dexidp/dex:v2.41.1", "envFrom": [{"configMapRef": {"name": "dex-env"}}]}]},
		restart,
	),
}

pod_env_via := "/spec/containers/0/envFrom/0/configMapRef/name"

test_a_pod_missing_its_env_config_map_is_degraded_at_once if {
	ref := object.union(env_ref(5, [task("Sync", 5, 1, false)]), {"via": pod_env_via})
	v := rule.violations with input as review(pod({}), [ref])
	some x in v
	x.path == pod_env_via
	contains(x.msg, sprintf("it cannot become Healthy without it: its container waits in CreateContainerConfigError, which Argo CD reports as Degraded at once, %s.", [failed]))
}

test_a_pod_that_never_restarts_just_stays_pending if {
	ref := object.union(env_ref(5, [task("Sync", 5, 1, false)]), {"via": pod_env_via})
	v := rule.violations with input as review(pod({"restartPolicy": "Never"}), [ref])
	some x in v
	contains(x.msg, "it cannot become Healthy without it: its pod cannot start, so it stays Progressing and Argo CD waits for it for ever")
}

test_a_pod_whose_service_account_comes_later_is_refused_by_the_api_server if {
	ref := object.union(sa_ref([task("Sync", 3, 1, false)]), {"via": "/spec/serviceAccountName"})
	v := rule.violations with input as review(pod({}), [ref])
	some x in v
	contains(x.msg, "the API server refuses a Pod whose ServiceAccount does not exist, so applying it fails and the sync ends with \"one or more objects failed to apply\"; every retry ends the same way.")
}

test_a_replicaset_without_its_service_account_reports_replica_failure if {
	rs := object.union(dex, {"kind": "ReplicaSet"})
	v := rule.violations with input as review(rs, [sa_ref([task("Sync", 3, 1, false)])])
	some x in v
	contains(x.msg, "the ReplicaSet cannot create its pods and reports ReplicaFailure, which Argo CD takes as Degraded, so the sync fails")
}

job(deadline) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {"name": "dex-seed", "namespace": "dex"},
	"spec": object.union({"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "s", "image": "ghcr.io/dexidp/dex:v2.41.1"}]}}}, deadline),
}

test_a_normal_job_fails_only_at_its_active_deadline if {
	v := rule.violations with input as review(job({"activeDeadlineSeconds": 300}), [env_ref(5, [task("Sync", 5, 1, false)])])
	some x in v
	contains(x.msg, "its pod cannot start, so the Job stays active (Progressing) until activeDeadlineSeconds (300 s) fails it; Argo CD then sees it Degraded, so the sync fails")
	w := rule.violations with input as review(job({}), [env_ref(5, [task("Sync", 5, 1, false)])])
	some y in w
	contains(y.msg, "its pod cannot start (a failure to start is not a pod failure, so backoffLimit never counts), so it stays Progressing and Argo CD waits for it for ever")
}

test_a_rollout_degrades_at_its_progress_deadline if {
	rollout := object.union(dex, {"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout"})
	v := rule.violations with input as object.union(review(rollout, [tls_ref(later_step)]), {"health_check": "bundled-lua"})
	some x in v
	contains(x.msg, "until its progressDeadlineSeconds (600 s, the default) run out, then Argo CD's Rollout health check reports it Degraded, so the sync fails")
}

test_a_later_image_pull_secret_is_a_medium_warning if {
	v := rule.violations with input as review(dex, [pull_ref([task("Sync", 3, 1, false)])])
	count(v) == 1
	some x in v
	x.path == pull_via
	x.severity == "medium"
	x.action == "warn"
	contains(x.msg, "it cannot become Healthy without it: if the registry needs those credentials, its image cannot be pulled, and its pods cannot start, so it stays Progressing until")
}

test_a_custom_health_check_makes_it_a_warning if {
	v := rule.violations with input as object.union(review(dex, [tls_ref(later_step)]), {"health_check": "custom"})
	some x in v
	x.action == "warn"
	not x.severity
}

test_an_existing_object_is_a_warning if {
	# admission UPDATE and audit: the dependency normally exists from an earlier sync
	u := object.union(review(dex, [tls_ref(later_step)]), {"operation": "UPDATE", "context": {"source": "admission", "dry_run": false}})
	v := rule.violations with input as u
	some x in v
	x.action == "warn"
	a := object.union(review(dex, [tls_ref(later_step)]), {"operation": "AUDIT", "context": {"source": "audit", "dry_run": false}})
	w := rule.violations with input as a
	some y in w
	y.action == "warn"
	c := object.union(review(dex, [tls_ref(later_step)]), {"operation": "CREATE", "context": {"source": "admission", "dry_run": false}})
	z := rule.violations with input as c
	some q in z
	not q.action
}

test_each_later_reference_is_its_own_finding if {
	v := rule.violations with input as review(dex, [tls_ref(later_step), env_ref(5, [task("Sync", 5, 2, false)])])
	{x.path | some x in v} == {tls_via, env_via}
}

# ---- not reported ----

test_a_dependency_in_an_earlier_step_is_fine if {
	r := object.union(review(dex, [env_ref(-1, [task("Sync", -1, 0, true)])]), {"plan": plan([task("Sync", 0, 1, false)])})
	count(rule.violations) == 0 with input as r
}

test_a_producer_in_the_same_step_is_left_to_sg202 if {
	count(rule.violations) == 0 with input as review(dex, [produced_ref([task("Sync", 0, 0, true)])])
}

test_an_object_argo_cd_applies_in_the_same_step_is_fine if {
	count(rule.violations) == 0 with input as review(dex, [env_ref(0, [task("Sync", 0, 0, true)])])
}

test_missing_live_builtin_and_unknown_targets_are_not_this_rules_business if {
	refs := [
		object.union(tls_ref([]), {"target": {"resolution": "missing"}}),
		object.union(tls_ref([]), {"target": {"resolution": "live"}}),
		object.union(env_ref(0, []), {"target": {"resolution": "unknown"}}),
		object.union(sa_ref([]), {"name": "default", "target": {"resolution": "builtin"}}),
	]
	count(rule.violations) == 0 with input as review(dex, refs)
}

test_optional_references_are_not_reported if {
	count(rule.violations) == 0 with input as review(dex, [object.union(tls_ref(later_step), {"optional": true})])
}

test_a_hook_is_left_to_sg201 if {
	r := object.union(review(dex, [tls_ref(later_step)]), {"sync": facts(true)})
	count(rule.violations) == 0 with input as r
}

test_the_final_ungated_step_waits_for_nothing if {
	r := object.union(review(dex, [tls_ref(later_step)]), {"plan": plan([task("Sync", 0, 0, false)])})
	count(rule.violations) == 0 with input as r
}

test_a_cronjob_is_healthy_without_pods if {
	cron := {
		"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "dex-gc", "namespace": "dex"},
		"spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "gc", "image": "ghcr.io/dexidp/dex:v2.41.1"}]}}}}},
	}
	count(rule.violations) == 0 with input as review(cron, [tls_ref(later_step)])
}

test_a_workload_scaled_to_zero_is_healthy_without_pods if {
	d := json.patch(dex, [{"op": "replace", "path": "/spec/replicas", "value": 0}])
	count(rule.violations) == 0 with input as review(d, [tls_ref(later_step)])
}

test_without_a_health_check_nothing_waits if {
	r := object.union(review(dex, [tls_ref(later_step)]), {"health_check": null})
	count(rule.violations) == 0 with input as r

	# the fact is absent in older syncguard builds: judged as built in
	v := rule.violations with input as object.remove(review(dex, [tls_ref(later_step)]), ["health_check"])
	count(v) == 1
}

test_a_kind_of_another_api_group_is_not_judged if {
	other := object.union(dex, {"apiVersion": "example.com/v1"})
	count(rule.violations) == 0 with input as review(other, [tls_ref(later_step)])
}

test_a_dependency_created_only_by_syncfail_hooks_is_not_a_later_step if {
	ref := json.patch(tls_ref([task("SyncFail", 0, 2, false)]), [{"op": "replace", "path": "/target/phases", "value": ["SyncFail"]}])
	count(rule.violations) == 0 with input as review(dex, [ref])
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(review(dex, [tls_ref(later_step)]), {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": [], "sync": "x", "plan": "x", "refs": "x"}
	good := review(dex, [tls_ref(later_step)])
	count(rule.violations) == 0 with input as object.union(good, {"refs": [1, "x", {"role": "volume"}, {"role": "volume", "target": "x"}]})
	count(rule.violations) == 0 with input as object.union(good, {"plan": {"tasks": "x"}})
	count(rule.violations) == 0 with input as object.union(good, {"plan": {"tasks": [{"step": "0", "gated": true}]}})
	bad_target := json.patch(tls_ref(later_step), [{"op": "replace", "path": "/target/tasks", "value": "x"}])
	count(rule.violations) == 0 with input as object.union(good, {"refs": [bad_target]})
	v := rule.violations with input as object.union(good, {"argocd": "x", "context": "x", "resource": object.union(dex, {"spec": object.union(dex.spec, {"progressDeadlineSeconds": "x"})})})
	count(v) == 1
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG207"
	rule.meta.severity == "high"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG207.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
