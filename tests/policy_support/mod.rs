//! Builders shared by the policy integration tests: Kubernetes objects as JSON, and the Rego input
//! document built the way the pipeline builds it (`resource`, `operation`, `sync` facts).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use syncguard::manifest::{Origin, Position};
use syncguard::model::Resource;
use syncguard::model::argo::SyncFacts;
use syncguard::policy::{LoadOptions, PolicySet};

/// `tests/fixtures/policies/<name>`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/policies")
        .join(name)
}

/// The fixture loaded once per backend: VM (default) and interpreter.
pub fn both_backends(name: &str) -> Vec<PolicySet> {
    let vm = PolicySet::load(&fixture(name)).unwrap();
    let interpreter = PolicySet::load_with(
        &fixture(name),
        &LoadOptions {
            interpreter_only: true,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    vec![vm, interpreter]
}

/// A Kubernetes object under construction.
#[derive(Clone)]
pub struct Obj(pub Value);

impl Obj {
    pub fn new(api_version: &str, kind: &str, name: &str) -> Self {
        Obj(json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name}}))
    }

    /// A Job with one container and restartPolicy Never.
    pub fn job(name: &str) -> Self {
        let mut o = Self::new("batch/v1", "Job", name);
        o.0["spec"] = json!({"backoffLimit": 2, "template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": "migrate:1.0"}]}}});
        o
    }

    pub fn config_map(name: &str) -> Self {
        let mut o = Self::new("v1", "ConfigMap", name);
        o.0["data"] = json!({"k": "v"});
        o
    }

    pub fn namespace(mut self, ns: &str) -> Self {
        self.0["metadata"]["namespace"] = json!(ns);
        self
    }

    pub fn annotation(mut self, key: &str, value: &str) -> Self {
        self.0["metadata"]["annotations"][key] = json!(value);
        self
    }

    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0["metadata"]["labels"][key] = json!(value);
        self
    }

    pub fn hook(self, kind: &str) -> Self {
        self.annotation("argocd.argoproj.io/hook", kind)
    }

    /// Sets a field by JSON pointer, creating objects on the way.
    pub fn set(mut self, pointer: &str, value: Value) -> Self {
        let mut cur = &mut self.0;
        let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
        for (i, t) in tokens.iter().enumerate() {
            if i + 1 == tokens.len() {
                cur[*t] = value;
                break;
            }
            cur = &mut cur[*t];
        }
        self
    }

    pub fn resource(&self) -> Resource {
        Resource::from_value(self.0.clone(), None).unwrap()
    }

    /// The resource with an origin, as if it was read from `file` at the given line, with every
    /// listed pointer positioned on its own line.
    pub fn resource_from(&self, file: &str, start: u32, pointers: &[(&str, u32)]) -> Resource {
        let mut positions: Vec<(Box<str>, Position)> = vec![("".into(), pos(start))];
        positions.extend(pointers.iter().map(|(p, l)| ((*p).into(), pos(*l))));
        let origin = Origin::new(file.into(), 0, pos(start), None, positions);
        Resource::from_value(self.0.clone(), Some(Arc::new(origin))).unwrap()
    }
}

fn pos(line: u32) -> Position {
    Position { line, column: 1 }
}

/// The input document for a resource, shaped like DESIGN.md §3.
pub fn input_for(r: &Resource) -> Value {
    json!({
        "resource": r.raw,
        "operation": "CHECK",
        "sync": serde_json::to_value(SyncFacts::of(r)).unwrap(),
        "refs": [],
        "context": {"source": "check", "dry_run": true},
    })
}
