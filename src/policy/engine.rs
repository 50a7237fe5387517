//! Evaluating every rule against one input document, fast and with per-rule isolation.
//!
//! # One evaluation per resource
//!
//! Rules are separate packages, and `data.syncguard.rules` is a package, not a rule, so it cannot
//! be an `eval_rule` entry point. At load time we therefore generate one small module,
//! `package syncguard.__evaluation`, whose single rule `outcomes` is an object literal with one
//! entry per rule package (`{"violations": data.syncguard.rules.<name>.violations, "patches":
//! ...}`, `patches` only when the package declares it). Evaluating that one rule evaluates every
//! rule once.
//!
//! # Two backends
//!
//! regorus ships a tree-walking interpreter ([`regorus::Engine`]) and a bytecode VM (RVM,
//! [`regorus::rvm`]) compiled from the same prepared engine. With 20 small catalogue-shaped rules
//! (`tests/policy_perf.rs`, release build, 2 vCPU) one evaluation costs ~195 µs in the
//! interpreter (each `data.` reference rescans every module) and ~41 µs in the VM; the budget for
//! "10,000 resources in ≤ 1 s on 2 cores" is ~60 µs per resource per core. So:
//!
//! - [`Backend::Vm`] is the default: one immutable `Arc<Program>`, a fresh `RegoVM` per
//!   evaluation (~1.5 µs), the same clone-per-request shape as the engine-clone design.
//! - [`Backend::Interpreter`] is used when the RVM compiler rejects a construct the rules use
//!   (it does not support `with` in rules, `walk` loops, or partial object rules with constant
//!   keys), or when asked for explicitly. The prepared engine is cloned per evaluation (~0.2 µs).
//!
//! The VM is more lenient than the interpreter about some runtime errors (a complete rule with two
//! different values is an error in the interpreter, silently one value in the VM). Evaluation runs
//! with non-strict builtin errors in both, as OPA does; `syncguard test` runs rules in the
//! interpreter with strict errors, which is where such bugs are meant to surface.
//!
//! # Isolation and deadlines
//!
//! The whole evaluation gets `deadline` (regorus's execution timer, checked between evaluation
//! steps — one huge builtin call can overrun it) and an instruction cap (VM only). If it fails,
//! or yields undefined, each rule is evaluated alone, each with an equal share of a second
//! `deadline` (at least 5 ms, at most `deadline`), so one broken or slow rule becomes a
//! policy-error for that rule while the others still report. Worst case per resource is therefore
//! about twice the deadline.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use json_patch::PatchOperation;
use regorus::languages::rego::compiler::Compiler;
use regorus::rvm::program::Program;
use regorus::rvm::vm::RegoVM;
use regorus::utils::limits::ExecutionTimerConfig;
use regorus::{Engine, Value as RegoValue};
use serde::Deserialize;
use serde::Serialize;

use super::source::one_line;
use crate::finding::{Action, Severity};

/// The generated package that aggregates all rules.
pub(crate) const AGGREGATE_PACKAGE: &str = "syncguard.__evaluation";
/// The aggregate rules, one per dispatch group (`outcomes_<n>`), one evaluated per resource.
pub(crate) const AGGREGATE_RULE: &str = "data.syncguard.__evaluation.outcomes";

/// What a rule's meta says about which objects it can report on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Restriction {
    /// `meta.kinds`: only these kinds (`None`: every kind).
    pub kinds: Option<Vec<String>>,
    /// `meta.hooks_only`: only hooks.
    pub hooks_only: bool,
    /// `meta.unapplied`: the rule judges objects Argo CD never applies (`hook: Skip`, hooks with
    /// no type it runs). Every other rule is a judgement about an object *as applied*, so those
    /// objects never evaluate it — whether or not the dispatch is enabled.
    pub unapplied: bool,
}

