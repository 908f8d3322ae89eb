//! Prose on standard error wrapped at words to the terminal's width.
//!
//! A side note (`kwire: 6 TLS connections were not decrypted …`) is advice
//! to read whole: cut with `…` as a view's line is ([`super::width`]), it
//! would lose the flag it names. So it is wrapped at spaces, its following
//! lines indented under its text, when standard error is a terminal; when
//! it is a pipe or a file, a note stays one line, for `grep` and scripts.

use super::escape::terminal_lines;
use super::width::{decide, display_width};
use std::borrow::Cow;
use std::io::IsTerminal;
use std::sync::OnceLock;

/// The columns a line on standard error wraps at: `None` (one line a note)
/// unless standard error is a terminal; then `COLUMNS`, else its width.
pub(crate) fn stderr_columns() -> Option<usize> {
    static COLUMNS: OnceLock<Option<usize>> = OnceLock::new();
    *COLUMNS.get_or_init(|| {
        let stderr = std::io::stderr();
        if !stderr.is_terminal() {
            return None;
        }
        let terminal = crossterm::terminal::size()
            .ok()
            .map(|(columns, _)| usize::from(columns));
        decide(false, terminal, |k| std::env::var(k).ok())
    })
}

/// `line` written on standard error, made safe for a terminal and, unless
/// it is `laid_out` by column with its neighbours, wrapped
/// ([`for_stderr`]); what cannot be written is dropped (`stderr_line!`).
pub fn write_stderr(line: &str, laid_out: bool) {
    use std::io::Write as _;
    let shown = match laid_out {
        true => terminal_lines(line),
        false => for_stderr(line),
    };
    let _ = writeln!(std::io::stderr(), "{shown}");
}

/// A line for standard error: made safe for a terminal
/// ([`super::escape::terminal_lines`]) and wrapped at words to the terminal when standard error is one.
pub fn for_stderr(line: &str) -> Cow<'_, str> {
    let safe = terminal_lines(line);
    match stderr_columns() {
        Some(columns) if safe.lines().any(|l| display_width(l.as_bytes()) > columns) => {
            Cow::Owned(wrap_words(&safe, columns))
        }
        _ => safe,
    }
}

/// `text` with each of its lines wrapped at spaces to `columns` cells; a
/// line's following lines start under its text, after its leading spaces
/// and a first word ending in `:` (`kwire: `, `warning: `) when that takes
/// at most a third of the width. A word wider than the room is left whole
/// on a line of its own: the terminal wraps it, as it would have.
pub(crate) fn wrap_words(text: &str, columns: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / columns.max(1) * 8);
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        wrap_line(line, columns, &mut out);
    }
    out
}

fn wrap_line(line: &str, columns: usize, out: &mut String) {
    if display_width(line.as_bytes()) <= columns {
        out.push_str(line);
        return;
    }
    // The label goes with the first line's words; the others start under them.
    let (label, indent) = hanging_indent(line, columns);
    let room = columns - indent;
    for (i, piece) in break_words(&line[label..], room, room).iter().enumerate() {
        match i {
            0 => out.push_str(&line[..label]),
            _ => {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', indent));
            }
        }
        out.push_str(piece);
    }
}

/// `text` broken at spaces into lines of at most `first` cells (the first
/// line) and `rest` cells (the others); a word wider than its line stands
/// on a line of its own. The one way kwire breaks prose into lines: notes
/// on standard error, `check`'s findings and rules, `export --schema`.
pub(crate) fn break_words(text: &str, first: usize, rest: usize) -> Vec<String> {
    let (mut out, mut line, mut used, mut width) = (Vec::new(), String::new(), 0, first);
    for (k, word) in text.split(' ').enumerate() {
        let cells = display_width(word.as_bytes());
        if k > 0 {
            if used > 0 && used + 1 + cells > width {
                out.push(std::mem::take(&mut line));
                (used, width) = (0, rest);
            } else {
                line.push(' ');
                used += 1;
            }
        }
        line.push_str(word);
        used += cells;
    }
    out.push(line);
    out
}

/// Where a wrapped line's label ends (its leading spaces and a first word
/// ending in `:`, with the space after it), in bytes, and the cells its
/// following lines are indented by: the label's, when it takes at most a
/// third of the width, else its spaces', else none.
fn hanging_indent(line: &str, columns: usize) -> (usize, usize) {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[spaces..];
    let label = match rest.split_once(' ') {
        Some((word, _)) if word.ends_with(':') => {
            (word.len() + 1, display_width(word.as_bytes()) + 1)
        }
        _ => (0, 0),
    };
    match spaces + label.1 {
        n if n <= columns / 3 => (spaces + label.0, n),
        _ if spaces <= columns / 3 => (spaces, spaces),
        _ => (0, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_wraps_at_spaces_under_its_text() {
        let note = "kwire: 6 TLS connections were not decrypted, so not decoded \
                    (give the session keys with --tls-keylog FILE)";
        assert_eq!(
            wrap_words(note, 40),
            "kwire: 6 TLS connections were not\n\
             \x20      decrypted, so not decoded (give\n\
             \x20      the session keys with\n\
             \x20      --tls-keylog FILE)"
        );
        for line in wrap_words(note, 40).lines() {
            assert!(display_width(line.as_bytes()) <= 40, "{line:?}");
        }
    }

    #[test]
    fn what_fits_and_what_cannot_break_stay_as_they_are() {
        assert_eq!(wrap_words("kwire: short", 40), "kwire: short");
        assert_eq!(wrap_words("a\n\nb", 40), "a\n\nb");
        let long = format!("kwire: {} end", "x".repeat(50));
        assert_eq!(
            wrap_words(&long, 40),
            format!("kwire: {}\n       end", "x".repeat(50))
        );
    }

    #[test]
    fn each_line_wraps_on_its_own_and_keeps_its_indent() {
        let text = "first line fits\n    indented line that is rather too long to fit";
        assert_eq!(
            wrap_words(text, 30),
            "first line fits\n    indented line that is\n    rather too long to fit"
        );
        // No label: the following lines start at the line's own indent.
        assert_eq!(wrap_words("one two three four", 9), "one two\nthree\nfour");
    }

    #[test]
    fn wide_characters_count_two_cells() {
        assert_eq!(wrap_words("日本 語語語", 9), "日本\n語語語");
    }
}
