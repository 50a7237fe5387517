//! The offline table of immutable fields (`syncguard::model::immutable`) held to a real
//! kube-apiserver's answer, kind by kind.
//!
//! One throwaway control plane (etcd + kube-apiserver, no controllers) serves every case. For
//! each case the base object is created for real (server-side apply, field manager `base`),
//! then the head is sent as a dry-run the way Argo CD sends it — a forced server-side apply by
//! the same manager, or with `Replace=true` a PUT of the manifest — and the server's refusal
//! causes must be exactly the fields `refused_changes_in` names. Nothing runs without
//! controllers, so a claim is bound by writing its status (the binder's part) and nothing
//! else is needed.
//!
//! Without the binaries the test skips with a line saying so; under `CI=true` it fails
//! instead, unless SYNCGUARD_KUBE_OPTIONAL=1 (as tests/ephemeral_cluster.rs).

mod kube_support;

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::discovery::{ApiResource, Scope};
use serde_json::{Value, json};
use syncguard::model::immutable::{ApplyMode, refused_changes_in};
use syncguard::model::validity::server::field_pointer;

const NAMESPACE: &str = "immutable";
const MANAGER: &str = "base";

/// One change of one object.
struct Case {
    what: &'static str,
    base: Value,
    head: Value,
    mode: ApplyMode,
    /// Written to the status subresource after creation (what a controller would write),
    /// and part of `before`.
    status: Option<Value>,
}

fn case(what: &'static str, base: Value, head: Value) -> Case {
    Case {
        what,
        base,
        head,
        mode: ApplyMode::Apply,
        status: None,
    }
}

fn replace(mut c: Case) -> Case {
    c.mode = ApplyMode::Replace;
    c
}

