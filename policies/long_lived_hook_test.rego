# Tests for SG116 (policies/long_lived_hook.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.sync facts are written out as model::argo computes them.
package syncguard.rules.long_lived_hook_test

import data.syncguard.rules.long_lived_hook as rule

# A chart that installs its CRD as a Helm pre-install hook (argo-helm#120 discussed exactly this).
widget_crd(annotations) := {
	"apiVersion": "apiextensions.k8s.io/v1",
	"kind": "CustomResourceDefinition",
	"metadata": {"name": "widgets.example.com", "annotations": annotations},
	"spec": {
		"group": "example.com",
		"names": {"kind": "Widget", "plural": "widgets", "singular": "widget"},
		"scope": "Namespaced",
		"versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}],
	},
}

helm_presync(overrides) := object.union(
	{
		"phases": ["PreSync"],
		"is_hook": true,
		"skip": false,
		"hook_types": ["PreSync"],
		"helm_hooks": ["pre-install"],
		"wave": 0,
		"wave_source": "default",
		"delete_policies": ["BeforeHookCreation"],
		"delete_policy_set": false,
		"sync_options": {"items": [], "unknown": []},
	},
	overrides,
)

argo_presync(overrides) := helm_presync(object.union({"helm_hooks": []}, overrides))

review(resource, sync, refs) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": sync,
	"refs": refs,
	"dependents": [],
	"context": {"source": "check", "dry_run": false},
}

helm_path := "/metadata/annotations/helm.sh~1hook"

argo_path := "/metadata/annotations/argocd.argoproj.io~1hook"

test_a_crd_as_a_helm_pre_install_hook_is_critical if {
	crd := widget_crd({"helm.sh/hook": "pre-install"})
	v := rule.violations with input as review(crd, helm_presync({}), [])
	v == {{
		"msg": concat("", [
			"CustomResourceDefinition widgets.example.com is a PreSync hook (helm.sh/hook: pre-install, which Argo CD maps to PreSync): ",
			"Argo CD deletes it and creates it again at every sync, when its step comes (BeforeHookCreation, the default delete policy), ",
			"and deleting a CustomResourceDefinition deletes every Widget (example.com) object in the cluster, including those other Applications and controllers created. ",
			"As a hook it is also never compared with Git (drift never shows as OutOfSync, self-heal never repairs it) and never pruned. ",
			"Remove helm.sh/hook (a kustomize patch of the rendered chart if the chart cannot be changed) so that it becomes a normal resource: ",
			"Argo CD applies a CRD before its custom resources anyway, pulling it into the phase and wave of the first one, hooks included ",
			"(a Helm 3 chart's crds/ directory, or helm.sh/hook: crd-install alone, gives a normal resource too).",
		]),
		"path": helm_path,
		"severity": "critical",
		"action": "deny",
	}}
}

# helm.sh/hook: crd-install alone is not a hook (gitops-engine IsHook), so the facts say is_hook false.
test_crd_install_alone_is_a_normal_resource if {
	crd := widget_crd({"helm.sh/hook": "crd-install"})
	facts := helm_presync({"phases": ["Sync"], "is_hook": false, "hook_types": [], "helm_hooks": ["crd-install"]})
	count(rule.violations) == 0 with input as review(crd, facts, [])
}

# argo-cd#3837: a PVC made a PreSync hook, re-created at every sync while a pod still mounts it.
data_pvc(annotations) := {
	"apiVersion": "v1",
	"kind": "PersistentVolumeClaim",
	"metadata": {"name": "svc-foo-data", "namespace": "app-foo", "annotations": annotations},
	"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}},
}

test_a_pvc_as_a_presync_hook_loses_its_data_and_can_hang_the_sync if {
	pvc := data_pvc({"argocd.argoproj.io/hook": "PreSync"})
	v := rule.violations with input as review(pvc, argo_presync({}), [])
	v == {{
		"msg": concat("", [
			"PersistentVolumeClaim app-foo/svc-foo-data is a PreSync hook: ",
			"Argo CD deletes it and creates it again at every sync, when its step comes (BeforeHookCreation, the default delete policy), ",
			"and deleting a PersistentVolumeClaim releases its volume, and a dynamically provisioned volume (reclaimPolicy Delete, the default) is deleted with its data; ",
			"while a pod still mounts the claim, the deletion waits on the kubernetes.io/pvc-protection finalizer, and so does the sync, \"waiting for deletion\" (argo-cd#3837). ",
			"As a hook it is also never compared with Git (drift never shows as OutOfSync, self-heal never repairs it) and never pruned. ",
			"Remove argocd.argoproj.io/hook so that it becomes a normal resource; if a PreSync hook needs the claim, make that hook a Sync hook with a sync-wave after it (SG201).",
		]),
		"path": argo_path,
		"severity": "critical",
		"action": "deny",
	}}
}

