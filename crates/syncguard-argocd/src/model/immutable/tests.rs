//! One test per kind: a change of each immutable field is refused, with the server's field
//! name; a change of the fields around it is not.

#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};

use super::{ApplyMode, refused_changes, refused_changes_in};

/// (server field, pointer) of each refusal.
fn fields(api: &str, kind: &str, before: &Value, after: &Value) -> Vec<(String, String)> {
    refused_changes(api, kind, before, after)
        .into_iter()
        .map(|r| (r.field, r.pointer))
        .collect()
}

fn names(api: &str, kind: &str, before: &Value, after: &Value) -> Vec<String> {
    fields(api, kind, before, after)
        .into_iter()
        .map(|f| f.0)
        .collect()
}

/// `base` with `patch` merged in (JSON merge patch: `null` removes).
fn with(base: &Value, patch: Value) -> Value {
    let mut out = base.clone();
    merge(&mut out, patch);
    out
}

fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(&k);
                } else {
                    merge(t.entry(k).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p,
    }
}

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}},
           "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
}

#[test]
fn deployment_replicaset_daemonset_selector() {
    let base = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template()}});
    for kind in ["Deployment", "ReplicaSet", "DaemonSet"] {
        let moved = with(
            &base,
            json!({"spec": {"selector": {"matchLabels": {"app": "web", "tier": "x"}}}}),
        );
        assert_eq!(
            fields("apps/v1", kind, &base, &moved),
            [("spec.selector".to_string(), "/spec/selector".to_string())]
        );
        let scaled = with(
            &base,
            json!({"spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.28"}]}}}}),
        );
        assert!(names("apps/v1", kind, &base, &scaled).is_empty());
    }
    let r = &refused_changes(
        "apps/v1",
        "Deployment",
        &base,
        &with(
            &base,
            json!({"spec": {"selector": {"matchLabels": {"app": "api"}}}}),
        ),
    )[0];
    assert!(
        r.message.starts_with("spec.selector: Invalid value: ")
            && r.message.ends_with(": field is immutable"),
        "{}",
        r.message
    );
}

#[test]
fn statefulset_spec_outside_the_rollout_fields() {
    let base = json!({"spec": {"serviceName": "db", "replicas": 1,
        "selector": {"matchLabels": {"app": "db"}}, "template": template(),
        "volumeClaimTemplates": [{"metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
    let grown = with(
        &base,
        json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}}]}}),
    );
    assert_eq!(
        fields("apps/v1", "StatefulSet", &base, &grown),
        [("spec".to_string(), "/spec/volumeClaimTemplates".to_string())]
    );
    let same_size = with(
        &base,
        json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem", "resources": {"requests": {"storage": "1024Mi"}}}}]}}),
    );
    assert!(names("apps/v1", "StatefulSet", &base, &same_size).is_empty());
    assert_eq!(
        names(
            "apps/v1",
            "StatefulSet",
            &base,
            &with(&base, json!({"spec": {"serviceName": "db-headless"}}))
        ),
        ["spec"]
    );
    assert_eq!(
        names(
            "apps/v1",
            "StatefulSet",
            &base,
            &with(&base, json!({"spec": {"podManagementPolicy": "Parallel"}}))
        ),
        ["spec"]
    );
    assert!(
        names(
            "apps/v1",
            "StatefulSet",
            &base,
            &with(
                &base,
                json!({"spec": {"podManagementPolicy": "OrderedReady"}})
            )
        )
        .is_empty()
    );
    let rollout = with(
        &base,
        json!({"spec": {"replicas": 3, "minReadySeconds": 5, "revisionHistoryLimit": 2,
        "updateStrategy": {"type": "OnDelete"}, "ordinals": {"start": 1},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"},
        "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.28"}]}}}}),
    );
    assert!(names("apps/v1", "StatefulSet", &base, &rollout).is_empty());
}

