//! SARIF 2.1.0, the format GitHub code scanning (and most SARIF viewers) ingest.
//!
//! Mapping decisions, all about what a code-scanning UI does with the fields:
//!
//! - `level` follows the *action*, because that is what happens at admission: `deny` → `error`,
//!   `warn`/`mutate` → `warning`, `audit` → `note`. The rule author's severity is kept as the
//!   `severity` property.
//! - Skipped findings stay in the log with a `suppressions` entry (`inSource`: the waiver is an
//!   annotation or config entry next to the manifests), so the UI shows them as dismissed
//!   rather than as fixed.
//! - Policy errors are ordinary results (kind `fail`, the level of their action) with the status
//!   property `policy-error`: gates treat them like open findings, so must the UI. SARIF's
//!   `kind: open` would force level `none` and hide them.
//! - Load errors are tool execution notifications, and make `executionSuccessful` false.
//! - `partialFingerprints["syncguardFinding/v1"]` is an FNV-1a hash of rule id, Application,
//!   object identity, JSON pointer and file, without line or message: an alert survives lines
//!   moving and messages being reworded, and stays apart from the same object in another
//!   overlay.
//! - Findings without a file position get only a logical location (the object). GitHub code
//!   scanning may drop results that have no physical location; other viewers show them.
//!
//! The document is built from typed structs so that the key order is fixed by the code and the
//! shape can be read against the schema (`tests/fixtures/sarif-2.1.0.json`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::{RenderOptions, TOOL_NAME, docs_link, docs_url, message_with_also, sorted_findings};
use crate::finding::{Action, Finding, Report, ResourceRef, Status};

/// The `$schema` written into the log: the OASIS SARIF 2.1.0 (errata 01) schema, the one the
/// tests validate against.
pub const SARIF_SCHEMA_URI: &str =
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/// The key of our entry in `partialFingerprints`; bump the suffix if the hashed fields change,
/// so that viewers do not match old alerts against differently computed fingerprints.
const FINGERPRINT_KEY: &str = "syncguardFinding/v1";

/// The artifact URI used for documents read from standard input.
const STDIN_URI: &str = "stdin";

/// How the loader names standard input in [`crate::finding::SourceLocation::file`].
const STDIN_FILE: &str = "<stdin>";

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: Vec<Run<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Run<'a> {
    tool: Tool<'a>,
    invocations: Vec<Invocation<'a>>,
    /// The loader counts columns in characters, not UTF-16 units.
    column_kind: &'static str,
    results: Vec<SarifResult<'a>>,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    information_uri: Option<&'a str>,
    rules: Vec<Rule<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule<'a> {
    id: &'a str,
    name: String,
    short_description: Text,
    full_description: Text,
    #[serde(skip_serializing_if = "Option::is_none")]
    help_uri: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    help: Option<Help>,
    default_configuration: Configuration,
    properties: RuleProperties<'a>,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties<'a> {
    tags: [&'static str; 1],
    severity: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation<'a> {
    execution_successful: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_execution_notifications: Vec<Notification<'a>>,
}

#[derive(Serialize)]
struct Notification<'a> {
    level: &'static str,
    message: TextRef<'a>,
}

#[derive(Serialize)]
struct TextRef<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult<'a> {
    rule_id: &'a str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    partial_fingerprints: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    suppressions: Vec<Suppression<'a>>,
    properties: ResultProperties<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    physical_location: Option<PhysicalLocation>,
    logical_locations: Vec<LogicalLocation>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    region: Region,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<Text>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u32,
    start_column: u32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct LogicalLocation {
    name: String,
    fully_qualified_name: String,
    kind: &'static str,
}

#[derive(Serialize)]
struct Suppression<'a> {
    kind: &'static str,
    justification: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties<'a> {
    severity: &'a str,
    action: &'a str,
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    application: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    path: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    helm_template: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    patch: Option<&'a json_patch::Patch>,
}

