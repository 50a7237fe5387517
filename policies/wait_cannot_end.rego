# SG209: an object the sync waits for whose wait cannot end by itself.
#
# Judges the waits facts (input.waits, model::waits in the semantics crate) of objects the plan
# waits on (input.plan.tasks[].gated: a later step, or the PostSync hooks, start only once it is
# Healthy; a hook until it completes):
#  - parks: its own spec keeps it short of Healthy although nothing fails — a paused Deployment
#    or Rollout, a suspended Job, a Rollout canary pause step without a duration or a blue-green
#    Rollout without auto-promotion (on every update after the first: a new Rollout skips its
#    steps). Argo CD reports Suspended, which keeps the step Running (gitops-engine
#    sync_context.go: only Healthy ends a non-hook task, only Degraded fails it);
#  - needs: a ResourceQuota of the input that refuses its Pods. The model's other need, a
#    WaitForFirstConsumer claim whose first consumer comes later, is reported by SG206.
# A quota that refuses the Pods of an object nobody waits for is still reported (medium): the
# sync ends, but the workload never runs.
package syncguard.rules.wait_cannot_end

meta := {
	"id": "SG209",
	"title": "Wait that cannot end by itself",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD starts the next wave, phase or PostSync hook only once every object of the current step is",
		"Healthy. An object its own spec keeps Suspended, whose Pods a quota refuses, or whose volume binds only",
		"for a Pod of a later step never gets there: the sync stays Running until someone terminates it.",
	]),
	"docs": "docs/rules/SG209.md",
	# only these kinds park or need anything (model::waits): others skip the rule
	"kinds": ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob", "Pod", "PersistentVolumeClaim", "Rollout"],
}

violations contains {"msg": msg, "path": p.pointer, "severity": _park_severity(p)} if {
	is_object(input.waits) # cheap first test: most objects carry no waits fact
	_applies
	_waited
	some p in _array(_waits, "parks")
	msg := sprintf(
		"%s: the sync waits for it (%s), but %s (%s), so %s. %s",
		[_subject, _waited_for, p.reason, _when(p), _consequence, _park_fix(p)],
	)
}

violations contains {"msg": msg, "path": n.pointer, "severity": "high"} if {
	is_object(input.waits) # cheap first test: most objects carry no waits fact
	_applies
	_waited
	some n in _array(_waits, "needs")
	# a claim that binds only for a later Pod is SG206's to report (it also covers the default
	# StorageClass the input does not show)
	not startswith(n.evidence, "StorageClass ")
	msg := sprintf(
		"%s: the sync waits for it (%s), but %s; so %s. %s",
		[_subject, _waited_for, n.what, _consequence, _need_fix(n)],
	)
}

violations contains {"msg": msg, "path": n.pointer, "severity": "medium"} if {
	is_object(input.waits) # cheap first test: most objects carry no waits fact
	_applies
	not _waited
	some n in _array(_waits, "needs")
	startswith(n.evidence, "ResourceQuota ")
	msg := sprintf(
		"%s: %s. Nothing later in the sync waits for it, so the sync succeeds, but the workload never runs and the Application stays Progressing or Degraded. %s",
		[_subject, n.what, _need_fix(n)],
	)
}

_park_severity(p) := "medium" if p.when == "every update after the first"

else := "high"

_when(p) := "on every sync" if p.when == "every sync"

else := "on every update after the first sync"

_consequence := "Argo CD never runs what comes after this hook and the operation stays Running until someone terminates it" if {
	_is_hook
} else := sprintf("Argo CD does not start the next step, and after %ds its %s turns it Degraded and the sync fails", [b.seconds, b.field]) if {
	b := object.get(_waits, "bound", null)
	is_object(b)
	is_number(b.seconds)
} else := "Argo CD never starts the next step and the operation stays Running until someone terminates it (nothing turns this kind Degraded)"

_waited_for := "a hook: Argo CD waits until it completes" if _is_hook

else := "Argo CD starts the next step only once it is Healthy"

_park_fix(p) := "Promote the Rollout (kubectl argo rollouts promote) to let the sync go on, or give the pause a duration, or put the Rollout in the last step with no PostSync hook after it; a custom health check in argocd-cm that treats the pause as Healthy also works." if {
	contains(p.pointer, "/strategy/")
} else := "Remove the setting from the manifest, or keep the object out of a step the sync waits on."

_need_fix(n) := "Set the resource on every container (or add a LimitRange with a default for it in the namespace)." if {
	startswith(n.evidence, "ResourceQuota ")
} else := "Put the claim in the same step as the first workload that mounts it (or later), or use a StorageClass with volumeBindingMode: Immediate."

_waited if {
	some t in _array(input.plan, "tasks")
	t.gated == true
}

_is_hook if object.get(_sync, "is_hook", false) == true

default _waits := {}

_waits := w if {
	w := input.waits
	is_object(w)
}

_array(obj, key) := v if {
	v := object.get(obj, key, [])
	is_array(v)
} else := []

# ---- input helpers (the same in every rule file, trimmed to what this rule uses) ----

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

_subject := sprintf("%s %s", [_kind, _qualified_name])
