//! `kwire check`: every frame of a capture held against the protocol, one
//! finding per problem. What one frame's bytes break comes from the decoder's
//! typed problems (`ErrorKind`, `WarningKind`, record damage) and from
//! [`crate::decode::records::order`]; what only the conversation shows (versions the
//! broker advertised on the connection, correlation ids reused in flight,
//! responses without requests, requests never answered) is tracked here per
//! connection. Each finding names its rule; rules have a fixed severity.

use super::diagnosis::Diagnosis;
use super::finding::{Finding, Rule};
use super::inventory::{ApiVersionsReader, Range};
use crate::capture::awaiting::Awaiting;
use crate::capture::{CapturedFrame, Skipped};
use crate::decode::records::deferred::check_deferred;
use crate::decode::tape::Val;
use crate::decode::{decode_frame_reusing, DecodeError, DecodeOptions, Direction, Frame, Kind};
use crate::protocol::headers::API_VERSIONS_KEY;
use crate::protocol::headers::PRODUCE_KEY;
use crate::schema::model::FieldMeaning;
use crate::schema::{Catalogue, MessageKind};
use std::collections::{BTreeMap, HashMap};

/// Where a finding is: the frame's identity, copied into each of its findings.
#[derive(Clone, Copy, Default)]
struct At {
    frame: Option<usize>,
    time: Option<f64>,
    conn: Option<usize>,
    direction: Option<Direction>,
    api_key: Option<i16>,
    api_version: Option<i16>,
    correlation_id: Option<i32>,
}

impl At {
    fn of(f: &CapturedFrame) -> At {
        At {
            frame: Some(f.index),
            time: Some(f.timestamp),
            conn: Some(f.conn),
            direction: Some(f.direction),
            api_key: f.api_key,
            api_version: f.api_version,
            correlation_id: f.correlation_id,
        }
    }

    fn finding(&self, rule: Rule, offset: Option<usize>, message: String) -> Finding {
        Finding {
            frame: self.frame,
            time: self.time,
            conn: self.conn,
            direction: self.direction,
            api_key: self.api_key,
            api_version: self.api_version,
            correlation_id: self.correlation_id,
            offset: offset.map(|o| o as u64),
            rule,
            message,
            frames: self.frame.into_iter().collect(),
            until: None,
            count: 1,
            client_id: None,
        }
    }
}

/// A request awaiting its response.
struct InFlight {
    at: At,
    expects_response: bool,
}

#[derive(Default)]
struct Conn {
    /// The ranges the broker's last ApiVersions response on this connection advertised.
    advertised: Option<BTreeMap<i16, Range>>,
    /// Requests awaiting a response, by correlation id, as the capture
    /// layer pairs them.
    in_flight: Awaiting<i32, InFlight>,
}

/// Checks a capture frame by frame, keeping what each connection said.
pub(crate) struct Checker<'c> {
    cat: &'c Catalogue,
    opts: DecodeOptions,
    conns: HashMap<usize, Conn>,
    api_versions: ApiVersionsReader,
    /// What only the conversation shows (`analysis::diagnosis`).
    diagnosis: Diagnosis<'c>,
    /// Frames decoded and checked.
    pub frames: usize,
    /// The last frame checked, its tape kept for the next.
    scratch: Option<Frame>,
}

impl<'c> Checker<'c> {
    /// `opts` carries the release pin and the input's budget.
    pub fn new(cat: &'c Catalogue, opts: DecodeOptions) -> Self {
        let diagnosis = Diagnosis::new(cat, opts.release.as_deref());
        Checker {
            cat,
            // Record batches are read for their findings, not built into
            // nodes; a large records field a batch at a time, so that a
            // frame of 400,000 records is not held as one tape.
            opts: DecodeOptions {
                findings_only: true,
                defer_records_over: Some(crate::decode::frame::DEFER_RECORDS_OVER),
                ..opts
            },
            conns: HashMap::new(),
            api_versions: ApiVersionsReader::default(),
            diagnosis,
            frames: 0,
            scratch: None,
        }
    }

