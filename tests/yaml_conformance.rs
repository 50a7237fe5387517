//! syncguard reads YAML as Kubernetes reads it.
//!
//! Every document of every file under `tests/fixtures/yaml/` is read twice: by the referee
//! (`.tools/bin/yaml-referee`, built by `scripts/install-yaml-referee.sh` from the Go module
//! proxy: the stream cut as client-go cuts it, each document converted by sigs.k8s.io/yaml's
//! YAMLToJSON at the version Kubernetes v1.34 uses) and by syncguard's loader. Both must give
//! the same JSON, or both must refuse the document. The deviations syncguard makes on purpose
//! are listed in [`DEVIATIONS`] with their reason; a listed deviation that no longer deviates
//! fails too, so the list stays true.
//!
//! The referee's path is `SYNCGUARD_YAML_REFEREE`, else `.tools/bin/yaml-referee`. Without it the
//! test says why and skips, except under `CI=true`, where it fails, unless `.ci/run` found the
//! referee cannot be built on that machine (`SYNCGUARD_YAML_REFEREE_OPTIONAL`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use syncguard::manifest::{LoadError, load_str, parse_yaml_value};

/// Documents where syncguard knowingly differs from YAMLToJSON: (file, first line of the
/// document, reason).
const DEVIATIONS: &[(&str, u32, &str)] = &[
    (
        "duplicate-keys.yaml",
        1,
        "a repeated key: YAMLToJSON keeps the last value; syncguard reports the document, as \
         kubectl's strict decoding, kustomize and Helm refuse it",
    ),
    (
        "duplicate-keys.yaml",
        11,
        "`on:` and `true:` are the same key once resolved: YAMLToJSON keeps the last; syncguard \
         reports the repeat",
    ),
    (
        "lenient.yaml",
        1,
        "an anchor name with `.`: YAML 1.2 allows it and saphyr reads it; the YAML 1.1 reader \
         wants letters, digits, `-` and `_`. syncguard is more lenient, never stricter",
    ),
    (
        "lenient.yaml",
        11,
        "a tab after `-`: saphyr takes it as separation, the YAML 1.1 reader refuses it. \
         syncguard is more lenient, never stricter",
    ),
    (
        "json.yaml",
        13,
        "JSON's `\\/` escape: the YAML 1.1 reader refuses it, but kubectl and Argo CD decode a \
         document that starts with `{` as JSON (YAMLOrJSONDecoder), where it is `/`",
    ),
];

/// What one reader made of one document.
#[derive(Debug)]
enum Reading {
    Json(Value),
    /// The reason, shown in failure messages.
    #[allow(dead_code)]
    Refused(String),
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/yaml")
}

/// The referee binary, or `None` (after one line saying why) when the test may skip.
fn referee() -> Option<PathBuf> {
    let path = std::env::var_os("SYNCGUARD_YAML_REFEREE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/yaml-referee"));
    if path.is_file() {
        return Some(path);
    }
    let why = format!(
        "{} is missing: run scripts/install-yaml-referee.sh",
        path.display()
    );
    let optional =
        std::env::var_os("SYNCGUARD_YAML_REFEREE_OPTIONAL").is_some_and(|v| !v.is_empty());
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(
        optional || !ci,
        "{why} (CI=true: the conformance test may not skip)"
    );
    eprintln!("skipped: yaml conformance: {why}");
    None
}

