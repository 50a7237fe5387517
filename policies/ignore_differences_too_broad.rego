# SG303: an Application's ignoreDifferences that hides too much, hides nothing, or is undone by
# every automated sync.
#
# ignoreDifferences tells Argo CD which differences between Git and the cluster do not count.
# Seed 004 recommends it for fields a controller rewrites (HPA replicas, injected sidecars,
# webhook caBundles) and warns against ignoring whole blocks: an entry that ignores /spec or
# every annotation makes the Application report Synced while the cluster runs something else,
# and auto-sync never corrects it. Findings, each pointing at the offending entry:
#  1. a jsonPointer or jqPathExpression that covers a whole block (the object, /spec, /metadata,
#     all annotations or labels, the pod template or its containers, a Secret's or ConfigMap's
#     data);
#  2. an entry that can never match anything: no kind (Argo CD globs kind, and an empty pattern
#     matches nothing), or a kind of a named API group with the group left out (an empty group
#     is the core group, matched exactly) — the drift it was written for still shows;
#  3. ignoreDifferences with automated sync but without RespectIgnoreDifferences=true:
#     ignoreDifferences affects only the comparison, each sync still applies the ignored fields
#     from Git (spec §10-22, argo-cd#4912), so the controller and Argo CD keep overwriting each
#     other — the loop ignoreDifferences was meant to stop.
# Checked on argoproj.io Applications (spec) and ApplicationSets (spec.template.spec).
package syncguard.rules.ignore_differences_too_broad

meta := {
	"id": "SG303",
	"title": "ignoreDifferences too broad, ineffective, or without RespectIgnoreDifferences",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"ignoreDifferences that covers a whole block (/spec, every annotation, a Secret's data) hides real drift:",
		"the Application says Synced while the cluster differs from Git. An entry without kind, or without the",
		"group of its kind, matches nothing. And without RespectIgnoreDifferences=true every automated sync still",
		"applies the ignored fields, so the fight with the controller goes on.",
	]),
	"docs": "docs/rules/SG303.md",
	"kinds": ["Application", "ApplicationSet"], # only these kinds can be reported: others skip the rule
}

# 1a. A JSON pointer that covers a whole block.
violations contains {"msg": msg, "path": path} if {
	input.resource.kind in {"Application", "ApplicationSet"} # cheap first test: _entries is [] unless _application
	some i, entry in _entries
	is_object(entry)
	some j, pointer in _array(entry, "jsonPointers")
	is_string(pointer)
	what := _broad[pointer]
	path := sprintf("%s/%d/jsonPointers/%d", [_entries_pointer, i, j])
	msg := _broad_msg(i, entry, what, pointer)
}

# 1b. A jq path expression that covers a whole block.
violations contains {"msg": msg, "path": path} if {
	input.resource.kind in {"Application", "ApplicationSet"} # cheap first test: _entries is [] unless _application
	some i, entry in _entries
	is_object(entry)
	some j, expression in _array(entry, "jqPathExpressions")
	is_string(expression)
	what := _broad[_jq_pointer(expression)]
	path := sprintf("%s/%d/jqPathExpressions/%d", [_entries_pointer, i, j])
	msg := _broad_msg(i, entry, what, trim_space(expression))
}

# 2a. No kind: matches nothing.
violations contains {"msg": msg, "path": path} if {
	input.resource.kind in {"Application", "ApplicationSet"} # cheap first test: _entries is [] unless _application
	some i, entry in _entries
	is_object(entry)
	_str(entry, "kind") == ""
	path := sprintf("%s/%d", [_entries_pointer, i])
	msg := sprintf(
		"%s has an ignoreDifferences entry without a kind: Argo CD matches kind as a glob and an empty one matches no resource, so %s[%d] never applies and the drift it was written for still shows. Set kind and group (\"*\" matches every one).",
		[_subject, _entries_field, i],
	)
}

# 2b. A kind of a named group, with the group left out.
violations contains {"msg": msg, "path": path} if {
	input.resource.kind in {"Application", "ApplicationSet"} # cheap first test: _entries is [] unless _application
	some i, entry in _entries
	is_object(entry)
	kind := _str(entry, "kind")
	kind != ""
	not contains(kind, "*")
	not kind in _core_kinds
	_str(entry, "group") == ""
	path := sprintf("%s/%d", [_entries_pointer, i])
	msg := sprintf(
		"%s has an ignoreDifferences entry for kind %s without a group: Argo CD matches the group as a glob and an empty one matches only the core API group, so %s[%d] never matches a %s and the drift it was written for still shows. %s",
		[_subject, kind, _entries_field, i, kind, _group_fix(kind)],
	)
}

# 3. Automated sync without RespectIgnoreDifferences=true.
violations contains {"msg": msg, "path": _options_path} if {
	input.resource.kind in {"Application", "ApplicationSet"} # cheap first test: _entries is [] unless _application
	count(_entries) > 0
	_automated
	not "RespectIgnoreDifferences=true" in _sync_options
	msg := sprintf(
		"%s is auto-synced with ignoreDifferences but without RespectIgnoreDifferences=true: ignoreDifferences only changes the comparison, and every automated sync still applies the ignored fields from Git, overwriting what the controller set (replica counts, injected caBundles), so the two keep fighting (argo-cd#4912). Add RespectIgnoreDifferences=true to %s.syncPolicy.syncOptions.",
		[_subject, _base_field],
	)
}

