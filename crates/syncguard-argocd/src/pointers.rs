//! JSON pointer → position index, stored as a tree of pointer tokens.
//!
//! Storing every full pointer string would cost an allocation and a sort per field, and memory
//! proportional to key length × descendants: a 1 MiB key above 500k short items would need
//! 500 GiB. The tree stores each token once, in one string arena, with one node array and one
//! hash table per object, so building is linear in the input and lookups are a hash probe per
//! token.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::origin::Position;

/// The parent of the root node.
const NO_PARENT: u32 = u32::MAX;

/// The id of the root node (pointer `""`).
pub const ROOT: u32 = 0;

/// One token of a pointer, as the YAML builder sees it.
#[derive(Debug, Clone, Copy)]
pub enum Token<'a> {
    /// A mapping key, unescaped (`argocd.argoproj.io/sync-wave`).
    Key(&'a str),
    /// A sequence index.
    Index(usize),
}

/// Positions of the JSON pointers of one object.
#[derive(Debug, Clone, Default)]
pub struct PointerIndex {
    /// The escaped tokens of all nodes, back to back.
    tokens: String,
    /// Node `i`'s parent always has a smaller id, so the root is node 0.
    nodes: Vec<Node>,
    /// Open-addressing table keyed by (parent, token): node id + 1, 0 for an empty slot.
    /// Built by [`PointerIndex::finish`].
    slots: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    parent: u32,
    start: u32,
    end: u32,
    /// `None` for an intermediate node that was not itself written (only from
    /// [`PointerIndex::from_pointers`]).
    position: Option<Position>,
}

impl PointerIndex {
    /// Adds the root node; it must be the first node.
    pub fn push_root(&mut self, position: Position) -> Option<u32> {
        if !self.nodes.is_empty() {
            return None;
        }
        self.push_node(NO_PARENT, "", Some(position))
    }

    /// Adds a node under `parent`. Nodes must come in document order (a node after its parent,
    /// a subtree before the parent's next child), as the YAML builder produces them.
    /// Returns `None` when the index is full (over 4 GiB of tokens or 4 billion nodes), in
    /// which case the node and its children simply have no position of their own.
    pub fn push(&mut self, parent: u32, token: Token<'_>, position: Position) -> Option<u32> {
        let start = self.tokens.len();
        match token {
            Token::Key(key) => push_escaped(&mut self.tokens, key),
            Token::Index(i) => {
                let _ = write!(self.tokens, "{i}");
            }
        }
        let (Ok(start), Ok(end), Ok(id)) = (
            u32::try_from(start),
            u32::try_from(self.tokens.len()),
            u32::try_from(self.nodes.len()),
        ) else {
            self.tokens.truncate(start);
            return None;
        };
        if id == NO_PARENT {
            self.tokens.truncate(start as usize);
            return None;
        }
        self.nodes.push(Node {
            parent,
            start,
            end,
            position: Some(position),
        });
        Some(id)
    }

    fn push_node(&mut self, parent: u32, escaped: &str, position: Option<Position>) -> Option<u32> {
        let start = u32::try_from(self.tokens.len()).ok()?;
        let end = u32::try_from(self.tokens.len().checked_add(escaped.len())?).ok()?;
        let id = u32::try_from(self.nodes.len())
            .ok()
            .filter(|&id| id != NO_PARENT)?;
        self.tokens.push_str(escaped);
        self.nodes.push(Node {
            parent,
            start,
            end,
            position,
        });
        Some(id)
    }

    /// Empties the index, keeping its buffers for the next object.
    pub fn clear(&mut self) {
        self.tokens.clear();
        self.nodes.clear();
        self.slots.clear();
    }

    /// Moves the nodes out into an index of exactly the needed size, finished, and leaves
    /// `self` empty with its buffers kept: the builder reuses one growing scratch index and
    /// each object keeps only what it needs.
    pub fn take_finished(&mut self) -> Self {
        let mut index = Self {
            tokens: self.tokens.as_str().into(),
            nodes: self.nodes.as_slice().into(),
            slots: Vec::new(),
        };
        self.clear();
        index.finish();
        index
    }

    /// Builds an index from arbitrary pointers in any order (the last of repeated pointers
    /// wins); pointers that do not start with `/` (other than `""`) are ignored.
    pub fn from_pointers(pointers: Vec<(Box<str>, Position)>) -> Self {
        let mut index = Self::default();
        let mut children: HashMap<(u32, Box<str>), u32> = HashMap::new();
        let _ = index.push_node(NO_PARENT, "", None);
        for (pointer, position) in pointers {
            if pointer.is_empty() {
                index.set_position(ROOT, position);
                continue;
            }
            let Some(rest) = pointer.strip_prefix('/') else {
                continue;
            };
            let mut node = Some(ROOT);
            for token in rest.split('/') {
                let Some(parent) = node else { break };
                node = match children.get(&(parent, token.into())) {
                    Some(&child) => Some(child),
                    None => {
                        let child = index.push_node(parent, token, None);
                        if let Some(child) = child {
                            children.insert((parent, token.into()), child);
                        }
                        child
                    }
                };
            }
            if let Some(node) = node {
                index.set_position(node, position);
            }
        }
        index.finish();
        index
    }

