//! Loading rendered manifests: YAML/JSON streams from files, directories and stdin.
//!
//! Every object keeps its [`Origin`]: the file, the document index in the stream, Helm's
//! `# Source:` template path when present, and a position for every JSON pointer inside it, so a
//! finding about `/spec/template/spec/restartPolicy` can say `job.yaml:14:9`.
//!
//! - [`load_paths`], [`load_reader`], [`load_str`]: the entry points; they never stop at the
//!   first problem but return every [`Resource`](crate::model::Resource) they could read and a
//!   [`LoadError`] for every problem, in input order.
//! - `stream`: cuts a stream at `---` lines and finds Helm's `# Source:` comments.
//! - `yaml`: turns YAML into JSON with positions, within [`MAX_DEPTH`] and [`MAX_NODES`],
//!   reading it as Kubernetes does (sigs.k8s.io/yaml: YAML 1.1 scalars, merge keys).
//! - `scalar`: types a scalar and writes its JSON by those rules.
//! - [`Origin`] and its pointer → position index live in the `syncguard-argocd` crate
//!   (`origin`, `pointers`), beside the [`Resource`](crate::model::Resource) that carries them;
//!   this module fills them.

// Manifests come from users and the network: no input may crash the process.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod error;
mod load;
mod scalar;
mod stream;
mod yaml;

pub use error::LoadError;
pub use load::{Loaded, STDIN_LABEL, load_paths, load_reader, load_str};
pub use syncguard_argocd::origin::{Origin, Position, SourceLocation};
pub use yaml::{MAX_DEPTH, MAX_NODES, parse_yaml_value};
