//! `syncguard reconcile`: flags → [`reconciler::Config`], logging, signals, and the
//! reconciler's life.

use std::time::Duration;

use crate::cli::ReconcileArgs;
use crate::reconciler::run::ShutdownBudget;
use crate::reconciler::{self, ExtraTask, LeaseConfig};

use super::Outcome;
use super::serve::init_logging;

/// How long a Lease is valid without renewal: client-go's default (15 s), so a dead leader is
/// replaced within ~15 s while a healthy one renews every 10 s.
pub const LEASE_DURATION: Duration = Duration::from_secs(15);

/// Validates the flags into the reconciler configuration. `env` looks up the fallbacks the
/// chart provides through the downward API (`POD_NAMESPACE`, `POD_NAME`).
pub fn config(
    args: &ReconcileArgs,
    env: impl Fn(&str) -> Option<String>,
) -> anyhow::Result<reconciler::Config> {
    if args.stuck_after.is_zero() || args.loop_window.is_zero() {
        anyhow::bail!("--stuck-after and --loop-window must be longer than zero");
    }
    if !args.api_qps.is_finite() || args.api_qps < 0.0 {
        anyhow::bail!("--api-qps must be a number of requests per second, 0 for unlimited");
    }
    if args.loop_syncs == 0 {
        anyhow::bail!("--loop-syncs must be at least 1 (every single sync would be a loop)");
    }
    if args.shutdown_timeout.is_zero() {
        anyhow::bail!(
            "--shutdown-timeout must be longer than zero (10s gives in-flight writes and the \
             Lease release time to finish)"
        );
    }
    if args.terminate_after.is_some() && args.terminate == reconciler::terminate::Mode::Off {
        anyhow::bail!(
            "--terminate-after has no effect while --terminate is off: add --terminate dry-run \
             (report what would be ended) or --terminate on"
        );
    }
    if args.terminate_after.is_some_and(|d| d.is_zero()) {
        anyhow::bail!("--terminate-after must be longer than zero (e.g. 30m)");
    }
    let non_empty = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let lease = if args.no_leader_election {
        None
    } else {
        let namespace = non_empty(args.lease_namespace.clone())
            .or_else(|| non_empty(env("POD_NAMESPACE")))
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "leader election needs the Lease namespace: set --lease-namespace (or \
                     SYNCGUARD_LEASE_NAMESPACE / POD_NAMESPACE), or run a single replica with \
                     --no-leader-election"
                )
            })?;
        let identity = non_empty(args.identity.clone())
            .or_else(|| non_empty(env("POD_NAME")))
            .or_else(hostname)
            .ok_or_else(|| {
                anyhow::anyhow!("cannot tell this replica's identity: set --identity")
            })?;
        Some(LeaseConfig {
            name: args.lease_name.clone(),
            namespace,
            identity,
            duration: LEASE_DURATION,
        })
    };
    // The loop state lives next to the Lease (one per Lease, so one per shard); without
    // election, in the Lease namespace given or the pod's own.
    let state = if args.no_state {
        None
    } else {
        lease
            .as_ref()
            .map(|l| l.namespace.clone())
            .or_else(|| non_empty(args.lease_namespace.clone()))
            .or_else(|| non_empty(env("POD_NAMESPACE")))
            .map(|namespace| reconciler::state::StateConfig {
                namespace,
                name: state_name(&args.lease_name),
            })
    };
    let clean = |v: &[String]| -> Vec<String> {
        v.iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect()
    };
    Ok(reconciler::Config {
        app_namespaces: clean(&args.app_namespaces),
        argocd_namespace: args.argocd_namespace.clone(),
        stuck_after: args.stuck_after,
        loop_window: args.loop_window,
        loop_syncs: args.loop_syncs,
        hook_threshold: args.hook_threshold,
        event_dedup: args.event_dedup,
        audit_interval: args.audit_interval,
        audit_namespaces: clean(&args.audit_namespaces),
        audit_exclude_namespaces: clean(&args.audit_exclude_namespaces),
        report_max_results: args.report_max_results,
        report_apis: args.report_api,
        policies: args.policy.source(),
        rule_deadline: Duration::from_millis(args.rule_deadline_ms.max(1)),
        lease,
        field_manager: args.field_manager.clone(),
        audit_enabled: !args.no_audit,
        probe_listen: args.probe_listen,
        restore_events: !args.no_state,
        state,
        api_qps: args.api_qps,
        api_burst: args.api_burst,
        shutdown_timeout: args.shutdown_timeout,
        terminate: args.terminate,
        terminate_after: args.terminate_after,
    })
}

/// The state ConfigMap's name for a Lease name: `<lease>-state`, within the 253-character
/// limit of object names.
fn state_name(lease: &str) -> String {
    let base: String = lease.chars().take(253 - "-state".len()).collect();
    format!("{base}-state")
}

