//! Reading a policy directory and turning regorus diagnostics into `file:line` errors.
//!
//! Only the top level of the directory is read. Kubernetes mounts ConfigMaps as a directory of
//! symlinks into a hidden `..data` folder; walking recursively (or into dot-folders) would load
//! every rule twice, so hidden entries are skipped and symlinks at the top level are followed.
//!
//! A directory with a `config.yaml` and no `.rego` file at all is a *configuration-only*
//! directory: it stands for the built-in rules (and their tests) with that `config.yaml` in place
//! of the built-in one, so one rule can be turned off or down without copying every rule.

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
}

/// The files of a policy directory.
#[derive(Debug, Clone)]
pub struct PolicyDir {
    /// `.rego` files, sorted by name so loading is deterministic.
    pub rego: Vec<RegoFile>,
    /// `config.yaml` and its contents, if present.
    pub config: Option<(PathBuf, String)>,
    /// True for a configuration-only directory: `rego` holds the built-in files.
    pub builtin_rules: bool,
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
        read.builtin_rules = true;
    }
    Ok(read)
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
                text,
            });
        }
    }
    Ok(PolicyDir {
        rego,
        config,
        builtin_rules: false,
    })
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
        assert!(read.builtin_rules);
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
        assert!(read.rego.is_empty() && !read.builtin_rules);
        fs::write(dir.path().join("mine.rego"), "package syncguard.rules.mine").unwrap();
        let read = read_dir(dir.path()).unwrap();
        assert!(!read.builtin_rules);
        assert_eq!(read.rego.len(), 1);
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
