//! The pipeline shared by every front end: resources → facts → plan → policy input → findings.
//!
//! Rust owns the *facts* (what Argo CD will do with each object, what it references, where that
//! referenced object appears in the simulated sync); the Rego rules own the *judgement*. This
//! module builds the input document of `policies/README.md` for every object — the contract the
//! rules are written against — and hands the documents to the [`PolicySet`].
//!
//! Cross-resource facts never require a rule to see the whole set: references are resolved with
//! an index ([`crate::model::refs`]) and each reference's target carries the facts a rule needs
//! (its phases, wave and plan steps), so evaluation stays linear in the number of objects.

#![deny(clippy::unwrap_used, clippy::expect_used)]

mod admission;
mod elsewhere;
mod project;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use crate::model::generated::certificate_material;
use crate::model::writers::Writers;

use rayon::prelude::*;
use serde_json::{Map, Value, json};

use crate::finding::{Finding, Report, group_causes};
use crate::model::Resource;
use crate::model::app::{
    AppGroup, Application, Membership, group_by_app, inferred_destination, is_application,
};
use crate::model::apply::ApplySize;
use crate::model::argo::{SyncFacts, SyncPhase};
use crate::model::argocd_config::{ArgoCdConfig, ConfigSource, health_check_name};
use crate::model::diff::{self, ApplyMode};
use crate::model::governed::governed;
use crate::model::ownership::{Tell, namespace_guests, same_source, shared_claims};
use crate::model::refs::is_cluster_scoped;
use crate::model::refs::{OwnedResourceIndex, Reference, Resolution, produces, resolve_all};
use crate::model::validity::{self, CrdIndex};
use crate::model::version::{ArgoCdVersion, Behaviour};
use crate::model::waits::{self, NeedsIndex};
use crate::plan::{AppSettings, ClusterApis, Plan, PlanInput, TaskSource, plan};
use crate::policy::PolicySet;
use elsewhere::Elsewhere;

pub use admission::{AdmissionFacts, PreparedSet, build_admission_input};

/// Where the objects come from; becomes `input.context.source` and `input.operation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// `syncguard check` over rendered manifests (operation `CHECK`).
    Check,
    /// The reconciler's background audit of live objects (operation `AUDIT`).
    Audit,
    /// An admission request (operation from the request: `CREATE`, `UPDATE`, ...).
    Admission,
}

impl Source {
    fn context(self) -> &'static str {
        match self {
            Source::Check => "check",
            Source::Audit => "audit",
            Source::Admission => "admission",
        }
    }

    fn operation(self) -> &'static str {
        match self {
            Source::Check => "CHECK",
            Source::Audit => "AUDIT",
            // Replaced by the request's operation in `build_admission_input`.
            Source::Admission => "CREATE",
        }
    }
}

/// Settings of one evaluation run.
#[derive(Debug, Clone)]
pub struct EvaluateOptions {
    /// Where the objects come from.
    pub source: Source,
    /// Destination namespace for objects of an app whose Application is not in the input
    /// (Argo CD fills it into objects without a namespace). `None`: `default`.
    pub destination_namespace: Option<String>,
    /// Treat custom kinds whose CRD is not in the input as unknown to the cluster (Argo CD would
    /// then refuse the sync). Off by default: CRDs are usually installed by another app.
    pub require_crds: bool,
    /// The input holds every Application of a repository (`review`): a reference no
    /// Application of it renders is known not to come from one (`input.context.repository`).
    /// Also true whenever the input renders several Applications.
    pub repository: bool,
    /// The Argo CD release judged for (`input.argocd`); its behaviours also drive the plan.
    pub argocd: ArgoCdVersion,
    /// Argo CD configuration known before the input is read (`--argocd-config`, the live
    /// cluster); `argocd-cm` and `AppProject` objects of the input are added to it.
    pub argocd_config: Arc<ArgoCdConfig>,
    /// The user declared the input complete (`check --complete`): a reference that is not in it
    /// does not exist (`input.context.complete`).
    pub complete: bool,
    /// What the cluster would store for input objects, by their index in the input: the
    /// results of a server-side dry-run apply (`check --cluster`). The diff model compares
    /// each declared field with it (`Mechanism::Stored`).
    pub stored: Arc<HashMap<usize, Value>>,
    /// The API server's verdict on input objects it dry-ran, by their index in the input, and
    /// the server's version: its refusals replace the offline validity model's, its acceptances
    /// overrule them (`model::validity::server`).
    pub verdicts: Arc<ServerVerdicts>,
    /// Changes from the live object the offline table of immutable fields refuses, by the
    /// object's index in the input (`review` without a server: the live object is the base
    /// revision's). Less certain than a server's verdict, which replaces them when there is one.
    pub refused_changes: Arc<HashMap<usize, Vec<crate::model::immutable::Refusal>>>,
    /// Leave `input.resource` out of the documents: the caller adds the object itself when it
    /// evaluates them ([`crate::policy::PolicySet::evaluate_parts`]), so a large object is not
    /// copied into every document it is judged in. The webhook sets it; off by default.
    pub omit_resource: bool,
}

impl Default for EvaluateOptions {
    fn default() -> Self {
        Self {
            source: Source::Check,
            destination_namespace: None,
            require_crds: false,
            repository: false,
            argocd: ArgoCdVersion::default(),
            argocd_config: Arc::default(),
            complete: false,
            stored: Arc::default(),
            verdicts: Arc::default(),
            refused_changes: Arc::default(),
            omit_resource: false,
        }
    }
}

/// What an API server said of the input's objects (`check --cluster`).
#[derive(Debug, Clone, Default)]
pub struct ServerVerdicts {
    /// The server's version, e.g. `v1.34.4`.
    pub version: String,
    /// Its verdict by the object's index in the input.
    pub by_index: HashMap<usize, validity::server::Verdict>,
}

