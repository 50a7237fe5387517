//! `syncguard review` on the GitOps fixture of `tests/fixtures/gitops/`: the head adds a PreSync
//! hook that needs a Secret created later, changes a hook's command and moves a wave. Golden
//! files `tests/fixtures/golden/review-gitops.{txt,json,md}`; after an intended change,
//! `UPDATE_GOLDEN=1 cargo test --test review` and review the diff.

mod render_support;

use std::path::{Path, PathBuf};

use render_support::{git, golden, repository, syncguard, tools};

fn review(dir: &Path, tools: &(PathBuf, PathBuf), args: &[&str]) -> (i32, String, String) {
    let mut all: Vec<String> = vec!["review".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend([
        "--helm".to_string(),
        tools.0.display().to_string(),
        "--kustomize".into(),
        tools.1.display().to_string(),
    ]);
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let out = syncguard(dir, &all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_fixture_change_is_reviewed_in_text_json_and_markdown() {
    let Some(tools) = tools() else { return };
    let (repo, base, head) = repository(true);
    for (format, file) in [
        ("text", "review-gitops.txt"),
        ("json", "review-gitops.json"),
        ("markdown", "review-gitops.md"),
    ] {
        let (code, stdout, stderr) = review(
            repo.path(),
            &tools,
            &["--base", "main~1", "--format", format],
        );
        // The broken chart fails to render on both revisions alike: listed as not judged
        // (unchanged), not failing; the new blocking finding gives exit 1.
        assert_eq!(code, 1, "{format}: {stderr}");
        golden(file, &stdout);
        if format == "json" {
            let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
            assert_eq!(v["base"], base.as_str());
            assert_eq!(v["head"], head.as_str());
        }
    }
}

#[test]
fn each_change_of_the_head_is_reported() {
    let Some(tools) = tools() else { return };
    let (repo, _, _) = repository(true);
    let (_, stdout, _) = review(
        repo.path(),
        &tools,
        &["--base", "main~1", "--format", "json"],
    );
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let app = |name: &str| {
        v["applications"]
            .as_array()
            .expect("applications")
            .iter()
            .find(|a| a["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not in {v:#}"))
    };
    let web = app("web");
    // The new PreSync hook joins the sync in its first step...
    let added = &web["plan"]["added"];
    assert!(
        added
            .as_array()
            .expect("added")
            .iter()
            .any(|a| a["object"]["name"] == "storefront-seed"
                && a["head"]["phase"] == "PreSync"
                && a["head"]["hook"] == true),
        "{added:#}"
    );
    // ...and is the one new finding, blocking: its Secret is created in a later step.
    let new = v["findings"]["new"].as_array().expect("new");
    assert_eq!(new.len(), 1, "{new:?}");
    assert_eq!(new[0]["rule_id"], "SG201");
    assert_eq!(new[0]["resource"]["name"], "storefront-seed");
    assert_eq!(v["summary"]["findings_blocking"], 1);
    // The changed hook is named, and its diff is the command.
    assert_eq!(web["changed_hooks"][0]["name"], "storefront-migrate");
    let changed = web["objects"]
        .as_array()
        .expect("objects")
        .iter()
        .find(|o| o["change"] == "changed")
        .expect("a changed object");
    assert_eq!(
        changed["fields"][0]["path"],
        "/spec/template/spec/containers/0/command"
    );
    // The wave move.
    let moved = &app("config")["plan"]["moved"][0];
    assert_eq!(moved["object"]["name"], "prod-api-settings");
    assert_eq!(
        (
            moved["base"]["wave"].as_i64(),
            moved["head"]["wave"].as_i64()
        ),
        (Some(1), Some(-1))
    );
    // The ApplicationSet generates one more Application, which is rendered and listed as added.
    let services = app("services");
    assert_eq!(services["application_set"], true);
    assert_eq!(services["objects"][0]["change"], "added");
    assert_eq!(services["objects"][0]["object"]["name"], "svc-orders");
    assert_eq!(app("svc-orders")["status"], "added");
    // Unchanged Applications are not listed; the unchanged finding is counted as such.
    assert_eq!(v["applications"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["summary"]["findings_unchanged"], 1);
}

#[test]
fn exit_codes_follow_new_blocking_findings_and_errors() {
    let Some(tools) = tools() else { return };
    let (repo, _, _) = repository(true);
    let children = ["apps/children/web.yaml", "apps/children/config.yaml"];
    // Without the broken Application: exit 1 on the new blocking finding.
    let mut args = vec!["--base", "main~1"];
    args.extend(children);
    assert_eq!(review(repo.path(), &tools, &args).0, 1);
    // No change: nothing new, exit 0 — also with a warn threshold, the existing SG403 warning
    // counts only with --fail-on-existing.
    let same = [
        "--base",
        "main",
        "--fail-on",
        "warn",
        "apps/children/static.yaml",
        "apps/children/web.yaml",
    ];
    let (code, stdout, _) = review(repo.path(), &tools, &same);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("0 of 2 Applications changed"), "{stdout}");
    let mut existing = same.to_vec();
    existing.push("--fail-on-existing");
    assert_eq!(review(repo.path(), &tools, &existing).0, 1);
    // A base that does not exist: exit 2, said plainly, nothing left behind.
    let (code, _, stderr) = review(repo.path(), &tools, &["--base", "no-such-branch"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("base: revision \"no-such-branch\" does not exist"),
        "{stderr}"
    );
    let worktrees = git(repo.path(), &["worktree", "list"]);
    assert_eq!(worktrees.lines().count(), 1, "{worktrees}");
    assert_eq!(
        git(repo.path(), &["status", "--porcelain", "--ignored"]),
        ""
    );
}

/// The comment parts of a `--format markdown` stdout: each starts with its marker line.
fn parts_of(stdout: &str) -> Vec<&str> {
    let starts: Vec<usize> = stdout
        .match_indices("<!-- syncguard-review")
        .map(|(i, _)| i)
        .filter(|i| *i == 0 || stdout[..*i].ends_with('\n'))
        .collect();
    starts
        .iter()
        .enumerate()
        .map(|(k, at)| &stdout[*at..starts.get(k + 1).copied().unwrap_or(stdout.len())])
        .collect()
}

#[test]
fn a_500_object_change_continues_in_further_comments_each_within_the_budget() {
    let Some(tools) = tools() else { return };
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", render_support::REPO_URL]);
    let write_apps = |value: &str| {
        for app in 0..5 {
            let mut apps = format!(
                "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: bulk-{app}, namespace: argocd}}\n\
                 spec:\n  destination: {{namespace: bulk}}\n  source: {{repoURL: '{}', path: bulk/{app}}}\n",
                render_support::REPO_URL
            );
            apps.push('\n');
            std::fs::create_dir_all(root.join("apps")).expect("mkdir");
            std::fs::write(root.join(format!("apps/bulk-{app}.yaml")), apps).expect("write");
            std::fs::create_dir_all(root.join(format!("bulk/{app}"))).expect("mkdir");
            let mut objects = String::new();
            for n in 0..100 {
                objects.push_str(&format!(
                    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{n:03}}}\n\
                     data: {{a: '{value}', b: '{value}', c: '{value}', d: '{value}', note: 'unchanged {n}'}}\n"
                ));
            }
            std::fs::write(root.join(format!("bulk/{app}/objects.yaml")), objects).expect("write");
        }
    };
    write_apps("one");
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", "base"]);
    write_apps("two");
    git(root, &["commit", "-q", "-am", "head"]);
    for budget in [65_536, 4000] {
        let (code, stdout, stderr) = review(
            root,
            &tools,
            &[
                "--base",
                "main~1",
                "--format",
                "markdown",
                "--markdown-budget",
                &budget.to_string(),
            ],
        );
        assert_eq!(code, 0, "{stderr}");
        // 500 changed objects with their fields (over 100 KB) take several comments, each
        // within the budget and numbered; nothing is left out.
        let parts = parts_of(&stdout);
        let n = parts.len();
        assert!(n > 1, "{budget}: {stdout}");
        for (k, part) in parts.iter().enumerate() {
            assert!(
                part.len() <= budget,
                "{budget}: part {} is {} bytes",
                k + 1,
                part.len()
            );
            let marker = format!("<!-- syncguard-review part {} of {n} -->\n", k + 1);
            assert!(part.starts_with(&marker), "{part}");
        }
        assert!(
            parts[0].contains("5 of 5 Applications changed"),
            "{}",
            parts[0]
        );
        assert!(!stdout.contains("Truncated"), "{stdout}");
        assert_eq!(stdout.matches("\n! ConfigMap bulk/cm-").count(), 500);
        for field in ["a", "b", "c", "d"] {
            assert_eq!(
                stdout
                    .matches(&format!("\n+   /data/{field}: two\n"))
                    .count(),
                500
            );
        }
    }
}

/// A repository whose head breaks a file, adds a plugin Application, a PreSync hook that needs
/// a Secret of the Sync phase, a new image and changes 30 ConfigMaps: its comment needs
/// several parts at a small budget. Plain directories: no render tools needed.
fn over_budget() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let url = render_support::REPO_URL;
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", url]);
    let shop = |image: &str, value: &str, hook: bool| {
        write(
            root,
            "apps/shop.yaml",
            &application(
                "shop",
                "argocd",
                &format!("{{repoURL: '{url}', path: shop}}"),
                "shop",
            ),
        );
        write(
            root,
            "shop/web.yaml",
            &format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: web}}\n\
                 spec:\n  selector: {{matchLabels: {{app: web}}}}\n  template:\n    metadata: {{labels: {{app: web}}}}\n\
                 \x20   spec: {{containers: [{{name: web, image: '{image}'}}, {{name: proxy, image: 'envoy:1.30'}}]}}\n"
            ),
        );
        let mut cms = String::new();
        for n in 0..30 {
            cms.push_str(&format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings-{n:02}}}\n\
                 data: {{endpoint: 'https://{value}.example.com/api', mode: '{value}'}}\n"
            ));
        }
        write(root, "shop/settings.yaml", &cms);
        if hook {
            write(
                root,
                "shop/seed.yaml",
                "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: seed\n  annotations: {argocd.argoproj.io/hook: PreSync}\n\
                 spec:\n  activeDeadlineSeconds: 600\n  template:\n    spec:\n      restartPolicy: Never\n\
                 \x20     containers: [{name: seed, image: 'seed:1', envFrom: [{secretRef: {name: seed-credentials}}]}]\n\
                 ---\napiVersion: v1\nkind: Secret\nmetadata: {name: seed-credentials}\nstringData: {password: hunter2}\n",
            );
        }
    };
    shop("web:1.0", "blue", false);
    let mut commits = vec![commit(root, "base")];
    shop("web:1.1", "green", true);
    write(
        root,
        "apps/legacy.yaml",
        &application(
            "legacy",
            "argocd",
            &format!("{{repoURL: '{url}', path: legacy, plugin: {{name: vault}}}}"),
            "legacy",
        ),
    );
    write(root, "legacy/README.txt", "rendered by a plugin\n");
    write(
        root,
        "apps/broken.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: broken\nspec: [\n",
    );
    commits.push(commit(root, "head"));
    (dir, commits)
}

