//! Application context at admission time: the other objects of the Application that owns the
//! object being admitted.
//!
//! Cross-resource rules (SG2xx: a hook that needs a Secret created later in the sync) cannot be
//! judged from one object. `syncguard check` sees the whole rendered app; the webhook sees one
//! object per request. An [`AppContext`] fills the gap: given the admitted object it returns the
//! objects of its Application, and the pipeline evaluates the object *inside* that set, exactly
//! as `check` would (see [`crate::evaluate::build_admission_input`]). Without context those rules
//! stay silent rather than guess.
//!
//! Two implementations today: [`NoContext`], and [`ManifestContext`] over a directory of
//! rendered manifests (`syncguard serve --app-context DIR`). The reconciler's read-only cache of
//! live Argo CD Applications will be a third; the trait is all the webhook depends on, and it
//! never blocks (a lookup is an in-memory read).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arc_swap::ArcSwap;
use thiserror::Error;

use crate::evaluate::PreparedSet;
use crate::manifest::load_paths;
use crate::model::Resource;
use crate::model::argo::SyncFacts;
use crate::reconciler::install::Installation;

/// The objects of one Application, as known to an [`AppContext`].
#[derive(Debug, Clone)]
pub struct AppObjects {
    /// The Application's name, when the objects carry tracking (`None` for the untracked
    /// objects of one namespace).
    pub app: Option<String>,
    /// The Application's objects, prepared for admission and shared by every request until the
    /// context changes. May include the context's own copy of the admitted object (the pipeline
    /// puts the admitted version in its place) and the `Application` object, whose sync options
    /// and destination the pipeline reads.
    pub set: Arc<PreparedSet>,
}

/// Where the webhook learns which Application an admitted object belongs to, and what else that
/// Application contains.
pub trait AppContext: Send + Sync {
    /// The objects of the Application that owns `object`, or `None` when unknown. Must not block:
    /// it runs on the evaluation thread inside the request deadline; return a shared set, not a
    /// copy (this runs for every admitted object).
    fn objects_for(&self, object: &Resource) -> Option<AppObjects>;

    /// A short description for logs and `--help`-style messages.
    fn describe(&self) -> String;

    /// The Argo CD release and configuration of the cluster, when this context reads them.
    fn installation(&self) -> Option<Arc<Installation>> {
        None
    }
}

/// No context: cross-resource rules stay silent at admission.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoContext;

impl AppContext for NoContext {
    fn objects_for(&self, _object: &Resource) -> Option<AppObjects> {
        None
    }

    fn describe(&self) -> String {
        "none".to_string()
    }
}

/// Why an app-context directory cannot be used.
#[derive(Debug, Error)]
pub enum ContextError {
    /// Nothing could be read from the directory.
    #[error("{}: no Kubernetes objects could be read{}", dir.display(), first_error.as_deref().map(|e| format!(" (first error: {e})")).unwrap_or_default())]
    Empty {
        /// The directory.
        dir: PathBuf,
        /// The first load error, if any.
        first_error: Option<String>,
    },
}

/// Context from rendered manifests on disk (e.g. `helm template` output per Application, synced
/// into a ConfigMap or a volume). Reloadable: [`ManifestContext::reload`] swaps the whole index
/// atomically, so lookups never see half a reload.
///
/// Membership follows Argo CD's tracking: objects with a tracking id or instance label belong to
/// that Application. Untracked objects (plain rendered output) are grouped per namespace, and an
/// untracked admitted object only gets context when the directory contains it (same kind, name
/// or generateName, and namespace): a namespace alone is too weak a link to put unrelated objects
/// side by side.
#[derive(Debug)]
pub struct ManifestContext {
    dir: PathBuf,
    index: ArcSwap<Index>,
}

/// Identity used to find an untracked admitted object in the directory.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Identity {
    group: String,
    kind: String,
    name: String,
}

impl Identity {
    fn of(r: &Resource) -> Self {
        Self {
            group: r.group.clone(),
            kind: r.kind.clone(),
            name: if r.name.is_empty() {
                format!("{}*", r.generate_name.as_deref().unwrap_or_default())
            } else {
                r.name.clone()
            },
        }
    }
}

