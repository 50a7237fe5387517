//! The real Argo CD controller as the referee of `syncguard plan`, on recorded syncs: each case
//! in `tests/fixtures/audit/` is one sync by the real controller on the e2e stack (the
//! manifests, the API server's audit log of it, the Application's operationState). The
//! recordings of each release sit in `tests/fixtures/audit/v<release>/` (v3.2.11: the
//! standalone gitops-engine; v3.6.1: the engine inside argo-cd), and every test runs on each of
//! them with `plan --argocd-version <release>`. The recorder (`tests/oracle/recorder.rs`) turns
//! the log into the steps the controller took; `plan` must give the same steps, each compared
//! as a set.

#[path = "oracle/recorder.rs"]
mod recorder;

use std::path::{Path, PathBuf};
use std::process::Command;

use recorder::{Filter, Step, plural_matches, record, recording};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/audit")
        .join(name)
}

/// One release's recordings: `<case>.audit.jsonl`, `<case>.operation.json` and `wave-delay`.
struct Rec {
    /// The release that made them (`v3.6.1`), planned for with `--argocd-version`.
    version: String,
    dir: PathBuf,
}

/// The recordings to check: from `SYNCGUARD_ORACLE_DIR` (made by `SYNCGUARD_ORACLE_VERSION`)
/// when set — the e2e suite's `argocd_oracle` scenario syncs every case with the real
/// controller and runs these tests again on what it recorded — else every committed release.
fn recordings() -> Vec<Rec> {
    if let Some(dir) = std::env::var_os("SYNCGUARD_ORACLE_DIR") {
        let version = std::env::var("SYNCGUARD_ORACLE_VERSION")
            .expect("SYNCGUARD_ORACLE_VERSION names the release that made SYNCGUARD_ORACLE_DIR");
        return vec![Rec {
            version,
            dir: PathBuf::from(dir),
        }];
    }
    let mut recs: Vec<Rec> = std::fs::read_dir(fixture(""))
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let name = e.file_name().to_str()?.to_string();
            (e.path().is_dir() && name.starts_with('v')).then(|| Rec {
                version: name,
                dir: e.path(),
            })
        })
        .collect();
    recs.sort_by(|a, b| a.version.cmp(&b.version));
    let versions: Vec<&str> = recs.iter().map(|r| r.version.as_str()).collect();
    assert!(
        versions.contains(&"v3.2.11") && versions.contains(&"v3.6.1"),
        "committed recordings of both referees expected, found {versions:?}"
    );
    recs
}