    /// Check one frame of a capture, in capture order.
    pub fn frame(&mut self, f: &CapturedFrame, out: &mut Vec<Finding>) {
        // A SASL token after SaslHandshake v0 has no Kafka header to check.
        if f.kind != crate::decode::FrameKind::Kafka {
            return;
        }
        // The conversation's findings first (it learns the connection's
        // client from its first request), listed after the frame's own.
        let mut diagnosed = Vec::new();
        self.diagnosis.frame(f, &mut diagnosed);
        let first = out.len();
        let at = At::of(f);
        match f.direction {
            Direction::Request => self.request(f, at, out),
            Direction::Response => self.response(f, at, out),
        }
        out[first..].iter_mut().for_each(|f| self.name_client(f));
        out.append(&mut diagnosed);
    }

    /// A connection opened or closed.
    pub(crate) fn conn_event(&mut self, e: &crate::capture::ConnEvent, out: &mut Vec<Finding>) {
        self.diagnosis.conn_event(e, out);
    }

    /// Whatever the capture hands on, in capture order.
    pub fn take(&mut self, c: &crate::capture::Captured, out: &mut Vec<Finding>) {
        use crate::capture::Captured;
        match c {
            Captured::Frame(f) => self.frame(f, out),
            Captured::Skipped(s) => self.skipped(s, out),
            Captured::Tls(n) => self.tls(n, out),
            Captured::Conn(e) => self.conn_event(e, out),
        }
    }

    fn request(&mut self, f: &CapturedFrame, at: At, out: &mut Vec<Finding>) {
        let conn = self.conns.entry(f.conn).or_default();
        if let (Some(k), Some(v)) = (f.api_key, f.api_version) {
            if let Some(c) = f
                .correlation_id
                .and_then(|c| conn.in_flight.get(&c).map(|p| (c, p)))
            {
                let (id, p) = c;
                out.push(at.finding(
                    Rule::CorrelationReuse,
                    Some(8),
                    format!("correlation id {id} is in use by frame #{} ({}), which awaits its response", p.at.frame.unwrap_or_default(), api_text(self.cat, p.at.api_key, p.at.api_version)),
                ));
            }
            // A client asks ApiVersions before it knows the ranges.
            if let Some(ranges) = conn.advertised.as_ref().filter(|_| k != API_VERSIONS_KEY) {
                let api = api_text(self.cat, Some(k), None);
                match ranges.get(&k) {
                    None => out.push(at.finding(Rule::NotAdvertised, Some(4), format!("the broker advertised no versions of {api} on this connection"))),
                    Some(&(lo, hi)) if v < lo || v > hi => out.push(at.finding(
                        Rule::NotAdvertised,
                        Some(6),
                        format!("{api} v{v} is outside v{lo}-v{hi}, the range the broker advertised on this connection"),
                    )),
                    Some(_) => {}
                }
            }
        }
        let opts = DecodeOptions {
            direction: Some(Direction::Request),
            ..self.opts.clone()
        };
        let frame = decode_frame_reusing(self.cat, f.bytes.clone(), &opts, &mut self.scratch);
        check_deferred(self.cat, frame, &opts.budget);
        self.frames += 1;
        let expects_response = !acks_zero(self.cat, frame, self.opts.release.as_deref());
        frame_findings(frame, &at, out);
        // The capture layer only pairs requests whose header it read.
        if let (Some(_), Some(c)) = (f.api_key, f.correlation_id) {
            let conn = self.conns.entry(f.conn).or_default();
            conn.in_flight.insert(
                c,
                InFlight {
                    at,
                    expects_response,
                },
            );
        }
    }

