//! Which Argo CD syncguard reasons about: a release number (`--argocd-version`, `argocd.version`
//! in `policies/config.yaml`) and, through [`CHANGES`], every behaviour syncguard models that
//! changed at a known release.
//!
//! The table replaces the old two-flavour switch ("standalone gitops-engine up to 3.2, monorepo
//! engine from 3.3"): reading the releases showed that 3.3 still runs the old sync behaviour,
//! that the new one arrives in 3.4.0 and that health changes come in 3.5.0 and 3.6.0, and some
//! fixes were backported to several release lines at different patches. So each behaviour
//! carries its own spans of releases, with the source file or pull request that shows it; the
//! table is printed in `docs/argocd-versions.md` (a test holds the two together).
//!
//! A version given without a patch (`3.4`) stands for the newest patch of its line.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

/// An Argo CD release, `major.minor[.patch]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ArgoCdVersion {
    /// Major release.
    pub major: u32,
    /// Minor release.
    pub minor: u32,
    /// Patch release, when given.
    pub patch: Option<u32>,
}

/// A release boundary of [`CHANGES`]: `major.minor.patch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Release(pub u32, pub u32, pub u32);

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// A run of releases that have a behaviour: from `from` (inclusive) up to `until` (exclusive;
/// open when `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The first release with the behaviour.
    pub from: Release,
    /// The first later release without it.
    pub until: Option<Release>,
}

const fn since(major: u32, minor: u32, patch: u32) -> Span {
    Span {
        from: Release(major, minor, patch),
        until: None,
    }
}

const fn between(from: Release, until: Release) -> Span {
    Span {
        from,
        until: Some(until),
    }
}

