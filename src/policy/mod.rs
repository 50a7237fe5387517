//! The Rego rules: load a policy directory once, evaluate every rule against each resource's input
//! document, and turn what the rules say into [`Finding`]s.
//!
//! Rust owns facts, Rego owns judgement (DESIGN.md §1, §3). A rule is a package
//! `syncguard.rules.<name>` exporting `meta` (id, title, severity, action, why, docs),
//! `violations` (a set of `{"msg", "path"?}`) and optionally `patches` (a set of RFC 6902 ops).
//! [`PolicySet::load`] reads `*.rego` and `config.yaml`, validates all of it (a broken policy
//! directory never becomes the active one), reads each rule's `meta` once, and prepares one
//! immutable evaluator that is shared by all threads (it sits in an `Arc` and is swapped whole on
//! hot reload). [`PolicySet::evaluate`] runs every rule once per input; [`PolicySet::findings_for`]
//! applies the configuration — actions, namespace overrides, exemptions — and produces findings.
//!
//! # Exemptions
//!
//! - `exempt_namespaces` (exact names or `prefix*`): every finding in such a namespace is
//!   [`crate::finding::Status::Skipped`] with the pattern as the reason.
//! - Annotation `syncguard.dev/skip: "SG101,SG204"` (comma separated rule IDs; `all` or `*` for
//!   every rule) is honoured only when `annotation_exemptions` is true **and** a non-blank
//!   `syncguard.dev/skip-reason` annotation is present; the reason becomes the skip reason.
//! - A skip annotation *without* a reason is not honoured (the findings stay open) and produces
//!   its own finding, rule [`EXEMPTION_WITHOUT_REASON`] (`SG000`, "exemption without a reason",
//!   severity low, default action warn; configurable like any rule). Exemptions are meant to be
//!   reviewable: an unexplained one is a finding in itself.
//!
//! Actions set to `off` drop a rule's findings, including its policy errors.

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod builtin;
mod config;
mod engine;
pub mod reload;
mod resolve;
mod source;
pub mod test_runner;
pub mod watch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rayon::prelude::*;
use regorus::utils::limits::ExecutionTimerConfig;
use regorus::{Engine, Value as RegoValue};
use serde::Serialize;
use serde_json::{Value, json};
use thiserror::Error;

pub use config::{ActionMap, Config, ConfigError, NamespacePattern};
pub use engine::{Backend, Verdict, Violation};

use crate::finding::{Action, Finding, RuleId, Severity};
use crate::model::Resource;
use engine::{Evaluator, Limits, Slot};
use source::{CONFIG_FILE, parse_diagnostic};

/// Annotation listing the rule IDs an object is exempted from.
pub const SKIP_ANNOTATION: &str = "syncguard.dev/skip";
/// Annotation explaining why; without it the skip annotation is not honoured.
pub const SKIP_REASON_ANNOTATION: &str = "syncguard.dev/skip-reason";
/// The built-in rule reporting a skip annotation without a reason.
pub const EXEMPTION_WITHOUT_REASON: &str = "SG000";

/// Why a policy directory cannot be loaded. Every variant names the file (and line when known);
/// the CLI exits 2 on it, the webhook keeps its last good policy set.
#[derive(Debug, Error)]
pub enum PolicyError {
    /// A file or the directory could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path that failed.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// Rego that does not parse or compile (syntax, unknown function, rule conflicts...).
    #[error("{file}:{line}:{column}: {message}")]
    Rego {
        /// The `.rego` file.
        file: String,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// regorus's message.
        message: String,
    },
    /// A regorus error without a source position, attributed to the file being processed.
    #[error("{file}: {message}")]
    Engine {
        /// The file (or directory) being processed.
        file: String,
        /// regorus's message.
        message: String,
    },
    /// `config.yaml` is invalid.
    #[error("{}{}: {message}", file.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    Config {
        /// The config file.
        file: PathBuf,
        /// 1-based line, when known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A rule package that breaks the contract (missing or invalid `meta`, no `violations`,
    /// duplicate IDs, a misplaced package).
    #[error("{file}: package {package}: {message}")]
    Rule {
        /// The file declaring the package.
        file: String,
        /// The package, e.g. `syncguard.rules.hook_deadline`.
        package: String,
        /// What is wrong.
        message: String,
    },
    /// The directory holds no rule package at all (probably the wrong directory).
    #[error(
        "{}: no rule packages (expected *.rego files declaring `package syncguard.rules.<name>`, \
         or only a config.yaml to use the built-in rules with that configuration)",
        dir.display()
    )]
    NoRules {
        /// The directory.
        dir: PathBuf,
    },
}

