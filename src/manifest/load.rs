//! From paths, readers and strings to [`Resource`]s with origins.
//!
//! The pipeline for one input: decode UTF-8 → cut the stream at `---` lines
//! ([`split_regions`]) → parse each region to JSON with positions ([`DocumentParser`], on
//! several threads for big inputs) → number the documents, attach Helm templates, flatten
//! `List`s → [`Resource::from_value`]. Every problem becomes a [`LoadError`] and loading goes on.

use std::collections::HashSet;
use std::fs;
use std::io::Read;
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use super::error::LoadError;
use super::stream::{Region, split_regions};
use super::yaml::{
    Document, DocumentError, DocumentErrorKind, DocumentParser, MAX_DEPTH, MAX_NODES,
    ParsedDocument,
};
use super::{Origin, Position};
use crate::model::Resource;
use syncguard_argocd::pointers::{PointerIndex, ROOT, push_escaped};

/// The file label used for standard input (the path `-`).
pub const STDIN_LABEL: &str = "<stdin>";

/// Inputs smaller than this are parsed on the calling thread: below it, starting threads costs
/// more than it saves, and small inputs (a webhook's single object) never pay for threads.
const PARALLEL_MIN_BYTES: usize = 512 * 1024;

/// Parsing scales to a few threads; more only adds contention on the allocator.
const MAX_THREADS: usize = 8;

/// What came out of loading: every resource that could be read, and every problem, in input
/// order.
#[derive(Debug, Default)]
pub struct Loaded {
    /// The objects read, `List` items flattened, in input order.
    pub resources: Vec<Resource>,
    /// Every problem, in input order; each names its file and, when known, its line.
    pub errors: Vec<LoadError>,
}

/// Loads files, directories and standard input (`-`), in the order given.
///
/// Directories are walked recursively for `*.yaml`, `*.yml` and `*.json` files in path order,
/// skipping hidden entries (`.git`, `.github`, editor files), which are never rendered
/// manifests. Symbolic links to files and to directories are followed; each real directory is
/// read once, so link cycles end and a directory reached twice is not loaded twice.
/// A path given explicitly is loaded whatever its name. A path that cannot be read is reported
/// and the others are still loaded.
pub fn load_paths(paths: &[PathBuf]) -> Loaded {
    load_paths_with_stdin(paths, || std::io::stdin().lock())
}

/// [`load_paths`] with the reader to use for `-`, so that tests need no real standard input.
///
/// All inputs are read first and then parsed together, so that many small files (`helm
/// template --output-dir`) use every core just like one big stream does.
fn load_paths_with_stdin<R: Read>(paths: &[PathBuf], mut stdin: impl FnMut() -> R) -> Loaded {
    let mut inputs = Inputs::default();
    let mut visited = HashSet::new();
    for path in paths {
        if path.as_os_str() == "-" {
            inputs.read(STDIN_LABEL.into(), stdin());
            continue;
        }
        match fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                for entry in walk(path, &mut visited) {
                    match entry {
                        Ok(file) => inputs.read_file(&file),
                        Err(error) => inputs.fail(error),
                    }
                }
            }
            Ok(_) => inputs.read_file(path),
            Err(error) => inputs.fail(LoadError::Read {
                file: label(path),
                error,
            }),
        }
    }
    inputs.load()
}

/// Loads everything a reader yields; `file_label` names it in origins and errors.
pub fn load_reader(file_label: &str, reader: impl Read) -> Loaded {
    let mut inputs = Inputs::default();
    inputs.read(file_label.into(), reader);
    inputs.load()
}

/// Loads a YAML or JSON stream held in memory; `file_label` names it in origins and errors.
pub fn load_str(file_label: &str, text: &str) -> Loaded {
    load_texts(vec![Ok((file_label.into(), text))])
}

/// Inputs read into memory, in order; an input that could not be read keeps its place as an
/// error so that errors come out in input order.
#[derive(Default)]
struct Inputs {
    contents: Vec<(Arc<str>, Vec<u8>)>,
    /// `Ok` for the next entry of `contents`, `Err` for an input that failed.
    order: Vec<Result<(), LoadError>>,
}

impl Inputs {
    fn read(&mut self, file: Arc<str>, mut reader: impl Read) {
        let mut bytes = Vec::new();
        match reader.read_to_end(&mut bytes) {
            Ok(_) => {
                self.contents.push((file, bytes));
                self.order.push(Ok(()));
            }
            Err(error) => self.fail(LoadError::Read { file, error }),
        }
    }

    fn read_file(&mut self, path: &Path) {
        match fs::read(path) {
            Ok(bytes) => {
                self.contents.push((label(path), bytes));
                self.order.push(Ok(()));
            }
            Err(error) => self.fail(LoadError::Read {
                file: label(path),
                error,
            }),
        }
    }

    fn fail(&mut self, error: LoadError) {
        self.order.push(Err(error));
    }