#[derive(Debug, Default)]
struct Index {
    /// Tracked objects by Application name (plus that Application object when present).
    by_app: HashMap<String, Arc<PreparedSet>>,
    /// Untracked identities → the namespaces they appear in (`None`: no namespace in the file).
    untracked_ids: HashMap<Identity, Vec<Option<String>>>,
    /// The untracked neighbours of an object in namespace `ns`: the untracked objects of `ns`
    /// plus those without a namespace (which Argo CD puts wherever the app goes).
    untracked_by_namespace: HashMap<String, Arc<PreparedSet>>,
    /// Untracked objects without a namespace: the neighbours in any namespace the files do not
    /// name.
    untracked_unnamespaced: Option<Arc<PreparedSet>>,
    /// Every untracked object: the neighbours of an object that has no namespace either.
    untracked_all: Option<Arc<PreparedSet>>,
    objects: usize,
}

impl Index {
    fn build(resources: Vec<Resource>) -> Self {
        let mut index = Index {
            objects: resources.len(),
            ..Index::default()
        };
        let mut applications: Vec<Resource> = Vec::new();
        let mut by_app: HashMap<String, Vec<Resource>> = HashMap::new();
        let mut untracked: Vec<Resource> = Vec::new();
        for r in resources {
            let facts = SyncFacts::of(&r);
            if r.group == "argoproj.io" && r.kind == "Application" {
                applications.push(r.clone());
            }
            match facts.tracking.app_name() {
                Some(app) => by_app.entry(app.to_string()).or_default().push(r),
                None => {
                    index
                        .untracked_ids
                        .entry(Identity::of(&r))
                        .or_default()
                        .push(r.namespace.clone());
                    untracked.push(r);
                }
            }
        }
        // An app's own Application object carries its destination and sync options.
        for app in applications {
            if let Some(members) = by_app.get_mut(&app.name)
                && !members.iter().any(|m| same_object(m, &app))
            {
                members.push(app);
            }
        }
        index.by_app = by_app
            .into_iter()
            .map(|(app, members)| (app, Arc::new(PreparedSet::new(members))))
            .collect();
        let namespaces: std::collections::BTreeSet<&String> = untracked
            .iter()
            .filter_map(|r| r.namespace.as_ref())
            .collect();
        let neighbours = |ns: Option<&str>| -> Vec<Resource> {
            untracked
                .iter()
                .filter(|r| ns.is_none() || r.namespace.is_none() || r.namespace.as_deref() == ns)
                .cloned()
                .collect()
        };
        index.untracked_by_namespace = namespaces
            .iter()
            .map(|ns| {
                (
                    (*ns).clone(),
                    Arc::new(PreparedSet::new(neighbours(Some(ns)))),
                )
            })
            .collect();
        let unnamespaced: Vec<Resource> = untracked
            .iter()
            .filter(|r| r.namespace.is_none())
            .cloned()
            .collect();
        if !unnamespaced.is_empty() {
            index.untracked_unnamespaced = Some(Arc::new(PreparedSet::new(unnamespaced)));
        }
        if !untracked.is_empty() {
            index.untracked_all = Some(Arc::new(PreparedSet::new(untracked)));
        }
        index
    }
}

fn same_object(a: &Resource, b: &Resource) -> bool {
    Identity::of(a) == Identity::of(b) && namespaces_match(&a.namespace, &b.namespace)
}

/// A namespace missing from a rendered file matches any: Argo CD fills in the destination.
fn namespaces_match(a: &Option<String>, b: &Option<String>) -> bool {
    a.is_none() || b.is_none() || a == b
}

