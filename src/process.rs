//! Running an external command (a render: `helm template`, `kustomize build`, a user's render
//! command): a child process with captured output and a deadline. `determinism` and `render` run
//! their commands through it.
//!
//! Why not `Command::output()`: it cannot time out, and a render that hangs (a Helm plugin
//! waiting on the network, a post-renderer reading stdin) would hang CI with it. Why a process
//! group: `helm template --post-renderer ./kustomize.sh`, plugins and wrapper scripts start
//! grandchildren that hold our pipes open; killing only the direct child would leave them
//! running and leave us waiting for end-of-file on their output. The whole group is killed.

use std::io::{self, Read};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::{Duration, Instant};

/// The longest pause between two checks of a running child. Short enough that a render of a
/// few milliseconds (the tests, small charts) is not slowed down noticeably, long enough that
/// waiting on a slow render costs no measurable CPU.
const MAX_POLL: Duration = Duration::from_millis(20);

/// How long to wait for the pipes to close after the process group was killed. A grandchild
/// that left the group (`setsid`) could keep them open for ever; we give up on its output
/// rather than on the deadline.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(500);

/// Why one run did not produce output to compare.
#[derive(Debug)]
pub enum RunFailure {
    /// The program could not be started (not found, not executable).
    Spawn(io::Error),
    /// Waiting for the child or reading its output failed.
    Io(io::Error),
    /// The command ran and exited unsuccessfully (non-zero status or a signal).
    Exit {
        /// How it ended.
        status: ExitStatus,
        /// Everything it wrote to stderr.
        stderr: Vec<u8>,
        /// Everything it wrote to stdout (some commands, `helm repo update`, explain a failure
        /// there).
        stdout: Vec<u8>,
    },
    /// The command was still running (or its output still open) at the deadline; its process
    /// group was killed.
    Timeout {
        /// Whatever it wrote to stderr before it was killed.
        stderr: Vec<u8>,
    },
}

/// Which pipe a reader thread drained.
#[derive(Debug, Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

/// Runs `argv` (no shell), with stdin closed, the environment and working directory inherited,
/// and returns its stdout if it exits successfully within `timeout` (`None`: no limit).
pub fn run_argv(argv: &[String], timeout: Option<Duration>) -> Result<Vec<u8>, RunFailure> {
    let Some((program, args)) = argv.split_first() else {
        return Err(RunFailure::Spawn(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty command",
        )));
    };
    let mut command = Command::new(program);
    command.args(args);
    run(command, timeout)
}

/// Runs `command` as set up by the caller (program, arguments, working directory, environment)
/// with stdin closed and stdout/stderr captured, and returns its stdout if it exits
/// successfully within `timeout` (`None`: no limit).
///
/// Stdin is `/dev/null` because a render has no input to read: a command that waits on stdin
/// would otherwise hang until the timeout, and each run would see different input anyway.
pub fn run(command: Command, timeout: Option<Duration>) -> Result<Vec<u8>, RunFailure> {
    run_with_input(command, None, timeout)
}

/// [`run`] with `input` written to the command's stdin (then closed) instead of `/dev/null`:
/// for a secret a command reads from stdin (`helm registry login --password-stdin`), so that it
/// is never on a command line other processes can read.
pub fn run_with_input(
    mut command: Command,
    input: Option<&[u8]>,
    timeout: Option<Duration>,
) -> Result<Vec<u8>, RunFailure> {
    command
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // A new process group whose id is the child's pid, so a timeout can kill everything
        // the render started (see the module docs).
        command.process_group(0);
    }
    let started = Instant::now();
    let mut child = command.spawn().map_err(RunFailure::Spawn)?;
    // Killed with its group if the process is stopped by a signal meanwhile (`interrupt`).
    #[cfg(unix)]
    let _group = crate::interrupt::register(crate::interrupt::Leftover::ProcessGroup(child.id()));
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        // Small inputs only (a password): the pipe's buffer holds them, so this cannot block on
        // a child that reads nothing. A child that exits first gives an error, ignored: its
        // exit status says what happened.
        let _ = io::Write::write_all(&mut stdin, input);
    }
    let (tx, rx) = mpsc::channel();
    let readers = spawn_reader(Stream::Stdout, child.stdout.take(), tx.clone())
        .and_then(|()| spawn_reader(Stream::Stderr, child.stderr.take(), tx));
    if let Err(error) = readers {
        kill_tree(&mut child);
        return Err(RunFailure::Io(error));
    }
    let deadline = timeout.map(|t| started + t);
    wait(&mut child, &rx, deadline)
}

