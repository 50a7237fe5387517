# SG304: manifest values that the cluster stores differently and Argo CD's diff does not
# normalise, so the object is OutOfSync after every sync (seed 004, cause 2: server-side defaults
# and rewrites).
#
# Argo CD's default (client-side, three-way) diff already absorbs most of this (gitops-engine
# pkg/diff/diff.go): it re-marshals built-in kinds through their Go types (quantities such as
# "1000m" become "1", empty fields are dropped), applies the Kubernetes defaulting functions to
# both sides (webhook rules[].scope "*", matchPolicy, timeoutSeconds, Service port protocol, HPA
# behavior), removes from a live custom resource every field the last applied manifest did not
# have (CRD-schema defaults), and strips the defaults the API server adds to StatefulSet
# volumeClaimTemplates. None of those is reported here. What remains, each seen again and again in
# public reports:
#  1. a caBundle written in the manifest of a webhook configuration, APIService or CRD conversion
#     webhook whose CA an injector writes (cert-manager.io/inject-ca-from, -from-secret,
#     inject-apiserver-ca, OpenShift service.beta.openshift.io/inject-cabundle): the manifest's
#     value never matches the injected one, and every sync writes it back, breaking TLS to the
#     webhook until the injector runs again (argo-cd#1487; Argo CD's diffing docs use exactly this
#     field as their ignoreDifferences example) — medium;
#  2. an HPA whose spec.metrics has the cpu Utilization metric before another metric: Kubernetes
#     keeps that target in the autoscaling/v1 field targetCPUUtilizationPercentage and lists it
#     last when the HPA is read back in v2 (kubernetes#74099; Argo CD's diffing docs; argo-cd#11328,
#     #17964) — low;
#  3. CustomResourceDefinition fields the API server drops when it stores the CRD (Argo CD does not
#     re-marshal CRDs: apiextensions is not in its scheme): empty lists and maps (shortNames: [],
#     categories: [], required: [], properties: {}), false booleans that are omitted when false
#     (nullable, uniqueItems, x-kubernetes-int-or-string, a version's deprecated), and, from Argo
#     CD 3.0 (argo-cd PR #22230; until 2.14 it was ignored by default), spec.preserveUnknownFields:
#     false — low.
# A field covered by the Application's ignoreDifferences (jsonPointers, jqPathExpressions, and for
# caBundle a cainjector managedFieldsManagers entry) is not reported, except a caBundle without
# RespectIgnoreDifferences=true: the comparison ignores it, but every sync still writes it back.
# When argocd-cm has a resource.customizations.ignoreDifferences entry for the kind (input.argocd
# .config.ignore_differences, paths not known) the finding becomes audit. Manifests and admission
# requests are judged; live objects (audit) already hold the stored form, and hooks are not
# compared.
package syncguard.rules.diff_noise

meta := {
	"id": "SG304",
	"title": "Values the cluster stores differently and Argo CD does not normalise",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD compares the manifest with the object as the cluster stored it. A caBundle a CA injector",
		"overwrites, an HPA metrics list Kubernetes reorders, or CRD fields the API server drops never match:",
		"the Application is OutOfSync after every sync, auto-sync re-applies it in a loop, and for a caBundle each",
		"sync writes the stale value back and breaks the webhook until the injector runs again.",
	]),
	"docs": "docs/rules/SG304.md",
	"kinds": ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService", "CustomResourceDefinition", "HorizontalPodAutoscaler"], # only these kinds can be reported: others skip the rule
}

# ---- 1. caBundle that an injector owns ----

