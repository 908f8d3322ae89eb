//! `kwire check`: one synthetic frame or conversation per rule (each test
//! fails when its rule is taken out), the JSON line contract, exit statuses,
//! the shipped captures, and no error finding on anything kwire's encoder
//! writes (every API and version, random bodies).

mod common;

use bytes::Bytes;
use common::batches::{batch, batch_of, produce, record_bytes, Rec};
use common::exchanges::{frame, TempCapture, Timeline};
use common::random_body::random_body;
use common::{all_messages, frame_spec};
use kwire::analysis::check::check_frames;
use kwire::analysis::finding::Severity;
use kwire::decode::{decode_frame, DecodeOptions, Direction};
use kwire::encode::example::smallest_struct;
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{json, Value};

/// Findings of `kwire check --format json` on a file of frames, and the exit status.
fn check_frame_bytes(bytes: &[u8], extra: &[&str]) -> (Vec<Value>, i32) {
    let mut args = vec!["check", "--binary", "--format", "json"];
    args.extend_from_slice(extra);
    args.push("-");
    let out = common::kwire_with_stdin(&args, bytes);
    (json_lines(&out.stdout), out.status.code().unwrap_or(-1))
}

fn check_capture(path: &str) -> (Vec<Value>, i32) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["check", "--format", "json", path])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (json_lines(&out.stdout), out.status.code().unwrap_or(-1))
}

fn json_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn rules(found: &[Value]) -> Vec<&str> {
    found.iter().map(|f| f["rule"].as_str().unwrap()).collect()
}

/// The one finding of `rule` among `found`, which must be there.
fn the<'a>(found: &'a [Value], rule: &str) -> &'a Value {
    let of: Vec<&Value> = found.iter().filter(|f| f["rule"] == rule).collect();
    assert_eq!(of.len(), 1, "one {rule} finding expected: {found:#?}");
    of[0]
}

/// The message of [`the`] finding of `rule`.
fn message<'a>(found: &'a [Value], rule: &str) -> &'a str {
    the(found, rule)["message"].as_str().unwrap_or_default()
}

/// The smallest request of `api` at `version`, encoded by kwire.
fn smallest_request(api: &str, version: i16) -> Vec<u8> {
    let cat = Catalogue::builtin();
    let fs = FrameSpec {
        direction: Direction::Request,
        api_key: cat.resolve_api(api).unwrap(),
        version,
        release: None,
    };
    let spec = message_spec(cat, &fs).unwrap();
    encode_frame(
        cat,
        &fs,
        &example_header(Direction::Request),
        &smallest_struct(&spec.fields, version),
    )
    .unwrap()
}

/// `frame` with its last `cut` bytes replaced by `with`, the size prefix fixed.
fn replace_tail(mut frame: Vec<u8>, cut: usize, with: &[u8]) -> Vec<u8> {
    frame.truncate(frame.len() - cut);
    frame.extend_from_slice(with);
    let size = (frame.len() - 4) as i32;
    frame[..4].copy_from_slice(&size.to_be_bytes());
    frame
}

/// A Fetch v12 request ends with RackId "" (0x01) and an empty tagged section (0x00).
fn fetch_v12() -> Vec<u8> {
    let f = smallest_request("Fetch", 12);
    assert_eq!(
        &f[f.len() - 2..],
        &[0x01, 0x00],
        "the smallest Fetch v12 request ends with RackId and its tags"
    );
    f
}

// ---- rules of one frame ----------------------------------------------------

#[test]
fn trailing_bytes_after_a_body_are_an_error() {
    let f = smallest_request("Metadata", 12);
    let n = f.len();
    let (found, status) = check_frame_bytes(&replace_tail(f, 0, &[1, 2, 3]), &[]);
    let t = the(&found, "trailing-bytes");
    assert_eq!(
        (t["severity"].as_str(), t["offset"].as_u64()),
        (Some("error"), Some(n as u64))
    );
    assert!(
        t["message"]
            .as_str()
            .unwrap()
            .contains("3 bytes follow the MetadataRequest v12 body"),
        "{t}"
    );
    assert_eq!(status, 3);
}

#[test]
fn a_frame_that_ends_before_its_body_is_truncated() {
    let (found, status) = check_frame_bytes(&replace_tail(fetch_v12(), 2, &[]), &[]);
    assert_eq!(the(&found, "truncated")["severity"], "error");
    assert_eq!(status, 3);
}

#[test]
fn a_negative_array_length_is_an_invalid_value() {
    // Metadata v4 with no topics ends with Topics' int32 length and AllowAutoTopicCreation.
    let f = frame(
        Direction::Request,
        "Metadata",
        4,
        1,
        "c",
        json!({"Topics": [], "AllowAutoTopicCreation": true}),
    );
    assert_eq!(&f[f.len() - 5..], &[0, 0, 0, 0, 1]);
    let at = f.len() - 5;
    let mut tail = (-2i32).to_be_bytes().to_vec();
    tail.push(1);
    let (found, _) = check_frame_bytes(&replace_tail(f, 5, &tail), &[]);
    let e = the(&found, "invalid-value");
    assert_eq!(e["offset"].as_u64(), Some(at as u64));
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("an array length >= -1, found -2"),
        "{e}"
    );
}

#[test]
fn a_version_the_api_does_not_define_is_an_error() {
    let mut f = smallest_request("Metadata", 12);
    f[6..8].copy_from_slice(&99i16.to_be_bytes());
    let (found, status) = check_frame_bytes(&f, &[]);
    assert_eq!(the(&found, "unknown-version")["api_version"], 99);
    assert_eq!(status, 3);
}