#[test]
fn a_review_over_the_budget_is_several_comments_in_order_errors_first_and_whole() {
    let (repo, c) = over_budget();
    let out = tempfile::tempdir().expect("temp dir");
    let first = out.path().join("comment.md");
    // Parts 5 and 6 of an earlier, longer review are removed: the files are this review's.
    for stale in ["comment.5.md", "comment.6.md"] {
        std::fs::write(out.path().join(stale), "old").expect("write");
    }
    let output = format!("markdown={}", first.display());
    let args = [
        "--base",
        &c[0],
        "--head",
        &c[1],
        "--format",
        "markdown",
        "--markdown-budget",
        "3000",
        "--output",
        &output,
    ];
    let (code, stdout, stderr) = review_plain(repo.path(), &args);
    // A file not read and an Application not judged on the head: incomplete, exit 2.
    assert_eq!(code, 2, "{stderr}\n{stdout}");
    let mut files = Vec::new();
    for k in 1.. {
        let path = if k == 1 {
            first.clone()
        } else {
            out.path().join(format!("comment.{k}.md"))
        };
        let Ok(text) = std::fs::read_to_string(&path) else {
            break;
        };
        files.push(text);
    }
    assert_eq!(files.concat(), stdout);
    assert_eq!(files.len(), 4, "{stdout}");
    assert!(!out.path().join("comment.6.md").exists());
    for (k, part) in files.iter().enumerate() {
        assert!(part.len() <= 3000, "part {} is {} bytes", k + 1, part.len());
        golden(&format!("review-parts-{}.md", k + 1), part);
    }
    // The order: what could not be judged and read, the table, the blocking finding, the plan
    // diff, the manifest diff; nothing is cut, so every changed ConfigMap is there.
    let order = [
        "### Not judged (1)",
        "### Not read on the head revision (1)",
        "| Application argocd/shop |",
        "### Blocking findings (1)",
        "### Sync plan changes (1)",
        "### Manifest changes (1)",
    ];
    let at: Vec<usize> = order
        .iter()
        .map(|h| {
            stdout
                .find(h)
                .unwrap_or_else(|| panic!("{h} missing:\n{stdout}"))
        })
        .collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{at:?}\n{stdout}");
    assert!(files[0].contains("apps/broken.yaml"), "{}", files[0]);
    assert!(
        files[0].contains("`web:1.0` → `web:1.1`"),
        "the summary table names the image change:\n{}",
        files[0]
    );
    assert_eq!(stdout.matches("\n! ConfigMap shop/settings-").count(), 30);

    // A budget too small for a part is refused, saying what is needed.
    let (code, _, stderr) = review_plain(
        repo.path(),
        &[
            "--base",
            &c[0],
            "--format",
            "markdown",
            "--markdown-budget",
            "500",
        ],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("at least 2048 bytes"), "{stderr}");
}

