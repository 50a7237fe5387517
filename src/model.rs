//! The resource model: the `syncguard-argocd` crate's [`model`](syncguard_argocd::model)
//! (resources, Argo CD facts, references, membership, health, the release table), re-exported
//! under this path, plus [`argocd_config`]: the Argo CD configuration read from `argocd-cm` and
//! `AppProject`s. That one stays in this crate because argocd-cm values are YAML documents, and
//! the semantics crate depends on no YAML parser.

pub use syncguard_argocd::model::*;

pub mod argocd_config;
