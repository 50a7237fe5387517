# Tests for SG610 (policies/applicationset_template.rego).
#
# Convention (same in every *_test.rego here): tests of policies/<rule>.rego live in package
# syncguard.rules.<rule>_test, import the rule package, use only builtins that OPA and regorus
# both implement, and assert exact counts, paths and messages so that each test fails when the
# rule regresses. The input.appset facts are written out as config::appset::facts computes them
# (`syncguard inputs` prints them).
package syncguard.rules.applicationset_template_test

import data.syncguard.rules.applicationset_template as rule

# The ApplicationSet of argo-cd#16819: a matrix of cluster Secrets and git directories.
appset := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "ApplicationSet",
	"metadata": {"name": "apps", "namespace": "argocd"},
	"spec": {
		"generators": [{"matrix": {"generators": [
			{"clusters": {"selector": {"matchLabels": {"cluster-type": "workload"}}}},
			{"git": {"repoURL": "https://git.example.com/platform/apps.git", "revision": "HEAD", "directories": [{"path": "apps/*"}]}},
		]}}],
		"template": {
			"metadata": {"name": "{{nameNormalized}}-{{path.basenameNormalized}}"},
			"spec": {
				"project": "default",
				"source": {"repoURL": "https://git.example.com/platform/apps.git", "targetRevision": "HEAD", "path": "{{path}}"},
				"destination": {"server": "{{server}}", "namespace": "{{path.basename}}"},
			},
		},
	},
}

matrix_generators := [
	{"pointer": "/spec/generators/0", "kinds": ["matrix"], "depth": 0, "children": 2, "merge_keys": []},
	{"pointer": "/spec/generators/0/matrix/generators/0", "kinds": ["clusters"], "depth": 1, "children": 0, "merge_keys": []},
	{"pointer": "/spec/generators/0/matrix/generators/1", "kinds": ["git"], "depth": 1, "children": 0, "merge_keys": []},
]

fast_matrix := {
	"pointer": "/spec/generators/0",
	"kinds": ["matrix"],
	"names": ["name", "nameNormalized", "path", "path.basename", "path.basenameNormalized", "project", "server"],
	"prefixes": ["metadata.annotations.", "metadata.labels.", "path["],
	"open": false,
}

go_matrix := {
	"pointer": "/spec/generators/0",
	"kinds": ["matrix"],
	"names": [
		"metadata", "metadata.annotations", "metadata.labels", "name", "nameNormalized", "path",
		"path.basename", "path.basenameNormalized", "path.path", "path.segments", "project", "server",
	],
	"prefixes": ["metadata.annotations.", "metadata.labels.", "path.segments."],
	"open": false,
}

use(name, pointer, tag, guard) := {"name": name, "pointer": pointer, "tag": tag, "guard": guard, "generators": [0]}

facts(overrides) := object.union(
	{
		"engine": "fasttemplate",
		"missing_key": "default",
		"go_template_options": [],
		"generators": matrix_generators,
		"parameters_provided": [fast_matrix],
		"parameters_used": [],
		"foreign_syntax": [],
		"template_errors": [],
		"unknown": [],
		"malformed": [],
	},
	overrides,
)

review(f) := review_at(f, 306)

review_at(f, release) := {
	"operation": "CHECK",
	"resource": appset,
	"appset": f,
	"argocd": {"release": release},
	"context": {"source": "check", "dry_run": false},
}

name_pointer := "/spec/template/metadata/name"

test_fasttemplate_tags_every_generator_gives_are_fine if {
	f := facts({"parameters_used": [
		use("nameNormalized", name_pointer, "{{nameNormalized}}", "none"),
		use("path.basenameNormalized", name_pointer, "{{path.basenameNormalized}}", "none"),
		use("path", "/spec/template/spec/source/path", "{{path}}", "none"),
		use("metadata.labels.region", "/spec/template/spec/destination/namespace", "{{metadata.labels.region}}", "none"),
		use("path[1]", "/spec/template/spec/destination/namespace", "{{path[1]}}", "none"),
	]})
	count(rule.violations) == 0 with input as review(f)
}

