//! Ordering: the kind table, the task comparator, prune wave reversal, PruneLast and the
//! Namespace/CRD "bubbling" that runs after the sort (spec §4).
//!
//! Everything here works on a `Vec<Task>` that [`super::plan`] built; nothing here looks at the
//! raw objects again, so these functions are cheap and easy to test in isolation.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};

use crate::model::argo::SyncPhase;

use super::{Bubble, Dependency, Task};

/// The kinds gitops-engine orders explicitly (`sync_tasks.go` `kindOrder`), verbatim and in
/// order. Argo's own copy of an old Helm list: it does not follow newer Helm releases, so it is
/// spelled out here rather than derived from anything else.
pub const KIND_ORDER: [&str; 35] = [
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
];

/// Argo CD's sort value of a kind: `index - 35` for listed kinds (Namespace −35 … APIService −1)
/// and 0 for everything else, so every custom kind sorts after every listed kind *and* custom
/// kinds are interleaved by name rather than grouped by kind (spec §4.1, C03).
///
/// Only the kind string matters: the API group is ignored, exactly as in gitops-engine.
pub fn kind_order(kind: &str) -> i32 {
    // A linear scan of 35 short strings is as fast as a hash lookup here and needs no global.
    KIND_ORDER
        .iter()
        .position(|k| *k == kind)
        .map_or(0, |i| i as i32 - KIND_ORDER.len() as i32)
}

/// Argo CD's comparator (`syncTasks.Less`): phase, wave, kind order, name (byte-wise).
/// Tasks equal under this comparator are a *tie group*: Argo CD's order inside one is
/// nondeterministic (unstable sort over map iteration order).
pub fn argo_cmp(a: &Task, b: &Task) -> Ordering {
    a.phase
        .cmp(&b.phase)
        .then(a.wave.cmp(&b.wave))
        .then(a.kind_order.cmp(&b.kind_order))
        .then_with(|| a.name.as_bytes().cmp(b.name.as_bytes()))
}

/// syncguard's total order: Argo CD's comparator ([`argo_cmp`]), then — **syncguard's own
/// deterministic tie-break, which Argo CD does not have** — API group, namespace, kind, version
/// (all byte-wise), and finally the order in which the objects were given (the sort is stable).
///
/// Why these keys: group first separates `extensions/Ingress x` from
/// `networking.k8s.io/Ingress x`; namespace separates the same object name in two namespaces;
/// kind separates two custom kinds with the same name (both have kind order 0). Any of these
/// permutations is a legal Argo CD order, so picking one changes nothing about correctness; it
/// only makes plans reproducible and diffable.
pub fn total_cmp(a: &Task, b: &Task) -> Ordering {
    argo_cmp(a, b)
        .then_with(|| a.group.as_bytes().cmp(b.group.as_bytes()))
        .then_with(|| a.namespace.as_bytes().cmp(b.namespace.as_bytes()))
        .then_with(|| a.kind.as_bytes().cmp(b.kind.as_bytes()))
        .then_with(|| a.version.as_bytes().cmp(b.version.as_bytes()))
}

/// Sorts by [`total_cmp`], then runs Namespace and CRD bubbling (spec §4.4).
///
/// Tasks are a few hundred bytes each, so the sort and both bubbling passes work on a
/// permutation of indices; the tasks themselves move once, at the end.
pub fn order_tasks(mut tasks: Vec<Task>) -> Vec<Task> {
    let mut perm: Vec<usize> = (0..tasks.len()).collect();
    perm.sort_by(|&a, &b| match (tasks.get(a), tasks.get(b)) {
        (Some(x), Some(y)) => total_cmp(x, y),
        _ => Ordering::Equal,
    });
    let perm = bubble(&mut tasks, perm, Pass::Namespace);
    let perm = bubble(&mut tasks, perm, Pass::Crd);
    permute(tasks, perm)
}

