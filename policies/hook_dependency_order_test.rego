# Tests for SG201 (policies/hook_dependency_order.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md (input.plan, input.refs[].target).
package syncguard.rules.hook_dependency_order_test

import data.syncguard.rules.hook_dependency_order as rule

# The seed-000 migration Job: PreSync hook at wave 5, reading the database credentials that an
# ExternalSecret at Sync wave 2 materialises.
migration_job := {
	"apiVersion": "batch/v1",
	"kind": "Job",
	"metadata": {
		"name": "svc-foo-migration",
		"namespace": "app-foo",
		"annotations": {"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "5"},
	},
	"spec": {
		"activeDeadlineSeconds": 900,
		"backoffLimit": 2,
		"template": {"spec": {
			"restartPolicy": "Never",
			"serviceAccountName": "svc-foo-migrator",
			"containers": [{
				"name": "migrate",
				"image": "registry.example.com/svc-foo/migrate:1.4.2",
				"envFrom": [{"secretRef": {"name": "db-credentials"}}],
				"volumeMounts": [{"name": "flyway", "mountPath": "/flyway/conf"}],
			}],
			"volumes": [{"name": "flyway", "configMap": {"name": "flyway-conf"}}],
		}},
	},
}

hook_facts(phase, wave) := {
	"phases": [phase],
	"is_hook": true,
	"skip": false,
	"hook_types": [phase],
	"wave": wave,
	"wave_valid": true,
	"wave_source": "sync-wave",
	"delete_policies": ["BeforeHookCreation"],
	"sync_options": {"items": [], "unknown": []},
}

plain_facts := {
	"phases": ["Sync"],
	"is_hook": false,
	"skip": false,
	"hook_types": [],
	"wave": 6,
	"wave_valid": true,
	"wave_source": "sync-wave",
	"delete_policies": ["BeforeHookCreation"],
	"sync_options": {"items": [], "unknown": []},
}

task(phase, wave, step) := {"phase": phase, "wave": wave, "step": step, "gated": true, "final": false}

plan(tasks) := {"tasks": tasks, "steps": 3, "postsync_hooks": 0}

secret_via := "/spec/template/spec/containers/0/envFrom/0/secretRef/name"

config_via := "/spec/template/spec/volumes/0/configMap/name"

sa_via := "/spec/template/spec/serviceAccountName"

# The ExternalSecret producing db-credentials, with its own facts and tasks.
produced_secret(tasks) := {
	"kind": "Secret",
	"group": "",
	"name": "db-credentials",
	"namespace": "app-foo",
	"via": secret_via,
	"optional": false,
	"role": "env_from",
	"target": {
		"resolution": "produced_by",
		"kind": "ExternalSecret",
		"group": "external-secrets.io",
		"name": "db-credentials",
		"namespace": "app-foo",
		"phases": ["Sync"],
		"wave": 2,
		"is_hook": false,
		"hook_types": [],
		"delete_policies": ["BeforeHookCreation"],
		"tasks": tasks,
		"async_producer": true,
		"health_check": "bundled-lua",
	},
}

config_ref(target) := {
	"kind": "ConfigMap",
	"group": "",
	"name": "flyway-conf",
	"namespace": "app-foo",
	"via": config_via,
	"optional": false,
	"role": "volume",
	"target": target,
}

in_set_config(phases, wave, tasks) := {
	"resolution": "in_set",
	"kind": "ConfigMap",
	"group": "",
	"name": "flyway-conf",
	"namespace": "app-foo",
	"phases": phases,
	"wave": wave,
	"is_hook": false,
	"tasks": tasks,
	"async_producer": false,
	"health_check": null,
}

namespace_ref(resolution) := {
	"kind": "Namespace",
	"group": "",
	"name": "app-foo",
	"namespace": null,
	"via": "/metadata/namespace",
	"optional": false,
	"role": "namespace",
	"target": {"resolution": resolution},
}

review(resource, facts, the_plan, refs) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": facts,
	"plan": the_plan,
	"refs": refs,
	"dependents": [],
	"context": {"source": "check", "dry_run": false},
}

seed_input := review(
	migration_job,
	hook_facts("PreSync", 5),
	plan([task("PreSync", 5, 0)]),
	[namespace_ref("missing"), produced_secret([task("Sync", 2, 1)])],
)

