//! Go's `text/template` as Argo CD's ApplicationSet controller runs it
//! (`applicationset/utils.Render.Replace` with `goTemplate: true`): a template named `base`,
//! Sprig's functions less `env`, `expandenv` and `getHostByName`, plus Argo CD's `normalize`,
//! `slugify`, `toYaml`, `fromYaml` and `fromYamlArray`, and the `missingkey` option of
//! `goTemplateOptions`.
//!
//! - [`parse`] follows Go's lexer and parser (`text/template/parse`) and fails where they fail,
//!   with their messages (`template: base:1: function "path" not defined`): the check of
//!   templates that Argo CD cannot parse.
//! - [`Template::execute`] evaluates the language in full (actions, pipelines, variables, `if`,
//!   `range`, `with`, `define`/`template`/`block`, `break`/`continue`) with Go's rules for
//!   missing keys, truth and printing (`<no value>`, `1.234567e+06`), and the functions
//!   templates use in practice. A function syncguard does not evaluate (random or time values,
//!   cryptography, regular expressions, semver, `fromYaml`...) is [`ExecError::Unsupported`],
//!   never a guess.
//! - [`Template::references`] lists the parameters a template reads (`.path.basename`,
//!   `$.values.env`, `index .metadata.labels "env"`) and whether a missing one is tolerated
//!   (`default`, a condition).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use serde_json::Value;

use super::MissingKey;

/// The name Argo CD gives the template (its errors say `template: base:1: ...`).
const NAME: &str = "base";

/// Go's builtin functions.
#[rustfmt::skip]
const GO_FUNCTIONS: &[&str] = &[
    "and", "call", "html", "index", "slice", "js", "len", "not", "or", "print", "printf", "println",
    "urlquery", "eq", "ge", "gt", "le", "lt", "ne",
];

/// Sprig 3.3's generic functions, less the three Argo CD removes.
#[rustfmt::skip]
const SPRIG_FUNCTIONS: &[&str] = &[
    "hello", "ago", "date", "date_in_zone", "date_modify", "dateInZone", "dateModify", "duration",
    "durationRound", "htmlDate", "htmlDateInZone", "must_date_modify", "mustDateModify",
    "mustToDate", "now", "toDate", "unixEpoch", "abbrev", "abbrevboth", "trunc", "trim", "upper",
    "lower", "title", "untitle", "substr", "repeat", "trimall", "trimAll", "trimSuffix",
    "trimPrefix", "nospace", "initials", "randAlphaNum", "randAlpha", "randAscii", "randNumeric",
    "swapcase", "shuffle", "snakecase", "camelcase", "kebabcase", "wrap", "wrapWith", "contains",
    "hasPrefix", "hasSuffix", "quote", "squote", "cat", "indent", "nindent", "replace", "plural",
    "sha1sum", "sha256sum", "sha512sum", "adler32sum", "toString", "atoi", "int64", "int",
    "float64", "seq", "toDecimal", "split", "splitList", "splitn", "toStrings", "until",
    "untilStep", "add1", "add", "sub", "div", "mod", "mul", "randInt", "add1f", "addf", "subf",
    "divf", "mulf", "biggest", "max", "min", "maxf", "minf", "ceil", "floor", "round", "join",
    "sortAlpha", "default", "empty", "coalesce", "all", "any", "compact", "mustCompact", "fromJson",
    "toJson", "toPrettyJson", "toRawJson", "mustFromJson", "mustToJson", "mustToPrettyJson",
    "mustToRawJson", "ternary", "deepCopy", "mustDeepCopy", "typeOf", "typeIs", "typeIsLike",
    "kindOf", "kindIs", "deepEqual", "base", "dir", "clean", "ext", "isAbs", "osBase", "osClean",
    "osDir", "osExt", "osIsAbs", "b64enc", "b64dec", "b32enc", "b32dec", "tuple", "list", "dict",
    "get", "set", "unset", "hasKey", "pluck", "keys", "pick", "omit", "merge", "mergeOverwrite",
    "mustMerge", "mustMergeOverwrite", "values", "append", "mustAppend", "prepend", "mustPrepend",
    "first", "mustFirst", "rest", "mustRest", "last", "mustLast", "initial", "mustInitial",
    "reverse", "mustReverse", "uniq", "mustUniq", "without", "mustWithout", "has", "mustHas",
    "slice", "mustSlice", "concat", "dig", "chunk", "mustChunk", "bcrypt", "htpasswd",
    "genPrivateKey", "derivePassword", "buildCustomCert", "genCA", "genCAWithKey",
    "genSelfSignedCert", "genSelfSignedCertWithKey", "genSignedCert", "genSignedCertWithKey",
    "encryptAES", "decryptAES", "randBytes", "uuidv4", "semver", "semverCompare", "fail",
    "regexMatch", "mustRegexMatch", "regexFindAll", "mustRegexFindAll", "regexFind",
    "mustRegexFind", "regexReplaceAll", "mustRegexReplaceAll", "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral", "regexSplit", "mustRegexSplit", "regexQuoteMeta", "urlParse",
    "urlJoin",
];

/// The functions Argo CD adds.
#[rustfmt::skip]
const ARGO_FUNCTIONS: &[&str] = &[
    "normalize", "slugify", "toYaml", "fromYaml", "fromYamlArray",
];

/// Functions after which a missing parameter does not fail the template (without
/// `missingkey=error`): they test for it or replace it.
#[rustfmt::skip]
const GUARDS: &[&str] = &[
    "default", "coalesce", "empty", "hasKey", "ternary", "dig", "get", "kindIs", "kindOf", "typeOf",
    "typeIs", "and", "or", "not", "pluck",
];

/// Whether `name` is a function Argo CD's templates can call.
pub fn is_function(name: &str) -> bool {
    GO_FUNCTIONS.contains(&name)
        || SPRIG_FUNCTIONS.contains(&name)
        || ARGO_FUNCTIONS.contains(&name)
}

// ---------------------------------------------------------------------------------------------
// Lexer (text/template/parse/lex.go)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Error,
    Bool,
    Char,
    CharConstant,
    Complex,
    Assign,
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords.
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl Kind {
    fn is_keyword(self) -> bool {
        matches!(
            self,
            Kind::Block
                | Kind::Break
                | Kind::Continue
                | Kind::Dot
                | Kind::Define
                | Kind::Else
                | Kind::End
                | Kind::If
                | Kind::Nil
                | Kind::Range
                | Kind::Template
                | Kind::With
        )
    }
}

#[derive(Debug, Clone)]
struct Item {
    kind: Kind,
    val: String,
    pos: usize,
    line: usize,
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            Kind::Eof => f.write_str("EOF"),
            Kind::Error => f.write_str(&self.val),
            k if k.is_keyword() => write!(f, "<{}>", self.val),
            _ if self.val.chars().count() > 10 => {
                let head: String = self.val.chars().take(10).collect();
                write!(f, "{}...", go_quote(&head))
            }
            _ => f.write_str(&go_quote(&self.val)),
        }
    }
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    items: Vec<Item>,
    paren_depth: i32,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn is_alphanumeric(c: char) -> bool {
    c == '_' || c.is_alphabetic() || c.is_numeric()
}

fn has_left_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && b[0] == b'-' && is_space(b[1] as char)
}

fn has_right_trim_marker(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2 && is_space(b[0] as char) && b[1] == b'-'
}

const SPACES: [char; 4] = [' ', '\t', '\r', '\n'];

impl<'a> Lexer<'a> {
    fn rest(&self) -> &'a str {
        self.input.get(self.pos..).unwrap_or("")
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn line_at(&self, pos: usize) -> usize {
        1 + self.input.get(..pos).unwrap_or("").matches('\n').count()
    }

    fn emit_val(&mut self, kind: Kind, val: &str, pos: usize) {
        let line = self.line_at(pos);
        self.items.push(Item {
            kind,
            val: val.to_string(),
            pos,
            line,
        });
    }

    fn emit(&mut self, kind: Kind) {
        let val = self
            .input
            .get(self.start..self.pos)
            .unwrap_or("")
            .to_string();
        let start = self.start;
        self.emit_val(kind, &val, start);
        self.start = self.pos;
    }

    fn error(&mut self, msg: String) {
        let start = self.start;
        self.emit_val(Kind::Error, &msg, start);
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let rest = self.rest();
        if has_right_trim_marker(rest) && rest.get(2..).is_some_and(|r| r.starts_with("}}")) {
            return (true, true);
        }
        (rest.starts_with("}}"), false)
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with("}}"),
        }
    }

    fn skip_leading_spaces(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start_matches(SPACES).len();
        self.start = self.pos;
    }

    /// Lexes the whole input; the last item is `Eof` or an `Error`.
    fn run(mut self) -> Vec<Item> {
        while self.text() && self.action() {}
        self.items
    }

    /// Text up to an action; false at the end of the input or on an error.
    fn text(&mut self) -> bool {
        loop {
            let Some(x) = self.rest().find("{{") else {
                self.pos = self.input.len();
                if self.pos > self.start {
                    self.emit(Kind::Text);
                }
                self.emit(Kind::Eof);
                return false;
            };
            let delim = self.pos + x;
            let trim = has_left_trim_marker(self.input.get(delim + 2..).unwrap_or(""));
            let mut text = self.input.get(self.start..delim).unwrap_or("");
            if trim {
                text = text.trim_end_matches(SPACES);
            }
            if !text.is_empty() {
                let start = self.start;
                self.emit_val(Kind::Text, text, start);
            }
            self.pos = delim + 2;
            let after = if trim { 2 } else { 0 };
            if self
                .input
                .get(self.pos + after..)
                .is_some_and(|r| r.starts_with("/*"))
            {
                self.pos += after + 2;
                self.start = delim;
                let Some(end) = self.rest().find("*/") else {
                    self.error("unclosed comment".into());
                    return false;
                };
                self.pos += end + 2;
                let (is_delim, trim_right) = self.at_right_delim();
                if !is_delim {
                    self.error("comment ends before closing delimiter".into());
                    return false;
                }
                if trim_right {
                    self.pos += 2;
                }
                self.pos += 2;
                if trim_right {
                    self.skip_leading_spaces();
                }
                self.start = self.pos;
                continue;
            }
            self.emit_val(Kind::LeftDelim, "{{", delim);
            self.pos += after;
            self.start = self.pos;
            self.paren_depth = 0;
            return true;
        }
    }

    /// The inside of an action up to its right delimiter; false on an error.
    fn action(&mut self) -> bool {
        loop {
            let (is_delim, trim) = self.at_right_delim();
            if is_delim {
                if self.paren_depth != 0 {
                    self.error("unclosed left paren".into());
                    return false;
                }
                if trim {
                    self.pos += 2;
                }
                self.start = self.pos;
                self.pos += 2;
                self.emit(Kind::RightDelim);
                if trim {
                    self.skip_leading_spaces();
                }
                return true;
            }
            self.start = self.pos;
            let Some(c) = self.next() else {
                self.error("unclosed action".into());
                return false;
            };
            let ok = match c {
                c if is_space(c) => {
                    let mut spaces = 1;
                    while self.peek().is_some_and(is_space) {
                        self.next();
                        spaces += 1;
                    }
                    let before = self.input.get(self.pos - 1..).unwrap_or("");
                    if has_right_trim_marker(before)
                        && self
                            .input
                            .get(self.pos + 1..)
                            .is_some_and(|r| r.starts_with("}}"))
                    {
                        self.pos -= 1;
                        if spaces == 1 {
                            continue;
                        }
                    }
                    self.emit(Kind::Space);
                    true
                }
                '=' => {
                    self.emit(Kind::Assign);
                    true
                }
                ':' => {
                    if self.next() == Some('=') {
                        self.emit(Kind::Declare);
                        true
                    } else {
                        self.error("expected :=".into());
                        false
                    }
                }
                '|' => {
                    self.emit(Kind::Pipe);
                    true
                }
                '"' => self.quote(),
                '`' => self.raw_quote(),
                '$' => {
                    if self.at_terminator() {
                        self.emit(Kind::Variable);
                        true
                    } else {
                        self.field_or_variable(Kind::Variable)
                    }
                }
                '\'' => self.char_constant(),
                '.' if self.peek().is_some_and(|d| !d.is_ascii_digit()) => {
                    self.field_or_variable(Kind::Field)
                }
                '.' | '+' | '-' | '0'..='9' => {
                    self.pos = self.start;
                    self.number()
                }
                c if is_alphanumeric(c) => self.identifier(),
                '(' => {
                    self.paren_depth += 1;
                    self.emit(Kind::LeftParen);
                    true
                }
                ')' => {
                    self.paren_depth -= 1;
                    if self.paren_depth < 0 {
                        self.error("unexpected right paren".into());
                        false
                    } else {
                        self.emit(Kind::RightParen);
                        true
                    }
                }
                c if c.is_ascii() && !c.is_ascii_control() => {
                    self.emit(Kind::Char);
                    true
                }
                c => {
                    self.error(format!("unrecognized character in action: {}", go_rune(c)));
                    false
                }
            };
            if !ok {
                return false;
            }
        }
    }

    fn field_or_variable(&mut self, kind: Kind) -> bool {
        if self.at_terminator() {
            self.emit(if kind == Kind::Variable {
                Kind::Variable
            } else {
                Kind::Dot
            });
            return true;
        }
        while self.peek().is_some_and(is_alphanumeric) {
            self.next();
        }
        if !self.at_terminator() {
            let c = self.peek().unwrap_or('\0');
            self.error(format!("bad character {}", go_rune(c)));
            return false;
        }
        self.emit(kind);
        true
    }

    fn identifier(&mut self) -> bool {
        while self.peek().is_some_and(is_alphanumeric) {
            self.next();
        }
        if !self.at_terminator() {
            let c = self.peek().unwrap_or('\0');
            self.error(format!("bad character {}", go_rune(c)));
            return false;
        }
        let word = self.input.get(self.start..self.pos).unwrap_or("");
        let kind = match word {
            "block" => Kind::Block,
            "break" => Kind::Break,
            "continue" => Kind::Continue,
            "define" => Kind::Define,
            "else" => Kind::Else,
            "end" => Kind::End,
            "if" => Kind::If,
            "range" => Kind::Range,
            "nil" => Kind::Nil,
            "template" => Kind::Template,
            "with" => Kind::With,
            "true" | "false" => Kind::Bool,
            _ => Kind::Identifier,
        };
        self.emit(kind);
        true
    }

    fn char_constant(&mut self) -> bool {
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    None | Some('\n') => {
                        self.error("unterminated character constant".into());
                        return false;
                    }
                    _ => {}
                },
                None | Some('\n') => {
                    self.error("unterminated character constant".into());
                    return false;
                }
                Some('\'') => break,
                _ => {}
            }
        }
        self.emit(Kind::CharConstant);
        true
    }

    fn quote(&mut self) -> bool {
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    None | Some('\n') => {
                        self.error("unterminated quoted string".into());
                        return false;
                    }
                    _ => {}
                },
                None | Some('\n') => {
                    self.error("unterminated quoted string".into());
                    return false;
                }
                Some('"') => break,
                _ => {}
            }
        }
        self.emit(Kind::String);
        true
    }

    fn raw_quote(&mut self) -> bool {
        loop {
            match self.next() {
                None => {
                    self.error("unterminated raw quoted string".into());
                    return false;
                }
                Some('`') => break,
                _ => {}
            }
        }
        self.emit(Kind::RawString);
        true
    }

    fn accept(&mut self, valid: &str) -> bool {
        if self.peek().is_some_and(|c| valid.contains(c)) {
            self.next();
            true
        } else {
            false
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alphanumeric) {
            self.next();
            return false;
        }
        true
    }

    fn number(&mut self) -> bool {
        if !self.scan_number() {
            let text = self.input.get(self.start..self.pos).unwrap_or("");
            self.error(format!("bad number syntax: {}", go_quote(text)));
            return false;
        }
        if matches!(self.peek(), Some('+' | '-')) {
            if !self.scan_number() || !self.input.get(..self.pos).is_some_and(|s| s.ends_with('i'))
            {
                let text = self.input.get(self.start..self.pos).unwrap_or("");
                self.error(format!("bad number syntax: {}", go_quote(text)));
                return false;
            }
            self.emit(Kind::Complex);
            return true;
        }
        self.emit(Kind::Number);
        true
    }
}