    fn response(&mut self, f: &CapturedFrame, at: At, out: &mut Vec<Finding>) {
        let conn = self.conns.entry(f.conn).or_default();
        let paired = f.correlation_id.and_then(|c| conn.in_flight.take(&c));
        // Every frame counts as checked, this one too: its finding is that it pairs with no request.
        self.frames += 1;
        // A second answer is read as the first one's API, so it is checked too.
        if let (Some(first), Some(c)) = (f.repeats, f.correlation_id) {
            out.push(at.finding(
                Rule::DuplicateResponse,
                Some(4),
                format!("a second response with correlation id {c}: frame #{first} answered its request ({}) already", api_text(self.cat, f.api_key, f.api_version)),
            ));
        }
        if let Some(p) = paired.as_ref().filter(|p| !p.expects_response) {
            out.push(at.finding(
                Rule::AnsweredAcksZero,
                Some(4),
                format!("an answer to frame #{}, a Produce request sent with acks=0, which expects none", p.at.frame.unwrap_or_default()),
            ));
        }
        let known = paired.is_some() || f.repeats.is_some();
        let (Some(k), Some(v), true) = (f.api_key, f.api_version, known) else {
            out.push(at.finding(
                Rule::UnmatchedResponse,
                None,
                match f.correlation_id {
                    Some(c) => format!("no request with correlation id {c} on this connection in the capture; not decoded (a response does not name its API)"),
                    None => "a response too short for a correlation id".into(),
                },
            ));
            return;
        };
        let opts = DecodeOptions {
            direction: Some(Direction::Response),
            api_key: Some(k),
            api_version: Some(v),
            ..self.opts.clone()
        };
        let frame = decode_frame_reusing(self.cat, f.bytes.clone(), &opts, &mut self.scratch);
        check_deferred(self.cat, frame, &opts.budget);
        frame_findings(frame, &at, out);
        if k == API_VERSIONS_KEY {
            if let Some(ranges) =
                self.api_versions
                    .response(self.cat, self.opts.release.as_deref(), f, v)
            {
                self.conns.entry(f.conn).or_default().advertised = Some(ranges);
            }
        }
    }

    /// A TLS connection not decrypted, or a direction whose decryption stopped.
    pub fn tls(&mut self, n: &crate::capture::tls::TlsNote, out: &mut Vec<Finding>) {
        use crate::capture::tls::{NotDecrypted, TlsEvent};
        let mut at = At {
            time: Some(n.timestamp),
            conn: Some(n.conn),
            ..At::default()
        };
        match &n.event {
            TlsEvent::Session(s) => {
                if let Err(why) = s.decryption {
                    let rule = match why {
                        NotDecrypted::KeysDidNotOpen => Rule::TlsKeysWrong,
                        _ => Rule::TlsNotDecrypted,
                    };
                    out.push(at.finding(
                        rule,
                        None,
                        format!("TLS connection not decrypted: {}", why.describe()),
                    ));
                }
            }
            TlsEvent::Skipped {
                direction,
                offset,
                problem,
                lost,
            } => {
                at.direction = Some(*direction);
                let mut f = at.finding(
                    Rule::TlsRecordSkipped,
                    None,
                    format!(
                        "{} (up to {lost} bytes of plaintext lost)",
                        problem.describe()
                    ),
                );
                f.offset = Some(*offset);
                out.push(f);
            }
            TlsEvent::Stopped {
                direction,
                offset,
                problem,
            } => {
                at.direction = Some(*direction);
                let mut f = at.finding(Rule::TlsStopped, None, problem.describe());
                f.offset = Some(*offset);
                out.push(f);
            }
        }
    }

    /// Bytes of a stream in no frame.
    pub fn skipped(&mut self, s: &Skipped, out: &mut Vec<Finding>) {
        let at = At {
            time: Some(s.timestamp),
            conn: Some(s.conn),
            direction: Some(s.direction),
            ..At::default()
        };
        let mut f = at.finding(
            Rule::SkippedBytes,
            None,
            format!("{} bytes in no frame: {}", s.bytes, s.reason.describe()),
        );
        f.offset = Some(s.offset);
        out.push(f);
    }