seed_msg := concat("", [
	"Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs Secret app-foo/db-credentials before it exists: ",
	"it is produced by ExternalSecret app-foo/db-credentials at Sync wave 2, a step Argo CD starts only after this hook has finished, ",
	"so the hook's pod cannot start and the sync waits for it forever (argo-cd#13429). ",
	"Fix: make this hook a Sync hook with a wave after 2 (argocd.argoproj.io/hook: Sync, argocd.argoproj.io/sync-wave: \"3\") ",
	"or an init container of the workload that needs it; or create ExternalSecret app-foo/db-credentials earlier, as a PreSync hook with a wave below 5. ",
	"Note: the Secret of an asynchronous producer appears only after its controller has reconciled it; ",
	"Argo CD waits for that only when it has a health check for the producer, ",
	"and a hook that normal resources also use is deleted and re-created on every sync (SG205).",
])

test_seed_incident_is_denied_naming_the_external_secret_and_its_wave if {
	v := rule.violations with input as seed_input
	v == {{"msg": seed_msg, "path": secret_via, "severity": "critical"}}
	some x in v
	contains(x.msg, "ExternalSecret app-foo/db-credentials")
	contains(x.msg, "Sync wave 2")
	contains(x.msg, "PreSync wave 5")
}

test_fixed_seed_external_secret_as_earlier_presync_hook_is_fine if {
	secret := json.patch(produced_secret([task("PreSync", 4, 0)]), [
		{"op": "replace", "path": "/target/phases", "value": ["PreSync"]},
		{"op": "replace", "path": "/target/is_hook", "value": true},
	])
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 1)]), [secret])
	count(rule.violations) == 0 with input as r
}

test_fixed_seed_migration_as_sync_hook_after_wave_2_is_fine if {
	r := review(migration_job, hook_facts("Sync", 3), plan([task("Sync", 3, 2)]), [produced_secret([task("Sync", 2, 1)])])
	count(rule.violations) == 0 with input as r
}

test_external_secret_in_the_hooks_own_step_is_a_warning if {
	# Not provable: the pod starts before the Secret exists, but the kubelet retries it, so the hook
	# hangs only if the controller never writes the Secret.
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [produced_secret([task("PreSync", 5, 0)])])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == secret_via
	x.severity == "high"
	x.action == "warn"
	startswith(x.msg, "Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs Secret app-foo/db-credentials before it exists: it is produced by ExternalSecret app-foo/db-credentials at PreSync wave 5, the hook's own step,")
	contains(x.msg, "Fix: give ExternalSecret app-foo/db-credentials a lower sync-wave than this hook (below 5), so that Argo CD applies it a step earlier.")
}

test_a_later_step_is_a_deny_without_a_per_finding_action if {
	v := rule.violations with input as seed_input
	some x in v
	x.severity == "critical"
	not x.action
}

test_config_map_in_a_later_wave_of_the_same_phase if {
	cm := config_ref(in_set_config(["Sync"], 0, [task("Sync", 0, 1)]))
	r := review(migration_job, hook_facts("Sync", -1), plan([task("Sync", -1, 0)]), [cm])
	v := rule.violations with input as r
	v == {{
		"msg": concat("", [
			"Job app-foo/svc-foo-migration, a hook at Sync wave -1, needs ConfigMap app-foo/flyway-conf before it exists: ",
			"it is applied at Sync wave 0, a step Argo CD starts only after this hook has finished, ",
			"so the hook's pod cannot start and the sync waits for it forever (argo-cd#13429). ",
			"Fix: give ConfigMap app-foo/flyway-conf a lower sync-wave than this hook (below -1), or give this hook a sync-wave after 0.",
		]),
		"path": config_via,
		"severity": "critical",
	}}
}

test_a_config_map_applied_in_the_hooks_own_step_is_fine if {
	# Argo CD applies a step's objects in kind order (ConfigMap before Job) and the kubelet retries.
	cm := config_ref(object.union(in_set_config(["PreSync"], 5, [task("PreSync", 5, 0)]), {"is_hook": true}))
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [cm])
	count(rule.violations) == 0 with input as r
}

test_service_account_from_the_sync_phase_is_reported if {
	sa := {
		"kind": "ServiceAccount", "group": "", "name": "svc-foo-migrator", "namespace": "app-foo",
		"via": sa_via, "optional": false, "role": "service_account",
		"target": {
			"resolution": "in_set", "kind": "ServiceAccount", "group": "", "name": "svc-foo-migrator",
			"namespace": "app-foo", "phases": ["Sync"], "wave": 0, "is_hook": false,
			"tasks": [task("Sync", 0, 1)], "async_producer": false, "health_check": null,
		},
	}
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [sa])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == sa_via
	startswith(x.msg, "Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs ServiceAccount app-foo/svc-foo-migrator before it exists: it is applied at Sync wave 0,")
	contains(x.msg, "or create ServiceAccount app-foo/svc-foo-migrator earlier, as a PreSync hook with a wave below 5.")
	not contains(x.msg, "asynchronous producer")
}

