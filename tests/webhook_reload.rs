//! Hot reload under load: while clients keep sending reviews, the certificate is rotated (a
//! kubelet-style `..data` symlink swap, then plain atomic renames) and the policy directory is
//! changed (a good change, a change whose tests fail, a file that does not parse). Zero requests
//! may fail; the new certificate must be served; broken policies must not replace the live set.

mod webhook_support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;
use syncguard::certs::{CertsOptions, generate};
use syncguard::policy::builtin::{BUILTIN_POLICY_FILES, PolicySource};
use tokio::sync::Mutex;
use webhook_support::*;

/// Generates a new serving certificate under the CA kept in `staging`.
fn new_leaf(staging: &Path) {
    generate(&CertsOptions {
        out: staging.to_path_buf(),
        names: vec!["localhost".into(), "127.0.0.1".into()],
        days: 2,
        new_ca: false,
    })
    .unwrap();
}

fn leaf_der(pem_file: &Path) -> Vec<u8> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    CertificateDer::from_pem_file(pem_file).unwrap().to_vec()
}

/// What kubelet does to a mounted Secret: a new hidden folder, a new `..data` symlink renamed
/// over the old one; `tls.crt` and `tls.key` are symlinks through `..data`.
fn kubelet_update(mount: &Path, version: usize, staging: &Path) {
    let folder = format!("..v{version}");
    std::fs::create_dir(mount.join(&folder)).unwrap();
    for f in ["tls.crt", "tls.key", "ca.crt"] {
        std::fs::copy(staging.join(f), mount.join(&folder).join(f)).unwrap();
    }
    std::os::unix::fs::symlink(&folder, mount.join("..data_tmp")).unwrap();
    std::fs::rename(mount.join("..data_tmp"), mount.join("..data")).unwrap();
    for f in ["tls.crt", "tls.key", "ca.crt"] {
        if std::fs::symlink_metadata(mount.join(f)).is_err() {
            std::os::unix::fs::symlink(format!("..data/{f}"), mount.join(f)).unwrap();
        }
    }
}

/// Writes `text` to a hidden temporary file in `dir` and renames it to `name`.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

const LABEL_RULE: &str = r#"package syncguard.rules.bad_label

meta := {"id": "SG990", "title": "object labelled bad", "severity": "low", "action": "warn"}

violations contains {"msg": "labelled syncguard.dev/bad=true", "path": "/metadata/labels"} if {
	input.resource.metadata.labels["syncguard.dev/bad"] == "true"
}
"#;

const LABEL_TEST: &str = r#"package syncguard.rules.bad_label_test

import data.syncguard.rules.bad_label

test_a_bad_label_is_reported if {
	count(bad_label.violations) == 1 with input as {"resource": {"metadata": {"labels": {"syncguard.dev/bad": "true"}}}}
}
"#;

fn labelled_configmap() -> Vec<u8> {
    let mut review: Value = serde_json::from_slice(&fixture("configmap-clean.json")).unwrap();
    review["request"]["object"]["metadata"]["labels"]["syncguard.dev/bad"] = "true".into();
    serde_json::to_vec(&review).unwrap()
}

