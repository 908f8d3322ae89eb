//! The conversation rules (`analysis::diagnosis`): for each rule a
//! conversation that shows it, and the normal flows that look like it and
//! must stay quiet. Conversations are encoded by kwire and written as
//! captures with set times; every test reads `kwire check --format json`.

mod common;

use common::batches::producer_batch;
use common::exchanges::{TempCapture, Timeline};
use serde_json::{json, Value};

fn check(name: &str, t: &Timeline) -> (Vec<Value>, i32) {
    let cap = TempCapture::new(name, &t.pcap());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["check", "--format", "json", cap.path()])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let found = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect();
    (found, out.status.code().unwrap_or(-1))
}

fn check_text(name: &str, t: &Timeline) -> String {
    let cap = TempCapture::new(name, &t.pcap());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["check", cap.path()])
        .env("NO_COLOR", "1")
        .env("COLUMNS", "120")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn of<'a>(found: &'a [Value], rule: &str) -> Vec<&'a Value> {
    found.iter().filter(|f| f["rule"] == rule).collect()
}

/// The one finding of `rule`, which must be there.
fn the<'a>(found: &'a [Value], rule: &str) -> &'a Value {
    let all = of(found, rule);
    assert_eq!(all.len(), 1, "one {rule} finding expected: {found:#?}");
    all[0]
}

/// No finding but notes of rules other than `allowed`.
fn quiet(found: &[Value]) {
    let loud: Vec<&Value> = found.iter().filter(|f| f["severity"] != "note").collect();
    assert!(loud.is_empty(), "expected no warning or error: {loud:#?}");
}

fn frames(f: &Value) -> Vec<u64> {
    f["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_u64().unwrap())
        .collect()
}

fn join_request(v: i16) -> Value {
    let mut r = json!({"GroupId": "g", "SessionTimeoutMs": 10000, "MemberId": "", "ProtocolType": "consumer",
        "Protocols": [{"Name": "range", "Metadata": ""}]});
    if v >= 1 {
        r["RebalanceTimeoutMs"] = json!(30000);
    }
    r
}

fn join_response(v: i16, error: i16, generation: i32) -> Value {
    let mut r = json!({"ErrorCode": error, "GenerationId": generation, "ProtocolName": "range",
        "Leader": "m-1", "MemberId": "m-1", "Members": []});
    if v >= 2 {
        r["ThrottleTimeMs"] = json!(0);
    }
    r
}

/// A consumer on JoinGroup v1 whose broker answers MEMBER_ID_REQUIRED, once
/// a second, fifteen times: a loop, and an error v1 cannot get.
#[test]
fn a_join_group_v1_loop_on_member_id_required() {
    let mut t = Timeline::default();
    for corr in 1..=15 {
        t.on(50000, "consumer-1").pair(
            corr,
            "JoinGroup",
            1,
            join_request(1),
            join_response(1, 79, -1),
        );
        t.wait(1.0);
    }
    let (found, status) = check("diag-join-loop", &t);
    let looped = the(&found, "retry-loop");
    assert_eq!(looped["count"], 15);
    assert_eq!(looped["severity"], "warning");
    assert_eq!(looped["api_name"], "JoinGroup");
    assert_eq!(looped["client_id"], "consumer-1");
    assert_eq!(frames(looped), (0..30).collect::<Vec<u64>>());
    let message = looped["message"].as_str().unwrap();
    assert!(
        message.contains("MEMBER_ID_REQUIRED (79) 15 times in a row, every 1.0 s"),
        "{message}"
    );
    let until = looped["until"].as_f64().unwrap() - looped["time"].as_f64().unwrap();
    assert!((until - 14.0).abs() < 0.1, "{until}");
    let wrong = of(&found, "error-not-in-version");
    assert_eq!(wrong.len(), 15, "{found:#?}");
    assert!(
        wrong[0]["message"]
            .as_str()
            .unwrap()
            .contains("only from v4"),
        "{:?}",
        wrong[0]
    );
    assert_eq!(status, 3, "an error finding makes exit status 3");
    // The text groups them: one line for the fifteen, and it fits.
    let text = check_text("diag-join-loop-text", &t);
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    let heads: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("error") || l.starts_with("warning"))
        .collect();
    assert_eq!(heads.len(), 2, "{text}");
    assert_eq!(
        heads[0], "error   error-not-in-version  JoinGroup v1  client \"consumer-1\"  15 findings",
        "{text}"
    );
    assert!(
        text.contains(
            "\n        2023-11-14 22:13:20.002 → 22:13:34.030 (14.0 s)  conn 0  frames 0-29\n"
        ),
        "{text}"
    );
    assert!(text.contains("what these usually mean:"), "{text}");
}

/// KIP-394 as it should be: MEMBER_ID_REQUIRED once at v4+, then a join.
#[test]
fn member_id_required_then_a_join_is_normal() {
    let mut t = Timeline::default();
    t.on(50000, "consumer-1")
        .pair(1, "JoinGroup", 7, join_request(7), join_response(7, 79, -1));
    t.on(50000, "consumer-1")
        .pair(2, "JoinGroup", 7, join_request(7), join_response(7, 0, 1));
    let (found, status) = check("diag-join-ok", &t);
    assert!(found.is_empty(), "{found:#?}");
    assert_eq!(status, 0);
}

