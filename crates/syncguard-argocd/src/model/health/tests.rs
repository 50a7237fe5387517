//! The health checks held to Argo CD's, per kind and per release (spec 8, H01-H19).

use super::*;
use serde_json::json;

use HealthStatus::{Degraded, Healthy, Missing, Progressing, Suspended, Unknown};

/// Argo CD 3.2.11, the standalone engine's health rules.
fn old() -> Behaviours {
    "3.2.11"
        .parse::<crate::model::version::ArgoCdVersion>()
        .unwrap()
        .behaviours()
}

/// Argo CD 3.6, the newest health rules.
fn new() -> Behaviours {
    "3.6.1"
        .parse::<crate::model::version::ArgoCdVersion>()
        .unwrap()
        .behaviours()
}

/// Assesses a JSON object, taking group/version/kind from its own `apiVersion` and `kind`.
fn assess_with(obj: &Value, behaviours: Behaviours) -> Result<Option<Health>, HealthError> {
    let api_version = obj["apiVersion"].as_str().unwrap_or_default();
    let (group, version) = super::super::split_api_version(api_version);
    let kind = obj["kind"].as_str().unwrap_or_default();
    assess(group, version, kind, obj, behaviours)
}

/// The verdict for the given behaviours; fails the test on nil health or an error.
fn verdict_with(obj: &Value, behaviours: Behaviours) -> Health {
    match assess_with(obj, behaviours) {
        Ok(Some(health)) => health,
        other => panic!("expected a verdict, got {other:?}"),
    }
}

/// The verdict with the default behaviours (Argo CD 3.6).
fn verdict(obj: &Value) -> Health {
    verdict_with(obj, Behaviours::default())
}

fn status(obj: &Value) -> HealthStatus {
    verdict(obj).status
}

/// Argo CD 3.2.11 and 3.6 agree on the status, which is then returned.
fn status_in_both(obj: &Value) -> HealthStatus {
    let legacy = verdict_with(obj, old()).status;
    let mono = verdict_with(obj, new()).status;
    assert_eq!(legacy, mono, "3.2.11 and 3.6 disagree on {obj}");
    mono
}

fn ok(status: HealthStatus) -> Result<Option<Health>, HealthError> {
    Ok(Some(Health::status_only(status)))
}

// ----- fixtures --------------------------------------------------------------------------

fn job(status: Value) -> Value {
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "db-migrate", "namespace": "app", "generation": 1,
                     "annotations": {"argocd.argoproj.io/hook": "PreSync"}},
        "spec": {
            "backoffLimit": 0,
            "completions": 1,
            "parallelism": 1,
            "template": {"spec": {
                "containers": [{"name": "migrate", "image": "alpine:3.20",
                                "command": ["sh", "-c", "sleep 10"]}],
                "restartPolicy": "Never"
            }}
        },
        "status": status
    })
}

fn pod(restart_policy: &str, status: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "my-pod", "namespace": "argocd"},
        "spec": {
            "containers": [{"name": "main", "image": "alpine:latest"}],
            "restartPolicy": restart_policy
        },
        "status": status
    })
}

fn ready_condition(status: &str) -> Value {
    json!({"type": "Ready", "status": status,
           "reason": if status == "True" { "" } else { "ContainersNotReady" }})
}

fn deployment(spec: Value, generation: i64, status: Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "guestbook-ui", "namespace": "default", "generation": generation},
        "spec": spec,
        "status": status
    })
}

fn hpa(version: &str, annotations: Value, status: Value) -> Value {
    json!({
        "apiVersion": format!("autoscaling/{version}"),
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "sample", "namespace": "argocd", "annotations": annotations},
        "spec": {
            "minReplicas": 1,
            "maxReplicas": 2,
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
        },
        "status": status
    })
}

fn hpa_condition(kind: &str, status: &str, reason: &str) -> Value {
    json!({"type": kind, "status": status, "reason": reason,
           "message": format!("{kind}/{reason}"),
           "lastTransitionTime": "2022-05-13T12:40:33Z"})
}

// ----- H01–H04: Job ----------------------------------------------------------------------

#[test]
fn h01_a_running_job_without_conditions_is_progressing() {
    let running = job(json!({"active": 1, "startTime": "2018-12-02T08:19:14Z"}));
    assert_eq!(verdict(&running), Health::status_only(Progressing));
    assert_eq!(status_in_both(&running), Progressing);
}

#[test]
fn h02_a_job_that_hit_its_backoff_limit_is_degraded_with_the_condition_message() {
    let failed = job(json!({
        "failed": 1,
        "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                        "message": "Job has reached the specified backoff limit"}]
    }));
    assert_eq!(
        verdict(&failed),
        Health::new(Degraded, "Job has reached the specified backoff limit")
    );
    assert_eq!(status_in_both(&failed), Degraded);
}

#[test]
fn h03_a_complete_job_is_healthy() {
    let done = job(json!({
        "succeeded": 1,
        "conditions": [{"type": "Complete", "status": "True"}]
    }));
    assert_eq!(status_in_both(&done), Healthy);
}

#[test]
fn h04_a_suspended_job_is_suspended_and_keeps_its_hook_running() {
    let suspended = job(json!({
        "conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended",
                        "message": "Job suspended"}]
    }));
    assert_eq!(status_in_both(&suspended), Suspended);
    assert_eq!(
        hook_outcome(&assess_with(&suspended, new())),
        TaskHealthOutcome::Running
    );
}

#[test]
fn a_suspended_job_carries_the_condition_message_only_in_ge_mono() {
    let suspended = job(json!({
        "conditions": [{"type": "Suspended", "status": "True", "message": "Job suspended"}]
    }));
    assert_eq!(
        verdict_with(&suspended, new()).message.as_deref(),
        Some("Job suspended")
    );
    assert_eq!(verdict_with(&suspended, old()).message, None);
}

#[test]
fn a_resumed_job_with_only_a_false_suspended_condition_is_healthy() {
    let resumed = job(json!({
        "active": 1,
        "conditions": [{"type": "Suspended", "status": "False", "reason": "JobResumed",
                        "message": "Job resumed"}]
    }));
    assert_eq!(status_in_both(&resumed), Healthy);
}

