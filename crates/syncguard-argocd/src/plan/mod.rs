//! The sync plan simulator: the exact order Argo CD applies things in ([`plan`]) and the
//! tick-by-tick execution model ([`tick::tick`]).
//!
//! Everything follows `reference/argocd-sync-semantics.md` (the spec): sections 2–4 for task
//! building and ordering, 5–6 for execution. What changed between Argo CD releases comes from
//! the release table (`model::version::CHANGES`) as a [`Behaviours`] set; the default is the
//! newest release syncguard knows.
//!
//! # Pipeline (spec §11)
//!
//! 1. drop garbage hooks, `hook: Skip` and delete-only hooks (recorded in [`Plan::ignored`]);
//! 2. one task per phase of each object, hooks dropped when [`AppSettings::skip_hooks`];
//! 3. fill every target's namespace with the destination namespace (cluster-scoped too);
//! 4. `CreateNamespace=true` adds a PreSync Namespace task;
//! 5. prune tasks for live objects no target matches (hooks and `Skip` never pruned);
//! 6. prune wave reversal, then PruneLast;
//! 7. sort ([`order::argo_cmp`] plus syncguard's documented tie-break, [`order::total_cmp`]);
//! 8. Namespace then CRD bubbling;
//! 9. steps by (phase, wave); SyncFail tasks form one extra, conditional step.
//!
//! Discovery (is a custom kind served?) is answered by [`ClusterApis`].

mod apis;
pub mod forecast;
pub mod order;
pub mod tick;

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::config::application::Application;
use crate::model::Resource;
use crate::model::argo::{DeletePolicy, Ignored, SyncFacts, SyncOptions, SyncPhase};
use crate::model::version::{Behaviour, Behaviours};

pub use apis::{ClusterApis, is_builtin_group};
pub use order::{KIND_ORDER, kind_order};

/// `SkipDryRunOnMissingResource=true`, read at app and resource level.
const SKIP_DRY_RUN: &str = "SkipDryRunOnMissingResource=true";

/// Application-level settings that change the plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppSettings {
    /// `spec.destination.namespace`; filled into every target without a namespace (even
    /// cluster-scoped ones, as Argo CD does). Empty means "no destination namespace": nothing is
    /// filled and `CreateNamespace=true` does nothing.
    pub destination_namespace: String,
    /// `spec.syncPolicy.syncOptions` (plus the operation's options). Read here:
    /// `CreateNamespace=true`, `PruneLast=true`, `SkipDryRunOnMissingResource=true`,
    /// `ApplyOutOfSyncOnly=true` and the app default of `Prune=false|confirm`.
    pub sync_options: SyncOptions,
    /// The revision being synced; its first 7 characters name `generateName` hooks.
    pub revision: String,
    /// Operation start (UTC seconds); the last part of `generateName` hook names, so names are
    /// stable across the ticks of one operation and differ between operations.
    pub started_at_unix: i64,
    /// Drop every hook task. Argo CD sets this for the `apply` sync strategy and for selective
    /// sync (syncing a subset of resources).
    pub skip_hooks: bool,
    /// The operation's prune flag (`syncOp.Prune`). Prune tasks exist either way — they occupy
    /// steps — but without it they end `PruneSkipped` "ignored (requires pruning)". Argo CD's
    /// default is `false` (manual syncs without `--prune`, automated sync without `prune: true`).
    pub prune: bool,
    /// The destination namespace already exists in the cluster. With `CreateNamespace=true`,
    /// Argo CD's namespace modifier only (re)applies an existing namespace when the Application
    /// has `managedNamespaceMetadata`; otherwise no namespace task is created at all.
    pub namespace_exists: bool,
    /// `spec.syncPolicy.managedNamespaceMetadata` is set (see `namespace_exists`).
    pub managed_namespace_metadata: bool,
    /// The behaviours of the Argo CD release planned for. Ordering is the same in every release
    /// modelled; from 3.4 an app-level `Prune=false`/`Prune=confirm` is the default of every
    /// prune ([`Behaviour::AppLevelPruneOption`], spec §5.9 item 5): before, only the live
    /// object's annotation counts.
    pub behaviours: Behaviours,
}

impl Default for AppSettings {
    fn default() -> Self {
        Self {
            destination_namespace: "default".to_string(),
            sync_options: SyncOptions::default(),
            revision: String::new(),
            started_at_unix: 0,
            skip_hooks: false,
            prune: false,
            namespace_exists: false,
            managed_namespace_metadata: false,
            behaviours: Behaviours::default(),
        }
    }
}

impl AppSettings {
    /// What an Application (when there is one) sets for a first sync of its objects: its sync
    /// options and `managedNamespaceMetadata`, prune on, nothing live. `destination_namespace`
    /// is decided by the caller (the Application's, else a flag, else inferred).
    pub fn of_application(
        app: Option<&Application>,
        destination_namespace: &str,
        behaviours: Behaviours,
    ) -> AppSettings {
        AppSettings {
            destination_namespace: destination_namespace.to_string(),
            sync_options: app.map(|a| a.sync_options.clone()).unwrap_or_default(),
            prune: true,
            managed_namespace_metadata: app.is_some_and(|a| a.managed_namespace_metadata),
            behaviours,
            ..AppSettings::default()
        }
    }
}

