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
//!
//! Every writer (Events, PolicyReports) runs only while this replica holds the leader Lease, so
//! two replicas never both write; readers (caches, diagnosis) run on every replica.

#![deny(clippy::unwrap_used, clippy::expect_used)]

pub mod application;
pub mod context;

pub use application::LiveApplication;
pub use context::{Config, Context, LeaseConfig};