#[test]
fn a_failed_condition_wins_over_complete_and_its_status_is_not_checked() {
    let both = job(json!({"conditions": [
        {"type": "Complete", "status": "True"},
        {"type": "Failed", "status": "False", "message": "boom"}
    ]}));
    assert_eq!(verdict(&both), Health::new(Degraded, "boom"));
}

// ----- H05–H09: Pod ----------------------------------------------------------------------

#[test]
fn h05_a_crash_looping_on_failure_pod_stays_progressing() {
    let restarting = pod(
        "OnFailure",
        json!({
            "phase": "Running",
            "conditions": [ready_condition("False")],
            "containerStatuses": [{
                "name": "main", "ready": false, "restartCount": 4,
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
                "state": {"waiting": {"reason": "CrashLoopBackOff",
                                      "message": "back-off 1m20s restarting failed container"}}
            }]
        }),
    );
    assert_eq!(status_in_both(&restarting), Progressing);
}

#[test]
fn h06_an_always_pod_in_crash_loop_or_image_pull_back_off_is_degraded() {
    let crashloop = pod(
        "Always",
        json!({
            "phase": "Running",
            "conditions": [ready_condition("False")],
            "containerStatuses": [{
                "name": "main", "ready": false, "restartCount": 3,
                "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}},
                "state": {"waiting": {"reason": "CrashLoopBackOff",
                                      "message": "Back-off 40s restarting failed container=main"}}
            }]
        }),
    );
    assert_eq!(
        verdict(&crashloop),
        Health::new(Degraded, "Back-off 40s restarting failed container=main")
    );
    let image_pull = pod(
        "Always",
        json!({
            "phase": "Pending",
            "containerStatuses": [{
                "name": "main", "ready": false, "restartCount": 0, "lastState": {},
                "state": {"waiting": {"reason": "ImagePullBackOff",
                                      "message": "Back-off pulling image \"does-not-exist\""}}
            }]
        }),
    );
    assert_eq!(status_in_both(&image_pull), Degraded);
}

#[test]
fn waiting_messages_of_several_stuck_containers_are_joined_with_commas() {
    let two = pod(
        "Always",
        json!({"phase": "Pending", "containerStatuses": [
            {"name": "a", "state": {"waiting": {"reason": "ErrImagePull", "message": "one"}}},
            {"name": "b", "state": {"waiting": {"reason": "ContainerCreating"}}},
            {"name": "c", "state": {"waiting": {"reason": "CreateContainerConfigError",
                                                 "message": "two"}}}
        ]}),
    );
    assert_eq!(verdict(&two), Health::new(Degraded, "one, two"));
}

#[test]
fn h07_an_always_pod_is_healthy_when_ready_and_progressing_until_then() {
    let ready = pod(
        "Always",
        json!({"phase": "Running", "conditions": [ready_condition("True")],
               "containerStatuses": [{"name": "main", "ready": true,
                                      "state": {"running": {}}, "lastState": {}}]}),
    );
    assert_eq!(status_in_both(&ready), Healthy);
    let not_ready = pod(
        "Always",
        json!({"phase": "Running", "conditions": [ready_condition("False")],
               "containerStatuses": [{"name": "main", "ready": false,
                                      "state": {"running": {}}, "lastState": {}}]}),
    );
    assert_eq!(status_in_both(&not_ready), Progressing);
}

#[test]
fn an_always_pod_that_is_not_ready_after_a_container_restart_is_degraded() {
    let restarted = pod(
        "Always",
        json!({"phase": "Running", "message": "probe failing",
               "conditions": [ready_condition("False")],
               "containerStatuses": [{"name": "main", "state": {"running": {}},
                                      "lastState": {"terminated": {"exitCode": 137}}}]}),
    );
    assert_eq!(verdict(&restarted), Health::new(Degraded, "probe failing"));
}

#[test]
fn h08_a_never_pod_follows_its_phase() {
    let running = pod("Never", json!({"phase": "Running"}));
    assert_eq!(status_in_both(&running), Progressing);
    let succeeded = pod("Never", json!({"phase": "Succeeded"}));
    assert_eq!(status_in_both(&succeeded), Healthy);
    let pending = pod("Never", json!({"phase": "Pending"}));
    assert_eq!(status_in_both(&pending), Progressing);
    let failed = pod(
        "Never",
        json!({"phase": "Failed", "containerStatuses": [{
            "name": "main", "ready": false, "lastState": {},
            "state": {"terminated": {"exitCode": 1, "reason": "Error"}}
        }]}),
    );
    assert_eq!(
        verdict(&failed),
        Health::new(Degraded, "container \"main\" failed with exit code 1")
    );
}

#[test]
fn a_failed_pod_explains_itself_with_the_best_message_available() {
    let with_pod_message = pod(
        "Never",
        json!({"phase": "Failed", "message": "The node was low on resource: memory."}),
    );
    assert_eq!(
        verdict(&with_pod_message).message.as_deref(),
        Some("The node was low on resource: memory.")
    );
    let init_first = pod(
        "Never",
        json!({"phase": "Failed",
               "initContainerStatuses": [{"name": "init", "state": {"terminated":
                   {"exitCode": 2, "message": "init says no"}}}],
               "containerStatuses": [{"name": "main", "state": {"terminated":
                   {"exitCode": 1}}}]}),
    );
    assert_eq!(
        verdict(&init_first).message.as_deref(),
        Some("init says no")
    );
    let oom = pod(
        "Never",
        json!({"phase": "Failed", "containerStatuses": [
            {"name": "ok", "state": {"terminated": {"exitCode": 0}}},
            {"name": "main", "state": {"terminated": {"exitCode": 137, "reason": "OOMKilled"}}}
        ]}),
    );
    assert_eq!(verdict(&oom).message.as_deref(), Some("OOMKilled"));
    let silent = pod("Never", json!({"phase": "Failed"}));
    assert_eq!(verdict(&silent), Health::status_only(Degraded));
}

#[test]
fn a_running_pod_with_an_empty_restart_policy_is_unknown() {
    let undefaulted = pod("", json!({"phase": "Running"}));
    assert_eq!(status_in_both(&undefaulted), Unknown);
    let odd_phase = pod(
        "Always",
        json!({"phase": "Unknown", "message": "node lost"}),
    );
    assert_eq!(verdict(&odd_phase), Health::new(Unknown, "node lost"));
}

