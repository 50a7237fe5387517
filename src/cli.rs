//! Command-line arguments (clap derive). Parsing only: validation and behaviour live in the
//! modules that own them, and `main.rs` maps outcomes to exit codes.

use std::path::PathBuf;

use crate::model::version::ArgoCdVersion;
use clap::{Args, Parser, Subcommand, ValueEnum};

/// syncguard keeps Argo CD syncs safe.
///
/// It knows exactly how Argo CD orders a sync (phases, hooks, waves, kind order, health gating)
/// and shows it before the sync runs.
///
/// Exit codes: 0 = clean, 1 = blocking findings, 2 = error (bad input, unreadable files, a rule
/// that could not be evaluated).
#[derive(Debug, Parser)]
#[command(name = "syncguard", version, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the exact order in which Argo CD will apply rendered manifests.
    ///
    /// Prints a timeline grouped by phase (PreSync → Sync → PostSync, SyncFail on failure) and
    /// wave: which steps wait for health before the next one starts, which hooks block, which
    /// Namespaces/CRDs Argo CD moves forward, and which objects it will never apply (and why).
    ///
    /// Exit codes: 0 the plan was made, 1 Argo CD will refuse the sync (with --require-crds: a
    /// custom resource whose CRD the cluster does not serve), 2 input errors (the readable files
    /// are still planned and shown).
    ///
    /// Examples:
    ///
    ///   syncguard plan examples/seed-incident
    ///
    ///   helm template my-release ./chart | syncguard plan -
    ///
    ///   syncguard plan rendered/ --dest-namespace shop --create-namespace --format json
    Plan(PlanArgs),

    /// Explain one Application: its effective settings after every layer, and per object which
    /// sync options and ignoreDifferences rules apply and which fields they hide.
    ///
    /// Layers, as Argo CD combines them: argocd-cm (system-level ignoreDifferences, from the input
    /// or --argocd-config), the Application (syncOptions, automated sync, ignoreDifferences) and
    /// each object's own annotations (argocd.argoproj.io/sync-options overrides the option of the
    /// same key; argocd.argoproj.io/ignore-differences from 3.6). For every object of the
    /// Application in the input it lists the rules that apply with the fields each hides (jq
    /// expressions as the concrete paths they select), what a sync keeps from the live object with
    /// RespectIgnoreDifferences=true, and lists it then takes whole. Rules that apply to no object
    /// are listed at the end. Applications are rendered as `check` renders them (--render).
    ///
    /// APP is the Application's name, or NAMESPACE/NAME when several share a name.
    ///
    /// Exit codes: 0 explained, 2 input errors or no such Application.
    ///
    /// Examples:
    ///
    ///   syncguard explain guestbook examples/gitops
    ///
    ///   syncguard explain argocd/guestbook apps/ --argocd-config argocd-cm.yaml --format json
    Explain(ExplainArgs),

    /// Run the `test_*` rules of a policy directory (like `opa test`).
    ///
    /// Loads every `*.rego` file and `config.yaml` of DIR, runs each rule whose name starts with
    /// `test_`, and prints PASS/FAIL per test and a summary line. Test packages run side by side
    /// (each with all the rules); a test that fails is run again with every file loaded, so
    /// what is reported is what the whole directory gives. A directory with only a config.yaml
    /// runs the built-in rules' tests with that configuration; with --overlay, DIR is laid over
    /// the built-in rules as `serve --policy-overlay DIR` loads it. Exit code 1 when a test fails
    /// or errors, 2 when the policies do not load or DIR holds no test_* rule at all (nothing
    /// was tested).
    ///
    /// Examples:
    ///
    ///   syncguard test policies/
    ///
    ///   syncguard test policies/ --coverage
    ///
    ///   syncguard test --overlay my-rules/     # my rules and config over the built-in set
    Test(TestArgs),

    /// Check rendered manifests against the policies and report every finding with file:line.
    ///
    /// Runs the built-in rules (or those of --policies DIR) over every object, with the facts
    /// Argo CD will act on: phases, waves, hooks, what each object references and where that
    /// object is created in the sync. Findings are grouped by Application when the manifests
    /// carry tracking ids or instance labels.
    ///
    /// Exit codes: 0 clean, 1 findings at or above --fail-on, 2 input or policy errors (the
    /// readable files are still checked and reported). Input errors include what kubectl refuses
    /// to apply: a key repeated in one mapping, a label or annotation value that is not a string
    /// (`argocd.argoproj.io/sync-wave: 5` must be "5"). A policy error is a rule that could not
    /// be evaluated on an object, whatever its action.
    ///
    /// Examples:
    ///
    ///   syncguard check examples/seed-incident
    ///
    ///   helm template shop ./chart | syncguard check - --format sarif > syncguard.sarif
    ///
    ///   syncguard check rendered/ --fail-on warn --show-patches
    Check(CheckArgs),

    /// Print the policy input document of every object, as the rules see it (JSON).
    ///
    /// For rule authors: shows input.sync, input.plan, input.refs (with each target's phase,
    /// wave and step), input.dependents and input.app for real manifests.
    ///
    /// Example:
    ///
    ///   syncguard inputs examples/seed-incident | jq '.[0].refs'
    Inputs(InputsArgs),

    /// Render Argo CD Applications from the local checkout, as Argo CD's repo-server does.
    ///
    /// Reads the Application manifests in PATH, renders every source whose repository is the
    /// git checkout of the working directory (any of its remotes) or one mapped with --repo,
    /// writes the tracking id Argo CD writes on each object, and prints the objects as a YAML
    /// stream, each with a comment naming its Application and file:line. Sources of other
    /// repositories are skipped with a line on stderr. Directory sources (recurse, include,
    /// exclude, Jsonnet with the jsonnet command), Helm (helm template with Argo CD's arguments) and Kustomize (Argo CD's edits in
    /// a copy of the checkout, then kustomize build), multi-source `$values` references and
    /// app-of-apps children are rendered; a config management plugin cannot be outside Argo CD.
    /// Helm charts from chart repositories and OCI registries (`chart:` with an https://
    /// repoURL or a scheme-less registry, `oci://` sources) are pulled with helm as the
    /// repo-server pulls them, with the credentials of Helm's repositories.yaml, `helm registry
    /// login` or SYNCGUARD_CHART_REPO_<ID>_URL/_USERNAME/_PASSWORD, into --chart-cache; an
    /// unreachable repository, refused credentials or a missing version is that
    /// Application's error.
    ///
    /// Exit codes: 0 every Application rendered, 2 an input or an Application could not be
    /// rendered (every other Application is still rendered and printed).
    ///
    /// Examples:
    ///
    ///   syncguard render apps/ | syncguard check -
    ///
    ///   syncguard render apps/web.yaml --repo https://github.com/org/config=../config
    ///
    ///   SYNCGUARD_CHART_REPO_CORP_URL=https://charts.corp.example SYNCGUARD_CHART_REPO_CORP_USERNAME=ci \
    ///   SYNCGUARD_CHART_REPO_CORP_PASSWORD="$TOKEN" syncguard render apps/
    Render(RenderArgs),

    /// Review a change to a GitOps repository: what it does to every Argo CD sync.
    ///
    /// Checks the base and head revisions out into temporary worktrees (the committed trees,
    /// as Argo CD renders them; the network only for charts of chart repositories and OCI
    /// registries, each version pulled once into --chart-cache), renders every Application under PATH on both
    /// (as `syncguard render` does), plans and checks them, and reports for every Application
    /// whose rendered objects differ: the plan diff (steps and what they wait for, objects
    /// joining, leaving or moving between phases and waves, hooks whose content changed, shown
    /// in full, which Argo CD's own diff leaves out) and the manifest diff; and the findings new
    /// on the head, fixed by it and unchanged. Findings already on the base never fail the run
    /// unless --fail-on-existing.
    ///
    /// Every view starts with the Applications that could not be judged and why (a chart
    /// repository unreachable, credentials refused, a chart version not found, another
    /// repository, a config management plugin, a render error), before any verdict; the count
    /// of Applications includes them.
    ///
    /// Exit codes: 0 nothing new blocking and every Application judged; 1 a new blocking
    /// finding; 2 something could not be judged (an Application not rendered on the head for a
    /// reason the base did not have and --baseline does not accept, a file that cannot be
    /// read), or a revision does not exist. 2 wins over 1: the verdict is incomplete. An
    /// Application not judged on either revision for the same reasons is listed as unchanged
    /// and does not fail the run.
    ///
    /// Examples:
    ///
    ///   syncguard review --base origin/main
    ///
    ///   syncguard review --base main --head feature --format markdown > comment.md
    ///
    ///   syncguard review --base "$BASE_SHA" --format sarif apps/ > syncguard.sarif
    Review(ReviewArgs),

    /// Render several times and report every field that differs between renders (SG302).
    ///
    /// Values that change on every render (random passwords, generated certificates, `now`
    /// timestamps, checksums of those) make Argo CD report the app OutOfSync after every
    /// refresh and loop with self-heal. Each changing field is reported with file:line in the
    /// first render, the values seen, the likely cause and the fix. Exit 0 when every render is
    /// identical, 1 when a field changes, 2 when the command fails or its first render holds no
    /// readable Kubernetes object (nothing was compared).
    ///
    /// Examples:
    ///
    ///   syncguard determinism -- helm template shop ./chart -f values-prod.yaml
    ///
    ///   syncguard determinism --runs 3 --save-to renders/ -- kustomize build overlays/prod
    Determinism(DeterminismArgs),

    /// Run the admission webhook: POST /validate and POST /mutate over HTTPS.
    ///
    /// Answers admission.k8s.io/v1 AdmissionReviews with the same rules as `check`: /validate
    /// denies (deny rules), warns (warn and mutate rules) and records audit annotations;
    /// /mutate returns a base64 JSON patch with the mutating rules' fixes. GET /livez, /readyz
    /// and /metrics are served too (also on --probe-listen, plain HTTP). The certificate
    /// directory, the policy directory and the app-context directory are watched and reloaded
    /// without dropping requests; a broken policy set or certificate never replaces a working
    /// one. SIGTERM/SIGINT: readiness goes 503, in-flight reviews finish.
    ///
    /// Every flag can also be set with its SYNCGUARD_* environment variable.
    ///
    /// Examples:
    ///
    ///   syncguard certs --out certs/dev --dns localhost --dns 127.0.0.1
    ///
    ///   syncguard serve --cert-dir certs/dev --listen 127.0.0.1:8443
    ///
    ///   syncguard serve --cert-dir /etc/syncguard/tls --policy-overlay /etc/syncguard/policies \
    ///     --probe-listen 0.0.0.0:8080 --on-error allow
    Serve(ServeArgs),

    /// Run the in-cluster reconciler: diagnose live Argo CD Applications and report Events.
    ///
    /// Watches argoproj.io/v1alpha1 Applications (all namespaces, or --app-namespace) and
    /// reports, as Warning Events on the Application and as metrics:
    ///
    ///   SG501 stuck sync — an operation Running longer than --stuck-after, with the hook it
    ///   waits for, its pod's state (CrashLoopBackOff, ImagePullBackOff, OOMKilled, a missing
    ///   Secret and which wave creates it) and the fix;
    ///
    ///   SG502 OutOfSync loop — more than --loop-syncs syncs (or Synced→OutOfSync flips) within
    ///   --loop-window, with the fields another field manager (an HPA, a controller) keeps
    ///   changing and the ignoreDifferences snippet that ends it;
    ///
    ///   SG503 accumulated hooks — more than --hook-threshold completed hook Jobs/Pods left
    ///   behind by generateName hooks without a delete policy.
    ///
    /// Opt-in: --terminate on ends a stuck operation whose hook certainly cannot progress, once
    /// past the Application's syncguard.dev/terminate-stuck-after (or --terminate-after).
    ///
    /// Background audit: every --audit-interval, and at once when a tested new policy set in
    /// --policies DIR goes live, the policies are evaluated over live objects (references resolved
    /// against the owning Application's status.resources) and one bounded PolicyReport
    /// (wgpolicyk8s.io/v1alpha2, CRD required) is written per namespace, only when it changed;
    /// --report-api openreports writes an OpenReports Report (openreports.io/v1alpha1) instead,
    /// --report-api both writes the two; --no-audit turns it off.
    ///
    /// A finding is reported once per cause within --event-dedup. Replicas elect a leader on a
    /// Lease (only the leader reads live objects and writes); /livez, /readyz and /metrics are
    /// served over plain HTTP on --probe-listen. Uses the in-cluster service account, or
    /// KUBECONFIG / ~/.kube/config outside a cluster. SIGTERM/SIGINT: writers stop, then the
    /// Lease is released; a standby takes over within one lease duration (15 s).
    ///
    /// Every flag can also be set with its SYNCGUARD_* environment variable. Durations take a
    /// unit: 90s, 20m, 1h30m, 2d.
    ///
    /// Examples:
    ///
    ///   syncguard reconcile --no-leader-election --probe-listen 127.0.0.1:8080
    ///
    ///   syncguard reconcile --app-namespace argocd --stuck-after 15m --loop-syncs 3
    ///
    ///   syncguard reconcile --report-api both     # PolicyReports and OpenReports Reports
    ///
    ///   syncguard reconcile --terminate dry-run --terminate-after 45m
    ///
    ///   POD_NAMESPACE=syncguard POD_NAME=$(hostname) syncguard reconcile --log-format json
    Reconcile(ReconcileArgs),

    /// Generate a development CA and a serving certificate for the webhook.
    ///
    /// Writes tls.crt, tls.key and ca.crt (the keys of a Kubernetes TLS Secret; ca.crt is the
    /// webhook's caBundle) plus ca.key. Running it again keeps the CA and rotates the serving
    /// certificate, so clients keep trusting it (--new-ca replaces the CA too). For development
    /// and tests; use cert-manager or your PKI in production. See certs/README.md.
    ///
    /// Example:
    ///
    ///   syncguard certs --out certs/dev --dns syncguard.syncguard.svc --dns localhost --days 30
    Certs(CertsArgs),
}

