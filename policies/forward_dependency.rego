# SG207: a normal resource whose pods need an object that a later step of the same sync creates.
#
# SG201's deadlock in the other direction. Argo CD runs a sync as steps (phase, wave) and, before
# it starts the next step, waits for every non-hook resource of a non-final step to be Healthy
# (spec §5.2/§5.3; input.plan.tasks[].gated). A Deployment at Sync wave 0 that mounts a Secret the
# sync applies only at wave 5, or only as a PostSync hook (a Helm post-install hook, argo-cd#4288),
# cannot become Healthy without it, so the step that would create the Secret never starts.
#
# What Argo CD then does depends on the workload's health check (gitops-engine
# pkg/sync/sync_context.go: for a non-hook task only Healthy or no health gives Succeeded, only
# Degraded gives Failed, everything else keeps the task Running and the operation waiting):
#  - Deployment, Rollout: Progressing until progressDeadlineSeconds (600 s by default), then the
#    ProgressDeadlineExceeded condition makes it Degraded and the operation fails ("one or more
#    synchronization tasks completed unsuccessfully"); every retry fails the same way, since the
#    later step never runs;
#  - Pod (restartPolicy Always): a missing env/envFrom object gives CreateContainerConfigError,
#    Degraded at once; a missing ServiceAccount makes the API server reject the Pod, so the apply
#    fails; a missing volume leaves it Pending (Progressing) for ever;
#  - ReplicaSet: a missing ServiceAccount gives ReplicaFailure (Degraded); otherwise Progressing;
#  - Job: Progressing until spec.activeDeadlineSeconds fails it, for ever without one
#    (CreateContainerConfigError is no pod failure, so backoffLimit never counts);
#  - StatefulSet, DaemonSet: Progressing for ever (Kubernetes gives them no progress deadline),
#    unless controller.sync.timeout.seconds (Argo CD 2.14 and later, 0 = none by default) is set.
#
# Facts used: input.plan.tasks (the object's step and whether it is gated), input.refs[] with role
# env, env_from, volume, image_pull_secret or service_account, and their target.resolution
# (in_set or produced_by only: a missing target is SG201/SG202 territory and is not reported
# here), target.tasks[].step, target.is_hook; input.health_check (contract fact: null means
# Argo CD has no health check for the object, so nothing waits; "custom" means argocd-cm's own
# check decides, and the finding becomes a warning).
#
# Not duplicated: a producer in the object's own step is SG202's (case 1); hooks are SG201's.
# Grading: high deny by default — on a sync where the dependency does not exist yet (the first
# sync of the Application, a new cluster or namespace) the outcome is certain. Per-finding
# "action": "warn" when it rests on an assumption: an imagePullSecret (the image may be pullable
# without it; severity medium), a custom health check, or an object that already exists
# (admission UPDATE, audit: its dependency is normally there from an earlier sync).
package syncguard.rules.forward_dependency

meta := {
	"id": "SG207",
	"title": "Needs an object that a later step of the sync creates",
	"severity": "high",
	"action": "deny",
	"why": concat(" ", [
		"Before it starts the next step of a sync, Argo CD waits for every normal resource of the current step",
		"to be Healthy. A Deployment, StatefulSet, Pod or Job whose pods need a Secret, ConfigMap, ServiceAccount",
		"or PVC that the sync creates only in a later wave or phase (a PostSync hook, a Helm post-install hook)",
		"cannot become Healthy without it, so that step never comes: the sync waits for ever, or fails once the",
		"workload turns Degraded.",
	]),
	"docs": "docs/rules/SG207.md",
	"kinds": ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod", "Job", "Rollout"], # only these kinds can be reported: others skip the rule
}

_needs_roles := {"env", "env_from", "volume", "image_pull_secret", "service_account"}

# Kinds whose Argo CD health waits for their pods (a CronJob is Healthy without any), with the API
# groups whose health check does so.
_waits_for_pods := {
	"Deployment": {"apps", "extensions"},
	"StatefulSet": {"apps"},
	"DaemonSet": {"apps", "extensions"},
	"ReplicaSet": {"apps", "extensions"},
	"Pod": {""},
	"Job": {"batch"},
	"Rollout": {"argoproj.io"},
}

