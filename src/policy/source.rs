//! Reading a policy directory and turning regorus diagnostics into `file:line` errors.
//!
//! Only the top level of the directory is read. Kubernetes mounts ConfigMaps as a directory of
//! symlinks into a hidden `..data` folder; walking recursively (or into dot-folders) would load
//! every rule twice, so hidden entries are skipped and symlinks at the top level are followed.
//!
//! A directory with a `config.yaml` and no `.rego` file at all is a *configuration-only*
//! directory: it stands for the built-in rules (and their tests) with that `config.yaml` in place
//! of the built-in one, so one rule can be turned off or down without copying every rule.
//!
//! Three sets can be read ([`super::builtin::PolicySource`]): the built-in files alone (from the
//! binary, never from disk: [`builtin`]), a directory alone ([`read_dir`]), or a directory laid
//! over the built-in files ([`overlay`]): a file of the directory with the name of a built-in
//! file replaces it, any other file is added, and its `config.yaml`, when present, replaces the
//! built-in one.

use std::fs;
use std::path::{Path, PathBuf};

use super::PolicyError;

/// The configuration file name inside a policy directory.
pub const CONFIG_FILE: &str = "config.yaml";

/// One `.rego` file, read into memory.
#[derive(Debug, Clone)]
pub struct RegoFile {
    /// The path as shown in messages (the directory as given, joined with the file name).
    pub label: String,
    /// The file contents.
    pub text: String,
    /// True for `*_test.rego`: tests, never evaluated against resources.
    pub is_test: bool,
    /// True for a file compiled into the binary (its tests ran when the binary was built).
    pub builtin: bool,
}

/// The files of a policy directory.
#[derive(Debug, Clone)]
pub struct PolicyDir {
    /// `.rego` files, sorted by name so loading is deterministic.
    pub rego: Vec<RegoFile>,
    /// `config.yaml` and its contents, if present.
    pub config: Option<(PathBuf, String)>,
}

/// The label of a built-in rule file, in messages and diagnostics.
pub const BUILTIN_LABEL_DIR: &str = "<built-in>";

/// Reads the `.rego` files and `config.yaml` at the top level of `dir`.
///
/// A configuration-only directory (a `config.yaml`, no `.rego` file) gives the built-in rule and
/// test files, labelled `<built-in>/<name>.rego`, with its own `config.yaml`: the directory's
/// configuration replaces the built-in one, and every key it leaves out has its default (the
/// values the built-in `config.yaml` documents).
pub fn read_dir(dir: &Path) -> Result<PolicyDir, PolicyError> {
    let mut read = read_files(dir)?;
    if read.rego.is_empty() && read.config.is_some() {
        read.rego = builtin_rego();
    }
    Ok(read)
}

/// The built-in rule and test files and the built-in `config.yaml`, straight from the binary.
pub fn builtin() -> PolicyDir {
    let config = super::builtin::BUILTIN_POLICY_FILES
        .iter()
        .find(|(name, _)| *name == CONFIG_FILE)
        .map(|(_, text)| {
            (
                Path::new(BUILTIN_LABEL_DIR).join(CONFIG_FILE),
                (*text).to_string(),
            )
        });
    PolicyDir {
        rego: builtin_rego(),
        config,
    }
}

/// The built-in files with the files of `dir` laid over them: a `.rego` file of `dir` named like
/// a built-in one replaces it (a rule and its test are replaced separately), others are added;
/// `dir`'s `config.yaml`, when present, replaces the built-in one (keys it leaves out take their
/// defaults, as in any `config.yaml`). An empty `dir` gives the built-in set.
pub fn overlay(dir: &Path) -> Result<PolicyDir, PolicyError> {
    let user = read_files(dir)?;
    let mut merged = builtin();
    for file in user.rego {
        match merged.rego.iter_mut().find(|b| b.name() == file.name()) {
            Some(slot) => *slot = file,
            None => merged.rego.push(file),
        }
    }
    merged.rego.sort_by(|a, b| a.name().cmp(b.name()));
    if user.config.is_some() {
        merged.config = user.config;
    }
    Ok(merged)
}

