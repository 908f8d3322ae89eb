//! SASL tokens after SaslHandshake v0: size-prefixed bytes without a Kafka
//! header, told apart by the capture layer and shown as tokens everywhere a
//! frame is shown, never decoded as requests; stats and inventory leave them out.

mod common;

use common::exchanges::{frame, TempCapture, Timeline};
use kwire::capture::{for_each_frame, CapturedFrame};
use kwire::decode::{Direction, FrameKind};
use kwire::schema::Catalogue;
use serde_json::{json, Value};

const PORT: u16 = 50000;

/// A token as either side sends it: int32 size, then the bytes.
fn token(bytes: &[u8]) -> Vec<u8> {
    let mut t = (bytes.len() as i32).to_be_bytes().to_vec();
    t.extend_from_slice(bytes);
    t
}

/// SaslHandshake at `version` naming `mechanism`, answered with `error`.
fn handshake(t: &mut Timeline, corr: i32, version: i16, mechanism: &str, error: i16) {
    let resp = json!({"ErrorCode": error, "Mechanisms": ["PLAIN", "SCRAM-SHA-256"]});
    t.on(PORT, "sarama").pair(
        corr,
        "SaslHandshake",
        version,
        json!({"Mechanism": mechanism}),
        resp,
    );
}

/// What follows authentication: ApiVersions and Metadata.
fn after_auth(t: &mut Timeline, corr: i32) {
    let versions = json!({"ErrorCode": 0, "ApiKeys": [{"ApiKey": 3, "MinVersion": 0, "MaxVersion": 12}, {"ApiKey": 17, "MinVersion": 0, "MaxVersion": 1}, {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 4}], "ThrottleTimeMs": 0});
    t.on(PORT, "sarama").pair(
        corr,
        "ApiVersions",
        3,
        json!({"ClientSoftwareName": "sarama", "ClientSoftwareVersion": "1.43"}),
        versions,
    );
    let metadata = json!({"Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": []});
    t.on(PORT, "sarama").pair(corr + 1, "Metadata", 12, json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}), metadata);
}

fn plain() -> Timeline {
    let mut t = Timeline::default();
    handshake(&mut t, 1, 0, "PLAIN", 0);
    t.send(PORT, true, &token(b"\0alice\0s3cret"));
    t.send(PORT, false, &token(b""));
    after_auth(&mut t, 2);
    t
}

