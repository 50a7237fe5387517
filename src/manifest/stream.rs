//! The raw-text view of a YAML stream: where documents begin and which Helm template each came
//! from.
//!
//! The YAML parser drops comments, and a syntax error aborts the rest of a stream. Both problems
//! are solved by one cheap pass over the lines before parsing: the text is cut at every `---`
//! line into [`Region`]s that are parsed independently (so one broken document cannot hide the
//! others), and Helm's `# Source:` comments are remembered with their line numbers.
//!
//! Cutting at `---` never changes what the stream means: a `---` at column 0 followed by a blank
//! or the end of the line is a document marker in YAML even inside block or quoted scalars.

/// One piece of a stream: from a `---` line (or the start of the text) up to the next `---`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Region<'t> {
    /// The text of the region, starting at the beginning of a line.
    pub text: &'t str,
    /// How many lines of the file precede the region; added to the parser's region-relative
    /// line numbers to get file line numbers.
    pub line_offset: u32,
    /// Helm `# Source:` comments in the region: (1-based file line, template path).
    pub sources: Vec<(u32, &'t str)>,
}

impl<'t> Region<'t> {
    /// The Helm template of a document whose root node starts on `before_line`: the last
    /// `# Source:` comment on a line in `from_line..before_line`.
    ///
    /// `from_line` is where the document's part of the region begins, so a comment that belongs
    /// to an earlier document of the same region (after `...`) is not taken.
    pub fn helm_template(&self, from_line: u32, before_line: u32) -> Option<&'t str> {
        self.sources
            .iter()
            .rev()
            .find(|(line, _)| (from_line..before_line).contains(line))
            .map(|(_, template)| *template)
    }
}

/// Cuts a stream into regions at `---` lines, in one pass over the text.
///
/// Directive lines (`%YAML`, `%TAG`) belong to the document after them, so a region holding only
/// directives and comments is not cut from the following `---`.
pub(crate) fn split_regions(text: &str) -> Vec<Region<'_>> {
    let mut regions = Vec::new();
    let mut start = 0usize;
    let mut start_line = 0u32;
    let mut sources = Vec::new();
    // Whether the region holds YAML content since the last `...` (document end) line; a region
    // with only directives and comments since then must stay attached to the next `---`.
    let mut content = false;
    let mut directives = false;

    let mut offset = 0usize;
    let mut line_no = 0u32; // 0-based index of the current line
    for raw_line in text.split_inclusive('\n') {
        let line = raw_line.trim_end_matches(['\n', '\r']);
        if is_document_start(line) && offset > start && (content || !directives) {
            regions.push(Region {
                text: text.get(start..offset).unwrap_or_default(),
                line_offset: start_line,
                sources: std::mem::take(&mut sources),
            });
            start = offset;
            start_line = line_no;
            content = false;
            directives = false;
        }
        if is_document_start(line) {
            content = !is_blank_or_comment(line.get(3..).unwrap_or_default());
        } else if is_document_end(line) {
            content = false;
            directives = false;
        } else if line.starts_with('%') && !content {
            directives = true;
        } else if let Some(template) = helm_source(line) {
            sources.push((line_no.saturating_add(1), template));
        } else if !is_blank_or_comment(line) {
            content = true;
        }
        offset = offset.saturating_add(raw_line.len());
        line_no = line_no.saturating_add(1);
    }
    if offset > start {
        regions.push(Region {
            text: text.get(start..).unwrap_or_default(),
            line_offset: start_line,
            sources,
        });
    }
    regions
}

/// `---` at column 0, alone or followed by a blank (`--- |`, `--- # comment`).
fn is_document_start(line: &str) -> bool {
    marker_line(line, "---")
}

/// `...` at column 0, alone or followed by a blank.
fn is_document_end(line: &str) -> bool {
    marker_line(line, "...")
}

fn marker_line(line: &str, marker: &str) -> bool {
    line.strip_prefix(marker)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
}

fn is_blank_or_comment(line: &str) -> bool {
    let trimmed = line.trim_start();
    trimmed.is_empty() || trimmed.starts_with('#')
}

/// The template path of a Helm `# Source: chart/templates/x.yaml` comment line.
fn helm_source(line: &str) -> Option<&str> {
    let path = line.trim_start().strip_prefix("# Source:")?.trim();
    (!path.is_empty()).then_some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts<'t>(regions: &[Region<'t>]) -> Vec<&'t str> {
        regions.iter().map(|r| r.text).collect()
    }

    #[test]
    fn a_stream_is_cut_before_every_document_marker() {
        let regions = split_regions("a: 1\n---\nb: 2\n--- # c\nc: 3\n");
        assert_eq!(
            texts(&regions),
            ["a: 1\n", "---\nb: 2\n", "--- # c\nc: 3\n"]
        );
        assert_eq!(
            regions.iter().map(|r| r.line_offset).collect::<Vec<_>>(),
            [0, 1, 3]
        );
    }

    #[test]
    fn dashes_that_are_not_a_marker_do_not_cut() {
        let regions = split_regions("a: |\n  ---\nb: ----\n----\n");
        assert_eq!(regions.len(), 1);
    }

    #[test]
    fn a_leading_marker_does_not_make_an_empty_region() {
        let regions = split_regions("---\na: 1\n");
        assert_eq!(texts(&regions), ["---\na: 1\n"]);
    }

    #[test]
    fn directives_stay_with_the_document_they_introduce() {
        let regions = split_regions("a: 1\n...\n%YAML 1.2\n---\nb: 2\n---\nc: 3\n");
        assert_eq!(
            texts(&regions),
            ["a: 1\n...\n%YAML 1.2\n---\nb: 2\n", "---\nc: 3\n"]
        );
    }

    #[test]
    fn helm_source_comments_are_remembered_with_their_file_line() {
        let regions = split_regions("---\n# Source: c/templates/a.yaml\na: 1\n");
        assert_eq!(regions[0].sources, [(2, "c/templates/a.yaml")]);
        assert_eq!(regions[0].helm_template(1, 3), Some("c/templates/a.yaml"));
        assert_eq!(regions[0].helm_template(3, 4), None);
    }

    #[test]
    fn crlf_line_endings_are_understood() {
        let regions = split_regions("a: 1\r\n---\r\n# Source: x.yaml\r\nb: 2\r\n");
        assert_eq!(regions.len(), 2);
        assert_eq!(regions[1].sources, [(3, "x.yaml")]);
    }
}
