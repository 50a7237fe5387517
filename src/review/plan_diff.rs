//! How one Application's sync plan changes between two revisions: the steps (phase, wave) and
//! what each waits for, the objects added to or removed from the sync, and the objects that
//! move to another phase or wave.

use std::collections::BTreeMap;

use serde::Serialize;

use super::objects::ObjectId;
use crate::model::argo::SyncPhase;
use crate::plan::{Gate, Plan, Task, TaskSource};

/// One step of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StepView {
    pub phase: SyncPhase,
    pub wave: i64,
    /// What the operation waits for before it moves on.
    pub waits_for: &'static str,
    /// Objects applied in the step.
    pub objects: usize,
    /// Hooks among them.
    pub hooks: usize,
}

/// Where an object is in a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Place {
    pub phase: SyncPhase,
    pub wave: i64,
    /// 1-based step number.
    pub step: usize,
    pub hook: bool,
}

/// An object entering, leaving or moving within the sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Placed {
    pub object: ObjectId,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base: Option<Place>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub head: Option<Place>,
}

/// The plan diff of one Application.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanDiff {
    /// The steps on each revision (SyncFail left out: it runs only when the sync fails).
    pub base_steps: Vec<StepView>,
    pub head_steps: Vec<StepView>,
    /// Objects only in the head's sync.
    pub added: Vec<Placed>,
    /// Objects only in the base's sync.
    pub removed: Vec<Placed>,
    /// Objects in another phase or wave.
    pub moved: Vec<Placed>,
}

impl PlanDiff {
    /// The sequence of steps (phase, wave, what each waits for) differs.
    pub fn steps_changed(&self) -> bool {
        let shape = |s: &[StepView]| -> Vec<(SyncPhase, i64, &'static str)> {
            s.iter().map(|x| (x.phase, x.wave, x.waits_for)).collect()
        };
        shape(&self.base_steps) != shape(&self.head_steps)
    }

    /// Nothing about the order or the waits changed.
    pub fn is_empty(&self) -> bool {
        !self.steps_changed()
            && self.added.is_empty()
            && self.removed.is_empty()
            && self.moved.is_empty()
    }
}

fn waits_for(gate: Gate) -> &'static str {
    match gate {
        Gate::None => "nothing",
        Gate::Hooks => "hooks to complete",
        Gate::HooksAndResources => "hooks to complete and resources to be healthy",
    }
}

fn steps(plan: &Plan) -> Vec<StepView> {
    plan.steps
        .iter()
        .map(|s| StepView {
            phase: s.phase,
            wave: s.wave,
            waits_for: waits_for(s.gate),
            objects: s.tasks.len(),
            hooks: s.tasks.iter().filter(|t| t.is_hook).count(),
        })
        .collect()
}

/// Where each object is in `plan`, by its identity in `ids` (the plan's targets').
fn places((plan, ids): (&Plan, &[ObjectId])) -> BTreeMap<ObjectId, Place> {
    let mut out = BTreeMap::new();
    for (n, step) in plan.steps.iter().chain(plan.sync_fail.iter()).enumerate() {
        for t in step.tasks.iter().filter(|t| !t.is_prune) {
            out.insert(
                id(t, ids),
                Place {
                    phase: t.phase,
                    wave: t.wave,
                    step: n + 1,
                    hook: t.is_hook,
                },
            );
        }
    }
    out
}

/// A task's object: its target's identity (a `generateName` hook's stable key, not the name
/// Argo CD generates for one operation), else what the task names.
fn id(t: &Task, ids: &[ObjectId]) -> ObjectId {
    if let TaskSource::Target { index } = t.source
        && let Some(id) = ids.get(index)
    {
        return id.clone();
    }
    ObjectId {
        group: t.group.clone(),
        kind: t.kind.clone(),
        namespace: t.namespace.clone(),
        name: t.name.clone(),
        generate_name: String::new(),
        at: String::new(),
        position: 0,
    }
}

/// The diff of `base` and `head`, each a plan and its targets' identities (`None`: the
/// Application does not exist on that revision).
pub fn diff(base: Option<(&Plan, &[ObjectId])>, head: Option<(&Plan, &[ObjectId])>) -> PlanDiff {
    let (b, h) = (
        base.map(places).unwrap_or_default(),
        head.map(places).unwrap_or_default(),
    );
    let mut out = PlanDiff {
        base_steps: base.map(|(p, _)| steps(p)).unwrap_or_default(),
        head_steps: head.map(|(p, _)| steps(p)).unwrap_or_default(),
        ..PlanDiff::default()
    };
    for (object, hp) in &h {
        match b.get(object) {
            None => out.added.push(Placed {
                object: object.clone(),
                base: None,
                head: Some(hp.clone()),
            }),
            Some(bp) if (bp.phase, bp.wave, bp.hook) != (hp.phase, hp.wave, hp.hook) => {
                out.moved.push(Placed {
                    object: object.clone(),
                    base: Some(bp.clone()),
                    head: Some(hp.clone()),
                })
            }
            Some(_) => {}
        }
    }
    for (object, bp) in &b {
        if !h.contains_key(object) {
            out.removed.push(Placed {
                object: object.clone(),
                base: Some(bp.clone()),
                head: None,
            });
        }
    }
    out
}
