//! The Kubernetes client of every syncguard process that talks to an API server.
//!
//! The configuration is inferred as `kube::Client::try_default` does it (in-cluster service
//! account, else `KUBECONFIG` / `~/.kube/config`). Every request also carries a `User-Agent`
//! naming syncguard, its version and the component (`syncguard/0.1.0 (reconcile)`), so that
//! the API server's audit log, its request metrics and API Priority and Fairness rules can tell
//! syncguard's traffic apart from other clients of the same service account.

use http::header::{HeaderValue, USER_AGENT};

/// The `User-Agent` of `component` (`reconcile`, `serve`).
pub fn user_agent(component: &str) -> HeaderValue {
    HeaderValue::from_str(&format!(
        "syncguard/{} ({component})",
        env!("CARGO_PKG_VERSION")
    ))
    .unwrap_or_else(|_| HeaderValue::from_static("syncguard"))
}

/// A client for `component` with the inferred configuration and syncguard's `User-Agent`.
pub async fn client(component: &str) -> Result<kube::Client, kube::Error> {
    let config = kube::Config::infer()
        .await
        .map_err(kube::Error::InferConfig)?;
    with_user_agent(config, component)
}

/// A client for `component` from an explicit configuration.
pub fn with_user_agent(
    mut config: kube::Config,
    component: &str,
) -> Result<kube::Client, kube::Error> {
    config.headers.retain(|(name, _)| name != USER_AGENT);
    config.headers.push((USER_AGENT, user_agent(component)));
    kube::Client::try_from(config)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_user_agent_names_syncguard_its_version_and_the_component() {
        let ua = user_agent("reconcile");
        assert_eq!(
            ua.to_str().unwrap(),
            format!("syncguard/{} (reconcile)", env!("CARGO_PKG_VERSION"))
        );
        // A component name that is no valid header value still gives a valid agent.
        assert_eq!(user_agent("bad\nname").to_str().unwrap(), "syncguard");
    }
}
