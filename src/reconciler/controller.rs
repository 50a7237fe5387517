//! The Application controller: a kube-runtime `Controller` over Argo CD Applications (read once
//! per change into the typed [`CachedApplication`] view, see [`super::cached`]) that runs
//! SG501–SG503 on every change and reports through [`Emitter`].
//!
//! Every replica watches and feeds the [`LoopTracker`] (so a new leader knows the recent syncs
//! at once); only the leader fetches live objects and writes Events, so followers cost the API
//! server nothing but their watch.

use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::Api;
use kube::runtime::controller::{self, Action, Controller};
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use time::OffsetDateTime;
use tokio::sync::watch;

use super::application::Application;
use super::context::Context;
use super::diagnosis::LiveFinding;
use super::error::{Error, Result};
use super::events::{Emitter, Outcome};
use super::state::{self, StateStore};
use super::sync_loop::LoopTracker;
use super::{hooks, stuck, sync_loop, terminate};
use crate::metrics::{ReconcilerMetrics, StatusLabels, TerminationLabels};

/// After a failed termination write, look again this soon.
const RETRY_TERMINATE: Duration = Duration::from_secs(10);
/// While an operation is stuck, re-diagnose this often even without Application changes (pod
/// states change without touching the Application).
pub const STUCK_RECHECK: Duration = Duration::from_secs(5 * 60);
/// Safety-net requeue for quiet Applications (Argo CD touches status every refresh anyway).
pub const IDLE_RECHECK: Duration = Duration::from_secs(30 * 60);
/// Error backoff: first retry, doubling per consecutive failure, up to the cap.
pub const ERROR_BACKOFF: (Duration, Duration) = (Duration::from_secs(5), Duration::from_secs(300));
/// How often deleted Applications are forgotten (their open findings cleared).
pub const FORGET_SWEEP: Duration = Duration::from_secs(5 * 60);
/// How often readiness of the Application watch is re-checked until it is ready.
const READY_POLL: Duration = Duration::from_millis(250);
/// Per-object memories (hook checks, error counts) are cleared beyond this many Applications.
const MAX_REMEMBERED_APPS: usize = 100_000;

/// Everything the reconcile function needs: the shared [`Context`] plus the controller's own
/// in-memory state.
#[derive(Debug)]
pub struct Reconciler {
    /// Shared context (client, config, metrics, leadership).
    pub ctx: Arc<Context>,
    /// SG502 sync counting.
    pub loops: LoopTracker,
    /// Event deduplication and finding metrics.
    pub emitter: Emitter,
    /// SG503: per Application, the last finished sync whose hooks were counted, and the result
    /// (kept open between counts). Hooks only appear when a sync runs, so counting once per
    /// finished sync is enough and spares two LISTs per reconcile.
    hooks_seen: Mutex<HashMap<String, (i128, Option<LiveFinding>)>>,
    /// Consecutive failures per Application, for the error backoff.
    failures: Mutex<HashMap<String, u32>>,
    /// The loop state ConfigMap, when [`Config::state`](super::context::Config::state) is set.
    pub store: Option<StateStore>,
    /// `true` once this writer term has read what earlier writers left (Events, loop state);
    /// cleared whenever the lease is lost, so every term starts by reading.
    restored: AtomicBool,
    /// Serialises the restore (reconciles run four at a time).
    restore_lock: tokio::sync::Mutex<()>,
    /// When this process started (SG503: syncs before it wait for the audit's inventory).
    started: OffsetDateTime,
    /// Stalls seen per Application, for confirming and acting once ([`terminate`]).
    stalls: terminate::Stalls,
}

impl Reconciler {
    /// A reconciler over `ctx`; the Event instance name is the lease identity when there is
    /// one, else the field manager.
    pub fn new(ctx: Arc<Context>) -> Self {
        let instance = ctx
            .config
            .lease
            .as_ref()
            .map(|l| l.identity.clone())
            .unwrap_or_else(|| ctx.config.field_manager.clone());
        Self {
            loops: LoopTracker::new(ctx.config.loop_window),
            emitter: Emitter::new(ctx.config.event_dedup, &ctx.config.field_manager, &instance),
            hooks_seen: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
            store: ctx
                .config
                .state
                .clone()
                .map(|state| StateStore::new(ctx.client.clone(), state, &ctx.config.field_manager)),
            restored: AtomicBool::new(false),
            started: OffsetDateTime::now_utc(),
            restore_lock: tokio::sync::Mutex::new(()),
            stalls: terminate::Stalls::default(),
            ctx,
        }
    }

    /// Before the first write of a writer term: seeds the Event deduplication from the Events
    /// already written and merges the persisted loop state ([`super::state`]). Runs once per
    /// term; a failed read is logged and not retried in that term (the dedup then starts empty,
    /// as before persistence).
    pub async fn ensure_restored(&self, now: OffsetDateTime) {
        if self.restored.load(Ordering::Acquire) {
            return;
        }
        let _guard = self.restore_lock.lock().await;
        if self.restored.load(Ordering::Acquire) {
            return;
        }
        let cfg = &self.ctx.config;
        if cfg.restore_events {
            match state::finding_events(&self.ctx.client, &cfg.app_namespaces, &cfg.field_manager)
                .await
            {
                Ok(events) => {
                    let n = self.emitter.restore(&events, now);
                    tracing::info!(
                        events = events.len(),
                        causes = n,
                        "event deduplication restored from syncguard's Events"
                    );
                }
                Err(e) => tracing::warn!(error = %e,
                    "cannot read syncguard's earlier Events; causes they announced may be announced again"),
            }
        }
        if let Some(store) = &self.store {
            match store.load().await {
                Ok(snapshot) => {
                    self.loops.import(&snapshot, now);
                    tracing::info!(configmap = %store.display(), applications = snapshot.apps.len(),
                        "loop state restored");
                }
                Err(e) => tracing::warn!(configmap = %store.display(), error = %e,
                    "cannot read the loop state; loops in progress are recounted"),
            }
        }
        self.restored.store(true, Ordering::Release);
    }

    /// The lease was lost: the next term reads again what the other writer left.
    pub fn lost_lease(&self) {
        self.restored.store(false, Ordering::Release);
    }

    /// Writes the loop state if this replica is the writer, has read the earlier state in
    /// this term (never overwrite what was not read), and the state changed.
    pub async fn flush_state(&self, now: OffsetDateTime) {
        let Some(store) = &self.store else {
            return;
        };
        if !self.ctx.is_leader() || !self.restored.load(Ordering::Acquire) {
            return;
        }
        let snapshot = self.loops.export(now, state::MAX_PERSISTED_APPS);
        match store.save(&snapshot).await {
            Ok(true) => {
                ReconcilerMetrics::count(&self.ctx.metrics.state_writes, "applied");
                tracing::debug!(configmap = %store.display(), applications = snapshot.apps.len(),
                    "loop state written");
            }
            Ok(false) => {}
            Err(e) => {
                ReconcilerMetrics::count(&self.ctx.metrics.state_writes, "failed");
                tracing::warn!(configmap = %store.display(), error = %e,
                    "cannot write the loop state; will retry");
            }
        }
    }