/// `syncguard serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// HTTPS address for /validate, /mutate and the probes.
    #[arg(
        long,
        value_name = "ADDR",
        env = "SYNCGUARD_LISTEN",
        default_value = "0.0.0.0:8443"
    )]
    pub listen: std::net::SocketAddr,

    /// Also serve /livez, /readyz and /metrics over plain HTTP on this address.
    #[arg(long, value_name = "ADDR", env = "SYNCGUARD_PROBE_LISTEN")]
    pub probe_listen: Option<std::net::SocketAddr>,

    /// Directory with tls.crt and tls.key (a mounted kubernetes.io/tls Secret); watched. When
    /// the files are not there yet (a Secret still being issued) the server starts not ready and
    /// begins serving when they appear; unusable files are an error.
    #[arg(
        long,
        value_name = "DIR",
        env = "SYNCGUARD_CERT_DIR",
        default_value = "/etc/syncguard/tls"
    )]
    pub cert_dir: PathBuf,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Rendered manifests (per Application) that give admission-time context, so ordering
    /// rules (SG2xx) can judge an admitted object inside its Application; watched.
    #[arg(long, value_name = "DIR", env = "SYNCGUARD_APP_CONTEXT")]
    pub app_context: Option<PathBuf>,

    /// Keep a read-only cache of the cluster's Argo CD Applications (list/watch), so ordering
    /// rules (SG2xx) see each admitted object inside its Application: its resources' waves come
    /// from the Application's status.resources. Until the cache has synced those rules stay
    /// silent; admission never waits for the API server.
    #[arg(
        long,
        env = "SYNCGUARD_CLUSTER",
        conflicts_with = "app_context",
        default_value_t = false
    )]
    pub cluster: bool,

    /// With --cluster: watch Applications only in this namespace (repeatable; default: all
    /// namespaces, which needs cluster-wide list/watch on applications.argoproj.io).
    #[arg(
        long,
        value_name = "NS",
        env = "SYNCGUARD_APP_NAMESPACES",
        value_delimiter = ',',
        requires = "cluster"
    )]
    pub app_namespace: Vec<String>,

    /// With --cluster: Argo CD's namespace. The webhook reads the release Argo CD runs from its
    /// application controller's image (used unless `argocd_version` in the policies'
    /// config.yaml pins one) and the configuration rules see (`input.argocd.config`) from
    /// `argocd-cm` and the AppProjects there, every 5 minutes (RBAC: get on statefulsets,
    /// deployments and configmaps, list on appprojects, in that namespace).
    #[arg(
        long,
        value_name = "NS",
        env = "SYNCGUARD_ARGOCD_NAMESPACE",
        default_value = "argocd"
    )]
    pub argocd_namespace: String,

    /// What to answer when a review cannot be finished (internal error, deadline, a failing deny
    /// rule): allow with a warning, or deny.
    #[arg(long, value_enum, env = "SYNCGUARD_ON_ERROR", default_value_t = OnErrorArg::Allow)]
    pub on_error: OnErrorArg,

    /// Deadline for one review, counted from the request's arrival: reading the body, the wait
    /// for a free worker and the evaluation all count, and when it passes the --on-error answer
    /// goes out at once. Keep it below the webhook's timeoutSeconds so the API server gets
    /// syncguard's answer.
    #[arg(
        long,
        value_name = "MS",
        env = "SYNCGUARD_EVAL_TIMEOUT_MS",
        default_value_t = 2000
    )]
    pub eval_timeout_ms: u64,

    /// The policy engine's own deadline per object (checked between evaluation steps; a runaway
    /// rule can take about twice this).
    #[arg(
        long,
        value_name = "MS",
        env = "SYNCGUARD_RULE_DEADLINE_MS",
        default_value_t = 250
    )]
    pub rule_deadline_ms: u64,

    /// Concurrent evaluations (0: one per CPU).
    #[arg(long, value_name = "N", env = "SYNCGUARD_WORKERS", default_value_t = 0)]
    pub workers: usize,

    /// How long a client on the HTTPS port may take for the TLS handshake, and then for the
    /// headers of each request: past it the connection is closed, so a client that sends half a
    /// request and stalls cannot hold it. Over HTTP/1.1 this also closes a kept-alive connection
    /// idle that long (clients reconnect); over HTTP/2 it bounds the first request. The API
    /// server sends a whole review at once, so a few seconds is plenty.
    #[arg(
        long,
        value_name = "MS",
        env = "SYNCGUARD_HEADER_READ_TIMEOUT_MS",
        default_value_t = 5000
    )]
    pub header_read_timeout_ms: u64,

    /// How long a request's whole body may take to arrive once its headers are read. A client
    /// still sending then gets 408 Request Timeout and the connection is closed (counted as
    /// decision="timeout" in syncguard_admission_requests_total). Reading the body counts
    /// against --eval-timeout-ms too.
    #[arg(
        long,
        value_name = "MS",
        env = "SYNCGUARD_BODY_READ_TIMEOUT_MS",
        default_value_t = 5000
    )]
    pub body_read_timeout_ms: u64,

    /// Most HTTPS connections open at once. Further clients wait (their connection is not
    /// accepted) until one closes; open connections and in-flight reviews are never cut. The API
    /// server needs only a few connections per replica; this bounds the file descriptors and
    /// memory that many clients (or a flood of stalled ones) can take. See
    /// syncguard_https_connections and syncguard_connection_limit_waits_total.
    #[arg(
        long,
        value_name = "N",
        env = "SYNCGUARD_MAX_CONNECTIONS",
        default_value_t = 256
    )]
    pub max_connections: usize,

    /// Largest object evaluated, in bytes of its JSON in the AdmissionReview (`object`, or
    /// `oldObject` on UPDATE and DELETE). A larger one is not parsed: the review is admitted
    /// with the warning "syncguard: not checked: the object is N MiB, over this webhook's limit
    /// of M MiB" and counted in syncguard_oversized_reviews_total. The default, 3 MiB, is the
    /// API server's own limit on a request body; an evaluated review of that size peaks at
    /// about 15x its size in memory for a CRD (BENCHMARKS.md, "Memory per review").
    #[arg(
        long,
        value_name = "BYTES",
        env = "SYNCGUARD_MAX_OBJECT_BYTES",
        default_value_t = crate::webhook::MAX_OBJECT_BYTES
    )]
    pub max_object_bytes: usize,

    /// Most bytes of AdmissionReview bodies read, decoded or evaluated at once. A review takes
    /// its body's size from this budget before its body is read (a body larger than the budget
    /// takes all of it) and waits, inside --eval-timeout-ms, while others hold it; so
    /// concurrent large reviews (CRD-heavy syncs) cannot together exceed the memory the chart
    /// gives the pod. Small reviews never notice. See syncguard_inflight_review_bytes and
    /// syncguard_inflight_bytes_waits_total.
    #[arg(
        long,
        value_name = "BYTES",
        env = "SYNCGUARD_MAX_INFLIGHT_BYTES",
        default_value_t = crate::webhook::INFLIGHT_BYTES
    )]
    pub max_inflight_bytes: usize,

    /// After SIGTERM keep serving this long with readiness 503, so Kubernetes stops routing
    /// reviews here before connections close.
    #[arg(
        long,
        value_name = "MS",
        env = "SYNCGUARD_SHUTDOWN_DELAY_MS",
        default_value_t = 0
    )]
    pub shutdown_delay_ms: u64,

    /// Then give in-flight reviews at most this long to finish.
    #[arg(
        long,
        value_name = "MS",
        env = "SYNCGUARD_SHUTDOWN_TIMEOUT_MS",
        default_value_t = 10_000
    )]
    pub shutdown_timeout_ms: u64,

    /// Re-check the watched directories this often even without file events.
    #[arg(
        long,
        value_name = "SECONDS",
        env = "SYNCGUARD_POLL_INTERVAL",
        default_value_t = 60
    )]
    pub poll_interval: u64,

    /// Log format: auto (pretty on a terminal, JSON otherwise), json or pretty. Levels come
    /// from RUST_LOG / SYNCGUARD_LOG (default info).
    #[arg(long, value_enum, env = "SYNCGUARD_LOG_FORMAT", default_value_t = LogFormat::Auto)]
    pub log_format: LogFormat,
}

