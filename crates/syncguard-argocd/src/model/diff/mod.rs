//! Predicted diff: which declared fields Argo CD will show as different from the live object
//! right after a successful sync, and why.
//!
//! Argo CD's default comparison (gitops-engine `pkg/diff`) first re-marshals a built-in object
//! through its Go type — quantities become canonical, empty and zero-valued fields disappear —
//! applies the Kubernetes defaulting functions to both sides, and then computes a three-way diff
//! against the live object and its last-applied configuration, which hides every field the
//! manifest never set. What remains is a declared field whose stored value is not the declared
//! one. This module predicts the mechanisms for that which need no live object:
//! - [`Mechanism::Dropped`]: a field the type does not declare. Argo CD's client-side apply
//!   sends no field-validation directive, so the API server drops it (with a warning); and the
//!   manifest no longer decodes into its Go type, so Argo CD compares it raw — the object's
//!   quantities and zero values are then not normalised either ([`unnormalised`]).
//! - [`Mechanism::Controller`]: a controller writes a field the manifest declares — the
//!   ClusterRole aggregation controller owns `rules` of a role with an `aggregationRule`.
//! - [`Mechanism::DuplicateKey`]: a list merged by key (`env` by name, container `ports` by
//!   port and protocol, ...) declares a key twice; the strategic merge keeps one entry per key,
//!   so the stored list never equals the declared one.
//!
//! - [`Mechanism::Stored`]: with a stored form from the cluster (a server-side dry-run), every
//!   declared field it holds differently ([`stored`]).
//!
//! The caBundle injectors, the HPA metrics order and the CRD fields the API server drops are
//! predicted by rule SG304 and the HPA-owned replicas by SG204 (their facts predate this
//! module). Each prediction says what Argo CD configuration hides it ([`Hidden`]).

mod duplicates;
pub mod stored;
mod unnormalised;

use serde::Serialize;
use serde_json::Value;

use crate::model::Resource;
use crate::model::validity::{Validity, ViolationKind};

/// Why a declared field differs from what the cluster stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mechanism {
    /// The API server drops a field its type does not declare.
    Dropped,
    /// The API server stores a value in another form, and Argo CD does not normalise it.
    Normalised,
    /// A controller writes the field.
    Controller,
    /// A list merged by key declares a key twice.
    DuplicateKey,
    /// The stored form a server-side dry-run returned holds the field differently: API-server
    /// defaulting or normalisation, or a mutating admission webhook ([`stored`]).
    Stored,
}

/// How sure the prediction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// Follows from the types and Argo CD's source alone.
    Certain,
    /// Depends on something the input cannot show (a controller running, the cluster's release).
    Likely,
}

/// One field predicted to show as a difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PredictedDiff {
    /// JSON pointer of the declared field.
    pub pointer: String,
    /// Why it differs.
    pub mechanism: Mechanism,
    /// The evidence, e.g. "Kubernetes 1.37 types" or "aggregationRule".
    pub evidence: String,
    /// What the cluster stores instead, when known.
    pub stored: Option<Value>,
    /// How sure.
    pub confidence: Confidence,
}

/// Whether the object is applied server-side (its own or its Application's option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ApplyMode {
    /// `ServerSideApply=true` is in force for the object.
    pub server_side: bool,
}

/// The predicted differences of `r`, from its validity facts.
pub fn predict(r: &Resource, validity: &Validity, mode: ApplyMode) -> Vec<PredictedDiff> {
    let mut out = Vec::new();
    let evidence = match &validity.evidence {
        crate::model::validity::Evidence::Kubernetes { types } => {
            format!("Kubernetes {types} types")
        }
        crate::model::validity::Evidence::Crd { crd, version } => {
            format!("schema of version {version} in CRD {crd}")
        }
        crate::model::validity::Evidence::ArgoCd { crd, release } => {
            format!("schema of CRD {crd} in Argo CD {release}")
        }
        _ => String::new(),
    };
    let unknown: Vec<&str> = validity
        .violations
        .iter()
        .filter(|v| v.kind == ViolationKind::UnknownField)
        .map(|v| v.pointer.as_str())
        .collect();
    // Under a server-side apply an unknown field fails the apply (SG401), nothing is stored.
    if !mode.server_side && !unknown.is_empty() {
        for pointer in &unknown {
            out.push(PredictedDiff {
                pointer: (*pointer).to_string(),
                mechanism: Mechanism::Dropped,
                evidence: evidence.clone(),
                stored: None,
                confidence: Confidence::Certain,
            });
        }
        if matches!(
            validity.evidence,
            crate::model::validity::Evidence::Kubernetes { .. }
        ) {
            for (pointer, stored) in unnormalised::fields(&r.raw) {
                out.push(PredictedDiff {
                    pointer,
                    mechanism: Mechanism::Normalised,
                    evidence: format!(
                        "{evidence}: the manifest has a field its type does not declare, so Argo CD compares it without normalising"
                    ),
                    stored,
                    confidence: Confidence::Certain,
                });
            }
        }
    }
    if r.group == "rbac.authorization.k8s.io"
        && r.kind == "ClusterRole"
        && r.raw["aggregationRule"].is_object()
        && r.raw.get("rules").is_some()
    {
        out.push(PredictedDiff {
            pointer: "/rules".into(),
            mechanism: Mechanism::Controller,
            evidence: "aggregationRule: the ClusterRole aggregation controller of kube-controller-manager writes rules".into(),
            stored: None,
            confidence: Confidence::Certain,
        });
    }
    out.extend(duplicates::find(&r.raw));
    out
}
