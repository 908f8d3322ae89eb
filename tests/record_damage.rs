//! Damage in record data is never silent: exit status 2 and the damage in
//! every format (`decode` tree, JSON, tree JSON; `records` tree and dump).

mod common;

use common::batches::{batch, batch_of, legacy_message, produce, record_bytes, Rec};
use kwire::schema::Catalogue;

/// Exit status, standard output and standard error of `kwire ARGS < stdin`.
fn kwire(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let out = common::kwire_with_stdin(args, stdin);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn records() -> Vec<Rec> {
    vec![
        Rec {
            key: Some(b"k".to_vec()),
            value: Some(b"v".to_vec()),
            headers: vec![],
            timestamp_delta: 0,
        },
        Rec {
            key: None,
            value: Some(b"second".to_vec()),
            headers: vec![],
            timestamp_delta: 1,
        },
    ]
}

/// A batch whose checksum no longer matches its bytes.
fn bad_crc() -> Vec<u8> {
    let mut b = batch(0, 0, &records());
    b[30] ^= 1;
    b
}

/// A batch whose second record's length runs past the batch (checksum made again).
fn bad_record() -> Vec<u8> {
    let mut b = batch(0, 0, &records());
    // The first record's length varint is at 61; the second record starts after it.
    let first_len = (b[61] >> 1) as usize;
    b[61 + 1 + first_len] = 0x7e; // a length of 63, past the end
    let crc = kwire::protocol::crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

fn unknown_codec() -> Vec<u8> {
    let mut b = batch(0, 0, &records());
    b[22] |= 0x07;
    let crc = kwire::protocol::crc32c::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// The records of [`records`] from `base_offset` on, with the first one's length one more than its
/// fields use (and a byte to cover it), in a batch of `attributes`' codec:
/// every field reads, but the batch is not what a producer writes and a
/// broker refuses it as corrupt.
fn record_length_off(base_offset: i64, attributes: i16) -> Vec<u8> {
    let recs = records();
    let first = record_bytes(&recs[0], 0);
    let len = i64::from(first[0] >> 1);
    assert_eq!(len, 8, "the message the tests expect");
    let mut bytes = vec![((len + 1) << 1) as u8];
    bytes.extend_from_slice(&first[1..]);
    bytes.push(0);
    bytes.extend(record_bytes(&recs[1], 1));
    batch_of(base_offset, attributes, &bytes, 2)
}

#[test]
fn a_record_length_not_what_its_fields_used_is_damage_to_every_command() {
    let frame = produce(Catalogue::builtin(), "t", &record_length_off(0, 0));
    let (status, out, err) = kwire(&["decode", "--binary", "-"], &frame);
    assert_eq!(status, 2, "{out}{err}");
    assert!(
        out.contains("\nerror: 0x005c: record length 9 but fields used 8\n"),
        "{out}"
    );
    assert_eq!(
        err.trim(),
        "kwire: frame at input offset 0: record data: at offset 0x005c (92): a record length of 8 (what its fields used), found 9"
    );
    let (status, out, _) = kwire(&["decode", "--binary", "--json", "-"], &frame);
    assert_eq!(status, 2);
    assert!(
        out.contains(r#""record_errors":[{"offset":92,"expected":"a record length of 8 (what its fields used), found 9"}]"#),
        "{out}"
    );
    // A log segment of a clean batch, then that one: said once, at its place in the file.
    let mut log = batch(0, 0, &records());
    let position = log.len();
    log.extend(record_length_off(2, 0));
    let (status, _, err) = kwire(&["records", "--format", "dump", "-"], &log);
    assert_eq!(status, 2, "{err}");
    let at = position + 61;
    assert_eq!(
        err.trim(),
        format!("kwire: record data at offset 0x{at:04x} ({at}): a record length of 8 (what its fields used), found 9"),
    );
}

#[test]
fn a_finding_in_decompressed_data_is_placed_at_the_compressed_bytes() {
    let frame = produce(Catalogue::builtin(), "t", &record_length_off(0, 1));
    let (status, out, err) = kwire(&["decode", "--binary", "-"], &frame);
    assert_eq!(status, 2);
    // The compressed records start at 0x005c, after the batch's 61 bytes of header.
    assert!(
        out.contains("\nerror: 0x005c: in the data decompressed from here, at d:0x0000: record length 9 but fields used 8\n"),
        "{out}"
    );
    assert!(
        err.contains("record data: at offset 0x005c (92): in the data decompressed from here, at d:0x0000: a record length of 8"),
        "{err}"
    );
}

#[test]
fn decode_exits_2_and_shows_record_damage_in_every_format() {
    for (what, batch) in [
        ("bad crc", bad_crc()),
        ("bad record", bad_record()),
        ("unknown codec", unknown_codec()),
    ] {
        let frame = produce(Catalogue::builtin(), "t", &batch);
        for format in ["tree", "json", "tree-json"] {
            let (status, out, err) =
                kwire(&["decode", "--binary", "--format", format, "-"], &frame);
            assert_eq!(status, 2, "{what} {format}: {err}");
            assert!(err.contains("record data"), "{what} {format}: {err}");
            match format {
                "json" | "tree-json" => {
                    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
                    let errors = v["record_errors"]
                        .as_array()
                        .unwrap_or_else(|| panic!("{what} {format}: {out}"));
                    assert!(!errors.is_empty());
                    let offset = errors[0]["offset"].as_u64().unwrap() as usize;
                    assert!(
                        offset > 40 && offset < frame.len(),
                        "{what}: offset {offset}"
                    );
                }
                _ => assert!(
                    out.contains("!!") || out.contains("\nerror: 0x"),
                    "{what}: {out}"
                ),
            }
        }
    }
    // An undamaged batch: exit 0, no record_errors.
    let (status, out, err) = kwire(
        &["decode", "--binary", "--json", "-"],
        &produce(Catalogue::builtin(), "t", &batch(0, 0, &records())),
    );
    assert_eq!(status, 0, "{err}");
    assert!(!out.contains("record_errors"));
}

#[test]
fn the_dump_prints_damage_never_invented_values() {
    for (what, log) in [
        ("bad record", bad_record()),
        ("unknown codec", unknown_codec()),
        ("bad crc", bad_crc()),
    ] {
        let (status, out, err) = kwire(&["records", "--format", "dump", "-"], &log);
        assert_eq!(status, 2, "{what}: {err}");
        assert!(!out.contains("offset: -1"), "{what}: {out}");
        assert!(err.contains("record data"), "{what}: {err}");
        match what {
            "bad crc" => assert!(out.contains("crcValid: false"), "{out}"),
            _ => assert!(out.contains("| damaged"), "{what}: {out}"),
        }
    }
    // A legacy message is no RecordBatch v2: said so, with no -1 fields.
    let (status, out, _) = kwire(
        &["records", "--format", "dump", "-"],
        &legacy_message(0, 1, 0, Some(b"k"), Some(b"v")),
    );
    assert_eq!(status, 0);
    assert!(out.contains("not a RecordBatch v2"), "{out}");
    assert!(!out.contains("-1"), "{out}");
}

#[test]
fn the_largest_budget_on_the_command_line_does_not_wrap_to_nothing() {
    let frame = produce(Catalogue::builtin(), "t", &batch(0, 1, &records()));
    let (status, out, err) = kwire(
        &[
            "decode",
            "--binary",
            "--max-decompressed",
            "18446744073709551615",
            "-",
        ],
        &frame,
    );
    assert_eq!(status, 0, "{err}");
    assert!(out.contains("Record[1]"), "{out}");
    // Past 2^64, and with a suffix that would overflow: a wrong command line.
    for too_big in ["18446744073709551616", "17179869184G"] {
        let (status, _, err) = kwire(
            &["decode", "--binary", "--max-decompressed", too_big, "-"],
            &frame,
        );
        assert_eq!(status, 2, "{too_big}: {err}");
        assert!(err.contains("byte count"), "{err}");
    }
    // A budget of nothing decompresses nothing, and says so.
    let (status, _, err) = kwire(
        &["decode", "--binary", "--max-decompressed", "0", "-"],
        &frame,
    );
    assert_eq!(status, 2);
    assert!(err.contains("--max-decompressed"), "{err}");
}
