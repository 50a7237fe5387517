# SG117: a helm.sh/hook-weight that becomes the object's sync wave where Helm would not use it.
#
# gitops-engine's syncwaves.Wave reads argocd.argoproj.io/sync-wave and, when that is missing or
# not an integer, falls back to helm.sh/hook-weight for EVERY object, hook or not (pkg/sync/
# syncwaves/waves.go; hook/helm/weight.go: "we do not take into account if this is or is not a
# hook, caller should check", and no caller does). In Helm the weight only orders hooks of one
# event among themselves. For a Helm hook mapped to PreSync/PostSync the two agree closely (the
# weight orders the hooks of that phase) and nothing is reported. Three cases differ:
#  1. a Sync-phase hook (only possible through argocd.argoproj.io/hook, which overrides the Helm
#     type but not the weight) with a positive weight: it joins Sync wave N and runs only after every
#     Sync-phase object of a lower wave has been applied and is Healthy (low);
#  2. argocd.argoproj.io/hook changing the phase of a Helm hook while the weight still sets its
#     wave in the new phase (info);
#  3. a normal resource with a stray hook-weight (e.g. `helm.sh/hook: crd-install` alone, which is
#     not a hook): it moves out of wave 0 (low; info for CRDs and Namespaces, which are pulled
#     forward to their first user anyway).
# Facts used: input.sync (wave, wave_source, is_hook, phases, hook_types, helm_hooks) and
# input.plan (tasks, steps) for the step the object lands in.
package syncguard.rules.helm_hook_weight_wave

meta := {
	"id": "SG117",
	"title": "helm.sh/hook-weight used as the sync wave",
	"severity": "low",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD uses helm.sh/hook-weight as the sync wave of any object without a valid sync-wave, hook or",
		"not, and keeps it when argocd.argoproj.io/hook overrides the Helm hook type. A Sync hook with weight 10",
		"then runs after every Sync wave below 10 is Healthy, and a normal resource with a stray weight leaves",
		"wave 0, although Helm would only have ordered hooks with it.",
	]),
	"docs": "docs/rules/SG117.md",
}

# 1. A Sync-phase hook whose wave comes from the weight.
violations contains {"msg": msg, "path": _weight_path, "severity": "low"} if {
	# cheap first tests, implied by the conditions below
	input.sync.wave_source == "hook-weight"
	input.sync.is_hook == true
	_applies
	"Sync" in _list("phases")
	is_number(_wave)
	_wave > 0
	msg := sprintf(
		"%s is a Sync hook whose wave comes from helm.sh/hook-weight: \"%s\" (it has no valid argocd.argoproj.io/sync-wave): Argo CD runs it in Sync wave %v%s, only after every Sync-phase object of a lower wave has been applied and is Healthy, while Helm uses the weight only to order hooks among themselves. %sIf the application's resources need what it does (a migration), give it an argocd.argoproj.io/sync-wave lower than theirs; otherwise set the wave it should have explicitly.",
		[_subject, _raw_weight, _wave, _step_text("Sync"), _override_note],
	)
}

# 2. argocd.argoproj.io/hook moved a Helm hook to another phase; the weight still sets its wave.
violations contains {"msg": msg, "path": _weight_path, "severity": "info"} if {
	# cheap first tests, implied by the conditions below
	input.sync.wave_source == "hook-weight"
	input.sync.is_hook == true
	input.sync.helm_hooks != []
	_applies
	not "Sync" in _list("phases")
	_overrides_helm
	is_number(_wave)
	_wave != 0
	phase := _first_phase
	msg := sprintf(
		"%s: argocd.argoproj.io/hook (%s) overrides helm.sh/hook (%s), but Argo CD still takes the wave from helm.sh/hook-weight: \"%s\", so it runs at %s wave %v%s. Set argocd.argoproj.io/sync-wave to make that order explicit (a valid sync-wave wins over the weight), or remove the weight.",
		[_subject, concat(",", _argo_types), concat(",", _list("helm_hooks")), _raw_weight, phase, _wave, _step_text(phase)],
	)
}

