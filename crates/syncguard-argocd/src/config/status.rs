//! `status` of an `argoproj.io/Application`, as far as syncguard reads it: the comparison, the
//! health, the current or last operation with its per-object results, the objects Argo CD
//! manages, and the history of syncs (Argo CD 3.6.1, `ApplicationStatus` in
//! `pkg/apis/application/v1alpha1/types.go`).
//!
//! Argo CD's status grows with every release and the reconciler's caches prune it to what is
//! read here, so unknown keys are not reported; a field of the wrong type, or a phase or status
//! Argo CD does not spell that way, is noted as malformed and reads as absent — a diagnosis built
//! on the fields that are there beats none.

use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{Fields, Malformed, Notes};
use crate::model::argo::{HookType, SyncPhase};
use crate::model::health::HealthStatus;
use crate::model::phase::{OperationPhase, ResultCode, SyncStatus, TaskPhase};

/// `status`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApplicationStatus {
    /// `sync.status`.
    pub sync: Option<SyncStatus>,
    /// `sync.revision`.
    pub sync_revision: Option<String>,
    /// `health.status`.
    pub health: Option<HealthStatus>,
    /// `reconciledAt`.
    pub reconciled_at: Option<OffsetDateTime>,
    /// `operationState`.
    pub operation: Option<OperationState>,
    /// `resources`: every object Argo CD manages for the app, with wave and hook flag.
    pub resources: Vec<ResourceStatus>,
    /// `history`: finished syncs, oldest first (Argo CD keeps the last 10 by default).
    pub history: Vec<HistoryEntry>,
}

/// `status.operationState`.
#[derive(Debug, Clone, PartialEq)]
pub struct OperationState {
    /// The phase; `None` when absent or spelt otherwise.
    pub phase: Option<OperationPhase>,
    /// Argo CD's own message, e.g. `waiting for completion of hook batch/Job/db-migrate`.
    pub message: Option<String>,
    /// When the operation started.
    pub started_at: Option<OffsetDateTime>,
    /// When it finished (absent while Running).
    pub finished_at: Option<OffsetDateTime>,
    /// `operation.initiatedBy.automated`: started by auto-sync or self-heal.
    pub automated: bool,
    /// `syncResult.revision`.
    pub revision: Option<String>,
    /// `syncResult.resources`: per-object results, including hooks and their phases.
    pub results: Vec<SyncResultResource>,
}

/// One entry of `status.operationState.syncResult.resources`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SyncResultResource {
    /// API group (empty for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// What the apply or prune returned.
    pub status: Option<ResultCode>,
    /// Argo CD's message for this object.
    pub message: Option<String>,
    /// The hook type, for hooks.
    pub hook_type: Option<HookType>,
    /// The task's phase (hooks and, in newer releases, every object).
    pub hook_phase: TaskPhase,
    /// The sync phase the object was applied in.
    pub sync_phase: Option<SyncPhase>,
}

/// One entry of `status.resources`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResourceStatus {
    /// API group (empty for the core group).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Namespace (empty for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The object's comparison.
    pub status: Option<SyncStatus>,
    /// `health.status`.
    pub health: Option<HealthStatus>,
    /// The object is a hook.
    pub hook: bool,
    /// `syncWave` (0 when absent, as Argo CD treats it).
    pub sync_wave: i64,
    /// `requiresPruning`.
    pub requires_pruning: bool,
}

/// One entry of `status.history`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HistoryEntry {
    /// History id.
    pub id: i64,
    /// The revision deployed.
    pub revision: Option<String>,
    /// When the sync finished.
    pub deployed_at: Option<OffsetDateTime>,
    /// When it started.
    pub deploy_started_at: Option<OffsetDateTime>,
}

