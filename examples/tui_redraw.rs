//! Time the explorer's redraws on ~100 MB inputs, on ratatui's TestBackend:
//! `cargo run --release --example tui_redraw -- [fetch|pcap|all] [MB] [WxH,...]`.
//!
//! (a) one Fetch v12 response of about MB megabytes (batches of 100 × 1 KB
//! records), opened as `kwire decode --tui --response --api fetch --version 12`
//! does; (b) a mixed pcap of about MB megabytes (`make_bench_inputs`' capture),
//! opened as `kwire capture --tui` does. For each terminal size: the first
//! draw, then key after key, the time to handle the key and the time of the
//! `terminal.draw` after it, as median and max (wall time: on a busy machine
//! a max can include time spent waiting for a core).
#[path = "../benches/inputs.rs"]
mod inputs;

use bytes::Bytes;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use kwire::capture::for_each_frame;
use kwire::decode::{decode_frame, decode_frames, DecodeOptions, Direction, Frame, Node};
use kwire::schema::Catalogue;
use kwire::tui::app::Focus;
use kwire::tui::{ui, App, Theme};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use std::time::{Duration, Instant};

/// The redraw goal.
const GOAL: Duration = Duration::from_millis(16);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let which = args.get(1).map_or("all", String::as_str);
    let mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    let sizes: Vec<(u16, u16)> = args
        .get(3)
        .map_or("200x60,80x24", String::as_str)
        .split(',')
        .filter_map(|s| {
            s.split_once('x')
                .and_then(|(w, h)| Some((w.parse().ok()?, h.parse().ok()?)))
        })
        .collect();
    let t = Instant::now();
    let cat = Catalogue::builtin();
    println!("catalogue: {}", ms(t.elapsed()));
    let mut worst = Duration::ZERO;
    if which == "fetch" || which == "all" {
        worst = worst.max(fetch(cat, mb, &sizes));
    }
    if which == "pcap" || which == "all" {
        worst = worst.max(pcap(cat, mb, &sizes));
    }
    println!(
        "\nslowest redraw: {} ({} the {} ms goal)",
        ms(worst),
        if worst < GOAL { "under" } else { "OVER" },
        GOAL.as_millis()
    );
}

/// (a): one huge Fetch response, as `kwire decode --tui --response --api fetch --version 12 --binary`.
fn fetch(cat: &Catalogue, mb: usize, sizes: &[(u16, u16)]) -> Duration {
    let t = Instant::now();
    let bytes = Bytes::from(inputs::fetch_mb(mb));
    println!(
        "\n== (a) one Fetch v12 response, {} bytes (made in {}) ==",
        bytes.len(),
        ms(t.elapsed())
    );
    // What `decode_options` gives for `--response --api fetch --version 12`.
    let opts = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(1),
        api_version: Some(12),
        budget: Default::default(),
        ..Default::default()
    };
    let t = Instant::now();
    let frames = decode_frames(cat, &bytes, &opts);
    let decode = t.elapsed();
    drop(bytes);
    open_and_draw(cat, frames, decode, sizes)
}

/// (b): a mixed capture, as `kwire capture FILE --tui`.
fn pcap(cat: &Catalogue, mb: usize, sizes: &[(u16, u16)]) -> Duration {
    let t = Instant::now();
    let path = std::env::temp_dir().join(format!("kwire-tui-redraw-mixed-{mb}.pcap"));
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("temporary pcap"));
        inputs::write_mixed_pcap(
            &mut f,
            mb,
            &inputs::produce_1000(),
            &inputs::fetch_1mb(),
            &inputs::heartbeats_100k(),
        )
        .expect("write pcap");
    }
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "\n== (b) mixed pcap, {size} bytes (made in {}) ==",
        ms(t.elapsed())
    );
    let t = Instant::now();
    let input =
        std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&path).expect("open pcap"));
    let mut frames = Vec::new();
    for_each_frame(cat, input, None, |f| {
        // `decode_captured` of `capture --tui`: requests by their header, responses by their pair.
        let mut opts = DecodeOptions {
            direction: Some(f.direction),
            ..Default::default()
        };
        if let (Direction::Response, Some(k), Some(v)) = (f.direction, f.api_key, f.api_version) {
            opts.api_key = Some(k);
            opts.api_version = Some(v);
        }
        frames.push(decode_frame(cat, f.bytes.clone(), 0, &opts));
        true
    })
    .expect("read pcap");
    let decode = t.elapsed();
    let _ = std::fs::remove_file(&path);
    open_and_draw(cat, frames, decode, sizes)
}