/// `input.argocd`: the release rules judge for. `behaviours` maps every behaviour of the
/// release table (`model::version::CHANGES`) to whether this release has it, so a rule asks
/// `input.argocd.behaviours.pre_delete_hooks` instead of comparing numbers; `engine` names the
/// sync engine. For facts outside the table: `release` is `major * 100 + minor` (3.2 is 302);
/// `patch` is the given patch release, or 99 when only `major.minor` was given (the latest
/// patch of that minor); `number` is `major * 10000 + minor * 100 + patch`, for bugs fixed in a
/// patch release: `input.argocd.number < 20603` means "before 2.6.3".
pub fn argocd_input(v: ArgoCdVersion, config: &ArgoCdConfig) -> Value {
    let patch = v.patch.unwrap_or(99);
    json!({
        "version": v.to_string(),
        "major": v.major,
        "minor": v.minor,
        "patch": patch,
        "release": v.major * 100 + v.minor,
        "number": v.major * 10000 + v.minor * 100 + patch,
        "engine": v.engine(),
        "behaviours": behaviours_input(v),
        "config": config.to_value(),
    })
}

/// The server URL of an Application's destination cluster: `server`, or the in-cluster URL for
/// the default `in-cluster` name; `None` for another name (its URL is in a cluster Secret).
fn destination_server(app: &Application) -> Option<&str> {
    let d = &app.destination;
    if !d.server.is_empty() {
        Some(d.server.as_str())
    } else if d.name == "in-cluster" {
        Some("https://kubernetes.default.svc")
    } else {
        None
    }
}

/// `{name: bool}` for every behaviour of the release table.
fn behaviours_input(v: ArgoCdVersion) -> Value {
    let set = v.behaviours();
    Value::Object(
        Behaviour::all()
            .map(|b| (b.name(), Value::Bool(set.has(b))))
            .collect(),
    )
}

/// `options` with the `argocd-cm` and `AppProject` objects of `resources` added to its Argo CD
/// configuration (borrowed unchanged when there are none).
pub fn with_input_config<'o>(
    options: &'o EvaluateOptions,
    resources: &[Resource],
) -> Cow<'o, EvaluateOptions> {
    let found = ArgoCdConfig::from_resources(resources, ConfigSource::Input);
    if !found.is_known() {
        return Cow::Borrowed(options);
    }
    let mut config = (*options.argocd_config).clone();
    config.merge(found);
    Cow::Owned(EvaluateOptions {
        argocd_config: Arc::new(config),
        ..options.clone()
    })
}

/// One Application's slice of the input, with everything computed about it.
struct AppView<'a> {
    name: Option<String>,
    application: Option<Application>,
    /// Indexes into the caller's slice, in input order.
    members: Vec<usize>,
    /// The member objects as one contiguous slice (borrowed when the app is the whole input).
    objects: Cow<'a, [Resource]>,
    facts: Vec<SyncFacts>,
    /// The namespace Argo CD fills into members without one (and references resolve in).
    destination: String,
    plan: Plan,
    /// Per member (local index): its tasks as `input.plan.tasks` entries.
    tasks: Vec<Vec<Value>>,
    /// Per member: resolved references.
    refs: Vec<Vec<(Reference, Resolution)>>,
    /// PostSync hook tasks in the plan (`input.plan.postsync_hooks`), counted once.
    postsync_hooks: usize,
    /// `input.plan.tracked`: members Argo CD compares (applied in Sync, not hooks).
    tracked: usize,
    /// Image tags the tracked members' pods use, with how many members use each (for
    /// `input.plan.image_tag_shared`).
    tracked_image_tags: BTreeMap<String, usize>,
    /// Reverse references, built on first use (see [`AppView::dependents_index`]).
    dependents: OnceLock<HashMap<usize, Vec<(usize, usize)>>>,
    /// The members indexed for resolving an admitted object's references, built on first use
    /// (see [`AppView::member_index`]).
    member_index: OnceLock<OwnedResourceIndex>,
    /// Members that may write a Secret or ConfigMap at run time, built on first use (see
    /// [`AppView::written_by`]).
    writers: OnceLock<Writers>,
    /// Missing targets → the hooks that need them, earliest first, built on first use (see
    /// [`AppView::needed_first_by`]).
    missing_needers: OnceLock<HashMap<MissingKey, Vec<usize>>>,
    /// Members that share their identity with another member (`input.collisions`): local index
    /// → the others.
    collisions: HashMap<usize, Vec<usize>>,
    /// The CRDs among the members, whose schemas custom resources are validated against.
    crds: CrdIndex,
    /// Ownership facts of members (`input.ownership`): local index → the facts.
    ownership: HashMap<usize, Map<String, Value>>,
    /// What the waits of the members are judged against (`input.waits`).
    needs: NeedsIndex,
    /// The other Applications of the input, for references the members leave unresolved.
    elsewhere: Option<Arc<Elsewhere>>,
}

/// Evaluates every object against the policies and returns the report. `errors` are input
/// problems found earlier (e.g. load errors); they are carried into the report unchanged.
pub fn evaluate(
    resources: &[Resource],
    policies: &PolicySet,
    options: &EvaluateOptions,
    errors: Vec<String>,
) -> Report {
    // Each document is evaluated as soon as it is built, on the same core, and dropped: the
    // documents of a large set are never all alive at once.
    let (outcomes, apps) = map_inputs(resources, options, None, |doc| policies.evaluate(&doc));
    let mut findings: Vec<Finding> = Vec::new();
    for (i, (resource, outcome)) in resources.iter().zip(outcomes).enumerate() {
        let application = apps.get(i).cloned().flatten();
        for mut f in policies.findings_from(resource, outcome.unwrap_or_default()) {
            f.application.clone_from(&application);
            findings.push(f);
        }
    }
    Report::new(group_causes(findings), errors).with_objects(resources.len())
}

/// Builds the policy input document of every object (same order as `resources`), plus each
/// object's owning Application name.
pub fn build_inputs(
    resources: &[Resource],
    options: &EvaluateOptions,
) -> (Vec<Value>, Vec<Option<String>>) {
    build_inputs_for(resources, options, None)
}

/// [`build_inputs`], restricted to the object at `only` when given: the other slots stay
/// `Null` and only the owning Application's view is built. The admission path needs one
/// document out of its app's whole set; building all of them would cost O(app) per request.
fn build_inputs_for(
    resources: &[Resource],
    options: &EvaluateOptions,
    only: Option<usize>,
) -> (Vec<Value>, Vec<Option<String>>) {
    let (docs, apps) = map_inputs(resources, options, only, |doc| doc);
    (
        docs.into_iter().map(Option::unwrap_or_default).collect(),
        apps,
    )
}

