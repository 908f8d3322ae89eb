//! `kwire records CAPTURE`: every record of the Produce requests and Fetch
//! responses of a capture, in each codec, as a table and as JSON lines;
//! selection by topic, partition and bytes; Fetch v13 topics named through
//! an earlier Metadata response; Schema Registry framing; internal topics;
//! damaged record data (a line of its own, exit status 2); the shipped captures.

mod common;

use common::batches::{batch, Rec};
use common::exchanges::{TempCapture, Timeline};
use serde_json::{json, Value};
use std::process::Command;

const ORDERS_ID: &str = "5b0d2c4e-8a1f-4c3b-9d2e-7f6a5b4c3d2e";
const UNKNOWN_ID: &str = "00000000-0000-4000-8000-000000000abc";

fn rec(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    headers: &[(&str, Option<&[u8]>)],
    ts: i64,
) -> Rec {
    Rec {
        key: key.map(<[u8]>::to_vec),
        value: value.map(<[u8]>::to_vec),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.map(<[u8]>::to_vec)))
            .collect(),
        timestamp_delta: ts,
    }
}

/// Bytes in Confluent Schema Registry framing.
fn framed(id: i32, payload: &[u8]) -> Vec<u8> {
    [&[0u8][..], &id.to_be_bytes(), payload].concat()
}

fn produce_body(topic: &str, partitions: &[(i32, Vec<u8>)]) -> Value {
    let data: Vec<Value> = partitions
        .iter()
        .map(|(i, r)| json!({"Index": i, "Records": hex::encode(r)}))
        .collect();
    json!({"Acks": -1, "TimeoutMs": 1000, "TopicData": [{"Name": topic, "PartitionData": data}]})
}

fn fetch_request(id: &str) -> Value {
    json!({"Topics": [{"TopicId": id, "Partitions": [{"Partition": 0}]}]})
}

/// An OffsetCommitKey (type 1) for group `billing`, topic `orders`, partition 3.
fn offset_commit_key() -> Vec<u8> {
    let mut key = 1i16.to_be_bytes().to_vec();
    for s in ["billing", "orders"] {
        key.extend_from_slice(&(s.len() as i16).to_be_bytes());
        key.extend_from_slice(s.as_bytes());
    }
    key.extend_from_slice(&3i32.to_be_bytes());
    key
}

/// One connection, 1 ms between frames (frame k at T0 + (k+1) ms):
/// - 0, 1: Produce v9 to orders: partition 0 holds a gzip, a snappy, an lz4
///   and a zstd batch (offsets 0-4), partition 1 a plain batch (offset 10);
///   the broker puts partition 0 at offset 100, and refuses partition 1
///   (NOT_LEADER_OR_FOLLOWER);
/// - 2, 3: Fetch v13 of orders' id before anything named it (offset 0);
/// - 4, 5: Metadata v12 naming orders with its id;
/// - 6, 7: Fetch v13 of orders' id (zstd, offset 7) and of an id never named (offset 0);
/// - 8, 9: Produce v9 of an offset commit to __consumer_offsets.
fn conversation() -> Timeline {
    let mut t = Timeline::default();
    let p0 = [
        batch(
            0,
            1,
            &[
                rec(Some(b"g0"), Some(b"gzip zero"), &[("h", Some(b"1"))], 0),
                rec(Some(b"g1"), None, &[], 1),
            ],
        ),
        batch(
            2,
            2,
            &[rec(
                Some(b"s0"),
                Some(b"snappy zero"),
                &[("trace", Some(b"abc")), ("empty", None)],
                2,
            )],
        ),
        batch(3, 3, &[rec(None, Some(b"lz4 value"), &[], 3)]),
        batch(
            4,
            4,
            &[rec(
                Some(&[0xff, 0x00]),
                Some(&framed(17, b"{\"id\":7}")),
                &[],
                4,
            )],
        ),
    ]
    .concat();
    let p1 = batch(
        10,
        0,
        &[rec(Some(b"p1"), Some(b"needle in partition 1"), &[], 0)],
    );
    t.on(50001, "producer").pair(
        1,
        "Produce",
        9,
        produce_body("orders", &[(0, p0), (1, p1)]),
        json!({"Responses": [{"Name": "orders", "PartitionResponses": [
            {"Index": 0, "ErrorCode": 0, "BaseOffset": 100},
            {"Index": 1, "ErrorCode": 6, "BaseOffset": -1}
        ]}]}),
    );
    let early = batch(0, 0, &[rec(Some(b"e"), Some(b"early"), &[], 0)]);
    t.on(50001, "consumer").pair(2, "Fetch", 13, fetch_request(ORDERS_ID), json!({"Responses": [{"TopicId": ORDERS_ID, "Partitions": [{"PartitionIndex": 0, "Records": hex::encode(early)}]}]}));
    t.on(50001, "consumer").pair(
        3,
        "Metadata",
        12,
        json!({"Topics": null}),
        json!({"Topics": [{"Name": "orders", "TopicId": ORDERS_ID}]}),
    );
    let late = batch(
        7,
        4,
        &[rec(
            Some(b"l"),
            Some(b"late"),
            &[("x", Some(&[0xc3, 0x28]))],
            5,
        )],
    );
    let unknown = batch(0, 0, &[rec(Some(b"u"), Some(b"unknown"), &[], 0)]);
    let responses = json!({"Responses": [
        {"TopicId": ORDERS_ID, "Partitions": [{"PartitionIndex": 0, "Records": hex::encode(late)}]},
        {"TopicId": UNKNOWN_ID, "Partitions": [{"PartitionIndex": 3, "Records": hex::encode(unknown)}]}
    ]});
    t.on(50001, "consumer")
        .pair(4, "Fetch", 13, fetch_request(ORDERS_ID), responses);
    let commit = batch(0, 0, &[rec(Some(&offset_commit_key()), None, &[], 0)]);
    t.on(50001, "consumer").pair(
        5,
        "Produce",
        9,
        produce_body("__consumer_offsets", &[(0, commit)]),
        json!({}),
    );
    t
}

