//! `kwire export`: the tables agree with kwire's other views on every
//! shipped capture (every request and response frame in one exchange row,
//! every non-zero error code counted once, every record as `records` lists
//! it, every finding as `check` gives it, every connection with frames), a
//! filter keeps what it selects, and the Parquet files read back with DuckDB
//! hold the same rows as the JSON-lines export.

mod common;

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kwire(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("KWIRE_DEFS")
        .output()
        .expect("run kwire")
}

/// `kwire export INPUTS… --format FORMAT --out DIR EXTRA…`, which must
/// succeed; what it said on stderr.
fn export(dir: &Path, format: &str, inputs: &[&str], extra: &[&str]) -> String {
    let mut args = vec!["export", "--format", format, "--out", dir.to_str().unwrap()];
    args.extend(inputs);
    args.extend(extra);
    let o = kwire(&args);
    let said = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{said}");
    said
}

fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kwire-export-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Every row of a table, from every capture's file.
fn rows(dir: &Path, table: &str) -> Vec<Value> {
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir.join(table))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        assert_eq!(
            f.extension().unwrap(),
            "jsonl",
            "{f:?}: a partial file left"
        );
        out.extend(json_lines(&std::fs::read(f).unwrap()));
    }
    out
}

fn shipped() -> Vec<String> {
    let mut out = Vec::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures");
    for dir in [root.clone(), root.join("diagnosis"), root.join("tls")] {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            if matches!(ext, "pcap" | "pcapng") {
                let rel = p.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap();
                out.push(rel.display().to_string());
            }
        }
    }
    out.sort();
    assert!(out.len() >= 20, "{out:?}");
    out
}

/// The non-zero values of every `ErrorCode` member in a frame's body.
fn error_codes(v: &Value, out: &mut BTreeSet<i64>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k.ends_with("ErrorCode") {
                    if let Some(n) = x.as_i64().filter(|&n| n != 0) {
                        out.insert(n);
                    }
                }
                error_codes(x, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| error_codes(x, out)),
        _ => {}
    }
}

fn of<'v>(rows: &'v [Value], capture: &str) -> Vec<&'v Value> {
    rows.iter().filter(|r| r["capture"] == capture).collect()
}

