//! The capture pipeline as a library call (`kwire::pipeline::capture::run`
//! over any `io::Write`) writes exactly what `kwire capture` prints, says
//! the same lines beside it, and reports in its outcome what the command
//! turns into messages and an exit status.

use kwire::analysis::selection::FrameFilter;
use kwire::capture::CaptureOptions;
use kwire::pipeline::capture::{run, Options, Outcome, Source};
use kwire::pipeline::frames::{Format, Style};
use kwire::schema::Catalogue;
use std::path::Path;
use std::process::Command;

fn path(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples/captures")
        .join(name)
        .display()
        .to_string()
}

/// The library's run: what it wrote, the lines it said, and its outcome.
fn library(
    capture: &str,
    (list, format): (bool, Format),
    (port, guess): (Option<u16>, bool),
) -> (Vec<u8>, Vec<String>, Outcome) {
    let options = Options {
        list,
        format,
        full_docs: false,
        guess,
        provenance: true,
        style: Style::default(),
        flush_each_frame: false,
        budget: kwire::budget::Budget::default(),
        capture: CaptureOptions {
            port,
            ..Default::default()
        },
    };
    let (mut out, mut said) = (Vec::new(), Vec::new());
    let outcome = run(
        Catalogue::builtin(),
        None,
        (&Source::File(path(capture)), &FrameFilter::default()),
        &options,
        None,
        &mut out,
        &mut |line: &str| said.push(line.to_string()),
    )
    .expect("the capture opens");
    (out, said, outcome)
}

/// `kwire capture` with the same options, uncoloured and uncut.
fn command(capture: &str, args: &[&str]) -> (Vec<u8>, String, i32) {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(["--wide", "capture", &path(capture)])
        .args(args)
        .env("NO_COLOR", "1")
        .env_remove("COLUMNS")
        .output()
        .unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    (out.stdout, stderr, out.status.code().unwrap())
}

#[test]
fn the_library_writes_what_the_command_prints_in_every_format() {
    let formats: [(&str, (bool, Format)); 5] = [
        ("tree", (false, Format::Tree)),
        ("grid", (false, Format::Grid)),
        ("json", (false, Format::Json)),
        ("tree-json", (false, Format::TreeJson)),
        ("list", (true, Format::Tree)),
    ];
    for (name, view) in formats {
        let (written, said, outcome) = library("confluent-kafka.pcap", view, (None, false));
        let args: Vec<&str> = match name {
            "list" => vec!["--list"],
            f => vec!["--format", f],
        };
        let (printed, stderr, status) = command("confluent-kafka.pcap", &args);
        assert!(written.len() > 10_000, "{name}: {} bytes", written.len());
        assert!(
            written == printed,
            "{name}: the library's output differs from the command's"
        );
        assert_eq!(
            (said.is_empty(), stderr.as_str(), status),
            (true, "", 0),
            "{name}"
        );
        let stats = outcome.read.as_ref().expect("read to the end");
        assert!(stats.frames > 100, "{name}: {} frames", stats.frames);
        assert_eq!(outcome.shown, stats.frames, "{name}: every frame shown");
        assert!(!outcome.malformed && !outcome.output_failed, "{name}");
        assert_eq!(outcome.skipped.count, 0, "{name}");
        assert!(outcome.selected.is_none(), "{name}");
    }
}

#[test]
fn notes_and_guesses_come_out_as_the_command_says_them() {
    // A TLS capture read without its keys: only notes, no frame.
    let (written, said, outcome) = library(
        "tls/tls13-aes128gcm.pcap",
        (false, Format::Json),
        (None, false),
    );
    let (printed, _, _) = command("tls/tls13-aes128gcm.pcap", &["--format", "json"]);
    assert!(written == printed, "TLS notes differ");
    assert!(String::from_utf8_lossy(&written).contains("\"kind\":\"tls\""));
    assert!(said.is_empty());
    assert_eq!(outcome.read.as_ref().unwrap().frames, 0);
    assert!(outcome.read.as_ref().unwrap().tls.connections > 0);

    // A response without its request, decoded by a guess: the guess is said
    // beside the JSON, as the command says it on stderr.
    let (written, said, outcome) = library(
        "lone-response.pcap",
        (false, Format::Json),
        (Some(19092), true),
    );
    let (printed, stderr, _) = command(
        "lone-response.pcap",
        &["--format", "json", "--port", "19092", "--guess"],
    );
    assert!(written == printed, "guessed frames differ");
    assert!(!said.is_empty(), "a guess is said");
    for line in &said {
        assert!(
            stderr.contains(line.as_str()),
            "{line:?} not in the command's stderr:\n{stderr}"
        );
    }
    assert!(outcome.shown > 0);
}

