//! Untrusted strings never reach a terminal or a page raw: control characters,
//! ANSI escapes, bidi overrides and invalid UTF-8 are shown escaped in the tree,
//! the grid, the TUI and both JSON forms (which always stay valid JSON).

mod common;

use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions, Direction, Frame};
use kwire::encode::{encode_frame, FrameSpec};
use kwire::render::{grid, json, text_tree};
use kwire::schema::Catalogue;
use kwire::tui::{ui, App, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

const EVIL: &str =
    "\u{1b}[31mred\u{1b}]0;title\u{7}<script>alert(1)</script>\u{202e}rtl\r\n\u{0}end";

fn forbidden(c: char) -> bool {
    kwire::text::escape::is_unsafe_char(c) && c != '\n'
}

/// A JoinGroup request with hostile strings in the client id and group id, and
/// the same with a group id that is not UTF-8.
fn frames() -> Vec<Frame> {
    let cat = Catalogue::builtin();
    let fs = FrameSpec {
        direction: Direction::Request,
        api_key: 11,
        version: 9,
        release: None,
    };
    let header = json!({"CorrelationId": 1, "ClientId": EVIL});
    let body = json!({"GroupId": EVIL, "SessionTimeoutMs": 1, "RebalanceTimeoutMs": 1, "MemberId": "", "GroupInstanceId": null,
        "ProtocolType": "x", "Protocols": [], "Reason": null});
    let good = encode_frame(
        cat,
        &fs,
        header.as_object().unwrap(),
        body.as_object().unwrap(),
    )
    .unwrap();
    let mut bad_utf8 = encode_frame(
        cat,
        &fs,
        json!({"CorrelationId": 2, "ClientId": "c"})
            .as_object()
            .unwrap(),
        json!({"GroupId": "ABCD", "ProtocolType": "x", "Protocols": []})
            .as_object()
            .unwrap(),
    )
    .unwrap();
    let at = bad_utf8.windows(4).position(|w| w == b"ABCD").unwrap();
    bad_utf8[at..at + 4].copy_from_slice(&[0xff, 0xfe, 0x1b, 0x80]);
    let input = Bytes::from([good, bad_utf8].concat());
    let frames = decode_frames(cat, &input, &DecodeOptions::default());
    assert_eq!(frames.len(), 2);
    assert!(
        frames.iter().all(|f| f.error.is_none()),
        "{:?}",
        frames.iter().map(|f| &f.error).collect::<Vec<_>>()
    );
    frames
}

#[test]
fn tree_and_grid_text_hold_no_control_characters() {
    for f in frames() {
        for text in [
            text_tree::render_frame(&f, Default::default()),
            text_tree::render_frame(
                &f,
                text_tree::TreeOptions {
                    full_docs: true,
                    ..Default::default()
                },
            ),
            grid::render_grid(&f, false),
        ] {
            assert!(
                !text.chars().any(forbidden),
                "raw control character in:\n{text}"
            );
        }
    }
    let tree = text_tree::render_frame(&frames()[0], Default::default());
    assert!(
        tree.contains(r#"\u{1b}[31mred"#),
        "escapes are visible: {tree}"
    );
    assert!(tree.contains(r#"\u{202e}rtl"#));
    let tree = text_tree::render_frame(&frames()[1], Default::default());
    assert!(
        tree.contains(r#"b"\xff\xfe\u{1b}\x80" (invalid UTF-8)"#),
        "{tree}"
    );
}

#[test]
fn json_stays_valid_and_escaped() {
    for f in frames() {
        for text in [contract(&f).to_string(), tree_json_text(&f)] {
            assert!(
                !text.chars().any(|c| c.is_control()),
                "raw control character in JSON"
            );
            let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            assert!(back.is_object());
        }
    }
    let v = contract(&frames()[0]);
    assert_eq!(v["body"]["GroupId"], EVIL, "the value survives exactly");
    assert_eq!(v["header"]["ClientId"], EVIL);
    let v = contract(&frames()[1]);
    assert_eq!(
        v["body"]["GroupId"], "\u{fffd}\u{fffd}\u{1b}\u{fffd}",
        "invalid UTF-8 becomes U+FFFD"
    );
}

#[test]
fn the_tui_shows_escapes_not_control_characters() {
    let mut app = App::new(Catalogue::builtin(), None, frames(), Theme::COLOR);
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    // Put the cursor on every byte of both frames (selecting every field), drawing each time.
    for frame in 0..2 {
        app.select_frame(frame);
        let len = app.frame().unwrap().frame.bytes.len();
        for byte in 0..len {
            app.move_cursor(byte);
            term.draw(|f| ui::draw(f, &mut app)).unwrap();
            for cell in term.backend().buffer().content() {
                assert!(
                    !cell.symbol().chars().any(forbidden),
                    "raw control character drawn at byte {byte}: {:?}",
                    cell.symbol()
                );
            }
        }
    }
}

#[test]
fn html_escaping_keeps_markup_as_text() {
    let s = kwire::text::escape::html(EVIL);
    assert!(!s.contains('<') && !s.contains('>'));
    assert!(s.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!s.chars().any(forbidden));
}

/// Code points JSON allows raw that a terminal acts on: C1 controls (CSI
/// U+009B, NEL U+0085), bidi controls and line/paragraph separators.
const EVIL_UNICODE: &str = "a\u{85}b\u{9b}31mc\u{202a}\u{202e}rtl\u{2066}\u{2069}\u{200e}\u{200f}\u{61c}d\u{2028}e\u{2029}f";

#[test]
fn json_writes_c1_bidi_and_separators_as_escapes() {
    let cat = Catalogue::builtin();
    let fs = FrameSpec {
        direction: Direction::Request,
        api_key: 11,
        version: 9,
        release: None,
    };
    let body = json!({"GroupId": EVIL_UNICODE, "ProtocolType": "x", "Protocols": []});
    let bytes = encode_frame(
        cat,
        &fs,
        json!({"ClientId": EVIL_UNICODE}).as_object().unwrap(),
        body.as_object().unwrap(),
    )
    .unwrap();
    let input = Bytes::from(bytes);
    for values_only in [false, true] {
        let frames = decode_frames(
            cat,
            &input,
            &DecodeOptions {
                values_only,
                ..Default::default()
            },
        );
        let mut written = Vec::new();
        let specs = (cat, None);
        json::write_contract_of(&frames[0], specs, Default::default(), &mut written);
        let text = String::from_utf8(written).unwrap();
        assert!(!text.chars().any(forbidden), "raw in {text}");
        for escape in [
            r"\u0085", r"\u009b", r"\u202a", r"\u202e", r"\u2066", r"\u2069", r"\u200e", r"\u200f",
            r"\u061c", r"\u2028", r"\u2029",
        ] {
            assert!(text.contains(escape), "{escape} missing in {text}");
        }
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            back["body"]["GroupId"], EVIL_UNICODE,
            "parses back to the same string"
        );
        assert_eq!(back["header"]["ClientId"], EVIL_UNICODE);
        if !values_only {
            assert_eq!(
                json::to_text(&common::contract::tree_contract(&frames[0])),
                text,
                "the tree's contract is the same text"
            );
            let tree = tree_json_text(&frames[0]);
            assert!(!tree.chars().any(forbidden), "{tree}");
            let back: serde_json::Value = serde_json::from_str(&tree).unwrap();
            let body = &back["tree"]["children"][2];
            let group_id = &body["children"][0];
            assert_eq!(group_id["name"], "GroupId", "{body}");
            assert_eq!(
                group_id["value"], EVIL_UNICODE,
                "parses back to the same string"
            );
        }
    }
    let pretty = json::to_text_pretty(&json!({"k": [EVIL_UNICODE]}));
    assert_eq!(
        pretty,
        serde_json::to_string_pretty(&json!({"k": ["x"]}))
            .unwrap()
            .replace(
                'x',
                &EVIL_UNICODE
                    .chars()
                    .map(|c| if kwire::text::escape::is_unsafe_in_json(c) {
                        format!("\\u{:04x}", c as u32)
                    } else {
                        c.to_string()
                    })
                    .collect::<String>()
            )
    );
}

/// Output of a command as text, checked to hold nothing a terminal would act on.
fn checked_output(args: &[&str], out: &std::process::Output) -> String {
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let raw: Vec<char> = text
        .chars()
        .filter(|&c| forbidden(c) && c != '\t')
        .collect();
    assert!(
        raw.is_empty(),
        "kwire {}: raw {raw:?} in:\n{text}",
        args.join(" ")
    );
    text
}

/// An OSC 52 clipboard write and a screen clear.
const OSC52: &str = "\u{1b}]52;c;ZXZpbA==\u{7}";
const CLEAR: &str = "\u{1b}[2J";

#[test]
fn encode_errors_do_not_echo_escapes() {
    let name = format!("{OSC52}{CLEAR}x\u{9b}2J\u{202e}");
    let named =
        |v: serde_json::Value| serde_json::Value::Object([(name.clone(), v)].into_iter().collect());
    let frame = |header: serde_json::Value, body: serde_json::Value| json!({"kind": "request", "api_key": 11, "api_version": 9, "header": header, "body": body});
    let with_raw = |raw: serde_json::Value| {
        let mut f = frame(json!({}), json!({}));
        f["_raw"] = raw;
        f
    };
    let inputs = [
        frame(json!({}), named(json!(1))),
        frame(named(json!(1)), json!({})),
        frame(json!({}), json!({"Protocols": [named(json!(1))]})),
        with_raw(named(json!("00"))),
        with_raw(named(json!(name.clone()))),
    ];
    for input in inputs {
        let out = common::kwire_with_stdin(&["encode"], input.to_string().as_bytes());
        assert_eq!(out.status.code(), Some(1));
        let text = checked_output(&["encode"], &out);
        assert!(
            text.contains(r"\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2Jx\u{9b}2J\u{202e}"),
            "the name is shown escaped: {text}"
        );
    }
    let out = common::kwire_with_stdin(
        &["encode", "Metadata", "--version", "12"],
        format!(
            "{{\"{}\": true}}",
            OSC52
                .replace('\u{1b}', "\\u001b")
                .replace('\u{7}', "\\u0007")
        )
        .as_bytes(),
    );
    assert_eq!(out.status.code(), Some(1));
    checked_output(&["encode"], &out);
}

/// A definitions folder whose API, record type and field names hold escapes.
fn evil_defs() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("safe-output-defs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let evil =
        |s: &str| serde_json::to_string(&format!("{s}{OSC52}{CLEAR}\u{9b}\u{85}\u{202e}")).unwrap();
    let fields = format!(
        r#"[ {{ "name": {}, "type": "int32", "versions": "0+", "about": {} }},
             {{ "name": {}, "type": "string", "versions": "1+", "about": "added" }},
             {{ "name": "Items", "type": "[]Item", "versions": "0+", "fields": [ {{ "name": {}, "type": "int8", "versions": "0+" }} ] }} ]"#,
        evil("Knob"),
        evil("about"),
        evil("Label"),
        evil("Inner")
    );
    for (file, kind, suffix) in [
        ("EvilRequest.json", "request", "Request"),
        ("EvilResponse.json", "response", "Response"),
    ] {
        // The escapes go before the suffix, so that the API's name holds them.
        let name =
            serde_json::to_string(&format!("Ev{OSC52}{CLEAR}\u{9b}\u{85}\u{202e}il{suffix}"))
                .unwrap();
        std::fs::write(
            dir.join(file),
            format!(r#"{{ "apiKey": 990, "type": "{kind}", "name": {name}, "validVersions": "0-1", "flexibleVersions": "1+", "fields": {fields} }}"#),
        )
        .unwrap();
    }
    std::fs::write(dir.join("EvilRecord.json"), format!(r#"{{ "type": "data", "name": {}, "validVersions": "0-1", "flexibleVersions": "none", "fields": {fields} }}"#, evil("EvilRecord"))).unwrap();
    dir
}

#[test]
fn definition_names_are_escaped_in_apis_diff_and_pages() {
    let defs = evil_defs();
    let d = defs.to_str().unwrap();
    let record = kwire::schema::source::load_definitions(&defs)
        .unwrap()
        .into_iter()
        .find(|s| s.kind == kwire::schema::MessageKind::Data)
        .unwrap()
        .name;
    assert!(
        record.contains(OSC52),
        "the loader keeps the name: {record:?}"
    );
    let runs: Vec<Vec<&str>> = vec![
        vec!["apis"],
        vec!["apis", "--format", "json"],
        vec!["diff", "990", "0", "1"],
        vec!["diff", "990", "0", "1", "--format", "json"],
        vec!["diff", "990", "--compare"],
        vec!["diff", "990", "0", "7"],
        vec!["diff", "--releases", "4.3", "defs"],
        vec!["diff", "--releases", "4.3", "defs", "--format", "json"],
        vec!["page", "990", "--version", "1"],
        vec!["page", "990", "--version", "1", "--format", "markdown"],
        vec!["page", "990", "--version", "1", "--format", "html"],
        vec!["page", &record, "--version", "1"],
        vec!["page", &record, "--format", "markdown"],
    ];
    for args in runs {
        let mut all = vec!["--defs", d];
        all.extend(&args);
        let out = common::kwire_with_stdin(&all, b"");
        let text = checked_output(&all, &out);
        let shown = args[0] != "diff" || args.len() < 4 || args[3] != "7";
        assert!(
            !shown
                || text.contains(r"\u{1b}]52")
                || text.contains(r"\u001b]52")
                || text.contains("&#x1b;]52"),
            "kwire {}: the names are shown escaped:\n{text}",
            args.join(" ")
        );
    }
    let _ = std::fs::remove_dir_all(&defs);
}

/// What `--format tree-json` writes for a frame, without its newline.
fn tree_json_text(f: &kwire::decode::Frame) -> String {
    let mut out = Vec::new();
    kwire::render::tree_json::write_frame_tree_json(&mut out, f).unwrap();
    assert_eq!(out.pop(), Some(b'\n'), "one line");
    String::from_utf8(out).unwrap()
}

/// A record decoded by type (`kwire decode --type`) writes its JSON and tree
/// JSON with the same escapes as frames: a topic named with a right-to-left
/// override and a C1 control reaches the terminal as `\u202e\u0085`, not as
/// the characters themselves.
#[test]
fn a_record_decoded_by_type_writes_its_json_escaped() {
    let topic_record = b"010200 06e280aec285 00112233445566778899aabbccddeeff 00";
    for format in ["tree-json", "json"] {
        let out = common::kwire_with_stdin(
            &["decode", "-", "--type", "TopicRecord", "--format", format],
            topic_record,
        );
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(r#"\u202e\u0085""#), "{format}: {text}");
        assert!(
            !text.contains('\u{202e}') && !text.contains('\u{85}'),
            "{format}: {text}"
        );
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        let name = match format {
            "json" => &back["value"]["Name"],
            _ => &back["children"][3]["children"][0]["value"],
        };
        assert_eq!(name, "\u{202e}\u{85}", "{format}: {text}");
    }
}

/// The JSON contract of a frame decoded into its tree (decoded again values-only).
fn contract(f: &kwire::decode::Frame) -> serde_json::Value {
    json::contract_of(f, (kwire::schema::Catalogue::builtin(), None))
}
