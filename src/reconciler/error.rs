//! The reconciler's errors: one enum, so that every failure has a metric label and a message
//! that names what failed (an API call, the lease, the probe port), not just that something did.

use thiserror::Error;

/// Why a reconciler step failed.
#[derive(Debug, Error)]
pub enum Error {
    /// A Kubernetes API call failed (after kube's own retries).
    #[error("{what}: {source}")]
    Kube {
        /// The call, e.g. `list pods in app-foo`.
        what: String,
        /// kube's error (HTTP status and Status message for API errors).
        #[source]
        source: kube::Error,
    },
    /// No API client could be built (neither in-cluster nor KUBECONFIG).
    #[error("cannot build a Kubernetes client (in-cluster or KUBECONFIG): {0}")]
    Client(#[source] kube::Error),
    /// An object could not be converted to or from JSON.
    #[error("cannot convert {what}: {source}")]
    Serialization {
        /// What was converted.
        what: &'static str,
        /// serde_json's error.
        #[source]
        source: serde_json::Error,
    },
    /// The leader Lease could not be managed.
    #[error("leader lease: {0}")]
    Lease(#[source] kube_lease_manager::LeaseManagerError),
    /// The policies did not load at start.
    #[error("policies: {0}")]
    Policies(#[source] crate::policy::reload::LoadError),
    /// The probe / metrics server could not bind or failed.
    #[error("probe server on {addr}: {source}")]
    Probe {
        /// The address.
        addr: std::net::SocketAddr,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// An update lost to concurrent writers every time it was retried.
    #[error("{0}")]
    Conflict(String),
    /// A configuration value that cannot work (e.g. leader election without a namespace).
    #[error("invalid configuration: {0}")]
    Config(String),
}

impl Error {
    /// A short, fixed label for metrics and logs (`kube`, `lease`, ...), in the style of
    /// controller-rs: variants become label values, messages stay in logs.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Error::Kube { .. } => "kube",
            Error::Client(_) => "client",
            Error::Serialization { .. } => "serialization",
            Error::Lease(_) => "lease",
            Error::Policies(_) => "policies",
            Error::Probe { .. } => "probe",
            Error::Conflict(_) => "conflict",
            Error::Config(_) => "config",
        }
    }

    /// Wraps a kube error with the call that produced it.
    pub fn kube(what: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            what: what.into(),
            source,
        }
    }

    /// The API status code when the API server answered with an error status (404, 403, ...).
    pub fn api_code(&self) -> Option<u16> {
        match self {
            Error::Kube {
                source: kube::Error::Api(status),
                ..
            } => Some(status.code),
            _ => None,
        }
    }
}

/// The reconciler's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
