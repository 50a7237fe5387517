//! The CI integrations' scripts, run here as CI runs them: `integrations/review.sh` (the GitHub
//! Action's and the GitLab job's review step), `integrations/gitlab/job.sh`,
//! `integrations/upsert-comment.py` against a local stub of the GitHub and GitLab APIs (the
//! real ones cannot be reached from here), and the structure of `action.yml`, the GitLab template
//! and `.pre-commit-hooks.yaml` (every script and input they name exists; the pre-commit hook's
//! own command line run on the fixture).

mod render_support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use render_support::{repository, tools};
use serde_json::{Value, json};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> Option<&'static str> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "python3 is needed by the integrations"
        );
        eprintln!("skipped: no python3");
    }
    ok.then_some("python3")
}

/// One request the stub received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

type Route = dyn Fn(&str, &str, &Value) -> (u16, Value) + Send + Sync;

/// A local HTTP stub: answers every request with `route(method, path, body)` and records it.
fn stub(route: Box<Route>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (method, path) = (
                parts.next().unwrap_or_default().to_string(),
                parts.next().unwrap_or_default().to_string(),
            );
            let mut headers = Vec::new();
            let mut length = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.trim().split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
                }
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let (status, answer) = route(&method, &path, &body);
            log.lock().expect("log").push(Seen {
                method,
                path,
                headers,
                body,
            });
            // 204 No Content, as both APIs answer a DELETE, has no body.
            let text = if status == 204 {
                String::new()
            } else {
                answer.to_string()
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                text.len()
            );
        }
    });
    (url, seen)
}

fn comment_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("comment.md");
    std::fs::write(&path, text).expect("write");
    path
}

fn upsert(python: &str, provider: &str, body: &Path, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(python);
    c.arg(root().join("integrations/upsert-comment.py"))
        .args(["--provider", provider, "--body"])
        .arg(body)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("python3 runs")
}

#[test]
fn the_github_comment_is_created_once_then_updated_in_place() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let body = comment_file(
        dir.path(),
        "<!-- syncguard-review -->\n## syncguard review\nnew\n",
    );
    // Page 1 is full of other comments, page 2 holds ours: it is found and updated.
    let (url, seen) = stub(Box::new(|method, path, _| match (method, path) {
        ("GET", p) if p.ends_with("page=1") => (
            200,
            Value::Array((0..100).map(|i| json!({"id": i, "body": "lgtm"})).collect()),
        ),
        ("GET", _) => (
            200,
            json!([{"id": 4242, "body": "<!-- syncguard-review -->\nold"}]),
        ),
        _ => (200, json!({"id": 4242})),
    }));
    let env = [
        ("GITHUB_API_URL", url.as_str()),
        ("GITHUB_REPOSITORY", "org/gitops"),
        ("GITHUB_TOKEN", "t0ken"),
    ];
    let event = dir.path().join("event.json");
    std::fs::write(
        &event,
        r#"{"pull_request": {"number": 17, "base": {"sha": "abc"}}}"#,
    )
    .expect("event");
    let mut with_event = env.to_vec();
    with_event.push(("GITHUB_EVENT_PATH", event.to_str().expect("utf-8")));
    let out = upsert(python, "github", &body, &with_event);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = seen.lock().expect("log").clone();
    let calls: Vec<(String, String)> = requests
        .iter()
        .map(|s| (s.method.clone(), s.path.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            (
                "GET".to_string(),
                "/repos/org/gitops/issues/17/comments?per_page=100&page=1".to_string()
            ),
            (
                "GET".to_string(),
                "/repos/org/gitops/issues/17/comments?per_page=100&page=2".to_string()
            ),
            (
                "PATCH".to_string(),
                "/repos/org/gitops/issues/comments/4242".to_string()
            ),
        ]
    );
    assert_eq!(
        requests[2].body["body"],
        "<!-- syncguard-review -->\n## syncguard review\nnew\n"
    );
    assert!(
        requests[0]
            .headers
            .contains(&("authorization".into(), "Bearer t0ken".into()))
    );

    // No comment of ours yet: one is created.
    let (url, seen) = stub(Box::new(|method, _, _| match method {
        "GET" => (200, json!([{"id": 1, "body": "first!"}])),
        _ => (201, json!({"id": 2})),
    }));
    let env = [
        ("GITHUB_API_URL", url.as_str()),
        ("GITHUB_REPOSITORY", "org/gitops"),
        ("GITHUB_TOKEN", "t0ken"),
    ];
    let mut c = Command::new(python);
    let out = c
        .arg(root().join("integrations/upsert-comment.py"))
        .args(["--provider", "github", "--number", "9", "--body"])
        .arg(&body)
        .envs(env)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = seen
        .lock()
        .expect("log")
        .last()
        .cloned()
        .expect("a request");
    assert_eq!(
        (last.method.as_str(), last.path.as_str()),
        ("POST", "/repos/org/gitops/issues/9/comments")
    );
}

