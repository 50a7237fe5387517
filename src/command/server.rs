//! `check --cluster` and `check --ephemeral-cluster`: ask an API server what it would store
//! for each object, or why it refuses it. Both take the same dry-run path (`crate::dry_run`);
//! the throwaway server is started, seeded with the input's CRDs and namespaces, and removed
//! around it (`crate::ephemeral`).

use std::collections::HashMap;
use std::time::Instant;

use serde_json::Value;

use crate::cli::CheckArgs;
use crate::dry_run::{DryRun, Limits, Mode, send};
use crate::ephemeral::{self, ControlPlane};
use crate::evaluate::ServerVerdicts;
use crate::finding::ServerUsed;
use crate::model::Resource;
use crate::model::validity::server::Verdict;

/// Requests per second on the throwaway server when `--cluster-qps` is not given.
const EPHEMERAL_QPS: u16 = 1000;
/// Requests per second on a real cluster when `--cluster-qps` is not given.
const CLUSTER_QPS: u16 = 20;

/// What the server said, ready for the evaluation.
#[derive(Debug, Default)]
pub struct Asked {
    /// Stored forms by input index.
    pub stored: HashMap<usize, Value>,
    /// Verdicts by input index, with the server's version.
    pub verdicts: ServerVerdicts,
    /// Errors for the report (exit 2): the server could not be started or asked at all.
    pub errors: Vec<String>,
    /// The server, for the report.
    pub used: Option<ServerUsed>,
}

/// Asks the server `args` names. A real cluster that cannot be reached is an error (nothing is
/// judged, as before); a throwaway server that cannot start is a report error and the input
/// is still judged offline.
pub fn ask(args: &CheckArgs, resources: &[Resource]) -> anyhow::Result<Asked> {
    let namespace = args
        .dest_namespace
        .clone()
        .or_else(|| crate::model::app::inferred_destination(resources))
        .unwrap_or_else(|| "default".to_string());
    let default_qps = if args.ephemeral_cluster {
        EPHEMERAL_QPS
    } else {
        CLUSTER_QPS
    };
    let limits = Limits {
        concurrency: usize::from(args.cluster_concurrency),
        qps: f64::from(args.cluster_qps.unwrap_or(default_qps)),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    if !args.ephemeral_cluster {
        let outcome = runtime.block_on(async {
            let client = crate::kube_client::client("check").await.map_err(|e| {
                anyhow::anyhow!("--cluster: cannot configure a client for the cluster: {e}")
            })?;
            crate::dry_run::dry_run(client, resources, &namespace, &limits)
                .await
                .map_err(|e| anyhow::anyhow!("--cluster: {e:#}"))
        })?;
        return Ok(collect("cluster", outcome, Vec::new()));
    }
    let binaries = match ephemeral::find(args.kube_binaries.as_deref()) {
        Ok(b) => b,
        Err(e) => {
            return Ok(Asked {
                errors: vec![format!(
                    "--ephemeral-cluster: {e}; every object was judged offline only"
                )],
                ..Asked::default()
            });
        }
    };
    let (live, live_errors) = live_objects(&args.live);
    if !live_errors.is_empty() {
        return Ok(Asked {
            errors: live_errors,
            ..Asked::default()
        });
    }
    let session = async {
        let started = Instant::now();
        let cp = ControlPlane::start(&binaries).await?;
        eprintln!(
            "syncguard: throwaway API server (Kubernetes {}) ready in {:.1} s",
            cp.version(),
            cp.ready_after().as_secs_f64()
        );
        let mut everything = live.clone();
        everything.extend(resources.iter().cloned());
        let mut seeded = ephemeral::seed::seed(&cp.client(), &everything, &namespace).await;
        if !live.is_empty() {
            let written = send(cp.client(), &live, &namespace, &limits, Mode::Write)
                .await
                .map_err(|e| format!("{e:#}"))?;
            for (i, verdict) in &written.verdicts {
                if let Verdict::Refused(r) = verdict {
                    seeded.problems.push(format!(
                        "--live: {} could not be made live, so the input's object is judged as a creation: {}",
                        live[*i].display_name(),
                        r.message
                    ));
                }
            }
            seeded.problems.extend(
                written
                    .refused
                    .iter()
                    .map(|l| format!("--live: {l}; the input's object is judged as a creation")),
            );
        }
        // Written for real: the server is syncguard's alone, and a write meets what a dry-run
        // skips (a node port outside the range or taken twice).
        let outcome = send(cp.client(), resources, &namespace, &limits, Mode::Write)
            .await
            .map_err(|e| format!("{e:#}"))?;
        tracing::debug!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            crds = seeded.crds.len(),
            namespaces = seeded.namespaces,
            "ephemeral dry-run done"
        );
        // Stopped and removed before the evaluation starts.
        drop(cp);
        Ok::<_, String>((outcome, seeded.problems))
    };
    // The session stops its control plane in order on a signal: it ends the process, not the
    // interrupt thread.
    let _hold = crate::interrupt::hold();
    let result = runtime.block_on(async {
        tokio::select! {
            r = session => r,
            signal = ephemeral::interrupted() => Err(format!(
                "interrupted by {signal}; the throwaway API server was stopped and removed"
            )),
        }
    });
    match result {
        Ok((outcome, problems)) => Ok(collect("ephemeral", outcome, problems)),
        Err(e) if e.starts_with("interrupted") => Err(anyhow::anyhow!("{e}")),
        Err(e) => Ok(Asked {
            errors: vec![format!(
                "--ephemeral-cluster: the throwaway API server could not be used, so every object was judged offline only: {e}"
            )],
            ..Asked::default()
        }),
    }
}