/// Runs `check` on every release's recordings; the failures of all of them are reported
/// together, each with its release.
fn for_each_release(check: impl Fn(&Rec)) {
    let mut failures = Vec::new();
    for r in recordings() {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(&r)));
        if let Err(e) = outcome {
            failures.push(format!("Argo CD {}: {}", r.version, panic_text(&e)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn panic_text(e: &Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>()
        .cloned()
        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

impl Rec {
    fn file(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn operation(r: &Rec, case: &str) -> Value {
    serde_json::from_str(&read(&r.file(&format!("{case}.operation.json")))).unwrap()
}

fn audit_log(r: &Rec, case: &str) -> String {
    read(&r.file(&format!("{case}.audit.jsonl")))
}

/// The wave delay (`ARGOCD_SYNC_WAVE_DELAY`, seconds) the recordings read were made with: the
/// `wave-delay` file beside them. The e2e stack runs the controller with a longer delay than
/// Argo CD's 2 s (`AS_SYNC_WAVE_DELAY`), so that a busy machine cannot stretch the pauses inside
/// a step past the gap.
fn wave_delay(r: &Rec) -> f64 {
    let text = read(&r.file("wave-delay"));
    text.trim()
        .parse()
        .unwrap_or_else(|_| panic!("wave-delay: {text:?} is not a number of seconds"))
}

/// The step gap: 0.6 of the wave delay, above the longest pause seen inside a step (the
/// controller waits up to 3 s for a CRD to be Established) and below the delay.
fn gap(r: &Rec) -> f64 {
    0.6 * wave_delay(r)
}

fn filter_for(r: &Rec, op: &Value) -> Filter {
    Filter {
        since: op["startedAt"].as_str().map(str::to_string),
        gap_seconds: gap(r),
        ..Filter::default()
    }
}

fn recorded(r: &Rec, case: &str) -> Vec<Step> {
    let log = audit_log(r, case);
    let op = operation(r, case);
    let filter = filter_for(r, &op);
    record(&log, Some(&op), &filter)
}

/// "resource/namespace/name" of each write, per step, sorted inside a step.
fn names(steps: &[Step]) -> Vec<Vec<String>> {
    steps
        .iter()
        .map(|s| {
            let mut v: Vec<String> = s
                .writes
                .iter()
                .map(|w| format!("{} {}/{}/{}", w.verb, w.resource, w.namespace, w.name))
                .collect();
            v.sort();
            v
        })
        .collect()
}

type Task = (String, String, String, String);

fn tasks_of(step: &Value) -> Vec<Task> {
    step["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let f = |k: &str| t[k].as_str().unwrap_or("").to_string();
            (f("group"), f("kind"), f("namespace"), f("name"))
        })
        .collect()
}

/// The plan's steps and its SyncFail step (if any).
fn plan_of(r: &Rec, args: &[&str]) -> (Vec<Vec<Task>>, Option<Vec<Task>>) {
    let out = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        // Planned for the release that made the recording.
        .args(["plan", "--format", "json", "--argocd-version", &r.version])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["argocd"]["version"], r.version.trim_start_matches('v'));
    let plan = &doc["applications"][0]["plan"];
    let steps = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(tasks_of)
        .collect();
    let sync_fail = plan.get("sync_fail").filter(|v| !v.is_null()).map(tasks_of);
    (steps, sync_fail)
}

fn plan_steps(r: &Rec, args: &[&str]) -> Vec<Vec<Task>> {
    plan_of(r, args).0
}

/// Each plan step has exactly the objects of the recorded step at the same position.
fn assert_same_steps(recorded: &[Step], planned: &[Vec<(String, String, String, String)>]) {
    assert_eq!(
        recorded.len(),
        planned.len(),
        "steps: recorded {:?}, planned {planned:?}",
        names(recorded)
    );
    for (i, (r, p)) in recorded.iter().zip(planned).enumerate() {
        assert_eq!(
            r.writes.len(),
            p.len(),
            "step {i}: recorded {:?}, planned {p:?}",
            names(&recorded[i..=i])
        );
        for (group, kind, ns, name) in p {
            assert!(
                r.writes
                    .iter()
                    .any(|w| same_object(w, (group, kind, ns, name))),
                "step {i}: {kind} {ns}/{name} planned, not applied by Argo CD in that step: {:?}",
                names(&recorded[i..=i])
            );
        }
    }
}

/// The recorded write is of the planned task's object. The plan gives cluster-scoped objects the
/// destination namespace (as Argo CD's tasks carry it); the API server logs them without one.
fn same_object(
    w: &recorder::Write,
    (group, kind, ns, name): (&String, &String, &String, &String),
) -> bool {
    &w.group == group
        && plural_matches(kind, &w.resource)
        && (&w.namespace == ns || w.namespace.is_empty())
        && same_name(&w.name, name)
}

/// Inside a step Argo CD applies runs of one kind after another (spec §4.3): the recorded
/// writes, in time order, must go through the planned step's kind runs in the planned order.
fn assert_kind_runs(case: &str, i: usize, r: &Step, p: &[Task]) {
    let mut runs: Vec<&String> = Vec::new();
    for t in p {
        if runs.last() != Some(&&t.1) {
            runs.push(&t.1);
        }
    }
    let run_of = |w: &recorder::Write| {
        let t = p
            .iter()
            .find(|t| same_object(w, (&t.0, &t.1, &t.2, &t.3)))?;
        runs.iter().position(|k| **k == t.1)
    };
    let order: Vec<(usize, String)> = r
        .writes
        .iter()
        .filter_map(|w| Some((run_of(w)?, w.resource.clone())))
        .collect();
    assert!(
        order.windows(2).all(|p| p[0].0 <= p[1].0),
        "{case} step {i}: Argo CD applied the kinds in the order {:?}, the plan's kind runs are {runs:?}",
        order.iter().map(|o| &o.1).collect::<Vec<_>>()
    );
}

/// A hook with generateName is named `<generateName><revision7>-<phase>-<unix time>` by Argo CD;
/// `plan --revision` knows all of it but the time (it writes 0).
fn same_name(applied: &str, planned: &str) -> bool {
    match (applied.rsplit_once('-'), planned.strip_suffix("-0")) {
        (Some((stem, time)), Some(planned_stem)) if time.bytes().all(|b| b.is_ascii_digit()) => {
            applied == planned || stem == planned_stem
        }
        _ => applied == planned,
    }
}

#[test]
fn the_recorder_finds_the_steps_of_a_hooks_and_waves_sync() {
    for_each_release(recorder_finds_the_steps_of_waves);
}

fn recorder_finds_the_steps_of_waves(r: &Rec) {
    let steps = recorded(r, "waves");
    assert_eq!(
        names(&steps),
        vec![
            vec!["create jobs/waves/pre-a", "create namespaces//waves"],
            vec!["create jobs/waves/pre-b"],
            vec!["create configmaps/waves/cm-early"],
            vec![
                "create secrets/waves/s0",
                "create serviceaccounts/waves/sa0"
            ],
            vec!["create deployments/waves/web", "create services/waves/web"],
            vec!["create jobs/waves/post"],
        ]
    );
    let phases: Vec<_> = steps
        .iter()
        .map(|s| s.writes[0].phase.clone().unwrap_or_default())
        .collect();
    assert_eq!(
        phases,
        ["PreSync", "PreSync", "Sync", "Sync", "Sync", "PostSync"]
    );
    // Inside a step the kinds come in runs, in the kind order: ServiceAccount before Secret.
    assert_eq!(steps[3].writes[0].name, "sa0");
}

#[test]
fn the_gap_must_lie_between_the_pauses_inside_a_step_and_the_wave_delay() {
    // The committed recording, made with a 4 s wave delay: the Namespace (created before the
    // dry run) comes 0.7 s before the first hook, the steps 4.1 s apart.
    let log = read(&fixture("v3.2.11/waves.audit.jsonl"));
    let with_gap = |gap_seconds| {
        let f = Filter {
            gap_seconds,
            ..Filter::default()
        };
        record(&log, None, &f).len()
    };
    // Without the operation (no phases), a gap below the pause after the Namespace makes it a
    // step of its own; a gap between that pause and the wave delay gives the 6 steps; above
    // the wave delay every step runs into the next.
    assert_eq!(with_gap(0.5), 7);
    let committed_delay: f64 = read(&fixture("v3.2.11/wave-delay")).trim().parse().unwrap();
    assert_eq!(
        committed_delay, 4.0,
        "the numbers here are those of the committed recording"
    );
    assert_eq!(with_gap(0.6 * committed_delay), 6);
    assert_eq!(with_gap(5.0), 1);
}

#[test]
fn plan_gives_the_steps_argo_cd_took_for_hooks_and_waves() {
    for_each_release(plan_gives_the_steps_of_waves);
}

fn plan_gives_the_steps_of_waves(r: &Rec) {
    let file = fixture("waves.yaml");
    let planned = plan_steps(
        r,
        &[
            "--dest-namespace",
            "waves",
            "--create-namespace",
            file.to_str().unwrap(),
        ],
    );
    assert_same_steps(&recorded(r, "waves"), &planned);
}

#[test]
fn a_failed_presync_hook_runs_the_syncfail_hooks_and_nothing_of_the_later_steps() {
    for_each_release(syncfail_runs_after_the_failed_hook);
}

fn syncfail_runs_after_the_failed_hook(r: &Rec) {
    let file = fixture("syncfail.yaml");
    let (steps, sync_fail) = plan_of(
        r,
        &[
            "--dest-namespace",
            "syncfail",
            "--create-namespace",
            file.to_str().unwrap(),
        ],
    );
    let rec = recorded(r, "syncfail");
    // The controller ran the first step (its hook failed), then the SyncFail step, and never the
    // Sync or PostSync steps that the plan lists after it.
    let mut expected = vec![steps[0].clone()];
    expected.push(sync_fail.expect("plan has a SyncFail step"));
    assert_same_steps(&rec, &expected);
    assert_eq!(operation(r, "syncfail")["phase"], "Failed");
}

#[test]
fn pruning_reverses_the_waves_and_prune_last_comes_after_everything() {
    for_each_release(pruning_reverses_the_waves);
}

fn pruning_reverses_the_waves(r: &Rec) {
    let (live, file) = (fixture("prune.live.yaml"), fixture("prune.yaml"));
    let planned = plan_steps(
        r,
        &[
            "--dest-namespace",
            "prune",
            "--live",
            live.to_str().unwrap(),
            file.to_str().unwrap(),
        ],
    );
    let rec = recorded(r, "prune");
    assert_eq!(
        names(&rec),
        vec![
            vec![
                "delete serviceaccounts/prune/gone-w2",
                "patch configmaps/prune/keep"
            ],
            vec!["delete configmaps/prune/gone-w1"],
            vec!["delete configmaps/prune/gone-w0"],
            vec!["delete secrets/prune/gone-last"],
        ]
    );
    assert_same_steps(&rec, &planned);
}

#[test]
fn helm_hooks_map_to_phases_with_their_weight_as_wave_and_skip_and_test_hooks_never_run() {
    for_each_release(helm_hooks_map_to_phases);
}

fn helm_hooks_map_to_phases(r: &Rec) {
    let op = operation(r, "helm");
    let revision = op["syncResult"]["revision"].as_str().unwrap().to_string();
    let file = fixture("helm.yaml");
    let planned = plan_steps(
        r,
        &[
            "--dest-namespace",
            "helm",
            "--create-namespace",
            "--revision",
            &revision,
            file.to_str().unwrap(),
        ],
    );
    let log = audit_log(r, "helm");
    let rec = recording(&log, Some(&op), &filter_for(r, &op));
    // pre-install with weight -2 before weight 5; the generateName Sync hook at wave 3; the
    // `hook: Skip` ConfigMap and the Helm `test` Pod are never applied.
    assert_same_steps(&rec.steps, &planned);
    let all: Vec<String> = names(&rec.steps).concat();
    assert!(
        !all.iter()
            .any(|w| w.contains("skipped") || w.contains("helm-test")),
        "{all:?}"
    );
    // HookSucceeded: the generateName hook is deleted once the whole sync has succeeded.
    assert_eq!(rec.cleanups.len(), 1, "{:?}", rec.cleanups);
    assert!(
        rec.cleanups[0]
            .name
            .starts_with(&format!("gen-{}-sync-", &revision[..7])),
        "{:?}",
        rec.cleanups
    );
    assert!(rec.cleanups[0].at > rec.steps.last().unwrap().writes[0].at);
}

/// One line of `tests/fixtures/audit/cases`.
struct Case {
    name: String,
    dest: String,
    sources: Vec<PathBuf>,
}

fn listed_cases() -> Vec<Case> {
    read(&fixture("cases"))
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            assert!(cols.len() >= 3, "cases: {l:?}");
            Case {
                name: cols[0].to_string(),
                dest: cols[1].to_string(),
                sources: cols[2]
                    .split_whitespace()
                    .map(|s| Path::new(env!("CARGO_MANIFEST_DIR")).join(s))
                    .collect(),
            }
        })
        .collect()
}

#[test]
fn every_listed_case_was_synced_by_argo_cd_in_the_order_plan_gives() {
    for_each_release(every_listed_case_in_plan_order);
}

fn every_listed_case_in_plan_order(r: &Rec) {
    let cases = listed_cases();
    assert!(cases.len() >= 8, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let op = operation(r, &case.name);
        assert_eq!(op["phase"], "Succeeded", "{}: {}", case.name, op["message"]);
        let revision = op["syncResult"]["revision"]
            .as_str()
            .unwrap_or("")
            .to_string();
        let mut args = vec![
            "--dest-namespace".to_string(),
            case.dest.clone(),
            "--create-namespace".to_string(),
            "--revision".to_string(),
            revision,
        ];
        args.extend(case.sources.iter().map(|p| p.display().to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let planned = plan_steps(r, &args);
        let rec = recorded(r, &case.name);
        let outcome = std::panic::catch_unwind(|| {
            assert_same_steps(&rec, &planned);
            for (i, (r, p)) in rec.iter().zip(&planned).enumerate() {
                assert_kind_runs(&case.name, i, r, p);
            }
        });
        if let Err(e) = outcome {
            failures.push(format!("{}: {}", case.name, panic_text(&e)));
        }
    }
    assert!(
        failures.is_empty(),
        "plan and Argo CD disagree:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_kind_of_the_kind_order_was_applied_by_argo_cd_in_that_order() {
    for_each_release(every_kind_in_one_step);
}

fn every_kind_in_one_step(r: &Rec) {
    // The kinds case: one step, 29 objects; the kind-run check above holds it to the order,
    // and here the step must really have every kind in it.
    let rec = recorded(r, "kinds");
    assert_eq!(rec.len(), 1, "{:?}", names(&rec));
    let mut kinds: Vec<&str> = rec[0].writes.iter().map(|w| w.resource.as_str()).collect();
    kinds.dedup();
    assert_eq!(kinds.len(), 29, "{kinds:?}");
    assert_eq!(kinds.first(), Some(&"namespaces"));
    assert_eq!(kinds.last(), Some(&"gadgets"));
}

/// What the `hooks` case (tests/fixtures/manifests/hooks) shows about the claims of the rules
/// that fire on it: the messages say what Argo CD will do, and here it did exactly that.
#[test]
fn the_hooks_sync_shows_what_sg105_sg107_sg108_and_sg112_say_argo_cd_does() {
    for_each_release(hooks_sync_shows_the_rule_claims);
}

fn hooks_sync_shows_the_rule_claims(r: &Rec) {
    let rec = recorded(r, "hooks");
    let op = operation(r, "hooks");
    let applied: Vec<&str> = rec
        .iter()
        .flat_map(|s| s.writes.iter().map(|w| w.name.as_str()))
        .collect();
    let results: Vec<(String, String)> = op["syncResult"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
            (s("name"), s("syncPhase"))
        })
        .collect();
    let listed = |name: &str| results.iter().filter(|(n, _)| n == name).count();
    // SG105 critical: `hook: presync` and `hook: PreSynk` — "drops the whole object: it is
    // never applied, never pruned and not shown in sync status".
    for dropped in ["billing-seed-data", "billing-warm-cache"] {
        assert!(
            !applied.contains(&dropped),
            "{dropped} applied: {applied:?}"
        );
        assert_eq!(listed(dropped), 0, "{dropped} in the sync status");
    }
    // SG105 high: `hook: PreSync,Postsync` — "runs the object only as a PreSync hook".
    let search: Vec<_> = results
        .iter()
        .filter(|(n, _)| n == "billing-search-index")
        .collect();
    assert_eq!(search.len(), 1, "{results:?}");
    assert_eq!(search[0].1, "PreSync");
    // SG107: `sync-wave: "1.5"` — "silently uses wave 0": applied in the step of the wave-0
    // Deployment, not after it.
    let step_of = |name: &str| {
        rec.iter()
            .position(|s| {
                s.writes
                    .iter()
                    .any(|w| w.name == name && w.resource != "services")
            })
            .unwrap_or_else(|| panic!("{name} not applied"))
    };
    assert_eq!(step_of("billing-feature-flags"), step_of("billing-api"));
    // SG108: a Helm `test` Pod — "Argo CD drops the whole object: it is never applied".
    assert!(!applied.contains(&"billing-test-connection"), "{applied:?}");
    assert_eq!(listed("billing-test-connection"), 0);
    // SG112 low: name and generateName — "Kubernetes and Argo CD use the name".
    assert!(applied.contains(&"billing-notify"), "{applied:?}");
}
