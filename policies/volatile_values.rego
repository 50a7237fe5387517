# SG301: values in desired state that change on every render, or that belong to the server.
#
# Argo CD compares the rendered manifests with the live objects on every refresh. A value that
# differs on every render (a timestamp, a random token) keeps the Application OutOfSync for ever;
# with auto-sync every refresh re-applies it, and in a pod template every apply rolls the pods
# (seed 004, cause 5: non-deterministic rendering). Only clear signals are reported:
#  - kubectl.kubernetes.io/restartedAt (what `kubectl rollout restart` writes on the live object);
#  - Helm's `rollme: {{ randAlphaNum 5 | quote }}` trick (any key containing "rollme" whose value
#    is not a constant: `{{ .Release.Revision }}` renders "1" under Argo CD every time);
#  - date-times (RFC 3339, or Go's time format that Helm's `now` renders) in annotation values,
#    and dates, compact timestamps or epoch seconds in labels or annotations whose key names a
#    time (date, time, stamp, build, deployed, created, updated, rendered, generated, restarted).
#    Other random-looking values are left to `syncguard determinism` (SG302), which renders twice;
#  - template actions left unrendered in a value ({{ randAlphaNum 16 }}, {{ now }}, genCA,
#    genSelfSignedCert, uuidv4, randAscii, htpasswd, ...): what a raw Helm template file, or a
#    kustomize or plugin input that is rendered later, shows before rendering. Every render
#    produces a new value (Argo CD's Helm docs, "Random Data"; argo-cd#14944 proposes the same
#    scan), and if Argo CD applies the file as it is the braces are applied literally. Looked for
#    in labels and annotations (the three places above), data and stringData, caBundle fields and
#    pod-template env values;
# and fields the server owns, usually copied from `kubectl get -o yaml`:
#  - deployment.kubernetes.io/revision, kubectl.kubernetes.io/last-applied-configuration;
#  - metadata.resourceVersion and metadata.uid (the apply is rejected: conflict, uid mismatch),
#    metadata.managedFields (server-side apply rejects it), metadata.creationTimestamp (non-null),
#    metadata.generation, metadata.selfLink.
# `status` is not reported: Argo CD ignores it in the comparison for most kinds.
#
# Where: metadata, spec.template.metadata and spec.jobTemplate.spec.template.metadata. Which
# inputs: manifests (`syncguard check`) get every check; an admission request gets the
# annotation and label checks, and only for values that differ from input.old (an UPDATE that
# merely carries an existing value along is not news); live objects (audit) are not judged,
# since every live object has server-owned fields. Hooks are exempt from the volatile-value
# checks (they are re-created on every sync and are not part of sync status), and objects
# Argo CD never applies (hook: Skip) from everything.
package syncguard.rules.volatile_values

meta := {
	"id": "SG301",
	"title": "Volatile or server-owned values in desired state",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"A value that changes on every render (a timestamp, a random rollme token) or that the server owns",
		"(resourceVersion, the Deployment revision) never matches the live object: the Application stays OutOfSync,",
		"auto-sync re-applies it in a loop and pod templates roll the pods every time; a stale resourceVersion",
		"or uid makes the apply fail outright.",
	]),
	"docs": "docs/rules/SG301.md",
}

# ---- volatile values (manifests and admission) ----

violations contains {"msg": msg, "path": e.pointer} if {
	some e in _volatile_entries
	e.key == "kubectl.kubernetes.io/restartedAt"
	msg := sprintf(
		"%s sets kubectl.kubernetes.io/restartedAt in %s: that annotation is what `kubectl rollout restart` writes on the live object; in the manifest it restarts the pods whenever its value changes (on every sync if a template renders the current time, keeping the Application OutOfSync) and it undoes the next manual restart. Remove it from the manifest; restart pods with `kubectl rollout restart`.",
		[_subject, e.field_name],
	)
}

