//! Latency per API on one shared logarithmic axis in milliseconds: a row
//! per API, its answered exchanges in buckets of a quarter decade (each bar
//! spans exactly its bucket's range on the axis), and marks at the 50th,
//! 90th and 99th percentiles, with the numbers beside the row.

use super::{api_name, Palette};
use crate::analysis::report::{percentile, Collected};
use crate::schema::Catalogue;
use crate::text::duration_us;
use crate::text::escape::html as esc;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Buckets per decade of microseconds.
const PER_DECADE: i32 = 4;
const LABEL_W: f64 = 170.0;
const PLOT_W: f64 = 660.0;
const NUMBERS_W: f64 = 400.0;
const ROW_H: f64 = 34.0;
const TOP: f64 = 30.0;

/// The bucket of a latency: floor(log10(µs) × 4), latencies under 1 µs in bucket 0.
fn bucket(us: u64) -> i32 {
    ((us.max(1) as f64).log10() * f64::from(PER_DECADE) + 1e-9).floor() as i32
}

/// A bucket edge (or any point on the axis, in buckets) in microseconds.
fn edge_us(b: f64) -> f64 {
    10f64.powf(b / f64::from(PER_DECADE))
}

/// A decade's label in milliseconds: `0.001` … `1` … `10,000`.
fn decade_label(decade: i32) -> String {
    let ms = decade - 3;
    if ms < 0 {
        format!("{:.*}", (-ms) as usize, 10f64.powi(ms))
    } else {
        let digits = 10u64.pow(ms as u32).to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }
}

