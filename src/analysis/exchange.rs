//! Exchanges: every request of a capture with its response, as the capture
//! layer pairs them (per connection, by correlation id), and the facts that
//! grouping and selection need: times, latency, sizes, the client id, the
//! topics named and the error codes answered.
//!
//! Facts are read from the values-only tape (`decode::values`), one tape
//! reused for every frame, and the definitions say which slot is which: a
//! slot's declaration index picks its field spec, and the spec says whether
//! it is an error code, a topic name or a topic id. Bodies are decoded only
//! when a fact is asked for and the message at that version has a field
//! holding one; record data stays a range of the frame (nothing is checked or
//! decompressed, so no budget is drawn on).
//!
//! Memory: the requests awaiting a response (facts only, or whatever mark an
//! [`Observer`] keeps with them) and the names seen (client ids, topics),
//! never the frames themselves.

use super::expr::compile::Expr;
use super::expr::fields::{self, MessageTests, Passed};
use crate::budget::Budget;
use crate::capture::awaiting::Awaiting;
use crate::capture::CapturedFrame;
use crate::decode::fields::TopicIds;
use crate::decode::tape::{Id, Val, Values};
use crate::decode::values::{self};
use crate::decode::Direction;
use crate::protocol::headers::{request_header_version, response_header_version, API_VERSIONS_KEY};
use crate::schema::model::{FieldMeaning, FieldSpec, FieldType, Primitive};
use crate::schema::{Catalogue, MessageKind};
use crate::text::{kafka_uuid_text, uuid_text};
use foldhash::{HashMap, HashMapExt};
use std::mem::take;
use std::net::SocketAddr;
use std::sync::Arc;

/// Which facts to read from the frames; what the capture layer knows (times,
/// sizes, api, connection) is always there.
#[derive(Clone, Debug, Default)]
pub struct Needs {
    /// The client id from each request's header.
    pub client_id: bool,
    /// The topics each request and response names.
    pub topics: bool,
    /// The non-zero error codes of each response.
    pub errors: bool,
    /// The expression whose field tests each frame is put to ([`Tested`]).
    pub fields: Option<Arc<Expr>>,
}

impl Needs {
    pub fn union(self, other: Needs) -> Needs {
        Needs {
            client_id: self.client_id || other.client_id,
            topics: self.topics || other.topics,
            errors: self.errors || other.errors,
            // One filter's expression at most is ever asked for: the
            // field tests come from the selection, never from a view.
            fields: self.fields.or(other.fields),
        }
    }
}

/// One frame of an exchange: its number in the capture (as `--list` shows it),
/// the time of the packet that completed it, and its length with size prefix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameAt {
    pub index: usize,
    pub time: f64,
    pub bytes: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A request whose response has not come (yet): what [`Observer::request`] sees.
    Pending,
    /// Latency: the response's time minus the request's, in microseconds
    /// (0 when the capture has the response's packet earlier).
    Answered { latency_us: u64 },
    /// No response came before the capture ended, or before another request on
    /// the connection reused its correlation id; it waited from its own time
    /// to that moment.
    Unanswered { waited_us: u64 },
    /// A response whose request is not in the capture: its API is not known.
    Unmatched,
}

/// A request and its response, or one of them alone.
#[derive(Clone, Copy, Debug)]
pub struct Exchange<'a> {
    pub conn: usize,
    /// The side sending requests, and the broker's.
    pub client: SocketAddr,
    pub broker: SocketAddr,
    pub correlation_id: Option<i32>,
    /// API key and version; `None` for a response without its request.
    pub api: Option<(i16, i16)>,
    pub request: Option<FrameAt>,
    pub response: Option<FrameAt>,
    pub outcome: Outcome,
    /// The request's client id as an index into [`Names`], when asked for
    /// ([`Needs::client_id`]) and there is a request.
    pub client_id: Option<u32>,
    /// The topics the request (and the response, once it came) names, as
    /// indexes into [`Names`], ascending, each once ([`Needs::topics`]).
    pub topics: &'a [u32],
    /// The response's non-zero error codes, ascending, each once ([`Needs::errors`]).
    pub errors: &'a [i16],
    pub names: &'a Names,
    /// The field tests its frames passed ([`Needs::fields`]).
    pub tested: Tested,
}

/// The field tests of a filter an exchange's frames passed, a bit per test.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tested {
    pub request: Passed,
    pub response: Passed,
    /// The tests a response of the request's API and version could pass.
    pub response_may: Passed,
}

impl Exchange<'_> {
    /// The latency of an answered exchange.
    pub fn latency_us(&self) -> Option<u64> {
        match self.outcome {
            Outcome::Answered { latency_us } => Some(latency_us),
            _ => None,
        }
    }

    /// The frames of the capture this exchange holds.
    pub fn frames(&self) -> u64 {
        u64::from(self.request.is_some()) + u64::from(self.response.is_some())
    }
}

/// A topic as frames name it: by name, or by id when the capture never tied
/// the id to a name before.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Topic {
    /// The name's bytes as on the wire (not checked as UTF-8).
    Name(Box<[u8]>),
    Id([u8; 16]),
}

impl Topic {
    /// The name (invalid UTF-8 replaced), or the id as a hyphenated uuid.
    pub fn text(&self) -> String {
        match self {
            Topic::Name(b) => String::from_utf8_lossy(b).into_owned(),
            Topic::Id(u) => uuid_text(u),
        }
    }