impl RegoFile {
    /// The file name (the last part of the label).
    pub fn name(&self) -> &str {
        self.label.rsplit('/').next().unwrap_or(&self.label)
    }
}

/// The built-in `.rego` files (rules and tests), sorted by name.
fn builtin_rego() -> Vec<RegoFile> {
    super::builtin::BUILTIN_POLICY_FILES
        .iter()
        .filter(|(name, _)| name.ends_with(".rego"))
        .map(|(name, text)| RegoFile {
            label: format!("{BUILTIN_LABEL_DIR}/{name}"),
            text: (*text).to_string(),
            is_test: name.ends_with("_test.rego"),
            builtin: true,
        })
        .collect()
}

fn read_files(dir: &Path) -> Result<PolicyDir, PolicyError> {
    let io = |path: &Path, source: std::io::Error| PolicyError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut names: Vec<String> = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| io(dir, e))? {
        let entry = entry.map_err(|e| io(dir, e))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') {
            continue;
        }
        // `metadata` follows symlinks, so mounted ConfigMap entries count as files.
        let is_file = fs::metadata(entry.path()).is_ok_and(|m| m.is_file());
        if is_file && (name.ends_with(".rego") || name == CONFIG_FILE) {
            names.push(name);
        }
    }
    names.sort();
    let mut rego = Vec::new();
    let mut config = None;
    for name in names {
        let path = dir.join(&name);
        let text = fs::read_to_string(&path).map_err(|e| io(&path, e))?;
        if name == CONFIG_FILE {
            config = Some((path, text));
        } else {
            rego.push(RegoFile {
                label: path.display().to_string(),
                is_test: name.ends_with("_test.rego"),
                builtin: false,
                text,
            });
        }
    }
    Ok(PolicyDir { rego, config })
}

/// A regorus diagnostic split into its position and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file label given to regorus.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The message after `error: `.
    pub message: String,
}

/// Parses regorus's rendered diagnostics:
///
/// ```text
/// --> policies/x.rego:7:32
///   |
/// 7 | violations contains msg if 1/0 == 1
///   |                            ^
/// error: divide by zero
/// ```
///
/// Returns `None` for messages without a `-->` position line (e.g. limit errors).
pub fn parse_diagnostic(rendered: &str) -> Option<Diagnostic> {
    let position = rendered
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("--> "))?;
    let mut parts = position.trim().rsplitn(3, ':');
    let column = parts.next()?.parse().ok()?;
    let line = parts.next()?.parse().ok()?;
    let file = parts.next()?.to_string();
    let message = match rendered.find("\nerror: ") {
        Some(i) => rendered[i + "\nerror: ".len()..].trim().replace('\n', " "),
        None => rendered.trim().replace('\n', " "),
    };
    Some(Diagnostic {
        file,
        line,
        column,
        message,
    })
}

