//! SG302, render-twice determinism: run the render command several times and report every
//! field that differs between the outputs, with `file:line:column` in the first output.
//!
//! Why: Argo CD renders a chart again for every new commit, hard refresh or manifest-cache
//! expiry and compares the result with the live objects. A template that emits a different
//! value on every render (`randAlphaNum`, `genCA`, `now`, `uuidv4`, a branch on `lookup`, which
//! `helm template` never evaluates) makes the app OutOfSync with nothing changed in Git, and with
//! automated sync and selfHeal it re-applies the object on every render: a sync loop (seed 004,
//! cause 5). Comparing two renders in CI finds these before Argo CD does.
//!
//! The steps, each in its own module:
//!
//! - `render`: run the command (no shell, stdin closed, own process group, per-run timeout).
//! - [`compare_renders`]: load each output with [`manifest::load_reader`](crate::manifest),
//!   match objects across runs by identity, diff them field by field ([`diff_values`]), guess
//!   the cause of each difference ([`Cause`]), show values without leaking Secrets
//!   ([`ShownValue`]), and turn it all into SG302 [`Finding`]s.
//!
//! Decisions worth knowing:
//!
//! - Runs are spaced: a run starts no sooner than [`DeterminismOptions::delay`] (default
//!   1.1 s) after the previous one *started*, so that a timestamp with one-second resolution
//!   (`now | date "2006-01-02T15:04:05Z"`, `date +%s`) is certain to differ. A render that
//!   takes longer than the delay is not slowed down at all.
//! - Locations point at run 1. Without [`DeterminismOptions::save_to`] the file is named
//!   `render#1` (line and column are those of the command's stdout, the same as
//!   `CMD > render.yaml` would give); with it, every run's output is written to
//!   `DIR/render-N.yaml` and locations name the real file, so `diff -u DIR/render-1.yaml
//!   DIR/render-2.yaml` shows the same differences.
//! - Objects that Argo CD leaves out of sync status (hooks, `hook: Skip`) cannot cause
//!   OutOfSync; their differences are still reported, as `info`/`audit` so they never fail a
//!   build.

// The render command and its output come from users: no input may crash the process.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod cause;
mod diff;
mod shown;

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

pub use cause::Cause;
pub use diff::{diff_values, escape_token};
pub use shown::{MAX_SHOWN_CHARS, ShownValue};

use crate::finding::{Action, Finding, Report, ResourceRef, RuleId, Severity, Status};
use crate::manifest::{Loaded, SourceLocation, load_reader};
use crate::model::Resource;
use crate::model::argo::SyncFacts;
use crate::process::RunFailure;

/// The rule id findings are reported under.
pub const RULE_ID: &str = "SG302";
/// The rule title.
pub const TITLE: &str = "Render is not deterministic";
/// The rule's documentation page.
pub const DOCS: &str = "docs/rules/SG302.md";
/// Runs when the user does not say: two renders are enough to catch anything random.
pub const DEFAULT_RUNS: usize = 2;
/// Fewer than two renders have nothing to compare.
pub const MIN_RUNS: usize = 2;
/// `helm template` of a large umbrella chart with dependencies takes tens of seconds; two
/// minutes leaves room for that and still ends a hung render (a plugin waiting on the network)
/// well before a CI job's own timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// Just over one second, so that timestamps with one-second resolution differ between runs.
pub const DEFAULT_DELAY: Duration = Duration::from_millis(1100);
/// How many lines of a failed command's stderr an error shows: enough for Helm's error and
/// its template call chain, short enough to read.
pub const STDERR_TAIL_LINES: usize = 10;

/// How to run the render command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeterminismOptions {
    /// Per-run limit; the command and everything it started are killed when it is reached.
    /// `None`: no limit. Default [`DEFAULT_TIMEOUT`].
    pub timeout: Option<Duration>,
    /// Minimum time between the *starts* of consecutive runs (`--delay-ms`). Default
    /// [`DEFAULT_DELAY`]; set it to zero when the command is random anyway (tests), or to
    /// more than a minute to catch minute-resolution timestamps.
    pub delay: Duration,
    /// Directory to write each run's output to, as `render-N.yaml` (`--save-to`); created if
    /// missing. Locations then name `DIR/render-1.yaml` instead of `render#1`.
    pub save_to: Option<PathBuf>,
}

