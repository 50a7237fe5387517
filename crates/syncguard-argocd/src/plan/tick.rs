//! The execution model: one call of [`tick`] is one `syncContext.Sync()` of Argo CD (spec §5, §6).
//!
//! Argo CD runs a sync operation as repeated calls, one per reconcile of the Application. Every
//! call re-derives the task list from the manifests *and the current live state*, attaches the
//! results stored so far (by `group/kind/namespace/name:phase`), and moves the state machine on
//! by at most one step. [`tick`] does exactly that: it re-plans from the [`PlanInput`] with the
//! live objects that still exist (so pruned objects drop out and prune waves are re-mirrored,
//! as in Argo CD), then runs the state machine against a caller-described [`World`].
//!
//! The caller supplies what Argo CD would read from the cluster: whether each object exists,
//! whether it is being deleted, whether it carries the hook finalizer, its health verdict, and
//! whether applying it succeeds. Objects the caller does not describe follow the simulator's
//! own bookkeeping ([`SyncState::tracked`]): what this operation applied exists (with
//! [`World::default_health`]), what it deleted is gone, everything else is as in
//! `PlanInput::live`.
//!
//! The simulator applies one rule of Argo CD's health code itself, because it depends on the
//! observation flags rather than on the verdict: an object with a `deletionTimestamp` and
//! without the hook finalizer reads `Progressing "Pending deletion"`.
//!
//! That is why [`tick`] takes the [`PlanInput`] rather than a fixed [`super::Plan`]: the task
//! list of a later tick can differ from the first plan (pruned objects vanish, an auto-created
//! namespace that now exists is no longer a task), and Argo CD's behaviour depends on it.
//!
//! Approximations: the success message of an apply is kubectl-like (`job.batch/x created`);
//! discovery failures use client-go's "the server could not find the requested resource".
//! Not modelled: server-side dry-run specifics, `Replace`/`Force`, CRD `Established` waits,
//! permission checks, the resources filter of selective sync (use `AppSettings::skip_hooks`),
//! delete/finalizer API errors, `dryRun` operations, `controller.sync.timeout.seconds`, and
//! the 2-second wave delay itself (the SyncWaveHook call is recorded as an [`Action`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::model::argo::{DeletePolicy, HOOK_FINALIZER, SyncPhase};
use crate::model::health::{HealthStatus, PENDING_DELETION};

use super::{ObjectKey, Overrides, PlanInput, Task, build};

/// Which Argo CD to simulate: the behaviours of the release table ([`Behaviours`],
/// `model::version::CHANGES`) that the sync loop depends on. Before 3.4 (without them): a running
/// task whose object vanished waits forever ([`Behaviour::VanishedTaskFailsSync`], Δ1); the
/// final-step check counts hooks of the current step as remaining and names the next task to
/// run, with the legacy "waiting for …" wording where the first task decides, and the legacy
/// prune-confirmation message ([`Behaviour::RunningMessageByKind`], Δ2, C30); an apply failure
/// runs the SyncFail hooks at once instead of waiting for running hooks
/// ([`Behaviour::SyncFailAwaitedAfterApplyFailure`], Δ3); a SyncWaveHook error gives `Failed`
/// ([`Behaviour::WaveHookFailureErrors`], Δ4); hook refresh clears the result code
/// ([`Behaviour::HookResultsKeepStatus`]); terminate deletes only running hooks
/// ([`Behaviour::TerminateDeletesHooks`]); before 3.5 invalid tasks' errors are not listed in
/// the message ([`Behaviour::InvalidTaskMessagesListed`]). Δ5 (the app-level `Prune=` default) is decided when the
/// plan is built ([`super::AppSettings::behaviours`]); not covered: Δ6 (`Replace`/`Force` are
/// not simulated), Δ7 (health is caller-supplied).
pub use crate::model::version::{Behaviour, Behaviours};

/// A health verdict the caller supplies for a live object (spec §5.2, §8.9): one of Argo CD's
/// health statuses, or one of the two outcomes where there is none.
///
/// How a status drives the sync: Healthy completes; Progressing and Suspended block (a
/// suspended hook Job runs forever); Degraded fails the task; Unknown fails a hook and blocks a
/// resource; Missing (only via a custom health override) lets a hook succeed and blocks a
/// resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HealthVerdict {
    /// What the kind's health check returned.
    Status(HealthStatus),
    /// The kind has no health check (nil health): completes on the first refresh.
    NoCheck,
    /// The health check itself errored: a hook ends `Error`, a resource blocks.
    Error,
}

impl HealthVerdict {
    /// `Healthy`, the verdict of an object nobody describes.
    pub const HEALTHY: HealthVerdict = HealthVerdict::Status(HealthStatus::Healthy);

    /// The name in reports: the status's spelling, `NoCheck` or `Error`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Status(s) => s.as_str(),
            Self::NoCheck => "NoCheck",
            Self::Error => "Error",
        }
    }
}

impl Default for HealthVerdict {
    fn default() -> Self {
        Self::HEALTHY
    }
}

impl From<HealthStatus> for HealthVerdict {
    fn from(s: HealthStatus) -> Self {
        Self::Status(s)
    }
}

impl Serialize for HealthVerdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the caller says about one object at the start of a tick. Unset fields fall back to
/// the simulator's bookkeeping (see the module docs).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Observation {
    /// The object exists in the cluster.
    pub exists: Option<bool>,
    /// It has a `deletionTimestamp` (being deleted).
    pub deletion_timestamp: Option<bool>,
    /// It carries `argocd.argoproj.io/hook-finalizer`.
    pub hook_finalizer: Option<bool>,
    /// Its health verdict.
    pub health: Option<HealthVerdict>,
    /// The health message (Argo CD copies it into the task result).
    pub health_message: Option<String>,
}

impl Observation {
    /// This verdict whenever the object exists; existence itself follows the bookkeeping
    /// (so a hook "is Progressing" only once it has been created).
    pub fn health(verdict: HealthVerdict) -> Self {
        Self {
            health: Some(verdict),
            ..Self::default()
        }
    }

    /// The object exists (whatever the bookkeeping says).
    pub fn present() -> Self {
        Self {
            exists: Some(true),
            ..Self::default()
        }
    }

    /// An object that does not exist.
    pub fn gone() -> Self {
        Self {
            exists: Some(false),
            ..Self::default()
        }
    }

    /// An existing object that is being deleted (e.g. held by a finalizer).
    pub fn deleting() -> Self {
        Self {
            exists: Some(true),
            deletion_timestamp: Some(true),
            ..Self::default()
        }
    }

