//! The API server's own verdict on an object, as evidence for validity.
//!
//! With a server to ask (`check --cluster`, `check --ephemeral-cluster`), a server-side dry-run
//! apply either returns the object as it would be stored or refuses it. A refusal is the most
//! certain blocking finding there is: it is exactly what Argo CD's apply will meet. An
//! acceptance overrules the offline model's refusals: the server ran every validation of its
//! release, and the offline model is an approximation of them.
//!
//! A refusal of the `Invalid` kind lists its causes with a field path in the server's own
//! notation (`spec.rules[0].http.paths`, `metadata.labels[app.kubernetes.io/name]`); each
//! cause becomes a violation at the JSON pointer of that field ([`field_pointer`]), so the
//! finding carries the file:line of the field, or of its nearest declared ancestor.

use serde::{Deserialize, Serialize};

use super::{Evidence, Validity, Violation, ViolationKind};

/// What the API server answered to a dry-run of one object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    /// It would store the object.
    Accepted,
    /// It refused the object itself (not the request: a missing namespace, an unserved kind or
    /// a denied permission say nothing about the object and are not verdicts).
    Refused(Refusal),
}

/// A refusal of the object, in the API server's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// HTTP code (422 for `Invalid`, 400 for an undecodable body).
    pub code: u16,
    /// The Status reason (`Invalid`, `BadRequest`).
    pub reason: String,
    /// The Status message.
    pub message: String,
    /// The Status causes (empty when the server gave none).
    pub causes: Vec<Cause>,
}

/// One cause of a refusal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cause {
    /// The cause type (`FieldValueRequired`, `FieldValueInvalid`, …).
    pub reason: String,
    /// The server's message for this field (`Required value`).
    pub message: String,
    /// The field path in the server's notation; empty for the whole object.
    pub field: String,
}

/// Replaces the offline judgement of what the server refuses with the server's `verdict`.
/// Unknown fields stay: the dry-run does not refuse them (Argo CD's client-side apply sends no
/// field validation), and whether they matter depends on the apply mode the rules know.
pub fn judge(validity: &mut Validity, verdict: &Verdict, server: &str) {
    validity
        .violations
        .retain(|v| v.kind == ViolationKind::UnknownField);
    let Verdict::Refused(refusal) = verdict else {
        return;
    };
    validity.evidence = Evidence::Server {
        version: server.to_string(),
    };
    if refusal.causes.is_empty() {
        validity.violations.push(Violation {
            pointer: String::new(),
            kind: ViolationKind::NotAllowed,
            message: refusal.message.clone(),
        });
        return;
    }
    for cause in &refusal.causes {
        let said = shortened(&cause.message);
        let message = if cause.field.is_empty() {
            said
        } else {
            format!("{}: {said}", cause.field)
        };
        let kind = if is_immutable(&cause.message) {
            ViolationKind::Immutable
        } else {
            kind_of(&cause.reason)
        };
        validity.violations.push(Violation {
            pointer: field_pointer(&cause.field),
            kind,
            message,
        });
    }
}

/// Longest value quoted in a message. The server quotes the value it refused, and for a Job's
/// pod template that is its whole Go struct (kilobytes); the field and the verdict say enough.
const MAX_QUOTED: usize = 200;

/// The server's message with an over-long quoted value elided: `Invalid value: {…}: field is
/// immutable` keeps its head and its verdict.
fn shortened(message: &str) -> String {
    const VALUE: &str = "Invalid value: ";
    let Some(start) = message.find(VALUE).map(|i| i + VALUE.len()) else {
        return message.to_string();
    };
    let Some(end) = message.rfind(": ") else {
        return message.to_string();
    };
    if end <= start || end - start <= MAX_QUOTED {
        return message.to_string();
    }
    format!(
        "{}(the new value, {} characters): {}",
        &message[..start],
        message[start..end].chars().count(),
        &message[end + 2..]
    )
}

/// Whether a cause refuses a change from the live object rather than the object itself:
/// `field is immutable`, and the StatefulSet's "updates to statefulset spec for fields other
/// than … are forbidden".
fn is_immutable(message: &str) -> bool {
    message.contains("field is immutable")
        || (message.contains("updates to") && message.contains("are forbidden"))
}

/// The violation kind of a Status cause type (k8s.io/apimachinery `field.ErrorType`).
fn kind_of(reason: &str) -> ViolationKind {
    match reason {
        "FieldValueRequired" => ViolationKind::MissingField,
        "FieldValueTypeInvalid" => ViolationKind::WrongType,
        _ => ViolationKind::NotAllowed,
    }
}

