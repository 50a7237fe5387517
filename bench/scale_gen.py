#!/usr/bin/env python3
"""Helpers for bench/scale.sh (issue 14): Argo CD Applications at scale against a real
kube-apiserver, and the measurements around `syncguard reconcile` / `syncguard serve --cluster`.

Python 3 standard library only. Every subcommand that talks to the API server takes
--server/--ca/--cert/--key (the control plane's URL, CA and admin client certificate) and uses
HTTPS keep-alive connections, one per worker thread.

  plan        which Applications exist: name, namespace, destination, kind (normal/stuck/flip),
              live objects or not (deterministic for N, R and the shares)
  create      POST the namespaces and the N Applications (status included: the test CRD has no
              status subresource), in parallel; prints time and rate
  live        POST the live objects (Deployments, Services, ConfigMaps, Secrets,
              ServiceAccounts, the PreSync hook Job) of the apps marked live
  follow      poll a reconciler's /metrics (and /proc/PID/status) until milestones are reached
  flip        flip the "flip" apps Synced <-> OutOfSync (a new finished sync of the same revision
              at each Synced), waiting after each wave until the reconciler has reconciled them
  wait-log    wait for a pattern in a log file; prints the time since --t0
  review      send AdmissionReviews for a tracked PreSync hook Job to syncguard serve over one
              keep-alive HTTPS connection; client-side latencies
  elapsed     server-side latencies: the elapsed_us of the review log lines
  events      count syncguard's events.k8s.io Events
  reports     sizes of the PolicyReports
  audit       count the API server audit log entries per user, verb and resource, per phase
  rss         VmHWM / VmRSS of a process
  table       the markdown tables from the per-size result directories
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import re
import ssl
import sys
import threading
import time
import urllib.parse
import uuid
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone

UA = "syncguard-scale-gen"
TRACKING = "argocd.argoproj.io/tracking-id"
WAVE = "argocd.argoproj.io/sync-wave"
HOOK = "argocd.argoproj.io/hook"


def log(msg: str) -> None:
    print(f"[scale_gen] {msg}", file=sys.stderr, flush=True)


def iso(t: datetime) -> str:
    return t.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_json(path: str, obj) -> None:
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True)
        f.write("\n")


# --- the API server ----------------------------------------------------------------------------


class Kube:
    """A tiny HTTPS client: one keep-alive connection per thread, retries on 429/5xx and on
    dropped connections."""

    def __init__(self, server: str, ca: str, cert: str, key: str):
        u = urllib.parse.urlsplit(server)
        self.host, self.port = u.hostname, u.port or 443
        self.ctx = ssl.create_default_context(cafile=ca)
        self.ctx.load_cert_chain(cert, key)
        self.local = threading.local()

    def _conn(self) -> http.client.HTTPSConnection:
        c = getattr(self.local, "conn", None)
        if c is None:
            c = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=120)
            self.local.conn = c
        return c

    def _drop(self) -> None:
        c = getattr(self.local, "conn", None)
        if c is not None:
            c.close()
        self.local.conn = None

    def request(self, method: str, path: str, body=None, ctype="application/json"):
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body, separators=(",", ":")).encode()
        headers = {"Accept": "application/json", "User-Agent": UA}
        if data is not None:
            headers["Content-Type"] = ctype
        delay = 0.2
        for attempt in range(10):
            try:
                c = self._conn()
                c.request(method, path, body=data, headers=headers)
                r = c.getresponse()
                payload = r.read()
                if r.status in (429, 500, 502, 503, 504) and attempt < 9:
                    time.sleep(delay)
                    delay = min(delay * 2, 5)
                    continue
                return r.status, payload
            except (OSError, http.client.HTTPException):
                self._drop()
                if attempt == 9:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 5)
        raise RuntimeError("unreachable")

    def must(self, method, path, body=None, ok=(200, 201), ctype="application/json"):
        status, payload = self.request(method, path, body, ctype)
        if status not in ok:
            raise RuntimeError(f"{method} {path}: HTTP {status}: {payload[:400]!r}")
        return status, payload

    def list_all(self, path: str, limit: int = 500):
        items, cont = [], ""
        while True:
            sep = "&" if "?" in path else "?"
            q = f"{path}{sep}limit={limit}" + (f"&continue={urllib.parse.quote(cont)}" if cont else "")
            _, payload = self.must("GET", q, ok=(200,))
            page = json.loads(payload)
            items.extend(page.get("items") or [])
            cont = (page.get("metadata") or {}).get("continue") or ""
            if not cont:
                return items


def kube_from(args) -> Kube:
    return Kube(args.server, args.ca, args.cert, args.key)


def add_kube_args(p):
    p.add_argument("--server", required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--cert", required=True)
    p.add_argument("--key", required=True)
    p.add_argument("--threads", type=int, default=12)


def parallel(kube: Kube, threads: int, jobs, label: str):
    """Runs (method, path, body[, ctype]) jobs on `threads` connections; returns (seconds, n,
    bytes, errors). 409 AlreadyExists counts as done (a retried POST that had succeeded)."""
    jobs = list(jobs)
    sent = [0]
    lock = threading.Lock()
    errors = []
    done = [0]
    t0 = time.perf_counter()
    last = [t0]

    def one(job):
        method, path, body = job[0], job[1], job[2]
        ctype = job[3] if len(job) > 3 else "application/json"
        data = json.dumps(body, separators=(",", ":")).encode()
        status, payload = kube.request(method, path, data, ctype)
        with lock:
            sent[0] += len(data)
            done[0] += 1
            if status not in (200, 201, 409):
                errors.append(f"{method} {path}: HTTP {status}: {payload[:300]!r}")
            now = time.perf_counter()
            if now - last[0] > 10:
                last[0] = now
                log(f"{label}: {done[0]}/{len(jobs)} in {now - t0:.0f} s")

    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(one, jobs))
    return time.perf_counter() - t0, len(jobs), sent[0], errors


# --- the plan ----------------------------------------------------------------------------------


def plan_apps(n: int, namespaces: int, dests: int, stuck: float, flip: float, live: float, seed: int = 14):
    """N Applications, deterministic. Namespaces: argocd, apps-1 .. apps-(K-1) round robin;
    destinations team-00 .. team-(D-1) at random; ~stuck share stuck, ~flip share flipping,
    the live share (at least 1) with live objects."""
    rnd = random.Random(seed)
    ns_names = ["argocd"] + [f"apps-{i}" for i in range(1, namespaces)]
    every_stuck = max(1, round(1 / stuck)) if stuck > 0 else 0
    every_flip = max(1, round(1 / flip)) if flip > 0 else 0
    every_live = max(1, round(1 / live)) if live > 0 else 0
    apps = []
    for i in range(n):
        kind = "normal"
        if every_stuck and i % every_stuck == every_stuck // 3:
            kind = "stuck"
        elif every_flip and i % every_flip == (2 * every_flip) // 3:
            kind = "flip"
        apps.append({
            "name": f"app-{i:05d}",
            "namespace": ns_names[i % len(ns_names)],
            "dest": f"team-{rnd.randrange(dests):02d}",
            "kind": kind,
            "live": bool(every_live) and i % every_live == 0,
            "hours_ago": 1 + rnd.random() * 23,
        })
    if live > 0 and not any(a["live"] for a in apps):
        apps[0]["live"] = True
    # One stuck app with live objects (its hook Job exists), so SG501 also reads a real Job.
    stuck_apps = [a for a in apps if a["kind"] == "stuck"]
    if live > 0 and stuck_apps and not any(a["live"] for a in stuck_apps):
        stuck_apps[0]["live"] = True
    return apps


def instance(app) -> str:
    """The app instance name Argo CD writes in tracking ids: `name` for Applications in the
    control plane's namespace, `namespace_name` for the others (apps in any namespace)."""
    return app["name"] if app["namespace"] == "argocd" else f"{app['namespace']}_{app['name']}"


