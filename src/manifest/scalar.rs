//! YAML scalars typed as Kubernetes types them, and their JSON.
//!
//! kubectl, the API server's YAML decoding and Argo CD read YAML with sigs.k8s.io/yaml: a YAML
//! 1.1 reader (go-yaml v2) decodes each document into Go values, which Go's encoding/json then
//! writes as JSON. This module reproduces both steps for one scalar (the facts are those of
//! sigs.k8s.io/yaml v1.6.0 on go.yaml.in/yaml/v2 v2.4.2, the versions Kubernetes v1.34 uses;
//! tests/yaml_conformance.rs holds this code to them):
//!
//! - [`resolve`]: the type of a plain or tagged scalar. Booleans are `y Y yes Yes YES on On ON
//!   true True TRUE` and their `n/no/off/false` counterparts; null is empty, `~`, `null`, `Null`
//!   or `NULL`; integers take Go's base prefixes (`0x`, `0o`, `0b`, and a leading `0` for octal:
//!   `0755` is 493) with `_` anywhere, signs, and beyond `i64` an unsigned 64-bit value; floats
//!   are `[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?` (`08` is the float 8) plus `.inf`
//!   and `.nan` spellings. Sexagesimal numbers (`1:20`) and timestamps (`2001-12-14`) stay
//!   strings. Quoted scalars are strings unless tagged; a tag of the YAML types makes the text
//!   resolve as that type (`!!int "12"` is 12) or the document fails; `!!binary` is base64;
//!   any other tag leaves the text a string.
//! - [`Resolved::into_json`]: the JSON value, as Go's JSON text would be read back: a float
//!   that Go prints without a `.` or exponent (`1e3` is `1000`, `1.000001e+08` is `100000100`)
//!   is an integer; JSON has no infinities or NaN, so those fail the document as YAMLToJSON
//!   fails it.
//! - [`Resolved::into_key`]: a mapping key as a JSON object key: booleans `true`/`false`
//!   (so `on:` is the key `true`), integers in decimal, floats as Go prints a float32
//!   (`1e6:` is `1e+06`); null keys and unsigned keys beyond `i64` fail the document.

use std::borrow::Cow;

use base64::Engine as _;
use serde_json::{Number, Value};

/// A scalar as the YAML reader types it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Resolved {
    Null,
    Bool(bool),
    /// Integers that fit an `i64`.
    Int(i64),
    /// Integers above `i64::MAX` that fit a `u64`.
    Uint(u64),
    Float(f64),
    Str(String),
}

/// The YAML types a tag can ask for (long form `tag:yaml.org,2002:<name>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Timestamp,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Null => "null",
            Kind::Bool => "bool",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Str => "str",
            Kind::Timestamp => "timestamp",
        }
    }
}

/// The prefix of the YAML types' tags, which `!!` stands for.
const YAML_TAG_PREFIX: &str = "tag:yaml.org,2002:";

/// Whether a mapping key is the merge key `<<`: plain and untagged, or tagged `!!merge`.
pub(crate) fn is_merge_key(text: &str, plain: bool, tag: Option<(&str, &str)>) -> bool {
    text == "<<"
        && match tag {
            None => plain,
            Some(tag) => yaml_type_name(tag) == Some("merge"),
        }
}

/// The name after `tag:yaml.org,2002:` of a tag given as (handle, suffix), if it has that prefix.
fn yaml_type_name<'a>((handle, suffix): (&'a str, &'a str)) -> Option<&'a str> {
    if handle == YAML_TAG_PREFIX {
        return Some(suffix);
    }
    // A verbatim tag (`!<tag:yaml.org,2002:int>`) has the whole tag in one part or the other.
    let whole = if handle.is_empty() { suffix } else { handle };
    whole
        .strip_prefix(YAML_TAG_PREFIX)
        .filter(|_| handle.is_empty() || suffix.is_empty())
}

