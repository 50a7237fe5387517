//! The applied-order recorder: what the real Argo CD controller did during one sync, read from
//! the API server's audit log (`tests/e2e/argocd-stack.sh` writes every create/update/patch/
//! delete at Metadata level).
//!
//! How a step boundary is recognised: after applying the tasks of a step that is not the last,
//! the application-controller sleeps `ARGOCD_SYNC_WAVE_DELAY` seconds (2 by default,
//! `controller/sync.go delayBetweenSyncWaves`) before it looks at health again; inside a step it
//! applies runs of one kind after another without sleeping. So writes closer together than
//! `gap` (default 1.5 s, less than the delay) belong to one step, and a longer silence starts the
//! next one. A step also ends where the phase of the written objects changes, when the sync's
//! own record (the operationState's `syncResult`, which gives each object's `syncPhase`) is
//! given — except after the sync's first writes when they are Namespaces only: the destination
//! Namespace of `CreateNamespace=true` is created before the dry run with phase PreSync, and the
//! first step follows it at once, whatever its phase (only the gap can separate them). Objects
//! of one step form an unordered group.
//!
//! What counts: successful (`code < 400`), non-dry-run writes by the controller's user to
//! anything but Argo CD's own objects and subresources; of each object only its first write of
//! the sync (later updates of a hook are finalizer removals) — deletions are always kept, as
//! their own entries (a BeforeHookCreation deletion precedes the hook's re-creation; a prune is
//! a deletion). The deletion of an object the same sync created is a hook's delete policy at work
//! (HookSucceeded, HookFailed): it is listed apart, as a cleanup, not as part of a step.

use serde::Serialize;
use serde_json::Value;

/// One write the controller made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Write {
    /// `create`, `patch`, `update` or `delete`.
    pub verb: String,
    /// API group, empty for the core group.
    pub group: String,
    /// The resource (plural, as the API server names it: `jobs`, `configmaps`).
    pub resource: String,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    pub name: String,
    /// The object's sync phase from the operation's syncResult, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// When the API server received the request (RFC 3339, as the audit log writes it).
    pub at: String,
}

/// A step: writes applied together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Step {
    pub writes: Vec<Write>,
}

/// What to read from the log.
#[derive(Debug, Clone)]
pub struct Filter {
    /// The controller's user name in the audit log.
    pub user: String,
    /// Only requests received at or after this time (the operation's `startedAt`), if set.
    pub since: Option<String>,
    /// A silence longer than this (seconds) starts a new step.
    pub gap_seconds: f64,
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            user: "argocd-application-controller".into(),
            since: None,
            gap_seconds: 1.5,
        }
    }
}

/// Argo CD's own resources: the controller writes them all the time, they are never tasks.
const ARGO_RESOURCES: [&str; 3] = ["applications", "appprojects", "applicationsets"];

/// What the controller did in one sync.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Recording {
    pub steps: Vec<Step>,
    /// Deletions of objects this sync created (hook delete policies), in order.
    pub cleanups: Vec<Write>,
}

/// Reads an audit log (JSON lines) and returns the controller's steps. `operation` is the
/// Application's `status.operationState` for that sync, if known (for phases and boundaries).
pub fn record(audit_log: &str, operation: Option<&Value>, filter: &Filter) -> Vec<Step> {
    recording(audit_log, operation, filter).steps
}

/// [`record`], with the cleanups.
pub fn recording(audit_log: &str, operation: Option<&Value>, filter: &Filter) -> Recording {
    let phases = operation.map(phases_of).unwrap_or_default();
    let mut writes: Vec<(i64, Write)> = audit_log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|event| write_of(&event, filter))
        .collect();
    writes.sort_by_key(|w| w.0);
    let gap_us = (filter.gap_seconds * 1e6) as i64;

    let mut seen = std::collections::HashSet::new();
    let mut created = std::collections::HashSet::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut cleanups = Vec::new();
    let mut last: Option<(i64, Option<String>)> = None;
    for (t, mut w) in writes {
        let key = (
            w.group.clone(),
            w.resource.clone(),
            w.namespace.clone(),
            w.name.clone(),
        );
        if w.verb == "delete" {
            seen.remove(&key); // a re-created object's next write is a new apply
            if created.remove(&key) {
                cleanups.push(w);
                continue;
            }
        } else if !seen.insert(key.clone()) {
            continue;
        } else if w.verb == "create" {
            created.insert(key);
        }
        w.phase = phases
            .iter()
            .find(|(kind_group, ns, name, _)| {
                kind_group.0 == w.group
                    && ns == &w.namespace
                    && name == &w.name
                    && plural_matches(&kind_group.1, &w.resource)
            })
            .map(|p| p.3.clone());
        // The Namespace that CreateNamespace=true creates is written before the dry run, with
        // phase PreSync, and the first step follows at once whatever its phase.
        let namespace_first = steps.len() == 1
            && steps[0]
                .writes
                .iter()
                .all(|x| x.group.is_empty() && x.resource == "namespaces");
        let new_step = match &last {
            None => true,
            Some((prev_t, prev_phase)) => {
                t - prev_t > gap_us
                    || (!namespace_first
                        && w.phase.is_some()
                        && prev_phase.is_some()
                        && &w.phase != prev_phase)
            }
        };
        last = Some((t, w.phase.clone()));
        if new_step {
            steps.push(Step { writes: Vec::new() });
        }
        if let Some(step) = steps.last_mut() {
            step.writes.push(w);
        }
    }
    Recording { steps, cleanups }
}

