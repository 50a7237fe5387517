//! The policy input document, as promised to rule authors in `policies/README.md`.

use std::path::Path;

use serde_json::Value;
use syncguard::evaluate::{EvaluateOptions, build_inputs, evaluate};
use syncguard::finding::Status;
use syncguard::manifest::{load_paths, load_str};
use syncguard::policy::PolicySet;

fn seed_incident() -> Vec<syncguard::model::Resource> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/seed-incident");
    let loaded = load_paths(&[dir]);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    loaded.resources
}

fn input_of<'a>(inputs: &'a [Value], kind: &str, name: &str) -> &'a Value {
    inputs
        .iter()
        .find(|i| i["resource"]["kind"] == kind && i["resource"]["metadata"]["name"] == name)
        .unwrap_or_else(|| panic!("no input for {kind}/{name}"))
}

#[test]
fn the_seed_hook_sees_its_secret_produced_by_an_external_secret_in_a_later_step() {
    let resources = seed_incident();
    let (inputs, apps) = build_inputs(&resources, &EvaluateOptions::default());
    assert_eq!(inputs.len(), resources.len());
    assert!(apps.iter().all(Option::is_none));

    let job = input_of(&inputs, "Job", "db-migrate");
    assert_eq!(job["operation"], "CHECK");
    assert_eq!(job["context"]["source"], "check");
    assert_eq!(job["sync"]["phases"], serde_json::json!(["PreSync"]));
    assert_eq!(job["sync"]["is_hook"], true);
    assert_eq!(job["plan"]["tasks"][0]["step"], 0);
    assert_eq!(job["plan"]["tasks"][0]["phase"], "PreSync");
    assert_eq!(job["plan"]["tasks"][0]["gated"], true);
    assert_eq!(job["plan"]["steps"], 3);

    let secret_ref = job["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Secret")
        .unwrap();
    assert_eq!(secret_ref["name"], "db-credentials");
    assert_eq!(secret_ref["role"], "env_from");
    assert_eq!(
        secret_ref["via"],
        "/spec/template/spec/containers/0/envFrom/0/secretRef/name"
    );
    let target = &secret_ref["target"];
    assert_eq!(target["resolution"], "produced_by");
    assert_eq!(target["kind"], "ExternalSecret");
    assert_eq!(target["async_producer"], true);
    assert_eq!(target["phases"], serde_json::json!(["Sync"]));
    assert_eq!(target["wave"], 2);
    assert_eq!(target["tasks"][0]["step"], 1);
    assert_eq!(target["health_check"], "bundled-lua");
}