/// `syncguard reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// Watch Applications in this namespace only (repeatable; default: all namespaces). The
    /// environment variable takes a comma-separated list.
    #[arg(
        long = "app-namespace",
        value_name = "NS",
        env = "SYNCGUARD_APP_NAMESPACES",
        value_delimiter = ','
    )]
    pub app_namespaces: Vec<String>,

    /// Argo CD's namespace. The audit reads the release Argo CD runs from its application
    /// controller's image (used unless `argocd_version` in the policies' config.yaml pins one)
    /// and the configuration rules see (`input.argocd.config`) from `argocd-cm` and the
    /// AppProjects there.
    #[arg(
        long,
        value_name = "NS",
        env = "SYNCGUARD_ARGOCD_NAMESPACE",
        default_value = "argocd"
    )]
    pub argocd_namespace: String,

    /// SG501: report a sync operation Running longer than this.
    #[arg(long, value_name = "DURATION", env = "SYNCGUARD_STUCK_AFTER", default_value = "20m",
          value_parser = parse_duration)]
    pub stuck_after: std::time::Duration,

    /// End stuck sync operations for a proven cause: off (default), dry-run (an Event and a
    /// metric say what would be done; nothing is written) or on. Only Applications that opt in
    /// are considered: annotation syncguard.dev/terminate-stuck-after: 30m on the Application,
    /// or --terminate-after as a default (the annotation "off" opts out). An operation is
    /// ended only when it has run past that threshold AND the hook it waits for certainly
    /// cannot progress (image cannot be pulled, CrashLoopBackOff, unschedulable, a
    /// Secret/ConfigMap nothing creates before it), seen unchanged for a minute (half the
    /// threshold if shorter). The write is Argo CD's own terminate (phase Terminating); the
    /// Event StuckSyncTerminated names the cause and the threshold. Needs update on
    /// applications.argoproj.io.
    #[arg(
        long,
        value_enum,
        value_name = "MODE",
        env = "SYNCGUARD_TERMINATE",
        default_value_t = crate::reconciler::terminate::Mode::Off
    )]
    pub terminate: crate::reconciler::terminate::Mode,

    /// Termination threshold for Applications without the annotation (unset: only annotated
    /// Applications). Used only with --terminate dry-run or on.
    #[arg(long, value_name = "DURATION", env = "SYNCGUARD_TERMINATE_AFTER",
          value_parser = parse_duration)]
    pub terminate_after: Option<std::time::Duration>,

    /// SG502: the window in which repeated syncs of one Application count as a loop.
    #[arg(long, value_name = "DURATION", env = "SYNCGUARD_LOOP_WINDOW", default_value = "30m",
          value_parser = parse_duration)]
    pub loop_window: std::time::Duration,

    /// SG502: more syncs (or Synced→OutOfSync flips) than this within the window is a loop.
    #[arg(
        long,
        value_name = "N",
        env = "SYNCGUARD_LOOP_SYNCS",
        default_value_t = 5
    )]
    pub loop_syncs: u32,

    /// SG503: report more completed, never-deleted hook Jobs/Pods than this per Application.
    #[arg(
        long,
        value_name = "N",
        env = "SYNCGUARD_HOOK_THRESHOLD",
        default_value_t = 10
    )]
    pub hook_threshold: usize,

    /// Do not repeat an Event for the same Application, rule and cause within this period.
    #[arg(long, value_name = "DURATION", env = "SYNCGUARD_EVENT_DEDUP", default_value = "1h",
          value_parser = parse_duration)]
    pub event_dedup: std::time::Duration,

    /// How often the background audit re-evaluates live objects against the policies.
    #[arg(long, value_name = "DURATION", env = "SYNCGUARD_AUDIT_INTERVAL", default_value = "10m",
          value_parser = parse_duration)]
    pub audit_interval: std::time::Duration,

    /// Audit only this namespace (repeatable; default: all but the excluded ones).
    #[arg(
        long = "audit-namespace",
        value_name = "NS",
        env = "SYNCGUARD_AUDIT_NAMESPACES",
        value_delimiter = ','
    )]
    pub audit_namespaces: Vec<String>,

    /// Never audit this namespace (repeatable).
    #[arg(
        long = "audit-exclude-namespace",
        value_name = "NS",
        env = "SYNCGUARD_AUDIT_EXCLUDE_NAMESPACES",
        value_delimiter = ',',
        default_value = "kube-system,kube-public,kube-node-lease"
    )]
    pub audit_exclude_namespaces: Vec<String>,

    /// At most this many results per PolicyReport (the summary counts the rest).
    #[arg(
        long,
        value_name = "N",
        env = "SYNCGUARD_REPORT_MAX_RESULTS",
        default_value_t = 200
    )]
    pub report_max_results: usize,

    /// Which report API the audit writes its per-namespace reports in: PolicyReports
    /// (wgpolicyk8s.io/v1alpha2), OpenReports Reports (openreports.io/v1alpha1), or both with the
    /// same content while consumers move from one to the other. Each needs its CRD; the
    /// reconciler's RBAC must allow it (the chart's reconciler.reportApi grants only what is
    /// selected). Same name (syncguard), label, cap and clean-up for both.
    #[arg(
        long,
        value_name = "API",
        env = "SYNCGUARD_REPORT_API",
        value_enum,
        default_value = "wgpolicyk8s"
    )]
    pub report_api: crate::reconciler::context::ReportApis,

    /// Do not run the background audit (the Application diagnosis still runs).
    #[arg(long, env = "SYNCGUARD_NO_AUDIT")]
    pub no_audit: bool,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// The policy engine's deadline per object.
    #[arg(
        long,
        value_name = "MS",
        env = "SYNCGUARD_RULE_DEADLINE_MS",
        default_value_t = 250
    )]
    pub rule_deadline_ms: u64,

    /// Plain-HTTP address for /livez, /readyz and /metrics.
    #[arg(
        long,
        value_name = "ADDR",
        env = "SYNCGUARD_PROBE_LISTEN",
        default_value = "0.0.0.0:8080"
    )]
    pub probe_listen: std::net::SocketAddr,

    /// Act as the only writer without a Lease (a single replica, or local runs).
    #[arg(long, env = "SYNCGUARD_NO_LEADER_ELECTION")]
    pub no_leader_election: bool,

    /// Keep nothing across restarts: do not read the Events syncguard wrote before (so open
    /// causes are announced again after a restart or hand-over) and do not keep the OutOfSync
    /// flips of sync loops in progress in the ConfigMap `<lease name>-state` next to the Lease
    /// (docs/reconciler.md, "Restarts and hand-overs").
    #[arg(long, env = "SYNCGUARD_NO_STATE")]
    pub no_state: bool,

    /// Sustained rate (requests per second) of the diagnosis' reads of live objects: the GETs
    /// and LISTs that SG501-SG503 make per Application. A replica that wins the Lease
    /// reconciles every Application at once; this spreads those reads out. 0 = unlimited.
    #[arg(long, value_name = "QPS", env = "SYNCGUARD_API_QPS", default_value_t = crate::reconciler::budget::DEFAULT_RATE)]
    pub api_qps: f64,

    /// Burst of the diagnosis' reads of live objects (see --api-qps).
    #[arg(long, value_name = "N", env = "SYNCGUARD_API_BURST", default_value_t = crate::reconciler::budget::DEFAULT_BURST)]
    pub api_burst: u32,

    /// Name of the leader Lease.
    #[arg(
        long,
        value_name = "NAME",
        env = "SYNCGUARD_LEASE_NAME",
        default_value = "syncguard-reconciler"
    )]
    pub lease_name: String,

    /// Namespace of the leader Lease (required with election; falls back to POD_NAMESPACE,
    /// which the chart sets from the downward API).
    #[arg(long, value_name = "NS", env = "SYNCGUARD_LEASE_NAMESPACE")]
    pub lease_namespace: Option<String>,

    /// This replica's identity in the Lease (falls back to POD_NAME, then the hostname).
    #[arg(long, value_name = "NAME", env = "SYNCGUARD_IDENTITY")]
    pub identity: Option<String>,

    /// Field manager for writes, and the Events' reportingController.
    #[arg(
        long,
        value_name = "NAME",
        env = "SYNCGUARD_FIELD_MANAGER",
        default_value = "syncguard"
    )]
    pub field_manager: String,

    /// On SIGTERM or SIGINT, stop within this: writers first (in-flight reconciles and the
    /// audit finish their writes), then one last write of the loop state, then the Lease is
    /// released so a standby takes over at once. A step the API server does not answer in time
    /// is cut short and logged with what was not written; an unreleased Lease expires on its
    /// own (15 s). Keep it below the pod's terminationGracePeriodSeconds (the chart checks). A
    /// second signal exits at once.
    #[arg(long, value_name = "DURATION", env = "SYNCGUARD_SHUTDOWN_TIMEOUT", default_value = "10s",
          value_parser = parse_duration)]
    pub shutdown_timeout: std::time::Duration,

    /// Log format: auto (pretty on a terminal, JSON otherwise), json or pretty. Levels come
    /// from RUST_LOG / SYNCGUARD_LOG (default info).
    #[arg(long, value_enum, env = "SYNCGUARD_LOG_FORMAT", default_value_t = LogFormat::Auto)]
    pub log_format: LogFormat,
}

