# SG108: a hook that Argo CD never runs, or runs differently than Helm would.
#
# Three cases, each its own violation with its own severity (meta.severity is the usual case):
#  1. helm.sh/hook items Argo CD does not map (test, test-success, pre-rollback, post-rollback,
#     typos such as pre-instal). When nothing usable is left, gitops-engine drops the whole object
#     (medium); next to a usable item only that item is lost (low). Not reported when a valid
#     argocd.argoproj.io/hook type is present: Argo CD then ignores helm.sh/hook entirely.
#  2. argocd.argoproj.io/hook: Skip on a Namespace or CustomResourceDefinition: Skip means never
#     applied and never updated, and everything else in the app needs these two kinds (medium).
#     Other kinds are left alone: Skip is the documented workaround for Helm admission-webhook Jobs
#     (ingress-nginx, kube-prometheus-stack), and their RBAC is skipped with them.
#  3. A Helm hook that is install-only or upgrade-only (pre-install without pre-upgrade, ...).
#     Argo CD cannot tell an install from an upgrade: pre-install and pre-upgrade both become
#     PreSync and run on EVERY sync (argo-cd#6456). "pre-install,pre-upgrade" on one object is
#     fine — one PreSync task, which is what Helm does over a release's life — so only the
#     one-sided forms are reported, as info: an install-only hook runs again on every sync, an
#     upgrade-only hook also runs on the very first sync.
package syncguard.rules.hook_never_runs

meta := {
	"id": "SG108",
	"title": "Hook that Argo CD never runs, or runs on every sync",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD maps only pre/post-install, pre/post-upgrade and pre/post-delete Helm hooks; test and",
		"rollback hooks are silently dropped, and an object left with no usable hook is never applied.",
		"hook: Skip on a Namespace or CRD means it is never created, so the rest of the app fails on a",
		"fresh cluster. And since Argo CD cannot tell install from upgrade, install-only hooks run on every sync.",
	]),
	"docs": "docs/rules/SG108.md",
	# Judges objects Argo CD never applies too (no other rule sees them).
	"unapplied": true,
}

_hook_path := "/metadata/annotations/argocd.argoproj.io~1hook"

_helm_path := "/metadata/annotations/helm.sh~1hook"

# 1. Helm hook items Argo CD does not run.
violations contains {"msg": msg, "path": _helm_path, "severity": severity, "cause": concat(" ", ["dropped", item])} if {
	input.sync.unsupported_helm_hooks != [] # cheap first test: `some item in _list(...)` below needs a non-empty array
	_applies
	not _argo_types_win
	some item in _list("unsupported_helm_hooks")
	is_string(item)
	_ignored_reason == "garbage-hook"
	severity := _dropped_severity(item)
	msg := sprintf(
		"%s: helm.sh/hook \"%s\" is a Helm hook Argo CD never runs, and nothing else makes it a hook Argo CD knows, so Argo CD drops the whole object: it is never applied. %s",
		[_subject, item, _helm_fix(item)],
	)
}

violations contains {"msg": msg, "path": _helm_path, "severity": severity, "cause": concat(" ", ["ignored", item])} if {
	input.sync.unsupported_helm_hooks != [] # cheap first test: `some item in _list(...)` below needs a non-empty array
	_applies
	not _argo_types_win
	some item in _list("unsupported_helm_hooks")
	is_string(item)
	_ignored_reason != "garbage-hook"
	severity := _ignored_severity(item)
	msg := sprintf(
		"%s: helm.sh/hook \"%s\" is a Helm hook Argo CD never runs; Argo CD ignores it and %s. %s",
		[_subject, item, _runs_as, _helm_fix(item)],
	)
}

# 2. Skip on a kind that everything else needs.
violations contains {"msg": msg, "path": _hook_path, "severity": "medium"} if {
	input.sync.skip == true # cheap first test, implied by the object.get below
	_applies
	object.get(_sync, "skip", false) == true
	consequence := _skip_consequence[_kind]
	msg := sprintf(
		"%s has argocd.argoproj.io/hook: Skip, so Argo CD never applies or updates it: on a fresh cluster %s. Remove the annotation, or exempt this object if another Application manages it.",
		[_subject, consequence],
	)
}

_skip_consequence := {
	"Namespace": "everything that lives in it fails to sync (namespace not found)",
	"CustomResourceDefinition": "its custom resources fail the whole sync (\"one or more synchronization tasks are not valid\")",
}

