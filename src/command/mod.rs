//! The CLI commands: each turns parsed arguments into output and an exit status. They are in the
//! library (not `main.rs`) so that integration tests can drive them without a process.

pub mod certs;
pub mod check;
pub mod determinism;
pub mod explain;
pub mod inputs;
pub mod plan;
pub mod reconcile;
pub mod render;
pub mod review;
pub mod serve;
pub mod server;
pub mod test;

/// How a command ended, mapped to the process exit code by `main`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0: nothing blocking.
    Clean,
    /// Exit 1: blocking findings.
    Blocking,
    /// Exit 2: the command ran but some input could not be read; what could be read was
    /// processed and reported.
    InputErrors,
}

impl Outcome {
    /// The process exit code (0 clean, 1 blocking findings, 2 error).
    pub fn exit_code(self) -> u8 {
        match self {
            Outcome::Clean => 0,
            Outcome::Blocking => 1,
            Outcome::InputErrors => 2,
        }
    }
}

/// The input error for an input without objects, unless the user allowed it (`--allow-empty`).
/// Inputs that failed to load already say why; the message is for the silent case.
pub(crate) fn empty_input_error(
    loaded: &crate::manifest::Loaded,
    args: &crate::cli::InputArgs,
) -> Option<String> {
    if !loaded.resources.is_empty() || args.allow_empty {
        return None;
    }
    let paths: Vec<String> = args
        .input_labels()
        .into_iter()
        .map(|p| format!("`{p}`"))
        .collect();
    Some(format!(
        "no Kubernetes objects in {}: nothing was checked. An empty render usually means the \
         command that produced it failed (run it alone to see its error); pass --allow-empty \
         if an empty input is expected",
        paths.join(", ")
    ))
}

/// The Argo CD configuration of `--argocd-config` paths (source `file`), with what could not
/// be read as input errors.
pub(crate) fn argocd_config_from(
    paths: &[std::path::PathBuf],
) -> (crate::model::argocd_config::ArgoCdConfig, Vec<String>) {
    use crate::model::argocd_config::{ArgoCdConfig, ConfigSource};
    if paths.is_empty() {
        return (ArgoCdConfig::default(), Vec::new());
    }
    let loaded = crate::manifest::load_paths(paths);
    let mut errors: Vec<String> = loaded
        .errors
        .iter()
        .map(|e| format!("--argocd-config: {e}"))
        .collect();
    let mut config = ArgoCdConfig::from_resources(&loaded.resources, ConfigSource::File);
    errors.extend(
        config
            .problems
            .drain(..)
            .map(|p| format!("--argocd-config: {p}")),
    );
    if !config.is_known() {
        errors.push(format!(
            "--argocd-config: no argocd-cm ConfigMap or AppProject in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    (config, errors)
}

/// What could not be read in the input's own `argocd-cm` (as input errors).
pub(crate) fn input_config_problems(resources: &[crate::model::Resource]) -> Vec<String> {
    use crate::model::argocd_config::{ArgoCdConfig, ConfigSource};
    ArgoCdConfig::from_resources(resources, ConfigSource::Input).problems
}