/// Which rules an object evaluates. Objects Argo CD never applies evaluate only the rules that
/// say so (`meta.unapplied`): a semantic filter. For the others, the rules whose `meta.kinds` and
/// `meta.hooks_only` admit the object: a dispatch, which only saves time — rules that cannot
/// report on an object are left out of its aggregate, so adding a Job-only or hook-only rule
/// costs nothing for the other objects.
#[derive(Debug, Clone, Default)]
pub(crate) struct Dispatch {
    /// Slot indices of each group, in slot order.
    pub groups: Vec<Vec<usize>>,
    /// (kind named by some rule, is_hook) → group; other kinds use `other`.
    by_kind: std::collections::HashMap<(String, bool), usize>,
    /// Group of objects whose kind no rule names: [not a hook, hook].
    other: [usize; 2],
    /// Group of objects Argo CD never applies.
    unapplied: usize,
}

impl Dispatch {
    /// Groups for slots with these restrictions; `enabled` false puts every rule in one group
    /// (for differential tests of the dispatch itself), apart from the unapplied group.
    pub fn new(restrictions: &[Restriction], enabled: bool) -> Self {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut group_of = |members: Vec<usize>| -> usize {
            match groups.iter().position(|g| *g == members) {
                Some(i) => i,
                None => {
                    groups.push(members);
                    groups.len() - 1
                }
            }
        };
        let unapplied_members: Vec<usize> = restrictions
            .iter()
            .enumerate()
            .filter(|(_, r)| r.unapplied)
            .map(|(i, _)| i)
            .collect();
        if !enabled {
            let all = group_of((0..restrictions.len()).collect());
            let unapplied = group_of(unapplied_members);
            return Self {
                groups,
                by_kind: std::collections::HashMap::new(),
                other: [all, all],
                unapplied,
            };
        }
        let mut kinds: Vec<&String> = restrictions
            .iter()
            .filter_map(|r| r.kinds.as_ref())
            .flatten()
            .collect();
        kinds.sort();
        kinds.dedup();
        let members = |kind: Option<&str>, hook: bool| -> Vec<usize> {
            restrictions
                .iter()
                .enumerate()
                .filter(|(_, r)| {
                    (!r.hooks_only || hook)
                        && r.kinds
                            .as_ref()
                            .is_none_or(|ks| kind.is_some_and(|k| ks.iter().any(|x| x == k)))
                })
                .map(|(i, _)| i)
                .collect()
        };
        let other = [
            group_of(members(None, false)),
            group_of(members(None, true)),
        ];
        let mut by_kind = std::collections::HashMap::new();
        for kind in kinds {
            for hook in [false, true] {
                let g = group_of(members(Some(kind), hook));
                by_kind.insert((kind.clone(), hook), g);
            }
        }
        let unapplied = group_of(unapplied_members);
        Self {
            groups,
            by_kind,
            other,
            unapplied,
        }
    }

    /// The group of an input document.
    pub fn group_of(&self, input: &RegoValue) -> usize {
        let sync = &input[&RegoValue::from("sync")];
        if let RegoValue::String(reason) =
            &sync[&RegoValue::from("ignored")][&RegoValue::from("reason")]
            && never_applied(reason)
        {
            return self.unapplied;
        }
        let hook = matches!(&sync[&RegoValue::from("is_hook")], RegoValue::Bool(true));
        if let RegoValue::String(kind) =
            &input[&RegoValue::from("resource")][&RegoValue::from("kind")]
            && let Some(g) = self.by_kind.get(&(kind.to_string(), hook))
        {
            return *g;
        }
        self.other[usize::from(hook)]
    }

    /// The aggregate rule of group `g`.
    pub fn rule(g: usize) -> String {
        format!("{AGGREGATE_RULE}_{g}")
    }
}

/// `input.sync.ignored.reason` values of objects a sync never applies (`delete-hook-only`
/// objects are applied, at deletion, so every rule still judges them).
fn never_applied(reason: &str) -> bool {
    matches!(reason, "skip" | "garbage-hook")
}

