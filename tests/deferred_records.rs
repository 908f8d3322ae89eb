//! A records field left for its view to walk a batch at a time
//! (`DecodeOptions::defer_records_over`, `kwire decode`'s text tree, tree
//! JSON, grid and `--explain`) draws exactly the text the frame's whole tree draws, with the same warnings and
//! record damage in the same places: every kind of record batch, damaged
//! copies, batches cut short or followed by other bytes, internal topics,
//! fetch responses, budgets, and frames with records beside other fields.

mod common;

use bytes::Bytes;
use common::batches::{
    batch, damaged, fetch_v4, fetch_v4_partitions, legacy_message, produce, produce_topics, rec,
    record_batch_cases, Damaged,
};
use common::random_body::Rng;
use kwire::budget::{Budget, Limits};
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame};
use kwire::render::grid::{render_grid, write_grid_drawing};
use kwire::render::text_tree::{write_frame, write_frame_drawing, TreeOptions};
use kwire::render::tree_json::{
    push_frame_tree_json_drawing, write_frame_tree_json, write_frame_tree_json_drawing,
};
use kwire::schema::Catalogue;
use kwire::teach::explain::{render_explained, write_explained_drawing};

thread_local! {
    /// Frames are requests, or (set) Fetch v4 responses.
    static FETCH: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Frames drawn a batch at a time leave their arrays too, those whose
    /// elements hold records included (`defer_record_arrays`, as `kwire
    /// decode` draws): every records field within them is left.
    static ARRAYS: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn fresh(limits: Option<Limits>) -> DecodeOptions {
    let fetch = FETCH.with(|f| f.get());
    DecodeOptions {
        budget: limits.map(Budget::new).unwrap_or_default(),
        direction: fetch.then_some(Direction::Response),
        api_key: fetch.then_some(1),
        api_version: fetch.then_some(4),
        ..Default::default()
    }
}

/// How a frame drawn a batch at a time is decoded: every records field
/// left, and with [`ARRAYS`] every array of structs.
fn deferring(limits: Option<Limits>) -> DecodeOptions {
    let arrays = ARRAYS.with(|a| a.get());
    DecodeOptions {
        defer_records_over: Some(0),
        defer_elements_over: arrays.then_some(0),
        defer_record_arrays: arrays,
        ..fresh(limits)
    }
}

/// The options a frame is decoded with, whole or `defer`red.
fn decoding(limits: Option<Limits>, defer: bool) -> DecodeOptions {
    match defer {
        true => deferring(limits),
        false => fresh(limits),
    }
}

/// The frame's text tree, its warnings and its record damage, decoded whole
/// or with its records fields left for drawing.
fn drawn(
    cat: &Catalogue,
    bytes: &[u8],
    limits: Option<Limits>,
    defer: bool,
) -> (String, Vec<String>, Vec<String>) {
    drawn_as(cat, bytes, limits, defer, TreeOptions::default())
}

/// [`drawn`], the tree drawn as `tree` says (colour, width, descriptions).
fn drawn_as(
    cat: &Catalogue,
    bytes: &[u8],
    limits: Option<Limits>,
    defer: bool,
    tree: TreeOptions,
) -> (String, Vec<String>, Vec<String>) {
    let opts = decoding(limits, defer);
    let mut frame: Frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    let mut out = Vec::new();
    match defer {
        true => write_frame_drawing(&mut out, &mut frame, tree, (cat, &opts.budget)).unwrap(),
        false => write_frame(&mut out, &frame, tree).unwrap(),
    }
    (
        String::from_utf8(out).unwrap(),
        frame.warnings.iter().map(|w| w.text.clone()).collect(),
        frame.record_damage.iter().map(|e| e.to_string()).collect(),
    )
}

/// The frame's text tree, warnings and record damage as the explorer comes
/// to hold it: records fields held as a stub per batch (`stub_items`),
/// then every stub opened (`open_stub`), each on its own.
fn stubbed_then_opened(
    cat: &Catalogue,
    bytes: &[u8],
    limits: Option<Limits>,
) -> (String, Vec<String>, Vec<String>) {
    use kwire::decode::fields::{open_element_stub, stub_elements};
    use kwire::decode::records::deferred::{open_stub, stub_items, stub_records};
    // As the explorer decodes (`kwire::tui::app::stubbing`), at 0 bytes.
    let opts = deferring(limits);
    let mut frame: Frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    stub_items(cat, &mut frame, &opts.budget);
    let frame_bytes = frame.bytes.clone();
    stub_elements(cat, &frame_bytes, &mut frame.root, &mut |_| {});
    fn open_all(cat: &Catalogue, bytes: &Bytes, n: &mut kwire::decode::Node, budget: &Budget) {
        if n.deferred_records().is_some() {
            *n = open_stub(cat, bytes, n, budget).expect("a stub opens into one node");
            return;
        }
        if n.walked_later() {
            let mut element =
                open_element_stub(cat, bytes, n, &mut |_| {}).expect("an element stub opens");
            stub_records(cat, bytes, &mut element, budget);
            *n = element;
        }
        for c in &mut n.children {
            open_all(cat, bytes, c, budget);
        }
    }
    open_all(cat, &frame_bytes, &mut frame.root, &opts.budget);
    let mut out = Vec::new();
    write_frame(&mut out, &frame, TreeOptions::default()).unwrap();
    (
        String::from_utf8(out).unwrap(),
        frame.warnings.iter().map(|w| w.text.clone()).collect(),
        frame.record_damage.iter().map(|e| e.to_string()).collect(),
    )
}

/// Whether the frame's records were left for drawing (the test tests something).
fn deferred(cat: &Catalogue, bytes: &[u8]) -> bool {
    let opts = deferring(None);
    let frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    fn any(n: &kwire::decode::Node) -> bool {
        n.deferred_records().is_some() || n.walked_later() || n.children.iter().any(any)
    }
    any(&frame.root)
}

fn alike(cat: &Catalogue, what: &str, bytes: &[u8], limits: Option<Limits>) {
    let whole = drawn(cat, bytes, limits, false);
    for (how, later) in [
        ("drawn a batch at a time", drawn(cat, bytes, limits, true)),
        (
            "stubbed, then opened",
            stubbed_then_opened(cat, bytes, limits),
        ),
    ] {
        differ(what, how, &whole, &later);
    }
    // A plain topic's records are drawn from their slots, not their nodes:
    // in colour, fitted to a width, with descriptions whole, as from nodes.
    let fitted = TreeOptions {
        color: true,
        width: Some(100),
        full_docs: false,
    };
    let narrow = TreeOptions {
        color: false,
        width: Some(60),
        full_docs: true,
    };
    for tree in [fitted, narrow] {
        let whole = drawn_as(cat, bytes, limits, false, tree);
        let later = drawn_as(cat, bytes, limits, true, tree);
        differ(
            what,
            &format!("drawn a batch at a time as {tree:?}"),
            &whole,
            &later,
        );
    }
    let whole = tree_json(cat, bytes, limits);
    for how in [Drawing::Streamed, Drawing::Held] {
        let later = tree_json_drawn(cat, bytes, limits, how);
        assert!(
            whole == later,
            "{what}: the tree JSON drawn a batch at a time ({how:?}) differs:\n{whole}\n{later}"
        );
    }
    for width in [None, Some(100)] {
        let whole = explained(cat, bytes, limits, false, width);
        let later = explained(cat, bytes, limits, true, width);
        assert!(
            whole == later,
            "{what}: the explained tree (width {width:?}) drawn a batch at a time differs:\n{}\n{}\ndamage {:?} and {:?}",
            whole.0,
            later.0,
            whole.1,
            later.1
        );
    }
    for color in [false, true] {
        let whole = grid(cat, bytes, limits, false, color);
        let later = grid(cat, bytes, limits, true, color);
        assert!(
            whole == later,
            "{what}: the grid (colour {color}) painted a batch at a time differs:\n{}\n{}\ndamage {:?} and {:?}",
            whole.0,
            later.0,
            whole.1,
            later.1
        );
    }
}

/// The frame's tree with every node explained (`--explain`) and its record
/// damage, decoded whole or with its records fields left for drawing.
fn explained(
    cat: &Catalogue,
    bytes: &[u8],
    limits: Option<Limits>,
    defer: bool,
    width: Option<usize>,
) -> (String, Vec<String>) {
    let opts = decoding(limits, defer);
    let mut frame: Frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    let tree = TreeOptions {
        width,
        ..TreeOptions::default()
    };
    let text = match defer {
        true => {
            let mut out = Vec::new();
            write_explained_drawing(&mut out, (cat, None), &mut frame, tree, &opts.budget).unwrap();
            String::from_utf8(out).unwrap()
        }
        false => render_explained(cat, None, &frame, tree),
    };
    let damage = frame.record_damage.iter().map(|e| e.to_string()).collect();
    (text, damage)
}

/// The frame's grid and record damage, decoded whole or with its records
/// fields left for painting a batch at a time.
fn grid(
    cat: &Catalogue,
    bytes: &[u8],
    limits: Option<Limits>,
    defer: bool,
    color: bool,
) -> (String, Vec<String>) {
    let opts = decoding(limits, defer);
    let mut frame: Frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    let text = match defer {
        true => {
            let mut out = Vec::new();
            write_grid_drawing(&mut out, &mut frame, color, (cat, &opts.budget)).unwrap();
            String::from_utf8(out).unwrap()
        }
        false => render_grid(&frame, color),
    };
    let damage = frame.record_damage.iter().map(|e| e.to_string()).collect();
    (text, damage)
}

/// The frame's tree JSON, decoded whole.
fn tree_json(cat: &Catalogue, bytes: &[u8], limits: Option<Limits>) -> String {
    let frame: Frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &fresh(limits));
    let mut out = Vec::new();
    write_frame_tree_json(&mut out, &frame).unwrap();
    String::from_utf8(out).unwrap()
}