/// Go's `%q` of a string (strconv.Quote), for the printable ASCII and common escapes.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#U` of a rune: `U+002D '-'`.
fn go_rune(c: char) -> String {
    format!("U+{:04X} '{c}'", c as u32)
}

/// strconv.Unquote of a string or raw string token.
fn unquote(token: &str) -> Result<String, String> {
    if let Some(raw) = token.strip_prefix('`').and_then(|t| t.strip_suffix('`')) {
        return Ok(raw.replace('\r', ""));
    }
    let inner = token
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or_else(|| "invalid syntax".to_string())?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    let hex =
        |chars: &mut std::iter::Peekable<std::str::Chars<'_>>, n: usize| -> Result<u32, String> {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars
                    .next()
                    .and_then(|c| c.to_digit(16))
                    .ok_or_else(|| "invalid syntax".to_string())?;
                v = v * 16 + d;
            }
            Ok(v)
        };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next().ok_or_else(|| "invalid syntax".to_string())?;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            '"' => out.push('"'),
            'x' => out.push(char::from_u32(hex(&mut chars, 2)?).ok_or("invalid syntax")?),
            'u' => out.push(char::from_u32(hex(&mut chars, 4)?).ok_or("invalid syntax")?),
            'U' => out.push(char::from_u32(hex(&mut chars, 8)?).ok_or("invalid syntax")?),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    v = v * 8
                        + chars
                            .next()
                            .and_then(|c| c.to_digit(8))
                            .ok_or_else(|| "invalid syntax".to_string())?;
                }
                out.push(char::from_u32(v).ok_or("invalid syntax")?);
            }
            _ => return Err("invalid syntax".into()),
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Parse tree (text/template/parse/node.go)
// ---------------------------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Action(Pipe),
    If(Control),
    Range(Control),
    With(Control),
    Template {
        pos: usize,
        name: String,
        pipe: Option<Pipe>,
    },
    Break,
    Continue,
}

#[derive(Debug, Clone)]
struct Control {
    pipe: Pipe,
    list: Vec<Node>,
    else_list: Option<Vec<Node>>,
}

#[derive(Debug, Clone)]
struct Pipe {
    pos: usize,
    decl: Vec<String>,
    is_assign: bool,
    cmds: Vec<Command>,
}

#[derive(Debug, Clone)]
struct Command {
    pos: usize,
    args: Vec<Arg>,
}

#[derive(Debug, Clone)]
enum Arg {
    /// `.a.b`
    Field {
        pos: usize,
        idents: Vec<String>,
    },
    /// `$x.a.b` (`idents[0]` is the variable).
    Variable {
        pos: usize,
        idents: Vec<String>,
    },
    Dot(usize),
    /// A function.
    Identifier {
        pos: usize,
        name: String,
    },
    /// `(pipeline).a.b`, `fn.a`.
    Chain {
        pos: usize,
        node: Box<Arg>,
        fields: Vec<String>,
    },
    /// A parenthesized pipeline.
    Pipe(Box<Pipe>),
    String {
        pos: usize,
        quoted: String,
        text: String,
    },
    Number {
        pos: usize,
        text: String,
        number: Number,
    },
    Bool(usize, bool),
    Nil(usize),
}

#[derive(Debug, Clone, Copy)]
struct Number {
    int: Option<i64>,
    float: Option<f64>,
    /// The literal is written as a float (`1.5`, `1e3`): an untyped constant is a float64.
    written_float: bool,
    complex: bool,
}

impl Arg {
    fn pos(&self) -> usize {
        match self {
            Arg::Field { pos, .. }
            | Arg::Variable { pos, .. }
            | Arg::Identifier { pos, .. }
            | Arg::Chain { pos, .. }
            | Arg::String { pos, .. }
            | Arg::Number { pos, .. } => *pos,
            Arg::Dot(p) | Arg::Bool(p, _) | Arg::Nil(p) => *p,
            Arg::Pipe(p) => p.pos,
        }
    }
}

impl std::fmt::Display for Arg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Arg::Field { idents, .. } => {
                for i in idents {
                    write!(f, ".{i}")?;
                }
                Ok(())
            }
            Arg::Variable { idents, .. } => f.write_str(&idents.join(".")),
            Arg::Dot(_) => f.write_str("."),
            Arg::Identifier { name, .. } => f.write_str(name),
            Arg::Chain { node, fields, .. } => {
                if matches!(**node, Arg::Pipe(_)) {
                    write!(f, "({node})")?;
                } else {
                    write!(f, "{node}")?;
                }
                for i in fields {
                    write!(f, ".{i}")?;
                }
                Ok(())
            }
            Arg::Pipe(p) => write!(f, "{p}"),
            Arg::String { quoted, .. } => f.write_str(quoted),
            Arg::Number { text, .. } => f.write_str(text),
            Arg::Bool(_, b) => write!(f, "{b}"),
            Arg::Nil(_) => f.write_str("nil"),
        }
    }
}

