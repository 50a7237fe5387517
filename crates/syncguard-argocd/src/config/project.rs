//! `argoproj.io/AppProject`: what a project permits, and Argo CD's own matching semantics for
//! it — which destinations, source repositories and kinds an Application of the project may use
//! — transliterated from `pkg/apis/application/v1alpha1/app_project_types.go` and `types.go`
//! (`IsDestinationPermitted`, `isDestinationMatched`, `IsSourcePermitted`,
//! `IsGroupKindNamePermitted`), release by release where they changed:
//!
//! | behaviour | releases |
//! |---|---|
//! | `!` negation in `destinations` (server, name, namespace) | from 2.5.0 (argo-cd#9652) |
//! | a negated destination that does not match rejects at once; a negated server only when the namespace matches, a negated namespace only when the server matches | from 2.14.0 (argo-cd#20045); 2.5–2.13 reject on any unmatched negated field |
//! | the cluster's name is known when an Application names only its server | from 2.14.0 (argo-cd#21063); before, the name is empty, so name patterns never match it |
//! | `!` negation in `sourceRepos` | from 2.6.0 (argo-cd#11646) |
//! | `name` in cluster resource white/blacklist entries | from 3.3.0 (argo-cd#24674) |
//! | `permitOnlyProjectScopedClusters` | from 2.5.0 (argo-cd#10237) |
//!
//! Reading is tolerant ([`super::Fields`]): every field optional, unknown keys and wrong types
//! kept in [`AppProject::notes`].

pub mod glob;

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::sync_window::SyncWindow;
use super::{Fields, Notes};
use crate::model::version::ArgoCdVersion;
use glob::{argo_glob_match, path_matches};

/// The server URL of the cluster Argo CD runs in, and the name it gives it by default.
pub const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
/// The default name of the local cluster (`argocd-cm` or a cluster Secret can rename it).
pub const IN_CLUSTER_NAME: &str = "in-cluster";

/// One AppProject as Argo CD reads it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppProject {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace` (empty when unset).
    pub namespace: String,
    /// `spec.description`.
    pub description: String,
    /// `spec.sourceRepos`: globs over normalised repository URLs, `!` denies (2.6+).
    pub source_repos: Vec<String>,
    /// `spec.sourceNamespaces`: where the project's Applications may live besides Argo CD's.
    pub source_namespaces: Vec<String>,
    /// `spec.destinations`.
    pub destinations: Vec<Destination>,
    /// `spec.clusterResourceWhitelist`; empty permits no cluster-scoped kind.
    pub cluster_resource_whitelist: Vec<ResourceRef>,
    /// `spec.clusterResourceBlacklist`.
    pub cluster_resource_blacklist: Vec<ResourceRef>,
    /// `spec.namespaceResourceWhitelist`; `None` (absent) permits every namespaced kind, an empty
    /// list none.
    pub namespace_resource_whitelist: Option<Vec<ResourceRef>>,
    /// `spec.namespaceResourceBlacklist`.
    pub namespace_resource_blacklist: Vec<ResourceRef>,
    /// `spec.roles[].name`.
    pub roles: Vec<String>,
    /// `spec.syncWindows`.
    pub sync_windows: Vec<SyncWindow>,
    /// `spec.orphanedResources`, when set.
    pub orphaned_resources: Option<OrphanedResources>,
    /// `spec.signatureKeys[].keyID`.
    pub signature_keys: Vec<String>,
    /// `spec.permitOnlyProjectScopedClusters`.
    pub permit_only_project_scoped_clusters: bool,
    /// `spec.destinationServiceAccounts`.
    pub destination_service_accounts: Vec<DestinationServiceAccount>,
    /// What reading found that this vocabulary does not hold.
    pub notes: Notes,
}

/// A destination (of a project, or as an Application writes it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Destination {
    /// `server` (a URL or a glob).
    pub server: String,
    /// `name` (a cluster name or a glob).
    pub name: String,
    /// `namespace` (a namespace or a glob).
    pub namespace: String,
}

/// A white/blacklist entry: `{group, kind}`, plus `name` in cluster lists (3.3+).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ResourceRef {
    /// `group` (filepath.Match pattern; `""` is the core group).
    pub group: String,
    /// `kind` (filepath.Match pattern).
    pub kind: String,
    /// `name` (filepath.Match pattern; empty matches every name).
    pub name: String,
}

/// `spec.orphanedResources`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OrphanedResources {
    /// `warn`: orphaned resources raise a warning condition.
    pub warn: Option<bool>,
    /// `ignore`: `{group, kind, name}` entries never reported as orphaned.
    pub ignore: Vec<ResourceRef>,
}

/// `spec.destinationServiceAccounts[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DestinationServiceAccount {
    /// `server` (glob).
    pub server: String,
    /// `namespace` (glob).
    pub namespace: String,
    /// `defaultServiceAccount`.
    pub default_service_account: String,
}

