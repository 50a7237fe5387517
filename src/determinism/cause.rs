//! Guessing why a field changes between renders, from the values themselves.
//!
//! The guesses are heuristics over what Helm's template functions produce, checked from the most
//! specific to the least: certificate material, checksum annotations, timestamps, UUIDs, then any
//! fixed-length random token. A wrong guess costs little (the message still names the field and
//! the fix is the same family), while a right one saves the reader from opening the chart.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

use super::diff::last_token;
use crate::model::generated::is_pem;

/// The likely reason a value differs between renders.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Cause {
    /// PEM certificate or key material (base64 `LS0tLS1CRUdJTi…` or `-----BEGIN`): Helm
    /// `genCA`, `genSelfSignedCert`, `genSignedCert`, `genPrivateKey`.
    GeneratedCertificate,
    /// A `checksum/…` annotation: it hashes another template that is itself not deterministic.
    ChecksumAnnotation,
    /// An RFC 3339 / ISO 8601 date-time, a compact `20060102150405` stamp, or a Unix epoch
    /// (seconds to nanoseconds) close to the current time: Helm `now`, `date`, `unixEpoch`.
    Timestamp,
    /// A UUID: Helm `uuidv4`.
    Uuid,
    /// Tokens of equal length made of letters, digits and base64 punctuation: Helm
    /// `randAlphaNum`, `randAlpha`, `randNumeric`, `randAscii`, `randBytes`.
    RandomString,
    /// The object's name itself differs: the object exists under a different name in another
    /// render.
    RandomName,
}

impl Cause {
    /// A short stable name, as serialized (`generated-certificate`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::GeneratedCertificate => "generated-certificate",
            Cause::ChecksumAnnotation => "checksum-annotation",
            Cause::Timestamp => "timestamp",
            Cause::Uuid => "uuid",
            Cause::RandomString => "random-string",
            Cause::RandomName => "random-name",
        }
    }

    /// What probably produces the value, in words.
    pub fn hint(self) -> &'static str {
        match self {
            Cause::GeneratedCertificate => {
                "certificate or key material generated while rendering (Helm genCA, \
                 genSelfSignedCert, genSignedCert or genPrivateKey): a new key pair on every \
                 render"
            }
            Cause::ChecksumAnnotation => {
                "a checksum annotation (include ... | sha256sum) over another template that \
                 is itself not deterministic"
            }
            Cause::Timestamp => {
                "a timestamp taken at render time (Helm now, date, dateInZone or unixEpoch)"
            }
            Cause::Uuid => "a UUID generated at render time (Helm uuidv4)",
            Cause::RandomString => {
                "a random value generated at render time (Helm randAlphaNum, randAlpha, \
                 randNumeric, randAscii or randBytes)"
            }
            Cause::RandomName => {
                "the object's name is random (randAlphaNum, uuidv4 or now in metadata.name)"
            }
        }
    }

    /// How to make the render stable, in words.
    pub fn fix(self) -> &'static str {
        match self {
            Cause::GeneratedCertificate => {
                "create the certificate outside the chart: a cert-manager Certificate, or a \
                 Secret created once and referenced by name (an existingSecret value). Wrapping \
                 genCA in lookup does not help: Argo CD renders with helm template, where \
                 lookup finds nothing, so a new certificate is generated every time."
            }
            Cause::ChecksumAnnotation => {
                "fix the template the checksum is computed from (see the other SG302 findings, \
                 usually a Secret or ConfigMap with a random value or a timestamp); the \
                 checksum then stays stable by itself."
            }
            Cause::Timestamp => {
                "remove now/date from the templates. To force a rollout, change a value in \
                 values.yaml (the image tag or the git revision) or use a checksum of the real \
                 configuration."
            }
            Cause::Uuid | Cause::RandomString => {
                "do not generate secrets or IDs in templates: create the Secret once outside \
                 the chart (or with External Secrets / Sealed Secrets) and reference it, or \
                 pass the value in through values. lookup does not help: Argo CD renders with \
                 helm template, where lookup finds nothing, so a new value is generated every \
                 time."
            }
            Cause::RandomName => {
                "give the object a fixed metadata.name. A Job that must run on every sync \
                 should be an Argo CD hook (argocd.argoproj.io/hook: PreSync or Sync, with \
                 generateName and a hook-delete-policy): Argo CD names hooks itself and does \
                 not compare them."
            }
        }
    }

    /// Guesses the cause of a changed field from its pointer and its value in each run
    /// (`None` where the field, or the object, is absent). `now` is the current Unix time in
    /// seconds, for recognising epoch timestamps.
    pub(super) fn of_field(pointer: &str, values: &[Option<&Value>], now: u64) -> Option<Cause> {
        let present: Vec<&Value> = values.iter().flatten().copied().collect();
        let strings: Vec<&str> = present.iter().filter_map(|v| v.as_str()).collect();
        let all_strings = !strings.is_empty() && strings.len() == present.len();
        if strings.iter().any(|s| is_pem(s)) {
            return Some(Cause::GeneratedCertificate);
        }
        if is_checksum_annotation(pointer) {
            return Some(Cause::ChecksumAnnotation);
        }
        if !present.is_empty() && present.iter().all(|v| is_timestamp(v, now)) {
            return Some(Cause::Timestamp);
        }
        if all_strings && strings.iter().all(|s| is_uuid(s)) {
            return Some(Cause::Uuid);
        }
        if all_strings && strings.len() >= 2 && are_random_tokens(&strings) {
            return Some(Cause::RandomString);
        }
        None
    }
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An annotation whose key mentions `checksum` (`checksum/config`, `checksum/secret`).
fn is_checksum_annotation(pointer: &str) -> bool {
    pointer.contains("/metadata/annotations/")
        && last_token(pointer).is_some_and(|key| key.to_ascii_lowercase().contains("checksum"))
}