    /// One reconcile of one Application at `now`: the findings it has now, how each was
    /// reported, and when to look again. Errors of one rule's API calls do not stop the other
    /// rules (nor the report of a less specific finding); the first error is returned after
    /// reporting, so the controller retries with backoff.
    pub async fn reconcile_app(
        &self,
        app: &Application,
        now: OffsetDateTime,
    ) -> Result<(Vec<LiveFinding>, Vec<Outcome>, Action)> {
        let cfg = &self.ctx.config;
        if self.ctx.is_leader() {
            self.ensure_restored(now).await;
        }
        let evidence = self.loops.observe(app, now);
        tracing::debug!(app = %app.display_name(), status = ?app.status.sync,
            flips = evidence.flips, syncs = evidence.syncs, turned_to = ?evidence.turned_to,
            "sync status observed");
        if let Some(to) = evidence.turned_to {
            self.ctx
                .metrics
                .status_changes
                .get_or_create(&StatusLabels { to })
                .inc();
        }
        let until_stuck = stuck::time_to_threshold(app, now, cfg.stuck_after);
        let mut next = match until_stuck {
            // Wake up just after the operation crosses the threshold.
            Some(left) => left + Duration::from_secs(1),
            None if stuck::is_stuck(app, now, cfg.stuck_after) => STUCK_RECHECK,
            None => IDLE_RECHECK,
        };
        let termination = match cfg.terminate {
            terminate::Mode::Off => terminate::Threshold::Off,
            _ => terminate::threshold(app, cfg.terminate_after),
        };
        if let terminate::Threshold::Invalid(why) = &termination {
            tracing::warn!(app = %app.display_name(), "{why}; the operation is never terminated");
        }
        let watching = terminate::watching(app, &termination, now);
        if let (Some(from), Some(running)) = (termination.watch_from(), app.status.running_for(now))
            && running < from
        {
            next = next.min(from - running + Duration::from_secs(1));
        }
        if !self.ctx.is_leader() {
            // A replica that lost the lease must not keep reporting its old open findings.
            self.emitter.report(&self.ctx, app, &[], now).await;
            return Ok((Vec::new(), Vec::new(), Action::requeue(next)));
        }
        let client = &self.ctx.client;
        let mut findings = Vec::new();
        let mut first_error: Option<Error> = None;
        let mut note = |e: Error| {
            tracing::warn!(app = %app.display_name(), error = %e, "live facts unavailable");
            first_error.get_or_insert(e);
        };

        let stuck_now = stuck::is_stuck(app, now, cfg.stuck_after);
        if stuck_now || watching {
            let blocker = stuck::blocker(app);
            let mut facts = stuck::LiveFacts::default();
            let fetched = match &blocker {
                Some(b) => stuck::fetch_facts(client, &self.ctx.budget, b, &mut facts).await,
                None => Ok(()),
            };
            let complete = fetched.is_ok();
            if let Err(e) = fetched {
                note(e);
            }
            if stuck_now {
                findings.extend(stuck::diagnose(
                    app,
                    now,
                    cfg.stuck_after,
                    blocker.as_ref(),
                    &facts,
                ));
            }
            // Never act on half the facts: a forbidden pod list must not read as "no pods".
            if watching && complete {
                let stall = stuck::certain_stall(app, blocker.as_ref(), &facts);
                if let Some(wait) = self.end_if_stalled(app, &termination, stall, now).await {
                    next = next.min(wait);
                }
            }
        } else {
            self.stalls.clear(&key(app));
        }

        if evidence.is_loop(cfg.loop_syncs) {
            let resources = self.loops.recent_out_of_sync(app);
            let live = sync_loop::fetch_live(client, &self.ctx.budget, &resources)
                .await
                .unwrap_or_else(|e| {
                    note(e);
                    Vec::new()
                });
            findings.extend(sync_loop::diagnose(
                app,
                evidence,
                cfg.loop_syncs,
                cfg.loop_window,
                &resources,
                &live,
            ));
        }

        let inventory = self.ctx.hooks.current.load_full();
        let audit_runs = self.ctx.hooks.audit_running.load(Ordering::Acquire);
        match self.hooks_due(app) {
            HooksDue::No(previous) => findings.extend(previous),
            // The audit listed every Job and Pod after this sync finished: count from that.
            HooksDue::Yes(sync)
                if inventory
                    .as_ref()
                    .and_then(|i| i.taken_at)
                    .is_some_and(|t| t.unix_timestamp_nanos() >= sync) =>
            {
                let objects = inventory
                    .as_ref()
                    .map(|i| i.hooks_of(app))
                    .unwrap_or_default();
                let finding = hooks::diagnose(app, &objects, cfg.hook_threshold);
                self.hooks_counted(app, sync, finding.clone());
                findings.extend(finding);
            }
            // A sync from before this process started, with the audit about to list every Job
            // and Pod: wait for that pass rather than list per Application (at start and on
            // every lease won that would be two LISTs for every Application at once). Nothing is
            // marked counted; the next reconcile after the pass counts it.
            HooksDue::Yes(sync) if audit_runs && sync < self.started.unix_timestamp_nanos() => {}
            HooksDue::Yes(sync) => match hooks::fetch(client, &self.ctx.budget, app).await {
                Ok(objects) => {
                    let finding = hooks::diagnose(app, &objects, cfg.hook_threshold);
                    self.hooks_counted(app, sync, finding.clone());
                    findings.extend(finding);
                }
                Err(e) => note(e),
            },
        }

        let outcomes = self.emitter.report(&self.ctx, app, &findings, now).await;
        match first_error {
            Some(e) => Err(e),
            None => Ok((findings, outcomes, Action::requeue(next))),
        }
    }

    /// Ends `app`'s operation when its stall is certain, past the threshold and confirmed
    /// ([`terminate`]); returns when to look again while a certain stall is not acted on yet.
    async fn end_if_stalled(
        &self,
        app: &Application,
        threshold: &terminate::Threshold,
        stall: std::result::Result<stuck::Stall, String>,
        now: OffsetDateTime,
    ) -> Option<Duration> {
        let terminate::Threshold::After { after, .. } = threshold else {
            return None;
        };
        let app_key = key(app);
        let running = app.status.running_for(now)?;
        let (seen_for, acted) = match &stall {
            Ok(s) => self.stalls.observe(&app_key, &s.fingerprint, now),
            Err(why) => {
                tracing::debug!(app = %app.display_name(), "not terminated: {why}");
                self.stalls.clear(&app_key);
                return None;
            }
        };
        let decision = terminate::decide(
            running,
            *after,
            stall.as_ref().map_err(String::as_str),
            seen_for,
        );
        let stall = stall.ok()?;
        match decision {
            terminate::Decision::Leave(_) => None,
            terminate::Decision::Wait(wait) => Some(wait + Duration::from_secs(1)),
            terminate::Decision::Terminate if acted => None,
            terminate::Decision::Terminate => {
                let mode = self.ctx.config.terminate;
                let count = |outcome| {
                    self.ctx
                        .metrics
                        .terminations
                        .get_or_create(&TerminationLabels {
                            outcome,
                            cause: stall.cause.label(),
                        })
                        .inc();
                };
                if mode == terminate::Mode::On {
                    match terminate::terminate_operation(&self.ctx.client, app).await {
                        Ok(terminate::Written::Terminated) => count("terminated"),
                        Ok(terminate::Written::Changed(why)) => {
                            tracing::info!(app = %app.display_name(), "not terminated: {why}");
                            count("skipped");
                            self.stalls.acted(&app_key);
                            return None;
                        }
                        Err(e) => {
                            tracing::warn!(app = %app.display_name(), error = %e,
                                "cannot terminate the stuck operation; will retry");
                            count("failed");
                            return Some(RETRY_TERMINATE);
                        }
                    }
                } else {
                    count("dry_run");
                }
                self.stalls.acted(&app_key);
                let what = terminate::announcement(app, &stall, threshold, running, mode);
                tracing::warn!(app = %app.display_name(), "{}", what.note);
                if let Err(e) = self.emitter.announce(&self.ctx, app, &what, now).await {
                    ReconcilerMetrics::count(&self.ctx.metrics.events, "failed");
                    tracing::warn!(app = %app.display_name(), error = %e,
                        "cannot create the termination Event");
                } else {
                    ReconcilerMetrics::count(&self.ctx.metrics.events, "emitted");
                }
                None
            }
        }
    }

