//! Core kinds: Service, Secret, ConfigMap.
//!
//! A Service's cluster IPs are handed out once; kube-proxy and every client's DNS answer
//! hold them, so they never change while the Service lives (unless it is, or becomes, an
//! ExternalName Service, which has none). A Secret's `type` is fixed, and a Secret or
//! ConfigMap marked `immutable: true` is frozen for good: kubelets stop watching it.

use serde_json::{Map, Value};

use super::compare::{or_default, same};
use super::{Change, Refusal, forbidden, immutable, invalid};
use base64::Engine as _;

fn service_type(v: Option<&Value>) -> &str {
    v.and_then(Value::as_str).unwrap_or("ClusterIP")
}

/// Service: the primary cluster IP, the primary IP family, `loadBalancerClass` and
/// `healthCheckNodePort`. A manifest that omits `clusterIP` keeps the allocated one, whether
/// applied or replaced: the server patches it back.
pub(super) fn service(c: &Change, out: &mut Vec<Refusal>) {
    let (before_type, after_type) = (
        service_type(c.before("/spec/type")),
        service_type(c.after("/spec/type")),
    );
    if before_type == "ExternalName" || after_type == "ExternalName" {
        return;
    }
    let primary = |ip: Option<&Value>, ips: Option<&Value>| -> Option<String> {
        ip.and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .or_else(|| ips.and_then(|l| l.get(0)).and_then(Value::as_str))
            .map(str::to_string)
    };
    let before_ip = primary(c.before("/spec/clusterIP"), c.before("/spec/clusterIPs"));
    let after_ip = primary(c.after("/spec/clusterIP"), c.after("/spec/clusterIPs"));
    let headless = |ip: &Option<String>| ip.as_deref() == Some("None");
    if let Some(new) = &after_ip
        && !(headless(&before_ip) && headless(&after_ip))
        && before_ip.as_deref() != Some(new)
    {
        // `before` without one: the server allocated an address, which is not `new`.
        let pointer = if c.after("/spec/clusterIP").is_some() {
            "/spec/clusterIP"
        } else {
            "/spec/clusterIPs/0"
        };
        out.push(invalid(
            pointer,
            "spec.clusterIPs[0]",
            Some(&Value::from(vec![new.clone()])),
            "may not change once set",
        ));
    }
    fn family(v: Option<&Value>) -> Option<&str> {
        v.and_then(|l| l.get(0)).and_then(Value::as_str)
    }
    if let (Some(b), Some(a)) = (
        family(c.before("/spec/ipFamilies")),
        family(c.after("/spec/ipFamilies")),
    ) && b != a
        && !headless(&before_ip)
        && !headless(&after_ip)
    {
        out.push(invalid(
            "/spec/ipFamilies/0",
            "spec.ipFamilies[0]",
            c.after("/spec/ipFamilies"),
            "may not change once set",
        ));
    }
    if before_type == "LoadBalancer"
        && after_type == "LoadBalancer"
        && !same(
            c.before("/spec/loadBalancerClass"),
            c.after("/spec/loadBalancerClass"),
        )
    {
        out.push(invalid(
            "/spec/loadBalancerClass",
            "spec.loadBalancerClass",
            c.after("/spec/loadBalancerClass"),
            "may not change once set",
        ));
    }
    let local = |v: Option<&Value>| v.and_then(Value::as_str) == Some("Local");
    if before_type == "LoadBalancer"
        && after_type == "LoadBalancer"
        && local(c.before("/spec/externalTrafficPolicy"))
        && local(c.after("/spec/externalTrafficPolicy"))
        && let (Some(b), Some(a)) = (
            c.before("/spec/healthCheckNodePort")
                .and_then(Value::as_i64),
            c.after("/spec/healthCheckNodePort").and_then(Value::as_i64),
        )
        && a != 0
        && a != b
    {
        out.push(forbidden(
            "/spec/healthCheckNodePort",
            "spec.healthCheckNodePort",
            "field is immutable",
        ));
    }
}

const FROZEN: &str = "field is immutable when `immutable` is set";

/// `immutable` and the refusal of turning it off once set.
fn frozen(c: &Change, out: &mut Vec<Refusal>) -> bool {
    if c.before("/immutable").and_then(Value::as_bool) != Some(true) {
        return false;
    }
    if c.after("/immutable").and_then(Value::as_bool) != Some(true) {
        out.push(forbidden("/immutable", "immutable", FROZEN));
    }
    true
}

/// Secret: `type`, always; `data` (with `stringData` merged in) and `immutable` once
/// `immutable: true`.
pub(super) fn secret(c: &Change, out: &mut Vec<Refusal>) {
    let kind = |v| or_default(v, Value::from("Opaque"));
    if kind(c.before("/type")) != kind(c.after("/type")) {
        out.push(immutable("/type", "type", c.after("/type")));
    }
    if frozen(c, out) && secret_data(c.before) != secret_data(c.after) {
        let pointer = if c.after("/data").is_none() && c.after("/stringData").is_some() {
            "/stringData"
        } else {
            "/data"
        };
        out.push(forbidden(pointer, "data", FROZEN));
    }
}

/// A Secret's `data` as stored: `stringData` is written into it, over the same keys.
fn secret_data(v: &Value) -> Map<String, Value> {
    let mut data = v
        .get("data")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (k, s) in v
        .get("stringData")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let text = s.as_str().unwrap_or_default();
        data.insert(
            k.clone(),
            Value::from(base64::engine::general_purpose::STANDARD.encode(text)),
        );
    }
    data
}

/// ConfigMap: `data`, `binaryData` and `immutable` once `immutable: true`.
pub(super) fn config_map(c: &Change, out: &mut Vec<Refusal>) {
    if !frozen(c, out) {
        return;
    }
    for key in ["data", "binaryData"] {
        let pointer = format!("/{key}");
        // An explicit `{}` for absent data is no change: v1.34.4 accepts it (unlike a
        // StorageClass's `{}` parameters).
        if !same(c.before(&pointer), c.after(&pointer)) {
            out.push(forbidden(&pointer, key, FROZEN));
        }
    }
}