fn job() -> Value {
    json!({"spec": {"backoffLimit": 2, "template": {"spec": {"restartPolicy": "Never",
        "containers": [{"name": "c", "image": "busybox:1.36", "command": ["true"]}]}}}})
}

#[test]
fn job_template_selector_and_completions() {
    let base = job();
    let image = with(
        &base,
        json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.37", "command": ["true"]}]}}}}),
    );
    assert_eq!(
        fields("batch/v1", "Job", &base, &image),
        [("spec.template".to_string(), "/spec/template".to_string())]
    );
    let knobs = with(
        &base,
        json!({"spec": {"backoffLimit": 5, "activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 10, "parallelism": 2}}),
    );
    assert!(names("batch/v1", "Job", &base, &knobs).is_empty());
    assert_eq!(
        names(
            "batch/v1",
            "Job",
            &base,
            &with(&base, json!({"spec": {"completions": 3}}))
        ),
        ["spec.completions"]
    );
    assert_eq!(
        names(
            "batch/v1",
            "Job",
            &base,
            &with(
                &base,
                json!({"spec": {"completionMode": "Indexed", "completions": 1}})
            )
        ),
        ["spec.completionMode"]
    );
    assert!(
        names(
            "batch/v1",
            "Job",
            &base,
            &with(&base, json!({"spec": {"completionMode": "NonIndexed"}}))
        )
        .is_empty()
    );
    let indexed = with(
        &base,
        json!({"spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2}}),
    );
    assert!(
        names(
            "batch/v1",
            "Job",
            &indexed,
            &with(
                &indexed,
                json!({"spec": {"completions": 4, "parallelism": 4}})
            )
        )
        .is_empty()
    );
    assert_eq!(
        names(
            "batch/v1",
            "Job",
            &indexed,
            &with(&indexed, json!({"spec": {"completions": 4}}))
        ),
        ["spec.completions"]
    );
    assert_eq!(
        names(
            "batch/v1",
            "Job",
            &base,
            &with(&base, json!({"spec": {"podFailurePolicy": {"rules": []}}}))
        ),
        ["spec.podFailurePolicy"]
    );
    assert_eq!(
        names(
            "batch/v1",
            "Job",
            &base,
            &with(&base, json!({"spec": {"managedBy": "x.io/y"}}))
        ),
        ["spec.managedBy"]
    );
}

#[test]
fn a_job_keeps_its_generated_selector_on_apply_and_loses_it_on_replace() {
    let live = with(
        &job(),
        json!({"spec": {
        "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
        "template": {"metadata": {"labels": {"batch.kubernetes.io/controller-uid": "u1",
            "batch.kubernetes.io/job-name": "j", "controller-uid": "u1", "job-name": "j"}}}}}),
    );
    assert_eq!(
        names("batch/v1", "Job", &live, &job()),
        Vec::<String>::new()
    );
    let replaced: Vec<String> =
        refused_changes_in(ApplyMode::Replace, "batch/v1", "Job", &job(), &job())
            .into_iter()
            .map(|r| r.field)
            .collect();
    assert_eq!(
        replaced,
        [
            "spec.selector",
            "spec.template.metadata.labels",
            "spec.template"
        ]
    );
}

#[test]
fn a_suspended_job_that_never_started_may_move_its_pods() {
    let base = with(&job(), json!({"spec": {"suspend": true}}));
    let moved = with(
        &base,
        json!({"spec": {"template": {
        "metadata": {"labels": {"queue": "a"}, "annotations": {"x": "y"}},
        "spec": {"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "k", "operator": "Exists"}],
                 "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                    {"nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "Exists"}]}]}}}}}}}),
    );
    assert!(names("batch/v1", "Job", &base, &moved).is_empty());
    let started = with(
        &base,
        json!({"status": {"startTime": "2025-01-01T00:00:00Z"}}),
    );
    assert_eq!(
        names("batch/v1", "Job", &started, &moved),
        ["spec.template"]
    );
    assert_eq!(names("batch/v1", "Job", &job(), &moved), ["spec.template"]);
    let env = with(
        &base,
        json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.36", "command": ["false"]}]}}}}),
    );
    assert_eq!(names("batch/v1", "Job", &base, &env), ["spec.template"]);
}

