//! TLS in captures, on real traffic recorded here by
//! scripts/record-tls-captures.sh: kafka-python over TLS 1.2 and 1.3 (six
//! cipher suites) and openssl s_client with a KeyUpdate, through stunnel in
//! front of tansu, recorded on both sides of stunnel. Decrypted with the key
//! log, or with the keys in a Decryption Secrets Block, every capture decodes
//! to exactly the frames of the same traffic in clear; without keys each
//! connection is one TLS note; a wrong key, a missing key and a truncated
//! record each give their note and lose nothing else.

mod common;

use common::pcap_writer::{conversation, pcap, Link, Seg};
use kwire::capture::tls::synth::Synth;
use kwire::capture::tls::{KeyLog, TlsEvent, TlsProblem};
use kwire::capture::{for_each_captured, CaptureOptions, Captured};
use kwire::decode::Direction;
use kwire::schema::Catalogue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

const SUITES: &[(&str, &str, &str)] = &[
    (
        "tls12-aes128gcm",
        "TLS 1.2",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
    ),
    (
        "tls12-aes256gcm",
        "TLS 1.2",
        "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
    ),
    (
        "tls12-chacha20",
        "TLS 1.2",
        "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
    ),
    ("tls13-aes128gcm", "TLS 1.3", "TLS_AES_128_GCM_SHA256"),
    ("tls13-aes256gcm", "TLS 1.3", "TLS_AES_256_GCM_SHA384"),
    ("tls13-chacha20", "TLS 1.3", "TLS_CHACHA20_POLY1305_SHA256"),
    ("tls13-keyupdate", "TLS 1.3", "TLS_AES_128_GCM_SHA256"),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/captures/tls")
}

fn file(name: &str) -> String {
    dir().join(name).display().to_string()
}

fn kwire(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `capture --json`: each connection's frames (without where they came
/// from), and the other objects (TLS notes, skip notes).
struct Decoded {
    frames: BTreeMap<u64, Vec<Value>>,
    notes: Vec<Value>,
    status: i32,
    stderr: String,
}

fn decoded(args: &[&str]) -> Decoded {
    let (status, out, stderr) = kwire(args);
    let mut frames: BTreeMap<u64, Vec<Value>> = BTreeMap::new();
    let mut notes = Vec::new();
    for line in out.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        match v.as_object_mut().and_then(|o| o.remove("capture")) {
            Some(c) => frames
                .entry(c["conn"].as_u64().unwrap())
                .or_default()
                .push(v),
            None => notes.push(v),
        }
    }
    Decoded {
        frames,
        notes,
        status,
        stderr,
    }
}

fn frame_count(d: &Decoded) -> usize {
    d.frames.values().map(Vec::len).sum()
}

fn kinds(d: &Decoded, kind: &str) -> Vec<Value> {
    d.notes
        .iter()
        .filter(|n| n["kind"] == kind)
        .cloned()
        .collect()
}

#[test]
fn decrypted_with_the_key_log_or_the_capture_s_secrets_it_is_the_clear_traffic() {
    for (name, version, suite) in SUITES {
        let clear = decoded(&["capture", &file(&format!("{name}-clear.pcap")), "--json"]);
        assert_eq!(clear.status, 0, "{name}: {}", clear.stderr);
        assert!(frame_count(&clear) >= 4, "{name}");
        let keylog = file(&format!("{name}.keylog"));
        for (how, d) in [
            (
                "key log",
                decoded(&[
                    "capture",
                    &file(&format!("{name}.pcap")),
                    "--json",
                    "--tls-keylog",
                    &keylog,
                ]),
            ),
            (
                "DSB",
                decoded(&["capture", &file(&format!("{name}-dsb.pcapng")), "--json"]),
            ),
        ] {
            assert_eq!(d.status, 0, "{name} {how}: {}", d.stderr);
            assert!(
                d.frames == clear.frames,
                "{name} {how}: the decrypted frames are not the clear traffic's"
            );
            let sessions = kinds(&d, "tls");
            assert_eq!(
                sessions.len(),
                d.frames.len(),
                "{name} {how}: a TLS note per connection"
            );
            assert_eq!(
                d.notes.len(),
                sessions.len(),
                "{name} {how}: nothing but the sessions: {:?}",
                d.notes
            );
            for s in &sessions {
                assert_eq!(
                    (
                        s["version"].as_str(),
                        s["cipher_suite"].as_str(),
                        &s["decrypted"]
                    ),
                    (Some(*version), Some(*suite), &Value::Bool(true)),
                    "{name} {how}"
                );
                let source = if how == "DSB" { "capture" } else { "key_log" };
                assert_eq!(s["key_source"], source);
                assert!(s["decrypted_bytes"]["request"].as_u64().unwrap() > 0);
                assert_eq!(
                    s["stopped"],
                    serde_json::json!({"request": null, "response": null})
                );
            }
        }
    }
}

