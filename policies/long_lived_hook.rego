# SG116: a long-lived object shipped as a hook.
#
# Helm charts mark CRDs, Namespaces, PVCs or operator custom resources with helm.sh/hook so that
# Helm installs them first; Argo CD maps those Helm hooks to its own (pre-install/pre-upgrade to
# PreSync, post-install/post-upgrade to PostSync; `crd-install` alone is not a hook). A hook is not
# managed like a resource (gitops-engine pkg/sync/sync_context.go, argo-cd controller/state.go):
#  - BeforeHookCreation, the default delete policy, deletes a named hook's live object and creates
#    it again at every sync; HookSucceeded deletes it after every successful sync; HookFailed after
#    every failed one;
#  - it is never compared with Git (no OutOfSync, no self-heal) and never pruned;
#  - helm.sh/resource-policy: keep does not protect it: Argo CD reads keep only when it deletes the
#    Application (controller/appcontroller.go shouldBeDeleted).
# For these kinds the deletion destroys what the object holds: every custom resource of a CRD's
# kind in the cluster, every object of a Namespace, the data behind a PVC (and while a pod mounts
# the claim, the deletion waits on kubernetes.io/pvc-protection and so does the sync), everything
# an Application with the resources finalizer manages, whatever an operator built for its CR.
#
# SG205 reports hooks that normal resources use (what their users lose); this rule is about what
# the object itself loses, whoever uses it. ServiceAccounts, RBAC, Secrets and ConfigMaps are left
# to SG205: a hook Job's own ServiceAccount or Secret made a hook is the normal pattern.
package syncguard.rules.long_lived_hook

meta := {
	"id": "SG116",
	"title": "Long-lived object (CRD, Namespace, PVC, operator resource) shipped as a hook",
	"severity": "critical",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD runs Helm hooks as its own hooks: with the default BeforeHookCreation policy it deletes and",
		"re-creates a named hook at every sync (HookSucceeded: after every successful sync), never compares it",
		"with Git and never prunes it. Deleting a CRD deletes all its custom resources, a Namespace all its",
		"objects, a PVC its data.",
	]),
	"docs": "docs/rules/SG116.md",
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

violations contains {"msg": msg, "path": _hook_path, "severity": sev, "action": act} if {
	# cheap first tests, implied by the conditions below
	input.sync.is_hook == true
	input.sync.phases != []
	_applies
	object.get(_sync, "is_hook", false) == true
	count(_list("phases")) > 0
	class := _class
	count(_effects) > 0
	sev := _severity[class][_strength]
	act := _action(sev)
	msg := sprintf(
		"%s is %s: Argo CD %s, and %s. As a hook it is also never compared with Git (drift never shows as OutOfSync, self-heal never repairs it) and never pruned%s. %s%s",
		[_subject, _hook_label, concat("; ", _effects), _loss[class], _keep_note, _fix_prefix, _fix[class]],
	)
}

# ---- what the object is ----

default _group := ""

_group := g if {
	parts := split(_str(_resource, "apiVersion"), "/")
	count(parts) == 2
	g := parts[0]
}

_class := "crd" if {
	_kind == "CustomResourceDefinition"
	_group == "apiextensions.k8s.io"
} else := "namespace" if {
	_kind == "Namespace"
	_group == ""
} else := "pvc" if {
	_kind == "PersistentVolumeClaim"
	_group == ""
} else := "pv" if {
	_kind == "PersistentVolume"
	_group == ""
} else := "application_cascade" if {
	_kind == "Application"
	_group == "argoproj.io"
	_has_resources_finalizer
} else := "application" if {
	_kind == "Application"
	_group == "argoproj.io"
} else := "custom" if {
	_custom_resource
	not concat("/", [_group, _kind]) in _run_once_or_config_kinds
}

# A custom resource: syncguard gives it a reference to the CRD that defines its kind.
_custom_resource if {
	refs := object.get(input, "refs", [])
	is_array(refs)
	some r in refs
	is_object(r)
	object.get(r, "role", "") == "definition"
}

# Custom kinds that are meant to be re-created on every sync (runs) or that only project Git
# content (secret producers; SG205 reports them when normal resources use what they produce).
_run_once_or_config_kinds := {
	"argoproj.io/Workflow",
	"tekton.dev/PipelineRun",
	"tekton.dev/TaskRun",
	"external-secrets.io/ExternalSecret",
	"bitnami.com/SealedSecret",
	"secrets-store.csi.x-k8s.io/SecretProviderClass",
}

_has_resources_finalizer if {
	finalizers := object.get(_metadata, "finalizers", [])
	is_array(finalizers)
	some f in finalizers
	is_string(f)
	startswith(f, "resources-finalizer.argocd.argoproj.io")
}

# ---- what Argo CD does to it ----

_policies := _list("delete_policies")

# In the order they happen. BeforeHookCreation finds nothing to delete when the hook has only
# generateName (a new name every sync: SG109), so it counts for named hooks only.
_effects := [text |
	some policy in ["BeforeHookCreation", "HookSucceeded", "HookFailed"]
	policy in _policies
	_effect_applies(policy)
	text := _effect_text(policy)
]

_effect_applies("BeforeHookCreation") if _name != ""

_effect_applies("HookSucceeded") := true

_effect_applies("HookFailed") := true

_effect_text("BeforeHookCreation") := "deletes it and creates it again at every sync, when its step comes (BeforeHookCreation, the default delete policy)" if {
	object.get(_sync, "delete_policy_set", false) == false
} else := "deletes it and creates it again at every sync, when its step comes (BeforeHookCreation)"

