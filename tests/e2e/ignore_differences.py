#!/usr/bin/env python3
"""The ignoreDifferences cases of tests/e2e/ignore-differences/cases.yaml (scenarios
argocd_ignore_differences and argocd_ignore_differences_system): their manifests and
Applications, and the judgement of what the real Argo CD did.

    ignore_differences.py info --phase app|system             # the cases as JSON, for the shell
    ignore_differences.py prepare --rev 1|2 --out DIR --repo URL CASE...
        # DIR/idiff/<case>/manifest.yaml (the repository's content) and DIR/<case>.app.json
    ignore_differences.py judge --dir DIR [--record] CASE...
        # DIR/<case>.status (the object's sync status after the live change) and
        # DIR/<case>.live.json (the object after the sync) against expect/<case>.json, and,
        # against `syncguard explain`'s prediction in DIR/<case>.explain.json (required)

Standard library and PyYAML only.
"""

import argparse
import copy
import json
import os
import sys

import yaml

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ignore-differences")
PLACEHOLDER = "__GIT__"


def load_cases():
    with open(os.path.join(HERE, "cases.yaml"), encoding="utf-8") as f:
        cases = yaml.safe_load(f)
    for name, case in cases.items():
        case["name"] = name
        case["namespace"] = f"idiff-{name}"
        case["app"] = f"idiff-{name}"
        case.setdefault("phase", "app")
        case.setdefault("syncOptions", [])
        # `resource` is what kubectl is told: fully qualified, since other scenarios install
        # other kinds named Widget (the oracle's CRD bubbling case).
        case["object"] = {
            "deployment": {"group": "apps", "kind": "Deployment", "name": "web", "resource": "deployments.apps"},
            "configmap": {"group": "", "kind": "ConfigMap", "name": "settings", "resource": "configmaps"},
            "widget": {"group": "e2e.syncguard.dev", "kind": "Widget", "name": "gadget",
                       "resource": "widgets.e2e.syncguard.dev"},
        }[case["base"]]
    return cases


def base_object(case):
    annotations = case.get("annotations") or {}
    if case["base"] == "deployment":
        obj = {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [
                        {"name": "app", "image": PLACEHOLDER},
                        {"name": "sidecar", "image": "envoy:1.30"},
                    ]},
                },
            },
        }
    elif case["base"] == "configmap":
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
               "data": {"mode": "git", "rev": PLACEHOLDER}}
    elif case["base"] == "widget":
        obj = {"apiVersion": "e2e.syncguard.dev/v1", "kind": "Widget", "metadata": {"name": "gadget"},
               "spec": {"items": [{"name": "a", "value": PLACEHOLDER}, {"name": "b", "value": "git"}]}}
    else:
        raise SystemExit(f"unknown base {case['base']!r}")
    if annotations:
        obj["metadata"]["annotations"] = dict(annotations)
    return obj


def substituted(value, text):
    if isinstance(value, dict):
        return {k: substituted(v, text) for k, v in value.items()}
    if isinstance(value, list):
        return [substituted(v, text) for v in value]
    return text if value == PLACEHOLDER else value