    fn set_position(&mut self, node: u32, position: Position) {
        if let Some(n) = self.nodes.get_mut(node as usize) {
            n.position = Some(position);
        }
    }

    /// Builds the hash table; call once all nodes are in. Of two nodes with the same parent
    /// and token (a repeated YAML key), the later one is found.
    pub fn finish(&mut self) {
        let capacity = (self.nodes.len().saturating_mul(2))
            .next_power_of_two()
            .max(8);
        let mask = capacity - 1;
        let mut slots = vec![0u32; capacity];
        for (id, node) in self.nodes.iter().enumerate().skip(1) {
            let token = token_of(&self.tokens, node);
            let mut slot = hash(node.parent, token) as usize & mask;
            while let Some(entry) = slots.get_mut(slot) {
                let same = match entry
                    .checked_sub(1)
                    .and_then(|o| self.nodes.get(o as usize))
                {
                    None => true,
                    Some(other) => {
                        other.parent == node.parent && token_of(&self.tokens, other) == token
                    }
                };
                if same {
                    *entry = u32::try_from(id + 1).unwrap_or(0);
                    break;
                }
                slot = (slot + 1) & mask;
            }
        }
        self.slots = slots;
    }

    fn token(&self, node: &Node) -> &str {
        token_of(&self.tokens, node)
    }

    /// The child of `parent` with an (escaped) pointer token.
    pub fn child(&self, parent: u32, token: &str) -> Option<u32> {
        if self.slots.is_empty() {
            return None;
        }
        let mask = self.slots.len() - 1;
        let mut slot = hash(parent, token) as usize & mask;
        loop {
            let id = self.slots.get(slot)?.checked_sub(1)?;
            let node = self.nodes.get(id as usize)?;
            if node.parent == parent && self.token(node) == token {
                return Some(id);
            }
            slot = (slot + 1) & mask;
        }
    }

    /// The position of the first child of `parent` with the (unescaped) mapping key `key`, by a
    /// scan over the nodes: usable while the index is still being built, and only called for the
    /// rare repeated key.
    pub fn first_child(&self, parent: u32, key: &str) -> Option<Position> {
        let mut escaped = String::with_capacity(key.len());
        push_escaped(&mut escaped, key);
        self.nodes
            .iter()
            .find(|n| n.parent == parent && self.token(n) == escaped)
            .and_then(|n| n.position)
    }

    /// The position recorded for a node.
    pub fn position_of(&self, node: u32) -> Option<Position> {
        self.nodes.get(node as usize).and_then(|n| n.position)
    }

    /// The exact position of a pointer.
    pub fn get(&self, pointer: &str) -> Option<Position> {
        let mut node = ROOT;
        if !pointer.is_empty() {
            for token in pointer.strip_prefix('/')?.split('/') {
                node = self.child(node, token)?;
            }
        }
        self.position_of(node)
    }

    /// The position of a pointer or of its closest ancestor that has one.
    pub fn closest(&self, pointer: &str) -> Option<Position> {
        let mut found = self.position_of(ROOT);
        let Some(rest) = pointer.strip_prefix('/') else {
            return found;
        };
        let mut node = ROOT;
        for token in rest.split('/') {
            match self.child(node, token) {
                Some(child) => node = child,
                None => break,
            }
            found = self.position_of(node).or(found);
        }
        found
    }

    /// A copy of the subtree under `node`, re-rooted there: item 2 of a `List` becomes an
    /// object whose `/metadata/name` is the list's `/items/2/metadata/name`.
    pub fn subtree(&self, node: u32) -> Self {
        let mut index = Self::default();
        let first = node as usize;
        let Some(root) = self.nodes.get(first) else {
            return index;
        };
        let _ = index.push_node(NO_PARENT, "", root.position);
        // Nodes are in document order, so the subtree is the run of nodes after `node` whose
        // parent is `node` or a later node.
        for n in self.nodes.iter().skip(first + 1) {
            if n.parent < node || n.parent == NO_PARENT {
                break;
            }
            let token = self.token(n);
            if index
                .push_node(n.parent - node, token, n.position)
                .is_none()
            {
                break;
            }
        }
        index.finish();
        index
    }
}

