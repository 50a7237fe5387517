//! Declared fields the cluster stores differently, read from the stored form itself — the
//! result of a server-side dry-run apply (`check --cluster`), which includes what the API
//! server's defaulting and normalisation and every mutating admission webhook did to the
//! object.
//!
//! Argo CD's three-way diff hides whatever the manifest does not set, so only declared fields
//! count: a declared value the stored form replaces, or a declared field it lacks. How the two
//! sides are lined up follows what Argo CD compares:
//! - an object Argo CD decodes into its Go type (a built-in kind whose manifest decodes) is
//!   normalised first: quantities compare canonically (`1000m` is `1`), and an empty or zero
//!   value the type omits is not a difference; lists the strategic merge merges by key (pod
//!   containers, env, volumes, ports…) are matched by that key, so an injected sidecar or
//!   variable is not a difference but a rewritten image is;
//! - any other object (custom resources, CRDs, a manifest with unknown fields) is compared as
//!   written: an empty map or list the API server does not store is a difference, and lists
//!   are matched by position.
//!
//! `metadata` counts only for its labels and annotations, and `status` not at all.
//!
//! Two normalisations apply to every object, as Argo CD applies them before it compares:
//! - a declared `null` is no declaration: Go decodes it as the zero value and re-marshals it
//!   away (`resources: null` against a stored `resources: {}`), and an apply deletes with it;
//! - a Secret's `stringData` is folded into `data` (base64) and compared there, as gitops-engine
//!   normalises Secrets; the API server never stores `stringData` itself.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::Value;

use super::{Confidence, Mechanism, PredictedDiff, unnormalised};

/// The declared fields of `declared` that `stored` lacks or holds differently. `typed`: Argo CD
/// normalises the object through its Go type (see the module documentation).
pub fn differences(
    declared: &Value,
    stored: &Value,
    typed: bool,
    evidence: &str,
) -> Vec<PredictedDiff> {
    let mut out = Vec::new();
    let Some(fields) = declared.as_object() else {
        return out;
    };
    let cx = Cx {
        typed,
        service: declared.get("kind").and_then(Value::as_str) == Some("Service"),
        evidence,
        out: &mut out,
    };
    let mut cx = cx;
    let secret = declared.get("kind").and_then(Value::as_str) == Some("Secret")
        && declared.get("apiVersion").and_then(Value::as_str) == Some("v1");
    for (key, value) in fields {
        match key.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "stringData" if secret => cx.compare_string_data(value, stored.get("data")),
            "metadata" => {
                for part in ["labels", "annotations"] {
                    if let Some(v) = value.get(part) {
                        cx.compare(
                            &format!("/metadata/{part}"),
                            part,
                            v,
                            stored.pointer(&format!("/metadata/{part}")),
                        );
                    }
                }
            }
            _ => cx.compare(&format!("/{}", escape(key)), key, value, stored.get(key)),
        }
    }
    out
}

struct Cx<'a> {
    typed: bool,
    /// The object is a Service (the kind whose fields the API server allocates).
    service: bool,
    evidence: &'a str,
    out: &'a mut Vec<PredictedDiff>,
}