pub use crate::duration::parse_duration;

/// Where the rules come from: `--policies DIR` (a whole set) or `--policy-overlay DIR` (the
/// built-in rules with a directory laid over them); shared by `check`, `serve` and `reconcile`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PolicyArgs {
    /// Policy directory to use instead of the built-in rules: its *.rego files and its
    /// config.yaml. A directory with only a config.yaml (no .rego file) runs the built-in rules
    /// with that config.yaml in place of the built-in one (keys it leaves out keep their
    /// defaults), e.g. `actions: {SG103: off}`. serve and reconcile watch it: a changed
    /// directory goes live only when it loads and its own test_* rules pass.
    #[arg(long, value_name = "DIR", env = "SYNCGUARD_POLICIES")]
    pub policies: Option<PathBuf>,

    /// Directory laid over the built-in rules: a file named like a built-in rule file (e.g.
    /// hook_deadline.rego) replaces it, other *.rego files add rules, and its config.yaml
    /// replaces the built-in one. serve and reconcile watch it; the merged set goes live only
    /// when it loads and every test passes. The usual way to run syncguard in a cluster: the
    /// binary's own rules plus yours.
    #[arg(
        long,
        value_name = "DIR",
        env = "SYNCGUARD_POLICY_OVERLAY",
        conflicts_with = "policies"
    )]
    pub policy_overlay: Option<PathBuf>,
}

