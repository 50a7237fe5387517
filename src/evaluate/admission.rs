//! The input document of one admitted object, judged inside its Application.
//!
//! `syncguard check` builds every fact of an Application once and reads one document per object
//! out of it. Admission sees one object per request, but the facts of its Application — the
//! plan, where each reference lands, who depends on whom — are the same for every request until
//! the context changes. [`PreparedSet`] keeps them: an app context hands out one `PreparedSet`
//! per Application (shared, immutable, replaced when the context reloads), its views are built
//! on first use, and a request only resolves the admitted object's own references against them.
//!
//! The shortcut is exact, not an approximation: it is taken only when the admitted object
//! replaces a member with the same identity and the same sync facts (so the plan cannot move) and
//! produces the same objects (so no other reference resolves differently). Anything else — a
//! new object, a changed wave or hook, an Application or a CRD being admitted — rebuilds the set
//! with the object in place, as [`build_admission_input`] does. A test compares both paths on
//! every object of the bundled examples.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};

use super::{AppView, EvaluateOptions, Member, Source, build_inputs_for};
use crate::model::Resource;
use crate::model::app::{AppGroup, Membership, group_by_app};
use crate::model::argo::{SyncFacts, SyncPhase};
use crate::model::refs::{Resolution, ResourceIndex, produces, references};
use crate::plan::{Plan, is_builtin_group, kind_order};

/// At most this many views are kept per set: one per (group, destination namespace) pair, and
/// the destination only varies for sets without an Application object (it then comes from the
/// request's namespace). Beyond it views are built per request and dropped.
const MAX_CACHED_VIEWS: usize = 64;

/// What an admission request adds to the input document.
#[derive(Debug, Clone, Default)]
pub struct AdmissionFacts {
    /// `CREATE`, `UPDATE`, `DELETE` or `CONNECT`.
    pub operation: String,
    /// `oldObject` on UPDATE (and DELETE).
    pub old: Option<Value>,
    /// `dryRun`: evaluated the same way; recorded so rules and logs can tell.
    pub dry_run: bool,
    /// `userInfo`, as sent.
    pub user: Value,
}

/// The input document for one admitted object.
///
/// `app_context` holds the objects of the object's Application when they are known (a rendered
/// copy, or the reconciler's cache): the object is then evaluated inside that set — taking the
/// place of its own copy, when the set has one — so cross-resource rules such as SG201 see the
/// same facts as in `syncguard check`, except that a target the context does not contain is
/// `"unknown"`, not `"missing"` (it may exist in the cluster). Without context, every reference
/// target says `"resolution": "unknown"`, `input.plan` is absent and `input.dependents` is
/// empty: cross-resource rules stay silent rather than guess.
///
/// This builds every fact of the set for this one request; the webhook uses
/// [`PreparedSet::admission_input`], which gives the same document from facts built once.
pub fn build_admission_input(
    object: &Resource,
    app_context: &[Resource],
    admission: &AdmissionFacts,
    options: &EvaluateOptions,
) -> Value {
    let options = admission_options(options);
    finish(
        rebuilt_input(object, app_context, &options),
        object,
        admission,
    )
}

fn admission_options(options: &EvaluateOptions) -> EvaluateOptions {
    EvaluateOptions {
        source: Source::Admission,
        ..options.clone()
    }
}

/// True when `candidate` is the context's copy of `object`: same group, kind and name (or, for
/// objects without a name yet, the same `generateName`), and the same namespace — a copy
/// without a namespace (rendered manifests leave it to Argo CD) matches any.
fn is_copy(candidate: &Resource, object: &Resource) -> bool {
    let same_name = if object.name.is_empty() {
        candidate.name.is_empty()
            && object.generate_name.is_some()
            && candidate.generate_name == object.generate_name
    } else {
        candidate.name == object.name
    };
    same_name
        && candidate.kind == object.kind
        && candidate.group == object.group
        && (candidate.namespace.is_none()
            || object.namespace.is_none()
            || candidate.namespace == object.namespace)
}

/// The document before the admission facts are added, built from scratch: the set with the
/// object in the place of its copies (appended when there is none).
fn rebuilt_input(object: &Resource, app_context: &[Resource], options: &EvaluateOptions) -> Value {
    if app_context.is_empty() {
        return contextless_input(object, options);
    }
    let mut set: Vec<Resource> = Vec::with_capacity(app_context.len() + 1);
    let mut at: Option<usize> = None;
    for r in app_context {
        if is_copy(r, object) {
            if at.is_none() {
                at = Some(set.len());
                set.push(object.clone());
            }
        } else {
            set.push(r.clone());
        }
    }
    let at = at.unwrap_or_else(|| {
        set.push(object.clone());
        set.len() - 1
    });
    let (mut inputs, _) = build_inputs_for(&set, options, Some(at));
    let doc = if at < inputs.len() {
        inputs.swap_remove(at)
    } else {
        Value::Null
    };
    unknown_for_missing(doc)
}

