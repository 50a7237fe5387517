# SG205: a hook that normal (non-hook) resources depend on.
#
# Making a dependency a hook is the usual answer to SG201 ("the PreSync Job needs the Secret"),
# and it trades one outage for another when normal resources need the same object. Hooks are not
# managed like resources:
#  - BeforeHookCreation (the default policy): at every sync Argo CD deletes the live object and
#    creates it again, so for a moment it does not exist — new pods of the Deployment that uses it
#    cannot start, and what it owns is garbage-collected with it (the Secret an ExternalSecret
#    created with creationPolicy Owner, the token of a ServiceAccount; all of a Namespace's
#    objects; every custom resource of a CRD's kind);
#  - HookSucceeded: it is deleted after every successful sync, so its users lose it until the next;
#  - HookFailed: it is deleted when a sync fails;
#  - in every case hooks are never pruned and do not count in the Application's health or sync
#    status (spec §2.8, §6.1, §7.2).
#
# Facts used: input.sync (is_hook, phases, delete_policies) and input.dependents (objects that
# reference this one, with is_hook). Severity high when the object disappears after every
# successful sync (HookSucceeded) or is a Namespace or CRD (its deletion cascades), else medium.
package syncguard.rules.hook_used_by_resources

meta := {
	"id": "SG205",
	"title": "Hook that normal resources depend on",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Hooks are deleted and re-created on every sync (BeforeHookCreation) or deleted after it (HookSucceeded),",
		"and are never part of the Application's health. A ServiceAccount, Secret, ExternalSecret or Namespace made",
		"a hook so that a PreSync Job can use it disappears, with everything it owns, for the Deployments that",
		"need it too.",
	]),
	"docs": "docs/rules/SG205.md",
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

violations contains {"msg": msg, "path": _hook_path, "severity": _severity} if {
	# cheap first tests, implied by the conditions below (count(_users) > 0 needs a dependent)
	input.sync.is_hook == true
	input.dependents != []
	_applies
	object.get(_sync, "is_hook", false) == true
	count(_list("phases")) > 0
	count(_users) > 0
	count(_effects) > 0
	not _content_recreated_only
	msg := sprintf(
		"%s is %s, yet normal resources use it (%s): %s, so its users are left without it%s; hooks are also never pruned and do not count in the Application's health. Make it a normal resource (remove the hook annotations) with a lower sync-wave than its users; if a hook needs it too, turn that hook into a Sync hook with a wave after it (SG201), or give the hook its own copy under another name.",
		[_subject, _hook_label, _users_label, concat("; ", _effects), _cascade],
	)
}

# A Secret or ConfigMap whose only policy is BeforeHookCreation is deleted and created again at
# its step: pods already running keep what they mounted or read, so what matters is whether the
# new copy differs. With certificate material (input.generated, model::generated), it probably
# does: Helm's genCA and friends make a new key pair on every render, and every sync hands the
# users a certificate their peers (a webhook's caBundle, a client) do not have (medium). Without
# any, re-creating it only takes it away for a moment, unless its content is generated some other
# way (a random password), which one render cannot show: info, with that condition first.
_content_recreated_only if {
	_kind in {"Secret", "ConfigMap", "ServiceAccount"}
	_list("delete_policies") == ["BeforeHookCreation"]
}

# A ServiceAccount re-created the same way keeps its name but gets a new uid, and the bound
# tokens its pods hold name the old uid: the API server refuses them until the kubelet renews
# them (it does at 80% of their lifetime: about 48 minutes for the default one-hour token).
# That matters only to pods that call the Kubernetes API, which the manifests cannot show: low,
# the condition first.
violations contains {"msg": msg, "path": _hook_path, "severity": "low"} if {
	input.sync.is_hook == true
	input.dependents != []
	_applies
	count(_list("phases")) > 0
	_content_recreated_only
	_kind == "ServiceAccount"
	count(_users) > 0
	msg := sprintf(
		"If the pods of %s call the Kubernetes API, the API server refuses them after every sync until the kubelet renews their tokens (about 48 minutes with the default one-hour token): %s is %s, which Argo CD deletes and re-creates on every sync when its step comes (BeforeHookCreation), and a re-created ServiceAccount has a new uid, which the tokens its pods hold do not name. Make it a normal resource (remove the hook annotations) with a lower sync-wave than its users, and give a hook that needs one its own ServiceAccount.",
		[_users_label, _subject, _hook_label],
	)
}

