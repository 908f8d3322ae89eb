//! Topic ids named across a capture: a name that a Metadata response ties to
//! an id notes every TopicId field holding that id, in frames before the
//! Metadata response too, and the records after it are that topic's; the
//! JSON contract is unchanged.

mod common;

use bytes::Bytes;
use common::batches::{batch, Rec};
use common::exchanges::{frame, TempCapture, Timeline};
use kwire::decode::fields::TopicIds;
use kwire::decode::{decode_frame, DecodeOptions, Direction};
use kwire::schema::Catalogue;
use serde_json::{json, Value};

const ORDERS: &str = "4f1c2a3b-0000-4000-8000-00000000abcd";
const OFFSETS: &str = "0b5e7e2a-1111-4222-8333-444455556666";
const PORT: u16 = 50000;

/// An offset commit key of `__consumer_offsets` (group "billing", topic "orders", partition 0).
const COMMIT_KEY: &str = "0001000762696c6c696e6700066f726465727300000000";

fn fetch_bodies(topic_id: &str, records: Value) -> (Value, Value) {
    let req = json!({"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 1048576, "IsolationLevel": 0, "SessionId": 0, "SessionEpoch": -1,
        "Topics": [{"TopicId": topic_id, "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": 0, "LastFetchedEpoch": -1, "LogStartOffset": -1, "PartitionMaxBytes": 1048576}]}],
        "ForgottenTopicsData": [], "RackId": ""});
    let resp = json!({"ThrottleTimeMs": 0, "ErrorCode": 0, "SessionId": 0,
        "Responses": [{"TopicId": topic_id, "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": 1, "LastStableOffset": 1, "LogStartOffset": 0, "AbortedTransactions": null, "PreferredReadReplica": -1, "Records": records}]}]});
    (req, resp)
}

fn fetch(t: &mut Timeline, corr: i32, topic_id: &str, records: Value) {
    let (req, resp) = fetch_bodies(topic_id, records);
    t.on(PORT, "consumer").pair(corr, "Fetch", 13, req, resp);
}

fn metadata(t: &mut Timeline, corr: i32, topics: &[(&str, &str)]) {
    let req = json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false});
    let topics: Vec<Value> = topics.iter().map(|(name, id)| json!({"ErrorCode": 0, "Name": name, "TopicId": id, "IsInternal": name.starts_with("__"), "Partitions": [], "TopicAuthorizedOperations": -2147483648})).collect();
    let resp = json!({"ThrottleTimeMs": 0, "Brokers": [{"NodeId": 1, "Host": "broker", "Port": 9092, "Rack": null}], "ClusterId": "c", "ControllerId": 1, "Topics": topics});
    t.on(PORT, "consumer").pair(corr, "Metadata", 12, req, resp);
}