/// How a tree JSON with its records fields left for drawing is written.
#[derive(Clone, Copy, Debug)]
enum Drawing {
    /// Straight to its output: its records walked for the frame's members,
    /// then again as its tree is written (a large frame's).
    Streamed,
    /// Its tree into memory first, its records walked once (a small frame's).
    Held,
}

/// The frame's tree JSON with its records fields left for drawing, written as `how` says.
fn tree_json_drawn(cat: &Catalogue, bytes: &[u8], limits: Option<Limits>, how: Drawing) -> String {
    let opts = deferring(limits);
    let mut frame: Frame = decode_frame(cat, Bytes::copy_from_slice(bytes), 0, &opts);
    let mut out = Vec::new();
    let walking = (cat, &opts.budget);
    match how {
        Drawing::Streamed => write_frame_tree_json_drawing(&mut out, &mut frame, walking),
        Drawing::Held => push_frame_tree_json_drawing(&mut out, &mut frame, walking),
    }
    .unwrap();
    String::from_utf8(out).unwrap()
}

type Drawn = (String, Vec<String>, Vec<String>);

fn differ(what: &str, how: &str, whole: &Drawn, later: &Drawn) {
    if whole != later {
        let first = whole
            .0
            .lines()
            .zip(later.0.lines())
            .position(|(a, b)| a != b)
            .map(|i| {
                format!(
                    "line {i}:\n  whole: {}\n  later: {}",
                    whole.0.lines().nth(i).unwrap_or(""),
                    later.0.lines().nth(i).unwrap_or("")
                )
            })
            .unwrap_or_else(|| "same lines".into());
        panic!(
            "{what}, {how}: {first}\nwarnings whole {:?}\nwarnings later {:?}\ndamage whole {:?}\ndamage later {:?}",
            whole.1, later.1, whole.2, later.2
        );
    }
}

