//! The review as JSON (`"version": 1`), for tools and for the Action's artifacts.

use serde_json::{Value, json};

use crate::review::Review;

/// The whole review as pretty JSON.
pub fn render_json(review: &Review, blocking: usize) -> Result<String, serde_json::Error> {
    let apps: Vec<Value> = review
        .apps
        .iter()
        .map(|a| {
            json!({
                "name": a.name,
                "origin": a.origin,
                "status": a.status,
                "application_set": a.application_set,
                "plan": a.plan,
                "changed_hooks": a.changed_hooks,
                "objects": a.objects,
            })
        })
        .collect();
    let f = &review.findings;
    let value = json!({
        "version": 1,
        "tool": {"name": "syncguard", "version": env!("CARGO_PKG_VERSION")},
        "base": review.base,
        "head": review.head,
        "summary": {
            "applications": review.apps_total,
            "applications_changed": review.apps.len(),
            "findings_new": f.new.len(),
            "findings_blocking": blocking,
            "findings_fixed": f.fixed.len(),
            "findings_unchanged": f.unchanged.len(),
            "errors": review.errors.len(),
        },
        "applications": apps,
        "findings": {"new": f.new, "fixed": f.fixed, "unchanged": f.unchanged},
        "errors": review.errors,
        "base_errors": review.base_errors,
    });
    let mut value = value;
    if let Some(server) = &review.server {
        value["server"] = json!(server);
    }
    serde_json::to_string_pretty(&value)
}
