//! `syncguard reconcile` stops on SIGTERM / SIGINT in bounded time, whatever the API server
//! does (issue 23): the real binary, a kubeconfig in a temp dir, and an API server that refuses
//! connections, accepts them and never answers, or answers the Lease and then goes silent.

#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long the binary may take to start (a debug build unpacks and compiles the built-in
/// policies) and, after the signal, to exit. Generous: this proves it ends at all.
const START_BOUND: Duration = Duration::from_secs(60);
const EXIT_BOUND: Duration = Duration::from_secs(30);

const NAMESPACE: &str = "syncguard";
const LEASE: &str = "syncguard-reconciler";
const IDENTITY: &str = "reconciler-0";

/// stderr of the child, line by line, as it arrives.
#[derive(Clone, Default)]
struct Logs(Arc<(Mutex<Vec<String>>, Condvar)>);

impl Logs {
    fn follow(&self, stderr: impl Read + Send + 'static) {
        let logs = self.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                let (lines, changed) = &*logs.0;
                lines.lock().unwrap().push(line);
                changed.notify_all();
            }
        });
    }

    /// The JSON log records so far (other lines, e.g. a panic, are kept as their text).
    fn records(&self) -> Vec<Value> {
        self.0
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| Value::String(l.clone())))
            .collect()
    }

    fn text(&self) -> String {
        self.0.0.lock().unwrap().join("\n")
    }

    /// The first record whose message contains `needle`.
    fn find(&self, needle: &str) -> Option<Value> {
        self.records()
            .into_iter()
            .find(|r| r["message"].as_str().is_some_and(|m| m.contains(needle)))
    }

    /// Waits until a record's message contains `needle`.
    fn wait_for(&self, needle: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        let (lines, changed) = &*self.0;
        let mut guard = lines.lock().unwrap();
        loop {
            drop(guard);
            if let Some(record) = self.find(needle) {
                return record;
            }
            guard = lines.lock().unwrap();
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "no log line containing {needle:?} within {within:?}:\n{}",
                self.text()
            );
            guard = changed.wait_timeout(guard, left).unwrap().0;
        }
    }
}

/// A running `syncguard reconcile`; killed if the test fails before it exits.
struct Reconciler {
    child: Child,
    logs: Logs,
    _dir: tempfile::TempDir,
}