impl Default for DeterminismOptions {
    fn default() -> Self {
        Self {
            timeout: Some(DEFAULT_TIMEOUT),
            delay: DEFAULT_DELAY,
            save_to: None,
        }
    }
}

/// One render's output and the name it goes by in locations and errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Render {
    /// `render#N`, or the path it was saved to.
    pub label: String,
    /// The command's stdout, as bytes (the loader reports invalid UTF-8 itself).
    pub output: Vec<u8>,
}

/// A field whose value differs between runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldDiff {
    /// The object, as in the first run that has it.
    pub resource: ResourceRef,
    /// RFC 6901 pointer inside the object, e.g. `/metadata/annotations/checksum~1config`.
    pub pointer: String,
    /// Where the field (or its closest written ancestor) is in the first run that has the
    /// object, normally run 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// The value in each run, in run order; redacted for Secret `data`/`stringData`.
    pub values: Vec<ShownValue>,
    /// The likely cause, when recognisable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

/// An object that some runs render and others do not (usually because its name is random).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PresenceDiff {
    /// The object, as in the first run that has it.
    pub resource: ResourceRef,
    /// The runs (1-based) that render it.
    pub present_in: Vec<usize>,
    /// Where it starts in the first run that has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLocation>,
    /// Objects of the same kind and namespace rendered only in the runs that lack this one:
    /// the same object under another (random) name.
    pub instead: Vec<ResourceRef>,
    /// [`Cause::RandomName`] when `instead` is not empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<Cause>,
}

/// Everything a determinism check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeterminismReport {
    /// How many times the command was run.
    pub runs: usize,
    /// How many distinct objects were seen across all runs.
    pub objects: usize,
    /// Where each run's output can be found: `render#N`, or the file it was saved to.
    pub sources: Vec<String>,
    /// One SG302 finding per [`PresenceDiff`] and per [`FieldDiff`], in object order.
    pub findings: Vec<Finding>,
    /// Every field that differs, grouped by object in the order of run 1, then by line.
    pub diffs: Vec<FieldDiff>,
    /// Every object that is not rendered by every run.
    pub presence: Vec<PresenceDiff>,
    /// Outputs that could not be read (invalid YAML, not Kubernetes objects, nothing rendered);
    /// an error that repeats identically in later runs is listed once, for run 1.
    pub errors: Vec<String>,
}

impl DeterminismReport {
    /// True when every run rendered the same objects with the same values.
    pub fn is_deterministic(&self) -> bool {
        self.diffs.is_empty() && self.presence.is_empty()
    }

    /// The findings as a normal [`Report`], for the usual renderers and exit codes; its object
    /// count is the distinct objects seen across the runs.
    pub fn into_report(self) -> Report {
        Report::new(self.findings, self.errors).with_objects(self.objects)
    }
}