    /// Sets the health message.
    pub fn message(mut self, m: &str) -> Self {
        self.health_message = Some(m.to_string());
        self
    }
}

/// The cluster as the caller describes it for one tick.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct World {
    /// Explicit observations. A key without namespace also matches a task whose namespace
    /// Argo CD filled (cluster-scoped objects).
    pub objects: BTreeMap<ObjectKey, Observation>,
    /// Health of existing objects without an explicit verdict.
    pub default_health: HealthVerdict,
    /// Objects whose apply fails, with the error text.
    pub apply_errors: BTreeMap<ObjectKey, String>,
    /// Objects whose (first-tick, client-side) dry-run fails, with the error text.
    pub dry_run_errors: BTreeMap<ObjectKey, String>,
    /// Objects the diff says are not modified (`ApplyOutOfSyncOnly=true` skips them).
    pub in_sync: BTreeSet<ObjectKey>,
    /// The Application carries a deletion-approved annotation newer than the operation start.
    pub prune_confirmed: bool,
    /// The SyncWaveHook (wave delay) fails with this error.
    pub sync_wave_hook_error: Option<String>,
}

impl World {
    /// A world where everything follows the bookkeeping and is Healthy.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets an explicit observation.
    pub fn observe(mut self, key: ObjectKey, o: Observation) -> Self {
        self.objects.insert(key, o);
        self
    }

    /// The object has this verdict whenever it exists.
    pub fn with_health(self, key: ObjectKey, verdict: HealthVerdict) -> Self {
        self.observe(key, Observation::health(verdict))
    }

    /// Applying the object fails with this error.
    pub fn apply_error(mut self, key: ObjectKey, message: &str) -> Self {
        self.apply_errors.insert(key, message.to_string());
        self
    }

    /// The dry-run of the object fails with this error.
    pub fn dry_run_error(mut self, key: ObjectKey, message: &str) -> Self {
        self.dry_run_errors.insert(key, message.to_string());
        self
    }

    /// The explicit observation of `key` (or of its cluster-scoped form).
    pub fn explicit(&self, key: &ObjectKey) -> Option<&Observation> {
        self.objects
            .get(key)
            .or_else(|| self.objects.get(&key.cluster_scoped()))
    }

    fn error_for<'a>(map: &'a BTreeMap<ObjectKey, String>, key: &ObjectKey) -> Option<&'a String> {
        map.get(key).or_else(|| map.get(&key.cluster_scoped()))
    }
}

/// The phase of the operation, of one task, and the result code of one apply or prune: Argo
/// CD's spellings, shared with the live reader.
pub use crate::model::phase::{OperationPhase, ResultCode, TaskPhase};

/// One stored per-task result, as in the Application's `operationState.syncResult.resources`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TaskResult {
    /// The object.
    pub object: ObjectKey,
    /// The task's phase.
    pub phase: SyncPhase,
    /// The task is a hook.
    pub is_hook: bool,
    /// Apply/prune outcome, if any.
    pub status: Option<ResultCode>,
    /// Execution state.
    pub operation: TaskPhase,
    /// Latest non-empty message.
    pub message: String,
    /// 1-based order in which results were first recorded.
    pub order: usize,
}

/// Why a hook object was deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum HookDeleteReason {
    /// `BeforeHookCreation`: the old object goes before the hook is created again.
    BeforeHookCreation,
    /// `HookSucceeded`: the whole operation succeeded.
    HookSucceeded,
    /// `HookFailed`: the operation failed.
    HookFailed,
    /// The operation was terminated (or the SyncWaveHook failed) while the hook ran.
    Terminated,
}

/// Something the simulated Argo CD did to the cluster (or called) during one tick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    /// `kubectl apply` (or create) succeeded.
    Applied {
        /// Object.
        object: ObjectKey,
        /// Task phase.
        phase: SyncPhase,
    },
    /// The apply failed.
    ApplyFailed {
        /// Object.
        object: ObjectKey,
        /// Task phase.
        phase: SyncPhase,
        /// Error.
        message: String,
    },
    /// The first-tick dry-run failed for this object.
    DryRunFailed {
        /// Object.
        object: ObjectKey,
        /// Task phase.
        phase: SyncPhase,
        /// Error.
        message: String,
    },
    /// A prune deletion was requested.
    Pruned {
        /// Object.
        object: ObjectKey,
    },
    /// A prune task ended without deleting.
    PruneSkipped {
        /// Object.
        object: ObjectKey,
        /// Why ("ignored (requires pruning)" / "ignored (no prune)").
        message: String,
    },
    /// A hook object was deleted.
    HookDeleted {
        /// Object.
        object: ObjectKey,
        /// Why.
        reason: HookDeleteReason,
    },
    /// The hook finalizer was removed from a live hook.
    FinalizerRemoved {
        /// Object.
        object: ObjectKey,
    },
    /// The SyncWaveHook (Argo CD's wave delay) was called after applying a step.
    SyncWaveHook {
        /// Step phase.
        phase: SyncPhase,
        /// Step wave.
        wave: i64,
        /// The step was the last pending non-SyncFail step.
        final_wave: bool,
    },
}

/// The simulator's belief about an object it acted on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Tracked {
    /// It exists.
    pub exists: bool,
    /// It carries the hook finalizer.
    pub hook_finalizer: bool,
    /// It is being deleted.
    pub deletion_timestamp: bool,
}

/// A step named by (phase, wave).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StepRef {
    /// Phase.
    pub phase: SyncPhase,
    /// Wave.
    pub wave: i64,
}

/// The operation state between ticks (what Argo CD stores in `status.operationState`, plus the
/// simulator's bookkeeping and a log of the last tick).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncState {
    /// The behaviours of the Argo CD release simulated.
    pub behaviours: Behaviours,
    /// Operation phase.
    pub phase: OperationPhase,
    /// Operation message, in Argo CD's exact wording.
    pub message: String,
    /// Per-task results keyed by Argo CD's result key (`group/kind/namespace/name:phase`).
    pub results: BTreeMap<String, TaskResult>,
    /// Number of ticks run.
    pub ticks: u32,
    /// What the last tick did, in order.
    pub actions: Vec<Action>,
    /// The step the last tick applied, or the step of the first task it waited on.
    pub current_step: Option<StepRef>,
    /// The tasks the last "waiting for …" message is about.
    pub waiting_on: Vec<ObjectKey>,
    /// Objects this operation created, deleted or changed, as the simulator believes them now.
    pub tracked: BTreeMap<ObjectKey, Tracked>,
}