#[test]
fn the_gitlab_note_is_updated_and_api_errors_are_named() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let body = comment_file(dir.path(), "<!-- syncguard-review -->\nreview\n");
    let (url, seen) = stub(Box::new(|method, _, _| match method {
        "GET" => (
            200,
            json!([{"id": 7, "body": "<!-- syncguard-review -->\nold"}]),
        ),
        _ => (200, json!({"id": 7})),
    }));
    let api = format!("{url}/api/v4");
    let env = [
        ("CI_API_V4_URL", api.as_str()),
        ("CI_PROJECT_ID", "42"),
        ("CI_MERGE_REQUEST_IID", "3"),
        ("SYNCGUARD_GITLAB_TOKEN", "glpat"),
    ];
    let out = upsert(python, "gitlab", &body, &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = seen.lock().expect("log").clone();
    assert_eq!(requests[1].method, "PUT");
    assert_eq!(
        requests[1].path,
        "/api/v4/projects/42/merge_requests/3/notes/7"
    );
    assert!(
        requests[0]
            .headers
            .contains(&("private-token".into(), "glpat".into()))
    );

    // The API refuses: exit 2 and the answer is shown.
    let (url, _) = stub(Box::new(|_, _, _| {
        (403, json!({"message": "403 Forbidden"}))
    }));
    let api = format!("{url}/api/v4");
    let env = [
        ("CI_API_V4_URL", api.as_str()),
        ("CI_PROJECT_ID", "42"),
        ("CI_MERGE_REQUEST_IID", "3"),
        ("SYNCGUARD_GITLAB_TOKEN", "glpat"),
    ];
    let out = upsert(python, "gitlab", &body, &env);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("HTTP 403"),
        "{out:?}"
    );
    // A body that is not a syncguard comment is refused before any request.
    let other = comment_file(dir.path(), "hello\n");
    let out = upsert(python, "gitlab", &other, &env);
    assert_eq!(out.status.code(), Some(2));
}

/// The comments of one pull request, as the fake comment API below keeps them: id and body, in
/// the order they were posted.
type Thread = Arc<Mutex<Vec<(u64, String)>>>;

/// A fake of GitHub's issue-comment API or GitLab's merge-request-note API for pull request 17 /
/// merge request 3 of project `org/gitops` / 42: lists (100 a page), creates, updates and
/// deletes comments in `thread`, and answers 404 to anything else.
fn comment_api(provider: &str, thread: Thread) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let (list, item, update) = match provider {
        "github" => (
            "/repos/org/gitops/issues/17/comments",
            "/repos/org/gitops/issues/comments/",
            "PATCH",
        ),
        _ => (
            "/api/v4/projects/42/merge_requests/3/notes",
            "/api/v4/projects/42/merge_requests/3/notes/",
            "PUT",
        ),
    };
    let next = Arc::new(Mutex::new(1000_u64));
    stub(Box::new(move |method, path, body| {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let mut comments = thread.lock().expect("thread");
        let id = path
            .strip_prefix(item)
            .and_then(|id| id.parse::<u64>().ok());
        let at = id.and_then(|id| comments.iter().position(|(c, _)| *c == id));
        match (method, at) {
            ("GET", _) if path == list => {
                let page: usize = query
                    .split('&')
                    .find_map(|kv| kv.strip_prefix("page="))
                    .and_then(|p| p.parse().ok())
                    .unwrap_or(1);
                let batch: Vec<Value> = comments
                    .iter()
                    .skip((page - 1) * 100)
                    .take(100)
                    .map(|(id, body)| json!({"id": id, "body": body}))
                    .collect();
                (200, Value::Array(batch))
            }
            ("POST", _) if path == list => {
                let mut n = next.lock().expect("next");
                *n += 1;
                let text = body["body"].as_str().unwrap_or_default().to_string();
                comments.push((*n, text));
                (201, json!({"id": *n}))
            }
            (m, Some(at)) if m == update => {
                comments[at].1 = body["body"].as_str().unwrap_or_default().to_string();
                (200, json!({"id": comments[at].0}))
            }
            ("DELETE", Some(at)) => {
                comments.remove(at);
                (204, Value::Null)
            }
            _ => (404, json!({"message": "404 Not Found"})),
        }
    }))
}

