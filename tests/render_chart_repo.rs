//! `syncguard render` and `review` on Helm charts from chart repositories and OCI registries,
//! with real parts only: charts packaged by the real `helm package` and indexed by `helm repo
//! index`, served by an HTTP server of this test on loopback (with basic auth), and pushed with
//! `helm push` to the real CNCF distribution registry (`scripts/install-registry.sh`) started on
//! a loopback port with htpasswd (bcrypt) auth. Each test has its own chart cache in a temp dir.
//!
//! The review's Markdown is held to `tests/fixtures/golden/review-chart-bump.md`; after an
//! intended change, `UPDATE_GOLDEN=1 cargo test --test render_chart_repo` and review the diff.

mod render_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;

use render_support::{git, golden, tools};

const USER: &str = "chart-reader";
const PASSWORD: &str = "chart-reader-pw";
/// `PASSWORD` hashed with bcrypt (cost 4), for the registry's htpasswd file.
const PASSWORD_BCRYPT: &str = "$2b$04$7MsJ4NISo.1IaHe5Izzd6.GoH70sAr/7l7jEUEUPLv2G7yJelu2BS";

/// The helm the render tests use (`None`: skipped, as `render_support::tools` decides).
fn helm_bin() -> Option<PathBuf> {
    tools().map(|(helm, _)| helm)
}

fn run_helm(helm: &Path, args: &[&str], env: &[(&str, &Path)], stdin: Option<&str>) -> Output {
    let home = tempfile::tempdir().expect("temp dir");
    let mut c = Command::new(helm);
    c.args(args)
        .env("HELM_CONFIG_HOME", home.path().join("config"))
        .env("HELM_CACHE_HOME", home.path().join("cache"))
        .env("HELM_DATA_HOME", home.path().join("data"))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        c.env(k, v);
    }
    let mut child = c.spawn().expect("helm runs");
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(input.as_bytes())
            .expect("write stdin");
    }
    let out = child.wait_with_output().expect("helm waits");
    assert!(
        out.status.success(),
        "helm {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Version `version` of chart `web`, packaged into `out` with the real `helm package`. Version
/// 1.x: a Deployment (image nginx:1.25) and a Service; 2.x: the image nginx:1.27 and a
/// ConfigMap more.
fn package(helm: &Path, out: &Path, version: &str) -> PathBuf {
    let src = tempfile::tempdir().expect("temp dir");
    let chart = src.path().join("web");
    let write = |rel: &str, text: &str| {
        let p = chart.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    let major2 = version.starts_with('2');
    write(
        "Chart.yaml",
        &format!("apiVersion: v2\nname: web\nversion: {version}\n"),
    );
    write(
        "values.yaml",
        &format!(
            "image: nginx:{}\nreplicas: 1\nport: 80\n",
            if major2 { "1.27" } else { "1.25" }
        ),
    );
    write(
        "templates/deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n  \
         labels: {chart: '{{ .Chart.Name }}-{{ .Chart.Version }}'}\nspec:\n  \
         replicas: {{ .Values.replicas }}\n  selector: {matchLabels: {app: web}}\n  template:\n    \
         metadata: {labels: {app: web}}\n    spec:\n      containers:\n      \
         - {name: web, image: '{{ .Values.image }}', ports: [{containerPort: {{ .Values.port }}}]}\n",
    );
    write(
        "templates/service.yaml",
        "apiVersion: v1\nkind: Service\nmetadata: {name: '{{ .Release.Name }}', namespace: '{{ .Release.Namespace }}'}\n\
         spec: {selector: {app: web}, ports: [{port: {{ .Values.port }}}]}\n",
    );
    if major2 {
        write(
            "templates/config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}-config'}\n\
             data: {mode: fast}\n",
        );
    }
    std::fs::create_dir_all(out).expect("mkdir");
    let dest = out.to_string_lossy().into_owned();
    run_helm(
        helm,
        &["package", &chart.to_string_lossy(), "-d", &dest],
        &[],
        None,
    );
    out.join(format!("web-{version}.tgz"))
}

/// A chart repository: the files of a directory over HTTP on loopback, with basic auth when
/// `auth` is set; counts the requests it answers.
struct ChartServer {
    url: String,
    requests: Arc<AtomicUsize>,
    _dir: tempfile::TempDir,
}

impl ChartServer {
    /// Serves `versions` of chart `web`, indexed by the real `helm repo index`.
    fn start(helm: &Path, versions: &[&str], auth: bool) -> ChartServer {
        let dir = tempfile::tempdir().expect("temp dir");
        for v in versions {
            package(helm, dir.path(), v);
        }
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!(
            "http://127.0.0.1:{}",
            listener.local_addr().expect("addr").port()
        );
        run_helm(
            helm,
            &[
                "repo",
                "index",
                &dir.path().to_string_lossy(),
                "--url",
                &url,
            ],
            &[],
            None,
        );
        let requests = Arc::new(AtomicUsize::new(0));
        let root = dir.path().to_path_buf();
        let counter = Arc::clone(&requests);
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"))
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                counter.fetch_add(1, Ordering::SeqCst);
                let wanted = auth.then_some(expected.as_str());
                // A broken connection only ends that request.
                let _ = answer(stream, &root, wanted);
            }
        });
        ChartServer {
            url,
            requests,
            _dir: dir,
        }
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// One HTTP/1.1 request: the file below `root`, 401 without the `Authorization` wanted.
fn answer(stream: TcpStream, root: &Path, wanted: Option<&str>) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
    let mut authorization = None;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("authorization")
        {
            authorization = Some(value.trim().to_string());
        }
    }
    let mut stream = stream;
    let respond = |stream: &mut TcpStream, status: &str, extra: &str, body: &[u8]| {
        write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
            body.len()
        )
        .and_then(|()| stream.write_all(body))
    };
    if let Some(w) = wanted
        && authorization.as_deref() != Some(w)
    {
        return respond(
            &mut stream,
            "401 Unauthorized",
            "WWW-Authenticate: Basic realm=\"charts\"\r\n",
            b"unauthorized\n",
        );
    }
    let rel = path.trim_start_matches('/');
    match std::fs::read(root.join(rel)) {
        Ok(body) if !rel.contains("..") && !rel.is_empty() => {
            respond(&mut stream, "200 OK", "", &body)
        }
        _ => respond(&mut stream, "404 Not Found", "", b"not found\n"),
    }
}

