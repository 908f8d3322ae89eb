//! The command line as a user runs it: golden transcripts under snapshots/,
//! exit statuses, and error messages. `KWIRE_UPDATE_SNAPSHOTS=1` rewrites them.

mod common;

use common::batches::{fetch_v4, produce, record_batch_cases, Entry};
use kwire::schema::Catalogue;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn kwire(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kwire"));
    cmd.args(args)
        .current_dir(root())
        .env_remove("KWIRE_DEFS")
        .env_remove("NO_COLOR")
        // Text fits 120 columns without a terminal, whatever the shell exports.
        .env_remove("COLUMNS");
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run kwire");
    if let Some(input) = stdin {
        use std::io::Write;
        // A command may exit before it reads its input (a usage error): its
        // exit status and messages are the answer, and the pipe is closed.
        let _ = child.stdin.take().unwrap().write_all(input);
    }
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Compare with (or, when asked, rewrite) a golden transcript.
fn snapshot(name: &str, actual: &str) {
    let path: PathBuf = root().join("snapshots").join(name);
    if std::env::var("KWIRE_UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "{} missing: run with KWIRE_UPDATE_SNAPSHOTS=1",
            path.display()
        )
    });
    assert_eq!(
        actual, expected,
        "{name} differs from its snapshot (KWIRE_UPDATE_SNAPSHOTS=1 rewrites it)"
    );
}

const SAMPLES: &[(&str, &[&str])] = &[
    ("write-share-group-state-v0-request", &[]),
    (
        "write-share-group-state-v0-response",
        &[
            "--response",
            "--api",
            "WriteShareGroupState",
            "--version",
            "0",
        ],
    ),
    ("delete-share-group-state-v0-request", &[]),
    (
        "delete-share-group-state-v0-response",
        &["--response", "--api", "86", "--version", "0"],
    ),
    ("produce-v9-request", &[]),
    ("produce-v9-consumer-offsets-request", &[]),
    (
        "fetch-v12-response",
        &["--response", "--api", "Fetch", "--version", "12"],
    ),
    ("join-group-v9-request", &[]),
    ("sasl-authenticate-v2-request", &[]),
];

#[test]
fn samples_match_their_snapshots_in_every_format() {
    for (name, extra) in SAMPLES {
        let file = format!("samples/{name}.hex");
        for (format, ext) in [
            ("tree", "tree.txt"),
            ("grid", "grid.txt"),
            ("json", "json"),
            ("tree-json", "tree.json"),
        ] {
            let mut args = vec!["decode", file.as_str(), "--format", format];
            args.extend_from_slice(extra);
            let out = kwire(&args, None);
            assert!(out.status.success(), "{name} {format}: {}", stderr(&out));
            snapshot(&format!("{name}.{ext}"), &stdout(&out));
        }
    }
}

