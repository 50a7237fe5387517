//! The typed argocd-cm (`util/settings/settings.go`), read once from the ConfigMap's `data`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::cmd_params::is_go_duration;
use super::customizations::{self, Customization, CustomizationType};
use super::filter::{ResourceFilter, ResourceFilters};
use super::keys::{ARGOCD_CM_KEPT, ARGOCD_CM_KEPT_PREFIXES, argocd_cm_unknown};
use super::{KeyClass, KeyIssue, KeyNote, YamlParser, data_pointer, string_data};
use crate::config::{Fields, Notes};
use crate::model::tracking::TrackingMethod;

/// `ignoreResourceStatusField` of `resource.compareoptions`: whose `status` is left out of the
/// comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StatusField {
    /// Every object's (the default; also an unknown value, and `true`).
    #[default]
    All,
    /// Only CustomResourceDefinitions'.
    Crd,
    /// No object's (`none`, `off`, `false`).
    None,
}

/// `resource.compareoptions`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CompareOptions {
    /// `ignoreAggregatedRoles` (default false).
    pub ignore_aggregated_roles: bool,
    /// `ignoreResourceStatusField` (default `all`).
    pub ignore_resource_status_field: StatusField,
    /// `ignoreDifferencesOnResourceUpdates` (default true).
    pub ignore_differences_on_resource_updates: bool,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            ignore_aggregated_roles: false,
            ignore_resource_status_field: StatusField::All,
            ignore_differences_on_resource_updates: true,
        }
    }
}

/// The typed argocd-cm.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArgoCdSettings {
    /// Resource customizations, the old block's first, then the split keys', in key order (the
    /// order of the `data` map).
    pub customizations: Vec<Customization>,
    /// `resource.compareoptions`.
    pub compare_options: CompareOptions,
    /// `resource.exclusions` and `resource.inclusions`.
    pub filters: ResourceFilters,
    /// `application.resourceTrackingMethod`, when set to a method Argo CD knows.
    pub tracking_method: Option<TrackingMethod>,
    /// `application.instanceLabelKey`, when set.
    pub instance_label_key: Option<String>,
    /// `kustomize.enable` (only the exact value `true` keeps Kustomize on once the key is set).
    pub kustomize_enabled: bool,
    /// `helm.enable`, likewise.
    pub helm_enabled: bool,
    /// `jsonnet.enable`, likewise.
    pub jsonnet_enabled: bool,
    /// `kustomize.buildOptions`, as written.
    pub kustomize_build_options: Option<String>,
    /// `timeout.reconciliation`, a Go duration as written.
    pub reconciliation_timeout: Option<String>,
    /// `globalProjects`, as written (kept, not judged).
    pub global_projects: Option<String>,
    /// Every key, classified.
    pub keys: BTreeMap<String, KeyClass>,
    /// Keys and values that do not do what they are written for.
    pub notes: Vec<KeyNote>,
    /// Unknown and malformed fields inside the YAML values, as JSON pointers (the crate's
    /// [`Notes`]); the pointer of the YAML inside a value starts at the value's key.
    pub fields: Notes,
    /// Values that could not be read at all (YAML that does not parse, a list that is not a
    /// list), one line each.
    pub problems: Vec<String>,
}

impl Default for ArgoCdSettings {
    fn default() -> Self {
        ArgoCdSettings {
            customizations: Vec::new(),
            compare_options: CompareOptions::default(),
            filters: ResourceFilters::default(),
            tracking_method: None,
            instance_label_key: None,
            kustomize_enabled: true,
            helm_enabled: true,
            jsonnet_enabled: true,
            kustomize_build_options: None,
            reconciliation_timeout: None,
            global_projects: None,
            keys: BTreeMap::new(),
            notes: Vec::new(),
            fields: Notes::default(),
            problems: Vec::new(),
        }
    }
}

