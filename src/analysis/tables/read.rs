//! One capture read into the export's tables: four readings of the file,
//! each streaming (memory: the requests in flight, one small row per
//! connection, and the findings, never the frames).
//!
//! 1. `kwire check`'s findings: the findings table, and the rules naming each
//!    frame (the exchanges' `findings` column, and the `finding` fact).
//! 2. The exchanges, as `stats` pairs them: a row per exchange the filter
//!    selects; the connections' rows, written at the end.
//! 3. The records, as `kwire records` reads them: a row per record of the
//!    frames selected.
//! 4. The partitions of the selected exchanges, as the conversation rules
//!    read them (`analysis::diagnosis`: each side's facts by the definitions).

use super::schema::{Cell, Sink, Table};
use crate::analysis::check::Checker;
use crate::analysis::diagnosis::facts::{PartitionFacts, TopicKey};
use crate::analysis::diagnosis::{Ctx, Diagnosis, Done};
use crate::analysis::exchange::{read_capture, Exchange, Exchanges, Needs, Observer, Outcome};
use crate::analysis::filter::{Filter, RulesByFrame};
use crate::analysis::finding::{Finding, Rule};
use crate::analysis::finding_filter::note_rules;
use crate::analysis::inventory::{ApiVersionsReader, Software};
use crate::analysis::records_table::{read_capture_records, Data, Item, Options, RecordRow};
use crate::capture::{CaptureOptions, Captured, ConnEventKind, Side};
use crate::decode::{DecodeOptions, Direction};
use crate::protocol::headers::API_VERSIONS_KEY;
use crate::schema::Catalogue;
use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::net::SocketAddr;

/// What was written of one capture.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub exchanges: u64,
    pub partitions: u64,
    /// Partitions of frames past the facts' limit (`diagnosis::facts::MAX_PARTITIONS`), not rows.
    pub partitions_unread: u64,
    pub connections: u64,
    pub records: u64,
    pub findings: u64,
    /// Places where record data is damaged (not rows: `kwire records` lists them).
    pub record_damage: u64,
}

impl Counts {
    /// Another capture's counts, added to these.
    pub fn add(&mut self, c: &Counts) {
        self.exchanges += c.exchanges;
        self.partitions += c.partitions;
        self.partitions_unread += c.partitions_unread;
        self.connections += c.connections;
        self.records += c.records;
        self.findings += c.findings;
        self.record_damage += c.record_damage;
    }
}

/// How a capture is read for its tables.
pub struct Reading<'a> {
    pub cat: &'a Catalogue,
    pub release: Option<&'a str>,
    /// The `capture` column.
    pub name: &'a str,
    pub capture: CaptureOptions,
    /// Only the exchanges it selects (and their frames' records and findings,
    /// and the connections they are on); an empty filter keeps everything.
    pub filter: Filter,
}