/// Everything [`plan`] reads.
#[derive(Debug, Clone)]
pub struct PlanInput<'a> {
    /// Desired objects (rendered manifests), hooks included.
    pub targets: &'a [Resource],
    /// The Application's live objects. Those that no non-hook target matches (by group, kind,
    /// namespace — or cluster scope — and name) become prune tasks unless they are hooks or
    /// `Skip`. A live copy of a hook target gives that hook task its live object.
    pub live: &'a [Resource],
    /// Application settings.
    pub app: AppSettings,
    /// What the cluster serves, for task validity and skip-dry-run (C36).
    pub cluster_apis: ClusterApis,
}

impl<'a> PlanInput<'a> {
    /// An input with the given settings and a cluster that serves only built-in APIs (plus
    /// whatever the live objects show).
    pub fn new(targets: &'a [Resource], live: &'a [Resource], app: AppSettings) -> Self {
        Self {
            targets,
            live,
            app,
            cluster_apis: ClusterApis::builtin_only(),
        }
    }
}

/// Identity of one Kubernetes object as Argo CD keys it (`kube.ResourceKey`):
/// `group/kind/namespace/name`, namespace empty for cluster scope.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ObjectKey {
    /// API group, empty for core.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace; empty for cluster-scoped live objects and the auto-created namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl ObjectKey {
    /// Builds a key from its four parts.
    pub fn new(group: &str, kind: &str, namespace: &str, name: &str) -> Self {
        Self {
            group: group.to_string(),
            kind: kind.to_string(),
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }

    /// Parses `group/kind/namespace/name` (the [`fmt::Display`] form).
    pub fn parse(s: &str) -> Option<Self> {
        let mut parts = s.splitn(4, '/');
        let (g, k, ns, n) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        Some(Self::new(g, k, ns, n))
    }

    /// The same object seen as cluster-scoped (namespace cleared). Argo CD matches a target
    /// whose namespace it filled against a cluster-scoped live object this way.
    pub fn cluster_scoped(&self) -> Self {
        Self {
            namespace: String::new(),
            ..self.clone()
        }
    }

    fn of_resource(r: &Resource) -> Self {
        Self::new(
            &r.group,
            &r.kind,
            r.namespace.as_deref().unwrap_or_default(),
            &r.name,
        )
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}/{}/{}/{}",
            self.group, self.kind, self.namespace, self.name
        )
    }
}

/// Serialized as its `group/kind/namespace/name` string, so it can key JSON maps.
impl Serialize for ObjectKey {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Where a task's object comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "from", content = "index")]
pub enum TaskSource {
    /// `PlanInput::targets[index]`.
    Target {
        /// Index into the targets.
        index: usize,
    },
    /// `PlanInput::live[index]`: a prune task.
    Live {
        /// Index into the live objects.
        index: usize,
    },
    /// The destination Namespace added by `CreateNamespace=true`.
    AutoNamespace,
}

/// Which kind of dependency bubbling moved a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Dependency {
    /// A core Namespace moved before the first task in it.
    Namespace,
    /// A CRD moved before the first custom resource of its kind.
    CustomResourceDefinition,
}

/// A Namespace or CRD task that bubbling moved next to its first dependant (spec §4.4).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bubble {
    /// Namespace or CRD bubbling.
    pub dependency: Dependency,
    /// The phase the task had before it moved.
    pub from_phase: SyncPhase,
    /// The wave the task had before it moved (after prune/PruneLast adjustments).
    pub from_wave: i64,
    /// The first task that needs it; the moved task took that task's phase and wave.
    pub dependant: ObjectKey,
}

/// One unit of work: apply (or prune) one object in one phase.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Task {
    /// Position in execution order over all steps, the SyncFail step last.
    pub index: usize,
    /// The phase the task runs in (possibly changed by bubbling).
    pub phase: SyncPhase,
    /// The effective wave after prune reversal, PruneLast and bubbling.
    pub wave: i64,
    /// The wave from the object's annotations (`sync-wave`, else `helm.sh/hook-weight`, else 0).
    pub original_wave: i64,
    /// Argo CD's kind sort value ([`kind_order`]).
    pub kind_order: i32,
    /// API group, empty for core.
    pub group: String,
    /// API version (without group).
    pub version: String,
    /// `apiVersion` as written (used in Argo CD's legacy prune-confirmation message).
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Object name; for a `generateName` hook, the name Argo CD generates for this operation.
    pub name: String,
    /// True when `name` was generated from `generateName` (spec §2.7).
    pub generated_name: bool,
    /// Namespace: the target's own, else the destination namespace (even for cluster-scoped
    /// kinds, as Argo CD does); a prune task's live namespace; empty for the auto-namespace.
    pub namespace: String,
    /// gitops-engine `IsHook` of the object.
    pub is_hook: bool,
    /// A prune task: a live object with no target.
    pub is_prune: bool,
    /// Where the object comes from.
    pub source: TaskSource,
    /// Index into `PlanInput::live` of this object's live copy, if any.
    pub live: Option<usize>,
    /// Set when Namespace/CRD bubbling moved this task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bubbled: Option<Bubble>,
    /// A prune task moved after the last Sync wave by `PruneLast=true` (app or live annotation).
    pub prune_last: bool,
    /// The dry-run is skipped: the kind is not served yet but its CRD is in this sync, or
    /// `SkipDryRunOnMissingResource=true` is set (C36).
    pub skip_dry_run: bool,
    /// Effective hook delete policies; empty for non-hooks, where Argo CD ignores them (C19).
    pub delete_policies: Vec<DeletePolicy>,
    /// Prune task whose deletion is disabled (`Prune=false` on the live object or as the app
    /// default): it ends `PruneSkipped` "ignored (no prune)".
    pub prune_disabled: bool,
    /// Prune task that waits for the Application's deletion-approved annotation
    /// (`Prune=confirm` on the live object or as the app default).
    pub prune_requires_confirmation: bool,
    /// For a CRD target: the `group/Kind` it defines (`spec.group` + `spec.names.kind`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crd_for: Option<String>,
    /// The destination Namespace that `CreateNamespace=true` creates: Argo CD applies it on the
    /// first tick before the dry run, and the first step follows at once (spec §2.8, §5.1), so
    /// the plan puts it at the head of the first step whatever its own phase and wave.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub before_dry_run: bool,
}

