//! `kwire stats` and the exchange filter, on captures whose packet times are
//! set: every percentile, grouping and filter with exact numbers, errors by
//! name, requests never answered and responses without a request; the
//! `"capture"` member of `capture`'s JSON; and the shipped captures.

mod common;

use common::exchanges::{frame, TempCapture, T0};
use common::pcap_writer::{pcap_timed, Link, Seg, CLIENT_ISN, SERVER_ISN};
use kwire::decode::Direction;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;

const MS: u64 = 1000;

fn request(api: &str, version: i16, corr: i32, client_id: &str, body: Value) -> Vec<u8> {
    frame(Direction::Request, api, version, corr, client_id, body)
}

fn response(api: &str, version: i16, corr: i32, body: Value) -> Vec<u8> {
    frame(Direction::Response, api, version, corr, "", body)
}

/// TCP packets with the times we choose, over connections told apart by the client port.
#[derive(Default)]
struct Timeline {
    packets: Vec<(u64, Seg)>,
    /// Next sequence number per connection: [server → client, client → server].
    next: HashMap<u16, [u32; 2]>,
}

impl Timeline {
    /// Send `bytes` in one direction as `times.len()` segments, the k-th at
    /// `times[k]` (µs after T0); a connection's first packet follows its handshake.
    fn send(&mut self, port: u16, from_client: bool, times: &[u64], bytes: &[u8]) {
        let t = T0 + times[0];
        let next = self.next.entry(port).or_insert_with(|| {
            self.packets.push((
                t,
                Seg {
                    syn: true,
                    client_port: port,
                    ..Seg::data(true, CLIENT_ISN, 0, vec![])
                },
            ));
            self.packets.push((
                t,
                Seg {
                    syn: true,
                    client_port: port,
                    ..Seg::data(false, SERVER_ISN, CLIENT_ISN + 1, vec![])
                },
            ));
            [SERVER_ISN.wrapping_add(1), CLIENT_ISN + 1]
        });
        let i = usize::from(from_client);
        let chunk = bytes.len().div_ceil(times.len());
        for (k, piece) in bytes.chunks(chunk).enumerate() {
            let seg = Seg {
                client_port: port,
                ..Seg::data(from_client, next[i], next[1 - i], piece.to_vec())
            };
            next[i] = next[i].wrapping_add(piece.len() as u32);
            self.packets.push((T0 + times[k], seg));
        }
    }

    fn pcap(&self) -> Vec<u8> {
        pcap_timed(Link::EthernetV4, &self.packets)
    }
}