#[test]
fn h09_a_pod_being_deleted_is_progressing_pending_deletion() {
    let mut deleting = pod(
        "Always",
        json!({"phase": "Pending", "containerStatuses": [{"name": "main",
               "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}),
    );
    deleting["metadata"]["deletionTimestamp"] = json!("2018-12-03T10:16:04Z");
    assert_eq!(
        verdict(&deleting),
        Health::new(Progressing, "Pending deletion")
    );
    assert_eq!(status_in_both(&deleting), Progressing);
}

#[test]
fn the_ignore_restart_policy_annotation_makes_a_non_hook_pod_long_running_in_ge_mono() {
    let mut never = pod(
        "Never",
        json!({"phase": "Running", "conditions": [ready_condition("True")]}),
    );
    never["metadata"]["annotations"] = json!({IGNORE_RESTART_POLICY_ANNOTATION: "true"});
    assert_eq!(verdict_with(&never, new()).status, Healthy);
    assert_eq!(verdict_with(&never, old()).status, Progressing);

    let mut backoff = pod(
        "OnFailure",
        json!({"phase": "Running", "containerStatuses": [{"name": "main",
               "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}}}]}),
    );
    backoff["metadata"]["annotations"] = json!({IGNORE_RESTART_POLICY_ANNOTATION: "true"});
    assert_eq!(verdict_with(&backoff, new()).status, Degraded);
    assert_eq!(verdict_with(&backoff, old()).status, Progressing);

    let mut not_exactly_true = never.clone();
    not_exactly_true["metadata"]["annotations"] = json!({IGNORE_RESTART_POLICY_ANNOTATION: "True"});
    assert_eq!(verdict(&not_exactly_true).status, Progressing);
}

#[test]
fn the_ignore_restart_policy_annotation_is_ignored_on_hook_pods() {
    let running_ready = pod(
        "Never",
        json!({"phase": "Running", "conditions": [ready_condition("True")]}),
    );
    let with = |annotations: Value| {
        let mut p = running_ready.clone();
        p["metadata"]["annotations"] = annotations;
        status(&p)
    };
    let ignore = IGNORE_RESTART_POLICY_ANNOTATION;
    assert_eq!(
        with(json!({ignore: "true", "argocd.argoproj.io/hook": "PreSync"})),
        Progressing
    );
    // Present but garbage still makes it a hook (the key's presence is what counts).
    assert_eq!(
        with(json!({ignore: "true", "argocd.argoproj.io/hook": ""})),
        Progressing
    );
    assert_eq!(
        with(json!({ignore: "true", "helm.sh/hook": "pre-install"})),
        Progressing
    );
    // Not hooks: a Helm CRD marker, and a Skip-only Argo annotation.
    assert_eq!(
        with(json!({ignore: "true", "helm.sh/hook": "crd-install"})),
        Healthy
    );
    assert_eq!(
        with(json!({ignore: "true", "argocd.argoproj.io/hook": " Skip "})),
        Healthy
    );
    assert_eq!(
        with(json!({ignore: "true", "argocd.argoproj.io/hook": "Skip,PreSync"})),
        Progressing
    );
}

// ----- H10–H12: Deployment, StatefulSet, DaemonSet --------------------------------------

#[test]
fn h10_deployments_follow_the_rollout_checks_in_order() {
    let progressing = deployment(
        json!({"replicas": 1, "strategy": {"type": "RollingUpdate"}}),
        4,
        json!({
            "observedGeneration": 4, "replicas": 2, "updatedReplicas": 1,
            "readyReplicas": 1, "availableReplicas": 1, "unavailableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated"}
            ]
        }),
    );
    assert_eq!(
        verdict(&progressing),
        Health::new(
            Progressing,
            "Waiting for rollout to finish: 1 old replicas are pending termination..."
        )
    );

    let degraded = deployment(
        json!({"replicas": 1}),
        4,
        json!({
            "observedGeneration": 4, "replicas": 2, "updatedReplicas": 1,
            "availableReplicas": 1,
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                 "message": "ReplicaSet \"guestbook-ui-75dd4d49d5\" has timed out progressing."}
            ]
        }),
    );
    assert_eq!(
        verdict(&degraded),
        Health::new(
            Degraded,
            "Deployment \"guestbook-ui\" exceeded its progress deadline"
        )
    );

    let paused = deployment(
        json!({"replicas": 1, "paused": true}),
        5,
        json!({"observedGeneration": 4}),
    );
    assert_eq!(
        verdict(&paused),
        Health::new(Suspended, "Deployment is paused")
    );

    let nginx = deployment(
        json!({"replicas": 2}),
        1,
        json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
               "readyReplicas": 2, "availableReplicas": 2}),
    );
    assert_eq!(assess_with(&nginx, new()), ok(Healthy));
    assert_eq!(status_in_both(&nginx), Healthy);
}

#[test]
fn a_deployment_whose_new_generation_is_not_observed_yet_is_progressing() {
    let stale = deployment(json!({"replicas": 1}), 3, json!({"observedGeneration": 2}));
    assert_eq!(status(&stale), Progressing);
    let fresh = deployment(json!({}), 0, json!({}));
    assert_eq!(status(&fresh), Healthy);
}

#[test]
fn a_deployment_without_spec_replicas_skips_the_updated_replicas_check() {
    let no_replicas = deployment(
        json!({}),
        1,
        json!({"observedGeneration": 1, "replicas": 0, "updatedReplicas": 0,
               "availableReplicas": 0}),
    );
    assert_eq!(status(&no_replicas), Healthy);
    let with_replicas = deployment(json!({"replicas": 3}), 1, json!({"observedGeneration": 1}));
    assert_eq!(
        verdict(&with_replicas).message.as_deref(),
        Some("Waiting for rollout to finish: 0 out of 3 new replicas have been updated...")
    );
}

#[test]
fn a_deployment_waits_for_updated_replicas_to_become_available() {
    let unavailable = deployment(
        json!({"replicas": 2}),
        1,
        json!({"observedGeneration": 1, "replicas": 2, "updatedReplicas": 2,
               "availableReplicas": 1}),
    );
    assert_eq!(
        verdict(&unavailable).message.as_deref(),
        Some("Waiting for rollout to finish: 1 of 2 updated replicas are available...")
    );
}

#[test]
fn an_apps_v1beta2_deployment_is_an_error_reported_as_unknown() {
    let mut old = deployment(json!({"replicas": 1}), 1, json!({"observedGeneration": 1}));
    old["apiVersion"] = json!("apps/v1beta2");
    let result = assess_with(&old, new());
    let expected = HealthError::UnsupportedVersion {
        group: "apps".into(),
        version: "v1beta2".into(),
        kind: "Deployment".into(),
    };
    assert_eq!(result, Err(expected.clone()));
    assert_eq!(
        expected.to_health(),
        Health::new(
            Unknown,
            "unsupported Deployment GVK: apps/v1beta2, Kind=Deployment"
        )
    );
    assert_eq!(expected.metric_label(), "unsupported_version");
    assert_eq!(hook_outcome(&result), TaskHealthOutcome::Error);
    assert_eq!(resource_outcome(&result), TaskHealthOutcome::Running);
}

#[test]
fn every_typed_check_rejects_versions_it_does_not_know() {
    let cases = [
        ("apps", "v1beta1", "StatefulSet"),
        ("apps", "v1beta2", "ReplicaSet"),
        ("apps", "v1beta2", "DaemonSet"),
        ("", "v2", "Pod"),
        ("", "v2", "Service"),
        ("", "v2", "PersistentVolumeClaim"),
        ("batch", "v1beta1", "Job"),
        ("apiregistration.k8s.io", "v2", "APIService"),
        ("autoscaling", "v3", "HorizontalPodAutoscaler"),
    ];
    for (group, version, kind) in cases {
        for release in [old(), new()] {
            let result = assess(group, version, kind, &json!({}), release);
            assert!(
                matches!(result, Err(HealthError::UnsupportedVersion { .. })),
                "{group}/{version} {kind}: {result:?}"
            );
        }
    }
    let err = assess("", "v2", "Pod", &json!({}), new());
    assert_eq!(
        err.map_err(|e| e.to_string()),
        Err("unsupported Pod GVK: /v2, Kind=Pod".to_string())
    );
}

#[test]
fn ingress_and_workflow_accept_any_version() {
    let ingress = json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}});
    assert_eq!(
        assess("extensions", "v1beta1", "Ingress", &ingress, new()),
        ok(Healthy)
    );
    assert_eq!(
        assess("networking.k8s.io", "v1beta1", "Ingress", &ingress, new()),
        ok(Healthy)
    );
    let wf = json!({"status": {"phase": "Succeeded"}});
    assert_eq!(
        assess("argoproj.io", "v1beta1", "Workflow", &wf, new()),
        ok(Healthy)
    );
}