/// The host name (the pod name inside Kubernetes).
fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// Runs the reconciler until SIGTERM or SIGINT, then shuts it down within `--shutdown-timeout`
/// (exit 0, also when a step was cut short: that is logged). A second signal exits at once
/// with 128 + its number (143 for SIGTERM, 130 for SIGINT).
pub fn run(args: &ReconcileArgs) -> anyhow::Result<Outcome> {
    init_logging(args.log_format);
    let config = config(args, |k| std::env::var(k).ok())?;
    // kube's rustls client needs a process-wide crypto provider (ring, as everywhere here).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("syncguard")
        .build()?;
    // Tasks that run next to the Application controller and stop before the Lease is released:
    // the background audit (with policy hot reload when --policies is a directory).
    let mut extra: Vec<ExtraTask> = Vec::new();
    if config.audit_enabled {
        extra.push(reconciler::policy_reload::audit_task());
    }
    let budget = ShutdownBudget::new(config.shutdown_timeout);
    let result = runtime.block_on(async move {
        // Listen before anything else: a signal while the reconciler starts also stops it.
        let requested = listen_for_signals(budget)?;
        let shutdown = requested_shutdown(requested.clone());
        let backstop = async move {
            requested_shutdown(requested).await;
            tokio::time::sleep(budget.backstop()).await;
        };
        tokio::select! {
            result = reconciler::run(config, shutdown, extra) => result.map_err(anyhow::Error::from),
            () = backstop => {
                tracing::warn!(timeout = ?budget.total(),
                    "the shutdown did not finish within --shutdown-timeout: exiting anyway");
                Ok(())
            }
        }
    });
    // Blocking threads still running (a policy evaluation, a DNS lookup) are not waited for
    // beyond the rest of the budget.
    runtime.shutdown_timeout(budget.teardown());
    result?;
    tracing::info!("reconciler stopped");
    Ok(Outcome::Clean)
}

/// Completes once shutdown was requested (never if the signal listener is gone).
async fn requested_shutdown(mut requested: tokio::sync::watch::Receiver<bool>) {
    if requested.wait_for(|r| *r).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// Installs the SIGTERM and SIGINT handlers now and returns a flag that turns `true` on the
/// first signal. A second signal ends the process at once, with 128 + its number.
fn listen_for_signals(
    budget: ShutdownBudget,
) -> anyhow::Result<tokio::sync::watch::Receiver<bool>> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    let mut signals = Signals::new()?;
    tokio::spawn(async move {
        let (signal, _) = signals.next().await;
        tracing::info!(signal, timeout = ?budget.total(),
            "shutdown requested: stopping within --shutdown-timeout; a second signal exits at once");
        tx.send_replace(true);
        let (signal, code) = signals.next().await;
        tracing::warn!(
            signal,
            code,
            "second signal during shutdown: exiting at once; what was not written is lost and \
             an unreleased Lease expires on its own"
        );
        std::process::exit(code);
    });
    Ok(rx)
}

/// The signals that stop the reconciler, listened to from creation on.
#[cfg(unix)]
struct Signals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

#[cfg(unix)]
impl Signals {
    fn new() -> anyhow::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Self {
            term: signal(SignalKind::terminate())
                .map_err(|e| anyhow::anyhow!("cannot listen for SIGTERM: {e}"))?,
            int: signal(SignalKind::interrupt())
                .map_err(|e| anyhow::anyhow!("cannot listen for SIGINT: {e}"))?,
        })
    }

    /// The next signal: its name and the exit code it ends the process with (128 + number).
    async fn next(&mut self) -> (&'static str, i32) {
        tokio::select! {
            _ = self.term.recv() => ("SIGTERM", 128 + libc::SIGTERM),
            _ = self.int.recv() => ("SIGINT", 128 + libc::SIGINT),
        }
    }
}

