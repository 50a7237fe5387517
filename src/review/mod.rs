//! `syncguard review`: what a change to a GitOps repository does to its syncs. Both revisions
//! are checked out into throwaway worktrees (the committed trees, as Argo CD renders them),
//! their Applications rendered, planned and checked, and compared: per Application whose
//! rendered objects differ, the plan diff (steps, waits, objects added, removed or moved, hooks
//! whose content changed) and the manifest diff; over everything, the findings new on the head,
//! fixed by it and unchanged.

mod baseline;
mod changes;
mod objects;
mod plan_diff;
mod server;
mod snapshot;

use std::path::{Path, PathBuf};

pub use baseline::{FindingsDiff, compare};
pub use objects::{FieldChange, ObjectChange, ObjectId};
pub use plan_diff::{Place, Placed, PlanDiff, StepView};
pub use snapshot::{AppState, Gathered, Snapshot, SnapshotOptions};

use std::sync::Arc;

use crate::evaluate::EvaluateOptions;
use crate::git::{Worktree, resolve};

/// The review of one change.
#[derive(Debug)]
pub struct Review {
    /// The base commit.
    pub base: String,
    /// The head commit.
    pub head: String,
    /// The Applications whose rendered objects differ, by name.
    pub apps: Vec<AppReview>,
    /// Applications rendered on either revision.
    pub apps_total: usize,
    /// Findings, head against base.
    pub findings: FindingsDiff,
    /// What could not be read or rendered on the head revision (the run fails on them).
    pub errors: Vec<String>,
    /// What could not be rendered on the base revision (reported, never failing the run).
    pub base_errors: Vec<String>,
    /// The throwaway API server that judged the head (`--ephemeral-cluster`).
    pub server: Option<crate::finding::ServerUsed>,
}

/// `--ephemeral-cluster`: the programs of the throwaway API server and how hard to press it.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// kube-apiserver and etcd.
    pub binaries: crate::ephemeral::Binaries,
    /// Requests in flight and per second.
    pub limits: crate::dry_run::Limits,
}

/// One Application that differs.
#[derive(Debug)]
pub struct AppReview {
    pub name: String,
    /// An ApplicationSet: its objects are the Applications it generates.
    pub application_set: bool,
    /// Where it is defined on the head (else the base).
    pub origin: Option<String>,
    /// `added`, `removed` or `changed`.
    pub status: &'static str,
    pub plan: PlanDiff,
    pub objects: Vec<ObjectChange>,
    /// Hooks (on the head) whose content changed, which Argo CD's own diff leaves out.
    pub changed_hooks: Vec<ObjectId>,
}

/// Why a review could not be made at all.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("{0}")]
    Git(String),
    #[error("cannot make a temporary directory: {0}")]
    Temp(std::io::Error),
    #[error("{0}")]
    Interrupted(String),
}

/// Reviews `head` against `base` in the checkout at `repo` (its top directory).
pub fn review(
    repo: &Path,
    base: &str,
    head: &str,
    options: &SnapshotOptions<'_>,
    server: Option<&ServerOptions>,
) -> Result<Review, ReviewError> {
    let base = resolve(repo, base).map_err(|e| ReviewError::Git(format!("base: {e}")))?;
    let head = resolve(repo, head).map_err(|e| ReviewError::Git(format!("head: {e}")))?;
    let temp = tempfile::tempdir().map_err(ReviewError::Temp)?;
    let gathered = |commit: &str, name: &str| -> Result<Gathered, ReviewError> {
        let path: PathBuf = temp.path().join(name);
        let tree = Worktree::add(repo, commit, &path).map_err(ReviewError::Git)?;
        Ok(snapshot::gather(tree.path(), commit, options))
    };
    let before = gathered(&base, "base")?;
    let after = gathered(&head, "head")?;
    let offline = |before: Gathered, after: Gathered| {
        let head_options = EvaluateOptions {
            refused_changes: Arc::new(changes::refused(&before.objects, &after.objects)),
            ..options.evaluate.clone()
        };
        let before = snapshot::judge(before, options.policies, options.evaluate);
        let after = snapshot::judge(after, options.policies, &head_options);
        compare_snapshots(before, after)
    };
    let Some(server_options) = server else {
        return Ok(offline(before, after));
    };
    match server::ask(
        &before,
        &after,
        &server_options.binaries,
        &server_options.limits,
        options.evaluate,
    ) {
        Ok(judged) => {
            let before = snapshot::judge(before, options.policies, &judged.base);
            let after = snapshot::judge(after, options.policies, &judged.head);
            let mut review = compare_snapshots(before, after);
            review.server = Some(judged.used);
            Ok(review)
        }
        Err(e) if e.starts_with("interrupted") => Err(ReviewError::Interrupted(e)),
        Err(e) => {
            let mut review = offline(before, after);
            review.errors.push(format!(
                "--ephemeral-cluster: the throwaway API server could not be used, so both revisions were judged offline only: {e}"
            ));
            Ok(review)
        }
    }
}

/// The review of two snapshots.
pub fn compare_snapshots(before: Snapshot, after: Snapshot) -> Review {
    let mut names: Vec<&String> = before.apps.keys().chain(after.apps.keys()).collect();
    names.sort();
    names.dedup();
    let apps_total = names.len();
    let mut apps = Vec::new();
    for name in names {
        let (b, h) = (before.apps.get(name), after.apps.get(name));
        let objects = objects::diff(
            b.map(|a| a.objects.as_slice()).unwrap_or_default(),
            h.map(|a| a.objects.as_slice()).unwrap_or_default(),
        );
        let plan = plan_diff::diff(b.map(|a| &a.plan), h.map(|a| &a.plan));
        if objects.is_empty() && plan.is_empty() && b.is_some() == h.is_some() {
            continue;
        }
        let hooks_on_head: Vec<ObjectId> = h
            .map(|a| {
                a.plan
                    .tasks()
                    .filter(|t| t.is_hook)
                    .map(|t| ObjectId {
                        group: t.group.clone(),
                        kind: t.kind.clone(),
                        namespace: t.namespace.clone(),
                        name: t.name.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let changed_hooks = objects
            .iter()
            .filter(|c| matches!(c, ObjectChange::Changed { .. }))
            .map(|c| c.object().clone())
            .filter(|o| hooks_on_head.contains(o))
            .collect();
        apps.push(AppReview {
            name: name.clone(),
            application_set: h.or(b).is_some_and(|a| a.application_set),
            origin: h.or(b).and_then(|a| a.origin.clone()),
            status: match (b, h) {
                (None, Some(_)) => "added",
                (Some(_), None) => "removed",
                _ => "changed",
            },
            plan,
            objects,
            changed_hooks,
        });
    }
    Review {
        base: before.commit,
        head: after.commit,
        apps,
        apps_total,
        findings: compare(&before.report.findings, &after.report.findings),
        errors: after.report.errors,
        base_errors: before.report.errors,
        server: None,
    }
}