impl Cx<'_> {
    fn compare(&mut self, pointer: &str, field: &str, declared: &Value, stored: Option<&Value>) {
        if declared.is_null() {
            // A declared null deletes the field in Argo CD's three-way diff, so what the server
            // put there shows as a difference — unless Argo CD predicts it too: for a typed
            // object it applies Kubernetes' defaulting functions to the predicted live object
            // (`replicas: null` against a stored 1 is equal), so there only what the server
            // allocates differs. An empty struct stored for the null (`resources: {}`) is what
            // Go re-marshals the null to: equal.
            if let Some(s) = stored.filter(|s| !is_empty(s))
                && (!self.typed || self.allocated(pointer))
            {
                self.differs(pointer, Some(s.clone()));
            }
            return;
        }
        let Some(stored) = stored.filter(|s| !s.is_null()) else {
            if !self.absent_is_equal(declared) {
                self.differs(pointer, None);
            }
            return;
        };
        match (declared, stored) {
            (Value::Object(d), Value::Object(s)) => {
                for (key, value) in d {
                    self.compare(
                        &format!("{pointer}/{}", escape(key)),
                        key,
                        value,
                        s.get(key),
                    );
                }
            }
            (Value::Array(d), Value::Array(s)) => self.compare_list(pointer, field, d, s),
            _ if self.same_scalar(declared, stored) => {}
            _ => self.differs(pointer, Some(stored.clone())),
        }
    }

    /// Whether the API server allocates the field at `pointer` (from its ranges, not from a
    /// default): a Service's cluster IPs, IP families and node ports.
    fn allocated(&self, pointer: &str) -> bool {
        if !self.service {
            return false;
        }
        let parts: Vec<&str> = pointer.split('/').skip(1).collect();
        matches!(
            parts.as_slice(),
            [
                "spec",
                "clusterIP"
                    | "clusterIPs"
                    | "ipFamilies"
                    | "ipFamilyPolicy"
                    | "healthCheckNodePort"
            ] | ["spec", "ports", _, "nodePort"]
        )
    }

    /// Each `stringData` entry against the stored `data` entry of the same key, decoded.
    fn compare_string_data(&mut self, declared: &Value, stored: Option<&Value>) {
        let Some(entries) = declared.as_object() else {
            return;
        };
        for (key, value) in entries {
            let Some(text) = value.as_str() else {
                continue;
            };
            let stored_text = stored
                .and_then(|d| d.get(key))
                .and_then(Value::as_str)
                .and_then(|b| BASE64.decode(b).ok());
            if stored_text.as_deref() != Some(text.as_bytes()) {
                let pointer = format!("/stringData/{}", escape(key));
                let shown = stored
                    .and_then(|d| d.get(key))
                    .map(|_| Value::from("(other content under data)"));
                self.differs(&pointer, shown);
            }
        }
    }

    fn compare_list(&mut self, pointer: &str, field: &str, declared: &[Value], stored: &[Value]) {
        let keys = if self.typed {
            merge_keys(field, declared)
        } else {
            None
        };
        let before = self.out.len();
        for (i, item) in declared.iter().enumerate() {
            let counterpart = match keys {
                Some(keys) => stored.iter().find(|s| {
                    keys.iter()
                        .all(|k| same_key(&key_of(item, k), &key_of(s, k)))
                }),
                None => stored.get(i),
            };
            self.compare(&format!("{pointer}/{i}"), "", item, counterpart);
        }
        // Compared as written (a JSON merge patch), a list is replaced whole: what the server
        // adds inside its items (a CRD schema default, an allocated value) differs too, though
        // no declared field changed.
        if !self.typed && self.out.len() == before && !same_json(declared, stored) {
            self.differs(pointer, Some(Value::Array(stored.to_vec())));
        }
    }

    /// A declared value the stored form lacks is no difference when it is null (a JSON merge
    /// patch deletes with null), or when Argo CD's decoding of a typed object drops it too (an
    /// empty or zero value of an omitempty field).
    fn absent_is_equal(&self, declared: &Value) -> bool {
        match declared {
            Value::Null => true,
            _ if !self.typed => false,
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            Value::String(s) => s.is_empty(),
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
        }
    }

    fn same_scalar(&self, declared: &Value, stored: &Value) -> bool {
        if declared == stored {
            return true;
        }
        if let (Some(a), Some(b)) = (declared.as_f64(), stored.as_f64()) {
            return a == b;
        }
        // A quantity the API server stores canonically, which Argo CD's decoding also makes
        // canonical on the declared side.
        self.typed
            && stored.is_string()
            && unnormalised::canonical(declared).as_deref() == stored.as_str()
    }

    fn differs(&mut self, pointer: &str, stored: Option<Value>) {
        self.out.push(PredictedDiff {
            pointer: pointer.to_string(),
            mechanism: Mechanism::Stored,
            evidence: self.evidence.to_string(),
            stored,
            confidence: Confidence::Certain,
        });
    }
}

/// The strategic-merge keys of a list of a built-in kind, by its field name (the element's
/// fields tell the two kinds of `ports` apart).
pub(crate) fn merge_keys(field: &str, items: &[Value]) -> Option<&'static [&'static str]> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims" => &["name"],
        "volumeMounts" => &["mountPath"],
        "volumeDevices" => &["devicePath"],
        "hostAliases" => &["ip"],
        "topologySpreadConstraints" => &["topologyKey", "whenUnsatisfiable"],
        "ports" if items.iter().any(|p| p.get("containerPort").is_some()) => {
            &["containerPort", "protocol"]
        }
        "ports" if items.iter().any(|p| p.get("port").is_some()) => &["port", "protocol"],
        _ => return None,
    })
}