/// Without context: the object alone, every non-builtin target unknown, no plan, no dependents.
fn contextless_input(object: &Resource, options: &EvaluateOptions) -> Value {
    let (mut inputs, _) = build_inputs_for(std::slice::from_ref(object), options, Some(0));
    let mut doc = inputs.pop().unwrap_or(Value::Null);
    if let Value::Object(map) = &mut doc {
        map.remove("plan");
        map.insert("dependents".into(), Value::Array(Vec::new()));
        if let Some(Value::Array(refs)) = map.get_mut("refs") {
            for r in refs.iter_mut() {
                let builtin = r.pointer("/target/resolution") == Some(&json!("builtin"));
                if !builtin && let Value::Object(entry) = r {
                    entry.insert("target".into(), json!({"resolution": "unknown"}));
                }
            }
        }
    }
    doc
}

/// The context lists what the Application manages, not what the cluster holds: a target outside
/// the Application (a Secret made by hand, another app's ConfigMap) may well exist live, so at
/// admission "missing" only means "unknown" — rules stay silent rather than deny a working object.
fn unknown_for_missing(mut doc: Value) -> Value {
    if let Some(Value::Array(refs)) = doc.get_mut("refs") {
        for r in refs.iter_mut() {
            if r.pointer("/target/resolution") == Some(&json!("missing"))
                && let Value::Object(entry) = r
            {
                entry.insert("target".into(), json!({"resolution": "unknown"}));
            }
        }
    }
    doc
}

/// kubectl's client-side-apply record: the object exactly as the client sent it, before the API
/// server's defaults. Argo CD applies this way unless `ServerSideApply=true`.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What the client declared on CREATE, from its last-applied-configuration annotation, when the
/// annotation holds a JSON object of the same kind and name. At admission the API server has
/// already filled in its defaults (a Job's `backoffLimit: 6`), so only this copy tells a value the
/// user chose from one Kubernetes chose (`input.declared`; absent otherwise).
fn declared(object: &Resource, operation: &str) -> Option<Value> {
    if operation != "CREATE" {
        return None;
    }
    let raw = object
        .raw
        .pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()?;
    let declared: Value = serde_json::from_str(raw).ok()?;
    let same = |p: &str| declared.pointer(p) == object.raw.pointer(p);
    (declared.is_object() && same("/kind") && same("/metadata/name")).then_some(declared)
}

/// Adds what the request says: operation, old object, declared object, dry run and user.
fn finish(mut doc: Value, object: &Resource, admission: &AdmissionFacts) -> Value {
    if let Value::Object(map) = &mut doc {
        map.insert("operation".into(), Value::from(admission.operation.clone()));
        if let Some(old) = &admission.old {
            map.insert("old".into(), old.clone());
        }
        if let Some(declared) = declared(object, &admission.operation) {
            map.insert("declared".into(), declared);
        }
        map.insert(
            "context".into(),
            json!({"source": "admission", "dry_run": admission.dry_run, "user": admission.user}),
        );
    }
    doc
}

/// Which fast path gave a document (tests count them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FastPath {
    InPlace,
    Appended,
}

/// Which view of a set: its group, and the destination namespace taken from the request when
/// the group has no Application saying otherwise (`None` when the Application decides).
type ViewKey = (usize, Option<String>, bool);

/// The objects of one Application as an admission context, with the facts of the set built
/// once and shared by every request that lands in it (see the module docs). Immutable apart
/// from its view cache; share it in an `Arc` and build a new one when the context changes.
pub struct PreparedSet {
    objects: Vec<Resource>,
    groups: Vec<AppGroup>,
    /// Object index → its group.
    group_of: Vec<usize>,
    views: Mutex<HashMap<ViewKey, Arc<AppView<'static>>>>,
    /// The set holds Argo CD settings objects (argocd-cm, argocd-cmd-params-cm, AppProjects):
    /// the configuration of every document comes from them, which the prepared views do not
    /// carry, so every admission is rebuilt.
    has_settings: bool,
}

impl std::fmt::Debug for PreparedSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedSet")
            .field("objects", &self.objects.len())
            .field("groups", &self.groups.len())
            .finish_non_exhaustive()
    }
}

