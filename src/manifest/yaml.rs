//! YAML text → JSON values with a position for every JSON pointer.
//!
//! saphyr's parser emits events with spans; [`DocumentParser`] turns them straight into
//! `serde_json::Value`s (no intermediate YAML tree) while keeping a pointer → position index.
//! Building directly from events keeps memory flat, records every duplicate mapping key (the
//! last value wins in the JSON, but the document carries the duplicates so the loader can report
//! them: kubectl, kustomize and Helm reject such files), and puts hard limits on what one document may cost: nesting depth
//! ([`MAX_DEPTH`]) and converted nodes ([`MAX_NODES`], which also stops alias bombs).
//!
//! Scalars follow the YAML 1.2 core schema exactly as saphyr resolves them (`1` is a number,
//! `"1"` a string, `true` a boolean, `~` null). JSON has no infinities or NaN, so those become
//! the strings `.inf`, `-.inf` and `.nan`; mapping keys that are not strings become their JSON
//! text (`1`, `true`, `null`, `[1,2]`).

use std::borrow::Cow;
use std::collections::HashMap;

use saphyr::Scalar;
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, Span, SpannedEventReceiver, Tag};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::Position;
use syncguard_argocd::pointers::{PointerIndex, Token};

/// Deepest nesting of sequences and mappings accepted in one document. Real manifests stay under
/// 20; the cap keeps later recursive walks over the JSON (and its drop) far from stack overflow.
pub const MAX_DEPTH: usize = 256;

/// Most nodes one document may expand to, counting alias expansions and the copies kept for
/// anchors. A 30-line Deployment has about 60 nodes; a "billion laughs" alias bomb stops here
/// instead of exhausting memory.
pub const MAX_NODES: usize = 1_000_000;

/// Most repeated keys recorded per document. Each costs a scan of the document's pointers to
/// find the first occurrence; the cap keeps a hostile document of repeats linear, and a real one
/// never comes close.
pub(crate) const MAX_DUPLICATES: usize = 32;

/// One document of a stream, as far as YAML is concerned.
#[derive(Debug)]
pub(crate) enum Document {
    /// A document with content.
    Parsed(ParsedDocument),
    /// `---` followed by nothing, comments only, or an explicit `null`: skipped by loaders, but
    /// it still takes a document index.
    Empty,
    /// A document that could not be read.
    Failed(DocumentError),
}

/// A document with content, converted to JSON.
#[derive(Debug)]
pub(crate) struct ParsedDocument {
    /// Where the root node starts.
    pub start: Position,
    /// The first line that belongs to this document (its `---` line, or the line where the
    /// previous document ended), so that comments before the root node can be attributed to it.
    pub first_line: u32,
    /// The document as JSON.
    pub value: Value,
    /// Every JSON pointer with the position of its key (or sequence item).
    pub pointers: PointerIndex,
    /// Keys repeated within one mapping, in document order (at most [`MAX_DUPLICATES`]).
    pub duplicates: Vec<DuplicateKey>,
}

/// A key that occurs a second (or later) time in one mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DuplicateKey {
    /// The key.
    pub key: String,
    /// Where this occurrence is.
    pub position: Position,
    /// Where the first occurrence is; `None` inside complex keys, which have no pointers.
    pub first: Option<Position>,
}

/// Why a document could not be read, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DocumentError {
    /// Where the problem was found.
    pub position: Position,
    /// What the problem is.
    pub kind: DocumentErrorKind,
}

/// The problems [`DocumentParser`] can find in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DocumentErrorKind {
    /// A syntax error: the scanner's or parser's message.
    Syntax(String),
    /// Nesting deeper than [`MAX_DEPTH`].
    TooDeep,
    /// More than [`MAX_NODES`] nodes.
    TooLarge,
}

/// Parses every document of `text`, a piece of a file that starts `line_offset` lines into it.
///
/// A syntax error ends the parse: the documents completed before it are returned, followed by
/// one [`Document::Failed`] for the document holding the error.
#[cfg(test)]
pub(crate) fn parse_documents(text: &str, line_offset: u32) -> Vec<Document> {
    DocumentParser::default().parse(text, line_offset)
}

/// Parses YAML text into [`Document`]s. It keeps its working buffers between calls, so a
/// thread that parses thousands of small documents allocates them once.
#[derive(Debug, Default)]
pub(crate) struct DocumentParser {
    builder: Builder,
}

