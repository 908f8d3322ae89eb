//! The tables `kwire export` writes: their names, columns, types and what
//! each column holds, in one place. The Parquet writer, the JSON-lines
//! writer, `export --schema` and the documentation read them from here.
//!
//! Versioned: a column is never renamed or retyped within a version; new
//! columns go at the end of their table, and a new column or table raises
//! the version. Version 2 added the `partitions` table.

/// What `export --schema` and every file's metadata call this layout.
pub const SCHEMA_VERSION: u32 = 2;

/// A column's type. Scalars may be null; lists are never null (empty instead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text (Parquet STRING).
    Text,
    /// Integers of 16, 32 and 64 bits, signed.
    Int16,
    Int32,
    Int64,
    Bool,
    /// A capture time: microseconds since the epoch, UTC (Parquet
    /// TIMESTAMP(MICROS, UTC); JSON: epoch seconds, as every JSON output).
    Time,
    /// A record's timestamp: milliseconds since the epoch, as Kafka keeps it
    /// (Parquet TIMESTAMP(MILLIS, UTC); JSON: epoch milliseconds).
    TimeMillis,
    /// Bytes as they were on the wire.
    Bytes,
    /// Lists.
    ListInt16,
    ListInt64,
    ListText,
    /// A record's headers: a list of `{key, value, value_bytes}` (value as
    /// text when it is UTF-8, and as bytes).
    Headers,
}

impl Kind {
    /// The type as `export --schema` prints it (SQL-like, as DuckDB shows it).
    pub fn sql(self) -> &'static str {
        match self {
            Kind::Text => "VARCHAR",
            Kind::Int16 => "SMALLINT",
            Kind::Int32 => "INTEGER",
            Kind::Int64 => "BIGINT",
            Kind::Bool => "BOOLEAN",
            Kind::Time | Kind::TimeMillis => "TIMESTAMP WITH TIME ZONE",
            Kind::Bytes => "BLOB",
            Kind::ListInt16 => "SMALLINT[]",
            Kind::ListInt64 => "BIGINT[]",
            Kind::ListText => "VARCHAR[]",
            Kind::Headers => "STRUCT(key VARCHAR, value VARCHAR, value_bytes BLOB)[]",
        }
    }
}

pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
    pub doc: &'static str,
}

const fn col(name: &'static str, kind: Kind, doc: &'static str) -> Column {
    Column { name, kind, doc }
}

/// The tables, in the order they are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Table {
    Exchanges,
    Partitions,
    Connections,
    Records,
    Findings,
}

impl Table {
    pub const ALL: [Table; 5] = [
        Table::Exchanges,
        Table::Partitions,
        Table::Connections,
        Table::Records,
        Table::Findings,
    ];

    /// The table's name: its folder under the output directory.
    pub fn name(self) -> &'static str {
        match self {
            Table::Exchanges => "exchanges",
            Table::Partitions => "partitions",
            Table::Connections => "connections",
            Table::Records => "records",
            Table::Findings => "findings",
        }
    }

    pub fn doc(self) -> &'static str {
        match self {
            Table::Exchanges => "One row per request and its response, or a frame alone (a request never answered, a response whose request is not in the capture).",
            Table::Partitions => "One row per topic-partition of each Produce, Fetch, ListOffsets, OffsetCommit and OffsetFetch exchange: what the request asked of it and what the response said.",
            Table::Connections => "One row per connection that carried Kafka frames.",
            Table::Records => "One row per record of Produce requests and Fetch and ShareFetch responses, compressed batches included.",
            Table::Findings => "One row per finding of `kwire check`: what went wrong, and the frames it rests on.",
        }
    }

    /// A row of one cell per column, or an error naming the table.
    pub(crate) fn check_row_len(self, cells: &[Cell]) -> std::io::Result<()> {
        if cells.len() == self.columns().len() {
            return Ok(());
        }
        Err(std::io::Error::other(format!(
            "{}: a row of {} cells for {} columns",
            self.name(),
            cells.len(),
            self.columns().len()
        )))
    }

    pub fn columns(self) -> &'static [Column] {
        match self {
            Table::Exchanges => EXCHANGES,
            Table::Partitions => PARTITIONS,
            Table::Connections => CONNECTIONS,
            Table::Records => RECORDS,
            Table::Findings => FINDINGS,
        }
    }
}

