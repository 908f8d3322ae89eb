//! A captured conversation sent again to another broker (`kwire replay`):
//! each client connection of the capture gets a connection of its own, its
//! requests sent in capture order (each no earlier than its time in the
//! capture, unless asked to go fast) and each answer read before the next
//! request, then compared with the captured answer
//! ([`crate::analysis::compare`]). What must change is rewritten:
//! correlation ids always; with `map`, the values the new broker hands out
//! (producer ids, member ids, generations, fetch sessions:
//! [`crate::protocol::varying::HANDED_OUT`]) replace the captured ones in
//! later requests, records data included; SASL PLAIN with the credentials
//! given (the capture's are never sent).

pub mod conversations;
mod order;
pub mod verdicts;

use super::recorder::{Event, Recorder};
use super::wire::{connect, read_frame};
use crate::analysis::compare::{differences, Difference, Ignore};
use crate::decode::{decode_frame, DecodeOptions, Direction};
use crate::encode::{encode_frame, FrameSpec};
use crate::protocol::record_batch::{
    header_field, seal, set_header_field, BATCH_HEADER_LEN, BATCH_LENGTH, LOG_OVERHEAD, MAGIC_AT,
    PRODUCER_EPOCH, PRODUCER_ID,
};
use crate::protocol::varying::HANDED_OUT;
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;
use order::Order;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Connections replayed at once at most; later ones start as earlier ones end.
pub(crate) const MAX_AT_ONCE: usize = 256;
const SASL_AUTHENTICATE_KEY: i16 = 36;

/// A captured frame: where it is in the capture, and its bytes.
#[derive(Clone, Debug)]
pub struct Captured {
    pub frame: usize,
    pub time: f64,
    pub bytes: Bytes,
}

/// A captured request and its captured answer.
#[derive(Clone, Debug)]
pub struct Request {
    pub sent: Captured,
    pub api_key: i16,
    pub version: i16,
    pub answer: Option<Captured>,
    /// A bare SASL token (after SaslHandshake v0), with its mechanism.
    pub sasl_token: Option<String>,
}

/// One client connection of the capture.
#[derive(Clone, Debug)]
pub struct Conversation {
    pub conn: usize,
    pub requests: Vec<Request>,
}

/// How one exchange went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Same,
    Differs,
    NoAnswer,
    NotSent,
    /// Answered, but there is nothing to hold the answer to: the captured
    /// answer does not decode, or kwire has no definition of it.
    NotCompared,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Same => "same",
            Verdict::Differs => "differs",
            Verdict::NoAnswer => "no-answer",
            Verdict::NotSent => "not-sent",
            Verdict::NotCompared => "not-compared",
        }
    }
}

/// One exchange replayed.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub conn: usize,
    pub api_key: i16,
    pub version: i16,
    pub request_frame: usize,
    pub response_frame: Option<usize>,
    pub verdict: Verdict,
    pub differences: Vec<Difference>,
    pub why: Option<String>,
    /// From sending the request to reading its answer.
    pub elapsed: Option<Duration>,
}

/// How the replay runs.
pub struct Options {
    pub broker: String,
    /// Wait for a connection and for each answer.
    pub timeout: Duration,
    /// Connections one after another.
    pub serial: bool,
    /// Carry handed-out values from the new broker's answers into later requests.
    pub map: bool,
    /// Send each request no earlier than its time in the capture (divided by `speed`).
    pub paced: bool,
    pub speed: f64,
    pub ignore: Ignore,
    /// SASL PLAIN credentials put in place of the capture's.
    pub sasl_plain: Option<(String, String)>,
    pub max_frame: usize,
    pub release: Option<String>,
}

/// Values learned with `map`: (field name, captured value as JSON text) → the new broker's value.
type Learned = Mutex<HashMap<(String, String), Value>>;