/// A Metadata v12 exchange about topic `orders` (`_v` names the version the
/// caller sends, for readability).
fn metadata(_v: i16, error: i16) -> (Value, Value) {
    (
        json!({"Topics": [{"Name": "orders", "TopicId": "00000000-0000-0000-0000-000000000000"}], "AllowAutoTopicCreation": true, "IncludeTopicAuthorizedOperations": false}),
        json!({"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": null, "ControllerId": 1,
            "Topics": [{"ErrorCode": error, "Name": "orders", "TopicId": "00000000-0000-0000-0000-000000000000", "IsInternal": false, "Partitions": [], "TopicAuthorizedOperations": 0}]}),
    )
}

/// A leader not yet elected answers a few Metadata requests: normal at a
/// topic's creation, no loop.
#[test]
fn a_few_transient_errors_then_success_are_normal() {
    let mut t = Timeline::default();
    for corr in 1..=4 {
        let (rq, rs) = metadata(12, 5);
        t.on(50000, "p").pair(corr, "Metadata", 12, rq, rs);
        t.wait(0.1);
    }
    let (rq, rs) = metadata(12, 0);
    t.on(50000, "p").pair(5, "Metadata", 12, rq, rs);
    let (found, _) = check("diag-transient", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// The same transient error for twelve tries is a loop after all.
#[test]
fn a_transient_error_that_does_not_pass_is_a_loop() {
    let mut t = Timeline::default();
    for corr in 1..=12 {
        let (rq, rs) = metadata(12, 5);
        t.on(50000, "p").pair(corr, "Metadata", 12, rq, rs);
        t.wait(0.5);
    }
    let (found, _) = check("diag-transient-loop", &t);
    assert_eq!(the(&found, "retry-loop")["count"], 12);
}

fn produce_request(_v: i16, records: &[u8]) -> Value {
    json!({"TransactionalId": null, "Acks": -1, "TimeoutMs": 30000,
        "TopicData": [{"Name": "orders", "PartitionData": [{"Index": 0, "Records": hex::encode(records)}]}]})
}

fn produce_response(v: i16, error: i16, base_offset: i64) -> Value {
    let mut p =
        json!({"Index": 0, "ErrorCode": error, "BaseOffset": base_offset, "LogAppendTimeMs": -1});
    if v >= 5 {
        p["LogStartOffset"] = json!(0);
    }
    if v >= 8 {
        p["RecordErrors"] = json!([]);
        p["ErrorMessage"] = json!(null);
    }
    json!({"Responses": [{"Name": "orders", "PartitionResponses": [p]}], "ThrottleTimeMs": 0})
}

/// A Produce v9 of `batch` to orders-0, answered with an error and a base offset.
fn produce(t: &mut Timeline, corr: i32, batch: &[u8], (error, base_offset): (i16, i64)) {
    t.on(50000, "p").pair(
        corr,
        "Produce",
        9,
        produce_request(9, batch),
        produce_response(9, error, base_offset),
    );
}

/// UNKNOWN_PRODUCER_ID answered to batches that carry no producer id.
#[test]
fn a_producer_state_error_for_a_batch_without_producer_id() {
    let mut t = Timeline::default();
    let plain = producer_batch(0, 0, 3, (-1, -1, -1));
    t.on(50000, "p").pair(
        1,
        "Produce",
        9,
        produce_request(9, &plain),
        produce_response(9, 59, -1),
    );
    let (found, status) = check("diag-pid", &t);
    let f = the(&found, "error-not-in-version");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("UNKNOWN_PRODUCER_ID (59)"),
        "{f}"
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("none of the request's record batches has a producer id"),
        "{f}"
    );
    assert_eq!(status, 3);
    // An idempotent producer's batch may get it: no finding.
    let mut t = Timeline::default();
    let idempotent = producer_batch(0, 0, 3, (7, 0, 0));
    t.on(50000, "p").pair(
        1,
        "Produce",
        9,
        produce_request(9, &idempotent),
        produce_response(9, 59, -1),
    );
    let (found, _) = check("diag-pid-ok", &t);
    assert!(of(&found, "error-not-in-version").is_empty(), "{found:#?}");
}

/// The client gives up on a Metadata request after 10 s and closes.
#[test]
fn a_request_cut_by_the_client_closing_the_connection() {
    let mut t = Timeline::default();
    let (rq, rs) = metadata(12, 0);
    t.on(50000, "p").pair(1, "Metadata", 12, rq.clone(), rs);
    t.send(
        50000,
        true,
        &common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Metadata",
            12,
            2,
            "p",
            rq,
        ),
    );
    t.wait(10.0);
    t.fin(50000, true);
    t.fin(50000, false);
    let (found, _) = check("diag-closed", &t);
    let f = the(&found, "closed-unanswered");
    assert_eq!(frames(f), vec![2]);
    let m = f["message"].as_str().unwrap();
    assert!(m.contains("Metadata v12 request (frame 2) was never answered: the client closed the connection (FIN) 10.0 s after it was sent"), "{m}");
    assert!(of(&found, "unanswered").is_empty(), "{found:#?}");
    // The listing shows the opening and both FINs, with who sent them.
    let cap = TempCapture::new("diag-closed-list", &t.pcap());
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", "--list", cap.path()])
        .output()
        .unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = list.lines().filter(|l| !common::is_conn_name(l)).collect();
    assert!(
        lines[0].starts_with("  SYN ") && lines[0].ends_with("opened by the client"),
        "{list}"
    );
    assert!(
        lines[lines.len() - 2].starts_with("  FIN ")
            && lines[lines.len() - 2].ends_with("closed by the client (FIN)"),
        "{list}"
    );
    assert!(
        lines[lines.len() - 1].ends_with("closed by the broker (FIN)"),
        "{list}"
    );
}

