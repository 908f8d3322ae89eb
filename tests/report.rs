//! `kwire report`: the page of the shipped captures (stats rows, a histogram
//! per API, a timeline per connection, the inventory, every frame anchored
//! and linked), hostile client ids escaped, the filters, and the page in
//! headless Chromium (ignored without it).

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
    // One histogram per API.
    let hist: Vec<String> = values_after(&page, "<figure class=histogram data-api=\"");
    assert_eq!(
        hist.iter().cloned().collect::<BTreeSet<_>>(),
        apis,
        "{capture}: histograms"
    );
    assert_eq!(hist.len(), apis.len());
    assert_eq!(
        page.matches("<svg").count(),
        hist.len() + page.matches("<svg class=timeline").count()
    );
    // A timeline per connection of the stats.
    let conns: BTreeSet<String> = stats_json(&file, &["--by", "conn"])["by_conn"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["conn"].to_string())
        .collect();
    let timelines: BTreeSet<String> = values_after(&page, "<svg class=timeline data-conn=")
        .into_iter()
        .collect();
    assert_eq!(timelines, conns, "{capture}: timelines");
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
    // Every frame: an anchor, a link to it, and (few frames) its grid and tree.
    let anchors = values_after(&page, "<section class=frame id=");
    assert_eq!(
        anchors.len() as u64,
        stats["frames"].as_u64().unwrap(),
        "{capture}: a section per frame"
    );
    for a in &anchors {
        assert!(
            page.contains(&format!("href=\"#{a}\"")),
            "{capture}: nothing links to {a}"
        );
        let n = a.strip_prefix("frame-").unwrap();
        assert!(
            page.contains(&format!("<figure id=v{n}>")),
            "{capture}: no view of {a}"
        );
        assert!(
            page.contains(&format!("<div id=v{n}n0 class=n")),
            "{capture}: no tree of {a}"
        );
    }
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
    assert_eq!(page.matches("<figure class=histogram").count(), 1);
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

#[test]
fn hostile_client_ids_are_escaped() {
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
    let path =
        std::env::temp_dir().join(format!("kwire-report-hostile-{}.pcap", std::process::id()));
    std::fs::write(&path, pcap_timed(Link::EthernetV4, &t.packets)).unwrap();
    let (page, _) = report(path.to_str().unwrap(), "hostile", &[], 0);
    let _ = std::fs::remove_file(&path);
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
#[ignore = "needs chromium; bash .ci/run installs it and runs ignored tests"]
fn the_page_renders_in_headless_chromium() {
    common::require_tools("the report's screenshot test", &[common::CHROMIUM]);
    let (_, out) = report(&sample("confluent-kafka.pcap"), "chromium", &[], 0);
    let shot = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("report-{}.png", std::process::id()));
    let _ = std::fs::remove_file(&shot);
    let browser = if std::path::Path::new("/usr/bin/chromium").exists() {
        "chromium"
    } else {
        "chromium-browser"
    };
    let status = std::process::Command::new(browser)
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
