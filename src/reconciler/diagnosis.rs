//! What a live diagnosis (SG501–SG503) concludes, as data: the reconciler turns it into an Event
//! and metric samples, tests compare it, and nothing in it depends on how it will be shown.

use std::time::Duration;

/// SG501 — an Application's sync operation has been Running longer than the threshold.
pub const STUCK_SYNC: Rule = Rule {
    id: "SG501",
    reason: "StuckSync",
};
/// SG502 — an Application keeps being synced (or flips OutOfSync/Synced) within a window.
pub const SYNC_LOOP: Rule = Rule {
    id: "SG502",
    reason: "SyncLoop",
};
/// SG503 — completed hook Jobs/Pods of an Application pile up.
pub const HOOK_ACCUMULATION: Rule = Rule {
    id: "SG503",
    reason: "HookAccumulation",
};

/// A live rule: its stable id and the Event reason it reports under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rule {
    /// `SG501`, `SG502`, `SG503`.
    pub id: &'static str,
    /// The Kubernetes Event reason (CamelCase, as Events want it).
    pub reason: &'static str,
}

/// All live rules, for metrics that list every rule even at zero.
pub const RULES: [Rule; 3] = [STUCK_SYNC, SYNC_LOOP, HOOK_ACCUMULATION];

/// One finding about one live Application.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveFinding {
    /// Which rule.
    pub rule: Rule,
    /// What is wrong, in one sentence a tired on-call engineer understands.
    pub message: String,
    /// What to do about it.
    pub fix: String,
    /// A copy-paste snippet for the fix (YAML), when there is one.
    pub snippet: Option<String>,
    /// Identifies the *cause* (not the wording): the same blocked hook with the same pod state,
    /// the same fields and managers, the same pile of hooks. Findings with equal fingerprints
    /// are one incident for Event deduplication, even though durations and counts in the
    /// message change between reconciles.
    pub fingerprint: String,
}

/// Largest Event note the API server accepts (events.k8s.io/v1 `note`: 1 KiB).
pub const NOTE_LIMIT: usize = 1024;

impl LiveFinding {
    /// The Event note: the message, then the fix, then the snippet if it still fits; cut to
    /// [`NOTE_LIMIT`] bytes on a character boundary (a longer note is rejected by the API
    /// server, and losing the Event is worse than losing its tail).
    pub fn note(&self) -> String {
        let mut note = format!("{} Fix: {}", self.message, self.fix);
        if let Some(snippet) = &self.snippet
            && note.len() + snippet.len() < NOTE_LIMIT
        {
            note.push('\n');
            note.push_str(snippet);
        }
        truncate(&mut note, NOTE_LIMIT);
        note
    }
}

/// Cuts `s` to at most `limit` bytes, ending with `…` when something was cut.
pub fn truncate(s: &mut String, limit: usize) {
    if s.len() <= limit {
        return;
    }
    let ellipsis = '…';
    let mut end = limit.saturating_sub(ellipsis.len_utf8());
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s.push(ellipsis);
}

/// A duration for humans: `45 s`, `41 min`, `2 h 5 min`, `3 d 4 h`.
pub fn human_duration(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86400 => {
            let (h, m) = (secs / 3600, secs % 3600 / 60);
            if m == 0 {
                format!("{h} h")
            } else {
                format!("{h} h {m} min")
            }
        }
        _ => {
            let (d, h) = (secs / 86400, secs % 86400 / 3600);
            if h == 0 {
                format!("{d} d")
            } else {
                format!("{d} d {h} h")
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_person_would_say_them() {
        assert_eq!(human_duration(Duration::from_secs(45)), "45 s");
        assert_eq!(human_duration(Duration::from_secs(41 * 60 + 59)), "41 min");
        assert_eq!(human_duration(Duration::from_secs(2 * 3600)), "2 h");
        assert_eq!(
            human_duration(Duration::from_secs(2 * 3600 + 300)),
            "2 h 5 min"
        );
        assert_eq!(
            human_duration(Duration::from_secs(3 * 86400 + 4 * 3600)),
            "3 d 4 h"
        );
    }

    #[test]
    fn a_note_never_exceeds_the_api_limit_and_cuts_on_a_character_boundary() {
        let finding = LiveFinding {
            rule: STUCK_SYNC,
            message: "é".repeat(700),
            fix: "fix it".into(),
            snippet: Some("x: 1".into()),
            fingerprint: String::new(),
        };
        let note = finding.note();
        assert!(note.len() <= NOTE_LIMIT, "{}", note.len());
        assert!(note.ends_with('…'));
        assert!(
            !note.contains("x: 1"),
            "the snippet is dropped when it does not fit"
        );
    }

    #[test]
    fn a_short_note_carries_message_fix_and_snippet() {
        let finding = LiveFinding {
            rule: SYNC_LOOP,
            message: "It loops.".into(),
            fix: "Ignore spec.replicas.".into(),
            snippet: Some("jsonPointers: [/spec/replicas]".into()),
            fingerprint: String::new(),
        };
        assert_eq!(
            finding.note(),
            "It loops. Fix: Ignore spec.replicas.\njsonPointers: [/spec/replicas]"
        );
    }
}
