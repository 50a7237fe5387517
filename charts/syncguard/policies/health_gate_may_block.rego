# SG206: an object that may never become Healthy, placed where Argo CD waits for it.
#
# Argo CD starts a step only when every object of the previous step is Healthy (spec §5.3), and
# PostSync hooks only when every Sync-phase object is. Three kinds are Progressing for as long as
# something outside the manifests has not happened, and on some clusters that is for ever:
#  - a Service of type LoadBalancer, until status.loadBalancer.ingress is filled (no cloud load
#    balancer, no MetalLB: never) — spec §8.7, §10-10, argo-cd#14607;
#  - an Ingress, until its controller publishes status.loadBalancer.ingress (some never do);
#  - a PersistentVolumeClaim, until it is Bound: with a WaitForFirstConsumer StorageClass (the
#    default class on most clouds) that happens only once a pod uses it — spec §10-9,
#    argo-cd#12840. Reported only when no object of the same or an earlier step uses the claim
#    (input.dependents with role volume) and it is not pre-bound (spec.volumeName).
# Objects whose status already shows them Healthy (a live object in the reconciler) are fine, and
# so are these three kinds when argocd-cm replaces their health check (input.health_check
# "custom", or input.argocd.config.health_checks lists the kind): that check decides.
#
# A fourth case, custom resources: a kind whose health check is a Lua script (bundled with Argo CD
# in resource_customizations/, or a custom one in argocd-cm: input.health_check "bundled-lua" or
# "custom") usually reads status.conditions that the kind's controller writes, and most such
# scripts report Progressing while status is empty (cert-manager Certificate, ExternalSecret,
# SealedSecret, Strimzi Kafka, ...). If that controller is not installed, or does not watch the
# namespace, nothing ever writes status and the object is Progressing for ever. Whether the
# controller runs cannot be seen from manifests, so there the finding is info with action audit
# (it is also what SG201 recommends for producers of Secrets); a live object (audit) that still has
# no status is evidence, and gets low with the rule's action. In manifests only custom resources
# nothing else references (input.dependents) are reported: when something needs the object, the
# sync needs its controller anyway. Argo CD's own Application is SG208's.
#
# Two findings, by where the object sits (input.plan.tasks):
#  1. in a gated, non-final step of the PreSync or a later Sync wave: every later step waits;
#  2. in the Sync phase while the plan has PostSync hooks (input.plan.postsync_hooks > 0): the
#     PostSync hooks never run. (This Sync step is necessarily gated; it gets this message only.)
# Severity low: on most production clusters these objects do become Healthy, only later.
package syncguard.rules.health_gate_may_block

meta := {
	"id": "SG206",
	"title": "Object that may never be Healthy blocks later steps or PostSync",
	"severity": "low",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD waits for every object of a step to be Healthy before the next step, and for the whole Sync",
		"phase before PostSync hooks. A LoadBalancer Service without a load-balancer controller, an Ingress whose",
		"controller never publishes its address, a WaitForFirstConsumer PVC nobody uses yet, or a custom resource",
		"whose controller never writes its status stays Progressing for ever, and the sync with it.",
	]),
	"docs": "docs/rules/SG206.md",
}

# 1. A non-final gated step: every later step waits.
violations contains {"msg": msg, "path": _path} if {
	# cheap first tests, implied by _blocking_tasks (_may_never_be_healthy, some task in _plan_tasks)
	input.resource.kind in {"Service", "Ingress", "PersistentVolumeClaim"}
	input.plan.tasks != []
	some task in _blocking_tasks
	object.get(task, "gated", false) == true
	object.get(task, "final", true) == false
	not _blocks_postsync(task)
	msg := sprintf(
		"%s at %s can block every later step: Argo CD starts the next step only once every object of this one is Healthy, and %s. Fix: %s, or %s.",
		[_label, _where(task), _reason, _move_fix, _healthy_fix],
	)
}

# 2. The Sync phase of a plan with PostSync hooks: PostSync never runs.
violations contains {"msg": msg, "path": _path} if {
	# cheap first tests, implied by _blocking_tasks (_may_never_be_healthy, some task in _plan_tasks)
	input.resource.kind in {"Service", "Ingress", "PersistentVolumeClaim"}
	input.plan.tasks != []
	some task in _blocking_tasks
	_blocks_postsync(task)
	msg := sprintf(
		"%s in the Sync phase can keep the PostSync hooks (%v) from ever running: Argo CD runs PostSync hooks only once every Sync-phase object is Healthy, and %s. Fix: %s, or do not rely on PostSync hooks in this Application.",
		[_label, _postsync_hooks, _reason, _healthy_fix],
	)
}