violations contains object.union({"msg": msg, "path": _via(ref)}, _grade(ref)) if {
	# cheap first tests, implied by the conditions below
	_waits_for_pods[input.resource.kind]
	input.refs != []
	input.plan.tasks != []
	not input.sync.is_hook == true
	_applies
	_group in _waits_for_pods[_kind]
	not _no_health_check
	not _scaled_to_zero
	consumer_task := _first_task(_plan_tasks)
	object.get(consumer_task, "gated", false) == true
	some ref in _refs
	is_object(ref)
	ref.role in _needs_roles
	object.get(ref, "optional", false) != true
	target := object.get(ref, "target", null)
	is_object(target)
	target.resolution in {"in_set", "produced_by"}
	target_task := _first_task(_array(target, "tasks"))
	target_task.step > consumer_task.step
	_str(target_task, "phase") != "SyncFail"
	msg := sprintf(
		"%s needs %s before it exists: %s, a later step than this %s (%s). On a sync where %s does not exist yet (the first sync of this Application, a new cluster or namespace), Argo CD waits for this %s to be Healthy before it starts that step, and it cannot become Healthy without it: %s%s. Fix: %s",
		[
			_subject, _ref_label(ref), _origin(target, target_task), _kind, _where(consumer_task),
			_ref_label(ref), _kind, _pull_caveat(ref), _outcome(ref), _fix(ref, target, target_task, consumer_task),
		],
	)
}

# ---- grading ----

_grade(ref) := {"severity": "medium", "action": "warn"} if {
	ref.role == "image_pull_secret"
} else := {"action": "warn"} if {
	_assumed
} else := {}

# The verdict rests on something syncguard cannot see.
_assumed if object.get(input, "health_check", "") == "custom"

_assumed if object.get(input, "operation", "") == "UPDATE"

_assumed if object.get(_context, "source", "") == "audit"

# Argo CD has no health check for it (input.health_check null): the step does not wait for it.
_no_health_check if object.get(input, "health_check", "absent") == null

_scaled_to_zero if {
	_kind in {"Deployment", "StatefulSet", "ReplicaSet", "Rollout"}
	object.get(_spec, "replicas", null) == 0
}

# ---- what Argo CD does ----

_failed := "so the sync fails (\"one or more synchronization tasks completed unsuccessfully\"); every retry ends the same way, because the step that creates it never runs"

_pull_caveat(ref) := "if the registry needs those credentials, its image cannot be pulled, and " if {
	ref.role == "image_pull_secret"
} else := ""

_outcome(ref) := "the API server refuses a Pod whose ServiceAccount does not exist, so applying it fails and the sync ends with \"one or more objects failed to apply\"; every retry ends the same way" if {
	_kind == "Pod"
	ref.role == "service_account"
} else := sprintf("its pods cannot start, so it stays Progressing until its progressDeadlineSeconds (%s) run out, then turns Degraded, %s", [_deadline, _failed]) if {
	_kind == "Deployment"
} else := sprintf("its pods cannot start, so it stays Progressing until its progressDeadlineSeconds (%s) run out, then Argo CD's Rollout health check reports it Degraded, %s", [_deadline, _failed]) if {
	_kind == "Rollout"
} else := sprintf("its container waits in CreateContainerConfigError, which Argo CD reports as Degraded at once, %s", [_failed]) if {
	_kind == "Pod"
	ref.role in {"env", "env_from"}
	_restarts_always
} else := sprintf("Argo CD reports the Pod Degraded at once (ErrImagePull), %s", [_failed]) if {
	_kind == "Pod"
	ref.role == "image_pull_secret"
	_restarts_always
} else := sprintf("the ReplicaSet cannot create its pods and reports ReplicaFailure, which Argo CD takes as Degraded, %s", [_failed]) if {
	_kind == "ReplicaSet"
	ref.role == "service_account"
} else := sprintf("its pod cannot start, so the Job stays active (Progressing) until activeDeadlineSeconds (%v s) fails it; Argo CD then sees it Degraded, %s", [_spec.activeDeadlineSeconds, _failed]) if {
	_kind == "Job"
	is_number(_spec.activeDeadlineSeconds)
} else := sprintf("%s, so it stays Progressing and Argo CD waits for it for ever%s, and the step that would create it never starts", [_stuck_reason, _timeout_note])

