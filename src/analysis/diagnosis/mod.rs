//! Diagnosis: the conversation read the way a Kafka engineer reads it.
//!
//! One pass over a capture (or a live stream) builds a small model of the
//! conversation: exchanges paired per connection, each side's facts read
//! from the values-only tape by the definitions ([`facts`]), connections
//! opened and closed, and what the [`rules`] keep per client, producer,
//! group member, fetch session, transaction and partition. Each rule is a
//! module of its own that turns that model into findings
//! ([`crate::analysis::finding::Finding`]): what happened, on which frames,
//! from when to when, how often. What a rule knows of the protocol (which
//! error is retriable, which version introduced an error) is data in
//! [`crate::protocol::error_rules`].
//!
//! Memory: the requests awaiting a response (with their facts), and per
//! connection, client, producer partition, session, group and partition a
//! few numbers; never the frames.

pub mod facts;
pub mod rules;

use crate::analysis::finding::{Finding, Rule, MAX_FRAMES_NAMED};
use crate::capture::awaiting::Awaiting;
use crate::capture::{CapturedFrame, ConnEvent, ConnEventKind, Side};
use crate::decode::{Direction, FrameKind};
use crate::protocol::headers::API_VERSIONS_KEY;
use crate::schema::{Catalogue, MessageKind};
use facts::{FactReader, Facts, TopicKey};
use foldhash::{HashMap, HashMapExt};
use std::net::{IpAddr, SocketAddr};

pub(crate) const PRODUCE: i16 = 0;
pub const FETCH: i16 = 1;
pub(crate) const METADATA: i16 = 3;

/// A frame of an exchange: its number in the capture and its time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct At {
    pub index: usize,
    pub time: f64,
}

/// Who a client is across its connections: its client id and its host.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClientKey {
    pub client_id: Option<Box<[u8]>>,
    pub host: IpAddr,
}

impl ClientKey {
    /// The client id as text (invalid UTF-8 replaced), for messages and JSON.
    pub(crate) fn id_text(&self) -> Option<String> {
        self.client_id
            .as_deref()
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// `client "id" (host)` or `client at host`.
    pub fn describe(&self) -> String {
        match self.id_text() {
            Some(id) => format!("client {id:?} ({})", self.host),
            None => format!("client at {}", self.host),
        }
    }
}

/// A request as it leaves, for rules that watch what a client sends.
pub struct Req<'a> {
    pub conn: usize,
    pub client: &'a ClientKey,
    pub broker: SocketAddr,
    pub api: (i16, i16),
    pub at: At,
    pub facts: &'a Facts,
}

/// A request with its response, or a request that got none.
pub struct Ex<'a> {
    pub conn: usize,
    pub client: &'a ClientKey,
    pub broker: SocketAddr,
    pub api: (i16, i16),
    pub request: At,
    pub response: Option<At>,
    pub req: &'a Facts,
    pub resp: Option<&'a Facts>,
}

/// What rules need to name things in their messages.
pub struct Ctx<'c> {
    pub cat: &'c Catalogue,
    pub topic_names: HashMap<[u8; 16], facts::Name>,
}

impl Ctx<'_> {
    /// `Produce v9`, or `api 77 v0` for a key the catalogue does not know.
    pub(crate) fn api_text(&self, (key, version): (i16, i16)) -> String {
        format!("{} v{version}", self.api_name(key))
    }

    pub fn api_name(&self, key: i16) -> String {
        self.cat
            .api_name(key)
            .map_or_else(|| format!("api {key}"), str::to_string)
    }

    /// A topic's name (an id by the name the capture tied to it, else the uuid).
    pub(crate) fn topic_text(&self, t: Option<&TopicKey>) -> String {
        match t {
            Some(TopicKey::Name(n)) => String::from_utf8_lossy(n).into_owned(),
            Some(TopicKey::Id(id)) => match self.topic_names.get(id) {
                Some(n) => String::from_utf8_lossy(n).into_owned(),
                None => crate::text::uuid_text(id),
            },
            None => "?".into(),
        }
    }

    /// The same topic named by id or name counts once where the capture tied them.
    pub(crate) fn topic_key(&self, t: Option<&TopicKey>) -> Option<TopicKey> {
        match t {
            Some(TopicKey::Id(id)) => Some(match self.topic_names.get(id) {
                Some(n) => TopicKey::Name(n.clone()),
                None => TopicKey::Id(*id),
            }),
            other => other.cloned(),
        }
    }
}