impl PolicyError {
    /// A short, stable label for metrics (`policy_reload_failures_total{reason=...}`).
    pub fn metric_label(&self) -> &'static str {
        match self {
            PolicyError::Io { .. } => "io",
            PolicyError::Rego { .. } | PolicyError::Engine { .. } => "rego",
            PolicyError::Config { .. } => "config",
            PolicyError::Rule { .. } => "rule",
            PolicyError::NoRules { .. } => "no_rules",
        }
    }

    /// Maps a regorus error raised while processing `file` to a positioned error when possible.
    fn from_regorus(file: &str, err: &anyhow::Error) -> Self {
        let rendered = err.to_string();
        match parse_diagnostic(&rendered) {
            Some(d) => PolicyError::Rego {
                file: d.file,
                line: d.line,
                column: d.column,
                message: d.message,
            },
            None => PolicyError::Engine {
                file: file.to_string(),
                message: rendered.trim().replace('\n', " "),
            },
        }
    }
}

/// A rule's metadata, read once from its `meta` at load time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleMeta {
    /// `meta.id`, unique across the directory.
    pub id: RuleId,
    /// `meta.title`.
    pub title: String,
    /// `meta.severity`.
    pub severity: Severity,
    /// `meta.action`: the default action before configuration overrides.
    pub action: Action,
    /// `meta.why`: the failure the rule prevents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// `meta.docs`: where the rule is documented.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub docs: Option<String>,
    /// `meta.operations`: which admission operations the rule judges (default CREATE and
    /// UPDATE). `syncguard check` and the audit run the rules that judge CREATE or UPDATE.
    #[serde(skip_serializing_if = "Operations::is_default")]
    pub operations: Operations,
    /// `meta.kinds`: the only `kind`s the rule can report on, when given. Objects of other
    /// kinds never evaluate it (a dispatch, not a filter: it only saves time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<String>>,
    /// `meta.hooks_only`: the rule can only report on hooks (`input.sync.is_hook`); other
    /// objects never evaluate it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub hooks_only: bool,
    /// `meta.unapplied`: the rule also judges objects Argo CD never applies (`hook: Skip`, hooks
    /// with no type Argo CD runs, such as Helm `test` hooks). No other rule sees them.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unapplied: bool,
    /// The package, e.g. `syncguard.rules.hook_deadline` (empty for built-in pseudo-rules).
    pub package: String,
    /// The non-test files declaring the package.
    pub files: Vec<String>,
}

/// The admission operations a rule judges (`meta.operations`).
///
/// DELETE is opt-in: the webhook admits deletions without evaluating anything unless some rule
/// of the set declares `"operations": ["DELETE", ...]` — then DELETE requests are evaluated with
/// the object being deleted (`oldObject`) as `input.resource` and `input.operation == "DELETE"`,
/// and only the rules that declared DELETE can report on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Operations {
    /// Judges CREATE requests.
    pub create: bool,
    /// Judges UPDATE requests.
    pub update: bool,
    /// Judges DELETE requests.
    pub delete: bool,
}

impl Default for Operations {
    fn default() -> Self {
        Self {
            create: true,
            update: true,
            delete: false,
        }
    }
}

