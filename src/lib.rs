//! syncguard keeps Argo CD syncs safe: it knows how Argo CD orders and gates a sync and uses that
//! knowledge at admission time, in CI and in the cluster.
//!
//! # Layout (in data-flow order)
//!
//! - [`manifest`]: load YAML/JSON streams (files, directories, stdin) and keep `file:line` for
//!   every field.
//! - [`model`]: [`model::Resource`] plus Argo CD facts ([`model::argo`]), references between
//!   objects ([`model::refs`]) and Argo CD health ([`model::health`]).
//! - [`plan`]: the sync plan simulator — the exact order Argo CD applies things in, and the
//!   tick-by-tick execution model.
//! - [`output`]: human and machine renderings of a plan.
//! - [`cli`]: command-line arguments; [`command`]: the commands behind them.

pub mod cli;
pub mod command;
pub mod manifest;
pub mod model;
pub mod output;
pub mod plan;
