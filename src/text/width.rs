//! How wide a line of text output may be, and lines cut to it.
//!
//! Text views fit the terminal: `COLUMNS` when set (as `ls` reads it: a
//! shell exports it only when asked), else the terminal's width when
//! standard output is one, else [`DEFAULT_COLUMNS`]; `--wide` lifts the limit. Views lay
//! out their lines to fit (columns sized to their content, connections named
//! once); [`FitLines`] is the guard under them all, cutting whatever is still
//! longer with `…`. JSON is never cut.
//!
//! Widths are counted in terminal cells: a character is one cell, a wide
//! one (CJK) two, and escape sequences (`ESC [ … m` colours) none.

use std::io::{self, Write};
use unicode_width::UnicodeWidthChar;

/// The width when neither the terminal nor `COLUMNS` says one.
pub const DEFAULT_COLUMNS: usize = 120;
/// No line is cut shorter than this, whatever `COLUMNS` says.
pub(crate) const MIN_COLUMNS: usize = 40;

/// The width text output fits: `None` for no limit (`wide`), else
/// `COLUMNS`, else the terminal's columns, else [`DEFAULT_COLUMNS`].
pub fn decide(
    wide: bool,
    terminal_columns: Option<usize>,
    env: impl Fn(&str) -> Option<String>,
) -> Option<usize> {
    if wide {
        return None;
    }
    let columns = env("COLUMNS")
        .and_then(|v| v.trim().parse().ok())
        .filter(|&c: &usize| c > 0)
        .or(terminal_columns.filter(|&c| c > 0))
        .unwrap_or(DEFAULT_COLUMNS);
    Some(columns.max(MIN_COLUMNS))
}

/// Cells `text` takes on a terminal.
pub fn display_width(text: &[u8]) -> usize {
    let mut cells = 0;
    walk(text, |_, _, w| {
        cells += w;
        true
    });
    cells
}

/// Bytes and cells of the character that starts `text` (a non-ASCII lead
/// byte); a byte that begins no valid character is one byte, one cell.
fn char_at(text: &[u8]) -> (usize, usize) {
    // The two that kwire's own text writes (a cut value's `…`, a
    // connection's `→`), one cell each: looking them up in the Unicode
    // tables was 1.6% of the Produce capture's text tree.
    if text.starts_with("…".as_bytes()) || text.starts_with("→".as_bytes()) {
        return (3, 1);
    }
    let len = match text[0] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return (1, 1),
    };
    match text
        .get(..len)
        .and_then(|s| std::str::from_utf8(s).ok())
        .and_then(|s| s.chars().next())
    {
        Some(c) => (len, c.width().unwrap_or(0)),
        None => (1, 1),
    }
}

/// Walks `text` as (byte index, bytes, cells) until `f` says stop: a run
/// of plain ASCII at once (a cell a byte; it starts with a byte below
/// 0x80), then each other character; escape sequences are passed over,
/// invalid UTF-8 counts a cell a byte. Runs matter: a text tree's long
/// lines are mostly ASCII with a `…` or `→` in them, and measuring them a
/// character at a time was more than a quarter of `kwire capture`'s text
/// tree.
fn walk(text: &[u8], mut f: impl FnMut(usize, usize, usize) -> bool) {
    let mut i = 0;
    while i < text.len() {
        let (len, cells) = match text[i] {
            0x1b => {
                i += escape_len(&text[i..]);
                continue;
            }
            b if b < 0x80 => {
                let run = plain_run(&text[i..]);
                (run, run)
            }
            _ => char_at(&text[i..]),
        };
        if !f(i, len, cells) {
            return;
        }
        i += len;
    }
}

/// Bytes of plain ASCII (no escape) that `text` starts with: sixteen at a
/// time while they all are, then one at a time.
fn plain_run(text: &[u8]) -> usize {
    let plain = |b: u8| b < 0x80 && b != 0x1b;
    let mut n = 0;
    for chunk in text.chunks_exact(16) {
        // No early exit within a chunk: the test of sixteen bytes is one vector test.
        if !chunk.iter().fold(true, |all, &b| all & plain(b)) {
            break;
        }
        n += 16;
    }
    n + text[n..].iter().take_while(|&&b| plain(b)).count()
}

/// ASCII without escape sequences: every byte a cell. The test of
/// [`plain_run`] over a whole text, by the library's word-at-a-time scans
/// (`plain_run(text) == text.len()` made the Produce capture's text tree
/// 1.3% more instructions).
fn is_plain(text: &[u8]) -> bool {
    text.is_ascii() && memchr::memchr(0x1b, text).is_none()
}