/// Writes a review of `n` parts as `syncguard review --output markdown=DIR/comment.md` does,
/// part K saying `run` so each run's text is told apart.
fn parts(dir: &Path, n: usize, run: &str) -> PathBuf {
    for k in 1..=n {
        let marker = if n == 1 {
            "<!-- syncguard-review -->".to_string()
        } else {
            format!("<!-- syncguard-review part {k} of {n} -->")
        };
        let name = if k == 1 {
            "comment.md".to_string()
        } else {
            format!("comment.{k}.md")
        };
        std::fs::write(dir.join(name), format!("{marker}\n{run}: part {k}\n")).expect("write");
    }
    dir.join("comment.md")
}

#[test]
fn every_part_is_upserted_in_order_and_parts_of_a_longer_review_are_deleted() {
    let Some(python) = python() else { return };
    for provider in ["github", "gitlab"] {
        // A reviewer's comment, and the one comment of an earlier syncguard.
        let thread: Thread = Arc::new(Mutex::new(vec![
            (1, "lgtm".to_string()),
            (2, "<!-- syncguard-review -->\nearlier".to_string()),
        ]));
        let (url, seen) = comment_api(provider, thread.clone());
        let api = format!("{url}/api/v4");
        let env: Vec<(&str, &str)> = if provider == "github" {
            vec![
                ("GITHUB_API_URL", url.as_str()),
                ("GITHUB_REPOSITORY", "org/gitops"),
                ("GITHUB_TOKEN", "t0ken"),
            ]
        } else {
            vec![
                ("CI_API_V4_URL", api.as_str()),
                ("CI_PROJECT_ID", "42"),
                ("SYNCGUARD_GITLAB_TOKEN", "glpat"),
            ]
        };
        let number = if provider == "github" { "17" } else { "3" };
        let run = |n: usize, name: &str| -> Vec<(u64, String)> {
            let dir = tempfile::tempdir().expect("temp");
            let first = parts(dir.path(), n, name);
            let mut c = Command::new(python);
            c.arg(root().join("integrations/upsert-comment.py"))
                .args(["--provider", provider, "--number", number, "--body"])
                .arg(&first)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default());
            for (k, v) in &env {
                c.env(k, v);
            }
            let out = c.output().expect("python3 runs");
            assert!(
                out.status.success(),
                "{provider} {name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            thread.lock().expect("thread").clone()
        };
        // Three parts: the earlier comment becomes part 1, parts 2 and 3 follow it.
        let after = run(3, "first");
        let bodies: Vec<&str> = after.iter().map(|(_, b)| b.as_str()).collect();
        assert_eq!(
            bodies,
            [
                "lgtm",
                "<!-- syncguard-review part 1 of 3 -->\nfirst: part 1\n",
                "<!-- syncguard-review part 2 of 3 -->\nfirst: part 2\n",
                "<!-- syncguard-review part 3 of 3 -->\nfirst: part 3\n",
            ],
            "{provider}"
        );
        assert_eq!(
            after[1].0, 2,
            "{provider}: part 1 is the earlier comment, updated"
        );
        // Two parts: both updated in place, the third deleted.
        let ids: Vec<u64> = after.iter().map(|(id, _)| *id).collect();
        let after = run(2, "second");
        assert_eq!(
            after,
            [
                (1, "lgtm".to_string()),
                (
                    ids[1],
                    "<!-- syncguard-review part 1 of 2 -->\nsecond: part 1\n".to_string()
                ),
                (
                    ids[2],
                    "<!-- syncguard-review part 2 of 2 -->\nsecond: part 2\n".to_string()
                ),
            ],
            "{provider}"
        );
        // One comment again: the plain marker, part 2 deleted.
        let after = run(1, "third");
        assert_eq!(
            after,
            [
                (1, "lgtm".to_string()),
                (
                    ids[1],
                    "<!-- syncguard-review -->\nthird: part 1\n".to_string()
                ),
            ],
            "{provider}"
        );
        let requests = seen.lock().expect("log").clone();
        let deletes: Vec<&str> = requests
            .iter()
            .filter(|r| r.method == "DELETE")
            .map(|r| r.path.as_str())
            .collect();
        let item = if provider == "github" {
            "/repos/org/gitops/issues/comments"
        } else {
            "/api/v4/projects/42/merge_requests/3/notes"
        };
        assert_eq!(
            deletes,
            [format!("{item}/{}", ids[3]), format!("{item}/{}", ids[2])],
            "{provider}"
        );
        // Parts found out of order (part 2 posted before part 1): part 1 is kept, part 2 is
        // posted again after it, so the thread reads in order.
        {
            let mut t = thread.lock().expect("thread");
            t.clear();
            t.push((7, "<!-- syncguard-review part 2 of 2 -->\nold".into()));
            t.push((8, "<!-- syncguard-review part 1 of 2 -->\nold".into()));
        }
        let after = run(2, "fourth");
        let bodies: Vec<&str> = after.iter().map(|(_, b)| b.as_str()).collect();
        assert_eq!(
            bodies,
            [
                "<!-- syncguard-review part 1 of 2 -->\nfourth: part 1\n",
                "<!-- syncguard-review part 2 of 2 -->\nfourth: part 2\n",
            ],
            "{provider}"
        );
        assert_eq!(after[0].0, 8, "{provider}");
    }
}