impl std::fmt::Display for Command {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, a) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            if matches!(a, Arg::Pipe(_)) {
                write!(f, "({a})")?;
            } else {
                write!(f, "{a}")?;
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.decl.is_empty() {
            write!(
                f,
                "{} {} ",
                self.decl.join(", "),
                if self.is_assign { "=" } else { ":=" }
            )?;
        }
        for (i, c) in self.cmds.iter().enumerate() {
            if i > 0 {
                f.write_str(" | ")?;
            }
            write!(f, "{c}")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Parser (text/template/parse/parse.go)
// ---------------------------------------------------------------------------------------------

/// A parsed template.
#[derive(Debug, Clone)]
pub struct Template {
    text: String,
    root: Vec<Node>,
    defined: HashMap<String, Vec<Node>>,
}

enum Parsed {
    Node(Node),
    End,
    Else,
}

struct Parser {
    items: Vec<Item>,
    i: usize,
    line: usize,
    vars: Vec<String>,
    range_depth: usize,
    action_line: usize,
    defined: HashMap<String, Vec<Node>>,
}

type PResult<T> = Result<T, String>;

/// Parses `text` as Argo CD does: an error is Go's message (`template: base:1: ...`).
pub fn parse(text: &str) -> Result<Template, String> {
    let items = Lexer {
        input: text,
        pos: 0,
        start: 0,
        items: Vec::new(),
        paren_depth: 0,
    }
    .run();
    let mut p = Parser {
        items,
        i: 0,
        line: 1,
        vars: vec!["$".into()],
        range_depth: 0,
        action_line: 0,
        defined: HashMap::new(),
    };
    let root = p.parse()?;
    Ok(Template {
        text: text.to_string(),
        root,
        defined: p.defined,
    })
}

impl Parser {
    fn errorf(&self, msg: impl std::fmt::Display) -> String {
        format!("template: {NAME}:{}: {msg}", self.line)
    }

    fn next(&mut self) -> Item {
        let item = self.items.get(self.i).cloned().unwrap_or(Item {
            kind: Kind::Eof,
            val: String::new(),
            pos: 0,
            line: self.line,
        });
        self.i += 1;
        self.line = item.line;
        item
    }

    fn backup(&mut self) {
        self.i = self.i.saturating_sub(1);
    }

    fn peek(&mut self) -> Item {
        let item = self.next();
        self.backup();
        item
    }

    fn next_non_space(&mut self) -> Item {
        loop {
            let item = self.next();
            if item.kind != Kind::Space {
                return item;
            }
        }
    }

    fn peek_non_space(&mut self) -> Item {
        let item = self.next_non_space();
        self.backup();
        item
    }

    fn unexpected<T>(&self, item: &Item, context: &str) -> PResult<T> {
        if item.kind == Kind::Error {
            let mut extra = String::new();
            if self.action_line != 0 && self.action_line != item.line {
                extra = format!(" in action started at {NAME}:{}", self.action_line);
                if item.val.ends_with(" action") {
                    extra = extra[" in action".len()..].to_string();
                }
            }
            return Err(self.errorf(format!("{}{extra}", item.val)));
        }
        Err(self.errorf(format!("unexpected {item} in {context}")))
    }

    fn expect(&mut self, kind: Kind, context: &str) -> PResult<Item> {
        let item = self.next_non_space();
        if item.kind != kind {
            return self.unexpected(&item, context);
        }
        Ok(item)
    }

    fn parse(&mut self) -> PResult<Vec<Node>> {
        let mut root = Vec::new();
        while self.peek().kind != Kind::Eof {
            if self.peek().kind == Kind::LeftDelim {
                let save = self.i;
                self.next();
                if self.next_non_space().kind == Kind::Define {
                    self.definition()?;
                    continue;
                }
                self.i = save;
            }
            match self.text_or_action()? {
                Parsed::End => return Err(self.errorf("unexpected {{end}}")),
                Parsed::Else => return Err(self.errorf("unexpected {{else}}")),
                Parsed::Node(n) => root.push(n),
            }
        }
        Ok(root)
    }

    fn definition(&mut self) -> PResult<()> {
        const CONTEXT: &str = "define clause";
        let name = self.next_non_space();
        if !matches!(name.kind, Kind::String | Kind::RawString) {
            return self.unexpected(&name, CONTEXT);
        }
        let name = unquote(&name.val).map_err(|e| self.errorf(e))?;
        self.expect(Kind::RightDelim, CONTEXT)?;
        let vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (list, end) = self.item_list()?;
        self.vars = vars;
        if !matches!(end, Parsed::End) {
            return Err(self.errorf(format!("unexpected {} in {CONTEXT}", parsed_name(&end))));
        }
        self.defined.insert(name, list);
        Ok(())
    }

    fn item_list(&mut self) -> PResult<(Vec<Node>, Parsed)> {
        let mut list = Vec::new();
        while self.peek_non_space().kind != Kind::Eof {
            match self.text_or_action()? {
                Parsed::Node(n) => list.push(n),
                end => return Ok((list, end)),
            }
        }
        Err(self.errorf("unexpected EOF"))
    }

    fn text_or_action(&mut self) -> PResult<Parsed> {
        let item = self.next_non_space();
        match item.kind {
            Kind::Text => Ok(Parsed::Node(Node::Text(item.val))),
            Kind::LeftDelim => {
                self.action_line = item.line;
                let out = self.action();
                self.action_line = 0;
                out
            }
            _ => self.unexpected(&item, "input"),
        }
    }

    fn action(&mut self) -> PResult<Parsed> {
        let item = self.next_non_space();
        match item.kind {
            Kind::Block => return self.block_control().map(Parsed::Node),
            Kind::Break | Kind::Continue => {
                let what = if item.kind == Kind::Break {
                    "{{break}}"
                } else {
                    "{{continue}}"
                };
                let next = self.next_non_space();
                if next.kind != Kind::RightDelim {
                    return self.unexpected(&next, what);
                }
                if self.range_depth == 0 {
                    return Err(self.errorf(format!("{what} outside {{{{range}}}}")));
                }
                return Ok(Parsed::Node(if item.kind == Kind::Break {
                    Node::Break
                } else {
                    Node::Continue
                }));
            }
            Kind::Else => {
                let peek = self.peek_non_space();
                if !matches!(peek.kind, Kind::If | Kind::With) {
                    self.expect(Kind::RightDelim, "else")?;
                }
                return Ok(Parsed::Else);
            }
            Kind::End => {
                self.expect(Kind::RightDelim, "end")?;
                return Ok(Parsed::End);
            }
            Kind::If => return Ok(Parsed::Node(Node::If(self.control("if")?))),
            Kind::Range => return Ok(Parsed::Node(Node::Range(self.control("range")?))),
            Kind::With => return Ok(Parsed::Node(Node::With(self.control("with")?))),
            Kind::Template => return self.template_control().map(Parsed::Node),
            _ => {}
        }
        self.backup();
        let pipe = self.pipeline("command", Kind::RightDelim)?;
        Ok(Parsed::Node(Node::Action(pipe)))
    }

    fn control(&mut self, context: &str) -> PResult<Control> {
        let mark = self.vars.len();
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        if context == "range" {
            self.range_depth += 1;
        }
        let (list, next) = self.item_list()?;
        if context == "range" {
            self.range_depth -= 1;
        }
        let mut else_list = None;
        if let Parsed::Else = next {
            let peek = self.peek();
            if context == "if" && peek.kind == Kind::If {
                self.next();
                else_list = Some(vec![Node::If(self.control("if")?)]);
            } else if context == "with" && peek.kind == Kind::With {
                self.next();
                else_list = Some(vec![Node::With(self.control("with")?)]);
            } else {
                let (list, next) = self.item_list()?;
                if !matches!(next, Parsed::End) {
                    return Err(self.errorf(format!("expected end; found {}", parsed_name(&next))));
                }
                else_list = Some(list);
            }
        }
        self.vars.truncate(mark);
        Ok(Control {
            pipe,
            list,
            else_list,
        })
    }

    fn template_name(&mut self, item: &Item, context: &str) -> PResult<String> {
        match item.kind {
            Kind::String | Kind::RawString => unquote(&item.val).map_err(|e| self.errorf(e)),
            _ => self.unexpected(item, context),
        }
    }

    fn template_control(&mut self) -> PResult<Node> {
        const CONTEXT: &str = "template clause";
        let item = self.next_non_space();
        let name = self.template_name(&item, CONTEXT)?;
        let pipe = if self.next_non_space().kind != Kind::RightDelim {
            self.backup();
            Some(self.pipeline(CONTEXT, Kind::RightDelim)?)
        } else {
            None
        };
        Ok(Node::Template {
            pos: item.pos,
            name,
            pipe,
        })
    }

    fn block_control(&mut self) -> PResult<Node> {
        const CONTEXT: &str = "block clause";
        let item = self.next_non_space();
        let name = self.template_name(&item, CONTEXT)?;
        let pipe = self.pipeline(CONTEXT, Kind::RightDelim)?;
        let vars = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (list, end) = self.item_list()?;
        self.vars = vars;
        if !matches!(end, Parsed::End) {
            return Err(self.errorf(format!("unexpected {} in {CONTEXT}", parsed_name(&end))));
        }
        self.defined.insert(name.clone(), list);
        Ok(Node::Template {
            pos: item.pos,
            name,
            pipe: Some(pipe),
        })
    }

    fn pipeline(&mut self, context: &str, end: Kind) -> PResult<Pipe> {
        let start = self.peek_non_space();
        let mut pipe = Pipe {
            pos: start.pos,
            decl: Vec::new(),
            is_assign: false,
            cmds: Vec::new(),
        };
        loop {
            if self.peek_non_space().kind != Kind::Variable {
                break;
            }
            let save = self.i;
            let v = self.next_non_space();
            let next = self.peek_non_space();
            match next.kind {
                Kind::Assign | Kind::Declare => {
                    pipe.is_assign = next.kind == Kind::Assign;
                    self.next_non_space();
                    pipe.decl.push(v.val.clone());
                    self.vars.push(v.val);
                    break;
                }
                Kind::Char if next.val == "," => {
                    self.next_non_space();
                    pipe.decl.push(v.val.clone());
                    self.vars.push(v.val);
                    if context == "range" && pipe.decl.len() < 2 {
                        match self.peek_non_space().kind {
                            Kind::Variable | Kind::RightDelim | Kind::RightParen => continue,
                            _ => return Err(self.errorf("range can only initialize variables")),
                        }
                    }
                    return Err(self.errorf(format!("too many declarations in {context}")));
                }
                _ => {
                    self.i = save;
                    break;
                }
            }
        }
        loop {
            let item = self.next_non_space();
            if item.kind == end {
                if pipe.cmds.is_empty() {
                    return Err(self.errorf(format!("missing value for {context}")));
                }
                for (i, c) in pipe.cmds.iter().enumerate().skip(1) {
                    if matches!(
                        c.args.first(),
                        Some(
                            Arg::Bool(..)
                                | Arg::Dot(_)
                                | Arg::Nil(_)
                                | Arg::Number { .. }
                                | Arg::String { .. }
                        )
                    ) {
                        return Err(self.errorf(format!(
                            "non executable command in pipeline stage {}",
                            i + 1
                        )));
                    }
                }
                return Ok(pipe);
            }
            match item.kind {
                Kind::Bool
                | Kind::CharConstant
                | Kind::Complex
                | Kind::Dot
                | Kind::Field
                | Kind::Identifier
                | Kind::Number
                | Kind::Nil
                | Kind::RawString
                | Kind::String
                | Kind::Variable
                | Kind::LeftParen => {
                    self.backup();
                    let cmd = self.command()?;
                    pipe.cmds.push(cmd);
                }
                _ => return self.unexpected(&item, context),
            }
        }
    }

    fn command(&mut self) -> PResult<Command> {
        let pos = self.peek_non_space().pos;
        let mut cmd = Command {
            pos,
            args: Vec::new(),
        };
        loop {
            self.peek_non_space();
            if let Some(operand) = self.operand()? {
                cmd.args.push(operand);
            }
            let item = self.next();
            match item.kind {
                Kind::Space => continue,
                Kind::RightDelim | Kind::RightParen => self.backup(),
                Kind::Pipe => {}
                _ => return self.unexpected(&item, "operand"),
            }
            break;
        }
        if cmd.args.is_empty() {
            return Err(self.errorf("empty command"));
        }
        Ok(cmd)
    }

    fn operand(&mut self) -> PResult<Option<Arg>> {
        let Some(node) = self.term()? else {
            return Ok(None);
        };
        if self.peek().kind != Kind::Field {
            return Ok(Some(node));
        }
        let chain_pos = self.peek().pos;
        let mut fields = Vec::new();
        while self.peek().kind == Kind::Field {
            let f = self.next();
            fields.push(f.val.trim_start_matches('.').to_string());
        }
        Ok(Some(match node {
            Arg::Field { mut idents, .. } => {
                idents.extend(fields);
                Arg::Field {
                    pos: chain_pos,
                    idents,
                }
            }
            Arg::Variable { mut idents, .. } => {
                idents.extend(fields);
                Arg::Variable {
                    pos: chain_pos,
                    idents,
                }
            }
            Arg::Bool(..) | Arg::String { .. } | Arg::Number { .. } | Arg::Nil(_) | Arg::Dot(_) => {
                return Err(self.errorf(format!(
                    "unexpected . after term {}",
                    go_quote(&node.to_string())
                )));
            }
            node => Arg::Chain {
                pos: chain_pos,
                node: Box::new(node),
                fields,
            },
        }))
    }

    fn term(&mut self) -> PResult<Option<Arg>> {
        let item = self.next_non_space();
        Ok(Some(match item.kind {
            Kind::Identifier => {
                if !is_function(&item.val) {
                    return Err(
                        self.errorf(format!("function {} not defined", go_quote(&item.val)))
                    );
                }
                Arg::Identifier {
                    pos: item.pos,
                    name: item.val,
                }
            }
            Kind::Dot => Arg::Dot(item.pos),
            Kind::Nil => Arg::Nil(item.pos),
            Kind::Variable => {
                if !self.vars.contains(&item.val) {
                    return Err(self.errorf(format!("undefined variable {}", go_quote(&item.val))));
                }
                Arg::Variable {
                    pos: item.pos,
                    idents: vec![item.val],
                }
            }
            Kind::Field => Arg::Field {
                pos: item.pos,
                idents: item
                    .val
                    .trim_start_matches('.')
                    .split('.')
                    .map(str::to_string)
                    .collect(),
            },
            Kind::Bool => Arg::Bool(item.pos, item.val == "true"),
            Kind::CharConstant | Kind::Complex | Kind::Number => {
                let number = parse_number(&item.val, item.kind).map_err(|e| self.errorf(e))?;
                Arg::Number {
                    pos: item.pos,
                    text: item.val,
                    number,
                }
            }
            Kind::LeftParen => Arg::Pipe(Box::new(
                self.pipeline("parenthesized pipeline", Kind::RightParen)?,
            )),
            Kind::String | Kind::RawString => {
                let text = unquote(&item.val).map_err(|e| self.errorf(e))?;
                Arg::String {
                    pos: item.pos,
                    quoted: item.val,
                    text,
                }
            }
            _ => {
                self.backup();
                return Ok(None);
            }
        }))
    }
}

fn parsed_name(p: &Parsed) -> &'static str {
    match p {
        Parsed::End => "{{end}}",
        Parsed::Else => "{{else}}",
        Parsed::Node(_) => "node",
    }
}

/// The value of a number literal (text/template/parse `newNumber`).
fn parse_number(text: &str, kind: Kind) -> Result<Number, String> {
    let mut n = Number {
        int: None,
        float: None,
        written_float: false,
        complex: false,
    };
    if kind == Kind::CharConstant {
        let s = text
            .strip_prefix('\'')
            .and_then(|t| t.strip_suffix('\''))
            .ok_or_else(|| format!("malformed character constant: {text}"))?;
        let c = if s.starts_with('\\') {
            unquote(&format!("\"{s}\""))
                .ok()
                .and_then(|u| u.chars().next())
        } else {
            let mut chars = s.chars();
            let c = chars.next();
            if chars.next().is_some() { None } else { c }
        };
        let c = c.ok_or_else(|| format!("malformed character constant: {text}"))?;
        n.int = Some(c as i64);
        n.float = Some(c as u32 as f64);
        return Ok(n);
    }
    let hex_float = {
        let l = text.to_ascii_lowercase();
        let l = l.trim_start_matches(['+', '-']);
        l.starts_with("0x") && l.contains('p')
    };
    if kind == Kind::Complex || text.ends_with('i') || hex_float {
        n.complex = true;
        return Ok(n);
    }
    let clean = text.replace('_', "");
    let (neg, body) = match clean.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, clean.strip_prefix('+').unwrap_or(&clean)),
    };
    let lower = body.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.chars().all(|c| c.is_ascii_digit())
    {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else {
        lower.parse::<i64>().ok()
    };
    if let Some(i) = int {
        let i = if neg { -i } else { i };
        n.int = Some(i);
        n.float = Some(i as f64);
    } else if !lower.starts_with("0x")
        && let Ok(f) = lower.parse::<f64>()
    {
        let f = if neg { -f } else { f };
        n.float = Some(f);
        n.written_float = true;
        if f.fract() == 0.0 && f.abs() < 9.2e18 {
            n.int = Some(f as i64);
        }
    }
    if n.int.is_none() && n.float.is_none() {
        return Err(format!("illegal number syntax: {}", go_quote(text)));
    }
    n.written_float |= text.contains(['.', 'e', 'E']) && !lower.starts_with("0x");
    Ok(n)
}

