#!/usr/bin/env python3
"""Regenerates crates/syncguard-argocd/data/kube-required.json: for every built-in kind, which
fields the Kubernetes OpenAPI document marks required, down through every nested type, so
syncguard can refuse offline what the API server refuses (an Ingress rule whose `paths` is null,
a container without a name) instead of only what fails to decode.

Source: api/openapi-spec/swagger.json of k8s.io/kubernetes at the release given (Apache License
2.0), read from the Go module cache that scripts/install-kube.sh fills (`go mod download
k8s.io/kubernetes@<release>` works too). Only what the check needs is kept: per definition its
required fields and the properties that lead to other definitions.

Usage: scripts/gen-kube-required.py [v1.34.4]
"""
import json
import os
import subprocess
import sys

release = sys.argv[1] if len(sys.argv) > 1 else "v1.34.4"
modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
with open(os.path.join(modcache, "k8s.io/kubernetes@" + release, "api/openapi-spec/swagger.json")) as f:
    spec = json.load(f)
defs = spec["definitions"]


def ref_of(schema):
    """The definition a property leads to: {"ref": name} directly, {"items": name} for a list of
    them, {"values": name} for a map of them; None for scalars and free-form objects."""
    if "$ref" in schema:
        return {"ref": schema["$ref"].split("/")[-1]}
    if schema.get("type") == "array" and "$ref" in schema.get("items", {}):
        return {"items": schema["items"]["$ref"].split("/")[-1]}
    if schema.get("type") == "object" and "$ref" in schema.get("additionalProperties", {}):
        return {"values": schema["additionalProperties"]["$ref"].split("/")[-1]}
    return None


kinds = {}
for name, d in defs.items():
    for gvk in d.get("x-kubernetes-group-version-kind", []):
        # Lists and the API machinery's own types (Status, WatchEvent...) are never applied.
        if gvk["kind"].endswith("List") or name.startswith("io.k8s.apimachinery"):
            continue
        api_version = gvk["version"] if not gvk["group"] else f"{gvk['group']}/{gvk['version']}"
        kinds[f"{api_version}/{gvk['kind']}"] = name

out_defs = {}
todo = list(kinds.values())
while todo:
    name = todo.pop()
    if name in out_defs or name not in defs:
        continue
    d = defs[name]
    props = {}
    for prop, schema in d.get("properties", {}).items():
        ref = ref_of(schema)
        if ref:
            props[prop] = ref
            todo.append(next(iter(ref.values())))
    required = [r for r in d.get("required", []) if r not in ("apiVersion", "kind")]
    out_defs[name] = {k: v for k, v in {"required": required, "props": props}.items() if v}

# Drop definitions that neither require anything nor lead to one that does.
def useful(name, seen=None):
    seen = seen or set()
    if name in seen:
        return False
    seen.add(name)
    d = out_defs.get(name, {})
    return bool(d.get("required")) or any(useful(next(iter(r.values())), seen) for r in d.get("props", {}).values())

keep = {n for n in out_defs if useful(n)}
out = {
    "source": f"k8s.io/kubernetes {release} api/openapi-spec/swagger.json (Apache License 2.0), required fields only",
    "kinds": {k: v for k, v in sorted(kinds.items()) if v in keep},
    "definitions": {
        n: {**({"required": d["required"]} if d.get("required") else {}),
            **({"props": {p: r for p, r in d.get("props", {}).items() if next(iter(r.values())) in keep}} if any(next(iter(r.values())) in keep for r in d.get("props", {}).values()) else {})}
        for n, d in sorted(out_defs.items()) if n in keep
    },
}
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates/syncguard-argocd/data/kube-required.json")
with open(path, "w") as f:
    json.dump(out, f, separators=(",", ":"), sort_keys=True)
    f.write("\n")
print(f"{len(out['kinds'])} kinds, {len(out['definitions'])} definitions -> {os.path.normpath(path)}")
