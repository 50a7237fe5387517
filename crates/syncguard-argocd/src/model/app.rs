//! Argo CD Applications: which objects belong to which app, and the app settings that change
//! how Argo CD syncs them (destination namespace, sync options, ignoreDifferences).
//!
//! Membership follows the resource tracking method in force ([`Membership`]), as Argo CD's own
//! `GetAppName` does: with `annotation` or `annotation+label` (the default since Argo CD 3.0) only
//! the `argocd.argoproj.io/tracking-id` annotation names an object's Application; with `label`
//! (the default before 3.0, or `application.resourceTrackingMethod: label` in argocd-cm) the
//! instance label does (`application.instanceLabelKey`, by default `app.kubernetes.io/instance`).
//!
//! A rendered chart is not tracked yet: Argo CD adds its marker to every object when it applies
//! them. So Helm's own `app.kubernetes.io/instance` label says nothing about ownership under
//! annotation tracking, and under label tracking Argo CD overwrites it on every object of the
//! render: objects that carry no marker join the input's one labelled Application when there is
//! exactly one (a chart's `crds/` files are not templated and carry no label).
//!
//! When nothing in the input is tracked yet and it holds exactly one Application, the other
//! objects are that Application's (a GitOps directory: the Application next to what it deploys).
//!
//! Settings come from an `argoproj.io/Application` object of that name in the same input, when
//! there is one.

use super::Resource;
use super::argo::{INSTANCE_LABEL, SyncFacts};
use super::tracking::TrackingMethod;
use super::version::ArgoCdVersion;
pub use crate::config::application::{Application, is_application};

/// How objects are tied to their Application: the tracking method and instance label key in
/// force for an Argo CD release and configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Membership {
    /// The tracking method in force.
    pub method: TrackingMethod,
    /// `application.instanceLabelKey` (read only with label tracking).
    pub label_key: String,
    /// Untracked objects next to the input's only Application are its own (rendered input, a
    /// GitOps directory). Off for sets read back from the cluster, whose membership the cluster
    /// already decided.
    pub one_application_owns_the_rest: bool,
}

impl Default for Membership {
    /// The default of the newest release syncguard models.
    fn default() -> Self {
        Self::of(ArgoCdVersion::default(), None, None)
    }
}

impl Membership {
    /// The tracking method and instance label key argocd-cm sets (`method`, `label_key`), else
    /// the release's defaults.
    pub fn of(
        version: ArgoCdVersion,
        method: Option<TrackingMethod>,
        label_key: Option<&str>,
    ) -> Self {
        Self {
            method: method.unwrap_or_else(|| TrackingMethod::default_for(version)),
            label_key: label_key.unwrap_or(INSTANCE_LABEL).to_string(),
            one_application_owns_the_rest: true,
        }
    }

    /// Objects Argo CD has applied, read back from the cluster (admission, live sets): the
    /// tracking id when there is one, else the instance label — what any release would have
    /// written on them.
    pub fn live() -> Self {
        Self {
            method: TrackingMethod::AnnotationAndLabel,
            label_key: INSTANCE_LABEL.to_string(),
            one_application_owns_the_rest: false,
        }
    }

    /// The Application that owns `r` (with facts `f`) under this method, if it names one.
    pub fn app_of<'r>(&self, r: &'r Resource, f: &'r SyncFacts) -> Option<&'r str> {
        self.tracked_app_of(r, f).or(r.rendered_by.as_deref())
    }

    /// What the object's tracking says, alone.
    fn tracked_app_of<'r>(&self, r: &'r Resource, f: &'r SyncFacts) -> Option<&'r str> {
        match self.method {
            TrackingMethod::Label => r.label(&self.label_key),
            // The instance name (`<namespace>_<name>` outside the control-plane namespace), not
            // the bare name: two Applications of one name in two namespaces are two.
            TrackingMethod::Annotation => f.tracking.id.as_ref().map(|id| id.app_instance.as_str()),
            // `live()`: the id, else the label Argo CD also writes with this method.
            TrackingMethod::AnnotationAndLabel => f.tracking.app_instance(),
        }
    }
}

