//! The Argo CD configuration rules may depend on: custom health checks, system-level
//! ignoreDifferences and resource exclusions from the `argocd-cm` ConfigMap, and what each
//! `AppProject` permits.
//!
//! The facts come from wherever they can be read: `argocd-cm` and `AppProject` objects in the
//! checked input, a file named with `--argocd-config`, or the live objects of the cluster
//! (reconciler, webhook). They become `input.argocd.config` (policies/README.md); without any of
//! them the source is `none` and rules must not claim anything about the configuration.
//!
//! `argocd-cm` keys read (Argo CD's documented forms, old and new):
//! - `resource.customizations.health.<group>_<kind>` (a core kind has no `<group>_` part),
//! - `resource.customizations.ignoreDifferences.<group>_<kind>` and `...ignoreDifferences.all`,
//! - `resource.customizations`: the older single YAML block keyed by `<group>/<kind>` with
//!   `health.lua` and `ignoreDifferences` entries,
//! - `resource.exclusions` and `resource.inclusions`: YAML lists of `{apiGroups, kinds,
//!   clusters}`,
//! - `application.resourceTrackingMethod` (`label`, `annotation`, `annotation+label`) and
//!   `application.instanceLabelKey`: how Argo CD ties objects to Applications.

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

/// The name of Argo CD's main ConfigMap.
pub const ARGOCD_CM: &str = "argocd-cm";

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

/// The configuration facts of one Argo CD installation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ArgoCdConfig {
    /// Where they were read from.
    pub source: ConfigSource,
    /// `<group>/<kind>` keys (globs as written) with a custom health check.
    pub health_checks: BTreeSet<String>,
    /// `<group>/<kind>` keys with system-level ignoreDifferences; `*` for `.all`.
    pub ignore_differences: BTreeSet<String>,
    /// The same system-level entries with their paths, as Argo CD's normaliser applies them.
    pub ignore_rules: Vec<IgnoreRule>,
    /// `resource.exclusions` entries.
    pub exclusions: Vec<Value>,
    /// `resource.inclusions` entries.
    pub inclusions: Vec<Value>,
    /// AppProjects by name.
    pub projects: BTreeMap<String, Project>,
    /// `application.resourceTrackingMethod`, when set.
    pub tracking_method: Option<TrackingMethod>,
    /// `application.instanceLabelKey`, when set.
    pub instance_label_key: Option<String>,
    /// `resource.compareoptions` sets `ignoreAggregatedRoles: true`: the rules of a ClusterRole
    /// with an aggregationRule are left out of the comparison.
    pub ignore_aggregated_roles: bool,
    /// What could not be read, one line each (reported as input errors by the CLI).
    pub problems: Vec<String>,
}