#[test]
fn h11_statefulsets_are_healthy_once_observed_ready_and_rolled_out() {
    let sts = |spec: Value, status: Value| {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "redis-master", "namespace": "default", "generation": 1},
               "spec": spec, "status": status})
    };
    let settled = json!({"observedGeneration": 1, "replicas": 1, "readyReplicas": 1,
                         "currentReplicas": 1, "updatedReplicas": 1,
                         "currentRevision": "redis-master-7b8f75b98",
                         "updateRevision": "redis-master-7b8f75b98"});
    let rolling = sts(
        json!({"replicas": 1, "updateStrategy": {"type": "RollingUpdate"}}),
        settled.clone(),
    );
    assert_eq!(
        verdict(&rolling),
        Health::new(
            Healthy,
            "statefulset rolling update complete 1 pods at revision redis-master-7b8f75b98..."
        )
    );
    let on_delete = sts(
        json!({"replicas": 1, "updateStrategy": {"type": "OnDelete"}}),
        json!({"observedGeneration": 1, "replicas": 1, "readyReplicas": 1,
               "currentRevision": "a", "updateRevision": "b"}),
    );
    assert_eq!(
        verdict(&on_delete),
        Health::new(Healthy, "statefulset has 1 ready pods")
    );

    let unobserved = sts(json!({"replicas": 1}), json!({"observedGeneration": 0}));
    assert_eq!(status(&unobserved), Progressing);
    let no_status = sts(json!({"replicas": 1}), json!({}));
    assert_eq!(status(&no_status), Progressing);
}

#[test]
fn a_statefulset_waits_for_ready_pods_then_for_its_revision() {
    let sts = |status: Value| {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "db", "generation": 2},
               "spec": {"replicas": 3}, "status": status})
    };
    let unready = sts(json!({"observedGeneration": 2, "readyReplicas": 1}));
    assert_eq!(
        verdict(&unready),
        Health::new(Progressing, "Waiting for 2 pods to be ready...")
    );
    let rolling = sts(json!({"observedGeneration": 2, "readyReplicas": 3,
                             "updatedReplicas": 1, "currentRevision": "db-1",
                             "updateRevision": "db-2"}));
    assert_eq!(
        verdict(&rolling),
        Health::new(
            Progressing,
            "waiting for statefulset rolling update to complete 1 pods at revision db-2..."
        )
    );
}

#[test]
fn a_partitioned_statefulset_only_waits_for_the_pods_above_the_partition() {
    let sts = |partition: Value, updated: i64| {
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "db", "generation": 1},
               "spec": {"replicas": 5, "updateStrategy": {"type": "RollingUpdate",
                        "rollingUpdate": {"partition": partition}}},
               "status": {"observedGeneration": 1, "readyReplicas": 5,
                          "updatedReplicas": updated,
                          "currentRevision": "db-1", "updateRevision": "db-2"}})
    };
    assert_eq!(
        verdict(&sts(json!(3), 1)),
        Health::new(
            Progressing,
            "Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated..."
        )
    );
    // The rollingUpdate block skips the revision comparison entirely.
    assert_eq!(
        verdict(&sts(json!(3), 2)),
        Health::new(
            Healthy,
            "partitioned roll out complete: 2 new pods have been updated..."
        )
    );
    assert_eq!(status(&sts(Value::Null, 0)), Healthy);
}

