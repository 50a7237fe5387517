//! The CLI commands: each turns parsed arguments into output and an exit status. They are in the
//! library (not `main.rs`) so that integration tests can drive them without a process.

pub mod certs;
pub mod check;
pub mod determinism;
pub mod inputs;
pub mod plan;
pub mod reconcile;
pub mod serve;
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
