//! Precision on the charts people run: `tests/fixtures/charts/` holds public Helm charts rendered
//! exactly as Argo CD's repo-server renders them (README.md there), and `verdicts.json` a
//! judgement of every finding `syncguard check` reports on them — `true`, `debatable`, `noise`
//! or `false` under the standard of docs/severity.md, each with its reason in Argo CD's
//! behaviour.
//!
//! The real binary runs over every render with the repository's `policies/`. The test fails on
//! a finding nobody judged, on a finding judged `false` (a false alarm is a bug in the model or a
//! rule, not a verdict to keep), on `noise` reported above `info`, on a `debatable` finding whose
//! first sentence does not state its condition, on a `deny` not judged `true`, and on a verdict
//! that matches no finding any more (so the file stays the record of what the corpus shows). It
//! prints the figures: findings per verdict and per rule.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/charts")
}

#[derive(Debug, Deserialize)]
struct Render {
    id: String,
    chart: String,
    repository: String,
    commit: String,
    licence: String,
    command: String,
    /// Extra `syncguard check` arguments (e.g. `--argocd-version 2.14`), when the render needs
    /// them to be judged as its variant says.
    #[serde(default)]
    check_args: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Verdict {
    render: String,
    rule: String,
    object: String,
    #[serde(default)]
    path: Option<String>,
    verdict: String,
    reason: String,
    /// For a `debatable` verdict: the condition under which acting on the finding changes the
    /// sync, as the message's first sentence states it (docs/severity.md).
    #[serde(default)]
    condition: Option<String>,
}

/// The message up to its first full stop followed by a space (or all of it).
fn first_sentence(message: &str) -> &str {
    message
        .find(". ")
        .map_or(message, |i| message.get(..=i).unwrap_or(message))
}

/// The key a finding is judged under: render, rule, `Kind ns/name`, JSON pointer.
type Key = (String, String, String, Option<String>);

#[derive(Debug)]
struct Seen {
    action: String,
    severity: String,
    message: String,
}

fn object_label(resource: &Value) -> String {
    let s = |k: &str| resource.get(k).and_then(Value::as_str).unwrap_or_default();
    match resource.get("namespace").and_then(Value::as_str) {
        Some(ns) => format!("{} {ns}/{}", s("kind"), s("name")),
        None => format!("{} {}", s("kind"), s("name")),
    }
}

fn gunzip(path: &Path) -> Vec<u8> {
    let file = fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut out)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    out
}

/// Runs `syncguard check` on one render; its open findings by key.
fn check(render: &Render, dir: &Path) -> BTreeMap<Key, Seen> {
    let file = dir.join(format!("{}.yaml", render.id));
    fs::write(
        &file,
        gunzip(&corpus_dir().join(format!("renders/{}.yaml.gz", render.id))),
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .arg("check")
        .arg(&file)
        .arg("--policies")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("policies"))
        .args(["--format", "json", "--color", "never"])
        .args(&render.check_args)
        .output()
        .unwrap();
    let code = out.status.code();
    assert!(
        matches!(code, Some(0 | 1)),
        "{}: exit {code:?}: the render must load without errors\n{}",
        render.id,
        String::from_utf8_lossy(&out.stderr),
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        report["summary"]["errors"], 0,
        "{}: load errors {}",
        render.id, report["errors"]
    );
    let mut found = BTreeMap::new();
    for f in report["findings"].as_array().into_iter().flatten() {
        if f["status"] == "skipped" {
            continue;
        }
        let key = (
            render.id.clone(),
            f["rule_id"].as_str().unwrap_or_default().to_string(),
            object_label(&f["resource"]),
            f["path"].as_str().map(str::to_string),
        );
        found.insert(
            key,
            Seen {
                action: f["action"].as_str().unwrap_or_default().to_string(),
                severity: f["severity"].as_str().unwrap_or_default().to_string(),
                message: f["message"].as_str().unwrap_or_default().to_string(),
            },
        );
    }
    found
}

