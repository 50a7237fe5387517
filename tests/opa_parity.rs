//! regorus and OPA must agree on every rule in `policies/`.
//!
//! syncguard evaluates the Rego rules with regorus, but rule authors test them with `opa test` too
//! (scripts/opa-test.sh), and users expect a rule to mean what it means in OPA. This test builds
//! every policy input document exactly as `syncguard check` does (`build_inputs`) over every
//! directory of `tests/fixtures/manifests/`, `tests/fixtures/field/` and `examples/`, evaluates each rule package with
//! regorus (VM and interpreter) and with the `opa` binary, and compares, per (input, rule):
//!
//! - the set of violations, each projected to what syncguard reads: `msg`, `path`, `severity`;
//! - the set of patches, each read as an RFC 6902 operation.
//!
//! A rule that reports patches but no violation is dropped by syncguard (a patch without a finding
//! would be a silent change), so patches are compared only where violations exist.
//!
//! OPA is optional: without an `opa` binary (env `SYNCGUARD_OPA`, or `.tools/bin/opa` as built by
//! `scripts/install-opa.sh`) the parity test says how to enable it and passes. Run it with
//! `scripts/opa-parity.sh`. One `opa eval` process per fixture directory evaluates all of its
//! inputs (`with input as` inside a comprehension), so the whole run costs a few processes.
//!
//! The second test needs no OPA: the fixtures make every rule fire at least once (otherwise the
//! parity check would be vacuous for that rule), and `clean/` makes none fire.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use json_patch::PatchOperation;
use serde::Deserialize;
use serde_json::{Value, json};
use syncguard::evaluate::{EvaluateOptions, build_inputs};
use syncguard::manifest::load_paths;
use syncguard::model::Resource;
use syncguard::policy::{Backend, LoadOptions, PolicySet, RuleOutcome, Verdict};

/// The generated module's package; `syncguard.__evaluation` is syncguard's own.
const PARITY_PACKAGE: &str = "syncguard.__parity";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// One directory of manifests and the input documents built from it.
struct Corpus {
    /// `tests/fixtures/manifests/hooks`, `examples/seed-incident`, ...
    name: String,
    resources: Vec<Resource>,
    inputs: Vec<Value>,
}

impl Corpus {
    /// `Job billing/billing-db-migrate (hooks/db-migrate.yaml)`.
    fn describe(&self, i: usize) -> String {
        let r = &self.resources[i];
        let name = if r.name.is_empty() {
            format!("{}*", r.generate_name.clone().unwrap_or_default())
        } else {
            r.name.clone()
        };
        let ns = r
            .namespace
            .as_deref()
            .map(|n| format!("{n}/"))
            .unwrap_or_default();
        let file = r
            .origin
            .as_ref()
            .map(|o| {
                let f = Path::new(&*o.file);
                f.strip_prefix(root()).unwrap_or(f).display().to_string()
            })
            .unwrap_or_default();
        format!("{} {ns}{name} ({file})", r.kind)
    }
}