/// The broker resets the connection with a request in flight.
#[test]
fn a_request_cut_by_the_broker_resetting_the_connection() {
    let mut t = Timeline::default();
    let (rq, _) = metadata(12, 0);
    t.send(
        50000,
        true,
        &common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Metadata",
            12,
            1,
            "p",
            rq,
        ),
    );
    t.rst(50000, false);
    let (found, _) = check("diag-rst", &t);
    let m = the(&found, "closed-unanswered")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(m.contains("the broker reset the connection (RST)"), "{m}");
}

fn fetch_request(session: i32, epoch: i32, max_wait: i32) -> Value {
    json!({"ReplicaId": -1, "MaxWaitMs": max_wait, "MinBytes": 1, "MaxBytes": 1048576, "IsolationLevel": 0,
        "SessionId": session, "SessionEpoch": epoch,
        "Topics": [{"Topic": "orders", "Partitions": [{"Partition": 0, "CurrentLeaderEpoch": -1, "FetchOffset": 0, "LastFetchedEpoch": -1, "LogStartOffset": -1, "PartitionMaxBytes": 1048576}]}],
        "ForgottenTopicsData": [], "RackId": ""})
}

fn fetch_response(error: i16, session: i32, hw: i64, lso: i64) -> Value {
    json!({"ThrottleTimeMs": 0, "ErrorCode": error, "SessionId": session,
        "Responses": [{"Topic": "orders", "Partitions": [{"PartitionIndex": 0, "ErrorCode": 0, "HighWatermark": hw,
            "LastStableOffset": lso, "LogStartOffset": 0, "AbortedTransactions": [], "PreferredReadReplica": -1, "Records": null}]}]})
}

/// A consumer stopping mid-poll closes within its MaxWaitMs: normal, a note.
#[test]
fn a_consumer_closing_during_its_long_poll_is_normal() {
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Fetch",
            12,
            1,
            "c",
            fetch_request(0, -1, 500),
        ),
    );
    t.wait(0.1);
    t.fin(50000, true);
    t.fin(50000, false);
    let (found, status) = check("diag-long-poll", &t);
    quiet(&found);
    let note = the(&found, "unanswered");
    assert!(
        note["message"]
            .as_str()
            .unwrap()
            .contains("the client closed the connection (FIN)"),
        "{note}"
    );
    assert_eq!(status, 0);
}

/// A consumer stopping 2.9 s into a 5 s long poll, with a Metadata request
/// sent after the Fetch: the broker answers a connection's requests in
/// order, so the Metadata waits behind the poll and its cut is no more a
/// loss than the Fetch's (kafka-python's close, seen against tansu). The
/// same Metadata request with no poll before it is a loss.
#[test]
fn a_request_queued_behind_a_long_poll_is_cut_as_the_poll_is() {
    for (poll_first, lost) in [(true, false), (false, true)] {
        let mut t = Timeline::default();
        let (rq, _) = metadata(12, 0);
        let request = |api: &str, version: i16, corr: i32, body: Value| {
            common::exchanges::frame(
                kwire::decode::Direction::Request,
                api,
                version,
                corr,
                "c",
                body,
            )
        };
        if poll_first {
            t.send(
                50000,
                true,
                &request("Fetch", 12, 1, fetch_request(0, -1, 5000)),
            );
        }
        t.wait(0.07);
        t.send(50000, true, &request("Metadata", 12, 2, rq));
        t.wait(2.9);
        t.fin(50000, true);
        t.fin(50000, false);
        let (found, _) = check("diag-behind-poll", &t);
        assert_eq!(
            of(&found, "closed-unanswered").len(),
            usize::from(lost),
            "poll first: {poll_first}: {found:#?}"
        );
    }
}