#[test]
fn every_finding_on_the_chart_corpus_is_judged_and_none_is_false() {
    let renders: Vec<Render> =
        serde_json::from_str(&fs::read_to_string(corpus_dir().join("corpus.json")).unwrap())
            .unwrap();
    let verdicts: Vec<Verdict> =
        serde_json::from_str(&fs::read_to_string(corpus_dir().join("verdicts.json")).unwrap())
            .unwrap();

    // The corpus is what the issue asked for, and every render says where it comes from.
    let charts: BTreeSet<&str> = renders.iter().map(|r| r.chart.as_str()).collect();
    let repos: BTreeSet<&str> = renders.iter().map(|r| r.repository.as_str()).collect();
    assert!(renders.len() >= 90, "{} renders", renders.len());
    assert!(charts.len() >= 55, "{} charts", charts.len());
    assert!(repos.len() >= 40, "{} upstream repositories", repos.len());
    for r in &renders {
        assert!(
            r.repository.starts_with("https://")
                && r.commit.len() >= 7
                && !r.licence.is_empty()
                && r.command.contains("helm template"),
            "{}: repository, commit, licence and command are recorded",
            r.id
        );
    }

    let mut judged: BTreeMap<Key, Verdict> = BTreeMap::new();
    for v in &verdicts {
        assert!(
            matches!(v.verdict.as_str(), "true" | "debatable" | "noise" | "false"),
            "verdict {:?} for {:?} is not true, debatable, noise or false",
            v.verdict,
            (&v.render, &v.rule, &v.object)
        );
        assert!(
            !v.reason.trim().is_empty(),
            "a verdict needs its reason: {v:?}"
        );
        let key = (
            v.render.clone(),
            v.rule.clone(),
            v.object.clone(),
            v.path.clone(),
        );
        assert!(
            judged.insert(key, v.clone()).is_none(),
            "judged twice: {v:?}"
        );
    }

    // Two checks at a time: the renders are independent, and the machines have two cores.
    let tmp = tempfile::tempdir().unwrap();
    let mut findings: BTreeMap<Key, Seen> = BTreeMap::new();
    let halves: [Vec<&Render>; 2] = [
        renders.iter().step_by(2).collect(),
        renders.iter().skip(1).step_by(2).collect(),
    ];
    std::thread::scope(|s| {
        let workers: Vec<_> = halves
            .into_iter()
            .map(|half| {
                let dir = tmp.path();
                s.spawn(move || {
                    half.into_iter()
                        .flat_map(|r| check(r, dir))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for w in workers {
            findings.extend(w.join().unwrap());
        }
    });

    let mut problems = Vec::new();
    let mut by_verdict: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_rule: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for (key, seen) in &findings {
        let describe = || {
            format!(
                "{} {} {} {} ({} {}): {}",
                key.0,
                key.1,
                key.2,
                key.3.as_deref().unwrap_or("-"),
                seen.severity,
                seen.action,
                seen.message
            )
        };
        match judged.get(key) {
            None => problems.push(format!("not judged: {}", describe())),
            Some(v) => {
                *by_verdict.entry(v.verdict.as_str()).or_default() += 1;
                *by_rule
                    .entry((key.1.as_str(), v.verdict.as_str()))
                    .or_default() += 1;
                if v.verdict == "false" {
                    problems.push(format!("judged false ({}): {}", v.reason, describe()));
                }
                // Noise (right, but nothing anyone can act on) may only be reported at info,
                // which is recorded and not shown.
                if v.verdict == "noise" && seen.severity != "info" {
                    problems.push(format!(
                        "noise must be info, this is {} ({}): {}",
                        seen.severity,
                        v.reason,
                        describe()
                    ));
                }
                if v.verdict == "debatable" {
                    match v.condition.as_deref() {
                        Some(c) if first_sentence(&seen.message).contains(c) => {}
                        Some(c) => problems.push(format!(
                            "a debatable finding states its condition in its first sentence; \
                             {c:?} is not in it: {}",
                            describe()
                        )),
                        None => problems.push(format!(
                            "a debatable verdict names the condition its message states: {}",
                            describe()
                        )),
                    }
                }
                if seen.action == "deny" && v.verdict != "true" {
                    problems.push(format!(
                        "a deny must be judged true, this one is {}: {}",
                        v.verdict,
                        describe()
                    ));
                }
            }
        }
    }
    for (key, v) in &judged {
        if !findings.contains_key(key) {
            problems.push(format!(
                "verdict without a finding (remove it, or say why the finding went): {v:?}"
            ));
        }
    }

    println!(
        "chart corpus: {} renders of {} charts from {} repositories; {} findings",
        renders.len(),
        charts.len(),
        repos.len(),
        findings.len()
    );
    println!("by verdict: {by_verdict:?}");
    for ((rule, verdict), n) in &by_rule {
        println!("  {rule} {verdict}: {n}");
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
}
