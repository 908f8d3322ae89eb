//! `kwire report`: the page of the shipped captures (stats rows, a latency
//! row per API, one timeline with a lane per connection, the inventory,
//! every frame embedded and every link to one), what is wrong first and
//! repeats folded, hundreds of connections in a bounded page, hostile client
//! ids escaped, the filters, and the page in headless Chromium: drawn, a
//! frame opened, 40,000 frames under two seconds (ignored without it).

mod common;

use common::exchanges::{frame, Timeline};
use common::pcap_writer::{pcap_timed, Link};
use kwire::decode::Direction;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn kwire(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .env_remove("KWIRE_DEFS")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn out_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("report-{name}-{}.html", std::process::id()))
}

/// `kwire report FILE --out OUT ARGS…`: the page; the status must be `status`.
fn report(file: &str, name: &str, args: &[&str], status: i32) -> (String, PathBuf) {
    let out = out_path(name);
    let mut all = vec!["report", file, "--out", out.to_str().unwrap()];
    all.extend_from_slice(args);
    let (code, _, err) = kwire(&all);
    assert_eq!(code, status, "{args:?}: {err}");
    (std::fs::read_to_string(&out).unwrap(), out)
}

fn sample(name: &str) -> String {
    format!("{}/samples/captures/{name}", env!("CARGO_MANIFEST_DIR"))
}

/// The values of `attr="…"` or `attr=…` occurrences after `marker`.
fn values_after(page: &str, marker: &str) -> Vec<String> {
    page.match_indices(marker)
        .map(|(i, _)| {
            page[i + marker.len()..]
                .chars()
                .take_while(|c| !matches!(c, '"' | '>' | ' '))
                .collect()
        })
        .collect()
}

