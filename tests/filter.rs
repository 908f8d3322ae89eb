//! Display filters end to end: on every shipped capture, the frames
//! `capture --json --filter EXPR` selects are those the test works out from
//! kwire's unfiltered JSON (each frame's header and body values, exchanges
//! paired by connection and correlation id, an exchange selected when its
//! request or response passes), not a hand-copied list. Also: `stats`
//! agrees, errors point at their place, and `kwire filter` lists fields.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::process::{Command, Output};

fn kwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KWIRE_DEFS")
        .env_remove("COLUMNS")
        .output()
        .expect("run kwire")
}

fn captures() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures");
    let mut out = Vec::new();
    for dir in [root.clone(), root.join("diagnosis"), root.join("tls")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.to_string_lossy().to_string();
            // The cleartext twins of the TLS captures hold the same traffic.
            if name.ends_with(".pcap") && !name.contains("-clear") || name.ends_with("-clear.pcap")
            {
                out.push(name);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 8, "{out:?}");
    out
}

fn frames(capture: &str, filter: Option<&str>) -> Vec<Value> {
    let mut args = vec!["capture", capture, "--json"];
    if let Some(f) = filter {
        args.extend(["--filter", f]);
    }
    let o = kwire(&args);
    let code = o.status.code().unwrap();
    // 2: the capture holds frames that do not decode (they are in the JSON, with their error).
    assert!(
        code == 0 || code == 2 || (filter.is_some() && code == 1 && o.stdout.is_empty()),
        "{args:?}: {code} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn number(f: &Value) -> u64 {
    f["capture"]["frame"].as_u64().unwrap()
}

/// Every value under `v` whose path of object keys ends with `suffix`
/// (arrays are passed through: their elements are the field's values).
fn values_at<'v>(v: &'v Value, path: &mut Vec<String>, suffix: &[&str], out: &mut Vec<&'v Value>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(k.clone());
                let ends = path.len() >= suffix.len()
                    && path[path.len() - suffix.len()..]
                        .iter()
                        .zip(suffix)
                        .all(|(a, b)| a == b);
                if ends {
                    match x {
                        Value::Array(items) => out.extend(items.iter()),
                        x => out.push(x),
                    }
                }
                values_at(x, path, suffix, out);
                path.pop();
            }
        }
        Value::Array(items) => {
            for x in items {
                values_at(x, path, suffix, out);
            }
        }
        _ => {}
    }
}

/// The values of a field of a frame's header and body (records left out: the
/// language does not reach into record data).
fn field<'v>(f: &'v Value, suffix: &[&str]) -> Vec<&'v Value> {
    let mut out = Vec::new();
    for part in ["header", "body"] {
        let mut path = Vec::new();
        values_at(&f[part], &mut path, suffix, &mut out);
    }
    out
}

type Pass = fn(&Value) -> bool;

/// Exchanges as (request, response) frame numbers, paired as kwire pairs them.
fn exchanges(all: &[Value]) -> Vec<Vec<usize>> {
    let mut open: HashMap<(u64, i64), usize> = HashMap::new();
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, f) in all.iter().enumerate() {
        let conn = f["capture"]["conn"].as_u64().unwrap();
        let corr = f["header"]["CorrelationId"].as_i64();
        match (f["kind"].as_str(), corr) {
            (Some("request"), Some(c)) => {
                open.insert((conn, c), out.len());
                out.push(vec![i]);
            }
            (Some("response"), Some(c)) => match open.remove(&(conn, c)) {
                Some(x) => out[x].push(i),
                None => out.push(vec![i]),
            },
            _ => out.push(vec![i]),
        }
    }
    out
}

fn expected(all: &[Value], pass: Pass) -> BTreeSet<u64> {
    exchanges(all)
        .into_iter()
        .filter(|ex| ex.iter().any(|&i| pass(&all[i])))
        .flatten()
        .map(|i| number(&all[i]))
        .collect()
}

fn int_at(f: &Value, suffix: &[&str], want: impl Fn(i64) -> bool) -> bool {
    field(f, suffix)
        .iter()
        .any(|v| v.as_i64().is_some_and(&want))
}

fn text_at(f: &Value, suffix: &[&str], want: impl Fn(&str) -> bool) -> bool {
    field(f, suffix)
        .iter()
        .any(|v| v.as_str().is_some_and(&want))
}

