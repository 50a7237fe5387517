//! `syncguard review`: a change to a GitOps repository, base against head.

use std::io::Write;
use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::cli::{ReviewArgs, ReviewFormat};
use crate::evaluate::EvaluateOptions;
use crate::finding::{Finding, Report};
use crate::output::report::{ReportFormat, render};
use crate::output::review::{
    MIN_MARKDOWN_BUDGET, at_template, blocking, render_codequality, render_json, render_markdown,
    render_text,
};
use crate::review::{Baseline, Review, ServerOptions, SnapshotOptions, Standing, review};

use super::Outcome;
use super::check::fail_on;

/// Runs `syncguard review`.
pub fn run(args: &ReviewArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let cwd = std::env::current_dir()?;
    let Some(top) = crate::git::toplevel(&cwd) else {
        eprintln!(
            "syncguard: review runs in a git checkout; {} is not in one",
            cwd.display()
        );
        return Ok(Outcome::InputErrors);
    };
    // PATHs are the user's, relative to the working directory; the worktrees are checkouts of
    // the whole repository.
    let top_real = std::fs::canonicalize(&top).unwrap_or(top.clone());
    let cwd_real = std::fs::canonicalize(&cwd).unwrap_or(cwd.clone());
    // Each revision is read from its commit: an absolute PATH is taken as the same path inside
    // the repository, never as the working tree's files.
    let mut paths: Vec<PathBuf> = Vec::new();
    for p in &args.paths {
        match in_repository(p, &cwd_real, &top_real) {
            Some(relative) => paths.push(relative),
            None => {
                eprintln!(
                    "syncguard: {} is not inside the repository {}",
                    p.display(),
                    top_real.display()
                );
                return Ok(Outcome::InputErrors);
            }
        }
    }
    let outputs = match outputs(&args.outputs) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("syncguard: {e}");
            return Ok(Outcome::InputErrors);
        }
    };
    if args.markdown_budget < MIN_MARKDOWN_BUDGET {
        eprintln!(
            "syncguard: --markdown-budget {} is too small: a comment part needs at least {MIN_MARKDOWN_BUDGET} \
             bytes (GitHub takes 65536, the default; a longer review continues in further comments)",
            args.markdown_budget
        );
        return Ok(Outcome::InputErrors);
    }
    let mut other_repos = Vec::new();
    let mut own_urls = Vec::new();
    let same_repository = |dir: &std::path::Path| {
        crate::git::toplevel(dir)
            .and_then(|t| std::fs::canonicalize(t).ok())
            .is_some_and(|t| std::fs::canonicalize(&top).is_ok_and(|top| top == t))
    };
    for m in &args.render_flags.repos {
        let Some((url, dir)) = m.split_once('=') else {
            eprintln!("syncguard: --repo wants URL=DIR, got {m:?}");
            return Ok(Outcome::InputErrors);
        };
        // `--repo URL=<this checkout>` names the reviewed repository under another URL: its
        // sources are rendered from each revision's commit, like those of its remotes, never
        // from the working tree (which would make both revisions read the same files).
        if same_repository(std::path::Path::new(dir)) {
            own_urls.push(url.to_string());
        } else {
            other_repos.push((url.to_string(), PathBuf::from(dir)));
        }
    }
    let render_options = match super::render::options(&args.render_flags) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("syncguard: {e}");
            return Ok(Outcome::InputErrors);
        }
    };
    let source = args.policy.source();
    let policies = source
        .load()
        .map_err(|e| anyhow::anyhow!("cannot load {}: {e}", source.describe()))?;
    let evaluate = EvaluateOptions {
        repository: true,
        argocd: args
            .argocd_version
            .or(policies.config().argocd_version)
            .unwrap_or_default(),
        ..EvaluateOptions::default()
    };
    let mut remote_urls = crate::git::remote_urls(&top);
    remote_urls.extend(own_urls);
    let options = SnapshotOptions {
        paths: &paths,
        other_repos: &other_repos,
        remote_urls: &remote_urls,
        render: &render_options,
        policies: &policies,
        evaluate: &evaluate,
    };
    let server = if args.ephemeral_cluster {
        match crate::ephemeral::find(args.kube_binaries.as_deref()) {
            Ok(binaries) => Some(ServerOptions {
                binaries,
                limits: crate::dry_run::Limits {
                    concurrency: 4,
                    qps: 1000.0,
                },
            }),
            Err(e) => {
                eprintln!("syncguard: --ephemeral-cluster: {e}");
                return Ok(Outcome::InputErrors);
            }
        }
    } else {
        None
    };
    let baseline = match &args.baseline {
        None => None,
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|text| Baseline::parse(&text))
        {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("syncguard: --baseline {}: {e}", path.display());
                return Ok(Outcome::InputErrors);
            }
        },
    };
    let mut review = match review(&top, &args.base, &args.head, &options, server.as_ref()) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("syncguard: {e}");
            return Ok(Outcome::InputErrors);
        }
    };
    if let Some(b) = &baseline {
        review.accept(b);
    }
    let threshold = fail_on(args.fail_on);
    let failing = blocking(&review, threshold, args.fail_on_existing);
    let comments = || render_markdown(&review, &failing, args.markdown_budget, args.show_info);
    let view = |format: ReviewFormat| -> anyhow::Result<String> {
        let mut text = match format {
            ReviewFormat::Text => render_text(&review, failing.len(), args.show_info),
            ReviewFormat::Json => render_json(&review, failing.len())?,
            // On stdout the parts follow one another, each starting with its marker line.
            ReviewFormat::Markdown => comments().concat(),
            ReviewFormat::Sarif => sarif(&review)?,
            ReviewFormat::Codequality => render_codequality(&review)?,
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        Ok(text)
    };
    for (format, path) in &outputs {
        if *format == ReviewFormat::Markdown {
            write_parts(path, &comments())?;
        } else {
            std::fs::write(path, view(*format)?)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
        }
    }
    out.write_all(view(args.format)?.as_bytes())?;
    // A review of nothing is not "all clear": a mistyped PATH, or Applications kept elsewhere.
    if review.apps_total == 0 {
        let paths: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        eprintln!(
            "syncguard: no Argo CD Application or ApplicationSet under {} on either revision: \
             nothing was reviewed. Give the directories or files that hold them (e.g. apps/, or \
             the root app-of-apps file)",
            paths.join(", ")
        );
        return Ok(Outcome::InputErrors);
    }
    Ok(if review.incomplete() {
        Outcome::InputErrors
    } else if !failing.is_empty() {
        Outcome::Blocking
    } else {
        Outcome::Clean
    })
}