// ---------------------------------------------------------------------------------------------
// Values
// ---------------------------------------------------------------------------------------------

/// A value while a template runs: the JSON of the parameters, and what functions return.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// Go's invalid `reflect.Value` (a missing key): prints `<no value>`.
    Invalid,
    /// A nil interface (JSON null).
    Nil,
    Bool(bool),
    /// Go `int` (literals, `len`, `atoi`...).
    Int(i64),
    /// Go `int64` (Sprig's arithmetic).
    Int64(i64),
    /// Go `float64` (every JSON number).
    Float(f64),
    Str(String),
    List(Vec<Val>),
    Map(BTreeMap<String, Val>),
}

impl Val {
    /// The JSON value as Go's `json.Unmarshal` into `any` gives it (numbers are float64).
    pub fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Nil,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Float(n.as_f64().unwrap_or(0.0)),
            Value::String(s) => Val::Str(s.clone()),
            Value::Array(a) => Val::List(a.iter().map(Val::from_json).collect()),
            Value::Object(m) => Val::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), Val::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The value as JSON (`Invalid` is null).
    pub fn to_json(&self) -> Value {
        match self {
            Val::Invalid | Val::Nil => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Int(i) | Val::Int64(i) => Value::from(*i),
            Val::Float(f) => serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
            Val::Str(s) => Value::String(s.clone()),
            Val::List(l) => Value::Array(l.iter().map(Val::to_json).collect()),
            Val::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }

    fn go_type(&self) -> &'static str {
        match self {
            Val::Invalid | Val::Nil => "interface {}",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Int64(_) => "int64",
            Val::Float(_) => "float64",
            Val::Str(_) => "string",
            Val::List(_) => "[]interface {}",
            Val::Map(_) => "map[string]interface {}",
        }
    }

    /// Go's truth (`if`, `with`, `and`, `or`, `not`).
    fn truth(&self) -> bool {
        match self {
            Val::Invalid | Val::Nil => false,
            Val::Bool(b) => *b,
            Val::Int(i) | Val::Int64(i) => *i != 0,
            Val::Float(f) => *f != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::List(l) => !l.is_empty(),
            Val::Map(m) => !m.is_empty(),
        }
    }

    /// fmt's `%v`.
    fn show(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, true);
        out
    }

    fn write(&self, out: &mut String, top: bool) {
        match self {
            Val::Invalid => out.push_str("<no value>"),
            Val::Nil if top => out.push_str("<no value>"),
            Val::Nil => out.push_str("<nil>"),
            Val::Bool(b) => {
                let _ = write!(out, "{b}");
            }
            Val::Int(i) | Val::Int64(i) => {
                let _ = write!(out, "{i}");
            }
            Val::Float(f) => out.push_str(&go_float(*f)),
            Val::Str(s) => out.push_str(s),
            Val::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    v.write(out, false);
                }
                out.push(']');
            }
            Val::Map(m) => {
                out.push_str("map[");
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(k);
                    out.push(':');
                    v.write(out, false);
                }
                out.push(']');
            }
        }
    }
}

/// Go's `%v` of a float64: strconv's 'g' with the shortest digits, which switches to an
/// exponent below 1e-4 and from 1e6 (`1234567` prints `1.234567e+06`).
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let mut out = format!("{sign}{}", &digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
        return out;
    }
    if exp < 0 {
        let zeros = "0".repeat((-exp - 1) as usize);
        return format!("{sign}0.{zeros}{digits}");
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{sign}{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// Go's `encoding/json` of a float64.
fn json_float(f: f64) -> String {
    if !f.is_finite() {
        return "null".into();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    if f.fract() == 0.0 {
        return format!("{}", f as i64);
    }
    format!("{f}")
}

// ---------------------------------------------------------------------------------------------
// Execution (text/template/exec.go)
// ---------------------------------------------------------------------------------------------

/// Why a template did not render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecError {
    /// Argo CD fails the same way (Go's message).
    Failed(String),
    /// The template needs something syncguard does not evaluate.
    Unsupported(String),
}

impl std::fmt::Display for ExecError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ExecError::Failed(m) | ExecError::Unsupported(m) => f.write_str(m),
        }
    }
}

/// What a failed call says, before the state adds where.
enum CallError {
    Failed(String),
    Unsupported(String),
}

type CResult<T> = Result<T, CallError>;

enum Flow {
    Normal,
    Break,
    Continue,
}

