//! The terminal explorer on ratatui's TestBackend: grid text and colours,
//! grid ⇄ tree sync, keys, paste, re-decoding, errors, layout and help.

mod common;

use bytes::Bytes;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use kwire::decode::{decode_frames, DecodeOptions, Direction, Frame, Region};
use kwire::input::hex_text::parse_hex_text;
use kwire::schema::Catalogue;
use kwire::tui::app::{Focus, Mode};
use kwire::tui::grid_view::{GridGeometry, HexGrid, Layer};
use kwire::tui::{help, ui, App, Theme};
use ratatui::backend::TestBackend;
use ratatui::buffer::{Buffer, Cell};
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier};
use ratatui::widgets::Widget;
use ratatui::Terminal;

const REQUEST: &str = "samples/write-share-group-state-v0-request.hex";
const OTHER_REQUEST: &str = "samples/delete-share-group-state-v0-request.hex";
const RESPONSE: &str = "samples/write-share-group-state-v0-response.hex";

fn sample_text(path: &str) -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path))
        .expect("sample")
}

fn decode(bytes: Vec<u8>) -> Vec<Frame> {
    decode_frames(
        Catalogue::builtin(),
        &Bytes::from(bytes),
        &DecodeOptions::default(),
    )
}

fn sample_frames(path: &str) -> Vec<Frame> {
    decode(parse_hex_text(&sample_text(path)).expect("hex"))
}

fn app(path: &str) -> App<'static> {
    App::new(
        Catalogue::builtin(),
        None,
        sample_frames(path),
        Theme::COLOR,
    )
}

fn draw(app: &mut App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| ui::draw(f, app)).unwrap();
    t.backend().buffer().clone()
}

fn row_text(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

fn rows(buf: &Buffer) -> Vec<String> {
    (0..buf.area.height).map(|y| row_text(buf, y)).collect()
}

fn row_starting(buf: &Buffer, prefix: &str) -> Option<u16> {
    (0..buf.area.height).find(|&y| row_text(buf, y).starts_with(prefix))
}

fn row_containing(buf: &Buffer, needle: &str) -> Option<u16> {
    (0..buf.area.height).find(|&y| row_text(buf, y).contains(needle))
}

/// The hex cell (first digit) of byte `b`, found by its row's offset label.
fn hex_cell(buf: &Buffer, len: usize, b: usize) -> &Cell {
    let y = row_starting(buf, &format!("{:04x}  ", b / 16 * 16))
        .unwrap_or_else(|| panic!("row of byte {b:#x} not on screen"));
    &buf[(GridGeometry::new(len).hex_x(b % 16), y)]
}

fn press(app: &mut App, code: KeyCode) {
    app.on_key(KeyEvent::new(code, KeyModifiers::NONE));
}

fn type_text(app: &mut App, text: &str) {
    for c in text.chars() {
        press(app, KeyCode::Char(c));
    }
}

fn selected_name(app: &App) -> String {
    app.frame().unwrap().selected_node().name.to_string()
}

#[test]
fn grid_rows_show_offset_hex_and_ascii() {
    let mut a = app(REQUEST);
    let buf = draw(&mut a, 80, 24);
    let first = row_starting(&buf, "0000  ").expect("first grid row");
    assert_eq!(
        row_text(&buf, first).trim_end(),
        "0000  00 00 00 4a 00 55 00 00  00 00 00 00 00 00 00 01  ...J.U.........."
    );
    assert_eq!(
        row_text(&buf, first + 1).trim_end(),
        "0010  02 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  ................"
    );
    assert_eq!(
        row_text(&buf, first + 4).trim_end(),
        "0040  00 00 00 00 00 00 00 00  00 00 00 00 00 00        .............."
    );
    assert!(
        row_text(&buf, first - 1).contains(" hex · 78 B "),
        "grid title: {:?}",
        row_text(&buf, first - 1)
    );
}

#[test]
fn grid_cells_take_their_region_colour() {
    let frame = &sample_frames(REQUEST)[0];
    let regions = kwire::decode::regions::byte_regions(&frame.root, frame.bytes.len());
    let theme = Theme::COLOR;
    let expect = [
        (0x00, Region::Frame),
        (0x04, Region::RpcHeader),
        (0x0f, Region::RequestBody),
        (0x4d, Region::TaggedFields),
    ];

    // The widget alone, given only the region layer.
    let area = Rect::new(0, 0, 72, 5);
    let mut buf = Buffer::empty(area);
    let layers = [Layer::Regions(&regions)];
    HexGrid {
        bytes: &frame.bytes,
        top_row: 0,
        layers: &layers,
        theme,
    }
    .render(area, &mut buf);
    let geo = GridGeometry::new(frame.bytes.len());
    for (b, region) in expect {
        let want = theme.region(region).bg.unwrap();
        let (x, y) = (geo.hex_x(b % 16), (b / 16) as u16);
        assert_eq!(
            buf[(x, y)].bg,
            want,
            "hex of byte {b:#x} is {}",
            region.label()
        );
        assert_eq!(buf[(x + 1, y)].bg, want, "second digit of byte {b:#x}");
        assert_eq!(
            buf[(geo.ascii_x(b % 16), y)].bg,
            want,
            "ASCII of byte {b:#x}"
        );
    }
    assert_ne!(
        theme.region(Region::Frame).bg,
        theme.region(Region::RpcHeader).bg
    );

    // The whole screen: the same colours under the selection's reverse video.
    let mut a = app(REQUEST);
    let buf = draw(&mut a, 80, 24);
    for (b, region) in expect {
        assert_eq!(
            hex_cell(&buf, 78, b).bg,
            theme.region(region).bg.unwrap(),
            "byte {b:#x} on screen"
        );
    }
    // The legend names the regions present, each in its colour.
    let title = row_containing(&buf, " hex · 78 B ").unwrap();
    let text = row_text(&buf, title);
    for region in [
        Region::Frame,
        Region::RpcHeader,
        Region::RequestBody,
        Region::TaggedFields,
    ] {
        let x = text
            .find(&format!(" {} ", region.label()))
            .unwrap_or_else(|| panic!("legend lacks {}", region.label()));
        let x = text[..x].chars().count() as u16 + 1;
        assert_eq!(
            buf[(x, title)].bg,
            theme.region(region).bg.unwrap(),
            "legend colour of {}",
            region.label()
        );
    }
    assert!(
        !text.contains("response body"),
        "only regions present are in the legend"
    );
}

#[test]
fn no_color_draws_with_modifiers_only() {
    let mut a = App::new(
        Catalogue::builtin(),
        None,
        sample_frames(REQUEST),
        Theme::MONO,
    );
    let buf = draw(&mut a, 80, 24);
    for cell in buf.content() {
        assert_eq!(
            (cell.fg, cell.bg),
            (Color::Reset, Color::Reset),
            "a colour in monochrome at {:?}",
            cell.symbol()
        );
    }
    assert!(
        hex_cell(&buf, 78, 0).modifier.contains(Modifier::REVERSED),
        "the selection is reverse video"
    );
    assert!(
        hex_cell(&buf, 78, 4).modifier.contains(Modifier::BOLD),
        "the rpc header is bold"
    );
}

#[test]
fn moving_the_grid_cursor_selects_the_deepest_node_in_the_tree() {
    let mut a = app(REQUEST);
    draw(&mut a, 80, 24);
    assert_eq!(a.focus, Focus::Grid);
    // Down one row and right one byte: 0x0011, the first byte of TopicId.
    press(&mut a, KeyCode::Down);
    press(&mut a, KeyCode::Char('l'));
    assert_eq!(a.frame().unwrap().cursor, 0x11);
    assert_eq!(selected_name(&a), "TopicId");
    assert_eq!(a.frame().unwrap().tree.selected(), &[2, 1, 1, 0]);

    let buf = draw(&mut a, 80, 24);
    let y = row_containing(
        &buf,
        "TopicId uuid = 00000000-0000-0000-0000-000000000000 [0x0011, 16B]",
    )
    .expect("TopicId line on screen");
    let x = row_text(&buf, y).find("TopicId").unwrap() as u16;
    assert_eq!(
        buf[(x, y)].bg,
        Color::Indexed(238),
        "TopicId's line is the selected one (tree without focus)"
    );
    assert!(buf[(x, y)].modifier.contains(Modifier::BOLD));
    let details = rows(&buf).join("\n");
    assert!(
        details.contains("offset 0x0011 (17)  length 16"),
        "{details}"
    );
    assert!(
        details.contains("path     WriteShareGroupStateRequest.Topics[0].TopicId"),
        "{details}"
    );

    // `:` jump, hex or decimal, lands on the same node.
    press(&mut a, KeyCode::Char('g'));
    assert_eq!(selected_name(&a), "size");
    press(&mut a, KeyCode::Char(':'));
    type_text(&mut a, "0x11");
    press(&mut a, KeyCode::Enter);
    assert_eq!(selected_name(&a), "TopicId");
    press(&mut a, KeyCode::Char(':'));
    type_text(&mut a, "15");
    press(&mut a, KeyCode::Enter);
    assert_eq!(selected_name(&a), "GroupId");
    press(&mut a, KeyCode::Char(':'));
    type_text(&mut a, "0x4e");
    press(&mut a, KeyCode::Enter);
    assert!(a
        .status
        .as_ref()
        .is_some_and(|s| s.error && s.text.contains("past the frame")));
}

#[test]
fn selecting_a_tree_line_highlights_exactly_its_bytes() {
    let mut a = app(REQUEST);
    draw(&mut a, 80, 24);
    press(&mut a, KeyCode::Tab);
    assert_eq!(a.focus, Focus::Tree);
    for name in [
        "TopicId",
        "Partitions",
        "StartOffset",
        "StateBatch[0]",
        "tagged_fields",
    ] {
        while !selected_name(&a).starts_with(name) {
            let before = a.frame().unwrap().tree.selected_row();
            press(&mut a, KeyCode::Char('j'));
            assert_ne!(
                before,
                a.frame().unwrap().tree.selected_row(),
                "ran off the tree looking for {name}"
            );
        }
        let (offset, len) = {
            let n = a.frame().unwrap().selected_node();
            (n.offset, n.len)
        };
        assert_eq!(
            a.frame().unwrap().cursor,
            offset,
            "the grid cursor follows the tree to {name}"
        );
        let buf = draw(&mut a, 80, 24);
        for b in 0..78 {
            let reversed = hex_cell(&buf, 78, b).modifier.contains(Modifier::REVERSED);
            assert_eq!(
                reversed,
                (offset..offset + len).contains(&b),
                "byte {b:#x} while {name} [{offset:#x}, {len}] is selected"
            );
        }
        assert!(
            hex_cell(&buf, 78, offset)
                .modifier
                .contains(Modifier::UNDERLINED),
            "cursor on the first byte of {name}"
        );
    }
}

#[test]
fn a_tree_selection_scrolls_its_bytes_into_view() {
    // 80×12: the grid shows three of the five rows.
    let mut a = app(REQUEST);
    let buf = draw(&mut a, 80, 12);
    assert!(
        row_starting(&buf, "0040  ").is_none(),
        "the last row starts off screen"
    );
    let topics_tagged = a.frame().unwrap().frame.root.path_at(0x4c);
    a.focus = Focus::Tree;
    a.select_path(&topics_tagged);
    let buf = draw(&mut a, 80, 12);
    assert!(
        row_starting(&buf, "0040  ").is_some(),
        "row 0x40 scrolled into view:\n{}",
        rows(&buf).join("\n")
    );
    assert!(hex_cell(&buf, 78, 0x4c)
        .modifier
        .contains(Modifier::REVERSED));
    // The tree scrolls too: the selected line is on screen.
    assert!(row_containing(&buf, "tagged_fields uvarint = 0 [0x004c, 1B]").is_some());
}

#[test]
fn expand_and_collapse_with_enter_space_and_arrows() {
    let mut a = app(REQUEST);
    draw(&mut a, 80, 24);
    a.focus = Focus::Tree;
    let topics = vec![2, 1];
    a.select_path(&topics);
    let n = a.frame().unwrap().tree.rows().len();
    press(&mut a, KeyCode::Enter);
    assert!(!a.frame().unwrap().tree.is_expanded(&topics));
    assert!(a.frame().unwrap().tree.rows().len() < n);
    let buf = draw(&mut a, 80, 24);
    assert!(row_containing(&buf, "▸ ").is_some(), "collapsed marker");
    press(&mut a, KeyCode::Char(' '));
    assert_eq!(a.frame().unwrap().tree.rows().len(), n);
    press(&mut a, KeyCode::Left);
    assert!(!a.frame().unwrap().tree.is_expanded(&topics));
    press(&mut a, KeyCode::Left);
    assert_eq!(
        a.frame().unwrap().tree.selected(),
        &[2],
        "h/← on a collapsed line goes to the parent"
    );
    press(&mut a, KeyCode::Right);
    assert_eq!(
        a.frame().unwrap().tree.selected(),
        &[2, 0],
        "l/→ on an open line goes to the first child"
    );
    // A cursor move into collapsed Topics reveals it again.
    a.move_cursor(0x11);
    assert!(a.frame().unwrap().tree.is_expanded(&topics));
    assert_eq!(selected_name(&a), "TopicId");
}

#[test]
fn mouse_clicks_select_bytes_and_lines_and_the_wheel_scrolls() {
    let mut a = app(REQUEST);
    let buf = draw(&mut a, 80, 24);
    let click = |col, row| MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: col,
        row,
        modifiers: KeyModifiers::NONE,
    };
    let y = row_starting(&buf, "0010  ").unwrap();
    let geo = GridGeometry::new(78);
    a.on_mouse(click(geo.hex_x(1) + 1, y));
    assert_eq!(selected_name(&a), "TopicId");
    a.on_mouse(click(geo.ascii_x(0), y));
    assert_eq!(a.frame().unwrap().cursor, 0x10);

    let buf = draw(&mut a, 80, 24);
    let line = row_containing(&buf, "GroupId string").unwrap();
    a.on_mouse(click(30, line));
    assert_eq!(a.focus, Focus::Tree);
    assert_eq!(selected_name(&a), "GroupId");
    assert_eq!(a.frame().unwrap().cursor, 0x0f);

    let top = a.frame().unwrap().tree.top;
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 10,
        row: line,
        modifiers: KeyModifiers::NONE,
    };
    a.on_mouse(wheel);
    assert_eq!(a.frame().unwrap().tree.top, top + 3);
}