/// Builds the input document of every object (only of `only`, when given) and passes it to
/// `f`, on every core; returns what `f` made of each (`None` for objects not built) and each
/// object's owning Application name.
fn map_inputs<T: Send>(
    resources: &[Resource],
    options: &EvaluateOptions,
    only: Option<usize>,
    f: impl Fn(Value) -> T + Sync,
) -> (Vec<Option<T>>, Vec<Option<String>>) {
    let all_facts: Vec<SyncFacts> = if only.is_some() {
        resources.iter().map(SyncFacts::of).collect()
    } else {
        resources.par_iter().map(SyncFacts::of).collect()
    };
    let options = &with_input_config(options, resources);
    // Admitted objects and their set come from the cluster and carry what Argo CD wrote on
    // them; rendered manifests (and the audit, whose configuration is read from the cluster)
    // follow the tracking method in force.
    let membership = match options.source {
        Source::Admission => Membership::live(),
        Source::Check | Source::Audit => options.argocd_config.membership(options.argocd),
    };
    let groups = group_by_app(resources, &all_facts, &membership);
    let whole = groups.len() == 1;
    let mut ownership: HashMap<usize, Map<String, Value>> = HashMap::new();
    let mut add = |facts: HashMap<usize, Vec<String>>, key: &str| {
        for (i, apps) in facts {
            ownership
                .entry(i)
                .or_default()
                .insert(key.into(), json!(apps));
        }
    };
    // A whole input tells each conflict between Applications once; admission judges one
    // object, which must carry it.
    let tell = if only.is_some() {
        Tell::EachCopy
    } else {
        Tell::Once
    };
    if !whole {
        let default_namespace = options
            .destination_namespace
            .clone()
            .or_else(|| inferred_destination(resources))
            .unwrap_or_else(|| "default".to_string());
        add(
            shared_claims(resources, &groups, &default_namespace, tell),
            "also_rendered_by",
        );
        add(
            namespace_guests(resources, &groups, &default_namespace),
            "namespace_hosts",
        );
    }
    add(same_source(resources, tell), "same_source_as");
    let mut outputs: Vec<Option<T>> = std::iter::repeat_with(|| None)
        .take(resources.len())
        .collect();
    let mut app_names: Vec<Option<String>> = vec![None; resources.len()];
    // Admission judges one object against its own Application's set only.
    let elsewhere = match only {
        None => Elsewhere::of(
            resources,
            &groups,
            &all_facts,
            options
                .argocd_config
                .has_custom_health("argoproj.io", "Application"),
        )
        .map(Arc::new),
        Some(_) => None,
    };
    let mut facts_by_index: Vec<Option<SyncFacts>> = all_facts.into_iter().map(Some).collect();
    let governed = governed_facts(resources, &groups, only, options);

    for group in groups {
        if only.is_some_and(|i| !group.members.contains(&i)) {
            continue;
        }
        let objects: Cow<'_, [Resource]> = if whole {
            Cow::Borrowed(resources)
        } else {
            Cow::Owned(
                group
                    .members
                    .iter()
                    .filter_map(|&i| resources.get(i).cloned())
                    .collect(),
            )
        };
        let facts: Vec<SyncFacts> = group
            .members
            .iter()
            // Every object belongs to exactly one group, so each fact is taken once.
            .filter_map(|&i| facts_by_index.get_mut(i).and_then(Option::take))
            .collect();
        let mut view = AppView::build(
            group.name,
            group.application,
            group.members,
            objects,
            facts,
            options,
        );
        for (local, global) in view.members.iter().enumerate() {
            if let Some(facts) = ownership.remove(global) {
                view.ownership.insert(local, facts);
            }
        }
        view.elsewhere.clone_from(&elsewhere);
        view.dependents_index();
        let made: Vec<(usize, T)> = match only {
            // One document (admission): build it on this thread. Handing a single item to
            // rayon would still cost a round trip through its pool (a cross-thread wake-up
            // per request).
            Some(i) => view
                .members
                .iter()
                .position(|&global| global == i)
                .map(|local| {
                    (
                        i,
                        f(with_governed(view.input_for(local, options), &governed, i)),
                    )
                })
                .into_iter()
                .collect(),
            // The documents are independent: build (and use) them on every core.
            None => view
                .members
                .par_iter()
                .enumerate()
                .map(|(local, &global)| {
                    let doc = view.input_for(local, options);
                    (global, f(with_governed(doc, &governed, global)))
                })
                .collect(),
        };
        for (global, out) in made {
            if let Some(slot) = outputs.get_mut(global) {
                *slot = Some(out);
            }
        }
        for &global in &view.members {
            if let Some(slot) = app_names.get_mut(global) {
                slot.clone_from(&view.name);
            }
        }
    }
    (outputs, app_names)
}

/// `input.governed` of every Application object of the input whose own objects are in it too
/// (only of `only`, when given), by index.
fn governed_facts(
    resources: &[Resource],
    groups: &[AppGroup],
    only: Option<usize>,
    options: &EvaluateOptions,
) -> HashMap<usize, Value> {
    let mut out = HashMap::new();
    for (j, r) in resources.iter().enumerate() {
        if only.is_some_and(|i| i != j) || !is_application(r) {
            continue;
        }
        let namespace = r.namespace.as_deref().unwrap_or_default();
        let Some((app, group)) = groups.iter().find_map(|g| {
            g.application
                .as_ref()
                .filter(|a| a.name == r.name && a.namespace == namespace)
                .map(|a| (a, g))
        }) else {
            continue;
        };
        let members: Vec<&Resource> = group
            .members
            .iter()
            .filter(|&&i| i != j)
            .filter_map(|&i| resources.get(i))
            .collect();
        if members.is_empty() {
            continue;
        }
        let strategic = options
            .argocd
            .has(Behaviour::RespectIgnoreDifferencesStrategicMerge);
        if let Ok(v) = serde_json::to_value(governed(app, &members, strategic)) {
            out.insert(j, v);
        }
    }
    out
}

/// `doc` with `input.governed` when the object at `global` has it.
fn with_governed(mut doc: Value, governed: &HashMap<usize, Value>, global: usize) -> Value {
    if let (Some(g), Value::Object(map)) = (governed.get(&global), &mut doc) {
        map.insert("governed".into(), g.clone());
    }
    doc
}

