//! What the reconciler's tasks share.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::metrics::ReconcilerMetrics;
use crate::output::policy_report::ReportApi;
use crate::policy::PolicySet;
use crate::policy::builtin::PolicySource;

/// The reconciler's settings (from `syncguard reconcile` flags; every one has a sensible
/// default so tests can start from [`Config::default`]).
#[derive(Debug, Clone)]
pub struct Config {
    /// Namespaces whose Argo CD Applications are watched; empty = all namespaces.
    pub app_namespaces: Vec<String>,
    /// Argo CD's own namespace: where its controller, `argocd-cm` and AppProjects are read
    /// ([`super::install`]).
    pub argocd_namespace: String,
    /// SG501: an operation Running longer than this is a stuck sync (default 20 min: the seed
    /// team's alert after a 40-minute stall).
    pub stuck_after: Duration,
    /// SG502: the window in which repeated syncs of one Application count as a loop.
    pub loop_window: Duration,
    /// SG502: more than this many syncs (or OutOfSync↔Synced flips) within the window is a loop.
    pub loop_syncs: u32,
    /// SG503: more completed hook Jobs/Pods than this per Application is reported.
    pub hook_threshold: usize,
    /// A finding already reported (same Application, rule and cause) is not re-emitted as an
    /// Event within this period.
    pub event_dedup: Duration,
    /// How often the background audit re-evaluates live objects (it also re-runs when the
    /// policy set changes).
    pub audit_interval: Duration,
    /// Namespaces audited; empty = all except the excluded ones.
    pub audit_namespaces: Vec<String>,
    /// Namespaces never audited (kube-system and friends).
    pub audit_exclude_namespaces: Vec<String>,
    /// At most this many results per PolicyReport (the summary says how many were left out).
    pub report_max_results: usize,
    /// Which report APIs the audit writes (`--report-api`).
    pub report_apis: ReportApis,
    /// Where the policies come from (built-in or a watched directory).
    pub policies: PolicySource,
    /// Per-object policy deadline.
    pub rule_deadline: Duration,
    /// Leader election; `None` = act as the only writer (single replica, or tests).
    pub lease: Option<LeaseConfig>,
    /// Field manager for server-side apply and the Events' reporting controller.
    pub field_manager: String,
    /// Whether the background audit runs (`--no-audit` turns it off; the Application
    /// diagnosis SG501–SG503 runs either way).
    pub audit_enabled: bool,
    /// Plain-HTTP address of `/livez`, `/readyz` and `/metrics`.
    pub probe_listen: std::net::SocketAddr,
    /// Seed the Event deduplication from the Events already written when this replica starts
    /// writing ([`super::state`]); `syncguard reconcile` turns it on unless `--no-state`.
    pub restore_events: bool,
    /// Where the loop state is kept across restarts; `None` = in memory only.
    pub state: Option<super::state::StateConfig>,
    /// Sustained rate of the diagnosis' live reads, requests per second (≤ 0: unlimited).
    pub api_qps: f64,
    /// Burst of the diagnosis' live reads.
    pub api_burst: u32,
    /// Whether stuck operations are ended for a proven cause ([`super::terminate`]).
    pub terminate: super::terminate::Mode,
    /// The termination threshold of Applications without the annotation; `None` = only
    /// annotated Applications are considered.
    pub terminate_after: Option<Duration>,
    /// The whole shutdown after SIGTERM (stop writers, final loop-state write, Lease release,
    /// probes) ends within this; each step gets its share ([`super::run::ShutdownBudget`]).
    pub shutdown_timeout: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            app_namespaces: Vec::new(),
            argocd_namespace: "argocd".to_string(),
            stuck_after: Duration::from_secs(20 * 60),
            loop_window: Duration::from_secs(30 * 60),
            loop_syncs: 5,
            hook_threshold: 10,
            event_dedup: Duration::from_secs(60 * 60),
            audit_interval: Duration::from_secs(10 * 60),
            audit_namespaces: Vec::new(),
            audit_exclude_namespaces: vec![
                "kube-system".into(),
                "kube-public".into(),
                "kube-node-lease".into(),
            ],
            report_max_results: 200,
            report_apis: ReportApis::default(),
            policies: PolicySource::Builtin,
            rule_deadline: Duration::from_millis(250),
            lease: None,
            field_manager: "syncguard".into(),
            audit_enabled: true,
            probe_listen: std::net::SocketAddr::from(([0, 0, 0, 0], 8080)),
            restore_events: false,
            state: None,
            api_qps: super::budget::DEFAULT_RATE,
            api_burst: super::budget::DEFAULT_BURST,
            shutdown_timeout: super::run::DEFAULT_SHUTDOWN_TIMEOUT,
            terminate: super::terminate::Mode::Off,
            terminate_after: None,
        }
    }
}

/// Which report APIs the background audit writes its per-namespace reports in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ReportApis {
    /// wgpolicyk8s.io/v1alpha2 PolicyReport, the format policy-reporter and Kyverno have read
    /// longest. Without its CRD every audit pass fails with an error saying so.
    #[default]
    #[value(name = "wgpolicyk8s")]
    WgPolicy,
    /// openreports.io/v1alpha1 Report, the API that succeeds it (policy-reporter reads both).
    /// Without its CRD the reconciler logs a warning once and audits on without writing.
    #[value(name = "openreports")]
    OpenReports,
    /// Both, with the same content: for a move from one API to the other.
    #[value(name = "both")]
    Both,
}

impl ReportApis {
    /// The APIs selected, wgpolicyk8s.io first.
    pub fn apis(self) -> &'static [ReportApi] {
        match self {
            ReportApis::WgPolicy => &[ReportApi::WgPolicy],
            ReportApis::OpenReports => &[ReportApi::OpenReports],
            ReportApis::Both => &[ReportApi::WgPolicy, ReportApi::OpenReports],
        }
    }
}

/// The leader Lease.
#[derive(Debug, Clone)]
pub struct LeaseConfig {
    /// Lease name (e.g. `syncguard-reconciler`).
    pub name: String,
    /// Lease namespace (the reconciler's own namespace).
    pub namespace: String,
    /// This replica's identity (the pod name).
    pub identity: String,
    /// How long a lease is valid without renewal.
    pub duration: Duration,
}

/// Shared by every reconciler task.
pub struct Context {
    /// The API client.
    pub client: kube::Client,
    /// The settings.
    pub config: Config,
    /// Metrics (served on /metrics).
    pub metrics: Arc<ReconcilerMetrics>,
    /// The policy set in use; swapped on reload.
    pub policies: Arc<ArcSwap<PolicySet>>,
    /// The fingerprint of the policy directory content the first set was loaded from (`None`
    /// for the built-in set): the reload watcher starts from it, so an edit made while the
    /// reconciler was starting is not mistaken for the content already live.
    pub policies_fingerprint: Option<u64>,
    /// `true` while this replica holds the leader Lease (always `true` without election).
    /// Writers check it before every write.
    pub leader: watch::Receiver<bool>,
    /// The request budget of the diagnosis' live reads (`--api-qps`, `--api-burst`).
    pub budget: super::budget::ApiBudget,
    /// The hook Jobs and Pods the last audit pass listed (SG503 counts from them).
    pub hooks: super::hooks::SharedHooks,
    /// The controller's Application stores, which the audit reads instead of listing.
    pub applications: super::cached::SharedApplications,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("config", &self.config)
            .field("leader", &*self.leader.borrow())
            .finish_non_exhaustive()
    }
}

impl Context {
    /// Whether this replica may write now.
    pub fn is_leader(&self) -> bool {
        *self.leader.borrow()
    }
}