# 3. Install-only or upgrade-only Helm hooks.
violations contains {"msg": msg, "path": _helm_path, "severity": "info", "cause": concat(" ", ["one-sided", pair.present])} if {
	input.sync.helm_hooks != [] # cheap first test: `pair.present in _helm_items` below needs a helm hook
	_applies
	not _argo_types_win
	some pair in _one_sided
	pair.present in _helm_items
	not pair.missing in _helm_items
	msg := sprintf(
		"%s has helm.sh/hook \"%s\" without \"%s\": Argo CD cannot tell an install from an upgrade and runs it as a %s hook on every sync, %s. %s",
		[_subject, pair.present, pair.missing, pair.phase, pair.when, pair.fix],
	)
}

# Severity by consequence (docs/severity.md). A dropped Helm test or rollback hook is expected:
# Argo CD has neither tests nor rollbacks, and the chart works without them. A dropped hook
# whose name is a typo of a hook Argo CD runs is a step that silently never happens.
_dropped_severity(item) := "info" if startswith(item, "test")

else := "low" if endswith(item, "-rollback")

else := "medium"

# The object still runs as another hook; only the unsupported item is lost. A typo next to a
# valid item is worth a look (low); test/rollback items are expected (info).
_ignored_severity(item) := "info" if startswith(item, "test")

else := "info" if endswith(item, "-rollback")

else := "low"

_one_sided := [
	{
		"present": "pre-install", "missing": "pre-upgrade", "phase": "PreSync",
		"when": "not only on the first install",
		"fix": "Make it idempotent, and add pre-upgrade to say so.",
	},
	{
		"present": "post-install", "missing": "post-upgrade", "phase": "PostSync",
		"when": "not only on the first install",
		"fix": "Make it idempotent, and add post-upgrade to say so.",
	},
	{
		"present": "pre-upgrade", "missing": "pre-install", "phase": "PreSync",
		"when": "including the very first one, before anything of the release exists",
		"fix": "Make it safe on an empty install, and add pre-install to say so.",
	},
	{
		"present": "post-upgrade", "missing": "post-install", "phase": "PostSync",
		"when": "including the very first one",
		"fix": "Make it safe on a fresh install, and add post-install to say so.",
	},
]

_helm_items := {item | some item in _list("helm_hooks"); is_string(item)}

# Argo CD takes hook types from helm.sh/hook only when argocd.argoproj.io/hook yields no valid
# sync-engine type (PreDelete/PostDelete are handled by the controller, not the engine).
_argo_types_win if {
	raw := _annotations["argocd.argoproj.io/hook"]
	is_string(raw)
	some item in _csv(raw)
	item in {"PreSync", "Sync", "PostSync", "SyncFail", "Skip"}
}

default _runs_as := "the object is not run by a sync"

_runs_as := sprintf("runs the object only as %s", [_hook_label]) if count(_list("phases")) > 0

_runs_as := sprintf("runs the object only as %s, when the Application is deleted", [_hook_label]) if {
	_ignored_reason == "delete-hook-only"
}

_helm_hook_names := ["pre-install", "pre-upgrade", "post-install", "post-upgrade", "pre-delete", "post-delete"]

_helm_fix(item) := "Argo CD never runs Helm tests: run them with `helm test` outside Argo CD, or make it an Argo CD hook (argocd.argoproj.io/hook: PostSync) to run it after every sync." if {
	startswith(item, "test")
} else := "Argo CD has no rollback hooks (a rollback is a sync to an older revision): make it a PreSync or PostSync hook if it must run." if {
	endswith(item, "-rollback")
} else := sprintf("Did you mean \"%s\"?", [name]) if {
	some name in _helm_hook_names
	_normalize(name) == _normalize(item)
} else := "Helm hooks Argo CD runs are pre-install, pre-upgrade, post-install, post-upgrade, pre-delete and post-delete."

_normalize(value) := lower(replace(replace(replace(value, "-", ""), "_", ""), " ", ""))

default _ignored_reason := ""

_ignored_reason := r if {
	ignored := object.get(_sync, "ignored", {})
	is_object(ignored)
	r := object.get(ignored, "reason", "")
	is_string(r)
}

# gitops-engine GetAnnotationCSVs: split on ",", trim, drop empty items.
_csv(value) := {item | some raw in split(value, ","); item := trim_space(raw); item != ""}

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

# "Job app-foo/svc-foo-migration"
_subject := sprintf("%s %s", [_kind, _qualified_name])

_hook_phases := [t | some t in _list("hook_types"); is_string(t); t != "Skip"]

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
