//! The policy engine as its users see it: load a directory of real Rego rules, evaluate input
//! documents, resolve findings. Every behaviour that does not depend on the backend is checked
//! with both regorus backends (VM and interpreter).

mod policy_support;

use std::fs;
use std::time::{Duration, Instant};

use policy_support::{Obj, both_backends, fixture, input_for};
use serde_json::json;
use syncguard::finding::{Action, Finding, Severity, Status};
use syncguard::mutate;
use syncguard::policy::{Backend, LoadOptions, PolicyError, PolicySet, RuleOutcome, Verdict};

fn basic() -> PolicySet {
    PolicySet::load(&fixture("basic")).unwrap()
}

/// A hook Job that trips all three sample rules: no deadline, OnFailure, a :latest container.
fn bad_hook_job(name: &str) -> Obj {
    Obj::job(name)
        .hook("PreSync")
        .set("/spec/template/spec/restartPolicy", json!("OnFailure"))
        .set(
            "/spec/template/spec/containers",
            json!([{"name": "main", "image": "migrate:1.0"}, {"name": "sidecar", "image": "proxy:latest"}]),
        )
}

fn ids(outcomes: &[RuleOutcome]) -> Vec<&str> {
    outcomes.iter().map(|o| o.rule.id.as_str()).collect()
}

fn findings(set: &PolicySet, obj: &Obj) -> Vec<Finding> {
    let r = obj.resource();
    set.findings_for(&r, &input_for(&r))
}

fn summary(findings: &[Finding]) -> Vec<(String, Action, Status)> {
    findings
        .iter()
        .map(|f| (f.rule_id.to_string(), f.action, f.status.clone()))
        .collect()
}

fn skipped(reason: &str) -> Status {
    Status::Skipped {
        reason: reason.to_string(),
    }
}

#[test]
fn loading_discovers_every_rule_and_reads_its_meta() {
    let set = basic();
    assert_eq!(set.backend(), Backend::Vm);
    assert!(set.notes().is_empty(), "{:?}", set.notes());
    let rules: Vec<_> = set
        .rules()
        .iter()
        .map(|r| (r.id.as_str(), r.package.as_str(), r.severity, r.action))
        .collect();
    assert_eq!(
        rules,
        vec![
            (
                "SG901",
                "syncguard.rules.sample_hook_deadline",
                Severity::High,
                Action::Mutate
            ),
            (
                "SG903",
                "syncguard.rules.sample_latest_tag",
                Severity::Low,
                Action::Audit
            ),
            (
                "SG902",
                "syncguard.rules.sample_restart_policy",
                Severity::Medium,
                Action::Warn
            ),
        ]
    );
    let deadline = &set.rules()[0];
    assert_eq!(deadline.title, "hook Job without activeDeadlineSeconds");
    assert_eq!(deadline.docs.as_deref(), Some("docs/rules/SG901.md"));
    assert!(
        deadline
            .why
            .as_deref()
            .unwrap()
            .starts_with("Argo CD waits")
    );
    assert!(deadline.files[0].ends_with("basic/sample_hook_deadline.rego"));
    // The test package and the helper library are not rules.
    assert_eq!(set.rules().len(), 3);
}

#[test]
fn one_evaluation_reports_the_violations_and_patches_of_every_rule() {
    for set in both_backends("basic") {
        let r = bad_hook_job("migrate").resource();
        let outcomes = set.evaluate(&input_for(&r));
        assert_eq!(
            ids(&outcomes),
            vec!["SG901", "SG903", "SG902"],
            "{:?}",
            set.backend()
        );
        let Verdict::Reported {
            violations,
            patches,
        } = &outcomes[0].verdict
        else {
            panic!("SG901 failed: {:?}", outcomes[0].verdict);
        };
        assert_eq!(
            violations[0].msg,
            "hook Job migrate has no activeDeadlineSeconds: if it hangs, the sync hangs with it"
        );
        assert_eq!(
            violations[0].path.as_deref(),
            Some("/spec/activeDeadlineSeconds")
        );
        // The value comes from config.yaml (`defaults`), through a helper package.
        assert_eq!(
            serde_json::to_value(patches).unwrap(),
            json!([{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 600}])
        );
        let Verdict::Reported { violations, .. } = &outcomes[1].verdict else {
            panic!("SG903 failed");
        };
        assert_eq!(violations.len(), 1);
        assert_eq!(
            violations[0].path.as_deref(),
            Some("/spec/template/spec/containers/1/image")
        );
    }
}

