//! `syncguard plan` end to end: the real binary over the bundled examples and temp files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn syncguard(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_syncguard"));
    cmd.args(args).current_dir(repo()).env("NO_COLOR", "1");
    match stdin {
        None => cmd.output().unwrap(),
        Some(text) => {
            use std::io::Write;
            use std::process::Stdio;
            let mut child = cmd
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            child
                .stdin
                .take()
                .unwrap()
                .write_all(text.as_bytes())
                .unwrap();
            child.wait_with_output().unwrap()
        }
    }
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn position(haystack: &str, needle: &str) -> usize {
    haystack
        .find(needle)
        .unwrap_or_else(|| panic!("{needle:?} not in output:\n{haystack}"))
}

#[test]
fn the_seed_incident_plan_says_the_presync_job_runs_before_the_secret_and_the_deployment() {
    let out = syncguard(&["plan", "examples/seed-incident"], None);
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    // The timeline lists the hook first, then the Sync phase.
    let job = position(&text, "Job orders/db-migrate  [PreSync hook]");
    let es = position(&text, "ExternalSecret orders/db-credentials");
    let deploy = position(&text, "Deployment orders/orders");
    assert!(job < es && es < deploy);
    // And it says so in plain words.
    assert!(
        text.contains(
            "The PreSync hook Job orders/db-migrate (wave 5) runs before every Sync-phase object:"
        ),
        "{text}"
    );
    assert!(text.contains("ExternalSecret orders/db-credentials (wave 2)"));
    assert!(text.contains("Deployment orders/orders (wave 6)"));
    assert!(
        text.contains(
            "Nothing after PreSync wave 5 is applied until Job orders/db-migrate completes"
        )
    );
    // Locations point into the example files.
    assert!(text.contains("examples/seed-incident/migration-job.yaml:1:1"));
}

#[test]
fn plan_json_lists_tasks_in_argo_cd_order_with_locations() {
    let out = syncguard(
        &["plan", "examples/seed-incident", "--format", "json"],
        None,
    );
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let app = &v["applications"][0];
    let names: Vec<(String, String)> = app["plan"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["tasks"].as_array().unwrap().iter())
        .map(|t| {
            (
                t["kind"].as_str().unwrap().to_string(),
                t["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        ("Job", "db-migrate"),
        ("ConfigMap", "orders-config"),
        ("ExternalSecret", "db-credentials"),
        ("Service", "orders"),
        ("Deployment", "orders"),
    ]
    .iter()
    .map(|(k, n)| (k.to_string(), n.to_string()))
    .collect();
    assert_eq!(names, expected);
    assert_eq!(app["plan"]["steps"][0]["phase"], "PreSync");
    assert_eq!(app["plan"]["steps"][0]["gate"], "hooks-and-resources");
    assert_eq!(app["plan"]["steps"][2]["is_final"], true);
    assert_eq!(
        app["locations"][0]["file"],
        "examples/seed-incident/migration-job.yaml"
    );
    assert!(v["errors"].as_array().unwrap().is_empty());
}

#[test]
fn plan_reads_stdin_and_reports_ignored_hooks_with_the_reason() {
    let yaml = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: smoke-test
  annotations:
    helm.sh/hook: test
spec: {}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    argocd.argoproj.io/hook: presync
spec: {}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
";
    let out = syncguard(&["plan", "-"], Some(yaml));
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("Never applied by this sync"), "{text}");
    assert!(text.contains("batch/Job/default/smoke-test") || text.contains("smoke-test"));
    assert!(text.contains("silently dropped, never applied"));
    assert!(text.contains("<stdin>:17:1"), "{text}");
}

#[test]
fn a_broken_file_is_reported_and_the_rest_is_still_planned_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "good.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ok\n",
    );
    write(dir.path(), "bad.yaml", "apiVersion: v1\nkind: [unclosed\n");
    write(
        dir.path(),
        "nokind.yaml",
        "apiVersion: v1\nmetadata:\n  name: x\n",
    );
    let out = syncguard(&["plan", dir.path().to_str().unwrap()], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = stdout(&out);
    assert!(text.contains("ConfigMap default/ok"), "{text}");
    assert!(text.contains("Input errors"));
    assert!(text.contains("bad.yaml:3:1: invalid YAML"), "{text}");
    assert!(
        text.contains("nokind.yaml:1:1: missing or empty `kind`"),
        "{text}"
    );
}

#[test]
fn objects_tracked_by_different_applications_get_one_plan_each() {
    let yaml = "\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: shop
spec:
  destination:
    namespace: shop
  syncPolicy:
    syncOptions: [CreateNamespace=true]
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: a
  annotations:
    argocd.argoproj.io/tracking-id: shop:/ConfigMap:shop/a
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: b
  annotations:
    argocd.argoproj.io/tracking-id: blog:/ConfigMap:blog/b
";
    let out = syncguard(&["plan", "-", "--format", "json"], Some(yaml));
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let apps = v["applications"].as_array().unwrap();
    let names: Vec<&Value> = apps.iter().map(|a| &a["application"]).collect();
    assert_eq!(
        names,
        vec![&Value::Null, &Value::from("shop"), &Value::from("blog")]
    );
    // The shop app's destination namespace and CreateNamespace come from its Application.
    let shop = &apps[1];
    assert_eq!(shop["destination_namespace"], "shop");
    let first = &shop["plan"]["steps"][0]["tasks"][0];
    assert_eq!(first["kind"], "Namespace");
    assert_eq!(first["name"], "shop");
    assert_eq!(first["phase"], "PreSync");
}

#[test]
fn live_objects_missing_from_the_manifests_are_pruned_in_reverse_wave_order() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "want.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keep\n  namespace: default\n",
    );
    let live = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: keep, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: old-1, namespace: default, annotations: {argocd.argoproj.io/sync-wave: '1'}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: old-2, namespace: default, annotations: {argocd.argoproj.io/sync-wave: '2'}}