fn api(f: &Value) -> Option<&str> {
    f["api_name"].as_str()
}

#[test]
fn selections_agree_with_the_json_on_every_shipped_capture() {
    let cases: Vec<(&str, Pass)> = vec![
        ("ErrorCode != 0", |f| int_at(f, &["ErrorCode"], |c| c != 0)),
        ("ErrorCode == 0", |f| int_at(f, &["ErrorCode"], |c| c == 0)),
        ("not ErrorCode == 0", |f| {
            !int_at(f, &["ErrorCode"], |c| c == 0)
        }),
        ("ErrorCode", |f| {
            !field(f, &["ErrorCode"]).iter().all(|v| v.is_null())
        }),
        ("Partitions.PartitionIndex >= 1", |f| {
            int_at(f, &["Partitions", "PartitionIndex"], |p| p >= 1)
        }),
        ("body.Topics.Partitions.ErrorCode == 0", |f| {
            let mut out = Vec::new();
            values_at(
                &f["body"],
                &mut Vec::new(),
                &["Topics", "Partitions", "ErrorCode"],
                &mut out,
            );
            // Anchored: only the path from the body's top.
            out.clear();
            if let Some(ts) = f["body"]["Topics"].as_array() {
                for t in ts {
                    for p in t["Partitions"].as_array().into_iter().flatten() {
                        out.push(&p["ErrorCode"]);
                    }
                }
            }
            out.iter().any(|v| v.as_i64() == Some(0))
        }),
        ("MaxWaitMs > 400", |f| {
            int_at(f, &["MaxWaitMs"], |m| m > 400)
        }),
        ("header.ClientId contains \"producer\"", |f| {
            f["header"]["ClientId"]
                .as_str()
                .is_some_and(|c| c.contains("producer"))
        }),
        ("ClientId matches \"^kwire-[a-z]+$\"", |f| {
            text_at(f, &["ClientId"], |c| {
                c.strip_prefix("kwire-")
                    .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase()))
            })
        }),
        ("ApiKey in {0, 1, 3}", |f| {
            int_at(f, &["ApiKey"], |k| [0, 1, 3].contains(&k))
        }),
        ("api == Produce or api == Fetch", |f| {
            matches!(api(f), Some("Produce" | "Fetch"))
        }),
        ("direction == response and api == Metadata", |f| {
            f["kind"] == "response" && api(f) == Some("Metadata")
        }),
        ("version >= 10 and not api == ApiVersions", |f| {
            f["api_version"].as_i64().is_some_and(|v| v >= 10) && api(f) != Some("ApiVersions")
        }),
        ("api in {JoinGroup, SyncGroup} and MemberId == \"\"", |f| {
            matches!(api(f), Some("JoinGroup" | "SyncGroup"))
                && text_at(f, &["MemberId"], str::is_empty)
        }),
        ("Name == \"orders\" || Topic == \"orders\"", |f| {
            text_at(f, &["Name"], |n| n == "orders") || text_at(f, &["Topic"], |n| n == "orders")
        }),
    ];
    let mut checked = 0;
    let mut nonempty = 0;
    for capture in captures() {
        let keylog = capture.replace(".pcap", ".keylog");
        if !capture.ends_with("-clear.pcap") && Path::new(&keylog).exists() {
            continue;
        }
        let all = frames(&capture, None);
        for (expr, pass) in &cases {
            let want = expected(&all, *pass);
            let got: BTreeSet<u64> = frames(&capture, Some(expr)).iter().map(number).collect();
            assert_eq!(got, want, "{capture}: {expr}");
            checked += 1;
            nonempty += usize::from(!want.is_empty());
        }
    }
    // The cases select something somewhere: a filter that selects nothing passes too easily.
    assert!(checked >= 8 * 15, "{checked}");
    assert!(
        nonempty >= checked / 3,
        "{nonempty} of {checked} selections were empty"
    );
}