/// Reorders `tasks` so that position `p` holds `tasks[perm[p]]`.
fn permute(tasks: Vec<Task>, perm: Vec<usize>) -> Vec<Task> {
    let mut slots: Vec<Option<Task>> = tasks.into_iter().map(Some).collect();
    perm.into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// Prune wave reversal (spec §4.5): the distinct *original* waves of the prune tasks, sorted,
/// are mirrored (`w[i]` ↔ `w[n-1-i]`). A mirror over the set of prune waves, not a negation:
/// prune tasks keep landing on waves that exist among prune tasks.
pub fn reverse_prune_waves(tasks: &mut [Task]) {
    let waves: Vec<i64> = tasks
        .iter()
        .filter(|t| t.is_prune)
        .map(|t| t.wave)
        .collect::<BTreeSet<i64>>()
        .into_iter()
        .collect();
    if waves.len() < 2 {
        return;
    }
    let mirror: HashMap<i64, i64> = waves
        .iter()
        .zip(waves.iter().rev())
        .map(|(from, to)| (*from, *to))
        .collect();
    for t in tasks.iter_mut().filter(|t| t.is_prune) {
        if let Some(to) = mirror.get(&t.wave) {
            t.wave = *to;
        }
    }
}

/// PruneLast (spec §4.6): prune tasks that ask for it (app option or live annotation, already
/// resolved into `Task::prune_last`) move to `max(0, max wave of Sync-phase tasks) + 1`.
/// The maximum is taken *after* the reversal and includes prune tasks and Sync hooks, exactly as
/// `getSyncTasks` does.
pub fn apply_prune_last(tasks: &mut [Task]) {
    let last = tasks
        .iter()
        .filter(|t| t.phase == SyncPhase::Sync)
        .map(|t| t.wave)
        .fold(0i64, i64::max)
        .saturating_add(1);
    for t in tasks.iter_mut().filter(|t| t.is_prune && t.prune_last) {
        t.wave = last;
    }
}

/// Which dependency pass of `adjustDeps` is running.
#[derive(Debug, Clone, Copy)]
enum Pass {
    /// Core `Namespace` tasks keyed by name; every task with a namespace references one.
    Namespace,
    /// `apiextensions.k8s.io/CustomResourceDefinition` keyed `spec.group/spec.names.kind`;
    /// every task references `group/kind` of its own GVK.
    Crd,
}

/// A dependency key: a namespace name, or a (group, kind).
type DepKey<'t> = (&'t str, &'t str);

impl Pass {
    /// The dependency key if the task *is* a dependency in this pass.
    fn dep_key(self, t: &Task) -> Option<DepKey<'_>> {
        match self {
            Pass::Namespace => {
                (t.kind == "Namespace" && t.group.is_empty()).then_some((t.name.as_str(), ""))
            }
            Pass::Crd => t.crd_for.as_deref().and_then(|gk| gk.split_once('/')),
        }
    }

    /// The dependency key the task *references* in this pass (only asked when it is not a
    /// dependency itself, as in gitops-engine's `if isDep … else if doesRefDep`).
    fn ref_key(self, t: &Task) -> Option<DepKey<'_>> {
        match self {
            Pass::Namespace => (!t.namespace.is_empty()).then_some((t.namespace.as_str(), "")),
            Pass::Crd => Some((t.group.as_str(), t.kind.as_str())),
        }
    }

    fn dependency(self) -> Dependency {
        match self {
            Pass::Namespace => Dependency::Namespace,
            Pass::Crd => Dependency::CustomResourceDefinition,
        }
    }
}

/// Namespace, then CRD bubbling (spec §4.4, `syncTasks.Sort → adjustDeps`), on a sorted list:
/// the second half of [`order_tasks`], for tests that start from a hand-sorted list.
#[cfg(test)]
fn bubble_dependencies(mut tasks: Vec<Task>) -> Vec<Task> {
    let perm: Vec<usize> = (0..tasks.len()).collect();
    let perm = bubble(&mut tasks, perm, Pass::Namespace);
    let perm = bubble(&mut tasks, perm, Pass::Crd);
    permute(tasks, perm)
}