/// Replay every conversation; the outcomes in capture order (by connection, then request).
pub fn replay(
    cat: &Catalogue,
    conversations: &[Conversation],
    opts: &Options,
    recorder: Option<&Recorder>,
) -> Vec<Outcome> {
    let first = conversations
        .iter()
        .flat_map(|c| c.requests.first())
        .map(|r| r.sent.time)
        .fold(f64::INFINITY, f64::min);
    let run = Run {
        cat,
        opts,
        recorder,
        learned: Mutex::new(HashMap::new()),
        start: Instant::now(),
        first: if first.is_finite() { first } else { 0.0 },
        // One connection at a time cannot wait for another.
        order: (!opts.serial).then(|| Order::new(conversations)),
        order_lapsed: AtomicBool::new(false),
    };
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::new());
    let workers = if opts.serial {
        1
    } else {
        conversations.len().clamp(1, MAX_AT_ONCE)
    };
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(c) = conversations.get(i) else {
                    break;
                };
                let done = run.conversation(c, i);
                outcomes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .extend(done);
            });
        }
    });
    let mut all = outcomes.into_inner().unwrap_or_else(|e| e.into_inner());
    all.sort_by_key(|o| (o.conn, o.request_frame));
    all
}

struct Run<'a> {
    cat: &'a Catalogue,
    opts: &'a Options,
    recorder: Option<&'a Recorder>,
    learned: Learned,
    start: Instant,
    first: f64,
    order: Option<Order>,
    /// Whether a request has gone without waiting for what came before it.
    order_lapsed: AtomicBool,
}

/// Marks a conversation's exchanges done in the cross-connection order, all
/// of them at the latest when the conversation ends, however it ends.
struct Progress<'a> {
    order: Option<&'a Order>,
    conversation: usize,
    marked: usize,
    len: usize,
}

impl Progress<'_> {
    fn done_before(&mut self, request: usize) {
        if let Some(o) = self.order {
            while self.marked < request.min(self.len) {
                o.done(self.conversation, self.marked);
                self.marked += 1;
            }
        }
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        self.done_before(self.len);
    }
}

