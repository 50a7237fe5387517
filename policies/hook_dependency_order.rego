# SG201: a hook that needs an object this sync creates only after the hook has run, or never.
#
# Argo CD runs a sync as steps (phase, wave), one after the other, and a step starts only when
# every hook of the previous one has finished. Waves order tasks within a phase only: every
# PreSync step runs before any Sync step, whatever the waves (spec §3). A PreSync migration Job
# that mounts or reads a Secret the Sync phase creates (seed 000: a Secret produced by an
# ExternalSecret at Sync wave 2, used by a PreSync Job at wave 5) can never start: its pod waits
# for the Secret, the Job never completes, Argo CD waits for the Job, and the Sync phase that
# would create the Secret never begins (spec §10-8, argo-cd#13429, #9891).
#
# Facts used: input.plan.tasks (the hook's own steps) and, for every non-optional reference a pod
# or the object needs before it can be created (env, envFrom, volumes, imagePullSecrets, the
# ServiceAccount, the Namespace), input.refs[].target: where the object comes from and the steps
# its tasks run in. A Secret produced by a controller (resolution produced_by) appears only after
# its producer's step was applied, and later still, so the producer's step counts as "after" the
# hook even when it is the hook's own step.
#
# Findings, each with its own severity (and, where the finding rests on an assumption, its own
# per-violation "action"):
#  - created in a later step, or never applied by this sync (Skip, an invalid hook value, a
#    delete-only hook): critical deny — the sync itself provably creates it too late or never;
#  - produced asynchronously in the hook's own step: high warn — the hook's pod starts before the
#    Secret exists, but the kubelet retries, so the hook hangs only if the controller never writes
#    the Secret (an assumption, hence "action": "warn");
#  - not in the input at all (resolution missing): high warn by default — syncguard assumes it is
#    created outside this Application (by hand, by another Application, by an operator) and says
#    so; critical deny when the input is declared complete (input.context.complete, `syncguard
#    check --complete`) or in the audit, where a missing target is provably absent from the
#    cluster too. A missing Namespace is not reported: Argo CD's CreateNamespace=true or a
#    pre-created namespace is the norm.
# builtin, live and unknown targets (admission: everything the app context does not contain), and
# optional references, are never reported.
package syncguard.rules.hook_dependency_order

meta := {
	"id": "SG201",
	"title": "Hook needs an object the sync creates later or never",
	"severity": "critical",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD finishes every hook of a step before it starts the next step, and runs every PreSync step",
		"before any Sync step whatever the waves. A hook whose pod needs a Secret, ConfigMap, ServiceAccount,",
		"PVC or SecretProviderClass that the sync creates in a later step can never start: Argo CD waits for",
		"the hook, the hook waits for the object, and the step that would create the object never comes.",
	]),
	"docs": "docs/rules/SG201.md",
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

# References a pod (or the object itself) cannot do without.
_needs_roles := {"env", "env_from", "volume", "image_pull_secret", "service_account", "namespace"}

# 1. Created after the hook's first step (or, when a controller produces it, in the same step).
violations contains object.union({"msg": msg, "path": _via(ref)}, _late_grade(target_task, hook_task)) if {
	# cheap first tests, implied by _needed_refs (_hook_runs, some ref in _refs) and by
	# _first_task(_plan_tasks), which needs a non-empty plan
	input.sync.is_hook == true
	input.refs != []
	input.plan.tasks != []
	some ref in _needed_refs
	target := _target(ref)
	target.resolution in {"in_set", "produced_by"}
	hook_task := _first_task(_plan_tasks)
	target_task := _first_task(_array(target, "tasks"))
	_created_too_late(target, target_task.step, hook_task.step)
	grade := _late_grade(target_task, hook_task)
	not _reported_at_an_earlier_path(_via(ref), grade.severity)
	msg := sprintf(
		"%s, a hook at %s, needs %s before it exists: %s. Fix: %s%s%s",
		[
			_subject, _where(hook_task), _ref_label(ref),
			_why_late(ref, target, target_task, hook_task),
			_fix_order(ref, target, target_task, hook_task), _async_note(target),
			_also_late(ref, grade.severity),
		],
	)
}