def rev(name: str, n: int) -> str:
    return hashlib.sha1(f"{name}/{n}".encode()).hexdigest()


def resources(app, count: int):
    """The app's status.resources: (group, version, kind, name, wave, hook, hook_type)."""
    a = app["name"]
    out = [
        ("", "v1", "ServiceAccount", a, -1, False, None),
        ("external-secrets.io", "v1beta1", "ExternalSecret", f"{a}-db-credentials", -1, False, None),
        ("", "v1", "ConfigMap", f"{a}-config", 0, False, None),
        ("", "v1", "Secret", f"{a}-tls", 0, False, None),
        ("batch", "v1", "Job", f"{a}-db-migrate", 0, True, "PreSync"),
        ("batch", "v1", "Job", f"{a}-smoke-test", 0, True, "PostSync"),
        ("monitoring.coreos.com", "v1", "ServiceMonitor", a, 5, False, None),
    ]
    i = 0
    while len(out) < count:
        comp, wave = f"{a}-c{i:02d}", i % 6
        out.append(("apps", "v1", "Deployment", comp, wave, False, None))
        out.append(("", "v1", "Service", comp, wave, False, None))
        out.append(("", "v1", "ConfigMap", f"{comp}-env", wave, False, None))
        i += 1
    return out[:count]


FIRST_DEPLOYMENT = 7  # index in resources() of the first Deployment (what a flip marks OutOfSync)
HEALTHLESS = {"ConfigMap", "Secret", "ServiceAccount"}


def status_entry(app, r, sync="Synced"):
    group, version, kind, name, wave, hook, _ = r
    e = {"version": version, "kind": kind, "namespace": app["dest"], "name": name, "status": sync, "syncWave": wave}
    if group:
        e["group"] = group
    if hook:
        e["hook"] = True
        e.pop("status")
    elif kind not in HEALTHLESS:
        e["health"] = {"status": "Healthy"}
    return e


def sync_result_entry(app, r, phase="Succeeded"):
    group, version, kind, name, wave, hook, hook_type = r
    e = {"group": group, "version": version, "kind": kind, "namespace": app["dest"], "name": name,
         "status": "Synced", "message": f"{kind.lower()}/{name} configured", "syncPhase": "Sync"}
    if hook:
        e.update({"hookType": hook_type, "hookPhase": phase, "syncPhase": hook_type,
                  "message": "Reached expected number of succeeded pods", "status": ""})
    return e


def source(app):
    return {"repoURL": f"https://git.example.com/{app['dest']}/{app['name']}.git", "path": "deploy", "targetRevision": "main"}


def succeeded_op(app, res, revision, started: datetime, finished: datetime):
    return {
        "phase": "Succeeded",
        "message": "successfully synced (all tasks run)",
        "startedAt": iso(started),
        "finishedAt": iso(finished),
        "operation": {"sync": {"revision": revision, "syncStrategy": {"hook": {}}},
                      "initiatedBy": {"automated": True}, "retry": {"limit": 5}},
        "syncResult": {"revision": revision, "source": source(app),
                       "resources": [sync_result_entry(app, r) for r in res]},
    }


def application(app, count: int, now: datetime):
    res = resources(app, count)
    last = now - timedelta(hours=app["hours_ago"])
    revisions = [rev(app["name"], k) for k in range(10)]
    history = []
    for k in range(10):  # oldest first, 12 h apart: nothing inside the 30 min loop window
        deployed = last - timedelta(hours=12 * (9 - k))
        history.append({"id": k, "revision": revisions[k], "source": source(app),
                        "deployStartedAt": iso(deployed - timedelta(seconds=40)), "deployedAt": iso(deployed),
                        "initiatedBy": {"automated": True}})
    revision = revisions[-1]
    status = {
        "sync": {"status": "Synced", "revision": revision,
                 "comparedTo": {"source": source(app), "destination": {"server": "https://kubernetes.default.svc", "namespace": app["dest"]}}},
        "health": {"status": "Healthy"},
        "resources": [status_entry(app, r) for r in res],
        "history": history,
        "reconciledAt": iso(now),
        "sourceType": "Directory",
        "summary": {"images": [f"registry.example.com/{app['dest']}/{app['name']}:1.{k}.0" for k in range(3)]},
        "operationState": succeeded_op(app, res, revision, last - timedelta(seconds=40), last),
    }
    if app["kind"] == "stuck":
        job = f"{app['name']}-db-migrate"
        started = now - timedelta(minutes=45)
        status["sync"]["status"] = "OutOfSync"
        status["health"] = {"status": "Progressing"}
        for e in status["resources"]:
            if "status" in e:
                e["status"] = "OutOfSync"
        status["operationState"] = {
            "phase": "Running",
            "message": f"waiting for completion of hook batch/Job/{job}",
            "startedAt": iso(started),
            "operation": {"sync": {"revision": revision}, "initiatedBy": {"automated": True}, "retry": {"limit": 5}},
            "syncResult": {"revision": revision, "source": source(app), "resources": [
                {"group": "batch", "version": "v1", "kind": "Job", "namespace": app["dest"], "name": job,
                 "hookType": "PreSync", "hookPhase": "Running", "syncPhase": "PreSync", "message": "job is still running",
                 "status": ""}]},
        }
    return {
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": app["name"], "namespace": app["namespace"],
                     "labels": {"scale.syncguard.dev/kind": app["kind"], "app.kubernetes.io/part-of": app["dest"]},
                     "finalizers": ["resources-finalizer.argocd.argoproj.io"]},
        "spec": {"project": "default", "source": source(app),
                 "destination": {"server": "https://kubernetes.default.svc", "namespace": app["dest"]},
                 "syncPolicy": {"automated": {"selfHeal": True, "prune": True},
                                "syncOptions": ["ServerSideApply=true", "PruneLast=true"],
                                "retry": {"limit": 5, "backoff": {"duration": "5s", "factor": 2, "maxDuration": "3m"}}}},
        "status": status,
    }


