//! The co-deployed reconciler (`syncguard reconcile`): the part of the engine that needs the
//! live cluster and time — what a single admission review cannot see.
//!
//! # Layout
//!
//! - [`application`]: the watch's constants and what a cache prunes from a served Application
//!   before reading it with the one typed vocabulary ([`Application`], from
//!   [`crate::config::application`], with its status in [`crate::config::status`]).
//! - [`context`]: [`Config`] (what the flags decide) and [`Context`] (what every task shares:
//!   client, config, metrics, the live policy set, leadership).
//! - [`diagnosis`]: [`LiveFinding`], what a live rule concludes (message, fix, snippet, cause
//!   fingerprint), as data.
//! - [`stuck`] (SG501 stuck sync), [`sync_loop`] (SG502 OutOfSync loop), [`hooks`] (SG503
//!   accumulated hooks): each a pure diagnosis over fetched facts plus the fetch itself.
//! - [`events`]: findings → deduplicated Kubernetes Events on the Application, and the finding
//!   metrics.
//! - [`controller`]: the kube-runtime Controller over Applications that runs the three rules.
//! - [`leader`]: leader election on a Lease; [`run`]: the process — client, policies, probes,
//!   election, controller, extra tasks, ordered shutdown.
//! - [`error`]: the reconciler's [`Error`].
//! - [`live`]: live objects as the rules see them, stand-ins from `status.resources`, and the
//!   [`AppIndex`] of Applications (shared with the webhook's Application cache).
//! - [`audit`]: the background audit — list live objects, evaluate them per Application,
//!   write [`report`]s.
//! - [`report`]: one bounded `PolicyReport` (and/or OpenReports `Report`, `--report-api`) per
//!   namespace, written only when it changed.
//! - [`policy_reload`]: the audit as a runner task, re-run when a tested policy set goes live.
//!
//! Every writer (Events, PolicyReports) runs only while this replica holds the leader Lease, so
//! two replicas never both write; readers (caches, diagnosis) run on every replica.

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod application;
pub mod audit;
pub mod budget;
pub mod cached;
pub mod context;
pub mod controller;
pub mod diagnosis;
pub mod error;
pub mod events;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod hooks;
pub mod install;
pub mod leader;
pub mod live;
pub mod policy_reload;
pub mod report;
pub mod run;
pub mod state;
pub mod stuck;
pub mod sync_loop;
pub mod terminate;

pub use application::Application;
pub use context::{Config, Context, LeaseConfig};
pub use diagnosis::LiveFinding;
pub use error::Error;
pub use live::{AppIndex, LiveObject};
pub use run::{ExtraTask, Shutdown, run};
