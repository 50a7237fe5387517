//! `syncguard render` with the real helm and kustomize (the versions Argo CD 3.6 bundles) on the
//! GitOps fixture of `tests/fixtures/gitops/`: Helm, Kustomize, directory, multi-source `$values`,
//! app-of-apps, a broken chart and a remote repository, rendered from a real git checkout.
//!
//! Golden files: `tests/fixtures/golden/render-gitops.{yaml,stderr}`; after an intended change,
//! `UPDATE_GOLDEN=1 cargo test --test render_tools` and review the diff.

mod render_support;

use std::path::{Path, PathBuf};

use render_support::{repository, syncguard, tools};

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

fn golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).expect("write golden");
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run UPDATE_GOLDEN=1 cargo test --test render_tools",
            path.display()
        )
    });
    if expected != actual {
        let first = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(expected.lines().count().min(actual.lines().count()));
        panic!(
            "{name} differs from {} from line {}:\n- {}\n+ {}\n(UPDATE_GOLDEN=1 cargo test --test render_tools \
             rewrites it; review the diff)",
            path.display(),
            first + 1,
            expected.lines().nth(first).unwrap_or("<end>"),
            actual.lines().nth(first).unwrap_or("<end>")
        );
    }
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
    let check = syncguard(repo.path(), &["check", "--format", "json", "rendered.yaml"]);
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).expect("JSON report");
    let seed_sg201 = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .any(|f| f["rule_id"] == "SG201" && f["resource"]["name"] == "storefront-seed");
    assert!(seed_sg201, "{report:#}");
    assert_eq!(check.status.code(), Some(1));
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
        &["--timeout", "30s", "apps/root.yaml"],
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
