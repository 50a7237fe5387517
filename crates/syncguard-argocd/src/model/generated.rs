//! What one rendered object shows of values generated while rendering.
//!
//! `syncguard determinism` compares several renders and knows which fields change. A single
//! render (a chart's output checked as a file, a review's head) can still show the one kind of
//! generated value that is unmistakable: certificate and key material in a Secret or
//! ConfigMap. Helm's `genCA`, `genSelfSignedCert`, `genSignedCert` and `genPrivateKey` make a
//! new key pair on every render, and charts put it exactly there. A fixed certificate committed
//! in values looks the same; rules say "probably" and what it would mean.

use serde_json::Value;

/// PEM text, or PEM text in base64 (`-----BEGIN` encodes to `LS0tLS1CRUdJTi`), as in a
/// Secret's `data`.
pub fn is_pem(s: &str) -> bool {
    s.starts_with("LS0tLS1CRUdJTi") || s.contains("-----BEGIN")
}

/// JSON pointers of the `data`, `stringData` and `binaryData` values of a Secret or ConfigMap
/// that hold certificate or key material; empty for other kinds.
pub fn certificate_material(kind: &str, raw: &Value) -> Vec<String> {
    if !matches!(kind, "Secret" | "ConfigMap") {
        return Vec::new();
    }
    let mut out = Vec::new();
    for field in ["data", "stringData", "binaryData"] {
        let Some(map) = raw.get(field).and_then(Value::as_object) else {
            continue;
        };
        for (key, value) in map {
            if value.as_str().is_some_and(is_pem) {
                out.push(format!(
                    "/{field}/{}",
                    key.replace('~', "~0").replace('/', "~1")
                ));
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pem_in_secret_data_plain_or_base64_is_certificate_material() {
        let secret = json!({"data": {"tls.crt": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM=", "user": "YWRtaW4="},
                            "stringData": {"ca.pem": "-----BEGIN CERTIFICATE-----\nMIIC\n"}});
        assert_eq!(
            certificate_material("Secret", &secret),
            ["/data/tls.crt", "/stringData/ca.pem"]
        );
        let config = json!({"data": {"a/b": "-----BEGIN PUBLIC KEY-----"}});
        assert_eq!(certificate_material("ConfigMap", &config), ["/data/a~1b"]);
    }

    #[test]
    fn plain_values_and_other_kinds_carry_none() {
        let secret = json!({"data": {"password": "c2VjcmV0"}, "stringData": {"n": 3}});
        assert!(certificate_material("Secret", &secret).is_empty());
        let job = json!({"data": {"tls.crt": "-----BEGIN CERTIFICATE-----"}});
        assert!(certificate_material("Job", &job).is_empty());
    }
}
