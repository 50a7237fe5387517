//! Argo CD's handling of objects being deleted: a `deletionTimestamp` as Go's `metav1.Time` accepts it, and the hook finalizer that keeps a finished hook assessable (`health.go`).

use serde_json::Value;

use super::HOOK_FINALIZER;
use super::util::*;

/// `deletionTimestamp` set and no hook finalizer (spec §5.2, `health.go`).
///
/// Like the Kubernetes client, a timestamp counts only if it is a valid RFC 3339 time that is not
/// Go's zero time; anything else reads as "not being deleted". The finalizer list is read like
/// `GetFinalizers`: a list with a non-string entry reads as no finalizers.
pub(super) fn is_pending_deletion(obj: &Value) -> bool {
    is_deleting(obj) && !has_hook_finalizer(obj)
}

/// The object has a set `metadata.deletionTimestamp` (it is being deleted).
pub fn is_deleting(obj: &Value) -> bool {
    get(obj, &["metadata", "deletionTimestamp"])
        .and_then(Value::as_str)
        .is_some_and(is_set_rfc3339_time)
}

/// The object carries [`HOOK_FINALIZER`] (a finalizer list with a non-string entry reads as none,
/// as in Go).
pub fn has_hook_finalizer(obj: &Value) -> bool {
    let Some(finalizers) = get(obj, &["metadata", "finalizers"]).and_then(Value::as_array) else {
        return false;
    };
    finalizers.iter().all(Value::is_string)
        && finalizers
            .iter()
            .any(|f| f.as_str() == Some(HOOK_FINALIZER))
}

/// True for a valid RFC 3339 time (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`, as Go's
/// `time.Parse(time.RFC3339, …)` accepts it) that is not the zero instant
/// `0001-01-01T00:00:00Z`, which `metav1.Time` treats as unset.
pub(super) fn is_set_rfc3339_time(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        digits.iter().try_fold(0i64, |acc, &d| {
            d.is_ascii_digit().then(|| acc * 10 + i64::from(d - b'0'))
        })
    };
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0, 4),
        num(5, 2),
        num(8, 2),
        num(11, 2),
        num(14, 2),
        num(17, 2),
    ) else {
        return false;
    };
    if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
        return false;
    }
    if !(1..=12).contains(&month)
        || day < 1
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return false;
    }
    // Optional fraction: '.' or ',' followed by at least one digit.
    let mut at = 19;
    let mut fraction_is_zero = true;
    if matches!(b.get(at), Some(b'.' | b',')) {
        let digits = b[at + 1..]
            .iter()
            .take_while(|d| d.is_ascii_digit())
            .count();
        if digits == 0 {
            return false;
        }
        fraction_is_zero = b[at + 1..at + 1 + digits].iter().all(|&d| d == b'0');
        at += 1 + digits;
    }
    let offset_seconds = match b.get(at..) {
        Some(b"Z") => 0,
        Some(rest) if rest.len() == 6 && matches!(rest[0], b'+' | b'-') && rest[3] == b':' => {
            let (Some(oh), Some(om)) = (num(at + 1, 2), num(at + 4, 2)) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let magnitude = oh * 3600 + om * 60;
            if rest[0] == b'-' {
                -magnitude
            } else {
                magnitude
            }
        }
        _ => return false,
    };
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    let zero_instant = days_from_civil(1, 1, 1) * 86_400;
    !(fraction_is_zero && local - offset_seconds == zero_instant)
}

pub(super) fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm); only
/// used to recognise the zero instant whatever offset it is written with.
pub(super) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}