test_hook_failed_alone_deletes_it_only_when_a_sync_fails if {
	pvc := data_pvc({"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "HookFailed"})
	v := rule.violations with input as review(pvc, argo_presync({"delete_policies": ["HookFailed"], "delete_policy_set": true}), [])
	count(v) == 1
	some x in v
	x.severity == "high"
	x.action == "warn"
	contains(x.msg, "is a PreSync hook: Argo CD deletes it whenever a sync fails (HookFailed), and deleting a PersistentVolumeClaim releases its volume, and a dynamically provisioned volume (reclaimPolicy Delete, the default) is deleted with its data. As a hook")
}

test_hook_succeeded_deletes_it_after_every_sync if {
	pvc := data_pvc({"argocd.argoproj.io/hook": "PostSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded"})
	facts := argo_presync({"phases": ["PostSync"], "hook_types": ["PostSync"], "delete_policies": ["BeforeHookCreation", "HookSucceeded"], "delete_policy_set": true})
	some x in rule.violations with input as review(pvc, facts, [])
	x.severity == "critical"
	contains(x.msg, "is a PostSync hook: Argo CD deletes it and creates it again at every sync, when its step comes (BeforeHookCreation); deletes it after every successful sync (HookSucceeded), and ")
}

# With only generateName, BeforeHookCreation never finds the old object (SG109 reports the pile-up).
test_a_generate_name_claim_is_not_deleted_by_before_hook_creation if {
	pvc := json.patch(data_pvc({"argocd.argoproj.io/hook": "PreSync"}), [
		{"op": "remove", "path": "/metadata/name"},
		{"op": "add", "path": "/metadata/generateName", "value": "svc-foo-data-"},
	])
	count(rule.violations) == 0 with input as review(pvc, argo_presync({}), [])
	facts := argo_presync({"delete_policies": ["HookSucceeded"], "delete_policy_set": true})
	some x in rule.violations with input as review(pvc, facts, [])
	x.severity == "critical"
	startswith(x.msg, "PersistentVolumeClaim app-foo/svc-foo-data-* is a PreSync hook: Argo CD deletes it after every successful sync (HookSucceeded), and deleting a PersistentVolumeClaim releases its volume, and a dynamically provisioned volume (reclaimPolicy Delete, the default) is deleted with its data. As a hook")
}

# argo-cd#3502: the release Namespace as a Helm pre-install hook, with resource-policy keep.
test_a_namespace_hook_and_resource_policy_keep if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app-foo", "annotations": {
		"helm.sh/hook": "pre-install",
		"helm.sh/hook-weight": "-10",
		"helm.sh/resource-policy": "keep",
	}}}
	v := rule.violations with input as review(ns, helm_presync({"wave": -10, "wave_source": "hook-weight"}), [])
	count(v) == 1
	some x in v
	x.severity == "critical"
	x.path == helm_path
	contains(x.msg, "Namespace app-foo is a PreSync hook (helm.sh/hook: pre-install, which Argo CD maps to PreSync): Argo CD deletes it and creates it again at every sync")
	contains(x.msg, "and deleting a Namespace deletes every object in it, including those of other Applications.")
	contains(x.msg, "and never pruned; helm.sh/resource-policy: keep does not protect it (Argo CD reads keep only when it deletes the Application). Remove helm.sh/hook")
	endswith(x.msg, "PreSync hooks included (or let the Application create it: CreateNamespace=true).")
}

test_a_persistent_volume_is_high if {
	pv := {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "svc-foo-data", "annotations": {"helm.sh/hook": "pre-install,pre-upgrade"}}, "spec": {"capacity": {"storage": "10Gi"}}}
	facts := helm_presync({"helm_hooks": ["pre-install", "pre-upgrade"]})
	some x in rule.violations with input as review(pv, facts, [])
	x.severity == "high"
	x.action == "warn"
	startswith(x.msg, "PersistentVolume svc-foo-data is a PreSync hook (helm.sh/hook: pre-install,pre-upgrade, which Argo CD maps to PreSync): ")
}

definition_ref(group, kind) := {
	"kind": "CustomResourceDefinition",
	"group": "apiextensions.k8s.io",
	"name": sprintf("%s.%s", [kind, group]),
	"via": "/apiVersion",
	"optional": false,
	"role": "definition",
	"defines": {"group": group, "kind": kind},
	"target": {"resolution": "missing"},
}

