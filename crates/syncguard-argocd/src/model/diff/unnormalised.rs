//! What Argo CD's re-marshalling would have normalised, for a built-in object it compares raw
//! (one whose manifest does not decode into its Go type): resource quantities, which the API
//! server stores in canonical form (`1000m` → `1`, `0.5Gi` → `512Mi`, the number `1` → the
//! string `"1"`).

use serde_json::Value;

/// `(pointer, stored value)` of every container resource quantity not written canonically.
pub fn fields(raw: &Value) -> Vec<(String, Option<Value>)> {
    let mut out = Vec::new();
    for base in [
        "/spec/template/spec",
        "/spec/jobTemplate/spec/template/spec",
        "/spec",
    ] {
        let Some(spec) = raw.pointer(base) else {
            continue;
        };
        for group in ["containers", "initContainers"] {
            for (i, c) in spec[group].as_array().into_iter().flatten().enumerate() {
                for kind in ["limits", "requests"] {
                    for (name, q) in c["resources"][kind].as_object().into_iter().flatten() {
                        if let Some(canonical) = canonical(q)
                            && q.as_str() != Some(canonical.as_str())
                        {
                            out.push((
                                format!(
                                    "{base}/{group}/{i}/resources/{kind}/{}",
                                    name.replace('~', "~0").replace('/', "~1")
                                ),
                                Some(Value::from(canonical)),
                            ));
                        }
                    }
                }
            }
        }
        if base == "/spec" {
            break;
        }
    }
    out
}

const DECIMAL: &[(&str, i32)] = &[
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];
const BINARY: &[(&str, u32)] = &[
    ("Ki", 10),
    ("Mi", 20),
    ("Gi", 30),
    ("Ti", 40),
    ("Pi", 50),
    ("Ei", 60),
];

/// The canonical form Kubernetes stores `q` in, when syncguard can compute it exactly (`None`
/// for forms it does not handle: exponents, more than 18 significant digits).
pub fn canonical(q: &Value) -> Option<String> {
    let text = match q {
        Value::String(s) => s.trim().to_string(),
        Value::Number(n) => n.to_string(),
        _ => return None,
    };
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let (int, frac) = number
        .trim_start_matches('+')
        .split_once('.')
        .unwrap_or((number.trim_start_matches('+'), ""));
    if int.starts_with('-') || int.len() + frac.len() > 18 || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let digits: i128 = format!("{int}{frac}").parse().ok()?;
    let scale = frac.len() as i32; // value = digits * 10^-scale * unit
    if let Some((_, pow)) = BINARY.iter().find(|(s, _)| *s == suffix) {
        // bytes = digits * 2^pow / 10^scale
        let bytes_num = digits.checked_mul(1i128 << pow)?;
        let div = 10i128.checked_pow(scale as u32)?;
        if bytes_num % div != 0 {
            return None;
        }
        let bytes = bytes_num / div;
        if bytes == 0 {
            return Some("0".into());
        }
        for (s, p) in BINARY.iter().rev() {
            if bytes % (1i128 << p) == 0 {
                return Some(format!("{}{s}", bytes / (1i128 << p)));
            }
        }
        return Some(bytes.to_string());
    }
    let (_, exp) = DECIMAL.iter().find(|(s, _)| *s == suffix)?;
    // value = digits * 10^(exp - scale); canonical: the largest multiple-of-3 exponent (>= -9)
    // with an integer mantissa.
    let mut mantissa = digits;
    let mut e = exp - scale;
    if mantissa == 0 {
        return Some("0".into());
    }
    while mantissa % 10 == 0 {
        mantissa /= 10;
        e += 1;
    }
    // bring e down to a multiple of 3
    while e.rem_euclid(3) != 0 {
        mantissa = mantissa.checked_mul(10)?;
        e -= 1;
    }
    if e < -9 {
        return None;
    }
    let e = e.min(18);
    let suffix = DECIMAL.iter().find(|(_, x)| *x == e).map(|(s, _)| *s)?;
    Some(format!("{mantissa}{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::canonical;
    use serde_json::json;

    #[test]
    fn quantities_take_the_form_the_api_server_stores() {
        for (given, stored) in [
            (json!("1000m"), "1"),
            (json!("1500m"), "1500m"),
            (json!("0.5"), "500m"),
            (json!(1), "1"),
            (json!("2000"), "2k"),
            (json!("0.5Gi"), "512Mi"),
            (json!("1024Mi"), "1Gi"),
            (json!("1536Mi"), "1536Mi"),
            (json!("250m"), "250m"),
            (json!("128974848"), "128974848"),
            (json!("1G"), "1G"),
        ] {
            assert_eq!(canonical(&given).as_deref(), Some(stored), "{given}");
        }
        assert_eq!(canonical(&json!("1e3")), None);
    }
}
