# Tests for SG301 (policies/volatile_values.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses.
package syncguard.rules.volatile_values_test

import data.syncguard.rules.volatile_values as rule

# A clean Deployment; tests add the volatile bits.
web(metadata, template_metadata) := {
	"apiVersion": "apps/v1",
	"kind": "Deployment",
	"metadata": object.union({"name": "web", "namespace": "shop", "labels": {"app.kubernetes.io/name": "web"}}, metadata),
	"spec": {
		"selector": {"matchLabels": {"app.kubernetes.io/name": "web"}},
		"template": {
			"metadata": object.union({"labels": {"app.kubernetes.io/name": "web"}}, template_metadata),
			"spec": {"containers": [{"name": "web", "image": "registry.example.com/shop/web:2.3.0"}]},
		},
	},
}

facts := {"phases": ["Sync"], "is_hook": false, "hook_types": [], "wave": 0}

# input.has_template as Rust computes it: some string holds "{{" before "}}".
review(resource, source) := {
	"operation": "CREATE",
	"resource": resource,
	"sync": facts,
	"context": {"source": source, "dry_run": false},
	"has_template": regex.match(`\{\{.*\}\}`, json.marshal(resource)),
}

restarted := web({}, {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-08-08T00:18:00+09:00"}})

restarted_path := "/spec/template/metadata/annotations/kubectl.kubernetes.io~1restartedAt"

test_restarted_at_in_the_pod_template_is_reported_once if {
	v := rule.violations with input as review(restarted, "check")
	v == {{
		"msg": concat("", [
			"Deployment shop/web sets kubectl.kubernetes.io/restartedAt in spec.template.metadata.annotations: ",
			"that annotation is what `kubectl rollout restart` writes on the live object; in the manifest it restarts the pods ",
			"whenever its value changes (on every sync if a template renders the current time, keeping the Application OutOfSync) ",
			"and it undoes the next manual restart. Remove it from the manifest; restart pods with `kubectl rollout restart`.",
		]),
		"path": restarted_path,
	}}
}

test_helm_rollme_is_reported if {
	v := rule.violations with input as review(web({}, {"annotations": {"rollme": "aB3x9"}}), "check")
	v == {{
		"msg": concat("", [
			"Deployment shop/web sets rollme in spec.template.metadata.annotations, Helm's rollme trick: ",
			"{{ randAlphaNum 5 }} renders a new value every time, so Argo CD sees the Application OutOfSync after every refresh ",
			"and rolls the pods on every sync. Use a checksum of what the pods should follow instead ",
			"(checksum/config: {{ include (print $.Template.BasePath \"/configmap.yaml\") . | sha256sum }}), which changes only when that does.",
		]),
		"path": "/spec/template/metadata/annotations/rollme",
	}}
}

test_helm_now_in_an_object_annotation_is_a_timestamp if {
	d := web({"annotations": {"shop.example.com/deployed-at": "2026-08-08 00:18:00.123456789 +0000 UTC m=+0.012345678"}}, {})
	v := rule.violations with input as review(d, "check")
	v == {{
		"msg": concat("", [
			"Deployment shop/web sets a timestamp in the metadata annotation shop.example.com/deployed-at: ",
			"\"2026-08-08 00:18:00.123456789 +0000 UTC m=+0.012345678\" differs on every render if a template produces the current time ",
			"(Helm now, date), and then Argo CD sees the Application OutOfSync after every refresh and auto-sync re-applies it in a loop. ",
			"Render a stable value (the commit, the chart or image version) or remove it; if the value is fixed in Git on purpose, exempt this object.",
		]),
		"path": "/metadata/annotations/shop.example.com~1deployed-at",
	}}
}

test_a_timestamp_in_the_pod_template_also_rolls_the_pods if {
	v := rule.violations with input as review(web({}, {"labels": {"build-date": "20260808T001800Z"}}), "check")
	count(v) == 1
	some x in v
	x.path == "/spec/template/metadata/labels/build-date"
	startswith(x.msg, "Deployment shop/web sets a timestamp in the spec.template.metadata label build-date: \"20260808T001800Z\" differs on every render")
	contains(x.msg, "re-applies it in a loop, rolling the pods each time. Render a stable value")
}

test_label_safe_forms_need_a_key_that_names_a_time if {
	d := web(
		{"labels": {"deploy-timestamp": "1723075080", "release-date": "2026-08-08", "app.kubernetes.io/version": "20260808"}},
		{"annotations": {"buildTime": "2026-08-08T00-18-00Z", "build-id": "4f1c2a9"}},
	)
	v := rule.violations with input as review(d, "check")
	{x.path | some x in v} == {
		"/metadata/labels/deploy-timestamp",
		"/metadata/labels/release-date",
		"/spec/template/metadata/annotations/buildTime",
	}
}

test_stable_values_are_fine if {
	d := web(
		{"annotations": {
			"checksum/config": "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
			"description": "2026 storefront",
			"argocd.argoproj.io/sync-wave": "2",
			"app.kubernetes.io/version": "2.3.0",
		}},
		{"annotations": {"prometheus.io/scrape": "true"}},
	)
	count(rule.violations) == 0 with input as review(d, "check")
}

test_a_cronjob_template_is_checked_too if {
	cron := {
		"apiVersion": "batch/v1",
		"kind": "CronJob",
		"metadata": {"name": "report", "namespace": "shop"},
		"spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"template": {
			"metadata": {"annotations": {"rollme": "x7Kq2"}},
			"spec": {"restartPolicy": "Never", "containers": [{"name": "r", "image": "registry.example.com/shop/report:1.0.0"}]},
		}}}},
	}
	v := rule.violations with input as review(cron, "check")
	count(v) == 1
	some x in v
	x.path == "/spec/jobTemplate/spec/template/metadata/annotations/rollme"
	startswith(x.msg, "CronJob shop/report sets rollme in spec.jobTemplate.spec.template.metadata.annotations, Helm's rollme trick:")
}

