//! Mutations: apply a rule's proposed JSON Patch to a copy of an object and emit the minimal
//! RFC 6902 patch that gets from the original to the result.
//!
//! Rules write patches the simple way (`{"op": "add", "path": "/spec/activeDeadlineSeconds",
//! "value": 900}`) and this module makes them safe to apply at admission time:
//!
//! - **Never lower a value.** Mutating rules inject floors (a deadline, a retry limit). An `add`
//!   or `replace` whose value is a number is skipped when the target already holds a number that
//!   is greater than or equal to it; a smaller number is raised. Only numbers are compared:
//!   non-numeric targets and values are applied as written, and so are numbers nested inside an
//!   object value (the guard looks at the op's own target only).
//! - **Missing parents are an error, not created.** RFC 6902 `add` needs the parent to exist.
//!   Creating parents implicitly would hide rule bugs (a typo in a path would silently grow a new
//!   subtree), so an op whose parent is missing fails with [`MutateError::MissingParent`], naming
//!   the parent. A rule that needs a new parent adds it as a whole object first (and only when it
//!   is absent: `add` of an object replaces an existing one). Ops are applied in the order given;
//!   a Rego set of ops is sorted by value, which puts `/a` before `/a/b` for the same `op`.
//! - **`test` is a precondition, and lifts the guard.** A patch may say exactly which value it
//!   expects to find (`{"op": "test", "path": "/spec/backoffLimit", "value": 6}` next to a
//!   `replace` of that path): every `test` of a patch is checked before any op is applied (a
//!   failed one is an error, as in RFC 6902, and nothing of the patch is applied), and the
//!   never-lower guard does not apply to a path the patch tested — the rule knows the value it
//!   replaces (SG102 replaces the API server's default backoffLimit 6 this way).
//! - **Minimal and idempotent.** The result is `json_patch::diff(original, patched)`, so no-op
//!   operations vanish, and applying the same rule to an already-patched object yields an empty
//!   patch.
//!
//! `json-patch` is pinned to 4.x because kube-core's `AdmissionResponse::with_patch` takes a
//! `json_patch::Patch` of that major version.

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;

use json_patch::{Patch, PatchOperation};
use serde_json::Value;
use thiserror::Error;

use crate::finding::{Action, Finding, RuleId, Status};

/// Why a rule's patch cannot be applied to an object.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum MutateError {
    /// An `add` (or `replace`, `copy`, `move` target) whose parent does not exist.
    #[error(
        "patch op #{index} ({op} {path}): parent `{parent}` does not exist; \
         add the parent as a whole object first (only when it is absent)"
    )]
    MissingParent {
        /// 0-based position of the op in the rule's patch.
        index: usize,
        /// The op name, e.g. `add`.
        op: &'static str,
        /// The op's path.
        path: String,
        /// The first missing ancestor.
        parent: String,
    },
    /// The op failed for another reason (a failed `test`, a bad array index, a missing `from`).
    #[error("patch op #{index} ({op} {path}) failed: {message}")]
    Apply {
        /// 0-based position of the op in the rule's patch.
        index: usize,
        /// The op name.
        op: &'static str,
        /// The op's path.
        path: String,
        /// json-patch's explanation.
        message: String,
    },
}

/// Applies `ops` to a copy of `obj` and returns the patched copy plus the minimal patch from
/// `obj` to it. See the module documentation for the never-lower and missing-parent rules.
///
/// A `test` of the rule's patch stays in the result, ahead of the diff, when the diff changes
/// the tested path: the patch still says which value it replaces, so merging it with other rules'
/// patches ([`combined_patch`]) spares that path from the never-lower guard again.
pub fn apply_patches(obj: &Value, ops: &[PatchOperation]) -> Result<(Value, Patch), MutateError> {
    let mut doc = obj.clone();
    apply_in_place(&mut doc, ops)?;
    let diff = json_patch::diff(obj, &doc);
    let changed: BTreeSet<&str> = diff.0.iter().map(|op| op.path().as_str()).collect();
    let mut patch: Vec<PatchOperation> = ops
        .iter()
        .filter(|op| matches!(op, PatchOperation::Test(t) if changed.contains(t.path.as_str())))
        .cloned()
        .collect();
    if patch.is_empty() {
        return Ok((doc, diff));
    }
    patch.extend(diff.0);
    Ok((doc, Patch(patch)))
}

/// Merges the patches of open `mutate` findings about one object into one minimal patch against
/// `original` — the patch an admission response should carry.
///
/// Every finding of a rule carries that rule's whole patch, so patches are de-duplicated per rule
/// before they are applied (in the order the findings are given); the never-lower guard applies
/// across rules too.
pub fn combined_patch(original: &Value, findings: &[Finding]) -> Result<Patch, MutateError> {
    let mut seen: BTreeSet<&RuleId> = BTreeSet::new();
    let mut doc = original.clone();
    for f in findings {
        if f.action != Action::Mutate || f.status != Status::Open {
            continue;
        }
        let Some(patch) = &f.patch else { continue };
        if seen.insert(&f.rule_id) {
            apply_in_place(&mut doc, &patch.0)?;
        }
    }
    Ok(json_patch::diff(original, &doc))
}