/// Behaviours of Argo CD that syncguard models and that changed at a known release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Behaviour {
    /// The sync engine is the `gitops-engine/` module inside argo-cd, not the standalone
    /// `argoproj/gitops-engine` (named in reports only).
    MonorepoEngine,
    /// A running task whose live object vanished fails the sync ("… is missing …") instead of
    /// waiting forever (tick model Δ1).
    VanishedTaskFailsSync,
    /// The last-step check counts only hooks of later steps, and the message of an operation
    /// that waits names hooks and resources by kind ("waiting for completion of hook … and N
    /// more hooks", "waiting for healthy state of …"), not the first task alone (Δ2, C30).
    RunningMessageByKind,
    /// After an apply failure while hooks run, the SyncFail hooks run and are awaited; before,
    /// the operation failed at once and the SyncFail hooks ran on later ticks (Δ3).
    SyncFailAwaitedAfterApplyFailure,
    /// A SyncWaveHook failure ends the operation in `Error` with the running hooks terminated,
    /// not `Failed` (Δ4).
    WaveHookFailureErrors,
    /// A hook's result keeps its sync result code when its health is refreshed (before, it was
    /// cleared).
    HookResultsKeepStatus,
    /// Terminating an operation deletes the running hooks and marks them "Terminated" (and
    /// removes completed hooks' finalizers); before, running hooks were deleted and recorded as
    /// `Succeeded` "Deleted".
    TerminateDeletesHooks,
    /// "one or more synchronization tasks are not valid" goes on with the tasks' errors,
    /// sorted, distinct, joined by "; ".
    InvalidTaskMessagesListed,
    /// App-level `Prune=false` / `Prune=confirm` and `Delete=` sync options are the default of
    /// every prune and delete (the resource's annotation overrides them) (Δ5).
    AppLevelPruneOption,
    /// `Replace=true` / `Force=true` are read from the live object's sync-options too (Δ6).
    ReplaceForceFromLive,
    /// HPA health: only `autoscaling/v1` and `v2`; any degraded condition wins over a healthy
    /// one; failures of object, pods and external metrics are degraded too.
    HpaDegradedFirst,
    /// A suspended Job's health message is the Suspended condition's message.
    JobSuspendedMessage,
    /// A non-hook Pod annotated `argocd.argoproj.io/ignore-restart-policy: "true"` is judged as
    /// a long-running Pod whatever its restartPolicy.
    PodIgnoreRestartPolicy,
    /// A terminating object is `Progressing` "Pending deletion; blocked by finalizers: …"
    /// (its finalizers named), not just "Pending deletion".
    PendingDeletionNamesFinalizers,
    /// Hook Pods and Jobs carry `argocd.argoproj.io/hook-finalizer`, so a hook deleted (e.g. by
    /// its Job TTL) before Argo CD saw it finish no longer hangs the sync.
    HookFinalizer,
    /// `PostDelete` hooks run after the Application's resources are deleted.
    PostDeleteHooks,
    /// A PostDelete hook of a kind without health check panics the controller.
    PostDeleteWithoutHealthPanics,
    /// `PreDelete` hooks run before the Application's resources are deleted.
    PreDeleteHooks,
    /// A failing delete hook blocks the Application's deletion and is re-created on every retry
    /// (before, a failed PostDelete hook counted as done and the deletion finished).
    FailedDeleteHookBlocksDeletion,
    /// A delete-hook annotation with several comma-separated types (`PreDelete,PostDelete`) is
    /// split into its types (sync hook types always were).
    CommaSeparatedDeleteHookTypes,
    /// A resource whose hook annotation names `PostDelete` beside a sync hook type is left out
    /// of the sync altogether.
    SyncHookWithPostDeleteDropped,
    /// Delete hooks are checked against the AppProject's permitted destinations and kinds.
    DeleteHooksCheckedByProject,
    /// A cluster-scoped delete hook fails "already exists" on a second deletion.
    ClusterScopedDeleteHookAlreadyExists,
    /// `Replace=true` on an RBAC hook fails "already exists".
    ReplaceRbacHookAlreadyExists,
    /// Resources are tracked by the `argocd.argoproj.io/tracking-id` annotation unless
    /// `application.resourceTrackingMethod` says otherwise (before: the instance label).
    TrackingIdDefault,
    /// `Force=true` together with server-side apply is a no-op; before, kubectl refused the
    /// combination and the apply failed.
    ForceWithServerSideApplyIgnored,
    /// A resource may carry its own `argocd.argoproj.io/ignore-differences` annotation.
    PerResourceIgnoreDifferences,
    /// An app-level `SkipDryRunOnMissingResource=true` sync option is honoured.
    AppSkipDryRunOnMissingResource,
    /// `ServerSideApply=true` (app-level or per resource).
    ServerSideApply,
    /// `RespectIgnoreDifferences=true`.
    RespectIgnoreDifferences,
    /// `FailOnSharedResource=true`.
    FailOnSharedResource,
    /// With `RespectIgnoreDifferences=true`, the live values of ignored fields are copied into
    /// a built-in kind with a strategic merge patch (lists with a merge key merged element by
    /// element); before, a JSON merge patch replaced every list on the way whole.
    RespectIgnoreDifferencesStrategicMerge,
}

/// One row of the release table.
#[derive(Debug, Clone, Copy)]
pub struct Change {
    /// What changed.
    pub behaviour: Behaviour,
    /// The releases that have it, oldest first. A fix backported to several release lines has
    /// one span per line.
    pub spans: &'static [Span],
    /// Where it shows: source file and function, pull request.
    pub evidence: &'static str,
}