/// A one-line rendering of any regorus error: `file:line:column: message` when it has a
/// position, the plain message otherwise.
pub fn one_line(rendered: &str) -> String {
    match parse_diagnostic(rendered) {
        Some(d) => format!("{}:{}:{}: {}", d.file, d.line, d.column, d.message),
        None => rendered.trim().replace('\n', " "),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn regorus_diagnostics_become_file_line_column_messages() {
        let rendered =
            "\n--> policies/b.rego:7:32\n  |\n7 | x if 1/0 == 1\n  |      ^\nerror: divide by zero";
        assert_eq!(
            parse_diagnostic(rendered),
            Some(Diagnostic {
                file: "policies/b.rego".into(),
                line: 7,
                column: 32,
                message: "divide by zero".into()
            })
        );
        assert_eq!(one_line(rendered), "policies/b.rego:7:32: divide by zero");
        assert_eq!(
            one_line("execution exceeded time limit (elapsed=1ns, limit=1ns)"),
            "execution exceeded time limit (elapsed=1ns, limit=1ns)"
        );
    }

    #[test]
    fn a_configuration_only_directory_stands_for_the_builtin_rules_with_its_config() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(CONFIG_FILE), "actions: {SG103: off}\n").unwrap();
        fs::write(dir.path().join("README.md"), "my tuning").unwrap();
        let read = read_dir(dir.path()).unwrap();
        assert!(read.rego.iter().all(|f| f.builtin));
        let (path, text) = read.config.unwrap();
        assert_eq!(path, dir.path().join(CONFIG_FILE));
        assert_eq!(text, "actions: {SG103: off}\n");
        let labels: Vec<&str> = read.rego.iter().map(|f| f.label.as_str()).collect();
        assert!(labels.contains(&"<built-in>/hook_restart_on_failure.rego"));
        assert!(labels.contains(&"<built-in>/hook_restart_on_failure_test.rego"));
        assert!(read.rego.iter().any(|f| f.is_test) && read.rego.iter().any(|f| !f.is_test));

        // Without config.yaml an empty directory is still nothing (the loader says so), and
        // one rule file means the directory is a whole policy set of its own.
        let empty = tempfile::tempdir().unwrap();
        let read = read_dir(empty.path()).unwrap();
        assert!(read.rego.is_empty());
        fs::write(dir.path().join("mine.rego"), "package syncguard.rules.mine").unwrap();
        let read = read_dir(dir.path()).unwrap();
        assert!(!read.rego[0].builtin);
        assert_eq!(read.rego.len(), 1);
    }

    #[test]
    fn an_overlay_replaces_builtin_files_by_name_and_adds_the_others() {
        let builtin = builtin();
        let (label, text) = builtin.config.clone().unwrap();
        assert_eq!(label, Path::new("<built-in>/config.yaml"));
        assert!(text.contains("actions"));

        // An empty overlay is the built-in set, file for file.
        let empty = tempfile::tempdir().unwrap();
        let same = overlay(empty.path()).unwrap();
        let labels = |d: &PolicyDir| d.rego.iter().map(|f| f.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(&same), labels(&builtin));
        assert_eq!(same.config, builtin.config);

        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("hook_restart_on_failure.rego"),
            "package mine",
        )
        .unwrap();
        fs::write(
            dir.path().join("my_rule.rego"),
            "package syncguard.rules.my_rule",
        )
        .unwrap();
        fs::write(dir.path().join(CONFIG_FILE), "actions: {SG103: off}\n").unwrap();
        let merged = overlay(dir.path()).unwrap();
        assert_eq!(merged.rego.len(), builtin.rego.len() + 1);
        let replaced = merged
            .rego
            .iter()
            .find(|f| f.name() == "hook_restart_on_failure.rego")
            .unwrap();
        assert_eq!(replaced.text, "package mine");
        assert!(!replaced.builtin);
        assert!(
            replaced
                .label
                .starts_with(&dir.path().display().to_string())
        );
        // The built-in test of the replaced rule stays unless it is replaced too.
        assert!(
            merged
                .rego
                .iter()
                .any(|f| f.name() == "hook_restart_on_failure_test.rego" && f.builtin)
        );
        assert!(merged.rego.iter().any(|f| f.name() == "my_rule.rego"));
        assert_eq!(merged.config.unwrap().1, "actions: {SG103: off}\n");
        let mut names: Vec<&str> = merged.rego.iter().map(RegoFile::name).collect();
        let sorted = {
            let mut n = names.clone();
            n.sort_unstable();
            n
        };
        assert_eq!(names, sorted);
        names.dedup();
        assert_eq!(names.len(), merged.rego.len());
    }

    #[test]
    fn hidden_entries_and_other_files_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("b.rego"), "package b").unwrap();
        fs::write(dir.path().join("a_test.rego"), "package a").unwrap();
        fs::write(dir.path().join("README.md"), "x").unwrap();
        fs::write(dir.path().join(CONFIG_FILE), "actions: {}").unwrap();
        fs::create_dir(dir.path().join("..data")).unwrap();
        fs::write(dir.path().join("..data/c.rego"), "package c").unwrap();
        let read = read_dir(dir.path()).unwrap();
        let names: Vec<_> = read
            .rego
            .iter()
            .map(|f| {
                (
                    Path::new(&f.label).file_name().unwrap().to_owned(),
                    f.is_test,
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![("a_test.rego".into(), true), ("b.rego".into(), false)]
        );
        assert!(read.config.is_some());
    }
}
