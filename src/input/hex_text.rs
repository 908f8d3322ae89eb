//! Hex text in the shapes people paste, turned into bytes.
//!
//! Accepted shapes:
//! - plain hex, continuous or separated, any case: `0000001a0012`, `00 1a`,
//!   `0x00, 0x1a`, `00:1a:2b`, `00-1a`, `00;1a`, `\x00\x1a`, and array literals
//!   such as Wireshark's "Copy as C Array" / "Go literal" (`char b[] = {0x00, 0x1a};`);
//! - offset-prefixed dumps: `xxd` (any `-g`/`-c`), `hexdump -C` (with `*` repeat
//!   lines), `od -A x -t x1z` (and `od -t x1` with octal offsets), `tcpdump -X`,
//!   Wireshark "Copy as Hex Dump";
//! - 16-bit word dumps: `hexdump` without options (`0000000 0000 4a00 ...`),
//!   `hexdump -x` and `od -x`, read as little-endian words; `od`'s default
//!   octal words (`od`, `od -A x`: six octal digits a word) the same way;
//! - offsets in hex, octal (`od`) or decimal (`od -A d`);
//! - kwire's own `--format grid` output (its title, column ruler and legend
//!   are passed over);
//! - `#`, `//` and `/*` comments, on their own line or trailing.
//!
//! CR, CRLF and LF all end a line: terminals send CR between pasted lines.
//!
//! A dump is recognised as a whole: every line must start with an increasing
//! offset, and the offsets must agree with the bytes on the lines. The offsets
//! then say how many bytes each line holds, so an ASCII column that happens to
//! read as hex (`deadbeef`) is never taken for data.

use std::collections::HashSet;
use std::fmt;

/// Where and why pasted text is not hex. `line` and `column` are 1-based;
/// columns count characters, not bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HexError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl HexError {
    fn new(line: usize, column: usize, message: impl Into<String>) -> Self {
        HexError {
            line,
            column,
            message: message.into(),
        }
    }
}

impl fmt::Display for HexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for HexError {}

/// What `*` repeat lines may add in all, whatever the text's size: 1 MiB, the
/// largest message a default Kafka broker accepts (`message.max.bytes`), so a
/// dump of such a message with long zero runs still expands.
pub const REPEAT_ALLOWANCE: u64 = 1 << 20;

/// What `*` repeat lines may add per byte of text, on top of the allowance: a
/// long dump with many `*` lines expands in proportion, while a few bytes of
/// text can no longer claim gigabytes (each of which the decoder would then
/// turn into frames).
pub const REPEAT_BYTES_PER_TEXT_BYTE: u64 = 16;

/// The most bytes `*` repeat lines may add to the dump in `text`:
/// [`REPEAT_ALLOWANCE`] + [`REPEAT_BYTES_PER_TEXT_BYTE`] × the text's length.
pub fn repeat_budget(text: &str) -> u64 {
    let per_text = (text.len() as u64).saturating_mul(REPEAT_BYTES_PER_TEXT_BYTE);
    REPEAT_ALLOWANCE.saturating_add(per_text)
}

/// Parse pasted hex text into bytes.
///
/// A `*` line (`hexdump`, `od`) repeats the row above it up to the next
/// offset, which must lie a whole number of rows further on. All `*` lines
/// together may add at most [`repeat_budget`] bytes (1 MiB + 16 per byte of
/// text); a `*` line that would go over is an error naming its line, checked
/// before anything is allocated.
pub fn parse_hex_text(text: &str) -> Result<Vec<u8>, HexError> {
    let budget = repeat_budget(text);
    let mut bytes = Vec::new();
    for section in grid_sections(content_lines(text)) {
        bytes.extend(parse_lines(&section, budget)?);
    }
    if bytes.is_empty() {
        return Err(HexError::new(1, 1, "no hex bytes found"));
    }
    Ok(bytes)
}

fn parse_lines(lines: &[Line], budget: u64) -> Result<Vec<u8>, HexError> {
    let dump = match parse_dump(lines, 16, budget) {
        Some(hex) => Some(unless_octal_fits_too(hex, lines, budget)),
        None => parse_dump(lines, 8, budget).or_else(|| parse_dump(lines, 10, budget)),
    };
    match dump {
        Some(result) => result,
        None => {
            check_repeat_offsets(lines)?;
            parse_plain(lines).map_err(|e| with_dump_hint(e, lines))
        }
    }
}

/// Offsets that read as hex and as octal alike (no digit above 7) leave the
/// tool open when `*` lines hide every row whose width would tell. Byte dumps
/// with seven-digit offsets and no colon come from `od -t x1`, whose offsets
/// are octal (`hexdump -C` prints eight digits, `od -A x` six), and so are
/// those of `od`'s default octal words. Hex-word dumps
/// come from `hexdump` (hex) or `od -x` (octal), both seven digits wide: a
/// guess would be silently wrong about the length, so that is an error.
fn unless_octal_fits_too(
    hex: Result<Vec<u8>, HexError>,
    lines: &[Line],
    budget: u64,
) -> Result<Vec<u8>, HexError> {
    let Ok(bytes) = hex else {
        return hex;
    };
    let Some(rows) = lines
        .iter()
        .map(|l| dump_row(l, 16))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(bytes);
    };
    let unit = unit_of(&rows);
    let od_offsets = rows
        .iter()
        .filter_map(Row::data)
        .all(|d| d.digits == 7 && !d.colon);
    if unit != Unit::Words && !od_offsets {
        return Ok(bytes);
    }
    match parse_dump(lines, 8, budget) {
        // Only `od` prints octal words, and with seven digits its offsets
        // are octal (`od -A x` prints six).
        Some(Ok(octal)) if octal != bytes && unit != Unit::Words => Ok(octal),
        Some(Ok(octal)) if octal != bytes => {
            let repeat = lines.iter().find(|l| l.text.trim_matches(is_space) == "*");
            let message = format!(
                "the offsets of this 16-bit word dump fit both as hexadecimal (`hexdump`: {} \
                 bytes) and as octal (`od -x`: {} bytes); paste `hexdump -C`, `xxd` or \
                 `od -A x -x` output instead",
                bytes.len(),
                octal.len()
            );
            Err(HexError::new(repeat.map_or(1, |l| l.no), 1, message))
        }
        _ => Ok(bytes),
    }
}

/// A plain-hex error on text shaped like a dump (offsets with colons, an ASCII
/// column fence) is puzzling on its own; say why it was not read as a dump.
fn with_dump_hint(mut error: HexError, lines: &[Line]) -> HexError {
    let rows = lines
        .iter()
        .map(|l| dump_row(l, 16))
        .collect::<Option<Vec<_>>>();
    let fenced = |d: &DataRow| d.colon || d.tokens.iter().any(is_marker);
    if rows.is_some_and(|rows| rows.iter().filter_map(Row::data).any(fenced)) {
        error.message.push_str(
            " (the text looks like a hex dump, but its offsets do not match the bytes on its lines)",
        );
    }
    error
}

// ---------------------------------------------------------------------------
// Lines and comments

/// A line that still has content once comments are cut; `no` is 1-based.
struct Line<'a> {
    no: usize,
    text: &'a str,
}

fn content_lines(text: &str) -> Vec<Line<'_>> {
    split_lines(text)
        .enumerate()
        .map(|(i, raw)| Line {
            no: i + 1,
            text: strip_comment(raw),
        })
        .filter(|line| !line.text.trim_matches(is_space).is_empty())
        .collect()
}

