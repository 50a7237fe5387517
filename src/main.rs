//! The `syncguard` binary: parse arguments, run the command, map the outcome to an exit code
//! (0 clean, 1 blocking findings, 2 error).

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use clap::Parser;

/// jemalloc instead of the system allocator: policy evaluation allocates and frees many small
/// values per object (regorus), and glibc's malloc/free were ~15 % of the CPU profile. Measured
/// side by side with bench/webhook_load.sh (one core, 32 connections): 3,749 → 4,880 reviews/s
/// on /validate at the same resident memory (35 MiB). mimalloc was as fast but, with its default
/// eager arena commit, doubled the resident memory.
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;
use syncguard::cli::{Cli, Command};
use syncguard::command;

fn main() -> ExitCode {
    // RUST_BACKTRACE=1 (common in CI and shells) also makes every error value capture a
    // backtrace; regorus creates and drops errors on ordinary evaluation paths, so that doubled
    // the policy load and cost ~10 % of a large check. Panics keep their backtraces; error
    // values never show theirs. An explicit RUST_LIB_BACKTRACE is left alone.
    if std::env::var_os("RUST_LIB_BACKTRACE").is_none() {
        // SAFETY: first statement of main, before any thread exists (the runtimes and rayon's
        // pool start later), so nothing reads the environment concurrently.
        unsafe { std::env::set_var("RUST_LIB_BACKTRACE", "0") };
    }
    let cli = Cli::parse();
    // The one-shot commands leave worktrees, temp dirs and renders behind if a CI runner
    // cancels them; they are removed on SIGTERM/SIGINT/SIGHUP. serve and reconcile stop in
    // order on their own signal handling.
    if matches!(
        cli.command,
        Command::Plan(_)
            | Command::Render(_)
            | Command::Review(_)
            | Command::Check(_)
            | Command::Determinism(_)
    ) {
        syncguard::interrupt::install();
    }
    let stdout = std::io::stdout();
    let is_terminal = stdout.is_terminal();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result: anyhow::Result<command::Outcome> = match &cli.command {
        Command::Plan(args) => {
            command::plan::run(args, args.color.enabled(is_terminal), &mut out).map_err(Into::into)
        }
        Command::Explain(args) => command::explain::run(args, &mut out),
        Command::Test(args) => command::test::run(args, &mut out),
        Command::Inputs(args) => command::inputs::run(args, &mut out),
        Command::Render(args) => command::render::run(args, &mut out),
        Command::Review(args) => command::review::run(args, &mut out),
        Command::Check(args) => command::check::run(args, is_terminal, &mut out),
        Command::Determinism(args) => command::determinism::run(args, is_terminal, &mut out),
        Command::Serve(args) => command::serve::run(args),
        Command::Reconcile(args) => command::reconcile::run(args),
        Command::Certs(args) => command::certs::run(args, &mut out),
    };
    let result = result.and_then(|outcome| Ok(out.flush().map(|()| outcome)?));
    match result {
        Ok(outcome) => ExitCode::from(outcome.exit_code()),
        // A closed pipe (`syncguard plan | head`) is not an error.
        Err(e)
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("syncguard: {e:#}");
            ExitCode::from(2)
        }
    }
}
