//! A table written as JSON lines: one object per row, the columns' names as
//! keys, in the schema's order. Times are epoch seconds to the microsecond,
//! and a record's timestamp epoch milliseconds, as every JSON output of
//! kwire writes them; bytes are hex (JSON has no bytes); a record's headers
//! are `{"key", "value", "value_bytes"}` objects.

use crate::analysis::tables::{Cell, Table};
use crate::render::json::{capture_time, write_json_str};
use std::io::{self, Write};

pub(crate) struct JsonLinesTable<W: Write> {
    table: Table,
    out: W,
    line: Vec<u8>,
}

impl<W: Write> JsonLinesTable<W> {
    pub fn new(out: W, table: Table) -> Self {
        JsonLinesTable {
            table,
            out,
            line: Vec::with_capacity(512),
        }
    }

    pub fn row(&mut self, cells: Vec<Cell>) -> io::Result<()> {
        self.table.check_row_len(&cells)?;
        let line = &mut self.line;
        line.clear();
        line.push(b'{');
        for (i, (cell, c)) in cells.iter().zip(self.table.columns()).enumerate() {
            if i > 0 {
                line.push(b',');
            }
            write_json_str(line, c.name);
            line.push(b':');
            write_cell(line, cell);
        }
        line.extend_from_slice(b"}\n");
        self.out.write_all(line)
    }

    pub fn finish(mut self) -> io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

fn write_cell(line: &mut Vec<u8>, cell: &Cell) {
    match cell {
        Cell::Null => line.extend_from_slice(b"null"),
        Cell::Text(t) => write_json_str(line, t),
        Cell::Int(n) => line.extend_from_slice(n.to_string().as_bytes()),
        Cell::Bool(b) => line.extend_from_slice(if *b { b"true" } else { b"false" }),
        Cell::Time(us) => {
            line.extend_from_slice(capture_time(*us as f64 / 1e6).to_string().as_bytes())
        }
        Cell::TimeMillis(ms) => line.extend_from_slice(ms.to_string().as_bytes()),
        Cell::Bytes(b) => write_json_str(line, &hex::encode(b)),
        Cell::Ints(ns) => {
            line.push(b'[');
            for (i, n) in ns.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(n.to_string().as_bytes());
            }
            line.push(b']');
        }
        Cell::Texts(ts) => {
            line.push(b'[');
            for (i, t) in ts.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                write_json_str(line, t);
            }
            line.push(b']');
        }
        Cell::Headers(hs) => {
            line.push(b'[');
            for (i, (k, v)) in hs.iter().enumerate() {
                if i > 0 {
                    line.push(b',');
                }
                line.extend_from_slice(b"{\"key\":");
                write_json_str(line, k);
                line.extend_from_slice(b",\"value\":");
                match v.as_deref().and_then(|v| std::str::from_utf8(v).ok()) {
                    Some(t) => write_json_str(line, t),
                    None => line.extend_from_slice(b"null"),
                }
                line.extend_from_slice(b",\"value_bytes\":");
                match v {
                    Some(v) => write_json_str(line, &hex::encode(v)),
                    None => line.extend_from_slice(b"null"),
                }
                line.push(b'}');
            }
            line.push(b']');
        }
    }
}
