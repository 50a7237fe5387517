//! The `syncguard` binary: parse arguments, run the command, map the outcome to an exit code
//! (0 clean, 1 blocking findings, 2 error).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;
use syncguard::cli::{Cli, Command};
use syncguard::command;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let is_terminal = stdout.is_terminal();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match &cli.command {
        Command::Plan(args) => command::plan::run(args, args.color.enabled(is_terminal), &mut out),
    };
    let result = result.and_then(|outcome| out.flush().map(|()| outcome));
    match result {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        // A closed pipe (`syncguard plan | head`) is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("syncguard: {e:#}");
            ExitCode::from(2)
        }
    }
}