# One finding per object and cause: every reference this hook needs too early with the same
# grade has one cause (the hook runs before the step that creates them), so only the first (by
# path) is reported, naming the others (mastodon's PreSync migration Job reads two Secrets of the
# Sync phase: one deny, not two).
_late contains {"via": _via(ref), "label": _ref_label(ref), "severity": grade.severity} if {
	input.plan.tasks != []
	some ref in _needed_refs
	target := _target(ref)
	target.resolution in {"in_set", "produced_by"}
	hook_task := _first_task(_plan_tasks)
	target_task := _first_task(_array(target, "tasks"))
	_created_too_late(target, target_task.step, hook_task.step)
	grade := _late_grade(target_task, hook_task)
}

_reported_at_an_earlier_path(via, severity) if {
	some l in _late
	l.severity == severity
	l.via < via
}

_also_late(ref, severity) := sprintf(" The same holds for %s, which it needs too.", [concat(", ", others)]) if {
	others := sort({l.label | some l in _late; l.severity == severity; l.label != _ref_label(ref)})
	count(others) > 0
} else := ""

# 2. In the set, but this sync never applies it (or its producer).
violations contains {"msg": msg, "path": _via(ref), "severity": "critical"} if {
	# cheap first tests, implied by _needed_refs (_hook_runs, some ref in _refs)
	input.sync.is_hook == true
	input.refs != []
	some ref in _needed_refs
	target := _target(ref)
	target.resolution in {"in_set", "produced_by"}
	object.get(target, "tasks", null) == [] # absent or malformed is not "never"
	msg := sprintf(
		"%s, a hook at %s, needs %s, which this sync never creates: %s %s, so the hook cannot run and the sync waits for it forever. Fix: let Argo CD apply %s in a step before this hook (a lower wave of the same phase, or an earlier phase), or stop referencing it.",
		[
			_subject, _hook_where, _ref_label(ref),
			_definer_label(ref, target), _never_reason(target), _definer_label(ref, target),
		],
	)
}

# 3. Not in the input at all. Whether it exists when the hook runs is outside the input, unless
# the input is declared complete or the audit saw the cluster.
violations contains object.union({"msg": msg, "path": _via(ref)}, _missing_grade) if {
	# cheap first tests, implied by _needed_refs (_hook_runs, some ref in _refs)
	input.sync.is_hook == true
	input.refs != []
	some ref in _needed_refs
	target := _target(ref)
	target.resolution == "missing"
	ref.role != "namespace"
	not _written_first(target)
	not _needed_by_an_earlier_hook(target)
	msg := _missing_msg(ref)
}

# One cause, one finding: when a hook of an earlier step needs the same missing object, that
# hook's finding is the one that matters (the sync stops there, before this hook could start),
# so this one is not repeated (mastodon's PreSync and PostSync migration Jobs both read one
# Secret that is not in the chart).
_needed_by_an_earlier_hook(target) if {
	hook_task := _first_task(_plan_tasks)
	some other in _array(target, "needed_first_by")
	is_object(other)
	object.get(other, "is_hook", false) == true
	other_task := _first_task(_array(other, "tasks"))
	other_task.step < hook_task.step
}

# 3b. Not in the input, but a workload of this Application that runs in an earlier step may write
# it at run time (target.written_by: its ServiceAccount's Role grants create/update/patch on it,
# model::writers) — a certificate generator hook writing the Secret a later hook mounts
# (cockroachdb's self-signer and init Jobs). The manifests cannot show that it does: the finding
# states the assumption, and is info (nothing to act on while it holds). Not when the input is
# declared complete or the audit saw the cluster: the object is then proven missing.
violations contains {"msg": msg, "path": _via(ref), "severity": "info"} if {
	input.sync.is_hook == true
	input.refs != []
	input.plan.tasks != []
	not _missing_proven
	some ref in _needed_refs
	target := _target(ref)
	target.resolution == "missing"
	ref.role != "namespace"
	writers := _earlier_writers(target)
	count(writers) > 0
	msg := sprintf(
		"%s, a hook at %s, needs %s, which is not in the input: assuming %s writes it at run time (it runs in an earlier step, and its ServiceAccount may create that object), the hook starts once it has; if it does not, the hook's pod cannot start and the sync waits for it forever.",
		[_subject, _hook_where, _ref_label(ref), _names(writers)],
	)
}

