//! YAML text → JSON values with a position for every JSON pointer.
//!
//! saphyr's parser emits events with spans; [`DocumentParser`] turns them straight into
//! `serde_json::Value`s (no intermediate YAML tree) while keeping a pointer → position index.
//! Building directly from events keeps memory flat, records every duplicate mapping key (the
//! last value wins in the JSON, but the document carries the duplicates so the loader can report
//! them: kubectl, kustomize and Helm reject such files), and puts hard limits on what one document may cost: nesting depth
//! ([`MAX_DEPTH`]) and converted nodes ([`MAX_NODES`], which also stops alias bombs).
//!
//! Values are what Kubernetes and Argo CD read, not what a YAML 1.2 reader would: they decode
//! manifests with sigs.k8s.io/yaml (a YAML 1.1 reader, then Go's JSON), so scalars resolve by
//! its rules (`scalar`: `0755` is 493, `yes` and `on` are `true`, `1e3` is the integer 1000,
//! `.inf` fails the document), mapping keys become its JSON keys (`on:` is the key `true`; a
//! null, sequence or mapping key fails the document), and merge keys are merged (`<<: *base`,
//! `<<: [*a, *b]`): entries are applied in document order and the last write wins, so keys after
//! a `<<` override the merged ones (and a `<<` after a key overrides that key, as go-yaml v2
//! does); in a `<<` sequence the earlier mappings win. A merged-in field points at its `<<` key.
//! Merging moves the values already built, which the node budget has already counted.
//!
//! Differences in syntax are bridged where saphyr refuses what Kubernetes' reader accepts:
//! continuation lines of a multi-line quoted scalar indented less than the mapping holding it (or
//! by tabs), continuation lines of a flow collection (`args: ["a",` then `"b"]`) indented as little,
//! and a tab between `:` and its value. Such a text is parsed again with those blanks replaced
//! (they are never part of a value); see [`repair_syntax`]. Lines keep their numbers; on a
//! re-indented line, columns shift.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Span, SpannedEventReceiver};
use serde_json::map::Entry;
use serde_json::{Map, Value};

use super::Position;
use super::scalar::{Resolved, is_merge_key, resolve};
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
        let mut repaired: Option<String> = None;
        let mut repairs = 0;
        loop {
            let current = repaired.as_deref().unwrap_or(text);
            let Some(error) = self.parse_text(current, line_offset) else {
                break;
            };
            if repairs < MAX_REPAIRS
                && let Some(fixed) = repair_syntax(current, &error)
            {
                repairs += 1;
                repaired = Some(fixed);
                continue;
            }
            let builder = &mut self.builder;
            let position = builder.position(*error.marker());
            builder.docs.push(Document::Failed(DocumentError {
                position,
                kind: DocumentErrorKind::Syntax(error.info().to_string()),
            }));
            break;
        }
        std::mem::take(&mut self.builder.docs)
    }

    /// Feeds every event of `text` to the builder; the syntax error that stopped it, if any.
    fn parse_text(&mut self, text: &str, line_offset: u32) -> Option<ScanError> {
        let builder = &mut self.builder;
        builder.begin_text(line_offset);
        // The event iterator, not `Parser::load`: `load` recurses once per nesting level (a
        // 200 KB line of `- - - …` overflows the stack) and asserts on malformed event orders.
        for event in Parser::new_from_str(text) {
            match event {
                Ok((event, span)) => builder.on_event(event, span),
                Err(error) => return Some(error),
            }
        }
        None
    }
}

/// Most repairs per text (each costs a parse of the text again).
const MAX_REPAIRS: usize = 64;