#[test]
fn without_keys_each_connection_is_one_line_saying_what_was_seen() {
    for (name, version, suite) in SUITES {
        let (status, out, err) = kwire(&[
            "capture",
            &file(&format!("{name}.pcap")),
            "--list",
            "--wide",
        ]);
        assert_eq!(status, 2, "{name}: {err}");
        let clear = decoded(&["capture", &file(&format!("{name}-clear.pcap")), "--json"]);
        let lines: Vec<&str> = common::frame_rows(&out);
        assert_eq!(
            lines.len(),
            clear.frames.len(),
            "{name}: one line per connection, no frames:\n{out}"
        );
        for line in &lines {
            assert!(line.starts_with("  tls "), "{line}");
            assert!(line.contains(&format!("{version} {suite}")), "{line}");
            assert!(
                line.contains("app_data ")
                    && line.contains("not decrypted: no keys (give --tls-keylog)"),
                "{line}"
            );
        }
        if name.starts_with("tls1") && *name != "tls13-keyupdate" {
            assert!(
                lines.iter().all(|l| l.contains("sni=\"localhost\"")),
                "{name}"
            );
        }
        let said = match lines.len() {
            1 => "1 TLS connection was not decrypted".to_string(),
            n => format!("{n} TLS connections were not decrypted"),
        };
        assert!(
            err.contains(&said) && err.contains("--tls-keylog FILE"),
            "{err}"
        );
        // JSON: an object of its own kind per connection.
        let d = decoded(&["capture", &file(&format!("{name}.pcap")), "--json"]);
        assert_eq!(frame_count(&d), 0);
        for s in kinds(&d, "tls") {
            assert_eq!(
                (&s["decrypted"], &s["not_decrypted"]["reason"]),
                (&Value::Bool(false), &Value::from("no_keys"))
            );
            assert!(
                s["application_data_bytes"]["request"].as_u64().unwrap() > 0
                    && s["application_data_bytes"]["response"].as_u64().unwrap() > 0
            );
            assert_eq!(s["client_random"].as_str().map(str::len), Some(64));
        }
    }
}