fn open_and_draw(
    cat: &Catalogue,
    frames: Vec<Frame>,
    decode: Duration,
    sizes: &[(u16, u16)],
) -> Duration {
    let (count, nodes) = (
        frames.len(),
        frames.iter().map(|f| count_nodes(&f.root)).sum::<usize>(),
    );
    let t = Instant::now();
    let mut app = App::new(cat, None, frames, Theme::COLOR);
    let open = t.elapsed();
    println!(
        "load: decode {} ({count} frames, {nodes} nodes), App::new {}",
        ms(decode),
        ms(open)
    );
    let mut worst = Duration::ZERO;
    for &(w, h) in sizes {
        println!("\n-- {w}×{h} --");
        println!(
            "{:<34} {:>4} {:>10} {:>10} {:>10} {:>10}",
            "scenario", "n", "key med", "key max", "draw med", "draw max"
        );
        let mut term = Terminal::new(TestBackend::new(w, h)).expect("test backend");
        // Back to the start: first frame, first byte, grid focused, no search.
        app.select_frame(0);
        app.search = None;
        app.focus = Focus::Grid;
        app.move_cursor(0);
        let t = Instant::now();
        term.draw(|f| ui::draw(f, &mut app)).expect("draw");
        let first = t.elapsed();
        println!(
            "{:<34} {:>4} {:>10} {:>10} {:>10} {:>10}",
            "first draw",
            1,
            "-",
            "-",
            ms(first),
            ms(first)
        );
        worst = worst.max(first);
        for s in scenarios(&app) {
            worst = worst.max(run(&mut app, &mut term, &s));
        }
    }
    worst
}

struct Scenario {
    name: String,
    /// Before the timed keys, untimed, without a draw.
    setup: Vec<Step>,
    /// Each repetition: for each group, its keys (timed together), then a timed draw.
    keys: Vec<Vec<Step>>,
    reps: usize,
}

#[derive(Clone)]
enum Step {
    Key(KeyCode),
    Focus(Focus),
    Select(Vec<usize>),
}

fn scenario(name: &str, setup: Vec<Step>, keys: Vec<Vec<Step>>, reps: usize) -> Scenario {
    Scenario {
        name: name.to_string(),
        setup,
        keys,
        reps,
    }
}

/// Each key drawn after.
fn keys(codes: &[KeyCode]) -> Vec<Vec<Step>> {
    codes.iter().map(|c| vec![Step::Key(*c)]).collect()
}

/// `/`, the query and Enter, drawn once after Enter.
fn typed(text: &str) -> Vec<Vec<Step>> {
    let mut v: Vec<Step> = std::iter::once(Step::Key(KeyCode::Char('/')))
        .chain(text.chars().map(|c| Step::Key(KeyCode::Char(c))))
        .collect();
    v.push(Step::Key(KeyCode::Enter));
    vec![v]
}