impl Run<'_> {
    fn conversation(&self, c: &Conversation, index: usize) -> Vec<Outcome> {
        let id = index as u64;
        let mut progress = Progress {
            order: self.order.as_ref(),
            conversation: index,
            marked: 0,
            len: c.requests.len(),
        };
        let mut out = Vec::with_capacity(c.requests.len());
        let outcome = |r: &Request, verdict, why: Option<String>| Outcome {
            conn: c.conn,
            api_key: r.api_key,
            version: r.version,
            request_frame: r.sent.frame,
            response_frame: r.answer.as_ref().map(|a| a.frame),
            verdict,
            differences: Vec::new(),
            why,
            elapsed: None,
        };
        if let Some(r) = c.requests.first() {
            self.wait_for(r.sent.time);
        }
        let mut stream = match connect(&self.opts.broker, self.opts.timeout) {
            Ok(s) => s,
            Err(e) => {
                // The broker answered when the replay began (else it stops
                // there): one that cannot be reached now died, and leaves
                // this connection's requests unanswered.
                let why = format!("could not connect: {e}");
                return c
                    .requests
                    .iter()
                    .map(|r| outcome(r, Verdict::NoAnswer, Some(why.clone())))
                    .collect();
            }
        };
        let _ = stream.set_read_timeout(Some(self.opts.timeout));
        let _ = stream.set_write_timeout(Some(self.opts.timeout));
        if let (Some(rec), Ok(client), Ok(server)) =
            (self.recorder, stream.local_addr(), stream.peer_addr())
        {
            rec.record(id, Event::Open { client, server });
        }
        let mut ended: Option<String> = None;
        let mut corr = 0i32;
        // Requests after the last answered one: the capture holds no answer
        // to them (it ended first, as after a long-poll Fetch, or the
        // connection closed), so there is nothing to compare with.
        let tail = c
            .requests
            .iter()
            .rposition(|r| r.answer.is_some())
            .map_or(0, |i| i + 1);
        for (i, r) in c.requests.iter().enumerate() {
            progress.done_before(i);
            if let Some(why) = &ended {
                out.push(outcome(r, Verdict::NotSent, Some(why.clone())));
                continue;
            }
            if i >= tail && expects_answer(r) {
                out.push(outcome(
                    r,
                    Verdict::NotSent,
                    Some("the capture holds no answer to it (it ends, or its connection closes, first): nothing to compare with".into()),
                ));
                continue;
            }
            if self.opts.paced {
                self.wait_for(r.sent.time);
            }
            self.wait_for_earlier_exchanges(r, c.conn);
            corr = corr.wrapping_add(1);
            let bytes = match self.outgoing(r, corr) {
                Ok(b) => b,
                Err(why) => {
                    out.push(outcome(r, Verdict::NotSent, Some(why.clone())));
                    ended = Some(format!("after a request that was not sent: {why}"));
                    continue;
                }
            };
            self.record(id, true, &bytes);
            let sent_at = Instant::now();
            if let Err(e) = stream.write_all(&bytes) {
                let why = format!("sending: {e}");
                out.push(outcome(r, Verdict::NoAnswer, Some(why.clone())));
                ended = Some(format!("the connection ended ({why})"));
                continue;
            }
            if !expects_answer(r) {
                let mut o = outcome(r, Verdict::Same, Some("no answer expected (acks=0)".into()));
                if r.answer.is_some() {
                    o.verdict = Verdict::Differs;
                }
                out.push(o);
                continue;
            }
            // Frames with other correlation ids are passed over, for at most
            // the answer's timeout: a broker that keeps sending them must not
            // hold the replay for ever.
            let give_up = Instant::now().checked_add(self.opts.timeout);
            let answer = loop {
                match read_frame(&mut stream, self.opts.max_frame) {
                    // A bare SASL token has no correlation id.
                    Ok(f) if r.sasl_token.is_some() || f.len() < 8 => break Ok(f),
                    Ok(f) if f[4..8] == corr.to_be_bytes() => break Ok(f),
                    Ok(f) => {
                        self.record(id, false, &f);
                        if give_up.is_some_and(|t| Instant::now() >= t) {
                            break Err(format!(
                                "no answer with correlation id {corr} in time (only answers to other requests)"
                            ));
                        }
                    }
                    Err(e) => break Err(e),
                }
            };
            let answer = match answer {
                Ok(f) => f,
                Err(e) => {
                    out.push(outcome(r, Verdict::NoAnswer, Some(e.clone())));
                    ended = Some(format!("the connection ended ({e})"));
                    continue;
                }
            };
            self.record(id, false, &answer);
            let mut o = self.compared(r, &answer);
            o.conn = c.conn;
            o.elapsed = Some(sent_at.elapsed());
            out.push(o);
        }
        if let Some(rec) = self.recorder {
            rec.record(id, Event::Close { by_client: true });
        }
        out
    }

    fn record(&self, id: u64, from_client: bool, bytes: &[u8]) {
        if let Some(rec) = self.recorder {
            rec.record(
                id,
                Event::Data {
                    from_client,
                    bytes: Bytes::copy_from_slice(bytes),
                },
            );
        }
    }

    /// Wait for the exchanges of other connections that the capture shows
    /// answered before this request was sent ([`order`]), at most the answer
    /// timeout; past it the request goes, stderr says so, and no request
    /// waits any more.
    fn wait_for_earlier_exchanges(&self, r: &Request, conn: usize) {
        let Some(order) = &self.order else {
            return;
        };
        // Once a wait has lapsed the order is not kept anyway; waiting on would
        // only cost a timeout a request (every worker busy with connections
        // that wait for one not yet started).
        if self.order_lapsed.load(Ordering::SeqCst) {
            return;
        }
        if !order.wait_before(r.sent.time, self.opts.timeout)
            && !self.order_lapsed.swap(true, Ordering::SeqCst)
        {
            crate::stderr_line!(
                "kwire: replay: a request of conn {conn} (frame {}) waited {} s for other connections' earlier exchanges and went on: from there the capture's order across connections may not be kept",
                r.sent.frame,
                self.opts.timeout.as_secs_f64()
            );
        }
    }

    /// Sleep until a captured time's place in the replay.
    fn wait_for(&self, time: f64) {
        if !self.opts.paced {
            return;
        }
        let offset = ((time - self.first) / self.opts.speed.max(1e-6)).max(0.0);
        let due = self.start + Duration::from_secs_f64(offset.min(1e7));
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
    }

    /// The request as sent now: our correlation id, and what must change.
    fn outgoing(&self, r: &Request, corr: i32) -> Result<Vec<u8>, String> {
        if let Some(mechanism) = &r.sasl_token {
            return match (&self.opts.sasl_plain, mechanism.as_str()) {
                (Some((user, password)), "PLAIN") => {
                    let token = plain_token(user, password);
                    let mut f = (token.len() as i32).to_be_bytes().to_vec();
                    f.extend_from_slice(&token);
                    Ok(f)
                }
                (Some(_), m) => Err(format!("SASL {m} is not replayed (PLAIN is)")),
                (None, _) => Err(
                    "the capture's credentials are never sent: give --sasl-plain USER:PASSWORD"
                        .into(),
                ),
            };
        }
        let learned = self.opts.map
            && !self
                .learned
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty();
        if learned || r.api_key == SASL_AUTHENTICATE_KEY {
            let (mut header, mut body) = contract(
                self.cat,
                self.opts.release.as_deref(),
                &r.sent.bytes,
                Direction::Request,
                (r.api_key, r.version),
            )
            .ok_or("the captured request does not decode")?;
            if r.api_key == SASL_AUTHENTICATE_KEY {
                let Some((user, password)) = &self.opts.sasl_plain else {
                    return Err(
                        "the capture's credentials are never sent: give --sasl-plain USER:PASSWORD"
                            .into(),
                    );
                };
                body.insert(
                    "AuthBytes".into(),
                    Value::from(hex::encode(plain_token(user, password))),
                );
            }
            if learned {
                let map = self.learned.lock().unwrap_or_else(|e| e.into_inner());
                substitute(&mut body, &map);
            }
            header.insert("CorrelationId".into(), Value::from(corr));
            let fs = FrameSpec {
                direction: Direction::Request,
                api_key: r.api_key,
                version: r.version,
                release: self.opts.release.as_deref(),
            };
            return encode_frame(self.cat, &fs, &header, &body).map_err(|e| {
                format!(
                    "the rewritten request does not encode: {}: {}",
                    e.path, e.message
                )
            });
        }
        let mut f = r.sent.bytes.to_vec();
        if f.len() >= 12 {
            f[8..12].copy_from_slice(&corr.to_be_bytes());
        }
        Ok(f)
    }

    /// The new answer against the captured one.
    fn compared(&self, r: &Request, answer: &[u8]) -> Outcome {
        let mut o = Outcome {
            conn: 0,
            api_key: r.api_key,
            version: r.version,
            request_frame: r.sent.frame,
            response_frame: r.answer.as_ref().map(|a| a.frame),
            verdict: Verdict::Same,
            differences: Vec::new(),
            why: None,
            elapsed: None,
        };
        if r.sasl_token.is_some() {
            return o;
        }
        let Some(captured) = &r.answer else {
            o.verdict = Verdict::Differs;
            o.why =
                Some("the capture holds no answer to this request; the new broker answered".into());
            return o;
        };
        let release = self.opts.release.as_deref();
        let api = (r.api_key, r.version);
        let (Some((_, old)), new) = (
            contract(self.cat, release, &captured.bytes, Direction::Response, api),
            contract(self.cat, release, answer, Direction::Response, api),
        ) else {
            o.verdict = Verdict::NotCompared;
            o.why = Some("the captured answer does not decode".into());
            return o;
        };
        let Some((_, new)) = new else {
            o.verdict = Verdict::Differs;
            o.why = Some("the new broker's answer does not decode".into());
            return o;
        };
        if self.opts.map {
            let mut learned = self.learned.lock().unwrap_or_else(|e| e.into_inner());
            learn(
                &Value::Object(old.clone()),
                &Value::Object(new.clone()),
                None,
                &mut learned,
            );
        }
        let Some(spec) = self
            .cat
            .message(MessageKind::Response, r.api_key, r.version, release)
        else {
            o.verdict = Verdict::NotCompared;
            o.why = Some("kwire has no definition of this response".into());
            return o;
        };
        let name = self.cat.api_name(r.api_key).unwrap_or("?");
        o.differences = differences(
            name,
            (&spec.fields, r.version),
            &old,
            &new,
            &self.opts.ignore,
        );
        if !o.differences.is_empty() {
            o.verdict = Verdict::Differs;
        }
        o
    }
}