/// The destination namespace a render was made for, when nothing says it (no Application in the
/// input, no `--dest-namespace`): the namespace its objects name most often. Argo CD renders a
/// Helm chart with `--namespace <destination>`, and charts write `{{ .Release.Namespace }}` into
/// their namespaced objects, so that namespace is the destination; objects that name none land
/// there too. `None` when no object names a namespace.
pub fn inferred_destination(objects: &[Resource]) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for ns in objects.iter().filter_map(|o| o.namespace.as_deref()) {
        match counts.iter_mut().find(|(n, _)| *n == ns) {
            Some((_, c)) => *c += 1,
            None => counts.push((ns, 1)),
        }
    }
    // The most named; on a tie, the first seen.
    let mut best: Option<(&str, usize)> = None;
    for (ns, c) in counts {
        if best.is_none_or(|(_, b)| c > b) {
            best = Some((ns, c));
        }
    }
    best.map(|(ns, _)| ns.to_string())
}

/// The objects of one Application (or of no known Application).
#[derive(Debug, Clone, PartialEq)]
pub struct AppGroup {
    /// The app name from tracking; `None` for objects that name no app.
    pub name: Option<String>,
    /// The Application object of that name, when the input contains it.
    pub application: Option<Application>,
    /// Indexes of the member objects in the input, in input order.
    pub members: Vec<usize>,
}

