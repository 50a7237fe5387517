//! Writes the benchmark manifests (the exact objects `benches/*.rs` measure) to a directory, for
//! the side-by-side comparisons in `bench/`.
//!
//! ```sh
//! cargo run --release --example gen_manifests -- 10000 /tmp/manifests-10k
//! ```

#[path = "manifests.rs"]
mod manifests;

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(n), Some(dir)) = (
        args.first().and_then(|n| n.parse::<usize>().ok()),
        args.get(1).map(PathBuf::from),
    ) else {
        eprintln!("usage: gen_manifests COUNT DIR");
        return ExitCode::from(2);
    };
    match manifests::write_tree(&dir, n) {
        Ok(files) => {
            println!("{n} objects in {files} files under {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gen_manifests: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
