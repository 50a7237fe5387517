//! Lists the strategic merge patch merges by key, declaring one key twice. The API server
//! stores what it is sent, but every later patch merges entries by key: the list Argo CD
//! predicts from the patch never equals the live one, and the object flips between Synced and
//! OutOfSync (argo-cd#20979).

use serde_json::Value;

use super::{Confidence, Mechanism, PredictedDiff};

/// `(list field, key fields)` of a pod spec's merge-keyed lists.
const POD_LISTS: &[(&str, &[&str])] = &[
    ("containers", &["name"]),
    ("initContainers", &["name"]),
    ("volumes", &["name"]),
    ("imagePullSecrets", &["name"]),
];

/// Inside each container.
const CONTAINER_LISTS: &[(&str, &[&str])] = &[
    ("env", &["name"]),
    ("ports", &["containerPort", "protocol"]),
    ("volumeMounts", &["mountPath"]),
];

/// Every duplicated key of `raw`'s merge-keyed lists.
pub fn find(raw: &Value) -> Vec<PredictedDiff> {
    let mut out = Vec::new();
    for (base, spec) in pod_specs(raw) {
        for (list, keys) in POD_LISTS {
            duplicates(spec, &base, list, keys, &mut out);
        }
        for group in ["containers", "initContainers"] {
            for (i, c) in spec[group].as_array().into_iter().flatten().enumerate() {
                for (list, keys) in CONTAINER_LISTS {
                    duplicates(c, &format!("{base}/{group}/{i}"), list, keys, &mut out);
                }
            }
        }
    }
    if raw["kind"] == "Service" && raw["apiVersion"] == "v1" {
        duplicates(
            &raw["spec"],
            "/spec",
            "ports",
            &["port", "protocol"],
            &mut out,
        );
    }
    out
}

fn pod_specs(raw: &Value) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for pointer in [
        "/spec/template/spec",
        "/spec/jobTemplate/spec/template/spec",
    ] {
        if let Some(s) = raw.pointer(pointer).filter(|s| s.is_object()) {
            out.push((pointer.to_string(), s));
        }
    }
    if raw["kind"] == "Pod" && raw["spec"].is_object() {
        out.push(("/spec".to_string(), &raw["spec"]));
    }
    out
}

fn duplicates(parent: &Value, base: &str, list: &str, keys: &[&str], out: &mut Vec<PredictedDiff>) {
    let Some(items) = parent[list].as_array() else {
        return;
    };
    let mut seen: Vec<Vec<Value>> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let key: Vec<Value> = keys
            .iter()
            .map(|k| match (&item[*k], *k) {
                // protocol defaults to TCP before the merge compares keys
                (Value::Null, "protocol") => Value::from("TCP"),
                (v, _) => v.clone(),
            })
            .collect();
        if key.first().is_none_or(Value::is_null) {
            continue;
        }
        if seen.contains(&key) {
            out.push(PredictedDiff {
                pointer: format!("{base}/{list}/{i}"),
                mechanism: Mechanism::DuplicateKey,
                evidence: format!(
                    "{list} is merged by {}; {} is declared twice",
                    keys.join(" and "),
                    key.iter()
                        .filter(|v| !v.is_null())
                        .map(Value::to_string)
                        .collect::<Vec<_>>()
                        .join("/")
                ),
                stored: None,
                confidence: Confidence::Certain,
            });
        } else {
            seen.push(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_repeated_env_name_and_port_are_found_in_a_cronjob() {
        let raw = json!({"kind": "CronJob", "apiVersion": "batch/v1", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
            {"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "Y"}, {"name": "X", "value": "2"}],
             "ports": [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}, {"containerPort": 80, "protocol": "TCP"}]}
        ]}}}}}});
        let got: Vec<String> = find(&raw).into_iter().map(|d| d.pointer).collect();
        assert_eq!(
            got,
            vec![
                "/spec/jobTemplate/spec/template/spec/containers/0/env/2",
                "/spec/jobTemplate/spec/template/spec/containers/0/ports/2",
            ]
        );
    }
}
