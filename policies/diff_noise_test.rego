# Tests for SG304 (policies/diff_noise.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md and the issue-13 facts (input.argocd.config).
package syncguard.rules.diff_noise_test

import data.syncguard.rules.diff_noise as rule

facts := {"phases": ["Sync"], "is_hook": false, "hook_types": [], "wave": 0}

app(ignore, options) := {
	"name": "shop", "destination_namespace": "shop",
	"sync_options": {"items": options, "unknown": []},
	"automated": true, "self_heal": true, "auto_prune": true,
	"ignore_differences": ignore,
}

review(resource) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": facts,
	"app": app([], []),
	"argocd": {"version": "3.4", "major": 3, "minor": 4, "release": 304, "config": {"source": "none", "health_checks": [], "ignore_differences": []}},
	"context": {"source": "check", "dry_run": false},
}

with_app(resource, ignore, options) := object.union(review(resource), {"app": app(ignore, options)})

# ---- 1. caBundle written by an injector ----

# The chart renders an empty caBundle and asks cert-manager to fill it (SparebankenVest
# public-helm-charts#132, actions-runner-controller#614).
injector_webhook := {
	"apiVersion": "admissionregistration.k8s.io/v1",
	"kind": "MutatingWebhookConfiguration",
	"metadata": {"name": "env-injector", "annotations": {"cert-manager.io/inject-ca-from": "shop/env-injector-tls"}},
	"webhooks": [{
		"name": "pods.env-injector.example.com",
		"admissionReviewVersions": ["v1"],
		"sideEffects": "None",
		"clientConfig": {"caBundle": "", "service": {"name": "env-injector", "namespace": "shop", "path": "/pods"}},
		"rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}],
	}],
}

bundle_path := "/webhooks/0/clientConfig/caBundle"

test_an_injected_ca_bundle_in_the_manifest if {
	v := rule.violations with input as review(injector_webhook)
	v == {{
		"msg": concat("", [
			"MutatingWebhookConfiguration env-injector sets webhooks[0].clientConfig.caBundle while cert-manager.io/inject-ca-from has cert-manager's cainjector write it: ",
			"Argo CD compares the manifest's empty caBundle with the injected CA, reports the object OutOfSync after every sync, ",
			"and every sync (auto-sync does it in a loop) writes the manifest's value back, so calls to the webhook fail TLS verification ",
			"until the injector runs again (argo-cd#1487). Fix: remove caBundle from the manifest (a field the manifest never sets is left to the injector); ",
			"or ignore it with ignoreDifferences (jqPathExpressions: .webhooks[]?.clientConfig.caBundle) together with RespectIgnoreDifferences=true.",
		]),
		"path": bundle_path,
		"severity": "medium",
	}}
}

test_every_webhook_of_the_configuration if {
	two := json.patch(injector_webhook, [
		{"op": "replace", "path": "/kind", "value": "ValidatingWebhookConfiguration"},
		{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": "Cg=="},
		{"op": "add", "path": "/webhooks/1", "value": {"name": "b.example.com", "clientConfig": {"caBundle": "Cg==", "service": {"name": "b", "namespace": "shop"}}}},
		{"op": "add", "path": "/webhooks/2", "value": {"name": "c.example.com", "clientConfig": {"service": {"name": "c", "namespace": "shop"}}}},
	])
	v := rule.violations with input as review(two)
	{x.path | some x in v} == {"/webhooks/0/clientConfig/caBundle", "/webhooks/1/clientConfig/caBundle"}
	some x in v
	contains(x.msg, "compares the manifest's caBundle with the injected CA")
}

test_a_ca_bundle_nobody_injects_or_an_injected_one_left_out if {
	plain := object.union(injector_webhook, {"metadata": {"annotations": {"cert-manager.io/inject-ca-from": ""}}})
	# No injector: not the injector finding. An empty caBundle of an in-cluster webhook is still
	# written by someone at run time (section 1b), so only that finding remains.
	vs := rule.violations with input as review(plain)
	every x in vs {
		contains(x.msg, "names no CA injector")
	}
	left_out := json.patch(injector_webhook, [{"op": "remove", "path": "/webhooks/0/clientConfig/caBundle"}])
	count(rule.violations) == 0 with input as review(left_out)
}

test_ignored_and_respected_is_fine if {
	ignore := [{"group": "admissionregistration.k8s.io", "kind": "MutatingWebhookConfiguration", "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle"]}]
	count(rule.violations) == 0 with input as with_app(injector_webhook, ignore, ["RespectIgnoreDifferences=true"])
	by_manager := [{"group": "*", "kind": "*", "managedFieldsManagers": ["cert-manager-cainjector"]}]
	count(rule.violations) == 0 with input as with_app(injector_webhook, by_manager, ["RespectIgnoreDifferences=true"])
	by_pointer := [{"group": "admissionregistration.k8s.io", "kind": "MutatingWebhookConfiguration", "name": "env-injector", "jsonPointers": ["/webhooks/0/clientConfig"]}]
	count(rule.violations) == 0 with input as with_app(injector_webhook, by_pointer, ["RespectIgnoreDifferences=true"])
}

