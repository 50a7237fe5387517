//! Argo CD's glob (`util/glob`, gobwas/glob compiled without separators): `*` matches any run of
//! characters (`/` included), `?` one character, `[abc]`/`[a-z]`/`[!abc]` one of a class,
//! `{a,b}` one of the alternatives, `\` escapes the next character. A pattern gobwas cannot
//! compile matches nothing, as in Argo CD. An empty pattern matches only the empty string.

/// True when `subject` matches `pattern`.
pub fn matches(pattern: &str, subject: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let s: Vec<char> = subject.chars().collect();
    if !well_formed(&p) {
        return false;
    }
    at(&p, &s)
}

/// Brackets and braces are balanced and a pattern does not end in a lone `\`.
fn well_formed(p: &[char]) -> bool {
    let (mut braces, mut i) = (0i32, 0);
    while let Some(&c) = p.get(i) {
        match c {
            '\\' if p.get(i + 1).is_none() => return false,
            '\\' => i += 1,
            '[' => match class_end(p, i) {
                Some(end) => i = end,
                None => return false,
            },
            '{' => braces += 1,
            '}' => {
                braces -= 1;
                if braces < 0 {
                    return false;
                }
            }
            _ => {}
        }
        i += 1;
    }
    braces == 0
}

/// The index of the `]` closing the class that opens at `open`.
fn class_end(p: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if p.get(i) == Some(&'!') {
        i += 1;
    }
    // A class holds at least one character, so a `]` right after the opening is literal.
    i += 1;
    while let Some(&c) = p.get(i) {
        if c == ']' {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn at(p: &[char], s: &[char]) -> bool {
    let Some((&c, rest)) = p.split_first() else {
        return s.is_empty();
    };
    match c {
        '*' => (0..=s.len()).any(|k| s.get(k..).is_some_and(|tail| at(rest, tail))),
        '?' => s.split_first().is_some_and(|(_, tail)| at(rest, tail)),
        '\\' => match (rest.split_first(), s.split_first()) {
            (Some((&lit, rest)), Some((&h, tail))) => lit == h && at(rest, tail),
            _ => false,
        },
        '[' => {
            let Some(end) = class_end(p, 0) else {
                return false;
            };
            let Some((&h, tail)) = s.split_first() else {
                return false;
            };
            let class = p.get(1..end).unwrap_or_default();
            let (negated, class) = match class.split_first() {
                Some(('!', c)) => (true, c),
                _ => (false, class),
            };
            in_class(class, h) != negated && at(p.get(end + 1..).unwrap_or_default(), tail)
        }
        '{' => {
            let (alternatives, after) = alternatives(p);
            alternatives.iter().any(|alt| {
                let mut joined = alt.clone();
                joined.extend_from_slice(after);
                at(&joined, s)
            })
        }
        _ => s
            .split_first()
            .is_some_and(|(&h, tail)| h == c && at(rest, tail)),
    }
}

fn in_class(class: &[char], c: char) -> bool {
    let mut i = 0;
    while let Some(&lo) = class.get(i) {
        if class.get(i + 1) == Some(&'-')
            && let Some(&hi) = class.get(i + 2)
        {
            if lo <= c && c <= hi {
                return true;
            }
            i += 3;
            continue;
        }
        if lo == c {
            return true;
        }
        i += 1;
    }
    false
}

/// The alternatives of the `{...}` group opening `p`, and what follows the group.
fn alternatives(p: &[char]) -> (Vec<Vec<char>>, &[char]) {
    let mut out = vec![Vec::new()];
    let (mut depth, mut i) = (0, 1);
    while let Some(&c) = p.get(i) {
        match c {
            '\\' => {
                if let Some(last) = out.last_mut() {
                    last.push('\\');
                    if let Some(&n) = p.get(i + 1) {
                        last.push(n);
                    }
                }
                i += 2;
                continue;
            }
            '{' => depth += 1,
            '}' if depth == 0 => return (out, p.get(i + 1..).unwrap_or_default()),
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(Vec::new());
                i += 1;
                continue;
            }
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(c);
        }
        i += 1;
    }
    (out, &[])
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn globs_match_as_argo_cd_matches_groups_and_kinds() {
        assert!(matches("*", ""));
        assert!(matches("*", "apps"));
        assert!(matches("", ""));
        assert!(!matches("", "apps"));
        assert!(matches("apps", "apps"));
        assert!(!matches("Apps", "apps"));
        assert!(matches("*.k8s.io", "networking.k8s.io"));
        assert!(matches("{apps,batch}", "batch"));
        assert!(!matches("{apps,batch}", "core"));
        assert!(matches("Deploy?ent", "Deployment"));
        assert!(matches("[DS]*", "StatefulSet"));
        assert!(!matches("[!DS]*", "StatefulSet"));
        assert!(matches("a\\*", "a*"));
        assert!(!matches("a\\*", "ab"));
        // Patterns gobwas cannot compile match nothing.
        assert!(!matches("{apps", "apps"));
        assert!(!matches("[apps", "[apps"));
        assert!(matches("*/*", "x/y"));
    }
}