test_go_syntax_without_go_template_is_left_as_written if {
	# argo-cd#16819: {{.path.basenameNormalized}} without goTemplate.
	f := facts({"foreign_syntax": [{"pointer": name_pointer, "tag": "{{.path.basenameNormalized}}", "syntax": "go"}]})
	v := rule.violations with input as review(f)
	v == {{
		"msg": concat("", [
			"ApplicationSet argocd/apps: {{.path.basenameNormalized}} in spec.template.metadata.name is Go template syntax, ",
			"but goTemplate is not true: fasttemplate only replaces {{name}} tags that name a parameter, ",
			"so Argo CD leaves it as written in every Application it generates: an Application name with braces is invalid, ",
			"so Argo CD cannot create the Application (metadata.name: Invalid value) (argo-cd#16819). ",
			"Fix: set spec.goTemplate: true (with goTemplateOptions: [\"missingkey=error\"]) and write every tag the Go way, ",
			"or keep fasttemplate and write {{path.basenameNormalized}}.",
		]),
		"path": name_pointer,
	}}
}

test_go_syntax_elsewhere_names_every_tag_of_the_field if {
	p := "/spec/template/spec/source/path"
	f := facts({"foreign_syntax": [
		{"pointer": p, "tag": "{{ .path.path | lower }}", "syntax": "go"},
		{"pointer": p, "tag": "{{- .values.dir }}", "syntax": "go"},
	]})
	v := rule.violations with input as review(f)
	count(v) == 1
	some x in v
	x.path == p
	startswith(x.msg, "ApplicationSet argocd/apps: {{ .path.path | lower }}, {{- .values.dir }} in spec.template.spec.source.path is Go template syntax")
	contains(x.msg, "leaves them as written in every Application it generates, and the Applications use the braces literally")

	# Neither tag is a plain field: no fasttemplate spelling is suggested.
	endswith(x.msg, "write every tag the Go way.")
}

test_fasttemplate_syntax_with_go_template_fails_once if {
	# argo-cd#19106: {{appName}} with goTemplate: the parse error is the same finding.
	f := facts({
		"engine": "go",
		"parameters_provided": [go_matrix],
		"foreign_syntax": [{"pointer": name_pointer, "tag": "{{nameNormalized}}", "syntax": "fasttemplate"}],
		"template_errors": [{"pointer": name_pointer, "message": "template: base:1: function \"nameNormalized\" not defined"}],
	})
	v := rule.violations with input as review(f)
	v == {{
		"msg": concat("", [
			"ApplicationSet argocd/apps: {{nameNormalized}} in spec.template.metadata.name is fasttemplate syntax, but goTemplate is true: ",
			"Go's text/template reads nameNormalized as a function call and fails (template: base:1: function \"nameNormalized\" not defined), ",
			"so every generation of this ApplicationSet fails and Argo CD creates or updates none of its Applications (argo-cd#19106). ",
			"Fix: write {{ .nameNormalized }} instead (every parameter starts with a dot), or drop goTemplate if every tag is fasttemplate.",
		]),
		"path": name_pointer,
	}}
}

test_a_fasttemplate_name_that_is_a_sprig_function_fails_when_it_runs if {
	p := "/spec/template/spec/source/path"
	f := facts({
		"engine": "go",
		"parameters_provided": [go_matrix],
		"foreign_syntax": [{"pointer": p, "tag": "{{values.dir}}", "syntax": "fasttemplate"}],
	})
	v := rule.violations with input as review(f)
	count(v) == 1
	some x in v
	contains(x.msg, "reads values as a function call and fails when it runs, so every generation")
}

