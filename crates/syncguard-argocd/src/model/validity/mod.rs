//! Validity: would the API server accept this object as it is written?
//!
//! A sync applies every object; one the API server refuses fails the sync (and with
//! `Validate=false` an unknown field is silently dropped instead, which leaves a difference
//! Argo CD reports forever). The evidence differs by kind:
//! - built-in kinds are decoded into the Kubernetes types ([`builtin`]): unknown fields, wrong
//!   types — certain, for the Kubernetes release of those types; and walked with the required
//!   fields of the Kubernetes OpenAPI document ([`required`]): absent or null;
//! - custom resources are checked against the `openAPIV3Schema` of a CRD in the same input
//!   ([`schema`]) — certain for what it checks, silent when the CRD is not in the input;
//! - Argo CD's Application and AppProject against the schemas of their CRDs shipped with
//!   syncguard ([`argocd`]) when the CRDs are not in the input;
//! - API versions Kubernetes removed ([`removed`]) are not served at all;
//! - metadata every kind shares ([`metadata`]): label keys and values, names;
//! - with an API server to ask, its own verdict overrules all of the above ([`server`]).

pub mod argocd;
pub mod builtin;
pub mod metadata;
pub mod removed;
pub mod required;
pub mod schema;
pub mod server;

use serde::Serialize;

use crate::model::Resource;
pub use schema::CrdIndex;

/// What is wrong, in the API server's categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ViolationKind {
    /// A field the type does not have (strict decoding error; pruned without it).
    UnknownField,
    /// A value of the wrong JSON type.
    WrongType,
    /// A required field is absent.
    MissingField,
    /// A value outside the allowed set or form (enum, name or label syntax, length).
    NotAllowed,
    /// The API version is not served.
    NotServed,
    /// The field cannot change from its live value (`field is immutable`): known only from an
    /// API server that holds the live object ([`server`]).
    Immutable,
}

/// One reason the API server refuses the object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// JSON pointer of the offending field inside the object (`""` for the object itself).
    pub pointer: String,
    /// Its category.
    pub kind: ViolationKind,
    /// The problem, worded as the API server words it where it can be.
    pub message: String,
}

/// Which evidence the object was judged against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "snake_case")]
pub enum Evidence {
    /// The Kubernetes types of this release.
    Kubernetes {
        /// e.g. `1.37`.
        types: &'static str,
    },
    /// A CRD found in the same input.
    Crd {
        /// The CRD's `metadata.name`.
        crd: String,
        /// The version whose schema was used.
        version: String,
    },
    /// The schema of an Argo CD CRD shipped with syncguard (its CRD is not in the input).
    ArgoCd {
        /// The CRD's name.
        crd: &'static str,
        /// The Argo CD release the schema comes from.
        release: &'static str,
    },
    /// The API version was removed from Kubernetes.
    Removed {
        /// The Kubernetes release that removed it.
        since: &'static str,
        /// What replaces it.
        instead: &'static str,
    },
    /// Only the metadata could be checked (a custom resource whose CRD is not in the input).
    MetadataOnly,
    /// A real API server refused the object in a server-side dry-run ([`server`]).
    Server {
        /// Its version, e.g. `v1.34.4`.
        version: String,
    },
}

/// The validity facts of one object (`input.validity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Validity {
    /// What the object was judged against.
    pub evidence: Evidence,
    /// Every violation found, in document order of discovery.
    pub violations: Vec<Violation>,
}

impl Validity {
    /// Adds what decoding cannot see: the required fields of a built-in kind that `r` leaves
    /// absent or null ([`required`]), once per field. A walk of the whole object, so callers
    /// judging rendered manifests ask for it, not the admission path.
    pub fn add_required(&mut self, r: &Resource) {
        if !matches!(self.evidence, Evidence::Kubernetes { .. }) {
            return;
        }
        for v in required::check(&r.api_version, &r.kind, &r.raw) {
            if !self.violations.iter().any(|w| w.pointer == v.pointer) {
                self.violations.push(v);
            }
        }
    }
}

/// Judges `r` with the CRDs of its input: `crds` indexes `objects` (see [`CrdIndex::of`]).
pub fn assess(r: &Resource, crds: &CrdIndex, objects: &[Resource]) -> Validity {
    let mut violations = metadata::check(r);
    let evidence = if let Some((since, instead)) = removed::removed(&r.api_version, &r.kind) {
        violations.push(Violation {
            pointer: "/apiVersion".into(),
            kind: ViolationKind::NotServed,
            message: format!(
                "{} {} is not served since Kubernetes {since}: use {instead}",
                r.api_version, r.kind
            ),
        });
        Evidence::Removed { since, instead }
    } else if let Some(found) = builtin::check(&r.api_version, &r.kind, &r.raw) {
        violations.extend(found);
        Evidence::Kubernetes {
            types: builtin::KUBERNETES_TYPES,
        }
    } else if let Some(v) = crds.get(&r.group, &r.kind, &r.version) {
        if let Some(s) = v.schema(objects) {
            violations.extend(schema::check(&r.raw, s));
        }
        Evidence::Crd {
            crd: v.crd.clone(),
            version: v.version.clone(),
        }
    } else if let Some((crd, s)) = argocd::schema(&r.group, &r.kind, &r.version) {
        violations.extend(schema::check(&r.raw, s));
        Evidence::ArgoCd {
            crd,
            release: argocd::ARGOCD_SCHEMAS_RELEASE,
        }
    } else {
        Evidence::MetadataOnly
    };
    Validity {
        evidence,
        violations,
    }
}