impl<'a> AppView<'a> {
    fn build(
        name: Option<String>,
        application: Option<Application>,
        members: Vec<usize>,
        objects: Cow<'a, [Resource]>,
        facts: Vec<SyncFacts>,
        options: &EvaluateOptions,
    ) -> Self {
        let destination_namespace = application
            .as_ref()
            .map(|a| a.destination_namespace.clone())
            .filter(|n| !n.is_empty())
            .or_else(|| options.destination_namespace.clone())
            // A render with no Application: the namespace it was rendered for.
            .or_else(|| inferred_destination(&objects))
            .unwrap_or_else(|| "default".to_string());
        let settings = AppSettings::of_application(
            application.as_ref(),
            &destination_namespace,
            options.argocd.behaviours(),
        );
        let mut input = PlanInput::new(&objects, &[], settings);
        input.cluster_apis = if options.require_crds {
            ClusterApis::builtin_only()
        } else {
            ClusterApis::assume_all()
        };
        let plan = plan(&input);
        let tasks = task_entries(&plan, objects.len());
        let refs = resolve_all(&objects, Some(&destination_namespace));
        let postsync_hooks = plan
            .tasks()
            .filter(|t| t.is_hook && t.phase == SyncPhase::PostSync)
            .count();
        let collisions = collisions(&objects, &destination_namespace);
        let crds = CrdIndex::of(&objects);
        let needs = {
            let mut steps: Vec<Option<usize>> = vec![None; objects.len()];
            for (n, step) in plan.steps.iter().enumerate() {
                for task in &step.tasks {
                    if let TaskSource::Target { index } = task.source
                        && let Some(slot) = steps.get_mut(index)
                    {
                        slot.get_or_insert(n);
                    }
                }
            }
            NeedsIndex::of(&objects, &steps)
        };
        let mut tracked = 0;
        let mut tags: BTreeMap<String, usize> = BTreeMap::new();
        for (o, f) in objects.iter().zip(&facts) {
            if is_tracked(f) {
                tracked += 1;
                for tag in image_tags(&o.raw) {
                    *tags.entry(tag).or_default() += 1;
                }
            }
        }
        Self {
            name,
            application,
            members,
            objects,
            facts,
            destination: destination_namespace,
            plan,
            tasks,
            refs,
            postsync_hooks,
            dependents: OnceLock::new(),
            member_index: OnceLock::new(),
            writers: OnceLock::new(),
            missing_needers: OnceLock::new(),
            collisions,
            crds,
            ownership: HashMap::new(),
            needs,
            elsewhere: None,
            tracked,
            tracked_image_tags: tags,
        }
    }

    /// The input document of member `i` (local index).
    fn input_for(&self, i: usize, options: &EvaluateOptions) -> Value {
        let (Some(resource), Some(facts), Some(refs)) =
            (self.objects.get(i), self.facts.get(i), self.refs.get(i))
        else {
            return Value::Null;
        };
        let me = Member {
            i,
            resource,
            facts,
            tasks: self.tasks.get(i).map_or(&[][..], Vec::as_slice),
        };
        self.document(
            me,
            refs,
            self.postsync_hooks,
            self.dependents_of(i),
            options,
        )
    }

