//! The error code page: every code kwire names, and how one looks on the wire.

use super::figure::{failed, struct_figure};
use super::{anchor, Block, Cell, Page, Section, Table};
use crate::decode::Region;
use crate::protocol::error_codes::ERROR_CODES;
use crate::schema::catalogue::parse_one;
use crate::schema::Catalogue;
use serde_json::json;

pub const PATH: &str = "errors";

/// kwire's own example: an error code and message as responses carry them.
const EXAMPLE: &str = r#"{"type": "data", "name": "ErrorExample", "validVersions": "0", "flexibleVersions": "0+", "fields": [
  {"name": "ErrorCode", "type": "int16", "versions": "0+"},
  {"name": "ErrorMessage", "type": "string", "versions": "0+", "nullableVersions": "0+"}]}"#;

/// The anchor of an error code's row (`error-3`, `error--1`).
pub fn error_anchor(code: i16) -> String {
    anchor("error-", &code.to_string())
}

pub fn errors_page(cat: &Catalogue) -> Page {
    let example = match parse_one(EXAMPLE, "kwire error page") {
        Ok(spec) => struct_figure(
            cat,
            &spec,
            0,
            json!({"ErrorCode": 3, "ErrorMessage": "no such topic"})
                .as_object()
                .unwrap_or(&Default::default()),
            Region::ResponseBody,
        ),
        Err(e) => failed("example".into(), e),
    };
    let mut table = Table {
        head: ["code", "name"].map(String::from).to_vec(),
        ..Default::default()
    };
    for &(code, name) in ERROR_CODES {
        let id = error_anchor(code);
        table.rows.push(vec![
            Cell::link(code.to_string(), format!("#{id}")),
            Cell::text(name),
        ]);
        table.row_ids.push(Some(id));
    }
    let first = ERROR_CODES.first().map_or(0, |e| e.0);
    let last = ERROR_CODES.last().map_or(0, |e| e.0);
    Page {
        path: PATH.into(),
        title: "Error codes".into(),
        blocks: vec![
            Block::Para("Responses say what went wrong with an ErrorCode field, an int16: 0 is success, anything else names an error, often with an ErrorMessage string beside it. A response carries one per topic, partition, group or whole request, as its definition says. kwire shows the name next to the number wherever it decodes an error code.".into()),
            Block::Legend(Vec::new()),
        ],
        sections: vec![
            Section::new("On the wire", vec![Block::Figure(Box::new(example))]).with_id("example"),
            Section::new(
                "Codes",
                vec![
                    Block::Para(format!("Codes {first} to {last}, the names of the Errors enum of Apache Kafka 4.3; kwire shows a code outside them as an unknown error code.")),
                    Block::Table(table),
                ],
            )
            .with_id("codes"),
        ],
    }
    .fill_legend()
}
