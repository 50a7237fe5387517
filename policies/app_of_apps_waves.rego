# SG208: sync waves on child Applications (app of apps) that do not order what their author
# expects.
#
# A parent Application that holds child argoproj.io/Application objects applies them wave by wave
# like any other object, and moves to the next wave once every object of the current one is
# Healthy (spec §5.3). Since Argo CD 1.8 the Application kind has no health check
# (gitops-engine#153, shipped by argo-cd#4489; upgrade note "Health assessment of
# argoproj.io/Application CRD has been removed", issue argo-cd#3781): an object without a health
# check counts as done as soon as it is applied, so the parent starts the next wave right after
# it has created or updated the child Application object, without waiting for the child's own
# sync. argocd-cm can restore it (resource.customizations.health.argoproj.io_Application,
# docs/operator-manual/health.md "Argocd App"); input.health_check is "custom" then.
#
# Findings, for a child Application in a step that a later step waits for (input.plan.tasks:
# gated and not final):
#  1. no health check (input.health_check is null and argocd-cm does not list one): the waves order
#     only the creation of the Application objects. medium when the Application sets a wave
#     (sync-wave or hook-weight), low when it sits in its step by default. With no argocd-cm in
#     the input (input.argocd.config.source "none") the message says "unless argocd-cm ...".
#  2. a health check and the child's own automated sync (low): the order holds on the first sync,
#     but changes the child finds in its own source are synced by the child at once, outside the
#     parent's waves (argo-cd#8778), and on updates the parent's gate can read the child's health
#     from before the child saw the change (argo-cd#4577, #6708; argo-cd PR #29649).
#  3. a health check and no automated sync on the child (info): the parent updates the Application
#     but never syncs its resources; the gate reads whatever health the child shows meanwhile.
# Needs input.health_check (absent in older syncguard builds: then nothing is reported). An
# Application that manages itself (the object of the app of the same name) is skipped.
package syncguard.rules.app_of_apps_waves

meta := {
	"id": "SG208",
	"title": "Sync waves on child Applications do not wait for the child's sync",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"In an app of apps, sync-wave on a child Application orders when the parent applies the Application",
		"object. Since Argo CD 1.8 an Application has no health check unless argocd-cm adds one, so the parent",
		"does not wait for a child to be Synced and Healthy before the next wave; and even with the check, a",
		"child with its own automated sync rolls out later changes outside the parent's order.",
	]),
	"docs": "docs/rules/SG208.md",
	"kinds": ["Application"], # only these kinds can be reported: others skip the rule
}

# 1. No health check: the next wave does not wait for this child.
violations contains {"msg": msg, "path": _wave_path, "severity": _no_check_severity} if {
	# cheap first tests, implied by _child_application and _waiting_task
	input.resource.kind == "Application"
	input.plan.tasks != []
	object.get(input, "health_check", "absent") == null
	_child_application
	not _config_lists_health_check
	task := _waiting_task
	is_object(task) # the bytecode VM binds an undefined value instead of failing
	msg := sprintf(
		"%s at %s is followed by later steps, but its wave only orders when the parent applies the Application object: Argo CD starts the next step once every object of this one is Healthy, and %s, so the next wave starts as soon as this Application object is created or updated (after the wave delay, 2 s by default), without waiting for the child to be Synced and Healthy. Fix: add the Application health check to argocd-cm (resource.customizations.health.argoproj.io_Application, Argo CD docs operator-manual/health.md \"Argocd App\"), or do not rely on waves between child Applications.",
		[_subject, _where(task), _no_check_reason],
	)
}

# 2. A health check, and the child syncs itself.
violations contains {"msg": msg, "path": "/spec/syncPolicy/automated", "severity": "low"} if {
	# cheap first tests, implied by _child_application, _waiting_task and _automated
	input.resource.kind == "Application"
	input.plan.tasks != []
	is_object(input.resource.spec.syncPolicy.automated)
	_child_application
	_has_health_check
	task := _waiting_task
	is_object(task) # the bytecode VM binds an undefined value instead of failing
	msg := sprintf(
		"%s at %s has a health check, so the parent waits for it on the first sync, but not for later changes: the child has its own automated sync, so a change it finds in its own source (a new commit on its targetRevision) is synced by the child at once, outside the parent's waves (argo-cd#8778); and when the parent applies a change to this Application, its wave gate can read the child's health from before the child saw the change and start the next wave at once (argo-cd#4577). Fix: route changes through the parent (pin spec.source.targetRevision to a tag or commit the parent's manifests bump) and make the health check report Progressing until status.sync.comparedTo matches spec.source (argo-cd PR #29649).",
		[_subject, _where(task)],
	)
}

