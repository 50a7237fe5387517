//! The two pattern languages an AppProject is matched with, as Argo CD's Go code runs them:
//!
//! - [`Glob`]: `github.com/gobwas/glob` v0.2.3 (through Argo CD's `util/glob`), used for
//!   destinations, source repositories and the match lists of sync windows. `*` matches any run
//!   of characters other than the separators, `**` any run at all, `?` one character other than a
//!   separator, `[abc]`, `[a-z]`, `[!abc]` one character of (not of) the class, `{a,b}` one of the
//!   alternatives, `\` escapes the next character. A pattern that does not compile matches
//!   nothing (Argo CD logs "failed to compile pattern" and returns false).
//! - [`path_match`]: Go's `path/filepath.Match`, used for the group, kind and name of the
//!   resource white- and blacklists. `[^a-z]` negates; a malformed pattern matches nothing.
//!
//! Both are transliterations of the Go sources (gobwas/glob `syntax/lexer`, `syntax/ast`;
//! `path/filepath/match.go`), checked against their tests below.

/// Steps a single match may take before it gives up (and reports no match): user patterns are
/// short, but `*a*a*a*a*b` against a long value backtracks polynomially.
const FUEL: usize = 200_000;

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Text(Vec<char>),
    /// `*`
    Any,
    /// `**`
    Super,
    /// `?`
    Single,
    /// `[abc]` / `[!abc]`
    List {
        chars: Vec<char>,
        not: bool,
    },
    /// `[a-z]` / `[!a-z]`
    Range {
        lo: char,
        hi: char,
        not: bool,
    },
    /// `{a,b}`: one of the patterns.
    AnyOf(Vec<Vec<Node>>),
}

/// A compiled gobwas glob with its separators.
#[derive(Debug, Clone, PartialEq)]
pub struct Glob {
    nodes: Vec<Node>,
    separators: Vec<char>,
}

/// Why a pattern does not compile (gobwas' message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GlobError(pub String);

impl std::fmt::Display for GlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Glob {
    /// Compiles `pattern` as `glob.Compile(pattern, separators...)` does.
    pub fn compile(pattern: &str, separators: &[char]) -> Result<Glob, GlobError> {
        let tokens = lex(pattern)?;
        let nodes = parse(&tokens)?;
        Ok(Glob {
            nodes,
            separators: separators.to_vec(),
        })
    }

    /// True when the whole of `text` matches.
    pub fn is_match(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().collect();
        let mut fuel = FUEL;
        let seq: Vec<&Node> = self.nodes.iter().collect();
        matches(&seq, &text, &self.separators, &mut fuel)
    }
}

/// Argo CD's `glob.Match(pattern, text, separators...)`: false when the pattern does not compile.
pub fn glob_match(pattern: &str, text: &str, separators: &[char]) -> bool {
    Glob::compile(pattern, separators).is_ok_and(|g| g.is_match(text))
}

/// Argo CD's `globMatch(pattern, val, allowNegation, separators...)` (app_project_types.go):
/// with `allow_negation`, a pattern starting with `!` matches what the rest does not; `*` matches
/// everything without compiling.
pub fn argo_glob_match(
    pattern: &str,
    val: &str,
    allow_negation: bool,
    separators: &[char],
) -> bool {
    if allow_negation && let Some(rest) = pattern.strip_prefix('!') {
        return !glob_match(rest, val, separators);
    }
    if pattern == "*" {
        return true;
    }
    glob_match(pattern, val, separators)
}

fn matches(seq: &[&Node], text: &[char], seps: &[char], fuel: &mut usize) -> bool {
    if *fuel == 0 {
        return false;
    }
    *fuel -= 1;
    let Some((first, rest)) = seq.split_first() else {
        return text.is_empty();
    };
    let one = |ok: &dyn Fn(char) -> bool, fuel: &mut usize| match text.split_first() {
        Some((&c, tail)) if ok(c) => matches(rest, tail, seps, fuel),
        _ => false,
    };
    match first {
        Node::Text(t) => {
            text.len() >= t.len()
                && text.get(..t.len()) == Some(t.as_slice())
                && matches(rest, text.get(t.len()..).unwrap_or_default(), seps, fuel)
        }
        Node::Single => one(&|c| !seps.contains(&c), fuel),
        Node::List { chars, not } => one(&|c| chars.contains(&c) != *not, fuel),
        Node::Range { lo, hi, not } => one(&|c| (*lo <= c && c <= *hi) != *not, fuel),
        Node::Any | Node::Super => {
            let stop = matches!(first, Node::Any);
            for n in 0..=text.len() {
                if matches(rest, text.get(n..).unwrap_or_default(), seps, fuel) {
                    return true;
                }
                if stop && text.get(n).is_some_and(|c| seps.contains(c)) {
                    return false;
                }
            }
            false
        }
        Node::AnyOf(alternatives) => alternatives.iter().any(|alt| {
            let mut next: Vec<&Node> = alt.iter().collect();
            next.extend_from_slice(rest);
            matches(&next, text, seps, fuel)
        }),
    }
}