/// Why the render command could not be checked.
///
/// Every message is complete on its own, including the underlying cause, and (as in
/// [`LoadError`](crate::manifest::LoadError)) the cause is a plain field rather than a
/// `source()`, so `{:#}`-style chains do not print it twice.
#[derive(Debug, Error)]
pub enum DeterminismError {
    /// The argument list was empty.
    #[error("no render command given, e.g. `syncguard determinism -- helm template shop ./chart`")]
    NoCommand,
    /// Fewer than [`MIN_RUNS`] runs were asked for.
    #[error("--runs must be at least {MIN_RUNS} (got {runs}): one render has nothing to compare")]
    TooFewRuns {
        /// The rejected count.
        runs: usize,
    },
    /// The program could not be started.
    #[error("render #{run}: cannot run `{command}`: {error}")]
    Spawn {
        /// 1-based run number.
        run: usize,
        /// The command, shell-quoted for display.
        command: String,
        /// What the operating system said (usually: not found).
        error: io::Error,
    },
    /// The command exited unsuccessfully: there is no output to compare.
    #[error("render #{run}: `{command}` failed ({status}){}", stderr_tail(.stderr))]
    Failed {
        /// 1-based run number.
        run: usize,
        /// The command, shell-quoted for display.
        command: String,
        /// How it ended, e.g. `exit status: 1`.
        status: ExitStatus,
        /// The last [`STDERR_TAIL_LINES`] lines of its stderr.
        stderr: String,
    },
    /// The command did not finish in time; it and everything it started were killed.
    #[error(
        "render #{run}: `{command}` did not finish within {}; it was killed{}",
        seconds(*.timeout),
        stderr_tail(.stderr)
    )]
    Timeout {
        /// 1-based run number.
        run: usize,
        /// The command, shell-quoted for display.
        command: String,
        /// The limit that was reached.
        timeout: Duration,
        /// The last [`STDERR_TAIL_LINES`] lines of what it wrote to stderr before.
        stderr: String,
    },
    /// Reading the command's output or waiting for it failed.
    #[error("render #{run}: lost track of `{command}`: {error}")]
    Io {
        /// 1-based run number.
        run: usize,
        /// The command, shell-quoted for display.
        command: String,
        /// The underlying error.
        error: io::Error,
    },
    /// A `--save-to` file or directory could not be written.
    #[error("cannot save render #{run} to {}: {error}", .path.display())]
    Save {
        /// 1-based run number (0: creating the directory).
        run: usize,
        /// The path that failed.
        path: PathBuf,
        /// What the operating system said.
        error: io::Error,
    },
}

impl DeterminismError {
    /// A short stable name for the kind of error, for metrics labels and machine output.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Self::NoCommand => "no_command",
            Self::TooFewRuns { .. } => "too_few_runs",
            Self::Spawn { .. } => "spawn",
            Self::Failed { .. } => "failed",
            Self::Timeout { .. } => "timeout",
            Self::Io { .. } => "io",
            Self::Save { .. } => "save",
        }
    }
}

/// Runs `cmd` (argv, no shell) `runs` times and reports every difference between the outputs.
///
/// The command inherits the environment and working directory, gets an empty stdin, and must
/// exit 0 every time: a failing or timed-out run is an error (with the last lines of its
/// stderr), not a finding, because there is nothing to compare. Differences, unreadable output
/// and "nothing rendered" end up in the report.
pub fn check_determinism(
    cmd: &[String],
    runs: usize,
    opts: &DeterminismOptions,
) -> Result<DeterminismReport, DeterminismError> {
    if cmd.is_empty() {
        return Err(DeterminismError::NoCommand);
    }
    if runs < MIN_RUNS {
        return Err(DeterminismError::TooFewRuns { runs });
    }
    if let Some(dir) = &opts.save_to {
        fs::create_dir_all(dir).map_err(|error| DeterminismError::Save {
            run: 0,
            path: dir.clone(),
            error,
        })?;
    }
    let mut renders = Vec::with_capacity(runs);
    let mut previous_start: Option<Instant> = None;
    for run in 1..=runs {
        if let Some(wait) = previous_start.and_then(|s| opts.delay.checked_sub(s.elapsed())) {
            thread::sleep(wait);
        }
        previous_start = Some(Instant::now());
        let output = crate::process::run_argv(cmd, opts.timeout)
            .map_err(|failure| run_error(run, cmd, opts.timeout, failure))?;
        let label = match &opts.save_to {
            Some(dir) => {
                let path = dir.join(format!("render-{run}.yaml"));
                fs::write(&path, &output).map_err(|error| DeterminismError::Save {
                    run,
                    path: path.clone(),
                    error,
                })?;
                path.display().to_string()
            }
            None => format!("render#{run}"),
        };
        renders.push(Render { label, output });
    }
    Ok(compare_renders(&renders))
}