    /// The capture ended: the conversation rules' last findings, then
    /// requests still awaiting a response, in capture order (those a close
    /// cut are `closed-unanswered` findings already).
    pub fn finish(&mut self, out: &mut Vec<Finding>) {
        self.diagnosis.finish(out);
        let mut left: Vec<At> = self
            .conns
            .values_mut()
            .flat_map(|c| c.in_flight.drain())
            .filter(|(_, p)| p.expects_response)
            .map(|(_, p)| p.at)
            .filter(|at| at.frame.is_none_or(|i| !self.diagnosis.reported_lost(i)))
            .collect();
        left.sort_by_key(|a| a.frame);
        for at in left {
            let closed = at.conn.and_then(|c| self.diagnosis.closed(c));
            let message = match closed {
                Some((how, when)) => format!(
                    "no response: the {} closed the connection ({}) {} after this request, as a client stopping does",
                    how.side().as_str(),
                    how.flag(),
                    crate::analysis::diagnosis::duration_text((when - at.time.unwrap_or(when)).max(0.0))
                ),
                None => "no response by the end of the capture".into(),
            };
            let mut found = at.finding(Rule::Unanswered, None, message);
            self.name_client(&mut found);
            out.push(found);
        }
    }

    /// A frame's finding names the client its connection's requests name.
    fn name_client(&self, f: &mut Finding) {
        if let (None, Some(conn)) = (&f.client_id, f.conn) {
            f.client_id = self.diagnosis.client_id(conn);
        }
    }
}

/// Findings of one frame on its own: where its decoding stopped, its
/// warnings, its record damage and, last, its record batches' offsets and
/// sequences (among its warnings: the record walk checks them as it goes).
fn frame_findings(frame: &Frame, at: &At, out: &mut Vec<Finding>) {
    if let Some(e) = &frame.error {
        out.push(error_finding(at, e, false));
    }
    let warning = |w: &crate::decode::Warning| {
        Rule::of_warning(w.kind).map(|rule| at.finding(rule, w.offset, w.detail().to_string()))
    };
    let of_order =
        |w: &&crate::decode::Warning| crate::decode::records::order::KINDS.contains(&w.kind);
    out.extend(
        frame
            .warnings
            .iter()
            .filter(|w| !of_order(w))
            .filter_map(warning),
    );
    for e in &frame.record_damage {
        out.push(error_finding(at, e, true));
    }
    out.extend(frame.warnings.iter().filter(of_order).filter_map(warning));
}

fn error_finding(at: &At, e: &DecodeError, in_records: bool) -> Finding {
    at.finding(
        Rule::of_error(e.kind, in_records),
        Some(e.offset),
        format!("expected {}", e.expected),
    )
}

/// Findings of the frames of a file of frames (hex or binary): frames are
/// numbered from 0, as `decode` and `capture --list` number them, and have
/// no connection or time.
pub fn check_frames(frames: &[Frame], out: &mut Vec<Finding>) {
    for (i, frame) in frames.iter().enumerate() {
        let at = At {
            frame: Some(i),
            direction: Some(frame.direction),
            api_key: frame.api_key,
            api_version: frame.api_version,
            correlation_id: correlation_id(frame),
            ..At::default()
        };
        frame_findings(frame, &at, out);
    }
}

/// What a check of a file of record batches read.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SegmentChecked {
    /// Batches (and legacy messages) read.
    pub batches: usize,
    /// Bytes were left unchecked: the file ends inside a batch, or a batch
    /// declares more than is read whole.
    pub unread: bool,
    /// The highest offset a batch's header says it holds.
    pub last_offset: Option<i64>,
}

