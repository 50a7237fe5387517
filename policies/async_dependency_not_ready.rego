# SG202: an object that uses a Secret a controller produces asynchronously, before that Secret
# can be relied on.
#
# An ExternalSecret, SealedSecret or cert-manager Certificate is applied by Argo CD, but the
# Secret it stands for is written later, by its controller. Argo CD's step order guarantees only
# that the producer was *applied*; the Secret exists once the controller has reconciled it. Two
# situations leave a consumer without its Secret:
#  1. the producer is in the consumer's own step: they are applied together, and the pods start
#     (and fail with CreateContainerConfigError, or wait to mount the volume) before the Secret is
#     written; if it is never written the step never becomes Healthy;
#  2. the producer is in an earlier step but stock Argo CD has no health check for its kind
#     (target.health_check == null): Argo CD does not wait for it to be ready, so the wave order
#     gives no guarantee either (spec §5.3: kinds without a health check gate nothing, §10-11).
# The stronger form of the same mistake — a normal resource whose dependency (applied by Argo CD
# or produced) comes in a *later* step than its own, gated one — is SG207's
# (policies/forward_dependency.rego); this rule reported it as its "case 3" until issue 13.
#
# Decisions, to avoid noise:
#  - Objects the sync applies itself (ConfigMaps, Secrets, ServiceAccounts, PVCs in the same step)
#    are not reported: Argo CD applies a step in kind order (Secret and ConfigMap before the
#    workloads and Jobs that use them) and Kubernetes retries pod creation, so "same wave" is fine.
#  - A hook whose producer is in its own step is SG201's (critical) finding, not repeated here;
#    situation 2 is reported for hooks too.
#  - Optional references, and targets whose health_check fact is absent (unknown), are skipped.
package syncguard.rules.async_dependency_not_ready

meta := {
	"id": "SG202",
	"title": "Uses a Secret or other dependency before it can exist",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"A Secret produced by a controller (ExternalSecret, SealedSecret, Certificate) exists only once that",
		"controller has reconciled its producer. Argo CD waits for that only when the producer is in an earlier",
		"wave and has a health check; in the same wave, or without a health check, the pods that need the",
		"Secret start without it and fail until it appears, or for ever if it never does.",
	]),
	"docs": "docs/rules/SG202.md",
}

_needs_roles := {"env", "env_from", "volume", "image_pull_secret", "service_account"}

# 1. The producer is applied in the consumer's own step, and the sync has more steps: Argo CD
# waits for this step to be Healthy before the next.
violations contains {"msg": msg, "path": _via(ref)} if {
	# cheap first tests: _async_refs needs a non-empty input.refs, _first_task a non-empty plan
	input.refs != []
	input.plan.tasks != []
	object.get(_sync, "is_hook", false) != true
	_multi_step
	some ref in _async_refs
	consumer_task := _first_task(_plan_tasks)
	producer_task := _first_task(_array(ref.target, "tasks"))
	producer_task.step == consumer_task.step
	msg := sprintf(
		"%s may start before %s exists: %s, in the same step, and the Secret appears only once its controller has reconciled it; until then the pods that need it cannot start, and if it never appears this step never becomes Healthy and the sync waits. Fix: give %s a lower sync-wave than this %s (below %v), so that Argo CD waits for it to be Healthy first.%s",
		[
			_subject, _ref_label(ref), _origin(ref, producer_task), _producer_label(ref), _kind,
			_wave(consumer_task), _health_note(ref.target),
		],
	)
}

# 1b. The same in a sync of one step: gitops-engine waits for the health of normal resources only
# when the sync has several steps (sync_context.go: `(multiStep || t.isHook()) && t.running()`),
# so nothing waits; the pods start once the controller writes the Secret (the kubelet retries).
# Nothing to act on unless the controller never writes it, which the message puts first: info.
violations contains {"msg": msg, "path": _via(ref), "severity": "info"} if {
	input.refs != []
	input.plan.tasks != []
	object.get(_sync, "is_hook", false) != true
	not _multi_step
	some ref in _async_refs
	consumer_task := _first_task(_plan_tasks)
	producer_task := _first_task(_array(ref.target, "tasks"))
	producer_task.step == consumer_task.step
	msg := sprintf(
		"If the controller of %s never writes %s, %s never starts: %s, in the same step, and its pods wait for the Secret. This sync has one step, so Argo CD does not wait for health and the pods start as soon as the Secret appears; nothing to do while that controller runs.%s",
		[_producer_label(ref), _ref_label(ref), _subject, _origin(ref, producer_task), _health_note(ref.target)],
	)
}

# The plan has more than one step (input.plan.steps; absent: assumed, as before the fact).
_multi_step if {
	plan := object.get(input, "plan", {})
	is_object(plan)
	steps := object.get(plan, "steps", 2)
	is_number(steps)
	steps > 1
}

_multi_step if {
	plan := object.get(input, "plan", {})
	is_object(plan)
	not is_number(object.get(plan, "steps", null))
}

# 2. The producer is in an earlier step, but Argo CD cannot tell when it is ready.
violations contains {"msg": msg, "path": _via(ref)} if {
	# cheap first tests: _async_refs needs a non-empty input.refs, _first_task a non-empty plan
	input.refs != []
	input.plan.tasks != []
	some ref in _async_refs
	object.get(ref.target, "health_check", "unknown") == null
	consumer_task := _first_task(_plan_tasks)
	producer_task := _first_task(_array(ref.target, "tasks"))
	producer_task.step < consumer_task.step
	msg := sprintf(
		"%s may start before %s exists: %s, but stock Argo CD has no health check for %s, so it does not wait for the Secret before starting %s; the pods that need it cannot start until the controller has reconciled it. Fix: add a health check that reports Healthy once the Secret is written (argocd-cm key resource.customizations.health.%s_%s), so that the wave order holds.",
		[
			_subject, _ref_label(ref), _origin(ref, producer_task), _str(ref.target, "kind"),
			_where(consumer_task), _str(ref.target, "group"), _str(ref.target, "kind"),
		],
	)
}

_async_refs contains ref if {
	_applies
	some ref in _refs
	is_object(ref)
	ref.role in _needs_roles
	object.get(ref, "optional", false) != true
	target := object.get(ref, "target", null)
	is_object(target)
	target.resolution == "produced_by"
	object.get(target, "async_producer", false) == true
}

# "it is produced by ExternalSecret app-foo/db-credentials at Sync wave 2"
_origin(ref, task) := sprintf("it is produced by %s at %s", [_producer_label(ref), _where(task)])

_producer_label(ref) := _object_label(ref.target)

_health_note(target) := sprintf(
	" Stock Argo CD has no health check for %s, so also add one (argocd-cm key resource.customizations.health.%s_%s).",
	[_str(target, "kind"), _str(target, "group"), _str(target, "kind")],
) if {
	object.get(target, "health_check", "unknown") == null
} else := ""

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

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

# Rules never judge a deletion.
_applies if object.get(input, "operation", "") != "DELETE"

default _resource := {}

_resource := input.resource if is_object(input.resource)

default _sync := {}

_sync := input.sync if is_object(input.sync)

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

# "Deployment app-foo/svc-foo"
_subject := sprintf("%s %s", [_kind, _qualified_name])
