//! The Argo CD configuration rules may depend on: custom health checks, system-level
//! ignoreDifferences and resource exclusions from the `argocd-cm` ConfigMap, the components'
//! flags from `argocd-cmd-params-cm`, and what each `AppProject` permits.
//!
//! The facts come from wherever they can be read: `argocd-cm`, `argocd-cmd-params-cm` and
//! `AppProject` objects in the checked input, a file named with `--argocd-config`, or the live
//! objects of the cluster (reconciler, webhook). They become `input.argocd.config`
//! (policies/README.md); without any of them the source is `none` and rules must not claim
//! anything about the configuration.
//!
//! This module only finds the objects: the settings ConfigMaps are read by the semantics
//! crate's typed readers ([`syncguard_argocd::config::settings`]: every key classified, keys
//! Argo CD never reads kept as notes with their pointer), given this crate's YAML parser for the
//! values that are YAML text. What follows is the rule input's view of them.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Resource;
use super::app::Membership;
use super::health::{HealthCheckSource, health_check_source};
pub use super::tracking::TrackingMethod;
use super::version::ArgoCdVersion;
use crate::config::ignore::IgnoreRule;
use crate::manifest::parse_yaml_value;
pub use syncguard_argocd::config::settings::{ARGOCD_CM, ARGOCD_CMD_PARAMS_CM};
use syncguard_argocd::config::settings::{
    ArgoCdSettings, CmdParams, CompareOptions, CustomizationType, Exclusion, KeyNote,
    ResourceFilters,
};

/// Where the configuration facts were read from (`input.argocd.config.source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigSource {
    /// Nothing known: rules must not claim anything about the configuration.
    #[default]
    None,
    /// `argocd-cm` or `AppProject` objects in the checked input.
    Input,
    /// A file given with `--argocd-config`.
    File,
    /// The live objects of the cluster.
    Cluster,
}

/// What one `AppProject` permits (`input.argocd.config.projects.<name>`): the semantics crate's
/// typed AppProject, with Argo CD's matching rules as methods.
pub use syncguard_argocd::config::project::AppProject as Project;

/// A key of a settings ConfigMap that does not do what it is written for
/// (`input.argocd.config.notes`), with the ConfigMap it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigNote {
    /// `argocd-cm` or `argocd-cmd-params-cm`.
    pub configmap: &'static str,
    /// The ConfigMap's namespace (empty when unset).
    pub namespace: String,
    /// Where the ConfigMap was read from.
    pub source: ConfigSource,
    /// The key, its pointer, what is wrong and the key meant.
    #[serde(flatten)]
    pub note: KeyNote,
}

/// The configuration facts of one Argo CD installation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArgoCdConfig {
    /// Where they were read from.
    pub source: ConfigSource,
    /// The typed argocd-cm (the last one read).
    pub settings: Option<ArgoCdSettings>,
    /// The typed argocd-cmd-params-cm (the last one read).
    pub cmd_params: Option<CmdParams>,
    /// `<group>/<kind>` keys (globs as written) with a custom health check that reaches objects.
    pub health_checks: BTreeSet<String>,
    /// `<group>/<kind>` keys with system-level ignoreDifferences; `*` for `.all`.
    pub ignore_differences: BTreeSet<String>,
    /// The same system-level entries with their paths, as Argo CD's normaliser applies them.
    pub ignore_rules: Vec<IgnoreRule>,
    /// `resource.exclusions` and `resource.inclusions`, typed.
    pub filters: ResourceFilters,
    /// AppProjects by name.
    pub projects: BTreeMap<String, Project>,
    /// `application.resourceTrackingMethod`, when set.
    pub tracking_method: Option<TrackingMethod>,
    /// `application.instanceLabelKey`, when set.
    pub instance_label_key: Option<String>,
    /// `resource.compareoptions` sets `ignoreAggregatedRoles: true`: the rules of a ClusterRole
    /// with an aggregationRule are left out of the comparison.
    pub ignore_aggregated_roles: bool,
    /// Keys of the settings ConfigMaps that do not do what they are written for.
    pub notes: Vec<ConfigNote>,
    /// What could not be read, one line each (reported as input errors by the CLI).
    pub problems: Vec<String>,
}

