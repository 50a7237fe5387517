//! Credentials for chart repositories and OCI registries, from the places a Helm user already
//! keeps them, so that `syncguard render` pulls a chart the way `helm pull` on this machine would:
//!
//! 1. environment variables for CI, one group per repository URL prefix:
//!    `SYNCGUARD_CHART_REPO_<ID>_URL`, `SYNCGUARD_CHART_REPO_<ID>_USERNAME`,
//!    `SYNCGUARD_CHART_REPO_<ID>_PASSWORD` (`<ID>` is any name; the longest URL prefix that
//!    matches the source's `repoURL` at a `/` boundary wins, like Argo CD's credential templates);
//! 2. Helm's repository configuration (`helm repo add --username`): `HELM_REPOSITORY_CONFIG`,
//!    else `repositories.yaml` in Helm's configuration directory; the entry whose `url` is the
//!    source's `repoURL`;
//! 3. for OCI registries only, Helm's registry login (`helm registry login`):
//!    `HELM_REGISTRY_CONFIG`, else `registry/config.json` in Helm's configuration directory —
//!    helm reads that file itself (and Docker's `config.json` after it).
//!
//! Nothing here prints a password: [`Credentials`]'s `Debug` leaves it out.

use std::path::PathBuf;

use serde_json::Value;

/// The prefix of the CI variables.
pub const ENV_PREFIX: &str = "SYNCGUARD_CHART_REPO_";

/// What to log in with, and where it was found.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Credentials {
    pub username: String,
    pub password: String,
    /// TLS files of a `repositories.yaml` entry (empty: none).
    pub ca_file: String,
    pub cert_file: String,
    pub key_file: String,
    pub insecure_skip_tls_verify: bool,
    /// Where they came from, for messages (`SYNCGUARD_CHART_REPO_CI_*`,
    /// `/home/me/.config/helm/repositories.yaml`).
    pub from: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("username", &self.username)
            .field(
                "password",
                &if self.password.is_empty() { "" } else { "***" },
            )
            .field("from", &self.from)
            .finish()
    }
}

/// The environment variables credentials are read from (the process's, or a test's own).
#[derive(Debug, Clone, Default)]
pub struct Environment {
    vars: std::collections::BTreeMap<String, String>,
}

impl Environment {
    /// The process environment.
    pub fn of_process() -> Self {
        Self::of(std::env::vars())
    }

    /// These variables only.
    pub fn of(vars: impl IntoIterator<Item = (String, String)>) -> Self {
        Self {
            vars: vars.into_iter().filter(|(_, v)| !v.is_empty()).collect(),
        }
    }

    /// A variable's value; unset and empty are alike.
    pub fn get(&self, name: &str) -> Option<String> {
        self.vars.get(name).cloned()
    }
}

type Env<'a> = &'a Environment;

/// The credentials for `repo_url` (a chart repository URL, or an OCI registry reference with or
/// without `oci://`), from the CI variables, else Helm's `repositories.yaml`. `None`: none known
/// (an OCI pull then still uses Helm's registry login).
pub fn lookup(repo_url: &str, env: Env<'_>) -> Option<Credentials> {
    from_env(repo_url, env).or_else(|| from_repositories_yaml(repo_url, env))
}

/// A URL compared without `oci://`, trailing `/` and case of the scheme and host.
fn comparable(url: &str) -> String {
    let u = url.trim();
    let u = u.strip_prefix("oci://").unwrap_or(u);
    let (head, rest) = match u.split_once("://") {
        Some((scheme, rest)) => (format!("{}://", scheme.to_ascii_lowercase()), rest),
        None => (String::new(), u),
    };
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let joined = if path.is_empty() {
        format!("{head}{}", host.to_ascii_lowercase())
    } else {
        format!("{head}{}/{path}", host.to_ascii_lowercase())
    };
    joined.trim_end_matches('/').to_string()
}

