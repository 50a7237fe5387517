//! `syncguard plan`: load manifests, split them by Application, plan each, render.

use std::io::Write;

use crate::cli::{PlanArgs, PlanFormat};
use crate::manifest::load_paths;
use crate::model::Resource;
use crate::model::app::{group_by_app, inferred_destination};
use crate::model::argo::{SyncFacts, SyncOptions};
use crate::model::argocd_config::{ArgoCdConfig, ConfigSource};
use crate::output::plan::{PlanReport, PlannedApp, render_json, render_text};
use crate::plan::{AppSettings, ClusterApis, PlanInput, forecast, plan};

use super::Outcome;

/// Builds the plan report for already-loaded objects (the part tests drive directly).
pub fn build_report(
    targets: Vec<Resource>,
    live: &[Resource],
    args: &PlanArgs,
    errors: Vec<String>,
) -> PlanReport {
    let facts: Vec<SyncFacts> = targets.iter().map(SyncFacts::of).collect();
    // Membership as Argo CD tracks: the release's default method, or argocd-cm's in the input.
    let config = ArgoCdConfig::from_resources(&targets, ConfigSource::Input);
    let membership = config.membership(args.argocd_version.unwrap_or_default());
    let groups = group_by_app(&targets, &facts, &membership);
    let mut applications = Vec::with_capacity(groups.len());
    for group in groups {
        let members: Vec<Resource> = group
            .members
            .iter()
            .filter_map(|&i| targets.get(i).cloned())
            .collect();
        let app = group.application.as_ref();
        let destination_namespace = args
            .dest_namespace
            .clone()
            .or_else(|| {
                app.map(|a| a.destination_namespace.clone())
                    .filter(|n| !n.is_empty())
            })
            .or_else(|| inferred_destination(&members))
            .unwrap_or_else(|| "default".to_string());
        let mut settings = AppSettings::of_application(
            app,
            &destination_namespace,
            args.argocd_version.unwrap_or_default().behaviours(),
        );
        let mut options = std::mem::take(&mut settings.sync_options).items;
        if args.create_namespace {
            options.push("CreateNamespace=true".into());
        }
        if args.prune_last {
            options.push("PruneLast=true".into());
        }
        settings.sync_options = SyncOptions::from_items(options);
        settings.revision = args.revision.clone();
        let mut input = PlanInput::new(&members, live, settings);
        input.cluster_apis = if args.require_crds {
            ClusterApis::builtin_only()
        } else {
            ClusterApis::assume_all()
        };
        let planned = plan(&input);
        // With live objects: run the sync to where it would stop if they kept their state.
        let forecast = (!live.is_empty() && planned.is_valid())
            .then(|| forecast::forecast(&input, &forecast::observed(&input)));
        applications.push(
            PlannedApp::new(group.name, destination_namespace, planned, &members)
                .with_forecast(forecast),
        );
    }
    PlanReport {
        argocd: args.argocd_version.unwrap_or_default().into(),
        applications,
        errors,
    }
}

/// The exit outcome of a plan: input errors first (exit 2), then a sync Argo CD will refuse
/// (exit 1: with `--require-crds`, a custom resource whose CRD the cluster does not serve makes
/// the whole sync invalid), else clean.
pub fn outcome_of(report: &PlanReport) -> Outcome {
    if !report.errors.is_empty() {
        Outcome::InputErrors
    } else if report.applications.iter().any(|a| !a.plan.is_valid()) {
        Outcome::Blocking
    } else {
        Outcome::Clean
    }
}

/// Runs `syncguard plan`.
pub fn run(args: &PlanArgs, color: bool, out: &mut dyn Write) -> std::io::Result<Outcome> {
    let mut loaded = load_paths(&args.input.paths);
    let render_errors = super::render::expand(&mut loaded, &args.input);
    let live = load_paths(&args.live);
    let mut errors: Vec<String> = loaded
        .errors
        .iter()
        .chain(live.errors.iter())
        .map(|e| e.to_string())
        .collect();
    errors.extend(render_errors);
    errors.extend(super::empty_input_error(&loaded, &args.input));
    let report = build_report(loaded.resources, &live.resources, args, errors);
    let outcome = outcome_of(&report);
    match args.format {
        PlanFormat::Text => out.write_all(render_text(&report, color).as_bytes())?,
        PlanFormat::Json => {
            let json = render_json(&report).map_err(std::io::Error::other)?;
            writeln!(out, "{json}")?;
        }
    }
    Ok(outcome)
}
