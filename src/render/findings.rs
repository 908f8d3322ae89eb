//! `kwire check`'s findings as text lines (aligned like `capture --list`) or
//! JSON lines, written as they are found.

use crate::analysis::diagnosis::{duration_text, frame_ranges};
use crate::analysis::finding::{Finding, Rule, Severity, Tally};
use crate::analysis::finding_groups::{Group, Groups};
use crate::decode::Direction;
use crate::protocol::meanings::utc_micros;
use crate::schema::Catalogue;
use crate::text::escape::sanitize;
use serde_json::{json, Value as Json};
use std::collections::BTreeSet;
use std::io::{self, Write};

/// How findings are written as they are handed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Gathered into groups, written at the end most severe first, each
    /// line fitting the width (`kwire check`'s text).
    Groups { width: usize },
    /// A text line each, as it comes (`proxy --check`).
    Lines,
    /// A JSON object each per line, as it comes.
    Json,
}

/// Findings written as `kwire check` writes them, counted whatever their
/// severity (the exit status counts them all) and shown from `min` up.
pub struct FindingsWriter<'c, W: Write> {
    cat: &'c Catalogue,
    pub out: W,
    layout: Layout,
    min: Severity,
    tally: Tally,
    groups: Groups,
}

impl<'c, W: Write> FindingsWriter<'c, W> {
    pub fn new(cat: &'c Catalogue, out: W, layout: Layout, min: Severity) -> Self {
        FindingsWriter {
            cat,
            out,
            layout,
            min,
            tally: Tally::default(),
            groups: Groups::default(),
        }
    }

    /// Count and show the findings in `found`, emptying it (the shape
    /// [`crate::pipeline::check::check_capture`] hands them in).
    pub fn take(&mut self, found: &mut Vec<Finding>) -> io::Result<()> {
        for f in found.drain(..) {
            self.tally.add(&f);
            // Severities order from the worst: `Error < Warning < Note`.
            if f.severity() > self.min {
                continue;
            }
            match self.layout {
                Layout::Groups { .. } => self.groups.add(&f),
                Layout::Lines => write_text(&mut self.out, self.cat, &f)?,
                Layout::Json => write_json(&mut self.out, self.cat, &f)?,
            }
        }
        Ok(())
    }

    /// The groups gathered so far, written and forgotten (nothing for the
    /// other layouts, which wrote as they went).
    pub fn write_groups(&mut self) -> io::Result<()> {
        let Layout::Groups { width } = self.layout else {
            return Ok(());
        };
        let groups = std::mem::take(&mut self.groups).sorted();
        write_groups(&mut self.out, self.cat, &groups, width)
    }

    /// Every finding taken so far, by severity (those not shown included).
    pub fn tally(&self) -> Tally {
        self.tally
    }
}

/// One finding as a text line: frame, time, connection and direction, API,
/// correlation id, offset, severity, rule and message.
pub fn write_text(out: &mut impl Write, cat: &Catalogue, f: &Finding) -> io::Result<()> {
    let frame = f
        .frame
        .map_or_else(|| "    -".to_string(), |n| format!("{n:>5}"));
    let time = f
        .time
        .and_then(|t| utc_micros((t * 1e6).round().max(0.0) as u64))
        .unwrap_or_else(|| "-".into());
    let conn = f.conn.map_or_else(String::new, |c| format!(" conn {c}"));
    let arrow = match f.direction {
        Some(Direction::Request) => " →",
        Some(Direction::Response) => " ←",
        None => "",
    };
    let api = match (f.api_key, f.api_version) {
        (Some(k), v) => {
            let name = cat
                .api_name(k)
                .map_or_else(|| format!("api {k}"), str::to_string);
            v.map_or(name.clone(), |v| format!("{name} v{v}"))
        }
        (None, _) if f.frame.is_some() => "?".into(),
        (None, _) => String::new(),
    };
    let corr = f
        .correlation_id
        .map_or_else(String::new, |c| format!(" corr={c}"));
    let offset = f
        .offset
        .map_or_else(String::new, |o| format!(" @0x{o:04x}"));
    let sev = f.severity().as_str();
    writeln!(
        out,
        "{frame} {time}{conn}{arrow} {api}{corr}{offset} {sev} {}: {}",
        f.rule.id(),
        sanitize(&f.message)
    )
}

