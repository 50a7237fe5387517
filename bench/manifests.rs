//! The benchmark manifest generator, shared by `benches/load_plan.rs`, `benches/evaluate.rs` and
//! the `gen_manifests` example that `bench/check_vs_checkov.sh` runs, so the criterion numbers
//! and the side-by-side comparison measure the same objects byte for byte.
//!
//! The stream mixes what real apps render, in a cycle of ten objects: a Namespace, two
//! ConfigMaps, a Secret, a PreSync hook Job, two Services and three Deployments (with env and
//! volume references to the ConfigMaps and Secret), spread over waves -2..4. Six objects in a
//! hundred carry a problem the built-in rules report (seed-000 style hook Jobs without a
//! deadline and with `restartPolicy: OnFailure`, unknown hook and delete-policy values,
//! `generateName` hooks that accumulate, non-integer sync waves, a delete policy on a non-hook),
//! so the benchmarks also pay for building findings, not only for clean objects.
//!
//! Included with `#[path]` rather than being a library module: it is benchmark input, not part
//! of syncguard.

#![allow(dead_code)] // each includer uses a different subset

use std::fmt::Write as _;
use std::path::Path;

/// Objects per generated file in [`write_tree`]: one ten-object cycle, about what a small Helm
/// chart renders.
pub const PER_FILE: usize = 10;

/// Object `i` of the stream, as one YAML document starting with `---`.
pub fn document(i: usize) -> String {
    let mut s = String::with_capacity(900);
    let ns = format!("team-{}", i % 20);
    let wave = (i % 7) as i64 - 2;
    match i % 10 {
        0 => {
            let _ = write!(
                s,
                "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {ns}-{i}\n"
            );
        }
        1 | 2 => {
            // SG110: a delete policy on a non-hook object is ignored by Argo CD.
            let stray = if i % 100 == 2 {
                "\n    argocd.argoproj.io/hook-delete-policy: HookSucceeded"
            } else {
                ""
            };
            let _ = write!(
                s,
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-{i}\n  namespace: {ns}\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"{stray}\ndata:\n  LOG_LEVEL: info\n  FEATURE_X: \"true\"\n"
            );
        }
        3 => {
            let _ = write!(
                s,
                "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: sec-{i}\n  namespace: {ns}\ntype: Opaque\nstringData:\n  password: hunter2\n"
            );
        }
        4 => s.push_str(&hook_job(i, &ns, wave)),
        5 | 6 => {
            let _ = write!(
                s,
                "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-{i}\n  namespace: {ns}\nspec:\n  selector:\n    app: app-{i}\n  ports:\n    - port: 80\n      targetPort: 8080\n"
            );
        }
        _ => {
            // SG107: "1.5" is not an integer, Argo CD silently uses wave 0.
            let (wave, tag) = if i % 100 == 7 {
                ("1.5".to_string(), "latest".to_string())
            } else {
                (wave.to_string(), i.to_string())
            };
            let _ = write!(
                s,
                "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i}\n  namespace: {ns}\n  labels:\n    app: app-{i}\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\nspec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: app-{i}\n  template:\n    metadata:\n      labels:\n        app: app-{i}\n    spec:\n      serviceAccountName: runner\n      containers:\n        - name: app\n          image: registry.example.com/app:{tag}\n          ports:\n            - containerPort: 8080\n          envFrom:\n            - configMapRef:\n                name: cfg-{}\n          env:\n            - name: PASSWORD\n              valueFrom:\n                secretKeyRef:\n                  name: sec-{}\n                  key: password\n          volumeMounts:\n            - name: config\n              mountPath: /etc/app\n      volumes:\n        - name: config\n          configMap:\n            name: cfg-{}\n",
                i - i % 10 + 1,
                i - i % 10 + 3,
                i - i % 10 + 2,
            );
        }
    }
    s
}

/// A PreSync hook Job; one in ten is a known hazard (see the module docs).
fn hook_job(i: usize, ns: &str, wave: i64) -> String {
    let secret = i - 1;
    // Defaults: a well-behaved hook.
    let mut name = format!("name: migrate-{i}");
    let mut hook = "PreSync";
    let mut delete = "BeforeHookCreation";
    let mut limits = "  backoffLimit: 2\n  activeDeadlineSeconds: 600\n";
    let mut restart = "Never";
    match i % 100 {
        // The seed-000 incident: no deadline, default back-off, OnFailure (SG101, SG102, SG103).
        4 => {
            limits = "";
            restart = "OnFailure";
        }
        // SG105: `presync` is not a hook type; Argo CD drops the annotation.
        14 => hook = "presync",
        // SG109: generateName with only BeforeHookCreation, completed Jobs pile up.
        24 => name = format!("generateName: migrate-{i}-"),
        // SG106: unknown delete policy, silently replaced by BeforeHookCreation.
        34 => delete = "OnSuccess",
        _ => {}
    }
    format!(
        "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  {name}\n  namespace: {ns}\n  annotations:\n    argocd.argoproj.io/hook: {hook}\n    argocd.argoproj.io/sync-wave: \"{wave}\"\n    argocd.argoproj.io/hook-delete-policy: {delete}\nspec:\n{limits}  template:\n    spec:\n      restartPolicy: {restart}\n      containers:\n        - name: migrate\n          image: registry.example.com/migrate:{i}\n          envFrom:\n            - secretRef:\n                name: sec-{secret}\n"
    )
}

/// The first `n` objects as one multi-document stream.
pub fn manifests(n: usize) -> String {
    let mut s = String::with_capacity(n * 800);
    for i in 0..n {
        s.push_str(&document(i));
    }
    s
}

/// Writes the first `n` objects into `dir` as `part-NNNNN.yaml` files of [`PER_FILE`] documents
/// each (the last one may be shorter). Returns the number of files written.
pub fn write_tree(dir: &Path, n: usize) -> std::io::Result<usize> {
    std::fs::create_dir_all(dir)?;
    let mut files = 0;
    for start in (0..n).step_by(PER_FILE) {
        let mut text = String::with_capacity(PER_FILE * 800);
        for i in start..n.min(start + PER_FILE) {
            text.push_str(&document(i));
        }
        std::fs::write(dir.join(format!("part-{:05}.yaml", start / PER_FILE)), text)?;
        files += 1;
    }
    Ok(files)
}
