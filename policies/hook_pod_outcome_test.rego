# Tests for SG114 (policies/hook_pod_outcome.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.hook_pod_outcome_test

import data.syncguard.rules.hook_pod_outcome as rule

# A PostSync smoke test run as a bare Pod.
smoke_pod(spec) := {
	"apiVersion": "v1",
	"kind": "Pod",
	"metadata": {
		"name": "smoke",
		"namespace": "shop",
		"annotations": {"argocd.argoproj.io/hook": "PostSync"},
	},
	"spec": object.union(
		{"containers": [{"name": "smoke", "image": "curlimages/curl:8.10.1", "args": ["-fsS", "http://shop.shop.svc/healthz"]}]},
		spec,
	),
}

# A PreSync Job.
migrate_job(pod_spec, spec) := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {"name": "shop-migrate", "namespace": "shop", "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
	"spec": object.union(
		{
			"backoffLimit": 2,
			"template": {"spec": object.union(
				{
					"restartPolicy": "Never",
					"containers": [{"name": "migrate", "image": "registry.example.com/shop/migrate:2.3.1", "args": ["migrate", "up"]}],
				},
				pod_spec,
			)},
		},
		spec,
	),
}

facts(overrides) := object.union(
	{
		"phases": ["PostSync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["PostSync"],
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

presync := facts({"phases": ["PreSync"], "hook_types": ["PreSync"]})

review(resource, sync) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": sync,
	"argocd": {"version": "3.2.11", "major": 3, "minor": 2, "patch": 11, "release": 302, "number": 30211},
	"context": {"source": "check", "dry_run": false},
}

test_a_pod_hook_without_restart_policy_succeeds_when_ready if {
	v := rule.violations with input as review(smoke_pod({}), facts({}))
	v == {{
		"msg": "Pod shop/smoke is a PostSync hook with no restartPolicy, which Kubernetes sets to Always: Argo CD counts a running, Ready pod with restartPolicy Always as Healthy, so it marks the hook Succeeded as soon as the pod is Ready, before its command has finished, and never looks at its exit code; the pod keeps running afterwards (its container restarted whenever it exits) until the next sync deletes it (BeforeHookCreation). Set restartPolicy: Never (with spec.activeDeadlineSeconds) or run the command as a Job, so that Argo CD waits for it and a failure fails the hook.",
		"path": "/spec",
		"severity": "medium",
	}}
}

test_an_explicit_always_points_at_the_field if {
	pod := smoke_pod({"restartPolicy": "Always"})
	v := rule.violations with input as review(pod, facts({"delete_policies": ["HookSucceeded"], "delete_policy_set": true}))
	count(v) == 1
	some x in v
	x.path == "/spec/restartPolicy"
	contains(x.msg, "is a PostSync hook with restartPolicy: Always:")
	contains(x.msg, "never looks at its exit code; HookSucceeded then deletes the pod when the operation succeeds, possibly in the middle of its work.")
}

test_never_and_on_failure_pods_are_waited_for if {
	count(rule.violations) == 0 with input as review(smoke_pod({"restartPolicy": "Never", "activeDeadlineSeconds": 300}), facts({}))
	count(rule.violations) == 0 with input as review(smoke_pod({"restartPolicy": "OnFailure"}), facts({}))
}

test_sleep_infinity_in_a_never_pod_hook_is_high if {
	pod := smoke_pod({
		"restartPolicy": "Never",
		"activeDeadlineSeconds": 300,
		"containers": [{"name": "smoke", "image": "busybox:1.36", "command": ["sh", "-c", "wget -qO- http://shop/healthz; sleep infinity"]}],
	})
	v := rule.violations with input as review(pod, facts({}))
	v == {{
		"msg": "Pod shop/smoke is a PostSync hook whose container \"smoke\" runs `sleep infinity`, so it never exits: Argo CD counts a running pod with restartPolicy Never or OnFailure as Progressing, so the hook stays Running and the sync waits for it until spec.activeDeadlineSeconds (300 s) fails it, and then the hook fails every time. Make the command exit when its work is done (a long-running service belongs in a Deployment, not a hook).",
		"path": "/spec/containers/0/command",
		"severity": "high",
	}}
}

test_a_job_whose_pod_tails_dev_null_waits_for_ever if {
	job := migrate_job(
		{"containers": [
			{"name": "migrate", "image": "registry.example.com/shop/migrate:2.3.1", "args": ["migrate", "up"]},
			{"name": "debug", "image": "busybox:1.36", "command": ["sh", "-c"], "args": ["tail -f /dev/null"]},
		]},
		{},
	)
	v := rule.violations with input as review(job, presync)
	count(v) == 1
	some x in v
	x.path == "/spec/template/spec/containers/1/args"
	x.severity == "high"
	x.msg == "Job shop/shop-migrate is a PreSync hook whose container \"debug\" runs `tail -f /dev/null`, so it never exits: a Job completes only when its pod exits, and Argo CD counts a Job without a Complete or Failed condition as Progressing, so the hook stays Running and the sync waits for it for ever: spec.activeDeadlineSeconds is not set (see SG101). Make the command exit when its work is done (a long-running service belongs in a Deployment, not a hook)."
}

test_a_server_image_without_command_is_medium if {
	job := migrate_job({"containers": [{"name": "db", "image": "docker.io/library/postgres:16-alpine"}]}, {"activeDeadlineSeconds": 600})
	v := rule.violations with input as review(job, presync)
	count(v) == 1
	some x in v
	x.path == "/spec/template/spec/containers/0/image"
	x.severity == "medium"
	contains(x.msg, "whose container \"db\" runs the server image docker.io/library/postgres:16-alpine with its own entrypoint (no command or args), so it never exits:")
	contains(x.msg, "until spec.activeDeadlineSeconds (600 s) fails it")
	endswith(x.msg, "Give the container a command that does the hook's work and exits (a server belongs in a Deployment, not a hook).")
}

test_a_cloud_sql_proxy_sidecar_keeps_the_job_running if {
	job := migrate_job(
		{"containers": [
			{"name": "migrate", "image": "registry.example.com/shop/migrate:2.3.1", "args": ["migrate", "up"]},
			{"name": "cloud-sql-proxy", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0", "args": ["--port=5432", "shop-prod:europe-west1:shop"]},
		]},
		{"activeDeadlineSeconds": 900},
	)
	v := rule.violations with input as review(job, presync)
	v == {{
		"msg": "Job shop/shop-migrate is a PreSync hook whose container \"cloud-sql-proxy\" runs the proxy gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0, which serves until it is stopped, so it never exits: a Job completes only when its pod exits, and Argo CD counts a Job without a Complete or Failed condition as Progressing, so the hook stays Running and the sync waits for it until spec.activeDeadlineSeconds (900 s) fails it, and then the hook fails every time. Run the proxy as a native sidecar (an initContainer with restartPolicy: Always, Kubernetes 1.29 and later): the kubelet stops it when the other containers have exited.",
		"path": "/spec/template/spec/containers/1/image",
		"severity": "medium",
	}}
}

test_a_native_sidecar_proxy_is_fine if {
	job := migrate_job({"initContainers": [{"name": "cloud-sql-proxy", "image": "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0", "restartPolicy": "Always", "args": ["shop-prod:europe-west1:shop"]}]}, {})
	count(rule.violations) == 0 with input as review(job, presync)
}

test_a_server_image_with_a_command_is_a_client if {
	job := migrate_job({"containers": [{"name": "psql", "image": "postgres:16", "command": ["psql", "-f", "/sql/seed.sql"]}]}, {})
	count(rule.violations) == 0 with input as review(job, presync)
}

test_endless_loops_and_daemons if {
	loop := migrate_job({"containers": [{"name": "w", "image": "busybox:1.36", "command": ["sh", "-c", "while true; do date; sleep 5; done"]}]}, {})
	v := rule.violations with input as review(loop, presync)
	some x in v
	contains(x.msg, "runs `an endless while loop`")
	with_exit := migrate_job({"containers": [{"name": "w", "image": "busybox:1.36", "command": ["sh", "-c", "while true; do check && exit 0; sleep 5; done"]}]}, {})
	count(rule.violations) == 0 with input as review(with_exit, presync)
	nginx := migrate_job({"containers": [{"name": "web", "image": "nginx:1.27", "command": ["nginx", "-g", "daemon off;"]}]}, {})
	w := rule.violations with input as review(nginx, presync)
	some y in w
	contains(y.msg, "runs `daemon off`")
}

test_commands_that_end_are_not_reported if {
	ends := migrate_job({"containers": [{"name": "m", "image": "busybox:1.36", "command": ["sh", "-c", "sleep 30 && migrate up"]}]}, {})
	count(rule.violations) == 0 with input as review(ends, presync)
	infix := migrate_job({"containers": [{"name": "m", "image": "busybox:1.36", "args": ["--sleep-infinity-guard", "--tail-file=/dev/null"]}]}, {})
	count(rule.violations) == 0 with input as review(infix, presync)
}

test_an_always_pod_is_reported_once_whatever_its_command if {
	pod := smoke_pod({"containers": [{"name": "smoke", "image": "busybox:1.36", "command": ["sleep", "infinity"]}]})
	v := rule.violations with input as review(pod, facts({}))
	{x.path | some x in v} == {"/spec"}
}

test_a_post_delete_pod_keeps_the_deletion_waiting if {
	pod := json.patch(
		smoke_pod({"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36", "args": ["sleep", "inf"]}]}),
		[{"op": "replace", "path": "/metadata/annotations", "value": {"argocd.argoproj.io/hook": "PostDelete"}}],
	)
	delete_facts := facts({"phases": [], "hook_types": ["PostDelete"], "ignored": {"reason": "delete-hook-only"}})
	v := rule.violations with input as review(pod, delete_facts)
	count(v) == 1
	some x in v
	contains(x.msg, "is a PostDelete hook whose container \"c\" runs `sleep infinity`")
	contains(x.msg, "the Application deletion waits for it for ever: spec.activeDeadlineSeconds is not set (see SG104).")
	old := object.union(review(pod, delete_facts), {"argocd": {"version": "2.9", "release": 209}})
	count(rule.violations) == 0 with input as old
}

test_a_post_delete_always_pod_lingers if {
	pod := json.patch(smoke_pod({}), [{"op": "replace", "path": "/metadata/annotations", "value": {"argocd.argoproj.io/hook": "PostDelete"}}])
	delete_facts := facts({"phases": [], "hook_types": ["PostDelete"], "ignored": {"reason": "delete-hook-only"}})
	v := rule.violations with input as review(pod, delete_facts)
	count(v) == 1
	some x in v
	contains(x.msg, "never looks at its exit code; the pod keeps running afterwards, its container restarted whenever it exits.")
}

test_pre_delete_from_3_3 if {
	pod := smoke_pod({})
	pre := facts({"phases": [], "hook_types": ["PreDelete"], "ignored": {"reason": "delete-hook-only"}})
	count(rule.violations) == 0 with input as review(pod, pre)
	r := object.union(review(pod, pre), {"argocd": {"version": "3.3.0", "release": 303}})
	count(rule.violations) == 1 with input as r
}

test_non_hooks_and_skipped_hooks_are_not_judged if {
	normal := facts({"phases": ["Sync"], "is_hook": false, "hook_types": []})
	count(rule.violations) == 0 with input as review(smoke_pod({}), normal)
	skipped := facts({"phases": [], "is_hook": false, "skip": true, "hook_types": ["Skip"], "ignored": {"reason": "skip"}})
	count(rule.violations) == 0 with input as review(smoke_pod({}), skipped)
	garbage := facts({"phases": [], "hook_types": [], "invalid_hook_values": ["postsync"], "ignored": {"reason": "garbage-hook"}})
	count(rule.violations) == 0 with input as review(smoke_pod({}), garbage)
}

test_other_kinds_are_not_judged if {
	deploy := {
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {"name": "web", "namespace": "shop"},
		"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}},
	}
	count(rule.violations) == 0 with input as review(deploy, facts({}))
}

test_a_deletion_is_never_judged if {
	r := review(smoke_pod({}), facts({}))
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	pod := {"apiVersion": "v1", "kind": "Pod", "metadata": "x", "spec": {"restartPolicy": "Never", "containers": "sleep infinity"}}
	count(rule.violations) == 0 with input as review(pod, facts({}))
	job := {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": []}}
	count(rule.violations) == 0 with input as review(job, presync)
	bad := {"apiVersion": "batch/v1", "kind": "Job", "spec": {"template": {"spec": {"containers": [7, {"name": "c", "image": 3, "command": "sleep infinity", "args": [1, "sleep", "infinity"]}]}}}}
	v := rule.violations with input as review(bad, {"is_hook": true, "phases": ["PreSync"], "hook_types": "PreSync"})
	count(v) == 1
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG114"
	rule.meta.severity == "high"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG114.md"
}
