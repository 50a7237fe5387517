#![allow(clippy::unwrap_used)]
use serde_json::Value;
use std::path::Path;
use std::time::Instant;
use syncguard::evaluate::{AdmissionFacts, EvaluateOptions, build_admission_input};
use syncguard::model::Resource;
use syncguard::policy::PolicySet;

#[test]
#[ignore]
fn rule_cost() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut inputs = Vec::new();
    for name in [
        "configmap-clean.json",
        "seed-job-create.json",
        "hook-job-no-deadline.json",
        "deployment-update.json",
    ] {
        let v: Value = serde_json::from_slice(
            &std::fs::read(root.join("tests/fixtures/admission").join(name)).unwrap(),
        )
        .unwrap();
        let obj = v["request"]["object"].clone();
        let r = Resource::from_value(obj, None).unwrap();
        let facts = AdmissionFacts {
            operation: "CREATE".into(),
            old: None,
            dry_run: false,
            user: Value::Null,
        };
        inputs.push((
            name,
            build_admission_input(&r, &[], &facts, &EvaluateOptions::default()),
        ));
    }
    let mut rules: Vec<_> = std::fs::read_dir(root.join("policies"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "rego")
                && !p.to_string_lossy().ends_with("_test.rego")
        })
        .collect();
    rules.sort();
    let all = PolicySet::load(&root.join("policies")).unwrap();
    let mut sets = vec![("ALL".to_string(), all)];
    for r in &rules {
        let d = tempfile::tempdir().unwrap();
        std::fs::copy(r, d.path().join(r.file_name().unwrap())).unwrap();
        sets.push((
            r.file_stem().unwrap().to_string_lossy().into_owned(),
            PolicySet::load(d.path()).unwrap(),
        ));
        std::mem::forget(d);
    }
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("noop.rego"), "package syncguard.rules.noop\nmeta := {\"id\": \"ORG999\", \"title\": \"t\", \"severity\": \"low\", \"action\": \"warn\"}\nviolations contains {\"msg\": \"x\"} if { false }\n").unwrap();
    sets.push(("noop".into(), PolicySet::load(empty.path()).unwrap()));
    print!("{:40}", "rule");
    for (n, _) in &inputs {
        print!("{:>14}", &n[..12.min(n.len())]);
    }
    println!();
    for (name, set) in &sets {
        print!("{name:40}");
        for (_, input) in &inputs {
            for _ in 0..200 {
                set.evaluate(input);
            }
            let n = 2000;
            let t = Instant::now();
            for _ in 0..n {
                std::hint::black_box(set.evaluate(input));
            }
            print!("{:>14.1}", t.elapsed().as_secs_f64() * 1e6 / n as f64);
        }
        println!();
    }
}

#[test]
#[ignore]
fn loop_all() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = std::env::var("FIX").unwrap_or("configmap-clean.json".into());
    let v: Value = serde_json::from_slice(
        &std::fs::read(root.join("tests/fixtures/admission").join(name)).unwrap(),
    )
    .unwrap();
    let r = Resource::from_value(v["request"]["object"].clone(), None).unwrap();
    let facts = AdmissionFacts {
        operation: "CREATE".into(),
        old: None,
        dry_run: false,
        user: Value::Null,
    };
    let input = build_admission_input(&r, &[], &facts, &EvaluateOptions::default());
    let all = PolicySet::load(&root.join("policies")).unwrap();
    let t = Instant::now();
    let n = 50000;
    for _ in 0..n {
        std::hint::black_box(all.evaluate(&input));
    }
    println!("{:.1} us", t.elapsed().as_secs_f64() * 1e6 / n as f64);
}