violations contains {"msg": msg, "path": e.pointer} if {
	some e in _volatile_entries
	contains(lower(e.key), "rollme")
	not _constant_rollme(e.value)
	msg := sprintf(
		"%s sets %s in %s, Helm's rollme trick: {{ randAlphaNum 5 }} renders a new value every time, so Argo CD sees the Application OutOfSync after every refresh and rolls the pods on every sync. Use a checksum of what the pods should follow instead (checksum/config: {{ include (print $.Template.BasePath \"/configmap.yaml\") . | sha256sum }}), which changes only when that does.",
		[_subject, e.key, e.field_name],
	)
}

violations contains {"msg": msg, "path": e.pointer} if {
	some e in _volatile_entries
	not e.key in _not_render_time
	not contains(lower(e.key), "rollme")
	_timestamp_like(e.key, e.value)
	msg := sprintf(
		"%s sets a timestamp in the %s %s %s: \"%s\" differs on every render if a template produces the current time (Helm now, date), and then Argo CD sees the Application OutOfSync after every refresh and auto-sync re-applies it in a loop%s. Render a stable value (the commit, the chart or image version) or remove it; if the value is fixed in Git on purpose, exempt this object.",
		[_subject, e.location_name, e.kind_word, e.key, e.value, _rollout_note(e)],
	)
}

# A rollme annotation is judged by its value, not its name: charts also write
# `rollme: {{ .Release.Revision | quote }}`, which rolls the pods on each `helm upgrade` but is
# always "1" under Argo CD (helm template renders revision 1 every time), so it never changes.
# A rendered value of digits only is such a counter; randAlphaNum's letters are what changes.
_constant_rollme(value) if {
	is_string(value)
	value != ""
	not contains(value, "{{")
	regex.match(`^[0-9]+$`, value)
}

# Template actions that return a new value on every render, left unrendered in the manifest.
violations contains {"msg": msg, "path": e.pointer} if {
	# cheap first tests: Rust found a template action somewhere in the object; then the same as
	# _template_entries' (the audit test and _volatile_checks)
	input.has_template == true
	not input.context.source == "audit"
	_volatile_checks
	some e in _template_entries
	msg := sprintf(
		"%s has an unrendered template in %s: \"%s\" calls %s, which returns a new value on every render. Argo CD renders the manifests again on every refresh (helm template for a chart), so once this is rendered the Application is OutOfSync after every refresh and auto-sync re-applies it in a loop%s (Argo CD's Helm docs, \"Random Data\"); if Argo CD applies this file without rendering it, the braces themselves are applied. Fix: %s.",
		[_subject, e.where, e.value, concat(", ", e.functions), _template_rollout_note(e), _template_fix(e.functions)],
	)
}

_template_rollout_note(e) := ", rolling the pods each time" if startswith(e.pointer, "/spec/template/")

else := ""

# {"pointer", "where", "value", "functions"} for every string value holding a template action that
# calls a render-time random or clock function.
_template_entries contains {"pointer": c.pointer, "where": c.where, "value": c.value, "functions": functions} if {
	input.has_template == true
	not input.context.source == "audit"
	_volatile_checks
	_judged
	some c in _template_candidates
	functions := _volatile_functions(c.value)
	count(functions) > 0
	_changed_value(c)
}

# Labels and annotations.
_template_candidates contains {"pointer": sprintf("%s/%s/%s", [loc.pointer, field, _escape(key)]), "where": sprintf("the %s %s %s", [loc.dotted, trim_suffix(field, "s"), key]), "value": value, "path": array.concat(loc.path, [field, key])} if {
	some loc in _locations
	metadata := object.get(_resource, loc.path, null)
	is_object(metadata)
	some field in ["annotations", "labels"]
	values := object.get(metadata, field, {})
	is_object(values)
	some key, value in values
	is_string(value)
	contains(value, "{{")

	# the restartedAt and rollme findings above already name these
	key != "kubectl.kubernetes.io/restartedAt"
	not contains(lower(key), "rollme")
}

