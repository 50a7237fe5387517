//! `argoproj.io/ApplicationSet` as Argo CD 3.6's ApplicationSet controller reads it
//! (`pkg/apis/application/v1alpha1/applicationset_types.go`, the CRD
//! `manifests/crds/applicationset-crd.yaml`).
//!
//! - [`ApplicationSet`]: metadata name and namespace, the generators, the template, the template
//!   engine (`goTemplate`, `goTemplateOptions`), `templatePatch`, `syncPolicy`, `strategy`,
//!   `preservedFields` and `ignoreApplicationDifferences`.
//! - [`Generator`]: one entry of `spec.generators` (or of a matrix's or merge's `generators`):
//!   the kinds it names, each a [`GeneratorBlock`] with its raw value, its own `template` and
//!   `values`, and the generator's `selector`.
//! - [`Template`]: the Application template, kept raw, with its metadata read. The template's
//!   Application spec is an Application's and is kept as written.
//!
//! Reading is tolerant (module [`super`]): keys the CRD does not declare at the ApplicationSet
//! level, in the template's metadata and in generator blocks are kept in [`Notes::unknown`] —
//! the API server prunes them, so Argo CD never sees them.
//!
//! [`gotemplate`] is Go's `text/template` with the Sprig functions Argo CD gives it, and
//! [`facts`] what the templates need from the generators (`input.appset` of the rule input).

pub mod facts;
pub mod gotemplate;

use std::collections::BTreeMap;

use serde_json::Value;

use super::{Fields, Notes};

/// The kinds of generator, in the order of the fields of Argo CD's `ApplicationSetGenerator`:
/// the order in which it evaluates the kinds one generator names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum GeneratorKind {
    List,
    Clusters,
    Git,
    ScmProvider,
    ClusterDecisionResource,
    PullRequest,
    Matrix,
    Merge,
    Plugin,
}

impl GeneratorKind {
    /// Every kind, in Argo CD's order.
    pub const ALL: [GeneratorKind; 9] = [
        GeneratorKind::List,
        GeneratorKind::Clusters,
        GeneratorKind::Git,
        GeneratorKind::ScmProvider,
        GeneratorKind::ClusterDecisionResource,
        GeneratorKind::PullRequest,
        GeneratorKind::Matrix,
        GeneratorKind::Merge,
        GeneratorKind::Plugin,
    ];

    /// The key of the kind in a generator (`list`, `scmProvider`...).
    pub fn key(self) -> &'static str {
        match self {
            GeneratorKind::List => "list",
            GeneratorKind::Clusters => "clusters",
            GeneratorKind::Git => "git",
            GeneratorKind::ScmProvider => "scmProvider",
            GeneratorKind::ClusterDecisionResource => "clusterDecisionResource",
            GeneratorKind::PullRequest => "pullRequest",
            GeneratorKind::Matrix => "matrix",
            GeneratorKind::Merge => "merge",
            GeneratorKind::Plugin => "plugin",
        }
    }

    /// The keys of the kind's block the CRD declares.
    fn fields(self) -> &'static [&'static str] {
        match self {
            GeneratorKind::List => &["elements", "elementsYaml", "template"],
            GeneratorKind::Clusters => &["selector", "values", "flatList", "template"],
            GeneratorKind::Git => &[
                "repoURL",
                "revision",
                "directories",
                "files",
                "pathParamPrefix",
                "values",
                "requeueAfterSeconds",
                "template",
            ],
            GeneratorKind::ScmProvider => &[
                "awsCodeCommit",
                "azureDevOps",
                "bitbucket",
                "bitbucketServer",
                "cloneProtocol",
                "filters",
                "gitea",
                "github",
                "gitlab",
                "requeueAfterSeconds",
                "values",
                "template",
            ],
            GeneratorKind::ClusterDecisionResource => &[
                "configMapRef",
                "labelSelector",
                "name",
                "requeueAfterSeconds",
                "values",
                "template",
            ],
            GeneratorKind::PullRequest => &[
                "azuredevops",
                "bitbucket",
                "bitbucketServer",
                "continueOnRepoNotFoundError",
                "filters",
                "gitea",
                "github",
                "gitlab",
                "requeueAfterSeconds",
                "values",
                "template",
            ],
            GeneratorKind::Matrix => &["generators", "template"],
            GeneratorKind::Merge => &["generators", "mergeKeys", "template"],
            GeneratorKind::Plugin => &[
                "configMapRef",
                "input",
                "requeueAfterSeconds",
                "values",
                "template",
            ],
        }
    }

    /// Whether the kind combines other generators.
    pub fn combines(self) -> bool {
        matches!(self, GeneratorKind::Matrix | GeneratorKind::Merge)
    }
}