fn subdirs(base: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(base)
        .unwrap_or_else(|e| panic!("{}: {e}", base.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every fixture directory and every example, each loaded and turned into input documents the
/// way `syncguard check` does it.
fn corpora() -> Vec<Corpus> {
    let mut dirs = subdirs(&root().join("tests/fixtures/manifests"));
    dirs.extend(subdirs(&root().join("tests/fixtures/field")));
    dirs.extend(subdirs(&root().join("examples")));
    dirs.into_iter()
        .map(|dir| {
            let loaded = load_paths(std::slice::from_ref(&dir));
            assert!(
                loaded.errors.is_empty(),
                "{}: {:?}",
                dir.display(),
                loaded.errors
            );
            assert!(
                !loaded.resources.is_empty(),
                "{}: no objects",
                dir.display()
            );
            let (inputs, _) = build_inputs(&loaded.resources, &options_of(&dir));
            let name = dir.strip_prefix(root()).unwrap().display().to_string();
            Corpus {
                name,
                resources: loaded.resources,
                inputs,
            }
        })
        .collect()
}

/// The options `syncguard check` gets for a fixture: a field fixture's `ARGS` file may name
/// `--argocd-version V` (tests/fixtures/field/README.md).
fn options_of(dir: &Path) -> EvaluateOptions {
    let mut options = EvaluateOptions::default();
    if let Ok(args) = fs::read_to_string(dir.join("ARGS")) {
        let words: Vec<&str> = args.split_whitespace().collect();
        for pair in words.windows(2) {
            if pair[0] == "--argocd-version" {
                options.argocd = pair[1].parse().unwrap();
            }
        }
    }
    options
}

/// `policies/`, or `$SYNCGUARD_PARITY_POLICIES` (e.g. a directory of rules still being written).
fn policies_dir() -> PathBuf {
    match std::env::var_os("SYNCGUARD_PARITY_POLICIES").filter(|p| !p.is_empty()) {
        Some(p) => root().join(p),
        None => root().join("policies"),
    }
}

fn load(interpreter_only: bool) -> PolicySet {
    PolicySet::load_with(
        &policies_dir(),
        &LoadOptions {
            interpreter_only,
            ..LoadOptions::default()
        },
    )
    .unwrap()
}

/// What one engine concluded for one rule and one input, in comparable form: canonical JSON
/// strings in sets, so ordering never matters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Outcome {
    #[default]
    Silent,
    Reported {
        violations: BTreeSet<String>,
        patches: BTreeSet<String>,
    },
    Failed(String),
}

impl Outcome {
    fn reported(violations: BTreeSet<String>, patches: BTreeSet<String>) -> Self {
        if violations.is_empty() {
            // syncguard drops patches without a violation; so does the comparison.
            Outcome::Silent
        } else {
            Outcome::Reported {
                violations,
                patches,
            }
        }
    }
}

/// Rule package name (`hook_job_deadline`) → outcome; rules absent from the map were silent.
type Outcomes = BTreeMap<String, Outcome>;

/// JSON with object keys sorted at every level (independent of serde_json's map order).
fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = serde_json::Map::new();
                for k in keys {
                    out.insert(k.clone(), sorted(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_json::to_string(&sorted(v)).unwrap()
}

fn package_name(rule_package: &str) -> &str {
    rule_package
        .strip_prefix("syncguard.rules.")
        .unwrap_or(rule_package)
}

fn patch_json(p: &PatchOperation) -> String {
    canonical(&serde_json::to_value(p).unwrap())
}

fn from_regorus(outcomes: Vec<RuleOutcome>) -> Outcomes {
    outcomes
        .into_iter()
        .map(|o| {
            let outcome = match o.verdict {
                Verdict::Reported {
                    violations,
                    patches,
                } => Outcome::reported(
                    violations
                        .iter()
                        .map(|v| {
                            let mut j = json!({"msg": v.msg});
                            if let Some(p) = &v.path {
                                j["path"] = json!(p);
                            }
                            if let Some(s) = v.severity {
                                j["severity"] = json!(s.as_str());
                            }
                            canonical(&j)
                        })
                        .collect(),
                    patches.iter().map(patch_json).collect(),
                ),
                Verdict::Failed(e) => Outcome::Failed(e),
            };
            (package_name(&o.rule.package).to_string(), outcome)
        })
        .filter(|(_, o)| *o != Outcome::Silent)
        .collect()
}

/// One rule's raw OPA result (`{"violations": [...], "patches": [...]}`) read the way syncguard
/// reads regorus's: msg/path/severity of each violation, each patch as an RFC 6902 operation.
fn from_opa_rule(v: &Value) -> Outcome {
    let items = |key: &str| -> Result<Vec<Value>, String> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(other) => Err(format!("`{key}` is not a set: {other}")),
        }
    };
    let read = || -> Result<Outcome, String> {
        let mut violations = BTreeSet::new();
        for item in items("violations")? {
            let mut j = json!({"msg": item.get("msg").cloned().unwrap_or(Value::Null)});
            for key in ["path", "severity"] {
                match item.get(key) {
                    None | Some(Value::Null) => {}
                    Some(x) => j[key] = x.clone(),
                }
            }
            violations.insert(canonical(&j));
        }
        let mut patches = BTreeSet::new();
        for item in items("patches")? {
            let op = PatchOperation::deserialize(&item)
                .map_err(|e| format!("not an RFC 6902 operation: {item} ({e})"))?;
            patches.insert(patch_json(&op));
        }
        Ok(Outcome::reported(violations, patches))
    };
    read().unwrap_or_else(Outcome::Failed)
}

/// A temporary OPA policy directory: the rule files (no tests, no config.yaml, which OPA would
/// load as data), `data.json` with the configuration as regorus sees it, and the generated module
/// that evaluates every rule for every input document of a batch.
struct OpaBundle {
    dir: tempfile::TempDir,
    rules: Vec<String>,
}

impl OpaBundle {
    fn new(policies: &PolicySet) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let src = policies.dir();
        for entry in fs::read_dir(src).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".rego") && !name.ends_with("_test.rego") {
                fs::copy(&path, dir.path().join(&name)).unwrap();
            }
        }
        let data = json!({"syncguard": {"config": policies.config().to_data()}});
        fs::write(dir.path().join("data.json"), data.to_string()).unwrap();

        let rules: Vec<String> = policies
            .rules()
            .iter()
            .map(|r| package_name(&r.package).to_string())
            .collect();
        // `with input as doc` inside the comprehension evaluates every rule once per document.
        // `patches` is optional in a rule package: undefined becomes the empty set.
        let mut module = format!(
            "# Generated by tests/opa_parity.rs.\npackage {PARITY_PACKAGE}\n\n\
             results := [r | some doc in input.docs; r := outcomes with input as doc]\n\n\
             outcomes := {{\n"
        );
        for n in &rules {
            writeln!(
                module,
                "\t\"{n}\": {{\"violations\": data.syncguard.rules.{n}.violations, \"patches\": patches_{n}}},"
            )
            .unwrap();
        }
        module.push_str("}\n");
        for n in &rules {
            write!(
                module,
                "\npatches_{n} := p if {{\n\tp := data.syncguard.rules.{n}.patches\n}} else := set()\n"
            )
            .unwrap();
        }
        fs::write(dir.path().join("__parity.rego"), module).unwrap();
        Self { dir, rules }
    }

    /// Runs `opa eval` on `docs` with `query`; returns the query's value and OPA's own
    /// evaluation time.
    fn eval(&self, opa: &Path, input: &Value, query: &str) -> Result<(Value, Duration), String> {
        let input_file = tempfile::NamedTempFile::new().unwrap();
        fs::write(input_file.path(), input.to_string()).unwrap();
        let out = Command::new(opa)
            .args(["eval", "--format", "json", "--metrics", "--data"])
            .arg(self.dir.path())
            .arg("--input")
            .arg(input_file.path())
            .arg(query)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", opa.display()))?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!(
                "opa eval failed ({}): {}{}",
                out.status,
                stdout.trim(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let v: Value =
            serde_json::from_str(&stdout).map_err(|e| format!("opa eval output: {e}: {stdout}"))?;
        let value = v
            .pointer("/result/0/expressions/0/value")
            .cloned()
            .ok_or_else(|| format!("opa eval: no result (undefined?): {stdout}"))?;
        let ns = v
            .pointer("/metrics/timer_rego_query_eval_ns")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        Ok((value, Duration::from_nanos(ns)))
    }

    /// Every rule for every input of a corpus, in one process. If OPA fails (a rule raised an
    /// error for some input), each (input, rule) is evaluated alone so the failure is pinned to
    /// where it happened, as syncguard's isolation pass does.
    fn evaluate(&self, opa: &Path, inputs: &[Value], timing: &mut OpaTiming) -> Vec<Outcomes> {
        let started = Instant::now();
        let batch = self.eval(
            opa,
            &json!({"docs": inputs}),
            &format!("data.{PARITY_PACKAGE}.results"),
        );
        timing.processes += 1;
        let result = match batch {
            Ok((Value::Array(results), eval)) if results.len() == inputs.len() => {
                timing.eval += eval;
                results.iter().map(|r| self.outcomes(r)).collect()
            }
            Ok((other, _)) => panic!("opa eval: unexpected result shape: {other}"),
            Err(batch_error) => {
                eprintln!("opa: batch failed, evaluating each input and rule alone: {batch_error}");
                inputs
                    .iter()
                    .map(|doc| self.evaluate_alone(opa, doc, timing))
                    .collect()
            }
        };
        timing.wall += started.elapsed();
        result
    }

    fn outcomes(&self, per_rule: &Value) -> Outcomes {
        self.rules
            .iter()
            .map(|n| {
                let outcome = per_rule.get(n).map_or_else(
                    || Outcome::Failed("missing from the OPA result".into()),
                    from_opa_rule,
                );
                (n.clone(), outcome)
            })
            .filter(|(_, o)| *o != Outcome::Silent)
            .collect()
    }

    fn evaluate_alone(&self, opa: &Path, doc: &Value, timing: &mut OpaTiming) -> Outcomes {
        self.rules
            .iter()
            .map(|n| {
                let query = format!(
                    "{{\"violations\": data.syncguard.rules.{n}.violations, \"patches\": data.{PARITY_PACKAGE}.patches_{n}}}"
                );
                timing.processes += 1;
                let outcome = match self.eval(opa, doc, &query) {
                    Ok((v, eval)) => {
                        timing.eval += eval;
                        from_opa_rule(&v)
                    }
                    Err(e) => Outcome::Failed(e),
                };
                (n.clone(), outcome)
            })
            .filter(|(_, o)| *o != Outcome::Silent)
            .collect()
    }
}

