//! A throwaway Kubernetes control plane: `etcd` and `kube-apiserver` on loopback, in a
//! temporary directory, for as long as one `check --ephemeral-cluster` runs.
//!
//! Like controller-runtime's envtest it runs no nodes and no controllers: nothing is
//! scheduled or reconciled. What it does run is every piece of the API server that decides
//! what becomes of an object before Argo CD compares it — decoding, defaulting, validation,
//! allocation of cluster IPs and node ports, CRD structural schemas with their defaults and
//! pruning, the built-in admission plugins. The input's CRDs and namespaces are installed
//! first ([`seed`]); then the objects take exactly the path of `check --cluster`
//! (`crate::dry_run`): a server-side apply with `dryRun=All`.
//!
//! Nothing outlives the run: dropping [`ControlPlane`] stops the API server, then etcd, and
//! removes the directory; the children die with syncguard even when it is killed (see
//! [`daemon`]); a directory left by a killed run is removed by the next one.

mod binaries;
mod daemon;
mod pki;
pub mod seed;

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

pub use binaries::{Binaries, BinariesError, ENV as BINARIES_ENV, cache_dir, find};
use daemon::Daemon;

/// How long etcd and then the API server may take to become ready. A cold start takes a few
/// seconds on two cores; the margin is for a loaded CI machine.
const READY_TIMEOUT: Duration = Duration::from_secs(90);

/// Start attempts when a port picked as free was taken before the child bound it.
const PORT_ATTEMPTS: usize = 3;

/// The prefix of the temporary directory of each control plane.
const DIR_PREFIX: &str = "syncguard-apiserver-";

/// A running throwaway control plane. Dropping it stops everything and removes its files.
pub struct ControlPlane {
    // Field order is drop order: the API server stops before etcd, and the directory goes
    // last.
    apiserver: Daemon,
    etcd: Daemon,
    client: kube::Client,
    version: String,
    ready_after: Duration,
    dir: tempfile::TempDir,
}

impl ControlPlane {
    /// Starts etcd and the API server of `binaries` and waits until the server is ready.
    pub async fn start(binaries: &Binaries) -> Result<Self, String> {
        remove_leftovers(&std::env::temp_dir());
        let mut last = String::new();
        for _ in 0..PORT_ATTEMPTS {
            match Self::start_once(binaries).await {
                Ok(cp) => return Ok(cp),
                Err(Start::PortTaken(why)) => last = why,
                Err(Start::Failed(why)) => return Err(why),
            }
        }
        Err(format!(
            "{last} (a port was taken {PORT_ATTEMPTS} times in a row)"
        ))
    }

