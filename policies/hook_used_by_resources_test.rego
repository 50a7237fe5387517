# Tests for SG205 (policies/hook_used_by_resources.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. Inputs follow policies/README.md (input.sync, input.dependents).
package syncguard.rules.hook_used_by_resources_test

import data.syncguard.rules.hook_used_by_resources as rule

# The "fix" for seed 000 that SG201 warns about: the ExternalSecret made a PreSync hook so that
# the migration Job finds its Secret, while the Deployment reads the same Secret.
external_secret := {
	"apiVersion": "external-secrets.io/v1beta1",
	"kind": "ExternalSecret",
	"metadata": {
		"name": "db-credentials",
		"namespace": "app-foo",
		"annotations": {"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/sync-wave": "4"},
	},
	"spec": {
		"secretStoreRef": {"name": "vault", "kind": "ClusterSecretStore"},
		"target": {"name": "db-credentials", "creationPolicy": "Owner"},
		"dataFrom": [{"extract": {"key": "app-foo/db"}}],
	},
}

hook_facts(policies) := {
	"phases": ["PreSync"],
	"is_hook": true,
	"hook_types": ["PreSync"],
	"wave": 4,
	"delete_policies": policies,
	"delete_policy_set": policies != ["BeforeHookCreation"],
	"sync_options": {"items": [], "unknown": []},
}

dependent(kind, name, is_hook) := {
	"kind": kind,
	"group": "",
	"name": name,
	"namespace": "app-foo",
	"role": "env_from",
	"via": "/spec/template/spec/containers/0/envFrom/0/secretRef/name",
	"is_hook": is_hook,
	"phases": ["Sync"],
	"wave": 0,
}

deployment := dependent("Deployment", "svc-foo", false)

migration := object.union(dependent("Job", "svc-foo-migration", true), {"phases": ["PreSync"], "wave": 5})

review(resource, facts, dependents) := {
	"operation": "CHECK",
	"resource": resource,
	"sync": facts,
	"refs": [],
	"dependents": dependents,
	"context": {"source": "check", "dry_run": false},
}

hook_path := "/metadata/annotations/argocd.argoproj.io~1hook"

test_external_secret_hook_used_by_a_deployment if {
	v := rule.violations with input as review(external_secret, hook_facts(["BeforeHookCreation"]), [migration, deployment])
	v == {{
		"msg": concat("", [
			"ExternalSecret app-foo/db-credentials is a PreSync hook, yet normal resources use it (Deployment app-foo/svc-foo): ",
			"Argo CD deletes and re-creates it on every sync, when its step comes (BeforeHookCreation), so its users are left without it, ",
			"and whatever it owns (the Secret of an ExternalSecret, for one) is garbage-collected with it; ",
			"hooks are also never pruned and do not count in the Application's health. ",
			"Make it a normal resource (remove the hook annotations) with a lower sync-wave than its users; ",
			"if a hook needs it too, turn that hook into a Sync hook with a wave after it (SG201), ",
			"or give the hook its own copy under another name.",
		]),
		"path": hook_path,
		"severity": "medium",
	}}
}