/// Run kwire: (exit status, stdout, stderr).
/// `kwire ARGS --wide`: these tests read what the table says, whole
/// (`headers_line_up_and_wide_shows_values_whole` reads how it fits).
fn kwire(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .arg("--wide")
        .env_remove("KWIRE_DEFS")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

const HEADER: &str = "frame time                        conn direction    topic            part   offset timestamp                key value headers";

#[test]
fn every_codec_lists_its_records_as_a_table() {
    let file = TempCapture::new("records-table", &conversation().pcap());
    let (status, out, err) = kwire(&["records", file.path()]);
    assert_eq!(status, 0, "{err}");
    let expected = [
        HEADER,
        "    0 2023-11-14T22:13:20.001000Z    0 → Produce    orders              0      100 2023-11-14T22:13:20.000Z g0 gzip zero h=1",
        "    0 2023-11-14T22:13:20.001000Z    0 → Produce    orders              0      101 2023-11-14T22:13:20.001Z g1 null ",
        "    0 2023-11-14T22:13:20.001000Z    0 → Produce    orders              0      102 2023-11-14T22:13:20.002Z s0 snappy zero trace=abc, empty=null",
        "    0 2023-11-14T22:13:20.001000Z    0 → Produce    orders              0      103 2023-11-14T22:13:20.003Z null lz4 value ",
        "    0 2023-11-14T22:13:20.001000Z    0 → Produce    orders              0      104 2023-11-14T22:13:20.004Z 0xff00 [schema 17] {\"id\":7} ",
        "    0 2023-11-14T22:13:20.001000Z    0 → Produce    orders              1      +10 2023-11-14T22:13:20.000Z p1 needle in partition 1 ",
        "    3 2023-11-14T22:13:20.004000Z    0 ← Fetch      5b0d2c4e-8a1f-4c3b-9d2e-7f6a5b4c3d2e    0        0 2023-11-14T22:13:20.000Z e early ",
        "    7 2023-11-14T22:13:20.008000Z    0 ← Fetch      orders              0        7 2023-11-14T22:13:20.005Z l late x=0xc328",
        "    7 2023-11-14T22:13:20.008000Z    0 ← Fetch      00000000-0000-4000-8000-000000000abc    3        0 2023-11-14T22:13:20.000Z u unknown ",
        "    8 2023-11-14T22:13:20.009000Z    0 → Produce    __consumer_offsets    0       +0 2023-11-14T22:13:20.000Z OffsetCommitKey v0 {\"group\":\"billing\",\"topic\":\"orders\",\"partition\":3} null ",
    ];
    assert_eq!(out.lines().collect::<Vec<_>>(), expected, "\n{out}");
}

#[test]
fn every_codec_lists_its_records_as_json() {
    let file = TempCapture::new("records-json", &conversation().pcap());
    let (status, out, err) = kwire(&["records", file.path(), "--format", "json"]);
    assert_eq!(status, 0, "{err}");
    let rows = json_lines(&out);
    // Where each came from, and what it holds.
    let brief: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!([
                r["frame"],
                r["direction"],
                r["topic"],
                r["partition"],
                r["offset"],
                r["key"],
                r["value"]
            ])
        })
        .collect();
    assert_eq!(
        brief,
        [
            json!([0, "request", "orders", 0, 100, "g0", "gzip zero"]),
            json!([0, "request", "orders", 0, 101, "g1", null]),
            json!([0, "request", "orders", 0, 102, "s0", "snappy zero"]),
            json!([0, "request", "orders", 0, 103, null, "lz4 value"]),
            json!([
                0,
                "request",
                "orders",
                0,
                104,
                "ff00",
                "\u{0}\u{0}\u{0}\u{0}\u{11}{\"id\":7}"
            ]),
            json!([0, "request", "orders", 1, 10, "p1", "needle in partition 1"]),
            json!([3, "response", ORDERS_ID, 0, 0, "e", "early"]),
            json!([7, "response", "orders", 0, 7, "l", "late"]),
            json!([7, "response", UNKNOWN_ID, 3, 0, "u", "unknown"]),
            json!([
                8,
                "request",
                "__consumer_offsets",
                0,
                0,
                "\u{0}\u{1}\u{0}\u{7}billing\u{0}\u{6}orders\u{0}\u{0}\u{0}\u{3}",
                null
            ]),
        ]
    );
    assert_eq!(
        rows[0],
        json!({"frame": 0, "time": 1700000000.001, "conn": 0, "api_key": 0, "api_name": "Produce", "direction": "request", "topic": "orders", "partition": 0,
               "offset": 100, "offset_assigned": true, "timestamp": 1700000000000i64, "key": "g0", "key_hex": "6730", "value": "gzip zero", "value_hex": "677a6970207a65726f",
               "headers": [{"key": "h", "value": "1", "value_hex": "31"}]})
    );
    // Refused by the broker: its offset stays the batch's own.
    assert_eq!(
        (&rows[5]["offset"], &rows[5]["offset_assigned"]),
        (&json!(10), &json!(false))
    );
    assert_eq!(rows[1]["value_hex"], Value::Null);
    assert_eq!(
        rows[2]["headers"],
        json!([{"key": "trace", "value": "abc", "value_hex": "616263"}, {"key": "empty", "value": null, "value_hex": null}])
    );
    // Schema Registry framing: the id, and the bytes as they are.
    assert_eq!(
        (
            &rows[4]["schema_id"],
            &rows[4]["key_hex"],
            &rows[4]["value_hex"]
        ),
        (
            &json!(17),
            &json!("ff00"),
            &json!("00000000117b226964223a377d")
        )
    );
    assert!(
        rows.iter()
            .enumerate()
            .all(|(i, r)| i == 4 || r.get("schema_id").is_none()),
        "only framed values have a schema id"
    );
    // A header value that is not UTF-8 is hex.
    assert_eq!(
        rows[7]["headers"],
        json!([{"key": "x", "value": "c328", "value_hex": "c328"}])
    );
    assert_eq!(rows[7]["time"], json!(1700000000.008));
    // The internal topic's key through its schema.
    assert_eq!(
        rows[9]["key_decoded"],
        json!({"schema": "OffsetCommitKey v0", "fields": {"group": "billing", "topic": "orders", "partition": 3}})
    );
}

