//! What the repo-server makes of a tool's output (`kube.SplitYAML`, then `GenerateManifests`'
//! post-processing): a YAML stream cut into objects, empty and `null` documents dropped, lists
//! expanded — and any document that is not an object with a `kind` fails the whole render.

use crate::manifest::load_str;
use crate::model::Resource;

/// The objects of `text`, the output of a render labelled `label` (Helm's `# Source:` comments
/// stay on each object's origin).
pub fn objects(label: &str, text: &str) -> Result<Vec<Resource>, String> {
    let loaded = load_str(label, text);
    if let Some(e) = loaded.errors.first() {
        return Err(format!(
            "the rendered output is refused as Argo CD refuses it: {e}"
        ));
    }
    Ok(loaded.resources)
}

/// At most the last `max` characters of a tool's stderr, trimmed, for an error line (the cause
/// is at the end of Helm's and kustomize's messages).
pub fn tail(stderr: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let text = text.join("\n");
    let count = text.chars().count();
    if count <= max {
        return text.replace('\n', " | ");
    }
    let rest: String = text.chars().skip(count - max).collect();
    format!("...{}", rest.replace('\n', " | "))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_null_documents_drop_and_lists_expand() {
        let out = objects(
            "helm template",
            "---\n# Source: c/templates/a.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n\
             ---\nnull\n---\n# Source: c/templates/empty.yaml\n---\napiVersion: v1\nkind: List\n\
             items:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n",
        )
        .unwrap();
        let names: Vec<&str> = out.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(
            out[0].origin.as_ref().unwrap().helm_template.as_deref(),
            Some("c/templates/a.yaml")
        );
    }

    #[test]
    fn a_document_without_kind_fails_the_render() {
        let e = objects(
            "kustomize build",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nmetadata: {name: b}\n",
        )
        .unwrap_err();
        assert!(e.contains("kind"), "{e}");
    }

    #[test]
    fn a_long_stderr_keeps_its_end() {
        assert_eq!(tail(b"  one\ntwo \n", 100), "one | two");
        assert_eq!(tail(b"abcdef", 3), "...def");
    }
}