/// Read a capture three times (`open` gives its bytes each time) into `sink`.
pub fn export_capture<R: Read>(
    r: Reading<'_>,
    mut open: impl FnMut() -> Result<R, String>,
    sink: &mut dyn Sink,
) -> Result<Counts, String> {
    let io = |e: std::io::Error| format!("writing: {e}");
    let mut counts = Counts::default();
    let (findings, rules) = read_findings(&r, open()?)?;
    let filter = match r.filter.needs_findings() {
        true => r.filter.clone().with_findings(rules.clone()),
        false => r.filter.clone(),
    };
    let everything = filter.is_empty();
    // 2: exchanges and connections.
    let needs = Needs {
        client_id: true,
        topics: true,
        errors: true,
        fields: None,
    }
    .union(filter.needs());
    let mut exchanges: Exchanges<'_, ()> = Exchanges::new(r.cat, r.release, needs);
    // Each connection's software, as its ApiVersions requests name it: the
    // exchanges after it carry it.
    let software = std::cell::RefCell::new(HashMap::new());
    let mut rows = ExchangeRows {
        r: &r,
        software: &software,
        filter: &filter,
        rules: &rules,
        selected: Selected::default(),
        sink,
        failed: None,
        written: 0,
    };
    let mut conns: BTreeMap<usize, Conn> = BTreeMap::new();
    let mut api_versions = ApiVersionsReader::default();
    read_capture(
        r.cat,
        open()?,
        &r.capture,
        (&mut exchanges, &mut rows),
        None,
        |c| {
            note_connection(&mut conns, c);
            let (Some(sw), Captured::Frame(f)) = (software_named(&mut api_versions, &r, c), c)
            else {
                return;
            };
            if let Some(conn) = conns.get_mut(&f.conn) {
                conn.software = Some(sw.clone());
            }
            software.borrow_mut().insert(f.conn, sw);
        },
    )?;
    if let Some(e) = rows.failed.take() {
        return Err(io(e));
    }
    counts.exchanges = rows.written;
    let (selected, sink) = (rows.selected, rows.sink);
    for (n, c) in conns {
        if !everything && !selected.conns.contains(&n) {
            continue;
        }
        sink.row(Table::Connections, c.cells(r.name, n))
            .map_err(io)?;
        counts.connections += 1;
    }
    // 3: records.
    let opts = Options {
        capture: r.capture.clone(),
        release: r.release.map(str::to_string),
        ..Default::default()
    };
    let mut failed = None;
    let summary = read_capture_records(r.cat, open()?, &opts, |item| match item {
        Item::Record(rec) if everything || selected.frame(rec.origin.frame) => {
            match sink.row(Table::Records, record_cells(r.cat, r.name, rec)) {
                Ok(()) => {
                    counts.records += 1;
                    true
                }
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        }
        _ => true,
    })?;
    if let Some(e) = failed {
        return Err(io(e));
    }
    counts.record_damage = summary.damage as u64;
    (counts.partitions, counts.partitions_unread) =
        write_partitions(&r, open()?, (!everything).then_some(&selected), sink)?;
    // 1's rows: the findings about the frames selected.
    for f in findings {
        let about_selected = f.frame.into_iter().chain(f.frames.iter().copied());
        if everything || about_selected.into_iter().any(|i| selected.frame(i)) {
            sink.row(Table::Findings, finding_cells(r.cat, r.name, &f))
                .map_err(io)?;
            counts.findings += 1;
        }
    }
    Ok(counts)
}

/// The APIs whose partitions the partitions table lists.
const PARTITION_APIS: [i16; 5] = [0, 1, 2, 8, 9];

/// Reading 4: a row per partition of each exchange of [`PARTITION_APIS`]
/// (of those `selected` when the filter chose some): the rows written, and
/// the partitions of frames too large to read whole.
fn write_partitions<R: Read>(
    r: &Reading<'_>,
    input: R,
    selected: Option<&Selected>,
    sink: &mut dyn Sink,
) -> Result<(u64, u64), String> {
    let mut diagnosis = Diagnosis::new(r.cat, r.release).keep_done();
    let (mut findings, mut written, mut unread) = (Vec::new(), 0u64, 0u64);
    let mut failed = None;
    let mut write = |diagnosis: &mut Diagnosis<'_>| {
        for done in diagnosis.take_done() {
            let chosen = selected.is_none_or(|s| s.frame(done.request.index));
            if !chosen || !PARTITION_APIS.contains(&done.api.0) || failed.is_some() {
                continue;
            }
            unread += done.req.partitions_unread;
            unread += done.resp.as_ref().map_or(0, |f| f.partitions_unread);
            partition_rows(r, diagnosis.ctx(), &done, &mut |cells| {
                match sink.row(Table::Partitions, cells) {
                    Ok(()) => written += 1,
                    Err(e) => failed = Some(e),
                }
                failed.is_none()
            });
        }
    };
    crate::capture::for_each_captured(r.cat, input, &r.capture, |c| {
        match c {
            Captured::Frame(f) => diagnosis.frame(&f, &mut findings),
            Captured::Conn(e) => diagnosis.conn_event(&e, &mut findings),
            Captured::Skipped(_) | Captured::Tls(_) => {}
        }
        findings.clear();
        write(&mut diagnosis);
        true
    })?;
    diagnosis.finish(&mut findings);
    write(&mut diagnosis);
    match failed {
        Some(e) => Err(format!("writing: {e}")),
        None => Ok((written, unread)),
    }
}