// ---- gobwas/glob syntax/lexer ----

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Text(String),
    Any,
    Super,
    Single,
    RangeOpen,
    Not,
    RangeLo(char),
    RangeBetween,
    RangeHi(char),
    RangeClose,
    TermsOpen,
    Separator,
    TermsClose,
}

fn lex(source: &str) -> Result<Vec<Token>, GlobError> {
    let chars: Vec<char> = source.chars().collect();
    let mut l = Lexer {
        chars: &chars,
        pos: 0,
        terms: 0,
        tokens: Vec::new(),
    };
    while l.pos < chars.len() {
        l.item()?;
    }
    Ok(l.tokens)
}

struct Lexer<'c> {
    chars: &'c [char],
    pos: usize,
    terms: usize,
    tokens: Vec<Token>,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn read(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn item(&mut self) -> Result<(), GlobError> {
        let Some(c) = self.read() else {
            return Ok(());
        };
        match c {
            '{' => {
                self.terms += 1;
                self.tokens.push(Token::TermsOpen);
            }
            ',' if self.terms > 0 => self.tokens.push(Token::Separator),
            '}' if self.terms > 0 => {
                self.tokens.push(Token::TermsClose);
                self.terms -= 1;
            }
            '[' => {
                self.tokens.push(Token::RangeOpen);
                self.range()?;
            }
            '?' => self.tokens.push(Token::Single),
            '*' => {
                if self.peek() == Some('*') {
                    self.pos += 1;
                    self.tokens.push(Token::Super);
                } else {
                    self.tokens.push(Token::Any);
                }
            }
            _ => {
                self.pos -= 1;
                let breakers: &[char] = if self.terms > 0 {
                    &['?', '*', '[', '{', '}', ',']
                } else {
                    &['?', '*', '[', '{']
                };
                self.text(breakers);
            }
        }
        Ok(())
    }

    fn range(&mut self) -> Result<(), GlobError> {
        let (mut want_hi, mut want_close, mut seen_not) = (false, false, false);
        loop {
            let Some(c) = self.read() else {
                return Err(GlobError("unexpected end of input".into()));
            };
            if want_close {
                if c != ']' {
                    return Err(GlobError("expected close range character".into()));
                }
                self.tokens.push(Token::RangeClose);
                return Ok(());
            }
            if want_hi {
                self.tokens.push(Token::RangeHi(c));
                want_close = true;
                continue;
            }
            if !seen_not && c == '!' {
                self.tokens.push(Token::Not);
                seen_not = true;
                continue;
            }
            if self.peek() == Some('-') {
                self.pos += 1;
                self.tokens.push(Token::RangeLo(c));
                self.tokens.push(Token::RangeBetween);
                want_hi = true;
                continue;
            }
            self.pos -= 1;
            self.text(&[']']);
            want_close = true;
        }
    }

    fn text(&mut self, breakers: &[char]) {
        let mut data = String::new();
        let mut escaped = false;
        while let Some(c) = self.read() {
            if !escaped {
                if c == '\\' {
                    escaped = true;
                    continue;
                }
                if breakers.contains(&c) {
                    self.pos -= 1;
                    break;
                }
            }
            escaped = false;
            data.push(c);
        }
        if !data.is_empty() {
            self.tokens.push(Token::Text(data));
        }
    }
}

// ---- gobwas/glob syntax/ast ----

/// A tree of patterns while parsing: `AnyOf` nodes hold patterns, patterns hold nodes.
#[derive(Debug, Default)]
struct Tree {
    /// Each pattern's items; an item is a node or an `AnyOf` (by index into `any_ofs`).
    patterns: Vec<Vec<Item>>,
    /// Each `AnyOf`'s patterns.
    any_ofs: Vec<Vec<usize>>,
    /// A pattern's enclosing `AnyOf` and that one's enclosing pattern.
    parent: Vec<Option<(usize, usize)>>,
}

