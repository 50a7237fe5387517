//! Embeds the built-in policy set (`policies/*.rego` and `policies/config.yaml`) in the binary,
//! so `syncguard check` works from any directory and an installed binary needs no checkout.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=policies");
    let dir = Path::new("policies");
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".rego") || n == "config.yaml")
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    let mut out = String::from(
        "/// The built-in policy files: (file name, contents), sorted by name.\n\
         pub const BUILTIN_POLICY_FILES: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        println!("cargo:rerun-if-changed=policies/{f}");
        let _ = writeln!(
            out,
            "    ({f:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), \"/policies/{f}\"))),"
        );
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()))
        .join("builtin_policies.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}
