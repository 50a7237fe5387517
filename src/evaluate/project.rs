//! `input.project`: what Argo CD makes of an AppProject's sync windows (on the AppProject), and
//! what an Application's AppProject permits it (on the Application, only when that project is
//! known). The semantics are the semantics crate's ([`syncguard_argocd::config::project`],
//! [`syncguard_argocd::config::sync_window`]); this module only lays them out for the rules
//! (SG620, SG621; policies/README.md).

use serde_json::{Value, json};
use syncguard_argocd::config::project::{AppProject, AppRequest};
use syncguard_argocd::config::sync_window::{SyncWindow, defeated_lists};

use crate::model::Resource;
use crate::model::app::is_application;
use crate::model::argocd_config::ArgoCdConfig;
use crate::model::version::ArgoCdVersion;

/// The `input.project` document of `r`, or `None` when it is neither an AppProject nor an
/// Application whose AppProject the configuration knows.
pub(super) fn project_input(
    r: &Resource,
    config: &ArgoCdConfig,
    version: ArgoCdVersion,
) -> Option<Value> {
    if r.group == "argoproj.io" && r.kind == "AppProject" {
        let p = AppProject::from_value(&r.raw);
        let windows: Vec<Value> = p
            .sync_windows
            .iter()
            .enumerate()
            .map(|(i, w)| window_input(i, w, version))
            .collect();
        return Some(json!({"sync_windows": windows}));
    }
    if !is_application(r) || !config.is_known() {
        return None;
    }
    let request = AppRequest::of_application(&r.raw);
    let project = config.projects.get(&request.project)?;
    let judged = project.judge(&request, version);
    Some(json!({
        "name": request.project,
        "destination": {
            "verdict": judged.destination.verdict,
            "assumed": judged.destination.assumed,
            "why": judged.destination.why,
            "server": request.destination.server,
            "name": request.destination.name,
            "namespace": request.destination.namespace,
        },
        "repos": judged.repos,
    }))
}

fn window_input(i: usize, w: &SyncWindow, version: ArgoCdVersion) -> Value {
    let targets_nothing =
        w.applications.is_empty() && w.namespaces.is_empty() && w.clusters.is_empty();
    json!({
        "index": i,
        "kind": w.kind,
        "kind_valid": w.kind_valid(),
        "schedule": w.schedule,
        "schedule_error": w.schedule_error(),
        "never_fires": w.never_fires(),
        "duration": w.duration,
        "duration_error": w.duration_error(),
        "never_open": w.never_open(),
        "time_zone": w.time_zone,
        "time_zone_unknown": w.time_zone_unknown(),
        "time_zone_read": version.at_least(2, 2),
        "applications": w.applications,
        "namespaces": w.namespaces,
        "clusters": w.clusters,
        "targets_nothing": targets_nothing,
        "manual_sync": w.manual_sync,
        "and_operator": w.and_operator,
        "and_in_force": w.and_in_force(version),
        "covers_every_application": w.covers_every_application(version),
        "match_all_lists": w.match_all_lists(),
        "defeated_lists": if w.and_in_force(version) { Vec::new() } else { defeated_lists(w) },
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::model::argocd_config::ConfigSource;

    fn resource(v: Value) -> Resource {
        Resource::from_value(v, None).unwrap()
    }

    #[test]
    fn an_app_project_gets_its_windows_judged() {
        let p = resource(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "team-a", "namespace": "argocd"},
            "spec": {"syncWindows": [
                {"kind": "deny", "schedule": "0 22 * * 7", "duration": "1d", "timeZone": "CEST",
                 "applications": ["*"], "namespaces": ["prod"]}
            ]}
        }));
        let doc = project_input(&p, &ArgoCdConfig::default(), ArgoCdVersion::new(3, 0)).unwrap();
        let w = &doc["sync_windows"][0];
        assert!(
            w["schedule_error"]
                .as_str()
                .unwrap()
                .contains("above maximum (6)")
        );
        assert!(
            w["duration_error"]
                .as_str()
                .unwrap()
                .contains("unknown unit")
        );
        assert_eq!(w["time_zone_unknown"], true);
        assert_eq!(w["covers_every_application"], true);
        assert_eq!(w["defeated_lists"], json!(["namespaces"]));
    }

    #[test]
    fn an_application_is_judged_only_when_its_project_is_known() {
        let project = resource(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "AppProject",
            "metadata": {"name": "team-a"},
            "spec": {"sourceRepos": ["https://github.com/org/*"],
                     "destinations": [{"server": "https://kubernetes.default.svc", "namespace": "team-a"}]}
        }));
        let config = ArgoCdConfig::from_resources([&project], ConfigSource::Input);
        let app = |project: &str| {
            resource(json!({
                "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "a"},
                "spec": {"project": project,
                         "source": {"repoURL": "https://github.com/other/repo"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "team-b"}}
            }))
        };
        let v = ArgoCdVersion::new(3, 0);
        let doc = project_input(&app("team-a"), &config, v).unwrap();
        assert_eq!(doc["destination"]["verdict"], "denied");
        assert_eq!(doc["repos"][0]["permitted"], false);
        assert!(project_input(&app("unknown"), &config, v).is_none());
        assert!(project_input(&app("team-a"), &ArgoCdConfig::default(), v).is_none());
    }
}