/// `prefix` is `url` or a leading part of it ending at a `/`.
fn is_prefix(prefix: &str, url: &str) -> bool {
    url == prefix
        || (url.starts_with(prefix)
            && (prefix.ends_with('/') || url[prefix.len()..].starts_with('/')))
}

fn from_env(repo_url: &str, env: Env<'_>) -> Option<Credentials> {
    let target = comparable(repo_url);
    let mut best: Option<(usize, Credentials)> = None;
    for (name, value) in &env.vars {
        let Some(id) = name
            .strip_prefix(ENV_PREFIX)
            .and_then(|rest| rest.strip_suffix("_URL"))
        else {
            continue;
        };
        let prefix = comparable(value);
        if !is_prefix(&prefix, &target) || best.as_ref().is_some_and(|(n, _)| *n >= prefix.len()) {
            continue;
        }
        let var = |field: &str| {
            env.get(&format!("{ENV_PREFIX}{id}_{field}"))
                .unwrap_or_default()
        };
        best = Some((
            prefix.len(),
            Credentials {
                username: var("USERNAME"),
                password: var("PASSWORD"),
                from: format!("{ENV_PREFIX}{id}_URL/_USERNAME/_PASSWORD"),
                ..Credentials::default()
            },
        ));
    }
    best.map(|(_, c)| c)
}

/// Helm's configuration directory (`helmpath.ConfigPath()`): `HELM_CONFIG_HOME`, else
/// `$XDG_CONFIG_HOME/helm`, else the platform's default under the home directory.
pub fn helm_config_home(env: Env<'_>) -> Option<PathBuf> {
    if let Some(dir) = env.get("HELM_CONFIG_HOME") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = env.get("XDG_CONFIG_HOME") {
        return Some(PathBuf::from(dir).join("helm"));
    }
    let home = PathBuf::from(env.get("HOME")?);
    Some(if cfg!(target_os = "macos") {
        home.join("Library/Preferences/helm")
    } else {
        home.join(".config/helm")
    })
}

/// Helm's `repositories.yaml`: `HELM_REPOSITORY_CONFIG`, else in Helm's configuration directory.
pub fn repositories_yaml(env: Env<'_>) -> Option<PathBuf> {
    env.get("HELM_REPOSITORY_CONFIG")
        .map(PathBuf::from)
        .or_else(|| helm_config_home(env).map(|d| d.join("repositories.yaml")))
}

/// Helm's registry login file: `HELM_REGISTRY_CONFIG`, else `registry/config.json` in Helm's
/// configuration directory. `None` when it does not exist.
pub fn registry_config(env: Env<'_>) -> Option<PathBuf> {
    env.get("HELM_REGISTRY_CONFIG")
        .map(PathBuf::from)
        .or_else(|| helm_config_home(env).map(|d| d.join("registry/config.json")))
        .filter(|p| p.is_file())
}