/// `path` (absolute, or relative to `cwd`) as a path relative to the repository's top `top`
/// (both canonical), without reading the working tree's files for it: `None` when it is
/// outside the repository.
fn in_repository(path: &Path, cwd: &Path, top: &Path) -> Option<PathBuf> {
    let joined = cwd.join(path);
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    // A symlink above the repository (/tmp -> /private/tmp) is resolved on the part that
    // exists in the working tree.
    let out = match out.strip_prefix(top) {
        Ok(rel) => return Some(rel.to_path_buf()),
        Err(_) => {
            let mut existing = out.clone();
            let mut rest = Vec::new();
            while !existing.exists() {
                rest.push(existing.file_name()?.to_os_string());
                existing.pop();
            }
            let mut real = std::fs::canonicalize(&existing).ok()?;
            real.extend(rest.iter().rev());
            real
        }
    };
    out.strip_prefix(top).ok().map(Path::to_path_buf)
}

/// Writes comment parts: the first to `path`, part N to `path` with `.N` before its extension
/// (`comment.md`, `comment.2.md`, ...), and removes the further parts an earlier run left
/// there, so the files present are exactly this review's.
fn write_parts(path: &Path, parts: &[String]) -> anyhow::Result<()> {
    for (i, text) in parts.iter().enumerate() {
        let file = part_path(path, i + 1);
        std::fs::write(&file, text)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", file.display()))?;
    }
    for stale in parts.len() + 1.. {
        let file = part_path(path, stale);
        if !file.is_file() {
            break;
        }
        std::fs::remove_file(&file)
            .map_err(|e| anyhow::anyhow!("cannot remove the old part {}: {e}", file.display()))?;
    }
    Ok(())
}

/// Where part `part` of a comment written to `path` goes: `path` itself for part 1,
/// `comment.N.md` beside `comment.md` for the others.
fn part_path(path: &Path, part: usize) -> PathBuf {
    if part <= 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{part}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{part}"),
    };
    path.with_file_name(name)
}

/// `--output FORMAT=PATH` pairs.
fn outputs(items: &[String]) -> Result<Vec<(ReviewFormat, PathBuf)>, String> {
    items
        .iter()
        .map(|item| {
            let (format, path) = item
                .split_once('=')
                .ok_or_else(|| format!("--output wants FORMAT=PATH, got {item:?}"))?;
            let format = <ReviewFormat as clap::ValueEnum>::from_str(format, true).map_err(|_| {
                format!(
                    "--output {item}: {format:?} is not one of text, json, sarif, markdown, codequality"
                )
            })?;
            Ok((format, PathBuf::from(path)))
        })
        .collect()
}

