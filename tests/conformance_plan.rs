//! Conformance cases C01–C38 of `reference/argocd-sync-semantics.md` §9 against the plan and
//! tick simulator. Ordering cases compare `(phase, wave, kind, name)` lists; tasks that tie
//! under Argo CD's comparator (phase, wave, kind order, name) are compared as sets, because
//! Argo CD's order inside a tie group is nondeterministic.
//!
//! Which release each case is checked against: the cases run with the behaviours of Argo CD 3.6
//! (`new()`) and the spec's GE-mono expectations (C30, C33 and every `[Δ GE-mono]` one) are
//! the 3.4+ side of the release table (docs/argocd-versions.md); `old()` is 3.2.11, the
//! standalone engine. The ordering cases hold for every release, and those are what
//! `tests/oracle_recorded.rs` checks against the real controllers (3.2.11 and 3.6.1).

use serde_json::{Map, Value, json};
use syncguard::model::Resource;
use syncguard::model::argo::{DeletePolicy, SyncOptions, SyncPhase};
use syncguard::model::health::HealthStatus;
use syncguard::plan::tick::{
    Action, Behaviours, HealthVerdict, HookDeleteReason, Observation, OperationPhase, ResultCode,
    SyncState, TaskPhase, World, terminate, tick,
};
use syncguard::plan::{
    AppSettings, ClusterApis, Gate, IgnoreReason, ObjectKey, Plan, PlanInput, kind_order, plan,
};

use SyncPhase::{PostSync, PreSync, Sync, SyncFail};

/// The behaviours of Argo CD 3.6 (the spec's GE-mono side).
fn new() -> Behaviours {
    syncguard::model::version::ArgoCdVersion::new(3, 6).behaviours()
}

/// The behaviours of Argo CD 3.2.11 (the standalone gitops-engine, the spec's GE side).
fn old() -> Behaviours {
    "3.2.11"
        .parse::<syncguard::model::version::ArgoCdVersion>()
        .unwrap()
        .behaviours()
}

// ---------------------------------------------------------------------------------------------
// Builders
// ---------------------------------------------------------------------------------------------

/// A test object under construction.
struct Obj {
    v: Value,
}

/// The usual `apiVersion` of a kind; custom kinds default to `example.com/v1`.
fn default_api_version(kind: &str) -> &'static str {
    match kind {
        "Namespace"
        | "Pod"
        | "Service"
        | "ConfigMap"
        | "Secret"
        | "ServiceAccount"
        | "PersistentVolume"
        | "PersistentVolumeClaim"
        | "ReplicationController"
        | "LimitRange"
        | "ResourceQuota" => "v1",
        "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet" => "apps/v1",
        "Job" | "CronJob" => "batch/v1",
        "Ingress" | "IngressClass" | "NetworkPolicy" => "networking.k8s.io/v1",
        "HorizontalPodAutoscaler" => "autoscaling/v2",
        "PodDisruptionBudget" => "policy/v1",
        "Role" | "RoleBinding" | "ClusterRole" | "ClusterRoleBinding" => {
            "rbac.authorization.k8s.io/v1"
        }
        "StorageClass" => "storage.k8s.io/v1",
        "CustomResourceDefinition" => "apiextensions.k8s.io/v1",
        "APIService" => "apiregistration.k8s.io/v1",
        _ => "example.com/v1",
    }
}

fn obj(kind: &str, name: &str) -> Obj {
    Obj {
        v: json!({
            "apiVersion": default_api_version(kind),
            "kind": kind,
            "metadata": {"name": name},
        }),
    }
}

impl Obj {
    fn meta(&mut self) -> &mut Map<String, Value> {
        self.v
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .expect("metadata")
    }
    fn ann(mut self, k: &str, val: &str) -> Self {
        let m = self.meta();
        let a = m
            .entry("annotations")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .expect("annotations");
        a.insert(k.to_string(), Value::String(val.to_string()));
        self
    }
    fn api(mut self, api_version: &str) -> Self {
        self.v["apiVersion"] = Value::String(api_version.to_string());
        self
    }
    fn ns(mut self, ns: &str) -> Self {
        self.meta()
            .insert("namespace".into(), Value::String(ns.into()));
        self
    }
    fn wave(self, w: &str) -> Self {
        self.ann("argocd.argoproj.io/sync-wave", w)
    }
    fn hook(self, h: &str) -> Self {
        self.ann("argocd.argoproj.io/hook", h)
    }
    fn policy(self, p: &str) -> Self {
        self.ann("argocd.argoproj.io/hook-delete-policy", p)
    }
    fn helm_hook(self, h: &str) -> Self {
        self.ann("helm.sh/hook", h)
    }
    fn sync_options(self, o: &str) -> Self {
        self.ann("argocd.argoproj.io/sync-options", o)
    }
    fn generate_name(mut self, g: &str) -> Self {
        let m = self.meta();
        m.remove("name");
        m.insert("generateName".into(), Value::String(g.into()));
        self
    }
    /// A CRD defining `group/kind`.
    fn defines(mut self, group: &str, kind: &str) -> Self {
        self.v["spec"] = json!({"group": group, "names": {"kind": kind}});
        self
    }
    fn finalizer(mut self, f: &str) -> Self {
        self.meta().insert("finalizers".into(), json!([f]));
        self
    }
    fn build(self) -> Resource {
        Resource::from_value(self.v, None).expect("valid test object")
    }
}

fn app(dest: &str) -> AppSettings {
    AppSettings {
        destination_namespace: dest.to_string(),
        ..AppSettings::default()
    }
}

fn app_with(dest: &str, options: &[&str]) -> AppSettings {
    AppSettings {
        sync_options: SyncOptions::from_items(options),
        ..app(dest)
    }
}

fn build(objs: Vec<Obj>) -> Vec<Resource> {
    objs.into_iter().map(Obj::build).collect()
}

fn plan_of(targets: &[Resource], live: &[Resource], settings: AppSettings) -> Plan {
    plan(&PlanInput::new(targets, live, settings))
}

// ---------------------------------------------------------------------------------------------
// Order comparison with tie groups
// ---------------------------------------------------------------------------------------------

type Row = (SyncPhase, i64, String, String);

fn rows(p: &Plan) -> Vec<Row> {
    p.tasks()
        .map(|t| (t.phase, t.wave, t.kind.clone(), t.name.clone()))
        .collect()
}

/// Argo CD's tie key of a row: (phase, wave, kind order, name).
fn tie_key(r: &Row) -> (SyncPhase, i64, i32, String) {
    (r.0, r.1, kind_order(&r.2), r.3.clone())
}

/// Consecutive rows with the same tie key, each group sorted (compared as a multiset).
fn tie_groups(rows: &[Row]) -> Vec<Vec<Row>> {
    let mut groups: Vec<Vec<Row>> = Vec::new();
    for r in rows {
        match groups.last_mut() {
            Some(g) if g.first().map(tie_key) == Some(tie_key(r)) => g.push(r.clone()),
            _ => groups.push(vec![r.clone()]),
        }
    }
    for g in &mut groups {
        g.sort();
    }
    groups
}

fn assert_order(p: &Plan, expected: &[(SyncPhase, i64, &str, &str)]) {
    let want: Vec<Row> = expected
        .iter()
        .map(|(ph, w, k, n)| (*ph, *w, (*k).to_string(), (*n).to_string()))
        .collect();
    let got = rows(p);
    assert_eq!(
        tie_groups(&got),
        tie_groups(&want),
        "\n got: {got:#?}\nwant: {want:#?}"
    );
}

#[test]
fn tie_groups_compare_permutations_inside_a_group_as_equal() {
    let r = |k: &str, n: &str| (Sync, 0, k.to_string(), n.to_string());
    // Two custom kinds named x tie (kind order 0, same name); the Deployment does not.
    let one = vec![r("Widget", "x"), r("Gadget", "x"), r("Deployment", "z")];
    let two = vec![r("Gadget", "x"), r("Widget", "x"), r("Deployment", "z")];
    assert_ne!(one, two);
    assert_eq!(tie_groups(&one), tie_groups(&two));
    assert_eq!(tie_groups(&one).len(), 2);
    let swapped = vec![r("Deployment", "z"), r("Widget", "x"), r("Gadget", "x")];
    assert_ne!(
        tie_groups(&one),
        tie_groups(&swapped),
        "order between groups matters"
    );
}

// ---------------------------------------------------------------------------------------------
// Ordering and phase assignment
// ---------------------------------------------------------------------------------------------

