# SG118: a PreDelete/PostDelete hook that blocks the Application's deletion or never runs.
#
# Delete hooks are run by the Application controller (controller/hook.go), not the sync engine:
# on each pass over a deleting Application it creates the delete hooks it cannot find live (by
# kind, namespace and name), waits while any is Progressing, and (from 3.3) fails the pass and
# deletes the failed hooks when one is Degraded. PostDelete hooks exist from v2.10.0
# (argo-cd#16595), PreDelete hooks from v3.3.0 (argo-cd#22288). Four findings:
#  1. a hook kind without a health check (ServiceAccount, Role, ConfigMap ...) on 2.10/2.11: the
#     controller dereferences the missing health status and panics on every pass, so the
#     Application stays Deleting (argo-cd#18270, #17191; fixed in v2.12.0 by argo-cd#18767);
#  2. a cluster-scoped hook before v3.4.0: the controller gives every hook the destination
#     namespace before it looks for it, never finds the live (namespace-less) object, creates it
#     again and fails with "already exists" (argo-cd#21637; v3.4.0 skips existing hooks,
#     argo-cd#26724). Derived from the code; the report shows the symptom with a ClusterRole;
#  3. a hook that needs an object which is gone when it runs: PostDelete runs after every
#     resource of the Application is deleted, so anything but another PostDelete hook is gone; a
#     PreDelete hook runs first, so only PostDelete-only objects and sync hooks deleted after
#     each successful sync (HookSucceeded) are missing (argo-cd#26404 shows the latter);
#  4. a delete hook value among several values before v3.3.3: the controller matched the
#     annotation exactly, so "pre-install,pre-delete" is never run at deletion (argo-cd#26404,
#     fixed by argo-cd#26420).
# A delete hook that hangs or restarts for ever is SG101/SG103/SG104 (they apply to every hook);
# generateName on a delete hook is SG111; a TTL on one is SG113.
package syncguard.rules.delete_hook_blocks

meta := {
	"id": "SG118",
	"title": "Delete hook that blocks or never runs at Application deletion",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD runs PreDelete and PostDelete hooks while it deletes an Application and keeps the Application",
		"in Deleting until they are done. A hook that needs an object the deletion has already removed, a hook",
		"kind the controller version mishandles, or a hook value the controller does not recognise leaves the",
		"Application stuck in Deleting or the clean-up never run.",
	]),
	"docs": "docs/rules/SG118.md",
}

# 1. No health check, PostDelete, 2.10 and 2.11.
violations contains {"msg": msg, "path": _hook_path, "severity": "high"} if {
	# cheap first tests, implied by "PostDelete" in _delete_types below
	input.sync.hook_types != []
	_number < 21200
	"PostDelete" in _delete_types
	not _cluster_scoped
	_no_health_check
	msg := sprintf(
		"%s is a PostDelete hook of a kind without a health check: while the Application is deleted, Argo CD %s reads the health of every live PostDelete hook, dereferences the missing status of this one and panics on every attempt, so the Application stays Deleting for ever (argo-cd#18270, argo-cd#17191; fixed in v2.12.0 by argo-cd#18767). Upgrade to Argo CD 2.12 or later, or take %s out of the delete hooks (a normal resource with argocd.argoproj.io/sync-options: Delete=false survives the deletion for the hook to use).",
		[_subject, _version, _display_name],
	)
}

# 2. Cluster-scoped delete hooks before 3.4.0.
violations contains {"msg": msg, "path": _hook_path, "severity": "high"} if {
	# cheap first tests, implied by count(_delete_types) > 0 below
	input.sync.hook_types != []
	_number < 30400
	count(_delete_types) > 0
	_cluster_scoped
	msg := sprintf(
		"%s is a %s hook of a cluster-scoped kind: Argo CD %s gives every delete hook the Application's destination namespace before it looks for the live one, so it never finds the %s it created, creates it again on the next pass, gets \"already exists\" and keeps the Application in Deleting with that error (argo-cd#21637; from v3.4.0 an existing hook is skipped, argo-cd#26724). Use a namespaced kind for the hook (a Role and RoleBinding instead of a ClusterRole and ClusterRoleBinding), or upgrade to Argo CD 3.4.",
		[_subject, concat("/", _delete_types), _version, _kind],
	)
}