    /// The input document of `me`: a member, or an object judged in a member's slot or in a
    /// new slot after the members (the admission fast paths, [`admission::PreparedSet`]), with
    /// its references resolved, the plan's PostSync hook count and its dependents as they are
    /// with `me` in the set.
    fn document(
        &self,
        me: Member<'_>,
        refs: &[(Reference, Resolution)],
        postsync_hooks: usize,
        dependents: Vec<Value>,
        options: &EvaluateOptions,
    ) -> Value {
        let (tracked, shared) = self.tracked_with(&me);
        let mut doc = Map::new();
        if !options.omit_resource {
            doc.insert("resource".into(), me.resource.raw.clone());
        }
        doc.insert("operation".into(), Value::from(options.source.operation()));
        doc.insert(
            "sync".into(),
            serde_json::to_value(me.facts).unwrap_or(Value::Null),
        );
        doc.insert(
            "plan".into(),
            json!({
                "tasks": me.tasks,
                "steps": self.plan.steps.len(),
                "postsync_hooks": postsync_hooks,
                "tracked": tracked,
                "image_tag_shared": shared,
            }),
        );
        let refs: Vec<Value> = refs
            .iter()
            .map(|(r, res)| self.reference_entry(&me, r, res, options))
            .collect();
        doc.insert("refs".into(), Value::Array(refs));
        doc.insert("dependents".into(), Value::Array(dependents));
        doc.insert("collisions".into(), Value::Array(self.collisions_of(&me)));
        // Certificate material a Secret or ConfigMap carries (`input.generated`): made anew on
        // every render when a chart generates it (`model::generated`). Only when there is some.
        let generated = certificate_material(&me.resource.kind, &me.resource.raw);
        if !generated.is_empty() {
            doc.insert("generated".into(), json!(generated));
        }
        // What a client-side apply would store: only rendered manifests are about to be applied
        // (an admitted object already carries what its client wrote, a live one was applied), so
        // admission and the audit do not serialise every object for it.
        if options.source == Source::Check {
            doc.insert(
                "apply".into(),
                json!(ApplySize::of(&me.resource.raw, self.name.as_deref())),
            );
        }
        if let Some(facts) = self.ownership.get(&me.i) {
            doc.insert("ownership".into(), Value::Object(facts.clone()));
        }
        let mut validity = validity::assess(me.resource, &self.crds, &self.objects);
        // Only rendered manifests are judged for refusals (SG401); an admitted object has
        // passed the API server already, so the webhook skips the walk.
        if options.source == Source::Check {
            validity.add_required(me.resource);
        }
        let items = &me.facts.sync_options.items;
        let app_ssa = self.application.as_ref().is_some_and(|a| {
            a.sync_options
                .items
                .iter()
                .any(|o| o == "ServerSideApply=true")
        });
        let mode = ApplyMode {
            server_side: items.iter().any(|o| o == "ServerSideApply=true")
                || (app_ssa && !items.iter().any(|o| o == "ServerSideApply=false")),
        };
        let mut predicted = diff::predict(me.resource, &validity, mode);
        if let Some(stored) = self
            .members
            .get(me.i)
            .and_then(|global| options.stored.get(global))
        {
            // Argo CD decodes a built-in object into its Go type unless the manifest has a
            // field the type lacks; then it compares it as written.
            let typed = matches!(validity.evidence, validity::Evidence::Kubernetes { .. })
                && !validity
                    .violations
                    .iter()
                    .any(|v| v.kind == validity::ViolationKind::UnknownField);
            for d in diff::stored::differences(
                &me.resource.raw,
                stored,
                typed,
                "server-side dry-run: the form the API server and its admission webhooks would store",
            ) {
                // What the offline model already explains (a dropped field and what is below
                // it) is not said twice.
                let explained = predicted.iter().any(|p| {
                    d.pointer == p.pointer || d.pointer.starts_with(&format!("{}/", p.pointer))
                });
                if !explained {
                    predicted.push(d);
                }
            }
        }
        if !predicted.is_empty() {
            doc.insert("diff".into(), json!({ "predicted": predicted }));
        }
        if let Some(verdict) = self
            .members
            .get(me.i)
            .and_then(|global| options.verdicts.by_index.get(global))
        {
            validity::server::judge(&mut validity, verdict, &options.verdicts.version);
        } else if let Some(refusals) = self
            .members
            .get(me.i)
            .and_then(|global| options.refused_changes.get(global))
        {
            validity.violations.extend(refusals.iter().map(|r| validity::Violation {
                pointer: r.pointer.clone(),
                kind: validity::ViolationKind::Immutable,
                message: format!(
                    "{} (the offline table of Kubernetes {} immutable fields, docs/immutable-fields.md; --ephemeral-cluster asks a real API server)",
                    r.message,
                    crate::model::immutable::KUBERNETES
                ),
            }));
        }
        // Most objects are valid and wait for nothing special: their documents carry neither
        // fact (the rules read an absent one as empty), which keeps 10k-object checks cheap.
        if !validity.violations.is_empty() {
            doc.insert("validity".into(), json!(validity));
        }
        let step = me
            .tasks
            .iter()
            .filter_map(|t| t["step"].as_u64())
            .min()
            .and_then(|s| usize::try_from(s).ok());
        let custom = options
            .argocd_config
            .has_custom_health(&me.resource.group, &me.resource.kind);
        let wait = waits::assess(&self.needs, me.resource, step, custom);
        if !wait.parks.is_empty() || !wait.needs.is_empty() || wait.binds.is_some() {
            doc.insert("waits".into(), json!(wait));
        }
        doc.insert(
            "has_template".into(),
            Value::Bool(has_template(&me.resource.raw)),
        );
        if let Some(pointers) = own_ignore_differences(me.resource) {
            doc.insert("own_ignore_differences".into(), pointers);
        }
        if let Some(facts) = appset_facts(me.resource) {
            doc.insert("appset".into(), facts);
        }
        if let Some(unknown) = unknown_sync_options(me.resource, me.facts) {
            doc.insert("unknown_sync_options".into(), unknown);
        }
        doc.insert(
            "health_check".into(),
            json!(health_check_name(
                &options.argocd_config,
                &me.resource.group,
                &me.resource.kind
            )),
        );
        if let Some(app) = &self.application
            && !(me.resource.kind == "Application" && me.resource.name == app.name)
            && let Some(excluded) = options.argocd_config.excluded_by(
                &me.resource.group,
                &me.resource.kind,
                destination_server(app),
            )
        {
            doc.insert("excluded_by".into(), excluded);
        }
        if let Some(app) = &self.application
            && let Ok(v) = serde_json::to_value(app)
        {
            doc.insert("app".into(), v);
        }
        if let Some(p) = project::project_input(me.resource, &options.argocd_config, options.argocd)
        {
            doc.insert("project".into(), p);
        }
        doc.insert(
            "context".into(),
            json!({
                "source": options.source.context(),
                "dry_run": false,
                "complete": options.complete,
                "require_crds": options.require_crds,
                "repository": options.repository || self.elsewhere.is_some(),
            }),
        );
        doc.insert(
            "argocd".into(),
            argocd_input(options.argocd, &options.argocd_config),
        );
        Value::Object(doc)
    }

    /// One `input.refs[]` entry of `me`: the reference plus its resolved `target`.
    fn reference_entry(
        &self,
        me: &Member<'_>,
        reference: &Reference,
        resolution: &Resolution,
        options: &EvaluateOptions,
    ) -> Value {
        let mut entry = serde_json::to_value(reference).unwrap_or(Value::Null);
        let target = match resolution {
            Resolution::InSet { index } => self.target_facts(me, *index, "in_set", false, options),
            Resolution::ProducedBy { index } => {
                let async_producer = self
                    .member(me, *index)
                    .is_some_and(|(p, _, _)| produces(p).iter().any(|p| p.async_producer));
                self.target_facts(me, *index, "produced_by", async_producer, options)
            }
            Resolution::Builtin => json!({"resolution": "builtin"}),
            Resolution::Missing => self
                .elsewhere
                .as_ref()
                .and_then(|e| e.target(self.name.as_deref(), reference))
                .unwrap_or_else(|| {
                    json!({
                        "resolution": "missing",
                        "written_by": self.written_by(me, reference),
                        "needed_first_by": self.needed_first_by(me, reference),
                    })
                }),
        };
        if let Value::Object(map) = &mut entry {
            map.insert("target".into(), target);
        }
        entry
    }