impl DocumentParser {
    /// Parses every document of `text`, a piece of a file that starts `line_offset` lines into
    /// it.
    ///
    /// A syntax error ends the parse: the documents completed before it are returned, followed
    /// by one [`Document::Failed`] for the document holding the error.
    pub(crate) fn parse(&mut self, text: &str, line_offset: u32) -> Vec<Document> {
        let builder = &mut self.builder;
        builder.begin_text(line_offset);
        // The event iterator, not `Parser::load`: `load` recurses once per nesting level (a
        // 200 KB line of `- - - …` overflows the stack) and asserts on malformed event orders.
        for event in Parser::new_from_str(text) {
            match event {
                Ok((event, span)) => builder.on_event(event, span),
                Err(error) => {
                    let position = builder.position(*error.marker());
                    builder.docs.push(Document::Failed(DocumentError {
                        position,
                        kind: DocumentErrorKind::Syntax(error.info().to_string()),
                    }));
                    break;
                }
            }
        }
        std::mem::take(&mut builder.docs)
    }
}

/// The first document of `text` as JSON (`Null` when there is none), or the syntax error.
/// For YAML embedded in a field, such as the blocks of Argo CD's `argocd-cm`.
pub fn parse_yaml_value(text: &str) -> Result<Value, String> {
    let docs = DocumentParser::default().parse(text, 0);
    match docs.into_iter().next() {
        Some(Document::Parsed(d)) => Ok(d.value),
        Some(Document::Empty) | None => Ok(Value::Null),
        Some(Document::Failed(e)) => Err(match e.kind {
            DocumentErrorKind::Syntax(m) => format!("line {}: {m}", e.position.line),
            DocumentErrorKind::TooDeep => "nested too deeply".to_string(),
            DocumentErrorKind::TooLarge => "too large".to_string(),
        }),
    }
}

/// What a node is to its parent; decided when the node starts.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// The document's root node.
    Root,
    /// An item of the sequence on top of the stack.
    Item,
    /// The value for the pending key of the mapping on top of the stack.
    Value,
    /// A key of the mapping on top of the stack.
    Key,
}

/// A sequence or mapping being built.
#[derive(Debug)]
struct Frame {
    container: Container,
    role: Role,
    /// Where the node starts (used as the position of a complex key).
    start: Position,
    /// Anchor id to register when the node completes (0: none).
    anchor: usize,
    /// The node's id in the pointer index (`None` inside complex keys).
    node: Option<u32>,
    /// [`Builder::nodes`] when the node started, to know its size for anchors.
    nodes_before: usize,
}

#[derive(Debug)]
enum Container {
    Sequence(Vec<Value>),
    Mapping {
        map: Map<String, Value>,
        /// The key read and waiting for its value, with the key's position.
        key: Option<(String, Position)>,
    },
}

/// The event receiver that builds JSON documents.
#[derive(Debug, Default)]
struct Builder {
    line_offset: u32,
    docs: Vec<Document>,
    /// The first line of the next document (see [`ParsedDocument::first_line`]).
    first_line: u32,
    stack: Vec<Frame>,
    /// How many frames on the stack are (inside) complex mapping keys: nodes inside a key have
    /// no JSON pointer.
    key_frames: usize,
    pointers: PointerIndex,
    root: Option<Value>,
    start: Option<Position>,
    /// Completed anchored nodes of this document: id → (value, size in nodes).
    anchors: HashMap<usize, (Value, usize)>,
    /// Nodes converted so far in this document, alias expansions included.
    nodes: usize,
    /// `nodes` plus the nodes copied to keep anchors; this is what [`MAX_NODES`] caps.
    work: usize,
    /// Set when the document hit a limit; its remaining events are ignored.
    failure: Option<DocumentError>,
    /// Repeated mapping keys of this document.
    duplicates: Vec<DuplicateKey>,
}