impl SyncState {
    /// A fresh operation: Running, no results.
    pub fn new(behaviours: Behaviours) -> Self {
        Self {
            behaviours,
            phase: OperationPhase::Running,
            message: String::new(),
            results: BTreeMap::new(),
            ticks: 0,
            actions: Vec::new(),
            current_step: None,
            waiting_on: Vec::new(),
            tracked: BTreeMap::new(),
        }
    }

    /// The stored result of a task, if any.
    pub fn result(&self, task: &Task) -> Option<&TaskResult> {
        self.results.get(&task.result_key())
    }

    /// Results in the order they were first recorded.
    pub fn results_in_order(&self) -> Vec<&TaskResult> {
        let mut v: Vec<&TaskResult> = self.results.values().collect();
        v.sort_by_key(|r| r.order);
        v
    }
}

impl Default for SyncState {
    fn default() -> Self {
        Self::new(Behaviours::default())
    }
}

/// What a tick sees of one task's object.
#[derive(Debug, Clone)]
struct Live {
    exists: bool,
    deletion_timestamp: bool,
    hook_finalizer: bool,
    health: HealthVerdict,
    health_message: String,
}

/// A task during one tick: the re-derived task, its live snapshot and its attached result.
struct Work {
    task: Task,
    live: Live,
    status: Option<ResultCode>,
    op: TaskPhase,
    message: String,
}

impl Work {
    fn has_policy(&self, p: DeletePolicy) -> bool {
        self.task.is_hook && self.task.delete_policies.contains(&p)
    }
    /// `deleteBeforeCreation`.
    fn delete_before_creation(&self) -> bool {
        self.live.exists
            && self.op == TaskPhase::Pending
            && self.has_policy(DeletePolicy::BeforeHookCreation)
    }
    /// `deleteOnPhaseCompletion` (legacy message filter).
    fn delete_on_phase_completion(&self) -> bool {
        self.live.exists
            && (self.has_policy(DeletePolicy::HookSucceeded)
                || self.has_policy(DeletePolicy::HookFailed))
    }
}

/// Tri-state outcome of running a set of tasks (`runState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RunState {
    Successful,
    Pending,
    Failed,
}

/// Runs one Argo CD `Sync()` call: returns the next state. A completed operation is returned
/// unchanged (Argo CD stops calling `Sync()`), except that the action log is cleared.
pub fn tick(input: &PlanInput, state: &SyncState, world: &World) -> SyncState {
    let mut t = Ticker::start(input, state, world);
    if !state.phase.is_completed() {
        t.sync();
    }
    t.st
}

/// Terminates the operation (Argo CD `Terminate()`, spec §5.6): removes hook finalizers and
/// deletes the hooks that are still running, then ends `Failed` "Operation terminated".
/// From 3.4 Argo CD re-reads each running hook first: one that has completed keeps its real result and
/// is deleted only if it has `HookFailed`; before, it deleted running hooks and records every
/// other live hook's current state.
pub fn terminate(input: &PlanInput, state: &SyncState, world: &World) -> SyncState {
    let mut t = Ticker::start(input, state, world);
    if !state.phase.is_completed() {
        t.terminate();
    }
    t.st
}

/// One tick's working set.
struct Ticker<'a> {
    input: &'a PlanInput<'a>,
    world: &'a World,
    st: SyncState,
    w: Vec<Work>,
    invalid: Vec<(usize, String)>,
    /// Objects this tick acted on; a GET now sees the bookkeeping, not the tick-start view.
    touched: BTreeSet<ObjectKey>,
}

impl<'a> Ticker<'a> {
    /// Re-derives the tasks from the current world and attaches stored results.
    fn start(input: &'a PlanInput<'a>, state: &SyncState, world: &'a World) -> Self {
        let mut st = state.clone();
        st.actions.clear();
        st.current_step = None;
        st.waiting_on.clear();
        if !state.phase.is_completed() {
            st.ticks = st.ticks.saturating_add(1);
        }

        let live_present = |i: usize| -> bool {
            input.live.get(i).is_some_and(|r| {
                let key = ObjectKey::of_resource(r);
                observed_exists(world, &st.tracked, &key).unwrap_or(true)
            })
        };
        let dest = &input.app.destination_namespace;
        let ns_key = ObjectKey::new("", "Namespace", "", dest);
        let in_live = input
            .live
            .iter()
            .any(|r| r.group.is_empty() && r.kind == "Namespace" && &r.name == dest);
        let namespace_exists = observed_exists(world, &st.tracked, &ns_key)
            .unwrap_or(in_live || input.app.namespace_exists);
        let built = build(
            input,
            &Overrides {
                live_present: Some(&live_present),
                namespace_exists: Some(namespace_exists),
            },
        );
        let invalid = built
            .invalid
            .iter()
            .map(|i| (i.task, i.message.clone()))
            .collect();
        let w = built
            .tasks
            .into_iter()
            .map(|task| {
                let live = snapshot(input, world, &st.tracked, &task);
                let (status, op, message) = st
                    .results
                    .get(&task.result_key())
                    .map(|r| (r.status, r.operation, r.message.clone()))
                    .unwrap_or((None, TaskPhase::Pending, String::new()));
                Work {
                    task,
                    live,
                    status,
                    op,
                    message,
                }
            })
            .collect();
        Self {
            input,
            world,
            st,
            w,
            invalid,
            touched: BTreeSet::new(),
        }
    }

    fn has(&self, b: Behaviour) -> bool {
        self.st.behaviours.has(b)
    }

    fn set_phase(&mut self, phase: OperationPhase, message: String) {
        self.st.phase = phase;
        self.st.message = message;
    }

    /// `setResourceResult`: records status, state and (non-empty) message under the result key.
    fn set_result(&mut self, i: usize, status: Option<ResultCode>, op: TaskPhase, message: &str) {
        let Some(w) = self.w.get_mut(i) else {
            return;
        };
        w.status = status;
        w.op = op;
        if !message.is_empty() {
            w.message = message.to_string();
        }
        let next = self.st.results.len() + 1;
        let entry = self
            .st
            .results
            .entry(w.task.result_key())
            .or_insert_with(|| TaskResult {
                object: w.task.object_key(),
                phase: w.task.phase,
                is_hook: w.task.is_hook,
                status: None,
                operation: TaskPhase::Pending,
                message: String::new(),
                order: next,
            });
        entry.status = w.status;
        entry.operation = w.op;
        entry.message = w.message.clone();
    }

