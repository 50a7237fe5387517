//! `syncguard explain` as text and JSON: a view of [`Explanation`].

use std::fmt::Write as _;

use crate::config::ignore::{IgnoreRule, Layer};
use crate::model::explain::{Explanation, ObjectExplanation};

/// The explanation as pretty JSON.
pub fn render_json(e: &Explanation) -> serde_json::Result<String> {
    serde_json::to_string_pretty(e)
}

/// The explanation as text: settings layer by layer, then each object.
pub fn render_text(e: &Explanation) -> String {
    let mut out = String::new();
    let ns = if e.namespace.is_empty() {
        String::new()
    } else {
        format!(" ({})", e.namespace)
    };
    let cluster = if e.destination.server.is_empty() {
        &e.destination.name
    } else {
        &e.destination.server
    };
    let _ = writeln!(
        out,
        "Application {}{ns} — project {}, destination {} namespace {}, Argo CD {}",
        e.application,
        or_dash(&e.project),
        or_dash(cluster),
        or_dash(&e.destination.namespace),
        e.argocd
    );
    let s = &e.settings;
    let _ = writeln!(out, "\nSettings, layer by layer");
    if s.system_ignore_differences.is_empty() {
        let _ = writeln!(
            out,
            "  argocd-cm     no system-level ignoreDifferences known"
        );
    }
    for r in &s.system_ignore_differences {
        let _ = writeln!(out, "  argocd-cm     {}", rule_line(r));
    }
    let options = if s.sync_options.is_empty() {
        "none".to_string()
    } else {
        s.sync_options.join(", ")
    };
    let _ = writeln!(out, "  Application   syncOptions: {options}");
    if !s.unknown_sync_options.is_empty() {
        let _ = writeln!(
            out,
            "                not known to Argo CD (ignored): {}",
            s.unknown_sync_options.join(", ")
        );
    }
    let auto = if s.automated {
        let mut flags = vec!["on"];
        if s.prune {
            flags.push("prune");
        }
        if s.self_heal {
            flags.push("selfHeal");
        }
        flags.join(", ")
    } else {
        "off".to_string()
    };
    let _ = writeln!(out, "                automated sync: {auto}");
    for r in &s.ignore_differences {
        let _ = writeln!(out, "                {}", rule_line(r));
    }
    if !e.unknown_fields.is_empty() {
        let _ = writeln!(
            out,
            "                not in Argo CD's schema (dropped by the API server): {}",
            e.unknown_fields.join(", ")
        );
    }
    let _ = writeln!(out, "\nObjects ({})", e.objects.len());
    for o in &e.objects {
        object(&mut out, o, s.respect_ignore_differences);
    }
    if !e.unmatched_rules.is_empty() {
        let _ = writeln!(out, "\nRules that apply to no object here");
        for at in &e.unmatched_rules {
            let _ = writeln!(out, "  {at}");
        }
    }
    out
}

fn object(out: &mut String, o: &ObjectExplanation, respect: bool) {
    let group = if o.group.is_empty() { "core" } else { &o.group };
    let place = if o.namespace.is_empty() {
        o.name.clone()
    } else {
        format!("{}/{}", o.namespace, o.name)
    };
    let _ = writeln!(out, "  {group}/{} {place}", o.kind);
    if !o.sync_options.is_empty() {
        let items: Vec<String> = o
            .sync_options
            .iter()
            .map(|x| format!("{} ({})", x.option, x.from))
            .collect();
        let _ = writeln!(out, "    sync options: {}", items.join(", "));
    }
    if !o.compare_options.is_empty() {
        let _ = writeln!(out, "    compare options: {}", o.compare_options.join(", "));
    }
    if o.rules.is_empty() {
        let _ = writeln!(out, "    nothing ignored");
    }
    for r in &o.rules {
        let mut what = r.hides.clone();
        what.extend(
            r.managers
                .iter()
                .map(|m| format!("the fields {m} owns on the live object")),
        );
        let hides = if what.is_empty() {
            "nothing here".to_string()
        } else {
            what.join(", ")
        };
        let _ = writeln!(out, "    {} {}: hides {hides}", r.layer, r.at);
    }
    if respect && !o.kept_at_sync.is_empty() {
        let _ = writeln!(
            out,
            "    a sync keeps the live value of: {}",
            o.kept_at_sync.join(", ")
        );
    }
    if !o.frozen_lists.is_empty() {
        let _ = writeln!(
            out,
            "    a sync takes these lists whole from live (Git changes to them never apply): {}",
            o.frozen_lists.join(", ")
        );
    }
}

fn rule_line(r: &IgnoreRule) -> String {
    let at = match &r.layer {
        Layer::System { key } => key.clone(),
        _ => r.at.clone(),
    };
    let group = if r.group.is_empty() { "core" } else { &r.group };
    let mut what = format!("{group}/{}", or_dash(&r.kind));
    if !r.namespace.is_empty() {
        let _ = write!(what, " {}/", r.namespace);
    } else if !r.name.is_empty() {
        what.push(' ');
    }
    what.push_str(&r.name);
    let mut paths: Vec<String> = r.json_pointers.clone();
    paths.extend(r.jq_path_expressions.iter().map(|e| format!("jq {e}")));
    paths.extend(
        r.managed_fields_managers
            .iter()
            .map(|m| format!("fields managed by {m} (live only)")),
    );
    format!("{at}: {what}: {}", paths.join(", "))
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}