impl Reconciler {
    /// Starts `syncguard reconcile` against `server` (an `http://` URL) and waits until it
    /// serves its probes (the signal handlers are installed before that).
    fn start(server: &str, shutdown_timeout: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        write_kubeconfig(&kubeconfig, server);
        let mut command = Command::new(env!("CARGO_BIN_EXE_syncguard"));
        command
            .args([
                "reconcile",
                "--log-format=json",
                "--probe-listen=127.0.0.1:0",
                "--shutdown-timeout",
                shutdown_timeout,
            ])
            .env("KUBECONFIG", &kubeconfig)
            .env("HOME", dir.path())
            .env("SYNCGUARD_LOG", "info")
            .env("SYNCGUARD_LEASE_NAMESPACE", NAMESPACE)
            .env("SYNCGUARD_IDENTITY", IDENTITY)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        // Nothing from the machine running the tests: no in-cluster config, no proxy, no
        // other syncguard settings.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            let upper = key.to_ascii_uppercase();
            if (key.starts_with("SYNCGUARD_") && !command_sets(&key))
                || key.starts_with("KUBERNETES_")
                || key == "POD_NAMESPACE"
                || key == "POD_NAME"
                || upper.ends_with("_PROXY")
                || key == "RUST_LOG"
            {
                command.env_remove(&key);
            }
        }
        let mut child = command.spawn().unwrap();
        let logs = Logs::default();
        logs.follow(child.stderr.take().unwrap());
        let mut r = Reconciler {
            child,
            logs,
            _dir: dir,
        };
        r.wait_for("probes and metrics listening", START_BOUND);
        r
    }

    fn wait_for(&mut self, needle: &str, within: Duration) -> Value {
        if let Ok(Some(status)) = self.child.try_wait() {
            panic!("exited early with {status}:\n{}", self.logs.text());
        }
        self.logs.wait_for(needle, within)
    }

    fn signal(&self, signal: libc::c_int) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: kill(2) on our own child's pid; no memory is involved.
        assert_eq!(
            unsafe { libc::kill(pid, signal) },
            0,
            "kill({pid}, {signal})"
        );
    }

    /// Waits for the exit, at most [`EXIT_BOUND`].
    fn exit(&mut self) -> ExitStatus {
        let deadline = Instant::now() + EXIT_BOUND;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader thread take the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running {EXIT_BOUND:?} after the signal:\n{}",
                self.logs.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Reconciler {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The variables [`Reconciler::start`] sets itself.
fn command_sets(key: &str) -> bool {
    matches!(
        key,
        "SYNCGUARD_LOG" | "SYNCGUARD_LEASE_NAMESPACE" | "SYNCGUARD_IDENTITY"
    )
}

fn write_kubeconfig(path: &Path, server: &str) {
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: test\n  cluster:\n    server: {server}\n\
         contexts:\n- name: test\n  context:\n    cluster: test\n    user: test\n    namespace: default\n\
         current-context: test\nusers:\n- name: test\n  user:\n    token: not-a-real-token\n"
    );
    std::fs::write(path, text).unwrap();
}

/// A loopback address where nothing listens: connections are refused.
fn refused() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

/// A fake API server on loopback. It answers the leader Lease (GET, POST, PATCH with `null`
/// deleting, as a merge) until [`FakeApi::go_silent`]; every other request, and every request
/// after that, is read and never answered (the connection stays open), like an API server
/// behind a partition. `lease: false` answers nothing at all (a black hole).
struct FakeApi {
    url: String,
    silent: Arc<AtomicBool>,
    lease: Arc<Mutex<Option<Value>>>,
}

impl FakeApi {
    fn start(answer_lease: bool) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let silent = Arc::new(AtomicBool::new(!answer_lease));
        let lease = Arc::new(Mutex::new(None));
        let (s, l) = (silent.clone(), lease.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { break };
                let (s, l) = (s.clone(), l.clone());
                std::thread::spawn(move || serve_connection(stream, &s, &l));
            }
        });
        FakeApi { url, silent, lease }
    }

    fn go_silent(&self) {
        self.silent.store(true, Ordering::SeqCst);
    }

    fn holder(&self) -> Option<String> {
        self.lease
            .lock()
            .unwrap()
            .as_ref()
            .and_then(|l| l.pointer("/spec/holderIdentity"))
            .and_then(Value::as_str)
            .map(str::to_string)
    }
}

fn serve_connection(stream: TcpStream, silent: &AtomicBool, lease: &Mutex<Option<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0usize;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or_default().to_string();
        let path = parts
            .next()
            .unwrap_or_default()
            .split('?')
            .next()
            .unwrap_or_default()
            .to_string();
        let answer = if silent.load(Ordering::SeqCst) {
            None
        } else {
            answer_lease(&method, &path, &body, lease)
        };
        let Some((status, reply)) = answer else {
            // No answer, ever: block until the client goes away.
            let mut sink = [0u8; 1024];
            while matches!(reader.read(&mut sink), Ok(n) if n > 0) {}
            return;
        };
        let reply = reply.to_string();
        let head = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
            reply.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(reply.as_bytes()).is_err()
        {
            return;
        }
    }
}

/// The Lease endpoint, as kube-lease-manager uses it.
fn answer_lease(
    method: &str,
    path: &str,
    body: &[u8],
    lease: &Mutex<Option<Value>>,
) -> Option<(&'static str, Value)> {
    let collection = format!("/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases");
    let item = format!("{collection}/{LEASE}");
    let mut lease = lease.lock().unwrap();
    let not_found = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
        "reason": "NotFound", "code": 404, "message": "leases not found"});
    match method {
        "GET" if path == item => Some(match lease.as_ref() {
            Some(l) => ("200 OK", l.clone()),
            None => ("404 Not Found", not_found),
        }),
        "POST" if path == collection => {
            let mut created: Value = serde_json::from_slice(body).ok()?;
            created["metadata"]["name"] = json!(LEASE);
            created["metadata"]["namespace"] = json!(NAMESPACE);
            created["metadata"]["resourceVersion"] = json!("1");
            *lease = Some(created.clone());
            Some(("201 Created", created))
        }
        "PATCH" if path == item => {
            let patch: Value = serde_json::from_slice(body).ok()?;
            let current = lease.get_or_insert_with(|| {
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                       "metadata": {"name": LEASE, "namespace": NAMESPACE}, "spec": {}})
            });
            merge(current, &patch);
            Some(("200 OK", current.clone()))
        }
        _ => None,
    }
}