    /// Member `j`, with `me` in its own slot (a self-reference sees the object being judged).
    fn member<'s>(
        &'s self,
        me: &Member<'s>,
        j: usize,
    ) -> Option<(&'s Resource, &'s SyncFacts, &'s [Value])> {
        if j == me.i {
            return Some((me.resource, me.facts, me.tasks));
        }
        Some((
            self.objects.get(j)?,
            self.facts.get(j)?,
            self.tasks.get(j).map_or(&[][..], Vec::as_slice),
        ))
    }

    /// The facts of the object at local index `j` as a reference target of `me`.
    fn target_facts(
        &self,
        me: &Member<'_>,
        j: usize,
        resolution: &str,
        async_producer: bool,
        options: &EvaluateOptions,
    ) -> Value {
        let Some((obj, facts, tasks)) = self.member(me, j) else {
            return json!({"resolution": "missing"});
        };
        let versions = if obj.kind == "CustomResourceDefinition" {
            crd_versions(&obj.raw)
        } else {
            Vec::new()
        };
        json!({
            "resolution": resolution,
            "kind": obj.kind,
            "group": obj.group,
            "name": obj.name,
            "namespace": obj.namespace,
            "phases": facts.phases,
            "wave": facts.wave,
            "is_hook": facts.is_hook,
            "hook_types": facts.hook_types,
            "delete_policies": facts.delete_policies,
            "ignored": facts.ignored,
            "tasks": tasks,
            "async_producer": async_producer,
            "health_check": health_check_name(&options.argocd_config, &obj.group, &obj.kind),
            "replicas_set": obj.raw.pointer("/spec/replicas").is_some_and(|v| !v.is_null()),
            "versions": versions,
        })
    }

    /// `input.plan.tracked` and `input.plan.image_tag_shared` with `me` in its slot: a member
    /// as computed with the view; an admitted object replaces its member's share, or adds its
    /// own. O(own images) per document: the tags themselves never go into the documents.
    fn tracked_with(&self, me: &Member<'_>) -> (usize, bool) {
        let member = self.objects.get(me.i).zip(self.facts.get(me.i));
        let same = member.is_some_and(|(obj, _)| std::ptr::eq(obj, me.resource));
        let mut tracked = self.tracked;
        // Tags the slot's member contributes to the counts: not "another" object's.
        let mut minus: Vec<String> = Vec::new();
        if let Some((obj, facts)) = member
            && is_tracked(facts)
        {
            minus = image_tags(&obj.raw);
            if !same {
                tracked -= 1;
            }
        }
        if !same && is_tracked(me.facts) {
            tracked += 1;
        }
        let shared = image_tags(&me.resource.raw).iter().any(|tag| {
            let all = self.tracked_image_tags.get(tag).copied().unwrap_or(0);
            all > minus.iter().filter(|t| *t == tag).count()
        });
        (tracked, shared)
    }

    /// `input.collisions` of `me`: the other members Argo CD gives the same identity. A member
    /// reads the index built with the view; an admitted object in a new slot is compared with
    /// every member (one request, one pass).
    fn collisions_of(&self, me: &Member<'_>) -> Vec<Value> {
        let others: Vec<usize> = if me.i < self.objects.len() {
            self.collisions.get(&me.i).cloned().unwrap_or_default()
        } else {
            let key = identity(me.resource, &self.destination);
            self.objects
                .iter()
                .enumerate()
                .filter(|(_, o)| identity(o, &self.destination) == key)
                .map(|(j, _)| j)
                .collect()
        };
        others
            .into_iter()
            .filter_map(|j| {
                let obj = self.objects.get(j)?;
                let facts = self.facts.get(j)?;
                let location = obj
                    .locate("")
                    .map(|l| format!("{}:{}", l.file, l.line))
                    .unwrap_or_default();
                Some(json!({
                    "kind": obj.kind,
                    "group": obj.group,
                    "namespace": effective_namespace(obj, &self.destination),
                    "name": obj.name,
                    "generate_name": obj.generate_name.as_deref().unwrap_or_default(),
                    "is_hook": facts.is_hook,
                    "phases": facts.phases,
                    "hook_types": facts.hook_types,
                    "wave": facts.wave,
                    "location": location,
                }))
            })
            .collect()
    }

    /// `input.dependents` of local index `i`: every object whose references resolve to it.
    fn dependents_of(&self, i: usize) -> Vec<Value> {
        self.dependents_index()
            .get(&i)
            .map(|deps| {
                deps.iter()
                    .filter_map(|&(j, k)| self.dependent_entry(j, k))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// One `input.dependents[]` entry: member `j`, through its reference `k`.
    fn dependent_entry(&self, j: usize, k: usize) -> Option<Value> {
        let obj = self.objects.get(j)?;
        let facts = self.facts.get(j)?;
        let (reference, _) = self.refs.get(j)?.get(k)?;
        Some(json!({
            "kind": obj.kind,
            "group": obj.group,
            "name": obj.name,
            "namespace": obj.namespace,
            "role": reference.role,
            "via": reference.via,
            "is_hook": facts.is_hook,
            "phases": facts.phases,
            "wave": facts.wave,
        }))
    }

    /// target local index → [(dependant local index, reference index)]. Built lazily once.
    /// The members indexed under the view's destination: what an admitted object's references
    /// resolve against. Built once per view, so an admission request costs the same whatever
    /// the size of its Application.
    fn member_index(&self) -> &OwnedResourceIndex {
        self.member_index
            .get_or_init(|| OwnedResourceIndex::build(&self.objects, Some(&self.destination)))
    }

    /// `input.refs[].target.written_by` of a missing Secret or ConfigMap: the other members
    /// whose ServiceAccount the members' RBAC lets write it at run time (`model::writers`),
    /// each with its tasks, so a rule can tell whether it runs first. What they write is an
    /// assumption; rules say so.
    fn written_by(&self, me: &Member<'_>, reference: &Reference) -> Vec<Value> {
        let writers = self
            .writers
            .get_or_init(|| Writers::of(&self.objects, &self.destination));
        let namespace = reference.namespace.as_deref().unwrap_or(&self.destination);
        writers
            .of_object(&reference.kind, namespace, &reference.name)
            .into_iter()
            .filter(|&j| j != me.i)
            .filter_map(|j| self.member(me, j))
            .map(|(obj, facts, tasks)| {
                json!({"kind": obj.kind, "name": obj.name, "is_hook": facts.is_hook, "tasks": tasks})
            })
            .collect()
    }

    /// `input.refs[].target.needed_first_by` of a missing target: of the other members that
    /// need the same missing object (non-optional references), the hook whose first step is the
    /// earliest, when it is earlier than `me`'s, with its kind, name and tasks — so that one
    /// cause is reported once, on the hook that needs it first. One entry at most: a missing
    /// object thousands of objects need must not make every document list them all.
    fn needed_first_by(&self, me: &Member<'_>, reference: &Reference) -> Vec<Value> {
        let index = self.missing_needers.get_or_init(|| {
            let mut map: HashMap<MissingKey, Vec<usize>> = HashMap::new();
            for (j, refs) in self.refs.iter().enumerate() {
                if !self.facts.get(j).is_some_and(|f| f.is_hook) {
                    continue;
                }
                for (r, res) in refs {
                    if *res == Resolution::Missing && !r.optional {
                        let list = map.entry(self.missing_key(r)).or_default();
                        if list.last() != Some(&j) {
                            list.push(j);
                        }
                    }
                }
            }
            // Earliest first step first: the head of each list is the hook that needs it first.
            for list in map.values_mut() {
                list.sort_by_key(|&j| first_step(self.tasks.get(j).map_or(&[][..], Vec::as_slice)));
            }
            map
        });
        let mine = first_step(me.tasks);
        index
            .get(&self.missing_key(reference))
            .into_iter()
            .flatten()
            .find(|&&j| j != me.i)
            .filter(|&&j| {
                first_step(self.tasks.get(j).map_or(&[][..], Vec::as_slice)) < mine
            })
            .and_then(|&j| self.member(me, j))
            .map(|(obj, facts, tasks)| {
                json!({"kind": obj.kind, "name": obj.name, "is_hook": facts.is_hook, "tasks": tasks})
            })
            .into_iter()
            .collect()
    }

    fn missing_key(&self, r: &Reference) -> MissingKey {
        (
            r.group.clone(),
            r.kind.clone(),
            r.namespace
                .clone()
                .unwrap_or_else(|| self.destination.clone()),
            r.name.clone(),
        )
    }

    fn dependents_index(&self) -> &HashMap<usize, Vec<(usize, usize)>> {
        self.dependents.get_or_init(|| {
            let mut map: HashMap<usize, Vec<(usize, usize)>> = HashMap::new();
            for (j, rs) in self.refs.iter().enumerate() {
                for (k, (_, res)) in rs.iter().enumerate() {
                    if let Resolution::InSet { index } | Resolution::ProducedBy { index } = res
                        && *index != j
                    {
                        map.entry(*index).or_default().push((j, k));
                    }
                }
            }
            map
        })
    }
}

/// A missing reference target: group, kind, effective namespace, name.
type MissingKey = (String, String, String, String);

/// The first step of a member's `input.plan.tasks` (`u64::MAX` when it has none).
fn first_step(tasks: &[Value]) -> u64 {
    tasks
        .iter()
        .filter_map(|t| t.get("step").and_then(Value::as_u64))
        .min()
        .unwrap_or(u64::MAX)
}

/// The object a document is built for: member `i` of a view, or an admitted object in slot `i`
/// (a member's, or the first one after the members), with its `input.plan.tasks`.
#[derive(Clone, Copy)]
struct Member<'r> {
    i: usize,
    resource: &'r Resource,
    facts: &'r SyncFacts,
    tasks: &'r [Value],
}

/// The namespace Argo CD puts an object in: none for a cluster-scoped built-in kind, else its
/// own or the destination.
fn effective_namespace<'a>(obj: &'a Resource, destination: &'a str) -> &'a str {
    if is_cluster_scoped(&obj.group, &obj.kind) {
        ""
    } else {
        obj.namespace.as_deref().unwrap_or(destination)
    }
}

/// What makes two objects the same one to Argo CD: group, kind, namespace, and the name — or,
/// for objects without one, the `generateName` (Argo CD names such hooks from it, the revision,
/// the phase and the sync's start, so equal prefixes collide within a phase).
fn identity<'a>(
    obj: &'a Resource,
    destination: &'a str,
) -> (&'a str, &'a str, &'a str, bool, &'a str) {
    let (generated, name) = if obj.name.is_empty() {
        (true, obj.generate_name.as_deref().unwrap_or_default())
    } else {
        (false, obj.name.as_str())
    };
    (
        &obj.group,
        &obj.kind,
        effective_namespace(obj, destination),
        generated,
        name,
    )
}

