//! One long-running child of the control plane (etcd, kube-apiserver): started in its own
//! process group, its output in a log file, stopped with SIGTERM (then SIGKILL) when dropped.
//!
//! On Linux each child also asks the kernel to kill it when syncguard dies
//! (`PR_SET_PDEATHSIG`), so even a `kill -9` of syncguard leaves nothing running. The own
//! process group keeps a terminal's Ctrl-C away from the children: syncguard receives it and
//! stops them in order (the API server before its etcd).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long a child gets to stop after SIGTERM before it is killed. Nothing of a throwaway
/// control plane is worth a graceful shutdown (the API server's alone takes seconds): this
/// is only a courtesy to let it close its files.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// A running child process.
#[derive(Debug)]
pub struct Daemon {
    name: &'static str,
    child: Child,
    log: PathBuf,
    stopped: bool,
}

impl Daemon {
    /// Starts `program` with `args`, stdin closed, stdout and stderr into `log`.
    pub fn spawn(
        name: &'static str,
        program: &Path,
        args: &[String],
        log: PathBuf,
    ) -> Result<Self, String> {
        let out = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt as _;
            // SAFETY: only async-signal-safe calls (setpgid, prctl) between fork and exec.
            unsafe {
                command.pre_exec(|| {
                    libc::setpgid(0, 0);
                    #[cfg(target_os = "linux")]
                    libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                    Ok(())
                });
            }
        }
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {name} ({}): {e}", program.display()))?;
        Ok(Self {
            name,
            child,
            log,
            stopped: false,
        })
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// How the child ended, if it has.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// The last `lines` lines of the child's log.
    pub fn log_tail(&self, lines: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }

    /// Whether the log says the child could not bind its port.
    pub fn port_was_taken(&self) -> bool {
        std::fs::read_to_string(&self.log).is_ok_and(|t| t.contains("address already in use"))
    }

    /// Stops the child: SIGTERM to its process group, then SIGKILL after [`STOP_GRACE`].
    pub fn stop(&mut self) {
        if self.stopped {
            return;
        }
        self.stopped = true;
        if self.exited().is_some() {
            return;
        }
        signal_group(&self.child, Signal::Term);
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline {
            if self.exited().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        tracing::debug!(
            daemon = self.name,
            "did not stop within {STOP_GRACE:?} of SIGTERM; killing it"
        );
        signal_group(&self.child, Signal::Kill);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}

enum Signal {
    Term,
    Kill,
}

fn signal_group(child: &Child, signal: Signal) {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(child.id()) else {
            return;
        };
        let sig = match signal {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
        };
        // SAFETY: kill(2) on the child's own process group (set up in `spawn`).
        unsafe {
            libc::kill(-pid, sig);
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (child, signal);
    }
}

/// Whether process `pid` exists (a leftover directory's owner).
pub fn alive(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid, 0) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        true
    }
}