#[test]
fn rules_with_nothing_to_say_are_omitted() {
    for set in both_backends("basic") {
        let r = Obj::config_map("settings").resource();
        assert!(set.evaluate(&input_for(&r)).is_empty());
        let plain_job = Obj::job("batch").resource();
        assert!(set.evaluate(&input_for(&plain_job)).is_empty());
    }
}

#[test]
fn the_vm_and_the_interpreter_agree() {
    let [vm, interpreter]: [PolicySet; 2] = both_backends("basic").try_into().unwrap();
    assert_eq!(interpreter.backend(), Backend::Interpreter);
    let objects = [
        bad_hook_job("a"),
        bad_hook_job("b").set("/spec/activeDeadlineSeconds", json!(60)),
        Obj::job("c").hook("Sync"),
        Obj::new("v1", "Pod", "p")
            .hook("PostSync")
            .set("/spec", json!({"restartPolicy": "OnFailure", "containers": [{"name": "x", "image": "x:latest"}]})),
        Obj::config_map("d"),
    ];
    for o in &objects {
        let input = input_for(&o.resource());
        assert_eq!(vm.evaluate(&input), interpreter.evaluate(&input), "{}", o.0);
    }
}

#[test]
fn rules_the_vm_cannot_compile_fall_back_to_the_interpreter_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    // `with` inside a rule (not a test) is not supported by the RVM compiler.
    fs::write(
        dir.path().join("with_in_rule.rego"),
        "package syncguard.rules.with_in_rule\n\n\
         meta := {\"id\": \"SG960\", \"title\": \"t\", \"severity\": \"low\", \"action\": \"warn\"}\n\n\
         is_job if input.resource.kind == \"Job\"\n\n\
         violations contains {\"msg\": \"job\"} if is_job with input.resource.kind as input.resource.kind\n",
    )
    .unwrap();
    let set = PolicySet::load(dir.path()).unwrap();
    assert_eq!(set.backend(), Backend::Interpreter);
    assert_eq!(set.notes().len(), 1);
    assert!(
        set.notes()[0].contains("RVM compiler rejected"),
        "{:?}",
        set.notes()
    );
    let job = Obj::job("j").resource();
    assert_eq!(ids(&set.evaluate(&input_for(&job))), vec!["SG960"]);
}

#[test]
fn a_failing_rule_is_a_policy_error_while_the_others_still_report() {
    for set in both_backends("runtime_error") {
        let job = Obj::job("migrate").label("syncguard.dev/bad", "true");
        let outcomes = set.evaluate(&input_for(&job.resource()));
        assert_eq!(
            ids(&outcomes),
            vec!["SG911", "SG912", "SG910"],
            "{:?}",
            set.backend()
        );
        let message = |o: &RuleOutcome| match &o.verdict {
            Verdict::Failed(m) => m.clone(),
            other => panic!("{} did not fail: {other:?}", o.rule.id),
        };
        let overflow = message(&outcomes[0]);
        assert!(overflow.contains("numeric overflow"), "{overflow}");
        let malformed = message(&outcomes[1]);
        assert!(
            malformed.contains("malformed output") && malformed.contains("jobs are not allowed"),
            "{malformed}"
        );
        assert!(
            matches!(&outcomes[2].verdict, Verdict::Reported { violations, .. } if violations.len() == 1)
        );

        // As findings: policy errors keep the rule's action, so gates treat them as blocking.
        let f = set.findings_for(&job.resource(), &input_for(&job.resource()));
        assert_eq!(
            summary(&f),
            vec![
                ("SG911".into(), Action::Deny, Status::PolicyError),
                ("SG912".into(), Action::Warn, Status::PolicyError),
                ("SG910".into(), Action::Warn, Status::Open),
            ]
        );
        assert!(f[0].message.starts_with("rule could not be evaluated: "));

        // Objects that do not trigger the failure are judged normally.
        let cm = Obj::config_map("c").label("syncguard.dev/bad", "true");
        assert_eq!(
            ids(&set.evaluate(&input_for(&cm.resource()))),
            vec!["SG910"]
        );
    }
}