impl ArgoCdSettings {
    /// Reads the `data` of an argocd-cm; YAML text values are parsed with `parse`.
    pub fn read(data: Option<&Value>, parse: YamlParser<'_>) -> ArgoCdSettings {
        let mut s = ArgoCdSettings::default();
        let (strings, others) = string_data(data);
        for key in others {
            s.keys.insert(key.to_string(), KeyClass::Unknown);
            s.notes.push(KeyNote::new(
                key,
                KeyIssue::Malformed,
                None,
                "a ConfigMap's data values are strings (quote it); the API server refuses it"
                    .into(),
            ));
        }
        // The block first: split keys override it.
        if let Some((key, text)) = strings
            .iter()
            .find(|(k, _)| *k == "resource.customizations")
        {
            customizations::read_block(
                key,
                text,
                parse,
                &mut s.customizations,
                &mut s.notes,
                &mut s.problems,
            );
        }
        for (key, text) in strings {
            let class = s.read_key(key, text, parse);
            s.keys.insert(key.to_string(), class);
        }
        s
    }

    fn read_key(&mut self, key: &str, text: &str, parse: YamlParser<'_>) -> KeyClass {
        let t = text.trim();
        match key {
            "resource.customizations" => {}
            "resource.compareoptions" => self.read_compare_options(key, text, parse),
            "resource.exclusions" => self.filters.exclusions = self.read_filters(key, text, parse),
            "resource.inclusions" => self.filters.inclusions = self.read_filters(key, text, parse),
            "application.resourceTrackingMethod" => match TrackingMethod::parse(text) {
                Some(m) => self.tracking_method = Some(m),
                None if t.is_empty() => {}
                None => {
                    self.notes.push(KeyNote::new(
                        key,
                        KeyIssue::Malformed,
                        None,
                        format!(
                            "`{t}` is not a tracking method (label, annotation, \
                             annotation+label): Argo CD uses its default"
                        ),
                    ));
                    self.problems.push(format!(
                        "`{key}: {text}` is not a tracking method Argo CD knows \
                         (label, annotation, annotation+label); its default applies"
                    ));
                }
            },
            "application.instanceLabelKey" => {
                if !t.is_empty() {
                    self.instance_label_key = Some(t.to_string());
                }
            }
            "kustomize.enable" | "helm.enable" | "jsonnet.enable" => {
                // Argo CD: set and not exactly "true" turns the source type off.
                let on = text.is_empty() || text == "true";
                match key {
                    "kustomize.enable" => self.kustomize_enabled = on,
                    "helm.enable" => self.helm_enabled = on,
                    _ => self.jsonnet_enabled = on,
                }
                if !on && text != "false" {
                    self.notes.push(KeyNote::new(
                        key,
                        KeyIssue::Malformed,
                        Some(
                            if t.eq_ignore_ascii_case("true") {
                                "true"
                            } else {
                                "false"
                            }
                            .into(),
                        ),
                        format!(
                            "Argo CD compares the value with `true` exactly: `{text}` turns \
                             the source type off"
                        ),
                    ));
                }
            }
            "kustomize.buildOptions" => self.kustomize_build_options = Some(text.to_string()),
            "timeout.reconciliation" => {
                if t.is_empty() {
                } else if is_go_duration(t) {
                    self.reconciliation_timeout = Some(t.to_string());
                } else {
                    self.notes.push(KeyNote::new(
                        key,
                        KeyIssue::Malformed,
                        t.parse::<u64>().ok().map(|n| format!("{n}s")),
                        "the value is not a Go duration such as `180s`: the controller uses \
                         its default (120s)"
                            .into(),
                    ));
                }
            }
            "globalProjects" => {
                self.global_projects = Some(text.to_string());
                return KeyClass::Kept;
            }
            _ if key.starts_with("resource.customizations.") => {
                let read = customizations::read_split(
                    key,
                    text,
                    parse,
                    &mut self.customizations,
                    &mut self.notes,
                );
                if !read {
                    return KeyClass::Unknown;
                }
            }
            _ if ARGOCD_CM_KEPT.contains(&key)
                || ARGOCD_CM_KEPT_PREFIXES.iter().any(|p| key.starts_with(p)) =>
            {
                return KeyClass::Kept;
            }
            _ => {
                self.notes.push(argocd_cm_unknown(key));
                return KeyClass::Unknown;
            }
        }
        KeyClass::Read
    }

    fn yaml(&mut self, key: &str, text: &str, parse: YamlParser<'_>) -> Option<Value> {
        match parse(text) {
            Ok(v) => Some(v),
            Err(e) => {
                self.problems
                    .push(format!("`{key}` is not valid YAML: {e}"));
                self.notes.push(KeyNote::new(
                    key,
                    KeyIssue::Breaks,
                    None,
                    format!("the value is not valid YAML ({e}): Argo CD cannot load it"),
                ));
                None
            }
        }
    }