impl Operations {
    /// True for the default (CREATE and UPDATE).
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }

    /// Whether the rule judges an input whose `input.operation` is `operation`: `CREATE`,
    /// `UPDATE` or `DELETE` at admission; anything else (`CHECK`, `AUDIT`) is an object about
    /// to be applied or already live, judged by CREATE/UPDATE rules.
    pub fn includes(&self, operation: &str) -> bool {
        match operation {
            "CREATE" => self.create,
            "UPDATE" => self.update,
            "DELETE" => self.delete,
            _ => self.create || self.update,
        }
    }

    fn parse(value: Option<&Value>) -> Result<Self, String> {
        let Some(value) = value else {
            return Ok(Self::default());
        };
        let list = value.as_array().filter(|l| !l.is_empty()).ok_or_else(|| {
            format!(
                "meta.operations must be a non-empty list of CREATE, UPDATE, DELETE; got {value}"
            )
        })?;
        let mut ops = Self {
            create: false,
            update: false,
            delete: false,
        };
        for op in list {
            match op.as_str() {
                Some("CREATE") => ops.create = true,
                Some("UPDATE") => ops.update = true,
                Some("DELETE") => ops.delete = true,
                _ => {
                    return Err(format!(
                        "meta.operations: unknown operation {op} (use CREATE, UPDATE, DELETE)"
                    ));
                }
            }
        }
        Ok(ops)
    }
}

/// What one rule concluded about one input document.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleOutcome {
    /// The rule.
    pub rule: Arc<RuleMeta>,
    /// Its violations and patches, or why it failed.
    pub verdict: Verdict,
}

/// Knobs for [`PolicySet::load_with`].
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Wall-clock budget for evaluating all rules against one resource. The default, 250 ms, is
    /// ~5,000× a normal evaluation: only a runaway rule hits it, and the webhook (timeout ≤ 5 s)
    /// still answers in time even after the isolation pass (≤ 2× the deadline).
    pub deadline: Duration,
    /// Bytecode instruction cap per evaluation (VM backend only), a deterministic backstop next to
    /// the wall-clock deadline. regorus defaults to 25,000, too low for large objects; 50 M is
    /// about half a second of VM work here, so the deadline normally fires first.
    pub max_instructions: usize,
    /// Use the interpreter even when the rules compile to the VM (debugging, differential tests).
    pub interpreter_only: bool,
    /// Parse the `*_test.rego` files too, so that a syntax error in a test fails the load. Off
    /// when the caller runs the tests anyway ([`test_runner::run_tests`] parses them itself):
    /// the test files are the larger half of a policy directory and the slower one to parse.
    pub parse_tests: bool,
    /// Evaluate for each object only the rules whose `meta.kinds` and `meta.hooks_only` admit
    /// it (the default). Off: every rule for every object, to check that the dispatch changes
    /// no outcome.
    pub dispatch: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            deadline: Duration::from_millis(250),
            max_instructions: 50_000_000,
            interpreter_only: false,
            parse_tests: true,
            dispatch: true,
        }
    }
}

/// A loaded, validated, prepared policy directory. Immutable and `Send + Sync`: share it in an
/// `Arc` and swap the whole set on reload.
pub struct PolicySet {
    dir: PathBuf,
    rules: Vec<Arc<RuleMeta>>,
    config: Config,
    evaluator: Evaluator,
    notes: Vec<String>,
    exemption_rule: Arc<RuleMeta>,
}

impl std::fmt::Debug for PolicySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySet")
            .field("dir", &self.dir)
            .field(
                "rules",
                &self.rules.iter().map(|r| &r.id).collect::<Vec<_>>(),
            )
            .field("backend", &self.evaluator.backend())
            .finish_non_exhaustive()
    }
}

impl PolicySet {
    /// Loads `dir` with [`LoadOptions::default`].
    pub fn load(dir: &Path) -> Result<PolicySet, PolicyError> {
        Self::load_with(dir, &LoadOptions::default())
    }

    /// Loads every `*.rego` file and `config.yaml` at the top level of `dir`; a directory with
    /// only a `config.yaml` loads the built-in rules with that configuration.
    ///
    /// Test files (`*_test.rego`) are parsed, so a syntax error anywhere fails the load, but they
    /// are not part of the evaluator: tests use `with`, which the VM cannot run, and evaluating
    /// them per resource would be waste.
    pub fn load_with(dir: &Path, options: &LoadOptions) -> Result<PolicySet, PolicyError> {
        Self::load_files(source::read_dir(dir)?, dir, options)
    }

