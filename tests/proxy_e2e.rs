//! `kwire proxy`, `kwire send` and `kwire probe` against a real broker (tansu
//! 0.6.0) and real clients (librdkafka through confluent-kafka, kafka-python;
//! scripts/e2e-clients/*.py). Each test starts its own broker on a free port
//! and its own proxy, and stops both. Ignored by a plain `cargo test`;
//! `cargo test -- --include-ignored` runs them and fails when tansu, python3
//! or the Python clients are missing (`bash .ci/run` installs them).
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

mod common;

use common::broker::{
    assert_consumed_in_order, error_codes, free_port, json_lines, kwire, messages, python,
    read_response, repo, requests_of, require_all, responses_of, scratch, serial, write_messages,
    Collected, Proxy, Tansu,
};
use common::exchanges::frame;
use kwire::decode::Direction;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Every frame a Kafka request or response that decoded whole, every
/// response paired with its request (per connection, by correlation id, as
/// the `"capture"` member and the header say), and every request answered,
/// but for those still awaiting an answer when their client closed the
/// connection (a consumer's long-polling Fetch): after the last response on
/// their connection, as a broker answers in order (a connection none of
/// whose requests was answered fails).
fn check_frames(frames: &[Value]) {
    let mut requests: HashMap<(u64, i64), &Value> = HashMap::new();
    let mut answered = BTreeSet::new();
    for f in frames {
        assert!(
            f.get("error").is_none() && f.get("record_errors").is_none(),
            "a frame with decode errors: {f}"
        );
        let conn = f["capture"]["conn"]
            .as_u64()
            .unwrap_or_else(|| panic!("no capture.conn: {f}"));
        let corr = f["header"]["CorrelationId"]
            .as_i64()
            .unwrap_or_else(|| panic!("no correlation id: {f}"));
        match f["kind"].as_str() {
            Some("request") => {
                assert!(
                    requests.insert((conn, corr), f).is_none(),
                    "correlation id {corr} reused on connection {conn}"
                );
            }
            Some("response") => {
                let req = requests
                    .get(&(conn, corr))
                    .unwrap_or_else(|| panic!("a response without its request: {f}"));
                assert_eq!(req["api_key"], f["api_key"], "{f}");
                assert_eq!(req["api_version"], f["api_version"], "{f}");
                assert!(
                    answered.insert((conn, corr)),
                    "two responses to one request: {f}"
                );
            }
            _ => panic!("neither a request nor a response: {f}"),
        }
    }
    let frame_number = |f: &Value| f["capture"]["frame"].as_u64().unwrap();
    let mut last_response: HashMap<u64, u64> = HashMap::new();
    for f in frames.iter().filter(|f| f["kind"] == "response") {
        last_response.insert(f["capture"]["conn"].as_u64().unwrap(), frame_number(f));
    }
    let unanswered: Vec<_> = requests
        .iter()
        .filter(|(k, r)| {
            !answered.contains(*k)
                && last_response
                    .get(&k.0)
                    .is_none_or(|&last| frame_number(r) < last)
        })
        .map(|(_, r)| r.to_string())
        .collect();
    assert!(
        unanswered.is_empty(),
        "{} requests never answered, though later ones on their connections were: {:?}",
        unanswered.len(),
        unanswered
    );
}

/// Every `Host`/`Port` pair in `v`, at any depth.
fn endpoints(v: &Value, out: &mut Vec<(String, i64)>) {
    match v {
        Value::Object(o) => {
            if let (Some(h), Some(p)) = (
                o.get("Host").and_then(Value::as_str),
                o.get("Port").and_then(Value::as_i64),
            ) {
                out.push((h.to_string(), p));
            }
            o.values().for_each(|c| endpoints(c, out));
        }
        Value::Array(a) => a.iter().for_each(|c| endpoints(c, out)),
        _ => {}
    }
}

/// The record batches of a records field (hex): (codec, record count) of each.
fn batches(records_hex: &str) -> Vec<(u8, u32)> {
    let bytes = hex::decode(records_hex).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    while at + 61 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap()) as usize;
        let attributes = u16::from_be_bytes([bytes[at + 21], bytes[at + 22]]);
        let count = u32::from_be_bytes(bytes[at + 57..at + 61].try_into().unwrap());
        out.push(((attributes & 7) as u8, count));
        at += 12 + len;
    }
    out
}

