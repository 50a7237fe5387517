#!/usr/bin/env python3
"""The render referee: what Argo CD's repo-server rendered for each Application, read from the
manifest cache it keeps in redis, against what `syncguard render` printed for the same
Applications, object by object, field by field (key order normalised).

    referee.py --redis-port PORT --revision SHA --render RENDERED.yaml --apps N --names "A B ..."

The repo-server caches each GenerateManifest answer under `mfst|<tracking>|<app>|<revision>|...`
(`.gz`: gzip-compressed JSON of a CachedManifestResponse, whose manifestResponse.manifests are the
objects as JSON strings). Only entries of REVISION count. RENDERED is syncguard's output: a YAML
stream whose documents are JSON objects, each carrying its Application in its tracking id.

Prints one line per Application (objects compared, equal or not) and every difference; exit 0
when at least N Applications were compared and all are equal, 1 otherwise. Standard library only
(a minimal RESP client: KEYS and GET).

The ApplicationSet referee (argocd_appset_referee) compares Applications instead:

    referee.py --appsets --live APPLICATIONS.json --render RENDERED.yaml --errors STDERR \
        --names "SET ..." --expect-error "SET ..."

LIVE is `kubectl get applications -n argocd -o json`: the Applications the real ApplicationSet
controller generated, each tied to its ApplicationSet by an owner reference. RENDERED is
`syncguard render` of the same ApplicationSets: the documents after a `# ApplicationSet <name>`
comment are the Applications it generates. For each ApplicationSet of SET the two sides must
generate the same Application names, and each Application the same project, destination,
sources (`source` as a one-element `sources`), syncPolicy, labels, annotations and finalizers,
both sides normalised as the application controller normalises every Application's spec (zero
blocks dropped: `generated_fields`). An ApplicationSet of --expect-error must be refused by both: no Application on either side, and
an error line of render (STDERR) under its name; no other ApplicationSet may have one.
"""

import argparse
import gzip
import json
import socket
import sys

class Redis:
    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def command(self, *args):
        out = f"*{len(args)}\r\n".encode()
        for a in args:
            a = a.encode() if isinstance(a, str) else a
            out += f"${len(a)}\r\n".encode() + a + b"\r\n"
        self.sock.sendall(out)
        return self.reply()

    def line(self):
        while b"\r\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("redis closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def exact(self, n):
        while len(self.buf) < n + 2:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("redis closed the connection")
            self.buf += chunk
        data, self.buf = self.buf[:n], self.buf[n + 2:]
        return data

    def reply(self):
        line = self.line()
        kind, rest = line[:1], line[1:]
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self.exact(n)
        if kind == b"*":
            return [self.reply() for _ in range(int(rest))]
        if kind in (b"+", b":"):
            return rest
        raise RuntimeError(f"redis: {line!r}")


def canonical(obj):
    return json.dumps(obj, sort_keys=True)


def argo_side(port, revision):
    r = Redis(port)
    per_app = {}
    keys = [k.decode() for k in r.command("KEYS", "mfst|*")]
    for key in keys:
        parts = key.split("|")
        # mfst|<tracking>|<app>|<revision>|<namespace>|<hash>|...
        if len(parts) < 5 or parts[3] != revision:
            continue
        raw = r.command("GET", key)
        if raw is None:
            continue
        data = gzip.decompress(raw) if key.endswith(".gz") else raw
        cached = json.loads(data)
        response = cached.get("manifestResponse") or {}
        if cached.get("mostRecentError"):
            print(f"argo: {parts[2]}: {cached['mostRecentError']}", file=sys.stderr)
        manifests = [json.loads(m) for m in response.get("manifests") or []]
        per_app.setdefault(parts[2], []).extend(manifests)
    return per_app


def syncguard_side(path):
    """Objects per Application, by the `# Application <name> (...)` comment `render` writes
    before each (CRDs carry no tracking id)."""
    text = open(path, encoding="utf-8").read()
    per_app = {}
    decoder = json.JSONDecoder()
    for doc in text.split("\n---\n"):
        lines = doc.splitlines()
        app = next((l.split()[2] for l in lines if l.startswith("# Application ")), None)
        body = "\n".join(l for l in lines if not l.startswith("#") and l != "---").strip()
        if not body:
            continue
        if app is None:
            raise SystemExit(f"a rendered object without its '# Application' line: {body[:200]}")
        obj, _ = decoder.raw_decode(body)
        per_app.setdefault(app, []).append(obj)
    return per_app