    fn track(&mut self, i: usize, f: impl FnOnce(&mut Tracked)) {
        let Some(w) = self.w.get(i) else {
            return;
        };
        let key = w.task.object_key();
        self.touched.insert(key.clone());
        let mut t = self.st.tracked.get(&key).copied().unwrap_or(Tracked {
            exists: w.live.exists,
            hook_finalizer: w.live.hook_finalizer,
            deletion_timestamp: w.live.deletion_timestamp,
        });
        f(&mut t);
        self.st.tracked.insert(key, t);
    }

    fn act(&mut self, a: Action) {
        self.st.actions.push(a);
    }

    fn key(&self, i: usize) -> ObjectKey {
        self.w
            .get(i)
            .map(|w| w.task.object_key())
            .unwrap_or_default()
    }

    fn idx(&self, pred: impl Fn(&Work) -> bool) -> Vec<usize> {
        self.w
            .iter()
            .enumerate()
            .filter(|(_, w)| pred(w))
            .map(|(i, _)| i)
            .collect()
    }

    /// `Sync()`.
    fn sync(&mut self) {
        if !self.invalid.is_empty() {
            for (i, msg) in self.invalid.clone() {
                self.set_result(i, Some(ResultCode::SyncFailed), TaskPhase::Pending, &msg);
            }
            let mut msg = "one or more synchronization tasks are not valid".to_string();
            if self.has(Behaviour::InvalidTaskMessagesListed) {
                let errs: BTreeSet<&str> = self
                    .st
                    .results
                    .values()
                    .filter(|r| r.status == Some(ResultCode::SyncFailed) && !r.message.is_empty())
                    .map(|r| r.message.as_str())
                    .collect();
                if !errs.is_empty() {
                    msg = format!("{msg}: {}", errs.into_iter().collect::<Vec<_>>().join("; "));
                }
            }
            self.set_phase(OperationPhase::Failed, msg);
            return;
        }

        if self.st.results.is_empty() && !self.first_tick() {
            return;
        }

        self.refresh_running();

        let multi_step = self.multi_step();
        let running = self.idx(|w| (multi_step || w.task.is_hook) && w.op == TaskPhase::Running);
        if !running.is_empty() {
            if self.has(Behaviour::VanishedTaskFailsSync) {
                for &i in &running {
                    if self.w.get(i).is_some_and(|w| !w.live.exists) {
                        self.refresh_live(i);
                    }
                    if self.w.get(i).is_some_and(|w| !w.live.exists) {
                        let msg = self
                            .w
                            .get(i)
                            .map(|w| {
                                format!(
                                    "Resource {} is missing, it might have been deleted",
                                    w.task.message_ref()
                                )
                            })
                            .unwrap_or_default();
                        self.set_result(i, Some(ResultCode::SyncFailed), TaskPhase::Error, &msg);
                    }
                }
            }
            self.set_running_phase(&running, false);
            return;
        }

        let pruned_pending_delete = self.idx(|w| {
            w.status == Some(ResultCode::Pruned) && w.live.exists && w.live.deletion_timestamp
        });
        if !pruned_pending_delete.is_empty() {
            self.set_running_phase(&pruned_pending_delete, true);
            return;
        }

        for i in self.idx(|w| w.task.is_hook && w.op.is_completed()) {
            self.remove_finalizer(i);
        }
        let del_ok = self.idx(|w| {
            w.task.is_hook
                && w.live.exists
                && w.op != TaskPhase::Running
                && w.has_policy(DeletePolicy::HookSucceeded)
        });
        let del_failed = self.idx(|w| {
            w.task.is_hook
                && w.live.exists
                && w.op != TaskPhase::Running
                && w.has_policy(DeletePolicy::HookFailed)
        });

        let sync_fail = self.idx(|w| w.task.phase == SyncPhase::SyncFail);
        let rest = self.idx(|w| w.task.phase != SyncPhase::SyncFail);
        let sync_failed: Vec<usize> = rest
            .iter()
            .copied()
            .filter(|&i| {
                self.w
                    .get(i)
                    .is_some_and(|w| w.status == Some(ResultCode::SyncFailed))
            })
            .collect();

        let any_unsuccessful = rest.iter().any(|&i| {
            self.w
                .get(i)
                .is_some_and(|w| w.op.is_completed() && w.op != TaskPhase::Succeeded)
        });
        if any_unsuccessful {
            self.delete_hooks(&del_failed, HookDeleteReason::HookFailed);
            let msg = "one or more synchronization tasks completed unsuccessfully";
            if self.has(Behaviour::SyncFailAwaitedAfterApplyFailure) {
                self.execute_sync_fail_phase(&sync_fail, &sync_failed, msg);
            } else {
                self.set_operation_failed_legacy(&sync_fail, &sync_failed, msg);
            }
            return;
        }

        let out_of_sync_only = self.input.app.sync_options.has("ApplyOutOfSyncOnly=true");
        let pending: Vec<usize> = rest
            .iter()
            .copied()
            .filter(|&i| {
                self.w.get(i).is_some_and(|w| {
                    w.op == TaskPhase::Pending && !(out_of_sync_only && self.unmodified(w))
                })
            })
            .collect();

        let (Some(&first), Some(&last)) = (pending.first(), pending.last()) else {
            self.delete_hooks(&del_ok, HookDeleteReason::HookSucceeded);
            self.set_phase(
                OperationPhase::Succeeded,
                "successfully synced (no more tasks)".to_string(),
            );
            return;
        };
        let step_of = |i: usize| self.w.get(i).map(|w| (w.task.phase, w.task.wave));
        let (Some((phase, wave)), Some(last_pw)) = (step_of(first), step_of(last)) else {
            return;
        };
        let final_wave = (phase, wave) == last_pw;
        let (step, remaining): (Vec<usize>, Vec<usize>) = pending
            .iter()
            .copied()
            .partition(|&i| step_of(i) == Some((phase, wave)));
        let legacy_remaining: Vec<usize> = pending
            .iter()
            .copied()
            .filter(|&i| step_of(i) != Some((phase, wave)) || self.is_hook(i))
            .collect();

        self.set_phase(
            OperationPhase::Running,
            "one or more tasks are running".to_string(),
        );
        self.st.current_step = Some(StepRef { phase, wave });
        let run_state = self.run_tasks(&step, false);

        if run_state != RunState::Failed {
            self.act(Action::SyncWaveHook {
                phase,
                wave,
                final_wave,
            });
            if let Some(err) = self.world.sync_wave_hook_error.clone() {
                let msg = format!("SyncWaveHook failed: {err}");
                if self.has(Behaviour::WaveHookFailureErrors) {
                    let hooks: Vec<usize> =
                        step.iter().copied().filter(|&i| self.is_hook(i)).collect();
                    self.terminate_hooks_preemptively(&hooks);
                    self.set_phase(OperationPhase::Error, msg);
                } else {
                    self.delete_hooks(&del_failed, HookDeleteReason::HookFailed);
                    self.set_phase(OperationPhase::Failed, msg);
                }
                return;
            }
        }

        let step_failed: Vec<usize> = step
            .iter()
            .copied()
            .filter(|&i| {
                self.w
                    .get(i)
                    .is_some_and(|w| w.status == Some(ResultCode::SyncFailed))
            })
            .collect();
        let msg = "one or more objects failed to apply";
        match run_state {
            RunState::Failed if self.has(Behaviour::SyncFailAwaitedAfterApplyFailure) => {
                let mut running: Vec<usize> = step
                    .iter()
                    .copied()
                    .filter(|&i| self.w.get(i).is_some_and(|w| w.op == TaskPhase::Running))
                    .collect();
                if running.is_empty() {
                    if self.execute_sync_fail_phase(&sync_fail, &step_failed, msg) {
                        self.delete_hooks(&del_failed, HookDeleteReason::HookFailed);
                    }
                } else {
                    if !sync_fail.is_empty()
                        && !self.execute_sync_fail_phase(&sync_fail, &step_failed, msg)
                    {
                        running.extend(sync_fail.iter().copied());
                    }
                    self.set_running_phase(&running, false);
                }
            }
            RunState::Failed => {
                self.delete_hooks(&del_failed, HookDeleteReason::HookFailed);
                self.set_operation_failed_legacy(&sync_fail, &step_failed, msg);
            }
            RunState::Successful if self.has(Behaviour::RunningMessageByKind) => {
                if remaining.is_empty() && !step.iter().any(|&i| self.is_hook(i)) {
                    self.delete_hooks(&del_ok, HookDeleteReason::HookSucceeded);
                    self.set_phase(
                        OperationPhase::Succeeded,
                        "successfully synced (all tasks run)".to_string(),
                    );
                } else {
                    self.set_running_phase(&step, false);
                }
            }
            RunState::Successful => {
                if legacy_remaining.is_empty() {
                    self.delete_hooks(&del_ok, HookDeleteReason::HookSucceeded);
                    self.set_phase(
                        OperationPhase::Succeeded,
                        "successfully synced (all tasks run)".to_string(),
                    );
                } else {
                    self.set_running_phase(&legacy_remaining, false);
                }
            }
            RunState::Pending => {
                let by_kind = self.has(Behaviour::RunningMessageByKind);
                let waiting: Vec<usize> = step
                    .iter()
                    .copied()
                    .filter(|&i| {
                        self.w.get(i).is_some_and(|w| {
                            if by_kind {
                                w.delete_before_creation()
                                    || (w.task.is_prune && w.op == TaskPhase::Pending)
                            } else {
                                w.delete_on_phase_completion()
                            }
                        })
                    })
                    .collect();
                self.set_running_phase(&waiting, true);
            }
        }
    }

