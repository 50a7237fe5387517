//! Changes the API server refuses from the live object, judged offline: without a server to ask
//! (`review` without `--ephemeral-cluster`), each head object with a base counterpart (same
//! group, kind, namespace and name) is held to the table of immutable fields of the semantics
//! crate (`model::immutable`), the base revision's manifest standing in for the live object.
//! Less certain than a server's verdict: the live object also holds what the server and the
//! controllers wrote, which the table approximates. Hooks are left out: Argo CD creates a hook
//! anew at each sync (deleting the previous one first, `BeforeHookCreation` being the default
//! delete policy), so nothing of an earlier one is ever updated.

use std::collections::HashMap;

use crate::model::Resource;
use crate::model::argo::SyncFacts;
use crate::model::immutable::{ApplyMode, Refusal, refused_changes_in};

/// The refusals of each object of `head` (by its index) against its counterpart in `base`.
pub fn refused(base: &[Resource], head: &[Resource]) -> HashMap<usize, Vec<Refusal>> {
    let key = |r: &Resource| {
        (
            r.group.clone(),
            r.kind.clone(),
            r.namespace.clone(),
            r.name.clone(),
        )
    };
    let before: HashMap<_, &Resource> = base
        .iter()
        .filter(|r| !r.name.is_empty())
        .map(|r| (key(r), r))
        .collect();
    let mut out = HashMap::new();
    for (i, r) in head.iter().enumerate() {
        let Some(b) = (!r.name.is_empty()).then(|| before.get(&key(r))).flatten() else {
            continue;
        };
        let facts = SyncFacts::of(r);
        if facts.is_hook {
            continue;
        }
        let options = facts.sync_options;
        // Force=true,Replace=true deletes and re-creates: no field of the old object matters.
        if options.has("Replace=true") && options.has("Force=true") {
            continue;
        }
        let mode = if options.has("Replace=true") {
            ApplyMode::Replace
        } else {
            ApplyMode::Apply
        };
        let refusals = refused_changes_in(mode, &r.api_version, &r.kind, &b.raw, &r.raw);
        if !refusals.is_empty() {
            out.insert(i, refusals);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    fn deployment(selector: &str, options: &str) -> Resource {
        let yaml = format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n  annotations: {{argocd.argoproj.io/sync-options: \"{options}\"}}\nspec:\n  selector: {{matchLabels: {{{selector}}}}}\n  template:\n    metadata: {{labels: {{app: web, tier: web}}}}\n    spec: {{containers: [{{name: web, image: nginx}}]}}\n"
        );
        load_str("x.yaml", &yaml).resources.remove(0)
    }

    #[test]
    fn a_changed_selector_is_refused_unless_argo_cd_deletes_and_recreates() {
        let base = [deployment("app: web", "")];
        let head = [deployment("app: web, tier: web", "")];
        let found = refused(&base, &head);
        assert_eq!(found[&0][0].pointer, "/spec/selector");
        // Replace=true is refused the same way; Force=true,Replace=true is not.
        let head = [deployment("app: web, tier: web", "Replace=true")];
        assert!(refused(&base, &head).contains_key(&0));
        let head = [deployment("app: web, tier: web", "Force=true,Replace=true")];
        assert!(refused(&base, &head).is_empty());
        // A hook is created anew at each sync: its changes are never refused.
        let hook = |selector: &str| {
            let mut r = deployment(selector, "");
            r.raw["metadata"]["annotations"]["argocd.argoproj.io/hook"] = "PreSync".into();
            crate::model::Resource::from_value(r.raw, r.origin).unwrap()
        };
        assert!(refused(&[hook("app: web")], &[hook("app: web, tier: web")]).is_empty());
        // Nothing to refuse for a new object or an unchanged one.
        assert!(refused(&[], &[deployment("app: web", "")]).is_empty());
        assert!(refused(&base, &base).is_empty());
    }
}