/// One `argoproj.io/ApplicationSet`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ApplicationSet {
    pub name: String,
    /// `metadata.namespace`, when written.
    pub namespace: Option<String>,
    /// `spec.generators`, in order.
    pub generators: Vec<Generator>,
    /// `spec.template`.
    pub template: Template,
    /// `spec.goTemplate`: Go's text/template instead of fasttemplate.
    pub go_template: bool,
    /// `spec.goTemplateOptions`, as written.
    pub go_template_options: Vec<String>,
    /// `spec.templatePatch`: a template of a strategic-merge patch laid over each generated
    /// Application.
    pub template_patch: Option<String>,
    pub sync_policy: SyncPolicy,
    /// `spec.strategy`, when written.
    pub strategy: Option<Strategy>,
    pub preserved_fields: PreservedFields,
    /// `spec.ignoreApplicationDifferences`, as written.
    pub ignore_application_differences: Vec<IgnoreApplicationDifference>,
    /// `spec.applyNestedSelectors` (deprecated: ignored, always on).
    pub apply_nested_selectors: Option<bool>,
    /// What reading found that the vocabulary does not hold.
    pub notes: Notes,
}

/// `spec.syncPolicy`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SyncPolicy {
    /// `preserveResourcesOnDeletion`: generated Applications get no resources finalizer.
    pub preserve_resources_on_deletion: bool,
    /// `applicationsSync`: `create-only`, `create-update`, `create-delete` or `sync`.
    pub applications_sync: Option<String>,
}

/// `spec.strategy` (progressive syncs).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Strategy {
    /// `type`: `AllAtOnce` or `RollingSync`.
    pub kind: Option<String>,
    /// `rollingSync`, as written.
    pub rolling_sync: Option<Value>,
    /// `deletionOrder`: `AllAtOnce` or `Reverse`.
    pub deletion_order: Option<String>,
}

/// `spec.preservedFields`: annotation and label keys of generated Applications the controller
/// leaves as they are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PreservedFields {
    pub annotations: Vec<String>,
    pub labels: Vec<String>,
}

/// One `spec.ignoreApplicationDifferences` entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoreApplicationDifference {
    /// The generated Application it applies to; empty: every one.
    pub name: String,
    pub json_pointers: Vec<String>,
    pub jq_path_expressions: Vec<String>,
}

/// An Application template: `spec.template`, or a generator's own `template`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Template {
    /// Its JSON pointer in the ApplicationSet.
    pub pointer: String,
    /// As written (`Null` when absent).
    pub raw: Value,
    pub metadata: TemplateMeta,
    /// The Application spec, as written (`Null` when absent).
    pub spec: Value,
}

/// A template's `metadata`: the fields of an Application's metadata a template may set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TemplateMeta {
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub finalizers: Vec<String>,
}

/// One generator: an entry of `spec.generators`, or of a matrix's or merge's `generators`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Generator {
    /// Its JSON pointer in the ApplicationSet.
    pub pointer: String,
    /// The kinds it names, in Argo CD's order ([`GeneratorKind::ALL`]). Argo CD evaluates every
    /// one; a generator naming none generates nothing ("contains unrecognized generators").
    pub blocks: Vec<GeneratorBlock>,
    /// `selector`, as written: filters the parameter sets the generator makes.
    pub selector: Option<Value>,
    /// The generator as written.
    pub raw: Value,
}

impl Generator {
    /// The single kind the generator names, when it names exactly one.
    pub fn kind(&self) -> Option<GeneratorKind> {
        match self.blocks.as_slice() {
            [b] => Some(b.kind),
            _ => None,
        }
    }

    /// The block of `kind`, when the generator names it.
    pub fn block(&self, kind: GeneratorKind) -> Option<&GeneratorBlock> {
        self.blocks.iter().find(|b| b.kind == kind)
    }

