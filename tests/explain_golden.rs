//! `syncguard explain` on the Applications of tests/fixtures/explain/: the text and JSON outputs
//! must equal the golden files (`UPDATE_GOLDEN=1 cargo test --test explain_golden` rewrites them;
//! review the diff).

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/explain")
}

fn explain(dir: &Path, format: &str) -> String {
    let app = std::fs::read_to_string(dir.join("APP")).unwrap_or_default();
    let extra = std::fs::read_to_string(dir.join("ARGS")).unwrap_or_default();
    let out = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("explain")
        .arg(app.trim())
        .arg(
            dir.join("manifests.yaml")
                .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .unwrap_or(dir),
        )
        .args(["--render", "never", "--format", format])
        .args(extra.split_whitespace())
        .env_remove("SYNCGUARD_ARGOCD_VERSION")
        .output()
        .unwrap_or_else(|e| panic!("run syncguard: {e}"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap_or_else(|e| panic!("{e}"))
}

fn golden(path: &Path, got: &str) {
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(path, got).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    let want = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\nrun `UPDATE_GOLDEN=1 cargo test --test explain_golden` to create it",
            path.display()
        )
    });
    assert!(
        want == got,
        "{} differs; run `UPDATE_GOLDEN=1 cargo test --test explain_golden` and review the diff\n--- want\n{want}\n--- got\n{got}",
        path.display()
    );
}

#[test]
fn every_explain_fixture_prints_its_golden_text_and_json() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(
        dirs.len() >= 5,
        "expected at least 5 Applications, found {}",
        dirs.len()
    );
    for dir in &dirs {
        golden(&dir.join("explain.txt"), &explain(dir, "text"));
        golden(&dir.join("explain.json"), &explain(dir, "json"));
    }
}

#[test]
fn an_unknown_application_is_an_error_naming_it() {
    let out = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(["explain", "nowhere", "--render", "never"])
        .arg(fixtures().join("layers/manifests.yaml"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Application nowhere in"));
}
