//! The error code page: every code kwire names, and how one looks on the wire.

use super::figure::{failed, struct_figure};
use super::{anchor, Block, Cell, Page, Section, Table};
use crate::decode::frame::compress_versions;
use crate::decode::Region;
use crate::protocol::error_codes::ERROR_CODES;
use crate::protocol::error_rules::{
    is_retriable, ERROR_SINCE, PRODUCER_STATE_ERRORS, REBALANCE_IN_PROGRESS,
};
use crate::schema::catalogue::parse_one;
use crate::schema::diff::fields_at;
use crate::schema::model::FieldMeaning;
use crate::schema::Catalogue;
use crate::schema::{FieldType, MessageKind, Primitive};
use serde_json::json;
use std::collections::BTreeMap;

pub const PATH: &str = "errors";

/// kwire's own example: an error code and message as responses carry them.
const EXAMPLE: &str = r#"{"type": "data", "name": "ErrorExample", "validVersions": "0", "flexibleVersions": "0+", "fields": [
  {"name": "ErrorCode", "type": "int16", "versions": "0+"},
  {"name": "ErrorMessage", "type": "string", "versions": "0+", "nullableVersions": "0+"}]}"#;

/// The anchor of an error code's row (`error-3`, `error--1`).
pub(crate) fn error_anchor(code: i16) -> String {
    anchor("error-", &code.to_string())
}

/// `release` pins the definitions, as the site's other pages are pinned.
pub fn errors_page(cat: &Catalogue, release: Option<&str>) -> Page {
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
        head: ["code", "name", "retriable", "only from"]
            .map(String::from)
            .to_vec(),
        ..Default::default()
    };
    for &(code, name) in ERROR_CODES {
        let id = error_anchor(code);
        table.rows.push(vec![
            Cell::link(code.to_string(), format!("#{id}")),
            Cell::text(name),
            Cell::text(retriable_text(code)),
            Cell::text(only_from(cat, code)),
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
                    Block::Para(format!("Codes {first} to {last}, the names of the Errors enum of Apache Kafka 4.3; kwire shows a code outside them as an unknown error code. \
                        Retriable: whether a client may send the same request again and expect it to succeed once the condition passes (a leader moving, a coordinator loading); \
                        kwire's conversation rules read a request repeated after an error that is not retriable as a loop. \
                        Only from: the API versions before which a broker cannot return the error (the request has nothing it could be about, or the client would not know it).")),
                    Block::Table(table),
                ],
            )
            .with_id("codes"),
            Section::new(
                "Where responses carry one",
                vec![
                    Block::Para("Each API's responses and the fields in them that hold an error code (an int16 named ErrorCode, or one the definitions mark as an error code), with the versions that have each field: where to look for the error of a topic, a partition or the whole request.".into()),
                    Block::Table(carriers(cat, release)),
                ],
            )
            .with_id("carriers"),
        ],
    }
    .fill_legend()
}

/// Whether a client may retry the error as it is, in words.
pub(crate) fn retriable_text(code: i16) -> &'static str {
    if code == 0 {
        "-"
    } else if is_retriable(code) {
        "yes"
    } else if code == REBALANCE_IN_PROGRESS {
        "no: the member rejoins"
    } else {
        "no"
    }
}

/// The APIs that return `code` only from a version on, as kwire's rules know them.
fn only_from(cat: &Catalogue, code: i16) -> String {
    let name = |k: i16| {
        cat.api_name(k)
            .map_or_else(|| format!("api {k}"), str::to_string)
    };
    let mut out: Vec<String> = ERROR_SINCE
        .iter()
        .filter(|e| e.error == code)
        .map(|e| format!("{} v{}+", name(e.api_key), e.since))
        .collect();
    if PRODUCER_STATE_ERRORS.contains(&code) {
        out.push(format!("{} v3+ (a producer id)", name(0)));
    }
    if out.is_empty() {
        "-".into()
    } else {
        out.join(", ")
    }
}

