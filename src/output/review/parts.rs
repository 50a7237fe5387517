//! A review comment cut into parts that each fit one comment. GitHub refuses a comment over
//! 65,536 characters, so a long review continues in further comments instead of losing
//! anything: part 1 keeps the marker integrations have always looked for
//! (`<!-- syncguard-review -->`) when it is the only part, and every part of a longer review
//! carries `<!-- syncguard-review part K of N -->`, so `integrations/upsert-comment.py` updates
//! each part in place and deletes the parts an earlier, longer review left.
//!
//! The comment comes as blocks (a section, one Application's `<details>`). A block is kept
//! whole in one part when it fits in one; a block longer than a part is cut between its units
//! (lines, or the lines of one object of a diff), a unit longer than a part between its lines,
//! the `<details>`, code fence and table open at the cut closed there and opened again at the
//! top of the next part. Only a single line longer than a part is cut inside, and nothing is
//! left out: the parts, without what cutting added, are the comment.

/// The marker of a comment that is the whole review.
pub const MARKER: &str = "<!-- syncguard-review -->";

/// The smallest `--markdown-budget` a review can be cut for: room for the part's heading, a
/// reopened `<details>` summary and some content.
pub const MIN_BUDGET: usize = 2048;

/// Bytes every part keeps free below the budget.
const MARGIN: usize = 256;

/// The marker of part `part` of `parts`.
pub fn marker(part: usize, parts: usize) -> String {
    if parts <= 1 {
        MARKER.to_string()
    } else {
        format!("<!-- syncguard-review part {part} of {parts} -->")
    }
}

fn header(part: usize, parts: usize) -> String {
    let title = if parts <= 1 {
        String::new()
    } else {
        format!(" — part {part} of {parts}")
    };
    format!("{}\n## syncguard review{title}\n\n", marker(part, parts))
}

fn footer(part: usize, parts: usize) -> String {
    if part >= parts {
        String::new()
    } else {
        format!("\n*Continued in part {} of {parts}.*\n", part + 1)
    }
}

/// What a part holds: text of the comment, or what cutting added to keep the part valid
/// Markdown (closing and reopening tags, fences and table headings).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Kept(String),
    Added(String),
}

/// A block of the comment (a section, one Application's `<details>`) as its units: the places
/// between them are where it is cut first when it does not fit in a part (between the objects
/// of a diff rather than between an old value and its new one). Each unit is whole lines.
pub type Block = Vec<String>;

/// `text` as a block that may be cut after any line.
pub fn lines(text: &str) -> Block {
    text.split_inclusive('\n').map(str::to_string).collect()
}

/// The comment made of `blocks`, as parts of at most `budget` bytes each (at least
/// [`MIN_BUDGET`]), each starting with its marker and heading.
pub fn split(blocks: &[Block], budget: usize) -> Vec<String> {
    let bodies = pack(blocks, room(budget));
    let n = bodies.len();
    bodies
        .iter()
        .enumerate()
        .map(|(i, pieces)| {
            let mut out = header(i + 1, n);
            for p in pieces {
                match p {
                    Piece::Kept(t) | Piece::Added(t) => out.push_str(t),
                }
            }
            out.push_str(&footer(i + 1, n));
            out
        })
        .collect()
}

/// The bytes of a part of `budget` left for the comment, the longest heading and footer (as many
/// parts as there could be) and the margin taken off.
fn room(budget: usize) -> usize {
    let most = usize::MAX / 2;
    budget
        .max(MIN_BUDGET)
        .saturating_sub(MARGIN + header(most, most).len() + footer(most - 1, most).len())
}

/// Something open at a cut, and how to close and reopen it.
#[derive(Debug, Clone)]
struct Open {
    kind: Kind,
    reopen: String,
    close: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Details,
    Fence,
    Table,
}

