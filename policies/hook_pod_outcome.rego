# SG114: a hook whose outcome Argo CD does not wait for, or waits for in vain.
#
# A hook completes when its health says so (gitops-engine sync_context.go getOperationPhase:
# Healthy or no health check = Succeeded, Progressing = Running, Degraded = Failed), and a Pod's
# health depends on its restartPolicy (pkg/health/health_pod.go, unchanged since argo-cd#1365):
#  - Always (also what the API server sets when the manifest has no restartPolicy): a Running,
#    Ready pod is Healthy. A bare hook Pod like that is "Succeeded" as soon as it is Ready, before
#    its command has finished; its exit code is never read and the pod keeps running. Seen with the
#    real v3.2.11 controller (a PostSync smoke-test Pod reported "Succeeded, pod/smoke created"
#    while it kept running).
#  - Never / OnFailure: a Running pod is Progressing. A container that never exits (`sleep
#    infinity`, `tail -f /dev/null`, a server image started without a command) keeps the hook
#    Running until a deadline fails it, or for ever. A hook Job is the same: it completes only
#    when its pod exits.
# Restarting on failure (SG103) and the missing deadline itself (SG101, SG104) are other rules.
package syncguard.rules.hook_pod_outcome

meta := {
	"id": "SG114",
	"title": "Hook Pod whose outcome Argo CD does not see",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"Argo CD reads a hook Pod's result from its health: with restartPolicy Always (the default) a Ready pod",
		"is Healthy, so the hook succeeds before its command has finished and its exit code is never checked;",
		"with Never or OnFailure a running pod is Progressing, so a container that never exits keeps the hook,",
		"and the sync, waiting until a deadline fails it or for ever.",
	]),
	"docs": "docs/rules/SG114.md",
	"hooks_only": true, # only hooks can be reported: other objects skip the rule
}

# 1. A bare hook Pod with restartPolicy Always, written or defaulted.
violations contains {"msg": msg, "path": path, "severity": "medium"} if {
	# cheap first tests, implied by _hook_pod below
	input.resource.kind == "Pod"
	input.sync.is_hook == true
	_hook_pod
	_pod_restart_policy(_spec) == "Always"
	path := _restart_policy_path
	msg := sprintf(
		"%s is %s with %s: Argo CD counts a running, Ready pod with restartPolicy Always as Healthy, so it marks the hook Succeeded as soon as the pod is Ready, before its command has finished, and never looks at its exit code; %s. Set restartPolicy: Never (with spec.activeDeadlineSeconds) or run the command as a Job, so that Argo CD waits for it and a failure fails the hook.",
		[_subject, _hook_label, _restart_policy_text, _linger],
	)
}

# 2. A container that never exits, in a hook Pod (Never/OnFailure) or a hook Job.
violations contains {"msg": msg, "path": path, "severity": severity} if {
	# cheap first tests, implied by _waits_for_exit below
	input.sync.is_hook == true
	_waits_for_exit
	containers := _containers
	some i, c in containers
	is_object(c)
	finding := _endless(c)
	severity := finding.severity
	path := sprintf("%s/%d%s", [_containers_path, i, finding.field])
	msg := sprintf(
		"%s is %s whose container \"%s\" %s, so it never exits: %s, so the hook stays Running and %s waits for it %s. %s",
		[_subject, _hook_label, _str(c, "name"), finding.what, _why_running, _waiter, _bound, finding.fix],
	)
}

# ---- 1: restartPolicy Always ----

_hook_pod if {
	_hook_that_runs
	_resource.kind == "Pod"
	_str(_resource, "apiVersion") == "v1"
}

# The API server defaults a missing restartPolicy to Always before Argo CD ever sees the pod.
_pod_restart_policy(spec) := p if {
	p := object.get(spec, "restartPolicy", "")
	is_string(p)
	p != ""
} else := "Always"

_restart_policy_path := "/spec/restartPolicy" if {
	_str(_spec, "restartPolicy") != ""
} else := "/spec"

_restart_policy_text := "restartPolicy: Always" if {
	_str(_spec, "restartPolicy") != ""
} else := "no restartPolicy, which Kubernetes sets to Always"

_linger := "HookSucceeded then deletes the pod when the operation succeeds, possibly in the middle of its work" if {
	"HookSucceeded" in _list("delete_policies")
} else := "the pod keeps running afterwards (its container restarted whenever it exits) until the next sync deletes it (BeforeHookCreation)" if {
	count(_list("phases")) > 0
	"BeforeHookCreation" in _list("delete_policies")
} else := "the pod keeps running afterwards, its container restarted whenever it exits"

# ---- 2: a container that never exits ----

# Argo CD waits for the pod to exit: a bare Pod with Never/OnFailure, or any Job (a Job's pod
# template must be Never or OnFailure).
_waits_for_exit if {
	input.resource.kind == "Pod"
	_hook_pod
	_pod_restart_policy(_spec) != "Always"
}

_waits_for_exit if {
	input.resource.kind == "Job"
	_hook_that_runs
	startswith(_str(_resource, "apiVersion"), "batch/")
}

_pod_spec := _spec if _resource.kind == "Pod"

_pod_spec := s if {
	_resource.kind == "Job"
	template := object.get(_spec, "template", {})
	is_object(template)
	s := object.get(template, "spec", {})
	is_object(s)
}

_containers := cs if {
	cs := object.get(_pod_spec, "containers", [])
	is_array(cs)
} else := []

_containers_path := "/spec/containers" if _resource.kind == "Pod"