#[test]
fn search_finds_field_names_values_and_hex_bytes() {
    let mut a = app(REQUEST);
    draw(&mut a, 80, 24);
    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "topicid");
    press(&mut a, KeyCode::Enter);
    assert_eq!(selected_name(&a), "TopicId");

    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "00 55");
    press(&mut a, KeyCode::Enter);
    assert_eq!(a.frame().unwrap().cursor, 4, "the bytes 00 55 start at 4");
    let buf = draw(&mut a, 80, 24);
    assert_eq!(
        hex_cell(&buf, 78, 5).bg,
        Color::Yellow,
        "hit bytes are marked"
    );

    press(&mut a, KeyCode::Char('/'));
    type_text(&mut a, "tagged_fields");
    press(&mut a, KeyCode::Enter);
    let hits = a.search.as_ref().unwrap().hits.len();
    assert_eq!(hits, 5);
    let mut seen = vec![a.frame().unwrap().cursor];
    for _ in 1..hits {
        press(&mut a, KeyCode::Char('n'));
        seen.push(a.frame().unwrap().cursor);
    }
    assert_eq!(seen, vec![0x0e, 0x4a, 0x4b, 0x4c, 0x4d]);
    press(&mut a, KeyCode::Char('N'));
    assert_eq!(a.frame().unwrap().cursor, 0x4c);
    assert!(a.status.as_ref().unwrap().text.contains("match 4 of 5"));
}

#[test]
fn pasted_hex_opens_a_new_frame_in_the_frame_list() {
    let mut a = app(REQUEST);
    let buf = draw(&mut a, 80, 24);
    assert!(
        row_containing(&buf, "frames (").is_none(),
        "one frame: no frame list"
    );
    a.on_paste(&sample_text(OTHER_REQUEST));
    assert_eq!((a.frames.len(), a.current), (2, 1));
    let buf = draw(&mut a, 80, 24);
    assert!(row_containing(&buf, " frames (2) ").is_some());
    assert!(
        row_containing(
            &buf,
            "#2  paste 1 +0x0000  DeleteShareGroupStateRequest message v0  41 B"
        )
        .is_some(),
        "{}",
        rows(&buf).join("\n")
    );
    assert!(
        row_starting(&buf, "0000  00 00 00 25 00 56").is_some(),
        "the grid shows the pasted frame"
    );
    // The frame list takes part in Tab and in [ ].
    press(&mut a, KeyCode::Char('['));
    assert_eq!(a.current, 0);
    press(&mut a, KeyCode::Tab);
    press(&mut a, KeyCode::Tab);
    assert_eq!(a.focus, Focus::Frames);
    press(&mut a, KeyCode::Char('j'));
    assert_eq!(a.current, 1);

    a.on_paste("not hex at all");
    assert_eq!(a.frames.len(), 2);
    assert!(a
        .status
        .as_ref()
        .is_some_and(|s| s.error && s.text.contains("not hex")));
}

#[test]
fn a_paste_with_cr_line_breaks_is_read_whole_and_a_bare_frame_offered_both_ways() {
    // Terminals send CR between pasted lines: a 200-byte dump arrives as one
    // CR-separated text.
    let mut frame = parse_hex_text(&sample_text(REQUEST)).unwrap();
    frame.extend(vec![0u8; 200 - frame.len()]);
    let size = (frame.len() - 4) as u32;
    frame[..4].copy_from_slice(&size.to_be_bytes());
    let dump: String = frame
        .chunks(16)
        .enumerate()
        .map(|(i, row)| {
            let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
            format!("{:08x}: {}\r", i * 16, hex.join(" "))
        })
        .collect();
    let mut a = App::new(Catalogue::builtin(), None, Vec::new(), Theme::COLOR);
    a.on_paste(&dump);
    assert_eq!(a.frames.len(), 1);
    assert_eq!(a.frame().unwrap().frame.bytes.len(), 200);

    // The frame without its size prefix: shown with one added (selected) and
    // as given after it.
    let bare = parse_hex_text(&sample_text(REQUEST)).unwrap()[4..]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    a.on_paste(&bare);
    assert_eq!((a.frames.len(), a.current), (3, 1));
    let added = &a.frame().unwrap().frame;
    assert!(added.error.is_none(), "{:?}", added.error);
    let status = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert!(
        status.contains("without its 4-byte size prefix"),
        "{status}"
    );
    let buf = draw(&mut a, 120, 30);
    assert!(
        row_containing(&buf, "paste 2, size prefix added").is_some(),
        "{}",
        rows(&buf).join("\n")
    );
    assert!(row_containing(&buf, "paste 2, as given").is_some());
}

