//! The five `syncguard check` report formats, pinned by golden files and checked against what
//! their consumers require.
//!
//! Golden files live in `tests/fixtures/golden/`. After an intended change, rewrite them with
//!
//! ```text
//! UPDATE_GOLDEN=1 cargo test --test output_golden
//! ```
//!
//! and review the diff like code. `tests/fixtures/sarif-2.1.0.json` is the OASIS SARIF 2.1.0
//! schema (errata 01, draft-04), `sarif-2.1/schema/sarif-schema-2.1.0.json` of the
//! `oasis-tcs/sarif-spec` GitHub repository at commit e0583813964ec43cea53b6b531b402866095ed1f.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use syncguard::finding::{
    Action, Finding, Report, ResourceRef, RuleId, Severity, SourceLocation, Status,
};
use syncguard::output::report::{
    RenderOptions, ReportFormat, SARIF_SCHEMA_URI, render, render_json, render_junit,
    render_markdown, render_sarif, render_text,
};

// ---------------------------------------------------------------------------------------------
// The report every format renders.

/// A finding builder: the defaults are an open `deny` of `SG101` on `Job shop/migrate` with no
/// location; each test case changes what it is about.
struct F(Finding);

impl F {
    fn new(rule: &str, title: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        let group = match kind {
            "Job" => "batch",
            "Deployment" => "apps",
            _ => "",
        };
        F(Finding {
            rule_id: RuleId::from(rule),
            title: title.into(),
            severity: Severity::High,
            action: Action::Deny,
            status: Status::Open,
            message: String::new(),
            resource: ResourceRef {
                group: group.into(),
                version: "v1".into(),
                kind: kind.into(),
                name: name.into(),
                namespace: namespace.map(String::from),
            },
            application: None,
            location: None,
            path: None,
            patch: None,
            docs: Some(format!("docs/rules/{rule}.md")),
            cause: None,
            also: Vec::new(),
        })
    }
    fn severity(mut self, s: Severity) -> Self {
        self.0.severity = s;
        self
    }
    fn action(mut self, a: Action) -> Self {
        self.0.action = a;
        self
    }
    fn status(mut self, s: Status) -> Self {
        self.0.status = s;
        self
    }
    fn message(mut self, m: &str) -> Self {
        self.0.message = m.into();
        self
    }
    fn app(mut self, a: &str) -> Self {
        self.0.application = Some(a.into());
        self
    }
    fn at(mut self, file: &str, line: u32, column: u32) -> Self {
        self.0.location = Some(SourceLocation {
            file: Arc::from(file),
            line,
            column,
            helm_template: None,
        });
        self
    }
    fn helm(mut self, template: &str) -> Self {
        if let Some(l) = &mut self.0.location {
            l.helm_template = Some(Arc::from(template));
        }
        self
    }
    fn path(mut self, p: &str) -> Self {
        self.0.path = Some(p.into());
        self
    }
    fn patch(mut self, p: Value) -> Self {
        self.0.patch = Some(serde_json::from_value(p).unwrap());
        self
    }
    fn no_docs(mut self) -> Self {
        self.0.docs = None;
        self
    }
}