/// librdkafka with a socket timeout (1 s) shorter than its fetch wait
/// (3 s), seen against tansu: a Metadata request queued behind a Fetch
/// times out, the client closes and at once opens a new connection and
/// polls there; the broker still answers the Fetch on the half-closed
/// connection. The Metadata request was lost, not cut by a client stopping.
/// The client keeps its coordinator's connection open throughout. Without
/// the reconnect it is a stop (a note), the late answer to the poll
/// notwithstanding; so it is when the new connection does no work (no
/// Fetch, no Produce), and when the client's other connection closed with
/// it (a client stopping, then started again under the same id).
#[test]
fn a_client_giving_up_behind_a_long_poll_and_reconnecting() {
    for (reconnect, keeps_another) in [
        (Some("Fetch"), true),
        (None, true),
        (Some("Metadata"), true),
        (Some("Fetch"), false),
    ] {
        let mut t = Timeline::default();
        let (rq, _) = metadata(12, 0);
        let frame = |direction, api: &str, corr: i32, body: Value| {
            common::exchanges::frame(direction, api, 12, corr, "c", body)
        };
        let request = kwire::decode::Direction::Request;
        api_versions(&mut t, 49000, "c");
        let cut = 3;
        t.send(
            50000,
            true,
            &frame(request, "Fetch", 1, fetch_request(0, -1, 3000)),
        );
        t.wait(1.9);
        t.send(50000, true, &frame(request, "Metadata", 2, rq));
        t.wait(1.0);
        t.fin(50000, true);
        if !keeps_another {
            t.fin(49000, true);
        }
        match reconnect {
            Some("Fetch") => t.send(
                50001,
                true,
                &frame(request, "Fetch", 3, fetch_request(0, -1, 3000)),
            ),
            Some(_) => {
                let (rq, _) = metadata(12, 0);
                t.send(50001, true, &frame(request, "Metadata", 3, rq));
            }
            None => {}
        }
        t.wait(0.1);
        let answer = fetch_response(0, 0, 0, 0);
        t.send(
            50000,
            false,
            &frame(kwire::decode::Direction::Response, "Fetch", 1, answer),
        );
        t.fin(50000, false);
        let (found, _) = check("diag-gave-up", &t);
        if reconnect != Some("Fetch") || !keeps_another {
            let said = format!("{reconnect:?} {keeps_another}: {found:#?}");
            assert!(of(&found, "closed-unanswered").is_empty(), "{said}");
            let notes = of(&found, "unanswered");
            assert!(notes.iter().any(|n| frames(n) == [cut]), "{said}");
            continue;
        }
        let f = the(&found, "closed-unanswered");
        assert_eq!(frames(f), [cut]);
        assert_eq!(
            f["message"],
            "Metadata v12 request (frame 3) was never answered: the client closed the connection (FIN) 1.0 s after \
             it was sent, and opened a new connection 1.0 ms later: it gave up waiting, it did not stop (the request \
             waited behind a long poll whose wait was not over: the client's request timeout is shorter than the \
             poll's wait)"
        );
        assert!(
            of(&found, "unanswered").iter().all(|n| frames(n) != [cut]),
            "{found:#?}"
        );
    }
}

/// A request sent after the broker closed the connection was not cut by
/// that close: the finding says it came after.
#[test]
fn a_request_sent_after_the_broker_closed_is_said_to_come_after() {
    let mut t = Timeline::default();
    let (rq, _) = metadata(12, 0);
    let request = |corr: i32| {
        common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Metadata",
            12,
            corr,
            "p",
            rq.clone(),
        )
    };
    t.send(50000, true, &request(1));
    t.fin(50000, false);
    t.wait(0.3);
    t.send(50000, true, &request(2));
    t.rst(50000, false);
    let (found, _) = check("diag-after-close", &t);
    let m = the(&found, "closed-unanswered")["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        m.ends_with("the broker closed the connection (FIN) 1.0 ms after the first was sent, and frame 1 was sent after that"),
        "{m}"
    );
}

/// A capture that ends with a request in flight: the note, no close.
#[test]
fn a_capture_that_simply_ends_stays_a_note() {
    let mut t = Timeline::default();
    let (rq, _) = metadata(12, 0);
    t.send(
        50000,
        true,
        &common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Metadata",
            12,
            1,
            "p",
            rq,
        ),
    );
    let (found, _) = check("diag-ends", &t);
    quiet(&found);
    assert_eq!(
        the(&found, "unanswered")["message"],
        "no response by the end of the capture"
    );
}

/// A consumer whose request timeout (0.7 s) is shorter than its fetch wait
/// (MaxWaitMs 3000) closes each poll's connection 0.7 s into it, reconnects
/// at once and polls again (kafka-python with `request_timeout_ms=700`,
/// seen against tansu), while its group coordinator's connection stays
/// open. `closes`: how many times; `by_client`: the client closes (else the
/// broker); `inside`: within the wait (else after it); `restarts`: the
/// client closes its coordinator's connection with each (it stops and is
/// started again).
fn abandoned_polls(closes: u16, by_client: bool, inside: bool, restarts: bool) -> Timeline {
    let mut t = Timeline::default();
    let (rq, _) = metadata(12, 0);
    api_versions(&mut t, 49000, "short-timeout");
    for i in 0..closes {
        if restarts && i > 0 {
            api_versions(&mut t, 49000 + i, "short-timeout");
        }
        let port = 50000 + i;
        api_versions(&mut t, port, "short-timeout");
        let poll = common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Fetch",
            12,
            2,
            "short-timeout",
            fetch_request(0, -1, if inside { 3000 } else { 500 }),
        );
        t.send(port, true, &poll);
        t.wait(0.1);
        let queued = common::exchanges::frame(
            kwire::decode::Direction::Request,
            "Metadata",
            12,
            3,
            "short-timeout",
            rq.clone(),
        );
        t.send(port, true, &queued);
        t.wait(0.6);
        t.fin(port, by_client);
        t.fin(port, !by_client);
        if restarts {
            t.fin(49000 + i, true);
            t.fin(49000 + i, false);
        }
    }
    t
}