fn kwire(file: &TempCapture, args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .arg("capture")
        .arg(file.path())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `kwire capture - ARGS` with the capture on standard input.
fn kwire_stdin(capture: &[u8], args: &[&str]) -> String {
    let out = common::kwire_with_stdin(&[&["capture", "-"], args].concat(), capture);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn topic_id_lines(tree: &str) -> Vec<&str> {
    tree.lines()
        .filter(|l| l.contains("TopicId uuid"))
        .collect()
}

#[test]
fn a_name_learned_later_notes_an_earlier_fetch() {
    let mut t = Timeline::default();
    fetch(&mut t, 1, ORDERS, Value::Null);
    let fetch_only = t.pcap();
    metadata(&mut t, 2, &[("orders", ORDERS)]);
    let file = TempCapture::new("topic-ids", &t.pcap());

    // The tree: the Fetch request's and response's TopicId, before the Metadata response.
    for frame in ["0", "1"] {
        let (status, out, err) = kwire(&file, &["--frame", frame]);
        assert_eq!((status, err.as_str()), (Some(0), ""));
        let lines = topic_id_lines(&out);
        assert_eq!(lines.len(), 1, "{out}");
        assert!(
            lines[0].contains(&format!(
                "+-- TopicId uuid = {ORDERS} (topic \"orders\") [0x"
            )),
            "{out}"
        );
    }
    // Tree JSON: the note on the node.
    let (_, out, _) = kwire(&file, &["--frame", "1", "--format", "tree-json"]);
    let tree: Value = serde_json::from_str(out.trim()).unwrap();
    let topic = &tree["tree"]["children"][2]["children"][3]["children"][1]["children"][0];
    assert_eq!(
        (topic["name"].as_str(), topic["note"].as_str()),
        (Some("TopicId"), Some("(topic \"orders\")")),
        "{topic}"
    );

    // The JSON contract: the same bytes with the Metadata exchange in the capture as without it.
    let without = TempCapture::new("topic-ids-without", &fetch_only);
    let (_, with_names, _) = kwire(&file, &["--json"]);
    let (_, no_names, _) = kwire(&without, &["--json"]);
    let with_names: Vec<&str> = with_names.lines().collect();
    assert_eq!(with_names.len(), 4);
    assert_eq!(with_names[..2], no_names.lines().collect::<Vec<_>>()[..]);
    assert!(!with_names.concat().contains("(topic"));
    // Without a name for the id, no note.
    let (_, out, _) = kwire(&without, &["--frame", "1"]);
    assert!(
        topic_id_lines(&out).iter().all(|l| !l.contains("(topic")),
        "{out}"
    );

    // Standard input is read once: names tied so far name each frame.
    let early = kwire_stdin(&t.pcap(), &["--frame", "1"]);
    assert!(
        topic_id_lines(&early).iter().all(|l| !l.contains("(topic")),
        "{early}"
    );
    let late = kwire_stdin(&t.pcap(), &["--frame", "3"]);
    assert!(
        topic_id_lines(&late)[0].contains("(topic \"orders\")"),
        "{late}"
    );
}

#[test]
fn the_names_read_when_first_needed_note_every_topic_id() {
    // Frames that cannot hold a topic id come first: the capture is read for
    // its names only when the Fetch is shown, and the name tied after it still notes it.
    let mut t = Timeline::default();
    let beat = json!({"GroupId": "g", "GenerationId": 1, "MemberId": "m", "GroupInstanceId": null});
    t.on(PORT, "consumer").pair(
        1,
        "Heartbeat",
        4,
        beat,
        json!({"ThrottleTimeMs": 0, "ErrorCode": 0}),
    );
    fetch(&mut t, 2, ORDERS, Value::Null);
    metadata(&mut t, 3, &[("orders", ORDERS)]);
    let file = TempCapture::new("topic-ids-deferred", &t.pcap());
    let (status, out, err) = kwire(&file, &[]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    let lines = topic_id_lines(&out);
    assert_eq!(
        lines.len(),
        3,
        "the Fetch request's and response's, the Metadata response's: {out}"
    );
    assert!(
        lines
            .iter()
            .all(|l| l.contains(&format!("TopicId uuid = {ORDERS} (topic \"orders\")"))),
        "{out}"
    );
    // Only frames without topic ids shown: the same frames as without the names.
    let (status, beats, _) = kwire(&file, &["--api", "Heartbeat"]);
    assert_eq!(
        (
            status,
            beats.matches("# frame").count(),
            topic_id_lines(&beats).len()
        ),
        (Some(0), 2, 0),
        "{beats}"
    );
}

#[test]
fn records_of_a_topic_named_by_id_are_that_topics() {
    let records = Rec {
        key: Some(hex::decode(COMMIT_KEY).unwrap()),
        value: None,
        headers: Vec::new(),
        timestamp_delta: 0,
    };
    let records = hex::encode(batch(0, 0, &[records]));
    let mut t = Timeline::default();
    fetch(&mut t, 1, OFFSETS, json!(records));
    metadata(
        &mut t,
        2,
        &[("orders", ORDERS), ("__consumer_offsets", OFFSETS)],
    );
    let file = TempCapture::new("topic-ids-records", &t.pcap());
    let (status, out, err) = kwire(&file, &["--frame", "1"]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    assert!(out.contains("(topic \"__consumer_offsets\")"), "{out}");
    assert!(
        out.contains("type int16 = 1 (OffsetCommitKey)"),
        "the key decodes through the coordinator schema: {out}"
    );

    // The tree names the records' topic from the id, and decodes them through its schemas.
    let cat = Catalogue::builtin();
    let (_, resp) = fetch_bodies(OFFSETS, json!(records));
    let bytes = Bytes::from(frame(Direction::Response, "Fetch", 13, 1, "", resp));
    let mut ids = TopicIds::default();
    ids.insert(uuid(OFFSETS), b"__consumer_offsets");
    let opts = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(1),
        api_version: Some(13),
        topic_ids: ids,
        ..Default::default()
    };
    let tape = decode_frame(cat, bytes, 0, &opts);
    assert!(tape.error.is_none() && tape.record_damage.is_empty());
    let mut tree = Vec::new();
    kwire::render::tree_json::write_frame_tree_json(&mut tree, &tape).unwrap();
    assert!(String::from_utf8(tree).unwrap().contains("OffsetCommitKey"));
}

fn uuid(text: &str) -> [u8; 16] {
    hex::decode(text.replace('-', ""))
        .unwrap()
        .try_into()
        .unwrap()
}