#[derive(Debug)]
enum Item {
    Node(Node),
    AnyOf(usize),
}

fn parse(tokens: &[Token]) -> Result<Vec<Node>, GlobError> {
    let mut t = Tree {
        patterns: vec![Vec::new()],
        any_ofs: Vec::new(),
        parent: vec![None],
    };
    let mut cur = 0usize;
    let mut it = tokens.iter();
    while let Some(token) = it.next() {
        let push = |t: &mut Tree, cur: usize, n: Node| {
            if let Some(p) = t.patterns.get_mut(cur) {
                p.push(Item::Node(n));
            }
        };
        match token {
            Token::Text(s) => push(&mut t, cur, Node::Text(s.chars().collect())),
            Token::Any => push(&mut t, cur, Node::Any),
            Token::Super => push(&mut t, cur, Node::Super),
            Token::Single => push(&mut t, cur, Node::Single),
            Token::RangeOpen => {
                let node = parse_range(&mut it)?;
                push(&mut t, cur, node);
            }
            Token::TermsOpen => {
                let a = t.any_ofs.len();
                let p = t.patterns.len();
                t.any_ofs.push(vec![p]);
                t.patterns.push(Vec::new());
                t.parent.push(Some((a, cur)));
                if let Some(items) = t.patterns.get_mut(cur) {
                    items.push(Item::AnyOf(a));
                }
                cur = p;
            }
            Token::Separator => {
                let Some(Some((a, outer))) = t.parent.get(cur).copied() else {
                    return Err(GlobError("unexpected token: separator".into()));
                };
                let p = t.patterns.len();
                t.patterns.push(Vec::new());
                t.parent.push(Some((a, outer)));
                if let Some(list) = t.any_ofs.get_mut(a) {
                    list.push(p);
                }
                cur = p;
            }
            Token::TermsClose => {
                let Some(Some((_, outer))) = t.parent.get(cur).copied() else {
                    return Err(GlobError("unexpected token: terms close".into()));
                };
                cur = outer;
            }
            other => return Err(GlobError(format!("unexpected token: {other:?}"))),
        }
    }
    Ok(build(&t, 0))
}