_containers_path := "/spec/template/spec/containers" if _resource.kind == "Job"

_why_running := "Argo CD counts a running pod with restartPolicy Never or OnFailure as Progressing" if {
	_resource.kind == "Pod"
} else := "a Job completes only when its pod exits, and Argo CD counts a Job without a Complete or Failed condition as Progressing"

_waiter := "the sync" if count(_list("phases")) > 0

_waiter := "the Application deletion" if count(_list("phases")) == 0

_bound := sprintf("until spec.activeDeadlineSeconds (%v s) fails it, and then the hook fails every time", [d]) if {
	d := object.get(_spec, "activeDeadlineSeconds", null)
	is_number(d)
} else := "for ever: spec.activeDeadlineSeconds is not set (see SG104)" if {
	_resource.kind == "Pod"
} else := "for ever: spec.activeDeadlineSeconds is not set (see SG101)"

# A command that provably never returns (high), a sidecar proxy, or a server image started with
# its own entrypoint (medium).
_endless(c) := {
	"severity": "high",
	"what": sprintf("runs `%s`", [label]),
	"field": _command_field(c),
	"fix": "Make the command exit when its work is done (a long-running service belongs in a Deployment, not a hook).",
} if {
	label := _never_returns(lower(_command_text(c)))
	label != ""
} else := {
	"severity": "medium",
	"what": sprintf("runs the proxy %s, which serves until it is stopped", [image]),
	"field": "/image",
	"fix": "Run the proxy as a native sidecar (an initContainer with restartPolicy: Always, Kubernetes 1.29 and later): the kubelet stops it when the other containers have exited.",
} if {
	image := _str(c, "image")
	_image_name(image) in _proxy_images
} else := {
	"severity": "medium",
	"what": sprintf("runs the server image %s with its own entrypoint (no command or args)", [image]),
	"field": "/image",
	"fix": "Give the container a command that does the hook's work and exits (a server belongs in a Deployment, not a hook).",
} if {
	_strings(c, "command") == []
	_strings(c, "args") == []
	image := _str(c, "image")
	_image_name(image) in _server_images
}

_command_text(c) := concat(" ", array.concat(_strings(c, "command"), _strings(c, "args")))

_command_field(c) := "/command" if {
	_strings(c, "command") != []
	_strings(c, "args") == []
} else := "/args" if {
	_strings(c, "args") != []
} else := ""

# Total ("" when nothing matches): an else chain whose first body calls an undefined function
# does not reach its else branches in syncguard's compiled evaluation.
_never_returns(text) := "sleep infinity" if {
	contains(text, "sleep") # cheap first test: each regex.match costs microseconds
	regex.match(`(^|[\s;&|(])sleep\s+(inf|infinity)([\s;&|)]|$)`, text)
} else := "tail -f /dev/null" if {
	contains(text, "/dev/null")
	regex.match(`(^|[\s;&|(])tail\s+(-f|-F|--follow)\s+/dev/null`, text)
} else := "an endless while loop" if {
	contains(text, "while")
	regex.match(`(^|[\s;&|(])while\s+(true|:)\s*;?\s*do\s`, text)
	not regex.match(`(^|[\s;&|(])(break|exit|return)([\s;&|)]|$)`, text)
} else := "daemon off" if {
	contains(text, "daemon off")
} else := ""

# "registry.example.com:5000/library/nginx:1.27@sha256:…" → "nginx"
_image_name(image) := name if {
	no_digest := split(image, "@")[0]
	parts := split(no_digest, "/")
	last := parts[count(parts) - 1]
	name := lower(split(last, ":")[0])
}

_server_images := {
	"nginx", "nginx-unprivileged", "httpd", "caddy", "traefik", "envoy", "haproxy", "tomcat",
	"redis", "memcached", "postgres", "postgresql", "mysql", "mariadb", "mongo", "mongodb",
	"rabbitmq", "elasticsearch", "kafka", "zookeeper", "etcd", "nats", "consul", "vault",
	"grafana", "prometheus",
}

# Sidecar proxies that run until they are stopped whatever their arguments (kubernetes#25908);
# as native sidecars (initContainers with restartPolicy Always) they are fine and not checked.
_proxy_images := {"cloud-sql-proxy", "cloudsql-proxy", "gce-proxy", "proxyv2", "istio-proxy"}

_strings(obj, key) := [s | some s in v; is_string(s)] if {
	v := object.get(obj, key, [])
	is_array(v)
} else := []

# ---- which hooks run ----

# A hook Argo CD runs: in a sync phase, or as a delete hook this release knows (PostDelete from
# 2.10, PreDelete from 3.3).
_hook_that_runs if {
	_applies
	object.get(_sync, "is_hook", false) == true
	count(_list("phases")) > 0
}

_hook_that_runs if {
	_applies
	object.get(_sync, "is_hook", false) == true
	some t in _list("hook_types")
	_delete_type(t)
}

_delete_type("PostDelete") if _release >= 210

_delete_type("PreDelete") if _release >= 303

# input.argocd.release (major * 100 + minor); the newest release when absent.
default _release := 306

_release := r if {
	r := input.argocd.release
	is_number(r)
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

# "Job app-foo/svc-foo-migration"
_subject := sprintf("%s %s", [_kind, _qualified_name])

_hook_phases := [t | some t in _list("hook_types"); is_string(t); t != "Skip"]

default _hook_label := "a hook"

# "a PreSync hook", "a PreSync/PostSync hook"
_hook_label := sprintf("a %s hook", [concat("/", _hook_phases)]) if count(_hook_phases) > 0
