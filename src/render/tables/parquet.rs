//! A table written as a Parquet file with the `parquet` crate's column
//! writers: the schema from `analysis::tables::schema`, rows buffered per
//! column and written as a row group every [`ROWS_PER_GROUP`] rows or
//! [`BYTES_PER_GROUP`] bytes (memory stays flat however long the capture),
//! Snappy-compressed. Lists are Parquet's standard three-level LIST groups,
//! times TIMESTAMP(MICROS, UTC), text STRING: what DuckDB and Spark read as
//! their own types.

use crate::analysis::tables::{Cell, Kind, Table, SCHEMA_VERSION};
use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::io::{self, Write};
use std::sync::Arc;

/// Rows held before a row group is written.
pub const ROWS_PER_GROUP: usize = 64 * 1024;
/// Bytes of values held before a row group is written (records are large).
pub const BYTES_PER_GROUP: usize = 32 << 20;

/// One leaf column's buffered values and levels.
struct Leaf {
    values: Values,
    defs: Vec<i16>,
    /// Repetition levels, for the leaves of lists.
    reps: Option<Vec<i16>>,
}

enum Values {
    I32(Vec<i32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
    Bytes(Vec<ByteArray>),
}

impl Leaf {
    fn new(values: Values, repeated: bool) -> Leaf {
        Leaf {
            values,
            defs: Vec::new(),
            reps: repeated.then(Vec::new),
        }
    }