/// Parses a Kubernetes timestamp (RFC 3339, e.g. `2026-11-30T02:51:49Z`).
pub fn parse_time(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// A string field read as one of Argo CD's spellings; any other string is malformed.
fn spelled<T>(
    f: &mut Fields<'_>,
    key: &'static str,
    expected: &'static str,
    parse: impl Fn(&str) -> Option<T>,
    notes: &mut Notes,
) -> Option<T> {
    let at = f.pointer(key);
    let s = f.str(key, notes)?;
    let v = parse(s);
    if v.is_none() {
        notes.malformed.push(Malformed {
            pointer: at,
            expected,
        });
    }
    v
}

fn time(f: &mut Fields<'_>, key: &'static str, notes: &mut Notes) -> Option<OffsetDateTime> {
    spelled(f, key, "RFC 3339 time", parse_time, notes)
}

/// Each item of the list `key`, read with its own JSON pointer.
fn items<T>(
    f: &mut Fields<'_>,
    key: &'static str,
    notes: &mut Notes,
    read: impl Fn(&Value, &str, &mut Notes) -> T,
) -> Vec<T> {
    let at = f.pointer(key);
    f.list(key, notes)
        .iter()
        .enumerate()
        .map(|(i, v)| read(v, &format!("{at}/{i}"), notes))
        .collect()
}

fn opt_string(f: &mut Fields<'_>, key: &'static str, notes: &mut Notes) -> Option<String> {
    f.str(key, notes).map(str::to_string)
}

impl ApplicationStatus {
    /// Reads `status` (found at `/status`); an absent status reads as empty.
    pub fn read(status: Option<&Value>, notes: &mut Notes) -> ApplicationStatus {
        let mut f = Fields::of(status, "/status", notes);
        let (sync, sync_revision) = {
            let mut s = f.block("sync", notes);
            (
                spelled(&mut s, "status", "sync status", SyncStatus::parse, notes),
                opt_string(&mut s, "revision", notes),
            )
        };
        let health = {
            let mut h = f.block("health", notes);
            spelled(
                &mut h,
                "status",
                "health status",
                HealthStatus::parse,
                notes,
            )
        };
        let reconciled_at = time(&mut f, "reconciledAt", notes);
        let operation = {
            let op = f.block("operationState", notes);
            op.present().then(|| OperationState::read(op, notes))
        };
        let resources = items(&mut f, "resources", notes, ResourceStatus::read);
        let history = items(&mut f, "history", notes, HistoryEntry::read);
        ApplicationStatus {
            sync,
            sync_revision,
            health,
            reconciled_at,
            operation,
            resources,
            history,
        }
    }

    /// How long the current operation has been Running at `now`; `None` when no operation is
    /// Running or its start time is unknown.
    pub fn running_for(&self, now: OffsetDateTime) -> Option<std::time::Duration> {
        let op = self.operation.as_ref()?;
        if op.phase != Some(OperationPhase::Running) {
            return None;
        }
        std::time::Duration::try_from(now - op.started_at?).ok()
    }
}

impl OperationState {
    fn read(mut f: Fields<'_>, notes: &mut Notes) -> OperationState {
        let phase = spelled(
            &mut f,
            "phase",
            "operation phase",
            OperationPhase::parse,
            notes,
        );
        let message = opt_string(&mut f, "message", notes);
        let started_at = time(&mut f, "startedAt", notes);
        let finished_at = time(&mut f, "finishedAt", notes);
        let automated = {
            let mut op = f.block("operation", notes);
            let mut by = op.block("initiatedBy", notes);
            by.bool("automated", notes).unwrap_or(false)
        };
        let mut result = f.block("syncResult", notes);
        let revision = opt_string(&mut result, "revision", notes);
        let results = items(&mut result, "resources", notes, SyncResultResource::read);
        OperationState {
            phase,
            message,
            started_at,
            finished_at,
            automated,
            revision,
            results,
        }
    }

    /// True while the operation runs or is being terminated.
    pub fn in_progress(&self) -> bool {
        matches!(
            self.phase,
            Some(OperationPhase::Running | OperationPhase::Terminating)
        )
    }
}

impl SyncResultResource {
    fn read(v: &Value, at: &str, notes: &mut Notes) -> SyncResultResource {
        let mut f = Fields::of(Some(v), at, notes);
        SyncResultResource {
            group: f.string("group", notes),
            version: f.string("version", notes),
            kind: f.string("kind", notes),
            namespace: f.string("namespace", notes),
            name: f.string("name", notes),
            status: spelled(&mut f, "status", "result code", ResultCode::parse, notes),
            message: opt_string(&mut f, "message", notes),
            hook_type: spelled(&mut f, "hookType", "hook type", HookType::parse, notes),
            hook_phase: spelled(&mut f, "hookPhase", "task phase", TaskPhase::parse, notes)
                .unwrap_or_default(),
            sync_phase: spelled(&mut f, "syncPhase", "sync phase", SyncPhase::parse, notes),
        }
    }
}

impl ResourceStatus {
    fn read(v: &Value, at: &str, notes: &mut Notes) -> ResourceStatus {
        let mut f = Fields::of(Some(v), at, notes);
        ResourceStatus {
            group: f.string("group", notes),
            version: f.string("version", notes),
            kind: f.string("kind", notes),
            namespace: f.string("namespace", notes),
            name: f.string("name", notes),
            status: spelled(&mut f, "status", "sync status", SyncStatus::parse, notes),
            health: {
                let mut h = f.block("health", notes);
                spelled(
                    &mut h,
                    "status",
                    "health status",
                    HealthStatus::parse,
                    notes,
                )
            },
            hook: f.bool("hook", notes).unwrap_or(false),
            sync_wave: f.int("syncWave", notes).unwrap_or(0),
            requires_pruning: f.bool("requiresPruning", notes).unwrap_or(false),
        }
    }
}

impl HistoryEntry {
    fn read(v: &Value, at: &str, notes: &mut Notes) -> HistoryEntry {
        let mut f = Fields::of(Some(v), at, notes);
        HistoryEntry {
            id: f.int("id", notes).unwrap_or(0),
            revision: opt_string(&mut f, "revision", notes),
            deployed_at: time(&mut f, "deployedAt", notes),
            deploy_started_at: time(&mut f, "deployStartedAt", notes),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn phases_statuses_and_times_are_read_in_argo_cd_spelling() {
        let v = json!({
            "sync": {"status": "OutOfSync", "revision": "abc"},
            "health": {"status": "Progressing"},
            "reconciledAt": "2026-11-30T02:41:00Z",
            "resources": [{"group": "batch", "version": "v1", "kind": "Job", "namespace": "shop",
                           "name": "migrate", "hook": true, "syncWave": -1, "status": "Synced",
                           "health": {"status": "Degraded"}}],
            "operationState": {
                "phase": "Running", "startedAt": "2026-11-30T02:00:00Z",
                "operation": {"initiatedBy": {"automated": true}},
                "syncResult": {"revision": "abc", "resources": [
                    {"kind": "Job", "name": "migrate", "hookType": "PreSync", "hookPhase": "Running",
                     "syncPhase": "PreSync", "status": "Synced"},
                    {"kind": "Service", "name": "web", "hookPhase": "", "syncPhase": "Sync"}]}
            },
            "history": [{"id": 3, "revision": "abb", "deployedAt": "2026-11-29T10:00:00Z"}]
        });
        let mut notes = Notes::default();
        let s = ApplicationStatus::read(Some(&v), &mut notes);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(s.sync, Some(SyncStatus::OutOfSync));
        assert_eq!(s.health, Some(HealthStatus::Progressing));
        assert_eq!(s.resources[0].health, Some(HealthStatus::Degraded));
        assert_eq!(s.resources[0].sync_wave, -1);
        let op = s.operation.as_ref().unwrap();
        assert_eq!(op.phase, Some(OperationPhase::Running));
        assert!(op.automated && op.in_progress());
        assert_eq!(op.results[0].hook_type, Some(HookType::PreSync));
        assert_eq!(op.results[0].hook_phase, TaskPhase::Running);
        assert_eq!(op.results[0].status, Some(ResultCode::Synced));
        assert_eq!(op.results[1].hook_phase, TaskPhase::Pending);
        assert_eq!(op.results[1].sync_phase, Some(SyncPhase::Sync));
        let now = parse_time("2026-11-30T02:41:00Z").unwrap();
        assert_eq!(
            s.running_for(now),
            Some(std::time::Duration::from_secs(41 * 60))
        );
    }

    #[test]
    fn a_misspelt_phase_or_a_bad_time_is_malformed_and_reads_as_absent() {
        let v = json!({
            "sync": {"status": "out-of-sync"},
            "operationState": {"phase": "running", "startedAt": "yesterday"},
            "resources": "not a list"
        });
        let mut notes = Notes::default();
        let s = ApplicationStatus::read(Some(&v), &mut notes);
        assert_eq!(s.sync, None);
        let op = s.operation.as_ref().unwrap();
        assert_eq!((op.phase, op.started_at), (None, None));
        assert!(s.resources.is_empty());
        let pointers: Vec<&str> = notes.malformed.iter().map(|m| m.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/status/sync/status",
                "/status/operationState/phase",
                "/status/operationState/startedAt",
                "/status/resources"
            ]
        );
        assert_eq!(s.running_for(OffsetDateTime::now_utc()), None);
    }
}