impl ManifestContext {
    /// Loads every manifest under `dir` (recursively, as `syncguard check` does). Unreadable
    /// files are skipped with the rest kept; a directory with no object at all is an error (it is
    /// probably the wrong directory).
    pub fn load(dir: &Path) -> Result<Self, ContextError> {
        let index = Self::read(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
            index: ArcSwap::from_pointee(index),
        })
    }

    /// Re-reads the directory and swaps the index; on error the previous index stays. Returns
    /// the number of objects now known.
    pub fn reload(&self) -> Result<usize, ContextError> {
        let index = Self::read(&self.dir)?;
        let n = index.objects;
        self.index.store(Arc::new(index));
        Ok(n)
    }

    /// The directory this context reads.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// How many objects are known.
    pub fn len(&self) -> usize {
        self.index.load().objects
    }

    /// True when no object is known.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn read(dir: &Path) -> Result<Index, ContextError> {
        let loaded = load_paths(&[dir.to_path_buf()]);
        if loaded.resources.is_empty() {
            return Err(ContextError::Empty {
                dir: dir.to_path_buf(),
                first_error: loaded.errors.first().map(ToString::to_string),
            });
        }
        Ok(Index::build(loaded.resources))
    }
}

impl AppContext for ManifestContext {
    fn objects_for(&self, object: &Resource) -> Option<AppObjects> {
        let index = self.index.load();
        let facts = SyncFacts::of(object);
        if let Some(app) = facts.tracking.app_name() {
            return Some(AppObjects {
                app: Some(app.to_string()),
                set: index.by_app.get(app)?.clone(),
            });
        }
        let namespaces = index.untracked_ids.get(&Identity::of(object))?;
        if !namespaces
            .iter()
            .any(|ns| namespaces_match(ns, &object.namespace))
        {
            return None;
        }
        let set = match &object.namespace {
            None => index.untracked_all.clone(),
            Some(ns) => index
                .untracked_by_namespace
                .get(ns)
                .cloned()
                .or_else(|| index.untracked_unnamespaced.clone()),
        }?;
        Some(AppObjects { app: None, set })
    }

    fn describe(&self) -> String {
        format!("{} ({} objects)", self.dir.display(), self.len())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn res(v: serde_json::Value) -> Resource {
        Resource::from_value(v, None).unwrap()
    }

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn an_untracked_object_gets_the_untracked_objects_of_its_namespace_when_the_dir_has_it() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "app.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata: {name: db-migrate, namespace: orders}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: orders}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: blog}\n",
        );
        let ctx = ManifestContext::load(dir.path()).unwrap();
        assert_eq!(ctx.len(), 3);
        let job = res(json!({"apiVersion": "batch/v1", "kind": "Job",
                             "metadata": {"name": "db-migrate", "namespace": "orders"}}));
        let found = ctx.objects_for(&job).unwrap();
        let names: Vec<&str> = found
            .set
            .objects()
            .iter()
            .map(|r| r.name.as_str())
            .collect();
        // The directory's own copy of the Job stays in the set: the pipeline replaces it.
        assert_eq!(names, vec!["db-migrate", "cfg"]);

        let stranger = res(json!({"apiVersion": "batch/v1", "kind": "Job",
                                  "metadata": {"name": "unknown", "namespace": "orders"}}));
        assert!(ctx.objects_for(&stranger).is_none());
        let elsewhere = res(json!({"apiVersion": "batch/v1", "kind": "Job",
                                   "metadata": {"name": "db-migrate", "namespace": "blog"}}));
        assert!(ctx.objects_for(&elsewhere).is_none());
    }

    #[test]
    fn a_tracked_object_gets_its_applications_objects_and_the_application() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "shop.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, labels: {app.kubernetes.io/instance: shop}}\n---\n\
             apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b, labels: {app.kubernetes.io/instance: blog}}\n---\n\
             apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop}\nspec: {destination: {namespace: shop}}\n",
        );
        let ctx = ManifestContext::load(dir.path()).unwrap();
        let new = res(json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "new", "labels": {"app.kubernetes.io/instance": "shop"}}}));
        let found = ctx.objects_for(&new).unwrap();
        assert_eq!(found.app.as_deref(), Some("shop"));
        let kinds: Vec<&str> = found
            .set
            .objects()
            .iter()
            .map(|r| r.kind.as_str())
            .collect();
        assert_eq!(kinds, vec!["ConfigMap", "Application"]);
    }

    #[test]
    fn a_failed_reload_keeps_the_previous_index() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "a.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
        );
        let ctx = ManifestContext::load(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join("a.yaml")).unwrap();
        assert!(ctx.reload().is_err());
        assert_eq!(ctx.len(), 1);
        assert!(ManifestContext::load(&dir.path().join("missing")).is_err());
    }
}
