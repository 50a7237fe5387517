//! Parameter override files, as Argo CD 3.6.1's repo-server applies them before it decides a
//! source's type (`reposerver/repository.mergeSourceParameters`): `.argocd-source.yaml`, then
//! `.argocd-source-<instance name>.yaml`, in the source's directory, each a JSON merge patch
//! (RFC 7386) over the source. Argo CD Image Updater's git write-back writes the second one
//! (`kustomize.images`, `helm.parameters`). Only the tool settings can change: `repoURL`,
//! `path`, `targetRevision` and `chart` stay as the Application says.

use std::path::Path;

use serde_json::Value;

use super::source::Source;

/// `source` with the override files of `app_dir` applied (itself when there are none), or the
/// file that could not be read or parsed and why.
pub fn apply(source: &Source, app_dir: &Path, app_name: &str) -> Result<Source, String> {
    let mut files = vec![".argocd-source.yaml".to_string()];
    if !app_name.is_empty() {
        files.push(format!(".argocd-source-{app_name}.yaml"));
    }
    let mut merged = source.raw.clone();
    let mut changed = false;
    for name in files {
        let file = app_dir.join(&name);
        if !file.is_file() {
            continue;
        }
        let label = format!("{}/{name}", source.path_label());
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{label}: {e}"))?;
        let patch =
            crate::manifest::parse_yaml_value(&text).map_err(|e| format!("{label}: {e}"))?;
        match patch {
            // An empty file changes nothing (Argo CD unmarshals `null` into the source).
            Value::Null => continue,
            Value::Object(_) => {
                json_patch::merge(&mut merged, &patch);
                changed = true;
            }
            _ => return Err(format!("{label}: not a map of source settings")),
        }
    }
    if !changed {
        return Ok(source.clone());
    }
    if let Some(fields) = merged.as_object_mut() {
        for (key, kept) in [
            ("repoURL", &source.repo_url),
            ("path", &source.path),
            ("targetRevision", &source.target_revision),
            ("chart", &source.chart),
        ] {
            if kept.is_empty() {
                fields.remove(key);
            } else {
                fields.insert(key.into(), Value::String(kept.clone()));
            }
        }
    }
    Ok(Source::from_value(&merged))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::render::source::SourceType;
    use serde_json::json;

    fn source(v: Value) -> Source {
        Source::from_value(&v)
    }

    #[test]
    fn the_shared_file_then_the_applications_file_patch_the_source() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".argocd-source.yaml"),
            "helm:\n  parameters:\n  - {name: image.tag, value: '1.0'}\n  releaseName: shared\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join(".argocd-source-web.yaml"),
            "helm:\n  parameters:\n  - {name: image.tag, value: '2.0'}\n  valueFiles: null\n\
             path: elsewhere\nrepoURL: https://evil.example.com/x.git\n",
        )
        .unwrap();
        let original = source(json!({
            "repoURL": "https://example.com/gitops.git", "path": "apps/web",
            "helm": {"valueFiles": ["prod.yaml"]}
        }));
        let merged = apply(&original, dir.path(), "web").unwrap();
        let helm = merged.blocks.helm.as_ref().unwrap();
        // Lists are replaced, not merged; null removes; the last file wins.
        assert_eq!(
            helm["parameters"],
            json!([{"name": "image.tag", "value": "2.0"}])
        );
        assert_eq!(helm["releaseName"], "shared");
        assert!(helm.get("valueFiles").is_none());
        // Where the source comes from is not the files' to change.
        assert_eq!(merged.path, "apps/web");
        assert_eq!(merged.repo_url, "https://example.com/gitops.git");
        // Another Application of the same directory only gets the shared file.
        let other = apply(&original, dir.path(), "api").unwrap();
        assert_eq!(
            other.blocks.helm.as_ref().unwrap()["parameters"][0]["value"],
            "1.0"
        );
    }

    #[test]
    fn an_override_can_name_the_type_and_a_bad_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let original = source(json!({"repoURL": "r", "path": "app"}));
        // No files: the source as it is.
        assert_eq!(apply(&original, dir.path(), "web").unwrap(), original);
        std::fs::write(
            dir.path().join(".argocd-source-web.yaml"),
            "kustomize:\n  images: [nginx:1.27]\n",
        )
        .unwrap();
        let merged = apply(&original, dir.path(), "web").unwrap();
        assert_eq!(merged.explicit_type().unwrap(), Some(SourceType::Kustomize));
        std::fs::write(dir.path().join(".argocd-source.yaml"), "- a\n").unwrap();
        let err = apply(&original, dir.path(), "web").unwrap_err();
        assert!(err.contains("app/.argocd-source.yaml: not a map"), "{err}");
        std::fs::write(dir.path().join(".argocd-source.yaml"), "").unwrap();
        assert!(apply(&original, dir.path(), "web").is_ok());
    }
}