def key_of(obj):
    md = obj.get("metadata") or {}
    return (obj.get("apiVersion", ""), obj.get("kind", ""), md.get("namespace", ""), md.get("name", ""))


def rendered_documents(path):
    """(comment, object) for each document of `syncguard render`'s output."""
    text = open(path, encoding="utf-8").read()
    decoder = json.JSONDecoder()
    for doc in text.split("\n---\n"):
        lines = doc.splitlines()
        comment = next((l for l in lines if l.startswith("# ")), "")
        body = "\n".join(l for l in lines if not l.startswith("#") and l != "---").strip()
        if body:
            obj, _ = decoder.raw_decode(body)
            yield comment, obj


def zero(v):
    """Go's zero value, deeply: what `IsZero` of Argo CD's source and sync-policy types says."""
    if isinstance(v, dict):
        return all(zero(x) for x in v.values())
    return v in (None, "", False, 0, [])


def normalised_source(source):
    """A source as the application controller stores it (`argo.NormalizeSource`): a zero
    `helm` or `kustomize` block dropped, a zero `directory` block dropped or cut down to its
    include/exclude."""
    source = dict(source)
    for block in ("helm", "kustomize"):
        if block in source and zero(source[block]):
            del source[block]
    directory = source.get("directory")
    if directory is not None and zero(directory):
        kept = {k: directory[k] for k in ("include", "exclude") if directory.get(k)}
        if kept:
            source["directory"] = kept
        else:
            del source["directory"]
    return source


def generated_fields(app):
    """What an ApplicationSet decides about an Application it generates, as the application
    controller keeps it: it rewrites every Application's spec with `argo.NormalizeApplicationSpec`
    (project "" is `default`, a zero syncPolicy and zero source blocks are dropped) as soon as it
    sees it, so the stored Applications are normalised whatever the ApplicationSet controller
    wrote. Both sides are normalised alike."""
    md = app.get("metadata") or {}
    spec = app.get("spec") or {}
    sources = spec.get("sources") or ([spec["source"]] if spec.get("source") else [])
    sync_policy = spec.get("syncPolicy")
    return {
        "project": spec.get("project") or "default",
        "destination": spec.get("destination"),
        "sources": [normalised_source(x) for x in sources],
        "syncPolicy": None if zero(sync_policy) else sync_policy,
        "labels": md.get("labels") or {},
        "annotations": md.get("annotations") or {},
        "finalizers": sorted(md.get("finalizers") or []),
    }


