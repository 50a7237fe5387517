# SG305: declared fields Argo CD will show as different from the live object right after a
# successful sync, as model::diff in the semantics crate predicts them (input.diff.predicted):
#  - dropped: a field the object's type does not declare. Argo CD's client-side apply sends no
#    field-validation directive, so the API server drops the field with a warning; the manifest
#    then no longer decodes into its Go type, so Argo CD also compares its quantities as written
#    (normalised: "1000m" against the stored "1");
#  - controller: the ClusterRole aggregation controller owns the rules of a ClusterRole with an
#    aggregationRule (hidden by argocd-cm resource.compareoptions ignoreAggregatedRoles: true);
#  - duplicate_key: a list the strategic merge merges by key (env by name, container ports by
#    port and protocol, volumes, volumeMounts, Service ports) declares one key twice;
#  - stored (check --cluster): the form a server-side dry-run returned holds a declared field
#    differently — API-server defaulting or normalisation, or a mutating admission webhook.
# A field the Application's ignoreDifferences (jsonPointers, jqPathExpressions) or, from 3.6, the
# object's own argocd.argoproj.io/ignore-differences covers is not reported; when argocd-cm has a
# system-level ignoreDifferences for the kind (paths not in the input) the finding is audit.
# Hooks are not compared and are not judged.
package syncguard.rules.predicted_diff

meta := {
	"id": "SG305",
	"title": "Declared field Argo CD will show as a difference after every sync",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD compares what the manifest declares with what the cluster stored. A field the API server drops,",
		"a value a controller rewrites, or a list key declared twice never match: the Application is OutOfSync right",
		"after a successful sync, auto-sync re-applies it in a loop, and real drift hides among the noise.",
	]),
	"docs": "docs/rules/SG305.md",
}

violations contains v if {
	is_object(input.diff)
	_judged
	some d in _array(input.diff, "predicted")
	is_object(d)
	not _covers(d.pointer)
	not _hidden_by_config(d)
	f := _finding(d)
	v := _graded(d.pointer, f)
}

_finding(d) := {"msg": msg, "severity": "high"} if {
	d.mechanism == "dropped"
	_resource.apiVersion == "argoproj.io/v1alpha1"
	_kind in {"Application", "AppProject"}
	msg := sprintf(
		"%s: %s is not a field of this kind (%s). The API server prunes it, so Argo CD never sees the setting and it does nothing; an app-of-apps parent also shows this object OutOfSync after every sync. Fix: move it where the schema has it (sync options belong under spec.syncPolicy.syncOptions) or correct its spelling.",
		[_subject, d.pointer, d.evidence],
	)
}

_finding(d) := {"msg": msg, "severity": "medium"} if {
	d.mechanism == "dropped"
	not _argocd_object
	msg := sprintf(
		"%s: %s is not a field of this type (%s). Argo CD applies client-side without field validation, so the API server drops it with a warning: the field is never stored, Argo CD shows it as a difference after every sync and auto-sync re-applies it in a loop (a server-side apply would refuse it instead). Fix: remove it, or correct its name or indentation.",
		[_subject, d.pointer, d.evidence],
	)
}

_finding(d) := {"msg": msg, "severity": "medium"} if {
	d.mechanism == "normalised"
	msg := sprintf(
		"%s: %s is written %s and stored as %s. Argo CD normalises quantities by decoding the object into its type, but this manifest has a field the type does not declare, so it is compared as written and shows a difference after every sync (%s). Fix: write %s, and remove the unknown field.",
		[_subject, d.pointer, json.marshal(object.get(_at(d.pointer), "value", null)), json.marshal(d.stored), d.evidence, json.marshal(d.stored)],
	)
}

_finding(d) := {"msg": msg, "severity": "medium"} if {
	d.mechanism == "controller"
	d.pointer == "/rules"
	msg := sprintf(
		"%s declares rules next to an aggregationRule: kube-controller-manager's aggregation controller owns the rules of an aggregated ClusterRole and writes them from the ClusterRoles the rule selects, so Argo CD shows the declared rules as a difference after every sync, and each sync writes them back until the controller runs again. Fix: leave rules out of the manifest (a field it never sets is left to the controller), or set ignoreAggregatedRoles: true under resource.compareoptions in argocd-cm.",
		[_subject],
	)
}

_finding(d) := {"msg": msg, "severity": "medium"} if {
	d.mechanism == "duplicate_key"
	msg := sprintf(
		"%s: %s repeats a key (%s). The strategic merge keeps one entry per key, so the list Argo CD predicts never equals the stored one: the object shows OutOfSync after each sync (argo-cd#20979), and which entry's value wins is up to the merge. Fix: declare each key once, keeping the entry whose value you want.",
		[_subject, d.pointer, d.evidence],
	)
}

_finding(d) := {"msg": msg, "severity": "medium"} if {
	d.mechanism == "stored"
	msg := sprintf(
		"%s: %s is declared %s, but the cluster %s (%s). Argo CD compares the declared value with the stored one, so the object shows OutOfSync after every sync, and auto-sync re-applies it only to have it rewritten. Fix: declare the value as stored, or hide the field with ignoreDifferences (jsonPointers: [%s]), or let Argo CD diff server-side (ServerSideDiff=true, with IncludeMutationWebhook=true when an admission webhook rewrites it).",
		[_subject, d.pointer, json.marshal(object.get(_at(d.pointer), "value", null)), _stored_phrase(d), d.evidence, d.pointer],
	)
}

_stored_phrase(d) := sprintf("stores %s", [json.marshal(d.stored)]) if object.get(d, "stored", null) != null

else := "does not store it"

_argocd_object if {
	_resource.apiVersion == "argoproj.io/v1alpha1"
	_kind in {"Application", "AppProject"}
}

_at(pointer) := {"value": v} if {
	parts := [p | some i, s in split(pointer, "/"); i > 0; p := _segment(s)]
	v := object.get(_resource, parts, null)
} else := {}

_segment(s) := to_number(s) if regex.match(`^[0-9]+$`, s)

else := replace(replace(s, "~1", "/"), "~0", "~")

_hidden_by_config(d) if {
	d.mechanism == "controller"
	d.pointer == "/rules"
	object.get(_config, "ignore_aggregated_roles", false) == true
}

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

# "Deployment shop/web"
_subject := sprintf("%s %s", [_kind, _qualified_name])