#[test]
fn a_response_is_decoded_again_with_the_api_typed_after_v() {
    let text = sample_text(RESPONSE);
    let mut a = App::new(Catalogue::builtin(), None, Vec::new(), Theme::COLOR);
    a.on_paste(&text);
    assert!(
        a.frame().unwrap().frame.error.is_some(),
        "a response read as a request fails"
    );
    press(&mut a, KeyCode::Char('v'));
    a.on_key(KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
    type_text(&mut a, "WriteShareGroupState 0");
    press(&mut a, KeyCode::Enter);
    let f = &a.frame().unwrap().frame;
    assert_eq!(f.root.name, "WriteShareGroupStateResponse");
    assert!(f.error.is_none(), "{:?}", f.error);
    assert!(a.frame().unwrap().errors.is_empty());

    press(&mut a, KeyCode::Char('v'));
    // The prompt starts empty: what is typed is the whole answer.
    assert!(
        matches!(&a.mode, Mode::Prompt(p) if p.text.is_empty()),
        "{:?}",
        a.mode
    );
    assert!(
        a.status
            .as_ref()
            .is_some_and(|s| s.text.contains("WriteShareGroupState")),
        "the status line says what it is now"
    );
    type_text(&mut a, "WriteShareGroupState 99");
    press(&mut a, KeyCode::Enter);
    assert!(a
        .status
        .as_ref()
        .is_some_and(|s| s.error && s.text.contains("no response version 99")));
    assert_eq!(
        a.frame().unwrap().frame.root.name,
        "WriteShareGroupStateResponse",
        "unchanged after a bad answer"
    );
}

#[test]
fn decode_errors_show_in_grid_tree_and_status_line() {
    // The request cut after 40 bytes: TopicId's partition data is missing.
    let mut bytes = parse_hex_text(&sample_text(REQUEST)).unwrap();
    bytes.truncate(0x30);
    let mut a = App::new(Catalogue::builtin(), None, decode(bytes), Theme::COLOR);
    let err = a.frame().unwrap().frame.error.clone().expect("an error");
    let bad = a.frame().unwrap().errors.clone();
    assert!(!bad.is_empty());
    draw(&mut a, 80, 24);
    a.move_cursor(err.offset);
    assert!(
        a.frame().unwrap().selected_node().error().is_some(),
        "the node at the error offset carries it"
    );
    let buf = draw(&mut a, 80, 24);
    assert!(
        row_containing(&buf, "error    ").is_some(),
        "details show the error"
    );
    let r = &bad[0];
    for b in r.clone() {
        assert_eq!(hex_cell(&buf, 0x30, b).bg, Color::Red, "error byte {b:#x}");
    }
    let status = row_text(&buf, 23);
    assert!(status.starts_with("✗ at offset"), "status line: {status}");
    assert!(status.contains(&format!("0x{:04x}", err.offset)));
    let y = row_containing(&buf, " !! ").expect("the failing node's line in the tree");
    let x = row_text(&buf, y).find(" !! ").unwrap() as u16;
    assert_eq!(buf[(x, y)].fg, Color::Red);
}

#[test]
fn eighty_by_twenty_four_stacks_and_wide_terminals_split() {
    let mut a = app(REQUEST);
    let buf = draw(&mut a, 80, 24);
    let (grid, tree, details) = (
        row_containing(&buf, " hex · ").unwrap(),
        row_containing(&buf, " tree ").unwrap(),
        row_containing(&buf, " details ").unwrap(),
    );
    assert!(
        grid < tree && tree < details,
        "stacked: grid, tree, details"
    );
    assert!(
        row_text(&buf, 23).contains("? keys"),
        "status line at the bottom"
    );
    assert_eq!(
        row_text(&buf, grid + 1).trim_end().chars().count(),
        72,
        "a full grid row fits in 80 columns"
    );

    let buf = draw(&mut a, 200, 50);
    let y = row_starting(&buf, "0000  ").unwrap();
    assert!(
        row_text(&buf, y).contains("WriteShareGroupStateRequest message v0"),
        "tree beside the grid"
    );
    // Every line of this small tree fits on the tall screen.
    assert!(row_containing(&buf, "[0x004d, 1B]").is_some());
}

#[test]
fn help_overlay_lists_every_key() {
    let mut a = app(REQUEST);
    press(&mut a, KeyCode::Char('?'));
    assert_eq!(a.mode, Mode::Help);
    let buf = draw(&mut a, 80, 24);
    let screen = rows(&buf);
    let overlay: Vec<&String> = screen.iter().filter(|l| l.contains('│')).collect();
    let has = |key: &str, what: &str| {
        overlay
            .iter()
            .any(|l| l.contains(&format!("│{key}")) && l.contains(what))
    };
    let expected = [
        ("↑ ↓ ← → / h j k l", "move"),
        ("PgUp PgDn Home End", "page"),
        ("g G", "first / last"),
        ("Tab Shift-Tab z", "pane"),
        ("Enter Space", "expand / collapse"),
        ("/", "search"),
        ("n N", "next / previous match"),
        (":", "jump to an offset"),
        ("v", "decode again"),
        ("[ ] { }", "next frame; { } of the same connection"),
        ("p", "response"),
        ("+ - s", "sorts"),
        ("f", "filter"),
        ("t", "first frame"),
        ("r R", "records"),
        ("!", "findings"),
        ("x", "export"),
        ("paste mouse", "new frame; click selects, wheel scrolls"),
        ("e c w < >", "expand/collapse all"),
        ("Esc Ctrl-U", "close"),
        ("?", "help"),
        ("q Ctrl-C", "quit"),
    ];
    for (key, what) in expected {
        assert!(
            has(key, what),
            "help lacks {key:?} ({what}):\n{}",
            screen.join("\n")
        );
    }
    assert_eq!(
        help::KEYS.len(),
        expected.len(),
        "every key in the table is checked here"
    );
    let (w, h) = help::HelpOverlay::size();
    assert!(w <= 80 && h <= 24, "the help fits 80x24: {w}x{h}");
    for b in help::KEYS {
        assert!(has(b.keys, ""), "{}", b.keys);
    }
    let readme =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
            .unwrap();
    for b in help::KEYS {
        assert!(
            readme.contains(&format!("| {} | {} |", b.keys, b.what)),
            "README's key table lacks | {} | {} |",
            b.keys,
            b.what
        );
    }
    // Keys other than the closing ones leave it open; q closes it without quitting.
    press(&mut a, KeyCode::Char('j'));
    assert_eq!(a.mode, Mode::Help);
    press(&mut a, KeyCode::Char('q'));
    assert_eq!(a.mode, Mode::Normal);
    assert!(!a.quit);
    press(&mut a, KeyCode::Char('q'));
    assert!(a.quit);
}

#[test]
fn ctrl_c_quits_even_from_a_prompt() {
    let mut a = app(REQUEST);
    press(&mut a, KeyCode::Char('/'));
    assert!(matches!(a.mode, Mode::Prompt(_)));
    a.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(a.quit);
}

#[test]
fn an_empty_start_waits_for_a_paste() {
    let mut a = App::new(Catalogue::builtin(), None, Vec::new(), Theme::COLOR);
    let buf = draw(&mut a, 80, 24);
    assert!(row_containing(&buf, "Paste hex text").is_some());
    for k in ['j', 'l', 'G', '/', 'v', 'n', ':'] {
        press(&mut a, KeyCode::Char(k));
        press(&mut a, KeyCode::Enter);
        draw(&mut a, 80, 24);
    }
    a.on_paste(&sample_text(REQUEST));
    assert_eq!(a.frames.len(), 1);
    let buf = draw(&mut a, 80, 24);
    assert!(row_starting(&buf, "0000  00 00 00 4a").is_some());
}

/// A request with `n` topics: 60 bytes each, so the tree has ~15 nodes per topic.
fn big_request(n: usize) -> Vec<u8> {
    let sample = parse_hex_text(&sample_text(REQUEST)).unwrap();
    let mut body = sample[4..0x10].to_vec(); // header and GroupId
    let mut count = n as u64 + 1; // compact array: uvarint n+1
    while count >= 0x80 {
        body.push((count as u8 & 0x7f) | 0x80);
        count >>= 7;
    }
    body.push(count as u8);
    for _ in 0..n {
        body.extend_from_slice(&sample[0x11..0x4d]);
    }
    body.push(0);
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend(body);
    out
}

#[test]
fn large_frames_stay_responsive() {
    let n = 20_000;
    let frames = decode(big_request(n));
    assert!(frames[0].error.is_none(), "{:?}", frames[0].error);
    let started = std::time::Instant::now();
    let mut a = App::new(Catalogue::builtin(), None, frames, Theme::COLOR);
    let rows = a.frame().unwrap().tree.rows().len();
    assert!(
        rows < n * 3,
        "a large tree opens only a few levels ({rows} lines)"
    );
    let mut t = Terminal::new(TestBackend::new(120, 40)).unwrap();
    for i in 0..50 {
        press(
            &mut a,
            if i % 2 == 0 {
                KeyCode::PageDown
            } else {
                KeyCode::Char('j')
            },
        );
        t.draw(|f| ui::draw(f, &mut a)).unwrap();
    }
    press(&mut a, KeyCode::Char('G'));
    t.draw(|f| ui::draw(f, &mut a)).unwrap();
    assert_eq!(selected_name(&a), "tagged_fields");
    let spent = started.elapsed();
    assert!(
        spent.as_secs() < 20,
        "50 moves and draws over {n} topics took {spent:?}"
    );
}

/// The explorer over a shipped capture, indexed as `kwire capture --tui` indexes it.
fn capture_app(path: &str) -> App<'static> {
    let (mut app, events) = capture_app_and_events(path);
    for ev in events {
        app.on_index_event(ev);
    }
    app
}