/// The node being evaluated, for the context of an error (`at <.path.basename>`).
#[derive(Clone, Copy)]
enum At<'t> {
    None,
    Arg(&'t Arg),
    Command(&'t Command),
    Template(usize, &'t str),
}

struct State<'t> {
    tmpl: &'t Template,
    missing: MissingKey,
    vars: Vec<(String, Val)>,
    out: String,
    depth: usize,
    at: At<'t>,
}

/// The most templates may nest (`template` calls).
const MAX_DEPTH: usize = 100;

impl Template {
    /// Runs the template with `data` (Argo CD's parameters) as `.` and `$`.
    pub fn execute(&self, data: &Value, missing: MissingKey) -> Result<String, ExecError> {
        let dot = Val::from_json(data);
        let mut s = State {
            tmpl: self,
            missing,
            vars: vec![("$".into(), dot.clone())],
            out: String::new(),
            depth: 0,
            at: At::None,
        };
        s.walk(&dot, &self.root)?;
        Ok(s.out)
    }
}

impl<'t> State<'t> {
    fn context(&self) -> String {
        let (pos, text) = match self.at {
            At::None => (0, String::new()),
            At::Arg(a) => (a.pos(), a.to_string()),
            At::Command(c) => (c.pos, c.to_string()),
            At::Template(pos, name) => (pos, format!("{{{{template {}}}}}", go_quote(name))),
        };
        let before = self.tmpl.text.get(..pos).unwrap_or("");
        let line = 1 + before.matches('\n').count();
        let col = pos - before.rfind('\n').map_or(0, |i| i + 1);
        format!("template: {NAME}:{line}:{col}: executing \"{NAME}\" at <{text}>")
    }

    fn fail<T>(&self, msg: impl std::fmt::Display) -> Result<T, ExecError> {
        Err(ExecError::Failed(format!("{}: {msg}", self.context())))
    }

    fn unsupported<T>(&self, what: impl std::fmt::Display) -> Result<T, ExecError> {
        Err(ExecError::Unsupported(format!(
            "{}: {what}: syncguard does not evaluate it (Argo CD's own ApplicationSet controller does)",
            self.context()
        )))
    }

    fn walk(&mut self, dot: &Val, nodes: &'t [Node]) -> Result<Flow, ExecError> {
        for node in nodes {
            match node {
                Node::Text(t) => self.out.push_str(t),
                Node::Action(pipe) => {
                    let v = self.pipeline(dot, pipe)?;
                    if pipe.decl.is_empty() {
                        self.out.push_str(&v.show());
                    }
                }
                Node::If(c) | Node::With(c) => {
                    let mark = self.vars.len();
                    let v = self.pipeline(dot, &c.pipe)?;
                    let flow = if v.truth() {
                        if matches!(node, Node::With(_)) {
                            self.walk(&v, &c.list)?
                        } else {
                            self.walk(dot, &c.list)?
                        }
                    } else if let Some(e) = &c.else_list {
                        self.walk(dot, e)?
                    } else {
                        Flow::Normal
                    };
                    self.vars.truncate(mark);
                    if !matches!(flow, Flow::Normal) {
                        return Ok(flow);
                    }
                }
                Node::Range(c) => {
                    let mark = self.vars.len();
                    let v = self.pipeline(dot, &c.pipe)?;
                    let items: Vec<(Val, Val)> = match &v {
                        Val::List(l) => l
                            .iter()
                            .enumerate()
                            .map(|(i, x)| (Val::Int(i as i64), x.clone()))
                            .collect(),
                        Val::Map(m) => m
                            .iter()
                            .map(|(k, x)| (Val::Str(k.clone()), x.clone()))
                            .collect(),
                        Val::Int(n) | Val::Int64(n) => {
                            if c.pipe.decl.len() > 1 {
                                return self.fail(format!(
                                    "can't use {} to iterate over more than one variable",
                                    v.show()
                                ));
                            }
                            (0..*n).map(|i| (Val::Int(i), Val::Int(i))).collect()
                        }
                        Val::Invalid | Val::Nil => Vec::new(),
                        other => {
                            return self.fail(format!("range can't iterate over {}", other.show()));
                        }
                    };
                    if items.is_empty()
                        && let Some(e) = &c.else_list
                    {
                        let flow = self.walk(dot, e)?;
                        self.vars.truncate(mark);
                        if !matches!(flow, Flow::Normal) {
                            return Ok(flow);
                        }
                        continue;
                    }
                    let n = self.vars.len();
                    for (index, elem) in items {
                        let decl = c.pipe.decl.len();
                        if decl > 0
                            && let Some(slot) = self.vars.get_mut(n - 1)
                        {
                            slot.1 = elem.clone();
                        }
                        if decl > 1
                            && let Some(slot) = self.vars.get_mut(n - 2)
                        {
                            slot.1 = index;
                        }
                        let inner = self.vars.len();
                        let flow = self.walk(&elem, &c.list)?;
                        self.vars.truncate(inner);
                        match flow {
                            Flow::Break => break,
                            Flow::Continue | Flow::Normal => {}
                        }
                    }
                    self.vars.truncate(mark);
                }
                Node::Template { pos, name, pipe } => {
                    self.at = At::Template(*pos, name);
                    let list = if name == NAME {
                        &self.tmpl.root
                    } else {
                        match self.tmpl.defined.get(name) {
                            Some(l) => l,
                            None => {
                                return self
                                    .fail(format!("template {} not defined", go_quote(name)));
                            }
                        }
                    };
                    if self.depth >= MAX_DEPTH {
                        return self.unsupported("templates nested this deep");
                    }
                    let new_dot = match pipe {
                        Some(p) => self.pipeline(dot, p)?,
                        None => Val::Invalid,
                    };
                    let vars =
                        std::mem::replace(&mut self.vars, vec![("$".into(), new_dot.clone())]);
                    self.depth += 1;
                    let out = self.walk(&new_dot, list);
                    self.depth -= 1;
                    self.vars = vars;
                    out?;
                }
                Node::Break => return Ok(Flow::Break),
                Node::Continue => return Ok(Flow::Continue),
            }
        }
        Ok(Flow::Normal)
    }

    fn pipeline(&mut self, dot: &Val, pipe: &'t Pipe) -> Result<Val, ExecError> {
        let mut value: Option<Val> = None;
        for cmd in &pipe.cmds {
            let mut v = self.command(dot, cmd, value.take())?;
            if v == Val::Nil {
                v = Val::Invalid;
            }
            value = Some(v);
        }
        let value = value.unwrap_or(Val::Invalid);
        for d in &pipe.decl {
            if pipe.is_assign {
                if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| n == d) {
                    slot.1 = value.clone();
                }
            } else {
                self.vars.push((d.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn not_a_function(&self, cmd: &Command, final_: &Option<Val>) -> Result<(), ExecError> {
        if cmd.args.len() > 1 || final_.is_some() {
            return self.fail(format!(
                "can't give argument to non-function {}",
                cmd.args
                    .first()
                    .map(ToString::to_string)
                    .unwrap_or_default()
            ));
        }
        Ok(())
    }

    fn command(
        &mut self,
        dot: &Val,
        cmd: &'t Command,
        final_: Option<Val>,
    ) -> Result<Val, ExecError> {
        let Some(first) = cmd.args.first() else {
            return Ok(Val::Invalid);
        };
        let has_args = cmd.args.len() > 1 || final_.is_some();
        match first {
            Arg::Field { idents, .. } => {
                self.at = At::Arg(first);
                self.field_chain(dot.clone(), idents, has_args)
            }
            Arg::Chain { node, fields, .. } => {
                self.at = At::Arg(first);
                if matches!(**node, Arg::Nil(_)) {
                    return self.fail(format!("indirection through explicit nil in {first}"));
                }
                let receiver = self.arg(dot, node)?;
                self.at = At::Arg(first);
                self.field_chain(receiver, fields, has_args)
            }
            Arg::Identifier { name, .. } => {
                self.function(dot, name, first, Some(cmd), &cmd.args[1..], final_)
            }
            Arg::Pipe(p) => {
                self.not_a_function(cmd, &final_)?;
                self.pipeline(dot, p)
            }
            Arg::Variable { idents, .. } => {
                self.at = At::Arg(first);
                let v = self.variable(&idents[0])?;
                if idents.len() == 1 {
                    self.not_a_function(cmd, &final_)?;
                    return Ok(v);
                }
                self.field_chain(v, &idents[1..], has_args)
            }
            other => {
                self.at = At::Arg(other);
                self.not_a_function(cmd, &final_)?;
                match other {
                    Arg::Bool(_, b) => Ok(Val::Bool(*b)),
                    Arg::Dot(_) => Ok(dot.clone()),
                    Arg::Nil(_) => self.fail("nil is not a command"),
                    Arg::Number { number, .. } => self.ideal(number),
                    Arg::String { text, .. } => Ok(Val::Str(text.clone())),
                    _ => self.fail(format!(
                        "can't evaluate command {}",
                        go_quote(&other.to_string())
                    )),
                }
            }
        }
    }

    fn ideal(&self, n: &Number) -> Result<Val, ExecError> {
        if n.complex {
            return self.unsupported(format!(
                "the number literal {}",
                "(complex or hexadecimal float)"
            ));
        }
        if n.written_float {
            return Ok(Val::Float(n.float.unwrap_or(0.0)));
        }
        match n.int {
            Some(i) => Ok(Val::Int(i)),
            None => Ok(Val::Float(n.float.unwrap_or(0.0))),
        }
    }

    fn variable(&self, name: &str) -> Result<Val, ExecError> {
        match self.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => self.fail(format!("undefined variable: {name}")),
        }
    }

    fn field_chain(
        &self,
        mut receiver: Val,
        idents: &[String],
        has_args: bool,
    ) -> Result<Val, ExecError> {
        for (i, name) in idents.iter().enumerate() {
            receiver = self.field(receiver, name, has_args && i + 1 == idents.len())?;
        }
        Ok(receiver)
    }

    fn field(&self, receiver: Val, name: &str, has_args: bool) -> Result<Val, ExecError> {
        match receiver {
            Val::Invalid => {
                if self.missing == MissingKey::Error {
                    return self.fail(format!("nil data; no entry for key {}", go_quote(name)));
                }
                Ok(Val::Invalid)
            }
            Val::Map(m) => {
                if has_args {
                    return self.fail(format!("{name} is not a method but has arguments"));
                }
                match m.get(name) {
                    Some(v) => Ok(v.clone()),
                    None => match self.missing {
                        MissingKey::Default => Ok(Val::Invalid),
                        MissingKey::Zero => Ok(Val::Nil),
                        MissingKey::Error => {
                            self.fail(format!("map has no entry for key {}", go_quote(name)))
                        }
                    },
                }
            }
            Val::Nil => self.fail(format!("nil pointer evaluating interface {{}}.{name}")),
            _ => self.fail(format!(
                "can't evaluate field {name} in type interface {{}}"
            )),
        }
    }

    /// An argument of a function, as an `interface{}` parameter receives it.
    fn arg(&mut self, dot: &Val, a: &'t Arg) -> Result<Val, ExecError> {
        match a {
            Arg::Dot(_) => Ok(dot.clone()),
            Arg::Nil(_) => Ok(Val::Nil),
            Arg::Field { idents, .. } => {
                self.at = At::Arg(a);
                self.field_chain(dot.clone(), idents, false)
            }
            Arg::Variable { idents, .. } => {
                self.at = At::Arg(a);
                let v = self.variable(&idents[0])?;
                self.field_chain(v, &idents[1..], false)
            }
            Arg::Pipe(p) => self.pipeline(dot, p),
            Arg::Identifier { name, .. } => self.function(dot, name, a, None, &[], None),
            Arg::Chain { node, fields, .. } => {
                self.at = At::Arg(a);
                if matches!(**node, Arg::Nil(_)) {
                    return self.fail(format!("indirection through explicit nil in {a}"));
                }
                let receiver = self.arg(dot, node)?;
                self.at = At::Arg(a);
                self.field_chain(receiver, fields, false)
            }
            Arg::String { text, .. } => Ok(Val::Str(text.clone())),
            Arg::Bool(_, b) => Ok(Val::Bool(*b)),
            Arg::Number { number, .. } => self.ideal(number),
        }
    }

    /// An argument for a parameter of type `ty` (text/template `evalArg` and `validateType`).
    fn typed_arg(&mut self, dot: &Val, a: &'t Arg, ty: Ty) -> Result<Val, ExecError> {
        self.at = At::Arg(a);
        if ty == Ty::Any {
            return self.arg(dot, a);
        }
        match (a, ty) {
            (Arg::String { text, .. }, Ty::Str) => return Ok(Val::Str(text.clone())),
            (Arg::Bool(_, b), Ty::Bool) => return Ok(Val::Bool(*b)),
            (Arg::Number { number, .. }, Ty::Int) => {
                return match number.int {
                    Some(i) if !number.written_float => Ok(Val::Int(i)),
                    _ => self.fail(format!("expected integer; found {a}")),
                };
            }
            (Arg::Nil(_), Ty::Map) => return Ok(Val::Nil),
            (Arg::Nil(_), _) => return self.fail(format!("cannot assign nil to {}", ty.name())),
            (Arg::String { .. } | Arg::Bool(..) | Arg::Number { .. }, _) => {
                return self.fail(format!(
                    "expected {}; found {a}",
                    match ty {
                        Ty::Int => "integer",
                        Ty::Bool => "bool",
                        Ty::Str => "string",
                        _ => ty.name(),
                    }
                ));
            }
            _ => {}
        }
        let v = self.arg(dot, a)?;
        self.check_type(v, ty)
    }

    fn check_type(&self, v: Val, ty: Ty) -> Result<Val, ExecError> {
        let ok = match (&v, ty) {
            (_, Ty::Any) => true,
            (Val::Invalid, Ty::Map) => return Ok(Val::Nil),
            (Val::Invalid, _) => {
                return self.fail(format!("invalid value; expected {}", ty.name()));
            }
            (Val::Str(_), Ty::Str) | (Val::Int(_), Ty::Int) | (Val::Bool(_), Ty::Bool) => true,
            (Val::Map(_) | Val::Nil, Ty::Map) => true,
            _ => false,
        };
        if !ok {
            return self.fail(format!(
                "wrong type for value; expected {}; got {}",
                ty.name(),
                v.go_type()
            ));
        }
        Ok(v)
    }

    fn function(
        &mut self,
        dot: &Val,
        name: &str,
        ident: &'t Arg,
        cmd: Option<&'t Command>,
        args: &'t [Arg],
        final_: Option<Val>,
    ) -> Result<Val, ExecError> {
        self.at = At::Arg(ident);
        let Some(sig) = signature(name) else {
            return self.unsupported(format!("the function {name}"));
        };
        let given = args.len() + usize::from(final_.is_some());
        let fixed = sig.params.len();
        if sig.variadic.is_some() {
            if given < fixed {
                return self.fail(format!(
                    "wrong number of args for {name}: want at least {fixed} got {}",
                    args.len()
                ));
            }
        } else if given != fixed {
            return self.fail(format!(
                "wrong number of args for {name}: want {fixed} got {given}"
            ));
        }
        if name == "and" || name == "or" {
            let mut v = Val::Invalid;
            for a in args {
                v = self.arg(dot, a)?;
                if v.truth() == (name == "or") {
                    return Ok(v);
                }
            }
            if let Some(f) = final_ {
                v = f;
            }
            return Ok(v);
        }
        let mut vals = Vec::with_capacity(given);
        for (i, a) in args.iter().enumerate() {
            let ty = sig
                .params
                .get(i)
                .copied()
                .or(sig.variadic)
                .unwrap_or(Ty::Any);
            vals.push(self.typed_arg(dot, a, ty)?);
        }
        if let Some(f) = final_ {
            let ty = sig
                .params
                .get(vals.len())
                .copied()
                .or(sig.variadic)
                .unwrap_or(Ty::Any);
            vals.push(self.check_type(f, ty)?);
        }
        self.at = cmd.map_or(At::Arg(ident), At::Command);
        match call(name, vals) {
            Ok(v) => Ok(v),
            Err(CallError::Failed(m)) => self.fail(format!("error calling {name}: {m}")),
            Err(CallError::Unsupported(m)) => self.unsupported(m),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

/// The Go type of a parameter, as far as argument checks go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    Any,
    Str,
    Int,
    Bool,
    Map,
}

impl Ty {
    fn name(self) -> &'static str {
        match self {
            Ty::Any => "interface {}",
            Ty::Str => "string",
            Ty::Int => "int",
            Ty::Bool => "bool",
            Ty::Map => "map[string]interface {}",
        }
    }
}

struct Sig {
    params: &'static [Ty],
    variadic: Option<Ty>,
}

/// The signatures of the functions syncguard evaluates; `None`: not evaluated.
fn signature(name: &str) -> Option<Sig> {
    use Ty::*;
    let s = |params: &'static [Ty], variadic: Option<Ty>| Some(Sig { params, variadic });
    match name {
        "and" | "or" => s(&[Any], Some(Any)),
        "not" | "len" | "empty" | "toJson" | "toRawJson" | "toPrettyJson" | "mustToJson"
        | "mustToRawJson" | "mustToPrettyJson" | "toString" | "toYaml" | "kindOf" | "typeOf"
        | "first" | "last" | "rest" | "initial" | "reverse" | "uniq" | "compact" | "sortAlpha"
        | "int" | "int64" | "float64" | "toStrings" | "deepCopy" => s(&[Any], None),
        "index" => s(&[Any], Some(Any)),
        "print" | "println" | "list" | "tuple" | "dict" | "cat" | "quote" | "squote"
        | "coalesce" | "concat" | "max" | "min" | "mul" | "add" => s(&[], Some(Any)),
        "printf" => s(&[Str], Some(Any)),
        "eq" => s(&[Any], Some(Any)),
        "ne" | "lt" | "le" | "gt" | "ge" | "sub" | "div" | "mod" | "has" | "without" | "append"
        | "prepend" | "deepEqual" => s(&[Any, Any], None),
        "default" => s(&[Any], Some(Any)),
        "ternary" => s(&[Any, Any, Bool], None),
        "lower" | "upper" | "title" | "untitle" | "trim" | "nospace" | "b64enc" | "b64dec"
        | "base" | "dir" | "ext" | "clean" | "isAbs" | "normalize" | "atoi" | "swapcase"
        | "initials" | "sha256sum" | "sha1sum" => s(&[Str], None),
        "trimAll" | "trimall" | "trimPrefix" | "trimSuffix" | "contains" | "hasPrefix"
        | "hasSuffix" | "splitList" | "split" => s(&[Str, Str], None),
        "replace" => s(&[Str, Str, Str], None),
        "trunc" | "repeat" | "indent" | "nindent" => s(&[Int, Str], None),
        "substr" => s(&[Int, Int, Str], None),
        "join" => s(&[Str, Any], None),
        "hasKey" | "get" => s(&[Map, Str], None),
        "keys" => s(&[], Some(Map)),
        "kindIs" | "typeIs" => s(&[Str, Any], None),
        "add1" => s(&[Any], None),
        "fail" => s(&[Str], None),
        "dig" => s(&[Any], Some(Any)),
        _ => None,
    }
}

fn failed<T>(msg: impl std::fmt::Display) -> CResult<T> {
    Err(CallError::Failed(msg.to_string()))
}

/// Sprig's `strval`: a string as is, anything else as `%v`.
fn strval(v: &Val) -> String {
    match v {
        Val::Str(s) => s.clone(),
        Val::Nil => "<nil>".into(),
        other => other.show(),
    }
}

/// Sprig's `empty`.
fn is_empty(v: &Val) -> bool {
    !v.truth()
}

/// spf13/cast's `ToInt64` (what Sprig's arithmetic converts with); `None` when it fails.
fn to_int64(v: &Val) -> i64 {
    match v {
        Val::Int(i) | Val::Int64(i) => *i,
        Val::Float(f) => *f as i64,
        Val::Bool(b) => i64::from(*b),
        Val::Str(s) => s.trim().parse::<i64>().unwrap_or(0),
        _ => 0,
    }
}

fn as_list(v: &Val) -> Option<Vec<Val>> {
    match v {
        Val::List(l) => Some(l.clone()),
        Val::Nil | Val::Invalid => Some(Vec::new()),
        _ => None,
    }
}

fn compare(a: &Val, b: &Val) -> CResult<std::cmp::Ordering> {
    use std::cmp::Ordering;
    match (a, b) {
        (Val::Int(x) | Val::Int64(x), Val::Int(y) | Val::Int64(y)) => Ok(x.cmp(y)),
        (Val::Float(x), Val::Float(y)) => Ok(x.partial_cmp(y).unwrap_or(Ordering::Equal)),
        (Val::Str(x), Val::Str(y)) => Ok(x.cmp(y)),
        (Val::Bool(_), Val::Bool(_)) => failed("invalid type for comparison"),
        (Val::Invalid | Val::Nil, _) | (_, Val::Invalid | Val::Nil) => {
            failed("invalid type for comparison")
        }
        (Val::List(_) | Val::Map(_), _) | (_, Val::List(_) | Val::Map(_)) => {
            failed("invalid type for comparison")
        }
        (x, y) => failed(format!(
            "incompatible types for comparison: {} and {}",
            x.go_type(),
            y.go_type()
        )),
    }
}

fn equal(a: &Val, b: &Val) -> CResult<bool> {
    match (a, b) {
        (Val::Bool(x), Val::Bool(y)) => Ok(x == y),
        (Val::Nil, Val::Nil) => Ok(true),
        (Val::Invalid, _) | (_, Val::Invalid) => failed("invalid type for comparison"),
        (Val::Nil, _) | (_, Val::Nil) => Ok(false),
        (Val::List(_) | Val::Map(_), _) => failed("non-comparable type"),
        (_, Val::List(_) | Val::Map(_)) => failed("non-comparable types"),
        _ => compare(a, b).map(|o| o == std::cmp::Ordering::Equal),
    }
}

fn call(name: &str, mut a: Vec<Val>) -> CResult<Val> {
    let str_at = |a: &[Val], i: usize| -> String {
        match a.get(i) {
            Some(Val::Str(s)) => s.clone(),
            _ => String::new(),
        }
    };
    let int_at = |a: &[Val], i: usize| -> i64 {
        match a.get(i) {
            Some(Val::Int(n)) => *n,
            _ => 0,
        }
    };
    let first = a.first().cloned().unwrap_or(Val::Invalid);
    Ok(match name {
        "not" => Val::Bool(!first.truth()),
        "len" => Val::Int(match &first {
            Val::Str(s) => s.len() as i64,
            Val::List(l) => l.len() as i64,
            Val::Map(m) => m.len() as i64,
            Val::Invalid | Val::Nil => return failed("len of nil pointer"),
            other => return failed(format!("len of type {}", other.go_type())),
        }),
        "index" => {
            let mut v = first;
            for k in &a[1..] {
                v = match (&v, k) {
                    (Val::List(l), Val::Int(i) | Val::Int64(i)) => {
                        match usize::try_from(*i).ok().and_then(|i| l.get(i)) {
                            Some(x) => x.clone(),
                            None => return failed(format!("index out of range: {i}")),
                        }
                    }
                    (Val::Map(m), Val::Str(s)) => m.get(s).cloned().unwrap_or(Val::Nil),
                    (Val::Map(_), other) => {
                        return failed(format!(
                            "value has type {}; should be string",
                            other.go_type()
                        ));
                    }
                    (Val::Nil | Val::Invalid, _) => return failed("index of untyped nil"),
                    (Val::Str(s), Val::Int(i) | Val::Int64(i)) => {
                        match usize::try_from(*i).ok().and_then(|i| s.as_bytes().get(i)) {
                            Some(b) => Val::Int(i64::from(*b)),
                            None => return failed(format!("index out of range: {i}")),
                        }
                    }
                    (other, _) => {
                        return failed(format!("can't index item of type {}", other.go_type()));
                    }
                };
            }
            v
        }
        "print" => {
            let mut out = String::new();
            for (i, v) in a.iter().enumerate() {
                if i > 0 && !matches!(v, Val::Str(_)) && !matches!(a[i - 1], Val::Str(_)) {
                    out.push(' ');
                }
                out.push_str(&print_arg(v));
            }
            Val::Str(out)
        }
        "println" => Val::Str(a.iter().map(print_arg).collect::<Vec<_>>().join(" ") + "\n"),
        "printf" => Val::Str(printf(&str_at(&a, 0), &a[1..])?),
        "eq" => {
            let mut out = false;
            for b in &a[1..] {
                if equal(&first, b)? {
                    out = true;
                    break;
                }
            }
            Val::Bool(out)
        }
        "ne" => Val::Bool(!equal(&first, &a[1])?),
        "lt" => Val::Bool(compare(&first, &a[1])?.is_lt()),
        "le" => Val::Bool(compare(&first, &a[1])?.is_le()),
        "gt" => Val::Bool(compare(&first, &a[1])?.is_gt()),
        "ge" => Val::Bool(compare(&first, &a[1])?.is_ge()),
        "default" => {
            let given = a.get(1).cloned().unwrap_or(Val::Invalid);
            if a.len() < 2 || is_empty(&given) {
                first
            } else {
                given
            }
        }
        "empty" => Val::Bool(is_empty(&first)),
        "coalesce" => a.into_iter().find(|v| !is_empty(v)).unwrap_or(Val::Nil),
        "ternary" => {
            if matches!(a.get(2), Some(Val::Bool(true))) {
                first
            } else {
                a.swap_remove(1)
            }
        }
        "lower" => Val::Str(str_at(&a, 0).to_lowercase()),
        "upper" => Val::Str(str_at(&a, 0).to_uppercase()),
        "title" => Val::Str(title(&str_at(&a, 0))),
        "trim" => Val::Str(str_at(&a, 0).trim().to_string()),
        "nospace" => Val::Str(
            str_at(&a, 0)
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect(),
        ),
        "trimAll" | "trimall" => {
            let cut = str_at(&a, 0);
            Val::Str(str_at(&a, 1).trim_matches(|c| cut.contains(c)).to_string())
        }
        "trimPrefix" => {
            let s = str_at(&a, 1);
            Val::Str(
                s.strip_prefix(str_at(&a, 0).as_str())
                    .unwrap_or(&s)
                    .to_string(),
            )
        }
        "trimSuffix" => {
            let s = str_at(&a, 1);
            Val::Str(
                s.strip_suffix(str_at(&a, 0).as_str())
                    .unwrap_or(&s)
                    .to_string(),
            )
        }
        "contains" => Val::Bool(str_at(&a, 1).contains(str_at(&a, 0).as_str())),
        "hasPrefix" => Val::Bool(str_at(&a, 1).starts_with(str_at(&a, 0).as_str())),
        "hasSuffix" => Val::Bool(str_at(&a, 1).ends_with(str_at(&a, 0).as_str())),
        "replace" => Val::Str(str_at(&a, 2).replace(str_at(&a, 0).as_str(), &str_at(&a, 1))),
        "trunc" => {
            let (n, s) = (int_at(&a, 0), str_at(&a, 1));
            let len = s.len() as i64;
            Val::Str(if n < 0 && -n < len {
                s.get((len + n) as usize..).unwrap_or(&s).to_string()
            } else if n >= 0 && len > n {
                s.get(..n as usize).unwrap_or(&s).to_string()
            } else {
                s
            })
        }
        "repeat" => Val::Str(str_at(&a, 1).repeat(usize::try_from(int_at(&a, 0)).unwrap_or(0))),
        "substr" => {
            let (start, end, s) = (int_at(&a, 0), int_at(&a, 1), str_at(&a, 2));
            let len = s.len() as i64;
            let start = start.clamp(0, len) as usize;
            let end = if end < 0 || end > len {
                len as usize
            } else {
                end as usize
            };
            Val::Str(s.get(start..end.max(start)).unwrap_or("").to_string())
        }
        "indent" | "nindent" => {
            let pad = " ".repeat(usize::try_from(int_at(&a, 0)).unwrap_or(0));
            let s = format!("{pad}{}", str_at(&a, 1).replace('\n', &format!("\n{pad}")));
            Val::Str(if name == "nindent" {
                format!("\n{s}")
            } else {
                s
            })
        }
        "quote" | "squote" => Val::Str(
            a.iter()
                .filter(|v| !matches!(v, Val::Nil | Val::Invalid))
                .map(|v| {
                    if name == "quote" {
                        go_quote(&strval(v))
                    } else {
                        format!("'{}'", strval(v))
                    }
                })
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "cat" => Val::Str(
            a.iter()
                .filter(|v| !matches!(v, Val::Nil | Val::Invalid))
                .map(strval)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        "toString" => Val::Str(strval(&first)),
        "splitList" => Val::List(
            str_at(&a, 1)
                .split(str_at(&a, 0).as_str())
                .map(|s| Val::Str(s.to_string()))
                .collect(),
        ),
        "split" => Val::Map(
            str_at(&a, 1)
                .split(str_at(&a, 0).as_str())
                .enumerate()
                .map(|(i, s)| (format!("_{i}"), Val::Str(s.to_string())))
                .collect(),
        ),
        "join" => {
            let sep = str_at(&a, 0);
            let items: Vec<String> = match a.get(1) {
                Some(Val::List(l)) => l
                    .iter()
                    .filter(|v| !matches!(v, Val::Nil))
                    .map(strval)
                    .collect(),
                Some(v) => vec![strval(v)],
                None => Vec::new(),
            };
            Val::Str(items.join(&sep))
        }
        "list" | "tuple" => Val::List(a),
        "dict" => {
            let mut m = BTreeMap::new();
            let mut it = a.into_iter();
            while let Some(k) = it.next() {
                m.insert(strval(&k), it.next().unwrap_or(Val::Str(String::new())));
            }
            Val::Map(m)
        }
        "hasKey" => Val::Bool(match &first {
            Val::Map(m) => m.contains_key(&str_at(&a, 1)),
            _ => false,
        }),
        "get" => match &first {
            Val::Map(m) => m
                .get(&str_at(&a, 1))
                .cloned()
                .unwrap_or(Val::Str(String::new())),
            _ => Val::Str(String::new()),
        },
        "keys" => {
            let mut out = Vec::new();
            for d in &a {
                if let Val::Map(m) = d {
                    out.extend(m.keys().map(|k| Val::Str(k.clone())));
                }
            }
            if out.len() > 1 {
                return Err(CallError::Unsupported(
                    "keys (its order is a Go map's, random: sort it with sortAlpha)".into(),
                ));
            }
            Val::List(out)
        }
        "sortAlpha" => {
            let Some(l) = as_list(&first) else {
                return Ok(Val::List(vec![Val::Str(strval(&first))]));
            };
            let mut s: Vec<String> = l.iter().map(strval).collect();
            s.sort();
            Val::List(s.into_iter().map(Val::Str).collect())
        }
        "first" | "last" | "rest" | "initial" | "reverse" | "uniq" | "compact" => {
            let Some(l) = as_list(&first) else {
                return failed(format!("Cannot find {name} on type {}", first.go_type()));
            };
            match name {
                "first" => l.first().cloned().unwrap_or(Val::Nil),
                "last" => l.last().cloned().unwrap_or(Val::Nil),
                "rest" => Val::List(l.get(1..).map(<[Val]>::to_vec).unwrap_or_default()),
                "initial" => Val::List(
                    l.get(..l.len().saturating_sub(1))
                        .map(<[Val]>::to_vec)
                        .unwrap_or_default(),
                ),
                "reverse" => Val::List(l.into_iter().rev().collect()),
                "uniq" => {
                    let mut out: Vec<Val> = Vec::new();
                    for v in l {
                        if !out.contains(&v) {
                            out.push(v);
                        }
                    }
                    Val::List(out)
                }
                _ => Val::List(l.into_iter().filter(|v| !is_empty(v)).collect()),
            }
        }
        "has" => Val::Bool(as_list(&a[1]).is_some_and(|l| l.contains(&first))),
        "without" => match as_list(&first) {
            Some(l) => Val::List(l.into_iter().filter(|v| *v != a[1]).collect()),
            None => return failed(format!("Cannot find without on type {}", first.go_type())),
        },
        "append" | "prepend" => match as_list(&first) {
            Some(mut l) => {
                if name == "append" {
                    l.push(a[1].clone());
                } else {
                    l.insert(0, a[1].clone());
                }
                Val::List(l)
            }
            None => return failed(format!("Cannot push on type {}", first.go_type())),
        },
        "concat" => {
            let mut out = Vec::new();
            for l in &a {
                match as_list(l) {
                    Some(items) => out.extend(items),
                    None => return failed(format!("Cannot concat type {} as list", l.go_type())),
                }
            }
            Val::List(out)
        }
        "deepEqual" => Val::Bool(first == a[1]),
        "deepCopy" => first,
        "toJson" | "mustToJson" | "toRawJson" | "mustToRawJson" => {
            let mut out = String::new();
            json(&first, &mut out, !name.contains("Raw"), None, 0);
            Val::Str(out)
        }
        "toPrettyJson" | "mustToPrettyJson" => {
            let mut out = String::new();
            json(&first, &mut out, true, Some("  "), 0);
            Val::Str(out)
        }
        "toYaml" => {
            let mut out = String::new();
            yaml(&first.to_json(), &mut out, 0);
            Val::Str(out.trim_end_matches('\n').to_string())
        }
        "kindOf" | "typeOf" => Val::Str(kind_of(&first, name == "typeOf")),
        "kindIs" | "typeIs" => Val::Bool(str_at(&a, 0) == kind_of(&a[1], name == "typeIs")),
        "int" => Val::Int(to_int64(&first)),
        "int64" => Val::Int64(to_int64(&first)),
        "float64" => Val::Float(match &first {
            Val::Float(f) => *f,
            Val::Int(i) | Val::Int64(i) => *i as f64,
            Val::Str(s) => s.trim().parse().unwrap_or(0.0),
            Val::Bool(b) => f64::from(u8::from(*b)),
            _ => 0.0,
        }),
        "atoi" => Val::Int(str_at(&a, 0).parse().unwrap_or(0)),
        "add1" => Val::Int64(to_int64(&first) + 1),
        "add" => Val::Int64(a.iter().map(to_int64).sum()),
        "mul" => Val::Int64(a.iter().map(to_int64).product()),
        "sub" => Val::Int64(to_int64(&first) - to_int64(&a[1])),
        "div" | "mod" => {
            let d = to_int64(&a[1]);
            if d == 0 {
                return Err(CallError::Unsupported(format!(
                    "{name} by zero (a Go panic)"
                )));
            }
            Val::Int64(if name == "div" {
                to_int64(&first) / d
            } else {
                to_int64(&first) % d
            })
        }
        "max" | "min" => {
            let mut it = a.iter().map(to_int64);
            let start = it.next().unwrap_or(0);
            Val::Int64(if name == "max" {
                it.fold(start, i64::max)
            } else {
                it.fold(start, i64::min)
            })
        }
        "toStrings" => Val::List(
            as_list(&first)
                .unwrap_or_else(|| vec![first.clone()])
                .iter()
                .map(|v| Val::Str(strval(v)))
                .collect(),
        ),
        "b64enc" => Val::Str(base64_encode(str_at(&a, 0).as_bytes())),
        "base" | "dir" | "ext" | "clean" | "isAbs" => {
            let p = str_at(&a, 0);
            match name {
                "base" => Val::Str(path_base(&p)),
                "dir" => Val::Str(path_dir(&p)),
                "ext" => {
                    let b = path_base(&p);
                    Val::Str(b.rfind('.').map(|i| b[i..].to_string()).unwrap_or_default())
                }
                "isAbs" => Val::Bool(p.starts_with('/')),
                _ => Val::Str(path_clean(&p)),
            }
        }
        "normalize" => Val::Str(sanitize_name(&str_at(&a, 0))),
        "fail" => return failed(str_at(&a, 0)),
        "dig" => {
            // dig "a" "b" "default" dict
            if a.len() < 3 {
                return failed("dig needs at least three arguments");
            }
            let dict = a.pop().unwrap_or(Val::Nil);
            let default = a.pop().unwrap_or(Val::Nil);
            let mut v = dict;
            for k in &a {
                v = match v {
                    Val::Map(m) => match m.get(&strval(k)) {
                        Some(x) => x.clone(),
                        None => return Ok(default),
                    },
                    _ => return Ok(default),
                };
            }
            v
        }
        other => return Err(CallError::Unsupported(format!("the function {other}"))),
    })
}

/// fmt.Sprint of one operand.
fn print_arg(v: &Val) -> String {
    match v {
        Val::Nil | Val::Invalid => "<nil>".into(),
        other => other.show(),
    }
}

/// fmt.Sprintf for the verbs templates use (`%s`, `%v`, `%d`, `%q`, `%t`, `%f`, `%%`, with a
/// width, `-` and `0`, and a precision for `%f` and `%s`).
fn printf(format: &str, args: &[Val]) -> CResult<String> {
    let unsupported = || {
        Err(CallError::Unsupported(format!(
            "printf with the format {}",
            go_quote(format)
        )))
    };
    let mut out = String::new();
    let mut it = args.iter();
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let (mut left, mut zero) = (false, false);
        while let Some(&f) = chars.peek() {
            match f {
                '-' => left = true,
                '0' => zero = true,
                '+' | '#' | ' ' => return unsupported(),
                _ => break,
            }
            chars.next();
        }
        let mut width = String::new();
        while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
            width.push(d);
            chars.next();
        }
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut p = String::new();
            while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                p.push(d);
                chars.next();
            }
            precision = Some(p.parse().unwrap_or(0));
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = it.next() else {
            let _ = write!(out, "%!{verb}(MISSING)");
            continue;
        };
        let text = match (verb, arg, precision) {
            ('v', v, None) | ('s', v @ (Val::Str(_) | Val::List(_) | Val::Map(_)), None) => {
                print_arg(v)
            }
            ('s', Val::Nil | Val::Invalid, None) => "%!s(<nil>)".into(),
            ('s', Val::Str(s), Some(p)) => s.chars().take(p).collect(),
            ('d', Val::Int(i) | Val::Int64(i), None) => i.to_string(),
            ('q', Val::Str(s), None) => go_quote(s),
            ('t', Val::Bool(b), None) => b.to_string(),
            ('f', Val::Float(f), p) => format!("{f:.*}", p.unwrap_or(6)),
            (v, a, None) if "sdqtfxXoebcU".contains(v) => {
                format!("%!{v}({}={})", a.go_type(), print_arg(a))
            }
            _ => return unsupported(),
        };
        let width: usize = width.parse().unwrap_or(0);
        let len = text.chars().count();
        if len >= width {
            out.push_str(&text);
        } else if left {
            out.push_str(&text);
            out.push_str(&" ".repeat(width - len));
        } else {
            let pad = if zero && verb != 's' && verb != 'v' {
                '0'
            } else {
                ' '
            };
            out.extend(std::iter::repeat_n(pad, width - len));
            out.push_str(&text);
        }
    }
    let extra: Vec<&Val> = it.collect();
    if !extra.is_empty() {
        out.push_str("%!(EXTRA ");
        out.push_str(
            &extra
                .iter()
                .map(|v| format!("{}={}", v.go_type(), print_arg(v)))
                .collect::<Vec<_>>()
                .join(", "),
        );
        out.push(')');
    }
    Ok(out)
}

/// strings.Title: the first letter of each word upper case.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut start = true;
    for c in s.chars() {
        if start && c.is_alphabetic() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        start = !(c.is_alphanumeric() || c == '_');
    }
    out
}

fn kind_of(v: &Val, type_of: bool) -> String {
    match v {
        Val::Invalid | Val::Nil => if type_of { "<nil>" } else { "invalid" }.into(),
        Val::Bool(_) => "bool".into(),
        Val::Int(_) => "int".into(),
        Val::Int64(_) => "int64".into(),
        Val::Float(_) => "float64".into(),
        Val::Str(_) => "string".into(),
        Val::List(_) => if type_of { "[]interface {}" } else { "slice" }.into(),
        Val::Map(_) => if type_of {
            "map[string]interface {}"
        } else {
            "map"
        }
        .into(),
    }
}

/// Argo CD's `SanitizeName` (`normalize`): lower case, anything but `a-z0-9.-` becomes `-`, at
/// most 253 bytes, `-` and `.` trimmed from both ends.
pub fn sanitize_name(name: &str) -> String {
    let mut out: String = name
        .to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(253);
    out.trim_matches(|c| c == '-' || c == '.').to_string()
}

fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

fn base64_encode(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Go's `encoding/json` of a value: keys sorted, `<`, `>`, `&` escaped unless `raw`.
fn json(v: &Val, out: &mut String, escape_html: bool, indent: Option<&str>, depth: usize) {
    let newline = |out: &mut String, depth: usize| {
        if let Some(i) = indent {
            out.push('\n');
            out.push_str(&i.repeat(depth));
        }
    };
    match v {
        Val::Invalid | Val::Nil => out.push_str("null"),
        Val::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        Val::Int(i) | Val::Int64(i) => {
            let _ = write!(out, "{i}");
        }
        Val::Float(f) => out.push_str(&json_float(*f)),
        Val::Str(s) => json_string(s, out, escape_html),
        Val::List(l) => {
            if l.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                json(x, out, escape_html, indent, depth + 1);
            }
            newline(out, depth);
            out.push(']');
        }
        Val::Map(m) => {
            if m.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, depth + 1);
                json_string(k, out, escape_html);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                json(x, out, escape_html, indent, depth + 1);
            }
            newline(out, depth);
            out.push('}');
        }
    }
}

fn json_string(s: &str, out: &mut String, escape_html: bool) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' if escape_html => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// YAML of a JSON value in block style, keys sorted (what `toYaml` gives, up to quoting).
fn yaml(v: &Value, out: &mut String, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            for k in keys {
                let x = &m[k];
                out.push_str(&pad);
                out.push_str(&yaml_scalar_string(k));
                out.push(':');
                match x {
                    Value::Object(c) if !c.is_empty() => {
                        out.push('\n');
                        yaml(x, out, indent + 2);
                    }
                    Value::Array(c) if !c.is_empty() => {
                        out.push('\n');
                        yaml(x, out, indent);
                    }
                    _ => {
                        out.push(' ');
                        out.push_str(&yaml_scalar(x));
                        out.push('\n');
                    }
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for x in a {
                out.push_str(&pad);
                out.push('-');
                match x {
                    Value::Object(c) if !c.is_empty() => {
                        let mut inner = String::new();
                        yaml(x, &mut inner, indent + 2);
                        out.push(' ');
                        out.push_str(inner.trim_start());
                    }
                    Value::Array(c) if !c.is_empty() => {
                        out.push('\n');
                        yaml(x, out, indent + 2);
                    }
                    _ => {
                        out.push(' ');
                        out.push_str(&yaml_scalar(x));
                        out.push('\n');
                    }
                }
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&yaml_scalar(other));
            out.push('\n');
        }
    }
}

fn yaml_scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map(json_float).unwrap_or_else(|| n.to_string()),
        Value::String(s) => yaml_scalar_string(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

fn yaml_scalar_string(s: &str) -> String {
    let plain = !s.is_empty()
        && !s.starts_with(|c: char| c.is_whitespace() || "-?:,[]{}#&*!|>'\"%@`".contains(c))
        && !s.ends_with(char::is_whitespace)
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.contains(['\n', '\t', '\r'])
        && !s.ends_with(':')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
        )
        && s.parse::<f64>().is_err()
        && !s.starts_with("0x");
    if plain {
        s.to_string()
    } else {
        let mut out = String::new();
        json_string(s, &mut out, false);
        out
    }
}

// ---------------------------------------------------------------------------------------------
// References
// ---------------------------------------------------------------------------------------------

/// One parameter a template reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// The parameter's path: `path.basename`, `metadata.labels.env`.
    pub path: String,
    /// What a missing parameter does there.
    pub guard: Guard,
}

