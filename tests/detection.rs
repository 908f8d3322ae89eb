//! Which connections are Kafka, and where their first frame starts: a
//! connection on a port not named is Kafka when its first request has
//! Kafka's shape and the conversation confirms it (a newer client's version,
//! trailing bytes), and a capture that joined a connection mid-stream finds
//! its first request past the tail of the frame before it. Nothing is
//! dropped without a word.

mod common;

use common::pcap_writer::{conversation, pcap, Link};
use kwire::capture::{
    for_each_captured, CaptureOptions, CaptureStats, Captured, CapturedFrame, SkipReason, Skipped,
};
use kwire::decode::Direction;
use kwire::schema::Catalogue;

/// The smallest frame of an API and version with its correlation id, and
/// `extra` bytes after its body.
use common::exchanges::smallest as frame;

fn read(capture: &[u8]) -> (Vec<Captured>, CaptureStats) {
    let mut all = Vec::new();
    let stats = for_each_captured(
        Catalogue::builtin(),
        capture,
        &CaptureOptions::default(),
        |c| {
            all.push(c);
            true
        },
    )
    .unwrap();
    (all, stats)
}

fn frames(all: &[Captured]) -> Vec<&CapturedFrame> {
    all.iter()
        .filter_map(|c| match c {
            Captured::Frame(f) => Some(f),
            _ => None,
        })
        .collect()
}

fn skips(all: &[Captured]) -> Vec<&Skipped> {
    all.iter()
        .filter_map(|c| match c {
            Captured::Skipped(s) => Some(s),
            _ => None,
        })
        .collect()
}

/// What a frame is: direction, correlation id, api key, version.
type Said = (Direction, Option<i32>, Option<i16>, Option<i16>);

/// What each frame is.
fn summary(all: &[Captured]) -> Vec<Said> {
    frames(all)
        .iter()
        .map(|f| (f.direction, f.correlation_id, f.api_key, f.api_version))
        .collect()
}

use Direction::{Request, Response};

#[test]
fn a_newer_client_s_first_request_is_kafka_when_the_broker_answers_it() {
    // ApiVersions v5 (newer than any release here), answered as brokers
    // answer a version they do not know: a v0 body with the same correlation id.
    let mut newer = frame(Request, 18, 3, 1, 0);
    newer[6..8].copy_from_slice(&5i16.to_be_bytes());
    let convo = [
        (true, newer),
        (false, frame(Response, 18, 0, 1, 0)),
        (true, frame(Request, 18, 3, 2, 0)),
        (false, frame(Response, 18, 3, 2, 0)),
    ];
    let (all, stats) = read(&pcap(Link::EthernetV4, &conversation(&convo, 1000)));
    assert_eq!(
        summary(&all),
        vec![
            (Request, Some(1), Some(18), Some(5)),
            (Response, Some(1), Some(18), Some(5)),
            (Request, Some(2), Some(18), Some(3)),
            (Response, Some(2), Some(18), Some(3)),
        ]
    );
    assert_eq!((stats.unrecognised_connections, stats.skips), (0, 0));
}

#[test]
fn a_first_request_with_trailing_bytes_is_kafka_when_the_broker_answers_it() {
    let convo = [
        (true, frame(Request, 3, 12, 7, 6)),
        (false, frame(Response, 3, 12, 7, 0)),
    ];
    let (all, stats) = read(&pcap(Link::EthernetV4, &conversation(&convo, 1000)));
    assert_eq!(
        summary(&all),
        vec![
            (Request, Some(7), Some(3), Some(12)),
            (Response, Some(7), Some(3), Some(12)),
        ]
    );
    assert_eq!(stats.unrecognised_connections, 0);
    // Not answered with its correlation id: not taken for Kafka, and said.
    let convo = [
        (true, frame(Request, 3, 12, 7, 6)),
        (false, frame(Response, 3, 12, 8, 0)),
    ];
    let (all, stats) = read(&pcap(Link::EthernetV4, &conversation(&convo, 1000)));
    assert!(frames(&all).is_empty());
    let bytes = (convo[0].1.len() + convo[1].1.len()) as u64;
    assert_eq!(
        (stats.unrecognised_connections, stats.unrecognised_bytes),
        (1, bytes)
    );
}