def application(case, repo):
    spec = {
        "project": "default",
        "source": {"repoURL": repo, "path": f"idiff/{case['name']}", "targetRevision": "HEAD"},
        "destination": {"server": "https://kubernetes.default.svc", "namespace": case["namespace"]},
        "syncPolicy": {"syncOptions": ["CreateNamespace=true"] + case["syncOptions"]},
    }
    if case.get("ignoreDifferences"):
        spec["ignoreDifferences"] = copy.deepcopy(case["ignoreDifferences"])
    return {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": case["app"], "namespace": "argocd"}, "spec": spec}


def pointer_get(obj, pointer):
    """The value at a JSON pointer, or KeyError."""
    for part in pointer.lstrip("/").split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        obj = obj[int(part)] if isinstance(obj, list) else obj[part]
    return obj


def under(pointer, prefixes):
    """`pointer` equals or lies below one of `prefixes` (JSON pointers)."""
    return any(pointer == p or pointer.startswith(p.rstrip("/") + "/") for p in prefixes)


def observed(case, directory):
    status = open(os.path.join(directory, f"{case['name']}.status"), encoding="utf-8").read().strip()
    live = json.load(open(os.path.join(directory, f"{case['name']}.live.json"), encoding="utf-8"))
    change, git = case["change"], case["git"]
    value = pointer_get(live, change["pointer"])
    if value == change["value"]:
        after = "kept"
    else:
        after = "reverted" if value == pointer_get(substituted(base_object(case), git["v2"]), change["pointer"]) else f"other: {value!r}"
    reached = pointer_get(live, git["pointer"]) == git["v2"]
    return {"status_after_change": status, "after_sync": after, "git_change_reached": reached}


def predicted(case, explain):
    """What `syncguard explain --format json` predicts for the case's object."""
    obj = case["object"]
    for o in explain.get("objects", []):
        if (o.get("group", ""), o.get("kind"), o.get("name")) == (obj["group"], obj["kind"], obj["name"]) \
                and o.get("namespace") in (None, "", case["namespace"]):
            return {
                "status_after_change": "Synced" if under(case["change"]["pointer"], o.get("hidden", [])) else "OutOfSync",
                "after_sync": "kept" if under(case["change"]["pointer"], o.get("kept_at_sync", [])) else "reverted",
                "git_change_reached": not under(case["git"]["pointer"], o.get("frozen_lists", [])),
            }
    # An object explain says nothing about: nothing hidden, kept or frozen.
    return {"status_after_change": "OutOfSync", "after_sync": "reverted", "git_change_reached": True}


def cmd_info(args):
    cases = load_cases()
    print(json.dumps({n: c for n, c in cases.items() if args.phase in (None, c["phase"])}))


def cmd_prepare(args):
    cases = load_cases()
    value = "v1" if args.rev == "1" else "v2"
    for name in args.cases:
        case = cases[name]
        d = os.path.join(args.out, "idiff", name)
        os.makedirs(d, exist_ok=True)
        obj = substituted(base_object(case), case["git"][value])
        with open(os.path.join(d, "manifest.yaml"), "w", encoding="utf-8") as f:
            yaml.safe_dump(obj, f, sort_keys=False)
        with open(os.path.join(args.out, f"{name}.app.json"), "w", encoding="utf-8") as f:
            json.dump(application(case, args.repo), f, indent=2)


def cmd_judge(args):
    cases = load_cases()
    failed = False
    fields = ("status_after_change", "after_sync", "git_change_reached")
    print(f"  {'case':<20} {'after the live change':<22} {'after a sync':<14} {'Git change applied':<18} explain")
    for name in args.cases:
        case = cases[name]
        seen = observed(case, args.dir)
        path = os.path.join(HERE, "expect", f"{name}.json")
        if args.record:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(dict(seen, about=case["about"]), f, indent=2)
                f.write("\n")
        expected = json.load(open(path, encoding="utf-8")) if os.path.exists(path) else {}
        notes = []
        for k in fields:
            if expected.get(k) != seen[k]:
                failed = True
                notes.append(f"{k}: Argo CD {seen[k]!r}, expect/{name}.json {expected.get(k)!r}")
        explain_file = os.path.join(args.dir, f"{name}.explain.json")
        if not os.path.exists(explain_file):
            failed = True
            notes.append(f"no syncguard explain prediction ({explain_file})")
            verdict = "missing"
        else:
            said = predicted(case, json.load(open(explain_file, encoding="utf-8")))
            wrong = [k for k in fields if said[k] != seen[k]]
            verdict = "agrees" if not wrong else "DIFFERS"
            for k in wrong:
                failed = True
                notes.append(f"{k}: Argo CD {seen[k]!r}, syncguard explain predicts {said[k]!r}")
        print(f"  {name:<20} {seen['status_after_change']:<22} {seen['after_sync']:<14} "
              f"{str(seen['git_change_reached']).lower():<18} {verdict}")
        for n in notes:
            print(f"    MISMATCH {n}")
    sys.exit(1 if failed else 0)


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    i = sub.add_parser("info")
    i.add_argument("--phase", choices=["app", "system"])
    pr = sub.add_parser("prepare")
    pr.add_argument("--rev", choices=["1", "2"], required=True)
    pr.add_argument("--out", required=True)
    pr.add_argument("--repo", required=True)
    pr.add_argument("cases", nargs="+")
    j = sub.add_parser("judge")
    j.add_argument("--dir", required=True)
    j.add_argument("--record", action="store_true")
    j.add_argument("cases", nargs="+")
    args = p.parse_args()
    {"info": cmd_info, "prepare": cmd_prepare, "judge": cmd_judge}[args.cmd](args)


if __name__ == "__main__":
    main()
