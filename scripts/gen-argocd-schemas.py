#!/usr/bin/env python3
"""Regenerates crates/syncguard-argocd/data/argocd-schemas.json: the openAPIV3Schema of Argo CD's
Application and AppProject CRDs, descriptions stripped, so syncguard can validate these objects
as the API server does when their CRDs are not in the input.

Source: argoproj/argo-cd manifests/crds/{application,appproject}-crd.yaml at the release given
(Apache License 2.0), read from the Go module cache that scripts/install-argocd.sh fills
(`go mod download github.com/argoproj/argo-cd/v3@<release>` works too).

Usage: scripts/gen-argocd-schemas.py [v3.6.1]
"""
import json
import os
import subprocess
import sys

import yaml

release = sys.argv[1] if len(sys.argv) > 1 else "v3.6.1"
modcache = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip()
crds = os.path.join(modcache, "github.com/argoproj/argo-cd/v3@" + release, "manifests/crds")


def strip(x):
    if isinstance(x, dict):
        # "description" is documentation when it is text, a property when it is a schema
        return {k: strip(v) for k, v in x.items() if not (k == "description" and isinstance(v, str))}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


out = {"source": f"argoproj/argo-cd {release} manifests/crds (Apache License 2.0), descriptions stripped", "kinds": {}}
for name in ["application-crd.yaml", "appproject-crd.yaml"]:
    with open(os.path.join(crds, name)) as f:
        crd = yaml.safe_load(f)
    kind = crd["spec"]["names"]["kind"]
    for version in crd["spec"]["versions"]:
        out["kinds"][f"{kind}/{version['name']}"] = {
            "crd": crd["metadata"]["name"],
            "schema": strip(version["schema"]["openAPIV3Schema"]),
        }
target = os.path.join(os.path.dirname(__file__), "..", "crates/syncguard-argocd/data/argocd-schemas.json")
with open(target, "w") as f:
    json.dump(out, f, separators=(",", ":"), sort_keys=True)
    f.write("\n")
print(target, os.path.getsize(target), "bytes")
