//! One swimlane timeline of every connection on a shared time axis, drawn
//! by the page's script from compact data (so it can zoom and relabel its
//! ticks): a lane per connection, a bar per exchange from its request to
//! its response, coloured by API and labelled with its name where it fits.
//!
//! Data: `{"span_ms", "apis": [[name and version, colour]], "lanes": [[conn, label]],
//! "bars": [[lane, start_ms, end_ms, api, kind, frame, errors?]]}`, times
//! from the first exchange's start; `api` indexes `apis` (-1: not known);
//! kind 0 answered, 1 answered with an error code, 2 never answered, 3 a
//! response without its request.

use super::{api_name, client_text, Palette};
use crate::analysis::report::{Collected, ExchangeFacts};
use crate::analysis::stats::error_text;
use crate::analysis::Outcome;
use crate::schema::Catalogue;
use crate::text::escape::html as esc;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Bars in the page's data; later exchanges are counted in a note.
pub const MAX_BARS: usize = 50_000;
/// Lanes drawn; exchanges of later connections are left out, with a note.
pub(crate) const MAX_LANES: usize = 2_000;

fn ms(t: f64) -> Value {
    crate::text::float_json((t * 1e6).round() / 1e3)
}

/// The timeline's data, and how many exchanges it leaves out.
pub fn data(cat: &Catalogue, c: &Collected, palette: &Palette, t0: f64) -> (Value, usize) {
    let mut lanes: BTreeMap<usize, usize> = BTreeMap::new();
    let mut lane_rows = Vec::new();
    let mut apis: BTreeMap<(i16, i16), usize> = BTreeMap::new();
    let mut api_rows = Vec::new();
    let mut bars = Vec::new();
    let mut left_out = 0;
    let mut order: Vec<&ExchangeFacts> = c.exchanges.iter().collect();
    order.sort_by(|a, b| a.start().total_cmp(&b.start()));
    let mut span: f64 = 0.0;
    for ex in order {
        if bars.len() >= MAX_BARS {
            left_out += 1;
            continue;
        }
        let lane = match lanes.get(&ex.conn) {
            Some(&l) => l,
            None if lanes.len() >= MAX_LANES => {
                left_out += 1;
                continue;
            }
            None => {
                let l = lanes.len();
                lanes.insert(ex.conn, l);
                let id = client_text(&c.names, ex.client_id);
                lane_rows.push(json!([
                    ex.conn,
                    format!("{id} {} → {}", ex.client, ex.broker)
                ]));
                l
            }
        };
        let api = match ex.api {
            Some((k, v)) => {
                let next = apis.len();
                let i = *apis.entry((k, v)).or_insert_with(|| {
                    api_rows.push(json!([
                        format!("{} v{v}", api_name(cat, k)),
                        palette.colour(k)
                    ]));
                    next
                });
                i as i64
            }
            None => -1,
        };
        let kind = match ex.outcome {
            Outcome::Unanswered { .. } => 2,
            Outcome::Unmatched => 3,
            _ if !ex.errors.is_empty() => 1,
            _ => 0,
        };
        let frame = ex.request.or(ex.response).map_or(0, |f| f.index);
        let (start, end) = (ex.start() - t0, ex.end() - t0);
        span = span.max(end);
        let mut bar = vec![
            json!(lane),
            ms(start),
            ms(end.max(start)),
            json!(api),
            json!(kind),
            json!(frame),
        ];
        if !ex.errors.is_empty() {
            let names: Vec<String> = ex.errors.iter().map(|&e| error_text(e)).collect();
            bar.push(json!(names.join(" ")));
        }
        bars.push(Value::Array(bar));
    }
    (
        json!({"span_ms": ms(span), "apis": api_rows, "lanes": lane_rows, "bars": bars}),
        left_out,
    )
}

pub fn section(out: &mut String, cat: &Catalogue, c: &Collected, palette: &Palette, t0: f64) {
    out.push_str("<section id=timeline><h2>Timeline</h2>");
    if c.exchanges.is_empty() {
        out.push_str("<p class=note>No exchange.</p></section>\n");
        return;
    }
    let (data, left_out) = data(cat, c, palette, t0);
    out.push_str(
        "<p class=note>A lane per connection, a bar per exchange from its request to its response, on one time axis from the first request. \
         Colour is the API; a red outline marks a response with an error code, a dashed red outline a request never answered (the bar ends where the capture stopped waiting). \
         Drag across the chart to zoom into a span, double-click or <b>reset</b> to see it all; click a bar to open its frame. Exchanges of one connection closer than a pixel at the current zoom are drawn as one bar (its tooltip counts them).</p>",
    );
    if left_out > 0 || c.exchanges_not_kept > 0 {
        let _ = write!(
            out,
            "<p class=note>{} exchanges are not drawn (at most {MAX_BARS} bars and {MAX_LANES} connections).</p>",
            left_out as u64 + c.exchanges_not_kept
        );
    }
    let _ = writeln!(
        out,
        "<div class=tl-bar><button type=button data-zoom=in>zoom in</button> <button type=button data-zoom=out>zoom out</button> <button type=button data-zoom=reset>reset</button> <span id=tl-range></span></div>\
         <div id=tl class=tl></div><div id=tl-tip hidden></div><pre hidden id=tl-data>{}</pre></section>",
        esc(&data.to_string())
    );
}