/// Compares already captured renders (at least one; fewer than two compare nothing).
///
/// Objects are matched by group, kind, namespace and name; objects with only
/// `metadata.generateName` by their position among such objects of the same kind and
/// namespace (their names are random by design, Argo CD and the API server fill them in).
pub fn compare_renders(renders: &[Render]) -> DeterminismReport {
    let loaded: Vec<Loaded> = renders
        .iter()
        .map(|r| load_reader(&r.label, r.output.as_slice()))
        .collect();
    let errors = load_errors(renders, &loaded);
    let objects = match_objects(&loaded);
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());

    let mut diffs = Vec::new();
    let mut presence = Vec::new();
    // Per object: (presence index, diff range), to emit findings in object order.
    let mut emitted: Vec<(Option<usize>, std::ops::Range<usize>)> = Vec::new();
    for per_run in &objects {
        let Some((base_run, base)) = per_run
            .iter()
            .enumerate()
            .find_map(|(run, r)| r.map(|r| (run, r)))
        else {
            continue;
        };
        let present_in: Vec<usize> = per_run
            .iter()
            .enumerate()
            .filter_map(|(run, r)| r.map(|_| run + 1))
            .collect();
        let presence_index = (present_in.len() < renders.len()).then(|| {
            presence.push(PresenceDiff {
                resource: ResourceRef::from(base),
                present_in,
                location: base.locate(""),
                instead: Vec::new(),
                cause: None,
            });
            presence.len() - 1
        });
        let first_diff = diffs.len();
        diffs.extend(field_diffs(base_run, base, per_run, now));
        emitted.push((presence_index, first_diff..diffs.len()));
    }
    link_renamed_objects(&mut presence);

    let mut findings = Vec::with_capacity(presence.len() + diffs.len());
    for (per_run, (presence_index, range)) in objects.iter().zip(&emitted) {
        let Some(base) = per_run.iter().flatten().next() else {
            continue;
        };
        let excluded = is_excluded_from_sync_status(base);
        if let Some(p) = presence_index.and_then(|i| presence.get(i)) {
            findings.push(presence_finding(p, base, renders.len(), excluded));
        }
        for d in diffs.get(range.clone()).unwrap_or_default() {
            findings.push(field_finding(d, base, excluded));
        }
    }

    DeterminismReport {
        runs: renders.len(),
        objects: objects.len(),
        sources: renders.iter().map(|r| r.label.clone()).collect(),
        findings,
        diffs,
        presence,
        errors,
    }
}

/// How an object is recognised in every run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Identity {
    group: String,
    kind: String,
    namespace: Option<String>,
    /// `metadata.name`; `None` for objects with only `generateName`.
    name: Option<String>,
    /// How many objects with the same identity came before this one in its run: 0 for a
    /// normal object, the position among `generateName` objects of the same kind and
    /// namespace, or the repeat count of an (invalid) duplicate.
    ordinal: usize,
}

/// Each object seen in any run, in order of first appearance (run 1's order first), with the
/// resource it is in each run.
fn match_objects(loaded: &[Loaded]) -> Vec<Vec<Option<&Resource>>> {
    let runs = loaded.len();
    let mut index: HashMap<Identity, usize> = HashMap::new();
    let mut objects: Vec<Vec<Option<&Resource>>> = Vec::new();
    for (run, l) in loaded.iter().enumerate() {
        let mut seen: HashMap<Identity, usize> = HashMap::new();
        for r in &l.resources {
            let mut id = Identity {
                group: r.group.clone(),
                kind: r.kind.clone(),
                namespace: r.namespace.clone(),
                name: (!r.name.is_empty()).then(|| r.name.clone()),
                ordinal: 0,
            };
            let count = seen.entry(id.clone()).or_insert(0);
            id.ordinal = *count;
            *count += 1;
            let slot = *index.entry(id).or_insert_with(|| {
                objects.push(vec![None; runs]);
                objects.len() - 1
            });
            if let Some(cell) = objects.get_mut(slot).and_then(|o| o.get_mut(run)) {
                *cell = Some(r);
            }
        }
    }
    objects
}