    /// Reads the generator `v` found at JSON pointer `at`.
    pub fn read(v: &Value, at: &str, notes: &mut Notes) -> Generator {
        let mut f = Fields::of(Some(v), at, notes);
        let mut blocks = Vec::new();
        for kind in GeneratorKind::ALL {
            let pointer = f.pointer(kind.key());
            let Some(raw) = f.value(kind.key()) else {
                continue;
            };
            if let Some(block) = GeneratorBlock::read(kind, raw, &pointer, notes) {
                blocks.push(block);
            }
        }
        let selector = f.value("selector").cloned();
        if let Some(s) = &selector {
            let mut sf = Fields::of(Some(s), &f.pointer("selector"), notes);
            sf.known(&["matchLabels", "matchExpressions"]);
            sf.finish(notes);
        }
        f.finish(notes);
        Generator {
            pointer: at.to_string(),
            blocks,
            selector,
            raw: v.clone(),
        }
    }
}

/// One kind's block of a generator (`git: {...}`).
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratorBlock {
    pub kind: GeneratorKind,
    /// Its JSON pointer in the ApplicationSet.
    pub pointer: String,
    /// The block as written.
    pub raw: Value,
    /// The block's own `template`, laid over the ApplicationSet's.
    pub template: Option<Template>,
    /// `values`: parameters the generator adds to each set (`values.<key>`), themselves templates.
    pub values: BTreeMap<String, String>,
    /// What the kind reads.
    pub spec: GeneratorSpec,
}

/// What one kind of generator reads.
#[derive(Debug, Clone, PartialEq)]
pub enum GeneratorSpec {
    List {
        /// `elements`, as written.
        elements: Vec<Value>,
        /// `elementsYaml`, when written.
        elements_yaml: Option<String>,
    },
    Clusters {
        /// `selector`, as written.
        selector: Option<Value>,
        /// `flatList`: one parameter set holding every cluster as `clusters`.
        flat_list: bool,
    },
    Git {
        repo_url: String,
        revision: String,
        directories: Vec<PathPattern>,
        files: Vec<PathPattern>,
        /// `pathParamPrefix`: the `path` parameters are named `<prefix>.path...`.
        path_param_prefix: String,
    },
    /// `matrix` (two generators) and `merge`.
    Combination {
        generators: Vec<Generator>,
        /// `mergeKeys` of a merge.
        merge_keys: Vec<String>,
    },
    /// SCM providers, pull requests, cluster decision resources and plugins: data from outside
    /// the repository, kept as written.
    External,
}

/// One `directories` or `files` entry of a git generator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathPattern {
    pub path: String,
    pub exclude: bool,
}

impl GeneratorBlock {
    /// Reads the block of `kind`, `v`, at `at`; `None` when it is not a mapping (noted as
    /// malformed).
    fn read(kind: GeneratorKind, v: &Value, at: &str, notes: &mut Notes) -> Option<GeneratorBlock> {
        let mut f = Fields::of(Some(v), at, notes);
        if !f.present() {
            return None;
        }
        f.known(kind.fields());
        let template = f
            .value("template")
            .map(|t| Template::read(Some(t), &f.pointer("template"), notes));
        let values = f.string_map("values", notes);
        let spec = match kind {
            GeneratorKind::List => GeneratorSpec::List {
                elements: f.list("elements", notes).to_vec(),
                elements_yaml: f.str("elementsYaml", notes).map(str::to_string),
            },
            GeneratorKind::Clusters => GeneratorSpec::Clusters {
                selector: f.value("selector").cloned(),
                flat_list: f.bool("flatList", notes).unwrap_or(false),
            },
            GeneratorKind::Git => {
                let patterns = |f: &mut Fields<'_>, key: &'static str, notes: &mut Notes| {
                    let at = f.pointer(key);
                    f.list(key, notes)
                        .iter()
                        .enumerate()
                        .map(|(i, item)| {
                            let mut p = Fields::of(Some(item), &format!("{at}/{i}"), notes);
                            let pattern = PathPattern {
                                path: p.string("path", notes),
                                exclude: p.bool("exclude", notes).unwrap_or(false),
                            };
                            p.finish(notes);
                            pattern
                        })
                        .collect()
                };
                GeneratorSpec::Git {
                    repo_url: f.string("repoURL", notes),
                    revision: f.string("revision", notes),
                    directories: patterns(&mut f, "directories", notes),
                    files: patterns(&mut f, "files", notes),
                    path_param_prefix: f.string("pathParamPrefix", notes),
                }
            }
            GeneratorKind::Matrix | GeneratorKind::Merge => {
                let at = f.pointer("generators");
                let generators = f
                    .list("generators", notes)
                    .iter()
                    .enumerate()
                    .map(|(i, g)| Generator::read(g, &format!("{at}/{i}"), notes))
                    .collect();
                let merge_keys = if kind == GeneratorKind::Merge {
                    f.strings("mergeKeys", notes)
                } else {
                    Vec::new()
                };
                GeneratorSpec::Combination {
                    generators,
                    merge_keys,
                }
            }
            _ => GeneratorSpec::External,
        };
        f.finish(notes);
        Some(GeneratorBlock {
            kind,
            pointer: at.to_string(),
            raw: v.clone(),
            template,
            values,
            spec,
        })
    }