/// Bytes of the escape sequence at the start of `text`: `ESC [` parameters
/// and a final byte, or the escape alone.
fn escape_len(text: &[u8]) -> usize {
    if text.get(1) != Some(&b'[') {
        return 1;
    }
    match text[2..].iter().position(|b| (0x40..=0x7e).contains(b)) {
        Some(end) => end + 3,
        None => text.len(),
    }
}

/// Cuts `line[start..]` to `columns` cells, the last one `…`, when it is
/// longer; a cut that leaves a colour open closes it.
pub(crate) fn fit_line(line: &mut Vec<u8>, start: usize, columns: usize) {
    let text = &line[start..];
    // A cell takes a byte at least: a line no longer in bytes fits.
    if text.len() <= columns {
        return;
    }
    if is_plain(text) {
        line.truncate(start + columns.saturating_sub(1));
        line.extend_from_slice("…".as_bytes());
        return;
    }
    // One pass: where the cut goes (room for `…`), and whether one is needed.
    let room = columns.saturating_sub(1);
    let (mut cut, mut used, mut cells) = (None, 0, 0);
    walk(text, |i, len, w| {
        if cut.is_none() {
            if used + w > room {
                cut = Some(cut_in(text, (i, len), room, used).0);
            } else {
                used += w;
            }
        }
        cells += w;
        cells <= columns
    });
    if cells <= columns {
        return;
    }
    let cut = cut.unwrap_or(text.len());
    let coloured = text[..cut].contains(&0x1b);
    line.truncate(start + cut);
    line.extend_from_slice("…".as_bytes());
    if coloured {
        line.extend_from_slice(b"\x1b[0m");
    }
}

/// Where the piece of text (a run or a character) at `i`, `len` bytes long, is
/// cut when the `used` cells before it and its own pass `room`: a run of
/// ASCII inside it, a cell a byte; a character before it. The byte index of
/// the cut and the cells before it.
fn cut_in(text: &[u8], (i, len): (usize, usize), room: usize, used: usize) -> (usize, usize) {
    match text[i] < 0x80 {
        true => {
            let n = (room - used).min(len);
            (i + n, used + n)
        }
        false => (i, used),
    }
}

/// The pieces of a text measured by [`measure_pieces`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pieces<const N: usize> {
    /// Cells of each piece.
    pub cells: [usize; N],
    /// Whether each piece is plain: ASCII without escapes, a cell a byte,
    /// so that it is cut by its length.
    pub plain: [bool; N],
    /// Whether any piece holds an escape sequence (a colour): a cut that
    /// keeps one closes it.
    pub coloured: bool,
}

/// Each piece of `text` measured, in one walk: the pieces end at `ends`
/// (the last at the text's end). A piece is measured as it would be on its
/// own: a run is split where a piece ends, a character or an escape read
/// within its piece. One walk, not one a piece: the text tree's long lines
/// are measured this way (six walks a line were 8% of the Produce
/// capture's text tree).
pub(crate) fn measure_pieces<const N: usize>(text: &[u8], ends: [usize; N]) -> Pieces<N> {
    let mut out = Pieces {
        cells: [0; N],
        plain: [true; N],
        coloured: false,
    };
    let (mut i, mut k) = (0, 0);
    while i < text.len() {
        while ends[k] <= i {
            k += 1;
        }
        let piece = &text[i..ends[k]];
        match piece[0] {
            0x1b => {
                (out.plain[k], out.coloured) = (false, true);
                i += escape_len(piece);
            }
            b if b < 0x80 => {
                let end = i + plain_run(&text[i..]);
                while i < end {
                    while ends[k] <= i {
                        k += 1;
                    }
                    let stop = end.min(ends[k]);
                    out.cells[k] += stop - i;
                    i = stop;
                }
            }
            _ => {
                let (len, cells) = char_at(piece);
                (out.cells[k], out.plain[k]) = (out.cells[k] + cells, false);
                i += len;
            }
        }
    }
    out
}

/// Where [`fit_line`] cuts `text` to keep at most `room` cells before its
/// `…`, for a caller that has measured it ([`measure`]): the byte index and
/// the cells before it (the whole text and its cells when it fits).
pub(crate) fn cut_point(text: &[u8], plain: bool, room: usize) -> (usize, usize) {
    if plain {
        let n = room.min(text.len());
        return (n, n);
    }
    let (mut used, mut cut) = (0, None);
    walk(text, |i, len, w| {
        if used + w > room {
            cut = Some(cut_in(text, (i, len), room, used));
            return false;
        }
        used += w;
        true
    });
    cut.unwrap_or((text.len(), used))
}