#[test]
fn a_client_closing_every_long_poll_before_its_wait_is_over() {
    let (found, _) = check(
        "diag-poll-abandoned",
        &abandoned_polls(25, true, true, false),
    );
    let f = the(&found, "poll-abandoned");
    assert_eq!(f["severity"], "warning");
    // The last close is not followed by a reconnect: a client stopping.
    assert_eq!(f["count"], 24);
    assert_eq!(f["client_id"], "short-timeout");
    assert_eq!(
        f["message"],
        "client \"short-timeout\" (10.0.0.1) closed its connection to 10.0.0.2:9092 24 times while its long poll waited \
         (MaxWaitMs 3000), 702.0 ms into it, and reconnected within 2.0 ms to poll again (24 requests queued behind \
         the polls were cut too): its request timeout is shorter than its fetch wait"
    );
    // The polls the finding names; what the closes cut is not also a note
    // (but what the last, a client stopping, cut is), and the reconnects
    // are not churn.
    assert_eq!(frames(f)[..3], [4, 8, 12]);
    let notes: Vec<u64> = of(&found, "unanswered")
        .iter()
        .flat_map(|n| frames(n))
        .collect();
    assert_eq!(notes, [100, 101], "{found:#?}");
    assert!(of(&found, "connection-churn").is_empty(), "{found:#?}");
    assert!(check_text(
        "diag-poll-abandoned",
        &abandoned_polls(25, true, true, false)
    )
    .contains("make the timeout longer than the wait"));
}

/// What looks like it and is not: a consumer stopping once mid-poll,
/// closes after the wait was over, a broker closing, and a consumer closed
/// and started again under the same id, again and again (librdkafka's
/// default id is the same for every application).
#[test]
fn one_abandoned_poll_a_poll_over_or_a_broker_close_is_not_a_short_timeout() {
    for (closes, by_client, inside, restarts) in [
        (1, true, true, false),
        (25, true, false, false),
        (25, false, true, false),
        (25, true, true, true),
    ] {
        let (found, _) = check(
            "diag-poll-normal",
            &abandoned_polls(closes, by_client, inside, restarts),
        );
        let said = format!("{closes} {by_client} {inside} {restarts}: {found:#?}");
        assert!(of(&found, "poll-abandoned").is_empty(), "{said}");
        // Started again, it gave up on nothing; closing 0.2 s after a poll's
        // wait ran out with no answer, it did (`closed-unanswered`).
        if restarts {
            assert!(of(&found, "closed-unanswered").is_empty(), "{said}");
        }
    }
}

/// A consumer without a group: one connection, closed `into[i]` seconds
/// into its `i`th poll (MaxWaitMs 3000) and opened again at once, with
/// nothing else open (kafka-python with `group_id=None` and
/// `request_timeout_ms=700`, seen against tansu). `answered`: first, a poll
/// answered after waiting that long on a connection closed after it;
/// `restarts`: each close closes another connection too.
fn ungrouped_polls(into: &[f64], answered: Option<f64>, restarts: bool) -> Timeline {
    let mut t = Timeline::default();
    let (rq, rs) = metadata(12, 0);
    if let Some(wait) = answered {
        api_versions(&mut t, 49000, "no-group");
        t.send(49000, true, &no_group_poll(2));
        t.wait(wait);
        let answer = common::exchanges::frame(
            kwire::decode::Direction::Response,
            "Fetch",
            12,
            2,
            "no-group",
            fetch_response(0, 0, 0, 0),
        );
        t.send(49000, false, &answer);
        t.fin(49000, true);
        t.fin(49000, false);
    }
    for (i, &d) in into.iter().enumerate() {
        let port = 50000 + i as u16;
        // Closes 0.3 s apart at least, so that each is the only one then.
        if i > 0 {
            t.wait((0.3 - d).max(0.0));
        }
        if restarts {
            api_versions(&mut t, 48000 + i as u16, "no-group");
        }
        api_versions(&mut t, port, "no-group");
        t.on(port, "no-group")
            .pair(2, "Metadata", 12, rq.clone(), rs.clone());
        t.send(port, true, &no_group_poll(3));
        t.wait(d);
        t.fin(port, true);
        if restarts {
            t.fin(48000 + i as u16, true);
            t.fin(48000 + i as u16, false);
        }
    }
    t
}

/// The no-group consumer's Fetch v12 request `corr`, asking for a 3 s wait.
fn no_group_poll(corr: i32) -> Vec<u8> {
    let poll = fetch_request(0, -1, 3000);
    common::exchanges::frame(
        kwire::decode::Direction::Request,
        "Fetch",
        12,
        corr,
        "no-group",
        poll,
    )
}

#[test]
fn a_consumer_without_a_group_timing_out_every_long_poll() {
    let into: Vec<f64> = (0..8).map(|i| 0.699 + 0.0003 * f64::from(i)).collect();
    let (found, _) = check("diag-poll-no-group", &ungrouped_polls(&into, None, false));
    let f = the(&found, "poll-abandoned");
    // The last close is not followed by a reconnect: a client stopping.
    assert_eq!(f["count"], 7, "{found:#?}");
    let m = f["message"].as_str().unwrap();
    assert!(
        m.contains(
            "7 times while its long poll waited (MaxWaitMs 3000), 700.0 ms–701.8 ms into it"
        ),
        "{m}"
    );
    // What the closes cut is the finding's; the last close is a stop.
    assert_eq!(of(&found, "unanswered").len(), 1, "{found:#?}");
    assert!(of(&found, "connection-churn").is_empty(), "{found:#?}");
}

