//! Durations as people write them in flags and annotations: `90s`, `20m`, `1h30m`.

/// Parses a duration with units: `500ms`, `90s`, `20m`, `1h30m`, `2d`. A bare number is
/// refused: "20" could mean seconds or minutes, and guessing wrong silently is worse.
pub fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty duration; use e.g. 90s, 20m, 1h".into());
    }
    let mut total = std::time::Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!("{s:?}: expected a number, e.g. 90s, 20m, 1h30m"));
        }
        let n: u64 = rest[..digits]
            .parse()
            .map_err(|_| format!("{s:?}: number too large"))?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let part = match unit {
            "ms" => std::time::Duration::from_millis(n),
            "s" => std::time::Duration::from_secs(n),
            "m" => std::time::Duration::from_secs(n.saturating_mul(60)),
            "h" => std::time::Duration::from_secs(n.saturating_mul(3600)),
            "d" => std::time::Duration::from_secs(n.saturating_mul(86400)),
            "" => return Err(format!("{s:?}: missing unit (ms, s, m, h, d), e.g. {n}m")),
            other => {
                return Err(format!(
                    "{s:?}: unknown unit {other:?} (use ms, s, m, h, d)"
                ));
            }
        };
        total = total.saturating_add(part);
    }
    Ok(total)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn durations_need_a_unit_and_add_up() {
        assert_eq!(parse_duration("20m"), Ok(Duration::from_secs(1200)));
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2d"), Ok(Duration::from_secs(172_800)));
        assert!(parse_duration("20").unwrap_err().contains("missing unit"));
        assert!(parse_duration("5y").unwrap_err().contains("unknown unit"));
        assert!(parse_duration("m").is_err());
    }
}