    fn clear(&mut self) {
        self.defs.clear();
        if let Some(r) = &mut self.reps {
            r.clear();
        }
        match &mut self.values {
            Values::I32(v) => v.clear(),
            Values::I64(v) => v.clear(),
            Values::Bool(v) => v.clear(),
            Values::Bytes(v) => v.clear(),
        }
    }
}

/// A Parquet file being written, one table's rows.
pub(crate) struct ParquetTable<W: Write + Send> {
    table: Table,
    writer: SerializedFileWriter<W>,
    leaves: Vec<Leaf>,
    rows: usize,
    bytes: usize,
}

fn to_io(e: parquet::errors::ParquetError) -> io::Error {
    io::Error::other(e.to_string())
}

/// The table's Parquet schema, in the message-type text Parquet's tools print.
pub(crate) fn message_type(table: Table) -> String {
    let mut s = format!("message {} {{\n", table.name());
    for c in table.columns() {
        let n = c.name;
        s += &match c.kind {
            Kind::Text => format!("  optional binary {n} (STRING);\n"),
            Kind::Int16 => format!("  optional int32 {n} (INTEGER(16,true));\n"),
            Kind::Int32 => format!("  optional int32 {n};\n"),
            Kind::Int64 => format!("  optional int64 {n};\n"),
            Kind::Bool => format!("  optional boolean {n};\n"),
            Kind::Time => format!("  optional int64 {n} (TIMESTAMP(MICROS,true));\n"),
            Kind::TimeMillis => format!("  optional int64 {n} (TIMESTAMP(MILLIS,true));\n"),
            Kind::Bytes => format!("  optional binary {n};\n"),
            Kind::ListInt16 => format!(
                "  required group {n} (LIST) {{ repeated group list {{ required int32 element (INTEGER(16,true)); }} }}\n"
            ),
            Kind::ListInt64 => format!(
                "  required group {n} (LIST) {{ repeated group list {{ required int64 element; }} }}\n"
            ),
            Kind::ListText => format!(
                "  required group {n} (LIST) {{ repeated group list {{ required binary element (STRING); }} }}\n"
            ),
            Kind::Headers => format!(
                "  required group {n} (LIST) {{ repeated group list {{ required group element {{ required binary key (STRING); optional binary value (STRING); optional binary value_bytes; }} }} }}\n"
            ),
        };
    }
    s + "}\n"
}

impl<W: Write + Send> ParquetTable<W> {
    pub fn new(out: W, table: Table) -> io::Result<Self> {
        let schema = Arc::new(parse_message_type(&message_type(table)).map_err(to_io)?);
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("kwire {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(vec![KeyValue::new(
                "kwire.schema_version".to_string(),
                SCHEMA_VERSION.to_string(),
            )]))
            .build();
        let writer = SerializedFileWriter::new(out, schema, Arc::new(props)).map_err(to_io)?;
        let mut leaves = Vec::new();
        for c in table.columns() {
            match c.kind {
                Kind::Int16 | Kind::Int32 => leaves.push(Leaf::new(Values::I32(Vec::new()), false)),
                Kind::Int64 | Kind::Time | Kind::TimeMillis => {
                    leaves.push(Leaf::new(Values::I64(Vec::new()), false))
                }
                Kind::Bool => leaves.push(Leaf::new(Values::Bool(Vec::new()), false)),
                Kind::Text | Kind::Bytes => {
                    leaves.push(Leaf::new(Values::Bytes(Vec::new()), false))
                }
                Kind::ListInt16 => leaves.push(Leaf::new(Values::I32(Vec::new()), true)),
                Kind::ListInt64 => leaves.push(Leaf::new(Values::I64(Vec::new()), true)),
                Kind::ListText => leaves.push(Leaf::new(Values::Bytes(Vec::new()), true)),
                Kind::Headers => {
                    for _ in 0..3 {
                        leaves.push(Leaf::new(Values::Bytes(Vec::new()), true));
                    }
                }
            }
        }
        Ok(ParquetTable {
            table,
            writer,
            leaves,
            rows: 0,
            bytes: 0,
        })
    }

    /// One row: a cell per column, each of its column's kind.
    pub fn row(&mut self, cells: Vec<Cell>) -> io::Result<()> {
        let columns = self.table.columns();
        self.table.check_row_len(&cells)?;
        // The whole row is checked before any cell is buffered: the columns stay in step.
        if let Some((cell, c)) = cells
            .iter()
            .zip(columns)
            .find(|(cell, c)| !cell.fits(c.kind))
        {
            return Err(io::Error::other(format!(
                "{}.{}: {cell:?} is not a {:?}",
                self.table.name(),
                c.name,
                c.kind
            )));
        }
        let mut leaf = 0;
        for cell in cells {
            leaf += self.push(leaf, cell);
        }
        self.rows += 1;
        if self.rows >= ROWS_PER_GROUP || self.bytes >= BYTES_PER_GROUP {
            self.flush_group()?;
        }
        Ok(())
    }

    /// Push a cell into the leaves from `at`; returns how many leaves it fills.
    fn push(&mut self, at: usize, cell: Cell) -> usize {
        let bytes = &mut self.bytes;
        let mut text = |leaf: &mut Leaf, b: Vec<u8>, def: i16| {
            *bytes += b.len();
            if let Values::Bytes(v) = &mut leaf.values {
                v.push(ByteArray::from(b));
            }
            leaf.defs.push(def);
        };
        let leaf = &mut self.leaves[at];
        match cell {
            Cell::Null => leaf.defs.push(0),
            Cell::Text(t) => text(leaf, t.into_bytes(), 1),
            Cell::Bytes(b) => text(leaf, b, 1),
            Cell::Int(n) | Cell::Time(n) | Cell::TimeMillis(n) => {
                match &mut leaf.values {
                    Values::I32(v) => v.push(n as i32),
                    Values::I64(v) => v.push(n),
                    _ => {}
                }
                leaf.defs.push(1);
            }
            Cell::Bool(b) => {
                if let Values::Bool(v) = &mut leaf.values {
                    v.push(b);
                }
                leaf.defs.push(1);
            }
            Cell::Ints(ns) => {
                list_levels(leaf, ns.len());
                match &mut leaf.values {
                    Values::I32(v) => v.extend(ns.iter().map(|&n| n as i32)),
                    Values::I64(v) => v.extend(ns),
                    _ => {}
                }
            }
            Cell::Texts(ts) => {
                list_levels(leaf, ts.len());
                for t in ts {
                    *bytes += t.len();
                    if let Values::Bytes(v) = &mut leaf.values {
                        v.push(ByteArray::from(t.into_bytes()));
                    }
                }
            }
            Cell::Headers(hs) => {
                // Three leaves: key (required in the element), value as text
                // when UTF-8, and value_bytes (both optional: definition 2
                // when there, 1 when null, 0 for an empty list).
                let n = hs.len();
                list_levels(&mut self.leaves[at], n);
                let (keys, rest) = self.leaves[at..at + 3].split_at_mut(1);
                let (texts, raw) = rest.split_at_mut(1);
                let (keys, texts, raw) = (&mut keys[0], &mut texts[0], &mut raw[0]);
                for leaf in [&mut *texts, &mut *raw] {
                    if n == 0 {
                        leaf.defs.push(0);
                        leaf.reps.get_or_insert_with(Vec::new).push(0);
                    }
                }
                for (i, (k, v)) in hs.into_iter().enumerate() {
                    *bytes += k.len() + 2 * v.as_ref().map_or(0, Vec::len);
                    if let Values::Bytes(b) = &mut keys.values {
                        b.push(ByteArray::from(k.into_bytes()));
                    }
                    let text = v
                        .as_ref()
                        .and_then(|v| std::str::from_utf8(v).ok().map(|t| t.as_bytes().to_vec()));
                    for (leaf, value) in [(&mut *texts, text), (&mut *raw, v)] {
                        leaf.reps
                            .get_or_insert_with(Vec::new)
                            .push(i16::from(i > 0));
                        match value {
                            Some(v) => {
                                leaf.defs.push(2);
                                if let Values::Bytes(b) = &mut leaf.values {
                                    b.push(ByteArray::from(v));
                                }
                            }
                            None => leaf.defs.push(1),
                        }
                    }
                }
                return 3;
            }
        }
        1
    }

    fn flush_group(&mut self) -> io::Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let mut group = self.writer.next_row_group().map_err(to_io)?;
        for leaf in &mut self.leaves {
            let Some(mut column) = group.next_column().map_err(to_io)? else {
                return Err(io::Error::other("fewer Parquet columns than leaves"));
            };
            let (defs, reps) = (Some(&leaf.defs[..]), leaf.reps.as_deref());
            match &leaf.values {
                Values::I32(v) => column
                    .typed::<Int32Type>()
                    .write_batch(v, defs, reps)
                    .map(drop),
                Values::I64(v) => column
                    .typed::<Int64Type>()
                    .write_batch(v, defs, reps)
                    .map(drop),
                Values::Bool(v) => column
                    .typed::<BoolType>()
                    .write_batch(v, defs, reps)
                    .map(drop),
                Values::Bytes(v) => column
                    .typed::<ByteArrayType>()
                    .write_batch(v, defs, reps)
                    .map(drop),
            }
            .map_err(to_io)?;
            column.close().map_err(to_io)?;
            leaf.clear();
        }
        group.close().map_err(to_io)?;
        self.rows = 0;
        self.bytes = 0;
        Ok(())
    }

    /// The last row group and the footer written; the output handed back.
    pub fn finish(mut self) -> io::Result<W> {
        self.flush_group()?;
        self.writer.into_inner().map_err(to_io)
    }
}

/// A list's levels on its (first) leaf: an empty list is one entry at
/// definition 0; each element is defined (1), the first starting the row
/// (repetition 0), the others repeating (1).
fn list_levels(leaf: &mut Leaf, n: usize) {
    let reps = leaf.reps.get_or_insert_with(Vec::new);
    if n == 0 {
        leaf.defs.push(0);
        reps.push(0);
        return;
    }
    for i in 0..n {
        leaf.defs.push(1);
        reps.push(i16::from(i > 0));
    }
}
