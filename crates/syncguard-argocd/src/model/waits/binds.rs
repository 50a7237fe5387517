//! What ends a claim's wait at once: a PersistentVolume of the same input, applied in the same
//! step or an earlier one, that the PersistentVolume controller binds to the claim (static
//! provisioning). Argo CD reads a Bound claim Healthy, so the step goes on — whatever the
//! cluster's provisioners would have done.
//!
//! The controller binds a claim to an Available volume of the same `storageClassName` (both
//! empty counts), whose access modes include the claim's and whose capacity is at least its
//! request, or to the volume it names (`volumeName`) or that names it (`claimRef`). A class of
//! the input that binds `WaitForFirstConsumer` delays even a static binding until a Pod is
//! scheduled, so it never counts here.

use serde_json::Value;

use crate::model::Resource;

/// (volume, plan step) of every PersistentVolume of an input.
pub type Volumes = [(Resource, Option<usize>)];

/// The volume of `volumes` that binds `claim` (plan step `step`) at once, as evidence
/// ("PersistentVolume NAME"), when there is one; `classes`: the StorageClasses of the input.
pub fn bound_by(
    volumes: &Volumes,
    classes: &[Resource],
    claim: &Resource,
    step: Option<usize>,
) -> Option<String> {
    let spec = &claim.raw["spec"];
    // A claim without storageClassName gets the cluster's default class, which the input may
    // not show: only an explicit class (or "") is judged.
    let class = spec["storageClassName"].as_str()?;
    let waits_for_consumer = classes
        .iter()
        .any(|c| c.name == class && c.raw["volumeBindingMode"] == "WaitForFirstConsumer");
    if waits_for_consumer {
        return None;
    }
    let request = bytes(&spec["resources"]["requests"]["storage"])?;
    let modes: Vec<&Value> = spec["accessModes"].as_array()?.iter().collect();
    volumes
        .iter()
        .filter(|(_, s)| matches!((s, step), (Some(a), Some(b)) if *a <= b))
        .map(|(v, _)| v)
        .find(|v| {
            let vs = &v.raw["spec"];
            let named = spec["volumeName"].as_str() == Some(v.name.as_str());
            let claim_ref = &vs["claimRef"];
            let reserved = claim_ref.is_object();
            let reserved_here = claim_ref["name"].as_str() == Some(claim.name.as_str())
                && (claim_ref["namespace"].is_null()
                    || claim_ref["namespace"].as_str() == claim.namespace.as_deref());
            let fits = vs["storageClassName"].as_str().unwrap_or("") == class
                && bytes(&vs["capacity"]["storage"]).is_some_and(|c| c >= request)
                && modes
                    .iter()
                    .all(|m| vs["accessModes"].as_array().is_some_and(|a| a.contains(m)));
            (named || reserved_here || (!reserved && spec["volumeName"].is_null())) && fits
        })
        .map(|v| format!("PersistentVolume {}", v.name))
}

/// A storage quantity in bytes (`1Gi`, `500M`, `1073741824`).
fn bytes(q: &Value) -> Option<f64> {
    let text = match q {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let n: f64 = number.parse().ok()?;
    let unit = match suffix {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        _ => return None,
    };
    Some(n * unit)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(raw: Value) -> Resource {
        Resource::from_value(raw, None).unwrap()
    }

    fn claim(class: &str, size: &str) -> Resource {
        r(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                 "metadata": {"name": "data", "namespace": "app"},
                 "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                          "resources": {"requests": {"storage": size}}}}))
    }

    fn volume(class: &str, size: &str, extra: Value) -> Resource {
        let mut raw = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
                 "spec": {"storageClassName": class, "capacity": {"storage": size},
                          "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "hostPath": {"path": "/x"}}});
        for (k, v) in extra.as_object().unwrap() {
            raw["spec"][k] = v.clone();
        }
        r(raw)
    }

    #[test]
    fn a_volume_of_the_class_and_size_in_an_earlier_step_binds_the_claim() {
        let vols = [(volume("manual", "1Gi", json!({})), Some(0))];
        assert_eq!(
            bound_by(&vols, &[], &claim("manual", "1Gi"), Some(1)).as_deref(),
            Some("PersistentVolume pv1")
        );
        // too small, another class, or a later step: no
        assert_eq!(bound_by(&vols, &[], &claim("manual", "2Gi"), Some(1)), None);
        assert_eq!(bound_by(&vols, &[], &claim("fast", "1Gi"), Some(1)), None);
        let later = [(volume("manual", "1Gi", json!({})), Some(2))];
        assert_eq!(
            bound_by(&later, &[], &claim("manual", "500Mi"), Some(1)),
            None
        );
    }

    #[test]
    fn a_waiting_class_a_reservation_for_another_claim_or_no_class_do_not_bind() {
        let vols = [(volume("manual", "1Gi", json!({})), Some(0))];
        let wffc = r(
            json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "manual"}, "provisioner": "x", "volumeBindingMode": "WaitForFirstConsumer"}),
        );
        assert_eq!(
            bound_by(&vols, &[wffc], &claim("manual", "1Gi"), Some(0)),
            None
        );
        let taken = [(
            volume(
                "manual",
                "1Gi",
                json!({"claimRef": {"name": "other", "namespace": "app"}}),
            ),
            Some(0),
        )];
        assert_eq!(
            bound_by(&taken, &[], &claim("manual", "1Gi"), Some(0)),
            None
        );
        let mine = [(
            volume(
                "manual",
                "1Gi",
                json!({"claimRef": {"name": "data", "namespace": "app"}}),
            ),
            Some(0),
        )];
        assert!(bound_by(&mine, &[], &claim("manual", "1Gi"), Some(0)).is_some());
        let mut no_class = claim("manual", "1Gi");
        no_class.raw["spec"]
            .as_object_mut()
            .unwrap()
            .remove("storageClassName");
        assert_eq!(bound_by(&vols, &[], &no_class, Some(0)), None);
    }
}