/// `text` with the blanks that stopped saphyr replaced, when the error is one Kubernetes' YAML
/// reader does not make:
/// - a continuation line of a quoted scalar indented less than the enclosing block ("invalid
///   indentation in quoted scalar", reported at the opening quote) or by a tab ("tab cannot be
///   used as indentation", reported at the tab);
/// - a continuation line of a flow collection indented less than saphyr wants ("invalid
///   indentation", "... in flow construct": only raised inside flow collections);
/// - a tab between a `:` and its value.
///
/// None of these blanks is part of a value, so replacing them keeps every value. A continuation
/// line that is a document marker at column 0 is an error for both readers and is left alone.
fn repair_syntax(text: &str, error: &ScanError) -> Option<String> {
    let marker = error.marker();
    let line_start = line_start(text, marker.line())?;
    let offset = line_start + text.get(line_start..)?.char_indices().nth(marker.col())?.0;
    match error.info() {
        "invalid indentation in quoted scalar" => reindent_quoted(text, offset),
        // Only raised inside flow collections, at the first token of a line.
        "invalid indentation" | "invalid indentation in flow construct" => {
            reindent_flow_line(text, line_start, offset)
        }
        "':' must be followed by a valid YAML whitespace" => {
            // Tabs between a `:` and the value it introduces are separation, as spaces are.
            let before = text.get(..offset)?;
            let blanks = before.len() - before.trim_end_matches([' ', '\t']).len();
            if blanks == 0 || !before.get(..offset - blanks)?.ends_with(':') {
                return None;
            }
            let mut fixed = String::with_capacity(text.len());
            fixed.push_str(text.get(..offset - blanks)?);
            fixed.push_str(&" ".repeat(blanks));
            fixed.push_str(text.get(offset..)?);
            Some(fixed)
        }
        "tab cannot be used as indentation" => {
            // Only blanks before the tab: it is in the leading blanks of a continuation line.
            let blanks = text
                .get(line_start..)?
                .bytes()
                .take_while(|b| matches!(b, b' ' | b'\t'));
            let end = line_start + blanks.count();
            if end <= offset {
                return None;
            }
            let mut fixed = String::with_capacity(text.len());
            fixed.push_str(text.get(..line_start)?);
            fixed.push_str(&" ".repeat(end - line_start));
            fixed.push_str(text.get(end..)?);
            Some(fixed)
        }
        _ => None,
    }
}

/// `text` with the line at `line_start`, a continuation line of a flow collection whose first
/// token (at byte `token`) saphyr finds indented too little, indented deeper: one column past the
/// previous line's content (after its indentation and `- ` indicators), or one more than it has.
/// Kubernetes' reader takes no account of indentation inside flow collections, and there line
/// breaks and leading blanks only separate tokens.
fn reindent_flow_line(text: &str, line_start: usize, token: usize) -> Option<String> {
    let blanks = text.get(line_start..token)?;
    if !blanks.bytes().all(|b| matches!(b, b' ' | b'\t')) {
        return None;
    }
    let rest = text.get(token..)?;
    if blanks.is_empty() && (rest.starts_with("---") || rest.starts_with("...")) {
        return None;
    }
    let previous = text
        .get(..line_start)?
        .trim_end_matches(['\n', '\r'])
        .rsplit('\n')
        .next()
        .unwrap_or_default();
    let content = previous.trim_start_matches([' ', '\t', '-']).len();
    let previous_column = previous.get(..previous.len() - content)?.chars().count();
    let column = (previous_column + 1).max(blanks.len() + 1);
    let mut fixed = String::with_capacity(text.len() + column);
    fixed.push_str(text.get(..line_start)?);
    fixed.push_str(&" ".repeat(column));
    fixed.push_str(rest);
    Some(fixed)
}

/// The byte offset where 1-based line `line` starts.
fn line_start(text: &str, line: usize) -> Option<usize> {
    if line <= 1 {
        return Some(0);
    }
    text.match_indices('\n').nth(line - 2).map(|(i, _)| i + 1)
}

