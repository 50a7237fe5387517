//! `syncguard inputs`: print the policy input documents (what each rule sees).

use std::io::Write;

use crate::cli::InputsArgs;
use crate::evaluate::{EvaluateOptions, build_inputs};
use crate::manifest::load_paths;

use super::Outcome;

/// Prints a JSON array of input documents, in input order; load errors go to stderr (exit 2).
pub fn run(args: &InputsArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let loaded = load_paths(&args.input.paths);
    for e in &loaded.errors {
        eprintln!("syncguard: {e}");
    }
    let options = EvaluateOptions {
        destination_namespace: args.dest_namespace.clone(),
        argocd: args.argocd_version.unwrap_or_default(),
        ..EvaluateOptions::default()
    };
    let (inputs, _) = build_inputs(&loaded.resources, &options);
    writeln!(out, "{}", serde_json::to_string_pretty(&inputs)?)?;
    Ok(if loaded.errors.is_empty() {
        Outcome::Clean
    } else {
        Outcome::InputErrors
    })
}