impl PolicyArgs {
    /// The policy source these flags select.
    pub fn source(&self) -> crate::policy::builtin::PolicySource {
        crate::policy::builtin::PolicySource::from_args(
            self.policies.clone(),
            self.policy_overlay.clone(),
        )
    }
}

/// `--on-error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnErrorArg {
    /// Admit the object with a warning that it was not fully checked.
    Allow,
    /// Reject the object.
    Deny,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Pretty on a terminal, JSON otherwise (in a cluster).
    Auto,
    /// One JSON object per line.
    Json,
    /// Human-readable.
    Pretty,
}

/// `syncguard certs`.
#[derive(Debug, Args)]
pub struct CertsArgs {
    /// Output directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,

    /// A DNS name or IP address the serving certificate is valid for (repeatable), e.g.
    /// syncguard.syncguard.svc, localhost, 127.0.0.1.
    #[arg(long = "dns", value_name = "NAME", required = true)]
    pub dns: Vec<String>,

    /// Validity of the serving certificate in days.
    #[arg(long, value_name = "N", default_value_t = 365)]
    pub days: u32,

    /// Make a new CA even if DIR already has one (clients must then trust the new ca.crt).
    #[arg(long)]
    pub new_ca: bool,
}

/// `syncguard determinism`.
#[derive(Debug, Args)]
pub struct DeterminismArgs {
    /// How many times to render (at least 2).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(2..=100))]
    pub runs: u64,

    /// Minimum time between the starts of two renders, so second-resolution timestamps differ.
    #[arg(long, value_name = "MS", default_value_t = 1100)]
    pub delay_ms: u64,

    /// Kill a render that takes longer than this many seconds (0: no limit).
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    pub timeout: u64,

    /// Save every render as DIR/render-N.yaml; findings then point into those files.
    #[arg(long, value_name = "DIR")]
    pub save_to: Option<PathBuf>,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,

    /// Lowest action that makes the exit code 1 (SG302 findings are warnings).
    #[arg(long, value_enum, default_value_t = FailOnArg::Warn)]
    pub fail_on: FailOnArg,

    /// When to colour the text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,

    /// The render command and its arguments (after `--`), run without a shell.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

/// `syncguard check`.
#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("server").args(["cluster", "ephemeral_cluster"])))]
pub struct CheckArgs {
    /// The manifests to check.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
    pub format: ReportFormat,

    /// Lowest action that makes the exit code 1: `deny` (only denials), `warn` (also warnings
    /// and proposed mutations), `info` (anything not off, including audit).
    #[arg(long, value_enum, default_value_t = FailOnArg::Deny)]
    pub fail_on: FailOnArg,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// Show the JSON patch each mutating rule proposes.
    #[arg(long)]
    pub show_patches: bool,

    /// Show `info` findings in the text and Markdown formats. They state facts whose acting on
    /// changes no sync (a Helm test hook Argo CD never runs, a CRD assumed to come from
    /// elsewhere; docs/severity.md), so by default those formats only count them. JSON, SARIF
    /// (level `note`) and JUnit always carry them; they never fail a run below `--fail-on info`.
    #[arg(long)]
    pub show_info: bool,

    /// Destination namespace for apps whose Application is not in the input. Argo CD puts
    /// every object that names no namespace there. Default: the namespace the input's objects
    /// name most often (a chart rendered with `--namespace NS` writes NS into its objects),
    /// else `default`.
    #[arg(long, value_name = "NAMESPACE")]
    pub dest_namespace: Option<String>,

    /// Declare that the cluster has no CRDs beyond those in the input: custom kinds whose CRD is
    /// not in the input are not served (`input.context.require_crds`), so SG203 states that
    /// Argo CD will refuse the sync and denies (exit 1), instead of warning that the CRD may
    /// be missing.
    #[arg(long)]
    pub require_crds: bool,

    /// The Argo CD release to judge for: 3.2 (or v3.2.11) and older run the standalone
    /// gitops-engine, 3.3 and later the one inside argo-cd; a few sync and health rules differ
    /// (docs/argocd-versions.md). Default: the newest release syncguard knows, or `argocd_version` in the policies' config.yaml.
    #[arg(long, value_name = "VERSION", env = "SYNCGUARD_ARGOCD_VERSION")]
    pub argocd_version: Option<ArgoCdVersion>,

    /// Argo CD configuration to judge with: a file or directory holding the `argocd-cm`
    /// ConfigMap and `AppProject` objects (`kubectl get cm argocd-cm -n argocd -o yaml`,
    /// `kubectl get appprojects -n argocd -o yaml`). Rules see its custom health checks,
    /// system-level ignoreDifferences, resource exclusions and what each project permits
    /// (`input.argocd.config`). Such objects inside the checked input are read too.
    #[arg(long, value_name = "PATH")]
    pub argocd_config: Vec<PathBuf>,

    /// Declare that the input holds every object its Applications need. A reference to an
    /// object that is not in it is then known to be missing (`input.context.complete`), so
    /// rules such as SG201 deny instead of warning that the object is assumed to exist.
    #[arg(long)]
    pub complete: bool,

    /// Also ask the cluster (KUBECONFIG, ~/.kube/config or the in-cluster service account)
    /// what it would store for each object: a server-side apply with dryRun=All, which runs
    /// the API server's defaulting and every admission webhook but NEVER WRITES anything.
    /// Declared fields the stored form holds differently are reported as predicted drift
    /// (SG305). Needs `patch` on the objects' kinds; objects the cluster refuses (kind not
    /// served, namespace missing, forbidden) are listed on stderr and judged offline.
    #[arg(long)]
    pub cluster: bool,

