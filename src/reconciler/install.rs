//! Which Argo CD the cluster runs and how it is configured, read from its live objects: the
//! release from the application controller's image (or its `app.kubernetes.io/version` label),
//! the configuration from `argocd-cm`, `argocd-cmd-params-cm` and the `AppProject`s of Argo CD's
//! namespace.
//!
//! Used by the background audit and by `serve --cluster`, so that rules judge for the Argo CD
//! that will actually sync (`input.argocd`) unless `argocd_version` in `config.yaml` pins one.
//! Every read is best effort: a missing object or a forbidden read leaves that fact unknown
//! (logged once per pass at debug level) and never fails the caller.

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::Value;

use crate::model::Resource;
use crate::model::argocd_config::{ARGOCD_CM, ARGOCD_CMD_PARAMS_CM, ArgoCdConfig, ConfigSource};
use crate::model::version::ArgoCdVersion;

/// AppProjects per list page, as the audit's other lists.
const PAGE_SIZE: u32 = 500;

/// The application controller's name in Argo CD's manifests and Helm chart.
pub const CONTROLLER_NAME: &str = "argocd-application-controller";

/// What was read about the Argo CD installation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Installation {
    /// The release the application controller runs, when it could be read.
    pub version: Option<ArgoCdVersion>,
    /// `argocd-cm`, `argocd-cmd-params-cm` and AppProjects (source `cluster`, or `none` when none
    /// could be read).
    pub config: ArgoCdConfig,
}

/// Reads the installation in `namespace` (usually `argocd`).
pub async fn read(client: &Client, namespace: &str) -> Installation {
    let mut version = None;
    for kind in ["StatefulSet", "Deployment"] {
        let api: Api<DynamicObject> = Api::namespaced_with(
            client.clone(),
            namespace,
            &ApiResource::from_gvk(&GroupVersionKind::gvk("apps", "v1", kind)),
        );
        match api.get_opt(CONTROLLER_NAME).await {
            Ok(Some(obj)) => {
                version = serde_json::to_value(obj)
                    .ok()
                    .and_then(|v| version_of_workload(&v));
                if version.is_some() {
                    break;
                }
            }
            Ok(None) => {}
            Err(error) => {
                tracing::debug!(%error, kind, namespace, "cannot read the Argo CD controller");
            }
        }
    }
    let mut objects: Vec<Resource> = Vec::new();
    let cms: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "ConfigMap")),
    );
    for name in [ARGOCD_CM, ARGOCD_CMD_PARAMS_CM] {
        match cms.get_opt(name).await {
            Ok(Some(cm)) => objects.extend(as_resource(cm, "v1", "ConfigMap")),
            Ok(None) => {}
            Err(error) => tracing::debug!(%error, namespace, name, "cannot read the ConfigMap"),
        }
    }
    let projects: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::from_gvk(&GroupVersionKind::gvk(
            "argoproj.io",
            "v1alpha1",
            "AppProject",
        )),
    );
    let mut params = ListParams::default().limit(PAGE_SIZE);
    loop {
        match projects.list(&params).await {
            Ok(list) => {
                objects.extend(
                    list.items
                        .into_iter()
                        .filter_map(|p| as_resource(p, "argoproj.io/v1alpha1", "AppProject")),
                );
                match list.metadata.continue_.filter(|c| !c.is_empty()) {
                    Some(token) => params = params.continue_token(&token),
                    None => break,
                }
            }
            Err(error) => {
                tracing::debug!(%error, namespace, "cannot list AppProjects");
                break;
            }
        }
    }
    let mut config = ArgoCdConfig::from_resources(&objects, ConfigSource::Cluster);
    for problem in config.problems.drain(..) {
        tracing::warn!(namespace, problem, "Argo CD configuration not fully read");
    }
    Installation { version, config }
}

/// A listed object as a [`Resource`] (lists leave `apiVersion` and `kind` out of items).
fn as_resource(obj: DynamicObject, api_version: &str, kind: &str) -> Option<Resource> {
    let mut value = serde_json::to_value(obj).ok()?;
    let map = value.as_object_mut()?;
    map.insert("apiVersion".into(), Value::from(api_version));
    map.insert("kind".into(), Value::from(kind));
    Resource::from_value(value, None).ok()
}

/// The Argo CD release of an application controller workload: the tag of its `argocd` image
/// (`quay.io/argoproj/argocd:v3.2.11`, digest allowed), else its `app.kubernetes.io/version`
/// label (set by the Helm chart). `None` when neither names a release (a `latest` tag, a
/// mirror that renamed the image and no label).
pub fn version_of_workload(workload: &Value) -> Option<ArgoCdVersion> {
    let containers = workload
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array);
    let from_image = containers.into_iter().flatten().find_map(|c| {
        let image = c.get("image")?.as_str()?;
        let image = image.split('@').next().unwrap_or(image);
        let (repository, tag) = image.rsplit_once(':')?;
        if tag.contains('/') {
            // `registry:5000/argocd`: the colon was the registry's port, there is no tag.
            return None;
        }
        let name = repository.rsplit('/').next().unwrap_or(repository);
        (name == "argocd").then(|| tag.parse().ok()).flatten()
    });
    from_image.or_else(|| {
        workload
            .pointer("/metadata/labels/app.kubernetes.io~1version")
            .and_then(Value::as_str)
            .and_then(|v| v.parse().ok())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn controller(image: &str, labels: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": CONTROLLER_NAME, "labels": labels},
               "spec": {"template": {"spec": {"containers": [
                   {"name": "init", "image": "busybox:1.36"},
                   {"name": "application-controller", "image": image}]}}}})
    }

    #[test]
    fn the_release_comes_from_the_argocd_image_tag() {
        for (image, want) in [
            ("quay.io/argoproj/argocd:v3.2.11", "3.2.11"),
            ("quay.io/argoproj/argocd:v2.10.4@sha256:0123abcd", "2.10.4"),
            ("registry.internal:5000/mirror/argocd:v3.3.0-rc2", "3.3.0"),
            ("argocd:v3.1.0", "3.1.0"),
        ] {
            let v = version_of_workload(&controller(image, json!({})));
            assert_eq!(v.map(|v| v.to_string()).as_deref(), Some(want), "{image}");
        }
    }

    #[test]
    fn without_a_release_tag_the_chart_label_decides_or_nothing_is_known() {
        let label = json!({"app.kubernetes.io/version": "v3.2.11"});
        for image in [
            "quay.io/argoproj/argocd:latest",
            "registry.internal:5000/argocd",
            "ghcr.io/acme/gitops-controller:v9.9.9",
        ] {
            assert_eq!(
                version_of_workload(&controller(image, label.clone())).map(|v| v.to_string()),
                Some("3.2.11".to_string()),
                "{image}"
            );
            assert_eq!(version_of_workload(&controller(image, json!({}))), None);
        }
        // A release older than syncguard models is not guessed into a newer one.
        assert_eq!(
            version_of_workload(&controller("quay.io/argoproj/argocd:v1.8.7", json!({}))),
            None
        );
    }
}
