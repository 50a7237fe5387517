//! Workloads: Deployment, ReplicaSet, DaemonSet, StatefulSet, Job and Pod.
//!
//! A controller finds its pods by its selector, so no workload may change it. A StatefulSet
//! also names its pods and claims after `serviceName` and its `volumeClaimTemplates`, so its
//! spec is frozen but for the fields that only steer the rollout. A Job's pods are its
//! history: its template is frozen (but for the scheduling directives of a suspended Job that
//! never started, since 1.27), and so is how it counts completions. A Pod may change its
//! images and little else.

use serde_json::{Map, Value};

use super::compare::{at, is_empty, or_default, plain_str, pod_spec, same};
use super::{ApplyMode, Change, Refusal, child, forbidden, immutable, invalid};

/// Deployment, ReplicaSet, DaemonSet: `spec.selector`.
pub(super) fn selector(c: &Change, out: &mut Vec<Refusal>) {
    let (before, after) = (c.before("/spec/selector"), c.after("/spec/selector"));
    if !same(before, after) {
        out.push(immutable("/spec/selector", "spec.selector", after));
    }
}

/// The StatefulSet spec fields an update may change; any other change is refused.
const STATEFULSET_MUTABLE: &str = "'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds'";

/// StatefulSet: `serviceName`, `selector`, `podManagementPolicy`, `volumeClaimTemplates`.
pub(super) fn statefulset(c: &Change, out: &mut Vec<Refusal>) {
    let refuse = |out: &mut Vec<Refusal>, key: &str| {
        let mut r = forbidden(
            &format!("/spec/{key}"),
            "spec",
            &format!(
                "updates to statefulset spec for fields other than {STATEFULSET_MUTABLE} are forbidden"
            ),
        );
        r.message.push_str(&format!(" (spec.{key} changed)"));
        out.push(r);
    };
    if plain_str(c.before("/spec/serviceName")) != plain_str(c.after("/spec/serviceName")) {
        refuse(out, "serviceName");
    }
    if !same(c.before("/spec/selector"), c.after("/spec/selector")) {
        refuse(out, "selector");
    }
    let policy = |v| or_default(v, Value::from("OrderedReady"));
    if policy(c.before("/spec/podManagementPolicy")) != policy(c.after("/spec/podManagementPolicy"))
    {
        refuse(out, "podManagementPolicy");
    }
    let templates = |v: Option<&Value>| -> Vec<Value> {
        v.and_then(Value::as_array)
            .map(|items| items.iter().map(claim_template).collect())
            .unwrap_or_default()
    };
    let (b, a) = (
        templates(c.before("/spec/volumeClaimTemplates")),
        templates(c.after("/spec/volumeClaimTemplates")),
    );
    if b.len() != a.len() || b.iter().zip(&a).any(|(x, y)| !same(Some(x), Some(y))) {
        refuse(out, "volumeClaimTemplates");
    }
}

/// A claim template as compared: its metadata and spec (the default `volumeMode` filled in);
/// `apiVersion`, `kind` and `status` are not part of what a chart changes.
fn claim_template(t: &Value) -> Value {
    let mut spec = match t.get("spec") {
        Some(Value::Object(m)) => m.clone(),
        _ => Map::new(),
    };
    if spec.get("volumeMode").is_none_or(Value::is_null) {
        spec.insert("volumeMode".into(), Value::from("Filesystem"));
    }
    serde_json::json!({"metadata": t.get("metadata"), "spec": spec})
}

/// Labels the server adds to a Job's template when it generates the selector.
const JOB_GENERATED_LABELS: &[&str] = &[
    "batch.kubernetes.io/controller-uid",
    "batch.kubernetes.io/job-name",
    "controller-uid",
    "job-name",
];

/// Job: `selector`, `template`, `completions` (unless Indexed), `completionMode`,
/// `podFailurePolicy`, `backoffLimitPerIndex`, `managedBy`, `successPolicy`.
pub(super) fn job(c: &Change, out: &mut Vec<Refusal>) {
    let manual = c.after("/spec/manualSelector").and_then(Value::as_bool) == Some(true);
    // Without `manualSelector` the server generates the selector (and template labels that
    // match it) at creation; an apply that omits them keeps them, a replace drops them.
    let dropped_generated =
        c.mode == ApplyMode::Replace && !manual && is_empty(c.after("/spec/selector"));
    if dropped_generated {
        out.push(invalid(
            "/spec/selector",
            "spec.selector",
            None,
            "field is immutable (the selector the server generated is not in the manifest)",
        ));
        out.push(invalid(
            "/spec/template/metadata/labels",
            "spec.template.metadata.labels",
            c.after("/spec/template/metadata/labels"),
            "`selector` does not match template `labels`",
        ));
    } else {
        let after = c.after_kept("/spec/selector");
        if !same(c.before("/spec/selector"), after) {
            out.push(immutable("/spec/selector", "spec.selector", after));
        }
    }
    job_template(c, dropped_generated, out);
    job_completions(c, out);
    let mode = |v| or_default(v, Value::from("NonIndexed"));
    if mode(c.before("/spec/completionMode")) != mode(c.after("/spec/completionMode")) {
        out.push(immutable(
            "/spec/completionMode",
            "spec.completionMode",
            c.after("/spec/completionMode"),
        ));
    }
    for key in [
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        let pointer = format!("/spec/{key}");
        // Optional structs are pointers: an empty policy differs from none.
        let present = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
        if present(c.before(&pointer)) != present(c.after(&pointer))
            || !same(c.before(&pointer), c.after(&pointer))
        {
            out.push(immutable(
                &pointer,
                &format!("spec.{key}"),
                c.after(&pointer),
            ));
        }
    }
}