    /// First tick only (spec §5.1): create the destination namespace if it is missing, then
    /// dry-run everything. Returns false when the operation ended.
    fn first_tick(&mut self) -> bool {
        let dest = self.input.app.destination_namespace.clone();
        let ns_task = self.w.iter().position(|w| {
            !w.task.is_prune
                && !w.live.exists
                && w.task.kind == "Namespace"
                && w.task.group.is_empty()
                && w.task.name == dest
        });
        if let Some(ns) = ns_task
            && self.run_tasks(&[ns], false) == RunState::Failed
        {
            let msg = "the namespace failed to apply";
            if self.has(Behaviour::SyncFailAwaitedAfterApplyFailure) {
                self.execute_sync_fail_phase(&[], &[ns], msg);
            } else {
                self.set_operation_failed_legacy(&[], &[ns], msg);
            }
            return false;
        }
        let out_of_sync_only = self.input.app.sync_options.has("ApplyOutOfSyncOnly=true");
        let dry: Vec<usize> = (0..self.w.len())
            .filter(|&i| Some(i) != ns_task)
            .filter(|&i| {
                self.w
                    .get(i)
                    .is_some_and(|w| !(out_of_sync_only && self.unmodified(w)))
            })
            .collect();
        if self.run_tasks(&dry, true) == RunState::Failed {
            self.set_phase(
                OperationPhase::Failed,
                "one or more objects failed to apply (dry run)".to_string(),
            );
            return false;
        }
        true
    }

    /// Refresh of running tasks that have a live object (spec §5.2 step 1).
    fn refresh_running(&mut self) {
        for i in self.idx(|w| w.op == TaskPhase::Running && w.live.exists) {
            let Some(w) = self.w.get(i) else { continue };
            let (health, hmsg) = effective_health(&w.live);
            let status = w.status;
            if w.task.is_hook {
                let (op, msg) = hook_phase(w);
                let status = if self.has(Behaviour::HookResultsKeepStatus) {
                    status
                } else {
                    None
                };
                self.set_result(i, status, op, &msg);
            } else {
                match health {
                    HealthVerdict::NoCheck => {
                        self.set_result(i, status, TaskPhase::Succeeded, "");
                    }
                    HealthVerdict::Status(HealthStatus::Healthy) => {
                        self.set_result(i, status, TaskPhase::Succeeded, &hmsg);
                    }
                    HealthVerdict::Status(HealthStatus::Degraded) => {
                        self.set_result(i, status, TaskPhase::Failed, &hmsg);
                    }
                    _ => {}
                }
            }
        }
    }

    /// Argo CD's `multiStep` over every task of this tick (completed and SyncFail included).
    fn multi_step(&self) -> bool {
        match (self.w.first(), self.w.last()) {
            (Some(a), Some(b)) => (a.task.phase, a.task.wave) != (b.task.phase, b.task.wave),
            _ => false,
        }
    }

    /// Argo CD's GET of a task it has no live object for: an object this tick created (e.g.
    /// the namespace on the first tick) exists by now.
    fn refresh_live(&mut self, i: usize) {
        let Some(key) = self.w.get(i).map(|w| w.task.object_key()) else {
            return;
        };
        if !self.touched.contains(&key) {
            return;
        }
        if let (Some(t), Some(w)) = (
            tracked_of(&self.st.tracked, &key).copied(),
            self.w.get_mut(i),
        ) {
            w.live.exists = t.exists;
            w.live.hook_finalizer = t.hook_finalizer;
            w.live.deletion_timestamp = t.deletion_timestamp;
        }
    }