fn token_of<'a>(tokens: &'a str, node: &Node) -> &'a str {
    tokens
        .get(node.start as usize..node.end as usize)
        .unwrap_or_default()
}

/// Appends a pointer token with RFC 6901 escaping (`~` → `~0`, `/` → `~1`).
pub fn push_escaped(out: &mut String, token: &str) {
    if !token.contains(['~', '/']) {
        out.push_str(token);
        return;
    }
    for c in token.chars() {
        match c {
            '~' => out.push_str("~0"),
            '/' => out.push_str("~1"),
            c => out.push(c),
        }
    }
}

/// FNV-1a over the parent id and the token: fast on short keys, and the table is private to
/// one object, so there is nothing to gain from a keyed hash.
fn hash(parent: u32, token: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in parent.to_le_bytes().iter().chain(token.as_bytes()) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32) -> Position {
        Position { line, column: 1 }
    }

    /// `{a: {b/c: [x, y]}, d: 1}` as the YAML builder would add it.
    fn sample() -> PointerIndex {
        let mut index = PointerIndex::default();
        let root = index.push_root(pos(1)).unwrap();
        let a = index.push(root, Token::Key("a"), pos(2)).unwrap();
        let bc = index.push(a, Token::Key("b/c~"), pos(3)).unwrap();
        index.push(bc, Token::Index(0), pos(4)).unwrap();
        index.push(bc, Token::Index(1), pos(5)).unwrap();
        index.push(root, Token::Key("d"), pos(6)).unwrap();
        index.finish();
        index
    }

    #[test]
    fn pointers_are_found_with_rfc_6901_escaping() {
        let index = sample();
        assert_eq!(index.get(""), Some(pos(1)));
        assert_eq!(index.get("/a"), Some(pos(2)));
        assert_eq!(index.get("/a/b~1c~0"), Some(pos(3)));
        assert_eq!(index.get("/a/b~1c~0/1"), Some(pos(5)));
        assert_eq!(index.get("/d"), Some(pos(6)));
        assert_eq!(index.get("/a/b/c"), None);
        assert_eq!(index.get("/a/b~1c~0/2"), None);
        assert_eq!(index.get("a"), None);
    }

    #[test]
    fn closest_falls_back_to_the_deepest_known_ancestor() {
        let index = sample();
        assert_eq!(index.closest("/a/b~1c~0/7/x"), Some(pos(3)));
        assert_eq!(index.closest("/zzz"), Some(pos(1)));
        assert_eq!(index.closest("no-slash"), Some(pos(1)));
    }

    #[test]
    fn a_repeated_key_finds_the_later_node() {
        let mut index = PointerIndex::default();
        let root = index.push_root(pos(1)).unwrap();
        index.push(root, Token::Key("a"), pos(2)).unwrap();
        index.push(root, Token::Key("a"), pos(3)).unwrap();
        index.finish();
        assert_eq!(index.get("/a"), Some(pos(3)));
    }

    #[test]
    fn a_subtree_is_re_rooted() {
        let index = sample();
        let bc = index
            .child(index.child(ROOT, "a").unwrap(), "b~1c~0")
            .unwrap();
        let sub = index.subtree(bc);
        assert_eq!(sub.get(""), Some(pos(3)));
        assert_eq!(sub.get("/1"), Some(pos(5)));
        assert_eq!(sub.get("/d"), None);
    }

    #[test]
    fn from_pointers_accepts_any_order_and_keeps_the_last_repeat() {
        let index = PointerIndex::from_pointers(vec![
            ("/x/y".into(), pos(5)),
            ("".into(), pos(1)),
            ("/x".into(), pos(2)),
            ("/x/y".into(), pos(6)),
            ("bad".into(), pos(9)),
        ]);
        assert_eq!(index.get("/x/y"), Some(pos(6)));
        assert_eq!(index.get("/x"), Some(pos(2)));
        assert_eq!(index.get(""), Some(pos(1)));
        let partial = PointerIndex::from_pointers(vec![("/p/q".into(), pos(4))]);
        assert_eq!(partial.get("/p"), None);
        assert_eq!(partial.closest("/p/r"), None);
        assert_eq!(partial.closest("/p/q/r"), Some(pos(4)));
    }

    #[test]
    fn many_nodes_stay_findable() {
        let mut index = PointerIndex::default();
        let root = index.push_root(pos(1)).unwrap();
        for i in 0..10_000 {
            index
                .push(root, Token::Index(i), pos(i as u32 + 2))
                .unwrap();
        }
        index.finish();
        assert!((0..10_000).all(|i| index.get(&format!("/{i}")) == Some(pos(i + 2))));
    }
}