# 3. A needed object that is gone when the hook runs.
violations contains {"msg": msg, "path": via, "severity": gone.severity} if {
	# cheap first tests, implied by count(_delete_types) > 0 and a reference below
	input.sync.hook_types != []
	input.refs != []
	some t in _delete_types
	some ref in _refs
	is_object(ref)
	target := object.get(ref, "target", {})
	is_object(target)
	_required(ref, target)
	gone := _gone(t, ref, target)
	via := _str(ref, "via")
	msg := sprintf(
		"%s, a %s hook, needs %s %s (%s), which %s: %s. %s",
		[_subject, t, _str(ref, "kind"), _ref_name(ref), _str(ref, "role"), gone.why, _consequence(ref), gone.fix],
	)
}

# 4. A delete hook value Argo CD does not recognise among several values, before 3.3.3.
violations contains {"msg": msg, "path": path, "severity": "medium"} if {
	# cheap first tests, implied by _active(t) below
	input.sync.hook_types != []
	_number < 30303
	_applies
	some t in _list("hook_types")
	_active(t)
	not _recognised(t)
	some key in ["argocd.argoproj.io/hook", "helm.sh/hook"]
	_exact_values[t][key] in _csv(_annotation(key))
	path := sprintf("/metadata/annotations/%s", [replace(key, "/", "~1")])
	msg := sprintf(
		"%s has %s \"%s\": Argo CD %s runs a %s hook only when that annotation is exactly \"%s\" (a list is recognised from v3.3.3, argo-cd#26420), so nothing creates this %s when the Application is deleted%s. Put the %s hook in an object of its own whose annotation is that single value, or upgrade to Argo CD 3.3.3 or later.",
		[_subject, key, _annotation(key), _version, t, _exact_values[t][key], _kind, _sync_only(t), t],
	)
}

# ---- 1 and 2: what the object is ----

# input.health_check: "builtin" | "bundled-lua" | "custom" | null (none). An older syncguard
# leaves it out; then only the common kinds that certainly have none count.
_no_health_check if object.get(input, "health_check", "absent") == null

_no_health_check if {
	object.get(input, "health_check", "absent") == "absent"
	sprintf("%s/%s", [_group, _kind]) in _passive_kinds
}

_passive_kinds := {
	"/ServiceAccount", "/ConfigMap", "/Secret", "/LimitRange", "/ResourceQuota",
	"rbac.authorization.k8s.io/Role", "rbac.authorization.k8s.io/RoleBinding",
	"rbac.authorization.k8s.io/ClusterRole", "rbac.authorization.k8s.io/ClusterRoleBinding",
	"networking.k8s.io/NetworkPolicy",
}

# Built-in cluster-scoped kinds (custom cluster-scoped kinds are not known here).
_cluster_scoped if sprintf("%s/%s", [_group, _kind]) in _cluster_scoped_kinds

_cluster_scoped_kinds := {
	"/Namespace", "/PersistentVolume",
	"rbac.authorization.k8s.io/ClusterRole", "rbac.authorization.k8s.io/ClusterRoleBinding",
	"apiextensions.k8s.io/CustomResourceDefinition", "apiregistration.k8s.io/APIService",
	"storage.k8s.io/StorageClass", "storage.k8s.io/CSIDriver", "scheduling.k8s.io/PriorityClass",
	"networking.k8s.io/IngressClass", "node.k8s.io/RuntimeClass", "policy/PodSecurityPolicy",
	"admissionregistration.k8s.io/ValidatingWebhookConfiguration",
	"admissionregistration.k8s.io/MutatingWebhookConfiguration",
	"admissionregistration.k8s.io/ValidatingAdmissionPolicy",
	"admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
}

default _group := ""

_group := g if {
	parts := split(_str(_resource, "apiVersion"), "/")
	count(parts) == 2
	g := parts[0]
}

# ---- 3: references whose target is gone ----

_refs := r if {
	r := input.refs
	is_array(r)
} else := []

_required(ref, target) if {
	not object.get(ref, "optional", false) == true
	_str(ref, "role") in {"env", "env_from", "volume", "image_pull_secret", "service_account", "namespace"}
	_str(target, "resolution") in {"in_set", "produced_by"}
}

_target_list(target, key) := v if {
	v := object.get(target, key, [])
	is_array(v)
} else := []

# The target is created by the same delete pass (a delete hook of the same type that this
# release recognises; until v3.3.3 a target with several hook types is taken as a list).
_created_with(t, target) if {
	t in _target_list(target, "hook_types")
	_number >= 30303
}