/// Run kwire: (exit status, stdout, stderr).
/// `kwire ARGS --wide`: every column of the tables, whatever the width.
fn kwire(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .arg("--wide")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// `kwire stats FILE --format json ARGS…`, parsed; the status must be `status`.
fn stats_json(file: &TempCapture, args: &[&str], status: i32) -> Value {
    let mut all = vec!["stats", file.path(), "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = kwire(&all);
    assert_eq!(code, status, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// The row of `rows` whose `key` member is `value`.
fn row<'v>(rows: &'v Value, key: &str, value: Value) -> &'v Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|r| r[key] == value)
        .unwrap_or_else(|| panic!("no row {key}={value} in {rows}"))
}

fn latency(min: u64, p50: u64, p90: u64, p99: u64, max: u64, mean: f64) -> Value {
    json!({"min": min, "p50": p50, "p90": p90, "p99": p99, "max": max, "mean": mean})
}

/// Ten Metadata pairs taking 1 to 10 ms (in shuffled order), three Heartbeat
/// pairs taking 3, 1 and 2 ms, and an ApiVersions pair whose request and
/// response each arrive in two packets.
fn timings() -> (Timeline, u64, u64) {
    let mut t = Timeline::default();
    let mut now = 0;
    let mut corr = 0;
    let (mut req_bytes, mut resp_bytes) = (0, 0);
    for ms in [3, 7, 1, 10, 5, 2, 9, 4, 8, 6] {
        corr += 1;
        let (q, r) = (
            request("Metadata", 12, corr, "timer", json!({"Topics": []})),
            response("Metadata", 12, corr, json!({})),
        );
        (req_bytes, resp_bytes) = (req_bytes + q.len() as u64, resp_bytes + r.len() as u64);
        t.send(50000, true, &[now], &q);
        t.send(50000, false, &[now + ms * MS], &r);
        now += ms * MS + 500;
    }
    for ms in [3, 1, 2] {
        corr += 1;
        t.send(
            50000,
            true,
            &[now],
            &request(
                "Heartbeat",
                4,
                corr,
                "timer",
                json!({"GroupId": "g", "MemberId": "m"}),
            ),
        );
        t.send(
            50000,
            false,
            &[now + ms * MS],
            &response("Heartbeat", 4, corr, json!({})),
        );
        now += ms * MS + 500;
    }
    // The latency runs from the packet completing the request to the one completing the response.
    corr += 1;
    t.send(
        50000,
        true,
        &[now, now + 5 * MS],
        &request("ApiVersions", 3, corr, "timer", json!({})),
    );
    t.send(
        50000,
        false,
        &[now + 7 * MS, now + 9 * MS + 500],
        &response("ApiVersions", 3, corr, json!({})),
    );
    (t, req_bytes, resp_bytes)
}

#[test]
fn every_percentile_is_the_nearest_rank_of_the_packet_times() {
    let (t, req_bytes, resp_bytes) = timings();
    let file = TempCapture::new("timings", &t.pcap());
    let s = stats_json(&file, &[], 0);
    assert_eq!(
        (
            &s["frames"],
            &s["pairs"],
            &s["unanswered_requests"],
            &s["unmatched_responses"]
        ),
        (&json!(28), &json!(14), &json!(0), &json!(0))
    );
    let metadata = row(&s["by_api"], "api_name", json!("Metadata"));
    assert_eq!(metadata["api_key"], 3);
    assert_eq!(metadata["api_version"], 12);
    assert_eq!(
        (&metadata["requests"], &metadata["responses"]),
        (&json!(10), &json!(10))
    );
    assert_eq!(
        (&metadata["request_bytes"], &metadata["response_bytes"]),
        (&json!(req_bytes), &json!(resp_bytes))
    );
    assert_eq!(metadata["errors"], json!({}));
    // Nearest rank: p50 is the 5th of 10, p90 the 9th, p99 the 10th.
    assert_eq!(
        metadata["latency_us"],
        latency(1000, 5000, 9000, 10000, 10000, 5500.0)
    );
    // 3 values: p50 the 2nd (⌈1.5⌉), p90 and p99 the 3rd.
    let heartbeat = row(&s["by_api"], "api_name", json!("Heartbeat"));
    assert_eq!(
        heartbeat["latency_us"],
        latency(1000, 2000, 3000, 3000, 3000, 2000.0)
    );
    let api_versions = row(&s["by_api"], "api_name", json!("ApiVersions"));
    assert_eq!(
        api_versions["latency_us"],
        latency(4500, 4500, 4500, 4500, 4500, 4500.0)
    );
    // The members in the order the issue gives them.
    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "frames",
            "pairs",
            "unanswered_requests",
            "unmatched_responses",
            "by_api",
            "findings"
        ]
    );
    let keys: Vec<&String> = metadata.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "api_key",
            "api_name",
            "api_version",
            "requests",
            "responses",
            "errors",
            "request_bytes",
            "response_bytes",
            "latency_us"
        ]
    );

    // The text table says the same.
    let (code, text, err) = kwire(&["stats", file.path()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with("frames 28, pairs 14, unanswered requests 0, unmatched responses 0\n"),
        "{text}"
    );
    let line = text.lines().find(|l| l.starts_with("Metadata")).unwrap();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "Metadata",
            "v12",
            "10",
            "10",
            "0",
            &req_bytes.to_string(),
            &resp_bytes.to_string(),
            "1.0",
            "ms",
            "5.0",
            "ms",
            "9.0",
            "ms",
            "10.0",
            "ms",
            "10.0",
            "ms",
            "5.5",
            "ms",
            "-"
        ]
    );
}