# 3. A normal resource with a stray weight. (Waves are printed with %v: regorus prints a negative
# number wrongly with %d.)
violations contains {"msg": msg, "path": _weight_path, "severity": sev} if {
	# cheap first tests, implied by the conditions below
	input.sync.wave_source == "hook-weight"
	not input.sync.is_hook == true
	_applies
	"Sync" in _list("phases")
	is_number(_wave)
	_wave != 0
	sev := _normal_severity
	msg := sprintf(
		"%s is not a hook%s, yet Argo CD takes its sync wave from helm.sh/hook-weight: \"%s\" (it reads the weight of every object without a valid argocd.argoproj.io/sync-wave): it is applied in Sync wave %v%s instead of 0, %s. Helm ignores hook-weight on objects that are not hooks. Remove the weight, or set argocd.argoproj.io/sync-wave to the wave it should have.",
		[_subject, _crd_install_note, _raw_weight, _wave, _step_text("Sync"), _normal_effect],
	)
}

# ---- case details ----

_override_note := sprintf("argocd.argoproj.io/hook overrides helm.sh/hook (%s), but the weight still sets the wave. ", [concat(",", _list("helm_hooks"))]) if {
	object.get(_annotations, "argocd.argoproj.io/hook", null) != null
	count(_list("helm_hooks")) > 0
} else := ""

# Phases the Helm annotation alone would give (pkg/sync/hook/helm/type.go).
_helm_phase := {
	"pre-install": "PreSync",
	"pre-upgrade": "PreSync",
	"post-install": "PostSync",
	"post-upgrade": "PostSync",
}

_helm_phases := {p | some h in _list("helm_hooks"); p := _helm_phase[h]}

_sync_phases := ["PreSync", "Sync", "PostSync", "SyncFail"]

_argo_types := [t | some t in _list("hook_types"); t in _sync_phases]

_overrides_helm if {
	object.get(_annotations, "argocd.argoproj.io/hook", null) != null
	count(_argo_types) > 0
	{t | some t in _argo_types} != _helm_phases
}

_first_phase := p if {
	ordered := [q | some q in _sync_phases; q in _list("phases")]
	p := ordered[0]
}

default _normal_severity := "low"

# A CRD or Namespace is pulled into the wave of its first user when that one comes earlier.
_normal_severity := "info" if _kind in {"CustomResourceDefinition", "Namespace"}

# Moved earlier without a health check: nothing waits for it.
_normal_severity := "info" if {
	not _kind in {"CustomResourceDefinition", "Namespace"}
	_wave < 0
	_no_health_check
}

# input.health_check is null when Argo CD has no health check for the object (absent in older
# inputs: then nothing is assumed).
_no_health_check if object.get(input, "health_check", "absent") == null

_normal_effect := "so it is applied only after every Sync-phase object of a lower wave is Healthy" if {
	_wave > 0
	not _kind in {"CustomResourceDefinition", "Namespace"}
} else := "so it is applied only after every Sync-phase object of a lower wave is Healthy, unless an object that needs it comes earlier and pulls it forward" if {
	_wave > 0
} else := "before the objects of wave 0 (it has no health check, so they do not wait for it)" if {
	_no_health_check
} else := "before the objects of wave 0, which then wait for it to be Healthy"

_crd_install_note := " (helm.sh/hook: crd-install alone is not a hook for Argo CD)" if {
	_list("helm_hooks") == ["crd-install"]
} else := ""

# " (step 3 of 5)" from the plan, when there is one.
_step_text(phase) := sprintf(" (step %d of %d)", [step + 1, steps]) if {
	plan := object.get(input, "plan", {})
	is_object(plan)
	steps := object.get(plan, "steps", null)
	is_number(steps)
	tasks := object.get(plan, "tasks", [])
	is_array(tasks)
	found := [s |
		some t in tasks
		is_object(t)
		object.get(t, "phase", "") == phase
		s := object.get(t, "step", null)
		is_number(s)
	]
	count(found) > 0
	step := found[0]
	step < steps
} else := ""

default _wave := null

_wave := w if {
	w := object.get(_sync, "wave", null)
	is_number(w)
}

_raw_weight := w if {
	w := object.get(_annotations, "helm.sh/hook-weight", "")
	is_string(w)
} else := ""

_weight_path := "/metadata/annotations/helm.sh~1hook-weight"

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

# "Job app-foo/svc-foo-migrate"
_subject := sprintf("%s %s", [_kind, _qualified_name])
