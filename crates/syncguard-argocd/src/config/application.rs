//! `argoproj.io/Application`: the one reading of an Application object in syncguard (Argo CD
//! 3.6.1, `ApplicationSpec` in `pkg/apis/application/v1alpha1/types.go`).
//!
//! The serialised form is the rules' `input.app` (policies/README.md); the fields marked
//! `serde(skip)` are for the Rust side only (render, `explain`, the settings facts), so the rule
//! input keeps its shape and its cost.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::ignore::{IgnoreRule, Layer};
use super::source::Source;
use super::status::ApplicationStatus;
use super::{Fields, Notes};
use crate::model::Resource;
use crate::model::argo::SyncOptions;

/// The keys of `ApplicationSpec`.
const SPEC_KEYS: &[&str] = &[
    "source",
    "destination",
    "project",
    "syncPolicy",
    "ignoreDifferences",
    "info",
    "revisionHistoryLimit",
    "sources",
    "sourceHydrator",
];

/// `spec.destination`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destination {
    /// `server`.
    pub server: String,
    /// `name` (a cluster's name; exclusive with `server`).
    pub name: String,
    /// `namespace`.
    pub namespace: String,
}

/// An `argoproj.io` Application.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Application {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (empty when unset: the control-plane namespace).
    #[serde(skip)]
    pub namespace: String,
    /// `spec.destination.namespace` (empty when unset).
    pub destination_namespace: String,
    /// `spec.destination.server`, else `spec.destination.name` (empty when neither is set).
    pub destination_cluster: String,
    /// `spec.destination` as written.
    #[serde(skip)]
    pub destination: Destination,
    /// `spec.project` (empty when unset).
    pub project: String,
    /// `spec.syncPolicy.syncOptions`.
    pub sync_options: SyncOptions,
    /// `spec.syncPolicy.automated` is set (and not `enabled: false`).
    pub automated: bool,
    /// `spec.syncPolicy.automated.selfHeal`.
    pub self_heal: bool,
    /// `spec.syncPolicy.automated.prune`.
    pub auto_prune: bool,
    /// `spec.syncPolicy.automated.allowEmpty`.
    #[serde(skip)]
    pub allow_empty: bool,
    /// `spec.ignoreDifferences`, as written (the rules' view).
    pub ignore_differences: Vec<Value>,
    /// `spec.ignoreDifferences`, typed.
    #[serde(skip)]
    pub ignore_rules: Vec<IgnoreRule>,
    /// `spec.syncPolicy.managedNamespaceMetadata` is set.
    pub managed_namespace_metadata: bool,
    /// The sources in order: `spec.sources` when it is non-empty, else `spec.source`.
    #[serde(skip)]
    pub sources: Vec<Source>,
    /// `spec.sources` was used (a multi-source Application).
    #[serde(skip)]
    pub multi_source: bool,
    /// `metadata.annotations`.
    #[serde(skip)]
    pub annotations: BTreeMap<String, String>,
    /// `metadata.uid` (Events refer to it), when the object came from a cluster.
    #[serde(skip)]
    pub uid: Option<String>,
    /// `metadata.resourceVersion`, when the object came from a cluster.
    #[serde(skip)]
    pub resource_version: Option<String>,
    /// `status`, as a cluster serves it (empty for an Application read from Git).
    #[serde(skip)]
    pub status: ApplicationStatus,
    /// What reading found that Argo CD's schema does not hold.
    #[serde(skip)]
    pub notes: Notes,
}

/// True for an `argoproj.io` Application object.
pub fn is_application(r: &Resource) -> bool {
    r.group == "argoproj.io" && r.kind == "Application"
}

impl Application {
    /// Reads an Application object; `None` for any other kind.
    pub fn from_resource(r: &Resource) -> Option<Application> {
        is_application(r).then(|| Application::read(&r.raw))
    }

    /// Reads an Application as a cluster serves it (a watch event, a list item): `None` for an
    /// object that is not an `argoproj.io` Application or has no name.
    pub fn from_value(raw: &Value) -> Option<Application> {
        let api_version = raw.get("apiVersion").and_then(Value::as_str)?;
        if !api_version.starts_with("argoproj.io/")
            || raw.get("kind").and_then(Value::as_str) != Some("Application")
        {
            return None;
        }
        let app = Application::read(raw);
        (!app.name.is_empty()).then_some(app)
    }