test_ignored_but_not_respected_still_writes_it_back if {
	ignore := [{"group": "admissionregistration.k8s.io", "kind": "MutatingWebhookConfiguration", "jqPathExpressions": [".webhooks[0].clientConfig.caBundle"]}]
	v := rule.violations with input as with_app(injector_webhook, ignore, [])
	v == {{
		"msg": concat("", [
			"MutatingWebhookConfiguration env-injector sets webhooks[0].clientConfig.caBundle while cert-manager.io/inject-ca-from has cert-manager's cainjector write it: ",
			"ignoreDifferences keeps Argo CD from reporting the difference, but without RespectIgnoreDifferences=true every sync still writes the manifest's empty caBundle back ",
			"over the injected CA, and calls to the webhook fail TLS verification until the injector runs again. ",
			"Fix: remove caBundle from the manifest (a field the manifest never sets is left to the injector), or add RespectIgnoreDifferences=true to the Application's syncOptions.",
		]),
		"path": bundle_path,
		"severity": "low",
	}}
}

test_an_entry_for_another_object_covers_nothing if {
	other := [
		{"group": "admissionregistration.k8s.io", "kind": "MutatingWebhookConfiguration", "name": "other", "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle"]},
		{"group": "admissionregistration.k8s.io", "kind": "MutatingWebhookConfiguration", "jsonPointers": ["/webhooks/0/clientConfig/service"]},
		{"group": "admissionregistration.k8s.io", "kind": "MutatingWebhookConfiguration", "jqPathExpressions": [".webhooks[].clientConfig.caBundleX"]},
	]
	v := rule.violations with input as with_app(injector_webhook, other, ["RespectIgnoreDifferences=true"])
	{[x.path, x.severity] | some x in v} == {[bundle_path, "medium"]}
}

test_argocd_cm_ignore_differences_makes_it_audit if {
	r := object.union(review(injector_webhook), {"argocd": {"config": {"source": "input", "ignore_differences": ["admissionregistration.k8s.io/MutatingWebhookConfiguration"]}}})
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.action == "audit"
	x.severity == "low"
	endswith(x.msg, "Note: argocd-cm has resource.customizations.ignoreDifferences for admissionregistration.k8s.io/MutatingWebhookConfiguration; if it covers /webhooks/0/clientConfig/caBundle, Argo CD does not report this difference.")
	all := object.union(review(injector_webhook), {"argocd": {"config": {"source": "input", "ignore_differences": ["*", "apps/Deployment"]}}})
	w := rule.violations with input as all
	some y in w
	contains(y.msg, "Note: argocd-cm has resource.customizations.ignoreDifferences for all kinds (.all);")
}

test_apiservice_and_crd_conversion_ca_bundles if {
	apiservice := {
		"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
		"metadata": {"name": "v1beta1.metrics.example.com", "annotations": {"cert-manager.io/inject-ca-from": "metrics/metrics-tls"}},
		"spec": {"group": "metrics.example.com", "version": "v1beta1", "caBundle": "Cg==", "service": {"name": "metrics", "namespace": "metrics"}},
	}
	v := rule.violations with input as review(apiservice)
	{x.path | some x in v} == {"/spec/caBundle"}
	crd := {
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": {"name": "widgets.example.com", "annotations": {"service.beta.openshift.io/inject-cabundle": "true"}},
		"spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced", "conversion": {"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"], "clientConfig": {"caBundle": "", "service": {"name": "widgets", "namespace": "widgets"}}}}},
	}
	w := rule.violations with input as review(crd)
	{x.path | some x in w} == {"/spec/conversion/webhook/clientConfig/caBundle"}
	some x in w
	contains(x.msg, "while service.beta.openshift.io/inject-cabundle has OpenShift's service CA operator write it")
}

