//! The container images a change swaps: for each object on both revisions, every container
//! (matched by its list and name) whose `image` differs. Objects added or removed are not
//! counted here — their images come and go with them, and the manifest diff shows them.

use std::collections::HashMap;

use serde_json::Value;

use super::objects::ObjectId;
use crate::model::Resource;

/// One container whose image changed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageChange {
    pub object: ObjectId,
    /// `containers/web`, `initContainers/migrate`.
    pub container: String,
    pub base: String,
    pub head: String,
}

/// The pod specs an object can hold: a Pod's, a workload's or Job's template, a CronJob's.
const POD_SPECS: [&str; 3] = [
    "/spec",
    "/spec/template/spec",
    "/spec/jobTemplate/spec/template/spec",
];
const LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

/// Every `list/name` of `object`'s pod specs with its image, in document order.
fn images(object: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for spec in POD_SPECS.iter().filter_map(|p| object.pointer(p)) {
        for list in LISTS {
            for c in spec
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let (Some(name), Some(image)) = (
                    c.get("name").and_then(Value::as_str),
                    c.get("image").and_then(Value::as_str),
                ) else {
                    continue;
                };
                out.push((format!("{list}/{name}"), image.to_string()));
            }
        }
    }
    out
}

/// The image changes from `base` to `head` (objects with their identities, as
/// [`super::objects::ids`] gives them), in the head's order.
pub fn changes(
    base: &[Resource],
    base_ids: &[ObjectId],
    head: &[Resource],
    head_ids: &[ObjectId],
) -> Vec<ImageChange> {
    let before: HashMap<&ObjectId, &Resource> = base_ids.iter().zip(base).collect();
    let mut out = Vec::new();
    for (id, h) in head_ids.iter().zip(head) {
        let Some(b) = before.get(id) else { continue };
        let old: HashMap<String, String> = images(&b.raw).into_iter().collect();
        for (container, image) in images(&h.raw) {
            if let Some(was) = old.get(&container)
                && *was != image
            {
                out.push(ImageChange {
                    object: id.clone(),
                    container,
                    base: was.clone(),
                    head: image,
                });
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;
    use crate::review::objects::ids;

    fn objects(yaml: &str) -> Vec<Resource> {
        load_str("x.yaml", yaml).resources
    }

    #[test]
    fn a_changed_image_is_found_per_container_and_added_objects_are_not() {
        let base = objects(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: s}\n\
             spec: {template: {spec: {initContainers: [{name: init, image: 'busybox:1.36'}], containers: [{name: web, image: 'web:1.0'}, {name: side, image: 'proxy:2'}]}}}\n\
             ---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: s}\n\
             spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: run, image: 'tool:1'}]}}}}}\n",
        );
        let head = objects(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: s}\n\
             spec: {template: {spec: {initContainers: [{name: init, image: 'busybox:1.36'}], containers: [{name: side, image: 'proxy:2'}, {name: web, image: 'web:1.1'}, {name: new, image: 'x:1'}]}}}\n\
             ---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: s}\n\
             spec: {jobTemplate: {spec: {template: {spec: {containers: [{name: run, image: 'tool:2'}]}}}}}\n\
             ---\napiVersion: v1\nkind: Pod\nmetadata: {name: fresh, namespace: s}\nspec: {containers: [{name: a, image: 'a:1'}]}\n",
        );
        let found: Vec<String> = changes(&base, &ids(&base), &head, &ids(&head))
            .iter()
            .map(|c| format!("{} {}: {} -> {}", c.object, c.container, c.base, c.head))
            .collect();
        // Containers are matched by name, not position; a new container and a new object are
        // not image changes.
        assert_eq!(
            found,
            [
                "Deployment s/web containers/web: web:1.0 -> web:1.1",
                "CronJob s/nightly containers/run: tool:1 -> tool:2",
            ]
        );
    }
}