#[test]
fn topic_partition_and_grep_select_records() {
    let file = TempCapture::new("records-select", &conversation().pcap());
    let offsets = |args: &[&str]| -> (i32, Vec<(String, i64)>) {
        let mut all = vec!["records", file.path(), "--format", "json"];
        all.extend_from_slice(args);
        let (status, out, _) = kwire(&all);
        (
            status,
            json_lines(&out)
                .iter()
                .map(|r| {
                    (
                        r["topic"].as_str().unwrap_or_default().to_string(),
                        r["offset"].as_i64().unwrap(),
                    )
                })
                .collect(),
        )
    };
    let o = |t: &str, n: i64| (t.to_string(), n);
    assert_eq!(
        offsets(&["--topic", "orders", "--partition", "1"]),
        (0, vec![o("orders", 10)])
    );
    // The early Fetch is not of "orders": nothing had named its id yet.
    assert_eq!(
        offsets(&["--topic", "orders", "--partition", "0", "--grep", "e"]).1,
        [
            o("orders", 100),
            o("orders", 102),
            o("orders", 103),
            o("orders", 7)
        ]
    );
    assert_eq!(offsets(&["--topic", ORDERS_ID]).1, [o(ORDERS_ID, 0)]);
    // An id the capture never named selects by id; orders' id is a name by then.
    assert_eq!(
        offsets(&["--topic", UNKNOWN_ID]),
        (0, vec![o(UNKNOWN_ID, 0)])
    );
    // Header keys and values, keys and values.
    assert_eq!(offsets(&["--grep", "abc"]).1, [o("orders", 102)]);
    assert_eq!(offsets(&["--grep", "trace"]).1, [o("orders", 102)]);
    assert_eq!(offsets(&["--grep", "needle"]).1, [o("orders", 10)]);
    assert_eq!(
        offsets(&["--grep", "billing"]).1,
        [o("__consumer_offsets", 0)]
    );
    assert_eq!(offsets(&["--partition", "3"]).1, [o(UNKNOWN_ID, 0)]);
    // Nothing selected: said, and status 1.
    let (status, out, err) = kwire(&["records", file.path(), "--topic", "payments"]);
    assert_eq!((status, out.as_str()), (1, ""));
    assert!(
        err.contains("no record matches --topic \"payments\" among the capture's 10 records"),
        "{err}"
    );
}

/// A capture of one Produce request carrying `records` for orders, partition 0.
fn one_produce(name: &str, records: Vec<u8>) -> TempCapture {
    let mut t = Timeline::default();
    t.on(50001, "producer").pair(
        1,
        "Produce",
        9,
        produce_body("orders", &[(0, records)]),
        json!({}),
    );
    TempCapture::new(name, &t.pcap())
}