impl AppProject {
    /// Reads an AppProject object (its `metadata` and `spec`).
    pub fn from_value(v: &Value) -> AppProject {
        let mut notes = Notes::default();
        let meta = v.get("metadata");
        let meta_str = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let mut p = AppProject {
            name: meta_str("name"),
            namespace: meta_str("namespace"),
            ..AppProject::default()
        };
        let mut spec = Fields::of(v.get("spec"), "/spec", &mut notes);
        p.description = spec.string("description", &mut notes);
        p.source_repos = spec.strings("sourceRepos", &mut notes);
        p.source_namespaces = spec.strings("sourceNamespaces", &mut notes);
        let at = spec.pointer("destinations");
        p.destinations = items(
            spec.list("destinations", &mut notes),
            &at,
            &mut notes,
            |f, n| Destination {
                server: f.string("server", n),
                name: f.string("name", n),
                namespace: f.string("namespace", n),
            },
        );
        p.cluster_resource_whitelist =
            refs(&mut spec, "clusterResourceWhitelist", true, &mut notes);
        p.cluster_resource_blacklist =
            refs(&mut spec, "clusterResourceBlacklist", true, &mut notes);
        p.namespace_resource_whitelist = match spec.value("namespaceResourceWhitelist") {
            Some(Value::Array(_)) => Some(refs(
                &mut spec,
                "namespaceResourceWhitelist",
                false,
                &mut notes,
            )),
            Some(_) => {
                // Malformed: noted, and read as absent.
                spec.list("namespaceResourceWhitelist", &mut notes);
                None
            }
            None => None,
        };
        p.namespace_resource_blacklist =
            refs(&mut spec, "namespaceResourceBlacklist", false, &mut notes);
        let at = spec.pointer("roles");
        p.roles = items(spec.list("roles", &mut notes), &at, &mut notes, |f, n| {
            f.known(&["description", "policies", "groups", "jwtTokens"]);
            f.string("name", n)
        });
        let at = spec.pointer("syncWindows");
        p.sync_windows = spec
            .list("syncWindows", &mut notes)
            .iter()
            .enumerate()
            .map(|(i, w)| SyncWindow::read(w, &format!("{at}/{i}"), &mut notes))
            .collect();
        let mut orphaned = spec.block("orphanedResources", &mut notes);
        if orphaned.present() {
            let at = orphaned.pointer("ignore");
            let ignore = items(
                orphaned.list("ignore", &mut notes),
                &at,
                &mut notes,
                |f, n| ResourceRef {
                    group: f.string("group", n),
                    kind: f.string("kind", n),
                    name: f.string("name", n),
                },
            );
            p.orphaned_resources = Some(OrphanedResources {
                warn: orphaned.bool("warn", &mut notes),
                ignore,
            });
        }
        orphaned.finish(&mut notes);
        let at = spec.pointer("signatureKeys");
        p.signature_keys = items(
            spec.list("signatureKeys", &mut notes),
            &at,
            &mut notes,
            |f, n| f.string("keyID", n),
        );
        p.permit_only_project_scoped_clusters = spec
            .bool("permitOnlyProjectScopedClusters", &mut notes)
            .unwrap_or(false);
        let at = spec.pointer("destinationServiceAccounts");
        p.destination_service_accounts = items(
            spec.list("destinationServiceAccounts", &mut notes),
            &at,
            &mut notes,
            |f, n| DestinationServiceAccount {
                server: f.string("server", n),
                namespace: f.string("namespace", n),
                default_service_account: f.string("defaultServiceAccount", n),
            },
        );
        // Read by Argo CD, not modelled here (3.4+ replaces signatureKeys with it).
        spec.known(&["sourceIntegrity"]);
        spec.finish(&mut notes);
        p.notes = notes;
        p
    }

    /// `IsGroupKindNamePermitted`: may an Application of this project sync an object of
    /// `group`/`kind` named `name`? A cluster-scoped kind needs a matching
    /// `clusterResourceWhitelist` entry (an empty list permits none) and no matching blacklist
    /// entry; a namespaced kind is permitted when `namespaceResourceWhitelist` is absent or
    /// matches, and no `namespaceResourceBlacklist` entry matches. Entries are `filepath.Match`
    /// patterns; the `name` of a cluster entry counts from 3.3.
    pub fn permits_kind(
        &self,
        group: &str,
        kind: &str,
        name: &str,
        namespaced: bool,
        version: ArgoCdVersion,
    ) -> bool {
        let in_list = |list: &[ResourceRef], named: bool| {
            list.iter().any(|e| {
                path_matches(&e.kind, kind)
                    && path_matches(&e.group, group)
                    && (!named || e.name.is_empty() || path_matches(&e.name, name))
            })
        };
        if namespaced {
            let white = self
                .namespace_resource_whitelist
                .as_ref()
                .is_none_or(|l| in_list(l, false));
            return white && !in_list(&self.namespace_resource_blacklist, false);
        }
        let named = version.at_least(3, 3);
        in_list(&self.cluster_resource_whitelist, named)
            && !in_list(&self.cluster_resource_blacklist, named)
    }

