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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--redis-port", type=int, required=True)
    p.add_argument("--revision", required=True)
    p.add_argument("--render", required=True)
    p.add_argument("--apps", type=int, required=True)
    p.add_argument("--names", required=True,
                   help="the referee's Applications, space-separated (other scenarios' Applications "
                        "in the same repository are rendered at the same commit too)")
    args = p.parse_args()
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