    /// Forgets every Application whose key (uid) is not in `live`: deleted Applications are
    /// never reconciled again, so their open findings, counts and memories would stay for ever.
    pub fn forget_missing(&self, live: &HashSet<String>) {
        self.emitter.forget_missing(&self.ctx.metrics, live);
        self.loops.forget_missing(live);
        self.stalls.forget_missing(live);
        if let Ok(mut seen) = self.hooks_seen.lock() {
            seen.retain(|k, _| live.contains(k));
        }
        if let Ok(mut failures) = self.failures.lock() {
            failures.retain(|k, _| live.contains(k));
        }
    }

    fn hooks_due(&self, app: &Application) -> HooksDue {
        let Some(sync) = last_finished_sync(app) else {
            return HooksDue::No(None);
        };
        let Ok(seen) = self.hooks_seen.lock() else {
            return HooksDue::No(None);
        };
        match seen.get(&key(app)) {
            Some((checked, finding)) if *checked == sync => HooksDue::No(finding.clone()),
            _ => HooksDue::Yes(sync),
        }
    }

    fn hooks_counted(&self, app: &Application, sync: i128, finding: Option<LiveFinding>) {
        if let Ok(mut seen) = self.hooks_seen.lock() {
            if seen.len() >= MAX_REMEMBERED_APPS {
                seen.clear();
            }
            seen.insert(key(app), (sync, finding));
        }
    }

    fn failed(&self, app_key: &str) -> u32 {
        let Ok(mut failures) = self.failures.lock() else {
            return 1;
        };
        if failures.len() >= MAX_REMEMBERED_APPS {
            failures.clear();
        }
        let n = failures.entry(app_key.to_string()).or_insert(0);
        *n = n.saturating_add(1);
        *n
    }

    fn succeeded(&self, app_key: &str) {
        if let Ok(mut failures) = self.failures.lock() {
            failures.remove(app_key);
        }
    }
}

enum HooksDue {
    /// Already counted for the last finished sync: the finding then (if any) is still open.
    No(Option<LiveFinding>),
    /// A sync finished since the last count (its key is given).
    Yes(i128),
}

/// The newest finished sync: the finished operation, else the last history entry.
fn last_finished_sync(app: &Application) -> Option<i128> {
    let op = app
        .status
        .operation
        .as_ref()
        .filter(|o| !o.in_progress())
        .and_then(|o| o.finished_at);
    let history = app
        .status
        .history
        .iter()
        .filter_map(|h| h.deployed_at)
        .max();
    op.into_iter()
        .chain(history)
        .max()
        .map(OffsetDateTime::unix_timestamp_nanos)
}

fn key(app: &Application) -> String {
    app.uid.clone().unwrap_or_else(|| app.display_name())
}

pub use super::cached::WatchedApplication;

/// The controller's reconcile function.
pub async fn reconcile(obj: Arc<WatchedApplication>, r: Arc<Reconciler>) -> Result<Action> {
    let started = Instant::now();
    let Some(app) = obj.live() else {
        return Ok(Action::await_change());
    };
    let result = r.reconcile_app(app, OffsetDateTime::now_utc()).await;
    let metrics = &r.ctx.metrics;
    metrics
        .reconcile_seconds
        .observe(started.elapsed().as_secs_f64());
    match result {
        Ok((_, _, action)) => {
            ReconcilerMetrics::count(&metrics.reconciles, "ok");
            r.succeeded(&key(app));
            Ok(action)
        }
        Err(e) => {
            ReconcilerMetrics::count(&metrics.reconciles, "error");
            Err(e)
        }
    }
}

/// Retries a failed reconcile with exponential backoff per Application (5 s, 10 s, ... 5 min),
/// so a forbidden namespace or a flapping API server is not hammered.
pub fn error_policy(obj: Arc<WatchedApplication>, error: &Error, r: Arc<Reconciler>) -> Action {
    let meta = kube::Resource::meta(obj.as_ref());
    let name = format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    );
    let app_key = meta.uid.clone().unwrap_or_else(|| name.clone());
    let n = r.failed(&app_key);
    let delay = backoff(n);
    tracing::warn!(app = %name, error = %error, reason = error.metric_label(), retry_in = ?delay,
        "reconcile failed");
    Action::requeue(delay)
}

/// The delay before retry number `n` (1-based).
pub fn backoff(n: u32) -> Duration {
    let (first, cap) = ERROR_BACKOFF;
    first
        .checked_mul(2u32.saturating_pow(n.saturating_sub(1)))
        .map_or(cap, |d| d.min(cap))
}

/// One item each time `leader` turns from `false` to `true` (not for the initial value: the
/// controller's first list reconciles everything anyway). Ends when the sender is dropped.
pub fn leadership_gained(
    leader: watch::Receiver<bool>,
) -> impl futures::Stream<Item = ()> + Send + 'static {
    futures::stream::unfold(leader, |mut rx| async move {
        loop {
            rx.changed().await.ok()?;
            if *rx.borrow_and_update() {
                return Some(((), rx));
            }
        }
    })
}

/// Completes when shutdown starts while `store` has not synced yet, and never otherwise.
///
/// kube-runtime's controller holds every reconcile until its store has listed once, and in a
/// graceful shutdown it waits for the held ones — forever when the API server never answered
/// that first list (unreachable, or accepting connections but not answering): this was the
/// hang of `syncguard reconcile` on SIGTERM without an API server (issue 23). No reconcile can
/// have started then, so dropping such a controller at once loses nothing.
async fn stopped_before_sync(
    store: reflector::Store<WatchedApplication>,
    mut stop: watch::Receiver<bool>,
) {
    use futures::FutureExt as _;
    let _ = stop.wait_for(|s| *s).await;
    if matches!(store.wait_until_ready().now_or_never(), Some(Ok(()))) {
        std::future::pending::<()>().await;
    }
}