/// Local index → the other members with the same [`identity`], for members that have any.
fn collisions(objects: &[Resource], destination: &str) -> HashMap<usize, Vec<usize>> {
    let mut by_key: HashMap<_, Vec<usize>> = HashMap::new();
    for (i, obj) in objects.iter().enumerate() {
        by_key
            .entry(identity(obj, destination))
            .or_default()
            .push(i);
    }
    let mut out = HashMap::new();
    for members in by_key.into_values().filter(|m| m.len() > 1) {
        for &i in &members {
            out.insert(i, members.iter().copied().filter(|&j| j != i).collect());
        }
    }
    out
}

/// The annotation with which a resource asks Argo CD (3.6 and later) to leave fields out of its
/// own diff: YAML with a `jsonPointers` list.
pub const IGNORE_DIFFERENCES_ANNOTATION: &str = "argocd.argoproj.io/ignore-differences";

/// `input.own_ignore_differences`: the JSON pointers of the object's
/// [`IGNORE_DIFFERENCES_ANNOTATION`], when it has one (an empty list when its value is not YAML
/// with a `jsonPointers` list of strings, which Argo CD ignores as well). Whether the release
/// reads it is the rules' question (`per_resource_ignore_differences`).
pub fn own_ignore_differences(r: &Resource) -> Option<Value> {
    let text = r.annotation(IGNORE_DIFFERENCES_ANNOTATION)?;
    let pointers: Vec<Value> = crate::manifest::parse_yaml_value(text)
        .ok()
        .and_then(|v| v.get("jsonPointers").and_then(Value::as_array).cloned())
        .unwrap_or_default()
        .into_iter()
        .filter(Value::is_string)
        .collect();
    Some(Value::Array(pointers))
}

/// `input.appset`: for an ApplicationSet, what its templates and generators are (the template
/// engine, the parameters the templates read and those each generator gives, the tags written
/// for the other engine, the templates that do not parse, the generators, and the fields the CRD
/// does not know), read through the shared vocabulary
/// (`syncguard_argocd::config::appset::facts`). SG610 judges them.
pub fn appset_facts(r: &Resource) -> Option<Value> {
    if !(r.group == "argoproj.io" && r.kind == "ApplicationSet") {
        return None;
    }
    let set = syncguard_argocd::config::appset::ApplicationSet::from_value(&r.raw);
    serde_json::to_value(syncguard_argocd::config::appset::facts::of(&set)).ok()
}

/// `input.unknown_sync_options`: the sync options Argo CD does not know and ignores, each with
/// where it is written (`annotation`: the object's `argocd.argoproj.io/sync-options`;
/// `application`: an Application's `spec.syncPolicy.syncOptions`) and the known option it was
/// probably meant as. `None` when there is none (the key is then absent).
pub fn unknown_sync_options(r: &Resource, facts: &SyncFacts) -> Option<Value> {
    let entry = |option: &str, from: &str| {
        json!({
            "option": option,
            "from": from,
            "suggestion": crate::model::argo::closest_sync_option(option),
        })
    };
    let mut out: Vec<Value> = facts
        .sync_options
        .unknown
        .iter()
        .map(|o| entry(o, "annotation"))
        .collect();
    if is_application(r) {
        let app = Application::read(&r.raw);
        out.extend(
            app.sync_options
                .unknown
                .iter()
                .map(|o| entry(o, "application")),
        );
    }
    (!out.is_empty()).then_some(Value::Array(out))
}