#[test]
fn damaged_record_data_is_a_line_of_its_own_and_exit_status_2() {
    let good = batch(0, 0, &[rec(Some(b"k"), Some(b"v"), &[], 0)]);
    let mut bad_crc = batch(1, 0, &[rec(Some(b"k2"), Some(b"v2"), &[], 0)]);
    bad_crc[30] ^= 1;
    let (stored, computed) = (
        u32::from_be_bytes(bad_crc[17..21].try_into().unwrap()),
        kwire::protocol::crc32c::crc32c(&bad_crc[21..]),
    );
    let file = one_produce("records-damage", [good.clone(), bad_crc.clone()].concat());
    let (status, out, err) = kwire(&["records", file.path()]);
    assert_eq!(status, 2, "{err}");
    assert!(err.contains("record data damaged in 1 place"), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "header, two records, the damage:\n{out}");
    assert!(
        lines[1].contains(" k ") && lines[2].contains(" k2 "),
        "{out}"
    );
    // The crc field's offset in the frame: size, header (v1: 2+2+4+2+8 client id), body up to the records.
    let frame = common::exchanges::frame(
        kwire::decode::Direction::Request,
        "Produce",
        9,
        1,
        "producer",
        produce_body("orders", &[(0, [good.clone(), bad_crc.clone()].concat())]),
    );
    let at = find(&frame, &bad_crc) + 17;
    let expected = format!(
        "    0 2023-11-14T22:13:20.001000Z    0 → Produce    orders              0 !! damaged record data at offset 0x{at:04x} ({at}): a batch CRC-32C of 0x{computed:08x} (the bytes' checksum), found 0x{stored:08x}"
    );
    assert_eq!(lines[3], expected);
    let (status, out, _) = kwire(&["records", file.path(), "--format", "json"]);
    assert_eq!(status, 2);
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 3);
    assert_eq!(
        rows[2],
        json!({"frame": 0, "time": 1700000000.001, "conn": 0, "api_key": 0, "api_name": "Produce", "direction": "request", "topic": "orders", "partition": 0,
               "record_error": {"offset": at, "expected": format!("a batch CRC-32C of 0x{computed:08x} (the bytes' checksum), found 0x{stored:08x}")}})
    );
    // A topic not selected: its damage is not listed, but still said and still status 2.
    let (status, out, err) = kwire(&["records", file.path(), "--topic", "payments"]);
    assert_eq!((status, out.as_str()), (2, ""));
    assert!(err.contains("record data damaged in 1 place (1 outside the topic and partition selected, not listed)"), "{err}");
    // Compressed data that does not decompress (its checksum made again): no records, a damage line.
    let mut bad_gzip = batch(0, 1, &[rec(Some(b"k"), Some(b"v"), &[], 0)]);
    let len = bad_gzip.len();
    bad_gzip[len - 12] ^= 0xff;
    let crc = kwire::protocol::crc32c::crc32c(&bad_gzip[21..]);
    bad_gzip[17..21].copy_from_slice(&crc.to_be_bytes());
    let file = one_produce("records-bad-gzip", bad_gzip);
    let (status, out, _) = kwire(&["records", file.path(), "--format", "json"]);
    assert_eq!(status, 2);
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 1, "{out}");
    assert!(
        rows[0]["record_error"]["expected"]
            .as_str()
            .unwrap()
            .contains("gzip"),
        "{out}"
    );
}

fn find(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .expect("present")
}

#[test]
fn the_expanded_budget_holds_for_a_capture_too() {
    // Many records in one gzip batch: over a tiny expanded budget they are not
    // listed, the place is said, and the status is 2.
    let records: Vec<Rec> = (0..200)
        .map(|i| rec(Some(format!("k{i}").as_bytes()), Some(b"v"), &[], 0))
        .collect();
    let file = one_produce("records-budget", batch(0, 1, &records));
    let (status, out, err) = kwire(&["records", file.path(), "--format", "json"]);
    assert_eq!((status, json_lines(&out).len()), (0, 200), "{err}");
    let (status, out, err) = kwire(&[
        "records",
        file.path(),
        "--format",
        "json",
        "--max-expanded",
        "20K",
    ]);
    assert_eq!(status, 2, "{err}");
    let rows = json_lines(&out);
    let damage: Vec<&Value> = rows
        .iter()
        .filter(|r| r.get("record_error").is_some())
        .collect();
    assert_eq!(damage.len(), 1, "{out}");
    assert!(
        damage[0]["record_error"]["expected"]
            .as_str()
            .unwrap()
            .contains("--max-expanded"),
        "{out}"
    );
    assert!(rows.len() - 1 < 200, "fewer records than the batch holds");
}

#[test]
fn a_small_frames_text_tree_spends_the_expanded_budget_as_its_other_views_do() {
    // Two gzip batches in one small Produce frame: the text tree walks its
    // records as it draws them, yet holds what they decompress for the
    // frame's life, as the frame's whole decode (tree JSON) does; at a
    // budget between one batch and two, both say the second is over it.
    let records: Vec<Rec> = (0..60)
        .map(|i| rec(Some(format!("k{i}").as_bytes()), Some(b"value"), &[], 0))
        .collect();
    let two = [batch(0, 1, &records), batch(60, 1, &records)].concat();
    let file = one_produce("records-two-gzip", two);
    let over = |out: &str| out.matches("not decoded (over budget)").count();
    let mut told = Vec::new();
    for kib in [8, 16, 32, 64, 128, 256, 512, 1024] {
        let budget = format!("{kib}K");
        let args = |format| {
            [
                "capture",
                file.path(),
                "--format",
                format,
                "--max-expanded",
                &budget,
            ]
        };
        let (tree_status, tree, _) = kwire(&args("tree"));
        let (json_status, json, _) = kwire(&args("tree-json"));
        assert_eq!(
            (tree_status, over(&tree)),
            (json_status, over(&json)),
            "--max-expanded {budget}:\n{tree}"
        );
        told.push(over(&tree));
    }
    // The budgets span none, one and both batches decoded.
    assert!(told.contains(&1) && told.contains(&0), "{told:?}");
}

