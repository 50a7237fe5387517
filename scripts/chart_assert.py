#!/usr/bin/env python3
"""Assertions over charts/syncguard for scripts/check-chart.sh (runs in .tools/chart-venv).

  chart_assert.py templates DIR
      Fails if a template action ({{ ... }}, comments excluded) calls a function whose result
      differs between renders or depends on the live cluster. (Hook annotations are checked on
      the rendered objects.)

  chart_assert.py render FILE --variant default|all-on|existing-secret --namespace NS
                  --chart DIR --kube-version X.Y.Z [--ca ca.crt]
      Validates every object against the Kubernetes schemas (kubernetes-validate, strict) and
      checks what the chart promises (docs/rbac.md, charts/syncguard/README.md).

Each failure is printed as one line; exit 1 if there is any.
"""

import argparse
import base64
import json
import os
import re
import sys

import yaml

# Functions that make two renders of the same values differ, or make the render depend on the
# cluster Argo CD's repo-server cannot see (lookup renders empty there).
FORBIDDEN_FUNCS = [
    "now", "date", "dateInZone", "htmlDate", "htmlDateInZone", "unixEpoch", "ago", "dateModify",
    "randAlphaNum", "randAlpha", "randNumeric", "randAscii", "randBytes", "randInt", "shuffle",
    "uuidv4", "genCA", "genCAWithKey", "genPrivateKey", "genSelfSignedCert",
    "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey", "derivePassword",
    "htpasswd", "bcrypt", "lookup",
]
HOOK_ANNOTATIONS = ("helm.sh/hook", "argocd.argoproj.io/hook")
# Kinds kubernetes-validate has no schema for, and why skipping them is acceptable.
SKIP_SCHEMA = {
    ("cert-manager.io/v1", "Issuer"): "cert-manager CRD, not part of the Kubernetes schemas",
    ("cert-manager.io/v1", "Certificate"): "cert-manager CRD, not part of the Kubernetes schemas",
    ("monitoring.coreos.com/v1", "PrometheusRule"): "Prometheus Operator CRD (monitoring.prometheusRule.enabled); its rules are checked by scripts/check-alerts.sh",
}
CLUSTER_SCOPED = {
    "ClusterRole", "ClusterRoleBinding", "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration", "Namespace", "CustomResourceDefinition",
}
# kubectl's last-applied-configuration annotation (Argo CD's default client-side apply) is
# limited to 256 KiB; keep a margin for the rest of the object.
LAST_APPLIED_BUDGET = 200 * 1024

problems = []


def problem(msg):
    problems.append(msg)
    print(f"  FAIL {msg}", file=sys.stderr)


def check_templates(directory):
    func_re = re.compile(r"(?<![\w.$])(" + "|".join(map(re.escape, FORBIDDEN_FUNCS)) + r")(?![\w-])")
    action_re = re.compile(r"\{\{-?(.*?)-?\}\}", re.S)
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        text = open(path, encoding="utf-8").read()
        for m in action_re.finditer(text):
            body = m.group(1).strip()
            if body.startswith("/*"):
                continue
            body = re.sub(r'"(\\.|[^"\\])*"', '""', body)  # not inside string literals
            for f in func_re.findall(body):
                line = text.count("\n", 0, m.start()) + 1
                problem(f"templates/{name}:{line}: uses `{f}`: renders differ or depend on the cluster")


def kn(o):
    md = o.get("metadata") or {}
    ns = md.get("namespace")
    return f"{o.get('kind')} {ns + '/' if ns else ''}{md.get('name')}"


def validate_schemas(objs, kube_version):
    import kubernetes_validate

    for o in objs:
        key = (o.get("apiVersion"), o.get("kind"))
        if key in SKIP_SCHEMA:
            print(f"  skip schema: {kn(o)} ({SKIP_SCHEMA[key]})")
            continue
        try:
            kubernetes_validate.validate(o, kube_version, strict=True)
        except kubernetes_validate.ValidationError as e:
            where = "/".join(str(p) for p in e.path)
            problem(f"{kn(o)}: schema {kube_version}: {e.message} at /{where}")
        except kubernetes_validate.SchemaNotFoundError:
            problem(f"{kn(o)}: no Kubernetes {kube_version} schema for {key[0]} {key[1]}")


def by_kind(objs, kind):
    return [o for o in objs if o.get("kind") == kind]