/// Topic ids: one the capture ties to a name (in a Metadata response), one it never does.
const ORDERS_ID: &str = "11111111-1111-1111-1111-111111111111";
const UNKNOWN_ID: &str = "22222222-2222-2222-2222-222222222222";

/// Two clients on two connections to one broker:
/// - conn 0, `alpha`: Produce to orders and payments (2 ms; NOT_LEADER_OR_FOLLOWER
///   on two partitions of orders), Produce to orders (4 ms;
///   UNKNOWN_TOPIC_OR_PARTITION), Metadata naming orders with its id (1 ms);
/// - conn 1, `beta`: Fetch by orders' id (6 ms), Fetch by an unknown id (8 ms;
///   error code 9999, which has no name), Produce to payments never answered
///   (the capture goes on 3 ms after it), and a response to no request.
///
/// Returns the timeline and each frame's length, by name.
fn conversations() -> (Timeline, HashMap<&'static str, u64>) {
    let mut t = Timeline::default();
    let mut len = HashMap::new();
    let mut send = |t: &mut Timeline,
                    name: &'static str,
                    port: u16,
                    from_client: bool,
                    at: u64,
                    bytes: Vec<u8>| {
        len.insert(name, bytes.len() as u64);
        t.send(port, from_client, &[at * MS], &bytes);
    };
    let produce = |corr, topics: &[&str]| {
        let data: Vec<Value> = topics
            .iter()
            .map(|n| json!({"Name": n, "PartitionData": [{"Index": 0, "Records": null}]}))
            .collect();
        request(
            "Produce",
            9,
            corr,
            "alpha",
            json!({"Acks": -1, "TimeoutMs": 1000, "TopicData": data}),
        )
    };
    let partitions = |codes: &[i16]| -> Vec<Value> {
        codes
            .iter()
            .enumerate()
            .map(|(i, c)| json!({"Index": i, "ErrorCode": c}))
            .collect()
    };
    send(
        &mut t,
        "produce1",
        50001,
        true,
        0,
        produce(1, &["orders", "payments"]),
    );
    send(
        &mut t,
        "produce1 response",
        50001,
        false,
        2,
        response(
            "Produce",
            9,
            1,
            json!({"Responses": [{"Name": "orders", "PartitionResponses": partitions(&[6, 6])}, {"Name": "payments", "PartitionResponses": partitions(&[0])}]}),
        ),
    );
    send(&mut t, "produce2", 50001, true, 10, produce(2, &["orders"]));
    send(
        &mut t,
        "produce2 response",
        50001,
        false,
        14,
        response(
            "Produce",
            9,
            2,
            json!({"Responses": [{"Name": "orders", "PartitionResponses": partitions(&[3])}]}),
        ),
    );
    send(
        &mut t,
        "metadata",
        50001,
        true,
        20,
        request("Metadata", 12, 3, "alpha", json!({"Topics": null})),
    );
    send(
        &mut t,
        "metadata response",
        50001,
        false,
        21,
        response(
            "Metadata",
            12,
            3,
            json!({"Topics": [{"Name": "orders", "TopicId": ORDERS_ID}]}),
        ),
    );
    let fetch = |corr, id: &str| {
        request(
            "Fetch",
            13,
            corr,
            "beta",
            json!({"Topics": [{"TopicId": id, "Partitions": [{"Partition": 0}]}]}),
        )
    };
    send(&mut t, "fetch1", 50002, true, 30, fetch(1, ORDERS_ID));
    send(
        &mut t,
        "fetch1 response",
        50002,
        false,
        36,
        response(
            "Fetch",
            13,
            1,
            json!({"Responses": [{"TopicId": ORDERS_ID, "Partitions": [{"PartitionIndex": 0}]}]}),
        ),
    );
    send(&mut t, "fetch2", 50002, true, 40, fetch(2, UNKNOWN_ID));
    send(
        &mut t,
        "fetch2 response",
        50002,
        false,
        48,
        response(
            "Fetch",
            13,
            2,
            json!({"ErrorCode": 9999, "Responses": [{"TopicId": UNKNOWN_ID}]}),
        ),
    );
    let lone = request(
        "Produce",
        9,
        3,
        "beta",
        json!({"Acks": 0, "TimeoutMs": 1000, "TopicData": [{"Name": "payments"}]}),
    );
    send(&mut t, "produce3", 50002, true, 50, lone);
    // A response whose request the capture never saw: correlation id 77.
    send(
        &mut t,
        "lone response",
        50002,
        false,
        53,
        response("Heartbeat", 4, 77, json!({})),
    );
    (t, len)
}