/// JSON merge patch (RFC 7386): `null` deletes.
fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// The last record says the shutdown completed; `cut_short` is what its steps left undone.
fn assert_stopped(r: &Reconciler, status: ExitStatus, cut_short: &[&str]) {
    let logs = r.logs.text();
    assert_eq!(status.code(), Some(0), "{status}:\n{logs}");
    let complete = r
        .logs
        .find("shutdown complete")
        .unwrap_or_else(|| panic!("no \"shutdown complete\":\n{logs}"));
    let left = complete["cut_short"].as_str().unwrap_or("[]").to_string();
    for step in cut_short {
        assert!(left.contains(step), "{step:?} not in {left}:\n{logs}");
    }
    if cut_short.is_empty() {
        assert_eq!(complete["level"], "INFO", "{logs}");
    }
    let records = r.logs.records();
    let last = records.last().unwrap();
    assert_eq!(last["message"], "reconciler stopped", "{logs}");
}

#[test]
fn sigterm_with_a_refused_api_server_stops_cleanly() {
    let mut r = Reconciler::start(&refused(), "2s");
    // Let the Application watch and the Lease fail and back off at least once.
    r.wait_for("application watch", START_BOUND);
    r.signal(libc::SIGTERM);
    let status = r.exit();
    assert_stopped(&r, status, &[]);
    let requested = r.logs.find("shutdown requested").unwrap();
    assert_eq!(requested["signal"], "SIGTERM");
    // The cause of issue 23: the controller used to wait here forever.
    assert!(r.logs.find("never synced").is_some(), "{}", r.logs.text());
    assert!(
        r.logs.find("nothing to release").is_some(),
        "{}",
        r.logs.text()
    );
}

#[test]
fn sigint_with_an_api_server_that_never_answers_stops_cleanly() {
    let api = FakeApi::start(false);
    let mut r = Reconciler::start(&api.url, "2s");
    r.signal(libc::SIGINT);
    let status = r.exit();
    assert_stopped(&r, status, &[]);
    assert_eq!(
        r.logs.find("shutdown requested").unwrap()["signal"],
        "SIGINT"
    );
    assert!(r.logs.find("never synced").is_some(), "{}", r.logs.text());
}

#[test]
fn a_leader_that_can_reach_the_api_server_releases_the_lease() {
    let api = FakeApi::start(true);
    let mut r = Reconciler::start(&api.url, "10s");
    r.wait_for("leadership changed", START_BOUND);
    assert_eq!(api.holder().as_deref(), Some(IDENTITY));
    r.signal(libc::SIGTERM);
    let status = r.exit();
    assert_stopped(&r, status, &[]);
    assert!(
        r.logs.find("leader Lease released").is_some(),
        "{}",
        r.logs.text()
    );
    assert_eq!(api.holder(), None, "a standby can take the Lease at once");
}

#[test]
fn a_leader_whose_api_server_went_silent_gives_up_the_release_and_exits() {
    let api = FakeApi::start(true);
    let mut r = Reconciler::start(&api.url, "2s");
    r.wait_for("leadership changed", START_BOUND);
    api.go_silent();
    r.signal(libc::SIGTERM);
    let status = r.exit();
    assert_stopped(&r, status, &["Lease release"]);
    let unreleased = r
        .logs
        .find("leader Lease was not released")
        .unwrap_or_else(|| panic!("{}", r.logs.text()));
    assert_eq!(unreleased["level"], "WARN");
    assert_eq!(unreleased["expires_in"], "15s");
    assert_eq!(api.holder().as_deref(), Some(IDENTITY), "left to expire");
}

#[test]
fn a_second_signal_during_the_shutdown_exits_at_once() {
    let api = FakeApi::start(true);
    // A long timeout: without the second signal the Lease step alone would wait 6 s.
    let mut r = Reconciler::start(&api.url, "20s");
    r.wait_for("leadership changed", START_BOUND);
    api.go_silent();
    r.signal(libc::SIGTERM);
    r.wait_for("releasing the lease", EXIT_BOUND);
    r.signal(libc::SIGINT);
    let status = r.exit();
    assert_eq!(status.code(), Some(130), "{status}:\n{}", r.logs.text());
    let second = r
        .logs
        .find("second signal during shutdown")
        .unwrap_or_else(|| panic!("{}", r.logs.text()));
    assert_eq!(second["signal"], "SIGINT");
    assert!(
        r.logs.find("shutdown complete").is_none(),
        "{}",
        r.logs.text()
    );
}