# ---- 2. HPA metrics order ----

hpa(metrics) := {
	"apiVersion": "autoscaling/v2",
	"kind": "HorizontalPodAutoscaler",
	"metadata": {"name": "web", "namespace": "shop"},
	"spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "minReplicas": 2, "maxReplicas": 10, "metrics": metrics},
}

cpu := {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}

memory := {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 80}}}

test_cpu_before_memory_is_reordered_by_kubernetes if {
	v := rule.violations with input as review(hpa([cpu, memory]))
	v == {{
		"msg": concat("", [
			"HorizontalPodAutoscaler shop/web lists the cpu Utilization metric at spec.metrics[0], before another metric: ",
			"Kubernetes keeps that target in the autoscaling/v1 field targetCPUUtilizationPercentage and, when the HPA is read back as autoscaling/v2, ",
			"lists it after the other metrics (kubernetes#74099), so the live spec.metrics never has this order. ",
			"Argo CD compares the list in order: the HPA is OutOfSync after every sync and auto-sync re-applies it in a loop (Argo CD's diffing docs). ",
			"Fix: move the cpu Utilization metric to the end of spec.metrics.",
		]),
		"path": "/spec/metrics/0",
		"severity": "low",
	}}
}

test_the_order_kubernetes_keeps_is_fine if {
	count(rule.violations) == 0 with input as review(hpa([memory, cpu]))
	count(rule.violations) == 0 with input as review(hpa([cpu]))
	average := {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "500m"}}}
	count(rule.violations) == 0 with input as review(hpa([average, memory]))
	v1 := object.union(hpa([cpu, memory]), {"apiVersion": "autoscaling/v1"})
	count(rule.violations) == 0 with input as review(v1)
}