impl Task {
    /// Argo CD's resource key of the object (`group/kind/namespace/name`).
    pub fn object_key(&self) -> ObjectKey {
        ObjectKey::new(&self.group, &self.kind, &self.namespace, &self.name)
    }

    /// Argo CD's result key (`resourceResultKey`): `group/kind/namespace/name:phase`. Results
    /// survive across ticks under this key.
    pub fn result_key(&self) -> String {
        format!("{}:{}", self.object_key(), self.phase)
    }

    /// `group/kind/name`, the form used in Argo CD's "waiting for …" messages.
    pub fn message_ref(&self) -> String {
        format!("{}/{}/{}", self.group, self.kind, self.name)
    }
}

/// What the operation waits for before it moves past a step (spec §3, §5.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Gate {
    /// Nothing: the final step without hooks finishes the sync in its apply tick.
    None,
    /// Only hooks must complete (final step with a hook, single-step sync).
    Hooks,
    /// Hooks must complete and non-hook resources must be Healthy (or have no health check).
    /// Pruned objects of the step must also be gone before the next step starts.
    HooksAndResources,
}

/// Tasks that run together: same (phase, wave), applied in one tick.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    /// Phase of every task in the step.
    pub phase: SyncPhase,
    /// Wave of every task in the step (for the SyncFail step: the first task's wave; SyncFail
    /// tasks run together whatever their waves).
    pub wave: i64,
    /// Tasks in order. Within a step prunes run first, then applies in runs of the same kind.
    pub tasks: Vec<Task>,
    /// What is waited for before the operation moves on (or finishes).
    pub gate: Gate,
    /// `gate != Gate::None`: the operation waits for this step's tasks.
    pub health_gated: bool,
    /// The last non-SyncFail step (Argo CD's `finalWave`). Its non-hook resources are not
    /// waited for unless it contains a hook.
    pub is_final: bool,
    /// True only for the SyncFail step, which runs only when the sync fails.
    pub conditional: bool,
}

/// Why an object gives no task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IgnoreReason {
    /// `hook: Skip` alone: never applied, never pruned.
    Skip,
    /// A hook annotation with no usable type (`presync`, Helm `test`…): silently dropped.
    GarbageHook,
    /// Only PreDelete/PostDelete: runs at Application deletion, not during a sync.
    DeleteHookOnly,
    /// A hook dropped because hooks are skipped (apply strategy or selective sync).
    HooksSkipped,
    /// A second non-hook target with the same key; Argo CD keeps one (the last).
    DuplicateTarget,
    /// A live-only object that is a hook or `Skip`: Argo CD never prunes those.
    NeverPruned,
}

impl IgnoreReason {
    fn from_facts(i: &Ignored) -> Self {
        match i {
            Ignored::Skip => IgnoreReason::Skip,
            Ignored::GarbageHook => IgnoreReason::GarbageHook,
            Ignored::DeleteHookOnly => IgnoreReason::DeleteHookOnly,
        }
    }
}

/// An object that gives no task, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IgnoredObject {
    /// Where the object comes from.
    pub source: TaskSource,
    /// Its key (namespace as written, not filled).
    pub object: ObjectKey,
    /// Why it gives no task.
    pub reason: IgnoreReason,
}

/// A task whose GVK the cluster does not serve: Argo CD fails the whole sync with
/// "one or more synchronization tasks are not valid" before applying anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InvalidTask {
    /// [`Task::index`] of the offending task (it stays in its step).
    pub task: usize,
    /// The task's object.
    pub object: ObjectKey,
    /// The task's phase.
    pub phase: SyncPhase,
    /// The discovery error Argo CD records for the task.
    pub message: String,
}

/// The discovery error for a group/version the cluster does not serve (client-go's 404 text).
pub const NOT_FOUND_MESSAGE: &str = "the server could not find the requested resource";

/// The ordered sync plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Non-SyncFail steps in execution order.
    pub steps: Vec<Step>,
    /// All SyncFail tasks as one step that runs only if the sync fails.
    pub sync_fail: Option<Step>,
    /// Objects that give no task.
    pub ignored: Vec<IgnoredObject>,
    /// Tasks whose kind is not served; non-empty means the sync fails at once.
    pub invalid: Vec<InvalidTask>,
}

