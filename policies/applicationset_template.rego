# SG610: an ApplicationSet whose templates or generators cannot generate what they say.
#
# An ApplicationSet's templates are rendered by one of two engines: fasttemplate (the default),
# which only replaces `{{name}}` tags that name a parameter and leaves every other tag as
# written, or Go's text/template with Sprig (`goTemplate: true`), which fails on what it cannot
# parse or, with `goTemplateOptions: [missingkey=error]`, on a missing parameter. A template
# written for the other engine, a parameter no generator gives, or a generator Argo CD cannot
# evaluate all generate something else than what was meant: braces in Application names and
# paths, `<no value>`, or no Application at all. Rust reads the ApplicationSet and its templates
# (`input.appset`, policies/README.md); this rule judges. Findings, each at the field:
#  1. Go template syntax (`{{ .path.basename }}`, pipes, `{{-`) without `goTemplate: true`;
#  2. fasttemplate syntax (`{{path.basename}}`) with `goTemplate: true`;
#  3. a template the engine in force cannot parse (Go's parse error, fasttemplate's missing `}}`);
#  4. a `goTemplateOptions` entry Go refuses (it panics: before 2.14 the controller crashes);
#  5. `goTemplateOptions` without `goTemplate: true` (info: never applied);
#  6. a parameter a template reads that a generator rendering it does not give (checked only for
#     generators whose parameters are all known: not git files, plugins, cluster decision
#     resources or `elementsYaml`);
#  7. a generator naming no kind (Argo CD generates nothing from it), a generator a matrix or
#     merge combines naming none or two, a matrix without exactly two generators, a merge with
#     fewer than two or no `mergeKeys`;
#  8. a field the ApplicationSet CRD does not declare (the API server prunes it), or of a type it
#     refuses.
package syncguard.rules.applicationset_template

meta := {
	"id": "SG610",
	"title": "ApplicationSet template or generator Argo CD cannot render as written",
	"severity": "medium",
	"action": "warn",
	"why": concat(" ", [
		"An ApplicationSet's templates are rendered by fasttemplate, which leaves every tag it does not",
		"know as written, or by Go's text/template (goTemplate: true), which fails on what it cannot parse.",
		"A template written for the other engine, a parameter no generator gives, or a generator Argo CD",
		"cannot evaluate generate Applications with braces or <no value> in their names and paths, or none.",
	]),
	"docs": "docs/rules/SG610.md",
	"kinds": ["ApplicationSet"], # only ApplicationSets carry input.appset
}

# 1. Go template syntax without goTemplate: fasttemplate leaves it as written.
violations contains {"msg": msg, "path": pointer} if {
	input.resource.kind == "ApplicationSet"
	_facts.engine == "fasttemplate"
	some pointer in {f.pointer | some f in _foreign; f.syntax == "go"}
	tags := sort({f.tag | some f in _foreign; f.syntax == "go"; f.pointer == pointer})
	msg := sprintf(
		"%s: %s in %s is Go template syntax, but goTemplate is not true: fasttemplate only replaces {{name}} tags that name a parameter, so Argo CD leaves %s as written in every Application it generates%s (argo-cd#16819). Fix: set spec.goTemplate: true (with goTemplateOptions: [\"missingkey=error\"]) and write every tag the Go way%s.",
		[_subject, concat(", ", tags), _field(pointer), _them(tags), _where(pointer), _fast_form(tags[0])],
	)
}

# 2. fasttemplate syntax with goTemplate: Go fails on it.
violations contains {"msg": msg, "path": pointer} if {
	input.resource.kind == "ApplicationSet"
	_facts.engine == "go"
	some pointer in {f.pointer | some f in _foreign; f.syntax == "fasttemplate"}
	tags := sort({f.tag | some f in _foreign; f.syntax == "fasttemplate"; f.pointer == pointer})
	msg := sprintf(
		"%s: %s in %s is fasttemplate syntax, but goTemplate is true: Go's text/template reads %s as a function call%s, so every generation of this ApplicationSet fails and Argo CD creates or updates none of its Applications (argo-cd#19106). Fix: write%s, or drop goTemplate if every tag is fasttemplate.",
		[_subject, concat(", ", tags), _field(pointer), _function_of(tags[0]), _go_failure(pointer), _go_form(tags[0])],
	)
}