fn apply_in_place(doc: &mut Value, ops: &[PatchOperation]) -> Result<(), MutateError> {
    let mut tested: BTreeSet<&str> = BTreeSet::new();
    for (index, op) in ops.iter().enumerate() {
        if let PatchOperation::Test(t) = op {
            if doc.pointer(t.path.as_str()) != Some(&t.value) {
                return Err(MutateError::Apply {
                    index,
                    op: "test",
                    path: t.path.as_str().to_string(),
                    message: format!("the value is not {}", t.value),
                });
            }
            tested.insert(t.path.as_str());
        }
    }
    for (index, op) in ops.iter().enumerate() {
        if matches!(op, PatchOperation::Test(_)) {
            continue;
        }
        if !tested.contains(op.path().as_str()) && would_lower(doc, op) {
            continue;
        }
        if let Some(parent) = missing_parent(doc, op) {
            return Err(MutateError::MissingParent {
                index,
                op: op_name(op),
                path: op.path().as_str().to_string(),
                parent,
            });
        }
        json_patch::patch(doc, std::slice::from_ref(op)).map_err(|e| MutateError::Apply {
            index,
            op: op_name(op),
            path: op.path().as_str().to_string(),
            message: e.kind.to_string(),
        })?;
    }
    Ok(())
}

/// True for an `add`/`replace` of a number onto an existing number that is at least as large.
fn would_lower(doc: &Value, op: &PatchOperation) -> bool {
    let (path, value) = match op {
        PatchOperation::Add(a) => (a.path.as_str(), &a.value),
        PatchOperation::Replace(r) => (r.path.as_str(), &r.value),
        _ => return false,
    };
    let (Some(new), Some(existing)) = (value.as_f64(), doc.pointer(path).and_then(Value::as_f64))
    else {
        return false;
    };
    existing >= new
}

/// The first missing ancestor of the op's target, for ops that write to a path.
fn missing_parent(doc: &Value, op: &PatchOperation) -> Option<String> {
    if !matches!(
        op,
        PatchOperation::Add(_) | PatchOperation::Copy(_) | PatchOperation::Move(_)
    ) {
        return None;
    }
    let parent = op.path().parent()?;
    // Walk down from the root so the error names the *first* missing level.
    let mut prefix = String::new();
    for token in parent.tokens() {
        prefix.push('/');
        prefix.push_str(token.encoded());
        if doc.pointer(&prefix).is_none() {
            return Some(prefix);
        }
    }
    None
}