/// How often the execution timer is consulted, in evaluation steps: often enough that a runaway
/// comprehension stops within a few ms of the deadline, rarely enough to cost nothing measurable.
const TIMER_CHECK_INTERVAL: u32 = 64;
/// Smallest per-rule deadline share in the isolation pass, so that a legitimate but heavier rule
/// is not cut off just because many rules share the budget.
const MIN_RULE_SHARE: Duration = Duration::from_millis(5);

/// Which regorus evaluator a [`super::PolicySet`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// The RVM bytecode VM (default; ~10× faster for our rule shape).
    Vm,
    /// The tree-walking interpreter (fallback for constructs the RVM compiler rejects).
    Interpreter,
}

/// Limits applied to every evaluation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub deadline: Duration,
    pub max_instructions: usize,
}

/// A rule as the evaluator knows it: its package name and which outputs it declares.
#[derive(Debug, Clone)]
pub(crate) struct Slot {
    /// The last package component (`syncguard.rules.<name>`).
    pub name: String,
    /// True if the package declares `patches`.
    pub has_patches: bool,
    /// The aggregate object's key for this rule, pre-built once.
    key: RegoValue,
}

impl Slot {
    pub fn new(name: String, has_patches: bool) -> Self {
        let key = RegoValue::from(name.as_str());
        Self {
            name,
            has_patches,
            key,
        }
    }

    fn violations_path(&self) -> String {
        format!("data.syncguard.rules.{}.violations", self.name)
    }

    fn patches_path(&self) -> String {
        format!("data.syncguard.rules.{}.patches", self.name)
    }
}

/// One violation as a rule reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The message for humans.
    pub msg: String,
    /// A JSON pointer into the object, when the rule gave one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The violation's own `"severity"`, overriding `meta.severity` (policies/README.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    /// The violation's own `"action"`, replacing `meta.action` as the default that
    /// `config.yaml` overrides (a finding whose truth rests on an assumption is downgraded).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// The violation's `"cause"`: violations of one rule with the same cause in one Application
    /// are one fact about several objects, reported as one finding naming them all.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// What one rule concluded about one input.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// The rule ran: its violations (at least one when returned by `evaluate`) and the patch
    /// operations it proposes, both in the order Rego produced them (sets are sorted by value).
    Reported {
        /// `violations` of the rule.
        violations: Vec<Violation>,
        /// `patches` of the rule (empty when it declares none).
        patches: Vec<PatchOperation>,
    },
    /// The rule could not be evaluated or produced malformed output; the message is one line,
    /// starting with `file:line:column` when the failure has a position.
    Failed(String),
}

/// The Rego source of the aggregate module: one `outcomes_<g>` rule per dispatch group, each
/// evaluating the group's rule packages in one pass.
pub(crate) fn aggregate_module(slots: &[Slot], dispatch: &Dispatch) -> String {
    let mut src = format!(
        "# Generated by syncguard: evaluates the rule packages an object can trigger in one pass.\n\
         package {AGGREGATE_PACKAGE}\n"
    );
    for (g, members) in dispatch.groups.iter().enumerate() {
        src.push_str(&format!("\noutcomes_{g} := {{\n"));
        for s in members.iter().filter_map(|&i| slots.get(i)) {
            let n = &s.name;
            src.push_str(&format!(
                "  \"{n}\": {{\"violations\": data.syncguard.rules.{n}.violations"
            ));
            if s.has_patches {
                src.push_str(&format!(", \"patches\": data.syncguard.rules.{n}.patches"));
            }
            src.push_str("},\n");
        }
        src.push_str("}\n");
    }
    src
}

struct VmProgram {
    program: Arc<Program>,
    /// `data` as the VM needs it (the interpreter keeps its own copy inside the engine).
    data: RegoValue,
    /// Entry index of each dispatch group's aggregate.
    aggregates: Vec<usize>,
    /// Per slot: entry index of `violations`, and of `patches` when declared.
    entries: Vec<(usize, Option<usize>)>,
}

