//! `syncguard plan` renderings: a timeline for people, JSON for machines.
//!
//! Both are views of the same [`PlanReport`]: the plans (one per Application when the input
//! holds several), where each task's object was written, and the plain-words notes that explain
//! the parts of Argo CD's ordering people get wrong.

use std::fmt::Write as _;

use serde::Serialize;

use super::style::Style;
use crate::manifest::SourceLocation;
use crate::model::Resource;
use crate::model::argo::SyncPhase;
use crate::model::health::{HealthCheckSource, health_check_source};
use crate::model::refs::is_cluster_scoped;
use crate::model::version::{ArgoCdVersion, Behaviours};
use crate::plan::forecast::Forecast;
use crate::plan::tick::OperationPhase;
use crate::plan::{Gate, IgnoreReason, Plan, Step, Task, TaskSource};

/// One planned Application (or the whole input when it names none).
#[derive(Debug, Serialize)]
pub struct PlannedApp {
    /// The Application name from tracking ids / instance labels, if any.
    pub application: Option<String>,
    /// The destination namespace the plan assumed.
    pub destination_namespace: String,
    /// The plan.
    pub plan: Plan,
    /// Where each task's object was written, by [`Task::index`] (None for prune tasks and the
    /// auto-created Namespace).
    pub locations: Vec<Option<SourceLocation>>,
    /// Plain-words explanations (see [`explain`]).
    pub notes: Vec<String>,
    /// With `--live`: how the sync would end if the live objects kept their state (the tick
    /// model over their health as Argo CD assesses it); `None` without live objects.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forecast: Option<Forecast>,
}

/// Everything `syncguard plan` prints.
#[derive(Debug, Serialize)]
pub struct PlanReport {
    /// The Argo CD release planned for (`--argocd-version`), its engine and behaviours.
    pub argocd: PlannedFor,
    /// One entry per Application.
    pub applications: Vec<PlannedApp>,
    /// Input problems (`file:line: message`); the plan covers everything else.
    pub errors: Vec<String>,
}

/// Which Argo CD a plan is for.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PlannedFor {
    /// The release, as given.
    pub version: ArgoCdVersion,
    /// The sync engine it runs: standalone gitops-engine (up to 3.2) or the one inside argo-cd.
    pub engine: &'static str,
    /// The behaviours of the release table it has (`docs/argocd-versions.md`).
    pub behaviours: Behaviours,
}

impl From<ArgoCdVersion> for PlannedFor {
    fn from(version: ArgoCdVersion) -> Self {
        PlannedFor {
            version,
            engine: version.engine(),
            behaviours: version.behaviours(),
        }
    }
}

impl PlannedApp {
    /// Builds the view: resolves locations and writes the notes.
    pub fn new(
        application: Option<String>,
        destination_namespace: String,
        plan: Plan,
        targets: &[Resource],
    ) -> Self {
        let mut locations = vec![None; plan.tasks().count()];
        for task in plan.tasks() {
            if let (TaskSource::Target { index }, Some(slot)) =
                (task.source, locations.get_mut(task.index))
            {
                *slot = targets.get(index).and_then(|r| r.locate(""));
            }
        }
        let notes = explain(&plan, targets);
        Self {
            application,
            destination_namespace,
            plan,
            locations,
            notes,
            forecast: None,
        }
    }

    /// With the forecast of `plan --live`.
    pub fn with_forecast(mut self, forecast: Option<Forecast>) -> Self {
        self.forecast = forecast;
        self
    }
}

