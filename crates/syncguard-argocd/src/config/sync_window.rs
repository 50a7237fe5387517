//! One sync window of an AppProject (`spec.syncWindows[]`) and how Argo CD reads it:
//! `pkg/apis/application/v1alpha1/types.go` (`SyncWindow.Validate`, `SyncWindows.Matches`,
//! `Active`, `InactiveAllows`, `CanSync`), robfig/cron v3 for the schedule and Go's
//! `time.ParseDuration` / `time.LoadLocation` for the duration and the time zone.
//!
//! - **Schedule**: `cron.NewParser(Minute | Hour | Dom | Month | Dow)` — exactly five fields, no
//!   seconds, no descriptors (`@daily` is refused: "parser does not accept descriptors"),
//!   day-of-week 0–6 (7 is refused), names `jan`–`dec` and `sun`–`sat`, `*`/`?`, ranges, steps
//!   and lists; a `TZ=`/`CRON_TZ=` prefix names a zone.
//! - **Duration**: Go durations (`1h30m`, `90m`; `1d` is refused: no day unit).
//! - **Time zone**: an IANA name (or `UTC`, `Local`, empty). Argo CD does *not* refuse an unknown
//!   one: `Validate` logs "Invalid time zone … Using UTC" and the window runs in UTC (read from
//!   2.2.0, argo-cd#7442; before, the field does not exist).
//! - **Matching** (`Matches`): the `applications`, `clusters` and `namespaces` lists are globs
//!   (no negation, no separators) and are ORed — one matching list is enough — unless
//!   `andOperator: true` (from 3.0.0, argo-cd#16846), when every list that is set must match.
//!   `clusters` match the Application's `destination.name` or `destination.server` as written.
//! - **Verdict** (`CanSync`): an active deny window refuses (a manual sync passes when every
//!   active deny window has `manualSync`); otherwise an active allow window permits; otherwise,
//!   when the project has allow windows for the Application, none of them open, the sync is
//!   refused (manual syncs pass when all of those have `manualSync`); with no window, syncs pass.
//!   A window whose schedule or duration does not parse makes `CanSync` fail for every
//!   Application it matches: "invalid sync windows: cannot parse schedule …", so nothing syncs.
//!
//! The API server's project validation (`AppProject.ValidateProject`, used by `argocd proj`
//! and the UI) refuses a window with a bad kind, schedule or duration, with no
//! applications/namespaces/clusters, or a duplicate; an AppProject applied as a manifest
//! (kubectl, an Argo CD Application) is not validated, and its windows reach the controller as
//! written.

use std::str::FromStr;

use chrono::{
    DateTime, Datelike, Duration as ChronoDuration, NaiveDate, NaiveDateTime, Timelike, Utc,
};
use serde_json::{Value, json};

use super::project::glob::argo_glob_match;
use super::{Fields, Notes};
use crate::model::version::ArgoCdVersion;

/// One `spec.syncWindows[]` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncWindow {
    /// JSON pointer of the window in its AppProject (`/spec/syncWindows/0`).
    pub pointer: String,
    /// `kind`: `allow` or `deny` (anything else is refused by the API and ignored by the
    /// controller).
    pub kind: String,
    /// `schedule`: when the window opens (cron).
    pub schedule: String,
    /// `duration`: how long it stays open (Go duration).
    pub duration: String,
    /// `applications`: Application name globs.
    pub applications: Vec<String>,
    /// `namespaces`: destination namespace globs.
    pub namespaces: Vec<String>,
    /// `clusters`: destination server or name globs.
    pub clusters: Vec<String>,
    /// `manualSync`: manual syncs pass a deny (or a closed allow) window.
    pub manual_sync: bool,
    /// `timeZone` (empty: UTC).
    pub time_zone: String,
    /// `andOperator`: every list that is set must match (3.0+).
    pub and_operator: bool,
    /// `description`.
    pub description: String,
    /// `syncOverrun` (3.5+): a sync under way may run on past the window's edge.
    pub sync_overrun: bool,
}

/// Which match list of a window.
pub const LISTS: [&str; 3] = ["applications", "clusters", "namespaces"];

/// An Application as the windows of its project see it: its name and `spec.destination` as
/// written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WindowTarget {
    /// `metadata.name`.
    pub name: String,
    /// `spec.destination.server`.
    pub server: String,
    /// `spec.destination.name`.
    pub cluster_name: String,
    /// `spec.destination.namespace`.
    pub namespace: String,
}