/// Findings of a log segment, snapshot or any file of record batches, read
/// a batch at a time (`ctx`: its topic and budget): each batch's damage and
/// warnings, and its offsets and sequences against the batch before, as
/// one log's (the first against `base_offset`, the segment's base offset
/// its file name gives, when it has one), handed to `write` a batch at a time (it takes them). A
/// finding has no frame: its offset is where it is in the file, and its
/// message names the batch and where the batch starts.
pub fn check_segment(
    cat: &Catalogue,
    ctx: &crate::decode::context::Context,
    base_offset: Option<i64>,
    input: impl std::io::Read,
    write: &mut dyn FnMut(&mut Vec<Finding>) -> std::io::Result<()>,
) -> std::io::Result<SegmentChecked> {
    use crate::decode::records::order::KINDS as ORDER;
    use crate::decode::records::segment::{for_each_batch, SegmentEnd, MAX_BATCH};
    let mut checked = SegmentChecked::default();
    // Each batch's findings, handed to `write` once it is read.
    let mut out = Vec::new();
    let end = for_each_batch(cat, ctx, input, |b| {
        let batches = b
            .nodes
            .iter()
            .filter(|n| n.role == crate::decode::Role::Element);
        checked.batches += batches.clone().count();
        checked.last_offset = checked.last_offset.max(b.last_offset);
        let name = batches.map(|n| n.name.to_string()).next();
        let name = name.unwrap_or_else(|| "bytes".into());
        let at = |rule, offset: usize, text: &str| {
            let message = format!("{name} at 0x{:04x}: {text}", b.position);
            At::default().finding(rule, Some(offset), message)
        };
        let warning = |w: &crate::decode::Warning| {
            let offset = b.position + w.offset.unwrap_or_default();
            Rule::of_warning(w.kind).map(|rule| at(rule, offset, w.detail()))
        };
        // A segment is named after the first offset it may hold.
        if let (Some(base), Some(first), 0) = (base_offset, b.first_offset, b.position) {
            if first < base {
                let text = format!("its first offset {first} is below {base}, the base offset the segment's file name gives");
                out.push(at(Rule::OffsetsBackwards, 0, &text));
            }
        }
        let (order, other): (Vec<_>, Vec<_>) =
            b.warnings.iter().partition(|w| ORDER.contains(&w.kind));
        out.extend(other.into_iter().filter_map(warning));
        for e in &b.damage {
            let text = format!("expected {}", e.expected);
            out.push(at(Rule::of_error(e.kind, true), e.offset, &text));
        }
        out.extend(order.into_iter().filter_map(warning));
        // A file copied while its last batch was written ends inside it:
        // bytes no batch holds whole, as a capture's partial frame.
        for cut in b.nodes.iter().filter(|n| n.kind == Kind::TruncatedBatch) {
            checked.unread = true;
            let message = format!(
                "the file ends inside a batch at 0x{:04x}: {} bytes of it present",
                cut.offset, cut.len
            );
            out.push(At::default().finding(Rule::SkippedBytes, Some(cut.offset), message));
        }
        write(&mut out)?;
        Ok(true)
    })?;
    if let SegmentEnd::TooLarge {
        position, declared, ..
    } = end
    {
        checked.unread = true;
        let (rule, why) = match declared < 0 {
            true => (Rule::BatchLength, "a batch length below 0".to_string()),
            false => (
                Rule::NotChecked,
                format!("more than the {MAX_BATCH} bytes a batch is read whole within"),
            ),
        };
        let message = format!(
            "the batch at 0x{position:04x} declares {declared} bytes, {why}: the rest of the file is not checked"
        );
        out.push(At::default().finding(rule, Some(position + 8), message));
        write(&mut out)?;
    }
    Ok(checked)
}