    /// Whether `wanted` names this topic: its name, or for an id the uuid
    /// hyphenated or as Kafka prints it (base64).
    pub fn is(&self, wanted: &str) -> bool {
        match self {
            Topic::Name(b) => **b == *wanted.as_bytes(),
            Topic::Id(u) => uuid_text(u) == wanted || kafka_uuid_text(u) == wanted,
        }
    }
}

/// Client ids and topics seen, each kept once: exchanges refer to them by index.
#[derive(Debug, Default)]
pub struct Names {
    clients: Vec<Option<Box<[u8]>>>,
    client_index: HashMap<Box<[u8]>, u32>,
    null_client: Option<u32>,
    topics: Vec<Topic>,
    name_index: HashMap<Box<[u8]>, u32>,
    id_index: HashMap<[u8; 16], u32>,
    /// Topic ids the capture tied to a name (a struct holding both), to the name's index.
    id_names: HashMap<[u8; 16], u32>,
    /// The same ties as the decoder takes them: the name by id.
    topic_ids: TopicIds,
}

impl Names {
    /// A client id's bytes; `None` for a null client id.
    pub fn client_id(&self, i: u32) -> Option<&[u8]> {
        self.clients.get(i as usize).and_then(|c| c.as_deref())
    }

    /// How many topics have an index so far (indexes are given in order).
    pub(crate) fn topic_count(&self) -> usize {
        self.topics.len()
    }

    pub fn topic(&self, i: u32) -> Option<&Topic> {
        self.topics.get(i as usize)
    }

    /// The name the capture tied to topic id `id` before (a struct holding
    /// both, as in a Metadata response), if it did.
    pub fn id_name(&self, id: &[u8; 16]) -> Option<&[u8]> {
        match self.topics.get(*self.id_names.get(id)? as usize)? {
            Topic::Name(name) => Some(name),
            Topic::Id(_) => None,
        }
    }

    /// The topic names tied to topic ids so far, for the decoder
    /// (`DecodeOptions::topic_ids`).
    pub fn topic_ids(&self) -> &TopicIds {
        &self.topic_ids
    }

    /// Tie topic id `id` to the topic name at index `name` (the latest tie wins).
    fn tie(&mut self, id: [u8; 16], name: u32) {
        if self.id_names.insert(id, name) != Some(name) {
            if let Some(Topic::Name(n)) = self.topics.get(name as usize) {
                self.topic_ids.insert(id, n);
            }
        }
    }

    fn intern_client(&mut self, id: Option<&[u8]>) -> u32 {
        let Some(id) = id else {
            return *self.null_client.get_or_insert_with(|| {
                self.clients.push(None);
                self.clients.len() as u32 - 1
            });
        };
        if let Some(&i) = self.client_index.get(id) {
            return i;
        }
        let i = self.clients.len() as u32;
        self.clients.push(Some(id.into()));
        self.client_index.insert(id.into(), i);
        i
    }

    fn intern_name(&mut self, name: &[u8]) -> u32 {
        if let Some(&i) = self.name_index.get(name) {
            return i;
        }
        let i = self.topics.len() as u32;
        self.topics.push(Topic::Name(name.into()));
        self.name_index.insert(name.into(), i);
        i
    }

    /// A topic named by id: its name when the capture told it before, else the id.
    fn intern_id(&mut self, id: [u8; 16]) -> u32 {
        if let Some(&i) = self.id_names.get(&id).or_else(|| self.id_index.get(&id)) {
            return i;
        }
        let i = self.topics.len() as u32;
        self.topics.push(Topic::Id(id));
        self.id_index.insert(id, i);
        i
    }
}

/// Told about every exchange as the capture goes.
pub trait Observer {
    /// What the observer keeps with a request until its exchange completes.
    type Mark;
    /// A request arrived (its outcome is [`Outcome::Pending`]).
    fn request(&mut self, ex: &Exchange<'_>) -> Self::Mark;
    /// An exchange completed: answered, unanswered (with the request's mark),
    /// or a response without a request (no mark).
    fn complete(&mut self, ex: &Exchange<'_>, mark: Option<Self::Mark>);
}

/// A request awaiting its response.
struct Pending<M> {
    conn: usize,
    api: (i16, i16),
    request: FrameAt,
    client: SocketAddr,
    broker: SocketAddr,
    client_id: Option<u32>,
    topics: Box<[u32]>,
    tested: Tested,
    mark: M,
}

/// Pairs the frames of a capture into exchanges and reads their facts.
pub struct Exchanges<'c, M> {
    cat: &'c Catalogue,
    release: Option<String>,
    needs: Needs,
    /// Requests awaiting a response, by connection and correlation id: the
    /// capture layer's pairing, mirrored (it inserts and removes on the same
    /// frames, first in first out under an id a client reused).
    pending: Awaiting<(usize, i32), Pending<M>>,
    facts: FactReader,
    /// The latest time seen: when the requests left at the end stopped waiting.
    last_time: f64,
    /// When each connection was first closed (a FIN from either side, or an
    /// RST): its requests left unanswered stopped waiting then, not at the
    /// capture's end. A response after a half-close still pairs.
    closed_at: HashMap<usize, f64>,
    undecoded: usize,
    first_undecoded: Option<usize>,
    /// Whether the catalogue describes a request's API and version, as
    /// looked up (a lookup per request was on every command's path); at
    /// most [`KNOWN_APIS_KEPT`] answers, as the input chooses the pairs.
    known_requests: HashMap<(i16, i16), bool>,
}

const KNOWN_APIS_KEPT: usize = 4096;

impl<'c, M> Exchanges<'c, M> {
    pub fn new(cat: &'c Catalogue, release: Option<&str>, needs: Needs) -> Self {
        Exchanges {
            cat,
            release: release.map(str::to_string),
            needs: needs.clone(),
            pending: Awaiting::default(),
            facts: FactReader {
                tests: needs.fields.clone(),
                ..FactReader::default()
            },
            last_time: f64::NEG_INFINITY,
            closed_at: HashMap::new(),
            undecoded: 0,
            first_undecoded: None,
            known_requests: HashMap::new(),
        }
    }