/// A date-time string, a compact stamp, or an epoch (string or number) near `now`.
fn is_timestamp(v: &Value, now: u64) -> bool {
    match v {
        Value::String(s) => has_iso_date_time(s) || is_compact_stamp(s) || is_epoch(s, now),
        Value::Number(n) => is_epoch(&n.to_string(), now),
        _ => false,
    }
}

/// `YYYY-MM-DDThh:mm` or `YYYY-MM-DD hh:mm` anywhere in the text (RFC 3339, ISO 8601, and
/// Go's default `time.Time` format that Helm's `now` prints).
fn has_iso_date_time(s: &str) -> bool {
    const SHAPE: &[u8; 16] = b"dddd-dd-dd?dd:dd";
    s.as_bytes().windows(SHAPE.len()).any(|w| {
        w.iter().zip(SHAPE).all(|(&c, &want)| match want {
            b'd' => c.is_ascii_digit(),
            b'?' => c == b'T' || c == b' ',
            _ => c == want,
        })
    })
}

/// Go's `20060102150405` layout: 14 digits with a plausible month, day, hour, minute and second.
fn is_compact_stamp(s: &str) -> bool {
    if s.len() != 14 || !s.bytes().all(|c| c.is_ascii_digit()) || !s.starts_with("20") {
        return false;
    }
    let field = |from: usize| s.get(from..from + 2).and_then(|d| d.parse::<u32>().ok());
    matches!(
        (field(4), field(6), field(8), field(10), field(12)),
        (
            Some(1..=12),
            Some(1..=31),
            Some(0..=23),
            Some(0..=59),
            Some(0..=60)
        )
    )
}

/// Seconds, milliseconds, microseconds or nanoseconds since 1970 within two days of `now`.
/// Requiring closeness to the clock keeps random 10-digit numbers from passing as timestamps.
fn is_epoch(s: &str, now: u64) -> bool {
    const TWO_DAYS: u64 = 2 * 24 * 3600;
    if !matches!(s.len(), 10 | 13 | 16 | 19) || !s.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    s.get(..10)
        .and_then(|secs| secs.parse::<u64>().ok())
        .is_some_and(|secs| secs.abs_diff(now) <= TWO_DAYS)
}