/// One finding as a JSON object on a line of its own: where it is, what
/// it is, and for a conversation finding every frame it names, its time
/// span, its count and the client.
pub fn write_json(out: &mut impl Write, cat: &Catalogue, f: &Finding) -> io::Result<()> {
    let v = json!({
        "frame": f.frame,
        "time": f.time.map(micros_time),
        "conn": f.conn,
        "direction": f.direction.map(|d| d.as_str()),
        "api_key": f.api_key,
        "api_name": f.api_key.and_then(|k| cat.api_name(k)),
        "api_version": f.api_version,
        "correlation_id": f.correlation_id,
        "offset": f.offset,
        "rule": f.rule.id(),
        "severity": f.severity().as_str(),
        "message": f.message,
        "frames": f.frames,
        "until": f.until.map(micros_time),
        "count": f.count,
        "client_id": f.client_id,
    });
    writeln!(out, "{}", crate::render::json::to_text(&v))
}

pub use super::json::capture_time as micros_time;

/// The findings' groups as `kwire check` prints them: per group a line with
/// severity, rule, API, count, frames as ranges, time span and connections,
/// then its message (the first one, `e.g.` when the group's messages
/// differ); then what each conversation rule usually means, once. Every
/// line fits `width` columns.
pub fn write_groups(
    out: &mut impl Write,
    cat: &Catalogue,
    groups: &[Group],
    width: usize,
) -> io::Result<()> {
    let width = width.max(60);
    let rule_width = groups.iter().map(|g| g.rule.id().len()).max().unwrap_or(0);
    for g in groups {
        let mut head = format!("{:<7} {:<rule_width$}", g.severity().as_str(), g.rule.id());
        if let Some(k) = g.api_key {
            let name = cat
                .api_name(k)
                .map_or_else(|| format!("api {k}"), str::to_string);
            head += &match g.api_version {
                Some(v) => format!("  {name} v{v}"),
                None => format!("  {name}"),
            };
        }
        if let Some(c) = &g.client_id {
            head += &format!("  client {}", quote_short(c, 24));
        }
        head += &format!("  {}", times(g.findings, "finding", "findings"));
        writeln!(out, "{}", fit(&sanitize(&head), width))?;
        // Where: the time span, the connections, then the frames in what room is left.
        let mut at = String::new();
        if let (Some(a), Some(b)) = (g.first, g.last) {
            at += &span_text(a, b);
        }
        match g.conns.len() {
            0 => {}
            1 => at += &format!("  conn {}", g.conns.iter().next().copied().unwrap_or(0)),
            // Only so many are kept: the count is a floor.
            n if g.conns_dropped => at += &format!("  more than {n} conns"),
            n => at += &format!("  {n} conns"),
        }
        let frames = g.frames();
        if !frames.is_empty() {
            let label = if frames.len() == 1 { "frame" } else { "frames" };
            let offset = match (g.findings, g.offset) {
                (1, Some(o)) => format!(" @0x{o:04x}"),
                _ => String::new(),
            };
            let room =
                (width - 8).saturating_sub(at.chars().count() + label.len() + offset.len() + 5);
            let mut most = 12;
            let mut ranges = frame_ranges(&frames, most);
            while ranges.chars().count() > room && most > 1 {
                most -= 1;
                ranges = frame_ranges(&frames, most);
            }
            if g.frames_dropped {
                ranges += " …";
            }
            at += &format!("  {label} {ranges}{offset}");
        }
        // Findings that name no frame (a segment's) say where they are; one
        // alone says so in its message.
        if frames.is_empty() && g.findings > 1 && !g.places.is_empty() {
            let room = (width - 8).saturating_sub(at.chars().count() + 8);
            at += &format!(
                "  offsets {}",
                places_text(&g.places, g.frames_dropped, room)
            );
        }
        let at = at.trim_start();
        if !at.is_empty() {
            writeln!(out, "        {}", fit(at, width - 8))?;
        }
        let message = match g.messages_differ {
            true => format!("e.g. {}", g.message),
            false => g.message.clone(),
        };
        for line in wrap(&sanitize(&message), width - 8, 3) {
            writeln!(out, "        {line}")?;
        }
    }
    let mut meanings: Vec<Rule> = Vec::new();
    for g in groups {
        if g.rule.meaning().is_some() && !meanings.contains(&g.rule) {
            meanings.push(g.rule);
        }
    }
    if !meanings.is_empty() {
        writeln!(out, "what these usually mean:")?;
        for rule in meanings {
            let text = format!("{}: {}", rule.id(), rule.meaning().unwrap_or_default());
            for (i, line) in wrap(&text, width - 4, 6).iter().enumerate() {
                let indent = if i == 0 { "  " } else { "    " };
                writeln!(out, "{indent}{line}")?;
            }
        }
    }
    Ok(())
}