/// Produce 1,000 messages with gzip and consume them back in a group with
/// `lib`, through the proxy in front of a broker that names itself
/// `localhost` (so the proxy opens a second listener for it); check what
/// the client was told and what it got, the proxy's JSON and its pcapng.
fn produce_and_consume_through_the_proxy(name: &str, lib: &str) {
    let _one = serial();
    let dir = scratch(name);
    let broker = Tansu::start(&dir, "localhost");
    let pcap = dir.join("proxy.pcapng");
    let proxy = Proxy::start(
        &broker.addr(),
        &["--format", "json", "--write-pcap", pcap.to_str().unwrap()],
    );

    let sent = messages(1000);
    write_messages(&dir.join("messages.jsonl"), &sent);
    let got_path = dir.join("got.jsonl");
    let topic = format!("e2e-{lib}");
    let client = python(
        "produce_consume.py",
        &[
            &proxy.addr(),
            &topic,
            &format!("group-{lib}"),
            dir.join("messages.jsonl").to_str().unwrap(),
            got_path.to_str().unwrap(),
            "--lib",
            lib,
            "--compression",
            "gzip",
        ],
        Duration::from_secs(50),
    );
    let client_says = format!(
        "{}{}",
        String::from_utf8_lossy(&client.stdout),
        String::from_utf8_lossy(&client.stderr)
    );
    let listeners = proxy.listeners();
    let (status, out, err) = proxy.stop();
    assert!(
        client.status.success(),
        "the client failed:\n{client_says}\nproxy: {err}"
    );
    assert!(status.success(), "the proxy exited with {status}: {err}");

    // Consumed unchanged, in order, at offsets 0..1000 of partition 0.
    assert_consumed_in_order(&got_path, &sent, &client_says);

    // The client was told of the proxy's listeners only: every endpoint in
    // every response is one of them, never the broker's own port.
    assert!(
        listeners.len() >= 2,
        "a listener for the bootstrap broker and one for `localhost`: {listeners:?}\n{err}"
    );
    assert!(
        listeners
            .values()
            .any(|b| *b == format!("localhost:{}", broker.port)),
        "{listeners:?}"
    );
    let frames = json_lines(&out);
    check_frames(&frames);
    let mut told = Vec::new();
    for api in [3, 10] {
        assert!(
            !responses_of(&frames, api).is_empty(),
            "no responses of api {api}"
        );
        for r in responses_of(&frames, api) {
            let before = told.len();
            endpoints(&r["body"], &mut told);
            assert!(
                told.len() > before,
                "a response of api {api} without endpoints: {r}"
            );
        }
    }
    for f in frames.iter().filter(|f| f["kind"] == "response") {
        endpoints(&f["body"], &mut told);
    }
    for (host, port) in &told {
        assert_ne!(
            *port,
            i64::from(broker.port),
            "the broker's own port reached the client"
        );
        assert!(
            listeners.contains_key(&format!("{host}:{port}")),
            "{host}:{port} is not a proxy listener ({listeners:?})"
        );
    }
    // The coordinator too (FindCoordinator, one endpoint per response).
    for r in responses_of(&frames, 10) {
        let mut e = Vec::new();
        endpoints(&r["body"], &mut e);
        assert!(
            e.iter()
                .all(|(h, p)| listeners.contains_key(&format!("{h}:{p}"))),
            "{r}"
        );
    }

    // The group: found its coordinator, joined, synced, heartbeat, all through the proxy.
    for (api, name) in [
        (10, "FindCoordinator"),
        (11, "JoinGroup"),
        (14, "SyncGroup"),
        (12, "Heartbeat"),
        (8, "OffsetCommit"),
    ] {
        assert!(
            !requests_of(&frames, api).is_empty(),
            "no {name} request through the proxy"
        );
        let clean = responses_of(&frames, api)
            .iter()
            .filter(|r| {
                let mut codes = Vec::new();
                error_codes(&r["body"], &mut codes);
                !codes.is_empty() && codes.iter().all(|&c| c == 0)
            })
            .count();
        assert!(clean > 0, "no {name} answered without an error");
    }

    // The 1,000 records went through in gzip batches. librdkafka sends a
    // batch as it is when gzip would make it larger, which a batch of a
    // record or two can be (it depends on how the client's timer cut the
    // batches): those few may be uncompressed, the rest are gzip.
    let (mut produced, mut gzipped) = (0, 0);
    for p in requests_of(&frames, 0) {
        for t in p["body"]["TopicData"].as_array().unwrap() {
            for part in t["PartitionData"].as_array().unwrap() {
                for (codec, count) in batches(part["Records"].as_str().unwrap()) {
                    match codec {
                        1 => gzipped += count,
                        0 => assert!(count <= 3, "{count} records in a batch not gzip-compressed"),
                        _ => panic!("a batch compressed with codec {codec}, not gzip"),
                    }
                    produced += count;
                }
            }
        }
    }
    assert_eq!(
        produced, 1000,
        "records in the Produce requests the proxy saw"
    );
    assert!(
        gzipped >= 990,
        "only {gzipped} of 1,000 records in gzip batches"
    );

    // The pcapng decodes to the same frames as the proxy printed.
    let decoded = kwire(&["capture", pcap.to_str().unwrap(), "--format", "json"]);
    assert!(
        decoded.status.success(),
        "{}",
        String::from_utf8_lossy(&decoded.stderr)
    );
    let from_file = String::from_utf8(decoded.stdout).unwrap();
    assert_eq!(from_file.lines().count(), out.lines().count());
    for (a, b) in from_file.lines().zip(out.lines()) {
        assert_eq!(
            a, b,
            "the pcapng's frame differs from the one the proxy printed"
        );
    }
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs tansu and python clients"]
fn librdkafka_through_the_proxy_sees_only_the_proxy_and_gets_its_messages_back() {
    require_all("the proxy's end-to-end test with librdkafka");
    produce_and_consume_through_the_proxy("librdkafka", "confluent");
}

#[test]
#[ignore = "needs tansu and python clients"]
fn kafka_python_through_the_proxy_sees_only_the_proxy_and_gets_its_messages_back() {
    require_all("the proxy's end-to-end test with kafka-python");
    produce_and_consume_through_the_proxy("kafka-python", "kafka-python");
}

/// `kwire send` and `kwire probe` against the broker, then the same through the proxy.
#[test]
#[ignore = "needs tansu and python clients"]
fn send_and_probe_against_the_broker_and_through_the_proxy() {
    require_all("the end-to-end test of kwire send and probe");
    let _one = serial();
    let dir = scratch("send-probe");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let proxy = Proxy::start(&broker.addr(), &["--format", "json"]);
    let text = |o: &Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };

    // probe: ApiVersions answered; Produce, Fetch and Metadata with their ranges.
    let mut tables = Vec::new();
    for addr in [broker.addr(), proxy.addr()] {
        let p = kwire(&["probe", "--broker", &addr]);
        assert!(p.status.success(), "{}", text(&p));
        let out = String::from_utf8(p.stdout).unwrap();
        let mut lines = out.lines();
        let first = lines.next().unwrap();
        assert!(
            first.starts_with(&format!("{addr} answered ApiVersions v"))
                && first.ends_with(" APIs"),
            "{first}"
        );
        for api in ["Produce", "Fetch", "Metadata", "ApiVersions"] {
            let row = out
                .lines()
                .find(|l| l.split_whitespace().nth(1) == Some(api))
                .unwrap_or_else(|| panic!("no {api} row:\n{out}"));
            let range = row.split_whitespace().nth(2).unwrap();
            let (lo, hi) = range
                .strip_prefix('v')
                .unwrap()
                .split_once("-v")
                .unwrap_or_else(|| panic!("{row}"));
            assert!(
                lo.parse::<i16>().unwrap() <= hi.parse::<i16>().unwrap(),
                "{row}"
            );
        }
        tables.push(lines.map(str::to_string).collect::<Vec<_>>());

        let j = kwire(&["probe", "--broker", &addr, "--format", "json"]);
        assert!(j.status.success(), "{}", text(&j));
        let v: Value = serde_json::from_slice(&j.stdout).unwrap();
        assert_eq!(v["broker"], addr.as_str());
        let apis = v["apis"].as_array().unwrap();
        for key in [0, 1, 3, 18] {
            let a = apis
                .iter()
                .find(|a| a["api_key"] == key)
                .unwrap_or_else(|| panic!("api {key} missing: {v}"));
            assert!(
                a["min_version"].as_i64() <= a["max_version"].as_i64()
                    && !a["kwire_decodes"].as_array().unwrap().is_empty(),
                "{a}"
            );
        }
    }
    assert_eq!(
        tables[0], tables[1],
        "the broker's table differs through the proxy"
    );

    // send: a topic created, then Metadata about it, decoded.
    std::fs::write(dir.join("create.json"), json!({"Topics": [{"Name": "e2e-send", "NumPartitions": 2, "ReplicationFactor": 1, "Assignments": [], "Configs": []}], "timeoutMs": 5000, "validateOnly": false}).to_string()).unwrap();
    let created = kwire(&[
        "send",
        "--broker",
        &broker.addr(),
        "CreateTopics",
        "--version",
        "4",
        "-i",
        dir.join("create.json").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert!(created.status.success(), "{}", text(&created));
    let c: Value = serde_json::from_slice(&created.stdout).unwrap();
    assert_eq!(
        (c["kind"].as_str(), c["api_key"].as_i64()),
        (Some("response"), Some(19)),
        "{c}"
    );
    assert_eq!(c["body"]["Topics"][0]["ErrorCode"], 0, "{c}");
    std::fs::write(dir.join("metadata.json"), json!({"Topics": [{"Name": "e2e-send"}], "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}).to_string()).unwrap();
    for (addr, port) in [(broker.addr(), broker.port), (proxy.addr(), proxy.port)] {
        let m = kwire(&[
            "send",
            "--broker",
            &addr,
            "Metadata",
            "-i",
            dir.join("metadata.json").to_str().unwrap(),
            "--format",
            "json",
            "--show-request",
        ]);
        assert!(m.status.success(), "{}", text(&m));
        let frames = json_lines(&String::from_utf8(m.stdout.clone()).unwrap());
        assert_eq!(frames.len(), 2, "the request, then the response");
        assert_eq!(
            (frames[0]["kind"].as_str(), frames[1]["kind"].as_str()),
            (Some("request"), Some("response"))
        );
        let r = &frames[1];
        assert!(r.get("error").is_none(), "{r}");
        assert_eq!(r["api_key"], 3);
        assert_eq!(
            r["header"]["CorrelationId"],
            frames[0]["header"]["CorrelationId"]
        );
        let brokers = r["body"]["Brokers"].as_array().unwrap();
        assert_eq!(brokers.len(), 1, "{r}");
        assert_eq!(
            (brokers[0]["Host"].as_str(), brokers[0]["Port"].as_i64()),
            (Some("127.0.0.1"), Some(i64::from(port))),
            "{r}"
        );
        let topic = &r["body"]["Topics"][0];
        assert_eq!(
            (topic["Name"].as_str(), topic["ErrorCode"].as_i64()),
            (Some("e2e-send"), Some(0)),
            "{r}"
        );
        assert_eq!(topic["Partitions"].as_array().unwrap().len(), 2, "{r}");
        let said = String::from_utf8_lossy(&m.stderr);
        assert!(
            said.contains("kwire: sent Metadata v")
                && said.contains(&format!("to {addr}; the response (")),
            "{said}"
        );
        // The tree too.
        let tree = kwire(&[
            "send",
            "--broker",
            &addr,
            "Metadata",
            "--version",
            "8",
            "-i",
            dir.join("metadata.json").to_str().unwrap(),
        ]);
        assert!(tree.status.success(), "{}", text(&tree));
        let t = String::from_utf8(tree.stdout).unwrap();
        assert!(
            t.starts_with("MetadataResponse message v8")
                && t.contains("Name string = \"e2e-send\""),
            "{t}"
        );
        assert!(t.contains(&format!("Port int32 = {port} ")), "{t}");
    }

    // The README's form: the body on standard input, every topic.
    let all = common::kwire_with_stdin(
        &[
            "send",
            "--broker",
            &broker.addr(),
            "Metadata",
            "-i",
            "-",
            "--format",
            "json",
        ],
        br#"{"Topics":null}"#,
    );
    assert!(all.status.success(), "{}", text(&all));
    let r: Value = serde_json::from_slice(&all.stdout).unwrap();
    let names: Vec<&str> = r["body"]["Topics"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["Name"].as_str())
        .collect();
    assert!(names.contains(&"e2e-send"), "{r}");

    // A Produce with acks=0 (the smallest instance's) gets no response: sent,
    // shown, exit 0 at once, not a wait for an answer that never comes.
    let start = Instant::now();
    let unanswered = kwire(&[
        "send",
        "--broker",
        &broker.addr(),
        "Produce",
        "--version",
        "9",
    ]);
    assert_eq!(unanswered.status.code(), Some(0), "{}", text(&unanswered));
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    assert!(
        String::from_utf8_lossy(&unanswered.stderr)
            .contains("with acks=0 a broker sends no response"),
        "{}",
        text(&unanswered)
    );
    assert!(
        String::from_utf8_lossy(&unanswered.stdout).starts_with("ProduceRequest message v9"),
        "{}",
        text(&unanswered)
    );

    // A broker that refuses the connection: exit 1, saying so.
    let closed = free_port();
    let refused = kwire(&[
        "send",
        "--broker",
        &format!("127.0.0.1:{closed}"),
        "Metadata",
    ]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.starts_with(&format!("kwire: 127.0.0.1:{closed}")) && said.contains("refused"),
        "{said}"
    );
    assert!(refused.stdout.is_empty());
    let refused = kwire(&["probe", "--broker", &format!("127.0.0.1:{closed}")]);
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("refused"),
        "{}",
        text(&refused)
    );

    // One that accepts and never answers: exit 1 after --timeout, saying so.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_addr = silent.local_addr().unwrap().to_string();
    let held = std::thread::spawn(move || {
        silent.accept().map(|(s, _)| {
            std::thread::sleep(Duration::from_secs(3));
            drop(s)
        })
    });
    let start = Instant::now();
    let timed_out = kwire(&[
        "send",
        "--broker",
        &silent_addr,
        "--timeout",
        "1",
        "Metadata",
        "--version",
        "1",
    ]);
    let took = start.elapsed();
    assert_eq!(timed_out.status.code(), Some(1), "{}", text(&timed_out));
    assert!(
        String::from_utf8_lossy(&timed_out.stderr).contains("no answer in time"),
        "{}",
        text(&timed_out)
    );
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "took {took:?}"
    );
    let _ = held.join();

    // Through the proxy with the broker gone: the proxy closes the connection, and send says so.
    let (addr, mut broker) = (proxy.addr(), broker);
    broker.kill();
    let gone = kwire(&["send", "--broker", &addr, "Metadata", "--version", "1"]);
    assert_eq!(gone.status.code(), Some(1), "{}", text(&gone));
    assert!(
        String::from_utf8_lossy(&gone.stderr).contains("closed the connection"),
        "{}",
        text(&gone)
    );

    let (status, out, err) = proxy.stop();
    assert!(status.success(), "{err}");
    assert!(
        err.contains(&format!("broker {}", broker.addr()))
            && err.contains("closing the client's connection"),
        "{err}"
    );
    // What passed before: probe's and send's exchanges, each paired.
    let frames = json_lines(&out);
    check_frames(&frames);
    assert!(
        requests_of(&frames, 18).len() >= 2 && requests_of(&frames, 3).len() >= 2,
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A producer connected through the proxy when the broker dies: the proxy
/// closes the client's connections and says so, keeps running, and exits 0 on SIGINT.
#[test]
#[ignore = "needs tansu and python clients"]
fn the_broker_dying_mid_stream_closes_the_clients_and_not_the_proxy() {
    require_all("the proxy's end-to-end test of a broker that dies");
    let _one = serial();
    let dir = scratch("kill");
    let mut broker = Tansu::start(&dir, "127.0.0.1");
    let proxy = Proxy::start(
        &broker.addr(),
        &["--write-pcap", dir.join("kill.pcapng").to_str().unwrap()],
    );

    // A connection of our own through the proxy, answered once, then idle.
    let mut idle = TcpStream::connect(proxy.addr()).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    idle.write_all(&frame(
        Direction::Request,
        "ApiVersions",
        3,
        1,
        "e2e-idle",
        json!({"ClientSoftwareName": "e2e", "ClientSoftwareVersion": "1"}),
    ))
    .unwrap();
    let mut size = [0u8; 4];
    idle.read_exact(&mut size).unwrap();
    let mut rest = vec![0u8; i32::from_be_bytes(size) as usize];
    idle.read_exact(&mut rest).unwrap();

    // librdkafka producing through it.
    let mut producer = Command::new("python3")
        .arg(repo().join("scripts/e2e-clients/produce_forever.py"))
        .args([&proxy.addr(), "e2e-kill", "30"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (said, complained) = (
        Collected::from(producer.stdout.take().unwrap()),
        Collected::from(producer.stderr.take().unwrap()),
    );
    assert!(
        said.wait_until(Duration::from_secs(20), |t| t.contains("acked 1000")),
        "the producer did not get going: {}{}",
        said.text(),
        complained.text()
    );

    broker.kill();
    // Our idle connection is closed by the proxy: end of stream, not a timeout.
    let mut byte = [0u8; 1];
    match idle.read(&mut byte) {
        Ok(0) => {}
        other => panic!("the client's connection was not closed: {other:?}"),
    }
    let broker_addr = broker.addr();
    let closing = |t: &str| {
        t.lines().filter(|l| l.contains(&format!("broker {broker_addr}: closed the connection; closing the client's connection from"))).count()
    };
    // Ours, and at least one of the producer's.
    assert!(
        proxy
            .stderr
            .wait_until(Duration::from_secs(10), |t| closing(t) >= 2),
        "{}",
        proxy.stderr.text()
    );
    // The producer notices (librdkafka reports the lost connection, then refused ones).
    assert!(
        said.wait_until(Duration::from_secs(10), |t| t.contains("error: ")),
        "{}",
        said.text()
    );

    // The proxy keeps running: it accepts connections and closes them, saying why.
    std::thread::sleep(Duration::from_millis(500));
    let mut proxy = proxy;
    assert!(
        proxy.child.try_wait().unwrap().is_none(),
        "the proxy exited with the broker: {}",
        proxy.stderr.text()
    );
    let late = kwire(&["probe", "--broker", &proxy.addr(), "--timeout", "5"]);
    assert_eq!(late.status.code(), Some(1));
    assert!(
        proxy
            .stderr
            .wait_until(Duration::from_secs(5), |t| t.contains(&format!(
                "broker {broker_addr}: connecting to {broker_addr}: "
            )) && t.contains("refused")),
        "{}",
        proxy.stderr.text()
    );

    let _ = producer.kill();
    let _ = producer.wait();
    let (status, out, err) = proxy.stop();
    assert!(
        status.success(),
        "the proxy exited with {status} on SIGINT: {err}"
    );
    assert!(err.contains("kwire: proxy: closing"), "{err}");
    // Its listing has the Produce requests that went through before.
    assert!(
        out.lines().filter(|l| l.contains(" Produce ")).count() >= 2,
        "{out}"
    );
    let read_back = kwire(&[
        "capture",
        dir.join("kill.pcapng").to_str().unwrap(),
        "--list",
    ]);
    assert!(
        String::from_utf8_lossy(&read_back.stdout)
            .lines()
            .filter(|l| l.contains(" Produce "))
            .count()
            >= 2
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// 200 connections open at once through the proxy, each sending ApiVersions
/// and Metadata back to back: every one answered, in order, endpoints rewritten.
#[test]
#[ignore = "needs tansu and python clients"]
fn two_hundred_concurrent_connections_are_all_answered() {
    require_all("the proxy's end-to-end test of 200 connections");
    let _one = serial();
    let dir = scratch("many");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let proxy = Proxy::start(&broker.addr(), &["--format", "json"]);
    const N: usize = 200;
    let mut conns: Vec<TcpStream> = (0..N)
        .map(|_| TcpStream::connect(proxy.addr()).unwrap())
        .collect();
    for (i, c) in conns.iter_mut().enumerate() {
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let client = format!("e2e-{i}");
        let mut both = frame(
            Direction::Request,
            "ApiVersions",
            3,
            2 * i as i32,
            &client,
            json!({"ClientSoftwareName": "e2e", "ClientSoftwareVersion": "1"}),
        );
        both.extend(frame(Direction::Request, "Metadata", 12, 2 * i as i32 + 1, &client, json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false})));
        c.write_all(&both).unwrap();
    }
    for (i, c) in conns.iter_mut().enumerate() {
        for (corr, api, version) in [(2 * i as i32, 18, 3), (2 * i as i32 + 1, 3, 12)] {
            let v = read_response(c, api, version, &format!("connection {i}"))
                .unwrap_or_else(|| panic!("connection {i}: no response within 20 s"));
            assert_eq!(v["header"]["CorrelationId"], corr, "connection {i}");
            if api == 3 {
                let mut e = Vec::new();
                endpoints(&v["body"], &mut e);
                assert_eq!(
                    e,
                    [("127.0.0.1".to_string(), i64::from(proxy.port))],
                    "connection {i}"
                );
            } else {
                assert_eq!(v["body"]["ErrorCode"], 0, "connection {i}");
            }
        }
    }
    drop(conns);
    std::thread::sleep(Duration::from_millis(300));
    let (status, out, err) = proxy.stop();
    assert!(status.success(), "{err}");
    let frames = json_lines(&out);
    check_frames(&frames);
    assert_eq!(frames.len(), 4 * N, "every request and response printed");
    let conns: BTreeSet<u64> = frames
        .iter()
        .map(|f| f["capture"]["conn"].as_u64().unwrap())
        .collect();
    assert_eq!(conns.len(), N);
    assert!(!err.contains("closing the client's connection"), "{err}");
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// What /proc says of a process: its threads, open descriptors and resident KiB.
fn process_footprint(pid: u32) -> (usize, usize, usize) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| -> usize {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /proc/{pid}/status"))
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count();
    (field("Threads:"), fds, field("VmRSS:"))
}

/// This process may hold as many descriptors as its hard limit allows (the
/// test holds 2,000 sockets; tansu, started after, inherits the limit).
fn raise_open_files_limit(needed: u64) {
    // SAFETY: getrlimit and setrlimit only read and write the struct given.
    let lim = unsafe {
        let mut lim = std::mem::zeroed::<libc::rlimit>();
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim), 0);
        lim.rlim_cur = lim.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        lim
    };
    assert!(
        lim.rlim_max >= needed,
        "the hard limit on open files is {}; this test needs {needed}",
        lim.rlim_max
    );
}

/// 2,000 idle clients through the proxy: every one connected on to tansu,
/// served by a handful of threads in a bounded footprint, and still answered.
#[test]
#[ignore = "needs tansu and python clients"]
fn two_thousand_idle_connections_take_a_handful_of_threads() {
    require_all("the proxy's end-to-end test of 2,000 idle connections");
    let _one = serial();
    const N: usize = 2000;
    raise_open_files_limit(3 * N as u64 + 200);
    let dir = scratch("idle");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let proxy = Proxy::start(
        &broker.addr(),
        &["--format", "json", "--max-connections", "2500"],
    );
    let pid = proxy.child.id();
    let (threads_before, fds_before, _) = process_footprint(pid);
    let mut conns: Vec<TcpStream> = (0..N)
        .map(|i| TcpStream::connect(proxy.addr()).unwrap_or_else(|e| panic!("connection {i}: {e}")))
        .collect();
    // Each client's socket and the broker's, once tansu has accepted them all.
    let deadline = Instant::now() + Duration::from_secs(60);
    let (threads, fds, rss_kib) = loop {
        let now = process_footprint(pid);
        if now.1 >= fds_before + 2 * N || Instant::now() > deadline {
            break now;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!(
        "{N} idle connections: {threads} threads (were {threads_before}), {fds} descriptors (were {fds_before}), {rss_kib} KiB resident"
    );
    assert_eq!(
        fds,
        fds_before + 2 * N,
        "not every connection reached the broker: {}",
        proxy.stderr.text()
    );
    assert!(
        threads <= threads_before + 2,
        "{threads} threads for {N} connections"
    );
    assert!(
        rss_kib < 64 * 1024,
        "{rss_kib} KiB resident for {N} idle connections"
    );
    // Every 100th is still served, in the order it asks.
    let asked: Vec<usize> = (0..N).step_by(100).chain([N - 1]).collect();
    for &i in &asked {
        let c = &mut conns[i];
        c.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let client = format!("idle-{i}");
        let mut both = frame(
            Direction::Request,
            "ApiVersions",
            3,
            1,
            &client,
            json!({"ClientSoftwareName": "e2e", "ClientSoftwareVersion": "1"}),
        );
        both.extend(frame(Direction::Request, "Metadata", 12, 2, &client, json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false})));
        c.write_all(&both).unwrap();
    }
    for &i in &asked {
        for (corr, api, version) in [(1, 18, 3), (2, 3, 12)] {
            let v = read_response(&mut conns[i], api, version, &format!("connection {i}"))
                .unwrap_or_else(|| panic!("connection {i}: no response within 20 s"));
            assert_eq!(v["header"]["CorrelationId"], corr, "connection {i}");
        }
    }
    drop(conns);
    // Every slot comes back: the broker's sockets close with the clients'.
    let deadline = Instant::now() + Duration::from_secs(30);
    while process_footprint(pid).1 > fds_before && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        process_footprint(pid).1,
        fds_before,
        "sockets left open after the clients left"
    );
    let (status, out, err) = proxy.stop();
    assert!(status.success(), "{err}");
    let frames = json_lines(&out);
    check_frames(&frames);
    assert_eq!(
        frames.len(),
        4 * asked.len(),
        "every request and response printed"
    );
    assert!(!err.contains("closing the client's connection"), "{err}");
    assert!(!err.contains("refused"), "{err}");
    drop(broker);
    let _ = std::fs::remove_dir_all(&dir);
}

/// `proxy --check`: findings printed as they happen. A hand-written client
/// asks tansu for DescribeLogDirs, which it does not serve; the broker
/// closes, and the proxy says so before it is stopped.
#[test]
#[ignore = "needs tansu and python clients"]
fn proxy_check_prints_findings_as_they_happen() {
    require_all("the proxy's end-to-end test of --check");
    let _one = serial();
    let dir = scratch("check");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let proxy = Proxy::start(&broker.addr(), &["--check"]);
    let out = python(
        "../captures/diagnosis_clients.py",
        &["unsupported", &proxy.port.to_string()],
        Duration::from_secs(30),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Both findings come while the proxy still runs.
    assert!(
        proxy.stdout.wait_until(Duration::from_secs(10), |t| t
            .matches("closed-unanswered")
            .count()
            == 2),
        "{}",
        proxy.stdout.text()
    );
    let (status, stdout, stderr) = proxy.stop();
    for line in stdout.lines() {
        assert!(
            line.contains(
                "DescribeLogDirs v1 warning closed-unanswered: DescribeLogDirs v1 request (frame "
            ) && line.contains("the broker closed the connection (FIN)"),
            "{stdout}"
        );
    }
    assert!(
        stderr.contains("2 frames checked: 0 errors, 2 warnings, 0 notes"),
        "{stderr}"
    );
    assert_eq!(status.code(), Some(0), "{stderr}");
}

/// Each frame's values without where it came from (frame numbers, times and
/// connection numbers differ between a recording and a selection of it).
fn values_only(frames: &[Value]) -> Vec<Value> {
    frames
        .iter()
        .map(|f| {
            let mut f = f.clone();
            f.as_object_mut().unwrap().remove("capture");
            f
        })
        .collect()
}

/// `--filter` decides what the proxy prints, checks and writes with
/// `--write-selected`; `--write-pcap` still records everything.
#[test]
#[ignore = "needs tansu and python clients"]
fn proxy_filter_selects_what_is_printed_checked_and_written() {
    require_all("the proxy's end-to-end test of --filter");
    let _one = serial();
    let dir = scratch("filter");
    let broker = Tansu::start(&dir, "127.0.0.1");
    let (all, selected) = (dir.join("all.pcapng"), dir.join("selected.pcapng"));
    let proxy = Proxy::start(
        &broker.addr(),
        &[
            "--filter",
            "api == DescribeLogDirs and conn == 0",
            "--format",
            "json",
            "--write-pcap",
            all.to_str().unwrap(),
            "--write-selected",
            selected.to_str().unwrap(),
        ],
    );
    let run = |port: u16| {
        let out = python(
            "../captures/diagnosis_clients.py",
            &["unsupported", &port.to_string()],
            Duration::from_secs(30),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(proxy.port);
    std::thread::sleep(Duration::from_millis(300));
    let (status, stdout, stderr) = proxy.stop();
    assert_eq!(status.code(), Some(0), "{stderr}");
    let printed = json_lines(&stdout);
    assert!(!printed.is_empty(), "{stderr}");
    assert!(
        printed.iter().all(|f| f["api_name"] == "DescribeLogDirs"),
        "{stdout}"
    );
    // The selection written reads back to what was printed; the recording
    // holds more, and the same selection of it gives the same frames.
    let read = |path: &Path, filter: Option<&str>| {
        let mut args = vec!["capture", path.to_str().unwrap(), "--json"];
        args.extend(filter.map(|f| ["--filter", f]).into_iter().flatten());
        json_lines(&String::from_utf8(kwire(&args).stdout).unwrap())
    };
    assert_eq!(values_only(&read(&selected, None)), values_only(&printed));
    assert!(read(&all, None).len() > printed.len());
    assert_eq!(
        values_only(&read(&all, Some("api == DescribeLogDirs and conn == 0"))),
        values_only(&printed)
    );
    // With --check, the findings about the frames selected: one unanswered
    // DescribeLogDirs request on each of the two connections.
    for (filter, warnings) in [
        ("api == DescribeLogDirs and conn == 0", 1),
        ("api == DescribeLogDirs", 2),
    ] {
        let proxy = Proxy::start(&broker.addr(), &["--check", "--filter", filter]);
        run(proxy.port);
        std::thread::sleep(Duration::from_millis(300));
        let (status, stdout, stderr) = proxy.stop();
        assert_eq!(status.code(), Some(0), "{stderr}");
        assert_eq!(
            stdout.matches("closed-unanswered").count(),
            warnings,
            "{filter}: {stdout}"
        );
        assert!(
            stderr.contains(&match warnings {
                1 => "1 warning,".to_string(),
                n => format!("{n} warnings"),
            }),
            "{filter}: {stderr}"
        );
    }
}