/// Per API, the response fields holding an error code and their versions.
fn carriers(cat: &Catalogue, release: Option<&str>) -> Table {
    let mut table = Table {
        head: ["API", "fields (versions)"].map(String::from).to_vec(),
        ..Default::default()
    };
    for key in cat.api_keys() {
        let mut paths: BTreeMap<String, Vec<i16>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        // Pinned to a release, an API it does not define has no page to link to.
        if release.is_some() && cat.versions(MessageKind::Request, key, release).is_empty() {
            continue;
        }
        for v in cat.versions(MessageKind::Response, key, release) {
            let Some(spec) = cat.message(MessageKind::Response, key, v, release) else {
                continue;
            };
            for (path, f) in fields_at(spec, v) {
                let int16 = matches!(f.ty, FieldType::Primitive(Primitive::Int16));
                if int16 && FieldMeaning::of(f) == FieldMeaning::ErrorCode {
                    if !paths.contains_key(&path) {
                        order.push(path.clone());
                    }
                    paths.entry(path).or_default().push(v);
                }
            }
        }
        if order.is_empty() {
            continue;
        }
        let name = cat.api_name(key).unwrap_or("?").to_string();
        let text: Vec<String> = order
            .iter()
            .map(|p| format!("{p} ({})", compress_versions(&paths[p])))
            .collect();
        let name_cell = match super::api_path(cat, key) {
            Some(path) => Cell::link(name, path),
            None => Cell::text(name),
        };
        table
            .rows
            .push(vec![name_cell, Cell::text(text.join("; "))]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes table's rows as (code, name, retriable, only from).
    fn rows() -> Vec<(i16, String, String, String)> {
        let page = errors_page(Catalogue::builtin(), None);
        let table = page
            .sections
            .iter()
            .flat_map(|s| &s.blocks)
            .find_map(|b| match b {
                Block::Table(t) if t.head[0] == "code" => Some(t.clone()),
                _ => None,
            })
            .expect("the codes table");
        table
            .rows
            .iter()
            .map(|r| {
                (
                    r[0].text.parse().unwrap(),
                    r[1].text.clone(),
                    r[2].text.clone(),
                    r[3].text.clone(),
                )
            })
            .collect()
    }

    #[test]
    fn retriable_says_what_kafka_clients_do() {
        // Facts of Kafka's client library: which exceptions are retriable.
        let known = [
            (-1, "UNKNOWN_SERVER_ERROR", "no"),
            (3, "UNKNOWN_TOPIC_OR_PARTITION", "yes"),
            (6, "NOT_LEADER_OR_FOLLOWER", "yes"),
            (7, "REQUEST_TIMED_OUT", "yes"),
            (10, "MESSAGE_TOO_LARGE", "no"),
            (14, "COORDINATOR_LOAD_IN_PROGRESS", "yes"),
            (15, "COORDINATOR_NOT_AVAILABLE", "yes"),
            (16, "NOT_COORDINATOR", "yes"),
            (19, "NOT_ENOUGH_REPLICAS", "yes"),
            (22, "ILLEGAL_GENERATION", "no"),
            (25, "UNKNOWN_MEMBER_ID", "no"),
            (27, "REBALANCE_IN_PROGRESS", "no: the member rejoins"),
            (29, "TOPIC_AUTHORIZATION_FAILED", "no"),
            (35, "UNSUPPORTED_VERSION", "no"),
            (47, "INVALID_PRODUCER_EPOCH", "no"),
            (51, "CONCURRENT_TRANSACTIONS", "yes"),
            (58, "SASL_AUTHENTICATION_FAILED", "no"),
            (100, "UNKNOWN_TOPIC_ID", "yes"),
        ];
        let rows = rows();
        for (code, name, retriable) in known {
            let row = rows.iter().find(|r| r.0 == code).expect("a row per code");
            assert_eq!(
                (row.1.as_str(), row.2.as_str()),
                (name, retriable),
                "{code}"
            );
        }
        assert_eq!(
            rows.iter().find(|r| r.0 == 0).unwrap().2,
            "-",
            "NONE is no error"
        );
    }

    #[test]
    fn only_from_names_the_first_version_that_can_return_it() {
        let rows = rows();
        let of = |code: i16| rows.iter().find(|r| r.0 == code).unwrap().3.clone();
        assert_eq!(of(79), "JoinGroup v4+");
        assert!(of(70).contains("Fetch v7+"), "{}", of(70));
        assert!(of(45).contains("Produce v3+ (a producer id)"));
        assert_eq!(of(6), "-");
    }

    #[test]
    fn carriers_list_each_error_code_field_with_its_versions() {
        let t = carriers(Catalogue::builtin(), None);
        let row = |name: &str| {
            t.rows
                .iter()
                .find(|r| r[0].text == name)
                .map(|r| r[1].text.clone())
                .unwrap_or_default()
        };
        assert_eq!(
            row("Produce"),
            "Responses.PartitionResponses.ErrorCode (0-13)"
        );
        assert_eq!(
            row("Fetch"),
            "Responses.Partitions.ErrorCode (0-18); ErrorCode (7-18)"
        );
        assert!(row("JoinGroup").starts_with("ErrorCode (0-"));
        assert_eq!(t.rows[0][0].link.as_deref(), Some("api/Produce"));
    }
}