fn job_template(c: &Change, dropped_generated: bool, out: &mut Vec<Refusal>) {
    let mut before = c
        .before("/spec/template")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    let after = c
        .after("/spec/template")
        .cloned()
        .unwrap_or(Value::Object(Map::new()));
    if !dropped_generated {
        // The generated labels are the server's: kept by an apply, in `before` only when it
        // is the live object.
        for key in JOB_GENERATED_LABELS {
            let pointer = format!("/metadata/labels/{}", key.replace('/', "~1"));
            if at(&after, &pointer).is_none()
                && let Some(labels) = before
                    .pointer_mut("/metadata/labels")
                    .and_then(Value::as_object_mut)
            {
                labels.remove(*key);
            }
        }
    }
    // A suspended Job that never started may change where its pods will run (1.27).
    let suspended = c.before("/spec/suspend").and_then(Value::as_bool) == Some(true);
    let started = !is_empty(c.before("/status/startTime"));
    if suspended && !started {
        for pointer in ["/metadata/labels", "/metadata/annotations"] {
            copy(&after, &mut before, pointer);
        }
        for key in ["nodeSelector", "tolerations", "schedulingGates"] {
            copy(&after, &mut before, &format!("/spec/{key}"));
        }
        let after_affinity = at(&after, "/spec/affinity").cloned();
        if let Some(spec) = before.get_mut("spec").and_then(Value::as_object_mut) {
            relax_node_affinity(spec, after_affinity.as_ref());
        }
    }
    let normal = |t: &Value| {
        serde_json::json!({
            "metadata": t.get("metadata"),
            "spec": pod_spec(t.get("spec"), false),
        })
    };
    // A replace without the generated labels removes them from the stored template.
    let labels_dropped = dropped_generated
        && at(
            &after,
            "/metadata/labels/batch.kubernetes.io~1controller-uid",
        )
        .is_none();
    if labels_dropped || !same(Some(&normal(&before)), Some(&normal(&after))) {
        let mut r = immutable("/spec/template", "spec.template", None);
        if labels_dropped {
            r.message
                .push_str(" (the labels the server generated are not in the manifest)");
        }
        if suspended && !started {
            r.since = Some("1.27");
        }
        out.push(r);
    }
}

/// Sets `pointer` of `to` to its value in `from` (or removes it).
fn copy(from: &Value, to: &mut Value, pointer: &str) {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return;
    };
    let value = at(from, pointer).cloned();
    if to.pointer(parent).is_none() {
        let Some((grand, pkey)) = parent.rsplit_once('/') else {
            return;
        };
        if let Some(g) = to.pointer_mut(grand).and_then(Value::as_object_mut) {
            g.insert(pkey.to_string(), Value::Object(Map::new()));
        }
    }
    if let Some(p) = to.pointer_mut(parent).and_then(Value::as_object_mut) {
        match value {
            Some(v) => p.insert(key.to_string(), v),
            None => p.remove(key),
        };
    }
}

/// Node affinity of a suspended Job's template may change, be added or be cleared.
fn relax_node_affinity(spec: &mut Map<String, Value>, after: Option<&Value>) {
    let after_node = after.and_then(|a| a.get("nodeAffinity")).cloned();
    match (
        spec.get_mut("affinity").and_then(Value::as_object_mut),
        after,
    ) {
        (Some(before), None) => {
            before.remove("nodeAffinity");
            if before.is_empty() {
                spec.remove("affinity");
            }
        }
        (Some(before), Some(_)) => {
            match after_node {
                Some(n) => before.insert("nodeAffinity".into(), n),
                None => before.remove("nodeAffinity"),
            };
        }
        (None, Some(_)) => {
            let mut m = Map::new();
            if let Some(n) = after_node {
                m.insert("nodeAffinity".into(), n);
            }
            spec.insert("affinity".into(), Value::Object(m));
        }
        (None, None) => {}
    }
}