_created_with(t, target) if {
	_target_list(target, "hook_types") == [t]
}

_ignored_reason(target) := r if {
	i := object.get(target, "ignored", null)
	is_object(i)
	r := object.get(i, "reason", "")
} else := ""

_target_is_hook(target) if object.get(target, "is_hook", false) == true

_succeeded_policy(target) if "HookSucceeded" in _target_list(target, "delete_policies")

# The hook's namespace, a normal resource, is gone before PostDelete hooks are created.
_gone("PostDelete", ref, target) := {
	"severity": "high",
	"why": "is a normal resource of the Application and is deleted, with everything in it, before PostDelete hooks run",
	"fix": "Leave the Namespace out of the Application (CreateNamespace=true, or create it elsewhere), or keep it through the deletion with argocd.argoproj.io/sync-options: Delete=false.",
} if {
	_str(ref, "role") == "namespace"
	_str(target, "resolution") == "in_set"
	not _target_is_hook(target)
	not _never_applied(target)
}

_gone("PostDelete", ref, target) := {
	"severity": "high",
	"why": sprintf("is %s and is deleted with the Application before PostDelete hooks run", [_target_kind_label(target)]),
	"fix": sprintf("Give the hook its own copy, annotated argocd.argoproj.io/hook: PostDelete (under another name if other objects use %s), or keep %s through the deletion with argocd.argoproj.io/sync-options: Delete=false.", [_ref_name(ref), _ref_name(ref)]),
} if {
	not _str(ref, "role") == "namespace"
	_str(target, "resolution") == "in_set"
	not _created_with("PostDelete", target)
	not _never_applied(target)
}

_gone("PostDelete", ref, target) := {
	"severity": "medium",
	"why": sprintf("is produced by %s %s, which is deleted with the Application before PostDelete hooks run (what it produced usually goes with it)", [_str(target, "kind"), _ns_name(target)]),
	"fix": "Give the hook a Secret or ConfigMap of its own, annotated argocd.argoproj.io/hook: PostDelete, or keep the producer through the deletion with argocd.argoproj.io/sync-options: Delete=false.",
} if {
	not _str(ref, "role") == "namespace"
	_str(target, "resolution") == "produced_by"
	not _created_with("PostDelete", target)
}

_gone("PreDelete", ref, target) := {
	"severity": "high",
	"why": "is a PostDelete hook and is created only after the Application's resources are deleted",
	"fix": sprintf("Make %s a PreDelete hook too (argocd.argoproj.io/hook: PreDelete,PostDelete from v3.3.3), or give the PreDelete hook its own copy.", [_ref_name(ref)]),
} if {
	_str(target, "resolution") == "in_set"
	not _created_with("PreDelete", target)
	"PostDelete" in _target_list(target, "hook_types")
	count(_target_list(target, "phases")) == 0
}

_gone("PreDelete", ref, target) := {
	"severity": _predelete_after_sync_severity(target),
	"why": sprintf("is a sync hook with hook-delete-policy HookSucceeded, so it is deleted after every successful sync%s", [_not_recreated(target)]),
	"fix": sprintf("Give the PreDelete hook its own copy of %s, annotated argocd.argoproj.io/hook: PreDelete, or drop HookSucceeded from %s.", [_ref_name(ref), _ref_name(ref)]),
} if {
	_str(target, "resolution") == "in_set"
	not _created_with("PreDelete", target)
	_target_is_hook(target)
	count(_target_list(target, "phases")) > 0
	_succeeded_policy(target)
}

# Objects Argo CD never applies (hook: Skip, an unknown hook value): nothing of this
# Application creates them, at deletion or before.
_gone(t, ref, target) := {
	"severity": "medium",
	"why": "is never applied by Argo CD (argocd.argoproj.io/hook: Skip, or a hook value Argo CD does not know), so it exists only if something else created it",
	"fix": sprintf("Give the hook its own copy annotated argocd.argoproj.io/hook: %s, or make %s a resource Argo CD applies.", [t, _ref_name(ref)]),
} if {
	_str(target, "resolution") == "in_set"
	_never_applied(target)
	not _created_with(t, target)
}

_never_applied(target) if _ignored_reason(target) in {"skip", "garbage-hook"}

_predelete_after_sync_severity(target) := "high" if {
	_number < 30303
	"PreDelete" in _target_list(target, "hook_types")
} else := "medium"