_effect_text("HookSucceeded") := "deletes it after every successful sync (HookSucceeded)"

_effect_text("HookFailed") := "deletes it whenever a sync fails (HookFailed)"

# "destroying": it is lost on every (successful) sync; "on_failure": only when a sync fails.
default _strength := "on_failure"

_strength := "destroying" if {
	"HookSucceeded" in _policies
}

_strength := "destroying" if {
	"BeforeHookCreation" in _policies
	_name != ""
}

_severity := {
	"crd": {"destroying": "critical", "on_failure": "high"},
	"namespace": {"destroying": "critical", "on_failure": "high"},
	"pvc": {"destroying": "critical", "on_failure": "high"},
	"application_cascade": {"destroying": "critical", "on_failure": "high"},
	"pv": {"destroying": "high", "on_failure": "medium"},
	"application": {"destroying": "medium", "on_failure": "low"},
	"custom": {"destroying": "medium", "on_failure": "low"},
}

# Deny only what destroys data on every sync; the rest is a warning.
_action("critical") := "deny"

_action(sev) := "warn" if sev != "critical"

_crd_kind := k if {
	names := object.get(_spec, "names", {})
	is_object(names)
	k := object.get(names, "kind", "")
	is_string(k)
	k != ""
} else := "its kind"

_crd_group := concat("", [" (", g, ")"]) if {
	g := object.get(_spec, "group", "")
	is_string(g)
	g != ""
} else := ""

_loss := {
	"crd": sprintf("deleting a CustomResourceDefinition deletes every %s%s object in the cluster, including those other Applications and controllers created", [_crd_kind, _crd_group]),
	"namespace": "deleting a Namespace deletes every object in it, including those of other Applications",
	"pvc": _pvc_loss,
	"pv": "deleting a PersistentVolume releases it: with reclaimPolicy Delete its storage is deleted, with Retain it must be bound again by hand",
	"application_cascade": "deleting an Application that carries the resources-finalizer.argocd.argoproj.io finalizer deletes every resource it manages",
	"application": "deleting an Application without its resources finalizer leaves its resources orphaned until the new one adopts them, and a finalizer added later makes every such deletion a cascade",
	"custom": sprintf("when a %s is deleted its controller may tear down what it manages for it (a database, a topic, a bucket, a certificate) and build it anew", [_kind]),
}

_pvc_loss := "deleting a PersistentVolumeClaim releases its volume, and a dynamically provisioned volume (reclaimPolicy Delete, the default) is deleted with its data; while a pod still mounts the claim, the deletion waits on the kubernetes.io/pvc-protection finalizer, and so does the sync, \"waiting for deletion\" (argo-cd#3837)" if {
	"BeforeHookCreation" in _policies
	_name != ""
} else := "deleting a PersistentVolumeClaim releases its volume, and a dynamically provisioned volume (reclaimPolicy Delete, the default) is deleted with its data"

default _keep_note := ""

_keep_note := "; helm.sh/resource-policy: keep does not protect it (Argo CD reads keep only when it deletes the Application)" if {
	object.get(_annotations, "helm.sh/resource-policy", "") == "keep"
}

_fix_prefix := "Remove argocd.argoproj.io/hook so that it becomes a normal resource" if {
	object.get(_annotations, "argocd.argoproj.io/hook", null) != null
} else := "Remove helm.sh/hook (a kustomize patch of the rendered chart if the chart cannot be changed) so that it becomes a normal resource"

_fix := {
	"crd": ": Argo CD applies a CRD before its custom resources anyway, pulling it into the phase and wave of the first one, hooks included (a Helm 3 chart's crds/ directory, or helm.sh/hook: crd-install alone, gives a normal resource too).",
	"namespace": ": Argo CD applies a Namespace before everything in it anyway, pulling it into the phase and wave of the first object in it, PreSync hooks included (or let the Application create it: CreateNamespace=true).",
	"pvc": "; if a PreSync hook needs the claim, make that hook a Sync hook with a sync-wave after it (SG201).",
	"pv": "; if a PreSync hook needs the volume, make that hook a Sync hook with a sync-wave after it (SG201).",
	"application_cascade": " with a sync-wave; a hook is only right for objects that may be lost at every sync.",
	"application": " with a sync-wave; a hook is only right for objects that may be lost at every sync.",
	"custom": " with a sync-wave; a hook is only right for objects that may be lost at every sync.",
}

# ---- labels and paths ----

_hook_phases := [t | some t in _list("hook_types"); is_string(t); t != "Skip"]

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync hook (helm.sh/hook: pre-install,pre-upgrade, which Argo CD maps to PreSync)"
_hook_label := sprintf("a %s hook (helm.sh/hook: %s, which Argo CD maps to %s)", [phases, concat(",", helm), phases]) if {
	count(_hook_phases) > 0
	object.get(_annotations, "argocd.argoproj.io/hook", null) == null
	helm := _list("helm_hooks")
	count(helm) > 0
	phases := concat("/", _hook_phases)
} else := sprintf("a %s hook", [concat("/", _hook_phases)]) if {
	count(_hook_phases) > 0
}

default _hook_path := "/metadata"

_hook_path := "/metadata/annotations/argocd.argoproj.io~1hook" if {
	object.get(_annotations, "argocd.argoproj.io/hook", null) != null
} else := "/metadata/annotations/helm.sh~1hook" if {
	object.get(_annotations, "helm.sh/hook", null) != null
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

# "CustomResourceDefinition widgets.example.com"
_subject := sprintf("%s %s", [_kind, _qualified_name])