/// What looks like it and is not, without a group: too few closes; closes
/// at any time into the polls (an application that stops and starts its
/// consumer now and then); a poll the client waited 3 s for, or as long as
/// the closes came into theirs (no timer of 0.7 s); closes that close
/// another connection too (the client stopping); a busy consumer restarted
/// (its polls answered within a millisecond, so its closes come a
/// millisecond into them); closes 50 ms into their polls (no client times
/// out so soon).
#[test]
fn closes_without_a_group_that_are_not_a_short_timeout() {
    let same = [0.7; 8];
    let cases: [(&str, &[f64], Option<f64>, bool); 7] = [
        ("two closes", &same[..3], None, false),
        (
            "any time into the polls",
            &[0.7, 0.31, 1.9, 0.05, 1.2, 0.66, 2.4, 0.9],
            None,
            false,
        ),
        ("a poll waited 3 s", &same, Some(3.0), false),
        ("restarts", &same, None, true),
        // A busy consumer restarted: polls answered in a millisecond, so
        // every close comes a millisecond into one.
        ("a busy consumer restarted", &[0.001; 4], Some(0.001), false),
        (
            "closes too soon into their polls for a timeout",
            &[0.05; 4],
            None,
            false,
        ),
        (
            "a poll answered as late as the closes came",
            &same,
            Some(0.705),
            false,
        ),
    ];
    for (what, into, answered, restarts) in cases {
        let (found, _) = check(
            "diag-poll-no-group-normal",
            &ungrouped_polls(into, answered, restarts),
        );
        assert!(
            of(&found, "poll-abandoned").is_empty(),
            "{what}: {found:#?}"
        );
    }
    // The same closes with a poll answered within the timeout are one.
    let (found, _) = check(
        "diag-poll-no-group-fast",
        &ungrouped_polls(&same, Some(0.2), false),
    );
    assert_eq!(the(&found, "poll-abandoned")["count"], 7, "{found:#?}");
}

fn api_versions(t: &mut Timeline, port: u16, client: &str) {
    t.on(port, client).pair(1, "ApiVersions", 3, json!({"ClientSoftwareName": "t", "ClientSoftwareVersion": "1"}), json!({"ErrorCode": 0, "ThrottleTimeMs": 0, "ApiKeys": [
            {"ApiKey": 3, "MinVersion": 0, "MaxVersion": 12}, {"ApiKey": 18, "MinVersion": 0, "MaxVersion": 3}]}));
}

/// Thirty connections for sixty exchanges: churn.
#[test]
fn a_client_reconnecting_for_every_exchange_churns() {
    let mut t = Timeline::default();
    for i in 0..30u16 {
        api_versions(&mut t, 50000 + i, "churner");
        let (rq, rs) = metadata(12, 0);
        t.on(50000 + i, "churner").pair(2, "Metadata", 12, rq, rs);
        t.fin(50000 + i, true);
        t.fin(50000 + i, false);
        t.wait(0.2);
    }
    let (found, _) = check("diag-churn", &t);
    let f = the(&found, "connection-churn");
    assert_eq!(f["count"], 30);
    assert_eq!(f["client_id"], "churner");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("opened 30 connections"),
        "{f}"
    );
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("for 60 exchanges (2.0 a connection)"),
        "{f}"
    );
    // Three connections with many exchanges each: a healthy client.
    let mut t = Timeline::default();
    for i in 0..3u16 {
        api_versions(&mut t, 50000 + i, "steady");
        for corr in 2..40 {
            let (rq, rs) = metadata(12, 0);
            t.on(50000 + i, "steady").pair(corr, "Metadata", 12, rq, rs);
            t.wait(0.5);
        }
    }
    let (found, _) = check("diag-steady", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// Sequences 0-4, 5-9, then 12: three sequences skipped.
#[test]
fn a_producer_sequence_gap() {
    let mut t = Timeline::default();
    let mut offset = 0;
    for (corr, seq) in [(1, 0), (2, 5), (3, 12)] {
        let b = producer_batch(0, 0, 5, (42, 1, seq));
        produce(&mut t, corr, &b, (0, offset));
        offset += 5;
    }
    let (found, _) = check("diag-gap", &t);
    let f = the(&found, "producer-sequence-gap");
    assert_eq!(frames(f), vec![2, 4]);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("sent orders-0 sequence 12 after sequence 9"),
        "{f}"
    );
}

/// A retry of the same batch after an error, then its acknowledgement: normal.
#[test]
fn a_producer_retry_is_normal() {
    let mut t = Timeline::default();
    let b = producer_batch(0, 0, 5, (42, 1, 0));
    produce(&mut t, 1, &b, (6, -1));
    produce(&mut t, 2, &b, (0, 0));
    // The broker recognising a resend answers the first offset again.
    produce(&mut t, 3, &b, (0, 0));
    let b = producer_batch(0, 0, 5, (42, 1, 5));
    produce(&mut t, 4, &b, (0, 5));
    let (found, _) = check("diag-retry-ok", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// The broker appends a resent batch a second time: duplicates.
#[test]
fn a_batch_appended_twice_is_a_duplicate() {
    let mut t = Timeline::default();
    let b = producer_batch(0, 0, 5, (42, 1, 0));
    produce(&mut t, 1, &b, (0, 0));
    produce(&mut t, 2, &b, (0, 10));
    let (found, status) = check("diag-dup", &t);
    let f = the(&found, "producer-duplicate");
    assert_eq!(f["severity"], "error");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("appended at offset 0 (frame #1) and again at offset 10"),
        "{f}"
    );
    assert_eq!(status, 3);
}

/// Epoch 2, then epoch 1 again: a zombie producer.
#[test]
fn a_producer_epoch_going_back() {
    let mut t = Timeline::default();
    let b = producer_batch(0, 0, 5, (42, 2, 0));
    produce(&mut t, 1, &b, (0, 0));
    let b = producer_batch(0, 0, 5, (42, 1, 7));
    produce(&mut t, 2, &b, (47, -1));
    let (found, _) = check("diag-epoch", &t);
    let f = the(&found, "producer-epoch-regression");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("with epoch 1 after it had used epoch 2"),
        "{f}"
    );
}