/// `completions` is immutable, except for an Indexed Job that changes it together with
/// `parallelism` to the same value (elastic Indexed Jobs, 1.27).
fn job_completions(c: &Change, out: &mut Vec<Refusal>) {
    let (before, after) = (c.before("/spec/completions"), c.after("/spec/completions"));
    if same(before, after) {
        return;
    }
    let indexed = c.after("/spec/completionMode").and_then(Value::as_str) == Some("Indexed");
    if !indexed {
        out.push(immutable("/spec/completions", "spec.completions", after));
        return;
    }
    let Some(n) = after.and_then(Value::as_i64) else {
        // An Indexed Job without completions is refused by other rules.
        return;
    };
    let parallelism = c
        .after("/spec/parallelism")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    if n != parallelism {
        let mut r = invalid(
            "/spec/completions",
            "spec.completions",
            after,
            "can only be modified in tandem with spec.parallelism",
        );
        r.since = Some("1.27");
        out.push(r);
    }
}

/// The pod spec fields the server lets an update change, each with its own rule.
const POD_MUTABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// Pod spec fields the server fills in at creation (the scheduler, admission).
const POD_SERVER_FILLED: &[&str] = &[
    "nodeName",
    "serviceAccount",
    "serviceAccountName",
    "priority",
    "preemptionPolicy",
];

/// Pod: everything in `spec` but the container images, `activeDeadlineSeconds` (set, or
/// lowered), additions to `tolerations` and removals of `schedulingGates`.
pub(super) fn pod(c: &Change, out: &mut Vec<Refusal>) {
    for list in ["containers", "initContainers"] {
        let pointer = format!("/spec/{list}");
        let len = |v: Option<&Value>| v.and_then(Value::as_array).map_or(0, Vec::len);
        if len(c.before(&pointer)) != len(c.after(&pointer)) {
            out.push(forbidden(
                &pointer,
                &format!("spec.{list}"),
                "pod updates may not add or remove containers",
            ));
            // The server stops here.
            return;
        }
    }
    let deadline = "/spec/activeDeadlineSeconds";
    match (
        c.before(deadline).and_then(Value::as_i64),
        c.after(deadline).and_then(Value::as_i64),
    ) {
        (Some(b), Some(a)) if a > b => out.push(invalid(
            deadline,
            "spec.activeDeadlineSeconds",
            c.after(deadline),
            "must be less than or equal to previous value",
        )),
        (Some(_), None) => out.push(invalid(
            deadline,
            "spec.activeDeadlineSeconds",
            None,
            "must not update from a positive integer to nil value",
        )),
        _ => {}
    }
    let tolerations = |v: Option<&Value>| -> Vec<Value> {
        v.and_then(Value::as_array)
            .map(|l| {
                l.iter()
                    .map(|t| {
                        let mut t = t.clone();
                        if let Some(m) = t.as_object_mut() {
                            m.remove("tolerationSeconds");
                        }
                        t
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let after_tolerations = tolerations(c.after("/spec/tolerations"));
    if tolerations(c.before("/spec/tolerations"))
        .iter()
        .any(|t| !after_tolerations.iter().any(|a| same(Some(t), Some(a))))
    {
        out.push(forbidden(
            "/spec/tolerations",
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        ));
    }
    let munged = |spec: Option<&Value>, other: Option<&Value>| {
        let mut spec = pod_spec(spec, true);
        if let Some(m) = spec.as_object_mut() {
            for key in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
                m.remove(key);
            }
            for list in ["containers", "initContainers"] {
                if let Some(Value::Array(cs)) = m.get_mut(list) {
                    for ctr in cs.iter_mut().filter_map(Value::as_object_mut) {
                        ctr.remove("image");
                    }
                }
            }
            if let Some(other) = other.and_then(Value::as_object) {
                for key in POD_SERVER_FILLED {
                    if !m.contains_key(*key)
                        && let Some(v) = other.get(*key)
                    {
                        m.insert((*key).to_string(), v.clone());
                    }
                }
            }
        }
        spec
    };
    let before = munged(c.before("/spec"), None);
    let after = munged(
        c.after("/spec"),
        (c.mode == ApplyMode::Apply)
            .then(|| c.before("/spec"))
            .flatten(),
    );
    if !same(Some(&before), Some(&after)) {
        let changed: Vec<&str> = keys(&before, &after)
            .into_iter()
            .filter(|k| !same(before.get(*k), after.get(*k)))
            .collect();
        let pointer = match changed.as_slice() {
            [one] => child("/spec", one),
            _ => "/spec".to_string(),
        };
        out.push(forbidden(
            &pointer,
            "spec",
            &format!("pod updates may not change fields other than {POD_MUTABLE}"),
        ));
    }
}

fn keys<'a>(a: &'a Value, b: &'a Value) -> Vec<&'a str> {
    let mut keys: Vec<&str> = a
        .as_object()
        .into_iter()
        .chain(b.as_object())
        .flat_map(|m| m.keys().map(String::as_str))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}
