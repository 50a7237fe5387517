#!/usr/bin/env python3
"""An `--app-context` file for bench/webhook_load.sh --app-objects N.

    app_gen.py N OUT.json

Writes the Application `inventory` (the one the load mix's ConfigMap and Deployment reviews
belong to, by their tracking ids) with those two objects and N more: ConfigMaps, Secrets,
Services and Deployments in waves 0-6 whose pods read the ConfigMaps and Secrets, so the
reviews are judged inside an Application of that size. Deterministic, standard library only.
"""

from __future__ import annotations

import json
import pathlib
import sys

APP = "inventory"
NAMESPACE = "inventory"


def tracked(kind: str, name: str, group: str = "") -> dict:
    return {"argocd.argoproj.io/tracking-id": f"{APP}:{group}/{kind}:{NAMESPACE}/{name}"}


def member(i: int) -> dict:
    meta = lambda kind, name, group="": {  # noqa: E731
        "name": name,
        "namespace": NAMESPACE,
        "annotations": tracked(kind, name, group),
    }
    k = i % 4
    if k == 0:
        return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("ConfigMap", f"cm-{i}"),
                "data": {"LOG_LEVEL": "info"}}
    if k == 1:
        return {"apiVersion": "v1", "kind": "Secret", "metadata": meta("Secret", f"secret-{i}"),
                "stringData": {"token": "x"}}
    if k == 2:
        return {"apiVersion": "v1", "kind": "Service", "metadata": meta("Service", f"svc-{i}"),
                "spec": {"selector": {"app": f"app-{i}"}, "ports": [{"port": 80}]}}
    m = meta("Deployment", f"deploy-{i}", "apps")
    m["annotations"]["argocd.argoproj.io/sync-wave"] = str(i % 7)
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": m,
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": f"app-{i}"}},
            "template": {
                "metadata": {"labels": {"app": f"app-{i}"}},
                "spec": {"containers": [{
                    "name": "app",
                    "image": "registry.example.com/inventory/app:1.0.0",
                    "envFrom": [{"configMapRef": {"name": f"cm-{i - 3}"}},
                                {"secretRef": {"name": f"secret-{i - 2}"}}],
                }]},
            },
        },
    }


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    n, out = int(sys.argv[1]), pathlib.Path(sys.argv[2])
    fixtures = pathlib.Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "admission"
    items = [
        json.loads((fixtures / f"{name}.json").read_text())["request"]["object"]
        for name in ("deployment-update", "configmap-clean")
    ]
    items += [member(i) for i in range(n)]
    out.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    print(f"{out}: {len(items)} objects of Application {APP}")


if __name__ == "__main__":
    main()