impl ArgoCdConfig {
    /// Reads `argocd-cm`, `argocd-cmd-params-cm` ConfigMaps and `AppProject`s among
    /// `resources`. The source stays `none` when there are none of them.
    pub fn from_resources<'r>(
        resources: impl IntoIterator<Item = &'r Resource>,
        source: ConfigSource,
    ) -> ArgoCdConfig {
        let mut config = ArgoCdConfig::default();
        for r in resources {
            if r.group.is_empty() && r.kind == "ConfigMap" && r.name == ARGOCD_CM {
                config.source = source;
                config.read_argocd_cm(r);
            } else if r.group.is_empty() && r.kind == "ConfigMap" && r.name == ARGOCD_CMD_PARAMS_CM
            {
                config.source = source;
                let params = CmdParams::read(r.raw.get("data"));
                config.note(ARGOCD_CMD_PARAMS_CM, r, &params.notes);
                config.cmd_params = Some(params);
            } else if r.group == "argoproj.io" && r.kind == "AppProject" && !r.name.is_empty() {
                config
                    .projects
                    .insert(r.name.clone(), Project::from_value(&r.raw));
                config.source = source;
            }
        }
        config
    }

    /// True when any configuration was read.
    pub fn is_known(&self) -> bool {
        self.source != ConfigSource::None
    }

    /// Adds what `other` knows; `other` wins for a project both name and for the typed
    /// ConfigMaps. The source becomes `other`'s when it knows anything.
    pub fn merge(&mut self, other: ArgoCdConfig) {
        if other.is_known() {
            self.source = other.source;
        }
        if other.settings.is_some() {
            self.settings = other.settings;
        }
        if other.cmd_params.is_some() {
            self.cmd_params = other.cmd_params;
        }
        self.health_checks.extend(other.health_checks);
        self.ignore_differences.extend(other.ignore_differences);
        self.ignore_rules.extend(other.ignore_rules);
        self.filters.exclusions.extend(other.filters.exclusions);
        self.filters.inclusions.extend(other.filters.inclusions);
        self.projects.extend(other.projects);
        if other.tracking_method.is_some() {
            self.tracking_method = other.tracking_method;
        }
        if other.instance_label_key.is_some() {
            self.instance_label_key = other.instance_label_key;
        }
        self.ignore_aggregated_roles |= other.ignore_aggregated_roles;
        self.notes.extend(other.notes);
        self.problems.extend(other.problems);
    }

    fn note(&mut self, configmap: &'static str, cm: &Resource, notes: &[KeyNote]) {
        self.notes.extend(notes.iter().map(|n| ConfigNote {
            configmap,
            namespace: cm.namespace.clone().unwrap_or_default(),
            source: self.source,
            note: n.clone(),
        }));
    }

    fn read_argocd_cm(&mut self, cm: &Resource) {
        let s = ArgoCdSettings::read(cm.raw.get("data"), &parse_yaml_value);
        for c in s.customizations.iter().filter(|c| c.reaches_objects()) {
            // The rule input spells a core kind `/Kind` (Argo CD keys it by the bare kind).
            let key = if c.override_key.contains('/') {
                c.override_key.clone()
            } else {
                format!("/{}", c.override_key)
            };
            match c.kind_of {
                CustomizationType::Health => {
                    self.health_checks.insert(key);
                }
                CustomizationType::IgnoreDifferences => {
                    let (group, kind) = c.group_kind();
                    self.ignore_rules.push(IgnoreRule::system(
                        &c.data_key,
                        &c.pointer,
                        group,
                        kind,
                        &c.value,
                    ));
                    self.ignore_differences.insert(if key == "*/*" {
                        "*".to_string()
                    } else {
                        key
                    });
                }
                _ => {}
            }
        }
        self.filters
            .exclusions
            .extend(s.filters.exclusions.iter().cloned());
        self.filters
            .inclusions
            .extend(s.filters.inclusions.iter().cloned());
        if s.tracking_method.is_some() {
            self.tracking_method = s.tracking_method;
        }
        if s.instance_label_key.is_some() {
            self.instance_label_key.clone_from(&s.instance_label_key);
        }
        self.ignore_aggregated_roles |= s.compare_options.ignore_aggregated_roles;
        self.problems
            .extend(s.problems.iter().map(|p| format!("{ARGOCD_CM}: {p}")));
        self.note(ARGOCD_CM, cm, &s.notes);
        self.settings = Some(s);
    }

    /// How objects are tied to Applications on `version` with this configuration: the tracking
    /// method and instance label key argocd-cm sets, else the release's defaults.
    pub fn membership(&self, version: ArgoCdVersion) -> Membership {
        Membership::of(
            version,
            self.tracking_method,
            self.instance_label_key.as_deref(),
        )
    }

    /// True when argocd-cm gives `group`/`kind` its own health check.
    pub fn has_custom_health(&self, group: &str, kind: &str) -> bool {
        let subject = format!("{group}/{kind}");
        self.health_checks
            .iter()
            .any(|k| syncguard_argocd::config::glob::matches(k, &subject))
    }

    /// Whether Argo CD leaves `group`/`kind` out of the desired state on the cluster `server`
    /// (`None`: only the destination's name is known) because of `resource.exclusions` or
    /// `resource.inclusions`, as the `input.excluded_by` fact; `None` when it is not excluded,
    /// or only by Argo CD's built-in exclusions (events, leases), which no setting chose.
    pub fn excluded_by(&self, group: &str, kind: &str, server: Option<&str>) -> Option<Value> {
        if self.filters.is_empty() {
            return None;
        }
        match self.filters.excluded(group, kind, server)? {
            Exclusion::Core => None,
            Exclusion::Excluded(i) => Some(json!({
                "key": "resource.exclusions",
                "index": i,
                "entry": self.filters.exclusions[i],
            })),
            Exclusion::NotIncluded => Some(json!({"key": "resource.inclusions"})),
        }
    }

    /// The `input.argocd.config` document.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("source".into(), json!(self.source));
        m.insert("health_checks".into(), json!(self.health_checks));
        m.insert("ignore_differences".into(), json!(self.ignore_differences));
        m.insert("exclusions".into(), json!(self.filters.exclusions));
        m.insert("inclusions".into(), json!(self.filters.inclusions));
        m.insert(
            "projects".into(),
            Value::Object(
                self.projects
                    .iter()
                    .map(|(name, p)| (name.clone(), p.config_input()))
                    .collect(),
            ),
        );
        if let Some(method) = self.tracking_method {
            m.insert("tracking_method".into(), json!(method));
        }
        m.insert(
            "ignore_aggregated_roles".into(),
            json!(self.ignore_aggregated_roles),
        );
        if let Some(s) = &self.settings {
            let o: &CompareOptions = &s.compare_options;
            m.insert("compare_options".into(), json!(o));
            m.insert(
                "source_types".into(),
                json!({"kustomize": s.kustomize_enabled, "helm": s.helm_enabled, "jsonnet": s.jsonnet_enabled}),
            );
        }
        if let Some(p) = &self.cmd_params {
            let mut v = json!(p);
            if let Some(o) = v.as_object_mut() {
                o.remove("keys");
                o.remove("notes");
                o.retain(|_, v| !v.is_null());
                o.insert(
                    "policy_override_enabled".into(),
                    json!(p.policy_override_enabled()),
                );
            }
            m.insert("cmd_params".into(), v);
        }
        if !self.notes.is_empty() {
            m.insert("notes".into(), json!(self.notes));
        }
        Value::Object(m)
    }
}

