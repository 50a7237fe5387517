//! SG501 — stuck sync: an Application's operation has been `Running` longer than a threshold.
//!
//! Argo CD waits for a running hook (or a non-final wave to become Healthy) with no timeout of
//! its own (reference spec §5.3, §6.2): a PreSync Job whose pod crash-loops with
//! `restartPolicy: OnFailure` keeps the sync `Running` for ever — the seed incident, a
//! 40-minute stall spent reading `kubectl describe`. This module does that reading: it finds
//! the step Argo CD is waiting for, fetches the blocking Job, its pods and their events, and
//! says in one sentence what blocks and how to fix it.
//!
//! The diagnosis ([`diagnose`]) is pure — live facts in, [`LiveFinding`] out — so it is tested
//! on data; [`fetch_facts`] is the only part that talks to the API server.

use std::time::Duration;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ContainerStatus, Event, Pod};
use kube::api::{Api, ListParams};
use time::OffsetDateTime;

use super::application::Application;
use super::budget::ApiBudget;
use super::diagnosis::{LiveFinding, STUCK_SYNC, human_duration};
use super::error::{Error, Result};
use crate::config::status::ResourceStatus;
use crate::model::phase::TaskPhase;

/// The step a Running operation waits for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Blocker {
    /// API group (empty for the core group).
    pub group: String,
    /// Kind, e.g. `Job`.
    pub kind: String,
    /// Namespace of the object.
    pub namespace: String,
    /// Name of the object.
    pub name: String,
    /// `PreSync`, `Sync`, `PostSync`, `SyncFail` for hooks; `None` for a resource Argo CD waits
    /// to become Healthy.
    pub hook_type: Option<String>,
    /// The object's sync wave (from `status.resources`), when known.
    pub wave: Option<i64>,
}

impl Blocker {
    /// Whether Argo CD waits for this object as a hook (rather than for a Healthy resource).
    pub fn is_hook(&self) -> bool {
        self.hook_type.is_some()
    }

    fn is_job(&self) -> bool {
        self.group == "batch" && self.kind == "Job"
    }

    fn is_pod(&self) -> bool {
        self.group.is_empty() && self.kind == "Pod"
    }

    fn gkn(&self) -> String {
        format!("{}/{}/{}", self.group, self.kind, self.name)
    }
}

/// What the API server says about the blocking object, fetched by [`fetch_facts`].
#[derive(Debug, Clone, Default)]
pub struct LiveFacts {
    /// The blocking Job (absent when the blocker is not a Job or the Job is gone).
    pub job: Option<Job>,
    /// The Job's pods, or the blocking Pod itself.
    pub pods: Vec<Pod>,
    /// Events about the newest pod (FailedMount, FailedScheduling, Failed, BackOff...), or
    /// about the Job when it has no pod (FailedCreate).
    pub events: Vec<Event>,
    /// The Job was looked up (so `job: None` means it is gone, not unknown).
    pub job_checked: bool,
    /// The pods were listed (so no pods means none exist, not unknown).
    pub pods_checked: bool,
}

/// When a Running operation crosses the threshold: `Some(remaining)` while it is still below
/// (the controller requeues then), `None` when no operation is Running or its start is unknown.
pub fn time_to_threshold(
    app: &Application,
    now: OffsetDateTime,
    stuck_after: Duration,
) -> Option<Duration> {
    let running = app.status.running_for(now)?;
    stuck_after.checked_sub(running).filter(|d| !d.is_zero())
}

/// The operation is Running and has been for at least `stuck_after`.
pub fn is_stuck(app: &Application, now: OffsetDateTime, stuck_after: Duration) -> bool {
    app.status
        .running_for(now)
        .is_some_and(|d| d >= stuck_after)
}

/// The step the Running operation waits for: the first sync result whose hook phase is
/// `Running` (hooks first), else the object named in Argo CD's "waiting for ..." message.
///
/// The destination Namespace that `CreateNamespace=true` creates before the dry run stays
/// `Running` in v3.2.11's syncResult for the whole sync, and its message then names it while
/// a later step waits for something else (docs/argocd-observed.md, entry 9): it is the blocker
/// only when nothing else runs.
pub fn blocker(app: &Application) -> Option<Blocker> {
    let op = app.status.operation.as_ref()?;
    let dest = app.destination_namespace.as_str();
    let created_namespace = |r: &&crate::config::status::SyncResultResource| {
        r.group.is_empty() && r.kind == "Namespace" && r.name == dest && r.hook_type.is_none()
    };
    let running = |hooks: bool, namespace_too: bool| {
        op.results.iter().find(|r| {
            r.hook_phase == TaskPhase::Running
                && r.hook_type.is_some() == hooks
                && (namespace_too || !created_namespace(r))
        })
    };
    let found = running(true, false)
        .or_else(|| running(false, false))
        .or_else(|| running(false, true));
    if let Some(r) = found {
        let namespace = if r.namespace.is_empty() {
            app.destination_namespace.clone()
        } else {
            r.namespace.clone()
        };
        return Some(Blocker {
            wave: resource_of(app, &r.group, &r.kind, &r.name).map(|s| s.sync_wave),
            group: r.group.clone(),
            kind: r.kind.clone(),
            namespace,
            name: r.name.clone(),
            hook_type: r.hook_type.map(|h| h.as_str().to_string()),
        });
    }
    let (is_hook, target) = parse_waiting_message(op.message.as_deref()?)?;
    let mut parts = target.splitn(3, '/');
    let (group, kind, name) = (parts.next()?, parts.next()?, parts.next()?);
    let status = resource_of(app, group, kind, name);
    Some(Blocker {
        group: group.to_string(),
        kind: kind.to_string(),
        namespace: status
            .map(|s| s.namespace.clone())
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| app.destination_namespace.clone()),
        name: name.to_string(),
        // The message does not say which hook type; "hook" is all Argo CD tells.
        hook_type: is_hook.then(|| "hook".to_string()),
        wave: status.map(|s| s.sync_wave),
    })
}

/// Reads Argo CD's running-phase message (reference spec §5.5): `waiting for completion of hook
/// batch/Job/x [and N more hooks]` or `waiting for healthy state of apps/Deployment/y ...`.
/// Returns (is a hook, `group/kind/name`).
fn parse_waiting_message(message: &str) -> Option<(bool, &str)> {
    let (is_hook, rest) =
        if let Some(rest) = message.strip_prefix("waiting for completion of hook ") {
            (true, rest)
        } else {
            (
                false,
                message.strip_prefix("waiting for healthy state of ")?,
            )
        };
    Some((is_hook, rest.split_whitespace().next()?))
}