#[derive(Default)]
struct OpaTiming {
    /// Wall clock of the `opa eval` processes (start-up, parsing, compiling, evaluating).
    wall: Duration,
    /// OPA's own `timer_rego_query_eval_ns`.
    eval: Duration,
    processes: usize,
}

/// The `opa` binary to compare with: `$SYNCGUARD_OPA`, else `.tools/bin/opa`.
fn find_opa() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("SYNCGUARD_OPA").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        let p = if p.is_relative() { root().join(p) } else { p };
        assert!(
            p.is_file(),
            "SYNCGUARD_OPA={} is not a file (unset it to skip the OPA parity test)",
            p.display()
        );
        return Some(p);
    }
    Some(root().join(".tools/bin/opa")).filter(|p| p.is_file())
}

fn evaluate_regorus(set: &PolicySet, corpora: &[Corpus]) -> (Vec<Vec<Outcomes>>, Duration) {
    let mut spent = Duration::ZERO;
    let results = corpora
        .iter()
        .map(|c| {
            c.inputs
                .iter()
                .map(|input| {
                    let started = Instant::now();
                    let outcomes = set.evaluate(input);
                    spent += started.elapsed();
                    from_regorus(outcomes)
                })
                .collect()
        })
        .collect();
    (results, spent)
}