#[test]
fn dependents_list_who_references_an_object() {
    let resources = seed_incident();
    let (inputs, _) = build_inputs(&resources, &EvaluateOptions::default());
    let es = input_of(&inputs, "ExternalSecret", "db-credentials");
    let deps: Vec<(&str, &str, bool)> = es["dependents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["kind"].as_str().unwrap(),
                d["role"].as_str().unwrap(),
                d["is_hook"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(deps.contains(&("Job", "env_from", true)), "{deps:?}");
    assert!(
        deps.contains(&("Deployment", "env_from", false)),
        "{deps:?}"
    );
}

#[test]
fn hpa_targets_and_the_owning_application_are_in_the_input() {
    let yaml = "\
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop}
spec:
  destination: {namespace: shop}
  ignoreDifferences:
    - {group: apps, kind: Deployment, jsonPointers: [/spec/replicas]}
  syncPolicy: {automated: {selfHeal: true}}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  annotations: {argocd.argoproj.io/tracking-id: shop:apps/Deployment:shop/web}
spec:
  replicas: 3
  template: {spec: {containers: [{name: web, image: web:1}]}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
  annotations: {argocd.argoproj.io/tracking-id: shop:autoscaling/HorizontalPodAutoscaler:shop/web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
";
    let loaded = load_str("app.yaml", yaml);
    assert!(loaded.errors.is_empty());
    let (inputs, apps) = build_inputs(&loaded.resources, &EvaluateOptions::default());
    assert_eq!(apps[1].as_deref(), Some("shop"));
    let deploy = input_of(&inputs, "Deployment", "web");
    assert_eq!(deploy["app"]["name"], "shop");
    assert_eq!(deploy["app"]["destination_namespace"], "shop");
    assert_eq!(deploy["app"]["self_heal"], true);
    assert_eq!(
        deploy["app"]["ignore_differences"][0]["jsonPointers"][0],
        "/spec/replicas"
    );
    assert_eq!(deploy["dependents"][0]["kind"], "HorizontalPodAutoscaler");
    assert_eq!(deploy["dependents"][0]["role"], "scale_target");
    let hpa = input_of(&inputs, "HorizontalPodAutoscaler", "web");
    let target = &hpa["refs"][0]["target"];
    assert_eq!(target["resolution"], "in_set");
    assert_eq!(target["replicas_set"], true);
    // The Application object itself is not tracked by any app: no `app` for it.
    let app_obj = input_of(&inputs, "Application", "shop");
    assert!(app_obj.get("app").is_none());
}

#[test]
fn the_seed_incident_gets_the_hook_findings_from_the_shipped_policies() {
    let policies =
        PolicySet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("policies")).unwrap();
    let resources = seed_incident();
    let report = evaluate(&resources, &policies, &EvaluateOptions::default(), vec![]);
    let open: Vec<&str> = report
        .findings
        .iter()
        .filter(|f| matches!(f.status, Status::Open))
        .map(|f| f.rule_id.as_str())
        .collect();
    for rule in ["SG101", "SG102", "SG103"] {
        assert!(open.contains(&rule), "{rule} missing from {open:?}");
    }
    let sg101 = report
        .findings
        .iter()
        .find(|f| f.rule_id.as_str() == "SG101")
        .unwrap();
    let loc = sg101.location.as_ref().unwrap();
    assert!(loc.file.ends_with("migration-job.yaml"), "{loc}");
    assert!(sg101.patch.is_some());
}

#[test]
fn an_admitted_object_without_app_context_has_unknown_targets_and_no_plan() {
    use syncguard::evaluate::{AdmissionFacts, build_admission_input};
    let resources = seed_incident();
    let job = resources.iter().find(|r| r.kind == "Job").unwrap();
    let facts = AdmissionFacts {
        operation: "CREATE".into(),
        dry_run: true,
        ..AdmissionFacts::default()
    };
    let doc = build_admission_input(job, &[], &facts, &EvaluateOptions::default());
    assert_eq!(doc["operation"], "CREATE");
    assert_eq!(doc["context"]["source"], "admission");
    assert_eq!(doc["context"]["dry_run"], true);
    assert!(doc.get("plan").is_none());
    let secret = doc["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Secret")
        .unwrap();
    assert_eq!(
        secret["target"],
        serde_json::json!({"resolution": "unknown"})
    );

    // With the rest of its Application as context, the Job sees where its Secret comes from.
    let with_context = build_admission_input(job, &resources, &facts, &EvaluateOptions::default());
    assert_eq!(with_context["plan"]["tasks"][0]["phase"], "PreSync");
    let secret = with_context["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["kind"] == "Secret")
        .unwrap();
    assert_eq!(secret["target"]["resolution"], "produced_by");
    assert_eq!(with_context["operation"], "CREATE");
}

/// An app-of-apps `root` holding `crds` (a CRD) and `web` (a custom resource of it), with the
/// two Application objects at the given sync-waves (`None`: no parent in the input), and an
/// argocd-cm that gives Applications a health check (so the parent's waves wait for them).
fn two_applications(waves: Option<(i64, i64)>) -> Vec<syncguard::model::Resource> {
    let mut r = two_applications_without_health(waves);
    let cm = load_str(
        "argocd-cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata:\n  resource.customizations.health.argoproj.io_Application: |\n    hs = {status = \"Healthy\"}\n    return hs\n",
    );
    r.extend(cm.resources);
    r
}

/// [`two_applications`] without argocd-cm: Argo CD then has no health check for Applications.
fn two_applications_without_health(waves: Option<(i64, i64)>) -> Vec<syncguard::model::Resource> {
    let app = |name: &str, wave: i64| match waves {
        Some(_) => format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\n    argocd.argoproj.io/tracking-id: root:argoproj.io/Application:argocd/{name}\nspec:\n  project: default\n  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}\n  source: {{repoURL: https://git.example.com/r.git, path: {name}}}\n"
        ),
        None => format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}\n  source: {{repoURL: https://git.example.com/r.git, path: {name}}}\n"
        ),
    };
    let (crds_wave, web_wave) = waves.unwrap_or((0, 0));
    let yaml = [
        app("crds", crds_wave),
        app("web", web_wave),
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: certificates.cert-manager.io\n  annotations: {argocd.argoproj.io/tracking-id: \"crds:apiextensions.k8s.io/CustomResourceDefinition:/certificates.cert-manager.io\"}\nspec:\n  group: cert-manager.io\n  names: {kind: Certificate, plural: certificates}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n".to_string(),
        "apiVersion: cert-manager.io/v1\nkind: Certificate\nmetadata:\n  name: web-tls\n  namespace: web\n  annotations: {argocd.argoproj.io/tracking-id: \"web:cert-manager.io/Certificate:web/web-tls\"}\nspec: {secretName: web-tls}\n".to_string(),
    ]
    .join("---\n");
    let loaded = load_str("repo.yaml", &yaml);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    loaded.resources
}

#[test]
fn a_crd_another_application_installs_is_found_and_judged_by_the_order_of_the_two() {
    let resources = two_applications(Some((-1, 0)));
    let (inputs, apps) = build_inputs(&resources, &EvaluateOptions::default());
    let cert = input_of(&inputs, "Certificate", "web-tls");
    let crd_ref = cert["refs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["role"] == "definition")
        .unwrap();
    assert_eq!(
        crd_ref["target"],
        serde_json::json!({"resolution": "other_app", "app": "crds", "order": "before"})
    );
    let i = resources
        .iter()
        .position(|r| r.kind == "Certificate")
        .unwrap();
    assert_eq!(apps[i].as_deref(), Some("web"));

    let policies =
        PolicySet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("policies")).unwrap();
    let sg203 = |resources: &[syncguard::model::Resource]| {
        evaluate(resources, &policies, &EvaluateOptions::default(), vec![])
            .findings
            .into_iter()
            .filter(|f| f.rule_id.as_str() == "SG203")
            .map(|f| (format!("{:?}", f.severity), f.message))
            .collect::<Vec<_>>()
    };
    // Installed by an earlier wave of the same parent: nothing to say.
    assert_eq!(sg203(&resources), vec![]);
    // A later wave: the first sync on a new cluster fails.
    let later = sg203(&two_applications(Some((1, 0))));
    assert_eq!(later.len(), 1, "{later:?}");
    assert!(later[0].0.contains("Medium"), "{later:?}");
    assert!(
        later[0].1.contains("Application crds installs it"),
        "{later:?}"
    );
    // No parent in the input: no order known, a note at most.
    let unordered = sg203(&two_applications(None));
    assert_eq!(unordered.len(), 1, "{unordered:?}");
    assert!(unordered[0].0.contains("Info"), "{unordered:?}");
    // An earlier wave, but no health check for Applications: the parent does not wait.
    let unwaited = sg203(&two_applications_without_health(Some((-1, 0))));
    assert_eq!(unwaited.len(), 1, "{unwaited:?}");
    assert!(unwaited[0].0.contains("Low"), "{unwaited:?}");
    assert!(unwaited[0].1.contains("no health check"), "{unwaited:?}");
}

/// An app-of-apps `root` holding `secrets` (a Secret) and `web` (a PreSync Job that reads it),
/// the Application objects at the given waves, with or without the Application health check.
fn hook_and_secret(waves: (i64, i64), health: bool) -> Vec<syncguard::model::Resource> {
    let app = |name: &str, wave: i64| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\n  annotations:\n    argocd.argoproj.io/sync-wave: \"{wave}\"\n    argocd.argoproj.io/tracking-id: root:argoproj.io/Application:argocd/{name}\nspec:\n  project: default\n  destination: {{server: https://kubernetes.default.svc, namespace: shop}}\n  source: {{repoURL: https://git.example.com/r.git, path: {name}}}\n"
        )
    };
    let mut docs = vec![
        app("secrets", waves.0),
        app("web", waves.1),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\n  namespace: shop\n  annotations: {argocd.argoproj.io/tracking-id: \"secrets:/Secret:shop/db\"}\nstringData: {p: x}\n".to_string(),
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: migrate\n  namespace: shop\n  annotations:\n    argocd.argoproj.io/hook: PreSync\n    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation\n    argocd.argoproj.io/tracking-id: \"web:batch/Job:shop/migrate\"\nspec:\n  backoffLimit: 1\n  activeDeadlineSeconds: 300\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: m, image: 'busybox:1.36', envFrom: [{secretRef: {name: db}}]}]\n".to_string(),
    ];
    if health {
        docs.push("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata:\n  resource.customizations.health.argoproj.io_Application: |\n    hs = {status = \"Healthy\"}\n    return hs\n".to_string());
    }
    let loaded = load_str("repo.yaml", &docs.join("---\n"));
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    loaded.resources
}

#[test]
fn a_secret_another_application_renders_is_judged_by_the_order_of_the_two() {
    let policies =
        PolicySet::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("policies")).unwrap();
    let sg201 = |resources: &[syncguard::model::Resource]| {
        evaluate(resources, &policies, &EvaluateOptions::default(), vec![])
            .findings
            .into_iter()
            .filter(|f| f.rule_id.as_str() == "SG201")
            .map(|f| (format!("{:?} {:?}", f.severity, f.action), f.message))
            .collect::<Vec<_>>()
    };
    // Its Application syncs in an earlier wave the parent waits for: the Secret is there.
    assert_eq!(sg201(&hook_and_secret((-1, 0), true)), vec![]);
    // In a later wave the parent starts only when this Application is Healthy: a deadlock on
    // a new cluster, told as a warning naming the other Application.
    let later = sg201(&hook_and_secret((1, 0), true));
    assert_eq!(later.len(), 1, "{later:?}");
    assert!(later[0].0.starts_with("High Warn"), "{later:?}");
    assert!(
        later[0].1.contains("Application secrets renders it"),
        "{later:?}"
    );
    // Without the health check both waves go at once: the hook only waits a little. Info is
    // recorded, never warned about (docs/severity.md).
    let unwaited = sg201(&hook_and_secret((1, 0), false));
    assert_eq!(unwaited.len(), 1, "{unwaited:?}");
    assert_eq!(unwaited[0].0, "Info Audit", "{unwaited:?}");
}

/// A missing Secret many hooks need: each hook's input names at most the one hook that needs
/// it first (`needed_first_by`), never all of them — a list per document made `check` over
/// 10,000 generated objects ten times slower before it was bounded. A Secret the chart's RBAC
/// lets an earlier hook write is in `written_by`.
#[test]
fn a_missing_secret_names_the_hook_that_needs_it_first_and_who_may_write_it() {
    let mut yaml = String::new();
    for (i, phase) in ["PreSync", "PostSync", "PostSync", "PostSync"]
        .iter()
        .enumerate()
    {
        yaml.push_str(&format!(
            "---\napiVersion: batch/v1\nkind: Job\nmetadata: {{name: use-{i}, namespace: db, annotations: {{argocd.argoproj.io/hook: {phase}}}}}\n\
             spec: {{template: {{spec: {{restartPolicy: Never, containers: [{{name: c, image: i, envFrom: [{{secretRef: {{name: creds}}}}]}}]}}}}}}\n"
        ));
    }
    yaml.push_str(
        "---\napiVersion: batch/v1\nkind: Job\nmetadata: {name: gen, namespace: db, annotations: {argocd.argoproj.io/hook: PreSync, argocd.argoproj.io/sync-wave: '-1'}}\n\
         spec: {template: {spec: {restartPolicy: Never, serviceAccountName: gen, containers: [{name: c, image: i}]}}}\n\
         ---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: gen, namespace: db}\n\
         rules: [{apiGroups: [''], resources: [secrets], verbs: [create]}]\n\
         ---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {name: gen, namespace: db}\n\
         roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: gen}\n\
         subjects: [{kind: ServiceAccount, name: gen, namespace: db}]\n",
    );
    let loaded = load_str("hooks.yaml", &yaml);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let (inputs, _) = build_inputs(&loaded.resources, &EvaluateOptions::default());
    let target = |name: &str| {
        let input = input_of(&inputs, "Job", name);
        input["refs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["kind"] == "Secret")
            .unwrap()["target"]
            .clone()
    };
    let first = target("use-0");
    assert_eq!(first["resolution"], "missing");
    assert_eq!(first["needed_first_by"], serde_json::json!([]), "{first:#}");
    for later in ["use-1", "use-2", "use-3"] {
        let t = target(later);
        let needers = t["needed_first_by"].as_array().unwrap();
        assert_eq!(needers.len(), 1, "{t:#}");
        assert_eq!(needers[0]["name"], "use-0", "{t:#}");
    }
    let writers: Vec<&str> = first["written_by"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w["name"].as_str())
        .collect();
    assert_eq!(writers, ["gen"], "{first:#}");
}
