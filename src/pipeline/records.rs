//! What `kwire records` runs: on a log segment, snapshot or raw batches,
//! each batch walked, drawn in the view asked for, and dropped, what is
//! wrong with it said beside the output ([`write_batches`]); on a capture,
//! its records a line each as they are read ([`write_capture_records`],
//! over [`crate::analysis::records_table::read_capture_records`], which
//! hands each record to a function of the caller's).

use super::frames::Style;
use crate::analysis::records_table::{read_capture_records, Options, Summary};
use crate::decode::fields::Context;
use crate::decode::records::segment::{for_each_batch, SegmentEnd};
use crate::decode::WarningKind;
use crate::render::records_table::{write_json_item, write_table_header, write_table_item, Widths};
use crate::render::text_tree::{render_tree, TreeOptions};
use crate::schema::Catalogue;
use std::io::{Read, Write};

/// How a capture's records are listed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordsLayout {
    /// A line each under a header line, in columns of these widths.
    Table(Widths),
    /// A JSON object each, a line each.
    Json,
}

/// A capture's records (every Produce request's and Fetch or ShareFetch
/// response's, as `opts` selects them) written to `out` as `layout` says,
/// damaged record data as lines of its own; `flush_each` flushes after every
/// line (a terminal watching). Returns what the reading found, or why the
/// capture could not be read; an output error stops the reading and is
/// returned as the outer error.
pub fn write_capture_records(
    cat: &Catalogue,
    input: impl Read,
    opts: &Options,
    (layout, flush_each): (RecordsLayout, bool),
    out: &mut impl Write,
) -> std::io::Result<Result<Summary, String>> {
    let mut header = matches!(layout, RecordsLayout::Table(_));
    let mut write_error = None;
    let read = read_capture_records(cat, input, opts, |item| {
        let written = (|| {
            match layout {
                RecordsLayout::Table(widths) => {
                    if std::mem::take(&mut header) {
                        write_table_header(out, widths)?;
                    }
                    write_table_item(out, cat, item, widths)?
                }
                RecordsLayout::Json => write_json_item(out, cat, item)?,
            }
            if flush_each {
                out.flush()?;
            }
            Ok(())
        })();
        match written {
            Ok(()) => true,
            Err(e) => {
                write_error = Some(e);
                false
            }
        }
    });
    let flushed = out.flush();
    write_error.map_or(flushed, Err)?;
    Ok(read)
}

/// How each batch is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchView {
    /// Its object tree.
    Tree(Style),
    /// Its tree as JSON, one batch a line.
    TreeJson,
    /// kafka-dump-log's lines: one per batch and per record.
    Dump,
}

/// What writing the batches found besides what it wrote.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Written {
    /// Some batch is damaged or cut short, or its records are.
    pub malformed: bool,
    /// The reading stopped at a batch declaring more than
    /// [`crate::decode::records::segment::MAX_BATCH`] bytes: where, what
    /// it declared, and whether the input starts like hex text (the likely
    /// mistake behind a nonsense first batch).
    pub too_large: Option<(usize, i32, bool)>,
}

/// Every batch of `input` written to `out` as `view` says; warnings and
/// damage said, a line each, to `say`. An output error stops it.
pub fn write_batches(
    cat: &Catalogue,
    ctx: &Context,
    input: impl Read,
    view: BatchView,
    (out, say): (&mut impl Write, &mut dyn FnMut(&str)),
) -> std::io::Result<Written> {
    let mut written = Written::default();
    let end = for_each_batch(cat, ctx, input, |batch| {
        for node in &batch.nodes {
            if node.error().is_some() {
                written.malformed = true;
            }
            if node.kind == crate::decode::Kind::TruncatedBatch {
                // The input is damaged: say where, as for other damage.
                say(&format!("kwire: record data at position {}: the input ends inside a batch ({} bytes of it present)", node.offset, node.len));
                written.malformed = true;
            }
            match view {
                BatchView::Tree(style) => {
                    let opts = TreeOptions {
                        color: style.color,
                        width: style.columns,
                        ..TreeOptions::default()
                    };
                    write!(out, "{}", render_tree(node, opts))?
                }
                BatchView::TreeJson => {
                    crate::render::tree_json::write_tree_json(out, node)?;
                    writeln!(out)?
                }
                BatchView::Dump => crate::render::dump_log::write_batch(out, node, batch.position)?,
            }
        }
        for w in &batch.warnings {
            // Damage is said below, from the batch's damage, where it is in the input.
            if matches!(w.kind, WarningKind::RecordDamage(_)) {
                continue;
            }
            let severity = crate::analysis::finding::Rule::severity_of(w).as_str();
            say(&match w.offset {
                // A warning's offset is the batch's own: the input's is the batch's position on.
                Some(at) => {
                    let at = batch.position + at;
                    format!(
                        "kwire: {severity}: record data at offset 0x{at:04x} ({at}): {}",
                        crate::text::escape::sanitize(w.detail())
                    )
                }
                None => format!(
                    "kwire: {severity}: {w} (batch at position {})",
                    batch.position
                ),
            });
        }
        for e in &batch.damage {
            say(&format!(
                "kwire: record data {}",
                crate::text::escape::sanitize(&e.to_string())
            ));
            written.malformed = true;
        }
        Ok(true)
    })?;
    if let SegmentEnd::TooLarge {
        position,
        declared,
        head,
    } = end
    {
        written.too_large = Some((
            position,
            declared,
            position == 0 && looks_like_hex_text(&head),
        ));
    }
    Ok(written)
}

/// Whether bytes read as binary look like hex text instead (digits, spaces,
/// offsets, separators).
fn looks_like_hex_text(head: &[u8]) -> bool {
    head.iter()
        .all(|b| b.is_ascii_hexdigit() || b" \t\r\n:,x".contains(b))
        && head.iter().filter(|b| b.is_ascii_hexdigit()).count() >= 8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(input: &[u8]) -> (Written, Vec<u8>, Vec<String>) {
        let (mut out, mut said) = (Vec::new(), Vec::new());
        let mut say = |line: &str| said.push(line.to_string());
        let w = write_batches(
            Catalogue::builtin(),
            &Context::default(),
            input,
            BatchView::Dump,
            (&mut out, &mut say),
        )
        .unwrap();
        (w, out, said)
    }

    #[test]
    fn hex_text_read_as_binary_is_named_as_the_likely_mistake() {
        let (w, out, _) = written(b"00 00 00 00 00 00 00 00 00 00 02 79 00 00");
        assert_eq!(w.too_large.map(|(at, _, hex)| (at, hex)), Some((0, true)));
        assert!(out.is_empty());
        // Bytes that are no hex text are not taken for it.
        let (w, _, _) = written(&[0u8, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 1, 2]);
        assert_eq!(w.too_large.map(|(at, _, hex)| (at, hex)), Some((0, false)));
    }

    #[test]
    fn an_empty_input_writes_and_says_nothing() {
        let (w, out, said) = written(b"");
        assert_eq!(w, Written::default());
        assert!(out.is_empty() && said.is_empty());
    }
}
