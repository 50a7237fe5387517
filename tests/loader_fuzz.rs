//! Loading never panics, whatever the input: truncated streams, tabs, huge scalars, deep
//! nesting, alias bombs, invalid UTF-8 and random bytes. Every problem must come back as a
//! `LoadError` that names the file, and loading must stay fast on hostile input.

use std::time::{Duration, Instant};

use syncguard::manifest::{LoadError, Loaded, MAX_DEPTH, load_reader, load_str};

/// A realistic `helm template` stream: comments, `# Source:`, block and flow styles, quoted
/// scalars, block scalars, anchors, a `List`, an empty template and JSON.
const REALISTIC: &str = r#"---
# Source: shop/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: shop
  labels:
    app.kubernetes.io/name: shop
    app.kubernetes.io/instance: "prod"
---
# Source: shop/templates/empty.yaml
---
# Source: shop/templates/job.yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: shop-migrate
  labels: &labels
    app.kubernetes.io/name: shop
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation,HookSucceeded
    argocd.argoproj.io/sync-wave: "-1"
spec:
  backoffLimit: 2
  template:
    metadata:
      labels: *labels
    spec:
      restartPolicy: OnFailure
      containers:
        - name: migrate
          image: 'registry.example.com/shop:1.2.3'
          args: ["--db", "$(DB_URL)", '--timeout=30s']
          command:
            - /bin/sh
            - -c
            - |
              echo "migrating"
              ./migrate --up
          env:
            - {name: DB_URL, valueFrom: {secretKeyRef: {name: shop-db, key: url}}}
            - name: RATIO
              value: "0.5"
---
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: shop-config}
    data:
      app.properties: >
        folded text
        on two lines
  - {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "shop-db"}, "stringData": {"url": "x"}}
...
"#;

/// A tiny deterministic PRNG (xorshift64*), so failures can be replayed without a new crate.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// What every load must satisfy whatever the input.
fn check(loaded: &Loaded, file: &str) {
    for error in &loaded.errors {
        assert_eq!(error.file(), file, "{error}");
        assert!(error.to_string().starts_with(file), "{error}");
        if let Some(line) = error.line() {
            assert!(line >= 1, "{error}");
        }
    }
    for resource in &loaded.resources {
        let origin = resource
            .origin
            .as_deref()
            .expect("loaded resources have an origin");
        assert_eq!(&*origin.file, file);
        assert!(origin.start.line >= 1 && origin.start.column >= 1);
        assert!(resource.locate("/metadata/name").is_some());
    }
}

#[test]
fn the_realistic_stream_loads_completely() {
    let loaded = load_str("shop.yaml", REALISTIC);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let names: Vec<_> = loaded.resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["shop", "shop-migrate", "shop-config", "shop-db"]);
    check(&loaded, "shop.yaml");
}

#[test]
fn every_prefix_of_a_realistic_stream_loads_without_panicking() {
    for end in (0..=REALISTIC.len()).filter(|&i| REALISTIC.is_char_boundary(i)) {
        let loaded = load_str("cut.yaml", &REALISTIC[..end]);
        check(&loaded, "cut.yaml");
    }
}

#[test]
fn random_edits_of_a_realistic_stream_never_panic() {
    let mut rng = Rng(0x5eed_cafe);
    let pieces: &[&[u8]] = &[
        b"-", b":", b" ", b"\t", b"\n", b"[", b"]", b"{", b"}", b"#", b"&a", b"*a", b"!!int ",
        b"|", b">", b"'", b"\"", b"%", b"---\n", b"...\n", b"? ", b",", b"\xff", b"\\",
    ];
    for _ in 0..600 {
        let mut bytes = REALISTIC.as_bytes().to_vec();
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(bytes.len() + 1);
            match rng.below(3) {
                0 => {
                    let piece = pieces[rng.below(pieces.len())];
                    bytes.splice(at..at, piece.iter().copied());
                }
                1 if at < bytes.len() => {
                    let end = (at + 1 + rng.below(8)).min(bytes.len());
                    bytes.drain(at..end);
                }
                _ if at < bytes.len() => bytes[at] = rng.next() as u8,
                _ => {}
            }
        }
        check(&load_reader("edit.yaml", bytes.as_slice()), "edit.yaml");
    }
}