/// Renders the report as a SARIF 2.1.0 log with one run (pretty-printed).
pub fn render_sarif(report: &Report, opts: &RenderOptions) -> Result<String, serde_json::Error> {
    let findings = sorted_findings(report);
    let rules = rules(&findings, opts);
    let results = findings
        .iter()
        .map(|f| {
            let rule_index = rules
                .iter()
                .position(|r| r.id == f.rule_id.as_str())
                .unwrap_or_default();
            result(f, rule_index)
        })
        .collect();
    let log = Log {
        schema: SARIF_SCHEMA_URI,
        version: "2.1.0",
        runs: vec![Run {
            tool: Tool {
                driver: Driver {
                    name: TOOL_NAME,
                    version: opts.tool_version,
                    information_uri: opts.information_uri,
                    rules,
                },
            },
            invocations: vec![Invocation {
                execution_successful: report.errors.is_empty(),
                tool_execution_notifications: report
                    .errors
                    .iter()
                    .map(|e| Notification {
                        level: "error",
                        message: TextRef { text: e },
                    })
                    .collect(),
            }],
            column_kind: "unicodeCodePoints",
            results,
        }],
    };
    let mut out = serde_json::to_string_pretty(&log)?;
    out.push('\n');
    Ok(out)
}

/// One rule per rule id seen, sorted by id; described by the first finding of that id in
/// report order. The default level is that of the strongest action among the rule's findings
/// (the action is resolved per finding, so the rule has no single one).
fn rules<'a>(findings: &[&'a Finding], opts: &RenderOptions) -> Vec<Rule<'a>> {
    let mut by_id: BTreeMap<&'a str, (&'a Finding, Action)> = BTreeMap::new();
    for f in findings {
        by_id
            .entry(f.rule_id.as_str())
            .and_modify(|(_, strongest)| {
                if strength(f.action) > strength(*strongest) {
                    *strongest = f.action;
                }
            })
            .or_insert((f, f.action));
    }
    by_id
        .into_iter()
        .map(|(id, (f, strongest))| {
            let title = if f.title.is_empty() { id } else { &f.title };
            let link = docs_link(f, opts);
            Rule {
                id,
                name: pascal_case(title, id),
                short_description: Text {
                    text: title.to_string(),
                },
                full_description: Text {
                    text: match &link {
                        Some(l) => format!("{title}. Documentation: {l}"),
                        None => title.to_string(),
                    },
                },
                help_uri: docs_url(f, opts),
                help: link.map(|l| Help {
                    text: format!("Documentation: {l}"),
                    markdown: if docs_url(f, opts).is_some() {
                        format!("Documentation: [{l}]({l})")
                    } else {
                        format!("Documentation: `{l}`")
                    },
                }),
                default_configuration: Configuration {
                    level: level(strongest),
                },
                properties: RuleProperties {
                    tags: ["argo-cd"],
                    severity: f.severity.as_str(),
                },
            }
        })
        .collect()
}

fn strength(a: Action) -> u8 {
    match a {
        Action::Deny => 4,
        Action::Warn => 3,
        Action::Mutate => 2,
        Action::Audit => 1,
        Action::Off => 0,
    }
}

fn level(a: Action) -> &'static str {
    match a {
        Action::Deny => "error",
        Action::Warn | Action::Mutate => "warning",
        Action::Audit | Action::Off => "note",
    }
}

/// SARIF wants `name` to be an identifier-like string (`HookJobWithoutActiveDeadlineSeconds`);
/// rules only have a title, so the name is derived from it.
fn pascal_case(title: &str, fallback: &str) -> String {
    let name: String = title
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut chars = w.chars();
            match chars.next() {
                Some(first) => first.to_uppercase().chain(chars).collect::<String>(),
                None => String::new(),
            }
        })
        .collect();
    if name.is_empty() {
        fallback.to_string()
    } else {
        name
    }
}

fn result(f: &Finding, rule_index: usize) -> SarifResult<'_> {
    let helm_template = f.location.as_ref().and_then(|l| l.helm_template.as_deref());
    let message = match helm_template {
        Some(t) => format!("{} (from {t})", message_with_also(f)),
        None => message_with_also(f),
    };
    let physical_location = f.location.as_ref().map(|l| PhysicalLocation {
        artifact_location: if l.file.as_ref() == STDIN_FILE {
            ArtifactLocation {
                uri: STDIN_URI.to_string(),
                description: Some(Text {
                    text: "standard input".to_string(),
                }),
            }
        } else {
            ArtifactLocation {
                uri: artifact_uri(&l.file),
                description: None,
            }
        },
        region: Region {
            start_line: l.line.max(1),
            start_column: l.column.max(1),
        },
    });
    let (status, suppressions) = match &f.status {
        Status::Open => ("open", Vec::new()),
        Status::PolicyError => ("policy-error", Vec::new()),
        Status::Skipped { reason } => (
            "skipped",
            vec![Suppression {
                kind: "inSource",
                justification: reason,
            }],
        ),
    };
    SarifResult {
        rule_id: f.rule_id.as_str(),
        rule_index,
        level: level(f.action),
        message: Text { text: message },
        locations: vec![Location {
            physical_location,
            logical_locations: vec![logical_location(&f.resource)],
        }],
        partial_fingerprints: BTreeMap::from([(FINGERPRINT_KEY, fingerprint(f))]),
        suppressions,
        properties: ResultProperties {
            severity: f.severity.as_str(),
            action: f.action.as_str(),
            status,
            application: f.application.as_deref(),
            path: f.path.as_deref(),
            helm_template,
            patch: f.patch.as_ref(),
        },
    }
}