# "Job a", "Job a or CronJob b", "Job a, Job b or CronJob c", in name order.
_names(objects) := concat(" or ", [concat(", ", array.slice(labels, 0, count(labels) - 1)), labels[count(labels) - 1]]) if {
	labels := sort({sprintf("%s %s", [_str(o, "kind"), _str(o, "name")]) | some o in objects})
	count(labels) > 1
} else := sprintf("%s %s", [_str(objects[0], "kind"), _str(objects[0], "name")])

# The writers of a missing target that run in a step before this hook's first one.
_earlier_writers(target) := [w |
	hook_task := _first_task(_plan_tasks)
	some w in _array(target, "written_by")
	is_object(w)
	writer_task := _first_task(_array(w, "tasks"))
	writer_task.step < hook_task.step
]

_written_first(target) if {
	not _missing_proven
	count(_earlier_writers(target)) > 0
}

# 4. Not in this Application, but another Application of the input renders it (`review`, `check
# --render`: resolution other_app, with that Application and the order the app-of-apps gives the
# two). The hook's pod waits for it (the kubelet retries), so what matters is whether that
# Application can sync while this one's hook waits. It syncs first (an earlier wave that is
# waited for): nothing to say. A later wave that is waited for: the parent waits for this
# Application to be Healthy before it syncs the other, and this one waits in its hook for the
# other's object, so on a new cluster neither ever finishes (high; where the object exists already,
# as on a cluster synced before, the hook runs). Both at about once (the same wave, or waves that
# are not waited for): the hook only waits until the other has synced, which nobody need act on unless its deadline is shorter (info). No order known: info.
# Each rests on the object not existing yet (a new cluster), so each is a warning, never a deny.
violations contains {"msg": msg, "path": _via(ref), "severity": severity, "action": "warn"} if {
	# cheap first tests, implied by _needed_refs (_hook_runs, some ref in _refs)
	input.sync.is_hook == true
	input.refs != []
	some ref in _needed_refs
	target := _target(ref)
	target.resolution == "other_app"
	ref.role != "namespace"
	some order, severity in _other_app_severity
	object.get(target, "order", "") == order
	msg := sprintf(
		"%s, a hook at %s, needs %s, which is not in this Application: Application %s renders it, %s",
		[_subject, _hook_where, _ref_label(ref), _str(target, "app"), _other_app_says[order]],
	)
}

_other_app_severity := {"after": "high", "after_unwaited": "info", "same_wave": "info", "before_unwaited": "info", "unknown": "info"}

_other_app_says := {
	"after": "and the app-of-apps syncs that Application in a later sync-wave, which it starts only when this Application is Healthy. On a new cluster the hook's pod waits for an object that comes only after the hook has finished: this sync never ends and the later wave never starts. Fix: give that Application a lower sync-wave than this one, or move the object into this Application before the hook.",
	"after_unwaited": "in a later sync-wave of the app-of-apps, but argocd-cm gives Applications no health check, so the parent applies both waves at once (SG208): on a new cluster the hook's pod waits until that Application has synced, and the hook fails if it has a deadline shorter than that. Fix, if the wait matters: give that Application a lower sync-wave than this one and add the Application health check to argocd-cm.",
	"same_wave": "and the app-of-apps syncs both in the same sync-wave: on a new cluster the hook's pod waits until that Application has synced, and the hook fails if it has a deadline shorter than that. Fix, if the wait matters: give that Application a lower sync-wave than this one.",
	"before_unwaited": "in an earlier sync-wave of the app-of-apps, but argocd-cm gives Applications no health check, so the parent does not wait for it (SG208): on a new cluster the hook's pod may wait until that Application has synced. Fix, if the wait matters: add the Application health check to argocd-cm.",
	"unknown": "and nothing in the input orders the two Applications (no app-of-apps holds both). If that Application has synced before, the object exists and the hook runs; on a new cluster the hook's pod waits until it has. Nothing to do if that Application is synced first already; otherwise hold both in an app-of-apps with that Application in a lower sync-wave.",
}

# A missing target is proven missing when the user declared the input complete, or in the audit
# (the reconciler looked in the cluster: what exists there is `live`, not `missing`).
_missing_proven if object.get(_context, "complete", false) == true

_missing_proven if object.get(_context, "source", "") == "audit"

_missing_grade := {"severity": "critical"} if _missing_proven