/// True when some string of the object holds a template action (`{{` before `}}`): a manifest
/// that was not rendered, or only partly (`input.has_template`). One walk without allocation,
/// so that rules looking for unrendered templates can skip every other object at once.
pub fn has_template(v: &Value) -> bool {
    match v {
        Value::String(s) => s
            .find("{{")
            .is_some_and(|at| s.get(at + 2..).is_some_and(|rest| rest.contains("}}"))),
        Value::Array(items) => items.iter().any(has_template),
        Value::Object(map) => map.values().any(has_template),
        _ => false,
    }
}

/// An object Argo CD compares: applied in the Sync phase, not a hook.
fn is_tracked(facts: &SyncFacts) -> bool {
    !facts.is_hook && facts.phases.contains(&SyncPhase::Sync)
}

/// The tags of the container images in an object's pod spec (Pod, pod template, CronJob job
/// template); digests and untagged images give none.
pub fn image_tags(obj: &Value) -> Vec<String> {
    let specs = [
        obj.get("spec"),
        obj.pointer("/spec/template/spec"),
        obj.pointer("/spec/jobTemplate/spec/template/spec"),
    ];
    let mut out = Vec::new();
    for spec in specs.into_iter().flatten() {
        for list in ["containers", "initContainers"] {
            for c in spec
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let Some(image) = c.get("image").and_then(Value::as_str) else {
                    continue;
                };
                let image = image.split('@').next().unwrap_or(image);
                if let Some((_, tag)) = image.rsplit_once(':')
                    && !tag.contains('/')
                    && !tag.is_empty()
                {
                    out.push(tag.to_string());
                }
            }
        }
    }
    out
}

/// A CRD's versions as `{name, served, storage}` (`spec.versions`, or the legacy single
/// `spec.version`).
fn crd_versions(crd: &Value) -> Vec<Value> {
    if let Some(versions) = crd.pointer("/spec/versions").and_then(Value::as_array) {
        return versions
            .iter()
            .filter_map(|v| {
                Some(json!({
                    "name": v.get("name")?.as_str()?,
                    "served": v.get("served").and_then(Value::as_bool).unwrap_or(false),
                    "storage": v.get("storage").and_then(Value::as_bool).unwrap_or(false),
                }))
            })
            .collect();
    }
    crd.pointer("/spec/version")
        .and_then(Value::as_str)
        .map(|name| vec![json!({"name": name, "served": true, "storage": true})])
        .unwrap_or_default()
}

/// `input.plan.tasks` entries for every target (by index into the planned objects).
fn task_entries(plan: &Plan, objects: usize) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = vec![Vec::new(); objects];
    let steps = plan.steps.iter().enumerate();
    let sync_fail = plan.sync_fail.iter().map(|s| (plan.steps.len(), s));
    for (n, step) in steps.chain(sync_fail) {
        for task in &step.tasks {
            if let TaskSource::Target { index } = task.source
                && let Some(slot) = out.get_mut(index)
            {
                slot.push(json!({
                    "phase": task.phase,
                    "wave": task.wave,
                    "step": n,
                    "gated": step.health_gated && !step.conditional,
                    "final": step.is_final,
                }));
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests may unwrap (rust-notes §5.5 rule 4)
mod own_ignore_differences_tests {
    use super::*;

    fn with(annotation: Option<&str>) -> Resource {
        let mut raw = json!({"apiVersion": "apps/v1", "kind": "Deployment",
                             "metadata": {"name": "web", "namespace": "shop"}});
        if let Some(a) = annotation {
            raw["metadata"]["annotations"] = json!({ IGNORE_DIFFERENCES_ANNOTATION: a });
        }
        Resource::from_value(raw, None).expect("a resource")
    }

    #[test]
    fn the_annotation_gives_its_json_pointers_in_block_flow_or_json_form() {
        assert_eq!(own_ignore_differences(&with(None)), None);
        for text in [
            "jsonPointers:\n- /spec/replicas\n- /spec/template/metadata/annotations\n",
            "{jsonPointers: [/spec/replicas, /spec/template/metadata/annotations]}",
            r#"{"jsonPointers": ["/spec/replicas", "/spec/template/metadata/annotations"]}"#,
        ] {
            assert_eq!(
                own_ignore_differences(&with(Some(text))),
                Some(json!([
                    "/spec/replicas",
                    "/spec/template/metadata/annotations"
                ])),
                "{text}"
            );
        }
        // Not YAML, no jsonPointers, or entries that are not strings: nothing ignored.
        for text in [
            "jsonPointers: [",
            "jqPathExpressions: [.spec]",
            "jsonPointers: [3]",
        ] {
            assert_eq!(
                own_ignore_differences(&with(Some(text))),
                Some(json!([])),
                "{text}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_template_action_is_found_anywhere_in_the_object_and_only_when_closed() {
        let raw = json!({"data": {"a": "x", "b": ["{{ randAlphaNum 8 }}"]}});
        assert!(has_template(&raw));
        assert!(!has_template(
            &json!({"data": {"a": "}} then {{", "b": "{{ open"}})
        ));
        assert!(!has_template(&json!({"spec": {"replicas": 3}})));
    }

    #[test]
    fn image_tags_come_from_every_pod_spec_shape() {
        let deployment = json!({"spec": {"template": {"spec": {
            "initContainers": [{"image": "registry:5000/tools/migrate:1.4.2"}],
            "containers": [{"image": "api:1.4.2@sha256:abc"}, {"image": "registry:5000/untagged"},
                           {"image": "plain"}]}}}});
        assert_eq!(image_tags(&deployment), ["1.4.2", "1.4.2"]);
        let cron = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"image": "report:2024.06"}]}}}}}});
        assert_eq!(image_tags(&cron), ["2024.06"]);
        let pod = json!({"spec": {"containers": [{"image": "curl:8.8.0"}]}});
        assert_eq!(image_tags(&pod), ["8.8.0"]);
    }
}