/// The figures of a row: requests, responses, errors, bytes, latency.
fn figures(r: &Value) -> Value {
    json!([
        r["requests"],
        r["responses"],
        r["errors"],
        r["request_bytes"],
        r["response_bytes"],
        r["latency_us"]
    ])
}

#[test]
fn every_grouping_counts_its_exchanges() {
    let (t, len) = conversations();
    let file = TempCapture::new("groups", &t.pcap());
    let s = stats_json(
        &file,
        &["--by", "client,conn", "--by", "broker", "--by", "topic"],
        0,
    );
    assert_eq!(
        (
            &s["frames"],
            &s["pairs"],
            &s["unanswered_requests"],
            &s["unmatched_responses"]
        ),
        (&json!(12), &json!(5), &json!(1), &json!(1))
    );
    let keys: Vec<&String> = s.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "frames",
            "pairs",
            "unanswered_requests",
            "unmatched_responses",
            "by_api",
            "by_client",
            "by_conn",
            "by_broker",
            "by_topic",
            "findings"
        ]
    );
    let l = |names: &[&str]| -> u64 { names.iter().map(|n| len[n]).sum() };

    // By API: errors by name, once per response (two partitions with one error count once).
    let produce = row(&s["by_api"], "api_name", json!("Produce"));
    assert_eq!(
        figures(produce),
        json!([3, 2, {"UNKNOWN_TOPIC_OR_PARTITION": 1, "NOT_LEADER_OR_FOLLOWER": 1}, l(&["produce1", "produce2", "produce3"]), l(&["produce1 response", "produce2 response"]), latency(2000, 2000, 4000, 4000, 4000, 3000.0)])
    );
    let fetch = row(&s["by_api"], "api_name", json!("Fetch"));
    assert_eq!(
        figures(fetch),
        json!([2, 2, {"9999": 1}, l(&["fetch1", "fetch2"]), l(&["fetch1 response", "fetch2 response"]), latency(6000, 6000, 8000, 8000, 8000, 7000.0)])
    );
    assert_eq!(
        s["by_api"].as_array().unwrap().len(),
        3,
        "the lone response is in no row"
    );

    // By client id and by connection: the same split here.
    let alpha = json!([3, 3, {"UNKNOWN_TOPIC_OR_PARTITION": 1, "NOT_LEADER_OR_FOLLOWER": 1}, l(&["produce1", "produce2", "metadata"]), l(&["produce1 response", "produce2 response", "metadata response"]), latency(1000, 2000, 4000, 4000, 4000, 7000.0 / 3.0)]);
    let beta = json!([3, 2, {"9999": 1}, l(&["fetch1", "fetch2", "produce3"]), l(&["fetch1 response", "fetch2 response"]), latency(6000, 6000, 8000, 8000, 8000, 7000.0)]);
    assert_eq!(
        figures(row(&s["by_client"], "client_id", json!("alpha"))),
        alpha
    );
    assert_eq!(
        figures(row(&s["by_client"], "client_id", json!("beta"))),
        beta
    );
    assert_eq!(figures(row(&s["by_conn"], "conn", json!(0))), alpha);
    assert_eq!(figures(row(&s["by_conn"], "conn", json!(1))), beta);
    let broker = row(&s["by_broker"], "broker", json!("10.0.0.2:9092"));
    assert_eq!(
        (&broker["requests"], &broker["responses"]),
        (&json!(6), &json!(5))
    );
    assert_eq!(s["by_broker"].as_array().unwrap().len(), 1);

    // By topic: an exchange counts for every topic its request or response
    // names; Fetch by orders' id counts under orders, whose id the Metadata
    // response gave; the id never named stays an id.
    let orders = row(&s["by_topic"], "topic", json!("orders"));
    assert_eq!(
        figures(orders),
        json!([4, 4, {"UNKNOWN_TOPIC_OR_PARTITION": 1, "NOT_LEADER_OR_FOLLOWER": 1}, l(&["produce1", "produce2", "metadata", "fetch1"]), l(&["produce1 response", "produce2 response", "metadata response", "fetch1 response"]), latency(1000, 2000, 6000, 6000, 6000, 3250.0)])
    );
    let payments = row(&s["by_topic"], "topic", json!("payments"));
    assert_eq!(
        figures(payments),
        json!([2, 1, {"NOT_LEADER_OR_FOLLOWER": 1}, l(&["produce1", "produce3"]), l(&["produce1 response"]), latency(2000, 2000, 2000, 2000, 2000, 2000.0)])
    );
    let unknown = row(&s["by_topic"], "topic", json!(UNKNOWN_ID));
    assert_eq!(
        figures(unknown),
        json!([1, 1, {"9999": 1}, l(&["fetch2"]), l(&["fetch2 response"]), latency(8000, 8000, 8000, 8000, 8000, 8000.0)])
    );
    assert_eq!(s["by_topic"].as_array().unwrap().len(), 3);

    // Text: one table per grouping; `--by topic` alone leaves out the table by API.
    let (code, text, _) = kwire(&["stats", file.path(), "--by", "topic"]);
    assert_eq!(code, 0);
    assert!(
        text.contains("(responses without their request are in no row: their API is not known)"),
        "{text}"
    );
    assert!(!text.contains("Produce"), "{text}");
    let line = text.lines().find(|l| l.starts_with("orders")).unwrap();
    assert!(
        line.ends_with("UNKNOWN_TOPIC_OR_PARTITION=1 NOT_LEADER_OR_FOLLOWER=1"),
        "errors by code: {line}"
    );
    let (_, text, _) = kwire(&["stats", file.path(), "--by", "client"]);
    assert!(text.lines().any(|l| l.starts_with("\"beta\"")), "{text}");
}