/// An Application of chart `web` from `repo_url` at `revision`, with a helm block.
fn chart_app(name: &str, repo_url: &str, revision: &str, helm: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: argocd}}\n\
         spec:\n  project: default\n  destination: {{server: 'https://kubernetes.default.svc', namespace: shop}}\n  \
         source:\n    repoURL: '{repo_url}'\n    chart: web\n    targetRevision: '{revision}'\n    helm: {helm}\n"
    )
}

/// `syncguard render apps.yaml` in `dir`, with `cache` as the chart cache and `env` set: the
/// exit code, stdout without whitespace, stderr.
fn render(
    dir: &Path,
    helm: &Path,
    cache: &Path,
    app: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (i32, String, String) {
    std::fs::write(dir.join("apps.yaml"), app).expect("write");
    let mut c = Command::new(env!("CARGO_BIN_EXE_syncguard"));
    c.current_dir(dir)
        .args(["render", "apps.yaml", "--helm"])
        .arg(helm)
        .arg("--chart-cache")
        .arg(cache)
        .args(extra)
        // Only the credentials this test gives.
        .env("HOME", dir)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("HELM_CONFIG_HOME")
        .env_remove("HELM_REPOSITORY_CONFIG")
        .env_remove("HELM_REGISTRY_CONFIG")
        .env_remove("DOCKER_CONFIG");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("run syncguard");
    // The objects are pretty-printed JSON documents: compared without whitespace.
    let objects: String = String::from_utf8_lossy(&out.stdout)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    (
        out.status.code().unwrap_or(-1),
        objects,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn creds_env(url: &str) -> Vec<(&'static str, String)> {
    vec![
        ("SYNCGUARD_CHART_REPO_LOCAL_URL", url.to_string()),
        ("SYNCGUARD_CHART_REPO_LOCAL_USERNAME", USER.into()),
        ("SYNCGUARD_CHART_REPO_LOCAL_PASSWORD", PASSWORD.into()),
    ]
}

fn pairs<'a>(v: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    v.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn a_chart_repository_with_basic_auth_is_pulled_once_and_templated_as_argo_cd_does() {
    let Some(helm) = helm_bin() else { return };
    let server = ChartServer::start(&helm, &["1.0.0", "1.2.0", "2.0.0"], true);
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = tempfile::tempdir().expect("temp dir");
    let app = chart_app(
        "web",
        &server.url,
        "1.0.0",
        "{releaseName: shop-web, valuesObject: {replicas: 3}, parameters: [{name: image, value: 'nginx:1.25.5'}]}",
    );
    let env = creds_env(&server.url);
    let (code, out, err) = render(dir.path(), &helm, cache.path(), &app, &[], &pairs(&env));
    assert_eq!(code, 0, "{err}\n{out}");
    // The helm block applies: release name, values object, parameters, destination namespace.
    assert!(out.contains("\"name\":\"shop-web\""), "{out}");
    assert!(out.contains("\"replicas\":3"), "{out}");
    assert!(out.contains("nginx:1.25.5"), "{out}");
    assert!(out.contains("\"chart\":\"web-1.0.0\""), "{out}");
    assert!(out.contains("\"namespace\":\"shop\""), "{out}");
    assert!(out.contains("web:apps/Deployment:shop/shop-web"), "{out}");
    assert!(!err.contains(PASSWORD), "{err}");
    // The second render reads the cache: the repository is not asked again.
    let asked = server.requests();
    let (code, again, err) = render(dir.path(), &helm, cache.path(), &app, &[], &pairs(&env));
    assert_eq!(code, 0, "{err}");
    assert_eq!(again, out);
    assert_eq!(server.requests(), asked, "a cached chart was fetched again");
    // Nothing was written beside the Application file.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .expect("read")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["apps.yaml"]);

    // A semver constraint picks the highest version that satisfies it, as Argo CD does.
    let app = chart_app("web", &server.url, "^1.0", "{}");
    let (code, out, err) = render(dir.path(), &helm, cache.path(), &app, &[], &pairs(&env));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"chart\":\"web-1.2.0\""), "{out}");

    // Credentials from Helm's own repositories.yaml (helm repo add --username) work too.
    let config = dir.path().join("repositories.yaml");
    std::fs::write(
        &config,
        format!(
            "apiVersion: ''\nrepositories:\n- {{name: local, url: '{}', username: {USER}, password: {PASSWORD}}}\n",
            server.url
        ),
    )
    .expect("write");
    let fresh = tempfile::tempdir().expect("temp dir");
    let app = chart_app("web", &server.url, "2.0.0", "{}");
    let (code, out, err) = render(
        dir.path(),
        &helm,
        fresh.path(),
        &app,
        &[],
        &[("HELM_REPOSITORY_CONFIG", &config.to_string_lossy())],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("\"mode\":\"fast\""), "{out}");
}