    fn load(self) -> Loaded {
        let Self { contents, order } = self;
        let mut contents = contents.iter();
        let texts = order
            .into_iter()
            .filter_map(|entry| match entry {
                Ok(()) => contents.next().map(|(file, bytes)| decode(file, bytes)),
                Err(error) => Some(Err(error)),
            })
            .collect();
        load_texts(texts)
    }
}

/// The bytes as UTF-8 text, or an error naming the line of the first invalid byte.
fn decode<'b>(file: &Arc<str>, bytes: &'b [u8]) -> Result<(Arc<str>, &'b str), LoadError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok((file.clone(), text)),
        Err(error) => {
            let offset = error.valid_up_to();
            let before = bytes.get(..offset).unwrap_or_default();
            let newlines = before.iter().filter(|&&b| b == b'\n').count();
            Err(LoadError::NotUtf8 {
                file: file.clone(),
                line: u32::try_from(newlines.saturating_add(1)).unwrap_or(u32::MAX),
                offset,
            })
        }
    }
}

/// Loads texts (or reports the inputs that could not be read) in order; the regions of all
/// texts are parsed together.
fn load_texts(texts: Vec<Result<(Arc<str>, &str), LoadError>>) -> Loaded {
    let mut regions = Vec::new();
    let mut plan = Vec::with_capacity(texts.len());
    for text in texts {
        plan.push(text.map(|(file, text)| {
            // A byte order mark is allowed at the start of a stream; the parser need not see it.
            let text = text.strip_prefix('\u{feff}').unwrap_or(text);
            let before = regions.len();
            regions.extend(split_regions(text));
            (file, regions.len() - before)
        }));
    }
    let parsed = parse_regions(&regions);
    let mut parsed = regions.iter().zip(parsed);
    let mut loaded = Loaded::default();
    for step in plan {
        let (file, region_count) = match step {
            Ok(step) => step,
            Err(error) => {
                loaded.errors.push(error);
                continue;
            }
        };
        let mut index = 0usize;
        for (region, documents) in parsed.by_ref().take(region_count) {
            for document in documents {
                match document {
                    Document::Empty => {}
                    Document::Failed(error) => loaded.errors.push(document_error(&file, error)),
                    Document::Parsed(parsed) => {
                        let helm_template = region
                            .helm_template(parsed.first_line, parsed.start.line)
                            .map(Arc::from);
                        let context = DocumentContext {
                            file: &file,
                            index,
                            helm_template,
                        };
                        context.add_objects(parsed, &mut loaded);
                    }
                }
                index = index.saturating_add(1);
            }
        }
    }
    loaded
}

/// Parses every region, on several threads when the input is big enough to gain from it.
/// The result is in region order whatever the threads do.
fn parse_regions(regions: &[Region<'_>]) -> Vec<Vec<Document>> {
    let total: usize = regions.iter().map(|r| r.text.len()).sum();
    if total < PARALLEL_MIN_BYTES {
        return parse_chunk(regions);
    }
    // Only asked for big inputs: it reads cgroup files, a cost small requests should not pay.
    let threads = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(MAX_THREADS);
    if threads < 2 {
        return parse_chunk(regions);
    }
    let chunks = chunks_by_size(regions, total.div_ceil(threads));
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|chunk| {
                // If no thread can be started, the chunk is simply parsed here.
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || parse_chunk(chunk))
                    .map_err(|_| chunk)
            })
            .collect();
        let mut out = Vec::with_capacity(regions.len());
        for handle in handles {
            match handle {
                Ok(handle) => match handle.join() {
                    Ok(parsed) => out.extend(parsed),
                    // The parser does not panic on any input we know of; if it ever does, the
                    // bug must surface rather than silently drop documents.
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(chunk) => out.extend(parse_chunk(chunk)),
            }
        }
        out
    })
}

fn parse_chunk(regions: &[Region<'_>]) -> Vec<Vec<Document>> {
    let mut parser = DocumentParser::default();
    regions
        .iter()
        .map(|region| parser.parse(region.text, region.line_offset))
        .collect()
}

/// Consecutive runs of regions of about `target` bytes each.
fn chunks_by_size<'r, 't>(regions: &'r [Region<'t>], target: usize) -> Vec<&'r [Region<'t>]> {
    let mut chunks = Vec::new();
    let mut rest = regions;
    while !rest.is_empty() {
        let mut size = 0usize;
        let mut len = 0usize;
        for region in rest {
            len += 1;
            size = size.saturating_add(region.text.len());
            if size >= target {
                break;
            }
        }
        let (chunk, tail) = rest.split_at(len.min(rest.len()));
        chunks.push(chunk);
        rest = tail;
    }
    chunks
}

/// What every object of one document shares.
struct DocumentContext<'f> {
    file: &'f Arc<str>,
    index: usize,
    helm_template: Option<Arc<str>>,
}