impl<'input> SpannedEventReceiver<'input> for Builder {
    fn on_event(&mut self, event: Event<'input>, span: Span) {
        let position = self.position(span.start);
        match event {
            Event::Nothing | Event::StreamStart | Event::StreamEnd => {}
            Event::DocumentStart(_) => self.start_document(),
            Event::DocumentEnd => self.end_document(span),
            _ if self.failure.is_some() => {}
            Event::Scalar(text, style, anchor, tag) => {
                let value = scalar_to_json(text, style, tag.as_ref());
                self.leaf(value, 1, anchor, position);
            }
            Event::Alias(id) => self.alias(id, position),
            Event::SequenceStart(anchor, _) => {
                self.open(Container::Sequence(Vec::new()), anchor, position);
            }
            Event::MappingStart(anchor, _) => {
                let container = Container::Mapping {
                    map: Map::new(),
                    key: None,
                };
                self.open(container, anchor, position);
            }
            Event::SequenceEnd | Event::MappingEnd => self.close(),
        }
    }
}

impl Builder {
    /// Prepares for a new text; buffers are kept, state is reset.
    fn begin_text(&mut self, line_offset: u32) {
        self.line_offset = line_offset;
        self.first_line = line_offset.saturating_add(1);
        self.docs = Vec::new();
        self.start_document();
    }

    /// A parser marker (region-relative line, 0-based column) as a file position.
    fn position(&self, marker: Marker) -> Position {
        Position {
            line: to_u32(marker.line()).saturating_add(self.line_offset),
            column: to_u32(marker.col()).saturating_add(1),
        }
    }

    fn start_document(&mut self) {
        self.stack.clear();
        self.key_frames = 0;
        self.pointers.clear();
        self.root = None;
        self.start = None;
        self.anchors.clear();
        self.nodes = 0;
        self.work = 0;
        self.failure = None;
        self.duplicates.clear();
    }

    fn end_document(&mut self, span: Span) {
        let document = match (self.failure.take(), self.root.take(), self.start) {
            (Some(error), _, _) => Document::Failed(error),
            (None, Some(value), Some(start)) if !value.is_null() => {
                let pointers = self.pointers.take_finished();
                Document::Parsed(ParsedDocument {
                    start,
                    first_line: self.first_line,
                    value,
                    pointers,
                    duplicates: std::mem::take(&mut self.duplicates),
                })
            }
            _ => Document::Empty,
        };
        self.docs.push(document);
        self.first_line = self.position(span.end).line;
        self.start_document();
    }

    /// Stops building the current document; it will be reported as `kind` at `position`.
    fn fail(&mut self, kind: DocumentErrorKind, position: Position) {
        self.failure = Some(DocumentError { position, kind });
        self.stack.clear();
        self.anchors.clear();
        self.pointers.clear();
        self.root = None;
    }

    /// Counts `size` more nodes (`copied` more for anchor copies); false if over the limit.
    fn charge(&mut self, size: usize, copied: usize, position: Position) -> bool {
        self.nodes = self.nodes.saturating_add(size);
        self.work = self.work.saturating_add(size).saturating_add(copied);
        if self.work > MAX_NODES {
            self.fail(DocumentErrorKind::TooLarge, position);
            return false;
        }
        true
    }

    /// The role of the next node, from the top of the stack.
    fn next_role(&self) -> Role {
        match self.stack.last() {
            None => Role::Root,
            Some(Frame {
                container: Container::Sequence(_),
                ..
            }) => Role::Item,
            Some(Frame {
                container: Container::Mapping { key: Some(_), .. },
                ..
            }) => Role::Value,
            Some(_) => Role::Key,
        }
    }

    /// Starts a node at `position`: records its pointer's position (for a mapping value, the
    /// key's position). Returns the node's role and its id in the pointer index.
    fn enter(&mut self, position: Position) -> (Role, Option<u32>) {
        let role = self.next_role();
        if self.key_frames > 0 {
            return (role, None);
        }
        let node = match (role, self.stack.last()) {
            (Role::Root, _) => {
                self.start = Some(position);
                self.pointers.push_root(position)
            }
            (
                Role::Item,
                Some(Frame {
                    container: Container::Sequence(items),
                    node: Some(parent),
                    ..
                }),
            ) => self
                .pointers
                .push(*parent, Token::Index(items.len()), position),
            (
                Role::Value,
                Some(Frame {
                    container:
                        Container::Mapping {
                            key: Some((key, key_position)),
                            ..
                        },
                    node: Some(parent),
                    ..
                }),
            ) => self.pointers.push(*parent, Token::Key(key), *key_position),
            _ => None,
        };
        (role, node)
    }

