//! `review --ephemeral-cluster`: both revisions judged by a real API server, and the head's
//! objects judged as changes from the base's.
//!
//! On one throwaway control plane (`crate::ephemeral`): the CRDs and namespaces of both
//! revisions are installed; the base revision's objects are dry-run (their verdicts and stored
//! forms judge the base, so what the head merely keeps is "unchanged", not "new"); then they
//! are applied for real, as the live state Argo CD would find; then the head's objects are
//! dry-run against them, each the way Argo CD applies it (`crate::dry_run::Mode`). A change
//! the server refuses from the live object — an immutable selector, a Job's template, an
//! immutable Secret's data — is then an SG401 deny on the head, and what it fills in or
//! allocates is SG305 drift, both as the head's own findings.

use std::sync::Arc;

use crate::dry_run::{DryRun, Limits, Mode, send};
use crate::ephemeral::{self, Binaries, ControlPlane};
use crate::evaluate::{EvaluateOptions, ServerVerdicts};
use crate::finding::ServerUsed;
use crate::model::argo::SyncFacts;

use super::snapshot::Gathered;

/// The verdicts of the server on both revisions.
#[derive(Debug)]
pub struct Judged {
    /// Evaluation options of the base: its fresh dry-run.
    pub base: EvaluateOptions,
    /// Evaluation options of the head: its dry-run against the base applied.
    pub head: EvaluateOptions,
    /// What the server judged on the head.
    pub used: ServerUsed,
}

/// Asks a throwaway API server about `base` and `head`. Errors say why it could not be used
/// (the revisions are then judged offline); an interruption is its own error.
pub fn ask(
    base: &Gathered,
    head: &Gathered,
    binaries: &Binaries,
    limits: &Limits,
    evaluate: &EvaluateOptions,
) -> Result<Judged, String> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let session = async {
        let cp = ControlPlane::start(binaries).await?;
        let client = cp.client();
        let mut everything = base.objects.clone();
        everything.extend(head.objects.iter().cloned());
        let seeded = ephemeral::seed::seed(&client, &everything, "default").await;
        for line in &seeded.problems {
            eprintln!("syncguard: --ephemeral-cluster: {line}");
        }
        let on_base = send(
            client.clone(),
            &base.objects,
            "default",
            limits,
            Mode::DryRun,
        )
        .await
        .map_err(|e| format!("{e:#}"))?;
        // The base as the live state: only what the server accepted can be live, and no hook
        // (Argo CD creates each hook anew, deleting the previous one first).
        let accepted: Vec<_> = base
            .objects
            .iter()
            .enumerate()
            .filter(|(i, r)| on_base.stored.contains_key(i) && !SyncFacts::of(r).is_hook)
            .map(|(_, r)| r.clone())
            .collect();
        let written = send(client.clone(), &accepted, "default", limits, Mode::Write)
            .await
            .map_err(|e| format!("{e:#}"))?;
        if written.stored.len() < accepted.len() {
            eprintln!(
                "syncguard: --ephemeral-cluster: {} of the base revision's {} accepted objects could not be applied; the head's changes to them are judged as creations",
                accepted.len() - written.stored.len(),
                accepted.len()
            );
        }
        let on_head = send(client, &head.objects, "default", limits, Mode::DryRun)
            .await
            .map_err(|e| format!("{e:#}"))?;
        eprintln!(
            "syncguard: throwaway API server (Kubernetes {}) ready in {:.1} s; base revision applied ({} objects)",
            cp.version(),
            cp.ready_after().as_secs_f64(),
            written.stored.len()
        );
        drop(cp);
        Ok::<_, String>((on_base, on_head))
    };
    // The session stops its control plane in order on a signal: it ends the process, not the
    // interrupt thread.
    let _hold = crate::interrupt::hold();
    let (on_base, on_head) = runtime.block_on(async {
        tokio::select! {
            r = session => r,
            signal = ephemeral::interrupted() => Err(format!(
                "interrupted by {signal}; the throwaway API server was stopped and removed"
            )),
        }
    })?;
    let used = on_head.used("ephemeral");
    Ok(Judged {
        base: with(evaluate, on_base),
        head: with(evaluate, on_head),
        used,
    })
}

fn with(evaluate: &EvaluateOptions, d: DryRun) -> EvaluateOptions {
    EvaluateOptions {
        stored: Arc::new(d.stored),
        verdicts: Arc::new(ServerVerdicts {
            version: d.server,
            by_index: d.verdicts,
        }),
        ..evaluate.clone()
    }
}