    /// Whether a request of this API and version has a definition.
    fn known_request(&mut self, api: (i16, i16)) -> bool {
        if let Some(&known) = self.known_requests.get(&api) {
            return known;
        }
        let known = self
            .cat
            .message(MessageKind::Request, api.0, api.1, self.release.as_deref())
            .is_some();
        if self.known_requests.len() < KNOWN_APIS_KEPT {
            self.known_requests.insert(api, known);
        }
        known
    }

    pub fn names(&self) -> &Names {
        &self.facts.names
    }

    pub(crate) fn into_names(self) -> Names {
        self.facts.names
    }

    /// Frames whose header or body was read for facts and did not decode
    /// completely (their facts are those read before the error).
    pub fn undecoded(&self) -> usize {
        self.undecoded
    }

    /// The number of the first of them.
    pub fn first_undecoded(&self) -> Option<usize> {
        self.first_undecoded
    }

    fn count_undecoded(&mut self, index: usize) {
        self.undecoded += 1;
        self.first_undecoded.get_or_insert(index);
    }

    /// Something of the capture happened at `time` (a frame, a skip note):
    /// requests left at the end waited at least until the latest such time.
    pub fn saw(&mut self, time: f64) {
        if time > self.last_time {
            self.last_time = time;
        }
    }

    /// A connection opened or closed (the capture's [`crate::capture::ConnEvent`]).
    pub(crate) fn conn_event(&mut self, e: &crate::capture::ConnEvent) {
        self.saw(e.timestamp);
        if e.kind != crate::capture::ConnEventKind::Open {
            self.closed_at.entry(e.conn).or_insert(e.timestamp);
        }
    }

    /// Take one frame of the capture, in the order the capture hands them on.
    /// A SASL token (`FrameKind::SaslToken`) is in no exchange: it only marks the time.
    pub fn push<O: Observer<Mark = M>>(&mut self, f: &CapturedFrame, obs: &mut O) {
        self.saw(f.timestamp);
        if f.kind.sasl_mechanism().is_some() {
            return;
        }
        let at = FrameAt {
            index: f.index,
            time: f.timestamp,
            bytes: f.len,
        };
        match f.direction {
            Direction::Request => self.request(f, at, obs),
            Direction::Response => self.response(f, at, obs),
        }
    }

    fn request<O: Observer<Mark = M>>(&mut self, f: &CapturedFrame, at: FrameAt, obs: &mut O) {
        let api = f.api_key.zip(f.api_version);
        let key = f.correlation_id.map(|c| (f.conn, c));
        self.facts.topics.clear();
        self.facts.errors.clear();
        if let Some(api) = api {
            // A request no definition describes does not decode, whether or
            // not its facts are wanted (the exit status says so).
            let read_anyway =
                self.needs.client_id || self.needs.topics || self.needs.fields.is_some();
            if !read_anyway && !self.known_request(api) {
                self.count_undecoded(f.index);
            }
        }
        let mut tested = Tested::default();
        let client_id = match api {
            Some((k, v))
                if self.needs.client_id || self.needs.topics || self.needs.fields.is_some() =>
            {
                let want = Wanted {
                    client_id: self.needs.client_id,
                    topics: self.needs.topics,
                    errors: false,
                    whole: false,
                };
                let found = self.facts.read(
                    self.cat,
                    self.release.as_deref(),
                    f,
                    MessageKind::Request,
                    (k, v),
                    want,
                );
                if !found.decoded {
                    self.count_undecoded(f.index);
                }
                tested.request = found.passed;
                tested.response_may =
                    self.facts
                        .response_may(self.cat, self.release.as_deref(), (k, v));
                found
                    .client_id
                    .map(|c| self.facts.names.intern_client(c.as_deref()))
            }
            _ => None,
        };
        self.facts.topics.sort_unstable();
        self.facts.topics.dedup();
        let ex = Exchange {
            conn: f.conn,
            client: f.from,
            broker: f.to,
            correlation_id: f.correlation_id,
            api,
            request: Some(at),
            response: None,
            outcome: Outcome::Pending,
            client_id,
            topics: &self.facts.topics,
            errors: &[],
            names: &self.facts.names,
            tested,
        };
        let mark = obs.request(&ex);
        let pending = Pending {
            conn: f.conn,
            api: api.unwrap_or_default(),
            request: at,
            client: f.from,
            broker: f.to,
            client_id,
            topics: self.facts.topics.as_slice().into(),
            tested,
            mark,
        };
        match (key, api) {
            (Some(key), Some(_)) => {
                self.pending.insert(key, pending);
            }
            // Not paired by the capture layer: a request too short to say its API or id.
            _ => {
                let api = api.is_some().then_some(pending.api);
                let ex = Exchange {
                    outcome: Outcome::Unanswered { waited_us: 0 },
                    api,
                    ..ex
                };
                obs.complete(&ex, Some(pending.mark));
            }
        }
    }

