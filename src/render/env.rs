//! Argo CD's build environment for one source (`newEnv` in the repo-server): the `ARGOCD_APP_*`
//! variables, and the `$VAR` substitution Argo CD applies to some fields with them (Go's
//! `os.Expand`).

/// The `ARGOCD_APP_*` variables of one source, in Argo CD's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppEnv {
    vars: Vec<(&'static str, String)>,
}

/// What the variables are made of.
#[derive(Debug, Clone, Default)]
pub struct EnvInputs<'a> {
    /// The instance name (`<namespace>_<name>` outside the control-plane namespace).
    pub app_name: &'a str,
    /// The destination namespace (not the Application's own namespace).
    pub namespace: &'a str,
    /// `spec.project`.
    pub project: &'a str,
    /// The commit rendered (a full SHA; empty when unknown).
    pub revision: &'a str,
    /// `repoURL` as written.
    pub repo_url: &'a str,
    /// `path` as written.
    pub path: &'a str,
    /// `targetRevision` as written.
    pub target_revision: &'a str,
}

impl AppEnv {
    /// The variables Argo CD 3.6.1 sets.
    pub fn new(i: &EnvInputs<'_>) -> Self {
        let short = |n: usize| i.revision.chars().take(n).collect::<String>();
        Self {
            vars: vec![
                ("ARGOCD_APP_NAME", i.app_name.to_string()),
                ("ARGOCD_APP_NAMESPACE", i.namespace.to_string()),
                ("ARGOCD_APP_PROJECT_NAME", i.project.to_string()),
                ("ARGOCD_APP_REVISION", i.revision.to_string()),
                ("ARGOCD_APP_REVISION_SHORT", short(7)),
                ("ARGOCD_APP_REVISION_SHORT_8", short(8)),
                ("ARGOCD_APP_SOURCE_REPO_URL", i.repo_url.to_string()),
                ("ARGOCD_APP_SOURCE_PATH", i.path.to_string()),
                (
                    "ARGOCD_APP_SOURCE_TARGET_REVISION",
                    i.target_revision.to_string(),
                ),
            ],
        }
    }

    /// The variables, for a child process's environment.
    pub fn vars(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.vars.iter().map(|(k, v)| (*k, v.as_str()))
    }

    fn get(&self, name: &str) -> &str {
        self.vars
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    }

    /// `text` with `$NAME` and `${NAME}` replaced as Go's `os.Expand` replaces them: an unknown
    /// name becomes empty, `$$` is `$`, a `$` followed by one special character (`$1`, `$*`)
    /// takes that character as the name (so it becomes empty too), a `$` at the end or before
    /// anything else stays.
    pub fn substitute(&self, text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let mut i = 0;
        let mut copied = 0;
        while i < bytes.len() {
            if bytes[i] == b'$' && i + 1 < bytes.len() {
                out.push_str(&text[copied..i]);
                let (name, width) = shell_name(&text[i + 1..]);
                if name.is_empty() && width > 0 {
                    // `${}` or an unterminated `${`: Go drops the bad syntax.
                } else if name.is_empty() {
                    out.push('$'); // a `$` before a character that starts no name
                } else if name == "$" {
                    out.push('$');
                } else {
                    out.push_str(self.get(name));
                }
                i += 1 + width;
                copied = i;
            } else {
                i += 1;
            }
        }
        out.push_str(&text[copied..]);
        out
    }
}

/// Go's `getShellName`: the name after a `$` and how many bytes it took.
fn shell_name(s: &str) -> (&str, usize) {
    let b = s.as_bytes();
    if b[0] == b'{' {
        if b.len() > 2 && is_special(b[1]) && b[2] == b'}' {
            return (&s[1..2], 3);
        }
        for (j, c) in b.iter().enumerate().skip(1) {
            if *c == b'}' {
                if j == 1 {
                    return ("", 2); // `${}`
                }
                return (&s[1..j], j + 1);
            }
        }
        return ("", 1); // no closing brace
    }
    if is_special(b[0]) {
        return (&s[0..1], 1);
    }
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (&s[..n], n)
}

fn is_special(c: u8) -> bool {
    matches!(
        c,
        b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-' | b'0'..=b'9'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> AppEnv {
        AppEnv::new(&EnvInputs {
            app_name: "team_web",
            namespace: "shop",
            project: "default",
            revision: "0123456789abcdef0123456789abcdef01234567",
            repo_url: "https://example.com/gitops.git",
            path: "apps/web",
            target_revision: "main",
        })
    }

    #[test]
    fn variables_are_argo_cds_nine() {
        let e = env();
        let names: Vec<&str> = e.vars().map(|(k, _)| k).collect();
        assert_eq!(names.len(), 9);
        assert_eq!(e.get("ARGOCD_APP_REVISION_SHORT"), "0123456");
        assert_eq!(e.get("ARGOCD_APP_REVISION_SHORT_8"), "01234567");
        assert_eq!(e.get("ARGOCD_APP_NAMESPACE"), "shop");
    }

    #[test]
    fn substitution_follows_go_os_expand() {
        let e = env();
        for (input, want) in [
            ("values-$ARGOCD_APP_NAME.yaml", "values-team_web.yaml"),
            ("${ARGOCD_APP_NAMESPACE}/x", "shop/x"),
            ("price $5", "price "),
            ("a$$b", "a$b"),
            ("a${$}b", "a$b"),
            ("$UNKNOWN-x", "-x"),
            ("end$", "end$"),
            ("a$/b", "a$/b"),
            ("${}x", "x"),
            ("${open", "open"),
            ("no dollar", "no dollar"),
            ("é$ARGOCD_APP_PROJECT_NAMEé", "édefaulté"),
        ] {
            assert_eq!(e.substitute(input), want, "{input}");
        }
    }
}