/// A finding of a conversation rule, before it becomes a [`Finding`].
pub struct Found {
    pub rule: Rule,
    pub frames: Vec<usize>,
    pub time: f64,
    pub until: f64,
    pub conn: Option<usize>,
    pub client: Option<ClientKey>,
    pub api: Option<(i16, i16)>,
    pub count: u64,
    pub message: String,
}

impl Found {
    /// A finding about one answered exchange: its request and response.
    pub fn answer(rule: Rule, ex: &Ex<'_>, response: At, message: String) -> Found {
        Found {
            rule,
            frames: vec![ex.request.index, response.index],
            time: response.time,
            until: response.time,
            conn: Some(ex.conn),
            client: Some(ex.client.clone()),
            api: Some(ex.api),
            count: 1,
            message,
        }
    }

    /// A finding about one request as it left.
    pub fn request(rule: Rule, req: &Req<'_>, message: String) -> Found {
        Found {
            rule,
            frames: vec![req.at.index],
            time: req.at.time,
            until: req.at.time,
            conn: Some(req.conn),
            client: Some(req.client.clone()),
            api: Some(req.api),
            count: 1,
            message,
        }
    }

    pub fn finding(mut self) -> Finding {
        self.frames.sort_unstable();
        self.frames.dedup();
        self.frames.truncate(MAX_FRAMES_NAMED);
        Finding {
            frame: self.frames.first().copied(),
            time: Some(self.time),
            conn: self.conn,
            direction: None,
            api_key: self.api.map(|a| a.0),
            api_version: self.api.map(|a| a.1),
            correlation_id: None,
            offset: None,
            rule: self.rule,
            message: self.message,
            frames: self.frames,
            until: (self.until > self.time).then_some(self.until),
            count: self.count,
            client_id: self.client.and_then(|c| c.id_text()),
        }
    }
}

/// An exchange as the rules saw it, kept for a caller that reads every
/// exchange's facts (the export's partitions table): owned, in the order
/// the exchanges ended.
pub struct Done {
    pub conn: usize,
    pub api: (i16, i16),
    pub request: At,
    pub response: Option<At>,
    pub req: Facts,
    pub resp: Option<Facts>,
}

/// A request awaiting its response.
struct Pending {
    api: (i16, i16),
    at: At,
    facts: Facts,
}

/// What is known of one connection.
struct Conn {
    client: ClientKey,
    broker: SocketAddr,
    /// The first FIN or the RST: who, when (requests still in flight when the
    /// connection is over were cut by it).
    closed: Option<(ConnEventKind, f64)>,
    fins: u8,
    /// The long polls in flight at the close (what was sent after them
    /// waited for them).
    polls: Vec<rules::closed::Poll>,
}

/// Requests a client's close cut before it could have given up on them:
/// it stopped, unless it opens a new connection to the broker soon after
/// (decided at the end: then it gave up waiting).
struct Stopped {
    conn: usize,
    client: ClientKey,
    broker: SocketAddr,
    how: ConnEventKind,
    when: f64,
    requests: Vec<(At, (i16, i16))>,
    /// The long polls in flight at the close.
    polls: Vec<rules::closed::Poll>,
}

/// Reads a capture's conversation and runs the rules over it.
pub struct Diagnosis<'c> {
    ctx: Ctx<'c>,
    release: Option<String>,
    reader: FactReader,
    /// Requests awaiting a response, as the capture layer pairs them.
    pending: Awaiting<(usize, i32), Pending>,
    conns: HashMap<usize, Conn>,
    rules: rules::Rules,
    last_time: f64,
    /// Requests a finding reports as cut by a close (`closed-unanswered`,
    /// `poll-abandoned`), by frame: not `unanswered` notes.
    lost: foldhash::HashSet<usize>,
    /// Exchanges ended since the caller last took them, when it asked to keep them.
    done: Option<Vec<Done>>,
    /// Client closes that cut requests, stopping or giving up (told at the end).
    stopped: Vec<Stopped>,
}