/// The health check Argo CD applies to `group`/`kind` with this configuration, as
/// `input.health_check` spells it: `custom` (argocd-cm, which wins over the stock checks),
/// `builtin`, `bundled-lua`, or `None`.
pub fn health_check_name(config: &ArgoCdConfig, group: &str, kind: &str) -> Option<&'static str> {
    if config.has_custom_health(group, kind) {
        return Some("custom");
    }
    health_check_source(group, kind).map(|s| match s {
        HealthCheckSource::Builtin => "builtin",
        HealthCheckSource::BundledLua => "bundled-lua",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    #[test]
    fn argocd_cm_sets_the_tracking_method_and_label_key_of_the_membership() {
        let cm = config(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\n\
             data: {application.resourceTrackingMethod: label, application.instanceLabelKey: argocd.argoproj.io/instance}\n",
        );
        let m = cm.membership(ArgoCdVersion::new(3, 4));
        assert_eq!(m.method, TrackingMethod::Label);
        assert_eq!(m.label_key, "argocd.argoproj.io/instance");
        // Without argocd-cm: the release's default.
        let none = ArgoCdConfig::default().membership(ArgoCdVersion::new(3, 0));
        assert_eq!(none.method, TrackingMethod::Annotation);
    }

    fn config(yaml: &str) -> ArgoCdConfig {
        let loaded = load_str("argocd.yaml", yaml);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        ArgoCdConfig::from_resources(&loaded.resources, ConfigSource::Input)
    }

    const CM: &str = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  resource.customizations.health.argoproj.io_Application: |
    hs = {}
    return hs
  resource.customizations.health.Service: "return {}"
  resource.customizations.health.*.crossplane.io_*: "return {}"
  resource.customizations.ignoreDifferences.apps_Deployment: |
    jsonPointers: [/spec/replicas]
  resource.customizations.ignoreDifferences.all: |
    managedFieldsManagers: [kube-controller-manager]
  resource.customizations: |
    cert-manager.io/Certificate:
      health.lua: return {}
    ConfigMap:
      ignoreDifferences: "jsonPointers: [/data]"
  resource.exclusions: |
    - apiGroups: [cilium.io]
      kinds: [CiliumIdentity]
      clusters: ["*"]
"#;

    #[test]
    fn argocd_cm_keys_in_both_forms_become_group_kind_facts() {
        let c = config(CM);
        assert_eq!(c.source, ConfigSource::Input);
        let health: Vec<&str> = c.health_checks.iter().map(String::as_str).collect();
        assert_eq!(
            health,
            [
                "*.crossplane.io/*",
                "/Service",
                "argoproj.io/Application",
                "cert-manager.io/Certificate"
            ]
        );
        let ignored: Vec<&str> = c.ignore_differences.iter().map(String::as_str).collect();
        assert_eq!(ignored, ["*", "/ConfigMap", "apps/Deployment"]);
        assert_eq!(c.filters.exclusions.len(), 1);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
    }

    #[test]
    fn custom_health_wins_over_stock_checks_and_matches_globs() {
        let c = config(CM);
        assert_eq!(
            health_check_name(&c, "argoproj.io", "Application"),
            Some("custom")
        );
        assert_eq!(health_check_name(&c, "", "Service"), Some("custom"));
        assert_eq!(
            health_check_name(&c, "aws.crossplane.io", "Bucket"),
            Some("custom")
        );
        assert_eq!(health_check_name(&c, "apps", "Deployment"), Some("builtin"));
        let none = ArgoCdConfig::default();
        assert_eq!(health_check_name(&none, "argoproj.io", "Application"), None);
        assert_eq!(
            health_check_name(&none, "cert-manager.io", "Certificate"),
            Some("bundled-lua")
        );
    }

    #[test]
    fn app_projects_keep_argo_cd_whitelist_semantics() {
        let c = config(
            r#"
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: team-a, namespace: argocd}
spec:
  destinations: [{server: "https://kubernetes.default.svc", namespace: "team-a-*"}]
  namespaceResourceBlacklist: [{group: "", kind: ResourceQuota}]
---
apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata: {name: default, namespace: argocd}
spec:
  clusterResourceWhitelist: [{group: "*", kind: "*"}]
  namespaceResourceWhitelist: [{group: "*", kind: "*"}]
"#,
        );
        let a = &c.projects["team-a"];
        assert!(a.cluster_resource_whitelist.is_empty());
        assert_eq!(a.namespace_resource_whitelist, None);
        assert_eq!(a.namespace_resource_blacklist.len(), 1);
        assert_eq!(a.destinations[0].namespace, "team-a-*");
        let v = c.to_value();
        assert_eq!(
            v["projects"]["default"]["cluster_resource_whitelist"][0],
            json!({"group": "*", "kind": "*", "name": ""})
        );
        assert_eq!(
            v["projects"]["team-a"]["destinations"][0],
            json!({"server": "https://kubernetes.default.svc", "name": "", "namespace": "team-a-*"})
        );
        assert_eq!(
            v["projects"]["team-a"]["namespace_resource_blacklist"][0],
            json!({"group": "", "kind": "ResourceQuota"})
        );
        assert_eq!(
            v["projects"]["team-a"]["namespace_resource_whitelist"],
            Value::Null
        );
    }

    #[test]
    fn broken_yaml_in_argocd_cm_is_a_problem_not_a_panic() {
        let c = config(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  resource.exclusions: \"[unclosed\"\n  resource.inclusions: \"a: b\"\n",
        );
        assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
        assert!(c.problems[0].contains("resource.exclusions"));
        assert!(c.problems[1].contains("not a YAML list"));
    }

    #[test]
    fn without_argocd_objects_nothing_is_known() {
        let c = config("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app-settings}\n");
        assert!(!c.is_known());
        assert_eq!(c.to_value()["source"], "none");
    }

    #[test]
    fn a_leading_underscore_health_key_is_not_the_core_kind() {
        // Argo CD keys `_PersistentVolumeClaim` as `/PersistentVolumeClaim`, which no object is
        // looked up by: the core kind keeps its stock check, and the key is noted.
        let c = config(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm}\ndata:\n  resource.customizations.health._PersistentVolumeClaim: \"return {}\"\n",
        );
        assert!(c.health_checks.is_empty(), "{:?}", c.health_checks);
        assert_eq!(
            health_check_name(&c, "", "PersistentVolumeClaim"),
            Some("builtin")
        );
        let notes = &c.to_value()["notes"];
        assert_eq!(notes[0]["issue"], "never_matched");
        assert_eq!(
            notes[0]["meant"],
            "resource.customizations.health.PersistentVolumeClaim"
        );
        assert_eq!(
            notes[0]["pointer"],
            "/data/resource.customizations.health._PersistentVolumeClaim"
        );
        assert_eq!(notes[0]["configmap"], "argocd-cm");
        assert_eq!(notes[0]["source"], "input");
    }

    #[test]
    fn cmd_params_and_misplaced_keys_reach_the_rule_input() {
        let c = config(
            r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cmd-params-cm, namespace: argocd}
data:
  applicationsetcontroller.policy: create-only
  controller.sync.timeout.seconds: "600"
  timeout.reconciliation: 300s
---
apiVersion: v1
kind: ConfigMap
metadata: {name: argocd-cm, namespace: argocd}
data:
  controller.diff.server.side: "true"
  resource.compareoptions: |
    ignoreResourceStatusField: crd
"#,
        );
        assert!(c.is_known());
        let v = c.to_value();
        assert_eq!(v["cmd_params"]["appset_policy"], "create-only");
        assert_eq!(v["cmd_params"]["policy_override_enabled"], false);
        assert_eq!(v["cmd_params"]["sync_timeout_seconds"], 600);
        assert_eq!(v["compare_options"]["ignore_resource_status_field"], "crd");
        let keys: Vec<(&str, &str, &str)> = v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| {
                (
                    n["configmap"].as_str().unwrap(),
                    n["key"].as_str().unwrap(),
                    n["meant"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            keys,
            [
                (
                    "argocd-cmd-params-cm",
                    "timeout.reconciliation",
                    "timeout.reconciliation in argocd-cm"
                ),
                (
                    "argocd-cm",
                    "controller.diff.server.side",
                    "controller.diff.server.side in argocd-cmd-params-cm"
                ),
            ]
        );
    }

    #[test]
    fn excluded_kinds_are_told_per_destination_cluster() {
        let c = config(CM);
        let x = c
            .excluded_by(
                "cilium.io",
                "CiliumIdentity",
                Some("https://kubernetes.default.svc"),
            )
            .unwrap();
        assert_eq!(x["key"], "resource.exclusions");
        assert_eq!(x["index"], 0);
        assert_eq!(x["entry"]["kinds"][0], "CiliumIdentity");
        assert!(c.excluded_by("", "Event", None).is_none());
        assert!(c.excluded_by("apps", "Deployment", None).is_none());
        assert!(
            ArgoCdConfig::default()
                .excluded_by("cilium.io", "CiliumIdentity", None)
                .is_none()
        );
    }
}
