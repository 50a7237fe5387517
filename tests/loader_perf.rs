//! A quick timing of the loader on a big Helm-style stream (the criterion bench comes later).
//!
//! Run it in release: `cargo test --release --test loader_perf -- --ignored --nocapture`.

use std::time::Instant;

use syncguard::manifest::{load_paths, load_str};

/// A 30-line Deployment as `helm template` renders it.
fn deployment(i: usize) -> String {
    format!(
        r#"---
# Source: app/templates/deploy-{i}.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-{i}
  namespace: prod
  labels:
    app.kubernetes.io/name: app-{i}
  annotations:
    argocd.argoproj.io/sync-wave: "{wave}"
spec:
  replicas: 3
  selector:
    matchLabels:
      app: app-{i}
  template:
    metadata:
      labels:
        app: app-{i}
    spec:
      serviceAccountName: sa-{i}
      containers:
        - name: app
          image: "registry.example.com/app:{i}"
          ports:
            - containerPort: 8080
          envFrom:
            - secretRef:
                name: secret-{i}
          resources:
            limits: {{cpu: 500m, memory: 256Mi}}
"#,
        wave = i % 5
    )
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn ten_thousand_deployments_load_quickly() {
    let text: String = (0..10_000).map(deployment).collect();
    let lines = text.lines().count();
    let mut best = f64::MAX;
    for _ in 0..5 {
        let started = Instant::now();
        let loaded = load_str("big.yaml", &text);
        let elapsed = started.elapsed().as_secs_f64();
        best = best.min(elapsed);
        assert!(loaded.errors.is_empty());
        assert_eq!(loaded.resources.len(), 10_000);
        println!(
            "10,000 Deployments, {lines} lines, {} bytes: {:.1} ms",
            text.len(),
            elapsed * 1e3
        );
    }
    println!("best: {:.1} ms", best * 1e3);
}

#[test]
#[ignore = "timing; run in release with --ignored --nocapture"]
fn ten_thousand_files_load_quickly() {
    let dir = tempfile::tempdir().expect("a temp dir");
    for i in 0..10_000 {
        let path = dir.path().join(format!("deploy-{i:05}.yaml"));
        std::fs::write(path, deployment(i)).expect("a written file");
    }
    let paths = [dir.path().to_path_buf()];
    for _ in 0..5 {
        let started = Instant::now();
        let loaded = load_paths(&paths);
        let elapsed = started.elapsed().as_secs_f64();
        assert!(loaded.errors.is_empty());
        assert_eq!(loaded.resources.len(), 10_000);
        println!("10,000 files of one Deployment: {:.1} ms", elapsed * 1e3);
    }
}