/// An explorer for a shipped capture that has not had its index events yet, and those events.
fn capture_app_and_events(path: &str) -> (App<'static>, Vec<kwire::analysis::index::IndexEvent>) {
    let bytes = std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap();
    capture_bytes_app_and_events(&bytes)
}

/// [`capture_app_and_events`] of a capture's bytes.
fn capture_bytes_app_and_events(
    bytes: &[u8],
) -> (App<'static>, Vec<kwire::analysis::index::IndexEvent>) {
    use kwire::analysis::index::{index_capture, IndexReading, Progress, Spool};
    let cat = Catalogue::builtin();
    let (spool, file) = Spool::create().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let progress = Progress::default();
    index_capture(
        IndexReading {
            cat,
            release: None,
            guess: false,
            opts: &Default::default(),
        },
        bytes,
        file,
        &progress,
        &tx,
    );
    drop(tx);
    let state = kwire::tui::app::CaptureState::new(spool, progress, false, Default::default());
    let app = App::for_capture(cat, None, state, Theme::COLOR);
    (app, rx.into_iter().collect())
}

fn filter(app: &mut App, terms: &str) {
    press(app, KeyCode::Char('f'));
    for _ in 0..40 {
        press(app, KeyCode::Backspace);
    }
    type_text(app, terms);
    press(app, KeyCode::Enter);
}

/// The list lines that are a connection's open or close, as drawn.
fn conn_lines(buf: &Buffer) -> Vec<String> {
    rows(buf)
        .into_iter()
        .filter(|r| {
            r.contains(" opened by the ")
                || r.contains(" closed by the ")
                || r.contains(" reset by the ")
        })
        .map(|r| r.trim_matches(|c: char| c == '│' || c == ' ').to_string())
        .collect()
}

#[test]
fn connections_opened_and_closed_are_lines_among_a_capture_s_frames() {
    let mut app = capture_app("samples/captures/kafka-python.pcap");
    let buf = draw(&mut app, 200, 60);
    // As `capture --list` shows them: the flag in the number's column, who
    // did it; the connection's addresses in a line before its first.
    let syn = row_containing(
        &buf,
        "SYN 2026-12-01T16:24:01.130850Z conn 0 → opened by the client",
    )
    .unwrap_or_else(|| panic!("{:#?}", rows(&buf)));
    assert!(
        row_text(&buf, syn - 1).starts_with("conn 0 = 127.0.0.1:41200 → 127.0.0.1:19092"),
        "{}",
        row_text(&buf, syn - 1)
    );
    assert!(
        row_text(&buf, syn + 1).contains("    0 2026-12-01T16:24:01.132038Z conn 0 "),
        "{}",
        row_text(&buf, syn + 1)
    );
    let fin = row_containing(
        &buf,
        "FIN 2026-12-01T16:24:01.143739Z conn 0 → closed by the client (FIN)",
    )
    .unwrap();
    assert!(row_text(&buf, fin - 1).contains("    3 2026-12-01T16:24:01.141761Z conn 0 "));
    assert!(row_text(&buf, fin + 1).contains("closed by the broker (FIN)"));
    assert!(row_text(&buf, fin + 2).starts_with("conn 1 = "));
    assert!(row_text(&buf, fin + 3).contains("SYN 2026-12-01T16:24:01.144537Z conn 1 "));
    assert!(row_text(&buf, fin + 4).contains("    4 2026-12-01T16:24:01.145219Z conn 1 "));
    // They are read, not selected: keys go from frame to frame, a click on one selects nothing.
    assert_eq!(app.current, 0);
    for _ in 0..4 {
        press(&mut app, KeyCode::Down);
    }
    assert_eq!(app.current, 4);
    let list = app.geometry.frames.unwrap();
    let clicked = list.y + (fin - list.y);
    app.on_mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: list.x + 3,
        row: clicked,
        modifiers: KeyModifiers::NONE,
    });
    assert_eq!(app.current, 4, "a click on a FIN line");
    // A filter that names frames shows frames only; one that names a connection shows its opens and closes.
    filter(&mut app, "api=Metadata");
    let buf = draw(&mut app, 200, 60);
    assert_eq!(conn_lines(&buf), Vec::<String>::new());
    filter(&mut app, "conn=1");
    let buf = draw(&mut app, 200, 60);
    let lines = conn_lines(&buf);
    assert!(
        lines.len() >= 2 && lines.iter().all(|l| l.contains(" conn 1 ")),
        "{lines:#?}"
    );
    assert!(lines[0].starts_with("SYN "), "{lines:#?}");
}

/// A capture read from a pipe may reach the explorer one frame first, while
/// the list is not shown yet (it shows from two frames on): the list must
/// still start at its top, the first connection's name and open above its
/// first frame (CI once saw the list scrolled two lines down).
#[test]
fn a_capture_whose_first_frame_arrives_alone_lists_from_its_top() {
    use kwire::analysis::index::IndexEvent;
    let (mut app, events) = capture_app_and_events("samples/captures/kafka-python.pcap");
    // Every row in one event, then split after the first frame.
    let (mut first, mut conns, mut new_topics, mut topic_ids, mut others) =
        (Vec::new(), Vec::new(), Vec::new(), None, Vec::new());
    for ev in events {
        match ev {
            IndexEvent::Rows {
                rows,
                conns: c,
                new_topics: t,
                topic_ids: ids,
            } => {
                first.extend(rows);
                conns.extend(c);
                new_topics.extend(t);
                topic_ids = Some(ids);
            }
            other => others.push(other),
        }
    }
    let topic_ids = topic_ids.expect("rows");
    assert!(first.len() > 1, "the capture holds {} rows", first.len());
    let (conns_first, conns_rest): (Vec<_>, Vec<_>) =
        conns.into_iter().partition(|c| c.before == 0);
    assert!(!conns_first.is_empty(), "conn 0's open precedes frame 0");
    let rest = first.split_off(1);
    draw(&mut app, 200, 60);
    app.on_index_event(IndexEvent::Rows {
        rows: first,
        conns: conns_first,
        new_topics,
        topic_ids: topic_ids.clone(),
    });
    draw(&mut app, 200, 60);
    app.on_index_event(IndexEvent::Rows {
        rows: rest,
        conns: conns_rest,
        new_topics: Vec::new(),
        topic_ids,
    });
    for ev in others {
        app.on_index_event(ev);
    }
    let buf = draw(&mut app, 200, 60);
    assert!(
        row_text(&buf, 1).starts_with("conn 0 = 127.0.0.1:41200 → 127.0.0.1:19092"),
        "{:#?}",
        &rows(&buf)[..4]
    );
    assert!(
        row_text(&buf, 2).contains("SYN 2026-12-01T16:24:01.130850Z conn 0 → opened by the client")
    );
    assert!(row_text(&buf, 3).contains("    0 2026-12-01T16:24:01.132038Z conn 0 "));
}

/// `r` names a topic id by the name the capture tied to it, as `kwire
/// records` does, and shows the id only when nothing named it.
#[test]
fn records_name_a_topic_id_the_capture_named() {
    use kwire::decode::fields::TopicIds;
    use kwire::tui::records_view::record_lines;
    let cat = Catalogue::builtin();
    let id = [0x11u8; 16];
    let batch = common::batches::batch(
        7,
        0,
        &[common::batches::rec(Some(b"k"), Some(b"v"), &[], 0)],
    );
    let body = serde_json::json!({"Responses": [{"TopicId": "11111111-1111-1111-1111-111111111111",
        "Partitions": [{"PartitionIndex": 3, "Records": hex::encode(&batch)}]}]});
    let bytes = common::batches::frame(cat, Direction::Response, 1, 13, body);
    let opts = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(1),
        api_version: Some(13),
        ..Default::default()
    };
    let frame = kwire::decode::decode_frame(cat, bytes.into(), 0, &opts);
    assert!(frame.error.is_none(), "{:?}", frame.error);
    let unnamed = record_lines(cat, None, &frame, &TopicIds::default(), None, &|_| None);
    assert!(
        unnamed.lines[0]
            .text
            .starts_with("11111111-1111-1111-1111-111111111111/3        7  "),
        "{:?}",
        unnamed.lines
    );
    let mut ids = TopicIds::default();
    ids.insert(id, b"orders");
    let named = record_lines(cat, None, &frame, &ids, None, &|_| None);
    assert!(
        named.lines[0]
            .text
            .starts_with("orders/3                    7  "),
        "{:?}",
        named.lines
    );
}