    /// Ask a throwaway API server instead of a real cluster: start etcd and kube-apiserver on
    /// loopback in a temporary directory (no nodes, no controllers), install the input's CRDs
    /// and namespaces, then dry-run every object as --cluster does; stopped and removed on
    /// every exit. What the server refuses is a blocking finding with its own message (SG401),
    /// what it fills in or allocates is predicted drift (SG305). The binaries come from
    /// --kube-binaries, $SYNCGUARD_KUBE_BINARIES, ~/.cache/syncguard/bin or PATH
    /// (docs/ephemeral-cluster.md). If it cannot start, the input is still judged offline and
    /// the exit code is 2.
    ///
    /// Example: syncguard check --ephemeral-cluster --kube-binaries .tools/bin rendered/
    #[arg(long, conflicts_with = "cluster")]
    pub ephemeral_cluster: bool,

    /// With --ephemeral-cluster: the directory holding kube-apiserver and etcd.
    #[arg(long, value_name = "DIR", requires = "ephemeral_cluster")]
    pub kube_binaries: Option<PathBuf>,

    /// With --ephemeral-cluster: objects to make live on the throwaway server before the input
    /// is dry-run against them (`kubectl get -o yaml` output, or the previous revision's
    /// manifests). A change the server refuses from them (`field is immutable`) is then a
    /// blocking SG401 finding, as in `review --ephemeral-cluster`. Their resourceVersion, uid,
    /// managedFields and status are dropped.
    ///
    /// Example: kubectl get deploy,svc,job -n shop -o yaml > live.yaml;
    /// syncguard check --ephemeral-cluster --live live.yaml rendered/
    #[arg(long, value_name = "PATH", requires = "ephemeral_cluster")]
    pub live: Vec<PathBuf>,

    /// With --cluster or --ephemeral-cluster: dry-run requests in flight at once.
    #[arg(long, value_name = "N", default_value_t = 4, requires = "server",
          value_parser = clap::value_parser!(u16).range(1..=64))]
    pub cluster_concurrency: u16,

    /// With --cluster or --ephemeral-cluster: dry-run (and discovery) requests started per
    /// second. Default: 20 on a real cluster, 1000 on the throwaway server (it is syncguard's
    /// alone).
    #[arg(long, value_name = "QPS", requires = "server",
          value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub cluster_qps: Option<u16>,

    /// When to colour the text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// `syncguard inputs`.
#[derive(Debug, Args)]
pub struct InputsArgs {
    /// The manifests.
    #[command(flatten)]
    pub input: InputArgs,

    /// Destination namespace for apps whose Application is not in the input. Argo CD puts
    /// every object that names no namespace there. Default: the namespace the input's objects
    /// name most often (a chart rendered with `--namespace NS` writes NS into its objects),
    /// else `default`.
    #[arg(long, value_name = "NAMESPACE")]
    pub dest_namespace: Option<String>,

    /// The Argo CD release the documents are for (`input.argocd`); as for `check`.
    #[arg(long, value_name = "VERSION", env = "SYNCGUARD_ARGOCD_VERSION")]
    pub argocd_version: Option<ArgoCdVersion>,

    /// Argo CD configuration to judge with: a file or directory holding the `argocd-cm`
    /// ConfigMap and `AppProject` objects (`kubectl get cm argocd-cm -n argocd -o yaml`,
    /// `kubectl get appprojects -n argocd -o yaml`). Rules see its custom health checks,
    /// system-level ignoreDifferences, resource exclusions and what each project permits
    /// (`input.argocd.config`). Such objects inside the checked input are read too.
    #[arg(long, value_name = "PATH")]
    pub argocd_config: Vec<PathBuf>,

    /// Declare that the input holds every object its Applications need. A reference to an
    /// object that is not in it is then known to be missing (`input.context.complete`), so
    /// rules such as SG201 deny instead of warning that the object is assumed to exist.
    #[arg(long)]
    pub complete: bool,
}

/// Report formats of `syncguard check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportFormat {
    /// Human-readable, grouped by Application and file (colour on a terminal).
    Text,
    /// Stable JSON (schema in docs/report-json.md).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// JUnit XML, for CI test report views.
    Junit,
    /// Markdown, for pull-request comments.
    Markdown,
}

/// `--fail-on` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOnArg {
    /// Any open finding whose action is not off.
    Info,
    /// Deny, warn and mutate findings.
    Warn,
    /// Deny findings only.
    Deny,
}

/// `syncguard test`.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// The policy directory.
    #[arg(value_name = "DIR", default_value = "policies")]
    pub dir: PathBuf,

    /// Treat DIR as an overlay of the built-in rules (as `serve --policy-overlay DIR` loads it)
    /// and run every test of the merged set: the built-in tests of the rules it keeps and
    /// reconfigures, and its own.
    #[arg(long)]
    pub overlay: bool,

    /// Also report which lines of each rule file the tests executed.
    #[arg(long)]
    pub coverage: bool,

    /// Output format.
    #[arg(long, value_enum, default_value_t = TestFormat::Text)]
    pub format: TestFormat,
}

/// Formats of `syncguard test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestFormat {
    /// PASS/FAIL/ERROR per test, the coverage table with --coverage, and a summary line.
    Text,
    /// Every test with its outcome and duration, the counts and the coverage, as JSON.
    Json,
}

/// Where manifests come from (shared by every dry-run command).
#[derive(Debug, Args)]
pub struct InputArgs {
    /// Files or directories (searched recursively for *.yaml, *.yml, *.json); `-` reads stdin.
    #[arg(value_name = "PATH", default_value = "-")]
    pub paths: Vec<PathBuf>,

    /// Accept an input without a single Kubernetes object. By default that is an input error
    /// (exit 2): an empty input is usually a render that failed upstream (`helm template ... |
    /// syncguard check -` after helm printed only an error), and "no findings" would hide it.
    #[arg(long)]
    pub allow_empty: bool,

    /// Render the Argo CD Applications of the input from the local checkout (as `syncguard
    /// render` does) and check what they render too. `auto`: when an Application's source is
    /// the local repository (or one given with --repo); `always`: an Application that cannot be
    /// rendered is then an error; `never`: Applications are checked as objects only.
    #[arg(long, value_enum, default_value_t = RenderMode::Auto)]
    pub render: RenderMode,

    #[command(flatten)]
    pub render_flags: RenderFlags,
}

/// When the dry-run commands render Applications.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RenderMode {
    /// Render the Applications whose sources are local.
    Auto,
    /// Render every Application (a source that cannot be rendered is an error).
    Always,
    /// Do not render.
    Never,
}

impl InputArgs {
    /// The paths as the user named them (`-` is stdin).
    pub fn input_labels(&self) -> Vec<String> {
        self.paths.iter().map(|p| p.display().to_string()).collect()
    }
}

/// `syncguard render`.
#[derive(Debug, Args)]
pub struct RenderArgs {
    /// Files or directories holding Application manifests (other objects are ignored).
    #[arg(value_name = "PATH", required = true)]
    pub paths: Vec<PathBuf>,

    #[command(flatten)]
    pub flags: RenderFlags,
}

/// How Applications are rendered (shared by `render` and the dry-run commands' `--render`).
#[derive(Debug, Args)]
pub struct RenderFlags {
    /// A repository that sources point at, checked out at DIR (`URL=DIR`, repeatable). The git
    /// checkout of the working directory is always known under the URLs of its remotes.
    #[arg(long = "repo", value_name = "URL=DIR")]
    pub repos: Vec<String>,

    /// The namespace Argo CD runs in: Applications in other namespaces are named
    /// `<namespace>_<name>` in tracking ids, as Argo CD names them.
    #[arg(long, value_name = "NAMESPACE", default_value = "argocd")]
    pub control_plane_namespace: String,