/// Every case the views must handle, deliberately out of order (the views sort).
fn sample_report() -> Report {
    let findings = vec![
        F::new("SG110", "hook delete policy without a hook", "ConfigMap", Some("shop"), "settings")
            .severity(Severity::Info)
            .action(Action::Audit)
            .app("shop")
            .at("deploy/shop.yaml", 60, 1)
            .message("`argocd.argoproj.io/hook-delete-policy` has no effect without a hook"),
        F::new("SG201", "Namespace deleted with the Application", "Namespace", None, "payments")
            .severity(Severity::Critical)
            .message("pruning Namespace `payments` deletes every object in it")
            .no_docs(),
        F::new("SG105", "mutable image tag", "Deployment", Some("web"), "frontend")
            .severity(Severity::Medium)
            .action(Action::Warn)
            .app("web")
            .at("deploy/web.yaml", 8, 3)
            .path("/spec/template/spec/containers/0/image")
            .message("image tag `latest` | mutable: the hook and the app may run different code\nPin a digest."),
        F::new("SG101", "hook Job without activeDeadlineSeconds", "Job", Some("shop"), "migrate")
            .app("shop")
            .at("deploy/shop.yaml", 12, 5)
            .helm("shop/templates/job.yaml")
            .path("/spec/activeDeadlineSeconds")
            .message("hook Job `migrate` can run forever and block the sync")
            .patch(json!([{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 900}])),
        F::new("SG102", "hook Job without backoffLimit", "Job", Some("shop"), "seed")
            .severity(Severity::Low)
            .action(Action::Mutate)
            .app("shop")
            .at("deploy/shop.yaml", 40, 7)
            .path("/spec/backoffLimit")
            .message("hook Job `seed` retries 6 times by default")
            .patch(json!([{"op": "add", "path": "/spec/backoffLimit", "value": 2}])),
        F::new("SG101", "hook Job without activeDeadlineSeconds", "Job", Some("web"), "cleanup")
            .status(Status::Skipped {
                reason: "owned by the DBA team <dba@example.org> & reviewed".into(),
            })
            .app("web")
            .at("deploy/web.yaml", 30, 1)
            .path("/spec/activeDeadlineSeconds")
            .message("hook Job `cleanup` can run forever and block the sync"),
        F::new("SG104", "hook Pod without a deadline", "Job", Some("shop"), "migrate")
            .status(Status::PolicyError)
            .app("shop")
            .at("deploy/shop.yaml", 1, 1)
            .helm("shop/templates/job.yaml")
            .message("rule could not be evaluated: unexpected byte \u{1} in input"),
        F::new("SG106", "unknown hook delete policy", "Pod", Some("web"), "debug")
            .severity(Severity::Medium)
            .action(Action::Warn)
            .app("web")
            .at("<stdin>", 3, 1)
            .message("hook delete policy `Always` is not one Argo CD knows: it is ignored"),
    ];
    Report::new(
        findings.into_iter().map(|f| f.0).collect(),
        vec!["deploy/broken.yaml:3: invalid YAML: mapping values are not allowed here".into()],
    )
    .with_objects(12)
}

fn options() -> RenderOptions<'static> {
    RenderOptions {
        color: false,
        show_patches: true,
        show_info: false,
        tool_version: "0.0.0-test",
        docs_base_url: None,
        information_uri: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Golden files.

fn golden_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/golden")
        .join(name)
}

/// Compares with the golden file, or rewrites it when `UPDATE_GOLDEN=1`.
fn assert_golden(name: &str, actual: &str) {
    let path = golden_path(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}\nrun `UPDATE_GOLDEN=1 cargo test --test output_golden` to create it",
            path.display()
        )
    });
    if expected != actual {
        panic!(
            "{name} differs from {} (- expected, + actual):\n{}\nif the change is intended, run \
             `UPDATE_GOLDEN=1 cargo test --test output_golden` and review the diff",
            path.display(),
            line_diff(&expected, actual)
        );
    }
}

/// A unified-style line diff (longest common subsequence), with two lines of context around
/// each change, so a failing golden test says what changed instead of dumping both files.
fn line_diff(expected: &str, actual: &str) -> String {
    let a: Vec<&str> = expected.split('\n').collect();
    let b: Vec<&str> = actual.split('\n').collect();
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, usize, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', i + 1, a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', i + 1, a[i]));
            i += 1;
        } else {
            ops.push(('+', j + 1, b[j]));
            j += 1;
        }
    }
    let near_change = |k: usize| {
        ops[k.saturating_sub(2)..(k + 3).min(ops.len())]
            .iter()
            .any(|(op, _, _)| *op != ' ')
    };
    let mut out = String::new();
    let mut skipped = false;
    for (k, (op, line, text)) in ops.iter().enumerate() {
        if near_change(k) {
            out.push_str(&format!("{op}{line:>5} {text:?}\n"));
            skipped = false;
        } else if !skipped {
            out.push_str("   ...\n");
            skipped = true;
        }
    }
    out
}

