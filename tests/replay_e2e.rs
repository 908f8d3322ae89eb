//! `kwire replay CAPTURE --broker HOST:PORT` against a real broker (tansu
//! 0.6.0). What the tests show:
//!
//! - a conversation recorded by `kwire proxy --write-pcap` (librdkafka and
//!   kafka-python producing and consuming in a group, through
//!   scripts/e2e-clients/produce_consume.py), replayed with `--map` against
//!   a fresh broker, gets the same answers where the broker's answers depend
//!   only on what was sent (ApiVersions, Metadata, CreateTopics, Produce,
//!   ListOffsets), and no answer that says the ids `--map` carries (member
//!   and generation ids, producer ids and epochs, fetch sessions) were
//!   wrong; every exchange accounted for once, the summary and the exit
//!   status agreeing with the lines, and `--write-pcap` holding what was sent;
//! - the same for the shipped captures made against tansu
//!   (samples/captures/kafka-python.pcap and confluent-kafka.pcap), in JSON
//!   and in text;
//! - a broker that dies mid-replay: the exchanges after it are `no-answer` or
//!   `not-sent`, exit status 3, within a bounded time, never a hang;
//! - a broker nobody listens on, or a file that is not a capture: exit
//!   status 2 with a message.
//!
//! Each test starts its own broker on a free port. The ones that need tansu
//! (and the Python clients) are ignored by a plain `cargo test`;
//! `cargo test -- --include-ignored` runs them and fails when those are
//! missing (`bash .ci/run` installs them).
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

mod common;

use common::broker::{
    assert_consumed_in_order, capture_json, free_port, json_lines, messages, python, repo,
    require_all, said, scratch, serial, spawn_kwire, wait_for, write_messages, Collected, Proxy,
    Tansu,
};
use common::exchanges::Timeline;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::net::TcpListener;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

const VERDICTS: [&str; 5] = ["same", "differs", "no-answer", "not-sent", "not-compared"];

/// `kwire replay` running, its output collected as it comes.
struct Running {
    child: Child,
    stdout: Collected,
    stderr: Collected,
    args: String,
}