const CAPTURE: Column = col(
    "capture",
    Kind::Text,
    "the capture file as named on the command line",
);

const EXCHANGES: &[Column] = &[
    CAPTURE,
    col("conn", Kind::Int32, "the connection's number, as `capture --list` shows it"),
    col("client", Kind::Text, "the client's address and port"),
    col("broker", Kind::Text, "the broker's address and port"),
    col("client_id", Kind::Text, "the request header's client id (null: none, or no request)"),
    col("software_name", Kind::Text, "the client software its connection's ApiVersions request (v3 and later) named, as sent so far"),
    col("software_version", Kind::Text, "that software's version"),
    col("api_key", Kind::Int16, "null for a response whose request is not in the capture"),
    col("api_name", Kind::Text, "the API's name"),
    col("api_version", Kind::Int16, "the request's version"),
    col("correlation_id", Kind::Int32, "as in the headers"),
    col("request_frame", Kind::Int64, "the request's frame number (null: no request)"),
    col("response_frame", Kind::Int64, "the response's frame number (null: no response)"),
    col("request_time", Kind::Time, "when the packet completing the request was captured"),
    col("response_time", Kind::Time, "when the packet completing the response was captured"),
    col("latency_us", Kind::Int64, "response time minus request time, microseconds (null: not answered)"),
    col("outcome", Kind::Text, "answered, unanswered (no response by the end of the capture or before its correlation id was reused) or unmatched (a response alone)"),
    col("waited_us", Kind::Int64, "for an unanswered request: how long it waited, microseconds"),
    col("request_bytes", Kind::Int32, "the request's size, size prefix included"),
    col("response_bytes", Kind::Int32, "the response's size, size prefix included"),
    col("error_codes", Kind::ListInt16, "the response's non-zero error codes, ascending, each once"),
    col("error", Kind::Text, "the name of the first of them"),
    col("topics", Kind::ListText, "the topics the request and response name (a topic id the capture never named, as its id)"),
    col("findings", Kind::ListText, "the rules of the findings that name the request or the response"),
];

const PARTITIONS: &[Column] = &[
    CAPTURE,
    col("conn", Kind::Int32, "the connection's number"),
    col("client_id", Kind::Text, "the request header's client id"),
    col("api_key", Kind::Int16, "the API: 0 Produce, 1 Fetch, 2 ListOffsets, 8 OffsetCommit, 9 OffsetFetch"),
    col("api_name", Kind::Text, "its name"),
    col("api_version", Kind::Int16, "the request's version"),
    col("request_frame", Kind::Int64, "the request's frame number"),
    col("response_frame", Kind::Int64, "the response's frame number (null: not answered)"),
    col("request_time", Kind::Time, "when the request was captured"),
    col("response_time", Kind::Time, "when the response was captured"),
    col("group_id", Kind::Text, "OffsetCommit and OffsetFetch: the group"),
    col("topic", Kind::Text, "the topic (a topic id the capture had not tied to a name by then, as its id)"),
    col("partition", Kind::Int32, "the partition"),
    col("error_code", Kind::Int16, "the response's error code for the partition (null: not answered, or the response names no such partition)"),
    col("error", Kind::Text, "that error's name (null: none)"),
    col("fetch_offset", Kind::Int64, "Fetch: the offset the request fetches from"),
    col("committed_offset", Kind::Int64, "OffsetCommit: the offset committed; OffsetFetch: the offset answered"),
    col("list_timestamp", Kind::Int64, "ListOffsets: the timestamp asked for (-1 latest, -2 earliest, -3 the largest timestamp, -4 local log start, -5 tiered storage's last offset)"),
    col("list_offset", Kind::Int64, "ListOffsets v1 and later: the offset answered (v0 answers a list, OldStyleOffsets: null here)"),
    col("base_offset", Kind::Int64, "Produce: the offset the broker gave the first record"),
    col("high_watermark", Kind::Int64, "Fetch: the partition's high watermark"),
    col("last_stable_offset", Kind::Int64, "Fetch: its last stable offset (transactions: what read_committed consumers may read up to)"),
    col("log_start_offset", Kind::Int64, "Fetch and Produce: its log start offset (-1: not given)"),
    col("record_bytes", Kind::Int64, "Produce requests and Fetch responses: the size of the partition's records"),
    col("batches", Kind::Int32, "how many whole record batches (v2) they hold"),
    col("records", Kind::Int64, "how many records those batches' headers count (null when older-format messages are among them: a compressed one holds an unknown number)"),
    col("producer_ids", Kind::ListInt64, "the producer ids of those batches (idempotent and transactional producers), ascending, each once"),
];