#[test]
fn an_undefined_rule_output_does_not_hide_the_other_rules() {
    for set in both_backends("edge_cases") {
        let cm = Obj::config_map("c").label("syncguard.dev/bad", "true");
        assert_eq!(
            ids(&set.evaluate(&input_for(&cm.resource()))),
            vec!["SG910"],
            "{:?}",
            set.backend()
        );
        let secret = Obj::new("v1", "Secret", "s").label("syncguard.dev/bad", "true");
        assert_eq!(
            ids(&set.evaluate(&input_for(&secret.resource()))),
            vec!["SG950", "SG910"]
        );
    }
}

#[test]
fn a_patch_that_cannot_be_applied_is_a_policy_error_next_to_the_violation() {
    for set in both_backends("edge_cases") {
        let pod = Obj::new("v1", "Pod", "p").set("/spec", json!({"containers": []}));
        let f = findings(&set, &pod);
        assert_eq!(
            summary(&f),
            vec![
                ("SG951".into(), Action::Mutate, Status::Open),
                ("SG951".into(), Action::Mutate, Status::PolicyError),
            ],
            "patch_only (SG952) must not appear: a patch without a violation is dropped"
        );
        assert!(f[0].patch.is_none());
        assert!(
            f[1].message
                .contains("parent `/spec/template` does not exist"),
            "{}",
            f[1].message
        );
    }
}

#[test]
fn a_runaway_rule_hits_the_deadline_and_becomes_a_policy_error() {
    for interpreter_only in [false, true] {
        let options = LoadOptions {
            deadline: Duration::from_millis(50),
            interpreter_only,
            ..LoadOptions::default()
        };
        let set = PolicySet::load_with(&fixture("slow"), &options).unwrap();
        let cm = Obj::config_map("big").label("syncguard.dev/bad", "true");
        let started = Instant::now();
        let outcomes = set.evaluate(&input_for(&cm.resource()));
        let took = started.elapsed();
        assert_eq!(
            ids(&outcomes),
            vec!["SG910", "SG921"],
            "{:?}",
            set.backend()
        );
        match &outcomes[1].verdict {
            Verdict::Failed(m) => assert!(m.contains("time limit"), "{m}"),
            other => panic!("runaway rule did not fail: {other:?}"),
        }
        // The whole pass (≤ 50 ms) plus the isolation pass (≤ another 50 ms) — far from the
        // seconds the comprehension would take, with slack for slow CI machines.
        assert!(took < Duration::from_millis(1500), "took {took:?}");
    }
}

#[test]
fn a_syntax_error_is_reported_with_file_line_and_column() {
    let err = PolicySet::load(&fixture("syntax_error")).unwrap_err();
    let PolicyError::Rego { file, line, .. } = &err else {
        panic!("unexpected error: {err}");
    };
    assert!(file.ends_with("syntax_error/unbalanced.rego"), "{file}");
    assert_eq!(*line, 8);
    assert!(err.to_string().contains("unbalanced.rego:8:"), "{err}");
    assert_eq!(err.metric_label(), "rego");
}

#[test]
fn a_rule_without_meta_is_a_load_error_naming_its_file() {
    let err = PolicySet::load(&fixture("missing_meta")).unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(
            "missing_meta/anonymous.rego: package syncguard.rules.anonymous: declares no `meta`"
        ),
        "{text}"
    );
}

