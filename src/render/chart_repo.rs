//! Charts that do not come from a checkout, pulled as Argo CD 3.6.1's repo-server pulls them
//! (`newHelmClientResolveRevision` in `reposerver/repository/repository.go`, `ExtractChart` in
//! `util/helm/client.go`, `Fetch`/`PullOCI` in `util/helm/cmd.go`), into a cache that a second
//! render reads without asking the repository again:
//!
//! - `repoURL: oci://...`: an OCI source (Argo CD checks this first, whatever `chart` says):
//!   the artifact `repoURL:targetRevision`, a Helm chart whose files become the source's root;
//! - `chart` with a `repoURL` that has no scheme (`registry.example.com/charts`, Argo CD's
//!   `IsHelmOciRepo`): `helm pull oci://<repoURL>/<chart> --version <targetRevision>`;
//! - `chart` with any other `repoURL`: a Helm chart repository, `helm pull <chart>` from it.
//!
//! `targetRevision` is a version (`1.2.3`, `v1.2`: pulled as written, as Argo CD does) or a semver
//! constraint (`^1.2`, `>=1.0 <2`: helm picks the highest version the repository lists that
//! satisfies it, as Argo CD's `MaxVersion` does; it is resolved on every render, because the
//! answer changes when the repository publishes).
//!
//! A failure is the Application's error and starts with one of [`UNREACHABLE`], [`REFUSED`],
//! [`NOT_FOUND`] or [`FAILED`], which `review` reads as the reason it could not judge it.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::RenderOptions;
use super::credentials::{self, Credentials, Environment};
use super::output::tail;
use super::source::Source;
use crate::process::{RunFailure, run_with_input};

/// The repository could not be reached (no such host, connection refused, timeout).
pub const UNREACHABLE: &str = "chart repository unreachable";
/// The repository answered 401/403: no credentials, or the wrong ones.
pub const REFUSED: &str = "chart repository refused the credentials";
/// The repository has no such chart, or no version of it matching `targetRevision`.
pub const NOT_FOUND: &str = "chart version not found";
/// Anything else that stopped the pull.
pub const FAILED: &str = "chart pull failed";

/// Where a source's chart comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A Helm chart repository (`index.yaml` at `url`).
    Repository { url: String, chart: String },
    /// A chart in an OCI registry: `reference` is `oci://host/path/chart`.
    OciChart { reference: String, chart: String },
    /// An OCI source (`repoURL: oci://...`): the artifact is the source's root.
    OciArtifact { reference: String },
}

impl Origin {
    /// Where `source`'s files come from when not from a git checkout; `None`: a git source.
    pub fn of(source: &Source) -> Option<Origin> {
        let url = source.repo_url.trim();
        if url.starts_with("oci://") {
            return Some(Origin::OciArtifact {
                reference: url.trim_end_matches('/').to_string(),
            });
        }
        if source.chart.is_empty() {
            return None;
        }
        let chart = source.chart.clone();
        if is_helm_oci_repo(url) {
            return Some(Origin::OciChart {
                reference: format!("oci://{}/{chart}", url.trim_end_matches('/')),
                chart,
            });
        }
        Some(Origin::Repository {
            url: url.to_string(),
            chart,
        })
    }

    /// The repository as the user wrote it, for messages (never with a password).
    pub fn repository(&self) -> String {
        match self {
            Origin::Repository { url, .. } => redact(url),
            Origin::OciChart { reference, chart } => reference
                .strip_suffix(&format!("/{chart}"))
                .unwrap_or(reference)
                .to_string(),
            Origin::OciArtifact { reference } => reference.clone(),
        }
    }

    /// The chart's name, for messages and labels.
    pub fn chart(&self) -> &str {
        match self {
            Origin::Repository { chart, .. } | Origin::OciChart { chart, .. } => chart,
            Origin::OciArtifact { reference } => {
                reference.rsplit('/').next().unwrap_or(reference.as_str())
            }
        }
    }

    fn is_oci(&self) -> bool {
        !matches!(self, Origin::Repository { .. })
    }

