//! What a replay came to, as text grouped by API (each exchange that was
//! not the same, with its differences) or as JSON lines, each ending with
//! the summary.

use super::{Outcome, Verdict};
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;

fn api_name(cat: &Catalogue, key: i16) -> String {
    cat.api_name(key)
        .map_or_else(|| format!("api {key}"), str::to_string)
}

fn summary(outcomes: &[Outcome]) -> [(Verdict, usize); 5] {
    [
        Verdict::Same,
        Verdict::Differs,
        Verdict::NoAnswer,
        Verdict::NotSent,
        Verdict::NotCompared,
    ]
    .map(|v| (v, outcomes.iter().filter(|o| o.verdict == v).count()))
}

/// One JSON object per exchange, then one with the summary.
pub fn write_json(
    out: &mut impl Write,
    cat: &Catalogue,
    outcomes: &[Outcome],
) -> std::io::Result<()> {
    for o in outcomes {
        let line = json!({
            "verdict": o.verdict.as_str(),
            "api_name": api_name(cat, o.api_key),
            "api_key": o.api_key,
            "api_version": o.version,
            "conn": o.conn,
            "frames": {"request": o.request_frame, "response": o.response_frame},
            "differences": o.differences.iter().map(|d| json!({
                "path": d.path, "captured": d.captured, "replayed": d.replayed,
            })).collect::<Vec<Value>>(),
            "why": o.why,
            "elapsed_ms": o.elapsed.map(|e| e.as_secs_f64() * 1000.0),
        });
        writeln!(out, "{line}")?;
    }
    let mut counts = serde_json::Map::new();
    counts.insert("exchanges".into(), json!(outcomes.len()));
    for (v, n) in summary(outcomes) {
        counts.insert(v.as_str().into(), json!(n));
    }
    writeln!(out, "{}", json!({ "summary": counts }))
}

/// A compared value as text; an error code with its name.
fn shown(path: &str, v: &Value) -> String {
    let is_error_code = path.rsplit('.').next().is_some_and(|f| f == "ErrorCode");
    match v.as_i64().and_then(|c| i16::try_from(c).ok()) {
        Some(code) if is_error_code => match crate::protocol::error_codes::error_name(code) {
            Some(name) => format!("{code} ({name})"),
            None => code.to_string(),
        },
        _ => v.to_string(),
    }
}

/// By API: how many of each verdict, then each exchange that was not the same.
pub fn write_text(
    out: &mut impl Write,
    cat: &Catalogue,
    outcomes: &[Outcome],
) -> std::io::Result<()> {
    let mut by_api: BTreeMap<String, Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        by_api
            .entry(format!("{} v{}", api_name(cat, o.api_key), o.version))
            .or_default()
            .push(o);
    }
    for (api, list) in &by_api {
        let counts: Vec<String> = summary(&list.iter().map(|o| (*o).clone()).collect::<Vec<_>>())
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(v, n)| format!("{n} {}", v.as_str()))
            .collect();
        writeln!(out, "{}: {}", sanitize(api), counts.join(", "))?;
        for o in list.iter().filter(|o| o.verdict != Verdict::Same) {
            let frames = match o.response_frame {
                Some(r) => format!("frames {} and {r}", o.request_frame),
                None => format!("frame {}", o.request_frame),
            };
            writeln!(
                out,
                "  {} on conn {} ({frames}){}",
                o.verdict.as_str(),
                o.conn,
                o.why
                    .as_deref()
                    .map(|w| format!(": {}", sanitize(w)))
                    .unwrap_or_default()
            )?;
            for d in &o.differences {
                writeln!(
                    out,
                    "    {}: captured {}, replayed {}",
                    sanitize(&d.path),
                    sanitize(&shown(&d.path, &d.captured)),
                    sanitize(&shown(&d.path, &d.replayed))
                )?;
            }
        }
    }
    let parts: Vec<String> = summary(outcomes)
        .iter()
        .map(|(v, n)| format!("{n} {}", v.as_str()))
        .collect();
    writeln!(
        out,
        "{} exchanges replayed: {}",
        outcomes.len(),
        parts.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::compare::Difference;

    fn outcomes() -> Vec<Outcome> {
        let same = Outcome {
            conn: 1,
            api_key: 0,
            version: 9,
            request_frame: 4,
            response_frame: Some(5),
            verdict: Verdict::Same,
            differences: Vec::new(),
            why: None,
            elapsed: Some(std::time::Duration::from_millis(2)),
        };
        let differs = Outcome {
            request_frame: 6,
            response_frame: Some(7),
            verdict: Verdict::Differs,
            differences: vec![Difference {
                path: "Responses[0].PartitionResponses[0].ErrorCode".into(),
                captured: json!(0),
                replayed: json!(6),
            }],
            ..same.clone()
        };
        let lost = Outcome {
            api_key: 3,
            version: 12,
            request_frame: 8,
            response_frame: None,
            verdict: Verdict::NoAnswer,
            why: Some("no answer within 5 s".into()),
            elapsed: None,
            ..same.clone()
        };
        vec![same, differs, lost]
    }

    #[test]
    fn text_groups_by_api_and_names_error_codes() {
        let mut out = Vec::new();
        write_text(&mut out, Catalogue::builtin(), &outcomes()).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Metadata v12: 1 no-answer\n  no-answer on conn 1 (frame 8): no answer within 5 s\n\
             Produce v9: 1 same, 1 differs\n  differs on conn 1 (frames 6 and 7)\n    \
             Responses[0].PartitionResponses[0].ErrorCode: captured 0 (NONE), replayed 6 (NOT_LEADER_OR_FOLLOWER)\n\
             3 exchanges replayed: 1 same, 1 differs, 1 no-answer, 0 not-sent, 0 not-compared\n"
        );
    }

    #[test]
    fn json_has_a_line_per_exchange_then_the_summary() {
        let mut out = Vec::new();
        write_json(&mut out, Catalogue::builtin(), &outcomes()).unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[1]["verdict"], "differs");
        assert_eq!(lines[1]["frames"], json!({"request": 6, "response": 7}));
        assert_eq!(lines[1]["differences"][0]["replayed"], 6);
        assert_eq!(lines[2]["api_name"], "Metadata");
        assert_eq!(lines[3]["summary"]["exchanges"], 3);
        assert_eq!(lines[3]["summary"]["no-answer"], 1);
    }
}