    /// The generators a matrix or merge combines (none for other kinds).
    pub fn children(&self) -> &[Generator] {
        match &self.spec {
            GeneratorSpec::Combination { generators, .. } => generators,
            _ => &[],
        }
    }
}

impl Template {
    /// Reads the template `v` found at `at`.
    pub fn read(v: Option<&Value>, at: &str, notes: &mut Notes) -> Template {
        let mut f = Fields::of(v, at, notes);
        let mut m = f.block("metadata", notes);
        let metadata = TemplateMeta {
            name: m.string("name", notes),
            namespace: m.string("namespace", notes),
            labels: m.string_map("labels", notes),
            annotations: m.string_map("annotations", notes),
            finalizers: m.strings("finalizers", notes),
        };
        m.finish(notes);
        let spec = f.value("spec").cloned().unwrap_or(Value::Null);
        f.finish(notes);
        Template {
            pointer: at.to_string(),
            raw: v.cloned().unwrap_or(Value::Null),
            metadata,
            spec,
        }
    }
}

impl ApplicationSet {
    /// Whether `v` is an ApplicationSet (`argoproj.io/*`, kind `ApplicationSet`).
    pub fn is(v: &Value) -> bool {
        v.get("kind").and_then(Value::as_str) == Some("ApplicationSet")
            && v.get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|a| a.starts_with("argoproj.io/"))
    }

    /// Reads an ApplicationSet object.
    pub fn from_value(v: &Value) -> ApplicationSet {
        let mut notes = Notes::default();
        let mut top = Fields::of(Some(v), "", &mut notes);
        top.known(&["apiVersion", "kind", "status"]);
        let metadata = top.value("metadata");
        let name = metadata
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let namespace = metadata
            .and_then(|m| m.get("namespace"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
            .map(str::to_string);
        let mut spec = top.block("spec", &mut notes);
        let go_template = spec.bool("goTemplate", &mut notes).unwrap_or(false);
        let go_template_options = spec.strings("goTemplateOptions", &mut notes);
        let at = spec.pointer("generators");
        let generators = spec
            .list("generators", &mut notes)
            .iter()
            .enumerate()
            .map(|(i, g)| Generator::read(g, &format!("{at}/{i}"), &mut notes))
            .collect();
        let template = Template::read(
            spec.value("template"),
            &spec.pointer("template"),
            &mut notes,
        );
        let template_patch = spec.str("templatePatch", &mut notes).map(str::to_string);
        let mut sp = spec.block("syncPolicy", &mut notes);
        let sync_policy = SyncPolicy {
            preserve_resources_on_deletion: sp
                .bool("preserveResourcesOnDeletion", &mut notes)
                .unwrap_or(false),
            applications_sync: sp.str("applicationsSync", &mut notes).map(str::to_string),
        };
        sp.finish(&mut notes);
        let mut st = spec.block("strategy", &mut notes);
        let strategy = st.present().then(|| Strategy {
            kind: st.str("type", &mut notes).map(str::to_string),
            rolling_sync: st.value("rollingSync").cloned(),
            deletion_order: st.str("deletionOrder", &mut notes).map(str::to_string),
        });
        st.finish(&mut notes);
        let mut pf = spec.block("preservedFields", &mut notes);
        let preserved_fields = PreservedFields {
            annotations: pf.strings("annotations", &mut notes),
            labels: pf.strings("labels", &mut notes),
        };
        pf.finish(&mut notes);
        let at = spec.pointer("ignoreApplicationDifferences");
        let ignore_application_differences = spec
            .list("ignoreApplicationDifferences", &mut notes)
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let mut f = Fields::of(Some(e), &format!("{at}/{i}"), &mut notes);
                let entry = IgnoreApplicationDifference {
                    name: f.string("name", &mut notes),
                    json_pointers: f.strings("jsonPointers", &mut notes),
                    jq_path_expressions: f.strings("jqPathExpressions", &mut notes),
                };
                f.finish(&mut notes);
                entry
            })
            .collect();
        let apply_nested_selectors = spec.bool("applyNestedSelectors", &mut notes);
        spec.finish(&mut notes);
        top.finish(&mut notes);
        ApplicationSet {
            name,
            namespace,
            generators,
            template,
            go_template,
            go_template_options,
            template_patch,
            sync_policy,
            strategy,
            preserved_fields,
            ignore_application_differences,
            apply_nested_selectors,
            notes,
        }
    }

    /// The template engine the ApplicationSet's templates are rendered with.
    pub fn engine(&self) -> Engine {
        if self.go_template {
            Engine::Go {
                missing_key: MissingKey::of(&self.go_template_options),
            }
        } else {
            Engine::Fast
        }
    }
}

