//! `syncguard render` end to end: a git checkout made here, the real binary, its stream fed to
//! `syncguard check`.

use std::path::Path;
use std::process::{Command, Output};

fn syncguard(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run syncguard")
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(args)
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

const APPS: &str = r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: orders, namespace: argocd}
spec:
  destination: {namespace: orders}
  source: {repoURL: 'https://git.example.com/platform/gitops.git', path: apps/orders, directory: {recurse: true, exclude: 'docs/*'}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: elsewhere, namespace: argocd}
spec:
  destination: {namespace: x}
  source: {repoURL: 'https://git.example.com/other/repo.git', path: y}
"#;

const BROKEN: &str = r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: broken, namespace: team}
spec:
  destination: {namespace: b}
  source: {repoURL: 'git@git.example.com:platform/gitops.git', path: apps/missing}
"#;

fn checkout() -> tempfile::TempDir {
    let repo = tempfile::tempdir().expect("temp dir");
    let root = repo.path();
    git(root, &["init", "-q"]);
    git(
        root,
        &[
            "remote",
            "add",
            "origin",
            "git@git.example.com:platform/gitops.git",
        ],
    );
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed-incident");
    for f in ["migration-job.yaml", "externalsecret.yaml"] {
        let text = std::fs::read_to_string(fixtures.join(f)).expect("fixture");
        write(root, &format!("apps/orders/db/{f}"), &text);
    }
    write(
        root,
        "apps/orders/docs/example.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: doc}\n",
    );
    write(root, "argocd/apps.yaml", APPS);
    repo
}

#[test]
fn render_writes_tracked_objects_that_check_judges_in_their_application() {
    let repo = checkout();
    let out = syncguard(repo.path(), &["render", "argocd"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stdout
            .contains("\"argocd.argoproj.io/tracking-id\": \"orders:batch/Job:orders/db-migrate\""),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "# Application orders (argocd/apps.yaml:1): apps/orders/db/migration-job.yaml:"
        ),
        "{stdout}"
    );
    assert!(
        !stdout.contains("\"doc\""),
        "excluded file rendered: {stdout}"
    );
    assert!(
        stderr.contains("Application elsewhere") && stderr.contains("not the local repository"),
        "{stderr}"
    );
    // The stream is what `check` reads: the seed incident's deadlock is found in its app.
    let rendered = repo.path().join("rendered.yaml");
    std::fs::write(&rendered, out.stdout).expect("write render");
    let check = syncguard(repo.path(), &["check", "rendered.yaml", "--format", "json"]);
    let report = String::from_utf8_lossy(&check.stdout);
    assert_eq!(check.status.code(), Some(1), "{report}");
    assert!(
        report.contains("SG201") && report.contains("\"orders\""),
        "{report}"
    );
}

#[test]
fn a_broken_application_is_an_error_of_its_own_and_the_others_still_render() {
    let repo = checkout();
    write(repo.path(), "argocd/broken.yaml", BROKEN);
    let out = syncguard(repo.path(), &["render", "argocd"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Application team_broken") && stderr.contains("apps/missing"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("db-migrate"));
    let bad = syncguard(
        repo.path(),
        &["render", "argocd", "--repo", "no-equals-sign"],
    );
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("URL=DIR"));
    let none = syncguard(repo.path(), &["render", "apps"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("no Argo CD Application"));
}

/// `render .` on a GitOps repository: chart templates and kustomizations that are not
/// manifests are passed over with one line (exit 0); a broken file that may hold an
/// Application is still an input error.
#[test]
fn files_without_applications_that_are_not_manifests_are_passed_over() {
    let repo = checkout();
    write(
        repo.path(),
        "charts/web/templates/cm.yaml",
        "{{- if .Values.enabled }}\napiVersion: v1\nkind: ConfigMap\n{{- end }}\n",
    );
    write(
        repo.path(),
        "apps/orders/kustomization.yaml",
        "resources:\n- db/migration-job.yaml\n",
    );
    let out = syncguard(repo.path(), &["render", "."]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("passed over 2 document(s) of files that hold no Argo CD object"),
        "{stderr}"
    );
    write(
        repo.path(),
        "argocd/typo.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: [typo}\n",
    );
    let out = syncguard(repo.path(), &["render", "."]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("argocd/typo.yaml"), "{stderr}");
}

/// A fleet ApplicationSet (a clusters generator with a selector) generates one Application per
/// matching cluster Secret given with --clusters; without them it says what it lacks.
#[test]
fn cluster_secrets_given_with_clusters_feed_the_clusters_generator() {
    let repo = checkout();
    write(
        repo.path(),
        "argocd/addons.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: addons, namespace: argocd}\n\
         spec:\n  goTemplate: true\n  generators:\n  - clusters:\n      selector:\n        \
         matchLabels: {enable_orders: 'true'}\n  template:\n    metadata: {name: 'orders-{{.nameNormalized}}'}\n    \
         spec:\n      destination: {server: '{{.server}}', namespace: '{{.metadata.labels.env}}'}\n      \
         source: {repoURL: 'https://git.example.com/platform/gitops.git', path: apps/orders/db}\n",
    );
    let clusters = tempfile::tempdir().expect("temp dir");
    let secrets = clusters.path().join("clusters.yaml");
    std::fs::write(
        &secrets,
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: c1\n  namespace: argocd\n  \
         labels: {argocd.argoproj.io/secret-type: cluster, enable_orders: 'true', env: prod}\n\
         stringData: {name: Prod_1, server: 'https://prod-1:6443'}\n---\n\
         apiVersion: v1\nkind: Secret\nmetadata:\n  name: c2\n  namespace: argocd\n  \
         labels: {argocd.argoproj.io/secret-type: cluster, env: dev}\n\
         stringData: {name: dev, server: 'https://dev:6443'}\n",
    )
    .expect("write");
    let secrets = secrets.display().to_string();
    let out = syncguard(
        repo.path(),
        &["render", "argocd/addons.yaml", "--clusters", &secrets],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("ApplicationSet addons (argocd/addons.yaml:1): 1 Application(s)")
            && stderr
                .contains("Application orders-prod-1 (argocd/addons.yaml:1, rendered by addons)"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("\"server\": \"https://prod-1:6443\""),
        "{stdout}"
    );
    // Without the Secrets: a skipped generator, exit 0, nothing generated.
    let out = syncguard(repo.path(), &["render", "argocd/addons.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("0 Application(s)") && stderr.contains("--clusters FILE"),
        "{stderr}"
    );
    // A --clusters file without a cluster Secret is refused.
    let out = syncguard(
        repo.path(),
        &[
            "render",
            "argocd/addons.yaml",
            "--clusters",
            "argocd/apps.yaml",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no cluster Secret"));
}