/// How a malformed frame is made from a sample.
enum Damage {
    /// Cut after this many bytes, the size prefix rewritten to say so.
    Cut(usize),
    /// Cut after this many bytes, the size prefix as it was: the frame is short.
    Short(usize),
    /// Bytes set at offsets.
    Set(&'static [(usize, u8)]),
}

/// Frames that stop part-way, made from the samples: their partial trees
/// show where and why (the failing node with the error, what was read before
/// it, a length or count that does not fit), and embedded bytes that are not
/// what the group said they would be.
const MALFORMED: &[(&str, &str, Damage, &[&str])] = &[
    (
        "join-group-v9-request-cut-in-metadata",
        "join-group-v9-request",
        Damage::Cut(0x50),
        &[],
    ),
    (
        "join-group-v9-request-protocols-count",
        "join-group-v9-request",
        Damage::Set(&[(0x36, 0x7f)]),
        &[],
    ),
    (
        "join-group-v9-request-bad-subscription",
        "join-group-v9-request",
        Damage::Set(&[(0x5d, 0x7f)]),
        &[],
    ),
    (
        "write-share-group-state-v0-request-tag-size",
        "write-share-group-state-v0-request",
        Damage::Set(&[(0x4a, 0x01), (0x4c, 0x7f)]),
        &[],
    ),
    (
        "write-share-group-state-v0-request-tag-count",
        "write-share-group-state-v0-request",
        Damage::Set(&[(0x4d, 0x05)]),
        &[],
    ),
    (
        "fetch-v12-response-short",
        "fetch-v12-response",
        Damage::Short(0xa0),
        &["--response", "--api", "Fetch", "--version", "12"],
    ),
];

#[test]
fn malformed_frames_match_their_snapshots() {
    for (name, sample, damage, extra) in MALFORMED {
        let text = std::fs::read_to_string(root().join(format!("samples/{sample}.hex"))).unwrap();
        let mut bytes = hex::decode(text.split_whitespace().collect::<String>()).unwrap();
        match damage {
            Damage::Cut(at) => {
                bytes.truncate(*at);
                bytes[..4].copy_from_slice(&((at - 4) as i32).to_be_bytes());
            }
            Damage::Short(at) => bytes.truncate(*at),
            Damage::Set(edits) => edits.iter().for_each(|(at, b)| bytes[*at] = *b),
        }
        snapshot_trees(
            &format!("malformed-{name}"),
            &[&["decode"], *extra].concat(),
            "tree-json",
            &bytes,
        );
    }
}

/// `kwire ARGS --format tree` and `--format JSON` on `input`, as hex on
/// standard input: what each writes, then its exit status, held to
/// `snapshots/NAME.tree.txt` and `NAME.tree.json`.
fn snapshot_trees(name: &str, args: &[&str], json: &str, input: &[u8]) {
    for (format, ext) in [("tree", "tree.txt"), (json, "tree.json")] {
        let args = [args, &["--format", format]].concat();
        let out = kwire(&args, Some(hex::encode(input).as_bytes()));
        let status = out.status.code().unwrap_or(-1);
        snapshot(
            &format!("{name}.{ext}"),
            &format!("{}{}exit status {status}\n", stdout(&out), stderr(&out)),
        );
    }
}

/// The trees of record batches of every kind (legacy, wrappers, control,
/// damaged, over budget, internal topics), locked while the record decoder
/// read them into nodes and held since to the nodes built from the tape (the
/// name is that of those days): `kwire decode` of a frame, or `kwire records`
/// of a segment, in tree and tree JSON, with the exit status.
/// `KWIRE_UPDATE_SNAPSHOTS=1` rewrites `snapshots/records-*`.
#[test]
fn record_batches_read_into_nodes_match_their_snapshots() {
    let cat = Catalogue::builtin();
    for case in record_batch_cases() {
        let topic: &[&str] = if case.topic.starts_with("__") {
            &["--topic", case.topic]
        } else {
            &[]
        };
        match case.entry {
            Entry::Produce => snapshot_trees(
                case.name,
                &[&["decode"], case.args].concat(),
                "tree-json",
                &produce(cat, case.topic, &case.records),
            ),
            Entry::FetchV4 => snapshot_trees(
                case.name,
                &[
                    &["decode", "--response", "--api", "Fetch", "--version", "4"],
                    case.args,
                ]
                .concat(),
                "tree-json",
                &fetch_v4(cat, case.topic, &case.records),
            ),
            Entry::Segment => snapshot_trees(
                case.name,
                &[&["records", "--hex", "-"], topic, case.args].concat(),
                "json",
                &case.records,
            ),
        }
    }
}

#[test]
fn example_reproduces_the_samples_byte_for_byte() {
    for (api, name) in [
        ("WriteShareGroupState", "write-share-group-state-v0"),
        ("DeleteShareGroupState", "delete-share-group-state-v0"),
    ] {
        let out = kwire(&["example", api, "--version", "0", "--format", "hex"], None);
        assert!(out.status.success());
        let lines: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
        for (line, dir) in lines.iter().zip(["request", "response"]) {
            let sample =
                std::fs::read_to_string(root().join(format!("samples/{name}-{dir}.hex"))).unwrap();
            let sample: String = sample.split_whitespace().collect();
            assert_eq!(line, &sample, "{api} {dir}");
        }
        assert_eq!(lines.len(), 2);
    }
}

#[test]
fn decode_json_then_encode_gives_back_the_bytes() {
    for (name, extra) in SAMPLES {
        let file = format!("samples/{name}.hex");
        // Redacted credentials are not encoded back: the round trip shows them.
        let mut args = vec!["decode", file.as_str(), "--json", "--show-secrets"];
        args.extend_from_slice(extra);
        let json = kwire(&args, None);
        let enc = kwire(&["encode"], Some(&json.stdout));
        assert!(enc.status.success(), "{name}: {}", stderr(&enc));
        let sample: String = std::fs::read_to_string(root().join(&file))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(stdout(&enc).trim(), sample, "{name}");
    }
}

#[test]
fn several_frames_back_to_back_and_pasted_dump_shapes() {
    let a: String =
        std::fs::read_to_string(root().join("samples/write-share-group-state-v0-request.hex"))
            .unwrap();
    let b: String =
        std::fs::read_to_string(root().join("samples/delete-share-group-state-v0-request.hex"))
            .unwrap();
    let both = format!("{a}{b}");
    let out = kwire(&["decode", "--json", "-"], Some(both.as_bytes()));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[0].contains("\"api_key\":85") && lines[1].contains("\"api_key\":86"));
    // The same bytes as `hexdump -C` prints them.
    let bytes = hex::decode(a.split_whitespace().collect::<String>()).unwrap();
    let mut dump = String::new();
    for (i, chunk) in bytes.chunks(16).enumerate() {
        let hexes: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
        let ascii: String = chunk
            .iter()
            .map(|&b| {
                if (0x20..0x7f).contains(&b) {
                    b as char
                } else {
                    '.'
                }
            })
            .collect();
        let (l, r) = hexes.split_at(hexes.len().min(8));
        dump.push_str(&format!(
            "{:08x}  {:<23}  {:<23}  |{ascii}|\n",
            i * 16,
            l.join(" "),
            r.join(" ")
        ));
    }
    dump.push_str(&format!("{:08x}\n", bytes.len()));
    let out = kwire(&["decode", "--json"], Some(dump.as_bytes()));
    assert!(out.status.success(), "{}\n{dump}", stderr(&out));
    assert_eq!(stdout(&out).lines().next().unwrap(), lines[0]);
}