/// An exchange's partitions: those its request names, in order, then those
/// only its response names; each with what both sides say of it, handed to
/// `row` one at a time.
fn partition_rows(
    r: &Reading<'_>,
    ctx: &Ctx<'_>,
    done: &Done,
    row: &mut dyn FnMut(Vec<Cell>) -> bool,
) {
    type Key = (Option<TopicKey>, i32);
    let key = |p: &PartitionFacts| -> Key { (ctx.topic_key(p.topic.as_ref()), p.partition) };
    let mut sides: Vec<(
        &PartitionFacts,
        Option<&PartitionFacts>,
        Option<&PartitionFacts>,
    )> = Vec::new();
    // The request's sides not yet answered, by topic and partition, in order.
    let mut open: HashMap<Key, std::collections::VecDeque<usize>> = HashMap::new();
    for p in &done.req.partitions {
        open.entry(key(p)).or_default().push_back(sides.len());
        sides.push((p, Some(p), None));
    }
    for p in done.resp.iter().flat_map(|f| &f.partitions) {
        // A response names the group only where it answers several (OffsetFetch
        // v8 and later); otherwise the request's group is the partition's.
        let waiting = open.get_mut(&key(p));
        let same_group = |i: &usize| p.group.is_none() || sides[*i].0.group == p.group;
        let found = waiting.and_then(|w| {
            let at = w.iter().position(same_group)?;
            w.remove(at)
        });
        match found {
            Some(i) => sides[i].2 = Some(p),
            None => sides.push((p, None, Some(p))),
        }
    }
    let (key_, version) = done.api;
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    for (named, req, resp) in sides {
        let (topic, partition) = key(named);
        let group = named.group.as_deref();
        let cells = {
            let both = |get: fn(&PartitionFacts) -> Option<i64>| {
                Cell::opt_int(resp.and_then(get).or_else(|| req.and_then(get)))
            };
            let records = resp
                .and_then(|p| p.records)
                .or_else(|| req.and_then(|p| p.records));
            let batches = resp
                .filter(|p| p.records.is_some())
                .or(req)
                .map(|p| &p.batches[..])
                .unwrap_or_default();
            let mut producers: Vec<i64> = batches
                .iter()
                .filter(|b| b.has_producer())
                .map(|b| b.producer_id)
                .collect();
            producers.sort_unstable();
            producers.dedup();
            let error = resp.map(|p| p.error);
            vec![
                Cell::Text(r.name.to_string()),
                Cell::Int(done.conn as i64),
                Cell::opt_text(done.req.client_id.as_deref().map(text)),
                Cell::Int(key_.into()),
                Cell::opt_text(r.cat.api_name(key_)),
                Cell::Int(version.into()),
                Cell::Int(done.request.index as i64),
                Cell::opt_int(done.response.map(|a| a.index as i64)),
                Cell::time(done.request.time),
                Cell::opt_time(done.response.map(|a| a.time)),
                // A group named once, for every partition (OffsetFetch before v8,
                // whose request lists partitions as bare numbers).
                Cell::opt_text(group.or(done.req.str("GroupId")).map(text)),
                Cell::opt_text(topic.is_some().then(|| ctx.topic_text(topic.as_ref()))),
                Cell::Int(partition.into()),
                Cell::opt_int(error),
                Cell::opt_text(error.filter(|&c| c != 0).map(error_name)),
                Cell::opt_int(req.and_then(|p| p.fetch_offset)),
                both(|p| p.committed_offset),
                Cell::opt_int(req.and_then(|p| p.timestamp)),
                Cell::opt_int(resp.and_then(|p| p.offset)),
                Cell::opt_int(resp.and_then(|p| p.base_offset)),
                Cell::opt_int(resp.and_then(|p| p.high_watermark)),
                Cell::opt_int(resp.and_then(|p| p.last_stable_offset)),
                Cell::opt_int(resp.and_then(|p| p.log_start_offset)),
                Cell::opt_int(records.map(|(bytes, _)| bytes as i64)),
                Cell::opt_int(records.map(|(_, c)| i64::from(c.batches))),
                Cell::opt_int(
                    records
                        .filter(|(_, c)| c.legacy == 0)
                        .map(|(_, c)| c.records),
                ),
                Cell::Ints(producers),
            ]
        };
        if !row(cells) {
            return;
        }
    }
}