/// What a missing parameter does where a template reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Guard {
    /// Read plainly (`{{ .x }}`, `{{ lower .x }}`): `<no value>` or an error, and an error with
    /// `missingkey=error`.
    None,
    /// Read by a function made for a missing value (`default`, `coalesce`, `empty`, `hasKey`,
    /// `and`/`or`...): tolerated, except with `missingkey=error`, which fails on the read itself.
    Default,
    /// Read as a condition (`{{ if .x }}`): false when missing, except with `missingkey=error`.
    Condition,
    /// Read only under a condition that checks it (`{{ if .x }}{{ .x }}`,
    /// `{{ if hasKey . "x" }}`): never read when missing.
    Checked,
}

impl Guard {
    /// `none`, `default`, `condition` or `checked`.
    pub fn name(self) -> &'static str {
        match self {
            Guard::None => "none",
            Guard::Default => "default",
            Guard::Condition => "condition",
            Guard::Checked => "checked",
        }
    }
}

impl Template {
    /// The parameters the template reads from its data (`.a.b` where `.` is the data, `$.a.b`
    /// anywhere, `index .a "b"`), in order, each once with the least tolerant guard it is read
    /// under.
    pub fn references(&self) -> Vec<Reference> {
        let mut out: Vec<Reference> = Vec::new();
        refs_in(&self.root, true, &[], &mut out);
        let mut seen: Vec<Reference> = Vec::new();
        for r in out {
            if let Some(s) = seen.iter_mut().find(|s| s.path == r.path) {
                s.guard = s.guard.min(r.guard);
            } else {
                seen.push(r);
            }
        }
        seen
    }
}

