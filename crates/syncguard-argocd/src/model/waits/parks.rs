//! States a spec puts its object in that are not Healthy although nothing failed.

use serde_json::Value;

use super::Park;
use crate::model::Resource;

/// Every park of `r`.
pub fn parks_of(r: &Resource) -> Vec<Park> {
    let spec = &r.raw["spec"];
    let mut out = Vec::new();
    match (r.group.as_str(), r.kind.as_str()) {
        ("apps", "Deployment") if spec["paused"] == Value::Bool(true) => out.push(Park {
            status: "Suspended",
            pointer: "/spec/paused".into(),
            reason: "a paused Deployment does not roll out; Argo CD reports it Suspended".into(),
            when: "every sync",
            until: "manual",
        }),
        ("batch", "Job") if spec["suspend"] == Value::Bool(true) => out.push(Park {
            status: "Suspended",
            pointer: "/spec/suspend".into(),
            reason: "a suspended Job starts no Pod until something sets suspend to false".into(),
            when: "every sync",
            until: "manual",
        }),
        ("argoproj.io", "Rollout") => rollout(spec, &mut out),
        _ => {}
    }
    out
}

fn rollout(spec: &Value, out: &mut Vec<Park>) {
    if spec["paused"] == Value::Bool(true) {
        out.push(Park {
            status: "Suspended",
            pointer: "/spec/paused".into(),
            reason:
                "a paused Rollout does not progress; Argo CD's Rollout check reports it Suspended"
                    .into(),
            when: "every sync",
            until: "manual",
        });
    }
    for (i, step) in spec["strategy"]["canary"]["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let Some(pause) = step.get("pause") else {
            continue;
        };
        if pause.get("duration").is_none_or(Value::is_null) {
            out.push(Park {
                status: "Suspended",
                pointer: format!("/spec/strategy/canary/steps/{i}/pause"),
                reason: "a canary pause step without a duration stops the Rollout until someone promotes it; Argo CD's Rollout check reports it Suspended meanwhile".into(),
                when: "every update after the first",
                until: "manual",
            });
        }
    }
    if spec["strategy"]["blueGreen"]["autoPromotionEnabled"] == Value::Bool(false) {
        out.push(Park {
            status: "Suspended",
            pointer: "/spec/strategy/blueGreen/autoPromotionEnabled".into(),
            reason: "a blue-green Rollout without auto-promotion waits for someone to promote the new version; Argo CD's Rollout check reports it Suspended meanwhile".into(),
            when: "every update after the first",
            until: "manual",
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn r(raw: Value) -> Resource {
        Resource::from_value(raw, None).unwrap()
    }

    #[test]
    fn a_pause_step_without_duration_parks_a_rollout_on_updates() {
        let rollout = r(
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "metadata": {"name": "core"},
            "spec": {"strategy": {"canary": {"steps": [{"setWeight": 20}, {"pause": {}}, {"pause": {"duration": "10m"}}]}}}}),
        );
        let parks = parks_of(&rollout);
        assert_eq!(parks.len(), 1);
        assert_eq!(parks[0].pointer, "/spec/strategy/canary/steps/1/pause");
        assert_eq!(parks[0].when, "every update after the first");
    }

    #[test]
    fn paused_and_suspended_workloads_park_on_every_sync() {
        let d = r(
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": {"paused": true}}),
        );
        assert_eq!(parks_of(&d)[0].status, "Suspended");
        let j = r(
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"suspend": true}}),
        );
        assert_eq!(parks_of(&j)[0].pointer, "/spec/suspend");
        let running = r(
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}, "spec": {"suspend": false}}),
        );
        assert!(parks_of(&running).is_empty());
    }
}
