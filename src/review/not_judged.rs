//! The Applications a review could not judge, and why: a source syncguard does not render
//! (another repository, a config management plugin), a chart that could not be pulled (the
//! repository unreachable, the credentials refused, the version not there), or one that failed
//! to render. A review that leaves an Application out says so first, so that
//! it never reads as "all clear"; what was already so on the base, or what a baseline file
//! accepts, does not fail the run.

use serde::{Deserialize, Serialize};

use super::snapshot::{AppId, AppState};

/// Why (part of) an Application was not rendered.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Reason {
    /// `chart-repository-unreachable`, `chart-credentials-refused`, `chart-version-not-found`,
    /// `chart-pull-failed` (a chart repository or OCI registry), `other-repository`, `plugin`,
    /// `not-rendered` (data a generator needs that syncguard does not read) or `render-error`.
    pub reason: &'static str,
    /// The source and the message.
    pub detail: String,
}

/// How a not-judged Application weighs on the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Standing {
    /// Not judged on the head, for reasons the base did not have: the run exits 2.
    New,
    /// Not judged on either revision, for the same reasons: reported, not failing.
    Unchanged,
    /// Not judged on the head, accepted by `--baseline`: reported, not failing.
    Accepted,
    /// Judged on the head, not on the base: its objects cannot be diffed, its findings are
    /// judged as new.
    BaseOnly,
}

/// One Application not judged.
#[derive(Debug, Clone, Serialize)]
pub struct NotJudged {
    #[serde(flatten)]
    pub id: AppId,
    /// Where it is defined (`file:line`), on the head else the base.
    pub origin: Option<String>,
    /// Why on the head (empty when only the base was not judged).
    pub reasons: Vec<Reason>,
    /// Why on the base (empty when judged there or absent).
    pub base_reasons: Vec<Reason>,
    /// It rendered on the base and no longer renders on the head: an error of the change,
    /// never its objects "removed" nor its findings "fixed".
    pub rendered_on_base: bool,
    pub standing: Standing,
}

fn classify(skipped: bool, line: &str) -> &'static str {
    use crate::render::{
        CHART_CREDENTIALS_REFUSED, CHART_PULL_FAILED, CHART_REPOSITORY_UNREACHABLE,
        CHART_VERSION_NOT_FOUND, KUSTOMIZE_HELM_NOT_ENABLED,
    };
    // A chart pull's error starts (after the source) with the reason render gave it.
    let chart_reason = |reason: &str| line.contains(&format!(": {reason}: "));
    if line.contains("config management plugin") {
        "plugin"
    } else if chart_reason(CHART_REPOSITORY_UNREACHABLE) {
        "chart-repository-unreachable"
    } else if chart_reason(CHART_CREDENTIALS_REFUSED) {
        "chart-credentials-refused"
    } else if chart_reason(CHART_VERSION_NOT_FOUND) {
        "chart-version-not-found"
    } else if chart_reason(CHART_PULL_FAILED) {
        "chart-pull-failed"
    } else if line.contains(KUSTOMIZE_HELM_NOT_ENABLED) {
        "kustomize-helm-not-enabled"
    } else if line.contains("not the local repository")
        || line.contains("is not a local repository")
    {
        "other-repository"
    } else if skipped {
        "not-rendered"
    } else {
        "render-error"
    }
}

/// Why `app` was not (fully) rendered; empty when it was.
pub fn reasons(app: &AppState) -> Vec<Reason> {
    let mut out: Vec<Reason> = app
        .skipped
        .iter()
        .map(|l| (true, l))
        .chain(app.errors.iter().map(|l| (false, l)))
        .map(|(skipped, l)| Reason {
            reason: classify(skipped, l),
            detail: l.clone(),
        })
        .collect();
    out.sort();
    out
}

/// `id` when it cannot be diffed: not judged on the head (`head`), or on the base while
/// judged on the head. `None`: judged on every revision it exists on, or removed by the head.
pub fn of(id: &AppId, base: Option<&AppState>, head: Option<&AppState>) -> Option<NotJudged> {
    let head_app = head?;
    let on_head = reasons(head_app);
    let on_base = base.map(reasons).unwrap_or_default();
    if on_head.is_empty() && on_base.is_empty() {
        return None;
    }
    let standing = if on_head.is_empty() {
        Standing::BaseOnly
    } else if base.is_some() && on_head == on_base {
        Standing::Unchanged
    } else {
        Standing::New
    };
    Some(NotJudged {
        id: id.clone(),
        origin: head_app.origin.clone(),
        rendered_on_base: base.is_some() && on_base.is_empty() && !on_head.is_empty(),
        reasons: on_head,
        base_reasons: on_base,
        standing,
    })
}