#[test]
fn null_in_a_field_that_is_not_nullable() {
    let f = fetch_v12();
    let at = f.len() - 2;
    let (found, _) = check_frame_bytes(&replace_tail(f, 2, &[0x00, 0x00]), &[]);
    let n = the(&found, "null-not-nullable");
    assert_eq!(n["offset"].as_u64(), Some(at as u64));
    assert!(
        n["message"].as_str().unwrap().starts_with("RackId: null"),
        "{n}"
    );
}

#[test]
fn tags_out_of_order_or_repeated() {
    let (found, _) = check_frame_bytes(&replace_tail(fetch_v12(), 1, &[2, 5, 0, 3, 0]), &[]);
    assert!(the(&found, "tag-order")["message"]
        .as_str()
        .unwrap()
        .contains("tag 3 is not in ascending order"));
    let (found, _) = check_frame_bytes(&replace_tail(fetch_v12(), 1, &[2, 5, 0, 5, 0]), &[]);
    assert!(the(&found, "tag-order")["message"]
        .as_str()
        .unwrap()
        .contains("tag 5 repeats"));
}

#[test]
fn a_tag_outside_its_tagged_versions() {
    // ReplicaState is tag 1 from Fetch v15 on.
    let f = fetch_v12();
    let at = f.len() - 1 + 1;
    let (found, status) = check_frame_bytes(&replace_tail(f, 1, &[1, 1, 1, 0]), &[]);
    assert_eq!(
        the(&found, "tag-version")["offset"].as_u64(),
        Some(at as u64)
    );
    assert_eq!(status, 3);
}

#[test]
fn a_tagged_field_whose_size_is_not_what_its_value_used() {
    // ClusterId (tag 0): the compact string "a" takes 2 bytes, the size says 3.
    let (found, _) = check_frame_bytes(
        &replace_tail(fetch_v12(), 1, &[1, 0, 3, 2, b'a', 0xff]),
        &[],
    );
    assert!(the(&found, "tag-size")["message"]
        .as_str()
        .unwrap()
        .contains("declares 3 bytes but its value used 2"));
}

#[test]
fn non_minimal_varints_are_a_note() {
    let (found, status) = check_frame_bytes(&replace_tail(fetch_v12(), 1, &[0x80, 0x00]), &[]);
    assert_eq!(the(&found, "non-minimal-varint")["severity"], "note");
    assert_eq!(status, 0, "a note is no error");
}

// ---- rules of record batches -----------------------------------------------

fn rec(value: &str) -> Rec {
    Rec {
        key: None,
        value: Some(value.as_bytes().to_vec()),
        headers: vec![],
        timestamp_delta: 0,
    }
}

fn check_produce(records: &[u8]) -> (Vec<Value>, i32) {
    check_frame_bytes(&produce(Catalogue::builtin(), "orders", records), &[])
}

/// `b` (one RecordBatch v2) with `edit` applied to its bytes and its CRC made right again.
fn patched(mut b: Vec<u8>, edit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    edit(&mut b);
    let crc = kwire::protocol::crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

#[test]
fn a_batch_crc_mismatch() {
    let mut b = batch(0, 0, &[rec("hello")]);
    let last = b.len() - 1;
    b[last] ^= 1;
    let (found, status) = check_produce(&b);
    assert_eq!(the(&found, "batch-crc")["severity"], "error");
    assert_eq!(status, 3);
}

#[test]
fn a_records_count_that_disagrees_with_the_bytes() {
    let (found, _) = check_produce(&batch_of(0, 0, &record_bytes(&rec("a"), 0), 2));
    assert!(the(&found, "records-count")["message"]
        .as_str()
        .unwrap()
        .contains("2 records"));
}

#[test]
fn records_that_are_not_batches() {
    let mut b = batch(0, 0, &[rec("a")]);
    b[8..12].copy_from_slice(&20i32.to_be_bytes());
    let (found, status) = check_produce(&b);
    assert!(the(&found, "records-not-batches")["message"]
        .as_str()
        .unwrap()
        .contains("do not start with a record batch"));
    assert_eq!(status, 3);
}

#[test]
fn a_batch_length_the_format_cannot_have() {
    // The first batch is sound; the second says 20 bytes, fewer than a v2 header.
    let mut two = batch(0, 0, &[rec("a")]);
    let second = two.len();
    let mut b = batch(1, 0, &[rec("b")]);
    b[8..12].copy_from_slice(&20i32.to_be_bytes());
    two.extend(b);
    let (found, _) = check_produce(&two);
    let e = the(&found, "batch-length");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("a batch length of at least 49 for magic 2, found 20"),
        "{e}"
    );
    let _ = second;
}

#[test]
fn an_unknown_codec() {
    let b = patched(batch(0, 0, &[rec("a")]), |b| {
        b[21..23].copy_from_slice(&5i16.to_be_bytes())
    });
    let (found, _) = check_produce(&b);
    assert!(the(&found, "unknown-codec")["message"]
        .as_str()
        .unwrap()
        .contains("found 5"));
}

#[test]
fn records_that_do_not_decompress() {
    let b = patched(batch(0, 0, &[rec("plain, not gzip")]), |b| {
        b[21..23].copy_from_slice(&1i16.to_be_bytes())
    });
    let (found, _) = check_produce(&b);
    the(&found, "decompression");
}

#[test]
fn a_record_that_does_not_decode() {
    let mut r = record_bytes(&rec("a"), 0);
    r[0] = 0x7e; // a record length of 63 in a 9-byte record
    let (found, _) = check_produce(&batch_of(0, 0, &r, 1));
    assert!(rules(&found).contains(&"record-invalid"), "{found:#?}");
}

#[test]
fn a_record_length_longer_than_its_fields() {
    let r = record_bytes(&rec("a"), 0);
    let len = i64::from(r[0] >> 1);
    let mut longer = vec![((len + 1) << 1) as u8];
    longer.extend_from_slice(&r[1..]);
    longer.push(0);
    let (found, _) = check_produce(&batch_of(0, 0, &longer, 1));
    assert!(the(&found, "record-length")["message"]
        .as_str()
        .unwrap()
        .contains("fields used"));
}