/// `text` with every non-blank continuation line of the quoted scalar opening at byte `quote`
/// indented one column deeper than the opening quote.
fn reindent_quoted(text: &str, quote: usize) -> Option<String> {
    let bytes = text.as_bytes();
    let delimiter = *bytes.get(quote)?;
    if !matches!(delimiter, b'"' | b'\'') {
        return None;
    }
    let line_start = text.get(..quote)?.rfind('\n').map_or(0, |i| i + 1);
    let indent = " ".repeat(text.get(line_start..quote)?.chars().count() + 1);
    let mut fixed = String::with_capacity(text.len() + 256);
    let mut copied = 0; // bytes of `text` already in `fixed`
    let mut i = quote + 1;
    loop {
        match *bytes.get(i)? {
            // An escape; an escaped line break is a line break like any other here.
            b'\\' if delimiter == b'"' => {
                i += if matches!(bytes.get(i + 1), Some(b'\n' | b'\r')) {
                    1
                } else {
                    2
                };
            }
            b'\'' if delimiter == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 2,
            c if c == delimiter => break,
            b'\n' => {
                let next = i + 1;
                let mut content = next;
                while matches!(bytes.get(content), Some(b' ' | b'\t')) {
                    content += 1;
                }
                match bytes.get(content) {
                    None => return None,
                    Some(b'\n' | b'\r') => {}
                    Some(_) => {
                        let rest = text.get(next..)?;
                        let marker = rest.starts_with("---") || rest.starts_with("...");
                        if content == next
                            && marker
                            && rest
                                .as_bytes()
                                .get(3)
                                .is_none_or(|b| b.is_ascii_whitespace())
                        {
                            return None;
                        }
                        fixed.push_str(text.get(copied..next)?);
                        fixed.push_str(&indent);
                        copied = content;
                    }
                }
                i = content;
            }
            _ => i += 1,
        }
    }
    fixed.push_str(text.get(copied..)?);
    Some(fixed)
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
        /// The key read and waiting for its value.
        key: Option<PendingKey>,
        /// Keys of `map` whose value came from a merge (`<<`): setting one of them again is an
        /// override, not a repeated key.
        merged: HashSet<String>,
    },
}

/// A mapping key waiting for its value.
#[derive(Debug)]
struct PendingKey {
    /// The JSON key; empty for a merge key.
    name: String,
    /// Where the key is.
    position: Position,
    /// The merge key `<<`: its value is merged into the mapping.
    merge: bool,
}

/// A complete node: a scalar keeps its YAML type until its parent decides whether it is a key
/// (`1e6:` is the key `1e+06`) or a value (the number 1000000).
#[derive(Debug, Clone)]
enum Node {
    Scalar(Resolved),
    Tree(Value),
}