/// SARIF of the head's findings, each result with its `baselineState` (`new` or `unchanged`),
/// so code scanning shows what the change brings; what could not be judged is the run's
/// invocation notifications (errors when they fail the run), the invocation unsuccessful then.
fn sarif(review: &Review) -> Result<String, serde_json::Error> {
    let (new, unchanged) = (&review.findings.new, &review.findings.unchanged);
    let options = crate::output::report::RenderOptions::default();
    let render_with = |findings: &[Finding], state: &str| -> Result<Value, serde_json::Error> {
        let report = Report::new(findings.iter().map(at_template).collect(), Vec::new());
        let mut v: Value = serde_json::from_str(&render(&report, ReportFormat::Sarif, &options)?)?;
        if let Some(results) = v
            .pointer_mut("/runs/0/results")
            .and_then(Value::as_array_mut)
        {
            for r in results {
                r["baselineState"] = Value::String(state.into());
            }
        }
        Ok(v)
    };
    let mut doc = render_with(new, "new")?;
    let other = render_with(unchanged, "unchanged")?;
    let take = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let mut results = take(&doc, "/runs/0/results");
    results.extend(take(&other, "/runs/0/results"));
    let mut rules = take(&doc, "/runs/0/tool/driver/rules");
    for rule in take(&other, "/runs/0/tool/driver/rules") {
        if !rules.iter().any(|r| r["id"] == rule["id"]) {
            rules.push(rule);
        }
    }
    rules.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    // Each result points into the merged rule list.
    for r in &mut results {
        if let Some(i) = rules.iter().position(|rule| rule["id"] == r["ruleId"]) {
            r["ruleIndex"] = Value::from(i);
        }
    }
    let notifications: Vec<Value> = review
        .not_judged
        .iter()
        .filter(|n| n.on_head())
        .map(|n| {
            let mut note = serde_json::json!({
                "level": if n.standing == Standing::New { "error" } else { "note" },
                "message": {"text": format!(
                    "{}: {}: {}",
                    n.id,
                    n.summary(),
                    n.reasons.iter().map(|r| format!("{}: {}", r.reason, r.detail)).collect::<Vec<_>>().join("; ")
                )},
                "descriptor": {"id": "not-judged"},
            });
            if let Some((file, line)) = n.origin.as_deref().and_then(|o| o.rsplit_once(':')) {
                note["locations"] = serde_json::json!([{"physicalLocation": {
                    "artifactLocation": {"uri": file},
                    "region": {"startLine": line.parse::<u64>().unwrap_or(1).max(1)},
                }}]);
            }
            note
        })
        .chain(review.errors.iter().map(|e| {
            serde_json::json!({"level": "error", "message": {"text": e}, "descriptor": {"id": "not-read"}})
        }))
        .collect();
    if let Some(run) = doc.pointer_mut("/runs/0") {
        run["invocations"] = serde_json::json!([{
            "executionSuccessful": !review.incomplete(),
            "toolExecutionNotifications": notifications,
        }]);
        run["results"] = Value::Array(results);
        if let Some(driver) = run.pointer_mut("/tool/driver") {
            driver["rules"] = Value::Array(rules);
        }
    }
    serde_json::to_string_pretty(&doc)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_written_beside_the_first_and_old_parts_removed() {
        assert_eq!(
            part_path(Path::new("out/comment.md"), 1),
            Path::new("out/comment.md")
        );
        assert_eq!(
            part_path(Path::new("out/comment.md"), 3),
            Path::new("out/comment.3.md")
        );
        assert_eq!(part_path(Path::new("comment"), 2), Path::new("comment.2"));
        let dir = tempfile::tempdir().unwrap();
        let first = dir.path().join("comment.md");
        let three: Vec<String> = (1..=3).map(|i| format!("part {i}\n")).collect();
        write_parts(&first, &three).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("comment.3.md")).unwrap(),
            "part 3\n"
        );
        // A shorter review later: its parts are the only ones left.
        write_parts(&first, &three[..1]).unwrap();
        assert_eq!(std::fs::read_to_string(&first).unwrap(), "part 1\n");
        assert!(!dir.path().join("comment.2.md").exists());
        assert!(!dir.path().join("comment.3.md").exists());
    }
}