/// The text's lines, ended by CR, CRLF or LF alike.
fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let text = rest?;
        match text.find(['\r', '\n']) {
            Some(end) => {
                let ending = if text[end..].starts_with("\r\n") {
                    2
                } else {
                    1
                };
                rest = Some(&text[end + ending..]).filter(|r| !r.is_empty());
                Some(&text[..end])
            }
            None => {
                rest = None;
                Some(text)
            }
        }
    })
}

/// kwire's `--format grid` output read back: its title line (`byte layout
/// (N bytes, …)`), the column ruler under it and the legend after the rows
/// are no bytes, and each grid's offsets start again at 0, so each is a
/// section of its own. Text without a title is one section, untouched.
fn grid_sections(lines: Vec<Line<'_>>) -> Vec<Vec<Line<'_>>> {
    let is_title = |l: &Line| l.text.trim_start().starts_with("byte layout (");
    if !lines.iter().any(is_title) {
        return vec![lines];
    }
    let is_ruler = |l: &Line| {
        let mut tokens = l.text.split_whitespace().peekable();
        tokens.peek().is_some()
            && tokens.all(|t| t.len() == 1 && t.chars().all(|c| c.is_ascii_hexdigit()))
    };
    let mut sections: Vec<Vec<Line>> = vec![Vec::new()];
    let (mut in_legend, mut after_title) = (false, false);
    for line in lines {
        if is_title(&line) {
            (in_legend, after_title) = (false, true);
            sections.push(Vec::new());
            continue;
        }
        if std::mem::take(&mut after_title) && is_ruler(&line) {
            continue;
        }
        in_legend |= line.text.trim_start().starts_with("legend:");
        if !in_legend {
            if let Some(section) = sections.last_mut() {
                section.push(line);
            }
        }
    }
    sections.retain(|s| !s.is_empty());
    sections
}

/// Cuts a `#`, `//` or `/*` comment. A dump's ASCII column may hold these
/// characters too; cutting there is harmless because that column is dropped.
fn strip_comment(line: &str) -> &str {
    let cut = ["#", "//", "/*"].iter().filter_map(|m| line.find(m)).min();
    &line[..cut.unwrap_or(line.len())]
}

/// Whitespace, plus the invisible characters web pages and editors slip into
/// copied text.
fn is_space(c: char) -> bool {
    c.is_whitespace() || matches!(c, '\u{200b}' | '\u{feff}')
}

fn nibble(c: char) -> Option<u8> {
    c.to_digit(16).map(|d| d as u8)
}

fn expected_digit(line: usize, column: usize, found: Option<char>) -> HexError {
    let found = found.map_or_else(|| "the end of the line".to_string(), |c| format!("{c:?}"));
    HexError::new(line, column, format!("expected a hex digit, found {found}"))
}

fn odd_digits(line: usize, column: usize, digits: usize) -> HexError {
    let message = format!("odd number of hex digits ({digits} in a row; a byte needs two)");
    HexError::new(line, column, message)
}

// ---------------------------------------------------------------------------
// Plain hex

fn parse_plain(lines: &[Line]) -> Result<Vec<u8>, HexError> {
    let mut out = Vec::new();
    for line in lines {
        parse_plain_line(line, &mut out)?;
    }
    Ok(out)
}

fn is_separator(c: char) -> bool {
    is_space(c) || ",:;-[]{}()\"'".contains(c)
}

/// Runs of hex digits between separators; a run may start with `0x` or `\x`.
fn parse_plain_line(line: &Line, out: &mut Vec<u8>) -> Result<(), HexError> {
    let text = skip_declaration(line.text);
    let first_col = line.text[..line.text.len() - text.len()].chars().count() + 1;
    let mut chars = text.chars().zip(first_col..).peekable();
    let mut run = Run::default();
    let mut after_prefix = false;
    while let Some((c, col)) = chars.next() {
        let x_follows = matches!(chars.peek(), Some(('x' | 'X', _)));
        if let Some(value) = nibble(c) {
            if c == '0' && x_follows && run.digits == 0 && !after_prefix {
                chars.next();
                after_prefix = true;
                continue;
            }
            run.push(value, col, out);
            after_prefix = false;
            continue;
        }
        let escape = c == '\\' && x_follows;
        if after_prefix || !(escape || is_separator(c)) {
            return Err(expected_digit(line.no, col, Some(c)));
        }
        run.finish(line.no)?;
        if escape {
            chars.next();
            after_prefix = true;
        }
    }
    if after_prefix {
        let end_col = first_col + text.chars().count();
        return Err(expected_digit(line.no, end_col, None));
    }
    run.finish(line.no)
}

/// Drops a declaration in front of an array literal (`char b[] = {`,
/// `[]byte{`, `let m: [u8; 4] = [`), i.e. text up to the last opening bracket
/// when that text could not be hex anyway.
fn skip_declaration(text: &str) -> &str {
    let Some(open) = text.rfind(['{', '[', '(']) else {
        return text;
    };
    let prefix = &text[..open];
    let declaration = prefix
        .chars()
        .any(|c| !(c.is_ascii_hexdigit() || is_separator(c) || matches!(c, 'x' | 'X' | '\\')));
    if declaration {
        &text[open + 1..]
    } else {
        text
    }
}

/// A run of hex digits in progress: pairs become bytes as they complete.
#[derive(Default)]
struct Run {
    digits: usize,
    start: usize,
    high: u8,
}

impl Run {
    fn push(&mut self, value: u8, col: usize, out: &mut Vec<u8>) {
        if self.digits == 0 {
            self.start = col;
        }
        if self.digits.is_multiple_of(2) {
            self.high = value;
        } else {
            out.push(self.high << 4 | value);
        }
        self.digits += 1;
    }

    fn finish(&mut self, line: usize) -> Result<(), HexError> {
        match std::mem::take(&mut self.digits) {
            n if n % 2 == 1 => Err(odd_digits(line, self.start, n)),
            _ => Ok(()),
        }
    }
}

// ---------------------------------------------------------------------------
// Offset-prefixed dumps

/// A whitespace-separated word after a dump line's offset.
struct Token<'a> {
    text: &'a str,
    /// 1-based column in the line, for errors.
    col: usize,
    /// Columns from the start of the offset, to line rows up with each other
    /// even when the paste indented them differently.
    rel: usize,
    /// Width of the whitespace before the token (a tab counts as two).
    gap: usize,
}

struct DataRow<'a> {
    no: usize,
    offset: u64,
    digits: usize,
    /// Starts with a `0` it does not need: tools pad offsets to a fixed width
    /// and only widen them when the value outgrows it.
    padded: bool,
    colon: bool,
    /// Empty for the closing offset-only line of `hexdump` and `od`.
    tokens: Vec<Token<'a>>,
}

enum Row<'a> {
    /// `*`: the previous row repeats until the next offset.
    Repeat {
        no: usize,
        col: usize,
    },
    Data(DataRow<'a>),
}

impl<'a> Row<'a> {
    fn data(&self) -> Option<&DataRow<'a>> {
        match self {
            Row::Data(d) => Some(d),
            Row::Repeat { .. } => None,
        }
    }
}

/// How many bytes a row holds.
#[derive(Clone, Copy)]
enum Plan {
    /// Given by the offsets: the distance to the next one.
    Known(usize),
    /// Not given (last row, or a row before `*`): read up to the ASCII column.
    Open,
    Repeat,
    /// The closing offset-only line.
    End,
}