fn refs_in(nodes: &[Node], root: bool, checks: &[String], out: &mut Vec<Reference>) {
    for node in nodes {
        match node {
            Node::Action(p) => refs_in_pipe(p, root, false, checks, out),
            Node::If(c) | Node::With(c) | Node::Range(c) => {
                refs_in_pipe(&c.pipe, root, true, checks, out);
                let mut inner: Vec<String> = checks.to_vec();
                if !matches!(node, Node::Range(_)) {
                    inner.extend(checked_names(&c.pipe, root));
                }
                let body_root = root && matches!(node, Node::If(_));
                refs_in(&c.list, body_root, &inner, out);
                if let Some(e) = &c.else_list {
                    refs_in(e, root, checks, out);
                }
            }
            Node::Template { pipe: Some(p), .. } => refs_in_pipe(p, root, false, checks, out),
            _ => {}
        }
    }
}

fn is_guard(a: Option<&Arg>) -> bool {
    matches!(a, Some(Arg::Identifier { name, .. }) if GUARDS.contains(&name.as_str()))
}

fn refs_in_pipe(
    p: &Pipe,
    root: bool,
    condition: bool,
    checks: &[String],
    out: &mut Vec<Reference>,
) {
    for (i, c) in p.cmds.iter().enumerate() {
        let later_guard = p.cmds[i + 1..].iter().any(|c| is_guard(c.args.first()));
        match c.args.first() {
            Some(Arg::Identifier { name, .. }) if name == "index" => {
                if let Some(target) = c.args.get(1)
                    && let Some(mut path) = root_path(target, root)
                {
                    for k in &c.args[2..] {
                        match k {
                            Arg::String { text, .. } => path.push(text.clone()),
                            Arg::Number { number, .. } if number.int.is_some() => {
                                path.push(number.int.unwrap_or(0).to_string());
                            }
                            _ => break,
                        }
                    }
                    push_ref(path, Guard::None, checks, out);
                } else if let Some(target) = c.args.get(1) {
                    refs_in_arg(target, root, Guard::None, checks, out);
                }
                for k in c.args.iter().skip(2) {
                    refs_in_arg(k, root, Guard::None, checks, out);
                }
            }
            Some(Arg::Identifier { name, .. }) => {
                let guard = if GUARDS.contains(&name.as_str()) {
                    Guard::Default
                } else {
                    Guard::None
                };
                for a in &c.args[1..] {
                    refs_in_arg(a, root, guard, checks, out);
                }
            }
            Some(first) => {
                let guard = if condition && p.cmds.len() == 1 {
                    Guard::Condition
                } else if later_guard {
                    Guard::Default
                } else {
                    Guard::None
                };
                refs_in_arg(first, root, guard, checks, out);
            }
            None => {}
        }
    }
}