/// Waits until the child has exited *and* both pipes are closed, or until the deadline.
fn wait(
    child: &mut Child,
    rx: &Receiver<(Stream, io::Result<Vec<u8>>)>,
    deadline: Option<Instant>,
) -> Result<Vec<u8>, RunFailure> {
    let mut status: Option<ExitStatus> = None;
    let mut stdout: Option<Vec<u8>> = None;
    let mut stderr: Option<Vec<u8>> = None;
    let mut pause = Duration::from_millis(1);
    loop {
        if status.is_none() {
            match child.try_wait() {
                Ok(s) => status = s,
                Err(error) => {
                    kill_tree(child);
                    return Err(RunFailure::Io(error));
                }
            }
        }
        if let (Some(status), Some(_), Some(_)) = (status, &stdout, &stderr) {
            let stdout = stdout.unwrap_or_default();
            let stderr = stderr.unwrap_or_default();
            return if status.success() {
                Ok(stdout)
            } else {
                Err(RunFailure::Exit {
                    status,
                    stderr,
                    stdout,
                })
            };
        }
        let wait_for = match deadline {
            Some(deadline) => {
                let now = Instant::now();
                if now >= deadline {
                    kill_tree(child);
                    // Reap it so no zombie is left behind; the status is of no interest.
                    let _ = child.wait();
                    let stderr = stderr.or_else(|| drain_stderr(rx)).unwrap_or_default();
                    return Err(RunFailure::Timeout { stderr });
                }
                pause.min(deadline - now)
            }
            None => pause,
        };
        match rx.recv_timeout(wait_for) {
            Ok((stream, Ok(bytes))) => match stream {
                Stream::Stdout => stdout = Some(bytes),
                Stream::Stderr => stderr = Some(bytes),
            },
            Ok((_, Err(error))) => {
                kill_tree(child);
                let _ = child.wait();
                return Err(RunFailure::Io(error));
            }
            Err(RecvTimeoutError::Timeout) => {}
            // Both readers are done; only the child's exit is left to wait for.
            Err(RecvTimeoutError::Disconnected) => thread::sleep(wait_for),
        }
        pause = (pause * 2).min(MAX_POLL);
    }
}

/// Drains one pipe on its own thread, so that a child writing a lot to the other pipe never
/// blocks on a full buffer while we read this one.
fn spawn_reader(
    stream: Stream,
    pipe: Option<impl Read + Send + 'static>,
    tx: Sender<(Stream, io::Result<Vec<u8>>)>,
) -> io::Result<()> {
    let Some(mut pipe) = pipe else {
        // Not piped (cannot happen with the `Command` built above): nothing to read.
        let _ = tx.send((stream, Ok(Vec::new())));
        return Ok(());
    };
    thread::Builder::new()
        .name(format!("process-{stream:?}").to_lowercase())
        .spawn(move || {
            let mut bytes = Vec::new();
            let result = pipe.read_to_end(&mut bytes).map(|_| bytes);
            // The receiver is gone only when the run was abandoned; nobody needs the output.
            let _ = tx.send((stream, result));
        })
        .map(|_| ())
}

/// What the child wrote to stderr before it was killed, if the pipe closes soon.
fn drain_stderr(rx: &Receiver<(Stream, io::Result<Vec<u8>>)>) -> Option<Vec<u8>> {
    let until = Instant::now() + DRAIN_AFTER_KILL;
    loop {
        let left = until.checked_duration_since(Instant::now())?;
        match rx.recv_timeout(left) {
            Ok((Stream::Stderr, result)) => return result.ok(),
            Ok((Stream::Stdout, _)) => {}
            Err(_) => return None,
        }
    }
}

/// Kills the child and, on Unix, every process in its process group.
fn kill_tree(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(group) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) takes plain integers and has no memory-safety preconditions. The
        // group id is the child's pid (`process_group(0)`); it cannot name another group
        // while the child is unreaped, and once the child is reaped the group id stays
        // reserved for as long as any of its grandchildren are alive.
        unsafe {
            libc::kill(-group, libc::SIGKILL);
        }
    }
    // Covers non-Unix targets; a no-op when the child has already been reaped.
    let _ = child.kill();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn stdout_is_returned_and_stderr_of_a_successful_run_is_dropped() {
        let out = run_argv(&argv(&["sh", "-c", "echo out; echo err >&2"]), None).unwrap();
        assert_eq!(out, b"out\n");
    }

    #[test]
    fn a_failing_command_keeps_its_stderr_and_status() {
        let Err(RunFailure::Exit {
            status,
            stderr,
            stdout,
        }) = run_argv(
            &argv(&["sh", "-c", "echo said; echo boom >&2; exit 3"]),
            None,
        )
        else {
            panic!("expected an exit failure");
        };
        assert_eq!(status.code(), Some(3));
        assert_eq!(stderr, b"boom\n");
        assert_eq!(stdout, b"said\n");
    }

    #[test]
    fn a_background_grandchild_holding_stdout_is_killed_at_the_deadline() {
        let started = Instant::now();
        let result = run_argv(
            &argv(&["sh", "-c", "echo partial; sleep 5 & exit 0"]),
            Some(Duration::from_millis(150)),
        );
        assert!(
            matches!(result, Err(RunFailure::Timeout { .. })),
            "{result:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn a_command_that_reads_stdin_sees_end_of_file_instead_of_hanging() {
        let out = run_argv(&argv(&["sh", "-c", "cat; echo done"]), None).unwrap();
        assert_eq!(out, b"done\n");
    }
}
