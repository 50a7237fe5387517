//! ApplicationSets turned into the Applications Argo CD 3.6.1's ApplicationSet controller would
//! create (`applicationset/controllers/template`): each generator's parameter sets (`list`,
//! `git` directories and files read from the local checkout, `clusters` over the cluster Secrets
//! given, `matrix` and `merge` of those), the generator's own `template`
//! laid under the ApplicationSet's, every string rendered with each set, the Application in the
//! ApplicationSet's namespace with Argo CD's resources finalizer unless
//! `preserveResourcesOnDeletion`, and the `templatePatch` laid over it. Generators that need the
//! cluster or an SCM provider are reported as such. The ApplicationSet is read once, through
//! the shared vocabulary (`syncguard_argocd::config::appset`); what is wrong with the
//! ApplicationSet itself (a generator naming no kind, a template that does not parse) is marked
//! [`JUDGED`]: a finding of SG610, not an input error.

mod clusters;
mod generators;
mod nesting;
mod selector;
mod template;

use serde_json::{Map, Value, json};
use syncguard_argocd::config::appset::{ApplicationSet, valid_go_template_option};

use crate::model::Resource;
pub use clusters::{Known, clusters_of};
pub use generators::OUTSIDE;
use template::{Engine, RenderError, render, render_value};

/// The finalizer Argo CD's ApplicationSet controller puts on the Applications it creates.
const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

/// How a problem of the ApplicationSet itself says so: `syncguard check` reports it as a
/// finding of SG610 on the ApplicationSet (policies/applicationset_template.rego), not as an
/// input error, and the rest of the input is still judged.
pub const JUDGED: &str = "(SG610)";

/// Whether `r` is an ApplicationSet.
pub fn is_application_set(r: &Resource) -> bool {
    r.group == "argoproj.io" && r.kind == "ApplicationSet"
}

/// The Applications `r` generates, and one line per generator that could not be evaluated.
pub fn generate(
    r: &Resource,
    known: &Known<'_>,
    control_plane_namespace: &str,
) -> (Vec<Resource>, Vec<String>) {
    let set = ApplicationSet::from_value(&r.raw);
    let engine = set.engine();
    let mut errors = Vec::new();
    if let Engine::Go { .. } = engine
        && let Some(bad) = set
            .go_template_options
            .iter()
            .find(|o| !valid_go_template_option(o))
    {
        errors.push(format!(
            "goTemplateOptions: {bad:?} is not an option of Go templates: Argo CD's controller \
             panics (\"unrecognized option: {bad}\") and generates nothing {JUDGED}"
        ));
        return (Vec::new(), errors);
    }
    let base = &set.template.raw;
    let preserve = set.sync_policy.preserve_resources_on_deletion;
    let namespace = set
        .namespace
        .clone()
        .unwrap_or_else(|| control_plane_namespace.to_string());
    let mut apps = Vec::new();
    for (n, generator) in set.generators.iter().enumerate() {
        if generator.blocks.is_empty() {
            errors.push(format!("generator {}: {}", n + 1, generators::no_kind()));
            continue;
        }
        // Each kind a generator names is evaluated on its own, with its own template.
        for block in &generator.blocks {
            let sets = match generators::block_params(block, engine, known, 0)
                .and_then(|sets| generators::selected(generator, sets))
            {
                Ok(sets) => sets,
                Err(e) => {
                    errors.push(format!("generator {}: {e}", n + 1));
                    continue;
                }
            };
            let mut tmpl = block
                .template
                .as_ref()
                .map_or(Value::Null, |t| t.raw.clone());
            merge_under(&mut tmpl, base);
            for params in sets {
                let app = render_value(&tmpl, &params, engine)
                    .map_err(judged)
                    .and_then(|rendered| {
                        application(&rendered, &namespace, preserve)
                            .ok_or_else(|| "the template renders no Application name".to_string())
                    })
                    .and_then(|app| patched(app, &set, &params, engine, &namespace));
                match app {
                    Ok(raw) => match Resource::from_value(raw, r.origin.clone()) {
                        Ok(app) => apps.push(app),
                        Err(e) => errors.push(format!("generator {}: {e}", n + 1)),
                    },
                    Err(e) => errors.push(format!("generator {}: {e}", n + 1)),
                }
            }
        }
    }
    let apps = without_duplicate_names(apps, &r.name, &mut errors);
    (apps, errors)
}

