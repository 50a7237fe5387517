//! The review as pull-request comments. In order: the verdict and what could not be judged
//! (Applications not judged, files not read), a summary table (per Application: objects added,
//! changed and removed, images changed, blocking findings, and the total), the blocking
//! findings, the plan diff and the manifest diff of each Application, then the findings that
//! do not block, those fixed, and those of the base not judged again. Nothing is left out: a
//! review longer than one comment continues in further comments ([`super::parts`]).

use std::collections::BTreeMap;
use std::fmt::Write;

use super::parts::{Block, lines, split};
use super::{
    abbrev, action, counts, failing_not_judged, location, manifest, not_judged, place,
    reasons_shown, short, shown,
};
use crate::finding::Finding;
use crate::review::{AppReview, ImageChange, ObjectChange, Review};

/// The comment as parts of at most `budget` bytes each, in order; one when it fits.
pub fn render_markdown(
    review: &Review,
    blocking: &[&Finding],
    budget: usize,
    show_info: bool,
) -> Vec<String> {
    split(&blocks(review, blocking, show_info), budget)
}

/// The comment's blocks, each kept in one part when it fits.
fn blocks(review: &Review, blocking: &[&Finding], show_info: bool) -> Vec<Block> {
    let f = &review.findings;
    let mut out = vec![lines(&verdict(review, blocking))];
    out.push(lines(&not_judged_list(review)));
    if !review.errors.is_empty() {
        let mut b = format!(
            "### Not read on the head revision ({})\n\n",
            review.errors.len()
        );
        for e in &review.errors {
            let _ = writeln!(b, "- {}", cell(e));
        }
        b.push('\n');
        out.push(lines(&b));
    }
    out.push(lines(&summary(review, blocking)));
    out.push(lines(&findings("Blocking findings", blocking)));
    let plans: Vec<&AppReview> = review
        .apps
        .iter()
        .filter(|a| !a.plan.is_empty() || !a.changed_hooks.is_empty())
        .collect();
    for (i, app) in plans.iter().enumerate() {
        let mut b = String::new();
        if i == 0 {
            let _ = writeln!(b, "### Sync plan changes ({})\n", plans.len());
        }
        b.push_str(&plan_details(app));
        out.push(lines(&b));
    }
    let diffs: Vec<&AppReview> = review
        .apps
        .iter()
        .filter(|a| !a.objects.is_empty())
        .collect();
    for (i, app) in diffs.iter().enumerate() {
        let mut b = Vec::new();
        if i == 0 {
            b.push(format!("### Manifest changes ({})\n\n", diffs.len()));
        }
        b.extend(manifest_details(app));
        out.push(b);
    }
    let (new, new_hidden) = shown(&f.new, show_info);
    let others: Vec<&Finding> = new
        .into_iter()
        .filter(|n| !blocking.iter().any(|b| std::ptr::eq(*b, *n)))
        .collect();
    out.push(lines(&findings(
        "Other new findings, not blocking",
        &others,
    )));
    let (fixed, fixed_hidden) = shown(&f.fixed, show_info);
    out.push(lines(&findings("Fixed findings", &fixed)));
    if new_hidden + fixed_hidden > 0 {
        out.push(lines(&format!(
            "{} new and {} fixed `info` findings are not shown: facts whose acting on changes no sync (in the JSON and SARIF reports, or with `--show-info`).\n\n",
            new_hidden, fixed_hidden
        )));
    }
    out.push(lines(&findings(
        "Findings of the base not judged again (Application not judged on the head)",
        &f.not_judged_on_head.iter().collect::<Vec<_>>(),
    )));
    out
}

/// The verdict line. It never says "no new blocking findings" while the run fails: what could
/// not be judged is said first.
fn verdict(review: &Review, blocking: &[&Finding]) -> String {
    let failing = failing_not_judged(review);
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
        format!(
            "**Not judged: {} could not be judged — this review is incomplete and fails.**{}\n\n",
            what.join(" and "),
            if blocking.is_empty() {
                String::new()
            } else {
                format!(" Also **{blocking_line}**")
            }
        )
    } else if !blocking.is_empty() {
        format!("**{blocking_line}**\n\n")
    } else if review.not_judged.iter().any(|n| n.on_head()) {
        format!(
            "**No new blocking findings among the Applications judged;** {} not judged, as on the base or accepted by the baseline.\n\n",
            plural(
                review.not_judged.iter().filter(|n| n.on_head()).count(),
                "Application",
                "Applications"
            )
        )
    } else {
        "**No new blocking findings.**\n\n".to_string()
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// The Applications not judged, each with its identity, where it is defined and why.
fn not_judged_list(review: &Review) -> String {
    let listed = not_judged(review);
    let mut out = String::new();
    if listed.is_empty() {
        return out;
    }
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
    out
}

/// The revisions and counts, and the table of the changed Applications with a total row.
fn summary(review: &Review, blocking: &[&Finding]) -> String {
    let f = &review.findings;
    let mut out = String::new();
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
    if review.apps.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "| Application | change | sync plan | added | changed | removed | images changed | blocking findings |\n|---|---|---|--:|--:|--:|---|--:|"
    );
    let of_app = |a: &AppReview| {
        blocking
            .iter()
            .filter(|f| f.application.as_deref() == Some(a.instance.as_str()))
            .count()
    };
    let mut total = (0, 0, 0);
    let mut attributed = 0;
    for a in &review.apps {
        let (added, changed, removed) = counts(&a.objects);
        total = (total.0 + added, total.1 + changed, total.2 + removed);
        let mine = of_app(a);
        attributed += mine;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {added} | {changed} | {removed} | {} | {mine} |",
            cell(&a.id.to_string()),
            a.status,
            plan_summary(a),
            images(a.images.iter())
        );
    }
    if blocking.len() > attributed {
        let _ = writeln!(
            out,
            "| (outside these Applications) | | | | | | | {} |",
            blocking.len() - attributed
        );
    }
    let _ = writeln!(
        out,
        "| **total: {}** | | | **{}** | **{}** | **{}** | {} | **{}** |\n",
        plural(review.apps.len(), "Application", "Applications"),
        total.0,
        total.1,
        total.2,
        images(review.apps.iter().flat_map(|a| a.images.iter())),
        blocking.len()
    );
    out
}