const CONNECTIONS: &[Column] = &[
    CAPTURE,
    col("conn", Kind::Int32, "the connection's number"),
    col("client", Kind::Text, "the client's address and port"),
    col("broker", Kind::Text, "the broker's address and port"),
    col(
        "software_name",
        Kind::Text,
        "the client software its last ApiVersions request (v3 and later) named",
    ),
    col("software_version", Kind::Text, "that software's version"),
    col(
        "opened",
        Kind::Bool,
        "whether the client's SYN is in the capture",
    ),
    col("first_time", Kind::Time, "the first frame or SYN seen"),
    col("last_time", Kind::Time, "the last frame, FIN or RST seen"),
    col(
        "closed_by",
        Kind::Text,
        "client or broker: who sent the first FIN or RST (null: still open at the end)",
    ),
    col(
        "close",
        Kind::Text,
        "fin or rst: how the first closer closed",
    ),
    col("close_time", Kind::Time, "when the first closer closed"),
    col(
        "frames",
        Kind::Int64,
        "Kafka frames (requests and responses)",
    ),
    col("requests", Kind::Int64, "requests"),
    col("responses", Kind::Int64, "responses"),
    col(
        "request_bytes",
        Kind::Int64,
        "bytes of requests, size prefixes included",
    ),
    col(
        "response_bytes",
        Kind::Int64,
        "bytes of responses, size prefixes included",
    ),
];

const RECORDS: &[Column] = &[
    CAPTURE,
    col("frame", Kind::Int64, "the frame carrying the record"),
    col("time", Kind::Time, "when that frame was captured"),
    col("conn", Kind::Int32, "its connection"),
    col("direction", Kind::Text, "request (produced) or response (fetched)"),
    col("api_name", Kind::Text, "Produce, Fetch or ShareFetch"),
    col("topic", Kind::Text, "the topic (a topic id the capture never named, as its id)"),
    col("partition", Kind::Int32, "the partition"),
    col("offset", Kind::Int64, "the record's offset: the broker's when known (see offset_assigned), else relative to its batch"),
    col("offset_assigned", Kind::Bool, "whether offset is the broker's (fetched, or produced and answered with a BaseOffset)"),
    col("timestamp", Kind::TimeMillis, "the record's timestamp (null for magic 0 messages)"),
    col("control", Kind::Bool, "from a control batch (transaction markers)"),
    col("key", Kind::Text, "the key as text, when it is UTF-8 (null: a null key, or not UTF-8)"),
    col("key_bytes", Kind::Bytes, "the key's bytes (null: a null key); hex in JSON lines"),
    col("value", Kind::Text, "the value as text, when it is UTF-8 (null: a null value, a tombstone, or not UTF-8)"),
    col("value_bytes", Kind::Bytes, "the value's bytes (null: a null value); hex in JSON lines"),
    col("headers", Kind::Headers, "the record's headers, in order"),
    col("codec", Kind::Text, "its batch's compression: none, gzip, snappy, lz4 or zstd (null for legacy messages)"),
    col("batch_base_offset", Kind::Int64, "its batch's baseOffset as the batch holds it (a producer writes 0: the broker's offsets are in offset, see offset_assigned)"),
    col("producer_id", Kind::Int64, "its batch's ProducerId (-1: none)"),
    col("producer_epoch", Kind::Int16, "its batch's ProducerEpoch"),
    col("sequence", Kind::Int32, "the record's sequence number: the batch's BaseSequence plus its offset delta (null when the batch has none, -1)"),
    col("transactional", Kind::Bool, "whether its batch is transactional"),
];

const FINDINGS: &[Column] = &[
    CAPTURE,
    col(
        "rule",
        Kind::Text,
        "the rule's name, as `kwire check --explain RULE` knows it",
    ),
    col("severity", Kind::Text, "error, warning or note"),
    col(
        "frame",
        Kind::Int64,
        "the frame it is about (null: bytes in no frame)",
    ),
    col("time", Kind::Time, "when"),
    col("conn", Kind::Int32, "the connection"),
    col("api_key", Kind::Int16, "the API of the frame it is about"),
    col("api_name", Kind::Text, "its name"),
    col("api_version", Kind::Int16, "its version"),
    col("correlation_id", Kind::Int32, "its correlation id"),
    col("message", Kind::Text, "what kwire check says"),
    col(
        "frames",
        Kind::ListInt64,
        "every frame it rests on, ascending (at most 10,000)",
    ),
    col("count", Kind::Int64, "how many times it happened"),
    col(
        "client_id",
        Kind::Text,
        "the client's id, when it is about one client",
    ),
];