/// A copy of the `basic` fixture with a different config.yaml.
fn basic_with_config(config: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in fs::read_dir(fixture("basic")).unwrap() {
        let path = entry.unwrap().path();
        fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    fs::write(dir.path().join("config.yaml"), config).unwrap();
    dir
}

#[test]
fn config_errors_name_the_file_and_line() {
    let dir = basic_with_config("actions:\n  SG901: warn\n  SG902: block\n");
    let err = PolicySet::load(dir.path()).unwrap_err();
    assert!(
        matches!(err, PolicyError::Config { line: Some(3), .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("config.yaml:3: actions.SG902: unknown action `block`"),
        "{err}"
    );

    let dir = basic_with_config("exempt_namespace: [kube-system]\n");
    let err = PolicySet::load(dir.path()).unwrap_err();
    assert!(
        err.to_string()
            .contains("config.yaml:1: unknown key `exempt_namespace`"),
        "{err}"
    );

    let dir = basic_with_config("namespaces:\n  prod:\n    actions:\n      SG999: deny\n");
    let err = PolicySet::load(dir.path()).unwrap_err();
    assert!(
        err.to_string()
            .contains("config.yaml:4: unknown rule SG999"),
        "{err}"
    );
    assert!(err.to_string().contains("SG901, SG902, SG903"), "{err}");
}

#[test]
fn a_directory_without_rules_or_that_does_not_exist_is_an_error() {
    let empty = tempfile::tempdir().unwrap();
    fs::write(empty.path().join("notes.md"), "no rules here\n").unwrap();
    let err = PolicySet::load(empty.path()).unwrap_err();
    assert!(matches!(err, PolicyError::NoRules { .. }), "{err}");
    assert!(err.to_string().contains("only a config.yaml"), "{err}");
    assert!(matches!(
        PolicySet::load(&empty.path().join("nope")),
        Err(PolicyError::Io { .. })
    ));
}

#[test]
fn a_directory_with_only_a_config_runs_the_builtin_rules_with_that_config() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("config.yaml"),
        "actions: {SG103: deny}\nexempt_namespaces: []\n",
    )
    .unwrap();
    let set = PolicySet::load(dir.path()).unwrap();
    let builtin = syncguard::policy::builtin::PolicySource::Builtin
        .load()
        .unwrap();
    let ids = |s: &PolicySet| s.rules().iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&set), ids(&builtin));
    assert!(
        set.rules()
            .iter()
            .all(|r| r.files.iter().all(|f| f.starts_with("<built-in>/")))
    );
    // The directory's config.yaml replaces the built-in one.
    assert_eq!(set.dir(), dir.path());
    let sg103 = syncguard::finding::RuleId::from("SG103");
    assert_eq!(
        set.config().action_for(&sg103, None, Action::Warn),
        Action::Deny
    );
    assert!(set.config().exempt_namespaces.is_empty());
    assert_eq!(builtin.config().exempt_namespaces.len(), 1);
}

#[test]
fn findings_carry_the_effective_action_location_and_a_minimal_patch() {
    let set = basic();
    let r = bad_hook_job("migrate").namespace("shop").resource_from(
        "rendered/job.yaml",
        10,
        &[("/spec", 16), ("/spec/template/spec/restartPolicy", 19)],
    );
    let f = set.findings_for(&r, &input_for(&r));
    assert_eq!(
        summary(&f),
        vec![
            ("SG901".into(), Action::Mutate, Status::Open),
            ("SG903".into(), Action::Warn, Status::Open),
            ("SG902".into(), Action::Warn, Status::Open),
        ]
    );
    let deadline = &f[0];
    assert_eq!(deadline.severity, Severity::High);
    assert_eq!(deadline.resource.to_string(), "Job/shop/migrate");
    // A field that does not exist yet points at its closest written ancestor.
    assert_eq!(
        deadline.location.as_ref().unwrap().to_string(),
        "rendered/job.yaml:16:1"
    );
    assert_eq!(
        serde_json::to_value(deadline.patch.as_ref().unwrap()).unwrap(),
        json!([{"op": "add", "path": "/spec/activeDeadlineSeconds", "value": 600}])
    );
    assert_eq!(f[2].location.as_ref().unwrap().line, 19);
    assert!(f[1].patch.is_none());
}