/// How an ApplicationSet's templates are rendered (`applicationset/utils.Render.Replace`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// fasttemplate (`goTemplate` unset or false): `{{ name }}` is replaced by the string
    /// parameter `name`; any other tag is left as written.
    Fast,
    /// Go's text/template with Sprig (`goTemplate: true`).
    Go { missing_key: MissingKey },
}

impl Engine {
    /// `go` or `fasttemplate`.
    pub fn name(self) -> &'static str {
        match self {
            Engine::Fast => "fasttemplate",
            Engine::Go { .. } => "go",
        }
    }
}

/// What a Go template does with a key its data does not have (`goTemplateOptions`
/// `missingkey=...`; the last valid one wins, as each `Option` call sets it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MissingKey {
    /// `default` / `invalid` (and no option): prints `<no value>`.
    #[default]
    Default,
    /// `zero`: the zero value (for Argo CD's parameter maps, `<no value>` as well).
    Zero,
    /// `error`: execution stops with `map has no entry for key`.
    Error,
}

impl MissingKey {
    /// The behaviour `options` ask for.
    pub fn of(options: &[String]) -> MissingKey {
        let mut out = MissingKey::Default;
        for o in options {
            match o.as_str() {
                "missingkey=default" | "missingkey=invalid" => out = MissingKey::Default,
                "missingkey=zero" => out = MissingKey::Zero,
                "missingkey=error" => out = MissingKey::Error,
                _ => {}
            }
        }
        out
    }

    /// `default`, `zero` or `error`.
    pub fn name(self) -> &'static str {
        match self {
            MissingKey::Default => "default",
            MissingKey::Zero => "zero",
            MissingKey::Error => "error",
        }
    }
}

