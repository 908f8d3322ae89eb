//! `kwire report`'s page: one self-contained HTML file (inline CSS, JS and
//! SVG) that reads as an incident report. Top to bottom: a headline (the
//! capture, its span, clients and brokers, and a sentence per finding
//! group), the findings, one timeline of every connection, latency per API
//! on one axis, the stats, the inventory, the errors and the exchanges (the
//! same exchange again folded into one row with its count and period), and
//! a frame viewer that draws a frame's grid and tree from compact embedded
//! data when a link opens it. Every text from the capture is escaped; the
//! page needs no network.
//!
//! Size: whatever the capture, the page stays under about 8 MB: frame data
//! under [`frames::MAX_FRAME_DATA`], at most `timeline::MAX_BARS` bars and
//! `exchanges::MAX_ROWS` rows a table, each limit said on the page.

mod exchanges;
pub mod frames;
mod latency;
mod script;
mod timeline;

pub use frames::FrameData;

use crate::analysis::diagnosis::{duration_text, frame_ranges};
use crate::analysis::finding_groups::Checked;
use crate::analysis::inventory::Inventory;
use crate::analysis::report::{repeats, Collected};
use crate::analysis::stats::Row;
use crate::render::page::html::{page_style, PAGE_SCRIPT};
use crate::schema::Catalogue;
use crate::text::escape::{html as esc, sanitize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Frames larger than this are not embedded for the frame viewer.
pub(crate) const MAX_VIEW_BYTES: usize = 64 << 10;
/// Rows of the by-connection and by-client stats tables.
const MAX_STATS_ROWS: usize = 500;

const CSS: &str = "\
.rep svg{background:#fafafa;border:1px solid #ddd;margin:4px 0 12px}.rep svg text{font:11px system-ui,sans-serif;fill:#333}\
.rep .note{color:#555}.rep td.num{text-align:right;white-space:nowrap}\
.rep .headline{font-size:15px}.rep ul.wrong{padding-left:20px}.rep ul.wrong li{margin:4px 0}\
.rep .sev{display:inline-block;min-width:58px;font-size:12px;font-weight:600;text-transform:uppercase}.rep .sev.error{color:#b91c1c}.rep .sev.warning{color:#a15c00}.rep .sev.note{color:#555}\
.rep .finding{border-left:4px solid #999;padding:2px 10px;margin:8px 0}.rep .finding.error{border-color:#c62828}\
.rep .finding.warning{border-color:#ef8f00}.rep .finding .what{font-weight:600}.rep .finding .where{color:#555;font-size:90%}.rep .finding:target{background:#fffbea}\
.rep .tl{overflow:auto;max-height:75vh;border:1px solid #ddd;user-select:none}.rep .tl svg{border:0;margin:0;background:#fff}\
.rep .tl .lane{fill:#f6f6f6}.rep .tl .bar{cursor:pointer}.rep #tl-tip{position:fixed;background:#111;color:#fff;font-size:12px;padding:3px 6px;border-radius:3px;pointer-events:none;z-index:9}.rep .tl .sel{fill:rgba(59,130,246,.15);stroke:#3b82f6}\
.rep #viewer{min-height:60px}.rep #viewer section:target{background:none}.rep .viewer-bar{margin:6px 0}";

/// The colour of each API on this page: categorical colours in the order
/// of the API keys present, none of them red (red marks errors and
/// requests never answered).
pub(crate) struct Palette {
    by_key: BTreeMap<i16, &'static str>,
}

const COLOURS: [&str; 12] = [
    "#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f", "#bab0ac",
    "#17becf", "#bcbd22", "#8c8cd9", "#6b8e23",
];

impl Palette {
    pub fn new(keys: impl IntoIterator<Item = i16>) -> Palette {
        let mut by_key = BTreeMap::new();
        let mut keys: Vec<i16> = keys.into_iter().collect();
        keys.sort_unstable();
        keys.dedup();
        for (i, k) in keys.into_iter().enumerate() {
            by_key.insert(k, COLOURS[i % COLOURS.len()]);
        }
        Palette { by_key }
    }

    pub fn colour(&self, key: i16) -> &'static str {
        self.by_key.get(&key).copied().unwrap_or("#888")
    }
}

