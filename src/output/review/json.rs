//! The review as JSON (`"version": 1`), for tools and for the Action's artifacts. Its
//! `baseline` member is a `--baseline` file accepting what this head leaves not judged.

use serde_json::{Value, json};

use crate::review::{Baseline, Review};

/// The whole review as pretty JSON.
pub fn render_json(review: &Review, blocking: usize) -> Result<String, serde_json::Error> {
    let apps: Vec<Value> = review
        .apps
        .iter()
        .map(|a| {
            json!({
                "kind": a.id.kind,
                "namespace": a.id.namespace,
                "name": a.id.name,
                "origin": a.origin,
                "status": a.status,
                "application_set": a.application_set,
                "plan": a.plan,
                "changed_hooks": a.changed_hooks,
                "images": a.images,
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
            "applications_not_judged": review.not_judged.iter().filter(|n| n.on_head()).count(),
            "applications_not_judged_failing": super::failing_not_judged(review),
            "applications_changed": review.apps.len(),
            "findings_new": f.new.len(),
            "findings_blocking": blocking,
            "findings_fixed": f.fixed.len(),
            "findings_unchanged": f.unchanged.len(),
            "errors": review.errors.len(),
        },
        "not_judged": review.not_judged,
        "applications": apps,
        "findings": {
            "new": f.new,
            "fixed": f.fixed,
            "unchanged": f.unchanged,
            "not_judged_on_head": f.not_judged_on_head,
        },
        "errors": review.errors,
        "base_errors": review.base_errors,
        // Ready for --baseline: accepts what is not judged on this head.
        "baseline": Baseline::of(&review.not_judged),
    });
    let mut value = value;
    if let Some(server) = &review.server {
        value["server"] = json!(server);
    }
    serde_json::to_string_pretty(&value)
}