/// The differing fields of one object, compared from its first run to every other run that
/// has it, in line order.
fn field_diffs(
    base_run: usize,
    base: &Resource,
    per_run: &[Option<&Resource>],
    now: u64,
) -> Vec<FieldDiff> {
    let mut pointers: Vec<String> = Vec::new();
    for other in per_run.iter().skip(base_run + 1).flatten() {
        for p in diff_values(&base.raw, &other.raw) {
            if !pointers.contains(&p) {
                pointers.push(p);
            }
        }
    }
    let resource = ResourceRef::from(base);
    let mut diffs: Vec<FieldDiff> = pointers
        .into_iter()
        .map(|pointer| {
            let raw: Vec<Option<&Value>> = per_run
                .iter()
                .map(|r| r.and_then(|r| r.raw.pointer(&pointer)))
                .collect();
            let redact = is_secret_payload(base, &pointer);
            FieldDiff {
                resource: resource.clone(),
                location: base.locate(&pointer),
                values: raw.iter().map(|v| ShownValue::of(*v, redact)).collect(),
                cause: Cause::of_field(&pointer, &raw, now),
                pointer,
            }
        })
        .collect();
    diffs.sort_by(|a, b| {
        let at = |d: &FieldDiff| d.location.as_ref().map(|l| (l.line, l.column));
        at(a).cmp(&at(b)).then_with(|| a.pointer.cmp(&b.pointer))
    });
    diffs
}