    fn response<O: Observer<Mark = M>>(&mut self, f: &CapturedFrame, at: FrameAt, obs: &mut O) {
        let paired = f
            .api_key
            .and(f.correlation_id)
            .and_then(|c| self.pending.take(&(f.conn, c)));
        self.facts.errors.clear();
        let Some(p) = paired else {
            self.facts.topics.clear();
            let api = f.api_key.zip(f.api_version);
            let mut tested = Tested::default();
            if let (Some(api), Some(_)) = (api, &self.needs.fields) {
                let pin = self.release.as_deref();
                tested.response = self
                    .facts
                    .passed(self.cat, pin, f, MessageKind::Response, api);
            }
            let ex = Exchange {
                conn: f.conn,
                client: f.to,
                broker: f.from,
                correlation_id: f.correlation_id,
                api,
                request: None,
                response: Some(at),
                outcome: Outcome::Unmatched,
                client_id: None,
                topics: &[],
                errors: &[],
                names: &self.facts.names,
                tested,
            };
            obs.complete(&ex, None);
            return;
        };
        self.facts.topics.clear();
        self.facts.topics.extend_from_slice(&p.topics);
        let mut tested = p.tested;
        if self.needs.errors || self.needs.topics || self.needs.fields.is_some() {
            let want = Wanted {
                client_id: false,
                topics: self.needs.topics,
                errors: self.needs.errors,
                whole: false,
            };
            let found = self.facts.read(
                self.cat,
                self.release.as_deref(),
                f,
                MessageKind::Response,
                p.api,
                want,
            );
            if !found.decoded {
                self.count_undecoded(f.index);
            }
            tested.response = found.passed;
        }
        self.facts.topics.sort_unstable();
        self.facts.topics.dedup();
        self.facts.errors.sort_unstable();
        self.facts.errors.dedup();
        let latency_us = micros_between(p.request.time, at.time);
        self.complete(
            Pending { tested, ..p },
            f.correlation_id,
            Outcome::Answered { latency_us },
            Some(at),
            obs,
        );
    }

    /// Hand a request's exchange on as complete; `self.facts.topics` holds its topics
    /// when answered (the request's own otherwise), `self.facts.errors` its errors.
    fn complete<O: Observer<Mark = M>>(
        &mut self,
        p: Pending<M>,
        correlation_id: Option<i32>,
        outcome: Outcome,
        response: Option<FrameAt>,
        obs: &mut O,
    ) {
        let topics: &[u32] = if response.is_some() {
            &self.facts.topics
        } else {
            &p.topics
        };
        let ex = Exchange {
            conn: p.conn,
            client: p.client,
            broker: p.broker,
            correlation_id,
            api: Some(p.api),
            request: Some(p.request),
            response,
            outcome,
            client_id: p.client_id,
            topics,
            errors: &self.facts.errors,
            names: &self.facts.names,
            tested: p.tested,
        };
        obs.complete(&ex, Some(p.mark));
    }

    /// The capture ended: every request still awaiting a response is unanswered,
    /// in the order the requests came.
    pub fn finish<O: Observer<Mark = M>>(&mut self, obs: &mut O) {
        let mut left: Vec<((usize, i32), Pending<M>)> = self.pending.drain().collect();
        left.sort_by_key(|(_, p)| p.request.index);
        self.facts.errors.clear();
        for (key, p) in left {
            let until = match self.closed_at.get(&key.0) {
                Some(&closed) if closed >= p.request.time => closed,
                _ => self.last_time,
            };
            let waited_us = micros_between(p.request.time, until.max(p.request.time));
            self.complete(p, Some(key.1), Outcome::Unanswered { waited_us }, None, obs);
        }
    }
}

/// Microseconds from `from` to `to` (seconds), each time rounded to the
/// microsecond first, so that microsecond timestamps give exact differences;
/// 0 when `to` is earlier.
pub(crate) fn micros_between(from: f64, to: f64) -> u64 {
    // `as` saturates (and takes NaN to 0): hostile timestamps cannot overflow.
    let us = |t: f64| (t * 1e6).round() as i64;
    u64::try_from(us(to).saturating_sub(us(from))).unwrap_or(0)
}

/// What to read from one frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wanted {
    pub client_id: bool,
    pub topics: bool,
    pub errors: bool,
    /// Decode the body even when no fact is asked of it: whether it decodes
    /// completely is the answer (the listing's `!!` lines).
    pub whole: bool,
}

/// What one frame gave.
pub(crate) struct Found {
    /// The client id (`Some(None)` for a null one), when asked and the header holds it.
    pub client_id: Option<Option<Box<[u8]>>>,
    /// What was read decoded completely.
    pub decoded: bool,
    /// The field tests it passed ([`FactReader::tests`]).
    pub passed: Passed,
}

/// What a struct's fields hold, by declaration index; only fields that hold
/// a fact, directly or in their own fields, have an entry.
#[derive(Debug, Default)]
struct StructFacts {
    by_decl: Box<[Option<Fact>]>,
}

#[derive(Debug)]
enum Fact {
    ErrorCode,
    TopicName,
    TopicId,
    Within(Box<StructFacts>),
}