def cmd_plan(args):
    apps = plan_apps(args.count, args.namespaces, args.dest_namespaces, args.stuck_share, args.flip_share, args.live_share)
    plan = {"count": args.count, "resources": args.resources, "apps": apps}
    write_json(args.out, plan)
    c = Counter(a["kind"] for a in apps)
    live = [a for a in apps if a["live"]]
    summary = {"apps": len(apps), "stuck": c["stuck"], "flip": c["flip"], "live": len(live),
               "live_stuck": sum(a["kind"] == "stuck" for a in live),
               "namespaces": sorted({a["namespace"] for a in apps}),
               "dest_namespaces": len({a["dest"] for a in apps})}
    write_json(args.summary, summary)
    log(f"plan: {summary['apps']} apps, {summary['stuck']} stuck, {summary['flip']} flipping, "
        f"{summary['live']} with live objects ({summary['live_stuck']} of them stuck)")


def load_plan(path):
    with open(path) as f:
        return json.load(f)


def namespace_jobs(names):
    return [("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}) for n in sorted(names)]


def cmd_create(args):
    plan = load_plan(args.plan)
    kube = kube_from(args)
    apps = plan["apps"]
    names = {a["namespace"] for a in apps} | {a["dest"] for a in apps} | {"syncguard"}
    _, _, _, errors = parallel(kube, args.threads, namespace_jobs(names), "namespaces")
    if errors:
        raise SystemExit("creating namespaces failed: " + "; ".join(errors[:3]))
    now = datetime.now(timezone.utc)
    jobs = (("POST", f"/apis/argoproj.io/v1alpha1/namespaces/{a['namespace']}/applications",
             application(a, plan["resources"], now)) for a in apps)
    secs, n, sent, errors = parallel(kube, args.threads, jobs, "applications")
    if errors:
        raise SystemExit(f"{len(errors)} Application creates failed, e.g. " + "; ".join(errors[:3]))
    out = {"seconds": secs, "count": n, "rate": n / secs if secs else 0, "bytes": sent,
           "avg_bytes": sent / n if n else 0, "threads": args.threads}
    write_json(args.out, out)
    log(f"created {n} Applications in {secs:.1f} s ({out['rate']:.0f}/s, {out['avg_bytes'] / 1024:.1f} KiB each, {args.threads} connections)")


def live_objects(app, count: int):
    a, ns, inst = app["name"], app["dest"], instance(app)

    def meta(group, kind, name, wave, extra=None):
        ann = {TRACKING: f"{inst}:{group}/{kind}:{ns}/{name}", WAVE: str(wave)}
        ann.update(extra or {})
        return {"name": name, "namespace": ns, "annotations": ann,
                "labels": {"app.kubernetes.io/instance": inst, "app.kubernetes.io/name": a}}

    out = []
    for r in resources(app, count):
        group, version, kind, name, wave, hook, hook_type = r
        if kind == "ServiceAccount":
            out.append(("/api/v1/namespaces/{ns}/serviceaccounts", {"apiVersion": "v1", "kind": kind, "metadata": meta(group, kind, name, wave)}))
        elif kind == "ConfigMap":
            out.append(("/api/v1/namespaces/{ns}/configmaps", {"apiVersion": "v1", "kind": kind, "metadata": meta(group, kind, name, wave),
                        "data": {"LOG_LEVEL": "info", "FEATURE_FLAGS": "a,b,c", "config.yaml": "server:\n  port: 8080\n"}}))
        elif kind == "Secret":
            out.append(("/api/v1/namespaces/{ns}/secrets", {"apiVersion": "v1", "kind": kind, "type": "kubernetes.io/tls", "metadata": meta(group, kind, name, wave),
                        "data": {"tls.crt": "Y2VydA==", "tls.key": "a2V5"}}))
        elif kind == "Service":
            # Headless: the test control plane's service CIDR (/24) has room for 254 ClusterIPs.
            out.append(("/api/v1/namespaces/{ns}/services", {"apiVersion": "v1", "kind": kind, "metadata": meta(group, kind, name, wave),
                        "spec": {"clusterIP": "None", "selector": {"app": name}, "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}))
        elif kind == "Deployment":
            out.append(("/apis/apps/v1/namespaces/{ns}/deployments", {
                "apiVersion": "apps/v1", "kind": kind, "metadata": meta(group, kind, name, wave),
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": name}},
                         "template": {"metadata": {"labels": {"app": name}}, "spec": {
                             "serviceAccountName": a,
                             "containers": [{"name": "app", "image": f"registry.example.com/{ns}/{a}:1.2.0",
                                             "ports": [{"containerPort": 8080}],
                                             "envFrom": [{"configMapRef": {"name": f"{name}-env"}}, {"secretRef": {"name": f"{a}-db-credentials"}}],
                                             "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "tls", "mountPath": "/etc/tls"}],
                                             "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}}}],
                             "volumes": [{"name": "config", "configMap": {"name": f"{a}-config"}}, {"name": "tls", "secret": {"secretName": f"{a}-tls"}}]}}}}))
        elif kind == "Job" and hook_type == "PreSync":
            out.append(("/apis/batch/v1/namespaces/{ns}/jobs", {
                "apiVersion": "batch/v1", "kind": kind,
                "metadata": meta(group, kind, name, wave, {HOOK: "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation"}),
                "spec": {"template": {"spec": {"restartPolicy": "OnFailure", "serviceAccountName": a, "containers": [{
                    "name": "migrate", "image": f"registry.example.com/{ns}/{a}-migrate:1.2.0", "args": ["migrate", "up"],
                    "envFrom": [{"secretRef": {"name": f"{a}-db-credentials"}}]}]}}}}))
    return [(p.format(ns=ns), body) for p, body in out]


def cmd_live(args):
    plan = load_plan(args.plan)
    kube = kube_from(args)
    live = [a for a in plan["apps"] if a["live"]]
    jobs = [("POST", path, body) for a in live for path, body in live_objects(a, plan["resources"])]
    secs, n, sent, errors = parallel(kube, args.threads, jobs, "live objects")
    if errors:
        raise SystemExit(f"{len(errors)} live object creates failed, e.g. " + "; ".join(errors[:3]))
    kinds = Counter(body["kind"] for _, _, body in jobs)
    out = {"apps": len(live), "share": len(live) / max(1, len(plan["apps"])), "objects": n, "seconds": secs,
           "kinds": dict(kinds), "names": [f"{a['namespace']}/{a['name']}" for a in live][:20],
           "stuck": sum(a["kind"] == "stuck" for a in live), "dest_namespaces": sorted({a["dest"] for a in live})}
    write_json(args.out, out)
    log(f"live objects: {n} for {len(live)} apps ({100 * out['share']:.1f} %) in {secs:.1f} s: {dict(kinds)}")


# --- the reconciler's metrics ------------------------------------------------------------------


METRIC_LINE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{[^}]*\})?)\s+(\S+)")


def scrape(conn: http.client.HTTPConnection):
    conn.request("GET", "/metrics")
    r = conn.getresponse()
    text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        m = METRIC_LINE.match(line)
        if m:
            try:
                out[m.group(1)] = float(m.group(2))
            except ValueError:
                pass
    return out


def proc_status(pid: int):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS", "Threads"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of a process (all threads)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


def reconciles(m):
    return m.get('syncguard_application_reconciles_total{outcome="ok"}', 0) + m.get('syncguard_application_reconciles_total{outcome="error"}', 0)


def cmd_follow(args):
    """Milestones, in seconds since --t0 (an epoch time taken just before the event):
    ready (/readyz gauge 1), leader (gauge 1), reach (reconciles >= base + N), sweep (leader,
    reconciles >= base + N, and no new reconcile for --quiet s after the later of the last one
    and the leader time; the time recorded is that of the last reconcile), quiet (the same without
    the leader condition), audit (an audit pass finished)."""
    want = set(args.want.split(","))
    u = urllib.parse.urlsplit(args.metrics)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    t0 = args.t0
    ms = {}
    base = None
    last_total, last_change = None, None
    leader_at = None
    total_at_leader = None
    peak = {}
    samples = 0
    series = []
    last_series = 0.0
    m = {}
    deadline = time.time() + args.timeout
    timed_out = False
    while True:
        now = time.time()
        try:
            m = scrape(conn)
        except (OSError, http.client.HTTPException):
            conn.close()
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
            if args.pid and not os.path.exists(f"/proc/{args.pid}"):
                raise SystemExit(f"follow: process {args.pid} is gone")
            time.sleep(0.2)
            if now > deadline:
                timed_out = True
                break
            continue
        samples += 1
        st = proc_status(args.pid) if args.pid else {}
        for k, v in st.items():
            peak[k] = max(peak.get(k, 0), v)
        total = reconciles(m)
        if base is None:
            base = total if args.base_now else 0
        if last_total is None or total != last_total:
            last_total, last_change = total, now
        rel = lambda t: t - t0  # noqa: E731
        if m.get("syncguard_reconciler_ready") == 1 and "ready" not in ms:
            ms["ready"] = rel(now)
        if m.get("syncguard_leader") == 1 and "leader" not in ms:
            ms["leader"] = rel(now)
            leader_at, total_at_leader = now, total
        if total >= base + args.n and "reach" not in ms:
            ms["reach"] = rel(now)
        if leader_at is not None and total_at_leader is not None and total - total_at_leader >= args.n and "leader_n" not in ms:
            ms["leader_n"] = rel(now)
        if total >= base + args.n and now - last_change >= args.quiet and "quiet" not in ms:
            ms["quiet"] = rel(last_change)
        if (leader_at is not None and total >= base + args.n
                and now - max(last_change, leader_at + 1) >= args.quiet and "sweep" not in ms):
            ms["sweep"] = rel(max(last_change, leader_at))
        audits = m.get('syncguard_audits_total{outcome="ok"}', 0) + m.get('syncguard_audits_total{outcome="error"}', 0)
        if now - last_series >= 1:
            last_series = now
            series.append([round(now - t0, 2), st.get("VmRSS", 0), int(total), int(m.get("syncguard_leader", 0)), int(audits)])
        if audits >= 1 and "audit" not in ms:
            ms["audit"] = rel(now)
            ms["audit_rss_kib"] = st.get("VmRSS", 0)
        if want <= set(ms):
            break
        if now > deadline:
            timed_out = True
            break
        time.sleep(args.interval)
    st = proc_status(args.pid) if args.pid else {}
    out = {
        "milestones": ms,
        "t0": t0,
        "abs": {k: t0 + v for k, v in ms.items() if not k.endswith("_kib")},
        "timed_out": timed_out,
        "wanted": sorted(want),
        "base": base,
        "reconciles": last_total,
        "reconciles_at_leader": total_at_leader,
        "reconcile_errors": m.get('syncguard_application_reconciles_total{outcome="error"}', 0),
        "audit_ok": m.get('syncguard_audits_total{outcome="ok"}', 0),
        "audit_error": m.get('syncguard_audits_total{outcome="error"}', 0),
        "audit_seconds_sum": m.get("syncguard_audit_duration_seconds_sum", 0),
        "audit_seconds_count": m.get("syncguard_audit_duration_seconds_count", 0),
        "reconcile_seconds_sum": m.get("syncguard_application_reconcile_duration_seconds_sum", 0),
        "reconcile_seconds_count": m.get("syncguard_application_reconcile_duration_seconds_count", 0),
        "events": {k.split('"')[1]: v for k, v in m.items() if k.startswith("syncguard_events_total{")},
        "report_writes": {k.split('"')[1]: v for k, v in m.items() if k.startswith("syncguard_policyreport_writes_total{")},
        "open_findings": {k.split('"')[1]: v for k, v in m.items() if k.startswith("syncguard_open_live_findings{")},
        "results_dropped": m.get("syncguard_policyreport_results_dropped", 0),
        "leader": m.get("syncguard_leader", 0),
        "rss_kib": st.get("VmRSS", 0),
        "hwm_kib": st.get("VmHWM", peak.get("VmHWM", 0)),
        "threads": st.get("Threads", 0),
        "samples": samples,
        "cpu_seconds": proc_cpu(args.pid) if args.pid else None,
        "peak_at": max(series, key=lambda x: x[1])[0] if series else None,
        "series": series,
    }
    write_json(args.out, out)
    pretty = ", ".join(f"{k} {v:.1f} s" for k, v in ms.items() if not k.endswith("_kib"))
    log(f"follow {os.path.basename(args.out)}: {pretty or 'no milestone'}; reconciles {last_total:.0f} (base {base:.0f}), "
        f"VmHWM {out['hwm_kib'] / 1024:.0f} MiB{' — TIMED OUT' if timed_out else ''}")
    if timed_out and not args.allow_timeout:
        raise SystemExit(f"follow: timed out after {args.timeout} s waiting for {sorted(want - set(ms))}")


# --- sync loops --------------------------------------------------------------------------------


def cmd_flip(args):
    """`--rounds` rounds of OutOfSync then Synced for every flip app. Synced comes with a new
    finished operation of the same revision (auto-sync re-syncing), OutOfSync marks the first
    Deployment OutOfSync (what SG502 inspects). After each wave it waits until the reconciler's
    reconciles_total grew by the number of apps flipped (kube-runtime coalesces changes of an
    object that is still queued, so a faster flip would never be seen)."""
    plan = load_plan(args.plan)
    kube = kube_from(args)
    apps = [a for a in plan["apps"] if a["kind"] == "flip"]
    u = urllib.parse.urlsplit(args.metrics)
    mconn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    waves = []
    t_start = time.time()
    for rnd in range(args.rounds):
        for status in ("OutOfSync", "Synced"):
            before = reconciles(scrape(mconn))
            now = datetime.now(timezone.utc)
            jobs = []
            for a in apps:
                revision = rev(a["name"], 9)
                ops = [
                    {"op": "replace", "path": "/status/sync/status", "value": status},
                    {"op": "replace", "path": f"/status/resources/{FIRST_DEPLOYMENT}/status", "value": status},
                    {"op": "replace", "path": "/status/reconciledAt", "value": iso(now)},
                ]
                if status == "Synced":
                    res = resources(a, plan["resources"])
                    op = succeeded_op(a, res[FIRST_DEPLOYMENT:FIRST_DEPLOYMENT + 1], revision, now - timedelta(seconds=4), now)
                    ops.append({"op": "replace", "path": "/status/operationState", "value": op})
                jobs.append(("PATCH", f"/apis/argoproj.io/v1alpha1/namespaces/{a['namespace']}/applications/{a['name']}",
                             ops, "application/json-patch+json"))
            t0 = time.time()
            secs, n, _, errors = parallel(kube, args.threads, jobs, f"flip {status}")
            if errors:
                raise SystemExit("flip failed: " + "; ".join(errors[:3]))
            target = before + len(apps)
            deadline = time.time() + args.wave_timeout
            seen = before
            while time.time() < deadline:
                seen = reconciles(scrape(mconn))
                if seen >= target:
                    break
                time.sleep(0.2)
            waves.append({"round": rnd, "status": status, "patch_seconds": secs,
                          "reconciled_seconds": time.time() - t0, "reconciled": seen - before, "expected": len(apps)})
            log(f"flip round {rnd + 1}/{args.rounds} {status}: {n} patches in {secs:.2f} s, "
                f"{seen - before:.0f}/{len(apps)} reconciles after {time.time() - t0:.1f} s")
    out = {"apps": len(apps), "rounds": args.rounds, "waves": waves, "start": t_start, "end": time.time(),
           "max_wave_seconds": max((w["reconciled_seconds"] for w in waves), default=0),
           "incomplete_waves": sum(w["reconciled"] < w["expected"] for w in waves)}
    write_json(args.out, out)


# --- the webhook -------------------------------------------------------------------------------


def cmd_wait_log(args):
    deadline = time.time() + args.timeout
    pat = args.pattern
    pos = 0
    while time.time() < deadline:
        try:
            with open(args.file, "rb") as f:
                f.seek(pos)
                chunk = f.read()
        except OSError:
            chunk = b""
        if chunk:
            text = chunk.decode(errors="replace")
            for line in text.splitlines():
                if pat in line:
                    t = time.time() - args.t0
                    print(f"{t:.3f}")
                    if args.line_out:
                        with open(args.line_out, "w") as o:
                            o.write(line + "\n")
                    return
            # keep the last partial line
            cut = chunk.rfind(b"\n")
            pos += cut + 1 if cut >= 0 else 0
        time.sleep(0.05)
    raise SystemExit(f"wait-log: {pat!r} not in {args.file} after {args.timeout} s")


def review_body(app, uid: str):
    a, ns, inst = app["name"], app["dest"], instance(app)
    name = f"{a}-db-migrate"
    job = {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": ns,
                     "annotations": {HOOK: "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation",
                                     TRACKING: f"{inst}:batch/Job:{ns}/{name}"},
                     "labels": {"app.kubernetes.io/instance": inst}},
        "spec": {"backoffLimit": 2, "activeDeadlineSeconds": 900, "template": {"spec": {
            "restartPolicy": "Never", "serviceAccountName": a,
            "containers": [{"name": "migrate", "image": f"registry.example.com/{ns}/{a}-migrate:1.2.0",
                            "args": ["migrate", "up"], "envFrom": [{"secretRef": {"name": f"{a}-db-credentials"}}]}]}}},
    }
    gvk = {"group": "batch", "version": "v1", "kind": "Job"}
    gvr = {"group": "batch", "version": "v1", "resource": "jobs"}
    return {"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1", "request": {
        "uid": uid, "kind": gvk, "resource": gvr, "requestKind": gvk, "requestResource": gvr,
        "name": name, "namespace": ns, "operation": "CREATE",
        "userInfo": {"username": "system:serviceaccount:argocd:argocd-application-controller",
                     "groups": ["system:serviceaccounts", "system:serviceaccounts:argocd", "system:authenticated"]},
        "object": job, "oldObject": None, "dryRun": False,
        "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions", "fieldManager": "argocd-controller"}}}


def pct(values, q):
    if not values:
        return None
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))
    return s[k]


