//! The review as text for a terminal or a CI log.

use std::fmt::Write;

use super::{
    abbrev, action, counts, failing_not_judged, location, manifest, not_judged, place,
    reasons_shown, short, shown,
};
use crate::finding::Finding;
use crate::review::{ObjectChange, Review};

/// The whole review.
pub fn render_text(review: &Review, blocking: usize, show_info: bool) -> String {
    let mut out = String::new();
    let f = &review.findings;
    let _ = writeln!(
        out,
        "syncguard review: base {} -> head {}",
        abbrev(&review.base),
        abbrev(&review.head),
    );
    // What could not be judged comes before any verdict.
    let listed = not_judged(review);
    if !listed.is_empty() {
        let _ = writeln!(
            out,
            "Not judged: {} of {} Applications ({} failing the run):",
            listed.len(),
            review.apps_total,
            failing_not_judged(review)
        );
        for n in listed {
            let _ = writeln!(
                out,
                "  {} ({}): {}",
                n.id,
                n.origin.as_deref().unwrap_or("?"),
                n.summary()
            );
            for r in reasons_shown(n) {
                let _ = writeln!(out, "    {r}");
            }
        }
    }
    if !review.errors.is_empty() {
        let _ = writeln!(
            out,
            "Not read on the head revision ({} files, failing the run):",
            review.errors.len()
        );
        for e in &review.errors {
            let _ = writeln!(out, "  {e}");
        }
    }
    let _ = writeln!(
        out,
        "{} of {} Applications changed; findings: {} new ({} blocking), {} fixed, {} unchanged",
        review.apps.len(),
        review.apps_total,
        f.new.len(),
        blocking,
        f.fixed.len(),
        f.unchanged.len()
    );
    if let Some(server) = &review.server {
        let _ = writeln!(
            out,
            "Judged on a throwaway API server, Kubernetes {}: the base revision applied, the head's objects dry-run against it ({} accepted, {} refused, {} not checked).",
            server.kubernetes, server.accepted, server.refused, server.not_checked
        );
    }
    for app in &review.apps {
        let _ = writeln!(
            out,
            "\n{} {}/{} ({}): {}",
            app.id.kind,
            app.id.namespace,
            app.id.name,
            app.origin.as_deref().unwrap_or("?"),
            app.status
        );
        let p = &app.plan;
        if p.steps_changed() {
            let steps = |s: &[crate::review::StepView]| {
                if s.is_empty() {
                    return "(none)".to_string();
                }
                s.iter()
                    .map(|x| format!("{} {}", x.phase, x.wave))
                    .collect::<Vec<_>>()
                    .join(" -> ")
            };
            let _ = writeln!(out, "  steps, base: {}", steps(&p.base_steps));
            let _ = writeln!(out, "  steps, head: {}", steps(&p.head_steps));
        }
        for a in &p.added {
            if let Some(h) = &a.head {
                let hook = if h.hook { ", a hook" } else { "" };
                let _ = writeln!(out, "  + {} joins the sync at {}{hook}", a.object, place(h));
            }
        }
        for r in &p.removed {
            if let Some(b) = &r.base {
                let _ = writeln!(
                    out,
                    "  - {} leaves the sync (was at {})",
                    r.object,
                    place(b)
                );
            }
        }
        for m in &p.moved {
            if let (Some(b), Some(h)) = (&m.base, &m.head) {
                let _ = writeln!(
                    out,
                    "  ~ {} moves from {} to {}",
                    m.object,
                    place(b),
                    place(h)
                );
            }
        }
        for i in &app.images {
            let _ = writeln!(
                out,
                "  image of {} {}: {} -> {}",
                i.object, i.container, i.base, i.head
            );
        }
        for hook in &app.changed_hooks {
            if let Some(ObjectChange::Changed { manifest: m, .. }) =
                app.objects.iter().find(|c| c.object() == hook)
            {
                let _ = writeln!(
                    out,
                    "  hook {hook} changed (Argo CD's diff leaves hooks out); on the head it is:"
                );
                for line in manifest(m).lines() {
                    let _ = writeln!(out, "      {line}");
                }
            }
        }
        let (added, changed, removed) = counts(&app.objects);
        let _ = writeln!(
            out,
            "  objects: {added} added, {changed} changed, {removed} removed"
        );
        for o in &app.objects {
            match o {
                ObjectChange::Added { object, .. } => {
                    let _ = writeln!(out, "    + {object}");
                }
                ObjectChange::Removed { object, .. } => {
                    let _ = writeln!(out, "    - {object}");
                }
                ObjectChange::Changed { object, fields, .. } => {
                    let _ = writeln!(out, "    ~ {object}");
                    for field in fields {
                        let _ = writeln!(
                            out,
                            "        {}: {} -> {}",
                            field.path,
                            short(&field.base),
                            short(&field.head)
                        );
                    }
                }
            }
        }
    }
    let list = |out: &mut String, title: &str, findings: &[Finding]| {
        let (findings, hidden) = shown(findings, show_info);
        if hidden > 0 {
            let _ = writeln!(
                out,
                "\n{title}: {hidden} info not shown (--show-info: facts whose acting on changes no sync)"
            );
        }
        if findings.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{title} ({}):", findings.len());
        for f in findings {
            let _ = writeln!(
                out,
                "  {} {} {} {} {} {}",
                f.severity.to_string().to_uppercase(),
                action(f.action),
                f.rule_id,
                f.resource.kind,
                f.resource
                    .namespace
                    .as_ref()
                    .map(|n| format!("{n}/{}", f.resource.name))
                    .unwrap_or_else(|| f.resource.name.clone()),
                location(f)
            );
            let _ = writeln!(out, "    {}", f.message);
        }
    };
    list(&mut out, "New findings", &f.new);
    list(&mut out, "Fixed findings", &f.fixed);
    list(
        &mut out,
        "Findings of the base not judged again (their Application is not judged on the head)",
        &f.not_judged_on_head,
    );
    if !f.unchanged.is_empty() {
        let _ = writeln!(
            out,
            "\nUnchanged findings: {} (already on the base; they fail the run only with --fail-on-existing)",
            f.unchanged.len()
        );
        for x in &f.unchanged {
            let _ = writeln!(
                out,
                "  {} {} {}",
                x.rule_id, x.resource.kind, x.resource.name
            );
        }
    }
    if !review.base_errors.is_empty() {
        let _ = writeln!(
            out,
            "\nErrors on the base revision ({}, not counted):",
            review.base_errors.len()
        );
        for e in &review.base_errors {
            let _ = writeln!(out, "  {e}");
        }
    }
    out
}