    /// Adds a complete node to its parent (or makes it the root).
    fn attach(&mut self, value: Value, role: Role, position: Position) {
        match role {
            Role::Root => self.root = Some(value),
            Role::Item => {
                if let Some(Frame {
                    container: Container::Sequence(items),
                    ..
                }) = self.stack.last_mut()
                {
                    items.push(value);
                }
            }
            Role::Value => {
                let mut repeated = None;
                if let Some(Frame {
                    container: Container::Mapping { map, key },
                    node,
                    ..
                }) = self.stack.last_mut()
                    && let Some((key, key_position)) = key.take()
                {
                    // The last value wins in the JSON; the repeat is recorded for the loader to
                    // report. One lookup either way, so unique keys cost nothing more.
                    match map.entry(key) {
                        Entry::Vacant(slot) => {
                            slot.insert(value);
                        }
                        Entry::Occupied(mut slot) => {
                            repeated = Some((slot.key().clone(), key_position, *node));
                            slot.insert(value);
                        }
                    }
                }
                if let Some((key, position, node)) = repeated
                    && self.duplicates.len() < MAX_DUPLICATES
                {
                    let first = node.and_then(|parent| self.pointers.first_child(parent, &key));
                    self.duplicates.push(DuplicateKey {
                        key,
                        position,
                        first,
                    });
                }
            }
            Role::Key => {
                if let Some(Frame {
                    container: Container::Mapping { key, .. },
                    ..
                }) = self.stack.last_mut()
                {
                    *key = Some((key_string(value), position));
                }
            }
        }
    }

    /// Remembers a completed anchored node for later aliases.
    fn remember_anchor(&mut self, anchor: usize, value: &Value, size: usize, position: Position) {
        if anchor == 0 || !self.charge(0, size, position) {
            return;
        }
        self.anchors.insert(anchor, (value.clone(), size));
    }

    /// A scalar or an expanded alias: a node with no children events.
    fn leaf(&mut self, value: Value, size: usize, anchor: usize, position: Position) {
        if !self.charge(size, 0, position) {
            return;
        }
        let (role, _) = self.enter(position);
        self.remember_anchor(anchor, &value, size, position);
        if self.failure.is_none() {
            self.attach(value, role, position);
        }
    }

    fn alias(&mut self, id: usize, position: Position) {
        let Some(size) = self.anchors.get(&id).map(|(_, size)| *size) else {
            // The parser knows the anchor, but not in this document before the alias: it is
            // an alias inside its own anchor, or to an anchor of an earlier document.
            let message = "alias to an anchor not completed earlier in this document".to_string();
            self.fail(DocumentErrorKind::Syntax(message), position);
            return;
        };
        // Check before copying: the copy itself is what an alias bomb uses to exhaust memory.
        if self.work.saturating_add(size) > MAX_NODES {
            self.fail(DocumentErrorKind::TooLarge, position);
            return;
        }
        if let Some(value) = self.anchors.get(&id).map(|(value, _)| value.clone()) {
            self.leaf(value, size, 0, position);
        }
    }

    fn open(&mut self, container: Container, anchor: usize, position: Position) {
        if self.stack.len() >= MAX_DEPTH {
            self.fail(DocumentErrorKind::TooDeep, position);
            return;
        }
        let nodes_before = self.nodes;
        if !self.charge(1, 0, position) {
            return;
        }
        let (role, node) = self.enter(position);
        if matches!(role, Role::Key) || self.key_frames > 0 {
            self.key_frames = self.key_frames.saturating_add(1);
        }
        self.stack.push(Frame {
            container,
            role,
            start: position,
            anchor,
            node,
            nodes_before,
        });
    }

    fn close(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        if self.key_frames > 0 {
            self.key_frames -= 1;
        }
        let value = match frame.container {
            Container::Sequence(items) => Value::Array(items),
            Container::Mapping { map, .. } => Value::Object(map),
        };
        let size = self.nodes.saturating_sub(frame.nodes_before);
        self.remember_anchor(frame.anchor, &value, size, frame.start);
        if self.failure.is_none() {
            self.attach(value, frame.role, frame.start);
        }
    }
}