#[test]
fn a_missing_part_is_named_before_any_request() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().expect("temp");
    let first = parts(dir.path(), 3, "run");
    std::fs::remove_file(dir.path().join("comment.2.md")).expect("remove");
    let (url, seen) = stub(Box::new(|_, _, _| (200, json!([]))));
    let out = upsert(
        python,
        "github",
        &first,
        &[
            ("GITHUB_API_URL", url.as_str()),
            ("GITHUB_REPOSITORY", "org/gitops"),
            ("GITHUB_TOKEN", "t0ken"),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is part 1 of 3") && err.contains("comment.2.md is missing"),
        "{err}"
    );
    assert!(seen.lock().expect("log").is_empty());
    // A later part given as the first is refused too.
    let out = upsert(python, "github", &dir.path().join("comment.3.md"), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("pass the first part"),
        "{out:?}"
    );
}

fn script(path: &str, dir: &Path, env: &[(&str, String)]) -> Output {
    let mut c = Command::new("bash");
    c.arg(root().join(path)).current_dir(dir);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("bash runs")
}

#[test]
fn the_review_step_writes_every_file_and_its_exit_code() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    if python().is_none() {
        return;
    }
    let (repo, base, _) = repository(true);
    let out_dir = tempfile::tempdir().expect("temp");
    let outputs = out_dir.path().join("github-output");
    let summary = out_dir.path().join("summary.md");
    let event = out_dir.path().join("event.json");
    std::fs::write(
        &event,
        json!({"pull_request": {"number": 5, "base": {"sha": base}}}).to_string(),
    )
    .expect("event");
    let files = out_dir.path().join("files");
    let env = [
        ("SYNCGUARD", env!("CARGO_BIN_EXE_syncguard").to_string()),
        ("SYNCGUARD_HELM", helm.display().to_string()),
        ("SYNCGUARD_KUSTOMIZE", kustomize.display().to_string()),
        (
            "SYNCGUARD_PATHS",
            "apps/children/web.yaml apps/children/config.yaml".into(),
        ),
        ("GITHUB_EVENT_PATH", event.display().to_string()),
        ("GITHUB_OUTPUT", outputs.display().to_string()),
        ("GITHUB_STEP_SUMMARY", summary.display().to_string()),
        ("SYNCGUARD_OUT_DIR", files.display().to_string()),
    ];
    let out = script("integrations/review.sh", repo.path(), &env);
    // The step itself succeeds; the verdict is its output.
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("New findings (1)"), "{text}");
    let written = std::fs::read_to_string(&outputs).expect("outputs");
    assert!(written.contains("exit-code=1\n"), "{written}");
    assert!(
        written.contains(&format!("markdown={}/comment.md", files.display())),
        "{written}"
    );
    for f in [
        "comment.md",
        "syncguard.sarif",
        "gl-code-quality.json",
        "review.json",
    ] {
        assert!(files.join(f).is_file(), "{f} missing");
    }
    let quality: Value = serde_json::from_str(
        &std::fs::read_to_string(files.join("gl-code-quality.json")).expect("cq"),
    )
    .expect("Code Quality JSON");
    assert_eq!(quality[0]["check_name"], "SG201");
    assert_eq!(
        quality[0]["location"]["path"],
        "charts/web/templates/seed-job.yaml"
    );
    assert!(
        std::fs::read_to_string(&summary)
            .expect("summary")
            .starts_with("<!-- syncguard-review -->")
    );
    assert!(written.contains("markdown-parts=1\n"), "{written}");

    // A small budget: the comment continues in comment.2.md, ...; the step says how many parts
    // there are and the job summary shows them all, in order.
    // A part an earlier run left, not next to this run's parts: review.sh removes it.
    std::fs::write(files.join("comment.99.md"), "left by an earlier run").expect("write");
    std::fs::remove_file(&outputs).expect("remove");
    std::fs::remove_file(&summary).expect("remove");
    let mut env = env.to_vec();
    env.push(("SYNCGUARD_ARGS", "--markdown-budget 2048".into()));
    let out = script("integrations/review.sh", repo.path(), &env);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = std::fs::read_to_string(&outputs).expect("outputs");
    let n: usize = written
        .lines()
        .find_map(|l| l.strip_prefix("markdown-parts="))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{written}"));
    assert!(n > 1, "{written}");
    let mut all = String::new();
    for k in 1..=n {
        let name = if k == 1 {
            "comment.md".to_string()
        } else {
            format!("comment.{k}.md")
        };
        let part = std::fs::read_to_string(files.join(&name)).expect("part");
        assert!(part.len() <= 2048, "{name}: {} bytes", part.len());
        assert!(part.starts_with(&format!("<!-- syncguard-review part {k} of {n} -->")));
        all.push_str(&part);
    }
    assert!(!files.join(format!("comment.{}.md", n + 1)).exists());
    assert!(!files.join("comment.99.md").exists());
    assert_eq!(std::fs::read_to_string(&summary).expect("summary"), all);
}