#[test]
fn sarif_marks_new_findings_and_points_into_the_chart() {
    let Some(tools) = tools() else { return };
    let (repo, _, _) = repository(true);
    let (_, stdout, _) = review(
        repo.path(),
        &tools,
        &["--base", "main~1", "--format", "sarif"],
    );
    let sarif: serde_json::Value = serde_json::from_str(&stdout).expect("SARIF is JSON");
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif-2.1.0.json"),
        )
        .expect("schema"),
    )
    .expect("schema JSON");
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .expect("schema compiles");
    let problems: Vec<String> = validator
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(problems.is_empty(), "{problems:#?}");
    let results = sarif["runs"][0]["results"].as_array().expect("results");
    let summary: Vec<(String, String, String)> = results
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap_or_default().to_string(),
                r["baselineState"].as_str().unwrap_or_default().to_string(),
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "SG201".to_string(),
                "new".to_string(),
                "charts/web/templates/seed-job.yaml".to_string()
            ),
            (
                "SG403".to_string(),
                "unchanged".to_string(),
                "manifests/static/namespace.yaml".to_string()
            ),
        ]
    );
    let rules: Vec<&str> = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(rules, ["SG201", "SG403"]);
    let indices: Vec<i64> = results
        .iter()
        .filter_map(|r| r["ruleIndex"].as_i64())
        .collect();
    assert_eq!(indices, [0, 1]);
}

/// `syncguard review ARGS` without render tools (the fixtures below are plain directories).
fn review_plain(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut all = vec!["review"];
    all.extend(args);
    let out = syncguard(dir, &all);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn commit(root: &Path, message: &str) -> String {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", message]);
    git(root, &["rev-parse", "HEAD"])
}

fn application(name: &str, namespace: &str, source: &str, destination: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name}, namespace: {namespace}}}\n\
         spec:\n  project: default\n  destination: {{server: 'https://kubernetes.default.svc', namespace: {destination}}}\n  source: {source}\n"
    )
}

