# SG120: a run-on-sync hook of an Application with automated sync.
#
# Argo CD does not compare hooks: controller/state.go leaves them out of the sync status
# (`case resState.Hook || ...`), and automated sync starts only when the Application is
# OutOfSync (controller/appcontroller.go autoSync, "Skipping auto-sync: application status is
# Synced"). A commit that adds or changes only hooks (a new image tag of a migration Job, a new
# PostSync test) therefore leaves the Application Synced, and the new hook does not run until
# something else starts a sync. Seen with the real v3.2.11 controller (docs/argocd-observed.md,
# "Hooks are not compared") and reported in argo-cd#9830 and #21939.
#
# syncguard cannot see which files a commit changes, so it reports only where a hook-only commit
# is likely, in `syncguard check` (where commits are reviewed), for hooks that do work (Job,
# Pod, Argo Workflow) in PreSync, Sync or PostSync of an Application whose input.app.automated
# is true:
#  1. every object of the Application is a hook (input.plan.tracked == 0): medium, warn — every
#     commit is hook-only;
#  2. the hook's image tags appear on no compared object (input.plan.image_tag_shared false): info,
#     audit — the hook is released on its own schedule. A hook sharing its tag with a tracked
#     workload changes with it and is not reported.
package syncguard.rules.hook_only_change

meta := {
	"id": "SG120",
	"title": "Hook-only change does not trigger automated sync",
	"severity": "info",
	"action": "audit",
	"why": concat(" ", [
		"Argo CD does not compare hooks, so a commit that changes only hooks leaves the Application Synced and",
		"automated sync does not start: the changed hook runs only at the next sync that something else",
		"triggers.",
	]),
	"docs": "docs/rules/SG120.md",
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

# 1. Every object of the Application is a hook: every commit to it is a hook-only change.
violations contains {"msg": msg, "path": _hook_path, "severity": "medium", "action": "warn"} if {
	# cheap first tests, implied by the conditions below
	input.sync.is_hook == true
	input.app.automated == true
	input.context.source == "check"
	input.plan.tracked == 0
	_applies
	_worker
	count(_run_phases) > 0
	msg := sprintf(
		"%s is a %s hook of Application %s, which syncs automatically, and every object of %s is a hook: Argo CD does not compare hooks, so the Application is always Synced, automated sync never starts and a new commit never runs this %s. Add a tracked object whose content changes with the hooks (e.g. a ConfigMap holding the version the hooks run), or sync by hand (argocd app sync %s).",
		[_subject, concat("/", _run_phases), _app_name, _app_name, _kind, _app_name],
	)
}

# 2. The hook's images are versioned apart from every tracked object: a release can bump them
# alone, and that commit runs nothing. A hook whose image tag a tracked workload shares (the
# usual "migrate:1.4.2 next to api:1.4.2") changes together with a compared object; Rust says
# which with input.plan.image_tag_shared.
violations contains {"msg": msg, "path": _hook_path} if {
	# cheap first tests, implied by the conditions below
	input.sync.is_hook == true
	input.app.automated == true
	input.context.source == "check"
	input.plan.tracked > 0
	input.plan.image_tag_shared == false
	_applies
	_worker
	count(_run_phases) > 0
	tags := _own_tags
	count(tags) > 0
	msg := sprintf(
		"%s is a %s hook of Application %s, which syncs automatically, and its image tag (%s) is used by no object Argo CD compares in this Application: a commit that changes only hooks (a new tag for this %s) leaves the Application Synced, automated sync does not start and the hook does not run until another change triggers a sync. When such a commit must run it, sync by hand (argocd app sync %s), or change a tracked object in the same commit, e.g. a checksum or version annotation on the Deployment it belongs to.",
		[_subject, concat("/", _run_phases), _app_name, concat(", ", sort(tags)), _kind, _app_name],
	)
}

# Tags of this object's container images (Pod, Job pod template; Workflow templates are not read).
_own_tags := {tag |
	some spec in _pod_specs
	some list in ["containers", "initContainers"]
	containers := object.get(spec, list, [])
	is_array(containers)
	some c in containers
	image := object.get(c, "image", "")
	is_string(image)
	tag := _tag(split(image, "@")[0])
}

_pod_specs contains s if {
	_resource.kind == "Pod"
	s := object.get(_resource, "spec", {})
	is_object(s)
}

_pod_specs contains s if {
	_resource.kind == "Job"
	s := object.get(object.get(object.get(_resource, "spec", {}), "template", {}), "spec", {})
	is_object(s)
}

# "registry:5000/app:1.2" -> "1.2"; no tag (or only a registry port) -> undefined.
_tag(image) := tag if {
	parts := split(image, ":")
	count(parts) > 1
	tag := parts[count(parts) - 1]
	not contains(tag, "/")
	tag != ""
}

# Hooks that do work when they run.
_worker if {
	_resource.kind == "Job"
	startswith(_str(_resource, "apiVersion"), "batch/")
}

_worker if {
	_resource.kind == "Pod"
	_str(_resource, "apiVersion") == "v1"
}

_worker if {
	_resource.kind == "Workflow"
	startswith(_str(_resource, "apiVersion"), "argoproj.io/")
}

# SyncFail hooks run only when a sync fails; their change is not expected to run by itself.
_run_phases := [p | some p in _list("phases"); p in {"PreSync", "Sync", "PostSync"}]

_app_name := n if {
	n := input.app.name
	is_string(n)
	n != ""
} else := "(unnamed)"

_hook_path := "/metadata/annotations/argocd.argoproj.io~1hook" if {
	annotations := object.get(_metadata, "annotations", {})
	is_object(annotations)
	is_string(object.get(annotations, "argocd.argoproj.io/hook", null))
} else := "/metadata/annotations/helm.sh~1hook"

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

# "Job app-foo/svc-foo-migration"
_subject := sprintf("%s %s", [_kind, _qualified_name])