/// A Fetch v12 asking for session and epoch `asked`, answered with an error
/// and a session id.
fn session_fetch(t: &mut Timeline, corr: i32, asked: (i32, i32), (error, given): (i16, i32)) {
    t.on(50000, "c").pair(
        corr,
        "Fetch",
        12,
        fetch_request(asked.0, asked.1, 500),
        fetch_response(error, given, 0, 0),
    );
}

/// Asked for a session three times, given none.
#[test]
fn fetch_sessions_never_given() {
    let mut t = Timeline::default();
    for corr in 1..=3 {
        session_fetch(&mut t, corr, (0, 0), (0, 0));
    }
    let (found, _) = check("diag-no-session", &t);
    let f = the(&found, "fetch-session-unused");
    assert_eq!(f["severity"], "note");
    assert_eq!(f["count"], 3);
    // Given a session, used with epochs 1, 2: normal.
    let mut t = Timeline::default();
    session_fetch(&mut t, 1, (0, 0), (0, 77));
    session_fetch(&mut t, 2, (77, 1), (0, 77));
    session_fetch(&mut t, 3, (77, 2), (0, 77));
    let (found, _) = check("diag-session-ok", &t);
    assert!(found.is_empty(), "{found:#?}");
    // An epoch skipped, then the broker does not know the session.
    let mut t = Timeline::default();
    session_fetch(&mut t, 1, (0, 0), (0, 77));
    session_fetch(&mut t, 2, (77, 3), (71, 0));
    let (found, _) = check("diag-session-epoch", &t);
    let all = of(&found, "fetch-session-epoch");
    assert_eq!(all.len(), 2, "{found:#?}");
    assert!(
        all[0]["message"]
            .as_str()
            .unwrap()
            .contains("epoch 3 where epoch 1 comes next"),
        "{found:#?}"
    );
    assert!(
        all[1]["message"]
            .as_str()
            .unwrap()
            .contains("INVALID_FETCH_SESSION_EPOCH (71)"),
        "{found:#?}"
    );
}