#[test]
fn exchange_facts_select_as_the_words_do() {
    let c = "samples/captures/confluent-kafka.pcap";
    for (words, expr) in [
        (vec!["--api", "Produce"], "api == Produce"),
        (vec!["--error"], "error"),
        (
            vec!["--error", "MEMBER_ID_REQUIRED"],
            "error == MEMBER_ID_REQUIRED",
        ),
        (vec!["--min-latency", "1"], "latency >= 1ms"),
        (
            vec!["--client-id", "kwire-admin"],
            "client_id == \"kwire-admin\"",
        ),
        (vec!["--topic", "orders"], "topic == orders"),
        (vec!["--conn", "3"], "conn == 3"),
    ] {
        let mut a = vec!["capture", c, "--list"];
        a.extend(&words);
        let by_words = kwire(&a);
        let by_expr = kwire(&["capture", c, "--list", "--filter", expr]);
        assert_eq!(by_words.status.code(), by_expr.status.code(), "{expr}");
        assert_eq!(
            String::from_utf8_lossy(&by_words.stdout),
            String::from_utf8_lossy(&by_expr.stdout),
            "{expr}"
        );
        assert!(!by_expr.stdout.is_empty(), "{expr} selects something");
        let stats_words = kwire(&[&["stats", c][..], &words[..]].concat());
        let stats_expr = kwire(&["stats", c, "--filter", expr]);
        assert_eq!(stats_words.stdout, stats_expr.stdout, "stats {expr}");
    }
}