#[test]
fn pod_images_only() {
    let base = json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}});
    assert!(
        names(
            "v1",
            "Pod",
            &base,
            &with(
                &base,
                json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.28"}]}})
            )
        )
        .is_empty()
    );
    assert!(names("v1", "Pod", &base, &with(&base, json!({"spec": {"activeDeadlineSeconds": 30, "tolerations": [{"key": "k", "operator": "Exists"}]}}))).is_empty());
    assert_eq!(
        fields(
            "v1",
            "Pod",
            &base,
            &with(
                &base,
                json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.27", "args": ["-g"]}]}})
            )
        ),
        [("spec".to_string(), "/spec/containers".to_string())]
    );
    assert_eq!(
        names(
            "v1",
            "Pod",
            &base,
            &with(
                &base,
                json!({"spec": {"containers": [{"name": "c", "image": "a"}, {"name": "d", "image": "b"}]}})
            )
        ),
        ["spec.containers"]
    );
    let deadline = with(&base, json!({"spec": {"activeDeadlineSeconds": 30}}));
    assert_eq!(
        names(
            "v1",
            "Pod",
            &deadline,
            &with(&base, json!({"spec": {"activeDeadlineSeconds": 60}}))
        ),
        ["spec.activeDeadlineSeconds"]
    );
    assert!(
        names(
            "v1",
            "Pod",
            &base,
            &with(
                &base,
                json!({"spec": {"restartPolicy": "Always", "dnsPolicy": "ClusterFirst"}})
            )
        )
        .is_empty()
    );
}

#[test]
fn service_cluster_ip_unless_external_name() {
    let base = json!({"spec": {"clusterIP": "10.96.0.50", "ports": [{"port": 80}]}});
    assert_eq!(
        fields(
            "v1",
            "Service",
            &base,
            &with(&base, json!({"spec": {"clusterIP": "10.96.0.60"}}))
        ),
        [(
            "spec.clusterIPs[0]".to_string(),
            "/spec/clusterIP".to_string()
        )]
    );
    assert_eq!(
        names(
            "v1",
            "Service",
            &base,
            &with(&base, json!({"spec": {"clusterIP": "None"}}))
        ),
        ["spec.clusterIPs[0]"]
    );
    let omitted = json!({"spec": {"ports": [{"port": 80}]}});
    assert!(names("v1", "Service", &base, &omitted).is_empty());
    for mode in [ApplyMode::Apply, ApplyMode::Replace] {
        assert!(refused_changes_in(mode, "v1", "Service", &base, &omitted).is_empty());
    }
    // Allocated at creation: a manifest that now names an address names another one.
    assert_eq!(
        names("v1", "Service", &omitted, &base),
        ["spec.clusterIPs[0]"]
    );
    let external = json!({"spec": {"type": "ExternalName", "externalName": "example.com"}});
    assert!(names("v1", "Service", &base, &external).is_empty());
    assert!(names("v1", "Service", &external, &base).is_empty());
    let headless = json!({"spec": {"clusterIP": "None"}});
    assert!(names("v1", "Service", &headless, &headless).is_empty());
    let lb = json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": "a.io/lb", "ports": [{"port": 80}]}});
    assert_eq!(
        names(
            "v1",
            "Service",
            &lb,
            &with(&lb, json!({"spec": {"loadBalancerClass": "b.io/lb"}}))
        ),
        ["spec.loadBalancerClass"]
    );
    assert!(names("v1", "Service", &omitted, &lb).is_empty());
    assert!(
        names(
            "v1",
            "Service",
            &base,
            &with(&base, json!({"spec": {"type": "NodePort"}}))
        )
        .is_empty()
    );
}