    fn is_hook(&self, i: usize) -> bool {
        self.w.get(i).is_some_and(|w| w.task.is_hook)
    }

    /// `filterOutOfSyncTasks`: a non-hook with target and live object that the diff says is
    /// not modified.
    fn unmodified(&self, w: &Work) -> bool {
        !w.task.is_hook
            && !w.task.is_prune
            && w.live.exists
            && self.world.in_sync.contains(&w.task.object_key())
    }

    fn remove_finalizer(&mut self, i: usize) {
        if self
            .w
            .get(i)
            .is_some_and(|w| w.live.exists && w.live.hook_finalizer)
        {
            let object = self.key(i);
            self.act(Action::FinalizerRemoved { object });
            self.track(i, |t| t.hook_finalizer = false);
            if let Some(w) = self.w.get_mut(i) {
                w.live.hook_finalizer = false;
            }
        }
    }

    fn delete_object(&mut self, i: usize, reason: HookDeleteReason) {
        let object = self.key(i);
        if self.st.tracked.get(&object).is_some_and(|t| !t.exists)
            && self.st.actions.iter().any(|a| matches!(a, Action::HookDeleted { object: o, .. } | Action::Pruned { object: o } if *o == object))
        {
            return; // the same object was already deleted this tick (hook in two phases)
        }
        self.act(Action::HookDeleted { object, reason });
        self.track(i, |t| t.exists = false);
    }

    fn delete_hooks(&mut self, hooks: &[usize], reason: HookDeleteReason) {
        for &i in hooks {
            self.delete_object(i, reason);
        }
    }

    /// `runTasks` (spec §4.3): finalizers, prune confirmation, prunes, BeforeHookCreation
    /// deletions, then applies in runs of the same kind.
    fn run_tasks(&mut self, tasks: &[usize], dry_run: bool) -> RunState {
        let (prunes, creates): (Vec<usize>, Vec<usize>) = tasks
            .iter()
            .copied()
            .partition(|&i| self.w.get(i).is_some_and(|w| w.task.is_prune));

        if !dry_run {
            for &i in tasks {
                if self
                    .w
                    .get(i)
                    .is_some_and(|w| w.task.is_hook && w.op == TaskPhase::Pending && w.live.exists)
                {
                    self.remove_finalizer(i);
                }
            }
        }

        if !self.world.prune_confirmed {
            let needs: Vec<usize> = prunes
                .iter()
                .copied()
                .filter(|&i| {
                    self.w
                        .get(i)
                        .is_some_and(|w| w.task.prune_requires_confirmation)
                })
                .collect();
            if let Some(&first) = needs.first() {
                if !self.has(Behaviour::RunningMessageByKind) {
                    let mut m = self
                        .w
                        .get(first)
                        .map(|w| {
                            format!(
                                "Waiting for pruning confirmation of {}/{}/{}",
                                w.task.api_version, w.task.kind, w.task.name
                            )
                        })
                        .unwrap_or_default();
                    if needs.len() > 1 {
                        m = format!("{m} and {} more resources", needs.len() - 1);
                    }
                    self.st.message = m;
                }
                return RunState::Pending;
            }
        }
        let mut state = RunState::Successful;
        for &i in &prunes {
            let Some(w) = self.w.get(i) else { continue };
            let (code, msg) = if !self.input.app.prune {
                (ResultCode::PruneSkipped, "ignored (requires pruning)")
            } else if w.task.prune_disabled {
                (ResultCode::PruneSkipped, "ignored (no prune)")
            } else if dry_run {
                (ResultCode::Pruned, "pruned (dry run)")
            } else {
                (ResultCode::Pruned, "pruned")
            };
            if dry_run {
                continue; // dry-run prune results are not recorded
            }
            let object = w.task.object_key();
            let deleting = w.live.deletion_timestamp;
            if code == ResultCode::Pruned {
                if !deleting {
                    self.act(Action::Pruned { object });
                    self.track(i, |t| t.exists = false);
                }
            } else {
                self.act(Action::PruneSkipped {
                    object,
                    message: msg.to_string(),
                });
            }
            self.set_result(i, Some(code), TaskPhase::Succeeded, msg);
        }

        let bhc: Vec<usize> = creates
            .iter()
            .copied()
            .filter(|&i| self.w.get(i).is_some_and(Work::delete_before_creation))
            .collect();
        if !bhc.is_empty() && !dry_run {
            for &i in &bhc {
                self.delete_object(i, HookDeleteReason::BeforeHookCreation);
            }
            state = RunState::Pending;
        }
        if state != RunState::Successful {
            return state;
        }

        // Runs of consecutive tasks of the same kind are applied one after another; a failure
        // does not stop later runs, so every task of the step is attempted.
        for &i in &creates {
            let Some(w) = self.w.get(i) else { continue };
            if dry_run && w.task.skip_dry_run {
                continue;
            }
            let object = w.task.object_key();
            let phase = w.task.phase;
            let errors = if dry_run {
                &self.world.dry_run_errors
            } else {
                &self.world.apply_errors
            };
            if let Some(err) = World::error_for(errors, &object).cloned() {
                state = RunState::Failed;
                self.act(if dry_run {
                    Action::DryRunFailed {
                        object,
                        phase,
                        message: err.clone(),
                    }
                } else {
                    Action::ApplyFailed {
                        object,
                        phase,
                        message: err.clone(),
                    }
                });
                self.set_result(i, Some(ResultCode::SyncFailed), TaskPhase::Failed, &err);
            } else if !dry_run {
                let verb = if w.live.exists {
                    "configured"
                } else {
                    "created"
                };
                let resource = if w.task.group.is_empty() {
                    w.task.kind.to_lowercase()
                } else {
                    format!("{}.{}", w.task.kind.to_lowercase(), w.task.group)
                };
                let msg = format!("{resource}/{} {verb}", w.task.name);
                let is_hook = w.task.is_hook;
                self.act(Action::Applied { object, phase });
                self.track(i, |t| {
                    *t = Tracked {
                        exists: true,
                        hook_finalizer: is_hook,
                        deletion_timestamp: false,
                    }
                });
                self.set_result(i, Some(ResultCode::Synced), TaskPhase::Running, &msg);
            }
        }
        state
    }

