//! The diagnosis rules on real traffic: captures recorded here from real
//! clients against a real broker (tansu 0.6.0) by
//! `scripts/record-diagnosis-captures.sh`, and the other shipped captures,
//! whose normal flows must stay quiet.

use serde_json::{json, Value};
use std::collections::BTreeSet;

fn check_json(path: &str, extra: &[&str]) -> Vec<Value> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["check", "--format", "json", path])
        .args(extra)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn rules(found: &[Value]) -> BTreeSet<(String, String)> {
    found
        .iter()
        .map(|f| {
            (
                f["severity"].as_str().unwrap().to_string(),
                f["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// `(severity, rule)` pairs as [`rules`] gives them.
fn severities_and_rules(pairs: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    (pairs.iter())
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn of<'a>(found: &'a [Value], rule: &str) -> Vec<&'a Value> {
    found.iter().filter(|f| f["rule"] == rule).collect()
}

/// Every finding of `capture`, of which one is `poll-abandoned`: the client
/// it names closed `closes` times, `into` its polls.
fn poll_abandoned(capture: &str, closes: u64, into: &str) -> Vec<Value> {
    let found = check_json(&format!("{DIR}diagnosis/{capture}"), &[]);
    let abandoned = of(&found, "poll-abandoned");
    assert_eq!(abandoned.len(), 1, "{found:#?}");
    let f = abandoned[0];
    assert_eq!(
        (&f["client_id"], &f["count"]),
        (&json!("short-timeout"), &json!(closes))
    );
    let m = f["message"].as_str().unwrap();
    let said = format!("closed its connection to 127.0.0.1:19192 {closes} times while its long poll waited (MaxWaitMs 3000), {into} into it");
    assert!(m.contains(&said), "{m}");
    // Besides: the consumer's own close at the end, and tansu's Fetch v12
    // answers, which carry a tag of v16.
    let expected = [
        ("error", "tag-version"),
        ("note", "unanswered"),
        ("warning", "poll-abandoned"),
    ];
    assert_eq!(rules(&found), severities_and_rules(&expected));
    found
}

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/samples/captures/");

/// librdkafka told the broker is 0.9.0: tansu answers its JoinGroup v0 with
/// MEMBER_ID_REQUIRED, which v0 cannot get, and its ListOffsets v0 with a
/// body cut short, which the client asks again ten times a second.
#[test]
fn an_old_librdkafka_against_tansu() {
    let found = check_json(&format!("{DIR}diagnosis/old-librdkafka.pcap"), &[]);
    let wrong = of(&found, "error-not-in-version");
    assert_eq!(wrong.len(), 1, "{found:#?}");
    assert_eq!(wrong[0]["api_name"], "JoinGroup");
    assert_eq!(wrong[0]["api_version"], 0);
    assert!(wrong[0]["message"]
        .as_str()
        .unwrap()
        .contains("MEMBER_ID_REQUIRED (79)"));
    let looped = of(&found, "retry-loop");
    assert_eq!(looped.len(), 1, "{found:#?}");
    assert_eq!(looped[0]["api_name"], "ListOffsets");
    assert_eq!(looped[0]["client_id"], "old-librdkafka");
    let count = looped[0]["count"].as_u64().unwrap();
    // Every one of the loop's answers is also a frame that does not decode.
    assert_eq!(of(&found, "truncated").len() as u64, count, "{found:#?}");
    assert!(count >= 20, "{count}");
    assert!(looped[0]["message"]
        .as_str()
        .unwrap()
        .contains("a response that does not decode"));
}

/// A producer made per message: two dozen connections in a tenth of a second.
#[test]
fn a_producer_per_message_churns_connections() {
    let found = check_json(&format!("{DIR}diagnosis/churn.pcap"), &[]);
    let churn = of(&found, "connection-churn");
    assert_eq!(churn.len(), 1, "{found:#?}");
    assert_eq!(churn[0]["client_id"], "per-message-producer");
    assert_eq!(churn[0]["count"], 24);
    // Its Metadata requests went one to a connection: the storm names none.
    let storm = of(&found, "metadata-storm");
    assert_eq!(storm[0]["count"], 12);
    assert_eq!(storm[0]["conn"], Value::Null, "{storm:#?}");
    assert_eq!(
        rules(&found),
        severities_and_rules(&[
            ("warning", "connection-churn"),
            ("warning", "metadata-storm")
        ])
    );
}

/// A hand-written client asks tansu for DescribeLogDirs, which it does not
/// serve: the broker closes the connection without an answer, twice.
#[test]
fn a_broker_closing_on_a_request_it_does_not_serve() {
    let found = check_json(&format!("{DIR}diagnosis/unsupported.pcap"), &[]);
    let closed = of(&found, "closed-unanswered");
    assert_eq!(closed.len(), 2, "{found:#?}");
    for c in closed {
        let m = c["message"].as_str().unwrap();
        assert!(
            m.contains("DescribeLogDirs v1 request (frame ")
                && m.contains("the broker closed the connection (FIN)"),
            "{m}"
        );
    }
    assert!(of(&found, "unanswered").is_empty(), "{found:#?}");
    // Each request waited until the broker closed on it (under 2 ms), not
    // until the capture's end (200 ms later): no latency filter selects it.
    let path = format!("{DIR}diagnosis/unsupported.pcap");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", &path, "--list", "--min-latency", "100"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", &path, "--list", "--min-latency", "1"])
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout);
    assert_eq!(listed.matches("DescribeLogDirs v1").count(), 1, "{listed}");
}

/// kafka-python with a request timeout (0.7 s) shorter than its fetch wait
/// (3 s): each empty poll ends in a close 0.7 s into it and a new
/// connection. The closes are one `poll-abandoned` finding, not churn and
/// not a note each; the consumer's own close at the end is a stop.
#[test]
fn a_consumer_timing_out_its_own_long_polls() {
    let found = poll_abandoned("short-timeout.pcap", 8, "696.4 ms–700.0 ms");
    assert!(of(&found, "connection-churn").is_empty(), "{found:#?}");
    // The last connection's Fetch and Metadata, cut by the consumer's close().
    let notes: Vec<&Value> = of(&found, "unanswered");
    assert_eq!(notes.len(), 2, "{found:#?}");
    assert!(notes.iter().all(|n| n["conn"] == 12), "{notes:#?}");
}

/// The same consumer without a group: its one connection is closed 0.7 s
/// into each poll and opened again, with no other connection kept open.
/// The closes are a timer's (the same time into every poll), so they are
/// one `poll-abandoned` finding, not a client stopping eight times.
#[test]
fn a_consumer_without_a_group_timing_out_its_own_long_polls() {
    let found = poll_abandoned("short-timeout-no-group.pcap", 8, "699.0 ms–701.2 ms");
    // Only the consumer's own close at the end cut a poll no finding explains.
    let notes = of(&found, "unanswered");
    assert_eq!(notes.len(), 1, "{found:#?}");
    assert_eq!(notes[0]["conn"], 11);
}

/// What looks like it and is not: kafka-python without a group, closed by
/// its application after 1.3 s of polling and started again, six times. Its
/// closes came 89 ms and 94 ms into a poll (as alike as a timer's), but its
/// polls before them were answered after their full 500 ms wait: no timeout
/// of under 0.1 s.
#[test]
fn a_consumer_without_a_group_restarted_by_its_application() {
    let found = check_json(&format!("{DIR}diagnosis/restarts-no-group.pcap"), &[]);
    assert_eq!(
        rules(&found),
        severities_and_rules(&[("error", "tag-version"), ("note", "fetch-session-unused")]),
        "{found:#?}"
    );
}

/// librdkafka with a socket timeout (1 s) shorter than its fetch wait (3 s):
/// a request queued behind a Fetch times out, and the client closes the
/// connection and polls on a new one at once. That close is a client giving
/// up, not stopping; the consumer's own close at the end is a stop.
#[test]
fn librdkafka_giving_up_on_a_request_behind_its_long_poll() {
    let found = check_json(&format!("{DIR}diagnosis/behind-poll.pcap"), &[]);
    let closed = of(&found, "closed-unanswered");
    assert_eq!(closed.len(), 1, "{found:#?}");
    assert_eq!(closed[0]["api_name"], "GetTelemetrySubscriptions");
    let m = closed[0]["message"].as_str().unwrap();
    assert!(
        m.contains("the client closed the connection (FIN) 1.0 s after it was sent, and opened a new connection 0.19 ms later: it gave up waiting")
            && m.contains("waited behind a long poll whose wait was not over"),
        "{m}"
    );
    assert_eq!(
        rules(&found),
        severities_and_rules(&[("warning", "closed-unanswered"), ("note", "unanswered")])
    );
}

/// Real clients' normal sessions: no conversation rule speaks.
#[test]
fn normal_sessions_stay_quiet() {
    for (capture, keylog) in [
        ("confluent-kafka.pcap", None),
        ("kafka-python.pcap", None),
        ("kcat.pcap", None),
        ("lone-response.pcap", None),
        (
            "tls/tls13-aes128gcm.pcap",
            Some("tls/tls13-aes128gcm.keylog"),
        ),
        ("tls/tls12-chacha20-dsb.pcapng", None),
    ] {
        let path = format!("{DIR}{capture}");
        let keylog = keylog.map(|k| format!("{DIR}{k}"));
        let extra: Vec<&str> = match &keylog {
            Some(k) => vec!["--tls-keylog", k.as_str()],
            None => vec![],
        };
        let found = check_json(&path, &extra);
        let conversation: Vec<&Value> = found
            .iter()
            .filter(|f| f["rule"] != "tag-version" && f["severity"] != "note")
            .collect();
        assert!(conversation.is_empty(), "{capture}: {conversation:#?}");
    }
}

/// Every shipped capture's check fits 120 columns.
#[test]
fn check_text_fits_120_columns() {
    for capture in [
        "diagnosis/old-librdkafka.pcap",
        "diagnosis/churn.pcap",
        "diagnosis/unsupported.pcap",
        "diagnosis/short-timeout.pcap",
        "diagnosis/short-timeout-no-group.pcap",
        "diagnosis/restarts-no-group.pcap",
        "diagnosis/behind-poll.pcap",
        "confluent-kafka.pcap",
        "kafka-python.pcap",
        "lone-response.pcap",
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(["check", &format!("{DIR}{capture}")])
            .env("COLUMNS", "120")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        for line in text.lines() {
            assert!(line.chars().count() <= 120, "{capture}: {line}");
        }
    }
}

/// `stats` counts the conversation findings per API, in text and JSON.
#[test]
fn stats_counts_findings_per_api() {
    let path = format!("{DIR}diagnosis/old-librdkafka.pcap");
    let run = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(["stats", &path])
            .args(extra)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    let v: Value = serde_json::from_str(&run(&["--format", "json"])).unwrap();
    let rows: Vec<(String, u64, String, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["api_name"].as_str().unwrap().to_string(),
                r["api_version"].as_u64().unwrap(),
                r["rule"].as_str().unwrap().to_string(),
                r["count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("ListOffsets".to_string(), 0, "retry-loop".to_string(), 1),
            (
                "JoinGroup".to_string(),
                0,
                "error-not-in-version".to_string(),
                1
            )
        ]
    );
    let text = run(&[]);
    assert!(text.contains("\nfindings (kwire check tells them):\n  ListOffsets v0           warning  retry-loop                 1\n"), "{text}");
}

/// The report leads with the findings, before any table or chart.
#[test]
fn the_report_opens_with_the_findings() {
    let out_path =
        std::env::temp_dir().join(format!("kwire-diag-report-{}.html", std::process::id()));
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args([
            "report",
            &format!("{DIR}diagnosis/old-librdkafka.pcap"),
            "--out",
        ])
        .arg(&out_path)
        .status()
        .unwrap();
    // Exit status 2: the capture holds frames that do not decode (the page is written).
    assert_eq!(status.code(), Some(2));
    let html = std::fs::read_to_string(&out_path).unwrap();
    let _ = std::fs::remove_file(&out_path);
    let findings = html
        .find("<section id=findings>")
        .expect("a findings section");
    for later in ["<table", "<svg", "<dl class=facts>"] {
        if let Some(at) = html.find(later) {
            assert!(findings < at, "{later} comes before the findings");
        }
    }
    let section = &html[findings..html[findings..].find("</section>").unwrap() + findings];
    assert!(
        section.contains("error · error-not-in-version · JoinGroup v0"),
        "{section}"
    );
    assert!(
        section.contains("warning · retry-loop · ListOffsets v0"),
        "{section}"
    );
    assert!(
        section.contains("<a href=\"#frame-15\">15</a>"),
        "{section}"
    );
}