/// `w` hides the wire's plumbing (lengths, counts, empty tagged sections) in
/// every frame shown until pressed again; `c` collapses to header and body,
/// `e` opens everything.
#[test]
fn w_hides_the_wire_s_plumbing_and_e_c_expand_and_collapse_all() {
    use kwire::tui::tree_state::is_plumbing;
    let mut a = app(REQUEST);
    let node_at = |root: &kwire::decode::Node, path: &[usize]| {
        let mut n = root;
        for &i in path {
            n = &n.children[i];
        }
        n.clone()
    };
    let plumbing_rows = |a: &App| {
        let fv = a.frame().unwrap();
        fv.tree
            .rows()
            .iter()
            .filter(|r| is_plumbing(&node_at(&fv.frame.root, &r.path)))
            .count()
    };
    let all = a.frame().unwrap().tree.rows().len();
    let plumbing = plumbing_rows(&a);
    assert!(plumbing > 0, "the sample has lengths and tagged sections");
    press(&mut a, KeyCode::Char('w'));
    assert!(a.plain);
    assert_eq!(plumbing_rows(&a), 0);
    assert_eq!(a.frame().unwrap().tree.rows().len(), all - plumbing);
    let buf = draw(&mut a, 120, 40);
    assert!(
        row_containing(&buf, "tagged_fields uvarint").is_none(),
        "{}",
        rows(&buf).join("\n")
    );
    assert!(row_containing(&buf, "TopicId uuid").is_some());
    // Another frame is shown the same way.
    a.on_paste(&sample_text(OTHER_REQUEST));
    assert_eq!(plumbing_rows(&a), 0);
    press(&mut a, KeyCode::Char('w'));
    assert!(!a.plain && plumbing_rows(&a) > 0);

    press(&mut a, KeyCode::Char('c'));
    let root_children = a.frame().unwrap().frame.root.children.len();
    assert_eq!(a.frame().unwrap().tree.rows().len(), 1 + root_children);
    press(&mut a, KeyCode::Char('e'));
    let mut nodes = 0;
    a.frame().unwrap().frame.root.walk(&mut |_, _| nodes += 1);
    assert_eq!(a.frame().unwrap().tree.rows().len(), nodes);
}

/// `z` gives the focused pane the whole screen, Tab moves the zoom to the
/// next pane, and `z` again brings the others back; at 80x24 and 200x50.
#[test]
fn z_zooms_the_focused_pane_and_back() {
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let mut a = app(REQUEST);
        a.on_paste(&sample_text(OTHER_REQUEST));
        while a.focus != Focus::Tree {
            press(&mut a, KeyCode::Tab);
        }
        let normal = draw(&mut a, w, h);
        assert!(row_starting(&normal, "0000  00 00 00 25").is_some());
        press(&mut a, KeyCode::Char('z'));
        let zoomed = draw(&mut a, w, h);
        assert!(
            row_starting(&zoomed, "0000  00 00 00 25").is_none(),
            "no grid"
        );
        assert!(row_containing(&zoomed, " frames (2) ").is_none(), "no list");
        assert!(row_containing(&zoomed, " details ").is_none(), "no details");
        assert_eq!(
            a.geometry.tree.height,
            h - 2,
            "the tree over all but title and status"
        );
        press(&mut a, KeyCode::Tab);
        let next = draw(&mut a, w, h);
        assert_ne!(a.focus, Focus::Tree);
        assert!(
            row_containing(&next, " tree ").is_none(),
            "the zoom moved on"
        );
        press(&mut a, KeyCode::Char('z'));
        let back = draw(&mut a, w, h);
        assert!(row_starting(&back, "0000  00 00 00 25").is_some());
        assert!(row_containing(&back, " tree ").is_some());
    }
}

/// `<` and `>` scroll long tree lines sideways; a click on a marker still
/// toggles the node under it.
#[test]
fn long_tree_lines_scroll_sideways() {
    let mut a = app(REQUEST);
    let before = draw(&mut a, 80, 24);
    let cut = "version of the request body that follows";
    assert!(row_containing(&before, cut).is_none(), "cut at 80 columns");
    press(&mut a, KeyCode::Char('>'));
    press(&mut a, KeyCode::Char('>'));
    let after = draw(&mut a, 80, 24);
    assert!(
        row_containing(&after, cut).is_some(),
        "{}",
        rows(&after).join("\n")
    );
    assert_eq!(a.frame().unwrap().tree.left, 16);
    press(&mut a, KeyCode::Char('<'));
    press(&mut a, KeyCode::Char('<'));
    press(&mut a, KeyCode::Char('<'));
    assert_eq!(a.frame().unwrap().tree.left, 0);
}

/// A jump (here to an offset) centres the line it reaches in the tree; a
/// step past the edge scrolls by one line.
#[test]
fn a_jump_centres_the_selection_a_step_scrolls_by_a_line() {
    let frames = decode(big_request(40));
    let mut a = App::new(Catalogue::builtin(), None, frames, Theme::COLOR);
    draw(&mut a, 120, 40);
    let len = a.frame().unwrap().frame.bytes.len();
    press(&mut a, KeyCode::Char(':'));
    type_text(&mut a, &format!("{}", len / 2));
    press(&mut a, KeyCode::Enter);
    draw(&mut a, 120, 40);
    let height = usize::from(a.geometry.tree.height);
    let t = &a.frame().unwrap().tree;
    let at = t.selected_row() - t.top;
    assert!(
        at.abs_diff(height / 2) <= 1,
        "the selection is on line {at} of {height}, not near the middle"
    );
    // A step down from the last line on screen scrolls by one.
    while a.focus != Focus::Tree {
        press(&mut a, KeyCode::Tab);
    }
    while a.frame().unwrap().tree.selected_row() + 1 < a.frame().unwrap().tree.top + height {
        press(&mut a, KeyCode::Down);
    }
    let top = a.frame().unwrap().tree.top;
    press(&mut a, KeyCode::Down);
    assert_eq!(a.frame().unwrap().tree.top, top + 1);
}

/// `s` sorts the frame list by latency (slowest exchange first, request and
/// response together), size and API, and back to capture order with its
/// connection lines; the keys walk the order shown; at 80x24 and 200x50.
#[test]
fn s_sorts_the_frame_list_by_latency_size_and_api_and_back() {
    use kwire::tui::app::{FrameSort, ListLine};
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let mut a = capture_app("samples/captures/kafka-python.pcap");
        while a.focus != Focus::Frames {
            press(&mut a, KeyCode::Tab);
        }
        let latency = |a: &App, i: usize| {
            let r = a.frames[i].row.as_ref().unwrap();
            r.latency_us
                .or_else(|| a.frames[r.pair?].row.as_ref()?.latency_us)
        };
        let listed = |a: &App| -> Vec<usize> {
            a.lines
                .iter()
                .filter_map(|l| match *l {
                    ListLine::Frame(i) => Some(i),
                    _ => None,
                })
                .collect()
        };
        press(&mut a, KeyCode::Char('s'));
        assert_eq!(a.sort, FrameSort::Latency);
        let order = listed(&a);
        assert_eq!(
            order.len(),
            a.frames.len(),
            "every frame, no connection lines"
        );
        assert!(order
            .windows(2)
            .all(|p| latency(&a, p[0]) >= latency(&a, p[1])));
        let slowest = order[0];
        let pair = a.frames[slowest].row.as_ref().unwrap().pair.unwrap();
        assert_eq!(
            order[1],
            slowest.min(pair).max(order[1]),
            "the exchange's two frames first"
        );
        let buf = draw(&mut a, w, h);
        assert!(
            row_containing(&buf, "sorted by latency (s)").is_some(),
            "{:#?}",
            rows(&buf)
        );
        // Home and j walk the sorted order.
        press(&mut a, KeyCode::Home);
        assert_eq!(a.current, order[0]);
        press(&mut a, KeyCode::Char('j'));
        assert_eq!(a.current, order[1]);
        press(&mut a, KeyCode::Char('s'));
        let sizes: Vec<usize> = listed(&a)
            .iter()
            .map(|&i| a.frames[i].row.as_ref().unwrap().frame.len)
            .collect();
        assert!(sizes.windows(2).all(|p| p[0] >= p[1]), "{sizes:?}");
        press(&mut a, KeyCode::Char('s'));
        assert_eq!(a.sort, FrameSort::Api);
        let names: Vec<&str> = listed(&a)
            .iter()
            .map(|&i| {
                let key = a.frames[i].row.as_ref().unwrap().entry.api_key.unwrap();
                Catalogue::builtin().api_name(key).unwrap()
            })
            .collect();
        assert!(names.windows(2).all(|p| p[0] <= p[1]), "{names:?}");
        assert_eq!(names[0], "ApiVersions");
        press(&mut a, KeyCode::Char('s'));
        assert_eq!(a.sort, FrameSort::Capture);
        assert!(
            matches!(a.lines[0], ListLine::ConnName { .. }),
            "{:?}",
            &a.lines[..3]
        );
        assert_eq!(listed(&a), (0..a.frames.len()).collect::<Vec<_>>());
    }
}

