//! Renderings: every output is a view of a data structure built elsewhere (a plan, a report).

pub mod explain;
pub mod plan;
pub mod policy_report;
pub mod report;
pub mod review;
mod style;
