//! `syncguard render` with the real helm and kustomize (the versions Argo CD 3.6 bundles) on the
//! GitOps fixture of `tests/fixtures/gitops/`: Helm, Kustomize, directory, multi-source `$values`,
//! app-of-apps, a broken chart and a remote repository, rendered from a real git checkout.
//!
//! Golden files: `tests/fixtures/golden/render-gitops.{yaml,stderr}`; after an intended change,
//! `UPDATE_GOLDEN=1 cargo test --test render_tools` and review the diff.

mod render_support;

use std::path::Path;

use render_support::{golden, jsonnet_tool, repository, repository_of, syncguard, tools};

fn render(dir: &Path, helm: &Path, kustomize: &Path, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec![
        "render".to_string(),
        "--helm".into(),
        helm.display().to_string(),
        "--kustomize".into(),
        kustomize.display().to_string(),
        "--kube-version".into(),
        "v1.34.1".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = syncguard(dir, &args);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_fixture_renders_every_application_and_says_what_it_could_not() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(false);
    let (code, stdout, stderr) = render(repo.path(), &helm, &kustomize, &["apps/root.yaml"]);
    // The broken chart is an error: exit 2, after everything else was rendered.
    assert_eq!(code, 2, "{stderr}");
    golden("render-gitops.yaml", &stdout);
    golden("render-gitops.stderr", &stderr);
}

#[test]
fn the_head_revision_renders_the_new_hook_and_check_denies_it() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(true);
    let (_, stdout, _) = render(repo.path(), &helm, &kustomize, &["apps/root.yaml"]);
    for expected in [
        "\"name\": \"storefront-seed\"",
        "\"--lock-timeout=60s\"",
        "\"argocd.argoproj.io/sync-wave\": \"-1\"",
        // kustomize's name reference follows the prefix onto the Deployment's envFrom.
        "\"name\": \"prod-api-settings\"",
        "\"argocd.argoproj.io/tracking-id\": \"config:apps/Deployment:shop/prod-api\"",
    ] {
        assert!(
            stdout.contains(expected),
            "{expected} missing from:\n{stdout}"
        );
    }
    let rendered = repo.path().join("rendered.yaml");
    std::fs::write(&rendered, &stdout).expect("write");
    let check = syncguard(
        repo.path(),
        &[
            "check",
            "--render",
            "never",
            "--format",
            "json",
            "rendered.yaml",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON report");
    let seed_sg201 = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["rule_id"] == "SG201" && f["resource"]["name"] == "storefront-seed");
    assert!(seed_sg201, "{report:#}");
    assert_eq!(check.status.code(), Some(1));
    // Without --render never, the Applications in the stream whose objects are there already
    // are not rendered again: the hook is found once, not twice.
    let check = syncguard(
        repo.path(),
        &[
            "check",
            "--format",
            "json",
            "--helm",
            helm.to_str().expect("utf-8 path"),
            "--kustomize",
            kustomize.to_str().expect("utf-8 path"),
            "rendered.yaml",
        ],
    );
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON report");
    let seeds = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["rule_id"] == "SG201")
        .count();
    assert_eq!(seeds, 1, "{report:#}");
}

