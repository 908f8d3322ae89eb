//! `kwire proxy --inject RULE` against a real broker (tansu 0.6.0) and real
//! clients (librdkafka through confluent-kafka, kafka-python;
//! scripts/e2e-clients/produce_consume.py). What the tests show:
//!
//! - a producer that retries (acks=all, one request in flight) through
//!   `Produce:error=NOT_LEADER_OR_FOLLOWER:every=5` lands every message
//!   exactly once, in order; the proxy says so per injection and counts them
//!   at exit, and the injected answers, with their `ErrorMessage`, are what
//!   the clients saw in `--format json` and in `--write-pcap`, on exactly the
//!   5th, 10th, ... Produce request;
//! - `Metadata:delay=300` shows in `kwire stats` of the proxy's pcap: every
//!   Metadata exchange takes at least 300 ms, ApiVersions far less;
//! - `Fetch:close:every=2`: the consumer reconnects (more connections to the
//!   proxy's listeners than without the fault) and still gets every message;
//! - `FindCoordinator:error=COORDINATOR_NOT_AVAILABLE:every=3` (an API
//!   without partitions): the consumer finds its coordinator on a later try,
//!   joins and consumes; a rule for another client id never applies;
//! - `error` answers without forwarding (the broker never creates the
//!   topic), `drop` forwards and never answers (the broker creates it),
//!   `duplicate` answers twice, each only for the requests the rule's topic
//!   and client id select, with the exact lines on the proxy's stderr;
//! - bad rules are refused at start with exit status 2, naming the problem.
//!
//! Each test starts its own broker on a free port and its own proxy, and
//! stops both. The ones that need tansu and the Python clients are ignored by
//! a plain `cargo test`; `cargo test -- --include-ignored` runs them and fails
//! when those are missing (`bash .ci/run` installs them).
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

mod common;

use common::broker::{
    assert_consumed_exactly_once, assert_consumed_in_order, capture_json, error_codes, free_port,
    json_lines, kwire, messages, python, read_response, requests_of, require_all, responses_of,
    said, scratch, serial, spawn_kwire, wait_for, write_messages, Proxy, Tansu,
};
use common::exchanges::frame;
use kwire::decode::Direction;
use kwire::schema::Catalogue;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// The `ErrorMessage` of an answer rule 1 made up.
const INJECTED: &str = "injected by kwire proxy (rule 1)";

/// One `kwire: proxy: injected (rule R) ACTION: API vN correlation id C from ADDR` line.
#[derive(Debug)]
struct Injection {
    action: String,
    api: String,
    version: i64,
    corr: i64,
    from: String,
}

fn malformed(line: &str) -> ! {
    panic!(
        "not `kwire: proxy: injected (rule R) ACTION: API vN correlation id C from ADDR`: {line}"
    )
}

/// Rule `rule`'s injection lines on the proxy's stderr, parsed; a line of
/// another shape fails the test.
fn injections(stderr: &str, rule: usize) -> Vec<Injection> {
    let prefix = format!("kwire: proxy: injected (rule {rule}) ");
    stderr
        .lines()
        .filter_map(|line| Some((line, line.strip_prefix(&prefix)?)))
        .map(|(line, rest)| {
            let Some((action, what)) = rest.split_once(": ") else {
                malformed(line)
            };
            let words: Vec<&str> = what.split_whitespace().collect();
            let [api, version, "correlation", "id", corr, "from", from] = words.as_slice() else {
                malformed(line)
            };
            Injection {
                action: action.to_string(),
                api: api.to_string(),
                version: version
                    .strip_prefix('v')
                    .and_then(|v| v.parse().ok())
                    .unwrap_or_else(|| malformed(line)),
                corr: corr.parse().unwrap_or_else(|_| malformed(line)),
                from: from.to_string(),
            }
        })
        .collect()
}

/// The start line `kwire: proxy: inject rule R: RULE` is there (the proxy
/// says it before or just after it listens: waited for, at most 5 s).
fn assert_rule_announced(proxy: &Proxy, rule: usize, text: &str) {
    let line = format!("kwire: proxy: inject rule {rule}: {text}");
    assert!(
        proxy
            .stderr
            .wait_until(Duration::from_secs(5), |t| t.lines().any(|l| l == line)),
        "the proxy did not say `{line}` at start:\n{}",
        proxy.stderr.text()
    );
}

/// N of the exit line `kwire: proxy: rule R (RULE) applied N times` (one
/// such line; `time` accepted for N = 1).
fn applied(stderr: &str, rule: usize, text: &str) -> u64 {
    let prefix = format!("kwire: proxy: rule {rule} ({text}) applied ");
    let counts: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .collect();
    assert_eq!(
        counts.len(),
        1,
        "not one `{prefix}N times` line at exit:\n{stderr}"
    );
    counts[0]
        .strip_suffix(" times")
        .or_else(|| counts[0].strip_suffix(" time"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not `{prefix}N times`: {}\n{stderr}", counts[0]))
}

/// SIGINT to the proxy: it exits 0; its standard output and standard error.
fn stop(proxy: Proxy) -> (String, String) {
    let (status, out, err) = proxy.stop();
    assert!(
        status.success(),
        "the proxy exited with {status} on SIGINT:\n{err}"
    );
    (out, err)
}

/// The request a response answers: same connection, same correlation id.
fn request_of<'a>(frames: &'a [Value], response: &Value) -> &'a Value {
    frames
        .iter()
        .find(|f| {
            f["kind"] == "request"
                && f["capture"]["conn"] == response["capture"]["conn"]
                && f["header"]["CorrelationId"] == response["header"]["CorrelationId"]
        })
        .unwrap_or_else(|| panic!("a response without its request: {response}"))
}

