//! What an Application asks Argo CD's repo-server to render: its sources, read once by the
//! typed vocabulary (`config::application`, `config::source`), plus the small readers the
//! renderers share for the blocks kept as written.

use serde_json::Value;

pub use crate::config::application::Application;
pub use crate::config::source::{Directory, Jsonnet, JsonnetVar, Source, SourceType};

/// The strings of the array `block[key]` (other items and a missing key: none).
pub(crate) fn strings(block: &Value, key: &str) -> Vec<String> {
    block
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The entries of the object `block[key]` with their string values (others as empty), sorted by
/// key.
pub(crate) fn string_map(block: &Value, key: &str) -> Vec<(String, String)> {
    let mut pairs: Vec<(String, String)> = block
        .get(key)
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    pairs.sort();
    pairs
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    fn app(yaml: &str) -> Application {
        let loaded = load_str("app.yaml", yaml);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        Application::from_resource(&loaded.resources[0]).unwrap()
    }

    #[test]
    fn sources_win_over_source_and_blocks_name_the_type() {
        let a = app(r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: team}
spec:
  project: p
  destination: {namespace: shop}
  source: {repoURL: 'https://x/ignored.git', path: ignored}
  sources:
  - {repoURL: 'https://x/repo.git', path: apps/web, directory: {recurse: true, exclude: '*.json'}}
  - {repoURL: 'https://x/values.git', ref: values}
"#);
        assert!(a.multi_source);
        assert_eq!(a.sources.len(), 2);
        assert_eq!(a.sources[0].path, "apps/web");
        let d = a.sources[0].blocks.directory.clone().unwrap();
        assert!(d.recurse);
        assert_eq!(d.exclude, "*.json");
        assert_eq!(
            a.sources[0].explicit_type(),
            Ok(Some(SourceType::Directory))
        );
        assert_eq!(a.sources[1].ref_name, "values");
        assert_eq!(a.sources[1].explicit_type(), Ok(None));
        assert_eq!(a.instance_name("argocd"), "team_web");
        assert_eq!(a.destination_namespace, "shop");
        assert_eq!(a.project, "p");
    }

    #[test]
    fn two_blocks_are_refused_as_argo_cd_refuses_them() {
        let a = app("apiVersion: argoproj.io/v1alpha1\nkind: Application\n\
             metadata: {name: web, namespace: argocd}\n\
             spec:\n  source: {repoURL: r, path: p, helm: {}, kustomize: {}}\n");
        assert_eq!(a.instance_name("argocd"), "web");
        assert_eq!(
            a.sources[0].explicit_type(),
            Err("multiple application sources defined: Kustomize,Helm".into())
        );
    }
}