    /// `setRunningPhase`: the exact "waiting for …" message of the release.
    fn set_running_phase(&mut self, tasks: &[usize], pending_deletion: bool) {
        let ws: Vec<&Work> = tasks.iter().filter_map(|&i| self.w.get(i)).collect();
        self.st.waiting_on = ws.iter().map(|w| w.task.object_key()).collect();
        if self.st.current_step.is_none() {
            self.st.current_step = ws.first().map(|w| StepRef {
                phase: w.task.phase,
                wave: w.task.wave,
            });
        }
        if !self.has(Behaviour::RunningMessageByKind) {
            let Some(first) = ws.first() else {
                return; // before 3.4 Argo CD leaves phase and message alone for an empty list
            };
            let (mut reason, more) = if first.task.is_hook {
                ("completion of hook", "hooks")
            } else {
                ("healthy state of", "resources")
            };
            if pending_deletion {
                reason = "deletion of";
            }
            let mut msg = format!("waiting for {reason} {}", first.task.message_ref());
            if ws.len() > 1 {
                msg = format!("{msg} and {} more {more}", ws.len() - 1);
            }
            self.set_phase(OperationPhase::Running, msg);
            return;
        }
        if ws.is_empty() {
            self.set_phase(OperationPhase::Running, String::new());
            return;
        }
        let hooks: Vec<&&Work> = ws.iter().filter(|w| w.task.is_hook).collect();
        let has_resources = ws.len() > hooks.len();
        let mut reason = if hooks.is_empty() {
            "healthy state of".to_string()
        } else {
            "completion of hook".to_string()
        };
        let kind = if has_resources { "resources" } else { "hooks" };
        if pending_deletion {
            reason = "deletion of".to_string();
            if !hooks.is_empty() {
                reason.push_str(" hook");
            }
        }
        let mut first = hooks.first().map_or(ws.first(), |h| Some(*h));
        let mut more = ws.len() - 1;
        if !self.world.prune_confirmed {
            let to_prune: Vec<&&Work> = ws
                .iter()
                .filter(|w| w.task.is_prune && w.task.prune_requires_confirmation)
                .collect();
            if let Some(p) = to_prune.first() {
                reason = "pruning confirmation of".to_string();
                first = Some(*p);
                more = to_prune.len() - 1;
            }
        }
        let Some(first) = first else { return };
        let mut msg = format!("waiting for {reason} {}", first.task.message_ref());
        if more > 0 {
            msg = format!("{msg} and {more} more {kind}");
        }
        self.set_phase(OperationPhase::Running, msg);
    }

    /// 3.4+ `executeSyncFailPhase`: fail now, or start the SyncFail tasks and stay Running
    /// until they complete. Returns true when the operation is now Failed.
    fn execute_sync_fail_phase(
        &mut self,
        sync_fail: &[usize],
        failed: &[usize],
        message: &str,
    ) -> bool {
        let err = self.reason_message(failed, message);
        if sync_fail.is_empty() {
            self.set_phase(OperationPhase::Failed, err);
            return true;
        }
        let all_done = sync_fail
            .iter()
            .all(|&i| self.w.get(i).is_some_and(|w| w.op.is_completed()));
        if all_done {
            let failed_sf: Vec<usize> = sync_fail
                .iter()
                .copied()
                .filter(|&i| {
                    self.w
                        .get(i)
                        .is_some_and(|w| w.status == Some(ResultCode::SyncFailed))
                })
                .collect();
            let mut err = err;
            if !failed_sf.is_empty() {
                let sf = self.reason_message(&failed_sf, "one or more SyncFail hooks failed");
                err = format!("{err}\n{sf}");
            }
            self.set_phase(OperationPhase::Failed, err);
            return true;
        }
        let pending_sf: Vec<usize> = sync_fail
            .iter()
            .copied()
            .filter(|&i| {
                self.w
                    .get(i)
                    .is_some_and(|w| !w.op.is_completed() && w.op != TaskPhase::Running)
            })
            .collect();
        self.run_tasks(&pending_sf, false);
        self.set_running_phase(&pending_sf, false);
        false
    }

    /// Before 3.4: `setOperationFailed`.
    fn set_operation_failed_legacy(
        &mut self,
        sync_fail: &[usize],
        failed: &[usize],
        message: &str,
    ) {
        let err = self.reason_message(failed, message);
        if sync_fail.is_empty() {
            self.set_phase(OperationPhase::Failed, err);
            return;
        }
        if sync_fail
            .iter()
            .all(|&i| self.w.get(i).is_some_and(|w| w.op.is_completed()))
        {
            self.set_phase(OperationPhase::Failed, err);
            return;
        }
        if self.run_tasks(sync_fail, false) == RunState::Failed {
            let failed_sf: Vec<usize> = sync_fail
                .iter()
                .copied()
                .filter(|&i| {
                    self.w
                        .get(i)
                        .is_some_and(|w| w.status == Some(ResultCode::SyncFailed))
                })
                .collect();
            let sf = self.reason_message(&failed_sf, "one or more SyncFail hooks failed");
            self.set_phase(OperationPhase::Failed, format!("{err}\n{sf}"));
        }
    }

    /// `message + ", reason: " + task messages joined by ","` when there are tasks.
    fn reason_message(&self, tasks: &[usize], message: &str) -> String {
        let msgs: Vec<&str> = tasks
            .iter()
            .filter_map(|&i| self.w.get(i))
            .map(|w| w.message.as_str())
            .collect();
        if msgs.is_empty() {
            message.to_string()
        } else {
            format!("{message}, reason: {}", msgs.join(","))
        }
    }

    /// 3.4+ `terminateHooksPreemptively` over the given hook tasks.
    fn terminate_hooks_preemptively(&mut self, tasks: &[usize]) {
        for &i in tasks {
            let Some(w) = self.w.get(i) else { continue };
            if !w.task.is_hook || w.op != TaskPhase::Running {
                continue;
            }
            if !w.live.exists {
                self.refresh_live(i);
            }
            let Some(w) = self.w.get(i) else { continue };
            if !w.live.exists {
                let status = w.status;
                self.set_result(i, status, TaskPhase::Succeeded, "Terminated");
                continue;
            }
            let (op, msg) = hook_phase(w);
            let delete = op == TaskPhase::Running
                || op == TaskPhase::Error
                || w.has_policy(DeletePolicy::HookFailed);
            let status = w.status;
            if op == TaskPhase::Error {
                // The health error is kept as the result; the hook is deleted below.
                self.set_result(i, status, TaskPhase::Error, &msg);
            }
            self.remove_finalizer(i);
            if delete {
                self.delete_object(i, HookDeleteReason::Terminated);
            }
            if matches!(op, TaskPhase::Succeeded | TaskPhase::Failed) {
                self.set_result(i, status, op, &msg);
            } else if self.w.get(i).is_some_and(|w| w.op != TaskPhase::Error) {
                self.set_result(i, status, TaskPhase::Failed, "Terminated");
            }
        }
    }