# 3. A template the engine cannot parse (unless finding 2 already explains it).
violations contains {"msg": msg, "path": e.pointer} if {
	input.resource.kind == "ApplicationSet"
	some e in _list(_facts, "template_errors")
	is_object(e)
	not _fast_syntax_at(e.pointer)
	msg := sprintf(
		"%s: %s %s (%s): every generation of this ApplicationSet fails and Argo CD creates or updates none of its Applications. Fix the template%s.",
		[_subject, _field(e.pointer), _does_not_parse, _str(e, "message"), _parse_fix],
	)
}

# 4. A goTemplateOptions entry Go refuses.
violations contains {"msg": msg, "path": o.pointer, "severity": severity} if {
	input.resource.kind == "ApplicationSet"
	_facts.engine == "go"
	some o in _list(_facts, "go_template_options")
	is_object(o)
	o.valid == false
	severity := _option_severity
	msg := sprintf(
		"%s: goTemplateOptions %q is not an option of Go templates: Go's text/template panics on it (\"unrecognized option: %s\")%s (argo-cd#20935). Fix: use missingkey=error (fail on a missing parameter), missingkey=zero or missingkey=default.",
		[_subject, _str(o, "option"), _str(o, "option"), _option_effect],
	)
}

# 5. goTemplateOptions without goTemplate: never applied.
violations contains {"msg": msg, "path": "/spec/goTemplateOptions", "severity": "info", "action": "audit"} if {
	input.resource.kind == "ApplicationSet"
	_facts.engine == "fasttemplate"
	options := [_str(o, "option") | some o in _list(_facts, "go_template_options"); is_object(o)]
	count(options) > 0
	msg := sprintf(
		"%s: goTemplateOptions (%s) has no effect: goTemplate is not true, so fasttemplate renders the templates and the options are never applied. Fix: set spec.goTemplate: true and write the templates the Go way, or remove goTemplateOptions.",
		[_subject, concat(", ", options)],
	)
}

# 6. A parameter a template reads that a generator rendering it does not give.
violations contains {"msg": msg, "path": pointer} if {
	input.resource.kind == "ApplicationSet"
	some pair in {[m[0], m[1]] | some m in _missing}
	pointer := pair[0]
	name := pair[1]
	lacking := sort({i | some m in _missing; m[0] == pointer; m[1] == name; i := m[2]})
	tag := _tag_of(pointer, name)
	msg := sprintf(
		"%s: %s in %s reads the parameter %s, which %s %s not give: %s. %s. Fix: correct the parameter's name, or give it (a list element's key, the generator's values).",
		[_subject, tag, _field(pointer), name, _generators_text(lacking), _does(lacking), _missing_effect(tag, name, pointer), _gives_all(lacking)],
	)
}

# 7a. A generator naming no kind.
violations contains {"msg": msg, "path": g.pointer} if {
	input.resource.kind == "ApplicationSet"
	some g in _list(_facts, "generators")
	is_object(g)
	count(_list(g, "kinds")) == 0
	msg := sprintf(
		"%s: %s names no generator kind%s: %s Fix: name one of list, clusters, git, matrix, merge, scmProvider, pullRequest, clusterDecisionResource, plugin.",
		[_subject, _field(g.pointer), _dropped_kinds(g.pointer), _no_kind_effect(g)],
	)
}

# 7b. A generator a matrix or merge combines naming two kinds.
violations contains {"msg": msg, "path": g.pointer} if {
	input.resource.kind == "ApplicationSet"
	some g in _list(_facts, "generators")
	is_object(g)
	object.get(g, "depth", 0) > 0
	count(_list(g, "kinds")) > 1
	msg := sprintf(
		"%s: %s names %d generator kinds (%s) inside a matrix or merge: Argo CD fails the whole generation (\"found more than one generator in matrix.Generators\") and creates or updates none of this ApplicationSet's Applications. Fix: give each kind its own generator.",
		[_subject, _field(g.pointer), count(_list(g, "kinds")), concat(", ", _list(g, "kinds"))],
	)
}