/// C01 (T, `sync_tasks_test.go TestSortSyncTask`).
#[test]
fn c01_sort_sync_task() {
    let targets = build(vec![
        obj("Pod", "p"),
        obj("Service", "s"),
        obj("PersistentVolume", "pv"),
        obj("ConfigMap", "cm"),
        obj("ConfigMap", "w1").wave("1"),
        obj("ConfigMap", "wm1").wave("-1"),
        obj("Job", "pre").hook("PreSync"),
        obj("Job", "post").hook("PostSync"),
        obj("Job", "fail").hook("SyncFail"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (PreSync, 0, "Job", "pre"),
            (Sync, -1, "ConfigMap", "wm1"),
            (Sync, 0, "ConfigMap", "cm"),
            (Sync, 0, "PersistentVolume", "pv"),
            (Sync, 0, "Service", "s"),
            (Sync, 0, "Pod", "p"),
            (Sync, 1, "ConfigMap", "w1"),
            (PostSync, 0, "Job", "post"),
            (SyncFail, 0, "Job", "fail"),
        ],
    );
    // Steps: PreSync/0, Sync/-1, Sync/0, Sync/1, PostSync/0, plus the conditional SyncFail.
    let steps: Vec<(SyncPhase, i64)> = p.steps.iter().map(|s| (s.phase, s.wave)).collect();
    assert_eq!(
        steps,
        vec![
            (PreSync, 0),
            (Sync, -1),
            (Sync, 0),
            (Sync, 1),
            (PostSync, 0)
        ]
    );
    let fail = p.sync_fail.as_ref().expect("SyncFail step");
    assert!(fail.conditional);
    assert_eq!(fail.tasks.len(), 1);
    assert!(
        p.steps
            .iter()
            .rev()
            .skip(1)
            .all(|s| s.health_gated && !s.is_final)
    );
    let last = p.steps.last().expect("steps");
    assert!(last.is_final);
    assert_eq!(
        last.gate,
        Gate::HooksAndResources,
        "final step with a hook, multiStep"
    );
}

/// C02 (D, `sync_tasks.go` kind list).
#[test]
fn c02_every_listed_kind_in_table_order_then_custom_kinds() {
    let kinds = [
        "Ingress",
        "IngressClass",
        "APIService",
        "CronJob",
        "Job",
        "StatefulSet",
        "HorizontalPodAutoscaler",
        "Deployment",
        "ReplicaSet",
        "ReplicationController",
        "Pod",
        "DaemonSet",
        "Service",
        "RoleBinding",
        "Role",
        "ClusterRoleBinding",
        "ClusterRole",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "StorageClass",
        "ConfigMap",
        "Secret",
        "ServiceAccount",
        "PodDisruptionBudget",
        "LimitRange",
        "ResourceQuota",
        "NetworkPolicy",
    ];
    let mut objs: Vec<Obj> = kinds.iter().map(|k| obj(k, "x")).collect();
    objs.push(obj("Namespace", "app"));
    objs.push(obj("CustomResourceDefinition", "x").defines("example.com", "Foo"));
    objs.push(obj("Widget", "x"));
    let targets = build(objs);
    let p = plan_of(&targets, &[], app("app"));
    let expected = [
        ("Namespace", "app"),
        ("NetworkPolicy", "x"),
        ("ResourceQuota", "x"),
        ("LimitRange", "x"),
        ("PodDisruptionBudget", "x"),
        ("ServiceAccount", "x"),
        ("Secret", "x"),
        ("ConfigMap", "x"),
        ("StorageClass", "x"),
        ("PersistentVolume", "x"),
        ("PersistentVolumeClaim", "x"),
        ("CustomResourceDefinition", "x"),
        ("ClusterRole", "x"),
        ("ClusterRoleBinding", "x"),
        ("Role", "x"),
        ("RoleBinding", "x"),
        ("Service", "x"),
        ("DaemonSet", "x"),
        ("Pod", "x"),
        ("ReplicationController", "x"),
        ("ReplicaSet", "x"),
        ("Deployment", "x"),
        ("HorizontalPodAutoscaler", "x"),
        ("StatefulSet", "x"),
        ("Job", "x"),
        ("CronJob", "x"),
        ("IngressClass", "x"),
        ("Ingress", "x"),
        ("APIService", "x"),
        ("Widget", "x"),
    ];
    let want: Vec<(SyncPhase, i64, &str, &str)> =
        expected.iter().map(|(k, n)| (Sync, 0, *k, *n)).collect();
    assert_order(&p, &want);
}

/// C03 (D): unknown kinds all sort as 0 and are ordered by name only.
#[test]
fn c03_custom_kinds_interleave_by_name() {
    let targets = build(vec![
        obj("Deployment", "z"),
        obj("Widget", "a").api("example.com/v1"),
        obj("PriorityClass", "aa").api("scheduling.k8s.io/v1"),
        obj("Certificate", "b").api("cert-manager.io/v1"),
        obj("ValidatingWebhookConfiguration", "c").api("admissionregistration.k8s.io/v1"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (Sync, 0, "Deployment", "z"),
            (Sync, 0, "Widget", "a"),
            (Sync, 0, "PriorityClass", "aa"),
            (Sync, 0, "Certificate", "b"),
            (Sync, 0, "ValidatingWebhookConfiguration", "c"),
        ],
    );
}

/// C04 (D, the group is ignored).
#[test]
fn c04_the_api_group_does_not_change_kind_order() {
    let targets = build(vec![
        obj("Service", "a").api("serving.knative.dev/v1"),
        obj("ConfigMap", "b"),
        obj("Deployment", "c"),
        obj("Ingress", "d").api("extensions/v1beta1"),
        obj("Ingress", "e").api("networking.k8s.io/v1"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (Sync, 0, "ConfigMap", "b"),
            (Sync, 0, "Service", "a"),
            (Sync, 0, "Deployment", "c"),
            (Sync, 0, "Ingress", "d"),
            (Sync, 0, "Ingress", "e"),
        ],
    );
}

/// C05 (D, phase and wave dominate kind).
#[test]
fn c05_phase_and_wave_dominate_kind() {
    let targets = build(vec![
        obj("Namespace", "ns1").wave("5"),
        obj("Deployment", "d").wave("-2"),
        obj("Job", "pre").hook("PreSync").wave("10"),
        obj("Job", "post").hook("PostSync").wave("-10"),
        obj("Pod", "f").hook("SyncFail").wave("-100"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (PreSync, 10, "Job", "pre"),
            (Sync, -2, "Deployment", "d"),
            (Sync, 5, "Namespace", "ns1"),
            (PostSync, -10, "Job", "post"),
            (SyncFail, -100, "Pod", "f"),
        ],
    );
}

/// C06 (T, `TestSyncTasksSort_NamespaceAndObjectInNamespace`): Namespaces adopt PreSync/0.
#[test]
fn c06_namespaces_bubble_into_presync_before_their_hooks() {
    let targets = build(vec![
        obj("Job", "mySyncHookJob1")
            .hook("PreSync")
            .ns("myNamespace1"),
        obj("Job", "mySyncHookJob2")
            .hook("PreSync")
            .ns("myNamespace2"),
        obj("Namespace", "myNamespace1").wave("1"),
        obj("Namespace", "myNamespace2").wave("2"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (PreSync, 0, "Namespace", "myNamespace1"),
            (PreSync, 0, "Job", "mySyncHookJob1"),
            (PreSync, 0, "Namespace", "myNamespace2"),
            (PreSync, 0, "Job", "mySyncHookJob2"),
        ],
    );
    let ns: Vec<_> = p.tasks().filter(|t| t.kind == "Namespace").collect();
    let b = ns[1].bubbled.as_ref().expect("bubbled");
    assert_eq!((b.from_phase, b.from_wave), (Sync, 2));
    assert_eq!(b.dependant.name, "mySyncHookJob2");
    assert_eq!(ns[1].original_wave, 2);
}

/// C07 (D, `adjustDeps` plus namespace filling): the destination Namespace follows the
/// first object in it, because Argo CD fills the destination namespace into every target.
#[test]
fn c07_destination_namespace_follows_its_first_object() {
    let targets = build(vec![
        obj("ConfigMap", "c").wave("-1"),
        obj("Deployment", "d"),
        obj("Namespace", "app").wave("3"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (Sync, -1, "Namespace", "app"),
            (Sync, -1, "ConfigMap", "c"),
            (Sync, 0, "Deployment", "d"),
        ],
    );
    let ns = p.tasks().next().expect("task");
    assert_eq!(ns.namespace, "app", "even a cluster-scoped target gets it");
    assert_eq!(ns.bubbled.as_ref().map(|b| b.from_wave), Some(3));
}

/// C08 (T, `TestSyncTasksSort_CRDAndCR`).
#[test]
fn c08_crd_bubbles_before_its_presync_custom_resource() {
    let targets = build(vec![
        obj("Workflow", "wf")
            .api("argoproj.io/v1alpha1")
            .hook("PreSync"),
        obj("CustomResourceDefinition", "workflows.argoproj.io").defines("argoproj.io", "Workflow"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (
                PreSync,
                0,
                "CustomResourceDefinition",
                "workflows.argoproj.io",
            ),
            (PreSync, 0, "Workflow", "wf"),
        ],
    );
    assert!(p.is_valid());
}

/// C09 (D): CRD in the same sync, not yet in the cluster; the CR skips its dry-run.
#[test]
fn c09_crd_takes_the_wave_of_its_first_custom_resource() {
    let targets = build(vec![
        obj("Widget", "w").wave("-1"),
        obj("CustomResourceDefinition", "widgets.example.com")
            .wave("2")
            .defines("example.com", "Widget"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (Sync, -1, "CustomResourceDefinition", "widgets.example.com"),
            (Sync, -1, "Widget", "w"),
        ],
    );
    let w = p.tasks().find(|t| t.kind == "Widget").expect("widget");
    assert!(w.skip_dry_run);
    assert!(p.is_valid());
}

/// C10 (T, `TestUnnamedHooksGetUniqueNames`) and its derived variant.
#[test]
fn c10_unnamed_hooks_get_one_generated_name_per_phase() {
    let targets = build(vec![
        obj("Pod", "")
            .generate_name("my-pod-")
            .hook("PreSync,PostSync"),
    ]);
    let settings = AppSettings {
        revision: "FooBarBaz".into(),
        ..app("app")
    };
    let p = plan_of(&targets, &[], settings);
    let names: Vec<(SyncPhase, String)> = p.tasks().map(|t| (t.phase, t.name.clone())).collect();
    assert_eq!(names.len(), 2);
    assert_eq!(names[0].0, PreSync);
    assert!(names[0].1.contains("foobarb-presync-"), "{names:?}");
    assert_eq!(names[1].0, PostSync);
    assert!(names[1].1.contains("foobarb-postsync-"), "{names:?}");
    assert!(p.tasks().all(|t| t.generated_name));

    let variant = build(vec![
        obj("Job", "")
            .generate_name("mig-")
            .hook("PreSync,PostSync"),
    ]);
    let settings = AppSettings {
        revision: "0123456789abcdef".into(),
        started_at_unix: 1_700_000_000,
        ..app("app")
    };
    let p = plan_of(&variant, &[], settings);
    assert_order(
        &p,
        &[
            (PreSync, 0, "Job", "mig-0123456-presync-1700000000"),
            (PostSync, 0, "Job", "mig-0123456-postsync-1700000000"),
        ],
    );
}

/// C11 (T, `TestSkipHook`, `TestSyncPhaseSkip`): Skip gives no task and is never pruned.
#[test]
fn c11_skip_is_never_applied_nor_pruned() {
    let targets = build(vec![obj("ConfigMap", "a").hook("Skip")]);
    let p = plan_of(&targets, &[], app("app"));
    assert_eq!(p.tasks().count(), 0);
    assert_eq!(p.ignored.len(), 1);
    assert_eq!(p.ignored[0].reason, IgnoreReason::Skip);

    let live = build(vec![obj("ConfigMap", "a").hook("Skip").ns("app")]);
    let p = plan_of(&[], &live, app("app"));
    assert_eq!(
        p.tasks().count(),
        0,
        "a live-only Skip object is not pruned"
    );
    assert_eq!(p.ignored[0].reason, IgnoreReason::NeverPruned);

    // Managed Skip target with a live copy: the live copy is matched, so nothing is pruned.
    let p = plan_of(&targets, &live, app("app"));
    assert_eq!(p.tasks().count(), 0);
}

/// C12 (T, `TestSkipAndHook`).
#[test]
fn c12_skip_with_other_types_is_a_hook_in_those_phases() {
    let targets = build(vec![obj("Pod", "p").hook("Skip,PreSync,PostSync")]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(&p, &[(PreSync, 0, "Pod", "p"), (PostSync, 0, "Pod", "p")]);
    assert!(p.tasks().all(|t| t.is_hook));
}

/// C13 (T, `TestGarbageHook`, `ignore_test.go`): wrong-case or garbage hook values.
#[test]
fn c13_garbage_hooks_are_silently_ignored() {
    for value in ["presync", "Garbage"] {
        let targets = build(vec![obj("Job", "j").hook(value)]);
        let live = build(vec![obj("Job", "j").hook(value).ns("app")]);
        let p = plan_of(&targets, &live, app("app"));
        assert_eq!(p.tasks().count(), 0, "{value}: not applied, not pruned");
        assert!(
            p.ignored
                .iter()
                .any(|i| i.reason == IgnoreReason::GarbageHook),
            "{value}"
        );
    }
}

/// C14 (T, `TestGarbageAndHook`).
#[test]
fn c14_a_valid_type_next_to_garbage_makes_a_hook() {
    let targets = build(vec![obj("Pod", "p").hook("Sync,Garbage")]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(&p, &[(Sync, 0, "Pod", "p")]);
    assert!(p.tasks().all(|t| t.is_hook));
}

/// C15 (T+D, Helm hook mapping).
#[test]
fn c15_helm_hooks_map_to_phases_and_the_rest_are_dropped() {
    let targets = build(vec![
        obj("Job", "A").helm_hook("pre-install"),
        obj("Job", "B").helm_hook("post-upgrade"),
        obj("Job", "C").helm_hook("pre-install, pre-upgrade"),
        obj("ConfigMap", "D").helm_hook("test"),
        obj("CustomResourceDefinition", "E").helm_hook("crd-install"),
        obj("Job", "F").helm_hook("pre-delete"),
        obj("Pod", "G").helm_hook("pre-rollback"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(
        &p,
        &[
            (PreSync, 0, "Job", "A"),
            (PreSync, 0, "Job", "C"),
            (Sync, 0, "CustomResourceDefinition", "E"),
            (PostSync, 0, "Job", "B"),
        ],
    );
    let reasons: Vec<(String, IgnoreReason)> = p
        .ignored
        .iter()
        .map(|i| (i.object.name.clone(), i.reason))
        .collect();
    assert!(reasons.contains(&("D".into(), IgnoreReason::GarbageHook)));
    assert!(reasons.contains(&("F".into(), IgnoreReason::DeleteHookOnly)));
    assert!(reasons.contains(&("G".into(), IgnoreReason::GarbageHook)));
}

/// C16 (T+D, `TestBothHooks`, `hook/delete_policy.go`).
#[test]
fn c16_argo_types_win_helm_weight_applies_and_policies_are_the_union() {
    let targets = build(vec![
        obj("Job", "j")
            .hook("Sync")
            .helm_hook("pre-install")
            .ann("helm.sh/hook-weight", "-5")
            .policy("BeforeHookCreation")
            .ann("helm.sh/hook-delete-policy", "hook-succeeded"),
    ]);
    let p = plan_of(&targets, &[], app("app"));
    assert_order(&p, &[(Sync, -5, "Job", "j")]);
    let t = p.tasks().next().expect("task");
    assert_eq!(
        t.delete_policies,
        vec![
            DeletePolicy::BeforeHookCreation,
            DeletePolicy::HookSucceeded
        ]
    );
}

/// C17 (T+D, `waves_test.go`, `waves.go`).
#[test]
fn c17_wave_parsing_follows_go_atoi_with_the_hook_weight_fallback() {
    let cases: Vec<(Obj, i64)> = vec![
        (obj("Pod", "p"), 0),
        (obj("Pod", "p").wave("1"), 1),
        (obj("Pod", "p").ann("helm.sh/hook-weight", "1"), 1),
        (obj("Pod", "p").wave("-5"), -5),
        (obj("Pod", "p").wave("+3"), 3),
        (
            obj("Pod", "p").wave("abc").ann("helm.sh/hook-weight", "3"),
            3,
        ),
        (obj("Pod", "p").wave(" 2"), 0),
        (obj("Pod", "p").wave("1.5"), 0),
        (obj("Pod", "p").wave(""), 0),
        (obj("Pod", "p").wave("99999999999999999999"), 0),
    ];
    for (o, want) in cases {
        let targets = vec![o.build()];
        let p = plan_of(&targets, &[], app("app"));
        let t = p.tasks().next().expect("task");
        assert_eq!(t.wave, want, "{:?}", targets[0].annotations());
        assert!(!t.is_hook, "hook-weight alone does not make a hook");
    }
}

/// C18 (T, `hook/delete_policy_test.go`).
#[test]
fn c18_hook_delete_policies_default_to_before_hook_creation() {
    use DeletePolicy::*;
    let cases: Vec<(Obj, Vec<DeletePolicy>)> = vec![
        (obj("Pod", "p").hook("Sync"), vec![BeforeHookCreation]),
        (
            obj("Pod", "p").hook("Sync").policy("garbage"),
            vec![BeforeHookCreation],
        ),
        (
            obj("Pod", "p").hook("Sync").policy("BeforeHookCreation"),
            vec![BeforeHookCreation],
        ),
        (
            obj("Pod", "p").hook("Sync").policy("HookSucceeded"),
            vec![HookSucceeded],
        ),
        (
            obj("Pod", "p").hook("Sync").policy("HookFailed"),
            vec![HookFailed],
        ),
        (
            obj("Pod", "p")
                .hook("Sync")
                .ann("helm.sh/hook-delete-policy", "hook-succeeded"),
            vec![HookSucceeded],
        ),
    ];
    for (o, want) in cases {
        let targets = vec![o.build()];
        let p = plan_of(&targets, &[], app("app"));
        assert_eq!(p.tasks().next().expect("task").delete_policies, want);
    }
}

/// C19 (T, `Test_syncTask_hasHookDeletePolicy`): a policy without a hook means nothing.
#[test]
fn c19_delete_policy_without_hook_is_ignored() {
    let targets = build(vec![obj("Pod", "p").policy("BeforeHookCreation")]);
    let p = plan_of(&targets, &[], app("app"));
    let t = p.tasks().next().expect("task");
    assert!(!t.is_hook);
    assert!(t.delete_policies.is_empty());
}

/// C20 (T, `TestDeDupingTasks`): a hook that is also live gives exactly one task.
#[test]
fn c20_a_hook_that_is_also_a_managed_object_gives_one_task() {
    let targets = build(vec![obj("Pod", "p").hook("Sync")]);
    let live = build(vec![obj("Pod", "p").hook("Sync").ns("app")]);
    let p = plan_of(&targets, &live, app("app"));
    assert_eq!(p.tasks().count(), 1);
    let t = p.tasks().next().expect("task");
    assert!(t.is_hook && !t.is_prune);
    assert_eq!(t.live, Some(0), "the hook task sees its live copy");
}

// ---------------------------------------------------------------------------------------------
// Pruning
// ---------------------------------------------------------------------------------------------

fn pod(name: &str, wave: &str) -> Obj {
    obj("Pod", name).wave(wave).ns("app")
}

/// C21 (T, `TestWaveReorderingOfPruneTasks/differentWave_allPruneTasks`).
#[test]
fn c21_prune_waves_are_reversed() {
    let live = build(vec![
        obj("Namespace", "ns").wave("0"),
        pod("pod-1", "1"),
        pod("pod-2", "2"),
        pod("pod-3", "3"),
        pod("pod-4", "4"),
    ]);
    let p = plan_of(&[], &live, app("app"));
    assert_order(
        &p,
        &[
            (Sync, 0, "Pod", "pod-4"),
            (Sync, 1, "Pod", "pod-3"),
            (Sync, 2, "Pod", "pod-2"),
            (Sync, 3, "Pod", "pod-1"),
            (Sync, 4, "Namespace", "ns"),
        ],
    );
    assert!(p.tasks().all(|t| t.is_prune));
}

/// C22 (T, `…/differentWave_mixedTasks`).
#[test]
fn c22_prune_waves_mirror_only_over_prune_tasks() {
    let targets = build(vec![obj("Namespace", "ns").wave("0"), pod("pod-2", "2")]);
    let live = build(vec![
        pod("pod-1", "1"),
        pod("pod-3", "3"),
        pod("pod-4", "4"),
    ]);
    let p = plan_of(&targets, &live, app("app"));
    assert_order(
        &p,
        &[
            (Sync, 0, "Namespace", "ns"),
            (Sync, 1, "Pod", "pod-4"),
            (Sync, 2, "Pod", "pod-2"),
            (Sync, 3, "Pod", "pod-3"),
            (Sync, 4, "Pod", "pod-1"),
        ],
    );
}

/// C23 (T, `…/mixedTasks`).
#[test]
fn c23_prune_waves_mirror_with_duplicate_waves() {
    let targets = build(vec![
        obj("Namespace", "ns").wave("-1"),
        pod("pod-2", "3"),
        pod("pod-6", "5"),
    ]);
    let live = build(vec![
        pod("pod-1", "1"),
        pod("pod-3", "3"),
        pod("pod-4", "3"),
        pod("pod-5", "4"),
        pod("pod-7", "5"),
    ]);
    let p = plan_of(&targets, &live, app("app"));
    assert_order(
        &p,
        &[
            (Sync, -1, "Namespace", "ns"),
            (Sync, 1, "Pod", "pod-7"),
            (Sync, 3, "Pod", "pod-2"),
            (Sync, 3, "Pod", "pod-5"),
            (Sync, 4, "Pod", "pod-3"),
            (Sync, 4, "Pod", "pod-4"),
            (Sync, 5, "Pod", "pod-1"),
            (Sync, 5, "Pod", "pod-6"),
        ],
    );
}

fn prune_last_live() -> Vec<Resource> {
    build(vec![
        pod("pod-1", "1"),
        pod("pod-2", "2"),
        pod("pod-3", "3"),
        pod("pod-4", "4"),
    ])
}

/// C24 (T, `…/pruneLast`, app-level PruneLast): all prunes in one step after the last wave.
#[test]
fn c24_app_prune_last_moves_every_prune_after_the_last_sync_wave() {
    let targets = build(vec![obj("Namespace", "ns").wave("0")]);
    let p = plan_of(
        &targets,
        &prune_last_live(),
        app_with("app", &["PruneLast=true"]),
    );
    assert_order(
        &p,
        &[
            (Sync, 0, "Namespace", "ns"),
            (Sync, 5, "Pod", "pod-1"),
            (Sync, 5, "Pod", "pod-2"),
            (Sync, 5, "Pod", "pod-3"),
            (Sync, 5, "Pod", "pod-4"),
        ],
    );
    assert_eq!(p.steps.len(), 2);
    assert!(p.tasks().filter(|t| t.is_prune).all(|t| t.prune_last));
}

/// C25 (T, `…/pruneLastIndividualResources`).
#[test]
fn c25_a_live_prune_last_annotation_moves_only_that_object() {
    let targets = build(vec![obj("Namespace", "ns").wave("0")]);
    let live = build(vec![
        pod("pod-1", "1"),
        pod("pod-2", "2").sync_options("PruneLast=true"),
        pod("pod-3", "3"),
        pod("pod-4", "4"),
    ]);
    let p = plan_of(&targets, &live, app("app"));
    assert_order(
        &p,
        &[
            (Sync, 0, "Namespace", "ns"),
            (Sync, 1, "Pod", "pod-4"),
            (Sync, 2, "Pod", "pod-3"),
            (Sync, 4, "Pod", "pod-1"),
            (Sync, 5, "Pod", "pod-2"),
        ],
    );
}

/// C26 (T, `TestPruneLast/syncPhaseDifferentWave`).
#[test]
fn c26_prune_last_counts_the_reversed_prune_waves() {
    let targets = build(vec![pod("pod-1", "2")]);
    let live = build(vec![pod("pod-2", "1"), pod("pod-3", "7")]);
    let p = plan_of(&targets, &live, app_with("app", &["PruneLast=true"]));
    assert_order(
        &p,
        &[
            (Sync, 2, "Pod", "pod-1"),
            (Sync, 8, "Pod", "pod-2"),
            (Sync, 8, "Pod", "pod-3"),
        ],
    );
}

/// C27 (D, `getSyncTasks` PruneLast floor): the PruneLast wave is at least 1.
#[test]
fn c27_prune_last_wave_is_at_least_one() {
    let targets = build(vec![obj("ConfigMap", "a").wave("-3")]);
    let live = build(vec![pod("old", "-5").sync_options("PruneLast=true")]);
    let p = plan_of(&targets, &live, app("app"));
    assert_order(&p, &[(Sync, -3, "ConfigMap", "a"), (Sync, 1, "Pod", "old")]);
}

// ---------------------------------------------------------------------------------------------
// Tick behaviour
// ---------------------------------------------------------------------------------------------

fn key(s: &str) -> ObjectKey {
    ObjectKey::parse(s).expect("key")
}

/// Runs one tick and returns the new state.
fn step(input: &PlanInput, state: &SyncState, world: &World) -> SyncState {
    tick(input, state, world)
}

fn applied(state: &SyncState) -> Vec<String> {
    state
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Applied { object, .. } => Some(object.name.clone()),
            _ => None,
        })
        .collect()
}

fn pruned(state: &SyncState) -> Vec<String> {
    state
        .actions
        .iter()
        .filter_map(|a| match a {
            Action::Pruned { object } => Some(object.name.clone()),
            _ => None,
        })
        .collect()
}

fn count(state: &SyncState, f: impl Fn(&Action) -> bool) -> usize {
    state.actions.iter().filter(|a| f(a)).count()
}

/// C28 (T, `TestWaitForCleanUpBeforeNextWave`): prunes in reverse wave order, waiting for
/// each pruned object to be gone.
#[test]
fn c28_wait_for_cleanup_before_next_wave() {
    let live = build(vec![
        pod("pod-1", "1"),
        pod("pod-2", "2"),
        pod("pod-3", "3"),
    ]);
    let settings = AppSettings {
        prune: true,
        ..app("app")
    };
    let input = PlanInput::new(&[], &live, settings);
    let s0 = SyncState::new(new());

    let s1 = step(&input, &s0, &World::new());
    assert_eq!(pruned(&s1), vec!["pod-3"]);
    assert_eq!(s1.phase, OperationPhase::Running);

    // pod-3 is gone (the simulator deleted it); pod-2 is next.
    let s2 = step(&input, &s1, &World::new());
    assert_eq!(pruned(&s2), vec!["pod-2"]);
    assert_eq!(s2.phase, OperationPhase::Running);

    // pod-2 is still terminating.
    let terminating = World::new().observe(key("/Pod/app/pod-2"), Observation::deleting());
    let s3 = step(&input, &s2, &terminating);
    assert!(s3.actions.is_empty());
    assert_eq!(s3.phase, OperationPhase::Running);
    assert_eq!(s3.message, "waiting for deletion of /Pod/pod-2");

    let gone = World::new().observe(key("/Pod/app/pod-2"), Observation::gone());
    let s4 = step(&input, &s3, &gone);
    assert_eq!(pruned(&s4), vec!["pod-1"]);
    assert_eq!(s4.phase, OperationPhase::Succeeded);
    assert_eq!(s4.message, "successfully synced (all tasks run)");
    let order: Vec<&str> = s4
        .results_in_order()
        .iter()
        .map(|r| r.object.name.as_str())
        .collect();
    assert_eq!(order, vec!["pod-3", "pod-2", "pod-1"]);
    assert!(
        s4.results
            .values()
            .all(|r| r.status == Some(ResultCode::Pruned))
    );
}

/// C29 (T, `TestSyncCreateInSortedOrder`): single step, no hooks: done in one tick.
#[test]
fn c29_single_step_without_hooks_finishes_in_one_tick() {
    let targets = build(vec![obj("Pod", "pod"), obj("Service", "svc")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    // Even a Progressing verdict does not matter: the final step is not waited for.
    let world = World {
        default_health: HealthVerdict::Status(HealthStatus::Progressing),
        ..World::new()
    };
    let s1 = step(&input, &SyncState::default(), &world);
    assert_eq!(s1.phase, OperationPhase::Succeeded);
    assert_eq!(s1.message, "successfully synced (all tasks run)");
    assert_eq!(
        applied(&s1),
        vec!["svc", "pod"],
        "kind order: Service before Pod"
    );
    assert_eq!(s1.results.len(), 2);
}

/// C30 (T, GE-mono `TestSyncSuccessfully_Multistep`), and the legacy GE wording.
#[test]
fn c30_multistep_waits_for_health_between_waves() {
    let targets = build(vec![
        obj("Service", "my-service").wave("0"),
        obj("Service", "new-svc-2").wave("5"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));

    let s1 = step(&input, &SyncState::new(new()), &World::new());
    assert_eq!(s1.results.len(), 1);
    assert_eq!(s1.phase, OperationPhase::Running);
    assert_eq!(
        s1.message,
        "waiting for healthy state of /Service/my-service"
    );

    let progressing = World::new().with_health(
        key("/Service/app/my-service"),
        HealthVerdict::Status(HealthStatus::Progressing),
    );
    let waiting = step(&input, &s1, &progressing);
    assert!(waiting.actions.is_empty(), "a waiting tick applies nothing");
    assert_eq!(
        waiting.message,
        "waiting for healthy state of /Service/my-service"
    );

    let s2 = step(&input, &waiting, &World::new());
    assert_eq!(s2.phase, OperationPhase::Succeeded);
    assert_eq!(s2.message, "successfully synced (all tasks run)");

    let legacy = step(&input, &SyncState::new(old()), &World::new());
    assert_eq!(
        legacy.message,
        "waiting for healthy state of /Service/new-svc-2"
    );
}

/// C31 (T, GE `TestSyncWaveHook`): one SyncWaveHook call per applied step, none on waits.
#[test]
fn c31_sync_wave_hook_calls() {
    let targets = build(vec![
        obj("Pod", "pod-1").wave("-1"),
        obj("Pod", "pod-2"),
        obj("Pod", "pod-3").hook("PostSync"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));
    for flavor in [new(), old()] {
        let calls = |s: &SyncState| -> Vec<(SyncPhase, i64, bool)> {
            s.actions
                .iter()
                .filter_map(|a| match a {
                    Action::SyncWaveHook {
                        phase,
                        wave,
                        final_wave,
                    } => Some((*phase, *wave, *final_wave)),
                    _ => None,
                })
                .collect()
        };
        let s1 = step(&input, &SyncState::new(flavor), &World::new());
        assert_eq!(calls(&s1), vec![(Sync, -1, false)]);
        let slow = World::new().with_health(
            key("/Pod/app/pod-1"),
            HealthVerdict::Status(HealthStatus::Progressing),
        );
        let wait = step(&input, &s1, &slow);
        assert_eq!(calls(&wait), vec![], "a tick that only waits makes no call");
        let s2 = step(&input, &wait, &World::new());
        assert_eq!(calls(&s2), vec![(Sync, 0, false)]);
        let s3 = step(&input, &s2, &World::new());
        assert_eq!(calls(&s3), vec![(PostSync, 0, true)]);
        let s4 = step(&input, &s3, &World::new());
        assert_eq!(calls(&s4), vec![]);
        assert_eq!(s4.phase, OperationPhase::Succeeded, "{flavor:?}");
        assert_eq!(s4.message, "successfully synced (no more tasks)");
    }
}

/// C32 (T, `TestSyncFailureHookWithSuccessfulSync` / `…WithFailedSync`).
#[test]
fn c32_sync_fail_hooks_run_only_when_the_sync_fails() {
    let targets = build(vec![obj("Pod", "pod"), obj("Pod", "fail").hook("SyncFail")]);
    let input = PlanInput::new(&targets, &[], app("app"));

    let ok = step(&input, &SyncState::default(), &World::new());
    assert_eq!(ok.phase, OperationPhase::Succeeded);
    assert_eq!(ok.results.len(), 1, "the SyncFail hook is never created");
    assert_eq!(applied(&ok), vec!["pod"]);

    let broken = World::new().apply_error(key("/Pod/app/pod"), "boom");
    let s1 = step(&input, &SyncState::default(), &broken);
    assert_eq!(
        s1.phase,
        OperationPhase::Running,
        "GE-mono waits for SyncFail hooks"
    );
    assert_eq!(applied(&s1), vec!["fail"]);
    assert_eq!(s1.message, "waiting for completion of hook /Pod/fail");
    let s2 = step(&input, &s1, &broken);
    assert_eq!(s2.phase, OperationPhase::Failed);
    assert_eq!(s2.results.len(), 2);
    assert_eq!(
        s2.message,
        "one or more synchronization tasks completed unsuccessfully, reason: boom"
    );
}

/// C33 (T+D, GE-mono `TestSync_SuccessfulSyncWithSyncFailHook`): a SyncFail task makes the
/// sync multi-step, so the final step's non-hook resources are waited for too.
#[test]
fn c33_sync_fail_hook_makes_the_final_step_wait_for_resources() {
    let with_fail = build(vec![
        obj("Pod", "pod"),
        obj("Pod", "hook-1").hook("Sync"),
        obj("Pod", "fail").hook("SyncFail"),
    ]);
    let input = PlanInput::new(&with_fail, &[], app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    assert_eq!(
        s1.message,
        "waiting for completion of hook /Pod/hook-1 and 1 more resources"
    );
    let pod_slow = World::new().with_health(
        key("/Pod/app/pod"),
        HealthVerdict::Status(HealthStatus::Progressing),
    );
    let s2 = step(&input, &s1, &pod_slow);
    assert_eq!(s2.phase, OperationPhase::Running);
    assert_eq!(s2.message, "waiting for healthy state of /Pod/pod");
    let s3 = step(&input, &s2, &World::new());
    assert_eq!(s3.phase, OperationPhase::Succeeded);
    assert_eq!(s3.message, "successfully synced (no more tasks)");
    assert!(plan(&input).multi_step());

    // (D) Without the SyncFail hook only hook-1 is waited for.
    let without = build(vec![obj("Pod", "pod"), obj("Pod", "hook-1").hook("Sync")]);
    let input = PlanInput::new(&without, &[], app("app"));
    let p = plan(&input);
    assert_eq!(p.steps[0].gate, Gate::Hooks);
    let s1 = step(&input, &SyncState::default(), &World::new());
    let s2 = step(&input, &s1, &pod_slow);
    assert_eq!(s2.phase, OperationPhase::Succeeded);
    assert_eq!(s2.message, "successfully synced (no more tasks)");
}

/// C34 (T, `TestBeforeHookCreation`): delete the old hook on one tick, create it on the next.
#[test]
fn c34_before_hook_creation_deletes_then_creates() {
    let hook = || {
        obj("Pod", "my-pod")
            .hook("Sync")
            .policy("BeforeHookCreation")
    };
    let targets = build(vec![hook()]);
    let live = build(vec![
        hook()
            .ns("app")
            .finalizer("argocd.argoproj.io/hook-finalizer"),
    ]);
    let input = PlanInput::new(&targets, &live, app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    let pod = key("/Pod/app/my-pod");
    assert_eq!(
        s1.actions[..2],
        [
            Action::FinalizerRemoved {
                object: pod.clone()
            },
            Action::HookDeleted {
                object: pod.clone(),
                reason: HookDeleteReason::BeforeHookCreation
            },
        ]
    );
    assert_eq!(s1.phase, OperationPhase::Running);
    assert_eq!(s1.message, "waiting for deletion of hook /Pod/my-pod");
    assert!(applied(&s1).is_empty());

    let s2 = step(&input, &s1, &World::new());
    assert_eq!(applied(&s2), vec!["my-pod"]);
    assert_eq!(s2.phase, OperationPhase::Running);
    assert_eq!(s2.message, "waiting for completion of hook /Pod/my-pod");

    // A deletion that hangs (old object still terminating) keeps deleting, never creating.
    let stuck = World::new().observe(pod.clone(), Observation::deleting());
    let s2b = step(&input, &s1, &stuck);
    assert!(applied(&s2b).is_empty());
    assert_eq!(s2b.message, "waiting for deletion of hook /Pod/my-pod");
}

/// C35 (T, `TestRunSync_HooksNotDeletedIfPhaseNotCompleted`, `…DeletedAfterPhaseCompleted`,
/// `…Failed`): HookSucceeded/HookFailed deletion happens only when the operation ends.
#[test]
fn c35_hook_deletion_waits_for_the_end_of_the_operation() {
    let targets = build(vec![
        obj("Pod", "hook-1").hook("PreSync").policy("HookSucceeded"),
        obj("Pod", "hook-2").hook("PreSync").policy("HookSucceeded"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    assert_eq!(
        s1.message,
        "waiting for completion of hook /Pod/hook-1 and 1 more hooks"
    );
    let one_running = World::new().with_health(
        key("/Pod/app/hook-2"),
        HealthVerdict::Status(HealthStatus::Progressing),
    );
    let s2 = step(&input, &s1, &one_running);
    let deletes = |s: &SyncState| count(s, |a| matches!(a, Action::HookDeleted { .. }));
    let finalizers = |s: &SyncState| count(s, |a| matches!(a, Action::FinalizerRemoved { .. }));
    assert_eq!((deletes(&s2), finalizers(&s2)), (0, 0));
    let s3 = step(&input, &s2, &World::new());
    assert_eq!((deletes(&s3), finalizers(&s3)), (2, 2));
    assert_eq!(s3.phase, OperationPhase::Succeeded);

    let targets = build(vec![
        obj("Pod", "hook-1").hook("Sync").policy("HookFailed"),
        obj("Pod", "hook-2").hook("Sync").policy("HookFailed"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    let one_failed = World::new().with_health(
        key("/Pod/app/hook-2"),
        HealthVerdict::Status(HealthStatus::Degraded),
    );
    let s2 = step(&input, &s1, &one_failed);
    assert_eq!(deletes(&s2), 2);
    assert!(s2.actions.iter().all(|a| !matches!(
        a,
        Action::HookDeleted {
            reason: HookDeleteReason::HookSucceeded,
            ..
        }
    )));
    assert_eq!(s2.phase, OperationPhase::Failed);
    assert_eq!(
        s2.message,
        "one or more synchronization tasks completed unsuccessfully"
    );
}

/// C36 (T, `TestSyncCustomResources`): validity and skip-dry-run of an unknown kind.
#[test]
fn c36_custom_resources_validity_and_skip_dry_run() {
    let cr = || obj("Widget", "w").api("example.com/v1");
    let crd =
        || obj("CustomResourceDefinition", "widgets.example.com").defines("example.com", "Widget");
    let widget = |p: &Plan| {
        p.tasks()
            .find(|t| t.kind == "Widget")
            .map(|t| t.skip_dry_run)
            .expect("widget task")
    };

    // CRD absent everywhere: invalid, and the sync fails at once.
    let targets = build(vec![cr()]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let p = plan(&input);
    assert!(!p.is_valid());
    assert!(!widget(&p));
    let s = step(&input, &SyncState::default(), &World::new());
    assert_eq!(s.phase, OperationPhase::Failed);
    assert_eq!(
        s.message,
        "one or more synchronization tasks are not valid: the server could not find the requested resource"
    );
    assert!(s.actions.is_empty());
    let legacy = step(&input, &SyncState::new(old()), &World::new());
    assert_eq!(
        legacy.message,
        "one or more synchronization tasks are not valid"
    );

    // CRD in the same sync.
    let targets = build(vec![cr(), crd()]);
    let p = plan_of(&targets, &[], app("app"));
    assert!(p.is_valid());
    assert!(widget(&p));

    // CRD already in the cluster (described, or visible as a live CRD).
    let targets = build(vec![cr()]);
    let mut input = PlanInput::new(&targets, &[], app("app"));
    input.cluster_apis = ClusterApis::builtin_only().with("example.com", "Widget");
    let p = plan(&input);
    assert!(p.is_valid());
    assert!(!widget(&p));
    let live = build(vec![crd()]);
    let p = plan_of(&targets, &live, app("app"));
    assert!(p.is_valid());
    assert!(!widget(&p));

    // Resource annotation.
    let targets = build(vec![cr().sync_options("SkipDryRunOnMissingResource=true")]);
    let p = plan_of(&targets, &[], app("app"));
    assert!(p.is_valid());
    assert!(widget(&p));

    // App-level option.
    let targets = build(vec![cr()]);
    let p = plan_of(
        &targets,
        &[],
        app_with("app", &["SkipDryRunOnMissingResource=true"]),
    );
    assert!(p.is_valid());
    assert!(widget(&p));
}

/// C37 (T, `TestNamespaceAutoCreation`).
#[test]
fn c37_create_namespace_adds_a_presync_namespace_task() {
    let targets = build(vec![obj("Pod", "p")]);
    let input = PlanInput::new(&targets, &[], app_with("app", &["CreateNamespace=true"]));
    let p = plan(&input);
    assert_order(
        &p,
        &[(PreSync, 0, "Namespace", "app"), (Sync, 0, "Pod", "p")],
    );

    let targets = build(vec![obj("Namespace", "app")]);
    let p = plan_of(&targets, &[], app_with("app", &["CreateNamespace=true"]));
    assert_order(&p, &[(Sync, 0, "Namespace", "app")]);

    // Existing namespace without managedNamespaceMetadata: Argo CD adds no task.
    let targets = build(vec![obj("Pod", "p")]);
    let existing = AppSettings {
        namespace_exists: true,
        ..app_with("app", &["CreateNamespace=true"])
    };
    assert_order(&plan_of(&targets, &[], existing), &[(Sync, 0, "Pod", "p")]);

    // Tick: the namespace is created before the dry-run, then waited for; it is gone from the
    // task list once it exists.
    let s1 = step(&input, &SyncState::default(), &World::new());
    assert_eq!(applied(&s1), vec!["app"]);
    assert_eq!(s1.message, "waiting for healthy state of /Namespace/app");
    let s2 = step(&input, &s1, &World::new());
    assert_eq!(applied(&s2), vec!["p"]);
    assert_eq!(s2.phase, OperationPhase::Succeeded);

    // With managedNamespaceMetadata the task stays; the namespace created on tick 1 is not
    // "missing" (Argo CD GETs it), it completes on tick 2 (no health check).
    let managed = AppSettings {
        managed_namespace_metadata: true,
        ..app_with("app", &["CreateNamespace=true"])
    };
    let input = PlanInput::new(&targets, &[], managed);
    let s1 = step(&input, &SyncState::default(), &World::new());
    let ns = s1.results.values().next().expect("namespace result");
    assert_eq!(ns.operation, TaskPhase::Running);
    let no_check = World::new().with_health(key("/Namespace//app"), HealthVerdict::NoCheck);
    let s2 = step(&input, &s1, &no_check);
    assert_eq!(applied(&s2), vec!["p"]);
    assert_eq!(s2.phase, OperationPhase::Succeeded);
}

/// C38 (D, seed failure): a PreSync Job that never completes blocks the sync forever and the
/// Deployment is never applied.
#[test]
fn c38_a_presync_job_that_never_completes_blocks_everything() {
    let targets = build(vec![
        obj("Job", "db-migrate").hook("PreSync"),
        obj("Deployment", "web"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let job = key("batch/Job/app/db-migrate");
    let world = World::new().with_health(
        job.clone(),
        HealthVerdict::Status(HealthStatus::Progressing),
    );
    let mut s = SyncState::default();
    for n in 1..=10 {
        s = step(&input, &s, &world);
        assert_eq!(s.phase, OperationPhase::Running, "tick {n}");
        assert_eq!(
            s.message, "waiting for completion of hook batch/Job/db-migrate",
            "tick {n}"
        );
        assert!(!applied(&s).contains(&"web".to_string()), "tick {n}");
        assert_eq!(s.waiting_on, vec![job.clone()]);
    }
    assert!(s.results.keys().all(|k| !k.contains("Deployment")));
    let r = s.results.values().next().expect("job result");
    assert_eq!(r.operation, TaskPhase::Running);
}

// ---------------------------------------------------------------------------------------------
// Beyond the numbered cases
// ---------------------------------------------------------------------------------------------

#[test]
fn a_running_task_whose_object_vanished_fails_in_ge_mono_and_waits_forever_in_legacy() {
    let targets = build(vec![
        obj("Job", "db-migrate").hook("PreSync"),
        obj("Pod", "p"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let gone = World::new().observe(key("batch/Job/app/db-migrate"), Observation::gone());

    let s1 = step(&input, &SyncState::default(), &World::new());
    let s2 = step(&input, &s1, &gone);
    assert_eq!(s2.phase, OperationPhase::Running);
    let s3 = step(&input, &s2, &gone);
    assert_eq!(s3.phase, OperationPhase::Failed);
    assert_eq!(
        s3.message,
        "one or more synchronization tasks completed unsuccessfully, reason: Resource batch/Job/db-migrate is missing, it might have been deleted"
    );

    let l1 = step(&input, &SyncState::new(old()), &World::new());
    let mut l = l1;
    for _ in 0..5 {
        l = step(&input, &l, &gone);
        assert_eq!(l.phase, OperationPhase::Running);
        assert_eq!(
            l.message,
            "waiting for completion of hook batch/Job/db-migrate"
        );
    }
}

#[test]
fn a_failed_dry_run_ends_the_sync_before_anything_is_applied() {
    let targets = build(vec![obj("Pod", "p"), obj("Service", "s")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let world = World::new().dry_run_error(key("/Service/app/s"), "invalid spec");
    let s = step(&input, &SyncState::default(), &world);
    assert_eq!(s.phase, OperationPhase::Failed);
    assert_eq!(s.message, "one or more objects failed to apply (dry run)");
    assert!(applied(&s).is_empty());
    assert_eq!(s.results.len(), 1);
}

#[test]
fn a_degraded_resource_in_a_non_final_wave_fails_the_sync() {
    let targets = build(vec![obj("Deployment", "d").wave("-1"), obj("Service", "s")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    let bad = World::new().observe(
        key("apps/Deployment/app/d"),
        Observation::health(HealthVerdict::Status(HealthStatus::Degraded))
            .message("ProgressDeadlineExceeded"),
    );
    let s2 = step(&input, &s1, &bad);
    assert_eq!(s2.phase, OperationPhase::Failed);
    assert!(applied(&s2).is_empty());
    let r = s2.results.values().next().expect("result");
    assert_eq!(r.message, "ProgressDeadlineExceeded");
}

#[test]
fn prune_tasks_are_skipped_without_the_prune_flag_but_still_occupy_steps() {
    let live = build(vec![pod("old", "3")]);
    let targets = build(vec![obj("ConfigMap", "c")]);
    let input = PlanInput::new(&targets, &live, app("app"));
    assert_eq!(plan(&input).steps.len(), 2);
    let s1 = step(&input, &SyncState::default(), &World::new());
    let s2 = step(&input, &s1, &World::new());
    assert_eq!(s2.phase, OperationPhase::Succeeded);
    assert!(pruned(&s2).is_empty());
    assert!(s2.actions.iter().any(|a| matches!(
        a,
        Action::PruneSkipped { message, .. } if message == "ignored (requires pruning)"
    )));
}

#[test]
fn prune_confirmation_holds_the_step_until_approved() {
    let live = build(vec![pod("old", "0").sync_options("Prune=confirm")]);
    let settings = AppSettings {
        prune: true,
        ..app("app")
    };
    let input = PlanInput::new(&[], &live, settings);
    let s1 = step(&input, &SyncState::default(), &World::new());
    assert!(pruned(&s1).is_empty());
    assert_eq!(s1.message, "waiting for pruning confirmation of /Pod/old");
    let approved = World {
        prune_confirmed: true,
        ..World::new()
    };
    let s2 = step(&input, &s1, &approved);
    assert_eq!(pruned(&s2), vec!["old"]);
    assert_eq!(s2.phase, OperationPhase::Succeeded);
}

#[test]
fn terminate_deletes_running_hooks_and_fails_the_operation() {
    let targets = build(vec![obj("Job", "db-migrate").hook("PreSync")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let slow = World::new().with_health(
        key("batch/Job/app/db-migrate"),
        HealthVerdict::Status(HealthStatus::Progressing),
    );
    let s1 = step(&input, &SyncState::default(), &slow);
    let t = terminate(&input, &s1, &slow);
    assert_eq!(t.phase, OperationPhase::Failed);
    assert_eq!(t.message, "Operation terminated");
    assert!(t.actions.iter().any(|a| matches!(
        a,
        Action::HookDeleted {
            reason: HookDeleteReason::Terminated,
            ..
        }
    )));
    let r = t.results.values().next().expect("result");
    assert_eq!(
        (r.operation, r.message.as_str()),
        (TaskPhase::Failed, "Terminated")
    );
}

#[test]
fn a_completed_operation_does_not_move() {
    let targets = build(vec![obj("Pod", "p")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    let s2 = step(&input, &s1, &World::new());
    assert_eq!(s2.phase, s1.phase);
    assert_eq!(s2.results, s1.results);
    assert!(s2.actions.is_empty());
    assert_eq!(s2.ticks, s1.ticks);
}

#[test]
fn plans_serialize_to_json() {
    let targets = build(vec![
        obj("Job", "pre").hook("PreSync"),
        obj("Namespace", "app").wave("2"),
        obj("Deployment", "web"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let v = serde_json::to_value(plan(&input)).expect("json");
    assert_eq!(v["steps"][0]["phase"], "PreSync");
    assert_eq!(v["steps"][0]["tasks"][0]["kind"], "Namespace");
    assert_eq!(
        v["steps"][0]["tasks"][0]["bubbled"]["dependant"],
        "batch/Job/app/pre"
    );
    let s = step(&input, &SyncState::default(), &World::new());
    let v = serde_json::to_value(&s).expect("json");
    assert_eq!(v["phase"], "Running");
}

/// Planning 20,000 generated resources (no timing assertion; see the release-mode note in
/// the plan module for the performance target).
#[test]
fn plans_twenty_thousand_resources() {
    let kinds = [
        "ConfigMap",
        "Secret",
        "Service",
        "Deployment",
        "Job",
        "Widget",
        "Namespace",
    ];
    let mut targets = Vec::with_capacity(20_000);
    for i in 0..20_000usize {
        let kind = kinds[i % kinds.len()];
        let name = format!("obj-{i}");
        let mut o = obj(kind, &name).wave(&((i % 13) as i64 - 6).to_string());
        if kind != "Namespace" {
            o = o.ns(&format!("ns-{}", i % 50));
        }
        if i % 97 == 0 {
            o = o.hook(["PreSync", "PostSync", "Sync", "SyncFail"][i % 4]);
        }
        targets.push(o.build());
    }
    let live: Vec<Resource> = (0..2_000usize)
        .map(|i| pod(&format!("old-{i}"), &(i % 7).to_string()).build())
        .collect();
    let mut input = PlanInput::new(&targets, &live, app_with("app", &["CreateNamespace=true"]));
    input.cluster_apis = ClusterApis::assume_all();
    let p = plan(&input);
    assert_eq!(p.tasks().count(), 20_000 + 2_000 + 1);
    let idx: Vec<usize> = p.tasks().map(|t| t.index).collect();
    assert!(idx.windows(2).all(|w| w[0] + 1 == w[1]));
}

/// Spec §5.9 Δ3: an apply failure while hooks of the step still run. GE-mono keeps the
/// operation Running until they finish; legacy GE fails at once.
#[test]
fn an_apply_failure_next_to_a_running_hook_waits_in_ge_mono_and_fails_in_legacy() {
    let targets = build(vec![obj("Pod", "hook").hook("Sync"), obj("Pod", "pod")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let world = World::new()
        .apply_error(key("/Pod/app/pod"), "boom")
        .with_health(
            key("/Pod/app/hook"),
            HealthVerdict::Status(HealthStatus::Progressing),
        );

    let mono = step(&input, &SyncState::new(new()), &world);
    assert_eq!(mono.phase, OperationPhase::Running);
    assert_eq!(mono.message, "waiting for completion of hook /Pod/hook");
    let done = step(&input, &mono, &World::new());
    assert_eq!(done.phase, OperationPhase::Failed);
    assert_eq!(
        done.message,
        "one or more synchronization tasks completed unsuccessfully, reason: boom"
    );

    let legacy = step(&input, &SyncState::new(old()), &world);
    assert_eq!(legacy.phase, OperationPhase::Failed);
    assert_eq!(
        legacy.message,
        "one or more objects failed to apply, reason: boom"
    );
}

/// Spec §5.9 Δ3 with a SyncFail hook: GE-mono starts it and waits for both hooks; legacy GE
/// starts it too but leaves the phase message untouched.
#[test]
fn an_apply_failure_with_a_sync_fail_hook_starts_it_in_both_flavours() {
    let targets = build(vec![
        obj("Pod", "hook").hook("Sync"),
        obj("Pod", "pod"),
        obj("Pod", "on-fail").hook("SyncFail"),
    ]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let world = World::new()
        .apply_error(key("/Pod/app/pod"), "boom")
        .with_health(
            key("/Pod/app/hook"),
            HealthVerdict::Status(HealthStatus::Progressing),
        );
    let mono = step(&input, &SyncState::new(new()), &world);
    assert!(applied(&mono).contains(&"on-fail".to_string()));
    assert_eq!(
        mono.message,
        "waiting for completion of hook /Pod/hook and 1 more hooks"
    );
    let legacy = step(&input, &SyncState::new(old()), &world);
    assert!(applied(&legacy).contains(&"on-fail".to_string()));
    assert_eq!(legacy.phase, OperationPhase::Running);
    assert_eq!(legacy.message, "one or more tasks are running");
}

/// Spec §5.9 Δ4: a failing SyncWaveHook is an Error (GE-mono, running hooks of the step are
/// terminated) or a plain failure (legacy GE).
#[test]
fn a_sync_wave_hook_error_is_an_error_in_ge_mono_and_a_failure_in_legacy() {
    let targets = build(vec![obj("Job", "migrate").hook("PreSync"), obj("Pod", "p")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let world = World {
        sync_wave_hook_error: Some("context canceled".into()),
        ..World::new()
    }
    .with_health(
        key("batch/Job/app/migrate"),
        HealthVerdict::Status(HealthStatus::Progressing),
    );
    let mono = step(&input, &SyncState::new(new()), &world);
    assert_eq!(mono.phase, OperationPhase::Error);
    assert_eq!(mono.message, "SyncWaveHook failed: context canceled");
    assert!(mono.actions.iter().any(|a| matches!(
        a,
        Action::HookDeleted {
            reason: HookDeleteReason::Terminated,
            ..
        }
    )));
    let legacy = step(&input, &SyncState::new(old()), &world);
    assert_eq!(legacy.phase, OperationPhase::Failed);
    assert_eq!(legacy.message, "SyncWaveHook failed: context canceled");
}

/// Spec §5.8, argo-cd#5859: with ApplyOutOfSyncOnly an unchanged StatefulSet in wave 1 is never
/// applied, so it gates nothing.
#[test]
fn apply_out_of_sync_only_skips_unchanged_resources_and_their_health_gate() {
    let targets = build(vec![
        obj("StatefulSet", "db").wave("1"),
        obj("Deployment", "web").wave("2"),
    ]);
    let live = build(vec![obj("StatefulSet", "db").wave("1").ns("app")]);
    let world = World {
        in_sync: [key("apps/StatefulSet/app/db")].into_iter().collect(),
        default_health: HealthVerdict::Status(HealthStatus::Progressing),
        ..World::new()
    };
    let only = PlanInput::new(
        &targets,
        &live,
        app_with("app", &["ApplyOutOfSyncOnly=true"]),
    );
    let s = step(&only, &SyncState::default(), &world);
    assert_eq!(applied(&s), vec!["web"]);
    assert_eq!(s.phase, OperationPhase::Succeeded);

    let all = PlanInput::new(&targets, &live, app("app"));
    let s = step(&all, &SyncState::default(), &world);
    assert_eq!(applied(&s), vec!["db"]);
    assert_eq!(
        s.message,
        "waiting for healthy state of apps/StatefulSet/db"
    );
}

/// Spec §5.2: a hook whose object is being deleted without the hook finalizer reads as
/// `Progressing "Pending deletion"` whatever its own health says (hazard §10-5).
#[test]
fn a_terminating_hook_without_finalizer_is_pending_deletion() {
    let targets = build(vec![obj("Job", "admission-create").hook("PreSync")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    let terminating = World::new().observe(
        key("batch/Job/app/admission-create"),
        Observation {
            hook_finalizer: Some(false),
            ..Observation::deleting()
        },
    );
    let s2 = step(&input, &s1, &terminating);
    assert_eq!(s2.phase, OperationPhase::Running);
    let r = s2.results.values().next().expect("result");
    assert_eq!(
        (r.operation, r.message.as_str()),
        (TaskPhase::Running, "Pending deletion")
    );
}

/// Spec §2.7/§6.1: a named hook in two phases is one object: the PostSync run deletes the
/// PreSync object first (BeforeHookCreation) and re-creates it on the next tick.
#[test]
fn a_named_hook_in_two_phases_is_recreated_for_the_second_phase() {
    let targets = build(vec![obj("Pod", "check").hook("PreSync,PostSync")]);
    let input = PlanInput::new(&targets, &[], app("app"));
    let s1 = step(&input, &SyncState::default(), &World::new());
    assert_eq!(applied(&s1), vec!["check"]);
    let s2 = step(&input, &s1, &World::new());
    assert_eq!(
        count(&s2, |a| matches!(
            a,
            Action::HookDeleted {
                reason: HookDeleteReason::BeforeHookCreation,
                ..
            }
        )),
        1
    );
    assert!(applied(&s2).is_empty());
    let s3 = step(&input, &s2, &World::new());
    assert_eq!(applied(&s3), vec!["check"]);
    let s4 = step(&input, &s3, &World::new());
    assert_eq!(s4.phase, OperationPhase::Succeeded);
    assert_eq!(s4.results.len(), 2);
}