impl SyncWindow {
    /// Reads the window `v` found at `at`.
    pub fn read(v: &Value, at: &str, notes: &mut Notes) -> SyncWindow {
        let mut f = Fields::of(Some(v), at, notes);
        let w = SyncWindow {
            pointer: at.to_string(),
            kind: f.string("kind", notes),
            schedule: f.string("schedule", notes),
            duration: f.string("duration", notes),
            applications: f.strings("applications", notes),
            namespaces: f.strings("namespaces", notes),
            clusters: f.strings("clusters", notes),
            manual_sync: f.bool("manualSync", notes).unwrap_or(false),
            time_zone: f.string("timeZone", notes),
            and_operator: f.bool("andOperator", notes).unwrap_or(false),
            description: f.string("description", notes),
            sync_overrun: f.bool("syncOverrun", notes).unwrap_or(false),
        };
        f.finish(notes);
        w
    }

    /// The window as written, in snake case (`input.argocd.config.projects.<p>.sync_windows`).
    pub fn to_value(&self) -> Value {
        json!({
            "kind": self.kind,
            "schedule": self.schedule,
            "duration": self.duration,
            "applications": self.applications,
            "namespaces": self.namespaces,
            "clusters": self.clusters,
            "manual_sync": self.manual_sync,
            "time_zone": self.time_zone,
            "and_operator": self.and_operator,
        })
    }

    /// A match list by name (one of [`LISTS`]).
    pub fn list(&self, name: &str) -> &[String] {
        match name {
            "applications" => &self.applications,
            "clusters" => &self.clusters,
            "namespaces" => &self.namespaces,
            _ => &[],
        }
    }

    /// `kind` is `allow` or `deny`.
    pub fn kind_valid(&self) -> bool {
        self.kind == "allow" || self.kind == "deny"
    }

    /// Why Argo CD cannot parse the schedule (robfig/cron's message), if it cannot.
    pub fn schedule_error(&self) -> Option<String> {
        parse_schedule(&self.schedule).err()
    }

    /// Why Argo CD cannot parse the duration (Go's message), if it cannot.
    pub fn duration_error(&self) -> Option<String> {
        parse_go_duration(&self.duration).err()
    }

    /// The duration parses but is zero or negative: the window is never open.
    pub fn never_open(&self) -> bool {
        parse_go_duration(&self.duration).is_ok_and(|d| d <= 0)
    }

    /// The schedule parses but never fires (`0 0 30 2 *`): robfig/cron finds no start within
    /// five years and returns Go's zero time, which Argo CD takes as "started long ago", so the
    /// window is open all the time.
    pub fn never_fires(&self) -> bool {
        let from = NaiveDate::from_ymd_opt(2024, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0));
        parse_schedule(&self.schedule)
            .ok()
            .zip(from)
            .is_some_and(|(s, from)| s.next(from).is_none())
    }

    /// `timeZone` is set to a name Go's `time.LoadLocation` does not know (Argo CD then uses
    /// UTC).
    pub fn time_zone_unknown(&self) -> bool {
        !time_zone_known(&self.time_zone)
    }

    /// `SyncWindow.Validate` (without the time zone, which it only warns about): `None` when
    /// valid.
    pub fn validate(&self) -> Option<String> {
        if !self.kind_valid() {
            return Some(format!(
                "kind '{}' mismatch: can only be allow or deny",
                self.kind
            ));
        }
        if let Some(e) = self.schedule_error() {
            return Some(format!("cannot parse schedule '{}': {e}", self.schedule));
        }
        if let Some(e) = self.duration_error() {
            return Some(format!("cannot parse duration '{}': {e}", self.duration));
        }
        if self.description.chars().count() > 255 {
            return Some("description must not exceed 255 characters".into());
        }
        None
    }

    /// `andOperator` as `version` reads it (the field exists from 3.0.0).
    pub fn and_in_force(&self, version: ArgoCdVersion) -> bool {
        self.and_operator && version.at_least(3, 0)
    }

    /// One window of `SyncWindows.Matches`: does it apply to `app`?
    pub fn matches(&self, app: &WindowTarget, version: ArgoCdVersion) -> bool {
        let and = self.and_in_force(version);
        let glob = |p: &str, v: &str| argo_glob_match(p, v, false, &[]);
        let mut checks: Vec<bool> = Vec::new();
        if !self.applications.is_empty() {
            checks.push(self.applications.iter().any(|a| glob(a, &app.name)));
        }
        if !self.clusters.is_empty() {
            checks.push(self.clusters.iter().any(|c| {
                (!app.cluster_name.is_empty() && glob(c, &app.cluster_name))
                    || (!app.server.is_empty() && glob(c, &app.server))
            }));
        }
        if !self.namespaces.is_empty() {
            checks.push(self.namespaces.iter().any(|n| glob(n, &app.namespace)));
        }
        if and {
            !checks.is_empty() && checks.iter().all(|c| *c)
        } else {
            checks.iter().any(|c| *c)
        }
    }

    /// Lists holding a pattern that matches every Application (`*`, `**`): in a window read
    /// with OR, any one of them makes the window apply to every Application of the project.
    pub fn match_all_lists(&self) -> Vec<&'static str> {
        LISTS
            .into_iter()
            .filter(|l| self.list(l).iter().any(|p| matches_everything(p)))
            .collect()
    }

    /// The window applies to every Application of the project, as `version` reads it: with OR,
    /// one list matches everything; with AND, every list that is set does.
    pub fn covers_every_application(&self, version: ArgoCdVersion) -> bool {
        let all = self.match_all_lists();
        let set: Vec<&str> = LISTS
            .into_iter()
            .filter(|l| !self.list(l).is_empty())
            .collect();
        if self.and_in_force(version) {
            !set.is_empty() && set.iter().all(|l| all.contains(l))
        } else {
            !all.is_empty()
        }
    }

    /// Whether the window is open at `now` (`SyncWindow.active`): the next start after
    /// `now - duration` is before `now`, both shifted by the time zone's offset at `now` (Argo CD
    /// takes the offset of the current wall clock; an unknown zone is UTC).
    pub fn active_at(&self, now: DateTime<Utc>) -> Result<bool, String> {
        let schedule = parse_schedule(&self.schedule)
            .map_err(|e| format!("cannot parse schedule '{}': {e}", self.schedule))?;
        let nanos = parse_go_duration(&self.duration)
            .map_err(|e| format!("cannot parse duration '{}': {e}", self.duration))?;
        let duration = ChronoDuration::nanoseconds(nanos);
        let offset = zone_offset_seconds(&self.time_zone, now);
        let shifted = now.naive_utc() + ChronoDuration::seconds(offset);
        // No start within five years: Go's zero time, which is before now, so "open".
        let next = schedule.next(shifted - duration);
        Ok(next.is_none_or(|n| n < shifted))
    }
}