/// A Fetch v4 response of two topics, `first`'s partitions and `second`'s,
/// the second's name null (a warning of the frame's own, between the
/// records fields' findings).
fn null_name_between(cat: &Catalogue, first: &[&[u8]], second: &[&[u8]]) -> Vec<u8> {
    use common::batches::fetch_v4_topics;
    let one = fetch_v4_topics(cat, &[("orders", first)]);
    let mut two = fetch_v4_topics(cat, &[("orders", first), ("", second)]);
    // Responses is the body's last field: the second topic starts where the
    // first ends, with its name's int16 length.
    assert_eq!(&two[one.len()..one.len() + 2], &[0, 0]);
    two[one.len()..one.len() + 2].copy_from_slice(&[0xff, 0xff]);
    two
}

#[test]
fn records_drawn_a_batch_at_a_time_draw_what_the_whole_tree_draws() {
    every_case_drawn_as_the_whole_tree();
}

/// The same with the arrays that hold the records left too, each element
/// walked when drawn (`defer_record_arrays`): the partitions of a Produce
/// request or a Fetch response.
#[test]
fn records_in_arrays_left_for_drawing_draw_what_the_whole_tree_draws() {
    ARRAYS.with(|a| a.set(true));
    every_case_drawn_as_the_whole_tree();
}

