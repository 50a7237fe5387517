//! Storage: PersistentVolumeClaim, PersistentVolume, StorageClass, CSIDriver,
//! VolumeAttachment.
//!
//! A claim is a request for storage that quota and limit ranges were checked against when it
//! was made, so after creation only its size may grow (and its volume attributes class
//! change), and only once it is bound. A volume's source is the disk itself. A StorageClass
//! is the recipe of volumes already made from it. A CSIDriver's attach and lifecycle modes
//! decide how existing volumes were attached.

use serde_json::{Map, Value};

use super::compare::{at, or_default, plain_str, quantity, same, same_plain_map};
use super::{ApplyMode, Change, Refusal, child, forbidden, immutable, invalid};

const CLAIM_FROZEN: &str = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims";

/// PersistentVolumeClaim. Whether the claim is bound comes from `before.status.phase`; a
/// `before` without a status (a manifest) is taken as bound, as the claims of a synced
/// application are. Binding fills `spec.volumeName`, and the DefaultStorageClass admission
/// fills `spec.storageClassName` at creation: an apply that omits them keeps them, a replace
/// that omits a bound claim's `volumeName` is refused.
pub(super) fn claim(c: &Change, out: &mut Vec<Refusal>) {
    let bound = match c.before("/status/phase").and_then(Value::as_str) {
        Some(phase) => phase == "Bound",
        None => true,
    };
    let mut before = object(c.before("/spec"));
    let mut after = object(c.after("/spec"));
    for spec in [&mut before, &mut after] {
        if spec.get("volumeMode").is_none_or(Value::is_null) {
            spec.insert("volumeMode".into(), Value::from("Filesystem"));
        }
    }
    // `volumeName` may be set once.
    let before_volume = plain_str(before.get("volumeName")).to_string();
    if c.mode == ApplyMode::Apply && plain_str(after.get("volumeName")).is_empty() {
        copy_key(&before, &mut after, "volumeName");
    }
    if before_volume.is_empty() {
        copy_key(&after, &mut before, "volumeName");
    }
    let replace_drops_volume = c.mode == ApplyMode::Replace
        && bound
        && before_volume.is_empty()
        && c.before("/status").is_none()
        && plain_str(after.get("volumeName")).is_empty();
    // `storageClassName` may go from unset to set (retroactive default class, 1.28).
    if c.mode == ApplyMode::Apply && after.get("storageClassName").is_none() {
        copy_key(&before, &mut after, "storageClassName");
    }
    if before.get("storageClassName").is_none() && after.get("storageClassName").is_some() {
        copy_key(&after, &mut before, "storageClassName");
    }
    let storage = "/resources/requests/storage";
    let (old_size, new_size) = (
        at(&Value::Object(before.clone()), storage).and_then(quantity),
        at(&Value::Object(after.clone()), storage).and_then(quantity),
    );
    if bound {
        if let Some(Value::Object(requests)) = after
            .get_mut("resources")
            .and_then(|r| r.get_mut("requests"))
        {
            match before
                .get("resources")
                .and_then(|r| r.get("requests"))
                .and_then(|r| r.get("storage"))
            {
                Some(v) => requests.insert("storage".into(), v.clone()),
                None => requests.remove("storage"),
            };
        }
        copy_key(&before, &mut after, "volumeAttributesClassName");
    }
    let mut changed: Vec<&str> = before
        .keys()
        .chain(after.keys())
        .map(String::as_str)
        .filter(|k| !same(before.get(*k), after.get(*k)))
        .collect();
    changed.sort_unstable();
    changed.dedup();
    if replace_drops_volume && !changed.contains(&"volumeName") {
        changed.push("volumeName");
    }
    if !changed.is_empty() {
        let pointer = match changed.as_slice() {
            [one] => child("/spec", one),
            _ => "/spec".to_string(),
        };
        let mut r = forbidden(&pointer, "spec", CLAIM_FROZEN);
        r.message
            .push_str(&format!(" (changed: {})", changed.join(", ")));
        if changed == ["volumeAttributesClassName"] {
            r.since = Some("1.34");
        }
        out.push(r);
    }
    if let (Some(old), Some(new)) = (old_size, new_size)
        && new < old
        && bound
    {
        let capacity = c
            .before("/status/capacity/storage")
            .and_then(quantity)
            .unwrap_or(old);
        if new <= capacity {
            let mut r = forbidden(
                "/spec/resources/requests/storage",
                "spec.resources.requests.storage",
                "field can not be less than status.capacity",
            );
            r.since = Some("1.32");
            out.push(r);
        }
    }
    // Growing is the PersistentVolumeClaimResize admission's call: only a claim of a class
    // with `allowVolumeExpansion: true` may grow. Without a class it never may; with one, it
    // depends on the class, which two manifests of the claim do not show.
    let class = plain_str(after.get("storageClassName"));
    if let (Some(old), Some(new)) = (old_size, new_size)
        && new > old
        && bound
        && class.is_empty()
    {
        out.push(Refusal {
            pointer: "/spec/resources/requests/storage".into(),
            field: String::new(),
            message: "Forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize".into(),
            since: None,
        });
    }
    if before.get("volumeMode") != after.get("volumeMode") {
        out.push(immutable(
            "/spec/volumeMode",
            "volumeMode",
            c.after("/spec/volumeMode"),
        ));
    }
}