    /// `Terminate()`.
    fn terminate(&mut self) {
        if self.has(Behaviour::TerminateDeletesHooks) {
            for i in self.idx(|w| w.task.is_hook && w.op.is_completed()) {
                self.remove_finalizer(i);
            }
            let hooks = self.idx(|w| w.task.is_hook);
            self.terminate_hooks_preemptively(&hooks);
        } else {
            for i in self.idx(|w| w.task.is_hook && w.live.exists) {
                self.remove_finalizer(i);
                let Some(w) = self.w.get(i) else { continue };
                let (op, msg) = hook_phase(w);
                if op == TaskPhase::Running {
                    self.delete_object(i, HookDeleteReason::Terminated);
                    self.set_result(i, None, TaskPhase::Succeeded, "Deleted");
                } else {
                    self.set_result(i, None, op, &msg);
                }
            }
        }
        self.set_phase(OperationPhase::Failed, "Operation terminated".to_string());
    }
}

/// `getOperationPhase` of a hook from its live object.
fn hook_phase(w: &Work) -> (TaskPhase, String) {
    let (health, msg) = effective_health(&w.live);
    match health {
        HealthVerdict::NoCheck | HealthVerdict::Status(HealthStatus::Missing) => {
            (TaskPhase::Succeeded, format!("{} created", w.task.name))
        }
        HealthVerdict::Status(HealthStatus::Healthy) => (TaskPhase::Succeeded, msg),
        HealthVerdict::Status(HealthStatus::Progressing)
        | HealthVerdict::Status(HealthStatus::Suspended) => (TaskPhase::Running, msg),
        HealthVerdict::Status(HealthStatus::Degraded)
        | HealthVerdict::Status(HealthStatus::Unknown) => (TaskPhase::Failed, msg),
        HealthVerdict::Error => (
            TaskPhase::Error,
            format!("failed to get resource health: {msg}"),
        ),
    }
}

/// The verdict Argo CD's `GetResourceHealth` would give: an object being deleted without the
/// hook finalizer is `Progressing "Pending deletion"` whatever its own check says. A caller that
/// assessed the object with `model::health` for the release already has that verdict, with 3.6's
/// message naming the finalizers ("Pending deletion; blocked by finalizers: …"); it is kept.
fn effective_health(live: &Live) -> (HealthVerdict, String) {
    if live.deletion_timestamp && !live.hook_finalizer {
        let message = if live.health == HealthVerdict::Status(HealthStatus::Progressing)
            && live.health_message.starts_with(PENDING_DELETION)
        {
            live.health_message.clone()
        } else {
            PENDING_DELETION.to_string()
        };
        (HealthVerdict::Status(HealthStatus::Progressing), message)
    } else {
        (live.health, live.health_message.clone())
    }
}

/// Existence from explicit observations, then bookkeeping; `None` when neither knows.
fn observed_exists(
    world: &World,
    tracked: &BTreeMap<ObjectKey, Tracked>,
    key: &ObjectKey,
) -> Option<bool> {
    world
        .explicit(key)
        .and_then(|o| o.exists)
        .or_else(|| tracked_of(tracked, key).map(|t| t.exists))
}

fn tracked_of<'t>(
    tracked: &'t BTreeMap<ObjectKey, Tracked>,
    key: &ObjectKey,
) -> Option<&'t Tracked> {
    tracked
        .get(key)
        .or_else(|| tracked.get(&key.cluster_scoped()))
}

/// What this tick sees of a task's object: explicit observation over bookkeeping over the
/// plan-time live object.
fn snapshot(
    input: &PlanInput,
    world: &World,
    tracked: &BTreeMap<ObjectKey, Tracked>,
    task: &Task,
) -> Live {
    let key = task.object_key();
    let base = tracked_of(tracked, &key).copied().unwrap_or_else(|| {
        match task.live.and_then(|l| input.live.get(l)) {
            Some(r) => Tracked {
                exists: true,
                hook_finalizer: r
                    .raw
                    .pointer("/metadata/finalizers")
                    .and_then(Value::as_array)
                    .is_some_and(|f| f.iter().any(|v| v.as_str() == Some(HOOK_FINALIZER))),
                deletion_timestamp: r
                    .raw
                    .pointer("/metadata/deletionTimestamp")
                    .is_some_and(|v| !v.is_null()),
            },
            None => Tracked {
                exists: false,
                hook_finalizer: false,
                deletion_timestamp: false,
            },
        }
    });
    let o = world.explicit(&key);
    Live {
        exists: o.and_then(|o| o.exists).unwrap_or(base.exists),
        deletion_timestamp: o
            .and_then(|o| o.deletion_timestamp)
            .unwrap_or(base.deletion_timestamp),
        hook_finalizer: o
            .and_then(|o| o.hook_finalizer)
            .unwrap_or(base.hook_finalizer),
        health: o.and_then(|o| o.health).unwrap_or(world.default_health),
        health_message: o.and_then(|o| o.health_message.clone()).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn live(health: HealthVerdict, message: &str, hook_finalizer: bool) -> Live {
        Live {
            exists: true,
            deletion_timestamp: true,
            hook_finalizer,
            health,
            health_message: message.to_string(),
        }
    }

    #[test]
    fn a_terminating_object_keeps_the_release_s_pending_deletion_message() {
        // Assessed by model::health for 3.6: the finalizers are named, and kept.
        let named = "Pending deletion; blocked by finalizers: example.com/keep";
        assert_eq!(
            effective_health(&live(
                HealthVerdict::Status(HealthStatus::Progressing),
                named,
                false
            )),
            (
                HealthVerdict::Status(HealthStatus::Progressing),
                named.to_string()
            )
        );
        // A caller-supplied verdict of another kind is overridden, as Argo CD does.
        assert_eq!(
            effective_health(&live(
                HealthVerdict::Status(HealthStatus::Healthy),
                "done",
                false
            )),
            (
                HealthVerdict::Status(HealthStatus::Progressing),
                PENDING_DELETION.to_string()
            )
        );
        // The hook finalizer keeps the object's own verdict.
        assert_eq!(
            effective_health(&live(
                HealthVerdict::Status(HealthStatus::Healthy),
                "done",
                true
            )),
            (
                HealthVerdict::Status(HealthStatus::Healthy),
                "done".to_string()
            )
        );
    }
}