/// `kwire check`'s findings on the capture, and the rules naming each frame.
fn read_findings<R: Read>(
    r: &Reading<'_>,
    input: R,
) -> Result<(Vec<Finding>, RulesByFrame), String> {
    let opts = DecodeOptions {
        release: r.release.map(str::to_string),
        ..Default::default()
    };
    let mut checker = Checker::new(r.cat, opts);
    let (mut all, mut found) = (Vec::new(), Vec::new());
    crate::capture::for_each_captured(r.cat, input, &r.capture, |c| {
        checker.take(&c, &mut found);
        all.append(&mut found);
        true
    })?;
    checker.finish(&mut found);
    all.append(&mut found);
    let mut rules = RulesByFrame::default();
    all.iter().for_each(|f| note_rules(&mut rules, f));
    Ok((all, rules))
}

/// The frames and connections of the exchanges selected.
#[derive(Default)]
struct Selected {
    /// Bit `i`: frame `i`.
    frames: Vec<u64>,
    conns: std::collections::BTreeSet<usize>,
}

impl Selected {
    fn mark(&mut self, i: usize) {
        let word = i / 64;
        if self.frames.len() <= word {
            self.frames.resize(word + 1, 0);
        }
        self.frames[word] |= 1 << (i % 64);
    }

    fn frame(&self, i: usize) -> bool {
        self.frames
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
}

/// Writes a row per exchange the filter selects.
struct ExchangeRows<'r, 's> {
    r: &'r Reading<'r>,
    software: &'r std::cell::RefCell<HashMap<usize, Software>>,
    filter: &'r Filter,
    rules: &'r RulesByFrame,
    selected: Selected,
    sink: &'s mut dyn Sink,
    failed: Option<std::io::Error>,
    written: u64,
}

impl Observer for ExchangeRows<'_, '_> {
    type Mark = ();

    fn request(&mut self, _: &Exchange<'_>) {}

    fn complete(&mut self, ex: &Exchange<'_>, _: Option<()>) {
        if self.failed.is_some() || self.filter.decide(ex) != Some(true) {
            return;
        }
        for f in [ex.request, ex.response].into_iter().flatten() {
            self.selected.mark(f.index);
        }
        self.selected.conns.insert(ex.conn);
        let software = self.software.borrow().get(&ex.conn).cloned();
        let cells = exchange_cells(self.r, self.rules, ex, software.as_ref());
        match self.sink.row(Table::Exchanges, cells) {
            Ok(()) => self.written += 1,
            Err(e) => self.failed = Some(e),
        }
    }
}

fn exchange_cells(
    r: &Reading<'_>,
    rules: &RulesByFrame,
    ex: &Exchange<'_>,
    software: Option<&Software>,
) -> Vec<Cell> {
    let (api_key, api_version) = (ex.api.map(|a| a.0), ex.api.map(|a| a.1));
    let (outcome, waited) = match ex.outcome {
        Outcome::Answered { .. } | Outcome::Pending => ("answered", None),
        Outcome::Unanswered { waited_us } => ("unanswered", Some(waited_us)),
        Outcome::Unmatched => ("unmatched", None),
    };
    let mut bits = 0u64;
    for f in [ex.request, ex.response].into_iter().flatten() {
        bits |= rules.get(&f.index).copied().unwrap_or(0);
    }
    let findings = Rule::ALL
        .iter()
        .filter(|(rule, ..)| bits & (1u64 << rule.bit()) != 0)
        .map(|(rule, ..)| rule.id().to_string())
        .collect();
    let client_id = ex
        .client_id
        .and_then(|i| ex.names.client_id(i))
        .map(|b| String::from_utf8_lossy(b).into_owned());
    vec![
        Cell::Text(r.name.to_string()),
        Cell::Int(ex.conn as i64),
        Cell::Text(ex.client.to_string()),
        Cell::Text(ex.broker.to_string()),
        Cell::opt_text(client_id),
        software_cell(software, |s| &s.name),
        software_cell(software, |s| &s.version),
        Cell::opt_int(api_key),
        Cell::opt_text(api_key.and_then(|k| r.cat.api_name(k))),
        Cell::opt_int(api_version),
        Cell::opt_int(ex.correlation_id),
        Cell::opt_int(ex.request.map(|f| f.index as i64)),
        Cell::opt_int(ex.response.map(|f| f.index as i64)),
        Cell::opt_time(ex.request.map(|f| f.time)),
        Cell::opt_time(ex.response.map(|f| f.time)),
        Cell::opt_int(ex.latency_us().map(|us| us as i64)),
        Cell::Text(outcome.into()),
        Cell::opt_int(waited.map(|us| us as i64)),
        Cell::opt_int(ex.request.map(|f| f.bytes as i64)),
        Cell::opt_int(ex.response.map(|f| f.bytes as i64)),
        Cell::Ints(ex.errors.iter().map(|&c| i64::from(c)).collect()),
        Cell::opt_text(ex.errors.first().map(|&c| error_name(c))),
        Cell::Texts(
            ex.topics
                .iter()
                .filter_map(|&i| ex.names.topic(i))
                .map(|t| t.text())
                .collect(),
        ),
        Cell::Texts(findings),
    ]
}

/// A software name or version as text (lossy: it is a string on the wire).
fn software_cell(
    software: Option<&Software>,
    part: impl Fn(&Software) -> &Option<Box<[u8]>>,
) -> Cell {
    Cell::opt_text(
        software
            .and_then(|s| part(s).as_deref())
            .map(|b| String::from_utf8_lossy(b).into_owned()),
    )
}

/// The software an ApiVersions request names, when `c` is one.
fn software_named(
    reader: &mut ApiVersionsReader,
    r: &Reading<'_>,
    c: &Captured,
) -> Option<Software> {
    let Captured::Frame(f) = c else { return None };
    match (f.direction, f.api_key, f.api_version) {
        (Direction::Request, Some(API_VERSIONS_KEY), Some(v)) => {
            reader.request(r.cat, r.release, f, v)
        }
        _ => None,
    }
}

fn error_name(code: i16) -> String {
    crate::protocol::error_codes::error_name(code).map_or_else(|| code.to_string(), str::to_string)
}

/// A connection as its frames and TCP events show it.
struct Conn {
    client: SocketAddr,
    broker: SocketAddr,
    opened: bool,
    first: f64,
    last: f64,
    closed: Option<(Side, &'static str, f64)>,
    software: Option<Software>,
    requests: u64,
    responses: u64,
    request_bytes: u64,
    response_bytes: u64,
}

impl Conn {
    fn new(client: SocketAddr, broker: SocketAddr, time: f64) -> Conn {
        Conn {
            client,
            broker,
            opened: false,
            first: time,
            last: time,
            closed: None,
            software: None,
            requests: 0,
            responses: 0,
            request_bytes: 0,
            response_bytes: 0,
        }
    }