fn every_case_drawn_as_the_whole_tree() {
    let cat = Catalogue::builtin();
    let records = [
        rec(
            Some(b"user-1"),
            Some(b"{\"amount\":12}"),
            &[("trace", Some(b"abc"))],
            0,
        ),
        rec(None, Some(b"hello"), &[], 5),
        rec(Some(&[0xff; 200]), Some(&[7; 300]), &[], -3),
        rec(
            Some(b"\x00\x00\x00\x00\x05k"),
            Some(b"\x00\x00\x00\x01\x00{\"id\":7}"),
            &[],
            2,
        ),
    ];
    let plain = [
        batch(0, 0, &records),
        batch(4, 0, &records[..1]),
        batch(1 << 40, 0x10, &records[1..]),
    ]
    .concat();
    let Damaged {
        bad_crc,
        wrong_count,
        bad_gzip,
        unknown_codec,
    } = damaged(&records);
    let (bad_crc, wrong_count, bad_gzip, unknown_codec) = (
        &bad_crc[..],
        &wrong_count[..],
        &bad_gzip[..],
        &unknown_codec[..],
    );
    let mut cases: Vec<(String, Vec<u8>)> = vec![
        ("plain batches".into(), produce(cat, "orders", &plain)),
        (
            "a batch cut by the end of a request".into(),
            produce(
                cat,
                "orders",
                &[plain.clone(), batch(9, 0, &records)[..40].to_vec()].concat(),
            ),
        ),
        (
            "a batch cut by the end of a fetch".into(),
            fetch_v4(
                cat,
                "orders",
                &[plain.clone(), batch(9, 0, &records)[..40].to_vec()].concat(),
            ),
        ),
        (
            "bytes that are not a batch after one".into(),
            produce(
                cat,
                "orders",
                &[batch(0, 0, &records[..1]), vec![0; 30]].concat(),
            ),
        ),
        (
            "every codec".into(),
            produce(
                cat,
                "orders",
                &[
                    batch(0, 1, &records),
                    batch(4, 2, &records),
                    batch(8, 3, &records),
                    batch(12, 4, &records),
                ]
                .concat(),
            ),
        ),
        (
            "damage".into(),
            produce(
                cat,
                "orders",
                &[bad_crc, wrong_count, bad_gzip, unknown_codec].concat(),
            ),
        ),
        (
            "legacy messages".into(),
            produce(
                cat,
                "orders",
                &[
                    legacy_message(0, 0, 0, Some(b"k0"), Some(b"v0")),
                    legacy_message(1, 1, 0, None, Some(b"v1")),
                ]
                .concat(),
            ),
        ),
        (
            "an internal topic".into(),
            produce(cat, "__consumer_offsets", &plain),
        ),
        ("a fetch response".into(), fetch_v4(cat, "orders", &plain)),
        (
            "damage in two partitions of two topics".into(),
            produce_topics(
                cat,
                &[
                    ("orders", &[bad_crc, &plain, wrong_count]),
                    ("__consumer_offsets", &[&plain, bad_gzip]),
                    ("payments", &[unknown_codec]),
                ],
            ),
        ),
        (
            "damage in two partitions of a fetch".into(),
            fetch_v4_partitions(cat, "orders", &[bad_crc, &plain, wrong_count, bad_gzip]),
        ),
        (
            "a null name between damaged topics of a fetch".into(),
            null_name_between(cat, &[bad_crc, &plain], &[&plain, wrong_count]),
        ),
    ];
    for case in record_batch_cases() {
        cases.push((
            case.name.to_string(),
            produce(cat, case.topic, &case.records),
        ));
    }
    for (what, bytes) in &cases {
        FETCH.with(|f| f.set(what.ends_with("a fetch") || what == "a fetch response"));
        assert!(deferred(cat, bytes), "{what}: nothing was left for drawing");
        alike(cat, what, bytes, None);
    }
    FETCH.with(|f| f.set(false));
    // A bound on decompressed data that the batches exceed: cut alike.
    let gzip = produce(
        cat,
        "orders",
        &[batch(0, 1, &records), batch(4, 1, &records)].concat(),
    );
    let small = Limits {
        decompressed: 700,
        ..Limits::default()
    };
    alike(cat, "over the decompression budget", &gzip, Some(small));
    // Damaged copies: one byte after the size prefix changed.
    let mut rng = Rng::new(7);
    let partitions = produce_topics(cat, &[("orders", &[&plain, &plain]), ("more", &[&plain])]);
    for base in [produce(cat, "orders", &plain), gzip, partitions] {
        for _ in 0..1000 {
            let mut copy = base.clone();
            let at = 4 + rng.below(copy.len() as u64 - 4) as usize;
            copy[at] = rng.next() as u8;
            alike(
                cat,
                &format!("byte {at} set to {:#04x}", copy[at]),
                &copy,
                None,
            );
        }
    }
}