#[test]
fn the_gitlab_job_installs_the_release_reviews_posts_its_note_and_fails_on_the_new_finding() {
    let Some(release) = release() else { return };
    if python().is_none() {
        return;
    }
    let (repo, base, _) = repository(true);
    let (url, seen) = stub(Box::new(|method, _, _| match method {
        "GET" => (200, json!([])),
        _ => (201, json!({"id": 1})),
    }));
    let installed = tempfile::tempdir().expect("temp");
    // No SYNCGUARD and no render tools given: the job installs them from the release stand-in,
    // and may not build (prebuilt-only).
    let env = [
        ("SYNCGUARD_VERSION", RELEASE_VERSION.to_string()),
        ("SYNCGUARD_RELEASE_URL", release.url.clone()),
        ("SYNCGUARD_INSTALL", "prebuilt-only".into()),
        ("SYNCGUARD_INSTALL_RENDER_TOOLS", "true".into()),
        (
            "SYNCGUARD_INSTALL_DIR",
            installed.path().display().to_string(),
        ),
        ("SYNCGUARD_PATHS", "apps/children/web.yaml".into()),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", base),
        ("CI_PROJECT_DIR", repo.path().display().to_string()),
        ("CI_API_V4_URL", format!("{url}/api/v4")),
        ("CI_PROJECT_ID", "42".into()),
        ("CI_MERGE_REQUEST_IID", "3".into()),
        ("SYNCGUARD_GITLAB_TOKEN", "glpat".into()),
    ];
    let out = script("integrations/gitlab/job.sh", repo.path(), &env);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        repo.path()
            .join(".syncguard/gl-code-quality.json")
            .is_file()
    );
    let requests = seen.lock().expect("log").clone();
    let post = requests
        .iter()
        .find(|r| r.method == "POST")
        .expect("a note was posted");
    assert_eq!(post.path, "/api/v4/projects/42/merge_requests/3/notes");
    assert!(
        post.body["body"]
            .as_str()
            .unwrap_or_default()
            .contains("SG201")
    );
}

fn yaml(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).expect("read");
    syncguard::manifest::parse_yaml_value(&text).expect("YAML")
}

#[test]
fn action_yml_names_only_scripts_and_inputs_that_exist() {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let inputs = action["inputs"].as_object().expect("inputs");
    let text = std::fs::read_to_string(root().join("action.yml")).expect("read");
    for used in text.split("inputs.").skip(1) {
        let name: String = used
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        assert!(
            inputs.contains_key(&name),
            "action.yml uses undeclared input {name}"
        );
    }
    for step in action["runs"]["steps"].as_array().expect("steps") {
        let run = step["run"].as_str().unwrap_or_default();
        for part in run.split("$GITHUB_ACTION_PATH/").skip(1) {
            let file: String = part
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '"')
                .collect();
            assert!(
                root().join(&file).is_file(),
                "action.yml runs {file}, which does not exist"
            );
        }
    }
}