/// Info findings (facts whose acting on changes no sync) are counted, not shown, in text and
/// Markdown unless asked; JSON and SARIF (level `note`) always carry them.
#[test]
fn info_findings_are_counted_not_shown_unless_asked() {
    let report = sample_report();
    let info = "has no effect without a hook";
    for (name, out) in [
        ("text", render_text(&report, &options())),
        ("markdown", render_markdown(&report, &options())),
    ] {
        assert!(!out.contains(info), "{name} shows the info finding:\n{out}");
        assert!(
            out.contains("1 info finding not shown (--show-info)"),
            "{name} does not count it:\n{out}"
        );
    }
    let shown = RenderOptions {
        show_info: true,
        ..options()
    };
    for (name, out) in [
        ("text", render_text(&report, &shown)),
        ("markdown", render_markdown(&report, &shown)),
    ] {
        assert!(out.contains(info), "{name} with --show-info:\n{out}");
        assert!(!out.contains("not shown (--show-info)"), "{name}:\n{out}");
    }
    let json = render_json(&report, &options()).unwrap();
    assert!(json.contains(info));
    let sarif: Value = serde_json::from_str(&render_sarif(&report, &options()).unwrap()).unwrap();
    let levels: Vec<&str> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            r["message"]["text"]
                .as_str()
                .unwrap_or_default()
                .contains(info)
        })
        .map(|r| r["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["note"]);
}

#[test]
fn text_report_matches_golden() {
    assert_golden("report.txt", &render_text(&sample_report(), &options()));
}

#[test]
fn json_report_matches_golden() {
    assert_golden(
        "report.json",
        &render_json(&sample_report(), &options()).unwrap(),
    );
}

#[test]
fn sarif_report_matches_golden() {
    assert_golden(
        "report.sarif",
        &render_sarif(&sample_report(), &options()).unwrap(),
    );
}

#[test]
fn junit_report_matches_golden() {
    assert_golden(
        "report.junit.xml",
        &render_junit(&sample_report(), &options()),
    );
}

#[test]
fn markdown_report_matches_golden() {
    assert_golden("report.md", &render_markdown(&sample_report(), &options()));
}

#[test]
fn a_clean_report_says_how_much_it_checked_in_every_format() {
    let clean = Report::new(Vec::new(), Vec::new()).with_objects(3);
    let opts = options();
    let text = render_text(&clean, &opts);
    assert_eq!(
        text,
        "0 denied, 0 warnings, 0 mutations proposed, 0 audit, 0 skipped in 3 objects\n"
    );
    let junit = render_junit(&clean, &opts);
    let doc = roxmltree::Document::parse(&junit).unwrap();
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .expect("a passing test case");
    assert_eq!(case.attribute("name"), Some("3 objects checked"));
    let md = render_markdown(&clean, &opts);
    assert!(md.starts_with("## syncguard: 0 denied"), "{md}");
    assert!(md.contains("No findings"), "{md}");
    validate_sarif(&render_sarif(&clean, &opts).unwrap());
    for format in ReportFormat::ALL {
        assert!(render(&clean, format, &opts).unwrap().ends_with('\n'));
    }
}

// ---------------------------------------------------------------------------------------------
// What each format's consumer requires.

fn sarif_schema_errors(sarif: &str) -> Vec<String> {
    let schema_text = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif-2.1.0.json"),
    )
    .unwrap();
    let schema: Value = serde_json::from_str(&schema_text).unwrap();
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap();
    let instance: Value = serde_json::from_str(sarif).unwrap();
    validator
        .iter_errors(&instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn validate_sarif(sarif: &str) {
    let errors = sarif_schema_errors(sarif);
    assert!(
        errors.is_empty(),
        "SARIF schema violations:\n{}",
        errors.join("\n")
    );
}

#[test]
fn the_schema_check_rejects_what_code_scanning_would() {
    let sarif = render_sarif(&sample_report(), &options()).unwrap();
    let mut log: Value = serde_json::from_str(&sarif).unwrap();
    log["runs"][0]["results"][0]["level"] = json!("fatal");
    // `helpUri` must be an absolute URI: a bare docs path is why it is left out by default.
    log["runs"][0]["tool"]["driver"]["rules"][0]["helpUri"] = json!("docs/rules/SG101.md");
    let errors = sarif_schema_errors(&log.to_string());
    assert_eq!(errors.len(), 2, "{errors:#?}");
}

#[test]
fn sarif_validates_against_the_sarif_2_1_0_schema() {
    let report = sample_report();
    validate_sarif(&render_sarif(&report, &options()).unwrap());
    // With links configured, helpUri and informationUri appear and must be absolute URIs.
    let linked = RenderOptions {
        docs_base_url: Some("https://example.org/syncguard/blob/main/"),
        information_uri: Some("https://example.org/syncguard"),
        ..options()
    };
    let sarif = render_sarif(&report, &linked).unwrap();
    validate_sarif(&sarif);
    let log: Value = serde_json::from_str(&sarif).unwrap();
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["informationUri"], "https://example.org/syncguard");
    assert_eq!(
        driver["rules"][0]["helpUri"],
        "https://example.org/syncguard/blob/main/docs/rules/SG101.md"
    );
}

#[test]
fn sarif_maps_actions_to_levels_and_skips_to_suppressions() {
    let log: Value =
        serde_json::from_str(&render_sarif(&sample_report(), &options()).unwrap()).unwrap();
    assert_eq!(log["$schema"], SARIF_SCHEMA_URI);
    let run = &log["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "syncguard");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "SG101", "SG102", "SG104", "SG105", "SG106", "SG110", "SG201"
        ]
    );
    for result in run["results"].as_array().unwrap() {
        let index = result["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(rules[index]["id"], result["ruleId"]);
        let expected_level = match result["properties"]["action"].as_str().unwrap() {
            "deny" => "error",
            "warn" | "mutate" => "warning",
            _ => "note",
        };
        assert_eq!(result["level"], expected_level, "{result}");
        let skipped = result["properties"]["status"] == "skipped";
        assert_eq!(result.get("suppressions").is_some(), skipped, "{result}");
        let fingerprint = result["partialFingerprints"]["syncguardFinding/v1"]
            .as_str()
            .unwrap();
        assert_eq!(fingerprint.len(), 16);
    }
    assert_eq!(run["invocations"][0]["executionSuccessful"], false);
}

#[test]
fn sarif_fingerprints_ignore_lines_and_messages() {
    let at = |line, message: &str| {
        let report = Report::new(
            vec![
                F::new("SG101", "t", "Job", Some("shop"), "migrate")
                    .at("a.yaml", line, 1)
                    .message(message)
                    .0,
            ],
            Vec::new(),
        );
        let log: Value = serde_json::from_str(&render_sarif(&report, &options()).unwrap()).unwrap();
        log["runs"][0]["results"][0]["partialFingerprints"].clone()
    };
    assert_eq!(at(3, "old wording"), at(30, "new wording"));
}

/// Every key the JSON report can contain, by where it appears; `docs/report-json.md` must
/// document each one.
fn json_keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                // Patch operations are RFC 6902, documented by reference, not field by field.
                if k == "patch" {
                    out.push(k.clone());
                    continue;
                }
                out.push(k.clone());
                json_keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| json_keys(v, out)),
        _ => {}
    }
}