/// The release table: every modelled behaviour and the releases that have it. Evidence was
/// read from the release sources (the engine of 3.2.11 is standalone gitops-engine commit
/// 5baed56; from 3.3 `gitops-engine/` in argo-cd) and, for 3.2.11 and 3.6.1, held to the real
/// controller by the e2e suite (`docs/argocd-observed.md`).
pub const CHANGES: &[Change] = &[
    Change {
        behaviour: Behaviour::MonorepoEngine,
        spans: &[since(3, 3, 0)],
        evidence: "argo-cd go.mod: `replace github.com/argoproj/argo-cd/gitops-engine => ./gitops-engine` from v3.3.0; v3.2.11 requires argoproj/gitops-engine 5baed56",
    },
    Change {
        behaviour: Behaviour::VanishedTaskFailsSync,
        spans: &[since(3, 4, 0)],
        evidence: "argo-cd#26286, gitops-engine/pkg/sync/sync_context.go Sync(): \"Resource %s is missing, it might have been deleted\"",
    },
    Change {
        behaviour: Behaviour::RunningMessageByKind,
        spans: &[since(3, 4, 0)],
        evidence: "argo-cd#25668, #25915, gitops-engine/pkg/sync/sync_context.go setRunningPhase(): the same format strings, the reason chosen from hooks and resources together; prune confirmation waits as pending",
    },
    Change {
        behaviour: Behaviour::SyncFailAwaitedAfterApplyFailure,
        spans: &[since(3, 4, 0)],
        evidence: "argo-cd#25916, gitops-engine/pkg/sync/sync_context.go executeSyncFailPhase(): running hooks of the wave awaited before the SyncFail phase; failed-hook deletion after it",
    },
    Change {
        behaviour: Behaviour::WaveHookFailureErrors,
        spans: &[since(3, 4, 0)],
        evidence: "argo-cd#25916, gitops-engine/pkg/sync/sync_context.go Sync(): OperationError \"SyncWaveHook failed\" (Argo CD's own wave hook never fails; engine library users only)",
    },
    Change {
        behaviour: Behaviour::HookResultsKeepStatus,
        spans: &[since(3, 4, 0)],
        evidence: "argo-cd#25692, gitops-engine/pkg/sync/sync_context.go: setResourceResult keeps task.syncStatus for hooks",
    },
    Change {
        behaviour: Behaviour::TerminateDeletesHooks,
        spans: &[since(3, 4, 0)],
        evidence: "argo-cd#25916, gitops-engine/pkg/sync/sync_context.go Terminate()/terminateHooksPreemptively()",
    },
    Change {
        behaviour: Behaviour::InvalidTaskMessagesListed,
        spans: &[since(3, 5, 0)],
        evidence: "gitops-engine/pkg/sync/sync_context.go getSyncTasks() failure message (v3.5.0; argo-cd#27750 in the same change set)",
    },
    Change {
        behaviour: Behaviour::AppLevelPruneOption,
        spans: &[since(3, 4, 0)],
        evidence: "argo-cd#23370 \"add Prune and Delete as application level sync option\"; gitops-engine WithDefaultPruneOption (absent in v3.3.x)",
    },
    Change {
        behaviour: Behaviour::ReplaceForceFromLive,
        spans: &[since(3, 3, 0)],
        evidence: "argo-cd#26110 (cherry-picked as #26189, first tag v3.3.0): Replace/Force read from the live object's sync-options",
    },
    Change {
        behaviour: Behaviour::HpaDegradedFirst,
        spans: &[since(3, 5, 0)],
        evidence: "argo-cd#26274 (degraded reasons and order), #27887 (v2beta1/v2beta2 dropped): gitops-engine/pkg/health/health_hpa.go",
    },
    Change {
        behaviour: Behaviour::JobSuspendedMessage,
        spans: &[since(3, 6, 0)],
        evidence: "argo-cd#28738, gitops-engine/pkg/health/health_job.go getBatchv1JobHealth()",
    },
    Change {
        behaviour: Behaviour::PodIgnoreRestartPolicy,
        spans: &[since(3, 6, 0)],
        evidence: "argo-cd#28249, gitops-engine/pkg/health/health_pod.go getCorev1PodHealth(): argocd.argoproj.io/ignore-restart-policy, not on hooks",
    },
    Change {
        behaviour: Behaviour::PendingDeletionNamesFinalizers,
        spans: &[since(3, 6, 0)],
        evidence: "argo-cd#27595, gitops-engine/pkg/health/health.go pendingDeletionHealth() (read in v3.6.1; absent in v3.5.1; the 3.6 upgrade notes place it in 3.6.0)",
    },
    Change {
        behaviour: Behaviour::HookFinalizer,
        spans: &[
            between(Release(2, 14, 3), Release(2, 14, 4)),
            since(3, 0, 0),
        ],
        evidence: "argo-cd#21587 (v3.0.0; in 2.14.3, reverted in 2.14.4): hook finalizer argocd.argoproj.io/hook-finalizer",
    },
    Change {
        behaviour: Behaviour::PostDeleteHooks,
        spans: &[since(2, 10, 0)],
        evidence: "argo-cd#16595 (v2.10.0): PostDelete hooks",
    },
    Change {
        behaviour: Behaviour::PostDeleteWithoutHealthPanics,
        spans: &[between(Release(2, 10, 0), Release(2, 12, 0))],
        evidence: "argo-cd#18126 (fixed in v2.12.0): nil health of a PostDelete hook panics the controller",
    },
    Change {
        behaviour: Behaviour::PreDeleteHooks,
        spans: &[since(3, 3, 0)],
        evidence: "argo-cd#22288 \"PreDelete hooks support\": controller/hook.go (first tag v3.3.0)",
    },
    Change {
        behaviour: Behaviour::FailedDeleteHookBlocksDeletion,
        spans: &[since(3, 3, 0)],
        evidence: "argo-cd#22288, controller/hook.go (v3.3.0): a failed delete hook is deleted and re-created on retry and the Application's finalizer stays; in v3.2.11 a failed PostDelete hook counted as done",
    },
    Change {
        behaviour: Behaviour::CommaSeparatedDeleteHookTypes,
        spans: &[since(3, 3, 3)],
        evidence: "argo-cd#26420 (cherry-picked as #26586, first tag v3.3.3): controller/hook.go splits delete hook values on commas",
    },
    Change {
        behaviour: Behaviour::SyncHookWithPostDeleteDropped,
        spans: &[between(Release(3, 3, 3), Release(3, 3, 5))],
        evidence: "argo-cd#26996 (fix cherry-picked as #26999 to v3.3.5 and #26998 before v3.4.0): in v3.3.3-v3.3.4 resources whose hook types include PostDelete are left out of the sync",
    },
    Change {
        behaviour: Behaviour::DeleteHooksCheckedByProject,
        spans: &[
            between(Release(3, 3, 19), Release(3, 4, 0)),
            between(Release(3, 4, 13), Release(3, 5, 0)),
            between(Release(3, 5, 7), Release(3, 6, 0)),
            since(3, 6, 0),
        ],
        evidence: "controller/hook.go: present in v3.6.1, absent in v3.3.14, v3.4.7 and v3.5.1 (source read); the patch boundaries v3.3.19, v3.4.13, v3.5.7 and v3.6.0 are the release notes', not read from source",
    },
    Change {
        behaviour: Behaviour::ClusterScopedDeleteHookAlreadyExists,
        spans: &[between(Release(2, 10, 0), Release(3, 4, 0))],
        evidence: "controller/hook.go: delete hooks created in the destination namespace also when cluster-scoped (fixed in v3.4.0)",
    },
    Change {
        behaviour: Behaviour::ReplaceRbacHookAlreadyExists,
        spans: &[between(Release(2, 0, 0), Release(3, 3, 13))],
        evidence: "gitops-engine/pkg/sync/sync_context.go: kubectl replace of an RBAC object reconciled first (fixed in v3.3.13 and v3.4.0)",
    },
    Change {
        behaviour: Behaviour::TrackingIdDefault,
        spans: &[since(3, 0, 0)],
        evidence: "argo-cd#22289 \"set default tracking to annotation\" (first tag v3.0.0): util/settings/settings.go",
    },
    Change {
        behaviour: Behaviour::ForceWithServerSideApplyIgnored,
        spans: &[since(3, 6, 0)],
        evidence: "gitops-engine/pkg/sync/sync_context.go (read in v3.6.1; absent in v3.5.1): force dropped under server-side apply; before, kubectl fails \"--force cannot be used with --server-side\"",
    },
    Change {
        behaviour: Behaviour::PerResourceIgnoreDifferences,
        spans: &[since(3, 6, 0)],
        evidence: "read in v3.6.1 (absent in v3.5.1): argocd.argoproj.io/ignore-differences, YAML with jsonPointers, taken from the desired manifest into spec.ignoreDifferences",
    },
    Change {
        behaviour: Behaviour::AppSkipDryRunOnMissingResource,
        spans: &[since(3, 1, 0)],
        evidence: "controller/sync.go: app-level SkipDryRunOnMissingResource (v3.1.0)",
    },
    Change {
        behaviour: Behaviour::ServerSideApply,
        spans: &[since(2, 5, 0)],
        evidence: "argo-cd#9711 (v2.5.0): ServerSideApply=true",
    },
    Change {
        behaviour: Behaviour::RespectIgnoreDifferences,
        spans: &[since(2, 3, 0)],
        evidence: "argo-cd v2.3.0: RespectIgnoreDifferences=true",
    },
    Change {
        behaviour: Behaviour::FailOnSharedResource,
        spans: &[since(2, 2, 0)],
        evidence: "argo-cd v2.2.0: FailOnSharedResource=true",
    },
    Change {
        behaviour: Behaviour::RespectIgnoreDifferencesStrategicMerge,
        spans: &[
            between(Release(2, 7, 18), Release(2, 8, 0)),
            between(Release(2, 8, 15), Release(2, 9, 0)),
            between(Release(2, 9, 11), Release(2, 10, 0)),
            between(Release(2, 10, 6), Release(2, 11, 0)),
            since(2, 11, 0),
        ],
        evidence: "argo-cd#17693 (v2.11.0; backported to 2.10.6, 2.9.11, 2.8.15, 2.7.18): controller/sync.go normalizeTargetResources, strategicpatch.CreateThreeWayMergePatch with the kind's patch meta; before, jsonpatch.CreateMergePatch; argo-cd#11876",
    },
];