/// `+` and `-` move the split under the frame list two lines at a time;
/// enough `-` hides the list and `+` brings it back; at 80x24 and 200x50.
#[test]
fn plus_and_minus_resize_the_frame_list_down_to_hidden() {
    for (w, h) in [(80u16, 24u16), (200, 50)] {
        let mut a = capture_app("samples/captures/kafka-python.pcap");
        draw(&mut a, w, h);
        let start = a.geometry.frames.unwrap().height;
        press(&mut a, KeyCode::Char('+'));
        draw(&mut a, w, h);
        assert_eq!(a.geometry.frames.unwrap().height, start + 2);
        for _ in 0..100 {
            press(&mut a, KeyCode::Char('+'));
        }
        let buf = draw(&mut a, w, h);
        let tall = a.geometry.frames.unwrap().height;
        assert!(
            a.geometry.grid.height >= 2 && a.geometry.tree.height >= 1,
            "the panes under it keep room: {:?}",
            a.geometry
        );
        assert!(row_containing(&buf, " hex ").is_some(), "{:#?}", rows(&buf));
        // Past the top, `-` acts at once: the presses beyond it were not kept.
        press(&mut a, KeyCode::Char('-'));
        draw(&mut a, w, h);
        assert_eq!(a.geometry.frames.unwrap().height, tall - 2);
        press(&mut a, KeyCode::Char('+'));
        for _ in 0..200 {
            press(&mut a, KeyCode::Char('-'));
        }
        let buf = draw(&mut a, w, h);
        assert!(a.geometry.frames.is_none(), "hidden");
        assert!(row_containing(&buf, " frames (").is_none());
        for _ in 0..100 {
            press(&mut a, KeyCode::Char('-'));
        }
        // Back as far as it went.
        for _ in 0..300 {
            press(&mut a, KeyCode::Char('+'));
        }
        draw(&mut a, w, h);
        assert_eq!(a.geometry.frames.unwrap().height, tall);
    }
}

/// A row keeps no addresses (its connection's are kept once, in the
/// spool's table): every frame of every shipped capture comes back from its
/// row as the capture layer gave it, addresses, place and size alike.
#[test]
fn a_capture_s_rows_give_back_their_frames() {
    use kwire::capture::{for_each_captured, Captured};
    let cat = Catalogue::builtin();
    let mut files = Vec::new();
    for dir in [
        "samples/captures",
        "samples/captures/diagnosis",
        "samples/captures/tls",
    ] {
        for e in
            std::fs::read_dir(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir)).unwrap()
        {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "pcap" || x == "pcapng") {
                files.push(format!(
                    "{dir}/{}",
                    p.file_name().unwrap().to_str().unwrap()
                ));
            }
        }
    }
    assert!(files.len() >= 20, "{files:?}");
    let mut checked = 0;
    for path in files {
        let bytes =
            std::fs::read(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(&path)).unwrap();
        let mut direct = Vec::new();
        for_each_captured(cat, &bytes[..], &Default::default(), |c| {
            if let Captured::Frame(f) = c {
                direct.push(f);
            }
            true
        })
        .unwrap();
        let app = capture_app(&path);
        assert_eq!(app.frames.len(), direct.len(), "{path}");
        for (slot, f) in app.frames.iter().zip(&direct) {
            let row = slot.row.as_ref().unwrap();
            let back = app.listed(row).unwrap();
            let facts = |f: &kwire::capture::CapturedFrame| {
                format!(
                    "{} {} {} {} {:?} {:?} {:?} {:?} {} {} {} {:?} {:?}",
                    f.index,
                    f.timestamp,
                    f.conn,
                    f.from,
                    f.to,
                    f.direction,
                    f.correlation_id,
                    (f.api_key, f.api_version),
                    f.after_gap,
                    f.offset,
                    f.len,
                    f.kind.sasl_mechanism(),
                    f.repeats
                )
            };
            assert_eq!(facts(&back), facts(f), "{path}");
            checked += 1;
        }
    }
    assert!(checked > 900, "{checked} frames");
}

/// A second answer under one correlation id is marked on its row, as
/// `kwire capture --list` marks it.
#[test]
fn a_repeated_response_s_row_says_which_it_repeats() {
    use common::exchanges::Timeline;
    let mut t = Timeline::default();
    let (rq, rs) = (
        serde_json::json!({"Topics": [], "AllowAutoTopicCreation": false, "IncludeTopicAuthorizedOperations": false}),
        serde_json::json!({"ThrottleTimeMs": 0, "Brokers": [], "ClusterId": null, "ControllerId": 1, "Topics": []}),
    );
    t.on(50000, "c").pair(7, "Metadata", 12, rq, rs.clone());
    let again = common::exchanges::frame(
        kwire::decode::Direction::Response,
        "Metadata",
        12,
        7,
        "c",
        rs,
    );
    t.send(50000, false, &again);
    let (mut app, events) = capture_bytes_app_and_events(&t.pcap());
    for ev in events {
        app.on_index_event(ev);
    }
    let buf = draw(&mut app, 160, 30);
    let row = row_containing(&buf, "[duplicate of #1]").map(|y| row_text(&buf, y));
    assert!(
        row.is_some_and(|r| r.contains("    2 ")),
        "{:#?}",
        rows(&buf)
    );
}

/// A Fetch v4 response whose records field is over a megabyte: 220 batches of 100 small records.
fn big_fetch(cat: &Catalogue) -> Vec<u8> {
    let records = common::batches::small_record_batches(220);
    let bytes = common::batches::fetch_v4(cat, "orders", &records);
    assert!(bytes.len() > kwire::tui::app::STUB_RECORDS_OVER);
    bytes
}

fn fetch_v4_options() -> kwire::decode::DecodeOptions {
    kwire::decode::DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(1),
        api_version: Some(4),
        ..Default::default()
    }
}

fn search_for(app: &mut App, text: &str) {
    press(app, KeyCode::Char('/'));
    type_text(app, text);
    press(app, KeyCode::Enter);
}

/// The explorer holds a frame up to 1 MiB whole, partitions and records
/// alike, as its other views show it (its records list, its grid's errors,
/// what its batches decompress); a larger Fetch of many partitions holds
/// its topics and partitions as stubs, and `r` still lists every record.
#[test]
fn partitions_are_stubs_only_in_frames_over_a_megabyte() {
    let cat = Catalogue::builtin();
    let part = common::batches::small_record_batches(20);
    let opts = kwire::tui::app::stubbing(fetch_v4_options());
    let small = common::batches::fetch_v4_partitions(cat, "orders", &[&part[..]; 2]);
    assert!(small.len() > kwire::decode::frame::DEFER_ELEMENTS_OVER && small.len() < 1 << 20);
    let frame = kwire::decode::decode_frame(cat, Bytes::from(small), 0, &opts);
    let app = App::new(cat, None, vec![frame], Theme::COLOR);
    assert_eq!(app.frame().unwrap().unopened_stubs(), 0);
    let big = common::batches::fetch_v4_partitions(cat, "orders", &[&part[..]; 12]);
    assert!(big.len() > 1 << 20);
    let frame = kwire::decode::decode_frame(cat, Bytes::from(big), 0, &opts);
    let mut app = App::new(cat, None, vec![frame], Theme::COLOR);
    // The one topic, a stub whose partitions are stubs in turn.
    assert_eq!(app.frame().unwrap().unopened_stubs(), 1);
    press(&mut app, KeyCode::Char('r'));
    match &app.mode {
        Mode::Records(list) => assert_eq!(list.lines.len(), 12 * 2_000),
        _ => panic!("r did not list records: {:?}", app.status),
    }
}