    /// `IsSourcePermitted`: may an Application of this project use the repository `repo_url`?
    /// Both sides are normalised ([`normalize_git_url`]) and matched as globs with `/` as the
    /// separator; from 2.6 a `!` pattern that does not match rejects the source at once.
    pub fn permits_source(&self, repo_url: &str, version: ArgoCdVersion) -> bool {
        let src = normalize_git_url(repo_url);
        let negation = version.at_least(2, 6);
        let mut any = false;
        for pattern in &self.source_repos {
            let deny = negation && pattern.starts_with('!');
            let normalized = if deny {
                format!("!{}", normalize_git_url(&pattern[1..]))
            } else {
                normalize_git_url(pattern)
            };
            if argo_glob_match(&normalized, &src, negation, &['/']) {
                any = true;
            } else if deny {
                return false;
            }
        }
        any
    }

    /// `IsDestinationPermitted` for the destination an Application writes, as far as it can be
    /// known without the cluster Secrets: the other half of the cluster's identity (its name when
    /// the Application gives a server, and the reverse) is unknown, except for the local cluster
    /// whose default name is `in-cluster` (an assumption, said in [`DestinationVerdict::assumed`]).
    pub fn destination_verdict(
        &self,
        written: &Destination,
        version: ArgoCdVersion,
    ) -> DestinationVerdict {
        let unknown = |why: &str| DestinationVerdict {
            verdict: Verdict::Unknown,
            assumed: None,
            why: why.to_string(),
        };
        if !written.server.is_empty() && !written.name.is_empty() {
            return unknown("the Application sets both server and name, which Argo CD refuses");
        }
        if written.server.is_empty() && written.name.is_empty() {
            return unknown("the Application sets no destination cluster");
        }
        let negation = version.at_least(2, 5);
        let name_inferred = version.at_least(2, 14);
        let (cluster, local) = if !written.server.is_empty() {
            let name = if name_inferred {
                Side::Unknown
            } else {
                Side::Known(String::new())
            };
            let local = (written.server == IN_CLUSTER_SERVER && name_inferred).then(|| Cluster {
                server: Side::Known(written.server.clone()),
                name: Side::Known(IN_CLUSTER_NAME.into()),
            });
            (
                Cluster {
                    server: Side::Known(written.server.clone()),
                    name,
                },
                local,
            )
        } else {
            let local = (written.name == IN_CLUSTER_NAME).then(|| Cluster {
                server: Side::Known(IN_CLUSTER_SERVER.into()),
                name: Side::Known(written.name.clone()),
            });
            (
                Cluster {
                    server: Side::Unknown,
                    name: Side::Known(written.name.clone()),
                },
                local,
            )
        };
        let eval = |c: &Cluster| self.destination_matched(c, &written.namespace, version);
        let (matched, assumed) = match (eval(&cluster), local) {
            (Some(m), _) => (m, None),
            (None, Some(local)) => match eval(&local) {
                Some(m) => (
                    m,
                    Some(
                        "the local cluster keeps its default name in-cluster (server https://kubernetes.default.svc)",
                    ),
                ),
                None => {
                    return unknown("the project's patterns depend on the cluster's other name");
                }
            },
            (None, None) => {
                return unknown("the project's patterns depend on the cluster's other name");
            }
        };
        if !matched {
            return DestinationVerdict {
                verdict: Verdict::Denied,
                assumed,
                why: self.destination_denial(version),
            };
        }
        if self.permit_only_project_scoped_clusters && negation {
            return unknown(
                "permitOnlyProjectScopedClusters: the cluster must also be one of the project's own clusters (cluster Secrets are not read)",
            );
        }
        DestinationVerdict {
            verdict: Verdict::Permitted,
            assumed,
            why: String::new(),
        }
    }

    fn destination_denial(&self, version: ArgoCdVersion) -> String {
        if self.destinations.is_empty() {
            return "the project has no spec.destinations, which permits none".into();
        }
        if version.at_least(2, 5)
            && self.destinations.iter().any(|d| {
                d.server.starts_with('!') || d.name.starts_with('!') || d.namespace.starts_with('!')
            })
        {
            return "no entry of spec.destinations matches it, or a negated (`!`) entry rejects it"
                .into();
        }
        "no entry of spec.destinations matches it".into()
    }