fn hook(command: &str) -> String {
    format!(
        "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: migrate-\n  annotations: {{argocd.argoproj.io/hook: PreSync}}\n\
         spec:\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{{name: m, image: 'busybox:1.36', command: [{command}]}}]\n"
    )
}

fn config(value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cfg}}\ndata: {{x: '{value}'}}\n")
}

/// A repository of four commits, `origin` its remote:
/// 0. `web` in `argocd` (prod) and `web` in `argocd-stage`, each rendering a ConfigMap `cfg`;
///    prod with two `generateName` PreSync hooks; an ApplicationSet `web` in `argocd`.
/// 1. adds `legacy` (a config management plugin) and `charted` (a Helm chart repository that
///    cannot be reached): neither can be rendered.
/// 2. changes stage's ConfigMap and prod's second hook only.
/// 3. breaks prod's render (a file that is not YAML).
fn gitops_history() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let url = render_support::REPO_URL;
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", url]);
    let mut commits = Vec::new();
    write(
        root,
        "apps/prod-web.yaml",
        &application(
            "web",
            "argocd",
            &format!("{{repoURL: '{url}', path: web/prod}}"),
            "prod",
        ),
    );
    write(
        root,
        "apps/stage-web.yaml",
        &application(
            "web",
            "argocd-stage",
            &format!("{{repoURL: '{url}', path: web/stage}}"),
            "stage",
        ),
    );
    write(
        root,
        "apps/appset.yaml",
        &format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {{name: web, namespace: argocd}}\n\
             spec:\n  generators: [{{list: {{elements: [{{env: qa}}]}}}}]\n  template:\n    metadata: {{name: 'web-{{{{env}}}}'}}\n\
             \x20   spec:\n      project: default\n      destination: {{server: 'https://kubernetes.default.svc', namespace: qa}}\n\
             \x20     source: {{repoURL: '{url}', path: web/stage}}\n"
        ),
    );
    write(root, "web/prod/cfg.yaml", &config("1"));
    write(
        root,
        "web/prod/hooks.yaml",
        &format!("{}{}", hook("migrate, one"), hook("migrate, two")),
    );
    write(root, "web/stage/cfg.yaml", &config("1"));
    commits.push(commit(root, "two webs"));
    write(
        root,
        "apps/legacy.yaml",
        &application(
            "legacy",
            "argocd",
            &format!("{{repoURL: '{url}', path: legacy, plugin: {{name: vault}}}}"),
            "legacy",
        ),
    );
    write(root, "legacy/README.txt", "rendered by a plugin\n");
    write(
        root,
        "apps/charted.yaml",
        &application(
            "charted",
            "argocd",
            // Port 1 of loopback: nothing listens there.
            "{repoURL: 'http://127.0.0.1:1', chart: podinfo, targetRevision: 6.0.0}",
            "charted",
        ),
    );
    commits.push(commit(root, "unrenderable"));
    write(root, "web/stage/cfg.yaml", &config("2"));
    write(
        root,
        "web/prod/hooks.yaml",
        &format!("{}{}", hook("migrate, one"), hook("migrate, three")),
    );
    commits.push(commit(root, "change stage and a hook"));
    write(
        root,
        "web/prod/broken.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken\ndata: [\n",
    );
    commits.push(commit(root, "break prod"));
    (dir, commits)
}

fn json_of(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn app_entry<'a>(
    v: &'a serde_json::Value,
    kind: &str,
    namespace: &str,
    name: &str,
) -> Option<&'a serde_json::Value> {
    v["applications"]
        .as_array()?
        .iter()
        .find(|a| a["kind"] == kind && a["namespace"] == namespace && a["name"] == name)
}