#[test]
#[ignore]
fn seed_fast_path() {
    use syncguard::evaluate::PreparedSet;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let v: Value = serde_json::from_slice(
        &std::fs::read(root.join("tests/fixtures/admission/seed-job-create.json")).unwrap(),
    )
    .unwrap();
    let mut r = Resource::from_value(v["request"]["object"].clone(), None).unwrap();
    if r.namespace.is_none() {
        r.namespace = v["request"]["namespace"].as_str().map(String::from);
    }
    let set = syncguard::manifest::load_paths(&[root.join("examples/seed-incident")]).resources;
    let facts = AdmissionFacts {
        operation: "CREATE".into(),
        old: None,
        dry_run: false,
        user: Value::Null,
    };
    let opts = EvaluateOptions {
        source: syncguard::evaluate::Source::Admission,
        destination_namespace: r.namespace.clone(),
        require_crds: false,
    };
    let p = PreparedSet::new(set.clone());
    for _ in 0..100 {
        p.admission_input(&r, &facts, &opts);
    }
    let n = 5000;
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(p.admission_input(&r, &facts, &opts));
    }
    println!(
        "prepared {:.1} us",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(build_admission_input(&r, &set, &facts, &opts));
    }
    println!(
        "rebuilt {:.1} us",
        t.elapsed().as_secs_f64() * 1e6 / n as f64
    );
    let t = Instant::now();
    for _ in 0..n {
        std::hint::black_box(build_admission_input(&r, &[], &facts, &opts));
    }
    println!(
        "no context {:.1} us ({} objects in set)",
        t.elapsed().as_secs_f64() * 1e6 / n as f64,
        set.len()
    );
    let all = PolicySet::load(&root.join("policies")).unwrap();
    for (label, doc) in [
        ("ctx", p.admission_input(&r, &facts, &opts)),
        ("noctx", build_admission_input(&r, &[], &facts, &opts)),
    ] {
        for _ in 0..100 {
            all.evaluate(&doc);
        }
        let t = Instant::now();
        for _ in 0..n {
            std::hint::black_box(all.evaluate(&doc));
        }
        println!(
            "rules on {label} doc {:.1} us, {} bytes",
            t.elapsed().as_secs_f64() * 1e6 / n as f64,
            doc.to_string().len()
        );
    }
}

#[test]
#[ignore]
fn reload_parts() {
    use syncguard::policy::test_runner::{TestOptions, run_tests};
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    for _ in 0..3 {
        let t = Instant::now();
        let _ = PolicySet::load(&root).unwrap();
        let load = t.elapsed();
        let t = Instant::now();
        let r = run_tests(&root, &TestOptions::default()).unwrap();
        let tests = t.elapsed();
        let t = Instant::now();
        let _ = syncguard::webhook::load_policies(
            &syncguard::policy::builtin::PolicySource::Dir(root.clone()),
            std::time::Duration::from_millis(250),
        )
        .unwrap();
        let both = t.elapsed();
        println!(
            "load {:?} tests {:?} ({} cases, sum of case durations {:?}) load_tested {:?}",
            load,
            tests,
            r.results.len(),
            r.results
                .iter()
                .map(|c| c.duration)
                .sum::<std::time::Duration>(),
            both
        );
    }
}

#[test]
#[ignore]
fn reload_phases() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rego"))
        .collect();
    files.sort();
    let texts: Vec<(String, String, bool)> = files
        .iter()
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(p).unwrap(),
                p.to_string_lossy().ends_with("_test.rego"),
            )
        })
        .collect();
    for _ in 0..3 {
        let t = Instant::now();
        let mut e = regorus::Engine::new();
        for (l, s, test) in &texts {
            if !test {
                e.add_policy(l.clone(), s.clone()).unwrap();
            }
        }
        let parse_rules = t.elapsed();
        let t = Instant::now();
        let mut e2 = e.clone();
        for (l, s, test) in &texts {
            if *test {
                e2.add_policy(l.clone(), s.clone()).unwrap();
            }
        }
        let parse_tests = t.elapsed();
        let t = Instant::now();
        e.eval_query("true".to_string(), false).unwrap();
        let prep_rules = t.elapsed();
        let t = Instant::now();
        e2.eval_query("true".to_string(), false).unwrap();
        let prep_all = t.elapsed();
        println!(
            "parse rules {parse_rules:?} parse tests {parse_tests:?} prepare rules {prep_rules:?} prepare rules+tests {prep_all:?}"
        );
    }
}

