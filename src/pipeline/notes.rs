//! Notes among a capture's frames: bytes skipped, and what TLS did.

use super::decoded::Drawing;
use super::frames::Format;
use crate::capture::tls::{TlsEvent, TlsNote};
use crate::capture::{Captured, Skipped};
use crate::decode::Direction;
use crate::render::listing::{ConnPlace, LineWriter};
use std::io::Write;

/// Skip notes seen (in the selected connections).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkipTally {
    pub count: usize,
    pub bytes: u64,
}

impl SkipTally {
    /// The line that says so, so that skipped bytes never pass unremarked;
    /// `shown` ends it (where the notes are).
    pub fn describe(&self, shown: &str) -> String {
        let places = if self.count == 1 { "place" } else { "places" };
        format!("{} bytes in {} {places} are in no frame (gaps, partial frames or bytes passed over){shown}", self.bytes, self.count)
    }
}

/// A note among the frames (a skip, a TLS note, or a connection's open or
/// close as a row of the listing), flushed to a terminal; a frame writes nothing.
pub(super) fn write_note(
    out: &mut impl Write,
    note: &Captured,
    list: Option<&mut LineWriter<'_>>,
    drawing: Drawing,
) -> std::io::Result<()> {
    match (note, list) {
        (Captured::Skipped(s), list) => write_skipped(out, s, list, drawing),
        (Captured::Tls(n), list) => write_tls(out, n, list, drawing),
        (Captured::Conn(e), Some(lines)) => {
            let mut line = Vec::with_capacity(160);
            lines.push_conn_event(&mut line, e);
            line.push(b'\n');
            drawing.style.fit_rows(&mut line);
            out.write_all(&line)?;
            out.flush()
        }
        (Captured::Conn(_) | Captured::Frame(_), _) => Ok(()),
    }
}

/// A skip note: a listing row (`list`), a `# skipped` line before trees, or
/// a JSON record (`"kind":"skipped"`) among the frames' objects.
fn write_skipped(
    out: &mut impl Write,
    s: &Skipped,
    list: Option<&mut LineWriter<'_>>,
    Drawing { format, style, .. }: Drawing,
) -> std::io::Result<()> {
    let request = s.direction == Direction::Request;
    let arrow = s.direction.arrow();
    let (client, server) = if request {
        (s.from, s.to)
    } else {
        (s.to, s.from)
    };
    let what = s.reason.describe();
    if let Some(lines) = list {
        let place = ConnPlace {
            conn: s.conn,
            client,
            broker: server,
            arrow,
        };
        let what = format!("skipped {}B at stream offset {}: {what}", s.bytes, s.offset);
        let mut line = Vec::with_capacity(200);
        lines.push_conn_row(&mut line, "-", s.timestamp, place, &what);
        write_row(out, line, style)?;
    } else if matches!(format, Format::Json | Format::TreeJson) {
        let mut record = serde_json::json!({
            "kind": "skipped",
            "conn": s.conn,
            "direction": if request { "request" } else { "response" },
            "from": s.from.to_string(),
            "to": s.to.to_string(),
            "timestamp": s.timestamp,
            "offset": s.offset,
            "bytes": s.bytes,
            "reason": s.reason.code(),
            "note": what,
        });
        if let Some(d) = s.reason.declared() {
            record["declared"] = d.into();
        }
        serde_json::to_writer(&mut *out, &record)?;
        out.write_all(b"\n")?;
    } else {
        let line = format!("# skipped conn {} {client} {arrow} {server} at {:.6}: {} bytes at stream offset {}: {what}", s.conn, s.timestamp, s.bytes, s.offset);
        writeln!(out, "{}", style.fit(line))?;
    }
    out.flush()
}

/// A TLS note: a listing row (`tls` for the frame number), a `# tls` line
/// before trees, or a JSON object of its own kind (`"kind":"tls"`,
/// `"kind":"tls_stopped"`) among the frames' objects.
fn write_tls(
    out: &mut impl Write,
    n: &TlsNote,
    list: Option<&mut LineWriter<'_>>,
    Drawing { format, style, .. }: Drawing,
) -> std::io::Result<()> {
    let what = crate::render::tls::describe(n);
    let arrow = match &n.event {
        TlsEvent::Stopped { direction, .. } | TlsEvent::Skipped { direction, .. } => {
            direction.arrow()
        }
        _ => "→",
    };
    if let Some(lines) = list {
        let place = ConnPlace {
            conn: n.conn,
            client: n.client,
            broker: n.server,
            arrow,
        };
        let mut line = Vec::with_capacity(200);
        lines.push_conn_row(&mut line, "tls", n.timestamp, place, &what);
        write_row(out, line, style)?;
    } else if matches!(format, Format::Json | Format::TreeJson) {
        out.write_all(crate::render::json::to_text(&crate::render::tls::json(n)).as_bytes())?;
        out.write_all(b"\n")?;
    } else {
        let line = format!(
            "# tls conn {} {} {arrow} {} at {:.6}: {what}",
            n.conn, n.client, n.server, n.timestamp
        );
        writeln!(out, "{}", style.fit(line))?;
    }
    out.flush()
}

/// A row of the listing about a connection, cut to the columns.
fn write_row(
    out: &mut impl Write,
    mut line: Vec<u8>,
    style: super::frames::Style,
) -> std::io::Result<()> {
    line.push(b'\n');
    style.fit_rows(&mut line);
    out.write_all(&line)
}