/// (group, kind), namespace, name, syncPhase of each syncResult entry.
type PhaseEntry = ((String, String), String, String, String);

fn phases_of(operation: &Value) -> Vec<PhaseEntry> {
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    operation
        .pointer("/syncResult/resources")
        .and_then(Value::as_array)
        .map(|entries| {
            entries
                .iter()
                .map(|e| {
                    (
                        (str_of(e, "group"), str_of(e, "kind")),
                        str_of(e, "namespace"),
                        str_of(e, "name"),
                        str_of(e, "syncPhase"),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `resource` (plural, lower case) names `kind` — the API server's own rule for the
/// kinds Argo CD syncs (ConfigMap/configmaps, Ingress/ingresses, NetworkPolicy/networkpolicies).
pub fn plural_matches(kind: &str, resource: &str) -> bool {
    let k = kind.to_ascii_lowercase();
    let plural = if k.ends_with('s') || k.ends_with("ch") || k.ends_with("sh") || k.ends_with('x') {
        format!("{k}es")
    } else if let Some(stem) = k
        .strip_suffix('y')
        .filter(|s| !s.ends_with(['a', 'e', 'o', 'u']))
    {
        format!("{stem}ies")
    } else {
        format!("{k}s")
    };
    plural == resource
}

fn write_of(event: &Value, filter: &Filter) -> Option<(i64, Write)> {
    let s = |p: &str| event.pointer(p).and_then(Value::as_str);
    if s("/user/username")? != filter.user || s("/stage")? != "ResponseComplete" {
        return None;
    }
    let verb = s("/verb")?;
    if !matches!(verb, "create" | "update" | "patch" | "delete") {
        return None;
    }
    let code = event
        .pointer("/responseStatus/code")
        .and_then(Value::as_u64)?;
    if code >= 400 || s("/requestURI")?.contains("dryRun=") {
        return None;
    }
    if s("/objectRef/subresource").is_some_and(|sub| !sub.is_empty()) {
        return None;
    }
    let resource = s("/objectRef/resource")?;
    let group = s("/objectRef/apiGroup").unwrap_or("");
    if group == "argoproj.io" && ARGO_RESOURCES.contains(&resource) {
        return None;
    }
    let at = s("/requestReceivedTimestamp")?;
    let t = micros(at)?;
    // Compared as times: "…18.833101Z" is after "…18Z", though not as a string.
    if filter
        .since
        .as_deref()
        .and_then(micros)
        .is_some_and(|since| t < since)
    {
        return None;
    }
    Some((
        t,
        Write {
            verb: verb.to_string(),
            group: group.to_string(),
            resource: resource.to_string(),
            namespace: s("/objectRef/namespace").unwrap_or("").to_string(),
            name: s("/objectRef/name")?.to_string(),
            phase: None,
            at: at.to_string(),
        },
    ))
}

/// Microseconds since 1970 of an RFC 3339 UTC timestamp as the audit log writes it
/// (`2026-12-01T22:37:44.159266Z`), enough to order and subtract the timestamps of one log.
fn micros(ts: &str) -> Option<i64> {
    let (date, time) = ts.strip_suffix('Z')?.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    // Days from a civil date (H. Hinnant's algorithm), so a sync across midnight still orders.
    let (y, m) = if m <= 2 { (y - 1, m + 9) } else { (y, m - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + day - 1;
    let days = era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut t = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (h, mi, sec) = (t.next()??, t.next()??, t.next()??);
    let digits: String = frac.chars().chain(std::iter::repeat('0')).take(6).collect();
    let us = digits.parse::<i64>().ok()?;
    Some(((days * 86_400 + h * 3600 + mi * 60 + sec) * 1_000_000) + us)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_order_across_midnight_and_keep_microseconds() {
        let a = micros("2026-12-31T23:59:59.900000Z").unwrap();
        let b = micros("2027-01-01T00:00:00.1Z").unwrap();
        assert_eq!(b - a, 200_000);
        assert_eq!(micros("1970-01-01T00:00:01.000001Z"), Some(1_000_001));
    }

    #[test]
    fn plurals_follow_the_api_server() {
        for (kind, resource) in [
            ("ConfigMap", "configmaps"),
            ("Ingress", "ingresses"),
            ("NetworkPolicy", "networkpolicies"),
            ("Deployment", "deployments"),
            ("Namespace", "namespaces"),
        ] {
            assert!(plural_matches(kind, resource), "{kind}");
        }
        assert!(!plural_matches("Secret", "serviceaccounts"));
    }
}