fn op_name(op: &PatchOperation) -> &'static str {
    match op {
        PatchOperation::Add(_) => "add",
        PatchOperation::Remove(_) => "remove",
        PatchOperation::Replace(_) => "replace",
        PatchOperation::Move(_) => "move",
        PatchOperation::Copy(_) => "copy",
        PatchOperation::Test(_) => "test",
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(v: Value) -> Vec<PatchOperation> {
        serde_json::from_value(v).unwrap()
    }

    fn job(spec: Value) -> Value {
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate"}, "spec": spec})
    }

    #[test]
    fn a_missing_field_is_added_and_the_patch_is_minimal() {
        let obj = job(json!({"template": {}}));
        let (patched, patch) = apply_patches(
            &obj,
            &ops(json!([{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}])),
        )
        .unwrap();
        assert_eq!(patched["spec"]["activeDeadlineSeconds"], 900);
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            json!([{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}])
        );
    }

    #[test]
    fn a_tested_value_is_replaced_even_when_lower_and_a_failed_test_is_an_error() {
        let tested_ops = |expected: i64| {
            ops(json!([
                {"op": "test", "path": "/spec/backoffLimit", "value": expected},
                {"op": "replace", "path": "/spec/backoffLimit", "value": 2},
                {"op": "add", "path": "/spec/x", "value": 1}
            ]))
        };
        let obj = json!({"spec": {"backoffLimit": 6}});
        let (patched, patch) = apply_patches(&obj, &tested_ops(6)).unwrap();
        assert_eq!(patched, json!({"spec": {"backoffLimit": 2, "x": 1}}));
        // The test stays with the replace, so that merging findings spares the path again.
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            json!([{"op": "test", "path": "/spec/backoffLimit", "value": 6},
                   {"op": "replace", "path": "/spec/backoffLimit", "value": 2},
                   {"op": "add", "path": "/spec/x", "value": 1}])
        );
        // Not the value the rule judged: an error naming the test, before anything is applied.
        let err = apply_patches(&obj, &tested_ops(3)).unwrap_err();
        assert!(
            matches!(
                err,
                MutateError::Apply {
                    index: 0,
                    op: "test",
                    ..
                }
            ),
            "{err}"
        );
        // Without the test the guard still keeps the larger number.
        let (patched, _) = apply_patches(
            &obj,
            &ops(json!([{"op": "replace", "path": "/spec/backoffLimit", "value": 2}])),
        )
        .unwrap();
        assert_eq!(patched, obj);
    }

    #[test]
    fn an_existing_larger_number_is_never_lowered() {
        let obj = job(json!({"activeDeadlineSeconds": 3600}));
        for op in ["add", "replace"] {
            let (patched, patch) = apply_patches(
                &obj,
                &ops(json!([{"op": op, "path": "/spec/activeDeadlineSeconds", "value": 900}])),
            )
            .unwrap();
            assert_eq!(patched, obj, "{op} must not lower 3600 to 900");
            assert!(patch.0.is_empty());
        }
    }

    #[test]
    fn an_existing_smaller_number_is_raised() {
        let obj = job(json!({"activeDeadlineSeconds": 60}));
        let (_, patch) = apply_patches(
            &obj,
            &ops(json!([{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}])),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            json!([{"op": "replace", "path": "/spec/activeDeadlineSeconds", "value": 900}])
        );
    }

    #[test]
    fn non_numeric_values_are_applied_as_written() {
        let obj = job(json!({"template": {"spec": {"restartPolicy": "OnFailure"}}}));
        let (patched, _) = apply_patches(
            &obj,
            &ops(json!([{"op": "replace", "path": "/spec/template/spec/restartPolicy", "value": "Never"}])),
        )
        .unwrap();
        assert_eq!(
            patched["spec"]["template"]["spec"]["restartPolicy"],
            "Never"
        );
    }

    #[test]
    fn applying_a_patch_to_an_already_patched_object_yields_an_empty_patch() {
        let obj = job(json!({}));
        let rule_ops = ops(json!([
            {"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900},
            {"op": "add", "path": "/metadata/labels", "value": {"syncguard.dev/mutated": "true"}}
        ]));
        let (once, first) = apply_patches(&obj, &rule_ops).unwrap();
        assert_eq!(first.0.len(), 2);
        let (twice, second) = apply_patches(&once, &rule_ops).unwrap();
        assert_eq!(twice, once);
        assert!(second.0.is_empty(), "second run produced {second}");
    }

    #[test]
    fn an_op_under_a_missing_parent_is_a_clear_error() {
        let obj = json!({"kind": "Pod", "metadata": {"name": "p"}});
        let err = apply_patches(
            &obj,
            &ops(json!([{"op": "add", "path": "/spec/template/spec/x", "value": 1}])),
        )
        .unwrap_err();
        assert_eq!(
            err,
            MutateError::MissingParent {
                index: 0,
                op: "add",
                path: "/spec/template/spec/x".into(),
                parent: "/spec".into(),
            }
        );
        assert!(err.to_string().contains("parent `/spec` does not exist"));
    }

    #[test]
    fn parents_added_by_earlier_ops_of_the_same_patch_count() {
        let obj = json!({"kind": "Pod", "metadata": {"name": "p"}});
        let (patched, _) = apply_patches(
            &obj,
            &ops(json!([
                {"op": "add", "path": "/metadata/annotations", "value": {}},
                {"op": "add", "path": "/metadata/annotations/a~1b", "value": "c"}
            ])),
        )
        .unwrap();
        assert_eq!(patched["metadata"]["annotations"]["a/b"], "c");
    }

    #[test]
    fn a_failing_test_op_reports_its_index() {
        let obj = job(json!({"backoffLimit": 6}));
        let err = apply_patches(
            &obj,
            &ops(json!([
                {"op": "add", "path": "/spec/x", "value": 1},
                {"op": "test", "path": "/spec/backoffLimit", "value": 2}
            ])),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                MutateError::Apply {
                    index: 1,
                    op: "test",
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn combined_patch_merges_open_mutate_findings_once_per_rule() {
        use crate::finding::{ResourceRef, Severity};
        let obj = job(json!({}));
        let finding = |id: &str, action, patch: Value| Finding {
            rule_id: RuleId::from(id),
            title: String::new(),
            severity: Severity::High,
            action,
            status: Status::Open,
            message: String::new(),
            resource: ResourceRef {
                group: "batch".into(),
                version: "v1".into(),
                kind: "Job".into(),
                name: "migrate".into(),
                namespace: None,
            },
            application: None,
            location: None,
            path: None,
            patch: Some(serde_json::from_value(patch).unwrap()),
            docs: None,
            cause: None,
            also: Vec::new(),
        };
        let deadline = json!([{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}]);
        let backoff = json!([{"op": "add", "path": "/spec/backoffLimit", "value": 2}]);
        let findings = vec![
            finding("SG101", Action::Mutate, deadline.clone()),
            finding("SG101", Action::Mutate, deadline),
            finding("SG102", Action::Mutate, backoff),
            finding(
                "SG103",
                Action::Warn,
                json!([{"op": "remove", "path": "/spec"}]),
            ),
        ];
        let patch = combined_patch(&obj, &findings).unwrap();
        let mut patched = obj.clone();
        json_patch::patch(&mut patched, &patch).unwrap();
        assert_eq!(
            patched["spec"],
            json!({"activeDeadlineSeconds": 900, "backoffLimit": 2})
        );
    }
}