    fn read_filters(
        &mut self,
        key: &str,
        text: &str,
        parse: YamlParser<'_>,
    ) -> Vec<ResourceFilter> {
        let at = data_pointer(key);
        match self.yaml(key, text, parse) {
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| ResourceFilter::read(item, &format!("{at}/{i}"), &mut self.fields))
                .collect(),
            Some(Value::Null) | None => Vec::new(),
            Some(_) => {
                self.problems.push(format!("`{key}` is not a YAML list"));
                self.notes.push(KeyNote::new(
                    key,
                    KeyIssue::Breaks,
                    None,
                    "the value is not a YAML list of {apiGroups, kinds, clusters}: Argo CD \
                     cannot load its resource filter"
                        .into(),
                ));
                Vec::new()
            }
        }
    }

    fn read_compare_options(&mut self, key: &str, text: &str, parse: YamlParser<'_>) {
        let Some(v) = self.yaml(key, text, parse) else {
            return;
        };
        let at = data_pointer(key);
        let mut notes = Notes::default();
        let mut f = Fields::of(Some(&v), &at, &mut notes);
        let o = &mut self.compare_options;
        if let Some(b) = f.bool("ignoreAggregatedRoles", &mut notes) {
            o.ignore_aggregated_roles = b;
        }
        if let Some(b) = f.bool("ignoreDifferencesOnResourceUpdates", &mut notes) {
            o.ignore_differences_on_resource_updates = b;
        }
        // A scalar into a string field: the YAML library Argo CD uses turns `false` into "false".
        match f.value("ignoreResourceStatusField") {
            None => {}
            Some(v) => {
                let written = match v {
                    Value::String(s) => s.clone(),
                    Value::Bool(b) => b.to_string(),
                    other => other.to_string(),
                };
                o.ignore_resource_status_field = match written.as_str() {
                    "" | "all" => StatusField::All,
                    "crd" => StatusField::Crd,
                    "none" | "off" | "false" => StatusField::None,
                    _ => {
                        self.notes.push(KeyNote::new(
                            key,
                            KeyIssue::Malformed,
                            Some("ignoreResourceStatusField: all, crd or none".into()),
                            format!(
                                "ignoreResourceStatusField `{written}` is not all, crd or \
                                 none: Argo CD ignores the status of every object"
                            ),
                        ));
                        StatusField::All
                    }
                };
            }
        }
        f.finish(&mut notes);
        for unknown in &notes.unknown {
            let field = unknown.rsplit('/').next().unwrap_or_default();
            self.notes.push(KeyNote::new(
                key,
                KeyIssue::Unknown,
                super::closest(
                    field,
                    [
                        "ignoreAggregatedRoles",
                        "ignoreResourceStatusField",
                        "ignoreDifferencesOnResourceUpdates",
                    ],
                    3,
                )
                .map(str::to_string),
                format!("`{field}` is not a compare option; Argo CD ignores it"),
            ));
        }
        for m in &notes.malformed {
            self.notes.push(KeyNote::new(
                key,
                KeyIssue::Breaks,
                None,
                format!(
                    "`{}` is not a {}: Argo CD fails to read the compare options, and with them \
                     every resource customization",
                    m.pointer.rsplit('/').next().unwrap_or_default(),
                    m.expected
                ),
            ));
        }
        self.fields.unknown.extend(notes.unknown);
        self.fields.malformed.extend(notes.malformed);
    }

    /// The custom health check Argo CD uses for `group`/`kind`: an exact key first, then a glob.
    pub fn health_check(&self, group: &str, kind: &str) -> Option<&Customization> {
        let key = customizations::object_key(group, kind);
        let health = || {
            self.customizations
                .iter()
                .filter(|c| c.kind_of == CustomizationType::Health)
                .filter(|c| c.value.as_str().is_some_and(|s| !s.is_empty()))
        };
        health()
            .rev()
            .find(|c| c.override_key == key)
            .or_else(|| health().find(|c| c.matches(group, kind)))
    }

    /// The customizations of one type.
    pub fn of_type(&self, kind_of: CustomizationType) -> impl Iterator<Item = &Customization> {
        self.customizations
            .iter()
            .filter(move |c| c.kind_of == kind_of)
    }

    /// True when Argo CD fails to load the resource customizations (a key or value it cannot
    /// read): none of them applies.
    pub fn customizations_fail(&self) -> bool {
        self.notes.iter().any(|n| {
            n.issue == KeyIssue::Breaks
                && (n.key.starts_with("resource.customizations")
                    || n.key == "resource.compareoptions")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// JSON is YAML: the tests need no YAML parser.
    fn read(data: Value) -> ArgoCdSettings {
        let parse = |t: &str| serde_json::from_str::<Value>(t).map_err(|e| e.to_string());
        ArgoCdSettings::read(Some(&data), &parse)
    }

    fn note<'s>(s: &'s ArgoCdSettings, key: &str) -> &'s KeyNote {
        s.notes
            .iter()
            .find(|n| n.key == key)
            .unwrap_or_else(|| panic!("no note for {key}: {:?}", s.notes))
    }

    #[test]
    fn health_keys_are_split_as_argo_cd_splits_them() {
        let s = read(json!({
            "resource.customizations.health.cert-manager.io_Certificate": "return {}",
            "resource.customizations.health.PersistentVolumeClaim": "return {}",
            "resource.customizations.health._ConfigMap": "return {}",
            "resource.customizations.health.*.crossplane.io_*": "return {}",
            "resource.customizations.useOpenLibs.cert-manager.io_Certificate": "true",
            "resource.customizations.actions.apps_Deployment": "discovery.lua: x",
        }));
        let keys: Vec<&str> = s
            .customizations
            .iter()
            .map(|c| c.override_key.as_str())
            .collect();
        assert_eq!(
            keys,
            [
                "apps/Deployment",
                "*.crossplane.io/*",
                "PersistentVolumeClaim",
                "/ConfigMap",
                "cert-manager.io/Certificate",
                "cert-manager.io/Certificate"
            ]
        );
        assert!(s.health_check("", "PersistentVolumeClaim").is_some());
        assert!(s.health_check("cert-manager.io", "Certificate").is_some());
        assert!(s.health_check("aws.crossplane.io", "Bucket").is_some());
        // `_ConfigMap` is keyed `/ConfigMap`: no object is looked up by it.
        assert!(s.health_check("", "ConfigMap").is_none());
        let n = note(&s, "resource.customizations.health._ConfigMap");
        assert_eq!(n.issue, KeyIssue::NeverMatched);
        assert_eq!(
            n.meant.as_deref(),
            Some("resource.customizations.health.ConfigMap")
        );
        assert_eq!(n.pointer, "/data/resource.customizations.health._ConfigMap");
        assert_eq!(
            s.keys["resource.customizations.health._ConfigMap"],
            KeyClass::Read
        );
        assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
    }

    #[test]
    fn a_wrong_customization_type_or_group_kind_fails_every_customization() {
        let s = read(json!({
            "resource.customizations.heath.apps_Deployment": "return {}",
            "resource.customizations.argoproj.io_Application": "return {}",
            "resource.customizations.health.a_b_C": "return {}",
            "resource.customizations.useOpenLibs.apps_Deployment": "yes",
            "resource.customizations.health.lua": "return {}",
            "resource.customizations.health.argoproj.io_Application.lua": "return {}",
        }));
        let n = note(&s, "resource.customizations.heath.apps_Deployment");
        assert_eq!(n.issue, KeyIssue::Breaks);
        assert_eq!(
            n.meant.as_deref(),
            Some("resource.customizations.health.apps_Deployment")
        );
        assert_eq!(
            note(&s, "resource.customizations.argoproj.io_Application").issue,
            KeyIssue::Breaks
        );
        assert_eq!(
            note(&s, "resource.customizations.health.a_b_C").issue,
            KeyIssue::Breaks
        );
        assert_eq!(
            note(&s, "resource.customizations.useOpenLibs.apps_Deployment").issue,
            KeyIssue::Breaks
        );
        assert_eq!(
            note(&s, "resource.customizations.health.lua").issue,
            KeyIssue::OtherRelease
        );
        let n = note(
            &s,
            "resource.customizations.health.argoproj.io_Application.lua",
        );
        assert_eq!(n.issue, KeyIssue::NeverMatched);
        assert_eq!(
            n.meant.as_deref(),
            Some("resource.customizations.health.argoproj.io_Application")
        );
        assert!(s.customizations_fail());
    }

    #[test]
    fn ignore_differences_and_other_yaml_types_are_parsed_with_the_callers_parser() {
        let s = read(json!({
            "resource.customizations.ignoreDifferences.apps_Deployment": "{\"jsonPointers\": [\"/spec/replicas\"]}",
            "resource.customizations.ignoreDifferences.all": "{\"managedFieldsManagers\": [\"kube-controller-manager\"], \"kind\": \"Secret\"}",
            "resource.customizations.ignoreResourceUpdates.all": "{\"jsonPointers\": [\"/status\"]}",
            "resource.customizations.knownTypeFields.argoproj.io_Rollout": "[{\"field\": \"spec.template.spec\", \"type\": \"core/v1/PodSpec\"}]",
            "resource.customizations.ignoreDifferences.batch_Job": "[unclosed",
        }));
        let ignore: Vec<&str> = s
            .of_type(CustomizationType::IgnoreDifferences)
            .map(|c| c.override_key.as_str())
            .collect();
        assert_eq!(ignore, ["*/*", "apps/Deployment"]);
        assert_eq!(
            s.of_type(CustomizationType::IgnoreResourceUpdates).count(),
            1
        );
        assert_eq!(s.of_type(CustomizationType::KnownTypeFields).count(), 1);
        let n = note(&s, "resource.customizations.ignoreDifferences.all");
        assert_eq!(n.issue, KeyIssue::Unknown);
        assert!(n.detail.contains("`kind`"), "{}", n.detail);
        assert_eq!(
            note(&s, "resource.customizations.ignoreDifferences.batch_Job").issue,
            KeyIssue::Breaks
        );
    }

    #[test]
    fn the_old_block_is_read_and_split_key_names_in_it_are_noted() {
        let s = read(json!({
            "resource.customizations": "{\"cert-manager.io/Certificate\": {\"health.lua\": \"return {}\"}, \"ConfigMap\": {\"ignoreDifferences\": \"{\\\"jsonPointers\\\": [\\\"/data\\\"]}\"}, \"argoproj.io_Application\": {\"health.lua\": \"x\", \"health\": \"y\"}, \"apps/Deployment\": {\"ignoreDifferences\": {\"jsonPointers\": [\"/spec/replicas\"]}}}",
        }));
        assert!(s.health_check("cert-manager.io", "Certificate").is_some());
        assert!(s.customizations.iter().all(|c| c.in_block));
        let block: Vec<&KeyNote> = s.notes.iter().collect();
        assert!(block.iter().any(|n| n.issue == KeyIssue::OtherRelease
            && n.meant.as_deref() == Some("argoproj.io/Application")));
        assert!(block.iter().any(|n| n.issue == KeyIssue::Unknown
            && n.meant.as_deref() == Some("argoproj.io_Application: health.lua")));
        // ignoreDifferences as a mapping: kept for the rules, but Argo CD fails on it.
        assert!(
            block
                .iter()
                .any(|n| n.issue == KeyIssue::Breaks && n.detail.contains("mapping"))
        );
        assert_eq!(s.of_type(CustomizationType::IgnoreDifferences).count(), 2);
    }

    #[test]
    fn compare_options_map_values_as_argo_cd_does() {
        let s = read(
            json!({"resource.compareoptions": "{\"ignoreAggregatedRoles\": true, \"ignoreResourceStatusField\": false, \"ignoreDifferencesOnResourceUpdates\": false}"}),
        );
        assert!(s.compare_options.ignore_aggregated_roles);
        assert_eq!(
            s.compare_options.ignore_resource_status_field,
            StatusField::None
        );
        assert!(!s.compare_options.ignore_differences_on_resource_updates);
        let s =
            read(json!({"resource.compareoptions": "{\"ignoreResourceStatusField\": \"crd\"}"}));
        assert_eq!(
            s.compare_options.ignore_resource_status_field,
            StatusField::Crd
        );
        assert!(s.compare_options.ignore_differences_on_resource_updates);
        let s = read(
            json!({"resource.compareoptions": "{\"ignoreResourceStatusField\": \"off\", \"ignoreAggregatedRole\": true}"}),
        );
        assert_eq!(
            s.compare_options.ignore_resource_status_field,
            StatusField::None
        );
        assert_eq!(
            note(&s, "resource.compareoptions").meant.as_deref(),
            Some("ignoreAggregatedRoles")
        );
        let s =
            read(json!({"resource.compareoptions": "{\"ignoreResourceStatusField\": \"status\"}"}));
        assert_eq!(
            s.compare_options.ignore_resource_status_field,
            StatusField::All
        );
        assert_eq!(
            note(&s, "resource.compareoptions").issue,
            KeyIssue::Malformed
        );
        let s = read(json!({"resource.compareoptions": "{\"ignoreAggregatedRoles\": \"yes\"}"}));
        assert!(s.customizations_fail());
    }

    #[test]
    fn filters_tracking_and_source_types_are_typed() {
        let s = read(json!({
            "resource.exclusions": "[{\"apiGroups\": [\"cilium.io\"], \"kinds\": [\"CiliumIdentity\"], \"clusters\": [\"*\"], \"kind\": \"x\"}]",
            "resource.inclusions": "[{\"apiGroups\": [\"*\"], \"kinds\": [\"*\"], \"clusters\": [\"https://a\"]}]",
            "application.resourceTrackingMethod": "annotation+label",
            "application.instanceLabelKey": "argocd.argoproj.io/instance",
            "kustomize.enable": "True",
            "helm.enable": "false",
            "kustomize.buildOptions": "--enable-helm",
            "timeout.reconciliation": "300",
            "globalProjects": "- labelSelector: {}",
            "url": "https://argocd.example.com",
            "dex.config": "connectors: []",
        }));
        assert_eq!(s.filters.exclusions[0].kinds, ["CiliumIdentity"]);
        assert_eq!(s.fields.unknown, ["/data/resource.exclusions/0/kind"]);
        assert_eq!(s.filters.inclusions[0].clusters, ["https://a"]);
        assert_eq!(s.tracking_method, Some(TrackingMethod::AnnotationAndLabel));
        assert_eq!(
            s.instance_label_key.as_deref(),
            Some("argocd.argoproj.io/instance")
        );
        assert!(!s.kustomize_enabled && !s.helm_enabled && s.jsonnet_enabled);
        assert_eq!(note(&s, "kustomize.enable").meant.as_deref(), Some("true"));
        assert_eq!(
            note(&s, "timeout.reconciliation").meant.as_deref(),
            Some("300s")
        );
        assert_eq!(s.kustomize_build_options.as_deref(), Some("--enable-helm"));
        assert_eq!(s.keys["globalProjects"], KeyClass::Kept);
        assert_eq!(s.keys["url"], KeyClass::Kept);
        assert_eq!(s.keys["dex.config"], KeyClass::Kept);
        assert_eq!(s.keys["resource.exclusions"], KeyClass::Read);
        assert_eq!(s.notes.len(), 2, "{:?}", s.notes);
    }

    #[test]
    fn misplaced_and_unknown_keys_are_noted_and_bad_values_are_problems() {
        let s = read(json!({
            "controller.sync.timeout.seconds": "600",
            "ignore.normalizer.jq.timeout": "5s",
            "resource.customization.health.apps_Deployment": "return {}",
            "repositories": "- url: https://x",
            "resource.exclusions": "[unclosed",
            "resource.inclusions": "{\"a\": 1}",
            "application.resourceTrackingMethod": "labels",
            "replicas": 3,
        }));
        assert_eq!(
            note(&s, "controller.sync.timeout.seconds").issue,
            KeyIssue::Misplaced
        );
        assert_eq!(
            note(&s, "ignore.normalizer.jq.timeout").issue,
            KeyIssue::Misplaced
        );
        assert_eq!(
            note(&s, "resource.customization.health.apps_Deployment").issue,
            KeyIssue::Misspelt
        );
        assert_eq!(note(&s, "repositories").removed_in, Some(300));
        assert_eq!(note(&s, "replicas").issue, KeyIssue::Malformed);
        assert_eq!(s.keys["replicas"], KeyClass::Unknown);
        assert_eq!(s.problems.len(), 3, "{:?}", s.problems);
        assert!(s.problems[0].contains("tracking method"));
        assert!(s.problems[1].contains("resource.exclusions"));
        assert!(s.problems[2].contains("not a YAML list"));
    }
}