/// The object as a logical location: `apiVersion/Kind[/namespace]/name`, unambiguous across
/// API groups.
fn logical_location(r: &ResourceRef) -> LogicalLocation {
    let api_version = if r.group.is_empty() {
        r.version.clone()
    } else {
        format!("{}/{}", r.group, r.version)
    };
    let qualified = match &r.namespace {
        Some(ns) => format!("{api_version}/{}/{ns}/{}", r.kind, r.name),
        None => format!("{api_version}/{}/{}", r.kind, r.name),
    };
    LogicalLocation {
        name: r.name.clone(),
        fully_qualified_name: qualified,
        kind: "resource",
    }
}

/// A stable identity for an alert across runs (see the module docs for what goes in and why).
/// The API version is left out: moving `batch/v1beta1` to `batch/v1` is the same object.
fn fingerprint(f: &Finding) -> String {
    let r = &f.resource;
    let file = f.location.as_ref().map(|l| l.file.as_ref()).unwrap_or("");
    let fields = [
        f.rule_id.as_str(),
        f.application.as_deref().unwrap_or(""),
        &r.group,
        &r.kind,
        r.namespace.as_deref().unwrap_or(""),
        &r.name,
        f.path.as_deref().unwrap_or(""),
        file,
    ];
    // Unit separator between fields so that ("ab", "c") and ("a", "bc") hash differently.
    format!("{:016x}", fnv1a_64(fields.join("\u{1f}").as_bytes()))
}

/// 64-bit FNV-1a: tiny, dependency-free and stable across platforms and Rust versions (unlike
/// `DefaultHasher`, whose algorithm may change), which is all a fingerprint needs.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(PRIME)
    })
}

/// The path as a URI reference: forward slashes, no leading `./`, characters outside the
/// unreserved set percent-encoded (so spaces and `#` cannot break it); absolute paths become
/// `file://` URIs, as SARIF asks for absolute locations.
fn artifact_uri(file: &str) -> String {
    let mut path = file.replace('\\', "/");
    while let Some(rest) = path.strip_prefix("./") {
        path = rest.to_string();
    }
    let drive = {
        let b = path.as_bytes();
        b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'
    };
    if drive {
        // `C:/x` → `file:///C:/x`; the colon after a drive letter is part of the path.
        let (letter, rest) = path.split_at(2);
        format!("file:///{letter}{}", percent_encode(rest))
    } else if path.starts_with('/') {
        format!("file://{}", percent_encode(&path))
    } else {
        percent_encode(&path)
    }
}

fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a_64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn artifact_uris_are_relative_forward_slashed_and_encoded() {
        assert_eq!(artifact_uri("./deploy/app.yaml"), "deploy/app.yaml");
        assert_eq!(artifact_uri("deploy\\app.yaml"), "deploy/app.yaml");
        assert_eq!(artifact_uri("my dir/a#1.yaml"), "my%20dir/a%231.yaml");
        assert_eq!(artifact_uri("/abs/x.yaml"), "file:///abs/x.yaml");
        assert_eq!(artifact_uri("C:\\work\\x.yaml"), "file:///C:/work/x.yaml");
        assert_eq!(artifact_uri("ü.yaml"), "%C3%BC.yaml");
    }

    #[test]
    fn rule_names_are_derived_from_titles() {
        assert_eq!(
            pascal_case("hook Job without activeDeadlineSeconds", "SG101"),
            "HookJobWithoutActiveDeadlineSeconds"
        );
        assert_eq!(pascal_case(" -- ", "SG101"), "SG101");
    }
}
