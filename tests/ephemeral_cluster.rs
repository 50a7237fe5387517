//! `check --ephemeral-cluster` against a real etcd and kube-apiserver (built by
//! scripts/install-kube.sh into .tools/bin, or named by SYNCGUARD_KUBE_BINARIES).
//!
//! What the server refuses is an SG401 deny with the server's message at the field's line;
//! what it fills in is SG305; Argo CD's own normalisations (`resources: null`, `stringData`)
//! are no drift; nothing is left running or on disk after a run, a failed start or SIGTERM.
//!
//! A machine without the binaries skips these tests with a line saying so; under `CI=true`
//! they fail instead (.ci/run installs the binaries first), unless SYNCGUARD_KUBE_OPTIONAL=1
//! says the installer could not build them there.

mod kube_support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn check(tmp: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_syncguard"));
    cmd.arg("check")
        .args(args)
        .args(["--color", "never"])
        .env("TMPDIR", tmp)
        .env_remove("SYNCGUARD_KUBE_BINARIES");
    cmd
}

/// Processes whose command line mentions `dir` (the control plane's children).
fn processes_under(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(&needle) && !c.contains("syncguard check"))
        .collect()
}

/// Nothing of a control plane remains under `tmp`, on disk or running.
fn assert_clean(tmp: &Path) {
    let left: Vec<_> = std::fs::read_dir(tmp)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left on disk: {left:?}");
    assert_eq!(processes_under(tmp), Vec::<String>::new());
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}\nstdout: {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// (rule, kind/name, line, message) of each finding.
fn findings(report: &Value) -> Vec<(String, String, u64, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule_id"].as_str().unwrap().to_string(),
                format!(
                    "{}/{}",
                    f["resource"]["kind"].as_str().unwrap(),
                    f["resource"]["name"].as_str().unwrap()
                ),
                f["location"]["line"].as_u64().unwrap_or(0),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn refusals_are_denied_fills_are_drift_and_argo_cd_normalisations_are_not() {
    let Some(bin) = kube_support::binaries() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let fixture = root().join("tests/fixtures/ephemeral");
    let out = check(
        tmp.path(),
        &[
            "--ephemeral-cluster",
            "--kube-binaries",
            bin.to_str().unwrap(),
            "--format",
            "json",
            fixture.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let got: Vec<_> = findings(&report)
        .into_iter()
        .map(|(rule, subject, line, _)| (rule, subject, line))
        .collect();
    let expect = [
        ("SG305", "Backup/nightly", 104),
        ("SG305", "Service/web", 24),
        ("SG401", "Backup/broken", 113),
        ("SG401", "Ingress/web", 15),
        ("SG401", "Service/outside", 130),
    ];
    let mut got_sorted = got.clone();
    got_sorted.sort();
    assert_eq!(
        got_sorted,
        expect
            .iter()
            .map(|(r, s, l)| (r.to_string(), s.to_string(), *l))
            .collect::<Vec<_>>()
    );
    let messages = findings(&report);
    let ingress = messages.iter().find(|f| f.1 == "Ingress/web").unwrap();
    assert!(
        ingress
            .3
            .contains("spec.rules[0].http.paths: Required value (the Kubernetes v1."),
        "{}",
        ingress.3
    );
    let server = &report["server"];
    assert_eq!(server["kind"], "ephemeral");
    assert!(server["kubernetes"].as_str().unwrap().starts_with("v1."));
    assert_eq!(server["accepted"], 5);
    assert_eq!(server["refused"], 3);
    assert_clean(tmp.path());
}

#[test]
fn without_binaries_the_input_is_judged_offline_and_the_exit_code_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let fixture = root().join("tests/fixtures/ephemeral");
    let out = check(
        tmp.path(),
        &[
            "--ephemeral-cluster",
            "--kube-binaries",
            empty.path().to_str().unwrap(),
            fixture.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("kube-apiserver and etcd were not found")
            && stdout.contains("judged offline only"),
        "{stdout}"
    );
    assert_clean(tmp.path());
}

#[test]
fn a_failed_start_names_the_cause_and_leaves_nothing_behind() {
    let Some(bin) = kube_support::binaries() else {
        return;
    };
    // An etcd that is not etcd: the API server cannot reach it and the start fails.
    let fake = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        bin.join("kube-apiserver"),
        fake.path().join("kube-apiserver"),
    )
    .unwrap();
    let etcd = fake.path().join("etcd");
    std::fs::write(
        &etcd,
        "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'etcd Version: 3.6.4'; exit 0; }\necho 'listen tcp: address already in use' >&2\nexit 1\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&etcd, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let fixture = root().join("tests/fixtures/ephemeral");
    let out = check(
        tmp.path(),
        &[
            "--ephemeral-cluster",
            "--kube-binaries",
            fake.path().to_str().unwrap(),
            fixture.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{stdout}");
    assert!(
        stdout.contains("etcd exited during start-up")
            && stdout.contains("a port was taken 3 times"),
        "{stdout}"
    );
    assert_clean(tmp.path());
}

#[test]
fn sigterm_stops_the_control_plane_and_removes_it() {
    let Some(bin) = kube_support::binaries() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let fixture = root().join("tests/fixtures/ephemeral");
    let mut child = check(
        tmp.path(),
        &[
            "--ephemeral-cluster",
            "--kube-binaries",
            bin.to_str().unwrap(),
            fixture.to_str().unwrap(),
        ],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    // Wait until the API server runs, then terminate syncguard.
    let deadline = Instant::now() + Duration::from_secs(60);
    while !processes_under(tmp.path())
        .iter()
        .any(|c| c.contains("kube-apiserver"))
    {
        assert!(Instant::now() < deadline, "the API server never started");
        assert!(child.try_wait().unwrap().is_none(), "check ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = i32::try_from(child.id()).unwrap();
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("interrupted by SIGTERM"), "{stderr}");
    assert_clean(tmp.path());
}

#[test]
fn live_objects_make_a_changed_selector_a_refused_change() {
    let Some(bin) = kube_support::binaries() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // The live object as `kubectl get -o yaml` prints it: with what only its cluster may set.
    let deployment = |selector: &str, live: bool| {
        let from_cluster = if live {
            "  resourceVersion: \"4711\"\n  uid: 0b6f3c2e-0000-4000-8000-000000000000\n"
        } else {
            ""
        };
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n{from_cluster}spec:\n  selector:\n    matchLabels: {{{selector}}}\n  template:\n    metadata:\n      labels: {{app: web, tier: web}}\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.27\n{}",
            if live { "status:\n  replicas: 1\n" } else { "" }
        )
    };
    let live = dir.path().join("live.yaml");
    let head = dir.path().join("head.yaml");
    std::fs::write(&live, deployment("app: web", true)).unwrap();
    std::fs::write(&head, deployment("app: web, tier: web", false)).unwrap();
    let out = check(
        tmp.path(),
        &[
            "--ephemeral-cluster",
            "--kube-binaries",
            bin.to_str().unwrap(),
            "--live",
            live.to_str().unwrap(),
            "--format",
            "json",
            head.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let found = findings(&report);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "SG401");
    assert!(
        found[0]
            .3
            .contains("refuses this change from the live object")
            && found[0].3.contains("spec.selector"),
        "{}",
        found[0].3
    );
    // The same head with no live object is a creation, which nothing refuses.
    let out = check(
        tmp.path(),
        &[
            "--ephemeral-cluster",
            "--kube-binaries",
            bin.to_str().unwrap(),
            "--format",
            "json",
            head.to_str().unwrap(),
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_clean(tmp.path());
}