/// Notes in plain words about what surprises people in this plan:
///
/// * hooks of an earlier phase that run before objects with *lower* waves of a later phase
///   (waves only order objects inside one phase — the seed incident);
/// * hooks that block the rest of the sync until they complete;
/// * non-hook objects in health-gated steps that may never become Healthy without a controller
///   (LoadBalancer Services, Ingresses, PVCs), which stall every later step;
/// * an invalid sync (kinds the cluster does not serve).
pub fn explain(plan: &Plan, targets: &[Resource]) -> Vec<String> {
    let mut notes = Vec::new();
    let tasks: Vec<&Task> = plan.steps.iter().flat_map(|s| s.tasks.iter()).collect();
    for (i, hook) in tasks.iter().enumerate() {
        if !hook.is_hook || hook.phase == SyncPhase::Sync {
            continue;
        }
        let later: Vec<&Task> = tasks[i + 1..]
            .iter()
            .copied()
            .filter(|t| t.phase > hook.phase)
            .collect();
        let lower = later.iter().filter(|t| t.wave < hook.wave).count();
        if lower == 0 {
            continue;
        }
        let mut phases: Vec<SyncPhase> = later.iter().map(|t| t.phase).collect();
        phases.dedup();
        let phases: Vec<&str> = phases.iter().map(|p| p.as_str()).collect();
        notes.push(format!(
            "The {} hook {} (wave {}) runs before every {}-phase object: {}. Waves only order \
             objects inside one phase, so the lower waves do not help: every {} step finishes \
             before the next phase starts.",
            hook.phase,
            describe(hook),
            hook.wave,
            phases.join("/"),
            list_with_waves(&later, 6),
            hook.phase,
        ));
    }
    for step in &plan.steps {
        let hooks: Vec<&Task> = step.tasks.iter().filter(|t| t.is_hook).collect();
        if hooks.is_empty() || step.gate == Gate::None {
            continue;
        }
        let after = plan
            .steps
            .iter()
            .skip_while(|s| !std::ptr::eq(*s, step))
            .skip(1)
            .map(|s| s.tasks.len())
            .sum::<usize>();
        if after > 0 {
            notes.push(format!(
                "Nothing after {} wave {} is applied until {} complete{}; the remaining {} \
                 task{} wait{}, with no timeout by default.",
                step.phase,
                step.wave,
                hooks
                    .iter()
                    .map(|t| describe(t))
                    .collect::<Vec<_>>()
                    .join(", "),
                if hooks.len() == 1 { "s" } else { "" },
                after,
                if after == 1 { "" } else { "s" },
                if after == 1 { "s" } else { "" },
            ));
        }
    }
    for step in &plan.steps {
        if step.gate != Gate::HooksAndResources || step.is_final {
            continue;
        }
        for task in step.tasks.iter().filter(|t| !t.is_hook && !t.is_prune) {
            if let Some(why) = may_never_be_healthy(task, targets) {
                notes.push(format!(
                    "{} is in a health-gated step ({} wave {}) but {}: every later step waits for \
                     it.",
                    describe(task),
                    step.phase,
                    step.wave,
                    why
                ));
            }
        }
    }
    if !plan.invalid.is_empty() {
        notes.push(format!(
            "Argo CD will refuse this sync (\"one or more synchronization tasks are not valid\"): \
             the cluster does not serve {}. Ship the CRD in the same sync or annotate the object \
             with argocd.argoproj.io/sync-options: SkipDryRunOnMissingResource=true.",
            plan.invalid
                .iter()
                .map(|i| i.object.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    notes
}

/// Why a non-hook object may stay Progressing forever (spec §10-9, §10-10), if it may.
fn may_never_be_healthy(task: &Task, targets: &[Resource]) -> Option<&'static str> {
    let TaskSource::Target { index } = task.source else {
        return None;
    };
    let r = targets.get(index)?;
    match (task.group.as_str(), task.kind.as_str()) {
        ("", "Service")
            if r.raw.pointer("/spec/type").and_then(|v| v.as_str()) == Some("LoadBalancer") =>
        {
            Some("a LoadBalancer Service stays Progressing until a load balancer is assigned")
        }
        ("networking.k8s.io" | "extensions", "Ingress") => {
            Some("an Ingress stays Progressing until its controller publishes an address")
        }
        ("", "PersistentVolumeClaim") => Some(
            "a PVC stays Progressing while Pending (a WaitForFirstConsumer class binds only once a \
             pod uses it, and that pod is in a later step)",
        ),
        _ => None,
    }
}

fn describe(t: &Task) -> String {
    format!("{} {}", t.kind, display_name(t))
}

/// `namespace/name`, or just `name` for cluster-scoped kinds (Argo CD fills the destination
/// namespace into those too, but showing it would only confuse).
fn display_name(t: &Task) -> String {
    if t.namespace.is_empty() || is_cluster_scoped(&t.group, &t.kind) {
        t.name.clone()
    } else {
        format!("{}/{}", t.namespace, t.name)
    }
}

fn list_with_waves(tasks: &[&Task], max: usize) -> String {
    let mut parts: Vec<String> = tasks
        .iter()
        .take(max)
        .map(|t| format!("{} (wave {})", describe(t), t.wave))
        .collect();
    if tasks.len() > max {
        parts.push(format!("{} more", tasks.len() - max));
    }
    match parts.len() {
        0 => String::new(),
        1 => parts.remove(0),
        n => {
            let last = parts.remove(n - 1);
            format!("{} and {}", parts.join(", "), last)
        }
    }
}

/// The human-readable timeline.
pub fn render_text(report: &PlanReport, color: bool) -> String {
    let st = Style { on: color };
    let mut out = String::new();
    for (n, app) in report.applications.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        render_app(&mut out, app, st);
    }
    let _ = writeln!(
        out,
        "\n{}",
        st.dim(&format!(
            "Planned for Argo CD {} ({}); --argocd-version picks another release.",
            report.argocd.version, report.argocd.engine
        ))
    );
    if !report.errors.is_empty() {
        let _ = writeln!(out, "\n{}", st.red(&st.bold("Input errors (not planned)")));
        for e in &report.errors {
            let _ = writeln!(out, "  {e}");
        }
    }
    out
}

fn render_app(out: &mut String, app: &PlannedApp, st: Style) {
    let plan = &app.plan;
    let task_count = plan.tasks().count();
    let title = match &app.application {
        Some(a) => format!("Application {a}"),
        None => "Sync plan".to_string(),
    };
    let _ = writeln!(
        out,
        "{} — {} task{} in {} step{}{}, destination namespace \"{}\"",
        st.bold(&title),
        task_count,
        plural(task_count),
        plan.steps.len(),
        plural(plan.steps.len()),
        if plan.sync_fail.is_some() {
            " (+ SyncFail on failure)"
        } else {
            ""
        },
        app.destination_namespace
    );
    let mut current_phase = None;
    for step in &plan.steps {
        if current_phase != Some(step.phase) {
            current_phase = Some(step.phase);
            let _ = writeln!(out, "\n{}", st.bold(step.phase.as_str()));
        }
        render_step(out, app, step, st);
    }
    if let Some(step) = &plan.sync_fail {
        let _ = writeln!(out, "\n{}", st.bold("SyncFail (only if the sync fails)"));
        render_step(out, app, step, st);
    }
    if !plan.ignored.is_empty() {
        let _ = writeln!(out, "\n{}", st.bold("Never applied by this sync"));
        for ig in &plan.ignored {
            let _ = writeln!(
                out,
                "  {}  {}",
                st.red(&ig.object.to_string()),
                st.dim(ignore_reason(ig.reason))
            );
        }
    }
    if let Some(f) = &app.forecast {
        render_forecast(out, f, st);
    }
    if !app.notes.is_empty() {
        let _ = writeln!(out, "\n{}", st.bold("In plain words"));
        for note in &app.notes {
            let _ = writeln!(out, "  • {note}");
        }
    }
}

/// "With the live objects as they are": where the sync stops, or how it ends.
fn render_forecast(out: &mut String, f: &Forecast, st: Style) {
    let _ = writeln!(
        out,
        "\n{}",
        st.bold("With the live objects as they are (--live)")
    );
    let step = f
        .step
        .map(|s| format!(" in {} wave {}", s.phase.as_str(), s.wave))
        .unwrap_or_default();
    if f.is_stuck() {
        let _ = writeln!(
            out,
            "  {} the sync would stop{step}: \"{}\"",
            st.red("✗"),
            f.message
        );
        for w in &f.waiting_on {
            let health = match (&w.health, &w.message) {
                (Some(h), Some(m)) => format!("{h}: {m}"),
                (Some(h), None) => h.clone(),
                (None, _) => "created by this sync, not live yet".to_string(),
            };
            let _ = writeln!(
                out,
                "    waits for {}/{} {} ({health})",
                w.key.kind,
                w.key.name,
                st.dim(&format!("[{}]", w.key)),
            );
        }
        let _ = writeln!(
            out,
            "  {}",
            st.dim("Nothing ends this wait unless those objects change: Argo CD has no timeout of its own.")
        );
    } else {
        let mark = if f.phase == OperationPhase::Succeeded {
            st.green("✓")
        } else {
            st.red("✗")
        };
        let _ = writeln!(
            out,
            "  {mark} the sync would end {:?}{step}: \"{}\"",
            f.phase, f.message
        );
    }
}

fn render_step(out: &mut String, app: &PlannedApp, step: &Step, st: Style) {
    let gate = if step.conditional {
        "all SyncFail tasks run together, whatever their waves".to_string()
    } else {
        match step.gate {
            Gate::None => "final step: not waited for".to_string(),
            Gate::Hooks => "final step: the sync ends when its hooks complete".to_string(),
            Gate::HooksAndResources if step.is_final => {
                "final step: the sync ends when its hooks complete and objects are Healthy"
                    .to_string()
            }
            Gate::HooksAndResources if step.tasks.iter().any(|t| t.is_hook) => {
                "the next step waits until its hooks complete and objects are Healthy".to_string()
            }
            Gate::HooksAndResources => {
                "the next step waits until these objects are Healthy".to_string()
            }
        }
    };
    let _ = writeln!(
        out,
        "  {} {}",
        st.cyan(&format!("wave {}", step.wave)),
        st.dim(&format!("· {gate}"))
    );
    for task in &step.tasks {
        let api = if task.group.is_empty() {
            task.version.clone()
        } else {
            format!("{}/{}", task.group, task.version)
        };
        let mut tags: Vec<String> = Vec::new();
        if task.is_hook {
            tags.push(st.yellow(&format!("{} hook", task.phase)));
        }
        if task.is_prune {
            tags.push(st.red("prune"));
        }
        if task.prune_last {
            tags.push("PruneLast".to_string());
        }
        if let Some(b) = &task.bubbled {
            tags.push(format!(
                "moved here from {} wave {}: goes before {} {}",
                b.from_phase,
                b.from_wave,
                b.dependant.kind,
                if b.dependant.namespace.is_empty() {
                    b.dependant.name.clone()
                } else {
                    format!("{}/{}", b.dependant.namespace, b.dependant.name)
                }
            ));
        }
        if task.before_dry_run && task.bubbled.is_none() {
            tags.push(
                "CreateNamespace=true: created before the dry run, then this step at once".into(),
            );
        }
        if task.generated_name {
            tags.push("name generated per sync".to_string());
        }
        if task.skip_dry_run {
            tags.push("dry-run skipped".to_string());
        }
        if !task.is_prune && step.gate == Gate::HooksAndResources {
            match health_check_source(&task.group, &task.kind) {
                None if task.is_hook => tags.push("no health check: completes at once".into()),
                None => tags.push("no health check: never holds the next step".into()),
                Some(HealthCheckSource::BundledLua) => {
                    tags.push("health from Argo CD's bundled Lua check".into())
                }
                Some(HealthCheckSource::Builtin) => {}
            }
        }
        let loc = app
            .locations
            .get(task.index)
            .and_then(|l| l.as_ref())
            .map(|l| format!("  {}", st.dim(&l.to_string())))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "    {:>3}. {} {}{}{}",
            task.index + 1,
            st.dim(&format!("{api}/{}", task.kind)),
            display_name(task),
            if tags.is_empty() {
                String::new()
            } else {
                format!("  [{}]", tags.join(", "))
            },
            loc
        );
    }
}

fn ignore_reason(r: IgnoreReason) -> &'static str {
    match r {
        IgnoreReason::Skip => "hook: Skip — never applied and never pruned",
        IgnoreReason::GarbageHook => {
            "hook annotation with no type Argo CD knows — silently dropped, never applied"
        }
        IgnoreReason::DeleteHookOnly => {
            "PreDelete/PostDelete hook — runs only when the Application is deleted"
        }
        IgnoreReason::HooksSkipped => "hook dropped: hooks are skipped for this sync",
        IgnoreReason::DuplicateTarget => "duplicate of another object with the same key",
        IgnoreReason::NeverPruned => "live hook or Skip object — Argo CD never prunes it",
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The machine-readable plan (pretty JSON, stable field names).
pub fn render_json(report: &PlanReport) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(report)
}