/// Peak resident set of `kwire ARGS` in KiB, and its standard output.
fn peak_kib(args: &[&str]) -> (u64, Vec<u8>) {
    let out = std::process::Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env("COLUMNS", "120")
        .env("NO_COLOR", "1")
        .output()
        .expect("/usr/bin/time (Debian package time) runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kib = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    (kib, out.stdout)
}

/// Peak resident set and standard output of `kwire COMMAND` over the file
/// of one Fetch v4 response `bin`, with `more` arguments.
fn fetch_v4_run(command: &str, bin: &std::path::Path, more: &[&str]) -> (u64, Vec<u8>) {
    let bin = bin.to_str().unwrap();
    let given = [command, "--binary", bin, "--response", "--api", "Fetch"];
    peak_kib(&[&given[..], &["--version", "4"], more].concat())
}

/// Fetch v4 `response`'s text tree (120 columns), tree JSON and grid,
/// decoded whole and drawn as the library draws them without deferring; the
/// frame decodes without an error or warning.
fn drawn_whole(cat: &Catalogue, response: &[u8]) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let opts = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(1),
        api_version: Some(4),
        ..Default::default()
    };
    let frame = decode_frame(cat, Bytes::copy_from_slice(response), 0, &opts);
    assert!(frame.error.is_none() && frame.warnings.is_empty());
    let mut tree = Vec::new();
    let fitted = TreeOptions {
        width: Some(120),
        ..TreeOptions::default()
    };
    write_frame(&mut tree, &frame, fitted).unwrap();
    let mut json = Vec::new();
    write_frame_tree_json(&mut json, &frame).unwrap();
    (tree, json, render_grid(&frame, false).into_bytes())
}