#[test]
fn record_offsets_that_do_not_rise() {
    let mut recs = record_bytes(&rec("a"), 0);
    recs.extend(record_bytes(&rec("b"), 0));
    let (found, status) = check_produce(&batch_of(0, 0, &recs, 2));
    let offsets: Vec<&Value> = found
        .iter()
        .filter(|f| f["rule"] == "offsets-backwards")
        .collect();
    assert!(
        offsets.iter().any(|f| f["message"]
            .as_str()
            .unwrap()
            .contains("offsetDelta 0 after 0")),
        "{found:#?}"
    );
    // The last delta (0) is not the batch's lastOffsetDelta (1): a rule of its own.
    assert!(
        the(&found, "last-offset-delta")["message"]
            .as_str()
            .unwrap()
            .contains("but its batch's lastOffsetDelta (at 0x"),
        "{found:#?}"
    );
    assert_eq!(status, 3);
}

#[test]
fn a_producer_sequence_that_skips() {
    let with_sequence = |seq: i32| {
        patched(batch(0, 0, &[rec("a")]), |b| {
            b[43..51].copy_from_slice(&7i64.to_be_bytes());
            b[51..53].copy_from_slice(&0i16.to_be_bytes());
            b[53..57].copy_from_slice(&seq.to_be_bytes());
        })
    };
    let mut two = with_sequence(0);
    two.extend(with_sequence(1));
    let (found, _) = check_produce(&two);
    assert!(
        !rules(&found).contains(&"sequence-gap"),
        "0 then 1 goes on: {found:#?}"
    );
    let mut two = with_sequence(0);
    two.extend(with_sequence(5));
    let (found, status) = check_produce(&two);
    let gap = the(&found, "sequence-gap");
    assert!(
        message(&found, "sequence-gap").contains("baseSequence 5 skips"),
        "{gap}"
    );
    assert_eq!((gap["severity"].as_str(), status), (Some("warning"), 0));
    // Fetched from a log, a skip is compaction's doing (a producer's whole
    // batch removed): no finding. Going back is wrong however it was read.
    let args = ["--response", "--api", "Fetch", "--version", "4"];
    let at_offset =
        |b: Vec<u8>, offset: i64| patched(b, |b| b[0..8].copy_from_slice(&offset.to_be_bytes()));
    let mut skip = with_sequence(0);
    skip.extend(at_offset(with_sequence(5), 1));
    let fetch = common::batches::fetch_v4(Catalogue::builtin(), "orders", &skip);
    let (found, status) = check_frame_bytes(&fetch, &args);
    assert!(found.is_empty(), "a skip in fetched data: {found:#?}");
    assert_eq!(status, 0);
    let mut back = with_sequence(5);
    back.extend(at_offset(with_sequence(0), 1));
    let fetch = common::batches::fetch_v4(Catalogue::builtin(), "orders", &back);
    let (found, _) = check_frame_bytes(&fetch, &args);
    let back = message(&found, "sequence-gap");
    assert!(
        back.contains("baseSequence 0 goes backwards; the batch before ends at 5"),
        "{back}"
    );
    // Sequences wrap from i32::MAX to 0: past the wrap, a skip is still a skip.
    let mut wrapped = with_sequence(i32::MAX - 3);
    wrapped.extend(at_offset(with_sequence(2), 1));
    let fetch = common::batches::fetch_v4(Catalogue::builtin(), "orders", &wrapped);
    let (found, status) = check_frame_bytes(&fetch, &args);
    assert_eq!(
        (found.len(), status),
        (0, 0),
        "a skip past the wrap: {found:#?}"
    );
    let mut produced = with_sequence(i32::MAX - 3);
    produced.extend(with_sequence(2));
    let (found, _) = check_produce(&produced);
    assert!(
        message(&found, "sequence-gap").contains("baseSequence 2 skips"),
        "{found:#?}"
    );
}

// ---- rules of a conversation -----------------------------------------------

fn api_versions_advertising(t: &mut Timeline, port: u16, ranges: Value) {
    t.on(port, "c").pair(
        1,
        "ApiVersions",
        3,
        json!({"ClientSoftwareName": "t", "ClientSoftwareVersion": "1"}),
        json!({"ErrorCode": 0, "ApiKeys": ranges, "ThrottleTimeMs": 0}),
    );
}

fn metadata_request() -> Value {
    json!({"Topics": null, "AllowAutoTopicCreation": true, "IncludeTopicAuthorizedOperations": false})
}

fn metadata_response() -> Value {
    json!({"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": []})
}

#[test]
fn a_request_version_outside_what_the_broker_advertised_on_the_connection() {
    let mut t = Timeline::default();
    api_versions_advertising(
        &mut t,
        50000,
        json!([{"ApiKey": 3, "MinVersion": 0, "MaxVersion": 9}, {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}]),
    );
    t.on(50000, "c")
        .pair(2, "Metadata", 12, metadata_request(), metadata_response());
    t.on(50000, "c").pair(3, "Metadata", 9, metadata_request(), json!({"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": [], "ClusterAuthorizedOperations": 0}));
    // Another connection advertised nothing: versions are per connection.
    t.on(50001, "c")
        .pair(2, "Metadata", 12, metadata_request(), metadata_response());
    let cap = TempCapture::new("check-advertised", &t.pcap());
    let (found, status) = check_capture(cap.path());
    let f = the(&found, "version-not-advertised");
    assert_eq!(
        (
            f["api_key"].as_i64(),
            f["api_version"].as_i64(),
            f["correlation_id"].as_i64()
        ),
        (Some(3), Some(12), Some(2))
    );
    assert_eq!(
        f["message"],
        "Metadata v12 is outside v0-v9, the range the broker advertised on this connection"
    );
    assert_eq!(status, 3);
}