fn resource_of<'a>(
    app: &'a Application,
    group: &str,
    kind: &str,
    name: &str,
) -> Option<&'a ResourceStatus> {
    app.status
        .resources
        .iter()
        .find(|r| r.group == group && r.kind == kind && r.name == name)
}

/// Fetches the blocking object's live facts: for a Job, the Job (`GET`), its pods (`LIST` by
/// the `batch.kubernetes.io/controller-uid` label the Job controller sets, or by job name when
/// the Job is gone) and the events of the newest pod (`LIST` by `involvedObject`), or of the
/// Job when it has no pod; for a Pod,
/// the Pod and its events. Other kinds need nothing (the diagnosis still names them).
///
/// Fills `facts` as it goes, so that when a call fails (e.g. pods are forbidden in that
/// namespace) the diagnosis still uses what was learnt before it.
pub async fn fetch_facts(
    client: &kube::Client,
    budget: &ApiBudget,
    blocker: &Blocker,
    facts: &mut LiveFacts,
) -> Result<()> {
    let ns = blocker.namespace.as_str();
    if blocker.is_job() {
        let jobs: Api<Job> = Api::namespaced(client.clone(), ns);
        budget.acquire().await;
        facts.job = jobs
            .get_opt(&blocker.name)
            .await
            .map_err(|e| Error::kube(format!("get job {ns}/{}", blocker.name), e))?;
        facts.job_checked = true;
        let selector = match facts.job.as_ref().and_then(|j| j.metadata.uid.as_deref()) {
            Some(uid) => format!("batch.kubernetes.io/controller-uid={uid}"),
            None => format!("batch.kubernetes.io/job-name={}", blocker.name),
        };
        let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
        budget.acquire().await;
        facts.pods = pods
            .list(&ListParams::default().labels(&selector))
            .await
            .map_err(|e| Error::kube(format!("list pods of job {ns}/{}", blocker.name), e))?
            .items;
        facts.pods_checked = true;
    } else if blocker.is_pod() {
        let pods: Api<Pod> = Api::namespaced(client.clone(), ns);
        budget.acquire().await;
        facts.pods = pods
            .get_opt(&blocker.name)
            .await
            .map_err(|e| Error::kube(format!("get pod {ns}/{}", blocker.name), e))?
            .into_iter()
            .collect();
        facts.pods_checked = true;
    }
    // A Job without a pod: the Job controller says why it could not create one (a missing
    // ServiceAccount makes the API server refuse every pod) in the Job's events.
    if facts.pods_checked
        && facts.pods.is_empty()
        && let Some(uid) = facts.job.as_ref().and_then(|j| j.metadata.uid.as_deref())
    {
        let events: Api<Event> = Api::namespaced(client.clone(), ns);
        budget.acquire().await;
        facts.events = events
            .list(&ListParams::default().fields(&format!("involvedObject.uid={uid}")))
            .await
            .map_err(|e| Error::kube(format!("list events of job {ns}/{}", blocker.name), e))?
            .items;
    }
    if let Some(pod) = newest(&facts.pods) {
        let name = pod.metadata.name.as_deref().unwrap_or_default();
        let selector = match pod.metadata.uid.as_deref() {
            Some(uid) => format!("involvedObject.uid={uid}"),
            None => format!("involvedObject.kind=Pod,involvedObject.name={name}"),
        };
        let events: Api<Event> = Api::namespaced(client.clone(), ns);
        budget.acquire().await;
        facts.events = events
            .list(&ListParams::default().fields(&selector))
            .await
            .map_err(|e| Error::kube(format!("list events of pod {ns}/{name}"), e))?
            .items;
    }
    Ok(())
}

/// The most recently created pod (the one whose state matters now).
fn newest(pods: &[Pod]) -> Option<&Pod> {
    pods.iter().max_by_key(|p| {
        p.metadata
            .creation_timestamp
            .as_ref()
            .map(|t| t.0.as_nanosecond())
    })
}

/// An object a pod needs and cannot find (`secret "db-creds" not found`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingRef {
    /// `Secret`, `ConfigMap` or `ServiceAccount`.
    pub kind: &'static str,
    /// Its name.
    pub name: String,
}

/// Finds `secret "x" not found` / `configmap "x" not found` (also the plural forms the API
/// server uses in some messages) in a kubelet message, and `serviceaccount "x" not found` in
/// the Job controller's message when the API server refuses the hook's pod.
pub fn missing_ref(message: &str) -> Option<MissingRef> {
    let lower = message.to_ascii_lowercase();
    for (needle, kind) in [
        ("secrets \"", "Secret"),
        ("secret \"", "Secret"),
        ("configmaps \"", "ConfigMap"),
        ("configmap \"", "ConfigMap"),
        ("serviceaccounts \"", "ServiceAccount"),
        ("serviceaccount \"", "ServiceAccount"),
    ] {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(needle) {
            let start = from + pos + needle.len();
            if let Some(len) = lower[start..].find('"')
                && lower[start + len..].starts_with("\" not found")
            {
                return Some(MissingRef {
                    kind,
                    name: message[start..start + len].to_string(),
                });
            }
            from = start;
        }
    }
    None
}

/// What the newest pod is doing, in words.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PodState {
    /// The pod's name.
    name: String,
    /// `CrashLoopBackOff`, `ImagePullBackOff`, `OOMKilled`, `Unschedulable`, `Pending`,
    /// `Running`...
    state: String,
    /// The most specific cause known (`secret db-creds not found`, `exit code 1`...).
    cause: Option<String>,
    /// A missing Secret/ConfigMap, when that is the cause.
    missing: Option<MissingRef>,
    /// The container the state is about.
    container: Option<String>,
}

/// Waiting reasons that mean "this will not fix itself".
const BAD_WAITING: [&str; 7] = [
    "CrashLoopBackOff",
    "ImagePullBackOff",
    "ErrImagePull",
    "CreateContainerConfigError",
    "CreateContainerError",
    "InvalidImageName",
    "RunContainerError",
];

/// Event reasons that explain a pod that does not start or keeps failing.
const TELLING_EVENTS: [&str; 6] = [
    "FailedMount",
    "FailedScheduling",
    "Failed",
    "FailedCreatePodSandBox",
    "FailedAttachVolume",
    "BackOff",
];

