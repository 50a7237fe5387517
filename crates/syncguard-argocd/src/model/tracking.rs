//! `application.resourceTrackingMethod`: how Argo CD records which Application an object
//! belongs to, and which method a release uses when argocd-cm sets none.

use serde::Serialize;

use super::version::{ArgoCdVersion, Behaviour};

/// `application.resourceTrackingMethod`: where Argo CD records which Application an object
/// belongs to (argo-cd `util/argo/resource_tracking.go`, `GetAppName`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum TrackingMethod {
    /// The instance label (`application.instanceLabelKey`); the default before Argo CD 3.0.
    #[serde(rename = "label")]
    Label,
    /// The `argocd.argoproj.io/tracking-id` annotation; the default since Argo CD 3.0.
    #[serde(rename = "annotation")]
    Annotation,
    /// The annotation decides; the label is also written, for other tools.
    #[serde(rename = "annotation+label")]
    AnnotationAndLabel,
}

impl TrackingMethod {
    /// The value as argocd-cm spells it; `None` for anything Argo CD does not know.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "label" => Some(Self::Label),
            "annotation" => Some(Self::Annotation),
            "annotation+label" => Some(Self::AnnotationAndLabel),
            _ => None,
        }
    }

    /// The method of a release whose argocd-cm sets none: annotation from 3.0
    /// ([`Behaviour::TrackingIdDefault`]), label before.
    pub fn default_for(version: ArgoCdVersion) -> Self {
        if version.has(Behaviour::TrackingIdDefault) {
            Self::Annotation
        } else {
            Self::Label
        }
    }
}