/// The signals that stop the reconciler: Ctrl-C where there are no Unix signals.
#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn new() -> anyhow::Result<Self> {
        Ok(Self)
    }

    async fn next(&mut self) -> (&'static str, i32) {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
        ("Ctrl-C", 130)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn args(extra: &[&str]) -> ReconcileArgs {
        let mut argv = vec!["syncguard", "reconcile"];
        argv.extend_from_slice(extra);
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Reconcile(a) => a,
            _ => panic!("not reconcile"),
        }
    }

    #[test]
    fn the_lease_namespace_and_identity_fall_back_to_the_pod_environment() {
        let env = |k: &str| match k {
            "POD_NAMESPACE" => Some("syncguard".to_string()),
            "POD_NAME" => Some("syncguard-reconciler-7d9f-abcde".to_string()),
            _ => None,
        };
        let config = config(&args(&[]), env).unwrap();
        let lease = config.lease.unwrap();
        assert_eq!(lease.namespace, "syncguard");
        assert_eq!(lease.identity, "syncguard-reconciler-7d9f-abcde");
        assert_eq!(lease.name, "syncguard-reconciler");
        assert!(config.audit_enabled);
    }

    #[test]
    fn the_state_lives_next_to_the_lease_and_no_state_turns_every_memory_off() {
        let env = |k: &str| (k == "POD_NAMESPACE").then(|| "syncguard".to_string());
        let with = config(&args(&["--identity", "a", "--lease-name", "shard-1"]), env).unwrap();
        let state = with.state.unwrap();
        assert_eq!(
            (state.namespace.as_str(), state.name.as_str()),
            ("syncguard", "shard-1-state")
        );
        assert!(with.restore_events);
        // A single replica keeps it in its own namespace when it knows one ...
        let single = config(&args(&["--no-leader-election"]), env).unwrap();
        assert_eq!(single.state.unwrap().name, "syncguard-reconciler-state");
        // ... and in memory when it does not (the Events are still read).
        let bare = config(&args(&["--no-leader-election"]), |_| None).unwrap();
        assert!(bare.state.is_none() && bare.restore_events);
        let off = config(&args(&["--identity", "a", "--no-state"]), env).unwrap();
        assert!(off.state.is_none() && !off.restore_events);
    }

    #[test]
    fn the_report_api_defaults_to_wgpolicyk8s_and_takes_openreports_or_both() {
        use crate::reconciler::context::ReportApis;
        let none = |_: &str| None;
        let default = config(&args(&["--no-leader-election"]), none).unwrap();
        assert_eq!(default.report_apis, ReportApis::WgPolicy);
        for (value, want) in [
            ("wgpolicyk8s", ReportApis::WgPolicy),
            ("openreports", ReportApis::OpenReports),
            ("both", ReportApis::Both),
        ] {
            let set = config(
                &args(&["--no-leader-election", "--report-api", value]),
                none,
            );
            assert_eq!(set.unwrap().report_apis, want, "{value}");
        }
    }

    #[test]
    fn election_without_a_namespace_is_refused_and_no_election_needs_none() {
        let err = config(&args(&[]), |_| None).unwrap_err();
        assert!(err.to_string().contains("--lease-namespace"), "{err}");
        let config = config(&args(&["--no-leader-election", "--no-audit"]), |_| None).unwrap();
        assert!(config.lease.is_none());
        assert!(!config.audit_enabled);
    }

    #[test]
    fn the_shutdown_timeout_defaults_to_10s_takes_units_and_must_not_be_zero() {
        let none = |_: &str| None;
        let default = config(&args(&["--no-leader-election"]), none).unwrap();
        assert_eq!(default.shutdown_timeout, Duration::from_secs(10));
        let set = config(
            &args(&["--no-leader-election", "--shutdown-timeout", "1m30s"]),
            none,
        )
        .unwrap();
        assert_eq!(set.shutdown_timeout, Duration::from_secs(90));
        let err = config(
            &args(&["--no-leader-election", "--shutdown-timeout", "0s"]),
            none,
        )
        .unwrap_err();
        assert!(err.to_string().contains("--shutdown-timeout"), "{err}");
    }

    #[test]
    fn zero_loop_syncs_is_refused() {
        let err = config(
            &args(&["--loop-syncs", "0", "--no-leader-election"]),
            |_| None,
        )
        .unwrap_err();
        assert!(err.to_string().contains("--loop-syncs"));
    }

    #[test]
    fn termination_is_off_by_default_and_a_default_threshold_needs_a_mode() {
        use crate::reconciler::terminate::Mode;
        let none = |_: &str| None;
        let default = config(&args(&["--no-leader-election"]), none).unwrap();
        assert_eq!(
            (default.terminate, default.terminate_after),
            (Mode::Off, None)
        );
        let dry = config(
            &args(&[
                "--no-leader-election",
                "--terminate",
                "dry-run",
                "--terminate-after",
                "45m",
            ]),
            none,
        )
        .unwrap();
        assert_eq!(
            (dry.terminate, dry.terminate_after),
            (Mode::DryRun, Some(Duration::from_secs(45 * 60)))
        );
        let on = config(&args(&["--no-leader-election", "--terminate", "on"]), none).unwrap();
        assert_eq!((on.terminate, on.terminate_after), (Mode::On, None));
        let err = config(
            &args(&["--no-leader-election", "--terminate-after", "30m"]),
            none,
        )
        .unwrap_err();
        assert!(err.to_string().contains("--terminate dry-run"), "{err}");
    }
}
