# Tests for SG310 (policies/appset_policy_overridden.rego).
package syncguard.rules.appset_policy_overridden_test

import data.syncguard.rules.appset_policy_overridden as rule

appset(sync) := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "ApplicationSet",
	"metadata": {"name": "clusters", "namespace": "argocd"},
	"spec": {"generators": [], "syncPolicy": {"applicationsSync": sync}},
}

doc(sync, params) := {
	"operation": "CHECK",
	"resource": appset(sync),
	"argocd": {"config": {"source": "input", "cmd_params": params}},
}

test_create_only_under_a_controller_sync_policy_is_high if {
	vs := rule.violations with input as doc("create-only", {"appset_policy": "sync", "policy_override_enabled": false})
	count(vs) == 1
	some v in vs
	v.path == "/spec/syncPolicy/applicationsSync"
	v.severity == "high"
	v.msg == "ApplicationSet clusters: applicationsSync \"create-only\" is ignored: argocd-cmd-params-cm sets applicationsetcontroller.policy \"sync\" without applicationsetcontroller.enable.policy.override: \"true\", so the controller applies \"sync\" to the Applications this ApplicationSet generates: it deletes Applications whose generator entry disappears. Set the override to \"true\" in argocd-cmd-params-cm (and restart the ApplicationSet controller), or rely on the controller's policy and remove applicationsSync."
}

test_sync_under_a_create_only_controller_is_medium if {
	vs := rule.violations with input as doc("sync", {"appset_policy": "create-only", "policy_override_enabled": false})
	some v in vs
	v.severity == "medium"
}

test_the_override_or_the_same_policy_is_fine if {
	count(rule.violations) == 0 with input as doc("create-only", {"appset_policy": "sync", "policy_override_enabled": true})
	count(rule.violations) == 0 with input as doc("sync", {"appset_policy": "sync", "policy_override_enabled": false})
}

test_no_controller_policy_or_no_cmd_params_is_fine if {
	count(rule.violations) == 0 with input as doc("create-only", {"policy_override_enabled": true})
	d := {"operation": "CHECK", "resource": appset("create-only"), "argocd": {"config": {"source": "none"}}}
	count(rule.violations) == 0 with input as d
}