hook_secret := {
	"apiVersion": "v1",
	"kind": "Secret",
	"metadata": {"name": "db-credentials", "namespace": "app-foo", "annotations": {"helm.sh/hook": "pre-install,pre-upgrade"}},
	"data": {"tls.crt": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t"},
}

helm_hook_path := "/metadata/annotations/helm.sh~1hook"

# A hook Secret with certificate material (input.generated, from model::generated): probably
# made anew on every render, so every sync hands its users a new certificate (the
# opentelemetry-operator autocert Secret of the chart corpus).
test_a_hook_secret_with_generated_certificates_is_medium if {
	r := object.union(review(hook_secret, hook_facts(["BeforeHookCreation"]), [deployment]), {"generated": ["/data/tls.crt"]})
	v := rule.violations with input as r
	count(v) == 1
	some x in v
	x.severity == "medium"
	x.path == helm_hook_path
	startswith(x.msg, "Secret app-foo/db-credentials is a PreSync hook, yet normal resources use it (Deployment app-foo/svc-foo): it holds certificate material (/data/tls.crt), probably generated while rendering")
}

# The same Secret as rendered with no certificate material (zitadel's masterkey, config maps):
# re-created with the same content, only gone for a moment. Info, with the condition first.
test_a_hook_secret_without_generated_content_is_info_and_says_the_condition_first if {
	v := rule.violations with input as review(hook_secret, hook_facts(["BeforeHookCreation"]), [deployment])
	v == {{
		"msg": concat("", [
			"If the content of Secret app-foo/db-credentials is generated anew on every render (a random password, a certificate), ",
			"every sync hands its users (Deployment app-foo/svc-foo) a new one: it is a PreSync hook, which Argo CD deletes and ",
			"re-creates on every sync when its step comes (BeforeHookCreation). As rendered it holds no certificate material, and with ",
			"the same content re-creating it only takes it away for a moment: pods already running keep what they mounted. ",
			"Check the chart's template for rand*, gen* or uuid functions before acting; if there are none, nothing changes.",
		]),
		"path": helm_hook_path,
		"severity": "info",
	}}
}

# A hook ServiceAccount re-created on every sync: its pods' tokens name the old uid. Low, and
# only if they call the API, which the message says first (zitadel 9.34.0's ServiceAccounts).
test_a_hook_service_account_re_created_on_every_sync_is_low_with_its_condition_first if {
	sa := {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "svc-foo", "namespace": "app-foo", "annotations": {"helm.sh/hook": "pre-install"}}}
	v := rule.violations with input as review(sa, hook_facts(["BeforeHookCreation"]), [deployment])
	count(v) == 1
	some x in v
	x.severity == "low"
	startswith(x.msg, "If the pods of Deployment app-foo/svc-foo call the Kubernetes API, the API server refuses them after every sync until the kubelet renews their tokens")
}

# HookSucceeded deletes it after the sync: its users are without it until the next one, whatever
# its content. Still the general finding.
test_a_hook_secret_deleted_after_the_sync_keeps_the_general_finding if {
	v := rule.violations with input as review(hook_secret, hook_facts(["HookSucceeded"]), [deployment])
	{x.severity | some x in v} == {"high"}
}

test_hook_succeeded_removes_it_after_every_sync_and_is_high if {
	sa := {
		"apiVersion": "v1",
		"kind": "ServiceAccount",
		"metadata": {
			"name": "svc-foo",
			"namespace": "app-foo",
			"annotations": {"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded"},
		},
	}
	users := [object.union(deployment, {"role": "service_account"}), object.union(migration, {"role": "service_account"})]
	v := rule.violations with input as review(sa, hook_facts(["BeforeHookCreation", "HookSucceeded"]), users)
	count(v) == 1
	some x in v
	x.severity == "high"
	x.path == hook_path
	startswith(x.msg, "ServiceAccount app-foo/svc-foo is a PreSync hook, yet normal resources use it (Deployment app-foo/svc-foo): ")
	contains(x.msg, ": Argo CD deletes and re-creates it on every sync, when its step comes (BeforeHookCreation); Argo CD deletes it after every successful sync (HookSucceeded), so its users are left without it")
}

test_hook_failed_only_is_medium if {
	v := rule.violations with input as review(external_secret, hook_facts(["HookFailed"]), [deployment])
	count(v) == 1
	some x in v
	x.severity == "medium"
	contains(x.msg, "(Deployment app-foo/svc-foo): Argo CD deletes it after a failed sync (HookFailed), so its users are left without it")
}

test_a_hook_used_only_by_hooks_is_fine if {
	count(rule.violations) == 0 with input as review(external_secret, hook_facts(["BeforeHookCreation"]), [migration])
	count(rule.violations) == 0 with input as review(external_secret, hook_facts(["BeforeHookCreation"]), [])
}