test_a_template_that_does_not_parse if {
	f := facts({
		"engine": "go",
		"parameters_provided": [go_matrix],
		"template_errors": [{"pointer": "/spec/templatePatch", "message": "template: base:3: unclosed action started at base:2"}],
	})
	v := rule.violations with input as review(f)
	v == {{
		"msg": concat("", [
			"ApplicationSet argocd/apps: spec.templatePatch does not parse as a Go template (template: base:3: unclosed action started at base:2): ",
			"every generation of this ApplicationSet fails and Argo CD creates or updates none of its Applications. ",
			"Fix the template (Go's text/template syntax with Sprig's functions; every {{ needs its }}).",
		]),
		"path": "/spec/templatePatch",
	}}
	fast := facts({"template_errors": [{"pointer": name_pointer, "message": "invalid template: Cannot find end tag=\"}}\""}]})
	w := rule.violations with input as review(fast)
	count(w) == 1
	some x in w
	contains(x.msg, "spec.template.metadata.name does not parse as a fasttemplate template (invalid template: Cannot find end tag")
	endswith(x.msg, "Fix the template: every {{ needs its }}.")
}

test_an_option_go_refuses_crashed_the_controller_before_2_14 if {
	options := [
		{"pointer": "/spec/goTemplateOptions/0", "option": "missingkey=error", "valid": true},
		{"pointer": "/spec/goTemplateOptions/1", "option": "missingkey=eroor", "valid": false},
	]
	f := facts({"engine": "go", "missing_key": "error", "parameters_provided": [go_matrix], "go_template_options": options})
	old := rule.violations with input as review_at(f, 213)
	count(old) == 1
	some o in old
	o.path == "/spec/goTemplateOptions/1"
	o.severity == "high"
	contains(o.msg, "goTemplateOptions \"missingkey=eroor\" is not an option of Go templates: Go's text/template panics on it (\"unrecognized option: missingkey=eroor\"): before Argo CD 2.14 the panic crashes the ApplicationSet controller")
	new := rule.violations with input as review_at(f, 306)
	some n in new
	n.severity == "medium"
	contains(n.msg, "Argo CD recovers from the panic, but the reconcile fails and the ApplicationSet generates no Application (argo-cd#20935)")
}

test_options_without_go_template_are_never_applied if {
	options := [{"pointer": "/spec/goTemplateOptions/0", "option": "missingkey=error", "valid": true}]
	v := rule.violations with input as review(facts({"go_template_options": options}))
	v == {{
		"msg": concat("", [
			"ApplicationSet argocd/apps: goTemplateOptions (missingkey=error) has no effect: goTemplate is not true, ",
			"so fasttemplate renders the templates and the options are never applied. ",
			"Fix: set spec.goTemplate: true and write the templates the Go way, or remove goTemplateOptions.",
		]),
		"path": "/spec/goTemplateOptions",
		"severity": "info",
		"action": "audit",
	}}
}

test_a_parameter_no_generator_gives_stays_as_written_with_fasttemplate if {
	p := "/spec/template/spec/destination/namespace"
	f := facts({"parameters_used": [use("path.basename", p, "{{path.basename}}", "none"), use("namespace", p, "{{namespace}}", "none")]})
	v := rule.violations with input as review(f)
	v == {{
		"msg": concat("", [
			"ApplicationSet argocd/apps: {{namespace}} in spec.template.spec.destination.namespace reads the parameter namespace, ",
			"which the generator spec.generators[0] (matrix) does not give: fasttemplate leaves {{namespace}} as written in the Applications it generates, ",
			"and the Applications use the braces literally (a path, a namespace, a value that does not exist). ",
			"It gives name, nameNormalized, path, path.basename, path.basenameNormalized, project, server, ",
			"metadata.annotations.<key>, metadata.labels.<key>, path[N]. ",
			"Fix: correct the parameter's name, or give it (a list element's key, the generator's values).",
		]),
		"path": p,
	}}
}