/// Whether the broker answers this request: the capture's answered it, or
/// it is not a Produce with acks=0.
fn expects_answer(r: &Request) -> bool {
    r.answer.is_some() || super::wire::is_answered(r.api_key, r.version, &r.sent.bytes)
}

/// A frame's header and body as the contract's JSON (`None` when it does not decode).
fn contract(
    cat: &Catalogue,
    release: Option<&str>,
    frame: &[u8],
    direction: Direction,
    (api_key, version): (i16, i16),
) -> Option<(Map<String, Value>, Map<String, Value>)> {
    let opts = DecodeOptions {
        direction: Some(direction),
        api_key: Some(api_key),
        api_version: Some(version),
        release: release.map(str::to_string),
        values_only: true,
        ..Default::default()
    };
    let decoded = decode_frame(cat, Bytes::copy_from_slice(frame), 0, &opts);
    if decoded.error.is_some() {
        return None;
    }
    let mut text = Vec::new();
    crate::render::json::write_contract(&decoded, &mut text);
    let mut v: Value = serde_json::from_slice(&text).ok()?;
    let header = v.get_mut("header")?.as_object_mut().map(std::mem::take)?;
    let body = v.get_mut("body")?.as_object_mut().map(std::mem::take)?;
    Some((header, body))
}