_not_recreated(target) := sprintf(", and Argo CD %s does not create it again for PreDelete because its hook annotation lists several values (argo-cd#26404)", [_version]) if {
	_number < 30303
	"PreDelete" in _target_list(target, "hook_types")
} else := ""

_target_kind_label(target) := sprintf("a %s hook", [concat("/", [t | some t in _target_list(target, "hook_types"); t != "PostDelete"])]) if {
	_target_is_hook(target)
	count([t | some t in _target_list(target, "hook_types"); t != "PostDelete"]) > 0
} else := "a normal resource of the Application"

# What happens to the hook while the deletion runs.
_consequence(ref) := "Argo CD cannot create the hook in a namespace that no longer exists and retries on every pass, so the Application stays Deleting for ever" if {
	_str(ref, "role") == "namespace"
} else := "the hook's pod cannot start, so the hook stays Progressing and Argo CD waits; when a deadline fails it, Argo CD deletes it, reports a DeletionError and creates it again, so the Application never finishes deleting" if {
	_release >= 303
} else := sprintf("the hook's pod cannot start and Argo CD %s waits for it for ever; if activeDeadlineSeconds fails it, this release counts the failed hook as done and finishes the deletion without the clean-up having run", [_version])

_ref_name(ref) := _ns_name(ref)

_ns_name(obj) := sprintf("%s/%s", [ns, _str(obj, "name")]) if {
	ns := _str(obj, "namespace")
	ns != ""
} else := _str(obj, "name")

# ---- 4: delete hook values ----

_exact_values := {
	"PostDelete": {"argocd.argoproj.io/hook": "PostDelete", "helm.sh/hook": "post-delete"},
	"PreDelete": {"argocd.argoproj.io/hook": "PreDelete", "helm.sh/hook": "pre-delete"},
}

_sync_only(_) := sprintf("; it runs only as a %s hook during syncs", [concat("/", _list("phases"))]) if {
	count(_list("phases")) > 0
} else := ""

_csv(s) := [trim_space(x) | some x in split(s, ","); trim_space(x) != ""]

# ---- delete hook types this release runs ----

# PostDelete from 2.10, PreDelete from 3.3.
_active("PostDelete") if _release >= 210

_active("PreDelete") if _release >= 303

# Until v3.3.3 the controller recognises a delete hook only when one of its two annotations is
# exactly the value.
_recognised(_) if _number >= 30303

_recognised(t) if {
	some key, value in _exact_values[t]
	_annotation(key) == value
}

_delete_types := [t | some t in _list("hook_types"); _active(t); _recognised(t); _applies]

_annotation(key) := v if {
	annotations := object.get(_metadata, "annotations", {})
	is_object(annotations)
	v := object.get(annotations, key, "")
	is_string(v)
} else := ""

_hook_path := "/metadata/annotations/argocd.argoproj.io~1hook" if {
	_annotation("argocd.argoproj.io/hook") != ""
} else := "/metadata/annotations/helm.sh~1hook"

# ---- Argo CD release (input.argocd) ----

default _argocd := {}

_argocd := a if {
	a := input.argocd
	is_object(a)
}

# major * 100 + minor; the newest release when absent.
default _release := 306

_release := r if {
	r := _argocd.release
	is_number(r)
}

# major * 10000 + minor * 100 + patch (patch 99 when only "3.2" was given); computed from release
# and patch when an older syncguard leaves the field out.
default _number := 30699

_number := n if {
	n := _argocd.number
	is_number(n)
}

_number := n if {
	not is_number(object.get(_argocd, "number", null))
	r := _argocd.release
	is_number(r)
	n := (r * 100) + _patch
}

# input.argocd.patch, else the third part of input.argocd.version ("v2.14.3", "3.3.0-rc1"), else
# 99 (only "MAJOR.MINOR" given: its newest patch).
default _patch := 99

_patch := p if {
	p := _argocd.patch
	is_number(p)
}

_patch := p if {
	not is_number(object.get(_argocd, "patch", null))
	v := _argocd.version
	is_string(v)
	parts := split(split(trim_prefix(v, "v"), "-")[0], ".")
	count(parts) == 3
	regex.match(`^[0-9]+$`, parts[2])
	p := to_number(parts[2])
}

default _version := "this release"

_version := sprintf("v%s", [v]) if {
	v := _argocd.version
	is_string(v)
	v != ""
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