fn with_status(mut c: Case, status: Value) -> Case {
    c.status = Some(status);
    c
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

fn object(api: &str, kind: &str, body: Value) -> Value {
    with(
        &json!({"apiVersion": api, "kind": kind, "metadata": {}}),
        body,
    )
}

fn pod_template(image: &str) -> Value {
    json!({"metadata": {"labels": {"app": "a"}},
           "spec": {"containers": [{"name": "c", "image": image}]}})
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();

    // Deployment, ReplicaSet, DaemonSet: the selector.
    for kind in ["Deployment", "ReplicaSet", "DaemonSet"] {
        let base = object(
            "apps/v1",
            kind,
            json!({"spec": {
            "selector": {"matchLabels": {"app": "a"}}, "template": pod_template("nginx:1.27")}}),
        );
        out.push(case(
            "selector gains a label",
            base.clone(),
            with(
                &base,
                json!({"spec": {
            "selector": {"matchLabels": {"app": "a", "tier": "web"}},
            "template": {"metadata": {"labels": {"app": "a", "tier": "web"}}}}}),
            ),
        ));
        out.push(case(
            "new image",
            base.clone(),
            with(
                &base,
                json!({"spec": {
            "template": {"spec": {"containers": [{"name": "c", "image": "nginx:1.28"}]}}}}),
            ),
        ));
    }

    // StatefulSet: all but the rollout fields.
    let sts = object(
        "apps/v1",
        "StatefulSet",
        json!({"spec": {"serviceName": "db", "replicas": 1,
        "selector": {"matchLabels": {"app": "a"}}, "template": pod_template("postgres:17"),
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
            "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}}),
    );
    out.push(case(
        "serviceName",
        sts.clone(),
        with(&sts, json!({"spec": {"serviceName": "db-headless"}})),
    ));
    out.push(case(
        "podManagementPolicy",
        sts.clone(),
        with(&sts, json!({"spec": {"podManagementPolicy": "Parallel"}})),
    ));
    out.push(case(
        "podManagementPolicy spelled as its default",
        sts.clone(),
        with(
            &sts,
            json!({"spec": {"podManagementPolicy": "OrderedReady"}}),
        ),
    ));
    out.push(case(
        "volumeClaimTemplates grow",
        sts.clone(),
        with(
            &sts,
            json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}}]}}),
        ),
    ));
    out.push(case("volumeClaimTemplates the same in other words", sts.clone(), with(&sts, json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem", "resources": {"requests": {"storage": "1024Mi"}}}}]}}))));
    out.push(case("rollout fields", sts.clone(), with(&sts, json!({"spec": {"replicas": 3, "minReadySeconds": 5,
        "revisionHistoryLimit": 2, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}, "ordinals": {"start": 1},
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"},
        "template": {"spec": {"containers": [{"name": "c", "image": "postgres:18"}]}}}}))));

    // Job.
    let job = object(
        "batch/v1",
        "Job",
        json!({"spec": {"backoffLimit": 2, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36", "command": ["true"]}]}}}}),
    );
    let image = json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "busybox:1.37", "command": ["true"]}]}}}});
    out.push(case("new image", job.clone(), with(&job, image.clone())));
    out.push(case("knobs", job.clone(), with(&job, json!({"spec": {"backoffLimit": 5, "activeDeadlineSeconds": 60, "ttlSecondsAfterFinished": 10, "parallelism": 2}}))));
    out.push(case(
        "completions",
        job.clone(),
        with(&job, json!({"spec": {"completions": 3}})),
    ));
    out.push(case(
        "managedBy",
        job.clone(),
        with(&job, json!({"spec": {"managedBy": "example.com/queue"}})),
    ));
    // An empty policy is still a policy: optional structs are pointers to the server.
    out.push(case(
        "empty podFailurePolicy",
        job.clone(),
        with(
            &job,
            json!({"spec": {"podFailurePolicy": {"rules": []}, "podReplacementPolicy": "Failed"}}),
        ),
    ));
    out.push(replace(case(
        "replace of the same manifest",
        job.clone(),
        job.clone(),
    )));
    let indexed = with(
        &job,
        json!({"spec": {"completionMode": "Indexed", "completions": 2, "parallelism": 2}}),
    );
    out.push(case(
        "indexed: completions with parallelism",
        indexed.clone(),
        with(
            &indexed,
            json!({"spec": {"completions": 4, "parallelism": 4}}),
        ),
    ));
    out.push(case(
        "indexed: completions alone",
        indexed.clone(),
        with(&indexed, json!({"spec": {"completions": 4}})),
    ));
    out.push(case(
        "completionMode",
        job.clone(),
        with(
            &job,
            json!({"spec": {"completionMode": "Indexed", "completions": 1}}),
        ),
    ));
    let suspended = with(&job, json!({"spec": {"suspend": true}}));
    out.push(case("suspended: scheduling directives", suspended.clone(), with(&suspended, json!({"spec": {"template": {
        "metadata": {"labels": {"queue": "a"}, "annotations": {"x": "y"}},
        "spec": {"nodeSelector": {"zone": "a"}, "tolerations": [{"key": "k", "operator": "Exists"}],
            "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "z", "operator": "Exists"}]}]}}}}}}}))));
    out.push(case(
        "suspended: new image",
        suspended.clone(),
        with(&suspended, image),
    ));

    // Pod.
    let pod = object(
        "v1",
        "Pod",
        json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}),
    );
    out.push(case(
        "new image",
        pod.clone(),
        with(
            &pod,
            json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.28"}]}}),
        ),
    ));
    out.push(case("args", pod.clone(), with(&pod, json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.27", "args": ["-g", "daemon off;"]}]}}))));
    out.push(case("another container", pod.clone(), with(&pod, json!({"spec": {"containers": [{"name": "c", "image": "nginx:1.27"}, {"name": "d", "image": "busybox:1.36"}]}}))));
    out.push(case(
        "activeDeadlineSeconds set",
        pod.clone(),
        with(&pod, json!({"spec": {"activeDeadlineSeconds": 30}})),
    ));
    let deadline = with(&pod, json!({"spec": {"activeDeadlineSeconds": 30}}));
    out.push(case(
        "activeDeadlineSeconds raised",
        deadline.clone(),
        with(&deadline, json!({"spec": {"activeDeadlineSeconds": 60}})),
    ));
    out.push(case("a toleration added", pod.clone(), with(&pod, json!({"spec": {"tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]}}))));

    // Service.
    let svc = object(
        "v1",
        "Service",
        json!({"spec": {"clusterIP": "10.96.0.50", "ports": [{"port": 80}]}}),
    );
    let allocated = object("v1", "Service", json!({"spec": {"ports": [{"port": 80}]}}));
    out.push(case(
        "clusterIP",
        svc.clone(),
        with(&svc, json!({"spec": {"clusterIP": "10.96.0.60"}})),
    ));
    out.push(case(
        "clusterIP to None",
        svc.clone(),
        with(&svc, json!({"spec": {"clusterIP": "None"}})),
    ));
    out.push(case("clusterIP omitted", svc.clone(), allocated.clone()));
    out.push(replace(case(
        "clusterIP omitted",
        svc.clone(),
        allocated.clone(),
    )));
    out.push(replace(case(
        "allocated clusterIP omitted",
        allocated.clone(),
        allocated.clone(),
    )));
    out.push(case(
        "clusterIP named after allocation",
        allocated.clone(),
        with(&allocated, json!({"spec": {"clusterIP": "10.96.0.77"}})),
    ));
    out.push(case(
        "type NodePort",
        svc.clone(),
        with(&svc, json!({"spec": {"type": "NodePort"}})),
    ));
    out.push(case(
        "to ExternalName",
        svc.clone(),
        object(
            "v1",
            "Service",
            json!({"spec": {"type": "ExternalName", "externalName": "example.com"}}),
        ),
    ));
    let headless = object(
        "v1",
        "Service",
        json!({"spec": {"clusterIP": "None", "ports": [{"port": 80}]}}),
    );
    out.push(case(
        "headless stays headless",
        headless.clone(),
        with(&headless, json!({"spec": {"ports": [{"port": 81}]}})),
    ));
    let lb = object(
        "v1",
        "Service",
        json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": "example.com/a", "ports": [{"port": 80}]}}),
    );
    out.push(case(
        "loadBalancerClass",
        lb.clone(),
        with(&lb, json!({"spec": {"loadBalancerClass": "example.com/b"}})),
    ));

    // Secret, ConfigMap.
    let secret = object(
        "v1",
        "Secret",
        json!({"type": "Opaque", "data": {"k": "dg=="}}),
    );
    let frozen = with(&secret, json!({"immutable": true}));
    out.push(case(
        "type",
        secret.clone(),
        with(&secret, json!({"type": "example.com/other"})),
    ));
    out.push(case(
        "data",
        secret.clone(),
        with(&secret, json!({"data": {"k": "dw=="}})),
    ));
    out.push(case(
        "immutable: data",
        frozen.clone(),
        with(&frozen, json!({"data": {"k": "dw=="}})),
    ));
    out.push(case(
        "immutable: back to false",
        frozen.clone(),
        with(&frozen, json!({"immutable": false})),
    ));
    out.push(case(
        "immutable: dropped",
        frozen.clone(),
        with(&frozen, json!({"immutable": null})),
    ));
    out.push(case(
        "immutable: the same data as stringData",
        frozen.clone(),
        with(&frozen, json!({"data": null, "stringData": {"k": "v"}})),
    ));
    out.push(case(
        "immutable: labels",
        frozen.clone(),
        with(&frozen, json!({"metadata": {"labels": {"a": "b"}}})),
    ));
    let cm = object("v1", "ConfigMap", json!({"data": {"a": "1"}}));
    let cm_frozen = with(&cm, json!({"immutable": true}));
    out.push(case(
        "data",
        cm.clone(),
        with(&cm, json!({"data": {"a": "2"}})),
    ));
    out.push(case(
        "immutable: data",
        cm_frozen.clone(),
        with(&cm_frozen, json!({"data": {"a": "2"}})),
    ));
    out.push(case(
        "immutable: binaryData",
        cm_frozen.clone(),
        with(&cm_frozen, json!({"binaryData": {"b": "AA=="}})),
    ));
    out.push(case(
        "immutable: emptied",
        cm_frozen.clone(),
        with(&cm_frozen, json!({"data": null})),
    ));
    let cm_empty = object("v1", "ConfigMap", json!({"immutable": true}));
    out.push(case(
        "immutable: explicit empty data",
        cm_empty.clone(),
        with(&cm_empty, json!({"data": {}})),
    ));

    // PersistentVolumeClaim: bound by writing its status, as the binder would.
    let pvc = object(
        "v1",
        "PersistentVolumeClaim",
        json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}),
    );
    let bound = json!({"phase": "Bound", "capacity": {"storage": "1Gi"}});
    let pending = json!({"phase": "Pending"});
    let grow = json!({"spec": {"resources": {"requests": {"storage": "2Gi"}}}});
    out.push(with_status(
        case("pending: grow", pvc.clone(), with(&pvc, grow.clone())),
        pending.clone(),
    ));
    out.push(with_status(
        case(
            "bound, no class: grow",
            pvc.clone(),
            with(&pvc, grow.clone()),
        ),
        bound.clone(),
    ));
    let expandable = with(&pvc, json!({"spec": {"storageClassName": "expandable"}}));
    out.push(with_status(
        case(
            "bound, expandable class: grow",
            expandable.clone(),
            with(&expandable, grow),
        ),
        bound.clone(),
    ));
    out.push(with_status(
        case(
            "bound: shrink",
            pvc.clone(),
            with(
                &pvc,
                json!({"spec": {"resources": {"requests": {"storage": "512Mi"}}}}),
            ),
        ),
        bound.clone(),
    ));
    out.push(with_status(
        case(
            "bound: volumeAttributesClassName",
            pvc.clone(),
            with(&pvc, json!({"spec": {"volumeAttributesClassName": "gold"}})),
        ),
        bound.clone(),
    ));
    out.push(with_status(
        case(
            "pending: volumeAttributesClassName",
            pvc.clone(),
            with(&pvc, json!({"spec": {"volumeAttributesClassName": "gold"}})),
        ),
        pending.clone(),
    ));
    out.push(with_status(
        case(
            "storageClassName from unset",
            pvc.clone(),
            with(&pvc, json!({"spec": {"storageClassName": "fast"}})),
        ),
        pending.clone(),
    ));
    let classed = with(&pvc, json!({"spec": {"storageClassName": "slow"}}));
    out.push(with_status(
        case(
            "storageClassName changed",
            classed.clone(),
            with(&pvc, json!({"spec": {"storageClassName": "fast"}})),
        ),
        pending.clone(),
    ));
    out.push(with_status(
        case(
            "accessModes",
            pvc.clone(),
            with(&pvc, json!({"spec": {"accessModes": ["ReadWriteMany"]}})),
        ),
        bound.clone(),
    ));
    out.push(with_status(
        case(
            "volumeMode",
            pvc.clone(),
            with(&pvc, json!({"spec": {"volumeMode": "Block"}})),
        ),
        pending.clone(),
    ));
    let named = with(&pvc, json!({"spec": {"volumeName": "pv-a"}}));
    out.push(with_status(
        case(
            "volumeName changed",
            named.clone(),
            with(&pvc, json!({"spec": {"volumeName": "pv-b"}})),
        ),
        pending.clone(),
    ));
    out.push(with_status(
        case(
            "volumeName set once",
            pvc.clone(),
            with(&pvc, json!({"spec": {"volumeName": "pv-b"}})),
        ),
        pending.clone(),
    ));
    out.push(with_status(
        replace(case("volumeName omitted", named.clone(), pvc.clone())),
        pending.clone(),
    ));

    // PersistentVolume.
    let pv = object(
        "v1",
        "PersistentVolume",
        json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/a"}}}),
    );
    out.push(case(
        "source",
        pv.clone(),
        with(&pv, json!({"spec": {"hostPath": {"path": "/b"}}})),
    ));
    out.push(case("capacity, reclaim policy, class", pv.clone(), with(&pv, json!({"spec": {"capacity": {"storage": "2Gi"}, "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "x"}}))));
    out.push(case(
        "volumeMode",
        pv.clone(),
        with(&pv, json!({"spec": {"volumeMode": "Block"}})),
    ));

    // StorageClass.
    let sc = object(
        "storage.k8s.io/v1",
        "StorageClass",
        json!({"provisioner": "example.com/disk", "parameters": {"type": "ssd"}}),
    );
    out.push(case(
        "parameters",
        sc.clone(),
        with(&sc, json!({"parameters": {"type": "hdd"}})),
    ));
    out.push(case(
        "provisioner",
        sc.clone(),
        with(&sc, json!({"provisioner": "example.com/other"})),
    ));
    out.push(case(
        "reclaimPolicy",
        sc.clone(),
        with(&sc, json!({"reclaimPolicy": "Retain"})),
    ));
    out.push(case(
        "volumeBindingMode",
        sc.clone(),
        with(&sc, json!({"volumeBindingMode": "WaitForFirstConsumer"})),
    ));
    out.push(case("defaults spelled out, expansion, mount options", sc.clone(), with(&sc, json!({"reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "allowVolumeExpansion": true, "mountOptions": ["ro"]}))));
    let no_params = object(
        "storage.k8s.io/v1",
        "StorageClass",
        json!({"provisioner": "example.com/disk"}),
    );
    out.push(case(
        "empty parameters",
        no_params.clone(),
        with(&no_params, json!({"parameters": {}})),
    ));

    // RBAC.
    for kind in ["RoleBinding", "ClusterRoleBinding"] {
        let rb = object(
            "rbac.authorization.k8s.io/v1",
            kind,
            json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "a"}]}),
        );
        out.push(case(
            "roleRef",
            rb.clone(),
            with(&rb, json!({"roleRef": {"name": "edit"}})),
        ));
        out.push(case(
            "subjects",
            rb.clone(),
            with(&rb, json!({"subjects": [{"kind": "User", "name": "b"}]})),
        ));
    }

    // PriorityClass, CSIDriver, VolumeAttachment, IngressClass, RuntimeClass.
    let pc = object(
        "scheduling.k8s.io/v1",
        "PriorityClass",
        json!({"value": 1000}),
    );
    out.push(case("value", pc.clone(), with(&pc, json!({"value": 2000}))));
    out.push(case(
        "preemptionPolicy",
        pc.clone(),
        with(&pc, json!({"preemptionPolicy": "Never"})),
    ));
    out.push(case(
        "description",
        pc.clone(),
        with(&pc, json!({"description": "d"})),
    ));
    let csi = object(
        "storage.k8s.io/v1",
        "CSIDriver",
        json!({"spec": {"attachRequired": true}}),
    );
    out.push(case(
        "attachRequired",
        csi.clone(),
        with(&csi, json!({"spec": {"attachRequired": false}})),
    ));
    out.push(case(
        "volumeLifecycleModes",
        csi.clone(),
        with(
            &csi,
            json!({"spec": {"volumeLifecycleModes": ["Persistent", "Ephemeral"]}}),
        ),
    ));
    out.push(case(
        "podInfoOnMount, fsGroupPolicy",
        csi.clone(),
        with(
            &csi,
            json!({"spec": {"podInfoOnMount": true, "fsGroupPolicy": "File"}}),
        ),
    ));
    let va = object(
        "storage.k8s.io/v1",
        "VolumeAttachment",
        json!({"spec": {"attacher": "example.com", "nodeName": "n1", "source": {"persistentVolumeName": "pv"}}}),
    );
    out.push(case(
        "nodeName",
        va.clone(),
        with(&va, json!({"spec": {"nodeName": "n2"}})),
    ));
    let ic = object(
        "networking.k8s.io/v1",
        "IngressClass",
        json!({"spec": {"controller": "example.com/a"}}),
    );
    out.push(case(
        "controller",
        ic.clone(),
        with(&ic, json!({"spec": {"controller": "example.com/b"}})),
    ));
    let rc = object("node.k8s.io/v1", "RuntimeClass", json!({"handler": "runc"}));
    out.push(case(
        "handler",
        rc.clone(),
        with(&rc, json!({"handler": "kata"})),
    ));

    // CustomResourceDefinition (named by the harness after its plural).
    let schema = json!({"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}});
    let crd = object(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        json!({"spec": {"group": "immutable.example.com", "scope": "Namespaced",
        "names": {"plural": "PLURAL", "kind": "Widget"},
        "versions": [{"name": "v1", "served": true, "storage": true, "schema": schema}]}}),
    );
    out.push(case(
        "scope",
        crd.clone(),
        with(&crd, json!({"spec": {"scope": "Cluster"}})),
    ));
    out.push(case(
        "names.kind",
        crd.clone(),
        with(&crd, json!({"spec": {"names": {"kind": "Gadget"}}})),
    ));
    out.push(case("stored version dropped", crd.clone(), with(&crd, json!({"spec": {"versions": [{"name": "v2", "served": true, "storage": true, "schema": schema}]}}))));
    out.push(case(
        "new storage version",
        crd.clone(),
        with(
            &crd,
            json!({"spec": {"versions": [
        {"name": "v1", "served": true, "storage": false, "schema": schema},
        {"name": "v2", "served": true, "storage": true, "schema": schema}]}}),
        ),
    ));

    // Kinds without immutable fields.
    let cron = object(
        "batch/v1",
        "CronJob",
        json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}}}}),
    );
    out.push(case("job template", cron.clone(), with(&cron, json!({"spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"completions": 2, "template": {"spec": {
        "containers": [{"name": "c", "image": "busybox:1.37"}]}}}}}}))));
    let pdb = object(
        "policy/v1",
        "PodDisruptionBudget",
        json!({"spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "a"}}}}),
    );
    out.push(case(
        "selector",
        pdb.clone(),
        with(
            &pdb,
            json!({"spec": {"selector": {"matchLabels": {"app": "b"}}}}),
        ),
    ));
    let ing = object(
        "networking.k8s.io/v1",
        "Ingress",
        json!({"spec": {"ingressClassName": "a", "defaultBackend": {"service": {"name": "s", "port": {"number": 80}}}}}),
    );
    out.push(case("class and backend", ing.clone(), with(&ing, json!({"spec": {"ingressClassName": "b", "defaultBackend": {"service": {"name": "t", "port": {"number": 81}}}}}))));
    let lease = object(
        "coordination.k8s.io/v1",
        "Lease",
        json!({"spec": {"holderIdentity": "a", "leaseDurationSeconds": 10}}),
    );
    out.push(case(
        "holder",
        lease.clone(),
        with(
            &lease,
            json!({"spec": {"holderIdentity": "b", "leaseDurationSeconds": 20}}),
        ),
    ));
    let ns = object(
        "v1",
        "Namespace",
        json!({"metadata": {"labels": {"a": "1"}}}),
    );
    out.push(case(
        "labels",
        ns.clone(),
        with(&ns, json!({"metadata": {"labels": {"a": "2"}}})),
    ));
    out
}

/// Server field paths whose JSON pointer is not where the change is written (the server
/// names the whole spec, or a path that is not an object path).
const ALIASES: &[&str] = &[
    "spec",
    "spec.clusterIPs[0]",
    "spec.persistentvolumesource",
    "volumeMode",
    "spec.attachedRequired",
    "status.storedVersions[0]",
];

struct Cluster {
    client: kube::Client,
    kinds: HashMap<(String, String), (ApiResource, Scope)>,
}

impl Cluster {
    async fn api(&mut self, api_version: &str, kind: &str) -> Api<DynamicObject> {
        let key = (api_version.to_string(), kind.to_string());
        if !self.kinds.contains_key(&key) {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            let gvk = GroupVersionKind::gvk(group, version, kind);
            let (ar, caps) = kube::discovery::pinned_kind(&self.client, &gvk)
                .await
                .unwrap_or_else(|e| panic!("discovery of {kind}: {e}"));
            self.kinds.insert(key.clone(), (ar, caps.scope));
        }
        let (ar, scope) = &self.kinds[&key];
        match scope {
            Scope::Namespaced => Api::namespaced_with(self.client.clone(), NAMESPACE, ar),
            Scope::Cluster => Api::all_with(self.client.clone(), ar),
        }
    }
}

/// The server's cause fields for the head, or an empty set when it accepts it.
async fn server_fields(
    api: &Api<DynamicObject>,
    name: &str,
    head: &Value,
    mode: ApplyMode,
) -> Result<BTreeSet<String>, String> {
    let result = match mode {
        ApplyMode::Apply => api
            .patch(
                name,
                &PatchParams::apply(MANAGER).force().dry_run(),
                &Patch::Apply(head),
            )
            .await
            .map(drop),
        ApplyMode::Replace => {
            let object: DynamicObject =
                serde_json::from_value(head.clone()).map_err(|e| e.to_string())?;
            let params = PostParams {
                dry_run: true,
                field_manager: Some(MANAGER.to_string()),
            };
            api.replace(name, &params, &object).await.map(drop)
        }
    };
    match result {
        Ok(()) => Ok(BTreeSet::new()),
        Err(kube::Error::Api(s)) if s.code == 422 => {
            eprintln!("    {}", s.message.lines().next().unwrap_or_default());
            Ok(s.details
                .map(|d| d.causes.into_iter().map(|c| c.field).collect())
                .unwrap_or_default())
        }
        // An admission plugin's refusal names no field.
        Err(kube::Error::Api(s)) if s.code == 403 && s.reason == "Forbidden" => {
            eprintln!("    {}", s.message);
            Ok(BTreeSet::from([String::new()]))
        }
        Err(e) => Err(format!("the request failed: {e}")),
    }
}

async fn wait_established(api: &Api<DynamicObject>, name: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let crd = api.get(name).await.unwrap();
        let conditions = crd.data["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
        {
            return;
        }
        assert!(Instant::now() < deadline, "{name} never became Established");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_table_agrees_with_the_api_server() {
    let Some(dir) = kube_support::binaries() else {
        return;
    };
    let found = syncguard::ephemeral::find(Some(&dir)).unwrap();
    let plane = syncguard::ephemeral::ControlPlane::start(&found)
        .await
        .unwrap();
    let mut cluster = Cluster {
        client: plane.client(),
        kinds: HashMap::new(),
    };
    let namespaces = cluster.api("v1", "Namespace").await;
    namespaces
        .patch(
            NAMESPACE,
            &PatchParams::apply(MANAGER),
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}),
            ),
        )
        .await
        .unwrap();

    // The class the expandable claims use.
    cluster
        .api("storage.k8s.io/v1", "StorageClass")
        .await
        .patch(
            "expandable",
            &PatchParams::apply(MANAGER),
            &Patch::Apply(json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "expandable"}, "provisioner": "example.com/disk", "allowVolumeExpansion": true})),
        )
        .await
        .unwrap();

    let cases = cases();
    let mut disagreements = Vec::new();
    let mut refusals = 0;
    for (i, c) in cases.iter().enumerate() {
        let api_version = c.base["apiVersion"].as_str().unwrap().to_string();
        let kind = c.base["kind"].as_str().unwrap().to_string();
        let api = cluster.api(&api_version, &kind).await;
        let (mut base, mut head) = (c.base.clone(), c.head.clone());
        let name = if kind == "CustomResourceDefinition" {
            let plural = format!("widgets{i}");
            for o in [&mut base, &mut head] {
                o["spec"]["names"]["plural"] = Value::from(plural.as_str());
                // A kind may be served once per group.
                let kind = o["spec"]["names"]["kind"].as_str().unwrap().to_string();
                o["spec"]["names"]["kind"] = Value::from(format!("{kind}{i}"));
            }
            format!("{plural}.immutable.example.com")
        } else {
            format!("case-{i}")
        };
        for o in [&mut base, &mut head] {
            o["metadata"]["name"] = Value::from(name.as_str());
            // Each Service its own addresses.
            if kind == "Service" {
                let text = o.to_string().replace("10.96.0.", &format!("10.96.{i}."));
                *o = serde_json::from_str(&text).unwrap();
            }
        }
        api.patch(&name, &PatchParams::apply(MANAGER), &Patch::Apply(&base))
            .await
            .unwrap_or_else(|e| panic!("case {i} {kind} {}: creating the base: {e}", c.what));
        if kind == "CustomResourceDefinition" {
            wait_established(&api, &name).await;
        }
        let mut before = base.clone();
        if let Some(status) = &c.status {
            api.patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({"status": status})),
            )
            .await
            .unwrap_or_else(|e| panic!("case {i} {kind} {}: writing the status: {e}", c.what));
            before["status"] = status.clone();
        }
        let predicted = refused_changes_in(c.mode, &api_version, &kind, &before, &head);
        let offline: BTreeSet<String> = predicted.iter().map(|r| r.field.clone()).collect();
        for r in &predicted {
            let at = field_pointer(&r.field);
            assert!(
                r.pointer.starts_with(&at) || ALIASES.contains(&r.field.as_str()),
                "{kind} {}: pointer {} is not under the server's field {}",
                c.what,
                r.pointer,
                r.field
            );
        }
        let server = server_fields(&api, &name, &head, c.mode)
            .await
            .unwrap_or_else(|e| panic!("case {i} {kind} {}: {e}", c.what));
        if !server.is_empty() {
            refusals += 1;
        }
        let line = format!(
            "{kind} {:?} {}: server {:?}, offline {:?}",
            c.mode, c.what, server, offline
        );
        eprintln!("{line}");
        if server != offline {
            disagreements.push(line);
        }
    }
    eprintln!(
        "{} cases against {} ({} refused by the server)",
        cases.len(),
        plane.version(),
        refusals
    );
    assert!(
        disagreements.is_empty(),
        "the offline table disagrees with the API server:\n{}",
        disagreements.join("\n")
    );
}
