//! Exit statuses on damaged record data: the commands that read record data
//! (`capture`'s trees, `check`, `records`) end with status 2 (`check`: 3)
//! when a batch's CRC is wrong, a Produce request's batch is cut short (a
//! producer sends whole batches; only a fetch's size limit cuts one) or a
//! record's length is not what its fields used, so
//! that scripts can tell a clean capture from a damaged one; on a clean
//! capture every command ends with 0. (`--list`, `stats` and `report` read
//! no record data, so they do not see record damage.)

mod common;

use common::batches::{batch, produce, Rec};
use common::exchanges::{TempCapture, Timeline};

fn kwire(args: &[&str]) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

fn record() -> Rec {
    Rec {
        key: Some(b"k".to_vec()),
        value: Some(b"a value".to_vec()),
        headers: vec![],
        timestamp_delta: 0,
    }
}

fn records() -> Vec<u8> {
    batch(0, 0, &[record()])
}

/// A capture of one Produce request whose records are `records`.
fn produce_capture(name: &str, records: &[u8]) -> TempCapture {
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &produce(kwire::schema::Catalogue::builtin(), "orders", records),
    );
    TempCapture::new(name, &t.pcap())
}

const COMMANDS: [&[&str]; 6] = [
    &["capture", "--list"],
    &["capture"],
    &["check"],
    &["stats"],
    &["records"],
    &["report", "--out"],
];

fn run_all(cap: &TempCapture) -> Vec<(String, Option<i32>, String)> {
    let html = std::env::temp_dir().join(format!("kwire-exit-{}.html", std::process::id()));
    COMMANDS
        .iter()
        .map(|args| {
            let mut a: Vec<String> = vec![args[0].to_string(), cap.path().to_string()];
            a.extend(args[1..].iter().map(|s| s.to_string()));
            if args.contains(&"--out") {
                a.push(html.display().to_string());
            }
            let a: Vec<&str> = a.iter().map(String::as_str).collect();
            let (status, out) = kwire(&a);
            let _ = std::fs::remove_file(&html);
            (args.join(" "), status, out)
        })
        .collect()
}

#[test]
fn damaged_records_make_every_command_exit_2() {
    let mut bad_crc = records();
    let last = bad_crc.len() - 1;
    bad_crc[last] ^= 0x01; // the record's last byte: the CRC no longer matches
    let good = records();
    let cut = good[..good.len() - 5].to_vec();
    // A record length one more than its fields use (a byte to cover it): every field reads.
    let one = common::batches::record_bytes(&record(), 0);
    let mut longer = vec![one[0] + 2];
    longer.extend_from_slice(&one[1..]);
    longer.push(0);
    let record_length = common::batches::batch_of(0, 0, &longer, 1);
    let mut wrong = Vec::new();
    for (name, recs) in [
        ("bad-crc", bad_crc),
        ("cut-batch", cut),
        ("record-length", record_length),
    ] {
        let cap = produce_capture(name, &recs);
        for (cmd, status, out) in run_all(&cap) {
            if !["capture", "check", "records"].contains(&cmd.as_str()) {
                continue;
            }
            let want = if cmd == "check" { Some(3) } else { Some(2) };
            if status != want {
                wrong.push(format!(
                    "{name}: kwire {cmd}: {status:?}, not {want:?}\n{out}"
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let cap = produce_capture("clean", &records());
    for (cmd, status, out) in run_all(&cap) {
        assert_eq!(status, Some(0), "clean: kwire {cmd}: {out}");
    }
}

#[test]
fn check_on_skipped_bytes_says_them_and_exits_2() {
    // A request's first 14 bytes, then the connection closes: a partial frame.
    let mut t = Timeline::default();
    let whole = produce(kwire::schema::Catalogue::builtin(), "orders", &records());
    t.send(50000, true, &whole[..14]);
    let cap = TempCapture::new("check-skipped", &t.pcap());
    let (status, out) = kwire(&["check", cap.path()]);
    assert_eq!(status, Some(2), "{out}");
    assert!(
        out.contains("14 bytes in 1 place are in no frame")
            && out.contains("no whole Kafka frame was found")
            && !out.contains("no Kafka traffic found"),
        "{out}"
    );
    // Bytes in no frame beside whole frames: still 2 (no finding is an error).
    let mut t = Timeline::default();
    t.send(50000, true, &whole);
    t.send(50001, true, &whole[..14]);
    let cap = TempCapture::new("check-skipped-2", &t.pcap());
    let (status, out) = kwire(&["check", cap.path()]);
    assert_eq!(status, Some(2), "{out}");
}

/// A request of an API key no definition knows (9999), then a known one.
fn unknown_api_capture() -> TempCapture {
    let mut unknown = common::exchanges::smallest(kwire::decode::Direction::Request, 18, 3, 1, 0);
    unknown[4..6].copy_from_slice(&9999i16.to_be_bytes());
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &common::exchanges::smallest(kwire::decode::Direction::Request, 18, 3, 0, 0),
    );
    t.send(50000, true, &unknown);
    TempCapture::new("unknown-api", &t.pcap())
}

#[test]
fn a_request_of_an_unknown_api_makes_every_command_exit_2() {
    let cap = unknown_api_capture();
    let mut wrong = Vec::new();
    for (cmd, status, out) in run_all(&cap) {
        let want = if cmd == "check" { Some(3) } else { Some(2) };
        if status != want {
            wrong.push(format!("kwire {cmd}: {status:?}, not {want:?}\n{out}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_client_id_that_is_not_utf8_is_listed_with_its_bytes() {
    // ApiVersions v3 with client id "ab\xff" (header v2: the client id is a nullable int16 string).
    let mut f = common::exchanges::smallest(kwire::decode::Direction::Request, 18, 3, 7, 0);
    let id_at = 12;
    assert_eq!(
        &f[id_at..id_at + 2],
        &[0, 0],
        "an empty client id to replace"
    );
    f.splice(id_at..id_at + 2, [0, 3, b'a', b'b', 0xff]);
    let size = (f.len() - 4) as i32;
    f[..4].copy_from_slice(&size.to_be_bytes());
    let mut t = Timeline::default();
    t.send(50000, true, &f);
    let cap = TempCapture::new("non-utf8-client", &t.pcap());
    let (_, out) = kwire(&["capture", cap.path(), "--list"]);
    let row = common::frame_rows(&out).join("\n");
    assert!(
        row.contains("client_id=") && row.contains("ab") && row.contains("xff"),
        "{out}"
    );
}
