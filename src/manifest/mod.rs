//! Loading rendered manifests: YAML/JSON streams from files, directories and stdin.
//!
//! Every object keeps its [`Origin`]: the file, the document index in the stream, Helm's
//! `# Source:` template path when present, and a position for every JSON pointer inside it, so a
//! finding about `/spec/template/spec/restartPolicy` can say `job.yaml:14:9`.

mod origin;
mod pointers;

pub use origin::{Origin, Position, SourceLocation};
