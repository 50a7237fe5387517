//! Evaluation cost, measured (not a pass/fail test; run it in release mode):
//!
//! ```sh
//! cargo test --release --test policy_perf -- --ignored --nocapture
//! ```
//!
//! Budget (DESIGN.md §7): `syncguard check` over 10,000 resources in ≤ 1 s on 2 cores end to
//! end, i.e. evaluation ≲ 60 µs per resource per core. The rule set below is 20 small rules in the
//! shape of the catalogue (annotation checks, hook facts, container loops, reference loops,
//! config defaults) plus a helper package.

mod policy_support;

use std::fs;
use std::time::{Duration, Instant};

use policy_support::{Obj, input_for};
use serde_json::{Value, json};
use syncguard::model::Resource;
use syncguard::policy::{LoadOptions, PolicySet};

const LIB: &str = r#"package syncguard.lib.k8s

workload_kinds := {"Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}

pod_spec(obj) := obj.spec.template.spec if obj.kind in workload_kinds

pod_spec(obj) := obj.spec if obj.kind == "Pod"

annotations(obj) := object.get(obj.metadata, "annotations", {})

containers(obj) := array.concat(object.get(pod_spec(obj), "containers", []), object.get(pod_spec(obj), "initContainers", []))
"#;

/// Twenty rule bodies: `{n}` is the rule number, used to keep the rules distinct.
fn rule(n: usize) -> String {
    let body = match n % 10 {
        0 => {
            r#"violations contains {"msg": sprintf("hook Job %s has no deadline", [input.resource.metadata.name]), "path": "/spec/activeDeadlineSeconds"} if {
	input.resource.kind == "Job"
	input.sync.is_hook
	not input.resource.spec.activeDeadlineSeconds
}

patches contains {"op": "add", "path": "/spec/activeDeadlineSeconds", "value": data.syncguard.config.defaults.hook_job_active_deadline_seconds} if {
	input.resource.kind == "Job"
	input.sync.is_hook
	not input.resource.spec.activeDeadlineSeconds
}"#
        }
        1 => {
            r#"violations contains {"msg": "hook restarts OnFailure", "path": "/spec/template/spec/restartPolicy"} if {
	input.sync.is_hook
	k8s.pod_spec(input.resource).restartPolicy == "OnFailure"
}"#
        }
        2 => {
            r#"violations contains {"msg": sprintf("unknown hook value %q", [v])} if {
	some v in input.sync.invalid_hook_values
}"#
        }
        3 => {
            r#"violations contains {"msg": sprintf("sync-wave %q is not an integer", [input.sync.wave_raw])} if {
	not input.sync.wave_valid
}"#
        }
        4 => {
            r#"violations contains {"msg": sprintf("container %s uses :latest", [c.name]), "path": sprintf("/spec/template/spec/containers/%d/image", [i])} if {
	some i, c in k8s.containers(input.resource)
	endswith(c.image, ":latest")
}"#
        }
        5 => {
            r#"violations contains {"msg": sprintf("volatile annotation %s", [k])} if {
	some k, _ in k8s.annotations(input.resource)
	k in {"kubectl.kubernetes.io/restartedAt", "rollme", "timestamp"}
}"#
        }
        6 => {
            r#"violations contains {"msg": sprintf("%s %s is created later than this hook", [ref.kind, ref.name])} if {
	input.sync.is_hook
	some ref in input.refs
	not ref.optional
	ref.target.wave > input.sync.wave
}"#
        }
        7 => {
            r#"violations contains {"msg": "delete policy on a non-hook"} if {
	not input.sync.is_hook
	input.sync.delete_policy_set
}"#
        }
        8 => {
            r#"violations contains {"msg": sprintf("env %s from a Secret that is not in the set", [e.name])} if {
	some c in k8s.containers(input.resource)
	some e in object.get(c, "env", [])
	e.valueFrom.secretKeyRef
	not secret_in_set(e.valueFrom.secretKeyRef.name)
}

secret_in_set(name) if {
	some ref in input.refs
	ref.kind == "Secret"
	ref.name == name
	ref.target.in_set
}"#
        }
        _ => {
            r#"violations contains {"msg": "generateName hook without a cleanup policy"} if {
	input.sync.is_hook
	input.resource.metadata.generateName
	not "HookSucceeded" in input.sync.delete_policies
	not "HookFailed" in input.sync.delete_policies
}"#
        }
    };
    format!(
        "package syncguard.rules.r{n:02}\n\nimport data.syncguard.lib.k8s\n\n\
         meta := {{\"id\": \"SG8{n:02}\", \"title\": \"perf rule {n}\", \"severity\": \"medium\", \"action\": \"warn\"}}\n\n\
         {body}\n"
    )
}