#[test]
fn each_filter_selects_its_exchanges() {
    let (t, _) = conversations();
    let file = TempCapture::new("filters", &t.pcap());
    let counts = |args: &[&str]| {
        let s = stats_json(&file, args, 0);
        [
            &s["frames"],
            &s["pairs"],
            &s["unanswered_requests"],
            &s["unmatched_responses"],
        ]
        .map(|v| v.as_u64().unwrap())
    };
    assert_eq!(counts(&[]), [12, 5, 1, 1]);
    assert_eq!(counts(&["--api", "Produce"]), [5, 2, 1, 0]);
    assert_eq!(counts(&["--api", "1"]), [4, 2, 0, 0]);
    // orders: both Produce, the Metadata response naming it, the Fetch by its id.
    assert_eq!(counts(&["--topic", "orders"]), [8, 4, 0, 0]);
    assert_eq!(counts(&["--topic", "payments"]), [3, 1, 1, 0]);
    assert_eq!(counts(&["--topic", UNKNOWN_ID]), [2, 1, 0, 0]);
    // The same id as Kafka prints it (base64).
    assert_eq!(counts(&["--topic", "IiIiIiIiIiIiIiIiIiIiIg"]), [2, 1, 0, 0]);
    assert_eq!(counts(&["--client-id", "beta"]), [5, 2, 1, 0]);
    // A connection's lone response passes --conn (its API is not needed for that).
    assert_eq!(counts(&["--conn", "1"]), [6, 2, 1, 1]);
    assert_eq!(counts(&["--error"]), [6, 3, 0, 0]);
    assert_eq!(counts(&["--error", "NOT_LEADER_OR_FOLLOWER"]), [2, 1, 0, 0]);
    assert_eq!(
        counts(&["--error", "unknown_topic_or_partition"]),
        [2, 1, 0, 0]
    );
    assert_eq!(counts(&["--error", "9999"]), [2, 1, 0, 0]);
    // Latencies 2, 4, 1, 6 and 8 ms; the request never answered waited 3 ms.
    assert_eq!(counts(&["--min-latency", "4"]), [6, 3, 0, 0]);
    assert_eq!(counts(&["--min-latency", "2.5"]), [7, 3, 1, 0]);
    assert_eq!(counts(&["--min-latency", "0"]), [11, 5, 1, 0]);
    // Criteria together must all hold.
    assert_eq!(
        counts(&[
            "--client-id",
            "alpha",
            "--topic",
            "orders",
            "--min-latency",
            "2"
        ]),
        [4, 2, 0, 0]
    );
    assert_eq!(
        counts(&["--api", "Fetch", "--error", "--conn", "1"]),
        [2, 1, 0, 0]
    );

    // Nothing matches: said on stderr, status 1, the empty figures still printed.
    let (code, out, err) = kwire(&[
        "stats",
        file.path(),
        "--client-id",
        "nobody",
        "--format",
        "json",
    ]);
    assert_eq!(code, 1);
    assert!(
        err.contains("no exchange matches --client-id \"nobody\""),
        "{err}"
    );
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap()["frames"], 0);
    let (code, _, err) = kwire(&["stats", file.path(), "--error", "NO_SUCH_ERROR"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown error \"NO_SUCH_ERROR\""), "{err}");
    let (code, _, _) = kwire(&["stats", file.path(), "--min-latency", "-1"]);
    assert_eq!(code, 2);
}

