//! `kwire report`'s page: one self-contained HTML file (inline CSS, JS and
//! SVG) with the stats, a latency histogram per API, a timeline per
//! connection, the inventory, the error responses and every selected frame,
//! the first [`MAX_VIEWS`] with their annotated view (grid and tree, as on
//! the documentation pages). Every text from the capture is escaped.

use crate::analysis::diagnosis::{duration_text, frame_ranges};
use crate::analysis::finding_groups::Checked;
use crate::analysis::inventory::Inventory;
use crate::analysis::report::{Collected, ExchangeFacts};
use crate::analysis::stats::{error_text, Row};
use crate::decode::Direction;
use crate::docs::Figure;
use crate::render::page::html::{figure_html, page_style, PAGE_SCRIPT};
use crate::schema::Catalogue;
use crate::text::escape::{html as esc, sanitize};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Frames shown with their grid and tree; later ones are listed only.
pub const MAX_VIEWS: usize = 2000;
/// Frames larger than this are listed without a grid and tree.
pub const MAX_VIEW_BYTES: usize = 64 << 10;
/// Exchanges drawn on one connection's timeline.
pub const MAX_MARKS: usize = 2000;

const CSS: &str = "\
.rep svg{background:#fafafa;border:1px solid #ddd;margin:4px 0 12px}.rep svg text{font:11px system-ui,sans-serif;fill:#444}\
.rep .hist{display:flex;flex-wrap:wrap;gap:8px 24px}.rep .note{color:#555}.rep td.num{text-align:right}\
.rep section.frame{border-top:1px solid #eee;padding-top:4px}.rep section.frame:target{background:#fffbea}\
.rep .finding{border-left:4px solid #999;padding:2px 10px;margin:8px 0}.rep .finding.error{border-color:#c62828}\
.rep .finding.warning{border-color:#ef8f00}.rep .finding .what{font-weight:600}.rep .finding .where{color:#555;font-size:90%}";

