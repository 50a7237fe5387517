//! From rule outcomes to findings: effective actions, exemptions, `SG000`, locations, patches.
//!
//! The namespace used for overrides and exemptions is the object's `metadata.namespace`. A
//! namespaced object without one (Argo CD fills in the destination namespace at sync time) is
//! treated like a cluster-scoped object: only the global `actions` overrides apply to it.

use std::sync::Arc;

use crate::finding::{Action, Finding, ResourceRef, Severity, Status};
use crate::model::Resource;
use crate::mutate;

use super::config::Config;
use super::{RuleMeta, RuleOutcome, SKIP_ANNOTATION, SKIP_REASON_ANNOTATION, Verdict};

/// JSON pointer of the skip annotation (`/` in the key is escaped as `~1`).
const SKIP_POINTER: &str = "/metadata/annotations/syncguard.dev~1skip";

/// What the object's annotations ask to skip.
enum Skip {
    /// No (usable) skip annotation, or annotation exemptions are disabled.
    None,
    /// Honoured: these rules (or all), for this reason.
    Honoured { rules: SkipList, reason: String },
    /// A skip annotation without a reason: not honoured, reported as SG000.
    Unexplained { raw: String },
}

enum SkipList {
    All,
    Ids(Vec<String>),
}

impl SkipList {
    fn contains(&self, id: &str) -> bool {
        match self {
            SkipList::All => true,
            SkipList::Ids(ids) => ids.iter().any(|i| i == id),
        }
    }
}

fn read_skip(config: &Config, resource: &Resource) -> Skip {
    if !config.annotation_exemptions {
        return Skip::None;
    }
    let Some(raw) = resource.annotation(SKIP_ANNOTATION) else {
        return Skip::None;
    };
    let ids: Vec<String> = raw
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    if ids.is_empty() {
        return Skip::None;
    }
    let rules = if ids
        .iter()
        .any(|i| i == "*" || i.eq_ignore_ascii_case("all"))
    {
        SkipList::All
    } else {
        SkipList::Ids(ids)
    };
    match resource
        .annotation(SKIP_REASON_ANNOTATION)
        .map(str::trim)
        .filter(|r| !r.is_empty())
    {
        Some(reason) => Skip::Honoured {
            rules,
            reason: reason.to_string(),
        },
        None => Skip::Unexplained {
            raw: raw.trim().to_string(),
        },
    }
}

/// Resolves outcomes for one resource into findings (SG000 first, then rules in outcome order).
pub(crate) fn findings(
    config: &Config,
    exemption_rule: &Arc<RuleMeta>,
    resource: &Resource,
    outcomes: Vec<RuleOutcome>,
) -> Vec<Finding> {
    let namespace = resource.namespace.as_deref();
    let exempt_reason = config.exemption_for(namespace).map(|pattern| {
        format!(
            "namespace `{}` is exempt (exempt_namespaces: {pattern})",
            namespace.unwrap_or_default()
        )
    });
    let skip = read_skip(config, resource);
    let resource_ref = ResourceRef::from(resource);
    let mut out = Vec::new();

    let base = |rule: &RuleMeta, action: Action, status: Status, message: String| Finding {
        rule_id: rule.id.clone(),
        title: rule.title.clone(),
        severity: rule.severity,
        action,
        status,
        message,
        resource: resource_ref.clone(),
        application: None,
        location: None,
        path: None,
        patch: None,
        docs: rule.docs.clone(),
        cause: None,
        also: Vec::new(),
    };

    if let Skip::Unexplained { raw } = &skip {
        let rule = exemption_rule.as_ref();
        let action = config.action_for(&rule.id, namespace, rule.action);
        if action != Action::Off {
            let status = exempt_reason
                .clone()
                .map_or(Status::Open, |reason| Status::Skipped { reason });
            let message = format!(
                "`{SKIP_ANNOTATION}: {raw}` is not honoured: add a `{SKIP_REASON_ANNOTATION}` \
                 annotation saying why the exemption is safe"
            );
            out.push(Finding {
                location: resource.locate(SKIP_POINTER),
                path: Some(SKIP_POINTER.to_string()),
                ..base(rule, action, status, message)
            });
        }
    }

    for outcome in outcomes {
        let rule = outcome.rule.as_ref();
        let action = config.action_for(&rule.id, namespace, rule.action);
        if action == Action::Off {
            continue;
        }
        // Exemption wins over everything, including policy errors: the owner chose not to have
        // this rule judge this object.
        let exempted = exempt_reason.clone().or_else(|| match &skip {
            Skip::Honoured { rules, reason } if rules.contains(rule.id.as_str()) => {
                Some(reason.clone())
            }
            _ => None,
        });
        let status_or = |fallback: Status| {
            exempted
                .clone()
                .map_or(fallback, |reason| Status::Skipped { reason })
        };
        match outcome.verdict {
            Verdict::Failed(message) => out.push(Finding {
                location: resource.locate(""),
                ..base(
                    rule,
                    action,
                    status_or(Status::PolicyError),
                    format!("rule could not be evaluated: {message}"),
                )
            }),
            Verdict::Reported {
                violations,
                patches,
            } => {
                let (patch, patch_error) = if patches.is_empty() {
                    (None, None)
                } else {
                    match mutate::apply_patches(&resource.raw, &patches) {
                        Ok((_, p)) if p.0.is_empty() => (None, None),
                        Ok((_, p)) => (Some(p), None),
                        Err(e) => (None, Some(e)),
                    }
                };
                for v in violations {
                    let action = match v.action {
                        Some(own) => config.action_for(&rule.id, namespace, own),
                        None => action,
                    };
                    if action == Action::Off {
                        continue;
                    }
                    let severity = v.severity.unwrap_or(rule.severity);
                    out.push(Finding {
                        location: resource.locate(v.path.as_deref().unwrap_or("")),
                        path: v.path,
                        patch: patch.clone(),
                        severity,
                        action: informational(severity, action),
                        cause: v.cause,
                        ..base(rule, action, status_or(Status::Open), v.msg)
                    });
                }
                if let Some(e) = patch_error {
                    out.push(Finding {
                        location: resource.locate(""),
                        ..base(
                            rule,
                            action,
                            status_or(Status::PolicyError),
                            format!("the rule's patch cannot be applied: {e}"),
                        )
                    });
                }
            }
        }
    }
    out
}

/// An `info` finding states a fact whose acting on changes no sync (docs/severity.md): it is
/// recorded, never denied or warned about. `deny` and `warn` become `audit` (kept in JSON, SARIF
/// notes and PolicyReports, shown in text with `--show-info`); `mutate` keeps its patch, which
/// is safe whatever the severity. A configured `off` was handled before this.
pub fn informational(severity: Severity, action: Action) -> Action {
    match (severity, action) {
        (Severity::Info, Action::Deny | Action::Warn) => Action::Audit,
        _ => action,
    }
}
