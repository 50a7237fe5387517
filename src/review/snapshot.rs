//! One revision of a GitOps repository as `review` sees it: its Applications (read from the
//! committed tree), each one's rendered objects and sync plan, and the findings over them all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::evaluate::{EvaluateOptions, evaluate};
use crate::finding::Report;
use crate::model::Resource;
use crate::plan::{AppSettings, ClusterApis, Plan, PlanInput, plan};
use crate::policy::PolicySet;
use crate::render::{Application, RenderOptions, Repos, as_the_controller_sees, expand};

/// An Application or ApplicationSet as Argo CD knows it: its kind, the namespace it lives in
/// (its `metadata.namespace`, else the control-plane namespace) and its name. Two Applications
/// of one name in two namespaces are two; an ApplicationSet and an Application of one name too.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct AppId {
    /// `Application` or `ApplicationSet`.
    pub kind: &'static str,
    pub namespace: String,
    pub name: String,
}

impl AppId {
    /// An ApplicationSet.
    pub fn application_set(&self) -> bool {
        self.kind == "ApplicationSet"
    }
}

impl std::fmt::Display for AppId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}/{}", self.kind, self.namespace, self.name)
    }
}

/// One Application at one revision.
#[derive(Debug)]
pub struct AppState {
    /// Its instance name (`namespace_name` outside the control-plane namespace), as its
    /// objects' tracking ids and its findings name it.
    pub instance: String,
    /// Where the Application is defined (`file:line`).
    pub origin: Option<String>,
    /// The Application that rendered this one (app-of-apps).
    pub parent: Option<String>,
    /// Its objects as the controller holds them.
    pub objects: Vec<Resource>,
    /// Argo CD's sync plan of those objects.
    pub plan: Plan,
    /// Why sources could not be rendered.
    pub errors: Vec<String>,
    /// Sources not rendered on purpose.
    pub skipped: Vec<String>,
    /// An ApplicationSet: `objects` are the Applications it generates, and nothing is planned.
    pub application_set: bool,
}

/// One revision.
#[derive(Debug)]
pub struct Snapshot {
    /// The commit.
    pub commit: String,
    /// Applications and ApplicationSets by identity.
    pub apps: BTreeMap<AppId, AppState>,
    /// Every finding over the Applications and their objects.
    pub report: Report,
}

/// What a snapshot is taken with.
pub struct SnapshotOptions<'a> {
    /// Files or directories holding the Applications, relative to the checkout.
    pub paths: &'a [PathBuf],
    /// Repositories other than the checkout itself (`--repo`).
    pub other_repos: &'a [(String, PathBuf)],
    /// The checkout's remote URLs (its sources name it by one of them).
    pub remote_urls: &'a [String],
    pub render: &'a RenderOptions,
    pub policies: &'a PolicySet,
    pub evaluate: &'a EvaluateOptions,
}

/// One revision rendered and planned, not yet checked.
#[derive(Debug)]
pub struct Gathered {
    /// The commit.
    pub commit: String,
    /// Applications and ApplicationSets by identity.
    pub apps: BTreeMap<AppId, AppState>,
    /// The Applications and every object they render, as the controller holds them: what the
    /// rules judge.
    pub objects: Vec<Resource>,
    /// What could not be read (files); what an Application could not render is its own
    /// (`AppState::errors`).
    pub errors: Vec<String>,
}

/// Checks a gathered revision with `evaluate` (which may carry an API server's verdicts on
/// its objects, by their index in [`Gathered::objects`]).
pub fn judge(g: Gathered, policies: &PolicySet, evaluate_options: &EvaluateOptions) -> Snapshot {
    let report = evaluate(&g.objects, policies, evaluate_options, g.errors);
    Snapshot {
        commit: g.commit,
        apps: g.apps,
        report,
    }
}

/// Reads, renders and plans the checkout at `dir` (commit `commit`).
pub fn gather(dir: &Path, commit: &str, o: &SnapshotOptions<'_>) -> Gathered {
    let (apps_input, errors) = crate::render::applications_in(dir, o.paths);
    let mut repos = Repos::default();
    for (url, other) in o.other_repos {
        repos.add(
            url,
            other.clone(),
            &crate::git::head(other).unwrap_or_default(),
        );
    }
    for url in o.remote_urls {
        repos.add(url, dir.to_path_buf(), commit);
    }
    // Every Application, also those with no source syncguard can render: each is accounted
    // for, rendered or with the reason it is not.
    let expansion = expand(&apps_input, true, &repos, o.render);
    // Messages name files of the throwaway worktree: as paths of the repository, so that the
    // same problem reads the same on both revisions.
    // The worktree itself too ("is not a directory of /tmp/…/head"): with its temporary name in
    // it, an unchanged Application's reason would differ between the revisions and count as new.
    let top = dir.display().to_string();
    let prefix = format!("{top}/");
    let local = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .map(|l| l.replace(&prefix, "").replace(&top, "the repository"))
            .collect()
    };
    let mut apps = BTreeMap::new();
    for r in &expansion.rendered {
        let spec = apps_input
            .iter()
            .chain(expansion.rendered.iter().flat_map(|x| x.resources.iter()))
            .filter_map(Application::from_resource)
            .find(|s| s.instance_name(&o.render.control_plane_namespace) == r.app);
        let objects: Vec<Resource> = r
            .resources
            .iter()
            .map(|x| as_the_controller_sees(x.clone(), &r.destination_namespace))
            .collect();
        // An ApplicationSet is not synced: its Applications are, each planned on its own.
        let planned: &[Resource] = if r.application_set { &[] } else { &objects };
        let plan = plan_of(planned, spec.as_ref(), &r.destination_namespace, o.evaluate);
        let id = AppId {
            kind: if r.application_set {
                "ApplicationSet"
            } else {
                "Application"
            },
            namespace: r.namespace.clone(),
            name: spec
                .as_ref()
                .filter(|_| !r.application_set)
                .map(|s| s.name.clone())
                .unwrap_or_else(|| r.app.clone()),
        };
        apps.insert(
            id,
            AppState {
                instance: r.app.clone(),
                origin: r.origin.clone(),
                parent: r.parent.clone(),
                objects,
                plan,
                errors: local(&r.errors),
                skipped: local(&r.skipped),
                application_set: r.application_set,
            },
        );
    }
    let mut all = apps_input;
    expansion.attribute(&mut all);
    all.extend(expansion.objects);
    Gathered {
        commit: commit.to_string(),
        apps,
        objects: all,
        errors,
    }
}

/// Argo CD's plan of one Application's objects (a first sync: nothing live).
fn plan_of(
    objects: &[Resource],
    spec: Option<&Application>,
    destination_namespace: &str,
    evaluate: &EvaluateOptions,
) -> Plan {
    let settings =
        AppSettings::of_application(spec, destination_namespace, evaluate.argocd.behaviours());
    let mut input = PlanInput::new(objects, &[], settings);
    input.cluster_apis = ClusterApis::assume_all();
    plan(&input)
}
