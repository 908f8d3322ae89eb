//! `kwire check`'s findings as text lines (aligned like `capture --list`) or
//! JSON lines, written as they are found.

use crate::analysis::check::{Finding, Rule, Tally};
use crate::decode::Direction;
use crate::protocol::meanings::utc_micros;
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use serde_json::{json, Value as Json};
use std::io::{self, Write};

/// One finding as a text line: frame, time, connection and direction, API,
/// correlation id, offset, severity, rule and message.
pub fn write_text(out: &mut impl Write, cat: &Catalogue, f: &Finding) -> io::Result<()> {
    let frame = f
        .frame
        .map_or_else(|| "    -".to_string(), |n| format!("{n:>5}"));
    let time = f
        .time
        .and_then(|t| utc_micros((t * 1e6).round().max(0.0) as u64))
        .unwrap_or_else(|| "-".into());
    let conn = f.conn.map_or_else(String::new, |c| format!(" conn {c}"));
    let arrow = match f.direction {
        Some(Direction::Request) => " →",
        Some(Direction::Response) => " ←",
        None => "",
    };
    let api = match (f.api_key, f.api_version) {
        (Some(k), v) => {
            let name = cat
                .api_name(k)
                .map_or_else(|| format!("api {k}"), str::to_string);
            v.map_or(name.clone(), |v| format!("{name} v{v}"))
        }
        (None, _) if f.frame.is_some() => "?".into(),
        (None, _) => String::new(),
    };
    let corr = f
        .correlation_id
        .map_or_else(String::new, |c| format!(" corr={c}"));
    let offset = f
        .offset
        .map_or_else(String::new, |o| format!(" @0x{o:04x}"));
    let sev = f.severity().as_str();
    writeln!(
        out,
        "{frame} {time}{conn}{arrow} {api}{corr}{offset} {sev} {}: {}",
        f.rule.id(),
        sanitize(&f.message)
    )
}

/// One finding as a JSON object on a line of its own.
pub fn write_json(out: &mut impl Write, f: &Finding) -> io::Result<()> {
    let v = json!({
        "frame": f.frame,
        "time": f.time,
        "conn": f.conn,
        "direction": f.direction.map(|d| d.as_str()),
        "api_key": f.api_key,
        "api_version": f.api_version,
        "correlation_id": f.correlation_id,
        "offset": f.offset,
        "rule": f.rule.id(),
        "severity": f.severity().as_str(),
        "message": f.message,
    });
    writeln!(out, "{}", crate::render::json::to_text(&v))
}

/// The closing line: how many frames were checked and what was found.
pub fn summary(frames: usize, tally: &Tally) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{} checked: {}, {}, {}",
        plural(frames, "frame", "frames"),
        plural(tally.errors, "error", "errors"),
        plural(tally.warnings, "warning", "warnings"),
        plural(tally.notes, "note", "notes")
    )
}

/// The rules as a table (`kwire check --rules`), or as JSON.
pub fn rules_text() -> String {
    let mut s = String::new();
    for (_, id, sev, what) in Rule::ALL {
        s += &format!("{id:<24} {:<8} {what}\n", sev.as_str());
    }
    s
}

pub fn rules_json() -> Json {
    Json::Array(
        Rule::ALL
            .iter()
            .map(|(_, id, sev, what)| json!({"rule": id, "severity": sev.as_str(), "checks": what}))
            .collect(),
    )
}