#[test]
fn a_correlation_id_reused_while_in_flight() {
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &frame(
            Direction::Request,
            "Metadata",
            12,
            5,
            "c",
            metadata_request(),
        ),
    );
    t.send(
        50000,
        true,
        &frame(
            Direction::Request,
            "Metadata",
            12,
            5,
            "c",
            metadata_request(),
        ),
    );
    t.send(
        50000,
        false,
        &frame(
            Direction::Response,
            "Metadata",
            12,
            5,
            "",
            metadata_response(),
        ),
    );
    let cap = TempCapture::new("check-reuse", &t.pcap());
    let (found, _) = check_capture(cap.path());
    let f = the(&found, "correlation-reuse");
    assert_eq!(
        (f["frame"].as_u64(), f["severity"].as_str()),
        (Some(1), Some("warning"))
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("frame #0 (Metadata v12)"),
        "{f}"
    );
}

#[test]
fn requests_never_answered_are_noted_at_the_end_but_not_acks_0_produce() {
    let cat = Catalogue::builtin();
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &frame(
            Direction::Request,
            "Metadata",
            12,
            1,
            "c",
            metadata_request(),
        ),
    );
    let acks0 = json!({"TransactionalId": null, "Acks": 0, "TimeoutMs": 100, "TopicData": []});
    t.send(
        50000,
        true,
        &frame(Direction::Request, "Produce", 9, 2, "c", acks0),
    );
    let _ = cat;
    let cap = TempCapture::new("check-unanswered", &t.pcap());
    let (found, status) = check_capture(cap.path());
    let f = the(&found, "unanswered");
    assert_eq!(
        (
            f["api_key"].as_i64(),
            f["correlation_id"].as_i64(),
            f["severity"].as_str()
        ),
        (Some(3), Some(1), Some("note"))
    );
    assert_eq!(status, 0);
}