/// Splits objects by owning Application, in order of first appearance. Application objects are
/// members of the app that tracks *them* (app-of-apps), and also describe the app they name.
/// Under label tracking, objects without the label join the input's only labelled app (Argo CD
/// labels every object it applies; see the module comment).
pub fn group_by_app(
    resources: &[Resource],
    facts: &[SyncFacts],
    membership: &Membership,
) -> Vec<AppGroup> {
    let names: Vec<Option<&str>> = resources
        .iter()
        .zip(facts)
        .map(|(r, f)| membership.app_of(r, f))
        .collect();
    let distinct: std::collections::BTreeSet<&str> = names.iter().flatten().copied().collect();
    let mut applications = resources.iter().filter(|r| is_application(r));
    let lone_application = match (applications.next(), applications.next()) {
        (Some(app), None) => Some(app.name.as_str()),
        _ => None,
    };
    let only_app = match distinct.len() {
        1 if membership.method == TrackingMethod::Label => distinct.into_iter().next(),
        // Nothing is tracked yet and the input holds one Application: its manifests next to it
        // (a GitOps directory: the Application and what it deploys).
        0 if membership.one_application_owns_the_rest => lone_application,
        _ => None,
    };
    let mut groups: Vec<AppGroup> = Vec::new();
    let mut by_name: std::collections::HashMap<Option<String>, usize> = Default::default();
    for (i, name) in names.iter().enumerate() {
        // An Application object never joins the app it describes by default: it is the parent's
        // member (app-of-apps), or nobody's.
        let default = if resources.get(i).is_some_and(is_application) {
            None
        } else {
            only_app
        };
        let name = name.or(default).map(str::to_string);
        let slot = *by_name.entry(name.clone()).or_insert_with(|| {
            groups.push(AppGroup {
                name,
                application: None,
                members: Vec::new(),
            });
            groups.len() - 1
        });
        if let Some(g) = groups.get_mut(slot) {
            g.members.push(i);
        }
    }
    // Each group's Application by instance name: `<namespace>_<name>` is the Application of that
    // namespace; a bare name is the one of that name in the control-plane namespace, which is
    // the one no `<namespace>_<name>` group claims (several left: the first in `argocd` or of
    // no namespace, else the first).
    let apps: Vec<Application> = resources
        .iter()
        .filter_map(Application::from_resource)
        .collect();
    let claimed: Vec<(String, String)> = groups
        .iter()
        .filter_map(|g| g.name.as_deref()?.split_once('_'))
        .map(|(ns, n)| (ns.to_string(), n.to_string()))
        .collect();
    for g in &mut groups {
        let Some(name) = g.name.as_deref() else {
            continue;
        };
        let found = match name.split_once('_') {
            Some((ns, n)) => apps.iter().find(|a| a.namespace == ns && a.name == n),
            None => {
                let candidates: Vec<&Application> = apps
                    .iter()
                    .filter(|a| {
                        a.name == name && !claimed.contains(&(a.namespace.clone(), a.name.clone()))
                    })
                    .collect();
                candidates
                    .iter()
                    .find(|a| a.namespace.is_empty() || a.namespace == "argocd")
                    .or(candidates.first())
                    .copied()
            }
        };
        if let Some(app) = found {
            g.application = Some(app.clone());
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn res(v: Value) -> Resource {
        Resource::from_value(v, None).unwrap()
    }

    fn label_tracking() -> Membership {
        Membership::of(ArgoCdVersion::new(2, 14), None, None)
    }

    fn configmap(name: &str, labels: Value, annotations: Value) -> Resource {
        res(json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": name, "labels": labels, "annotations": annotations}}))
    }

    #[test]
    fn the_destination_of_a_render_is_the_namespace_its_objects_name_most() {
        let obj = |ns: Option<&str>| {
            let mut v =
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "a"}});
            if let Some(ns) = ns {
                v["metadata"]["namespace"] = json!(ns);
            }
            res(v)
        };
        let rs = vec![
            obj(None),
            obj(Some("kube-system")),
            obj(Some("gk")),
            obj(Some("gk")),
        ];
        assert_eq!(inferred_destination(&rs).as_deref(), Some("gk"));
        assert_eq!(
            inferred_destination(&rs[..2]).as_deref(),
            Some("kube-system")
        );
        assert_eq!(inferred_destination(&rs[..1]), None);
    }

    #[test]
    fn the_tracking_method_follows_the_release_unless_argocd_cm_sets_it() {
        assert_eq!(
            Membership::of(ArgoCdVersion::new(3, 0), None, None).method,
            TrackingMethod::Annotation
        );
        assert_eq!(label_tracking().method, TrackingMethod::Label);
        let m = Membership::of(
            ArgoCdVersion::new(3, 4),
            Some(TrackingMethod::Label),
            Some("argocd.argoproj.io/instance"),
        );
        assert_eq!(m.method, TrackingMethod::Label);
        assert_eq!(m.label_key, "argocd.argoproj.io/instance");
    }

    #[test]
    fn a_render_without_tracking_ids_is_one_application_under_annotation_tracking() {
        // helm template output: templated objects carry Helm's instance label, crds/ do not.
        let rs = vec![
            configmap("crd-like", json!({}), json!({})),
            configmap("a", json!({"app.kubernetes.io/instance": "kps"}), json!({})),
            configmap(
                "b",
                json!({"app.kubernetes.io/instance": "other"}),
                json!({}),
            ),
        ];
        let facts: Vec<SyncFacts> = rs.iter().map(SyncFacts::of).collect();
        let groups = group_by_app(&rs, &facts, &Membership::default());
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].name, None);
        assert_eq!(groups[0].members, vec![0, 1, 2]);
    }

    /// `argocd-stage_web` is the Application `web` of `argocd-stage`, not prod's `web`: two
    /// groups, each with its own Application.
    #[test]
    fn same_named_applications_of_two_namespaces_are_two_groups() {
        let app = |ns: &str, dest: &str| {
            res(
                json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                       "metadata": {"name": "web", "namespace": ns},
                       "spec": {"destination": {"namespace": dest}}}),
            )
        };
        let tracked = |id: &str| {
            configmap(
                "cfg",
                json!({}),
                json!({"argocd.argoproj.io/tracking-id": id}),
            )
        };
        let rs = vec![
            app("argocd", "prod"),
            app("argocd-stage", "stage"),
            tracked("web:/ConfigMap:shared/cfg"),
            tracked("argocd-stage_web:/ConfigMap:shared/cfg"),
        ];
        let facts: Vec<SyncFacts> = rs.iter().map(SyncFacts::of).collect();
        let groups = group_by_app(&rs, &facts, &Membership::default());
        let by = |name: &str| {
            groups
                .iter()
                .find(|g| g.name.as_deref() == Some(name))
                .unwrap()
        };
        assert_eq!(by("web").members, vec![2]);
        assert_eq!(by("argocd-stage_web").members, vec![3]);
        let dest = |name: &str| {
            by(name)
                .application
                .as_ref()
                .unwrap()
                .destination_namespace
                .clone()
        };
        assert_eq!(dest("web"), "prod");
        assert_eq!(dest("argocd-stage_web"), "stage");
    }

    #[test]
    fn under_label_tracking_unlabelled_objects_join_the_only_labelled_app() {
        let rs = vec![
            configmap("crd-like", json!({}), json!({})),
            configmap("a", json!({"app.kubernetes.io/instance": "kps"}), json!({})),
        ];
        let facts: Vec<SyncFacts> = rs.iter().map(SyncFacts::of).collect();
        let groups = group_by_app(&rs, &facts, &label_tracking());
        assert_eq!(groups.len(), 1);
        assert_eq!(groups[0].name.as_deref(), Some("kps"));
        // Two labelled apps: the unlabelled object belongs to neither.
        let mut two = rs.clone();
        two.push(configmap(
            "b",
            json!({"app.kubernetes.io/instance": "blog"}),
            json!({}),
        ));
        let facts: Vec<SyncFacts> = two.iter().map(SyncFacts::of).collect();
        let names: Vec<Option<String>> = group_by_app(&two, &facts, &label_tracking())
            .into_iter()
            .map(|g| g.name)
            .collect();
        assert_eq!(names, vec![None, Some("kps".into()), Some("blog".into())]);
    }

    #[test]
    fn untracked_objects_next_to_the_only_application_are_its_own() {
        let app = res(
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                             "metadata": {"name": "shop"},
                             "spec": {"destination": {"namespace": "shop"}}}),
        );
        let rs = vec![app.clone(), configmap("a", json!({}), json!({}))];
        let facts: Vec<SyncFacts> = rs.iter().map(SyncFacts::of).collect();
        let groups = group_by_app(&rs, &facts, &Membership::default());
        let names: Vec<Option<&str>> = groups.iter().map(|g| g.name.as_deref()).collect();
        assert_eq!(names, vec![None, Some("shop")]);
        assert_eq!(groups[1].members, vec![1]);
        assert!(groups[1].application.is_some());
        // Two Applications (an app-of-apps directory): nobody's.
        let mut two = rs.clone();
        let mut blog = app;
        blog.name = "blog".into();
        two.push(blog);
        let facts: Vec<SyncFacts> = two.iter().map(SyncFacts::of).collect();
        assert_eq!(group_by_app(&two, &facts, &Membership::default()).len(), 1);
    }

    #[test]
    fn under_annotation_tracking_only_the_tracking_id_names_the_app() {
        let rs = vec![
            configmap(
                "a",
                json!({"app.kubernetes.io/instance": "helm-release"}),
                json!({"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/a"}),
            ),
            configmap(
                "b",
                json!({"app.kubernetes.io/instance": "shop"}),
                json!({}),
            ),
        ];
        let facts: Vec<SyncFacts> = rs.iter().map(SyncFacts::of).collect();
        let names: Vec<Option<String>> = group_by_app(&rs, &facts, &Membership::default())
            .into_iter()
            .map(|g| g.name)
            .collect();
        assert_eq!(names, vec![Some("shop".into()), None]);
    }

    #[test]
    fn objects_read_back_from_the_cluster_are_grouped_by_tracking_id_then_instance_label() {
        let rs = vec![
            res(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
                "annotations": {"argocd.argoproj.io/tracking-id": "shop:/ConfigMap:shop/a"}}}),
            ),
            res(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b",
                "labels": {"app.kubernetes.io/instance": "blog"}}}),
            ),
            res(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})),
            res(
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d",
                "labels": {"app.kubernetes.io/instance": "shop"}}}),
            ),
            res(
                json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": "shop"},
                "spec": {"destination": {"namespace": "shop"},
                         "syncPolicy": {"automated": {"selfHeal": true},
                                        "syncOptions": ["CreateNamespace=true"]}}}),
            ),
        ];
        let facts: Vec<SyncFacts> = rs.iter().map(SyncFacts::of).collect();
        let groups = group_by_app(&rs, &facts, &Membership::live());
        let names: Vec<Option<&str>> = groups.iter().map(|g| g.name.as_deref()).collect();
        assert_eq!(names, vec![Some("shop"), Some("blog"), None]);
        assert_eq!(groups[0].members, vec![0, 3]);
        assert_eq!(groups[2].members, vec![2, 4]);
        let app = groups[0].application.as_ref().unwrap();
        assert_eq!(app.destination_namespace, "shop");
        assert!(app.self_heal && app.automated && !app.auto_prune);
        assert!(app.sync_options.has("CreateNamespace=true"));
        assert!(groups[1].application.is_none());
    }
}