violations contains v if {
	# cheap first tests, implied by _ca_bundles (its kinds) and _injector (whose annotations it
	# reads): most objects have annotations, few are one of these kinds
	input.resource.kind in {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService", "CustomResourceDefinition"}
	is_object(input.resource.metadata.annotations)
	not input.context.source == "audit"
	_judged
	injector := sort(_injectors)[0]
	is_object(injector) # the bytecode VM binds an undefined value instead of failing
	some b in _ca_bundles
	not _covers_with_respect(b.pointer)
	v := _graded(b.pointer, _ca_bundle_finding(injector, b))
}

_ca_bundle_finding(injector, b) := {"msg": msg, "severity": "low"} if {
	_covers(b.pointer)
	msg := sprintf(
		"%s sets %s while %s has %s write it: ignoreDifferences keeps Argo CD from reporting the difference, but without RespectIgnoreDifferences=true every sync still writes the manifest's %s back over the injected CA, and calls to the webhook fail TLS verification until the injector runs again. Fix: remove caBundle from the manifest (a field the manifest never sets is left to the injector), or add RespectIgnoreDifferences=true to the Application's syncOptions.",
		[_subject, b.where, injector.annotation, injector.name, _value_word(b.value)],
	)
} else := {"msg": msg, "severity": "medium"} if {
	msg := sprintf(
		"%s sets %s while %s has %s write it: Argo CD compares the manifest's %s with the injected CA, reports the object OutOfSync after every sync, and every sync (auto-sync does it in a loop) writes the manifest's value back, so calls to the webhook fail TLS verification until the injector runs again (argo-cd#1487). Fix: remove caBundle from the manifest (a field the manifest never sets is left to the injector); or ignore it with ignoreDifferences (jqPathExpressions: %s) together with RespectIgnoreDifferences=true.",
		[_subject, b.where, injector.annotation, injector.name, _value_word(b.value), b.jq],
	)
}

_injectors contains {"annotation": key, "name": "cert-manager's cainjector"} if {
	some key in ["cert-manager.io/inject-ca-from", "cert-manager.io/inject-ca-from-secret"]
	value := object.get(_annotations, key, "")
	is_string(value)
	value != ""
}

_injectors contains {"annotation": "cert-manager.io/inject-apiserver-ca", "name": "cert-manager's cainjector"} if {
	object.get(_annotations, "cert-manager.io/inject-apiserver-ca", "") == "true"
}

_injectors contains {"annotation": "service.beta.openshift.io/inject-cabundle", "name": "OpenShift's service CA operator"} if {
	object.get(_annotations, "service.beta.openshift.io/inject-cabundle", "") == "true"
}

_ca_bundles contains {"pointer": sprintf("/webhooks/%d/clientConfig/caBundle", [i]), "where": sprintf("webhooks[%d].clientConfig.caBundle", [i]), "jq": ".webhooks[]?.clientConfig.caBundle", "value": value} if {
	_group == "admissionregistration.k8s.io"
	_kind in {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}
	webhooks := object.get(_resource, "webhooks", [])
	is_array(webhooks)
	some i, webhook in webhooks
	is_object(webhook)
	value := object.get(webhook, ["clientConfig", "caBundle"], null)
	is_string(value)
}

_ca_bundles contains {"pointer": "/spec/caBundle", "where": "spec.caBundle", "jq": ".spec.caBundle", "value": value} if {
	_group == "apiregistration.k8s.io"
	_kind == "APIService"
	value := object.get(_spec, "caBundle", null)
	is_string(value)
}

_ca_bundles contains {"pointer": concat("", ["/", concat("/", path)]), "where": concat(".", path), "jq": concat("", [".", concat(".", path)]), "value": value} if {
	_group == "apiextensions.k8s.io"
	_kind == "CustomResourceDefinition"
	some path in [
		["spec", "conversion", "webhook", "clientConfig", "caBundle"], # v1
		["spec", "conversion", "webhookClientConfig", "caBundle"], # v1beta1
	]
	value := object.get(_resource, path, null)
	is_string(value)
}

_value_word(value) := "empty caBundle" if value == ""

else := "caBundle"

# ignoreDifferences on the caBundle, and the sync leaves it alone too.
_covers_with_respect(pointer) if {
	_covers(pointer)
	_respects_ignore_differences
}

# ---- 1b. fields a controller fills at run time: an empty caBundle, a flipped failurePolicy ----

# A webhook served from inside the cluster with caBundle: "" and no injector annotation: the API
# server cannot verify the webhook's certificate until something writes the CA, so the chart's own
# controller does (kyverno, gatekeeper, keda and others patch their webhook configurations at
# start). The manifest's "" and the written CA then differ.
violations contains v if {
	input.resource.kind in {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} # cheap first test
	not input.context.source == "audit"
	_judged
	count(_injectors) == 0
	webhooks := object.get(_resource, "webhooks", [])
	is_array(webhooks)
	some i, webhook in webhooks
	is_object(webhook)
	object.get(webhook, ["clientConfig", "caBundle"], null) == ""
	is_object(object.get(webhook, ["clientConfig", "service"], null))
	pointer := sprintf("/webhooks/%d/clientConfig/caBundle", [i])
	not _covers(pointer)
	v := _graded(pointer, {"severity": "medium", "msg": sprintf(
		"%s declares webhooks[%d].clientConfig.caBundle as \"\" for a webhook served by Service %s, and names no CA injector: the webhook can only work once something writes its CA here at run time (charts whose controller manages its own webhook certificate do exactly that). When it does, Argo CD compares the manifest's empty value with the written CA and reports the object OutOfSync after every sync; with self-heal it keeps re-applying it. Fix: leave caBundle out of the manifest (a field the manifest never sets is left to the writer), or ignore it with ignoreDifferences (jqPathExpressions: .webhooks[]?.clientConfig.caBundle).",
		[_subject, i, _service_name(webhook)],
	)})
}

_service_name(webhook) := sprintf("%s/%s", [ns, name]) if {
	ns := object.get(webhook, ["clientConfig", "service", "namespace"], "")
	name := object.get(webhook, ["clientConfig", "service", "name"], "")
}

# Controllers known to rewrite a declared field of their own webhook configuration after they
# start. Istio: istiod switches its validating webhook from failurePolicy Ignore to Fail once it
# is ready (istio.io "Argo CD" integration notes ask for ignoreDifferences on
# .webhooks[]?.failurePolicy of istiod-default-validator).
_runtime_writers := [{
	"controller": "istiod",
	"kind": "ValidatingWebhookConfiguration",
	"label": "istio.io/rev",
	"field": "failurePolicy",
	"declared": "Ignore",
	"written": "Fail",
}]

violations contains v if {
	input.resource.kind == "ValidatingWebhookConfiguration" # cheap first test
	not input.context.source == "audit"
	_judged
	some writer in _runtime_writers
	writer.kind == _kind
	labels := object.get(_resource, ["metadata", "labels"], {})
	is_object(labels)
	object.get(labels, writer.label, null) != null
	webhooks := object.get(_resource, "webhooks", [])
	is_array(webhooks)
	some i, webhook in webhooks
	is_object(webhook)
	object.get(webhook, writer.field, null) == writer.declared
	pointer := sprintf("/webhooks/%d/%s", [i, writer.field])
	not _covers(pointer)
	v := _graded(pointer, {"severity": "medium", "msg": sprintf(
		"%s declares webhooks[%d].%s: %s, which %s rewrites to %s once it is running: Argo CD compares the two and reports the object OutOfSync after every sync, and with self-heal every sync sets it back to %s until %s rewrites it again. Fix: ignore it with ignoreDifferences (jqPathExpressions: .webhooks[]?.%s) together with RespectIgnoreDifferences=true.",
		[_subject, i, writer.field, writer.declared, writer.controller, writer.written, writer.declared, writer.controller, writer.field],
	)})
}

# ---- 2. HPA metrics in an order Kubernetes does not keep ----

violations contains v if {
	# cheap first tests, implied by _cpu_metric_index
	input.resource.kind == "HorizontalPodAutoscaler"
	is_array(input.resource.spec.metrics)
	not input.context.source == "audit"
	_judged
	i := _cpu_metric_index
	is_number(i) # the bytecode VM binds an undefined value instead of failing
	pointer := sprintf("/spec/metrics/%d", [i])
	not _covers(pointer)
	msg := sprintf(
		"%s lists the cpu Utilization metric at spec.metrics[%d], before %s: Kubernetes keeps that target in the autoscaling/v1 field targetCPUUtilizationPercentage and, when the HPA is read back as %s, lists it after the other metrics (kubernetes#74099), so the live spec.metrics never has this order. Argo CD compares the list in order: the HPA is OutOfSync after every sync and auto-sync re-applies it in a loop (Argo CD's diffing docs). Fix: move the cpu Utilization metric to the end of spec.metrics.",
		[_subject, i, _metrics_after(i), _api_version],
	)
	v := _graded(pointer, {"msg": msg, "severity": "low"})
}

_cpu_metric_index := i if {
	_group == "autoscaling"
	_api_version in {"autoscaling/v2", "autoscaling/v2beta2", "autoscaling/v2beta1"}
	metrics := _array(_spec, "metrics")
	count(metrics) > 1
	indices := [j | some j, m in metrics; j < count(metrics) - 1; _cpu_utilization(m)]
	count(indices) > 0
	i := indices[0]
}

# v2 and v2beta2: target.type Utilization; v2beta1: targetAverageUtilization.
_cpu_utilization(m) if {
	is_object(m)
	m.type == "Resource"
	m.resource.name == "cpu"
	is_number(m.resource.target.averageUtilization)
}

_cpu_utilization(m) if {
	is_object(m)
	m.type == "Resource"
	m.resource.name == "cpu"
	is_number(m.resource.targetAverageUtilization)
}

_metrics_after(i) := phrase if {
	n := (count(_array(_spec, "metrics")) - i) - 1
	n > 1
	phrase := sprintf("%d other metrics", [n])
} else := "another metric"

# ---- 3. CRD fields the API server drops ----

violations contains v if {
	# cheap first tests, implied by _crd
	input.resource.kind == "CustomResourceDefinition"
	not input.context.source == "audit"
	_judged
	_crd
	some pointer, d in _dropped_fields
	not _covers(pointer)
	msg := sprintf(
		"%s sets %s, which the API server drops when it stores the CRD (%s): Argo CD does not normalise CustomResourceDefinitions, compares the manifest with the stored CRD, and reports it OutOfSync after every sync; auto-sync re-applies it in a loop. Fix: remove %s from the manifest, or ignore %s with ignoreDifferences.",
		[_subject, d.what, d.why, d.remove, pointer],
	)
	v := _graded(pointer, {"msg": msg, "severity": "low"})
}

# From Argo CD 3.0, unless argocd-cm resource.compareoptions sets ignoreResourceStatusField: crd.
_dropped_fields[pointer] := {
	"what": "spec.preserveUnknownFields: false",
	"why": "false is the default and is not stored; until Argo CD 2.14 this field was ignored by default, from 3.0 it is compared unless argocd-cm resource.compareoptions sets ignoreResourceStatusField: crd (argo-cd PR #22230)",
	"remove": "spec.preserveUnknownFields",
} if {
	_release >= 300
	_spec.preserveUnknownFields == false
	pointer := "/spec/preserveUnknownFields"
}

_dropped_fields[pointer] := {
	"what": sprintf("spec.names.%s: []", [key]),
	"why": "an empty list is not stored",
	"remove": "the empty list",
} if {
	names := object.get(_spec, "names", {})
	is_object(names)
	some key, value in names
	value == []
	pointer := sprintf("/spec/names/%s", [key])
}

_dropped_fields[pointer] := {
	"what": sprintf("spec.versions[%d].%s: %s", [i, key, _json(value)]),
	"why": "an empty list, or a false deprecated, is not stored",
	"remove": "it",
} if {
	some i, version in _array(_spec, "versions")
	is_object(version)
	some key, value in version
	_dropped_version_field(key, value)
	pointer := sprintf("/spec/versions/%d/%s", [i, key])
}

_dropped_version_field(_, value) if value == []

_dropped_version_field("deprecated", value) if value == false

# Schema keywords that are omitted when empty or false, found in the serialised schema: one
# finding per version, naming the keywords. (A default or example value that itself holds such a
# key is counted too; Rego cannot walk the schema tree in regorus.)
_dropped_fields[pointer] := {
	"what": sprintf("%s in spec.versions[%d].schema.openAPIV3Schema", [concat(", ", keywords), i]),
	"why": "the schema keeps only non-empty lists and maps and true flags",
	"remove": "them",
} if {
	some i, version in _array(_spec, "versions")
	is_object(version)
	schema := object.get(version, ["schema", "openAPIV3Schema"], null)
	is_object(schema)
	serialised := json.marshal(schema)
	keywords := sort([k | some k in {trim(split(m, ":")[0], "\"") | some m in regex.find_n(_dropped_keyword_pattern, serialised, -1)}])
	count(keywords) > 0
	pointer := sprintf("/spec/versions/%d/schema/openAPIV3Schema", [i])
}

_dropped_keyword_pattern := `"(required|enum|allOf|oneOf|anyOf|x-kubernetes-list-map-keys|x-kubernetes-validations)":\s*\[\]|"(properties|patternProperties|definitions|dependencies)":\s*\{\}|"(nullable|uniqueItems|exclusiveMaximum|exclusiveMinimum|x-kubernetes-embedded-resource|x-kubernetes-int-or-string)":\s*false`

_crd if {
	_group == "apiextensions.k8s.io"
	_api_version == "apiextensions.k8s.io/v1"
}

_json(value) := "[]" if value == []

else := "false"

# ---- ignoreDifferences ----

# The Application's ignoreDifferences, or (Argo CD 3.6 and later) the object's own
# argocd.argoproj.io/ignore-differences annotation, whose jsonPointers Argo CD adds to the
# Application's for this object (input.own_ignore_differences; the release table's
# per_resource_ignore_differences, docs/argocd-versions.md).
_covers(pointer) if _app_covers(pointer)

_covers(pointer) if _own_covers(pointer)

_own_covers(pointer) if {
	_reads_own_ignore_differences
	some p in _array(input, "own_ignore_differences")
	is_string(p)
	_pointer_within(trim_suffix(p, "/"), pointer)
}

_reads_own_ignore_differences if {
	argocd := object.get(input, "argocd", {})
	is_object(argocd)
	behaviours := object.get(argocd, "behaviours", {})
	is_object(behaviours)
	object.get(behaviours, "per_resource_ignore_differences", true) == true
}

_reads_own_ignore_differences if {
	argocd := object.get(input, "argocd", {})
	not is_object(argocd)
}

# An Application entry for this object that covers the pointer.
_app_covers(pointer) if {
	some entry in _array(_app, "ignore_differences")
	is_object(entry)
	_glob(_str(entry, "group"), _group)
	_glob(_str(entry, "kind"), _kind)
	_str(entry, "name") in {"", _name}
	_str(entry, "namespace") in {"", _namespace}
	_entry_covers(entry, pointer)
}

_entry_covers(entry, pointer) if {
	some p in _array(entry, "jsonPointers")
	is_string(p)
	_pointer_within(trim_suffix(p, "/"), pointer)
}

_entry_covers(entry, pointer) if {
	some expression in _array(entry, "jqPathExpressions")
	is_string(expression)
	jq := _jq_form(expression)
	target := _pointer_jq(pointer)
	_jq_within(jq, target)
}

# The injected caBundle is written by cert-manager's cainjector field manager.
_entry_covers(entry, pointer) if {
	endswith(pointer, "/caBundle")
	some manager in _array(entry, "managedFieldsManagers")
	is_string(manager)
	contains(manager, "cainjector")
}

_pointer_within(p, pointer) if p == pointer

_pointer_within(p, pointer) if {
	p != ""
	startswith(pointer, concat("", [p, "/"]))
}

_jq_within(jq, target) if jq == target

_jq_within(jq, target) if startswith(target, concat("", [jq, "."]))

_jq_within(jq, target) if startswith(target, concat("", [jq, "["]))

# ".webhooks[0]?.clientConfig.caBundle" -> ".webhooks[].clientConfig.caBundle"
_jq_form(expression) := regex.replace(replace(replace(expression, " ", ""), "?", ""), `\[[0-9]+\]`, "[]")

# "/webhooks/0/clientConfig/caBundle" -> ".webhooks[].clientConfig.caBundle"
_pointer_jq(pointer) := concat("", [piece |
	some i, segment in split(pointer, "/")
	i > 0
	piece := _jq_piece(segment)
])

_jq_piece(segment) := "[]" if regex.match(`^[0-9]+$`, segment)

else := concat("", [".", replace(replace(segment, "~1", "/"), "~0", "~")])

_respects_ignore_differences if {
	options := object.get(_app, "sync_options", {})
	is_object(options)
	"RespectIgnoreDifferences=true" in _array(options, "items")
}

# argocd-cm resource.customizations.ignoreDifferences for this kind (or .all): its paths are not in
# the input, so the finding is recorded (audit) with a note instead of being dropped.
_config_ignores := sort(_config_ignore_keys)[0] if {
	count(_config_ignore_keys) > 0
} else := "*" if {
	"*" in _config_array("ignore_differences")
}

_config_ignore_keys := {key |
	some key in _config_array("ignore_differences")
	is_string(key)
	key != "*"
	_glob(key, concat("/", [_group, _kind]))
}

_graded(pointer, f) := {"msg": msg, "path": pointer, "severity": "low", "action": "audit"} if {
	key := _config_ignores
	is_string(key) # the bytecode VM binds an undefined value instead of failing
	msg := sprintf("%s Note: argocd-cm has resource.customizations.ignoreDifferences for %s; if it covers %s, Argo CD does not report this difference.", [f.msg, _config_key_name(key), pointer])
} else := {"msg": f.msg, "path": pointer, "severity": f.severity}

_config_key_name(key) := "all kinds (.all)" if key == "*"

else := key

# ---- context ----

# Objects Argo CD applies and compares: not hooks, not objects it never applies, not deletions.
_judged if {
	_applies
	object.get(_sync, "is_hook", false) != true
	not _never_applied
}

_never_applied if {
	is_object(input.sync)
	count(_array(_sync, "phases")) == 0
}

# "group/kind" or Argo CD's own globs ("*", "*.example.com"); only * is understood here.
_glob(pattern, text) if pattern == text

_glob(pattern, text) if {
	contains(pattern, "*")
	regex.match(`^[A-Za-z0-9.*/_-]+$`, pattern)
	regex.match(concat("", ["^", replace(replace(pattern, ".", `\.`), "*", ".*"), "$"]), text)
}

# input.argocd.release (major * 100 + minor); the newest release when absent.
default _release := 306

_release := r if {
	r := input.argocd.release
	is_number(r)
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

_api_version := _str(_resource, "apiVersion")

_group := g if {
	parts := split(_api_version, "/")
	count(parts) == 2
	g := parts[0]
} else := ""

default _annotations := {}

_annotations := a if {
	a := object.get(_metadata, "annotations", {})
	is_object(a)
}

_array(obj, key) := v if {
	v := object.get(obj, key, [])
	is_array(v)
} else := []

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

default _kind := "object"

_kind := k if {
	k := _str(_resource, "kind")
	k != ""
}

# "MutatingWebhookConfiguration shop-injector"
_subject := sprintf("%s %s", [_kind, _qualified_name])