impl Plan {
    /// Every task in execution order (the SyncFail step last).
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.steps
            .iter()
            .chain(self.sync_fail.iter())
            .flat_map(|s| s.tasks.iter())
    }

    /// False when Argo CD would refuse the sync as "not valid".
    pub fn is_valid(&self) -> bool {
        self.invalid.is_empty()
    }

    /// Argo CD's `multiStep`: first and last task differ in (phase, wave), SyncFail included.
    pub fn multi_step(&self) -> bool {
        multi_step(self.tasks())
    }
}

/// `multiStep` over tasks in execution order.
fn multi_step<'t>(mut tasks: impl Iterator<Item = &'t Task>) -> bool {
    let Some(first) = tasks.next() else {
        return false;
    };
    let last = tasks.last().unwrap_or(first);
    (first.phase, first.wave) != (last.phase, last.wave)
}

/// Plans a sync: builds, orders and groups the tasks exactly as Argo CD would (module docs).
pub fn plan(input: &PlanInput) -> Plan {
    let built = build(input, &Overrides::default());
    group_steps(built)
}

/// Re-planning knobs used by the tick simulator, which re-derives the task list every tick
/// from the *current* world as Argo CD does.
#[derive(Default)]
pub(crate) struct Overrides<'f> {
    /// Live objects for which this returns false are treated as absent (already deleted).
    pub live_present: Option<&'f dyn Fn(usize) -> bool>,
    /// Replaces `AppSettings::namespace_exists`.
    pub namespace_exists: Option<bool>,
}

/// Sorted tasks plus what was left out.
pub(crate) struct Built {
    pub tasks: Vec<Task>,
    pub ignored: Vec<IgnoredObject>,
    pub invalid: Vec<InvalidTask>,
}

/// The live-object index key: group, kind, namespace ("" for cluster scope), name.
type LiveKey<'r> = (&'r str, &'r str, &'r str, &'r str);

fn live_key(r: &Resource) -> LiveKey<'_> {
    (
        r.group.as_str(),
        r.kind.as_str(),
        r.namespace.as_deref().unwrap_or_default(),
        r.name.as_str(),
    )
}