/// `0x01c2, 0x0371, …`: as many places as `room` holds, and `…` for the
/// rest (or for places not kept).
fn places_text(places: &BTreeSet<u64>, dropped: bool, room: usize) -> String {
    let mut text = String::new();
    for (i, p) in places.iter().enumerate() {
        let next = format!("{}0x{p:04x}", if i == 0 { "" } else { ", " });
        if text.chars().count() + next.len() + 3 > room && i > 0 {
            return text + ", …";
        }
        text += &next;
    }
    if dropped {
        text += ", …";
    }
    text
}

fn times(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `"text"`, cut with `…` past `most` characters.
fn quote_short(s: &str, most: usize) -> String {
    let cut: String = s.chars().take(most).collect();
    match cut.len() < s.len() {
        true => format!("{:?}…", cut),
        false => format!("{s:?}"),
    }
}

/// `16:24:04.449 → 16:24:19.450 (15.0 s)`, with the date when the span crosses one.
fn span_text(a: f64, b: f64) -> String {
    let text = |t: f64| utc_micros((t * 1e6).round().max(0.0) as u64).unwrap_or_else(|| "-".into());
    let (ta, tb) = (text(a), text(b));
    // 2026-12-01T16:24:04.449946Z: the date, then the time to the millisecond.
    let clock = |s: &str| s.get(11..23).unwrap_or(s).to_string();
    let day = |s: &str| s.get(..10).unwrap_or("").to_string();
    if b <= a {
        return format!("{} {}", day(&ta), clock(&ta));
    }
    let end = if day(&ta) == day(&tb) {
        clock(&tb)
    } else {
        format!("{} {}", day(&tb), clock(&tb))
    };
    format!(
        "{} {} → {end} ({})",
        day(&ta),
        clock(&ta),
        duration_text(b - a)
    )
}

/// A line cut to `width` characters, ending in `…` when cut.
fn fit(line: &str, width: usize) -> String {
    if line.chars().count() <= width {
        return line.to_string();
    }
    let mut cut: String = line.chars().take(width - 1).collect();
    cut.push('…');
    cut
}

/// Words wrapped into lines of at most `width` characters, at most `lines` of them.
fn wrap(text: &str, width: usize, lines: usize) -> Vec<String> {
    let mut out = crate::text::wrap::break_words(text, width, width);
    if out.len() > lines {
        out.truncate(lines);
        if let Some(last) = out.last_mut() {
            *last = fit(&format!("{last} …"), width);
        }
    }
    out.into_iter().map(|l| fit(&l, width)).collect()
}

/// The closing line: how many frames were checked and what was found.
pub fn summary(frames: usize, tally: &Tally) -> String {
    summary_of(frames, ("frame", "frames"), tally)
}

/// [`summary`] of `n` of what `unit` names (one, many): frames, batches.
pub fn summary_of(n: usize, unit: (&str, &str), tally: &Tally) -> String {
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    format!(
        "{} checked: {}, {}, {}",
        plural(n, unit.0, unit.1),
        plural(tally.errors, "error", "errors"),
        plural(tally.warnings, "warning", "warnings"),
        plural(tally.notes, "note", "notes")
    )
}

/// The rules as a table (`kwire check --rules`), each rule's description
/// wrapped to fit `columns` (`None`: one line a rule) under its column.
pub fn rules_text(columns: Option<usize>) -> String {
    const DESCRIPTION_AT: usize = 26 + 1 + 8 + 1;
    let mut s = String::new();
    for (_, id, sev, what) in Rule::ALL {
        s += &format!("{id:<26} {:<8} ", sev.as_str());
        let room = columns.map_or(usize::MAX, |c| c.saturating_sub(DESCRIPTION_AT).max(20));
        let lines = crate::text::wrap::break_words(what, room, room);
        s += &lines.join(&format!("\n{:DESCRIPTION_AT$}", ""));
        s += "\n";
    }
    s
}

pub fn rules_json() -> Json {
    Json::Array(
        Rule::ALL
            .iter()
            .map(|(rule, id, sev, what)| {
                json!({"rule": id, "severity": sev.as_str(), "checks": what, "means": rule.meaning()})
            })
            .collect(),
    )
}