impl DocumentContext<'_> {
    /// Turns a parsed document into resources: the document itself, or the items of a `List`.
    fn add_objects(&self, document: ParsedDocument, loaded: &mut Loaded) {
        let ParsedDocument {
            start,
            value,
            pointers,
            duplicates,
            ..
        } = document;
        for duplicate in duplicates {
            loaded.errors.push(LoadError::DuplicateKey {
                file: self.file.clone(),
                line: duplicate.position.line,
                column: duplicate.position.column,
                key: duplicate.key,
                first_line: duplicate.first.map(|p| p.line),
            });
        }
        self.add_object(value, pointers, start, loaded, 0);
    }

    fn add_object(
        &self,
        mut value: Value,
        pointers: PointerIndex,
        start: Position,
        loaded: &mut Loaded,
        depth: usize,
    ) {
        // Lists inside lists are flattened too (as kubectl does); the depth check only bounds
        // the recursion, the parser already capped nesting.
        if depth < MAX_DEPTH
            && let Some(items) = take_list_items(&mut value)
        {
            let items_node = pointers.child(ROOT, "items");
            for (i, item) in items.into_iter().enumerate() {
                let node = items_node.and_then(|n| pointers.child(n, &i.to_string()));
                let (item_pointers, item_start) = match node {
                    Some(node) => (
                        pointers.subtree(node),
                        pointers.position_of(node).unwrap_or(start),
                    ),
                    None => (PointerIndex::default(), start),
                };
                self.add_object(item, item_pointers, item_start, loaded, depth + 1);
            }
            return;
        }
        self.check_string_maps(&value, &pointers, start, loaded);
        let origin = Origin::with_pointers(
            self.file.clone(),
            self.index,
            start,
            self.helm_template.clone(),
            pointers,
        );
        match Resource::from_value(value, Some(Arc::new(origin))) {
            Ok(resource) => loaded.resources.push(resource),
            Err(error) => loaded.errors.push(LoadError::NotAnObject {
                file: self.file.clone(),
                line: start.line,
                column: start.column,
                error,
            }),
        }
    }
}

/// The items of a `List`-style object (`kind` ending in `List` and an `items` array, e.g.
/// `v1/List` or `ConfigMapList`), removed from it; `None` for any other object.
///
/// `items: null` counts as an empty list, as in Kubernetes' own decoding.
fn take_list_items(value: &mut Value) -> Option<Vec<Value>> {
    let object = value.as_object_mut()?;
    let is_list_kind = object
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|kind| kind.ends_with("List"));
    let has_items = matches!(object.get("items"), Some(Value::Array(_) | Value::Null));
    if !(is_list_kind && has_items) {
        return None;
    }
    match object.remove("items") {
        Some(Value::Array(items)) => Some(items),
        _ => Some(Vec::new()),
    }
}

impl DocumentContext<'_> {
    /// Reports every label and annotation whose value is not a string.
    ///
    /// `metadata.labels` and `metadata.annotations` are `map[string]string`. A number or boolean
    /// there (`argocd.argoproj.io/sync-wave: 5`) cannot be decoded by the API server and kubectl
    /// refuses to apply it (`.metadata.annotations accessor error`), so the sync fails, whatever
    /// syncguard would say about the object. A `null` value (`key:` with nothing after it) is
    /// decoded as `""` by the API server and by kubectl from 1.33, but kubectl before 1.33 and other
    /// tools built on older Kubernetes client libraries silently drop *every* label or annotation
    /// of the object (kubernetes#129176), hook and sync-wave included; the intent is never clear,
    /// so it is reported too. Mappings and lists are reported like numbers.
    fn check_string_maps(
        &self,
        value: &Value,
        pointers: &PointerIndex,
        start: Position,
        loaded: &mut Loaded,
    ) {
        let Some(metadata) = value.get("metadata").and_then(Value::as_object) else {
            return;
        };
        let mut found = Vec::new();
        for (field, what) in [("annotations", "annotations"), ("labels", "labels")] {
            let Some(map) = metadata.get(field).and_then(Value::as_object) else {
                continue;
            };
            for (key, item) in map {
                let Some(problem) = not_a_string(item, what) else {
                    continue;
                };
                let mut pointer = format!("/metadata/{field}/");
                push_escaped(&mut pointer, key);
                let position = pointers.get(&pointer).unwrap_or(start);
                found.push((position, format!("metadata.{field}.{key}: {problem}")));
            }
        }
        // In file order (the JSON map is in key order).
        found.sort_by_key(|(position, _)| *position);
        for (position, message) in found {
            loaded.errors.push(LoadError::NotAString {
                file: self.file.clone(),
                line: position.line,
                column: position.column,
                message,
            });
        }
    }
}