/// Image changes in a table cell: each distinct `old` → `new` (with how many containers when
/// more than one) up to three, else how many distinct changes there are.
fn images<'a>(changes: impl Iterator<Item = &'a ImageChange>) -> String {
    let mut distinct: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for c in changes {
        *distinct.entry((&c.base, &c.head)).or_default() += 1;
    }
    if distinct.is_empty() {
        return "0".into();
    }
    if distinct.len() > 3 {
        let containers: usize = distinct.values().sum();
        return format!(
            "{} changes in {containers} containers (see the manifest diff)",
            distinct.len()
        );
    }
    distinct
        .iter()
        .map(|((old, new), n)| {
            let times = if *n > 1 {
                format!(" ({n} containers)")
            } else {
                String::new()
            };
            format!("`{}` → `{}`{times}", cell(old), cell(new))
        })
        .collect::<Vec<_>>()
        .join("<br>")
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

/// A list of findings under `title`; nothing when there are none.
fn findings(title: &str, list: &[&Finding]) -> String {
    let mut out = String::new();
    if list.is_empty() {
        return out;
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
    out
}

/// The opening of one Application's `<details>`, and where it is defined.
fn opening(app: &AppReview, summary: &str) -> String {
    let mut out = format!(
        "<details><summary><b>{}</b> — {}</summary>\n\n",
        cell(&app.id.to_string()),
        summary
    );
    if let Some(origin) = &app.origin {
        let _ = writeln!(out, "Defined in `{origin}`.\n");
    }
    out
}

/// One Application's plan diff: the steps when they changed, the objects joining, leaving or
/// moving within the sync, and the hooks whose content changed, in full.
fn plan_details(app: &AppReview) -> String {
    let mut out = opening(app, &format!("{} ({})", app.status, plan_summary(app)));
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
    let mut listed = false;
    for a in &p.added {
        if let Some(h) = &a.head {
            let hook = if h.hook { " (hook)" } else { "" };
            let _ = writeln!(
                out,
                "- ➕ `{}`{hook} joins the sync at {}",
                a.object,
                place(h)
            );
            listed = true;
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
            listed = true;
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
            listed = true;
        }
    }
    if listed {
        out.push('\n');
    }
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
    out.push_str("</details>\n\n");
    out
}

/// One Application's manifest diff: each object added, removed or changed, a change as the
/// fields that differ with their old and new values. Each object is one unit, so a diff too
/// long for one comment is cut between objects.
fn manifest_details(app: &AppReview) -> Block {
    let (added, changed, removed) = counts(&app.objects);
    let mut out = lines(&opening(
        app,
        &format!(
            "{}: {added} added, {changed} changed, {removed} removed",
            app.status
        ),
    ));
    out.push("```diff\n".into());
    for o in &app.objects {
        let mut unit = String::new();
        match o {
            ObjectChange::Added { object, .. } => {
                let _ = writeln!(unit, "+ {object}");
            }
            ObjectChange::Removed { object, .. } => {
                let _ = writeln!(unit, "- {object}");
            }
            ObjectChange::Changed { object, fields, .. } => {
                let _ = writeln!(unit, "! {object}");
                for f in fields {
                    let _ = writeln!(unit, "-   {}: {}", f.path, one_line(&f.base));
                    let _ = writeln!(unit, "+   {}: {}", f.path, one_line(&f.head));
                }
            }
        }
        out.push(unit);
    }
    out.extend(lines("```\n\n</details>\n\n"));
    out
}

/// A value on one line of the diff: a string holding line breaks as a quoted JSON string, so
/// no line of it can end the code block.
fn one_line(v: &Option<serde_json::Value>) -> String {
    match v {
        Some(serde_json::Value::String(s)) if s.contains('\n') => {
            serde_json::Value::String(s.clone()).to_string()
        }
        _ => short(v),
    }
}
