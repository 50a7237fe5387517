#!/usr/bin/env python3
"""AdmissionReviews of a given object size, for bench/review_memory.sh.

    review_gen.py KIND OPERATION SIZE_BYTES OUT.json
    review_gen.py context SIZE_BYTES DIR

KIND is `crd` (a CustomResourceDefinition whose openAPIV3Schema fills the size: nested
properties with descriptions, enums and validations, like the CRDs of large operators, plus the
managedFields a server-side apply writes) or `configmap` (a ConfigMap whose `data` holds a few
large strings, like dashboards or bundled configuration). OPERATION is CREATE or UPDATE (then
`oldObject` is the same object with another resourceVersion, so the body is about twice the
object). SIZE_BYTES is the size of `object` as compact JSON, which is what the API server sends;
the generator grows the object until it reaches the size and prints the sizes it wrote
(object, body).

`context` writes an `--app-context` directory for the CRD reviews of that size: four other
1 MiB CRDs of the same Application and the admitted CRD's previous version, so a review is
judged inside a CRD-heavy Application, as `serve --app-context` does.

Deterministic (fixed seed), Python 3 standard library only.
"""

from __future__ import annotations

import copy
import json
import random
import sys

WORDS = (
    "the of a to is in for that be on with as by this field when it or are from an not "
    "resource controller value specifies default must object list reference name namespace "
    "selector label annotation container port protocol replicas template status condition "
    "observed generation secret key certificate endpoint interval timeout duration policy "
    "scrape relabel target metric rule alert route receiver storage volume claim mount path "
    "tolerations affinity topology spread constraint priority class service account token"
).split()


def sentence(rng: random.Random, lo: int, hi: int) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(lo, hi))]
    return " ".join(words).capitalize() + "."


def prop_name(rng: random.Random, i: int) -> str:
    a, b = rng.choice(WORDS), rng.choice(WORDS)
    return f"{a}{b.capitalize()}{i}"


def schema(rng: random.Random, depth: int, budget: list[int]) -> dict:
    """A JSON schema node; `budget[0]` counts down the properties still to make."""
    desc = " ".join(sentence(rng, 8, 30) for _ in range(rng.randint(1, 3)))
    if depth >= 6 or budget[0] <= 0 or rng.random() < 0.35:
        budget[0] -= 1
        leaf = rng.random()
        if leaf < 0.5:
            node = {"description": desc, "type": "string"}
            if rng.random() < 0.2:
                node["enum"] = [rng.choice(WORDS).capitalize() for _ in range(rng.randint(2, 6))]
            if rng.random() < 0.15:
                node["pattern"] = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
        elif leaf < 0.75:
            node = {"description": desc, "type": "integer", "format": "int32"}
            if rng.random() < 0.3:
                node["minimum"] = 0
        elif leaf < 0.85:
            node = {"description": desc, "type": "boolean"}
        else:
            node = {
                "description": desc,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
                "x-kubernetes-int-or-string": True,
            }
        return node
    if rng.random() < 0.25:
        return {
            "description": desc,
            "type": "array",
            "items": schema(rng, depth + 1, budget),
            "x-kubernetes-list-type": "atomic",
        }
    props = {}
    for i in range(rng.randint(3, 12)):
        if budget[0] <= 0:
            break
        props[prop_name(rng, i)] = schema(rng, depth + 1, budget)
    node = {"description": desc, "type": "object", "properties": props}
    if props and rng.random() < 0.3:
        node["required"] = sorted(props)[: rng.randint(1, min(3, len(props)))]
    return node


def fields_v1(value) -> dict:
    """The managedFields `fieldsV1` tree of a server-side apply of `value`: maps by key, lists
    of named maps by `k:{"name":...}`, other lists atomic."""
    if isinstance(value, dict):
        return {f"f:{k}": fields_v1(v) for k, v in value.items()}
    if isinstance(value, list) and value and all(isinstance(v, dict) and "name" in v for v in value):
        return {"k:" + json.dumps({"name": v["name"]}, separators=(",", ":")): fields_v1(v)
                for v in value}
    return {}


def compact(v) -> str:
    return json.dumps(v, separators=(",", ":"))


