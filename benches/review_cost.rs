//! What one admission review costs, and what each rule adds to it.
//!
//!     cargo bench --bench review_cost [-- [--iterations N] [--rule NAME] [--app-objects N]]
//!
//! Calls the webhook's review handler (decode, input document, policy evaluation, response;
//! no TLS or HTTP) in a loop on one thread, for the four evaluated reviews of
//! `bench/webhook_load.sh`'s mix, with `examples/seed-incident` as the app context:
//! - with every built-in rule (`all`);
//! - with one rule that applies to every object and never fires (`baseline`: the cost of a
//!   review before any rule's own work);
//! - with each built-in rule alone (its file and the built-in `config.yaml`), so `alone −
//!   baseline` is what that rule adds to a review of that kind.
//!
//! `--app-objects N` adds the Application `inventory` (of the ConfigMap and Deployment reviews)
//! with N more objects (`bench/app_gen.py`, needs python3), to show the cost does not grow with
//! the size of the Application. Each figure is the fastest of 7 rounds of N iterations (default
//! 400) after a warm-up: on a shared machine, a round is only ever slowed down by others, so the
//! fastest round is the closest to the cost itself. Compare rows of one run, not runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use syncguard::metrics::Metrics;
use syncguard::policy::builtin::PolicySource;
use syncguard::webhook::{
    AppContext, Endpoint, ManifestContext, ReviewOptions, State, handle_review, load_policies,
};

const REVIEWS: [&str; 4] = [
    "seed-job-create",
    "hook-job-no-deadline",
    "configmap-clean",
    "deployment-update",
];
const ROUNDS: usize = 7;

const BASELINE: &str = r#"package syncguard.rules.baseline

meta := {"id": "SG999", "title": "never fires", "severity": "low", "action": "warn", "why": "a baseline", "docs": "none"}

violations contains {"msg": "never"} if input.no_such_fact == true
"#;

struct Args {
    iterations: usize,
    rule: Option<String>,
    app_objects: Option<usize>,
}

fn args() -> Result<Args, String> {
    let mut out = Args {
        iterations: 400,
        rule: None,
        app_objects: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--bench" => {} // passed by `cargo bench`
            "--iterations" => {
                out.iterations = value("--iterations")?
                    .parse()
                    .map_err(|e| format!("--iterations: {e}"))?;
            }
            "--rule" => out.rule = Some(value("--rule")?),
            "--app-objects" => {
                out.app_objects = Some(
                    value("--app-objects")?
                        .parse()
                        .map_err(|e| format!("--app-objects: {e}"))?,
                );
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(out)
}

fn main() {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("review_cost: {e}");
            std::process::exit(2);
        }
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tmp = tempfile::tempdir().expect("temp dir");
    let reviews: Vec<Vec<u8>> = REVIEWS
        .iter()
        .map(|n| {
            std::fs::read(root.join(format!("tests/fixtures/admission/{n}.json"))).expect("fixture")
        })
        .collect();
    let context_dir = context(root, tmp.path(), args.app_objects);
    let context: Arc<dyn AppContext> =
        Arc::new(ManifestContext::load(&context_dir).expect("app context"));

    let mut sets: Vec<(String, PolicySource)> = vec![("all".into(), PolicySource::Builtin)];
    let config = root.join("policies/config.yaml");
    let dir_with = |name: &str, file: &str, text: &str| -> PolicySource {
        let dir = tmp.path().join("sets").join(name);
        std::fs::create_dir_all(&dir).expect("set dir");
        std::fs::write(dir.join(file), text).expect("rule file");
        std::fs::copy(&config, dir.join("config.yaml")).expect("config.yaml");
        PolicySource::Dir(dir)
    };
    sets.push((
        "baseline".into(),
        dir_with("baseline", "baseline.rego", BASELINE),
    ));
    let mut rules: Vec<String> = std::fs::read_dir(root.join("policies"))
        .expect("policies/")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let rule = name.strip_suffix(".rego")?;
            (!rule.ends_with("_test")).then(|| rule.to_string())
        })
        .collect();
    rules.sort();
    for rule in rules {
        if args.rule.as_ref().is_some_and(|r| *r != rule) {
            continue;
        }
        let text =
            std::fs::read_to_string(root.join(format!("policies/{rule}.rego"))).expect("rule file");
        let source = dir_with(&rule, &format!("{rule}.rego"), &text);
        sets.push((rule, source));
    }

    println!(
        "µs per review (fastest of {ROUNDS} rounds of {} iterations), app context: {}",
        args.iterations,
        match args.app_objects {
            Some(n) => format!("seed-incident + Application inventory of {} objects", n + 2),
            None => "seed-incident".into(),
        }
    );
    print!("{:32}", "rule set");
    for name in REVIEWS {
        print!(" {name:>21}");
    }
    println!();
    let mut baseline: Option<Vec<f64>> = None;
    for (label, source) in sets {
        let policies = match load_policies(&source, Duration::from_millis(500)) {
            Ok(p) => p,
            Err(e) => {
                println!("{label:32} cannot be loaded alone: {e}");
                continue;
            }
        };
        let state = State::new(
            policies,
            context.clone(),
            ReviewOptions::default(),
            1,
            Arc::new(Metrics::new()),
        );
        let costs: Vec<f64> = reviews
            .iter()
            .map(|body| fastest_cost(&state, body, args.iterations))
            .collect();
        print!("{label:32}");
        for (i, c) in costs.iter().enumerate() {
            match (&baseline, label.as_str()) {
                (Some(b), l) if l != "all" => {
                    print!(" {c:>9.1} ({:>+7.1})", c - b[i]);
                }
                _ => print!(" {c:>21.1}"),
            }
        }
        println!();
        if label == "baseline" {
            baseline = Some(costs);
        }
    }
    println!("(in brackets: the cost above the baseline, i.e. the rule's own work)");
}

/// The app context: the seed incident, plus the generated Application when asked for.
fn context(root: &Path, tmp: &Path, app_objects: Option<usize>) -> PathBuf {
    let seed = root.join("examples/seed-incident");
    let Some(n) = app_objects else {
        return seed;
    };
    let dir = tmp.join("context");
    std::fs::create_dir_all(&dir).expect("context dir");
    for entry in std::fs::read_dir(&seed).expect("seed-incident") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "yaml") {
            std::fs::copy(&path, dir.join(path.file_name().expect("name"))).expect("copy");
        }
    }
    let status = std::process::Command::new("python3")
        .arg(root.join("bench/app_gen.py"))
        .arg(n.to_string())
        .arg(dir.join("inventory.json"))
        .status()
        .expect("python3 bench/app_gen.py");
    assert!(status.success(), "bench/app_gen.py failed");
    dir
}

fn fastest_cost(state: &State, body: &[u8], iterations: usize) -> f64 {
    for _ in 0..50 {
        std::hint::black_box(handle_review(state, Endpoint::Validate, body));
    }
    (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iterations {
                std::hint::black_box(handle_review(state, Endpoint::Validate, body));
            }
            start.elapsed().as_secs_f64() * 1e6 / iterations.max(1) as f64
        })
        .fold(f64::INFINITY, f64::min)
}