test_a_missing_parameter_with_go_templates_depends_on_missingkey if {
	p := "/spec/template/spec/destination/namespace"
	used := [
		use("path.basename", p, "{{ .path.basename }}", "none"),
		use("ns", p, "{{ .ns }}", "none"),
		use("region", p, "{{ .region | default \"eu\" }}", "default"),
		use("tier", p, "{{ if .tier }}", "condition"),
		use("zone", p, "{{ .zone }}", "checked"),
	]
	lenient := facts({"engine": "go", "parameters_provided": [go_matrix], "parameters_used": used})
	v := rule.violations with input as review(lenient)
	count(v) == 1
	some x in v
	contains(x.msg, "{{ .ns }} in spec.template.spec.destination.namespace reads the parameter ns, which the generator spec.generators[0] (matrix) does not give: Go renders <no value> in its place")
	strict := facts({"engine": "go", "missing_key": "error", "parameters_provided": [go_matrix], "parameters_used": used})
	w := rule.violations with input as review(strict)

	# With missingkey=error, default and conditions fail too; a read under a check never runs.
	{y.msg | some y in w; contains(y.msg, "map has no entry for key")} == {y.msg | some y in w}
	count(w) == 3
	some d in w
	contains(d.msg, "{{ .region | default \"eu\" }}")
	contains(d.msg, "(map has no entry for key \"region\")")
	contains(d.msg, "(default does not help: the read itself fails, argo-cd#20594)")
}

test_open_generators_and_generators_that_render_other_templates_are_not_judged if {
	p := "/spec/template/spec/destination/namespace"
	open := object.union(fast_matrix, {"open": true})
	f := facts({"parameters_provided": [open], "parameters_used": [use("cluster.region", p, "{{cluster.region}}", "none")]})
	count(rule.violations) == 0 with input as review(f)
	g := facts({"parameters_used": [{"name": "cluster.region", "pointer": p, "tag": "{{cluster.region}}", "guard": "none", "generators": []}]})
	count(rule.violations) == 0 with input as review(g)
}

test_parameters_two_generators_lack_are_one_finding if {
	list := {"pointer": "/spec/generators/1", "kinds": ["list"], "names": ["env"], "prefixes": [], "open": false}
	u := {"name": "region", "pointer": name_pointer, "tag": "{{region}}", "guard": "none", "generators": [0, 1]}
	v := rule.violations with input as review(facts({"parameters_provided": [fast_matrix, list], "parameters_used": [u]}))
	count(v) == 1
	some x in v
	contains(x.msg, "which the generators spec.generators[0] (matrix) and spec.generators[1] (list) do not give")
	contains(x.msg, "; spec.generators[1] (list) gives env. Fix:")
}

test_a_generator_naming_no_kind_generates_nothing if {
	generators := [
		{"pointer": "/spec/generators/0", "kinds": [], "depth": 0, "children": 0, "merge_keys": []},
		{"pointer": "/spec/generators/1", "kinds": [], "depth": 0, "children": 0, "merge_keys": []},
	]
	f := facts({"generators": generators, "unknown": ["/spec/generators/1/lists"]})
	v := rule.violations with input as review(f)
	{x.path | some x in v} == {"/spec/generators/0", "/spec/generators/1"}
	count(v) == 2
	some x in v
	x.path == "/spec/generators/1"
	x.msg == concat("", [
		"ApplicationSet argocd/apps: spec.generators[1] names no generator kind (lists is not a generator kind: the API server drops it): ",
		"Argo CD generates nothing from it and only logs \"ApplicationSet apps contains unrecognized generators\"; ",
		"the other generators still generate their Applications. ",
		"Fix: name one of list, clusters, git, matrix, merge, scmProvider, pullRequest, clusterDecisionResource, plugin.",
	])
}