#[test]
fn every_table_agrees_with_capture_records_and_check() {
    let dir = scratch("agree");
    let captures = shipped();
    let inputs: Vec<&str> = captures.iter().map(String::as_str).collect();
    let said = export(&dir, "ndjson", &inputs, &[]);
    assert!(
        said.contains(&format!("exported {} captures", captures.len())),
        "{said}"
    );
    let (exchanges, connections) = (rows(&dir, "exchanges"), rows(&dir, "connections"));
    let (records, findings) = (rows(&dir, "records"), rows(&dir, "findings"));
    let (mut frames_seen, mut records_seen, mut errors_seen) = (0, 0, 0);
    for capture in &captures {
        // Kafka frames only (a TLS connection's note is an object too).
        let frames: Vec<Value> = json_lines(&kwire(&["capture", capture, "--json"]).stdout)
            .into_iter()
            .filter(|f| f["capture"]["frame"].is_u64())
            .collect();
        let ex = of(&exchanges, capture);
        // Every request and every response in exactly one row.
        let column = |name: &str| {
            let mut v: Vec<u64> = ex.iter().filter_map(|r| r[name].as_u64()).collect();
            v.sort();
            v
        };
        let numbered = |kind: &str| {
            let mut v: Vec<u64> = frames
                .iter()
                .filter(|f| f["kind"] == kind)
                .map(|f| f["capture"]["frame"].as_u64().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(column("request_frame"), numbered("request"), "{capture}");
        assert_eq!(column("response_frame"), numbered("response"), "{capture}");
        frames_seen += frames.len();
        // Every non-zero error code of a response, once, in its row.
        for f in frames.iter().filter(|f| f["kind"] == "response") {
            let n = f["capture"]["frame"].as_u64().unwrap();
            let row = ex.iter().find(|r| r["response_frame"] == n).unwrap();
            let mut want = BTreeSet::new();
            error_codes(&f["body"], &mut want);
            let got: BTreeSet<i64> = row["error_codes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_i64().unwrap())
                .collect();
            assert_eq!(got, want, "{capture} frame {n}");
            errors_seen += want.len();
        }
        // Every connection with frames, once.
        let conns: BTreeSet<u64> = frames
            .iter()
            .map(|f| f["capture"]["conn"].as_u64().unwrap())
            .collect();
        let rows_conns: Vec<u64> = of(&connections, capture)
            .iter()
            .map(|r| r["conn"].as_u64().unwrap())
            .collect();
        assert_eq!(rows_conns.len(), conns.len(), "{capture}");
        assert_eq!(rows_conns.into_iter().collect::<BTreeSet<_>>(), conns);
        // Every record as `kwire records` lists it.
        let listed = json_lines(&kwire(&["records", capture, "--format", "json"]).stdout);
        let listed: Vec<_> = listed
            .iter()
            .filter(|r| r.get("offset").is_some())
            .collect();
        let exported = of(&records, capture);
        assert_eq!(exported.len(), listed.len(), "{capture}");
        for (e, l) in exported.iter().zip(&listed) {
            for k in [
                "frame",
                "conn",
                "topic",
                "partition",
                "offset",
                "offset_assigned",
                "timestamp",
                "key",
                "value",
            ] {
                assert_eq!(e[k], l[k], "{capture}: {k}\n{e}\n{l}");
            }
            assert_eq!(e["key_bytes"], l["key_hex"], "{capture}");
        }
        records_seen += listed.len();
        // Every finding as `kwire check` gives it.
        let checked = json_lines(&kwire(&["check", capture, "--format", "json"]).stdout);
        let key = |r: &Value| {
            (
                r["rule"].to_string(),
                r["frame"].to_string(),
                r["message"].to_string(),
            )
        };
        let mut want: Vec<_> = checked.iter().map(key).collect();
        let mut got: Vec<_> = of(&findings, capture).into_iter().map(key).collect();
        want.sort();
        got.sort();
        assert_eq!(got, want, "{capture}");
    }
    // The shipped captures hold something of each kind.
    assert!(
        frames_seen > 300 && records_seen > 100 && errors_seen > 3,
        "{frames_seen} {records_seen} {errors_seen}"
    );
    assert!(!findings.is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each RecordBatch v2 header in a frame's tree JSON: (baseOffset,
/// attributes, producerId, producerEpoch, baseSequence, recordsCount).
fn batches(v: &Value, out: &mut Vec<[i64; 6]>) {
    let children = v["children"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let field = |name: &str| {
        children
            .iter()
            .find(|c| c["name"] == name)
            .and_then(|c| c["value"].as_i64())
    };
    let names = [
        "baseOffset",
        "attributes",
        "producerId",
        "producerEpoch",
        "baseSequence",
        "recordsCount",
    ];
    if let [Some(a), Some(b), Some(c), Some(d), Some(e), Some(f)] = names.map(field) {
        out.push([a, b, c, d, e, f]);
    }
    children.iter().for_each(|c| batches(c, out));
}

#[test]
fn records_carry_their_batch_s_codec_producer_and_sequence() {
    let dir = scratch("batches");
    let capture = "samples/captures/kafka-python.pcap";
    export(&dir, "ndjson", &[capture], &[]);
    let recs = rows(&dir, "records");
    let mut tree_batches: BTreeMap<u64, Vec<[i64; 6]>> = BTreeMap::new();
    let codecs = ["none", "gzip", "snappy", "lz4", "zstd"];
    let mut sequenced = 0;
    for r in &recs {
        let frame = r["frame"].as_u64().unwrap();
        let in_frame = tree_batches.entry(frame).or_insert_with(|| {
            let n = frame.to_string();
            let o = kwire(&["capture", capture, "--frame", &n, "--format", "tree-json"]);
            let tree: Value = serde_json::from_slice(&o.stdout).unwrap();
            let mut out = Vec::new();
            batches(&tree["tree"], &mut out);
            out
        });
        // Its batch is one of its frame's, codec and producer as the tree has them.
        let found = in_frame
            .iter()
            .any(|[base, attributes, pid, epoch, seq, count]| {
                r["batch_base_offset"] == *base
                    && r["codec"] == codecs[(attributes & 7) as usize]
                    && r["producer_id"] == *pid
                    && r["producer_epoch"] == *epoch
                    && r["transactional"] == (attributes & 0x10 != 0)
                    && match r["sequence"].as_i64() {
                        None => *seq < 0,
                        Some(s) => (*seq..*seq + count).contains(&s),
                    }
            });
        assert!(found, "{r}\n{in_frame:?}");
        sequenced += usize::from(r["sequence"].is_i64());
    }
    assert!(
        recs.len() >= 20 && sequenced >= 10,
        "{} {sequenced}",
        recs.len()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_filter_keeps_its_exchanges_and_their_records_findings_and_connections() {
    let dir = scratch("filter");
    let capture = "samples/captures/kafka-python.pcap";
    export(&dir, "ndjson", &[capture], &["-Y", "api == Produce"]);
    let frames = json_lines(&kwire(&["capture", capture, "--json", "-Y", "api == Produce"]).stdout);
    let ex = rows(&dir, "exchanges");
    assert!(!ex.is_empty());
    assert!(ex.iter().all(|r| r["api_name"] == "Produce"), "{ex:?}");
    let requests = frames.iter().filter(|f| f["kind"] == "request").count();
    assert_eq!(ex.len(), requests);
    let selected: BTreeSet<u64> = frames
        .iter()
        .map(|f| f["capture"]["frame"].as_u64().unwrap())
        .collect();
    let recs = rows(&dir, "records");
    assert!(!recs.is_empty());
    assert!(recs
        .iter()
        .all(|r| selected.contains(&r["frame"].as_u64().unwrap())));
    let conns: BTreeSet<u64> = frames
        .iter()
        .map(|f| f["capture"]["conn"].as_u64().unwrap())
        .collect();
    let got: BTreeSet<u64> = rows(&dir, "connections")
        .iter()
        .map(|r| r["conn"].as_u64().unwrap())
        .collect();
    assert_eq!(got, conns);
    // The partitions of the Produce requests only (one partition each here).
    let parts = rows(&dir, "partitions");
    assert_eq!(parts.len(), requests, "{parts:?}");
    assert!(parts
        .iter()
        .all(|r| r["api_name"] == "Produce"
            && selected.contains(&r["request_frame"].as_u64().unwrap())));
    // No finding of this capture is about a Produce exchange.
    assert!(rows(&dir, "findings").is_empty());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_schema_is_printed_and_names_every_column() {
    let o = kwire(&["export", "--schema"]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8(o.stdout).unwrap();
    for t in [
        "exchanges:",
        "partitions:",
        "high_watermark",
        "connections:",
        "records:",
        "findings:",
        "latency_us",
        "error_codes",
        "SMALLINT[]",
        "key_bytes",
    ] {
        assert!(text.contains(t), "{t}\n{text}");
    }
    // Wrapped to the 120 columns of a pipe, meanings under their column.
    let long: Vec<&str> = text.lines().filter(|l| l.chars().count() > 120).collect();
    assert!(long.is_empty(), "{long:?}");
    assert!(
        text.lines().any(|l| l.starts_with(&" ".repeat(40))),
        "{text}"
    );
    // Without --out, export says what it needs.
    let o = kwire(&["export", "samples/captures/kafka-python.pcap"]);
    assert_eq!(o.status.code(), Some(2));
}

/// Capture times as microseconds (a float's last digit may differ between
/// the two readers' decimal conversions).
fn normalised(mut v: Value) -> Value {
    if let Value::Object(m) = &mut v {
        for (k, x) in m.iter_mut() {
            if (k == "time" || k.ends_with("_time")) && x.is_f64() {
                *x = Value::from((x.as_f64().unwrap() * 1e6).round() as i64);
            }
        }
    }
    v
}

#[test]
#[ignore = "needs python3 with duckdb"]
fn parquet_read_by_duckdb_holds_the_json_lines_rows() {
    common::require_tools("the Parquet export's DuckDB test", &[common::PYTHON3]);
    let has_duckdb = Command::new("python3")
        .args(["-c", "import duckdb"])
        .status()
        .unwrap()
        .success();
    assert!(
        has_duckdb,
        "python3 cannot import duckdb: python3 -m pip install duckdb (bash .ci/run installs it)"
    );
    let (parquet, ndjson) = (scratch("parquet"), scratch("ndjson"));
    let captures = shipped();
    let inputs: Vec<&str> = captures.iter().map(String::as_str).collect();
    for (dir, format) in [(&parquet, "parquet"), (&ndjson, "ndjson")] {
        export(dir, format, &inputs, &[]);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/export-duckdb-check.py");
    let mut compared = BTreeMap::new();
    for table in [
        "exchanges",
        "partitions",
        "connections",
        "records",
        "findings",
    ] {
        let o = Command::new("python3")
            .arg(&script)
            .arg(&parquet)
            .arg(table)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let sorted = |rows: Vec<Value>| {
            let mut v: Vec<String> = rows
                .into_iter()
                .map(|r| normalised(r).to_string())
                .collect();
            v.sort();
            v
        };
        let from_parquet = sorted(json_lines(&o.stdout));
        let from_json = sorted(
            rows(&ndjson, table)
                .into_iter()
                .map(|r| {
                    // serde_json's map keeps insertion order: sorted keys as Python writes them.
                    let m: BTreeMap<String, Value> = serde_json::from_value(r).unwrap();
                    serde_json::to_value(m).unwrap()
                })
                .collect(),
        );
        assert_eq!(from_parquet.len(), from_json.len(), "{table}");
        for (p, j) in from_parquet.iter().zip(&from_json) {
            assert_eq!(p, j, "{table}");
        }
        compared.insert(table, from_json.len());
    }
    assert!(compared.values().all(|&n| n > 0), "{compared:?}");
    // DuckDB's count of exchanges per capture, API and version is what
    // `kwire stats` counts (requests of each, answered or not).
    let query = format!(
        "import duckdb, json\nfor r in duckdb.sql(\"SELECT capture, api_name, api_version, count(*) FROM read_parquet('{}/exchanges/*.parquet') WHERE api_name IS NOT NULL GROUP BY ALL\").fetchall(): print(json.dumps(r))",
        parquet.display()
    );
    let o = Command::new("python3")
        .args(["-c", &query])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: BTreeSet<String> = json_lines(&o.stdout).iter().map(Value::to_string).collect();
    let mut want = BTreeSet::new();
    for c in &captures {
        let stats: Value =
            serde_json::from_slice(&kwire(&["stats", c, "--format", "json"]).stdout).unwrap();
        for a in stats["by_api"].as_array().unwrap() {
            let row = serde_json::json!([c, a["api_name"], a["api_version"], a["requests"]]);
            want.insert(row.to_string());
        }
    }
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(&parquet);
    let _ = std::fs::remove_dir_all(&ndjson);
}

#[test]
#[ignore = "needs python3 with duckdb"]
fn the_readme_s_duckdb_queries_run_as_written() {
    common::require_tools("the README's DuckDB queries", &[common::PYTHON3]);
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let block = readme
        .split("```sql\n")
        .nth(1)
        .expect("a sql block")
        .split("```")
        .next()
        .unwrap();
    let dir = scratch("readme");
    std::fs::create_dir_all(&dir).unwrap();
    let tables = dir.join("tables");
    export(&tables, "parquet", &["samples/captures"], &[]);
    // The docs page's queries after the README's: they must run too.
    let page: String = kwire::docs::export_page::QUERIES
        .iter()
        .map(|(q, _)| format!("{q};\n"))
        .collect();
    std::fs::write(dir.join("queries.sql"), format!("{block}\n{page}")).unwrap();
    // Each statement, without the comments between them.
    let run = "import duckdb\nc = duckdb.connect()\nfor q in open('queries.sql').read().split(';'):\n    q = '\\n'.join(l for l in q.splitlines() if not l.strip().startswith('--'))\n    if q.strip():\n        print(len(c.sql(q).fetchall()))\n";
    let o = Command::new("python3")
        .args(["-c", run])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let counts: Vec<usize> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    let page_queries = kwire::docs::export_page::QUERIES.len();
    assert_eq!(counts.len(), 5 + page_queries, "{counts:?}");
    // Exchanges per API, the records of key k3, findings per rule, the
    // partitions fetched: all there.
    assert!(
        counts[0] > 5 && counts[2] > 0 && counts[3] > 3 && counts[4] > 0,
        "{counts:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn connections_name_the_software_inventory_names() {
    let dir = scratch("software");
    let captures = shipped();
    let inputs: Vec<&str> = captures.iter().map(String::as_str).collect();
    export(&dir, "ndjson", &inputs, &[]);
    let conns = rows(&dir, "connections");
    let mut named = 0;
    for capture in &captures {
        let inv = kwire(&["inventory", capture, "--format", "json"]);
        let Ok(inv) = serde_json::from_slice::<Value>(&inv.stdout) else {
            continue;
        };
        let mut want = BTreeMap::new();
        for c in inv["clients"].as_array().into_iter().flatten() {
            if c["software_name"].is_null() {
                continue;
            }
            for n in c["conns"].as_array().unwrap() {
                want.insert(
                    n.as_u64().unwrap(),
                    (c["software_name"].clone(), c["software_version"].clone()),
                );
            }
        }
        let got: BTreeMap<u64, (Value, Value)> = of(&conns, capture)
            .iter()
            .filter(|r| !r["software_name"].is_null())
            .map(|r| {
                (
                    r["conn"].as_u64().unwrap(),
                    (r["software_name"].clone(), r["software_version"].clone()),
                )
            })
            .collect();
        assert_eq!(got, want, "{capture}");
        named += got.len();
    }
    assert!(named > 50, "{named}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn captures_of_the_same_name_get_files_of_their_own() {
    let dir = scratch("names");
    let inputs = dir.join("in");
    std::fs::create_dir_all(&inputs).unwrap();
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures/kafka-python.pcap");
    for name in ["x.pcap", "x.pcapng", "x-2.pcap"] {
        std::fs::copy(&sample, inputs.join(name)).unwrap();
    }
    let out = dir.join("out");
    export(&out, "ndjson", &[inputs.to_str().unwrap()], &[]);
    let mut names: Vec<String> = std::fs::read_dir(out.join("exchanges"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    // Each file holds one capture's rows, whole.
    let one = json_lines(&std::fs::read(out.join("exchanges").join(&names[0])).unwrap()).len();
    assert_eq!(rows(&out, "exchanges").len(), 3 * one);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A partition's object in a frame's JSON, with the topic and group the
/// objects around it name (by string: a topic id names none).
struct PartitionObject<'v> {
    fields: &'v serde_json::Map<String, Value>,
    topic: Value,
    group: Value,
}

/// Every object under a frame's body that is one partition (it holds a
/// partition index), in order.
fn partition_objects<'v>(
    v: &'v Value,
    (topic, group): (&Value, &Value),
    top: bool,
    out: &mut Vec<PartitionObject<'v>>,
) {
    match v {
        Value::Object(m) => {
            let named = |keys: &[&str], outer: &Value| {
                keys.iter()
                    .find_map(|k| m.get(*k).filter(|v| v.is_string()).cloned())
                    .unwrap_or_else(|| outer.clone())
            };
            let (topic, group) = (named(&["Name", "Topic"], topic), named(&["GroupId"], group));
            let index = ["PartitionIndex", "Partition", "Index"]
                .iter()
                .any(|k| m.get(*k).is_some_and(Value::is_i64));
            if index && !top {
                out.push(PartitionObject {
                    fields: m,
                    topic: topic.clone(),
                    group: group.clone(),
                });
            }
            m.values()
                .for_each(|x| partition_objects(x, (&topic, &group), false, out));
        }
        Value::Array(a) => a
            .iter()
            .for_each(|x| partition_objects(x, (topic, group), false, out)),
        _ => {}
    }
}

fn partition_index(m: &serde_json::Map<String, Value>) -> Value {
    ["PartitionIndex", "Partition", "Index"]
        .iter()
        .find_map(|k| m.get(*k).cloned())
        .unwrap()
}

/// Records counted by the v2 batch headers of a records field in hex.
fn records_in(hex: &Value) -> Value {
    let Some(hex) = hex.as_str() else {
        return Value::Null;
    };
    let bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    let (mut at, mut count) = (0usize, 0i64);
    while at + 61 <= bytes.len() {
        let word = |o: usize| i32::from_be_bytes(bytes[at + o..at + o + 4].try_into().unwrap());
        assert_eq!(bytes[at + 16], 2, "a v2 batch");
        count += i64::from(word(57));
        at += 12 + word(8) as usize;
    }
    Value::from(count)
}

/// A frame's partitions and their rows say the same of each `(field,
/// column, compared)`: the field's value in the frame's JSON (a records
/// field by its batches' record count), the column's in the row.
fn same_partitions(body: &Value, rows: &[&Value], fields: &[(&str, &str, bool)], what: &str) {
    let mut objects = Vec::new();
    partition_objects(body, (&Value::Null, &Value::Null), true, &mut objects);
    // Topics and groups are compared where the frame names them by string
    // (a topic id's name comes from another frame).
    let topics = objects.iter().all(|o| o.topic.is_string());
    let groups = objects.iter().all(|o| o.group.is_string());
    let shown = |on: bool, v: &Value| if on { v.clone() } else { Value::Null };
    let mut want: Vec<Vec<Value>> = objects
        .iter()
        .map(|o| {
            let mut v = vec![
                partition_index(o.fields),
                shown(topics, &o.topic),
                shown(groups, &o.group),
            ];
            for &(field, _, compared) in fields {
                let x = o.fields.get(field).cloned().unwrap_or(Value::Null);
                v.push(match (compared, field) {
                    (false, _) => Value::Null,
                    (true, "Records") => records_in(&x),
                    (true, _) => x,
                });
            }
            v
        })
        .collect();
    let mut got: Vec<Vec<Value>> = rows
        .iter()
        .map(|r| {
            let mut v = vec![
                r["partition"].clone(),
                shown(topics, &r["topic"]),
                shown(groups, &r["group_id"]),
            ];
            for &(_, column, compared) in fields {
                v.push(shown(compared, &r[column]));
            }
            v
        })
        .collect();
    let key = |v: &Vec<Value>| Value::Array(v.clone()).to_string();
    want.sort_by_key(key);
    got.sort_by_key(key);
    assert_eq!(got, want, "{what}");
}

#[test]
fn partitions_say_what_each_frame_says_of_each_partition() {
    let dir = scratch("partitions");
    let captures = shipped();
    let inputs: Vec<&str> = captures.iter().map(String::as_str).collect();
    export(&dir, "ndjson", &inputs, &[]);
    let partitions = rows(&dir, "partitions");
    let mut filled: BTreeMap<&str, usize> = BTreeMap::new();
    for capture in &captures {
        let frames: BTreeMap<u64, Value> =
            json_lines(&kwire(&["capture", capture, "--json"]).stdout)
                .into_iter()
                .filter_map(|f| Some((f["capture"]["frame"].as_u64()?, f)))
                .collect();
        let rows = of(&partitions, capture);
        // Each exchange of the five APIs has its partitions' rows, no more.
        let mut by_request: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
        rows.iter().for_each(|r| {
            by_request
                .entry(r["request_frame"].as_u64().unwrap())
                .or_default()
                .push(r)
        });
        for (n, f) in &frames {
            let api = f["api_key"].as_i64().unwrap_or(-1);
            if f["kind"] == "request" && [0, 1, 2, 8, 9].contains(&api) {
                assert!(
                    by_request.contains_key(n),
                    "{capture}: request {n} has no partition rows"
                );
            }
        }
        for (n, rs) in by_request {
            let request = &frames[&n];
            let api = request["api_key"].as_i64().unwrap();
            for r in &rs {
                assert_eq!(r["api_key"], api, "{capture} {n}");
                assert_eq!(r["api_version"], request["api_version"], "{capture} {n}");
                for (k, v) in r.as_object().unwrap() {
                    if !v.is_null() && v != &Value::Array(vec![]) {
                        *filled
                            .entry(Box::leak(k.clone().into_boxed_str()))
                            .or_default() += 1;
                    }
                }
            }
            // What the request says of each partition (OffsetFetch's request
            // lists partitions as bare numbers: its rows come from the response).
            if api != 9 {
                let fields = [
                    ("FetchOffset", "fetch_offset", true),
                    ("Timestamp", "list_timestamp", api == 2),
                    ("CommittedOffset", "committed_offset", api == 8),
                    ("Records", "records", api == 0),
                ];
                same_partitions(
                    &request["body"],
                    &rs,
                    &fields,
                    &format!("{capture}: request {n}"),
                );
            }
            // What the response says of each.
            let Some(m) = rs[0]["response_frame"].as_u64() else {
                assert!(
                    rs.iter().all(|r| r["error_code"].is_null()),
                    "{capture} {n}"
                );
                continue;
            };
            let fields = [
                ("ErrorCode", "error_code", true),
                ("HighWatermark", "high_watermark", true),
                ("LastStableOffset", "last_stable_offset", true),
                ("LogStartOffset", "log_start_offset", true),
                ("BaseOffset", "base_offset", true),
                ("Offset", "list_offset", true),
                ("CommittedOffset", "committed_offset", api == 9),
                ("Records", "records", api == 1),
            ];
            same_partitions(
                &frames[&m]["body"],
                &rs,
                &fields,
                &format!("{capture}: response {m}"),
            );
        }
    }
    // The shipped captures fill every column somewhere.
    for c in [
        "response_frame",
        "group_id",
        "topic",
        "error_code",
        "fetch_offset",
        "committed_offset",
        "list_timestamp",
        "list_offset",
        "base_offset",
        "high_watermark",
        "last_stable_offset",
        "log_start_offset",
        "record_bytes",
        "batches",
        "records",
        "producer_ids",
    ] {
        assert!(
            filled.get(c).copied().unwrap_or(0) > 0,
            "{c} is never filled: {filled:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