/// What is wrong with a label or annotation value that is not a string, and the fix.
fn not_a_string(value: &Value, what: &str) -> Option<String> {
    let (shown, kind) = match value {
        Value::String(_) => return None,
        Value::Number(n) => (n.to_string(), "a number"),
        Value::Bool(b) => (b.to_string(), "a boolean"),
        Value::Null => {
            return Some(format!(
                "value is null (nothing after the colon, `~` or `null`); Kubernetes {what} must be \
                 strings. The API server reads it as \"\", but kubectl before 1.33 and tools built \
                 on older Kubernetes client libraries drop every one of this object's {what} — \
                 write \"\" if an empty value is meant"
            ));
        }
        Value::Array(_) => {
            return Some(format!(
                "value is a list; Kubernetes {what} must be strings"
            ));
        }
        Value::Object(_) => {
            return Some(format!(
                "value is a mapping; Kubernetes {what} must be strings"
            ));
        }
    };
    Some(format!(
        "value {shown} is {kind}; Kubernetes {what} must be strings — quote it: \"{shown}\""
    ))
}

fn document_error(file: &Arc<str>, error: DocumentError) -> LoadError {
    let DocumentError { position, kind } = error;
    let file = file.clone();
    let (line, column) = (position.line, position.column);
    match kind {
        DocumentErrorKind::Syntax(message) => LoadError::Syntax {
            file,
            line,
            column,
            message,
        },
        DocumentErrorKind::TooDeep => LoadError::TooDeep {
            file,
            line,
            column,
            limit: MAX_DEPTH,
        },
        DocumentErrorKind::TooLarge => LoadError::TooLarge {
            file,
            line,
            column,
            limit: MAX_NODES,
        },
    }
}

/// A path as shown to users.
fn label(path: &Path) -> Arc<str> {
    path.display().to_string().into()
}

/// The manifest files under `dir`, in path order, with the entries that could not be read in
/// their place in that order.
///
/// Symbolic links are followed, to files and to directories (`base -> ../base`, as kustomize
/// layouts have). Every directory is read at most once per load, by its real path: a link back
/// to an ancestor (a cycle) or a second link to a directory already read adds nothing. `visited`
/// holds the real paths read so far and is shared by every directory of one [`load_paths`] call.
fn walk(dir: &Path, visited: &mut HashSet<PathBuf>) -> Vec<Result<PathBuf, LoadError>> {
    let mut found: Vec<(PathBuf, Option<std::io::Error>)> = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        match fs::canonicalize(&dir) {
            Ok(real) => {
                // Already read, under this path or another one.
                if !visited.insert(real) {
                    continue;
                }
            }
            Err(error) => {
                found.push((dir, Some(error)));
                continue;
            }
        }
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(error) => {
                found.push((dir, Some(error)));
                continue;
            }
        };
        let mut subdirs = Vec::new();
        for entry in entries {
            let entry = match entry {
                Ok(entry) => entry,
                Err(error) => {
                    found.push((dir.clone(), Some(error)));
                    continue;
                }
            };
            if entry.file_name().as_encoded_bytes().starts_with(b".") {
                continue;
            }
            let path = entry.path();
            let file_type = match entry.file_type() {
                // What a link points to decides what it is.
                Ok(t) if t.is_symlink() => fs::metadata(&path).map(|m| m.file_type()),
                other => other,
            };
            match file_type {
                Ok(t) if t.is_dir() => subdirs.push(path),
                Ok(t) if t.is_file() && is_manifest_name(&path) => found.push((path, None)),
                Ok(_) => {}
                // A dangling link (or one that cannot be followed) matters only where a file of
                // that name would be read.
                Err(error) if is_manifest_name(&path) => found.push((path, Some(error))),
                Err(_) => {}
            }
        }
        // Depth first in path order, whatever order the file system lists entries in, so a
        // directory reachable by two paths is always read under the same (first) one.
        subdirs.sort_unstable_by(|a, b| b.cmp(a));
        pending.extend(subdirs);
    }
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
        .into_iter()
        .map(|(path, error)| match error {
            None => Ok(path),
            Some(error) => Err(LoadError::Read {
                file: label(&path),
                error,
            }),
        })
        .collect()
}