    /// The helm binary Helm sources are rendered with (Argo CD 3.6 bundles Helm 4.3.1).
    #[arg(
        long,
        value_name = "PATH",
        default_value = "helm",
        env = "SYNCGUARD_HELM"
    )]
    pub helm: String,

    /// The kustomize binary Kustomize sources are built with (Argo CD 3.6 bundles 5.8.3).
    #[arg(
        long,
        value_name = "PATH",
        default_value = "kustomize",
        env = "SYNCGUARD_KUSTOMIZE"
    )]
    pub kustomize: String,

    /// The jsonnet command `.jsonnet` files of directory sources are evaluated with: go-jsonnet's
    /// `jsonnet`, the implementation Argo CD links (3.6 links v0.22.0).
    #[arg(
        long,
        value_name = "PATH",
        default_value = "jsonnet",
        env = "SYNCGUARD_JSONNET"
    )]
    pub jsonnet: String,

    /// Files or directories holding Argo CD cluster Secrets (`argocd.argoproj.io/secret-type:
    /// cluster`) for the clusters generators of ApplicationSets, besides those of the input:
    /// `kubectl get secrets -n argocd -l argocd.argoproj.io/secret-type=cluster -o yaml`, with
    /// `config` removed (only name, server, project, labels and annotations are read).
    #[arg(long = "clusters", value_name = "PATH")]
    pub clusters: Vec<PathBuf>,

    /// A kustomize registered under a version name, for sources that set `kustomize.version`
    /// (argocd-cm `kustomize.path.NAME`; repeatable).
    #[arg(long = "kustomize-version", value_name = "NAME=PATH")]
    pub kustomize_versions: Vec<String>,

    /// Options added to every `kustomize build` (argocd-cm `kustomize.buildOptions`, for
    /// example `--enable-helm --load-restrictor LoadRestrictionsNone`).
    #[arg(
        long,
        value_name = "OPTIONS",
        default_value = "",
        allow_hyphen_values = true
    )]
    pub kustomize_build_options: String,

    /// The destination cluster's version, passed as Argo CD passes it (`--kube-version` of
    /// `helm template`, `--helm-kube-version` of kustomize with --enable-helm), e.g. v1.34.1.
    /// Without it helm uses its built-in default.
    #[arg(long, value_name = "VERSION", default_value = "")]
    pub kube_version: String,

    /// The destination cluster's API versions (`.Capabilities.APIVersions`): `group/version`
    /// and `group/version/Kind` entries, comma-separated or repeated.
    #[arg(long = "api-versions", value_name = "LIST")]
    pub api_versions: Vec<String>,

    /// How long one helm or kustomize run may take.
    #[arg(long = "render-timeout", value_name = "DURATION", default_value = "2m", value_parser = parse_duration)]
    pub render_timeout: std::time::Duration,

    /// Where charts pulled from chart repositories and OCI registries are kept, by repository,
    /// chart and version, so a second render does not fetch them again (default:
    /// `$XDG_CACHE_HOME/syncguard/charts`, else `~/.cache/syncguard/charts`). Delete it to
    /// fetch again. Credentials for the pulls: Helm's `repositories.yaml` (`helm repo add
    /// --username`), `helm registry login`, or SYNCGUARD_CHART_REPO_<ID>_URL, _USERNAME and
    /// _PASSWORD for the repositories under a URL prefix (docs/render.md).
    #[arg(long, value_name = "DIR", env = "SYNCGUARD_CHART_CACHE")]
    pub chart_cache: Option<PathBuf>,

    /// An OCI registry (`host:port`, as in the source's repoURL) spoken to over plain HTTP
    /// instead of HTTPS, as Argo CD's repository setting `insecureOCIForceHttp` does (repeatable
    /// or comma-separated), e.g. `--oci-plain-http localhost:5000`.
    #[arg(
        long = "oci-plain-http",
        value_name = "REGISTRY",
        env = "SYNCGUARD_OCI_PLAIN_HTTP",
        value_delimiter = ','
    )]
    pub oci_plain_http: Vec<String>,
}

/// `syncguard review`.
#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// Where the Applications are, relative to the working directory (files or directories,
    /// read on each revision; files holding no Application are ignored).
    #[arg(value_name = "PATH", default_value = ".")]
    pub paths: Vec<PathBuf>,

    /// The revision the change is measured against (a branch, tag or commit).
    #[arg(long, value_name = "REF")]
    pub base: String,

    /// The revision under review.
    #[arg(long, value_name = "REF", default_value = "HEAD")]
    pub head: String,

    /// Output format.
    #[arg(long, value_enum, default_value_t = ReviewFormat::Text)]
    pub format: ReviewFormat,

    /// Also write the review in FORMAT to PATH (repeatable), so one run gives a CI job every
    /// file it needs: `--output markdown=comment.md --output sarif=syncguard.sarif`. FORMAT is
    /// one of text, json, sarif, markdown, codequality (GitLab Code Quality).
    #[arg(long = "output", value_name = "FORMAT=PATH")]
    pub outputs: Vec<String>,

    /// The largest Markdown comment, in bytes (GitHub's limit is 65,536 characters; at least
    /// 2048). A longer review continues in further comments, each numbered ("part 2 of 3") and
    /// marked `<!-- syncguard-review part 2 of 3 -->`; nothing is left out. On stdout the parts
    /// follow one another; `--output markdown=comment.md` writes comment.md, comment.2.md, ...
    /// (and removes further parts an earlier run left), which integrations/upsert-comment.py
    /// posts as one comment each.
    #[arg(long, value_name = "BYTES", default_value_t = 65_536)]
    pub markdown_budget: usize,

    /// Show `info` findings in the text view and the Markdown comment. They state facts whose
    /// acting on changes no sync (docs/severity.md), so by default those views only count them;
    /// JSON, SARIF (level `note`) and Code Quality (`info`) always carry them.
    #[arg(long)]
    pub show_info: bool,

    /// Fail on new findings at this action or above.
    #[arg(long, value_enum, default_value_t = FailOnArg::Deny)]
    pub fail_on: FailOnArg,

    /// Findings already on the base fail the run too.
    #[arg(long)]
    pub fail_on_existing: bool,

    /// A JSON file of the Applications accepted as not judged, e.g. one that only a config
    /// management plugin renders: {"version": 1, "not_judged": [{"kind": "Application",
    /// "namespace": "argocd", "name": "legacy", "reason": "plugin"}]} (`reason` left out: any
    /// reason). `review --format json` writes one for the current head under `baseline`.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,

    #[command(flatten)]
    pub policy: PolicyArgs,

    /// The Argo CD release to judge for (see `check --help`).
    #[arg(long, value_name = "VERSION", env = "SYNCGUARD_ARGOCD_VERSION")]
    pub argocd_version: Option<ArgoCdVersion>,

    /// Judge both revisions on a throwaway API server (etcd + kube-apiserver on loopback,
    /// removed on every exit): the base revision's objects are applied for real, then the
    /// head's are dry-run against them the way Argo CD applies them. A change the server
    /// refuses from the live object (an immutable selector, a Job's template, an immutable
    /// Secret's data) is a blocking SG401 finding; what it refuses outright is one too; what it
    /// fills in is SG305 drift (docs/ephemeral-cluster.md).
    ///
    /// Example: syncguard review --base origin/main --ephemeral-cluster --kube-binaries .tools/bin apps/
    #[arg(long)]
    pub ephemeral_cluster: bool,

    /// With --ephemeral-cluster: the directory holding kube-apiserver and etcd (default:
    /// $SYNCGUARD_KUBE_BINARIES, ~/.cache/syncguard/bin, PATH).
    #[arg(long, value_name = "DIR", requires = "ephemeral_cluster")]
    pub kube_binaries: Option<PathBuf>,

    #[command(flatten)]
    pub render_flags: RenderFlags,
}

/// `syncguard review --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReviewFormat {
    /// For a terminal or a CI log.
    Text,
    /// Everything, for tools.
    Json,
    /// The head's findings with their baseline state (new/unchanged), for code scanning.
    Sarif,
    /// Pull-request comments, each within --markdown-budget (usually one).
    Markdown,
    /// A GitLab Code Quality report of the head's findings.
    Codequality,
}