# 7c. A matrix without exactly two generators, a merge with fewer than two or no mergeKeys.
violations contains {"msg": msg, "path": g.pointer} if {
	input.resource.kind == "ApplicationSet"
	some g in _list(_facts, "generators")
	is_object(g)
	some kind in _list(g, "kinds")
	problem := _combination_problem(kind, g)
	msg := sprintf(
		"%s: the %s generator %s %s: Argo CD fails the whole generation (\"%s\") and creates or updates none of this ApplicationSet's Applications. Fix: %s.",
		[_subject, kind, _field(g.pointer), problem[0], problem[1], problem[2]],
	)
}

# 8a. A field the CRD does not declare (those of a generator naming no kind are in 7a).
violations contains {"msg": msg, "path": pointer} if {
	input.resource.kind == "ApplicationSet"
	some pointer in _list(_facts, "unknown")
	is_string(pointer)
	not _in_kindless_generator(pointer)
	msg := sprintf(
		"%s: %s is not a field of an ApplicationSet (Argo CD's CRD does not declare it there). The API server prunes it, so Argo CD never sees the setting and it does nothing; an Application that syncs this ApplicationSet also shows it OutOfSync after every sync. Fix: correct its spelling or move it where the CRD has it.",
		[_subject, _field(pointer)],
	)
}

# 8b. A field of a type the CRD refuses.
violations contains {"msg": msg, "path": m.pointer} if {
	input.resource.kind == "ApplicationSet"
	some m in _list(_facts, "malformed")
	is_object(m)
	msg := sprintf(
		"%s: %s must be a %s: the API server refuses the ApplicationSet (%s: Invalid value), so the sync that applies it fails. Fix: write it as a %s.",
		[_subject, _field(m.pointer), _str(m, "expected"), _field(m.pointer), _str(m, "expected")],
	)
}

# ---- facts ----

default _facts := {}

_facts := f if {
	f := input.appset
	is_object(f)
}

_foreign := [f | some f in _list(_facts, "foreign_syntax"); is_object(f)]

_fast_syntax_at(pointer) if {
	some f in _foreign
	f.syntax == "fasttemplate"
	f.pointer == pointer
}

_provided := [p | some p in _list(_facts, "parameters_provided")]

# [pointer, name, generator index] for every read of a parameter a generator rendering the
# template does not give.
_missing contains [u.pointer, u.name, i] if {
	some u in _list(_facts, "parameters_used")
	is_object(u)
	_reported(u)
	some i in _list(u, "generators")
	p := _provided[i]
	is_object(p)
	object.get(p, "open", true) == false
	not _gives(p, u.name)
}

# A read that fails or shows: plain, or any read but one under a check with missingkey=error.
_reported(u) if u.guard == "none"

_reported(u) if {
	_facts.missing_key == "error"
	u.guard == "default"
}

_reported(u) if {
	_facts.missing_key == "error"
	u.guard == "condition"
}

_gives(p, name) if name in _list(p, "names")

_gives(p, name) if {
	some prefix in _list(p, "prefixes")
	startswith(name, prefix)
}

_tag_of(pointer, name) := tag if {
	tags := sort({u.tag | some u in _list(_facts, "parameters_used"); is_object(u); u.pointer == pointer; u.name == name})
	tag := tags[0]
	is_string(tag)
} else := sprintf("{{%s}}", [name])

# "the generator spec.generators[1] (clusters)", "the generators spec.generators[0] (list) and ..."
_generators_text(indexes) := sprintf("the generator %s", [_generator_names(indexes)]) if count(indexes) == 1

else := sprintf("the generators %s", [_generator_names(indexes)])

_generator_names(indexes) := concat(" and ", [_generator_name(i) | some i in indexes])

_generator_name(i) := sprintf("%s (%s)", [_field(p.pointer), concat(", ", _list(p, "kinds"))]) if {
	p := _provided[i]
	is_object(p)
} else := sprintf("spec.generators[%v]", [i])

_does(indexes) := "does" if count(indexes) == 1

else := "do"

_gives_all(indexes) := sprintf("It gives %s", [_gives_text(indexes[0])]) if count(indexes) == 1

else := concat("; ", [sprintf("%s gives %s", [_generator_name(i), _gives_text(i)]) | some i in indexes])