    /// Loads a policy source: the built-in files from the binary (nothing is written to disk),
    /// a directory, or a directory laid over the built-in files ([`builtin::PolicySource`]).
    pub fn load_source(
        source: &builtin::PolicySource,
        options: &LoadOptions,
    ) -> Result<PolicySet, PolicyError> {
        Self::load_files(source.files()?, &source.label(), options)
    }

    /// Loads files already read; `dir` names the set in messages.
    fn load_files(
        files: source::PolicyDir,
        dir: &Path,
        options: &LoadOptions,
    ) -> Result<PolicySet, PolicyError> {
        let (config, config_file) = match &files.config {
            Some((path, text)) => {
                let config = Config::parse(text).map_err(|e| PolicyError::Config {
                    file: path.clone(),
                    line: e.line,
                    message: e.message,
                })?;
                (config, path.clone())
            }
            None => (Config::default(), dir.join(CONFIG_FILE)),
        };

        let mut engine = Engine::new();
        let mut tests = Engine::new();
        for f in &files.rego {
            // The built-in tests are not parsed either: `cargo test` ran them when the binary was
            // built, and they are the larger half of the built-in files.
            if f.is_test && (!options.parse_tests || f.builtin) {
                continue;
            }
            let target = if f.is_test { &mut tests } else { &mut engine };
            target
                .add_policy(f.label.clone(), f.text.clone())
                .map_err(|e| PolicyError::from_regorus(&f.label, &e))?;
        }

        let packages = rule_packages(&engine, dir)?;
        let mut slots = Vec::with_capacity(packages.len());
        for (name, files) in &packages {
            let declares = |rule: &str| {
                files
                    .iter()
                    .any(|f| engine.has_declared_rule_rooted_at(f, rule).unwrap_or(false))
            };
            let first = files.first().cloned().unwrap_or_default();
            let package = format!("syncguard.rules.{name}");
            if !declares("meta") {
                return Err(rule_error(&first, &package, MISSING_META));
            }
            if !declares("violations") {
                return Err(rule_error(
                    &first,
                    &package,
                    "declares no `violations` (a set of {\"msg\": ..., \"path\": ...})",
                ));
            }
            slots.push(Slot::new(name.clone(), declares("patches")));
        }

        let data = json!({"syncguard": {"config": config.to_data()}});
        let data_value = RegoValue::from(data);
        let config_label = config_file.display().to_string();
        engine
            .add_data(data_value.clone())
            .map_err(|e| PolicyError::from_regorus(&config_label, &e))?;
        engine.set_strict_builtin_errors(false);

        // Reading `meta` is the first evaluation: it prepares the engine (analysis, scheduling),
        // which also reports compile-time problems such as unknown functions, with positions.
        engine.set_input(RegoValue::new_object());
        engine.set_execution_timer_config(ExecutionTimerConfig {
            limit: Duration::from_secs(5),
            check_interval: std::num::NonZeroU32::MIN,
        });
        let mut rules: Vec<Arc<RuleMeta>> = Vec::with_capacity(packages.len());
        let mut seen: BTreeMap<RuleId, String> = BTreeMap::new();
        for (name, files) in &packages {
            let first = files.first().cloned().unwrap_or_default();
            let package = format!("syncguard.rules.{name}");
            let value = engine
                .eval_rule(format!("data.{package}.meta"))
                .map_err(|e| PolicyError::from_regorus(&first, &e))?;
            let meta = read_meta(&value, &package, files)
                .map_err(|message| rule_error(&first, &package, &message))?;
            if meta.id.as_str() == EXEMPTION_WITHOUT_REASON {
                return Err(rule_error(
                    &first,
                    &package,
                    "meta.id SG000 is reserved for \"exemption without a reason\"",
                ));
            }
            if let Some(other) = seen.insert(meta.id.clone(), first.clone()) {
                return Err(rule_error(
                    &first,
                    &package,
                    &format!("meta.id {} is already used by {other}", meta.id),
                ));
            }
            rules.push(Arc::new(meta));
        }

        // The aggregate rules come last: which rules each object evaluates depends on the
        // metas (`kinds`, `hooks_only`).
        let restrictions: Vec<engine::Restriction> = rules
            .iter()
            .map(|r| engine::Restriction {
                kinds: r.kinds.clone(),
                hooks_only: r.hooks_only,
                unapplied: r.unapplied,
            })
            .collect();
        let dispatch = engine::Dispatch::new(&restrictions, options.dispatch);
        let generated = format!("<generated>/{}.rego", engine::AGGREGATE_PACKAGE);
        engine
            .add_policy(
                generated.clone(),
                engine::aggregate_module(&slots, &dispatch),
            )
            .map_err(|e| PolicyError::from_regorus(&generated, &e))?;

        for (id, line) in config.mentioned_rules() {
            if id.as_str() != EXEMPTION_WITHOUT_REASON && !seen.contains_key(id) {
                let known: Vec<&str> = seen.keys().map(RuleId::as_str).collect();
                return Err(PolicyError::Config {
                    file: config_file.clone(),
                    line: Some(line),
                    message: format!(
                        "unknown rule {id} (rules in {}: {}, SG000)",
                        dir.display(),
                        known.join(", ")
                    ),
                });
            }
        }

        let limits = Limits {
            deadline: options.deadline,
            max_instructions: options.max_instructions,
        };
        let (evaluator, note) = Evaluator::new(
            engine,
            data_value,
            slots,
            dispatch,
            limits,
            !options.interpreter_only,
        );
        Ok(PolicySet {
            dir: dir.to_path_buf(),
            rules,
            config,
            evaluator,
            notes: note.into_iter().collect(),
            exemption_rule: Arc::new(exemption_rule()),
        })
    }