#[test]
fn h12_an_on_delete_daemonset_is_healthy_whatever_its_counts() {
    let ds = |strategy: &str, status: Value| {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
               "metadata": {"name": "fluentd", "namespace": "kube-system", "generation": 4},
               "spec": {"updateStrategy": {"type": strategy}}, "status": status})
    };
    let on_delete = ds(
        "OnDelete",
        json!({"observedGeneration": 4, "currentNumberScheduled": 1,
               "desiredNumberScheduled": 1, "numberAvailable": 1, "numberReady": 1}),
    );
    assert_eq!(status_in_both(&on_delete), Healthy);
    let behind = ds(
        "RollingUpdate",
        json!({"observedGeneration": 4, "desiredNumberScheduled": 3,
               "updatedNumberScheduled": 1, "numberAvailable": 3}),
    );
    assert_eq!(
        verdict(&behind).message.as_deref(),
        Some(
            "Waiting for daemon set \"fluentd\" rollout to finish: 1 out of 3 new pods have been updated..."
        )
    );
    let unavailable = ds(
        "RollingUpdate",
        json!({"observedGeneration": 4, "desiredNumberScheduled": 3,
               "updatedNumberScheduled": 3, "numberAvailable": 2}),
    );
    assert_eq!(status(&unavailable), Progressing);
    let stale = ds("OnDelete", json!({"observedGeneration": 3}));
    assert_eq!(status(&stale), Progressing);
}

#[test]
fn a_replicaset_with_a_true_replica_failure_condition_is_degraded() {
    let rs = |status: Value| {
        json!({"apiVersion": "apps/v1", "kind": "ReplicaSet",
               "metadata": {"name": "web-5d4f", "generation": 1},
               "spec": {"replicas": 2}, "status": status})
    };
    let failing = rs(json!({"observedGeneration": 1, "availableReplicas": 0,
        "conditions": [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                        "message": "pods \"web-5d4f-\" is forbidden: exceeded quota"}]}));
    assert_eq!(
        verdict(&failing),
        Health::new(Degraded, "pods \"web-5d4f-\" is forbidden: exceeded quota")
    );
    let cleared = rs(json!({"observedGeneration": 1, "availableReplicas": 1,
        "conditions": [{"type": "ReplicaFailure", "status": "False"}]}));
    assert_eq!(
        verdict(&cleared).message.as_deref(),
        Some("Waiting for rollout to finish: 1 out of 2 new replicas are available...")
    );
    let done = rs(json!({"observedGeneration": 1, "availableReplicas": 2}));
    assert_eq!(status(&done), Healthy);
}

// ----- H13–H15, H19: Service, Ingress, PVC, APIService ----------------------------------

#[test]
fn h13_only_a_load_balancer_service_without_an_address_is_progressing() {
    let svc = |spec_type: &str, status: Value| {
        json!({"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "argocd-server", "namespace": "argocd"},
               "spec": {"type": spec_type, "ports": [{"port": 80, "targetPort": 8080}]},
               "status": status})
    };
    assert_eq!(
        assess_with(&svc("ClusterIP", json!({"loadBalancer": {}})), new()),
        ok(Healthy)
    );
    let assigned = svc(
        "LoadBalancer",
        json!({"loadBalancer": {"ingress": [{"hostname": "abc.elb.amazonaws.com"}]}}),
    );
    assert_eq!(status_in_both(&assigned), Healthy);
    let unassigned = svc("LoadBalancer", json!({"loadBalancer": {}}));
    assert_eq!(assess_with(&unassigned, new()), ok(Progressing));
}

#[test]
fn h14_an_ingress_is_healthy_once_it_has_any_load_balancer_entry() {
    let ing = |status: Value| {
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "web", "namespace": "app"},
               "spec": {"rules": [{"host": "web.example.com"}]}, "status": status})
    };
    let assigned = ing(json!({"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}));
    assert_eq!(status_in_both(&assigned), Healthy);
    let empty_entry = ing(json!({"loadBalancer": {"ingress": [{}]}}));
    assert_eq!(status(&empty_entry), Healthy);
    let unassigned = ing(json!({"loadBalancer": {}}));
    assert_eq!(assess_with(&unassigned, new()), ok(Progressing));
}

#[test]
fn h15_a_pvc_follows_its_phase() {
    let pvc = |status: Value| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
               "metadata": {"name": "data", "namespace": "app"},
               "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                        "resources": {"requests": {"storage": "8Gi"}}},
               "status": status})
    };
    assert_eq!(status_in_both(&pvc(json!({"phase": "Bound"}))), Healthy);
    assert_eq!(
        status_in_both(&pvc(json!({"phase": "Pending"}))),
        Progressing
    );
    assert_eq!(status_in_both(&pvc(json!({"phase": "Lost"}))), Degraded);
    assert_eq!(status_in_both(&pvc(json!({}))), Unknown);
}

#[test]
fn h19_an_api_service_is_healthy_only_when_available() {
    let api = |version: &str, conditions: Value| {
        json!({"apiVersion": format!("apiregistration.k8s.io/{version}"),
               "kind": "APIService", "metadata": {"name": "v1beta1.metrics.k8s.io"},
               "spec": {"group": "metrics.k8s.io", "version": "v1beta1",
                        "service": {"name": "metrics-server", "namespace": "kube-system"}},
               "status": {"conditions": conditions}})
    };
    let available = api(
        "v1",
        json!([{"type": "Available", "status": "True", "reason": "Passed",
                "message": "all checks passed"}]),
    );
    assert_eq!(
        verdict(&available),
        Health::new(Healthy, "Passed: all checks passed")
    );
    let unavailable = api(
        "v1",
        json!([{"type": "Available", "status": "False", "reason": "MissingEndpoints",
                "message": "endpoints for service/metrics-server have no addresses"}]),
    );
    assert_eq!(status_in_both(&unavailable), Progressing);
    let beta = api("v1beta1", json!([{"type": "Available", "status": "True"}]));
    assert_eq!(status(&beta), Healthy);
    let unprocessed = api("v1", json!([]));
    assert_eq!(
        verdict(&unprocessed),
        Health::new(Progressing, "Waiting to be processed")
    );
}

// ----- H16: HPA ----------------------------------------------------------------------------

#[test]
fn h16_hpa_verdicts_from_v2_conditions_and_the_v1_annotation() {
    let degraded = hpa(
        "v2",
        json!({}),
        json!({"conditions": [hpa_condition("AbleToScale", "True", "FailedGetScale")]}),
    );
    assert_eq!(status_in_both(&degraded), Degraded);
    let progressing = hpa(
        "v2",
        json!({}),
        json!({"conditions": [
            hpa_condition("ScalingActive", "True", "ValidMetricFound"),
            hpa_condition("ScalingLimited", "False", "DesiredWithinRange")
        ]}),
    );
    assert_eq!(
        verdict(&progressing),
        Health::new(Progressing, "Waiting to Autoscale")
    );
    let no_annotation = hpa("v1", json!({}), json!({"currentReplicas": 1}));
    assert_eq!(
        verdict(&no_annotation),
        Health::new(Progressing, "Waiting to Autoscale")
    );
    let healthy = hpa(
        "v2",
        json!({}),
        json!({"conditions": [
            hpa_condition("AbleToScale", "True", "ReadyForNewScale"),
            hpa_condition("ScalingActive", "True", "ValidMetricFound"),
            hpa_condition("ScalingLimited", "False", "DesiredWithinRange")
        ]}),
    );
    assert_eq!(
        verdict(&healthy),
        Health::new(Healthy, "AbleToScale/ReadyForNewScale")
    );
}

