//! `r`: the records of the frame shown, as a table (topic, partition,
//! offset, time, key, value, headers); Enter selects the record in the tree
//! and the grid.

use super::theme::Theme;
use crate::analysis::exchange::Topic;
use crate::analysis::records_table::{for_each_records_item, ProducedOffsets};
use crate::decode::fields::TopicIds;
use crate::decode::records::view;
use crate::decode::records::view::Payload;
use crate::decode::{Frame, Node};
use crate::protocol::meanings::utc_millis;
use crate::text::escape::sanitize;
use crate::text::uuid_text;
use crate::text::width::{cut_point, Padded};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget};
use std::collections::HashMap;

/// Longest key or value preview.
const PREVIEW: usize = 40;

/// One record of the table, and where its node is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordLine {
    pub text: String,
    pub path: Vec<usize>,
    /// The frame it is in, in the explorer's list (the whole capture's table).
    pub frame: Option<usize>,
}

/// The table and its selection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecordsList {
    pub lines: Vec<RecordLine>,
    pub selected: usize,
    pub top: usize,
    /// What the table covers: `frame #28`, or the capture and how much of it was read.
    pub of: String,
}

/// The column heads.
pub const HEADER: &str =
    "topic/partition        offset  time                      key · value · headers";

/// The records of `frame`, in order: topic ids named by `topic_ids`; a
/// produced record's offset the broker's when `produced` (its Produce
/// response's) places its partition, else `+N` within its batch.
pub fn record_lines(
    cat: &crate::schema::Catalogue,
    release: Option<&str>,
    frame: &Frame,
    topic_ids: &TopicIds,
    produced: Option<&ProducedOffsets>,
    open: &dyn Fn(&Node) -> Option<Node>,
) -> RecordsList {
    let mut lines: Vec<RecordLine> = Vec::new();
    // Each record's place among its partition's, for the broker's offset.
    let mut position = 0;
    let mut place_of_last: Option<(Option<Topic>, Option<i32>)> = None;
    let request = frame.direction == crate::decode::Direction::Request;
    let name_of = |id: &[u8; 16]| topic_ids.name(id).map(str::as_bytes);
    // A batch at a time (one held as a stub walked, listed and dropped):
    // its records, then where each one's node is under it.
    let mut found: Vec<(String, *const Node)> = Vec::new();
    for_each_records_item(
        cat,
        release,
        frame,
        topic_ids,
        open,
        &mut |topic, partition, at, item| {
            found.clear();
            view::records(std::slice::from_ref(item), &mut |r| {
                let place = (topic.cloned(), partition);
                if place_of_last.as_ref() != Some(&place) {
                    position = 0;
                    place_of_last = Some(place);
                }
                let offset = match (request, produced) {
                    (false, _) => r.offset.to_string(),
                    (true, Some(p)) => p
                        .offset((topic, partition), position, &name_of)
                        .map_or_else(|| format!("+{}", r.offset), |o| o.to_string()),
                    (true, None) => format!("+{}", r.offset),
                };
                position += 1;
                let place = format!(
                    "{}/{}",
                    topic.map_or("?".into(), topic_text),
                    partition.map_or("?".into(), |p| p.to_string())
                );
                let time = r
                    .timestamp
                    .and_then(utc_millis)
                    .unwrap_or_else(|| "-".into());
                let headers: Vec<String> = r
                    .headers
                    .iter()
                    .map(|(k, v)| format!("{}={}", preview(k), preview(v)))
                    .collect();
                let headers = if headers.is_empty() {
                    String::new()
                } else {
                    format!(" · {}", headers.join(" "))
                };
                let text = format!(
                    "{} {offset:>8}  {time:<24}  {} · {}{headers}",
                    Padded(&place, 20),
                    preview(&r.key),
                    preview(&r.value)
                );
                found.push((text, r.node as *const Node));
            });
            let mut paths: HashMap<*const Node, Vec<usize>> =
                found.iter().map(|(_, p)| (*p, Vec::new())).collect();
            let mut path = at.to_vec();
            walk(item, &mut path, &mut paths);
            lines.extend(found.drain(..).map(|(text, p)| RecordLine {
                text: sanitize(&text),
                path: paths.remove(&p).unwrap_or_default(),
                frame: None,
            }));
        },
    );
    RecordsList {
        lines,
        selected: 0,
        top: 0,
        of: String::new(),
    }
}

/// The paths (from the root: `path` is `n`'s) of the nodes `paths` asks for, under `n`.
fn walk(n: &Node, path: &mut Vec<usize>, paths: &mut HashMap<*const Node, Vec<usize>>) {
    if let Some(p) = paths.get_mut(&(n as *const Node)) {
        p.clone_from(path);
    }
    for (i, c) in n.children.iter().enumerate() {
        path.push(i);
        walk(c, path, paths);
        path.pop();
    }
}

fn topic_text(t: &Topic) -> String {
    match t {
        Topic::Name(b) => String::from_utf8_lossy(b).into_owned(),
        Topic::Id(u) => uuid_text(u),
    }
}

/// A key's, value's or header's bytes: quoted text when printable, else hex; `null`.
fn preview(p: &Payload<'_>) -> String {
    let Some(b) = p.bytes() else {
        return "null".into();
    };
    // At most PREVIEW terminal cells, then `…` when there is more.
    let cut = |s: &str| match cut_point(s.as_bytes(), false, PREVIEW) {
        (at, _) if at < s.len() => format!("{}…", &s[..at]),
        _ => s.to_string(),
    };
    match std::str::from_utf8(b) {
        Ok(t) if !t.chars().any(char::is_control) => format!("\"{}\"", cut(t)),
        _ => cut(&format!("0x{}", hex::encode(&b[..b.len().min(PREVIEW)]))),
    }
}

pub(crate) struct RecordsOverlay<'a> {
    pub list: &'a RecordsList,
    pub theme: Theme,
}

impl Widget for RecordsOverlay<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let r = super::layout::overlay(area, buf);
        let rows = usize::from(r.height.saturating_sub(3));
        let head = if self.list.lines.first().is_some_and(|l| l.frame.is_some()) {
            format!("  frame {HEADER}")
        } else {
            HEADER.to_string()
        };
        let mut lines = vec![Line::from(Span::styled(head, self.theme.label()))];
        for (i, l) in self
            .list
            .lines
            .iter()
            .enumerate()
            .skip(self.list.top)
            .take(rows)
        {
            let line = Line::from(l.text.clone());
            lines.push(self.theme.mark_selected(line, i == self.list.selected));
        }
        let title = format!(
            " records ({}) of {} · Enter selects it in the tree · Esc closes ",
            self.list.lines.len(),
            self.list.of
        );
        Paragraph::new(lines)
            .block(Block::new().borders(Borders::ALL).title(title))
            .render(r, buf);
    }
}