_stuck_reason := "its pod cannot start (a failure to start is not a pod failure, so backoffLimit never counts)" if {
	_kind == "Job"
} else := "its pod cannot start" if {
	_kind == "Pod"
} else := sprintf("its pods cannot start (Kubernetes gives a %s no progress deadline)", [_kind]) if {
	_kind in {"StatefulSet", "DaemonSet"}
} else := "its pods cannot start"

# controller.sync.timeout.seconds arrived in Argo CD 2.14 (argo-cd#20816); 0, the default, is none.
_timeout_note := " (unless argocd-cmd-params-cm sets controller.sync.timeout.seconds)" if {
	_release >= 214
} else := ""

_deadline := sprintf("%v s", [d]) if {
	d := object.get(_spec, "progressDeadlineSeconds", null)
	is_number(d)
} else := "600 s, the default"

# A Pod's restartPolicy defaults to Always; the health check reads the live (defaulted) object.
_restarts_always if {
	not _spec.restartPolicy == "Never"
	not _spec.restartPolicy == "OnFailure"
}

# ---- messages ----

# "it is applied at PostSync wave 0, as a PostSync hook", "it is produced by ExternalSecret ..."
_origin(target, task) := sprintf("it is produced by %s at %s", [_object_label(target), _where(task)]) if {
	target.resolution == "produced_by"
	_str(target, "kind") != ""
} else := sprintf("it is applied at %s, as a %s hook", [_where(task), _str(task, "phase")]) if {
	object.get(target, "is_hook", false) == true
} else := sprintf("it is applied at %s", [_where(task)])

# Same phase: only the waves are wrong.
_fix(ref, target, target_task, consumer_task) := sprintf(
	"give %s a sync-wave below %v, or give this %s a sync-wave after %v.",
	[_definer_label(ref, target), _wave(consumer_task), _kind, _wave(target_task)],
) if {
	_str(target_task, "phase") == _str(consumer_task, "phase")
	object.get(target, "is_hook", false) != true
}

# A hook of a later phase (a Helm post-install hook is a PostSync hook): it has to move.
_fix(ref, target, _, consumer_task) := sprintf(
	"let Argo CD apply %s before this %s: make it a normal resource in the %s phase with a sync-wave below %v (drop its hook annotations), or a PreSync hook (argocd.argoproj.io/hook: PreSync, which Argo CD follows instead of a helm.sh/hook annotation; a hook is re-created on every sync, SG205). A Job that only writes it belongs in PreSync too, or in an init container of this %s.",
	[_definer_label(ref, target), _kind, _str(consumer_task, "phase"), _wave(consumer_task), _kind],
) if {
	object.get(target, "is_hook", false) == true
}

_fix(ref, target, target_task, consumer_task) := sprintf(
	"let Argo CD apply %s before this %s: in the %s phase with a sync-wave below %v (it runs at %s now).",
	[_definer_label(ref, target), _kind, _str(consumer_task, "phase"), _wave(consumer_task), _where(target_task)],
) if {
	_str(target_task, "phase") != _str(consumer_task, "phase")
	object.get(target, "is_hook", false) != true
}

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

# "Sync wave 2"
_where(task) := sprintf("%s wave %v", [_str(task, "phase"), _wave(task)])

_wave(task) := w if {
	w := object.get(task, "wave", 0)
	is_number(w)
} else := 0

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

# The Argo CD release judged for (major * 100 + minor); the newest when absent.
default _release := 9999

_release := r if {
	is_object(input.argocd)
	r := input.argocd.release
	is_number(r)
}

# "apps" from "apps/v1", "" for "v1"
_group := g if {
	parts := split(_str(_resource, "apiVersion"), "/")
	count(parts) == 2
	g := parts[0]
} else := ""

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

default _spec := {}

_spec := s if {
	s := object.get(_resource, "spec", {})
	is_object(s)
}

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

# "Deployment dex/dex"
_subject := sprintf("%s %s", [_kind, _qualified_name])