/// A client id as text: escaped controls, quoted, `null` for none.
fn client_text(names: &crate::analysis::Names, id: Option<u32>) -> String {
    match id {
        None => "-".into(),
        Some(i) => match names.client_id(i) {
            Some(b) => crate::text::escape::quote(&String::from_utf8_lossy(b)),
            None => "null".into(),
        },
    }
}

fn api_name(cat: &Catalogue, k: i16) -> String {
    cat.api_name(k).map_or_else(|| format!("api {k}"), sanitize)
}

/// An exchange's API as the report names it: `Produce v9`, `(no request)`.
pub(crate) fn api_text(cat: &Catalogue, api: Option<(i16, i16)>) -> String {
    match api {
        Some((k, v)) => format!("{} v{v}", api_name(cat, k)),
        None => "(no request)".into(),
    }
}

fn frame_link(f: Option<crate::analysis::FrameAt>) -> String {
    f.map_or_else(
        || "-".into(),
        |f| format!("<a href=\"#frame-{0}\">frame {0}</a>", f.index),
    )
}

/// What the page says it shows: the capture's name as given, and the filter.
pub struct Title<'a> {
    pub capture: &'a str,
    pub filter: &'a str,
}

/// The page.
pub fn page(
    cat: &Catalogue,
    title: &Title<'_>,
    checked: &Checked,
    c: &Collected,
    inv: &Inventory,
    frames: FrameData,
) -> String {
    let mut out = String::with_capacity(256 << 10);
    let _ = writeln!(
        out,
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width,initial-scale=1\">\
         <title>{} · kwire report</title><style>{}{CSS}</style></head><body><main class=rep><h1>Capture report: {}</h1>",
        esc(title.capture),
        page_style(),
        esc(title.capture)
    );
    let t0 = c
        .exchanges
        .iter()
        .map(|e| e.start())
        .fold(f64::INFINITY, f64::min);
    let t0 = if t0.is_finite() { t0 } else { 0.0 };
    headline(&mut out, cat, title, checked, c, inv, t0);
    out.push_str("<nav><a href=\"#findings\">findings</a> · <a href=\"#timeline\">timeline</a> · <a href=\"#latency\">latency</a> · <a href=\"#stats\">stats</a> · <a href=\"#inventory\">inventory</a> · <a href=\"#errors\">errors</a> · <a href=\"#exchanges\">exchanges</a> · <a href=\"#frames\">frame view</a></nav>\n");
    findings_section(&mut out, cat, checked);
    let palette = Palette::new(c.stats.by_api.keys().map(|&(k, _)| k));
    timeline::section(&mut out, cat, c, &palette, t0);
    latency::section(&mut out, cat, c, &palette);
    stats_section(&mut out, cat, c);
    inventory_section(&mut out, inv);
    let groups = repeats(&c.exchanges);
    exchanges::errors_section(&mut out, cat, c, &groups, t0);
    exchanges::exchanges_section(&mut out, cat, c, &groups, t0);
    let listed = c
        .exchanges
        .iter()
        .map(|e| usize::from(e.request.is_some()) + usize::from(e.response.is_some()))
        .sum();
    frames::section(&mut out, &frames, listed, title.capture);
    out.push_str(&frames.html());
    let _ = writeln!(
        out,
        "</main><script>{PAGE_SCRIPT}{}</script></body></html>",
        script::SCRIPT
    );
    out
}