/// How a dump prints its bytes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// Bytes in order, however grouped (`xxd` prints `0000 004a` too).
    Bytes,
    /// 16-bit words in the host's byte order: `hexdump` without options,
    /// `hexdump -x`, `od -x`. Hosts are little-endian nowadays (x86, ARM), so
    /// `4a00` is the bytes `00 4a`.
    Words,
    /// 16-bit words as six octal digits, in the host's byte order: `od`'s
    /// default (`od`, `od -A x`, `od -o`).
    OctalWords,
}

impl Unit {
    /// How many bytes a token of this unit holds (a bytes token: its digit
    /// pairs).
    fn bytes_in(self, t: &Token) -> u64 {
        match self {
            Unit::OctalWords => 2,
            _ => t.text.chars().count() as u64 / 2,
        }
    }
}

/// Words when the first row's hex comes in groups of four digits and its
/// offset has no colon: `xxd` and `tcpdump -X`, which group bytes in order,
/// always put a colon after the offset; no word dump does.
fn unit_of(rows: &[Row]) -> Unit {
    let first = rows
        .iter()
        .filter_map(Row::data)
        .find_map(|d| Some(d).zip(d.tokens.first()));
    match first {
        Some((d, t)) if !d.colon && is_word(t.text) => Unit::Words,
        Some((d, t)) if !d.colon && is_octal_word(t.text) => Unit::OctalWords,
        _ => Unit::Bytes,
    }
}

/// Whether `text` has the shape of a 16-bit word dump (`hexdump` without
/// options, `od -x`): every line an offset or a `*`, and the first row, after
/// an offset without a colon, starting with a four-character word, even one
/// with a typo in it.
pub(crate) fn looks_like_word_dump(text: &str) -> bool {
    let lines = content_lines(text);
    let Some(rows) = lines
        .iter()
        .map(|l| dump_row(l, 16))
        .collect::<Option<Vec<_>>>()
    else {
        return false;
    };
    let first = rows
        .iter()
        .filter_map(Row::data)
        .find_map(|d| Some(d).zip(d.tokens.first()));
    first.is_some_and(|(d, t)| {
        !d.colon && t.text.len() == 4 && t.text.chars().all(|c| c.is_ascii_alphanumeric())
    })
}

fn is_word(text: &str) -> bool {
    text.len() == 4 && text.chars().all(|c| c.is_ascii_hexdigit())
}

/// Six octal digits up to `177777`: one 16-bit word as `od` prints it.
fn is_octal_word(text: &str) -> bool {
    text.len() == 6 && u16::from_str_radix(text, 8).is_ok()
}

/// `None` when the text is not an offset-prefixed dump in `radix` offsets;
/// otherwise the dump's bytes or the error in it. `*` lines may add at most
/// `repeat_budget` bytes in all.
fn parse_dump(lines: &[Line], radix: u32, repeat_budget: u64) -> Option<Result<Vec<u8>, HexError>> {
    let rows = lines
        .iter()
        .map(|l| dump_row(l, radix))
        .collect::<Option<Vec<_>>>()?;
    // Octal and decimal offsets are only `od`'s (7 digits or more); anything
    // else that merely fails as hex must not get a second, looser chance.
    if radix != 16 && rows.iter().filter_map(Row::data).any(|d| d.digits < 7) {
        return None;
    }
    let unit = unit_of(&rows);
    let plans = plan_rows(&rows, unit)?;
    Some(decode_dump(&rows, &plans, unit, repeat_budget))
}

/// Splits a line into offset and tokens, or `None` if it does not start with
/// an offset (`0x` allowed, for `tcpdump -X`) of 4 to 16 digits.
fn dump_row<'a>(line: &Line<'a>, radix: u32) -> Option<Row<'a>> {
    let text = line.text;
    let start = text.find(|c| !is_space(c))?;
    let lead = text[..start].chars().count();
    let rest = &text[start..];
    if rest.trim_end_matches(is_space) == "*" {
        return Some(Row::Repeat {
            no: line.no,
            col: lead + 1,
        });
    }
    let unprefixed = match radix {
        16 => rest
            .strip_prefix("0x")
            .or_else(|| rest.strip_prefix("0X"))
            .unwrap_or(rest),
        _ => rest,
    };
    let digits = unprefixed
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(unprefixed.len());
    if !(4..=16).contains(&digits) {
        return None;
    }
    let offset = u64::from_str_radix(&unprefixed[..digits], radix).ok()?;
    let after = &unprefixed[digits..];
    let (colon, after) = after
        .strip_prefix(':')
        .map_or((false, after), |a| (true, a));
    if !after.is_empty() && !after.starts_with(is_space) {
        return None;
    }
    let head = rest.len() - after.len(); // the offset itself is ASCII
    let tokens = tokenize(after, lead + head + 1, head);
    let padded = unprefixed.starts_with('0');
    Some(Row::Data(DataRow {
        no: line.no,
        offset,
        digits,
        padded,
        colon,
        tokens,
    }))
}

fn tokenize(s: &str, first_col: usize, first_rel: usize) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut gap = 0;
    let mut word: Option<(usize, usize)> = None; // (byte start, char index)
                                                 // A trailing space closes the last word like any other.
    let chars = s.char_indices().chain(std::iter::once((s.len(), ' ')));
    for (index, (byte, c)) in chars.enumerate() {
        if !is_space(c) {
            word = word.or(Some((byte, index)));
            continue;
        }
        if let Some((start, at)) = word.take() {
            let (col, rel) = (first_col + at, first_rel + at);
            tokens.push(Token {
                text: &s[start..byte],
                col,
                rel,
                gap,
            });
            gap = 0;
        }
        gap += if c == '\t' { 2 } else { 1 };
    }
    tokens
}

/// Where an ASCII column is fenced: `|...|` (hexdump -C) or `>...<` (od -z).
fn is_marker(t: &Token) -> bool {
    t.text.starts_with(['|', '>'])
}

/// Whether a row can hold the `count` bytes its offsets claim: its words,
/// taken whole, must add up to exactly `count`. A row fenced by an ASCII marker
/// is a dump even when short (plain hex has no `|` or `>`); decoding then
/// reports the missing bytes. Word dumps have no ASCII column, so all their
/// words count; a `padded` row may hold one byte more, as word dumps fill the
/// last word of an odd-length input with a zero byte.
fn fits(tokens: &[Token], count: u64, unit: Unit, padded: bool) -> bool {
    let mut got = 0;
    for t in tokens {
        if is_marker(t) {
            return true;
        }
        if got >= count && unit == Unit::Bytes {
            break;
        }
        got += unit.bytes_in(t);
    }
    got == count || (padded && got == count + 1)
}

/// Decides how many bytes each row holds, or `None` when the rows do not
/// form a dump.
fn plan_rows(rows: &[Row], unit: Unit) -> Option<Vec<Plan>> {
    let mut data = rows.iter().filter_map(Row::data);
    let mut prev = data.next()?.offset;
    for d in data {
        if d.offset <= prev {
            return None;
        }
        prev = d.offset;
    }
    let mut plans = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let next = rows.get(i + 1).and_then(Row::data);
        let plan = match row {
            Row::Repeat { .. } => {
                let prev = i.checked_sub(1).and_then(|p| rows[p].data());
                prev.filter(|p| !p.tokens.is_empty()).and(next)?;
                Plan::Repeat
            }
            Row::Data(d) if d.tokens.is_empty() => {
                if i == 0 || i + 1 != rows.len() {
                    return None;
                }
                Plan::End
            }
            Row::Data(d) => match next {
                Some(n) => {
                    let count = n.offset - d.offset;
                    let before_end = n.tokens.is_empty() && i + 2 == rows.len();
                    if !fits(&d.tokens, count, unit, unit != Unit::Bytes && before_end) {
                        return None;
                    }
                    Plan::Known(usize::try_from(count).ok()?)
                }
                None => Plan::Open,
            },
        };
        plans.push(plan);
    }
    looks_like_dump(rows, &plans).then_some(plans)
}