/// How a field names a topic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TopicField {
    Name,
    Id,
}

/// Whether a field (or each element of an array field) names a topic, by
/// its spec: a topic name (`entityType: topicName`, a string) or a topic id
/// (a uuid field `TopicId`: the definitions give ids no entity type).
pub fn topic_field(f: &FieldSpec) -> Option<TopicField> {
    let element = match &f.ty {
        FieldType::Array(inner) => &**inner,
        t => t,
    };
    match element {
        FieldType::Primitive(Primitive::String)
            if FieldMeaning::of(f) == FieldMeaning::TopicName =>
        {
            Some(TopicField::Name)
        }
        FieldType::Primitive(Primitive::Uuid) if FieldMeaning::of(f) == FieldMeaning::TopicId => {
            Some(TopicField::Id)
        }
        _ => None,
    }
}

/// The facts a field holds, by its spec: an error code (`FieldMeaning`, an
/// int16), a topic name or id ([`topic_field`]), or a struct holding any of these.
fn fact_of(f: &FieldSpec, version: i16, want: Wanted) -> Option<Fact> {
    let element = match &f.ty {
        FieldType::Array(inner) => &**inner,
        t => t,
    };
    match (element, topic_field(f)) {
        (_, Some(TopicField::Name)) if want.topics => Some(Fact::TopicName),
        (_, Some(TopicField::Id)) if want.topics => Some(Fact::TopicId),
        (FieldType::Primitive(Primitive::Int16), _)
            if want.errors && FieldMeaning::of(f) == FieldMeaning::ErrorCode =>
        {
            Some(Fact::ErrorCode)
        }
        (FieldType::Struct(_), _) => {
            struct_facts(&f.fields, version, want).map(|s| Fact::Within(Box::new(s)))
        }
        _ => None,
    }
}

fn struct_facts(fields: &[FieldSpec], version: i16, want: Wanted) -> Option<StructFacts> {
    let mut any = false;
    let by_decl: Box<[Option<Fact>]> = fields
        .iter()
        .map(|f| {
            let on_wire = f.is_regular_in(version) || f.is_tagged_in(version);
            let fact = if on_wire {
                fact_of(f, version, want)
            } else {
                None
            };
            any |= fact.is_some();
            fact
        })
        .collect();
    any.then_some(StructFacts { by_decl })
}

/// A message (request or not, api key, version) and the facts asked of it
/// (errors, topics).
type BodyKey = (bool, i16, i16, bool, bool);

/// The tape and what the definitions say about where facts are, per message
/// and version (bounded by the definitions: only specs that exist are kept).
#[derive(Default)]
pub(crate) struct FactReader {
    tape: Values,
    bodies: HashMap<BodyKey, Option<Arc<StructFacts>>>,
    /// Request header version → the declaration index of its client id.
    client_decl: HashMap<i16, Option<u16>>,
    /// The facts of a body decoded only to see that it decodes: none.
    no_facts: Arc<StructFacts>,
    /// A filter's expression whose field tests each frame read is put to.
    pub tests: Option<Arc<Expr>>,
    /// Its tests laid over each message read (as `bodies`, bounded by the definitions).
    laid: HashMap<(bool, i16, i16), Option<Arc<MessageTests>>>,
    /// Client ids and topics seen, each kept once: what reads found refers
    /// to them by index.
    pub(crate) names: Names,
    /// What reads found, in the order found: topics (indexes into
    /// [`Self::names`]) and error codes. Reads add to them; the reader's
    /// owner sorts and clears them.
    pub(crate) topics: Vec<u32>,
    pub(crate) errors: Vec<i16>,
}

