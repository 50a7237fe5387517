//! `syncguard review`: what a change to a GitOps repository does to its syncs. Both revisions
//! are checked out into throwaway worktrees (the committed trees, as Argo CD renders them),
//! their Applications rendered, planned and checked, and compared: per Application whose
//! rendered objects differ, the plan diff (steps, waits, objects added, removed or moved, hooks
//! whose content changed) and the manifest diff; over everything, the findings new on the head,
//! fixed by it and unchanged.

mod baseline;
mod changes;
mod images;
mod not_judged;
mod objects;
mod plan_diff;
mod server;
mod snapshot;

use std::path::Path;

pub use baseline::{FindingsDiff, compare};
pub use images::ImageChange;
pub use not_judged::{Baseline, NotJudged, Reason, Standing};
pub use objects::{FieldChange, ObjectChange, ObjectId};
pub use plan_diff::{Place, Placed, PlanDiff, StepView};
pub use snapshot::{AppId, AppState, Gathered, Snapshot, SnapshotOptions};

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
    /// The Applications whose rendered objects differ, judged on both revisions.
    pub apps: Vec<AppReview>,
    /// Applications and ApplicationSets of the repository on either revision, judged or not.
    pub apps_total: usize,
    /// The Applications that could not be judged on the head (or on the base, for one that
    /// existed there only), each with why: what every view starts with.
    pub not_judged: Vec<NotJudged>,
    /// Findings, head against base.
    pub findings: FindingsDiff,
    /// Files that could not be read on the head revision (the run fails on them).
    pub errors: Vec<String>,
    /// Files that could not be read on the base revision (reported, never failing the run).
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
    /// Kind, namespace and name.
    pub id: AppId,
    /// Its instance name, as its findings name it (`Finding::application`).
    pub instance: String,
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
    /// Containers of objects on both revisions whose image changed.
    pub images: Vec<ImageChange>,
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
    let temp = crate::interrupt::TempDir::new().map_err(ReviewError::Temp)?;
    // Both worktrees first (git locks its worktree list), then both revisions rendered at once:
    // a render is mostly helm and kustomize processes, one at a time per revision, so the two
    // revisions share the machine's cores instead of waiting for each other.
    let base_tree =
        Worktree::add(repo, &base, &temp.path().join("base")).map_err(ReviewError::Git)?;
    let head_tree =
        Worktree::add(repo, &head, &temp.path().join("head")).map_err(ReviewError::Git)?;
    let (before, after) = std::thread::scope(|s| {
        let before = s.spawn(|| snapshot::gather(base_tree.path(), &base, options));
        let after = snapshot::gather(head_tree.path(), &head, options);
        (before.join(), after)
    });
    // A panic in the base's thread is the same panic as in sequential code.
    let before = before.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
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
    let mut ids: Vec<&AppId> = before.apps.keys().chain(after.apps.keys()).collect();
    ids.sort();
    ids.dedup();
    let apps_total = ids.len();
    let mut apps = Vec::new();
    let mut not_judged = Vec::new();
    for id in ids {
        let (b, h) = (before.apps.get(id), after.apps.get(id));
        if let Some(n) = not_judged::of(id, b, h) {
            // Not judged on one side: a diff would show what failed to render as removed (or
            // added), which it is not.
            not_judged.push(n);
            continue;
        }
        let ids_of = |a: Option<&AppState>| a.map(|a| objects::ids(&a.objects)).unwrap_or_default();
        let (b_ids, h_ids) = (ids_of(b), ids_of(h));
        let objects = objects::diff(
            b.map(|a| a.objects.as_slice()).unwrap_or_default(),
            &b_ids,
            h.map(|a| a.objects.as_slice()).unwrap_or_default(),
            &h_ids,
        );
        let plan = plan_diff::diff(
            b.map(|a| (&a.plan, b_ids.as_slice())),
            h.map(|a| (&a.plan, h_ids.as_slice())),
        );
        if objects.is_empty() && plan.is_empty() && b.is_some() == h.is_some() {
            continue;
        }
        let hooks_on_head: Vec<ObjectId> = h
            .map(|a| {
                a.plan
                    .tasks()
                    .filter(|t| t.is_hook)
                    .filter_map(|t| match t.source {
                        crate::plan::TaskSource::Target { index } => h_ids.get(index).cloned(),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let images = images::changes(
            b.map(|a| a.objects.as_slice()).unwrap_or_default(),
            &b_ids,
            h.map(|a| a.objects.as_slice()).unwrap_or_default(),
            &h_ids,
        );
        let changed_hooks = objects
            .iter()
            .filter(|c| matches!(c, ObjectChange::Changed { .. }))
            .map(|c| c.object().clone())
            .filter(|o| hooks_on_head.contains(o))
            .collect();
        apps.push(AppReview {
            id: id.clone(),
            instance: h.or(b).map(|a| a.instance.clone()).unwrap_or_default(),
            application_set: id.application_set(),
            origin: h.or(b).and_then(|a| a.origin.clone()),
            status: match (b, h) {
                (None, Some(_)) => "added",
                (Some(_), None) => "removed",
                _ => "changed",
            },
            plan,
            objects,
            changed_hooks,
            images,
        });
    }
    let mut findings = compare(&before.report.findings, &after.report.findings);
    // The base's findings of an Application not judged on the head are not fixed: nobody looked.
    let unjudged: std::collections::HashSet<&str> = not_judged
        .iter()
        .filter(|n| n.on_head())
        .filter_map(|n| {
            before
                .apps
                .get(&n.id)
                .or(after.apps.get(&n.id))
                .map(|a| a.instance.as_str())
        })
        .collect();
    let (kept, fixed): (Vec<_>, Vec<_>) = std::mem::take(&mut findings.fixed)
        .into_iter()
        .partition(|f| {
            f.application
                .as_deref()
                .is_some_and(|a| unjudged.contains(a))
        });
    findings.fixed = fixed;
    findings.not_judged_on_head = kept;
    Review {
        base: before.commit,
        head: after.commit,
        apps,
        apps_total,
        not_judged,
        findings,
        errors: after.report.errors,
        base_errors: before.report.errors,
        server: None,
    }
}

impl Review {
    /// Something could not be judged that neither the base (the same reasons, unchanged) nor
    /// the baseline accepts, or a file could not be read: the run exits 2.
    pub fn incomplete(&self) -> bool {
        !self.errors.is_empty() || self.not_judged.iter().any(|n| n.standing == Standing::New)
    }

    /// Marks the Applications `baseline` accepts as not judged.
    pub fn accept(&mut self, baseline: &Baseline) {
        for n in &mut self.not_judged {
            if n.standing == Standing::New && baseline.accepts(n) {
                n.standing = Standing::Accepted;
            }
        }
    }
}