fn show_set(out: &mut String, label: &str, items: &BTreeSet<String>) {
    for item in items {
        writeln!(out, "      {label} {item}").unwrap();
    }
}

/// A readable account of how two outcomes differ.
fn diff(a_label: &str, a: &Outcome, b_label: &str, b: &Outcome) -> String {
    let mut out = String::new();
    let empty = BTreeSet::new();
    let parts = |o: &Outcome| -> (Option<String>, BTreeSet<String>, BTreeSet<String>) {
        match o {
            Outcome::Silent => (None, empty.clone(), empty.clone()),
            Outcome::Reported {
                violations,
                patches,
            } => (None, violations.clone(), patches.clone()),
            Outcome::Failed(e) => (Some(e.clone()), empty.clone(), empty.clone()),
        }
    };
    let (a_err, a_v, a_p) = parts(a);
    let (b_err, b_v, b_p) = parts(b);
    for (label, err) in [(a_label, a_err), (b_label, b_err)] {
        if let Some(e) = err {
            writeln!(out, "    {label} failed: {e}").unwrap();
        }
    }
    for (what, x, y) in [("violation", &a_v, &b_v), ("patch", &a_p, &b_p)] {
        let only_a: BTreeSet<String> = x.difference(y).cloned().collect();
        let only_b: BTreeSet<String> = y.difference(x).cloned().collect();
        show_set(&mut out, &format!("{what} only in {a_label}:"), &only_a);
        show_set(&mut out, &format!("{what} only in {b_label}:"), &only_b);
    }
    out
}