/// Guards against plain hex whose first groups happen to increase: a real
/// dump has one offset style and one row width (only its last row may be
/// shorter), and a dump of a single row must look like one on its own.
fn looks_like_dump(rows: &[Row], plans: &[Plan]) -> bool {
    let mut data = rows.iter().filter_map(Row::data);
    let Some(first) = data.next() else {
        return false;
    };
    let same_style = |d: &DataRow| {
        let width_ok = d.digits == first.digits || (d.digits > first.digits && !d.padded);
        width_ok && d.colon == first.colon
    };
    if !data.all(same_style) {
        return false;
    }
    let known: Vec<usize> = plans
        .iter()
        .filter_map(|p| {
            if let Plan::Known(n) = p {
                Some(*n)
            } else {
                None
            }
        })
        .collect();
    let last_is_known = matches!(
        plans
            .iter()
            .rev()
            .find(|p| matches!(p, Plan::Known(_) | Plan::Open)),
        Some(Plan::Known(_))
    );
    let full = if last_is_known {
        &known[..known.len() - 1]
    } else {
        &known[..]
    };
    if let Some(&width) = full.first() {
        let last_fits = known.last().is_some_and(|&n| n <= width);
        return full.iter().all(|&n| n == width) && last_fits;
    }
    if !known.is_empty() {
        return true; // one row closed by an offset-only line
    }
    let fenced = first.tokens.iter().any(is_marker);
    let spaced_bytes = first
        .tokens
        .first()
        .is_some_and(|t| t.gap >= 2 && t.text.len() == 2);
    // Plain hex has no `*` lines.
    let repeats = rows.iter().any(|r| matches!(r, Row::Repeat { .. }));
    first.colon || fenced || repeats || (first.offset == 0 && spaced_bytes)
}

/// The extent of a full row's hex area, learned from rows whose byte count the
/// offsets give; it tells where the ASCII column starts on the other rows.
struct Layout {
    width: usize,
    hex_end: usize,
    /// Columns where full rows have a wide gap inside their hex (the 8 + 8
    /// split of `hexdump -C`); a wide gap anywhere else starts the ASCII column.
    inner_gaps: HashSet<usize>,
}

fn learn_layout(rows: &[Row], plans: &[Plan]) -> Option<Layout> {
    let mut layout: Option<Layout> = None;
    for (i, (row, plan)) in rows.iter().zip(plans).enumerate() {
        let (Row::Data(d), Plan::Known(count)) = (row, *plan) else {
            continue;
        };
        // The row before the closing offset may be short: it is no full row.
        if matches!(plans.get(i + 1), Some(Plan::End)) {
            continue;
        }
        let l = layout.get_or_insert(Layout {
            width: 0,
            hex_end: 0,
            inner_gaps: HashSet::new(),
        });
        l.width = l.width.max(count);
        let mut got = 0;
        for (k, t) in d
            .tokens
            .iter()
            .enumerate()
            .take_while(|(_, t)| !is_marker(t))
        {
            if got >= count {
                break;
            }
            got += t.text.len() / 2;
            l.hex_end = l.hex_end.max(t.rel + t.text.chars().count());
            if k > 0 && t.gap >= 2 {
                l.inner_gaps.insert(t.rel);
            }
        }
    }
    layout
}