#[test]
fn a_patched_object_no_longer_trips_the_mutating_rule() {
    let set = basic();
    let r = bad_hook_job("migrate").resource();
    let f = set.findings_for(&r, &input_for(&r));
    let patch = mutate::combined_patch(&r.raw, &f).unwrap();
    let mut patched = r.raw.clone();
    json_patch::patch(&mut patched, &patch).unwrap();
    let again = Obj(patched).resource();
    let ids_after: Vec<_> = set
        .findings_for(&again, &input_for(&again))
        .iter()
        .map(|f| f.rule_id.to_string())
        .collect();
    assert_eq!(ids_after, vec!["SG903", "SG902"]);
    // And the combined patch of the patched object is empty: mutation is idempotent.
    let f_after = set.findings_for(&again, &input_for(&again));
    assert!(
        mutate::combined_patch(&again.raw, &f_after)
            .unwrap()
            .0
            .is_empty()
    );
}

#[test]
fn namespace_overrides_prefer_exact_names_then_longer_prefixes() {
    let set = basic();
    let action_in = |ns: &str| {
        let f = findings(&set, &bad_hook_job("j").namespace(ns));
        f.iter()
            .find(|f| f.rule_id.as_str() == "SG901")
            .map(|f| f.action)
    };
    assert_eq!(action_in("legacy-billing-eu"), Some(Action::Deny)); // exact name
    assert_eq!(action_in("legacy-billing-us"), Some(Action::Audit)); // longer prefix
    assert_eq!(action_in("legacy-shop"), Some(Action::Warn)); // shorter prefix
    assert_eq!(action_in("shop"), Some(Action::Mutate)); // meta.action
    // legacy-billing-* says nothing about SG902, so legacy-* still applies to it.
    let f = findings(&set, &bad_hook_job("j").namespace("legacy-billing-us"));
    let sg902 = f.iter().find(|f| f.rule_id.as_str() == "SG902").unwrap();
    assert_eq!(sg902.action, Action::Audit);
}

#[test]
fn the_actions_override_replaces_the_rule_default() {
    let f = findings(&basic(), &bad_hook_job("j"));
    let sg903 = f.iter().find(|f| f.rule_id.as_str() == "SG903").unwrap();
    assert_eq!(sg903.action, Action::Warn); // meta.action is audit
}

#[test]
fn an_off_action_drops_the_finding() {
    let f = findings(&basic(), &bad_hook_job("j").namespace("quiet"));
    assert_eq!(
        f.iter().map(|f| f.rule_id.as_str()).collect::<Vec<_>>(),
        vec!["SG901", "SG903"]
    );
}

#[test]
fn exempt_namespaces_turn_findings_into_skipped_findings() {
    let set = basic();
    let f = findings(&set, &bad_hook_job("j").namespace("sandbox-alice"));
    assert_eq!(f.len(), 3);
    for finding in &f {
        assert_eq!(
            finding.status,
            skipped("namespace `sandbox-alice` is exempt (exempt_namespaces: sandbox-*)")
        );
    }
    let f = findings(&set, &bad_hook_job("j").namespace("kube-system"));
    assert!(f.iter().all(|f| matches!(f.status, Status::Skipped { .. })));
}

#[test]
fn a_skip_annotation_with_a_reason_skips_only_the_listed_rules() {
    let obj = bad_hook_job("j")
        .annotation("syncguard.dev/skip", " SG901 , SG903")
        .annotation(
            "syncguard.dev/skip-reason",
            "DBA-1234: migration has its own watchdog",
        );
    let f = findings(&basic(), &obj);
    let reason = skipped("DBA-1234: migration has its own watchdog");
    assert_eq!(
        summary(&f),
        vec![
            ("SG901".into(), Action::Mutate, reason.clone()),
            ("SG903".into(), Action::Warn, reason),
            ("SG902".into(), Action::Warn, Status::Open),
        ]
    );
}

