//! `admission.k8s.io/v1` AdmissionReview, as the API server sends and expects it.
//!
//! Our own small serde types rather than kube-rs's: kube-core serializes `response.patch` as a
//! JSON array of numbers (kube-rs/kube#1781) where the API server requires a base64 string, and
//! we need exact control over what goes on the wire (`patchType` only together with `patch`,
//! `warnings` within the API server's limits). Unknown request fields are ignored, so newer API
//! servers keep working.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

/// The only AdmissionReview version syncguard speaks (`admissionReviewVersions: ["v1"]`).
pub const API_VERSION: &str = "admission.k8s.io/v1";

/// The `kind` of an AdmissionReview.
pub const KIND: &str = "AdmissionReview";

/// An incoming review: `request` must be present.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewIn {
    /// Must be [`API_VERSION`].
    pub api_version: String,
    /// Must be [`KIND`].
    pub kind: String,
    /// The request; absent only in malformed reviews.
    pub request: Option<AdmissionRequest>,
}

/// `request` of an AdmissionReview.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionRequest {
    /// Copied into the response; the API server matches on it.
    pub uid: String,
    /// The kind of the object as requested (after conversion to the webhook's version).
    pub kind: GroupVersionKind,
    /// The resource (plural) being acted on.
    #[serde(default)]
    pub resource: Option<GroupVersionResource>,
    /// E.g. `status`, `scale`; empty for the main resource.
    #[serde(default)]
    pub sub_resource: Option<String>,
    /// The object's name (empty on CREATE with `generateName`).
    #[serde(default)]
    pub name: Option<String>,
    /// The object's namespace (absent for cluster-scoped objects).
    #[serde(default)]
    pub namespace: Option<String>,
    /// CREATE, UPDATE, DELETE or CONNECT.
    pub operation: Operation,
    /// Who is asking.
    #[serde(default)]
    pub user_info: Value,
    /// The new object (CREATE/UPDATE); absent on DELETE.
    #[serde(default)]
    pub object: Option<Value>,
    /// The existing object (UPDATE/DELETE).
    #[serde(default)]
    pub old_object: Option<Value>,
    /// `kubectl apply --dry-run=server`: evaluate the same way, cause no side effects.
    #[serde(default)]
    pub dry_run: Option<bool>,
    /// Set by [`super::service::decode_with_limit`] when `object` or `oldObject` is larger
    /// than the webhook's object limit: the larger one's size, in bytes of its JSON in the
    /// review. Neither is parsed then (`object` and `old_object` are `None`), and the review is
    /// admitted with a warning, without evaluation.
    #[serde(skip)]
    pub oversized: Option<usize>,
}

impl AdmissionRequest {
    /// The request without `object` and `oldObject`: what logs and metrics need once the
    /// objects have been handed to the evaluation.
    pub fn without_objects(&self) -> Self {
        Self {
            uid: self.uid.clone(),
            kind: self.kind.clone(),
            resource: self.resource.clone(),
            sub_resource: self.sub_resource.clone(),
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            operation: self.operation,
            user_info: self.user_info.clone(),
            object: None,
            old_object: None,
            dry_run: self.dry_run,
            oversized: self.oversized,
        }
    }
}

/// An incoming review as read off the wire: `object` and `oldObject` are left as the JSON text
/// they arrived as (borrowed from the body), so their sizes are known before any tree is built.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireReview<'a> {
    pub api_version: String,
    pub kind: String,
    #[serde(borrow)]
    pub request: Option<WireRequest<'a>>,
}

/// `request` of a [`WireReview`]: [`AdmissionRequest`] with the objects unparsed.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireRequest<'a> {
    pub uid: String,
    pub kind: GroupVersionKind,
    #[serde(default)]
    pub resource: Option<GroupVersionResource>,
    #[serde(default)]
    pub sub_resource: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub namespace: Option<String>,
    pub operation: Operation,
    #[serde(default)]
    pub user_info: Value,
    #[serde(default, borrow)]
    pub object: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub old_object: Option<&'a RawValue>,
    #[serde(default)]
    pub dry_run: Option<bool>,
}

impl WireRequest<'_> {
    /// Parses the objects, unless one is larger than `max_object_bytes` (then neither is, and
    /// [`AdmissionRequest::oversized`] says how large). A JSON `null` object is `None`, as
    /// before (serde reads `null` into an absent `Option`).
    pub fn parse(self, max_object_bytes: usize) -> Result<AdmissionRequest, serde_json::Error> {
        let size = |o: Option<&RawValue>| o.map_or(0, |raw| raw.get().len());
        let largest = size(self.object).max(size(self.old_object));
        let oversized = (largest > max_object_bytes).then_some(largest);
        let parse = |o: Option<&RawValue>| -> Result<Option<Value>, serde_json::Error> {
            match o {
                Some(raw) if oversized.is_none() => {
                    serde_json::from_str::<Value>(raw.get()).map(|v| (!v.is_null()).then_some(v))
                }
                _ => Ok(None),
            }
        };
        Ok(AdmissionRequest {
            object: parse(self.object)?,
            old_object: parse(self.old_object)?,
            uid: self.uid,
            kind: self.kind,
            resource: self.resource,
            sub_resource: self.sub_resource,
            name: self.name,
            namespace: self.namespace,
            operation: self.operation,
            user_info: self.user_info,
            dry_run: self.dry_run,
            oversized,
        })
    }
}

/// Group/version/kind.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct GroupVersionKind {
    /// API group (empty for core).
    #[serde(default)]
    pub group: String,
    /// Version.
    #[serde(default)]
    pub version: String,
    /// Kind.
    #[serde(default)]
    pub kind: String,
}