/// Types a scalar; `plain` is false for quoted and block scalars, `tag` is (handle, suffix).
/// An error is a scalar its tag does not fit (`!!int abc`) or bad `!!binary` data; Kubernetes
/// refuses the whole document then.
pub(crate) fn resolve(
    text: Cow<'_, str>,
    plain: bool,
    tag: Option<(&str, &str)>,
) -> Result<Resolved, String> {
    let Some(tag) = tag else {
        if !plain {
            return Ok(Resolved::Str(text.into_owned()));
        }
        return Ok(resolve_untagged(&text, false)
            .0
            .unwrap_or_else(|| Resolved::Str(text.into_owned())));
    };
    let wanted = match yaml_type_name(tag) {
        Some("str") => return Ok(Resolved::Str(text.into_owned())),
        Some("binary") => return decode_binary(&text).map(Resolved::Str),
        Some("null") => Kind::Null,
        Some("bool") => Kind::Bool,
        Some("int") => Kind::Int,
        Some("float") => Kind::Float,
        Some("timestamp") => Kind::Timestamp,
        // Any other tag, of the YAML types (`!!merge`, `!!map`) or not: the text as written.
        _ => return Ok(Resolved::Str(text.into_owned())),
    };
    let (resolved, timestamp) = resolve_untagged(&text, wanted == Kind::Timestamp);
    let resolved = resolved.unwrap_or_else(|| Resolved::Str(text.to_string()));
    let found = match &resolved {
        Resolved::Null => Kind::Null,
        Resolved::Bool(_) => Kind::Bool,
        Resolved::Int(_) | Resolved::Uint(_) => Kind::Int,
        Resolved::Float(_) => Kind::Float,
        Resolved::Str(_) if timestamp => Kind::Timestamp,
        Resolved::Str(_) => Kind::Str,
    };
    match (wanted, resolved) {
        (w, r) if w == found => Ok(r),
        // An integer is a fine float; an unsigned one beyond i64 is not (the reader only
        // converts its signed integers).
        (Kind::Float, Resolved::Int(i)) => Ok(Resolved::Float(i as f64)),
        _ => Err(format!(
            "cannot decode !!{} `{text}` as a !!{}",
            found.name(),
            wanted.name()
        )),
    }
}

/// `!!binary`: standard base64 with padding; line breaks are ignored.
fn decode_binary(text: &str) -> Result<String, String> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    const ENGINE: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(DecodePaddingMode::RequireCanonical),
    );
    let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    ENGINE
        .decode(compact)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|_| "!!binary value contains invalid base64 data".to_string())
}

/// An untagged plain scalar's type (or the type a tag asks to resolve it as): `None` for a
/// string. The flag says the string is a timestamp (only looked for when `timestamps`).
fn resolve_untagged(text: &str, timestamps: bool) -> (Option<Resolved>, bool) {
    // The first character decides which rules can apply; other starts are always strings.
    let Some(&first) = text.as_bytes().first() else {
        return (Some(Resolved::Null), false);
    };
    if !matches!(first, b'+' | b'-' | b'0'..=b'9' | b'.' | b'~') && !b"yYnNtTfFoO".contains(&first)
    {
        return (None, false);
    }
    if let Some(word) = word(text) {
        return (Some(word), false);
    }
    match first {
        b'.' => (go_parse_float(text).map(Resolved::Float), false),
        b'+' | b'-' | b'0'..=b'9' => {
            if timestamps && is_timestamp(text) {
                return (None, true);
            }
            (number(text), false)
        }
        _ => (None, false),
    }
}

