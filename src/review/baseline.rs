//! Findings on the head revision against those on the base: new, fixed and unchanged. A finding
//! is the same finding on both revisions when the rule, the object and the field are the same;
//! its message may differ (a wave number, a count), its location does (the files moved).

use std::collections::HashMap;

use crate::finding::Finding;

/// The findings of a review, sorted into three.
#[derive(Debug, Clone, Default)]
pub struct FindingsDiff {
    /// On the head only: what the change brings.
    pub new: Vec<Finding>,
    /// On the base only: what the change fixes.
    pub fixed: Vec<Finding>,
    /// On both (as on the head).
    pub unchanged: Vec<Finding>,
    /// On the base, of an Application not judged on the head: not known to be fixed.
    pub not_judged_on_head: Vec<Finding>,
}

type Key = (String, String, String, String, String, String);

fn key(f: &Finding) -> Key {
    (
        f.rule_id.to_string(),
        f.resource.group.clone(),
        f.resource.kind.clone(),
        f.resource.namespace.clone().unwrap_or_default(),
        f.resource.name.clone(),
        f.path.clone().unwrap_or_default(),
    )
}

/// Sorts `head` against `base` (each finding of `base` matches at most one of `head`).
pub fn compare(base: &[Finding], head: &[Finding]) -> FindingsDiff {
    let mut left: HashMap<Key, Vec<&Finding>> = HashMap::new();
    for f in base {
        left.entry(key(f)).or_default().push(f);
    }
    let mut out = FindingsDiff::default();
    for f in head {
        match left.get_mut(&key(f)).and_then(Vec::pop) {
            Some(_) => out.unchanged.push(f.clone()),
            None => out.new.push(f.clone()),
        }
    }
    // What is left of the base was fixed, in the base's order.
    for f in base {
        if let Some(rest) = left.get_mut(&key(f))
            && rest.iter().any(|x| std::ptr::eq(*x, f))
        {
            rest.retain(|x| !std::ptr::eq(*x, f));
            out.fixed.push(f.clone());
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::finding::{Action, ResourceRef, RuleId, Severity, Status};

    fn finding(rule: &str, name: &str, message: &str) -> Finding {
        Finding {
            rule_id: RuleId::new(rule),
            title: String::new(),
            severity: Severity::High,
            action: Action::Deny,
            status: Status::Open,
            message: message.into(),
            resource: ResourceRef {
                group: "batch".into(),
                version: "v1".into(),
                kind: "Job".into(),
                name: name.into(),
                namespace: Some("shop".into()),
            },
            application: None,
            location: None,
            path: None,
            patch: None,
            docs: None,
            cause: None,
            also: Vec::new(),
        }
    }

    #[test]
    fn findings_match_by_rule_object_and_field_not_by_message() {
        let base = [
            finding("SG201", "migrate", "wave 1"),
            finding("SG101", "old", "x"),
        ];
        let head = [
            finding("SG201", "migrate", "wave 2"),
            finding("SG201", "seed", "y"),
        ];
        let d = compare(&base, &head);
        let names = |fs: &[Finding]| {
            fs.iter()
                .map(|f| format!("{} {}", f.rule_id, f.resource.name))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&d.unchanged), ["SG201 migrate"]);
        assert_eq!(d.unchanged[0].message, "wave 2");
        assert_eq!(names(&d.new), ["SG201 seed"]);
        assert_eq!(names(&d.fixed), ["SG101 old"]);
    }
}