/// True for a core `Secret`'s `data` or `stringData`, whose values must never be printed.
fn is_secret_payload(r: &Resource, pointer: &str) -> bool {
    r.group.is_empty()
        && r.kind == "Secret"
        && ["/data", "/stringData"].iter().any(|root| {
            pointer
                .strip_prefix(root)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
}

/// Pairs objects that exist in disjoint sets of runs with the same group, kind and namespace:
/// one object whose name changes on every render.
fn link_renamed_objects(presence: &mut [PresenceDiff]) {
    let snapshot: Vec<(ResourceRef, Vec<usize>)> = presence
        .iter()
        .map(|p| (p.resource.clone(), p.present_in.clone()))
        .collect();
    for p in presence.iter_mut() {
        p.instead = snapshot
            .iter()
            .filter(|(other, runs)| {
                other.group == p.resource.group
                    && other.kind == p.resource.kind
                    && other.namespace == p.resource.namespace
                    && other.name != p.resource.name
                    && runs.iter().all(|run| !p.present_in.contains(run))
            })
            .map(|(other, _)| other.clone())
            .collect();
        if !p.instead.is_empty() {
            p.cause = Some(Cause::RandomName);
        }
    }
}

/// Hooks and `hook: Skip` objects are left out of Argo CD's sync status (reference spec §6),
/// so their differences cannot cause OutOfSync.
fn is_excluded_from_sync_status(r: &Resource) -> bool {
    let facts = SyncFacts::of(r);
    facts.is_hook || facts.skip || facts.ignored.is_some()
}

/// Load errors of every run, without repeating in later runs what run 1 already reported,
/// plus an error when run 1 rendered no object at all, even if what it printed was reported as
/// unreadable: then nothing was compared, which must never read as a clean result.
fn load_errors(renders: &[Render], loaded: &[Loaded]) -> Vec<String> {
    let mut errors = Vec::new();
    let mut first_run: Vec<String> = Vec::new();
    for (run, (render, l)) in renders.iter().zip(loaded).enumerate() {
        for e in &l.errors {
            let text = e.to_string();
            let rest = text.strip_prefix(render.label.as_str()).unwrap_or(&text);
            if run == 0 {
                first_run.push(rest.to_string());
            } else if first_run.iter().any(|f| f == rest) {
                continue;
            }
            errors.push(text);
        }
    }
    if let (Some(render), Some(l)) = (renders.first(), loaded.first())
        && l.resources.is_empty()
    {
        let what = if l.errors.is_empty() {
            "no Kubernetes objects"
        } else {
            "no readable Kubernetes objects"
        };
        errors.push(format!(
            "{}: the command printed {what}, so there was nothing to compare (wrong chart path \
             or values?)",
            render.label
        ));
    }
    errors
}

/// What a sync loop looks like, for objects Argo CD compares.
const LOOP: &str = "Argo CD renders the manifests again for every new commit, hard refresh or \
                    manifest-cache expiry, and each render differs from what is live: the app \
                    turns OutOfSync with nothing changed in Git, and automated sync with \
                    selfHeal re-applies it every time (an endless OutOfSync/sync loop).";

/// Why the same difference matters less for hooks.
const NOT_COMPARED: &str = "Argo CD leaves hooks and skipped objects out of the sync status, so \
                            this does not make the app OutOfSync by itself, but every sync runs \
                            a different object.";

fn field_finding(d: &FieldDiff, base: &Resource, excluded: bool) -> Finding {
    let (hint, fix) = match d.cause {
        Some(c) => (c.hint().to_string(), c.fix().to_string()),
        None => (
            "not recognised from the values".to_string(),
            format!(
                "find the template that writes this field{} and make its output depend only \
                 on the chart and its values (no now, rand*, uuidv4, gen* or branches on \
                 lookup).",
                template_of(d.location.as_ref())
            ),
        ),
    };
    let last_resort = if excluded || d.cause == Some(Cause::ChecksumAnnotation) {
        String::new()
    } else {
        format!(
            " Last resort: an ignoreDifferences entry for this {} with jsonPointers [\"{}\"], \
             plus syncOptions RespectIgnoreDifferences=true (without it a sync still applies \
             the new value).",
            d.resource.kind, d.pointer
        )
    };
    let message = format!(
        "{}: {} is different on every render ({}). {} Likely cause: {hint}. Fix: {fix}{last_resort}",
        d.resource,
        d.pointer,
        values_phrase(&d.values),
        if excluded { NOT_COMPARED } else { LOOP },
    );
    finding(
        base,
        excluded,
        message,
        d.location.clone(),
        Some(d.pointer.clone()),
    )
}

fn presence_finding(p: &PresenceDiff, base: &Resource, runs: usize, excluded: bool) -> Finding {
    let absent: Vec<usize> = (1..=runs).filter(|r| !p.present_in.contains(r)).collect();
    let instead = match p.instead.as_slice() {
        [] => String::new(),
        others => format!(
            " ({} {} {} instead)",
            runs_phrase(&absent),
            if absent.len() == 1 { "has" } else { "have" },
            others
                .iter()
                .take(3)
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let (hint, fix) = match p.cause {
        Some(Cause::RandomName) if excluded => (
            Cause::RandomName.hint(),
            "give the hook a fixed metadata.name (the default BeforeHookCreation policy then \
             replaces the previous run), or use generateName with a HookSucceeded delete policy.",
        ),
        Some(c) => (c.hint(), c.fix()),
        None => (
            "a condition in the templates that is random or depends on the time (an if over \
             randInt, now or a lookup result)",
            "make the condition depend only on values.",
        ),
    };
    let consequence = if excluded {
        NOT_COMPARED.to_string()
    } else {
        format!(
            "Argo CD renders the manifests again for every new commit, hard refresh or \
             manifest-cache expiry, and an object that comes and goes is created or pruned \
             each time: the app turns OutOfSync with nothing changed in Git, and automated sync \
             deletes and re-creates it again and again{}.",
            if p.resource.kind == "Job" {
                " (the Job runs again each time)"
            } else {
                ""
            }
        )
    };
    let message = format!(
        "{} is in {} but not in {}{instead}. {consequence} Likely cause: {hint}. Fix: {fix}",
        p.resource,
        runs_phrase(&p.present_in),
        runs_phrase(&absent),
    );
    let (location, path) = if p.cause == Some(Cause::RandomName) {
        (
            base.locate("/metadata/name"),
            Some("/metadata/name".to_string()),
        )
    } else {
        (p.location.clone(), None)
    };
    finding(base, excluded, message, location, path)
}

/// Fills the fields every SG302 finding shares.
fn finding(
    base: &Resource,
    excluded: bool,
    message: String,
    location: Option<SourceLocation>,
    path: Option<String>,
) -> Finding {
    let (severity, action) = if excluded {
        (Severity::Info, Action::Audit)
    } else {
        (Severity::Medium, Action::Warn)
    };
    Finding {
        rule_id: RuleId::from(RULE_ID),
        title: TITLE.to_string(),
        severity,
        action,
        status: Status::Open,
        message,
        resource: ResourceRef::from(base),
        location,
        path,
        patch: None,
        docs: Some(DOCS.to_string()),
        cause: None,
        also: Vec::new(),
        application: None,
    }
}

/// ` (chart/templates/x.yaml)` when Helm's `# Source:` comment named the template.
fn template_of(location: Option<&SourceLocation>) -> String {
    location
        .and_then(|l| l.helm_template.as_deref())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default()
}

/// `render 1: "a"; render 2: "b"`, at most three runs.
fn values_phrase(values: &[ShownValue]) -> String {
    let mut parts: Vec<String> = values
        .iter()
        .take(3)
        .enumerate()
        .map(|(i, v)| format!("render {}: {v}", i + 1))
        .collect();
    if values.len() > 3 {
        parts.push(format!("… ({} renders)", values.len()));
    }
    parts.join("; ")
}

/// `render 2`, `renders 1 and 3`, `renders 1, 2 and 4`.
fn runs_phrase(runs: &[usize]) -> String {
    let numbers: Vec<String> = runs.iter().map(ToString::to_string).collect();
    match numbers.as_slice() {
        [] => "no render".to_string(),
        [one] => format!("render {one}"),
        [init @ .., last] => format!("renders {} and {last}", init.join(", ")),
    }
}

/// Maps a failed run to the error the user sees.
fn run_error(
    run: usize,
    cmd: &[String],
    timeout: Option<Duration>,
    failure: RunFailure,
) -> DeterminismError {
    let command = display_command(cmd);
    match failure {
        RunFailure::Spawn(error) => DeterminismError::Spawn {
            run,
            command,
            error,
        },
        RunFailure::Io(error) => DeterminismError::Io {
            run,
            command,
            error,
        },
        RunFailure::Exit { status, stderr, .. } => DeterminismError::Failed {
            run,
            command,
            status,
            stderr: last_lines(&stderr, STDERR_TAIL_LINES),
        },
        RunFailure::Timeout { stderr } => DeterminismError::Timeout {
            run,
            command,
            timeout: timeout.unwrap_or_default(),
            stderr: last_lines(&stderr, STDERR_TAIL_LINES),
        },
    }
}

/// The command as a user would type it in a POSIX shell, for error messages.
pub fn display_command(cmd: &[String]) -> String {
    cmd.iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .bytes()
                    .all(|c| c.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&c));
            if plain {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The last `n` non-empty lines of a command's output, lossily decoded.
fn last_lines(bytes: &[u8], n: usize) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines
        .get(lines.len().saturating_sub(n)..)
        .unwrap_or_default()
        .join("\n")
}

/// `\n  stderr (last lines):\n    …` or nothing when stderr was empty.
fn stderr_tail(stderr: &str) -> String {
    if stderr.is_empty() {
        return String::new();
    }
    let indented: Vec<String> = stderr.lines().map(|l| format!("    {l}")).collect();
    format!("\n  stderr (last lines):\n{}", indented.join("\n"))
}

/// `120 s`, `0.25 s`.
fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(label: &str, text: &str) -> Render {
        Render {
            label: label.to_string(),
            output: text.as_bytes().to_vec(),
        }
    }

    fn renders(texts: &[&str]) -> Vec<Render> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| render(&format!("render#{}", i + 1), t))
            .collect()
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: shop\ndata:\n  a: \"1\"\n";

    #[test]
    fn identical_renders_have_no_findings() {
        let report = compare_renders(&renders(&[CM, CM]));
        assert!(report.is_deterministic());
        assert!(report.findings.is_empty() && report.errors.is_empty());
        assert_eq!((report.runs, report.objects), (2, 1));
    }

    #[test]
    fn document_order_does_not_matter_only_identity_does() {
        let other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n";
        let a = format!("{CM}---\n{other}");
        let b = format!("{other}---\n{CM}");
        assert!(compare_renders(&renders(&[&a, &b])).is_deterministic());
    }

    #[test]
    fn a_changed_value_points_at_its_line_in_run_one() {
        let changed = CM.replace("a: \"1\"", "a: \"2\"");
        let report = compare_renders(&renders(&[CM, &changed]));
        let [d] = report.diffs.as_slice() else {
            panic!("{:?}", report.diffs)
        };
        assert_eq!(d.pointer, "/data/a");
        assert_eq!(d.location.as_ref().unwrap().to_string(), "render#1:7:3");
        assert_eq!(d.values[1].to_string(), "\"2\"");
        let f = &report.findings[0];
        assert_eq!(f.rule_id.as_str(), "SG302");
        assert_eq!((f.severity, f.action), (Severity::Medium, Action::Warn));
        assert!(f.message.starts_with(
            "ConfigMap/shop/cfg: /data/a is different on every render (render 1: \"1\"; render 2: \"2\")."
        ));
        assert!(f.message.contains("RespectIgnoreDifferences=true"));
    }

    #[test]
    fn generate_name_objects_are_matched_by_position() {
        let job = |prefix: &str| {
            format!("apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: {prefix}\n")
        };
        let report = compare_renders(&renders(&[&job("mig-"), &job("mig-x1-")]));
        assert!(report.presence.is_empty());
        assert_eq!(report.diffs[0].pointer, "/metadata/generateName");
    }

    #[test]
    fn hooks_are_reported_as_info_because_argo_cd_does_not_compare_them() {
        let hook = |v: &str| {
            format!(
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: m\n  annotations:\n    \
                 argocd.argoproj.io/hook: PreSync\n    x: \"{v}\"\n"
            )
        };
        let report = compare_renders(&renders(&[&hook("a"), &hook("b")]));
        let f = &report.findings[0];
        assert_eq!((f.severity, f.action), (Severity::Info, Action::Audit));
        assert!(
            f.message
                .contains("does not make the app OutOfSync by itself")
        );
    }

    #[test]
    fn an_error_repeated_in_every_run_is_listed_once() {
        let bad = format!("{CM}---\nkind: [\n");
        let report = compare_renders(&renders(&[&bad, &bad]));
        assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
        assert!(report.errors[0].starts_with("render#1:"));
    }

    #[test]
    fn an_empty_render_is_an_error_not_a_clean_result() {
        let report = compare_renders(&renders(&["", ""]));
        assert_eq!(report.objects, 0);
        assert_eq!(
            report.errors,
            [
                "render#1: the command printed no Kubernetes objects, so there was nothing to \
              compare (wrong chart path or values?)"
            ]
        );
    }

    #[test]
    fn a_render_without_readable_objects_is_an_error_even_when_its_output_was_reported() {
        let report = compare_renders(&renders(&["kind: [\n", "kind: [\n"]));
        assert_eq!(report.objects, 0);
        assert_eq!(report.errors.len(), 2, "{:?}", report.errors);
        assert!(
            report.errors[0].contains("invalid YAML"),
            "{:?}",
            report.errors
        );
        assert_eq!(
            report.errors[1],
            "render#1: the command printed no readable Kubernetes objects, so there was nothing \
             to compare (wrong chart path or values?)"
        );
    }

    #[test]
    fn the_report_counts_the_objects_compared() {
        let report = compare_renders(&renders(&[CM, CM])).into_report();
        assert_eq!(report.summary.objects, 1);
        let empty = compare_renders(&renders(&["", ""])).into_report();
        assert_eq!(empty.summary.objects, 0);
        assert_eq!(empty.summary.errors, 1);
    }

    #[test]
    fn commands_are_displayed_shell_quoted() {
        let cmd: Vec<String> = ["helm", "template", "my app", "--set", "a=it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            display_command(&cmd),
            r"helm template 'my app' --set 'a=it'\''s'"
        );
    }

    #[test]
    fn runs_are_listed_in_words() {
        assert_eq!(runs_phrase(&[2]), "render 2");
        assert_eq!(runs_phrase(&[1, 3]), "renders 1 and 3");
        assert_eq!(runs_phrase(&[1, 2, 4]), "renders 1, 2 and 4");
    }

    #[test]
    fn only_the_last_lines_of_stderr_are_kept() {
        let stderr: String = (1..=15).map(|i| format!("line {i}\n")).collect();
        let tail = last_lines(stderr.as_bytes(), 3);
        assert_eq!(tail, "line 13\nline 14\nline 15");
    }
}