/// Steps 1–8 of the pipeline: every task, sorted and bubbled, with indexes assigned.
pub(crate) fn build(input: &PlanInput, ov: &Overrides) -> Built {
    let app = &input.app;
    let dest = app.destination_namespace.as_str();
    let present = |i: usize| ov.live_present.is_none_or(|f| f(i));

    let mut ignored = Vec::new();
    let target_facts: Vec<SyncFacts> = input.targets.iter().map(SyncFacts::of).collect();

    // Live index; the first of duplicate live keys wins, later ones stay unmatched.
    let mut live_index: HashMap<LiveKey, usize> = HashMap::with_capacity(input.live.len());
    for (i, r) in input.live.iter().enumerate() {
        if present(i) {
            live_index.entry(live_key(r)).or_insert(i);
        }
    }
    let mut live_matched = vec![false; input.live.len()];

    // Managed (non-hook) targets, deduplicated by key (Argo CD's resource map keeps one).
    let mut managed: HashMap<LiveKey, usize> = HashMap::with_capacity(input.targets.len());
    let mut is_managed = vec![false; input.targets.len()];
    let mut hooks = HashSet::new();
    for (i, (r, f)) in input.targets.iter().zip(&target_facts).enumerate() {
        if f.ignored == Some(Ignored::GarbageHook) || f.ignored == Some(Ignored::DeleteHookOnly) {
            // Garbage hooks are dropped by `splitHooks`; delete-only hooks by the controller.
            ignored.push(IgnoredObject {
                source: TaskSource::Target { index: i },
                object: ObjectKey::of_resource(r),
                reason: f
                    .ignored
                    .as_ref()
                    .map_or(IgnoreReason::GarbageHook, IgnoreReason::from_facts),
            });
            continue;
        }
        if f.is_hook {
            hooks.insert(i);
            continue;
        }
        let key = (
            r.group.as_str(),
            r.kind.as_str(),
            filled_namespace(r, dest),
            r.name.as_str(),
        );
        if let Some(prev) = managed.insert(key, i) {
            ignored.push(IgnoredObject {
                source: TaskSource::Target { index: prev },
                object: input
                    .targets
                    .get(prev)
                    .map_or_else(|| ObjectKey::of_resource(r), ObjectKey::of_resource),
                reason: IgnoreReason::DuplicateTarget,
            });
            if let Some(m) = is_managed.get_mut(prev) {
                *m = false;
            }
        }
        if let Some(m) = is_managed.get_mut(i) {
            *m = true;
        }
    }
    let targets = || input.targets.iter().zip(&target_facts).enumerate();
    let managed_order: Vec<(usize, (&Resource, &SyncFacts))> = targets()
        .filter(|(i, _)| is_managed.get(*i).copied().unwrap_or(false))
        .collect();

    let mut tasks: Vec<Task> = Vec::with_capacity(input.targets.len() + input.live.len() + 1);
    for &(i, (r, f)) in &managed_order {
        // Reconcile: namespaced key first (namespace filled), then cluster scope.
        let ns = filled_namespace(r, dest);
        let live = [ns, ""].iter().find_map(|n| {
            live_index
                .get(&(r.group.as_str(), r.kind.as_str(), *n, r.name.as_str()))
                .copied()
                .filter(|&l| !live_matched.get(l).copied().unwrap_or(true))
        });
        if let Some(m) = live.and_then(|l| live_matched.get_mut(l)) {
            *m = true;
        }
        if f.skip {
            ignored.push(IgnoredObject {
                source: TaskSource::Target { index: i },
                object: ObjectKey::of_resource(r),
                reason: IgnoreReason::Skip,
            });
            continue;
        }
        for &phase in &f.phases {
            tasks.push(target_task(
                r,
                f,
                i,
                phase,
                ns.to_string(),
                r.name.clone(),
                false,
                live,
            ));
        }
    }
    for (i, (r, f)) in targets().filter(|(i, _)| hooks.contains(i)) {
        if app.skip_hooks {
            ignored.push(IgnoredObject {
                source: TaskSource::Target { index: i },
                object: ObjectKey::of_resource(r),
                reason: IgnoreReason::HooksSkipped,
            });
            continue;
        }
        let ns = filled_namespace(r, dest);
        // `liveObj()`: same group, kind and name, same namespace or cluster-scoped.
        let live = [ns, ""].iter().find_map(|n| {
            live_index
                .get(&(r.group.as_str(), r.kind.as_str(), *n, r.name.as_str()))
                .copied()
        });
        for &phase in &f.phases {
            let (name, generated) = if r.name.is_empty() {
                let gen_name = r.generate_name.as_deref().unwrap_or_default();
                (
                    crate::model::argo::generated_hook_name(
                        gen_name,
                        &app.revision,
                        phase,
                        app.started_at_unix,
                    ),
                    true,
                )
            } else {
                (r.name.clone(), false)
            };
            // A generated name differs per phase, so the live copy (if any) is per name.
            let live = if generated {
                live_index
                    .get(&(r.group.as_str(), r.kind.as_str(), ns, name.as_str()))
                    .copied()
            } else {
                live
            };
            tasks.push(target_task(
                r,
                f,
                i,
                phase,
                ns.to_string(),
                name,
                generated,
                live,
            ));
        }
    }

    // CreateNamespace=true: the destination Namespace as a PreSync task, unless a managed
    // (non-hook) target is that Namespace. Hooks do not count: gitops-engine copies the hook
    // list into a nil slice (`copy(allObjs, sc.hooks)` copies nothing).
    let namespace_exists = ov.namespace_exists.unwrap_or(app.namespace_exists);
    if app.sync_options.has("CreateNamespace=true")
        && !dest.is_empty()
        && (!namespace_exists || app.managed_namespace_metadata)
        && !managed_order
            .iter()
            .any(|(_, (r, _))| r.kind == "Namespace" && r.group.is_empty() && r.name == dest)
    {
        tasks.push(Task {
            index: 0,
            phase: SyncPhase::PreSync,
            wave: 0,
            original_wave: 0,
            kind_order: kind_order("Namespace"),
            group: String::new(),
            version: "v1".to_string(),
            api_version: "v1".to_string(),
            kind: "Namespace".to_string(),
            name: dest.to_string(),
            generated_name: false,
            namespace: String::new(),
            is_hook: false,
            is_prune: false,
            source: TaskSource::AutoNamespace,
            live: None,
            bubbled: None,
            prune_last: false,
            skip_dry_run: false,
            delete_policies: Vec::new(),
            prune_disabled: false,
            prune_requires_confirmation: false,
            crd_for: None,
            before_dry_run: !namespace_exists,
        });
    }

    // Prune tasks: live objects no managed target matched; hooks and Skip are never pruned.
    let app_prune_last = app.sync_options.has("PruneLast=true");
    let app_prune_default = if app.behaviours.has(Behaviour::AppLevelPruneOption) {
        option_value(&app.sync_options.items, "Prune")
    } else {
        None
    };
    for (l, r) in input.live.iter().enumerate() {
        if live_matched.get(l).copied().unwrap_or(true) || !present(l) {
            continue;
        }
        let f = SyncFacts::of(r);
        if f.is_hook || f.skip {
            ignored.push(IgnoredObject {
                source: TaskSource::Live { index: l },
                object: ObjectKey::of_resource(r),
                reason: IgnoreReason::NeverPruned,
            });
            continue;
        }
        let prune_value =
            option_value(&f.sync_options.items, "Prune").or(app_prune_default.clone());
        tasks.push(Task {
            index: 0,
            phase: SyncPhase::Sync,
            wave: f.wave,
            original_wave: f.wave,
            kind_order: kind_order(&r.kind),
            group: r.group.clone(),
            version: r.version.clone(),
            api_version: r.api_version.clone(),
            kind: r.kind.clone(),
            name: r.name.clone(),
            generated_name: false,
            namespace: r.namespace.clone().unwrap_or_default(),
            is_hook: false,
            is_prune: true,
            source: TaskSource::Live { index: l },
            live: Some(l),
            bubbled: None,
            prune_last: app_prune_last || f.sync_options.has("PruneLast=true"),
            skip_dry_run: false,
            delete_policies: Vec::new(),
            prune_disabled: prune_value.as_deref() == Some("false"),
            prune_requires_confirmation: prune_value.as_deref() == Some("confirm"),
            crd_for: None,
            before_dry_run: false,
        });
    }

    let invalid_sources = check_apis(input, &target_facts, &mut tasks);

    order::reverse_prune_waves(&mut tasks);
    order::apply_prune_last(&mut tasks);
    let mut tasks = order::order_tasks(tasks);
    for (i, t) in tasks.iter_mut().enumerate() {
        t.index = i;
    }
    let invalid = tasks
        .iter()
        .filter(|t| invalid_sources.contains(&(t.source_key(), t.phase)))
        .map(|t| InvalidTask {
            task: t.index,
            object: t.object_key(),
            phase: t.phase,
            message: NOT_FOUND_MESSAGE.to_string(),
        })
        .collect();
    Built {
        tasks,
        ignored,
        invalid,
    }
}