#[test]
fn exit_statuses_and_messages() {
    // A truncated frame: the partial tree, an error naming the offset, status 2.
    let out = kwire(
        &["decode", "-"],
        Some(b"0000004a 0055 0000 0000 0000 0000 00 01 02 00 00"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stdout(&out).contains("WriteShareGroupStateRequest"),
        "partial tree shown"
    );
    assert!(stderr(&out).contains("at offset 0x"), "{}", stderr(&out));
    // A response without its API: a command line without an option it needs.
    let out = kwire(
        &[
            "decode",
            "--response",
            "samples/write-share-group-state-v0-response.hex",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--api"), "{}", stderr(&out));
    // An unknown API name gets suggestions.
    let out = kwire(&["example", "WriteShareGroupStat"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("did you mean WriteShareGroupState"),
        "{}",
        stderr(&out)
    );
    // A version out of range lists the valid ones.
    let out = kwire(
        &[
            "decode",
            "--response",
            "--api",
            "Produce",
            "--version",
            "99",
            "-",
        ],
        Some(b"00"),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("valid: 0-"), "{}", stderr(&out));
    // Not hex.
    let out = kwire(&["decode", "-"], Some(b"hello world"));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("not hex"), "{}", stderr(&out));
    // Unreadable file.
    let out = kwire(&["decode", "/nonexistent/kwire.hex"], None);
    assert_eq!(out.status.code(), Some(1));
    // Encode errors name the field.
    let out = kwire(
        &["encode", "WriteShareGroupState", "--version", "0"],
        Some(br#"{"GroupId": 5}"#),
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("body.GroupId"), "{}", stderr(&out));
    let out = kwire(
        &["encode", "WriteShareGroupState", "--version", "0"],
        Some(br#"{"Nope": 5}"#),
    );
    assert!(stderr(&out).contains("unknown field"), "{}", stderr(&out));
}

#[test]
fn apis_lists_every_api_with_its_facts() {
    let out = kwire(&["apis", "--format", "json"], None);
    assert!(out.status.success());
    let apis: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let apis = apis.as_array().unwrap();
    assert!(apis.len() > 80);
    let wsgs = apis
        .iter()
        .find(|a| a["api_name"] == "WriteShareGroupState")
        .unwrap();
    assert_eq!(wsgs["api_key"], 85);
    assert_eq!(wsgs["request_header_versions"], "2");
    assert_eq!(wsgs["response_header_versions"], "1");
    let av = apis
        .iter()
        .find(|a| a["api_name"] == "ApiVersions")
        .unwrap();
    assert_eq!(
        av["response_header_versions"], "0",
        "ApiVersions responses always use header v0"
    );
    let lai = apis
        .iter()
        .find(|a| a["api_name"] == "LeaderAndIsr")
        .unwrap();
    assert_eq!(lai["releases"], serde_json::json!(["3.9"]));
}

/// The teaching commands as a user runs them: diffs, --compare, --releases,
/// primitives and --explain.
const TEACHING: &[(&str, &[&str])] = &[
    (
        "diff-write-share-group-state-0-1.txt",
        &["diff", "WriteShareGroupState", "0", "1"],
    ),
    (
        "diff-metadata-compare-request.txt",
        &["diff", "Metadata", "--compare", "--request"],
    ),
    (
        "diff-write-share-group-state-releases-4.1-4.2.txt",
        &["diff", "WriteShareGroupState", "--releases", "4.1", "4.2"],
    ),
    (
        "diff-share-snapshot-value-releases-4.1-4.2.txt",
        &["diff", "ShareSnapshotValue", "--releases", "4.1", "4.2"],
    ),
    (
        "primitive-uvarint-300.txt",
        &["primitive", "uvarint", "300"],
    ),
    (
        "primitive-tagged-fields.txt",
        &["primitive", "tagged_fields", r#"{"0": "0a", "1": "abcd"}"#],
    ),
    (
        "example-metadata-v9-request.explain.txt",
        &[
            "example",
            "Metadata",
            "--version",
            "9",
            "--request",
            "--explain",
        ],
    ),
    (
        "write-share-group-state-v0-request.explain.txt",
        &[
            "decode",
            "samples/write-share-group-state-v0-request.hex",
            "--explain",
        ],
    ),
];

#[test]
fn records_of_a_capture_match_their_snapshot() {
    let out = kwire(&["records", "samples/captures/confluent-kafka.pcap"], None);
    assert!(out.status.success(), "{}", stderr(&out));
    snapshot("records-confluent-kafka.txt", &stdout(&out));
}

#[test]
fn teaching_commands_match_their_snapshots() {
    for (name, args) in TEACHING {
        let out = kwire(args, None);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        snapshot(name, &stdout(&out));
    }
}

#[test]
fn primitive_values_round_trip_through_the_command_line() {
    for (ty, value, hex) in [
        ("uvarint", "16384", "80 80 01"),
        ("varint", "-1", "01"),
        ("int16", "-32768", "80 00"),
        ("compact_nullable_string", "null", "00"),
        ("nullable_bytes", "null", "ff ff ff ff"),
        ("compact_string", "héllo", "07 68 c3 a9 6c 6c 6f"),
        ("float64", "-1.5", "bf f8 00 00 00 00 00 00"),
        ("tagged_fields", "{}", "00"),
    ] {
        let out = kwire(&["primitive", ty, value], None);
        assert!(out.status.success(), "{ty} {value}: {}", stderr(&out));
        let first = stdout(&out).lines().next().unwrap().to_string();
        assert!(
            first.contains(&format!("→ {hex} (")),
            "{ty} {value}: {first}"
        );
        let back = kwire(&["primitive", ty, "--hex", hex], None);
        assert!(back.status.success(), "{ty} {hex}: {}", stderr(&back));
        let first = stdout(&back).lines().next().unwrap().to_string();
        let shown = first.rsplit("→ ").next().unwrap();
        let expected = kwire::teach::primitive::parse_value(
            kwire::teach::primitive::WireType::parse(ty).unwrap(),
            value,
        )
        .unwrap();
        assert_eq!(shown, expected.to_string(), "{ty}: {first}");
    }
    let out = kwire(&["primitive", "int7", "1"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("known: bool, int8"),
        "{}",
        stderr(&out)
    );
    let out = kwire(&["primitive", "int8", "300"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("out of range -128..=127"),
        "{}",
        stderr(&out)
    );
    let out = kwire(&["primitive", "compact_string", "--hex", "05 61"], None);
    assert_eq!(out.status.code(), Some(2), "too few bytes is malformed");
    let out = kwire(
        &[
            "decode",
            "--explain",
            "--format",
            "grid",
            "samples/write-share-group-state-v0-request.hex",
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--explain annotates the tree"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn diff_json_and_errors() {
    let out = kwire(
        &["diff", "WriteShareGroupState", "0", "1", "--format", "json"],
        None,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        d["directions"][0]["changes"][0]["field"]["path"],
        "Topics.Partitions.DeliveryCompleteCount"
    );
    assert_eq!(d["directions"][0]["example"]["to_size"], 82);
    let out = kwire(
        &["diff", "--releases", "3.9", "4.0", "--format", "json"],
        None,
    );
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let produce = d["definitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "ProduceRequest")
        .unwrap();
    assert_eq!(produce["removed_versions"], serde_json::json!([0, 1, 2]));
    // 4.2 writes three fields' ignorable as the string "true", which Kafka
    // reads as true: 4.3's true is no change.
    let out = kwire(&["diff", "--releases", "4.2", "4.3"], None);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("4.2 → 4.3") && !text.contains("ignorable"),
        "{text}"
    );
    let out = kwire(&["diff", "WriteShareGroupState", "0", "7"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("has no request version 7; valid: 0-1"),
        "{}",
        stderr(&out)
    );
    let out = kwire(&["diff", "Produce", "--releases", "4.1", "9.9"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("unknown release \"9.9\""),
        "{}",
        stderr(&out)
    );
    let out = kwire(&["diff", "WriteShareGroupState", "--compare"], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("never switched to flexible"),
        "{}",
        stderr(&out)
    );
}

/// `kwire … 2>&1 | head -3`: a reader that closes the pipe before kwire
/// writes to it. Standard output's and standard error's writes both fail;
/// kwire must end with its usual status, never a panic (101).
#[test]
fn closed_standard_error_and_output_never_panic() {
    let cases: [(&[&str], &[u8]); 4] = [
        // Hex text that is not hex: an error on stderr.
        (&["decode", "-"], b"zz not hex at all\n"),
        // A frame with trailing bytes: a tree on stdout, a warning on stderr.
        (&["decode", "-"], b"0000000b0012000300000001ffff00ff\r"),
        // A capture read from stdin with skipped bytes and TLS notes.
        (&["capture", "-", "--list"], b"not a capture"),
        (&["check", "-"], b"\x00\x00\x00\x02\x00"),
    ];
    for (args, input) in cases {
        for close_stdout in [false, true] {
            let mut child = Command::new(env!("CARGO_BIN_EXE_kwire"))
                .args(args)
                .current_dir(root())
                .env_remove("KWIRE_DEFS")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("run kwire");
            // Close the read ends before kwire has its input, so every write fails.
            drop(child.stderr.take());
            let out = child.stdout.take();
            if close_stdout {
                drop(out);
            } else {
                std::thread::spawn(move || {
                    let mut sink = Vec::new();
                    let _ = std::io::Read::read_to_end(&mut out.unwrap(), &mut sink);
                });
            }
            {
                use std::io::Write;
                let mut stdin = child.stdin.take().unwrap();
                let _ = stdin.write_all(input);
            }
            let status = child.wait().unwrap();
            assert!(
                status.code().is_some_and(|c| c != 101),
                "{args:?} (stdout closed: {close_stdout}): {status:?}"
            );
        }
    }
}

/// File names (and anything else from the input) reach standard error with
/// their control characters escaped: a name can hold a terminal's escape
/// sequences.
#[test]
fn stderr_escapes_control_characters_in_file_names() {
    let dir = std::env::temp_dir().join(format!("kwire-esc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad\u{1b}[31mname.hex");
    std::fs::write(&bad, "zz").unwrap();
    let missing = dir.join("no\u{1b}]0;title\u{7}such.hex");
    for (path, names_it) in [(&bad, false), (&missing, true)] {
        let out = kwire(&["decode", path.to_str().unwrap()], None);
        let err = stderr(&out);
        assert!(!err.contains('\u{1b}') && !err.contains('\u{7}'), "{err:?}");
        assert_eq!(err.contains("\\u{1b}"), names_it, "{err:?}");
        assert_ne!(out.status.code(), Some(0));
    }
    let site = dir.join("site\u{1b}[2J");
    let out = kwire(
        &[
            "docs",
            "--out",
            site.to_str().unwrap(),
            "--kafka-release",
            "4.3",
        ],
        None,
    );
    let all = stdout(&out) + &stderr(&out);
    assert!(!all.contains('\u{1b}'), "{all:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `--help` lists the options every command shares under a heading of their
/// own, and leaves out those a command has no use for.
#[test]
fn global_options_have_their_heading_and_only_where_they_work() {
    let help = |cmd: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args([cmd, "--help"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{cmd} --help");
        String::from_utf8(out.stdout).unwrap()
    };
    let decode = help("decode");
    let global = decode.split_once("Global options:\n").expect("a heading").1;
    for option in [
        "--defs",
        "--kafka-release",
        "--color",
        "--show-secrets",
        "--wide",
    ] {
        assert!(
            global.contains(option),
            "decode: {option} under the heading\n{decode}"
        );
    }
    let primitive = help("primitive");
    for option in ["--defs", "--kafka-release", "--color", "--show-secrets"] {
        assert!(
            !primitive.contains(option),
            "primitive: {option}\n{primitive}"
        );
    }
    // Its explanation is fitted to the terminal, as `decode --explain` is.
    assert!(primitive.contains("--wide"), "{primitive}");
    let stats = help("stats");
    assert!(
        stats.contains("Global options:") && stats.contains("--kafka-release"),
        "{stats}"
    );
    assert!(
        !stats.contains("--show-secrets") && !stats.contains("--color"),
        "{stats}"
    );
    // Hidden, still accepted: scripts that pass them everywhere keep working.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args([
            "primitive",
            "uvarint",
            "300",
            "--color",
            "never",
            "--show-secrets",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
}

/// One time format in every JSON: the same packet's time has the same digits
/// in `capture`, `check` and `records` (frame 52 of kafka-python.pcap is a
/// Fetch response with records and a finding).
#[test]
fn every_json_writes_a_frame_s_time_with_the_same_digits() {
    let capture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/samples/captures/kafka-python.pcap"
    );
    let run = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(args)
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // The text after `"time":` in the first line that holds `marker`.
    let time_in = |text: &str, marker: &str| -> String {
        let line = text
            .lines()
            .find(|l| l.contains(marker))
            .expect(marker)
            .to_string();
        let at = line.find("\"time\":").expect("a time") + 7;
        line[at..].split([',', '}']).next().unwrap().to_string()
    };
    let framed = run(&["capture", capture, "--frame", "52", "--format", "json"]);
    let from_capture = time_in(&framed, "\"capture\":{\"frame\":52");
    let from_check = time_in(
        &run(&["check", capture, "--format", "json"]),
        "{\"frame\":52,",
    );
    let from_records = time_in(
        &run(&["records", capture, "--format", "json"]),
        "{\"frame\":52,",
    );
    assert_eq!(from_capture, "1796142241.453045");
    assert_eq!((&from_check, &from_records), (&from_capture, &from_capture));
}

/// A log segment given to `decode` is shown as `kwire records` shows it (it
/// starts with a whole batch whose CRC-32C holds), from a file or piped in;
/// frames asked for by name are still decoded as frames; a frame format is
/// refused with a word on what the file holds, and `check` checks batches.
#[test]
fn decode_hands_a_log_segment_to_records() {
    let segment = "samples/00000000000000000000.log";
    let records = kwire(&["records", segment], None);
    assert_eq!(records.status.code(), Some(0), "{}", stderr(&records));
    let tree = stdout(&records);
    assert!(
        tree.starts_with("RecordBatch[0] RecordBatch v2 [0x0000, "),
        "{tree}"
    );
    let decoded = kwire(&["decode", segment], None);
    assert_eq!(decoded.status.code(), Some(0), "{}", stderr(&decoded));
    assert_eq!(stdout(&decoded), tree);
    assert_eq!(stderr(&decoded), "");
    let bytes = std::fs::read(root().join(segment)).unwrap();
    assert_eq!(stdout(&kwire(&["decode"], Some(&bytes))), tree);
    let json = stdout(&kwire(&["records", segment, "--format", "json"], None));
    assert_eq!(stdout(&kwire(&["decode", segment, "--json"], None)), json);
    // As a response, asked for by name: decoded as a frame (which it is not).
    let framed = kwire(
        &[
            "decode",
            segment,
            "--response",
            "--api",
            "Fetch",
            "--version",
            "12",
        ],
        None,
    );
    assert!(
        stdout(&framed).starts_with("Response message [0x0000, 4B]\n"),
        "{}",
        stdout(&framed)
    );
    let grid = kwire(&["decode", segment, "--format", "grid"], None);
    assert_eq!(grid.status.code(), Some(2));
    assert!(
        stderr(&grid)
            .contains("holds record batches (a log segment?), not frames: `kwire records`"),
        "{}",
        stderr(&grid)
    );
    // --explain explains frames: refused, not ignored.
    let explained = kwire(&["decode", "--explain", segment], None);
    assert_eq!(explained.status.code(), Some(2));
    assert!(
        stderr(&explained).ends_with("; --explain is for frames\n"),
        "{}",
        stderr(&explained)
    );
    // `check` checks its batches (tests/check.rs), not a frame of size 0.
    let checked = kwire(&["check"], Some(&bytes));
    assert_eq!(checked.status.code(), Some(0), "{}", stderr(&checked));
    assert_eq!(
        stdout(&checked),
        "5 batches checked: 0 errors, 0 warnings, 0 notes\n"
    );
}