fn scenarios(app: &App) -> Vec<Scenario> {
    use KeyCode::*;
    let tree = || vec![Step::Focus(Focus::Tree)];
    let grid = || vec![Step::Focus(Focus::Grid)];
    // The node with the most children in the current frame: the biggest expand/collapse.
    let big = app
        .frame()
        .map(|fv| widest(&fv.frame.root))
        .unwrap_or_default();
    let mut v = vec![
        scenario("idle redraw (no key)", vec![], vec![vec![]], 20),
        scenario("tree ↓ (j)", tree(), keys(&[Down]), 50),
        scenario("tree ↑ (k)", vec![], keys(&[Up]), 50),
        scenario("tree PgDn", tree(), keys(&[PageDown]), 30),
        scenario("tree End/G (last line)", tree(), keys(&[Char('G')]), 1),
        scenario(
            "tree g / G alternately",
            tree(),
            keys(&[Char('g'), Char('G')]),
            10,
        ),
        scenario(
            &format!("tree Enter on widest node ({})", big.1),
            vec![Step::Focus(Focus::Tree), Step::Select(big.0.clone())],
            keys(&[Enter]),
            10,
        ),
        scenario("grid → (l)", grid(), keys(&[Right]), 50),
        scenario("grid ↓ (j)", grid(), keys(&[Down]), 50),
        scenario("grid PgDn", grid(), keys(&[PageDown]), 30),
        scenario("grid G (last byte)", grid(), keys(&[Char('G')]), 1),
        scenario(
            "grid g / G alternately",
            grid(),
            keys(&[Char('g'), Char('G')]),
            10,
        ),
        scenario("Tab (switch focus)", vec![], keys(&[Tab]), 12),
    ];
    if app.frames.len() > 1 {
        let frames = || vec![Step::Focus(Focus::Frames)];
        v.push(scenario("frames ↓ (j)", frames(), keys(&[Down]), 50));
        v.push(scenario(
            "frames G (last frame)",
            frames(),
            keys(&[Char('G')]),
            1,
        ));
        v.push(scenario(
            "frames g / G alternately",
            frames(),
            keys(&[Char('g'), Char('G')]),
            10,
        ));
        // The largest frame (a Fetch response), for the searches below.
        let largest = app
            .frames
            .iter()
            .enumerate()
            .max_by_key(|(_, f)| f.view.as_ref().map_or(0, |v| v.frame.bytes.len()))
            .map_or(0, |(i, _)| i);
        let mut to_largest = frames();
        to_largest.push(Step::Key(Char('g')));
        to_largest.extend(std::iter::repeat_n(Step::Key(Down), largest));
        to_largest.push(Step::Focus(Focus::Grid));
        v.push(scenario(
            &format!("[ / ] to frame {} and back", largest + 1),
            to_largest,
            keys(&[Char('['), Char(']')]),
            10,
        ));
    }
    v.extend([
        scenario(
            "search /HighWatermark⏎ (few hits)",
            grid(),
            typed("HighWatermark"),
            3,
        ),
        scenario("  then n (next match)", vec![], keys(&[Char('n')]), 20),
        scenario("search /offset⏎ (many hits)", grid(), typed("offset"), 3),
        scenario("  then n (next match)", vec![], keys(&[Char('n')]), 20),
        scenario("  then tree ↓ with hits marked", tree(), keys(&[Down]), 30),
        scenario(
            "search /00 00 03 e8⏎ (hex bytes)",
            grid(),
            typed("00 00 03 e8"),
            3,
        ),
        scenario("  then n (next match)", vec![], keys(&[Char('n')]), 20),
        scenario("Esc (clear search)", vec![], keys(&[Esc]), 1),
    ]);
    v
}

fn run(app: &mut App, term: &mut Terminal<TestBackend>, s: &Scenario) -> Duration {
    for step in &s.setup {
        apply(app, step);
    }
    let (mut key, mut draw) = (Vec::new(), Vec::new());
    for _ in 0..s.reps {
        for group in &s.keys {
            let t = Instant::now();
            for step in group {
                apply(app, step);
            }
            key.push(t.elapsed());
            let t = Instant::now();
            term.draw(|f| ui::draw(f, app)).expect("draw");
            draw.push(t.elapsed());
        }
    }
    let (km, kx) = stats(&mut key);
    let (dm, dx) = stats(&mut draw);
    let flag = if dx >= GOAL { "  ≥16 ms" } else { "" };
    println!(
        "{:<34} {:>4} {:>10} {:>10} {:>10} {:>10}{flag}",
        s.name,
        draw.len(),
        ms(km),
        ms(kx),
        ms(dm),
        ms(dx)
    );
    dx
}

fn apply(app: &mut App, step: &Step) {
    match step {
        Step::Key(code) => app.on_key(KeyEvent::new(*code, KeyModifiers::NONE)),
        Step::Focus(f) => app.focus = *f,
        Step::Select(path) => app.select_path(path),
    }
}

fn stats(v: &mut [Duration]) -> (Duration, Duration) {
    v.sort();
    match v {
        [] => (Duration::ZERO, Duration::ZERO),
        _ => (v[v.len() / 2], v[v.len() - 1]),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn count_nodes(root: &Node) -> usize {
    let mut n = 0;
    root.walk(&mut |_, _| n += 1);
    n
}

/// The path of the node with the most children, and how many it has.
fn widest(root: &Node) -> (Vec<usize>, usize) {
    fn go(n: &Node, path: &mut Vec<usize>, best: &mut (Vec<usize>, usize)) {
        if n.children.len() > best.1 {
            *best = (path.clone(), n.children.len());
        }
        for (i, c) in n.children.iter().enumerate() {
            path.push(i);
            go(c, path, best);
            path.pop();
        }
    }
    let mut best = (Vec::new(), 0);
    go(root, &mut Vec::new(), &mut best);
    best
}