/// `kwire capture -` with `file` on its standard input (a stream: every
/// frame decoded in its turn, on one thread), with `args` after it.
fn kwire_on_stdin(file: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", "-"])
        .args(args)
        .arg("--wide")
        .env_remove("KWIRE_DEFS")
        .env("NO_COLOR", "1")
        .stdin(std::fs::File::open(file).unwrap())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn frames_decoded_ahead_of_their_turn_spend_the_budget_as_in_turn() {
    // Forty Produce frames of one gzip batch each (about 1 KiB decompressed):
    // a file's frames are decoded on worker threads against budgets of
    // their own, and kept only when the input's budget, in their turn,
    // affords what they spent; a stream's are decoded in turn. Whatever
    // runs out where, both say the same.
    let mut t = Timeline::default();
    for i in 0..40 {
        let records: Vec<Rec> = (0..60)
            .map(|j| rec(Some(format!("k{i}-{j}").as_bytes()), Some(b"value"), &[], 0))
            .collect();
        let body = produce_body("orders", &[(0, batch(i * 60, 1, &records))]);
        t.on(50001, "producer")
            .pair(i as i32 + 1, "Produce", 9, body, json!({}));
    }
    let file = TempCapture::new("records-ahead", &t.pcap());
    let over = |out: &str| out.matches("(--max-decompressed raises it)").count();
    let mut told = Vec::new();
    for budget in ["4K", "16K", "33K", "12M"] {
        for (option, format) in [
            ("--max-decompressed", "tree"),
            ("--max-decompressed", "tree-json"),
            ("--max-decompressed", "grid"),
            ("--max-expanded", "tree"),
        ] {
            let args = [option, budget, "--format", format];
            let ahead = kwire(&[&["capture", file.path()][..], &args].concat());
            let in_turn = kwire_on_stdin(file.path(), &args);
            assert!(
                ahead == in_turn,
                "{option} {budget} --format {format}:\n{}\n---\n{}",
                ahead.1,
                in_turn.1
            );
            if (option, format) == ("--max-decompressed", "tree") {
                told.push(over(&ahead.1));
            }
        }
    }
    // The total budget runs out at the frames of 4K, later at 33K's, never at 12M's.
    assert!(told[0] > told[2] && told[2] > 0 && told[3] == 0, "{told:?}");
}

#[test]
fn the_shipped_captures_list_their_records() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures");
    let rows = |name: &str| -> Vec<Value> {
        let (status, out, err) = kwire(&[
            "records",
            root.join(name).to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(status, 0, "{name}: {err}");
        json_lines(&out)
    };
    // librdkafka: four records produced in each codec, all twenty fetched back.
    let confluent = rows("confluent-kafka.pcap");
    let produced: Vec<&Value> = confluent
        .iter()
        .filter(|r| r["api_name"] == "Produce")
        .collect();
    let fetched: Vec<&Value> = confluent
        .iter()
        .filter(|r| r["api_name"] == "Fetch")
        .collect();
    assert_eq!((produced.len(), fetched.len()), (20, 20));
    for (i, codec) in ["none", "gzip", "snappy", "lz4", "zstd"].iter().enumerate() {
        for n in 0..4 {
            let f = fetched[i * 4 + n];
            assert_eq!(
                (&f["topic"], &f["partition"], &f["offset"]),
                (&json!("orders"), &json!(0), &json!(i * 4 + n))
            );
            assert_eq!(f["key"], json!(format!("order-{codec}-{n}")));
            assert_eq!(
                f["value"],
                json!(format!(
                    "{{\"order\":{n},\"codec\":\"{codec}\",\"item\":\"widget\"}}"
                ))
            );
            assert_eq!(
                f["headers"],
                json!([{"key": "trace-id", "value": format!("t-{codec}-{n}"), "value_hex": hex::encode(format!("t-{codec}-{n}"))}, {"key": "source", "value": "kwire", "value_hex": "6b77697265"}])
            );
            // The broker's offset for each produced record, from its
            // Produce response: the one the consumer fetched it at.
            let p = produced[i * 4 + n];
            assert_eq!(
                (&p["key"], &p["value"], &p["offset"], &p["offset_assigned"]),
                (&f["key"], &f["value"], &f["offset"], &json!(true))
            );
        }
    }
    // kafka-python: five records plain and five gzip, produced and fetched.
    let python = rows("kafka-python.pcap");
    assert_eq!(python.len(), 20);
    assert!(python.iter().all(|r| r["topic"] == "payments"));
    // The capture cut after a Produce request still lists what it holds; kcat's has no records.
    assert!(!rows("lone-response.pcap").is_empty());
    let (_, _, err) = kwire(&["records", root.join("lone-response.pcap").to_str().unwrap()]);
    assert!(
        err.contains("2 responses without their request in the capture not read for records"),
        "{err}"
    );
    let (status, out, err) = kwire(&["records", root.join("kcat.pcap").to_str().unwrap()]);
    assert_eq!((status, out.as_str()), (0, ""), "{err}");
    assert!(err.contains("no records"), "{err}");
}

#[test]
fn segment_options_and_capture_options_stay_apart() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("samples");
    let segment = root.join("00000000000000000000.log");
    let (status, _, err) = kwire(&["records", segment.to_str().unwrap(), "--grep", "x"]);
    assert_eq!(status, 2);
    assert!(
        err.contains("--grep selects the records of a capture"),
        "{err}"
    );
    let (status, _, err) = kwire(&["records", segment.to_str().unwrap(), "--format", "table"]);
    assert_eq!(status, 2);
    assert!(
        err.contains("--format table lists a capture's records"),
        "{err}"
    );
    let capture = root.join("captures/confluent-kafka.pcap");
    let (status, _, err) = kwire(&["records", capture.to_str().unwrap(), "--format", "tree"]);
    assert_eq!(status, 2);
    assert!(err.contains("table (the default) or json"), "{err}");
    // The segment reads as before.
    let (status, out, _) = kwire(&["records", segment.to_str().unwrap(), "--format", "dump"]);
    assert_eq!(status, 0);
    assert!(out.starts_with("baseOffset: 0 "), "{out}");
}

#[test]
fn share_fetch_responses_list_their_records_under_the_name_metadata_gave() {
    let mut t = Timeline::default();
    t.on(50001, "consumer").pair(
        1,
        "Metadata",
        12,
        json!({"Topics": null}),
        json!({"Topics": [{"Name": "orders", "TopicId": ORDERS_ID}]}),
    );
    let records = batch(
        5,
        3,
        &[rec(Some(b"s"), Some(b"shared"), &[("h", Some(b"v"))], 0)],
    );
    let request = json!({"GroupId": "g", "MemberId": "m", "Topics": [{"TopicId": ORDERS_ID, "Partitions": [{"PartitionIndex": 2}]}]});
    let response = json!({"Responses": [{"TopicId": ORDERS_ID, "Partitions": [{"PartitionIndex": 2, "Records": hex::encode(records), "AcquiredRecords": [{"FirstOffset": 5, "LastOffset": 5, "DeliveryCount": 1}]}]}]});
    t.on(50001, "consumer")
        .pair(2, "ShareFetch", 1, request, response);
    let file = TempCapture::new("records-share-fetch", &t.pcap());
    let (status, out, err) = kwire(&["records", file.path(), "--format", "json"]);
    assert_eq!(status, 0, "{err}");
    let rows = json_lines(&out);
    let brief: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!([
                r["frame"],
                r["api_name"],
                r["direction"],
                r["topic"],
                r["partition"],
                r["offset"],
                r["key"],
                r["value"],
                r["headers"][0]["value"]
            ])
        })
        .collect();
    assert_eq!(
        brief,
        [json!([
            3,
            "ShareFetch",
            "response",
            "orders",
            2,
            5,
            "s",
            "shared",
            "v"
        ])]
    );
    let (_, out, _) = kwire(&["records", file.path()]);
    assert_eq!(out.lines().nth(1), Some("    3 2023-11-14T22:13:20.004000Z    0 ← ShareFetch orders              2        5 2023-11-14T22:13:20.000Z s shared h=v"));
}