/// The 8-4-4-4-12 hexadecimal form.
fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.bytes().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Two or more tokens of the same length (at least 4), all made of letters, digits and the
/// base64/base64url punctuation: what `randAlphaNum 16`, `randBytes 32` or `b64enc` of either
/// produce. Values of different lengths are usually something else (a counter, free text).
fn are_random_tokens(strings: &[&str]) -> bool {
    let Some(first) = strings.first() else {
        return false;
    };
    first.len() >= 4
        && strings.iter().all(|s| {
            s.len() == first.len()
                && s.bytes().all(|c| {
                    c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'=' | b'_' | b'-')
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// 2026-06-01T00:00:00Z, a fixed "now" for the epoch tests.
    const NOW: u64 = 1_780_272_000;

    fn cause(pointer: &str, values: &[Value]) -> Option<Cause> {
        let values: Vec<Option<&Value>> = values.iter().map(Some).collect();
        Cause::of_field(pointer, &values, NOW)
    }

    #[test]
    fn base64_pem_in_a_secret_points_at_helm_certificate_functions() {
        let got = cause(
            "/data/tls.crt",
            &[
                json!("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM="),
                json!("LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUQ="),
            ],
        );
        assert_eq!(got, Some(Cause::GeneratedCertificate));
        let plain = cause(
            "/stringData/ca.crt",
            &[json!("-----BEGIN CERTIFICATE-----\nA"), json!("x")],
        );
        assert_eq!(plain, Some(Cause::GeneratedCertificate));
    }

    #[test]
    fn a_checksum_annotation_is_recognised_by_its_key_whatever_its_value() {
        let got = cause(
            "/spec/template/metadata/annotations/checksum~1config",
            &[json!("9f86d081884c7d65"), json!("60303ae22b998861")],
        );
        assert_eq!(got, Some(Cause::ChecksumAnnotation));
    }

    #[test]
    fn rfc3339_and_go_default_times_are_timestamps() {
        let iso = cause(
            "/x",
            &[json!("2026-06-01T10:00:00Z"), json!("2026-06-01T10:00:01Z")],
        );
        assert_eq!(iso, Some(Cause::Timestamp));
        let go = cause(
            "/x",
            &[
                json!("2026-06-01 10:00:00.1 +0000 UTC m=+0.01"),
                json!("2026-06-01 10:00:01.2 +0000 UTC m=+0.02"),
            ],
        );
        assert_eq!(go, Some(Cause::Timestamp));
        let compact = cause("/x", &[json!("20260601100000"), json!("20260601100001")]);
        assert_eq!(compact, Some(Cause::Timestamp));
    }

    #[test]
    fn epochs_count_as_timestamps_only_near_the_current_time() {
        let nanos = cause(
            "/x",
            &[json!("1780272001123456789"), json!("1780272002123456789")],
        );
        assert_eq!(nanos, Some(Cause::Timestamp));
        let secs = cause("/x", &[json!(1_780_272_001), json!(1_780_272_002)]);
        assert_eq!(secs, Some(Cause::Timestamp));
        // randNumeric 10: digits of the right length, but nowhere near now.
        let random = cause("/x", &[json!("0000000042"), json!("9999999999")]);
        assert_eq!(random, Some(Cause::RandomString));
    }

    #[test]
    fn uuids_are_told_apart_from_other_random_strings() {
        let got = cause(
            "/x",
            &[
                json!("0f8fad5b-d9cb-469f-a165-70867728950e"),
                json!("7c9e6679-7425-40de-944b-e07fc1f90ae7"),
            ],
        );
        assert_eq!(got, Some(Cause::Uuid));
    }

    #[test]
    fn equal_length_tokens_are_random_strings_but_free_text_is_not() {
        assert_eq!(
            cause("/x", &[json!("aB3dE9"), json!("Zq81Lm")]),
            Some(Cause::RandomString)
        );
        assert_eq!(
            cause(
                "/x",
                &[
                    json!("q1w2e3r4t5y6u7i8o9p0+/=="),
                    json!("QWERTYUIOPASDFGHJKLZXC==")
                ]
            ),
            Some(Cause::RandomString)
        );
        assert_eq!(cause("/x", &[json!("123"), json!("31337")]), None);
        assert_eq!(
            cause("/x", &[json!("hello world"), json!("hello there")]),
            None
        );
        assert_eq!(cause("/x", &[json!(1), json!(2)]), None);
    }

    #[test]
    fn a_single_present_value_can_still_be_a_timestamp() {
        let values = [Some(&json!("2026-06-01T10:00:00Z")), None];
        assert_eq!(Cause::of_field("/x", &values, NOW), Some(Cause::Timestamp));
        let values = [Some(&json!("aB3dE9")), None];
        assert_eq!(Cause::of_field("/x", &values, NOW), None);
    }
}
