//! `kwire inventory`: clients with their software, connections and API
//! versions, the brokers' advertised ranges, requests outside them, versions
//! a target release no longer serves (exit status 3), the filters, hostile
//! names and frames, and the shipped captures.

mod common;

use common::exchanges::{frame, TempCapture, Timeline};
use kwire::decode::Direction;
use serde_json::{json, Value};

/// The broker end of every synthetic connection (`tests/common/pcap_writer.rs`).
const BROKER: &str = "10.0.0.2:9092";

fn kwire(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
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

/// `kwire inventory FILE --format json ARGS…`, parsed; the status must be `status`.
fn inventory_json(file: &str, args: &[&str], status: i32) -> Value {
    let mut all = vec!["inventory", file, "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = kwire(&all);
    assert_eq!(code, status, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

fn client<'v>(inv: &'v Value, id: &str) -> &'v Value {
    inv["clients"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["client_id"] == id)
        .unwrap_or_else(|| panic!("no client {id} in {inv}"))
}

fn api<'v>(c: &'v Value, name: &str) -> &'v Value {
    c["apis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["api_name"] == name)
        .unwrap_or_else(|| panic!("no api {name} in {c}"))
}

fn api_names(c: &Value) -> Vec<&str> {
    c["apis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["api_name"].as_str().unwrap())
        .collect()
}

fn ids(inv: &Value) -> Vec<&str> {
    inv["clients"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["client_id"].as_str().unwrap())
        .collect()
}

/// The ranges the broker of [`two_clients`] advertises.
fn api_keys() -> Value {
    json!({"ErrorCode": 0, "ApiKeys": [
        {"ApiKey": 0, "MinVersion": 0, "MaxVersion": 11},
        {"ApiKey": 1, "MinVersion": 0, "MaxVersion": 12},
        {"ApiKey": 3, "MinVersion": 0, "MaxVersion": 9},
        {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3},
    ]})
}

/// Two clients of one broker:
/// - conn 0, `legacy-app` (legacy-lib 0.9): Produce v2 and Fetch v3 (which
///   4.0 no longer serves), Metadata v11 (above the advertised v0-9, though
///   every release serves it) and
///   DescribeCluster v0 (not advertised);
/// - conn 1, `modern-app` (modern-lib 2.0): ApiVersions v4 answered with
///   UNSUPPORTED_VERSION in a v0 body (no fault: a client starts with its
///   newest), then v3, Produce v9 and Metadata v9.
fn two_clients() -> Timeline {
    let mut t = Timeline::default();
    let legacy = |t: &mut Timeline, corr, api, v, req| {
        t.on(50000, "legacy-app").pair(corr, api, v, req, json!({}))
    };
    t.on(50000, "legacy-app").pair(
        1,
        "ApiVersions",
        3,
        json!({"ClientSoftwareName": "legacy-lib", "ClientSoftwareVersion": "0.9"}),
        api_keys(),
    );
    legacy(
        &mut t,
        2,
        "Produce",
        2,
        json!({"Acks": 1, "TimeoutMs": 1000, "TopicData": []}),
    );
    legacy(
        &mut t,
        3,
        "Fetch",
        3,
        json!({"ReplicaId": -1, "MaxWaitMs": 500, "MinBytes": 1, "MaxBytes": 1024, "Topics": []}),
    );
    legacy(&mut t, 4, "Metadata", 11, json!({"Topics": []}));
    legacy(&mut t, 5, "DescribeCluster", 0, json!({}));
    // A v0 body answering v4: the decoder falls back to v0, and an error response advertises nothing.
    t.send(
        50001,
        true,
        &frame(
            Direction::Request,
            "ApiVersions",
            4,
            1,
            "modern-app",
            json!({"ClientSoftwareName": "modern-lib", "ClientSoftwareVersion": "2.0"}),
        ),
    );
    t.send(
        50001,
        false,
        &frame(
            Direction::Response,
            "ApiVersions",
            0,
            1,
            "",
            json!({"ErrorCode": 35, "ApiKeys": [{"ApiKey": 18, "MinVersion": 0, "MaxVersion": 1}]}),
        ),
    );
    t.on(50001, "modern-app").pair(
        2,
        "ApiVersions",
        3,
        json!({"ClientSoftwareName": "modern-lib", "ClientSoftwareVersion": "2.0"}),
        api_keys(),
    );
    t.on(50001, "modern-app").pair(
        3,
        "Produce",
        9,
        json!({"Acks": -1, "TimeoutMs": 1000, "TopicData": []}),
        json!({}),
    );
    t.on(50001, "modern-app").pair(
        4,
        "Metadata",
        9,
        json!({"Topics": [{"Name": "orders"}]}),
        json!({}),
    );
    t
}

#[test]
fn clients_their_software_versions_and_what_the_broker_advertised() {
    let file = TempCapture::new("two", &two_clients().pcap());
    let inv = inventory_json(file.path(), &[], 0);
    let keys: Vec<&String> = inv.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["clients", "brokers", "target_release"]);
    assert_eq!(inv["target_release"], Value::Null);
    assert_eq!(ids(&inv), ["legacy-app", "modern-app"]);

    let legacy = client(&inv, "legacy-app");
    let keys: Vec<&String> = legacy.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "client_id",
            "software_name",
            "software_version",
            "conns",
            "apis"
        ]
    );
    assert_eq!(
        (
            &legacy["software_name"],
            &legacy["software_version"],
            &legacy["conns"]
        ),
        (&json!("legacy-lib"), &json!("0.9"), &json!([0]))
    );
    assert_eq!(
        api_names(legacy),
        [
            "Produce",
            "Fetch",
            "Metadata",
            "ApiVersions",
            "DescribeCluster"
        ]
    );
    let produce = api(legacy, "Produce");
    let keys: Vec<&String> = produce.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "api_key",
            "api_name",
            "versions",
            "requests",
            "outside_advertised",
            "unsupported_in_target"
        ]
    );
    assert_eq!(
        (
            &produce["api_key"],
            &produce["versions"],
            &produce["requests"]
        ),
        (&json!(0), &json!([2]), &json!(1))
    );
    assert_eq!(produce["outside_advertised"], json!([]));
    assert_eq!(produce["unsupported_in_target"], json!([]));
    // Above the advertised range, and an API the broker does not advertise.
    assert_eq!(
        api(legacy, "Metadata")["outside_advertised"],
        json!([{"version": 11, "broker": BROKER, "advertised": [0, 9]}])
    );
    assert_eq!(
        api(legacy, "DescribeCluster")["outside_advertised"],
        json!([{"version": 0, "broker": BROKER, "advertised": null}])
    );

    let modern = client(&inv, "modern-app");
    assert_eq!(
        (
            &modern["software_name"],
            &modern["software_version"],
            &modern["conns"]
        ),
        (&json!("modern-lib"), &json!("2.0"), &json!([1]))
    );
    assert_eq!(api_names(modern), ["Produce", "Metadata", "ApiVersions"]);
    let api_versions = api(modern, "ApiVersions");
    assert_eq!(
        (&api_versions["versions"], &api_versions["requests"]),
        (&json!([3, 4]), &json!(2))
    );
    // v4 is above the advertised v0-3, but a client starts with its newest ApiVersions.
    assert_eq!(api_versions["outside_advertised"], json!([]));

    // The error response (v0 body) advertised nothing: the ranges are the last good ones.
    assert_eq!(
        inv["brokers"],
        json!([{"address": BROKER, "advertised": {"0": [0, 11], "1": [0, 12], "3": [0, 9], "18": [0, 3]}}])
    );

    let (code, text, err) = kwire(&["inventory", file.path()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        text.starts_with("client \"legacy-app\"\n  software  legacy-lib 0.9\n  conns     0\n"),
        "{text}"
    );
    let line = |start: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(start))
            .unwrap_or_else(|| panic!("no {start} line in {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert_eq!(line("Produce"), "Produce v2 (broker serves v0-11)");
    assert_eq!(line("Metadata"), "Metadata v11 (broker serves v0-9)");
    assert_eq!(
        line("DescribeCluster"),
        "DescribeCluster v0 (broker does not advertise it)"
    );
    assert!(
        text.contains("    ! v11 is outside what 10.0.0.2:9092 advertised (v0-9)\n"),
        "{text}"
    );
    assert!(
        text.contains("    ! v0 sent to 10.0.0.2:9092, which does not advertise DescribeCluster\n"),
        "{text}"
    );
    assert!(text.contains("  10.0.0.2:9092  advertises 4 APIs:\n    Produce v0-11, Fetch v0-12, Metadata v0-9, ApiVersions v0-3\n"), "{text}");
    assert!(
        text.ends_with(
            "2 clients, 1 broker; 2 request versions outside what their broker advertised\n"
        ),
        "{text}"
    );
    assert!(!text.contains("not served"), "{text}");
}

#[test]
fn a_target_release_flags_what_it_no_longer_serves_and_exits_3() {
    let file = TempCapture::new("target", &two_clients().pcap());
    let inv = inventory_json(file.path(), &["--target-release", "4.0"], 3);
    assert_eq!(inv["target_release"], "4.0");
    let legacy = client(&inv, "legacy-app");
    assert_eq!(
        api(legacy, "Produce")["unsupported_in_target"],
        json!([{"version": 2, "target_serves": [[3, 12]]}])
    );
    assert_eq!(
        api(legacy, "Fetch")["unsupported_in_target"],
        json!([{"version": 3, "target_serves": [[4, 17]]}])
    );
    for name in ["Metadata", "ApiVersions", "DescribeCluster"] {
        assert_eq!(
            api(legacy, name)["unsupported_in_target"],
            json!([]),
            "{name}"
        );
    }
    let modern = client(&inv, "modern-app");
    for name in ["Produce", "Metadata", "ApiVersions"] {
        assert_eq!(
            api(modern, name)["unsupported_in_target"],
            json!([]),
            "{name}"
        );
    }

    let (code, text, err) = kwire(&["inventory", file.path(), "--target-release", "4.0"]);
    assert_eq!(code, 3, "{err}");
    assert!(text.contains("  Produce          v2   (broker serves v0-11)\n    ! v2 is not served by 4.0: move to v3-12\n"), "{text}");
    assert!(
        text.contains("    ! v3 is not served by 4.0: move to v4-17\n"),
        "{text}"
    );
    assert!(
        text.ends_with("; 2 API versions not served by 4.0\n"),
        "{text}"
    );
    assert_eq!(err, "kwire: 2 API versions used are not served by 4.0\n");

    // 3.9 still serves them all.
    let inv = inventory_json(file.path(), &["--target-release", "3.9"], 0);
    assert!(
        inv["clients"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["apis"].as_array().unwrap())
            .all(|a| a["unsupported_in_target"] == json!([])),
        "{inv}"
    );
    let (code, text, _) = kwire(&["inventory", file.path(), "--target-release", "3.9"]);
    assert_eq!(code, 0);
    assert!(
        text.ends_with("; 0 API versions not served by 3.9\n"),
        "{text}"
    );

    // Only a release of the built-in catalogue.
    let (code, out, err) = kwire(&["inventory", file.path(), "--target-release", "2.8"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.starts_with("kwire: unknown release \"2.8\"; known: 3.9, 4.0"),
        "{err}"
    );
}

#[test]
fn the_filters_select_exchanges_and_say_when_nothing_matches() {
    let file = TempCapture::new("filters", &two_clients().pcap());
    let inv = inventory_json(file.path(), &["--client-id", "modern-app"], 0);
    assert_eq!(ids(&inv), ["modern-app"]);
    // Flags count only what is selected.
    inventory_json(
        file.path(),
        &["--client-id", "modern-app", "--target-release", "4.0"],
        0,
    );
    let inv = inventory_json(file.path(), &["--api", "Produce"], 0);
    assert_eq!(ids(&inv), ["legacy-app", "modern-app"]);
    assert!(
        inv["clients"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| api_names(c) == ["Produce"]),
        "{inv}"
    );
    // The software and the ranges are read whatever the selection.
    assert_eq!(client(&inv, "legacy-app")["software_name"], "legacy-lib");
    assert_eq!(inv["brokers"][0]["advertised"]["0"], json!([0, 11]));
    let inv = inventory_json(file.path(), &["--conn", "0", "--target-release", "4.0"], 3);
    assert_eq!(ids(&inv), ["legacy-app"]);
    let inv = inventory_json(
        file.path(),
        &["--api", "Fetch", "--target-release", "4.0"],
        3,
    );
    assert_eq!(api_names(client(&inv, "legacy-app")), ["Fetch"]);
    // The ApiVersions v4 answered with UNSUPPORTED_VERSION.
    let inv = inventory_json(
        file.path(),
        &["--min-latency", "0", "--error", "UNSUPPORTED_VERSION"],
        0,
    );
    assert_eq!(ids(&inv), ["modern-app"]);
    assert_eq!(
        api(client(&inv, "modern-app"), "ApiVersions")["versions"],
        json!([4])
    );
    // The same read from the v0 body's own field, with no fact asked.
    let inv = inventory_json(
        file.path(),
        &["--min-latency", "0", "--filter", "ErrorCode == 35"],
        0,
    );
    assert_eq!(ids(&inv), ["modern-app"]);
    let inv = inventory_json(file.path(), &["--topic", "orders"], 0);
    assert_eq!(ids(&inv), ["modern-app"]);
    assert_eq!(api_names(client(&inv, "modern-app")), ["Metadata"]);
    // Every answer took 1 ms.
    let inv = inventory_json(file.path(), &["--min-latency", "1"], 0);
    assert_eq!(ids(&inv), ["legacy-app", "modern-app"]);
    inventory_json(file.path(), &["--min-latency", "2"], 1);
    let inv = inventory_json(file.path(), &["--error", "NOT_COORDINATOR"], 1);
    assert_eq!((&inv["clients"], &inv["brokers"]), (&json!([]), &json!([])));

    let (code, out, err) = kwire(&["inventory", file.path(), "--client-id", "nobody"]);
    assert_eq!(code, 1);
    assert!(
        out.ends_with(
            "0 clients, 0 brokers; 0 request versions outside what their broker advertised\n"
        ),
        "{out}"
    );
    assert_eq!(err, "kwire: no exchange matches --client-id \"nobody\"\n");
    let (code, _, err) = kwire(&["inventory", file.path(), "--api", "NoSuchApi"]);
    assert_eq!(code, 1);
    assert!(err.contains("unknown API"), "{err}");
}

#[test]
fn hostile_names_are_escaped_and_damaged_frames_are_said() {
    let mut t = Timeline::default();
    let evil = "evil\u{1b}[2J\u{7}";
    t.on(50000, evil).pair(
        1,
        "ApiVersions",
        3,
        json!({"ClientSoftwareName": "lib\u{1b}]0;x\u{7}", "ClientSoftwareVersion": "1\r\n2"}),
        api_keys(),
    );
    // An ApiVersions response whose body does not decode at v3 or v0.
    t.send(
        50001,
        true,
        &frame(
            Direction::Request,
            "ApiVersions",
            3,
            1,
            "cut",
            json!({"ClientSoftwareName": "a", "ClientSoftwareVersion": "b"}),
        ),
    );
    t.send(50001, false, &[0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0xff]);
    let file = TempCapture::new("hostile", &t.pcap());
    let (code, text, err) = kwire(&["inventory", file.path()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        !text.chars().any(|c| c.is_control() && c != '\n'),
        "{text:?}"
    );
    assert!(err.contains("did not decode completely"), "{err}");
    assert!(
        text.contains(
            "client \"evil\\u{1b}[2J\\u{7}\"\n  software  lib\\u{1b}]0;x\\u{7} 1\\u{d}\\u{a}2\n"
        ),
        "{text}"
    );
    let inv = inventory_json(file.path(), &[], 2);
    assert_eq!(client(&inv, evil)["software_name"], "lib\u{1b}]0;x\u{7}");
    let (_, out, _) = kwire(&["inventory", file.path(), "--format", "json"]);
    assert!(
        !out.contains('\u{1b}'),
        "JSON escapes control characters: {out:?}"
    );

    // Not a capture at all.
    let junk = TempCapture::new("junk", b"\xd4\xc3\xb2\xa1 not really a pcap");
    let (code, _, err) = kwire(&["inventory", junk.path()]);
    assert_eq!(code, 1, "{err}");
}

/// The client ids of a shipped capture's inventory, and that 4.3 serves everything they used.
fn shipped(name: &str, args: &[&str]) -> Value {
    let path = format!("{}/samples/captures/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut all = args.to_vec();
    all.extend(["--target-release", "4.3"]);
    let inv = inventory_json(&path, &all, 0);
    assert!(
        inv["clients"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|c| c["apis"].as_array().unwrap())
            .all(
                |a| a["unsupported_in_target"] == json!([]) && a["outside_advertised"] == json!([])
            ),
        "{name}: {inv}"
    );
    assert_eq!(inv["brokers"].as_array().unwrap().len(), 1, "{name}");
    assert_eq!(inv["brokers"][0]["address"], "127.0.0.1:19092", "{name}");
    inv
}

#[test]
fn the_shipped_captures() {
    let inv = shipped("confluent-kafka.pcap", &[]);
    assert_eq!(
        ids(&inv),
        [
            "kwire-admin",
            "kwire-consumer",
            "kwire-producer-gzip",
            "kwire-producer-lz4",
            "kwire-producer-none",
            "kwire-producer-snappy",
            "kwire-producer-zstd"
        ]
    );
    for c in inv["clients"].as_array().unwrap() {
        assert_eq!(
            (&c["software_name"], &c["software_version"]),
            (
                &json!("confluent-kafka-python"),
                &json!("2.16.1-rdkafka-2.16.0")
            )
        );
    }
    let produce = api(client(&inv, "kwire-producer-gzip"), "Produce");
    assert_eq!(produce["versions"], json!([10]));
    assert_eq!(inv["brokers"][0]["advertised"]["0"], json!([0, 11]));
    assert_eq!(client(&inv, "kwire-admin")["conns"], json!([0, 1]));

    let inv = shipped("kafka-python.pcap", &["--port", "19092"]);
    assert_eq!(
        ids(&inv),
        ["kwire-admin", "kwire-consumer", "kwire-producer"]
    );
    for c in inv["clients"].as_array().unwrap() {
        assert_eq!(
            (&c["software_name"], &c["software_version"]),
            (&json!("kafka-python"), &json!("3.0.12"))
        );
    }
    assert_eq!(
        api(client(&inv, "kwire-producer"), "Produce")["versions"],
        json!([9])
    );

    let inv = shipped("kcat.pcap", &["--port", "19092"]);
    assert_eq!(ids(&inv), ["rdkafka"]);
    let kcat = client(&inv, "rdkafka");
    assert_eq!(
        (&kcat["software_name"], &kcat["software_version"]),
        (&json!("librdkafka"), &json!("2.0.2"))
    );
    assert_eq!(kcat["conns"], json!([0, 1, 2, 3, 4, 5, 6, 7, 8]));
    assert_eq!(api_names(kcat), ["ApiVersions"]);
    assert_eq!(api(kcat, "ApiVersions")["requests"], 9);

    let (code, text, err) = kwire(&["inventory", "samples/captures/kafka-python.pcap"]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("client \"kwire-producer\"\n  software  kafka-python 3.0.12\n  conns     2-5\n  Produce         v9   (broker serves v0-11)\n"), "{text}");
}

/// Connections are written as ranges, and counts agree with their nouns.
#[test]
fn conns_as_ranges_and_one_flagged_version_in_the_singular() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/captures/diagnosis/");
    let (status, text, err) = kwire(&["inventory", &format!("{dir}churn.pcap")]);
    assert_eq!(status, 0, "{err}");
    assert!(
        text.contains(
            "client \"per-message-producer\"\n  software  kafka-python 3.0.12\n  conns     2-25\n"
        ),
        "{text}"
    );
    let (status, text, err) = kwire(&[
        "inventory",
        &format!("{dir}old-librdkafka.pcap"),
        "--target-release",
        "4.0",
    ]);
    assert_eq!(status, 3, "{err}");
    assert!(
        text.ends_with("; 1 API version not served by 4.0\n"),
        "{text}"
    );
    assert_eq!(err, "kwire: 1 API version used is not served by 4.0\n");
}