#[test]
fn secret_type_always_and_data_once_immutable() {
    let base = json!({"type": "Opaque", "data": {"k": "dg=="}});
    assert_eq!(
        names(
            "v1",
            "Secret",
            &base,
            &with(&base, json!({"type": "kubernetes.io/tls"}))
        ),
        ["type"]
    );
    assert!(names("v1", "Secret", &base, &with(&base, json!({"type": null}))).is_empty());
    assert!(
        names(
            "v1",
            "Secret",
            &base,
            &with(&base, json!({"data": {"k": "dw=="}}))
        )
        .is_empty()
    );
    let frozen = with(&base, json!({"immutable": true}));
    assert_eq!(
        names(
            "v1",
            "Secret",
            &frozen,
            &with(&frozen, json!({"data": {"k": "dw=="}}))
        ),
        ["data"]
    );
    assert_eq!(
        names(
            "v1",
            "Secret",
            &frozen,
            &with(&frozen, json!({"immutable": false}))
        ),
        ["immutable"]
    );
    // stringData is written into data before the comparison.
    let same_as_string = json!({"immutable": true, "stringData": {"k": "v"}});
    assert!(names("v1", "Secret", &frozen, &same_as_string).is_empty());
    assert!(
        names(
            "v1",
            "Secret",
            &frozen,
            &with(&frozen, json!({"metadata": {"labels": {"a": "b"}}}))
        )
        .is_empty()
    );
}

#[test]
fn config_map_data_once_immutable() {
    let base = json!({"data": {"a": "1"}});
    assert!(names("v1", "ConfigMap", &base, &json!({"data": {"a": "2"}})).is_empty());
    let frozen = with(&base, json!({"immutable": true}));
    assert_eq!(
        names(
            "v1",
            "ConfigMap",
            &frozen,
            &json!({"data": {"a": "2"}, "binaryData": {"b": "AA=="}})
        ),
        ["immutable", "data", "binaryData"]
    );
    assert_eq!(
        names(
            "v1",
            "ConfigMap",
            &frozen,
            &json!({"immutable": true, "data": {}})
        ),
        ["data"]
    );
    assert!(
        names(
            "v1",
            "ConfigMap",
            &base,
            &with(&base, json!({"immutable": true}))
        )
        .is_empty()
    );
}

#[test]
fn claim_grows_when_bound_only() {
    let base = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    let grown = with(
        &base,
        json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}),
    );
    // Without a storage class a claim never grows (the resize admission's refusal, no field).
    assert_eq!(names("v1", "PersistentVolumeClaim", &base, &grown), [""]);
    let expandable = with(&base, json!({"spec": {"storageClassName": "expandable"}}));
    let grown_in_class = with(
        &expandable,
        json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}}),
    );
    assert!(names("v1", "PersistentVolumeClaim", &expandable, &grown_in_class).is_empty());
    let pending = with(&base, json!({"status": {"phase": "Pending"}}));
    assert_eq!(
        fields("v1", "PersistentVolumeClaim", &pending, &grown),
        [("spec".to_string(), "/spec/resources".to_string())]
    );
    let shrunk = with(
        &base,
        json!({"spec": {"resources": {"requests": {"storage": "512Mi"}}}}),
    );
    assert_eq!(
        names("v1", "PersistentVolumeClaim", &base, &shrunk),
        ["spec.resources.requests.storage"]
    );
    assert_eq!(
        names(
            "v1",
            "PersistentVolumeClaim",
            &base,
            &with(&base, json!({"spec": {"storageClassName": "fast"}}))
        ),
        Vec::<String>::new()
    );
    let classed = with(&base, json!({"spec": {"storageClassName": "slow"}}));
    assert_eq!(
        names(
            "v1",
            "PersistentVolumeClaim",
            &classed,
            &with(&base, json!({"spec": {"storageClassName": "fast"}}))
        ),
        ["spec"]
    );
    assert_eq!(
        names(
            "v1",
            "PersistentVolumeClaim",
            &base,
            &with(&base, json!({"spec": {"volumeMode": "Block"}}))
        ),
        ["spec", "volumeMode"]
    );
    assert_eq!(
        names(
            "v1",
            "PersistentVolumeClaim",
            &base,
            &with(&base, json!({"spec": {"accessModes": ["ReadWriteMany"]}}))
        ),
        ["spec"]
    );
    let named = with(&base, json!({"spec": {"volumeName": "pv-a"}}));
    assert_eq!(
        names(
            "v1",
            "PersistentVolumeClaim",
            &named,
            &with(&base, json!({"spec": {"volumeName": "pv-b"}}))
        ),
        ["spec"]
    );
    assert!(
        names(
            "v1",
            "PersistentVolumeClaim",
            &pending,
            &with(&pending, json!({"spec": {"volumeName": "pv-b"}}))
        )
        .is_empty()
    );
    assert!(
        names(
            "v1",
            "PersistentVolumeClaim",
            &base,
            &with(
                &base,
                json!({"spec": {"volumeAttributesClassName": "gold"}})
            )
        )
        .is_empty()
    );
    let replaced: Vec<String> = refused_changes_in(
        ApplyMode::Replace,
        "v1",
        "PersistentVolumeClaim",
        &base,
        &base,
    )
    .into_iter()
    .map(|r| r.field)
    .collect();
    assert_eq!(replaced, ["spec"]);
}