impl FactReader {
    /// Read what `want` asks of frame `f`, a message of `kind` at `api`: the
    /// client id into the result, topics and errors onto [`Self::topics`]
    /// and [`Self::errors`].
    pub(crate) fn read(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        f: &CapturedFrame,
        kind: MessageKind,
        api: (i16, i16),
        want: Wanted,
    ) -> Found {
        let mut found = Found {
            client_id: None,
            decoded: true,
            passed: 0,
        };
        let (key, version) = api;
        let Some(spec) = cat.message(kind, key, version, pin) else {
            found.decoded = false;
            return found;
        };
        let request = kind == MessageKind::Request;
        let body_facts = match want.topics || want.errors {
            true => self.body_facts(cat, pin, request, api, want),
            false => None,
        };
        let laid = self.laid(cat, pin, kind, api);
        let tests = self.tests.clone();
        let test_body = laid.as_ref().is_some_and(|t| t.body.is_some());
        let test_header = laid.as_ref().is_some_and(|t| t.header.is_some());
        let body_facts = match body_facts {
            None if want.whole || test_body => Some(self.no_facts.clone()),
            facts => facts,
        };
        if body_facts.is_none() && !want.client_id && !test_header {
            return found;
        }
        let hv = if request {
            request_header_version(spec, version)
        } else {
            response_header_version(spec, version)
        };
        let Some(header) = cat.header(kind, hv) else {
            found.decoded = false;
            return found;
        };
        // Tests see the bytes the views show: a credential masked unless
        // --show-secrets, so that no filter probes it.
        let reads_bytes = laid.as_ref().is_some_and(|l| l.reads_bytes);
        let shown = (tests.is_some() && reads_bytes)
            .then(|| super::captured::shown_bytes(cat, pin, f))
            .flatten();
        let bytes: &[u8] = shown.as_deref().unwrap_or(&f.bytes);
        self.tape.slots.clear();
        let (head, end, res) = values::decode_message(bytes, 4, &header.plan(hv), &mut self.tape);
        // Records fields decompress within one budget for the whole frame
        // (the default limits), made only when there are tests to run.
        let budget = tests.as_ref().map(|_| Budget::new(Default::default()));
        if let (Some(t), Some(branch), Some(budget)) = (
            &tests,
            laid.as_ref().and_then(|l| l.header.as_ref()),
            &budget,
        ) {
            fields::run(
                &t.fields,
                branch,
                &self.tape,
                bytes,
                head,
                &mut found.passed,
                budget,
            );
        }
        if want.client_id {
            let decl = *self.client_decl.entry(hv).or_insert_with(|| {
                header
                    .fields
                    .iter()
                    .position(|h| FieldMeaning::of(h) == FieldMeaning::ClientId)
                    .map(|i| i as u16)
            });
            found.client_id = match decl {
                Some(decl) => self
                    .tape
                    .children(head)
                    .find(|(_, s)| s.id == Id::Field(decl))
                    .and_then(|(_, s)| match s.value {
                        Val::Str(span) => Some(Some(span.of(bytes).into())),
                        Val::Null => res.is_ok().then_some(None),
                        _ => None,
                    }),
                // Header v0 has no client id: as a null one.
                None => Some(None),
            };
        }
        if res.is_err() {
            found.decoded = false;
            return found;
        }
        let Some(facts) = body_facts else {
            return found;
        };
        if f.is_cut() {
            // Only a prefix holding the header was kept.
            found.decoded = false;
            return found;
        }
        // Taken while the body is read, which also reads `self`; put back below.
        let (mut names, mut topics, mut errors) = (
            take(&mut self.names),
            take(&mut self.topics),
            take(&mut self.errors),
        );
        let marks = (topics.len(), errors.len());
        let body_ok = |tape: &mut Values,
                       plan: &crate::schema::plan::StructPlan,
                       facts: &StructFacts,
                       names: &mut Names,
                       topics: &mut Vec<u32>,
                       errors: &mut Vec<i16>| {
            let (slot, stop, res) = values::decode_message(bytes, end, plan, tape);
            walk(tape, bytes, slot, facts, names, topics, errors);
            (res.is_ok() && stop == bytes.len(), slot)
        };
        let body_tests =
            |tape: &Values, slot: u32, laid: Option<&MessageTests>, passed: &mut Passed| {
                if let (Some(t), Some(branch), Some(budget)) =
                    (&tests, laid.and_then(|l| l.body.as_ref()), &budget)
                {
                    fields::run(&t.fields, branch, tape, bytes, slot, passed, budget);
                }
            };
        let body_slot;
        (found.decoded, body_slot) = body_ok(
            &mut self.tape,
            &spec.plan(version),
            &facts,
            &mut names,
            &mut topics,
            &mut errors,
        );
        let mut passed = found.passed;
        body_tests(&self.tape, body_slot, laid.as_deref(), &mut passed);
        if !found.decoded && !request && key == API_VERSIONS_KEY && version > 0 {
            // A broker that does not support the requested ApiVersions version
            // answers with a v0 body (as the decoder does, `decode::frame`).
            // The body is read at all, so it is read again: for its facts
            // if v0 has any asked for, else for the field tests or to see it decode.
            let facts0 = self
                .body_facts(cat, pin, request, (key, 0), want)
                .unwrap_or_else(|| self.no_facts.clone());
            if let Some(v0) = cat.message(kind, key, 0, pin) {
                let mut retry = std::mem::take(&mut self.tape);
                let header_end = retry.slots.get(head as usize).map_or(0, |h| h.end as usize);
                retry.slots.truncate(header_end);
                let (t, e) = (topics.len(), errors.len());
                let (ok, slot) = body_ok(
                    &mut retry,
                    &v0.plan(0),
                    &facts0,
                    &mut names,
                    &mut topics,
                    &mut errors,
                );
                if ok {
                    topics.drain(marks.0..t);
                    errors.drain(marks.1..e);
                    found.decoded = true;
                    let laid0 = self.laid(cat, pin, kind, (key, 0));
                    passed = found.passed;
                    body_tests(&retry, slot, laid0.as_deref(), &mut passed);
                } else {
                    topics.truncate(t);
                    errors.truncate(e);
                }
                self.tape = retry;
            }
        }
        (self.names, self.topics, self.errors) = (names, topics, errors);
        found.passed = passed;
        found
    }

    /// The filter's tests laid over a message (none without tests, or
    /// when no definition describes it).
    fn laid(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        kind: MessageKind,
        (key, version): (i16, i16),
    ) -> Option<Arc<MessageTests>> {
        let tests = self.tests.as_ref()?;
        let k = (kind == MessageKind::Request, key, version);
        if let Some(l) = self.laid.get(&k) {
            return l.clone();
        }
        let spec = cat.message(kind, key, version, pin)?;
        let hv = if kind == MessageKind::Request {
            request_header_version(spec, version)
        } else {
            response_header_version(spec, version)
        };
        let laid = cat.header(kind, hv).map(|header| {
            Arc::new(MessageTests::new(
                &tests.fields,
                &header.plan(hv),
                &spec.plan(version),
            ))
        });
        self.laid.insert(k, laid.clone());
        laid
    }

