//! Argo CD's glob as `util/glob` runs it without separators (ignoreDifferences groups and
//! kinds): `*` matches any run of characters (`/` included), `?` one character, `[abc]`/`[a-z]`/
//! `[!abc]` one of a class, `{a,b}` one of the alternatives, `\` escapes the next character. A
//! pattern gobwas cannot compile matches nothing, as in Argo CD. An empty pattern matches only
//! the empty string. The matcher is the one the AppProject matching uses
//! ([`super::project::glob`]), called with no separators.

/// True when `subject` matches `pattern`.
pub fn matches(pattern: &str, subject: &str) -> bool {
    super::project::glob::glob_match(pattern, subject, &[])
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
        // Patterns gobwas cannot compile (an unclosed class) match nothing. (An unclosed `{` is
        // left to the transliterated lexer, held to gobwas itself in project::glob's tests.)
        assert!(!matches("[apps", "[apps"));
        assert!(matches("*/*", "x/y"));
    }
}