fn refs_in_arg(a: &Arg, root: bool, guard: Guard, checks: &[String], out: &mut Vec<Reference>) {
    match a {
        Arg::Pipe(p) => refs_in_pipe(p, root, false, checks, out),
        Arg::Chain { node, .. } => refs_in_arg(node, root, guard, checks, out),
        a => {
            if let Some(path) = root_path(a, root) {
                push_ref(path, guard, checks, out);
            }
        }
    }
}

/// The parameters a condition checks: the body of `if .x`, `if and .x .y`, `if hasKey . "x"`
/// runs only when they are there.
fn checked_names(p: &Pipe, root: bool) -> Vec<String> {
    let [cmd] = p.cmds.as_slice() else {
        return Vec::new();
    };
    match cmd.args.as_slice() {
        [single] => root_path(single, root)
            .map(|p| p.join("."))
            .into_iter()
            .collect(),
        [Arg::Identifier { name, .. }, args @ ..] if name == "and" => args
            .iter()
            .filter_map(|a| root_path(a, root).map(|p| p.join(".")))
            .collect(),
        [Arg::Identifier { name, .. }, map, Arg::String { text, .. }] if name == "hasKey" => {
            match map {
                Arg::Dot(_) if root => vec![text.clone()],
                other => root_path(other, root)
                    .map(|p| format!("{}.{text}", p.join(".")))
                    .into_iter()
                    .collect(),
            }
        }
        _ => Vec::new(),
    }
}

/// The path in the data an argument names: `.a.b` where `.` is the data, `$.a.b`.
fn root_path(a: &Arg, root: bool) -> Option<Vec<String>> {
    match a {
        Arg::Field { idents, .. } if root => Some(idents.clone()),
        Arg::Variable { idents, .. }
            if idents.first().is_some_and(|v| v == "$") && idents.len() > 1 =>
        {
            Some(idents[1..].to_vec())
        }
        _ => None,
    }
}

fn push_ref(path: Vec<String>, guard: Guard, checks: &[String], out: &mut Vec<Reference>) {
    let path = path.join(".");
    let checked = checks
        .iter()
        .any(|c| *c == path || path.starts_with(&format!("{c}.")));
    out.push(Reference {
        path,
        guard: if checked { Guard::Checked } else { guard },
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(t: &str, data: Value) -> Result<String, String> {
        run_with(t, data, MissingKey::Default)
    }

    fn run_with(t: &str, data: Value, m: MissingKey) -> Result<String, String> {
        parse(t).and_then(|t| t.execute(&data, m).map_err(|e| e.to_string()))
    }

    #[test]
    fn parse_errors_are_go_s() {
        let err = |t: &str| parse(t).unwrap_err();
        assert_eq!(
            err("{{path.basename}}"),
            r#"template: base:1: function "path" not defined"#
        );
        assert_eq!(
            err("{{ if .a }}x{{ end"),
            "template: base:1: unclosed action"
        );
        assert_eq!(err("{{ if .a }}x"), "template: base:1: unexpected EOF");
        assert_eq!(err("{{ end }}"), "template: base:1: unexpected {{end}}");
        assert_eq!(
            err("{{ .a-b }}"),
            "template: base:1: bad character U+002D '-'"
        );
        assert_eq!(
            err("{{ $x }}"),
            r#"template: base:1: undefined variable "$x""#
        );
        assert_eq!(
            err("{{ \"a }}"),
            "template: base:1: unterminated quoted string"
        );
        assert_eq!(
            err("{{ . | \"x\" }}"),
            "template: base:1: non executable command in pipeline stage 2"
        );
        assert_eq!(err("{{ }}"), "template: base:1: missing value for command");
        assert_eq!(
            err("line1\n{{ .a\n}} {{ ( }}"),
            "template: base:3: unclosed left paren"
        );
        assert_eq!(
            err("{{ break }}"),
            "template: base:1: {{break}} outside {{range}}"
        );
        assert_eq!(
            err("{{/* x */ }}"),
            "template: base:1: comment ends before closing delimiter"
        );
        assert!(parse("{{- /* a comment */ -}} {{ .a }}").is_ok());
        assert!(parse("{{ range $i, $v := .l }}{{ $i }}{{ end }}").is_ok());
        assert!(parse(r#"{{ define "x" }}a{{ end }}{{ template "x" . }}"#).is_ok());
    }

    #[test]
    fn values_print_as_go_prints_them() {
        let data = json!({"a": {"b": "x"}, "n": 1234567, "l": [1, 2], "m": {"z": 1, "a": [true, null]},
                          "small": 123456, "f": 1.5, "null": null});
        assert_eq!(
            run("{{ .a.b }} {{ .n }} {{ index .l 1 }} {{ .m }} {{ .small }} {{ .f }} [{{ .null }}] [{{ .nope }}]", data).unwrap(),
            "x 1.234567e+06 2 map[a:[true <nil>] z:1] 123456 1.5 [<no value>] [<no value>]"
        );
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(100000000.0), "1e+08");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-2.5), "-2.5");
    }

    #[test]
    fn missing_keys_follow_the_missingkey_option() {
        let m = |t: &str, k| run_with(t, json!({"x": null, "a": "s"}), k);
        assert_eq!(m("{{ .nope }}", MissingKey::Default).unwrap(), "<no value>");
        assert_eq!(m("{{ .nope }}", MissingKey::Zero).unwrap(), "<no value>");
        assert_eq!(
            m("{{ .nope }}", MissingKey::Error).unwrap_err(),
            r#"template: base:1:3: executing "base" at <.nope>: map has no entry for key "nope""#
        );
        assert_eq!(
            m("{{ .nope.b }}", MissingKey::Default).unwrap(),
            "<no value>"
        );
        assert!(
            m("{{ .x.y }}", MissingKey::Default)
                .unwrap_err()
                .contains("nil pointer evaluating interface {}.y")
        );
        assert!(
            m("{{ .a.b }}", MissingKey::Default)
                .unwrap_err()
                .contains("can't evaluate field b in type interface {}")
        );
        assert!(
            m("{{ .nope | lower }}", MissingKey::Default)
                .unwrap_err()
                .contains("invalid value; expected string")
        );
        assert_eq!(
            m(r#"{{ .nope | default "d" }}"#, MissingKey::Default).unwrap(),
            "d"
        );
    }

    #[test]
    fn control_structures_variables_and_functions() {
        let data = json!({"apps": ["web", "api"], "env": {"name": "prod", "replicas": 3},
                          "labels": {"b": "2", "a": "1"}, "flag": true, "n": 3});
        let t = r#"{{- range $i, $app := .apps }}{{ if $i }},{{ end }}{{ $app | upper }}-{{ $.env.name }}{{ end -}}
{{ with .env }}{{ .name | title }}{{ else }}none{{ end }}
{{ range $k, $v := .labels }}{{ $k }}={{ $v }};{{ end }}
{{ if and .flag (eq .env.name "prod") }}yes{{ else if .flag }}maybe{{ else }}no{{ end }}
{{ printf "%s-%d" .env.name (len .apps) }} {{ quote .n }} {{ .env | toJson }}
{{ dict "a" 1 "b" (list 1 "x") | toYaml }}
{{ ternary "on" "off" .flag }} {{ trunc 3 "abcdef" }} {{ "My_App" | normalize }} {{ add 1 .n }}"#;
        assert_eq!(
            run(t, data).unwrap(),
            "WEB-prod,API-prodProd\na=1;b=2;\nyes\nprod-2 \"3\" {\"name\":\"prod\",\"replicas\":3}\na: 1\nb:\n- 1\n- x\non abc my-app 4"
        );
        let err = run(r#"{{ eq .n 3 }}"#, json!({"n": 3})).unwrap_err();
        assert!(
            err.contains("incompatible types for comparison: float64 and int"),
            "{err}"
        );
        assert!(
            run("{{ randAlphaNum 5 }}", json!({}))
                .unwrap_err()
                .contains("syncguard does not evaluate")
        );
        assert!(
            run("{{ lower .n }}", json!({"n": 3}))
                .unwrap_err()
                .contains("wrong type for value; expected string; got float64")
        );
    }

    #[test]
    fn references_are_the_parameters_read_and_what_a_missing_one_does() {
        let t = parse(
            r#"{{ .path.basename }}-{{ .values.env | default "dev" }}{{ if .extra }}{{ .extra.x }}{{ end }}
{{ range .list }}{{ .inner }}{{ $.top }}{{ end }}{{ index .metadata.labels "env" }}{{ with .w }}{{ .z }}{{ end }}
{{ if hasKey . "opt" }}{{ .opt }}{{ end }}{{ lower .low }}{{ if eq .cmp "a" }}{{ .cmp }}{{ end }}{{ .path.segments }}"#,
        )
        .unwrap();
        let refs: Vec<(String, Guard)> = t
            .references()
            .into_iter()
            .map(|r| (r.path, r.guard))
            .collect();
        assert_eq!(
            refs,
            [
                ("path.basename".to_string(), Guard::None),
                ("values.env".into(), Guard::Default),
                ("extra".into(), Guard::Condition),
                ("extra.x".into(), Guard::Checked),
                ("list".into(), Guard::Condition),
                ("top".into(), Guard::None),
                ("metadata.labels.env".into(), Guard::None),
                ("w".into(), Guard::Condition),
                ("opt".into(), Guard::Checked),
                ("low".into(), Guard::None),
                ("cmp".into(), Guard::None),
                ("path.segments".into(), Guard::None),
            ]
        );
    }
}