/// Which lists of a window do not match everything while another does: with OR the wildcard
/// makes them meaningless (`applications: ['*']` next to `namespaces: [prod]` applies the window
/// to every Application, not to those in `prod`).
pub fn defeated_lists(w: &SyncWindow) -> Vec<&'static str> {
    let all = w.match_all_lists();
    if all.is_empty() {
        return Vec::new();
    }
    LISTS
        .into_iter()
        .filter(|l| !w.list(l).is_empty() && !all.contains(l))
        .collect()
}

/// A glob (no negation, no separators) that matches every value: made only of `*`.
fn matches_everything(p: &str) -> bool {
    !p.is_empty() && p.chars().all(|c| c == '*')
}

/// `SyncWindows.CanSync` for the windows that match one Application, given which of them are
/// open: `Err` when one of them does not parse (Argo CD then refuses every sync).
pub fn can_sync(windows: &[&SyncWindow], now: DateTime<Utc>, manual: bool) -> Result<bool, String> {
    if windows.is_empty() {
        return Ok(true);
    }
    let mut active = Vec::new();
    for w in windows {
        if w.active_at(now)
            .map_err(|e| format!("invalid sync windows: {e}"))?
        {
            active.push(*w);
        }
    }
    let denies: Vec<&&SyncWindow> = active.iter().filter(|w| w.kind == "deny").collect();
    if !denies.is_empty() {
        return Ok(manual && denies.iter().all(|w| w.manual_sync));
    }
    if active.iter().any(|w| w.kind == "allow") {
        return Ok(true);
    }
    let inactive_allows: Vec<&&SyncWindow> = windows
        .iter()
        .filter(|w| w.kind == "allow" && !active.iter().any(|a| std::ptr::eq(*a, **w)))
        .collect();
    if !inactive_allows.is_empty() {
        return Ok(manual && inactive_allows.iter().all(|w| w.manual_sync));
    }
    Ok(true)
}

// ---- time zones (Go time.LoadLocation) ----

/// Go's `time.LoadLocation` succeeds: empty, `UTC`, `Local`, or a name of the IANA time zone
/// database (case-sensitive, as the zoneinfo files of Argo CD's image are).
pub fn time_zone_known(name: &str) -> bool {
    matches!(name, "" | "UTC" | "Local") || chrono_tz::Tz::from_str(name).is_ok()
}