/// A Fetch v4 response of 100,000 small records in batches of 100 (5.5 MB):
/// `kwire decode` and `kwire capture` draw its tree, as text and as tree
/// JSON, as the whole tree is drawn, in a fraction of the whole tree's
/// memory (about 270 MB); `kwire check` and `kwire records` read it in
/// little memory too.
#[test]
fn a_large_frame_is_drawn_whole_in_little_memory_by_decode_and_capture() {
    assert!(
        std::path::Path::new("/usr/bin/time").exists(),
        "/usr/bin/time is missing (apt-get install time); the peak cannot be measured"
    );
    let cat = Catalogue::builtin();
    let records = common::batches::small_record_batches(1000);
    let response = fetch_v4(cat, "orders", &records);
    assert!(response.len() > 5 << 20);
    let (whole, whole_json, whole_grid) = drawn_whole(cat, &response);
    let whole_grid = String::from_utf8(whole_grid).unwrap();
    let dir = std::env::temp_dir().join(format!("kwire-deferred-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("fetch.bin");
    std::fs::write(&bin, &response).unwrap();
    let decode = |format: &str| fetch_v4_run("decode", &bin, &["--format", format]);
    let (peak, out) = decode("tree");
    assert!(out == whole, "kwire decode drew another tree");
    assert!(peak < 80 << 10, "kwire decode peaked at {peak} KiB");
    // The tree JSON too: the whole tree's bytes, written a batch at a time.
    let (peak, out) = decode("tree-json");
    assert!(out == whole_json, "kwire decode wrote another tree JSON");
    assert!(
        peak < 80 << 10,
        "kwire decode --format tree-json peaked at {peak} KiB"
    );
    // Every node explained (`--explain`), walked and drawn a batch at a time
    // too: what it draws is held to the whole tree's above, on every kind of
    // batch; here, its memory, and that its last batch is drawn.
    let (peak, out) = fetch_v4_run("decode", &bin, &["--explain"]);
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("+-- RecordBatch[999] RecordBatch v2"),
        "kwire decode --explain did not draw the last batch"
    );
    assert!(text.lines().filter(|l| l.contains(" · ")).count() > 1_000_000);
    assert!(
        peak < 80 << 10,
        "kwire decode --explain peaked at {peak} KiB"
    );
    // The grid: its regions painted a batch at a time, its rows written as they are.
    let (peak, out) = decode("grid");
    assert!(
        out == whole_grid.as_bytes(),
        "kwire decode drew another grid"
    );
    assert!(
        peak < 80 << 10,
        "kwire decode --format grid peaked at {peak} KiB"
    );
    // In a capture, after its request.
    use common::pcap_writer::{conversation, pcap, Link};
    let request = kwire::encode::example::example_frame(
        cat,
        &kwire::encode::FrameSpec {
            direction: Direction::Request,
            api_key: 1,
            version: 4,
            release: None,
        },
    )
    .unwrap();
    let mut response = response;
    response[4..8].copy_from_slice(&request[8..12]);
    let file = dir.join("fetch.pcap");
    std::fs::write(
        &file,
        pcap(
            Link::EthernetV4,
            &conversation(&[(true, request), (false, response)], 1400),
        ),
    )
    .unwrap();
    let (json_peak, json_out) =
        peak_kib(&["capture", file.to_str().unwrap(), "--format", "tree-json"]);
    let (grid_peak, grid_out) = peak_kib(&["capture", file.to_str().unwrap(), "--format", "grid"]);
    let (peak, out) = peak_kib(&["capture", file.to_str().unwrap()]);
    // `kwire check` and `kwire records` leave the field off the frame's tape
    // and read it a batch at a time too: about 23 MB each, where reading it
    // whole took 56 MB (`check`, its tape) and 363 MB (`records`, its tree).
    let (check_peak, check_out) = peak_kib(&["check", file.to_str().unwrap()]);
    let (records_peak, records_out) =
        peak_kib(&["records", file.to_str().unwrap(), "--format", "json"]);
    let _ = std::fs::remove_dir_all(&dir);
    let check_text = String::from_utf8(check_out).unwrap();
    assert!(
        check_text.contains("2 frames checked: 0 errors"),
        "{check_text}"
    );
    assert!(
        check_peak < 48 << 10,
        "kwire check peaked at {check_peak} KiB"
    );
    let rows = records_out.split(|&b| b == b'\n').filter(|l| !l.is_empty());
    assert_eq!(rows.count(), 100_000);
    assert!(
        records_peak < 48 << 10,
        "kwire records peaked at {records_peak} KiB"
    );
    let grid_text = String::from_utf8(grid_out).unwrap();
    let response_grid = grid_text
        .split_once("\n# frame 1 ")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map(|(_, grid)| grid)
        .expect("the response's grid");
    assert!(
        response_grid == whole_grid,
        "kwire capture drew another grid"
    );
    assert!(
        grid_peak < 80 << 10,
        "kwire capture --format grid peaked at {grid_peak} KiB"
    );
    // Its second line is the response's tree JSON, with the capture's member added.
    let response_json = json_out
        .split(|&b| b == b'\n')
        .nth(1)
        .expect("the response's line");
    let members = &whole_json[..whole_json.len() - 2];
    assert!(
        response_json.starts_with(members) && response_json.len() > members.len(),
        "kwire capture wrote another tree JSON"
    );
    assert!(
        json_peak < 80 << 10,
        "kwire capture --format tree-json peaked at {json_peak} KiB"
    );
    let text = String::from_utf8(out).unwrap();
    let tree = text
        .split_once("\n# frame 1 ")
        .and_then(|(_, rest)| rest.split_once('\n'))
        .map(|(_, tree)| tree)
        .expect("the response's frame");
    assert!(
        tree.as_bytes() == whole.as_slice(),
        "kwire capture drew another tree"
    );
    assert!(peak < 80 << 10, "kwire capture peaked at {peak} KiB");
}

/// A Fetch response of eight partitions whose records fields are each
/// under a megabyte (a consumer's default fetch sizes give a partition up to
/// 1 MiB) but over `DEFER_RECORDS_OVER`: each field is left and walked a
/// batch at a time too, so `kwire decode` draws the 7 MB frame's text tree,
/// tree JSON and grid as the whole tree draws them, in a fraction of the
/// whole tree's memory (about 350 MB when each field was built whole), and
/// `kwire check` reads it in little memory.
#[test]
fn a_fetch_of_many_partitions_under_a_megabyte_each_is_drawn_in_little_memory() {
    let cat = Catalogue::builtin();
    let records = common::batches::small_record_batches(160);
    let over = kwire::decode::frame::DEFER_RECORDS_OVER;
    assert!(records.len() > over && records.len() < 1 << 20);
    let response = common::batches::fetch_v4_partitions(cat, "orders", &[&records[..]; 8]);
    let (tree, json, grid) = drawn_whole(cat, &response);
    let dir = std::env::temp_dir().join(format!("kwire-partitions-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("fetch.bin");
    std::fs::write(&bin, &response).unwrap();
    for (format, whole) in [("tree", tree), ("tree-json", json), ("grid", grid)] {
        let (peak, out) = fetch_v4_run("decode", &bin, &["--format", format]);
        assert!(
            out == whole,
            "kwire decode --format {format} drew another output"
        );
        assert!(
            peak < 80 << 10,
            "kwire decode --format {format} peaked at {peak} KiB"
        );
    }
    let (peak, out) = fetch_v4_run("check", &bin, &[]);
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("1 frame checked: 0 errors"), "{text}");
    assert!(peak < 48 << 10, "kwire check peaked at {peak} KiB");
}

/// Frames whose partitions are left for drawing, as `kwire decode` leaves
/// them, say what their whole trees say: a response taken by guessing has
/// the guess's warning first and its records' warnings after it, in their
/// places; and a small frame's records hold what they decompress for the
/// frame's life, as its whole tree does, so a batch that did not fit
/// `--max-expanded` there does not fit when drawn either.
#[test]
fn frames_with_partitions_left_say_what_their_whole_trees_say() {
    use kwire::decode::frame::{decode_frames_then, DEFER_ELEMENTS_OVER, DEFER_RECORDS_OVER};
    use kwire::decode::guess::reread_as_responses;
    let cat = Catalogue::builtin();
    let recs = [rec(Some(b"k"), Some(b"v"), &[], 0)];
    let broken = damaged(&recs);
    let many = common::batches::small_record_batches(20);
    let partitions: [&[u8]; 3] = [&broken.bad_crc, &many, &broken.wrong_count];
    let bytes = Bytes::from(fetch_v4_partitions(cat, "orders", &partitions));
    assert!(bytes.len() > DEFER_ELEMENTS_OVER);
    let left = || DecodeOptions {
        defer_records_over: Some(DEFER_RECORDS_OVER),
        defer_elements_over: Some(DEFER_ELEMENTS_OVER),
        defer_record_arrays: true,
        ..Default::default()
    };
    let guessed = |opts: DecodeOptions, draw: bool| {
        let mut frames = decode_frames_then(cat, &bytes, &opts, &mut |_| {});
        let mut walk = |_: &mut Frame| {};
        let reread = (&opts, &mut walk as &mut dyn FnMut(&mut Frame));
        reread_as_responses(cat, None, &mut frames, reread, &mut |_| {});
        if draw {
            let walking = (cat, &opts.budget);
            let tree = TreeOptions::default();
            write_frame_drawing(&mut std::io::sink(), &mut frames[0], tree, walking).unwrap();
        }
        let texts: Vec<String> = frames[0].warnings.iter().map(|w| w.text.clone()).collect();
        texts
    };
    let whole = guessed(DecodeOptions::default(), false);
    assert!(
        whole.len() > 2 && whole[0].contains("not a request"),
        "{whole:?}"
    );
    assert_eq!(guessed(left(), true), whole);

    // Two partitions of a gzip batch each, whose data (60 KB) and nodes
    // together pass a budget of 100 KiB held at once: the whole tree
    // decodes the first and says the second did not fit.
    let big = vec![b'v'; 60_000];
    let gzip = batch(0, 1, &[rec(Some(b"k"), Some(&big), &[], 0)]);
    let response = fetch_v4_partitions(cat, "orders", &[&gzip, &gzip]);
    let limits = Limits {
        expanded: 100 << 10,
        ..Limits::default()
    };
    let opts = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(1),
        api_version: Some(4),
        budget: Budget::new(limits),
        ..Default::default()
    };
    let frame = decode_frame(cat, Bytes::from(response.clone()), 0, &opts);
    let mut whole = Vec::new();
    let fitted = TreeOptions {
        width: Some(120),
        ..TreeOptions::default()
    };
    write_frame(&mut whole, &frame, fitted).unwrap();
    let whole = String::from_utf8(whole).unwrap();
    assert!(whole.contains("the budget of 100 KiB"), "{whole}");
    let dir = std::env::temp_dir().join(format!("kwire-held-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("fetch.bin");
    std::fs::write(&bin, &response).unwrap();
    let (_, out) = fetch_v4_run("decode", &bin, &["--max-expanded", "100K"]);
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(String::from_utf8(out).unwrap(), whole);
}

/// `kwire check` of a file of frames leaves a records field over 64 KiB
/// for its findings to be walked a batch at a time
/// (`check_left_records`): the findings are the whole tree's, damaged
/// batches among many included, and the command holds no batch's nodes
/// (a 5.5 MB frame of 100,000 records within 80 MiB).
#[test]
fn a_file_of_frames_is_checked_a_batch_at_a_time() {
    use kwire::analysis::check::check_frames;
    use kwire::decode::frame::decode_frames_then;
    use kwire::decode::records::deferred::check_left_records;
    let cat = Catalogue::builtin();
    let recs = [rec(Some(b"k"), Some(b"v"), &[("h", Some(b"x"))], 0)];
    let broken = damaged(&recs);
    let mut records = common::batches::small_record_batches(100);
    for bad in [
        &broken.bad_crc,
        &broken.wrong_count,
        &broken.bad_gzip,
        &broken.unknown_codec,
    ] {
        records.extend_from_slice(bad);
        records.extend_from_slice(&common::batches::small_record_batches(100));
    }
    // Gzip batches that expand past what may be held at once (12 MiB): the
    // whole tree leaves the last ones unchecked, and says so.
    let big = vec![b'v'; 3 << 20];
    for b in 0..6 {
        let one = [rec(Some(b"k"), Some(&big), &[], 0)];
        records.extend_from_slice(&batch(90_000 + b, 1, &one));
    }
    let response = Bytes::from(fetch_v4(cat, "orders", &records));
    let read = |defer: Option<usize>| DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(1),
        api_version: Some(4),
        defer_records_over: defer,
        ..Default::default()
    };
    let findings = |frame: &Frame| {
        let mut out = Vec::new();
        check_frames(std::slice::from_ref(frame), &mut out);
        out
    };
    let whole = findings(&decode_frame(cat, response.clone(), 0, &read(None)));
    assert!(whole.len() >= 6, "the damaged batches are found: {whole:?}");
    assert!(
        whole.iter().any(|f| f.message.contains("--max-expanded")),
        "the budget's note: {whole:?}"
    );
    let opts = read(Some(kwire::decode::frame::DEFER_RECORDS_OVER));
    let mut left = decode_frame(cat, response.clone(), 0, &opts);
    assert!(findings(&left).len() < whole.len(), "the records were left");
    check_left_records(cat, &mut left, &opts.budget);
    assert_eq!(findings(&left), whole);

    // Records within the elements of arrays left too, as `kwire check`
    // leaves them: their findings in the whole tree's order, among the
    // frame's own (a null topic name).
    let topics = Bytes::from(null_name_between(
        cat,
        &[&broken.bad_crc, &broken.wrong_count],
        &[&broken.bad_gzip, &broken.unknown_codec],
    ));
    let whole = findings(&decode_frame(cat, topics.clone(), 0, &read(None)));
    assert!(whole.len() >= 5, "{whole:?}");
    let opts = DecodeOptions {
        defer_elements_over: Some(0),
        defer_record_arrays: true,
        ..read(Some(kwire::decode::frame::DEFER_RECORDS_OVER))
    };
    let mut left = decode_frame(cat, topics, 0, &opts);
    assert_eq!(
        findings(&left).len(),
        1,
        "only the null name before the walk"
    );
    check_left_records(cat, &mut left, &opts.budget);
    assert_eq!(findings(&left), whole);

    // Given no direction, it is taken for the response it fits best, with a
    // warning that says so first: the records' warnings still come after it.
    let guessed = |defer: Option<usize>| {
        let opts = DecodeOptions {
            defer_records_over: defer,
            ..Default::default()
        };
        let mut walk = |f: &mut Frame| check_left_records(cat, f, &opts.budget);
        let mut frames = decode_frames_then(cat, &response, &opts, &mut walk);
        let reread = (&opts, &mut walk as &mut dyn FnMut(&mut Frame));
        kwire::decode::guess::reread_as_responses(cat, None, &mut frames, reread, &mut |_| {});
        let texts: Vec<String> = frames[0].warnings.iter().map(|w| w.text.clone()).collect();
        texts
    };
    let whole = guessed(None);
    assert!(
        whole.len() > 6 && whole[0].contains("not a request"),
        "{whole:?}"
    );
    assert_eq!(
        guessed(Some(kwire::decode::frame::DEFER_RECORDS_OVER)),
        whole
    );

    // A file of this frame (18 MiB decompressed, left) and a small one
    // whose records (not left) decompress to 12 MiB, with a budget of 20
    // MiB for all decompression: the whole trees run out in the second
    // frame; so must the check, which walks the first's left records
    // before it decodes the second.
    let small: Vec<u8> = (0..4)
        .flat_map(|b| batch(b, 1, &[rec(Some(b"k"), Some(&big), &[], 0)]))
        .collect();
    let small = fetch_v4(cat, "orders", &small);
    assert!(small.len() < kwire::decode::frame::DEFER_RECORDS_OVER);
    let two = Bytes::from([&response[..], &small[..]].concat());
    let limits = Limits {
        decompressed: 20 << 20,
        expanded: 1 << 30,
    };
    let of_file = |defer: Option<usize>| {
        let opts = DecodeOptions {
            budget: Budget::new(limits),
            ..read(defer)
        };
        let mut walk = |f: &mut Frame| check_left_records(cat, f, &opts.budget);
        let frames = decode_frames_then(cat, &two, &opts, &mut walk);
        let mut out = Vec::new();
        check_frames(&frames, &mut out);
        out
    };
    let whole = of_file(None);
    assert!(
        whole
            .iter()
            .any(|f| f.frame == Some(1) && f.message.contains("--max-decompressed")),
        "the second frame runs out: {whole:?}"
    );
    assert_eq!(
        of_file(Some(kwire::decode::frame::DEFER_RECORDS_OVER)),
        whole
    );

    let big = Bytes::from(fetch_v4(
        cat,
        "orders",
        &common::batches::small_record_batches(1000),
    ));
    let dir = std::env::temp_dir().join(format!("kwire-check-left-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("fetch.bin");
    std::fs::write(&bin, &big).unwrap();
    let bin = bin.to_str().unwrap();
    let (peak, out) = peak_kib(&[
        "check",
        "--binary",
        bin,
        "--response",
        "--api",
        "Fetch",
        "--version",
        "4",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    let said = String::from_utf8_lossy(&out);
    assert!(said.contains("1 frame checked: 0 errors"), "{said}");
    assert!(peak < 80 << 10, "kwire check peaked at {peak} KiB");
}