    fn cells(&self, capture: &str, n: usize) -> Vec<Cell> {
        let side = |s: Side| match s {
            Side::Client => "client",
            Side::Broker => "broker",
        };
        vec![
            Cell::Text(capture.to_string()),
            Cell::Int(n as i64),
            Cell::Text(self.client.to_string()),
            Cell::Text(self.broker.to_string()),
            software_cell(self.software.as_ref(), |s| &s.name),
            software_cell(self.software.as_ref(), |s| &s.version),
            Cell::Bool(self.opened),
            Cell::time(self.first),
            Cell::time(self.last),
            Cell::opt_text(self.closed.map(|c| side(c.0))),
            Cell::opt_text(self.closed.map(|c| c.1)),
            Cell::opt_time(self.closed.map(|c| c.2)),
            Cell::Int((self.requests + self.responses) as i64),
            Cell::Int(self.requests as i64),
            Cell::Int(self.responses as i64),
            Cell::Int(self.request_bytes as i64),
            Cell::Int(self.response_bytes as i64),
        ]
    }
}

fn note_connection(conns: &mut BTreeMap<usize, Conn>, c: &Captured) {
    match c {
        Captured::Frame(f) => {
            let (client, broker) = match f.direction {
                Direction::Request => (f.from, f.to),
                Direction::Response => (f.to, f.from),
            };
            let conn = conns
                .entry(f.conn)
                .or_insert_with(|| Conn::new(client, broker, f.timestamp));
            conn.last = conn.last.max(f.timestamp);
            match f.direction {
                Direction::Request => {
                    conn.requests += 1;
                    conn.request_bytes += f.len as u64;
                }
                Direction::Response => {
                    conn.responses += 1;
                    conn.response_bytes += f.len as u64;
                }
            }
        }
        Captured::Conn(e) => {
            let conn = conns
                .entry(e.conn)
                .or_insert_with(|| Conn::new(e.client, e.broker, e.timestamp));
            conn.last = conn.last.max(e.timestamp);
            match e.kind {
                ConnEventKind::Open => conn.opened = true,
                ConnEventKind::Fin(side) => {
                    conn.closed.get_or_insert((side, "fin", e.timestamp));
                }
                ConnEventKind::Reset(side) => {
                    conn.closed.get_or_insert((side, "rst", e.timestamp));
                }
            }
        }
        Captured::Skipped(_) | Captured::Tls(_) => {}
    }
}

/// Data's bytes and its text when valid UTF-8.
fn data_cells(d: &Data) -> (Cell, Cell) {
    match &d.bytes {
        None => (Cell::Null, Cell::Null),
        Some(b) => (
            Cell::Bytes(b.to_vec()),
            Cell::opt_text(std::str::from_utf8(b).ok()),
        ),
    }
}

fn record_cells(cat: &Catalogue, capture: &str, rec: &RecordRow) -> Vec<Cell> {
    let b = rec.batch;
    // A record's sequence: its batch's base plus the record's offset delta
    // (Kafka's rule; a batch without a producer sequence has -1).
    let sequence = b
        .and_then(|b| b.base_sequence)
        .filter(|&s| s >= 0)
        .zip(rec.offset_delta)
        // Sequences are int32 and wrap to 0 past its maximum, as Kafka's do.
        .map(|(base, delta)| ((base as i32).wrapping_add(delta as i32) & i32::MAX) as i64);
    let (key_bytes, key) = data_cells(&rec.key);
    let (value_bytes, value) = data_cells(&rec.value);
    let headers = rec
        .headers
        .iter()
        .map(|h| {
            let key = h
                .key
                .bytes
                .as_ref()
                .map(|b| String::from_utf8_lossy(b).into_owned())
                .unwrap_or_default();
            (key, h.value.bytes.as_ref().map(|b| b.to_vec()))
        })
        .collect();
    vec![
        Cell::Text(capture.to_string()),
        Cell::Int(rec.origin.frame as i64),
        Cell::time(rec.origin.time),
        Cell::Int(rec.origin.conn as i64),
        Cell::Text(rec.origin.direction.as_str().into()),
        Cell::opt_text(cat.api_name(rec.origin.api_key)),
        Cell::opt_text(rec.topic.as_ref().map(|t| t.text())),
        Cell::opt_int(rec.partition),
        Cell::Int(rec.offset),
        Cell::Bool(rec.offset_assigned),
        rec.timestamp.map_or(Cell::Null, Cell::TimeMillis),
        Cell::Bool(rec.control),
        key,
        key_bytes,
        value,
        value_bytes,
        Cell::Headers(headers),
        Cell::opt_text(b.and_then(|b| b.attributes).map(|a| codec_name(a & 0x07))),
        Cell::opt_int(b.and_then(|b| b.base_offset)),
        Cell::opt_int(b.and_then(|b| b.producer_id)),
        Cell::opt_int(b.and_then(|b| b.producer_epoch)),
        Cell::opt_int(sequence),
        b.and_then(|b| b.attributes)
            .map_or(Cell::Null, |a| Cell::Bool(a & 0x10 != 0)),
    ]
}

/// A batch's codec by the low three bits of its attributes.
fn codec_name(bits: i64) -> String {
    match bits {
        0 => "none".into(),
        1 => "gzip".into(),
        2 => "snappy".into(),
        3 => "lz4".into(),
        4 => "zstd".into(),
        n => format!("unknown ({n})"),
    }
}

fn finding_cells(cat: &Catalogue, capture: &str, f: &Finding) -> Vec<Cell> {
    vec![
        Cell::Text(capture.to_string()),
        Cell::Text(f.rule.id().into()),
        Cell::Text(f.severity().as_str().into()),
        Cell::opt_int(f.frame.map(|i| i as i64)),
        Cell::opt_time(f.time),
        Cell::opt_int(f.conn.map(|c| c as i64)),
        Cell::opt_int(f.api_key),
        Cell::opt_text(f.api_key.and_then(|k| cat.api_name(k))),
        Cell::opt_int(f.api_version),
        Cell::opt_int(f.correlation_id),
        Cell::Text(f.message.clone()),
        Cell::Ints(f.frames.iter().map(|&i| i as i64).collect()),
        Cell::Int(f.count as i64),
        Cell::opt_text(f.client_id.clone()),
    ]
}