/// Whether Go's `Template.Option` accepts `option` (any other panics in Argo CD's controller).
pub fn valid_go_template_option(option: &str) -> bool {
    matches!(
        option,
        "missingkey=default" | "missingkey=invalid" | "missingkey=zero" | "missingkey=error"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(v: Value) -> ApplicationSet {
        ApplicationSet::from_value(&v)
    }

    #[test]
    fn the_typed_fields_are_read() {
        let set = read(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
            "metadata": {"name": "apps", "namespace": "argocd", "labels": {"a": "b"}},
            "spec": {
                "goTemplate": true,
                "goTemplateOptions": ["missingkey=error"],
                "generators": [
                    {"git": {"repoURL": "https://x/r.git", "revision": "HEAD",
                             "directories": [{"path": "apps/*"}, {"path": "apps/old", "exclude": true}],
                             "values": {"env": "prod"}}},
                    {"matrix": {"generators": [{"list": {"elements": [{"a": "1"}]}}, {"clusters": {}}]},
                     "selector": {"matchLabels": {"a": "1"}}},
                ],
                "template": {"metadata": {"name": "{{ .path.basename }}", "labels": {"x": "y"}},
                             "spec": {"project": "default", "source": {"include": "*.yaml"}}},
                "templatePatch": "spec: {}",
                "syncPolicy": {"preserveResourcesOnDeletion": true, "applicationsSync": "create-only"},
                "strategy": {"type": "RollingSync", "rollingSync": {"steps": []}},
                "preservedFields": {"labels": ["team"]},
                "ignoreApplicationDifferences": [{"jsonPointers": ["/spec/source/targetRevision"]}],
            },
        }));
        assert_eq!(set.name, "apps");
        assert_eq!(set.namespace.as_deref(), Some("argocd"));
        assert_eq!(
            set.engine(),
            Engine::Go {
                missing_key: MissingKey::Error
            }
        );
        assert_eq!(set.generators.len(), 2);
        let git = &set.generators[0];
        assert_eq!(git.kind(), Some(GeneratorKind::Git));
        assert_eq!(git.blocks[0].pointer, "/spec/generators/0/git");
        assert_eq!(git.blocks[0].values["env"], "prod");
        match &git.blocks[0].spec {
            GeneratorSpec::Git {
                directories,
                repo_url,
                ..
            } => {
                assert_eq!(repo_url, "https://x/r.git");
                assert_eq!(directories[1].path, "apps/old");
                assert!(directories[1].exclude);
            }
            other => panic!("{other:?}"),
        }
        let matrix = &set.generators[1];
        assert_eq!(matrix.kind(), Some(GeneratorKind::Matrix));
        assert!(matrix.selector.is_some());
        let children = matrix.blocks[0].children();
        assert_eq!(
            children[1].pointer,
            "/spec/generators/1/matrix/generators/1"
        );
        assert_eq!(children[1].kind(), Some(GeneratorKind::Clusters));
        assert_eq!(set.template.metadata.name, "{{ .path.basename }}");
        assert_eq!(set.template.spec["source"]["include"], "*.yaml");
        assert_eq!(set.template_patch.as_deref(), Some("spec: {}"));
        assert!(set.sync_policy.preserve_resources_on_deletion);
        assert_eq!(
            set.sync_policy.applications_sync.as_deref(),
            Some("create-only")
        );
        assert_eq!(
            set.strategy.as_ref().and_then(|s| s.kind.as_deref()),
            Some("RollingSync")
        );
        assert_eq!(set.preserved_fields.labels, ["team"]);
        assert_eq!(
            set.ignore_application_differences[0].json_pointers,
            ["/spec/source/targetRevision"]
        );
        // The template's Application spec is kept as written: `include` is not reported here.
        assert!(set.notes.is_empty(), "{:?}", set.notes);
    }

    #[test]
    fn unknown_keys_of_the_set_and_of_generator_blocks_are_kept() {
        let set = read(json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet",
            "metadata": {"name": "apps"},
            "spec": {
                "goTemplates": true,
                "goTemplate": "true",
                "generators": [
                    {},
                    {"lists": {"elements": []}},
                    {"git": {"repoURL": "r", "directory": [{"path": "*"}], "directories": [{"path": "a", "recurse": true}]}},
                    {"list": {"elements": []}, "clusters": {}},
                    {"matrix": {"generators": [{"list": {"element": []}}]}},
                ],
                "template": {"metadata": {"name": "x", "generateName": "y-"}, "spec": {}},
            },
        }));
        assert_eq!(
            set.notes.unknown,
            [
                "/spec/generators/1/lists",
                "/spec/generators/2/git/directories/0/recurse",
                "/spec/generators/2/git/directory",
                "/spec/generators/4/matrix/generators/0/list/element",
                "/spec/template/metadata/generateName",
                "/spec/goTemplates",
            ]
        );
        assert_eq!(set.notes.malformed.len(), 1);
        assert_eq!(set.notes.malformed[0].pointer, "/spec/goTemplate");
        assert!(!set.go_template);
        assert_eq!(set.generators[0].kind(), None);
        assert!(set.generators[0].blocks.is_empty());
        assert!(set.generators[1].blocks.is_empty());
        let kinds: Vec<_> = set.generators[3].blocks.iter().map(|b| b.kind).collect();
        assert_eq!(kinds, [GeneratorKind::List, GeneratorKind::Clusters]);
        assert_eq!(set.generators[3].kind(), None);
    }

    #[test]
    fn go_template_options_set_the_missing_key_behaviour() {
        let opts =
            |o: &[&str]| MissingKey::of(&o.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(opts(&[]), MissingKey::Default);
        assert_eq!(opts(&["missingkey=error"]), MissingKey::Error);
        assert_eq!(
            opts(&["missingkey=error", "missingkey=zero"]),
            MissingKey::Zero
        );
        assert_eq!(opts(&["missingkey=strict"]), MissingKey::Default);
        assert!(valid_go_template_option("missingkey=invalid"));
        assert!(!valid_go_template_option("missingkey=strict"));
        assert!(!valid_go_template_option("missingkey"));
    }
}
