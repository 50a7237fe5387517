#!/usr/bin/env python3
"""How often syncguard names the cause of a public report where Argo CD's own configuration was at fault.

    bench/argocd_config_corpus.py tests/fixtures/argocd-config [--bin PATH] [--json]

Each directory holds manifests.yaml (the Argo CD object at fault and the objects it governs), CAUSE
(setting, kind, object namespace/name, field pointer, cause) and optionally ARGS (extra `syncguard
check` arguments, e.g. --argocd-version). Every directory is checked once, offline:

    syncguard check --format json --color never --policies <repo>/policies [ARGS] DIR/manifests.yaml

A run *names the cause* when one of its open findings is on the CAUSE object (kind and name, and
namespace when the CAUSE gives one) and its path is the CAUSE field, one of its ancestors, or below
it. A finding on the whole object ("") or on all of /spec is too vague to count.
Prints one line per directory (named / missed, with the rule ids it did report) and the totals;
--json prints the same as one JSON document.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOO_VAGUE = ("", "/", "/spec")


def cause_of(d):
    out = {}
    for line in open(os.path.join(d, "CAUSE")):
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def extra_args(d):
    p = os.path.join(d, "ARGS")
    if not os.path.exists(p):
        return []
    args = []
    for line in open(p):
        line = line.split("#", 1)[0].strip()
        if line:
            args += shlex.split(line)
    return args


def run(bin_, d):
    args = [bin_, "check", "--format", "json", "--color", "never",
            "--policies", os.path.join(ROOT, "policies")]
    args += extra_args(d)
    args.append(os.path.join(d, "manifests.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "TMPDIR": tmp})
    try:
        return json.loads(p.stdout), p.returncode
    except json.JSONDecodeError:
        return {"findings": [], "errors": [(p.stdout + p.stderr).strip()]}, p.returncode


def is_open(f):
    for key in ("status", "state"):
        if key in f and f[key] not in (None, "open"):
            return False
    return True


def related(path, field):
    if path in TOO_VAGUE:
        return False
    return path == field or field.startswith(path + "/") or path.startswith(field + "/")


def names(report, cause):
    ns, _, name = cause["object"].rpartition("/")
    field = cause["field"]
    hits = []
    for f in report.get("findings", []):
        if not is_open(f):
            continue
        r = f.get("resource", {})
        if r.get("kind") != cause["kind"] or r.get("name") != name:
            continue
        if ns and r.get("namespace") not in (None, "", ns):
            continue
        path = f.get("path") or ""
        if related(path, field):
            hits.append(f"{f['rule_id']}@{path}")
    return hits


def main():
    argv = sys.argv[1:]
    if not argv or argv[0].startswith("-"):
        print(__doc__)
        return 2
    corpus = argv[0]
    bin_ = os.path.join(ROOT, "target/debug/syncguard")
    if "--bin" in argv:
        bin_ = argv[argv.index("--bin") + 1]
    as_json = "--json" in argv
    dirs = sorted(x for x in os.listdir(corpus) if os.path.isfile(os.path.join(corpus, x, "CAUSE")))
    rows = []
    for x in dirs:
        d = os.path.join(corpus, x)
        cause = cause_of(d)
        report, rc = run(bin_, d)
        hits = names(report, cause)
        reported = sorted({f["rule_id"] for f in report.get("findings", []) if is_open(f)})
        rows.append({
            "dir": x,
            "setting": cause.get("setting", ""),
            "kind": cause.get("kind", ""),
            "object": cause.get("object", ""),
            "field": cause.get("field", ""),
            "named": bool(hits),
            "hits": hits,
            "reported": reported,
            "errors": report.get("errors") or [],
            "exit": rc,
        })
    named = sum(r["named"] for r in rows)
    if as_json:
        print(json.dumps({"corpus": corpus, "total": len(rows), "named": named, "dirs": rows}, indent=2))
        return 0
    for r in rows:
        verdict = "named " if r["named"] else "missed"
        shown = " ".join(r["hits"]) if r["hits"] else ("reported: " + (",".join(r["reported"]) or "-"))
        print(f"{r['dir']:52} {verdict} {shown[:90]}")
        if r["errors"]:
            print(f"    errors: {str(r['errors'][0])[:200]}")
    print(f"\nnamed: {named}/{len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