fn stats_json(file: &str, args: &[&str]) -> Value {
    let mut all = vec!["stats", file, "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = kwire(&all);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

fn check_page(capture: &str) {
    let file = sample(capture);
    let (page, _) = report(&file, capture, &[], 0);
    assert_eq!(page.matches("<html").count(), 1);
    assert_eq!(page.matches("</html>").count(), 1);
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only kwire's own script"
    );
    assert!(
        !page.contains("http://")
            || page.matches("http://").count()
                == page.matches("http://www.w3.org/2000/svg").count(),
        "no network reference"
    );
    assert!(!page.contains("https://"));
    // The stats rows: every API of `kwire stats`.
    let stats = stats_json(&file, &[]);
    let mut apis = BTreeSet::new();
    for row in stats["by_api"].as_array().unwrap() {
        let name = row["api_name"].as_str().unwrap();
        assert!(
            page.contains(&format!(
                "<tr><td>{name}</td><td>v{}</td>",
                row["api_version"]
            )),
            "{capture}: no stats row of {name}"
        );
        apis.insert(name.to_string());
    }
    // One latency row per API, on one chart.
    let rows: Vec<String> = values_after(&page, "<g class=latency-row data-api=\"");
    assert_eq!(
        rows.iter().cloned().collect::<BTreeSet<_>>(),
        apis,
        "{capture}: latency rows"
    );
    assert_eq!(rows.len(), apis.len());
    assert_eq!(
        page.matches("<svg").count(),
        1,
        "{capture}: one latency chart, the timeline drawn by the script"
    );
    // One timeline: a lane per connection of the stats, a bar per exchange.
    let conns: BTreeSet<u64> = stats_json(&file, &["--by", "conn"])["by_conn"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["conn"].as_u64().unwrap())
        .collect();
    let tl = timeline(&page);
    let lanes: BTreeSet<u64> = tl["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l[0].as_u64().unwrap())
        .collect();
    assert_eq!(lanes, conns, "{capture}: timeline lanes");
    let exchanges = stats["pairs"].as_u64().unwrap()
        + stats["unanswered_requests"].as_u64().unwrap()
        + stats["unmatched_responses"].as_u64().unwrap();
    assert_eq!(tl["bars"].as_array().unwrap().len() as u64, exchanges);
    // The inventory's clients.
    let (_, inv, _) = kwire(&["inventory", &file, "--format", "json"]);
    let inv: Value = serde_json::from_str(&inv).unwrap();
    for c in inv["clients"].as_array().unwrap() {
        let id = c["client_id"].as_str().unwrap();
        assert!(
            page.contains(&format!("<tr class=client><td>&quot;{id}&quot;</td>")),
            "{capture}: no client {id}"
        );
    }
    // Every frame embedded, with its bytes and tree; every link opens one.
    let frames = frame_data(&page);
    assert_eq!(
        frames.len() as u64,
        stats["frames"].as_u64().unwrap(),
        "{capture}: every frame embedded"
    );
    for (n, f) in &frames {
        let [heading, _caption, _error, hex, lines] = &f.as_array().unwrap()[..] else {
            panic!("{capture}: frame {n}: {f}")
        };
        let bytes = hex.as_str().unwrap().len() / 2;
        assert!(
            heading
                .as_str()
                .unwrap()
                .starts_with(&format!("Frame {n}: ")),
            "{heading}"
        );
        assert!(
            heading
                .as_str()
                .unwrap()
                .contains(&format!(", {bytes} bytes")),
            "{heading}"
        );
        let lines = lines.as_array().unwrap();
        // The root covers the frame; every line lies within it.
        assert_eq!(lines[0][2], 0);
        assert_eq!(
            lines[0][3].as_u64().unwrap() as usize,
            bytes,
            "{capture}: frame {n}"
        );
        for l in lines {
            if l[5] == 0 {
                assert!(l[2].as_u64().unwrap() + l[3].as_u64().unwrap() <= bytes as u64);
            }
        }
    }
    for link in values_after(&page, "href=\"#frame-") {
        assert!(
            frames.contains_key(&link.parse::<usize>().unwrap()),
            "{capture}: a link to frame {link}, not embedded"
        );
    }
}

/// The text of the hidden `<pre … id=ID>` or `<pre … class=fd …>`, unescaped.
fn unescape(s: &str) -> String {
    let mut s = s.to_string();
    while let Some(at) = s.find("&#x") {
        let end = at + s[at..].find(';').unwrap();
        let c = char::from_u32(u32::from_str_radix(&s[at + 3..end], 16).unwrap()).unwrap();
        s.replace_range(at..=end, &c.to_string());
    }
    s.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The timeline's data.
fn timeline(page: &str) -> Value {
    let start = page.find("<pre hidden id=tl-data>").expect("timeline data") + 23;
    let end = start + page[start..].find("</pre>").unwrap();
    serde_json::from_str(&unescape(&page[start..end])).unwrap()
}

/// Every embedded frame's entry, by frame number: the chunks inflated.
fn frame_data(page: &str) -> std::collections::BTreeMap<usize, Value> {
    use std::io::Read;
    let mut out = std::collections::BTreeMap::new();
    for (i, _) in page.match_indices("<pre hidden class=fd data-frames=\"") {
        let rest = &page[i..];
        let open = rest.find('>').unwrap() + 1;
        let close = rest.find("</pre>").unwrap();
        let listed: BTreeSet<usize> = rest[34..rest.find("\">").unwrap()]
            .split(',')
            .map(|n| n.parse().unwrap())
            .collect();
        let packed = kwire::input::base64_decode(&rest[open..close]).expect("base64");
        let mut json = String::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_string(&mut json)
            .expect("gzip");
        let chunk: serde_json::Map<String, Value> = serde_json::from_str(&json).unwrap();
        let inside: BTreeSet<usize> = chunk.keys().map(|k| k.parse().unwrap()).collect();
        assert_eq!(inside, listed, "a chunk holds the frames it lists");
        for (k, v) in chunk {
            assert!(
                out.insert(k.parse().unwrap(), v).is_none(),
                "frame {k} twice"
            );
        }
    }
    out
}

#[test]
fn the_confluent_kafka_capture_makes_a_page() {
    check_page("confluent-kafka.pcap");
}

#[test]
fn the_kafka_python_capture_makes_a_page() {
    check_page("kafka-python.pcap");
}

#[test]
fn filters_select_as_stats_does() {
    let file = sample("confluent-kafka.pcap");
    let (page, _) = report(&file, "filtered", &["--api", "Metadata"], 0);
    assert!(page.contains("<tr><td>Metadata</td>"));
    assert!(!page.contains("<tr><td>Produce</td>"));
    assert_eq!(page.matches("<g class=latency-row").count(), 1);
    let (code, _, err) = kwire(&[
        "report",
        &file,
        "--out",
        out_path("none").to_str().unwrap(),
        "--api",
        "Metadata",
        "--error",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("no exchange matches"), "{err}");
    let (code, _, err) = kwire(&[
        "report",
        &file,
        "--out",
        out_path("bad").to_str().unwrap(),
        "--api",
        "NoSuchApi",
    ]);
    assert_eq!(code, 1, "{err}");
}

/// Client ids and software names made to break out of HTML and terminals.
fn hostile_capture(name: &str) -> common::exchanges::TempCapture {
    let evil = "<script>alert(1)</script>\u{1b}[31m\u{202e}\"&'";
    let mut t = Timeline::default();
    t.send(
        50000,
        true,
        &frame(
            Direction::Request,
            "Metadata",
            9,
            1,
            evil,
            json!({"Topics": []}),
        ),
    );
    t.send(
        50000,
        false,
        &frame(Direction::Response, "Metadata", 9, 1, "", json!({})),
    );
    t.send(
        50000,
        true,
        &frame(
            Direction::Request,
            "ApiVersions",
            3,
            2,
            evil,
            json!({"ClientSoftwareName": "<img src=x>", "ClientSoftwareVersion": "1\u{0}"}),
        ),
    );
    t.send(
        50000,
        false,
        &frame(
            Direction::Response,
            "ApiVersions",
            3,
            2,
            "",
            json!({"ErrorCode": 35, "ApiKeys": []}),
        ),
    );
    common::exchanges::TempCapture::new(name, &pcap_timed(Link::EthernetV4, &t.packets))
}

#[test]
fn hostile_client_ids_are_escaped() {
    let cap = hostile_capture("report-hostile");
    let (page, _) = report(cap.path(), "hostile", &[], 0);
    assert_eq!(
        page.matches("<script").count(),
        1,
        "only kwire's own script"
    );
    assert!(!page.contains("<img"));
    assert!(!page.contains('\u{1b}') && !page.contains('\u{202e}') && !page.contains('\u{0}'));
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the id is shown, escaped"
    );
    assert!(page.contains("&lt;img src=x&gt;"));
    assert!(page.contains("<tr class=client><td>"));
    // The error response is listed, linked to its frames.
    assert!(page.contains("UNSUPPORTED_VERSION"));
    assert!(page.contains("<td class=err>UNSUPPORTED_VERSION</td>"));
}

#[test]
fn what_is_wrong_comes_first_and_repeats_are_one_row() {
    let (page, _) = report(
        &sample("diagnosis/old-librdkafka.pcap"),
        "old-librdkafka",
        &[],
        2, // its ListOffsets responses are cut: said, and the status says so
    );
    let wrong = page.find("<h2 id=wrong>What is wrong</h2>").unwrap();
    let first = page.find("error-not-in-version</a>: JoinGroup v0").unwrap();
    assert!(wrong < first && first < page.find("<section id=timeline>").unwrap());
    assert!(
        page.contains("<p class=headline>6.1 s of traffic from 2026-12-02T18:08:48."),
        "the span and start"
    );
    assert!(page.contains("5 connections, 78 exchanges, 2 clients (&quot;kwire-admin&quot; (kafka-python), &quot;old-librdkafka&quot;); 1 broker (127.0.0.1:19192)."));
    // 60 ListOffsets v0 asked every 101 ms are one row, with their period and span.
    assert!(
        page.contains("<td>ListOffsets v0</td><td>&quot;old-librdkafka&quot;</td><td>127.0.0.1:19192</td><td>-</td><td class=num>0.49 ms (median; max 0.66 ms)</td><td class=num>60</td><td>every 101.0 ms</td><td class=num>+6.101 s</td>"),
        "{}",
        &page[page.find("<section id=exchanges>").unwrap()..][..3000]
    );
    assert!(page.contains("78 exchanges in 12 rows"));
    // The stats tables' last column is each row's error codes, as `kwire stats` has them.
    let stats = &page[page.find("<section id=stats>").unwrap()..];
    let join = &stats[stats.find("<tr><td>JoinGroup</td><td>v0</td>").unwrap()..];
    let join = &join[..join.find("</tr>").unwrap()];
    assert!(join.ends_with("<td>MEMBER_ID_REQUIRED=1</td>"), "{join}");
    assert_eq!(join.matches("<td").count(), 14, "{join}");
    // A group's frames past the links go on from where the links stop.
    assert!(
        page.contains("<a href=\"#frame-77\">77</a> … (79, 81, 83, 85, 87, 91, … 30 more)</div>"),
        "the frames of the ListOffsets group"
    );
    // Its error response is in the errors table, with its time.
    let errors = &page[page.find("<section id=errors>").unwrap()..];
    let errors = &errors[..errors.find("</section>").unwrap()];
    assert_eq!(errors.matches("<tr><td class=num>+").count(), 1, "{errors}");
    assert!(errors.contains("<td class=num>+0.034 s</td><td>JoinGroup v0</td>"));
    assert!(errors.contains("<td class=err>MEMBER_ID_REQUIRED</td>"));
}

/// 200 connections of 100 Metadata exchanges each, ~1 KB a request: 40,000
/// frames, more than the page embeds.
/// `name` tells apart the tests that run at once.
fn many_connections(name: &str) -> common::exchanges::TempCapture {
    let topics: Vec<Value> = (0..40)
        .map(|i| json!({"Name": format!("orders-eu-west-{i:04}-x")}))
        .collect();
    let mut t = Timeline::default();
    for round in 0..100 {
        for conn in 0..200u16 {
            t.on(40000 + conn, &format!("client-{}", conn % 7)).pair(
                round,
                "Metadata",
                9,
                json!({"Topics": topics}),
                json!({"Brokers": [], "Topics": []}),
            );
        }
    }
    common::exchanges::TempCapture::new(name, &t.pcap())
}

#[test]
fn hundreds_of_connections_make_one_timeline_and_a_bounded_page() {
    let cap = many_connections("report-many");
    let (page, path) = report(cap.path(), "many", &[], 0);
    let size = std::fs::metadata(&path).unwrap().len();
    assert!(size < 8 << 20, "{size} bytes");
    let tl = timeline(&page);
    assert_eq!(tl["lanes"].as_array().unwrap().len(), 200);
    assert_eq!(tl["bars"].as_array().unwrap().len(), 20_000);
    assert_eq!(page.matches("id=tl-data").count(), 1, "one timeline");
    let frames = frame_data(&page);
    assert!(
        frames.len() > 1000 && frames.len() < 40_000,
        "{}",
        frames.len()
    );
    assert!(
        page.contains(&format!(
            "{} of the 40000 frames of the exchanges are embedded; {} more are not (the page keeps its frame data under 4 MiB)",
            frames.len(),
            40_000 - frames.len()
        )),
        "the page says what it left out"
    );
    // The first frames in capture order are the ones embedded.
    assert_eq!(
        frames.keys().copied().collect::<Vec<_>>(),
        (0..frames.len()).collect::<Vec<_>>()
    );
    // The same request from the same client to the same broker is one row.
    assert!(page.contains("20000 exchanges in 7 rows"));
    let _ = std::fs::remove_file(path);
}

fn browser() -> &'static str {
    if std::path::Path::new("/usr/bin/chromium").exists() {
        "chromium"
    } else {
        "chromium-browser"
    }
}

static BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The page's DOM after its script ran (and, with a budget, its timers and promises).
fn dom(url: &str, virtual_ms: Option<u32>) -> String {
    // One browser at a time: the tests of this file run in parallel, and two
    // browsers sharing CI's two cores would time each other, not the page.
    let _one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    // A page that never finishes its script must fail the test, not hang it.
    let mut cmd = std::process::Command::new("timeout");
    cmd.args([
        "120",
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--no-first-run",
        "--dump-dom",
    ]);
    if let Some(ms) = virtual_ms {
        cmd.arg(format!("--virtual-time-budget={ms}"));
    }
    let out = cmd.arg(url).output().expect("run chromium");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A number attribute of the drawn page (`data-ready-ms="…"`).
fn attr(dom: &str, name: &str) -> u64 {
    let at = dom
        .find(&format!("{name}=\""))
        .unwrap_or_else(|| panic!("no {name}"))
        + name.len()
        + 2;
    dom[at..].split('"').next().unwrap().parse().unwrap()
}

#[test]
#[ignore = "needs chromium; bash .ci/run installs it and runs ignored tests"]
fn the_script_draws_the_timeline_and_opens_frames_in_headless_chromium() {
    common::require_tools("the report's browser test", &[common::CHROMIUM]);
    let file = sample("confluent-kafka.pcap");
    let (page, out) = report(&file, "drawn", &[], 0);
    let url = format!("file://{}", out.display());
    let drawn = dom(&url, None);
    // Every exchange drawn, in one chart, and a tooltip for each mark.
    assert_eq!(
        drawn.matches("<svg").count(),
        2,
        "the latency chart and the timeline"
    );
    let stats = stats_json(&file, &[]);
    assert_eq!(
        attr(&drawn, "data-bars"),
        stats["pairs"].as_u64().unwrap()
            + stats["unanswered_requests"].as_u64().unwrap()
            + stats["unmatched_responses"].as_u64().unwrap()
    );
    assert!(attr(&drawn, "data-marks") > 0);
    assert!(drawn.contains("class=\"tick\">+0"), "labelled ticks");
    // A frame opened by its link: the grid and tree drawn from the embedded data.
    let n = *frame_data(&page).keys().nth(3).unwrap();
    let opened = dom(&format!("{url}#frame-{n}"), Some(5000));
    assert!(
        opened.contains(&format!("<section id=\"frame-{n}\"><h3>Frame {n}: ")),
        "frame {n} not drawn"
    );
    assert!(opened.contains(&format!("<figure id=\"v{n}\">")));
    assert!(opened.contains(&format!("<div id=\"v{n}n0\" class=\"n\" data-offset=\"0\"")));
    assert!(
        opened.contains("data-offset=\"0\" data-n=\""),
        "grid cells linked to tree lines"
    );
    // Zoomed in far past a microsecond, the chart stops at its smallest span
    // and still draws labelled ticks (a page script clicks as a user would).
    let zoomed = out.with_extension("zoomed.html");
    std::fs::write(
        &zoomed,
        std::fs::read_to_string(&out).unwrap().replace(
            "</body>",
            "<script>for(let i=0;i<80;i++)document.querySelector('[data-zoom=in]').click();\
             document.body.dataset.ticks=document.querySelectorAll('#tl .tick').length;</script></body>",
        ),
    )
    .unwrap();
    let drawn = dom(&format!("file://{}", zoomed.display()), None);
    let ticks = attr(&drawn, "data-ticks");
    assert!((2..=40).contains(&ticks), "{ticks} ticks");
    // Each tick says its time from the capture's start in the unit of the
    // view's end (seconds here, the view being past 1 s), with as many
    // decimals as the step needs: distinct, evenly spaced by the step.
    let labels: Vec<&str> = drawn
        .split("class=\"tick\">")
        .skip(1)
        .filter_map(|t| t.split("</text>").next())
        .collect();
    let at_us: Vec<f64> = labels
        .iter()
        .map(|l| {
            let (n, unit) = l.trim_start_matches('+').split_once(' ').unwrap();
            let scale = match unit {
                "s" => 1e6,
                "ms" => 1e3,
                "µs" => 1.0,
                u => panic!("tick {l:?}: unit {u}"),
            };
            n.parse::<f64>().unwrap() * scale
        })
        .collect();
    let steps: Vec<f64> = at_us.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(
        steps
            .iter()
            .all(|s| (s - steps[0]).abs() < 0.01 && *s > 0.0 && *s <= 5.0),
        "ticks {labels:?} are not evenly spaced by a step of a few µs"
    );
    let _ = std::fs::remove_file(zoomed);
    // The mouse over a mark (found by lane and x, not by element) names its
    // exchange, and a click opens its frame.
    let pointed = out.with_extension("pointed.html");
    std::fs::write(
        &pointed,
        std::fs::read_to_string(&out).unwrap().replace(
            "</body>",
            "<script>const svg=document.querySelector('#tl svg'),r=svg.getBoundingClientRect(),\
             m=/^M([0-9.]+) ([0-9.]+)/.exec(svg.querySelector('path.bar').getAttribute('d')),\
             at={clientX:r.left+(+m[1])+0.5,clientY:r.top+(+m[2])+2,bubbles:true};\
             svg.dispatchEvent(new MouseEvent('mousemove',at));\
             document.body.dataset.tip=document.getElementById('tl-tip').textContent;\
             svg.dispatchEvent(new MouseEvent('click',{...at,detail:1}));\
             document.body.dataset.hash=location.hash;</script></body>",
        ),
    )
    .unwrap();
    let drawn = dom(&format!("file://{}", pointed.display()), None);
    let tip = values_after(&drawn, "data-tip=\"");
    let hash = values_after(&drawn, "data-hash=\"#frame-");
    let _ = std::fs::remove_file(pointed);
    assert!(
        tip.first().is_some_and(|t| t.starts_with("ApiVersions")),
        "{tip:?}"
    );
    assert_eq!(hash, ["0"], "the first mark opens the first frame");
    // Capture text drawn by the script is escaped too.
    let cap = hostile_capture("report-hostile-drawn");
    let (hostile, out) = report(cap.path(), "hostile-drawn", &[], 0);
    let first = *frame_data(&hostile).keys().next().unwrap();
    let url = format!("file://{}", out.display());
    let opened = dom(&format!("{url}#frame-{first}"), Some(5000));
    assert!(opened.contains(&format!("<figure id=\"v{first}\">")));
    assert!(
        opened.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "the id drawn, escaped"
    );
    assert!(!opened.contains("<img"));
    assert_eq!(opened.matches("<script").count(), 1);
    // A frame the page does not hold says how to see it.
    let missing = dom(&format!("{url}#frame-999999"), Some(2000));
    assert!(missing.contains("Frame 999999 is not embedded in this report"));
}

#[test]
#[ignore = "needs chromium; bash .ci/run installs it and runs ignored tests"]
fn a_page_of_40000_frames_is_drawn_in_under_two_seconds() {
    common::require_tools("the report's browser test", &[common::CHROMIUM]);
    let cap = many_connections("report-many-drawn");
    let (_, out) = report(cap.path(), "many-drawn", &[], 0);
    // The best of three: the first run warms the browser's caches.
    let ready = (0..3)
        .map(|_| {
            attr(
                &dom(&format!("file://{}", out.display()), None),
                "data-ready-ms",
            )
        })
        .min()
        .unwrap();
    kwire::stderr_line!("drawn in {ready} ms");
    assert!(ready < 2000, "the page took {ready} ms to draw");
    let _ = std::fs::remove_file(out);
}

#[test]
#[ignore = "needs chromium; bash .ci/run installs it and runs ignored tests"]
fn the_page_renders_in_headless_chromium() {
    common::require_tools("the report's screenshot test", &[common::CHROMIUM]);
    let (_, out) = report(&sample("confluent-kafka.pcap"), "chromium", &[], 0);
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("report-{}.png", std::process::id()));
    let _ = std::fs::remove_file(&shot);
    let one = BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let status = std::process::Command::new(browser())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
        ])
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1400,2000")
        .arg(format!("file://{}", out.display()))
        .output()
        .expect("run chromium");
    drop(one);
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let len = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        len > 10_000,
        "screenshot {} has {len} bytes",
        shot.display()
    );
}