#[test]
fn volume_source_is_the_disk() {
    let base = json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/a"}}});
    assert_eq!(
        fields(
            "v1",
            "PersistentVolume",
            &base,
            &with(&base, json!({"spec": {"hostPath": {"path": "/b"}}}))
        ),
        [(
            "spec.persistentvolumesource".to_string(),
            "/spec/hostPath".to_string()
        )]
    );
    assert!(names("v1", "PersistentVolume", &base, &with(&base, json!({"spec": {"capacity": {"storage": "2Gi"}, "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "x"}}))).is_empty());
    assert_eq!(
        names(
            "v1",
            "PersistentVolume",
            &base,
            &with(&base, json!({"spec": {"volumeMode": "Block"}}))
        ),
        ["volumeMode"]
    );
}

#[test]
fn storage_class_recipe() {
    // `parameters` is compared as a plain Go map: an explicit `{}` is not an absent one.
    let none = json!({"provisioner": "a.io/x"});
    assert_eq!(
        names(
            "storage.k8s.io/v1",
            "StorageClass",
            &none,
            &with(&none, json!({"parameters": {}}))
        ),
        ["parameters"]
    );
    assert!(
        names(
            "storage.k8s.io/v1",
            "StorageClass",
            &with(&none, json!({"parameters": {}})),
            &none
        )
        .is_empty()
    );
    let base = json!({"provisioner": "a.io/x", "parameters": {"type": "ssd"}});
    assert_eq!(
        names(
            "storage.k8s.io/v1",
            "StorageClass",
            &base,
            &json!({"provisioner": "b.io/x", "parameters": {"type": "hdd"}, "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer"})
        ),
        [
            "parameters",
            "provisioner",
            "reclaimPolicy",
            "volumeBindingMode"
        ]
    );
    assert!(names("storage.k8s.io/v1", "StorageClass", &base, &with(&base, json!({"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "allowVolumeExpansion": true, "mountOptions": ["ro"]}))).is_empty());
}

#[test]
fn bindings_priority_classes_drivers_and_the_rest() {
    let rb = json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "a"}, "subjects": []});
    for kind in ["RoleBinding", "ClusterRoleBinding"] {
        assert_eq!(
            names(
                "rbac.authorization.k8s.io/v1",
                kind,
                &rb,
                &with(&rb, json!({"roleRef": {"name": "b"}}))
            ),
            ["roleRef"]
        );
        assert!(
            names(
                "rbac.authorization.k8s.io/v1",
                kind,
                &rb,
                &with(&rb, json!({"subjects": [{"kind": "User", "name": "u"}]}))
            )
            .is_empty()
        );
    }
    let pc = json!({"value": 1000});
    assert_eq!(
        names(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            &pc,
            &json!({"value": 2000, "preemptionPolicy": "Never"})
        ),
        ["value", "preemptionPolicy"]
    );
    assert!(
        names(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            &pc,
            &json!({"value": 1000, "description": "d", "preemptionPolicy": "PreemptLowerPriority"})
        )
        .is_empty()
    );
    let csi = json!({"spec": {"attachRequired": true}});
    assert_eq!(
        fields(
            "storage.k8s.io/v1",
            "CSIDriver",
            &csi,
            &json!({"spec": {"attachRequired": false}})
        ),
        [(
            "spec.attachedRequired".to_string(),
            "/spec/attachRequired".to_string()
        )]
    );
    assert!(
        names(
            "storage.k8s.io/v1",
            "CSIDriver",
            &csi,
            &json!({"spec": {"podInfoOnMount": true, "volumeLifecycleModes": ["Persistent"]}})
        )
        .is_empty()
    );
    let va = json!({"spec": {"attacher": "a.io", "nodeName": "n1", "source": {"persistentVolumeName": "pv"}}});
    assert_eq!(
        names(
            "storage.k8s.io/v1",
            "VolumeAttachment",
            &va,
            &with(&va, json!({"spec": {"nodeName": "n2"}}))
        ),
        ["spec"]
    );
    let ic = json!({"spec": {"controller": "a.io/ingress"}});
    assert_eq!(
        names(
            "networking.k8s.io/v1",
            "IngressClass",
            &ic,
            &json!({"spec": {"controller": "b.io/ingress"}})
        ),
        ["spec.controller"]
    );
    assert_eq!(
        names(
            "node.k8s.io/v1",
            "RuntimeClass",
            &json!({"handler": "runc"}),
            &json!({"handler": "kata"})
        ),
        ["handler"]
    );
    let anything_a = json!({"spec": {"schedule": "* * * * *", "rules": [1]}, "data": {"a": "1"}});
    let anything_b = json!({"spec": {"schedule": "0 * * * *", "selector": {"matchLabels": {"a": "b"}}}, "data": {"a": "2"}});
    for (api, kind) in [
        ("batch/v1", "CronJob"),
        ("v1", "Namespace"),
        ("networking.k8s.io/v1", "Ingress"),
        ("policy/v1", "PodDisruptionBudget"),
        ("coordination.k8s.io/v1", "Lease"),
        ("example.com/v1", "Widget"),
    ] {
        assert!(
            names(api, kind, &anything_a, &anything_b).is_empty(),
            "{kind}"
        );
    }
    assert!(super::covers("batch/v1", "CronJob") && !super::covers("example.com/v1", "Widget"));
}

#[test]
fn crd_scope_kind_and_stored_versions() {
    let base = json!({"spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget"},
        "versions": [{"name": "v1", "served": true, "storage": true}]}});
    assert_eq!(
        names(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            &base,
            &with(&base, json!({"spec": {"scope": "Cluster"}}))
        ),
        ["spec.scope"]
    );
    assert_eq!(
        names(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            &base,
            &with(&base, json!({"spec": {"names": {"kind": "Gadget"}}}))
        ),
        ["spec.names.kind"]
    );
    let v2_only = with(
        &base,
        json!({"spec": {"versions": [{"name": "v2", "served": true, "storage": true}]}}),
    );
    assert_eq!(
        fields(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            &base,
            &v2_only
        ),
        [(
            "status.storedVersions[0]".to_string(),
            "/spec/versions".to_string()
        )]
    );
    let both = with(
        &base,
        json!({"spec": {"versions": [{"name": "v1", "served": true, "storage": false}, {"name": "v2", "served": true, "storage": true}]}}),
    );
    assert!(
        names(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            &base,
            &both
        )
        .is_empty()
    );
}