    /// The directory the set was loaded from.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The rules, sorted by package name.
    pub fn rules(&self) -> &[Arc<RuleMeta>] {
        &self.rules
    }

    /// The validated configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Which regorus evaluator is in use.
    pub fn backend(&self) -> Backend {
        self.evaluator.backend()
    }

    /// Non-fatal things worth telling an operator about the load (e.g. the interpreter fallback).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Evaluates every rule once against one input document (DESIGN.md §3). Returns an outcome
    /// for each rule that reported at least one violation or failed; rules with nothing to say
    /// are omitted. Never panics and never drops a failure: a rule that errors, times out or
    /// returns malformed output becomes [`Verdict::Failed`].
    pub fn evaluate(&self, input: &Value) -> Vec<RuleOutcome> {
        self.evaluate_parts(input, &[])
    }

    /// [`PolicySet::evaluate`] of `input` with `parts` added as top-level members (`"resource"`
    /// → the object, ...): the same document, but the parts go straight into the policy
    /// engine's values instead of being copied into `input` first. The webhook hands a review's
    /// object over this way, so the largest tree of a review exists once as JSON and once as
    /// the engine's input, not twice as JSON.
    pub fn evaluate_parts(&self, input: &Value, parts: &[(&str, &Value)]) -> Vec<RuleOutcome> {
        let input = match rego_input(input, parts) {
            Ok(v) => v,
            Err(e) => {
                let message = format!("the input document cannot be converted for Rego: {e}");
                return self
                    .rules
                    .iter()
                    .map(|rule| RuleOutcome {
                        rule: rule.clone(),
                        verdict: Verdict::Failed(message.clone()),
                    })
                    .collect();
            }
        };
        let operation = input_operation(&input);
        self.evaluator
            .evaluate(&input)
            .into_iter()
            .filter_map(|(i, verdict)| {
                self.rules.get(i).map(|rule| RuleOutcome {
                    rule: rule.clone(),
                    verdict,
                })
            })
            // A rule only reports on the operations it declared (`meta.operations`).
            .filter(|o| o.rule.operations.includes(&operation))
            .collect()
    }

    /// True when some rule declared `"DELETE"` in `meta.operations`; otherwise the webhook
    /// admits deletions without evaluating them.
    pub fn judges_deletes(&self) -> bool {
        self.rules.iter().any(|r| r.operations.delete)
    }

    /// [`PolicySet::evaluate`] over many inputs on all cores (rayon's global pool); results are
    /// in input order.
    pub fn evaluate_many(&self, inputs: &[Value]) -> Vec<Vec<RuleOutcome>> {
        inputs
            .par_iter()
            .map(|input| self.evaluate(input))
            .collect()
    }

