//! ApplicationSets turned into the Applications Argo CD 3.6.1's ApplicationSet controller would
//! create (`applicationset/controllers/template`): each generator's parameter sets (`list`,
//! `git` directories and files read from the local checkout, `clusters` over the cluster Secrets
//! given, `matrix` and `merge` of those), the generator's own `template`
//! laid under the ApplicationSet's, every string rendered with each set, the Application in the
//! ApplicationSet's namespace with Argo CD's resources finalizer unless
//! `preserveResourcesOnDeletion`. Generators that need the cluster or an SCM provider are
//! reported as such.

mod clusters;
mod generators;
mod nesting;
mod selector;
mod template;

use serde_json::{Map, Value, json};

use crate::model::Resource;
pub use clusters::{Known, clusters_of};
pub use generators::OUTSIDE;
use template::{Engine, render_value};

/// The finalizer Argo CD's ApplicationSet controller puts on the Applications it creates.
const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

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
    let spec = r.raw.get("spec").cloned().unwrap_or(Value::Null);
    let options: Vec<&str> = spec
        .get("goTemplateOptions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let engine = if spec.get("goTemplate").and_then(Value::as_bool) == Some(true) {
        Engine::Go {
            missing_is_error: options.contains(&"missingkey=error"),
        }
    } else {
        Engine::Fast
    };
    let mut errors = Vec::new();
    if spec.get("templatePatch").is_some_and(|p| !p.is_null()) {
        errors.push("templatePatch is not applied by syncguard".into());
        return (Vec::new(), errors);
    }
    let base = spec.get("template").cloned().unwrap_or(Value::Null);
    let preserve = spec
        .pointer("/syncPolicy/preserveResourcesOnDeletion")
        .and_then(Value::as_bool)
        == Some(true);
    let namespace = r
        .namespace
        .clone()
        .unwrap_or_else(|| control_plane_namespace.to_string());
    let mut apps = Vec::new();
    for (n, generator) in spec
        .get("generators")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let sets = match generators::params(generator, engine, known) {
            Ok(sets) => sets,
            Err(e) => {
                errors.push(format!("generator {}: {e}", n + 1));
                continue;
            }
        };
        let mut tmpl = generator
            .as_object()
            .and_then(|g| g.values().find_map(|k| k.get("template").cloned()))
            .unwrap_or(Value::Null);
        merge_under(&mut tmpl, &base);
        for set in sets {
            match render_value(&tmpl, &set, engine) {
                Ok(rendered) => match application(&rendered, &namespace, preserve, r) {
                    Some(app) => apps.push(app),
                    None => errors.push(format!(
                        "generator {}: the template renders no Application name",
                        n + 1
                    )),
                },
                Err(e) => errors.push(format!("generator {}: {e}", n + 1)),
            }
        }
    }
    let apps = without_duplicate_names(apps, &r.name, &mut errors);
    (apps, errors)
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

/// The Application of a rendered template.
fn application(tmpl: &Value, namespace: &str, preserve: bool, set: &Resource) -> Option<Resource> {
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
    let raw = json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": Value::Object(metadata),
        "spec": tmpl.get("spec").cloned().unwrap_or(json!({})),
    });
    Resource::from_value(raw, set.origin.clone()).ok()
}

/// Argo CD's `SanitizeName`: lower case, anything but `a-z0-9.-` becomes `-`, at most 253
/// characters, `-` and `.` trimmed from both ends.
pub(crate) fn sanitize_name(name: &str) -> String {
    let lowered = name.to_lowercase();
    let mut out: String = lowered
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if out.len() > 253 {
        out.truncate(253);
    }
    out.trim_matches(|c| c == '-' || c == '.').to_string()
}

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
}