impl NotJudged {
    /// One line: what happened on which revision.
    pub fn summary(&self) -> &'static str {
        match (self.standing, self.rendered_on_base) {
            (Standing::BaseOnly, _) => "not judged on the base; judged on the head",
            (Standing::Unchanged, _) => "not judged on either revision (unchanged)",
            (Standing::Accepted, _) => "not judged (accepted by the baseline)",
            (Standing::New, true) => "rendered on the base, no longer renders on the head",
            (Standing::New, false) => "not judged on the head",
        }
    }

    /// Not judged on the head.
    pub fn on_head(&self) -> bool {
        !self.reasons.is_empty()
    }
}

/// `--baseline FILE`: the Applications accepted as not judged, with the reason accepted (any
/// reason when absent). `review --format json` writes one ready to use under `baseline`.
///
/// ```json
/// {"version": 1, "not_judged": [
///   {"kind": "Application", "namespace": "argocd", "name": "legacy", "reason": "plugin"}]}
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub version: u32,
    #[serde(default)]
    pub not_judged: Vec<Accepted>,
}

/// One accepted Application (and reason).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accepted {
    /// `Application` (the default) or `ApplicationSet`.
    #[serde(default = "application")]
    pub kind: String,
    pub namespace: String,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

fn application() -> String {
    "Application".into()
}

impl Baseline {
    /// Reads a baseline file's text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let b: Baseline = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if b.version != 1 {
            return Err(format!("version {} is not 1", b.version));
        }
        Ok(b)
    }

    /// The baseline that accepts what `not_judged` lists as not judged on the head.
    pub fn of(not_judged: &[NotJudged]) -> Self {
        let mut entries: Vec<Accepted> = Vec::new();
        for n in not_judged {
            for r in &n.reasons {
                let e = Accepted {
                    kind: n.id.kind.to_string(),
                    namespace: n.id.namespace.clone(),
                    name: n.id.name.clone(),
                    reason: Some(r.reason.to_string()),
                };
                if !entries.contains(&e) {
                    entries.push(e);
                }
            }
        }
        Baseline {
            version: 1,
            not_judged: entries,
        }
    }

    /// Every reason `n` is not judged for is accepted.
    pub fn accepts(&self, n: &NotJudged) -> bool {
        n.on_head()
            && n.reasons.iter().all(|r| {
                self.not_judged.iter().any(|e| {
                    e.kind == n.id.kind
                        && e.namespace == n.id.namespace
                        && e.name == n.id.name
                        && e.reason.as_deref().is_none_or(|x| x == r.reason)
                })
            })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn not_judged(reason: &'static str) -> NotJudged {
        NotJudged {
            id: AppId {
                kind: "Application",
                namespace: "argocd".into(),
                name: "legacy".into(),
            },
            origin: None,
            reasons: vec![Reason {
                reason,
                detail: String::new(),
            }],
            base_reasons: Vec::new(),
            rendered_on_base: false,
            standing: Standing::New,
        }
    }

    #[test]
    fn chart_pull_failures_are_distinct_reasons() {
        let line = |reason: &str| {
            format!("source http://127.0.0.1:1: {reason}: chart web version \"1.0.0\" from x")
        };
        assert_eq!(
            classify(false, &line(crate::render::CHART_REPOSITORY_UNREACHABLE)),
            "chart-repository-unreachable"
        );
        assert_eq!(
            classify(false, &line(crate::render::CHART_CREDENTIALS_REFUSED)),
            "chart-credentials-refused"
        );
        assert_eq!(
            classify(false, &line(crate::render::CHART_VERSION_NOT_FOUND)),
            "chart-version-not-found"
        );
        assert_eq!(
            classify(false, &line(crate::render::CHART_PULL_FAILED)),
            "chart-pull-failed"
        );
        // A template that merely mentions the words is a render error.
        assert_eq!(
            classify(
                false,
                "source x: helm template failed: chart version not found in values"
            ),
            "render-error"
        );
    }

    #[test]
    fn a_baseline_accepts_its_application_for_its_reason_only() {
        let b = Baseline::parse(
            r#"{"version": 1, "not_judged": [{"namespace": "argocd", "name": "legacy", "reason": "plugin"}]}"#,
        )
        .unwrap();
        assert!(b.accepts(&not_judged("plugin")));
        assert!(!b.accepts(&not_judged("render-error")));
        let mut other = not_judged("plugin");
        other.id.namespace = "team".into();
        assert!(!b.accepts(&other));
        // What the JSON output offers round-trips.
        let written =
            serde_json::to_string(&Baseline::of(&[not_judged("chart-version-not-found")])).unwrap();
        assert!(
            Baseline::parse(&written)
                .unwrap()
                .accepts(&not_judged("chart-version-not-found"))
        );
        assert!(Baseline::parse(r#"{"version": 2}"#).is_err());
    }
}