/// A render error as a problem line: a template that does not parse is the ApplicationSet's
/// own problem, reported by SG610.
fn judged(e: RenderError) -> String {
    match e {
        RenderError::Invalid(m) => format!("{m} {JUDGED}"),
        other => other.to_string(),
    }
}

/// `app` with the ApplicationSet's `templatePatch` applied, as Argo CD 3.6.1 does it
/// (`applicationset/controllers/template/patch.go`): the patch is rendered with the parameter
/// set like any template, read as YAML (or JSON), and laid over the generated Application as a
/// strategic-merge patch (maps merged, lists replaced, `null` removes, `metadata.finalizers`
/// merged); the patch cannot change the project, and the Application stays in the
/// ApplicationSet's namespace. A patch that renders empty changes nothing.
fn patched(
    mut app: Value,
    set: &ApplicationSet,
    params: &Value,
    engine: Engine,
    namespace: &str,
) -> Result<Value, String> {
    let Some(patch) = &set.template_patch else {
        return Ok(app);
    };
    let text = render(patch, params, engine)
        .map_err(|e| format!("error replacing values in templatePatch: {}", judged(e)))?;
    let patch = crate::manifest::parse_yaml_value(&text)
        .map_err(|e| format!("error while converting templatePatch to json {text:?}: {e}"))?;
    match &patch {
        Value::Null => return Ok(app),
        Value::Object(_) => {}
        _ => {
            return Err(format!(
                "invalid templatePatch {text:?}: not a mapping of Application fields"
            ));
        }
    }
    let project = app.pointer("/spec/project").cloned();
    strategic_merge(&mut app, &patch, 0, false);
    if let Some(spec) = app.get_mut("spec").and_then(Value::as_object_mut) {
        match project {
            Some(p) => {
                spec.insert("project".into(), p);
            }
            None => {
                spec.remove("project");
            }
        }
    }
    if let Some(meta) = app.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("namespace".into(), Value::String(namespace.into()));
    }
    Ok(app)
}

/// `patch` laid over `target` as Kubernetes' strategic merge patch does for an Application,
/// whose only merged list is `metadata.finalizers` (`depth` and `in_metadata` track where).
fn strategic_merge(target: &mut Value, patch: &Value, depth: usize, in_metadata: bool) {
    let (Value::Object(t), Value::Object(p)) = (&mut *target, patch) else {
        *target = without_nulls(patch);
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replaced = p.clone();
        replaced.remove("$patch");
        *target = without_nulls(&Value::Object(replaced));
        return;
    }
    for (k, v) in p {
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() || v.get("$patch").and_then(Value::as_str) == Some("delete") {
            t.remove(k);
            continue;
        }
        match (t.get_mut(k), v) {
            (Some(tv @ Value::Object(_)), Value::Object(_)) => {
                strategic_merge(tv, v, depth + 1, depth == 0 && k == "metadata");
            }
            (Some(Value::Array(items)), Value::Array(more)) if in_metadata && k == "finalizers" => {
                for m in more {
                    if !items.contains(m) {
                        items.push(m.clone());
                    }
                }
            }
            _ => {
                t.insert(k.clone(), without_nulls(v));
            }
        }
    }
}

/// `v` without the keys whose value is `null` (absent once decoded into Argo CD's types).
fn without_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, x)| !x.is_null() && !k.starts_with('$'))
                .map(|(k, x)| (k.clone(), without_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
        other => other.clone(),
    }
}

