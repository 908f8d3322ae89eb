//! Captures: pcap and pcapng over several link types, TCP reassembly under
//! segmentation, reordering, duplication and loss, pairing by correlation id,
//! resync after gaps, and guessing lone responses.

mod common;

use common::pcap_writer::{conversation, pcap, pcapng, Link, Seg};
use kwire::capture::{for_each_frame, CapturedFrame};
use kwire::decode::{decode_frame, DecodeOptions, Direction};
use kwire::encode::{encode_frame, example::smallest_struct, frame::message_spec, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{json, Map};

/// A request/response pair of the smallest instances with this correlation id.
fn pair(api: &str, version: i16, corr: i32) -> [(bool, Vec<u8>); 2] {
    let cat = Catalogue::builtin();
    let key = cat.resolve_api(api).unwrap();
    let mk = |direction| {
        let fs = FrameSpec { direction, api_key: key, version, release: None };
        let body = smallest_struct(&message_spec(cat, &fs).unwrap().fields, version);
        let mut header = Map::new();
        header.insert("CorrelationId".into(), json!(corr));
        if direction == Direction::Request {
            header.insert("ClientId".into(), json!("test-client"));
        }
        encode_frame(cat, &fs, &header, &body).unwrap()
    };
    [(true, mk(Direction::Request)), (false, mk(Direction::Response))]
}

fn traffic() -> Vec<(bool, Vec<u8>)> {
    [pair("ApiVersions", 3, 1), pair("Metadata", 12, 2), pair("Produce", 9, 3), pair("Fetch", 12, 4)].into_iter().flatten().collect()
}

fn frames_of(capture: &[u8], port: Option<u16>) -> Vec<CapturedFrame> {
    let mut out = Vec::new();
    let stats = for_each_frame(Catalogue::builtin(), capture, port, |f| {
        out.push(f);
        true
    })
    .unwrap();
    assert!(stats.error.is_none(), "{:?}", stats.error);
    out
}

/// Every frame decodes cleanly, and responses carry their request's api/version.
fn check_all_decode(frames: &[CapturedFrame]) {
    let cat = Catalogue::builtin();
    for f in frames {
        let opts = DecodeOptions { direction: Some(f.direction), api_key: f.api_key, api_version: f.api_version, ..Default::default() };
        let d = decode_frame(cat, f.bytes.clone(), 0, &opts);
        assert!(d.error.is_none(), "frame {} {:?}: {:?}", f.index, f.direction, d.error);
    }
}

#[test]
fn every_link_type_and_format_yields_every_frame_paired() {
    let expected = traffic();
    for link in [Link::EthernetV4, Link::Sll2V4, Link::NullV6] {
        for ng in [false, true] {
            let segs = conversation(&expected, 1460);
            let file = if ng { pcapng(link, &segs) } else { pcap(link, &segs) };
            let frames = frames_of(&file, None);
            assert_eq!(frames.len(), expected.len(), "{link:?} pcapng={ng}");
            for (f, (from_client, bytes)) in frames.iter().zip(&expected) {
                assert_eq!(f.direction == Direction::Request, *from_client);
                assert_eq!(&f.bytes[..], &bytes[..]);
            }
            let resp: Vec<_> = frames.iter().filter(|f| f.direction == Direction::Response).collect();
            let apis: Vec<(Option<i16>, Option<i16>)> = resp.iter().map(|f| (f.api_key, f.api_version)).collect();
            assert_eq!(apis, vec![(Some(18), Some(3)), (Some(3), Some(12)), (Some(0), Some(9)), (Some(1), Some(12))]);
            check_all_decode(&frames);
        }
    }
}

#[test]
fn tiny_segments_and_many_frames_per_segment() {
    let expected = traffic();
    for mss in [1, 3, 7, 100_000] {
        let mut segs = conversation(&expected, mss);
        if mss == 100_000 {
            // Coalesce each direction's consecutive frames into one segment.
            let client: Vec<u8> = expected.iter().filter(|f| f.0).flat_map(|f| f.1.clone()).collect();
            segs.truncate(2);
            segs.push(Seg { from_client: true, seq: 1001, ack: 0, syn: false, fin: false, payload: client });
        }
        let frames = frames_of(&pcap(Link::EthernetV4, &segs), None);
        let want = if mss == 100_000 { 4 } else { expected.len() };
        assert_eq!(frames.len(), want, "mss {mss}");
        check_all_decode(&frames);
    }
}

#[test]
fn reordering_and_duplicates_are_reassembled() {
    let expected = traffic();
    let segs = conversation(&expected, 50);
    let mut shuffled = segs[..2].to_vec();
    let data = &segs[2..];
    // Swap neighbouring segments of the same direction and repeat every fifth one
    // (a response cannot be seen before its request was sent, so directions keep their order).
    let mut i = 0;
    while i < data.len() {
        if i + 1 < data.len() && data[i].from_client == data[i + 1].from_client {
            shuffled.push(data[i + 1].clone());
            shuffled.push(data[i].clone());
            if i % 5 == 0 {
                shuffled.push(data[i].clone());
            }
            i += 2;
        } else {
            shuffled.push(data[i].clone());
            i += 1;
        }
    }
    let frames = frames_of(&pcap(Link::EthernetV4, &shuffled), None);
    assert_eq!(frames.len(), expected.len());
    for (f, (_, bytes)) in frames.iter().zip(&expected) {
        assert_eq!(&f.bytes[..], &bytes[..]);
    }
}

#[test]
fn a_lost_segment_is_a_gap_and_decoding_resyncs() {
    let expected = traffic();
    let segs = conversation(&expected, 20);
    // Drop a client segment in the middle of the Metadata request (the third frame).
    let metadata_req_start = 2 + expected[..2].iter().map(|f| f.1.len().div_ceil(20)).sum::<usize>();
    let mut lossy = segs.clone();
    lossy.remove(metadata_req_start + 1);
    let frames = frames_of(&pcap(Link::EthernetV4, &lossy), None);
    let requests: Vec<_> = frames.iter().filter(|f| f.direction == Direction::Request).collect();
    let keys: Vec<Option<i16>> = requests.iter().map(|f| f.api_key).collect();
    assert_eq!(keys, vec![Some(18), Some(0), Some(1)], "the Metadata request is lost, the rest found");
    assert!(requests[1].after_gap, "the Produce request follows the gap");
    // The Metadata response has no request any more; the others are still paired.
    let unpaired: Vec<_> = frames.iter().filter(|f| f.direction == Direction::Response && f.api_key.is_none()).collect();
    assert_eq!(unpaired.len(), 1);
    assert_eq!(unpaired[0].correlation_id, Some(2));
}

#[test]
fn the_broker_port_can_be_forced() {
    let segs = conversation(&traffic(), 1460);
    let frames = frames_of(&pcap(Link::EthernetV4, &segs), Some(9092));
    assert_eq!(frames.len(), 8);
    assert!(frames_of(&pcap(Link::EthernetV4, &segs), Some(1234)).is_empty(), "no traffic on another port");
}

#[test]
fn a_lone_response_is_guessed() {
    let [_, (_, resp)] = pair("Metadata", 12, 9);
    let ranked = kwire::decode::guess::guess_response(Catalogue::builtin(), &bytes::Bytes::from(resp), None);
    assert!(!ranked.is_empty());
    let pos = ranked.iter().position(|g| g.api_key == 3 && g.version == 12);
    assert!(pos.is_some_and(|p| p < 10), "Metadata v12 among the top guesses: {:?}", &ranked[..ranked.len().min(10)]);
}

#[test]
fn the_cli_lists_and_decodes_a_capture() {
    let file = std::env::temp_dir().join(format!("kwire-cap-{}.pcap", std::process::id()));
    std::fs::write(&file, pcap(Link::EthernetV4, &conversation(&traffic(), 100))).unwrap();
    let run = |args: &[&str]| std::process::Command::new(env!("CARGO_BIN_EXE_kwire")).args(args).output().unwrap();
    let out = run(&["capture", file.to_str().unwrap(), "--list"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    assert!(lines[0].contains("10.0.0.1:50000 → 10.0.0.2:9092 ApiVersions v3 corr=1") && lines[0].contains("client_id=\"test-client\""), "{}", lines[0]);
    assert!(lines[1].contains("← 10.0.0.2:9092 ApiVersions v3 corr=1") && lines[1].ends_with("ok"), "{}", lines[1]);
    let out = run(&["decode", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let jsons: Vec<serde_json::Value> = String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).expect("one JSON object per line")).collect();
    assert_eq!(jsons.len(), 8);
    assert_eq!(jsons[3]["kind"], "response");
    assert_eq!(jsons[3]["api_key"], 3);
    let out = run(&["capture", file.to_str().unwrap(), "--api", "Produce", "--list"]);
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 2);
    let _ = std::fs::remove_file(&file);
}


#[test]
fn a_capture_without_kafka_traffic_says_so() {
    // An HTTP exchange on port 80: no frame there looks like a Kafka request.
    let http = vec![(true, b"GET / HTTP/1.1\r\nHost: example\r\n\r\n".to_vec()), (false, b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec())];
    let file = std::env::temp_dir().join(format!("kwire-http-{}.pcap", std::process::id()));
    std::fs::write(&file, pcap(Link::EthernetV4, &conversation(&http, 1460))).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire")).args(["capture", file.to_str().unwrap(), "--list"]).output().unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Kafka traffic found"), "{}", String::from_utf8_lossy(&out.stderr));
}