/// A multi-source Application: the chart of a chart repository with a value file of the git
/// checkout (`$values/...`), as Argo CD's `$ref` value files work.
#[test]
fn a_pulled_chart_takes_value_files_from_a_ref_source() {
    let Some(helm) = helm_bin() else { return };
    let server = ChartServer::start(&helm, &["1.0.0"], false);
    let repo = tempfile::tempdir().expect("temp dir");
    let root = repo.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", render_support::REPO_URL]);
    std::fs::create_dir_all(root.join("envs")).expect("mkdir");
    std::fs::write(root.join("envs/prod.yaml"), "replicas: 5\nport: 8080\n").expect("write");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "values"]);
    let app = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: web, namespace: argocd}}\n\
         spec:\n  destination: {{namespace: shop}}\n  sources:\n  \
         - {{repoURL: '{}', chart: web, targetRevision: 1.0.0, helm: {{valueFiles: [$values/envs/prod.yaml]}}}}\n  \
         - {{repoURL: '{}', targetRevision: main, ref: values}}\n",
        server.url,
        render_support::REPO_URL
    );
    let cache = tempfile::tempdir().expect("temp dir");
    let (code, out, err) = render(root, &helm, cache.path(), &app, &[], &[]);
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("\"replicas\":5"), "{out}");
    assert!(out.contains("\"containerPort\":8080"), "{out}");
}