# One object, one cause: two references needed too early make one finding, at the first path,
# naming the other (issue 37: "the same deny repeated for one object with one cause").
test_late_references_of_one_grade_are_one_finding_naming_the_others if {
	cm := config_ref(in_set_config(["Sync"], 0, [task("Sync", 0, 1)]))
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [produced_secret([task("Sync", 2, 2)]), cm])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == secret_via
	x.severity == "critical"
	endswith(x.msg, " The same holds for ConfigMap app-foo/flyway-conf, which it needs too.")
}

test_optional_references_are_not_violations if {
	secret := object.union(produced_secret([task("Sync", 2, 1)]), {"optional": true})
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [secret])
	count(rule.violations) == 0 with input as r
}

test_builtin_and_unknown_targets_are_not_judged if {
	refs := [
		{"kind": "ServiceAccount", "name": "default", "via": sa_via, "optional": false, "role": "service_account", "target": {"resolution": "builtin"}},
		object.union(config_ref({}), {"target": {"resolution": "unknown"}}),
	]
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), refs)
	count(rule.violations) == 0 with input as r
}

missing_secret_input(context) := object.union(
	review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [object.union(produced_secret([]), {"target": {"resolution": "missing"}})]),
	{"context": context},
)

test_a_secret_missing_from_the_input_is_a_warning_naming_the_assumption if {
	v := rule.violations with input as missing_secret_input({"source": "check", "dry_run": false})
	v == {{
		"msg": concat("", [
			"Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs Secret app-foo/db-credentials, which is not in the input: ",
			"syncguard assumes it is created outside this Application (by hand, by another Application or an operator) before this sync; ",
			"if it is not, the hook's pod cannot start and the sync waits for it forever. ",
			"Make sure whatever creates it runs first, or add it to this Application in a step before the hook. ",
			"If the input holds everything this Application needs, check with --complete to have this reported as an error.",
		]),
		"path": secret_via,
		"severity": "high",
		"action": "warn",
	}}
}

written_secret_input(writer_tasks, context) := object.union(
	review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 1)]), [object.union(produced_secret([]), {"target": {
		"resolution": "missing",
		"written_by": [{"kind": "Job", "name": "cert-gen", "is_hook": true, "tasks": writer_tasks}],
	}})]),
	{"context": context},
)

# A certificate generator hook in an earlier step whose ServiceAccount may create the Secret
# (cockroachdb's self-signer and init Jobs): the assumption is stated, at info.
test_a_missing_secret_an_earlier_hook_may_write_is_an_assumption_at_info if {
	v := rule.violations with input as written_secret_input([task("PreSync", 1, 0)], {"source": "check", "dry_run": false})
	v == {{
		"msg": concat("", [
			"Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs Secret app-foo/db-credentials, which is not in the input: ",
			"assuming Job cert-gen writes it at run time (it runs in an earlier step, and its ServiceAccount may create that object), ",
			"the hook starts once it has; if it does not, the hook's pod cannot start and the sync waits for it forever.",
		]),
		"path": secret_via,
		"severity": "info",
	}}
}

# Several writers: one finding naming them all, in name order.
test_several_earlier_writers_make_one_finding if {
	r := written_secret_input([task("PreSync", 1, 0)], {"source": "check", "dry_run": false})
	two := json.patch(r, [{"op": "add", "path": "/refs/0/target/written_by/-", "value": {"kind": "CronJob", "name": "rotate", "is_hook": false, "tasks": [task("PreSync", 0, 0)]}}])
	v := rule.violations with input as two
	count(v) == 1
	some x in v
	contains(x.msg, "assuming CronJob rotate or Job cert-gen writes it at run time")
}

# A writer in the same or a later step cannot have written it before the hook starts; a complete
# input proves it missing whatever may write it.
test_a_writer_that_runs_later_or_a_complete_input_keeps_the_finding if {
	later := rule.violations with input as written_secret_input([task("Sync", 0, 2)], {"source": "check", "dry_run": false})
	{[x.severity, x.action] | some x in later} == {["high", "warn"]}
	same := rule.violations with input as written_secret_input([task("PreSync", 5, 1)], {"source": "check", "dry_run": false})
	{[x.severity, x.action] | some x in same} == {["high", "warn"]}
	complete := rule.violations with input as written_secret_input([task("PreSync", 1, 0)], {"source": "check", "dry_run": false, "complete": true})
	{x.severity | some x in complete} == {"critical"}
}