fn build(t: &Tree, pattern: usize) -> Vec<Node> {
    t.patterns
        .get(pattern)
        .map(|items| {
            items
                .iter()
                .map(|item| match item {
                    Item::Node(n) => n.clone(),
                    Item::AnyOf(a) => Node::AnyOf(
                        t.any_ofs
                            .get(*a)
                            .map(|ps| ps.iter().map(|&p| build(t, p)).collect())
                            .unwrap_or_default(),
                    ),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn parse_range<'t>(it: &mut impl Iterator<Item = &'t Token>) -> Result<Node, GlobError> {
    let (mut not, mut lo, mut hi, mut chars) = (false, None, None, String::new());
    for token in it.by_ref() {
        match token {
            Token::Not => not = true,
            Token::RangeLo(c) => lo = Some(*c),
            Token::RangeBetween => {}
            Token::RangeHi(c) => {
                if lo.is_some_and(|lo| *c < lo) {
                    return Err(GlobError(format!(
                        "hi character '{c}' should be greater than lo '{}'",
                        lo.unwrap_or_default()
                    )));
                }
                hi = Some(*c);
            }
            Token::Text(s) => chars.clone_from(s),
            Token::RangeClose => {
                // gobwas tests `lo != 0 && hi != 0`: a NUL bound is no range.
                let range = match (lo, hi) {
                    (Some(lo), Some(hi)) if lo != '\0' && hi != '\0' => Some((lo, hi)),
                    _ => None,
                };
                return match (range, chars.is_empty()) {
                    (Some((lo, hi)), true) => Ok(Node::Range { lo, hi, not }),
                    (None, false) => Ok(Node::List {
                        chars: chars.chars().collect(),
                        not,
                    }),
                    _ => Err(GlobError("could not parse range".into())),
                };
            }
            other => return Err(GlobError(format!("unexpected token: {other:?}"))),
        }
    }
    Err(GlobError("unexpected end".into()))
}

// ---- Go path/filepath.Match (Unix) ----

/// Go's `filepath.Match(pattern, name)` on Unix: `Some(matched)`, or `None` for a malformed
/// pattern (`ErrBadPattern`, which Argo CD's list checks treat as no match).
pub fn path_match(pattern: &str, name: &str) -> Option<bool> {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let mut fuel = FUEL;
    let matched = path_match_at(&pattern, &name, &mut fuel).ok()?;
    // Go reports a malformed pattern even after a mismatch: check the rest of it.
    validate(&pattern).ok()?;
    Some(matched)
}

/// True when `pattern` matches `name` (a malformed pattern matches nothing).
pub fn path_matches(pattern: &str, name: &str) -> bool {
    path_match(pattern, name).unwrap_or(false)
}

fn validate(p: &[char]) -> Result<(), ()> {
    let mut i = 0;
    while let Some(&c) = p.get(i) {
        match c {
            '\\' => {
                if p.get(i + 1).is_none() {
                    return Err(());
                }
                i += 2;
            }
            '[' => {
                let (_, n) = class(p.get(i..).unwrap_or_default(), None)?;
                i += n;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

fn path_match_at(p: &[char], s: &[char], fuel: &mut usize) -> Result<bool, ()> {
    if *fuel == 0 {
        return Ok(false);
    }
    *fuel -= 1;
    let Some(&c) = p.first() else {
        return Ok(s.is_empty());
    };
    let rest = p.get(1..).unwrap_or_default();
    match c {
        '*' => {
            for n in 0..=s.len() {
                if path_match_at(rest, s.get(n..).unwrap_or_default(), fuel)? {
                    return Ok(true);
                }
                if s.get(n) == Some(&'/') {
                    break;
                }
            }
            Ok(false)
        }
        '?' => match s.split_first() {
            Some((&ch, tail)) if ch != '/' => path_match_at(rest, tail, fuel),
            _ => Ok(false),
        },
        '[' => {
            let (ok, n) = class(p, s.first().copied())?;
            if !ok {
                return Ok(false);
            }
            path_match_at(
                p.get(n..).unwrap_or_default(),
                s.get(1..).unwrap_or_default(),
                fuel,
            )
        }
        '\\' => {
            let Some(&lit) = p.get(1) else {
                return Err(());
            };
            if s.first() != Some(&lit) {
                return Ok(false);
            }
            path_match_at(
                p.get(2..).unwrap_or_default(),
                s.get(1..).unwrap_or_default(),
                fuel,
            )
        }
        lit => {
            if s.first() != Some(&lit) {
                return Ok(false);
            }
            path_match_at(rest, s.get(1..).unwrap_or_default(), fuel)
        }
    }
}

/// A character class starting at `p[0] == '['`: whether `ch` is in it (false when `ch` is
/// `None`) and how many pattern characters it spans.
fn class(p: &[char], ch: Option<char>) -> Result<(bool, usize), ()> {
    let mut i = 1;
    let negated = p.get(i) == Some(&'^');
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut ranges = 0;
    loop {
        if p.get(i) == Some(&']') && ranges > 0 {
            i += 1;
            break;
        }
        let (lo, n) = escaped(p, i)?;
        i += n;
        let mut hi = lo;
        if p.get(i) == Some(&'-') {
            let (h, n) = escaped(p, i + 1)?;
            hi = h;
            i += 1 + n;
        }
        if ch.is_some_and(|c| lo <= c && c <= hi) {
            matched = true;
        }
        ranges += 1;
    }
    Ok((ch.is_some() && matched != negated, i))
}

fn escaped(p: &[char], i: usize) -> Result<(char, usize), ()> {
    match p.get(i) {
        None | Some('-' | ']') => Err(()),
        Some('\\') => p.get(i + 1).map(|&c| (c, 2)).ok_or(()),
        Some(&c) => Ok((c, 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // gobwas/glob glob_test.go TestGlob (a selection, with the separators it uses).
    #[test]
    fn gobwas_glob_cases() {
        let cases: &[(bool, &str, &str, &[char])] = &[
            (true, "* ?at * eyes", "my cat has very bright eyes", &[]),
            (true, "", "", &[]),
            (false, "", "b", &[]),
            (true, "*ä", "åä", &[]),
            (true, "abc", "abc", &[]),
            (true, "a*c", "abc", &[]),
            (true, "a*c", "a12345c", &[]),
            (true, "a?c", "a1c", &[]),
            (true, "a.b", "a.b", &['.']),
            (true, "a.*", "a.b", &['.']),
            (true, "a.**", "a.b.c", &['.']),
            (true, "a.?.c", "a.b.c", &['.']),
            (true, "a.?.?", "a.b.c", &['.']),
            (true, "?at", "cat", &[]),
            (true, "?at", "fat", &[]),
            (true, "*", "abc", &[]),
            (true, r"\*", "*", &[]),
            (true, "**", "a.b.c", &['.']),
            (false, "?at", "at", &[]),
            (false, "?at", "fat", &['f']),
            (false, "a.*", "a.b.c", &['.']),
            (false, "a.?.c", "a.bb.c", &['.']),
            (false, "*", "a.b.c", &['.']),
            (true, "*test", "this is a test", &[]),
            (true, "this*", "this is a test", &[]),
            (true, "*is *", "this is a test", &[]),
            (true, "*is*a*", "this is a test", &[]),
            (true, "**test**", "this is a test", &[]),
            (true, "**is**a***test*", "this is a test", &[]),
            (false, "*is", "this is a test", &[]),
            (false, "*no*", "this is a test", &[]),
            (true, "[!a]*", "this is a test3", &[]),
            (true, "*abc", "abcabc", &[]),
            (true, "**abc", "abcabc", &[]),
            (true, "???", "abc", &[]),
            (true, "?*?", "abc", &[]),
            (true, "?*?", "ac", &[]),
            (false, "sta", "stagnation", &[]),
            (true, "sta*", "stagnation", &[]),
            (false, "sta?", "stagnation", &[]),
            (false, "sta?n", "stagnation", &[]),
            (true, "{abc,def}ghi", "defghi", &[]),
            (true, "{abc,abcd}a", "abcda", &[]),
            (true, "{a,ab}{bc,f}", "abc", &[]),
            (true, "{*,**}{a,b}", "ab", &[]),
            (false, "{*,**}{a,b}", "ac", &[]),
            (true, "/{rate,[a-z][a-z][a-z]}*", "/rate", &[]),
            (true, "/{rate,[0-9][0-9][0-9]}*", "/rate", &[]),
            (true, "/{rate,[a-z][a-z][a-z]}*", "/usd", &[]),
            (true, "{*.google.*,*.yandex.*}", "www.google.com", &['.']),
            (true, "{*.google.*,*.yandex.*}", "www.yandex.com", &['.']),
            (false, "{*.google.*,*.yandex.*}", "yandex.com", &['.']),
            (false, "{*.google.*,*.yandex.*}", "google.com", &['.']),
            (true, "{*.google.*,yandex.*}", "www.google.com", &['.']),
            (true, "{*.google.*,yandex.*}", "yandex.com", &['.']),
            (false, "{*.google.*,yandex.*}", "www.yandex.com", &['.']),
            (false, "{*.google.*,yandex.*}", "google.com", &['.']),
            (true, "*//{,*.}example.com", "https://www.example.com", &[]),
            (true, "*//{,*.}example.com", "http://example.com", &[]),
            (false, "*//{,*.}example.com", "http://example.com.net", &[]),
        ];
        for (want, pattern, text, seps) in cases {
            let g = Glob::compile(pattern, seps).unwrap_or_else(|e| panic!("{pattern}: {e}"));
            assert_eq!(
                g.is_match(text),
                *want,
                "{pattern:?} vs {text:?} ({seps:?})"
            );
        }
    }

    #[test]
    fn gobwas_ranges_lists_and_errors() {
        assert!(glob_match("[a-c]x", "bx", &[]));
        assert!(!glob_match("[!a-c]x", "bx", &[]));
        assert!(glob_match("[xyz]", "y", &[]));
        assert!(glob_match("[!xyz]", "a", &[]));
        // Does not compile: matches nothing, not even itself.
        for bad in ["[", "[a", "[]", "[!]", "[c-a]", "[a-b"] {
            assert!(Glob::compile(bad, &[]).is_err(), "{bad}");
            assert!(!glob_match(bad, bad, &[]), "{bad}");
        }
        // An unclosed `{` is accepted: its alternatives run to the end.
        assert!(glob_match("{a,b", "b", &[]));
        // `]` and `}` outside a class or alternatives are text.
        assert!(glob_match("a]}", "a]}", &[]));
        // Checked against gobwas/glob v0.2.3 itself.
        assert!(glob_match("{a,{b,c}}x", "cx", &[]));
        assert!(glob_match("{}", "", &[]));
        assert!(glob_match("{,}", "", &[]));
        assert!(glob_match(r"[\]]", "]", &[]));
        assert!(glob_match("a\\", "a", &[]), "a trailing escape is dropped");
        assert!(glob_match("\\", "", &[]));
        assert!(Glob::compile("[!]]", &[]).is_err());
        assert!(Glob::compile("[a-]]", &[]).is_err());
    }

    #[test]
    fn argo_cd_glob_match_negation_and_star() {
        assert!(argo_glob_match("*", "anything/at/all", false, &['/']));
        assert!(argo_glob_match("!prod-*", "dev-a", true, &[]));
        assert!(!argo_glob_match("!prod-*", "prod-a", true, &[]));
        // Without negation `!` is a literal character.
        assert!(!argo_glob_match("!prod-*", "dev-a", false, &[]));
        assert!(argo_glob_match(
            "https://github.com/org/*",
            "https://github.com/org/repo",
            true,
            &['/']
        ));
        assert!(!argo_glob_match(
            "https://github.com/org/*",
            "https://github.com/org/sub/repo",
            true,
            &['/']
        ));
        assert!(argo_glob_match(
            "https://github.com/org/**",
            "https://github.com/org/sub/repo",
            true,
            &['/']
        ));
    }

    // Go path/filepath match_test.go matchTests (a selection).
    #[test]
    fn go_filepath_match_cases() {
        let cases: &[(&str, &str, Option<bool>)] = &[
            ("abc", "abc", Some(true)),
            ("*", "abc", Some(true)),
            ("*c", "abc", Some(true)),
            ("a*", "a", Some(true)),
            ("a*", "abc", Some(true)),
            ("a*", "ab/c", Some(false)),
            ("a*/b", "abc/b", Some(true)),
            ("a*/b", "a/c/b", Some(false)),
            ("a*b*c*d*e*/f", "axbxcxdxe/f", Some(true)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/f", Some(true)),
            ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", Some(false)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", Some(false)),
            ("a*b?c*x", "abxbbxdbxebxczzx", Some(true)),
            ("a*b?c*x", "abxbbxdbxebxczzy", Some(false)),
            ("ab[c]", "abc", Some(true)),
            ("ab[b-d]", "abc", Some(true)),
            ("ab[e-g]", "abc", Some(false)),
            ("ab[^c]", "abc", Some(false)),
            ("ab[^b-d]", "abc", Some(false)),
            ("ab[^e-g]", "abc", Some(true)),
            ("a\\*b", "a*b", Some(true)),
            ("a\\*b", "ab", Some(false)),
            ("a?b", "a☺b", Some(true)),
            ("a[^a]b", "a☺b", Some(true)),
            ("a???b", "a☺b", Some(false)),
            ("a[^a][^a][^a]b", "a☺b", Some(false)),
            ("[a-ζ]*", "α", Some(true)),
            ("*[a-ζ]", "A", Some(false)),
            ("a?b", "a/b", Some(false)),
            ("a*b", "a/b", Some(false)),
            ("[\\]a]", "]", Some(true)),
            ("[\\-]", "-", Some(true)),
            ("[x\\-]", "x", Some(true)),
            ("[x\\-]", "-", Some(true)),
            ("[x\\-]", "z", Some(false)),
            ("[\\-x]", "x", Some(true)),
            ("[\\-x]", "-", Some(true)),
            ("[\\-x]", "a", Some(false)),
            ("[]a]", "]", None),
            ("[-]", "-", None),
            ("[x-]", "x", None),
            ("[x-]", "-", None),
            ("[x-]", "z", None),
            ("[-x]", "x", None),
            ("[-x]", "-", None),
            ("[-x]", "a", None),
            ("\\", "a", None),
            ("[a-b-c]", "a", None),
            ("[", "a", None),
            ("[^", "a", None),
            ("[^bc", "a", None),
            ("a[", "a", None),
            ("a[", "ab", None),
            ("a[", "x", None),
            ("a/b[", "x", None),
            ("*x", "xxx", Some(true)),
        ];
        for (pattern, name, want) in cases {
            assert_eq!(path_match(pattern, name), *want, "{pattern:?} vs {name:?}");
        }
    }
}