/// A finished `kwire replay`: exit status, output, and how long it took.
struct Replayed {
    status: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

fn start_replay(args: &[&str]) -> (Running, Instant) {
    let mut child = spawn_kwire(&[&["replay"], args].concat());
    let running = Running {
        stdout: Collected::from(child.stdout.take().unwrap()),
        stderr: Collected::from(child.stderr.take().unwrap()),
        child,
        args: args.join(" "),
    };
    (running, Instant::now())
}

/// Waits for a replay to end, at most `limit` (a replay still running then
/// is killed, and the test fails: a hang).
fn finish((mut r, started): (Running, Instant), limit: Duration) -> Replayed {
    let status = wait_for(&mut r.child, limit);
    let took = started.elapsed();
    let Some(status) = status else {
        let _ = r.child.kill();
        let _ = r.child.wait();
        panic!(
            "kwire replay {} did not finish within {limit:?}\n{}\n{}",
            r.args,
            r.stdout.text(),
            r.stderr.text()
        );
    };
    // The pipes' readers finish with the process.
    std::thread::sleep(Duration::from_millis(100));
    Replayed {
        status: status.code(),
        stdout: r.stdout.text(),
        stderr: r.stderr.text(),
        took,
    }
}

fn replay(args: &[&str], limit: Duration) -> Replayed {
    finish(start_replay(args), limit)
}

/// `--format json` output: one object per exchange, then the summary's.
struct Outcome {
    exchanges: Vec<Value>,
    summary: Value,
}

fn outcome(r: &Replayed) -> Outcome {
    let mut lines = json_lines(&r.stdout);
    let last = lines
        .pop()
        .unwrap_or_else(|| panic!("kwire replay printed nothing:\n{}", r.stderr));
    let summary = last
        .get("summary")
        .unwrap_or_else(|| panic!("the last line is not the summary: {last}\n{}", r.stderr))
        .clone();
    Outcome {
        exchanges: lines,
        summary,
    }
}

/// Exchanges as their JSON, one a line.
fn lines(exchanges: &[&Value]) -> String {
    let mut text = String::new();
    for e in exchanges {
        text += &format!("  {e}\n");
    }
    text
}

/// One line per exchange that is not `same`: what it was and why.
fn describe(o: &Outcome) -> String {
    let mut text = String::new();
    for e in o.exchanges.iter().filter(|e| e["verdict"] != "same") {
        let diffs: Vec<String> = e["differences"]
            .as_array()
            .map(|d| {
                d.iter()
                    .map(|d| {
                        format!(
                            "{} (captured {}, replayed {})",
                            d["path"].as_str().unwrap_or("?"),
                            d["captured"],
                            d["replayed"]
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        text += &format!(
            "  {} conn {} frame {} {} v{}: {}{}\n",
            e["verdict"].as_str().unwrap_or("?"),
            e["conn"],
            e["frames"]["request"],
            e["api_name"].as_str().unwrap_or("?"),
            e["api_version"],
            diffs.join("; "),
            e["why"]
                .as_str()
                .map(|w| format!(" why: {w}"))
                .unwrap_or_default()
        );
    }
    text
}

/// What holds of any replay's JSON: each line is an exchange of the capture
/// (`recorded`, as `kwire capture --format json` reads it) with a verdict,
/// each of the capture's requests in exactly one line, the differences
/// where the verdict says so, a reason where nothing was compared; the
/// summary counts the lines; the exit status is 3 when some exchange
/// differs or went unanswered, 0 when all are `same`.
fn check_outcome(recorded: &[Value], o: &Outcome, r: &Replayed) {
    let by_frame: HashMap<u64, &Value> = recorded
        .iter()
        .map(|f| (f["capture"]["frame"].as_u64().unwrap(), f))
        .collect();
    let mut counts: BTreeMap<&str, u64> = VERDICTS.iter().map(|v| (*v, 0)).collect();
    let mut replayed_requests = BTreeMap::new();
    for e in &o.exchanges {
        let verdict = e["verdict"].as_str().unwrap_or("");
        assert!(VERDICTS.contains(&verdict), "an unknown verdict: {e}");
        *counts.get_mut(verdict).unwrap() += 1;
        let at = e["frames"]["request"]
            .as_u64()
            .unwrap_or_else(|| panic!("no frames.request: {e}"));
        let req = by_frame
            .get(&at)
            .unwrap_or_else(|| panic!("frames.request {at} is no frame of the capture: {e}"));
        assert_eq!(
            req["kind"], "request",
            "frames.request is not a request: {e}"
        );
        for (k, capture) in [
            ("api_key", &req["api_key"]),
            ("api_name", &req["api_name"]),
            ("api_version", &req["api_version"]),
            ("conn", &req["capture"]["conn"]),
        ] {
            assert_eq!(
                &e[k], capture,
                "{k} is not the captured request's: {e}\n{req}"
            );
        }
        *replayed_requests.entry(at).or_insert(0) += 1;
        let answer = &e["frames"]["response"];
        if !answer.is_null() {
            let resp = answer
                .as_u64()
                .and_then(|n| by_frame.get(&n))
                .unwrap_or_else(|| panic!("frames.response is no frame of the capture: {e}"));
            assert!(
                resp["kind"] == "response"
                    && resp["capture"]["conn"] == req["capture"]["conn"]
                    && resp["header"]["CorrelationId"] == req["header"]["CorrelationId"],
                "frames.response is not the response to frames.request: {e}\n{resp}"
            );
        }
        let diffs = e.get("differences").cloned().unwrap_or(Value::Null);
        let diffs = diffs.as_array().map(Vec::as_slice).unwrap_or(&[]);
        match verdict {
            "same" => assert!(diffs.is_empty(), "`same` with differences: {e}"),
            "differs" => {
                assert!(!diffs.is_empty(), "`differs` without differences: {e}");
                for d in diffs {
                    assert!(
                        d["path"].as_str().is_some_and(|p| !p.is_empty())
                            && d.get("captured").is_some()
                            && d.get("replayed").is_some(),
                        "a difference without path, captured and replayed: {e}"
                    );
                }
            }
            _ => assert!(
                e["why"].as_str().is_some_and(|w| !w.trim().is_empty()),
                "`{verdict}` without a reason (why): {e}"
            ),
        }
    }
    let requests: Vec<u64> = recorded
        .iter()
        .filter(|f| f["kind"] == "request")
        .map(|f| f["capture"]["frame"].as_u64().unwrap())
        .collect();
    for at in &requests {
        assert_eq!(
            replayed_requests.get(at),
            Some(&1),
            "the capture's request at frame {at} is not in exactly one line"
        );
    }
    assert_eq!(
        o.exchanges.len(),
        requests.len(),
        "one line per request of the capture"
    );
    assert_eq!(
        o.summary["exchanges"],
        o.exchanges.len(),
        "the summary's exchanges: {}",
        o.summary
    );
    for v in VERDICTS {
        assert_eq!(
            o.summary[v], counts[v],
            "the summary's {v} against the lines: {}",
            o.summary
        );
    }
    // `not-sent` alone: the contract's "went unanswered" may or may not
    // take it in, so either status is accepted then.
    let expected: &[i32] = if counts["differs"] + counts["no-answer"] > 0 {
        &[3]
    } else if counts["not-sent"] > 0 {
        &[0, 3]
    } else {
        &[0]
    };
    assert!(
        r.status.is_some_and(|s| expected.contains(&s)),
        "exit status {:?}, with {} differing, {} unanswered and {} not sent:\n{}\n{}",
        r.status,
        counts["differs"],
        counts["no-answer"],
        counts["not-sent"],
        describe(o),
        r.stderr
    );
}

/// Every exchange of these APIs that the capture holds an answer to is `same`. On a fresh broker their answers
/// depend only on what was sent before, once the fields that legitimately
/// differ are set aside (the capture's broker had another address; topic ids
/// are random; tansu's ListOffsets `Timestamp` is its clock when the records
/// came, and the order of its ApiVersions `ApiKeys` changes with each tansu
/// process: kwire's defaults must allow for these).
fn assert_same_for(o: &Outcome, apis: &[&str]) {
    let wrong: Vec<&Value> = o
        .exchanges
        .iter()
        .filter(|e| apis.iter().any(|a| e["api_name"] == *a) && e["verdict"] != "same")
        // A request the client sent as the recording stopped (librdkafka's
        // periodic Metadata, now and then) has no captured answer to
        // compare with; check_outcome holds it to saying why.
        .filter(|e| !(e["verdict"] == "not-sent" && e["frames"]["response"].is_null()))
        .collect();
    assert!(
        wrong.is_empty(),
        "{} exchanges of {apis:?} are not `same`:\n{}\nevery exchange that is not `same`:\n{}",
        wrong.len(),
        lines(&wrong),
        describe(o)
    );
}

/// The error codes a broker gives when a request carries an id of the
/// captured session instead of the new one: what `--map` is there to avoid.
const STALE_ID_ERRORS: [(i64, &str); 7] = [
    (22, "ILLEGAL_GENERATION"),
    (25, "UNKNOWN_MEMBER_ID"),
    (47, "INVALID_PRODUCER_EPOCH"),
    (49, "INVALID_PRODUCER_ID_MAPPING"),
    (59, "UNKNOWN_PRODUCER_ID"),
    (70, "FETCH_SESSION_ID_NOT_FOUND"),
    (71, "INVALID_FETCH_SESSION_EPOCH"),
];

/// No replayed answer carries one of [`STALE_ID_ERRORS`] the captured one
/// did not.
fn assert_ids_carried(o: &Outcome) {
    for e in &o.exchanges {
        for d in e["differences"].as_array().into_iter().flatten() {
            let path = d["path"].as_str().unwrap_or("");
            let Some(code) = d["replayed"].as_i64() else {
                continue;
            };
            if let Some((_, name)) = STALE_ID_ERRORS.iter().find(|(c, _)| *c == code) {
                assert!(
                    !path.ends_with("ErrorCode"),
                    "with --map, the broker answered {name}: an id of the capture was sent instead of the new broker's: {e}\n{}",
                    describe(o)
                );
            }
        }
    }
}

/// The broker answered everything the capture shows answered.
fn assert_answered(o: &Outcome) {
    let unanswered: Vec<&Value> = o
        .exchanges
        .iter()
        .filter(|e| e["verdict"] == "no-answer" && !e["frames"]["response"].is_null())
        .collect();
    assert!(
        unanswered.is_empty(),
        "exchanges answered in the capture and not in the replay:\n{}",
        lines(&unanswered)
    );
}

/// The replay's `--write-pcap` holds one request per exchange sent (every
/// one but those `not-sent`), of the same APIs and versions, and a response
/// at least for each exchange found `same` whose capture has one.
fn check_written(written: &Path, o: &Outcome) {
    let frames = capture_json(written);
    let mut sent: BTreeMap<(i64, i64), u64> = BTreeMap::new();
    for e in o.exchanges.iter().filter(|e| e["verdict"] != "not-sent") {
        let key = (
            e["api_key"].as_i64().unwrap(),
            e["api_version"].as_i64().unwrap(),
        );
        *sent.entry(key).or_default() += 1;
    }
    let mut seen: BTreeMap<(i64, i64), u64> = BTreeMap::new();
    for f in frames.iter().filter(|f| f["kind"] == "request") {
        let key = (
            f["api_key"].as_i64().unwrap(),
            f["api_version"].as_i64().unwrap(),
        );
        *seen.entry(key).or_default() += 1;
    }
    assert_eq!(
        seen, sent,
        "the replay's pcap: requests per (api key, version), against the exchanges sent"
    );
    let answered = o
        .exchanges
        .iter()
        .filter(|e| e["verdict"] == "same" && !e["frames"]["response"].is_null())
        .count();
    let responses = frames.iter().filter(|f| f["kind"] == "response").count();
    assert!(
        responses >= answered,
        "the replay's pcap has {responses} responses, fewer than the {answered} exchanges found `same`"
    );
}

/// Seconds from a capture's first frame to its last.
fn span(recorded: &[Value]) -> Duration {
    let times: Vec<f64> = recorded
        .iter()
        .filter_map(|f| f["capture"]["time"].as_f64())
        .collect();
    let first = times.iter().copied().fold(f64::INFINITY, f64::min);
    let last = times.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Duration::from_secs_f64((last - first).max(0.0))
}

/// Records produce_consume.py with `lib` through `kwire proxy --write-pcap`
/// in front of one tansu, then replays the recording with `--map` against
/// a fresh one.
fn record_and_replay(name: &str, lib: &str) {
    let _one = serial();
    let dir = scratch(name);
    let recording = dir.join("recorded.pcapng");
    {
        let first = Tansu::start(&dir, "127.0.0.1");
        let proxy = Proxy::start(
            &first.addr(),
            &["--write-pcap", recording.to_str().unwrap()],
        );
        let sent = messages(30);
        write_messages(&dir.join("messages.jsonl"), &sent);
        let topic = format!("e2e-replay-{lib}");
        let got = dir.join("got.jsonl");
        let client = python(
            "produce_consume.py",
            &[
                &proxy.addr(),
                &topic,
                &topic,
                dir.join("messages.jsonl").to_str().unwrap(),
                got.to_str().unwrap(),
                "--lib",
                lib,
            ],
            Duration::from_secs(90),
        );
        let (status, _, err) = proxy.stop();
        let context = format!("{}\nproxy:\n{err}", said(&client));
        assert!(client.status.success(), "the client failed:\n{context}");
        assert!(status.success(), "the proxy exited with {status}:\n{err}");
        assert_consumed_in_order(&got, &sent, &context);
    }
    let recorded = capture_json(&recording);
    let second = Tansu::start(&dir, "127.0.0.1");
    let written = dir.join("replayed.pcapng");
    let r = replay(
        &[
            recording.to_str().unwrap(),
            "--broker",
            &second.addr(),
            "--map",
            "--format",
            "json",
            "--write-pcap",
            written.to_str().unwrap(),
        ],
        span(&recorded) + Duration::from_secs(60),
    );
    let o = outcome(&r);
    check_outcome(&recorded, &o, &r);
    assert_answered(&o);
    assert_same_for(
        &o,
        &[
            "ApiVersions",
            "Metadata",
            "CreateTopics",
            "Produce",
            "ListOffsets",
        ],
    );
    assert_ids_carried(&o);
    check_written(&written, &o);
    drop(second);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn a_librdkafka_session_recorded_by_the_proxy_replays_the_same_against_a_fresh_broker() {
    require_all("the replay test of a recorded librdkafka session");
    record_and_replay("replay-librdkafka", "confluent");
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn a_kafka_python_session_recorded_by_the_proxy_replays_the_same_against_a_fresh_broker() {
    require_all("the replay test of a recorded kafka-python session");
    record_and_replay("replay-kafka-python", "kafka-python");
}

/// A shipped capture (made against tansu) replayed with `--map` against a
/// fresh tansu, in JSON, then in text against another fresh one.
fn replay_shipped(name: &str, file: &str) {
    let _one = serial();
    let dir = scratch(name);
    let capture = repo().join("samples/captures").join(file);
    let recorded = capture_json(&capture);
    let limit = span(&recorded) + Duration::from_secs(60);
    let broker = Tansu::start(&dir, "127.0.0.1");
    let r = replay(
        &[
            capture.to_str().unwrap(),
            "--broker",
            &broker.addr(),
            "--map",
            "--format",
            "json",
        ],
        limit,
    );
    let o = outcome(&r);
    check_outcome(&recorded, &o, &r);
    assert_answered(&o);
    assert_same_for(&o, &["ApiVersions", "Metadata", "CreateTopics", "Produce"]);
    assert_ids_carried(&o);
    drop(broker);

    // Text: the differing paths grouped by API, then a summary line that
    // counts the exchanges.
    let broker = Tansu::start(&dir, "127.0.0.1");
    let t = replay(
        &[
            capture.to_str().unwrap(),
            "--broker",
            &broker.addr(),
            "--map",
        ],
        limit,
    );
    assert!(
        matches!(t.status, Some(0 | 3)),
        "kwire replay (text) exited with {:?}:\n{}\n{}",
        t.status,
        t.stdout,
        t.stderr
    );
    let last = t.stdout.lines().rev().find(|l| !l.trim().is_empty());
    let total = o.exchanges.len().to_string();
    assert!(
        last.is_some_and(|l| l.split(|c: char| !c.is_ascii_digit()).any(|n| n == total)),
        "the text output does not end with a summary counting the {total} exchanges:\n{}",
        t.stdout
    );
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn the_shipped_kafka_python_capture_replays_against_tansu() {
    require_all("the replay test of samples/captures/kafka-python.pcap");
    replay_shipped("replay-sample-kafka-python", "kafka-python.pcap");
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn the_shipped_confluent_kafka_capture_replays_against_tansu() {
    require_all("the replay test of samples/captures/confluent-kafka.pcap");
    replay_shipped("replay-sample-confluent-kafka", "confluent-kafka.pcap");
}

/// Without `--map` the kafka-python consumer rejoins its group with the
/// member id the capture's broker gave it; the new broker takes it for a
/// second member and asks for a rebalance. The replay must say exactly that,
/// in the text an engineer reads, and exit 3.
#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn without_map_a_stale_member_id_shows_as_a_rebalance_in_the_text_output() {
    require_all("the replay test of a stale member id");
    let _one = serial();
    let dir = scratch("replay-stale-member");
    let capture = repo().join("samples/captures/kafka-python.pcap");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let r = replay(
        &[
            capture.to_str().unwrap(),
            "--broker",
            &broker.addr(),
            "--fast",
        ],
        Duration::from_secs(60),
    );
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(r.status, Some(3), "{}\n{}", r.stdout, r.stderr);
    let expected = [
        "JoinGroup v7: 1 same, 1 differs",
        "  differs on conn 8 (frames 42 and 43)",
        "    GenerationId: captured 0, replayed 1",
        "    Members.length: captured 1, replayed 2",
    ];
    let sync = [
        "SyncGroup v5: 1 differs",
        "  differs on conn 8 (frames 44 and 45)",
        "    ErrorCode: captured 0 (NONE), replayed 27 (REBALANCE_IN_PROGRESS)",
        "    Assignment: captured \"00000000000100087061796d656e7473000000010000000000000000\", replayed \"\"",
    ];
    for block in [&expected[..], &sync[..]] {
        assert!(
            r.stdout.contains(&block.join("\n")),
            "missing from the text output:\n{}\n--- output:\n{}",
            block.join("\n"),
            r.stdout
        );
    }
    assert!(
        r.stdout.ends_with(
            "29 exchanges replayed: 27 same, 2 differs, 0 no-answer, 0 not-sent, 0 not-compared\n"
        ),
        "{}",
        r.stdout
    );
}

/// A broker killed 1 s into the replay of a capture whose first exchanges
/// come at its start and the rest from 2.5 s on (more on the same
/// connection, then a connection of its own): the first are answered, the
/// rest `no-answer` or `not-sent`, exit status 3, and kwire ends within the
/// capture's length and a few response timeouts.
#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn a_broker_that_dies_mid_replay_leaves_the_rest_unanswered_without_a_hang() {
    require_all("the replay test of a broker that dies");
    let _one = serial();
    let dir = scratch("replay-dying");
    let versions = (
        json!({"ClientSoftwareName": "e2e", "ClientSoftwareVersion": "1"}),
        json!({"ErrorCode": 0, "ApiKeys": [{"ApiKey": 3, "MinVersion": 0, "MaxVersion": 12}, {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 4}], "ThrottleTimeMs": 0}),
    );
    let metadata = (
        json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}),
        json!({"Brokers": [{"NodeId": 111, "Host": "10.0.0.2", "Port": 9092, "Rack": null}], "ClusterId": "tansu_cluster", "ControllerId": 111, "Topics": []}),
    );
    let mut t = Timeline::default();
    let pair = |t: &mut Timeline, port: u16, corr: i32, api: &str, (req, resp): &(Value, Value)| {
        let version = if api == "Metadata" { 12 } else { 3 };
        t.on(port, "e2e-replay")
            .pair(corr, api, version, req.clone(), resp.clone());
    };
    pair(&mut t, 50000, 1, "ApiVersions", &versions);
    pair(&mut t, 50000, 2, "Metadata", &metadata);
    t.wait(2.5);
    for corr in 3..6 {
        pair(&mut t, 50000, corr, "Metadata", &metadata);
        t.wait(0.3);
    }
    pair(&mut t, 50001, 1, "ApiVersions", &versions);
    pair(&mut t, 50001, 2, "Metadata", &metadata);
    let capture = dir.join("dying.pcap");
    std::fs::write(&capture, t.pcap()).unwrap();
    let recorded = capture_json(&capture);
    let start = recorded
        .iter()
        .filter_map(|f| f["capture"]["time"].as_f64())
        .fold(f64::INFINITY, f64::min);

    let mut broker = Tansu::start(&dir, "127.0.0.1");
    const TIMEOUT: u64 = 2;
    let running = start_replay(&[
        capture.to_str().unwrap(),
        "--broker",
        &broker.addr(),
        "--timeout",
        &TIMEOUT.to_string(),
        "--format",
        "json",
    ]);
    std::thread::sleep(Duration::from_secs(1));
    broker.kill();
    // The capture's length, then at most a timeout for each of the five
    // exchanges left, and some slack for a machine that is busy.
    let limit = span(&recorded) + Duration::from_secs(5 * TIMEOUT + 3);
    let r = finish(running, limit);
    let o = outcome(&r);
    check_outcome(&recorded, &o, &r);
    assert_eq!(
        r.status,
        Some(3),
        "exit status with a broker gone (took {:?}):\n{}",
        r.took,
        r.stderr
    );
    let at = |e: &Value| {
        let frame = e["frames"]["request"].as_u64().unwrap();
        let f = recorded
            .iter()
            .find(|f| f["capture"]["frame"] == frame)
            .unwrap();
        f["capture"]["time"].as_f64().unwrap() - start
    };
    let (early, late): (Vec<&Value>, Vec<&Value>) = o.exchanges.iter().partition(|e| at(e) < 1.0);
    assert_eq!(
        (early.len(), late.len()),
        (2, 5),
        "exchanges before and after the broker died:\n{}",
        r.stdout
    );
    for e in early {
        assert!(
            e["verdict"] == "same" || e["verdict"] == "differs",
            "an exchange from before the broker died was not answered: {e}\n{}",
            r.stderr
        );
    }
    for e in late {
        assert!(
            e["verdict"] == "no-answer" || e["verdict"] == "not-sent",
            "an exchange after the broker died is neither `no-answer` nor `not-sent`: {e}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Exit status 2, with a message: a broker nobody listens on (before
/// anything is replayed), and a file that is not a capture (with a broker
/// that listens). No broker needed.
#[test]
fn replay_refuses_a_broker_nobody_listens_on_and_a_file_that_is_no_capture() {
    let capture = repo().join("samples/captures/kafka-python.pcap");
    let port = free_port();
    let nobody = format!("127.0.0.1:{port}");
    let r = replay(
        &[
            capture.to_str().unwrap(),
            "--broker",
            &nobody,
            "--timeout",
            "2",
            "--format",
            "json",
        ],
        Duration::from_secs(20),
    );
    assert_eq!(
        r.status,
        Some(2),
        "exit status with nobody at {nobody}:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    assert!(
        r.stderr.contains(&nobody),
        "the message does not name {nobody}:\n{}",
        r.stderr
    );
    assert!(
        !r.stdout.contains("\"verdict\""),
        "exchanges replayed to nobody:\n{}",
        r.stdout
    );

    let listening = TcpListener::bind("127.0.0.1:0").unwrap();
    let broker = listening.local_addr().unwrap().to_string();
    let bogus =
        std::env::temp_dir().join(format!("kwire-replay-bogus-{}.pcap", std::process::id()));
    std::fs::write(
        &bogus,
        b"this is not a capture\n\x00\x01\x02\x03\xff\xfe\xfd",
    )
    .unwrap();
    let r = replay(
        &[
            bogus.to_str().unwrap(),
            "--broker",
            &broker,
            "--timeout",
            "2",
        ],
        Duration::from_secs(20),
    );
    let _ = std::fs::remove_file(&bogus);
    drop(listening);
    assert_eq!(
        r.status,
        Some(2),
        "exit status for a file that is not a capture:\n{}\n{}",
        r.stdout,
        r.stderr
    );
    let name = bogus.file_name().unwrap().to_str().unwrap();
    assert!(
        r.stderr.contains(name),
        "the message does not name the file {name}:\n{}",
        r.stderr
    );
}