    async fn start_once(binaries: &Binaries) -> Result<Self, Start> {
        let started = Instant::now();
        let dir = tempfile::Builder::new()
            .prefix(DIR_PREFIX)
            .tempdir()
            .map_err(|e| Start::Failed(format!("cannot create a temporary directory: {e}")))?;
        let path = dir.path().to_path_buf();
        std::fs::write(path.join("owner.pid"), std::process::id().to_string())
            .map_err(|e| Start::Failed(format!("{}: {e}", path.display())))?;
        let pki = pki::generate(&path).map_err(|e| Start::Failed(format!("certificates: {e}")))?;
        let etcd_data = path.join("etcd");
        create_private_dir(&etcd_data).map_err(Start::Failed)?;

        let [etcd_port, peer_port, port] = free_ports().map_err(Start::Failed)?;
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let peer_url = format!("http://127.0.0.1:{peer_port}");
        let mut etcd = Daemon::spawn(
            "etcd",
            &binaries.etcd,
            &strings(&[
                "--name",
                "syncguard",
                "--data-dir",
                &etcd_data.display().to_string(),
                "--listen-client-urls",
                &etcd_url,
                "--advertise-client-urls",
                &etcd_url,
                "--listen-peer-urls",
                &peer_url,
                "--initial-advertise-peer-urls",
                &peer_url,
                "--initial-cluster",
                &format!("syncguard={peer_url}"),
                // The data is thrown away: fsync only slows every write down.
                "--unsafe-no-fsync",
                "--log-level",
                "warn",
            ]),
            path.join("etcd.log"),
        )
        .map_err(Start::Failed)?;
        wait_for_port(&mut etcd, etcd_port, started).await?;

        let mut apiserver = Daemon::spawn(
            "kube-apiserver",
            &binaries.apiserver,
            &strings(&[
                "--etcd-servers",
                &etcd_url,
                "--bind-address",
                "127.0.0.1",
                "--advertise-address",
                "127.0.0.1",
                "--secure-port",
                &port.to_string(),
                "--tls-cert-file",
                &pki.serving_cert_file.display().to_string(),
                "--tls-private-key-file",
                &pki.serving_key_file.display().to_string(),
                "--client-ca-file",
                &pki.ca_file.display().to_string(),
                "--service-account-key-file",
                &pki.service_account_public_file.display().to_string(),
                "--service-account-signing-key-file",
                &pki.service_account_key_file.display().to_string(),
                "--service-account-issuer",
                "https://kubernetes.default.svc",
                // Room for the cluster IPs a large chart's Services are allocated.
                "--service-cluster-ip-range",
                "10.96.0.0/16",
                "--service-node-port-range",
                "30000-32767",
                // One identity, and nothing to protect: every request is allowed.
                "--authorization-mode",
                "AlwaysAllow",
                // No controller-manager creates the `default` ServiceAccount of a namespace,
                // so the plugin that requires it would refuse every Pod.
                "--disable-admission-plugins",
                "ServiceAccount",
                "--endpoint-reconciler-type",
                "none",
                "--allow-privileged=true",
                "--profiling=false",
                "--cert-dir",
                &path.join("apiserver-certs").display().to_string(),
            ]),
            path.join("kube-apiserver.log"),
        )
        .map_err(Start::Failed)?;

        let client = client(port, &pki).await.map_err(Start::Failed)?;
        wait_for_ready(&mut apiserver, &client, started).await?;
        Ok(Self {
            apiserver,
            etcd,
            client,
            version: binaries.version.clone(),
            ready_after: started.elapsed(),
            dir,
        })
    }

    /// A client with every permission on this control plane.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The Kubernetes version of the API server, e.g. `v1.34.4`.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// How long the start took, from nothing to a ready API server.
    pub fn ready_after(&self) -> Duration {
        self.ready_after
    }

    /// The temporary directory (logs, certificates, etcd's data).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The process ids of the API server and etcd.
    pub fn pids(&self) -> [u32; 2] {
        [self.apiserver.pid(), self.etcd.pid()]
    }
}

/// Why a start failed: a taken port is worth another attempt with other ports.
enum Start {
    PortTaken(String),
    Failed(String),
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_string()).collect()
}

fn create_private_dir(path: &Path) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        // etcd warns about a data directory others may read.
        builder.mode(0o700);
    }
    builder
        .create(path)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Three ports nothing listens on: the kernel picks them, then they are released for the
/// children to bind. Another process may take one in between; the start then tries again.
fn free_ports() -> Result<[u16; 3], String> {
    let bind = || {
        TcpListener::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0))
            .and_then(|l| Ok((l.local_addr()?.port(), l)))
            .map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))
    };
    // All three are held at once, so they differ.
    let (a, _la) = bind()?;
    let (b, _lb) = bind()?;
    let (c, _lc) = bind()?;
    Ok([a, b, c])
}

/// Why a child is not ready: it exited (a taken port, or something else in its log), or it
/// took longer than [`READY_TIMEOUT`].
fn not_ready(daemon: &mut Daemon, what: &str) -> Start {
    let tail = daemon.log_tail(15);
    let why = match daemon.exited() {
        Some(status) => format!("{what} exited during start-up ({status})"),
        None => format!("{what} was not ready after {READY_TIMEOUT:?}"),
    };
    let message = format!("{why}; the end of its log:\n{tail}");
    if daemon.port_was_taken() {
        Start::PortTaken(message)
    } else {
        Start::Failed(message)
    }
}