/// One cell of a row, of its column's [`Kind`].
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Null,
    Text(String),
    Int(i64),
    Bool(bool),
    /// Microseconds since the epoch.
    Time(i64),
    /// Milliseconds since the epoch.
    TimeMillis(i64),
    Bytes(Vec<u8>),
    Ints(Vec<i64>),
    Texts(Vec<String>),
    Headers(Vec<(String, Option<Vec<u8>>)>),
}

impl Cell {
    pub(crate) fn opt_text(t: Option<impl Into<String>>) -> Cell {
        t.map_or(Cell::Null, |t| Cell::Text(t.into()))
    }

    pub(crate) fn opt_int(n: Option<impl Into<i64>>) -> Cell {
        n.map_or(Cell::Null, |n| Cell::Int(n.into()))
    }

    /// A capture's time (epoch seconds) as microseconds.
    pub fn time(seconds: f64) -> Cell {
        Cell::Time((seconds * 1e6).round() as i64)
    }

    pub(crate) fn opt_time(seconds: Option<f64>) -> Cell {
        seconds.map_or(Cell::Null, Cell::time)
    }

    /// Whether the cell may stand in a column of `kind`.
    pub fn fits(&self, kind: Kind) -> bool {
        match self {
            Cell::Null => !matches!(
                kind,
                Kind::ListInt16 | Kind::ListInt64 | Kind::ListText | Kind::Headers
            ),
            Cell::Text(_) => kind == Kind::Text,
            Cell::Int(n) => match kind {
                Kind::Int16 => i16::try_from(*n).is_ok(),
                Kind::Int32 => i32::try_from(*n).is_ok(),
                Kind::Int64 => true,
                _ => false,
            },
            Cell::Ints(ns) if kind == Kind::ListInt16 => {
                ns.iter().all(|n| i16::try_from(*n).is_ok())
            }
            Cell::Bool(_) => kind == Kind::Bool,
            Cell::Time(_) => kind == Kind::Time,
            Cell::TimeMillis(_) => kind == Kind::TimeMillis,
            Cell::Bytes(_) => kind == Kind::Bytes,
            Cell::Ints(_) => matches!(kind, Kind::ListInt16 | Kind::ListInt64),
            Cell::Texts(_) => kind == Kind::ListText,
            Cell::Headers(_) => kind == Kind::Headers,
        }
    }
}

/// Where rows go: a table's writer for one capture.
pub trait Sink {
    fn row(&mut self, table: Table, cells: Vec<Cell>) -> std::io::Result<()>;
}

/// `export --schema`: every table, its columns, their types and meaning,
/// the prose wrapped to `width` columns when given (meanings under their
/// column, so the names and types stay a column each).
pub fn describe(width: Option<usize>) -> String {
    let wrap = |text: &str, indent: usize| -> Vec<String> {
        match width {
            Some(w) => {
                let room = w.saturating_sub(indent).max(20);
                crate::text::wrap::break_words(text, room, room)
            }
            None => vec![text.to_string()],
        }
    };
    let mut out = format!("kwire export tables, schema version {SCHEMA_VERSION}\n");
    for t in Table::ALL {
        out += "\n";
        for line in wrap(&format!("{}: {}", t.name(), t.doc()), 0) {
            out += &line;
            out += "\n";
        }
        let width = t.columns().iter().map(|c| c.name.len()).max().unwrap_or(0);
        let type_width = t
            .columns()
            .iter()
            .map(|c| c.kind.sql().len())
            .max()
            .unwrap_or(0);
        let indent = 2 + width + 2 + type_width + 2;
        for c in t.columns() {
            let head = format!("  {:width$}  {:type_width$}  ", c.name, c.kind.sql());
            for (i, line) in wrap(c.doc, indent).iter().enumerate() {
                match i {
                    0 => out += &head,
                    _ => out += &" ".repeat(indent),
                }
                out += line;
                out += "\n";
            }
        }
    }
    out
}
