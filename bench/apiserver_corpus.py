#!/usr/bin/env python3
"""How often syncguard names the cause of a public report of what the API server does to an object.

    bench/apiserver_corpus.py tests/fixtures/apiserver [--kube-binaries DIR] [--bin PATH]

Each directory holds manifests.yaml (the revision Argo CD syncs), optionally base.yaml (what is live
before: a refused change), and CAUSE (mechanism, kind, object namespace/name, field pointer). The
manifests are checked three ways: offline, with --ephemeral-cluster, and with --ephemeral-cluster
--live base.yaml when there is a base. A run *names the cause* when one of its open findings is on
the CAUSE object (kind and name) and its path is the CAUSE field, one of its ancestors or below it; a finding on the whole object or on all of
/spec is too vague to count.
Prints one line per directory and the totals.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cause_of(d):
    out = {}
    for line in open(os.path.join(d, "CAUSE")):
        if ":" in line:
            k, v = line.split(":", 1)
            out[k.strip()] = v.strip()
    return out


def run(bin_, kube, d, mode):
    args = [bin_, "check", "--format", "json", "--color", "never",
            "--policies", os.path.join(ROOT, "policies")]
    if mode != "offline":
        args += ["--ephemeral-cluster", "--kube-binaries", kube]
    if mode == "live":
        args += ["--live", os.path.join(d, "base.yaml")]
    args.append(os.path.join(d, "manifests.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run(args, capture_output=True, text=True, env={**os.environ, "TMPDIR": tmp})
    try:
        return json.loads(p.stdout), p.returncode
    except json.JSONDecodeError:
        return {"findings": [], "errors": [p.stdout + p.stderr]}, p.returncode


def names(report, cause):
    ns, _, name = cause["object"].rpartition("/")
    field = cause["field"]
    hits = []
    for f in report.get("findings", []):
        if f.get("state", "open") not in ("open", None) and f.get("state") != "open":
            continue
        r = f["resource"]
        if r.get("kind") != cause["kind"] or r.get("name") != name:
            continue
        path = f.get("path") or ""
        related = path == field or field.startswith(path + "/") or path.startswith(field + "/")
        if related and path not in ("", "/spec"):
            hits.append(f"{f['rule_id']}@{path}")
    return hits


def main():
    argv = sys.argv[1:]
    if not argv:
        print(__doc__)
        return 2
    corpus = argv[0]
    kube = os.environ.get("SYNCGUARD_KUBE_BINARIES", os.path.join(ROOT, ".tools/bin"))
    bin_ = os.path.join(ROOT, "target/debug/syncguard")
    if "--kube-binaries" in argv:
        kube = argv[argv.index("--kube-binaries") + 1]
    if "--bin" in argv:
        bin_ = argv[argv.index("--bin") + 1]
    totals = {"offline": 0, "server": 0}
    dirs = sorted(x for x in os.listdir(corpus) if os.path.isdir(os.path.join(corpus, x)))
    for x in dirs:
        d = os.path.join(corpus, x)
        cause = cause_of(d)
        off, _ = run(bin_, kube, d, "offline")
        mode = "live" if os.path.exists(os.path.join(d, "base.yaml")) else "ephemeral"
        srv, _ = run(bin_, kube, d, mode)
        a, b = names(off, cause), names(srv, cause)
        totals["offline"] += bool(a)
        totals["server"] += bool(b)
        print(f"{x:52} {cause['mechanism']:13} offline={'yes' if a else 'no ':3} server={'yes' if b else 'no ':3} {' '.join(b or a)[:80]}")
        errs = srv.get("errors") or []
        if errs:
            print(f"    errors: {errs[0][:200]}")
    n = len(dirs)
    print(f"\nnamed: offline {totals['offline']}/{n}, with the throwaway API server {totals['server']}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