impl Task {
    /// Identity of the task's origin, stable across sorting.
    fn source_key(&self) -> (TaskSourceKey, String) {
        let k = match self.source {
            TaskSource::Target { index } => TaskSourceKey::Target(index),
            TaskSource::Live { index } => TaskSourceKey::Live(index),
            TaskSource::AutoNamespace => TaskSourceKey::Auto,
        };
        (k, self.name.clone())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TaskSourceKey {
    Target(usize),
    Live(usize),
    Auto,
}

/// Discovery (spec §2.8, C36): marks `skip_dry_run` and returns the invalid tasks, keyed by
/// origin and phase so they can be found again after sorting.
fn check_apis(
    input: &PlanInput,
    target_facts: &[SyncFacts],
    tasks: &mut [Task],
) -> HashSet<((TaskSourceKey, String), SyncPhase)> {
    let mut apis = input.cluster_apis.clone();
    for r in input.live {
        apis.served.insert((r.group.clone(), r.kind.clone()));
        if let Some(gk) = crd_group_kind(r) {
            apis.served.insert(gk);
        }
    }
    // `hasCRDOfGroupKind`: CRDs among hooks and managed targets (Skip ones included), but not
    // among garbage or delete-only hooks, which never reach the engine.
    let crds_in_sync: HashSet<(String, String)> = input
        .targets
        .iter()
        .zip(target_facts)
        .filter(|(_, f)| {
            !matches!(
                f.ignored,
                Some(Ignored::GarbageHook) | Some(Ignored::DeleteHookOnly)
            )
        })
        .filter_map(|(r, _)| crd_group_kind(r))
        .collect();
    let app_skip = input.app.sync_options.has(SKIP_DRY_RUN);
    let mut served_cache: HashMap<(String, String), bool> = HashMap::new();
    let mut invalid = HashSet::new();
    for t in tasks.iter_mut() {
        if t.is_prune {
            continue; // it exists in the cluster, so its kind is served
        }
        let gk = (t.group.clone(), t.kind.clone());
        let served = *served_cache
            .entry(gk.clone())
            .or_insert_with(|| apis.serves(&gk.0, &gk.1));
        if served {
            continue;
        }
        let resource_skip = match t.source {
            TaskSource::Target { index } => target_facts
                .get(index)
                .is_some_and(|f| f.sync_options.has(SKIP_DRY_RUN)),
            _ => false,
        };
        if app_skip || resource_skip || crds_in_sync.contains(&gk) {
            t.skip_dry_run = true;
        } else {
            invalid.insert((t.source_key(), t.phase));
        }
    }
    invalid
}

/// `(spec.group, spec.names.kind)` of an `apiextensions.k8s.io` CRD, if both are strings.
fn crd_group_kind(r: &Resource) -> Option<(String, String)> {
    if r.kind != "CustomResourceDefinition" || r.group != "apiextensions.k8s.io" {
        return None;
    }
    let spec = r.raw.get("spec")?;
    let group = spec.get("group").and_then(Value::as_str)?;
    let kind = spec
        .get("names")
        .and_then(|n| n.get("kind"))
        .and_then(Value::as_str)?;
    Some((group.to_string(), kind.to_string()))
}

/// The namespace Argo CD gives a target: its own, else the destination namespace.
fn filled_namespace<'r>(r: &'r Resource, dest: &'r str) -> &'r str {
    r.namespace.as_deref().unwrap_or(dest)
}

/// `GetAnnotationOptionValue`: the value of the first `key=value` item with this key.
fn option_value(items: &[String], key: &str) -> Option<String> {
    items.iter().find_map(|item| {
        item.split_once('=')
            .filter(|(k, _)| *k == key)
            .map(|(_, v)| v.to_string())
    })
}

/// A task for a target object in one phase.
#[allow(clippy::too_many_arguments)]
fn target_task(
    r: &Resource,
    f: &SyncFacts,
    index: usize,
    phase: SyncPhase,
    namespace: String,
    name: String,
    generated_name: bool,
    live: Option<usize>,
) -> Task {
    Task {
        index: 0,
        phase,
        wave: f.wave,
        original_wave: f.wave,
        kind_order: kind_order(&r.kind),
        group: r.group.clone(),
        version: r.version.clone(),
        api_version: r.api_version.clone(),
        kind: r.kind.clone(),
        name,
        generated_name,
        namespace,
        is_hook: f.is_hook,
        is_prune: false,
        source: TaskSource::Target { index },
        live,
        bubbled: None,
        prune_last: false,
        skip_dry_run: false,
        delete_policies: if f.is_hook {
            f.delete_policies.clone()
        } else {
            Vec::new()
        },
        prune_disabled: false,
        prune_requires_confirmation: false,
        crd_for: crd_group_kind(r).map(|(g, k)| format!("{g}/{k}")),
        before_dry_run: false,
    }
}

impl Step {
    /// A new, health-gated, non-final step holding `first`, at its phase and wave.
    fn of(first: Task) -> Self {
        Step {
            phase: first.phase,
            wave: first.wave,
            tasks: vec![first],
            gate: Gate::HooksAndResources,
            health_gated: true,
            is_final: false,
            conditional: false,
        }
    }
}

/// Step 9: group sorted tasks into steps; SyncFail tasks form one conditional step.
///
/// The Namespace created before the dry run goes first, into the first step: the real
/// controller (v3.2.11) applied it and the first step within a second, with no wave delay
/// between them, also when that step is PreSync wave 5 or a Sync step (docs/argocd-observed.md).
pub(crate) fn group_steps(mut built: Built) -> Plan {
    let multi = multi_step(built.tasks.iter());
    if let Some(at) = built.tasks.iter().position(|t| t.before_dry_run) {
        let ns = built.tasks.remove(at);
        built.tasks.insert(0, ns);
        let old_index: Vec<usize> = built.tasks.iter().map(|t| t.index).collect();
        for (i, t) in built.tasks.iter_mut().enumerate() {
            t.index = i;
        }
        for inv in &mut built.invalid {
            if let Some(i) = old_index.iter().position(|&o| o == inv.task) {
                inv.task = i;
            }
        }
    }
    let (sync_fail, main): (Vec<Task>, Vec<Task>) = built
        .tasks
        .into_iter()
        .partition(|t| t.phase == SyncPhase::SyncFail);
    let mut steps: Vec<Step> = Vec::new();
    let mut main = main.into_iter().peekable();
    let head = main.next_if(|t| t.before_dry_run);
    for t in main {
        match steps.last_mut() {
            Some(s) if s.phase == t.phase && s.wave == t.wave => s.tasks.push(t),
            _ => steps.push(Step::of(t)),
        }
    }
    // The namespace joins the first step (or is the only one).
    if let Some(ns) = head {
        match steps.first_mut() {
            Some(first) => first.tasks.insert(0, ns),
            None => steps.push(Step::of(ns)),
        }
    }
    if let Some(last) = steps.last_mut() {
        last.is_final = true;
        let has_hook = last.tasks.iter().any(|t| t.is_hook);
        last.gate = match (has_hook, multi) {
            (false, _) => Gate::None,
            (true, true) => Gate::HooksAndResources,
            (true, false) => Gate::Hooks,
        };
    }
    let sync_fail = sync_fail
        .first()
        .map(|first| (first.phase, first.wave))
        .map(|(phase, wave)| Step {
            phase,
            wave,
            gate: Gate::Hooks,
            tasks: sync_fail,
            health_gated: true,
            is_final: false,
            conditional: true,
        });
    for s in steps.iter_mut() {
        s.health_gated = s.gate != Gate::None;
    }
    Plan {
        steps,
        sync_fail,
        ignored: built.ignored,
        invalid: built.invalid,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(api: &str, kind: &str, name: &str, ns: Option<&str>, ann: Value) -> Resource {
        let mut meta = json!({"name": name, "annotations": ann});
        if let Some(ns) = ns {
            meta["namespace"] = json!(ns);
        }
        Resource::from_value(
            json!({"apiVersion": api, "kind": kind, "metadata": meta}),
            None,
        )
        .unwrap()
    }

    fn app(dest: &str, options: &[&str]) -> AppSettings {
        AppSettings {
            destination_namespace: dest.to_string(),
            sync_options: SyncOptions::from_items(options),
            ..AppSettings::default()
        }
    }

    fn plan_of(targets: &[Resource], live: &[Resource], settings: AppSettings) -> Plan {
        plan(&PlanInput::new(targets, live, settings))
    }

    #[test]
    fn cluster_scoped_targets_get_the_destination_namespace_and_still_match_their_live_copy() {
        let rbac = "rbac.authorization.k8s.io/v1";
        let targets = [res(rbac, "ClusterRole", "r", None, json!({}))];
        let live = [res(rbac, "ClusterRole", "r", None, json!({}))];
        let p = plan_of(&targets, &live, app("app", &[]));
        let tasks: Vec<&Task> = p.tasks().collect();
        assert_eq!(tasks.len(), 1, "the live copy is matched, not pruned");
        assert_eq!(tasks[0].namespace, "app");
        assert_eq!(tasks[0].live, Some(0));
    }

    #[test]
    fn a_live_copy_that_is_not_a_hook_is_pruned_even_when_a_hook_target_has_its_name() {
        // Reconcile splits hooks off before matching, so a hook never claims a live object.
        let targets = [res("v1", "Pod", "p", None, json!({HOOK_KEY: "Sync"}))];
        let live = [res("v1", "Pod", "p", Some("app"), json!({}))];
        let p = plan_of(&targets, &live, app("app", &[]));
        let kinds: Vec<(bool, bool)> = p.tasks().map(|t| (t.is_hook, t.is_prune)).collect();
        assert_eq!(kinds.len(), 2);
        assert!(kinds.contains(&(true, false)) && kinds.contains(&(false, true)));
        let hook = p.tasks().find(|t| t.is_hook).unwrap();
        assert_eq!(
            hook.live,
            Some(0),
            "the hook still sees the object it will replace"
        );
    }

    #[test]
    fn duplicate_targets_keep_the_last_one() {
        let targets = [
            res("v1", "ConfigMap", "c", None, json!({WAVE_KEY: "1"})),
            res("v1", "ConfigMap", "c", Some("app"), json!({WAVE_KEY: "2"})),
        ];
        let p = plan_of(&targets, &[], app("app", &[]));
        let waves: Vec<i64> = p.tasks().map(|t| t.wave).collect();
        assert_eq!(waves, vec![2]);
        assert_eq!(p.ignored[0].reason, IgnoreReason::DuplicateTarget);
        assert_eq!(p.ignored[0].source, TaskSource::Target { index: 0 });
    }

    #[test]
    fn hooks_are_dropped_when_hooks_are_skipped() {
        let targets = [
            res("batch/v1", "Job", "pre", None, json!({HOOK_KEY: "PreSync"})),
            res("v1", "ConfigMap", "c", None, json!({})),
        ];
        let settings = AppSettings {
            skip_hooks: true,
            ..app("app", &[])
        };
        let p = plan_of(&targets, &[], settings);
        assert_eq!(p.tasks().count(), 1);
        assert_eq!(p.ignored[0].reason, IgnoreReason::HooksSkipped);
    }

    #[test]
    fn without_a_destination_namespace_nothing_is_filled_and_no_namespace_is_created() {
        let targets = [res("v1", "ConfigMap", "c", None, json!({}))];
        let p = plan_of(&targets, &[], app("", &["CreateNamespace=true"]));
        let tasks: Vec<&Task> = p.tasks().collect();
        assert_eq!(tasks.len(), 1);
        assert_eq!(tasks[0].namespace, "");
    }

    #[test]
    fn the_app_prune_default_applies_unless_the_live_object_overrides_it() {
        let live = [
            res("v1", "ConfigMap", "keep", Some("app"), json!({})),
            res(
                "v1",
                "ConfigMap",
                "go",
                Some("app"),
                json!({OPTIONS_KEY: "Prune=true"}),
            ),
            res(
                "v1",
                "ConfigMap",
                "ask",
                Some("app"),
                json!({OPTIONS_KEY: "Prune=confirm"}),
            ),
        ];
        let p = plan_of(&[], &live, app("app", &["Prune=false"]));
        let flags: Vec<(String, bool, bool)> = p
            .tasks()
            .map(|t| {
                (
                    t.name.clone(),
                    t.prune_disabled,
                    t.prune_requires_confirmation,
                )
            })
            .collect();
        assert_eq!(
            flags,
            vec![
                ("ask".to_string(), false, true),
                ("go".to_string(), false, false),
                ("keep".to_string(), true, false),
            ]
        );
    }

    #[test]
    fn a_crd_shipped_as_a_hook_still_counts_as_in_the_sync() {
        let mut crd = res(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            "widgets.example.com",
            None,
            json!({HOOK_KEY: "PreSync"}),
        );
        crd.raw["spec"] = json!({"group": "example.com", "names": {"kind": "Widget"}});
        let targets = [res("example.com/v1", "Widget", "w", None, json!({})), crd];
        let p = plan_of(&targets, &[], app("app", &[]));
        assert!(p.is_valid());
        assert!(p.tasks().find(|t| t.kind == "Widget").unwrap().skip_dry_run);
    }

    #[test]
    fn a_single_step_without_hooks_is_not_gated_and_sync_fail_is_conditional() {
        let targets = [
            res("v1", "ConfigMap", "c", None, json!({})),
            res("v1", "Pod", "f", None, json!({HOOK_KEY: "SyncFail"})),
        ];
        let p = plan_of(&targets, &[], app("app", &[]));
        assert_eq!(p.steps.len(), 1);
        assert!(p.steps[0].is_final);
        assert_eq!(p.steps[0].gate, Gate::None);
        assert!(!p.steps[0].health_gated);
        let fail = p.sync_fail.as_ref().unwrap();
        assert!(fail.conditional && fail.gate == Gate::Hooks);
        assert_eq!(
            fail.tasks[0].index, 1,
            "indexes run across the SyncFail step"
        );
    }

    #[test]
    fn object_keys_print_and_parse_as_group_kind_namespace_name() {
        let k = ObjectKey::new("apps", "Deployment", "app", "web");
        assert_eq!(k.to_string(), "apps/Deployment/app/web");
        assert_eq!(ObjectKey::parse("apps/Deployment/app/web"), Some(k.clone()));
        assert_eq!(
            ObjectKey::parse("/Namespace//app").unwrap().kind,
            "Namespace"
        );
        assert_eq!(ObjectKey::parse("nope"), None);
        assert_eq!(
            serde_json::to_value(&k).unwrap(),
            json!("apps/Deployment/app/web")
        );
    }

    const HOOK_KEY: &str = crate::model::argo::HOOK;
    const WAVE_KEY: &str = crate::model::argo::SYNC_WAVE;
    const OPTIONS_KEY: &str = crate::model::argo::SYNC_OPTIONS;
}
