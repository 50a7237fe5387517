//! Hot reload of the reconciler's policy directory, and the background audit it drives.
//!
//! Policies change in git; objects admitted before a rule existed must still be reported. The
//! reconciler therefore watches its `--policies` (or `--policy-overlay`) directory the way the webhook does (the
//! directory, not the files: Kubernetes swaps mounted ConfigMaps through a `..data` symlink), and
//! a new set goes live only if it loads **and** passes its own `test_*` rules — a broken set never
//! replaces the working one. Each accepted set bumps a generation number that the audit watches,
//! so it re-runs right away instead of waiting for its interval.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::context::Context;
use super::run::{ExtraTask, Shutdown};
use crate::policy::LoadOptions;
use crate::policy::builtin::PolicySource;
use crate::policy::reload::follow;
use crate::policy::watch::fingerprint;

/// How soon after the last file event a reload starts (a ConfigMap swap is several events).
const DEBOUNCE: Duration = Duration::from_millis(250);
/// Re-check the directory this often even without file events.
const POLL: Duration = Duration::from_secs(60);

/// The background audit as a task of the reconciler runner, with policy hot reload when the
/// policies come from a directory. Stops at shutdown (before the leader Lease is released).
pub fn audit_task() -> ExtraTask {
    Box::new(|ctx: Arc<Context>, shutdown: Shutdown| {
        Box::pin(async move {
            let (generation, changed) = watch::channel(0u64);
            let reload = ctx.config.policies.watched_dir().is_some().then(|| {
                tokio::spawn(watch_policies(
                    ctx.clone(),
                    ctx.config.policies.clone(),
                    generation,
                    POLL,
                ))
            });
            tokio::select! {
                () = super::audit::run(ctx, changed) => {}
                () = shutdown.wait() => {}
            }
            if let Some(task) = reload {
                task.abort();
            }
        })
    })
}

/// Reloads the directory of `source` (a whole set or an overlay; nothing for the built-in set)
/// when it changes; an accepted set replaces `ctx.policies` and bumps
/// `generation`. Runs until the task is aborted. It starts from the fingerprint of the content
/// the live set was loaded from (`ctx.policies_fingerprint`), so an edit made between that load
/// and this task starting is reloaded at once; only without one (a set installed by hand, as in
/// tests) is the directory fingerprinted when the task starts.
pub async fn watch_policies(
    ctx: Arc<Context>,
    source: PolicySource,
    generation: watch::Sender<u64>,
    poll: Duration,
) {
    let Some(dir) = source.watched_dir().map(Path::to_path_buf) else {
        return;
    };
    let options = LoadOptions {
        deadline: ctx.config.rule_deadline,
        ..LoadOptions::default()
    };
    let last = match ctx.policies_fingerprint {
        Some(fp) => fp,
        None => {
            let d = dir.clone();
            tokio::task::spawn_blocking(move || fingerprint(&d, false))
                .await
                .ok()
                .flatten()
                .unwrap_or_default()
        }
    };
    let label = dir.display().to_string();
    follow(
        source,
        options,
        last,
        DEBOUNCE,
        poll,
        |set, _| {
            let rules = set.rules().len();
            ctx.policies.store(Arc::new(set));
            generation.send_modify(|g| *g += 1);
            tracing::info!(dir = %label, rules, "policies reloaded; re-running the audit");
        },
        |e| tracing::error!(error = %e, "policy reload rejected; the previous policies stay live"),
    )
    .await;
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::reconciler::Config;

    fn rule(id: &str) -> String {
        format!(
            "package syncguard.rules.r\nmeta := {{\"id\": \"{id}\", \"title\": \"t\", \"severity\": \"low\", \"action\": \"warn\"}}\nviolations contains {{\"msg\": \"m\", \"path\": \"/\"}} if {{ false }}\n"
        )
    }

    #[tokio::test]
    async fn a_tested_policy_change_goes_live_and_bumps_the_generation_a_broken_one_does_not() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.rego"), rule("ORG1")).unwrap();
        let set = crate::policy::PolicySet::load(dir.path()).unwrap();
        let (client, _handle) = crate::reconciler::fixtures::mock_client();
        let ctx = crate::reconciler::fixtures::context(client, Config::default(), true);
        ctx.policies.store(Arc::new(set));
        let (generation, mut changed) = watch::channel(0u64);
        let task = tokio::spawn(watch_policies(
            ctx.clone(),
            PolicySource::Dir(dir.path().to_path_buf()),
            generation,
            Duration::from_millis(100),
        ));

        // Let the watcher take its first fingerprint (of the set already live).
        tokio::time::sleep(Duration::from_millis(300)).await;
        std::fs::write(dir.path().join("r.rego"), rule("ORG2")).unwrap();
        tokio::time::timeout(Duration::from_secs(20), changed.changed())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ctx.policies.load().rules()[0].id.as_str(), "ORG2");

        // A set whose own test fails never goes live.
        std::fs::write(
            dir.path().join("r_test.rego"),
            "package syncguard.rules.r_test\ntest_fails if { false }\n",
        )
        .unwrap();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        assert_eq!(*changed.borrow(), 1);
        assert_eq!(ctx.policies.load().rules()[0].id.as_str(), "ORG2");
        task.abort();
    }

    #[tokio::test]
    async fn an_edit_made_while_starting_is_reloaded_at_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("r.rego"), rule("ORG1")).unwrap();
        let (set, fp) = crate::policy::reload::load(
            &PolicySource::Dir(dir.path().to_path_buf()),
            Duration::from_millis(250),
        )
        .unwrap();
        // Edited after the runner loaded the set, before the watcher started.
        std::fs::write(dir.path().join("r.rego"), rule("ORG2")).unwrap();
        let (client, _handle) = crate::reconciler::fixtures::mock_client();
        let mut ctx = crate::reconciler::fixtures::context(client, Config::default(), true);
        let ctx_mut = Arc::get_mut(&mut ctx).unwrap();
        ctx_mut.policies_fingerprint = fp;
        ctx.policies.store(Arc::new(set));
        let (generation, mut changed) = watch::channel(0u64);
        // A poll interval long enough that only the first comparison can notice the edit.
        let task = tokio::spawn(watch_policies(
            ctx.clone(),
            PolicySource::Dir(dir.path().to_path_buf()),
            generation,
            Duration::from_secs(3600),
        ));
        tokio::time::timeout(Duration::from_secs(20), changed.changed())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(ctx.policies.load().rules()[0].id.as_str(), "ORG2");
        task.abort();
    }
}