/// The referee's documents of `file`: (first line, reading).
fn referee_documents(referee: &Path, file: &Path) -> Vec<(u32, Reading)> {
    let output = Command::new(referee)
        .arg(file)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", referee.display()));
    assert!(
        output.status.success(),
        "{} {}: {}",
        referee.display(),
        file.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("UTF-8 from the referee")
        .lines()
        .map(|line| {
            let record: Value = serde_json::from_str(line).expect("a JSON line from the referee");
            let first = record["line"].as_u64().expect("a line number") as u32;
            let reading = match record.get("error") {
                Some(Value::String(error)) => Reading::Refused(error.clone()),
                _ => Reading::Json(record.get("json").cloned().unwrap_or(Value::Null)),
            };
            (first, reading)
        })
        .collect()
}

/// The stream cut into documents as client-go's YAML reader cuts it (and as syncguard's loader
/// does): at lines that start with `---` followed by nothing but blanks or a comment. Documents
/// of no bytes are dropped. Returns (first line, text).
fn split(text: &str) -> Vec<(u32, String)> {
    let mut documents = Vec::new();
    let mut current = String::new();
    let mut first = 1u32;
    for (index, line) in text.split_inclusive('\n').enumerate() {
        if let Some(rest) = line.strip_prefix("---") {
            let rest = rest.trim();
            if rest.is_empty() || rest.starts_with('#') {
                if !current.is_empty() {
                    documents.push((first, std::mem::take(&mut current)));
                }
                first = index as u32 + 2;
                continue;
            }
        }
        current.push_str(line);
    }
    if !current.is_empty() {
        documents.push((first, current));
    }
    documents
}

/// syncguard's reading of one document: the value `parse_yaml_value` gives (the path embedded
/// YAML takes), checked against what the loader makes of the same text (the path manifests
/// take). A document the loader reports as invalid YAML (or a repeated key, or too large) is
/// refused; one it reports for not being a Kubernetes object still has its value.
fn syncguard_reading(label: &str, text: &str) -> Reading {
    let value = match parse_yaml_value(text) {
        Ok(value) => value,
        Err(error) => return Reading::Refused(error),
    };
    let loaded = load_str(label, text);
    let refusals: Vec<String> = loaded
        .errors
        .iter()
        .filter(|e| {
            matches!(
                e,
                LoadError::Syntax { .. }
                    | LoadError::DuplicateKey { .. }
                    | LoadError::TooDeep { .. }
                    | LoadError::TooLarge { .. }
            )
        })
        .map(ToString::to_string)
        .collect();
    if !refusals.is_empty() {
        return Reading::Refused(refusals.join("; "));
    }
    let is_object = value.get("apiVersion").is_some()
        && value.get("kind").is_some()
        && value
            .pointer("/metadata/name")
            .is_some_and(Value::is_string);
    if is_object {
        assert_eq!(
            loaded.resources.len(),
            1,
            "{label}: the loader read {:?}",
            loaded.errors
        );
        assert_eq!(
            loaded.resources[0].raw, value,
            "{label}: the loader and parse_yaml_value disagree"
        );
    } else if value.is_null() {
        assert!(
            loaded.resources.is_empty() && loaded.errors.is_empty(),
            "{label}"
        );
    }
    Reading::Json(value)
}

/// JSON equality, numbers by value: an integer only equals an integer, and two floats may differ
/// in the last place (the default JSON float parser is not always correctly rounded).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x.is_f64() != y.is_f64() => false,
            _ if !x.is_f64() => x == y,
            (Some(p), Some(q)) => {
                p == q || (p - q).abs() <= 4.0 * f64::EPSILON * p.abs().max(q.abs())
            }
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn syncguard_reads_every_document_as_kubernetes_does() {
    let Some(referee) = referee() else {
        return;
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("tests/fixtures/yaml")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(files.len() >= 15, "the corpus is missing: {files:?}");

    let (mut compared, mut equal, mut refused_by_both) = (0, 0, 0);
    let mut deviations_seen = Vec::new();
    let mut failures = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a file name");
        let text = std::fs::read_to_string(file).expect("a corpus file");
        let expected = referee_documents(&referee, file);
        let documents = split(&text);
        let lines: Vec<u32> = documents.iter().map(|(line, _)| *line).collect();
        let referee_lines: Vec<u32> = expected.iter().map(|(line, _)| *line).collect();
        assert_eq!(
            lines, referee_lines,
            "{name}: the documents are cut differently"
        );
        for ((line, document), (_, theirs)) in documents.iter().zip(&expected) {
            compared += 1;
            let label = format!("{name}:{line}");
            let ours = syncguard_reading(&label, document);
            let agree = match (&ours, theirs) {
                (Reading::Json(a), Reading::Json(b)) => same(a, b),
                (Reading::Refused(_), Reading::Refused(_)) => {
                    refused_by_both += 1;
                    true
                }
                _ => false,
            };
            let deviation = DEVIATIONS
                .iter()
                .find(|(file, first, _)| *file == name && *first == *line);
            match (agree, deviation) {
                (true, None) => equal += 1,
                (false, Some((_, _, reason))) => deviations_seen.push(format!("{label}: {reason}")),
                (true, Some(_)) => failures.push(format!(
                    "{label}: listed as a deviation, but syncguard now agrees; remove it from DEVIATIONS"
                )),
                (false, None) => failures.push(format!(
                    "{label}:\n  syncguard:  {ours:?}\n  Kubernetes: {theirs:?}"
                )),
            }
        }
    }
    eprintln!(
        "yaml conformance: {} files, {compared} documents, {equal} equal ({refused_by_both} \
         refused by both), {} knowing deviations",
        files.len(),
        deviations_seen.len()
    );
    for deviation in &deviations_seen {
        eprintln!("  deviation: {deviation}");
    }
    assert!(
        failures.is_empty(),
        "{} of {compared} documents differ from Kubernetes' reading:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(deviations_seen.len(), DEVIATIONS.len());
}

#[test]
fn documents_are_cut_as_client_go_cuts_them() {
    let cut = split("a: 1\n---\n--- # c\nb: 2\n---x: 1\n---\n");
    assert_eq!(
        cut,
        [
            (1, "a: 1\n".to_string()),
            (4, "b: 2\n---x: 1\n".to_string())
        ]
    );
}