#[test]
fn a_v1_hpa_reads_its_conditions_from_the_json_annotation() {
    let conditions = json!([
        {"type": "AbleToScale", "status": "True", "reason": "SucceededGetScale",
         "message": "the HPA controller was able to get the target's current scale"},
        {"type": "ScalingActive", "status": "False", "reason": "FailedGetResourceMetric",
         "message": "unable to get metrics for resource cpu"}
    ]);
    let annotated = hpa(
        "v1",
        json!({HPA_V1_CONDITIONS_ANNOTATION: conditions.to_string()}),
        json!({}),
    );
    assert_eq!(
        verdict_with(&annotated, new()),
        Health::new(Degraded, "unable to get metrics for resource cpu")
    );
    assert_eq!(verdict_with(&annotated, old()).status, Healthy);

    let empty = hpa("v1", json!({HPA_V1_CONDITIONS_ANNOTATION: "[]"}), json!({}));
    assert_eq!(status_in_both(&empty), Progressing);
    let null = hpa(
        "v1",
        json!({HPA_V1_CONDITIONS_ANNOTATION: "null"}),
        json!({}),
    );
    assert_eq!(status(&null), Progressing);
    // Go's encoding/json matches field names case-insensitively.
    let shouty = hpa(
        "v1",
        json!({HPA_V1_CONDITIONS_ANNOTATION: r#"[{"Type":"ScalingLimited","STATUS":"True"}]"#}),
        json!({}),
    );
    assert_eq!(status(&shouty), Healthy);
}

#[test]
fn a_malformed_v1_hpa_conditions_annotation_is_an_error() {
    for bad in [
        "",
        "{",
        r#"{"type":"AbleToScale"}"#,
        "[1]",
        r#"[{"status":true}]"#,
    ] {
        let h = hpa("v1", json!({HPA_V1_CONDITIONS_ANNOTATION: bad}), json!({}));
        let result = assess_with(&h, new());
        assert!(
            matches!(result, Err(HealthError::MalformedHpaConditions { .. })),
            "{bad:?}: {result:?}"
        );
        assert_eq!(hook_outcome(&result), TaskHealthOutcome::Error);
    }
}

#[test]
fn legacy_hpa_takes_the_first_matching_condition_while_ge_mono_looks_for_degraded_first() {
    let healthy_then_degraded = hpa(
        "v2",
        json!({}),
        json!({"conditions": [
            hpa_condition("AbleToScale", "True", "ReadyForNewScale"),
            hpa_condition("ScalingActive", "False", "FailedGetResourceMetric")
        ]}),
    );
    assert_eq!(verdict_with(&healthy_then_degraded, old()).status, Healthy);
    assert_eq!(
        verdict_with(&healthy_then_degraded, new()),
        Health::new(Degraded, "ScalingActive/FailedGetResourceMetric")
    );

    let degraded_then_healthy = hpa(
        "v2",
        json!({}),
        json!({"conditions": [
            hpa_condition("ScalingActive", "False", "InvalidSelector"),
            hpa_condition("AbleToScale", "True", "ReadyForNewScale")
        ]}),
    );
    assert_eq!(status_in_both(&degraded_then_healthy), Degraded);
}

#[test]
fn ge_mono_knows_more_degraded_hpa_reasons() {
    for reason in [
        "FailedGetObjectMetric",
        "FailedGetPodsMetric",
        "FailedGetExternalMetric",
        "FailedComputeMetricsReplicas",
    ] {
        let h = hpa(
            "v2",
            json!({}),
            json!({"conditions": [
                hpa_condition("ScalingActive", "False", reason),
                hpa_condition("AbleToScale", "True", "ReadyForNewScale")
            ]}),
        );
        assert_eq!(verdict_with(&h, new()).status, Degraded, "{reason}");
        assert_eq!(verdict_with(&h, old()).status, Healthy, "{reason}");
    }
}

#[test]
fn hpa_v2beta_versions_are_checked_by_legacy_and_an_error_in_ge_mono() {
    for version in ["v2beta1", "v2beta2"] {
        let h = hpa(
            version,
            json!({}),
            json!({"conditions": [hpa_condition("AbleToScale", "True", "ReadyForNewScale")]}),
        );
        assert_eq!(verdict_with(&h, old()).status, Healthy);
        let mono = assess_with(&h, new());
        assert_eq!(
            mono.map_err(|e| e.to_string()),
            Err(format!(
                "unsupported HPA GVK: autoscaling/{version}, Kind=HorizontalPodAutoscaler"
            ))
        );
    }
}

// ----- H17, H18: Workflow and kinds without health -------------------------------------

#[test]
fn h17_an_argo_workflow_follows_its_phase() {
    let wf = |status: Value| {
        json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Workflow",
               "metadata": {"name": "hello-world", "namespace": "argo"},
               "spec": {"entrypoint": "main"}, "status": status})
    };
    assert_eq!(
        status_in_both(&wf(json!({"phase": "Running"}))),
        Progressing
    );
    assert_eq!(status_in_both(&wf(json!({"phase": "Succeeded"}))), Healthy);
    assert_eq!(status_in_both(&wf(json!({}))), Progressing);
    assert_eq!(status(&wf(json!({"phase": "Pending"}))), Progressing);
    assert_eq!(
        verdict(&wf(json!({"phase": "Failed", "message": "child failed"}))),
        Health::new(Degraded, "child failed")
    );
    assert_eq!(status(&wf(json!({"phase": "Error"}))), Degraded);
    let odd = wf(json!({"phase": "Omitted"}));
    assert_eq!(status(&odd), Unknown);
    assert_eq!(
        hook_outcome(&assess_with(&odd, new())),
        TaskHealthOutcome::Failed
    );
}