async fn wait_for_port(daemon: &mut Daemon, port: u16, started: Instant) -> Result<(), Start> {
    loop {
        if TcpStream::connect_timeout(
            &SocketAddrV4::new(Ipv4Addr::LOCALHOST, port).into(),
            Duration::from_millis(200),
        )
        .is_ok()
        {
            return Ok(());
        }
        if daemon.exited().is_some() || started.elapsed() > READY_TIMEOUT {
            return Err(not_ready(daemon, "etcd"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_for_ready(
    daemon: &mut Daemon,
    client: &kube::Client,
    started: Instant,
) -> Result<(), Start> {
    loop {
        let request = http::Request::get("/readyz").body(Vec::new());
        if let Ok(request) = request
            && let Ok(text) = client.request_text(request).await
            && text.trim() == "ok"
        {
            return Ok(());
        }
        if daemon.exited().is_some() || started.elapsed() > READY_TIMEOUT {
            return Err(not_ready(daemon, "kube-apiserver"));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A client of the API server on `port`, authenticated by the admin client certificate.
async fn client(port: u16, pki: &pki::Pki) -> Result<kube::Client, String> {
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: ephemeral\n  cluster:\n    server: https://127.0.0.1:{port}\n    certificate-authority-data: {}\nusers:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\ncontexts:\n- name: ephemeral\n  context: {{cluster: ephemeral, user: admin}}\ncurrent-context: ephemeral\n",
        BASE64.encode(&pki.ca_pem),
        BASE64.encode(&pki.client_cert_pem),
        BASE64.encode(&pki.client_key_pem),
    );
    let parsed = kube::config::Kubeconfig::from_yaml(&kubeconfig)
        .map_err(|e| format!("the control plane's kubeconfig: {e}"))?;
    let mut config =
        kube::Config::from_custom_kubeconfig(parsed, &kube::config::KubeConfigOptions::default())
            .await
            .map_err(|e| format!("the control plane's kubeconfig: {e}"))?;
    config.connect_timeout = Some(Duration::from_secs(5));
    config.read_timeout = Some(Duration::from_secs(60));
    crate::kube_client::with_user_agent(config, "check")
        .map_err(|e| format!("a client for the control plane: {e}"))
}

/// Removes the directories of control planes whose syncguard is gone (killed before it could
/// clean up). A directory without an owner file, or of a live owner, is left alone.
fn remove_leftovers(tmp: &Path) {
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with(DIR_PREFIX) {
            continue;
        }
        let owner = std::fs::read_to_string(entry.path().join("owner.pid"))
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if let Some(pid) = owner
            && !daemon::alive(pid)
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Resolves on SIGINT or SIGTERM, naming it: a caller selects on it beside its session, so
/// that the session (and the control plane it holds) is dropped, and so stopped and removed,
/// before the process ends.
pub async fn interrupted() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match (
            signal(SignalKind::interrupt()),
            signal(SignalKind::terminate()),
        ) {
            (Ok(mut int), Ok(mut term)) => tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            },
            _ => std::future::pending().await,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
        "Ctrl-C"
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn leftovers_of_dead_owners_are_removed_and_others_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dead = tmp.path().join(format!("{DIR_PREFIX}dead"));
        let live = tmp.path().join(format!("{DIR_PREFIX}live"));
        let unowned = tmp.path().join(format!("{DIR_PREFIX}unowned"));
        let other = tmp.path().join("something-else");
        for d in [&dead, &live, &unowned, &other] {
            std::fs::create_dir(d).unwrap();
        }
        // A pid no process has: above the kernel's limit.
        std::fs::write(dead.join("owner.pid"), "4194305").unwrap();
        std::fs::write(live.join("owner.pid"), std::process::id().to_string()).unwrap();
        std::fs::write(other.join("owner.pid"), "4194305").unwrap();
        remove_leftovers(tmp.path());
        assert!(!dead.exists());
        assert!(live.exists() && unowned.exists() && other.exists());
    }

    #[test]
    fn free_ports_are_three_distinct_ports() {
        let [a, b, c] = free_ports().unwrap();
        assert!(a != b && b != c && a != c);
    }
}