impl PreparedSet {
    /// Prepares `objects` (an Application's objects, possibly including an earlier copy of
    /// objects that will be admitted, and the Application object). Cheap: views are built on
    /// first use.
    pub fn new(objects: Vec<Resource>) -> Self {
        let facts: Vec<SyncFacts> = objects.iter().map(SyncFacts::of).collect();
        // The set was read back from the cluster: its objects carry what Argo CD wrote.
        let groups = group_by_app(&objects, &facts, &Membership::live());
        let mut group_of = vec![0; objects.len()];
        for (g, group) in groups.iter().enumerate() {
            for &i in &group.members {
                if let Some(slot) = group_of.get_mut(i) {
                    *slot = g;
                }
            }
        }
        let has_settings = objects.iter().any(is_argocd_settings);
        Self {
            objects,
            groups,
            group_of,
            views: Mutex::new(HashMap::new()),
            has_settings,
        }
    }

    /// The objects, in the order given.
    pub fn objects(&self) -> &[Resource] {
        &self.objects
    }

    /// Number of objects.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// True when the set has no object (admission then judges the object without context).
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Builds the views that admission requests will use, ahead of the first request (the
    /// Application cache calls this off the request path when an Application changes). Views of
    /// groups whose destination comes from the request's namespace are still built on demand.
    pub fn warm(&self) {
        let options = admission_options(&EvaluateOptions::default());
        for group in 0..self.groups.len() {
            let _ = self.view(group, &options);
        }
    }

    /// Number of views built so far (for tests and diagnostics).
    pub fn views_built(&self) -> usize {
        self.views
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// The input document for `object` admitted into this set: exactly
    /// [`build_admission_input`]`(object, self.objects(), ..)`, from the prepared facts when the
    /// object takes the place of a member without changing anything the set's facts depend on.
    pub fn admission_input(
        &self,
        object: &Resource,
        admission: &AdmissionFacts,
        options: &EvaluateOptions,
    ) -> Value {
        let options = admission_options(options);
        let doc = match self.prepared_input(object, &options) {
            Some((doc, _)) => doc,
            None => rebuilt_input(object, &self.objects, &options),
        };
        finish(doc, object, admission)
    }

    /// The fast paths; `None` when neither applies.
    fn prepared_input(
        &self,
        object: &Resource,
        options: &EvaluateOptions,
    ) -> Option<(Value, FastPath)> {
        if options.require_crds {
            return None; // discovery would depend on the admitted object too
        }
        if object.group == "argoproj.io" && object.kind == "Application" {
            return None; // its spec is the view's settings
        }
        if object.group == "apiextensions.k8s.io" && object.kind == "CustomResourceDefinition" {
            return None; // it decides which custom kinds the plan considers served
        }
        if object.group.is_empty() && object.kind == "Namespace" {
            return None; // tasks of its namespace would bubble it
        }
        if self.has_settings || is_argocd_settings(object) {
            return None; // read into input.argocd.config (with_input_config)
        }
        let mut copies = self
            .objects
            .iter()
            .enumerate()
            .filter(|(_, r)| is_copy(r, object))
            .map(|(i, _)| i);
        match (copies.next(), copies.next()) {
            (Some(copy), None) => self
                .in_place(copy, object, options)
                .map(|doc| (doc, FastPath::InPlace)),
            (None, _) => self
                .appended(object, options)
                .map(|doc| (doc, FastPath::Appended)),
            (Some(_), Some(_)) => None,
        }
    }

    /// The admitted object takes the place of member `copy`. Exact when the plan and every
    /// other resolution stay as they are: same identity, sync facts and produced objects.
    fn in_place(&self, copy: usize, object: &Resource, options: &EvaluateOptions) -> Option<Value> {
        let group = *self.group_of.get(copy)?;
        let view = self.view(group, options)?;
        let local = view.members.iter().position(|&m| m == copy)?;
        let member = view.objects.get(local)?;
        let facts = SyncFacts::of(object);
        let dest = view.destination.as_str();
        let same_place = member.api_version == object.api_version
            && member.generate_name == object.generate_name
            && member.namespace.as_deref().unwrap_or(dest)
                == object.namespace.as_deref().unwrap_or(dest)
            && view.facts.get(local) == Some(&facts)
            && produces(member) == produces(object);
        if !same_place {
            return None;
        }
        let index = view.member_index();
        let refs: Vec<_> = references(object)
            .into_iter()
            .map(|r| {
                let resolution = index.resolve(&r);
                (r, resolution)
            })
            .collect();
        let me = Member {
            i: local,
            resource: object,
            facts: &facts,
            tasks: view.tasks.get(local).map_or(&[][..], Vec::as_slice),
        };
        let doc = view.document(
            me,
            &refs,
            view.postsync_hooks,
            view.dependents_of(local),
            options,
        );
        Some(unknown_for_missing(doc))
    }

    /// The admitted object is new to its Application (the usual case for hooks: Argo CD's
    /// `status.resources` does not list them). Rebuilding would append it after the members.
    /// From the prepared view that is exact as long as nothing in the set would be bubbled
    /// towards it (its namespace's Namespace, its kind's CRD): its tasks then only add
    /// (phase, wave) steps, which renumbers later steps and may change which step is final —
    /// both recomputed here for the task entries the document shows.
    fn appended(&self, object: &Resource, options: &EvaluateOptions) -> Option<Value> {
        let facts = SyncFacts::of(object);
        let app = facts.tracking.app_instance();
        let group = self.groups.iter().position(|g| g.name.as_deref() == app)?;
        let view = self.view(group, options)?;
        let dest = view.destination.as_str();
        let namespace = object.namespace.as_deref().unwrap_or(dest);
        let custom = !is_builtin_group(&object.group);
        let order = kind_order(&object.kind);
        let bubbles = view.plan.tasks().any(|t| {
            if t.kind == "Namespace" && t.group.is_empty() && t.name == namespace {
                // Bubbling moves the Namespace to its first dependant in sorted order; the
                // object can only become that if one of its tasks sorts before the Namespace's
                // own place (phase, wave, then kind order: a Namespace goes first in its wave).
                let (phase, wave) = t
                    .bubbled
                    .as_ref()
                    .map_or((t.phase, t.wave), |b| (b.from_phase, b.from_wave));
                facts
                    .phases
                    .iter()
                    .any(|&p| (p, facts.wave, order) <= (phase, wave, t.kind_order))
            } else {
                custom && t.kind == "CustomResourceDefinition"
            }
        });
        if bubbles {
            return None;
        }
        let steps = Steps::with(&view.plan, &facts);
        let mut tasks: Vec<(usize, Value)> = facts
            .phases
            .iter()
            .map(|&phase| steps.entry(phase, facts.wave))
            .collect();
        tasks.sort_by_key(|(n, _)| *n);
        let tasks: Vec<Value> = tasks.into_iter().map(|(_, t)| t).collect();
        let postsync_hooks = view.postsync_hooks
            + if facts.is_hook {
                facts
                    .phases
                    .iter()
                    .filter(|p| **p == SyncPhase::PostSync)
                    .count()
            } else {
                0
            };

        // The new slot, after every member: first-wins lookups only reach it for keys no
        // member has (or, for a name it defines, keys members only produce).
        let slot = view.objects.len();
        let alone = ResourceIndex::build(std::slice::from_ref(object), Some(dest));
        let index = view.member_index();
        let refs: Vec<_> = references(object)
            .into_iter()
            .map(|r| {
                let resolution = via_new_slot(index.resolve(&r), alone.resolve(&r), slot);
                (r, resolution)
            })
            .collect();
        // Only a reference naming the object (or what it produces) can now resolve to it.
        let produced: Vec<String> = produces(object).into_iter().map(|p| p.name).collect();
        let names_it = |name: &str| name == object.name || produced.iter().any(|p| p == name);
        let mut dependents: Vec<Value> = Vec::new();
        for (j, rs) in view.refs.iter().enumerate() {
            for (k, (reference, resolution)) in rs.iter().enumerate() {
                if !names_it(&reference.name)
                    || matches!(resolution, Resolution::InSet { .. } | Resolution::Builtin)
                {
                    continue;
                }
                let now = via_new_slot(*resolution, alone.resolve(reference), slot);
                if now != *resolution
                    && let Some(entry) = view.dependent_entry(j, k)
                {
                    dependents.push(entry);
                }
            }
        }
        let me = Member {
            i: slot,
            resource: object,
            facts: &facts,
            tasks: &tasks,
        };
        let mut doc = view.document(me, &refs, postsync_hooks, dependents, options);
        // `plan.steps` and the members' task entries under `refs[].target.tasks`, as they are
        // with the new steps.
        if let Some(plan) = doc.get_mut("plan") {
            plan["steps"] = Value::from(steps.count());
        }
        if let Some(Value::Array(entries)) = doc.get_mut("refs") {
            for (entry, (_, resolution)) in entries.iter_mut().zip(&refs) {
                let member = match resolution {
                    Resolution::InSet { index } | Resolution::ProducedBy { index } => {
                        *index != slot
                    }
                    Resolution::Builtin | Resolution::Missing => false,
                };
                if member && let Some(Value::Array(tasks)) = entry.pointer_mut("/target/tasks") {
                    for task in tasks.iter_mut() {
                        steps.renumber(task);
                    }
                }
            }
        }
        Some(unknown_for_missing(doc))
    }

    /// The view of `group` for these options, built on first use.
    fn view(&self, group: usize, options: &EvaluateOptions) -> Option<Arc<AppView<'static>>> {
        let g = self.groups.get(group)?;
        let app_decides = g
            .application
            .as_ref()
            .is_some_and(|a| !a.destination_namespace.is_empty());
        let key: ViewKey = (
            group,
            if app_decides {
                None
            } else {
                options.destination_namespace.clone()
            },
            options.require_crds,
        );
        let mut views = self.views.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(view) = views.get(&key) {
            return Some(view.clone());
        }
        // Built under the lock: concurrent first requests of one set would otherwise each build
        // the same view (a one-off cost per set and destination).
        let objects: Vec<Resource> = g
            .members
            .iter()
            .filter_map(|&i| self.objects.get(i).cloned())
            .collect();
        let facts = objects.iter().map(SyncFacts::of).collect();
        let view = AppView::build(
            g.name.clone(),
            g.application.clone(),
            g.members.clone(),
            std::borrow::Cow::Owned(objects),
            facts,
            options,
        );
        view.dependents_index();
        view.member_index();
        let view = Arc::new(view);
        if views.len() < MAX_CACHED_VIEWS {
            views.insert(key, view.clone());
        }
        Some(view)
    }
}

/// The plan's steps with an appended object's tasks added: Argo CD groups tasks by
/// (phase, wave) in order, SyncFail tasks form one extra step after them, every step but the last
/// waits for its tasks, and the last waits only when it holds a hook ([`crate::plan::Gate`]).
struct Steps {
    /// (phase, wave) of each step before the object was added.
    before: Vec<(SyncPhase, i64)>,
    /// And after.
    after: Vec<(SyncPhase, i64)>,
    /// Whether the last step (after) holds a hook.
    last_has_hook: bool,
}

impl Steps {
    fn with(plan: &Plan, facts: &SyncFacts) -> Self {
        let before: Vec<(SyncPhase, i64)> = plan.steps.iter().map(|s| (s.phase, s.wave)).collect();
        let mut after = before.clone();
        for &phase in &facts.phases {
            if phase != SyncPhase::SyncFail && !after.contains(&(phase, facts.wave)) {
                after.push((phase, facts.wave));
            }
        }
        after.sort();
        let last = after.last().copied();
        let had_hook = plan
            .steps
            .iter()
            .find(|s| Some((s.phase, s.wave)) == last)
            .is_some_and(|s| s.tasks.iter().any(|t| t.is_hook));
        let joins_last =
            facts.is_hook && facts.phases.iter().any(|&p| Some((p, facts.wave)) == last);
        Self {
            before,
            after,
            last_has_hook: had_hook || joins_last,
        }
    }