/// The spellings resolved by name.
fn word(text: &str) -> Option<Resolved> {
    Some(match text {
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            Resolved::Bool(false)
        }
        "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// A scalar starting with a sign or a digit: an integer (Go's base-0 syntax once every `_` is
/// removed), an unsigned integer beyond `i64`, a float, or (`None`) a string.
fn number(text: &str) -> Option<Resolved> {
    let plain: Cow<'_, str> = if text.contains('_') {
        Cow::Owned(text.replace('_', ""))
    } else {
        Cow::Borrowed(text)
    };
    if let Some(i) = go_parse_int(&plain) {
        return Some(Resolved::Int(i));
    }
    if let Some(u) = go_parse_uint(&plain) {
        return Some(Resolved::Uint(u));
    }
    if is_yaml_float(&plain)
        && let Ok(f) = plain.parse::<f64>()
        && f.is_finite()
    {
        return Some(Resolved::Float(f));
    }
    // `0b` followed by a signed binary number is read as that number (`0b-101` is -5).
    if let Some(digits) = plain.strip_prefix("0b") {
        if let Ok(i) = i64::from_str_radix(digits, 2) {
            return Some(Resolved::Int(i));
        }
        if !digits.starts_with(['+', '-'])
            && let Ok(u) = u64::from_str_radix(digits, 2)
        {
            return Some(Resolved::Uint(u));
        }
    } else if let Some(digits) = plain.strip_prefix("-0b")
        && !digits.starts_with(['+', '-'])
        && let Ok(i) = i64::from_str_radix(&format!("-{digits}"), 2)
    {
        return Some(Resolved::Int(i));
    }
    None
}

/// Go's `strconv.ParseInt(s, 0, 64)` for text without underscores.
fn go_parse_int(s: &str) -> Option<i64> {
    let (negative, magnitude) = match s.as_bytes().first() {
        Some(b'+') => (false, s.get(1..)?),
        Some(b'-') => (true, s.get(1..)?),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(magnitude)?;
    if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)` for text without underscores: no sign; `0x`, `0o`, `0b`
/// (either case) need a digit after them; any other leading `0` means octal.
fn go_parse_uint(s: &str) -> Option<u64> {
    let bytes = s.as_bytes();
    let (radix, digits) = match bytes {
        [] => return None,
        [b'0', prefix, _, ..] if matches!(prefix.to_ascii_lowercase(), b'x' | b'o' | b'b') => {
            let radix = match prefix.to_ascii_lowercase() {
                b'x' => 16,
                b'o' => 8,
                _ => 2,
            };
            (radix, s.get(2..)?)
        }
        [b'0', ..] => (8, s.get(1..)?),
        _ => (10, s),
    };
    if digits.is_empty() {
        return Some(0);
    }
    if digits.starts_with(['+', '-']) {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'+' | b'-')));
    let digits = |i: &mut usize| {
        let start = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for a scalar starting with `.`: `.5`, `.5e3`, `.5_5`
/// (underscores only between digits); out of range is not a float.
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    // Each `_` must sit between two digits.
    for (i, c) in b.iter().enumerate() {
        if *c == b'_' {
            let before = i.checked_sub(1).and_then(|j| b.get(j));
            let after = b.get(i + 1);
            if !before.is_some_and(u8::is_ascii_digit) || !after.is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
    }
    let plain = s.replace('_', "");
    if !plain.starts_with('.') || !is_yaml_float(&plain) {
        return None;
    }
    plain.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// The timestamp forms the reader accepts (only asked for under `!!timestamp`, since an
/// untagged timestamp stays the string it is anyway): `2001-12-14`, `2001-12-14 21:59:43.10`,
/// `2001-12-14T21:59:43.10Z` or with `t` and a `±hh:mm` zone. Month and day may have one digit.
fn is_timestamp(s: &str) -> bool {
    fn num(s: &str, max_len: usize, range: std::ops::RangeInclusive<u32>) -> Option<&str> {
        let len = s.bytes().take_while(u8::is_ascii_digit).count();
        if len == 0 || len > max_len {
            return None;
        }
        let value: u32 = s.get(..len)?.parse().ok()?;
        range.contains(&value).then(|| s.get(len..)).flatten()
    }
    let date = || -> Option<&str> {
        let rest = s.get(4..)?;
        if !s.get(..4)?.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let rest = num(rest.strip_prefix('-')?, 2, 1..=12)?;
        num(rest.strip_prefix('-')?, 2, 1..=31)
    };
    let time = |rest: &str| -> Option<String> {
        let rest = num(rest, 2, 0..=23)?;
        let rest = num(rest.strip_prefix(':')?, 2, 0..=59)?;
        let mut rest = num(rest.strip_prefix(':')?, 2, 0..=59)?;
        if let Some(fraction) = rest.strip_prefix('.') {
            let len = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if len == 0 {
                return None;
            }
            rest = fraction.get(len..)?;
        }
        Some(rest.to_string())
    };
    let Some(rest) = date() else {
        return false;
    };
    if rest.is_empty() {
        return true;
    }
    if let Some(clock) = rest.strip_prefix(' ') {
        return time(clock).is_some_and(|zone| zone.is_empty());
    }
    let Some(clock) = rest.strip_prefix(['T', 't']) else {
        return false;
    };
    let Some(zone) = time(clock) else {
        return false;
    };
    if zone == "Z" {
        return true;
    }
    let Some(offset) = zone.strip_prefix(['+', '-']) else {
        return false;
    };
    let bytes = offset.as_bytes();
    bytes.len() == 5
        && bytes.get(2) == Some(&b':')
        && [0, 1, 3, 4]
            .iter()
            .all(|&i| bytes.get(i).is_some_and(u8::is_ascii_digit))
}

impl Resolved {
    /// The JSON value: what Go's JSON text for the scalar reads back as. Infinities and NaN
    /// have no JSON; the document fails.
    pub(crate) fn into_json(self) -> Result<Value, String> {
        Ok(match self {
            Resolved::Null => Value::Null,
            Resolved::Bool(b) => Value::Bool(b),
            Resolved::Int(i) => Value::from(i),
            Resolved::Uint(u) => Value::from(u),
            Resolved::Float(f) => float_to_json(f).ok_or_else(|| {
                let name = if f.is_nan() {
                    ".nan"
                } else if f > 0.0 {
                    ".inf"
                } else {
                    "-.inf"
                };
                format!("{name} cannot be written as JSON (Kubernetes refuses the document)")
            })?,
            Resolved::Str(s) => Value::String(s),
        })
    }

    /// The JSON object key for a mapping key.
    pub(crate) fn into_key(self) -> Result<String, String> {
        match self {
            Resolved::Str(s) => Ok(s),
            Resolved::Bool(b) => Ok(b.to_string()),
            Resolved::Int(i) => Ok(i.to_string()),
            Resolved::Float(f) => Ok(float32_key(f)),
            Resolved::Null => Err("a mapping key cannot be null".to_string()),
            Resolved::Uint(u) => Err(format!(
                "a mapping key cannot be an integer above 9223372036854775807 ({u})"
            )),
        }
    }
}

/// The shortest decimal digits of a positive finite float and the exponent of the first digit:
/// 1234.5 is ("12345", 3).
fn shortest_digits(formatted_exp: &str) -> Option<(String, i32)> {
    let (mantissa, exponent) = formatted_exp.split_once('e')?;
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    Some((digits, exponent.parse().ok()?))
}

/// A finite float as JSON, the way Go writes it and a JSON reader reads it back: Go writes
/// `|f|` in [1e-6, 1e21) without an exponent, so an integral one has no `.` and reads back as
/// an integer (as an `i64`, else a `u64`, else, beyond both, a float).
fn float_to_json(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f == 0.0 {
        // Go writes -0 for negative zero, which reads back as the float -0.
        return Some(if f.is_sign_negative() {
            Value::Number(Number::from_f64(f)?)
        } else {
            Value::from(0)
        });
    }
    let float = || Number::from_f64(f).map(Value::Number);
    let magnitude = f.abs();
    if !(1e-6..1e21).contains(&magnitude) {
        return float();
    }
    let Some((digits, exponent)) = shortest_digits(&format!("{magnitude:e}")) else {
        return float();
    };
    let zeros = i64::from(exponent) + 1 - digits.len() as i64;
    if zeros < 0 {
        return float();
    }
    let sign = if f < 0.0 { "-" } else { "" };
    let text = format!("{sign}{digits}{}", "0".repeat(usize::try_from(zeros).ok()?));
    if let Ok(i) = text.parse::<i64>() {
        return Some(Value::from(i));
    }
    if let Ok(u) = text.parse::<u64>() {
        return Some(Value::from(u));
    }
    float()
}

/// A float mapping key: Go's `strconv.FormatFloat(f, 'g', -1, 32)`, i.e. the shortest digits of
/// the float32 nearest to `f`, with an exponent (`e+06`, `e-05`) below 1e-4 or from 1e6 up.
fn float32_key(f: f64) -> String {
    // The nearest float32 is what is printed (1e40 overflows to infinity).
    #[allow(clippy::cast_possible_truncation)]
    let g = f as f32;
    if g.is_nan() {
        return ".nan".to_string();
    }
    if g.is_infinite() {
        return if g > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    let sign = if g.is_sign_negative() { "-" } else { "" };
    if g == 0.0 {
        return format!("{sign}0");
    }
    let Some((digits, exponent)) = shortest_digits(&format!("{:e}", g.abs())) else {
        return g.to_string();
    };
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let point = if rest.is_empty() { "" } else { "." };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{point}{rest}e{exp_sign}{:02}", exponent.abs());
    }
    if exponent < 0 {
        let zeros = "0".repeat(usize::try_from(-exponent - 1).unwrap_or(0));
        return format!("{sign}0.{zeros}{digits}");
    }
    let int_len = usize::try_from(exponent).unwrap_or(0) + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        let (int, fraction) = digits.split_at(int_len);
        format!("{sign}{int}.{fraction}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn plain(text: &str) -> Value {
        resolve(Cow::Borrowed(text), true, None)
            .and_then(Resolved::into_json)
            .unwrap_or_else(|e| json!({ "error": e }))
    }

    fn key(text: &str) -> String {
        resolve(Cow::Borrowed(text), true, None)
            .and_then(Resolved::into_key)
            .unwrap_or_else(|e| format!("error: {e}"))
    }

    #[test]
    fn integers_take_go_base_prefixes_and_underscores() {
        for (text, want) in [
            ("0755", json!(493)),
            ("0o755", json!(493)),
            ("0x1F", json!(31)),
            ("-0x1F", json!(-31)),
            ("0b101", json!(5)),
            ("0b-101", json!(-5)),
            ("1_000", json!(1000)),
            ("+_1", json!(1)),
            ("_1", json!("_1")),
            ("08", json!(8)),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("0x", json!("0x")),
            ("9223372036854775808", json!(9_223_372_036_854_775_808u64)),
            ("-9223372036854775808", json!(i64::MIN)),
        ] {
            assert_eq!(plain(text), want, "{text}");
        }
    }

    #[test]
    fn floats_read_back_as_go_writes_them() {
        for (text, want) in [
            ("1e3", json!(1000)),
            ("1.000001e+08", json!(100_000_100)),
            ("1.", json!(1)),
            (".5", json!(0.5)),
            (".5_5", json!(0.55)),
            ("._5", json!("._5")),
            ("1e21", json!(1e21)),
            ("1e-7", json!(1e-7)),
            ("1e400", json!("1e400")),
            ("18446744073709551616", json!(18_446_744_073_709_552_000f64)),
            ("-9223372036854775809", json!(-9_223_372_036_854_776_000f64)),
        ] {
            assert_eq!(plain(text), want, "{text}");
        }
        assert!(plain(".inf").get("error").is_some());
        assert!(plain(".NaN").get("error").is_some());
    }

    #[test]
    fn yaml_1_1_words() {
        for (text, want) in [
            ("yes", json!(true)),
            ("Y", json!(true)),
            ("on", json!(true)),
            ("OFF", json!(false)),
            ("n", json!(false)),
            ("yEs", json!("yEs")),
            ("~", Value::Null),
            ("NULL", Value::Null),
            ("nULL", json!("nULL")),
            ("", Value::Null),
            ("1:20", json!("1:20")),
            ("2001-12-14", json!("2001-12-14")),
        ] {
            assert_eq!(plain(text), want, "{text}");
        }
    }

    #[test]
    fn keys_print_as_go_prints_them() {
        for (text, want) in [
            ("on", "true"),
            ("n", "false"),
            ("0x10", "16"),
            ("1.5", "1.5"),
            ("1e3", "1000"),
            ("1e6", "1e+06"),
            ("123456789.0", "1.2345679e+08"),
            ("1e-5", "1e-05"),
            ("0.0001", "0.0001"),
            ("-0.0", "-0"),
            (".inf", ".inf"),
            ("1e40", ".inf"),
        ] {
            assert_eq!(key(text), want, "{text}");
        }
        assert!(key("~").starts_with("error"));
        assert!(key("18446744073709551615").starts_with("error"));
    }

    #[test]
    fn tags_resolve_or_fail() {
        let core = |name: &'static str| Some((YAML_TAG_PREFIX, name));
        let tagged = |text: &str, plain: bool, tag| {
            resolve(Cow::Borrowed(text), plain, tag).and_then(Resolved::into_json)
        };
        assert_eq!(tagged("12", false, core("int")), Ok(json!(12)));
        assert_eq!(tagged("1", true, core("float")), Ok(json!(1)));
        assert_eq!(tagged("12", true, core("str")), Ok(json!("12")));
        assert_eq!(tagged("aGVsbG8=", true, core("binary")), Ok(json!("hello")));
        assert_eq!(
            tagged("2001-12-14", true, core("timestamp")),
            Ok(json!("2001-12-14"))
        );
        assert_eq!(tagged("3", true, Some(("!", "thing"))), Ok(json!("3")));
        assert!(tagged("abc", true, core("int")).is_err());
        assert!(tagged("!!", true, core("binary")).is_err());
        assert!(tagged("123", true, core("timestamp")).is_err());
        assert!(tagged("18446744073709551615", true, core("float")).is_err());
        assert!(is_merge_key("<<", true, None));
        assert!(is_merge_key("<<", true, core("merge")));
        assert!(!is_merge_key("<<", false, None));
        assert!(!is_merge_key("<<", true, core("str")));
    }
}