# 3. A custom resource whose Lua health check waits for its controller, in a non-final gated step.
violations contains v if {
	# cheap first tests, implied by _cr_blocking_tasks (_lua_checked_custom_resource): most
	# objects are built-in kinds with a builtin check
	is_string(input.health_check)
	input.health_check != "builtin"
	input.plan.tasks != []
	some task in _cr_blocking_tasks
	object.get(task, "gated", false) == true
	object.get(task, "final", true) == false
	not _blocks_postsync(task)
	msg := sprintf(
		"%s at %s can block %s: Argo CD starts the next step only once every object of this one is Healthy, and %s. Fix: make sure that controller runs before this sync (installed by an earlier Application or wave), or, since nothing in this Application references this object, put it in the last wave.",
		[_subject, _where(task), _later_steps(task), _cr_reason],
	)
	v := object.union({"msg": msg, "path": "/spec"}, _cr_grading)
}

# 4. The same custom resource in the Sync phase of a plan with PostSync hooks.
violations contains v if {
	# cheap first tests, implied by _cr_blocking_tasks (_lua_checked_custom_resource): most
	# objects are built-in kinds with a builtin check
	is_string(input.health_check)
	input.health_check != "builtin"
	input.plan.tasks != []
	some task in _cr_blocking_tasks
	_blocks_postsync(task)
	msg := sprintf(
		"%s in the Sync phase can keep the PostSync hooks (%v) from ever running: Argo CD runs PostSync hooks only once every Sync-phase object is Healthy, and %s. Fix: make sure that controller runs before this sync (installed by an earlier Application or wave), or do not rely on PostSync hooks in this Application.",
		[_subject, _postsync_hooks, _cr_reason],
	)
	v := object.union({"msg": msg, "path": "/spec"}, _cr_grading)
}

_blocks_postsync(task) if {
	task.phase == "Sync"
	_postsync_hooks > 0
}

# Tasks of this object that Argo CD may wait on for ever.
_blocking_tasks contains task if {
	_applies
	_may_never_be_healthy
	some task in _plan_tasks
	is_object(task)
	not _consumed_by(task)
}

default _postsync_hooks := 0

_postsync_hooks := n if {
	is_object(input.plan)
	n := object.get(input.plan, "postsync_hooks", 0)
	is_number(n)
}

# ---- the three kinds ----

_may_never_be_healthy if {
	_load_balancer_service
	count(_lb_ingress) == 0
	not _custom_health_check
}

_may_never_be_healthy if {
	_ingress
	count(_lb_ingress) == 0
	not _custom_health_check
}

_may_never_be_healthy if {
	_claim
	object.get(_spec, "volumeName", "") in {"", null}
	_str(_status, "phase") != "Bound"
	not _custom_health_check
	not _bound_by_input_volume
}

# The waits model found a PersistentVolume of the input, applied no later, that the volume
# controller binds to this claim at once (static provisioning).
_bound_by_input_volume if {
	waits := object.get(input, "waits", {})
	is_object(waits)
	is_string(object.get(waits, "binds", null))
}

# argocd-cm replaces the built-in check (resource.customizations.health.<group>_<kind>).
_custom_health_check if input.health_check == "custom"

_custom_health_check if {
	some key in _config_array("health_checks")
	is_string(key)
	_glob(key, concat("/", [_group, _kind]))
}

# ---- custom resources with a Lua health check ----

_cr_blocking_tasks contains task if {
	_applies
	_lua_checked_custom_resource
	count(_status) == 0
	_unneeded_or_live
	some task in _plan_tasks
	is_object(task)
}

# In manifests, only a custom resource nothing in the Application references (input.dependents):
# when something needs it (a Deployment reading the Secret an ExternalSecret produces), the sync
# needs its controller anyway and SG201/SG207 judge the order. A live one without status is
# evidence either way.
_unneeded_or_live if _live

_unneeded_or_live if count(_dependents) == 0

_lua_checked_custom_resource if {
	input.health_check in {"bundled-lua", "custom"}
	_custom_resource
	not _argo_cd_application
}

# A reference to its CRD (role definition) says it is a custom resource; without refs, a group
# that is not a Kubernetes one.
_custom_resource if {
	some ref in _refs
	is_object(ref)
	ref.role == "definition"
}

_custom_resource if {
	contains(_group, ".")
	not endswith(_group, ".k8s.io")
}

_argo_cd_application if {
	_group == "argoproj.io"
	_kind == "Application"
}

_cr_reason := sprintf("its health check (%s for %s) reads the status its controller writes: until that controller has reconciled it, and for ever if the controller is not installed in this cluster or does not watch this namespace, there is no status and the check reports it Progressing (most Lua checks do while status is empty)", [_check_source, _group_kind]) if {
	not _live
} else := sprintf("it is live with no status yet: its health check (%s for %s) reads the status its controller writes, so either that controller is not running, is not watching this namespace, or has not reconciled it; until it does, the check reports it Progressing (most Lua checks do while status is empty)", [_check_source, _group_kind])

_check_source := "argocd-cm's custom check" if input.health_check == "custom"

else := "the Lua check bundled with Argo CD"

# Manifests cannot show whether the controller runs: info, recorded only. A live object without
# status is evidence.
_cr_grading := {"severity": "info", "action": "audit"} if not _live