/// The tail of a frame whose first bytes read as a plausible size (256),
/// then whole frames: what a capture started on a busy connection holds.
fn joined_mid_frame() -> Vec<(bool, Vec<u8>)> {
    let mut tail = vec![0, 0, 1, 0];
    tail.extend(std::iter::repeat_n(b'x', 40));
    vec![
        (true, tail),
        (true, frame(Request, 18, 3, 6, 0)),
        (false, frame(Response, 18, 3, 6, 0)),
        (true, frame(Request, 3, 12, 7, 0)),
        (false, frame(Response, 3, 12, 7, 0)),
    ]
}

#[test]
fn a_capture_that_joins_mid_frame_finds_the_first_request_after_the_tail() {
    // No SYN: the capture started after the connection opened.
    let segs = conversation(&joined_mid_frame(), 1000).split_off(2);
    let (all, stats) = read(&pcap(Link::EthernetV4, &segs));
    assert_eq!(
        summary(&all),
        vec![
            (Request, Some(6), Some(18), Some(3)),
            (Response, Some(6), Some(18), Some(3)),
            (Request, Some(7), Some(3), Some(12)),
            (Response, Some(7), Some(3), Some(12)),
        ]
    );
    let s = skips(&all);
    assert_eq!(s.len(), 1, "{s:?}");
    assert_eq!(
        (s[0].direction, s[0].offset, s[0].bytes, s[0].reason),
        (Request, 0, 44, SkipReason::MidStream)
    );
    assert_eq!(stats.unrecognised_connections, 0);
}

#[test]
fn a_capture_that_joins_between_frames_loses_nothing() {
    let convo = &joined_mid_frame()[1..];
    let segs = conversation(convo, 7).split_off(2);
    let (all, stats) = read(&pcap(Link::EthernetV4, &segs));
    assert_eq!(frames(&all).len(), 4);
    assert_eq!((stats.skips, stats.unrecognised_connections), (0, 0));
}

#[test]
fn a_known_broker_s_connection_joined_mid_frame_is_resynced_too() {
    // A first connection with its handshake names the broker; the second,
    // joined mid-frame, is to the same broker.
    let first = conversation(&joined_mid_frame()[1..3], 1000);
    let second: Vec<_> = conversation(&joined_mid_frame(), 1000)
        .split_off(2)
        .into_iter()
        .map(|s| common::pcap_writer::Seg {
            client_port: 50001,
            ..s
        })
        .collect();
    let (all, _) = read(&pcap(Link::EthernetV4, &[first, second].concat()));
    let second: Vec<_> = frames(&all).into_iter().filter(|f| f.conn == 1).collect();
    assert_eq!(
        second
            .iter()
            .map(|f| (f.direction, f.correlation_id))
            .collect::<Vec<_>>(),
        vec![
            (Request, Some(6)),
            (Response, Some(6)),
            (Request, Some(7)),
            (Response, Some(7))
        ]
    );
}

#[test]
fn traffic_that_is_not_kafka_is_counted_and_said() {
    let convo = [
        (
            true,
            b"GET /metrics HTTP/1.1\r\nHost: broker\r\n\r\n".to_vec(),
        ),
        (
            false,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".to_vec(),
        ),
    ];
    let capture = pcap(Link::EthernetV4, &conversation(&convo, 1000));
    let (all, stats) = read(&capture);
    assert!(frames(&all).is_empty());
    let bytes = (convo[0].1.len() + convo[1].1.len()) as u64;
    assert_eq!(
        (stats.unrecognised_connections, stats.unrecognised_bytes),
        (1, bytes)
    );
    let out = common::kwire_with_stdin(&["capture", "-", "--list"], &capture);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "1 TCP connection was not taken for Kafka ({bytes} bytes)"
        )) && err.contains("no Kafka traffic found"),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(1));
}