#[test]
fn h18_knative_services_and_argo_applications_have_no_health_and_gate_nothing() {
    let knative = json!({
        "apiVersion": "serving.knative.dev/v1", "kind": "Service",
        "metadata": {"name": "helloworld-go", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"image": "gcr.io/knative-samples/helloworld-go"}]}}},
        "status": {"conditions": [{"type": "Ready", "status": "False"}]}
    });
    let application = json!({
        "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": "guestbook", "namespace": "argocd"},
        "spec": {"destination": {"server": "https://kubernetes.default.svc"}},
        "status": {"health": {"status": "Degraded"}, "sync": {"status": "OutOfSync"}}
    });
    for obj in [&knative, &application] {
        for release in [old(), new()] {
            let result = assess_with(obj, release);
            assert_eq!(result, Ok(None));
            assert_eq!(hook_outcome(&result), TaskHealthOutcome::Succeeded);
            assert_eq!(resource_outcome(&result), TaskHealthOutcome::Succeeded);
        }
    }
    assert!(!has_health_check("serving.knative.dev", "Service"));
    assert!(!has_health_check("argoproj.io", "Application"));
    assert!(has_health_check("", "Service"));
    assert!(has_health_check("argoproj.io", "Workflow"));
}

#[test]
fn has_health_check_covers_exactly_the_dispatched_kinds() {
    let checked = [
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "ReplicaSet"),
        ("apps", "DaemonSet"),
        ("extensions", "Ingress"),
        ("networking.k8s.io", "Ingress"),
        ("argoproj.io", "Workflow"),
        ("apiregistration.k8s.io", "APIService"),
        ("", "Service"),
        ("", "PersistentVolumeClaim"),
        ("", "Pod"),
        ("batch", "Job"),
        ("autoscaling", "HorizontalPodAutoscaler"),
    ];
    for (group, kind) in checked {
        assert!(has_health_check(group, kind), "{group}/{kind}");
    }
    let unchecked = [
        ("", "ConfigMap"),
        ("", "Secret"),
        ("batch", "CronJob"),
        ("policy", "PodDisruptionBudget"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("extensions", "Deployment"),
        ("apps", "deployment"),
        ("networking.k8s.io", "NetworkPolicy"),
    ];
    for (group, kind) in unchecked {
        assert!(!has_health_check(group, kind), "{group}/{kind}");
        assert_eq!(assess(group, "v1", kind, &json!({}), new()), Ok(None));
    }
}

// ----- Pending deletion ------------------------------------------------------------------

#[test]
fn pending_deletion_applies_to_kinds_without_health_and_names_finalizers_from_3_6() {
    let mut secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "creds", "deletionTimestamp": "2024-05-01T10:00:00Z",
                     "finalizers": ["kubernetes", "example.com/keep"]}});
    assert_eq!(
        assess_with(&secret, old()),
        Ok(Some(Health::new(Progressing, PENDING_DELETION)))
    );
    assert_eq!(
        assess_with(&secret, new()),
        Ok(Some(Health::new(
            Progressing,
            "Pending deletion; blocked by finalizers: kubernetes, example.com/keep"
        )))
    );
    secret["metadata"]["finalizers"] = json!([]);
    assert_eq!(
        assess_with(&secret, new()),
        Ok(Some(Health::new(Progressing, PENDING_DELETION)))
    );
    // Up to 3.5 before the version check: a deleting v1beta2 Deployment is not an error;
    // from 3.6 the check runs first and its error wins.
    let v1beta2 = json!({"apiVersion": "apps/v1beta2", "kind": "Deployment",
        "metadata": {"name": "web", "deletionTimestamp": "2024-05-01T10:00:00.123+02:00"}});
    assert_eq!(verdict_with(&v1beta2, old()).status, Progressing);
    assert!(matches!(
        assess_with(&v1beta2, new()),
        Err(HealthError::UnsupportedVersion { .. })
    ));
    // A kind with a check: its verdict is replaced by the pending deletion.
    let mut done = job(json!({"conditions": [{"type": "Complete", "status": "True"}]}));
    done["metadata"]["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
    done["metadata"]["finalizers"] = json!(["foregroundDeletion"]);
    assert_eq!(
        verdict_with(&done, new()).message.as_deref(),
        Some("Pending deletion; blocked by finalizers: foregroundDeletion")
    );
}

#[test]
fn a_deleting_hook_that_still_has_the_hook_finalizer_is_assessed_normally() {
    let mut finished = job(json!({"conditions": [{"type": "Complete", "status": "True"}]}));
    finished["metadata"]["deletionTimestamp"] = json!("2024-05-01T10:00:00Z");
    finished["metadata"]["finalizers"] = json!(["foregroundDeletion", HOOK_FINALIZER]);
    assert_eq!(status(&finished), Healthy);
    let mut secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "s", "deletionTimestamp": "2024-05-01T10:00:00Z",
                     "finalizers": [HOOK_FINALIZER]}});
    assert_eq!(assess_with(&secret, new()), Ok(None));
    // A finalizer list with a non-string entry reads as no finalizers at all, like Go's.
    secret["metadata"]["finalizers"] = json!([HOOK_FINALIZER, 7]);
    assert_eq!(status(&secret), Progressing);
}

#[test]
fn only_a_valid_non_zero_rfc3339_deletion_timestamp_counts() {
    let with_ts = |ts: Value| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "c", "deletionTimestamp": ts}})
    };
    for valid in [
        "2018-12-03T10:16:04Z",
        "2024-02-29T23:59:59.999999999Z",
        "2024-05-01T10:00:00,5-07:30",
        "0001-01-01T00:00:01Z",
    ] {
        assert_eq!(status(&with_ts(json!(valid))), Progressing, "{valid}");
    }
    for ignored in [
        json!(""),
        json!(null),
        json!(1_700_000_000),
        json!("yesterday"),
        json!("2018-12-03 10:16:04Z"),
        json!("2018-12-03T10:16:04"),
        json!("2023-02-29T10:16:04Z"),
        json!("2018-13-03T10:16:04Z"),
        json!("2018-12-03T24:00:00Z"),
        json!("2018-12-03T10:16:04.Z"),
        json!("0001-01-01T00:00:00Z"),
        json!("0001-01-01T02:00:00+02:00"),
    ] {
        assert_eq!(
            assess_with(&with_ts(ignored.clone()), new()),
            Ok(None),
            "{ignored}"
        );
    }
}