    fn count(&self) -> usize {
        self.after.len()
    }

    /// The step number and the task entry of a task in (phase, wave).
    fn entry(&self, phase: SyncPhase, wave: i64) -> (usize, Value) {
        let n = if phase == SyncPhase::SyncFail {
            self.after.len()
        } else {
            self.after
                .iter()
                .position(|&k| k == (phase, wave))
                .unwrap_or(self.after.len())
        };
        let (gated, is_final) = self.flags(n);
        (n, task_entry(phase, wave, n, gated, is_final))
    }

    /// `gated` and `final` of step `n` (the SyncFail step when `n` is past the last).
    fn flags(&self, n: usize) -> (bool, bool) {
        match self.after.len().checked_sub(1) {
            Some(last) if n == last => (self.last_has_hook, true),
            Some(last) if n < last => (true, false),
            // The SyncFail step: conditional, so never a gate of the main sequence.
            _ => (false, false),
        }
    }

    /// Rewrites a member's task entry (numbered before the object was added).
    fn renumber(&self, task: &mut Value) {
        let Some(old) = task.get("step").and_then(Value::as_u64) else {
            return;
        };
        let old = usize::try_from(old).unwrap_or(usize::MAX);
        let n = match self.before.get(old) {
            Some(key) => self
                .after
                .iter()
                .position(|k| k == key)
                .unwrap_or(self.after.len()),
            None => self.after.len(), // SyncFail
        };
        let (gated, is_final) = self.flags(n);
        task["step"] = Value::from(n);
        task["gated"] = Value::from(gated);
        task["final"] = Value::from(is_final);
    }
}

/// A resolution against the members, updated for an object in a new slot after them
/// (`alone`: the resolution against that object by itself, slot 0). Names an object defines
/// win over names others produce; otherwise the first object wins.
fn via_new_slot(members: Resolution, alone: Resolution, slot: usize) -> Resolution {
    match (members, alone) {
        (Resolution::Missing, Resolution::InSet { .. }) => Resolution::InSet { index: slot },
        (Resolution::Missing, Resolution::ProducedBy { .. }) => {
            Resolution::ProducedBy { index: slot }
        }
        (Resolution::ProducedBy { .. }, Resolution::InSet { .. }) => {
            Resolution::InSet { index: slot }
        }
        (members, _) => members,
    }
}

/// One `input.plan.tasks` entry (the shape `task_entries` writes).
fn task_entry(phase: SyncPhase, wave: i64, step: usize, gated: bool, is_final: bool) -> Value {
    json!({"phase": phase, "wave": wave, "step": step, "gated": gated, "final": is_final})
}

/// Argo CD's settings objects: the set's configuration (`input.argocd.config`) is read from them.
fn is_argocd_settings(object: &Resource) -> bool {
    use crate::model::argocd_config::{ARGOCD_CM, ARGOCD_CMD_PARAMS_CM};
    (object.group.is_empty()
        && object.kind == "ConfigMap"
        && (object.name == ARGOCD_CM || object.name == ARGOCD_CMD_PARAMS_CM))
        || (object.group == "argoproj.io" && object.kind == "AppProject")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_paths;
    use std::path::{Path, PathBuf};

    /// Every bundled example and manifest fixture, one set per directory, plus all examples as
    /// one set.
    fn sets() -> Vec<Vec<Resource>> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut dirs: Vec<PathBuf> = Vec::new();
        for parent in ["examples", "tests/fixtures/manifests"] {
            for entry in std::fs::read_dir(root.join(parent)).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                }
            }
        }
        dirs.sort();
        let mut sets: Vec<Vec<Resource>> = dirs
            .iter()
            .map(|d| load_paths(std::slice::from_ref(d)).resources)
            .filter(|r| !r.is_empty())
            .collect();
        sets.push(load_paths(&[root.join("examples")]).resources);
        sets
    }

    fn facts() -> AdmissionFacts {
        AdmissionFacts {
            operation: "CREATE".into(),
            old: None,
            dry_run: false,
            user: json!({"username": "system:serviceaccount:argocd:argocd-application-controller"}),
        }
    }

    fn options(namespace: Option<&str>) -> EvaluateOptions {
        EvaluateOptions {
            source: Source::Admission,
            destination_namespace: namespace.map(str::to_string),
            require_crds: false,
            argocd: "3.2".parse().unwrap(),
            ..EvaluateOptions::default()
        }
    }

    fn object(v: Value) -> Resource {
        Resource::from_value(v, None).unwrap()
    }

    /// What the API server does to an object before admission, and what users change.
    fn variants(r: &Resource, namespace: &str) -> Vec<Resource> {
        let mut out = vec![r.clone()];
        let mut admitted = r.raw.clone();
        admitted["metadata"]["namespace"] = json!(namespace);
        admitted["metadata"]["uid"] = json!("7d3c0c54-0000-4000-8000-000000000001");
        admitted["metadata"]["creationTimestamp"] = json!("2026-11-30T05:00:00Z");
        out.push(object(admitted.clone()));
        // A new reference (found at admission, not in the rendered copy).
        if let Some(spec) = admitted.pointer_mut("/spec/template/spec")
            && spec.is_object()
        {
            spec["volumes"] = json!([{"name": "extra", "secret": {"secretName": "db-credentials"}},
                                     {"name": "other", "configMap": {"name": "not-in-the-app"}}]);
            out.push(object(admitted.clone()));
        }
        // A different wave: the plan moves, so only a rebuild can answer.
        admitted["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] = json!("7");
        out.push(object(admitted.clone()));
        // Not in the set: the same object under a new name, and at the member's own wave.
        admitted["metadata"]["name"] = json!("syncguard-new-object");
        out.push(object(admitted.clone()));
        let mut same_wave = r.raw.clone();
        same_wave["metadata"]["name"] = json!("syncguard-new-object");
        out.push(object(same_wave));
        // An object each reference of the member points at (it gains dependents, and a name a
        // member only produced becomes defined).
        for reference in references(r) {
            let api = if reference.group.is_empty() {
                "v1".to_string()
            } else {
                format!("{}/v1", reference.group)
            };
            let mut meta = json!({"name": reference.name});
            if let Some(ns) = &reference.namespace {
                meta["namespace"] = json!(ns);
            }
            if let Some(labels) = r.raw.pointer("/metadata/labels") {
                meta["labels"] = labels.clone();
            }
            if let Some(id) = r
                .raw
                .pointer("/metadata/annotations/argocd.argoproj.io~1tracking-id")
            {
                meta["annotations"] = json!({"argocd.argoproj.io/tracking-id": id});
            }
            out.push(object(
                json!({"apiVersion": api, "kind": reference.kind, "metadata": meta}),
            ));
        }
        out
    }

    /// New hooks of every phase and a few waves, tracked like `r`, referencing what `r`
    /// references.
    fn hooks_like(r: &Resource) -> Vec<Resource> {
        let mut out = Vec::new();
        for phase in [
            "PreSync",
            "Sync",
            "PostSync",
            "SyncFail",
            "PreSync,PostSync",
        ] {
            for wave in ["-1", "0", "1", "5"] {
                let mut raw = json!({
                    "apiVersion": "batch/v1", "kind": "Job",
                    "metadata": {"name": format!("hook-{}-{wave}", phase.replace(',', "-").to_lowercase()),
                                 "annotations": {"argocd.argoproj.io/hook": phase,
                                                 "argocd.argoproj.io/sync-wave": wave}},
                    "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
                        {"name": "c", "image": "busybox",
                         "envFrom": [{"secretRef": {"name": "db-credentials"}}]}]}}}
                });
                if let Some(labels) = r.raw.pointer("/metadata/labels") {
                    raw["metadata"]["labels"] = labels.clone();
                }
                if let Some(ns) = &r.namespace {
                    raw["metadata"]["namespace"] = json!(ns);
                }
                out.push(object(raw));
            }
        }
        out
    }

    /// A Job as kubectl (and Argo CD's client-side apply) creates it: defaulted by the API
    /// server, with the client's own copy in the last-applied annotation.
    fn applied_job(declared: &Value) -> Resource {
        let mut admitted = declared.clone();
        admitted["spec"]["backoffLimit"] = json!(6);
        admitted["metadata"]["annotations"][LAST_APPLIED] = json!(declared.to_string());
        object(admitted)
    }

    #[test]
    fn the_declared_object_comes_from_the_last_applied_annotation_on_create() {
        let declared = json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "migrate", "namespace": "orders",
                         "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
            "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": []}}}});
        let job = applied_job(&declared);
        let doc = build_admission_input(&job, &[], &facts(), &options(Some("orders")));
        assert_eq!(doc["declared"], declared);
        // The release judged for rides along in every document.
        let mut argocd = doc["argocd"].clone();
        let behaviours = argocd
            .as_object_mut()
            .and_then(|o| o.remove("behaviours"))
            .unwrap();
        assert_eq!(
            argocd,
            json!({"version": "3.2", "major": 3, "minor": 2, "patch": 99, "release": 302,
                   "number": 30299, "engine": "standalone gitops-engine",
                   "config": {"source": "none", "health_checks": [], "ignore_differences": [],
                              "exclusions": [], "inclusions": [], "projects": {},
                              "ignore_aggregated_roles": false}})
        );
        // Every behaviour of the table is named, in force or not.
        assert_eq!(behaviours["tracking_id_default"], true);
        assert_eq!(behaviours["pre_delete_hooks"], false);
        assert_eq!(
            behaviours.as_object().unwrap().len(),
            crate::model::version::CHANGES.len()
        );
        assert_eq!(doc["resource"]["spec"]["backoffLimit"], 6);

        // Only on CREATE: an UPDATE's annotation describes the previous apply as well.
        let update = AdmissionFacts {
            operation: "UPDATE".into(),
            ..facts()
        };
        let doc = build_admission_input(&job, &[], &update, &options(Some("orders")));
        assert!(doc.get("declared").is_none());

        // Not JSON, or another object's copy: no declared object.
        for bad in [
            "{not json",
            r#"{"kind": "Job", "metadata": {"name": "other"}}"#,
            "[1]",
        ] {
            let mut raw = job.raw.clone();
            raw["metadata"]["annotations"][LAST_APPLIED] = json!(bad);
            let doc = build_admission_input(&object(raw), &[], &facts(), &options(Some("orders")));
            assert!(doc.get("declared").is_none(), "{bad}");
        }
    }

    #[test]
    fn the_prepared_paths_give_the_rebuilt_document() {
        let (mut in_place, mut appended, mut rebuilt) = (0, 0, 0);
        for set in sets() {
            let prepared = PreparedSet::new(set.clone());
            let mut admitted: Vec<Resource> = Vec::new();
            for r in &set {
                for namespace in ["default", "shop"] {
                    admitted.extend(variants(r, namespace));
                }
                admitted.extend(hooks_like(r));
            }
            for a in &admitted {
                let ns = a.namespace.clone().unwrap_or_else(|| "default".into());
                for opts in [options(Some(&ns)), options(None)] {
                    let expected = build_admission_input(a, &set, &facts(), &opts);
                    let got = prepared.admission_input(a, &facts(), &opts);
                    assert_eq!(got, expected, "{} {} in {ns}", a.kind, a.name);
                    match prepared.prepared_input(a, &admission_options(&opts)) {
                        Some((_, FastPath::InPlace)) => in_place += 1,
                        Some((_, FastPath::Appended)) => appended += 1,
                        None => rebuilt += 1,
                    }
                }
            }
        }
        // The comparison must exercise both prepared paths, not only the fallback.
        assert!(
            in_place > 100 && appended > 100 && rebuilt > 100,
            "in place {in_place}, appended {appended}, rebuilt {rebuilt}"
        );
    }

    #[test]
    fn the_prepared_path_is_not_taken_when_the_plan_could_move() {
        let set: Vec<Resource> = sets().pop().unwrap();
        let prepared = PreparedSet::new(set.clone());
        let job = set
            .iter()
            .find(|r| r.kind == "Job" && !r.name.is_empty())
            .unwrap();
        let opts = admission_options(&options(Some("default")));
        assert!(prepared.prepared_input(job, &opts).is_some());
        let mut raw = job.raw.clone();
        raw["metadata"]["annotations"]["argocd.argoproj.io/sync-wave"] = json!("42");
        let moved = object(raw);
        assert!(prepared.prepared_input(&moved, &opts).is_none());
    }

    #[test]
    fn a_new_hook_joins_or_opens_steps_without_a_rebuild() {
        let set = vec![
            object(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})),
            object(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b",
                "annotations": {"argocd.argoproj.io/sync-wave": "2"}}}),
            ),
        ];
        let prepared = PreparedSet::new(set);
        let opts = admission_options(&options(Some("default")));
        let hook = |phase: &str, wave: &str| {
            object(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "h", "annotations": {"argocd.argoproj.io/hook": phase,
                                                          "argocd.argoproj.io/sync-wave": wave}}}))
        };
        // Joins the first step (Sync, wave 0): prepared.
        assert!(matches!(
            prepared.prepared_input(&hook("Sync", "0"), &opts),
            Some((_, FastPath::Appended))
        ));
        // A new step, the final step (its gate changes) or a first SyncFail step: prepared too,
        // and the same as a rebuild.
        for (phase, wave) in [
            ("PreSync", "0"),
            ("Sync", "2"),
            ("Sync", "3"),
            ("SyncFail", "0"),
        ] {
            let h = hook(phase, wave);
            let (doc, path) = prepared.prepared_input(&h, &opts).unwrap();
            assert_eq!(path, FastPath::Appended);
            assert_eq!(
                doc,
                rebuilt_input(&h, prepared.objects(), &opts),
                "{phase} {wave}"
            );
        }
        // A Namespace in the set: a hook sorting before its place would pull it forward
        // (rebuilt); one sorting after it leaves it where it is (prepared, same document).
        let with_namespace = PreparedSet::new(vec![
            object(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"},
                          "annotations": {}}),
            ),
            object(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
                "annotations": {"argocd.argoproj.io/sync-wave": "3"}}}),
            ),
        ]);
        for (phase, wave) in [("PreSync", "0"), ("PreSync", "-1"), ("Sync", "-1")] {
            let h = hook(phase, wave);
            assert!(
                with_namespace.prepared_input(&h, &opts).is_none(),
                "{phase} {wave}"
            );
        }
        for (phase, wave) in [("Sync", "0"), ("Sync", "1"), ("PostSync", "0")] {
            let h = hook(phase, wave);
            let (doc, path) = with_namespace.prepared_input(&h, &opts).unwrap();
            assert_eq!(path, FastPath::Appended);
            assert_eq!(
                doc,
                rebuilt_input(&h, with_namespace.objects(), &opts),
                "{phase} {wave}"
            );
        }
        // The same with CreateNamespace=true: the destination Namespace is a PreSync task at
        // wave 0, and a PreSync hook at wave 0 (a Job sorts after a Namespace) stays prepared.
        let app = |objects: Vec<Resource>| {
            let mut all = objects;
            all.push(object(
                json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "shop"},
                "spec": {"destination": {"namespace": "shop"},
                         "syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}}),
            ));
            PreparedSet::new(all)
        };
        let tracked = |mut r: Resource| {
            r.raw["metadata"]["labels"] = json!({"app.kubernetes.io/instance": "shop"});
            Resource::from_value(r.raw, None).unwrap()
        };
        let created = app(vec![tracked(object(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
        ))]);
        for (phase, wave, prepared) in [("PreSync", "0", true), ("PreSync", "-1", false)] {
            let h = tracked(hook(phase, wave));
            let got = created.prepared_input(&h, &opts);
            assert_eq!(got.is_some(), prepared, "{phase} {wave}");
            if let Some((doc, _)) = got {
                assert_eq!(doc, rebuilt_input(&h, created.objects(), &opts));
            }
        }
    }

    #[test]
    fn views_are_built_once_per_destination_and_bounded() {
        let set = sets().pop().unwrap();
        let prepared = PreparedSet::new(set.clone());
        let job = set.iter().find(|r| r.kind == "Job").unwrap();
        for _ in 0..3 {
            prepared.admission_input(job, &facts(), &options(Some("default")));
        }
        let built = prepared.views.lock().unwrap().len();
        assert!(built >= 1);
        for n in 0..(MAX_CACHED_VIEWS * 2) {
            let ns = format!("ns-{n}");
            prepared.admission_input(job, &facts(), &options(Some(&ns)));
        }
        assert!(prepared.views.lock().unwrap().len() <= MAX_CACHED_VIEWS);
    }
}
