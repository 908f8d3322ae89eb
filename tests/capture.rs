//! Captures: pcap and pcapng over several link types, TCP reassembly under
//! segmentation, reordering, duplication and loss, pairing by correlation id,
//! resync after gaps, guessing lone responses, and nothing lost silently:
//! every byte of a stream is in a frame or in a skip note.

mod common;

use common::pcap_writer::{conversation, pcap, pcapng, Link, Seg, CLIENT_ISN, SERVER_ISN};
use kwire::capture::{
    for_each_captured, for_each_frame, CaptureOptions, Captured, CapturedFrame, SkipReason,
    Skipped, StreamCut,
};
use kwire::decode::Direction;
use kwire::encode::{encode_frame, example::smallest_struct, frame::message_spec, FrameSpec};
use kwire::schema::Catalogue;
use serde_json::{json, Map};

/// A request/response pair of the smallest instances with this correlation id.
fn pair(api: &str, version: i16, corr: i32) -> [(bool, Vec<u8>); 2] {
    let cat = Catalogue::builtin();
    let key = cat.resolve_api(api).unwrap();
    let mk = |direction| {
        let fs = FrameSpec {
            direction,
            api_key: key,
            version,
            release: None,
        };
        let body = smallest_struct(&message_spec(cat, &fs).unwrap().fields, version);
        let mut header = Map::new();
        header.insert("CorrelationId".into(), json!(corr));
        if direction == Direction::Request {
            header.insert("ClientId".into(), json!("test-client"));
        }
        encode_frame(cat, &fs, &header, &body).unwrap()
    };
    [
        (true, mk(Direction::Request)),
        (false, mk(Direction::Response)),
    ]
}

fn traffic() -> Vec<(bool, Vec<u8>)> {
    [
        pair("ApiVersions", 3, 1),
        pair("Metadata", 12, 2),
        pair("Produce", 9, 3),
        pair("Fetch", 12, 4),
    ]
    .into_iter()
    .flatten()
    .collect()
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
    for f in frames {
        let d = common::decode_captured(f);
        assert!(
            d.error.is_none(),
            "frame {} {:?}: {:?}",
            f.index,
            f.direction,
            d.error
        );
    }
}