#[test]
fn a_frame_that_does_not_decode_lists_what_it_read_and_says_where_it_stopped() {
    let records = batch(0, 0, &[rec(Some(b"k"), Some(b"v"), &[], 0)]);
    let mut bytes = common::exchanges::frame(
        kwire::decode::Direction::Request,
        "Produce",
        9,
        1,
        "producer",
        produce_body("orders", &[(0, records)]),
    );
    // TopicData's compact length says two topics; the frame holds one.
    let frame = kwire::decode::decode_frame(
        kwire::schema::Catalogue::builtin(),
        bytes::Bytes::from(bytes.clone()),
        0,
        &Default::default(),
    );
    let mut at = None;
    frame.root.walk(&mut |n, _| {
        if at.is_none() && n.name == "TopicData" {
            at = Some(n.offset);
        }
    });
    let at = at.expect("TopicData");
    assert_eq!(bytes[at], 2);
    bytes[at] = 3;
    let mut t = Timeline::default();
    t.on(50001, "producer").pair(
        1,
        "Metadata",
        12,
        json!({"Topics": null}),
        json!({"Topics": []}),
    );
    t.send(50001, true, &bytes);
    let file = TempCapture::new("records-malformed", &t.pcap());
    let (status, out, err) = kwire(&["records", file.path()]);
    assert_eq!(status, 2, "{err}");
    assert!(
        err.contains("1 frame carrying records did not decode completely"),
        "{err}"
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(
        lines[1].contains("orders") && lines[1].contains(" k "),
        "the record read before the error: {out}"
    );
    assert!(lines[2].starts_with("    2 2023-11-14T22:13:20.003000Z    0 → Produce    -                   - !! the frame did not decode at offset 0x"), "{out}");
    let (_, out, _) = kwire(&["records", file.path(), "--format", "json"]);
    let rows = json_lines(&out);
    assert_eq!(
        (rows.len(), rows[1]["error"]["offset"].as_u64().is_some()),
        (2, true),
        "{out}"
    );
}

#[test]
fn text_from_the_capture_is_escaped_for_terminals() {
    let hostile = "\u{1b}]0;owned\u{7}\u{202e}";
    let records = batch(
        0,
        0,
        &[rec(
            Some(hostile.as_bytes()),
            Some(format!("v{hostile}").as_bytes()),
            &[(hostile, Some(hostile.as_bytes()))],
            0,
        )],
    );
    let mut t = Timeline::default();
    t.on(50001, "producer").pair(
        1,
        "Produce",
        9,
        produce_body(&format!("t{hostile}"), &[(0, records)]),
        json!({}),
    );
    let file = TempCapture::new("records-hostile", &t.pcap());
    for format in ["table", "json"] {
        let (status, out, err) = kwire(&["records", file.path(), "--format", format]);
        assert_eq!(status, 0, "{err}");
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{7}') && !out.contains('\u{202e}'),
            "{format}: {out:?}"
        );
        assert!(out.lines().count() >= 1, "{format}");
    }
    let (_, out, _) = kwire(&["records", file.path(), "--format", "json"]);
    assert_eq!(
        json_lines(&out)[0]["key"],
        json!(hostile),
        "JSON escapes parse back to the text"
    );
}