violations contains {"msg": msg, "path": _hook_path, "severity": "medium"} if {
	input.sync.is_hook == true
	input.dependents != []
	_applies
	count(_list("phases")) > 0
	_content_recreated_only
	_kind != "ServiceAccount"
	count(_users) > 0
	generated := _generated
	count(generated) > 0
	msg := sprintf(
		"%s is %s, yet normal resources use it (%s): it holds certificate material (%s), probably generated while rendering (Helm genCA, genSignedCert, genPrivateKey: a new key pair on every render), and Argo CD deletes and re-creates it on every sync when its step comes (BeforeHookCreation), so every sync gives its users a new certificate that what they talk to may not trust, and they are left without it for a moment; hooks are also never pruned and do not count in the Application's health. Make it a normal resource (remove the hook annotations) with a lower sync-wave than its users, and have the certificate issued by cert-manager or kept stable across renders (lookup the existing Secret), or give the hook that needs it its own copy.",
		[_subject, _hook_label, _users_label, concat(", ", generated)],
	)
}

violations contains {"msg": msg, "path": _hook_path, "severity": "info"} if {
	input.sync.is_hook == true
	input.dependents != []
	_applies
	count(_list("phases")) > 0
	_content_recreated_only
	_kind != "ServiceAccount"
	count(_users) > 0
	count(_generated) == 0
	msg := sprintf(
		"If the content of %s is generated anew on every render (a random password, a certificate), every sync hands its users (%s) a new one: it is %s, which Argo CD deletes and re-creates on every sync when its step comes (BeforeHookCreation). As rendered it holds no certificate material, and with the same content re-creating it only takes it away for a moment: pods already running keep what they mounted. Check the chart's template for rand*, gen* or uuid functions before acting; if there are none, nothing changes.",
		[_subject, _users_label, _hook_label],
	)
}

default _generated := []

_generated := g if {
	g := input.generated
	is_array(g)
}

# Labels of the non-hook objects that reference this one (or what it produces).
_users contains label if {
	some d in _dependents
	is_object(d)
	object.get(d, "is_hook", true) == false
	label := sprintf("%s %s", [_str(d, "kind"), _ns_name(_str(d, "namespace"), _str(d, "name"))])
}

_max_named := 5

_users_label := concat(", ", _sorted_users) if {
	count(_sorted_users) <= _max_named
} else := sprintf("%s and %d more", [concat(", ", array.slice(_sorted_users, 0, _max_named)), count(_sorted_users) - _max_named])

_sorted_users := sort(_users)

# In the order they happen during a sync.
_effects := [text |
	some policy in ["BeforeHookCreation", "HookSucceeded", "HookFailed"]
	policy in _list("delete_policies")
	text := _effect_text[policy]
]

_effect_text := {
	"BeforeHookCreation": "Argo CD deletes and re-creates it on every sync, when its step comes (BeforeHookCreation)",
	"HookSucceeded": "Argo CD deletes it after every successful sync (HookSucceeded)",
	"HookFailed": "Argo CD deletes it after a failed sync (HookFailed)",
}

default _cascade := ", and whatever it owns (the Secret of an ExternalSecret, for one) is garbage-collected with it"

_cascade := ", and deleting a Namespace deletes every object in it" if _kind == "Namespace"

_cascade := ", and deleting a CRD deletes every custom resource of its kind" if _kind == "CustomResourceDefinition"

default _severity := "medium"

_severity := "high" if "HookSucceeded" in _list("delete_policies")

_severity := "high" if {
	not "HookSucceeded" in _list("delete_policies")
	_kind in {"Namespace", "CustomResourceDefinition"}
}

default _annotations := {}

_annotations := a if {
	a := object.get(_metadata, "annotations", {})
	is_object(a)
}

default _hook_path := "/metadata"

_hook_path := "/metadata/annotations/argocd.argoproj.io~1hook" if {
	object.get(_annotations, "argocd.argoproj.io/hook", null) != null
} else := "/metadata/annotations/helm.sh~1hook" if {
	object.get(_annotations, "helm.sh/hook", null) != null
}

_ns_name(ns, name) := concat("/", [ns, name]) if ns != ""

else := name

default _dependents := []

_dependents := d if {
	d := input.dependents
	is_array(d)
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

# "ServiceAccount app-foo/svc-foo"
_subject := sprintf("%s %s", [_kind, _qualified_name])

_hook_phases := [t | some t in _list("hook_types"); is_string(t); t != "Skip"]

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