else := {"severity": "low"}

_live if input.context.source == "audit"

_group_kind := concat("/", [_group, _kind]) if _group != ""

else := _kind

# "the 2 later steps", "the later step"
_later_steps(task) := phrase if {
	steps := object.get(_plan, "steps", 0)
	is_number(steps)
	step := object.get(task, "step", 0)
	is_number(step)
	n := (steps - step) - 1
	n > 1
	phrase := sprintf("the %d later steps", [n])
} else := "the later step" if {
	steps := object.get(_plan, "steps", 0)
	is_number(steps)
	step := object.get(task, "step", 0)
	is_number(step)
	(steps - step) - 1 == 1
} else := "every later step"

_load_balancer_service if {
	_resource.kind == "Service"
	_str(_resource, "apiVersion") == "v1"
	_spec.type == "LoadBalancer"
}

_ingress if {
	_resource.kind == "Ingress"
	_group in {"networking.k8s.io", "extensions"}
}

_claim if {
	_resource.kind == "PersistentVolumeClaim"
	_str(_resource, "apiVersion") == "v1"
}

_lb_ingress := i if {
	lb := object.get(_status, "loadBalancer", {})
	is_object(lb)
	i := object.get(lb, "ingress", [])
	is_array(i)
} else := []

# A pod-spec user of the claim in this step or an earlier one binds it.
_consumed_by(task) if {
	_claim
	some d in _dependents
	is_object(d)
	d.role == "volume"
	wave := object.get(d, "wave", null)
	is_number(wave)
	some phase in _array(d, "phases")
	_not_after(phase, wave, task)
}

_not_after(phase, _, task) if _phase_order[phase] < _phase_order[task.phase]

_not_after(phase, wave, task) if {
	phase == task.phase
	is_number(task.wave)
	wave <= task.wave
}

_phase_order := {"PreSync": -1, "Sync": 0, "PostSync": 1, "SyncFail": 2}

# ---- messages ----

_label := sprintf("%s (type LoadBalancer)", [_subject]) if _load_balancer_service

else := _subject

_path := "/spec/type" if _load_balancer_service

else := "/spec"

_reason := "a LoadBalancer Service stays Progressing until a load-balancer address is assigned, for ever on a cluster without a load-balancer controller (argo-cd#14607)" if {
	_load_balancer_service
} else := "an Ingress stays Progressing until its controller publishes status.loadBalancer.ingress, which some controllers never do (argo-cd#14607)" if {
	_ingress
} else := "a claim whose StorageClass binds WaitForFirstConsumer (the default class on most clouds) stays Pending, which Argo CD reads as Progressing, until a pod uses it, and nothing in this step or before it does (argo-cd#12840)"

_move_fix := "put it in the same wave as its first consumer" if _claim

else := "put it in the last wave of the sync"

_healthy_fix := "make sure this cluster assigns load-balancer addresses (a cloud load balancer, MetalLB)" if {
	_load_balancer_service
} else := "make the ingress controller publish its address (ingress-nginx: --publish-service)" if {
	_ingress
} else := "use a StorageClass with volumeBindingMode: Immediate"

# "Sync wave 0"
_where(task) := sprintf("%s wave %v", [_str(task, "phase"), _wave(task)])

_wave(task) := w if {
	w := object.get(task, "wave", 0)
	is_number(w)
} else := 0

default _status := {}

_status := s if {
	s := object.get(_resource, "status", {})
	is_object(s)
}

_group := g if {
	parts := split(_str(_resource, "apiVersion"), "/")
	count(parts) == 2
	g := parts[0]
} else := ""

_array(obj, key) := v if {
	v := object.get(obj, key, [])
	is_array(v)
} else := []

default _dependents := []

_dependents := d if {
	d := input.dependents
	is_array(d)
}

default _plan := {}

_plan := input.plan if is_object(input.plan)

default _refs := []

_refs := r if {
	r := input.refs
	is_array(r)
}

default _config := {}

_config := c if {
	is_object(input.argocd)
	c := object.get(input.argocd, "config", {})
	is_object(c)
}

_config_array(key) := v if {
	v := object.get(_config, key, [])
	is_array(v)
} else := []

# "group/kind" keys as argocd-cm writes them ("/Service", "*.crossplane.io/*"): Argo CD matches
# them as globs; only * is understood here.
_glob(pattern, text) if pattern == text

_glob(pattern, text) if {
	contains(pattern, "*")
	regex.match(`^[A-Za-z0-9.*/_-]+$`, pattern)
	regex.match(concat("", ["^", replace(replace(pattern, ".", `\.`), "*", ".*"), "$"]), text)
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

default _metadata := {}

_metadata := m if {
	m := object.get(_resource, "metadata", {})
	is_object(m)
}

default _spec := {}

_spec := s if {
	s := object.get(_resource, "spec", {})
	is_object(s)
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

# "Service shop/public"
_subject := sprintf("%s %s", [_kind, _qualified_name])