test_server_owned_metadata_copied_from_kubectl_get if {
	copied := web(
		{
			"resourceVersion": "48213",
			"uid": "6f0b8f7e-2f57-4a8e-9d0e-5b8c1f3a9e21",
			"creationTimestamp": "2026-08-01T09:12:44Z",
			"generation": 7,
			"managedFields": [{"manager": "argocd-controller", "operation": "Apply"}],
		},
		{},
	)
	v := rule.violations with input as review(copied, "check")
	{[x.path, x.severity] | some x in v} == {
		["/metadata/resourceVersion", "high"],
		["/metadata/uid", "high"],
		["/metadata/managedFields", "medium"],
		["/metadata/creationTimestamp", "low"],
		["/metadata/generation", "low"],
	}
	some x in v
	x.path == "/metadata/resourceVersion"
	x.msg == "Deployment shop/web sets metadata.resourceVersion, which the API server owns: an apply carrying a stale resourceVersion is rejected with a conflict (\"the object has been modified\"), so syncs fail as soon as the live object changes. Remove it (it is usually copied from `kubectl get -o yaml`)."
}

test_empty_server_fields_are_what_kubectl_create_dry_run_prints if {
	d := web({"creationTimestamp": null, "managedFields": [], "resourceVersion": ""}, {"creationTimestamp": null})
	count(rule.violations) == 0 with input as review(d, "check")
}

test_server_owned_annotations if {
	d := web(
		{"annotations": {
			"deployment.kubernetes.io/revision": "12",
			"kubectl.kubernetes.io/last-applied-configuration": "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\"}",
		}},
		{},
	)
	v := rule.violations with input as review(d, "check")
	v == {
		{
			"msg": "Deployment shop/web sets the deployment.kubernetes.io/revision annotation, which the Deployment controller owns and bumps on every rollout: the manifest never matches the live object (OutOfSync) and every sync writes a stale number back. Remove it (it is usually copied from `kubectl get -o yaml`).",
			"path": "/metadata/annotations/deployment.kubernetes.io~1revision",
			"severity": "medium",
		},
		{
			"msg": "Deployment shop/web sets the kubectl.kubernetes.io/last-applied-configuration annotation, which is kubectl's record of the previous client-side apply: a copy in the manifest makes the next apply merge against a stale snapshot, so fields removed since then are not removed. Remove it (it is usually copied from `kubectl get -o yaml`).",
			"path": "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
			"severity": "medium",
		},
	}
}

