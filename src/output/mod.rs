//! Renderings of plans and reports.