fn pod_state(pod: &Pod, events: &[Event]) -> PodState {
    let name = pod.metadata.name.clone().unwrap_or_default();
    let status = pod.status.as_ref();
    let containers: Vec<&ContainerStatus> = status
        .into_iter()
        .flat_map(|s| {
            s.init_container_statuses
                .iter()
                .flatten()
                .chain(s.container_statuses.iter().flatten())
        })
        .collect();
    let mut events: Vec<&Event> = events
        .iter()
        .filter(|e| {
            e.reason
                .as_deref()
                .is_some_and(|r| TELLING_EVENTS.contains(&r))
        })
        .collect();
    events.sort_by_key(|e| std::cmp::Reverse(event_time(e)));
    let event_missing = events
        .iter()
        .find_map(|e| e.message.as_deref().and_then(missing_ref));
    let event_cause = events
        .iter()
        .find(|e| e.reason.as_deref() != Some("BackOff"))
        .and_then(|e| e.message.clone());

    let mut out = PodState {
        name,
        state: status
            .and_then(|s| s.phase.clone())
            .unwrap_or_else(|| "Pending".into()),
        cause: None,
        missing: None,
        container: None,
    };

    if let Some((c, waiting)) = containers.iter().find_map(|c| {
        let w = c.state.as_ref()?.waiting.as_ref()?;
        BAD_WAITING
            .contains(&w.reason.as_deref()?)
            .then_some((*c, w))
    }) {
        out.state = waiting.reason.clone().unwrap_or_default();
        out.container = Some(c.name.clone());
        let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref());
        let waiting_missing = waiting.message.as_deref().and_then(missing_ref);
        out.missing = waiting_missing.or(event_missing);
        out.cause = if let Some(m) = &out.missing {
            Some(format!(
                "{} {} not found",
                m.kind.to_ascii_lowercase(),
                m.name
            ))
        } else if last.and_then(|t| t.reason.as_deref()) == Some("OOMKilled") {
            Some("the container was OOMKilled (out of memory)".into())
        } else if out.state == "CrashLoopBackOff" {
            last.map(|t| match t.reason.as_deref() {
                Some(r) if r != "Error" => format!("last exit code {} ({r})", t.exit_code),
                _ => format!("last exit code {}", t.exit_code),
            })
        } else {
            waiting.message.clone().or(event_cause)
        };
        return out;
    }
    if let Some(c) = containers.iter().find(|c| {
        [c.state.as_ref(), c.last_state.as_ref()]
            .into_iter()
            .flatten()
            .any(|s| s.terminated.as_ref().and_then(|t| t.reason.as_deref()) == Some("OOMKilled"))
    }) {
        out.state = "OOMKilled".into();
        out.container = Some(c.name.clone());
        out.cause = Some("the container ran out of memory".into());
        return out;
    }
    if let Some(cond) = status.and_then(|s| s.conditions.as_ref()).and_then(|cs| {
        cs.iter().find(|c| {
            c.type_ == "PodScheduled"
                && c.status == "False"
                && c.reason.as_deref() == Some("Unschedulable")
        })
    }) {
        out.state = "Unschedulable".into();
        out.cause = cond.message.clone().or(event_cause);
        return out;
    }
    if out.state == "Pending" {
        out.missing = event_missing;
        out.cause = match &out.missing {
            Some(m) => Some(format!(
                "{} {} not found",
                m.kind.to_ascii_lowercase(),
                m.name
            )),
            None => event_cause,
        };
    }
    out
}

fn event_time(e: &Event) -> i128 {
    e.last_timestamp
        .as_ref()
        .map(|t| t.0.as_nanosecond())
        .or_else(|| e.event_time.as_ref().map(|t| t.0.as_nanosecond()))
        .or_else(|| {
            e.metadata
                .creation_timestamp
                .as_ref()
                .map(|t| t.0.as_nanosecond())
        })
        .unwrap_or(0)
}

/// Argo CD's phase order, for "created after this hook".
fn phase_rank(phase: &str) -> Option<u8> {
    match phase {
        "PreSync" => Some(0),
        "Sync" => Some(1),
        "PostSync" => Some(2),
        _ => None,
    }
}

/// Kinds that produce a Secret of the same name (by default) asynchronously.
const SECRET_PRODUCERS: [&str; 2] = ["ExternalSecret", "SealedSecret"];

/// When this sync creates an object a hook is missing, relative to the hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Producer {
    /// No object of the Application creates it.
    Nobody,
    /// Created before the hook (or by a producer that fills it asynchronously): it may still
    /// appear.
    Before,
    /// Created after the hook: an ordering deadlock.
    After,
    /// Created by a hook whose phase this operation does not tell.
    Unknown,
}

/// Where the app creates a missing object, relative to the hook.
fn producer_sentence(
    app: &Application,
    blocker: &Blocker,
    missing: &MissingRef,
) -> (Option<String>, Producer) {
    let ns_ok = |r: &ResourceStatus| r.namespace.is_empty() || r.namespace == blocker.namespace;
    let direct = app
        .status
        .resources
        .iter()
        .find(|r| r.kind == missing.kind && r.name == missing.name && ns_ok(r));
    let producer = direct.or_else(|| {
        (missing.kind == "Secret")
            .then(|| {
                app.status.resources.iter().find(|r| {
                    SECRET_PRODUCERS.contains(&r.kind.as_str())
                        && r.name == missing.name
                        && ns_ok(r)
                })
            })
            .flatten()
    });
    let Some(p) = producer else {
        return (
            Some(format!(
                "no object of this Application creates the {}",
                missing.kind
            )),
            Producer::Nobody,
        );
    };
    let subject = if p.kind == missing.kind {
        format!("the {} is created", missing.kind)
    } else {
        format!(
            "the {} comes from {} {}, created",
            missing.kind, p.kind, p.name
        )
    };
    // A producer that is itself a hook runs in its hook phase (from this operation's
    // results); anything else is applied in the Sync phase.
    let producer_phase = if p.hook {
        app.status.operation.as_ref().and_then(|op| {
            op.results
                .iter()
                .find(|r| r.kind == p.kind && r.name == p.name)
                .and_then(|r| r.hook_type.map(|h| h.as_str().to_string()))
        })
    } else {
        Some("Sync".to_string())
    };
    let Some(producer_phase) = producer_phase else {
        return (
            Some(format!("{subject} by a hook in wave {}", p.sync_wave)),
            Producer::Unknown,
        );
    };
    let hook_wave = blocker.wave.unwrap_or(0);
    let later = match (
        blocker.hook_type.as_deref().and_then(phase_rank),
        phase_rank(&producer_phase),
    ) {
        (Some(hook), Some(producer)) => {
            producer > hook || (producer == hook && p.sync_wave > hook_wave)
        }
        _ => false,
    };
    let relative = if later { "after" } else { "before" };
    let mut sentence = format!(
        "{subject} in wave {} of the {producer_phase} phase, {relative} this hook",
        p.sync_wave
    );
    if !later {
        sentence.push_str(" — if it is filled asynchronously it may not be ready yet");
    }
    let when = if later {
        Producer::After
    } else {
        Producer::Before
    };
    (Some(sentence), when)
}