/// A broker answers a connection's requests in order: the one answer under
/// a reused correlation id is the first request's.
#[test]
fn a_reused_correlation_id_is_answered_first_in_first_out() {
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &[0],
        &request("Metadata", 12, 5, "c", json!({})),
    );
    t.send(
        50000,
        true,
        &[4 * MS],
        &request("Metadata", 12, 5, "c", json!({})),
    );
    t.send(
        50000,
        false,
        &[5 * MS],
        &response("Metadata", 12, 5, json!({})),
    );
    t.send(
        50000,
        true,
        &[20 * MS],
        &request("Heartbeat", 4, 6, "c", json!({})),
    );
    let file = TempCapture::new("reused", &t.pcap());
    let s = stats_json(&file, &[], 0);
    assert_eq!(
        (&s["frames"], &s["pairs"], &s["unanswered_requests"]),
        (&json!(4), &json!(1), &json!(2))
    );
    // The response pairs with the first request, as `capture` pairs it.
    let metadata = row(&s["by_api"], "api_name", json!("Metadata"));
    assert_eq!(
        (&metadata["requests"], &metadata["responses"]),
        (&json!(2), &json!(1))
    );
    assert_eq!(
        metadata["latency_us"],
        latency(5000, 5000, 5000, 5000, 5000, 5000.0)
    );
    // The second waited from 4 ms to the capture's end (20 ms); the
    // Heartbeat is the capture's last frame, so it waited no time at all.
    let unanswered =
        |ms: &str| stats_json(&file, &["--min-latency", ms], 0)["unanswered_requests"].clone();
    assert_eq!(unanswered("16"), 1);
    assert_eq!(unanswered("0"), 2);
    let (code, _, err) = kwire(&["stats", file.path(), "--min-latency", "16.001"]);
    assert_eq!(code, 1, "{err}");
}

/// `capture --list` lines: (frame number, arrow) for each.
fn listed(file: &TempCapture, args: &[&str]) -> (i32, Vec<(usize, bool)>, String) {
    let mut all = vec!["capture", file.path(), "--list"];
    all.extend_from_slice(args);
    let (code, out, err) = kwire(&all);
    let lines = common::frame_rows(&out)
        .into_iter()
        .map(|l| {
            (
                l.split_whitespace().next().unwrap().parse().unwrap(),
                l.contains(" → "),
            )
        })
        .collect();
    (code, lines, err)
}