    /// The registry host (`host:port`) of an OCI origin.
    fn registry(&self) -> Option<&str> {
        match self {
            Origin::Repository { .. } => None,
            Origin::OciChart { reference, .. } | Origin::OciArtifact { reference } => reference
                .strip_prefix("oci://")
                .and_then(|r| r.split('/').next()),
        }
    }

    /// The cache's directory for `version` of this chart.
    fn cache_entry(&self, cache: &Path, version: &str) -> PathBuf {
        let (kind, place, chart) = match self {
            Origin::Repository { url, chart } => ("repo", url.as_str(), chart.as_str()),
            Origin::OciChart { reference, chart } => ("oci", reference.as_str(), chart.as_str()),
            Origin::OciArtifact { reference } => ("oci", reference.as_str(), "artifact"),
        };
        cache
            .join(kind)
            .join(escape(place.trim_end_matches('/')))
            .join(escape(chart))
            .join(escape(version))
    }
}

/// Argo CD's `IsHelmOciRepo`: the URL parses (Go's `net/url`) without a host — a registry
/// reference without scheme (`registry.example.com/charts`, `localhost:5000/charts`), not an
/// `https://` URL and not an scp-like git address (`git@host:org/repo`, which Go refuses).
pub fn is_helm_oci_repo(url: &str) -> bool {
    if url.is_empty() || url.contains("://") {
        return false;
    }
    let first_segment = url.split('/').next().unwrap_or(url);
    let Some((scheme, _)) = first_segment.split_once(':') else {
        return true;
    };
    // A valid scheme before the colon (`localhost:5000`): Go reads it as scheme and opaque, no
    // host. Otherwise (`git@host:org`, `10.0.0.1:5000`) the colon in the first path segment is
    // an error.
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Masterminds semver's `NewVersion` (what Argo CD's `versions.IsVersion` asks): an optional `v`,
/// one to three numbers, an optional `-prerelease` and `+metadata`. Anything else is a constraint.
pub fn is_exact_version(text: &str) -> bool {
    let t = text.strip_prefix('v').unwrap_or(text);
    let t = t.split_once('+').map_or(t, |(core, _)| core);
    let (core, pre) = match t.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (t, None),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |p: &&str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    (1..=3).contains(&parts.len())
        && parts.iter().all(numeric)
        && pre.is_none_or(|p| {
            !p.is_empty()
                && p.split('.').all(|x| {
                    !x.is_empty() && x.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
                })
        })
}

/// `text` safe as one directory name, and different texts give different names: every byte
/// outside `[A-Za-z0-9._-]` as `%XX` (and a leading `.` too, so no name is hidden or `..`).
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, b) in text.bytes().enumerate() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-') || (b == b'.' && i > 0) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    if out.is_empty() { "%".into() } else { out }
}

/// `url` without a password in it (`https://user:secret@host` → `https://user:***@host`).
pub fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(u, _)| u);
            format!("{scheme}://{user}:***@{host}{path}")
        }
        None => url.to_string(),
    }
}

/// The default cache directory: `$XDG_CACHE_HOME/syncguard/charts`, else
/// `~/.cache/syncguard/charts` (`~/Library/Caches/syncguard/charts` on macOS), else one in the
/// temporary directory.
pub fn default_cache() -> PathBuf {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = env("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("syncguard/charts");
    }
    match env("HOME") {
        Some(home) if cfg!(target_os = "macos") => {
            PathBuf::from(home).join("Library/Caches/syncguard/charts")
        }
        Some(home) => PathBuf::from(home).join(".cache/syncguard/charts"),
        None => std::env::temp_dir().join("syncguard-charts"),
    }
}

/// A pulled chart (or OCI source), read-only in the cache.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The source's root: the chart's own directory (holding `Chart.yaml`).
    pub dir: PathBuf,
    /// The version pulled (`targetRevision` itself when it is a version).
    pub version: String,
}