#[test]
fn stats_inventory_records_and_check_count_tls_connections() {
    let name = "tls13-aes256gcm";
    let tls = file(&format!("{name}.pcap"));
    let clear = file(&format!("{name}-clear.pcap"));
    let keylog = file(&format!("{name}.keylog"));
    // Without keys: said, with the option to use, and exit status 2.
    for cmd in ["stats", "inventory", "records"] {
        let (status, _, err) = kwire(&[cmd, &tls]);
        assert_eq!(status, 2, "{cmd}: {err}");
        assert!(
            err.contains("6 TLS connections were not decrypted, so not decoded")
                && err.contains("--tls-keylog FILE"),
            "{cmd}: {err}"
        );
    }
    let (status, out, _) = kwire(&["check", &tls]);
    // One group of six findings, one per connection; exit status 2, as for
    // the commands above, and the summary.
    assert_eq!(
        (status, out.matches("tls-not-decrypted").count()),
        (2, 1),
        "{out}"
    );
    assert!(out.contains("tls-not-decrypted  6 findings"), "{out}");
    assert!(
        out.contains("0 frames checked: 0 errors, 0 warnings, 6 notes"),
        "{out}"
    );
    // With the key log: what the clear traffic gives.
    let rows = |args: &[&str]| {
        let (status, out, err) = kwire(args);
        assert_eq!(status, 0, "{args:?}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["by_api"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["api_name"].clone(),
                    r["requests"].clone(),
                    r["responses"].clone(),
                    r["request_bytes"].clone(),
                    r["response_bytes"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        rows(&["stats", &tls, "--format", "json", "--tls-keylog", &keylog]),
        rows(&["stats", &clear, "--format", "json"])
    );
    let clients = |args: &[&str]| {
        let (status, out, err) = kwire(args);
        assert_eq!(status, 0, "{args:?}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        v["clients"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["client_id"].clone(),
                    c["apis"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|a| {
                            (
                                a["api_name"].clone(),
                                a["versions"].clone(),
                                a["requests"].clone(),
                            )
                        })
                        .collect::<Vec<_>>(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        clients(&[
            "inventory",
            &tls,
            "--format",
            "json",
            "--tls-keylog",
            &keylog
        ]),
        clients(&["inventory", &clear, "--format", "json"])
    );
    let records = |args: &[&str]| {
        let (status, out, err) = kwire(args);
        assert_eq!(status, 0, "{args:?}: {err}");
        out.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| {
                (
                    r["topic"].clone(),
                    r["offset"].clone(),
                    r["key"].clone(),
                    r["value"].clone(),
                    r["api_name"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let got = records(&["records", &tls, "--format", "json", "--tls-keylog", &keylog]);
    assert_eq!(got.len(), 6, "three produced, three fetched: {got:?}");
    assert_eq!(got, records(&["records", &clear, "--format", "json"]));
    let (status, out, err) = kwire(&["check", &tls, "--tls-keylog", &keylog]);
    let (_, clear_out, _) = kwire(&["check", &clear]);
    assert_eq!(status, kwire(&["check", &clear]).0, "{err}");
    assert_eq!(out.lines().count(), clear_out.lines().count(), "{out}");
    let report = std::env::temp_dir().join(format!("kwire-tls-report-{}.html", std::process::id()));
    let (status, _, err) = kwire(&[
        "report",
        &tls,
        "--out",
        &report.display().to_string(),
        "--tls-keylog",
        &keylog,
    ]);
    assert_eq!(status, 0, "{err}");
    assert!(std::fs::read_to_string(&report)
        .unwrap()
        .contains("Produce"));
    let _ = std::fs::remove_file(report);
    // `decode` hands captures to `capture`, keys and all.
    let (status, out, _) = kwire(&["decode", &tls, "--json", "--tls-keylog", &keylog]);
    assert_eq!(
        (
            status,
            out.lines()
                .filter(|l| l.contains("\"kind\":\"request\""))
                .count()
        ),
        (0, 16)
    );
}

/// The key log without one session's secrets, or with them wrong.
fn key_log_for(
    name: &str,
    conn: u64,
    change: impl Fn(&str) -> Option<String>,
) -> (PathBuf, String) {
    let d = decoded(&["capture", &file(&format!("{name}.pcap")), "--json"]);
    let sessions = kinds(&d, "tls");
    let random = sessions.iter().find(|s| s["conn"] == conn).unwrap()["client_random"]
        .as_str()
        .unwrap()
        .to_string();
    let text: String = std::fs::read_to_string(file(&format!("{name}.keylog")))
        .unwrap()
        .lines()
        .filter_map(|l| {
            if l.contains(&random) {
                change(l)
            } else {
                Some(l.to_string())
            }
        })
        .map(|l| l + "\n")
        .collect();
    let path = std::env::temp_dir().join(format!(
        "kwire-tls-{name}-{conn}-{}-{}.keylog",
        std::process::id(),
        text.len()
    ));
    std::fs::write(&path, text).unwrap();
    (path, random)
}

#[test]
fn a_wrong_key_and_a_missing_key_lose_one_connection_and_nothing_else() {
    for name in ["tls12-chacha20", "tls13-aes128gcm"] {
        let clear = decoded(&["capture", &file(&format!("{name}-clear.pcap")), "--json"]);
        let conn = 2;
        // Wrong: every secret of the session has its last digit changed.
        let (wrong, _) = key_log_for(name, conn, |l| {
            let last = if l.ends_with('0') { '1' } else { '0' };
            Some(format!("{}{last}", &l[..l.len() - 1]))
        });
        let d = decoded(&[
            "capture",
            &file(&format!("{name}.pcap")),
            "--json",
            "--tls-keylog",
            &wrong.display().to_string(),
        ]);
        assert_eq!(d.status, 2, "{name}: {}", d.stderr);
        let mut want = clear.frames.clone();
        want.remove(&conn);
        assert!(
            d.frames == want,
            "{name}: the other connections decode as in clear"
        );
        let stopped = kinds(&d, "tls_stopped");
        assert_eq!(stopped.len(), 2, "{name}: {stopped:?}");
        for s in &stopped {
            assert_eq!(
                (&s["conn"], &s["reason"]),
                (&Value::from(conn), &Value::from("keys_did_not_open")),
                "{s}"
            );
            assert!(
                s["note"]
                    .as_str()
                    .unwrap()
                    .contains("did not open protected record"),
                "{s}"
            );
        }
        // The connection is not said to be decrypted: its keys opened nothing.
        let sessions = kinds(&d, "tls");
        let s = sessions.iter().find(|s| s["conn"] == conn).unwrap();
        assert_eq!(
            (&s["decrypted"], &s["not_decrypted"]["reason"]),
            (&Value::from(false), &Value::from("keys_did_not_open")),
            "{s}"
        );
        assert!(
            d.stderr
                .contains("decryption stopped part-way in 2 TLS directions")
                && d.stderr.contains(
                    "1 TLS connection was not decrypted, so not decoded (1 with keys that did not open their records)"
                ),
            "{}",
            d.stderr
        );
        let (_, list, _) = kwire(&[
            "capture",
            &file(&format!("{name}.pcap")),
            "--list",
            "--wide",
            "--tls-keylog",
            &wrong.display().to_string(),
        ]);
        assert_eq!(
            list.lines()
                .filter(|l| l.starts_with("  tls ") && l.contains("did not open protected record"))
                .count(),
            2,
            "{list}"
        );
        // Missing: the session's lines are gone.
        let (missing, _) = key_log_for(name, conn, |_| None);
        let d = decoded(&[
            "capture",
            &file(&format!("{name}.pcap")),
            "--json",
            "--tls-keylog",
            &missing.display().to_string(),
        ]);
        assert_eq!(d.status, 2);
        assert!(
            d.frames == want,
            "{name}: the other connections decode as in clear"
        );
        let sessions = kinds(&d, "tls");
        let s = sessions.iter().find(|s| s["conn"] == conn).unwrap();
        assert_eq!(
            s["not_decrypted"]["reason"], "no_secrets_for_session",
            "{s}"
        );
        assert_eq!(
            sessions.iter().filter(|s| s["decrypted"] == true).count(),
            sessions.len() - 1
        );
        assert!(
            d.stderr.contains("1 TLS connection was not decrypted")
                && d.stderr.contains(
                    "1 whose secrets the keys given do not hold: give the key log of the run that was captured"
                )
                && !d.stderr.contains("for want of keys"),
            "{}",
            d.stderr
        );
        let _ = std::fs::remove_file(wrong);
        let _ = std::fs::remove_file(missing);
    }
}

/// The packets of a little-endian pcap: (record header, data).
fn packets(pcap: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut at = 24;
    while at + 16 <= pcap.len() {
        let len = u32::from_le_bytes(pcap[at + 8..at + 12].try_into().unwrap()) as usize;
        out.push((
            pcap[at..at + 16].to_vec(),
            pcap[at + 16..at + 16 + len].to_vec(),
        ));
        at += 16 + len;
    }
    out
}

#[test]
fn a_truncated_record_is_said_and_everything_before_it_decodes() {
    for name in ["tls12-aes256gcm", "tls13-chacha20"] {
        let pcap = std::fs::read(file(&format!("{name}.pcap"))).unwrap();
        let pkts = packets(&pcap);
        // The Produce response (57 bytes in clear): the one record of that length from the server.
        let tls13 = name.starts_with("tls13");
        let record_len = if tls13 {
            5 + 57 + 1 + 16
        } else {
            5 + 8 + 57 + 16
        };
        let hits: Vec<usize> = pkts
            .iter()
            .enumerate()
            .filter(|(_, (_, data))| {
                kwire::capture::link::tcp_segment(1, data).is_some_and(|s| {
                    s.src_port == 19093 && s.payload.len() == record_len && s.payload[0] == 23
                })
            })
            .map(|(i, _)| i)
            .collect();
        assert_eq!(hits.len(), 1, "{name}");
        // The capture ends 20 bytes into the record's packet.
        let cut = hits[0];
        let mut out = pcap[..24].to_vec();
        for (head, data) in &pkts[..cut] {
            out.extend(head);
            out.extend(data);
        }
        let (head, data) = &pkts[cut];
        let keep = data.len() - record_len + 20;
        let mut h = head.clone();
        h[8..12].copy_from_slice(&(keep as u32).to_le_bytes());
        out.extend(h);
        out.extend(&data[..keep]);
        let path =
            std::env::temp_dir().join(format!("kwire-tls-cut-{name}-{}.pcap", std::process::id()));
        std::fs::write(&path, out).unwrap();
        let d = decoded(&[
            "capture",
            &path.display().to_string(),
            "--json",
            "--tls-keylog",
            &file(&format!("{name}.keylog")),
        ]);
        let _ = std::fs::remove_file(&path);
        assert_eq!(d.status, 2, "{}", d.stderr);
        let stopped = kinds(&d, "tls_stopped");
        assert_eq!(stopped.len(), 1, "{stopped:?}");
        let s = &stopped[0];
        assert_eq!(
            (&s["reason"], &s["direction"]),
            (&Value::from("truncated_record"), &Value::from("response"))
        );
        assert_eq!(
            s["note"],
            format!(
                "a TLS record cut short by the end of the capture: 20 of its {record_len} bytes"
            )
        );
        // Every frame before it is the clear traffic's; the Produce response alone is missing.
        let clear = decoded(&["capture", &file(&format!("{name}-clear.pcap")), "--json"]);
        let conn = s["conn"].as_u64().unwrap();
        for (c, frames) in &d.frames {
            let want = &clear.frames[c];
            if *c == conn {
                assert_eq!(frames[..], want[..frames.len()], "{name} conn {c}");
                assert_eq!(
                    want[frames.len()]["header"]["CorrelationId"],
                    frames.last().unwrap()["header"]["CorrelationId"]
                );
                assert_eq!(
                    frames.last().unwrap()["api_key"],
                    0,
                    "the Produce request came, its response was cut"
                );
            } else {
                assert_eq!(frames, want, "{name} conn {c}");
            }
        }
        assert_eq!(d.frames.keys().max(), Some(&conn));
        assert!(
            d.stderr
                .contains("decryption stopped part-way in 1 TLS direction"),
            "{}",
            d.stderr
        );
    }
}

/// A Kafka conversation: (from the client, frame).
fn kafka_conversation() -> Vec<(bool, Vec<u8>)> {
    let frame = common::exchanges::smallest;
    use Direction::{Request, Response};
    vec![
        (true, frame(Request, 18, 3, 1, 0)),
        (false, frame(Response, 18, 3, 1, 0)),
        (true, frame(Request, 0, 9, 2, 40_000)), // spans records
        (false, frame(Response, 0, 9, 2, 0)),
        (true, frame(Request, 12, 4, 3, 0)),
        (false, frame(Response, 12, 4, 3, 0)),
    ]
}

/// The same conversation over TLS (with KeyUpdates from both sides in TLS
/// 1.3 after the second exchange), and its key log.
fn over_tls(suite: u16, random: u8, frames: &[(bool, Vec<u8>)]) -> (Vec<(bool, Vec<u8>)>, String) {
    let mut s = Synth::new(suite, [random; 32]);
    let mut out = vec![
        (true, s.client_hello(Some("kafka-1.example"))),
        (false, s.server_flight()),
        (true, s.client_finished()),
    ];
    for (i, (from_client, f)) in frames.iter().enumerate() {
        if i == 4 && s.tls13() {
            out.push((true, s.key_update(true)));
            out.push((false, s.key_update(false)));
        }
        out.push((
            *from_client,
            if *from_client {
                s.client_data(f)
            } else {
                s.server_data(f)
            },
        ));
    }
    (out, s.key_log())
}

fn read(capture: &[u8], keys: Option<&str>) -> (Vec<Captured>, kwire::capture::CaptureStats) {
    let opts = CaptureOptions {
        tls_keylog: keys.map(|k| Arc::new(KeyLog::parse(k.as_bytes()))),
        ..Default::default()
    };
    let mut all = Vec::new();
    let stats = for_each_captured(Catalogue::builtin(), capture, &opts, |c| {
        all.push(c);
        true
    })
    .unwrap();
    (all, stats)
}

fn frames_of(all: &[Captured]) -> Vec<(Direction, Option<i32>, Vec<u8>)> {
    all.iter()
        .filter_map(|c| {
            if let Captured::Frame(f) = c {
                Some((f.direction, f.correlation_id, f.bytes.to_vec()))
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn synthetic_sessions_of_every_suite_in_small_segments_decode_as_in_clear() {
    let plain = kafka_conversation();
    let clear = frames_of(&read(&pcap(Link::EthernetV4, &conversation(&plain, 1448)), None).0);
    assert_eq!(clear.len(), 6);
    for suite in [
        0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc030, 0xcca8, 0xcca9, 0x009c,
    ] {
        for mss in [1, 100, 1448, 9000] {
            let (tls, log) = over_tls(suite, suite as u8, &plain);
            let capture = pcap(Link::EthernetV4, &conversation(&tls, mss));
            let (all, stats) = read(&capture, Some(&log));
            assert_eq!(frames_of(&all), clear, "suite {suite:04x} mss {mss}");
            assert_eq!(
                (stats.tls.connections, stats.tls.decrypted, stats.skips),
                (1, 1, 0),
                "suite {suite:04x} mss {mss}"
            );
            // Without keys: one note, no frame.
            if mss == 1448 {
                let (all, stats) = read(&capture, None);
                assert_eq!(
                    (
                        frames_of(&all).len(),
                        stats.tls.not_decrypted,
                        stats.tls.without_keys
                    ),
                    (0, 1, 1)
                );
            }
        }
    }
}

#[test]
fn a_lost_segment_stops_its_direction_and_the_rest_goes_on() {
    let plain = kafka_conversation();
    let (tls, log) = over_tls(0x1301, 9, &plain);
    let mut segs = conversation(&tls, 1000);
    // Lose a segment in the middle of the large Produce request.
    let lost = segs
        .iter()
        .position(|s| s.from_client && s.payload.len() == 1000)
        .unwrap()
        + 10;
    let ack_after = segs[lost + 1].seq;
    segs.remove(lost);
    // The server acknowledges past the hole: the data was sent, not captured.
    segs.push(Seg {
        ack: ack_after + 1000,
        ..Seg::data(false, 0, 0, vec![])
    });
    let (all, _) = read(&pcap(Link::EthernetV4, &segs), Some(&log));
    let stopped: Vec<_> = all
        .iter()
        .filter_map(|c| {
            if let Captured::Tls(n) = c {
                if let TlsEvent::Stopped {
                    direction, problem, ..
                } = &n.event
                {
                    Some((*direction, *problem))
                } else {
                    None
                }
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        stopped,
        vec![(Direction::Request, TlsProblem::Gap { bytes: 1000 })]
    );
    // The ApiVersions exchange and every response came; the requests after the hole did not.
    let frames = frames_of(&all);
    let clear = frames_of(&read(&pcap(Link::EthernetV4, &conversation(&plain, 1448)), None).0);
    assert_eq!(frames[..2], clear[..2]);
    assert_eq!(
        frames.iter().filter(|f| f.0 == Direction::Response).count(),
        3
    );
    assert_eq!(
        frames.iter().filter(|f| f.0 == Direction::Request).count(),
        1
    );
}

#[test]
fn damaged_tls_captures_never_panic_and_say_what_happened() {
    let plain = kafka_conversation();
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for round in 0..300 {
        let suite = [0x1301, 0x1303, 0xc030, 0xcca8][round % 4];
        let (mut tls, log) = over_tls(suite, round as u8, &plain);
        // Flip bytes, cut streams short, or feed garbage after the handshake.
        match next() % 3 {
            0 => {
                for _ in 0..1 + next() % 4 {
                    let i = (next() as usize) % tls.len();
                    let bytes = &mut tls[i].1;
                    if !bytes.is_empty() {
                        let at = (next() as usize) % bytes.len();
                        bytes[at] ^= 1 << (next() % 8);
                    }
                }
            }
            1 => {
                let i = (next() as usize) % tls.len();
                let cut = (next() as usize) % (tls[i].1.len() + 1);
                tls[i].1.truncate(cut);
            }
            _ => {
                let i = 3 + (next() as usize) % (tls.len() - 3);
                tls[i].1 = (0..(next() % 40_000) as usize)
                    .map(|_| next() as u8)
                    .collect();
            }
        }
        let capture = pcap(
            Link::EthernetV4,
            &conversation(&tls, 1 + (next() % 2000) as usize),
        );
        let (all, stats) = read(&capture, Some(&log));
        // Every connection's summary comes, and whatever stopped decryption is said.
        assert!(stats.tls.connections <= 1, "round {round}");
        let said = all.iter().any(|c| matches!(c, Captured::Tls(n) if matches!(n.event, TlsEvent::Stopped { .. } | TlsEvent::Session(_))));
        assert!(said || stats.frames == 6, "round {round}");
    }
}

/// Both TLS notes of a capture's reading: (direction, problem) of each
/// `Stopped` and `Skipped`.
fn tls_problems(all: &[Captured]) -> Vec<(&'static str, Direction, TlsProblem)> {
    all.iter()
        .filter_map(|c| match c {
            Captured::Tls(n) => match &n.event {
                TlsEvent::Stopped {
                    direction, problem, ..
                } => Some(("stopped", *direction, *problem)),
                TlsEvent::Skipped {
                    direction, problem, ..
                } => Some(("skipped", *direction, *problem)),
                TlsEvent::Session(_) => None,
            },
            _ => None,
        })
        .collect()
}

#[test]
fn a_damaged_record_loses_its_frame_and_the_frames_after_it_decode() {
    let plain = kafka_conversation();
    for suite in [0x1301, 0xc030] {
        let (mut tls, log) = over_tls(suite, 21, &plain);
        // The Produce request (40 KB) spans three records: damage the second.
        let produce = tls
            .iter()
            .position(|(c, b)| *c && b.len() > 40_000)
            .unwrap();
        let first_len = 5 + usize::from(u16::from_be_bytes([tls[produce].1[3], tls[produce].1[4]]));
        tls[produce].1[first_len + 200] ^= 0x10;
        let (all, stats) = read(
            &pcap(Link::EthernetV4, &conversation(&tls, 1400)),
            Some(&log),
        );
        let problems = tls_problems(&all);
        assert_eq!(problems.len(), 1, "suite {suite:04x}: {problems:?}");
        assert!(
            matches!(
                problems[0],
                (
                    "skipped",
                    Direction::Request,
                    TlsProblem::NotOpened { records: 1, .. }
                )
            ),
            "suite {suite:04x}: {problems:?}"
        );
        // The lost plaintext is a skip note of its own reason; the Produce
        // request is lost with it, and every other frame decodes as in clear.
        let skips: Vec<_> = all
            .iter()
            .filter_map(|c| match c {
                Captured::Skipped(s) => Some(s.reason.code()),
                _ => None,
            })
            .collect();
        assert!(skips.contains(&"tls_record_not_opened"), "{skips:?}");
        let frames = frames_of(&all);
        let clear = frames_of(&read(&pcap(Link::EthernetV4, &conversation(&plain, 1448)), None).0);
        let mut want = clear.clone();
        want.remove(2); // the Produce request
        assert_eq!(frames, want, "suite {suite:04x}");
        assert_eq!((stats.tls.decrypted, stats.tls.skipped_records), (1, 1));
    }
}

#[test]
fn a_key_log_with_a_wrong_duplicate_line_still_decrypts() {
    let plain = kafka_conversation();
    for suite in [0x1302, 0xcca8] {
        let (tls, log) = over_tls(suite, 22, &plain);
        // Each line again after the right ones, with a wrong secret: the later line
        // would replace the right one if only the last were kept.
        let wrong: String = log
            .lines()
            .map(|l| {
                format!(
                    "{}{}\n",
                    &l[..l.len() - 1],
                    if l.ends_with('0') { '1' } else { '0' }
                )
            })
            .collect();
        let capture = pcap(Link::EthernetV4, &conversation(&tls, 1400));
        let (all, stats) = read(&capture, Some(&format!("{log}{wrong}")));
        assert_eq!(tls_problems(&all), vec![], "suite {suite:04x}");
        assert_eq!(frames_of(&all).len(), plain.len(), "suite {suite:04x}");
        assert_eq!(stats.tls.decrypted, 1);
        // Wrong alone: said per direction, and the session is not decrypted.
        let (all, stats) = read(&capture, Some(&wrong));
        let problems = tls_problems(&all);
        assert!(
            problems.len() == 2
                && problems
                    .iter()
                    .all(|p| p.0 == "stopped" && matches!(p.2, TlsProblem::KeysDidNotOpen { .. })),
            "suite {suite:04x}: {problems:?}"
        );
        assert_eq!((stats.tls.decrypted, stats.tls.not_decrypted), (0, 1));
    }
}
