//! `syncguard review --ephemeral-cluster` on the git fixture `tests/fixtures/gitops-immutable/`:
//! the base revision applied for real on a throwaway API server, the head dry-run against it.
//! A changed Deployment selector, a fixed-name Job's changed template and an immutable Secret's
//! changed data are blocking (SG401, the server's words and the fix); a Service allocated a
//! `clusterIP` and a CRD default inside a list are drift (SG305); a ConfigMap whose data changes
//! is neither. Needs kube-apiserver and etcd (the skip rule of tests/kube_support).

mod kube_support;

mod render_support;

use std::path::Path;

use render_support::{git, syncguard};
use serde_json::Value;

fn copy(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The fixture's base and head committed in a new repository.
fn fixture_repository() -> tempfile::TempDir {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/gitops-immutable");
    let repo = tempfile::tempdir().unwrap();
    let root = repo.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", render_support::REPO_URL]);
    copy(&fixture.join("base"), root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    copy(&fixture.join("head"), root);
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "head"]);
    repo
}

/// (rule, kind/name, path) of the new findings of `rules`.
fn new_findings(review: &Value, rules: &[&str]) -> Vec<(String, String, String)> {
    let mut got: Vec<(String, String, String)> = review["findings"]["new"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| rules.contains(&f["rule_id"].as_str().unwrap_or_default()))
        .map(|f| {
            (
                f["rule_id"].as_str().unwrap().to_string(),
                format!(
                    "{}/{}",
                    f["resource"]["kind"].as_str().unwrap(),
                    f["resource"]["name"].as_str().unwrap()
                ),
                f["path"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    got.sort();
    got
}

fn triples(items: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    items
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect()
}

#[test]
fn without_a_server_the_offline_table_refuses_the_same_changes_and_says_it_is_offline() {
    let repo = fixture_repository();
    let out = syncguard(
        repo.path(),
        &["review", "--base", "HEAD~1", "--format", "json", "apps/"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let review: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(review.get("server").is_none());
    assert_eq!(
        new_findings(&review, &["SG401"]),
        triples(&[
            ("SG401", "Deployment/web", "/spec/selector"),
            ("SG401", "Job/db-migrate", "/spec/template"),
            // Offline the finding is at the field the manifest declares.
            ("SG401", "Secret/api-keys", "/stringData"),
        ])
    );
    for f in review["findings"]["new"].as_array().unwrap() {
        if f["rule_id"] == "SG401" {
            let msg = f["message"].as_str().unwrap();
            assert!(msg.contains("offline table"), "{msg}");
        }
    }
}

#[test]
fn changes_the_server_refuses_from_the_live_object_block_the_review() {
    let Some(bin) = kube_support::binaries() else {
        return;
    };
    let repo = fixture_repository();
    let root = repo.path();
    let out = syncguard(
        root,
        &[
            "review",
            "--base",
            "HEAD~1",
            "--ephemeral-cluster",
            "--kube-binaries",
            bin.to_str().unwrap(),
            "--format",
            "json",
            "apps/",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let review: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(review["server"]["kind"], "ephemeral");
    let new = review["findings"]["new"].as_array().unwrap();
    let got = new_findings(&review, &["SG401", "SG305"]);
    let expect = triples(&[
        ("SG305", "Backup/nightly", "/spec/targets"),
        ("SG305", "Service/cache", "/spec/clusterIP"),
        ("SG401", "Deployment/web", "/spec/selector"),
        ("SG401", "Job/db-migrate", "/spec/template"),
        ("SG401", "Secret/api-keys", "/data"),
    ]);
    assert_eq!(got, expect, "{}", String::from_utf8_lossy(&out.stdout));
    for f in new.iter().filter(|f| f["rule_id"] == "SG401") {
        let msg = f["message"].as_str().unwrap();
        assert!(
            msg.contains("refuses this change from the live object")
                && msg.contains("immutable")
                && msg.contains("Force=true,Replace=true"),
            "{msg}"
        );
        // The Job's template is quoted by the server as a Go struct of kilobytes: elided.
        assert!(msg.len() < 1200, "{msg}");
        // The server's verdict, not the offline table's.
        assert!(!msg.contains("offline table"), "{msg}");
    }
    // Nothing about the ConfigMap, whose data may change.
    assert!(
        !new.iter().any(|f| f["resource"]["kind"] == "ConfigMap"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