impl Behaviour {
    /// The table row of this behaviour.
    pub fn change(self) -> &'static Change {
        CHANGES
            .iter()
            .find(|c| c.behaviour == self)
            .expect("every behaviour has a row in CHANGES (checked by a test)")
    }

    /// Every behaviour, in table order.
    pub fn all() -> impl Iterator<Item = Behaviour> {
        CHANGES.iter().map(|c| c.behaviour)
    }

    /// The snake_case name rules see in `input.argocd.behaviours`.
    pub fn name(self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(s)) => s,
            _ => format!("{self:?}"),
        }
    }
}

impl Change {
    /// The spans in words, as `docs/argocd-versions.md` prints them: "3.4.0+", "2.14.3 (until
    /// 2.14.4); 3.0.0+".
    pub fn releases(&self) -> String {
        self.spans
            .iter()
            .map(|s| match s.until {
                None => format!("{}+", s.from),
                Some(u) => format!("{} (until {u})", s.from),
            })
            .collect::<Vec<_>>()
            .join("; ")
    }
}

impl Span {
    /// Whether `r` lies in the span.
    pub fn contains(self, r: Release) -> bool {
        r >= self.from && self.until.is_none_or(|u| r < u)
    }
}

/// The set of behaviours in force for one release ([`ArgoCdVersion::behaviours`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Behaviours(u64);