fn plain_token(user: &str, password: &str) -> Vec<u8> {
    let mut t = vec![0u8];
    t.extend_from_slice(user.as_bytes());
    t.push(0);
    t.extend_from_slice(password.as_bytes());
    t
}

/// Note each handed-out value the new broker gave in place of the captured one.
fn learn(
    old: &Value,
    new: &Value,
    key: Option<&str>,
    learned: &mut HashMap<(String, String), Value>,
) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in a {
                if let Some(w) = b.get(k) {
                    learn(v, w, Some(k), learned);
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (v, w) in a.iter().zip(b) {
                learn(v, w, key, learned);
            }
        }
        // A placeholder (no member id yet, no fetch session, a null id) is what
        // every client sends before it is handed a value; learning it would
        // rewrite every such request to one connection's value.
        (v, w) if v != w => {
            if let Some(k) = key.filter(|k| HANDED_OUT.contains(k) && !is_placeholder(k, v)) {
                learned.insert((k.to_string(), v.to_string()), w.clone());
            }
        }
        _ => {}
    }
}

/// Values that mean "none yet" rather than one handed out: a generation or
/// an epoch of 0 is handed out (so it is learned), a fetch session of 0 is
/// no session.
fn is_placeholder(field: &str, v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Number(n) => {
            n.as_i64() == Some(-1) || (field == "SessionId" && n.as_i64() == Some(0))
        }
        Value::String(t) => {
            t.is_empty()
                || t == "AAAAAAAAAAAAAAAAAAAAAA"
                || t == "00000000-0000-0000-0000-000000000000"
        }
        _ => false,
    }
}