/// Findings of a partition's directory of log segments: each segment (a
/// file named after its base offset, `00000000000000000100.log`, in offset
/// order) checked as [`check_segment`] checks one, its messages led by its
/// file's name, and each against the segment before: a segment starts past
/// every offset the one before holds. Other files (indexes, snapshots,
/// checkpoints) are not read. `None` when the directory holds no segment.
pub fn check_log_dir(
    cat: &Catalogue,
    ctx: &crate::decode::context::Context,
    dir: &std::path::Path,
    write: &mut dyn FnMut(&mut Vec<Finding>) -> std::io::Result<()>,
) -> std::io::Result<Option<SegmentChecked>> {
    use crate::decode::records::segment::base_offset_of_log_name;
    let mut segments: Vec<(i64, std::path::PathBuf)> = std::fs::read_dir(dir)?
        .filter_map(|e| {
            let path = e.ok()?.path();
            let base = base_offset_of_log_name(path.to_str()?)?;
            Some((base, path))
        })
        .collect();
    if segments.is_empty() {
        return Ok(None);
    }
    segments.sort();
    let mut all = SegmentChecked::default();
    let mut before: Option<(String, i64)> = None;
    for (base, path) in segments {
        let name = path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        if let Some((prev, last)) = before.as_ref().filter(|(_, last)| base <= *last) {
            let message = format!(
                "{name}: its base offset {base} is not past {last}, the last offset {prev} holds"
            );
            write(&mut vec![At::default().finding(
                Rule::OffsetsBackwards,
                Some(0),
                message,
            )])?;
        }
        let file = std::io::BufReader::new(std::fs::File::open(&path)?);
        let mut named = |found: &mut Vec<Finding>| {
            for f in found.iter_mut() {
                f.message = format!("{name}: {}", f.message);
            }
            write(found)
        };
        let checked = check_segment(cat, ctx, Some(base), file, &mut named)?;
        all.batches += checked.batches;
        all.unread |= checked.unread;
        all.last_offset = all.last_offset.max(checked.last_offset);
        if let Some(last) = checked.last_offset {
            before = Some((name, last));
        }
    }
    Ok(Some(all))
}

/// The correlation id a decoded frame's header holds (bytes 8..12 of a request, 4..8 of a response).
fn correlation_id(frame: &Frame) -> Option<i32> {
    let at = match frame.direction {
        Direction::Request => 8,
        Direction::Response => 4,
    };
    let b = frame.bytes.get(at..at + 4)?;
    Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
}

/// Whether a decoded Produce request says acks=0: its broker sends no response.
fn acks_zero(cat: &Catalogue, frame: &Frame, pin: Option<&str>) -> bool {
    let (Some(PRODUCE_KEY), Some(v)) = (frame.api_key, frame.api_version) else {
        return false;
    };
    let Some(spec) = cat.message(MessageKind::Request, PRODUCE_KEY, v, pin) else {
        return false;
    };
    let is_acks = |decl: usize| {
        spec.fields
            .get(decl)
            .is_some_and(|f| FieldMeaning::of(f) == FieldMeaning::Acks)
    };
    // Frames read for their findings are on their tape.
    let Some(tape) = &frame.values else {
        return false;
    };
    let Some(body) = tape.body else { return false };
    tape.children(body)
        .any(|(_, s)| s.decl().is_some_and(|d| is_acks(usize::from(d))) && s.value == Val::Int(0))
}

fn api_text(cat: &Catalogue, key: Option<i16>, version: Option<i16>) -> String {
    let name = key
        .and_then(|k| cat.api_name(k).map(str::to_string))
        .unwrap_or_else(|| match key {
            Some(k) => format!("api {k}"),
            None => "?".into(),
        });
    match version {
        Some(v) => format!("{name} v{v}"),
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_one_entry_and_a_unique_id() {
        let mut ids: Vec<&str> = Rule::ALL.iter().map(|e| e.1).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), Rule::ALL.len());
        for (rule, id, sev, _) in Rule::ALL {
            assert_eq!((rule.id(), rule.severity()), (id, sev));
        }
    }
}