# ConfigMap and Secret data: single-line values only. A multi-line value is a file whose
# template actions belong to the tool that reads it (an Alertmanager or Grafana template, Rego
# rules quoting Helm, as in syncguard's own chart), not to the render.
_template_candidates contains {"pointer": sprintf("/%s/%s", [field, _escape(key)]), "where": sprintf("%s.%s", [field, key]), "value": value, "path": [field, key]} if {
	some field in ["data", "stringData"]
	values := object.get(_resource, field, {})
	is_object(values)
	some key, value in values
	is_string(value)
	contains(value, "{{")
	not contains(value, "\n")
}

# caBundle of webhook configurations, APIServices and CRD conversion webhooks.
_template_candidates contains {"pointer": sprintf("/webhooks/%d/clientConfig/caBundle", [i]), "where": sprintf("webhooks[%d].clientConfig.caBundle", [i]), "value": value, "path": ["webhooks", i, "clientConfig", "caBundle"]} if {
	webhooks := object.get(_resource, "webhooks", [])
	is_array(webhooks)
	some i, webhook in webhooks
	is_object(webhook)
	value := object.get(webhook, ["clientConfig", "caBundle"], null)
	is_string(value)
	contains(value, "{{")
}

_template_candidates contains {"pointer": concat("", ["/", concat("/", path)]), "where": concat(".", path), "value": value, "path": path} if {
	some path in [["spec", "caBundle"], ["spec", "conversion", "webhook", "clientConfig", "caBundle"]]
	value := object.get(_resource, path, null)
	is_string(value)
	contains(value, "{{")
}

# Pod-template env values.
_template_candidates contains {"pointer": sprintf("/spec/template/spec/%s/%d/env/%d/value", [list, i, j]), "where": sprintf("spec.template.spec.%s[%d].env[%d] (%s)", [list, i, j, _str(env, "name")]), "value": value, "path": ["spec", "template", "spec", list, i, "env", j, "value"]} if {
	some list in ["containers", "initContainers"]
	containers := object.get(_resource, ["spec", "template", "spec", list], [])
	is_array(containers)
	some i, container in containers
	is_object(container)
	envs := object.get(container, "env", [])
	is_array(envs)
	some j, env in envs
	is_object(env)
	value := object.get(env, "value", null)
	is_string(value)
	contains(value, "{{")
}

# Sprig/Helm functions whose result differs on every call, named in a template action.
_volatile_functions(value) := sort([f | some f in names]) if {
	names := {f |
		some action in regex.find_n(`\{\{[^}]*\}\}`, value, -1)
		body := concat("", [" ", trim(trim_suffix(trim_prefix(action, "{{"), "}}"), "-"), " "])
		some m in regex.find_all_string_submatch_n(_volatile_function_pattern, body, -1)
		f := m[1]
	}
}

_volatile_function_pattern := `[\s(|](now|randAlphaNum|randAlpha|randNumeric|randAscii|randBytes|randInt|shuffle|uuidv4|genCA|genCAWithKey|genPrivateKey|genSelfSignedCert|genSelfSignedCertWithKey|genSignedCert|genSignedCertWithKey|htpasswd|bcrypt|encryptAES)[\s)|]`

_template_fix(functions) := concat("; ", [fix |
	some family in ["certificate", "random", "time"]
	_in_family(family, functions)
	fix := _family_fix[family]
])

_in_family("certificate", functions) if {
	some f in functions
	startswith(f, "gen")
}

_in_family("random", functions) if {
	some f in functions
	not startswith(f, "gen")
	f != "now"
}

_in_family("time", functions) if "now" in functions

_family_fix := {
	"certificate": "issue the certificate outside the render (cert-manager: a Certificate, and cainjector for a caBundle) instead of generating it in the template",
	"random": "create the secret value once outside the render (by hand, an ExternalSecret or a SealedSecret) and reference it, or pass it in as a value; Helm's lookup fallback does not help, Argo CD renders without cluster access (argo-cd#5202)",
	"time": "render a stable value (the chart version, the commit) instead of the current time",
}

# On an admission UPDATE only values that differ from the object being replaced are news.
_changed_value(_) if not _admission

_changed_value(c) if {
	_admission
	not _same_value_in_old(c)
}