/// Pulls `source`'s chart (from the cache when there), or says why it cannot.
pub fn fetch(
    origin: &Origin,
    source: &Source,
    pass_credentials: bool,
    options: &RenderOptions,
) -> Result<Fetched, String> {
    let revision = source.target_revision.trim();
    let what = format!(
        "chart {} version {:?} from {}",
        origin.chart(),
        revision,
        origin.repository()
    );
    if revision.is_empty() {
        return Err(format!(
            "{NOT_FOUND}: {what}: targetRevision is empty; Argo CD needs a chart version \
             (1.2.3) or a semver constraint (^1.2)"
        ));
    }
    let exact = is_exact_version(revision);
    if exact {
        let entry = origin.cache_entry(&options.chart_cache, revision);
        if entry.join("Chart.yaml").is_file() {
            return Ok(Fetched {
                dir: entry,
                version: revision.to_string(),
            });
        }
    }
    std::fs::create_dir_all(&options.chart_cache).map_err(|e| {
        format!(
            "{FAILED}: {what}: the chart cache {}: {e} (choose another with --chart-cache)",
            options.chart_cache.display()
        )
    })?;
    // Pulled next to its place in the cache and renamed into it, so a reader never sees half a
    // chart and two renders at once both end with one whole copy.
    let work = tempfile::Builder::new()
        .prefix(".pull-")
        .tempdir_in(&options.chart_cache)
        .map_err(|e| format!("{FAILED}: {what}: a directory in the chart cache: {e}"))?;
    let env = Environment::of_process();
    let creds = credentials::lookup(&source.repo_url, &env);
    pull(
        origin,
        revision,
        creds.as_ref(),
        pass_credentials,
        work.path(),
        options,
        &env,
    )
    .map_err(|failure| failure.describe(&what, origin, creds.as_ref(), options))?;
    let pulled = work.path().join("out");
    let chart_dir = only_directory(&pulled)
        .ok_or_else(|| format!("{FAILED}: {what}: helm pull gave no chart directory"))?;
    let version = if exact {
        revision.to_string()
    } else {
        chart_version(&chart_dir).ok_or_else(|| {
            format!("{FAILED}: {what}: the pulled chart's Chart.yaml names no version")
        })?
    };
    let entry = origin.cache_entry(&options.chart_cache, &version);
    if !entry.join("Chart.yaml").is_file() {
        if let Some(parent) = entry.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("{FAILED}: {what}: {}: {e}", parent.display()))?;
        }
        if let Err(e) = std::fs::rename(&chart_dir, &entry)
            && !entry.join("Chart.yaml").is_file()
        {
            return Err(format!("{FAILED}: {what}: {}: {e}", entry.display()));
        }
    }
    Ok(Fetched {
        dir: entry,
        version,
    })
}

/// The one directory in `dir` (what `helm pull --untar` leaves).
fn only_directory(dir: &Path) -> Option<PathBuf> {
    let mut dirs = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()));
    let first = dirs.next()?;
    dirs.next().is_none().then(|| first.path())
}

/// `version` of `dir/Chart.yaml`.
fn chart_version(dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(dir.join("Chart.yaml")).ok()?;
    let chart = crate::manifest::parse_yaml_value(&text).ok()?;
    chart
        .get("version")
        .and_then(serde_json::Value::as_str)
        .map(str::to_string)
}

/// Why a pull failed.
enum PullFailure {
    Missing,
    Helm(String),
    Other(String),
}