/// The prepared, immutable evaluator shared by all evaluations.
pub(crate) struct Evaluator {
    /// Prepared interpreter: the [`Backend::Interpreter`] path, cloned per evaluation.
    engine: Engine,
    vm: Option<VmProgram>,
    slots: Vec<Slot>,
    dispatch: Dispatch,
    limits: Limits,
}

impl Evaluator {
    /// Builds the evaluator from a prepared engine that already holds the rules, the data and
    /// the aggregate module. Returns a note when the VM was wanted but could not be compiled.
    pub fn new(
        engine: Engine,
        data: RegoValue,
        slots: Vec<Slot>,
        dispatch: Dispatch,
        limits: Limits,
        want_vm: bool,
    ) -> (Self, Option<String>) {
        let mut note = None;
        let vm = if want_vm {
            match compile_vm(&engine, data, &slots, &dispatch) {
                Ok(vm) => Some(vm),
                Err(why) => {
                    note = Some(format!(
                        "using the slower regorus interpreter: the RVM compiler rejected the \
                         rules ({why})"
                    ));
                    None
                }
            }
        } else {
            None
        };
        let evaluator = Self {
            engine,
            vm,
            slots,
            dispatch,
            limits,
        };
        // Warm-up: the first evaluation pays for lazily built caches; do it at load, not on the
        // first admission request. The result is irrelevant (rules may reject an empty input).
        let _ = evaluator.evaluate(&RegoValue::new_object());
        (evaluator, note)
    }

    pub fn backend(&self) -> Backend {
        if self.vm.is_some() {
            Backend::Vm
        } else {
            Backend::Interpreter
        }
    }

    /// Evaluates every rule; returns `(slot index, verdict)` for rules that reported at least one
    /// violation or failed. Rules that only produced patches are dropped: a patch without a
    /// violation would be a silent change.
    pub fn evaluate(&self, input: &RegoValue) -> Vec<(usize, Verdict)> {
        let group = self.dispatch.group_of(input);
        let members = self
            .dispatch
            .groups
            .get(group)
            .map_or(&[][..], Vec::as_slice);
        let aggregate = self.run_aggregate(group, input);
        let verdicts: Vec<(usize, Verdict)> = match aggregate.as_ref().ok().and_then(outcomes) {
            Some(obj) => members
                .iter()
                .filter_map(|&i| {
                    let slot = self.slots.get(i)?;
                    Some((i, verdict_from_aggregate(obj.get(&slot.key))))
                })
                .collect(),
            None => self.isolate(members, input),
        };
        verdicts
            .into_iter()
            .filter(|(_, v)| match v {
                Verdict::Reported { violations, .. } => !violations.is_empty(),
                Verdict::Failed(_) => true,
            })
            .collect()
    }

    fn run_aggregate(&self, group: usize, input: &RegoValue) -> Result<RegoValue, String> {
        match &self.vm {
            Some(vm) => match vm.aggregates.get(group) {
                Some(&entry) => self.run_vm(vm, entry, input, self.limits.deadline),
                None => Err("internal: no aggregate for the dispatch group".into()),
            },
            None => self.run_engine(&Dispatch::rule(group), input, self.limits.deadline),
        }
    }