def crd(size: int, seed: int = 1) -> dict:
    rng = random.Random(seed)
    name = "widgets.bench.syncguard.dev"
    meta = {
        "name": name,
        "uid": "5f0c2a64-0f1e-4f6e-9a55-1c2b3d4e5f60",
        "resourceVersion": "1001",
        "generation": 1,
        "creationTimestamp": "2026-12-01T10:00:00Z",
        "labels": {"app.kubernetes.io/instance": "platform-crds"},
        "annotations": {
            "argocd.argoproj.io/tracking-id":
                f"platform-crds:apiextensions.k8s.io/CustomResourceDefinition:/{name}",
            "argocd.argoproj.io/sync-options": "ServerSideApply=true",
            "argocd.argoproj.io/sync-wave": "-5",
        },
    }
    obj = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": meta,
        "spec": {
            "group": "bench.syncguard.dev",
            "names": {"kind": "Widget", "listKind": "WidgetList", "plural": "widgets",
                      "singular": "widget"},
            "scope": "Namespaced",
            "versions": [],
        },
    }
    versions = obj["spec"]["versions"]

    def finish(o: dict) -> dict:
        out = copy.deepcopy(o)
        out["metadata"]["managedFields"] = [{
            "manager": "argocd-controller",
            "operation": "Apply",
            "apiVersion": "apiextensions.k8s.io/v1",
            "time": "2026-12-01T10:00:00Z",
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": fields_v1(o["spec"])},
        }]
        return out

    # Two versions (an old served one and the storage one, as large operators ship them), each
    # with the full schema; top-level spec properties are added to both until the object reaches
    # the size, then the last ones are dropped until it is back under it.
    specs = []
    for n, storage in (("v1beta1", False), ("v1", True)):
        spec = {"type": "object", "description": "Spec of the widget.", "properties": {}}
        specs.append(spec)
        versions.append({
            "name": n,
            "served": True,
            "storage": storage,
            "schema": {"openAPIV3Schema": {
                "description": "Widget is the Schema for the widgets API.",
                "type": "object",
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object"},
                    "spec": spec,
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            }},
            "subresources": {"status": {}},
        })
    total = len(compact(finish(obj)))
    i = 0
    while total < size:
        budget = [30]
        node = schema(rng, 1, budget)
        key = prop_name(rng, i)
        # Each subtree appears in both versions and in managedFields (twice).
        total += 2 * (len(compact({key: node})) + len(compact({"f:" + key: fields_v1(node)})))
        for spec in specs:
            spec["properties"][key] = node
        i += 1
    while len(compact(finish(obj))) > size and len(specs[0]["properties"]) > 1:
        key = list(specs[0]["properties"])[-1]
        for spec in specs:
            spec["properties"].pop(key)
    # The rest: a longer description in both versions (JSON-safe ASCII, one byte a character).
    gap = size - len(compact(finish(obj)))
    if gap > 0:
        words = " ".join(sentence(rng, 10, 30) for _ in range(gap // 100 + 2))
        for n, spec in enumerate(specs):
            share = gap // 2 + (gap % 2 if n == 0 else 0)
            spec["description"] += words[:share]
    return finish(obj)


def configmap(size: int) -> dict:
    rng = random.Random(2)
    obj = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": "dashboards",
            "namespace": "monitoring",
            "uid": "6a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
            "resourceVersion": "2002",
            "creationTimestamp": "2026-12-01T10:00:00Z",
            "labels": {"app.kubernetes.io/instance": "monitoring", "grafana_dashboard": "1"},
            "annotations": {
                "argocd.argoproj.io/tracking-id": "monitoring:/ConfigMap:monitoring/dashboards",
            },
        },
        "data": {},
    }
    base = len(compact(obj))
    n = 0
    while base < size:
        chunk = min(256 * 1024, size - base)
        key = f"dashboard-{n:03}.json"
        text = " ".join(sentence(rng, 6, 20) for _ in range(chunk // 60 + 1))[:max(chunk - len(key) - 6, 1)]
        obj["data"][key] = text
        base = len(compact(obj))
        n += 1
    return obj


def review(obj: dict, operation: str) -> dict:
    group, _, version = obj["apiVersion"].rpartition("/")
    kind = obj["kind"]
    resource = {"CustomResourceDefinition": "customresourcedefinitions",
                "ConfigMap": "configmaps"}[kind]
    old = None
    if operation == "UPDATE":
        old = copy.deepcopy(obj)
        old["metadata"]["resourceVersion"] = "999"
    req = {
        "uid": "0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": kind},
        "requestResource": {"group": group, "version": version, "resource": resource},
        "name": obj["metadata"]["name"],
        "operation": operation,
        "userInfo": {
            "username": "system:serviceaccount:argocd:argocd-application-controller",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:argocd",
                       "system:authenticated"],
        },
        "object": obj,
        "oldObject": old,
        "dryRun": False,
        "options": {"kind": "CreateOptions" if operation == "CREATE" else "UpdateOptions",
                    "apiVersion": "meta.k8s.io/v1"},
    }
    if "namespace" in obj["metadata"]:
        req["namespace"] = obj["metadata"]["namespace"]
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": req}


def context(size: int, out_dir: str, others: int = 4, other_size: int = 1 << 20) -> None:
    """An `--app-context` directory for the CRD reviews: the Application's other CRDs (`others`
    of `other_size` bytes, tracked by the same Application) and the admitted CRD's previous
    version (the object `crd(size)` with an older resourceVersion), one JSON file each."""
    import os
    os.makedirs(out_dir, exist_ok=True)
    for i in range(others):
        o = crd(other_size, seed=10 + i)
        name = f"gadgets{i}.bench.syncguard.dev"
        o["metadata"]["name"] = name
        o["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"] = (
            f"platform-crds:apiextensions.k8s.io/CustomResourceDefinition:/{name}")
        o["spec"]["names"].update({"kind": f"Gadget{i}", "listKind": f"Gadget{i}List",
                                   "plural": f"gadgets{i}", "singular": f"gadget{i}"})
        with open(os.path.join(out_dir, f"crd-{i}.json"), "w", encoding="utf-8") as f:
            f.write(compact(o))
    previous = crd(size)
    previous["metadata"]["resourceVersion"] = "999"
    with open(os.path.join(out_dir, "widgets.json"), "w", encoding="utf-8") as f:
        f.write(compact(previous))


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "context":
        context(int(sys.argv[2]), sys.argv[3])
        return
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    kind, operation, size, out = sys.argv[1], sys.argv[2].upper(), int(sys.argv[3]), sys.argv[4]
    obj = {"crd": crd, "configmap": configmap}[kind](size)
    body = compact(review(obj, operation))
    with open(out, "w", encoding="utf-8") as f:
        f.write(body)
    print(f"{len(compact(obj))} {len(body)}")


if __name__ == "__main__":
    main()