/// The event receiver that builds JSON documents.
#[derive(Debug, Default)]
struct Builder {
    line_offset: u32,
    docs: Vec<Document>,
    /// The first line of the next document (see [`ParsedDocument::first_line`]).
    first_line: u32,
    stack: Vec<Frame>,
    /// How many frames on the stack are (inside) the value of a merge key: what is merged gets
    /// the position of its `<<`, so nodes inside have no JSON pointer of their own.
    unindexed: usize,
    pointers: PointerIndex,
    root: Option<Value>,
    start: Option<Position>,
    /// Completed anchored nodes of this document: id → (node, size in nodes).
    anchors: HashMap<usize, (Node, usize)>,
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
            Event::Scalar(text, style, _, tag)
                if matches!(self.next_role(), Role::Key)
                    && is_merge_key(
                        &text,
                        style == ScalarStyle::Plain,
                        tag_parts(tag.as_ref()),
                    ) =>
            {
                self.merge_key(position);
            }
            Event::Scalar(text, style, anchor, tag) => {
                match resolve(text, style == ScalarStyle::Plain, tag_parts(tag.as_ref())) {
                    Ok(scalar) => self.leaf(Node::Scalar(scalar), 1, anchor, position),
                    Err(message) => self.fail(DocumentErrorKind::Syntax(message), position),
                }
            }
            Event::Alias(id) => self.alias(id, position),
            Event::SequenceStart(anchor, _) => {
                self.open(Container::Sequence(Vec::new()), anchor, position);
            }
            Event::MappingStart(anchor, _) => {
                let container = Container::Mapping {
                    map: Map::new(),
                    key: None,
                    merged: HashSet::new(),
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
        self.unindexed = 0;
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
        if self.unindexed > 0 || self.merge_value_next() {
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
                    container: Container::Mapping { key: Some(key), .. },
                    node: Some(parent),
                    ..
                }),
            ) => self
                .pointers
                .push(*parent, Token::Key(&key.name), key.position),
            _ => None,
        };
        (role, node)
    }

    /// Whether the next node is the value of a merge key.
    fn merge_value_next(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame {
                container: Container::Mapping {
                    key: Some(PendingKey { merge: true, .. }),
                    ..
                },
                ..
            })
        )
    }

    /// A merge key `<<` read as a key: its value will be merged.
    fn merge_key(&mut self, position: Position) {
        if !self.charge(1, 0, position) {
            return;
        }
        if let Some(Frame {
            container: Container::Mapping { key, .. },
            ..
        }) = self.stack.last_mut()
        {
            *key = Some(PendingKey {
                name: String::new(),
                position,
                merge: true,
            });
        }
    }

    /// Adds a complete node to its parent (or makes it the root).
    fn attach(&mut self, node: Node, role: Role, position: Position) {
        if let Role::Key = role {
            let name = match node {
                Node::Scalar(scalar) => scalar.into_key(),
                Node::Tree(_) => Err("a mapping or sequence cannot be a mapping key".to_string()),
            };
            match name {
                Ok(name) => {
                    if let Some(Frame {
                        container: Container::Mapping { key, .. },
                        ..
                    }) = self.stack.last_mut()
                    {
                        *key = Some(PendingKey {
                            name,
                            position,
                            merge: false,
                        });
                    }
                }
                Err(message) => self.fail(DocumentErrorKind::Syntax(message), position),
            }
            return;
        }
        let value = match node {
            Node::Tree(value) => value,
            Node::Scalar(scalar) => match scalar.into_json() {
                Ok(value) => value,
                Err(message) => {
                    self.fail(DocumentErrorKind::Syntax(message), position);
                    return;
                }
            },
        };
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
            Role::Value => self.set_value(value),
            Role::Key => {}
        }
    }

    /// Sets the pending key of the mapping on top of the stack to `value`, or merges `value`
    /// into the mapping when the key is `<<`.
    fn set_value(&mut self, value: Value) {
        let mut repeated = None;
        let mut merge_at = None;
        if let Some(Frame {
            container: Container::Mapping { map, key, merged },
            node,
            ..
        }) = self.stack.last_mut()
            && let Some(pending) = key.take()
        {
            if pending.merge {
                merge_at = Some(pending.position);
            } else {
                // The last value wins in the JSON; the repeat is recorded for the loader to
                // report. One lookup either way, so unique keys cost nothing more.
                match map.entry(pending.name) {
                    Entry::Vacant(slot) => {
                        slot.insert(value);
                    }
                    Entry::Occupied(mut slot) => {
                        // A key after a merge overrides the merged value.
                        if merged.is_empty() || !merged.remove(slot.key()) {
                            repeated = Some((slot.key().clone(), pending.position, *node));
                        }
                        slot.insert(value);
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
                return;
            }
        }
        if let Some(position) = merge_at {
            self.merge(value, position);
        }
    }

    /// Merges the value of a `<<` key at `position` into the mapping on top of the stack: a
    /// mapping, or a sequence of mappings of which the earlier ones win. Merged keys override
    /// the keys set before (entries apply in document order) and point at the `<<`.
    fn merge(&mut self, value: Value, position: Position) {
        let sources = match value {
            Value::Object(map) => vec![map],
            Value::Array(items) if items.iter().all(Value::is_object) => items
                .into_iter()
                .rev()
                .filter_map(|item| match item {
                    Value::Object(map) => Some(map),
                    _ => None,
                })
                .collect(),
            _ => {
                let message = "map merge requires map or sequence of maps as the value";
                self.fail(DocumentErrorKind::Syntax(message.to_string()), position);
                return;
            }
        };
        let Some(Frame {
            container: Container::Mapping { map, merged, .. },
            node,
            ..
        }) = self.stack.last_mut()
        else {
            return;
        };
        for source in sources {
            for (key, value) in source {
                if let Some(parent) = node {
                    self.pointers.push(*parent, Token::Key(&key), position);
                }
                merged.insert(key.clone());
                map.insert(key, value);
            }
        }
    }

    /// Remembers a completed anchored node for later aliases.
    fn remember_anchor(&mut self, anchor: usize, node: &Node, size: usize, position: Position) {
        if anchor == 0 || !self.charge(0, size, position) {
            return;
        }
        self.anchors.insert(anchor, (node.clone(), size));
    }

    /// A scalar or an expanded alias: a node with no children events.
    fn leaf(&mut self, node: Node, size: usize, anchor: usize, position: Position) {
        if !self.charge(size, 0, position) {
            return;
        }
        let (role, _) = self.enter(position);
        self.remember_anchor(anchor, &node, size, position);
        if self.failure.is_none() {
            self.attach(node, role, position);
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
        if let Some(node) = self.anchors.get(&id).map(|(node, _)| node.clone()) {
            self.leaf(node, size, 0, position);
        }
    }

    fn open(&mut self, container: Container, anchor: usize, position: Position) {
        if self.stack.len() >= MAX_DEPTH {
            self.fail(DocumentErrorKind::TooDeep, position);
            return;
        }
        if let Role::Key = self.next_role() {
            let message = "a mapping or sequence cannot be a mapping key".to_string();
            self.fail(DocumentErrorKind::Syntax(message), position);
            return;
        }
        let nodes_before = self.nodes;
        if !self.charge(1, 0, position) {
            return;
        }
        let unindexed = self.unindexed > 0 || self.merge_value_next();
        let (role, node) = self.enter(position);
        if unindexed {
            self.unindexed = self.unindexed.saturating_add(1);
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
        if self.unindexed > 0 {
            self.unindexed -= 1;
        }
        let value = match frame.container {
            Container::Sequence(items) => Value::Array(items),
            Container::Mapping { map, .. } => Value::Object(map),
        };
        let node = Node::Tree(value);
        let size = self.nodes.saturating_sub(frame.nodes_before);
        self.remember_anchor(frame.anchor, &node, size, frame.start);
        if self.failure.is_none() {
            self.attach(node, frame.role, frame.start);
        }
    }
}

/// A tag as (handle, suffix).
fn tag_parts<'t>(tag: Option<&'t Cow<'_, saphyr_parser::Tag>>) -> Option<(&'t str, &'t str)> {
    tag.map(|tag| (tag.handle.as_str(), tag.suffix.as_str()))
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
    fn scalars_follow_kubernetes_yaml_1_1_rules() {
        let doc = only(
            "int: 1\nstr: \"1\"\nbool: true\nyes: yes\nno: off\ntilde: ~\nnul: NULL\n\
             empty:\nfloat: 1.5\nexp: 1e3\nhex: 0x1F\noctal: 0755\nquoted: \"0755\"\n\
             big: 1.000001e+08\nsexagesimal: 1:20\ndate: 2001-12-14\n\
             tagged: !!str 2\ncustom: !thing 3\nint_tag: !!int \"12\"\n",
        );
        assert_eq!(
            doc.value,
            json!({"int": 1, "str": "1", "bool": true, "true": true, "false": false,
                   "tilde": null, "nul": null, "empty": null, "float": 1.5, "exp": 1000,
                   "hex": 31, "octal": 493, "quoted": "0755", "big": 100_000_100,
                   "sexagesimal": "1:20", "date": "2001-12-14", "tagged": "2",
                   "custom": "3", "int_tag": 12})
        );
        // What Kubernetes refuses, the loader refuses.
        for text in [
            "a: .inf\n",
            "a: .NaN\n",
            "a: !!int abc\n",
            "~: a\n",
            "a: !!binary \"!\"\n",
        ] {
            assert!(
                matches!(failure(text).kind, DocumentErrorKind::Syntax(_)),
                "{text}"
            );
        }
    }

    #[test]
    fn non_string_keys_become_the_json_keys_kubernetes_makes() {
        let doc = only("1: a\non: b\n1.5: d\n1e6: e\n.inf: f\n");
        assert_eq!(
            doc.value,
            json!({"1": "a", "true": "b", "1.5": "d", "1e+06": "e", ".inf": "f"})
        );
        assert_eq!(at(&doc, "/true"), (2, 1));
        // A mapping or sequence cannot be a key, nor can null.
        assert_eq!(failure("? [1, x]\n: e\n").position.line, 1);
        assert!(matches!(
            failure("a: 1\n? {a: 1}\n: f\n").kind,
            DocumentErrorKind::Syntax(_)
        ));
        assert!(matches!(
            failure("b: &k [1]\n*k : f\n").kind,
            DocumentErrorKind::Syntax(_)
        ));
        assert!(matches!(
            failure("null: x\n").kind,
            DocumentErrorKind::Syntax(_)
        ));
    }

    #[test]
    fn merge_keys_merge_in_document_order_and_point_at_the_merge_key() {
        let doc = only(
            "base: &b {x: 1, v: {deep: 1}}\nother: &o {x: 2, z: 2}\n\
             m:\n  <<: *b\n  v: {deep: 2}\nseq:\n  <<: [*b, *o]\n  w: 0\n\
             before:\n  x: 0\n  <<: *o\ninline:\n  <<: {a: 1}\nquoted:\n  \"<<\": 1\n",
        );
        assert_eq!(doc.value["m"], json!({"x": 1, "v": {"deep": 2}}));
        assert_eq!(
            doc.value["seq"],
            json!({"x": 1, "v": {"deep": 1}, "z": 2, "w": 0})
        );
        assert_eq!(doc.value["before"], json!({"x": 2, "z": 2}));
        assert_eq!(doc.value["inline"], json!({"a": 1}));
        assert_eq!(doc.value["quoted"], json!({"<<": 1}));
        // Merged fields point at their `<<`; a key set after it at itself.
        assert_eq!(at(&doc, "/m/x"), (4, 3));
        assert_eq!(at(&doc, "/m/v"), (5, 3));
        assert_eq!(at(&doc, "/seq/z"), (7, 3));
        assert_eq!(at(&doc, "/inline/a"), (13, 3));
        assert_eq!(doc.pointers.get("/inline/<<"), None);
        // Overriding a merged key is not a repeated key; repeating an explicit one still is.
        assert!(doc.duplicates.is_empty(), "{:?}", doc.duplicates);
        let doc = only("a: &a {x: 1}\nm:\n  <<: *a\n  v: 1\n  v: 2\n");
        assert_eq!(doc.duplicates.len(), 1);
        // Only mappings merge.
        for text in [
            "m:\n  <<: 1\n",
            "m:\n  <<: [{a: 1}, [2]]\n",
            "a: &s x\nm:\n  <<: *s\n",
        ] {
            assert!(
                matches!(failure(text).kind, DocumentErrorKind::Syntax(_)),
                "{text}"
            );
        }
    }

    #[test]
    fn merged_aliases_count_against_the_node_limit() {
        let mut text = String::from("a0: &a0 {k0: [x, x, x, x, x, x, x, x, x, x]}\n");
        for i in 1..10 {
            let prev = format!("*a{}", i - 1);
            let items = [prev.as_str(); 10].join(", ");
            text.push_str(&format!(
                "a{i}: &a{i}\n  <<: [{items}]\n  k{i}: [{items}]\n"
            ));
        }
        assert_eq!(failure(&text).kind, DocumentErrorKind::TooLarge);
    }

    #[test]
    fn multi_line_quoted_scalars_indented_less_than_their_mapping_are_read() {
        let text = "metadata:\n  annotations:\n    a: \"one\ntwo\"\n    b: 'three\n  four'\n\
                    \x20   c: \"five\\\n six\"\n    d: \"x\n\ty\"\n    e: 1\n";
        let doc = only(text);
        assert_eq!(
            doc.value,
            json!({"metadata": {"annotations": {"a": "one two", "b": "three four",
                   "c": "fivesix", "d": "x y", "e": 1}}})
        );
        assert_eq!(at(&doc, "/metadata/annotations/e"), (11, 5));
        // Flow collections continued at their key's column, and a tab after a colon.
        let doc = only("spec:\n  args: [\"a\",\n  \"b\"]\n  m: {x: 1,\nz: 2}\n  t:\tv\n");
        assert_eq!(
            doc.value,
            json!({"spec": {"args": ["a", "b"], "m": {"x": 1, "z": 2}, "t": "v"}})
        );
        assert_eq!(at(&doc, "/spec/t"), (6, 3));
        // A document marker inside the scalar is still an error.
        assert!(matches!(
            failure("a:\n  b: \"x\n...\n  y\"\n").kind,
            DocumentErrorKind::Syntax(_)
        ));
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
        let doc = only("a: 1\nb:\n  c: x\n  c: z\na: 2\n");
        assert_eq!(doc.value, json!({"a": 2, "b": {"c": "z"}}));
        let found: Vec<_> = doc
            .duplicates
            .iter()
            .map(|d| (d.key.as_str(), d.position.line, d.first.map(|p| p.line)))
            .collect();
        assert_eq!(found, [("c", 4, Some(3)), ("a", 5, Some(1))]);
        // In a merged mapping there are no pointers: the repeat is still recorded.
        let doc = only("m:\n  <<: {k: 1, k: 2}\n");
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