    /// `isDestinationMatched` of `version`, or `None` when the answer depends on a half of the
    /// cluster's identity that is not known.
    fn destination_matched(
        &self,
        cluster: &Cluster,
        namespace: &str,
        version: ArgoCdVersion,
    ) -> Option<bool> {
        let negation = version.at_least(2, 5);
        // Per entry: (name, server, namespace) matches; `None` where unknown.
        let cells: Vec<[Option<bool>; 3]> = self
            .destinations
            .iter()
            .map(|d| {
                [
                    side_match(&d.name, &cluster.name, negation),
                    side_match(&d.server, &cluster.server, negation),
                    Some(argo_glob_match(&d.namespace, namespace, negation, &[])),
                ]
            })
            .collect();
        let unknowns = cells.iter().flatten().filter(|c| c.is_none()).count();
        if unknowns > 12 {
            return None;
        }
        let mut answer = None;
        for bits in 0u32..(1 << unknowns) {
            let mut k = 0;
            let filled: Vec<[bool; 3]> = cells
                .iter()
                .map(|row| {
                    row.map(|c| {
                        c.unwrap_or_else(|| {
                            let b = bits & (1 << k) != 0;
                            k += 1;
                            b
                        })
                    })
                })
                .collect();
            let got = self.matched_with(&filled, version);
            match answer {
                None => answer = Some(got),
                Some(a) if a != got => return None,
                Some(_) => {}
            }
        }
        answer
    }

    /// The loop of `isDestinationMatched` over entries whose field matches are `filled`
    /// (`[name, server, namespace]`).
    fn matched_with(&self, filled: &[[bool; 3]], version: ArgoCdVersion) -> bool {
        let deny = |p: &str| p.starts_with('!');
        if !version.at_least(2, 5) {
            return filled.iter().any(|[n, s, ns]| (*s || *n) && *ns);
        }
        let short_circuit = version.at_least(2, 14);
        let mut any = false;
        let mut no_deny = true;
        for (d, [n, s, ns]) in self.destinations.iter().zip(filled) {
            let matched = (*s || *n) && *ns;
            if matched {
                any = true;
            } else if short_circuit {
                // Go: `(!n && deny(name)) || (!s && deny(server)) && ns` — && binds tighter.
                if (!*n && deny(&d.name)) || (!*s && deny(&d.server) && *ns) {
                    return false;
                }
                if !*ns && deny(&d.namespace) && *s {
                    return false;
                }
            } else if (!*n && deny(&d.name))
                || (!*s && deny(&d.server))
                || (!*ns && deny(&d.namespace))
            {
                no_deny = false;
            }
        }
        any && no_deny
    }

    /// What an Application asks of this project, judged: its destination and each source
    /// repository.
    pub fn judge(&self, request: &AppRequest, version: ArgoCdVersion) -> Judgement {
        Judgement {
            destination: self.destination_verdict(&request.destination, version),
            repos: request
                .repos
                .iter()
                .map(|r| RepoVerdict {
                    pointer: r.pointer.clone(),
                    repo_url: r.repo_url.clone(),
                    permitted: self.permits_source(&r.repo_url, version),
                })
                .collect(),
        }
    }

    /// The `input.argocd.config.projects.<name>` document: the keys rules have read since
    /// issue 13 (`cluster_resource_whitelist` … `destinations`), and more.
    pub fn config_input(&self) -> Value {
        let gk = |l: &[ResourceRef], named: bool| -> Vec<Value> {
            l.iter()
                .map(|e| {
                    if named {
                        json!({"group": e.group, "kind": e.kind, "name": e.name})
                    } else {
                        json!({"group": e.group, "kind": e.kind})
                    }
                })
                .collect()
        };
        let mut m = Map::new();
        m.insert(
            "cluster_resource_whitelist".into(),
            json!(gk(&self.cluster_resource_whitelist, true)),
        );
        m.insert(
            "cluster_resource_blacklist".into(),
            json!(gk(&self.cluster_resource_blacklist, true)),
        );
        m.insert(
            "namespace_resource_whitelist".into(),
            match &self.namespace_resource_whitelist {
                Some(l) => json!(gk(l, false)),
                None => Value::Null,
            },
        );
        m.insert(
            "namespace_resource_blacklist".into(),
            json!(gk(&self.namespace_resource_blacklist, false)),
        );
        m.insert("destinations".into(), json!(self.destinations));
        m.insert("source_repos".into(), json!(self.source_repos));
        m.insert("source_namespaces".into(), json!(self.source_namespaces));
        m.insert(
            "permit_only_project_scoped_clusters".into(),
            json!(self.permit_only_project_scoped_clusters),
        );
        m.insert("roles".into(), json!(self.roles));
        m.insert(
            "sync_windows".into(),
            Value::Array(self.sync_windows.iter().map(SyncWindow::to_value).collect()),
        );
        Value::Object(m)
    }
}

/// Reads a list of mappings with `read`, noting items that are not mappings.
fn items<T>(
    list: &[Value],
    at: &str,
    notes: &mut Notes,
    mut read: impl FnMut(&mut Fields<'_>, &mut Notes) -> T,
) -> Vec<T> {
    let mut out = Vec::new();
    for (i, item) in list.iter().enumerate() {
        let mut f = Fields::of(Some(item), &format!("{at}/{i}"), notes);
        if f.present() {
            out.push(read(&mut f, notes));
        }
        f.finish(notes);
    }
    out
}

fn refs(
    spec: &mut Fields<'_>,
    key: &'static str,
    named: bool,
    notes: &mut Notes,
) -> Vec<ResourceRef> {
    let at = spec.pointer(key);
    items(spec.list(key, notes), &at, notes, |f, n| ResourceRef {
        group: f.string("group", n),
        kind: f.string("kind", n),
        name: if named {
            f.string("name", n)
        } else {
            String::new()
        },
    })
}

/// One half of a cluster's identity as Argo CD resolves it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Side {
    Known(String),
    /// A non-empty value this input does not tell.
    Unknown,
}

