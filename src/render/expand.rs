//! A set of manifests with its Applications rendered: what `check`, `plan` and `review` work on
//! when their input is a GitOps repository.

use std::collections::HashSet;
use std::sync::Arc;

use super::{
    Application, RenderOptions, Rendered, Repos, as_the_controller_sees, render_all_except,
    tracked_app,
};
use crate::model::Resource;

/// The Applications of an input, rendered.
#[derive(Debug, Default)]
pub struct Expansion {
    /// Each Application rendered (children of app-of-apps included), in render order.
    pub rendered: Vec<Rendered>,
    /// Their objects as Argo CD's controller holds them, to add to the input: namespaced
    /// objects without a namespace in their destination namespace, and without the Applications
    /// that are in the input already.
    pub objects: Vec<Resource>,
    /// Applications of the input that a rendered Application renders too (app-of-apps): by
    /// namespace and name, the instance of that parent. Their input copy carries no tracking
    /// id, so [`Expansion::attribute`] tells the grouping whose member each is.
    pub parents: Vec<((String, String), Arc<str>)>,
}

impl Expansion {
    /// Marks the Applications of `input` that a rendered parent renders with that parent
    /// ([`Resource::rendered_by`]), so that they join its group as the copy Argo CD applies
    /// would (with their sync-wave among its objects).
    pub fn attribute(&self, input: &mut [Resource]) {
        for r in input.iter_mut().filter(|r| r.rendered_by.is_none()) {
            if tracked_app(r).is_some() || Application::from_resource(r).is_none() {
                continue;
            }
            let id = (r.namespace.clone().unwrap_or_default(), r.name.clone());
            if let Some((_, parent)) = self.parents.iter().find(|(k, _)| *k == id) {
                r.rendered_by = Some(Arc::clone(parent));
            }
        }
    }
}

/// Renders the Applications of `input`: all of them with `always`, else those with a source in
/// a known repository. Applications whose objects are in `input` already (an earlier render's
/// output, by tracking id) are not rendered again.
pub fn expand(
    input: &[Resource],
    always: bool,
    repos: &Repos,
    options: &RenderOptions,
) -> Expansion {
    let roots: Vec<Resource> = input
        .iter()
        .filter(|r| {
            super::appset::is_application_set(r)
                || Application::from_resource(r).is_some_and(|spec| {
                    always
                        || spec
                            .sources
                            .iter()
                            .any(|s| repos.dir_for(&s.repo_url).is_some())
                })
        })
        .cloned()
        .collect();
    if roots.is_empty() {
        return Expansion::default();
    }
    let done: HashSet<String> = input
        .iter()
        .filter_map(|r| tracked_app(r).map(str::to_string))
        .collect();
    let rendered = render_all_except(&roots, repos, options, done);
    let present: HashSet<(String, String)> = input
        .iter()
        .filter(|r| Application::from_resource(r).is_some())
        .map(|r| (r.namespace.clone().unwrap_or_default(), r.name.clone()))
        .collect();
    let mut objects = Vec::new();
    let mut parents = Vec::new();
    for app in &rendered {
        let instance: Arc<str> = Arc::from(app.app.as_str());
        for r in &app.resources {
            let id = (r.namespace.clone().unwrap_or_default(), r.name.clone());
            let seen = Application::from_resource(r).is_some() && present.contains(&id);
            if seen && !app.application_set {
                parents.push((id, Arc::clone(&instance)));
            } else if !seen {
                objects.push(as_the_controller_sees(
                    r.clone(),
                    &app.destination_namespace,
                ));
            }
        }
    }
    Expansion {
        rendered,
        objects,
        parents,
    }
}