#[test]
fn applications_are_namespace_and_name_and_generate_name_hooks_keep_their_place() {
    let (repo, c) = gitops_history();
    let (code, stdout, stderr) = review_plain(
        repo.path(),
        &["--base", &c[1], "--head", &c[2], "--format", "json"],
    );
    let v = json_of(&stdout);
    // legacy and charted are not judged on either revision, for the same reasons: not failing.
    assert_eq!(code, 0, "{stderr}\n{v:#}");
    // Every Application counts: two webs, the ApplicationSet, the one it generates, legacy
    // and charted.
    assert_eq!(v["summary"]["applications"], 6, "{v:#}");
    // Stage's change is stage's, and prod's is its hook only: the changed one, not the other.
    let stage = app_entry(&v, "Application", "argocd-stage", "web").expect("stage web");
    assert_eq!(stage["objects"][0]["change"], "changed", "{stage:#}");
    assert_eq!(stage["objects"][0]["object"]["name"], "cfg");
    let prod = app_entry(&v, "Application", "argocd", "web").expect("prod web");
    let changes = prod["objects"].as_array().expect("objects");
    assert_eq!(changes.len(), 1, "{prod:#}");
    assert_eq!(changes[0]["change"], "changed");
    assert_eq!(changes[0]["object"]["generate_name"], "migrate-");
    assert_eq!(changes[0]["object"]["position"], 2);
    assert_eq!(prod["changed_hooks"][0]["position"], 2);
    assert!(
        prod["plan"]["added"].as_array().is_some_and(Vec::is_empty),
        "{prod:#}"
    );
    // The ApplicationSet of the same name is its own entry, unchanged, so not listed; the
    // Application it generates renders stage's path, so it changed too.
    assert!(
        app_entry(&v, "ApplicationSet", "argocd", "web").is_none(),
        "{v:#}"
    );
    assert!(
        app_entry(&v, "Application", "argocd", "web-qa").is_some(),
        "{v:#}"
    );
    assert_eq!(v["applications"].as_array().map(Vec::len), Some(3), "{v:#}");
    let unchanged: Vec<&str> = v["not_judged"]
        .as_array()
        .expect("not_judged")
        .iter()
        .map(|n| n["standing"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(unchanged, ["unchanged", "unchanged"], "{v:#}");
    let (_, text, _) = review_plain(repo.path(), &["--base", &c[1], "--head", &c[2]]);
    assert!(
        text.contains("not judged on either revision (unchanged)"),
        "{text}"
    );
}

#[test]
fn what_cannot_be_rendered_is_listed_first_and_fails_the_run_unless_baselined() {
    // The chart is pulled with helm; without it the reason would be helm's absence.
    let Some(tools) = tools() else { return };
    let review_plain = |dir: &Path, args: &[&str]| review(dir, &tools, args);
    let (repo, c) = gitops_history();
    let (code, md, stderr) = review_plain(
        repo.path(),
        &["--base", &c[0], "--head", &c[1], "--format", "markdown"],
    );
    assert_eq!(code, 2, "{stderr}\n{md}");
    golden("review-not-judged.md", &md);
    let verdict = md.lines().nth(3).unwrap_or_default();
    assert!(verdict.starts_with("**Not judged:"), "{md}");
    assert!(!md.contains("No new blocking findings"), "{md}");
    let (code, text, _) = review_plain(repo.path(), &["--base", &c[0], "--head", &c[1]]);
    assert_eq!(code, 2);
    let first = text
        .find("Application argocd/legacy")
        .expect("legacy listed");
    assert!(
        first < text.find("Applications changed").expect("summary"),
        "{text}"
    );
    assert!(text.contains("plugin: source"), "{text}");
    assert!(
        text.contains("chart-repository-unreachable: source"),
        "{text}"
    );
    // The JSON output's baseline accepts them.
    let (_, stdout, _) = review_plain(
        repo.path(),
        &["--base", &c[0], "--head", &c[1], "--format", "json"],
    );
    let v = json_of(&stdout);
    assert_eq!(v["summary"]["applications_not_judged_failing"], 2, "{v:#}");
    let baseline = repo.path().join("baseline.json");
    std::fs::write(&baseline, v["baseline"].to_string()).expect("write");
    let baseline = baseline.display().to_string();
    let (code, text, stderr) = review_plain(
        repo.path(),
        &["--base", &c[0], "--head", &c[1], "--baseline", &baseline],
    );
    assert_eq!(code, 0, "{stderr}\n{text}");
    assert!(
        text.contains("not judged (accepted by the baseline)"),
        "{text}"
    );
    // A baseline for the plugin only leaves the chart failing.
    std::fs::write(
        repo.path().join("plugin-only.json"),
        r#"{"version": 1, "not_judged": [{"namespace": "argocd", "name": "legacy", "reason": "plugin"}]}"#,
    )
    .expect("write");
    let (code, _, _) = review_plain(
        repo.path(),
        &[
            "--base",
            &c[0],
            "--head",
            &c[1],
            "--baseline",
            "plugin-only.json",
        ],
    );
    assert_eq!(code, 2);
    // SARIF says so too.
    let (_, sarif, _) = review_plain(
        repo.path(),
        &["--base", &c[0], "--head", &c[1], "--format", "sarif"],
    );
    let s = json_of(&sarif);
    let invocation = &s["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{s:#}");
    assert_eq!(
        invocation["toolExecutionNotifications"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

#[test]
fn a_head_that_no_longer_renders_is_an_error_not_a_removal() {
    let (repo, c) = gitops_history();
    let (code, stdout, stderr) = review_plain(
        repo.path(),
        &["--base", &c[2], "--head", &c[3], "--format", "json"],
    );
    assert_eq!(code, 2, "{stderr}");
    let v = json_of(&stdout);
    assert!(
        app_entry(&v, "Application", "argocd", "web").is_none(),
        "{v:#}"
    );
    let prod = v["not_judged"]
        .as_array()
        .expect("not_judged")
        .iter()
        .find(|n| n["namespace"] == "argocd" && n["name"] == "web")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert_eq!(prod["rendered_on_base"], true);
    assert_eq!(prod["standing"], "new");
    assert_eq!(prod["reasons"][0]["reason"], "render-error");
    // The base's findings of prod are not "fixed".
    assert!(
        v["findings"]["fixed"]
            .as_array()
            .expect("fixed")
            .iter()
            .all(|f| f["application"] != "web"),
        "{v:#}"
    );
    // Stage, an Application of the same name elsewhere, is judged as before.
    assert_eq!(v["summary"]["applications"], 6, "{v:#}");
}

#[test]
fn each_revision_is_its_commit_not_the_working_tree() {
    let (repo, c) = gitops_history();
    let root = repo.path();
    // An untracked Application and an uncommitted edit in the working tree...
    write(
        root,
        "apps/untracked.yaml",
        &application(
            "untracked",
            "argocd",
            "{repoURL: 'https://x.invalid/r.git', path: x}",
            "x",
        ),
    );
    write(root, "web/stage/cfg.yaml", &config("working tree"));
    let apps = std::fs::canonicalize(root.join("apps")).expect("canonical");
    let apps = apps.display().to_string();
    // ...are in neither revision, also when PATH is absolute.
    for args in [
        vec![
            "--base",
            c[1].as_str(),
            "--head",
            c[2].as_str(),
            "--format",
            "json",
        ],
        vec![
            "--base",
            c[1].as_str(),
            "--head",
            c[2].as_str(),
            "--format",
            "json",
            apps.as_str(),
        ],
    ] {
        let (code, stdout, stderr) = review_plain(root, &args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        let v = json_of(&stdout);
        assert_eq!(v["summary"]["applications"], 6, "{args:?}: {v:#}");
        let stage = app_entry(&v, "Application", "argocd-stage", "web").expect("stage");
        assert_eq!(stage["objects"][0]["fields"][0]["head"], "2", "{stage:#}");
    }
    // A path outside the repository is refused.
    let outside = tempfile::tempdir().expect("temp dir");
    let (code, _, stderr) = review_plain(
        root,
        &["--base", &c[1], outside.path().to_str().expect("utf-8")],
    );
    assert_eq!(code, 2);
    assert!(stderr.contains("is not inside the repository"), "{stderr}");
}

fn waved_application(name: &str, wave: i64, path: &str) -> String {
    let url = render_support::REPO_URL;
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\n  annotations: {{argocd.argoproj.io/sync-wave: '{wave}'}}\n\
         spec:\n  project: default\n  destination: {{server: 'https://kubernetes.default.svc', namespace: {name}}}\n  source: {{repoURL: '{url}', path: {path}}}\n"
    )
}

/// An app-of-apps `root` (in `root/`) holding `crds`, which installs the Certificate CRD, and —
/// from the second commit on — `web`, whose Certificate needs it; `web`'s sync-wave is first 1
/// (after `crds`), then -1 (before it).
fn crds_from_another_application() -> (tempfile::TempDir, Vec<String>) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let url = render_support::REPO_URL;
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", url]);
    write(
        root,
        "root/root.yaml",
        &application(
            "root",
            "argocd",
            &format!("{{repoURL: '{url}', path: apps}}"),
            "argocd",
        ),
    );
    write(
        root,
        "apps/crds.yaml",
        &waved_application("crds", 0, "crds"),
    );
    write(
        root,
        "crds/certificate-crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: certificates.cert-manager.io}\n\
         spec:\n  group: cert-manager.io\n  names: {kind: Certificate, plural: certificates}\n  scope: Namespaced\n\
         \x20 versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]\n",
    );
    // A Certificate beside its CRD in one Application: Argo CD writes no tracking id on a CRD,
    // yet it is that Application's.
    write(
        root,
        "crds/own-cert.yaml",
        "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: own-tls, namespace: crds}\n\
         spec: {secretName: own-tls, dnsNames: [crds.example.com], issuerRef: {name: letsencrypt, kind: ClusterIssuer}}\n",
    );
    let mut commits = vec![commit(root, "crds")];
    write(root, "apps/web.yaml", &waved_application("web", 1, "web"));
    write(
        root,
        "web/cert.yaml",
        "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata: {name: web-tls}\n\
         spec: {secretName: web-tls, dnsNames: [web.example.com], issuerRef: {name: letsencrypt, kind: ClusterIssuer}}\n",
    );
    commits.push(commit(root, "web after crds"));
    write(root, "apps/web.yaml", &waved_application("web", -1, "web"));
    commits.push(commit(root, "web before crds"));
    (dir, commits)
}

#[test]
fn a_crd_another_application_installs_satisfies_a_custom_resource_synced_after_it() {
    let Some(_tools) = tools() else { return };
    let (repo, c) = crds_from_another_application();
    let (code, stdout, stderr) = review_plain(
        repo.path(),
        &["--base", &c[0], "--head", &c[1], "--format", "json"],
    );
    let v = json_of(&stdout);
    assert_eq!(code, 0, "{stderr}\n{v:#}");
    // `crds` is in an earlier wave, but nothing makes the parent wait for it (no health check
    // for Applications in argocd-cm): a low note naming it, not "the CRD is not installed".
    let sg203: Vec<&serde_json::Value> = v["findings"]["new"]
        .as_array()
        .expect("new findings")
        .iter()
        .filter(|f| f["rule_id"] == "SG203")
        .collect();
    assert_eq!(sg203.len(), 1, "{v:#}");
    assert_eq!(sg203[0]["severity"], "low", "{v:#}");
    // The Certificate beside its CRD draws nothing, on either revision.
    for kind in ["new", "unchanged"] {
        let own = v["findings"][kind]
            .as_array()
            .expect("findings")
            .iter()
            .any(|f| f["rule_id"] == "SG203" && f["resource"]["name"] == "own-tls");
        assert!(!own, "{kind}: {v:#}");
    }
    let message = sg203[0]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("Application crds installs it"),
        "{message}"
    );

    // `web` moved before `crds`: with no health check for Applications the parent applies
    // both waves at once, so on a new cluster web may sync before the CRD exists (low).
    let (code, stdout, stderr) = review_plain(
        repo.path(),
        &["--base", &c[0], "--head", &c[2], "--format", "markdown"],
    );
    assert_eq!(code, 0, "a warning does not block: {stderr}\n{stdout}");
    assert!(
        stdout.contains("Application crds installs it, in a later sync-wave of the app-of-apps, but argocd-cm gives Applications no health check"),
        "{stdout}"
    );
    golden("review-crd-from-another-application.md", &stdout);
}

/// A review stopped by SIGTERM (a CI runner cancelling the job) while it renders leaves
/// nothing behind: no worktree registered in the repository, no directory in `$TMPDIR`, no
/// render still running; it ends with 143 as a shell reports it.
#[test]
fn sigterm_removes_the_worktrees_temp_dirs_and_running_renders() {
    let dir = tempfile::tempdir().expect("temp");
    let root = dir.path().join("repo");
    std::fs::create_dir(&root).expect("mkdir");
    git(&root, &["init", "-q", "-b", "main"]);
    git(
        &root,
        &["remote", "add", "origin", "https://example.com/gitops"],
    );
    write(
        &root,
        "apps/web.yaml",
        &application(
            "web",
            "argocd",
            "{repoURL: 'https://example.com/gitops', path: chart}",
            "web",
        ),
    );
    write(
        &root,
        "chart/Chart.yaml",
        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    );
    let base = commit(&root, "base");
    write(&root, "chart/values.yaml", "x: 1\n");
    commit(&root, "head");
    // A helm that never finishes, and tells through a file that it has started.
    let started = dir.path().join("helm-started");
    let helm = dir.path().join("helm");
    std::fs::write(
        &helm,
        format!(
            "#!/bin/sh\necho $$ > '{}'\nexec sleep 300\n",
            started.display()
        ),
    )
    .expect("helm");
    std::fs::set_permissions(&helm, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .current_dir(&root)
        .args(["review", "--base", &base, "apps/", "--helm"])
        .arg(&helm)
        .env("TMPDIR", &tmp)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("review starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the render never started"
        );
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!("the review ended ({status}) before its render started: {err}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let sleeper: i32 = std::fs::read_to_string(&started)
        .expect("pid")
        .trim()
        .parse()
        .expect("a pid");
    // The checkout and both revisions' worktrees (they render at once).
    assert_eq!(git(&root, &["worktree", "list"]).lines().count(), 3);
    // SAFETY: kill(2) with plain integers; the pid is our own child's.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGTERM);
    }
    let out = child.wait_with_output().expect("review ends");
    assert_eq!(
        out.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        git(&root, &["worktree", "list"]).lines().count(),
        1,
        "a worktree is still registered"
    );
    let left: Vec<_> = std::fs::read_dir(&tmp).expect("tmp").collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
    // The render's process group was killed: the sleeping helm is gone (or a zombie of init).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let state = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap_or_default();
    assert!(
        state.is_empty() || state.split_whitespace().nth(2) == Some("Z"),
        "the render still runs: {state}"
    );
}

/// A repository with `origin` [`ORIGIN`] and the given files, committed.
const ORIGIN: &str = "https://git.example.com/corpus/r.git";

fn small_repository(files: &[(&str, String)]) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    git(root, &["init", "-q", "-b", "main"]);
    git(root, &["remote", "add", "origin", ORIGIN]);
    for (path, text) in files {
        write(root, path, text);
    }
    let base = commit(root, "base");
    (dir, base)
}

fn source(path: &str) -> String {
    format!("{{repoURL: '{ORIGIN}', path: {path}}}")
}

/// Found on public repositories (the review corpus): two files defining one Application. Argo
/// CD, like `kubectl apply` of the files, ends with the last; a change to it must show.
#[test]
fn of_two_applications_of_one_identity_the_last_is_reviewed() {
    let (repo, base) = small_repository(&[
        (
            "apps/a1.yaml",
            application("web", "argocd", &source("w1"), "shop"),
        ),
        (
            "apps/a2.yaml",
            application("web", "argocd", &source("w2"), "shop"),
        ),
        ("w1/cm.yaml", config("one")),
        ("w2/cm.yaml", config("two")),
    ]);
    write(repo.path(), "w2/cm.yaml", &config("changed"));
    commit(repo.path(), "change the second");
    let (code, stdout, stderr) =
        review_plain(repo.path(), &["--base", &base, "--format", "json", "apps/"]);
    assert_eq!(code, 0, "{stderr}");
    let v = json_of(&stdout);
    assert_eq!(v["summary"]["applications_changed"], 1, "{v:#}");
    let web = app_entry(&v, "Application", "argocd", "web").expect("web changed");
    assert_eq!(web["origin"], "apps/a2.yaml:1", "{web:#}");
}

/// An unchanged Application that cannot be rendered on either revision is unchanged: its reason
/// names no temporary worktree (whose name differs between the revisions and made it "new").
#[test]
fn an_unchanged_unrenderable_application_does_not_fail_the_run() {
    let (repo, base) = small_repository(&[
        (
            "apps/web.yaml",
            application("web", "argocd", &source("missing"), "shop"),
        ),
        ("README.md", "one\n".into()),
    ]);
    write(repo.path(), "README.md", "two\n");
    commit(repo.path(), "docs");
    let (code, stdout, stderr) =
        review_plain(repo.path(), &["--base", &base, "--format", "json", "apps/"]);
    let v = json_of(&stdout);
    assert_eq!(code, 0, "{stderr}\n{v:#}");
    let reason = v["not_judged"][0].to_string();
    assert!(reason.contains("unchanged"), "{reason}");
    assert!(
        reason.contains("is not a directory of the repository"),
        "{reason}"
    );
    assert!(
        !reason.contains("/tmp") && !reason.contains("syncguard-"),
        "{reason}"
    );
}

/// `--repo URL=<this checkout>` (the reviewed repository under the URL its Applications use)
/// renders each revision's commit, not the working tree for both.
#[test]
fn repo_mapped_to_the_checkout_itself_still_reviews_each_commit() {
    let other = "https://git.example.com/corpus/other-name.git";
    let (repo, base) = small_repository(&[
        (
            "apps/web.yaml",
            application(
                "web",
                "argocd",
                &format!("{{repoURL: '{other}', path: w}}"),
                "shop",
            ),
        ),
        ("w/cm.yaml", config("one")),
    ]);
    write(repo.path(), "w/cm.yaml", &config("two"));
    commit(repo.path(), "change");
    let mapping = format!("{other}=.");
    let (code, stdout, stderr) = review_plain(
        repo.path(),
        &[
            "--base", &base, "--format", "json", "--repo", &mapping, "apps/",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let v = json_of(&stdout);
    assert_eq!(v["summary"]["applications_changed"], 1, "{v:#}");
}

/// A kustomization beside the Applications whose patch targets `kind: Application` is not a
/// broken Application file.
#[test]
fn a_kustomization_patching_applications_is_not_an_unreadable_application() {
    let (repo, base) = small_repository(&[
        ("apps/web.yaml", application("web", "argocd", &source("w"), "shop")),
        (
            "apps/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [web.yaml]\n\
             patches:\n- target: {kind: Application, name: web}\n  patch: |-\n    - {op: replace, path: /spec/source/path, value: w}\n"
                .into(),
        ),
        ("w/cm.yaml", config("one")),
    ]);
    write(repo.path(), "w/cm.yaml", &config("two"));
    commit(repo.path(), "change");
    let (code, stdout, stderr) =
        review_plain(repo.path(), &["--base", &base, "--format", "json", "apps/"]);
    let v = json_of(&stdout);
    assert_eq!(code, 0, "{stderr}\n{v:#}");
    assert_eq!(v["summary"]["applications_changed"], 1, "{v:#}");
}

/// A review of a path that holds no Application on either revision reviewed nothing: an input
/// error that says so, not "all clear".
#[test]
fn a_path_without_applications_is_an_error_not_all_clear() {
    let (repo, base) = small_repository(&[("docs/README.md", "one\n".into())]);
    write(repo.path(), "docs/README.md", "two\n");
    commit(repo.path(), "docs");
    let (code, _, stderr) = review_plain(repo.path(), &["--base", &base, "docs/"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("no Argo CD Application or ApplicationSet under docs"),
        "{stderr}"
    );
}

/// A finding nobody can act on (a Helm test hook Argo CD never runs: SG108, info) is counted in
/// the comment and the text view, not listed, and never blocks; `--show-info` lists it, and the
/// JSON report always carries it.
#[test]
fn info_findings_are_counted_in_the_comment_not_listed_unless_asked() {
    let (repo, base) = small_repository(&[
        (
            "apps/web.yaml",
            application("web", "argocd", &source("w"), "shop"),
        ),
        ("w/cm.yaml", config("one")),
    ]);
    write(
        repo.path(),
        "w/test.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web-test\n  annotations: {helm.sh/hook: test}\n\
         spec:\n  restartPolicy: Never\n  containers: [{name: t, image: 'busybox:1.36'}]\n",
    );
    commit(repo.path(), "a helm test hook");
    let args = |extra: &[&'static str]| {
        let mut a = vec!["--base", base.as_str(), "apps/"];
        a.extend_from_slice(extra);
        a
    };
    let (code, md, stderr) = review_plain(repo.path(), &args(&["--format", "markdown"]));
    assert_eq!(code, 0, "{stderr}\n{md}");
    assert!(!md.contains("SG108"), "{md}");
    assert!(
        md.contains("1 new and 0 fixed `info` findings are not shown"),
        "{md}"
    );
    let (_, text, _) = review_plain(repo.path(), &args(&["--format", "text"]));
    assert!(!text.contains("SG108"), "{text}");
    assert!(
        text.contains("New findings: 1 info not shown (--show-info"),
        "{text}"
    );
    let (code, shown, _) =
        review_plain(repo.path(), &args(&["--format", "markdown", "--show-info"]));
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("**SG108** (audit, info)"), "{shown}");
    assert!(!shown.contains("are not shown"), "{shown}");
    let (_, json, _) = review_plain(repo.path(), &args(&["--format", "json"]));
    let v = json_of(&json);
    let rules: Vec<&str> = v["findings"]["new"]
        .as_array()
        .expect("new findings")
        .iter()
        .filter_map(|f| f["rule_id"].as_str())
        .collect();
    assert_eq!(rules, ["SG108"], "{v:#}");
}