test_a_normal_resource_with_users_is_fine if {
	plain := json.remove(external_secret, ["metadata/annotations/argocd.argoproj.io~1hook"])
	facts := object.union(hook_facts(["BeforeHookCreation"]), {"phases": ["Sync"], "is_hook": false, "hook_types": []})
	count(rule.violations) == 0 with input as review(plain, facts, [deployment, migration])
}

test_a_namespace_hook_takes_everything_in_it_along if {
	ns := {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "app-foo", "annotations": {"helm.sh/hook": "pre-install"}}}
	users := [
		object.union(deployment, {"role": "namespace", "via": "/metadata/namespace"}),
		object.union(dependent("Service", "svc-foo", false), {"role": "namespace"}),
		object.union(dependent("ConfigMap", "svc-foo", false), {"role": "namespace"}),
		object.union(dependent("Secret", "svc-foo", false), {"role": "namespace"}),
		object.union(dependent("ServiceAccount", "svc-foo", false), {"role": "namespace"}),
		object.union(dependent("PodDisruptionBudget", "svc-foo", false), {"role": "namespace"}),
		object.union(dependent("HorizontalPodAutoscaler", "svc-foo", false), {"role": "namespace"}),
	]
	v := rule.violations with input as review(ns, hook_facts(["BeforeHookCreation"]), users)
	count(v) == 1
	some x in v
	x.severity == "high"
	x.path == "/metadata/annotations/helm.sh~1hook"
	startswith(x.msg, "Namespace app-foo is a PreSync hook, yet normal resources use it (ConfigMap app-foo/svc-foo, Deployment app-foo/svc-foo, HorizontalPodAutoscaler app-foo/svc-foo, PodDisruptionBudget app-foo/svc-foo, Secret app-foo/svc-foo and 2 more): ")
	contains(x.msg, "so its users are left without it, and deleting a Namespace deletes every object in it;")
}

test_a_crd_hook_takes_its_custom_resources_along if {
	crd := {
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind": "CustomResourceDefinition",
		"metadata": {"name": "widgets.example.com", "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
		"spec": {"group": "example.com", "names": {"kind": "Widget", "plural": "widgets"}, "scope": "Namespaced"},
	}
	v := rule.violations with input as review(crd, hook_facts(["BeforeHookCreation"]), [object.union(dependent("Widget", "w", false), {"role": "definition"})])
	count(v) == 1
	some x in v
	x.severity == "high"
	contains(x.msg, "and deleting a CRD deletes every custom resource of its kind;")
}

test_a_delete_only_hook_is_not_re_created_by_syncs if {
	facts := object.union(hook_facts(["BeforeHookCreation"]), {"phases": [], "hook_types": ["PostDelete"], "ignored": {"reason": "delete-hook-only"}})
	count(rule.violations) == 0 with input as review(external_secret, facts, [deployment])
}

test_a_dependent_without_an_is_hook_fact_is_not_counted if {
	count(rule.violations) == 0 with input as review(external_secret, hook_facts(["BeforeHookCreation"]), [json.remove(deployment, ["is_hook"])])
}

test_a_deletion_is_never_judged if {
	r := review(external_secret, hook_facts(["BeforeHookCreation"]), [deployment])
	count(rule.violations) == 0 with input as object.union(r, {"operation": "DELETE"})
}

test_malformed_input_yields_nothing_and_does_not_fail if {
	count(rule.violations) == 0 with input as {}
	count(rule.violations) == 0 with input as {"resource": 1, "sync": {"is_hook": true, "phases": "PreSync"}, "dependents": "x"}
	count(rule.violations) == 0 with input as review(external_secret, object.union(hook_facts([]), {"delete_policies": "x"}), [1, deployment])
}

test_meta_follows_the_contract if {
	rule.meta.id == "SG205"
	rule.meta.severity == "medium"
	rule.meta.action == "warn"
	rule.meta.docs == "docs/rules/SG205.md"
	count(rule.meta.title) > 0
	count(rule.meta.why) > 0
}
