# SG121: an object too large for Argo CD's default, client-side apply.
#
# Unless ServerSideApply=true or Replace=true is in effect, Argo CD applies with kubectl's
# client-side apply, which stores the whole object in the
# kubectl.kubernetes.io/last-applied-configuration annotation. The API server limits all of an
# object's annotations together to 262,144 bytes (apimachinery TotalAnnotationSizeLimitB), so the
# apply fails with "metadata.annotations: Too long: must have at most 262144 bytes" — on the first
# sync and every retry. Argo CD's own controller recognises the message and appends "Consider
# using Server-side apply or syncing with replace enabled" (argo-cd util/argo/argo.go AugmentSyncMsg, from controller/sync.go). Big CRDs
# are the usual case (kube-prometheus-stack's Prometheus and Alertmanager CRDs, kyverno's
# policy CRDs, external-secrets): their charts' docs ask Argo CD users for ServerSideApply=true.
#
# The size is a fact computed in Rust (input.apply, src/model/apply.rs): the object as kubectl
# serialises it (compact JSON, Go's HTML escaping), plus the tracking-id annotation Argo CD adds,
# plus every other annotation. Only rendered manifests are judged: an admitted object already
# carries whatever its client wrote, and a live object was applied somehow.
package syncguard.rules.client_side_apply_too_long

meta := {
	"id": "SG121",
	"title": "Object too large for client-side apply",
	"severity": "critical",
	"action": "deny",
	"why": concat(" ", [
		"Argo CD's default apply copies the whole object into the last-applied-configuration annotation,",
		"and the API server refuses objects whose annotations exceed 256 KiB: the sync fails on this object",
		"every time until it is applied server-side or with replace.",
	]),
	"docs": "docs/rules/SG121.md",
}

violations contains {"msg": msg, "path": "/metadata"} if {
	input.apply.annotations_bytes > input.apply.limit # cheap first test
	input.context.source == "check"
	not _server_side
	not _replace
	msg := sprintf(
		"%s %s is %d KiB as kubectl serialises it: Argo CD's client-side apply would store %d bytes of annotations (last-applied-configuration included), over the API server's limit of %d, so every sync fails with \"metadata.annotations: Too long\". Fix: apply it server-side — annotate it with argocd.argoproj.io/sync-options: ServerSideApply=true, or add ServerSideApply=true to the Application's syncOptions%s.",
		[
			input.resource.kind, _name, round(input.apply.last_applied_bytes / 1024),
			input.apply.annotations_bytes, input.apply.limit, _replace_hint,
		],
	)
}

_name := n if {
	ns := object.get(input.resource.metadata, "namespace", "")
	ns != ""
	n := sprintf("%s/%s", [ns, object.get(input.resource.metadata, "name", "")])
} else := object.get(input.resource.metadata, "name", "")

_replace_hint := "" if input.resource.kind == "CustomResourceDefinition"

# Replace re-creates objects it cannot update, which for a CRD deletes every custom resource.
else := " (Replace=true also avoids the annotation, but replaces the object on every sync)"

_server_side if {
	"ServerSideApply=true" in _items(object.get(input.sync, "sync_options", {}))
	_ssa_supported
}

_server_side if {
	"ServerSideApply=true" in _items(object.get(object.get(input, "app", {}), "sync_options", {}))
	not "ServerSideApply=false" in _items(object.get(input.sync, "sync_options", {}))
	_ssa_supported
}

_replace if "Replace=true" in _items(object.get(input.sync, "sync_options", {}))

_replace if "Replace=true" in _items(object.get(object.get(input, "app", {}), "sync_options", {}))

# ServerSideApply arrived in Argo CD 2.5.
_ssa_supported if object.get(object.get(input, "argocd", {}), "release", 999) >= 205

_items(options) := items if {
	is_object(options)
	items := object.get(options, "items", [])
	is_array(items)
} else := []