fn object(v: Option<&Value>) -> Map<String, Value> {
    v.and_then(Value::as_object).cloned().unwrap_or_default()
}

fn copy_key(from: &Map<String, Value>, to: &mut Map<String, Value>, key: &str) {
    match from.get(key) {
        Some(v) => to.insert(key.to_string(), v.clone()),
        None => to.remove(key),
    };
}

/// The keys of a PersistentVolume's spec that are its source (`PersistentVolumeSource`,
/// inlined into the spec).
const VOLUME_SOURCES: &[&str] = &[
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "hostPath",
    "glusterfs",
    "nfs",
    "rbd",
    "iscsi",
    "cinder",
    "cephfs",
    "fc",
    "flocker",
    "flexVolume",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "local",
    "storageos",
    "csi",
];

/// PersistentVolume: its source, `volumeMode`, `nodeAffinity` once set, and a
/// `volumeAttributesClassName` may not be removed.
pub(super) fn volume(c: &Change, out: &mut Vec<Refusal>) {
    for key in VOLUME_SOURCES {
        let pointer = child("/spec", key);
        let mut before = c.before(&pointer).cloned();
        let after = c.after(&pointer);
        // A CSI volume may gain a controllerExpandSecretRef.
        if *key == "csi"
            && let (Some(Value::Object(b)), Some(a)) = (before.as_mut(), after)
            && !b.contains_key("controllerExpandSecretRef")
            && let Some(r) = a.get("controllerExpandSecretRef")
        {
            b.insert("controllerExpandSecretRef".into(), r.clone());
        }
        if !same(before.as_ref(), after) {
            out.push(forbidden(
                &pointer,
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            ));
        }
    }
    let mode = |v| or_default(v, Value::from("Filesystem"));
    if mode(c.before("/spec/volumeMode")) != mode(c.after("/spec/volumeMode")) {
        out.push(immutable(
            "/spec/volumeMode",
            "volumeMode",
            c.after("/spec/volumeMode"),
        ));
    }
    let affinity = "/spec/nodeAffinity";
    if c.before(affinity).is_some_and(|v| !v.is_null())
        && !same(c.before(affinity), c.after(affinity))
    {
        out.push(invalid(
            affinity,
            "nodeAffinity",
            c.after(affinity),
            "field is immutable, except for updating from beta label to GA",
        ));
    }
    let class = "/spec/volumeAttributesClassName";
    if c.before(class).is_some_and(|v| !v.is_null()) && c.after(class).is_none_or(Value::is_null) {
        out.push(forbidden(
            class,
            "spec.volumeAttributesClassName",
            "update from non-nil value to nil is forbidden",
        ));
    }
}

/// StorageClass: `parameters`, `provisioner`, `reclaimPolicy`, `volumeBindingMode`.
pub(super) fn class(c: &Change, out: &mut Vec<Refusal>) {
    if !same_plain_map(c.before("/parameters"), c.after("/parameters")) {
        out.push(forbidden(
            "/parameters",
            "parameters",
            "updates to parameters are forbidden.",
        ));
    }
    if plain_str(c.before("/provisioner")) != plain_str(c.after("/provisioner")) {
        out.push(forbidden(
            "/provisioner",
            "provisioner",
            "updates to provisioner are forbidden.",
        ));
    }
    let reclaim = |v| or_default(v, Value::from("Delete"));
    if reclaim(c.before("/reclaimPolicy")) != reclaim(c.after("/reclaimPolicy")) {
        out.push(forbidden(
            "/reclaimPolicy",
            "reclaimPolicy",
            "updates to reclaimPolicy are forbidden.",
        ));
    }
    let binding = |v| or_default(v, Value::from("Immediate"));
    if binding(c.before("/volumeBindingMode")) != binding(c.after("/volumeBindingMode")) {
        out.push(immutable(
            "/volumeBindingMode",
            "volumeBindingMode",
            c.after("/volumeBindingMode"),
        ));
    }
}

/// CSIDriver: `spec.attachRequired` (which the server names `spec.attachedRequired`) and
/// `spec.volumeLifecycleModes`; its other fields (`podInfoOnMount`, `fsGroupPolicy`,
/// `tokenRequests`, `requiresRepublish`, `storageCapacity`, ...) may change.
pub(super) fn csi_driver(c: &Change, out: &mut Vec<Refusal>) {
    let attach = |v| or_default(v, Value::from(true));
    if attach(c.before("/spec/attachRequired")) != attach(c.after("/spec/attachRequired")) {
        out.push(immutable(
            "/spec/attachRequired",
            "spec.attachedRequired",
            c.after("/spec/attachRequired"),
        ));
    }
    let modes = |v: Option<&Value>| match v {
        Some(Value::Array(l)) if !l.is_empty() => Value::Array(l.clone()),
        _ => Value::from(vec!["Persistent"]),
    };
    if modes(c.before("/spec/volumeLifecycleModes")) != modes(c.after("/spec/volumeLifecycleModes"))
    {
        out.push(immutable(
            "/spec/volumeLifecycleModes",
            "spec.volumeLifecycleModes",
            c.after("/spec/volumeLifecycleModes"),
        ));
    }
}

/// VolumeAttachment: all of `spec`.
pub(super) fn attachment(c: &Change, out: &mut Vec<Refusal>) {
    if !same(c.before("/spec"), c.after("/spec")) {
        out.push(immutable("/spec", "spec", c.after("/spec")));
    }
}