/// Every line of `buf` from `start` on cut to `columns` cells.
pub(crate) fn fit_each_line(buf: &mut Vec<u8>, start: usize, columns: usize) {
    if buf.len() - start <= columns {
        return;
    }
    let mut out = Vec::with_capacity(buf.len() - start);
    for (i, line) in buf[start..].split(|&b| b == b'\n').enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let at = out.len();
        out.extend_from_slice(line);
        fit_line(&mut out, at, columns);
    }
    buf.truncate(start);
    buf.extend_from_slice(&out);
}

/// Text padded with spaces to a width in terminal cells (a CJK character
/// takes two, a combining mark none), so that the columns after it line up
/// in a table; `usize::MAX` pads nothing, and text wider than the width is
/// written whole.
pub(crate) struct Padded<'a>(pub &'a str, pub usize);

impl std::fmt::Display for Padded<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Padded(text, cells) = *self;
        f.write_str(text)?;
        if cells == usize::MAX {
            return Ok(());
        }
        for _ in display_width(text.as_bytes())..cells {
            f.write_str(" ")?;
        }
        Ok(())
    }
}

/// `text` cut to `columns` cells with `…` when longer.
pub fn fit(text: &str, columns: usize) -> String {
    let mut line = text.as_bytes().to_vec();
    fit_line(&mut line, 0, columns);
    String::from_utf8(line).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// A writer that passes lines on cut to a width (none: as they are).
pub struct FitLines<W: Write> {
    inner: W,
    columns: Option<usize>,
    /// The line being written, until its newline.
    line: Vec<u8>,
}

impl<W: Write> FitLines<W> {
    pub fn new(inner: W, columns: Option<usize>) -> Self {
        FitLines {
            inner,
            columns,
            line: Vec::new(),
        }
    }
}

impl<W: Write> Write for FitLines<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let Some(columns) = self.columns else {
            return self.inner.write(buf);
        };
        let mut out = Vec::with_capacity(buf.len() + 16);
        let mut rest = buf;
        while let Some(nl) = memchr::memchr(b'\n', rest) {
            let (head, tail) = rest.split_at(nl + 1);
            let head = &head[..nl];
            if self.line.is_empty() {
                let at = out.len();
                out.extend_from_slice(head);
                fit_line(&mut out, at, columns);
            } else {
                self.line.extend_from_slice(head);
                fit_line(&mut self.line, 0, columns);
                out.append(&mut self.line);
            }
            out.push(b'\n');
            rest = tail;
        }
        self.line.extend_from_slice(rest);
        self.inner.write_all(&out)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.line.is_empty() {
            if let Some(columns) = self.columns {
                fit_line(&mut self.line, 0, columns);
            }
            let line = std::mem::take(&mut self.line);
            self.inner.write_all(&line)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for FitLines<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_wins_then_the_terminal_then_120_and_wide_lifts_the_limit() {
        let env = |v: Option<&'static str>| {
            move |k: &str| (k == "COLUMNS").then_some(v).flatten().map(String::from)
        };
        assert_eq!(decide(false, Some(90), env(Some("200"))), Some(200));
        assert_eq!(decide(false, Some(90), env(None)), Some(90));
        assert_eq!(decide(false, None, env(Some("200"))), Some(200));
        assert_eq!(decide(false, None, env(Some("junk"))), Some(120));
        assert_eq!(decide(false, None, env(None)), Some(120));
        assert_eq!(decide(false, None, env(Some("10"))), Some(MIN_COLUMNS));
        assert_eq!(decide(true, Some(90), env(Some("200"))), None);
    }

    #[test]
    fn cells_count_wide_characters_twice_and_colours_not_at_all() {
        assert_eq!(display_width(b"abc"), 3);
        assert_eq!(display_width("→ ←".as_bytes()), 3);
        assert_eq!(display_width("日本".as_bytes()), 4);
        assert_eq!(display_width(b"\x1b[1;31mred\x1b[0m"), 3);
        assert_eq!(display_width(b"a\xffb"), 3);
    }

    #[test]
    fn a_long_line_is_cut_to_its_width_with_an_ellipsis() {
        assert_eq!(fit("abcdefghij", 10), "abcdefghij");
        assert_eq!(fit("abcdefghijk", 10), "abcdefghi…");
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert_eq!(display_width(fit("日本語のテキスト", 7).as_bytes()), 7);
        // A colour left open by the cut is closed.
        assert_eq!(fit("\x1b[32mabcdefghijk\x1b[0m", 5), "\x1b[32mabcd…\x1b[0m");
    }

    #[test]
    fn each_line_of_a_buffer_is_cut_on_its_own() {
        let mut buf = b"keep\nabcdefghijk\nshort\n".to_vec();
        fit_each_line(&mut buf, 5, 6);
        assert_eq!(buf, "keep\nabcde…\nshort\n".as_bytes());
    }

    #[test]
    fn lines_written_in_pieces_are_cut_whole() {
        let mut out = Vec::new();
        {
            let mut w = FitLines::new(&mut out, Some(8));
            w.write_all(b"short\nthis line is").unwrap();
            w.write_all(b" long\nlast line without newline").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "short\nthis li…\nlast li…");
        let mut out = Vec::new();
        FitLines::new(&mut out, None)
            .write_all(b"no limit at all, as long as it is\n")
            .unwrap();
        assert_eq!(out, b"no limit at all, as long as it is\n");
    }

    /// The measure and the cut a character at a time, as they were before
    /// ASCII runs were taken at once: what the runs must agree with.
    fn width_by_char(text: &[u8]) -> usize {
        let (mut i, mut cells) = (0, 0);
        while i < text.len() {
            match text[i] {
                0x1b => i += escape_len(&text[i..]),
                b if b < 0x80 => (cells, i) = (cells + 1, i + 1),
                _ => {
                    let (len, w) = char_at(&text[i..]);
                    (cells, i) = (cells + w, i + len);
                }
            }
        }
        cells
    }

    fn cut_by_char(text: &[u8], columns: usize) -> Option<usize> {
        if text.len() <= columns || width_by_char(text) <= columns {
            return None;
        }
        let (mut i, mut used) = (0, 0);
        while i < text.len() {
            let (len, w) = match text[i] {
                0x1b => {
                    i += escape_len(&text[i..]);
                    continue;
                }
                b if b < 0x80 => (1, 1),
                _ => char_at(&text[i..]),
            };
            if used + w > columns.saturating_sub(1) {
                return Some(i);
            }
            (used, i) = (used + w, i + len);
        }
        Some(text.len())
    }

    proptest::proptest! {
        #[test]
        fn runs_measure_and_cut_as_characters_do(
            pieces in proptest::collection::vec(0usize..12, 0..60),
            runs in proptest::collection::vec(0usize..40, 60),
            columns in 0usize..80,
        ) {
            let mut text = Vec::new();
            for (k, p) in pieces.iter().enumerate() {
                match p {
                    0 => text.extend(std::iter::repeat_n(b'x', runs[k])),
                    1 => text.extend_from_slice("…".as_bytes()),
                    2 => text.extend_from_slice("→".as_bytes()),
                    3 => text.extend_from_slice("日".as_bytes()),
                    4 => text.extend_from_slice(b"\x1b[1;31m"),
                    5 => text.extend_from_slice(b"\x1b[0m"),
                    6 => text.push(0xff),
                    7 => text.extend_from_slice("é".as_bytes()),
                    8 => text.extend_from_slice("\u{200b}".as_bytes()),
                    9 => text.extend_from_slice(&"é".as_bytes()[..1]),
                    10 => text.push(0x1b),
                    _ => text.extend_from_slice(b"0x00ff "),
                }
            }
            proptest::prop_assert_eq!(display_width(&text), width_by_char(&text));
            let mut line = b"> ".to_vec();
            line.extend_from_slice(&text);
            fit_line(&mut line, 2, columns);
            let want = match cut_by_char(&text, columns) {
                None => text.clone(),
                Some(cut) => {
                    let mut w = text[..cut].to_vec();
                    w.extend_from_slice("…".as_bytes());
                    if text[..cut].contains(&0x1b) {
                        w.extend_from_slice(b"\x1b[0m");
                    }
                    w
                }
            };
            proptest::prop_assert_eq!(&line[2..], &want[..]);
            // Pieces measured in one walk measure as each does on its own.
            let mut ends: Vec<usize> = runs.iter().map(|r| r * 7 % (text.len() + 1)).take(5).collect();
            ends.sort();
            let ends = [ends[0], ends[1], ends[2], ends[3], ends[4], text.len()];
            let mut from = 0;
            let measured = measure_pieces(&text, ends);
            for (k, &end) in ends.iter().enumerate() {
                let piece = &text[from..end];
                proptest::prop_assert_eq!(measured.cells[k], width_by_char(piece));
                proptest::prop_assert_eq!(measured.plain[k], is_plain(piece));
                from = end;
            }
            proptest::prop_assert_eq!(measured.coloured, text.contains(&0x1b));
            // The cut of a measured text is the same cut, and says its cells.
            if let Some(cut) = cut_by_char(&text, columns) {
                let Pieces { cells: [cells], plain: [plain], .. } = measure_pieces(&text, [text.len()]);
                proptest::prop_assert_eq!(cells, width_by_char(&text));
                let room = columns.saturating_sub(1);
                proptest::prop_assert_eq!(
                    cut_point(&text, plain, room),
                    (cut, width_by_char(&text[..cut]))
                );
            }
        }
    }
}