fn zone_offset_seconds(name: &str, now: DateTime<Utc>) -> i64 {
    use chrono::Offset;
    match chrono_tz::Tz::from_str(name) {
        Ok(tz) => i64::from(now.with_timezone(&tz).offset().fix().local_minus_utc()),
        Err(_) => 0,
    }
}

// ---- Go time.ParseDuration ----

/// Go's `time.ParseDuration`, in nanoseconds, with Go's error text.
pub fn parse_go_duration(s: &str) -> Result<i64, String> {
    let orig = s;
    let invalid = || format!("time: invalid duration \"{orig}\"");
    let mut s = s;
    let mut neg = false;
    if let Some(c) = s.chars().next()
        && (c == '-' || c == '+')
    {
        neg = c == '-';
        s = &s[1..];
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while !s.is_empty() {
        let first = s.as_bytes().first().copied().unwrap_or(0);
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        // [0-9]*
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut v: u64 = 0;
        for b in s[..digits].bytes() {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(b - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
        }
        let pre = digits > 0;
        s = &s[digits..];
        // (\.[0-9]*)?
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            s = rest;
            let n = s.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for b in s[..n].bytes() {
                if overflow {
                    continue;
                }
                if f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(b - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            post = n > 0;
            s = &s[n..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        // unit: up to the next '.' or digit
        let i = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        if i == 0 {
            return Err(format!("time: missing unit in duration \"{orig}\""));
        }
        let u = &s[..i];
        s = &s[i..];
        let unit: u64 = match u {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60 * 1_000_000_000,
            "h" => 3_600 * 1_000_000_000,
            _ => {
                return Err(format!("time: unknown unit \"{u}\" in duration \"{orig}\""));
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            let frac = (f as f64 * (unit as f64 / scale)) as u64;
            v += frac;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        // d <= 1<<63: -(d) fits in i64.
        return Ok(0i64.wrapping_sub_unsigned(d));
    }
    i64::try_from(d).map_err(|_| invalid())
}

// ---- robfig/cron v3 ----

/// A parsed cron schedule (robfig/cron `SpecSchedule`), as bit sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
}

const STAR_BIT: u64 = 1 << 63;

struct Bounds {
    min: u32,
    max: u32,
    names: &'static [(&'static str, u32)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

/// `cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow).Parse(spec)`,
/// with robfig/cron's error text.
pub fn parse_schedule(spec: &str) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        // Go slices spec[eq+1:i] with i the first space: without one it panics; say so.
        let Some(i) = spec.find(' ') else {
            return Err("a TZ= prefix without a schedule after it (robfig/cron panics)".into());
        };
        let eq = spec.find('=').unwrap_or(0);
        let zone = spec.get(eq + 1..i).unwrap_or_default();
        if !time_zone_known(zone) {
            return Err(format!(
                "provided bad location {zone}: unknown time zone {zone}"
            ));
        }
        spec = spec[i..].trim();
    }
    if spec.starts_with('@') {
        return Err(format!("parser does not accept descriptors: {spec}"));
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    let get = |i: usize, b: &Bounds| field(fields.get(i).copied().unwrap_or_default(), b);
    Ok(Schedule {
        minute: get(0, &MINUTES)?,
        hour: get(1, &HOURS)?,
        dom: get(2, &DOM)?,
        month: get(3, &MONTHS)?,
        dow: get(4, &DOW)?,
    })
}

fn field(field: &str, b: &Bounds) -> Result<u64, String> {
    let mut bits = 0;
    for expr in field.split(',').filter(|e| !e.is_empty()) {
        bits |= range(expr, b)?;
    }
    Ok(bits)
}

fn range(expr: &str, b: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let first = range_and_step.first().copied().unwrap_or_default();
    let low_and_high: Vec<&str> = first.split('-').collect();
    let single = low_and_high.len() == 1;
    let (start, mut end, mut extra);
    let low = low_and_high.first().copied().unwrap_or_default();
    if low == "*" || low == "?" {
        start = b.min;
        end = b.max;
        extra = STAR_BIT;
    } else {
        start = int_or_name(low, b.names)?;
        end = match low_and_high.as_slice() {
            [_] => start,
            [_, hi] => int_or_name(hi, b.names)?,
            _ => return Err(format!("too many hyphens: {expr}")),
        };
        extra = 0;
    }
    let step = match range_and_step.as_slice() {
        [_] => 1,
        [_, step] => {
            let step = must_int(step)?;
            if single {
                end = b.max;
            }
            if step > 1 {
                extra = 0;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < b.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            b.min
        ));
    }
    if end > b.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            b.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    let mut bits = 0u64;
    let mut i = start;
    while i <= end {
        bits |= 1 << i;
        i += step;
    }
    Ok(bits | extra)
}

fn int_or_name(expr: &str, names: &[(&str, u32)]) -> Result<u32, String> {
    let lower = expr.to_lowercase();
    if let Some((_, n)) = names.iter().find(|(name, _)| *name == lower) {
        return Ok(*n);
    }
    must_int(expr)
}

/// Go's `strconv.Atoi` (an optional sign, decimal digits), then "negative number" refused.
fn must_int(expr: &str) -> Result<u32, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    let parsed = if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        None
    } else {
        expr.parse::<i64>().ok()
    };
    match parsed {
        None => Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing \"{expr}\": invalid syntax"
        )),
        Some(n) if n < 0 => Err(format!("negative number ({n}) not allowed: {expr}")),
        // Anything above 63 is out of every field's range anyway.
        Some(n) => Ok(u32::try_from(n.min(1000)).unwrap_or(1000)),
    }
}

impl Schedule {
    /// `SpecSchedule.Next` in UTC: the first activation strictly after `t` (whole seconds),
    /// or `None` when none comes within five years.
    pub fn next(&self, t: NaiveDateTime) -> Option<NaiveDateTime> {
        let bit = |set: u64, v: u32| set & (1u64 << v) != 0;
        // The upcoming second.
        let mut t = t.with_nanosecond(0)? + ChronoDuration::seconds(1);
        let mut added = false;
        let year_limit = t.year() + 5;
        'wrap: loop {
            if t.year() > year_limit {
                return None;
            }
            while !bit(self.month, t.month()) {
                if !added {
                    added = true;
                    t = NaiveDate::from_ymd_opt(t.year(), t.month(), 1)?.and_hms_opt(0, 0, 0)?;
                }
                t = add_month(t)?;
                if t.month() == 1 {
                    continue 'wrap;
                }
            }
            while !self.day_matches(t) {
                if !added {
                    added = true;
                    t = t.date().and_hms_opt(0, 0, 0)?;
                }
                t += ChronoDuration::days(1);
                if t.day() == 1 {
                    continue 'wrap;
                }
            }
            while !bit(self.hour, t.hour()) {
                if !added {
                    added = true;
                    t = t.with_minute(0)?.with_second(0)?;
                }
                t += ChronoDuration::hours(1);
                if t.hour() == 0 {
                    continue 'wrap;
                }
            }
            while !bit(self.minute, t.minute()) {
                if !added {
                    added = true;
                    t = t.with_second(0)?;
                }
                t += ChronoDuration::minutes(1);
                if t.minute() == 0 {
                    continue 'wrap;
                }
            }
            // Seconds: always 0.
            while t.second() != 0 {
                if !added {
                    added = true;
                }
                t += ChronoDuration::seconds(1);
                if t.second() == 0 {
                    continue 'wrap;
                }
            }
            return Some(t);
        }
    }

    fn day_matches(&self, t: NaiveDateTime) -> bool {
        let dom = self.dom & (1u64 << t.day()) != 0;
        let dow = self.dow & (1u64 << t.weekday().num_days_from_sunday()) != 0;
        if self.dom & STAR_BIT != 0 || self.dow & STAR_BIT != 0 {
            dom && dow
        } else {
            dom || dow
        }
    }
}

