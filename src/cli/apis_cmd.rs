//! `kwire apis`: every API with its versions, flexible versions, header
//! versions, deprecated and unstable versions, and the releases defining it.

use super::exit;
use clap::{Args, ValueEnum};
use kwire::decode::frame::compress_versions;
use kwire::protocol::headers::{request_header_version, response_header_version};
use kwire::render::json::to_text;
use kwire::schema::{Catalogue, MessageKind, MessageSpec};
use kwire::text::escape::sanitize;
use serde_json::{json, Value};
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ApisFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire apis\n  kwire apis --format json\n  kwire --kafka-release 4.0 apis"
)]
pub struct ApisArgs {
    #[arg(long, value_enum, default_value_t = ApisFormat::Text)]
    pub format: ApisFormat,
}

/// Facts about one API, gathered over every release that defines it.
pub fn api_facts(cat: &Catalogue, key: i16, release: Option<&str>) -> Option<Value> {
    let name = cat.api_name(key)?;
    let req: Vec<&MessageSpec> = cat
        .entries_for(MessageKind::Request, key, release)
        .map(|e| e.spec())
        .collect();
    let newest = req.first()?;
    let req_versions = cat.versions(MessageKind::Request, key, release);
    let resp_versions = cat.versions(MessageKind::Response, key, release);
    let mut releases: Vec<String> = cat
        .entries_for(MessageKind::Request, key, release)
        .filter(|e| !e.spec().is_retired())
        .flat_map(|e| e.releases.clone())
        .filter(|r| release.is_none_or(|p| p == r))
        .collect();
    releases.sort_by_key(|r| kwire::schema::catalogue::release_order(r));
    releases.dedup();
    let spec_at = |kind, v| cat.message(kind, key, v, release);
    let header_range = |kind: MessageKind, versions: &[i16]| -> Value {
        let hv: Vec<i16> = versions
            .iter()
            .filter_map(|&v| {
                spec_at(kind, v).map(|s| {
                    if kind == MessageKind::Request {
                        request_header_version(s, v)
                    } else {
                        response_header_version(s, v)
                    }
                })
            })
            .collect();
        json!(compress_versions(&{
            let mut h = hv.clone();
            h.sort_unstable();
            h.dedup();
            h
        }))
    };
    let flexible: Vec<i16> = req_versions
        .iter()
        .copied()
        .filter(|&v| spec_at(MessageKind::Request, v).is_some_and(|s| s.is_flexible(v)))
        .collect();
    let deprecated: Vec<i16> = req_versions
        .iter()
        .copied()
        .filter(|&v| {
            spec_at(MessageKind::Request, v).is_some_and(|s| s.deprecated_versions.contains(v))
        })
        .collect();
    // A version is unstable when the newest definition of it says its top version is.
    let unstable: Vec<i16> = req_versions
        .iter()
        .copied()
        .filter(|&v| {
            spec_at(MessageKind::Request, v)
                .is_some_and(|s| s.latest_version_unstable && s.valid_versions.hi == v)
        })
        .collect();
    Some(json!({
        "api_key": key,
        "api_name": name,
        "request_versions": compress_versions(&req_versions),
        "response_versions": compress_versions(&resp_versions),
        "flexible_versions": compress_versions(&flexible),
        "request_header_versions": header_range(MessageKind::Request, &req_versions),
        "response_header_versions": header_range(MessageKind::Response, &resp_versions),
        "deprecated_versions": compress_versions(&deprecated),
        "unstable_versions": compress_versions(&unstable),
        "listeners": newest.listeners,
        "releases": releases,
        "retired": req_versions.is_empty(),
    }))
}

/// `rel` as text: `3.9-4.3` when it is a run of three or more of `all`'s
/// consecutive releases, else the releases one by one.
fn release_runs(rel: &[&str], all: &[&str]) -> String {
    let start = rel.first().and_then(|r| all.iter().position(|a| a == r));
    match start {
        Some(at) if rel.len() >= 3 && all.get(at..at + rel.len()) == Some(rel) => {
            format!("{}-{}", rel[0], rel[rel.len() - 1])
        }
        _ => rel.join(" "),
    }
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &ApisArgs) -> i32 {
    // Output errors (a closed pipe) end the listing quietly.
    let _ = match args.format {
        ApisFormat::Json => write_apis(cat, release, args, &mut std::io::stdout().lock()),
        ApisFormat::Text => write_apis(cat, release, args, &mut super::width::text_out()),
    };
    exit::OK
}

fn write_apis(
    cat: &Catalogue,
    release: Option<&str>,
    args: &ApisArgs,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let facts: Vec<Value> = cat
        .api_keys()
        .into_iter()
        .filter_map(|k| api_facts(cat, k, release))
        .collect();
    let facts: Vec<Value> = facts
        .into_iter()
        .filter(|f| release.is_none() || !f["releases"].as_array().is_some_and(|r| r.is_empty()))
        .collect();
    match args.format {
        ApisFormat::Json => writeln!(
            out,
            "{}",
            to_text(&serde_json::to_value(&facts).unwrap_or_default())
        )?,
        ApisFormat::Text => {
            // The name column as wide as the longest name, so lines fit 120 columns.
            let nw = facts
                .iter()
                .map(|f| {
                    f["api_name"]
                        .as_str()
                        .map_or(1, |n| sanitize(n).chars().count())
                })
                .max()
                .unwrap_or(4)
                .max(4);
            writeln!(
                out,
                "{:>4}  {:<nw$} {:<10} {:<10} {:<10} {:<8} {:<8} {:<10} {:<8} releases",
                "key",
                "name",
                "request",
                "response",
                "flexible",
                "req hdr",
                "resp hdr",
                "deprecated",
                "unstable"
            )?;
            // Every release in the table, in order: a row's run of them is a range.
            let mut all: Vec<&str> = facts
                .iter()
                .filter_map(|f| f["releases"].as_array())
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            all.sort_by_key(|r| kwire::schema::catalogue::release_order(r));
            all.dedup();
            // Names and releases may come from loaded definitions: escaped.
            for f in &facts {
                let s = |k: &str| {
                    let v = f[k].as_str().unwrap_or("");
                    if v.is_empty() {
                        "-".to_string()
                    } else {
                        sanitize(v)
                    }
                };
                let rel: Vec<&str> = f["releases"]
                    .as_array()
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let retired = if f["retired"] == true {
                    "retired".to_string()
                } else {
                    sanitize(&release_runs(&rel, &all))
                };
                writeln!(
                    out,
                    "{:>4}  {:<nw$} {:<10} {:<10} {:<10} {:<8} {:<8} {:<10} {:<8} {}",
                    f["api_key"].as_i64().unwrap_or_default(),
                    s("api_name"),
                    s("request_versions"),
                    s("response_versions"),
                    s("flexible_versions"),
                    s("request_header_versions"),
                    s("response_header_versions"),
                    s("deprecated_versions"),
                    s("unstable_versions"),
                    retired
                )?;
            }
        }
    }
    Ok(())
}