_broad_msg(i, entry, what, written) := sprintf(
	"%s ignores %s of %s: %s[%d] (%s) hides every difference there, so Argo CD reports Synced while the cluster differs from Git, and auto-sync never corrects it. Ignore only the field that drifts (one annotation key, /spec/replicas, a webhook's caBundle), or use managedFieldsManagers to ignore only what the controller that changes it owns.",
	[_subject, what, _entry_target(entry), _entries_field, i, written],
)

# Whole blocks, by JSON pointer.
_broad := {
	"": "the whole object",
	"/": "the whole object",
	"/spec": "the whole spec",
	"/metadata": "all metadata",
	"/metadata/annotations": "every annotation",
	"/metadata/labels": "every label",
	"/spec/template": "the whole pod template",
	"/spec/template/spec": "the whole pod spec",
	"/spec/template/metadata": "all pod template metadata",
	"/spec/template/metadata/annotations": "every pod template annotation",
	"/spec/template/metadata/labels": "every pod template label",
	"/spec/template/spec/containers": "every container (images included)",
	"/spec/template/spec/initContainers": "every init container (images included)",
	"/data": "all the data",
	"/stringData": "all the data",
	"/binaryData": "all the data",
}

# ".spec.template.metadata.annotations" -> "/spec/template/metadata/annotations"; "." -> "";
# anything that is not a plain field path (a select, a key with a dot) matches no block.
_jq_pointer(expression) := "" if {
	trim_space(expression) == "."
} else := replace(path, ".", "/") if {
	path := trim_suffix(trim_space(expression), "[]")
	regex.match(`^(\.[A-Za-z][A-Za-z0-9_]*)+$`, path)
}

# "apps/Deployment web", "every resource"
_entry_target(entry) := "every resource" if {
	_str(entry, "kind") == "*"
	_str(entry, "group") == "*"
	_str(entry, "name") == ""
} else := concat(" ", [_group_kind(entry), name]) if {
	name := _str(entry, "name")
	name != ""
} else := _group_kind(entry)

_group_kind(entry) := _str(entry, "kind") if _str(entry, "group") == ""

else := concat("/", [_str(entry, "group"), _str(entry, "kind")])

_group_fix(kind) := sprintf("Add group: %s.", [_known_groups[kind]]) if {
	_known_groups[kind]
} else := sprintf("Add the API group of %s (group: \"*\" matches any).", [kind])

_core_kinds := {
	"Pod", "Service", "ConfigMap", "Secret", "ServiceAccount", "PersistentVolumeClaim", "PersistentVolume",
	"Namespace", "Endpoints", "Event", "LimitRange", "ResourceQuota", "ReplicationController", "Node",
	"PodTemplate", "Binding", "ComponentStatus",
}

_known_groups := {
	"Deployment": "apps", "StatefulSet": "apps", "DaemonSet": "apps", "ReplicaSet": "apps",
	"ControllerRevision": "apps", "Job": "batch", "CronJob": "batch",
	"Ingress": "networking.k8s.io", "IngressClass": "networking.k8s.io", "NetworkPolicy": "networking.k8s.io",
	"HorizontalPodAutoscaler": "autoscaling", "PodDisruptionBudget": "policy",
	"Role": "rbac.authorization.k8s.io", "RoleBinding": "rbac.authorization.k8s.io",
	"ClusterRole": "rbac.authorization.k8s.io", "ClusterRoleBinding": "rbac.authorization.k8s.io",
	"MutatingWebhookConfiguration": "admissionregistration.k8s.io",
	"ValidatingWebhookConfiguration": "admissionregistration.k8s.io",
	"CustomResourceDefinition": "apiextensions.k8s.io", "APIService": "apiregistration.k8s.io",
	"StorageClass": "storage.k8s.io", "PriorityClass": "scheduling.k8s.io",
	"Application": "argoproj.io", "AppProject": "argoproj.io", "ApplicationSet": "argoproj.io", "Rollout": "argoproj.io",
	"ExternalSecret": "external-secrets.io", "ScaledObject": "keda.sh", "Certificate": "cert-manager.io",
}

# ---- where the Application spec is ----

_application if {
	_applies
	_resource.kind in {"Application", "ApplicationSet"}
	startswith(_str(_resource, "apiVersion"), "argoproj.io/")
}

_base := ["spec"] if _resource.kind == "Application"

else := ["spec", "template", "spec"]

_base_field := concat(".", _base)

_base_pointer := concat("", ["/", concat("/", _base)])

_entries_pointer := concat("/", [_base_pointer, "ignoreDifferences"])

_entries_field := concat(".", [_base_field, "ignoreDifferences"])

default _app_spec := {}

_app_spec := s if {
	_application
	s := object.get(_resource, _base, {})
	is_object(s)
}

# Kept whole (malformed items included) so that indices match the manifest.
_entries := _array(_app_spec, "ignoreDifferences")

default _sync_policy := {}

_sync_policy := p if {
	p := object.get(_app_spec, "syncPolicy", {})
	is_object(p)
}

_automated if {
	automated := object.get(_sync_policy, "automated", null)
	is_object(automated)
	object.get(automated, "enabled", true) != false
}

_sync_options := _array(_sync_policy, "syncOptions")

_options_path := concat("/", [_base_pointer, "syncPolicy/syncOptions"]) if {
	is_array(object.get(_sync_policy, "syncOptions", null))
} else := concat("/", [_base_pointer, "syncPolicy/automated"])

_array(obj, key) := v if {
	is_object(obj)
	v := object.get(obj, key, [])
	is_array(v)
} else := []

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

_str(obj, key) := v if {
	is_object(obj)
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

# "Application argocd/shop"
_subject := sprintf("%s %s", [_kind, _qualified_name])
