//! Untrusted strings never reach a terminal or a page raw: control characters,
//! ANSI escapes, bidi overrides and invalid UTF-8 are shown escaped in the tree,
//! the grid, the TUI and both JSON forms (which always stay valid JSON).

use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions, Direction, Frame};
use kwire::encode::{encode_frame, FrameSpec};
use kwire::render::{grid, json, text_tree};
use kwire::schema::Catalogue;
use kwire::tui::{ui, App, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

const EVIL: &str = "\u{1b}[31mred\u{1b}]0;title\u{7}<script>alert(1)</script>\u{202e}rtl\r\n\u{0}end";

fn forbidden(c: char) -> bool {
    kwire::render::escape::is_unsafe_char(c) && c != '\n'
}

/// A JoinGroup request with hostile strings in the client id and group id, and
/// the same with a group id that is not UTF-8.
fn frames() -> Vec<Frame> {
    let cat = Catalogue::builtin();
    let fs = FrameSpec { direction: Direction::Request, api_key: 11, version: 9, release: None };
    let header = json!({"CorrelationId": 1, "ClientId": EVIL});
    let body = json!({"GroupId": EVIL, "SessionTimeoutMs": 1, "RebalanceTimeoutMs": 1, "MemberId": "", "GroupInstanceId": null,
        "ProtocolType": "x", "Protocols": [], "Reason": null});
    let good = encode_frame(cat, &fs, header.as_object().unwrap(), body.as_object().unwrap()).unwrap();
    let mut bad_utf8 = encode_frame(cat, &fs, json!({"CorrelationId": 2, "ClientId": "c"}).as_object().unwrap(), json!({"GroupId": "ABCD", "ProtocolType": "x", "Protocols": []}).as_object().unwrap()).unwrap();
    let at = bad_utf8.windows(4).position(|w| w == b"ABCD").unwrap();
    bad_utf8[at..at + 4].copy_from_slice(&[0xff, 0xfe, 0x1b, 0x80]);
    let input = Bytes::from([good, bad_utf8].concat());
    let frames = decode_frames(cat, &input, &DecodeOptions::default());
    assert_eq!(frames.len(), 2);
    assert!(frames.iter().all(|f| f.error.is_none()), "{:?}", frames.iter().map(|f| &f.error).collect::<Vec<_>>());
    frames
}

#[test]
fn tree_and_grid_text_hold_no_control_characters() {
    for f in frames() {
        for text in [text_tree::render_frame(&f, Default::default()), text_tree::render_frame(&f, text_tree::TreeOptions { full_docs: true }), grid::render_grid(&f, false)] {
            assert!(!text.chars().any(forbidden), "raw control character in:\n{text}");
        }
    }
    let tree = text_tree::render_frame(&frames()[0], Default::default());
    assert!(tree.contains(r#"\u{1b}[31mred"#), "escapes are visible: {tree}");
    assert!(tree.contains(r#"\u{202e}rtl"#));
    let tree = text_tree::render_frame(&frames()[1], Default::default());
    assert!(tree.contains(r#"b"\xff\xfe\u{1b}\x80" (invalid UTF-8)"#), "{tree}");
}

#[test]
fn json_stays_valid_and_escaped() {
    for f in frames() {
        for text in [json::frame_contract(&f).to_string(), json::frame_tree_json(&f).to_string()] {
            assert!(!text.chars().any(|c| c.is_control()), "raw control character in JSON");
            let back: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
            assert!(back.is_object());
        }
    }
    let v = json::frame_contract(&frames()[0]);
    assert_eq!(v["body"]["GroupId"], EVIL, "the value survives exactly");
    assert_eq!(v["header"]["ClientId"], EVIL);
    let v = json::frame_contract(&frames()[1]);
    assert_eq!(v["body"]["GroupId"], "\u{fffd}\u{fffd}\u{1b}\u{fffd}", "invalid UTF-8 becomes U+FFFD");
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
                assert!(!cell.symbol().chars().any(forbidden), "raw control character drawn at byte {byte}: {:?}", cell.symbol());
            }
        }
    }
}

#[test]
fn html_escaping_keeps_markup_as_text() {
    let s = kwire::render::escape::html(EVIL);
    assert!(!s.contains('<') && !s.contains('>'));
    assert!(s.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!s.chars().any(forbidden));
}