#[test]
fn every_link_type_and_format_yields_every_frame_paired() {
    let expected = traffic();
    for link in [Link::EthernetV4, Link::Sll2V4, Link::NullV6] {
        for ng in [false, true] {
            let segs = conversation(&expected, 1460);
            let file = if ng {
                pcapng(link, &segs)
            } else {
                pcap(link, &segs)
            };
            let frames = frames_of(&file, None);
            assert_eq!(frames.len(), expected.len(), "{link:?} pcapng={ng}");
            for (f, (from_client, bytes)) in frames.iter().zip(&expected) {
                assert_eq!(f.direction == Direction::Request, *from_client);
                assert_eq!(&f.bytes[..], &bytes[..]);
            }
            let resp: Vec<_> = frames
                .iter()
                .filter(|f| f.direction == Direction::Response)
                .collect();
            let apis: Vec<(Option<i16>, Option<i16>)> =
                resp.iter().map(|f| (f.api_key, f.api_version)).collect();
            assert_eq!(
                apis,
                vec![
                    (Some(18), Some(3)),
                    (Some(3), Some(12)),
                    (Some(0), Some(9)),
                    (Some(1), Some(12))
                ]
            );
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
            let client: Vec<u8> = expected
                .iter()
                .filter(|f| f.0)
                .flat_map(|f| f.1.clone())
                .collect();
            segs.truncate(2);
            segs.push(Seg::data(true, 1001, 0, client));
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
    let metadata_req_start = 2 + expected[..2]
        .iter()
        .map(|f| f.1.len().div_ceil(20))
        .sum::<usize>();
    let mut lossy = segs.clone();
    lossy.remove(metadata_req_start + 1);
    let frames = frames_of(&pcap(Link::EthernetV4, &lossy), None);
    let requests: Vec<_> = frames
        .iter()
        .filter(|f| f.direction == Direction::Request)
        .collect();
    let keys: Vec<Option<i16>> = requests.iter().map(|f| f.api_key).collect();
    assert_eq!(
        keys,
        vec![Some(18), Some(0), Some(1)],
        "the Metadata request is lost, the rest found"
    );
    assert!(requests[1].after_gap, "the Produce request follows the gap");
    // The Metadata response has no request any more; the others are still paired.
    let unpaired: Vec<_> = frames
        .iter()
        .filter(|f| f.direction == Direction::Response && f.api_key.is_none())
        .collect();
    assert_eq!(unpaired.len(), 1);
    assert_eq!(unpaired[0].correlation_id, Some(2));
}

#[test]
fn the_broker_port_can_be_forced() {
    let segs = conversation(&traffic(), 1460);
    let frames = frames_of(&pcap(Link::EthernetV4, &segs), Some(9092));
    assert_eq!(frames.len(), 8);
    assert!(
        frames_of(&pcap(Link::EthernetV4, &segs), Some(1234)).is_empty(),
        "no traffic on another port"
    );
}

#[test]
fn a_lone_response_is_guessed() {
    let [_, (_, resp)] = pair("Metadata", 12, 9);
    let ranked =
        kwire::decode::guess::guess_response(Catalogue::builtin(), &bytes::Bytes::from(resp), None);
    assert!(!ranked.is_empty());
    let pos = ranked
        .iter()
        .position(|g| g.api_key == 3 && g.version == 12);
    assert!(
        pos.is_some_and(|p| p < 10),
        "Metadata v12 among the top guesses: {:?}",
        &ranked[..ranked.len().min(10)]
    );
}

#[test]
fn the_cli_lists_and_decodes_a_capture() {
    let file = std::env::temp_dir().join(format!("kwire-cap-{}.pcap", std::process::id()));
    std::fs::write(
        &file,
        pcap(Link::EthernetV4, &conversation(&traffic(), 100)),
    )
    .unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["capture", file.to_str().unwrap(), "--list"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines = common::frame_rows(&text);
    assert_eq!(lines.len(), 8, "{text}");
    assert!(
        lines[0].contains("conn 0 → ApiVersions v3 corr=1")
            && lines[0].contains("client_id=\"test-client\""),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("conn 0 ← ApiVersions v3 corr=1") && lines[1].ends_with("ok"),
        "{}",
        lines[1]
    );
    let out = run(&["decode", file.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let jsons: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(jsons.len(), 8);
    assert_eq!(jsons[3]["kind"], "response");
    assert_eq!(jsons[3]["api_key"], 3);
    let out = run(&[
        "capture",
        file.to_str().unwrap(),
        "--api",
        "Produce",
        "--list",
    ]);
    // The connection's name line, then the exchange's two frames.
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().count(), 3);
    let _ = std::fs::remove_file(&file);
}

#[test]
fn a_capture_without_kafka_traffic_says_so() {
    // An HTTP exchange on port 80: no frame there looks like a Kafka request.
    let http = vec![
        (true, b"GET / HTTP/1.1\r\nHost: example\r\n\r\n".to_vec()),
        (
            false,
            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_vec(),
        ),
    ];
    let file = std::env::temp_dir().join(format!("kwire-http-{}.pcap", std::process::id()));
    std::fs::write(&file, pcap(Link::EthernetV4, &conversation(&http, 1460))).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", file.to_str().unwrap(), "--list"])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no Kafka traffic found"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Loss in a connection that is not Kafka is not Kafka's: no notes.
    let mut segs = conversation(&http, 10);
    segs.remove(4);
    let (frames, notes) = captured_of(&pcap(Link::EthernetV4, &segs));
    assert!(frames.is_empty() && notes.is_empty(), "{notes:?}");
}

/// Frames and skip notes of a capture.
fn captured_of(capture: &[u8]) -> (Vec<CapturedFrame>, Vec<Skipped>) {
    let (mut frames, mut notes) = (Vec::new(), Vec::new());
    let stats = for_each_captured(
        Catalogue::builtin(),
        capture,
        &CaptureOptions::default(),
        |c| {
            match c {
                Captured::Frame(f) => frames.push(f),
                Captured::Skipped(s) => notes.push(s),
                Captured::Tls(n) => panic!("no TLS here: {n:?}"),
                Captured::Conn(_) => {}
            }
            true
        },
    )
    .unwrap();
    assert!(stats.error.is_none(), "{:?}", stats.error);
    assert_eq!(
        (stats.frames, stats.skips, stats.skipped_bytes),
        (
            frames.len(),
            notes.len(),
            notes.iter().map(|s| s.bytes).sum()
        )
    );
    (frames, notes)
}

/// `kwire capture FILE ARGS…` on a capture written to a temporary file: exit status, stdout, stderr.
fn cli(name: &str, capture: &[u8], args: &[&str]) -> (Option<i32>, String, String) {
    let file = std::env::temp_dir().join(format!("kwire-{name}-{}.pcap", std::process::id()));
    std::fs::write(&file, capture).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .arg("capture")
        .arg(&file)
        .args(args)
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&file);
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The JSON skip records of `--json` output.
fn skip_records(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("one JSON object per line"))
        .filter(|v| v["kind"] == "skipped")
        .collect()
}

/// `traffic()` with `extra` sent by the client just before the Produce request.
fn traffic_with_before_produce(extra: Vec<u8>) -> Vec<(bool, Vec<u8>)> {
    let mut t = traffic();
    t.insert(4, (true, extra));
    t
}

/// Where the Produce request starts in the client's stream.
fn produce_offset() -> u64 {
    traffic()[..4]
        .iter()
        .filter(|f| f.0)
        .map(|f| f.1.len() as u64)
        .sum()
}

#[test]
fn garbage_between_frames_is_noted_and_the_next_frame_marked() {
    // 37 bytes no frame starts in (a negative size prefix first), between the
    // Metadata and Produce requests.
    let capture = pcap(
        Link::EthernetV4,
        &conversation(&traffic_with_before_produce(vec![0xff; 37]), 100),
    );
    let (frames, notes) = captured_of(&capture);
    assert_eq!(frames.len(), 8);
    let produce = frames
        .iter()
        .find(|f| f.api_key == Some(0) && f.direction == Direction::Request)
        .unwrap();
    assert!(produce.after_gap);
    assert_eq!(frames.iter().filter(|f| f.after_gap).count(), 1);
    assert_eq!(notes.len(), 1);
    let s = &notes[0];
    assert_eq!(
        (s.conn, s.direction, s.offset, s.bytes, s.reason),
        (
            0,
            Direction::Request,
            produce_offset(),
            37,
            SkipReason::BadSize(-1)
        )
    );
    assert_eq!(produce.offset, produce_offset() + 37);

    let (status, out, err) = cli("garbage", &capture, &["--list"]);
    assert_eq!(status, Some(2), "{err}");
    let lines = common::frame_rows(&out);
    assert_eq!(lines.len(), 9, "{out}");
    let note = lines.iter().position(|l| l.contains(" skipped ")).unwrap();
    assert!(
        lines[note].contains(&format!(
            "conn 0 → skipped 37B at stream offset {}: frame size -1 is negative",
            produce_offset()
        )),
        "{}",
        lines[note]
    );
    assert!(
        lines[note + 1].contains("Produce v9") && lines[note + 1].contains("[after gap]"),
        "{}",
        lines[note + 1]
    );
    assert!(err.contains("37 bytes in 1 place are in no frame"), "{err}");

    let (status, out, _) = cli("garbage", &capture, &["--json"]);
    assert_eq!(status, Some(2));
    let records = skip_records(&out);
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(
        (
            &r["conn"],
            &r["direction"],
            &r["offset"],
            &r["bytes"],
            &r["reason"]
        ),
        (
            &json!(0),
            &json!("request"),
            &json!(produce_offset()),
            &json!(37),
            &json!("bad_size")
        )
    );
    assert_eq!(out.lines().count(), 9);

    let (status, out, _) = cli("garbage", &capture, &[]);
    assert_eq!(status, Some(2));
    assert!(
        out.contains("# skipped conn 0 10.0.0.1:50000 → 10.0.0.2:9092"),
        "{out}"
    );

    // A frame filter hides the note, but neither the status nor stderr forget it.
    let (status, out, err) = cli("garbage", &capture, &["--list", "--api", "Metadata"]);
    assert_eq!((status, common::frame_rows(&out).len()), (Some(2), 2));
    assert!(
        err.contains("37 bytes in 1 place") && err.contains("without --api"),
        "{err}"
    );
}

#[test]
fn a_partial_frame_at_the_end_of_a_capture_is_noted() {
    let t = traffic();
    let mut segs = conversation(&t, 20);
    // The capture stops 3 segments (60 bytes) before the end of the Fetch response.
    segs.truncate(segs.len() - 3);
    let capture = pcap(Link::EthernetV4, &segs);
    let (frames, notes) = captured_of(&capture);
    assert_eq!(frames.len(), 7);
    let fetch = &t[7].1;
    assert_eq!(notes.len(), 1);
    let s = &notes[0];
    let response_stream: u64 = t.iter().filter(|f| !f.0).map(|f| f.1.len() as u64).sum();
    let cut = fetch.len().div_ceil(20) * 20 - 60;
    assert_eq!(
        (s.direction, s.offset, s.bytes),
        (
            Direction::Response,
            response_stream - fetch.len() as u64,
            cut as u64
        )
    );
    assert_eq!(
        s.reason,
        SkipReason::Partial {
            declared: Some(fetch.len() as u64),
            cut_by: StreamCut::EndOfCapture
        }
    );

    let (status, out, err) = cli("partial", &capture, &["--list", "--wide"]);
    assert_eq!(status, Some(2), "{err}");
    assert!(out.lines().last().unwrap().contains(&format!("skipped {cut}B at stream offset {}: a partial frame (it declares {} bytes), cut short by the end of the capture", s.offset, fetch.len())), "{out}");
    let (_, out, _) = cli("partial", &capture, &["--json"]);
    let records = skip_records(&out);
    assert_eq!(
        (
            &records[0]["reason"],
            &records[0]["declared"],
            &records[0]["direction"]
        ),
        (
            &json!("partial_frame"),
            &json!(fetch.len()),
            &json!("response")
        )
    );
}

#[test]
fn a_frame_declaring_over_100_mb_and_what_follows_it_are_noted() {
    let mut extra = (200i32 << 20).to_be_bytes().to_vec();
    extra.extend([0xee; 500]);
    let capture = pcap(
        Link::EthernetV4,
        &conversation(&traffic_with_before_produce(extra), 1460),
    );
    let (frames, notes) = captured_of(&capture);
    assert_eq!(frames.len(), 8, "every frame after it is found");
    assert_eq!(notes.len(), 1);
    assert_eq!(
        (notes[0].offset, notes[0].bytes, notes[0].reason),
        (produce_offset(), 504, SkipReason::BadSize(200 << 20))
    );
    let (status, out, _) = cli("oversized", &capture, &["--json"]);
    assert_eq!(status, Some(2));
    let records = skip_records(&out);
    assert_eq!(
        (&records[0]["bytes"], &records[0]["reason"]),
        (&json!(504), &json!("bad_size"))
    );
    assert!(
        records[0]["note"]
            .as_str()
            .unwrap()
            .contains("over the 100 MiB limit"),
        "{}",
        records[0]
    );
}

#[test]
fn a_lost_segment_is_noted_as_a_partial_frame_and_a_gap() {
    let expected = traffic();
    let mut segs = conversation(&expected, 20);
    let metadata_req_start = 2 + expected[..2]
        .iter()
        .map(|f| f.1.len().div_ceil(20))
        .sum::<usize>();
    segs.remove(metadata_req_start + 1);
    let (_, notes) = captured_of(&pcap(Link::EthernetV4, &segs));
    let metadata_at = expected[0].1.len() as u64;
    let got: Vec<_> = notes
        .iter()
        .map(|s| (s.offset, s.bytes, s.reason))
        .collect();
    let rest = expected[2].1.len() as u64 - 40;
    assert_eq!(
        got,
        [
            (
                metadata_at,
                20,
                SkipReason::Partial {
                    declared: Some(expected[2].1.len() as u64),
                    cut_by: StreamCut::Gap
                }
            ),
            (metadata_at + 20, 20, SkipReason::Gap),
            (metadata_at + 40, rest, SkipReason::NoFrame),
        ]
    );
}

#[test]
fn every_byte_of_a_stream_is_in_a_frame_or_a_note() {
    let mut rng: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    for round in 0..60 {
        // Garbage between frames (after the first exchange, which finds the client side).
        let mut frames = traffic();
        for _ in 0..next(3) {
            let len = 1 + next(60) as usize;
            let garbage: Vec<u8> = (0..len).map(|_| next(256) as u8).collect();
            let at = 2 + next(frames.len() as u64 - 1) as usize;
            frames.insert(at, (next(2) == 0, garbage));
        }
        let mss = 1 + next(80) as usize;
        let mut segs = conversation(&frames, mss);
        // Lose segments (not of the first exchange), and maybe the end of the capture.
        let keep_from = 2 + frames[..2]
            .iter()
            .map(|f| f.1.len().div_ceil(mss))
            .sum::<usize>();
        let mut i = keep_from;
        while i < segs.len() {
            if next(12) == 0 {
                segs.remove(i);
            } else {
                i += 1;
            }
        }
        if next(3) == 0 {
            let cut = next((segs.len() - keep_from) as u64) as usize;
            segs.truncate(segs.len() - cut);
        }
        let (frames, notes) = captured_of(&pcap(Link::EthernetV4, &segs));
        for client in [true, false] {
            let direction = if client {
                Direction::Request
            } else {
                Direction::Response
            };
            let isn = if client { CLIENT_ISN } else { SERVER_ISN };
            // The stream as captured ends with the last segment's last byte.
            let end = segs
                .iter()
                .filter(|s| s.from_client == client && !s.syn)
                .map(|s| {
                    u64::from(s.seq.wrapping_sub(isn.wrapping_add(1))) + s.payload.len() as u64
                })
                .max()
                .unwrap_or(0);
            let mut pieces: Vec<(u64, u64, &str)> = frames
                .iter()
                .filter(|f| f.direction == direction)
                .map(|f| (f.offset, f.len as u64, "frame"))
                .collect();
            pieces.extend(
                notes
                    .iter()
                    .filter(|s| s.direction == direction)
                    .map(|s| (s.offset, s.bytes, s.reason.code())),
            );
            pieces.sort();
            let mut at = 0;
            for &(offset, len, what) in &pieces {
                assert_eq!(
                    offset, at,
                    "round {round}, {direction:?}: {what} at {offset} after {at}: {pieces:?}"
                );
                at += len;
            }
            assert_eq!(at, end, "round {round}, {direction:?}: {pieces:?}");
        }
        // A frame right after skipped bytes says so.
        for f in &frames {
            let after_note = notes
                .iter()
                .any(|s| s.direction == f.direction && s.offset + s.bytes == f.offset);
            assert_eq!(f.after_gap, after_note, "round {round}: frame {}", f.index);
        }
    }
}

/// `kwire capture - ARGS…` with the capture on standard input: exit status, stdout, stderr.
fn cli_stdin(capture: &[u8], args: &[&str]) -> (Option<i32>, String, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", "-"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = capture.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn a_file_decoded_on_worker_threads_reads_as_a_stream_decoded_in_order() {
    // 50 rounds of 8 frames, skip notes after some: a file's frames go to
    // worker threads in batches (a note waits for those before it), a
    // stream's are decoded one by one as they complete; the output is the same.
    // Every fifth round also a Produce request of 40 records, whose tree
    // (about 30 KB of text) goes out by a vectored write, not copied.
    let records: Vec<_> = (0..40)
        .map(|i| {
            common::batches::rec(
                Some(format!("key-{i}").as_bytes()),
                Some(&[b'v'; 60]),
                &[],
                i,
            )
        })
        .collect();
    let big = common::batches::produce(
        Catalogue::builtin(),
        "orders",
        &common::batches::batch(0, 0, &records),
    );
    let mut t = Vec::new();
    for round in 0..50 {
        t.extend(if round % 7 == 3 {
            traffic_with_before_produce(vec![0xff; 37 + round])
        } else {
            traffic()
        });
        if round % 5 == 0 {
            t.push((true, big.clone()));
        }
    }
    let capture = pcap(Link::EthernetV4, &conversation(&t, 100));
    // Skipped notes: rounds 3, 10, 17, 24, 31, 38 and 45.
    let cases: [(&[&str], usize, usize); 4] = [
        (&[], 410, 7),
        (&["--json"], 410, 7),
        (&["--format", "tree-json"], 410, 7),
        (&["--api", "Produce"], 110, 0),
    ];
    for (args, frames, notes) in cases {
        let (status, out, err) = cli("in-order", &capture, args);
        let stream = cli_stdin(&capture, args);
        assert_eq!(
            (status, &out, &err),
            (stream.0, &stream.1, &stream.2),
            "{args:?}"
        );
        assert_eq!(
            status,
            Some(2),
            "{args:?}: the skip notes make the status 2\n{err}"
        );
        let (shown_frames, shown_notes) = if args.is_empty() || args[0] == "--api" {
            (
                out.lines().filter(|l| l.starts_with("# frame ")).count(),
                out.lines().filter(|l| l.starts_with("# skipped ")).count(),
            )
        } else {
            let notes = skip_records(&out).len();
            (out.lines().count() - notes, notes)
        };
        assert_eq!((shown_frames, shown_notes), (frames, notes), "{args:?}");
    }
}

/// IP fragments (IPv4 and IPv6, in order and reversed) are put back together:
/// the frames are those of the same traffic unfragmented; a datagram missing
/// a fragment is said on stderr and its data is a gap.
#[test]
fn ip_fragments_are_reassembled_and_lost_ones_said() {
    use common::pcap_writer::pcap_fragmented;
    let expected = traffic();
    for link in [Link::EthernetV4, Link::NullV6] {
        let segs = conversation(&expected, 1460);
        let whole = frames_of(&pcap(link, &segs), None);
        let pieces = frames_of(&pcap_fragmented(link, &segs, 64, &[]), None);
        assert_eq!(pieces.len(), expected.len(), "{link:?}");
        for (a, b) in whole.iter().zip(&pieces) {
            assert_eq!(
                (&a.bytes, a.api_key, a.direction),
                (&b.bytes, b.api_key, b.direction),
                "{link:?}"
            );
        }
        let (status, list, err) = cli(
            "fragments",
            &pcap_fragmented(link, &segs, 64, &[]),
            &["--list"],
        );
        assert_eq!(status, Some(0), "{err}");
        assert!(!err.contains("IP fragments"), "{err}");
        assert_eq!(common::frame_rows(&list).len(), expected.len(), "{list}");
        // The datagram of segment 7 (after the handshake's 3, the Produce response) loses its second fragment.
        let (status, list, err) = cli(
            "fragments-lost",
            &pcap_fragmented(link, &segs, 64, &[(7, 1)]),
            &["--list", "--wide"],
        );
        assert!(
            err.contains("IP fragments (")
                && err.contains("belong to datagrams the capture never completed"),
            "{err}"
        );
        let frames = common::frame_rows(&list)
            .into_iter()
            .filter(|l| !l.trim_start().starts_with("- "));
        assert_eq!(frames.count(), expected.len() - 1, "{list}");
        assert!(
            list.contains("never captured (missing from the TCP stream)"),
            "{list}"
        );
        assert_eq!(status, Some(2), "{err}");
    }
}

/// `--guess` names an unpaired response's API by a guess, and `--list` says
/// it is one; a paired response's line has its latency instead.
#[test]
fn guessed_responses_are_marked_and_paired_ones_have_their_latency() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/captures/lone-response.pcap"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", path, "--port", "19092", "--guess", "--list"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let first: Vec<&str> = common::frame_rows(&text).into_iter().take(2).collect();
    assert!(
        first[0].ends_with("conn 0 ← guessed GetTelemetrySubscriptions v0 corr=2 48B ok"),
        "{text}"
    );
    assert!(
        first[1].ends_with("conn 0 ← guessed Produce v12 corr=3 57B ok"),
        "{text}"
    );
    let paired = text
        .lines()
        .find(|l| l.contains(" ← ") && l.contains("ApiVersions v3 corr=1"))
        .expect("a paired ApiVersions response");
    assert!(!paired.contains("guessed"), "{paired}");
    let (_, after_size) = paired.split_once("B ").unwrap();
    assert!(
        after_size.ends_with(" ms ok"),
        "latency before the summary: {paired}"
    );
}

/// A retransmission or overlap whose bytes differ from the copy already
/// read is said on stderr (the first copy is decoded); the same bytes again
/// (an ordinary retransmission) say nothing.
#[test]
fn retransmissions_with_other_bytes_are_said_and_the_first_copy_kept() {
    let segs = conversation(&traffic(), 40);
    let frame_bytes = |capture: &[u8]| -> Vec<Vec<u8>> {
        frames_of(capture, None)
            .iter()
            .map(|f| f.bytes.to_vec())
            .collect()
    };
    let whole = frame_bytes(&pcap(Link::EthernetV4, &segs));
    // The Produce request's second segment: its frame is still being read.
    let at = segs
        .iter()
        .position(|s| s.from_client && s.seq == CLIENT_ISN + 1 + produce_offset() as u32 + 40)
        .expect("the Produce request's second segment");
    let with = |copy: Seg| {
        let mut s = segs.clone();
        s.insert(at + 1, copy);
        pcap(Link::EthernetV4, &s)
    };
    // The same bytes again: nothing to say.
    let same = with(segs[at].clone());
    let (status, _, err) = cli("retransmit-same", &same, &["--list"]);
    assert_eq!(status, Some(0), "{err}");
    assert!(!err.contains("other than the copy"), "{err}");
    // Other bytes: said, and every frame is the first copy's.
    let mut changed = segs[at].clone();
    changed.payload[3] ^= 0xff;
    let other = with(changed);
    assert_eq!(frame_bytes(&other), whole);
    let (status, _, err) = cli("retransmit-other", &other, &["--list"]);
    assert_eq!(status, Some(0), "{err}");
    assert!(
        err.contains(&format!(
            "1 TCP segment carried bytes other than the copy already read for the same stream bytes (first: conn 0, the client's stream at offset {}); the first copy was decoded",
            produce_offset() + 43
        )),
        "{err}"
    );
    // Out of order: the request's third segment comes before its second
    // and is held back, then a copy of it with other bytes.
    let mut s = segs.clone();
    let third = s.remove(at + 1);
    let mut over = third.clone();
    over.payload[0] ^= 0xff;
    s.insert(at, third);
    s.insert(at + 1, over);
    let reordered = pcap(Link::EthernetV4, &s);
    assert_eq!(frame_bytes(&reordered), whole);
    let (_, _, err) = cli("overlap-other", &reordered, &["--list"]);
    assert!(
        err.contains("1 TCP segment carried bytes other than"),
        "{err}"
    );
}

/// A connection joined mid-stream whose client side is known only later
/// (here when another connection shows the broker's address): its frames
/// keep the time of the packet that completed each, and a FIN that came
/// while it was not known is said in its turn, by the side that sent it
/// (the truth from the packets: responses at .022223 and .022584, the
/// client's FIN at .022906, the broker's at .023157).
#[test]
fn frames_held_until_the_client_side_is_known_keep_their_packets_times() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/captures/lone-response.pcap"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["capture", path, "--list", "--wide"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let conn0: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(" conn 0 "))
        .map(|l| l.split_once("Z conn 0 ").map_or(l, |(time, _)| time))
        .map(|time| &time[time.len() - 6..])
        .collect();
    assert_eq!(conn0, ["022223", "022584", "022906", "023157"], "{text}");
    assert!(
        text.contains("022906Z conn 0 → closed by the client (FIN)")
            && text.contains("023157Z conn 0 ← closed by the broker (FIN)"),
        "{text}"
    );
}