impl Behaviours {
    /// Whether `b` is in force.
    pub fn has(self, b: Behaviour) -> bool {
        self.0 & (1 << b as u32) != 0
    }

    /// `self` with `b` switched on or off (tests of one behaviour at a time).
    pub fn with(self, b: Behaviour, on: bool) -> Self {
        if on {
            Behaviours(self.0 | 1 << b as u32)
        } else {
            Behaviours(self.0 & !(1 << b as u32))
        }
    }

    /// The behaviours in force, in table order.
    pub fn in_force(self) -> impl Iterator<Item = Behaviour> {
        Behaviour::all().filter(move |b| self.has(*b))
    }
}

impl Default for Behaviours {
    fn default() -> Self {
        ArgoCdVersion::default().behaviours()
    }
}

impl Serialize for Behaviours {
    /// The names of the behaviours in force.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.in_force())
    }
}

impl ArgoCdVersion {
    /// The newest release line syncguard knows (and the live referee runs); the default.
    pub const NEWEST: ArgoCdVersion = ArgoCdVersion::new(3, 6);
    /// The oldest release syncguard accepts (its hook finalizer and tracking came later, but
    /// older installations still exist and their rules are version-gated).
    pub const OLDEST: ArgoCdVersion = ArgoCdVersion::new(2, 0);

    /// `major.minor`.
    pub const fn new(major: u32, minor: u32) -> Self {
        ArgoCdVersion {
            major,
            minor,
            patch: None,
        }
    }

    /// The release this version stands for in the table: the given patch, or the newest patch
    /// of its line when none was given.
    pub fn release(self) -> Release {
        Release(self.major, self.minor, self.patch.unwrap_or(u32::MAX))
    }

    /// Whether this release has `b`.
    pub fn has(self, b: Behaviour) -> bool {
        let r = self.release();
        b.change().spans.iter().any(|s| s.contains(r))
    }