#[derive(Debug, Clone)]
struct Cluster {
    server: Side,
    name: Side,
}

/// `dst.X != "" && globMatch(pattern, dst.X, negation)`, or `None` when `dst.X` is unknown and
/// the pattern's answer depends on it.
fn side_match(pattern: &str, side: &Side, negation: bool) -> Option<bool> {
    match side {
        Side::Known(v) => Some(!v.is_empty() && argo_glob_match(pattern, v, negation, &[])),
        Side::Unknown => {
            let (negated, rest) = match pattern.strip_prefix('!') {
                Some(rest) if negation => (true, rest),
                _ => (false, pattern),
            };
            // What `rest` answers for every non-empty value, when it does not depend on it.
            let plain = match rest {
                "*" | "**" => Some(true),
                "" => Some(false),
                _ if glob::Glob::compile(rest, &[]).is_err() => Some(false),
                _ => None,
            };
            plain.map(|m| m != negated)
        }
    }
}

/// Whether Argo CD permits something.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Permitted.
    Permitted,
    /// Refused.
    Denied,
    /// Depends on what this input does not tell.
    Unknown,
}

/// [`AppProject::destination_verdict`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DestinationVerdict {
    /// The verdict.
    pub verdict: Verdict,
    /// The assumption it rests on, if any (else it is proven from the project alone).
    pub assumed: Option<&'static str>,
    /// Why it is denied or unknown.
    pub why: String,
}

/// One repository an Application uses, judged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepoVerdict {
    /// JSON pointer of its `repoURL` in the Application.
    pub pointer: String,
    /// The `repoURL` as written.
    pub repo_url: String,
    /// `IsSourcePermitted`.
    pub permitted: bool,
}

/// [`AppProject::judge`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Judgement {
    /// The destination.
    pub destination: DestinationVerdict,
    /// Each source repository, in the order Argo CD checks them.
    pub repos: Vec<RepoVerdict>,
}

/// A repository an Application reads from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoRef {
    /// JSON pointer of the `repoURL`.
    pub pointer: String,
    /// The URL as written.
    pub repo_url: String,
}

/// What an Application asks of its project: `spec.project`, `spec.destination`, and the
/// repositories Argo CD checks (`ValidatePermissions`: the dry source of a source hydrator, else
/// every `spec.sources[]`, else `spec.source`; an empty `repoURL` is refused for another reason
/// and left out).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppRequest {
    /// `spec.project`; `default` when empty (`ApplicationSpec.GetProject`).
    pub project: String,
    /// `spec.destination` as written.
    pub destination: Destination,
    /// The repositories.
    pub repos: Vec<RepoRef>,
}

impl AppRequest {
    /// Reads an Application object.
    pub fn of_application(v: &Value) -> AppRequest {
        let spec = v.get("spec");
        let s = |p: &str| {
            spec.and_then(|s| s.pointer(p))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let project = match s("/project") {
            p if p.is_empty() => "default".to_string(),
            p => p,
        };
        let mut repos = Vec::new();
        let mut push = |pointer: String, url: String| {
            if !url.is_empty() {
                repos.push(RepoRef {
                    pointer,
                    repo_url: url,
                });
            }
        };
        let sources = spec
            .and_then(|s| s.get("sources"))
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty());
        if spec
            .and_then(|s| s.get("sourceHydrator"))
            .is_some_and(Value::is_object)
        {
            push(
                "/spec/sourceHydrator/drySource/repoURL".into(),
                s("/sourceHydrator/drySource/repoURL"),
            );
        } else if let Some(sources) = sources {
            for (i, src) in sources.iter().enumerate() {
                let url = src
                    .get("repoURL")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                push(format!("/spec/sources/{i}/repoURL"), url.to_string());
            }
        } else {
            push("/spec/source/repoURL".into(), s("/source/repoURL"));
        }
        AppRequest {
            project,
            destination: Destination {
                server: s("/destination/server"),
                name: s("/destination/name"),
                namespace: s("/destination/namespace"),
            },
            repos,
        }
    }
}

/// Argo CD's `git.NormalizeGitURL`: lower case, trimmed, `user@host:path` SSH URLs rewritten to
/// `user@host/path`, a trailing `.git` dropped. (Go then re-serialises the URL with `net/url`,
/// which leaves the URLs and patterns projects use unchanged.)
pub fn normalize_git_url(repo: &str) -> String {
    let mut repo = repo.trim().to_lowercase();
    if is_ssh_url(&repo) && !repo.starts_with("ssh://") {
        repo = format!("ssh://{}", repo.replacen(':', "/", 1));
    }
    let repo = repo.strip_suffix(".git").unwrap_or(&repo);
    repo.strip_prefix("ssh://").unwrap_or(repo).to_string()
}