#[test]
fn random_short_inputs_never_panic() {
    let mut rng = Rng(42);
    let alphabet = b"-:[]{}#&*!|>'\"%@`,?~ \t\r\n\n\n  abkz019.\\/\xc3\xa9\xff\x00";
    for _ in 0..4000 {
        let len = rng.below(48);
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                if rng.below(16) == 0 {
                    rng.next() as u8
                } else {
                    alphabet[rng.below(alphabet.len())]
                }
            })
            .collect();
        check(&load_reader("rand.yaml", bytes.as_slice()), "rand.yaml");
    }
}

#[test]
fn tabs_in_indentation_are_reported_not_fatal() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n\tname: tabbed\n---\n\
                apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n";
    let loaded = load_str("tabs.yaml", text);
    check(&loaded, "tabs.yaml");
    let names: Vec<_> = loaded.resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["fine"]);
    assert!(matches!(
        &loaded.errors[..],
        [LoadError::Syntax { line: 4, .. }]
    ));
}

#[test]
fn a_one_mebibyte_scalar_loads() {
    let big = "x".repeat(1 << 20);
    let text = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  plain: {big}\n  \
         quoted: \"{big}\"\n  block: |\n    {big}\n  ? {big}\n  : as a key\n"
    );
    let loaded = load_str("big.yaml", &text);
    check(&loaded, "big.yaml");
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let r = &loaded.resources[0];
    assert_eq!(
        r.raw["data"]["quoted"].as_str().map(str::len),
        Some(1 << 20)
    );
    assert_eq!(r.locate(&format!("/data/{big}")).map(|l| l.line), Some(10));
}

#[test]
fn deep_nesting_is_rejected_without_overflowing_the_stack() {
    let deep_inputs = [
        "[".repeat(100_000),
        "{".repeat(100_000),
        format!("a: {}", "[".repeat(100_000)),
        "- ".repeat(100_000) + "x\n",
        (0..MAX_DEPTH + 10)
            .map(|depth| format!("{}k:\n", "  ".repeat(depth)))
            .collect(),
    ];
    for text in &deep_inputs {
        let started = Instant::now();
        let loaded = load_str("deep.yaml", text);
        check(&loaded, "deep.yaml");
        assert!(loaded.resources.is_empty());
        assert!(
            matches!(
                &loaded.errors[..],
                [LoadError::Syntax { .. } | LoadError::TooDeep { .. }]
            ),
            "{:?}",
            loaded.errors
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }
    // Just under the limit is fine.
    let ok = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: d\ndata: {}{}\n",
        "[".repeat(MAX_DEPTH - 2),
        "]".repeat(MAX_DEPTH - 2)
    );
    let loaded = load_str("deep.yaml", &ok);
    assert!(
        loaded
            .errors
            .iter()
            .all(|e| matches!(e, LoadError::Syntax { .. })),
        "{:?}",
        loaded.errors
    );
}

#[test]
fn alias_bombs_are_stopped_quickly() {
    let mut bomb = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata:\n");
    bomb.push_str("  a: &a [\"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\", \"lol\"]\n");
    for (name, prev) in ["b", "c", "d", "e", "f", "g", "h", "i"]
        .iter()
        .zip(["a", "b", "c", "d", "e", "f", "g", "h"])
    {
        let refs = vec![format!("*{prev}"); 9].join(", ");
        bomb.push_str(&format!("  {name}: &{name} [{refs}]\n"));
    }
    let text = format!("{bomb}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: after\n");
    let started = Instant::now();
    let loaded = load_str("bomb.yaml", &text);
    assert!(started.elapsed() < Duration::from_secs(3));
    check(&loaded, "bomb.yaml");
    assert!(matches!(&loaded.errors[..], [LoadError::TooLarge { .. }]));
    let names: Vec<_> = loaded.resources.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["after"]);
}

#[test]
fn invalid_utf8_is_reported_wherever_it_is() {
    let clean = REALISTIC.as_bytes();
    for at in [0, 1, clean.len() / 2, clean.len() - 1] {
        let mut bytes = clean.to_vec();
        bytes.insert(at, 0xff);
        let loaded = load_reader("latin1.yaml", bytes.as_slice());
        check(&loaded, "latin1.yaml");
        assert!(loaded.resources.is_empty());
        let expected_line = clean[..at].iter().filter(|&&b| b == b'\n').count() as u32 + 1;
        match &loaded.errors[..] {
            [LoadError::NotUtf8 { line, offset, .. }] => {
                assert_eq!((*line, *offset), (expected_line, at));
            }
            other => panic!("{other:?}"),
        }
    }
}