    /// Every behaviour in force for this release.
    pub fn behaviours(self) -> Behaviours {
        Behaviours(
            Behaviour::all()
                .filter(|b| self.has(*b))
                .fold(0, |acc, b| acc | 1 << b as u32),
        )
    }

    /// How the engine this release runs is named in reports.
    pub fn engine(self) -> &'static str {
        if self.has(Behaviour::MonorepoEngine) {
            "gitops-engine inside argo-cd"
        } else {
            "standalone gitops-engine"
        }
    }

    /// `self >= major.minor` (patch ignored).
    pub fn at_least(self, major: u32, minor: u32) -> bool {
        (self.major, self.minor) >= (major, minor)
    }
}

impl Default for ArgoCdVersion {
    fn default() -> Self {
        Self::NEWEST
    }
}

impl fmt::Display for ArgoCdVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.patch {
            Some(p) => write!(f, "{}.{}.{p}", self.major, self.minor),
            None => write!(f, "{}.{}", self.major, self.minor),
        }
    }
}

impl Serialize for ArgoCdVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionError {
    /// Not `MAJOR.MINOR[.PATCH]`.
    #[error(
        "{0:?} is not an Argo CD version: expected MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 3.6 or v3.6.1"
    )]
    Malformed(String),
    /// Older than syncguard supports.
    #[error("Argo CD {0} is older than {oldest}, the oldest release syncguard models", oldest = ArgoCdVersion::OLDEST)]
    TooOld(String),
}