def appsets_main(args):
    names = args.names.split()
    live = {}
    for app in json.load(open(args.live, encoding="utf-8")).get("items", []):
        for ref in (app.get("metadata") or {}).get("ownerReferences") or []:
            if ref.get("kind") == "ApplicationSet" and ref.get("name") in names:
                live.setdefault(ref["name"], {})[app["metadata"]["name"]] = app
    ours = {}
    for comment, obj in rendered_documents(args.render):
        if comment.startswith("# ApplicationSet "):
            ours.setdefault(comment.split()[2], {})[obj["metadata"]["name"]] = obj
    # `render`'s stderr: the error lines under each ApplicationSet's header line.
    errors, current = {}, None
    for line in (open(args.errors, encoding="utf-8").read().splitlines() if args.errors else []):
        if line.startswith("syncguard: ApplicationSet "):
            current = line.split()[2]
        elif line.startswith("syncguard: "):
            current = None if not line.startswith("syncguard:   ") else current
            if current and line.startswith("syncguard:   error: "):
                errors.setdefault(current, []).append(line[len("syncguard:   error: "):])
    expect_error = set(args.expect_error.split())
    failed = False
    for name in names:
        a, b = live.get(name, {}), ours.get(name, {})
        if name in expect_error:
            # Argo CD refused it (the scenario waited for ErrorOccurred): nothing generated on
            # either side, and syncguard says why.
            if a or b or not errors.get(name):
                failed = True
                print(f"  DIFFERENT: {name}: expected an error and no Application on both sides; "
                      f"Argo CD generated {sorted(a)}, syncguard {sorted(b)}, syncguard's errors: "
                      f"{errors.get(name, [])}")
            else:
                print(f"  equal: {name}: refused by both (syncguard: {errors[name][0]})")
            continue
        if errors.get(name):
            failed = True
            print(f"  DIFFERENT: {name}: syncguard reports errors Argo CD does not: {errors[name]}")
        if not a:
            failed = True
            print(f"  DIFFERENT: {name}: the ApplicationSet controller generated no Application")
            continue
        diffs = []
        for app in sorted(set(a) | set(b)):
            if app not in b:
                diffs.append(f"    only Argo CD: {app}")
            elif app not in a:
                diffs.append(f"    only syncguard: {app}")
            else:
                fa, fb = generated_fields(a[app]), generated_fields(b[app])
                for field in fa:
                    if canonical(fa[field]) != canonical(fb[field]):
                        diffs.append(f"    {app}: {field}\n      Argo CD:   {canonical(fa[field])}"
                                     f"\n      syncguard: {canonical(fb[field])}")
        if diffs:
            failed = True
            print(f"  DIFFERENT: {name}: Argo CD {len(a)} Applications, syncguard {len(b)}")
            print("\n".join(diffs))
        else:
            print(f"  equal: {name}: {len(a)} Applications ({', '.join(sorted(a))})")
    sys.exit(1 if failed else 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--appsets", action="store_true",
                   help="compare the Applications ApplicationSets generate (see the module's doc)")
    p.add_argument("--live", help="with --appsets: kubectl's JSON list of Applications")
    p.add_argument("--errors", help="with --appsets: render's stderr")
    p.add_argument("--expect-error", default="",
                   help="with --appsets: ApplicationSets both sides must refuse, space-separated")
    p.add_argument("--redis-port", type=int)
    p.add_argument("--revision")
    p.add_argument("--render", required=True)
    p.add_argument("--apps", type=int)
    p.add_argument("--names", required=True,
                   help="the referee's Applications (ApplicationSets with --appsets), "
                        "space-separated (other scenarios' Applications in the same repository are "
                        "rendered at the same commit too)")
    args = p.parse_args()
    if args.appsets:
        if not args.live:
            p.error("--appsets needs --live")
        appsets_main(args)
    if args.redis_port is None or args.revision is None or args.apps is None:
        p.error("--redis-port, --revision and --apps are required without --appsets")
    names = set(args.names.split())
    argo = {k: v for k, v in argo_side(args.redis_port, args.revision).items() if k in names}
    ours = {k: v for k, v in syncguard_side(args.render).items() if k in names}
    equal = 0
    failed = False
    for app in sorted(set(argo) | set(ours)):
        a = sorted(argo.get(app, []), key=lambda o: (key_of(o), canonical(o)))
        b = sorted(ours.get(app, []), key=lambda o: (key_of(o), canonical(o)))
        if [canonical(o) for o in a] == [canonical(o) for o in b]:
            equal += 1
            print(f"  equal: {app}: {len(a)} objects")
            continue
        failed = True
        print(f"  DIFFERENT: {app}: Argo CD {len(a)} objects, syncguard {len(b)}")
        ka = {key_of(o): o for o in a}
        kb = {key_of(o): o for o in b}
        for k in sorted(set(ka) | set(kb)):
            if k not in kb:
                print(f"    only Argo CD: {k}")
            elif k not in ka:
                print(f"    only syncguard: {k}")
            elif canonical(ka[k]) != canonical(kb[k]):
                print(f"    differs: {k}\n      Argo CD:   {canonical(ka[k])}\n      syncguard: {canonical(kb[k])}")
    print(f"  {equal} Applications equal, {len(set(argo) | set(ours)) - equal} different; {args.apps} required")
    sys.exit(0 if not failed and equal >= args.apps else 1)


if __name__ == "__main__":
    main()
