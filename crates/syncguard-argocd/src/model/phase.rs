//! Argo CD's words for the state of a sync, one spelling each, shared by the simulator
//! (`plan::tick`), the live reader (`config::status`) and the reconciler.
//!
//! - [`OperationPhase`]: `status.operationState.phase` (gitops-engine `OperationPhase`).
//! - [`TaskPhase`]: one object's state within an operation, `syncResult.resources[].hookPhase`
//!   (the same Go type, with `""` for a task not run yet).
//! - [`ResultCode`]: `syncResult.resources[].status`, what the apply or prune call returned.
//! - [`SyncStatus`]: `status.sync.status` and `status.resources[].status`, the comparison.
//!
//! Health has one spelling too: [`crate::model::health::HealthStatus`].
//!
//! Each `parse` is exact and case-sensitive, as Go compares these strings; a value it does not
//! know is `None`, and the live reader notes it as malformed rather than guessing.

use std::fmt;

use serde::Serialize;

/// The phase of a whole sync operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum OperationPhase {
    /// Still going.
    Running,
    /// Asked to stop (`argocd app terminate-op`, or syncguard's terminate); the controller ends
    /// it as `Failed` with "Operation terminated".
    Terminating,
    /// Finished successfully.
    Succeeded,
    /// Finished unsuccessfully.
    Failed,
    /// Finished with an unexpected error.
    Error,
}

impl OperationPhase {
    /// Every phase, in the order above.
    pub const ALL: [OperationPhase; 5] = [
        Self::Running,
        Self::Terminating,
        Self::Succeeded,
        Self::Failed,
        Self::Error,
    ];

    /// True once the operation is over (`IsCompleted`: not Running, not Terminating).
    pub fn is_completed(self) -> bool {
        !matches!(self, Self::Running | Self::Terminating)
    }

    /// Argo CD's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "Running",
            Self::Terminating => "Terminating",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Error => "Error",
        }
    }

    /// Exact parse of Argo CD's spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// One task's state within an operation. Argo CD stores it as an [`OperationPhase`] with the
/// empty string for a task not run yet ([`TaskPhase::Pending`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum TaskPhase {
    /// Not run yet (`""`).
    #[default]
    Pending,
    /// Applied; waiting for completion or health.
    Running,
    /// A running hook the terminate asked to stop.
    Terminating,
    /// Done.
    Succeeded,
    /// Failed (apply failure, or Degraded).
    Failed,
    /// Errored (health check error, vanished object…).
    Error,
}

impl TaskPhase {
    /// Every phase, in the order above.
    pub const ALL: [TaskPhase; 6] = [
        Self::Pending,
        Self::Running,
        Self::Terminating,
        Self::Succeeded,
        Self::Failed,
        Self::Error,
    ];

    /// True once the task is over.
    pub fn is_completed(self) -> bool {
        matches!(self, Self::Succeeded | Self::Failed | Self::Error)
    }

    /// Argo CD's spelling (`""` for [`TaskPhase::Pending`]).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "",
            Self::Running => "Running",
            Self::Terminating => "Terminating",
            Self::Succeeded => "Succeeded",
            Self::Failed => "Failed",
            Self::Error => "Error",
        }
    }

    /// Exact parse of Argo CD's spelling; `""` is [`TaskPhase::Pending`].
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// What the apply or prune call of one task returned (gitops-engine `ResultCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum ResultCode {
    /// Applied.
    Synced,
    /// Apply (or discovery) failed.
    SyncFailed,
    /// Deleted by pruning.
    Pruned,
    /// Prune not performed (disabled or not requested).
    PruneSkipped,
}

impl ResultCode {
    /// Every code, in the order above.
    pub const ALL: [ResultCode; 4] = [
        Self::Synced,
        Self::SyncFailed,
        Self::Pruned,
        Self::PruneSkipped,
    ];

    /// Argo CD's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Synced => "Synced",
            Self::SyncFailed => "SyncFailed",
            Self::Pruned => "Pruned",
            Self::PruneSkipped => "PruneSkipped",
        }
    }

    /// Exact parse of Argo CD's spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

/// How the live state compares with Git (`SyncStatusCode`), for the Application and for each
/// of its objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum SyncStatus {
    /// Live equals desired (after normalisation).
    Synced,
    /// They differ, or the object is missing or extra.
    OutOfSync,
    /// The comparison failed or has not run.
    Unknown,
}

impl SyncStatus {
    /// Every status, in the order above.
    pub const ALL: [SyncStatus; 3] = [Self::Synced, Self::OutOfSync, Self::Unknown];

    /// Argo CD's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Synced => "Synced",
            Self::OutOfSync => "OutOfSync",
            Self::Unknown => "Unknown",
        }
    }

    /// Exact parse of Argo CD's spelling.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

macro_rules! display_as_str {
    ($($t:ty),*) => {$(
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    )*};
}
display_as_str!(OperationPhase, TaskPhase, ResultCode, SyncStatus);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses_back_and_nothing_else_does() {
        for p in OperationPhase::ALL {
            assert_eq!(OperationPhase::parse(p.as_str()), Some(p));
        }
        for p in TaskPhase::ALL {
            assert_eq!(TaskPhase::parse(p.as_str()), Some(p));
        }
        for c in ResultCode::ALL {
            assert_eq!(ResultCode::parse(c.as_str()), Some(c));
        }
        for s in SyncStatus::ALL {
            assert_eq!(SyncStatus::parse(s.as_str()), Some(s));
        }
        assert_eq!(OperationPhase::parse("running"), None);
        assert_eq!(OperationPhase::parse(""), None);
        assert_eq!(SyncStatus::parse("Out of sync"), None);
    }

    #[test]
    fn terminating_is_not_completed() {
        assert!(!OperationPhase::Terminating.is_completed());
        assert!(!OperationPhase::Running.is_completed());
        assert!(OperationPhase::Failed.is_completed());
        assert!(!TaskPhase::Terminating.is_completed());
        assert!(!TaskPhase::Pending.is_completed());
        assert!(TaskPhase::Error.is_completed());
    }
}