/// `^(ssh://)?([^/:]*?)@[^@]+$`
fn is_ssh_url(url: &str) -> bool {
    let rest = url.strip_prefix("ssh://").unwrap_or(url);
    let Some(at) = rest.find('@') else {
        return false;
    };
    let (user, host) = rest.split_at(at);
    !user.contains(['/', ':']) && host.len() > 1 && !host[1..].contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ArgoCdVersion {
        s.parse().unwrap()
    }

    fn project(spec: Value) -> AppProject {
        AppProject::from_value(&json!({"metadata": {"name": "p"}, "spec": spec}))
    }

    fn dest(server: &str, name: &str, namespace: &str) -> Destination {
        Destination {
            server: server.into(),
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    #[test]
    fn reads_every_field_and_keeps_unknown_and_malformed_ones() {
        let p = AppProject::from_value(&json!({
            "metadata": {"name": "team-a", "namespace": "argocd"},
            "spec": {
                "description": "Team A",
                "sourceRepos": ["https://github.com/org/*", 3],
                "sourceNamespaces": ["team-a-*"],
                "destinations": [{"server": "*", "namespace": "team-a", "nmae": "x"}],
                "clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team-a"}],
                "namespaceResourceWhitelist": [],
                "roles": [{"name": "ci", "policies": ["p, proj:team-a:ci, applications, sync, team-a/*, allow"]}],
                "syncWindows": [{"kind": "deny", "schedule": "0 22 * * *", "duration": "8h", "applications": ["*"]}],
                "orphanedResources": {"warn": true, "ignore": [{"kind": "ConfigMap"}]},
                "signatureKeys": [{"keyID": "ABCDEF"}],
                "permitOnlyProjectScopedClusters": "yes",
                "destinationServiceAccounts": [{"server": "*", "namespace": "*", "defaultServiceAccount": "deployer"}],
                "clusterResourceWhitelst": []
            }
        }));
        assert_eq!(p.name, "team-a");
        assert_eq!(p.namespace, "argocd");
        assert_eq!(p.source_repos, ["https://github.com/org/*"]);
        assert_eq!(p.destinations, [dest("*", "", "team-a")]);
        assert_eq!(p.cluster_resource_whitelist[0].name, "team-a");
        assert_eq!(p.namespace_resource_whitelist, Some(vec![]));
        assert_eq!(p.roles, ["ci"]);
        assert_eq!(p.sync_windows.len(), 1);
        assert_eq!(p.orphaned_resources.as_ref().unwrap().warn, Some(true));
        assert_eq!(p.signature_keys, ["ABCDEF"]);
        assert!(!p.permit_only_project_scoped_clusters);
        assert_eq!(
            p.destination_service_accounts[0].default_service_account,
            "deployer"
        );
        assert_eq!(
            p.notes.unknown,
            ["/spec/destinations/0/nmae", "/spec/clusterResourceWhitelst"]
        );
        let malformed: Vec<&str> = p
            .notes
            .malformed
            .iter()
            .map(|m| m.pointer.as_str())
            .collect();
        assert_eq!(
            malformed,
            [
                "/spec/sourceRepos/1",
                "/spec/permitOnlyProjectScopedClusters"
            ]
        );
    }

    // types_test.go TestAppProject_IsGroupKindPermitted and _IsGroupKindNamePermitted.
    #[test]
    fn kinds_follow_white_and_blacklist_semantics() {
        let v33 = v("3.3.0");
        // No cluster whitelist: no cluster-scoped kind; no namespace whitelist: every namespaced one.
        let empty = project(json!({}));
        assert!(!empty.permits_kind("", "Namespace", "a", false, v33));
        assert!(empty.permits_kind("apps", "Deployment", "d", true, v33));
        let p = project(json!({
            "namespaceResourceWhitelist": [{"group": "apps", "kind": "ReplicaSet"}],
            "namespaceResourceBlacklist": [{"group": "apps", "kind": "Deployment"}],
        }));
        assert!(p.permits_kind("apps", "ReplicaSet", "", true, v33));
        assert!(!p.permits_kind("apps", "Deployment", "", true, v33));
        let p = project(
            json!({"namespaceResourceWhitelist": [{"group": "apps", "kind": "*"}],
            "namespaceResourceBlacklist": [{"group": "apps", "kind": "Deployment"}]}),
        );
        assert!(p.permits_kind("apps", "ReplicaSet", "", true, v33));
        assert!(!p.permits_kind("apps", "Deployment", "", true, v33));
        // An empty (present) namespace whitelist permits nothing.
        assert!(
            !project(json!({"namespaceResourceWhitelist": []})).permits_kind(
                "",
                "ConfigMap",
                "",
                true,
                v33
            )
        );
        let p = project(
            json!({"clusterResourceWhitelist": [{"group": "*", "kind": "*"}],
            "clusterResourceBlacklist": [{"group": "", "kind": "Namespace"}]}),
        );
        assert!(p.permits_kind("rbac.authorization.k8s.io", "ClusterRole", "", false, v33));
        assert!(!p.permits_kind("", "Namespace", "", false, v33));
        // Names count from 3.3.
        let p = project(
            json!({"clusterResourceWhitelist": [{"group": "", "kind": "Namespace", "name": "team-*"}]}),
        );
        assert!(p.permits_kind("", "Namespace", "team-a", false, v33));
        assert!(!p.permits_kind("", "Namespace", "kube-system", false, v33));
        assert!(p.permits_kind("", "Namespace", "kube-system", false, v("3.2.0")));
        // A malformed pattern matches nothing.
        let p = project(json!({"clusterResourceWhitelist": [{"group": "[", "kind": "*"}]}));
        assert!(!p.permits_kind("[", "Namespace", "", false, v33));
    }

    // types_test.go TestAppProject_IsSourcePermitted and the deny-source cases.
    #[test]
    fn sources_are_normalised_globs_with_negation_from_2_6() {
        let v26 = v("2.6.0");
        let p = project(json!({"sourceRepos": ["https://github.com/argoproj/test.git"]}));
        assert!(p.permits_source("https://github.com/argoproj/test", v26));
        assert!(p.permits_source("https://GITHUB.com/argoproj/test.git", v26));
        assert!(!p.permits_source("https://github.com/argoproj/test2", v26));
        let p = project(json!({"sourceRepos": ["ssh://git@GITHUB.com:argoproj/test"]}));
        assert!(p.permits_source("ssh://git@github.com:argoproj/test", v26));
        let p = project(json!({"sourceRepos": ["git@github.com:argoproj/*"]}));
        assert!(p.permits_source("git@github.com:argoproj/test.git", v26));
        let p = project(json!({"sourceRepos": ["https://github.com/argoproj/*"]}));
        assert!(!p.permits_source("https://github.com/argoproj/sub/repo", v26));
        let p = project(json!({"sourceRepos": ["https://github.com/argoproj/**"]}));
        assert!(p.permits_source("https://github.com/argoproj/sub/repo", v26));
        assert!(!project(json!({})).permits_source("https://github.com/a/b", v26));
        let p = project(json!({"sourceRepos": ["*"]}));
        assert!(p.permits_source("https://github.com/a/b", v26));
        // Deny sources (2.6+): `!` patterns that do not match reject.
        let p = project(json!({"sourceRepos": ["*", "!https://github.com/argoproj/forbidden"]}));
        assert!(p.permits_source("https://github.com/argoproj/ok", v26));
        assert!(!p.permits_source("https://github.com/argoproj/forbidden", v26));
        let p = project(json!({"sourceRepos": ["!https://gitlab.com/group/*"]}));
        // A lone negation permits everything it does not name.
        assert!(p.permits_source("https://github.com/argoproj/ok", v26));
        assert!(!p.permits_source("https://gitlab.com/group/x", v26));
        let p = project(json!({"sourceRepos": ["!https://github.com/argoproj/forbidden", "*"]}));
        assert!(!p.permits_source("https://github.com/argoproj/forbidden", v26));
        // Before 2.6, `!` is a literal character.
        assert!(p.permits_source("https://github.com/argoproj/forbidden", v("2.5.0")));
    }

    #[test]
    fn normalises_git_urls_like_argo_cd() {
        assert_eq!(
            normalize_git_url("git@GitHub.com:argoproj/argo-cd.git"),
            "git@github.com/argoproj/argo-cd"
        );
        assert_eq!(
            normalize_git_url("ssh://git@github.com/argoproj/argo-cd"),
            "git@github.com/argoproj/argo-cd"
        );
        assert_eq!(
            normalize_git_url(" https://github.com/argoproj/argo-cd.git "),
            "https://github.com/argoproj/argo-cd"
        );
        assert_eq!(normalize_git_url("*"), "*");
    }

    // types_test.go TestAppProject_IsDestinationPermitted and the deny-destination tables.
    #[test]
    fn destinations_with_globs() {
        let v3 = v("3.0.0");
        let p = project(
            json!({"destinations": [{"server": "https://kubernetes.default.svc", "namespace": "default"}]}),
        );
        let ok = |p: &AppProject, d: Destination| p.destination_verdict(&d, v3).verdict;
        assert_eq!(
            ok(&p, dest("https://kubernetes.default.svc", "", "default")),
            Verdict::Permitted
        );
        assert_eq!(
            ok(
                &p,
                dest("https://kubernetes.default.svc", "", "kube-system")
            ),
            Verdict::Denied
        );
        assert_eq!(
            ok(&p, dest("https://my-cluster", "", "default")),
            Verdict::Denied
        );
        let p = project(json!({"destinations": [{"server": "*", "namespace": "team-a-*"}]}));
        assert_eq!(
            ok(&p, dest("https://any", "", "team-a-dev")),
            Verdict::Permitted
        );
        assert_eq!(ok(&p, dest("https://any", "", "team-b")), Verdict::Denied);
        // Names: the other half of the cluster is unknown...
        let p = project(json!({"destinations": [{"name": "prod", "namespace": "*"}]}));
        assert_eq!(ok(&p, dest("", "prod", "x")), Verdict::Permitted);
        assert_eq!(
            ok(&p, dest("https://prod.example.com", "", "x")),
            Verdict::Unknown
        );
        // ...except for the local cluster, by assumption.
        let d = p.destination_verdict(&dest("https://kubernetes.default.svc", "", "x"), v3);
        assert_eq!(d.verdict, Verdict::Denied);
        assert!(d.assumed.is_some());
        // Before 2.14 an Application giving a server has no name: name entries never match it.
        let d = p.destination_verdict(&dest("https://prod.example.com", "", "x"), v("2.13.0"));
        assert_eq!((d.verdict, d.assumed), (Verdict::Denied, None));
        // No destinations: nothing is permitted.
        assert_eq!(
            ok(
                &project(json!({})),
                dest("https://kubernetes.default.svc", "", "a")
            ),
            Verdict::Denied
        );
        // Both set or neither: another refusal, not judged here.
        assert_eq!(ok(&p, dest("https://a", "a", "x")), Verdict::Unknown);
        // permitOnlyProjectScopedClusters: the cluster Secrets decide.
        let p = project(
            json!({"destinations": [{"server": "*", "namespace": "*"}], "permitOnlyProjectScopedClusters": true}),
        );
        assert_eq!(ok(&p, dest("https://a", "", "x")), Verdict::Unknown);
    }

    // types_test.go TestAppProject_IsNegatedDestinationPermitted (3.x semantics) and the 2.5-2.13
    // loop it replaced (argo-cd#20045).
    #[test]
    fn negated_destinations_by_release() {
        let v3 = v("3.0.0");
        let ok = |spec: Value, d: Destination, ver: ArgoCdVersion| {
            project(spec).destination_verdict(&d, ver).verdict
        };
        let both = json!({"destinations": [
            {"server": "*", "namespace": "*"},
            {"server": "!https://kubernetes.default.svc", "namespace": "kube-system"}
        ]});
        // `!https://kubernetes.default.svc` matches every other server; where the namespace
        // matches and the server does not, it rejects at once (2.14+)...
        let local = "https://kubernetes.default.svc";
        assert_eq!(
            ok(both.clone(), dest("https://other", "", "kube-system"), v3),
            Verdict::Permitted
        );
        assert_eq!(
            ok(both.clone(), dest(local, "", "kube-system"), v3),
            Verdict::Denied
        );
        assert_eq!(
            ok(both.clone(), dest(local, "", "default"), v3),
            Verdict::Permitted
        );
        // ...while 2.5-2.13 reject on any unmatched negated field, whatever the namespace
        // (argo-cd#19804: every Application on the local cluster was refused).
        let v213 = v("2.13.0");
        assert_eq!(
            ok(both.clone(), dest(local, "", "default"), v213),
            Verdict::Denied
        );
        assert_eq!(
            ok(both.clone(), dest("https://other", "", "default"), v213),
            Verdict::Permitted
        );
        // Before 2.5 `!` is a literal: the first entry permits everything.
        assert_eq!(
            ok(both, dest(local, "", "kube-system"), v("2.4.0")),
            Verdict::Permitted
        );
        let ns = json!({"destinations": [
            {"server": "*", "namespace": "*"},
            {"server": "*", "namespace": "!kube-system"}
        ]});
        assert_eq!(
            ok(ns.clone(), dest("https://a", "", "kube-system"), v3),
            Verdict::Denied
        );
        assert_eq!(
            ok(ns, dest("https://a", "", "default"), v3),
            Verdict::Permitted
        );
        // A negated name: unknown name, unless the answer does not depend on it.
        let name = json!({"destinations": [{"server": "*", "namespace": "*"}, {"name": "!*", "namespace": "*"}]});
        assert_eq!(ok(name, dest("https://a", "", "x"), v3), Verdict::Denied);
    }

    #[test]
    fn applications_ask_for_their_destination_and_every_checked_repository() {
        let r = AppRequest::of_application(&json!({"spec": {
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "a"},
            "sources": [{"repoURL": "https://github.com/o/a"}, {"repoURL": "https://charts.example.com", "chart": "c"}],
            "source": {"repoURL": "https://ignored"}
        }}));
        assert_eq!(r.project, "default");
        let urls: Vec<&str> = r.repos.iter().map(|r| r.pointer.as_str()).collect();
        assert_eq!(urls, ["/spec/sources/0/repoURL", "/spec/sources/1/repoURL"]);
        let r = AppRequest::of_application(&json!({"spec": {"project": "p",
            "sourceHydrator": {"drySource": {"repoURL": "https://github.com/o/dry"}}}}));
        assert_eq!(r.repos[0].repo_url, "https://github.com/o/dry");
        assert_eq!(r.project, "p");
    }
}