/// What is open after `line`, given what was open before it.
fn after(open: &[Open], line: &str) -> Vec<Open> {
    let mut open = open.to_vec();
    let text = line.trim_end_matches('\n');
    if open.last().is_some_and(|o| o.kind == Kind::Fence) {
        if text.trim() == "```" {
            open.pop();
        }
        return open;
    }
    if open.last().is_some_and(|o| o.kind == Kind::Table) {
        if text.starts_with('|') {
            // The heading is its first two rows: the names and the alignment row.
            if let Some(table) = open.last_mut()
                && table.reopen.lines().count() < 2
            {
                table.reopen.push_str(text);
                table.reopen.push('\n');
            }
            return open;
        }
        open.pop();
    }
    if text.starts_with("```") {
        open.push(Open {
            kind: Kind::Fence,
            reopen: format!("{text}\n"),
            close: "```\n".into(),
        });
    } else if text.starts_with("<details") {
        let reopen = match text.rfind("</summary>") {
            Some(at) => format!("{} (continued){}\n\n", &text[..at], &text[at..]),
            None => format!("{text}\n\n"),
        };
        open.push(Open {
            kind: Kind::Details,
            reopen,
            close: "\n</details>\n".into(),
        });
    } else if text.starts_with("</details>") {
        if let Some(at) = open.iter().rposition(|o| o.kind == Kind::Details) {
            open.truncate(at);
        }
    } else if text.starts_with('|') {
        open.push(Open {
            kind: Kind::Table,
            reopen: format!("{text}\n"),
            close: String::new(),
        });
    }
    open
}

fn closing(open: &[Open]) -> usize {
    open.iter().map(|o| o.close.len()).sum()
}

/// Fills parts of `room` bytes.
struct Packer {
    room: usize,
    parts: Vec<Vec<Piece>>,
    used: usize,
    /// Whether the current part holds text of the comment yet (not only reopened tags).
    kept: bool,
}

impl Packer {
    fn push(&mut self, piece: Piece) {
        let (Piece::Kept(t) | Piece::Added(t)) = &piece;
        self.used += t.len();
        self.kept |= matches!(piece, Piece::Kept(_));
        if let Some(part) = self.parts.last_mut() {
            part.push(piece);
        }
    }

    /// Ends the current part with what is open closed, and starts the next with it reopened.
    fn next_part(&mut self, open: &[Open]) {
        let mut close = String::new();
        for o in open.iter().rev() {
            close.push_str(&o.close);
        }
        if !close.is_empty() {
            self.push(Piece::Added(close));
        }
        self.parts.push(Vec::new());
        self.used = 0;
        self.kept = false;
        let reopen: String = open.iter().map(|o| o.reopen.as_str()).collect();
        if !reopen.is_empty() {
            self.push(Piece::Added(reopen));
        }
    }

    /// Places `text` (whole lines) in the current part, or at the top of the next one when it
    /// fits there but not in what is left; false when it fits in no part.
    fn place(&mut self, text: &str, open: &mut Vec<Open>) -> bool {
        let then = text
            .split_inclusive('\n')
            .fold(open.clone(), |o, line| after(&o, line));
        if self.used + text.len() + closing(&then) > self.room {
            let fresh: usize = open.iter().map(|o| o.reopen.len()).sum();
            if !self.kept || fresh + text.len() + closing(&then) > self.room {
                return false;
            }
            self.next_part(open);
        }
        self.push(Piece::Kept(text.to_string()));
        *open = then;
        true
    }

    /// A block: whole if it fits in a part, else cut between its units, and a unit longer than
    /// a part between its lines.
    fn block(&mut self, units: &[String]) {
        let mut open: Vec<Open> = Vec::new();
        if self.place(&units.concat(), &mut open) {
            return;
        }
        for unit in units {
            if self.place(unit, &mut open) {
                continue;
            }
            for line in unit.split_inclusive('\n') {
                if !self.place(line, &mut open) {
                    let then = after(&open, line);
                    self.long_line(line, &open);
                    open = then;
                }
            }
        }
    }