/// A scalar resolved by saphyr's YAML 1.2 core schema rules, as JSON.
fn scalar_to_json(text: Cow<'_, str>, style: ScalarStyle, tag: Option<&Cow<'_, Tag>>) -> Value {
    // A core-schema tag that does not fit the text (`!!int abc`) makes saphyr give up; keep the
    // text then. Only tagged scalars need the copy.
    let fallback = tag.map(|_| text.clone());
    match Scalar::parse_from_cow_and_metadata(text, style, tag) {
        Some(Scalar::Null) => Value::Null,
        Some(Scalar::Boolean(b)) => Value::Bool(b),
        Some(Scalar::Integer(i)) => Value::from(i),
        Some(Scalar::FloatingPoint(f)) => float_to_json(f.0),
        Some(Scalar::String(s)) => Value::String(s.into_owned()),
        None => Value::String(fallback.map(Cow::into_owned).unwrap_or_default()),
    }
}

/// A float as a JSON number; JSON cannot hold non-finite numbers, so those keep their YAML name.
fn float_to_json(f: f64) -> Value {
    match serde_json::Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String(".nan".to_string()),
        None if f > 0.0 => Value::String(".inf".to_string()),
        None => Value::String("-.inf".to_string()),
    }
}

/// The JSON object key for a YAML key: strings as they are, anything else as its JSON text.
fn key_string(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use syncguard_argocd::pointers::ROOT;

    fn parse(text: &str) -> Vec<Document> {
        parse_documents(text, 0)
    }

    fn only(text: &str) -> ParsedDocument {
        let mut docs = parse(text);
        assert_eq!(docs.len(), 1, "{docs:?}");
        match docs.remove(0) {
            Document::Parsed(d) => d,
            other => panic!("expected a parsed document, got {other:?}"),
        }
    }

    fn failure(text: &str) -> DocumentError {
        parse(text)
            .into_iter()
            .find_map(|d| match d {
                Document::Failed(e) => Some(e),
                _ => None,
            })
            .expect("a failed document")
    }

    fn at(doc: &ParsedDocument, pointer: &str) -> (u32, u32) {
        let p = doc
            .pointers
            .get(pointer)
            .unwrap_or_else(|| panic!("no position for {pointer}: {:?}", doc.pointers));
        (p.line, p.column)
    }

    #[test]
    fn scalars_follow_the_yaml_1_2_core_schema() {
        let doc = only(
            "int: 1\nstr: \"1\"\nbool: true\nno: no\ntilde: ~\nnull: null\nempty:\n\
             float: 1.5\nexp: 1e3\nhex: 0x1F\ninf: .inf\nninf: -.inf\nnan: .NaN\n\
             tagged: !!str 2\nbad: !!int abc\ncustom: !thing 3\n",
        );
        assert_eq!(
            doc.value,
            json!({"int": 1, "str": "1", "bool": true, "no": "no", "tilde": null,
                   "null": null, "empty": null, "float": 1.5, "exp": 1000.0, "hex": 31,
                   "inf": ".inf", "ninf": "-.inf", "nan": ".nan", "tagged": "2",
                   "bad": "abc", "custom": 3})
        );
    }

    #[test]
    fn non_string_keys_become_their_json_text() {
        let doc = only("1: a\ntrue: b\n~: c\n1.5: d\n? [1, x]\n: e\n? {a: 1}\n: f\n");
        assert_eq!(
            doc.value,
            json!({"1": "a", "true": "b", "null": "c", "1.5": "d", "[1,\"x\"]": "e",
                   "{\"a\":1}": "f"})
        );
        // Nothing inside a complex key gets a pointer of its own.
        assert_eq!(doc.pointers.child(ROOT, "0"), None);
        assert_eq!(at(&doc, "/[1,\"x\"]"), (5, 3));
    }

    #[test]
    fn every_key_and_item_has_the_position_of_the_key_or_item() {
        let doc = only(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n  annotations:\n    \
             argocd.argoproj.io/sync-wave: \"1\"\n    a~b: x\ndata:\n  list:\n  - one\n  - [two, three]\n",
        );
        assert_eq!(at(&doc, ""), (1, 1));
        assert_eq!(doc.start, Position { line: 1, column: 1 });
        assert_eq!(at(&doc, "/kind"), (2, 1));
        assert_eq!(at(&doc, "/metadata/name"), (4, 3));
        assert_eq!(
            at(&doc, "/metadata/annotations/argocd.argoproj.io~1sync-wave"),
            (6, 5)
        );
        assert_eq!(at(&doc, "/metadata/annotations/a~0b"), (7, 5));
        assert_eq!(at(&doc, "/data/list"), (9, 3));
        assert_eq!(at(&doc, "/data/list/0"), (10, 5));
        assert_eq!(at(&doc, "/data/list/1"), (11, 5));
        assert_eq!(at(&doc, "/data/list/1/1"), (11, 11));
    }

    #[test]
    fn positions_are_shifted_by_the_line_offset() {
        let docs = parse_documents("---\na: 1\n", 10);
        let Some(Document::Parsed(doc)) = docs.first() else {
            panic!("{docs:?}")
        };
        assert_eq!(doc.first_line, 11);
        assert_eq!(at(doc, "/a"), (12, 1));
    }

    #[test]
    fn empty_and_comment_only_and_null_documents_are_empty() {
        let docs = parse("---\n---\n# only a comment\n---\nnull\n---\na: 1\n");
        let kinds: Vec<_> = docs
            .iter()
            .map(|d| match d {
                Document::Parsed(_) => "parsed",
                Document::Empty => "empty",
                Document::Failed(_) => "failed",
            })
            .collect();
        assert_eq!(kinds, ["empty", "empty", "empty", "parsed"]);
    }

    #[test]
    fn aliases_are_resolved_and_point_at_the_alias() {
        let doc = only("base: &b {x: 1}\ncopy: *b\n");
        assert_eq!(doc.value, json!({"base": {"x": 1}, "copy": {"x": 1}}));
        assert_eq!(at(&doc, "/copy"), (2, 1));
        assert_eq!(doc.pointers.get("/copy/x"), None);
    }

    #[test]
    fn an_alias_bomb_is_stopped_by_the_node_limit() {
        let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            let items = [prev.as_str(); 10].join(", ");
            text.push_str(&format!("a{i}: &a{i} [{items}]\n"));
        }
        assert_eq!(failure(&text).kind, DocumentErrorKind::TooLarge);
    }

    #[test]
    fn nesting_deeper_than_the_limit_is_an_error_not_a_crash() {
        let block = "- ".repeat(MAX_DEPTH + 1) + "x\n";
        let error = failure(&block);
        assert_eq!(error.kind, DocumentErrorKind::TooDeep);
        assert_eq!(error.position.line, 1);
        let flow = "[".repeat(100_000);
        assert!(matches!(failure(&flow).kind, DocumentErrorKind::Syntax(_)));
    }

    #[test]
    fn duplicate_keys_let_the_last_value_win() {
        let doc = only("a: 1\nb: 2\na: 3\n");
        assert_eq!(doc.value, json!({"a": 3, "b": 2}));
        assert_eq!(at(&doc, "/a"), (3, 1));
    }

    #[test]
    fn a_syntax_error_keeps_the_documents_before_it() {
        let docs = parse("a: 1\n...\nb: [\n");
        assert!(matches!(docs.first(), Some(Document::Parsed(_))));
        assert!(matches!(
            docs.get(1),
            Some(Document::Failed(DocumentError {
                kind: DocumentErrorKind::Syntax(_),
                ..
            }))
        ));
    }

    #[test]
    fn repeated_keys_are_recorded_with_both_positions_and_the_last_value_wins() {
        let doc = only("a: 1\nb:\n  c: x\n  c: y\na: 2\n");
        assert_eq!(doc.value, json!({"a": 2, "b": {"c": "y"}}));
        let found: Vec<_> = doc
            .duplicates
            .iter()
            .map(|d| (d.key.as_str(), d.position.line, d.first.map(|p| p.line)))
            .collect();
        assert_eq!(found, [("c", 4, Some(3)), ("a", 5, Some(1))]);
        // In a complex key there are no pointers: the repeat is still recorded.
        let doc = only("? {k: 1, k: 2}\n: v\n");
        assert_eq!(doc.duplicates.len(), 1);
        assert_eq!(doc.duplicates[0].first, None);
    }

    #[test]
    fn a_document_of_repeats_stays_cheap() {
        let text: String = (0..50_000).map(|i| format!("k: {i}\n")).collect();
        let started = std::time::Instant::now();
        let doc = only(&text);
        assert_eq!(doc.value, json!({"k": 49_999}));
        assert_eq!(doc.duplicates.len(), MAX_DUPLICATES);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn json_with_tab_indentation_is_read() {
        let doc = only("{\n\t\"a\": 1,\n\t\"b\": [1, \"\\/x\"]\n}\n");
        assert_eq!(doc.value, json!({"a": 1, "b": [1, "/x"]}));
        assert_eq!(at(&doc, "/b/1"), (3, 11));
    }
}
