//! How a differing value is shown: short, and never the contents of a Secret.

use std::fmt;

use serde::Serialize;
use serde_json::Value;

/// Values longer than this many characters are cut: a report line must stay readable, and the
/// reader only needs to see *that* and roughly *how* a value changes.
pub const MAX_SHOWN_CHARS: usize = 80;

/// One run's value of a changed field, as reports may print it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum ShownValue {
    /// The field (or the whole object) does not exist in that run.
    Absent,
    /// A value under a Secret's `data` or `stringData`: only its size is shown, because reports
    /// end up in CI logs, PR comments and SARIF uploads.
    Redacted {
        /// Length of the value as rendered (for `data`, the base64 text; for a mapping, its
        /// compact JSON).
        bytes: usize,
    },
    /// The value as compact JSON (strings quoted and escaped), cut to [`MAX_SHOWN_CHARS`].
    Shown {
        /// The JSON text, ending in `…` when cut.
        text: String,
        /// True when the text was cut.
        truncated: bool,
    },
}

impl ShownValue {
    /// Shows `value`, or only its size when `redact` is set.
    pub fn of(value: Option<&Value>, redact: bool) -> Self {
        let Some(value) = value else {
            return ShownValue::Absent;
        };
        let json = value.to_string();
        if redact {
            let bytes = value.as_str().map_or(json.len(), str::len);
            return ShownValue::Redacted { bytes };
        }
        match json.char_indices().nth(MAX_SHOWN_CHARS - 1) {
            Some((cut, _)) if json.chars().count() > MAX_SHOWN_CHARS => ShownValue::Shown {
                text: format!("{}…", json.get(..cut).unwrap_or_default()),
                truncated: true,
            },
            _ => ShownValue::Shown {
                text: json,
                truncated: false,
            },
        }
    }
}

impl fmt::Display for ShownValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ShownValue::Absent => f.write_str("<absent>"),
            ShownValue::Redacted { bytes } => write!(f, "<redacted, {bytes} bytes>"),
            ShownValue::Shown { text, .. } => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_values_are_shown_as_json() {
        let v = json!("abc");
        assert_eq!(ShownValue::of(Some(&v), false).to_string(), "\"abc\"");
        assert_eq!(ShownValue::of(Some(&json!(3)), false).to_string(), "3");
        assert_eq!(ShownValue::of(None, false).to_string(), "<absent>");
    }

    #[test]
    fn long_values_are_cut_to_eighty_characters_on_a_character_boundary() {
        let v = json!("é".repeat(200));
        let shown = ShownValue::of(Some(&v), false);
        let text = shown.to_string();
        assert_eq!(text.chars().count(), MAX_SHOWN_CHARS);
        assert!(text.starts_with("\"éé") && text.ends_with('…'));
        assert!(matches!(
            shown,
            ShownValue::Shown {
                truncated: true,
                ..
            }
        ));
        let exact = json!("x".repeat(MAX_SHOWN_CHARS - 2));
        assert!(matches!(
            ShownValue::of(Some(&exact), false),
            ShownValue::Shown {
                truncated: false,
                ..
            }
        ));
    }

    #[test]
    fn redacted_values_show_only_their_length() {
        let v = json!("c2VjcmV0");
        assert_eq!(
            ShownValue::of(Some(&v), true).to_string(),
            "<redacted, 8 bytes>"
        );
        let map = json!({"a": "b"});
        assert_eq!(
            ShownValue::of(Some(&map), true).to_string(),
            "<redacted, 9 bytes>"
        );
        assert_eq!(ShownValue::of(None, true), ShownValue::Absent);
    }
}