impl<'c> Diagnosis<'c> {
    pub fn new(cat: &'c Catalogue, release: Option<&str>) -> Self {
        Diagnosis {
            ctx: Ctx {
                cat,
                topic_names: HashMap::new(),
            },
            release: release.map(str::to_string),
            reader: FactReader::default(),
            pending: Awaiting::default(),
            conns: HashMap::new(),
            rules: rules::Rules::default(),
            last_time: f64::NEG_INFINITY,
            lost: foldhash::HashSet::default(),
            done: None,
            stopped: Vec::new(),
        }
    }

    /// Keep every exchange as it ends (answered, cut by a close, or still
    /// awaiting an answer when the capture ends) for [`Self::take_done`].
    pub fn keep_done(mut self) -> Self {
        self.done = Some(Vec::new());
        self
    }

    /// The exchanges ended since the last call (none unless [`Self::keep_done`]).
    pub fn take_done(&mut self) -> Vec<Done> {
        self.done.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// What names topics and APIs.
    pub fn ctx(&self) -> &Ctx<'c> {
        &self.ctx
    }

    /// The client id of connection `conn`'s client, once a request on it was seen.
    pub(crate) fn client_id(&self, conn: usize) -> Option<String> {
        self.conns.get(&conn).and_then(|c| c.client.id_text())
    }

    /// Take one frame, in capture order; findings that are decided now go to `out`.
    pub fn frame(&mut self, f: &CapturedFrame, out: &mut Vec<Finding>) {
        self.last_time = self.last_time.max(f.timestamp);
        if f.kind != FrameKind::Kafka {
            return;
        }
        let (Some(key), Some(version), Some(corr)) = (f.api_key, f.api_version, f.correlation_id)
        else {
            return;
        };
        let at = At {
            index: f.index,
            time: f.timestamp,
        };
        let pin = self.release.as_deref();
        match f.direction {
            Direction::Request => {
                let facts = self
                    .reader
                    .read(self.ctx.cat, pin, f, MessageKind::Request, (key, version))
                    .unwrap_or_default();
                let conn = self.conns.entry(f.conn).or_insert_with(|| Conn {
                    client: ClientKey {
                        client_id: facts.client_id.clone(),
                        host: f.from.ip(),
                    },
                    broker: f.to,
                    closed: None,
                    fins: 0,
                    polls: Vec::new(),
                });
                let req = Req {
                    conn: f.conn,
                    client: &conn.client,
                    broker: conn.broker,
                    api: (key, version),
                    at,
                    facts: &facts,
                };
                let mut found = Vec::new();
                self.rules.request(&self.ctx, &req, &mut found);
                out.extend(found.into_iter().map(Found::finding));
                self.pending.insert(
                    (f.conn, corr),
                    Pending {
                        api: (key, version),
                        at,
                        facts,
                    },
                );
            }
            Direction::Response => {
                let Some(p) = self.pending.take(&(f.conn, corr)) else {
                    return;
                };
                let mut facts = self
                    .reader
                    .read(self.ctx.cat, pin, f, MessageKind::Response, p.api)
                    .unwrap_or_default();
                if !facts.decoded && key == API_VERSIONS_KEY {
                    // A v0 answer to a newer ApiVersions: nothing the rules read.
                    facts = Facts::default();
                }
                for (id, name) in std::mem::take(&mut facts.ties) {
                    self.ctx.topic_names.insert(id, name);
                }
                self.complete(f.conn, p, Some(at), Some(facts), out);
            }
        }
    }