    /// Evaluates `input` (the document built for `resource`) and resolves the outcomes into
    /// findings: effective actions, exemptions, `SG000`, source locations and minimal patches.
    pub fn findings_for(&self, resource: &Resource, input: &Value) -> Vec<Finding> {
        self.findings_from(resource, self.evaluate(input))
    }

    /// [`PolicySet::findings_for`] of `input` with `parts` added (see
    /// [`PolicySet::evaluate_parts`]).
    pub fn findings_for_parts(
        &self,
        resource: &Resource,
        input: &Value,
        parts: &[(&str, &Value)],
    ) -> Vec<Finding> {
        self.findings_from(resource, self.evaluate_parts(input, parts))
    }

    /// Resolves outcomes already computed (e.g. by [`PolicySet::evaluate_many`]) into findings;
    /// see [`PolicySet::findings_for`].
    pub fn findings_from(&self, resource: &Resource, outcomes: Vec<RuleOutcome>) -> Vec<Finding> {
        resolve::findings(&self.config, &self.exemption_rule, resource, outcomes)
    }
}

/// `input` as the policy engine's value, with `parts` set as top-level members (replacing
/// members of the same name); exactly the conversion of `input` with the parts inserted.
fn rego_input(input: &Value, parts: &[(&str, &Value)]) -> Result<RegoValue, String> {
    let mut value = to_rego(input);
    if parts.is_empty() {
        return Ok(value);
    }
    let object = value
        .as_object_mut()
        .map_err(|_| "the input document is not an object".to_string())?;
    for (key, part) in parts {
        object.insert(RegoValue::from(*key), to_rego(part));
    }
    Ok(value)
}

/// `v` as the policy engine's value: what deserializing it into one gives (numbers as the
/// deserializer reads them: unsigned, then signed, then floating point), built straight from
/// the tree instead of through serde's visitor, which costs a map insert per member.
fn to_rego(v: &Value) -> RegoValue {
    match v {
        Value::Null => RegoValue::Null,
        Value::Bool(b) => RegoValue::from(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => RegoValue::from(u),
            (None, Some(i), _) => RegoValue::from(i),
            (None, None, Some(f)) => RegoValue::from(f),
            (None, None, None) => RegoValue::Undefined,
        },
        Value::String(s) => RegoValue::from(s.as_str()),
        Value::Array(items) => RegoValue::from(items.iter().map(to_rego).collect::<Vec<_>>()),
        Value::Object(map) if map.is_empty() => RegoValue::new_object(),
        Value::Object(map) => RegoValue::from(
            map.iter()
                .map(|(k, v)| (RegoValue::from(k.as_str()), to_rego(v)))
                .collect::<std::collections::BTreeMap<_, _>>(),
        ),
    }
}

/// `input.operation` as a string (`CHECK` when absent).
fn input_operation(input: &RegoValue) -> String {
    match &input[&RegoValue::from("operation")] {
        RegoValue::String(s) => s.to_string(),
        _ => "CHECK".to_string(),
    }
}

const MISSING_META: &str = "declares no `meta` (every rule exports meta := {\"id\": \"SG...\", \
     \"title\": ..., \"severity\": ..., \"action\": ..., \"why\": ..., \"docs\": ...})";

fn rule_error(file: &str, package: &str, message: &str) -> PolicyError {
    PolicyError::Rule {
        file: file.to_string(),
        package: package.to_string(),
        message: message.to_string(),
    }
}