#[test]
fn regorus_and_opa_agree_on_every_rule_for_every_fixture_input() {
    let Some(opa) = find_opa() else {
        eprintln!(
            "skipping OPA parity: no opa binary. Run scripts/opa-parity.sh (builds OPA into \
             .tools/bin/opa), or set SYNCGUARD_OPA=/path/to/opa."
        );
        return;
    };
    let corpora = corpora();
    let vm = load(false);
    assert_eq!(vm.backend(), Backend::Vm, "{:?}", vm.notes());
    let interpreter = load(true);
    let bundle = OpaBundle::new(&vm);
    let rule_ids: BTreeMap<String, String> = vm
        .rules()
        .iter()
        .map(|r| (package_name(&r.package).to_string(), r.id.to_string()))
        .collect();

    // Objects Argo CD never applies are judged only by rules that say so (`meta.unapplied`,
    // policies/README.md): syncguard never evaluates the others on them, so neither side of the
    // comparison has an outcome for those pairs.
    let judges_unapplied: BTreeSet<String> = vm
        .rules()
        .iter()
        .filter(|r| r.unapplied)
        .map(|r| package_name(&r.package).to_string())
        .collect();
    let judged = |input: &Value, rule: &str| {
        let reason = input
            .pointer("/sync/ignored/reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        !matches!(reason, "skip" | "garbage-hook") || judges_unapplied.contains(rule)
    };

    let (vm_results, vm_time) = evaluate_regorus(&vm, &corpora);
    let (int_results, int_time) = evaluate_regorus(&interpreter, &corpora);
    let mut opa_timing = OpaTiming::default();
    let opa_results: Vec<Vec<Outcomes>> = corpora
        .iter()
        .map(|c| bundle.evaluate(&opa, &c.inputs, &mut opa_timing))
        .collect();

    let mut differences = 0usize;
    let mut report = String::new();
    let mut fired: BTreeMap<String, usize> = BTreeMap::new();
    let mut compared = 0usize;
    for (ci, corpus) in corpora.iter().enumerate() {
        for i in 0..corpus.inputs.len() {
            let o = &opa_results[ci][i];
            for (backend, results) in [
                ("regorus-vm", &vm_results),
                ("regorus-interp", &int_results),
            ] {
                let r = &results[ci][i];
                for rule in &bundle.rules {
                    let ro = r.get(rule).cloned().unwrap_or_default();
                    let oo = if judged(&corpus.inputs[i], rule) {
                        o.get(rule).cloned().unwrap_or_default()
                    } else {
                        Outcome::default()
                    };
                    compared += 1;
                    if ro != oo || matches!(ro, Outcome::Failed(_)) {
                        differences += 1;
                        writeln!(
                            report,
                            "  {} — {} ({rule}), {backend} vs opa:\n{}",
                            corpus.describe(i),
                            rule_ids[rule],
                            diff(backend, &ro, "opa", &oo)
                        )
                        .unwrap();
                    }
                }
            }
            for rule in o.keys().filter(|rule| judged(&corpus.inputs[i], rule)) {
                *fired.entry(rule.clone()).or_default() += 1;
            }
        }
    }

    let inputs: usize = corpora.iter().map(|c| c.inputs.len()).sum();
    let rules = bundle.rules.len();
    println!(
        "corpora: {}",
        corpora
            .iter()
            .map(|c| format!("{} ({})", c.name, c.inputs.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut by_id: Vec<(&String, usize)> = rule_ids
        .iter()
        .map(|(n, id)| (id, fired.get(n).copied().unwrap_or(0)))
        .collect();
    by_id.sort();
    println!(
        "inputs each rule reports on (OPA): {}",
        by_id
            .iter()
            .map(|(id, n)| format!("{id} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "timing over {inputs} inputs: regorus vm {:.1} ms, regorus interpreter {:.1} ms (sequential \
         PolicySet::evaluate, {} build); opa {:.1} ms wall in {} `opa eval` processes, of which \
         {:.1} ms query evaluation (timer_rego_query_eval_ns)",
        ms(vm_time),
        ms(int_time),
        if cfg!(debug_assertions) {
            "debug"
        } else {
            "release"
        },
        ms(opa_timing.wall),
        opa_timing.processes,
        ms(opa_timing.eval),
    );
    if differences > 0 {
        println!("differences:\n{report}");
    }
    println!(
        "OPA parity: {inputs} inputs x {rules} rules ({compared} comparisons over 2 regorus \
         backends), {differences} differences"
    );
    assert_eq!(differences, 0, "regorus and OPA disagree:\n{report}");
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[test]
fn the_fixtures_make_every_rule_fire_and_clean_makes_none_fire() {
    let corpora = corpora();
    let set = load(false);
    let (results, _) = evaluate_regorus(&set, &corpora);
    let mut fired: BTreeSet<String> = BTreeSet::new();
    let mut table = String::new();
    for (c, per_input) in corpora.iter().zip(&results) {
        for (i, outcomes) in per_input.iter().enumerate() {
            for (rule, outcome) in outcomes {
                assert!(
                    !matches!(outcome, Outcome::Failed(_)),
                    "{}: {rule}: {outcome:?}",
                    c.describe(i)
                );
                fired.insert(rule.clone());
            }
            let ids: Vec<String> = set
                .rules()
                .iter()
                .filter(|r| outcomes.contains_key(package_name(&r.package)))
                .map(|r| r.id.to_string())
                .collect();
            writeln!(table, "  {:<70} {}", c.describe(i), ids.join(" ")).unwrap();
        }
        if c.name.ends_with("/clean") || c.name == "examples/clean-app" {
            let noisy: Vec<String> = per_input
                .iter()
                .enumerate()
                .filter(|(_, o)| !o.is_empty())
                .map(|(i, o)| format!("{}: {:?}", c.describe(i), o.keys()))
                .collect();
            assert!(noisy.is_empty(), "{} must stay clean: {noisy:#?}", c.name);
        }
    }
    println!("rules reported per object (regorus):\n{table}");
    let silent: Vec<String> = set
        .rules()
        .iter()
        .filter(|r| !fired.contains(package_name(&r.package)))
        .map(|r| format!("{} ({})", r.id, r.package))
        .collect();
    assert!(
        silent.is_empty(),
        "no fixture makes these rules fire, so OPA parity says nothing about them: {silent:?}. \
         Add a manifest to tests/fixtures/manifests/ and list it in its README.md."
    );
}

/// The bytecode VM (the default backend) and the tree-walking interpreter (which `syncguard test`
/// uses, since the VM compiler does not support `with`) must agree on every fixture input — with
/// or without an OPA binary. They have disagreed on `else` after an undefined lookup (SG105
/// "PreSynk", SG106): the rules' own tests pass under the interpreter, so only a comparison like
/// this one, run by plain `cargo test`, catches that class where no OPA is installed.
#[test]
fn the_bytecode_vm_and_the_interpreter_agree_on_every_fixture_input() {
    let corpora = corpora();
    let vm = load(false);
    assert_eq!(vm.backend(), Backend::Vm, "{:?}", vm.notes());
    let interpreter = load(true);
    let (vm_results, _) = evaluate_regorus(&vm, &corpora);
    let (int_results, _) = evaluate_regorus(&interpreter, &corpora);
    let mut report = String::new();
    for (ci, corpus) in corpora.iter().enumerate() {
        for i in 0..corpus.inputs.len() {
            let (v, t) = (&vm_results[ci][i], &int_results[ci][i]);
            let rules: BTreeSet<&String> = v.keys().chain(t.keys()).collect();
            for rule in rules {
                let vo = v.get(rule).cloned().unwrap_or_default();
                let to = t.get(rule).cloned().unwrap_or_default();
                if vo != to {
                    writeln!(
                        report,
                        "  {} ({rule}):\n{}",
                        corpus.describe(i),
                        diff("regorus-vm", &vo, "regorus-interp", &to)
                    )
                    .unwrap();
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "the regorus backends disagree:\n{report}"
    );
}

/// `meta.kinds` and `meta.hooks_only` only save time: evaluating every rule for every object
/// must give the same outcomes on every fixture. A rule whose declaration is narrower than what
/// it reports fails here.
#[test]
fn the_kind_and_hook_dispatch_changes_no_outcome() {
    let corpora = corpora();
    let dispatched = load(false);
    let everything = PolicySet::load_with(
        &policies_dir(),
        &LoadOptions {
            dispatch: false,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    let (a, _) = evaluate_regorus(&dispatched, &corpora);
    let (b, _) = evaluate_regorus(&everything, &corpora);
    let mut differences = Vec::new();
    for (c, (xs, ys)) in corpora.iter().zip(a.iter().zip(&b)) {
        for (i, (x, y)) in xs.iter().zip(ys).enumerate() {
            if x != y {
                differences.push(format!(
                    "{}: dispatched {:?}, every rule {:?}",
                    c.describe(i),
                    x.keys().collect::<Vec<_>>(),
                    y.keys().collect::<Vec<_>>()
                ));
            }
        }
    }
    assert!(differences.is_empty(), "{differences:#?}");
}