    /// The field tests frame `f` passes, no other fact read.
    pub(crate) fn passed(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        f: &CapturedFrame,
        kind: MessageKind,
        api: (i16, i16),
    ) -> Passed {
        let nothing = Wanted {
            client_id: false,
            topics: false,
            errors: false,
            whole: false,
        };
        // Nothing asked: nothing is added to the names, topics or errors.
        let found = self.read(cat, pin, f, kind, api, nothing);
        found.passed
    }

    /// The field tests a response of this API and version could pass.
    pub(crate) fn response_may(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        api: (i16, i16),
    ) -> Passed {
        self.laid(cat, pin, MessageKind::Response, api)
            .map_or(0, |l| l.may)
    }

    fn body_facts(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        request: bool,
        (key, version): (i16, i16),
        want: Wanted,
    ) -> Option<Arc<StructFacts>> {
        let k = (request, key, version, want.errors, want.topics);
        if let Some(f) = self.bodies.get(&k) {
            return f.clone();
        }
        let kind = if request {
            MessageKind::Request
        } else {
            MessageKind::Response
        };
        let spec = cat.message(kind, key, version, pin)?;
        let facts = struct_facts(&spec.fields, version, want).map(Arc::new);
        self.bodies.insert(k, facts.clone());
        facts
    }
}

/// The facts in the struct at `slot` and below: error codes and topics onto
/// `errors` and `topics`. A struct naming a topic and its id ties the two.
fn walk(
    tape: &Values,
    frame: &[u8],
    slot: u32,
    facts: &StructFacts,
    names: &mut Names,
    topics: &mut Vec<u32>,
    errors: &mut Vec<i16>,
) {
    let mut name = None;
    let mut id = None;
    for (i, s) in tape.children(slot) {
        let Some(decl) = s.decl() else { continue };
        let Some(Some(fact)) = facts.by_decl.get(usize::from(decl)) else {
            continue;
        };
        let single = !s.value.is_array();
        let one_or_each = |each: &mut dyn FnMut(Val)| match s.value {
            Val::Array(_) => tape.children(i).for_each(|(_, e)| each(e.value)),
            Val::Packed(packed) => packed.values(frame).for_each(each),
            v => each(v),
        };
        match fact {
            Fact::ErrorCode => one_or_each(&mut |v| {
                if let Val::Int(c) = v {
                    if c != 0 {
                        errors.push(c as i16);
                    }
                }
            }),
            Fact::TopicName => one_or_each(&mut |v| {
                // Kafka refuses empty topic names: an empty one is "none given".
                if let Val::Str(span) = v {
                    if span.len > 0 {
                        let n = names.intern_name(span.of(frame));
                        topics.push(n);
                        if single {
                            name = Some(n);
                        }
                    }
                }
            }),
            Fact::TopicId => one_or_each(&mut |v| {
                // The zero uuid is Kafka's "no id".
                if let Some(u) = v.uuid_in(frame).filter(|u| *u != [0; 16]) {
                    match single {
                        true => id = Some(u),
                        // An array of ids: each is a topic of its own.
                        false => topics.push(names.intern_id(u)),
                    }
                }
            }),
            Fact::Within(inner) => match s.value {
                Val::Struct => walk(tape, frame, i, inner, names, topics, errors),
                Val::Array(_) => {
                    for (e, es) in tape.children(i) {
                        if es.value == Val::Struct {
                            walk(tape, frame, e, inner, names, topics, errors);
                        }
                    }
                }
                _ => {}
            },
        }
    }
    match (name, id) {
        (Some(n), Some(u)) => names.tie(u, n),
        (None, Some(u)) => topics.push(names.intern_id(u)),
        _ => {}
    }
}

/// Learns the topic names a capture ties to topic ids, reading only the
/// responses that can tie them: those whose message, at its version, has a
/// struct with a topic name and a topic id (Metadata, CreateTopics,
/// DeleteTopics, DescribeTopicPartitions at their newer versions). Every
/// other frame is passed over without decoding. The ties go into [`Names`],
/// as the exchanges' do.
pub struct TopicIdLearner<'c> {
    cat: &'c Catalogue,
    release: Option<String>,
    facts: FactReader,
    /// Per response API and version the catalogue defines: whether it can tie.
    ties: HashMap<(i16, i16), bool>,
}

impl<'c> TopicIdLearner<'c> {
    pub fn new(cat: &'c Catalogue, release: Option<&str>) -> Self {
        TopicIdLearner {
            cat,
            release: release.map(str::to_string),
            facts: FactReader::default(),
            ties: HashMap::new(),
        }
    }

    /// Take one frame of the capture.
    pub fn push(&mut self, f: &CapturedFrame) {
        if f.direction != Direction::Response || f.kind.sasl_mechanism().is_some() || f.is_cut() {
            return;
        }
        let Some(api) = f.api_key.zip(f.api_version) else {
            return;
        };
        if !self.can_tie(api) {
            return;
        }
        let want = Wanted {
            client_id: false,
            topics: true,
            errors: false,
            whole: false,
        };
        let pin = self.release.as_deref();
        self.facts
            .read(self.cat, pin, f, MessageKind::Response, api, want);
        self.facts.topics.clear();
        self.facts.errors.clear();
    }

