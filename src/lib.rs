//! syncguard keeps Argo CD syncs safe: it knows how Argo CD orders and gates a sync and uses that
//! knowledge at admission time, in CI and in the cluster.
//!
//! # Layout (in data-flow order)
//!
//! - [`manifest`]: load YAML/JSON streams (files, directories, stdin) and keep `file:line` for
//!   every field.
//! - [`model`]: [`model::Resource`] plus Argo CD facts ([`model::argo`]), references between
//!   objects ([`model::refs`]), Argo CD health ([`model::health`]) and the release table
//!   ([`model::version`]) — all from the `syncguard-argocd` crate (`crates/syncguard-argocd`) —
//!   and the Argo CD configuration read from argocd-cm ([`model::argocd_config`]).
//! - [`plan`]: the sync plan simulator — the exact order Argo CD applies things in, and the
//!   tick-by-tick execution model (`syncguard-argocd`, re-exported).
//! - [`evaluate`]: the pipeline shared by every front end: facts → plan → policy input → findings.
//! - [`policy`]: Rego rules + config: evaluate all rules once per resource; `syncguard test`.
//! - [`finding`]: what the rules concluded ([`finding::Finding`], [`finding::Report`]) as data.
//! - [`mutate`]: apply a rule's patch to a copy and emit a minimal RFC 6902 patch.
//! - [`dry_run`]: what an API server would store for each object, or why it refuses it
//!   (server-side dry-run); [`ephemeral`]: a throwaway etcd + kube-apiserver to ask instead of
//!   a real cluster.
//! - [`determinism`]: SG302 — run a render command several times and report every field that
//!   differs between the outputs, with `file:line` in the first one.
//! - [`output`]: human and machine renderings of a plan and of a check report.
//! - [`webhook`]: `syncguard serve` — AdmissionReview in, deny / warnings / JSON patch out;
//!   [`certs`]: development certificates for it; [`metrics`]: its Prometheus metrics.
//! - [`reconciler`]: `syncguard reconcile` — stuck-sync and sync-loop diagnosis on live Argo CD
//!   Applications, background audit into PolicyReports.
//! - [`cli`]: command-line arguments; [`command`]: the commands behind them.

pub mod certs;
pub mod cli;
pub mod command;
pub mod determinism;
pub mod dry_run;
pub mod duration;
pub mod ephemeral;
pub mod evaluate;
pub mod finding;
pub mod git;
pub mod interrupt;
pub mod kube_client;
pub mod manifest;
pub mod metrics;
pub mod model;
pub mod mutate;
pub mod output;
pub use syncguard_argocd::config;
pub use syncguard_argocd::plan;
pub mod policy;
pub mod process;
pub mod reconciler;
pub mod render;
pub mod review;
pub mod webhook;