#[cfg(test)]
mod producer_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::reconciler::fixtures::AppBuilder;

    fn missing() -> MissingRef {
        MissingRef {
            kind: "Secret",
            name: "db-creds".into(),
        }
    }

    fn presync_hook(wave: i64) -> Blocker {
        Blocker {
            group: "batch".into(),
            kind: "Job".into(),
            namespace: "app-foo".into(),
            name: "migrate".into(),
            hook_type: Some("PreSync".into()),
            wave: Some(wave),
        }
    }

    #[test]
    fn a_secret_made_by_an_earlier_presync_hook_is_not_called_late() {
        let app = AppBuilder::new("svc-foo")
            .destination("app-foo")
            .running_since("2026-11-30T02:00:00Z")
            .running_hook("PreSync", "", "Secret", "db-creds")
            .resource("", "Secret", "db-creds", 1, true)
            .live();
        let (sentence, when) = producer_sentence(&app, &presync_hook(5), &missing());
        assert_eq!(when, Producer::Before);
        assert_eq!(
            sentence.unwrap(),
            "the Secret is created in wave 1 of the PreSync phase, before this hook — if it is \
             filled asynchronously it may not be ready yet"
        );
    }

    #[test]
    fn a_secret_made_in_a_later_wave_of_the_same_phase_is_late() {
        let app = AppBuilder::new("svc-foo")
            .destination("app-foo")
            .running_since("2026-11-30T02:00:00Z")
            .running_hook("PreSync", "", "Secret", "db-creds")
            .resource("", "Secret", "db-creds", 7, true)
            .live();
        let (sentence, when) = producer_sentence(&app, &presync_hook(5), &missing());
        assert_eq!(when, Producer::After);
        assert_eq!(
            sentence.unwrap(),
            "the Secret is created in wave 7 of the PreSync phase, after this hook"
        );
    }

    #[test]
    fn a_secret_nobody_in_the_app_creates_is_said_so() {
        let app = AppBuilder::new("svc-foo").destination("app-foo").live();
        let (sentence, when) = producer_sentence(&app, &presync_hook(5), &missing());
        assert_eq!(when, Producer::Nobody);
        assert_eq!(
            sentence.unwrap(),
            "no object of this Application creates the Secret"
        );
    }
}

/// Why a blocking hook can never finish on its own — the only causes on which syncguard ends an
/// operation ([`super::terminate`]). Anything else (a pod that runs, starts or waits for a
/// volume, a resource that is not Healthy yet, a hook without pods) may still be progressing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The class of cause, a metric label.
    pub cause: StallCause,
    /// The hook, e.g. `PreSync Job orders/db-migrate`.
    pub hook: String,
    /// The cause in words: `its pod is in ImagePullBackOff: …`.
    pub detail: String,
    /// Identifies the cause (not its wording): the stall must be seen with the same
    /// fingerprint for a while before anything is done.
    pub fingerprint: String,
}

/// Classes of [`Stall`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StallCause {
    /// The image cannot be pulled (`ImagePullBackOff`, `ErrImagePull`, `InvalidImageName`).
    ImagePull,
    /// The container keeps failing and the Job has not given up (`CrashLoopBackOff`).
    CrashLoop,
    /// The scheduler cannot place the pod.
    Unschedulable,
    /// A Secret or ConfigMap the pod needs exists nowhere in this Application.
    MissingRef,
    /// A Secret or ConfigMap the pod needs is created by a later step of this same sync.
    OrderingDeadlock,
}

impl StallCause {
    /// The metric label.
    pub fn label(self) -> &'static str {
        match self {
            StallCause::ImagePull => "image_pull",
            StallCause::CrashLoop => "crash_loop",
            StallCause::Unschedulable => "unschedulable",
            StallCause::MissingRef => "missing_ref",
            StallCause::OrderingDeadlock => "ordering_deadlock",
        }
    }
}

/// The state of a hook Job that has no pod because the API server refuses to create one: the
/// Job controller's newest `FailedCreate` event naming a missing object (a ServiceAccount; the
/// pod is refused before it exists, so no kubelet ever reports it). `None` for anything else:
/// a Job without pods may simply not have been handled by its controller yet.
fn refused_pods(facts: &LiveFacts) -> Option<PodState> {
    if !facts.pods_checked || !facts.pods.is_empty() {
        return None;
    }
    let job = facts.job.as_ref()?;
    let event = facts
        .events
        .iter()
        .filter(|e| e.reason.as_deref() == Some(FAILED_CREATE))
        .filter_map(|e| e.message.as_deref().map(|note| (e, note)))
        .filter_map(|(e, note)| missing_ref(note).map(|m| (e, note, m)))
        .max_by_key(|(e, _, _)| event_time(e));
    let (_, note, missing) = event?;
    Some(PodState {
        name: job.metadata.name.clone().unwrap_or_default(),
        state: FAILED_CREATE.to_string(),
        cause: Some(note.to_string()),
        missing: Some(missing),
        container: None,
    })
}

/// The Job controller's event reason when the API server refuses a pod of the Job.
const FAILED_CREATE: &str = "FailedCreate";

/// Whether the blocking step certainly cannot make progress: `Ok(stall)` when it cannot,
/// `Err(why not)` when it may still (the reason is logged and shown in dry runs).
pub fn certain_stall(
    app: &Application,
    blocker: Option<&Blocker>,
    facts: &LiveFacts,
) -> std::result::Result<Stall, String> {
    let Some(blocker) = blocker else {
        return Err("Argo CD names no step it waits for".into());
    };
    if !blocker.is_hook() {
        return Err(format!(
            "the sync waits for {} {} to become Healthy, whose progress syncguard does not judge",
            blocker.kind, blocker.name
        ));
    }
    if let Some(job) = &facts.job {
        let finished = job
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
            });
        if finished {
            return Err("the hook Job has finished; Argo CD will see it".into());
        }
    }
    let state = match newest(&facts.pods) {
        Some(pod) => pod_state(pod, &facts.events),
        None => match refused_pods(facts) {
            Some(state) => state,
            None => return Err("the hook has no pod whose state could be judged".into()),
        },
    };
    let hook_type = blocker.hook_type.as_deref().unwrap_or("hook");
    let hook = format!(
        "{hook_type} {} {}/{}",
        blocker.kind, blocker.namespace, blocker.name
    );
    let mut detail = if state.state == FAILED_CREATE {
        "its Job cannot create a pod".to_string()
    } else {
        format!("its pod {} is in {}", state.name, state.state)
    };
    if let Some(cause) = &state.cause {
        detail.push_str(&format!(": {}", cause.trim_end_matches('.')));
    }
    let cause = if let Some(missing) = &state.missing {
        let (sentence, when) = producer_sentence(app, blocker, missing);
        if let Some(sentence) = sentence {
            detail.push_str(&format!(" — {sentence}"));
        }
        match when {
            Producer::After => StallCause::OrderingDeadlock,
            Producer::Nobody => StallCause::MissingRef,
            Producer::Before | Producer::Unknown => {
                return Err(format!(
                    "{} {} is created before the hook and may still appear",
                    missing.kind, missing.name
                ));
            }
        }
    } else {
        match state.state.as_str() {
            "ImagePullBackOff" | "ErrImagePull" | "InvalidImageName" => StallCause::ImagePull,
            "CrashLoopBackOff" => StallCause::CrashLoop,
            "Unschedulable" => StallCause::Unschedulable,
            other => return Err(format!("its pod is {other}, which may still progress")),
        }
    };
    Ok(Stall {
        fingerprint: format!(
            "{}|{}|{}|{}",
            blocker.gkn(),
            cause.label(),
            state.state,
            state
                .missing
                .as_ref()
                .map(|m| m.name.as_str())
                .unwrap_or("")
        ),
        cause,
        hook,
        detail,
    })
}