impl PullFailure {
    fn describe(
        self,
        what: &str,
        origin: &Origin,
        creds: Option<&Credentials>,
        options: &RenderOptions,
    ) -> String {
        let stderr = match self {
            PullFailure::Missing => return super::missing_tool("helm", &options.helm),
            PullFailure::Other(e) => return format!("{FAILED}: {what}: {e}"),
            PullFailure::Helm(stderr) => stderr,
        };
        let lower = stderr.to_ascii_lowercase();
        let place = match creds {
            Some(c) => format!("the credentials used came from {}", c.from),
            None => "no credentials were found for it".to_string(),
        };
        let fix = if origin.is_oci() {
            format!(
                "`helm registry login {}` (HELM_REGISTRY_CONFIG) or {}<ID>_URL/_USERNAME/_PASSWORD",
                origin.registry().unwrap_or("REGISTRY"),
                credentials::ENV_PREFIX
            )
        } else {
            format!(
                "`helm repo add NAME {} --username USER --password-stdin` (HELM_REPOSITORY_CONFIG) \
                 or {}<ID>_URL/_USERNAME/_PASSWORD",
                origin.repository(),
                credentials::ENV_PREFIX
            )
        };
        if ["401", "403"].iter().any(|code| has_number(&lower, code))
            || [
                "unauthorized",
                "forbidden",
                "denied",
                "authentication required",
                // An OCI registry that wants a login helm does not have.
                "credential not found",
                "no basic auth credentials",
            ]
            .iter()
            .any(|m| lower.contains(m))
        {
            format!("{REFUSED}: {what}: {place}; set them with {fix}. helm: {stderr}")
        } else if [
            "connection refused",
            "no such host",
            "i/o timeout",
            "dial tcp",
            "network is unreachable",
            "context deadline exceeded",
            "server misbehaving",
            "timed out",
            "connection reset",
            "http: server gave http response to https client",
        ]
        .iter()
        .any(|m| lower.contains(m))
        {
            let plain = if origin.is_oci() && lower.contains("http response to https client") {
                " (a registry served over plain HTTP needs --oci-plain-http HOST)"
            } else {
                ""
            };
            format!("{UNREACHABLE}: {what}{plain}: helm: {stderr}")
        } else if lower.contains("index.yaml") && has_number(&lower, "404") {
            format!(
                "{NOT_FOUND}: {what}: there is no chart repository index (index.yaml) at {}. \
                 helm: {stderr}",
                origin.repository()
            )
        } else if lower.contains("not found") || lower.contains("no chart version") {
            format!(
                "{NOT_FOUND}: {what}: the repository has no such chart or no version matching \
                 {:?}. helm: {stderr}",
                what.split('"').nth(1).unwrap_or_default()
            )
        } else {
            format!("{FAILED}: {what}: helm: {stderr}")
        }
    }
}