#[test]
fn refused_credentials_and_missing_versions_are_errors_that_say_what_to_fix() {
    let Some(helm) = helm_bin() else { return };
    let server = ChartServer::start(&helm, &["1.0.0"], true);
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = tempfile::tempdir().expect("temp dir");
    let app = chart_app("web", &server.url, "1.0.0", "{}");
    let (code, out, err) = render(dir.path(), &helm, cache.path(), &app, &[], &[]);
    assert_eq!(code, 2, "{err}\n{out}");
    assert!(
        err.contains("chart repository refused the credentials"),
        "{err}"
    );
    assert!(
        err.contains(&server.url) && err.contains("chart web version \"1.0.0\""),
        "{err}"
    );
    assert!(err.contains("SYNCGUARD_CHART_REPO_<ID>_URL"), "{err}");
    assert!(out.trim().is_empty(), "{out}");
    // A wrong password is refused the same way, and never printed.
    let mut env = creds_env(&server.url);
    env[2].1 = "wrong-password".into();
    let (code, _, err) = render(dir.path(), &helm, cache.path(), &app, &[], &pairs(&env));
    assert_eq!(code, 2);
    assert!(err.contains("refused the credentials"), "{err}");
    assert!(err.contains("SYNCGUARD_CHART_REPO_LOCAL_URL"), "{err}");
    assert!(!err.contains("wrong-password"), "{err}");
    // A version the repository does not have.
    let env = creds_env(&server.url);
    let app = chart_app("web", &server.url, "9.9.9", "{}");
    let (code, _, err) = render(dir.path(), &helm, cache.path(), &app, &[], &pairs(&env));
    assert_eq!(code, 2);
    assert!(err.contains("chart version not found"), "{err}");
    assert!(err.contains("9.9.9"), "{err}");
    // A repository nobody listens on.
    let closed = closed_port_url();
    let app = chart_app("web", &closed, "1.0.0", "{}");
    let (code, _, err) = render(dir.path(), &helm, cache.path(), &app, &[], &[]);
    assert_eq!(code, 2);
    assert!(err.contains("chart repository unreachable"), "{err}");
    assert!(err.contains(&closed), "{err}");
}

/// `http://127.0.0.1:PORT` where nothing listens.
fn closed_port_url() -> String {
    let port = free_port();
    format!("http://127.0.0.1:{port}")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// The distribution registry of `scripts/install-registry.sh`: `SYNCGUARD_REGISTRY`, else
/// `.tools/bin/registry`. `None` (and a note) when missing, except under CI, where it fails unless
/// `.ci/run` found it cannot be built here (`SYNCGUARD_REGISTRY_OPTIONAL`).
fn registry_bin() -> Option<PathBuf> {
    let path = std::env::var_os("SYNCGUARD_REGISTRY")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/registry"));
    if path.is_file() {
        return Some(path);
    }
    let why = format!(
        "{} is missing: run scripts/install-registry.sh",
        path.display()
    );
    assert!(
        std::env::var_os("CI").is_none()
            || std::env::var_os("SYNCGUARD_REGISTRY_OPTIONAL").is_some(),
        "{why}"
    );
    eprintln!("skipped: {why}");
    None
}

/// A running registry, killed on drop.
struct Registry {
    host: String,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Registry {
    fn start(bin: &Path) -> Registry {
        let dir = tempfile::tempdir().expect("temp dir");
        let htpasswd = dir.path().join("htpasswd");
        std::fs::write(&htpasswd, format!("{USER}:{PASSWORD_BCRYPT}\n")).expect("write");
        let port = free_port();
        let config = dir.path().join("config.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog: {{level: error}}\nstorage: {{filesystem: {{rootdirectory: '{}'}}}}\n\
                 http: {{addr: '127.0.0.1:{port}'}}\nauth: {{htpasswd: {{realm: charts, path: '{}'}}}}\n",
                dir.path().join("storage").display(),
                htpasswd.display()
            ),
        )
        .expect("write");
        let child = Command::new(bin)
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("registry starts");
        let mut registry = Registry {
            host: format!("localhost:{port}"),
            child,
            _dir: dir,
        };
        // Ready when it answers /v2/ (401: auth is on).
        for _ in 0..200 {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                let _ = write!(s, "GET /v2/ HTTP/1.0\r\n\r\n");
                let mut answer = String::new();
                let _ = s.read_to_string(&mut answer);
                if answer.starts_with("HTTP/1.") {
                    return registry;
                }
            }
            if let Ok(Some(status)) = registry.child.try_wait() {
                let mut err = String::new();
                if let Some(mut e) = registry.child.stderr.take() {
                    let _ = e.read_to_string(&mut err);
                }
                panic!("the registry exited ({status}): {err}");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("the registry did not answer on {}", registry.host);
    }
}

#[test]
fn an_oci_registry_with_htpasswd_auth_serves_charts_and_oci_sources() {
    let Some(helm) = helm_bin() else { return };
    let Some(bin) = registry_bin() else { return };
    let registry = Registry::start(&bin);
    let work = tempfile::tempdir().expect("temp dir");
    let login = work.path().join("registry.json");
    run_helm(
        &helm,
        &[
            "registry",
            "login",
            &registry.host,
            "--username",
            USER,
            "--password-stdin",
            "--plain-http",
        ],
        &[("HELM_REGISTRY_CONFIG", &login)],
        Some(PASSWORD),
    );
    for v in ["1.0.0", "2.0.0"] {
        let tgz = package(&helm, &work.path().join("packages"), v);
        run_helm(
            &helm,
            &[
                "push",
                &tgz.to_string_lossy(),
                &format!("oci://{}/charts", registry.host),
                "--plain-http",
            ],
            &[("HELM_REGISTRY_CONFIG", &login)],
            None,
        );
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = tempfile::tempdir().expect("temp dir");
    let plain = ["--oci-plain-http", registry.host.as_str()];
    let login_env = login.to_string_lossy().into_owned();
    // A scheme-less registry reference with `chart`: helm pull oci://<repoURL>/<chart>, with
    // the login of `helm registry login`.
    let app = chart_app(
        "web",
        &format!("{}/charts", registry.host),
        "1.0.0",
        "{valuesObject: {replicas: 2}}",
    );
    let (code, out, err) = render(
        dir.path(),
        &helm,
        cache.path(),
        &app,
        &plain,
        &[("HELM_REGISTRY_CONFIG", &login_env)],
    );
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("\"chart\":\"web-1.0.0\""), "{out}");
    assert!(out.contains("\"replicas\":2"), "{out}");
    // An `oci://` source: the artifact is the source's root (path `.`); credentials from the CI
    // variables this time (logged in through stdin, never on a command line).
    let oci_source = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: oci, namespace: argocd}}\n\
         spec:\n  destination: {{namespace: shop}}\n  source: {{repoURL: 'oci://{}/charts/web', path: ., targetRevision: 2.0.0}}\n",
        registry.host
    );
    let env = creds_env(&format!("oci://{}", registry.host));
    let (code, out, err) = render(
        dir.path(),
        &helm,
        cache.path(),
        &oci_source,
        &plain,
        &pairs(&env),
    );
    assert_eq!(code, 0, "{err}\n{out}");
    assert!(out.contains("\"chart\":\"web-2.0.0\""), "{out}");
    assert!(out.contains("oci:/ConfigMap:shop/oci-config"), "{out}");
    // Without a login the registry refuses; a tag that is not there is not found.
    let fresh = tempfile::tempdir().expect("temp dir");
    let (code, _, err) = render(dir.path(), &helm, fresh.path(), &app, &plain, &[]);
    assert_eq!(code, 2);
    assert!(
        err.contains("chart repository refused the credentials"),
        "{err}"
    );
    assert!(err.contains("helm registry login"), "{err}");
    let missing = chart_app("web", &format!("{}/charts", registry.host), "3.0.0", "{}");
    let (code, _, err) = render(
        dir.path(),
        &helm,
        fresh.path(),
        &missing,
        &plain,
        &[("HELM_REGISTRY_CONFIG", &login_env)],
    );
    assert_eq!(code, 2);
    assert!(err.contains("chart version not found"), "{err}");
}