/// `syncguard plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The manifests to plan.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = PlanFormat::Text)]
    pub format: PlanFormat,

    /// The Application's destination namespace. Argo CD gives it to every object that has no
    /// namespace (even cluster-scoped ones), which decides where Namespaces are moved to.
    /// Taken from an Application in the input when there is one; else the namespace the
    /// objects name most often; else `default`.
    #[arg(long, value_name = "NAMESPACE")]
    pub dest_namespace: Option<String>,

    /// Simulate the app-level sync option `CreateNamespace=true`.
    #[arg(long)]
    pub create_namespace: bool,

    /// Simulate the app-level sync option `PruneLast=true`.
    #[arg(long)]
    pub prune_last: bool,

    /// Live objects currently in the cluster (e.g. `kubectl get -o yaml` output). Objects that
    /// are live but not in the manifests become prune tasks, ordered as Argo CD prunes them; and
    /// the plan then says where the sync would stop if the live objects kept their state (Argo
    /// CD's health of each, run through the tick model of a sync): a hook Job that stays
    /// Progressing, a terminating object held by a finalizer, a Degraded hook that fails it.
    #[arg(long, value_name = "PATH")]
    pub live: Vec<PathBuf>,

    /// Treat custom kinds whose CRD is not in the input as not served by the cluster, as Argo CD
    /// does when the CRD is not installed: the sync is then reported invalid and `plan` exits 1.
    /// By default syncguard assumes such CRDs are installed already.
    #[arg(long)]
    pub require_crds: bool,

    /// Git revision, used to name hooks that only have `generateName`.
    #[arg(long, default_value = "")]
    pub revision: String,

    /// The Argo CD release to judge for: 3.2 (or v3.2.11) and older run the standalone
    /// gitops-engine, 3.3 and later the one inside argo-cd; a few sync and health rules differ
    /// (docs/argocd-versions.md). Default: the newest release syncguard knows.
    #[arg(long, value_name = "VERSION", env = "SYNCGUARD_ARGOCD_VERSION")]
    pub argocd_version: Option<ArgoCdVersion>,

    /// When to colour the text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

/// Arguments of `syncguard explain`.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// The Application: NAME, or NAMESPACE/NAME.
    #[arg(value_name = "APP")]
    pub app: String,

    /// The Application and the manifests it syncs.
    #[command(flatten)]
    pub input: InputArgs,

    /// Output format.
    #[arg(long, value_enum, default_value_t = PlanFormat::Text)]
    pub format: PlanFormat,

    /// The Argo CD release to explain for (which layers it reads, how RespectIgnoreDifferences
    /// patches lists). Default: the newest release syncguard knows.
    #[arg(long, value_name = "VERSION", env = "SYNCGUARD_ARGOCD_VERSION")]
    pub argocd_version: Option<ArgoCdVersion>,

    /// The argocd-cm ConfigMap (a file or directory): its system-level ignoreDifferences and
    /// tracking method. An argocd-cm inside the input is read too.
    #[arg(long, value_name = "PATH")]
    pub argocd_config: Vec<PathBuf>,

    /// The live objects (`kubectl get -o yaml --show-managed-fields`): `managedFieldsManagers`
    /// entries are resolved against their managed fields, which a rendered object never has.
    #[arg(long, value_name = "PATH")]
    pub live: Vec<PathBuf>,
}

/// Formats of `syncguard plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanFormat {
    /// A human-readable timeline.
    Text,
    /// The plan as JSON, for machines.
    Json,
}

/// When to use colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Only when stdout is a terminal (and NO_COLOR is not set).
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl ColorChoice {
    /// Resolves `auto` against the terminal and the `NO_COLOR` convention.
    pub fn enabled(self, is_terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => is_terminal && std::env::var_os("NO_COLOR").is_none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn serve_cluster_takes_repeatable_app_namespaces_and_excludes_app_context() {
        let cli = Cli::try_parse_from([
            "syncguard",
            "serve",
            "--cluster",
            "--app-namespace",
            "argocd",
            "--app-namespace",
            "team-a",
        ])
        .unwrap();
        let Command::Serve(args) = cli.command else {
            panic!("not serve");
        };
        assert!(args.cluster);
        assert_eq!(args.app_namespace, vec!["argocd", "team-a"]);
        assert!(
            Cli::try_parse_from(["syncguard", "serve", "--cluster", "--app-context", "dir"])
                .is_err()
        );
        assert!(Cli::try_parse_from(["syncguard", "serve", "--app-namespace", "argocd"]).is_err());
    }

    fn long_help(subcommand: &str) -> String {
        Cli::command()
            .find_subcommand_mut(subcommand)
            .unwrap()
            .render_long_help()
            .to_string()
    }

    #[test]
    fn test_help_describes_test_output_not_a_plan() {
        let help = long_help("test");
        assert!(!help.contains("timeline"), "{help}");
        assert!(!help.contains("The plan"), "{help}");
        assert!(help.contains("PASS/FAIL/ERROR per test"), "{help}");
        assert!(help.contains("no test_* rule"), "{help}");
    }

    #[test]
    fn help_documents_require_crds_exit_codes_and_config_only_policy_dirs() {
        let plan = long_help("plan");
        assert!(plan.contains("1 Argo CD will refuse the sync"), "{plan}");
        assert!(plan.contains("`plan` exits 1"), "{plan}");
        let check = long_help("check");
        assert!(check.contains("only a config.yaml"), "{check}");
        assert!(check.contains("input.context.require_crds"), "{check}");
    }

    #[test]
    fn plan_reads_stdin_when_no_path_is_given() {
        let cli = Cli::try_parse_from(["syncguard", "plan"]).unwrap();
        let Command::Plan(args) = cli.command else {
            panic!("not plan");
        };
        assert_eq!(args.input.paths, vec![PathBuf::from("-")]);
        assert_eq!(args.format, PlanFormat::Text);
    }

    #[test]
    fn reconcile_help_teaches_with_examples_and_names_every_env_variable() {
        let mut cmd = Cli::command();
        let help = cmd
            .find_subcommand_mut("reconcile")
            .unwrap()
            .render_long_help()
            .to_string();
        assert!(help.contains("syncguard reconcile --app-namespace argocd --stuck-after 15m"));
        for env in [
            "SYNCGUARD_APP_NAMESPACES",
            "SYNCGUARD_STUCK_AFTER",
            "SYNCGUARD_LEASE_NAMESPACE",
            "SYNCGUARD_NO_LEADER_ELECTION",
            "SYNCGUARD_LOG_FORMAT",
        ] {
            assert!(help.contains(env), "{env} missing");
        }
    }

    #[test]
    fn reconcile_defaults_match_the_documented_ones() {
        let cli = Cli::try_parse_from(["syncguard", "reconcile"]).unwrap();
        let Command::Reconcile(args) = cli.command else {
            panic!("not reconcile");
        };
        assert_eq!(args.stuck_after, std::time::Duration::from_secs(20 * 60));
        assert_eq!(args.loop_window, std::time::Duration::from_secs(30 * 60));
        assert_eq!(args.event_dedup, std::time::Duration::from_secs(3600));
        assert_eq!(
            args.audit_exclude_namespaces,
            ["kube-system", "kube-public", "kube-node-lease"]
        );
        assert_eq!(args.lease_name, "syncguard-reconciler");
        assert!(!args.no_audit && !args.no_leader_election);
        let cli = Cli::try_parse_from([
            "syncguard",
            "reconcile",
            "--app-namespace",
            "argocd",
            "--app-namespace",
            "team-a",
            "--stuck-after",
            "15m",
            "--no-audit",
        ])
        .unwrap();
        let Command::Reconcile(args) = cli.command else {
            panic!("not reconcile");
        };
        assert_eq!(args.app_namespaces, ["argocd", "team-a"]);
        assert_eq!(args.stuck_after, std::time::Duration::from_secs(900));
        assert!(args.no_audit);
    }
}
