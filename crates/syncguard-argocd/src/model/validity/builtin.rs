//! Built-in kinds decoded as the API server decodes them under strict field validation.
//!
//! Argo CD applies with kubectl's `--validate=true` unless the `Validate=false` sync option is
//! set, and for a kubectl of 1.25 or later that is the API server's `Strict` field validation: an
//! unknown field or a value of the wrong type fails the apply, and with it the sync. The Go
//! types the API server decodes into are generated from the same OpenAPI document as the
//! `k8s-openapi` types, so decoding the manifest into them finds the same two kinds of mistake.
//!
//! Two leniencies of the API server are reproduced: a number is accepted where a quantity is
//! expected (`cpu: 1`), and an integer or a string where an int-or-string is expected; both are
//! what `k8s-openapi`'s own types accept too.

use std::collections::HashMap;
use std::sync::OnceLock;

use k8s_openapi::Resource as K8sResource;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Violation, ViolationKind};

/// The newest Kubernetes minor version whose types syncguard decodes with.
pub const KUBERNETES_TYPES: &str = "1.37";

type Decoder = fn(&Value) -> Vec<Violation>;

macro_rules! decoders {
    ($($t:ty),* $(,)?) => {
        fn table() -> HashMap<(&'static str, &'static str), Decoder> {
            let mut m: HashMap<(&'static str, &'static str), Decoder> = HashMap::new();
            $( m.insert((<$t as K8sResource>::API_VERSION, <$t as K8sResource>::KIND), strict::<$t>); )*
            m
        }
    };
}

use k8s_openapi::api::{
    admissionregistration::v1 as admission, apps::v1 as apps, autoscaling::v1 as autoscaling1,
    autoscaling::v2 as autoscaling2, batch::v1 as batch, certificates::v1 as certificates,
    coordination::v1 as coordination, core::v1 as core, discovery::v1 as discovery,
    networking::v1 as networking, node::v1 as node, policy::v1 as policy, rbac::v1 as rbac,
    scheduling::v1 as scheduling, storage::v1 as storage,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;

decoders!(
    admission::MutatingWebhookConfiguration,
    admission::ValidatingWebhookConfiguration,
    admission::ValidatingAdmissionPolicy,
    admission::ValidatingAdmissionPolicyBinding,
    apps::ControllerRevision,
    apps::DaemonSet,
    apps::Deployment,
    apps::ReplicaSet,
    apps::StatefulSet,
    autoscaling1::HorizontalPodAutoscaler,
    autoscaling2::HorizontalPodAutoscaler,
    batch::CronJob,
    batch::Job,
    certificates::CertificateSigningRequest,
    coordination::Lease,
    core::ConfigMap,
    core::Endpoints,
    core::LimitRange,
    core::Namespace,
    core::PersistentVolume,
    core::PersistentVolumeClaim,
    core::Pod,
    core::PodTemplate,
    core::ReplicationController,
    core::ResourceQuota,
    core::Secret,
    core::Service,
    core::ServiceAccount,
    discovery::EndpointSlice,
    networking::Ingress,
    networking::IngressClass,
    networking::NetworkPolicy,
    node::RuntimeClass,
    policy::PodDisruptionBudget,
    rbac::ClusterRole,
    rbac::ClusterRoleBinding,
    rbac::Role,
    rbac::RoleBinding,
    scheduling::PriorityClass,
    storage::CSIDriver,
    storage::StorageClass,
    storage::VolumeAttachment,
    apiextensions::CustomResourceDefinition,
    apiregistration::APIService,
);

fn decoders() -> &'static HashMap<(&'static str, &'static str), Decoder> {
    static TABLE: OnceLock<HashMap<(&'static str, &'static str), Decoder>> = OnceLock::new();
    TABLE.get_or_init(table)
}

/// Whether `apiVersion`/`kind` is a built-in type syncguard decodes.
pub fn is_known(api_version: &str, kind: &str) -> bool {
    decoders().contains_key(&(api_version, kind))
}

/// The violations of `raw` against its built-in type, or `None` when `apiVersion`/`kind` is not
/// one syncguard decodes (a custom resource, or a built-in kind of another version).
pub fn check(api_version: &str, kind: &str, raw: &Value) -> Option<Vec<Violation>> {
    let decode = decoders().get(&(api_version, kind))?;
    Some(decode(raw))
}