#[test]
fn skip_all_skips_every_rule() {
    let obj = bad_hook_job("j")
        .annotation("syncguard.dev/skip", "all")
        .annotation(
            "syncguard.dev/skip-reason",
            "vendored chart, tracked in OPS-7",
        );
    let f = findings(&basic(), &obj);
    assert!(f.iter().all(|f| matches!(f.status, Status::Skipped { .. })));
}

#[test]
fn a_skip_annotation_without_a_reason_is_not_honoured_and_is_reported_as_sg000() {
    let obj = bad_hook_job("j")
        .annotation("syncguard.dev/skip", "SG901")
        .annotation("syncguard.dev/skip-reason", "   ");
    let r = obj.resource_from(
        "job.yaml",
        1,
        &[("/metadata/annotations/syncguard.dev~1skip", 6)],
    );
    let f = basic().findings_for(&r, &input_for(&r));
    assert_eq!(
        summary(&f),
        vec![
            ("SG000".into(), Action::Warn, Status::Open),
            ("SG901".into(), Action::Mutate, Status::Open),
            ("SG903".into(), Action::Warn, Status::Open),
            ("SG902".into(), Action::Warn, Status::Open),
        ]
    );
    let sg000 = &f[0];
    assert_eq!(sg000.title, "exemption without a reason");
    assert_eq!(sg000.severity, Severity::Low);
    assert_eq!(sg000.location.as_ref().unwrap().line, 6);
    assert!(
        sg000
            .message
            .contains("add a `syncguard.dev/skip-reason` annotation"),
        "{}",
        sg000.message
    );
}

#[test]
fn annotation_exemptions_can_be_switched_off() {
    let dir = basic_with_config("annotation_exemptions: false\nactions:\n  SG000: deny\n");
    let set = PolicySet::load(dir.path()).unwrap();
    let honoured_elsewhere = bad_hook_job("j")
        .annotation("syncguard.dev/skip", "SG901")
        .annotation("syncguard.dev/skip-reason", "would be honoured if enabled");
    let f = findings(&set, &honoured_elsewhere);
    assert!(f.iter().all(|f| f.status == Status::Open));
    let unexplained = bad_hook_job("j").annotation("syncguard.dev/skip", "SG901");
    assert!(
        findings(&set, &unexplained)
            .iter()
            .all(|f| f.rule_id.as_str() != "SG000")
    );
}

#[test]
fn evaluate_many_matches_evaluate_in_input_order() {
    let set = basic();
    let inputs: Vec<_> = (0..64)
        .map(|i| {
            let o = if i % 3 == 0 {
                bad_hook_job(&format!("j{i}"))
            } else {
                Obj::config_map(&format!("c{i}"))
            };
            input_for(&o.resource())
        })
        .collect();
    let many = set.evaluate_many(&inputs);
    assert_eq!(many.len(), inputs.len());
    for (input, outcomes) in inputs.iter().zip(&many) {
        assert_eq!(&set.evaluate(input), outcomes);
    }
}

#[test]
fn a_violation_may_override_the_rule_severity() {
    // SG112 (meta.severity medium) reports "name and generateName" as low and "fixed-name
    // non-hook Job" as info, as policies/README.md allows.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    for set in [
        PolicySet::load(&dir).unwrap(),
        PolicySet::load_with(
            &dir,
            &LoadOptions {
                interpreter_only: true,
                ..LoadOptions::default()
            },
        )
        .unwrap(),
    ] {
        let job = Obj::job("migrate").set("/metadata/generateName", json!("migrate-"));
        let mut got: Vec<(String, Severity)> = findings(&set, &job)
            .iter()
            .map(|f| (f.path.clone().unwrap_or_default(), f.severity))
            .collect();
        got.sort();
        assert_eq!(
            got,
            vec![
                ("/metadata/generateName".to_string(), Severity::Low),
                ("/spec/template".to_string(), Severity::Info),
            ],
            "{:?}",
            set.backend()
        );
    }
}