/// `review` of a change that bumps the chart from 1.0.0 to 2.0.0: the new ConfigMap, the new
/// image, in the manifest and plan diffs. Golden `review-chart-bump.md`.
#[test]
fn a_chart_version_bump_is_reviewed_with_its_manifest_and_plan_diff() {
    let Some(helm) = helm_bin() else { return };
    let server = ChartServer::start(&helm, &["1.0.0", "2.0.0"], false);
    let repo = tempfile::tempdir().expect("temp dir");
    let root = repo.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", render_support::REPO_URL]);
    let write_app = |revision: &str| {
        std::fs::create_dir_all(root.join("apps")).expect("mkdir");
        std::fs::write(
            root.join("apps/web.yaml"),
            chart_app("web", &server.url, revision, "{}"),
        )
        .expect("write");
    };
    write_app("1.0.0");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "web 1.0.0"]);
    let base = git(root, &["rev-parse", "HEAD"]);
    write_app("2.0.0");
    git(root, &["commit", "-q", "-am", "web 2.0.0"]);
    let cache = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(root)
        .args([
            "review", "apps", "--base", &base, "--format", "markdown", "--helm",
        ])
        .arg(&helm)
        .arg("--chart-cache")
        .arg(cache.path())
        .output()
        .expect("run syncguard");
    // The server's port is in the Application, so in the commits: both stand for themselves.
    let head = git(root, &["rev-parse", "HEAD"]);
    let md = String::from_utf8_lossy(&out.stdout)
        .replace(&server.url, "http://CHARTS")
        .replace(&base[..7], "BASE")
        .replace(&head[..7], "HEAD");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}\n{md}");
    assert!(md.contains("web-config"), "{md}");
    assert!(md.contains("nginx:1.27"), "{md}");
    golden("review-chart-bump.md", &md);
}
