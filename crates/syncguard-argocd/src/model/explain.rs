//! `syncguard explain APP`: one Application's effective settings after every layer Argo CD
//! applies — argocd-cm, the Application, each object's own annotations — and, per object, which
//! sync options and ignoreDifferences rules apply to it and which fields they hide.
//!
//! The layers, as Argo CD combines them (3.6.1):
//! - **sync options**: the Application's `syncPolicy.syncOptions` apply to every object; an
//!   object's `argocd.argoproj.io/sync-options` annotation overrides an option of the same key
//!   (`Prune=false` on one object over nothing at the Application, `ServerSideApply=false` on one
//!   object over `ServerSideApply=true` for the app);
//! - **ignoreDifferences**: the Application's entries, argocd-cm's system-level entries
//!   (`resource.customizations.ignoreDifferences.<group>_<kind>` and `.all`) and, from 3.6, the
//!   object's own `argocd.argoproj.io/ignore-differences` annotation, all applied
//!   ([`super::normalise`]); with `RespectIgnoreDifferences=true` a sync keeps the live values
//!   of what they hide.

use serde::Serialize;

use super::Resource;
use super::argo::SyncFacts;
use super::normalise::{Target, hidden, managed_fields};
use crate::config::application::{Application, Destination};
use crate::config::ignore::{IgnoreRule, Layer};

/// The annotation an object's own ignoreDifferences are written in.
const ANNOTATION: &str = "argocd.argoproj.io/ignore-differences";

/// What `explain` prints for one Application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Explanation {
    /// `metadata.name`.
    pub application: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `spec.project`.
    pub project: String,
    /// `spec.destination`.
    pub destination: DestinationView,
    /// The Argo CD release judged for.
    pub argocd: String,
    /// The settings of each layer.
    pub settings: Settings,
    /// One entry per object of the Application in the input, in input order.
    pub objects: Vec<ObjectExplanation>,
    /// ignoreDifferences rules (of every layer but annotations) that apply to no object, by
    /// where they are written.
    pub unmatched_rules: Vec<String>,
    /// Fields of the Application Argo CD's schema does not have (the API server drops them).
    pub unknown_fields: Vec<String>,
}

/// `spec.destination`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DestinationView {
    /// `server`.
    pub server: String,
    /// `name`.
    pub name: String,
    /// `namespace`.
    pub namespace: String,
}

impl From<&Destination> for DestinationView {
    fn from(d: &Destination) -> Self {
        Self {
            server: d.server.clone(),
            name: d.name.clone(),
            namespace: d.namespace.clone(),
        }
    }
}

/// The settings of each layer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Settings {
    /// argocd-cm's system-level ignoreDifferences entries.
    pub system_ignore_differences: Vec<IgnoreRule>,
    /// The Application's sync options as written.
    pub sync_options: Vec<String>,
    /// Sync options Argo CD does not know (ignored).
    pub unknown_sync_options: Vec<String>,
    /// `syncPolicy.automated` is on.
    pub automated: bool,
    /// `automated.selfHeal`.
    pub self_heal: bool,
    /// `automated.prune`.
    pub prune: bool,
    /// `RespectIgnoreDifferences=true`.
    pub respect_ignore_differences: bool,
    /// The Application's ignoreDifferences entries.
    pub ignore_differences: Vec<IgnoreRule>,
}

/// One object, as the settings apply to it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ObjectExplanation {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Effective namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// Effective sync options, each with the layer it comes from.
    pub sync_options: Vec<EffectiveOption>,
    /// `argocd.argoproj.io/compare-options` items.
    pub compare_options: Vec<String>,
    /// The rules that apply to it, each with the fields it hides here.
    pub rules: Vec<AppliedRule>,
    /// Every field the comparison removes (JSON pointers).
    pub hidden: Vec<String>,
    /// The hidden fields whose live value a sync keeps (RespectIgnoreDifferences=true).
    pub kept_at_sync: Vec<String>,
    /// Lists a sync takes whole from live.
    pub frozen_lists: Vec<String>,
}

/// One effective sync option.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EffectiveOption {
    /// `Key=value`.
    pub option: String,
    /// `application` or `annotation`.
    pub from: &'static str,
}