fn rule_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("lib_k8s.rego"), LIB).unwrap();
    for n in 0..20 {
        fs::write(dir.path().join(format!("r{n:02}.rego")), rule(n)).unwrap();
    }
    dir
}

/// A realistic mix: half Deployments, then Services, ConfigMaps, hook Jobs, Secrets.
fn resources(count: usize) -> Vec<(Resource, Value)> {
    (0..count)
        .map(|i| {
            let o = match i % 10 {
                0..=4 => Obj::new("apps/v1", "Deployment", &format!("web-{i}"))
                    .namespace("shop")
                    .label("app", "web")
                    .set("/spec/replicas", json!(3))
                    .set(
                        "/spec/template/spec/containers",
                        json!([{"name": "web", "image": format!("web:{}", i % 7),
                                "env": [{"name": "DB", "valueFrom": {"secretKeyRef": {"name": "db", "key": "url"}}}],
                                "resources": {"limits": {"cpu": "1"}}},
                               {"name": "proxy", "image": "envoy:1.30"}]),
                    ),
                5 => Obj::new("v1", "Service", &format!("svc-{i}"))
                    .namespace("shop")
                    .set("/spec", json!({"ports": [{"port": 80}], "selector": {"app": "web"}})),
                6 | 7 => Obj::config_map(&format!("cfg-{i}")).namespace("shop"),
                8 => Obj::job(&format!("migrate-{i}"))
                    .namespace("shop")
                    .hook("PreSync")
                    .annotation("argocd.argoproj.io/sync-wave", "-1"),
                _ => Obj::new("v1", "Secret", &format!("sec-{i}")).namespace("shop"),
            };
            let r = o.resource();
            let mut input = input_for(&r);
            input["refs"] = json!([{"kind": "Secret", "name": "db", "namespace": "shop",
                                    "via": "/spec/template/spec/containers/0/env/0", "optional": false,
                                    "target": {"in_set": true, "wave": 0, "is_hook": false}}]);
            (r, input)
        })
        .collect()
}

fn best_of(runs: usize, mut f: impl FnMut()) -> Duration {
    (0..runs)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn per_item(d: Duration, n: usize) -> f64 {
    d.as_secs_f64() * 1e6 / n as f64
}

#[test]
#[ignore = "measurement; run with --release --ignored --nocapture"]
fn evaluation_cost_per_resource() {
    let dir = rule_dir();
    let n = 10_000;
    let items = resources(n);
    let inputs: Vec<Value> = items.iter().map(|(_, i)| i.clone()).collect();
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    println!("20 rules + 1 helper package, {n} resources, {cores} cores");

    for interpreter_only in [false, true] {
        let started = Instant::now();
        let set = PolicySet::load_with(
            dir.path(),
            &LoadOptions {
                interpreter_only,
                ..LoadOptions::default()
            },
        )
        .unwrap();
        let load = started.elapsed();
        let sample = if interpreter_only { 1_000 } else { n };

        // Best of three: the machine is shared, and interference only ever adds time.
        let mut reported = 0;
        let single = best_of(3, || {
            reported = inputs[..sample].iter().map(|i| set.evaluate(i).len()).sum();
        });
        let parallel = best_of(3, || {
            std::hint::black_box(set.evaluate_many(&inputs[..sample]));
        });
        let many = set.evaluate_many(&inputs[..sample]);

        let started = Instant::now();
        let findings: usize = items[..sample]
            .iter()
            .zip(many)
            .map(|((r, _), outcomes)| set.findings_from(r, outcomes).len())
            .sum();
        let resolve = started.elapsed();

        println!(
            "{:?}: load {:.1} ms | evaluate 1 thread {:.1} µs/resource | evaluate_many {:.1} µs/resource \
             ({:.0} ms per {sample}) | findings_from {:.2} µs/resource | {reported} outcomes, {findings} findings",
            set.backend(),
            load.as_secs_f64() * 1e3,
            per_item(single, sample),
            per_item(parallel, sample),
            parallel.as_secs_f64() * 1e3,
            per_item(resolve, sample),
        );
    }
}
