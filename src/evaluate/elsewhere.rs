//! What the other Applications of the input render, for the references an Application's own
//! objects leave unresolved.
//!
//! `review` and `check --render` judge a whole repository at once, but each Application is
//! synced on its own: a custom resource whose CRD another Application installs, a Deployment
//! whose Secret a shared "platform" Application creates. Judged alone, such a reference is
//! `missing`, and SG203 says "the CRD is not in this Application" on every custom resource of a
//! repository that installs its CRDs the usual way (63 of 96 new findings on one real change).
//! This index finds those references in the other Applications and says which one, and whether
//! Argo CD syncs it first: only an app-of-apps orders Applications, by the sync-waves of their
//! Application objects within one parent.
//!
//! Objects are looked up as written: the render fills every namespaced object's destination
//! namespace, so a namespaced reference finds its target; in a plain `check` of manifests
//! without namespaces only cluster-scoped targets (CRDs, Namespaces) are found.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::model::Resource;
use crate::model::app::AppGroup;
use crate::model::argo::SyncFacts;
use crate::model::refs::{OwnedResourceIndex, Reference, Resolution};

/// When the Application that renders a target syncs, relative to the one that needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Both Application objects are in one parent, the target's in an earlier sync-wave, and
    /// argocd-cm gives Applications a health check: the parent waits for it to be Healthy
    /// before the next wave.
    Before,
    /// The same, without that health check: an Application object counts as done once
    /// applied (none is built in since Argo CD 1.8), so the next wave starts at once and both
    /// children sync at about the same time (SG208).
    BeforeUnwaited,
    /// One parent, the same sync-wave: both sync at once, in no order.
    SameWave,
    /// One parent, the target's in a later sync-wave, and the parent waits for each wave's
    /// Applications to be Healthy (the health check above): the target's Application syncs
    /// only once this one is Healthy.
    After,
    /// The same without that health check: the later wave is applied at once, so both sync at
    /// about the same time.
    AfterUnwaited,
    /// Not ordered by anything in the input (no common parent, or a parent not in the input).
    Unknown,
}

impl Order {
    fn as_str(self) -> &'static str {
        match self {
            Order::Before => "before",
            Order::BeforeUnwaited => "before_unwaited",
            Order::SameWave => "same_wave",
            Order::After => "after",
            Order::AfterUnwaited => "after_unwaited",
            Order::Unknown => "unknown",
        }
    }
}

/// The objects of every Application of the input, each with the Application that renders it.
#[derive(Debug)]
pub struct Elsewhere {
    index: OwnedResourceIndex,
    /// Per object of the input: the name of the group that renders it.
    owner: Vec<Option<String>>,
    /// Per Application (group name): the group its Application object is a member of (its
    /// parent in an app-of-apps) and that object's sync-wave.
    placed: HashMap<String, (String, i64)>,
    /// argocd-cm gives Applications a health check, so a parent's waves wait for its children.
    waves_wait: bool,
}

impl Elsewhere {
    /// Indexes `resources`, grouped by Application in `groups`, with their sync `facts`;
    /// `waves_wait` when argocd-cm gives Applications a health check. `None` when fewer than
    /// two Applications render objects: there is nowhere else to look.
    pub fn of(
        resources: &[Resource],
        groups: &[AppGroup],
        facts: &[SyncFacts],
        waves_wait: bool,
    ) -> Option<Self> {
        if groups.iter().filter(|g| g.name.is_some()).count() < 2 {
            return None;
        }
        let mut owner = vec![None; resources.len()];
        for g in groups {
            for &i in &g.members {
                if let Some(slot) = owner.get_mut(i) {
                    slot.clone_from(&g.name);
                }
            }
        }
        let mut placed = HashMap::new();
        for g in groups {
            let (Some(name), Some(app)) = (&g.name, &g.application) else {
                continue;
            };
            // The Application object a parent renders (the checked directory may hold its file
            // too, which nobody renders).
            let object = resources.iter().enumerate().position(|(j, r)| {
                r.group == "argoproj.io"
                    && r.kind == "Application"
                    && r.name == app.name
                    && r.namespace.as_deref().unwrap_or_default() == app.namespace
                    && owner.get(j).is_some_and(Option::is_some)
            });
            if let Some(j) = object
                && let (Some(Some(parent)), Some(f)) = (owner.get(j), facts.get(j))
            {
                placed.insert(name.clone(), (parent.clone(), f.wave));
            }
        }
        Some(Elsewhere {
            // Only objects an Application renders: a plain manifest of the same identity (the
            // checked directory's own copy of a file an Application renders) is nobody's.
            index: OwnedResourceIndex::build_only(resources, None, |i| {
                owner.get(i).is_some_and(Option::is_some)
            }),
            owner,
            placed,
            waves_wait,
        })
    }

    /// `input.refs[].target` for a reference the Application `app` does not satisfy itself,
    /// when another Application renders the target: `{"resolution": "other_app", "app",
    /// "order"}`.
    pub fn target(&self, app: Option<&str>, reference: &Reference) -> Option<Value> {
        let index = match self.index.resolve(reference) {
            Resolution::InSet { index } | Resolution::ProducedBy { index } => index,
            Resolution::Builtin | Resolution::Missing => return None,
        };
        let other = self.owner.get(index)?.as_deref()?;
        if Some(other) == app {
            return None;
        }
        let order = app.map_or(Order::Unknown, |app| self.order(other, app));
        Some(json!({
            "resolution": "other_app",
            "app": other,
            "order": order.as_str(),
        }))
    }

    /// When `other` syncs relative to `app`.
    fn order(&self, other: &str, app: &str) -> Order {
        match (self.placed.get(other), self.placed.get(app)) {
            (Some((p1, w1)), Some((p2, w2))) if p1 == p2 => match w1.cmp(w2) {
                std::cmp::Ordering::Less if self.waves_wait => Order::Before,
                std::cmp::Ordering::Less => Order::BeforeUnwaited,
                std::cmp::Ordering::Equal => Order::SameWave,
                std::cmp::Ordering::Greater if self.waves_wait => Order::After,
                std::cmp::Ordering::Greater => Order::AfterUnwaited,
            },
            _ => Order::Unknown,
        }
    }
}
