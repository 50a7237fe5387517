//! What can go wrong while loading manifests.

use std::sync::Arc;

use thiserror::Error;

use crate::model::ModelError;

/// One problem found while loading; loading always goes on with the rest of the input.
///
/// Every variant names the file (as the user gave it, or `<stdin>`) and, when the problem is
/// inside the text, the 1-based line and column. The message is complete on its own (it
/// includes the underlying cause), because these errors are collected and printed one by one
/// rather than propagated; for the same reason the cause is a plain field, not a `source()`,
/// so `{:#}`-style chains do not print it twice.
#[derive(Debug, Error)]
pub enum LoadError {
    /// A path that does not exist, cannot be read, or a directory that cannot be listed.
    #[error("{file}: cannot read: {error}")]
    Read {
        /// The path as given.
        file: Arc<str>,
        /// What the operating system said.
        error: std::io::Error,
    },
    /// The input is not UTF-8; Kubernetes manifests must be.
    #[error("{file}:{line}: not valid UTF-8 (byte {offset})")]
    NotUtf8 {
        /// The file.
        file: Arc<str>,
        /// The line holding the first invalid byte.
        line: u32,
        /// The 0-based byte offset of the first invalid byte.
        offset: usize,
    },
    /// A YAML syntax error; the document holding it is skipped.
    #[error("{file}:{line}:{column}: invalid YAML: {message}")]
    Syntax {
        /// The file.
        file: Arc<str>,
        /// Where the parser noticed the problem.
        line: u32,
        /// Where the parser noticed the problem.
        column: u32,
        /// The parser's message.
        message: String,
    },
    /// A document nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH) levels.
    #[error("{file}:{line}:{column}: document nests deeper than {limit} levels")]
    TooDeep {
        /// The file.
        file: Arc<str>,
        /// Where the limit was crossed.
        line: u32,
        /// Where the limit was crossed.
        column: u32,
        /// The limit.
        limit: usize,
    },
    /// A document that expands to more than [`MAX_NODES`](super::MAX_NODES) nodes, usually
    /// through aliases (a "billion laughs" bomb).
    #[error("{file}:{line}:{column}: document expands to more than {limit} nodes (alias bomb?)")]
    TooLarge {
        /// The file.
        file: Arc<str>,
        /// Where the limit was crossed.
        line: u32,
        /// Where the limit was crossed.
        column: u32,
        /// The limit.
        limit: usize,
    },
    /// Valid YAML that is not a Kubernetes object (not a mapping, no `kind`, no name...).
    #[error("{file}:{line}:{column}: {error}")]
    NotAnObject {
        /// The file.
        file: Arc<str>,
        /// Where the document (or `List` item) starts.
        line: u32,
        /// Where the document (or `List` item) starts.
        column: u32,
        /// What is missing.
        error: ModelError,
    },
    /// A key that appears twice in one YAML mapping. kubectl, kustomize, Helm and Argo CD reject
    /// such a document ("mapping key already defined"); syncguard reports it and, so that the
    /// rest of the input is judged as usual, still reads the object with the last value.
    #[error("{file}:{line}:{column}: mapping key {key:?} already defined {}", first_line_text(*first_line))]
    DuplicateKey {
        /// The file.
        file: Arc<str>,
        /// Where the second occurrence of the key is.
        line: u32,
        /// Where the second occurrence of the key is.
        column: u32,
        /// The key.
        key: String,
        /// The line of the first occurrence, when known (not inside complex keys).
        first_line: Option<u32>,
    },
    /// A label or annotation whose value is not a string. `metadata.labels` and
    /// `metadata.annotations` are `map[string]string`: the API server cannot decode a number or
    /// boolean there, and kubectl refuses to apply it. The object is still read.
    #[error("{file}:{line}:{column}: {message}")]
    NotAString {
        /// The file.
        file: Arc<str>,
        /// Where the label or annotation key is.
        line: u32,
        /// Where the label or annotation key is.
        column: u32,
        /// The field and what to do, e.g. `metadata.annotations.x: value 5 is a number; ...`.
        message: String,
    },
}

fn first_line_text(first_line: Option<u32>) -> String {
    match first_line {
        Some(line) => format!("at line {line} of the same mapping"),
        None => "earlier in the same mapping".to_string(),
    }
}

impl LoadError {
    /// The file the problem is in.
    pub fn file(&self) -> &str {
        match self {
            Self::Read { file, .. }
            | Self::NotUtf8 { file, .. }
            | Self::Syntax { file, .. }
            | Self::TooDeep { file, .. }
            | Self::TooLarge { file, .. }
            | Self::NotAnObject { file, .. }
            | Self::DuplicateKey { file, .. }
            | Self::NotAString { file, .. } => file,
        }
    }

    /// The 1-based line of the problem, when it is inside the text.
    pub fn line(&self) -> Option<u32> {
        match self {
            Self::Read { .. } => None,
            Self::NotUtf8 { line, .. }
            | Self::Syntax { line, .. }
            | Self::TooDeep { line, .. }
            | Self::TooLarge { line, .. }
            | Self::NotAnObject { line, .. }
            | Self::DuplicateKey { line, .. }
            | Self::NotAString { line, .. } => Some(*line),
        }
    }

    /// A short stable name for the kind of problem, for metrics labels and machine output.
    pub fn metric_label(&self) -> &'static str {
        match self {
            Self::Read { .. } => "read",
            Self::NotUtf8 { .. } => "not_utf8",
            Self::Syntax { .. } => "syntax",
            Self::TooDeep { .. } => "too_deep",
            Self::TooLarge { .. } => "too_large",
            Self::NotAnObject { .. } => "not_an_object",
            Self::DuplicateKey { .. } => "duplicate_key",
            Self::NotAString { .. } => "not_a_string",
        }
    }
}