test_a_combined_generator_must_name_one_kind if {
	generators := [
		{"pointer": "/spec/generators/0", "kinds": ["matrix"], "depth": 0, "children": 2, "merge_keys": []},
		{"pointer": "/spec/generators/0/matrix/generators/0", "kinds": [], "depth": 1, "children": 0, "merge_keys": []},
		{"pointer": "/spec/generators/0/matrix/generators/1", "kinds": ["list", "clusters"], "depth": 1, "children": 0, "merge_keys": []},
	]
	v := rule.violations with input as review(facts({"generators": generators}))
	count(v) == 2
	some empty in v
	empty.path == "/spec/generators/0/matrix/generators/0"
	contains(empty.msg, "inside a matrix or merge, Argo CD fails the whole generation (\"child generator generated no parameters\")")
	some two in v
	two.path == "/spec/generators/0/matrix/generators/1"
	contains(two.msg, "names 2 generator kinds (list, clusters) inside a matrix or merge")
}

test_matrix_and_merge_shapes_argo_cd_refuses if {
	generators := [
		{"pointer": "/spec/generators/0", "kinds": ["matrix"], "depth": 0, "children": 3, "merge_keys": []},
		{"pointer": "/spec/generators/1", "kinds": ["merge"], "depth": 0, "children": 1, "merge_keys": ["env"]},
		{"pointer": "/spec/generators/2", "kinds": ["merge"], "depth": 0, "children": 2, "merge_keys": []},
		{"pointer": "/spec/generators/3", "kinds": ["merge"], "depth": 0, "children": 2, "merge_keys": ["env"]},
		{"pointer": "/spec/generators/4", "kinds": ["matrix"], "depth": 0, "children": 2, "merge_keys": []},
	]
	v := rule.violations with input as review(facts({"generators": generators}))
	{x.path | some x in v} == {"/spec/generators/0", "/spec/generators/1", "/spec/generators/2"}
	count(v) == 3
	some matrix in v
	matrix.path == "/spec/generators/0"
	contains(matrix.msg, "the matrix generator spec.generators[0] combines 3 generators: Argo CD fails the whole generation (\"found more than two generators, Matrix support only two\")")
	some few in v
	few.path == "/spec/generators/1"
	contains(few.msg, "(\"found less than two generators, Merge requires two or more\")")
	some keys in v
	keys.path == "/spec/generators/2"
	contains(keys.msg, "has no mergeKeys: Argo CD fails the whole generation (\"no merge keys were specified, Merge requires at least one\")")
}

test_unknown_and_malformed_fields if {
	f := facts({
		"unknown": ["/spec/goTemplates", "/spec/generators/0/matrix/generators/1/git/directory"],
		"malformed": [{"pointer": "/spec/goTemplate", "expected": "boolean"}],
	})
	v := rule.violations with input as review(f)
	count(v) == 3
	some u in v
	u.path == "/spec/goTemplates"
	u.msg == concat("", [
		"ApplicationSet argocd/apps: spec.goTemplates is not a field of an ApplicationSet (Argo CD's CRD does not declare it there). ",
		"The API server prunes it, so Argo CD never sees the setting and it does nothing; ",
		"an Application that syncs this ApplicationSet also shows it OutOfSync after every sync. ",
		"Fix: correct its spelling or move it where the CRD has it.",
	])
	some d in v
	d.path == "/spec/generators/0/matrix/generators/1/git/directory"
	startswith(d.msg, "ApplicationSet argocd/apps: spec.generators[0].matrix.generators[1].git.directory is not a field")
	some m in v
	m.path == "/spec/goTemplate"
	m.msg == "ApplicationSet argocd/apps: spec.goTemplate must be a boolean: the API server refuses the ApplicationSet (spec.goTemplate: Invalid value), so the sync that applies it fails. Fix: write it as a boolean."
}

test_objects_without_appset_facts_are_not_judged if {
	application := object.union(appset, {"kind": "Application"})
	count(rule.violations) == 0 with input as {"operation": "CHECK", "resource": application}
	count(rule.violations) == 0 with input as {"operation": "CHECK", "resource": appset}
}
