//! `kwire apis`: every API with its versions, flexible versions, header
//! versions, deprecated and unstable versions, and the releases defining it.

use super::exit;
use clap::{Args, ValueEnum};
use kwire::docs::apis::api_facts;
use kwire::render::json::to_text;
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use serde_json::Value;
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