/// `*.yaml`, `*.yml` or `*.json`, in any letter case.
fn is_manifest_name(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        ["yaml", "yml", "json"]
            .iter()
            .any(|x| e.eq_ignore_ascii_case(x))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ModelError;

    fn names(loaded: &Loaded) -> Vec<&str> {
        loaded.resources.iter().map(|r| r.name.as_str()).collect()
    }

    fn origin(r: &Resource) -> &Origin {
        r.origin.as_deref().expect("an origin")
    }

    fn line_of(r: &Resource, pointer: &str) -> u32 {
        origin(r).position(pointer).expect(pointer).line
    }

    fn cm(name: &str) -> String {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
    }

    #[test]
    fn every_document_of_a_stream_is_loaded_with_its_index_and_lines() {
        let text = format!("{}---\n{}---\n{}", cm("a"), cm("b"), cm("c"));
        let loaded = load_str("s.yaml", &text);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(names(&loaded), ["a", "b", "c"]);
        let docs: Vec<_> = loaded
            .resources
            .iter()
            .map(|r| origin(r).document)
            .collect();
        assert_eq!(docs, [0, 1, 2]);
        let lines: Vec<_> = loaded
            .resources
            .iter()
            .map(|r| line_of(r, "/metadata/name"))
            .collect();
        assert_eq!(lines, [4, 9, 14]);
        assert_eq!(&*origin(&loaded.resources[1]).file, "s.yaml");
        assert_eq!(origin(&loaded.resources[1]).start.line, 6);
    }

    #[test]
    fn comment_only_documents_are_skipped() {
        let text = format!(
            "# leading comment\n---\n{}---\n# nothing here\n---\n\n---\n{}",
            cm("a"),
            cm("b")
        );
        let loaded = load_str("s.yaml", &text);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(names(&loaded), ["a", "b"]);
        // The skipped documents still count, so indexes match the stream.
        assert_eq!(origin(&loaded.resources[1]).document, 3);
        assert_eq!(line_of(&loaded.resources[1], "/metadata/name"), 15);
    }

    #[test]
    fn helm_source_comment_is_attached_to_the_following_document() {
        let text = format!(
            "---\n# Source: app/templates/a.yaml\n{}---\n# Source: app/templates/empty.yaml\n\
             ---\n# Source: app/templates/b.yaml\n# another comment\n{}---\n{}",
            cm("a"),
            cm("b"),
            cm("c")
        );
        let loaded = load_str("s.yaml", &text);
        let templates: Vec<_> = loaded
            .resources
            .iter()
            .map(|r| origin(r).helm_template.as_deref())
            .collect();
        assert_eq!(
            templates,
            [
                Some("app/templates/a.yaml"),
                Some("app/templates/b.yaml"),
                None
            ]
        );
        let location = loaded.resources[0].locate("/metadata/name").unwrap();
        assert_eq!(location.to_string(), "s.yaml:6:3 (app/templates/a.yaml)");
    }

    #[test]
    fn a_source_comment_before_the_first_document_without_a_marker_is_attached() {
        let loaded = load_str(
            "s.yaml",
            &format!("# Source: c/templates/a.yaml\n{}", cm("a")),
        );
        let template = origin(&loaded.resources[0]).helm_template.as_deref();
        assert_eq!(template, Some("c/templates/a.yaml"));
    }

    #[test]
    fn list_items_are_flattened_with_their_own_positions() {
        let text = "---\n\
            apiVersion: v1\n\
            kind: List\n\
            items:\n\
            - apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: one\n\
            - apiVersion: v1\n  kind: Secret\n  metadata:\n    name: two\n    \
              annotations:\n      argocd.argoproj.io/sync-wave: \"-1\"\n";
        let loaded = load_str("l.yaml", text);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(names(&loaded), ["one", "two"]);
        let two = &loaded.resources[1];
        assert_eq!(two.kind, "Secret");
        assert_eq!(origin(two).document, 0);
        assert_eq!(origin(two).start, Position { line: 9, column: 3 });
        assert_eq!(line_of(two, ""), 9);
        assert_eq!(line_of(two, "/metadata/name"), 12);
        assert_eq!(
            line_of(two, "/metadata/annotations/argocd.argoproj.io~1sync-wave"),
            14
        );
        assert!(origin(two).position("/items/1/metadata/name").is_none());
        assert!(two.raw.get("items").is_none());
    }

    #[test]
    fn typed_lists_are_flattened_too() {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMapList\nitems:\n- {}",
            cm("x").replace('\n', "\n  ")
        );
        let loaded = load_str("l.yaml", &text);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(names(&loaded), ["x"]);
        assert_eq!(line_of(&loaded.resources[0], "/metadata/name"), 7);
    }

    #[test]
    fn a_broken_list_item_is_reported_at_the_item_and_the_others_load() {
        let text = "apiVersion: v1\nkind: List\nitems:\n\
                    - {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n\
                    - {apiVersion: v1, metadata: {name: b}}\n\
                    - 42\n";
        let loaded = load_str("l.yaml", text);
        assert_eq!(names(&loaded), ["a"]);
        let errors: Vec<_> = loaded.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            [
                "l.yaml:5:3: missing or empty `kind`",
                "l.yaml:6:3: document is not a mapping (found number)"
            ]
        );
    }

    #[test]
    fn a_directive_before_the_first_marker_is_part_of_the_document() {
        let loaded = load_str("d.yaml", &format!("%YAML 1.2\n---\n{}", cm("d")));
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(origin(&loaded.resources[0]).document, 0);
        assert_eq!(line_of(&loaded.resources[0], "/metadata/name"), 6);
    }

    #[test]
    fn only_list_kinds_with_an_items_array_are_flattened() {
        let not_a_list_kind = "apiVersion: x/v1\nkind: Inventory\nmetadata:\n  name: i\n\
                               items:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: c}}\n";
        let loaded = load_str("a.yaml", not_a_list_kind);
        assert_eq!(names(&loaded), ["i"]);
        let items_not_an_array =
            "apiVersion: x/v1\nkind: AllowList\nmetadata:\n  name: a\nitems: {a: 1}\n";
        let loaded = load_str("a.yaml", items_not_an_array);
        assert_eq!(names(&loaded), ["a"]);
        let empty = load_str("a.yaml", "apiVersion: v1\nkind: List\nitems: []\n");
        assert!(empty.resources.is_empty() && empty.errors.is_empty());
    }

    #[test]
    fn a_broken_document_does_not_hide_the_others() {
        let text = format!("{}---\nkind: [unclosed\n---\n{}", cm("a"), cm("c"));
        let loaded = load_str("b.yaml", &text);
        assert_eq!(names(&loaded), ["a", "c"]);
        assert_eq!(origin(&loaded.resources[1]).document, 2);
        assert_eq!(loaded.errors.len(), 1);
        let error = &loaded.errors[0];
        assert!(matches!(error, LoadError::Syntax { .. }), "{error}");
        assert_eq!(error.file(), "b.yaml");
        assert!(matches!(error.line(), Some(6..=7)), "{error}");
        assert!(error.to_string().starts_with("b.yaml:"), "{error}");
    }

    #[test]
    fn objects_without_kind_or_name_are_reported_with_their_line() {
        let text = format!(
            "{}---\napiVersion: v1\nmetadata:\n  name: x\n---\n- just\n- a list\n---\n\
             apiVersion: v1\nkind: Pod\nmetadata:\n  labels: {{}}\n",
            cm("ok")
        );
        let loaded = load_str("m.yaml", &text);
        assert_eq!(names(&loaded), ["ok"]);
        let found: Vec<_> = loaded
            .errors
            .iter()
            .map(|e| match e {
                LoadError::NotAnObject { line, error, .. } => (*line, error.clone()),
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(
            found,
            [
                (6, ModelError::MissingField { field: "kind" }),
                (10, ModelError::NotAMapping { found: "array" }),
                (
                    13,
                    ModelError::MissingField {
                        field: "metadata.name"
                    }
                ),
            ]
        );
        assert_eq!(
            loaded.errors[0].to_string(),
            "m.yaml:6:1: missing or empty `kind`"
        );
    }

    #[test]
    fn generate_name_is_enough_without_a_name() {
        let loaded = load_str(
            "j.yaml",
            "apiVersion: batch/v1\nkind: Job\nmetadata:\n  generateName: mig-\n",
        );
        assert!(loaded.errors.is_empty());
        assert_eq!(loaded.resources[0].display_name(), "mig-*");
    }

    #[test]
    fn non_utf8_input_is_reported_with_its_file_and_line() {
        let loaded = load_reader("bad.yaml", &b"a: 1\nb: \xff\xfe\n"[..]);
        assert!(loaded.resources.is_empty());
        match &loaded.errors[..] {
            [LoadError::NotUtf8 { file, line, offset }] => {
                assert_eq!((&**file, *line, *offset), ("bad.yaml", 2, 8));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_byte_order_mark_is_ignored() {
        let text = format!("\u{feff}{}", cm("bom"));
        let loaded = load_reader("bom.yaml", text.as_bytes());
        assert_eq!(names(&loaded), ["bom"]);
        assert_eq!(
            origin(&loaded.resources[0]).position("/kind"),
            Some(Position { line: 2, column: 1 })
        );
    }

    #[test]
    fn json_documents_are_loaded_with_positions() {
        let text = "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \
                    \"metadata\": {\"name\": \"j\", \"labels\": {\"a/b\": \"1\"}}\n}\n";
        let loaded = load_str("c.json", text);
        assert_eq!(names(&loaded), ["j"]);
        let r = &loaded.resources[0];
        assert_eq!(r.label("a/b"), Some("1"));
        assert_eq!(
            origin(r).position("/metadata/labels/a~1b"),
            Some(Position {
                line: 4,
                column: 40
            })
        );
    }

    #[test]
    fn directories_are_walked_recursively_in_path_order_skipping_hidden_entries() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("b/nested")).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join("b/nested/z.yml"), cm("z")).unwrap();
        fs::write(
            root.join("b/a.json"),
            r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"j"}}"#,
        )
        .unwrap();
        fs::write(root.join("a.yaml"), cm("a")).unwrap();
        fs::write(root.join("c.YAML"), cm("c")).unwrap();
        fs::write(root.join("notes.txt"), "not yaml").unwrap();
        fs::write(root.join(".hidden.yaml"), cm("hidden")).unwrap();
        fs::write(root.join(".git/config.yaml"), cm("git")).unwrap();

        let loaded = load_paths(&[root.to_path_buf()]);
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        assert_eq!(names(&loaded), ["a", "j", "z", "c"]);
        let file = &origin(&loaded.resources[2]).file;
        assert_eq!(&**file, root.join("b/nested/z.yml").display().to_string());
    }

    #[test]
    fn label_and_annotation_values_that_are_not_strings_are_input_errors() {
        let text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  annotations:\n    \
                    argocd.argoproj.io/hook: PreSync\n    argocd.argoproj.io/sync-wave: 5\n    \
                    example.com/enabled: true\n    example.com/empty:\n  labels:\n    \
                    app: web\n    tier: {a: 1}\n    version: 1.5\n---\n\
                    apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  \
                    metadata:\n    name: c\n    labels: {replicas: 3}\n";
        let loaded = load_str("n.yaml", text);
        // Every object is still read, so the rest of the input is judged as usual.
        assert_eq!(names(&loaded), ["j", "c"]);
        let errors: Vec<_> = loaded.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            [
                "n.yaml:7:5: metadata.annotations.argocd.argoproj.io/sync-wave: value 5 is a \
                 number; Kubernetes annotations must be strings — quote it: \"5\"",
                "n.yaml:8:5: metadata.annotations.example.com/enabled: value true is a boolean; \
                 Kubernetes annotations must be strings — quote it: \"true\"",
                "n.yaml:9:5: metadata.annotations.example.com/empty: value is null (nothing after \
                 the colon, `~` or `null`); Kubernetes annotations must be strings. The API server \
                 reads it as \"\", but kubectl before 1.33 and tools built on older Kubernetes \
                 client libraries drop every one of this object's annotations — write \"\" if an \
                 empty value is meant",
                "n.yaml:12:5: metadata.labels.tier: value is a mapping; Kubernetes labels must be \
                 strings",
                "n.yaml:13:5: metadata.labels.version: value 1.5 is a number; Kubernetes labels \
                 must be strings — quote it: \"1.5\"",
                "n.yaml:22:14: metadata.labels.replicas: value 3 is a number; Kubernetes labels \
                 must be strings — quote it: \"3\"",
            ]
        );
        assert!(
            loaded
                .errors
                .iter()
                .all(|e| e.metric_label() == "not_a_string")
        );
        // Quoted values are what Kubernetes wants.
        let quoted = load_str(
            "q.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: q\n  annotations:\n    \
             argocd.argoproj.io/sync-wave: \"5\"\n    e: \"\"\n  labels: {a: \"true\"}\n",
        );
        assert!(quoted.errors.is_empty(), "{:?}", quoted.errors);
    }

    #[test]
    fn a_key_repeated_in_one_mapping_is_an_input_error_naming_both_lines() {
        let text = format!(
            "{}---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: first\n  labels:\n    \
             app: a\n    tier: web\n    app: b\n  name: second\ndata: {{k: 1, k: 2}}\n",
            cm("ok")
        );
        let loaded = load_str("d.yaml", &text);
        // The object is still read (the last value wins, as the JSON has one key).
        assert_eq!(names(&loaded), ["ok", "second"]);
        assert_eq!(loaded.resources[1].label("app"), Some("b"));
        let errors: Vec<_> = loaded.errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            errors,
            [
                "d.yaml:13:5: mapping key \"app\" already defined at line 11 of the same mapping",
                "d.yaml:14:3: mapping key \"name\" already defined at line 9 of the same mapping",
                "d.yaml:15:14: mapping key \"k\" already defined at line 15 of the same mapping",
            ]
        );
        assert_eq!(loaded.errors[0].line(), Some(13));
        assert_eq!(loaded.errors[0].metric_label(), "duplicate_key");
        // The same key in different mappings is fine.
        let fine = load_str(
            "f.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: nm, labels: {name: x}}\n",
        );
        assert!(fine.errors.is_empty(), "{:?}", fine.errors);
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_directories_are_followed_once_and_cycles_end() {
        use std::os::unix::fs::symlink;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("base")).unwrap();
        fs::create_dir_all(root.join("overlays/prod")).unwrap();
        fs::write(root.join("base/a.yaml"), cm("from-base")).unwrap();
        fs::write(root.join("overlays/prod/p.yaml"), cm("prod")).unwrap();
        // kustomize-style: the overlay links its base; and a link back to an ancestor.
        symlink("../../base", root.join("overlays/prod/base")).unwrap();
        symlink("..", root.join("overlays/prod/up")).unwrap();
        symlink("missing", root.join("overlays/prod/gone")).unwrap();

        // The overlay alone: its linked base is read, the cycle ends.
        let overlay = load_paths(&[root.join("overlays/prod")]);
        assert!(overlay.errors.is_empty(), "{:?}", overlay.errors);
        assert_eq!(names(&overlay), ["from-base", "prod"]);
        assert_eq!(
            &*origin(&overlay.resources[0]).file,
            root.join("overlays/prod/base/a.yaml").display().to_string()
        );

        // The whole tree: `base` is reachable twice but read once, under its own path.
        let all = load_paths(&[root.to_path_buf()]);
        assert!(all.errors.is_empty(), "{:?}", all.errors);
        assert_eq!(names(&all), ["from-base", "prod"]);
        assert_eq!(
            &*origin(&all.resources[0]).file,
            root.join("base/a.yaml").display().to_string()
        );

        // A dangling link with a manifest name is reported, like an unreadable file.
        symlink("missing.yaml", root.join("base/gone.yaml")).unwrap();
        let dangling = load_paths(&[root.join("base")]);
        assert_eq!(names(&dangling), ["from-base"]);
        assert!(
            matches!(&dangling.errors[..], [LoadError::Read { file, .. }] if file.ends_with("gone.yaml")),
            "{:?}",
            dangling.errors
        );
    }

    #[test]
    fn an_explicit_file_is_loaded_whatever_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".rendered.txt");
        fs::write(&path, cm("t")).unwrap();
        assert_eq!(names(&load_paths(&[path])), ["t"]);
    }

    #[test]
    fn a_missing_path_is_reported_and_loading_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.yaml");
        fs::write(&good, cm("g")).unwrap();
        let missing = dir.path().join("missing.yaml");
        let loaded = load_paths(&[missing.clone(), good]);
        assert_eq!(names(&loaded), ["g"]);
        match &loaded.errors[..] {
            [e @ LoadError::Read { file, .. }] => {
                assert_eq!(&**file, missing.display().to_string());
                assert_eq!(e.line(), None);
                assert!(e.to_string().contains("missing.yaml: cannot read"), "{e}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn dash_reads_standard_input() {
        let input = cm("from-stdin");
        let loaded = load_paths_with_stdin(&[PathBuf::from("-")], || input.as_bytes());
        assert_eq!(names(&loaded), ["from-stdin"]);
        assert_eq!(&*origin(&loaded.resources[0]).file, STDIN_LABEL);
    }

    #[test]
    fn errors_name_their_file_and_line() {
        let loaded = load_str(
            "d.yaml",
            &format!("{}---\na: {}\n", cm("a"), "[".repeat(300)),
        );
        let error = &loaded.errors[0];
        assert_eq!((error.file(), error.line()), ("d.yaml", Some(6)));
        assert_eq!(error.metric_label(), "syntax");
    }

    #[test]
    fn many_inputs_are_parsed_together_and_keep_their_own_indexes() {
        // Enough small files for the parallel path.
        let count = PARALLEL_MIN_BYTES / 100 + 10;
        let files: Vec<(Arc<str>, String)> = (0..count)
            .map(|i| {
                let text = format!("# a comment\n{}---\n{}", cm(&format!("a{i}")), cm("b"));
                (format!("f{i}.yaml").into(), text)
            })
            .collect();
        let mut texts: Vec<_> = files
            .iter()
            .map(|(file, text)| Ok((file.clone(), text.as_str())))
            .collect();
        texts.insert(
            1,
            Err(LoadError::NotUtf8 {
                file: "bad".into(),
                line: 1,
                offset: 0,
            }),
        );
        let loaded = load_texts(texts);
        assert_eq!(loaded.resources.len(), 2 * count);
        assert_eq!(loaded.errors.len(), 1);
        for (i, pair) in loaded.resources.chunks(2).enumerate() {
            assert_eq!(pair[0].name, format!("a{i}"));
            let (a, b) = (origin(&pair[0]), origin(&pair[1]));
            assert_eq!(&*a.file, format!("f{i}.yaml"));
            assert_eq!((a.document, b.document), (0, 1));
            assert_eq!((a.start.line, b.start.line), (2, 7));
        }
    }

    #[test]
    fn big_inputs_load_the_same_as_small_ones() {
        // Large enough for the parallel path; every resource must keep its index and lines.
        let count = 2 * PARALLEL_MIN_BYTES / cm("name-00000").len() + 10;
        let text: String = (0..count)
            .map(|i| format!("---\n# Source: t/{i}.yaml\n{}", cm(&format!("name-{i:05}"))))
            .collect();
        let loaded = load_str("big.yaml", &text);
        assert!(loaded.errors.is_empty());
        assert_eq!(loaded.resources.len(), count);
        for (i, r) in loaded.resources.iter().enumerate() {
            assert_eq!(r.name, format!("name-{i:05}"));
            let o = origin(r);
            assert_eq!(o.document, i);
            assert_eq!(
                o.helm_template.as_deref(),
                Some(format!("t/{i}.yaml").as_str())
            );
            assert_eq!(line_of(r, "/metadata/name"), 6 * i as u32 + 6);
        }
    }
}