/// One `adjustDeps` pass in linear time over the order `perm` (positions → task indexes).
///
/// gitops-engine scans the sorted list, remembers the index of the first task referencing each
/// key, and when it reaches a dependency whose key was already referenced it shifts the slice
/// to insert the dependency at that index, giving it the referencing task's phase and wave.
/// Only dependencies move, and they only move *earlier*, so referencing tasks never change
/// their relative order and "the task at the remembered index" is always the same referencing
/// task. The result is therefore: every moved dependency sits immediately before its first
/// dependant, after any dependencies moved there earlier in the scan. This function builds
/// exactly that order with one map and one rebuild pass instead of repeated slice shifts (which
/// are quadratic on large apps). Prune tasks are skipped as both dependencies and dependants.
fn bubble(tasks: &mut [Task], perm: Vec<usize>, pass: Pass) -> Vec<usize> {
    // (dependency position, dependant position), in scan order.
    let mut moves: Vec<(usize, usize)> = Vec::new();
    {
        let mut first_ref: HashMap<DepKey, usize> = HashMap::new();
        for (pos, t) in perm.iter().enumerate() {
            let Some(t) = tasks.get(*t) else { continue };
            if t.is_prune {
                continue;
            }
            if let Some(key) = pass.dep_key(t) {
                if let Some(&dependant) = first_ref.get(&key) {
                    moves.push((pos, dependant));
                }
            } else if let Some(key) = pass.ref_key(t) {
                first_ref.entry(key).or_insert(pos);
            }
        }
    }
    if moves.is_empty() {
        return perm;
    }
    let mut moved = vec![false; perm.len()];
    let mut attached: HashMap<usize, Vec<usize>> = HashMap::new();
    for &(dep, dependant) in &moves {
        if let Some(m) = moved.get_mut(dep) {
            *m = true;
        }
        attached.entry(dependant).or_default().push(dep);
        let target = perm
            .get(dependant)
            .and_then(|&j| tasks.get(j))
            .map(|d| (d.phase, d.wave, d.object_key()));
        if let (Some((phase, wave, key)), Some(t)) =
            (target, perm.get(dep).and_then(|&i| tasks.get_mut(i)))
        {
            t.bubbled = Some(Bubble {
                dependency: pass.dependency(),
                from_phase: t.phase,
                from_wave: t.wave,
                dependant: key,
            });
            t.phase = phase;
            t.wave = wave;
        }
    }
    let mut out = Vec::with_capacity(perm.len());
    for (pos, &task) in perm.iter().enumerate() {
        if moved.get(pos).copied().unwrap_or(false) {
            continue;
        }
        if let Some(deps) = attached.get(&pos) {
            out.extend(deps.iter().filter_map(|&d| perm.get(d).copied()));
        }
        out.push(task);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{ObjectKey, TaskSource};

    fn task(phase: SyncPhase, wave: i64, group: &str, kind: &str, ns: &str, name: &str) -> Task {
        Task {
            index: 0,
            phase,
            wave,
            original_wave: wave,
            kind_order: kind_order(kind),
            group: group.to_string(),
            version: "v1".to_string(),
            api_version: if group.is_empty() {
                "v1".to_string()
            } else {
                format!("{group}/v1")
            },
            kind: kind.to_string(),
            name: name.to_string(),
            generated_name: false,
            namespace: ns.to_string(),
            is_hook: false,
            is_prune: false,
            source: TaskSource::Target { index: 0 },
            live: None,
            bubbled: None,
            prune_last: false,
            skip_dry_run: false,
            delete_policies: Vec::new(),
            prune_disabled: false,
            prune_requires_confirmation: false,
            crd_for: None,
            before_dry_run: false,
        }
    }

    fn names(tasks: &[Task]) -> Vec<String> {
        tasks
            .iter()
            .map(|t| format!("{}:{}:{}/{}", t.phase, t.wave, t.kind, t.name))
            .collect()
    }

    #[test]
    fn the_kind_table_runs_from_namespace_minus_35_to_apiservice_minus_1() {
        assert_eq!(kind_order("Namespace"), -35);
        assert_eq!(kind_order("NetworkPolicy"), -34);
        assert_eq!(kind_order("CustomResourceDefinition"), -22);
        assert_eq!(kind_order("Service"), -13);
        assert_eq!(kind_order("Job"), -5);
        assert_eq!(kind_order("IngressClass"), -3);
        assert_eq!(kind_order("Ingress"), -2);
        assert_eq!(kind_order("APIService"), -1);
        for (i, k) in KIND_ORDER.iter().enumerate() {
            assert_eq!(kind_order(k), i as i32 - 35, "{k}");
        }
    }

    #[test]
    fn unknown_and_miscased_kinds_sort_as_zero() {
        for k in [
            "MyCRD",
            "PriorityClass",
            "Endpoints",
            "namespace",
            "",
            "Application",
        ] {
            assert_eq!(kind_order(k), 0, "{k:?}");
        }
    }

    #[test]
    fn the_deterministic_tie_break_is_group_then_namespace_then_kind() {
        let ext = task(SyncPhase::Sync, 0, "extensions", "Ingress", "a", "x");
        let net = task(SyncPhase::Sync, 0, "networking.k8s.io", "Ingress", "a", "x");
        assert_eq!(argo_cmp(&ext, &net), Ordering::Equal);
        assert_eq!(total_cmp(&ext, &net), Ordering::Less);

        let ns_a = task(SyncPhase::Sync, 0, "", "ConfigMap", "a", "x");
        let ns_b = task(SyncPhase::Sync, 0, "", "ConfigMap", "b", "x");
        assert_eq!(argo_cmp(&ns_a, &ns_b), Ordering::Equal);
        assert_eq!(total_cmp(&ns_b, &ns_a), Ordering::Greater);

        let gadget = task(SyncPhase::Sync, 0, "example.com", "Gadget", "a", "x");
        let widget = task(SyncPhase::Sync, 0, "example.com", "Widget", "a", "x");
        assert_eq!(argo_cmp(&gadget, &widget), Ordering::Equal);
        assert_eq!(total_cmp(&gadget, &widget), Ordering::Less);
    }

    #[test]
    fn names_compare_byte_wise_not_by_locale() {
        let upper = task(SyncPhase::Sync, 0, "", "Pod", "a", "Z");
        let lower = task(SyncPhase::Sync, 0, "", "Pod", "a", "a");
        assert_eq!(argo_cmp(&upper, &lower), Ordering::Less);
    }

    #[test]
    fn prune_waves_are_mirrored_over_the_set_of_prune_waves() {
        let mut tasks: Vec<Task> = [1, 3, 3, 4, 5]
            .iter()
            .map(|w| {
                let mut t = task(SyncPhase::Sync, *w, "", "Pod", "a", "p");
                t.is_prune = true;
                t
            })
            .collect();
        tasks.push(task(SyncPhase::Sync, 3, "", "Pod", "a", "target"));
        reverse_prune_waves(&mut tasks);
        let waves: Vec<i64> = tasks.iter().map(|t| t.wave).collect();
        assert_eq!(waves, vec![5, 4, 4, 3, 1, 3]);
    }

    #[test]
    fn prune_last_goes_one_past_the_last_sync_wave_and_never_below_one() {
        let mut tasks = vec![
            task(SyncPhase::Sync, -3, "", "ConfigMap", "a", "a"),
            task(SyncPhase::PostSync, 9, "batch", "Job", "a", "post"),
        ];
        let mut old = task(SyncPhase::Sync, -5, "", "Pod", "a", "old");
        old.is_prune = true;
        old.prune_last = true;
        tasks.push(old);
        apply_prune_last(&mut tasks);
        assert_eq!(
            tasks[2].wave, 1,
            "PostSync waves do not count, the floor is 0 + 1"
        );
    }

    #[test]
    fn a_namespace_after_its_first_dependant_moves_just_before_it_and_takes_its_step() {
        let tasks = vec![
            task(SyncPhase::PreSync, 0, "batch", "Job", "ns1", "j1"),
            task(SyncPhase::PreSync, 0, "batch", "Job", "ns2", "j2"),
            task(SyncPhase::Sync, 1, "", "Namespace", "app", "ns1"),
            task(SyncPhase::Sync, 2, "", "Namespace", "app", "ns2"),
        ];
        let out = bubble_dependencies(tasks);
        assert_eq!(
            names(&out),
            vec![
                "PreSync:0:Namespace/ns1",
                "PreSync:0:Job/j1",
                "PreSync:0:Namespace/ns2",
                "PreSync:0:Job/j2"
            ]
        );
        let b = out[0].bubbled.as_ref().expect("bubbled");
        assert_eq!(b.dependency, Dependency::Namespace);
        assert_eq!((b.from_phase, b.from_wave), (SyncPhase::Sync, 1));
        assert_eq!(b.dependant, ObjectKey::new("batch", "Job", "ns1", "j1"));
    }

    #[test]
    fn a_namespace_already_before_its_dependants_does_not_move() {
        let tasks = vec![
            task(SyncPhase::Sync, -1, "", "Namespace", "app", "app"),
            task(SyncPhase::Sync, 0, "", "ConfigMap", "app", "c"),
        ];
        let out = bubble_dependencies(tasks);
        assert!(out.iter().all(|t| t.bubbled.is_none()));
        assert_eq!(out[0].wave, -1);
    }

    #[test]
    fn two_namespaces_moved_before_one_dependant_keep_their_scan_order() {
        // Both Namespace tasks carry the same key (e.g. one object that is a hook in two
        // phases): gitops-engine inserts the second one between the first and the dependant.
        let mut second = task(SyncPhase::PostSync, 0, "", "Namespace", "app", "ns");
        second.is_hook = true;
        let tasks = vec![
            task(SyncPhase::PreSync, 0, "", "ConfigMap", "ns", "c"),
            task(SyncPhase::Sync, 0, "", "Namespace", "app", "ns"),
            second,
        ];
        let out = bubble_dependencies(tasks);
        assert_eq!(
            names(&out),
            vec![
                "PreSync:0:Namespace/ns",
                "PreSync:0:Namespace/ns",
                "PreSync:0:ConfigMap/c"
            ]
        );
        assert!(
            out[1].is_hook,
            "scan order is kept among moved dependencies"
        );
    }

    #[test]
    fn prune_tasks_neither_move_nor_pull_dependencies() {
        let mut pruned_pod = task(SyncPhase::Sync, 0, "", "Pod", "ns", "old");
        pruned_pod.is_prune = true;
        let mut pruned_ns = task(SyncPhase::Sync, 5, "", "Namespace", "app", "gone");
        pruned_ns.is_prune = true;
        let tasks = vec![
            pruned_pod,
            task(SyncPhase::Sync, 1, "", "ConfigMap", "gone", "c"),
            pruned_ns,
            task(SyncPhase::Sync, 2, "", "Namespace", "app", "ns"),
        ];
        let out = bubble_dependencies(tasks);
        assert!(out.iter().all(|t| t.bubbled.is_none()));
        assert_eq!(out[2].wave, 5);
    }

    #[test]
    fn a_crd_moves_before_its_first_custom_resource_after_the_namespace_pass() {
        let mut crd = task(
            SyncPhase::Sync,
            2,
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            "app",
            "widgets.example.com",
        );
        crd.crd_for = Some("example.com/Widget".to_string());
        let tasks = vec![
            task(SyncPhase::Sync, -1, "example.com", "Widget", "app", "w"),
            crd,
            task(SyncPhase::Sync, 3, "", "Namespace", "app", "app"),
        ];
        let out = bubble_dependencies(tasks);
        assert_eq!(
            names(&out),
            vec![
                "Sync:-1:Namespace/app",
                "Sync:-1:CustomResourceDefinition/widgets.example.com",
                "Sync:-1:Widget/w"
            ]
        );
        assert_eq!(
            out[1].bubbled.as_ref().map(|b| b.dependency),
            Some(Dependency::CustomResourceDefinition)
        );
    }

    #[test]
    fn a_namespace_is_never_a_dependant_in_the_namespace_pass() {
        // Namespace objects get the destination namespace filled in too; they must not register
        // as referencing it, or a Namespace `app` would pull itself.
        let tasks = vec![
            task(SyncPhase::Sync, 0, "", "Namespace", "app", "other"),
            task(SyncPhase::Sync, 1, "", "Namespace", "app", "app"),
        ];
        let out = bubble_dependencies(tasks);
        assert!(out.iter().all(|t| t.bubbled.is_none()));
    }
}
