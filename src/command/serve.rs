//! `syncguard serve`: flags → [`webhook::Config`], logging, signals, and the server's life.

use std::io::IsTerminal;
use std::time::Duration;

use crate::cli::{LogFormat, OnErrorArg, ServeArgs};
use crate::webhook::{self, FailureMode};

use super::Outcome;

/// Validates the flags into the server configuration.
pub fn config(args: &ServeArgs) -> anyhow::Result<webhook::Config> {
    if args.eval_timeout_ms == 0 {
        anyhow::bail!("--eval-timeout-ms must be at least 1");
    }
    if args.header_read_timeout_ms == 0 {
        anyhow::bail!("--header-read-timeout-ms must be at least 1");
    }
    if args.body_read_timeout_ms == 0 {
        anyhow::bail!("--body-read-timeout-ms must be at least 1");
    }
    if args.max_connections == 0 {
        anyhow::bail!("--max-connections must be at least 1");
    }
    if args.max_object_bytes == 0 {
        anyhow::bail!("--max-object-bytes must be at least 1");
    }
    if args.max_inflight_bytes == 0 {
        anyhow::bail!("--max-inflight-bytes must be at least 1");
    }
    if args.poll_interval == 0 {
        anyhow::bail!("--poll-interval must be at least 1 second");
    }
    Ok(webhook::Config {
        listen: args.listen,
        probe_listen: args.probe_listen,
        cert_dir: args.cert_dir.clone(),
        policies: args.policy.source(),
        app_context: args.app_context.clone(),
        cluster: args.cluster,
        app_namespaces: args.app_namespace.clone(),
        argocd_namespace: args.argocd_namespace.clone(),
        on_error: match args.on_error {
            OnErrorArg::Allow => FailureMode::Allow,
            OnErrorArg::Deny => FailureMode::Deny,
        },
        eval_timeout: Duration::from_millis(args.eval_timeout_ms),
        rule_deadline: Duration::from_millis(args.rule_deadline_ms.max(1)),
        workers: args.workers,
        header_read_timeout: Duration::from_millis(args.header_read_timeout_ms),
        body_read_timeout: Duration::from_millis(args.body_read_timeout_ms),
        max_connections: args.max_connections,
        max_object_bytes: args.max_object_bytes,
        max_inflight_bytes: args.max_inflight_bytes,
        shutdown_delay: Duration::from_millis(args.shutdown_delay_ms),
        shutdown_timeout: Duration::from_millis(args.shutdown_timeout_ms),
        poll_interval: Duration::from_secs(args.poll_interval),
        ..webhook::Config::default()
    })
}

/// Runs the webhook until SIGTERM or SIGINT.
pub fn run(args: &ServeArgs) -> anyhow::Result<Outcome> {
    init_logging(args.log_format);
    let config = config(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("syncguard")
        .build()?;
    runtime.block_on(webhook::serve(config, shutdown_signal()))?;
    Ok(Outcome::Clean)
}

/// Completes on SIGTERM (Kubernetes stopping the pod) or SIGINT (Ctrl-C).
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!(signal = "SIGINT", "shutdown requested"),
        () = term => tracing::info!(signal = "SIGTERM", "shutdown requested"),
    }
}

/// Structured logs on stderr: JSON in a cluster (one object per line, for log pipelines), pretty
/// on a terminal. Levels from `SYNCGUARD_LOG`, else `RUST_LOG`, else `info` (`rustls` at `error`).
pub fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = std::env::var("SYNCGUARD_LOG")
        .ok()
        .and_then(|v| EnvFilter::try_new(v).ok())
        .or_else(|| EnvFilter::try_from_default_env().ok())
        // rustls logs a warning per connection for clients that send an IP address as SNI
        // (curl, wrk and probes against 127.0.0.1); handshake failures still surface as errors.
        .unwrap_or_else(|| EnvFilter::new("info,rustls=error"));
    let json = match format {
        LogFormat::Json => true,
        LogFormat::Pretty => false,
        LogFormat::Auto => !std::io::stderr().is_terminal(),
    };
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second initialisation (tests) is harmless; keep the first.
    let _ = if json {
        builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .try_init()
    } else {
        builder
            .with_ansi(std::io::stderr().is_terminal())
            .try_init()
    };
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use clap::Parser as _;

    fn args(flags: &[&str]) -> ServeArgs {
        let argv = ["syncguard", "serve"].iter().chain(flags);
        match crate::cli::Cli::try_parse_from(argv).unwrap().command {
            crate::cli::Command::Serve(args) => args,
            _ => panic!("not serve"),
        }
    }

    #[test]
    fn the_connection_guards_have_bounded_defaults_and_take_their_flags() {
        let defaults = config(&args(&[])).unwrap();
        assert_eq!(defaults.header_read_timeout, Duration::from_secs(5));
        assert_eq!(defaults.body_read_timeout, Duration::from_secs(5));
        assert_eq!(defaults.max_connections, 256);
        assert_eq!(defaults.max_object_bytes, 3 * 1024 * 1024);
        assert_eq!(defaults.max_inflight_bytes, webhook::INFLIGHT_BYTES);
        let set = config(&args(&[
            "--header-read-timeout-ms",
            "1500",
            "--body-read-timeout-ms",
            "2500",
            "--max-connections",
            "7",
            "--max-object-bytes",
            "1048576",
            "--max-inflight-bytes",
            "4194304",
        ]))
        .unwrap();
        assert_eq!(set.max_object_bytes, 1024 * 1024);
        assert_eq!(set.max_inflight_bytes, 4 * 1024 * 1024);
        assert_eq!(set.header_read_timeout, Duration::from_millis(1500));
        assert_eq!(set.body_read_timeout, Duration::from_millis(2500));
        assert_eq!(set.max_connections, 7);
        for zero in [
            "--header-read-timeout-ms",
            "--body-read-timeout-ms",
            "--max-connections",
            "--max-object-bytes",
            "--max-inflight-bytes",
        ] {
            let error = config(&args(&[zero, "0"])).unwrap_err().to_string();
            assert!(error.contains(zero), "{error}");
        }
    }
}