/// Group/version/resource.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, Eq)]
pub struct GroupVersionResource {
    /// API group.
    #[serde(default)]
    pub group: String,
    /// Version.
    #[serde(default)]
    pub version: String,
    /// Plural resource name.
    #[serde(default)]
    pub resource: String,
}

/// The admission operation.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    /// Object creation.
    Create,
    /// Object update.
    Update,
    /// Object deletion.
    Delete,
    /// exec/attach/port-forward.
    Connect,
}

impl Operation {
    /// As written in AdmissionReviews and in `input.operation`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// An outgoing review.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewOut {
    /// Always [`API_VERSION`].
    pub api_version: &'static str,
    /// Always [`KIND`].
    pub kind: &'static str,
    /// The answer.
    pub response: AdmissionResponse,
}

impl ReviewOut {
    /// Wraps a response.
    pub fn new(response: AdmissionResponse) -> Self {
        Self {
            api_version: API_VERSION,
            kind: KIND,
            response,
        }
    }
}

/// `response` of an AdmissionReview.
#[derive(Debug, Clone, Serialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct AdmissionResponse {
    /// The request's uid.
    pub uid: String,
    /// Whether the request is admitted.
    pub allowed: bool,
    /// Why it was denied (shown to the user by kubectl and Argo CD).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Base64-encoded RFC 6902 JSON patch (mutating webhook only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// `JSONPatch`, present exactly when `patch` is (the API server rejects one without the
    /// other).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub patch_type: Option<&'static str>,
    /// Recorded in the API server's audit log.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub audit_annotations: BTreeMap<String, String>,
    /// Shown to the client (kubectl prints them; Argo CD shows them in the sync result).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A `metav1.Status` carrying the denial reason.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// HTTP-like code shown by kubectl (403 for a policy denial).
    pub code: u16,
    /// The denial message.
    pub message: String,
    /// Machine-readable reason, e.g. `Forbidden`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_recorded_review_parses_and_unknown_fields_are_ignored() {
        let body = json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
                "kind": {"group": "batch", "version": "v1", "kind": "Job"},
                "resource": {"group": "batch", "version": "v1", "resource": "jobs"},
                "requestKind": {"group": "batch", "version": "v1", "kind": "Job"},
                "name": "db-migrate", "namespace": "orders", "operation": "CREATE",
                "userInfo": {"username": "system:serviceaccount:argocd:argocd-application-controller"},
                "object": {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "db-migrate"}},
                "oldObject": null, "dryRun": false, "options": {"kind": "CreateOptions"}
            }
        });
        let review: ReviewIn = serde_json::from_value(body).unwrap();
        let req = review.request.unwrap();
        assert_eq!(req.operation, Operation::Create);
        assert_eq!(req.kind.kind, "Job");
        assert!(req.old_object.is_none());
        assert_eq!(req.dry_run, Some(false));
    }

    #[test]
    fn objects_over_the_limit_are_left_unparsed_and_their_size_is_kept() {
        use crate::webhook::service::{decode, decode_with_limit};
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "big"}, "data": {"k": "v".repeat(100)}});
        let size = serde_json::to_vec(&object).unwrap().len();
        let review = |old: Value| {
            serde_json::to_vec(&json!({
                "apiVersion": API_VERSION, "kind": KIND,
                "request": {"uid": "u", "kind": {"kind": "ConfigMap"}, "operation": "UPDATE",
                            "object": object, "oldObject": old}
            }))
            .unwrap()
        };
        let body = review(Value::Null);
        let all = decode(&body).unwrap();
        assert_eq!(all.object.as_ref(), Some(&object));
        assert!(
            all.old_object.is_none(),
            "a null oldObject is absent, as before"
        );
        assert_eq!(all.oversized, None);
        let at = decode_with_limit(&body, size).unwrap();
        assert_eq!(at.object.as_ref(), Some(&object));
        assert_eq!(at.oversized, None);
        let over = decode_with_limit(&body, size - 1).unwrap();
        assert_eq!((over.object, over.old_object), (None, None));
        assert_eq!(over.oversized, Some(size));
        assert_eq!(over.uid, "u");
        // The larger of the two objects counts, and then neither is parsed.
        let bigger = json!({"apiVersion": "v1", "kind": "ConfigMap",
                            "metadata": {"name": "big"}, "data": {"k": "v".repeat(200)}});
        let old_size = serde_json::to_vec(&bigger).unwrap().len();
        let over = decode_with_limit(&review(bigger), size).unwrap();
        assert_eq!((over.object, over.old_object), (None, None));
        assert_eq!(over.oversized, Some(old_size));
        let header = all.without_objects();
        assert_eq!((header.uid.as_str(), header.object), ("u", None));
    }

    #[test]
    fn a_response_without_patch_has_no_patch_type_and_patches_are_strings() {
        let plain = serde_json::to_value(ReviewOut::new(AdmissionResponse {
            uid: "u".into(),
            allowed: true,
            ..AdmissionResponse::default()
        }))
        .unwrap();
        assert_eq!(plain["response"], json!({"uid": "u", "allowed": true}));
        assert_eq!(plain["apiVersion"], API_VERSION);
        let patched = serde_json::to_value(AdmissionResponse {
            uid: "u".into(),
            allowed: true,
            patch: Some("W10=".into()),
            patch_type: Some("JSONPatch"),
            ..AdmissionResponse::default()
        })
        .unwrap();
        assert!(patched["patch"].is_string());
        assert_eq!(patched["patchType"], "JSONPatch");
    }
}