/// One rule as it applies to one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AppliedRule {
    /// Where it is written: `application`, `system` or `annotation`.
    pub layer: &'static str,
    /// JSON pointer of the entry (the argocd-cm data key for system rules).
    pub at: String,
    /// The fields it hides in this object.
    pub hides: Vec<String>,
    /// `managedFieldsManagers`: it also hides the fields these managers own on the live object.
    pub managers: Vec<String>,
}

/// What the release and configuration add to an explanation.
pub struct Context<'a> {
    /// argocd-cm's system-level rules.
    pub system_rules: &'a [IgnoreRule],
    /// The release, as written in the output.
    pub argocd: String,
    /// The release copies ignored fields with a strategic merge for built-in kinds.
    pub strategic_merge: bool,
    /// The release reads each object's own ignore-differences annotation (3.6+).
    pub per_resource_ignore_differences: bool,
    /// The JSON pointers of an object's own ignore-differences annotation, when it has one.
    pub annotation_pointers: &'a dyn Fn(&Resource) -> Option<Vec<String>>,
    /// The live object of a member, when known: `managedFieldsManagers` are resolved against
    /// its managed fields.
    pub live: &'a dyn Fn(&Resource) -> Option<&'a Resource>,
}

/// Explains `app` over its `members` (the Application itself excluded), with their facts.
pub fn explain(
    app: &Application,
    members: &[(&Resource, &SyncFacts)],
    ctx: &Context<'_>,
) -> Explanation {
    let respect = app.respects_ignore_differences();
    let layered: Vec<IgnoreRule> = app
        .ignore_rules
        .iter()
        .chain(ctx.system_rules)
        .cloned()
        .collect();
    let mut used = vec![false; layered.len()];
    let mut objects = Vec::with_capacity(members.len());
    for (r, facts) in members {
        let namespace = super::governed::namespace_of(r, &app.destination_namespace).to_string();
        let mut rules = layered.clone();
        if ctx.per_resource_ignore_differences
            && let Some(pointers) = (ctx.annotation_pointers)(r)
        {
            rules.push(IgnoreRule::annotation(
                &r.group, &r.kind, &r.name, &namespace, pointers,
            ));
        }
        let t = Target {
            object: &r.raw,
            group: &r.group,
            kind: &r.kind,
            name: &r.name,
            namespace: &namespace,
        };
        let mut h = hidden(&rules, t, ctx.strategic_merge);
        let live = (ctx.live)(r);
        let applied: Vec<AppliedRule> = h
            .effects
            .iter()
            .filter_map(|e| {
                if let Some(u) = used.get_mut(e.rule) {
                    *u = true;
                }
                let rule = rules.get(e.rule)?;
                let mut one = hidden(std::slice::from_ref(rule), t, ctx.strategic_merge);
                if let Some(live) = live {
                    for p in managed_fields(&live.raw, &rule.managed_fields_managers) {
                        if !one.fields.contains(&p) {
                            one.fields.push(p);
                        }
                    }
                }
                Some(AppliedRule {
                    layer: match rule.layer {
                        Layer::Application => "application",
                        Layer::System { .. } => "system",
                        Layer::Annotation => "annotation",
                    },
                    at: match &rule.layer {
                        Layer::System { key } => key.clone(),
                        Layer::Annotation => ANNOTATION.to_string(),
                        Layer::Application => rule.at.clone(),
                    },
                    hides: one.fields,
                    managers: rule.managed_fields_managers.clone(),
                })
            })
            .collect();
        for p in applied.iter().flat_map(|a| &a.hides) {
            if !h.fields.contains(p) {
                h.fields.push(p.clone());
            }
        }
        objects.push(ObjectExplanation {
            group: r.group.clone(),
            kind: r.kind.clone(),
            namespace,
            name: r.name.clone(),
            sync_options: effective_options(&known(&app.sync_options), &known(&facts.sync_options)),
            compare_options: facts.compare_options.clone(),
            rules: applied,
            kept_at_sync: if respect {
                h.fields.clone()
            } else {
                Vec::new()
            },
            frozen_lists: if respect { h.frozen_lists } else { Vec::new() },
            hidden: h.fields,
        });
    }
    let unmatched_rules = layered
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(r, _)| match &r.layer {
            Layer::System { key } => key.clone(),
            _ => r.at.clone(),
        })
        .collect();
    Explanation {
        application: app.name.clone(),
        namespace: app.namespace.clone(),
        project: app.project.clone(),
        destination: (&app.destination).into(),
        argocd: ctx.argocd.clone(),
        settings: Settings {
            system_ignore_differences: ctx.system_rules.to_vec(),
            sync_options: app.sync_options.items.clone(),
            unknown_sync_options: app.sync_options.unknown.clone(),
            automated: app.automated,
            self_heal: app.self_heal,
            prune: app.auto_prune,
            respect_ignore_differences: respect,
            ignore_differences: app.ignore_rules.clone(),
        },
        objects,
        unmatched_rules,
        unknown_fields: app.notes.unknown.clone(),
    }
}