needed_earlier_input(needer) := review(
	migration_job, hook_facts("PostSync", 0), plan([task("PostSync", 0, 2)]), [object.union(produced_secret([]), {"target": {
		"resolution": "missing",
		"needed_first_by": [needer],
	}})],
)

# The same missing Secret needed by a PreSync hook: that hook's finding carries the cause; a
# later hook's would repeat it. A normal resource needing it earlier reports nothing itself, and
# a hook of the same or a later step is no earlier: the finding stays.
test_a_missing_object_an_earlier_hook_needs_is_reported_once if {
	earlier_hook := {"kind": "Job", "name": "pre-migrate", "is_hook": true, "tasks": [task("PreSync", 0, 0)]}
	count(rule.violations) == 0 with input as needed_earlier_input(earlier_hook)
	deployment := {"kind": "Deployment", "name": "web", "is_hook": false, "tasks": [task("Sync", 0, 1)]}
	count(rule.violations) == 1 with input as needed_earlier_input(deployment)
	same_step := {"kind": "Job", "name": "post", "is_hook": true, "tasks": [task("PostSync", 0, 2)]}
	count(rule.violations) == 1 with input as needed_earlier_input(same_step)
}

test_an_input_not_declared_complete_is_still_an_assumption if {
	v := rule.violations with input as missing_secret_input({"source": "check", "dry_run": false, "complete": false})
	some x in v
	x.action == "warn"
}

test_a_secret_missing_from_a_complete_input_is_denied if {
	v := rule.violations with input as missing_secret_input({"source": "check", "dry_run": false, "complete": true})
	v == {{
		"msg": concat("", [
			"Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs Secret app-foo/db-credentials, ",
			"which is not in this Application, whose manifests are declared complete (--complete): ",
			"nothing creates it before the hook, so the hook's pod cannot start and the sync waits for it forever. ",
			"Fix: add Secret app-foo/db-credentials to this Application in a step before the hook, or create it before the sync; ",
			"if it is provisioned outside Argo CD on purpose, exempt this object.",
		]),
		"path": secret_via,
		"severity": "critical",
	}}
}

test_a_secret_the_audit_finds_neither_in_the_app_nor_in_the_cluster_is_denied if {
	v := rule.violations with input as missing_secret_input({"source": "audit", "dry_run": false})
	count(v) == 1
	some x in v
	x.severity == "critical"
	not x.action
	contains(x.msg, "needs Secret app-foo/db-credentials, which is neither in this Application nor in the cluster: nothing creates it before the hook,")
}

test_a_malformed_or_absent_context_counts_as_an_assumption if {
	v := rule.violations with input as missing_secret_input("x")
	count(v) == 1
	some x in v
	x.action == "warn"
	r := object.remove(missing_secret_input({}), ["context"])
	w := rule.violations with input as r
	count(w) == 1
	some y in w
	y.action == "warn"
}

test_a_secret_that_exists_in_the_cluster_is_fine if {
	# audit: not in the set but live, created by hand or by another Application
	r := object.union(missing_secret_input({"source": "audit", "dry_run": false}), {"refs": [object.union(produced_secret([]), {"target": {"resolution": "live"}})]})
	count(rule.violations) == 0 with input as r
}

test_admission_without_the_target_in_the_app_context_reports_nothing if {
	r := object.union(missing_secret_input({"source": "admission", "dry_run": false}), {"refs": [object.union(produced_secret([]), {"target": {"resolution": "unknown"}})]})
	count(rule.violations) == 0 with input as r
}

test_a_missing_namespace_is_not_reported if {
	# Namespaces are usually pre-created or created by CreateNamespace=true.
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [namespace_ref("missing")])
	count(rule.violations) == 0 with input as r
}

test_without_a_plan_the_hook_is_located_from_its_sync_facts if {
	secret := object.union(produced_secret([]), {"target": {"resolution": "missing"}})
	r := object.remove(review(migration_job, hook_facts("PreSync", 5), {}, [secret]), ["plan"])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	startswith(x.msg, "Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs Secret app-foo/db-credentials, which is not in the input:")
}

test_a_skipped_dependency_is_never_created if {
	target := object.union(in_set_config([], 0, []), {"ignored": {"reason": "skip"}})
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [config_ref(target)])
	v := rule.violations with input as r
	v == {{
		"msg": "Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs ConfigMap app-foo/flyway-conf, which this sync never creates: ConfigMap app-foo/flyway-conf is marked argocd.argoproj.io/hook: Skip, so the hook cannot run and the sync waits for it forever. Fix: let Argo CD apply ConfigMap app-foo/flyway-conf in a step before this hook (a lower wave of the same phase, or an earlier phase), or stop referencing it.",
		"path": config_via,
		"severity": "critical",
	}}
}