#[test]
#[ignore]
fn parse_per_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_test.rego"))
        .collect();
    files.sort();
    let mut rows = vec![];
    for p in &files {
        let s = std::fs::read_to_string(p).unwrap();
        let t = Instant::now();
        for _ in 0..5 {
            let mut e = regorus::Engine::new();
            e.add_policy(p.display().to_string(), s.clone()).unwrap();
        }
        rows.push((
            t.elapsed() / 5,
            s.len(),
            s.lines().count(),
            p.file_name().unwrap().to_string_lossy().into_owned(),
        ));
    }
    rows.sort();
    for r in rows.iter().rev() {
        println!("{:?} {} bytes {} lines {}", r.0, r.1, r.2, r.3);
    }
}

#[test]
#[ignore]
fn parallel_parse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with("_test.rego"))
        .collect();
    files.sort();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|p| (p.display().to_string(), std::fs::read_to_string(p).unwrap()))
        .collect();
    let parse = |ts: &[(String, String)]| {
        let mut e = regorus::Engine::new();
        for (l, s) in ts {
            e.add_policy(l.clone(), s.clone()).unwrap();
        }
        e
    };
    for _ in 0..3 {
        let t = Instant::now();
        let _ = parse(&texts);
        let one = t.elapsed();
        let (a, b) = texts.split_at(texts.len() / 2);
        let t = Instant::now();
        std::thread::scope(|s| {
            let h = s.spawn(|| {
                let t = Instant::now();
                parse(a);
                t.elapsed()
            });
            let t2 = Instant::now();
            parse(b);
            let mine = t2.elapsed();
            println!("  threads: {:?} {:?}", h.join().unwrap(), mine);
        });
        println!("one thread {one:?}, two threads {:?}", t.elapsed());
    }
}

#[test]
#[ignore]
fn small_engine_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("policies");
    let mut files: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "rego"))
        .collect();
    files.sort();
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect();
    let mk = |filter: &dyn Fn(&str) -> bool| {
        let mut e = regorus::Engine::new();
        e.set_strict_builtin_errors(true);
        for (l, s) in &texts {
            if filter(l) {
                e.add_policy(l.clone(), s.clone()).unwrap();
            }
        }
        e.add_data(regorus::Value::from(
            serde_json::json!({"syncguard": {"config": {}}}),
        ))
        .unwrap();
        e.eval_query("true".into(), false).unwrap();
        e
    };
    let mut full = mk(&|_| true);
    let (mut tfull, mut tsmall, mut tprep) = (
        std::time::Duration::ZERO,
        std::time::Duration::ZERO,
        std::time::Duration::ZERO,
    );
    for (l, s) in &texts {
        let Some(pkg) = l.strip_suffix("_test.rego") else {
            continue;
        };
        let names: Vec<String> = s
            .lines()
            .filter_map(|x| x.strip_prefix("test_"))
            .map(|r| {
                format!(
                    "test_{}",
                    r.chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect::<String>()
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let t = Instant::now();
        let rule = format!("{pkg}.rego");
        let test = l.clone();
        let mut small = mk(&|f| f == rule || f == test);
        tprep += t.elapsed();
        for n in &names {
            let path = format!("data.syncguard.rules.{pkg}_test.{n}");
            let t = Instant::now();
            let a = full.eval_rule(path.clone()).unwrap();
            tfull += t.elapsed();
            let t = Instant::now();
            let b = small.eval_rule(path.clone()).unwrap();
            tsmall += t.elapsed();
            assert_eq!(a, b, "{path}");
        }
    }
    println!(
        "cases in full engine {tfull:?}, in per-package engines {tsmall:?} (+ building those engines {tprep:?})"
    );
}