/// Aborts a helper task when the controller's future ends or is dropped (the runner cuts the
/// controller short when it outlives its share of the shutdown timeout).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Watches Applications (all namespaces, or one watch per configured namespace) and reconciles
/// them with `reconciler` until `shutdown` completes; in-flight reconciles finish first (the
/// runner bounds that, [`super::run::ShutdownBudget::writers`], and then writes the loop state
/// one last time). A watch that never synced stops at once. Sets the `ready` gauge once every
/// watch has listed its Applications.
pub async fn run(reconciler: Arc<Reconciler>, shutdown: impl Future<Output = ()> + Send + 'static) {
    let ctx = reconciler.ctx.clone();
    let apis: Vec<Api<WatchedApplication>> = if ctx.config.app_namespaces.is_empty() {
        vec![Api::all(ctx.client.clone())]
    } else {
        ctx.config
            .app_namespaces
            .iter()
            .map(|ns| Api::namespaced(ctx.client.clone(), ns))
            .collect()
    };
    let (stop_tx, stop_rx) = watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = stop_tx.send(true);
    });

    let mut stores = Vec::new();
    let mut sweep_stores = Vec::new();
    let mut shared_stores = Vec::new();
    let mut runs = Vec::new();
    for api in apis {
        let mut stop = stop_rx.clone();
        // The controller's own store, filled from a watch whose objects are read into what the
        // diagnosis needs as they arrive (super::cached).
        let writer = reflector::store::Writer::<WatchedApplication>::default();
        let reader = writer.as_reader();
        let trigger = watcher(api, watcher::Config::default())
            .default_backoff()
            .reflect(writer)
            .applied_objects();
        let controller = Controller::for_stream(trigger, reader)
            .with_config(controller::Config::default().concurrency(4))
            // A follower reconciles without looking (no live reads, no Events) and requeues a
            // stuck Application only every 5 minutes: on gaining the lease, look at every
            // Application now, or a stuck sync listed before the lease was won (every start
            // with election, every hand-over) stays unreported until it changes.
            .reconcile_all_on(leadership_gained(ctx.leader.clone()))
            .graceful_shutdown_on(async move {
                let _ = stop.wait_for(|s| *s).await;
            });
        stores.push(controller.store());
        sweep_stores.push(controller.store());
        shared_stores.push(controller.store());
        let unsynced = stopped_before_sync(controller.store(), stop_rx.clone());
        let run = controller
            .run(reconcile, error_policy, reconciler.clone())
            .for_each(|result| async move {
                match result {
                    Ok((obj, _)) => tracing::debug!(app = %obj.name, "reconciled"),
                    Err(controller::Error::ReconcilerFailed(e, obj)) => {
                        tracing::debug!(app = %obj.name, error = %e, "reconcile failed")
                    }
                    Err(e) => tracing::warn!(error = %e, "application watch"),
                }
            });
        runs.push(async move {
            tokio::select! {
                () = run => {}
                () = unsynced => tracing::info!(
                    "the Application watch never synced (no answer from the API server): \
                     stopped at once, no reconcile had started"),
            }
        });
    }
    // The audit reads the Applications from these stores rather than listing them again.
    ctx.applications.publish(shared_stores);
    let metrics = ctx.metrics.clone();
    let ready_ctx = ctx.clone();
    let ready = tokio::spawn(async move {
        for store in stores {
            // Re-poll on a short timer: the store's readiness is a single-waiter oneshot in
            // kube-runtime 5, and the controller waits on it too, so a lone waiter here can miss
            // the wake-up (seen in tests: ready never fired).
            loop {
                match tokio::time::timeout(READY_POLL, store.wait_until_ready()).await {
                    Ok(Ok(())) => break,
                    Ok(Err(_)) => return,
                    Err(_) => {}
                }
            }
        }
        tracing::info!("application watch synced");
        ready_ctx.applications.mark_ready();
        metrics.ready.set(1);
    });
    let sweeper = tokio::spawn({
        let reconciler = reconciler.clone();
        let stores = sweep_stores;
        async move {
            let mut tick = tokio::time::interval(FORGET_SWEEP);
            tick.tick().await;
            loop {
                tick.tick().await;
                let live: HashSet<String> = stores
                    .iter()
                    .flat_map(|s| s.state())
                    .map(|o| {
                        let meta = kube::Resource::meta(o.as_ref());
                        meta.uid.clone().unwrap_or_else(|| {
                            format!(
                                "{}/{}",
                                meta.namespace.as_deref().unwrap_or_default(),
                                meta.name.as_deref().unwrap_or_default()
                            )
                        })
                    })
                    .collect();
                reconciler.forget_missing(&live);
            }
        }
    });
    // The loop state: written by the writer while it changes (and by the runner once more on
    // the way out, before the Lease is released, so still as the writer).
    let flusher = tokio::spawn({
        let reconciler = reconciler.clone();
        let mut leader = ctx.leader.clone();
        async move {
            let mut tick = tokio::time::interval(state::FLUSH_EVERY);
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tokio::select! {
                    _ = tick.tick() => reconciler.flush_state(OffsetDateTime::now_utc()).await,
                    changed = leader.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        if !*leader.borrow_and_update() {
                            reconciler.lost_lease();
                        }
                    }
                }
            }
        }
    });
    let _helpers = [ready, sweeper, flusher].map(AbortOnDrop);
    futures::future::join_all(runs).await;
    ctx.metrics.ready.set(0);
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::reconciler::context::Config;
    use crate::reconciler::fixtures::{
        self, AppBuilder, Exchange, assert_no_more_requests, context, event_json, job_json,
        mock_client, pod_crashlooping_json, serve, within_2s,
    };
    use crate::reconciler::hooks::tests::hook_job_json;
    use crate::reconciler::stuck::tests::at;
    use serde_json::{Value, json};

    fn seed_app() -> AppBuilder {
        AppBuilder::new("svc-foo")
            .destination("app-foo")
            .running_since("2026-11-30T02:00:00Z")
            .running_hook("PreSync", "batch", "Job", "svc-foo-migration")
            .resource(
                "external-secrets.io",
                "ExternalSecret",
                "db-creds",
                2,
                false,
            )
            .resource("batch", "Job", "svc-foo-migration", 5, true)
    }

    /// The API calls SG501 makes for the seed incident, in order.
    fn stuck_sync_facts() -> Vec<Exchange> {
        vec![
            Exchange::get(
                "/apis/batch/v1/namespaces/app-foo/jobs/svc-foo-migration",
                job_json("app-foo", "svc-foo-migration", "2026-11-30T02:00:00Z"),
            ),
            Exchange::list(
                "/api/v1/namespaces/app-foo/pods",
                &["labelSelector=batch.kubernetes.io%2Fcontroller-uid%3Djob-uid-svc-foo-migration"],
                vec![pod_crashlooping_json(
                    "app-foo",
                    "svc-foo-migration-x7k2p",
                    7,
                )],
            ),
            Exchange::list(
                "/api/v1/namespaces/app-foo/events",
                &["fieldSelector=involvedObject.uid%3Dpod-uid-svc-foo-migration-x7k2p"],
                vec![event_json(
                    "FailedMount",
                    "MountVolume.SetUp failed for volume \"db\" : secret \"db-creds\" not found",
                )],
            ),
        ]
    }

    fn event_post(reason: &'static str, note_contains: &'static str) -> Exchange {
        Exchange::post(
            "/apis/events.k8s.io/v1/namespaces/argocd/events",
            move |ev: &Value| {
                assert_eq!(ev["reason"], reason);
                assert_eq!(ev["type"], "Warning");
                assert_eq!(ev["action"], "Diagnose");
                assert_eq!(ev["reportingController"], "syncguard");
                assert_eq!(
                    ev["reportingInstance"], "syncguard",
                    "no lease: the field manager"
                );
                assert!(
                    ev["eventTime"].as_str().is_some_and(|t| t.contains('T')),
                    "{ev}"
                );
                assert_eq!(ev["metadata"]["namespace"], ev["regarding"]["namespace"]);
                assert!(
                    ev["regarding"]["uid"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("uid-"))
                );
                assert_eq!(ev["regarding"]["kind"], "Application");
                assert_eq!(ev["regarding"]["apiVersion"], "argoproj.io/v1alpha1");
                let note = ev["note"].as_str().unwrap();
                assert!(note.len() <= 1024);
                assert!(note.contains(note_contains), "{note}");
            },
        )
    }

    #[tokio::test]
    async fn a_stuck_sync_is_found_explained_and_reported_once_as_an_event() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let mut script = stuck_sync_facts();
        script.push(event_post(
            "StuckSync",
            "PreSync Job svc-foo-migration has run 41 min; its pod is in CrashLoopBackOff: secret \
             db-creds not found — the Secret comes from ExternalSecret db-creds, created in wave \
             2 of the Sync phase, after this hook.",
        ));
        let server = serve(handle, script);
        let (findings, outcomes, action) =
            within_2s(r.reconcile_app(&app, at("2026-11-30T02:41:00Z")))
                .await
                .unwrap();
        assert_eq!(findings.len(), 1);
        assert_eq!(outcomes, [Outcome::Emitted]);
        assert_eq!(action, Action::requeue(STUCK_RECHECK));
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        let metrics = r.ctx.metrics.encode();
        assert!(
            metrics.contains("syncguard_events_total{outcome=\"emitted\"} 1"),
            "{metrics}"
        );
        assert!(
            metrics.contains("syncguard_open_live_findings{rule=\"SG501\"} 1"),
            "{metrics}"
        );
    }

    #[tokio::test]
    async fn a_second_reconcile_of_the_same_stuck_sync_makes_no_new_event() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let mut script = stuck_sync_facts();
        script.push(event_post("StuckSync", "CrashLoopBackOff"));
        // The second reconcile re-reads the facts (they may change) but posts nothing.
        script.extend(stuck_sync_facts());
        let server = serve(handle, script);
        let first = within_2s(r.reconcile_app(&app, at("2026-11-30T02:41:00Z")))
            .await
            .unwrap();
        let second = within_2s(r.reconcile_app(&app, at("2026-11-30T02:46:00Z")))
            .await
            .unwrap();
        assert_eq!(first.1, [Outcome::Emitted]);
        assert_eq!(second.1, [Outcome::Deduplicated]);
        assert_ne!(
            first.0[0].message, second.0[0].message,
            "the duration moved on"
        );
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        let metrics = r.ctx.metrics.encode();
        assert!(
            metrics.contains("syncguard_events_total{outcome=\"deduplicated\"} 1"),
            "{metrics}"
        );
        assert!(
            metrics.contains("syncguard_live_findings_total{rule=\"SG501\"} 1"),
            "{metrics}"
        );
    }

    #[tokio::test]
    async fn a_restarted_reconciler_reads_its_earlier_events_and_does_not_announce_the_cause_again()
    {
        // The first process announces the stuck sync; keep the Event it posted.
        let (client, handle) = mock_client();
        let first = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let posted = Arc::new(Mutex::new(Value::Null));
        let keep = posted.clone();
        let mut script = stuck_sync_facts();
        script.push(Exchange::post(
            "/apis/events.k8s.io/v1/namespaces/argocd/events",
            move |ev: &Value| {
                assert_eq!(ev["metadata"]["labels"]["syncguard.dev/rule"], "SG501");
                assert_eq!(
                    ev["metadata"]["labels"]["app.kubernetes.io/managed-by"],
                    "syncguard"
                );
                assert_eq!(
                    ev["metadata"]["annotations"]["syncguard.dev/application-uid"],
                    "uid-svc-foo"
                );
                assert!(ev["metadata"]["annotations"]["syncguard.dev/fingerprint"].is_string());
                *keep.lock().unwrap() = ev.clone();
            },
        ));
        let server = serve(handle, script);
        let out = within_2s(first.reconcile_app(&app, at("2026-11-30T02:41:00Z")))
            .await
            .unwrap();
        assert_eq!(out.1, [Outcome::Emitted]);
        within_2s(server).await.unwrap();
        let event = posted.lock().unwrap().clone();

        // The restarted process lists syncguard's Events and the loop state before its first
        // write, finds the cause announced 5 minutes ago, and posts nothing.
        let (client, handle) = mock_client();
        let config = Config {
            restore_events: true,
            state: Some(state::StateConfig {
                namespace: "syncguard".into(),
                name: "syncguard-reconciler-state".into(),
            }),
            ..Config::default()
        };
        let second = Reconciler::new(context(client, config, true));
        let mut script = vec![
            Exchange::list(
                "/apis/events.k8s.io/v1/events",
                &[
                    "labelSelector=app.kubernetes.io%2Fmanaged-by%3Dsyncguard%2Csyncguard.dev%2Frule",
                ],
                vec![event],
            ),
            Exchange::not_found(
                "/api/v1/namespaces/syncguard/configmaps/syncguard-reconciler-state",
            ),
        ];
        script.extend(stuck_sync_facts());
        // A second reconcile in the same term reads nothing again.
        script.extend(stuck_sync_facts());
        let server = serve(handle, script);
        let again = within_2s(second.reconcile_app(&app, at("2026-11-30T02:46:00Z")))
            .await
            .unwrap();
        assert_eq!(again.0.len(), 1, "the finding is still open");
        assert_eq!(again.1, [Outcome::Deduplicated]);
        let third = within_2s(second.reconcile_app(&app, at("2026-11-30T02:47:00Z")))
            .await
            .unwrap();
        assert_eq!(third.1, [Outcome::Deduplicated]);
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        let metrics = second.ctx.metrics.encode();
        assert!(
            metrics.contains("syncguard_open_live_findings{rule=\"SG501\"} 1"),
            "{metrics}"
        );
        // Past the dedup period the old Event no longer counts.
        let (client, handle) = mock_client();
        let config = Config {
            restore_events: true,
            ..Config::default()
        };
        let late = Reconciler::new(context(client, config, true));
        let mut script = vec![Exchange::list(
            "/apis/events.k8s.io/v1/events",
            &[],
            vec![posted.lock().unwrap().clone()],
        )];
        script.extend(stuck_sync_facts());
        script.push(event_post("StuckSync", "CrashLoopBackOff"));
        let server = serve(handle, script);
        let late_out = within_2s(late.reconcile_app(&app, at("2026-11-30T03:42:00Z")))
            .await
            .unwrap();
        assert_eq!(late_out.1, [Outcome::Emitted]);
        within_2s(server).await.unwrap();
    }

    #[tokio::test]
    async fn the_writer_saves_the_loop_state_only_after_reading_it_and_only_when_it_changed() {
        let (client, handle) = mock_client();
        let config = Config {
            state: Some(state::StateConfig {
                namespace: "syncguard".into(),
                name: "syncguard-reconciler-state".into(),
            }),
            loop_syncs: 5,
            ..Config::default()
        };
        let r = Reconciler::new(context(client, config, true));
        let t0 = at("2026-11-30T02:00:00Z");
        // Nothing read yet in this term: nothing is written.
        r.flush_state(t0).await;
        let saved = Arc::new(Mutex::new(Value::Null));
        let keep = saved.clone();
        let apply = Exchange::patch(
            "/api/v1/namespaces/syncguard/configmaps/syncguard-reconciler-state",
            move |cm: &Value| *keep.lock().unwrap() = cm.clone(),
        );
        let script = vec![
            Exchange::not_found(
                "/api/v1/namespaces/syncguard/configmaps/syncguard-reconciler-state",
            ),
            apply,
        ];
        let server = serve(handle, script);
        let synced = AppBuilder::new("shop").sync_status("Synced").live();
        let out = AppBuilder::new("shop").sync_status("OutOfSync").live();
        within_2s(r.reconcile_app(&synced, t0)).await.unwrap();
        within_2s(r.reconcile_app(&out, t0 + Duration::from_secs(30)))
            .await
            .unwrap();
        r.flush_state(t0 + Duration::from_secs(40)).await;
        // Unchanged: no second write.
        r.flush_state(t0 + Duration::from_secs(50)).await;
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        let cm = saved.lock().unwrap().clone();
        assert_eq!(
            cm["metadata"]["labels"]["app.kubernetes.io/managed-by"],
            "syncguard"
        );
        let snap = state::LoopSnapshot::parse(cm["data"]["loops.json"].as_str().unwrap());
        let saved_app = &snap.apps["uid-shop"];
        assert_eq!(saved_app.flips.len(), 1);
        assert_eq!(saved_app.app, "argocd/shop");
        // A lost lease: the next term reads again before writing.
        r.lost_lease();
        let mut handle = handle;
        r.flush_state(t0 + Duration::from_secs(60)).await;
        assert_no_more_requests(&mut handle).await;
    }

    #[tokio::test]
    async fn below_the_threshold_nothing_is_fetched_and_the_app_is_requeued_at_the_threshold() {
        let (client, mut handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let (findings, outcomes, action) =
            within_2s(r.reconcile_app(&app, at("2026-11-30T02:10:00Z")))
                .await
                .unwrap();
        assert!(findings.is_empty() && outcomes.is_empty());
        assert_eq!(action, Action::requeue(Duration::from_secs(10 * 60 + 1)));
        assert_no_more_requests(&mut handle).await;
    }

    #[tokio::test]
    async fn a_follower_diagnoses_nothing_and_never_calls_the_api() {
        let (client, mut handle) = mock_client();
        let r = Arc::new(Reconciler::new(context(client, Config::default(), false)));
        // Through the controller's entry point, as kube-runtime calls it.
        let action = within_2s(reconcile(Arc::new(seed_app().watched()), r.clone()))
            .await
            .unwrap();
        assert_eq!(
            action,
            Action::requeue(STUCK_RECHECK),
            "stuck for hours by now"
        );
        assert_no_more_requests(&mut handle).await;
        let metrics = r.ctx.metrics.encode();
        assert!(metrics.contains("syncguard_application_reconciles_total{outcome=\"ok\"} 1"));
        assert!(!metrics.contains("syncguard_events_total{"), "{metrics}");
    }

    #[tokio::test]
    async fn every_sync_status_change_is_counted_by_the_status_turned_to_even_on_a_follower() {
        let (client, mut handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), false));
        let t = at("2026-11-30T02:10:00Z");
        for status in ["Synced", "OutOfSync", "OutOfSync", "Synced", "OutOfSync"] {
            let app = AppBuilder::new("web").sync_status(status).live();
            within_2s(r.reconcile_app(&app, t)).await.unwrap();
        }
        assert_no_more_requests(&mut handle).await;
        let metrics = r.ctx.metrics.encode();
        assert!(
            metrics.contains("syncguard_sync_status_changes_total{to=\"OutOfSync\"} 2"),
            "{metrics}"
        );
        assert!(
            metrics.contains("syncguard_sync_status_changes_total{to=\"Synced\"} 1"),
            "{metrics}"
        );
    }

    const APP_PATH: &str = "/apis/argoproj.io/v1alpha1/namespaces/argocd/applications/svc-foo";

    /// Termination on (or dry run), SG501 far away so only the termination path writes.
    fn terminating(mode: terminate::Mode) -> Config {
        Config {
            terminate: mode,
            stuck_after: Duration::from_secs(10 * 3600),
            ..Config::default()
        }
    }

    /// The seed incident, opted in at 20 min: its PreSync Job needs Secret db-creds, which an
    /// ExternalSecret of the Sync phase makes — an ordering deadlock.
    fn opted_in() -> AppBuilder {
        seed_app().annotation("syncguard.dev/terminate-stuck-after", "20m")
    }

    /// The Application as the API server serves it while the operation runs.
    fn served(app: &AppBuilder) -> Value {
        let mut v = app.json();
        v["operation"] = json!({"sync": {"revision": "abc"}, "initiatedBy": {"automated": true}});
        v
    }

    fn terminated_event(reason: &'static str, note_contains: &'static str) -> Exchange {
        Exchange::post(
            "/apis/events.k8s.io/v1/namespaces/argocd/events",
            move |ev: &Value| {
                assert_eq!(ev["reason"], reason);
                assert_eq!(ev["action"], "Terminate");
                assert_eq!(ev["regarding"]["name"], "svc-foo");
                let note = ev["note"].as_str().unwrap();
                assert!(note.contains(note_contains), "{note}");
                assert!(note.contains("threshold 20 min from annotation"), "{note}");
            },
        )
    }

    #[tokio::test]
    async fn a_deadlocked_hook_past_the_threshold_is_terminated_once_as_argocd_does() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, terminating(terminate::Mode::On), true));
        let builder = opted_in();
        let app = builder.live();
        let mut script = stuck_sync_facts();
        script.extend(stuck_sync_facts());
        script.push(Exchange::get(APP_PATH, served(&builder)));
        script.push(Exchange::put(APP_PATH, |body: &Value| {
            assert_eq!(body["status"]["operationState"]["phase"], "Terminating");
            // The whole object goes back as read: the operation, the spec, the version.
            assert_eq!(body["operation"]["sync"]["revision"], "abc");
            assert_eq!(body["metadata"]["resourceVersion"], "100");
            assert_eq!(body["spec"]["destination"]["namespace"], "app-foo");
        }));
        script.push(terminated_event(
            "StuckSyncTerminated",
            "Terminated the sync operation of Application argocd/svc-foo after 31 min",
        ));
        script.extend(stuck_sync_facts());
        let server = serve(handle, script);
        // Seen first: a certain stall (the Secret comes later), not yet confirmed.
        let (_, _, first) = within_2s(r.reconcile_app(&app, at("2026-11-30T02:30:00Z")))
            .await
            .unwrap();
        assert_eq!(first, Action::requeue(Duration::from_secs(61)));
        // A minute later: still the same cause, so it is ended.
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:31:01Z")))
            .await
            .unwrap();
        // Argo CD has not caught up yet: the same view again does not terminate twice.
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:32:00Z")))
            .await
            .unwrap();
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        let metrics = r.ctx.metrics.encode();
        assert!(
            metrics.contains(
                "syncguard_stuck_operations_terminated_total{outcome=\"terminated\",cause=\"ordering_deadlock\"} 1"
            ),
            "{metrics}"
        );
    }

    #[tokio::test]
    async fn a_dry_run_only_says_what_it_would_do() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, terminating(terminate::Mode::DryRun), true));
        let app = opted_in().live();
        let mut script = stuck_sync_facts();
        script.extend(stuck_sync_facts());
        script.push(terminated_event(
            "StuckSyncWouldTerminate",
            "Would terminate (dry run: nothing was written)",
        ));
        let server = serve(handle, script);
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:30:00Z")))
            .await
            .unwrap();
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:31:01Z")))
            .await
            .unwrap();
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        assert!(r.ctx.metrics.encode().contains(
            "syncguard_stuck_operations_terminated_total{outcome=\"dry_run\",cause=\"ordering_deadlock\"} 1"
        ));
    }

    #[tokio::test]
    async fn a_hook_whose_pod_runs_is_never_terminated_however_long_it_takes() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, terminating(terminate::Mode::On), true));
        let app = opted_in().live();
        let running_facts = || {
            let pod = json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "svc-foo-migration-x7k2p", "namespace": "app-foo",
                             "uid": "pod-uid-svc-foo-migration-x7k2p",
                             "creationTimestamp": "2026-11-30T02:00:05Z"},
                "spec": {"containers": [{"name": "migrate", "image": "x"}]},
                "status": {"phase": "Running", "containerStatuses": [{"name": "migrate",
                           "image": "x", "imageID": "", "ready": true, "restartCount": 0,
                           "state": {"running": {"startedAt": "2026-11-30T02:00:09Z"}}}]}
            });
            let mut facts = stuck_sync_facts();
            facts.truncate(1);
            facts.push(Exchange::list(
                "/api/v1/namespaces/app-foo/pods",
                &[],
                vec![pod],
            ));
            facts.push(Exchange::list(
                "/api/v1/namespaces/app-foo/events",
                &[],
                vec![],
            ));
            facts
        };
        let mut script = Vec::new();
        for _ in 0..3 {
            script.extend(running_facts());
        }
        let server = serve(handle, script);
        for now in [
            "2026-11-30T03:00:00Z",
            "2026-11-30T04:00:00Z",
            "2026-11-30T07:00:00Z",
        ] {
            within_2s(r.reconcile_app(&app, at(now))).await.unwrap();
        }
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        assert!(
            !r.ctx
                .metrics
                .encode()
                .contains("stuck_operations_terminated_total{")
        );
    }

    #[tokio::test]
    async fn an_update_conflict_is_retried_on_a_fresh_read_and_an_ended_operation_is_left_alone() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, terminating(terminate::Mode::On), true));
        let builder = opted_in();
        let app = builder.live();
        let mut script = stuck_sync_facts();
        script.extend(stuck_sync_facts());
        script.push(Exchange::get(APP_PATH, served(&builder)));
        script.push(Exchange::put(APP_PATH, |_: &Value| {}).failing(409));
        // Read again: meanwhile the operation failed on its own — nothing more is written.
        let mut ended = served(&builder);
        ended["status"]["operationState"]["phase"] = json!("Failed");
        script.push(Exchange::get(APP_PATH, ended));
        let server = serve(handle, script);
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:30:00Z")))
            .await
            .unwrap();
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:31:01Z")))
            .await
            .unwrap();
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        assert!(r.ctx.metrics.encode().contains(
            "syncguard_stuck_operations_terminated_total{outcome=\"skipped\",cause=\"ordering_deadlock\"} 1"
        ));
    }

    #[tokio::test]
    async fn without_the_opt_in_nothing_is_watched_or_written() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, terminating(terminate::Mode::On), true));
        let app = seed_app().live();
        let server = serve(handle, Vec::new());
        let (findings, _, _) = within_2s(r.reconcile_app(&app, at("2026-11-30T05:00:00Z")))
            .await
            .unwrap();
        assert!(findings.is_empty());
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
    }

    #[tokio::test]
    async fn a_hook_whose_job_is_gone_is_still_reported_with_its_phase_and_duration() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let server = serve(
            handle,
            vec![
                Exchange::not_found("/apis/batch/v1/namespaces/app-foo/jobs/svc-foo-migration"),
                Exchange::list(
                    "/api/v1/namespaces/app-foo/pods",
                    &["labelSelector=batch.kubernetes.io%2Fjob-name%3Dsvc-foo-migration"],
                    vec![],
                ),
                event_post(
                    "StuckSync",
                    "PreSync Job svc-foo-migration has run 25 min and Argo CD still waits for \
                     it, but Job app-foo/svc-foo-migration no longer exists.",
                ),
            ],
        );
        let (_, outcomes, _) = within_2s(r.reconcile_app(&app, at("2026-11-30T02:25:00Z")))
            .await
            .unwrap();
        assert_eq!(outcomes, [Outcome::Emitted]);
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
    }

    #[tokio::test]
    async fn a_forbidden_pod_list_still_reports_the_hook_and_fails_the_reconcile_for_a_retry() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let server = serve(
            handle,
            vec![
                Exchange::get(
                    "/apis/batch/v1/namespaces/app-foo/jobs/svc-foo-migration",
                    job_json("app-foo", "svc-foo-migration", "2026-11-30T02:00:00Z"),
                ),
                Exchange::list("/api/v1/namespaces/app-foo/pods", &[], vec![]).failing(403),
                event_post(
                    "StuckSync",
                    "PreSync Job svc-foo-migration has run 30 min and Argo CD is still waiting \
                     for it.",
                ),
            ],
        );
        let err = within_2s(r.reconcile_app(&app, at("2026-11-30T02:30:00Z")))
            .await
            .unwrap_err();
        assert_eq!(err.api_code(), Some(403));
        assert_eq!(err.metric_label(), "kube");
        within_2s(server).await.unwrap();
    }

    #[tokio::test]
    async fn a_failed_event_is_counted_and_retried_on_the_next_reconcile() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let mut script = stuck_sync_facts();
        script.push(event_post("StuckSync", "CrashLoopBackOff").failing(500));
        script.extend(stuck_sync_facts());
        script.push(event_post("StuckSync", "CrashLoopBackOff"));
        let server = serve(handle, script);
        let first = within_2s(r.reconcile_app(&app, at("2026-11-30T02:41:00Z")))
            .await
            .unwrap();
        assert_eq!(first.1, [Outcome::Failed]);
        let second = within_2s(r.reconcile_app(&app, at("2026-11-30T02:42:00Z")))
            .await
            .unwrap();
        assert_eq!(second.1, [Outcome::Emitted]);
        within_2s(server).await.unwrap();
        let metrics = r.ctx.metrics.encode();
        assert!(
            metrics.contains("syncguard_events_total{outcome=\"failed\"} 1"),
            "{metrics}"
        );
    }

    fn looping_app() -> AppBuilder {
        let mut b = AppBuilder::new("shop")
            .destination("shop")
            .self_heal()
            .sync_status("OutOfSync")
            .out_of_sync("apps", "Deployment", "web")
            .resource("autoscaling", "HorizontalPodAutoscaler", "web", 0, false);
        for i in 0..7 {
            b = b.history(
                i + 1,
                &format!("2026-11-30T02:{:02}:00Z", i * 4),
                &format!("2026-11-30T02:{:02}:20Z", i * 4),
            );
        }
        b
    }

    fn fixture_deployment() -> Value {
        let list: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/live/hpa-deployment.json"
        ))
        .unwrap();
        list["items"][0].clone()
    }

    #[tokio::test]
    async fn a_sync_loop_over_an_hpa_scaled_deployment_is_reported_with_the_ignore_snippet() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = looping_app().live();
        let server = serve(
            handle,
            vec![
                Exchange::get(
                    "/apis/apps/v1/namespaces/shop/deployments/web",
                    fixture_deployment(),
                ),
                Exchange::list("/apis/batch/v1/namespaces/shop/jobs", &[], vec![]),
                Exchange::list("/api/v1/namespaces/shop/pods", &[], vec![]),
                event_post(
                    "SyncLoop",
                    "Application argocd/shop was synced 7 times in the last 30 min: Deployment \
                     shop/web field spec.replicas is changed by kube-controller-manager through \
                     the scale subresource (a HorizontalPodAutoscaler).",
                ),
            ],
        );
        let (findings, outcomes, _) = within_2s(r.reconcile_app(&app, at("2026-11-30T02:30:00Z")))
            .await
            .unwrap();
        assert_eq!(outcomes, [Outcome::Emitted]);
        let snippet = findings[0].snippet.as_deref().unwrap();
        assert!(snippet.contains("- /spec/replicas"), "{snippet}");
        assert!(
            snippet.contains("RespectIgnoreDifferences=true"),
            "{snippet}"
        );
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
    }

    #[tokio::test]
    async fn a_loop_over_a_kind_the_reconciler_may_not_read_is_still_reported() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let mut v = looping_app().json();
        v["status"]["resources"][0]["group"] = json!("argoproj.io");
        v["status"]["resources"][0]["version"] = json!("v1alpha1");
        v["status"]["resources"][0]["kind"] = json!("Rollout");
        let app = Application::from_value(&v).unwrap();
        let server = serve(
            handle,
            vec![
                Exchange::get(
                    "/apis/argoproj.io/v1alpha1/namespaces/shop/rollouts/web",
                    json!({}),
                )
                .failing(403),
                Exchange::list("/apis/batch/v1/namespaces/shop/jobs", &[], vec![]),
                Exchange::list("/api/v1/namespaces/shop/pods", &[], vec![]),
                event_post(
                    "SyncLoop",
                    "Application argocd/shop was synced 7 times in the last 30 min; Rollout \
                     shop/web could not be read.",
                ),
            ],
        );
        let (_, outcomes, _) = within_2s(r.reconcile_app(&app, at("2026-11-30T02:30:00Z")))
            .await
            .expect("a forbidden kind is skipped, not an error");
        assert_eq!(outcomes, [Outcome::Emitted]);
        within_2s(server).await.unwrap();
    }

    #[tokio::test]
    async fn leftover_hooks_above_the_threshold_are_counted_once_per_finished_sync() {
        let (client, handle) = mock_client();
        let config = Config {
            hook_threshold: 3,
            ..Config::default()
        };
        let r = Reconciler::new(context(client, config, true));
        let app = AppBuilder::new("shop")
            .destination("shop")
            .finished("2026-11-30T02:00:00Z", "2026-11-30T02:01:00Z")
            .live();
        let jobs: Vec<Value> = (1..=4)
            .map(|d| hook_job_json(&format!("smoke-{d:02}"), d, json!({}), false))
            .collect();
        let server = serve(
            handle,
            vec![
                Exchange::list("/apis/batch/v1/namespaces/shop/jobs", &[], jobs),
                Exchange::list("/api/v1/namespaces/shop/pods", &[], vec![]),
                event_post(
                    "HookAccumulation",
                    "has left 4 completed hook objects behind",
                ),
            ],
        );
        let first = within_2s(r.reconcile_app(&app, at("2026-11-30T02:05:00Z")))
            .await
            .unwrap();
        assert_eq!(first.1, [Outcome::Emitted]);
        // Same finished sync: no new LIST, the finding stays open, no new Event.
        let second = within_2s(r.reconcile_app(&app, at("2026-11-30T02:06:00Z")))
            .await
            .unwrap();
        assert_eq!(second.1, [Outcome::Deduplicated]);
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        assert!(
            r.ctx
                .metrics
                .encode()
                .contains("syncguard_open_live_findings{rule=\"SG503\"} 1")
        );
    }

    #[tokio::test]
    async fn leftover_hooks_are_counted_from_the_audits_inventory_without_a_request() {
        let (client, mut handle) = mock_client();
        let config = Config {
            hook_threshold: 3,
            ..Config::default()
        };
        let ctx = context(client, config, true);
        let r = Reconciler::new(ctx.clone());
        let app = AppBuilder::new("shop")
            .destination("shop")
            .finished("2026-11-30T02:00:00Z", "2026-11-30T02:01:00Z")
            .live();
        // The audit started but has not listed yet, and the sync is older than this process:
        // SG503 waits for the pass (no per-Application LIST, nothing marked counted).
        ctx.hooks.audit_running.store(true, Ordering::Release);
        let waiting = within_2s(r.reconcile_app(&app, at("2026-11-30T02:05:00Z")))
            .await
            .unwrap();
        assert!(waiting.0.is_empty());
        assert_no_more_requests(&mut handle).await;
        // The pass listed four left-behind hook Jobs (and a Deployment, which is not kept).
        let mut inventory = hooks::HookInventory::new(at("2026-11-30T02:03:00Z"));
        for d in 1..=4 {
            inventory.add(
                "Job",
                &hook_job_json(&format!("smoke-{d:02}"), d, json!({}), false),
            );
        }
        inventory.add(
            "Job",
            &json!({"metadata": {"name": "plain", "namespace": "shop"}}),
        );
        assert_eq!(inventory.len(), 4);
        ctx.hooks.current.store(Some(Arc::new(inventory)));
        let server = serve(
            handle,
            vec![event_post(
                "HookAccumulation",
                "has left 4 completed hook objects behind",
            )],
        );
        let counted = within_2s(r.reconcile_app(&app, at("2026-11-30T02:06:00Z")))
            .await
            .unwrap();
        assert_eq!(counted.1, [Outcome::Emitted]);
        let mut handle = within_2s(server).await.unwrap();
        assert_no_more_requests(&mut handle).await;
        // A sync newer than the pass, without an audit that will list it (--no-audit; with the
        // audit, only syncs from before this process wait): listed for this Application.
        ctx.hooks.audit_running.store(false, Ordering::Release);
        let newer = AppBuilder::new("shop")
            .destination("shop")
            .finished("2026-11-30T03:00:00Z", "2026-11-30T03:01:00Z")
            .live();
        let server = serve(
            handle,
            vec![
                Exchange::list("/apis/batch/v1/namespaces/shop/jobs", &[], vec![]),
                Exchange::list("/api/v1/namespaces/shop/pods", &[], vec![]),
            ],
        );
        let listed = within_2s(r.reconcile_app(&newer, at("2026-11-30T03:05:00Z")))
            .await
            .unwrap();
        assert!(listed.0.is_empty(), "the hooks are gone now");
        within_2s(server).await.unwrap();
    }

    #[tokio::test]
    async fn a_deleted_application_stops_counting_as_an_open_finding() {
        let (client, handle) = mock_client();
        let r = Reconciler::new(context(client, Config::default(), true));
        let app = seed_app().live();
        let mut script = stuck_sync_facts();
        script.push(event_post("StuckSync", "CrashLoopBackOff"));
        let server = serve(handle, script);
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:41:00Z")))
            .await
            .unwrap();
        within_2s(server).await.unwrap();
        let open = "syncguard_open_live_findings{rule=\"SG501\"}";
        assert!(r.ctx.metrics.encode().contains(&format!("{open} 1")));
        r.forget_missing(&HashSet::from(["uid-some-other-app".to_string()]));
        assert!(r.ctx.metrics.encode().contains(&format!("{open} 0")));
        assert!(r.loops.is_empty());
    }

    #[tokio::test]
    async fn a_replica_that_loses_the_lease_stops_reporting_its_open_findings() {
        let (client, handle) = mock_client();
        let (tx, rx) = watch::channel(true);
        let mut ctx = Arc::try_unwrap(context(client, Config::default(), true)).unwrap();
        ctx.leader = rx;
        let r = Reconciler::new(Arc::new(ctx));
        let app = seed_app().live();
        let mut script = stuck_sync_facts();
        script.push(event_post("StuckSync", "CrashLoopBackOff"));
        let server = serve(handle, script);
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:41:00Z")))
            .await
            .unwrap();
        let mut handle = within_2s(server).await.unwrap();
        tx.send(false).unwrap();
        within_2s(r.reconcile_app(&app, at("2026-11-30T02:42:00Z")))
            .await
            .unwrap();
        assert_no_more_requests(&mut handle).await;
        assert!(
            r.ctx
                .metrics
                .encode()
                .contains("syncguard_open_live_findings{rule=\"SG501\"} 0")
        );
    }

    #[tokio::test]
    async fn gaining_the_lease_triggers_one_reconcile_of_everything_losing_it_none() {
        let (tx, rx) = watch::channel(false);
        let mut gained = std::pin::pin!(leadership_gained(rx));
        tx.send(true).unwrap();
        within_2s(gained.next()).await.unwrap();
        tx.send(false).unwrap();
        tx.send(true).unwrap();
        within_2s(gained.next()).await.unwrap();
        // Losing the lease (and a repeated `true`) asks for nothing.
        tx.send(false).unwrap();
        assert!(
            tokio::time::timeout(Duration::from_millis(100), gained.next())
                .await
                .is_err()
        );
        drop(tx);
        assert_eq!(within_2s(gained.next()).await, None);
    }

    #[test]
    fn error_backoff_doubles_up_to_five_minutes() {
        assert_eq!(backoff(1), Duration::from_secs(5));
        assert_eq!(backoff(2), Duration::from_secs(10));
        assert_eq!(backoff(4), Duration::from_secs(40));
        assert_eq!(backoff(10), Duration::from_secs(300));
        assert_eq!(backoff(u32::MAX), Duration::from_secs(300));
    }

    #[test]
    fn fixtures_policies_load() {
        assert!(!fixtures::policies().rules().is_empty());
    }

    /// Issue 23: an API server that accepts the first LIST and never answers it (or is not
    /// there at all) left the store unsynced, and kube-runtime's graceful shutdown waited for it
    /// forever, so SIGTERM never got past "stopping writers".
    #[tokio::test]
    async fn a_watch_that_never_synced_stops_at_once_on_shutdown() {
        let (client, mut handle) = mock_client();
        let (listed, first_list) = tokio::sync::oneshot::channel();
        let server = tokio::spawn(async move {
            let mut listed = Some(listed);
            let mut held = Vec::new();
            while let Some((req, send)) = handle.next_request().await {
                if req.uri().path() == "/apis/argoproj.io/v1alpha1/applications"
                    && let Some(tx) = listed.take()
                {
                    let _ = tx.send(());
                }
                held.push(send);
            }
        });
        let ctx = context(client, Config::default(), true);
        let reconciler = Arc::new(Reconciler::new(ctx.clone()));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let controller = tokio::spawn(run(reconciler, async move {
            let _ = stopped.await;
        }));
        within_2s(first_list).await.unwrap();
        stop.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), controller)
            .await
            .expect("the controller waited for a watch that never synced")
            .unwrap();
        assert_eq!(ctx.metrics.ready.get(), 0);
        server.abort();
    }
}