/// The response to a request, if the capture has one.
fn response_to<'a>(frames: &'a [Value], request: &Value) -> Option<&'a Value> {
    frames.iter().find(|f| {
        f["kind"] == "response"
            && f["capture"]["conn"] == request["capture"]["conn"]
            && f["header"]["CorrelationId"] == request["header"]["CorrelationId"]
    })
}

/// Every object in `v` that has an `ErrorCode`, at any depth.
fn with_error_code<'a>(v: &'a Value, out: &mut Vec<&'a serde_json::Map<String, Value>>) {
    match v {
        Value::Object(o) => {
            if o.contains_key("ErrorCode") {
                out.push(o);
            }
            o.values().for_each(|c| with_error_code(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| with_error_code(c, out)),
        _ => {}
    }
}

/// An answer made up by rule 1 with error `code`: every error code in it is
/// `code`, and every `ErrorMessage` beside one says it was injected; at least
/// one of those when `with_message` (the version has the field).
fn assert_injected_answer(response: &Value, code: i64, with_message: bool) {
    let mut holders = Vec::new();
    with_error_code(&response["body"], &mut holders);
    assert!(
        !holders.is_empty(),
        "an injected answer without an error code: {response}"
    );
    let mut messages = 0;
    for h in &holders {
        assert_eq!(
            h["ErrorCode"], code,
            "an injected answer with another error code: {response}"
        );
        if let Some(m) = h.get("ErrorMessage") {
            assert_eq!(
                m, INJECTED,
                "an injected answer's ErrorMessage is not `{INJECTED}`: {response}"
            );
            messages += 1;
        }
    }
    assert!(
        !with_message || messages > 0,
        "an injected answer without an ErrorMessage saying so: {response}"
    );
}

/// The responses of `api_key` that carry error `code` anywhere.
fn with_error(frames: &[Value], api_key: i64, code: i64) -> Vec<&Value> {
    responses_of(frames, api_key)
        .into_iter()
        .filter(|r| {
            let mut codes = Vec::new();
            error_codes(&r["body"], &mut codes);
            codes.contains(&code)
        })
        .collect()
}

/// (client address, correlation id) of each injected answer's request, from
/// the capture, against the same from the proxy's injection lines.
fn assert_lines_name_the_answers(frames: &[Value], answers: &[&Value], lines: &[Injection]) {
    let from_capture: BTreeSet<(String, i64)> = answers
        .iter()
        .map(|r| {
            let req = request_of(frames, r);
            (
                req["capture"]["src"].as_str().unwrap().to_string(),
                req["header"]["CorrelationId"].as_i64().unwrap(),
            )
        })
        .collect();
    let from_lines: BTreeSet<(String, i64)> =
        lines.iter().map(|i| (i.from.clone(), i.corr)).collect();
    assert_eq!(
        from_capture, from_lines,
        "the injected answers in the pcap (client address, correlation id) are not those the proxy's lines name: {lines:?}"
    );
}

/// Every client connection in a proxy's capture: its number, the listener it
/// reached and the client id of its first request.
fn connections(frames: &[Value]) -> BTreeMap<u64, (String, String)> {
    let mut out = BTreeMap::new();
    for f in frames.iter().filter(|f| f["kind"] == "request") {
        out.entry(f["capture"]["conn"].as_u64().unwrap())
            .or_insert_with(|| {
                (
                    f["capture"]["dst"].as_str().unwrap_or("").to_string(),
                    f["header"]["ClientId"].as_str().unwrap_or("").to_string(),
                )
            });
    }
    out
}

/// produce_consume.py through `bootstrap` with `args` after the five
/// positional ones; fails the test when it fails, saying what it and the
/// proxy said. Returns what it printed.
fn run_client(
    bootstrap: &str,
    topic: &str,
    dir: &Path,
    proxy: Option<&Proxy>,
    args: &[&str],
) -> String {
    let (msgs, got) = (dir.join("messages.jsonl"), dir.join("got.jsonl"));
    let mut all = vec![
        bootstrap,
        topic,
        topic,
        msgs.to_str().unwrap(),
        got.to_str().unwrap(),
    ];
    all.extend(args);
    let client = python("produce_consume.py", &all, Duration::from_secs(120));
    let says = said(&client);
    assert!(
        client.status.success(),
        "produce_consume.py {} failed:\n{says}\nproxy: {}",
        all.join(" "),
        proxy.map(|p| p.stderr.text()).unwrap_or_default()
    );
    says
}

/// 200 messages produced with retries through `Produce:error=NOT_LEADER_OR_FOLLOWER:every=5`
/// and consumed back through the same proxy: each consumed exactly once.
fn retried_produce_lands_once(name: &str, lib: &str) {
    let _one = serial();
    let dir = scratch(name);
    let broker = Tansu::start(&dir, "127.0.0.1");
    let pcap = dir.join("faults.pcapng");
    const RULE: &str = "Produce:error=NOT_LEADER_OR_FOLLOWER:every=5";
    // A topic nobody produces to: the rule never applies.
    const ELSEWHERE: &str = "Produce:topic=e2e-nowhere:error=CORRUPT_MESSAGE";
    let proxy = Proxy::start(
        &broker.addr(),
        &[
            "--inject",
            RULE,
            "--inject",
            ELSEWHERE,
            "--format",
            "json",
            "--write-pcap",
            pcap.to_str().unwrap(),
        ],
    );
    assert_rule_announced(&proxy, 1, RULE);
    assert_rule_announced(&proxy, 2, ELSEWHERE);

    let sent = messages(200);
    write_messages(&dir.join("messages.jsonl"), &sent);
    // One request in flight keeps the order through retries; batches of
    // about 2,000 bytes make 15 to 20 Produce requests of the 200 messages.
    let client_says = run_client(
        &proxy.addr(),
        &format!("e2e-retried-{lib}"),
        &dir,
        Some(&proxy),
        &[
            "--lib",
            lib,
            "--compression",
            "none",
            "--max-in-flight",
            "1",
            "--retries",
            "1000",
            "--batch-bytes",
            "2000",
            "--linger-ms",
            "5",
        ],
    );
    let (out, err) = stop(proxy);
    let context = format!("{client_says}\nproxy:\n{err}");
    // Exactly once: a retried request the broker had written would show twice.
    // (librdkafka may reorder a retried batch even with one request in flight.)
    assert_consumed_exactly_once(&dir.join("got.jsonl"), &sent, &context);

    let n = applied(&err, 1, RULE);
    assert!(n >= 1, "the rule never applied:\n{context}");
    let lines = injections(&err, 1);
    assert_eq!(
        lines.len() as u64,
        n,
        "as many injection lines as the exit count says:\n{err}"
    );
    for i in &lines {
        assert_eq!(
            (i.action.as_str(), i.api.as_str()),
            ("error NOT_LEADER_OR_FOLLOWER (6)", "Produce"),
            "{i:?}"
        );
    }
    assert_eq!(applied(&err, 2, ELSEWHERE), 0, "{err}");
    assert!(injections(&err, 2).is_empty(), "{err}");

    // The pcap records every Produce request the proxy took from a client,
    // those it answered itself too, and `every=5` applies to the 5th, 10th,
    // ... of them (counted together across connections, in the order the
    // proxy took them): whatever that order, the rule applied exactly
    // floor(T / 5) times for T requests in all.
    let frames = capture_json(&pcap);
    let produced = requests_of(&frames, 0);
    assert_eq!(
        n,
        produced.len() as u64 / 5,
        "the rule applied {n} times to {} Produce requests (every 5th)",
        produced.len()
    );
    let answers = with_error(&frames, 0, 6);
    assert_eq!(
        answers.len() as u64,
        n,
        "Produce responses with NOT_LEADER_OR_FOLLOWER in the pcap, against the rule's count"
    );
    for r in &answers {
        // Produce v8 and later have an ErrorMessage per partition.
        assert_injected_answer(r, 6, r["api_version"].as_i64() >= Some(8));
    }
    // The broker answered the rest without an error.
    for r in responses_of(&frames, 0) {
        let mut codes = Vec::new();
        error_codes(&r["body"], &mut codes);
        assert!(
            codes.iter().all(|&c| c == 0) || codes.iter().all(|&c| c == 6),
            "a Produce response with another error: {r}"
        );
    }
    assert_lines_name_the_answers(&frames, &answers, &lines);
    for i in &lines {
        let version = answers
            .iter()
            .find(|r| {
                let req = request_of(&frames, r);
                req["capture"]["src"] == i.from.as_str() && req["header"]["CorrelationId"] == i.corr
            })
            .and_then(|r| r["api_version"].as_i64());
        assert_eq!(Some(i.version), version, "the version a line names: {i:?}");
    }
    // With all Produce requests on one connection (one producer, one
    // broker) their order is the proxy's: the answered ones are exactly the
    // 5th, 10th, ...
    let conns: BTreeSet<u64> = produced
        .iter()
        .filter_map(|f| f["capture"]["conn"].as_u64())
        .collect();
    if conns.len() == 1 {
        for (i, req) in produced.iter().enumerate() {
            let resp = response_to(&frames, req)
                .unwrap_or_else(|| panic!("Produce request {} unanswered: {req}", i + 1));
            let mut codes = Vec::new();
            error_codes(&resp["body"], &mut codes);
            assert_eq!(
                codes.contains(&6),
                (i + 1) % 5 == 0,
                "Produce request {} (1-based, in wire order) answered {resp}",
                i + 1
            );
        }
    }
    // The proxy's JSON shows the same injected answers.
    let printed = json_lines(&out);
    let printed_answers = with_error(&printed, 0, 6);
    assert_eq!(
        printed_answers.len() as u64,
        n,
        "injected answers in the proxy's --format json output"
    );
    for r in printed_answers {
        assert_injected_answer(r, 6, r["api_version"].as_i64() >= Some(8));
    }
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn librdkafka_retrying_through_injected_not_leader_errors_lands_every_message_once() {
    require_all("the fault injection test of retried Produce requests with librdkafka");
    retried_produce_lands_once("faults-produce-librdkafka", "confluent");
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn kafka_python_retrying_through_injected_not_leader_errors_lands_every_message_once() {
    require_all("the fault injection test of retried Produce requests with kafka-python");
    retried_produce_lands_once("faults-produce-kafka-python", "kafka-python");
}

/// `Metadata:delay=300`: every Metadata exchange in the proxy's pcap takes
/// at least 300 ms (`kwire stats`), ApiVersions far less; one line per
/// Metadata request.
#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn delayed_metadata_requests_show_in_the_latency_of_the_proxys_capture() {
    require_all("the fault injection test of delay");
    let _one = serial();
    let dir = scratch("faults-delay");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let pcap = dir.join("delay.pcapng");
    const RULE: &str = "Metadata:delay=300";
    let proxy = Proxy::start(
        &broker.addr(),
        &["--inject", RULE, "--write-pcap", pcap.to_str().unwrap()],
    );
    assert_rule_announced(&proxy, 1, RULE);
    let sent = messages(20);
    write_messages(&dir.join("messages.jsonl"), &sent);
    let client_says = run_client(
        &proxy.addr(),
        "e2e-delay",
        &dir,
        Some(&proxy),
        &["--lib", "kafka-python", "--compression", "none"],
    );
    let (_, err) = stop(proxy);
    assert_consumed_in_order(
        &dir.join("got.jsonl"),
        &sent,
        &format!("{client_says}\nproxy:\n{err}"),
    );

    // Every matching request (no every= or rate=): each Metadata request
    // the pcap holds was delayed, with a line of its own.
    let frames = capture_json(&pcap);
    let metadata = requests_of(&frames, 3).len() as u64;
    let n = applied(&err, 1, RULE);
    assert!(n >= 1, "no Metadata request delayed:\n{err}");
    assert_eq!(
        n, metadata,
        "the rule applies to every Metadata request; the pcap has {metadata}:\n{err}"
    );
    let lines = injections(&err, 1);
    assert_eq!(lines.len() as u64, n, "{err}");
    for i in &lines {
        assert_eq!(
            (i.action.as_str(), i.api.as_str()),
            ("delayed 300 ms", "Metadata"),
            "{i:?}"
        );
    }

    let stats = kwire(&["stats", pcap.to_str().unwrap(), "--format", "json"]);
    assert!(stats.status.success(), "kwire stats: {}", said(&stats));
    let stats: Value = serde_json::from_slice(&stats.stdout).unwrap();
    fn rows<'a>(stats: &'a Value, api: &str) -> Vec<&'a Value> {
        stats["by_api"]
            .as_array()
            .unwrap_or_else(|| panic!("no by_api in kwire stats' JSON: {stats}"))
            .iter()
            .filter(|r| r["api_name"] == api)
            .collect()
    }
    let delayed = rows(&stats, "Metadata");
    assert!(!delayed.is_empty(), "no Metadata in the stats: {stats}");
    let answered: u64 = delayed
        .iter()
        .map(|r| r["responses"].as_u64().unwrap())
        .sum();
    assert!(answered >= 1, "no Metadata answered: {stats}");
    for r in &delayed {
        if r["responses"] == 0 {
            continue;
        }
        let min = r["latency_us"]["min"].as_f64().unwrap();
        assert!(
            min >= 300_000.0,
            "a Metadata exchange answered in {min} µs, under the 300 ms delay: {r}"
        );
    }
    let quick = rows(&stats, "ApiVersions");
    assert!(!quick.is_empty(), "no ApiVersions in the stats: {stats}");
    for r in quick {
        let p50 = r["latency_us"]["p50"].as_f64().unwrap();
        assert!(
            p50 < 100_000.0,
            "ApiVersions, not delayed, took {p50} µs (p50): {r}"
        );
    }
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The consumer's connections in a proxy's pcap.
fn consumer_connections(frames: &[Value]) -> BTreeMap<u64, (String, String)> {
    connections(frames)
        .into_iter()
        .filter(|(_, (_, client))| client == "e2e-consumer")
        .collect()
}

/// `Fetch:close:every=2`: the proxy closes the consumer's connection instead
/// of forwarding every other Fetch; librdkafka reconnects (to the proxy's
/// listeners: more connections than the same consumer makes without the
/// fault) and gets every message, once.
#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn closing_the_connection_on_fetch_makes_the_consumer_reconnect_and_still_get_everything() {
    require_all("the fault injection test of close");
    let _one = serial();
    let dir = scratch("faults-close");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let sent = messages(300);
    write_messages(&dir.join("messages.jsonl"), &sent);
    // Produced straight to the broker: only the consumer goes through the proxies.
    run_client(
        &broker.addr(),
        "e2e-close",
        &dir,
        None,
        &["--lib", "confluent", "--only", "produce"],
    );
    // The consumer keeps polling 3 s once it has everything: several more
    // Fetch requests (each waits up to 500 ms for data), so the rule applies.
    let consume = |proxy: &Proxy, group: &str| {
        let says = python(
            "produce_consume.py",
            &[
                &proxy.addr(),
                "e2e-close",
                group,
                dir.join("messages.jsonl").to_str().unwrap(),
                dir.join(format!("{group}.jsonl")).to_str().unwrap(),
                "--lib",
                "confluent",
                "--only",
                "consume",
                "--stay",
                "3",
            ],
            Duration::from_secs(90),
        );
        assert!(
            says.status.success(),
            "the consumer failed:\n{}\nproxy: {}",
            said(&says),
            proxy.stderr.text()
        );
        said(&says)
    };

    let base_pcap = dir.join("base.pcapng");
    let proxy = Proxy::start(
        &broker.addr(),
        &["--write-pcap", base_pcap.to_str().unwrap()],
    );
    let says = consume(&proxy, "e2e-base");
    let (_, err) = stop(proxy);
    assert_consumed_in_order(
        &dir.join("e2e-base.jsonl"),
        &sent,
        &format!("{says}\nproxy:\n{err}"),
    );
    let base = consumer_connections(&capture_json(&base_pcap));

    const RULE: &str = "Fetch:close:every=2";
    let pcap = dir.join("close.pcapng");
    let proxy = Proxy::start(
        &broker.addr(),
        &["--inject", RULE, "--write-pcap", pcap.to_str().unwrap()],
    );
    assert_rule_announced(&proxy, 1, RULE);
    let says = consume(&proxy, "e2e-faulty");
    let listeners = proxy.listeners();
    let (_, err) = stop(proxy);
    let context = format!("{says}\nproxy:\n{err}");
    assert_consumed_in_order(&dir.join("e2e-faulty.jsonl"), &sent, &context);

    let n = applied(&err, 1, RULE);
    assert!(n >= 1, "no connection closed:\n{context}");
    let lines = injections(&err, 1);
    assert_eq!(lines.len() as u64, n, "{err}");
    for i in &lines {
        assert_eq!(
            (i.action.as_str(), i.api.as_str()),
            ("closed the connection", "Fetch"),
            "{i:?}"
        );
    }
    // Every Fetch request the proxy took is in the pcap, the ones it closed
    // the connection for too: every other one of them, exactly.
    let frames = capture_json(&pcap);
    let fetches = requests_of(&frames, 1);
    assert_eq!(
        n,
        fetches.len() as u64 / 2,
        "the rule applied {n} times to {} Fetch requests (every 2nd)",
        fetches.len()
    );
    // Each closed one went unanswered: (client address, correlation id)
    // of a Fetch request in the pcap without a response.
    for i in &lines {
        let req = fetches
            .iter()
            .find(|f| {
                f["capture"]["src"] == i.from.as_str() && f["header"]["CorrelationId"] == i.corr
            })
            .unwrap_or_else(|| panic!("{i:?} is not a Fetch request in the pcap"));
        assert!(
            response_to(&frames, req).is_none(),
            "the proxy closed the connection for {i:?}, and yet the client got an answer"
        );
    }
    // The proxy closed those connections, the broker's side as the client
    // sees it: the pcap says so, and the check does not blame the client.
    let list = kwire(&["capture", pcap.to_str().unwrap(), "--list", "--wide"]);
    let list = String::from_utf8_lossy(&list.stdout);
    let first_fins: Vec<&str> = list
        .lines()
        .filter(|l| l.trim_start().starts_with("FIN "))
        .fold(Vec::<(String, &str)>::new(), |mut seen, l| {
            let conn = l
                .split(" conn ")
                .nth(1)
                .and_then(|r| r.split(' ').next())
                .unwrap_or("");
            if !seen.iter().any(|(c, _)| c == conn) {
                seen.push((conn.to_string(), l));
            }
            seen
        })
        .into_iter()
        .map(|(_, l)| l)
        .filter(|l| l.contains("closed by the broker"))
        .collect();
    assert!(
        first_fins.len() as u64 >= n,
        "{n} connections closed by the rule, {} closed first by the broker's side:\n{list}",
        first_fins.len()
    );
    let faulty = consumer_connections(&frames);
    assert!(
        faulty.len() > base.len(),
        "the consumer opened {} connections with the fault, {} without: it did not reconnect\n{context}",
        faulty.len(),
        base.len()
    );
    for (conn, (dst, _)) in &faulty {
        assert!(
            listeners.contains_key(dst),
            "connection {conn} went to {dst}, not one of the proxy's listeners {listeners:?}"
        );
    }
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `FindCoordinator:error=COORDINATOR_NOT_AVAILABLE:every=3`: two requests
/// of our own (`kwire send`) are the 1st and 2nd, so the consumer's first is
/// the 3rd and gets the error; the consumer asks again, joins and consumes.
/// (Not `every=2`: librdkafka asks on two connections at once, once a
/// second, and an answer of each pair made an error kept it from ever
/// settling on a coordinator: 62 requests in 30 s, no join.) A rule for
/// JoinGroup from another client id never applies.
fn recovers_from_coordinator_errors(name: &str, lib: &str) {
    let _one = serial();
    let dir = scratch(name);
    let broker = Tansu::start(&dir, "127.0.0.1");
    let sent = messages(50);
    write_messages(&dir.join("messages.jsonl"), &sent);
    let topic = format!("e2e-coordinator-{lib}");
    run_client(
        &broker.addr(),
        &topic,
        &dir,
        None,
        &["--lib", lib, "--only", "produce"],
    );
    const RULE: &str = "FindCoordinator:error=COORDINATOR_NOT_AVAILABLE:every=3";
    const NOBODY: &str = "JoinGroup:client=e2e-nobody:error=NOT_COORDINATOR";
    let pcap = dir.join("coordinator.pcapng");
    let proxy = Proxy::start(
        &broker.addr(),
        &[
            "--inject",
            RULE,
            "--inject",
            NOBODY,
            "--write-pcap",
            pcap.to_str().unwrap(),
        ],
    );
    assert_rule_announced(&proxy, 1, RULE);
    assert_rule_announced(&proxy, 2, NOBODY);

    std::fs::write(
        dir.join("primer.json"),
        json!({"Key": "e2e-primer", "KeyType": 0}).to_string(),
    )
    .unwrap();
    for _ in 0..2 {
        let primer = kwire(&[
            "send",
            "--broker",
            &proxy.addr(),
            "FindCoordinator",
            "--version",
            "3",
            "-i",
            dir.join("primer.json").to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert!(
            primer.status.success(),
            "kwire send FindCoordinator through the proxy: {}\nproxy: {}",
            said(&primer),
            proxy.stderr.text()
        );
        let answer: Value = serde_json::from_slice(&primer.stdout).unwrap();
        assert_eq!(
            answer["body"]["ErrorCode"], 0,
            "our FindCoordinator request, before the 3rd, was answered by the rule: {answer}"
        );
    }

    let client_says = run_client(
        &proxy.addr(),
        &topic,
        &dir,
        Some(&proxy),
        &["--lib", lib, "--only", "consume"],
    );
    let (_, err) = stop(proxy);
    let context = format!("{client_says}\nproxy:\n{err}");
    assert_consumed_in_order(&dir.join("got.jsonl"), &sent, &context);

    let n = applied(&err, 1, RULE);
    assert!(
        n >= 1,
        "the consumer's FindCoordinator was not answered by the rule:\n{context}"
    );
    let lines = injections(&err, 1);
    assert_eq!(lines.len() as u64, n, "{err}");
    for i in &lines {
        assert_eq!(
            (i.action.as_str(), i.api.as_str()),
            ("error COORDINATOR_NOT_AVAILABLE (15)", "FindCoordinator"),
            "{i:?}"
        );
    }
    let frames = capture_json(&pcap);
    let asked = requests_of(&frames, 10);
    assert_eq!(
        n,
        asked.len() as u64 / 3,
        "the rule applied {n} times to {} FindCoordinator requests (every 3rd, ours the first two)",
        asked.len()
    );
    let answers = with_error(&frames, 10, 15);
    assert_eq!(answers.len() as u64, n, "injected answers in the pcap");
    for r in &answers {
        // FindCoordinator v1 and later have an ErrorMessage (top level up
        // to v3, per coordinator key from v4).
        assert_injected_answer(r, 15, r["api_version"].as_i64() >= Some(1));
        assert_eq!(
            request_of(&frames, r)["header"]["ClientId"],
            "e2e-consumer",
            "only the consumer's requests come 3rd, 6th, ...: {r}"
        );
    }
    assert_lines_name_the_answers(&frames, &answers, &lines);
    // It joined in the end.
    for (api, what) in [(11, "JoinGroup"), (14, "SyncGroup")] {
        let ok = responses_of(&frames, api).iter().any(|r| {
            let mut codes = Vec::new();
            error_codes(&r["body"], &mut codes);
            !codes.is_empty() && codes.iter().all(|&c| c == 0)
        });
        assert!(ok, "no {what} answered without an error:\n{context}");
    }
    assert!(
        !requests_of(&frames, 11).is_empty(),
        "no JoinGroup for the second rule to pass over"
    );
    assert_eq!(applied(&err, 2, NOBODY), 0, "{err}");
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn librdkafka_recovers_from_injected_coordinator_errors() {
    require_all("the fault injection test of FindCoordinator errors with librdkafka");
    recovers_from_coordinator_errors("faults-coordinator-librdkafka", "confluent");
}

#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn kafka_python_recovers_from_injected_coordinator_errors() {
    require_all("the fault injection test of FindCoordinator errors with kafka-python");
    recovers_from_coordinator_errors("faults-coordinator-kafka-python", "kafka-python");
}

/// One response read from `conn`, decoded as `api` `version`; `None` when
/// nothing comes within the connection's read timeout.
fn read_answer(conn: &mut TcpStream, api: &str, version: i16) -> Option<Value> {
    let key = Catalogue::builtin().resolve_api(api).unwrap();
    read_response(
        conn,
        key,
        version,
        &format!("reading a {api} v{version} response"),
    )
}

/// A connection to `addr` whose reads give up after `wait`.
fn connect(addr: &str, wait: Duration) -> TcpStream {
    let c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(wait)).unwrap();
    c
}

fn create_topic(name: &str) -> Value {
    json!({"Topics": [{"Name": name, "NumPartitions": 1, "ReplicationFactor": 1, "Assignments": [], "Configs": []}], "timeoutMs": 5000, "validateOnly": false})
}

/// Whether the broker itself (not through the proxy) knows `topic`.
fn broker_knows(broker: &str, topic: &str) -> bool {
    let mut c = connect(broker, Duration::from_secs(5));
    c.write_all(&frame(
        Direction::Request,
        "Metadata",
        12,
        1,
        "e2e-check",
        json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}),
    ))
    .unwrap();
    let r = read_answer(&mut c, "Metadata", 12).expect("the broker answers Metadata");
    r["body"]["Topics"]
        .as_array()
        .is_some_and(|ts| ts.iter().any(|t| t["Name"] == topic))
}