_same_value_in_old(c) if {
	is_object(input.old)
	object.get(input.old, c.path, null) == c.value
}

# Keys handled above, or set by people to a fixed time on purpose.
_not_render_time := {"kubectl.kubernetes.io/restartedAt", "argocd.argoproj.io/deletion-approved"}

_rollout_note(e) := ", rolling the pods each time" if e.location != "/metadata"

else := ""

# A date-time at the start of the value: RFC 3339, or Go's time.String() that Helm's `now` renders
# ("2026-08-08 00:18:00.123456 +0000 UTC").
_timestamp_like(_, value) if {
	substring(value, 4, 1) == "-" # cheap first test: the pattern needs it, and regex.match is not cheap
	regex.match(`^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}`, value)
}

# Label-safe forms, only under a key that names a time.
_timestamp_like(key, value) if {
	count(value) >= 10 # cheap first test: every pattern below needs 10 ASCII characters or more
	_time_key(key)
	some pattern in [
		`^[0-9]{10}([0-9]{3})?$`, # epoch seconds or milliseconds
		`^[0-9]{8}T?[0-9]{4,6}Z?$`, # 20260808T001800Z
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}([T_.-][0-9]{2}[.-]?[0-9]{2}([.-]?[0-9]{2})?Z?)?$`, # 2026-08-08, 2026-08-08T00-18-00Z
	]
	regex.match(pattern, value)
}

_time_key(key) if {
	parts := split(key, "/")
	regex.match(`(time|date|stamp|build|deployed|created|updated|rendered|generated|restarted)`, lower(parts[count(parts) - 1]))
}

# {"location", "field", "field_name", "key", "value", "pointer"} for every string annotation or
# label value that is new in this request.
_volatile_entries contains entry if {
	# Cheapest tests first: most objects have no suspect entry, so _entries (which only looks at
	# labels and annotations and cannot fail) comes before _judged. The audit test is _judged's
	# `_source != "audit"`, repeated so that live objects do not pay for _entries.
	not input.context.source == "audit"
	_volatile_checks
	some entry in _entries
	_judged
	_changed(entry)
}

_volatile_checks if object.get(_sync, "is_hook", false) != true

_entries contains {
	"location": loc.pointer,
	"path": loc.path,
	"field": field,
	"field_name": sprintf("%s.%s", [loc.dotted, field]),
	"location_name": loc.dotted,
	"kind_word": trim_suffix(field, "s"),
	"key": key,
	"value": value,
	"pointer": sprintf("%s/%s/%s", [loc.pointer, field, _escape(key)]),
} if {
	some loc in _locations

	# null, not {}: an absent block ends here, without looking for its annotations and labels
	metadata := object.get(_resource, loc.path, null)
	is_object(metadata)
	some field in ["annotations", "labels"]
	values := object.get(metadata, field, {})
	is_object(values)
	some key, value in values
	is_string(value)

	# Cheap filter first: this runs on every admitted object, and building the entry (three
	# sprintf) for every label would cost more than all the checks below.
	_suspect(key, value)
}

# Could one of the violations above report this key/value? (restartedAt, rollme, a timestamp.)
_suspect(key, _) if key == "kubectl.kubernetes.io/restartedAt"

_suspect(key, _) if contains(lower(key), "rollme")

_suspect(key, value) if {
	_starts_with_digit(value)
	_timestamp_like(key, value)
}

_starts_with_digit(value) if {
	first := substring(value, 0, 1)
	first >= "0"
	first <= "9"
}

_locations := [
	{"path": ["metadata"], "pointer": "/metadata", "dotted": "metadata"},
	{"path": ["spec", "template", "metadata"], "pointer": "/spec/template/metadata", "dotted": "spec.template.metadata"},
	{
		"path": ["spec", "jobTemplate", "spec", "template", "metadata"],
		"pointer": "/spec/jobTemplate/spec/template/metadata",
		"dotted": "spec.jobTemplate.spec.template.metadata",
	},
]

# On an admission UPDATE only values that differ from the object being replaced are news.
_changed(_) if not _admission

_changed(entry) if {
	_admission
	not _same_in_old(entry)
}

_same_in_old(entry) if {
	is_object(input.old)
	old_values := object.get(input.old, array.concat(entry.path, [entry.field]), {})
	is_object(old_values)
	object.get(old_values, entry.key, null) == entry.value
}

# ---- server-owned fields (manifests only) ----

violations contains {"msg": msg, "path": path, "severity": f.severity} if {
	# cheap first tests, the same as _source_is_manifest (OPA makes `not x in s` undefined when x is)
	not input.context.source == "admission"
	not input.context.source == "audit"
	_judged
	_source_is_manifest
	some field, f in _server_fields
	value := object.get(_metadata, field, null)
	not value in {null, "", [], {}} # what `kubectl create --dry-run -o yaml` prints is harmless
	path := concat("/", ["/metadata", field])
	msg := sprintf("%s sets metadata.%s, which the API server owns: %s. Remove it (it is usually copied from `kubectl get -o yaml`).", [_subject, field, f.effect])
}

violations contains {"msg": msg, "path": path, "severity": a.severity} if {
	# cheap first tests, the same as _source_is_manifest (OPA makes `not x in s` undefined when x is)
	not input.context.source == "admission"
	not input.context.source == "audit"
	_judged
	_source_is_manifest
	some key, a in _server_annotations
	object.get(_annotations, key, null) != null
	path := concat("/", ["/metadata/annotations", _escape(key)])
	msg := sprintf("%s sets the %s annotation, which %s. Remove it (it is usually copied from `kubectl get -o yaml`).", [_subject, key, a.effect])
}

_server_fields := {
	"resourceVersion": {
		"severity": "high",
		"effect": "an apply carrying a stale resourceVersion is rejected with a conflict (\"the object has been modified\"), so syncs fail as soon as the live object changes",
	},
	"uid": {
		"severity": "high",
		"effect": "applied to an object with another uid (re-created, or in another cluster) the update is rejected",
	},
	"managedFields": {
		"severity": "medium",
		"effect": "server-side apply rejects it (metadata.managedFields must be nil) and a client-side apply overwrites every manager's field ownership",
	},
	"creationTimestamp": {
		"severity": "low",
		"effect": "the value written is ignored and never matches the live object",
	},
	"generation": {
		"severity": "low",
		"effect": "the value written is ignored and never matches the live object",
	},
	"selfLink": {
		"severity": "low",
		"effect": "the value written is ignored (the field is deprecated)",
	},
}

_server_annotations := {
	"deployment.kubernetes.io/revision": {
		"severity": "medium",
		"effect": "the Deployment controller owns and bumps on every rollout: the manifest never matches the live object (OutOfSync) and every sync writes a stale number back",
	},
	"kubectl.kubernetes.io/last-applied-configuration": {
		"severity": "medium",
		"effect": "is kubectl's record of the previous client-side apply: a copy in the manifest makes the next apply merge against a stale snapshot, so fields removed since then are not removed",
	},
}

# ---- context ----

# Objects Argo CD never applies (hook: Skip, garbage hooks) and deletions are not judged, nor are
# live objects.
_judged if {
	_applies
	not _never_applied
	_source != "audit"
}

_never_applied if {
	is_object(input.sync)
	count(_list("phases")) == 0
	not "PreDelete" in _list("hook_types")
	not "PostDelete" in _list("hook_types")
}

_admission if _source == "admission"

_source_is_manifest if not _source in {"admission", "audit"}

default _source := ""

_source := s if {
	context := object.get(input, "context", {})
	is_object(context)
	s := object.get(context, "source", "")
}

default _annotations := {}

_annotations := a if {
	a := object.get(_metadata, "annotations", {})
	is_object(a)
}

# RFC 6901: "~" -> "~0", "/" -> "~1".
_escape(key) := replace(replace(key, "~", "~0"), "/", "~1")

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

# "Deployment shop/web"
_subject := sprintf("%s %s", [_kind, _qualified_name])