/// SG501 over data: `None` unless the operation is Running for at least `stuck_after`.
pub fn diagnose(
    app: &Application,
    now: OffsetDateTime,
    stuck_after: Duration,
    blocker: Option<&Blocker>,
    facts: &LiveFacts,
) -> Option<LiveFinding> {
    if !is_stuck(app, now, stuck_after) {
        return None;
    }
    let op = app.status.operation.as_ref()?;
    let op_running = app.status.running_for(now).unwrap_or_default();
    let started = op
        .started_at
        .map(|t| t.unix_timestamp().to_string())
        .unwrap_or_default();
    let Some(blocker) = blocker else {
        let said = op
            .message
            .as_deref()
            .unwrap_or("Argo CD reports no waiting step");
        return Some(LiveFinding {
            rule: STUCK_SYNC,
            message: format!(
                "The sync of Application {} has been Running for {}: {said}.",
                app.display_name(),
                human_duration(op_running)
            ),
            fix: format!(
                "Open the Application's sync status (argocd app get {}) to see which step \
                 waits; a step that cannot finish never times out unless \
                 controller.sync.timeout.seconds is set.",
                app.name
            ),
            snippet: None,
            fingerprint: format!("{}|{started}|unknown", STUCK_SYNC.id),
        });
    };

    // How long the blocker itself has run: the Job's start when known, else the operation's.
    let job_started = facts
        .job
        .as_ref()
        .and_then(|j| j.status.as_ref()?.start_time.as_ref())
        .and_then(|t| OffsetDateTime::from_unix_timestamp_nanos(t.0.as_nanosecond()).ok());
    let ran = job_started
        .and_then(|s| Duration::try_from(now - s).ok())
        .unwrap_or(op_running);

    if !blocker.is_hook() {
        return Some(LiveFinding {
            rule: STUCK_SYNC,
            message: format!(
                "The sync of Application {} has been Running for {}, waiting for {} {}/{} to \
                 become Healthy.",
                app.display_name(),
                human_duration(op_running),
                blocker.kind,
                blocker.namespace,
                blocker.name
            ),
            fix: format!(
                "Find why it is not Healthy (kubectl -n {} describe {} {}): a wave that is not \
                 the last one waits for Healthy with no timeout, so a Progressing or Suspended \
                 object stalls the whole sync.",
                blocker.namespace,
                blocker.kind.to_ascii_lowercase(),
                blocker.name
            ),
            snippet: None,
            fingerprint: format!("{}|{started}|{}|unhealthy", STUCK_SYNC.id, blocker.gkn()),
        });
    }

    let hook_type = blocker.hook_type.as_deref().unwrap_or("hook");
    let hook_label = if hook_type == "hook" {
        format!("Hook {} {}", blocker.kind, blocker.name)
    } else {
        format!("{hook_type} {} {}", blocker.kind, blocker.name)
    };
    let mut message = format!("{hook_label} has run {}", human_duration(ran));
    let mut fixes: Vec<String> = Vec::new();
    let mut fingerprint = format!("{}|{started}|{}", STUCK_SYNC.id, blocker.gkn());
    let ns = &blocker.namespace;

    match newest(&facts.pods) {
        Some(pod) => {
            let state = pod_state(pod, &facts.events);
            let which = if facts.pods.len() > 1 {
                format!("its newest pod (of {})", facts.pods.len())
            } else {
                "its pod".to_string()
            };
            let verb = match state.state.as_str() {
                "Running" => "is still running".to_string(),
                "Pending" => "is still Pending".to_string(),
                "Unschedulable" => "cannot be scheduled".to_string(),
                s => format!("is in {s}"),
            };
            message.push_str(&format!("; {which} {verb}"));
            if let Some(cause) = &state.cause {
                // Kubelet messages often end with a period; the sentence goes on.
                message.push_str(&format!(": {}", cause.trim_end_matches('.')));
            }
            fingerprint.push_str(&format!(
                "|{}|{}",
                state.state,
                state.cause.as_deref().unwrap_or_default()
            ));
            let mut deadlock = false;
            if let Some(missing) = &state.missing {
                let (sentence, when) = producer_sentence(app, blocker, missing);
                let later = when == Producer::After;
                if let Some(sentence) = sentence {
                    message.push_str(&format!(" — {sentence}"));
                }
                deadlock = later;
                fixes.push(if later {
                    format!(
                        "create {} {} before the hook runs: make it (or what produces it) a \
                         {hook_type} hook with a lower sync-wave than the {}, or run this work \
                         as an init container of the workload in the Sync phase",
                        missing.kind, missing.name, blocker.kind
                    )
                } else {
                    format!(
                        "make sure {} {} exists in namespace {ns} before the hook runs, or fix \
                         the reference",
                        missing.kind, missing.name
                    )
                });
            } else {
                match state.state.as_str() {
                    "ImagePullBackOff" | "ErrImagePull" | "InvalidImageName" => fixes
                        .push("fix the image reference or the pod's imagePullSecrets".to_string()),
                    "OOMKilled" => fixes.push(format!(
                        "raise the memory limit of container {}",
                        state.container.as_deref().unwrap_or("?")
                    )),
                    "Unschedulable" => fixes.push(
                        "free capacity or relax the pod's resource requests, nodeSelector, \
                         affinity or tolerations"
                            .to_string(),
                    ),
                    "CrashLoopBackOff"
                        if state
                            .cause
                            .as_deref()
                            .is_some_and(|c| c.contains("OOMKilled")) =>
                    {
                        fixes.push(format!(
                            "raise the memory limit of container {}",
                            state.container.as_deref().unwrap_or("?")
                        ))
                    }
                    "CrashLoopBackOff"
                    | "RunContainerError"
                    | "CreateContainerError"
                    | "CreateContainerConfigError" => fixes.push(format!(
                        "read kubectl -n {ns} logs {} --previous and fix the failure",
                        state.name
                    )),
                    _ => fixes.push(format!(
                        "check what the hook is doing (kubectl -n {ns} logs {}) — Argo CD waits \
                         for it with no timeout",
                        state.name
                    )),
                }
            }
            if deadlock {
                fixes.push(format!(
                    "the running operation can never finish: terminate it (argocd app \
                     terminate-op {}) and sync again",
                    app.name
                ));
            }
        }
        None if blocker.is_job() && facts.job_checked && facts.job.is_none() => {
            message.push_str(&format!(
                " and Argo CD still waits for it, but Job {ns}/{} no longer exists",
                blocker.name
            ));
            fingerprint.push_str("|gone");
            fixes.push(format!(
                "terminate the operation (argocd app terminate-op {}) and sync again",
                app.name
            ));
        }
        None => {
            message.push_str(" and Argo CD is still waiting for it");
            if blocker.is_job() && facts.pods_checked {
                message.push_str(" (the Job has no pods)");
                fingerprint.push_str("|no-pods");
            }
            fixes.push(format!(
                "check the {} (kubectl -n {ns} describe {} {})",
                blocker.kind,
                blocker.kind.to_ascii_lowercase(),
                blocker.name
            ));
        }
    }

    if let Some(job) = &facts.job {
        let spec = job.spec.as_ref();
        if spec.and_then(|s| s.active_deadline_seconds).is_none() {
            fixes.push(
                "give the Job activeDeadlineSeconds and an explicit backoffLimit (SG101, \
                 SG102) so a failing hook fails the sync instead of stalling it"
                    .to_string(),
            );
        }
        if spec
            .and_then(|s| s.template.spec.as_ref())
            .and_then(|p| p.restart_policy.as_deref())
            == Some("OnFailure")
        {
            fixes.push(
                "with restartPolicy: OnFailure the container restarts in place and the Job only \
                 fails after backoffLimit restarts, with the kubelet's back-off growing to 5 min \
                 between them, and takes the pod's logs with it; prefer Never (SG103)"
                    .to_string(),
            );
        }
    }
    message.push('.');
    let mut fix = fixes.join("; ");
    if let Some(first) = fix.get(..1) {
        fix = format!("{}{}", first.to_ascii_uppercase(), &fix[1..]);
    }
    fix.push('.');
    Some(LiveFinding {
        rule: STUCK_SYNC,
        message,
        fix,
        snippet: None,
        fingerprint,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;
    use crate::reconciler::application::parse_time;
    use crate::reconciler::fixtures::{
        AppBuilder, event, job, pod_crashlooping, pod_waiting, pod_with_condition,
    };

    pub(crate) fn at(s: &str) -> OffsetDateTime {
        parse_time(s).unwrap()
    }

    const TWENTY_MIN: Duration = Duration::from_secs(20 * 60);

    fn seed_app() -> Application {
        AppBuilder::new("svc-foo")
            .destination("app-foo")
            .running_since("2026-11-30T02:00:00Z")
            .running_hook("PreSync", "batch", "Job", "svc-foo-migration")
            .resource(
                "external-secrets.io",
                "ExternalSecret",
                "db-creds",
                2,
                false,
            )
            .resource("batch", "Job", "svc-foo-migration", 5, true)
            .resource("apps", "Deployment", "svc-foo", 6, false)
            .live()
    }

    /// The seed incident's hook with `pod` as its newest pod and `events` about it.
    fn hook_facts(pod: Pod, events: Vec<Event>) -> LiveFacts {
        LiveFacts {
            job: Some(job("app-foo", "svc-foo-migration", "2026-11-30T02:00:00Z")),
            pods: vec![pod],
            events,
            job_checked: true,
            pods_checked: true,
        }
    }

    #[test]
    fn only_causes_that_cannot_fix_themselves_are_certain_stalls() {
        let app = seed_app();
        let b = blocker(&app).unwrap();
        let certain = |facts: LiveFacts| certain_stall(&app, Some(&b), &facts).map(|s| s.cause);
        let missing = event(
            "FailedMount",
            "MountVolume.SetUp failed for volume \"db\" : secret \"db-creds\" not found",
        );
        // The Secret comes from an ExternalSecret of the Sync phase, after this PreSync hook.
        let deadlock = certain_stall(
            &app,
            Some(&b),
            &hook_facts(pod_crashlooping("app-foo", "p", 7), vec![missing.clone()]),
        )
        .unwrap();
        assert_eq!(deadlock.cause, StallCause::OrderingDeadlock);
        assert_eq!(deadlock.hook, "PreSync Job app-foo/svc-foo-migration");
        assert!(
            deadlock.detail.contains("after this hook"),
            "{}",
            deadlock.detail
        );
        let pull = pod_waiting("app-foo", "p", "ImagePullBackOff", "Back-off pulling image");
        assert_eq!(certain(hook_facts(pull, vec![])), Ok(StallCause::ImagePull));
        assert_eq!(
            certain(hook_facts(pod_crashlooping("app-foo", "p", 3), vec![])),
            Ok(StallCause::CrashLoop)
        );
        let unschedulable = pod_with_condition("app-foo", "p", "0/3 nodes are available");
        assert_eq!(
            certain(hook_facts(unschedulable, vec![])),
            Ok(StallCause::Unschedulable)
        );
        // Nothing in the app makes the ConfigMap: it will not appear by waiting for this sync.
        let cm = pod_waiting(
            "app-foo",
            "p",
            "CreateContainerConfigError",
            "configmap \"settings\" not found",
        );
        assert_eq!(certain(hook_facts(cm, vec![])), Ok(StallCause::MissingRef));

        // What may still progress: a pod that is creating, a Secret made before the hook, a
        // finished Job, a hook with no pod, a resource waiting to be Healthy.
        let creating = pod_waiting("app-foo", "p", "ContainerCreating", "");
        assert!(certain(hook_facts(creating, vec![])).is_err());
        let early = AppBuilder::new("svc-foo")
            .destination("app-foo")
            .running_since("2026-11-30T02:00:00Z")
            .running_hook("PreSync", "batch", "Job", "svc-foo-migration")
            .resource("", "Secret", "db-creds", -1, true)
            .resource("batch", "Job", "svc-foo-migration", 5, true)
            .live();
        let early_blocker = blocker(&early).unwrap();
        let why = certain_stall(
            &early,
            Some(&early_blocker),
            &hook_facts(pod_crashlooping("app-foo", "p", 7), vec![missing]),
        )
        .unwrap_err();
        assert!(why.contains("may still appear"), "{why}");
        let mut done = hook_facts(pod_crashlooping("app-foo", "p", 7), vec![]);
        done.job
            .as_mut()
            .unwrap()
            .status
            .as_mut()
            .unwrap()
            .conditions = Some(vec![k8s_openapi::api::batch::v1::JobCondition {
            type_: "Failed".into(),
            status: "True".into(),
            ..Default::default()
        }]);
        assert!(certain(done).is_err());
        let no_pod = LiveFacts {
            pods: vec![],
            ..hook_facts(pod_crashlooping("app-foo", "p", 1), vec![])
        };
        assert!(certain(no_pod).is_err());
        let healthy_wait = Blocker {
            hook_type: None,
            ..b.clone()
        };
        assert!(
            certain_stall(
                &app,
                Some(&healthy_wait),
                &hook_facts(pod_crashlooping("app-foo", "p", 7), vec![])
            )
            .is_err()
        );
        assert!(certain_stall(&app, None, &LiveFacts::default()).is_err());
    }

    #[test]
    fn a_presync_job_crashlooping_on_a_secret_created_later_is_explained_in_one_sentence() {
        let app = seed_app();
        let b = blocker(&app).unwrap();
        assert_eq!(b.hook_type.as_deref(), Some("PreSync"));
        assert_eq!(b.wave, Some(5));
        let facts = LiveFacts {
            job: Some(job("app-foo", "svc-foo-migration", "2026-11-30T02:00:00Z")),
            pods: vec![pod_crashlooping("app-foo", "svc-foo-migration-x7k2p", 7)],
            events: vec![event(
                "FailedMount",
                "MountVolume.SetUp failed for volume \"db\" : secret \"db-creds\" not found",
            )],
            ..LiveFacts::default()
        };
        let f = diagnose(
            &app,
            at("2026-11-30T02:41:00Z"),
            TWENTY_MIN,
            Some(&b),
            &facts,
        )
        .unwrap();
        assert_eq!(f.rule.id, "SG501");
        assert_eq!(
            f.message,
            "PreSync Job svc-foo-migration has run 41 min; its pod is in CrashLoopBackOff: \
             secret db-creds not found — the Secret comes from ExternalSecret db-creds, created \
             in wave 2 of the Sync phase, after this hook."
        );
        assert!(
            f.fix
                .starts_with("Create Secret db-creds before the hook runs"),
            "{}",
            f.fix
        );
        assert!(
            f.fix.contains("argocd app terminate-op svc-foo"),
            "{}",
            f.fix
        );
        assert!(f.fix.contains("activeDeadlineSeconds"), "{}", f.fix);
    }

    #[test]
    fn nothing_is_reported_below_the_threshold_and_the_remaining_time_is_known() {
        let app = seed_app();
        let now = at("2026-11-30T02:19:00Z");
        assert!(
            diagnose(
                &app,
                now,
                TWENTY_MIN,
                blocker(&app).as_ref(),
                &LiveFacts::default()
            )
            .is_none()
        );
        assert_eq!(
            time_to_threshold(&app, now, TWENTY_MIN),
            Some(Duration::from_secs(60))
        );
        assert_eq!(
            time_to_threshold(&app, at("2026-11-30T02:30:00Z"), TWENTY_MIN),
            None
        );
    }

    #[test]
    fn the_created_namespace_is_not_the_blocker_while_something_else_runs() {
        // v3.2.11 on a Sync step held by an Ingress: the Namespace created before the dry run
        // is still Running in the syncResult, and the message names it.
        let app = AppBuilder::new("shop")
            .destination("shop")
            .running_since("2026-11-30T02:00:00Z")
            .message("waiting for healthy state of /Namespace/shop")
            .running_resource("", "Namespace", "", "shop")
            .running_resource("networking.k8s.io", "Ingress", "shop", "web")
            .live();
        let b = blocker(&app).unwrap();
        assert_eq!((b.kind.as_str(), b.name.as_str()), ("Ingress", "web"));
        // With nothing else running, the Namespace is what Argo CD waits for.
        let alone = AppBuilder::new("shop")
            .destination("shop")
            .running_since("2026-11-30T02:00:00Z")
            .running_resource("", "Namespace", "", "shop")
            .live();
        assert_eq!(blocker(&alone).unwrap().kind, "Namespace");
    }

    #[test]
    fn the_blocker_is_read_from_argo_message_when_results_do_not_say() {
        let app = AppBuilder::new("shop")
            .destination("shop")
            .running_since("2026-11-30T02:00:00Z")
            .message("waiting for completion of hook /Pod/smoke and 1 more hooks")
            .resource("", "Pod", "smoke", -1, true)
            .live();
        let b = blocker(&app).unwrap();
        assert_eq!(
            (b.group.as_str(), b.kind.as_str(), b.name.as_str()),
            ("", "Pod", "smoke")
        );
        assert_eq!(b.namespace, "shop");
        assert!(b.is_hook());
        assert_eq!(b.wave, Some(-1));
    }

    #[test]
    fn an_image_pull_failure_names_the_state_and_the_fix() {
        let app = seed_app();
        let facts = LiveFacts {
            job: None,
            pods: vec![pod_waiting(
                "app-foo",
                "svc-foo-migration-a",
                "ImagePullBackOff",
                "Back-off pulling image \"registry.example/migrate:v9\"",
            )],
            events: vec![],
            ..LiveFacts::default()
        };
        let f = diagnose(
            &app,
            at("2026-11-30T02:25:00Z"),
            TWENTY_MIN,
            blocker(&app).as_ref(),
            &facts,
        )
        .unwrap();
        assert_eq!(
            f.message,
            "PreSync Job svc-foo-migration has run 25 min; its pod is in ImagePullBackOff: \
             Back-off pulling image \"registry.example/migrate:v9\"."
        );
        assert!(f.fix.contains("imagePullSecrets"));
    }

    #[test]
    fn an_unschedulable_pod_says_why_it_cannot_be_scheduled() {
        let app = seed_app();
        let facts = LiveFacts {
            job: None,
            pods: vec![pod_with_condition(
                "app-foo",
                "svc-foo-migration-b",
                "0/3 nodes are available: 3 Insufficient memory.",
            )],
            events: vec![],
            ..LiveFacts::default()
        };
        let f = diagnose(
            &app,
            at("2026-11-30T02:21:00Z"),
            TWENTY_MIN,
            blocker(&app).as_ref(),
            &facts,
        )
        .unwrap();
        assert!(
            f.message.ends_with(
                "its pod cannot be scheduled: 0/3 nodes are available: 3 Insufficient memory."
            ),
            "{}",
            f.message
        );
    }

    #[test]
    fn without_live_facts_the_hook_its_phase_and_duration_are_still_reported() {
        let app = seed_app();
        let unknown = diagnose(
            &app,
            at("2026-11-30T03:05:00Z"),
            TWENTY_MIN,
            blocker(&app).as_ref(),
            &LiveFacts::default(),
        )
        .unwrap();
        assert_eq!(
            unknown.message,
            "PreSync Job svc-foo-migration has run 1 h 5 min and Argo CD is still waiting for it."
        );
        let gone = LiveFacts {
            job_checked: true,
            pods_checked: true,
            ..LiveFacts::default()
        };
        let f = diagnose(
            &app,
            at("2026-11-30T03:05:00Z"),
            TWENTY_MIN,
            blocker(&app).as_ref(),
            &gone,
        )
        .unwrap();
        assert_eq!(
            f.message,
            "PreSync Job svc-foo-migration has run 1 h 5 min and Argo CD still waits for it, but \
             Job app-foo/svc-foo-migration no longer exists."
        );
    }

    #[test]
    fn the_fingerprint_ignores_the_duration_but_not_the_cause() {
        let app = seed_app();
        let b = blocker(&app).unwrap();
        let crash = LiveFacts {
            job: None,
            pods: vec![pod_crashlooping("app-foo", "p", 3)],
            events: vec![],
            ..LiveFacts::default()
        };
        let a = diagnose(
            &app,
            at("2026-11-30T02:30:00Z"),
            TWENTY_MIN,
            Some(&b),
            &crash,
        )
        .unwrap();
        let later = diagnose(
            &app,
            at("2026-11-30T02:50:00Z"),
            TWENTY_MIN,
            Some(&b),
            &crash,
        )
        .unwrap();
        assert_ne!(a.message, later.message);
        assert_eq!(a.fingerprint, later.fingerprint);
        let pull = LiveFacts {
            job: None,
            pods: vec![pod_waiting("app-foo", "p", "ErrImagePull", "not found")],
            events: vec![],
            ..LiveFacts::default()
        };
        let other = diagnose(
            &app,
            at("2026-11-30T02:50:00Z"),
            TWENTY_MIN,
            Some(&b),
            &pull,
        )
        .unwrap();
        assert_ne!(a.fingerprint, other.fingerprint);
    }

    /// The Job controller's message when the API server refuses a pod whose ServiceAccount
    /// does not exist (kube-controller-manager's job controller, FailedCreate).
    const NO_SERVICE_ACCOUNT: &str = "Error creating: pods \"svc-foo-migration-\" is forbidden: \
        error looking up service account app-foo/migrator: serviceaccount \"migrator\" not found";

    /// The seed hook's Job with no pod and these events about the Job.
    fn podless_facts(events: Vec<Event>) -> LiveFacts {
        LiveFacts {
            job: Some(job("app-foo", "svc-foo-migration", "2026-11-30T02:00:00Z")),
            pods: vec![],
            events,
            job_checked: true,
            pods_checked: true,
        }
    }

    #[test]
    fn a_hook_job_refused_pods_for_a_missing_service_account_is_a_certain_stall() {
        let refused = event("FailedCreate", NO_SERVICE_ACCOUNT);
        // Nothing in the Application creates the ServiceAccount.
        let app = seed_app();
        let b = blocker(&app).unwrap();
        let stall = certain_stall(&app, Some(&b), &podless_facts(vec![refused.clone()])).unwrap();
        assert_eq!(stall.cause, StallCause::MissingRef);
        assert!(
            stall
                .detail
                .starts_with("its Job cannot create a pod: Error creating")
                && stall
                    .detail
                    .contains("no object of this Application creates the ServiceAccount"),
            "{}",
            stall.detail
        );
        assert!(
            stall.fingerprint.ends_with("|FailedCreate|migrator"),
            "{}",
            stall.fingerprint
        );
        // The ServiceAccount is applied in the Sync phase, after this PreSync hook.
        let later = AppBuilder::new("svc-foo")
            .destination("app-foo")
            .running_since("2026-11-30T02:00:00Z")
            .running_hook("PreSync", "batch", "Job", "svc-foo-migration")
            .resource("", "ServiceAccount", "migrator", 0, false)
            .resource("batch", "Job", "svc-foo-migration", 5, true)
            .live();
        let b = blocker(&later).unwrap();
        let stall = certain_stall(&later, Some(&b), &podless_facts(vec![refused.clone()])).unwrap();
        assert_eq!(stall.cause, StallCause::OrderingDeadlock);
        // Not certain: no event yet (the Job controller may not have run), a refusal for
        // another reason (a quota that may free up), or pods not listed.
        let app = seed_app();
        let b = blocker(&app).unwrap();
        assert!(certain_stall(&app, Some(&b), &podless_facts(vec![])).is_err());
        let quota = event(
            "FailedCreate",
            "Error creating: pods \"x\" is forbidden: exceeded quota: compute, requested: cpu=2",
        );
        assert!(certain_stall(&app, Some(&b), &podless_facts(vec![quota])).is_err());
        let unlisted = LiveFacts {
            pods_checked: false,
            ..podless_facts(vec![refused])
        };
        assert!(certain_stall(&app, Some(&b), &unlisted).is_err());
    }

    #[test]
    fn missing_secrets_and_configmaps_are_found_in_kubelet_messages() {
        assert_eq!(
            missing_ref(NO_SERVICE_ACCOUNT),
            Some(MissingRef {
                kind: "ServiceAccount",
                name: "migrator".into()
            })
        );
        assert_eq!(
            missing_ref(
                "MountVolume.SetUp failed for volume \"x\" : secret \"db-creds\" not found"
            ),
            Some(MissingRef {
                kind: "Secret",
                name: "db-creds".into()
            })
        );
        assert_eq!(
            missing_ref("configmap \"app-config\" not found"),
            Some(MissingRef {
                kind: "ConfigMap",
                name: "app-config".into()
            })
        );
        assert_eq!(
            missing_ref("Error: secrets \"tls\" not found"),
            Some(MissingRef {
                kind: "Secret",
                name: "tls".into()
            })
        );
        assert_eq!(missing_ref("secret \"x\" is forbidden"), None);
        assert_eq!(missing_ref("Back-off restarting failed container"), None);
    }
}