/// Keys and values are cut to their columns, so every line's headers start
/// in the same column; the table fits the terminal's width (120 columns
/// without one: the frame's time left out), and `--wide` shows it whole.
#[test]
fn headers_line_up_and_wide_shows_values_whole() {
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/captures/confluent-kafka.pcap"
    );
    let at = |columns: Option<&str>, wide: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_kwire"));
        cmd.args(["records", capture]).env_remove("KWIRE_DEFS");
        match columns {
            Some(c) => cmd.env("COLUMNS", c),
            None => cmd.env_remove("COLUMNS"),
        };
        if wide {
            cmd.arg("--wide");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    };
    let cells = |l: &str| kwire::text::width::display_width(l.as_bytes());
    // 200 columns: the time column, and every line's headers in one column.
    let out = at(Some("200"), false);
    assert!(
        out.lines().next().unwrap().starts_with("frame time "),
        "{out}"
    );
    assert!(out.lines().all(|l| cells(l) <= 200), "{out}");
    let columns: std::collections::BTreeSet<usize> = out
        .lines()
        .skip(1)
        .map(|l| {
            let at = l.find(" trace-id=").unwrap();
            l[..at].chars().count()
        })
        .collect();
    assert_eq!(columns.len(), 1, "headers in columns {columns:?}\n{out}");
    // 120 columns (no terminal, no COLUMNS): no time column, values cut.
    let out = at(None, false);
    assert!(
        out.lines().next().unwrap().starts_with("frame conn "),
        "{out}"
    );
    assert!(out.lines().all(|l| cells(l) <= 120), "{out}");
    assert!(out.contains("{\"order\":0,\"codec\":… trace…"), "{out}");
    // 80 columns: the record's timestamp left out too; key and value still shown.
    let out = at(Some("80"), false);
    assert!(out.lines().all(|l| cells(l) <= 80), "{out}");
    assert!(
        !out.lines().next().unwrap().contains("timestamp") && out.contains("order-n"),
        "{out}"
    );
    let wide = at(Some("80"), true);
    assert!(
        wide.contains("{\"order\":0,\"codec\":\"none\",\"item\":\"widget\"} trace-id=t-none-0"),
        "{wide}"
    );
}

/// A records field over 64 KiB is read, and checked, a batch at a time in
/// one walk (the frame's tape does not hold it): the rows are the records
/// the tape reader lists for each partition, in order, and the damage rows
/// are the tree's record damage, in its order, each in its own partition.
#[test]
fn a_large_records_field_lists_its_rows_and_damage_a_batch_at_a_time() {
    let records = [
        rec(Some(b"k"), Some(&[b'v'; 300]), &[], 0),
        rec(None, Some(b"second"), &[], 1),
    ];
    let damaged_crc = |base: i64| {
        let mut b = batch(base, 0, &records);
        b[30] ^= 1;
        b
    };
    let mut bad_gzip = batch(0, 1, &records);
    let len = bad_gzip.len();
    bad_gzip[len - 12] ^= 0xff;
    let crc = kwire::protocol::crc32c::crc32c(&bad_gzip[21..]);
    bad_gzip[17..21].copy_from_slice(&crc.to_be_bytes());
    let small = [batch(0, 0, &records), damaged_crc(2)].concat();
    let mut large = Vec::new();
    for i in 0..3000 {
        large.extend(match i {
            1000 => damaged_crc(0),
            2000 => bad_gzip.clone(),
            _ => batch(0, 0, &records),
        });
    }
    assert!(large.len() > kwire::decode::frame::DEFER_RECORDS_OVER);
    let partitions = [(0, small.clone()), (1, large.clone()), (2, small.clone())];
    let body = produce_body("orders", &partitions);
    let frame = common::exchanges::frame(
        kwire::decode::Direction::Request,
        "Produce",
        9,
        1,
        "producer",
        body,
    );
    // A frame of 1.3 MB goes in segments, as TCP carries it.
    use common::pcap_writer::{conversation, pcap, Link};
    let capture = pcap(
        Link::EthernetV4,
        &conversation(&[(true, frame.clone())], 1400),
    );
    let file = TempCapture::new("records-large-field", &capture);
    let (status, out, err) = kwire(&["records", file.path(), "--format", "json"]);
    assert_eq!(status, 2, "{err}");
    let rows = json_lines(&out);
    // The rows: each partition's records as the tape reader lists them.
    let mut expected_rows = Vec::new();
    for (p, bytes) in &partitions {
        kwire::decode::records::each::for_each_record(
            bytes,
            &kwire::budget::Budget::default(),
            &mut |r| {
                if r.whole {
                    expected_rows.push((*p, r.value.map(hex::encode)));
                }
                true
            },
        );
    }
    let listed: Vec<(i64, Option<String>)> = rows
        .iter()
        .filter(|r| r.get("record_error").is_none())
        .map(|r| {
            let value = r["value_hex"].as_str().map(str::to_string);
            (r["partition"].as_i64().unwrap(), value)
        })
        .collect();
    // A damaged checksum still lists its records; gzip that does not decompress, none.
    assert_eq!(listed.len(), 2 * 2999 + 2 * 4, "{err}");
    assert_eq!(
        listed,
        expected_rows
            .into_iter()
            .map(|(p, v)| (i64::from(p), v))
            .collect::<Vec<_>>()
    );
    // The damage: the tree's, in its order, in its partitions.
    let tree = kwire::decode::decode_frame(
        kwire::schema::Catalogue::builtin(),
        bytes::Bytes::from(frame),
        0,
        &Default::default(),
    );
    let damage: Vec<(i64, Value)> = rows
        .iter()
        .filter_map(|r| Some((r["partition"].as_i64()?, r.get("record_error")?.clone())))
        .collect();
    let expected: Vec<Value> = tree
        .record_damage
        .iter()
        .map(|e| json!({"offset": e.offset, "expected": e.expected}))
        .collect();
    assert_eq!(expected.len(), 4, "{:?}", tree.record_damage);
    assert_eq!(
        damage.iter().map(|d| d.1.clone()).collect::<Vec<_>>(),
        expected
    );
    assert_eq!(damage.iter().map(|d| d.0).collect::<Vec<_>>(), [0, 1, 1, 2]);
}