/// The explorer holds a records field over a megabyte as one stub per
/// batch (a Fetch of 400,000 records would take a gigabyte of nodes):
/// Enter opens a stub into exactly the batch the whole tree holds, its
/// bytes take their regions, and past 64 open stubs the oldest fold back.
/// Search, `r` and `x json` see every batch, opened or not.
#[test]
fn a_big_records_field_is_a_stub_per_batch_that_enter_opens() {
    let cat = Catalogue::builtin();
    let bytes = Bytes::from(big_fetch(cat));
    let whole = kwire::decode::decode_frame(cat, bytes.clone(), 0, &fetch_v4_options());
    let opts = kwire::decode::DecodeOptions {
        defer_records_over: Some(kwire::tui::app::STUB_RECORDS_OVER),
        ..fetch_v4_options()
    };
    let frame = kwire::decode::decode_frame(cat, bytes.clone(), 0, &opts);
    let mut app = App::new(cat, None, vec![frame], Theme::COLOR);
    assert_eq!(app.frame().unwrap().unopened_stubs(), 220);
    draw(&mut app, 200, 60);

    search_for(&mut app, "RecordBatch[3]");
    assert_eq!(selected_name(&app), "RecordBatch[3]");
    let fv = app.frame().unwrap();
    let stub = fv.selected_node();
    assert!(stub.children.is_empty() && stub.deferred_records().is_some());
    let batch_range = stub.offset..stub.end();
    let record_byte = batch_range.start + 70;
    assert_eq!(fv.regions[record_byte], Some(Region::RecordBatch));
    let buf = draw(&mut app, 200, 60);
    let line = row_containing(&buf, "RecordBatch[3]").expect("the stub's line");
    assert!(
        row_text(&buf, line).contains("▸"),
        "{}",
        row_text(&buf, line)
    );

    app.focus = Focus::Tree;
    press(&mut app, KeyCode::Enter);
    let fv = app.frame().unwrap();
    assert_eq!(fv.unopened_stubs(), 219);
    let opened = fv.selected_node();
    assert_eq!(opened.name.to_string(), "RecordBatch[3]");
    // Exactly the batch the whole tree holds, line for line.
    let path = fv.tree.selected().to_vec();
    let in_whole = whole
        .root
        .at_path(&path)
        .expect("the same path in the whole tree");
    let text =
        |n: &kwire::decode::Node| kwire::render::text_tree::render_tree(n, Default::default());
    assert_eq!(text(opened), text(in_whole));
    assert_eq!(fv.regions[record_byte], Some(Region::Record));
    let buf = draw(&mut app, 200, 60);
    assert!(
        row_containing(&buf, "baseOffset").is_some(),
        "{:#?}",
        rows(&buf)
    );

    // r lists every record, the batches held as stubs walked one at a time;
    // Enter on a record of a batch not opened opens it and selects the record.
    press(&mut app, KeyCode::Char('r'));
    match &app.mode {
        kwire::tui::app::Mode::Records(list) => {
            assert_eq!(list.lines.len(), 22_000);
            assert_eq!(list.of, "frame 1");
            let line = &list.lines[10_050].text;
            assert!(line.contains("  10050  "), "{line}");
        }
        _ => panic!("r did not list records: {:?}", app.status),
    }
    for _ in 0..10_050 {
        press(&mut app, KeyCode::Down);
    }
    press(&mut app, KeyCode::Enter);
    assert_eq!(selected_name(&app), "Record[50]");
    let fv = app.frame().unwrap();
    assert_eq!(fv.unopened_stubs(), 218, "RecordBatch[100] was opened");
    let in_whole = whole.root.at_path(fv.tree.selected()).unwrap();
    assert_eq!(text(fv.selected_node()), text(in_whole));
    // x json writes the whole frame's contract (decoded again values-only),
    // the same JSON as the whole tree's.
    let dir = std::env::temp_dir().join(format!("kwire-stubs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("frame.json");
    press(&mut app, KeyCode::Char('x'));
    type_text(&mut app, &format!("json {}", file.display()));
    press(&mut app, KeyCode::Enter);
    let status = app.status.clone().expect("a status").text;
    assert!(
        status.starts_with("wrote the frame as JSON to "),
        "{status}"
    );
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        written == common::contract::tree_contract(&whole),
        "x json wrote another contract"
    );

    // Past 64 open stubs the oldest fold back; the one selected stays open.
    for i in 10..80 {
        search_for(&mut app, &format!("RecordBatch[{i}]"));
        assert_eq!(selected_name(&app), format!("RecordBatch[{i}]"));
        app.focus = Focus::Tree;
        press(&mut app, KeyCode::Enter);
    }
    let fv = app.frame().unwrap();
    assert_eq!(fv.unopened_stubs(), 220 - 64);
    assert_eq!(fv.selected_node().name.to_string(), "RecordBatch[79]");
    assert!(!fv.selected_node().children.is_empty());
    let records = fv.frame.root.at_path(&path[..path.len() - 1]).unwrap();
    assert!(
        records.children[3].deferred_records().is_some(),
        "RecordBatch[3] folded back"
    );
    // Search walks the stubs too: a key in every batch, opened or not.
    search_for(&mut app, "key-42\"");
    let status = app.status.clone().expect("a status").text;
    assert!(
        status.starts_with("match ") && status.ends_with(" of 220 for key-42\""),
        "{status}"
    );
    assert_eq!(selected_name(&app), "key");
    draw(&mut app, 200, 60);
}

/// The explorer holds an array of structs over 64 KiB as one stub per
/// element (a Metadata response of 200,000 partitions would take a
/// gigabyte of nodes), arrays within an opened element too: the grid is
/// coloured as the whole tree colours it; a byte picked inside a stub opens
/// it and selects the field the whole tree has there; a collapsed stub
/// shows its first fields; past 64 open stubs the oldest fold back with
/// the stubs opened within them, and what is reopened is whole again.
#[test]
fn a_big_array_is_a_stub_per_element_that_the_grid_and_search_open() {
    let cat = Catalogue::builtin();
    let bytes = Bytes::from(common::metadata_response(2, 3_000));
    let read = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(3),
        api_version: Some(12),
        ..Default::default()
    };
    let whole = kwire::decode::decode_frame(cat, bytes.clone(), 0, &read);
    let opts = kwire::tui::app::stubbing(read);
    let frame = kwire::decode::decode_frame(cat, bytes.clone(), 0, &opts);
    let mut app = App::new(cat, None, vec![frame], Theme::COLOR);
    let fv = app.frame().unwrap();
    assert_eq!(fv.unopened_stubs(), 2, "a stub a topic");
    let whole_regions = kwire::decode::regions::byte_regions(&whole.root, bytes.len());
    assert!(
        fv.regions == whole_regions,
        "a stubbed frame's grid is coloured otherwise"
    );
    search_for(&mut app, "MetadataResponseTopic[1]");
    assert_eq!(
        app.frame().unwrap().unopened_stubs(),
        2,
        "selected, not opened"
    );
    let buf = draw(&mut app, 200, 60);
    let line = row_containing(&buf, "MetadataResponseTopic[1]").expect("the stub's line");
    assert!(
        row_text(&buf, line).contains("⟨ErrorCode=0, Name=\"orders-0001\""),
        "{}",
        row_text(&buf, line)
    );

    // A byte of the second topic's partition 2,000: its PartitionIndex.
    let text =
        |n: &kwire::decode::Node| kwire::render::text_tree::render_tree(n, Default::default());
    let topic = &whole.root.at_path(&[2, 4]).unwrap().children[2];
    let partition = &topic.children[4].children[2001];
    let byte = partition.children[1].offset + 1;
    app.move_cursor(byte);
    let fv = app.frame().unwrap();
    assert_eq!(fv.tree.selected(), whole.root.path_at(byte).as_slice());
    assert_eq!(fv.selected_node().name.to_string(), "PartitionIndex");
    assert_eq!(text(fv.selected_node()), text(&partition.children[1]));
    assert_eq!(
        fv.unopened_stubs(),
        1 + 2_999,
        "the topic and the partition opened"
    );

    // Past 64 open stubs the oldest fold back, with what was opened in them:
    // partitions opened in both topics, then in the second only.
    for i in 0..70 {
        for topic in [1, 2] {
            if topic == 1 && i >= 10 {
                continue;
            }
            search_for(&mut app, &format!("MetadataResponsePartition[{i}]"));
            if app.frame().unwrap().tree.selected()[..3] != [2, 4, topic] {
                press(&mut app, KeyCode::Char('n'));
            }
            assert_eq!(
                selected_name(&app),
                format!("MetadataResponsePartition[{i}]")
            );
            assert_eq!(app.frame().unwrap().tree.selected()[..3], [2, 4, topic]);
            app.focus = Focus::Tree;
            press(&mut app, KeyCode::Enter);
        }
    }
    let fv = app.frame().unwrap();
    assert!(fv.unopened_stubs() > 1, "{}", fv.unopened_stubs());
    // No row is shown open over a stub: what was open in a folded stub went with it.
    let stale_rows = |app: &App| {
        let fv = app.frame().unwrap();
        let rows = fv.tree.rows().iter();
        rows.filter(|r| fv.tree.is_expanded(&r.path))
            .filter(|r| {
                fv.frame
                    .root
                    .at_path(&r.path)
                    .is_some_and(|n| n.walked_later())
            })
            .count()
    };
    assert_eq!(stale_rows(&app), 0);
    // The first topic again, reopened: its partitions stubs, none shown open.
    search_for(&mut app, "MetadataResponsePartition[7]");
    if app.frame().unwrap().tree.selected()[..3] != [2, 4, 1] {
        press(&mut app, KeyCode::Char('n'));
    }
    assert_eq!(selected_name(&app), "MetadataResponsePartition[7]");
    let fv = app.frame().unwrap();
    assert_eq!(fv.tree.selected(), &[2, 4, 1, 4, 8]);
    app.focus = Focus::Tree;
    press(&mut app, KeyCode::Enter);
    let fv = app.frame().unwrap();
    let opened = fv.selected_node();
    let in_whole = whole.root.at_path(fv.tree.selected()).unwrap();
    assert_eq!(text(opened), text(in_whole));
    assert_eq!(stale_rows(&app), 0);
    let buf = draw(&mut app, 200, 60);
    let line = row_containing(&buf, "MetadataResponsePartition[6]").expect("a sibling's line");
    assert!(
        row_text(&buf, line).contains("▸"),
        "{}",
        row_text(&buf, line)
    );
    press(&mut app, KeyCode::Char('n'));
    assert_eq!(selected_name(&app), "MetadataResponsePartition[7]");
    assert_eq!(app.frame().unwrap().tree.selected()[..3], [2, 4, 2]);
}