pub fn section(out: &mut String, cat: &Catalogue, c: &Collected, palette: &Palette) {
    out.push_str("<section id=latency><h2>Latency per API</h2>");
    let mut by_key: BTreeMap<i16, Vec<u64>> = BTreeMap::new();
    for &(k, _) in c.stats.by_api.keys() {
        by_key.entry(k).or_default();
    }
    for ex in &c.exchanges {
        if let (Some((k, _)), Some(l)) = (ex.api, ex.latency_us()) {
            by_key.entry(k).or_default().push(l);
        }
    }
    if by_key.is_empty() {
        out.push_str("<p class=note>No exchange.</p></section>\n");
        return;
    }
    for v in by_key.values_mut() {
        v.sort_unstable();
    }
    let all = by_key.values().flatten();
    let lo = all.clone().map(|&l| bucket(l)).min().unwrap_or(0);
    let hi = all.map(|&l| bucket(l)).max().unwrap_or(PER_DECADE * 3);
    // Whole decades, at least one.
    let d_lo = lo.div_euclid(PER_DECADE);
    let d_hi = (hi + 1 + PER_DECADE - 1)
        .div_euclid(PER_DECADE)
        .max(d_lo + 1);
    let (b_lo, b_hi) = (f64::from(d_lo * PER_DECADE), f64::from(d_hi * PER_DECADE));
    let x = |b: f64| LABEL_W + (b - b_lo) / (b_hi - b_lo) * PLOT_W;
    let x_us = |us: u64| x((us.max(1) as f64).log10() * f64::from(PER_DECADE));
    let height = TOP + ROW_H * by_key.len() as f64 + 24.0;
    let _ = write!(
        out,
        "<p class=note>Answered exchanges per API on one logarithmic axis in milliseconds; each bar spans its bucket (a quarter of a decade) and its height is relative to the row's fullest bucket (hover for the count). \
         Marks: the 50th, 90th and 99th percentiles.</p>\
         <svg class=latency xmlns=\"http://www.w3.org/2000/svg\" width={} height={height} role=img aria-label=\"latency per API\">",
        LABEL_W + PLOT_W + NUMBERS_W
    );
    // The axis: a line per decade, labelled.
    for d in d_lo..=d_hi {
        let xd = x(f64::from(d * PER_DECADE));
        let _ = write!(
            out,
            "<line x1={xd:.1} y1={} x2={xd:.1} y2={} stroke=\"#ddd\"/><text x={xd:.1} y={} text-anchor=middle>{}</text>",
            TOP - 6.0,
            height - 20.0,
            TOP - 10.0,
            decade_label(d)
        );
    }
    let _ = write!(
        out,
        "<text x={} y=12 text-anchor=middle>latency, ms (log scale)</text>",
        LABEL_W + PLOT_W / 2.0
    );
    for (row, (&k, lat)) in by_key.iter().enumerate() {
        let name = api_name(cat, k);
        let y0 = TOP + ROW_H * row as f64;
        let _ = write!(
            out,
            "<g class=latency-row data-api=\"{}\"><text x={} y={:.1} text-anchor=end>{}</text><line x1={LABEL_W} y1={:.1} x2={} y2={:.1} stroke=\"#bbb\"/>",
            esc(&name),
            LABEL_W - 8.0,
            y0 + ROW_H - 10.0,
            esc(&name),
            y0 + ROW_H - 6.0,
            LABEL_W + PLOT_W,
            y0 + ROW_H - 6.0
        );
        let mut counts: BTreeMap<i32, u64> = BTreeMap::new();
        for &l in lat {
            *counts.entry(bucket(l)).or_default() += 1;
        }
        let max = counts.values().copied().max().unwrap_or(1).max(1);
        for (&b, &n) in &counts {
            let (a, z) = (x(f64::from(b)), x(f64::from(b + 1)));
            let h = (n as f64 / max as f64 * (ROW_H - 10.0)).max(1.5);
            let _ = write!(
                out,
                "<rect x={:.1} y={:.1} width={:.1} height={h:.1} fill=\"{}\"><title>{}: {} to {}: {n} exchanges</title></rect>",
                a + 0.5,
                y0 + ROW_H - 6.0 - h,
                (z - a - 1.0).max(1.0),
                palette.colour(k),
                esc(&name),
                duration_us(edge_us(f64::from(b)).round() as u64),
                duration_us(edge_us(f64::from(b + 1)).round() as u64),
            );
        }
        let marks = [50.0, 90.0, 99.0].map(|p| percentile(lat, p));
        for (p, v) in [50, 90, 99].iter().zip(marks) {
            if let Some(v) = v {
                let xm = x_us(v);
                let _ = write!(
                    out,
                    "<line class=p{p} x1={xm:.1} y1={:.1} x2={xm:.1} y2={:.1} stroke=\"#111\" stroke-width=1.5{}><title>p{p}: {}</title></line>",
                    y0 + 2.0,
                    y0 + ROW_H - 4.0,
                    if *p == 50 { "" } else { " stroke-dasharray=\"3 2\"" },
                    duration_us(v)
                );
            }
        }
        let numbers = match (marks, lat.last()) {
            ([Some(p50), Some(p90), Some(p99)], Some(&max)) => format!(
                "n={} · p50 {} · p90 {} · p99 {} · max {}",
                lat.len(),
                duration_us(p50),
                duration_us(p90),
                duration_us(p99),
                duration_us(max)
            ),
            _ => "none answered".into(),
        };
        let _ = write!(
            out,
            "<text class=numbers x={} y={:.1}>{}</text></g>",
            LABEL_W + PLOT_W + 12.0,
            y0 + ROW_H - 10.0,
            esc(&numbers)
        );
    }
    out.push_str("</svg></section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_quarter_decades() {
        assert_eq!(bucket(0), 0);
        assert_eq!(bucket(1), 0);
        assert_eq!(bucket(1000), 12);
        assert_eq!(bucket(1777), 12);
        assert_eq!(bucket(1779), 13);
        assert_eq!(bucket(250_800), 21);
        assert!((edge_us(12.0) - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn decades_are_labelled_in_milliseconds() {
        assert_eq!(decade_label(0), "0.001");
        assert_eq!(decade_label(2), "0.1");
        assert_eq!(decade_label(3), "1");
        assert_eq!(decade_label(5), "100");
        assert_eq!(decade_label(7), "10,000");
    }
}
