#!/usr/bin/env python3
"""Copy Kubernetes manifests for the Argo CD e2e scenarios, adapted for one scenario.

The examples are written for one namespace (`orders`); each scenario syncs them into its own
namespace, and pods must say which outcome kwok should give them (tests/e2e/argocd/kwok-stages.yaml).

    manifests.py --namespace orders=seed-plain \
        --pod-label Job/db-migrate=e2e.syncguard.dev/outcome=crashloop \
        --pod-annotation Job/db-migrate=e2e.syncguard.dev/crash-every=15s \
        -o OUT_DIR examples/seed-incident/*.yaml

Every input document is written to OUT_DIR under its own file name, in the same order. Only the
requested fields change; anything else (including documents of other kinds) is kept as parsed.
An input may be a directory: its *.yaml files are read in name order. NAME matches
metadata.name or, for objects that only have one, metadata.generateName.

    manifests.py --scope DEST INPUT...

prints, as JSON, where the objects of INPUT live once Argo CD syncs them with destination
namespace DEST: {"namespaces": [...], "cluster": [names of cluster-scoped objects]}, for
filtering the API server's audit log to one Application.
"""

import argparse
import json
import os
import sys

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit("manifests.py: PyYAML is required (python3 -m pip install pyyaml)")


def pair(text, sep="="):
    key, found, value = text.partition(sep)
    if not found or not key:
        raise argparse.ArgumentTypeError(f"expected KEY{sep}VALUE, got {text!r}")
    return key, value


def target(text):
    """KIND/NAME=KEY=VALUE -> ((kind, name), key, value)."""
    ref, _, rest = text.partition("=")
    kind, slash, name = ref.partition("/")
    key, found, value = rest.partition("=")
    if not slash or not found:
        raise argparse.ArgumentTypeError(f"expected KIND/NAME=KEY=VALUE, got {text!r}")
    return (kind, name), key, value


# Cluster-scoped kinds that the fixtures use (the API server would say; the fixtures are small).
CLUSTER_KINDS = {
    "Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "StorageClass",
    "PersistentVolume", "IngressClass", "PriorityClass", "APIService",
    "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
}


def files(inputs):
    for path in inputs:
        if os.path.isdir(path):
            yield from sorted(os.path.join(path, n) for n in os.listdir(path) if n.endswith((".yaml", ".yml")))
        else:
            yield path


def load(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def scope(dest, inputs):
    namespaces, cluster = {dest}, {dest}
    for path in files(inputs):
        for doc in load(path):
            meta = doc.get("metadata") or {}
            if doc.get("kind") in CLUSTER_KINDS:
                cluster.add(meta.get("name") or meta.get("generateName", ""))
                if doc.get("kind") == "Namespace":
                    namespaces.add(meta.get("name"))
            else:
                namespaces.add(meta.get("namespace") or dest)
    json.dump({"namespaces": sorted(namespaces), "cluster": sorted(cluster)}, sys.stdout)
    print()


def pod_metadata(doc):
    """The metadata a pod of this object gets: the Pod's own, or its template's."""
    if doc.get("kind") == "Pod":
        return doc.setdefault("metadata", {})
    spec = doc.setdefault("spec", {})
    if doc.get("kind") == "CronJob":
        spec = spec.setdefault("jobTemplate", {}).setdefault("spec", {})
    return spec.setdefault("template", {}).setdefault("metadata", {})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--namespace", type=pair, action="append", default=[], metavar="OLD=NEW",
                    help="rename metadata.namespace OLD to NEW (repeatable)")
    ap.add_argument("--pod-label", type=target, action="append", default=[], metavar="KIND/NAME=K=V")
    ap.add_argument("--pod-annotation", type=target, action="append", default=[], metavar="KIND/NAME=K=V")
    ap.add_argument("--drop-kind", action="append", default=[], metavar="KIND",
                    help="leave out documents of KIND (repeatable), e.g. the Application itself")
    ap.add_argument("--scope", metavar="DEST", help="print where the objects live (see above)")
    ap.add_argument("-o", "--out", help="output directory (created)")
    ap.add_argument("inputs", nargs="+")
    args = ap.parse_args()
    if args.scope:
        scope(args.scope, args.inputs)
        return
    if not args.out:
        ap.error("-o/--out is required")

    renames = dict(args.namespace)
    wanted = {ref for ref, _, _ in args.pod_label + args.pod_annotation}
    seen = set()
    os.makedirs(args.out, exist_ok=True)
    for path in files(args.inputs):
        docs = [d for d in load(path) if d.get("kind") not in args.drop_kind]
        for doc in docs:
            meta = doc.setdefault("metadata", {})
            if meta.get("namespace") in renames:
                meta["namespace"] = renames[meta["namespace"]]
            if doc.get("kind") == "Namespace" and meta.get("name") in renames:
                meta["name"] = renames[meta["name"]]
            ref = (doc.get("kind"), meta.get("name") or meta.get("generateName"))
            for field, edits in (("labels", args.pod_label), ("annotations", args.pod_annotation)):
                for want, key, value in edits:
                    if want == ref:
                        pod_metadata(doc).setdefault(field, {})[key] = value
                        seen.add(ref)
        with open(os.path.join(args.out, os.path.basename(path)), "w", encoding="utf-8") as f:
            yaml.safe_dump_all(docs, f, sort_keys=False)
    missing = wanted - seen
    if missing:
        sys.exit("manifests.py: no such object: " + ", ".join(f"{k}/{n}" for k, n in sorted(missing)))


if __name__ == "__main__":
    main()
