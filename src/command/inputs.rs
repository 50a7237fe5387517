//! `syncguard inputs`: print the policy input documents (what each rule sees).

use std::io::Write;
use std::sync::Arc;

use crate::cli::InputsArgs;
use crate::evaluate::{EvaluateOptions, build_inputs};

use super::{Outcome, argocd_config_from, empty_input_error, input_config_problems};

/// Prints a JSON array of input documents, in input order; load errors go to stderr (exit 2).
pub fn run(args: &InputsArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let (loaded, render_errors) = super::render::load_and_expand(&args.input);
    let (argocd_config, config_errors) = argocd_config_from(&args.argocd_config);
    let mut errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
    errors.extend(render_errors);
    errors.extend(config_errors);
    errors.extend(input_config_problems(&loaded.resources));
    errors.extend(empty_input_error(&loaded, &args.input));
    for e in &errors {
        eprintln!("syncguard: {e}");
    }
    let options = EvaluateOptions {
        destination_namespace: args.dest_namespace.clone(),
        argocd: args.argocd_version.unwrap_or_default(),
        argocd_config: Arc::new(argocd_config),
        complete: args.complete,
        ..EvaluateOptions::default()
    };
    let (inputs, _) = build_inputs(&loaded.resources, &options);
    writeln!(out, "{}", serde_json::to_string_pretty(&inputs)?)?;
    Ok(if errors.is_empty() {
        Outcome::Clean
    } else {
        Outcome::InputErrors
    })
}