/// The JSON pointer of a field path in the API server's notation: `.` separates fields,
/// `[3]` indexes a list and `[key]` names a map key (which may hold dots and slashes).
/// `spec.template.spec.containers[0].ports[1].name` → `/spec/template/spec/containers/0/ports/1/name`.
pub fn field_pointer(path: &str) -> String {
    let mut out = String::new();
    let mut token = String::new();
    let mut chars = path.chars();
    let flush = |out: &mut String, token: &mut String| {
        if !token.is_empty() {
            out.push('/');
            out.push_str(&token.replace('~', "~0").replace('/', "~1"));
            token.clear();
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '.' => flush(&mut out, &mut token),
            '[' => {
                flush(&mut out, &mut token);
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    token.push(c);
                }
                // `[key]` and `[0]` alike become one token, even an empty or odd one.
                out.push('/');
                out.push_str(&token.replace('~', "~0").replace('/', "~1"));
                token.clear();
            }
            _ => token.push(c),
        }
    }
    flush(&mut out, &mut token);
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn server_field_paths_become_json_pointers() {
        assert_eq!(
            field_pointer("spec.rules[0].http.paths"),
            "/spec/rules/0/http/paths"
        );
        assert_eq!(
            field_pointer("metadata.labels[app.kubernetes.io/name]"),
            "/metadata/labels/app.kubernetes.io~1name"
        );
        assert_eq!(
            field_pointer("spec.template.spec.containers[0].ports[1].name"),
            "/spec/template/spec/containers/0/ports/1/name"
        );
        assert_eq!(field_pointer(""), "");
        assert_eq!(field_pointer("spec"), "/spec");
        assert_eq!(field_pointer("data[a~b]"), "/data/a~0b");
    }

    fn offline() -> Validity {
        Validity {
            evidence: Evidence::Kubernetes { types: "1.34" },
            violations: vec![
                Violation {
                    pointer: "/spec/x".into(),
                    kind: ViolationKind::UnknownField,
                    message: "unknown field".into(),
                },
                Violation {
                    pointer: "/spec/replicas".into(),
                    kind: ViolationKind::WrongType,
                    message: "expected a number".into(),
                },
            ],
        }
    }

    #[test]
    fn an_acceptance_overrules_the_offline_refusals_but_keeps_unknown_fields() {
        let mut v = offline();
        judge(&mut v, &Verdict::Accepted, "v1.34.4");
        assert_eq!(v.violations.len(), 1);
        assert_eq!(v.violations[0].kind, ViolationKind::UnknownField);
        assert_eq!(v.evidence, Evidence::Kubernetes { types: "1.34" });
    }

    #[test]
    fn a_refusal_replaces_the_offline_refusals_with_the_servers_causes() {
        let mut v = offline();
        let refusal = Refusal {
            code: 422,
            reason: "Invalid".into(),
            message: "Ingress.networking.k8s.io \"web\" is invalid: spec.rules[0].http.paths: Required value".into(),
            causes: vec![Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value".into(),
                field: "spec.rules[0].http.paths".into(),
            }],
        };
        judge(&mut v, &Verdict::Refused(refusal), "v1.34.4");
        assert_eq!(
            v.evidence,
            Evidence::Server {
                version: "v1.34.4".into()
            }
        );
        let got: Vec<_> = v
            .violations
            .iter()
            .map(|v| (v.pointer.as_str(), v.kind, v.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("/spec/x", ViolationKind::UnknownField, "unknown field"),
                (
                    "/spec/rules/0/http/paths",
                    ViolationKind::MissingField,
                    "spec.rules[0].http.paths: Required value"
                ),
            ]
        );
    }

    #[test]
    fn a_refused_change_from_the_live_object_is_immutable() {
        let mut v = offline();
        let refusal = Refusal {
            code: 422,
            reason: "Invalid".into(),
            message: "Deployment.apps \"web\" is invalid".into(),
            causes: vec![
                Cause {
                    reason: "FieldValueInvalid".into(),
                    message: "Invalid value: ...: field is immutable".into(),
                    field: "spec.selector".into(),
                },
                Cause {
                    reason: "FieldValueForbidden".into(),
                    message: "Forbidden: updates to statefulset spec for fields other than 'replicas' are forbidden".into(),
                    field: "spec".into(),
                },
            ],
        };
        judge(&mut v, &Verdict::Refused(refusal), "v1.34.4");
        let kinds: Vec<_> = v.violations.iter().skip(1).map(|v| v.kind).collect();
        assert_eq!(kinds, [ViolationKind::Immutable, ViolationKind::Immutable]);
    }

    #[test]
    fn a_long_quoted_value_is_elided_but_the_verdict_kept() {
        let long = format!(
            "Invalid value: {{\"Spec\":{}}}: field is immutable",
            "x".repeat(500)
        );
        assert_eq!(
            shortened(&long),
            "Invalid value: (the new value, 509 characters): field is immutable"
        );
        let short = "Invalid value: {\"app\":\"web\"}: field is immutable";
        assert_eq!(shortened(short), short);
        assert_eq!(shortened("Required value"), "Required value");
    }

    #[test]
    fn a_refusal_without_causes_is_one_violation_of_the_whole_object() {
        let mut v = offline();
        let refusal = Refusal {
            code: 400,
            reason: "BadRequest".into(),
            message: "cannot decode".into(),
            causes: vec![],
        };
        judge(&mut v, &Verdict::Refused(refusal), "v1.34.4");
        assert_eq!(v.violations.last().unwrap().pointer, "");
        assert_eq!(v.violations.last().unwrap().message, "cannot decode");
    }
}