/// An internal topic's key in a compressed batch, its value null (a
/// tombstone): the key is decoded from the decompressed data it lies in.
#[test]
fn a_compressed_tombstones_key_decodes_through_its_schema() {
    for codec in [0, 1] {
        let data = batch(0, codec, &[rec(Some(&offset_commit_key()), None, &[], 0)]);
        let mut t = Timeline::default();
        t.on(50001, "coordinator").pair(
            1,
            "Produce",
            9,
            produce_body("__consumer_offsets", &[(0, data)]),
            json!({}),
        );
        let file = TempCapture::new(&format!("records-tombstone-{codec}"), &t.pcap());
        let (status, out, err) = kwire(&["records", file.path(), "--format", "json"]);
        assert_eq!(status, 0, "{err}");
        let rows = json_lines(&out);
        assert_eq!(rows.len(), 1, "{out}");
        assert_eq!(rows[0]["value"], Value::Null);
        assert_eq!(
            rows[0]["key_decoded"],
            json!({"schema": "OffsetCommitKey v0", "fields": {"group": "billing", "topic": "orders", "partition": 3}}),
            "codec {codec}"
        );
    }
}

/// What `kwire records` says an internal topic's key or value decoded to
/// (read from its own tape and written by the contract's writer) is what
/// the frame's tree decodes there (its struct node, as the tests' own JSON
/// builder reads it), record by record: every kind of record batch, and
/// internal topics' records in compressed batches, tombstones among them.
#[test]
fn decoded_keys_and_values_are_the_trees() {
    use common::batches::record_batch_cases;
    use kwire::decode::records::view;
    let cat = kwire::schema::Catalogue::builtin();
    let value = |v: &[u8]| {
        let mut out = 3i16.to_be_bytes().to_vec();
        out.extend_from_slice(&42i64.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        out.extend_from_slice(v);
        out
    };
    let mut cases: Vec<(String, &str, Vec<u8>)> = record_batch_cases()
        .into_iter()
        .map(|c| (c.name.to_string(), c.topic, c.records))
        .collect();
    for codec in [1, 4] {
        let records = [
            rec(Some(&offset_commit_key()), Some(&value(b"meta")), &[], 0),
            rec(Some(&offset_commit_key()), None, &[], 1),
        ];
        cases.push((
            format!("offsets, codec {codec}"),
            "__consumer_offsets",
            batch(0, codec, &records),
        ));
    }
    let mut compared = 0;
    for (name, topic, records) in cases {
        let body = produce_body(topic, &[(0, records)]);
        let frame = common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Produce",
            9,
            1,
            "producer",
            body.clone(),
        );
        // The tree's decoded structs, record by record.
        let tree =
            kwire::decode::decode_frame(cat, bytes::Bytes::from(frame), 0, &Default::default());
        let mut expected = Vec::new();
        let records_node = find_records(&tree.root).expect("a records field");
        view::records(&records_node.children, &mut |r| {
            let decoded = |p: view::Payload| {
                let s = p
                    .decoded()
                    .iter()
                    .find(|n| n.role == kwire::decode::Role::Structure)?;
                let schema = format!("{} {}", s.name, s.note.as_ref()?);
                Some(json!({"schema": schema, "fields": common::contract::struct_object(s)}))
            };
            expected.push((decoded(r.key), decoded(r.value)));
        });
        let mut t = Timeline::default();
        t.on(50001, "producer")
            .pair(1, "Produce", 9, body, json!({}));
        let file = TempCapture::new("records-decoded-oracle", &t.pcap());
        let (_, out, err) = kwire(&["records", file.path(), "--format", "json"]);
        let listed: Vec<(Option<Value>, Option<Value>)> = json_lines(&out)
            .into_iter()
            .filter(|r| r.get("record_error").is_none() && r.get("error").is_none())
            .map(|r| {
                (
                    r.get("key_decoded").cloned(),
                    r.get("value_decoded").cloned(),
                )
            })
            .collect();
        // Structs only: prefixes alone (a control record's) have no struct node.
        let structs =
            |v: Vec<(Option<Value>, Option<Value>)>| -> Vec<(Option<Value>, Option<Value>)> {
                v.into_iter()
                    .map(|(k, v)| {
                        let s = |x: Option<Value>| x.filter(|x| !x["schema"].is_null());
                        (s(k), s(v))
                    })
                    .collect()
            };
        assert_eq!(structs(listed), expected, "{name}\n{err}");
        compared += expected.len();
    }
    assert!(compared >= 20, "{compared} records compared");
}

/// The first records field's node under `n`.
fn find_records(n: &kwire::decode::Node) -> Option<&kwire::decode::Node> {
    if n.ty.as_ref() == "records" {
        return Some(n);
    }
    n.children.iter().find_map(find_records)
}