else := {"severity": "high", "action": "warn"}

_missing_msg(ref) := sprintf(
	"%s, a hook at %s, needs %s, which %s: nothing creates it before the hook, so the hook's pod cannot start and the sync waits for it forever. Fix: add %s to this Application in a step before the hook, or create it before the sync; if it is provisioned outside Argo CD on purpose, exempt this object.",
	[_subject, _hook_where, _ref_label(ref), _proof, _ref_label(ref)],
) if {
	_missing_proven
} else := sprintf(
	"%s, a hook at %s, needs %s, which is not in the input: syncguard assumes it is created outside this Application (by hand, by another Application or an operator) before this sync; if it is not, the hook's pod cannot start and the sync waits for it forever. Make sure whatever creates it runs first, or add it to this Application in a step before the hook. If the input holds everything this Application needs, check with --complete to have this reported as an error.",
	[_subject, _hook_where, _ref_label(ref)],
)

_proof := "is not in this Application, whose manifests are declared complete (--complete)" if {
	object.get(_context, "complete", false) == true
} else := "is neither in this Application nor in the cluster"

# A later step is certain; the same step only delays an asynchronously produced Secret, and the
# kubelet retries the pod, so that one rests on the controller never writing it.
_late_grade(target_task, hook_task) := {"severity": "critical"} if {
	target_task.step > hook_task.step
} else := {"severity": "high", "action": "warn"}

_needed_refs contains ref if {
	_hook_runs
	some ref in _refs
	is_object(ref)
	ref.role in _needs_roles
	object.get(ref, "optional", false) != true
	is_object(object.get(ref, "target", null))
}

_hook_runs if {
	_applies
	object.get(_sync, "is_hook", false) == true
	count(_list("phases")) > 0
}

_target(ref) := ref.target

_created_too_late(_, target_step, hook_step) if target_step > hook_step

_created_too_late(target, target_step, hook_step) if {
	target_step == hook_step
	target.resolution == "produced_by"
	object.get(target, "async_producer", true) != false
}

# "it is produced by ExternalSecret app-foo/db-credentials at Sync wave 2"
_origin(ref, target, task) := sprintf("it is produced by %s at %s", [_definer_label(ref, target), _where(task)]) if {
	target.resolution == "produced_by"
} else := sprintf("it is applied at %s", [_where(task)])

_why_late(ref, target, target_task, hook_task) := sprintf(
	"%s, a step Argo CD starts only after this hook has finished, so the hook's pod cannot start and the sync waits for it forever (argo-cd#13429)",
	[_origin(ref, target, target_task)],
) if {
	target_task.step > hook_task.step
} else := sprintf(
	"%s, the hook's own step, and only appears once a controller has reconciled the producer, so the hook's pod may start without it, and waits forever if that never happens",
	[_origin(ref, target, target_task)],
)

# Same phase: only the waves are wrong.
_fix_order(ref, target, target_task, hook_task) := sprintf(
	"give %s a lower sync-wave than this hook (below %v), or give this hook a sync-wave after %v.",
	[_definer_label(ref, target), _wave(hook_task), _wave(target_task)],
) if {
	_str(target_task, "phase") == _str(hook_task, "phase")
	target_task.step > hook_task.step
}

_fix_order(ref, target, target_task, hook_task) := sprintf(
	"give %s a lower sync-wave than this hook (below %v), so that Argo CD applies it a step earlier.",
	[_definer_label(ref, target), _wave(hook_task)],
) if {
	_str(target_task, "phase") == _str(hook_task, "phase")
	target_task.step == hook_task.step
}

# Different phases: the two workarounds of spec §10-8.
_fix_order(ref, target, target_task, hook_task) := sprintf(
	"make this hook a %s hook with a wave after %v (argocd.argoproj.io/hook: %s, argocd.argoproj.io/sync-wave: \"%v\") or an init container of the workload that needs it; or create %s earlier, as a %s hook with a wave below %v.",
	[
		_str(target_task, "phase"), _wave(target_task), _str(target_task, "phase"), _wave(target_task) + 1,
		_definer_label(ref, target), _str(hook_task, "phase"), _wave(hook_task),
	],
) if {
	_str(target_task, "phase") != _str(hook_task, "phase")
}

_wave(task) := w if {
	w := object.get(task, "wave", 0)
	is_number(w)
} else := 0

