//! Where an object was written: file, document and per-field positions.

use std::fmt;
use std::sync::Arc;

use serde::Serialize;

use crate::pointers::PointerIndex;

/// A 1-based line and column inside a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Position {
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// A place in an input file, as shown to users (`file:line:column`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceLocation {
    /// The path as the user gave it (or `<stdin>`).
    pub file: Arc<str>,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The Helm template that produced this document (`# Source: chart/templates/job.yaml`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub helm_template: Option<Arc<str>>,
}

impl fmt::Display for SourceLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)?;
        if let Some(t) = &self.helm_template {
            write!(f, " ({t})")?;
        }
        Ok(())
    }
}

/// The origin of one object: file, document index and a pointer → position index.
#[derive(Debug, Clone)]
pub struct Origin {
    /// The path as the user gave it (or `<stdin>`); shared by all documents of a file.
    pub file: Arc<str>,
    /// 0-based index of the document in its stream (after splitting `List` items, the index of
    /// the document that held the list).
    pub document: usize,
    /// Where the object itself starts.
    pub start: Position,
    /// Helm's `# Source:` comment preceding the document, if any.
    pub helm_template: Option<Arc<str>>,
    /// Pointer → position; the root object is pointer `""`.
    pointers: PointerIndex,
}

impl Origin {
    /// Builds an origin; `positions` may come in any order. When a pointer appears more than
    /// once, the last one wins, as the last of duplicate YAML keys does.
    pub fn new(
        file: Arc<str>,
        document: usize,
        start: Position,
        helm_template: Option<Arc<str>>,
        positions: Vec<(Box<str>, Position)>,
    ) -> Self {
        Self::with_pointers(
            file,
            document,
            start,
            helm_template,
            PointerIndex::from_pointers(positions),
        )
    }

    /// Builds an origin from the index the loader built while parsing.
    pub fn with_pointers(
        file: Arc<str>,
        document: usize,
        start: Position,
        helm_template: Option<Arc<str>>,
        pointers: PointerIndex,
    ) -> Self {
        Self {
            file,
            document,
            start,
            helm_template,
            pointers,
        }
    }

    /// The exact position of a JSON pointer (RFC 6901, e.g. `/metadata/annotations/x`).
    pub fn position(&self, pointer: &str) -> Option<Position> {
        self.pointers.get(pointer)
    }

    /// The location of a pointer, or of its closest ancestor that was written in the file
    /// (a field that a patch would add points at the mapping that would hold it).
    pub fn locate(&self, pointer: &str) -> Option<SourceLocation> {
        let position = self.pointers.closest(pointer).unwrap_or(self.start);
        Some(self.location_at(position))
    }

    fn location_at(&self, pos: Position) -> SourceLocation {
        SourceLocation {
            file: self.file.clone(),
            line: pos.line,
            column: pos.column,
            helm_template: self.helm_template.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, column: u32) -> Position {
        Position { line, column }
    }

    #[test]
    fn locate_falls_back_to_the_closest_written_ancestor() {
        let o = Origin::new(
            "a.yaml".into(),
            0,
            pos(3, 1),
            None,
            vec![
                ("/spec".into(), pos(7, 1)),
                ("".into(), pos(3, 1)),
                ("/spec/template".into(), pos(8, 3)),
            ],
        );
        assert_eq!(o.locate("/spec/template").unwrap().line, 8);
        assert_eq!(o.locate("/spec/activeDeadlineSeconds").unwrap().line, 7);
        assert_eq!(o.locate("/status/x").unwrap().line, 3);
        assert_eq!(o.locate("/spec").unwrap().to_string(), "a.yaml:7:1");
    }

    #[test]
    fn the_last_of_repeated_pointers_wins() {
        let o = Origin::new(
            "a.yaml".into(),
            0,
            pos(1, 1),
            None,
            vec![
                ("/a".into(), pos(1, 1)),
                ("/b".into(), pos(2, 1)),
                ("/a".into(), pos(3, 1)),
            ],
        );
        assert_eq!(o.position("/a"), Some(pos(3, 1)));
    }
}