    /// A line that does not fit in a part of its own, cut at character boundaries.
    fn long_line(&mut self, line: &str, open: &[Open]) {
        let mut rest = line;
        while !rest.is_empty() {
            // One byte for the newline a cut needs.
            let free = self.room.saturating_sub(self.used + closing(open) + 1);
            if free < rest.len().min(64) && self.kept {
                self.next_part(open);
                continue;
            }
            let mut take = free.min(rest.len());
            while take < rest.len() && !rest.is_char_boundary(take) {
                take -= 1;
            }
            if take == 0 {
                // Nothing fits even in a fresh part: one character, so the cutting ends.
                take = rest.chars().next().map_or(rest.len(), char::len_utf8);
            }
            let (now, later) = rest.split_at(take);
            self.push(Piece::Kept(now.to_string()));
            rest = later;
            if !rest.is_empty() {
                self.push(Piece::Added("\n".into()));
                self.next_part(open);
            }
        }
    }
}

/// The pieces of each part of at most `room` bytes holding `blocks` in order.
fn pack(blocks: &[Block], room: usize) -> Vec<Vec<Piece>> {
    let mut packer = Packer {
        room,
        parts: vec![Vec::new()],
        used: 0,
        kept: false,
    };
    for b in blocks.iter().filter(|b| b.iter().any(|u| !u.is_empty())) {
        packer.block(b);
    }
    packer.parts
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The parts read back as one text: what was kept, without what cutting added.
    fn kept(parts: &[Vec<Piece>]) -> String {
        parts
            .iter()
            .flatten()
            .filter_map(|p| match p {
                Piece::Kept(t) => Some(t.as_str()),
                Piece::Added(_) => None,
            })
            .collect()
    }

    /// Every part within the budget, with balanced fences and `<details>`, numbered in order.
    fn well_formed(parts: &[String], budget: usize) {
        let n = parts.len();
        for (i, p) in parts.iter().enumerate() {
            assert!(p.len() <= budget, "part {} is {} bytes", i + 1, p.len());
            assert!(p.starts_with(&marker(i + 1, n)), "{p}");
            let fences = p
                .lines()
                .filter(|l| l.trim_start().starts_with("```"))
                .count();
            assert_eq!(fences % 2, 0, "an unclosed fence in part {}:\n{p}", i + 1);
            assert_eq!(
                p.matches("<details").count(),
                p.matches("</details>").count(),
                "part {}:\n{p}",
                i + 1
            );
            if i + 1 < n {
                assert!(p.ends_with(&format!("*Continued in part {} of {n}.*\n", i + 2)));
            }
        }
    }

    /// An Application's details: a table and a diff of `rows` objects, each object one unit.
    fn details(name: &str, rows: usize) -> Block {
        let mut out = lines(&format!(
            "<details><summary><b>{name}</b> — changed</summary>\n\n| a | b |\n|---|---|\n"
        ));
        for i in 0..rows {
            out.push(format!("| row {i} | value {i} |\n"));
        }
        out.extend(lines("\n```diff\n"));
        for i in 0..rows {
            out.push(format!(
                "! ConfigMap shop/cm-{i:04}\n-   /data/a: one\n+   /data/a: two\n"
            ));
        }
        out.extend(lines("```\n\n</details>\n\n"));
        out
    }

    #[test]
    fn a_comment_that_fits_is_one_part_with_the_plain_marker() {
        let blocks = vec![lines("**No new blocking findings.**\n\n")];
        let parts = split(&blocks, 65_536);
        assert_eq!(
            parts,
            ["<!-- syncguard-review -->\n## syncguard review\n\n**No new blocking findings.**\n\n"]
        );
    }

    #[test]
    fn every_part_is_within_the_budget_and_nothing_is_lost() {
        let errors: String = (0..40)
            .map(|i| format!("- apps/broken-{i}.yaml:3: mapping values are not allowed here\n"))
            .collect();
        let errors = format!("### Not read on the head revision\n\n{errors}\n");
        let blocks = vec![
            lines("**Not judged: 40 files could not be judged.**\n\n"),
            lines(&errors),
            details("Application argocd/small", 3),
            details("Application argocd/huge", 1500),
            details("Application argocd/after", 5),
            lines("### Fixed findings (1)\n\n- **SG101** gone\n\n"),
        ];
        for budget in [MIN_BUDGET, 3000, 10_000, 65_536] {
            let parts = split(&blocks, budget);
            well_formed(&parts, budget);
            assert!(parts.len() > 1, "{budget}");
            let pieces = pack(&blocks, room(budget));
            assert_eq!(pieces.len(), parts.len());
            assert_eq!(kept(&pieces), blocks.concat().concat(), "{budget}");
            if errors.len() <= room(budget) {
                // The errors fit in a part: they are whole in the first.
                assert!(parts[0].contains(&errors), "{budget}: {}", parts[0]);
            } else {
                // They do not: each is a whole line of some part, the first in part 1.
                for line in errors.lines().filter(|l| l.starts_with("- ")) {
                    let line = format!("\n{line}\n");
                    assert!(parts.iter().any(|p| p.contains(&line)), "{line}");
                }
                assert!(parts[0].contains("- apps/broken-0.yaml"));
            }
        }
    }

    #[test]
    fn a_details_block_longer_than_a_part_is_cut_between_lines_and_reopened() {
        let blocks = vec![details("Application argocd/huge", 200)];
        let parts = split(&blocks, 4000);
        well_formed(&parts, 4000);
        assert!(parts.len() > 3);
        for p in &parts[1..] {
            // Each later part opens the Application's details again, named as continued.
            assert!(
                p.contains("<details><summary><b>Application argocd/huge</b> — changed (continued)</summary>"),
                "{p}"
            );
        }
        // A cut inside the table repeats its heading; a cut inside the diff reopens the fence.
        let in_table = parts.iter().skip(1).find(|p| p.contains("| row ")).unwrap();
        assert!(
            in_table.contains("| a | b |\n|---|---|\n| row "),
            "{in_table}"
        );
        let in_diff = parts.last().unwrap();
        assert!(
            in_diff.contains("(continued)</summary>\n\n```diff\n! ConfigMap"),
            "{in_diff}"
        );
        // The diff is cut between objects, never between an old value and its new one.
        for p in &parts {
            if let Some((_, diff)) = p.split_once("```diff\n") {
                assert!(diff.starts_with("! ConfigMap"), "{p}");
                let before_close = diff.split("```\n").next().unwrap();
                assert!(before_close.ends_with("+   /data/a: two\n"), "{p}");
            }
        }
        // Lines are never cut: every line of a part is a line of the block or one cutting added.
        let text = blocks[0].concat();
        let lines: Vec<&str> = text.lines().collect();
        for p in &parts {
            for l in p.lines() {
                assert!(
                    lines.contains(&l)
                        || l.starts_with("<!-- syncguard-review part ")
                        || l.starts_with("## syncguard review — part ")
                        || l.starts_with("*Continued in part ")
                        || l.ends_with("(continued)</summary>")
                        || l.is_empty(),
                    "{l:?}"
                );
            }
        }
    }

    #[test]
    fn a_line_longer_than_a_part_is_cut_inside_and_kept_whole_across_parts() {
        let long = "Q".repeat(9000);
        let blocks = vec![lines(&format!("```text\n{long}\n```\n")), lines("after\n")];
        let parts = split(&blocks, MIN_BUDGET);
        well_formed(&parts, MIN_BUDGET);
        assert_eq!(
            kept(&pack(&blocks, room(MIN_BUDGET))),
            blocks.concat().concat()
        );
        let qs: usize = parts.iter().map(|p| p.matches('Q').count()).sum();
        assert_eq!(qs, 9000);
        assert!(parts.last().unwrap().contains("after"));
    }

    #[test]
    fn a_block_that_does_not_fit_what_is_left_starts_the_next_part_whole() {
        let a = format!("{}\n", "a".repeat(1000));
        let b = format!("{}\n", "b".repeat(1000));
        let parts = pack(&[lines(&a), lines(&b)], 1500);
        assert_eq!(parts, [vec![Piece::Kept(a)], vec![Piece::Kept(b)]]);
    }
}
