//! ANSI styling shared by the human-readable renderers.

/// ANSI styling that is a no-op when colour is off, so renderers build one string whatever the
/// terminal and the colour decision stays in one place (the CLI's `--color`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Style {
    /// Whether to emit escape codes at all.
    pub(crate) on: bool,
}

impl Style {
    fn paint(self, code: &str, s: &str) -> String {
        if self.on {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    pub(crate) fn bold(self, s: &str) -> String {
        self.paint("1", s)
    }
    pub(crate) fn dim(self, s: &str) -> String {
        self.paint("2", s)
    }
    pub(crate) fn red(self, s: &str) -> String {
        self.paint("31", s)
    }
    pub(crate) fn bold_red(self, s: &str) -> String {
        self.paint("1;31", s)
    }
    pub(crate) fn green(self, s: &str) -> String {
        self.paint("32", s)
    }
    pub(crate) fn yellow(self, s: &str) -> String {
        self.paint("33", s)
    }
    pub(crate) fn blue(self, s: &str) -> String {
        self.paint("34", s)
    }
    pub(crate) fn cyan(self, s: &str) -> String {
        self.paint("36", s)
    }
}