/// `error` answers without forwarding (the broker never creates the topic),
/// `drop` forwards and never answers (the broker creates it), `duplicate`
/// answers twice: each only for what its topic= or client= selects, with
/// the exact injection lines (the client address is our socket's).
#[test]
#[ignore = "needs tansu and the Python Kafka clients; bash .ci/run installs them"]
fn error_drop_and_duplicate_do_what_they_say_for_the_requests_they_select() {
    require_all("the fault injection test of error, drop and duplicate");
    let _one = serial();
    let dir = scratch("faults-actions");
    let broker = Tansu::start(&dir, "127.0.0.1");
    const REFUSE: &str = "CreateTopics:topic=e2e-refused:error=POLICY_VIOLATION";
    const UNHEARD: &str = "CreateTopics:topic=e2e-unheard:drop";
    const TWICE: &str = "Metadata:client=e2e-twice:duplicate";
    let pcap = dir.join("actions.pcapng");
    let proxy = Proxy::start(
        &broker.addr(),
        &[
            "--inject",
            REFUSE,
            "--inject",
            UNHEARD,
            "--inject",
            TWICE,
            "--write-pcap",
            pcap.to_str().unwrap(),
        ],
    );
    for (i, r) in [REFUSE, UNHEARD, TWICE].iter().enumerate() {
        assert_rule_announced(&proxy, i + 1, r);
    }
    let wait = Duration::from_secs(2);

    // error: answered by the proxy, twice; another topic passes.
    let mut refused = connect(&proxy.addr(), Duration::from_secs(10));
    for corr in [1, 2] {
        refused
            .write_all(&frame(
                Direction::Request,
                "CreateTopics",
                4,
                corr,
                "e2e-refuser",
                create_topic("e2e-refused"),
            ))
            .unwrap();
        let r = read_answer(&mut refused, "CreateTopics", 4)
            .unwrap_or_else(|| panic!("no answer to CreateTopics {corr}: {}", proxy.stderr.text()));
        assert_eq!(r["header"]["CorrelationId"], corr, "{r}");
        assert_injected_answer(&r, 44, true);
    }
    refused
        .write_all(&frame(
            Direction::Request,
            "CreateTopics",
            4,
            3,
            "e2e-refuser",
            create_topic("e2e-allowed"),
        ))
        .unwrap();
    let r = read_answer(&mut refused, "CreateTopics", 4).expect("an answer about e2e-allowed");
    assert_eq!(
        r["body"]["Topics"][0]["ErrorCode"], 0,
        "a topic rule 1 does not name was refused: {r}"
    );

    // drop: forwarded, never answered.
    let mut unheard = connect(&proxy.addr(), wait);
    unheard
        .write_all(&frame(
            Direction::Request,
            "CreateTopics",
            4,
            1,
            "e2e-unheard",
            create_topic("e2e-unheard"),
        ))
        .unwrap();
    if let Some(r) = read_answer(&mut unheard, "CreateTopics", 4) {
        panic!("a dropped response reached the client: {r}");
    }

    // duplicate: two answers to one request of client e2e-twice; one to
    // the same request of another client (then the next request's answer).
    let metadata = json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false});
    let mut twice = connect(&proxy.addr(), wait);
    twice
        .write_all(&frame(
            Direction::Request,
            "Metadata",
            12,
            7,
            "e2e-twice",
            metadata.clone(),
        ))
        .unwrap();
    let first = read_answer(&mut twice, "Metadata", 12).expect("an answer to Metadata");
    let second = read_answer(&mut twice, "Metadata", 12).expect("the duplicated answer");
    assert_eq!(first["header"]["CorrelationId"], 7, "{first}");
    assert_eq!(first, second, "the duplicate is not the same answer");
    if let Some(r) = read_answer(&mut twice, "Metadata", 12) {
        panic!("a third answer: {r}");
    }
    let mut once = connect(&proxy.addr(), Duration::from_secs(10));
    let mut both = frame(Direction::Request, "Metadata", 12, 7, "e2e-once", metadata);
    both.extend(frame(
        Direction::Request,
        "ApiVersions",
        3,
        8,
        "e2e-once",
        json!({"ClientSoftwareName": "e2e", "ClientSoftwareVersion": "1"}),
    ));
    once.write_all(&both).unwrap();
    let r = read_answer(&mut once, "Metadata", 12).expect("an answer to Metadata");
    assert_eq!(r["header"]["CorrelationId"], 7, "{r}");
    let r = read_answer(&mut once, "ApiVersions", 3).expect("an answer to ApiVersions");
    assert_eq!(
        (
            r["header"]["CorrelationId"].as_i64(),
            r["body"]["ErrorCode"].as_i64()
        ),
        (Some(8), Some(0)),
        "the answer after Metadata from another client is not ApiVersions': {r}"
    );

    // What the broker did: created what was dropped, never saw what was refused.
    let deadline = Instant::now() + Duration::from_secs(5);
    while !broker_knows(&broker.addr(), "e2e-unheard") && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        broker_knows(&broker.addr(), "e2e-unheard"),
        "the request whose answer was dropped never reached the broker"
    );
    assert!(broker_knows(&broker.addr(), "e2e-allowed"));
    assert!(
        !broker_knows(&broker.addr(), "e2e-refused"),
        "the broker created the topic the proxy answered for"
    );

    let addr = |c: &TcpStream| c.local_addr().unwrap().to_string();
    let (refuser, dropper, doubled) = (addr(&refused), addr(&unheard), addr(&twice));
    drop((refused, unheard, twice, once));
    std::thread::sleep(Duration::from_millis(300));
    let (_, err) = stop(proxy);
    for line in [
        format!("kwire: proxy: injected (rule 1) error POLICY_VIOLATION (44): CreateTopics v4 correlation id 1 from {refuser}"),
        format!("kwire: proxy: injected (rule 1) error POLICY_VIOLATION (44): CreateTopics v4 correlation id 2 from {refuser}"),
        format!("kwire: proxy: injected (rule 2) dropped the response: CreateTopics v4 correlation id 1 from {dropper}"),
        format!("kwire: proxy: injected (rule 3) duplicated the response: Metadata v12 correlation id 7 from {doubled}"),
    ] {
        assert!(err.lines().any(|l| l == line), "no line `{line}`:\n{err}");
    }
    for (rule, text, times) in [(1, REFUSE, 2), (2, UNHEARD, 1), (3, TWICE, 1)] {
        assert_eq!(applied(&err, rule, text), times, "rule {rule}:\n{err}");
        assert_eq!(
            injections(&err, rule).len() as u64,
            times,
            "rule {rule}:\n{err}"
        );
    }
    // The pcap has what the client saw: the dropped request, unanswered.
    let read = kwire(&["capture", pcap.to_str().unwrap(), "--format", "json"]);
    let frames: Vec<Value> = String::from_utf8_lossy(&read.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let dropped = requests_of(&frames, 19)
        .into_iter()
        .find(|f| f["capture"]["src"] == dropper.as_str())
        .unwrap_or_else(|| panic!("the dropped CreateTopics request is not in the pcap"));
    assert!(
        response_to(&frames, dropped).is_none(),
        "the pcap has an answer the client never got"
    );
    // Each frame a rule touched carries the packet comment that says what
    // the proxy did (JSON `capture.comment`, the `--list` line, Wireshark),
    // and no other frame has one.
    let comment = |f: &Value| f["capture"]["comment"].as_str().map(str::to_string);
    let from = |who: &str| -> Vec<Option<String>> {
        frames
            .iter()
            .filter(|f| f["capture"]["src"] == who || f["capture"]["dst"] == who)
            .map(comment)
            .collect()
    };
    let s = |t: &str| Some(t.to_string());
    assert_eq!(
        from(&refuser),
        [
            s("kwire proxy rule 1: not forwarded, answered with error POLICY_VIOLATION (44)"),
            s("kwire proxy rule 1: made up, error POLICY_VIOLATION (44)"),
            s("kwire proxy rule 1: not forwarded, answered with error POLICY_VIOLATION (44)"),
            s("kwire proxy rule 1: made up, error POLICY_VIOLATION (44)"),
            None,
            None,
        ],
        "comments on the refused connection's frames"
    );
    assert_eq!(
        from(&dropper),
        [s("kwire proxy rule 2: its response is not delivered")]
    );
    assert_eq!(
        from(&doubled),
        [None, None, s("kwire proxy rule 3: the response sent again")]
    );
    // The answer sent again decodes as the first one's API and names it.
    let twice_frames: Vec<&Value> = frames
        .iter()
        .filter(|f| {
            f["capture"]["src"] == doubled.as_str() || f["capture"]["dst"] == doubled.as_str()
        })
        .collect();
    assert_eq!(
        (
            &twice_frames[2]["api_name"],
            &twice_frames[2]["capture"]["duplicate_of"]
        ),
        (&json!("Metadata"), &twice_frames[1]["capture"]["frame"]),
        "the duplicated answer: {}",
        twice_frames[2]
    );
    let checked = kwire(&["check", "--format", "json", pcap.to_str().unwrap()]);
    let duplicates = json_lines(&String::from_utf8_lossy(&checked.stdout))
        .into_iter()
        .filter(|f| f["rule"] == "duplicate-response")
        .count();
    assert_eq!(duplicates, 1, "check's duplicate-response findings");
    let list = kwire(&["capture", pcap.to_str().unwrap(), "--list", "--wide"]);
    let list = String::from_utf8_lossy(&list.stdout);
    assert_eq!(
        list.matches("  # kwire proxy rule ").count(),
        6,
        "list lines with comments:\n{list}"
    );
    // The frames written again (`--write-selected`) keep their comments: a
    // made-up answer never passes for the broker's in the part shared.
    let selected = dir.join("selected.pcapng");
    let _ = kwire(&[
        "capture",
        pcap.to_str().unwrap(),
        "--write-selected",
        selected.to_str().unwrap(),
    ]);
    let again = kwire(&["capture", selected.to_str().unwrap(), "--list", "--wide"]);
    let again = String::from_utf8_lossy(&again.stdout);
    assert_eq!(
        again.matches("  # kwire proxy rule ").count(),
        6,
        "selected list lines with comments:\n{again}"
    );
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Bad rules are refused at start: exit status 2, and a message that names
/// what is wrong (besides quoting the rule). No broker needed: the proxy
/// must not get as far as serving.
#[test]
fn bad_inject_rules_are_refused_at_start() {
    let cases = [
        (
            "Bogus:error=NOT_LEADER_OR_FOLLOWER",
            "Bogus",
            "an unknown API",
        ),
        (
            "Produce:error=NO_SUCH_ERROR",
            "NO_SUCH_ERROR",
            "an unknown error name",
        ),
        (
            "Produce:error=NOT_LEADER_OR_FOLLOWER:every=0",
            "every",
            "every=0",
        ),
        ("Produce:drop:rate=2", "rate", "a rate above 1"),
        ("Produce:explode", "explode", "an unknown action"),
    ];
    for (rule, named, what) in cases {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut child = spawn_kwire(&[
            "proxy",
            "--listen",
            &listen,
            "--broker",
            "127.0.0.1:9",
            "--inject",
            rule,
        ]);
        let status = wait_for(&mut child, Duration::from_secs(10));
        if status.is_none() {
            let _ = child.kill();
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let status = status.unwrap_or_else(|| {
            panic!("the proxy started with {what} (--inject '{rule}') and ran for 10 s:\n{err}")
        });
        assert_eq!(
            status.code(),
            Some(2),
            "--inject '{rule}' ({what}): exit status\n{err}"
        );
        let besides_the_rule = err.replace(rule, "");
        assert!(
            besides_the_rule
                .to_lowercase()
                .contains(&named.to_lowercase()),
            "--inject '{rule}' ({what}): the message does not name `{named}`:\n{err}"
        );
        assert!(
            !err.contains("forwards to"),
            "--inject '{rule}' ({what}): the proxy listened:\n{err}"
        );
    }
}