# 3. A health check, and nobody syncs the child.
violations contains {"msg": msg, "path": "/spec", "severity": "info"} if {
	# cheap first tests, implied by _child_application and _waiting_task
	input.resource.kind == "Application"
	input.plan.tasks != []
	_child_application
	not _automated
	_has_health_check
	task := _waiting_task
	is_object(task) # the bytecode VM binds an undefined value instead of failing
	msg := sprintf(
		"%s at %s has a health check but no automated sync: the parent creates or updates the Application object but does not sync the child's resources, so the child rolls out only when someone syncs it, and the parent's wave gate reads whatever health the child shows meanwhile (after an update, usually the old resources' Healthy). Fix: give the child spec.syncPolicy.automated if the parent's waves should roll it out, or sync the children in order yourself.",
		[_subject, _where(task)],
	)
}

# ---- the child Application ----

_child_application if {
	_applies
	_resource.kind == "Application"
	startswith(_str(_resource, "apiVersion"), "argoproj.io/")
	not _self_managed
}

# The parent app-of-apps' own Application object, tracked into itself: Argo CD leaves it out of
# its own health, and it orders nothing.
_self_managed if {
	_name != ""
	_str(_app, "name") == _name
}

_automated if {
	policy := object.get(_spec, "syncPolicy", {})
	is_object(policy)
	is_object(object.get(policy, "automated", null))
}

# The first step of this Application that a later step waits for.
_waiting_task := task if {
	waiting := [t |
		some t in _plan_tasks
		is_object(t)
		object.get(t, "gated", false) == true
		object.get(t, "final", true) == false
	]
	count(waiting) > 0
	steps := [s | some t in waiting; s := _step(t)]
	some task in waiting
	_step(task) == min(steps)
}

_step(task) := s if {
	s := object.get(task, "step", 0)
	is_number(s)
} else := 0

# ---- health check of argoproj.io/Application ----

_has_health_check if {
	h := object.get(input, "health_check", null)
	is_string(h)
	h != ""
}

_has_health_check if _config_lists_health_check

_config_lists_health_check if {
	some key in _config_array("health_checks")
	is_string(key)
	_glob(key, "argoproj.io/Application")
}

# Argo CD reads argocd-cm from the input, a file or the cluster.
_config_known if {
	s := object.get(_config, "source", "none")
	is_string(s)
	s != "none"
}

_no_check_reason := "this Argo CD's argocd-cm has no resource.customizations.health.argoproj.io_Application, and without it an Application has no health check (none is built in since v1.8, argo-cd#3781): it counts as done once applied" if {
	_config_known
} else := "an Application has no health check (none is built in since v1.8, argo-cd#3781) unless argocd-cm sets resource.customizations.health.argoproj.io_Application: without one it counts as done once applied"

# An explicit wave says the author meant to order this child.
_no_check_severity := "medium" if _str(_sync, "wave_source") in {"sync-wave", "hook-weight"}

else := "low"

_wave_path := "/metadata/annotations/argocd.argoproj.io~1sync-wave" if {
	object.get(_annotations, "argocd.argoproj.io/sync-wave", null) != null
} else := "/metadata/annotations/helm.sh~1hook-weight" if {
	object.get(_annotations, "helm.sh/hook-weight", null) != null
} else := "/metadata"

# "Sync wave 1"
_where(task) := sprintf("%s wave %v", [_str(task, "phase"), _wave(task)])

_wave(task) := w if {
	w := object.get(task, "wave", 0)
	is_number(w)
} else := 0

# "group/kind" keys as argocd-cm writes them ("argoproj.io/*", "*/Application", "*"): Argo CD
# matches them as globs; only * is understood here.
_glob(pattern, text) if pattern == text

_glob(pattern, text) if {
	contains(pattern, "*")
	regex.match(`^[A-Za-z0-9.*/_-]+$`, pattern)
	regex.match(concat("", ["^", replace(replace(pattern, ".", `\.`), "*", ".*"), "$"]), text)
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

default _app := {}

_app := input.app if is_object(input.app)

default _plan_tasks := []

_plan_tasks := t if {
	is_object(input.plan)
	t := object.get(input.plan, "tasks", [])
	is_array(t)
}

default _annotations := {}

_annotations := a if {
	a := object.get(_metadata, "annotations", {})
	is_object(a)
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

_namespace := _str(_metadata, "namespace")

default _display_name := "(unnamed)"

_display_name := _name if _name != ""

_qualified_name := concat("/", [_namespace, _display_name]) if _namespace != ""

_qualified_name := _display_name if _namespace == ""

# "Application argocd/payments"
_subject := sprintf("Application %s", [_qualified_name])