#[test]
fn json_has_the_documented_top_level_keys_and_every_key_is_documented() {
    let text = render_json(&sample_report(), &options()).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let keys: Vec<&str> = doc
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    // serde_json's map is sorted; the rendered text keeps the documented order.
    assert_eq!(keys, ["errors", "findings", "summary", "tool", "version"]);
    let order: Vec<usize> = [
        "\"version\"",
        "\"tool\"",
        "\"summary\"",
        "\"findings\"",
        "\"errors\"",
    ]
    .iter()
    // Top-level keys are the only ones indented by exactly two spaces.
    .map(|k| text.find(&format!("\n  {k}")).unwrap())
    .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert_eq!(doc["version"], 1);
    assert_eq!(
        doc["tool"],
        json!({"name": "syncguard", "version": "0.0.0-test"})
    );
    assert_eq!(doc["summary"]["objects"], 12);

    let documentation = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/report-json.md"),
    )
    .unwrap();
    let mut keys = Vec::new();
    json_keys(&doc, &mut keys);
    keys.sort();
    keys.dedup();
    let undocumented: Vec<&String> = keys
        .iter()
        .filter(|k| !documentation.contains(&format!("`{k}`")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "not in docs/report-json.md: {undocumented:?}"
    );
}

#[test]
fn json_findings_are_sorted_by_file_line_rule_and_resource() {
    let doc: Value =
        serde_json::from_str(&render_json(&sample_report(), &options()).unwrap()).unwrap();
    let order: Vec<(String, u64, String)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["location"]["file"].as_str().unwrap_or("~").to_string(),
                f["location"]["line"].as_u64().unwrap_or(0),
                f["rule_id"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let located: Vec<_> = order.iter().filter(|o| o.0 != "~").cloned().collect();
    let mut sorted = located.clone();
    sorted.sort();
    assert_eq!(located, sorted);
    // The finding without a location comes last.
    assert_eq!(order.last().unwrap().0, "~");
}

#[test]
fn the_order_does_not_depend_on_the_order_findings_were_produced() {
    let report = sample_report();
    let mut reversed = report.clone();
    reversed.findings.reverse();
    let opts = options();
    for format in ReportFormat::ALL {
        assert_eq!(
            render(&report, format, &opts).unwrap(),
            render(&reversed, format, &opts).unwrap(),
            "{format}"
        );
    }
}

#[test]
fn junit_is_well_formed_xml_with_consistent_counts() {
    let xml = render_junit(&sample_report(), &options());
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
    let attr = |name: &str| root.attribute(name).unwrap().parse::<usize>().unwrap();
    assert_eq!(attr("tests"), count("testcase"));
    assert_eq!(attr("failures"), count("failure"));
    assert_eq!(attr("errors"), count("error"));
    assert_eq!(attr("skipped"), count("skipped"));
    // 2 deny + 2 warn + mutate fail; audit passes; one skipped; a policy error and a load error.
    assert_eq!(
        (
            attr("tests"),
            attr("failures"),
            attr("skipped"),
            attr("errors")
        ),
        (9, 5, 1, 2)
    );
    // Escaped text comes back intact; the forbidden control character is shown, not dropped.
    let skipped = doc
        .descendants()
        .find(|n| n.has_tag_name("skipped"))
        .unwrap();
    assert_eq!(
        skipped.attribute("message"),
        Some("owned by the DBA team <dba@example.org> & reviewed")
    );
    let policy_error = doc
        .descendants()
        .find(|n| n.has_tag_name("error") && n.attribute("type") == Some("policy-error"))
        .unwrap();
    assert!(
        policy_error
            .text()
            .unwrap()
            .contains("unexpected byte \\u{1} in input")
    );
}

#[test]
fn markdown_escapes_pipes_and_line_breaks_inside_table_cells() {
    let md = render_markdown(&sample_report(), &options());
    let row = md
        .lines()
        .find(|l| l.contains("frontend"))
        .expect("the SG105 row");
    assert!(row.contains("image tag `latest` \\| mutable"), "{row}");
    assert!(row.contains("different code<br>Pin a digest."), "{row}");
    // Every table row has exactly as many unescaped column separators as the header.
    let unescaped = |l: &str| {
        let bytes = l.as_bytes();
        (0..bytes.len())
            .filter(|&i| bytes[i] == b'|' && (i == 0 || bytes[i - 1] != b'\\'))
            .count()
    };
    for line in md.lines().filter(|l| l.starts_with('|')) {
        let columns = if line.contains("Reason") || md_is_skipped_row(line) {
            7
        } else {
            6
        };
        assert_eq!(unescaped(line), columns, "{line}");
    }
    assert!(
        md.contains("<details>") && md.contains("owned by the DBA team &lt;dba@example.org&gt;")
    );
    assert!(md.contains("```json\n[\n  {\n    \"op\": \"add\""));
}

fn md_is_skipped_row(line: &str) -> bool {
    line.contains("cleanup") || line == "| --- | --- | --- | --- | --- | --- |"
}

#[test]
fn patches_are_shown_only_when_asked() {
    let report = sample_report();
    let quiet = RenderOptions {
        show_patches: false,
        ..options()
    };
    assert!(render_text(&report, &options()).contains("patch:"));
    assert!(!render_text(&report, &quiet).contains("patch:"));
    assert!(!render_markdown(&report, &quiet).contains("```json"));
    // JSON always carries them.
    assert!(render_json(&report, &quiet).unwrap().contains("\"patch\""));
}

#[test]
fn text_is_coloured_only_when_asked() {
    let report = sample_report();
    let plain = render_text(&report, &options());
    assert!(!plain.contains('\x1b'), "{plain}");
    let coloured = render_text(
        &report,
        &RenderOptions {
            color: true,
            ..options()
        },
    );
    assert!(coloured.contains("\x1b[1;31mdeny\x1b[0m"), "{coloured}");
    assert!(coloured.contains("\x1b[2m"), "skipped findings are dimmed");
    // Other formats never colour.
    let coloured_opts = RenderOptions {
        color: true,
        ..options()
    };
    for format in [
        ReportFormat::Json,
        ReportFormat::Sarif,
        ReportFormat::Junit,
        ReportFormat::Markdown,
    ] {
        assert!(
            !render(&report, format, &coloured_opts)
                .unwrap()
                .contains('\x1b')
        );
    }
}