#[test]
fn a_missing_tool_is_named_with_the_applications_that_need_it() {
    let Some((_, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(false);
    let (code, _, stderr) = render(
        repo.path(),
        Path::new("/nonexistent/helm"),
        &kustomize,
        &["apps/root.yaml"],
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("helm (/nonexistent/helm) was not found; the Applications that need it: broken, web, worker"),
        "{stderr}"
    );
    // Kustomize and directory sources are still rendered.
    assert!(
        stderr.contains(
            "Application config (apps/children/config.yaml:1, rendered by root): 2 object(s)"
        ),
        "{stderr}"
    );
}

#[test]
fn bad_sources_are_errors_of_their_application_only() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(false);
    let root = repo.path();
    let edit = |rel: &str, from: &str, to: &str| {
        let p = root.join(rel);
        let text = std::fs::read_to_string(&p).expect("read");
        assert!(text.contains(from), "{rel}: {from}");
        std::fs::write(&p, text.replace(from, to)).expect("write");
    };
    edit(
        "apps/children/web.yaml",
        "valueFiles: [values-prod.yaml]",
        "valueFiles: [values-missing.yaml]",
    );
    edit("apps/children/worker.yaml", "$values/env", "$other/env");
    std::fs::write(
        root.join("kustomize/overlays/prod/kustomization.yaml"),
        "resources:\n- ../../base\n- https://github.com/example/remote-base//deploy?ref=v1\n",
    )
    .expect("write");
    let (code, _, stderr) = render(
        root,
        &helm,
        &kustomize,
        &["--render-timeout", "30s", "apps/root.yaml"],
    );
    assert_eq!(code, 2);
    let errors: Vec<&str> = stderr.lines().filter(|l| l.contains("error:")).collect();
    assert_eq!(errors.len(), 4, "{stderr}");
    assert!(stderr.contains("values-missing.yaml"), "{stderr}");
    assert!(
        stderr.contains(
            "source referenced \"$other\", which is not one of the available sources ($values)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("remote-base"), "{stderr}");
    // The others are still rendered.
    assert!(
        stderr.contains(
            "Application static (apps/children/static.yaml:1, rendered by root): 2 object(s)"
        ),
        "{stderr}"
    );
}

#[test]
fn the_checkout_is_never_written() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(false);
    let (_, _, stderr) = render(repo.path(), &helm, &kustomize, &["apps/root.yaml"]);
    assert!(stderr.contains("Application config"), "{stderr}");
    // Kustomize edits (namePrefix, labels, images, patches) ran in a copy.
    let status = render_support::git(repo.path(), &["status", "--porcelain", "--ignored"]);
    assert_eq!(status, "", "the render changed the checkout");
}

#[test]
fn check_and_plan_render_the_applications_of_a_gitops_repository() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(true);
    let tools = [
        "--helm",
        helm.to_str().expect("utf-8 path"),
        "--kustomize",
        kustomize.to_str().expect("utf-8 path"),
    ];
    let run = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(tools);
        syncguard(repo.path(), &all)
    };
    // `check apps/` renders every local Application (auto): the hook the head adds is denied,
    // the broken chart is an input error naming its Application, the rest is checked.
    let out = run(&["check", "--format", "json", "apps/"]);
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    let findings = report["findings"].as_array().expect("findings");
    let denied: Vec<(&str, &str)> = findings
        .iter()
        .filter(|f| f["action"] == "deny")
        .map(|f| {
            (
                f["rule_id"].as_str().unwrap_or_default(),
                f["resource"]["name"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(denied, [("SG201", "storefront-seed")], "{report:#}");
    let seed = findings
        .iter()
        .find(|f| f["resource"]["name"] == "storefront-seed")
        .expect("seed finding");
    // The controller's view: the Job is in the destination namespace, found in its template.
    assert_eq!(seed["resource"]["namespace"], "shop");
    assert_eq!(
        seed["location"]["helm_template"], "web/templates/seed-job.yaml",
        "{seed:#}"
    );
    let errors = report["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].as_str().unwrap_or_default().starts_with(
            "Application broken (apps/children/broken.yaml:1): source https://git.example.com/platform/gitops.git path charts/broken: helm template failed"
        ),
        "{errors:?}"
    );
    // --render never: the Applications are checked as objects only.
    let out = run(&["check", "--render", "never", "--format", "json", "apps/"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert!(
        report["errors"].as_array().is_some_and(Vec::is_empty),
        "{report:#}"
    );
    assert_eq!(out.status.code(), Some(0), "{report:#}");
    // plan shows the rendered hooks in Argo CD's order: the seed hook in PreSync.
    let out = run(&["plan", "--format", "json", "apps/children/web.yaml"]);
    let plan = String::from_utf8_lossy(&out.stdout);
    assert!(
        plan.contains("storefront-seed") && plan.contains("PreSync"),
        "{plan}"
    );
    // --render always: a source that is not local is an error.
    let out = run(&["check", "--render", "always", "apps/children/vendor.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("not rendered: source https://github.com/example/vendor-manifests.git"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn an_application_set_generates_its_applications_which_are_rendered_in_turn() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(false);
    let (code, stdout, stderr) = render(repo.path(), &helm, &kustomize, &["apps/services.yaml"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("ApplicationSet services (apps/services.yaml:1): 2 Application(s)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "Application svc-cart (apps/services.yaml:1, rendered by services): 1 object(s)"
        ),
        "{stderr}"
    );
    assert!(
        stdout
            .contains("\"argocd.argoproj.io/tracking-id\": \"svc-search:/Service:search/search\""),
        "{stdout}"
    );
    // The generated Applications themselves are printed, as the ApplicationSet controller would
    // create them (its finalizer, the ApplicationSet's namespace).
    assert!(
        stdout.contains("\"resources-finalizer.argocd.argoproj.io\""),
        "{stdout}"
    );
}

/// Jsonnet as the repo-server evaluates it: external variables and top-level arguments (string
/// and code, `$ARGOCD_APP_*` substituted), a library directory from the repository root, an
/// array or one object per file, the skip marker; a file that fails is its Application's error.
#[test]
fn jsonnet_sources_are_evaluated_with_their_options() {
    let Some(jsonnet) = jsonnet_tool() else {
        return;
    };
    let app = |name: &str, path: &str, jsonnet: &str| {
        [
            "apiVersion: argoproj.io/v1alpha1",
            "kind: Application",
            &format!("metadata: {{name: {name}, namespace: argocd}}"),
            "spec:",
            "  project: default",
            "  destination: {server: https://kubernetes.default.svc, namespace: shop}",
            "  source:",
            &format!("    repoURL: {}", render_support::REPO_URL),
            &format!("    path: {path}"),
            "    directory:",
            &format!("      jsonnet: {jsonnet}"),
            "---\n",
        ]
        .join("\n")
    };
    let apps = app(
        "guestbook",
        "jsonnet/guestbook",
        "{extVars: [{name: app, value: '$ARGOCD_APP_NAME-${ARGOCD_APP_NAMESPACE}'}, \
         {name: ports, value: '[80, 8080]', code: true}], \
         tlas: [{name: replicas, value: '2 + 1', code: true}, {name: tier, value: web}], \
         libs: [jsonnet/lib]}",
    ) + &app("broken", "jsonnet/broken", "{}");
    let repo = repository_of(&[
        ("apps/jsonnet.yaml", apps.as_str()),
        (
            "jsonnet/lib/k.libsonnet",
            "{ deployment(name, replicas):: { apiVersion: 'apps/v1', kind: 'Deployment', \
             metadata: { name: name }, spec: { replicas: replicas } } }\n",
        ),
        (
            "jsonnet/guestbook/main.jsonnet",
            "local k = import 'k.libsonnet';\n\
             function(replicas=1, tier='dev') [\n\
               k.deployment(std.extVar('app'), replicas),\n\
               { apiVersion: 'v1', kind: 'Service', metadata: { name: std.extVar('app') + '-' + tier },\n\
                 spec: { ports: [{ port: p } for p in std.extVar('ports')] } },\n\
               null,\n\
             ]\n",
        ),
        (
            "jsonnet/guestbook/single.jsonnet",
            "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'single' }, data: { tier: 'x' } }\n",
        ),
        (
            "jsonnet/guestbook/skipped.jsonnet",
            "// +argocd:skip-file-rendering\nerror 'never evaluated'\n",
        ),
        (
            "jsonnet/broken/bad.jsonnet",
            "{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: std.extVar('missing') } }\n",
        ),
    ]);
    let jsonnet = jsonnet.display().to_string();
    let out = syncguard(
        repo.path(),
        &["render", "--jsonnet", &jsonnet, "apps/jsonnet.yaml"],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let objects: Vec<serde_json::Value> = serde_yaml_objects(&stdout);
    let summary: Vec<String> = objects
        .iter()
        .map(|o| {
            format!(
                "{} {} {}",
                o["kind"].as_str().unwrap_or_default(),
                o["metadata"]["name"].as_str().unwrap_or_default(),
                o["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"]
                    .as_str()
                    .unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            "Deployment guestbook-shop guestbook:apps/Deployment:shop/guestbook-shop",
            "Service guestbook-shop-web guestbook:/Service:shop/guestbook-shop-web",
            "ConfigMap single guestbook:/ConfigMap:shop/single",
        ],
        "{stdout}\n{stderr}"
    );
    assert_eq!(objects[0]["spec"]["replicas"], 3);
    assert_eq!(
        objects[1]["spec"]["ports"],
        serde_json::json!([{"port": 80}, {"port": 8080}])
    );
    assert!(
        stderr.contains("error: ")
            && stderr.contains("jsonnet/broken/bad.jsonnet")
            && stderr.contains("missing"),
        "{stderr}"
    );
    // Without the command, each Application that needed it says so, and one line names them.
    let out = syncguard(
        repo.path(),
        &[
            "render",
            "--jsonnet",
            "/nonexistent/jsonnet",
            "apps/jsonnet.yaml",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("jsonnet (/nonexistent/jsonnet) was not found; the Applications that need it: guestbook, broken"),
        "{stderr}"
    );
}

/// The objects of a `render` output (a YAML stream of JSON-compatible documents).
fn serde_yaml_objects(stream: &str) -> Vec<serde_json::Value> {
    syncguard::manifest::load_str("render", stream)
        .resources
        .into_iter()
        .map(|r| r.raw)
        .collect()
}

/// `--kustomize-build-options --enable-helm`: kustomize inflates `helmCharts` with the helm
/// render was given (Argo CD's image has it on PATH; here it need not be), with the cluster's
/// version.
#[test]
fn kustomize_inflates_helm_charts_with_the_given_helm() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let app = [
        "apiVersion: argoproj.io/v1alpha1",
        "kind: Application",
        "metadata: {name: inflated, namespace: argocd}",
        "spec:",
        "  destination: {server: https://kubernetes.default.svc, namespace: shop}",
        &format!(
            "  source: {{repoURL: {}, path: app}}",
            render_support::REPO_URL
        ),
        "",
    ]
    .join("\n");
    let repo = repository_of(&[
        ("apps/app.yaml", app.as_str()),
        (
            "app/kustomization.yaml",
            "helmGlobals: {chartHome: charts}\nhelmCharts:\n- {name: mini, releaseName: rel, valuesInline: {greeting: hello}}\n",
        ),
        (
            "app/charts/mini/Chart.yaml",
            "apiVersion: v2\nname: mini\nversion: 0.1.0\n",
        ),
        ("app/charts/mini/values.yaml", "greeting: hi\n"),
        (
            "app/charts/mini/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-mini'}\n\
             data: {greeting: '{{ .Values.greeting }}', kube: '{{ .Capabilities.KubeVersion.Version }}'}\n",
        ),
    ]);
    // Without --enable-helm kustomize refuses helmCharts; the error says what Argo CD passes.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(repo.path())
        .env_remove("SYNCGUARD_HELM")
        .env_remove("SYNCGUARD_KUSTOMIZE")
        .args(["render", "--helm"])
        .arg(&helm)
        .arg("--kustomize")
        .arg(&kustomize)
        .arg("apps/app.yaml")
        .output()
        .expect("run syncguard");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(syncguard::render::KUSTOMIZE_HELM_NOT_ENABLED)
            && stderr.contains("--kustomize-build-options --enable-helm"),
        "{stderr}"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(repo.path())
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env_remove("SYNCGUARD_HELM")
        .env_remove("SYNCGUARD_KUSTOMIZE")
        .args(["render", "--helm"])
        .arg(&helm)
        .arg("--kustomize")
        .arg(&kustomize)
        .args([
            "--kustomize-build-options",
            "--enable-helm",
            "--kube-version",
            "v1.34.1",
            "apps/app.yaml",
        ])
        .output()
        .expect("run syncguard");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let objects = serde_yaml_objects(&stdout);
    assert_eq!(objects.len(), 1, "{stdout}");
    assert_eq!(objects[0]["metadata"]["name"], "rel-mini");
    assert_eq!(
        objects[0]["data"],
        serde_json::json!({"greeting": "hello", "kube": "v1.34.1"})
    );
}

/// `--enable-helm` with a chart from a chart repository: kustomize pulls it into the
/// kustomization's `charts/`; that happens in a copy, so the user's checkout is not written
/// (the docs promise render never writes).
#[test]
fn kustomize_enable_helm_pulls_charts_outside_the_checkout() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    // A chart repository: `helm package` + `helm repo index`, served by python's http.server.
    let served = tempfile::tempdir().expect("temp");
    let chart = served.path().join("src/mini");
    std::fs::create_dir_all(chart.join("templates")).expect("chart dir");
    std::fs::write(
        chart.join("Chart.yaml"),
        "apiVersion: v2\nname: mini\nversion: 0.2.0\n",
    )
    .expect("Chart.yaml");
    // kustomize reads the pulled chart's values.yaml (its evalsymlink fails without one).
    std::fs::write(chart.join("values.yaml"), "greeting: hi\n").expect("values.yaml");
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-mini'}\n",
    )
    .expect("template");
    let repo_dir = served.path().join("repo");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(&helm)
            .args(args)
            .env("HOME", served.path())
            .output()
            .expect("helm runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(&[
        "package",
        chart.to_str().expect("utf-8"),
        "-d",
        repo_dir.to_str().expect("utf-8"),
    ]);
    run(&["repo", "index", repo_dir.to_str().expect("utf-8")]);
    let mut server = std::process::Command::new("python3")
        .args(["-u", "-m", "http.server", "0", "--bind", "127.0.0.1"])
        .current_dir(&repo_dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("python3 serves");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stdout.take().expect("stdout")),
        &mut line,
    )
    .expect("the server says where it listens");
    let port = line
        .split_whitespace()
        .skip_while(|w| *w != "port")
        .nth(1)
        .expect("a port")
        .to_string();
    let app = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: pulled, namespace: argocd}}\n\
         spec:\n  destination: {{server: https://kubernetes.default.svc, namespace: shop}}\n  \
         source: {{repoURL: {}, path: app}}\n",
        render_support::REPO_URL
    );
    let kustomization = format!(
        "helmCharts:\n- {{name: mini, repo: 'http://127.0.0.1:{port}', version: 0.2.0, releaseName: rel}}\n"
    );
    let repo = repository_of(&[
        ("apps/app.yaml", app.as_str()),
        ("app/kustomization.yaml", kustomization.as_str()),
    ]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(repo.path())
        .env("HOME", served.path())
        .env_remove("SYNCGUARD_HELM")
        .env_remove("SYNCGUARD_KUSTOMIZE")
        .args(["render", "--helm"])
        .arg(&helm)
        .arg("--kustomize")
        .arg(&kustomize)
        .args([
            "--kustomize-build-options",
            "--enable-helm",
            "apps/app.yaml",
        ])
        .output()
        .expect("run syncguard");
    let _ = server.kill();
    let _ = server.wait();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let objects = serde_yaml_objects(&stdout);
    assert_eq!(objects.len(), 1, "{stdout}");
    assert_eq!(objects[0]["metadata"]["name"], "rel-mini");
    let status = render_support::git(repo.path(), &["status", "--porcelain", "--ignored"]);
    assert_eq!(status, "", "render wrote into the checkout");
}