/// Decodes `raw` as `T`, collecting every unknown field and the first type error (the decoder
/// stops there, as the API server's does). A missing required field is not found here:
/// `k8s-openapi` fills it with its default, and the API server's validation says more about it
/// than the OpenAPI `required` list does.
fn strict<T: DeserializeOwned>(raw: &Value) -> Vec<Violation> {
    let mut unknown: Vec<String> = Vec::new();
    let decoded: Result<T, _> = {
        let mut callback = |path: serde_ignored::Path<'_>| unknown.push(ignored_pointer(&path));
        T::deserialize(serde_ignored::Deserializer::new(raw, &mut callback))
    };
    let mut out: Vec<Violation> = unknown
        .into_iter()
        // `status` is not part of what is applied (the API server drops it from the body of a
        // create or update of a kind with a status subresource): not an error.
        .filter(|p| p != "/status" && !p.starts_with("/status/"))
        .map(|pointer| Violation {
            message: format!("unknown field \"{}\"", last_segment(&pointer)),
            pointer,
            kind: ViolationKind::UnknownField,
        })
        .collect();
    if decoded.is_err() {
        // Only a failed decode pays for tracking the path to the error.
        let mut track = serde_path_to_error::Track::new();
        let again: Result<T, _> =
            T::deserialize(serde_path_to_error::Deserializer::new(raw, &mut track));
        if let Err(e) = again {
            out.push(Violation {
                pointer: tracked_pointer(&track.path()),
                kind: ViolationKind::WrongType,
                message: api_words(&e.to_string()),
            });
        }
    }
    out
}

/// serde's words, made to read as the API server's ("expected a string" → "expected string").
fn api_words(text: &str) -> String {
    text.replace("invalid type: ", "")
        .replace("expected a ", "expected ")
        .replace("expected an ", "expected ")
}

fn last_segment(pointer: &str) -> String {
    pointer
        .rsplit('/')
        .next()
        .unwrap_or_default()
        .replace("~1", "/")
        .replace("~0", "~")
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn ignored_pointer(path: &serde_ignored::Path<'_>) -> String {
    match path {
        serde_ignored::Path::Root => String::new(),
        serde_ignored::Path::Seq { parent, index } => {
            format!("{}/{index}", ignored_pointer(parent))
        }
        serde_ignored::Path::Map { parent, key } => {
            format!("{}/{}", ignored_pointer(parent), escape(key))
        }
        serde_ignored::Path::Some { parent }
        | serde_ignored::Path::NewtypeStruct { parent }
        | serde_ignored::Path::NewtypeVariant { parent } => ignored_pointer(parent),
    }
}

fn tracked_pointer(path: &serde_path_to_error::Path) -> String {
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => out.push_str(&format!("/{index}")),
            serde_path_to_error::Segment::Map { key } => {
                out.push('/');
                out.push_str(&escape(key));
            }
            serde_path_to_error::Segment::Enum { .. } | serde_path_to_error::Segment::Unknown => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(container: Value) -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "creationTimestamp": null},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}}
            },
            "status": {}
        })
    }

    #[test]
    fn a_valid_deployment_has_no_violation() {
        let raw = deployment(
            json!({"name": "web", "image": "nginx", "resources": {"limits": {"cpu": 1, "memory": "1Gi"}}, "ports": [{"containerPort": 80}]}),
        );
        assert_eq!(check("apps/v1", "Deployment", &raw), Some(vec![]));
    }

    #[test]
    fn an_unknown_field_is_reported_with_its_pointer() {
        let raw =
            deployment(json!({"name": "web", "image": "nginx", "imagePullPolicyy": "Always"}));
        let v = check("apps/v1", "Deployment", &raw).unwrap();
        assert_eq!(v.len(), 1);
        assert_eq!(
            v[0].pointer,
            "/spec/template/spec/containers/0/imagePullPolicyy"
        );
        assert_eq!(v[0].kind, ViolationKind::UnknownField);
    }

    #[test]
    fn a_wrong_type_stops_the_decoder() {
        let raw = deployment(
            json!({"name": "web", "image": "nginx", "ports": [{"containerPort": "http"}]}),
        );
        let v = check("apps/v1", "Deployment", &raw).unwrap();
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].kind, ViolationKind::WrongType);
        assert_eq!(
            v[0].pointer,
            "/spec/template/spec/containers/0/ports/0/containerPort"
        );
    }

    #[test]
    fn a_custom_kind_or_another_version_is_not_judged_here() {
        assert_eq!(check("example.com/v1", "Widget", &json!({})), None);
        assert_eq!(check("extensions/v1beta1", "Ingress", &json!({})), None);
    }
}