    /// The isolation pass: each rule alone, each with its share of a fresh deadline. `patches`
    /// is only evaluated for rules that reported a violation (patches alone are dropped anyway).
    fn isolate(&self, members: &[usize], input: &RegoValue) -> Vec<(usize, Verdict)> {
        let n = u32::try_from(members.len().max(1)).unwrap_or(u32::MAX);
        let share = (self.limits.deadline / n)
            .max(MIN_RULE_SHARE)
            .min(self.limits.deadline);
        let undefined = || Ok(RegoValue::Undefined);
        members
            .iter()
            .filter_map(|&i| self.slots.get(i).map(|slot| (i, slot)))
            .map(|(i, slot)| {
                let entries = self.vm.as_ref().map(|vm| (vm, vm.entries.get(i)));
                let run = |which: Which| -> Result<RegoValue, String> {
                    match (entries, which) {
                        (Some((vm, Some((v, _)))), Which::Violations) => {
                            self.run_vm(vm, *v, input, share)
                        }
                        (Some((vm, Some((_, Some(p))))), Which::Patches) => {
                            self.run_vm(vm, *p, input, share)
                        }
                        (Some((_, Some((_, None)))), Which::Patches) => undefined(),
                        (Some((_, None)), _) => {
                            Err("internal: the rule has no entry point in the VM program".into())
                        }
                        (None, Which::Violations) => {
                            self.run_engine(&slot.violations_path(), input, share)
                        }
                        (None, Which::Patches) if slot.has_patches => {
                            self.run_engine(&slot.patches_path(), input, share)
                        }
                        (None, Which::Patches) => undefined(),
                    }
                };
                let verdict = match run(Which::Violations) {
                    Err(e) => Verdict::Failed(e),
                    Ok(v)
                        if v == RegoValue::Undefined || items(&v).is_some_and(|l| l.is_empty()) =>
                    {
                        verdict_from_values(&v, &RegoValue::Undefined)
                    }
                    Ok(v) => match run(Which::Patches) {
                        Ok(p) => verdict_from_values(&v, &p),
                        Err(e) => Verdict::Failed(e),
                    },
                };
                (i, verdict)
            })
            .collect()
    }

    fn timer(limit: Duration) -> ExecutionTimerConfig {
        ExecutionTimerConfig {
            limit,
            check_interval: NonZeroU32::new(TIMER_CHECK_INTERVAL).unwrap_or(NonZeroU32::MIN),
        }
    }

    fn run_vm(
        &self,
        vm: &VmProgram,
        entry: usize,
        input: &RegoValue,
        limit: Duration,
    ) -> Result<RegoValue, String> {
        let mut m = RegoVM::new();
        m.load_program(vm.program.clone());
        m.set_data(vm.data.clone()).map_err(|e| e.to_string())?;
        m.set_strict_builtin_errors(false);
        m.set_max_instructions(self.limits.max_instructions);
        m.set_execution_timer_config(Some(Self::timer(limit)));
        m.set_input(input.clone());
        // VM errors carry a program counter but no source position (mapping `pc` through the
        // span table pointed at the wrong module in tests), so the message is kept as is; the
        // finding names the rule and its files.
        m.execute_entry_point_by_index(entry)
            .map_err(|e| e.to_string())
    }

    fn run_engine(
        &self,
        rule: &str,
        input: &RegoValue,
        limit: Duration,
    ) -> Result<RegoValue, String> {
        let mut e = self.engine.clone();
        e.set_execution_timer_config(Self::timer(limit));
        e.set_input(input.clone());
        e.eval_rule(rule.to_string())
            .map_err(|err| one_line(&err.to_string()))
    }
}

#[derive(Clone, Copy)]
enum Which {
    Violations,
    Patches,
}