test_an_operator_resource_as_a_hook_is_medium if {
	topic := {
		"apiVersion": "kafka.strimzi.io/v1beta2",
		"kind": "KafkaTopic",
		"metadata": {"name": "orders", "namespace": "app-foo", "annotations": {"helm.sh/hook": "post-install,post-upgrade"}},
		"spec": {"partitions": 3, "replicas": 3},
	}
	facts := helm_presync({"phases": ["PostSync"], "hook_types": ["PostSync"], "helm_hooks": ["post-install", "post-upgrade"]})
	v := rule.violations with input as review(topic, facts, [definition_ref("kafka.strimzi.io", "KafkaTopic")])
	count(v) == 1
	some x in v
	x.severity == "medium"
	x.action == "warn"
	contains(x.msg, "and when a KafkaTopic is deleted its controller may tear down what it manages for it (a database, a topic, a bucket, a certificate) and build it anew.")
	endswith(x.msg, "so that it becomes a normal resource with a sync-wave; a hook is only right for objects that may be lost at every sync.")
}

test_secret_producers_and_runs_are_left_alone if {
	es := {"apiVersion": "external-secrets.io/v1beta1", "kind": "ExternalSecret", "metadata": {"name": "db-credentials", "namespace": "app-foo", "annotations": {"argocd.argoproj.io/hook": "PreSync"}}}
	count(rule.violations) == 0 with input as review(es, argo_presync({}), [definition_ref("external-secrets.io", "ExternalSecret")])
	wf := {"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow", "metadata": {"name": "smoke", "namespace": "app-foo", "annotations": {"argocd.argoproj.io/hook": "PostSync"}}}
	count(rule.violations) == 0 with input as review(wf, argo_presync({"phases": ["PostSync"], "hook_types": ["PostSync"]}), [definition_ref("argoproj.io", "Workflow")])
}

child_app(finalizers) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "Application",
	"metadata": {"name": "rabbitmq", "namespace": "argocd", "finalizers": finalizers, "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
	"spec": {"project": "default", "destination": {"server": "https://kubernetes.default.svc", "namespace": "rabbitmq"}},
}

test_an_application_with_the_resources_finalizer_as_a_hook_is_critical if {
	app := child_app(["resources-finalizer.argocd.argoproj.io"])
	some x in rule.violations with input as review(app, argo_presync({}), [definition_ref("argoproj.io", "Application")])
	x.severity == "critical"
	contains(x.msg, "and deleting an Application that carries the resources-finalizer.argocd.argoproj.io finalizer deletes every resource it manages.")
	plain := child_app([])
	some y in rule.violations with input as review(plain, argo_presync({}), [definition_ref("argoproj.io", "Application")])
	y.severity == "medium"
}

for_kind(kind) := {"apiVersion": "v1", "kind": kind, "metadata": {"name": "svc-foo-migration", "namespace": "app-foo", "annotations": {"helm.sh/hook": "pre-install"}}}

test_service_accounts_secrets_and_jobs_are_not_long_lived_here if {
	count(rule.violations) == 0 with input as review(for_kind("ServiceAccount"), helm_presync({}), [])
	count(rule.violations) == 0 with input as review(for_kind("Secret"), helm_presync({}), [])
	count(rule.violations) == 0 with input as review(for_kind("ConfigMap"), helm_presync({}), [])
	job := {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "svc-foo-migration", "namespace": "app-foo"}}
	count(rule.violations) == 0 with input as review(job, helm_presync({}), [])
}

test_normal_resources_and_delete_only_hooks_are_not_reported if {
	pvc := data_pvc({})
	count(rule.violations) == 0 with input as review(pvc, argo_presync({"phases": ["Sync"], "is_hook": false, "hook_types": []}), [])
	pre_delete := data_pvc({"argocd.argoproj.io/hook": "PreDelete"})
	count(rule.violations) == 0 with input as review(pre_delete, argo_presync({"phases": [], "hook_types": ["PreDelete"], "ignored": {"reason": "delete-hook-only"}}), [])
}

test_a_deletion_is_never_judged if {
	r := object.union(review(widget_crd({"helm.sh/hook": "pre-install"}), helm_presync({}), []), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as r
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	bad := {"apiVersion": 3, "kind": "PersistentVolumeClaim", "metadata": {"name": "x", "annotations": "PreSync", "finalizers": "x"}}
	count(rule.violations) == 0 with input as review(bad, {"is_hook": true, "phases": "PreSync", "delete_policies": "BeforeHookCreation"}, "refs")
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG116"
	rule.meta.severity == "critical"
	rule.meta.action == "deny"
	rule.meta.docs == "docs/rules/SG116.md"
}