/// The grid finds the node under the cursor by a binary search over each
/// node's children (`Node::child_at`): exact only when a decoder lays
/// children out in byte order without overlaps. Held on every shipped
/// sample and capture, every truncation of the samples, and record batches
/// of every kind (compressed ones included, whose decompressed data has
/// offsets of its own); and at every child's edges the search answers as a
/// look at each child in turn would.
#[test]
fn children_are_in_byte_order_so_the_node_under_a_byte_is_found_by_binary_search() {
    use common::batches::{fetch_v4, produce, record_batch_cases, Entry};
    use kwire::decode::Node;
    let cat = Catalogue::builtin();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut frames: Vec<(String, Frame)> = Vec::new();
    let mut hex: Vec<_> = std::fs::read_dir(root.join("samples"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "hex"))
        .collect();
    hex.sort();
    for p in &hex {
        let text = std::fs::read_to_string(p).unwrap();
        let direction = if p.to_string_lossy().contains("response") {
            Direction::Response
        } else {
            Direction::Request
        };
        let opts = DecodeOptions {
            direction: Some(direction),
            ..Default::default()
        };
        let bytes = Bytes::from(parse_hex_text(&text).unwrap());
        for f in decode_frames(cat, &bytes, &opts) {
            frames.push((p.display().to_string(), f));
        }
        // Every truncation: the partial trees of damaged input.
        for cut in 5..bytes.len().min(4096) {
            let name = format!("{} cut at {cut}", p.display());
            for f in decode_frames(cat, &bytes.slice(..cut), &opts) {
                frames.push((name.clone(), f));
            }
        }
    }
    let mut pcaps: Vec<_> = ["samples/captures", "samples/captures/diagnosis"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap().flatten())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "pcap"))
        .collect();
    pcaps.sort();
    for p in &pcaps {
        let file = std::io::BufReader::new(std::fs::File::open(p).unwrap());
        kwire::capture::for_each_frame(cat, file, None, |f| {
            let d = common::decode_captured(&f);
            frames.push((format!("{} frame {}", p.display(), f.index), d));
            true
        })
        .unwrap();
    }
    for case in record_batch_cases() {
        let (bytes, opts) = match case.entry {
            Entry::Produce => (
                produce(cat, case.topic, &case.records),
                DecodeOptions::default(),
            ),
            _ => (
                fetch_v4(cat, case.topic, &case.records),
                DecodeOptions {
                    direction: Some(Direction::Response),
                    api_key: Some(1),
                    api_version: Some(4),
                    ..Default::default()
                },
            ),
        };
        for f in decode_frames(cat, &Bytes::from(bytes), &opts) {
            frames.push((case.name.to_string(), f));
        }
    }
    assert!(frames.len() > 400, "{} frames", frames.len());

    fn check(name: &str, node: &Node, checked: &mut usize) {
        let mut end = 0;
        for c in node.children.iter().filter(|c| c.len > 0) {
            assert!(
                c.offset >= end,
                "{name}: {} at {} starts before its sibling ends at {end}",
                c.name,
                c.offset
            );
            end = c.end();
        }
        for c in &node.children {
            for at in [c.offset, c.end().saturating_sub(1), c.end()] {
                let one_by_one = node
                    .children
                    .iter()
                    .position(|c| c.offset <= at && at < c.end());
                assert_eq!(
                    node.child_at(at),
                    one_by_one,
                    "{name}: {} byte {at}",
                    node.name
                );
                *checked += 1;
            }
            check(name, c, checked);
        }
    }
    let mut checked = 0;
    for (name, f) in &frames {
        check(name, &f.root, &mut checked);
    }
    assert!(checked > 50_000, "{checked} lookups");
}

/// A log segment opens as one frame of its batches: a small one walked at
/// once, each batch the tree `kwire records` draws; one over a megabyte as
/// a stub per batch, each opening into the batch a whole walk gives.
#[test]
fn a_log_segment_opens_as_one_frame_of_its_batches() {
    use kwire::decode::context::Context;
    use kwire::decode::records::segment::segment_frame;
    use kwire::render::text_tree::render_tree;
    use kwire::tui::app::STUB_RECORDS_OVER as STUBS;
    let cat = Catalogue::builtin();
    let log = std::fs::read("samples/00000000000000000000.log").unwrap();
    let ctx = Context::default();
    let app = App::new(
        cat,
        None,
        vec![segment_frame(cat, &ctx, Bytes::from(log.clone()), STUBS)],
        Theme::COLOR,
    );
    let fv = app.frame().unwrap();
    assert_eq!(fv.unopened_stubs(), 0);
    assert_eq!(fv.frame.root.name.to_string(), "LogSegment");
    let batches = &fv.frame.root.children;
    let names: Vec<String> = batches.iter().map(|n| n.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "RecordBatch[0]",
            "RecordBatch[1]",
            "RecordBatch[2]",
            "RecordBatch[3]",
            "RecordBatch[4]"
        ]
    );
    // `records` fits its lines to 120 columns when its output is no terminal.
    let fitted = kwire::render::text_tree::TreeOptions {
        width: Some(120),
        ..Default::default()
    };
    let drawn: String = batches.iter().map(|n| render_tree(n, fitted)).collect();
    let records = common::kwire_with_stdin(&["records", "-"], &log);
    assert_eq!(drawn, String::from_utf8_lossy(&records.stdout));
    // `r` lists its records, as `records --format json` lists them, and
    // Enter selects each one's node.
    let mut seg = App::new(
        cat,
        None,
        vec![segment_frame(cat, &ctx, Bytes::from(log.clone()), STUBS)],
        Theme::COLOR,
    );
    draw(&mut seg, 120, 40);
    press(&mut seg, KeyCode::Char('r'));
    let buf = draw(&mut seg, 120, 40);
    assert!(
        row_containing(&buf, "records (20) of frame 1").is_some(),
        "{:#?}",
        rows(&buf)
    );
    assert!(
        row_containing(&buf, "\"order-zstd-3\"").is_some(),
        "{:#?}",
        rows(&buf)
    );
    for _ in 0..5 {
        press(&mut seg, KeyCode::Down);
    }
    press(&mut seg, KeyCode::Enter);
    assert_eq!(selected_name(&seg), "Record[1]");
    // Its batch is gzip: its offsets index the decompressed data, `d:` as in the text tree.
    let buf = draw(&mut seg, 120, 40);
    assert!(
        row_containing(&buf, "Record[1] Record [d:0x").is_some(),
        "{:#?}",
        rows(&buf)
    );

    // The sample's batches again and again, their offsets going on, past a megabyte.
    let mut big = Vec::new();
    let mut offset = 0i64;
    while big.len() <= 1 << 20 {
        let mut at = 0;
        while at + 12 <= log.len() {
            let end =
                at + 12 + i32::from_be_bytes(log[at + 8..at + 12].try_into().unwrap()) as usize;
            let mut batch = log[at..end].to_vec();
            batch[..8].copy_from_slice(&offset.to_be_bytes());
            offset += i64::from(i32::from_be_bytes(batch[23..27].try_into().unwrap())) + 1;
            big.extend(batch);
            at = end;
        }
    }
    let big = Bytes::from(big);
    // The whole walk holds every batch's nodes at once: more than the
    // default budget, which the explorer's stubs stay within.
    let roomy = Context {
        budget: kwire::budget::Budget::new(kwire::budget::Limits {
            decompressed: 1 << 30,
            expanded: 1 << 30,
        }),
        ..Context::default()
    };
    let mut whole = Vec::new();
    kwire::decode::records::BatchDecoder::new(&big, cat, &roomy).decode_stream(
        0,
        big.len(),
        &mut whole,
    );
    let mut app = App::new(
        cat,
        None,
        vec![segment_frame(cat, &ctx, big.clone(), STUBS)],
        Theme::COLOR,
    );
    assert_eq!(app.frame().unwrap().unopened_stubs(), whole.len());
    draw(&mut app, 120, 40);
    search_for(&mut app, "RecordBatch[1003]");
    app.focus = Focus::Tree;
    press(&mut app, KeyCode::Enter);
    let fv = app.frame().unwrap();
    assert_eq!(fv.unopened_stubs(), whole.len() - 1);
    let opened = fv.selected_node();
    assert_eq!(opened.name.to_string(), "RecordBatch[1003]");
    assert_eq!(
        render_tree(opened, Default::default()),
        render_tree(&whole[1003], Default::default())
    );
}

/// The index finds what `kwire check` finds: the frames' own findings
/// (kafka-python's Fetch v12 response holds a tag that version does not
/// have) as well as the conversation's, for the `!` list and `finding`.
#[test]
fn the_explorer_finds_what_check_finds() {
    use kwire::analysis::index::IndexEvent;
    let (_, events) = capture_app_and_events("samples/captures/kafka-python.pcap");
    let rules: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            IndexEvent::Findings(found) => Some(found),
            _ => None,
        })
        .flatten()
        .map(|f| f.rule.id())
        .collect();
    assert!(rules.contains(&"tag-version"), "{rules:?}");
    let check = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args([
            "check",
            "samples/captures/kafka-python.pcap",
            "--format",
            "json",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let lines = String::from_utf8_lossy(&check.stdout).lines().count();
    assert_eq!(rules.len(), lines, "as many findings as kwire check prints");
}
