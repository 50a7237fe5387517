//! What Argo CD's default apply writes onto the object, and whether it fits.
//!
//! Argo CD applies with `kubectl apply` (client-side) unless `ServerSideApply=true` or
//! `Replace=true` is in effect. kubectl stores the whole object as applied — compact JSON, the
//! `last-applied-configuration` annotation itself left out — in the
//! `kubectl.kubernetes.io/last-applied-configuration` annotation, and the API server refuses any
//! object whose annotations, keys and values together, exceed 256 KiB (apimachinery
//! `TotalAnnotationSizeLimitB`): the sync fails with `metadata.annotations: Too long: must have
//! at most 262144 bytes`. Large CRDs (kube-prometheus-stack, kyverno, external-secrets) are the
//! usual victims.
//!
//! The size is counted as Go's `encoding/json` writes it: compact, with `<`, `>` and `&`
//! escaped as `\u003c` (six bytes for one). Before applying, Argo CD adds its tracking-id
//! annotation when it tracks by annotation; [`ApplySize::of`] counts one when the object has
//! none, so the estimate errs on the side Argo CD's own apply will see.

use std::io;

use serde::Serialize;
use serde_json::Value;

use super::argo::TRACKING_ID;

/// The annotation `kubectl apply` writes.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The API server's limit on all annotations of one object, in bytes.
pub const ANNOTATIONS_LIMIT: usize = 262_144;

/// `input.apply`: the sizes a client-side apply produces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ApplySize {
    /// Bytes of the `last-applied-configuration` value: the object as applied.
    pub last_applied_bytes: usize,
    /// Bytes of every annotation after a client-side apply (keys and values), the
    /// `last-applied-configuration` included: what the API server checks against the limit.
    pub annotations_bytes: usize,
    /// [`ANNOTATIONS_LIMIT`], so rules do not repeat the number.
    pub limit: usize,
}

impl ApplySize {
    /// The sizes for `raw`, the object as Argo CD would apply it; `app` is the owning
    /// Application's name when known (it is part of the tracking id Argo CD adds).
    pub fn of(raw: &Value, app: Option<&str>) -> ApplySize {
        let annotations = raw
            .pointer("/metadata/annotations")
            .and_then(Value::as_object);
        let mut own = 0;
        let mut tracked = false;
        // `"<key>":"<value>",` of an old last-applied annotation in the serialised object:
        // kubectl drops it before serialising (the new one replaces it).
        let mut stale_last_applied = 0;
        for (k, v) in annotations.into_iter().flatten() {
            let text = v.as_str().unwrap_or_default();
            if k == LAST_APPLIED {
                stale_last_applied = go_json_len_of_str(k) + 1 + go_json_len_of_str(text) + 1;
                continue;
            }
            tracked |= k == TRACKING_ID;
            own += k.len() + text.len();
        }
        // The tracking id Argo CD adds, `<app>:<group>/<kind>:<namespace>/<name>` (the
        // apiVersion stands in for the group: a few bytes more, never fewer).
        let (tracking_annotation, tracking_in_object) = if tracked {
            (0, 0)
        } else {
            let id_len = app.map_or(0, str::len)
                + 4
                + [
                    "/apiVersion",
                    "/kind",
                    "/metadata/namespace",
                    "/metadata/name",
                ]
                .iter()
                .filter_map(|p| raw.pointer(p).and_then(Value::as_str))
                .map(str::len)
                .sum::<usize>();
            let annotation = TRACKING_ID.len() + id_len;
            // `"key":"value",`
            (annotation, annotation + 6)
        };
        let mut counter = GoJsonCounter::default();
        let object = match serde_json::to_writer(&mut counter, raw) {
            Ok(()) => counter.go_len(),
            Err(_) => 0,
        };
        let last_applied = object.saturating_sub(stale_last_applied) + tracking_in_object;
        ApplySize {
            last_applied_bytes: last_applied,
            annotations_bytes: own + tracking_annotation + LAST_APPLIED.len() + last_applied,
            limit: ANNOTATIONS_LIMIT,
        }
    }
}

/// Length of a string as Go's `json.Marshal` writes it, quotes included.
fn go_json_len_of_str(s: &str) -> usize {
    let mut counter = GoJsonCounter::default();
    match serde_json::to_writer(&mut counter, s) {
        Ok(()) => counter.go_len(),
        Err(_) => s.len() + 2,
    }
}

/// Counts serde_json's compact output and the bytes Go's encoder would add: it escapes `<`, `>`
/// and `&` (one byte each here) as `\u00XX` (six bytes). Those characters can only occur inside
/// JSON strings, so every one seen is one Go escapes.
#[derive(Default)]
struct GoJsonCounter {
    bytes: usize,
    html: usize,
}

impl GoJsonCounter {
    fn go_len(&self) -> usize {
        self.bytes + 5 * self.html
    }
}

impl io::Write for GoJsonCounter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes += buf.len();
        self.html += buf
            .iter()
            .filter(|b| matches!(b, b'<' | b'>' | b'&'))
            .count();
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_small_object_fits_and_its_size_is_the_compact_json_plus_the_tracking_id() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": "a", "namespace": "ns"}, "data": {"k": "v"}});
        let compact = serde_json::to_string(&cm).unwrap().len();
        let size = ApplySize::of(&cm, Some("shop"));
        let id = "shop:v1/ConfigMap:ns/a".len();
        // The object grows by `"argocd.argoproj.io/tracking-id":"<id>",` (and its annotations
        // map, which this estimate does not count separately: a few bytes).
        assert_eq!(
            size.last_applied_bytes,
            compact + TRACKING_ID.len() + id + 6
        );
        assert_eq!(
            size.annotations_bytes,
            TRACKING_ID.len() + id + LAST_APPLIED.len() + size.last_applied_bytes
        );
        assert!(size.annotations_bytes <= ANNOTATIONS_LIMIT);
    }

    #[test]
    fn an_object_over_256_kib_as_go_writes_it_is_too_long() {
        // 87,000 `<` are 87 kB here but 522 kB as Go escapes them.
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
                        "data": {"page": "<".repeat(87_000)}});
        assert!(serde_json::to_string(&cm).unwrap().len() < ANNOTATIONS_LIMIT);
        assert!(ApplySize::of(&cm, None).annotations_bytes > ANNOTATIONS_LIMIT);
        let plain = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"},
                           "data": {"page": "x".repeat(87_000)}});
        assert!(ApplySize::of(&plain, None).annotations_bytes <= ANNOTATIONS_LIMIT);
    }

    #[test]
    fn an_existing_last_applied_annotation_is_replaced_not_counted_twice() {
        let body = json!({"apiVersion": "v1", "kind": "ConfigMap",
                          "metadata": {"name": "a", "annotations": {
                              "argocd.argoproj.io/tracking-id": "a:/ConfigMap:ns/a"}},
                          "data": {"k": "v".repeat(1000)}});
        let mut with_old = body.clone();
        with_old["metadata"]["annotations"][LAST_APPLIED] =
            Value::String(serde_json::to_string(&body).unwrap());
        assert_eq!(ApplySize::of(&with_old, None), ApplySize::of(&body, None));
    }
}