#[test]
fn the_gitlab_template_runs_the_tested_job_and_publishes_its_report() {
    let text = std::fs::read_to_string(root().join("integrations/gitlab/syncguard-review.yml"))
        .expect("read");
    let (spec, jobs) = text
        .split_once("\n---\n")
        .expect("a spec document and a jobs document");
    let spec = syncguard::manifest::parse_yaml_value(spec).expect("spec YAML");
    let jobs = syncguard::manifest::parse_yaml_value(jobs).expect("jobs YAML");
    let job = &jobs["syncguard-review"];
    let script = job["script"].as_array().expect("script");
    assert!(script.iter().any(|l| {
        l.as_str()
            .is_some_and(|l| l.contains("/integrations/gitlab/job.sh"))
    }));
    assert_eq!(
        job["artifacts"]["reports"]["codequality"],
        ".syncguard/gl-code-quality.json"
    );
    let inputs = spec["spec"]["inputs"].as_object().expect("inputs");
    for used in text.split("inputs.").skip(1) {
        let name: String = used
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        assert!(
            inputs.contains_key(&name),
            "template uses undeclared input {name}"
        );
    }
}

#[test]
fn the_pre_commit_hook_checks_the_changed_applications() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let hooks = yaml(".pre-commit-hooks.yaml");
    let hook = &hooks[0];
    assert_eq!(hook["id"], "syncguard-check");
    assert_eq!(hook["language"], "rust");
    let files = hook["files"].as_str().expect("files");
    let (repo, _, _) = repository(true);
    // The files a commit changes, filtered as pre-commit filters them.
    let changed = [
        "apps/children/web.yaml",
        "charts/web/templates/seed-job.yaml",
        "README.md",
    ];
    let matcher = |f: &str| {
        // `^(apps|applications|argocd)/.*\.(ya?ml|json)$`, checked without a regex crate.
        files.starts_with("^(apps|applications|argocd)/")
            && ["apps/", "applications/", "argocd/"]
                .iter()
                .any(|p| f.starts_with(p))
            && [".yaml", ".yml", ".json"].iter().any(|e| f.ends_with(e))
    };
    let passed: Vec<&str> = changed.iter().copied().filter(|f| matcher(f)).collect();
    assert_eq!(passed, ["apps/children/web.yaml"]);
    let entry: Vec<&str> = hook["entry"]
        .as_str()
        .expect("entry")
        .split_whitespace()
        .collect();
    assert_eq!(entry[0], "syncguard");
    let bin = Path::new(env!("CARGO_BIN_EXE_syncguard"))
        .parent()
        .expect("bin dir");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new(entry[0])
        .args(&entry[1..])
        .args(&passed)
        .current_dir(repo.path())
        .env("PATH", &path)
        .env("SYNCGUARD_HELM", &helm)
        .env("SYNCGUARD_KUSTOMIZE", &kustomize)
        .output()
        .expect("the hook's entry runs");
    // The head's web Application renders the PreSync hook that waits for a later Secret.
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("SG201"));
}

/// A release as `scripts/package-release.sh` packs it (the syncguard under test, the real render
/// tools), served over HTTP from loopback: the stand-in for the GitHub release the Action and the
/// GitLab job install from. Packed once for the whole file.
struct Release {
    dir: PathBuf,
    url: String,
}

const RELEASE_VERSION: &str = "9.9.9";

fn release() -> Option<&'static Release> {
    static RELEASE: std::sync::OnceLock<Option<Release>> = std::sync::OnceLock::new();
    RELEASE
        .get_or_init(|| {
            let (helm, kustomize) = tools()?;
            let jsonnet = render_support::jsonnet_tool()?;
            // Kept for the life of the test process (every test of this file may install from
            // it), in the target directory and replaced by the next run, so runs leave no copies.
            let place = Path::new(env!("CARGO_TARGET_TMPDIR")).join("release-stand-in");
            let _ = std::fs::remove_dir_all(&place);
            let tools_dir = place.join("tools");
            std::fs::create_dir_all(&tools_dir).expect("tools dir");
            for (name, path) in [
                ("helm", &helm),
                ("kustomize", &kustomize),
                ("jsonnet", &jsonnet),
            ] {
                std::os::unix::fs::symlink(path, tools_dir.join(name)).expect("symlink");
            }
            let dir = place.join("assets");
            let out = Command::new("bash")
                .arg(root().join("scripts/package-release.sh"))
                .args(["--binary", env!("CARGO_BIN_EXE_syncguard")])
                .arg("--render-tools")
                .arg(&tools_dir)
                .arg("--out")
                .arg(&dir)
                .args(["--version", RELEASE_VERSION])
                .env("SOURCE_DATE_EPOCH", "0")
                .output()
                .expect("package-release.sh runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let url = serve_files(dir.clone());
            Some(Release { dir, url })
        })
        .as_ref()
}