/// Whose frames get a detailed view: the frame numbers, and those left out.
pub struct Views {
    /// Frame number → its figure's HTML.
    pub html: BTreeMap<usize, String>,
    /// Frames selected but shown without a view (beyond [`MAX_VIEWS`] or too large).
    pub too_large: Vec<usize>,
    pub beyond_limit: usize,
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

fn api_text(cat: &Catalogue, api: Option<(i16, i16)>) -> String {
    match api {
        Some((k, v)) => format!(
            "{} v{v}",
            cat.api_name(k).map_or_else(|| format!("api {k}"), sanitize)
        ),
        None => "(no request)".into(),
    }
}

fn frame_link(f: Option<crate::analysis::FrameAt>) -> String {
    f.map_or_else(
        || "-".into(),
        |f| format!("<a href=\"#frame-{0}\">frame {0}</a>", f.index),
    )
}

/// A hue per API key, so one API has one colour everywhere.
fn colour(api: Option<(i16, i16)>) -> String {
    match api {
        Some((k, _)) => format!("hsl({},60%,45%)", (i32::from(k).rem_euclid(360) * 47) % 360),
        None => "#888".into(),
    }
}

/// The page. `title` is the capture's name as given.
pub fn page(
    cat: &Catalogue,
    title: &str,
    checked: &Checked,
    c: &Collected,
    inv: &Inventory,
    views: &Views,
    filter: &str,
) -> String {
    let mut out = String::with_capacity(64 << 10);
    let _ = writeln!(
        out,
        "<!doctype html><html lang=en><head><meta charset=utf-8><meta name=viewport content=\"width=device-width,initial-scale=1\">\
         <title>{} · kwire report</title><style>{}{CSS}</style></head><body><main class=rep><h1>Capture report: {}</h1>",
        esc(title),
        page_style(),
        esc(title)
    );
    findings_section(&mut out, cat, checked);
    let s = &c.stats;
    let _ = writeln!(
        out,
        "<dl class=facts><dt>packets</dt><dd>{}</dd><dt>connections</dt><dd>{}</dd><dt>frames</dt><dd>{}</dd><dt>pairs</dt><dd>{}</dd>\
         <dt>unanswered requests</dt><dd>{}</dd><dt>responses without request</dt><dd>{}</dd><dt>selection</dt><dd>{}</dd></dl>",
        c.reading.capture.packets,
        c.reading.capture.connections,
        s.frames,
        s.pairs,
        s.unanswered_requests,
        s.unmatched_responses,
        if filter.is_empty() { "every exchange".to_string() } else { esc(filter) }
    );
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
    out.push_str("<nav><a href=\"#findings\">findings</a> · <a href=\"#stats\">stats</a> · <a href=\"#latency\">latency</a> · <a href=\"#timeline\">timeline</a> · <a href=\"#inventory\">inventory</a> · <a href=\"#errors\">errors</a> · <a href=\"#exchanges\">exchanges</a> · <a href=\"#frames\">frames</a></nav>\n");
    stats_section(&mut out, cat, c);
    latency_section(&mut out, cat, c);
    timeline_section(&mut out, cat, c);
    inventory_section(&mut out, inv);
    errors_section(&mut out, cat, c);
    exchanges_section(&mut out, cat, c);
    frames_section(&mut out, cat, c, views);
    let _ = writeln!(out, "</main><script>{}</script></body></html>", PAGE_SCRIPT);
    out
}

fn row_cells(out: &mut String, row: &Row) {
    for c in crate::analysis::stats::number_cells(row) {
        let _ = write!(out, "<td class=num>{c}</td>");
    }
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
    if let Some(conns) = &c.stats.by_conn {
        out.push_str("<h3>By connection</h3>");
        heads(out, &["conn", "client → broker"]);
        for (conn, r) in conns {
            let _ = write!(
                out,
                "<tr><td><a href=\"#conn-{conn}\">{conn}</a></td><td>{} → {}</td>",
                r.client, r.broker
            );
            row_cells(out, &r.row);
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
    }
    out.push_str("</section>\n");
}

/// Latency buckets: bucket i holds latencies in [2^i, 2^(i+1)) µs (bucket 0 also 0).
fn bucket(us: u64) -> usize {
    (64 - us.max(1).leading_zeros() - 1) as usize
}

fn bucket_label(i: usize) -> String {
    crate::text::duration_us(1u64 << i.min(63))
}

fn latency_section(out: &mut String, cat: &Catalogue, c: &Collected) {
    out.push_str("<section id=latency><h2>Latency per API</h2><p class=note>Answered exchanges by latency, in buckets doubling from 1 µs (each bar: latencies from its label to the next).</p><div class=hist>\n");
    let mut by_key: BTreeMap<i16, [u64; 64]> = BTreeMap::new();
    for ex in &c.exchanges {
        if let (Some((k, _)), Some(l)) = (ex.api, ex.latency_us()) {
            by_key.entry(k).or_insert([0; 64])[bucket(l)] += 1;
        }
    }
    // Every API with a stats row gets a histogram, answered or not.
    for &(k, _) in c.stats.by_api.keys() {
        by_key.entry(k).or_insert([0; 64]);
    }
    for (k, counts) in &by_key {
        let name = cat
            .api_name(*k)
            .map_or_else(|| format!("api {k}"), sanitize);
        let lo = counts.iter().position(|&n| n > 0).unwrap_or(0);
        let hi = counts.iter().rposition(|&n| n > 0).unwrap_or(0).max(lo);
        let total: u64 = counts.iter().sum();
        let max = counts.iter().copied().max().unwrap_or(0).max(1);
        let n = hi - lo + 1;
        let (bw, h, top) = (36usize, 120usize, 18usize);
        let width = n * bw + 20;
        let _ = write!(
            out,
            "<figure class=histogram data-api=\"{}\"><figcaption>{} ({total} answered)</figcaption><svg xmlns=\"http://www.w3.org/2000/svg\" width={width} height={} role=img aria-label=\"latency histogram of {}\">",
            esc(&name),
            esc(&name),
            h + top + 20,
            esc(&name)
        );
        for (j, &count) in counts[lo..=hi].iter().enumerate() {
            let bh = (count as f64 / max as f64 * h as f64).round() as usize;
            let x = 10 + j * bw;
            let y = top + h - bh;
            let _ = write!(
                out,
                "<rect x={} y={y} width={} height={bh} fill=\"{}\"><title>{} to {}: {count}</title></rect><text x={} y={}>{}</text><text x={} y={} text-anchor=middle>{}</text>",
                x + 2,
                bw - 4,
                colour(Some((*k, 0))),
                bucket_label(lo + j),
                bucket_label(lo + j + 1),
                x,
                top + h + 14,
                bucket_label(lo + j),
                x + bw / 2,
                y.saturating_sub(3).max(10),
                if count > 0 { count.to_string() } else { String::new() }
            );
        }
        out.push_str("</svg></figure>\n");
    }
    if by_key.is_empty() {
        out.push_str("<p class=note>No exchange.</p>");
    }
    out.push_str("</div></section>\n");
}

fn timeline_section(out: &mut String, cat: &Catalogue, c: &Collected) {
    out.push_str("<section id=timeline><h2>Timeline per connection</h2><p class=note>Each bar is an exchange from its request to its response (red: never answered, waited until the bar's end), coloured by API; all connections on one time scale. Click a bar for its request, the tick at its end for its response.</p>\n");
    let mut by_conn: BTreeMap<usize, Vec<&ExchangeFacts>> = BTreeMap::new();
    for ex in &c.exchanges {
        by_conn.entry(ex.conn).or_default().push(ex);
    }
    let t0 = c
        .exchanges
        .iter()
        .map(ExchangeFacts::start)
        .fold(f64::INFINITY, f64::min);
    let t1 = c
        .exchanges
        .iter()
        .map(ExchangeFacts::end)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = if t1 > t0 && (t1 - t0).is_finite() {
        t1 - t0
    } else {
        1.0
    };
    let (w, left) = (1200.0, 10.0);
    let x = |t: f64| {
        let v = left + (t - t0) / span * w;
        if v.is_finite() {
            v.clamp(left, left + w)
        } else {
            left
        }
    };
    const LANES: usize = 6;
    for (conn, list) in &by_conn {
        let first = list[0];
        let _ = write!(
            out,
            "<h3 id=conn-{conn}>Connection {conn}: {} → {} ({} exchanges{})</h3>",
            first.client,
            first.broker,
            list.len(),
            if list.len() > MAX_MARKS {
                format!(", the first {MAX_MARKS} drawn")
            } else {
                String::new()
            }
        );
        let height = LANES * 14 + 24;
        let _ = write!(out, "<svg class=timeline data-conn={conn} xmlns=\"http://www.w3.org/2000/svg\" width={} height={height} role=img aria-label=\"timeline of connection {conn}\">", w + 2.0 * left);
        for (i, ex) in list.iter().take(MAX_MARKS).enumerate() {
            let (a, b) = (x(ex.start()), x(ex.end()));
            let y = 4 + (i % LANES) * 14;
            let unanswered = matches!(ex.outcome, crate::analysis::Outcome::Unanswered { .. });
            let fill = if unanswered {
                "#dc2626".to_string()
            } else {
                colour(ex.api)
            };
            let tip = format!(
                "{}{}{}",
                api_text(cat, ex.api),
                ex.latency_us().map_or_else(String::new, |l| format!(
                    ", {}",
                    crate::text::duration_us(l)
                )),
                if ex.errors.is_empty() {
                    String::new()
                } else {
                    format!(
                        ", {}",
                        ex.errors
                            .iter()
                            .map(|&e| error_text(e))
                            .collect::<Vec<_>>()
                            .join(" ")
                    )
                }
            );
            let target = ex.request.or(ex.response).map_or(0, |f| f.index);
            let _ = write!(out, "<a href=\"#frame-{target}\"><rect x={a:.1} y={y} width={:.1} height=10 fill=\"{fill}\"><title>{}</title></rect></a>", (b - a).max(2.0), esc(&tip));
            if let (Some(_), Some(r)) = (ex.request, ex.response) {
                let _ = write!(out, "<a href=\"#frame-{}\"><rect x={:.1} y={y} width=3 height=10 fill=\"#111\"><title>response: frame {}</title></rect></a>", r.index, b, r.index);
            }
        }
        let _ = writeln!(out, "<text x={left} y={}>{:.3} s</text><text x={} y={} text-anchor=end>+{:.3} s</text></svg>", height - 4, 0.0, left + w, height - 4, span);
    }
    if by_conn.is_empty() {
        out.push_str("<p class=note>No exchange.</p>");
    }
    out.push_str("</section>\n");
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
        let conns: Vec<String> = cl
            .conns
            .iter()
            .map(|c| format!("<a href=\"#conn-{c}\">{c}</a>"))
            .collect();
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
    for g in &checked.groups {
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
        let more = if frames.len() > 24 {
            format!(" … ({})", esc(&frame_ranges(&frames, 6)))
        } else {
            String::new()
        };
        let message = match g.messages_differ {
            true => format!("e.g. {}", g.message),
            false => g.message.clone(),
        };
        let _ = write!(
            out,
            "<div class=\"finding {sev}\"><div class=what>{sev} · {}{}{} · {count}{span}</div><div>{}</div>\
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

fn errors_section(out: &mut String, cat: &Catalogue, c: &Collected) {
    out.push_str("<section id=errors><h2>Error responses</h2>");
    let with: Vec<&ExchangeFacts> = c
        .exchanges
        .iter()
        .filter(|e| !e.errors.is_empty())
        .collect();
    if with.is_empty() {
        out.push_str("<p class=note>No response carries an error code.</p></section>\n");
        return;
    }
    out.push_str("<table class=data><tr><th>conn</th><th>api</th><th>client id</th><th>errors</th><th>latency</th><th>request</th><th>response</th></tr>\n");
    for e in with {
        let errors: Vec<String> = e.errors.iter().map(|&x| error_text(x)).collect();
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=err>{}</td><td class=num>{}</td><td>{}</td><td>{}</td></tr>",
            e.conn,
            esc(&api_text(cat, e.api)),
            esc(&client_text(&c.names, e.client_id)),
            esc(&errors.join(" ")),
            e.latency_us().map_or_else(|| "-".into(), crate::text::duration_us),
            frame_link(e.request),
            frame_link(e.response)
        );
    }
    out.push_str("</table></section>\n");
}

fn exchanges_section(out: &mut String, cat: &Catalogue, c: &Collected) {
    out.push_str("<section id=exchanges><h2>Exchanges</h2>");
    if c.exchanges_not_kept > 0 {
        let _ = write!(out, "<p class=note>The first {} exchanges are listed; {} more are counted in the stats only.</p>", c.exchanges.len(), c.exchanges_not_kept);
    }
    out.push_str("<table class=data><tr><th>conn</th><th>api</th><th>client id</th><th>latency</th><th>errors</th><th>request</th><th>response</th></tr>\n");
    for e in &c.exchanges {
        let errors: Vec<String> = e.errors.iter().map(|&x| error_text(x)).collect();
        let latency = match e.outcome {
            crate::analysis::Outcome::Answered { latency_us } => {
                crate::text::duration_us(latency_us)
            }
            crate::analysis::Outcome::Unanswered { waited_us } => {
                format!(
                    "unanswered (waited {})",
                    crate::text::duration_us(waited_us)
                )
            }
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td class=num>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            e.conn,
            esc(&api_text(cat, e.api)),
            esc(&client_text(&c.names, e.client_id)),
            esc(&latency),
            if errors.is_empty() { "-".into() } else { esc(&errors.join(" ")) },
            frame_link(e.request),
            frame_link(e.response)
        );
    }
    out.push_str("</table></section>\n");
}

fn frames_section(out: &mut String, cat: &Catalogue, c: &Collected, views: &Views) {
    out.push_str("<section id=frames><h2>Frames</h2>");
    let _ = write!(out, "<p class=note>Each frame of the exchanges above, decoded by kwire: hover a byte or a tree line to see what it is. The first {MAX_VIEWS} frames (up to {} KiB each) get a grid and tree", MAX_VIEW_BYTES >> 10);
    if views.beyond_limit > 0 || !views.too_large.is_empty() {
        let _ = write!(out, "; {} frames beyond the first {MAX_VIEWS} and {} larger frames are listed only (<code>kwire capture FILE --frame N</code> shows one)", views.beyond_limit, views.too_large.len());
    }
    out.push_str(".</p>\n");
    let mut frames: Vec<(crate::analysis::FrameAt, Direction, &ExchangeFacts)> = Vec::new();
    for e in &c.exchanges {
        if let Some(r) = e.request {
            frames.push((r, Direction::Request, e));
        }
        if let Some(r) = e.response {
            frames.push((r, Direction::Response, e));
        }
    }
    frames.sort_by_key(|f| f.0.index);
    for (f, dir, e) in frames {
        let (other, other_dir) = match dir {
            Direction::Request => (e.response, Direction::Response),
            Direction::Response => (e.request, Direction::Request),
        };
        let _ = write!(
            out,
            "<section class=frame id=frame-{}><h3>Frame {}: {} {} on connection {}, {} bytes{}</h3>",
            f.index,
            f.index,
            esc(&api_text(cat, e.api)),
            dir.as_str(),
            e.conn,
            f.bytes,
            other.map_or_else(String::new, |o| format!(" (its {}: <a href=\"#frame-{}\">frame {}</a>)", other_dir.as_str(), o.index, o.index))
        );
        match views.html.get(&f.index) {
            Some(h) => out.push_str(h),
            None => out.push_str("<p class=note>No detailed view (see above).</p>"),
        }
        out.push_str("</section>\n");
    }
    out.push_str("</section>\n");
}

/// A frame's figure for its view (`id` is the figure's HTML id).
pub fn view(figure: &Figure, id: &str) -> String {
    figure_html(figure, id)
}
