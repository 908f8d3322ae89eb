//! `kwire apis`: every API's facts ([`crate::docs::apis::api_facts`]) as
//! JSON or as a table, a row an API.

use crate::docs::apis::api_facts;
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use serde_json::Value;
use std::io::{self, Write};

/// The facts of every API the catalogue defines; with a release, those it defines.
pub fn apis_facts(cat: &Catalogue, release: Option<&str>) -> Vec<Value> {
    cat.api_keys()
        .into_iter()
        .filter_map(|k| api_facts(cat, k, release))
        .filter(|f| release.is_none() || !f["releases"].as_array().is_some_and(|r| r.is_empty()))
        .collect()
}

/// The facts as a table: key, name, versions, flexible versions, header
/// versions, deprecated and unstable versions, and the releases defining
/// each API (`3.9-4.3` for a run of three or more). Names and releases may
/// come from loaded definitions: escaped.
pub fn write_table(out: &mut impl Write, facts: &[Value]) -> io::Result<()> {
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
    all.sort_by_key(|r| crate::schema::catalogue::release_order(r));
    all.dedup();
    // Names and releases may come from loaded definitions: escaped.
    for f in facts {
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
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_three_releases_or_more_is_a_range() {
        let all = ["3.9", "4.0", "4.1", "4.2", "4.3"];
        assert_eq!(release_runs(&["4.0", "4.1", "4.2"], &all), "4.0-4.2");
        assert_eq!(release_runs(&["4.0", "4.1"], &all), "4.0 4.1");
        assert_eq!(release_runs(&["3.9", "4.1", "4.2"], &all), "3.9 4.1 4.2");
    }

    #[test]
    fn the_table_has_a_row_an_api_under_its_heading() {
        let cat = Catalogue::builtin();
        let facts = apis_facts(cat, Some("4.0"));
        let mut out = Vec::new();
        write_table(&mut out, &facts).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with(" key  name"), "{}", lines[0]);
        assert_eq!(lines.len(), facts.len() + 1);
        let produce = lines
            .iter()
            .find(|l| l.starts_with("   0  Produce "))
            .unwrap();
        assert!(produce.ends_with("4.0"), "{produce}");
    }
}