/// A merge key's value; `protocol` defaults to TCP.
fn key_of(item: &Value, key: &str) -> Value {
    match item.get(key) {
        Some(v) if !v.is_null() => v.clone(),
        _ if key == "protocol" => Value::from("TCP"),
        _ => Value::Null,
    }
}

/// Null, or an empty map or list.
fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Equal as JSON, numbers by value; `a` is the declared side.
fn same_json(a: &[Value], b: &[Value]) -> bool {
    fn same(a: &Value, b: &Value) -> bool {
        match (a, b) {
            (Value::Array(x), Value::Array(y)) => same_json(x, y),
            // A key declared null equals an absent or empty stored value (see `compare`).
            (Value::Object(x), Value::Object(y)) => {
                x.iter().all(|(k, v)| match y.get(k) {
                    _ if v.is_null() => y.get(k).is_none_or(is_empty),
                    Some(w) => same(v, w),
                    None => false,
                }) && y.keys().all(|k| x.contains_key(k))
            }
            _ => same_key(a, b),
        }
    }
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
}

/// Keys compare as values, numbers by value (`80` is `80.0`).
fn same_key(a: &Value, b: &Value) -> bool {
    a == b || matches!((a.as_f64(), b.as_f64()), (Some(x), Some(y)) if x == y)
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pointers(d: &[PredictedDiff]) -> Vec<&str> {
        d.iter().map(|d| d.pointer.as_str()).collect()
    }

    fn deployment(containers: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
               "metadata": {"name": "web", "labels": {"app": "web"}},
               "spec": {"replicas": 2, "template": {"spec": {"containers": containers}}}})
    }

    #[test]
    fn a_webhook_rewriting_a_declared_image_is_a_difference_and_an_injected_sidecar_is_not() {
        let declared = deployment(json!([{"name": "app", "image": "nginx:1.27",
            "env": [{"name": "A", "value": "1"}]}]));
        let mut stored = deployment(json!([
            {"name": "proxy", "image": "envoy"},
            {"name": "app", "image": "mirror.example/nginx:1.27", "imagePullPolicy": "IfNotPresent",
             "env": [{"name": "INJECTED", "value": "x"}, {"name": "A", "value": "1"}]}
        ]));
        stored["metadata"]["labels"]["injected"] = json!("yes");
        stored["metadata"]["managedFields"] = json!([{"manager": "syncguard-check"}]);
        let d = differences(&declared, &stored, true, "dry-run");
        assert_eq!(pointers(&d), ["/spec/template/spec/containers/0/image"]);
        assert_eq!(d[0].stored, Some(json!("mirror.example/nginx:1.27")));
        assert_eq!(d[0].mechanism, Mechanism::Stored);
        // Compared by position (a custom resource, or a manifest Argo CD cannot decode), the
        // injected sidecar displaces the declared container.
        let raw = differences(&declared, &stored, false, "dry-run");
        assert!(
            pointers(&raw).contains(&"/spec/template/spec/containers/0/name"),
            "{raw:?}"
        );
    }

    #[test]
    fn typed_objects_normalise_quantities_and_omitted_empty_values() {
        let declared = json!({"kind": "Deployment", "metadata": {"annotations": {}},
            "spec": {"paused": false, "template": {"spec": {"containers": [{"name": "app",
            "resources": {"requests": {"cpu": "1000m", "memory": "0.5Gi"}}}]}}}});
        let stored = json!({"kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"template": {"spec": {"containers": [{"name": "app",
            "resources": {"requests": {"cpu": "1", "memory": "512Mi"}}}]}}}});
        assert_eq!(
            differences(&declared, &stored, true, "e").len(),
            0,
            "{:?}",
            differences(&declared, &stored, true, "e")
        );
        // Compared as written, the same object differs in all four places.
        let mut raw = pointers(&differences(&declared, &stored, false, "e"))
            .into_iter()
            .map(String::from)
            .collect::<Vec<_>>();
        raw.sort();
        assert_eq!(
            raw,
            [
                "/metadata/annotations",
                "/spec/paused",
                "/spec/template/spec/containers/0/resources/requests/cpu",
                "/spec/template/spec/containers/0/resources/requests/memory"
            ]
        );
    }

    #[test]
    fn service_ports_match_by_port_and_protocol_and_numbers_by_value() {
        let declared = json!({"spec": {"ports": [{"port": 80, "name": "http"},
                                                 {"port": 53, "protocol": "UDP"}]}});
        let stored = json!({"spec": {"ports": [{"port": 53, "protocol": "UDP", "targetPort": 53},
                                               {"port": 80.0, "protocol": "TCP", "name": "web"}]}});
        let d = differences(&declared, &stored, true, "e");
        assert_eq!(pointers(&d), ["/spec/ports/0/name"]);
        assert_eq!(d[0].stored, Some(json!("web")));
    }

    #[test]
    fn null_status_and_undeclared_fields_are_not_differences() {
        let declared = json!({"apiVersion": "v1", "kind": "ConfigMap", "status": {"x": 1},
                              "data": {"a": "1", "gone": null}, "metadata": {"name": "c", "namespace": "n"}});
        let stored = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1", "b": "2"},
                            "metadata": {"name": "c", "namespace": "other", "uid": "u"}});
        assert!(differences(&declared, &stored, false, "e").is_empty());
        assert!(differences(&json!("not an object"), &stored, true, "e").is_empty());
    }

    #[test]
    fn a_declared_null_differs_only_from_a_value_the_server_fills_in() {
        // linkerd's Deployments render `resources: null`; the server stores `{}`, which is what
        // Go re-marshals the null to.
        let declared = deployment(json!([{"name": "app", "image": "x", "resources": null}]));
        let stored = deployment(json!([{"name": "app", "image": "x", "resources": {}}]));
        assert!(differences(&declared, &stored, true, "e").is_empty());
        assert!(differences(&declared, &stored, false, "e").is_empty());
        // A chart rendering `nodePort:` with no value: the null deletes the field in every
        // three-way diff, and the server allocated a port there.
        let declared = json!({"kind": "Service", "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": null}]}});
        let stored = json!({"kind": "Service", "spec": {"type": "NodePort", "ports": [{"port": 80, "protocol": "TCP", "nodePort": 31380}]}});
        let d = differences(&declared, &stored, true, "e");
        assert_eq!(pointers(&d), ["/spec/ports/0/nodePort"]);
        assert_eq!(d[0].stored, Some(json!(31380)));
        // A value Kubernetes' defaulting functions set is predicted by Argo CD as well (kyverno's
        // `replicas:` with no value, stored 1).
        let declared = json!({"kind": "Deployment", "spec": {"replicas": null}});
        let stored = json!({"kind": "Deployment", "spec": {"replicas": 1}});
        assert!(differences(&declared, &stored, true, "e").is_empty());
        // A custom resource's null against a CRD default: Argo CD applies no CRD defaults.
        assert_eq!(
            pointers(&differences(&declared, &stored, false, "e")),
            ["/spec/replicas"]
        );
    }

    #[test]
    fn secret_string_data_is_compared_under_data() {
        let declared = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                              "stringData": {"user": "admin", "pass": "new"}});
        // "admin" and "old" in base64.
        let stored = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                            "data": {"user": "YWRtaW4=", "pass": "b2xk"}, "type": "Opaque"});
        let d = differences(&declared, &stored, true, "e");
        assert_eq!(pointers(&d), ["/stringData/pass"]);
        // The stored content is not shown: it is a Secret.
        assert_eq!(d[0].stored, Some(json!("(other content under data)")));
        let same = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                          "data": {"user": "YWRtaW4=", "pass": "bmV3"}});
        assert!(differences(&declared, &same, true, "e").is_empty());
    }

    #[test]
    fn a_list_compared_as_written_differs_when_the_server_fills_its_items() {
        // A custom resource: a CRD schema default inside a list item.
        let declared = json!({"apiVersion": "example.com/v1", "kind": "Secretish",
            "spec": {"data": [{"key": "a"}], "target": {"name": "t"}}});
        let stored = json!({"apiVersion": "example.com/v1", "kind": "Secretish",
            "spec": {"data": [{"key": "a", "strategy": "Default"}],
                     "target": {"name": "t", "policy": "Owner"}}});
        let d = differences(&declared, &stored, false, "e");
        // The list is replaced whole; a map is merged, so its default is no difference.
        assert_eq!(pointers(&d), ["/spec/data"]);
        // The same fill in a list a typed object merges by key is no difference.
        assert!(differences(&declared, &stored, true, "e").is_empty());
        // A list stored as declared is none either.
        assert!(differences(&declared, &declared, false, "e").is_empty());
    }
}