_gives_text(i) := text if {
	p := _provided[i]
	names := _list(p, "names")
	prefixes := [_prefix_text(x) | some x in _list(p, "prefixes")]
	all := array.concat(names, prefixes)
	count(all) > 0
	shown := array.slice(all, 0, 12)
	more := _more(count(all) - count(shown))
	text := sprintf("%s%s", [concat(", ", shown), more])
} else := "no parameter"

# "metadata.labels." -> "metadata.labels.<key>", "path[" -> "path[N]"
_prefix_text(prefix) := concat("", [prefix, "N]"]) if endswith(prefix, "[")

else := concat("", [prefix, "<key>"])

_more(n) := "" if n <= 0

else := sprintf(" and %d more", [n])

_missing_effect(tag, _, pointer) := sprintf("fasttemplate leaves %s as written in the Applications it generates%s", [tag, _where(pointer)]) if {
	_facts.engine == "fasttemplate"
}

_missing_effect(_, name, pointer) := sprintf("with goTemplateOptions missingkey=error Go fails on it (map has no entry for key %q), so every generation of this ApplicationSet fails and Argo CD creates or updates none of its Applications%s", [_last(name), _default_note(pointer, name)]) if {
	_facts.engine == "go"
	_facts.missing_key == "error"
}

_missing_effect(_, name, _) := sprintf("Go renders <no value> in its place (or fails where a function needs the value), so the Applications it generates hold <no value> where %s was meant", [name]) if {
	_facts.engine == "go"
	_facts.missing_key != "error"
}

_default_note(pointer, name) := " (default does not help: the read itself fails, argo-cd#20594)" if {
	count([u | some u in _list(_facts, "parameters_used"); is_object(u); u.pointer == pointer; u.name == name; u.guard == "default"]) > 0
} else := ""

_last(name) := parts[count(parts) - 1] if {
	parts := split(name, ".")
	count(parts) > 0
} else := name

_in_kindless_generator(pointer) if {
	some g in _list(_facts, "generators")
	is_object(g)
	count(_list(g, "kinds")) == 0
	startswith(pointer, concat("", [g.pointer, "/"]))
	not contains(trim_prefix(pointer, concat("", [g.pointer, "/"])), "/")
}

# " (lists is not a generator kind: the API server drops it)"
_dropped_kinds(pointer) := sprintf(" (%s %s not a generator kind: the API server drops %s)", [concat(", ", keys), _is_are(keys), _it_them(keys)]) if {
	prefix := concat("", [pointer, "/"])
	keys := sort([k |
		some u in _list(_facts, "unknown")
		is_string(u)
		startswith(u, prefix)
		k := trim_prefix(u, prefix)
		not contains(k, "/")
	])
	count(keys) > 0
} else := ""

_is_are(keys) := "is" if count(keys) == 1

else := "are"

_it_them(keys) := "it" if count(keys) == 1

else := "them"

_no_kind_effect(g) := sprintf("Argo CD generates nothing from it and only logs \"ApplicationSet %s contains unrecognized generators\"; the other generators still generate their Applications.", [_name]) if {
	object.get(g, "depth", 0) == 0
}

_no_kind_effect(g) := "inside a matrix or merge, Argo CD fails the whole generation (\"child generator generated no parameters\") and creates or updates none of this ApplicationSet's Applications." if {
	object.get(g, "depth", 0) > 0
}

_combination_problem(kind, g) := [sprintf("combines %d generators", [n]), msg, "combine exactly two generators (nest a matrix for more)"] if {
	kind == "matrix"
	n := object.get(g, "children", 0)
	n != 2
	msg := _matrix_error(n)
}

_combination_problem(kind, g) := [sprintf("combines %d generator(s)", [n]), "found less than two generators, Merge requires two or more", "merge two or more generators"] if {
	kind == "merge"
	n := object.get(g, "children", 0)
	n < 2
}

_combination_problem(kind, g) := ["has no mergeKeys", "no merge keys were specified, Merge requires at least one", "list the parameters the merged sets are matched on in mergeKeys"] if {
	kind == "merge"
	object.get(g, "children", 0) >= 2
	count(_list(g, "merge_keys")) == 0
}

_matrix_error(n) := "found less than two generators, Matrix support only two" if n < 2

_matrix_error(n) := "found more than two generators, Matrix support only two" if n > 2