def cmd_review(args):
    plan = load_plan(args.plan)
    cands = [a for a in plan["apps"] if a["kind"] == "normal" and a["namespace"] == "argocd"] or plan["apps"]
    app = cands[len(cands) // 2]
    u = urllib.parse.urlsplit(args.url)
    ctx = ssl.create_default_context(cafile=args.cacert)
    conn = http.client.HTTPSConnection(u.hostname, u.port, context=ctx, timeout=30)
    prefix = f"scale-{uuid.uuid4().hex[:8]}"

    def send(uid):
        body = json.dumps(review_body(app, uid), separators=(",", ":")).encode()
        t = time.perf_counter()
        conn.request("POST", u.path, body=body, headers={"Content-Type": "application/json", "User-Agent": UA})
        r = conn.getresponse()
        payload = r.read()
        dt = time.perf_counter() - t
        if r.status != 200:
            raise SystemExit(f"review: HTTP {r.status}: {payload[:300]!r}")
        resp = json.loads(payload)["response"]
        return dt, resp

    def cpu():
        return proc_cpu(args.pid) if args.pid else 0

    def histogram():
        """syncguard_evaluation_duration_seconds{endpoint="validate"}: buckets, sum, count."""
        conn.request("GET", "/metrics", headers={"User-Agent": UA})
        r = conn.getresponse()
        text = r.read().decode()
        h = {}
        for line in text.splitlines():
            if line.startswith("syncguard_evaluation_duration_seconds") and 'endpoint="validate"' in line:
                m = METRIC_LINE.match(line)
                if m:
                    h[m.group(1)] = float(m.group(2))
        return h

    cold_s, cold = send(f"{prefix}-cold")
    for i in range(args.warmup):
        send(f"{prefix}-warm-{i}")
    lat = []
    h0 = histogram()
    c0 = cpu()
    t0 = time.perf_counter()
    last = None
    for i in range(args.count):
        dt, last = send(f"{prefix}-m-{i:06d}")
        lat.append(dt * 1e6)
    wall = time.perf_counter() - t0
    cpu_s = cpu() - c0
    h1 = histogram()
    dh = {k: h1.get(k, 0) - h0.get(k, 0) for k in h1}
    hcount = next((v for k, v in dh.items() if "_count" in k), 0)
    hsum = next((v for k, v in dh.items() if "_sum" in k), 0)
    le1 = next((v for k, v in dh.items() if 'le="0.001"' in k), None)
    msg = ((last or {}).get("status") or {}).get("message", "")
    out = {"app": f"{app['namespace']}/{app['name']}", "resources": plan["resources"], "uid_prefix": prefix,
           "count": args.count, "warmup": args.warmup, "wall_seconds": wall, "rps": args.count / wall,
           "client_p50_us": pct(lat, 0.5), "client_p99_us": pct(lat, 0.99), "client_max_us": max(lat),
           "client_cold_us": cold_s * 1e6, "server_cpu_us_per_review": cpu_s * 1e6 / args.count if args.pid else None, "allowed": (last or {}).get("allowed"),
           "cold_allowed": cold.get("allowed"),
           "histogram_count": hcount, "histogram_mean_us": hsum * 1e6 / hcount if hcount else None,
           "histogram_le_1ms": le1 / hcount if hcount and le1 is not None else None, "message": msg[:300],
           "rules": sorted(set(re.findall(r"SG\d{3}", msg)))}
    write_json(args.out, out)
    log(f"review: {args.count} reviews of Job {app['dest']}/{app['name']}-db-migrate in {wall:.1f} s, client p50 "
        f"{out['client_p50_us']:.0f} µs p99 {out['client_p99_us']:.0f} µs, first (cold) {out['client_cold_us']:.0f} µs, "
        f"allowed={out['allowed']} {out['rules']}, server CPU {out['server_cpu_us_per_review'] or 0:.0f} µs/review")


def find_key(obj, key):
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            r = find_key(v, key)
            if r is not None:
                return r
    return None


def cmd_elapsed(args):
    measured, cold, warm = [], None, []
    with open(args.log, errors="replace") as f:
        for line in f:
            if args.uid_prefix not in line or "elapsed_us" not in line:
                continue
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            uid = str(find_key(rec, "uid") or "")
            us = find_key(rec, "elapsed_us")
            if us is None:
                continue
            us = float(us)
            if uid.endswith("-cold"):
                cold = us
            elif "-warm-" in uid:
                warm.append(us)
            elif "-m-" in uid:
                measured.append(us)
    out = {"count": len(measured), "p50_us": pct(measured, 0.5), "p90_us": pct(measured, 0.9),
           "p99_us": pct(measured, 0.99), "max_us": max(measured) if measured else None,
           "mean_us": sum(measured) / len(measured) if measured else None, "cold_us": cold,
           "le_1ms": sum(v <= 1000 for v in measured) / len(measured) if measured else None}
    write_json(args.out, out)
    if measured:
        log(f"server-side: {len(measured)} reviews, p50 {out['p50_us']:.0f} µs, p99 {out['p99_us']:.0f} µs, "
            f"max {out['max_us']:.0f} µs, first (cold) {cold} µs")
    else:
        log("server-side: no elapsed_us lines found (is syncguard::webhook::service at debug?)")


# --- what syncguard wrote ----------------------------------------------------------------------


def cmd_events(args):
    kube = kube_from(args)
    items = kube.list_all("/apis/events.k8s.io/v1/events")
    mine = [e for e in items if e.get("reportingController") == args.controller]
    by_reason = Counter(e.get("reason") for e in mine)
    by_instance = Counter(e.get("reportingInstance") for e in mine)
    times = defaultdict(list)
    for e in mine:
        t = e.get("eventTime") or (e.get("metadata") or {}).get("creationTimestamp")
        if t:
            times[e.get("reason")].append(parse_ts(t))
    out = {"total_events": len(items), "syncguard": len(mine), "by_reason": dict(by_reason),
           "first": {k: min(v) for k, v in times.items()}, "last": {k: max(v) for k, v in times.items()},
           "by_instance": dict(by_instance),
           "bytes": sum(len(json.dumps(e, separators=(",", ":"))) for e in mine)}
    write_json(args.out, out)
    log(f"events: {len(mine)} by {args.controller} {dict(by_reason)} {dict(by_instance)}")


def cmd_reports(args):
    kube = kube_from(args)
    items = kube.list_all("/apis/wgpolicyk8s.io/v1alpha2/policyreports")
    sizes = []
    for it in items:
        b = len(json.dumps(it, separators=(",", ":")))
        md = it.get("metadata", {})
        sizes.append({"namespace": md.get("namespace"), "name": md.get("name"), "bytes": b,
                      "results": len(it.get("results") or []),
                      "findings_total": (md.get("annotations") or {}).get("syncguard.dev/findings-total"),
                      "omitted": (md.get("annotations") or {}).get("syncguard.dev/results-omitted")})
    sizes.sort(key=lambda s: -s["bytes"])
    per_ns = defaultdict(int)
    for s in sizes:
        per_ns[s["namespace"]] += s["bytes"]
    rules = Counter(r.get("policy") for it in items for r in (it.get("results") or []))
    out = {"count": len(items), "total_bytes": sum(s["bytes"] for s in sizes),
           "largest": sizes[0] if sizes else None, "max_namespace_bytes": max(per_ns.values(), default=0),
           "reports": sizes, "rules": dict(rules)}
    write_json(args.out, out)
    lg = sizes[0] if sizes else {}
    log(f"policyreports: {len(items)}, {out['total_bytes'] / 1024:.1f} KiB in all, largest "
        f"{lg.get('namespace')}/{lg.get('name')} {lg.get('bytes', 0) / 1024:.1f} KiB ({lg.get('results')} results, "
        f"{lg.get('findings_total')} findings); rules {dict(rules)}")


# --- the audit log -----------------------------------------------------------------------------


def parse_ts(s: str) -> float:
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def describe(ev):
    ref = ev.get("objectRef") or {}
    res = ref.get("resource", "?")
    if ref.get("subresource"):
        res += "/" + ref["subresource"]
    grp = ref.get("apiGroup") or "core"
    scope = []
    if ref.get("namespace"):
        scope.append("ns")
    if ref.get("name"):
        scope.append("name")
    if not ref and ev.get("requestURI"):
        return f"{ev.get('verb')} {ev['requestURI'].split('?')[0]}"
    return f"{ev.get('verb')} {grp}/{res}" + (f" [{','.join(scope)}]" if scope else "")


def cmd_audit(args):
    phases = []
    for p in args.phase or []:
        name, start, end = p.split(":")
        phases.append((name, float(start), float(end)))
    users = set(args.users.split(","))
    seen = set()
    per = defaultdict(Counter)  # (user, phase) -> description -> count
    agents = defaultdict(Counter)
    per_second = defaultdict(Counter)
    codes = defaultdict(Counter)
    total = Counter()
    try:
        f = open(args.log, errors="replace")
    except OSError:
        raise SystemExit(f"audit: no audit log at {args.log}")
    with f:
        for line in f:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            user = (ev.get("user") or {}).get("username", "")
            if user not in users:
                continue
            aid = ev.get("auditID")
            if aid in seen:
                continue
            seen.add(aid)
            t = parse_ts(ev.get("requestReceivedTimestamp") or ev.get("stageTimestamp"))
            desc = describe(ev)
            total[user] += 1
            agents[user][ev.get("userAgent", "")] += 1
            per_second[user][int(t)] += 1
            code = (ev.get("responseStatus") or {}).get("code")
            codes[user][str(code)] += 1
            per[(user, "all")][desc] += 1
            for name, start, end in phases:
                if start <= t < end:
                    per[(user, name)][desc] += 1
    out = {"users": {}}
    for user in sorted(users):
        u = {"total": total[user], "user_agents": dict(agents[user]), "codes": dict(codes[user]),
             "max_per_second": max(per_second[user].values(), default=0), "phases": {}}
        for name in ["all"] + [p[0] for p in phases]:
            c = per.get((user, name), Counter())
            u["phases"][name] = {"total": sum(c.values()), "by_request": dict(c.most_common())}
        out["users"][user] = u
    write_json(args.out, out)
    for user in sorted(users):
        u = out["users"][user]
        log(f"audit log {user}: {u['total']} requests, max {u['max_per_second']}/s, agents {u['user_agents']}")
        for name, ph in u["phases"].items():
            if name == "all" or not ph["total"]:
                continue
            top = ", ".join(f"{k} ×{v}" for k, v in list(ph["by_request"].items())[:6])
            log(f"  {name}: {ph['total']}: {top}")


def cmd_rss(args):
    st = proc_status(args.pid)
    print(f"{st.get('VmHWM', 0)} {st.get('VmRSS', 0)}")


# --- the tables --------------------------------------------------------------------------------


def readj(d, name, default=None):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return default if default is not None else {}


def read_env(d):
    out = {}
    try:
        with open(os.path.join(d, "meta.env")) as f:
            for line in f:
                k, _, v = line.strip().partition("=")
                if k:
                    out[k] = v
    except OSError:
        pass
    return out


def fs(v, unit=" s", nd=1):
    if v is None or v == "":
        return "–"
    return f"{float(v):.{nd}f}{unit}"


def mib(kib):
    if not kib:
        return "–"
    return f"{float(kib) / 1024:.0f} MiB"


def cmd_table(args):
    rec_rows, api_rows, wh_rows, notes = [], [], [], []
    for d in args.dirs:
        env = read_env(d)
        n = int(env.get("N", "0"))
        summ = readj(d, "plan-summary.json")
        create = readj(d, "create.json")
        live = readj(d, "live.json")
        a = readj(d, "rec-a.json")
        b = readj(d, "rec-b.json")
        flip = readj(d, "flip.json")
        ev = readj(d, "events.json")
        rep = readj(d, "reports.json")
        aud = readj(d, "audit.json")
        rv = readj(d, "review.json")
        el = readj(d, "elapsed.json")
        ma, mb = a.get("milestones", {}), b.get("milestones", {})
        audit_s = (a.get("audit_seconds_sum", 0) / a["audit_seconds_count"]) if a.get("audit_seconds_count") else None
        steady = env.get("A_RSS_STEADY") or a.get("rss_kib")
        per_app = (f"{float(steady) / n:.0f} KiB" if steady and n else "–")
        sweep_a = ma.get("sweep")
        audit_b = (b.get("audit_seconds_sum", 0) / b["audit_seconds_count"]) if b.get("audit_seconds_count") else None
        stuck_last = "–"
        if env.get("T_A") and (ev.get("last") or {}).get("StuckSync"):
            t_a = float(env["T_A"])
            stuck_last = f"{ev['first']['StuckSync'] - t_a:.1f} s / {ev['last']['StuckSync'] - t_a:.1f} s"
        lead_a = ma.get("leader")
        rec_rows.append(
            f"| {n} × {env.get('R')} | {fs(create.get('seconds'))} ({create.get('rate', 0):.0f}/s, {create.get('avg_bytes', 0) / 1024:.1f} KiB/app) "
            f"| {live.get('apps', 0)} apps ({100 * live.get('share', 0):.1f} %), {live.get('objects', 0)} objects "
            f"| {fs(ma.get('ready'))} | {fs(lead_a)} | {fs(ma.get('reach'))} | {fs(sweep_a)}"
            f"{' (' + format((sweep_a - lead_a) * 1000 / n, '.1f') + ' ms/app)' if sweep_a and lead_a is not None and n else ''} "
            f"| {fs(audit_s, ' s', 2)} (done at {fs(ma.get('audit'))}) "
            f"| {mib(env.get('A_HWM_STEADY') or a.get('hwm_kib'))} (at {fs(a.get('peak_at'))}) / {mib(steady)} ({per_app}) "
            f"| {fs(a.get('cpu_seconds'))} "
            f"| {stuck_last} "
            f"| {fs(env.get('A_STOP_S'), ' s', 2)} → lease {fs(mb.get('leader'))}, sweep done {fs(mb.get('sweep'))}, audit {fs(audit_b, ' s', 2)} "
            f"| {mib(b.get('hwm_kib'))} |")
        ua = aud.get("users", {})
        ra = ua.get("syncguard-rec-a", {})
        rb = ua.get("syncguard-rec-b", {})
        wh = ua.get("syncguard-webhook", {})

        def phase(u, name):
            return (u.get("phases", {}).get(name) or {})

        def kinds(u, name):
            by = phase(u, name).get("by_request", {})
            c = Counter()
            for k, v in by.items():
                verb = k.split()[0]
                per_obj = "[ns,name]" in k or k.endswith("[name]")
                c["per-object " + verb if per_obj else verb] += v
            return ", ".join(f"{k} {v}" for k, v in c.most_common())

        start_total = phase(ra, "start").get("total", 0)
        api_rows.append(
            f"| {n} | {start_total} ({start_total / n:.2f}/app): {kinds(ra, 'start')} "
            f"| {phase(ra, 'flip').get('total', 0)} ({flip.get('apps', 0)} apps × {flip.get('rounds', 0)} rounds; slowest wave {fs(flip.get('max_wave_seconds'))}) "
            f"| {phase(rb, 'handover').get('total', 0)}: {kinds(rb, 'handover')} "
            f"| {max(ra.get('max_per_second', 0), rb.get('max_per_second', 0))}/s "
            f"| {phase(wh, 'webhook').get('total', 0)}: {kinds(wh, 'webhook')} "
            f"| {ev.get('syncguard', 0)} ({', '.join(f'{k} {v}' for k, v in sorted(ev.get('by_reason', {}).items()))}; stuck apps {summ.get('stuck')}, flip apps {summ.get('flip')}) "
            f"| {rep.get('count', 0)}, {rep.get('total_bytes', 0) / 1024:.1f} KiB; largest {((rep.get('largest') or {}).get('bytes', 0)) / 1024:.1f} KiB "
            f"({(rep.get('largest') or {}).get('namespace')}, {(rep.get('largest') or {}).get('results')} results) |")
        wh_rows.append(
            f"| {n} | {fs(env.get('W_SYNC_S'), ' s', 2)} | {mib(env.get('W_HWM_SYNC'))} / {mib(env.get('W_RSS_SYNC'))} "
            f"| {mib(env.get('W_HWM_END'))} / {mib(env.get('W_RSS_END'))} "
            f"| {rv.get('count', 0)} ({rv.get('app', '?')}, {rv.get('resources', '?')} res; allowed={rv.get('allowed')} {','.join(rv.get('rules', []))}) "
            f"| {fs(el.get('p50_us'), ' µs', 0)} / {fs(el.get('p99_us'), ' µs', 0)} / {fs(el.get('max_us'), ' µs', 0)} "
            f"| {fs(el.get('cold_us'), ' µs', 0)} | {fs(rv.get('client_p50_us'), ' µs', 0)} / {fs(rv.get('client_p99_us'), ' µs', 0)} "
            f"| {fs(rv.get('server_cpu_us_per_review'), ' µs', 0)} "
            f"| {fs(rv.get('histogram_mean_us'), ' µs', 0)}, {100 * (rv.get('histogram_le_1ms') or 0):.1f} % ≤ 1 ms |")
        for who, f in (("rec-a", a), ("rec-b", b)):
            if f.get("timed_out"):
                notes.append(f"N={n}: {who} timed out waiting for {sorted(set(f.get('wanted', [])) - set(f.get('milestones', {})))}")
            if f.get("reconcile_errors"):
                notes.append(f"N={n}: {who} counted {f['reconcile_errors']:.0f} failed reconciles")
        if flip.get("incomplete_waves"):
            notes.append(f"N={n}: {flip['incomplete_waves']} flip waves were not fully reconciled within the wave timeout")
    lines = [
        "#### Reconciler (`syncguard reconcile`, leader election on, audit on)",
        "",
        "| apps × resources | create (rate, size) | live objects | ready | leader | reconciles ≥ N | leader sweep done | audit pass | RSS peak (when) / steady (per app) | CPU time until then | first / last StuckSync Event | hand-over (replica b, from SIGTERM to a): a exits, b leads, b's sweep done, b's audit pass | b peak RSS |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|",
        *rec_rows,
        "",
        "#### API requests (audit log, by client identity) and what syncguard wrote",
        "",
        "| N | start: rec-a from spawn to sweep + audit done | flip phase (rec-a) | hand-over: rec-b from SIGTERM to sweep done | busiest second | webhook (serve --cluster) | Events by syncguard | PolicyReports |",
        "|---|---|---|---|---:|---|---|---|",
        *api_rows,
        "",
        "#### Webhook (`syncguard serve --cluster`)",
        "",
        "| N | spawn → \"application cache synced\" | RSS peak / now at sync | RSS peak / now after reviews | reviews (app) | server p50 / p99 / max (elapsed_us) | first review (cold) | client p50 / p99 | server CPU per review | evaluation_seconds mean, ≤ 1 ms |",
        "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|",
        *wh_rows,
    ]
    if notes:
        lines += ["", "Notes:", *[f"- {x}" for x in notes]]
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)

    p = sub.add_parser("plan")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--resources", type=int, default=50)
    p.add_argument("--namespaces", type=int, default=5)
    p.add_argument("--dest-namespaces", type=int, default=20)
    p.add_argument("--stuck-share", type=float, default=0.03)
    p.add_argument("--flip-share", type=float, default=0.03)
    p.add_argument("--live-share", type=float, default=0.02)
    p.add_argument("--out", required=True)
    p.add_argument("--summary", required=True)
    p.set_defaults(fn=cmd_plan)

    for name, fn in (("create", cmd_create), ("live", cmd_live)):
        p = sub.add_parser(name)
        add_kube_args(p)
        p.add_argument("--plan", required=True)
        p.add_argument("--out", required=True)
        p.set_defaults(fn=fn)

    p = sub.add_parser("follow")
    p.add_argument("--metrics", required=True)
    p.add_argument("--pid", type=int, default=0)
    p.add_argument("--t0", type=float, required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--base-now", action="store_true", help="count reconciles from the first sample")
    p.add_argument("--want", default="ready,leader,reach,sweep,audit")
    p.add_argument("--quiet", type=float, default=4.0)
    p.add_argument("--interval", type=float, default=0.25)
    p.add_argument("--timeout", type=float, default=1800)
    p.add_argument("--allow-timeout", action="store_true")
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_follow)

    p = sub.add_parser("flip")
    add_kube_args(p)
    p.add_argument("--plan", required=True)
    p.add_argument("--metrics", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--wave-timeout", type=float, default=300)
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_flip)

    p = sub.add_parser("wait-log")
    p.add_argument("--file", required=True)
    p.add_argument("--pattern", required=True)
    p.add_argument("--t0", type=float, required=True)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--line-out")
    p.set_defaults(fn=cmd_wait_log)

    p = sub.add_parser("review")
    p.add_argument("--url", required=True)
    p.add_argument("--cacert", required=True)
    p.add_argument("--plan", required=True)
    p.add_argument("--count", type=int, default=2000)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--pid", type=int, default=0, help="the server, for its CPU time per review")
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_review)

    p = sub.add_parser("elapsed")
    p.add_argument("--log", required=True)
    p.add_argument("--uid-prefix", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_elapsed)

    p = sub.add_parser("events")
    add_kube_args(p)
    p.add_argument("--controller", default="syncguard")
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_events)

    p = sub.add_parser("reports")
    add_kube_args(p)
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_reports)

    p = sub.add_parser("audit")
    p.add_argument("--log", required=True)
    p.add_argument("--users", required=True)
    p.add_argument("--phase", action="append", help="NAME:START_EPOCH:END_EPOCH")
    p.add_argument("--out", required=True)
    p.set_defaults(fn=cmd_audit)

    p = sub.add_parser("rss")
    p.add_argument("--pid", type=int, required=True)
    p.set_defaults(fn=cmd_rss)

    p = sub.add_parser("table")
    p.add_argument("dirs", nargs="+")
    p.set_defaults(fn=cmd_table)

    args = ap.parse_args()
    args.fn(args)


if __name__ == "__main__":
    main()