fn scram() -> Timeline {
    let mut t = Timeline::default();
    handshake(&mut t, 1, 0, "SCRAM-SHA-256", 0);
    t.send(PORT, true, &token(b"n,,n=alice,r=rOprNGfwEbeRWgbNEkqO"));
    t.send(PORT, false, &token(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"));
    t.send(PORT, true, &token(b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="));
    t.send(
        PORT,
        false,
        &token(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="),
    );
    after_auth(&mut t, 2);
    t
}

fn kwire(cmd: &str, file: &TempCapture, args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .arg(cmd)
        .arg(file.path())
        .args(args)
        .output()
        .unwrap();
    let mut stdout = String::from_utf8(out.stdout).unwrap();
    if args.contains(&"--list") {
        // These tests are about frames and tokens: connection rows aside.
        stdout = common::frame_rows(&stdout)
            .iter()
            .map(|l| format!("{l}\n"))
            .collect();
    }
    (
        out.status.code(),
        stdout,
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn frames_of(capture: &[u8]) -> Vec<CapturedFrame> {
    let mut frames = Vec::new();
    for_each_frame(Catalogue::builtin(), capture, None, |f| {
        frames.push(f);
        true
    })
    .unwrap();
    frames
}

/// The listing's rows (not the connection's name line) after their timestamp.
fn listed(out: &str) -> Vec<String> {
    common::frame_rows(out)
        .into_iter()
        .map(|l| l.split_once('Z').map_or(l, |(_, rest)| rest).to_string())
        .collect()
}

/// What a row says after `conn 0 →` or `conn 0 ←`.
fn after_arrow(row: &str) -> &str {
    row.split_once(" conn 0 ")
        .and_then(|(_, w)| w.split_once(' '))
        .map_or("", |(_, w)| w)
}

#[test]
fn plain_tokens_are_listed_decoded_and_written_as_tokens() {
    let t = plain();
    let file = TempCapture::new("sasl-plain", &t.pcap());
    let (status, out, err) = kwire("capture", &file, &["--list"]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    let client = "conn 0 →";
    let broker = "conn 0 ←";
    assert_eq!(
        listed(&out),
        [
            format!(" {client} SaslHandshake v0 corr=1 27B client_id=\"sarama\""),
            format!(" {broker} SaslHandshake v0 corr=1 36B 1.0 ms ok"),
            format!(" {client} SASL token (PLAIN) 17B auth_bytes=13B"),
            format!(" {broker} SASL token (PLAIN) 4B auth_bytes=0B"),
            format!(" {client} ApiVersions v3 corr=2 34B client_id=\"sarama\""),
            format!(" {broker} ApiVersions v3 corr=2 37B 1.0 ms ok"),
            format!(" {client} Metadata v12 corr=3 25B client_id=\"sarama\""),
            format!(" {broker} Metadata v12 corr=3 21B 1.0 ms ok"),
        ]
    );
    assert!(
        out.lines()
            .nth(2)
            .is_some_and(|l| l.starts_with("    2 2023-11-14T22:13:20.003000Z")),
        "{out}"
    );
    // The token's bytes are not shown in the listing.
    assert!(!out.contains("alice") && !out.contains("s3cret"), "{out}");

    // The capture layer's frames: tokens have no api, version or correlation id.
    let frames = frames_of(&t.pcap());
    let kind = |f: &CapturedFrame| {
        (
            f.direction,
            f.kind.sasl_mechanism().map(str::to_string),
            f.api_key,
            f.correlation_id,
        )
    };
    assert_eq!(
        kind(&frames[2]),
        (Direction::Request, Some("PLAIN".into()), None, None)
    );
    assert_eq!(
        kind(&frames[3]),
        (Direction::Response, Some("PLAIN".into()), None, None)
    );
    assert_eq!(frames[4].kind, FrameKind::Kafka);
    assert_eq!(
        (frames[5].api_key, frames[5].correlation_id),
        (Some(18), Some(2)),
        "the ApiVersions response is paired after the tokens"
    );

    // JSON: a kind of its own, the mechanism, the bytes as hex; no decode error anywhere.
    let (status, out, err) = kwire("capture", &file, &["--json"]);
    assert_eq!((status, err.as_str()), (Some(0), ""));
    let objects: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "request",
            "response",
            "sasl_token",
            "sasl_token",
            "request",
            "response",
            "request",
            "response"
        ]
    );
    let mut client_token = objects[2].clone();
    client_token.as_object_mut().unwrap().remove("capture");
    // The password is masked (its length kept) unless --show-secrets.
    assert_eq!(
        client_token,
        json!({"kind": "sasl_token", "direction": "request", "mechanism": "PLAIN", "auth_bytes": hex::encode(b"\0alice\0******"), "_redacted": ["auth_bytes"]})
    );
    assert_eq!(objects[3]["direction"], "response");
    assert_eq!(objects[3]["auth_bytes"], "");
    assert!(objects.iter().all(|o| o.get("error").is_none()), "{out}");

    // The tree: the size prefix and the bytes, with offsets; tree JSON names the kind.
    let (status, out, _) = kwire("capture", &file, &["--frame", "2"]);
    assert_eq!(status, Some(0));
    assert!(
        out.contains("SaslToken message (PLAIN) [0x0000, 17B]"),
        "{out}"
    );
    assert!(out.contains("+-- size int32 = 13 [0x0000, 4B]"), "{out}");
    assert!(out.contains("+-- authBytes bytes = 0x00616c696365002a2a2a2a2a2a (PLAIN client-response; holds redacted bytes) [0x0004, 13B]"), "{out}");
    assert!(out.contains("    +-- password string = \"<redacted, 6 bytes>\" (redacted: --show-secrets shows it) [0x000b, 6B]"), "{out}");
    let (status, out, _) = kwire("capture", &file, &["--frame", "3", "--format", "tree-json"]);
    assert_eq!(status, Some(0));
    let tree: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        (
            tree["kind"].as_str(),
            tree["direction"].as_str(),
            tree["mechanism"].as_str()
        ),
        (Some("sasl_token"), Some("response"), Some("PLAIN"))
    );
    assert_eq!(tree["tree"]["children"][1]["name"], "authBytes");
    assert_eq!(
        (
            tree["tree"]["children"][1]["offset"].as_u64(),
            tree["tree"]["children"][1]["length"].as_u64()
        ),
        (Some(4), Some(0))
    );

    // `kwire decode` of the capture goes the same way.
    let (status, out, _) = kwire("decode", &file, &["--json"]);
    assert_eq!(status, Some(0));
    assert_eq!(
        out.lines()
            .filter(|l| l.contains("\"kind\":\"sasl_token\""))
            .count(),
        2
    );
}

#[test]
fn stats_and_inventory_leave_tokens_out() {
    let file = TempCapture::new("sasl-stats", &plain().pcap());
    let (status, out, err) = kwire("stats", &file, &["--format", "json"]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    let stats: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        (
            stats["frames"].as_u64(),
            stats["pairs"].as_u64(),
            stats["unanswered_requests"].as_u64(),
            stats["unmatched_responses"].as_u64()
        ),
        (Some(6), Some(3), Some(0), Some(0))
    );
    let apis: Vec<i64> = stats["by_api"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["api_key"].as_i64().unwrap())
        .collect();
    assert_eq!(apis.len(), 3);
    assert!(apis.iter().all(|k| [3, 17, 18].contains(k)), "{apis:?}");
    let (status, out, err) = kwire("inventory", &file, &["--format", "json"]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    let inventory: Value = serde_json::from_str(&out).unwrap();
    let apis: Vec<i64> = inventory["clients"][0]["apis"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["api_key"].as_i64().unwrap())
        .collect();
    assert_eq!(apis.len(), 3, "{out}");
    assert!(apis.iter().all(|k| [3, 17, 18].contains(k)), "{apis:?}");
}

#[test]
fn scram_takes_two_rounds_of_tokens() {
    let file = TempCapture::new("sasl-scram", &scram().pcap());
    let (status, out, err) = kwire("capture", &file, &["--list"]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    let lines = listed(&out);
    let what: Vec<&str> = lines.iter().map(|l| after_arrow(l)).collect();
    assert_eq!(
        what,
        [
            "SaslHandshake v0 corr=1 35B client_id=\"sarama\"",
            "SaslHandshake v0 corr=1 36B 1.0 ms ok",
            "SASL token (SCRAM-SHA-256) 37B auth_bytes=33B",
            "SASL token (SCRAM-SHA-256) 90B auth_bytes=86B",
            "SASL token (SCRAM-SHA-256) 110B auth_bytes=106B",
            "SASL token (SCRAM-SHA-256) 50B auth_bytes=46B",
            "ApiVersions v3 corr=2 34B client_id=\"sarama\"",
            "ApiVersions v3 corr=2 37B 1.0 ms ok",
            "Metadata v12 corr=3 25B client_id=\"sarama\"",
            "Metadata v12 corr=3 21B 1.0 ms ok",
        ]
    );
    let (status, out, _) = kwire("capture", &file, &["--json"]);
    assert_eq!(status, Some(0));
    let tokens: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|o| o["kind"] == "sasl_token")
        .collect();
    let directions: Vec<&str> = tokens
        .iter()
        .map(|o| o["direction"].as_str().unwrap())
        .collect();
    assert_eq!(directions, ["request", "response", "request", "response"]);
    assert!(tokens.iter().all(|o| o["mechanism"] == "SCRAM-SHA-256"));
}

#[test]
fn a_refused_handshake_or_a_newer_one_keeps_kafka_frames() {
    // UNSUPPORTED_SASL_MECHANISM: no tokens should follow, but a client that
    // sends its token anyway sends a credential: what is not a request is
    // taken for the token (never decoded, masked), and a request ends the watch.
    let mut t = Timeline::default();
    handshake(&mut t, 1, 0, "GSSAPI", 33);
    t.send(PORT, true, &token(b"\0alice\0s3cret"));
    after_auth(&mut t, 2);
    let file = TempCapture::new("sasl-refused", &t.pcap());
    let (status, out, _) = kwire("capture", &file, &["--list"]);
    assert_eq!(status, Some(0), "{out}");
    let lines = common::frame_rows(&out);
    assert!(
        lines[1].ends_with("errors: UNSUPPORTED_SASL_MECHANISM"),
        "{out}"
    );
    assert!(lines[2].contains("SASL token (GSSAPI)"), "{out}");
    assert!(lines[3].contains("ApiVersions v3 corr=2"), "{out}");
    let frames = frames_of(&t.pcap());
    assert_eq!(
        frames.iter().filter(|f| f.kind != FrameKind::Kafka).count(),
        1
    );

    // SaslHandshake v1: SaslAuthenticate requests carry the tokens, as Kafka frames.
    let mut t = Timeline::default();
    handshake(&mut t, 1, 1, "PLAIN", 0);
    let auth =
        json!({"ErrorCode": 0, "ErrorMessage": null, "AuthBytes": "", "SessionLifetimeMs": 0});
    t.on(PORT, "java").pair(
        2,
        "SaslAuthenticate",
        2,
        json!({"AuthBytes": hex::encode(b"\0alice\0s3cret")}),
        auth,
    );
    after_auth(&mut t, 3);
    let file = TempCapture::new("sasl-v1", &t.pcap());
    let (status, out, _) = kwire("capture", &file, &["--list"]);
    assert_eq!(status, Some(0), "{out}");
    assert!(
        !out.contains("SASL token") && out.contains("SaslAuthenticate v2 corr=2"),
        "{out}"
    );
    let frames = frames_of(&t.pcap());
    assert!(frames.iter().all(|f| f.kind == FrameKind::Kafka));
}

#[test]
fn a_token_that_looks_like_a_request_header_is_still_a_token_unless_it_decodes() {
    // The client's token starts like a Metadata v12 header (api key 3): it is a
    // token all the same, since the whole frame does not decode as a request.
    let mut t = Timeline::default();
    handshake(&mut t, 1, 0, "PLAIN", 0);
    let mut fake = frame(
        Direction::Request,
        "Metadata",
        12,
        9,
        "x",
        json!({"Topics": null, "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}),
    );
    fake.extend_from_slice(b"trailing");
    let size = (fake.len() - 4) as i32;
    fake[..4].copy_from_slice(&size.to_be_bytes());
    t.send(PORT, true, &fake);
    t.send(PORT, false, &token(b""));
    after_auth(&mut t, 2);
    let frames = frames_of(&t.pcap());
    let tokens: Vec<usize> = frames
        .iter()
        .filter(|f| f.kind.sasl_mechanism().is_some())
        .map(|f| f.index)
        .collect();
    assert_eq!(tokens, [2, 3]);
    assert_eq!(frames.len(), 8);
}

#[test]
fn large_tokens_and_the_large_request_after_them_are_listed() {
    // Listings cut large frames to their header; in token mode nothing is cut,
    // so a large token is a token and the large request after it a request.
    let cat = Catalogue::builtin();
    let mut t = Timeline::default();
    handshake(&mut t, 1, 0, "GSSAPI", 0);
    t.send(PORT, true, &token(&[0x60; 20_000]));
    t.send(PORT, false, &token(&[0x05; 30]));
    t.send(PORT, true, &token(b""));
    t.send(PORT, false, &token(&[0x05; 20_000]));
    let value = vec![b'v'; 20_000];
    let records = common::batches::batch(
        0,
        0,
        &[common::batches::Rec {
            key: None,
            value: Some(value),
            headers: Vec::new(),
            timestamp_delta: 0,
        }],
    );
    t.send(
        PORT,
        true,
        &common::batches::produce(cat, "orders", &records),
    );
    let file = TempCapture::new("sasl-large", &t.pcap());
    let (status, out, err) = kwire("capture", &file, &["--list"]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    let what: Vec<&str> = common::frame_rows(&out)
        .into_iter()
        .map(after_arrow)
        .collect();
    assert_eq!(
        what[2..6],
        [
            "SASL token (GSSAPI) 20004B auth_bytes=20000B",
            "SASL token (GSSAPI) 34B auth_bytes=30B",
            "SASL token (GSSAPI) 4B auth_bytes=0B",
            "SASL token (GSSAPI) 20004B auth_bytes=20000B"
        ]
    );
    assert!(what[6].starts_with("Produce v9 corr="), "{out}");
}

#[test]
fn a_hostile_mechanism_name_is_escaped_and_cut() {
    let mechanism = format!("\u{1b}[31mEVIL\u{202e}{}", "X".repeat(100));
    let mut t = Timeline::default();
    handshake(&mut t, 1, 0, &mechanism, 0);
    t.send(PORT, true, &token(b"\x1b[2Jtoken"));
    t.send(PORT, false, &token(b""));
    let file = TempCapture::new("sasl-hostile", &t.pcap());
    for args in [
        &["--list"][..],
        &["--frame", "2"],
        &["--json"],
        &["--frame", "2", "--format", "tree-json"],
    ] {
        let (status, out, _) = kwire("capture", &file, args);
        assert_eq!(status, Some(0), "{args:?}: {out}");
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{202e}'),
            "{args:?}: {out}"
        );
        // The handshake shows what it sent; every token shows the name cut.
        let tokens: Vec<&str> = out
            .lines()
            .filter(|l| !l.contains("corr=1") && !l.contains("\"CorrelationId\":1"))
            .collect();
        assert!(
            !tokens.is_empty() && tokens.iter().all(|l| !l.contains(&"X".repeat(60))),
            "{args:?}: the name is cut: {out}"
        );
    }
    // The listing cuts the name itself; `--wide` shows the line whole.
    let (_, out, _) = kwire("capture", &file, &["--list", "--wide"]);
    assert!(
        out.contains("SASL token (\\u{1b}[31mEVIL\\u{202e}XXX"),
        "{out}"
    );
    assert!(
        common::frame_rows(&out)
            .get(2)
            .is_some_and(|l| l.ends_with("…) 13B auth_bytes=9B")),
        "{out}"
    );
}

/// A capture begun after the client's PLAIN token: the broker's empty
/// answer (a frame with nothing after its size) cannot be a Kafka response,
/// which starts with a correlation id. It is a token, not an unmatched
/// response; so too while the handshake's answer is awaited.
#[test]
fn the_brokers_empty_answer_is_a_token_without_the_handshake() {
    let mut t = Timeline::default();
    t.send(PORT, false, &token(b""));
    after_auth(&mut t, 2);
    let file = TempCapture::new("sasl-empty-answer", &t.pcap());
    let (status, out, err) = kwire("capture", &file, &["--list"]);
    assert_eq!((status, err.as_str()), (Some(0), ""), "{out}");
    let rows = listed(&out);
    assert_eq!(
        after_arrow(&rows[0]),
        "SASL token (an empty answer, by its shape) 4B auth_bytes=0B",
        "{out}"
    );
    assert_eq!(rows.len(), 5, "{out}");
    let (status, out, _) = kwire("check", &file, &[]);
    assert_eq!(status, Some(0), "{out}");
    assert!(!out.contains("unmatched"), "{out}");
    let (_, out, _) = kwire("stats", &file, &["--format", "json"]);
    let stats: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(stats["unmatched_responses"], 0, "{out}");

    // The handshake's answer lost: the empty answer is a token of the
    // mechanism the handshake named.
    let mut t = Timeline::default();
    let hs = common::exchanges::frame(
        Direction::Request,
        "SaslHandshake",
        0,
        1,
        "sarama",
        json!({"Mechanism": "PLAIN"}),
    );
    t.send(PORT, true, &hs);
    t.send(PORT, false, &token(b""));
    let file = TempCapture::new("sasl-empty-awaited", &t.pcap());
    let (_, out, _) = kwire("capture", &file, &["--list"]);
    let rows = listed(&out);
    assert_eq!(
        after_arrow(&rows[1]),
        "SASL token (PLAIN) 4B auth_bytes=0B",
        "{out}"
    );
}