    fn complete(
        &mut self,
        conn: usize,
        p: Pending,
        response: Option<At>,
        resp: Option<Facts>,
        out: &mut Vec<Finding>,
    ) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let resp_ref = resp.as_ref();
        let ex = Ex {
            conn,
            client: &c.client,
            broker: c.broker,
            api: p.api,
            request: p.at,
            response,
            req: &p.facts,
            resp: resp_ref,
        };
        let mut found = Vec::new();
        self.rules.exchange(&self.ctx, &ex, &mut found);
        out.extend(found.into_iter().map(Found::finding));
        if let Some(done) = &mut self.done {
            done.push(Done {
                conn,
                api: p.api,
                request: p.at,
                response,
                req: p.facts,
                resp,
            });
        }
    }

    /// A connection opened or closed.
    pub(crate) fn conn_event(&mut self, e: &ConnEvent, out: &mut Vec<Finding>) {
        self.last_time = self.last_time.max(e.timestamp);
        let mut found = Vec::new();
        self.rules.conn_event(&self.ctx, e, &mut found);
        let Some(conn) = self.conns.get_mut(&e.conn) else {
            out.extend(found.into_iter().map(Found::finding));
            return;
        };
        let first_close = conn.closed.is_none() && e.kind != ConnEventKind::Open;
        let over = match e.kind {
            ConnEventKind::Open => false,
            ConnEventKind::Fin(_) => {
                conn.fins += 1;
                conn.closed.get_or_insert((e.kind, e.timestamp));
                conn.fins >= 2
            }
            ConnEventKind::Reset(_) => {
                conn.closed.get_or_insert((e.kind, e.timestamp));
                true
            }
        };
        if first_close {
            self.closing(e.conn, (e.kind, e.timestamp));
        }
        if over {
            self.cut(e.conn, &mut found);
        }
        out.extend(found.into_iter().map(Found::finding));
    }

    /// Connection `conn` is closing (its first FIN, or an RST): the rules
    /// that read what was in flight then are told (a request in flight at
    /// the close may still be answered before the other side closes).
    fn closing(&mut self, conn: usize, close: (ConnEventKind, f64)) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let mut in_flight: Vec<rules::closed::Cut<'_>> = (self.pending.iter())
            .filter(|(k, _)| k.0 == conn)
            .map(|(_, p)| (p.at, p.api, &p.facts))
            .collect();
        in_flight.sort_by_key(|(at, ..)| at.index);
        self.rules
            .closing((conn, &c.client, c.broker), close, &in_flight);
        let polls = rules::closed::polls(&in_flight);
        if let Some(c) = self.conns.get_mut(&conn) {
            c.polls = polls;
        }
    }

    /// Connection `conn` is over: what it still awaited was cut by its close.
    fn cut(&mut self, conn: usize, found: &mut Vec<Found>) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        let Some((how, when)) = c.closed else {
            return;
        };
        let keys: Vec<(usize, i32)> = self
            .pending
            .keys()
            .filter(|k| k.0 == conn)
            .copied()
            .collect();
        let mut cut_requests: Vec<Pending> =
            keys.iter().flat_map(|k| self.pending.take_all(k)).collect();
        cut_requests.sort_by_key(|p| p.at.index);
        let cut: Vec<(At, (i16, i16), &Facts)> = cut_requests
            .iter()
            .map(|p| (p.at, p.api, &p.facts))
            .collect();
        let (mut lost, mut stopped) = (Vec::new(), Vec::new());
        for (&(at, api, facts), is_lost) in cut
            .iter()
            .zip(rules::closed::lost_of(&cut, &c.polls, how, when))
        {
            if is_lost {
                self.lost.insert(at.index);
                lost.push((at, api));
            } else if how.side() == Side::Client
                && at.time <= when
                && rules::closed::expects_answer(api, facts)
            {
                stopped.push((at, api));
            }
        }
        let close = rules::closed::Close {
            conn,
            client: &c.client,
            how,
            when,
        };
        found.extend(rules::closed::closed(&self.ctx, &close, &lost, None));
        if !stopped.is_empty() {
            self.stopped.push(Stopped {
                conn,
                client: c.client.clone(),
                broker: c.broker,
                how,
                when,
                requests: stopped,
                polls: c.polls.clone(),
            });
        }
        self.keep_unanswered(conn, cut_requests);
    }

    /// Whether each client close that cut requests was a client stopping
    /// or giving up on them: one that opened a new connection to the broker
    /// soon after gave up (`closed-unanswered`), unless a finding explains
    /// the requests already.
    fn gave_up(&mut self, found: &mut Vec<Found>) {
        for s in std::mem::take(&mut self.stopped) {
            let requests: Vec<(At, (i16, i16))> = (s.requests.iter())
                .filter(|(at, _)| !self.lost.contains(&at.index))
                .copied()
                .collect();
            let Some(&(first, _)) = requests.first() else {
                continue;
            };
            let on = (&s.client, s.broker);
            let Some(after) = self.rules.reconnected(on, (s.conn, s.when), first.time) else {
                continue;
            };
            let close = rules::closed::Close {
                conn: s.conn,
                client: &s.client,
                how: s.how,
                when: s.when,
            };
            let gave_up = rules::closed::GaveUp {
                reconnected: after,
                behind_poll: rules::closed::behind_poll(&s.polls, first.time, s.when),
            };
            self.lost.extend(requests.iter().map(|(at, _)| at.index));
            found.extend(rules::closed::closed(
                &self.ctx,
                &close,
                &requests,
                Some(gave_up),
            ));
        }
    }

    /// Requests that will get no answer, kept when exchanges are kept.
    fn keep_unanswered(&mut self, conn: usize, requests: Vec<Pending>) {
        if let Some(done) = &mut self.done {
            done.extend(requests.into_iter().map(|p| Done {
                conn,
                api: p.api,
                request: p.at,
                response: None,
                req: p.facts,
                resp: None,
            }));
        }
    }

    /// The capture ended: connections closed on one side only are over too,
    /// and rules that judge the whole capture speak.
    pub fn finish(&mut self, out: &mut Vec<Finding>) {
        let mut found = Vec::new();
        let mut closed: Vec<usize> = self
            .conns
            .iter()
            .filter(|(_, c)| c.closed.is_some())
            .map(|(k, _)| *k)
            .collect();
        closed.sort_unstable();
        for conn in closed {
            self.cut(conn, &mut found);
        }
        self.rules.finish(&self.ctx, self.last_time, &mut found);
        self.lost.extend(self.rules.covered());
        self.gave_up(&mut found);
        found.sort_by(|a, b| a.time.total_cmp(&b.time));
        out.extend(found.into_iter().map(Found::finding));
        if self.done.is_some() {
            let mut left: Vec<((usize, i32), Pending)> = self.pending.drain().collect();
            left.sort_by_key(|(_, p)| p.at.index);
            for ((conn, _), p) in left {
                self.keep_unanswered(conn, vec![p]);
            }
        }
    }

    /// How and when connection `conn` was first closed inside the capture.
    pub fn closed(&self, conn: usize) -> Option<(ConnEventKind, f64)> {
        self.conns.get(&conn).and_then(|c| c.closed)
    }

    /// Whether a finding reported the request at frame `index` as cut by a close.
    pub(crate) fn reported_lost(&self, index: usize) -> bool {
        self.lost.contains(&index)
    }
}

/// Frame numbers as ranges: `1-3, 5, 7-8`.
pub use crate::text::number_ranges as frame_ranges;

/// A duration in seconds as people read it: `0.42 ms`, `250.8 ms`, `3.1 s`.
pub use crate::text::duration as duration_text;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_durations_read_as_people_write_them() {
        assert_eq!(frame_ranges(&[1, 2, 3, 5, 7, 8], 10), "1-3, 5, 7-8");
        assert_eq!(frame_ranges(&[1, 3, 5, 7], 2), "1, 3, … 2 more");
        assert_eq!(duration_text(0.00042), "0.42 ms");
        assert_eq!(duration_text(0.2508), "250.8 ms");
        assert_eq!(duration_text(3.12), "3.1 s");
        assert_eq!(duration_text(600.0), "10.0 min");
    }
}
