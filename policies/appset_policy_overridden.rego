# SG310: an ApplicationSet's syncPolicy.applicationsSync that the controller ignores.
#
# When argocd-cmd-params-cm sets applicationsetcontroller.policy (to any policy, `sync` included),
# the ApplicationSet controller applies that policy to every ApplicationSet unless
# applicationsetcontroller.enable.policy.override is "true" (its default is true only when no
# policy is set). An ApplicationSet asking for another policy is silently overruled
# (applicationset/utils/policy.go DefaultPolicy): `create-only` under a controller `sync` lets the
# controller update and delete the generated Applications the ApplicationSet meant to protect.
#
# Judged only when argocd-cmd-params-cm is known (input.argocd.config.cmd_params: the input,
# --argocd-config or the cluster) and the two policies differ.
package syncguard.rules.appset_policy_overridden

meta := {
	"id": "SG310",
	"title": "ApplicationSet applicationsSync overruled by the controller's policy",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"With applicationsetcontroller.policy set and enable.policy.override not true, the ApplicationSet",
		"controller ignores every ApplicationSet's applicationsSync: Applications are updated or deleted",
		"(or not) by the controller-wide policy instead.",
	]),
	"docs": "docs/rules/SG310.md",
	"kinds": ["ApplicationSet"], # only ApplicationSets carry applicationsSync
}

violations contains {"msg": msg, "path": "/spec/syncPolicy/applicationsSync", "severity": _severity(asked, policy)} if {
	_applies
	_str(_resource, "kind") == "ApplicationSet"
	startswith(_str(_resource, "apiVersion"), "argoproj.io/")
	asked := _str(_sync_policy, "applicationsSync")
	asked != ""
	params := _cmd_params
	policy := params.appset_policy
	is_string(policy)
	params.policy_override_enabled == false
	asked != policy
	msg := sprintf(
		"ApplicationSet %s: applicationsSync %q is ignored: argocd-cmd-params-cm sets applicationsetcontroller.policy %q without applicationsetcontroller.enable.policy.override: \"true\", so the controller applies %q to the Applications this ApplicationSet generates%s. Set the override to \"true\" in argocd-cmd-params-cm (and restart the ApplicationSet controller), or rely on the controller's policy and remove applicationsSync.",
		[_name, asked, policy, policy, _consequence(asked, policy)],
	)
}

# The controller deletes Applications the ApplicationSet meant to keep.
_severity(asked, policy) := "high" if {
	asked in {"create-only", "create-update"}
	policy in {"sync", "create-delete"}
} else := "medium"

_consequence(asked, policy) := ": it deletes Applications whose generator entry disappears" if {
	asked in {"create-only", "create-update"}
	policy in {"sync", "create-delete"}
} else := ": it updates Applications this ApplicationSet asked to leave as created" if {
	asked in {"create-only", "create-delete"}
	policy in {"sync", "create-update"}
} else := ""

# ---- facts ----

_cmd_params := p if {
	p := input.argocd.config.cmd_params
	is_object(p)
}

default _sync_policy := {}

_sync_policy := p if {
	spec := object.get(_resource, "spec", {})
	is_object(spec)
	p := object.get(spec, "syncPolicy", {})
	is_object(p)
}

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