_async_note(target) := concat("", [
	" Note: the Secret of an asynchronous producer appears only after its controller has reconciled it;",
	" Argo CD waits for that only when it has a health check for the producer, and a hook that normal",
	" resources also use is deleted and re-created on every sync (SG205).",
]) if {
	target.resolution == "produced_by"
} else := ""

_never_reason(target) := "is marked argocd.argoproj.io/hook: Skip" if {
	_ignored_reason(target) == "skip"
} else := "has an argocd.argoproj.io/hook value Argo CD does not know, so it is dropped (SG105)" if {
	_ignored_reason(target) == "garbage-hook"
} else := "is only a PreDelete/PostDelete hook, run when the Application is deleted" if {
	_ignored_reason(target) == "delete-hook-only"
} else := "has no task in this sync"

_ignored_reason(target) := r if {
	ignored := object.get(target, "ignored", {})
	is_object(ignored)
	r := object.get(ignored, "reason", "")
	is_string(r)
} else := ""

# The object Argo CD applies: the producer for produced_by, else the referenced object.
_definer_label(ref, target) := _object_label(target) if {
	target.resolution == "produced_by"
	_str(target, "kind") != ""
} else := _ref_label(ref)

_ref_label(ref) := _object_label(ref)

_object_label(obj) := sprintf("%s %s", [_str(obj, "kind"), _ns_name(_str(obj, "namespace"), _str(obj, "name"))])

_ns_name(ns, name) := concat("/", [ns, name]) if ns != ""

else := name

_via(ref) := v if {
	v := _str(ref, "via")
	startswith(v, "/")
} else := "/metadata"

# "PreSync wave 5"
_where(task) := sprintf("%s wave %v", [_str(task, "phase"), _wave(task)])

# Where the hook runs: its first planned task, else its first phase and wave from input.sync.
_hook_where := _where(_first_task(_plan_tasks)) if {
	_first_task(_plan_tasks)
} else := _where({"phase": _list("phases")[0], "wave": object.get(_sync, "wave", 0)}) if {
	is_string(_list("phases")[0])
} else := "an unknown step"

# The task with the lowest step; undefined when none has a numeric step.
_first_task(tasks) := first if {
	steps := [s | some t in tasks; is_object(t); s := object.get(t, "step", null); is_number(s)]
	count(steps) > 0
	lowest := min(steps)
	candidates := [t | some t in tasks; is_object(t); object.get(t, "step", null) == lowest]
	first := candidates[0]
}

_array(obj, key) := v if {
	v := object.get(obj, key, [])
	is_array(v)
} else := []

default _refs := []

_refs := r if {
	r := input.refs
	is_array(r)
}

default _plan_tasks := []

_plan_tasks := t if {
	is_object(input.plan)
	t := object.get(input.plan, "tasks", [])
	is_array(t)
}

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

# Rules never judge a deletion.
_applies if object.get(input, "operation", "") != "DELETE"

default _resource := {}

_resource := input.resource if is_object(input.resource)

default _sync := {}

_sync := input.sync if is_object(input.sync)

default _context := {}

_context := input.context if is_object(input.context)

# An array fact from input.sync, or [] when absent or malformed (regorus, unlike OPA, raises an
# error when `some x in` meets a non-collection).
_list(key) := v if {
	v := object.get(_sync, key, [])
	is_array(v)
} else := []

default _metadata := {}

_metadata := m if {
	m := object.get(_resource, "metadata", {})
	is_object(m)
}

_str(obj, key) := v if {
	v := object.get(obj, key, "")
	is_string(v)
} else := ""

_name := _str(_metadata, "name")

_generate_name := _str(_metadata, "generateName")

_namespace := _str(_metadata, "namespace")

default _display_name := "(unnamed)"

_display_name := _name if _name != ""

_display_name := concat("", [_generate_name, "*"]) if {
	_name == ""
	_generate_name != ""
}

_qualified_name := concat("/", [_namespace, _display_name]) if _namespace != ""

_qualified_name := _display_name if _namespace == ""

default _kind := "object"

_kind := k if {
	k := _str(_resource, "kind")
	k != ""
}

# "Job app-foo/svc-foo-migration"
_subject := sprintf("%s %s", [_kind, _qualified_name])