impl FromStr for ArgoCdVersion {
    type Err = VersionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || VersionError::Malformed(text.to_string());
        let t = text.trim();
        let t = t.strip_prefix('v').unwrap_or(t);
        // A pre-release or build suffix (3.3.0-rc2, 3.2.11+abc) belongs to its release.
        let core = t.split(['-', '+']).next().unwrap_or("");
        let parts: Vec<&str> = core.split('.').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(bad());
        }
        let num = |p: &str| {
            if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            p.parse::<u32>().map_err(|_| bad())
        };
        let v = ArgoCdVersion {
            major: num(parts[0])?,
            minor: num(parts[1])?,
            patch: parts.get(2).map(|p| num(p)).transpose()?,
        };
        if !v.at_least(Self::OLDEST.major, Self::OLDEST.minor) {
            return Err(VersionError::TooOld(text.trim().to_string()));
        }
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> ArgoCdVersion {
        s.parse().unwrap()
    }

    #[test]
    fn every_behaviour_has_exactly_one_row_with_ordered_spans_and_evidence() {
        let mut seen = std::collections::BTreeSet::new();
        for c in CHANGES {
            assert!(seen.insert(c.behaviour), "{:?} twice", c.behaviour);
            assert!(!c.spans.is_empty() && !c.evidence.is_empty(), "{c:?}");
            for s in c.spans {
                assert!(s.until.is_none_or(|u| s.from < u), "{c:?}");
            }
            for w in c.spans.windows(2) {
                assert!(
                    w[0].until.is_some_and(|u| u <= w[1].from),
                    "spans overlap or are out of order: {c:?}"
                );
            }
        }
        assert!(CHANGES.len() < 64, "Behaviours is a 64-bit set");
        // The discriminants index the bit set: the table lists them in declaration order.
        for (i, c) in CHANGES.iter().enumerate() {
            assert_eq!(c.behaviour as usize, i, "{:?}", c.behaviour);
        }
    }

    #[test]
    fn the_new_sync_behaviour_arrives_in_3_4_not_with_the_monorepo_engine_in_3_3() {
        for b in [
            Behaviour::VanishedTaskFailsSync,
            Behaviour::SyncFailAwaitedAfterApplyFailure,
            Behaviour::WaveHookFailureErrors,
            Behaviour::RunningMessageByKind,
            Behaviour::AppLevelPruneOption,
        ] {
            assert!(
                !v("3.2.11").has(b) && !v("3.3").has(b) && !v("3.3.19").has(b),
                "{b:?}"
            );
            assert!(v("3.4.0").has(b) && v("3.6").has(b), "{b:?}");
        }
        assert!(!v("3.2.11").has(Behaviour::MonorepoEngine));
        assert!(v("3.3.0").has(Behaviour::MonorepoEngine));
        assert_eq!(v("3.3.0").engine(), "gitops-engine inside argo-cd");
    }

    #[test]
    fn health_changes_come_in_3_5_and_3_6() {
        assert!(!v("3.4.13").has(Behaviour::HpaDegradedFirst));
        assert!(v("3.5.0").has(Behaviour::HpaDegradedFirst));
        for b in [
            Behaviour::JobSuspendedMessage,
            Behaviour::PodIgnoreRestartPolicy,
            Behaviour::PendingDeletionNamesFinalizers,
        ] {
            assert!(!v("3.5.7").has(b) && v("3.6.0").has(b), "{b:?}");
        }
    }

    #[test]
    fn backported_fixes_hold_per_release_line() {
        let b = Behaviour::DeleteHooksCheckedByProject;
        for (r, has) in [
            ("3.3.18", false),
            ("3.3.19", true),
            ("3.3", true),
            ("3.4.0", false),
            ("3.4.12", false),
            ("3.4.13", true),
            ("3.5.6", false),
            ("3.5.7", true),
            ("3.6.0", true),
            ("3.2.11", false),
            ("4.0", true),
        ] {
            assert_eq!(v(r).has(b), has, "{r}");
        }
        let f = Behaviour::HookFinalizer;
        assert!(!v("2.14.2").has(f) && v("2.14.3").has(f) && !v("2.14.4").has(f));
        assert!(
            !v("2.14").has(f),
            "2.14 stands for its newest patch, which reverted it"
        );
        assert!(v("3.0.0").has(f));
        let dropped = Behaviour::SyncHookWithPostDeleteDropped;
        assert!(!v("3.3.2").has(dropped) && v("3.3.3").has(dropped) && v("3.3.4").has(dropped));
        assert!(!v("3.3.5").has(dropped) && !v("3.3").has(dropped) && !v("3.6").has(dropped));
    }

    #[test]
    fn behaviour_sets_match_has_and_name_themselves_in_snake_case() {
        for r in ["2.0", "2.14.3", "3.2.11", "3.3.3", "3.4", "3.6.1"] {
            let set = v(r).behaviours();
            for b in Behaviour::all() {
                assert_eq!(set.has(b), v(r).has(b), "{r} {b:?}");
            }
        }
        assert_eq!(
            Behaviour::VanishedTaskFailsSync.name(),
            "vanished_task_fails_sync"
        );
        let off = v("3.6").behaviours().with(Behaviour::PreDeleteHooks, false);
        assert!(!off.has(Behaviour::PreDeleteHooks));
        assert!(
            off.with(Behaviour::PreDeleteHooks, true)
                .has(Behaviour::PreDeleteHooks)
        );
        assert_eq!(Behaviours::default(), v("3.6").behaviours());
    }

    #[test]
    fn versions_parse_with_or_without_v_and_patch_and_print_as_given() {
        let v: ArgoCdVersion = "v3.2.11".parse().unwrap();
        assert_eq!((v.major, v.minor, v.patch), (3, 2, Some(11)));
        assert_eq!(v.to_string(), "3.2.11");
        assert_eq!("3.3".parse::<ArgoCdVersion>().unwrap().to_string(), "3.3");
        assert!(v.at_least(3, 2) && !v.at_least(3, 3) && v.at_least(2, 14));
        assert!("3.2".parse::<ArgoCdVersion>().unwrap() < v);
        assert_eq!(ArgoCdVersion::default().to_string(), "3.6");
        assert_eq!(
            "3.3.0-rc1".parse::<ArgoCdVersion>().unwrap().release(),
            Release(3, 3, 0)
        );
    }

    #[test]
    fn bad_versions_are_refused_with_what_was_expected() {
        for bad in ["", "3", "three.two", "3.2.1.4", "3..2", "3.-2", "latest"] {
            let e = bad.parse::<ArgoCdVersion>().unwrap_err();
            assert!(matches!(e, VersionError::Malformed(_)), "{bad}: {e}");
            assert!(e.to_string().contains("e.g. 3.6"), "{e}");
        }
        let old = "1.8".parse::<ArgoCdVersion>().unwrap_err();
        assert_eq!(
            old.to_string(),
            "Argo CD 1.8 is older than 2.0, the oldest release syncguard models"
        );
    }
}