    fn can_tie(&mut self, api: (i16, i16)) -> bool {
        if let Some(&t) = self.ties.get(&api) {
            return t;
        }
        let pin = self.release.as_deref();
        if self
            .cat
            .message(MessageKind::Response, api.0, api.1, pin)
            .is_none()
        {
            // Not cached: what is kept is bounded by the definitions, not the capture.
            return false;
        }
        let want = Wanted {
            client_id: false,
            topics: true,
            errors: false,
            whole: false,
        };
        let t = self
            .facts
            .body_facts(self.cat, pin, false, api, want)
            .is_some_and(|f| ties_in(&f));
        self.ties.insert(api, t);
        t
    }

    /// The topic names tied to ids so far.
    pub fn topic_ids(&self) -> &TopicIds {
        self.facts.names.topic_ids()
    }
}

/// Whether some struct of these has a topic name and a topic id side by side.
fn ties_in(facts: &StructFacts) -> bool {
    let has = |want: fn(&Fact) -> bool| facts.by_decl.iter().flatten().any(want);
    (has(|f| matches!(f, Fact::TopicName)) && has(|f| matches!(f, Fact::TopicId)))
        || facts
            .by_decl
            .iter()
            .flatten()
            .any(|f| matches!(f, Fact::Within(inner) if ties_in(inner)))
}

/// Read a whole capture for the topic names it ties to topic ids (a first pass,
/// so that a name learned late still names the frames before it). What was
/// read before a damaged or cut-short file ends is kept.
pub(crate) fn learn_topic_ids<R: std::io::Read>(
    cat: &Catalogue,
    release: Option<&str>,
    input: R,
    opts: &crate::capture::CaptureOptions,
) -> TopicIds {
    let mut learner = TopicIdLearner::new(cat, release);
    let opts = crate::capture::CaptureOptions {
        cut_bodies: None,
        ..opts.clone()
    };
    let _ = crate::capture::for_each_frame_with(cat, input, &opts, |f| {
        learner.push(&f);
        true
    });
    learner.topic_ids().clone()
}

/// What reading a capture for an analysis found besides its exchanges: the
/// capture layer's counts, the frames read for facts that did not decode
/// completely (and the first of them), and the skip notes (bytes in no frame)
/// of the connections selected.
#[derive(Clone, Debug, Default)]
pub struct Reading {
    pub capture: crate::capture::CaptureStats,
    pub undecoded: usize,
    pub first_undecoded: Option<usize>,
    pub skips: usize,
    pub skipped_bytes: u64,
}

impl Reading {
    /// Count `n` more undecoded frames, the first of them frame `first`.
    pub(crate) fn add_undecoded(&mut self, n: usize, first: Option<usize>) {
        self.undecoded += n;
        self.first_undecoded = match (self.first_undecoded, first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }
}

/// Read a capture's exchanges into `obs`, everything the capture hands on
/// shown to `each` first; skip notes count when they are on connection
/// `conn` (or any, for `None`). The one walk `stats`, `inventory` and
/// `report` share.
pub(crate) fn read_capture<R: std::io::Read, M, O: Observer<Mark = M>>(
    cat: &Catalogue,
    input: R,
    opts: &crate::capture::CaptureOptions,
    (exchanges, obs): (&mut Exchanges<'_, M>, &mut O),
    conn: Option<usize>,
    mut each: impl FnMut(&crate::capture::Captured),
) -> Result<Reading, String> {
    let (mut skips, mut skipped_bytes) = (0, 0);
    let capture = crate::capture::for_each_captured(cat, input, opts, |c| {
        each(&c);
        match c {
            crate::capture::Captured::Frame(f) => {
                exchanges.push(&f, obs);
            }
            crate::capture::Captured::Skipped(s) => {
                exchanges.saw(s.timestamp);
                if conn.is_none_or(|c| c == s.conn) {
                    skips += 1;
                    skipped_bytes += s.bytes;
                }
            }
            // Counted in the capture's stats (`CaptureStats::tls`).
            crate::capture::Captured::Tls(n) => exchanges.saw(n.timestamp),
            crate::capture::Captured::Conn(e) => exchanges.conn_event(&e),
        }
        true
    })?;
    exchanges.finish(obs);
    Ok(Reading {
        capture,
        undecoded: exchanges.undecoded(),
        first_undecoded: exchanges.first_undecoded(),
        skips,
        skipped_bytes,
    })
}

/// Puts frames to a filter's field tests one at a time, outside a reading of
/// exchanges (the explorer's rows, decoded from its spool when filtered).
pub(crate) struct FieldTester {
    facts: FactReader,
}

impl FieldTester {
    /// A tester of an expression's field tests (a filter's [`Needs::fields`]);
    /// `None` when it tests no field.
    pub fn new(tests: Option<Arc<Expr>>) -> Option<FieldTester> {
        let tests = tests?;
        Some(FieldTester {
            facts: FactReader {
                tests: Some(tests),
                ..FactReader::default()
            },
        })
    }

    /// The field tests frame `f` passes (none when its API is not known).
    pub fn passed(&mut self, cat: &Catalogue, pin: Option<&str>, f: &CapturedFrame) -> Passed {
        let Some(api) = f.api_key.zip(f.api_version) else {
            return 0;
        };
        let kind = match f.direction {
            Direction::Request => MessageKind::Request,
            Direction::Response => MessageKind::Response,
        };
        self.facts.passed(cat, pin, f, kind, api)
    }
}