/// Rule packages (`syncguard.rules.<name>`) declared by non-test files, with their files,
/// sorted by name.
fn rule_packages(
    engine: &Engine,
    dir: &Path,
) -> Result<BTreeMap<String, Vec<String>>, PolicyError> {
    let modules = engine
        .get_policy_package_components()
        .map_err(|e| PolicyError::from_regorus(&dir.display().to_string(), &e))?;
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for m in modules {
        let c: Vec<&str> = m.components.iter().map(String::as_str).collect();
        let package = c.join(".");
        match c.as_slice() {
            ["syncguard", "rules", name] => {
                if !is_identifier(name) {
                    return Err(rule_error(
                        &m.source_file,
                        &package,
                        "rule package names must be identifiers (letters, digits, `_`)",
                    ));
                }
                out.entry((*name).to_string())
                    .or_default()
                    .push(m.source_file);
            }
            ["syncguard", "rules", ..] => {
                return Err(rule_error(
                    &m.source_file,
                    &package,
                    "rules are exactly `syncguard.rules.<name>`; put shared helpers in another \
                     package (e.g. `syncguard.lib.<name>`)",
                ));
            }
            ["syncguard", "__evaluation", ..] => {
                return Err(rule_error(
                    &m.source_file,
                    &package,
                    "this package name is reserved for syncguard's generated module",
                ));
            }
            _ => {}
        }
    }
    if out.is_empty() {
        return Err(PolicyError::NoRules {
            dir: dir.to_path_buf(),
        });
    }
    Ok(out)
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Validates a rule's `meta` value.
fn read_meta(value: &RegoValue, package: &str, files: &[String]) -> Result<RuleMeta, String> {
    let json = match value {
        RegoValue::Undefined => return Err(MISSING_META.to_string()),
        v => serde_json::to_value(v).map_err(|e| e.to_string())?,
    };
    let Some(obj) = json.as_object() else {
        return Err(format!("`meta` must be an object, got {json}"));
    };
    let text = |key: &str, required: bool| -> Result<Option<String>, String> {
        match obj.get(key) {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(Some(s.clone())),
            None if !required => Ok(None),
            Some(other) => Err(format!(
                "meta.{key} must be a non-empty string, got {other}"
            )),
            None => Err(format!("meta.{key} is missing")),
        }
    };
    let required = |key: &str| -> Result<String, String> {
        text(key, true)?.ok_or_else(|| format!("meta.{key} is missing"))
    };
    let id = required("id")?;
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(format!(
            "meta.id `{id}` must contain only letters, digits, `-` and `_`"
        ));
    }
    let title = required("title")?;
    let severity = required("severity")?
        .parse::<Severity>()
        .map_err(|e| format!("meta.severity: {e}"))?;
    let action = required("action")?
        .parse::<Action>()
        .map_err(|e| format!("meta.action: {e}"))?;
    Ok(RuleMeta {
        id: RuleId::new(id),
        title,
        severity,
        action,
        why: text("why", false)?,
        docs: text("docs", false)?,
        operations: Operations::parse(obj.get("operations"))?,
        kinds: match obj.get("kinds") {
            None => None,
            Some(Value::Array(items)) if !items.is_empty() => Some(
                items
                    .iter()
                    .map(|k| match k {
                        Value::String(s) if !s.is_empty() => Ok(s.clone()),
                        other => Err(format!(
                            "meta.kinds must be a non-empty list of kind names, got {other}"
                        )),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(other) => {
                return Err(format!(
                    "meta.kinds must be a non-empty list of kind names, got {other}"
                ));
            }
        },
        hooks_only: match obj.get("hooks_only") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(format!("meta.hooks_only must be a boolean, got {other}")),
        },
        unapplied: match obj.get("unapplied") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => return Err(format!("meta.unapplied must be a boolean, got {other}")),
        },
        package: package.to_string(),
        files: files.to_vec(),
    })
}

fn exemption_rule() -> RuleMeta {
    RuleMeta {
        id: RuleId::new(EXEMPTION_WITHOUT_REASON),
        title: "exemption without a reason".into(),
        severity: Severity::Low,
        action: Action::Warn,
        why: Some(
            "Exemptions must be reviewable: a `syncguard.dev/skip` annotation without a \
             `syncguard.dev/skip-reason` hides findings with no record of who accepted the risk \
             or why, so it is not honoured."
                .into(),
        ),
        docs: None,
        operations: Operations::default(),
        kinds: None,
        hooks_only: false,
        unapplied: false,
        package: String::new(),
        files: Vec::new(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde::Deserialize;

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn a_policy_set_can_be_shared_across_threads() {
        assert_send_sync::<PolicySet>();
    }

    /// The direct conversion gives what deserializing gives, on edge values and on the input
    /// document of every object of the bundled examples and on recorded AdmissionReviews.
    #[test]
    fn the_direct_conversion_equals_deserializing() {
        let mut docs: Vec<Value> = vec![
            serde_json::json!(null),
            serde_json::json!({}),
            serde_json::json!([]),
            serde_json::json!({"b": 1, "a": [true, false, null], "": {"x": {}}}),
            serde_json::json!([u64::MAX, i64::MIN, -1, 0, 1.5, 1e300, -2.5e-300, 3.0]),
            serde_json::json!({"ünï": "çødé", "z": "\u{1}", "Z": "a\"b"}),
        ];
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        for dir in ["examples/seed-incident", "examples/clean-app"] {
            let loaded = crate::manifest::load_paths(&[root.join(dir)]);
            assert!(!loaded.resources.is_empty(), "{dir}");
            let (inputs, _) = crate::evaluate::build_inputs(
                &loaded.resources,
                &crate::evaluate::EvaluateOptions::default(),
            );
            docs.extend(inputs);
        }
        // Whole AdmissionReviews as the API server sends them.
        for entry in std::fs::read_dir(root.join("tests/fixtures/admission")).unwrap() {
            let path = entry.unwrap().path();
            // (some are malformed on purpose)
            if path.extension().is_some_and(|e| e == "json")
                && let Ok(doc) = serde_json::from_slice(&std::fs::read(&path).unwrap())
            {
                docs.push(doc);
            }
        }
        assert!(docs.len() > 20, "{}", docs.len());
        for doc in &docs {
            let expected = RegoValue::deserialize(doc).unwrap();
            assert_eq!(to_rego(doc), expected, "{doc}");
        }
        let mut input = serde_json::json!({"operation": "CREATE", "resource": {"old": 1}});
        let part = serde_json::json!({"kind": "Job", "spec": {"parallelism": 2}});
        let joined = rego_input(&input, &[("resource", &part)]).unwrap();
        input["resource"] = part;
        assert_eq!(joined, RegoValue::deserialize(&input).unwrap());
        assert!(rego_input(&serde_json::json!([1]), &[("resource", &input)]).is_err());
    }

    #[test]
    fn meta_needs_id_title_and_known_severity_and_action() {
        let ok = RegoValue::from(json!({"id": "SG101", "title": "t", "severity": "high",
                                        "action": "mutate", "docs": "docs/rules/SG101.md"}));
        let meta = read_meta(&ok, "syncguard.rules.x", &[]).unwrap();
        assert_eq!(
            (meta.severity, meta.action),
            (Severity::High, Action::Mutate)
        );
        assert_eq!(meta.why, None);

        let bad = RegoValue::from(json!({"id": "SG101", "title": "t", "severity": "urgent",
                                         "action": "warn"}));
        let err = read_meta(&bad, "p", &[]).unwrap_err();
        assert!(
            err.starts_with("meta.severity: unknown severity `urgent`"),
            "{err}"
        );
        let err = read_meta(&RegoValue::from(json!({"id": "SG1"})), "p", &[]).unwrap_err();
        assert_eq!(err, "meta.title is missing");
        assert!(
            read_meta(&RegoValue::Undefined, "p", &[])
                .unwrap_err()
                .contains("no `meta`")
        );
    }

    #[test]
    fn meta_operations_default_to_create_and_update_and_reject_unknown_values() {
        let base = json!({"id": "X1", "title": "t", "severity": "low", "action": "warn"});
        let meta = read_meta(&RegoValue::from(base.clone()), "p", &[]).unwrap();
        assert!(meta.operations.includes("CREATE") && meta.operations.includes("CHECK"));
        assert!(!meta.operations.includes("DELETE"));

        let mut delete_only = base.clone();
        delete_only["operations"] = json!(["DELETE"]);
        let meta = read_meta(&RegoValue::from(delete_only), "p", &[]).unwrap();
        assert!(meta.operations.includes("DELETE"));
        assert!(!meta.operations.includes("CREATE") && !meta.operations.includes("AUDIT"));

        for bad in [json!(["REMOVE"]), json!([]), json!("DELETE")] {
            let mut v = base.clone();
            v["operations"] = bad.clone();
            let err = read_meta(&RegoValue::from(v), "p", &[]).unwrap_err();
            assert!(err.starts_with("meta.operations"), "{bad}: {err}");
        }
    }
}