/// Go's `t.AddDate(0, 1, 0)` from the first of a month.
fn add_month(t: NaiveDateTime) -> Option<NaiveDateTime> {
    let (y, m) = if t.month() == 12 {
        (t.year() + 1, 1)
    } else {
        (t.year(), t.month() + 1)
    };
    // Go normalises an overflowing day (Jan 31 + 1 month = Mar 3).
    let first = NaiveDate::from_ymd_opt(y, m, 1)?;
    Some((first + ChronoDuration::days(i64::from(t.day()) - 1)).and_time(t.time()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn window(kind: &str, schedule: &str, duration: &str) -> SyncWindow {
        SyncWindow {
            kind: kind.into(),
            schedule: schedule.into(),
            duration: duration.into(),
            applications: vec!["*".into()],
            ..SyncWindow::default()
        }
    }

    fn at(h: u32, m: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 11, h, m, 0).unwrap()
    }

    // robfig/cron parser_test.go TestRange / TestParseScheduleErrors, with Argo CD's options.
    #[test]
    fn schedules_parse_as_argo_cd_parses_them() {
        for ok in [
            "* * * * *",
            "0 22 * * *",
            "*/15 8-17 * * mon-fri",
            "0 0 1 1 *",
            "5 4 * * SUN",
            "0 0 ? * *",
            "1,5-7/2,3 * * * *",
            "5/2 * * * *",
            "0 0 31 dec sat",
            "TZ=Europe/Paris 0 22 * * *",
            "  0 22 * *   *  ",
            // Accepted by robfig/cron v3 as Argo CD configures it (checked against it).
            ", * * * *",
            "+5 * * * *",
            "*-5 * * * *",
        ] {
            assert!(parse_schedule(ok).is_ok(), "{ok}: {:?}", parse_schedule(ok));
        }
        let err = |s: &str| parse_schedule(s).unwrap_err();
        assert_eq!(err(""), "empty spec string");
        assert_eq!(err("@daily"), "parser does not accept descriptors: @daily");
        assert!(err("0 0 22 * * *").starts_with("expected exactly 5 fields, found 6"));
        assert!(err("0 22 * *").starts_with("expected exactly 5 fields, found 4"));
        assert!(err("0 0 * * 7").starts_with("end of range (7) above maximum (6)"));
        assert!(err("0 0 0 * *").starts_with("beginning of range (0) below minimum (1)"));
        assert!(err("60 * * * *").contains("above maximum (59)"));
        assert!(err("5--5 * * * *").starts_with("too many hyphens"));
        assert!(err("*//2 * * * *").starts_with("too many slashes"));
        assert!(err("*/0 * * * *").starts_with("step of range should be a positive number"));
        assert!(err("*/-12 * * * *").starts_with("negative number"));
        assert!(err("jan-x * * * *").starts_with("failed to parse int from jan"));
        assert!(err("0 0 * x *").starts_with("failed to parse int from x"));
        assert!(err("5-3 * * * *").starts_with("beginning of range (5) beyond end"));
        assert!(err("TZ=Mars/Olympus 0 * * * *").starts_with("provided bad location"));
        assert!(err("TZ=UTC").contains("panics"));
    }

    // Go time format_test.go parseDurationTests / parseDurationErrorTests.
    #[test]
    fn durations_parse_as_go_parses_them() {
        let ok: &[(&str, i64)] = &[
            ("0", 0),
            ("5s", 5_000_000_000),
            ("30s", 30_000_000_000),
            ("1478s", 1_478_000_000_000),
            ("-5s", -5_000_000_000),
            ("+5s", 5_000_000_000),
            ("-0", 0),
            ("+0", 0),
            ("5.0s", 5_000_000_000),
            ("5.6s", 5_600_000_000),
            ("5.s", 5_000_000_000),
            (".5s", 500_000_000),
            ("1.0s", 1_000_000_000),
            ("1.00s", 1_000_000_000),
            ("1.004s", 1_004_000_000),
            ("100.00100s", 100_001_000_000),
            ("10ns", 10),
            ("11us", 11_000),
            ("12µs", 12_000),
            ("12μs", 12_000),
            ("13ms", 13_000_000),
            ("14s", 14_000_000_000),
            ("15m", 900_000_000_000),
            ("16h", 57_600_000_000_000),
            ("3h30m", 12_600_000_000_000),
            ("10.5s4m", 250_500_000_000),
            ("-2m3.4s", -123_400_000_000),
            ("1h2m3s4ms5us6ns", 3_723_004_005_006),
            ("39h9m14.425s", 140_954_425_000_000),
            ("52763797000ns", 52_763_797_000),
            ("0.3333333333333333333h", 1_200_000_000_000),
            ("9007199254740993ns", 9_007_199_254_740_993),
            ("9223372036854775807ns", i64::MAX),
            ("9223372036854775.807us", i64::MAX),
            ("-9223372036854775808ns", i64::MIN),
            ("0.100000000000000000000h", 360_000_000_000),
        ];
        for (s, want) in ok {
            assert_eq!(parse_go_duration(s), Ok(*want), "{s}");
        }
        for bad in [
            "",
            "3",
            "-",
            "s",
            ".",
            "-.",
            ".s",
            "+.s",
            "1d",
            "\u{1}",
            "\u{1}s",
            "9223372036854775808ns",
            "9223372036854775.808us",
            "-9223372036854775809ns",
        ] {
            assert!(parse_go_duration(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            parse_go_duration("1d").unwrap_err(),
            "time: unknown unit \"d\" in duration \"1d\""
        );
        assert_eq!(
            parse_go_duration("3").unwrap_err(),
            "time: missing unit in duration \"3\""
        );
    }

    #[test]
    fn time_zones_are_iana_names() {
        for ok in [
            "",
            "UTC",
            "Local",
            "Europe/Berlin",
            "America/New_York",
            "Asia/Kolkata",
            "Etc/GMT+5",
        ] {
            assert!(time_zone_known(ok), "{ok}");
        }
        for bad in [
            "CEST",
            "Europe/Munich",
            "europe/berlin",
            "UTC+2",
            "GMT+02:00",
        ] {
            assert!(!time_zone_known(bad), "{bad}");
        }
    }

    // types_test.go TestSyncWindow_Validate.
    #[test]
    fn validate_refuses_kind_schedule_duration() {
        assert_eq!(window("allow", "* * * * *", "1h").validate(), None);
        assert!(
            window("wrong", "* * * * *", "1h")
                .validate()
                .unwrap()
                .starts_with("kind 'wrong' mismatch")
        );
        assert!(
            window("allow", "* * *", "1h")
                .validate()
                .unwrap()
                .starts_with("cannot parse schedule")
        );
        assert!(
            window("allow", "* * * * *", "1000days")
                .validate()
                .unwrap()
                .starts_with("cannot parse duration")
        );
        let mut w = window("allow", "* * * * *", "1h");
        w.time_zone = "Invalid/Zone".into();
        assert_eq!(w.validate(), None, "an unknown zone is only a warning");
        assert!(w.time_zone_unknown());
    }

    fn app() -> WindowTarget {
        // types_test.go newTestApp: test-app, server cluster1, name clusterName, namespace default.
        WindowTarget {
            name: "test-app".into(),
            server: "cluster1".into(),
            cluster_name: "clusterName".into(),
            namespace: "default".into(),
        }
    }

    fn lists(a: &[&str], c: &[&str], n: &[&str], and: bool) -> SyncWindow {
        let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect();
        SyncWindow {
            kind: "allow".into(),
            applications: s(a),
            clusters: s(c),
            namespaces: s(n),
            and_operator: and,
            ..SyncWindow::default()
        }
    }

    // types_test.go TestSyncWindows_Matches and TestSyncWindows_Matches_AND_Operator.
    #[test]
    fn match_lists_are_ored_unless_and_operator() {
        let v3 = ArgoCdVersion::new(3, 0);
        for and in [false, true] {
            for (a, c, n) in [
                (&[][..], &[][..], &["default"][..]),
                (&[], &["cluster1"], &[]),
                (&[], &["clusterName"], &[]),
                (&["test-app"], &[], &[]),
                (&["test-app"], &[], &["default"]),
                (&["test-app"], &["clusterName"], &[]),
                (&[], &["clusterName"], &["default"]),
                (&["test-app"], &["clusterName"], &["default"]),
                (&["test-*"], &[], &[]),
                (&["test-*"], &[], &["default"]),
                (&["test-*"], &["clusterN*"], &[]),
            ] {
                assert!(
                    lists(a, c, n, and).matches(&app(), v3),
                    "{a:?} {c:?} {n:?} and={and}"
                );
            }
            assert!(
                !lists(&[], &[], &[], and).matches(&app(), v3),
                "no list matches nothing"
            );
        }
        // OR: one list is enough; AND: every list set must match.
        let w = lists(&["test-app"], &[], &["prod"], false);
        assert!(w.matches(&app(), v3));
        let w = lists(&["test-app"], &[], &["prod"], true);
        assert!(!w.matches(&app(), v3));
        // andOperator is read from 3.0 only.
        assert!(w.matches(&app(), ArgoCdVersion::new(2, 14)));
    }

    #[test]
    fn a_wildcard_list_covers_every_application_under_or() {
        let v3 = ArgoCdVersion::new(3, 0);
        let w = lists(&["*"], &[], &["prod"], false);
        assert!(w.covers_every_application(v3));
        assert_eq!(defeated_lists(&w), ["namespaces"]);
        let other = WindowTarget {
            name: "x".into(),
            namespace: "dev".into(),
            server: "s".into(),
            ..WindowTarget::default()
        };
        assert!(w.matches(&other, v3));
        let w = lists(&["*"], &[], &["prod"], true);
        assert!(!w.covers_every_application(v3));
        assert!(!w.matches(&other, v3));
        assert!(w.covers_every_application(ArgoCdVersion::new(2, 14)));
        assert!(lists(&["*"], &[], &[], false).covers_every_application(v3));
        assert!(defeated_lists(&lists(&["*"], &[], &[], false)).is_empty());
        assert!(!lists(&["team-*"], &[], &[], false).covers_every_application(v3));
    }

    // types_test.go TestSyncWindow_Active / TestSyncWindows_Active.
    #[test]
    fn windows_open_for_their_duration_after_each_start() {
        let w = window("allow", "* 10 * * *", "2h");
        assert!(w.active_at(at(11, 0)).unwrap());
        assert!(!w.active_at(at(15, 0)).unwrap());
        let w = window("allow", "0 22 * * *", "8h");
        assert!(w.active_at(at(23, 30)).unwrap());
        assert!(w.active_at(at(5, 59)).unwrap());
        assert!(!w.active_at(at(6, 1)).unwrap());
        // The time zone shifts the schedule.
        let mut w = window("allow", "0 10 * * *", "1h");
        w.time_zone = "Asia/Kolkata".into(); // UTC+5:30: 10:00 there is 04:30 UTC
        assert!(w.active_at(at(4, 45)).unwrap());
        assert!(!w.active_at(at(10, 15)).unwrap());
        w.time_zone = "Nowhere/Else".into(); // unknown: UTC
        assert!(w.active_at(at(10, 15)).unwrap());
        // A zero or negative duration is never open.
        assert!(window("deny", "* * * * *", "0").never_open());
        assert!(
            !window("deny", "* * * * *", "0s")
                .active_at(at(10, 0))
                .unwrap()
        );
        assert!(window("deny", "* * * * *", "-1h").never_open());
        assert!(window("deny", "@daily", "1h").active_at(at(10, 0)).is_err());
        // A schedule that never fires is open all the time.
        let w = window("deny", "0 0 30 2 *", "1h");
        assert!(w.never_fires());
        assert!(w.active_at(at(10, 0)).unwrap());
        assert!(!window("deny", "0 0 29 2 *", "1h").never_fires());
        assert!(window("deny", ", * * * *", "1h").never_fires());
        // Day of month OR day of week when neither is `*`.
        let w = window("allow", "0 0 1 * wed", "24h");
        assert!(w.active_at(at(12, 0)).unwrap(), "2026-03-11 is a Wednesday");
    }

    // types_test.go TestSyncWindows_CanSync.
    #[test]
    fn deny_wins_and_allow_windows_close_everything_else() {
        let now = at(12, 0);
        let active_deny = window("deny", "0 11 * * *", "2h");
        let inactive_deny = window("deny", "0 20 * * *", "1h");
        let active_allow = window("allow", "0 11 * * *", "2h");
        let inactive_allow = window("allow", "0 20 * * *", "1h");
        let mut manual_deny = active_deny.clone();
        manual_deny.manual_sync = true;
        let mut manual_allow = inactive_allow.clone();
        manual_allow.manual_sync = true;
        assert_eq!(can_sync(&[], now, false), Ok(true));
        assert_eq!(can_sync(&[&inactive_deny], now, false), Ok(true));
        assert_eq!(can_sync(&[&active_deny], now, false), Ok(false));
        assert_eq!(can_sync(&[&active_deny], now, true), Ok(false));
        assert_eq!(can_sync(&[&manual_deny], now, true), Ok(true));
        assert_eq!(
            can_sync(&[&manual_deny, &active_deny], now, true),
            Ok(false)
        );
        // Deny wins over allow.
        assert_eq!(
            can_sync(&[&active_allow, &active_deny], now, false),
            Ok(false)
        );
        assert_eq!(can_sync(&[&active_allow], now, false), Ok(true));
        // With an allow window, a sync outside every allow window is refused.
        assert_eq!(can_sync(&[&inactive_allow], now, false), Ok(false));
        assert_eq!(
            can_sync(&[&inactive_allow, &active_allow], now, false),
            Ok(true)
        );
        assert_eq!(can_sync(&[&manual_allow], now, true), Ok(true));
        assert_eq!(
            can_sync(&[&manual_allow, &inactive_allow], now, true),
            Ok(false)
        );
        // A window that does not parse refuses every sync.
        let broken = window("deny", "0 22 * * 7", "1h");
        assert!(
            can_sync(&[&active_allow, &broken], now, false)
                .unwrap_err()
                .starts_with("invalid sync windows: cannot parse schedule")
        );
        // A kind Argo CD does not know neither denies nor allows.
        assert_eq!(
            can_sync(&[&window("Deny", "0 11 * * *", "2h")], now, false),
            Ok(true)
        );
    }

    #[test]
    fn reads_fields_and_notes_unknown_ones() {
        let mut notes = Notes::default();
        let w = SyncWindow::read(
            &json!({"kind": "deny", "schedule": "0 22 * * *", "duration": "1h", "applications": ["*"],
                    "manualSync": true, "timeZone": "Europe/Berlin", "andOperator": true, "timezone": "x"}),
            "/spec/syncWindows/0",
            &mut notes,
        );
        assert!(w.manual_sync && w.and_operator);
        assert_eq!(w.time_zone, "Europe/Berlin");
        assert_eq!(notes.unknown, ["/spec/syncWindows/0/timezone"]);
    }
}
