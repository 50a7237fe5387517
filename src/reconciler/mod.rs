//! The co-deployed reconciler (`syncguard reconcile`): the part of the engine that needs the
//! live cluster and time — what a single admission review cannot see.
//!
//! # Layout
//!
//! - [`application`]: [`LiveApplication`], the fields of a live Argo CD `Application` that the
//!   diagnoses read (operation state, sync result, status.resources with wave and hook flag,
//!   history), parsed leniently from JSON.
//! - [`context`]: [`Config`] (what the flags decide) and [`Context`] (what every task shares:
//!   client, config, metrics, the live policy set, leadership).
//! - [`live`]: live objects as the rules see them, stand-ins from `status.resources`, and the
//!   [`AppIndex`] of Applications (shared with the webhook's Application cache).
//! - [`audit`]: the background audit — list live objects, evaluate them per Application,
//!   write [`report`]s.
//! - [`report`]: one bounded `PolicyReport` per namespace, written only when it changed.
//!
//! Every writer (Events, PolicyReports) runs only while this replica holds the leader Lease, so
//! two replicas never both write; readers (caches, diagnosis) run on every replica.

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod application;
pub mod audit;
pub mod context;
pub mod live;
pub mod report;

pub use application::LiveApplication;
pub use context::{Config, Context, LeaseConfig};
pub use live::{AppIndex, LiveObject};
