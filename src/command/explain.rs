//! `syncguard explain APP`: one Application's effective settings and what they do to each of
//! its objects (model::explain).

use std::io::Write;

use crate::cli::{ExplainArgs, PlanFormat};
use crate::evaluate::own_ignore_differences;
use crate::manifest::load_paths;
use crate::model::Resource;
use crate::model::app::{Application, group_by_app, is_application};
use crate::model::argo::SyncFacts;
use crate::model::argocd_config::{ArgoCdConfig, ConfigSource};
use crate::model::explain::{Context, explain};
use crate::model::version::Behaviour;
use crate::output::explain::{render_json, render_text};

use super::Outcome;

/// Runs `syncguard explain`.
pub fn run(args: &ExplainArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (loaded, render_errors) = super::render::load_and_expand(&args.input);
    let mut errors: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
    errors.extend(render_errors);
    let (mut config, config_errors) = super::argocd_config_from(&args.argocd_config);
    errors.extend(config_errors);
    let mut in_input = ArgoCdConfig::from_resources(&loaded.resources, ConfigSource::Input);
    errors.append(&mut in_input.problems);
    config.merge(in_input);

    let resources = &loaded.resources;
    let version = args.argocd_version.unwrap_or_default();
    let (namespace, name) = match args.app.split_once('/') {
        Some((ns, n)) => (Some(ns), n),
        None => (None, args.app.as_str()),
    };
    let candidates: Vec<&Resource> = resources
        .iter()
        .filter(|r| is_application(r) && r.name == name)
        .filter(|r| namespace.is_none_or(|ns| r.namespace.as_deref().unwrap_or_default() == ns))
        .collect();
    let app_resource = match candidates.as_slice() {
        [one] => *one,
        [] => {
            for e in &errors {
                eprintln!("syncguard: {e}");
            }
            anyhow::bail!(
                "no Application {} in {}",
                args.app,
                args.input.input_labels().join(", ")
            );
        }
        many => anyhow::bail!(
            "{} Applications are named {name}; name one as NAMESPACE/NAME: {}",
            many.len(),
            many.iter()
                .map(|r| format!("{}/{}", r.namespace.as_deref().unwrap_or_default(), r.name))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let app = Application::read(&app_resource.raw);
    let facts: Vec<SyncFacts> = resources.iter().map(SyncFacts::of).collect();
    let groups = group_by_app(resources, &facts, &config.membership(version));
    let members: Vec<(&Resource, &SyncFacts)> = groups
        .iter()
        .find(|g| {
            g.application
                .as_ref()
                .is_some_and(|a| a.name == app.name && a.namespace == app.namespace)
        })
        .map(|g| {
            g.members
                .iter()
                .filter_map(|&i| Some((resources.get(i)?, facts.get(i)?)))
                .filter(|(r, _)| !std::ptr::eq(*r, app_resource))
                .collect()
        })
        .unwrap_or_default();
    let annotation = |r: &Resource| -> Option<Vec<String>> {
        let v = own_ignore_differences(r)?;
        Some(
            v.as_array()?
                .iter()
                .filter_map(|p| p.as_str().map(str::to_string))
                .collect(),
        )
    };
    let live_set = load_paths(&args.live);
    errors.extend(live_set.errors.iter().map(|e| format!("--live: {e}")));
    let live = |r: &Resource| -> Option<&Resource> {
        live_set.resources.iter().find(|l| {
            l.group == r.group
                && l.kind == r.kind
                && l.name == r.name
                && (l.namespace == r.namespace
                    || r.namespace.is_none()
                        && l.namespace.as_deref() == Some(&app.destination_namespace))
        })
    };
    let ctx = Context {
        system_rules: &config.ignore_rules,
        argocd: version.to_string(),
        strategic_merge: version.has(Behaviour::RespectIgnoreDifferencesStrategicMerge),
        per_resource_ignore_differences: version.has(Behaviour::PerResourceIgnoreDifferences),
        annotation_pointers: &annotation,
        live: &live,
    };
    let explanation = explain(&app, &members, &ctx);
    match args.format {
        PlanFormat::Text => out.write_all(render_text(&explanation).as_bytes())?,
        PlanFormat::Json => writeln!(out, "{}", render_json(&explanation)?)?,
    }
    for e in &errors {
        eprintln!("syncguard: {e}");
    }
    Ok(if errors.is_empty() {
        Outcome::Clean
    } else {
        Outcome::InputErrors
    })
}