/// True when `text` holds `number` as a number of its own, not inside a longer one: an HTTP
/// status `401` or `403`, never the port of `127.0.0.1:40375` (that once made an unreachable
/// repository read as one refusing the credentials).
fn has_number(text: &str, number: &str) -> bool {
    text.match_indices(number).any(|(i, m)| {
        let before = text.get(..i).and_then(|t| t.chars().next_back());
        let after = text.get(i + m.len()..).and_then(|t| t.chars().next());
        !before.is_some_and(|c| c.is_ascii_digit()) && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

/// `helm pull ... --untar` into `work/out`, with credentials given through files in `work`
/// (a `repositories.yaml` of one entry, or a registry login read from stdin), never on helm's
/// command line, and Helm homes in `work`, so the user's own are never written.
fn pull(
    origin: &Origin,
    version: &str,
    creds: Option<&Credentials>,
    pass_credentials: bool,
    work: &Path,
    options: &RenderOptions,
    env: &Environment,
) -> Result<(), PullFailure> {
    let home = |c: &mut Command| {
        c.current_dir(work)
            .env("XDG_CACHE_HOME", work.join("cache"))
            .env("XDG_CONFIG_HOME", work.join("config"))
            .env("XDG_DATA_HOME", work.join("data"))
            .env("HELM_CONFIG_HOME", work.join("config"))
            .env("HELM_CACHE_HOME", work.join("cache"))
            .env("HELM_DATA_HOME", work.join("data"))
            .env("HELM_REPOSITORY_CONFIG", work.join("repositories.yaml"))
            .env("HELM_REPOSITORY_CACHE", work.join("cache/repository"));
    };
    let mut args: Vec<String> = vec!["pull".into()];
    match origin {
        Origin::Repository { url, chart } => {
            write_repositories_yaml(work, url, creds).map_err(PullFailure::Other)?;
            let mut update = Command::new(&options.helm);
            update.args(["repo", "update", "source"]);
            home(&mut update);
            helm(update, options, None)?;
            args.push(format!("source/{chart}"));
            if pass_credentials {
                args.push("--pass-credentials".into());
            }
        }
        Origin::OciChart { reference, .. } | Origin::OciArtifact { reference } => {
            let registry_config = work.join("registry.json");
            let plain = origin
                .registry()
                .is_some_and(|r| options.oci_plain_http.iter().any(|p| p == r));
            match creds.filter(|c| !c.username.is_empty() && !c.password.is_empty()) {
                Some(c) => {
                    let mut login = Command::new(&options.helm);
                    login.args([
                        "registry",
                        "login",
                        origin.registry().unwrap_or_default(),
                        "--username",
                        &c.username,
                        "--password-stdin",
                    ]);
                    if plain {
                        login.arg("--plain-http");
                    }
                    home(&mut login);
                    login.env("HELM_REGISTRY_CONFIG", &registry_config);
                    helm(login, options, Some(c.password.as_bytes()))?;
                }
                None => {
                    // The user's own login, read by helm (it never writes it on a pull).
                    if let Some(file) = credentials::registry_config(env)
                        && let Err(e) = std::fs::copy(&file, &registry_config)
                    {
                        return Err(PullFailure::Other(format!("{}: {e}", file.display())));
                    }
                }
            }
            args.push(reference.clone());
            if plain {
                args.push("--plain-http".into());
            }
        }
    }
    // `--untardir` is joined to `--destination` (the working directory by default): both are
    // given, and helm runs in `work`, so nothing lands anywhere else.
    args.extend([
        "--version".into(),
        version.into(),
        "--destination".into(),
        work.to_string_lossy().into_owned(),
        "--untar".into(),
        "--untardir".into(),
        "out".into(),
    ]);
    if let Some(c) = creds.filter(|_| origin.is_oci()) {
        tls_flags(c, &mut args);
    }
    let mut command = Command::new(&options.helm);
    command.args(&args);
    home(&mut command);
    command.env("HELM_REGISTRY_CONFIG", work.join("registry.json"));
    helm(command, options, None)
}

/// The TLS flags of a `repositories.yaml` entry, for a pull that does not read that file.
fn tls_flags(c: &Credentials, args: &mut Vec<String>) {
    for (flag, file) in [
        ("--ca-file", &c.ca_file),
        ("--cert-file", &c.cert_file),
        ("--key-file", &c.key_file),
    ] {
        if !file.is_empty() {
            args.extend([flag.to_string(), file.clone()]);
        }
    }
    if c.insecure_skip_tls_verify {
        args.push("--insecure-skip-tls-verify".into());
    }
}

/// A `repositories.yaml` (mode 0600) naming `url` `source`, with its credentials.
fn write_repositories_yaml(
    work: &Path,
    url: &str,
    creds: Option<&Credentials>,
) -> Result<(), String> {
    let mut entry = serde_json::json!({"name": "source", "url": url});
    if let Some(c) = creds {
        for (key, value) in [
            ("username", &c.username),
            ("password", &c.password),
            ("caFile", &c.ca_file),
            ("certFile", &c.cert_file),
            ("keyFile", &c.key_file),
        ] {
            if !value.is_empty() {
                entry[key] = value.clone().into();
            }
        }
        if c.insecure_skip_tls_verify {
            entry["insecure_skip_tls_verify"] = true.into();
        }
    }
    // JSON is YAML; helm reads it as its repositories file.
    let text = serde_json::json!({"apiVersion": "", "generated": "0001-01-01T00:00:00Z",
        "repositories": [entry]})
    .to_string();
    let file = work.join("repositories.yaml");
    let mut open = std::fs::OpenOptions::new();
    open.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut open, 0o600);
    let mut f = open
        .open(&file)
        .map_err(|e| format!("{}: {e}", file.display()))?;
    std::io::Write::write_all(&mut f, text.as_bytes())
        .map_err(|e| format!("{}: {e}", file.display()))
}

/// Runs one helm command (with `stdin` fed to it when given).
fn helm(
    command: Command,
    options: &RenderOptions,
    stdin: Option<&[u8]>,
) -> Result<(), PullFailure> {
    match run_with_input(command, stdin, options.timeout) {
        Ok(_) => Ok(()),
        Err(RunFailure::Spawn(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            Err(PullFailure::Missing)
        }
        Err(RunFailure::Spawn(e)) | Err(RunFailure::Io(e)) => {
            Err(PullFailure::Other(e.to_string()))
        }
        Err(RunFailure::Exit { stderr, stdout, .. }) => {
            // `helm repo update` says why on stdout ("Unable to get an update ...: dial tcp
            // ...: connection refused") and only "failed to update" on stderr.
            let said: Vec<u8> = String::from_utf8_lossy(&stdout)
                .lines()
                .filter(|l| !l.starts_with("Hang tight"))
                .flat_map(|l| format!("{}\n", l.trim()).into_bytes())
                .chain(stderr)
                .collect();
            Err(PullFailure::Helm(tail(&said, 600)))
        }
        Err(RunFailure::Timeout { .. }) => Err(PullFailure::Helm(format!(
            "timed out after {:?}",
            options.timeout.unwrap_or_default()
        ))),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    #[test]
    fn status_codes_are_whole_numbers_not_parts_of_a_port() {
        use super::has_number;
        assert!(has_number("response status code 401 unauthorized", "401"));
        assert!(has_number("failed: 403", "403"));
        assert!(has_number("(403)", "403"));
        assert!(!has_number(
            "dial tcp 127.0.0.1:40375: connect: connection refused",
            "403"
        ));
        assert!(!has_number("http://127.0.0.1:14012/index.yaml", "401"));
    }

    use super::*;
    use serde_json::json;

    fn source(v: serde_json::Value) -> Source {
        Source::from_value(&v)
    }

    #[test]
    fn origins_are_argo_cds() {
        let o = |v| Origin::of(&source(v));
        assert_eq!(
            o(json!({"repoURL": "https://git.example.com/a.git", "path": "x"})),
            None
        );
        assert_eq!(
            o(json!({"repoURL": "https://charts.example.com", "chart": "web"})),
            Some(Origin::Repository {
                url: "https://charts.example.com".into(),
                chart: "web".into()
            })
        );
        assert_eq!(
            o(json!({"repoURL": "registry.example.com/charts/", "chart": "web"})),
            Some(Origin::OciChart {
                reference: "oci://registry.example.com/charts/web".into(),
                chart: "web".into()
            })
        );
        // oci:// is an OCI source even with a chart, as Argo CD 3.6 checks IsOCI first.
        assert_eq!(
            o(json!({"repoURL": "oci://registry.example.com/charts/web", "chart": "x"})),
            Some(Origin::OciArtifact {
                reference: "oci://registry.example.com/charts/web".into()
            })
        );
    }

    #[test]
    fn helm_oci_repositories_are_recognised_as_go_parses_them() {
        assert!(is_helm_oci_repo("registry.example.com/charts"));
        assert!(is_helm_oci_repo("localhost:5000/charts"));
        assert!(!is_helm_oci_repo("https://charts.example.com"));
        assert!(!is_helm_oci_repo("git@github.com:org/repo.git"));
        assert!(!is_helm_oci_repo("10.0.0.1:5000/charts"));
        assert!(!is_helm_oci_repo(""));
    }

    #[test]
    fn versions_and_constraints() {
        for v in ["1.2.3", "v1.2.3", "1.2", "1", "1.0.0-rc.1", "1.0.0+build.5"] {
            assert!(is_exact_version(v), "{v}");
        }
        for c in [
            "^1.2",
            "~1.2.0",
            ">=1.0 <2.0",
            "1.x",
            "*",
            "1.2.*",
            "",
            "1.2.3.4",
        ] {
            assert!(!is_exact_version(c), "{c}");
        }
    }

    #[test]
    fn cache_names_are_safe_and_distinct() {
        assert_eq!(
            escape("https://c.example.com/a"),
            "https%3A%2F%2Fc.example.com%2Fa"
        );
        assert_ne!(escape("a/b"), escape("a_b"));
        assert_eq!(escape(".."), "%2E.");
        let o = Origin::Repository {
            url: "https://c.example.com/".into(),
            chart: "web".into(),
        };
        assert_eq!(
            o.cache_entry(Path::new("/c"), "1.0.0"),
            Path::new("/c/repo/https%3A%2F%2Fc.example.com/web/1.0.0")
        );
    }

    #[test]
    fn passwords_in_urls_are_redacted() {
        assert_eq!(
            redact("https://me:secret@charts.example.com/x"),
            "https://me:***@charts.example.com/x"
        );
        assert_eq!(
            redact("https://charts.example.com"),
            "https://charts.example.com"
        );
    }
}