def one(objs, kind, name_suffix=""):
    found = [o for o in by_kind(objs, kind) if o["metadata"]["name"].endswith(name_suffix)]
    if len(found) != 1:
        problem(f"expected one {kind} named *{name_suffix}, found {len(found)}")
        return None
    return found[0]


def check_render(args):
    docs = [d for d in yaml.safe_load_all(open(args.file, encoding="utf-8")) if d]
    print(f"  {len(docs)} objects")
    validate_schemas(docs, args.kube_version)
    chart = yaml.safe_load(open(os.path.join(args.chart, "Chart.yaml"), encoding="utf-8"))
    v = args.variant

    for o in docs:
        md = o.get("metadata") or {}
        ann = md.get("annotations") or {}
        for key in ann:
            if key.startswith(HOOK_ANNOTATIONS):
                problem(f"{kn(o)}: hook annotation {key}: the chart must install without hooks")
        if o["kind"] in CLUSTER_SCOPED:
            if "namespace" in md:
                problem(f"{kn(o)}: cluster-scoped object with a namespace")
        elif o["kind"] in ("Role", "RoleBinding") and md.get("name", "").endswith("-webhook-argocd"):
            # serve --cluster reads Argo CD's release and argocd-cm in Argo CD's namespace.
            if md.get("namespace") != "argocd":
                problem(f"{kn(o)}: must be in argocdNamespace (argocd)")
        elif md.get("namespace") != args.namespace:
            problem(f"{kn(o)}: namespace must be set to the release namespace {args.namespace}")

    # --- webhook configurations ---
    want_policy = "Fail" if v == "all-on" else "Ignore"
    excluded_ok = {"kube-system", args.namespace}
    for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        cfg = one(docs, kind)
        if not cfg:
            continue
        ann = cfg["metadata"].get("annotations") or {}
        for w in cfg["webhooks"]:
            name = f"{kind} {w['name']}"
            if w.get("failurePolicy") != want_policy:
                problem(f"{name}: failurePolicy {w.get('failurePolicy')}, want {want_policy} for {v}")
            if not 1 <= int(w.get("timeoutSeconds", 10)) <= 5:
                problem(f"{name}: timeoutSeconds {w.get('timeoutSeconds')} (must be set, 1-5)")
            if w.get("sideEffects") != "None":
                problem(f"{name}: sideEffects must be None")
            if w.get("admissionReviewVersions") != ["v1"]:
                problem(f"{name}: admissionReviewVersions must be [v1]")
            exprs = (w.get("namespaceSelector") or {}).get("matchExpressions") or []
            notin = {x for e in exprs if e.get("key") == "kubernetes.io/metadata.name"
                     and e.get("operator") == "NotIn" for x in e.get("values", [])}
            if not excluded_ok <= notin:
                problem(f"{name}: namespaceSelector must exclude {sorted(excluded_ok)}, excludes {sorted(notin)}")
            ops = {op for r in w["rules"] for op in r["operations"]}
            if ops != {"CREATE", "UPDATE"}:
                problem(f"{name}: operations {sorted(ops)}, want CREATE and UPDATE")
            cb = w["clientConfig"].get("caBundle")
            if v == "all-on":
                if cb is not None:
                    problem(f"{name}: caBundle rendered in cert-manager mode (the cainjector owns it)")
            elif v == "existing-secret":
                want = base64.b64encode(open(args.ca, "rb").read()).decode()
                if cb != want:
                    problem(f"{name}: caBundle is not base64 of {args.ca}")
            elif cb is not None:
                problem(f"{name}: caBundle rendered although certs.caCert is empty")
            svc = w["clientConfig"].get("service") or {}
            if svc.get("namespace") != args.namespace or svc.get("port") != 443:
                problem(f"{name}: clientConfig.service must be in {args.namespace} on port 443")
        if int(ann.get("argocd.argoproj.io/sync-wave", "0")) <= 0:
            problem(f"{kind}: must be in a sync wave after the webhook Deployment (wave 0), so Argo CD "
                    "registers it only once the webhook is Healthy")
        inject = ann.get("cert-manager.io/inject-ca-from")
        if (v == "all-on") != bool(inject):
            problem(f"{kind}: cert-manager.io/inject-ca-from is {inject!r} for {v}")
        if kind == "MutatingWebhookConfiguration":
            for w in cfg["webhooks"]:
                if w.get("reinvocationPolicy") != "IfNeeded":
                    problem(f"{kind} {w['name']}: reinvocationPolicy must be IfNeeded")
                res = {(g, r) for rule in w["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
                if res != {("batch", "jobs"), ("", "pods")}:
                    problem(f"{kind} {w['name']}: mutates {sorted(res)}; only hook Jobs and Pods have mutate rules")
    if v == "all-on":
        cert = [c for c in by_kind(docs, "Certificate") if c["metadata"]["name"] == inject.split("/")[-1]] if inject else []
        if len(cert) != 1:
            problem(f"inject-ca-from {inject!r} names no Certificate of the chart")

    # --- Deployments ---
    app_version = str(chart["appVersion"])
    for d in by_kind(docs, "Deployment"):
        comp = d["metadata"]["labels"].get("app.kubernetes.io/component")
        pod = d["spec"]["template"]["spec"]
        psc = pod.get("securityContext") or {}
        if not psc.get("runAsNonRoot") or (psc.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            problem(f"{kn(d)}: pod securityContext needs runAsNonRoot and seccomp RuntimeDefault")
        for c in pod["containers"]:
            sc = c.get("securityContext") or {}
            for m in c.get("volumeMounts", []):
                if not m.get("readOnly"):
                    problem(f"{kn(d)} {c['name']}: volume {m['name']} is mounted writable; syncguard writes nothing")
            if not sc.get("readOnlyRootFilesystem") or sc.get("allowPrivilegeEscalation") is not False \
                    or (sc.get("capabilities") or {}).get("drop") != ["ALL"]:
                problem(f"{kn(d)} {c['name']}: needs readOnlyRootFilesystem, no privilege escalation, drop ALL")
            image = c["image"]
            if image.endswith(":latest") or ("@" not in image and not image.endswith(":" + app_version)):
                problem(f"{kn(d)} {c['name']}: image {image} must be the appVersion {app_version} or a digest")
            for probe in ("readinessProbe", "livenessProbe"):
                port = ((c.get(probe) or {}).get("httpGet") or {}).get("port")
                if port != "probes":
                    problem(f"{kn(d)} {c['name']}: {probe} must be an HTTP GET on the plain-HTTP probe port")
            if "resources" not in c or "requests" not in c["resources"]:
                problem(f"{kn(d)} {c['name']}: resources.requests missing")
            args_ = c.get("args") or []
            if comp == "webhook":
                if args_[:1] != ["serve"]:
                    problem(f"{kn(d)}: webhook must run `serve`")
                cluster = "--cluster" in args_
                if cluster != (v == "all-on") or bool(pod.get("automountServiceAccountToken")) != cluster:
                    problem(f"{kn(d)}: --cluster {cluster} and automountServiceAccountToken "
                            f"{pod.get('automountServiceAccountToken')} must both follow webhook.cluster.enabled")
            elif comp == "reconciler":
                if args_[:1] != ["reconcile"]:
                    problem(f"{kn(d)}: reconciler must run `reconcile`")
                for flag in ("--lease-name=", "--lease-namespace=$(POD_NAMESPACE)", "--identity=$(POD_NAME)"):
                    if not any(a.startswith(flag) for a in args_):
                        problem(f"{kn(d)}: leader election flag {flag}... missing")
                if not 1 <= d["spec"]["replicas"] <= 2:
                    problem(f"{kn(d)}: 1 or 2 replicas")
                # Ending stuck operations is opt-in (all-on: on, 45m); off adds no flag.
                term = [a for a in args_ if a.startswith("--terminate")]
                want_term = ["--terminate=on", "--terminate-after=45m"] if v == "all-on" else []
                if term != want_term:
                    problem(f"{kn(d)}: termination flags {term}, want {want_term}")
        if comp == "webhook":
            if d["spec"]["replicas"] < 2:
                problem(f"{kn(d)}: the webhook runs at least 2 replicas by default")
            aff = ((pod.get("affinity") or {}).get("podAntiAffinity") or {}).get(
                "preferredDuringSchedulingIgnoredDuringExecution") or []
            if not any(t["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname" for t in aff):
                problem(f"{kn(d)}: preferred pod anti-affinity by hostname missing")
    if not any(p["metadata"]["name"].endswith("-webhook") for p in by_kind(docs, "PodDisruptionBudget")):
        problem("no PodDisruptionBudget for the webhook")
    svc = one(docs, "Service")
    if svc and [(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] != [(443, "https")]:
        problem(f"{kn(svc)}: must expose 443 -> the https container port")

    # --- RBAC ---
    def rules_of(kind, suffix):
        r = one(docs, kind, suffix)
        return {(g, res, verb) for rule in (r or {}).get("rules", []) for g in rule["apiGroups"]
                for res in rule["resources"] for verb in rule["verbs"]}

    webhook_roles = [r for r in by_kind(docs, "ClusterRole") if r["metadata"]["name"].endswith("-webhook")]
    if v == "all-on":
        got = rules_of("ClusterRole", "-webhook")
        want = {("argoproj.io", "applications", x) for x in ("get", "list", "watch")}
        want |= {("argoproj.io", "appprojects", x) for x in ("get", "list")}
        if got != want:
            problem(f"webhook ClusterRole grants {sorted(got ^ want)}: want applications get/list/watch "
                    "and appprojects get/list only")
        # In Argo CD's namespace: the controller workload and argocd-cm, by name, get only.
        argo = rules_of("Role", "-webhook-argocd")
        if {t[2] for t in argo} != {"get"}:
            problem(f"webhook Role in Argo CD's namespace grants {sorted(argo)}: get only")
        for r in by_kind(docs, "Role"):
            if r["metadata"]["name"].endswith("-webhook-argocd"):
                for rule in r.get("rules", []):
                    if not rule.get("resourceNames"):
                        problem(f"{kn(r)}: every rule must name its objects (resourceNames)")
    elif webhook_roles:
        problem("webhook ClusterRole rendered without webhook.cluster.enabled")
    rec = rules_of("ClusterRole", "-reconciler")
    writes = {t for t in rec if t[2] in ("create", "update", "patch", "delete", "deletecollection")}
    allowed_writes = {("", "events"), ("events.k8s.io", "events"),
                      ("wgpolicyk8s.io", "policyreports"), ("wgpolicyk8s.io", "clusterpolicyreports"),
                      ("openreports.io", "reports"), ("openreports.io", "clusterreports")}
    # Applications only with reconciler.terminate.mode=on (all-on), and only `update`.
    if v == "all-on":
        allowed_writes.add(("argoproj.io", "applications"))
        if ("argoproj.io", "applications", "update") not in writes:
            problem("reconciler ClusterRole: terminate.mode=on but no update on applications")
    for g, res, verb in sorted(writes):
        if (g, res) not in allowed_writes or (res == "applications" and verb != "update"):
            problem(f"reconciler ClusterRole may {verb} {g or 'core'}/{res}: only Events, reports "
                    "and (terminate.mode=on) update on applications")
    # Report APIs: exactly those reconciler.reportApi selects (all-on: both; else wgpolicyk8s).
    report_groups = {t[0] for t in rec if t[0] in ("wgpolicyk8s.io", "openreports.io")}
    want_groups = {"wgpolicyk8s.io", "openreports.io"} if v == "all-on" else {"wgpolicyk8s.io"}
    if rec and report_groups != want_groups:
        problem(f"reconciler ClusterRole covers report APIs {sorted(report_groups)}: want {sorted(want_groups)}")
    if any(t[1] == "*" or t[2] == "*" or t[0] == "*" for t in rec):
        problem("reconciler ClusterRole uses a wildcard")
    # In the release namespace: the Lease, and the loop state ConfigMap next to it (by name,
    # except create, which RBAC cannot limit to a name).
    own = rules_of("Role", "-reconciler")
    if {(t[0], t[1]) for t in own} != {("coordination.k8s.io", "leases"), ("", "configmaps")}:
        problem(f"reconciler Role covers {sorted({(t[0], t[1]) for t in own})}: only leases and the state ConfigMap")
    role = one(docs, "Role", "-reconciler") or {}
    for rule in role.get("rules", []):
        if rule["resources"] != ["configmaps"]:
            continue
        names = rule.get("resourceNames") or []
        if set(rule["verbs"]) - {"create"} and not (names and all(n.endswith("-state") for n in names)):
            problem(f"reconciler Role: {rule['verbs']} on configmaps must name the state ConfigMap (<lease>-state)")
        if "delete" in rule["verbs"] or "list" in rule["verbs"]:
            problem("reconciler Role: configmaps get/create/update/patch only")

    # --- monitoring: rendered only when enabled, and exactly the files CI tests ---
    rules = by_kind(docs, "PrometheusRule")
    dashboards = [o for o in by_kind(docs, "ConfigMap") if o["metadata"]["name"].endswith("-dashboard")]
    if v == "all-on":
        want = yaml.safe_load(open(os.path.join(args.chart, "files", "prometheus-rules.yaml")))["groups"]
        if len(rules) != 1 or rules[0]["spec"]["groups"] != want:
            problem("PrometheusRule: want one, with exactly the groups of files/prometheus-rules.yaml")
        elif rules[0]["metadata"]["labels"].get("release") != "kube-prometheus-stack":
            problem("PrometheusRule: monitoring.prometheusRule.labels not applied")
        dash = json.load(open(os.path.join(args.chart, "files", "grafana-dashboard.json")))
        if len(dashboards) != 1 or json.loads(dashboards[0]["data"]["syncguard.json"]) != dash:
            problem("dashboard ConfigMap: want one holding files/grafana-dashboard.json")
        elif dashboards[0]["metadata"]["labels"].get("grafana_dashboard") != "1":
            problem("dashboard ConfigMap: no grafana_dashboard label for the sidecar")
    elif rules or dashboards:
        problem("monitoring objects rendered although monitoring.* is off")

    # --- the policy ConfigMaps (parts of one directory, mounted through a projected volume) ---
    cms = [o for o in by_kind(docs, "ConfigMap") if "-policies-" in o["metadata"]["name"]]
    if cms:
        data = {}
        for cm in cms:
            for n, body in cm.get("data", {}).items():
                if n in data:
                    problem(f"{kn(cm)}: data[{n}] is in two policy ConfigMaps")
                data[n] = body
            size = len(json.dumps(cm, separators=(",", ":")))
            if size > LAST_APPLIED_BUDGET:
                problem(f"{kn(cm)}: {size} bytes as JSON; over {LAST_APPLIED_BUDGET} it no longer fits kubectl's "
                        "last-applied annotation (256 KiB) under Argo CD's client-side apply")
            else:
                print(f"  policy ConfigMap {cm['metadata']['name']}: {size} bytes as JSON (budget {LAST_APPLIED_BUDGET})")
        # The chart carries no copy of the built-in rules: only the overlay (policies.config as
        # config.yaml, policies.extraFiles), so it can never run rules that do not match the binary.
        builtin = set(os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "policies")))
        for n in data:
            if n != "config.yaml" and not n.endswith(".rego"):
                problem(f"policy ConfigMaps: data[{n}] is neither config.yaml nor a *.rego file")
            if n in builtin and v != "all-on":
                problem(f"policy ConfigMaps: data[{n}] is a copy of a built-in file; the binary carries the rules")
        if v == "default" and data:
            problem(f"policy ConfigMaps: the defaults should give an empty overlay, found {sorted(data)}")
        if v == "all-on" and ("config.yaml" not in data or "team_rule.rego" not in data):
            problem(f"policy ConfigMaps: policies.config and policies.extraFiles missing from {sorted(data)}")
        names = {cm["metadata"]["name"] for cm in cms}
        for d in by_kind(docs, "Deployment"):
            for vol in d["spec"]["template"]["spec"].get("volumes", []):
                if vol.get("name") == "policies":
                    mounted = {s["configMap"]["name"] for s in vol.get("projected", {}).get("sources", [])}
                    if mounted != names:
                        problem(f"{kn(d)}: the policies volume mounts {sorted(mounted)}, want {sorted(names)}")
        for d in by_kind(docs, "Deployment"):
            for vol in d["spec"]["template"]["spec"].get("volumes", []):
                if "emptyDir" in vol:
                    problem(f"{kn(d)}: emptyDir volume {vol['name']}; syncguard needs no writable volume")
        if args.extract_policies:
            os.makedirs(args.extract_policies, exist_ok=True)
            for n, body in data.items():
                with open(os.path.join(args.extract_policies, n), "w", encoding="utf-8") as f:
                    f.write(body)
    elif v != "no-policies":
        problem("expected the policy ConfigMaps (*-policies-N), found none")


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    t = sub.add_parser("templates")
    t.add_argument("dir")
    r = sub.add_parser("render")
    r.add_argument("file")
    r.add_argument("--variant", required=True, choices=["default", "all-on", "existing-secret"])
    r.add_argument("--namespace", required=True)
    r.add_argument("--chart", required=True)
    r.add_argument("--kube-version", required=True)
    r.add_argument("--ca")
    r.add_argument("--extract-policies", metavar="DIR", help="write the policy ConfigMap's files here")
    args = ap.parse_args()
    if args.cmd == "templates":
        check_templates(args.dir)
    else:
        check_render(args)
    if problems:
        print(f"  {len(problems)} problem(s)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