/// The generated Applications whose names are unique: Argo CD 3.6.1
/// (`validateGeneratedApplications`) creates none of the Applications that share a name and
/// reports the ApplicationSet's error, one line per name here.
fn without_duplicate_names(
    apps: Vec<Resource>,
    set: &str,
    errors: &mut Vec<String>,
) -> Vec<Resource> {
    let mut count = std::collections::HashMap::<String, usize>::new();
    for a in &apps {
        *count.entry(a.name.clone()).or_default() += 1;
    }
    let mut reported = std::collections::HashSet::new();
    apps.into_iter()
        .filter(|a| {
            let n = count[&a.name];
            if n > 1 && reported.insert(a.name.clone()) {
                errors.push(format!(
                    "ApplicationSet {set} contains applications with duplicate name: {} ({n} \
                     generated; Argo CD creates none of them)",
                    a.name
                ));
            }
            n == 1
        })
        .collect()
}

/// `base`'s fields fill what `over` leaves empty (mergo.Merge without override: the generator's
/// template wins where it says something).
fn merge_under(over: &mut Value, base: &Value) {
    match (over, base) {
        (Value::Object(o), Value::Object(b)) => {
            for (k, bv) in b {
                match o.get_mut(k) {
                    Some(ov) if !is_empty(ov) => merge_under(ov, bv),
                    _ => {
                        o.insert(k.clone(), bv.clone());
                    }
                }
            }
        }
        (o, b) if is_empty(o) => *o = b.clone(),
        _ => {}
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(m) => m.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
    }
}

/// The Application of a rendered template (`None` when it has no name).
fn application(tmpl: &Value, namespace: &str, preserve: bool) -> Option<Value> {
    let meta = tmpl.get("metadata").cloned().unwrap_or(Value::Null);
    let name = meta
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())?;
    let mut metadata = Map::new();
    metadata.insert("name".into(), Value::String(name.into()));
    metadata.insert("namespace".into(), Value::String(namespace.into()));
    for key in ["labels", "annotations"] {
        if let Some(v) = meta.get(key).filter(|v| !is_empty(v)) {
            metadata.insert(key.into(), v.clone());
        }
    }
    let finalizers = meta
        .get("finalizers")
        .filter(|v| !is_empty(v))
        .cloned()
        .or_else(|| (!preserve).then(|| json!([RESOURCES_FINALIZER])));
    if let Some(f) = finalizers {
        metadata.insert("finalizers".into(), f);
    }
    Some(json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": Value::Object(metadata),
        "spec": tmpl.get("spec").cloned().unwrap_or(json!({})),
    }))
}