test_admission_reports_new_volatile_values_but_not_server_fields if {
	d := object.union(restarted, {"metadata": {"resourceVersion": "48213", "uid": "6f0b8f7e"}})
	v := rule.violations with input as review(d, "admission")
	{x.path | some x in v} == {restarted_path}
}

test_admission_update_carrying_the_same_value_is_not_news if {
	r := object.union(review(restarted, "admission"), {"operation": "UPDATE", "old": restarted})
	count(rule.violations) == 0 with input as r
}

test_admission_update_changing_the_value_is_reported if {
	old := web({}, {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-08-01T10:00:00+09:00"}})
	r := object.union(review(restarted, "admission"), {"operation": "UPDATE", "old": old})
	v := rule.violations with input as r
	{x.path | some x in v} == {restarted_path}
}

test_live_objects_are_not_judged if {
	d := object.union(restarted, {"metadata": {"resourceVersion": "48213", "annotations": {"deployment.kubernetes.io/revision": "3"}}})
	count(rule.violations) == 0 with input as review(d, "audit")
}

test_hooks_are_exempt_from_volatile_values_but_not_from_server_fields if {
	job := {
		"apiVersion": "batch/v1",
		"kind": "Job",
		"metadata": {
			"name": "smoke",
			"namespace": "shop",
			"resourceVersion": "1",
			"annotations": {"argocd.argoproj.io/hook": "PostSync", "shop.example.com/rendered-at": "2026-08-08T00:18:00Z"},
		},
		"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "s", "image": "curlimages/curl:8.10.1"}]}}},
	}
	r := object.union(review(job, "check"), {"sync": {"phases": ["PostSync"], "is_hook": true, "hook_types": ["PostSync"]}})
	v := rule.violations with input as r
	{x.path | some x in v} == {"/metadata/resourceVersion"}
}

test_objects_argo_cd_never_applies_are_not_judged if {
	r := object.union(review(restarted, "check"), {"sync": {"phases": [], "is_hook": false, "skip": true, "hook_types": ["Skip"], "ignored": {"reason": "skip"}}})
	count(rule.violations) == 0 with input as r
}

test_a_fixed_deletion_approval_is_not_a_render_time_value if {
	application := {
		"apiVersion": "argoproj.io/v1alpha1",
		"kind": "Application",
		"metadata": {"name": "shop", "namespace": "argocd", "annotations": {"argocd.argoproj.io/deletion-approved": "2026-08-08T00:00:00Z"}},
		"spec": {"project": "default"},
	}
	count(rule.violations) == 0 with input as review(application, "check")
}

test_without_context_or_sync_facts_the_manifest_is_judged if {
	v := rule.violations with input as {"resource": restarted}
	{x.path | some x in v} == {restarted_path}
}

test_without_context_server_owned_fields_are_judged_too if {
	d := object.union(restarted, {"metadata": {"resourceVersion": "48213"}})
	v := rule.violations with input as {"resource": d}
	{x.path | some x in v} == {restarted_path, "/metadata/resourceVersion"}
	w := rule.violations with input as {"resource": d, "context": "x"}
	{x.path | some x in w} == {restarted_path, "/metadata/resourceVersion"}
}

test_a_deletion_is_never_judged if {
	count(rule.violations) == 0 with input as object.union(review(restarted, "check"), {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": {"metadata": "x", "spec": {"template": "x"}}, "context": "x", "sync": []}
	d := {"kind": "Deployment", "metadata": {"name": "web", "annotations": {"rollme-not-a-string": 5, "date": null}, "labels": []}, "spec": {"template": {"metadata": []}}}
	count(rule.violations) == 0 with input as review(d, "check")
	count(rule.violations) == 1 with input as object.union(review(restarted, "admission"), {"old": "x"})
}

# ---- unrendered template actions ----

raw_secret := {
	"apiVersion": "v1",
	"kind": "Secret",
	"metadata": {"name": "redis", "namespace": "shop"},
	"type": "Opaque",
	"data": {"redis-password": "{{ randAlphaNum 10 | b64enc | quote }}", "redis-user": "ZGVmYXVsdA=="},
}

test_an_unrendered_random_value_in_secret_data if {
	v := rule.violations with input as review(raw_secret, "check")
	v == {{
		"msg": concat("", [
			"Secret shop/redis has an unrendered template in data.redis-password: \"{{ randAlphaNum 10 | b64enc | quote }}\" calls randAlphaNum, ",
			"which returns a new value on every render. Argo CD renders the manifests again on every refresh (helm template for a chart), ",
			"so once this is rendered the Application is OutOfSync after every refresh and auto-sync re-applies it in a loop ",
			"(Argo CD's Helm docs, \"Random Data\"); if Argo CD applies this file without rendering it, the braces themselves are applied. ",
			"Fix: create the secret value once outside the render (by hand, an ExternalSecret or a SealedSecret) and reference it, ",
			"or pass it in as a value; Helm's lookup fallback does not help, Argo CD renders without cluster access (argo-cd#5202).",
		]),
		"path": "/data/redis-password",
	}}
}

test_templates_are_looked_for_only_where_rust_found_one if {
	doc := object.union(review(raw_secret, "check"), {"has_template": false})
	count(rule.violations) == 0 with input as doc
}

test_generated_certificates_and_the_clock if {
	webhook := {
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind": "MutatingWebhookConfiguration",
		"metadata": {"name": "shop-injector", "annotations": {"shop.example.com/issued": "{{- now | date \"2006-01-02\" -}}"}},
		"webhooks": [{"name": "inject.shop.example.com", "clientConfig": {"caBundle": "{{ $ca := genCA \"shop-ca\" 365 }}{{ $ca.Cert | b64enc }}"}}],
	}
	v := rule.violations with input as review(webhook, "check")
	{f.path | some f in v} == {"/webhooks/0/clientConfig/caBundle", "/metadata/annotations/shop.example.com~1issued"}
	some x in v
	x.path == "/webhooks/0/clientConfig/caBundle"
	contains(x.msg, "calls genCA, which returns a new value on every render.")
	endswith(x.msg, "Fix: issue the certificate outside the render (cert-manager: a Certificate, and cainjector for a caBundle) instead of generating it in the template.")
	some y in v
	y.path == "/metadata/annotations/shop.example.com~1issued"
	startswith(y.msg, "MutatingWebhookConfiguration shop-injector has an unrendered template in the metadata annotation shop.example.com/issued:")
	endswith(y.msg, "Fix: render a stable value (the chart version, the commit) instead of the current time.")
}

test_several_functions_in_a_pod_template if {
	d := web({}, {"annotations": {"rollout-id": "{{ uuidv4 }}-{{ now | unixEpoch }}"}})
	v := rule.violations with input as review(d, "check")
	count(v) == 1
	some x in v
	x.path == "/spec/template/metadata/annotations/rollout-id"
	contains(x.msg, "calls now, uuidv4, which returns a new value on every render.")
	contains(x.msg, "re-applies it in a loop, rolling the pods each time (Argo CD's Helm docs")
	endswith(x.msg, "or pass it in as a value; Helm's lookup fallback does not help, Argo CD renders without cluster access (argo-cd#5202); render a stable value (the chart version, the commit) instead of the current time.")
}

test_env_values_and_string_data if {
	d := json.patch(web({}, {}), [{"op": "add", "path": "/spec/template/spec/containers/0/env", "value": [
		{"name": "SESSION_KEY", "value": "{{ randAscii 32 }}"},
		{"name": "REGION", "value": "{{ .Values.region }}"},
	]}])
	v := rule.violations with input as review(d, "check")
	{f.path | some f in v} == {"/spec/template/spec/containers/0/env/0/value"}
	some x in v
	contains(x.msg, "in spec.template.spec.containers[0].env[0] (SESSION_KEY): \"{{ randAscii 32 }}\" calls randAscii,")
	s := object.union(object.remove(raw_secret, ["data"]), {"stringData": {"htpasswd": "{{ htpasswd \"admin\" .Values.password }}"}})
	w := rule.violations with input as review(s, "check")
	{f.path | some f in w} == {"/stringData/htpasswd"}
}

# `rollme: {{ .Release.Revision | quote }}` renders "1" on every Argo CD render (mastodon's
# chart): nothing changes, nothing to report. Judged by value, not by the key's name.
test_a_rollme_holding_the_release_revision_is_constant if {
	count(rule.violations) == 0 with input as review(web({}, {"annotations": {"rollme": "1"}}), "check")
	count(rule.violations) == 1 with input as review(web({}, {"annotations": {"rollme": "9dO6m"}}), "check")
	count(rule.violations) == 1 with input as review(web({}, {"annotations": {"rollme-due-to-helm-cert": "A6Afa"}}), "check")
}

test_an_unrendered_rollme_is_reported_once if {
	d := web({}, {"annotations": {"rollme": "{{ randAlphaNum 5 | quote }}"}})
	v := rule.violations with input as review(d, "check")
	count(v) == 1
	some x in v
	contains(x.msg, "Helm's rollme trick")
}

test_deterministic_template_actions_are_fine if {
	s := object.union(raw_secret, {"data": {
		"redis-password": "{{ .Values.password | b64enc | quote }}",
		"checksum": "{{ include \"shop.config\" . | sha256sum }}",
		"note": "{{ .Values.now }} {{ .Values.nowhere }} {{ randomName }}",
		"literal": "randAlphaNum 10",
	}})
	count(rule.violations) == 0 with input as review(s, "check")
}

test_unrendered_templates_in_hooks_and_live_objects_are_not_judged if {
	hook := object.union(review(raw_secret, "check"), {"sync": {"phases": ["PreSync"], "is_hook": true, "hook_types": ["PreSync"]}})
	count(rule.violations) == 0 with input as hook
	count(rule.violations) == 0 with input as review(raw_secret, "audit")
}

test_an_admission_update_carrying_the_same_template_is_not_news if {
	r := object.union(review(raw_secret, "admission"), {"operation": "UPDATE", "old": raw_secret})
	count(rule.violations) == 0 with input as r
	changed := object.union(raw_secret, {"data": {"redis-password": "{{ randAlphaNum 12 }}"}})
	w := rule.violations with input as object.union(review(changed, "admission"), {"operation": "UPDATE", "old": raw_secret})
	{x.path | some x in w} == {"/data/redis-password"}
}

test_malformed_template_places_do_not_fail if {
	d := {"kind": "Secret", "metadata": {"name": "x"}, "data": "x", "stringData": [1], "webhooks": [1, {"clientConfig": "x"}], "spec": {"caBundle": 5, "template": {"spec": {"containers": [1, {"env": [1, {"value": 2}]}]}}}}
	count(rule.violations) == 0 with input as review(d, "check")
	a := {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1beta1.metrics.example.com"}, "spec": {"caBundle": "{{ genSelfSignedCert \"metrics\" nil nil 365 }}"}}
	v := rule.violations with input as review(a, "check")
	{x.path | some x in v} == {"/spec/caBundle"}
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG301"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG301.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}

test_a_file_in_a_config_map_keeps_its_own_template_actions if {
	cm := {
		"apiVersion": "v1",
		"kind": "ConfigMap",
		"metadata": {"name": "alert-templates", "namespace": "monitoring"},
		"data": {"slack.tmpl": "{{ define \"slack.title\" }}\nfired at {{ now }}\n{{ end }}\n"},
	}
	count(rule.violations) == 0 with input as review(cm, "check")
}