/// The capture in a paragraph, then what is wrong in a sentence per group.
fn headline(
    out: &mut String,
    cat: &Catalogue,
    title: &Title<'_>,
    checked: &Checked,
    c: &Collected,
    inv: &Inventory,
    t0: f64,
) {
    let end = c.exchanges.iter().map(|e| e.end()).fold(t0, f64::max);
    let when = crate::protocol::meanings::utc_micros((t0 * 1e6).max(0.0) as u64)
        .unwrap_or_else(|| "-".into());
    let clients: Vec<String> = inv
        .clients
        .iter()
        .take(8)
        .map(|cl| {
            let id = cl
                .client_id
                .as_deref()
                .map_or_else(|| "null".to_string(), bytes_text);
            match cl.software.as_ref().and_then(|s| s.name.as_deref()) {
                Some(n) => format!("{id} ({})", sanitize(&String::from_utf8_lossy(n))),
                None => id,
            }
        })
        .collect();
    let more = inv.clients.len().saturating_sub(8);
    let brokers: Vec<String> = inv
        .brokers
        .iter()
        .take(8)
        .map(|b| b.address.to_string())
        .collect();
    let _ = write!(
        out,
        "<p class=headline>{} of traffic from {when}: {}, {}, {}{}; {}{}.",
        esc(&crate::text::duration((end - t0).max(0.0))),
        crate::text::count(c.reading.capture.connections, "connection", "connections"),
        crate::text::count(
            c.exchanges.len() + c.exchanges_not_kept as usize,
            "exchange",
            "exchanges"
        ),
        crate::text::count(inv.clients.len(), "client", "clients"),
        if clients.is_empty() {
            String::new()
        } else {
            format!(
                " ({}{})",
                esc(&clients.join(", ")),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        },
        crate::text::count(inv.brokers.len(), "broker", "brokers"),
        if brokers.is_empty() {
            String::new()
        } else {
            format!(" ({})", brokers.join(", "))
        },
    );
    if !title.filter.is_empty() {
        let _ = write!(out, " Exchanges selected by {}.", esc(title.filter));
    }
    out.push_str("</p>\n");
    let bad: Vec<String> = [
        (
            c.stats.unanswered_requests,
            "request was never answered",
            "requests were never answered",
        ),
        (
            c.stats.unmatched_responses,
            "response came without its request",
            "responses came without their request",
        ),
    ]
    .iter()
    .filter(|(n, ..)| *n > 0)
    .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
    .collect();
    out.push_str("<h2 id=wrong>What is wrong</h2><ul class=wrong>");
    if checked.groups.is_empty() {
        out.push_str(
            "<li>Nothing found: no frame breaks the protocol and no conversation rule fired.</li>",
        );
    }
    for (i, g) in checked.groups.iter().enumerate() {
        let sev = g.severity().as_str();
        let api = g.api_key.map_or_else(String::new, |k| {
            g.api_version.map_or_else(
                || format!("{} · ", api_name(cat, k)),
                |v| format!("{} v{v} · ", api_name(cat, k)),
            )
        });
        let times = if g.findings > 1 {
            format!(" ({} times)", g.findings)
        } else {
            String::new()
        };
        // One finding's words stand for the group's only when all say the same.
        let example = if g.messages_differ { "e.g. " } else { "" };
        let _ = write!(
            out,
            "<li><span class=\"sev {sev}\">{sev}</span> <a href=\"#finding-{i}\">{}</a>: {}{example}{}{times}</li>",
            esc(g.rule.id()),
            esc(&api),
            esc(&g.message),
        );
    }
    if !bad.is_empty() {
        let _ = write!(out, "<li>In the exchanges: {}.</li>", esc(&bad.join(", ")));
    }
    out.push_str("</ul>\n");
    if let Some(e) = &c.reading.capture.error {
        let _ = writeln!(
            out,
            "<p class=err>capture cut short after {} packets: {}</p>",
            c.reading.capture.packets,
            esc(e)
        );
    }
    if c.reading.skips > 0 {
        let _ = writeln!(out, "<p class=err>{} bytes in {} places are in no frame (gaps, partial frames or bytes passed over).</p>", c.reading.skipped_bytes, c.reading.skips);
    }
    if c.reading.undecoded > 0 {
        let _ = writeln!(
            out,
            "<p class=err>{} frames read for their facts did not decode completely.</p>",
            c.reading.undecoded
        );
    }
}

fn row_cells(out: &mut String, row: &Row) {
    for c in crate::analysis::stats::number_cells(row) {
        let _ = write!(out, "<td class=num>{c}</td>");
    }
    let errors = crate::analysis::stats::errors_cell(row);
    let _ = write!(out, "<td>{}</td>", esc(&errors));
}

fn heads(out: &mut String, first: &[&str]) {
    out.push_str("<table class=data><tr>");
    for h in first
        .iter()
        .chain(crate::analysis::stats::NUMBER_HEADS.iter())
        .chain(["errors"].iter())
    {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr>\n");
}

fn stats_section(out: &mut String, cat: &Catalogue, c: &Collected) {
    out.push_str("<section id=stats><h2>Stats</h2><h3>By API and version</h3>");
    heads(out, &["api", "version"]);
    for (&(k, v), row) in &c.stats.by_api {
        let name = cat.api_name(k).map_or_else(|| format!("api {k}"), sanitize);
        let _ = write!(out, "<tr><td>{}</td><td>v{v}</td>", esc(&name));
        row_cells(out, row);
        out.push_str("</tr>\n");
    }
    out.push_str("</table>\n");
    if c.stats.unmatched_responses > 0 {
        out.push_str("<p class=note>Responses without their request are in no row: their API is not known.</p>");
    }
    if let Some(clients) = &c.stats.by_client {
        out.push_str("<h3>By client id</h3>");
        heads(out, &["client id"]);
        let mut rows: Vec<(String, &Row)> = clients
            .iter()
            .map(|(&id, r)| (client_text(&c.names, Some(id)), r))
            .collect();
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        for (id, r) in rows.iter().take(MAX_STATS_ROWS) {
            let _ = write!(out, "<tr><td>{}</td>", esc(id));
            row_cells(out, r);
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        more_rows(out, rows.len());
    }
    if let Some(conns) = &c.stats.by_conn {
        out.push_str("<h3>By connection</h3>");
        heads(out, &["conn", "client → broker"]);
        for (conn, r) in conns.iter().take(MAX_STATS_ROWS) {
            let _ = write!(
                out,
                "<tr><td>{conn}</td><td>{} → {}</td>",
                r.client, r.broker
            );
            row_cells(out, &r.row);
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        more_rows(out, conns.len());
    }
    out.push_str("</section>\n");
}

fn more_rows(out: &mut String, rows: usize) {
    if rows > MAX_STATS_ROWS {
        let _ = write!(
            out,
            "<p class=note>The first {MAX_STATS_ROWS} rows of {rows} are listed; <code>kwire stats</code> lists them all.</p>"
        );
    }
}

fn bytes_text(b: &[u8]) -> String {
    crate::text::escape::quote(&String::from_utf8_lossy(b))
}

fn inventory_section(out: &mut String, inv: &Inventory) {
    out.push_str("<section id=inventory><h2>Inventory</h2><h3>Clients</h3><table class=data><tr><th>client id</th><th>software</th><th>connections</th><th>APIs (versions, requests)</th><th>outside what the broker advertised</th></tr>\n");
    for cl in &inv.clients {
        let id = cl
            .client_id
            .as_deref()
            .map_or_else(|| "null".to_string(), bytes_text);
        let sw = cl.software.as_ref().map_or_else(
            || "-".to_string(),
            |s| {
                format!(
                    "{} {}",
                    s.name.as_deref().map_or_else(|| "null".into(), bytes_text),
                    s.version
                        .as_deref()
                        .map_or_else(|| "null".into(), bytes_text)
                )
            },
        );
        let conns: Vec<String> = cl.conns.iter().map(|c| c.to_string()).collect();
        let apis: Vec<String> = cl
            .apis
            .iter()
            .map(|a| {
                let v: Vec<String> = a.versions.iter().map(|v| format!("v{v}")).collect();
                format!(
                    "{} {} ({})",
                    a.api_name
                        .as_deref()
                        .map_or_else(|| format!("api {}", a.api_key), sanitize),
                    v.join(","),
                    a.requests
                )
            })
            .collect();
        let outside: Vec<String> = cl
            .apis
            .iter()
            .flat_map(|a| {
                a.outside_advertised.iter().map(move |o| {
                    format!(
                        "{} v{} to {}",
                        a.api_name
                            .as_deref()
                            .map_or_else(|| format!("api {}", a.api_key), sanitize),
                        o.version,
                        o.broker
                    )
                })
            })
            .collect();
        let _ = writeln!(
            out,
            "<tr class=client><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&id),
            esc(&sw),
            conns.join(" "),
            esc(&apis.join("; ")),
            if outside.is_empty() {
                "-".into()
            } else {
                esc(&outside.join("; "))
            }
        );
    }
    out.push_str(
        "</table>\n<h3>Brokers</h3><table class=data><tr><th>broker</th><th>advertised</th></tr>\n",
    );
    for b in &inv.brokers {
        let adv = b.advertised.as_ref().map_or_else(
            || "no ApiVersions response in the capture".to_string(),
            |m| format!("{} APIs", m.len()),
        );
        let _ = writeln!(out, "<tr><td>{}</td><td>{}</td></tr>", b.address, esc(&adv));
    }
    out.push_str("</table></section>\n");
}

/// What went wrong, first: one block per group of findings (the whole
/// capture's, whatever the selection), most severe first, with its frames
/// linked, and what each conversation rule usually means.
fn findings_section(out: &mut String, cat: &Catalogue, checked: &Checked) {
    let t = &checked.tally;
    let _ = write!(
        out,
        "<section id=findings><h2>Findings</h2><p>{} checked: {}, {}, {}.</p>",
        crate::text::count(checked.frames, "frame", "frames"),
        crate::text::count(t.errors, "error", "errors"),
        crate::text::count(t.warnings, "warning", "warnings"),
        crate::text::count(t.notes, "note", "notes")
    );
    if checked.groups.is_empty() {
        out.push_str("<p class=note>Nothing wrong found: no frame breaks the protocol, and no conversation rule fired.</p></section>\n");
        return;
    }
    for (i, g) in checked.groups.iter().enumerate() {
        let sev = g.severity().as_str();
        let api = g.api_key.map_or_else(String::new, |k| {
            let name = cat
                .api_name(k)
                .map_or_else(|| format!("api {k}"), str::to_string);
            g.api_version
                .map_or_else(|| format!(" · {name}"), |v| format!(" · {name} v{v}"))
        });
        let client = g.client_id.as_ref().map_or_else(String::new, |c| {
            format!(" · client {}", crate::text::escape::quote(c))
        });
        let count = match g.findings {
            1 => "1 finding".to_string(),
            n => format!("{n} findings"),
        };
        let span = match (g.first, g.last) {
            (Some(a), Some(b)) if b > a => format!(" · over {}", duration_text(b - a)),
            _ => String::new(),
        };
        let frames: Vec<usize> = g.frames.iter().copied().collect();
        let links: Vec<String> = frames
            .iter()
            .take(24)
            .map(|n| format!("<a href=\"#frame-{n}\">{n}</a>"))
            .collect();
        // The frames after the links, from where the links stop.
        let more = match frames.get(24..) {
            Some(rest) if !rest.is_empty() => format!(" … ({})", esc(&frame_ranges(rest, 6))),
            _ => String::new(),
        };
        let message = match g.messages_differ {
            true => format!("e.g. {}", g.message),
            false => g.message.clone(),
        };
        let _ = write!(
            out,
            "<div class=\"finding {sev}\" id=finding-{i}><div class=what>{sev} · {}{}{} · {count}{span}</div><div>{}</div>\
             <div class=where>frames {}{more}</div>",
            esc(g.rule.id()),
            esc(&api),
            esc(&client),
            esc(&message),
            links.join(" "),
        );
        if let Some(m) = g.rule.meaning() {
            let _ = write!(out, "<div class=note>{}</div>", esc(m));
        }
        out.push_str("</div>\n");
    }
    out.push_str("</section>\n");
}