test_v2beta1_and_several_later_metrics if {
	old := {"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 70}}
	pods := {"type": "Pods", "pods": {"metricName": "requests", "targetAverageValue": "10"}}
	r := review(object.union(hpa([pods, old, memory, pods]), {"apiVersion": "autoscaling/v2beta1"}))
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == "/spec/metrics/1"
	contains(x.msg, "at spec.metrics[1], before 2 other metrics:")
	contains(x.msg, "read back as autoscaling/v2beta1")
}

test_ignored_metrics_are_fine if {
	ignore := [{"group": "autoscaling", "kind": "HorizontalPodAutoscaler", "jsonPointers": ["/spec/metrics"]}]
	count(rule.violations) == 0 with input as with_app(hpa([cpu, memory]), ignore, [])
	jq := [{"group": "autoscaling", "kind": "*", "jqPathExpressions": [".spec.metrics"]}]
	count(rule.violations) == 0 with input as with_app(hpa([cpu, memory]), jq, [])
}

# Argo CD 3.6: the object's own argocd.argoproj.io/ignore-differences annotation
# (input.own_ignore_differences, its jsonPointers) covers like an Application entry; earlier
# releases do not read it.
own_ignore(pointers, reads) := {
	"own_ignore_differences": pointers,
	"argocd": {"version": "3.6", "release": 306, "behaviours": {"per_resource_ignore_differences": reads}},
}

test_the_objects_own_ignore_differences_annotation_from_argo_cd_3_6 if {
	r := object.union(review(hpa([cpu, memory])), own_ignore(["/spec/metrics"], true))
	count(rule.violations) == 0 with input as r
	# A pointer above the field covers it; a sibling does not.
	count(rule.violations) == 0 with input as object.union(review(hpa([cpu, memory])), own_ignore(["/spec/"], true))
	count(rule.violations) == 1 with input as object.union(review(hpa([cpu, memory])), own_ignore(["/spec/minReplicas"], true))
	# Before 3.6 the annotation is not read: still reported.
	count(rule.violations) == 1 with input as object.union(review(hpa([cpu, memory])), own_ignore(["/spec/metrics"], false))
	# The injected caBundle: ignored but not respected, as with an Application entry.
	cab := object.union(review(injector_webhook), own_ignore([bundle_path], true))
	[x.severity | some x in rule.violations] == ["low"] with input as cab
	respected := object.union(cab, {"app": app([], ["RespectIgnoreDifferences=true"])})
	count(rule.violations) == 0 with input as respected
}

# ---- 3. CRD fields the API server drops ----

# linkerd's policy CRDs shipped shortNames: [] (ricsanfre/pi-cluster#93).
crd(spec) := {
	"apiVersion": "apiextensions.k8s.io/v1",
	"kind": "CustomResourceDefinition",
	"metadata": {"name": "authorizationpolicies.policy.example.com"},
	"spec": object.union(
		{
			"group": "policy.example.com",
			"names": {"kind": "AuthorizationPolicy", "listKind": "AuthorizationPolicyList", "plural": "authorizationpolicies", "singular": "authorizationpolicy"},
			"scope": "Namespaced",
			"versions": [{"name": "v1alpha1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "required": ["targetRef"]}}}}}],
		},
		spec,
	),
}

test_empty_short_names if {
	v := rule.violations with input as review(crd({"names": {"shortNames": []}}))
	v == {{
		"msg": concat("", [
			"CustomResourceDefinition authorizationpolicies.policy.example.com sets spec.names.shortNames: [], which the API server drops when it stores the CRD ",
			"(an empty list is not stored): Argo CD does not normalise CustomResourceDefinitions, compares the manifest with the stored CRD, ",
			"and reports it OutOfSync after every sync; auto-sync re-applies it in a loop. ",
			"Fix: remove the empty list from the manifest, or ignore /spec/names/shortNames with ignoreDifferences.",
		]),
		"path": "/spec/names/shortNames",
		"severity": "low",
	}}
}

test_preserve_unknown_fields_false_from_argo_cd_3 if {
	r := review(crd({"preserveUnknownFields": false}))
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.path == "/spec/preserveUnknownFields"
	contains(x.msg, "sets spec.preserveUnknownFields: false, which the API server drops when it stores the CRD (false is the default and is not stored; until Argo CD 2.14 this field was ignored by default, from 3.0 it is compared unless argocd-cm resource.compareoptions sets ignoreResourceStatusField: crd (argo-cd PR #22230))")
	old := object.union(r, {"argocd": {"release": 214, "version": "2.14"}})
	count(rule.violations) == 0 with input as old
	count(rule.violations) == 0 with input as review(crd({"preserveUnknownFields": true}))
}

test_version_fields_and_schema_keywords if {
	version := {
		"name": "v1alpha1", "served": true, "storage": true, "deprecated": false, "additionalPrinterColumns": [],
		"schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "nullable": false, "required": [], "properties": {"mode": {"type": "string", "enum": ["a", "b"], "default": "a"}}}, "status": {"type": "object", "properties": {}}}}},
	}
	v := rule.violations with input as review(crd({"versions": [version]}))
	{x.path | some x in v} == {"/spec/versions/0/deprecated", "/spec/versions/0/additionalPrinterColumns", "/spec/versions/0/schema/openAPIV3Schema"}
	some x in v
	x.path == "/spec/versions/0/schema/openAPIV3Schema"
	startswith(x.msg, "CustomResourceDefinition authorizationpolicies.policy.example.com sets nullable, properties, required in spec.versions[0].schema.openAPIV3Schema, which the API server drops when it stores the CRD (the schema keeps only non-empty lists and maps and true flags)")
	some y in v
	y.path == "/spec/versions/0/deprecated"
	contains(y.msg, "sets spec.versions[0].deprecated: false, which")
}

test_a_clean_crd_and_ignored_fields if {
	count(rule.violations) == 0 with input as review(crd({}))
	ignore := [{"group": "apiextensions.k8s.io", "kind": "CustomResourceDefinition", "jsonPointers": ["/spec/names/shortNames", "/spec/preserveUnknownFields"]}]
	count(rule.violations) == 0 with input as with_app(crd({"names": {"shortNames": []}, "preserveUnknownFields": false}), ignore, [])
}

# ---- context ----

test_live_objects_hooks_and_deletions_are_not_judged if {
	count(rule.violations) == 0 with input as object.union(review(injector_webhook), {"context": {"source": "audit"}})
	count(rule.violations) == 0 with input as object.union(review(hpa([cpu, memory])), {"sync": {"phases": ["PreSync"], "is_hook": true}})
	count(rule.violations) == 0 with input as object.union(review(crd({"names": {"categories": []}})), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as object.union(review(hpa([cpu, memory])), {"sync": {"phases": [], "skip": true}})
}

test_admission_requests_are_judged if {
	r := object.union(review(hpa([cpu, memory])), {"operation": "CREATE", "context": {"source": "admission"}})
	count(rule.violations) == 1 with input as r
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	bad_webhook := object.union(injector_webhook, {"webhooks": [1, {"clientConfig": "x"}, {"clientConfig": {"caBundle": 5}}]})
	count(rule.violations) == 0 with input as review(bad_webhook)
	bad_hpa := hpa([1, "x", {"type": "Resource", "resource": "cpu"}, memory])
	count(rule.violations) == 0 with input as review(bad_hpa)
	bad_crd := crd({"names": "x", "versions": [1, {"schema": "x"}, {"schema": {"openAPIV3Schema": []}}]})
	count(rule.violations) == 0 with input as review(bad_crd)
	r := object.union(review(injector_webhook), {"app": {"ignore_differences": [1, {"group": 1, "jsonPointers": "x", "jqPathExpressions": [2]}], "sync_options": "x"}, "argocd": {"release": "3.4", "config": {"ignore_differences": "x"}}})
	count(rule.violations) == 1 with input as r
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG304"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG304.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}

# ---- 1b. fields a controller fills at run time ----

# kyverno-style: the controller writes the CA of its own webhook; the chart renders "".
self_managed_webhook := {
	"apiVersion": "admissionregistration.k8s.io/v1",
	"kind": "ValidatingWebhookConfiguration",
	"metadata": {"name": "policy-validator"},
	"webhooks": [
		{"name": "a.example.com", "clientConfig": {"caBundle": "", "service": {"name": "policy-svc", "namespace": "policy"}}},
		{"name": "b.example.com", "clientConfig": {"service": {"name": "policy-svc", "namespace": "policy"}}},
	],
}

test_an_empty_ca_bundle_of_an_in_cluster_webhook_is_reported_with_its_condition if {
	vs := rule.violations with input as review(self_managed_webhook)
	count(vs) == 1
	some v in vs
	v.path == "/webhooks/0/clientConfig/caBundle"
	v.severity == "medium"
	contains(v.msg, "Service policy/policy-svc")
	contains(v.msg, "When it does")
}

test_an_empty_ca_bundle_covered_by_ignore_differences_is_not_reported if {
	ignore := [{"group": "admissionregistration.k8s.io", "kind": "ValidatingWebhookConfiguration", "jqPathExpressions": [".webhooks[]?.clientConfig.caBundle"]}]
	count(rule.violations) == 0 with input as with_app(self_managed_webhook, ignore, [])
}

test_an_empty_ca_bundle_of_a_webhook_called_by_url_is_not_reported if {
	by_url := json.patch(self_managed_webhook, [{"op": "replace", "path": "/webhooks/0/clientConfig", "value": {"caBundle": "", "url": "https://hooks.example.com/"}}])
	count(rule.violations) == 0 with input as review(by_url)
}

istio_validator := {
	"apiVersion": "admissionregistration.k8s.io/v1",
	"kind": "ValidatingWebhookConfiguration",
	"metadata": {"name": "istiod-default-validator", "labels": {"istio.io/rev": "default"}},
	"webhooks": [{"name": "validation.istio.io", "failurePolicy": "Ignore", "clientConfig": {"service": {"name": "istiod", "namespace": "istio-system"}}}],
}

test_a_failure_policy_istiod_rewrites_is_reported if {
	vs := rule.violations with input as review(istio_validator)
	count(vs) == 1
	some v in vs
	v.path == "/webhooks/0/failurePolicy"
	contains(v.msg, "istiod rewrites to Fail")
}

test_a_failure_policy_without_the_writer_or_already_fail_is_not_reported if {
	unlabelled := json.patch(istio_validator, [{"op": "remove", "path": "/metadata/labels"}])
	count(rule.violations) == 0 with input as review(unlabelled)
	fail := json.patch(istio_validator, [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Fail"}])
	count(rule.violations) == 0 with input as review(fail)
}