#[test]
fn capture_shows_the_frames_of_the_exchanges_selected() {
    let (t, _) = conversations();
    let file = TempCapture::new("capture-filters", &t.pcap());
    // Frames: 0-5 conn 0 (produce1, response, produce2, response, metadata,
    // response), 6-9 conn 1 (fetch1, response, fetch2, response), 10 produce3,
    // 11 the lone response.
    let frames = |args: &[&str]| {
        listed(&file, args)
            .1
            .into_iter()
            .map(|(n, _)| n)
            .collect::<Vec<_>>()
    };
    assert_eq!(frames(&["--error"]), [0, 1, 2, 3, 8, 9]);
    assert_eq!(frames(&["--error", "NOT_LEADER_OR_FOLLOWER"]), [0, 1]);
    assert_eq!(frames(&["--topic", "orders"]), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(frames(&["--client-id", "beta"]), [6, 7, 8, 9, 10]);
    assert_eq!(frames(&["--min-latency", "2.5"]), [2, 3, 6, 7, 8, 9, 10]);
    assert_eq!(frames(&["--conn", "1", "--api", "Fetch"]), [6, 7, 8, 9]);
    assert_eq!(frames(&["--conn", "1"]), [6, 7, 8, 9, 10, 11]);
    // Frame-level selections combine with them.
    assert_eq!(frames(&["--error", "--correlation-id", "2"]), [2, 3, 8, 9]);
    let (code, lines, err) = listed(&file, &["--topic", "nothing"]);
    assert_eq!((code, lines.len()), (1, 0));
    assert!(
        err.contains("no frame matches --topic \"nothing\""),
        "{err}"
    );

    // A request whose response decides is shown with it, after the frames
    // that came between.
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &[0],
        &request("Metadata", 12, 1, "c", json!({})),
    );
    t.send(
        50000,
        true,
        &[MS],
        &request("Heartbeat", 4, 2, "c", json!({})),
    );
    t.send(
        50000,
        false,
        &[2 * MS],
        &response("Heartbeat", 4, 2, json!({})),
    );
    t.send(
        50000,
        false,
        &[9 * MS],
        &response("Metadata", 12, 1, json!({})),
    );
    let file = TempCapture::new("capture-order", &t.pcap());
    let (code, lines, err) = listed(&file, &["--min-latency", "5"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(lines, [(0, true), (3, false)]);
    let (_, lines, _) = listed(&file, &["--min-latency", "0"]);
    assert_eq!(
        lines,
        [(1, true), (2, false), (0, true), (3, false)],
        "held requests come out with their response"
    );
}

#[test]
fn capture_json_says_where_each_frame_came_from() {
    let (t, _, _) = timings();
    let file = TempCapture::new("provenance", &t.pcap());
    let (code, out, err) = kwire(&["capture", file.path(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 28);
    // Epoch seconds to the microsecond, written with all six decimals.
    assert!(lines[0].ends_with(r#","capture":{"frame":0,"time":1700000000.0,"conn":0,"src":"10.0.0.1:50000","dst":"10.0.0.2:9092"}}"#), "{}", lines[0]);
    assert!(lines[1].ends_with(r#","capture":{"frame":1,"time":1700000000.003,"conn":0,"src":"10.0.0.2:9092","dst":"10.0.0.1:50000"}}"#), "{}", lines[1]);
    // The ApiVersions response: completed by its second packet.
    let last: Value = serde_json::from_str(lines[27]).unwrap();
    let end = t.packets.last().unwrap().0;
    assert_eq!(last["capture"]["time"].as_f64().unwrap(), end as f64 / 1e6);
    assert_eq!(last["capture"]["frame"], 27);

    // Everything else is the decoder's contract, as `kwire decode` prints it for the same capture.
    let (_, decoded, _) = kwire(&["decode", file.path(), "--json"]);
    assert!(!decoded.contains("\"capture\""));
    for (with, without) in lines.iter().zip(decoded.lines()) {
        let mut v: Value = serde_json::from_str(with).unwrap();
        v.as_object_mut().unwrap().remove("capture");
        assert_eq!(v, serde_json::from_str::<Value>(without).unwrap());
        assert!(
            with.starts_with(&without[..without.len() - 1]),
            "the member is added last, the rest unchanged"
        );
    }

    // Tree JSON too; skip notes keep their own members.
    let (_, tree, _) = kwire(&["capture", file.path(), "--format", "tree-json"]);
    let first: Value = serde_json::from_str(tree.lines().next().unwrap()).unwrap();
    assert_eq!(
        first["capture"],
        json!({"frame": 0, "time": 1700000000.0, "conn": 0, "src": "10.0.0.1:50000", "dst": "10.0.0.2:9092"})
    );
    assert!(first["tree"].is_object());
}

#[test]
fn stats_on_the_shipped_captures() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("samples/captures");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "pcap") {
            continue;
        }
        seen += 1;
        let p = path.to_str().unwrap();
        let (code, out, err) = kwire(&[
            "stats",
            p,
            "--format",
            "json",
            "--by",
            "client,conn,broker,topic",
        ]);
        assert_eq!(code, 0, "{p}: {err}");
        let s: Value = serde_json::from_str(&out).unwrap();
        // Every frame is in an exchange; the counts agree with the listing's
        // pairs (same connection and correlation id, the response after).
        let (_, listing, _) = kwire(&["capture", p, "--list"]);
        let (mut open, mut pairs, mut unmatched) = (std::collections::HashSet::new(), 0, 0);
        for line in common::frame_rows(&listing) {
            let w: Vec<&str> = line.split_whitespace().collect();
            let (conn, arrow, api, corr) = (w[3], w[4], w[5], w[7]);
            if arrow == "→" {
                open.insert((conn, corr));
            } else if api != "?" && open.remove(&(conn, corr)) {
                pairs += 1;
            } else {
                unmatched += 1;
            }
        }
        assert_eq!(s["frames"], common::frame_rows(&listing).len(), "{p}");
        assert_eq!(
            [
                &s["pairs"],
                &s["unanswered_requests"],
                &s["unmatched_responses"]
            ],
            [&json!(pairs), &json!(open.len()), &json!(unmatched)],
            "{p}"
        );
        let sum = |rows: &Value, m: &str| {
            rows.as_array()
                .unwrap()
                .iter()
                .map(|r| r[m].as_u64().unwrap())
                .sum::<u64>()
        };
        for grouping in ["by_api", "by_client", "by_conn", "by_broker"] {
            assert_eq!(
                sum(&s[grouping], "responses"),
                s["pairs"].as_u64().unwrap(),
                "{p} {grouping}"
            );
        }
        for r in s["by_api"].as_array().unwrap() {
            let l = &r["latency_us"];
            assert!(
                l["min"].as_u64() <= l["p50"].as_u64()
                    && l["p50"].as_u64() <= l["p90"].as_u64()
                    && l["p99"].as_u64() <= l["max"].as_u64(),
                "{r}"
            );
        }
        let (code, text, _) = kwire(&["stats", p]);
        assert_eq!(code, 0);
        assert!(text.lines().any(|l| l.starts_with("ApiVersions")), "{text}");
    }
    assert!(seen >= 2);
    // kafka-python's consumer joined its group: the first JoinGroup is answered MEMBER_ID_REQUIRED.
    let (_, out, _) = kwire(&[
        "stats",
        dir.join("kafka-python.pcap").to_str().unwrap(),
        "--format",
        "json",
        "--by",
        "topic",
    ]);
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        row(&s["by_api"], "api_name", json!("JoinGroup"))["errors"],
        json!({"MEMBER_ID_REQUIRED": 1})
    );
    assert_eq!(
        row(&s["by_topic"], "topic", json!("payments"))["requests"],
        11
    );
}