#[test]
fn responses_without_requests_in_the_shipped_lone_response_capture() {
    let (found, status) = check_capture("samples/captures/lone-response.pcap");
    let lone: Vec<(u64, i64)> = found
        .iter()
        .filter(|f| f["rule"] == "unmatched-response")
        .map(|f| {
            (
                f["frame"].as_u64().unwrap(),
                f["correlation_id"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(lone, [(1, 2), (2, 3)]);
    assert_eq!(status, 0);
    // The responses without requests count among the frames checked, as `stats` counts them.
    let run = |cmd: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args([cmd, "samples/captures/lone-response.pcap"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&[out.stdout, out.stderr].concat()).into_owned()
    };
    assert!(run("stats").starts_with("frames 85,"), "{}", run("stats"));
    assert!(
        run("check").contains("85 frames checked:"),
        "{}",
        run("check")
    );
}

/// A broker (or `kwire proxy`'s `duplicate` rule) answering one request
/// twice: the second answer is decoded as the first one's API, marked in
/// every view, and checked as an error. Ids used again after their answer
/// (clients wrap them) and responses of other connections are not duplicates.
#[test]
fn a_second_response_to_an_answered_request_is_decoded_and_reported() {
    let mut t = Timeline::default();
    t.on(50000, "c")
        .pair(7, "Metadata", 12, metadata_request(), metadata_response());
    let again = frame(
        Direction::Response,
        "Metadata",
        12,
        7,
        "",
        metadata_response(),
    );
    t.send(50000, false, &again);
    // The same id again, asked and answered once: normal.
    t.on(50000, "c")
        .pair(7, "Metadata", 12, metadata_request(), metadata_response());
    // Another connection's answer under the same id is no duplicate.
    t.on(50001, "c")
        .pair(7, "Metadata", 12, metadata_request(), metadata_response());
    let cap = TempCapture::new("check-duplicate-response", &t.pcap());
    let (found, status) = check_capture(cap.path());
    let f = the(&found, "duplicate-response");
    assert_eq!(
        (
            f["frame"].as_u64(),
            f["api_key"].as_i64(),
            f["severity"].as_str()
        ),
        (Some(2), Some(3), Some("error")),
        "{f}"
    );
    assert_eq!(
        f["message"],
        "a second response with correlation id 7: frame #1 answered its request (Metadata v12) already"
    );
    assert!(
        !found.iter().any(|f| f["rule"] == "unmatched-response"),
        "{found:#?}"
    );
    assert_eq!(status, 3, "an error found");
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(args)
            .arg(cap.path())
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let list = run(&["capture", "--list"]);
    let marked: Vec<&str> = list
        .lines()
        .filter(|l| l.contains("[duplicate of"))
        .collect();
    assert_eq!(marked.len(), 1, "{list}");
    assert!(
        marked[0].contains("Metadata v12") && marked[0].contains("[duplicate of #1]"),
        "{list}"
    );
    let tree = run(&["capture", "--frame", "2"]);
    assert!(tree.contains("[duplicate of #1]\n"), "{tree}");
    assert!(tree.contains("MetadataResponse"), "not decoded:\n{tree}");
    let json = run(&["capture", "--json", "--frame", "2"]);
    let v: Value = serde_json::from_str(json.lines().next().unwrap_or_default()).unwrap();
    assert_eq!(v["capture"]["duplicate_of"], 1, "{json}");
}

/// Two requests under one correlation id are answered once each: the
/// client's reuse is the finding, no answer is a duplicate.
#[test]
fn the_answers_to_a_reused_correlation_id_are_no_duplicates() {
    let mut t = Timeline::default();
    let request = frame(
        Direction::Request,
        "Metadata",
        12,
        7,
        "c",
        metadata_request(),
    );
    let response = frame(
        Direction::Response,
        "Metadata",
        12,
        7,
        "",
        metadata_response(),
    );
    t.send(50000, true, &request);
    t.send(50000, true, &request);
    t.send(50000, false, &response);
    t.send(50000, false, &response);
    // A third answer is one too many.
    t.send(50000, false, &response);
    let cap = TempCapture::new("check-reused-answers", &t.pcap());
    let (found, _) = check_capture(cap.path());
    the(&found, "correlation-reuse");
    assert_eq!(the(&found, "duplicate-response")["frame"], 4, "{found:#?}");
}

/// A broker answering a Produce request sent with acks=0 (tansu does):
/// an error; the same request with acks=1 answered is normal.
#[test]
fn an_answer_to_an_acks_0_produce_request_is_an_error() {
    for (acks, answered_in_error) in [(0, true), (1, false)] {
        let mut t = Timeline::default();
        let body =
            json!({"TransactionalId": null, "Acks": acks, "TimeoutMs": 100, "TopicData": []});
        t.on(50000, "c").pair(
            3,
            "Produce",
            9,
            body,
            json!({"Responses": [], "ThrottleTimeMs": 0}),
        );
        let cap = TempCapture::new("check-acks0-answered", &t.pcap());
        let (found, _) = check_capture(cap.path());
        let of: Vec<&Value> = found
            .iter()
            .filter(|f| f["rule"] == "answered-acks-0")
            .collect();
        assert_eq!(
            of.len(),
            usize::from(answered_in_error),
            "acks={acks}: {found:#?}"
        );
        if let Some(f) = of.first() {
            assert_eq!(
                (f["frame"].as_u64(), f["severity"].as_str()),
                (Some(1), Some("error"))
            );
            assert_eq!(
                f["message"],
                "an answer to frame #0, a Produce request sent with acks=0, which expects none"
            );
        }
    }
}

/// A connection remembers its last 16 answers: a repeat of an older one is
/// a response no request awaited, as before (the memory stays bounded).
#[test]
fn only_the_last_sixteen_answers_are_remembered() {
    for (answers_after, rule) in [(15, "duplicate-response"), (16, "unmatched-response")] {
        let mut t = Timeline::default();
        t.on(50000, "c")
            .pair(1, "Metadata", 12, metadata_request(), metadata_response());
        for corr in 2..2 + answers_after {
            t.on(50000, "c").pair(
                corr,
                "Metadata",
                12,
                metadata_request(),
                metadata_response(),
            );
        }
        let again = frame(
            Direction::Response,
            "Metadata",
            12,
            1,
            "",
            metadata_response(),
        );
        t.send(50000, false, &again);
        let cap = TempCapture::new("check-answers-kept", &t.pcap());
        let (found, _) = check_capture(cap.path());
        let f = the(&found, rule);
        assert_eq!(f["correlation_id"], 1, "{answers_after} answers after: {f}");
    }
}

#[test]
fn bytes_in_no_frame_are_noted() {
    let mut t = Timeline::default();
    t.on(50000, "c")
        .pair(1, "Metadata", 12, metadata_request(), metadata_response());
    let mut partial = 100i32.to_be_bytes().to_vec();
    partial.extend_from_slice(&[0; 10]);
    t.send(50000, true, &partial);
    let cap = TempCapture::new("check-skipped", &t.pcap());
    let (found, _) = check_capture(cap.path());
    let f = the(&found, "skipped-bytes");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .starts_with("14 bytes in no frame"),
        "{f}"
    );
}

// ---- the command -----------------------------------------------------------

#[test]
fn json_lines_carry_every_member_and_text_ends_with_a_summary() {
    let (found, _) = check_frame_bytes(
        &replace_tail(smallest_request("Metadata", 12), 0, &[9]),
        &[],
    );
    let keys: Vec<&str> = found[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut want = [
        "frame",
        "time",
        "conn",
        "direction",
        "api_key",
        "api_version",
        "correlation_id",
        "offset",
        "rule",
        "severity",
        "message",
        "api_name",
        "frames",
        "until",
        "count",
        "client_id",
    ];
    want.sort_unstable();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, want);
    let out = common::kwire_with_stdin(
        &["check", "--binary", "-"],
        &replace_tail(smallest_request("Metadata", 12), 0, &[9]),
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // A group: severity, rule, API, count; where; what.
    assert_eq!(lines.len(), 4, "{text}");
    assert_eq!(
        lines[0], "error   trailing-bytes  Metadata v12  1 finding",
        "{text}"
    );
    assert!(lines[1].trim_start().starts_with("frame 0 @0x"), "{text}");
    assert_eq!(
        lines[2],
        "        expected the end of the frame: 1 bytes follow the MetadataRequest v12 body",
        "{text}"
    );
    assert_eq!(lines[3], "1 frame checked: 1 error, 0 warnings, 0 notes");
    assert_eq!(found[0]["api_name"], "Metadata");
    assert_eq!(found[0]["frames"], serde_json::json!([0]));
    assert_eq!(found[0]["count"], 1);
}

#[test]
fn min_severity_hides_but_still_counts() {
    let f = replace_tail(fetch_v12(), 1, &[0x80, 0x00]);
    let (found, _) = check_frame_bytes(&f, &["--min-severity", "warning"]);
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_rules_list_names_every_rule_once() {
    let rules = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(["check", "--rules"])
            .args(args)
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // Whole, a rule a line.
    let text = rules(&["--wide"]);
    assert_eq!(
        text.lines().count(),
        kwire::analysis::finding::Rule::ALL.len()
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("tag-version") && l.contains("error")),
        "{text}"
    );
    // Fitted to 100 columns: a description wraps under its column, whole.
    let fitted = rules(&[]);
    let starts = fitted.lines().filter(|l| !l.starts_with(' ')).count();
    assert_eq!(
        starts,
        kwire::analysis::finding::Rule::ALL.len(),
        "{fitted}"
    );
    assert!(fitted.lines().all(|l| l.chars().count() <= 100), "{fitted}");
    assert!(
        fitted.contains(
            "invalid-value              error    a value the encoding does not allow (a length below -1, a frame\n\
             \x20                                   size below 0)\n"
        ),
        "{fitted}"
    );
    let words = |t: &str| t.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(words(&fitted), words(&text));
}

#[test]
fn an_unreadable_input_exits_1() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["check", "/nonexistent/capture.pcap"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn the_shipped_captures() {
    // kafka-python against tansu: the broker writes Fetch v12's tag 0 (defined from v16).
    let (found, status) = check_capture("samples/captures/kafka-python.pcap");
    let errors: Vec<&Value> = found.iter().filter(|f| f["severity"] == "error").collect();
    assert_eq!(errors.len(), 1, "{found:#?}");
    let e = errors[0];
    assert_eq!(
        (
            e["rule"].as_str(),
            e["frame"].as_u64(),
            e["offset"].as_u64(),
            e["api_key"].as_i64(),
            e["direction"].as_str()
        ),
        (
            Some("tag-version"),
            Some(52),
            Some(0x1ce),
            Some(1),
            Some("response")
        )
    );
    assert_eq!(status, 3);
    for clean in [
        "samples/captures/confluent-kafka.pcap",
        "samples/captures/kcat.pcap",
    ] {
        let (found, status) = check_capture(clean);
        assert!(
            found.iter().all(|f| f["severity"] != "error"),
            "{clean}: {found:#?}"
        );
        assert_eq!(status, 0, "{clean}");
    }
}

/// Set every records field of `body` (described by `fields`), at any depth, to no bytes.
fn empty_records(
    fields: &[kwire::schema::model::FieldSpec],
    body: &mut serde_json::Map<String, Value>,
) {
    use kwire::schema::model::FieldType;
    use kwire::schema::Primitive;
    for f in fields {
        let Some(v) = body.get_mut(f.name.as_str()) else {
            continue;
        };
        match (&f.ty, v) {
            (FieldType::Primitive(Primitive::Records), v) if !v.is_null() => *v = json!(""),
            (FieldType::Struct(_), Value::Object(m)) => empty_records(&f.fields, m),
            (FieldType::Array(_), Value::Array(items)) => {
                for item in items {
                    if let Value::Object(m) = item {
                        empty_records(&f.fields, m);
                    }
                }
            }
            _ => {}
        }
    }
}

#[test]
fn nothing_kwire_encodes_is_an_error() {
    let cat = Catalogue::builtin();
    let mut frames = Vec::new();
    for (d, key, v) in all_messages(cat) {
        let fs = frame_spec(d, key, v);
        let spec = message_spec(cat, &fs).unwrap();
        for seed in 0..3u64 {
            let mut body = if seed == 0 {
                smallest_struct(&spec.fields, v)
            } else {
                random_body(spec, v, seed * 7919 + key as u64)
            };
            // Random bytes are no record batches: records fields get none.
            empty_records(&spec.fields, &mut body);
            let bytes = encode_frame(cat, &fs, &example_header(d), &body).unwrap();
            let opts = DecodeOptions {
                direction: Some(d),
                api_key: Some(key),
                api_version: Some(v),
                ..Default::default()
            };
            frames.push((
                spec.name.clone(),
                v,
                decode_frame(cat, Bytes::from(bytes), 0, &opts),
            ));
        }
    }
    assert!(frames.len() > 2000, "{} frames", frames.len());
    let mut errors = Vec::new();
    for (name, v, f) in frames {
        let mut found = Vec::new();
        check_frames(std::slice::from_ref(&f), &mut found);
        errors.extend(
            found
                .into_iter()
                .filter(|x| x.severity() == Severity::Error)
                .map(|x| format!("{name} v{v}: {} {}", x.rule.id(), x.message)),
        );
    }
    assert!(
        errors.is_empty(),
        "{} error findings, first: {:#?}",
        errors.len(),
        &errors[..errors.len().min(5)]
    );
}

// ---- rules of embedded payloads and budgets --------------------------------

#[test]
fn consumer_protocol_bytes_that_do_not_decode() {
    // ProtocolType "consumer": Metadata is a ConsumerProtocolSubscription, here version 1 cut short.
    let join = frame(
        Direction::Request,
        "JoinGroup",
        9,
        7,
        "c",
        json!({
            "GroupId": "g", "SessionTimeoutMs": 45000, "RebalanceTimeoutMs": 300000, "MemberId": "", "GroupInstanceId": null,
            "ProtocolType": "consumer", "Protocols": [{"Name": "range", "Metadata": "0001000000"}], "Reason": null
        }),
    );
    let (found, status) = check_frame_bytes(&join, &[]);
    assert_eq!(the(&found, "embedded-invalid")["severity"], "warning");
    assert_eq!(status, 0, "a warning is no error");
}

#[test]
fn an_internal_topic_record_no_schema_describes() {
    // __consumer_offsets keys start with their record type: 99 is none.
    let key = [0u8, 99, 0, 0];
    let b = batch(
        0,
        0,
        &[Rec {
            key: Some(key.to_vec()),
            value: None,
            headers: vec![],
            timestamp_delta: 0,
        }],
    );
    let f = produce(Catalogue::builtin(), "__consumer_offsets", &b);
    let (found, _) = check_frame_bytes(&f, &[]);
    assert!(
        the(&found, "unknown-payload")["message"]
            .as_str()
            .unwrap()
            .contains("99"),
        "{found:#?}"
    );
}

#[test]
fn data_over_a_budget_is_said_to_be_unchecked() {
    let recs: Vec<Rec> = (0..50)
        .map(|i| rec(&format!("value {i} {}", "x".repeat(100))))
        .collect();
    let f = produce(Catalogue::builtin(), "orders", &batch(0, 1, &recs));
    let (found, status) = check_frame_bytes(&f, &["--max-decompressed", "1K"]);
    assert!(
        the(&found, "not-checked")["message"]
            .as_str()
            .unwrap()
            .contains("--max-decompressed"),
        "{found:#?}"
    );
    assert_eq!(status, 0);
    let (found, _) = check_frame_bytes(&f, &[]);
    assert!(
        found.is_empty(),
        "within the default budget the batch is sound: {found:#?}"
    );
}

#[test]
fn sasl_tokens_after_a_v0_handshake_are_no_finding() {
    let mut t = Timeline::default();
    let token = |b: &[u8]| [(b.len() as i32).to_be_bytes().to_vec(), b.to_vec()].concat();
    t.on(50000, "c").pair(
        1,
        "SaslHandshake",
        0,
        json!({"Mechanism": "PLAIN"}),
        json!({"ErrorCode": 0, "Mechanisms": ["PLAIN"]}),
    );
    t.send(50000, true, &token(b"\0alice\0secret"));
    t.send(50000, false, &token(b""));
    t.on(50000, "c")
        .pair(2, "Metadata", 12, metadata_request(), metadata_response());
    let cap = TempCapture::new("check-sasl", &t.pcap());
    let (found, status) = check_capture(cap.path());
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(status, 0);
}

/// Compaction removes records but keeps a batch's offsets: a fetched batch
/// may end past its last record; a produced one may not, and one whose last
/// record is past its lastOffsetDelta never may.
#[test]
fn a_compacted_batch_may_end_past_its_last_record_only_when_fetched() {
    let mut recs = record_bytes(&rec("a"), 0);
    recs.extend(record_bytes(&rec("b"), 3));
    // Two records at deltas 0 and 3 of a batch that covered deltas 0 to 5.
    let compacted = patched(batch_of(0, 0, &recs, 2), |b| {
        b[23..27].copy_from_slice(&5i32.to_be_bytes())
    });
    let fetch = common::batches::fetch_v4(Catalogue::builtin(), "orders", &compacted);
    let args = ["--response", "--api", "Fetch", "--version", "4"];
    let (found, status) = check_frame_bytes(&fetch, &args);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(status, 0);
    let (found, _) = check_produce(&compacted);
    assert!(the(&found, "last-offset-delta")["message"]
        .as_str()
        .unwrap()
        .contains("the last record's offsetDelta is 3, but its batch's lastOffsetDelta"));
    // Fetched, but the last record is past the batch's end: wrong however it was made.
    let overrun = patched(batch_of(0, 0, &recs, 2), |b| {
        b[23..27].copy_from_slice(&2i32.to_be_bytes())
    });
    let fetch = common::batches::fetch_v4(Catalogue::builtin(), "orders", &overrun);
    let (found, _) = check_frame_bytes(&fetch, &args);
    assert_eq!(the(&found, "last-offset-delta")["severity"], "error");
}

/// `kwire check --format json` of a file of record batches, and the exit status.
fn check_segment(bytes: &[u8]) -> (Vec<Value>, i32) {
    let out = common::kwire_with_stdin(&["check", "--format", "json", "-"], bytes);
    (json_lines(&out.stdout), out.status.code().unwrap_or(-1))
}

/// Where each batch of a file of batches starts, read header to header.
fn batch_starts(log: &[u8]) -> Vec<usize> {
    let mut at = 0;
    let mut starts = Vec::new();
    while at + 12 <= log.len() {
        starts.push(at);
        at += 12 + i32::from_be_bytes(log[at + 8..at + 12].try_into().unwrap()) as usize;
    }
    starts
}

/// A log segment is checked batch by batch: a damaged batch is found at its
/// place in the file and named, a damaged first batch still makes the file
/// a segment, batches are checked against the batch before (offsets may not
/// go back), and a file that ends inside a batch says so (exit status 2,
/// as `kwire records` gives it).
#[test]
fn a_log_segment_is_checked_batch_by_batch() {
    let log = std::fs::read("samples/00000000000000000000.log").unwrap();
    let starts = batch_starts(&log);
    assert_eq!(starts.len(), 5, "{starts:?}");
    assert_eq!(check_segment(&log), (vec![], 0));

    // A byte of the second batch's records changed: its checksum no longer holds.
    let mut damaged = log.clone();
    damaged[starts[1] + 70] ^= 0x40;
    let (found, status) = check_segment(&damaged);
    assert_eq!((rules(&found), status), (vec!["batch-crc"], 3));
    let crc = the(&found, "batch-crc");
    assert_eq!(crc["offset"], starts[1] + 17);
    assert_eq!(crc["frame"], Value::Null);
    let stored = u32::from_be_bytes(log[starts[1] + 17..starts[1] + 21].try_into().unwrap());
    let computed = kwire::protocol::crc32c::crc32c(&damaged[starts[1] + 21..starts[2]]);
    assert_eq!(
        crc["message"],
        format!(
            "RecordBatch[1] at 0x{:04x}: expected a batch CRC-32C of 0x{computed:08x} (the bytes' checksum), found 0x{stored:08x}",
            starts[1]
        )
    );

    // Two batches damaged: the group says where each finding is.
    damaged[starts[2] + 70] ^= 0x40;
    let text = common::kwire_with_stdin(&["check", "-"], &damaged);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.starts_with(&format!(
            "error   batch-crc  2 findings\n        offsets 0x{:04x}, 0x{:04x}\n        e.g. RecordBatch[1] at 0x{:04x}: ",
            starts[1] + 17,
            starts[2] + 17,
            starts[1]
        )),
        "{text}"
    );

    // The first batch's checksum broken: still a segment, not a frame of size 0.
    let mut first = log.clone();
    first[30] ^= 1;
    let (found, status) = check_segment(&first);
    assert_eq!((rules(&found), status), (vec!["batch-crc"], 3));
    assert!(message(&found, "batch-crc").starts_with("RecordBatch[0] at 0x0000: "));

    // The second batch before the first: its offsets go back.
    let mut swapped = log[starts[1]..starts[2]].to_vec();
    swapped.extend_from_slice(&log[..starts[1]]);
    swapped.extend_from_slice(&log[starts[2]..]);
    let (found, status) = check_segment(&swapped);
    assert_eq!((rules(&found), status), (vec!["offsets-backwards"], 3));
    let back = the(&found, "offsets-backwards");
    assert_eq!(back["offset"], starts[2] - starts[1]);
    assert!(
        back["message"]
            .as_str()
            .unwrap()
            .contains("RecordBatch[1] at 0x"),
        "{back}"
    );

    // Cut inside the last batch.
    let cut = &log[..log.len() - 79];
    let (found, status) = check_segment(cut);
    assert_eq!((rules(&found), status), (vec!["skipped-bytes"], 2));
    assert_eq!(
        message(&found, "skipped-bytes"),
        format!(
            "the file ends inside a batch at 0x{:04x}: {} bytes of it present",
            starts[4],
            cut.len() - starts[4]
        )
    );
    let text = common::kwire_with_stdin(&["check", "-"], cut);
    assert!(
        String::from_utf8_lossy(&text.stdout)
            .ends_with("4 batches checked: 0 errors, 0 warnings, 1 note\n"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
}

/// A segment is named after the first offset it may hold: a first batch
/// below its file name's offset is found; the same bytes under their own
/// name are not.
#[test]
fn a_segment_starting_below_its_file_names_offset() {
    let dir = std::env::temp_dir().join(format!("kwire-segment-{}/orders-0", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = std::fs::read("samples/00000000000000000000.log").unwrap();
    for (name, want) in [
        ("00000000000000000000.log", vec![]),
        ("00000000000000000002.log", vec!["offsets-backwards"]),
        ("other.log", vec![]),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, &log).unwrap();
        let (found, status) = check_capture(path.to_str().unwrap());
        assert_eq!(rules(&found), want, "{name}");
        assert_eq!(status, if want.is_empty() { 0 } else { 3 }, "{name}");
        if !want.is_empty() {
            assert_eq!(
                message(&found, "offsets-backwards"),
                "RecordBatch[0] at 0x0000: its first offset 0 is below 2, the base offset the segment's file name gives"
            );
            assert_eq!(the(&found, "offsets-backwards")["offset"], 0);
        }
    }
    let _ = std::fs::remove_dir_all(dir.parent().unwrap());
}

/// The sample segment's batches with their offsets from `base` on, and
/// where the next offset would be.
fn segment_from(log: &[u8], base: i64) -> (Vec<u8>, i64) {
    let mut out = Vec::new();
    let mut offset = base;
    for (i, &at) in batch_starts(log).iter().enumerate() {
        let end = batch_starts(log).get(i + 1).copied().unwrap_or(log.len());
        let mut batch = log[at..end].to_vec();
        batch[..8].copy_from_slice(&offset.to_be_bytes());
        offset += i64::from(i32::from_be_bytes(batch[23..27].try_into().unwrap())) + 1;
        out.extend(batch);
    }
    (out, offset)
}

/// A partition's directory is checked segment by segment in offset order
/// (other files passed over), each segment's findings led by its name, and
/// each segment against the one before: one that starts at an offset the
/// segment before holds is found.
#[test]
fn a_partition_directory_is_checked_segment_by_segment() {
    let root = std::env::temp_dir().join(format!("kwire-partition-{}", std::process::id()));
    let dir = root.join("orders-0");
    std::fs::create_dir_all(&dir).unwrap();
    let log = std::fs::read("samples/00000000000000000000.log").unwrap();
    let (second, next) = segment_from(&log, 20);
    assert_eq!(next, 40);
    std::fs::write(dir.join("00000000000000000000.log"), &log).unwrap();
    std::fs::write(dir.join("00000000000000000020.log"), &second).unwrap();
    std::fs::write(dir.join("00000000000000000020.index"), [0u8; 12]).unwrap();
    let path = dir.to_str().unwrap();
    let text = common::kwire_with_stdin(&["check", path], b"");
    assert_eq!(
        (
            String::from_utf8_lossy(&text.stdout).as_ref(),
            text.status.code()
        ),
        (
            "10 batches checked: 0 errors, 0 warnings, 0 notes\n",
            Some(0)
        )
    );

    // A third segment named inside the second's offsets, its second batch damaged.
    let (mut third, _) = segment_from(&log, 30);
    let starts = batch_starts(&third);
    third[starts[1] + 70] ^= 0x40;
    std::fs::write(dir.join("00000000000000000030.log"), &third).unwrap();
    let (found, status) = check_capture(path);
    assert_eq!(
        (rules(&found), status),
        (vec!["offsets-backwards", "batch-crc"], 3)
    );
    assert_eq!(
        message(&found, "offsets-backwards"),
        "00000000000000000030.log: its base offset 30 is not past 39, the last offset 00000000000000000020.log holds"
    );
    assert!(
        message(&found, "batch-crc").starts_with(&format!(
            "00000000000000000030.log: RecordBatch[1] at 0x{:04x}: expected a batch CRC-32C",
            starts[1]
        )),
        "{found:#?}"
    );

    let empty = root.join("empty-0");
    std::fs::create_dir_all(&empty).unwrap();
    let out = common::kwire_with_stdin(&["check", empty.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no log segment in it"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(root);
}