/// Argo CD's `SanitizeName`: lower case, anything but `a-z0-9.-` becomes `-`, at most 253
/// characters, `-` and `.` trimmed from both ends.
pub(crate) use syncguard_argocd::config::appset::gotemplate::sanitize_name;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;
    use crate::render::Repos;

    fn write(root: &std::path::Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    fn git(dir: &std::path::Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .current_dir(dir)
            .args(args)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }

    fn names(apps: &[Resource]) -> Vec<String> {
        apps.iter().map(|a| a.name.clone()).collect()
    }

    #[test]
    fn names_are_sanitized_as_argo_cd_does() {
        assert_eq!(sanitize_name("My_App.v2-"), "my-app.v2");
        assert_eq!(sanitize_name("--x--"), "x");
    }

    #[test]
    fn list_and_git_generators_give_argo_cds_applications() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        git(root, &["init", "-q", "-b", "main"]);
        write(root, "apps/web/kustomization.yaml", "resources: []\n");
        write(root, "apps/api/kustomization.yaml", "resources: []\n");
        write(root, "apps/.hidden/x.yaml", "a: 1\n");
        write(root, "apps/legacy/x.yaml", "a: 1\n");
        write(
            root,
            "clusters/prod/config.json",
            r#"{"cluster": {"name": "prod", "replicas": 3}}"#,
        );
        write(
            root,
            "clusters/dev/sub/config.json",
            r#"{"cluster": {"name": "dev", "replicas": 1}}"#,
        );
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "x"]);
        let mut repos = Repos::default();
        repos.add("https://example.com/gitops.git", root.to_path_buf(), "");
        let set = load_str(
            "appset.yaml",
            r#"apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: all, namespace: argocd}
spec:
  generators:
  - list:
      elements:
      - {name: one, ns: first, values: {tier: gold}}
  - git:
      repoURL: https://example.com/gitops.git
      revision: HEAD
      directories: [{path: 'apps/*'}, {path: apps/legacy, exclude: true}]
  - git:
      repoURL: https://example.com/gitops.git
      revision: HEAD
      files: [{path: 'clusters/*/config.json'}]
      template:
        metadata: {name: 'cluster-{{cluster.name}}'}
  - clusters: {values: {region: eu}}
  - clusters: {selector: {matchLabels: {env: prod}}}
  - scmProvider: {}
  template:
    metadata: {name: '{{path.basename}}{{name}}', labels: {tier: '{{values.tier}}'}}
    spec:
      project: default
      destination: {namespace: '{{ns}}{{path.basename}}{{cluster.replicas}}'}
      source: {repoURL: https://example.com/gitops.git, path: '{{path}}'}
"#,
        );
        let (apps, errors) = generate(&set.resources[0], &Known::repos(&repos), "argocd");
        assert_eq!(
            names(&apps),
            // list; directories apps/api, apps/web (hidden and excluded ones left out); files
            // in sorted order — `*` crosses `/` in git's pathspec, so dev/sub matches too; the
            // clusters generator given no cluster Secret: the local cluster, and nothing once a
            // selector is set.
            [
                "{{path.basename}}one",
                "api{{name}}",
                "web{{name}}",
                "cluster-dev",
                "cluster-prod",
                "{{path.basename}}in-cluster"
            ]
        );
        assert_eq!(
            apps[5].raw["spec"]["destination"]["namespace"],
            "{{ns}}{{path.basename}}{{cluster.replicas}}"
        );
        assert_eq!(apps[0].raw["metadata"]["labels"]["tier"], "gold");
        assert_eq!(
            apps[0].raw["metadata"]["finalizers"][0],
            RESOURCES_FINALIZER
        );
        assert_eq!(apps[1].raw["spec"]["source"]["path"], "apps/api");
        assert_eq!(apps[3].raw["spec"]["source"]["path"], "clusters/dev/sub");
        assert_eq!(
            apps[3].raw["spec"]["destination"]["namespace"],
            "{{ns}}sub1"
        );
        assert_eq!(apps[4].namespace.as_deref(), Some("argocd"));
        // The clusters generator with a selector and the SCM generator say why they gave
        // nothing, as data syncguard does not read (skipped, not errors, in a render).
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors[0].starts_with("generator 5: a clusters generator with a selector")
                && errors[0].contains(OUTSIDE),
            "{errors:?}"
        );
        assert!(
            errors[1].starts_with("generator 6: the scmProvider generator")
                && errors[1].contains(OUTSIDE),
            "{errors:?}"
        );
    }

    #[test]
    fn go_template_sets_are_objects() {
        let repos = Repos::default();
        let set = load_str(
            "appset.yaml",
            r#"apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: go, namespace: team}
spec:
  goTemplate: true
  goTemplateOptions: [missingkey=error]
  syncPolicy: {preserveResourcesOnDeletion: true}
  generators:
  - list:
      elements:
      - {app: {name: Web}, replicas: 2}
  template:
    metadata: {name: '{{ .app.name | lower }}'}
    spec:
      source: {repoURL: r, path: 'apps/{{ .app.name | lower }}'}
"#,
        );
        let (apps, errors) = generate(&set.resources[0], &Known::repos(&repos), "argocd");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(names(&apps), ["web"]);
        assert_eq!(apps[0].namespace.as_deref(), Some("team"));
        assert!(apps[0].raw["metadata"].get("finalizers").is_none());
        // A git generator of a repository that is not local says so.
        let set = load_str(
            "appset.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: g}\n\
             spec:\n  generators: [{git: {repoURL: 'https://elsewhere/x.git', directories: [{path: '*'}]}}]\n  \
             template: {metadata: {name: x}, spec: {}}\n",
        );
        let (apps, errors) = generate(&set.resources[0], &Known::repos(&repos), "argocd");
        assert!(apps.is_empty());
        assert!(errors[0].contains("not a local repository"), "{errors:?}");
    }

    #[test]
    fn a_matrix_of_git_directories_and_files_gives_one_application_per_pair() {
        let repo = tempfile::tempdir().unwrap();
        let root = repo.path();
        git(root, &["init", "-q", "-b", "main"]);
        write(root, "apps/web/kustomization.yaml", "resources: []\n");
        write(root, "apps/api/kustomization.yaml", "resources: []\n");
        write(
            root,
            "apps/web/envs.yaml",
            "- {env: prod, replicas: 3}\n- {env: dev, replicas: 1}\n",
        );
        write(root, "apps/api/envs.yaml", "- {env: prod, replicas: 2}\n");
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "x"]);
        let mut repos = Repos::default();
        repos.add("https://example.com/gitops.git", root.to_path_buf(), "");
        // The second git generator reads the file of the directory the first one found.
        let set = load_str(
            "appset.yaml",
            r#"apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: envs, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - git:
          repoURL: https://example.com/gitops.git
          revision: HEAD
          directories: [{path: 'apps/*'}]
      - git:
          repoURL: https://example.com/gitops.git
          revision: HEAD
          files: [{path: '{{ .path.path }}/envs.yaml'}]
          values: {app: '{{ .path.basename }}'}
        selector: {matchExpressions: [{key: env, operator: In, values: [prod, dev]}]}
  template:
    metadata: {name: '{{ .values.app }}-{{ .env }}'}
    spec:
      project: default
      destination: {namespace: '{{ .env }}'}
      source: {repoURL: https://example.com/gitops.git, path: '{{ .path.path }}'}
"#,
        );
        let (apps, errors) = generate(&set.resources[0], &Known::repos(&repos), "argocd");
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(names(&apps), ["api-prod", "web-prod", "web-dev"]);
        assert_eq!(apps[2].raw["spec"]["source"]["path"], "apps/web");
        assert_eq!(apps[2].raw["spec"]["destination"]["namespace"], "dev");
    }

    #[test]
    fn applications_sharing_a_generated_name_are_all_left_out() {
        let set = load_str(
            "appset.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: envs}\n\
             spec:\n  generators: [{list: {elements: [{env: qa}, {env: prod}, {env: qa}]}}]\n  \
             template: {metadata: {name: '{{env}}'}, spec: {}}\n",
        );
        let (apps, errors) = generate(
            &set.resources[0],
            &Known::repos(&Repos::default()),
            "argocd",
        );
        assert_eq!(names(&apps), ["prod"]);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0]
                .starts_with("ApplicationSet envs contains applications with duplicate name: qa"),
            "{errors:?}"
        );
    }

    #[test]
    fn a_generator_naming_no_kind_generates_nothing_and_is_the_sets_own_problem() {
        let set = load_str(
            "appset.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\n\
             spec:\n  generators: [{}, {lists: {elements: [{env: qa}]}}, {list: {elements: [{env: prod}]}}]\n  \
             template: {metadata: {name: '{{env}}'}, spec: {}}\n",
        );
        let (apps, errors) = generate(
            &set.resources[0],
            &Known::repos(&Repos::default()),
            "argocd",
        );
        assert_eq!(names(&apps), ["prod"]);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(
            errors
                .iter()
                .all(|e| e.contains("names no generator kind") && e.contains(JUDGED)),
            "{errors:?}"
        );
        // Go templates that do not parse, and options Go refuses, are the set's own problems
        // too.
        let set = load_str(
            "appset.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\n\
             spec:\n  goTemplate: true\n  generators: [{list: {elements: [{env: prod}]}}]\n  \
             template: {metadata: {name: '{{env}}'}, spec: {}}\n",
        );
        let (apps, errors) = generate(
            &set.resources[0],
            &Known::repos(&Repos::default()),
            "argocd",
        );
        assert!(apps.is_empty());
        assert!(
            errors[0].contains(r#"function "env" not defined"#) && errors[0].contains(JUDGED),
            "{errors:?}"
        );
        let set = load_str(
            "appset.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\n\
             spec:\n  goTemplate: true\n  goTemplateOptions: [missingkey=strict]\n  \
             generators: [{list: {elements: [{env: prod}]}}]\n  \
             template: {metadata: {name: '{{ .env }}'}, spec: {}}\n",
        );
        let (apps, errors) = generate(
            &set.resources[0],
            &Known::repos(&Repos::default()),
            "argocd",
        );
        assert!(apps.is_empty());
        assert!(errors[0].contains("unrecognized option") && errors[0].contains(JUDGED));
    }

    #[test]
    fn the_template_patch_is_laid_over_each_application() {
        let set = load_str(
            "appset.yaml",
            r#"apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: apps, namespace: argocd}
spec:
  goTemplate: true
  goTemplateOptions: [missingkey=error]
  generators:
  - list:
      elements:
      - {app: web, team: shop, autoSync: true}
      - {app: api, team: core, autoSync: false}
  template:
    metadata: {name: '{{ .app }}', labels: {app: '{{ .app }}'}}
    spec:
      project: default
      source: {repoURL: https://example.com/r.git, path: 'apps/{{ .app }}'}
      destination: {server: https://kubernetes.default.svc, namespace: '{{ .app }}'}
  templatePatch: |
    metadata:
      namespace: elsewhere
      labels:
        team: {{ .team }}
      finalizers: [example.com/cleanup]
    spec:
      project: other
    {{- if .autoSync }}
      syncPolicy:
        automated:
          prune: true
    {{- end }}
"#,
        );
        let (apps, errors) = generate(
            &set.resources[0],
            &Known::repos(&Repos::default()),
            "argocd",
        );
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(names(&apps), ["web", "api"]);
        let web = &apps[0].raw;
        assert_eq!(
            web["metadata"]["labels"],
            json!({"app": "web", "team": "shop"})
        );
        assert_eq!(
            web["metadata"]["finalizers"],
            json!([RESOURCES_FINALIZER, "example.com/cleanup"])
        );
        // The patch cannot move the Application or change its project.
        assert_eq!(web["metadata"]["namespace"], "argocd");
        assert_eq!(web["spec"]["project"], "default");
        assert_eq!(web["spec"]["syncPolicy"]["automated"]["prune"], true);
        assert_eq!(web["spec"]["source"]["path"], "apps/web");
        assert!(apps[1].raw["spec"].get("syncPolicy").is_none());
        assert_eq!(apps[1].raw["metadata"]["labels"]["team"], "core");
        // A patch that is not a mapping is Argo CD's error for that Application.
        let mut raw = set.resources[0].raw.clone();
        raw["spec"]["templatePatch"] = json!("- {{ .app }}");
        let bad = Resource::from_value(raw, None).unwrap();
        let (apps, errors) = generate(&bad, &Known::repos(&Repos::default()), "argocd");
        assert!(apps.is_empty());
        assert!(errors[0].contains("invalid templatePatch"), "{errors:?}");
        assert!(!errors[0].contains(JUDGED));
    }
}