/// One request of the background load and what its answer must be.
async fn check_one(client: &Client, conn: Option<&Mutex<Conn>>, i: usize) -> Result<(), String> {
    let (path, body) = match i % 3 {
        0 => ("/validate", fixture("seed-job-create.json")),
        1 => ("/mutate", fixture("hook-job-no-deadline.json")),
        _ => ("/validate", fixture("configmap-clean.json")),
    };
    let answer = match conn {
        Some(c) => c.lock().await.post(path, &body).await?,
        None => client.post(path, &body).await?,
    };
    if answer.status != 200 {
        return Err(format!("{path}: HTTP {}: {}", answer.status, answer.text()));
    }
    let r: Value = serde_json::from_slice(&answer.body).map_err(|e| e.to_string())?;
    let r = &r["response"];
    let ok = match i % 3 {
        0 => {
            r["allowed"] == false
                && r["status"]["message"]
                    .as_str()
                    .is_some_and(|m| m.starts_with("SG201"))
        }
        1 => r["allowed"] == true && r["patch"].is_string(),
        _ => r["allowed"] == true && r.get("warnings").is_none(),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{path}: unexpected answer {r}"))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificates_and_policies_reload_under_load_without_a_failed_request() {
    // Certificates: a CA in `staging`, the mounted Secret in `mount`.
    let staging = tempfile::tempdir().unwrap();
    new_leaf(staging.path());
    let mount = tempfile::tempdir().unwrap();
    kubelet_update(mount.path(), 1, staging.path());
    // Policies: the built-in set, as a directory the server watches.
    let policies = tempfile::tempdir().unwrap();
    for (name, text) in BUILTIN_POLICY_FILES {
        std::fs::write(policies.path().join(name), text).unwrap();
    }

    let mut config = config(mount.path());
    config.policies = PolicySource::Dir(policies.path().into());
    config.app_context = Some(seed_context_dir());
    let server = start(config).await;
    let probes = server.probe_addr().unwrap();
    let client = Client::new(&staging.path().join("ca.crt"), server.tls_addr());
    let metrics = || async move {
        probe(probes, "/metrics")
            .await
            .map(|a| a.text())
            .unwrap_or_default()
    };

    // Background load: one client on fresh connections (new handshakes), one on keep-alive.
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicUsize::new(0));
    let failures = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let mut load = Vec::new();
    for keep_alive in [false, true] {
        let (client, stop, sent, failures) =
            (client.clone(), stop.clone(), sent.clone(), failures.clone());
        load.push(tokio::spawn(async move {
            let conn = if keep_alive {
                Some(Mutex::new(client.connect().await.unwrap()))
            } else {
                None
            };
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                if let Err(e) = check_one(&client, conn.as_ref(), i).await {
                    failures.lock().unwrap().push(e);
                }
                sent.fetch_add(1, Ordering::SeqCst);
                i += 1;
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
        }));
    }
    let served_leaf = || async { client.connect().await.ok().map(|c| c.peer) };
    assert_eq!(
        served_leaf().await.unwrap(),
        leaf_der(&staging.path().join("tls.crt"))
    );

    // 1. Certificate rotation the kubelet way.
    new_leaf(staging.path());
    let second = leaf_der(&staging.path().join("tls.crt"));
    kubelet_update(mount.path(), 2, staging.path());
    eventually(
        "the kubelet-swapped certificate is served",
        Duration::from_secs(30),
        || async { (served_leaf().await? == second).then_some(()) },
    )
    .await;

    // 2. Certificate rotation by atomic renames (key, then certificate).
    new_leaf(staging.path());
    let third = leaf_der(&staging.path().join("tls.crt"));
    write_atomically(
        mount.path(),
        "tls.key",
        &std::fs::read(staging.path().join("tls.key")).unwrap(),
    );
    write_atomically(
        mount.path(),
        "tls.crt",
        &std::fs::read(staging.path().join("tls.crt")).unwrap(),
    );
    eventually(
        "the renamed certificate is served",
        Duration::from_secs(30),
        || async { (served_leaf().await? == third).then_some(()) },
    )
    .await;

    // 3. A broken certificate is rejected; the current one stays.
    let cert_parse = "syncguard_reload_failures_total{what=\"certificate\",reason=\"parse\"}";
    let before = metric(&metrics().await, cert_parse);
    write_atomically(
        mount.path(),
        "tls.crt",
        b"-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n",
    );
    eventually(
        "the broken certificate is counted",
        Duration::from_secs(30),
        || async {
            let m = metrics().await;
            (metric(&m, cert_parse) > before).then_some(())
        },
    )
    .await;
    assert_eq!(served_leaf().await.unwrap(), third);

    // 4. A good policy change: a new rule with its own passing test.
    write_atomically(
        policies.path(),
        "bad_label_test.rego",
        LABEL_TEST.as_bytes(),
    );
    write_atomically(policies.path(), "bad_label.rego", LABEL_RULE.as_bytes());
    eventually("the new rule answers", Duration::from_secs(30), || async {
        let r = client
            .post("/validate", &labelled_configmap())
            .await
            .ok()?
            .response();
        warnings(&r)
            .iter()
            .any(|w| w.starts_with("SG990: "))
            .then_some(())
    })
    .await;

    // 5. A change whose own tests fail is rejected.
    let tests_failed = "syncguard_reload_failures_total{what=\"policies\",reason=\"tests\"}";
    let before = metric(&metrics().await, tests_failed);
    write_atomically(
        policies.path(),
        "bad_label_test.rego",
        format!("{LABEL_TEST}\ntest_that_fails if false\n").as_bytes(),
    );
    eventually(
        "the failing tests are counted",
        Duration::from_secs(30),
        || async {
            let m = metrics().await;
            (metric(&m, tests_failed) > before).then_some(())
        },
    )
    .await;

    // 6. A file that does not parse is rejected too.
    let rego_failed = "syncguard_reload_failures_total{what=\"policies\",reason=\"rego\"}";
    let before = metric(&metrics().await, rego_failed);
    write_atomically(
        policies.path(),
        "broken.rego",
        b"package syncguard.rules.broken\nviolations contains if {\n",
    );
    eventually(
        "the broken policy is counted",
        Duration::from_secs(30),
        || async {
            let m = metrics().await;
            (metric(&m, rego_failed) > before).then_some(())
        },
    )
    .await;
    // The last good set (with SG990) still answers.
    let r = client
        .post("/validate", &labelled_configmap())
        .await
        .unwrap()
        .response();
    assert!(warnings(&r).iter().any(|w| w.starts_with("SG990: ")), "{r}");

    stop.store(true, Ordering::SeqCst);
    for l in load {
        l.await.unwrap();
    }
    let failures = failures.lock().unwrap().clone();
    let sent = sent.load(Ordering::SeqCst);
    assert!(
        failures.is_empty(),
        "{} of {sent} requests failed: {:#?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(sent > 50, "only {sent} requests were sent");
    let m = metrics().await;
    assert!(
        metric(&m, "syncguard_reloads_total{what=\"certificate\"}") >= 2.0,
        "{m}"
    );
    assert!(
        metric(&m, "syncguard_reloads_total{what=\"policies\"}") >= 1.0,
        "{m}"
    );
    eprintln!("{sent} requests during the reloads, none failed");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_app_context_directory_is_reloaded() {
    let certs = tempfile::tempdir().unwrap();
    certs_with_binary(certs.path());
    // The seed app without its migration Job: the admitted Job has no known Application yet.
    let context = tempfile::tempdir().unwrap();
    for f in ["app.yaml", "externalsecret.yaml"] {
        std::fs::copy(seed_context_dir().join(f), context.path().join(f)).unwrap();
    }
    let mut config = config(certs.path());
    config.app_context = Some(context.path().into());
    let server = start(config).await;
    let client = Client::new(&certs.path().join("ca.crt"), server.tls_addr());
    let before = client
        .post("/validate", &fixture("seed-job-create.json"))
        .await
        .unwrap()
        .response();
    assert_eq!(before["allowed"], true);
    assert!(
        warnings(&before)[0].contains("no Application context"),
        "{before}"
    );

    let job = std::fs::read(seed_context_dir().join("migration-job.yaml")).unwrap();
    write_atomically(context.path(), "migration-job.yaml", &job);
    eventually(
        "SG201 once the context has the Job",
        Duration::from_secs(30),
        || async {
            let r = client
                .post("/validate", &fixture("seed-job-create.json"))
                .await
                .ok()?
                .response();
            (r["allowed"] == false).then_some(())
        },
    )
    .await;
    let m = probe(server.probe_addr().unwrap(), "/metrics")
        .await
        .unwrap()
        .text();
    assert!(
        metric(&m, "syncguard_reloads_total{what=\"app_context\"}") >= 1.0,
        "{m}"
    );
    server.shutdown().await.unwrap();
}