/// The options Argo CD acts on (it ignores the ones it does not know).
fn known(o: &super::argo::SyncOptions) -> Vec<String> {
    o.items
        .iter()
        .filter(|i| !o.unknown.contains(i))
        .cloned()
        .collect()
}

/// The Application's options, each overridden by the object's own option of the same key.
fn effective_options(app: &[String], own: &[String]) -> Vec<EffectiveOption> {
    let key = |o: &str| o.split_once('=').map_or(o, |(k, _)| k).to_string();
    let mut out: Vec<EffectiveOption> = app
        .iter()
        .filter(|o| !own.iter().any(|x| key(x) == key(o)))
        .map(|o| EffectiveOption {
            option: o.clone(),
            from: "application",
        })
        .collect();
    out.extend(own.iter().map(|o| EffectiveOption {
        option: o.clone(),
        from: "annotation",
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_option_overrides_the_application_option_of_its_key() {
        let e = effective_options(
            &["ServerSideApply=true".into(), "CreateNamespace=true".into()],
            &["ServerSideApply=false".into()],
        );
        let got: Vec<(&str, &str)> = e.iter().map(|o| (o.option.as_str(), o.from)).collect();
        assert_eq!(
            got,
            vec![
                ("CreateNamespace=true", "application"),
                ("ServerSideApply=false", "annotation")
            ]
        );
    }

    #[test]
    fn layers_combine_and_unmatched_rules_are_listed() {
        let app = Application::read(&json!({
            "metadata": {"name": "web", "namespace": "argocd"},
            "spec": {"destination": {"namespace": "shop"},
                "syncPolicy": {"syncOptions": ["RespectIgnoreDifferences=true"]},
                "ignoreDifferences": [
                    {"group": "apps", "kind": "Deployment", "jsonPointers": ["/spec/replicas"]},
                    {"kind": "Deployment", "jsonPointers": ["/spec/paused"]}]}}));
        let system = vec![IgnoreRule::system(
            "resource.customizations.ignoreDifferences.all",
            "/data/x",
            "*",
            "*",
            &json!({"jsonPointers": ["/metadata/labels/team"]}),
        )];
        let d = Resource::from_value(
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "annotations": {
                       "argocd.argoproj.io/sync-options": "ServerSideApply=true"}},
                   "spec": {"replicas": 2}}),
            None,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let facts = SyncFacts::of(&d);
        let none = |_: &Resource| None;
        let ctx = Context {
            system_rules: &system,
            argocd: "3.6.1".into(),
            strategic_merge: true,
            per_resource_ignore_differences: true,
            annotation_pointers: &none,
            live: &|_| None,
        };
        let e = explain(&app, &[(&d, &facts)], &ctx);
        let o = &e.objects[0];
        assert_eq!(o.namespace, "shop");
        assert_eq!(
            o.hidden,
            vec!["/spec/replicas".to_string(), "/metadata/labels/team".into()]
        );
        assert_eq!(o.kept_at_sync, o.hidden);
        assert_eq!(o.rules.len(), 2);
        assert_eq!(o.rules[1].layer, "system");
        assert_eq!(
            e.unmatched_rules,
            vec!["/spec/ignoreDifferences/1".to_string()]
        );
        assert_eq!(o.sync_options.len(), 2);
    }
}