#[test]
fn a_source_that_does_not_open_is_the_one_error() {
    let err = run(
        Catalogue::builtin(),
        None,
        (
            &Source::File("/nonexistent/x.pcap".into()),
            &FrameFilter::default(),
        ),
        &Options::default(),
        None,
        Vec::new(),
        &mut |_: &str| {},
    )
    .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound);
}

/// `kwire check`'s text, grouped, from the library's writer: the same bytes
/// with the same closing line, at every minimum severity, lines fitted to
/// the same width.
#[test]
fn the_findings_writer_writes_what_kwire_check_prints() {
    use kwire::analysis::finding::Severity;
    use kwire::pipeline::check::{check_capture, Options};
    use kwire::render::findings::{summary, FindingsWriter, Layout};
    let cat = Catalogue::builtin();
    let name = "diagnosis/churn.pcap";
    for (min, flag) in [
        (Severity::Note, "note"),
        (Severity::Warning, "warning"),
        (Severity::Error, "error"),
    ] {
        let layout = Layout::Groups { width: 100 };
        let mut writer = FindingsWriter::new(cat, Vec::new(), layout, min);
        let options = Options {
            decode: Default::default(),
            capture: Default::default(),
            read_ahead: true,
            filter: None,
        };
        let input = std::fs::File::open(path(name)).unwrap();
        let checked =
            check_capture(cat, None, Box::new(input), options, &mut |f| writer.take(f)).unwrap();
        writer.write_groups().unwrap();
        let tally = writer.tally();
        let mut text = writer.out;
        text.extend(summary(checked.frames, &tally).bytes());
        text.push(b'\n');
        let printed = printed_at_100_columns(&["check", &path(name), "--min-severity", flag]);
        assert_eq!(
            String::from_utf8_lossy(&text),
            printed,
            "--min-severity {flag}"
        );
        assert!(
            tally.warnings + tally.errors > 0,
            "churn has findings to show"
        );
    }
}