#[test]
fn a_bad_expression_exits_2_with_a_caret_under_the_place() {
    let c = "samples/captures/confluent-kafka.pcap";
    for (expr, line, caret) in [
        (
            "ErrorCod != 0",
            "no field or fact is named ErrorCod; did you mean ErrorCode?",
            "^^^^^^^^",
        ),
        (
            "api == Prodcue",
            "no API is named Prodcue; did you mean Produce?",
            "       ^^^^^^^",
        ),
        (
            "ErrorCode >",
            "the expression ends here: expected a value",
            "           ^",
        ),
        (
            "latency > 5 parsecs",
            "unexpected `parsecs`",
            "            ^^^^^^^",
        ),
        (
            "GroupId > 5",
            "GroupId is a string: this value cannot be compared with it",
            "          ^",
        ),
        (
            "body.Partitions.ErrorCode == 0",
            "no field of the body is at body.Partitions.ErrorCode",
            "^",
        ),
    ] {
        for cmd in ["capture", "stats", "inventory", "report"] {
            let mut args = vec![cmd, c, "--filter", expr];
            if cmd == "report" {
                args.extend(["--out", "/dev/null"]);
            }
            let o = kwire(&args);
            assert_eq!(o.status.code(), Some(2), "{cmd} {expr}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(line), "{cmd} {expr}: {err}");
            assert!(
                err.contains(&format!("\n  {expr}\n  {caret}")),
                "{cmd} {expr}: {err}"
            );
            assert!(o.stdout.is_empty(), "{cmd} {expr}");
        }
    }
}

#[test]
fn fields_are_listed_per_api_with_their_versions() {
    let o = kwire(&["filter", "--fields", "JoinGroup"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    let line = |path: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(path))
            .unwrap_or_else(|| panic!("{path} in {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        line("body.GroupInstanceId"),
        ["body.GroupInstanceId", "string", "v5-9"]
    );
    assert_eq!(
        line("body.Members.MemberId"),
        ["body.Members.MemberId", "string", "v0-9"]
    );
    assert_eq!(
        line("body.SkipAssignment"),
        ["body.SkipAssignment", "bool", "v9"]
    );
    // Every listed path is a name the language takes.
    for l in text.lines().filter(|l| l.starts_with("  ")) {
        let path = l.split_whitespace().next().unwrap();
        let o = kwire(&["filter", path]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{path}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

/// Each frame's records, from `kwire records --format json`: (key, value,
/// headers, timestamp) as bytes.
type Rec = (
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Option<Vec<u8>>, Option<Vec<u8>>)>,
    Option<i64>,
);

type RecPass<'a> = Box<dyn Fn(&Rec) -> bool + 'a>;

fn records_by_frame(capture: &str) -> HashMap<u64, Vec<Rec>> {
    let o = kwire(&["records", capture, "--format", "json"]);
    let hex = |v: &Value| v.as_str().map(|h| hex::decode(h).unwrap());
    let mut out: HashMap<u64, Vec<Rec>> = HashMap::new();
    for line in String::from_utf8(o.stdout).unwrap().lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let Some(frame) = r["frame"].as_u64() else {
            continue;
        };
        if r.get("key_hex").is_none() && r.get("value_hex").is_none() && r.get("key").is_none() {
            continue;
        }
        let headers = r["headers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| {
                let key = h["key"].as_str().map(|k| k.as_bytes().to_vec());
                (key, hex(&h["value_hex"]))
            })
            .collect();
        out.entry(frame).or_default().push((
            hex(&r["key_hex"]),
            hex(&r["value_hex"]),
            headers,
            r["timestamp"].as_i64(),
        ));
    }
    out
}

#[test]
fn record_parts_select_as_the_records_view_lists_them() {
    let contains = |b: &Option<Vec<u8>>, n: &[u8]| {
        b.as_deref()
            .is_some_and(|b| b.windows(n.len()).any(|w| w == n))
    };
    let mut nonempty = 0;
    for capture in [
        "samples/captures/confluent-kafka.pcap",
        "samples/captures/kafka-python.pcap",
    ] {
        let all = frames(capture, None);
        let recs = records_by_frame(capture);
        assert!(!recs.is_empty(), "{capture} has records");
        let latest = recs.values().flatten().filter_map(|r| r.3).max().unwrap();
        let cases: Vec<(String, RecPass<'_>)> = vec![
            (
                "record.key contains \"gzip\"".into(),
                Box::new(|r: &Rec| contains(&r.0, b"gzip")),
            ),
            (
                "record.value contains \"widget\"".into(),
                Box::new(|r: &Rec| contains(&r.1, b"widget")),
            ),
            (
                "record.key matches \"-[0-9]$\"".into(),
                Box::new(|r: &Rec| {
                    r.0.as_deref().is_some_and(|k| {
                        k.len() >= 2 && k[k.len() - 2] == b'-' && k[k.len() - 1].is_ascii_digit()
                    })
                }),
            ),
            (
                "record.headers.key == \"source\"".into(),
                Box::new(|r: &Rec| r.2.iter().any(|h| h.0.as_deref() == Some(b"source"))),
            ),
            (
                "record.headers.value contains \"lz4\"".into(),
                Box::new(|r: &Rec| r.2.iter().any(|h| contains(&h.1, b"lz4"))),
            ),
            (
                format!("record.timestamp >= {latest}"),
                Box::new(move |r: &Rec| r.3.is_some_and(|t| t >= latest)),
            ),
            ("record.key".into(), Box::new(|r: &Rec| r.0.is_some())),
        ];
        for (expr, pass) in &cases {
            let by_frame = |f: &Value| recs.get(&number(f)).is_some_and(|rs| rs.iter().any(pass));
            let want: BTreeSet<u64> = exchanges(&all)
                .into_iter()
                .filter(|ex| ex.iter().any(|&i| by_frame(&all[i])))
                .flatten()
                .map(|i| number(&all[i]))
                .collect();
            let got: BTreeSet<u64> = frames(capture, Some(expr)).iter().map(number).collect();
            assert_eq!(got, want, "{capture}: {expr}");
            nonempty += usize::from(!want.is_empty());
        }
    }
    assert!(nonempty >= 8, "{nonempty}");
}

#[test]
fn records_filter_selects_the_records_the_listing_has() {
    type RowPass<'a> = Box<dyn Fn(&Value) -> bool + 'a>;
    let c = "samples/captures/confluent-kafka.pcap";
    let rows = |filter: Option<&str>| -> Vec<Value> {
        let mut a = vec!["records", c, "--format", "json"];
        if let Some(f) = filter {
            a.extend(["--filter", f]);
        }
        let o = kwire(&a);
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = rows(None);
    let text = |r: &Value, k: &str| r[k].as_str().unwrap_or("").to_string();
    let header_values = |r: &Value| -> Vec<String> {
        r["headers"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| text(h, "value"))
            .collect()
    };
    let cases: Vec<(&str, RowPass<'_>)> = vec![
        (
            "record.key contains \"gzip\"",
            Box::new(|r| text(r, "key").contains("gzip")),
        ),
        (
            "api == Fetch and record.headers.value contains \"lz4\"",
            Box::new(|r| {
                r["api_name"] == "Fetch" && header_values(r).iter().any(|v| v.contains("lz4"))
            }),
        ),
        (
            "direction == request and not record.value contains \"widget\"",
            Box::new(|r| r["direction"] == "request" && !text(r, "value").contains("widget")),
        ),
        (
            "topic == orders and frame == 99",
            Box::new(|r| r["frame"] == 99),
        ),
    ];
    for (expr, pass) in cases {
        let want: Vec<&Value> = all.iter().filter(|r| pass(r)).collect();
        let got = rows(Some(expr));
        assert_eq!(got.iter().collect::<Vec<_>>(), want, "{expr}");
        assert!(
            !want.is_empty() || expr.contains("not"),
            "{expr} selects something"
        );
    }
    let o = kwire(&["records", c, "--filter", "latency > 1ms"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not latency"));
}

fn findings(capture: &str, filter: Option<&str>) -> Vec<Value> {
    let mut args = vec!["check", capture, "--format", "json"];
    if let Some(f) = filter {
        args.extend(["--filter", f]);
    }
    let o = kwire(&args);
    let code = o.status.code().unwrap();
    // 3: some finding is an error; 2: input damage.
    assert!(
        [0, 2, 3].contains(&code),
        "{args:?}: {code} {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `check --filter` keeps the findings that name a frame the same filter
/// selects in `capture` (and, when it names a connection only, the
/// frameless findings of that connection), worked out here from the two
/// unfiltered outputs.
#[test]
fn check_keeps_the_findings_about_the_frames_selected() {
    let mut kept_some = 0;
    // TLS captures without their keys hold no frames to check.
    for capture in captures()
        .into_iter()
        .filter(|c| !c.contains("/tls/") || c.ends_with("-clear.pcap"))
    {
        let all = findings(&capture, None);
        for expr in [
            "api == ListOffsets",
            "api == JoinGroup and direction == response",
            "conn == 1",
            "error",
            "not api == Metadata",
            "latency > 50ms",
        ] {
            let selected: BTreeSet<u64> = frames(&capture, Some(expr)).iter().map(number).collect();
            let conn_only = expr.starts_with("conn ==");
            let mut want: Vec<String> = all
                .iter()
                .filter(|f| match f["frames"].as_array() {
                    Some(fr) if !fr.is_empty() => {
                        fr.iter().any(|i| selected.contains(&i.as_u64().unwrap()))
                    }
                    _ => conn_only && f["conn"] == 1,
                })
                .map(Value::to_string)
                .collect();
            let mut got: Vec<String> = findings(&capture, Some(expr))
                .iter()
                .map(Value::to_string)
                .collect();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{capture}: {expr}");
            kept_some += usize::from(!want.is_empty() && want.len() < all.len());
        }
    }
    assert!(kept_some >= 4, "{kept_some}");
    // Not a capture: said, status 2.
    let o = kwire(&["check", "samples/produce-v9-request.hex", "-Y", "error"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not a capture"));
}

/// `finding` and `finding == RULE` select the exchanges with a frame that a
/// finding of `kwire check` (of that rule) names, worked out from check's
/// JSON and the capture's; a stream cannot be read twice for them: said.
#[test]
fn finding_selects_the_exchanges_check_names() {
    let mut tested = 0;
    for capture in captures()
        .into_iter()
        .filter(|c| !c.contains("/tls/") || c.ends_with("-clear.pcap"))
    {
        let found = findings(&capture, None);
        let mut rules: Vec<Option<&str>> = found.iter().map(|f| f["rule"].as_str()).collect();
        rules.sort();
        rules.dedup();
        rules.push(None);
        let all = frames(&capture, None);
        for rule in rules {
            let named: BTreeSet<u64> = found
                .iter()
                .filter(|f| rule.is_none() || f["rule"].as_str() == rule)
                .flat_map(|f| f["frames"].as_array().unwrap().iter())
                .map(|i| i.as_u64().unwrap())
                .collect();
            let want: BTreeSet<u64> = exchanges(&all)
                .into_iter()
                .filter(|ex| ex.iter().any(|&i| named.contains(&number(&all[i]))))
                .flatten()
                .map(|i| number(&all[i]))
                .collect();
            let expr = match rule {
                Some(r) => format!("finding == {r}"),
                None => "finding".into(),
            };
            let got: BTreeSet<u64> = frames(&capture, Some(&expr)).iter().map(number).collect();
            assert_eq!(got, want, "{capture}: {expr}");
            tested += usize::from(!want.is_empty());
        }
    }
    assert!(tested >= 6, "{tested}");
    // A rule's name as a bare word with underscores, in quotes, or unknown.
    let c = "samples/captures/diagnosis/old-librdkafka.pcap";
    let by = |e: &str| -> Vec<u64> { frames(c, Some(e)).iter().map(number).collect() };
    assert_eq!(by("finding == retry_loop"), by("finding == \"retry-loop\""));
    let o = kwire(&["capture", c, "--list", "-Y", "finding == no-such-rule"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no rule is named no-such-rule"));
    // From a stream: refused, with why.
    let o = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", "-", "--list", "-Y", "finding"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::fs::File::open(Path::new(env!("CARGO_MANIFEST_DIR")).join(c)).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("read twice"));
}

/// A frame's JSON without where it came from (frame numbers, times and
/// connection numbers differ in a capture written back).
fn without_provenance(f: &Value) -> Value {
    let mut f = f.clone();
    f.as_object_mut().unwrap().remove("capture");
    f
}

#[test]
fn write_selected_writes_the_frames_the_filter_selects() {
    let out = std::env::temp_dir().join(format!("kwire-selected-{}.pcapng", std::process::id()));
    let out = out.display().to_string();
    let filter = "error or api in {Produce, Fetch, JoinGroup}";
    let mut written_somewhere = 0;
    for capture in captures() {
        let mut args = vec!["capture", &capture, "--json"];
        args.extend(["--filter", filter, "--write-selected", &out]);
        let o = kwire(&args);
        let selected: Vec<Value> = String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains(&format!("wrote {} frame", selected.len())),
            "{capture}: {said}"
        );
        if selected.is_empty() {
            continue;
        }
        written_somewhere += 1;
        // Read back, the file holds those frames, values for values, on as many connections.
        let back = frames(&out, None);
        let strip = |v: &[Value]| v.iter().map(without_provenance).collect::<Vec<_>>();
        assert_eq!(strip(&back), strip(&selected), "{capture}");
        let conns = |v: &[Value]| {
            v.iter()
                .map(|f| f["capture"]["conn"].as_u64())
                .collect::<BTreeSet<_>>()
                .len()
        };
        assert_eq!(conns(&back), conns(&selected), "{capture}");
    }
    assert!(written_somewhere >= 4, "{written_somewhere}");
    // The capture being read is never overwritten.
    let first = &captures()[0];
    let before = std::fs::read(first).unwrap();
    let o = kwire(&["capture", first, "--list", "--write-selected", first]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(first).unwrap(), before);
    let _ = std::fs::remove_file(&out);
}

/// A topic id the capture tied to its name (a Metadata response holds both)
/// selects the exchanges of that topic, whether they name it by id or by
/// name: `--topic ID`, `topic == "ID"`, in its hyphenated and Kafka's forms.
/// The Fetch v16 requests 98 and 100 name the topic by id only.
#[test]
fn a_topic_id_tied_to_a_name_selects_that_topic() {
    let capture = "samples/captures/confluent-kafka.pcap";
    let numbers = |args: &[&str]| -> BTreeSet<u64> {
        let mut all = vec!["capture", capture, "--json"];
        all.extend_from_slice(args);
        let o = kwire(&all);
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(|l| number(&serde_json::from_str(l).unwrap()))
            .collect()
    };
    let id = "01a2326b-a0b1-7169-b73c-243f5af8e608";
    let by_id = numbers(&["--topic", id]);
    assert!(by_id.contains(&98) && by_id.contains(&100), "{by_id:?}");
    // The same id as Kafka prints it (URL-safe base64).
    assert_eq!(numbers(&["--topic", "AaIya6CxcWm3PCQ_WvjmCA"]), by_id);
    assert_eq!(numbers(&["-Y", &format!("topic == \"{id}\"")]), by_id);
    let by_name = numbers(&["--topic", "orders"]);
    assert!(by_id.is_subset(&by_name), "{by_id:?} {by_name:?}");
}
