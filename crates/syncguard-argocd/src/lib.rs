//! Argo CD's sync semantics as syncguard models them, with nothing heavier than serde,
//! serde_json and thiserror below it: no Kubernetes client, no web server, no policy engine.
//!
//! - [`model`]: one Kubernetes object ([`model::Resource`]) and the Argo CD facts about it —
//!   hook types, waves and sync options ([`model::argo`]), references between objects
//!   ([`model::refs`]), which Application owns it ([`model::app`]), health as Argo CD assesses it
//!   ([`model::health`]), and the release table ([`model::version`]): every behaviour that
//!   changed between Argo CD releases, with the releases that have it.
//! - [`config`]: Argo CD's own configuration as one typed vocabulary (Application,
//!   ApplicationSet, AppProject, argocd-cm), read tolerantly with unknown fields kept.
//! - [`plan`]: the sync simulator — the exact order Argo CD applies things in and the
//!   tick-by-tick execution model.
//! - [`origin`], [`pointers`]: where an object came from, and a position for every JSON pointer
//!   inside it, so a finding can say `file:line:column` (filled by the main crate's loader).
//!
//! The main `syncguard` crate re-exports [`model`] and [`plan`] under the same paths.

pub mod config;
pub mod model;
pub mod plan;

// Filled from manifests users and the network send: no input may crash the process (the same
// lints as the loader that fills them, src/manifest in the main crate).
#[cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]
pub mod origin;
#[cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]
pub mod pointers;