/// A static file server on loopback: GET /NAME answers the file NAME of `dir`, else 404.
fn serve_files(dir: PathBuf) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let dir = dir.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    return;
                }
                loop {
                    let mut h = String::new();
                    if reader.read_line(&mut h).is_err() || h.trim().is_empty() {
                        break;
                    }
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/");
                let name = path.trim_start_matches('/');
                let body = (!name.contains('/') && !name.is_empty())
                    .then(|| std::fs::read(dir.join(name)).ok())
                    .flatten();
                let (status, body) = match body {
                    Some(b) => ("200 OK", b),
                    None => ("404 Not Found", b"not found".to_vec()),
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            });
        }
    });
    url
}

/// `integrations/install.sh` with `env` and nothing else of this process's environment but a
/// PATH without cargo (so a test can tell a download from a build).
fn install(env: &[(&str, String)]) -> (Output, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp");
    let github_env = dir.path().join("github-env");
    // The job runs in the user's checkout; the files go elsewhere.
    let checkout = dir.path().join("checkout");
    std::fs::create_dir(&checkout).expect("checkout");
    let mut c = Command::new("bash");
    c.arg(root().join("integrations/install.sh"))
        .current_dir(&checkout)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("HOME", dir.path())
        .env("GITHUB_ENV", &github_env)
        .env("SYNCGUARD_INSTALL_DIR", dir.path().join("installed"));
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().expect("bash runs");
    let written = std::fs::read_to_string(&github_env).unwrap_or_default();
    // The files live in the temp dir: the caller keeps it while it runs what was installed.
    (out, written, dir)
}

fn var<'a>(written: &'a str, name: &str) -> &'a str {
    written
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("{name} not written: {written}"))
}

#[test]
fn the_action_installs_the_prebuilt_release_and_its_render_tools_without_building() {
    let Some(release) = release() else { return };
    let (out, written, _installed) = install(&[
        ("SYNCGUARD_VERSION", RELEASE_VERSION.into()),
        ("SYNCGUARD_RELEASE_URL", release.url.clone()),
        ("SYNCGUARD_INSTALL", "prebuilt-only".into()),
        ("INSTALL_RENDER_TOOLS", "true".into()),
    ]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("checksum verified"), "{log}");
    assert!(!log.contains("building"), "{log}");
    let bin = var(&written, "SYNCGUARD");
    let version = Command::new(bin).arg("--version").output().expect("runs");
    assert!(version.status.success());
    // The installed binary is the packed one, byte for byte.
    assert_eq!(
        std::fs::read(bin).expect("installed"),
        std::fs::read(env!("CARGO_BIN_EXE_syncguard")).expect("built")
    );
    for (name, args) in [
        ("SYNCGUARD_HELM", &["version", "--short"][..]),
        ("SYNCGUARD_KUSTOMIZE", &["version"][..]),
        ("SYNCGUARD_JSONNET", &["--version"][..]),
    ] {
        let ran = Command::new(var(&written, name)).args(args).output();
        assert!(ran.is_ok_and(|o| o.status.success()), "{name} does not run");
    }
    // Packing is reproducible: the same binaries give the same SHA256SUMS.
    let again = tempfile::tempdir().expect("temp");
    let tools_dir = release.dir.parent().expect("place").join("tools");
    let repack = Command::new("bash")
        .arg(root().join("scripts/package-release.sh"))
        .args(["--binary", env!("CARGO_BIN_EXE_syncguard")])
        .arg("--render-tools")
        .arg(&tools_dir)
        .arg("--out")
        .arg(again.path())
        .args(["--version", RELEASE_VERSION])
        .env("SOURCE_DATE_EPOCH", "0")
        .output()
        .expect("package-release.sh runs");
    assert!(repack.status.success());
    assert_eq!(
        std::fs::read_to_string(again.path().join("SHA256SUMS")).expect("sums"),
        std::fs::read_to_string(release.dir.join("SHA256SUMS")).expect("sums")
    );
}

#[test]
fn a_replaced_asset_or_a_wrong_pin_is_refused_and_never_rebuilt() {
    let Some(release) = release() else { return };
    // A copy of the release whose syncguard asset was replaced after SHA256SUMS was written.
    let forged = tempfile::tempdir().expect("temp");
    for entry in std::fs::read_dir(&release.dir).expect("assets") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), forged.path().join(entry.file_name())).expect("copy");
    }
    let asset = format!(
        "syncguard-{RELEASE_VERSION}-{}-unknown-linux-gnu.tar.gz",
        std::env::consts::ARCH
    );
    std::fs::write(forged.path().join(&asset), b"not the release").expect("forge");
    let url = serve_files(forged.path().to_path_buf());
    let (out, written, _installed) = install(&[
        ("SYNCGUARD_VERSION", RELEASE_VERSION.into()),
        ("SYNCGUARD_RELEASE_URL", url),
        // Even when building is allowed, a checksum mismatch is an alarm, not a fallback.
        ("SYNCGUARD_INSTALL", "prebuilt".into()),
    ]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains(&format!("{asset}: sha256")), "{log}");
    assert!(log.contains("refusing"), "{log}");
    assert!(!written.contains("SYNCGUARD="), "{written}");

    // The real release, but the workflow pins another checksum.
    let (out, _, _) = install(&[
        ("SYNCGUARD_VERSION", RELEASE_VERSION.into()),
        ("SYNCGUARD_RELEASE_URL", release.url.clone()),
        ("SYNCGUARD_SHA256", "0".repeat(64)),
    ]);
    let log = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{log}");
    assert!(log.contains("SYNCGUARD_SHA256 pins"), "{log}");
}