impl ArgoCdConfig {
    /// Reads `argocd-cm` ConfigMaps and `AppProject`s among `resources`. The source stays
    /// `none` when there are neither.
    pub fn from_resources<'r>(
        resources: impl IntoIterator<Item = &'r Resource>,
        source: ConfigSource,
    ) -> ArgoCdConfig {
        let mut config = ArgoCdConfig::default();
        for r in resources {
            if r.group.is_empty() && r.kind == "ConfigMap" && r.name == ARGOCD_CM {
                config.read_argocd_cm(r);
                config.source = source;
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

    /// Adds what `other` knows; `other` wins for a project both name. The source becomes
    /// `other`'s when it knows anything.
    pub fn merge(&mut self, other: ArgoCdConfig) {
        if other.is_known() {
            self.source = other.source;
        }
        self.health_checks.extend(other.health_checks);
        self.ignore_differences.extend(other.ignore_differences);
        self.ignore_rules.extend(other.ignore_rules);
        self.exclusions.extend(other.exclusions);
        self.inclusions.extend(other.inclusions);
        self.projects.extend(other.projects);
        if other.tracking_method.is_some() {
            self.tracking_method = other.tracking_method;
        }
        if other.instance_label_key.is_some() {
            self.instance_label_key = other.instance_label_key;
        }
        self.problems.extend(other.problems);
    }

    fn read_argocd_cm(&mut self, cm: &Resource) {
        let Some(data) = cm.raw.get("data").and_then(Value::as_object) else {
            return;
        };
        for (key, value) in data {
            let Some(text) = value.as_str() else {
                continue;
            };
            if let Some(gk) = key.strip_prefix("resource.customizations.health.") {
                self.health_checks.insert(key_to_group_kind(gk));
            } else if let Some(gk) = key.strip_prefix("resource.customizations.ignoreDifferences.")
            {
                let gk = if gk == "all" {
                    "*".to_string()
                } else {
                    key_to_group_kind(gk)
                };
                if let Some(body) = self.yaml(key, text) {
                    let (group, kind) = split_group_kind(&gk);
                    let mut at = String::from("/data/");
                    syncguard_argocd::pointers::push_escaped(&mut at, key);
                    self.ignore_rules
                        .push(IgnoreRule::system(key, &at, group, kind, &body));
                }
                self.ignore_differences.insert(gk);
            } else if key == "resource.customizations" {
                self.read_customizations_block(key, text);
            } else if key == "resource.compareoptions" {
                self.ignore_aggregated_roles = text.lines().any(|l| {
                    l.trim()
                        .strip_prefix("ignoreAggregatedRoles:")
                        .is_some_and(|v| v.trim().trim_matches('"') == "true")
                });
            } else if key == "resource.exclusions" {
                let items = self.yaml_list(key, text);
                self.exclusions.extend(items);
            } else if key == "resource.inclusions" {
                let items = self.yaml_list(key, text);
                self.inclusions.extend(items);
            } else if key == "application.resourceTrackingMethod" {
                // Argo CD falls back to its default on a value it does not know; say so.
                match TrackingMethod::parse(text) {
                    Some(m) => self.tracking_method = Some(m),
                    None if text.trim().is_empty() => {}
                    None => self.problems.push(format!(
                        "{ARGOCD_CM}: `{key}: {text}` is not a tracking method Argo CD knows \
                         (label, annotation, annotation+label); its default applies"
                    )),
                }
            } else if key == "application.instanceLabelKey" && !text.trim().is_empty() {
                self.instance_label_key = Some(text.trim().to_string());
            }
        }
    }

    /// The pre-1.x single block: `<group>/<kind>: {health.lua, ignoreDifferences, ...}`.
    fn read_customizations_block(&mut self, key: &str, text: &str) {
        let Some(Value::Object(block)) = self.yaml(key, text) else {
            return;
        };
        for (gk, entry) in block {
            let gk = if gk.contains('/') {
                gk.clone()
            } else {
                format!("/{gk}")
            };
            if entry.get("health.lua").is_some() {
                self.health_checks.insert(gk.clone());
            }
            if let Some(body) = entry.get("ignoreDifferences") {
                // Written as a YAML string (the documented form) or a mapping.
                let body = match body.as_str() {
                    Some(text) => self.yaml(key, text).unwrap_or(Value::Null),
                    None => body.clone(),
                };
                let (group, kind) = split_group_kind(&gk);
                let mut at = String::from("/data/");
                syncguard_argocd::pointers::push_escaped(&mut at, key);
                self.ignore_rules
                    .push(IgnoreRule::system(key, &at, group, kind, &body));
                self.ignore_differences.insert(gk);
            }
        }
    }

    fn yaml_list(&mut self, key: &str, text: &str) -> Vec<Value> {
        match self.yaml(key, text) {
            Some(Value::Array(items)) => items.into_iter().filter(Value::is_object).collect(),
            Some(Value::Null) | None => Vec::new(),
            Some(_) => {
                self.problems
                    .push(format!("{ARGOCD_CM}: `{key}` is not a YAML list"));
                Vec::new()
            }
        }
    }

    fn yaml(&mut self, key: &str, text: &str) -> Option<Value> {
        match parse_yaml_value(text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.problems
                    .push(format!("{ARGOCD_CM}: `{key}` is not valid YAML: {e}"));
                None
            }
        }
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
        self.health_checks.iter().any(|k| glob_match(k, &subject))
    }

    /// The `input.argocd.config` document.
    pub fn to_value(&self) -> Value {
        let mut m = Map::new();
        m.insert("source".into(), json!(self.source));
        m.insert("health_checks".into(), json!(self.health_checks));
        m.insert("ignore_differences".into(), json!(self.ignore_differences));
        m.insert("exclusions".into(), Value::Array(self.exclusions.clone()));
        m.insert("inclusions".into(), Value::Array(self.inclusions.clone()));
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
        Value::Object(m)
    }
}

/// `apps/Deployment` → (`apps`, `Deployment`); `/Service` → (``, `Service`); `*` → (`*`, `*`).
fn split_group_kind(gk: &str) -> (&str, &str) {
    if gk == "*" {
        return ("*", "*");
    }
    gk.rsplit_once('/').unwrap_or(("", gk))
}

/// `apps_Deployment` → `apps/Deployment`; `Service` → `/Service`; globs kept as written.
fn key_to_group_kind(key: &str) -> String {
    match key.rsplit_once('_') {
        Some((group, kind)) => format!("{group}/{kind}"),
        None => format!("/{key}"),
    }
}

/// `*` matches any run of characters (Argo CD matches these keys as globs).
fn glob_match(pattern: &str, subject: &str) -> bool {
    let Some((first, rest)) = pattern.split_once('*') else {
        return pattern == subject;
    };
    let Some(mut tail) = subject.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = rest.split('*').collect();
    let Some((last, middle)) = parts.split_last() else {
        return true;
    };
    for part in middle {
        match tail.find(part) {
            Some(at) => tail = &tail[at + part.len()..],
            None => return false,
        }
    }
    tail.len() >= last.len() && tail.ends_with(last)
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
        assert_eq!(c.exclusions.len(), 1);
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
    fn globs_match_like_argo_cd_keys() {
        assert!(glob_match("*.crossplane.io/*", "aws.crossplane.io/Bucket"));
        assert!(!glob_match("*.crossplane.io/*", "crossplane.io/Bucket"));
        assert!(glob_match("*", "apps/Deployment"));
        assert!(glob_match("apps/*", "apps/Deployment"));
        assert!(!glob_match("apps/Deployment", "apps/DaemonSet"));
        assert!(glob_match("a*b*c", "aXbYc"));
        assert!(!glob_match("a*b*c", "aXbY"));
    }
}