fn from_repositories_yaml(repo_url: &str, env: Env<'_>) -> Option<Credentials> {
    let file = repositories_yaml(env)?;
    let text = std::fs::read_to_string(&file).ok()?;
    let config = crate::manifest::parse_yaml_value(&text).ok()?;
    let target = comparable(repo_url);
    let entry = config
        .get("repositories")
        .and_then(Value::as_array)?
        .iter()
        .find(|e| {
            e.get("url")
                .and_then(Value::as_str)
                .is_some_and(|u| comparable(u) == target)
        })?;
    let text = |key: &str| {
        entry
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let found = Credentials {
        username: text("username"),
        password: text("password"),
        ca_file: text("caFile"),
        cert_file: text("certFile"),
        key_file: text("keyFile"),
        insecure_skip_tls_verify: entry
            .get("insecure_skip_tls_verify")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        from: file.display().to_string(),
    };
    let nothing = Credentials {
        from: found.from.clone(),
        ..Credentials::default()
    };
    (found != nothing).then_some(found)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn env_of(pairs: &[(&str, &str)]) -> Environment {
        Environment::of(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
    }

    #[test]
    fn repositories_yaml_entries_match_by_url() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("repositories.yaml");
        std::fs::write(
            &file,
            "apiVersion: ''\nrepositories:\n\
             - {name: a, url: 'https://charts.example.com/stable/', username: u, password: p, caFile: /ca.pem}\n\
             - {name: b, url: 'https://other.example.com'}\n",
        )
        .unwrap();
        let env = env_of(&[("HELM_REPOSITORY_CONFIG", file.to_str().unwrap())]);
        let c = lookup("https://Charts.example.com/stable", &env).unwrap();
        assert_eq!((c.username.as_str(), c.password.as_str()), ("u", "p"));
        assert_eq!(c.ca_file, "/ca.pem");
        assert_eq!(c.from, file.display().to_string());
        // An entry without credentials gives none; another URL gives none.
        assert_eq!(lookup("https://other.example.com", &env), None);
        assert_eq!(lookup("https://charts.example.com/stable/sub", &env), None);
        // The password never shows in debug output.
        assert!(!format!("{c:?}").contains("\"p\""), "{c:?}");
    }

    #[test]
    fn helm_directories_follow_helms_variables() {
        let env = env_of(&[("HOME", "/home/me")]);
        let home = if cfg!(target_os = "macos") {
            "/home/me/Library/Preferences/helm"
        } else {
            "/home/me/.config/helm"
        };
        assert_eq!(
            repositories_yaml(&env).unwrap(),
            PathBuf::from(home).join("repositories.yaml")
        );
        let env = env_of(&[("HOME", "/home/me"), ("XDG_CONFIG_HOME", "/x")]);
        assert_eq!(
            repositories_yaml(&env).unwrap(),
            PathBuf::from("/x/helm/repositories.yaml")
        );
        let env = env_of(&[
            ("HELM_CONFIG_HOME", "/h"),
            ("HELM_REPOSITORY_CONFIG", "/r.yaml"),
        ]);
        assert_eq!(repositories_yaml(&env).unwrap(), PathBuf::from("/r.yaml"));
    }

    #[test]
    fn ci_variables_win_and_the_longest_prefix_decides() {
        let env = env_of(&[
            ("SYNCGUARD_CHART_REPO_ALL_URL", "https://charts.example.com"),
            ("SYNCGUARD_CHART_REPO_ALL_USERNAME", "everyone"),
            ("SYNCGUARD_CHART_REPO_ALL_PASSWORD", "p1"),
            (
                "SYNCGUARD_CHART_REPO_TEAM_URL",
                "https://charts.example.com/team/",
            ),
            ("SYNCGUARD_CHART_REPO_TEAM_USERNAME", "team"),
            ("SYNCGUARD_CHART_REPO_TEAM_PASSWORD", "p2"),
            (
                "SYNCGUARD_CHART_REPO_OCI_URL",
                "oci://registry.example.com/charts",
            ),
            ("SYNCGUARD_CHART_REPO_OCI_USERNAME", "robot"),
        ]);
        assert_eq!(
            lookup("https://charts.example.com/team/stable", &env)
                .unwrap()
                .username,
            "team"
        );
        assert_eq!(
            lookup("https://charts.example.com/teams", &env)
                .unwrap()
                .username,
            "everyone"
        );
        let oci = lookup("registry.example.com/charts", &env).unwrap();
        assert_eq!(
            (oci.username.as_str(), oci.password.as_str()),
            ("robot", "")
        );
        assert_eq!(oci.from, "SYNCGUARD_CHART_REPO_OCI_URL/_USERNAME/_PASSWORD");
        assert_eq!(lookup("https://elsewhere.example.com", &env), None);
    }

    #[test]
    fn prefixes_end_at_a_path_boundary() {
        assert!(is_prefix(
            "https://c.example.com",
            "https://c.example.com/x"
        ));
        assert!(is_prefix("c.example.com/org", "c.example.com/org"));
        assert!(!is_prefix(
            "c.example.com/org",
            "c.example.com/organisation"
        ));
        assert_eq!(
            comparable("oci://Reg.Example.com/Charts/"),
            "reg.example.com/Charts"
        );
    }
}