// ----- Outcome tables (spec §5.2 / §8.9) --------------------------------------------------

#[test]
fn hook_outcomes_follow_get_operation_phase() {
    use TaskHealthOutcome as T;
    let cases = [
        (Ok(None), T::Succeeded),
        (ok(Healthy), T::Succeeded),
        (ok(Progressing), T::Running),
        (ok(Suspended), T::Running),
        (ok(Degraded), T::Failed),
        (ok(Unknown), T::Failed),
        (ok(Missing), T::Succeeded),
        (
            Err(HealthError::MalformedHpaConditions { reason: "x".into() }),
            T::Error,
        ),
    ];
    for (health, expected) in cases {
        assert_eq!(hook_outcome(&health), expected, "{health:?}");
    }
}

#[test]
fn non_hook_outcomes_only_finish_on_healthy_or_degraded() {
    use TaskHealthOutcome as T;
    let cases = [
        (Ok(None), T::Succeeded),
        (ok(Healthy), T::Succeeded),
        (ok(Degraded), T::Failed),
        (ok(Progressing), T::Running),
        (ok(Suspended), T::Running),
        (ok(Unknown), T::Running),
        (ok(Missing), T::Running),
        (
            Err(HealthError::UnsupportedVersion {
                group: "apps".into(),
                version: "v1beta2".into(),
                kind: "Deployment".into(),
            }),
            T::Running,
        ),
    ];
    for (health, expected) in cases {
        assert_eq!(resource_outcome(&health), expected, "{health:?}");
    }
}

// ----- Status type -----------------------------------------------------------------------

#[test]
fn statuses_rank_from_healthy_to_unknown_like_argo_cd_health_order() {
    let ranked = [Healthy, Suspended, Progressing, Missing, Degraded, Unknown];
    assert!(ranked.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        [Progressing, Healthy, Degraded].into_iter().max(),
        Some(Degraded)
    );
}

#[test]
fn statuses_display_and_serialize_as_argo_cd_spells_them() {
    assert_eq!(Progressing.to_string(), "Progressing");
    assert_eq!(
        serde_json::to_value(Suspended).ok(),
        Some(json!("Suspended"))
    );
    assert_eq!(
        serde_json::to_value(Health::new(Progressing, "Pending deletion")).ok(),
        Some(json!({"status": "Progressing", "message": "Pending deletion"}))
    );
    assert_eq!(
        serde_json::to_value(Health::new(Healthy, "")).ok(),
        Some(json!({"status": "Healthy"}))
    );
}

#[test]
fn assess_resource_uses_the_resources_own_group_version_and_kind() {
    let raw = job(json!({"conditions": [{"type": "Complete", "status": "True"}]}));
    let r = Resource::from_value(raw, None).unwrap();
    assert_eq!(assess_resource(&r, new()), ok(Healthy));
}

// ----- Robustness ------------------------------------------------------------------------

#[test]
fn replicas_written_as_strings_are_treated_as_absent() {
    let stringly = deployment(
        json!({"replicas": "3"}),
        1,
        json!({"observedGeneration": 1, "replicas": "3", "updatedReplicas": "3",
               "availableReplicas": "1"}),
    );
    assert_eq!(status(&stringly), Healthy);
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 1},
        "spec": {"replicas": "3"}, "status": {"observedGeneration": 1.0}});
    assert_eq!(status(&sts), Healthy);
}

#[test]
fn extreme_counts_do_not_overflow() {
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": "db", "generation": 1},
        "spec": {"replicas": i64::MAX, "updateStrategy": {"type": "RollingUpdate",
                 "rollingUpdate": {"partition": i64::MIN}}},
        "status": {"observedGeneration": 1, "readyReplicas": i64::MAX}});
    assert_eq!(status(&sts), Progressing);
    let dep = deployment(
        json!({}),
        1,
        json!({"observedGeneration": 1, "replicas": i64::MAX,
               "updatedReplicas": i64::MIN, "availableReplicas": u64::MAX}),
    );
    assert_eq!(status(&dep), Progressing);
}

#[test]
fn no_check_panics_on_malformed_objects() {
    let kinds = [
        ("apps", "v1", "Deployment"),
        ("apps", "v1", "StatefulSet"),
        ("apps", "v1", "ReplicaSet"),
        ("apps", "v1", "DaemonSet"),
        ("networking.k8s.io", "v1", "Ingress"),
        ("argoproj.io", "v1alpha1", "Workflow"),
        ("apiregistration.k8s.io", "v1", "APIService"),
        ("", "v1", "Service"),
        ("", "v1", "PersistentVolumeClaim"),
        ("", "v1", "Pod"),
        ("batch", "v1", "Job"),
        ("autoscaling", "v1", "HorizontalPodAutoscaler"),
        ("autoscaling", "v2", "HorizontalPodAutoscaler"),
        ("", "v1", "ConfigMap"),
    ];
    let weird = [
        json!(null),
        json!(42),
        json!("text"),
        json!([1, 2]),
        json!({}),
        json!({"metadata": "x", "spec": [], "status": 7}),
        json!({"metadata": {"annotations": [], "finalizers": {}, "deletionTimestamp": 5,
                            "generation": "2"},
               "spec": {"replicas": -1, "paused": "yes", "type": 3, "restartPolicy": null,
                        "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": 1}},
               "status": {"conditions": [null, 1, "x", {"type": 1, "status": []}],
                          "phase": {"a": 1}, "containerStatuses": [null, {"state": 1},
                              {"state": {"waiting": "x", "terminated": []}},
                              {"state": {"waiting": {"reason": 7}}}],
                          "initContainerStatuses": "x",
                          "loadBalancer": {"ingress": "x"},
                          "observedGeneration": 1e300, "readyReplicas": -1e300}}),
        json!({"metadata": {"annotations": {HPA_V1_CONDITIONS_ANNOTATION: 5,
                                            "argocd.argoproj.io/hook": ["PreSync"]}},
               "status": {"phase": "Failed", "containerStatuses": [
                   {"name": 5, "state": {"terminated": {"exitCode": "1", "reason": 9}}}]}}),
    ];
    for (group, version, kind) in kinds {
        for obj in &weird {
            for release in [old(), new()] {
                // Any verdict is fine; reaching the end without a panic is the point.
                let _ = assess(group, version, kind, obj, release);
            }
        }
    }
}
