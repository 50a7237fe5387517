//! The review as one pull-request comment: the verdict and the findings first, then one
//! `<details>` per Application, all within a byte budget (GitHub refuses comments over 65,536
//! characters). What does not fit is left out with a note saying so; an Application that does
//! not fit in full is shown without its manifests before it is left out.

use std::fmt::Write;

use super::{
    abbrev, action, counts, failing_not_judged, location, manifest, not_judged, place,
    reasons_shown, short,
};
use crate::finding::Finding;
use crate::review::{AppReview, ObjectChange, Review};

/// The first line of every comment, so an integration finds its own comment to update.
pub const MARKER: &str = "<!-- syncguard-review -->";

/// Room kept for the truncation note.
const NOTE_ROOM: usize = 400;

/// The comment, at most `budget` bytes long.
pub fn render_markdown(review: &Review, blocking: &[&Finding], budget: usize) -> String {
    let mut out = String::new();
    let f = &review.findings;
    let _ = writeln!(out, "{MARKER}\n## syncguard review\n");
    // The verdict line never says "no new blocking findings" while the run fails: what could
    // not be judged is said first, then listed, before anything else.
    let failing = failing_not_judged(review);
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            format!("{n} {one}")
        } else {
            format!("{n} {many}")
        }
    };
    let blocking_line = format!(
        "{} — this change would break a sync.",
        plural(blocking.len(), "blocking finding", "blocking findings")
    );
    if review.incomplete() {
        let mut what = Vec::new();
        if failing > 0 {
            what.push(plural(failing, "Application", "Applications"));
        }
        if !review.errors.is_empty() {
            what.push(plural(review.errors.len(), "file", "files"));
        }
        let _ = writeln!(
            out,
            "**Not judged: {} could not be judged — this review is incomplete and fails.**{}\n",
            what.join(" and "),
            if blocking.is_empty() {
                String::new()
            } else {
                format!(" Also **{blocking_line}**")
            }
        );
    } else if !blocking.is_empty() {
        let _ = writeln!(out, "**{blocking_line}**\n");
    } else if review.not_judged.iter().any(|n| n.on_head()) {
        let _ = writeln!(
            out,
            "**No new blocking findings among the Applications judged;** {} not judged, as on the base or accepted by the baseline.\n",
            plural(
                review.not_judged.iter().filter(|n| n.on_head()).count(),
                "Application",
                "Applications"
            )
        );
    } else {
        let _ = writeln!(out, "**No new blocking findings.**\n");
    }
    let listed = not_judged(review);
    if !listed.is_empty() {
        let _ = writeln!(out, "### Not judged ({})\n", listed.len());
        for n in listed {
            let _ = writeln!(
                out,
                "- **{}**{} — {}{}",
                cell(&n.id.to_string()),
                n.origin
                    .as_ref()
                    .map(|o| format!(" (`{o}`)"))
                    .unwrap_or_default(),
                n.summary(),
                reasons_shown(n)
                    .iter()
                    .map(|r| format!("<br>{}", cell(r)))
                    .collect::<String>()
            );
        }
        out.push('\n');
    }
    if !review.errors.is_empty() {
        let _ = writeln!(out, "### Not read on the head revision\n");
        for e in &review.errors {
            let _ = writeln!(out, "- {}", cell(e));
        }
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "base `{}` → head `{}` · {} of {} Applications changed · findings: {} new, {} fixed, {} unchanged\n",
        abbrev(&review.base),
        abbrev(&review.head),
        review.apps.len(),
        review.apps_total,
        f.new.len(),
        f.fixed.len(),
        f.unchanged.len()
    );
    if let Some(server) = &review.server {
        let _ = writeln!(
            out,
            "Judged on a throwaway Kubernetes {} API server: the base revision applied, the head dry-run against it ({} refused).\n",
            server.kubernetes, server.refused
        );
    }
    if !review.apps.is_empty() {
        let _ = writeln!(
            out,
            "| Application | change | sync plan | objects (+ ~ -) |\n|---|---|---|---|"
        );
        for a in &review.apps {
            let (added, changed, removed) = counts(&a.objects);
            let _ = writeln!(
                out,
                "| {}{} | {} | {} | {added} {changed} {removed} |",
                cell(&format!("{}/{}", a.id.namespace, a.id.name)),
                if a.application_set {
                    " (ApplicationSet)"
                } else {
                    ""
                },
                a.status,
                plan_summary(a)
            );
        }
        out.push('\n');
    }
    findings(&mut out, "New findings", &f.new);
    findings(&mut out, "Fixed findings", &f.fixed);
    findings(
        &mut out,
        "Findings of the base not judged again (Application not judged on the head)",
        &f.not_judged_on_head,
    );
    if out.len() + NOTE_ROOM > budget {
        return truncate(out, budget, review.apps.len());
    }
    let mut shown = 0;
    for (n, app) in review.apps.iter().enumerate() {
        let full = details(app, true);
        let part = if out.len() + full.len() + NOTE_ROOM <= budget {
            full
        } else {
            let brief = details(app, false);
            if out.len() + brief.len() + NOTE_ROOM > budget {
                let _ = writeln!(
                    out,
                    "\n> **Truncated:** {} of {} Applications are not shown here: the comment \
                     would pass its budget of {budget} bytes. Run `syncguard review` locally, or \
                     read its JSON output, for all of them.",
                    review.apps.len() - n,
                    review.apps.len()
                );
                return out;
            }
            brief
        };
        out.push_str(&part);
        shown += 1;
    }
    let _ = shown;
    out
}