_does_not_parse := "does not parse as a Go template" if _facts.engine == "go"

_does_not_parse := "does not parse as a fasttemplate template" if _facts.engine != "go"

_parse_fix := " (Go's text/template syntax with Sprig's functions; every {{ needs its }})" if _facts.engine == "go"

_parse_fix := ": every {{ needs its }}" if _facts.engine != "go"

_go_failure(pointer) := sprintf(" and fails (%s)", [messages[0]]) if {
	messages := [e.message | some e in _list(_facts, "template_errors"); is_object(e); e.pointer == pointer; is_string(e.message)]
	count(messages) > 0
} else := " and fails when it runs"

# "{{path.basename}}" -> "path", "{{values.tier}}" -> "values".
_function_of(tag) := head if {
	inner := trim_space(trim(tag, "{}"))
	parts := regex.split(`[.\[]`, inner)
	head := parts[0]
	head != ""
} else := tag

# " {{ .path.basename }}" for a plain parameter name, else "" (the fix then says it generally).
_go_form(tag) := sprintf(" {{ .%s }} instead (every parameter starts with a dot)", [inner]) if {
	inner := trim_space(trim(tag, "{}"))
	regex.match(`^[A-Za-z_][A-Za-z0-9_.]*$`, inner)
} else := " the parameter with a leading dot ({{ .name }}; git path segments as {{ index .path.segments 0 }})"

# ", or keep fasttemplate and write {{path.basename}}" for a plain Go field tag (git's Go
# `.path.path` is fasttemplate's `path`; `.path.segments` has no fasttemplate form).
_fast_form(tag) := sprintf(", or keep fasttemplate and write {{%s}}", [_fast_name(trim_prefix(inner, "."))]) if {
	inner := trim_space(trim(trim_space(trim(tag, "{}")), "-"))
	regex.match(`^\.[A-Za-z_][A-Za-z0-9_.]*$`, inner)
	not contains(inner, "segments")
} else := ""

_fast_name(name) := trim_suffix(name, ".path") if endswith(name, "path.path")

else := name

_them(tags) := "it" if count(tags) == 1

else := "them"

# What the literal braces do where they are.
_where(pointer) := ": an Application name with braces is invalid, so Argo CD cannot create the Application (metadata.name: Invalid value)" if {
	endswith(pointer, "/metadata/name")
} else := ", and the Applications use the braces literally (a path, a namespace, a value that does not exist)"

_option_severity := "high" if _release < 214

else := "medium"

_option_effect := ": before Argo CD 2.14 the panic crashes the ApplicationSet controller, which restarts and reconciles no ApplicationSet in the meantime" if {
	_release < 214
} else := ": Argo CD recovers from the panic, but the reconcile fails and the ApplicationSet generates no Application"

# "spec.generators[0].list.template.metadata.name" from "/spec/generators/0/list/template/metadata/name".
_field(pointer) := concat("", [part |
	some i, token in split(trim_prefix(pointer, "/"), "/")
	part := _field_part(i, replace(replace(token, "~1", "/"), "~0", "~"))
])

_field_part(i, token) := sprintf("[%s]", [token]) if {
	i > 0
	regex.match(`^[0-9]+$`, token)
}

_field_part(i, token) := token if i == 0

_field_part(i, token) := sprintf(".%s", [token]) if {
	i > 0
	not regex.match(`^[0-9]+$`, token)
}

# The Argo CD release judged for (major * 100 + minor); the newest when absent.
default _release := 9999

_release := r if {
	is_object(input.argocd)
	r := input.argocd.release
	is_number(r)
}

_list(obj, key) := v if {
	is_object(obj)
	v := object.get(obj, key, [])
	is_array(v)
} else := []

# ---- input helpers (the same in every rule file, trimmed to what this rule uses, so that each
# rule file stands alone) ----

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

_namespace := _str(_metadata, "namespace")

default _display_name := "(unnamed)"

_display_name := _name if _name != ""

_qualified_name := concat("/", [_namespace, _display_name]) if _namespace != ""

_qualified_name := _display_name if _namespace == ""

# "ApplicationSet argocd/apps"
_subject := sprintf("ApplicationSet %s", [_qualified_name])