test_a_producer_that_is_only_a_delete_hook_never_produces if {
	secret := json.patch(produced_secret([]), [{"op": "add", "path": "/target/ignored", "value": {"reason": "delete-hook-only"}}])
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [secret])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	contains(x.msg, "which this sync never creates: ExternalSecret app-foo/db-credentials is only a PreDelete/PostDelete hook, run when the Application is deleted,")
}

test_a_normal_resource_is_not_judged_by_this_rule if {
	deployment := {
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": {"name": "svc-foo", "namespace": "app-foo"},
		"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "registry.example.com/svc-foo:1.4.2"}]}}},
	}
	r := review(deployment, plain_facts, plan([task("Sync", 0, 0)]), [produced_secret([task("Sync", 2, 1)])])
	count(rule.violations) == 0 with input as r
}

test_a_hook_that_only_runs_at_deletion_is_not_judged if {
	facts := object.union(hook_facts("PostDelete", 0), {"phases": [], "ignored": {"reason": "delete-hook-only"}})
	r := review(migration_job, facts, plan([]), [produced_secret([task("Sync", 2, 1)])])
	count(rule.violations) == 0 with input as r
}

test_references_that_are_not_needed_to_start_a_pod_are_ignored if {
	refs := [
		{"kind": "CustomResourceDefinition", "name": "Foo.example.com", "via": "/apiVersion", "optional": false, "role": "definition", "target": {"resolution": "missing"}},
		{"kind": "Deployment", "group": "apps", "name": "web", "via": "/spec/scaleTargetRef/name", "optional": false, "role": "scale_target", "target": {"resolution": "missing"}},
	]
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), refs)
	count(rule.violations) == 0 with input as r
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(seed_input, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": [], "sync": "x", "plan": "x", "refs": "x"}
	count(rule.violations) == 0 with input as object.union(seed_input, {"refs": [1, "x", {"role": "env"}, {"role": "env", "target": "x"}]})
	count(rule.violations) == 0 with input as object.union(seed_input, {"plan": {"tasks": "x"}})
	count(rule.violations) == 0 with input as object.union(seed_input, {"plan": {"tasks": [{"step": "0", "phase": "PreSync"}]}})
	bad_target := json.patch(produced_secret([task("Sync", 2, 1)]), [{"op": "replace", "path": "/target/tasks", "value": "x"}])
	count(rule.violations) == 0 with input as object.union(seed_input, {"refs": [bad_target]})
}

test_a_non_numeric_wave_does_not_break_the_message if {
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [produced_secret([{"phase": "Sync", "wave": "2", "step": 1}])])
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	contains(x.msg, "at Sync wave 0, a step")
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG201"
	rule.meta.severity == "critical"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG201.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}

# 4. Another Application of the input renders the Secret.
other_app_secret_input(order) := review(
	migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]),
	[object.union(produced_secret([]), {"target": {"resolution": "other_app", "app": "platform-secrets", "order": order}})],
)

test_a_secret_from_an_application_synced_first_is_fine if {
	count(rule.violations) == 0 with input as other_app_secret_input("before")
}

test_a_secret_from_a_later_waited_wave_is_a_deadlock_named_high if {
	v := rule.violations with input as other_app_secret_input("after")
	count(v) == 1
	some x in v
	x.severity == "high"
	x.action == "warn"
	x.path == secret_via
	startswith(x.msg, "Job app-foo/svc-foo-migration, a hook at PreSync wave 5, needs Secret app-foo/db-credentials, which is not in this Application: Application platform-secrets renders it")
	contains(x.msg, "this sync never ends and the later wave never starts")
}

test_a_secret_from_an_application_syncing_at_about_the_same_time_is_info if {
	every order in ["after_unwaited", "same_wave", "before_unwaited"] {
		v := rule.violations with input as other_app_secret_input(order)
		{[x.severity, x.action] | some x in v} == {["info", "warn"]}
	}
}

test_a_secret_from_an_application_in_no_known_order_is_info if {
	v := rule.violations with input as other_app_secret_input("unknown")
	{x.severity | some x in v} == {"info"}
	some x in v
	contains(x.msg, "nothing in the input orders the two Applications")
}

test_a_namespace_from_another_application_is_not_a_hook_finding if {
	r := review(migration_job, hook_facts("PreSync", 5), plan([task("PreSync", 5, 0)]), [namespace_ref("other_app")])
	count(rule.violations) == 0 with input as r
}