/// Cuts a comment whose head alone passes the budget at a line boundary, with the note.
fn truncate(mut out: String, budget: usize, apps: usize) -> String {
    let keep = budget.saturating_sub(NOTE_ROOM);
    let mut cut = keep.min(out.len());
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(line) = out[..cut].rfind('\n') {
        cut = line + 1;
    }
    out.truncate(cut);
    let _ = writeln!(
        out,
        "\n> **Truncated:** the findings alone pass the comment's budget of {budget} bytes; none \
         of the {apps} Applications' diffs are shown. Run `syncguard review` locally, or read its \
         JSON output, for everything."
    );
    out
}

fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

fn plan_summary(a: &AppReview) -> String {
    if a.application_set {
        return "generates Applications".into();
    }
    let p = &a.plan;
    let hooks = p
        .added
        .iter()
        .filter(|x| x.head.as_ref().is_some_and(|h| h.hook))
        .count();
    let mut parts = Vec::new();
    if hooks > 0 {
        parts.push(format!("{hooks} hook(s) added"));
    }
    if p.added.len() > hooks {
        parts.push(format!("{} object(s) added", p.added.len() - hooks));
    }
    if !p.removed.is_empty() {
        parts.push(format!("{} removed", p.removed.len()));
    }
    if !p.moved.is_empty() {
        parts.push(format!("{} moved", p.moved.len()));
    }
    if !a.changed_hooks.is_empty() {
        parts.push(format!("{} hook(s) changed", a.changed_hooks.len()));
    }
    if p.steps_changed() {
        parts.push(if p.base_steps.len() == p.head_steps.len() {
            "steps changed".to_string()
        } else {
            format!("{} → {} steps", p.base_steps.len(), p.head_steps.len())
        });
    }
    if parts.is_empty() {
        "same order".into()
    } else {
        parts.join(", ")
    }
}

fn findings(out: &mut String, title: &str, list: &[Finding]) {
    if list.is_empty() {
        return;
    }
    let _ = writeln!(out, "### {title} ({})\n", list.len());
    for f in list {
        let object = f
            .resource
            .namespace
            .as_ref()
            .map(|n| format!("{n}/{}", f.resource.name))
            .unwrap_or_else(|| f.resource.name.clone());
        let at = location(f);
        let at = if at.is_empty() {
            String::new()
        } else {
            format!(" — `{}`", at)
        };
        let _ = writeln!(
            out,
            "- **{}** ({}, {}) {} `{object}`{at}<br>{}",
            f.rule_id,
            action(f.action),
            f.severity,
            f.resource.kind,
            cell(&f.message)
        );
    }
    out.push('\n');
}

/// One Application's `<details>`: plan diff, changed hooks in full and the manifest diff
/// (`full`), or the plan diff and the list of objects only.
fn details(app: &AppReview, full: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<details><summary><b>{}</b> — {} ({})</summary>\n",
        cell(&format!("{}/{}", app.id.namespace, app.id.name)),
        app.status,
        plan_summary(app)
    );
    if let Some(origin) = &app.origin {
        let _ = writeln!(out, "Defined in `{origin}`.\n");
    }
    let p = &app.plan;
    if p.steps_changed() {
        let _ = writeln!(out, "| | steps |\n|---|---|");
        for (side, steps) in [("base", &p.base_steps), ("head", &p.head_steps)] {
            let s: Vec<String> = steps
                .iter()
                .map(|x| format!("{} {} (waits for {})", x.phase, x.wave, x.waits_for))
                .collect();
            let shown = if s.is_empty() {
                "(none)".to_string()
            } else {
                s.join(" → ")
            };
            let _ = writeln!(out, "| {side} | {} |", cell(&shown));
        }
        out.push('\n');
    }
    for a in &p.added {
        if let Some(h) = &a.head {
            let hook = if h.hook { " (hook)" } else { "" };
            let _ = writeln!(
                out,
                "- ➕ `{}`{hook} joins the sync at {}",
                a.object,
                place(h)
            );
        }
    }
    for r in &p.removed {
        if let Some(b) = &r.base {
            let _ = writeln!(
                out,
                "- ➖ `{}` leaves the sync (was at {})",
                r.object,
                place(b)
            );
        }
    }
    for m in &p.moved {
        if let (Some(b), Some(h)) = (&m.base, &m.head) {
            let _ = writeln!(
                out,
                "- ↕️ `{}` moves from {} to {}",
                m.object,
                place(b),
                place(h)
            );
        }
    }
    out.push('\n');
    if full {
        for hook in &app.changed_hooks {
            if let Some(ObjectChange::Changed { manifest: m, .. }) =
                app.objects.iter().find(|c| c.object() == hook)
            {
                let _ = writeln!(
                    out,
                    "Hook `{hook}` changed (Argo CD's own diff leaves hooks out); on the head:\n\n```json\n{}\n```\n",
                    manifest(m)
                );
            }
        }
    }
    let _ = writeln!(out, "```diff");
    for o in &app.objects {
        match o {
            ObjectChange::Added { object, .. } => {
                let _ = writeln!(out, "+ {object}");
            }
            ObjectChange::Removed { object, .. } => {
                let _ = writeln!(out, "- {object}");
            }
            ObjectChange::Changed { object, fields, .. } => {
                let _ = writeln!(out, "! {object}");
                if full {
                    for f in fields {
                        let _ = writeln!(out, "-   {}: {}", f.path, short(&f.base));
                        let _ = writeln!(out, "+   {}: {}", f.path, short(&f.head));
                    }
                }
            }
        }
    }
    let _ = writeln!(out, "```\n\n</details>\n");
    out
}