fn decode_dump(
    rows: &[Row],
    plans: &[Plan],
    unit: Unit,
    repeat_budget: u64,
) -> Result<Vec<u8>, HexError> {
    let layout = learn_layout(rows, plans);
    let mut out = Vec::new();
    let mut row_start = 0; // where the latest data row's bytes begin in `out`
    let mut budget = RepeatBudget {
        total: repeat_budget,
        left: repeat_budget,
    };
    for (i, (row, plan)) in rows.iter().zip(plans).enumerate() {
        match (row, *plan) {
            (Row::Data(d), Plan::Known(count)) => {
                row_start = out.len();
                take_known(d, count, unit, &mut out)?;
            }
            (Row::Data(d), Plan::Open) => {
                row_start = out.len();
                take_open(d, layout.as_ref(), unit, &mut out)?;
            }
            (&Row::Repeat { no, col }, Plan::Repeat) => {
                // The plan guarantees data rows on both sides.
                let (Some(prev), Some(next)) = (rows[i - 1].data(), rows[i + 1].data()) else {
                    continue;
                };
                let span = (prev.offset, next.offset);
                expand_repeat((no, col), span, row_start, &mut budget, &mut out)?;
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Takes exactly the `count` bytes the offsets give the row; whatever follows
/// is its ASCII column. A word dump's last row may end in a padding byte.
fn take_known(row: &DataRow, count: usize, unit: Unit, out: &mut Vec<u8>) -> Result<(), HexError> {
    let mut got = 0;
    let mut col = 1;
    for t in &row.tokens {
        if got == count {
            return Ok(());
        }
        col = t.col;
        if is_marker(t) {
            break;
        }
        got += decode_token(row.no, t, unit, out)?;
        col = t.col + t.text.chars().count();
        if unit != Unit::Bytes && got == count + 1 && out.last() == Some(&0) {
            out.pop();
            return Ok(());
        }
        if got > count {
            let message = format!("hex runs past the {count} bytes the offsets give this line");
            return Err(HexError::new(row.no, t.col, message));
        }
    }
    if got == count {
        return Ok(());
    }
    let message = format!("expected {count} bytes on this line (from the offsets), found {got}");
    Err(HexError::new(row.no, col, message))
}

/// Takes a row whose byte count the offsets do not give: every token of its
/// hex area. Word dumps have no ASCII column (`od -x -A x -z` fences its own).
fn take_open(
    row: &DataRow,
    layout: Option<&Layout>,
    unit: Unit,
    out: &mut Vec<u8>,
) -> Result<(), HexError> {
    let area = match unit {
        Unit::Bytes => hex_area_len(&row.tokens, layout),
        Unit::Words | Unit::OctalWords => row.tokens.iter().take_while(|t| !is_marker(t)).count(),
    };
    for t in &row.tokens[..area] {
        decode_token(row.no, t, unit, out)?;
    }
    Ok(())
}

/// Number of leading tokens that are hex rather than ASCII column: those
/// before a marker or a gap of two or more spaces. A learned layout also
/// bounds the area by full rows' width and says which wide gaps are inner.
fn hex_area_len(tokens: &[Token], layout: Option<&Layout>) -> usize {
    let marked = tokens.iter().any(is_marker);
    let mut bytes = 0;
    let mut seen_wide_gap = false;
    for (i, t) in tokens.iter().enumerate() {
        if is_marker(t) {
            return i;
        }
        match layout {
            Some(l) if t.rel >= l.hex_end || bytes >= l.width => return i,
            Some(l) if i > 0 && t.gap >= 2 && !l.inner_gaps.contains(&t.rel) => return i,
            None if !marked && i > 0 && t.gap >= 2 => {
                if seen_wide_gap || !is_mid_gap(tokens, i, bytes) {
                    return i;
                }
                seen_wide_gap = true;
            }
            _ => {}
        }
        bytes += t.text.len() / 2;
    }
    tokens.len()
}

/// Older Wireshark copies split 16 bytes 8 + 8 with a double space, and put a
/// wider gap before the ASCII column.
fn is_mid_gap(tokens: &[Token], i: usize, bytes_before: usize) -> bool {
    bytes_before == 8
        && tokens[..i].iter().all(|t| t.text.len() == 2)
        && tokens[i + 1..].iter().any(|t| t.gap > tokens[i].gap)
}

fn decode_token(line: usize, t: &Token, unit: Unit, out: &mut Vec<u8>) -> Result<usize, HexError> {
    if unit == Unit::OctalWords {
        let word = match u16::from_str_radix(t.text, 8) {
            Ok(word) if is_octal_word(t.text) => word,
            _ => {
                let message = format!(
                    "expected a 16-bit word of 6 octal digits (the dump's first row has them), \
                     found {:?}",
                    t.text
                );
                return Err(HexError::new(line, t.col, message));
            }
        };
        out.extend_from_slice(&word.to_le_bytes()); // host order: little-endian
        return Ok(2);
    }
    if unit == Unit::Words && !is_word(t.text) {
        let message = format!(
            "expected a 16-bit word of 4 hex digits (the dump's first row has them), found {:?}",
            t.text
        );
        return Err(HexError::new(line, t.col, message));
    }
    if let Some((i, c)) = t
        .text
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_hexdigit())
    {
        return Err(expected_digit(line, t.col + i, Some(c)));
    }
    if t.text.len() % 2 == 1 {
        return Err(odd_digits(line, t.col, t.text.len()));
    }
    let first = out.len();
    let mut digits = t.text.chars().filter_map(nibble);
    while let (Some(high), Some(low)) = (digits.next(), digits.next()) {
        out.push(high << 4 | low);
    }
    if unit == Unit::Words {
        out[first..].reverse(); // little-endian: the low byte comes first
    }
    Ok(t.text.len() / 2)
}

/// What `*` lines may still add to a dump.
struct RepeatBudget {
    total: u64,
    left: u64,
}

/// Expands `*`: the row before it (starting at `row_start` in `out`) repeats
/// until the next offset. The next offset must be a whole number of rows
/// further on, and the bytes it asks for must fit the budget; both are checked
/// before anything is added.
fn expand_repeat(
    (no, col): (usize, usize),
    (from, until): (u64, u64),
    row_start: usize,
    budget: &mut RepeatBudget,
    out: &mut Vec<u8>,
) -> Result<(), HexError> {
    let row_len = (out.len() - row_start) as u64;
    let first_copy = from.saturating_add(row_len);
    let missing = until.saturating_sub(first_copy);
    if row_len == 0 || missing == 0 || missing % row_len != 0 {
        let message = format!(
            "'*' repeat line: the row above (offset {from:#x}) holds {row_len} bytes, so the \
             next offset should be {first_copy:#x} plus a whole number of rows (at least one), \
             found {until:#x}"
        );
        return Err(HexError::new(no, col, message));
    }
    if missing > budget.left {
        let message = format!(
            "'*' repeat line would add {missing} bytes (the row above repeated up to offset \
             {until:#x}), but '*' lines may add at most {} bytes to this text ({REPEAT_ALLOWANCE} \
             + {REPEAT_BYTES_PER_TEXT_BYTE} per byte of text), {} of them left",
            budget.total, budget.left,
        );
        return Err(HexError::new(no, col, message));
    }
    budget.left -= missing;
    let row = out[row_start..].to_vec();
    let missing = missing as usize; // within the budget, which the text's size bounds
    out.reserve(missing);
    out.extend(row.iter().cycle().take(missing));
    Ok(())
}

/// A `*` line after which the offsets do not increase makes the text no dump
/// at all; name that line rather than complain about the `*` as plain hex.
fn check_repeat_offsets(lines: &[Line]) -> Result<(), HexError> {
    let Some(rows) = lines
        .iter()
        .map(|l| dump_row(l, 16))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(());
    };
    for (i, row) in rows.iter().enumerate() {
        let Row::Repeat { no, .. } = row else {
            continue;
        };
        let prev = i.checked_sub(1).and_then(|p| rows[p].data());
        let next = rows.get(i + 1).and_then(Row::data);
        let (Some(prev), Some(next)) = (prev, next) else {
            continue;
        };
        if next.offset <= prev.offset {
            let text = lines[i + 1].text;
            let lead = text.find(|c| !is_space(c)).unwrap_or(0);
            let col = text[..lead].chars().count() + 1;
            let message = format!(
                "the offset after the '*' repeat line on line {no} goes back (from {:#x} to \
                 {:#x}), so there is nothing to repeat",
                prev.offset, next.offset
            );
            return Err(HexError::new(next.no, col, message));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 78-byte Kafka `ApiVersions` v3 request every dump below shows. Its
    /// strings make the ASCII column read like hex ("deadbeef", "cafe").
    fn msg() -> Vec<u8> {
        let mut m = vec![0, 0, 0, 0x4a, 0, 0x12, 0, 3, 0, 0, 0, 1, 0, 0x0a];
        m.extend_from_slice(b"kwire-test\x00\x0fkwire-deadbeef\x25");
        m.extend_from_slice(b"1.0.0-cafebabe-deadbeefcafe-beefcafe\x00");
        assert_eq!(m.len(), 78);
        m
    }

    fn parse(text: &str) -> Vec<u8> {
        parse_hex_text(text).unwrap_or_else(|e| panic!("{e}\n--- input ---\n{text}"))
    }

    fn err(text: &str) -> HexError {
        parse_hex_text(text).expect_err("expected an error")
    }

    const XXD: &str = "\
00000000: 0000 004a 0012 0003 0000 0001 000a 6b77  ...J..........kw
00000010: 6972 652d 7465 7374 000f 6b77 6972 652d  ire-test..kwire-
00000020: 6465 6164 6265 6566 2531 2e30 2e30 2d63  deadbeef%1.0.0-c
00000030: 6166 6562 6162 652d 6465 6164 6265 6566  afebabe-deadbeef
00000040: 6361 6665 2d62 6565 6663 6166 6500       cafe-beefcafe.
";

    const HEXDUMP_C: &str = "\
00000000  00 00 00 4a 00 12 00 03  00 00 00 01 00 0a 6b 77  |...J..........kw|
00000010  69 72 65 2d 74 65 73 74  00 0f 6b 77 69 72 65 2d  |ire-test..kwire-|
00000020  64 65 61 64 62 65 65 66  25 31 2e 30 2e 30 2d 63  |deadbeef%1.0.0-c|
00000030  61 66 65 62 61 62 65 2d  64 65 61 64 62 65 65 66  |afebabe-deadbeef|
00000040  63 61 66 65 2d 62 65 65  66 63 61 66 65 00        |cafe-beefcafe.|
0000004e
";

    const PLAIN: &str = "0000004a0012000300000001000a6b776972652d74657374000f6b776972652d\
646561646265656625312e302e302d63616665626162652d6465616462656566636166652d626565666361666500";

    #[test]
    fn plain_continuous_any_case() {
        assert_eq!(parse(PLAIN), msg());
        assert_eq!(parse(&PLAIN.to_uppercase()), msg());
        assert_eq!(parse("DeAdBeEf"), [0xde, 0xad, 0xbe, 0xef]);
    }

    #[test]
    fn plain_with_whitespace_and_newlines_between_pairs() {
        // `xxd -p` wraps at 60 digits; people also add spaces and tabs.
        let xxd_p = "0000004a0012000300000001000a6b776972652d74657374000f6b776972\n\
                     652d646561646265656625312e302e302d63616665626162652d64656164\r\n\
                     62656566636166652d626565666361666500\n";
        assert_eq!(parse(xxd_p), msg());
        assert_eq!(parse("  00 1a\t2b\n\n  3c  "), [0x00, 0x1a, 0x2b, 0x3c]);
        assert_eq!(
            parse("0000 004a 0012\n0003 0000"),
            [0, 0, 0, 0x4a, 0, 0x12, 0, 3, 0, 0]
        );
    }

    #[test]
    fn plain_separators_and_prefixes() {
        let want = [0x00, 0x1a, 0x2b, 0xff];
        for text in [
            "0x00, 0x1a, 0x2b, 0xff",
            "0X00 0X1A 0x2B 0xFF",
            "00:1a:2b:ff",
            "00;1a;2b;ff",
            "00-1a-2b-ff",
            "\\x00\\x1a\\x2b\\xff",
            "\"\\x00\\x1a\" \"\\x2b\\xff\"",
            "0x001a2bff",
            "[0x00, 0x1a,\n 0x2b, 0xff]",
        ] {
            assert_eq!(parse(text), want, "{text}");
        }
    }

    #[test]
    fn plain_array_literals() {
        let c = "static const unsigned char pkt1[4] = {\n0x00, 0x1a, /* .. */\n0x2b, 0xff };\n";
        let go = "[]byte{0x00, 0x1a, 0x2b, 0xff}";
        let rust = "let m: [u8; 4] = [0x00, 0x1a, 0x2b, 0xff];";
        for text in [c, go, rust] {
            assert_eq!(parse(text), [0x00, 0x1a, 0x2b, 0xff], "{text}");
        }
    }

    #[test]
    fn xxd_default() {
        assert_eq!(parse(XXD), msg());
    }

    #[test]
    fn xxd_other_groupings_and_widths() {
        let g1 = "\
00000000: 00 00 00 4a 00 12 00 03 00 00 00 01 00 0a 6b 77  ...J..........kw
00000010: 69 72 65 2d 74 65 73 74 00 0f 6b 77 69 72 65 2d  ire-test..kwire-
00000020: 64 65 61 64 62 65 65 66 25 31 2e 30 2e 30 2d 63  deadbeef%1.0.0-c
00000030: 61 66 65 62 61 62 65 2d 64 65 61 64 62 65 65 66  afebabe-deadbeef
00000040: 63 61 66 65 2d 62 65 65 66 63 61 66 65 00        cafe-beefcafe.";
        let c32 = "\
00000000: 0000 004a 0012 0003 0000 0001 000a 6b77 6972 652d 7465 7374 000f 6b77 6972 652d  ...J..........kwire-test..kwire-
00000020: 6465 6164 6265 6566 2531 2e30 2e30 2d63 6166 6562 6162 652d 6465 6164 6265 6566  deadbeef%1.0.0-cafebabe-deadbeef
00000040: 6361 6665 2d62 6565 6663 6166 6500                                               cafe-beefcafe.";
        assert_eq!(parse(g1), msg());
        assert_eq!(parse(c32), msg());
    }

    #[test]
    fn last_row_stops_at_ascii_even_without_padding() {
        let xxd = "00000000: 6465 6164 6265 6566 6465 6164 6265 6566  deadbeefdeadbeef\n\
                   00000010: 6465 6164  dead";
        assert_eq!(parse(xxd), b"deadbeefdeadbeefdead");
        let hexdump =
            "00000000  64 65 61 64 64 65 61 64  64 65 61 64 64 65 61 64  |deaddeaddeaddead|\n\
                       00000010  64 65 61 64 64 65 61 64  64 65  dead deaddead";
        assert_eq!(parse(hexdump), b"deaddeaddeaddeaddeaddeadde");
    }

    #[test]
    fn xxd_single_line_with_hex_looking_ascii() {
        let line = "00000000: 6465 6164 6265 6566  deadbeef";
        assert_eq!(parse(line), b"deadbeef");
        let partial = "00000000: 6361 6665 00                                cafe.";
        assert_eq!(parse(partial), b"cafe\x00");
    }

    #[test]
    fn hexdump_canonical() {
        assert_eq!(parse(HEXDUMP_C), msg());
        // Without the closing offset line the last row is read up to `|`.
        let cut = HEXDUMP_C.trim_end().strip_suffix("0000004e").unwrap();
        assert_eq!(parse(cut), msg());
    }

    #[test]
    fn hexdump_repeat_lines_are_expanded() {
        let text = "\
00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|
*
00000040  6b 77 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |kw..............|
00000050  00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 00  |................|
*
00000070  00 00 01                                          |...|
00000073";
        let mut want = vec![0u8; 0x73];
        want[0x40..0x42].copy_from_slice(b"kw");
        want[0x57] = 1;
        want[0x67] = 1;
        want[0x72] = 1;
        assert_eq!(parse(text), want);
    }

    #[test]
    fn od_hex_offsets_with_z_column_and_repeat() {
        let od = "\
000000 00 00 00 4a 00 12 00 03 00 00 00 01 00 0a 6b 77  >...J..........kw<
000010 69 72 65 2d 74 65 73 74 00 0f 6b 77 69 72 65 2d  >ire-test..kwire-<
000020 64 65 61 64 62 65 65 66 25 31 2e 30 2e 30 2d 63  >deadbeef%1.0.0-c<
000030 61 66 65 62 61 62 65 2d 64 65 61 64 62 65 65 66  >afebabe-deadbeef<
000040 63 61 66 65 2d 62 65 65 66 63 61 66 65 00        >cafe-beefcafe.<
00004e";
        assert_eq!(parse(od), msg());
        let zeros = "000000 00 00 00 00 00 00 00 00  >........<\n*\n000018 ff\n000019";
        let mut want = vec![0u8; 24];
        want.push(0xff);
        assert_eq!(parse(zeros), want);
    }

    #[test]
    fn od_octal_offsets() {
        let od = "\
0000000 00 00 00 4a 00 12 00 03 00 00 00 01 00 0a 6b 77
0000020 69 72 65 2d 74 65 73 74 00 0f 6b 77 69 72 65 2d
0000040 64 65 61 64 62 65 65 66 25 31 2e 30 2e 30 2d 63
0000060 61 66 65 62 61 62 65 2d 64 65 61 64 62 65 65 66
0000100 63 61 66 65 2d 62 65 65 66 63 61 66 65 00
0000116";
        assert_eq!(parse(od), msg());
    }

    #[test]
    fn od_octal_words_with_hex_octal_or_decimal_offsets() {
        // `od`, `od -A x` and `od -A d` of the same 78 bytes: words of six
        // octal digits, little-endian.
        let od = "\
0000000 000000 045000 011000 001400 000000 000400 005000 073553
0000020 071151 026545 062564 072163 007400 073553 071151 026545
0000040 062544 062141 062542 063145 030445 030056 030056 061455
0000060 063141 061145 061141 026545 062544 062141 062542 063145
0000100 060543 062546 061055 062545 061546 063141 000145
0000116
";
        let hex_offsets = "\
000000 000000 045000 011000 001400 000000 000400 005000 073553
000010 071151 026545 062564 072163 007400 073553 071151 026545
000020 062544 062141 062542 063145 030445 030056 030056 061455
000030 063141 061145 061141 026545 062544 062141 062542 063145
000040 060543 062546 061055 062545 061546 063141 000145
00004e
";
        let decimal = od
            .replace("0000020 ", "0000016 ")
            .replace("0000040 ", "0000032 ")
            .replace("0000060 ", "0000048 ")
            .replace("0000100 ", "0000064 ")
            .replace("0000116", "0000078");
        for text in [od, hex_offsets, &decimal] {
            assert_eq!(parse(text), msg(), "{text}");
        }
        let not_octal = "000000 000000 045000 011000 001400 000000 000400 005000 073558\n000010";
        assert!(err(not_octal).message.contains("6 octal digits"));
    }

    #[test]
    fn od_decimal_offsets() {
        let od = "\
0000000 00 00 00 4a 00 12 00 03 00 00 00 01 00 0a 6b 77  >...J..........kw<
0000016 69 72 65 2d 74 65 73 74 00 0f 6b 77 69 72 65 2d  >ire-test..kwire-<
0000032 64 65 61 64 62 65 65 66 25 31 2e 30 2e 30 2d 63  >deadbeef%1.0.0-c<
0000048 61 66 65 62 61 62 65 2d 64 65 61 64 62 65 65 66  >afebabe-deadbeef<
0000064 63 61 66 65 2d 62 65 65 66 63 61 66 65 00        >cafe-beefcafe.<
0000078";
        assert_eq!(parse(od), msg());
    }

    #[test]
    fn cr_crlf_and_lf_all_end_lines() {
        for ending in ["\r", "\r\n", "\n"] {
            let xxd = XXD.replace('\n', ending);
            assert_eq!(parse(&xxd), msg(), "{ending:?}");
            let hexdump = HEXDUMP_C.replace('\n', ending);
            assert_eq!(parse(&hexdump), msg(), "{ending:?}");
        }
        // Line numbers in errors count CR-ended lines too.
        assert_eq!(err("00 11\r22 3").line, 2);
        assert_eq!(err("00 11\r\n22 3").line, 2);
    }

    #[test]
    fn kwire_grids_read_back_without_title_ruler_or_legend() {
        // Two frames' grids as `kwire decode --format grid` prints them, each
        // with offsets from 0.
        let grid = "\
# frame 1 at input offset 0x0000
byte layout (20 bytes, 16 bytes per row)
       0  1  2  3  4  5  6  7   8  9  A  B  C  D  E  F 
0000  00 00 00 10 00 12 00 03  00 00 00 01 00 04 6b 77  ..............kw
0010  69 72 65 2d                                       ire-
legend:  frame   rpc header   request body   RecordBatch   Record   response body   tagged_fields 
  0x0000-0x0003 frame (4B)
  0x0004-0x0013 rpc header (16B)

# frame 2 at input offset 0x0014
byte layout (4 bytes, 16 bytes per row)
       0  1  2  3  4  5  6  7   8  9  A  B  C  D  E  F 
0000  00 00 00 00                                       ....
legend:  frame   rpc header   request body   RecordBatch   Record   response body   tagged_fields 
  0x0000-0x0003 frame (4B)
";
        let mut want = vec![0, 0, 0, 0x10, 0, 0x12, 0, 3, 0, 0, 0, 1, 0, 4];
        want.extend_from_slice(b"kwire-");
        want.extend_from_slice(&[0, 0, 0, 0]);
        assert_eq!(parse(grid), want);
        assert_eq!(parse(&grid.replace('\n', "\r")), want);
    }

    #[test]
    fn wireshark_copy_as_hex_dump() {
        let with_ascii = "\
0000   00 00 00 4a 00 12 00 03 00 00 00 01 00 0a 6b 77   ...J..........kw
0010   69 72 65 2d 74 65 73 74 00 0f 6b 77 69 72 65 2d   ire-test..kwire-
0020   64 65 61 64 62 65 65 66 25 31 2e 30 2e 30 2d 63   deadbeef%1.0.0-c
0030   61 66 65 62 61 62 65 2d 64 65 61 64 62 65 65 66   afebabe-deadbeef
0040   63 61 66 65 2d 62 65 65 66 63 61 66 65 00         cafe-beefcafe.";
        let hex_only: String = with_ascii
            .lines()
            .map(|l| format!("{}\n", &l[..54].trim_end()))
            .collect();
        assert_eq!(parse(with_ascii), msg());
        assert_eq!(parse(&hex_only), msg());
        let single = "0000   de ad be ef 00 12   ......";
        assert_eq!(parse(single), [0xde, 0xad, 0xbe, 0xef, 0x00, 0x12]);
        // Older "Hex + ASCII" copies split 8 + 8 with a double space.
        let old = "0000  00 00 00 4a 00 12 00 03  00 00 00 01 00 0a 6b 77   ...J.... ......kw";
        assert_eq!(parse(old), msg()[..16]);
    }

    #[test]
    fn tcpdump_x_with_indentation() {
        let tcpdump: String = XXD
            .lines()
            .map(|l| format!("\t0x{}:  {}\n", &l[4..8], &l[10..]))
            .collect();
        assert!(tcpdump.starts_with("\t0x0000:  0000 004a"));
        assert_eq!(parse(&tcpdump), msg());
        // A paste that indents rows differently still lines up.
        let ragged: String = HEXDUMP_C
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{}{l}\n", " ".repeat(i % 3)))
            .collect();
        assert_eq!(parse(&ragged), msg());
    }

    #[test]
    fn comments_are_ignored() {
        let text = "\
# ApiVersions request header
// client: kwire
0000004a 0012 0003   # size, api key 18, version 3
00000001             // correlation id
000a 6b77 6972 652d 7465 7374  /* client id */
00 # tagged fields
";
        assert_eq!(parse(text), msg()[..25]);
        let commented_dump = format!("# xxd msg.bin\n{XXD}\n// end of dump\n");
        assert_eq!(parse(&commented_dump), msg());
    }

    #[test]
    fn offset_like_plain_hex_is_not_taken_for_a_dump() {
        // First groups increase, but the rows cannot hold what the offsets claim.
        let text = "0000 004a 0012 0003\n0012 0003 0000 0001\n0100 0a6b";
        assert_eq!(parse(text).len(), 20);
        // A lone offset-looking group is data.
        assert_eq!(parse("0000004e"), [0, 0, 0, 0x4e]);
        assert_eq!(parse("0000004a 00120003"), [0, 0, 0, 0x4a, 0, 0x12, 0, 3]);
        assert_eq!(parse("0000  004a"), [0, 0, 0, 0x4a]);
    }

    #[test]
    fn errors_point_at_line_and_column() {
        let e = err("00 1a\n2b 3g 4c");
        assert_eq!((e.line, e.column), (2, 5));
        assert_eq!(e.message, "expected a hex digit, found 'g'");
        assert_eq!(
            e.to_string(),
            "line 2, column 5: expected a hex digit, found 'g'"
        );

        let e = err("00 1a 2b3");
        assert_eq!((e.line, e.column), (1, 7));
        assert!(
            e.message.starts_with("odd number of hex digits"),
            "{}",
            e.message
        );

        let e = err("0x00, 0x");
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, 9, "expected a hex digit, found the end of the line")
        );

        let e = err("é 00");
        assert_eq!((e.line, e.column), (1, 1));
        let e = err("ééé zz");
        assert_eq!((e.line, e.column), (1, 1));
        let e = err("00 \u{7}");
        assert_eq!(e.message, "expected a hex digit, found '\\u{7}'");
    }

    #[test]
    fn errors_inside_dumps() {
        let typo = XXD.replace("2531 2e30", "2531 2g30");
        let e = err(&typo);
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (3, 37, "expected a hex digit, found 'g'")
        );

        let short = HEXDUMP_C.replace("00 0f 6b 77", "00 0f 6b");
        let e = err(&short);
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("expected 16 bytes"), "{e}");

        let words_then_bytes =
            "0000000 0000 4a00 1200 0300\n0000008 00 00 00 01 00 0a 6b 77\n0000010";
        let e = err(words_then_bytes);
        assert_eq!((e.line, e.column), (2, 9), "{e}");
        assert!(e.message.contains("16-bit word"), "{e}");

        let two_dumps = format!("{XXD}{XXD}");
        let e = err(&two_dumps);
        assert_eq!((e.line, e.column), (1, 52), "{e}");
        assert!(e.message.contains("looks like a hex dump"), "{e}");

        let huge = "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\nffffffff";
        assert!(err(huge).message.contains("repeat line"), "{}", err(huge));
    }

    /// `hexdump` without -C (and `hexdump -x`, `od -x`) prints little-endian
    /// 16-bit words; an odd length ends in a zero padding byte that the
    /// closing offset leaves out.
    #[test]
    fn word_dumps_are_little_endian() {
        let hexdump = "\
0000000 0000 4a00 1200 0300 0000 0100 0a00 776b
0000010 7269 2d65 6574 7473 0f00 776b 7269 2d65
0000020 6564 6461 6562 6665 3125 302e 302e 632d
0000030 6661 6265 6261 2d65 6564 6461 6562 6665
0000040 6163 6566 622d 6565 6366 6661 0065
000004e
";
        assert_eq!(parse(hexdump), msg());
        // `hexdump -x` spaces the same words wider.
        assert_eq!(parse(&hexdump.replace(' ', "    ")), msg());
        // `od -x`: octal offsets, and five bytes end in a padded word.
        assert_eq!(parse("0000000 0201 0403 0005\n0000005\n"), [1, 2, 3, 4, 5]);
        // After `*`, a full row's offsets tell octal (`od -x`) from hex.
        let zeros = "0000000 0000 0000 0000 0000 0000 0000 0000 0000\n*\n";
        let od = format!(
            "{zeros}0000040 776b 7269 2d65 6574 7473 0f00 776b 7269\n0000060 0065 124a\n0000064\n"
        );
        let mut want = vec![0u8; 32];
        want.extend(b"kwire-test\x00\x0fkwire\x00\x4a\x12");
        assert_eq!(parse(&od), want);
        // `hexdump`: as octal, the `*` would repeat nothing.
        let hexdump_zeros = format!("{zeros}0000020 4a00 0012\n0000023\n");
        assert_eq!(
            parse(&hexdump_zeros),
            want[..32]
                .iter()
                .chain(&[0, 0x4a, 0x12])
                .copied()
                .collect::<Vec<_>>()
        );
        // Nothing tells: 68 bytes from `hexdump` or 36 from `od -x`.
        let either = format!("{zeros}0000040 0000 0000\n0000044\n");
        let e = err(&either);
        assert_eq!(e.line, 2, "{e}");
        assert!(
            e.message.contains(
                "fit both as hexadecimal (`hexdump`: 68 bytes) and as octal (`od -x`: 36 bytes)"
            ),
            "{e}"
        );
        // `od -t x1` prints seven-digit octal offsets; no tool prints them in hex with bytes.
        let od_bytes = "0000000 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n*\n0000040 00 4a 12\n0000043\n";
        assert_eq!(
            parse(od_bytes),
            want[..32]
                .iter()
                .chain(&[0, 0x4a, 0x12])
                .copied()
                .collect::<Vec<_>>()
        );
        assert!(looks_like_word_dump(hexdump));
        assert!(
            looks_like_word_dump("0000000 0g00 4a00\n0000004"),
            "damaged words keep the shape"
        );
        assert!(
            !looks_like_word_dump(XXD),
            "xxd groups bytes in order, after a colon"
        );
        assert!(!looks_like_word_dump(HEXDUMP_C));
        assert!(!looks_like_word_dump("AAAABAASAAM="));
    }

    /// `*` lines may add at most 1 MiB + 16 bytes per byte of text, checked
    /// before expanding, and the offset after one must be whole rows further on.
    #[test]
    fn repeat_lines_are_bounded_and_checked() {
        let zeros =
            "00000000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n";
        // Up to the allowance: expands.
        let mib = format!("{zeros}00100000\n");
        assert_eq!(parse(&mib).len(), 1 << 20);
        assert_eq!(repeat_budget(&mib), (1 << 20) + 16 * mib.len() as u64);
        // 90 bytes of text asking for 64 MiB: an error on the `*` line.
        let bomb = format!("{zeros}03fffff0\n");
        assert_eq!(bomb.len(), 90);
        let e = err(&bomb);
        assert_eq!((e.line, e.column), (2, 1), "{e}");
        assert!(e.message.contains("would add 67108832 bytes"), "{e}");
        assert!(e.message.contains("at most 1050016 bytes"), "{e}");
        // The budget is for all `*` lines together.
        let two = format!("{zeros}000c0000  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n00180000\n");
        let e = err(&two);
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.contains("of them left"), "{e}");
        // The next offset must be whole rows past the row above.
        let ragged = format!("{zeros}00000025\n");
        let e = err(&ragged);
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("whole number of rows"), "{e}");
        // Offsets that go back after `*`: named at the offending line.
        let back = "00000010  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n*\n00000008  00\n";
        let e = err(back);
        assert_eq!((e.line, e.column), (3, 1), "{e}");
        assert!(e.message.contains("goes back"), "{e}");
    }

    #[test]
    fn empty_input_is_an_error() {
        for text in [
            "",
            "   \n\t\n",
            "# only a comment\n// and another",
            "\u{feff}",
        ] {
            let e = err(text);
            assert_eq!(
                (e.line, e.column, e.message.as_str()),
                (1, 1, "no hex bytes found")
            );
        }
    }

    #[test]
    fn never_panics_on_hostile_input() {
        let long_hex = "ab".repeat(200_000);
        assert_eq!(parse(&long_hex).len(), 200_000);
        let long_line = format!("00000000: {}  x", "0000 ".repeat(50_000));
        let _ = parse_hex_text(&long_line);
        let weird = [
            "\u{0}\u{1}\u{7f}",
            "🦀🦀",
            "0x🦀",
            "\\x",
            "\\",
            "0",
            "*",
            "*\n*",
            "00000000  *",
            "00000000: 00\n*",
            "00000010: 00\n00000000: 00",
            "\u{202e}00\u{2028}11",
            "00000000\n*\n00000010",
            "0000 | 00 |",
            "0000   ",
            "０１",
            "00\u{200b}1a",
            "ffffffffffffffff 00\n*\nffffffffffffffff",
        ];
        for text in weird {
            let _ = parse_hex_text(text);
        }
        // Pseudo-random mixes of the characters the parser cares about.
        let alphabet: Vec<char> = "0123456789abcdefxX:|>*#/\\ \t\n-,;{}[]é🦀\u{0}"
            .chars()
            .collect();
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..2_000 {
            let text: String = (0..64)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    alphabet[(seed % alphabet.len() as u64) as usize]
                })
                .collect();
            let _ = parse_hex_text(&text);
        }
    }
}