fn compile_vm(
    engine: &Engine,
    data: RegoValue,
    slots: &[Slot],
    dispatch: &Dispatch,
) -> Result<VmProgram, String> {
    // Compile from a clone: compilation switches on print gathering, which the evaluation
    // engine should not carry.
    let mut scratch = engine.clone();
    let compiled = scratch
        .compile_with_entrypoint(&Dispatch::rule(0).into())
        .map_err(|e| one_line(&e.to_string()))?;
    let mut names: Vec<String> = (0..dispatch.groups.len()).map(Dispatch::rule).collect();
    for s in slots {
        names.push(s.violations_path());
        if s.has_patches {
            names.push(s.patches_path());
        }
    }
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let program =
        Compiler::compile_from_policy(&compiled, &refs).map_err(|e| one_line(&e.to_string()))?;
    // `execute_entry_point_by_index` wants the position in the entry-point table, not the rule
    // index that `Program::get_entry_point` returns.
    let index_of = |name: &str| -> Result<usize, String> {
        program
            .get_entry_points()
            .get_index_of(name)
            .ok_or_else(|| format!("internal: entry point {name} missing from the program"))
    };
    let aggregates = (0..dispatch.groups.len())
        .map(|g| index_of(&Dispatch::rule(g)))
        .collect::<Result<Vec<_>, String>>()?;
    let entries = slots
        .iter()
        .map(|s| {
            let v = index_of(&s.violations_path())?;
            let p = if s.has_patches {
                Some(index_of(&s.patches_path())?)
            } else {
                None
            };
            Ok((v, p))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(VmProgram {
        program,
        data,
        aggregates,
        entries,
    })
}

fn outcomes(v: &RegoValue) -> Option<&regorus::value::Object> {
    match v {
        RegoValue::Object(o) => Some(o),
        _ => None,
    }
}

fn verdict_from_aggregate(entry: Option<&RegoValue>) -> Verdict {
    let Some(RegoValue::Object(o)) = entry else {
        return Verdict::Failed("internal: the rule is missing from the aggregate result".into());
    };
    let get = |k: &str| o.get(&RegoValue::from(k)).unwrap_or(&RegoValue::Undefined);
    verdict_from_values(get("violations"), get("patches"))
}

fn verdict_from_values(violations: &RegoValue, patches: &RegoValue) -> Verdict {
    match (parse_violations(violations), parse_patches(patches)) {
        (Ok(violations), Ok(patches)) => Verdict::Reported {
            violations,
            patches,
        },
        (Err(e), _) | (_, Err(e)) => Verdict::Failed(e),
    }
}

fn items(v: &RegoValue) -> Option<Vec<&RegoValue>> {
    match v {
        RegoValue::Set(s) => Some(s.iter().collect()),
        RegoValue::Array(a) => Some(a.iter().collect()),
        _ => None,
    }
}

/// Short JSON of a value for error messages (rule output can be large).
fn show(v: &RegoValue) -> String {
    let s = serde_json::to_string(v).unwrap_or_else(|_| "<unprintable>".into());
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s
    }
}

fn parse_violations(v: &RegoValue) -> Result<Vec<Violation>, String> {
    if *v == RegoValue::Undefined {
        return Ok(Vec::new());
    }
    let bad = |what: &str, item: &RegoValue| {
        format!(
            "malformed output: each of `violations` must be {what}; got {}",
            show(item)
        )
    };
    let list = items(v).ok_or_else(|| bad("an object in a set", v))?;
    let mut out = Vec::with_capacity(list.len());
    for item in list {
        let RegoValue::Object(o) = item else {
            return Err(bad(
                "an object {\"msg\": string, \"path\"?: JSON pointer}",
                item,
            ));
        };
        let msg = match o.get(&RegoValue::from("msg")) {
            Some(RegoValue::String(s)) if !s.trim().is_empty() => s.to_string(),
            _ => return Err(bad("an object with a non-empty string `msg`", item)),
        };
        let path = match o.get(&RegoValue::from("path")) {
            None | Some(RegoValue::Undefined) | Some(RegoValue::Null) => None,
            Some(RegoValue::String(s)) if s.is_empty() || s.starts_with('/') => Some(s.to_string()),
            Some(_) => {
                return Err(bad(
                    "an object whose `path` is a JSON pointer (\"/spec/x\")",
                    item,
                ));
            }
        };
        let severity = match o.get(&RegoValue::from("severity")) {
            None | Some(RegoValue::Undefined) | Some(RegoValue::Null) => None,
            Some(RegoValue::String(s)) => match s.parse::<Severity>() {
                Ok(severity) => Some(severity),
                Err(_) => {
                    return Err(bad(
                        "an object whose `severity` is info, low, medium, high or critical",
                        item,
                    ));
                }
            },
            Some(_) => {
                return Err(bad(
                    "an object whose `severity` is info, low, medium, high or critical",
                    item,
                ));
            }
        };
        let action = match o.get(&RegoValue::from("action")) {
            None | Some(RegoValue::Undefined) | Some(RegoValue::Null) => None,
            Some(RegoValue::String(s)) => match s.parse::<Action>() {
                Ok(Action::Off) | Err(_) => {
                    return Err(bad(
                        "an object whose `action` is deny, warn, mutate or audit",
                        item,
                    ));
                }
                Ok(action) => Some(action),
            },
            Some(_) => {
                return Err(bad(
                    "an object whose `action` is deny, warn, mutate or audit",
                    item,
                ));
            }
        };
        let cause = match o.get(&RegoValue::from("cause")) {
            None | Some(RegoValue::Undefined) | Some(RegoValue::Null) => None,
            Some(RegoValue::String(s)) if !s.is_empty() => Some(s.to_string()),
            Some(_) => return Err(bad("an object whose `cause` is a non-empty string", item)),
        };
        out.push(Violation {
            msg,
            path,
            severity,
            action,
            cause,
        });
    }
    Ok(out)
}

fn parse_patches(v: &RegoValue) -> Result<Vec<PatchOperation>, String> {
    if *v == RegoValue::Undefined {
        return Ok(Vec::new());
    }
    let list = items(v).ok_or_else(|| {
        format!(
            "malformed output: `patches` must be a set of RFC 6902 operations; got {}",
            show(v)
        )
    })?;
    list.into_iter()
        .map(|item| {
            let json = serde_json::to_value(item).map_err(|e| e.to_string())?;
            PatchOperation::deserialize(&json).map_err(|e| {
                format!(
                    "malformed output: each of `patches` must be an RFC 6902 operation; got {} ({e})",
                    show(item)
                )
            })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn rv(json: &str) -> RegoValue {
        RegoValue::from_json_str(json).unwrap()
    }

    #[test]
    fn the_aggregate_module_mentions_patches_only_where_declared() {
        let slots = [
            Slot::new("hook_deadline".into(), true),
            Slot::new("wave".into(), false),
        ];
        let src = aggregate_module(
            &slots,
            &Dispatch::new(&[Restriction::default(), Restriction::default()], true),
        );
        assert!(src.contains(
            "\"hook_deadline\": {\"violations\": data.syncguard.rules.hook_deadline.violations, \"patches\": data.syncguard.rules.hook_deadline.patches},"
        ));
        assert!(src.contains("\"wave\": {\"violations\": data.syncguard.rules.wave.violations},"));
    }

    #[test]
    fn objects_evaluate_only_the_rules_that_can_report_on_them() {
        let r = |kinds: Option<&[&str]>, hooks_only: bool| Restriction {
            kinds: kinds.map(|ks| ks.iter().map(|k| (*k).to_string()).collect()),
            hooks_only,
            unapplied: false,
        };
        // 0: every object, 1: Jobs, 2: hooks, 3: hook Pods and Jobs, 4: also unapplied objects.
        let mut unapplied = r(None, false);
        unapplied.unapplied = true;
        let d = Dispatch::new(
            &[
                r(None, false),
                r(Some(&["Job"]), false),
                r(None, true),
                r(Some(&["Pod", "Job"]), true),
                unapplied.clone(),
            ],
            true,
        );
        let group = |kind: &str, hook: bool| {
            let input = rv(&format!(
                r#"{{"resource": {{"kind": "{kind}"}}, "sync": {{"is_hook": {hook}}}}}"#
            ));
            d.groups[d.group_of(&input)].clone()
        };
        assert_eq!(group("ConfigMap", false), [0, 4]);
        assert_eq!(group("ConfigMap", true), [0, 2, 4]);
        assert_eq!(group("Job", false), [0, 1, 4]);
        assert_eq!(group("Job", true), [0, 1, 2, 3, 4]);
        assert_eq!(group("Pod", true), [0, 2, 3, 4]);
        assert_eq!(group("Pod", false), [0, 4]);
        // Malformed input: no kind, no sync facts.
        assert_eq!(d.groups[d.group_of(&rv("{}"))], [0, 4]);
        // A helm test Pod (a hook with no type Argo CD runs) and `hook: Skip`: only rule 4.
        for reason in ["garbage-hook", "skip"] {
            let input = rv(&format!(
                r#"{{"resource": {{"kind": "Pod"}}, "sync": {{"is_hook": true, "ignored": {{"reason": "{reason}"}}}}}}"#
            ));
            assert_eq!(d.groups[d.group_of(&input)], [4], "{reason}");
        }
        // A delete hook is applied (at deletion): every rule that admits it.
        let delete_hook = rv(
            r#"{"resource": {"kind": "Job"}, "sync": {"is_hook": true, "ignored": {"reason": "delete-hook-only"}}}"#,
        );
        assert_eq!(d.groups[d.group_of(&delete_hook)], [0, 1, 2, 3, 4]);
        // Disabled: one group with every rule, but unapplied objects are still filtered.
        let off = Dispatch::new(&[r(None, false), r(Some(&["Job"]), true), unapplied], false);
        assert_eq!(off.groups, [vec![0, 1, 2], vec![2]]);
        let skipped = rv(r#"{"sync": {"ignored": {"reason": "skip"}}}"#);
        assert_eq!(off.groups[off.group_of(&skipped)], [2]);
    }

    #[test]
    fn violations_need_a_message_and_a_json_pointer_path() {
        assert_eq!(
            parse_violations(&rv(r#"[{"msg": "m", "path": "/spec"}, {"msg": "n"}]"#)).unwrap(),
            vec![
                Violation {
                    msg: "m".into(),
                    path: Some("/spec".into()),
                    severity: None,
                    action: None,
                    cause: None,
                },
                Violation {
                    msg: "n".into(),
                    path: None,
                    severity: None,
                    action: None,
                    cause: None,
                }
            ]
        );
        assert_eq!(
            parse_violations(&rv(r#"[{"msg": "m", "cause": "hooks of r"}]"#)).unwrap()[0].cause,
            Some("hooks of r".into())
        );
        assert!(parse_violations(&rv(r#"[{"msg": "m", "cause": 3}]"#)).is_err());
        assert_eq!(
            parse_violations(&rv(r#"[{"msg": "m", "severity": "info"}]"#)).unwrap()[0].severity,
            Some(Severity::Info)
        );
        assert_eq!(
            parse_violations(&rv(r#"[{"msg": "m", "action": "warn"}]"#)).unwrap()[0].action,
            Some(Action::Warn)
        );
        for bad in ["off", "block", "1"] {
            let v = format!(r#"[{{"msg": "m", "action": "{bad}"}}]"#);
            assert!(parse_violations(&rv(&v)).unwrap_err().contains("`action`"));
        }
        assert!(
            parse_violations(&rv(r#"[{"msg": "m", "severity": "urgent"}]"#))
                .unwrap_err()
                .contains("`severity`")
        );
        assert!(
            parse_violations(&rv(r#"["just a string"]"#))
                .unwrap_err()
                .contains("must be an object")
        );
        assert!(parse_violations(&rv(r#"[{"msg": ""}]"#)).is_err());
        assert!(parse_violations(&rv(r#"[{"msg": "m", "path": "spec.x"}]"#)).is_err());
        assert_eq!(parse_violations(&RegoValue::Undefined).unwrap(), vec![]);
    }

    #[test]
    fn patches_must_be_rfc6902_operations() {
        let ops = parse_patches(&rv(r#"[{"op": "add", "path": "/spec/x", "value": 1}]"#)).unwrap();
        assert_eq!(ops.len(), 1);
        let err = parse_patches(&rv(r#"[{"op": "upsert", "path": "/spec/x"}]"#)).unwrap_err();
        assert!(err.contains("RFC 6902"), "{err}");
    }
}