/// `--live`: the objects to make live first, as `kubectl get -o yaml` prints them, without what
/// only the cluster they came from may set (resourceVersion, uid, managedFields, status…).
fn live_objects(paths: &[std::path::PathBuf]) -> (Vec<Resource>, Vec<String>) {
    if paths.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let loaded = crate::manifest::load_paths(paths);
    let errors = loaded
        .errors
        .iter()
        .map(|e| format!("--live: {e}"))
        .collect();
    let live = loaded
        .resources
        .into_iter()
        .filter_map(|r| {
            let mut raw = r.raw.clone();
            if let Some(m) = raw.get_mut("metadata").and_then(Value::as_object_mut) {
                for k in [
                    "resourceVersion",
                    "uid",
                    "managedFields",
                    "creationTimestamp",
                    "generation",
                    "selfLink",
                ] {
                    m.remove(k);
                }
            }
            if let Some(o) = raw.as_object_mut() {
                o.remove("status");
            }
            Resource::from_value(raw, r.origin.clone()).ok()
        })
        // A hook is never updated in place: Argo CD deletes the previous one and creates it anew.
        .filter(|r| !crate::model::argo::SyncFacts::of(r).is_hook)
        .collect();
    (live, errors)
}

/// Turns a dry-run outcome into what the evaluation and the report need; what could not be
/// dry-run is named on stderr.
fn collect(kind: &'static str, outcome: DryRun, problems: Vec<String>) -> Asked {
    for line in &problems {
        eprintln!("syncguard: --ephemeral-cluster: {line}");
    }
    let flag = if kind == "ephemeral" {
        "--ephemeral-cluster"
    } else {
        "--cluster"
    };
    for line in &outcome.refused {
        if kind == "ephemeral" {
            eprintln!("syncguard: {flag}: the server did not judge {line}; judged offline");
        } else {
            eprintln!("syncguard: {flag}: no dry-run of {line}; judged offline");
        }
    }
    let used = outcome.used(kind);
    Asked {
        stored: outcome.stored,
        verdicts: ServerVerdicts {
            version: outcome.server,
            by_index: outcome.verdicts,
        },
        errors: Vec::new(),
        used: Some(used),
    }
}