#[test]
fn an_unreachable_release_is_exit_2_when_nothing_can_be_built() {
    // A port nothing listens on.
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    for mode in ["prebuilt-only", "prebuilt"] {
        // PATH has no cargo, so the prebuilt mode's fallback cannot build either.
        let (out, _, _) = install(&[
            ("SYNCGUARD_VERSION", RELEASE_VERSION.into()),
            ("SYNCGUARD_RELEASE_URL", url.clone()),
            ("SYNCGUARD_INSTALL", mode.into()),
        ]);
        let log = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{mode}: {log}");
        assert!(
            log.contains("cannot be fetched") || log.contains("no cargo"),
            "{mode}: {log}"
        );
    }
}

/// A repository whose Applications are a Helm chart (`helm-apps/templates/*.yaml`, templates
/// with `{{ }}`, not manifests): the hook passes a changed template, which stands for its chart;
/// no Application of the checkout renders that chart, so it is rendered with its own values, and
/// the Applications it renders are rendered and checked in turn.
#[test]
fn the_pre_commit_hook_checks_a_helm_chart_of_applications() {
    let Some((helm, kustomize)) = tools() else {
        return;
    };
    let (repo, _, _) = repository(true);
    let root = repo.path();
    let files = [
        (
            "helm-apps/Chart.yaml",
            "apiVersion: v2\nname: helm-apps\nversion: 1.0.0\n".to_string(),
        ),
        (
            "helm-apps/values.yaml",
            format!("repoURL: {}\nrelease: shopfront\n", render_support::REPO_URL),
        ),
        (
            "helm-apps/templates/web.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: web2, namespace: argocd}\n\
             spec:\n  project: default\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n\
             \x20 source:\n    repoURL: {{ .Values.repoURL }}\n    path: charts/web\n    helm: {releaseName: {{ .Values.release }}}\n"
                .to_string(),
        ),
    ];
    for (path, text) in &files {
        let p = root.join(path);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    let entry: Vec<String> = yaml(".pre-commit-hooks.yaml")[0]["entry"]
        .as_str()
        .expect("entry")
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(&entry[1..])
        .arg("helm-apps/templates/web.yaml")
        .current_dir(root)
        .env("SYNCGUARD_HELM", &helm)
        .env("SYNCGUARD_KUSTOMIZE", &kustomize)
        .output()
        .expect("the hook's entry runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // The head's chart has the PreSync hook that waits for a later Secret: found through the
    // chart of Applications, with no load error for the template.
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("SG201"), "{stdout}");
    assert!(stdout.contains("shopfront-seed"), "{stdout}");
    assert!(!stdout.contains("invalid YAML"), "{stdout}");
    assert!(
        stderr.contains("no Application of this checkout renders the Helm chart helm-apps"),
        "{stderr}"
    );
    // With the root Application that renders it, that one is used (its values win).
    std::fs::write(
        root.join("helm-apps-root.yaml"),
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: apps-root, namespace: argocd}}\n\
             spec:\n  project: default\n  destination: {{server: https://kubernetes.default.svc, namespace: argocd}}\n\
             \x20 source:\n    repoURL: {}\n    path: helm-apps\n    helm: {{values: 'release: rooted'}}\n",
            render_support::REPO_URL
        ),
    )
    .expect("root");
    let out = Command::new(env!("CARGO_BIN_EXE_syncguard"))
        .args(&entry[1..])
        .arg("helm-apps/templates/web.yaml")
        .current_dir(root)
        .env("SYNCGUARD_HELM", &helm)
        .env("SYNCGUARD_KUSTOMIZE", &kustomize)
        .output()
        .expect("the hook's entry runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("rooted-seed"), "{stdout}");
    assert!(
        !stderr.contains("no Application of this checkout"),
        "{stderr}"
    );
}
