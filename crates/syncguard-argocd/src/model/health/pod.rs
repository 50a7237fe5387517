//! `health_pod.go` (spec 8.2).

use serde_json::Value;

use super::util::*;
use super::{Behaviour, Behaviours, Health, HealthStatus, IGNORE_RESTART_POLICY_ANNOTATION};

/// §8.2, `health_pod.go`.
///
/// The crash-loop rule is limited to `restartPolicy: Always` on purpose: a hook Pod that is
/// temporarily in ImagePullBackOff must not fail its hook. From 3.6 a non-hook Pod may opt in
/// with [`IGNORE_RESTART_POLICY_ANNOTATION`]. An empty `restartPolicy` is not defaulted (Argo CD
/// sees the live object, which the API server has defaulted), so a Running Pod without one is
/// Unknown.
pub(super) fn pod_health(obj: &Value, behaviours: Behaviours) -> Health {
    use HealthStatus::{Degraded, Healthy, Progressing, Unknown};
    let restart_policy = get_str(obj, &["spec", "restartPolicy"]);
    let long_running = restart_policy == "Always"
        || (behaviours.has(Behaviour::PodIgnoreRestartPolicy)
            && string_annotation(obj, IGNORE_RESTART_POLICY_ANNOTATION) == Some("true")
            && !is_hook(obj));
    let container_statuses = get_list(obj, &["status", "containerStatuses"]);
    let pod_message = status_str(obj, "message");

    if long_running {
        let stuck: Vec<&str> = container_statuses
            .iter()
            .filter_map(|c| get(c, &["state", "waiting"]).filter(|w| w.is_object()))
            .filter(|w| is_error_waiting_reason(get_str(w, &["reason"])))
            .map(|w| get_str(w, &["message"]))
            .collect();
        if !stuck.is_empty() {
            return Health::new(Degraded, stuck.join(", "));
        }
    }

    match status_str(obj, "phase") {
        "Pending" => Health::new(Progressing, pod_message),
        "Succeeded" => Health::new(Healthy, pod_message),
        "Failed" => {
            if !pod_message.is_empty() {
                return Health::new(Degraded, pod_message);
            }
            let message = get_list(obj, &["status", "initContainerStatuses"])
                .iter()
                .chain(container_statuses)
                .find_map(container_failure_message)
                .unwrap_or_default();
            Health::new(Degraded, message)
        }
        "Running" if long_running => {
            if is_pod_ready(obj) {
                Health::new(Healthy, pod_message)
            } else if container_statuses
                .iter()
                .any(|c| get(c, &["lastState", "terminated"]).is_some_and(Value::is_object))
            {
                Health::new(Degraded, pod_message)
            } else {
                Health::new(Progressing, pod_message)
            }
        }
        "Running" if matches!(restart_policy, "OnFailure" | "Never") => {
            Health::new(Progressing, pod_message)
        }
        _ => Health::new(Unknown, pod_message),
    }
}

/// A container waiting reason that means "this will not start by itself": `Err*` (ErrImagePull),
/// `*Error` (CreateContainerConfigError) or `*BackOff` (CrashLoopBackOff, ImagePullBackOff).
pub(super) fn is_error_waiting_reason(reason: &str) -> bool {
    reason.starts_with("Err") || reason.ends_with("Error") || reason.ends_with("BackOff")
}

/// The explanation Argo CD takes from a terminated container of a failed Pod, or `None` to try
/// the next container.
pub(super) fn container_failure_message(container: &Value) -> Option<String> {
    let terminated = get(container, &["state", "terminated"]).filter(|t| t.is_object())?;
    let message = get_str(terminated, &["message"]);
    if !message.is_empty() {
        return Some(message.to_string());
    }
    if get_str(terminated, &["reason"]) == "OOMKilled" {
        return Some("OOMKilled".to_string());
    }
    let exit_code = get_int(terminated, &["exitCode"]).unwrap_or(0);
    (exit_code != 0).then(|| {
        format!(
            "container {:?} failed with exit code {exit_code}",
            get_str(container, &["name"])
        )
    })
}

/// `podutils.IsPodReady`: the first `Ready` condition has status True.
pub(super) fn is_pod_ready(obj: &Value) -> bool {
    conditions(obj)
        .find(|c| c.kind == "Ready")
        .is_some_and(|c| c.status == "True")
}

/// Argo CD's `hook.IsHook`, needed because 3.6 ignores the restart-policy annotation on hooks.
///
/// With the `argocd.argoproj.io/hook` key present (any value) the object is a hook unless its
/// only valid hook type is `Skip`; otherwise a `helm.sh/hook` whose raw value is not exactly
/// `crd-install` makes it a hook (spec §2.3). Annotation values that are not strings are treated
/// as absent.
pub(super) fn is_hook(obj: &Value) -> bool {
    if let Some(argo) = string_annotation(obj, "argocd.argoproj.io/hook") {
        let mut types: Vec<&str> = Vec::new();
        for item in argo.split(',').map(str::trim) {
            let valid = matches!(item, "PreSync" | "Sync" | "PostSync" | "SyncFail" | "Skip");
            if valid && !types.contains(&item) {
                types.push(item);
            }
        }
        return types != ["Skip"];
    }
    string_annotation(obj, "helm.sh/hook").is_some_and(|helm| helm != "crd-install")
}