/// What `kwire ARGS` prints on standard output with 100 columns to fit.
fn printed_at_100_columns(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env("COLUMNS", "100")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn check_capture_finds_what_kwire_check_prints() {
    use kwire::pipeline::check::{check_capture, Options};
    let cat = Catalogue::builtin();
    for name in ["diagnosis/churn.pcap", "confluent-kafka.pcap"] {
        let mut found = Vec::new();
        let input = std::fs::File::open(path(name)).unwrap();
        let options = Options {
            decode: Default::default(),
            capture: Default::default(),
            read_ahead: true,
            filter: None,
        };
        let checked = check_capture(cat, None, Box::new(input), options, &mut |f| {
            found.append(f);
            Ok(())
        })
        .unwrap();
        let mut lines = Vec::new();
        for f in &found {
            kwire::render::findings::write_json(&mut lines, cat, f).unwrap();
        }
        let printed = Command::new(env!("CARGO_BIN_EXE_kwire"))
            .args(["check", &path(name), "--format", "json"])
            .output()
            .unwrap();
        assert!(
            lines == printed.stdout,
            "{name}: the findings differ from kwire check's"
        );
        assert!(
            checked.read.is_ok() && checked.frames > 10,
            "{name}: {checked:?}"
        );
        if name.starts_with("diagnosis/") {
            assert!(
                !found.is_empty(),
                "{name}: a diagnosis capture has findings"
            );
        }
    }
}

#[test]
fn decode_selected_holds_the_frames_the_selection_keeps() {
    use kwire::analysis::selection::TopicNames;
    use kwire::pipeline::capture::decode_selected;
    let cat = Catalogue::builtin();
    let selected = |filter: FrameFilter| {
        let input = std::fs::File::open(path("confluent-kafka.pcap")).unwrap();
        let names = TopicNames::none();
        let opts = CaptureOptions::default();
        decode_selected(
            cat,
            None,
            (Box::new(input), &opts),
            &filter,
            (&names, false, Default::default()),
        )
    };
    let one = selected(FrameFilter {
        frame: Some(5),
        ..Default::default()
    });
    assert_eq!(one.frames.len(), 1);
    assert!(one.read.is_ok() && one.skipped.count == 0);
    let api_versions = selected(FrameFilter {
        api: Some(18),
        ..Default::default()
    });
    let (printed, _, status) = command(
        "confluent-kafka.pcap",
        &["--api", "ApiVersions", "--format", "json"],
    );
    let lines = printed
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .count();
    assert_eq!(status, 0);
    assert!(lines >= 2);
    assert_eq!(api_versions.frames.len(), lines);
    assert!(api_versions
        .frames
        .iter()
        .all(|f| f.api_key == Some(18) && f.error.is_none()));
}

/// An input's bytes as frames, as `kwire decode FILE` reads them: hex text
/// or binary, a missing size prefix added and said, bytes after a frame
/// whose size cannot be trusted said, not dropped.
#[test]
fn decode_input_reads_a_file_s_frames_and_says_what_it_did() {
    use kwire::input::framing::Framing;
    use kwire::input::InputKind;
    use kwire::pipeline::frames::decode_input;
    let cat = Catalogue::builtin();
    let hex = std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/join-group-v9-request.hex"),
    )
    .unwrap();
    let opts = Default::default();
    let read = |raw: Vec<u8>, how| {
        let mut said = Vec::new();
        let frames = decode_input(cat, raw, how, (&opts, &mut |_| {}), &mut |l: &str| {
            said.push(l.to_string())
        });
        (frames, said)
    };
    let (frames, said) = read(hex.clone(), (InputKind::Auto, Framing::Auto));
    let whole = frames.unwrap();
    assert_eq!((whole.len(), said.len()), (1, 0), "{said:?}");
    let frame = whole[0].bytes.to_vec();
    assert!(whole[0].error.is_none());

    // The same frame without its size prefix: read with one added, and said.
    let (frames, said) = read(frame[4..].to_vec(), (InputKind::Binary, Framing::Auto));
    let bare = frames.unwrap();
    assert_eq!(bare.len(), 1);
    assert_eq!(bare[0].bytes, whole[0].bytes);
    assert_eq!(said.len(), 1);
    assert!(
        said[0].contains("without its 4-byte size prefix"),
        "{said:?}"
    );
    // As given, the same bytes are a frame whose size cannot be trusted.
    let (frames, said) = read(frame[4..].to_vec(), (InputKind::Binary, Framing::Prefixed));
    assert!(frames.unwrap()[0].error.is_some());
    assert!(said.iter().all(|l| !l.contains("size prefix")), "{said:?}");

    // After the frame, a size too small for any header: decoding stops
    // there, and the bytes after it are said, not dropped.
    let mut trailing = frame.clone();
    trailing.extend([0, 0, 0, 2, 1, 2, 9, 9, 9, 9]);
    let (frames, said) = read(trailing.clone(), (InputKind::Binary, Framing::Prefixed));
    let frames = frames.unwrap();
    assert_eq!(frames.len(), 2);
    assert!(frames[1].error.is_some());
    let end = frames[1].input_offset + frames[1].bytes.len();
    assert!(end < trailing.len());
    let left = trailing.len() - end;
    assert_eq!(
        said,
        [format!("{left} bytes after input offset {end} were not decoded: the frame before them has no size to trust")]
    );

    // Text that is neither hex nor a frame is an error, not frames.
    let (frames, _) = read(b"not hex at all".to_vec(), (InputKind::Hex, Framing::Auto));
    assert!(frames.is_err());
}

/// A capture's records written by the library, as `kwire records CAPTURE`
/// prints them: the table fitted to the same width, and JSON lines.
#[test]
fn write_capture_records_writes_what_kwire_records_prints() {
    use kwire::analysis::records_table::Options;
    use kwire::pipeline::records::{write_capture_records, RecordsLayout};
    use kwire::render::records_table::Widths;
    let cat = Catalogue::builtin();
    let name = "confluent-kafka.pcap";
    for (layout, columns, args) in [
        (
            RecordsLayout::Table(Widths::fit(Some(100))),
            Some(100),
            &[][..],
        ),
        (RecordsLayout::Json, None, &["--format", "json"][..]),
    ] {
        let input = std::fs::File::open(path(name)).unwrap();
        let mut out = Vec::new();
        // Lines cut to the width, as the command cuts its standard output.
        let mut fitted = kwire::text::width::FitLines::new(&mut out, columns);
        let options = Options::default();
        let summary = write_capture_records(cat, input, &options, (layout, false), &mut fitted)
            .unwrap()
            .unwrap();
        drop(fitted);
        let printed = printed_at_100_columns(&[&["records", &path(name)][..], args].concat());
        assert_eq!(String::from_utf8_lossy(&out), printed, "{layout:?}");
        assert!(summary.records_shown > 0 && summary.records_shown == summary.records);
    }
}
