//! The export page: the tables `kwire export` writes, every column with its
//! type and meaning (from `analysis::tables::schema`, the one place both
//! writers read), how the files are laid out, and queries to start from.

use super::{Block, Cell, Page, Section, Table};
use crate::analysis::tables::{schema::Table as Tables, SCHEMA_VERSION};

pub const PATH: &str = "export";

/// Queries a team runs first, each with its question (DuckDB's SQL).
pub const QUERIES: &[(&str, &str)] = &[
    (
        "SELECT api_name, count(*), quantile_cont(latency_us, 0.99) AS p99_us FROM 'tables/exchanges/*.parquet' GROUP BY api_name",
        "latency per API across every capture",
    ),
    (
        "SELECT client_id, software_name, software_version, api_version FROM 'tables/exchanges/*.parquet' WHERE api_name = 'Produce' AND api_version < 3 GROUP BY ALL",
        "which clients still send Produce v0-v2 (Kafka 4.0 no longer serves them)",
    ),
    (
        "SELECT capture, error, count(*) FROM 'tables/exchanges/*.parquet' WHERE error IS NOT NULL GROUP BY ALL ORDER BY 3 DESC",
        "errors per capture",
    ),
    (
        "SELECT topic, partition, max(high_watermark - last_stable_offset) FROM 'tables/partitions/*.parquet' WHERE api_name = 'Fetch' GROUP BY ALL",
        "partitions whose open transactions hold read_committed consumers back",
    ),
    (
        "SELECT group_id, topic, partition, arg_max(committed_offset, request_time) FROM 'tables/partitions/*.parquet' WHERE api_name = 'OffsetCommit' AND error_code = 0 GROUP BY ALL",
        "each group's last accepted commit per partition (the latest, not the largest: a group may reset backwards)",
    ),
    (
        "SELECT capture, frame, topic, partition, \"offset\", value FROM 'tables/records/*.parquet' WHERE key = 'order-7'",
        "every record with a key (offset is quoted: a reserved word)",
    ),
    (
        "SELECT closed_by, close, count(*) FROM 'tables/connections/*.parquet' GROUP BY ALL",
        "who closes connections, and how",
    ),
    (
        "SELECT rule, severity, count(*) FROM 'tables/findings/*.parquet' GROUP BY ALL ORDER BY 3 DESC",
        "what went wrong, across captures",
    ),
];

pub fn export_page() -> Page {
    let mut sections = vec![
        Section::new(
            "Files",
            vec![
                Block::Para("kwire export CAPTURE… --out DIR writes each table to a folder of its own, DIR/exchanges/, DIR/partitions/, DIR/connections/, DIR/records/ and DIR/findings/, with one file per capture named after it (a second capture of the same name gets -2). Every row names its capture in the capture column, so a folder is one table: DuckDB reads 'DIR/exchanges/*.parquet', Spark reads DIR/exchanges. A file is written under a name starting with a dot and renamed when complete, so an engine never reads half a file.".into()),
                Block::Para("Parquet (the default): real Parquet types (times as timestamps in UTC, lists as lists, a record's headers as a list of structs), Snappy-compressed, a row group at a time (64 Ki rows or 32 MiB), so memory stays flat however large the capture; each file's metadata has kwire.schema_version. --format ndjson writes the same rows as JSON lines with the same names: capture times in epoch seconds, record timestamps in epoch milliseconds, bytes in hex.".into()),
                Block::Para("Captures are read in parallel, one per core (--jobs N), each four times in streaming passes (findings, exchanges, records, partitions). --filter EXPR keeps the exchanges it selects, their partitions, the records and findings of their frames and the connections they are on. For hundreds of captures, scripts/spark-export.py runs kwire export as Spark tasks and queries the result with Spark SQL.".into()),
                Block::Para(format!("This is schema version {SCHEMA_VERSION}. Within a version no column is renamed or retyped; a new column goes at the end of its table and a new column or table raises the version (version 2 added partitions). kwire export --schema prints the same columns as this page.")),
            ],
        )
        .with_id("files"),
    ];
    for t in Tables::ALL {
        let table = Table {
            head: ["column", "type", "what it holds"]
                .map(String::from)
                .to_vec(),
            rows: t
                .columns()
                .iter()
                .map(|c| {
                    vec![
                        Cell::text(c.name),
                        Cell::text(c.kind.sql()),
                        Cell::text(c.doc),
                    ]
                })
                .collect(),
            ..Default::default()
        };
        sections.push(
            Section::new(
                t.name(),
                vec![Block::Para(t.doc().into()), Block::Table(table)],
            )
            .with_id(t.name()),
        );
    }
    let queries = Table {
        head: ["query", "answers"].map(String::from).to_vec(),
        rows: QUERIES
            .iter()
            .map(|(q, a)| vec![Cell::text(*q), Cell::text(*a)])
            .collect(),
        ..Default::default()
    };
    sections.push(
        Section::new("Queries to start from", vec![Block::Table(queries)]).with_id("queries"),
    );
    Page {
        path: PATH.into(),
        title: "Export: captures as tables".into(),
        blocks: vec![Block::Para(
            "kwire export turns captures into tables that DuckDB, Spark and any Parquet reader query: a row per exchange, per partition of an exchange, per connection, per record and per finding, typed, with the same names across every capture and release.".into(),
        )],
        sections,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_and_column_is_on_the_page() {
        let page = export_page();
        for t in Tables::ALL {
            let section = page
                .sections
                .iter()
                .find(|s| s.heading == t.name())
                .unwrap_or_else(|| panic!("no section for {}", t.name()));
            let Some(Block::Table(table)) = section.blocks.get(1) else {
                panic!("{}: no table", t.name());
            };
            assert_eq!(table.rows.len(), t.columns().len(), "{}", t.name());
        }
    }
}