";
    write(dir.path(), "live.yaml", live);
    let want = dir.path().join("want.yaml");
    let live = dir.path().join("live.yaml");
    let out = syncguard(
        &[
            "plan",
            want.to_str().unwrap(),
            "--live",
            live.to_str().unwrap(),
        ],
        None,
    );
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    let old2 = position(&text, "ConfigMap default/old-2  [prune");
    let old1 = position(&text, "ConfigMap default/old-1  [prune");
    assert!(old2 < old1, "prune waves are mirrored:\n{text}");
}

#[test]
fn colour_is_only_used_when_asked_for() {
    let plain = syncguard(&["plan", "examples/clean-app"], None);
    assert!(!stdout(&plain).contains('\x1b'));
    let coloured = syncguard(&["plan", "examples/clean-app", "--color", "always"], None);
    assert!(stdout(&coloured).contains("\x1b[1m"));
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn the_plan_names_the_argo_cd_release_it_is_for_and_its_engine() {
    let json = |args: &[&str]| -> Value {
        let o = syncguard(args, None);
        assert!(o.status.success(), "{o:?}");
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let default = json(&["plan", "--format", "json", "examples/clean-app"]);
    assert_eq!(default["argocd"]["version"], "3.6");
    assert_eq!(default["argocd"]["engine"], "gitops-engine inside argo-cd");
    let in_force = |doc: &Value, name: &str| {
        doc["argocd"]["behaviours"]
            .as_array()
            .unwrap()
            .iter()
            .any(|b| b == name)
    };
    assert!(in_force(&default, "pending_deletion_names_finalizers"));
    let old = json(&[
        "plan",
        "--format",
        "json",
        "--argocd-version",
        "v3.2.11",
        "examples/clean-app",
    ]);
    assert_eq!(old["argocd"]["version"], "3.2.11");
    assert_eq!(old["argocd"]["engine"], "standalone gitops-engine");
    assert!(!in_force(&old, "pending_deletion_names_finalizers"));
    assert!(in_force(&old, "tracking_id_default"));
    // Ordering is the same for both engines.
    assert_eq!(old["applications"], default["applications"]);
    let text = stdout(&syncguard(
        &["plan", "--argocd-version", "3.2", "examples/clean-app"],
        None,
    ));
    assert!(
        text.contains("Planned for Argo CD 3.2 (standalone gitops-engine)"),
        "{text}"
    );
}

#[test]
fn an_argo_cd_version_that_is_not_one_is_refused_with_what_was_expected() {
    let o = syncguard(
        &["plan", "--argocd-version", "3.x", "examples/clean-app"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("\"3.x\" is not an Argo CD version"), "{err}");
    assert!(err.contains("e.g. 3.6 or v3.6.1"), "{err}");
}

#[test]
fn an_app_level_prune_false_keeps_prunes_only_from_argo_cd_3_4_on() {
    // Spec §5.9 item 5, corrected by the release table: before 3.4 (argo-cd#23370) Argo CD
    // reads Prune=false only from the live object's annotation; the Application's own sync
    // option is ignored there — 3.3 included, although it already runs the monorepo engine.
    let dir = std::env::temp_dir().join(format!("sg-plan-prune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let app = dir.join("app.yaml");
    std::fs::write(
        &app,
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop, namespace: argocd}\n\
         spec:\n  project: default\n  destination: {namespace: shop, server: https://kubernetes.default.svc}\n\
         \x20 source: {repoURL: https://git.example.com/shop.git, path: ., targetRevision: main}\n\
         \x20 syncPolicy: {syncOptions: [Prune=false]}\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep, namespace: shop, annotations: {argocd.argoproj.io/tracking-id: \"shop:/ConfigMap:shop/keep\"}}\ndata: {a: b}\n",
    )
    .unwrap();
    let live = dir.join("live.yaml");
    std::fs::write(
        &live,
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: gone, namespace: shop, annotations: {argocd.argoproj.io/tracking-id: \"shop:/ConfigMap:shop/gone\"}}\ndata: {a: b}\n",
    )
    .unwrap();
    let prune_of = |version: &str| -> Value {
        let o = syncguard(
            &[
                "plan",
                "--format",
                "json",
                "--argocd-version",
                version,
                "--live",
                live.to_str().unwrap(),
                app.to_str().unwrap(),
            ],
            None,
        );
        assert!(o.status.success(), "{o:?}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        let app = v["applications"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["application"] == "shop")
            .expect("the Application shop")
            .clone();
        app["plan"]["steps"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| s["tasks"].as_array().unwrap().clone())
            .find(|t| t["is_prune"] == true)
            .expect("a prune task")
    };
    assert_eq!(prune_of("3.2")["prune_disabled"], false);
    assert_eq!(prune_of("3.3")["prune_disabled"], false);
    assert_eq!(prune_of("3.4.0")["prune_disabled"], true);
    assert_eq!(prune_of("3.6")["prune_disabled"], true);
    std::fs::remove_dir_all(&dir).ok();
}

const CERTIFICATE: &str = "\
apiVersion: cert-manager.io/v1
kind: Certificate
metadata:
  name: web
  namespace: shop
spec:
  secretName: web-tls
";

#[test]
fn require_crds_makes_a_sync_argo_cd_will_refuse_exit_1() {
    // Without --require-crds the CRD is assumed installed: a plan, exit 0.
    let assumed = syncguard(&["plan", "-"], Some(CERTIFICATE));
    assert_eq!(assumed.status.code(), Some(0), "{assumed:?}");
    // With it, the sync is invalid: the text says Argo CD refuses it, and the exit code agrees.
    let refused = syncguard(&["plan", "-", "--require-crds"], Some(CERTIFICATE));
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(
        stdout(&refused).contains("Argo CD will refuse this sync"),
        "{refused:?}"
    );
    let json = syncguard(
        &["plan", "-", "--require-crds", "--format", "json"],
        Some(CERTIFICATE),
    );
    assert_eq!(json.status.code(), Some(1), "{json:?}");
    // The CRD in the same sync makes it valid again.
    let crd = "\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: certificates.cert-manager.io
spec:
  group: cert-manager.io
  names: {kind: Certificate, plural: certificates}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
";
    let shipped = syncguard(
        &["plan", "-", "--require-crds"],
        Some(&format!("{CERTIFICATE}---\n{crd}")),
    );
    assert_eq!(shipped.status.code(), Some(0), "{shipped:?}");
}

#[test]
fn a_label_or_annotation_that_is_not_a_string_is_an_input_error_with_its_line() {
    let text = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  namespace: shop
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/sync-wave: 5
spec:
  template: {spec: {restartPolicy: Never, containers: [{name: m, image: m:1}]}}
";
    let out = syncguard(&["plan", "-"], Some(text));
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains(
            "<stdin>:8:5: metadata.annotations.argocd.argoproj.io/sync-wave: value 5 is a \
             number; Kubernetes annotations must be strings — quote it: \"5\""
        ),
        "{text}"
    );
    // Everything else is still planned.
    assert!(text.contains("Job shop/migrate"), "{text}");
}

/// `docs/argocd-versions.md` prints the release table of `model::version::CHANGES`: one row per
/// behaviour, `| name | releases | evidence |`, in table order.
#[test]
fn the_versions_page_prints_the_release_table_row_by_row() {
    use syncguard::model::version::CHANGES;
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/argocd-versions.md"),
    )
    .unwrap();
    let expected: Vec<String> = CHANGES
        .iter()
        .map(|c| {
            format!(
                "| `{}` | {} | {} |",
                c.behaviour.name(),
                c.releases(),
                c.evidence.replace('|', "\\|")
            )
        })
        .collect();
    let rows: Vec<&str> = page
        .lines()
        .filter(|l| l.starts_with("| `") && l.contains("` | "))
        .collect();
    assert_eq!(
        rows,
        expected,
        "docs/argocd-versions.md's release table differs from CHANGES; the rows should read:\n{}",
        expected.join("\n")
    );
}

/// `plan --live`: the tick model over the live objects' health says where the sync would stop.
#[test]
fn plan_with_live_objects_says_where_the_sync_would_stop() {
    let dir = std::env::temp_dir().join(format!("sg-plan-forecast-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let live_job = |status: &str| {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: db-migrate\n  namespace: orders\n  \
             annotations: {{argocd.argoproj.io/hook: PreSync}}\nspec:\n  template: {{spec: {{restartPolicy: OnFailure, \
             containers: [{{name: m, image: x}}]}}}}\nstatus: {status}\n"
        )
    };
    write(&dir, "stuck.yaml", &live_job("{active: 1}"));
    write(
        &dir,
        "done.yaml",
        &live_job("{succeeded: 1, conditions: [{type: Complete, status: \"True\"}]}"),
    );
    let forecast_of = |live: &str| -> Value {
        let live = dir.join(live);
        let o = syncguard(
            &[
                "plan",
                "--format",
                "json",
                "--live",
                live.to_str().unwrap(),
                "examples/seed-incident",
            ],
            None,
        );
        assert!(o.status.success(), "{o:?}");
        let v: Value = serde_json::from_slice(&o.stdout).unwrap();
        v["applications"][0]["forecast"].clone()
    };
    let stuck = forecast_of("stuck.yaml");
    assert_eq!(stuck["phase"], "Running", "{stuck}");
    assert_eq!(
        stuck["message"],
        "waiting for completion of hook batch/Job/db-migrate"
    );
    assert_eq!(stuck["step"]["phase"], "PreSync");
    assert_eq!(stuck["waiting_on"][0]["key"], "batch/Job/orders/db-migrate");
    assert_eq!(stuck["waiting_on"][0]["health"], "Progressing");
    let done = forecast_of("done.yaml");
    assert_eq!(done["phase"], "Succeeded", "{done}");
    // Without --live there is nothing to forecast from.
    let o = syncguard(
        &["plan", "--format", "json", "examples/seed-incident"],
        None,
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["applications"][0].get("forecast").is_none(), "{v}");
    let text = stdout(&syncguard(
        &[
            "plan",
            "--live",
            dir.join("stuck.yaml").to_str().unwrap(),
            "examples/seed-incident",
        ],
        None,
    ));
    assert!(
        text.contains("the sync would stop in PreSync wave 5: \"waiting for completion of hook batch/Job/db-migrate\""),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