/// Six generations in twenty seconds.
#[test]
fn a_rebalance_storm() {
    let mut t = Timeline::default();
    for generation in 1..=6 {
        t.on(50000, "c").pair(
            generation,
            "JoinGroup",
            7,
            join_request(7),
            join_response(7, 0, generation),
        );
        t.wait(4.0);
    }
    let (found, _) = check("diag-storm", &t);
    let f = the(&found, "rebalance-storm");
    assert_eq!(f["count"], 6);
    // Two generations a minute apart: normal.
    let mut t = Timeline::default();
    for generation in 1..=2 {
        t.on(50000, "c").pair(
            generation,
            "JoinGroup",
            7,
            join_request(7),
            join_response(7, 0, generation),
        );
        t.wait(60.0);
    }
    let (found, _) = check("diag-no-storm", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// A heartbeat told the member is unknown: fenced.
#[test]
fn a_member_fenced() {
    let mut t = Timeline::default();
    t.on(50000, "c").pair(
        1,
        "Heartbeat",
        4,
        json!({"GroupId": "g", "GenerationId": 3, "MemberId": "m-1", "GroupInstanceId": null}),
        json!({"ThrottleTimeMs": 0, "ErrorCode": 25}),
    );
    let (found, _) = check("diag-fenced", &t);
    let f = the(&found, "member-fenced");
    assert!(
        f["message"].as_str().unwrap().contains(
            "member \"m-1\" of group \"g\" was answered UNKNOWN_MEMBER_ID (25) to Heartbeat v4"
        ),
        "{f}"
    );
    // A heartbeat during a rebalance: normal.
    let mut t = Timeline::default();
    t.on(50000, "c").pair(
        1,
        "Heartbeat",
        4,
        json!({"GroupId": "g", "GenerationId": 3, "MemberId": "m-1", "GroupInstanceId": null}),
        json!({"ThrottleTimeMs": 0, "ErrorCode": 27}),
    );
    let (found, _) = check("diag-rebalancing", &t);
    assert!(found.is_empty(), "{found:#?}");
}

fn throttled_metadata(t: &mut Timeline, corr: i32, v: i16, throttle_ms: i32) {
    let (rq, mut rs) = metadata(v, 0);
    rs["ThrottleTimeMs"] = json!(throttle_ms);
    t.on(50000, "c").pair(corr, "Metadata", v, rq, rs);
}

/// Throttled for a second, the client sends again at once.
#[test]
fn a_throttle_ignored() {
    let mut t = Timeline::default();
    throttled_metadata(&mut t, 1, 12, 1000);
    throttled_metadata(&mut t, 2, 12, 0);
    throttled_metadata(&mut t, 3, 12, 0);
    let (found, _) = check("diag-throttle", &t);
    let f = the(&found, "throttle-ignored");
    assert_eq!(f["count"], 2);
    assert_eq!(frames(f), vec![1, 2, 4]);
    // Waited out: normal.
    let mut t = Timeline::default();
    throttled_metadata(&mut t, 1, 12, 1000);
    t.wait(1.0);
    throttled_metadata(&mut t, 2, 12, 0);
    let (found, _) = check("diag-throttle-ok", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// Thirty Metadata requests in a second.
#[test]
fn a_metadata_storm() {
    let mut t = Timeline::default();
    for corr in 1..=30 {
        let (rq, rs) = metadata(12, 0);
        t.on(50000, "c").pair(corr, "Metadata", 12, rq, rs);
        t.wait(0.02);
    }
    let (found, _) = check("diag-md-storm", &t);
    let f = the(&found, "metadata-storm");
    assert_eq!(f["count"], 30);
    // All on one connection: that one is named.
    assert!(f["conn"].is_u64(), "{f:#?}");
    // One a second: normal.
    let mut t = Timeline::default();
    for corr in 1..=20 {
        let (rq, rs) = metadata(12, 0);
        t.on(50000, "c").pair(corr, "Metadata", 12, rq, rs);
        t.wait(1.0);
    }
    let (found, _) = check("diag-md-calm", &t);
    assert!(found.is_empty(), "{found:#?}");
}

fn add_partitions(t: &mut Timeline, corr: i32) {
    t.on(50000, "tx").pair(corr, "AddPartitionsToTxn", 3, json!({"V3AndBelowTransactionalId": "tx-1", "V3AndBelowProducerId": 42, "V3AndBelowProducerEpoch": 0, "V3AndBelowTopics": [{"Name": "orders", "Partitions": [0]}]}), json!({"ThrottleTimeMs": 0, "ResultsByTopicV3AndBelow": [{"Name": "orders", "ResultsByPartition": [{"PartitionIndex": 0, "PartitionErrorCode": 0}]}]}));
}

/// A transaction begun and not ended for ninety seconds.
#[test]
fn a_transaction_left_open() {
    let mut t = Timeline::default();
    add_partitions(&mut t, 1);
    t.wait(90.0);
    let (rq, rs) = metadata(12, 0);
    t.on(50000, "tx").pair(2, "Metadata", 12, rq, rs);
    let (found, _) = check("diag-txn-open", &t);
    let f = the(&found, "transaction-open");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("transactional id \"tx-1\" (producer id 42) began a transaction at frame #0"),
        "{f}"
    );
    // Ended by EndTxn: normal.
    let mut t = Timeline::default();
    add_partitions(&mut t, 1);
    t.on(50000, "tx").pair(
        2,
        "EndTxn",
        3,
        json!({"TransactionalId": "tx-1", "ProducerId": 42, "ProducerEpoch": 0, "Committed": true}),
        json!({"ThrottleTimeMs": 0, "ErrorCode": 0}),
    );
    t.wait(90.0);
    let (rq, rs) = metadata(12, 0);
    t.on(50000, "tx").pair(3, "Metadata", 12, rq, rs);
    let (found, _) = check("diag-txn-ended", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// The last stable offset held at 5 for ninety seconds while the high watermark is 10.
#[test]
fn a_last_stable_offset_stuck() {
    let mut t = Timeline::default();
    for corr in 1..=10 {
        t.on(50000, "c").pair(
            corr,
            "Fetch",
            12,
            fetch_request(0, -1, 500),
            fetch_response(0, 0, 10, 5),
        );
        t.wait(10.0);
    }
    let (found, _) = check("diag-lso", &t);
    let f = the(&found, "lso-stuck");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("orders-0: last stable offset held at 5"),
        "{f}"
    );
    // Caught up: normal.
    let mut t = Timeline::default();
    for corr in 1..=10 {
        t.on(50000, "c").pair(
            corr,
            "Fetch",
            12,
            fetch_request(0, -1, 500),
            fetch_response(0, 0, 10, 10),
        );
        t.wait(10.0);
    }
    let (found, _) = check("diag-lso-ok", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// Three clients refused the same way by one broker.
#[test]
fn the_same_error_from_every_client() {
    let mut t = Timeline::default();
    for (i, client) in ["a", "b", "c"].iter().enumerate() {
        let (rq, rs) = metadata(12, 29);
        t.on(50000 + i as u16, client)
            .pair(1, "Metadata", 12, rq, rs);
    }
    let (found, _) = check("diag-everywhere", &t);
    let f = the(&found, "error-from-every-client");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("TOPIC_AUTHORIZATION_FAILED (29) to 3 clients"),
        "{f}"
    );
    // Every client's first JoinGroup answered MEMBER_ID_REQUIRED: normal.
    let mut t = Timeline::default();
    for (i, client) in ["a", "b", "c"].iter().enumerate() {
        t.on(50000 + i as u16, client).pair(
            1,
            "JoinGroup",
            7,
            join_request(7),
            join_response(7, 79, -1),
        );
        t.on(50000 + i as u16, client).pair(
            2,
            "JoinGroup",
            7,
            join_request(7),
            join_response(7, 0, 1),
        );
    }
    let (found, _) = check("diag-everywhere-ok", &t);
    assert!(found.is_empty(), "{found:#?}");
}

/// Hundreds of findings still fit on one screen: one group a kind.
#[test]
fn hundreds_of_findings_fit_on_one_screen() {
    let mut t = Timeline::default();
    for corr in 1..=300 {
        t.on(50000, "consumer-1").pair(
            corr,
            "JoinGroup",
            1,
            join_request(1),
            join_response(1, 79, -1),
        );
    }
    let text = check_text("diag-many", &t);
    assert!(text.lines().count() <= 24, "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 120), "{text}");
    assert!(text.contains("300 findings"), "{text}");
}