    /// Reads an Application from its JSON (any kind is read as one).
    pub fn read(raw: &Value) -> Application {
        let mut notes = Notes::default();
        let mut meta = Fields::of(raw.get("metadata"), "/metadata", &mut notes);
        let name = meta.string("name", &mut notes);
        let namespace = meta.string("namespace", &mut notes);
        let annotations = meta.string_map("annotations", &mut notes);
        let uid = meta.str("uid", &mut notes).map(str::to_string);
        let resource_version = meta.str("resourceVersion", &mut notes).map(str::to_string);
        // Other metadata is the API server's business, not Argo CD's.

        let mut spec = Fields::of(raw.get("spec"), "/spec", &mut notes);
        let project = spec.string("project", &mut notes);
        let destination = {
            let mut d = spec.block("destination", &mut notes);
            let dest = Destination {
                server: d.string("server", &mut notes),
                name: d.string("name", &mut notes),
                namespace: d.string("namespace", &mut notes),
            };
            d.finish(&mut notes);
            dest
        };

        let mut policy = spec.block("syncPolicy", &mut notes);
        let sync_options = SyncOptions::from_items(policy.strings("syncOptions", &mut notes));
        let (automated, self_heal, auto_prune, allow_empty) = {
            let mut a = policy.block("automated", &mut notes);
            let present = a.present();
            let enabled = a.bool("enabled", &mut notes).unwrap_or(true);
            let flags = (
                present && enabled,
                a.bool("selfHeal", &mut notes).unwrap_or(false),
                a.bool("prune", &mut notes).unwrap_or(false),
                a.bool("allowEmpty", &mut notes).unwrap_or(false),
            );
            a.finish(&mut notes);
            flags
        };
        let managed_namespace_metadata = policy.value("managedNamespaceMetadata").is_some();
        policy.known(&["retry"]);
        policy.finish(&mut notes);

        let entries_at = spec.pointer("ignoreDifferences");
        let entries = spec.list("ignoreDifferences", &mut notes);
        let ignore_rules = entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                IgnoreRule::read(
                    e,
                    &format!("{entries_at}/{i}"),
                    Layer::Application,
                    &mut notes,
                )
            })
            .collect();

        let sources_at = spec.pointer("sources");
        let many: Vec<Source> = spec
            .list("sources", &mut notes)
            .iter()
            .enumerate()
            .map(|(i, s)| Source::read(s, &format!("{sources_at}/{i}"), &mut notes))
            .collect();
        let single_at = spec.pointer("source");
        let single = spec.value("source").filter(|v| v.is_object());
        let multi_source = !many.is_empty();
        let sources = if multi_source {
            many
        } else {
            single
                .map(|s| Source::read(s, &single_at, &mut notes))
                .into_iter()
                .collect()
        };
        spec.known(SPEC_KEYS);
        spec.finish(&mut notes);
        let status = ApplicationStatus::read(raw.get("status"), &mut notes);

        Application {
            destination_namespace: destination.namespace.clone(),
            destination_cluster: if destination.server.is_empty() {
                destination.name.clone()
            } else {
                destination.server.clone()
            },
            destination,
            name,
            namespace,
            project,
            sync_options,
            automated,
            self_heal,
            auto_prune,
            allow_empty,
            ignore_differences: entries.to_vec(),
            ignore_rules,
            managed_namespace_metadata,
            sources,
            multi_source,
            annotations,
            uid,
            resource_version,
            status,
            notes,
        }
    }

    /// `namespace/name`, for messages.
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Argo CD's instance name (`InstanceName`): the name, prefixed with `<namespace>_` when the
    /// Application lives outside the control-plane namespace. It names the app in tracking ids
    /// and in `ARGOCD_APP_NAME`.
    pub fn instance_name(&self, control_plane_namespace: &str) -> String {
        if self.namespace.is_empty() || self.namespace == control_plane_namespace {
            self.name.clone()
        } else {
            format!("{}_{}", self.namespace, self.name)
        }
    }

    /// True when a sync keeps the live values of the fields ignoreDifferences hides.
    pub fn respects_ignore_differences(&self) -> bool {
        self.sync_options.has("RespectIgnoreDifferences=true")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_is_read_once_with_sources_rules_and_unknown_fields() {
        let a = Application::read(&json!({
            "metadata": {"name": "web", "namespace": "team"},
            "spec": {
                "project": "p",
                "destination": {"server": "https://kubernetes.default.svc", "namespace": "shop"},
                "source": {"repoURL": "https://x/ignored.git", "path": "ignored"},
                "sources": [{"repoURL": "https://x/repo.git", "path": "apps", "include": "*.yaml"},
                            {"repoURL": "https://x/values.git", "ref": "values"}],
                "syncPolicy": {"automated": {"selfHeal": true}, "syncOptions": ["RespectIgnoreDifferences=true"]},
                "ignoreDifferences": [{"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]}],
                "syncOptions": ["ServerSideApply=true"]
            }
        }));
        assert!(a.multi_source);
        assert_eq!(a.sources.len(), 2);
        assert_eq!(a.sources[1].ref_name, "values");
        assert_eq!(a.instance_name("argocd"), "team_web");
        assert!(a.automated && a.self_heal && !a.auto_prune);
        assert!(a.respects_ignore_differences());
        assert_eq!(a.ignore_rules[0].at, "/spec/ignoreDifferences/0");
        assert_eq!(
            a.notes.unknown,
            vec![
                "/spec/sources/0/include".to_string(),
                "/spec/syncOptions".into()
            ]
        );
        assert_eq!(a.destination_cluster, "https://kubernetes.default.svc");
    }

    #[test]
    fn automated_enabled_false_turns_auto_sync_off() {
        let a = Application::read(
            &json!({"spec": {"syncPolicy": {"automated": {"enabled": false, "prune": true}}}}),
        );
        assert!(!a.automated);
    }
}