/// Put learned values in place of captured ones, records data included.
fn substitute(v: &mut Map<String, Value>, learned: &HashMap<(String, String), Value>) {
    for (k, x) in v.iter_mut() {
        match x {
            Value::Object(o) => substitute(o, learned),
            Value::Array(items) => {
                for i in items.iter_mut() {
                    match i {
                        Value::Object(o) => substitute(o, learned),
                        other => {
                            if let Some(n) = learned.get(&(k.clone(), other.to_string())) {
                                *other = n.clone();
                            }
                        }
                    }
                }
            }
            Value::String(s) if k == "Records" => {
                if let Some(patched) = patched_records(s, learned) {
                    *s = patched;
                }
            }
            other => {
                if let Some(n) = learned.get(&(k.clone(), other.to_string())) {
                    *other = n.clone();
                }
            }
        }
    }
}

/// Records data (hex) with each v2 batch's producer id and epoch replaced
/// by the learned ones, and its checksum made again.
fn patched_records(hex_text: &str, learned: &HashMap<(String, String), Value>) -> Option<String> {
    let mut b = hex::decode(hex_text).ok()?;
    let mut at = 0usize;
    let mut changed = false;
    while at + BATCH_HEADER_LEN <= b.len() {
        let len = header_field(&b[at..], BATCH_LENGTH)?;
        let end = at + LOG_OVERHEAD + usize::try_from(len).ok()?;
        if b[at + MAGIC_AT] != 2 || end > b.len() || end < at + BATCH_HEADER_LEN {
            break;
        }
        let batch = &mut b[at..end];
        let learned_for = |field: &str, k: usize| {
            let was = header_field(batch, k)?;
            learned.get(&(field.into(), was.to_string()))?.as_i64()
        };
        let id = learned_for("ProducerId", PRODUCER_ID);
        let epoch =
            learned_for("ProducerEpoch", PRODUCER_EPOCH).filter(|n| i16::try_from(*n).is_ok());
        if let Some(n) = id {
            set_header_field(batch, PRODUCER_ID, n);
        }
        if let Some(n) = epoch {
            set_header_field(batch, PRODUCER_EPOCH, n);
        }
        if id.is_some() || epoch.is_some() {
            seal(batch);
            changed = true;
        }
        at = end;
    }
    changed.then(|| hex::encode(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::crc32c::crc32c;
    use serde_json::json;

    /// A serial replay to `broker`, waiting a second.
    fn options(broker: String) -> Options {
        Options {
            broker,
            timeout: Duration::from_secs(1),
            serial: true,
            map: false,
            paced: false,
            speed: 1.0,
            ignore: Default::default(),
            sasl_plain: None,
            max_frame: 1 << 20,
            release: None,
        }
    }

    /// An answer whose captured counterpart does not decode cannot be held
    /// to it: `not-compared`, never `same`.
    #[test]
    fn an_answer_the_capture_cannot_decode_is_not_compared() {
        let cat = Catalogue::builtin();
        let opts = options(String::new());
        let run = Run {
            cat,
            opts: &opts,
            recorder: None,
            learned: Mutex::new(HashMap::new()),
            start: Instant::now(),
            first: 0.0,
            order: None,
            order_lapsed: AtomicBool::new(false),
        };
        let spec = |direction| crate::encode::FrameSpec {
            direction,
            api_key: 18,
            version: 3,
            release: None,
        };
        let frame = |direction| {
            Bytes::from(crate::encode::example::example_frame(cat, &spec(direction)).unwrap())
        };
        let captured = |bytes| Captured {
            frame: 1,
            time: 0.0,
            bytes,
        };
        let answer = frame(Direction::Response);
        let mut request = Request {
            sent: captured(frame(Direction::Request)),
            api_key: 18,
            version: 3,
            answer: Some(captured(answer.clone())),
            sasl_token: None,
        };
        assert_eq!(run.compared(&request, &answer).verdict, Verdict::Same);
        request.answer = Some(captured(Bytes::from_static(&[
            0, 0, 0, 5, 0, 0, 0, 1, 0xff,
        ])));
        let o = run.compared(&request, &answer);
        assert_eq!(o.verdict, Verdict::NotCompared);
        assert_eq!(
            o.why.as_deref(),
            Some("the captured answer does not decode")
        );
        assert_eq!(o.verdict.as_str(), "not-compared");
    }

    /// A broker that cannot be reached for a connection (it died after the
    /// replay began) leaves its requests unanswered: `no-answer`, which the
    /// exit status counts, not `not-sent`.
    #[test]
    fn a_connection_the_broker_refuses_is_no_answer() {
        let cat = Catalogue::builtin();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let opts = options(format!("127.0.0.1:{port}"));
        let spec = |direction| crate::encode::FrameSpec {
            direction,
            api_key: 18,
            version: 3,
            release: None,
        };
        let frame = |direction| Captured {
            frame: 0,
            time: 0.0,
            bytes: Bytes::from(
                crate::encode::example::example_frame(cat, &spec(direction)).unwrap(),
            ),
        };
        let conversation = Conversation {
            conn: 0,
            requests: vec![Request {
                sent: frame(Direction::Request),
                api_key: 18,
                version: 3,
                answer: Some(frame(Direction::Response)),
                sasl_token: None,
            }],
        };
        let out = replay(cat, &[conversation], &opts, None);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].verdict, Verdict::NoAnswer);
        assert!(out[0]
            .why
            .as_deref()
            .is_some_and(|w| w.starts_with("could not connect")));
    }

    #[test]
    fn placeholders_are_not_learned_but_handed_out_zeros_are() {
        let mut learned = HashMap::new();
        let old = serde_json::json!({"SessionId": 0, "MemberId": "", "GenerationId": 0, "ProducerId": -1});
        let new = serde_json::json!({"SessionId": 5, "MemberId": "m-1", "GenerationId": 1, "ProducerId": 9});
        learn(&old, &new, None, &mut learned);
        let keys: Vec<&str> = learned.keys().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["GenerationId"]);
    }

    #[test]
    fn learned_values_replace_captured_ones_in_records_too() {
        let mut learned = HashMap::new();
        learn(
            &json!({"ProducerId": 1000, "ProducerEpoch": 0, "ThrottleTimeMs": 0}),
            &json!({"ProducerId": 7, "ProducerEpoch": 3, "ThrottleTimeMs": 5}),
            None,
            &mut learned,
        );
        assert_eq!(learned.len(), 2, "{learned:?}");
        let mut batch = crate::protocol::record_batch::empty_batch();
        batch[43..51].copy_from_slice(&1000i64.to_be_bytes());
        batch[51..53].copy_from_slice(&0i16.to_be_bytes());
        let mut body = json!({"TransactionalId": null, "ProducerId": 1000,
            "TopicData": [{"PartitionData": [{"Records": hex::encode(&batch)}]}]});
        substitute(body.as_object_mut().unwrap(), &learned);
        assert_eq!(body["ProducerId"], 7);
        let patched = hex::decode(
            body["TopicData"][0]["PartitionData"][0]["Records"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(i64::from_be_bytes(patched[43..51].try_into().unwrap()), 7);
        assert_eq!(i16::from_be_bytes(patched[51..53].try_into().unwrap()), 3);
        let len = 12 + i32::from_be_bytes(patched[8..12].try_into().unwrap()) as usize;
        assert_eq!(
            u32::from_be_bytes(patched[17..21].try_into().unwrap()),
            crc32c(&patched[21..len]),
            "the checksum made again"
        );
    }
}
