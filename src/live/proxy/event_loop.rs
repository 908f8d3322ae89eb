//! The proxy's connections on one event-loop thread: a connection costs
//! two sockets and a few small buffers (and its TLS sessions, when a leg
//! speaks TLS: [`Leg`]; its rules' whole frames under `--inject`:
//! [`Rules`]), not threads, so thousands of idle clients take a handful of
//! threads. Each direction holds at most one read's worth of bytes
//! ([`CHUNK`]) waiting for its destination, plus a response held whole to
//! rewrite (at most `rewrite_max`): a side that stops reading stops the
//! reading of the other, as blocking writes would. Under rules a
//! connection holds whole frames instead (up to 256 MiB each way, and the
//! frames decided for the client but not yet taken) and owes at most 4,096
//! answers before its client's next request waits.
//!
//! Listeners still accept on threads of their own (one per broker) and hand
//! each client over through a channel and a [`Waker`].

use super::super::recorder::Event;
use super::faulty::{Rules, Step};
use super::leg::Leg;
use super::{FrameCutter, InFlight, Proxy, Responses, Slot, CHUNK};
use bytes::Bytes;
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token, Waker};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::time::Instant;

/// The token the waker wakes the loop with; a connection's are `2i` (its
/// client) and `2i + 1` (its broker).
const WAKE: Token = Token(usize::MAX);

/// A client accepted for the loop, with the broker's addresses resolved on
/// the accepting thread (a name lookup would stall every connection).
pub(super) struct Accepted {
    pub client: std::net::TcpStream,
    pub broker: String,
    pub addrs: Vec<SocketAddr>,
    pub slot: Slot,
}

/// How listeners hand clients to the loop.
pub(super) struct Handle {
    tx: Sender<Accepted>,
    waker: Waker,
}

impl Handle {
    /// Start the loop on a thread of its own.
    pub fn start(proxy: Arc<Proxy>) -> std::io::Result<Handle> {
        let poll = Poll::new()?;
        let waker = Waker::new(poll.registry(), WAKE)?;
        let (tx, rx) = channel();
        std::thread::Builder::new()
            .name("kwire-proxy-loop".into())
            .spawn(move || Loop::new(proxy, poll, rx).run())?;
        Ok(Handle { tx, waker })
    }

    /// Hand a client to the loop; `false` when the loop has stopped.
    pub fn add(&self, accepted: Accepted) -> bool {
        self.tx.send(accepted).is_ok() && self.waker.wake().is_ok()
    }
}

/// Bytes read and not yet written on, in one direction.
#[derive(Default)]
struct Pending {
    bytes: Bytes,
    /// No more will be read from the source (end of stream or an error).
    ended: bool,
}

/// The broker's side while its connection is being made.
struct Connecting {
    /// Addresses still to try after the current one.
    rest: Vec<SocketAddr>,
    current: SocketAddr,
    deadline: Instant,
}

struct Conn {
    /// The recorder's number for it, given once the broker accepts.
    id: u64,
    broker: String,
    peer: SocketAddr,
    local: SocketAddr,
    client: Leg,
    upstream: Leg,
    connecting: Option<Connecting>,
    requests: Pending,
    responses: Pending,
    cutter: FrameCutter,
    in_flight: InFlight,
    framing: Responses,
    /// The broker's write side was shut after the client's requests ended.
    upstream_shut: bool,
    /// Whether the client's side, then the broker's, may have bytes to
    /// read: cleared when a read finds none, set by their next event (a
    /// read that would find nothing costs a system call, on every turn).
    readable: [bool; 2],
    /// Why the broker's side ended while the client's had not.
    ended_by: Option<String>,
    /// `--inject` rules, which take whole frames both ways.
    rules: Option<Box<Rules>>,
    _slot: Slot,
}

struct Loop {
    proxy: Arc<Proxy>,
    poll: Poll,
    rx: Receiver<Accepted>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    /// Connections whose turn ended with more to move.
    again: Vec<usize>,
    /// When a connection is to be looked at again whatever happens: its
    /// connect's deadline, or the end of a request's delay. (An entry for a
    /// connection that has moved on since costs one look.)
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    buf: Vec<u8>,
}

/// Rounds of reading and writing a connection gets per turn: one that
/// always has more (a bulk producer) waits behind the others' events.
const ROUNDS_PER_TURN: usize = 16;

/// What a connection's turn came to.
enum Turn {
    Open,
    /// Stopped with more to move: it goes again after the others' events.
    Again,
    /// Closed: why the broker's side ended first, if it did.
    Done(Option<String>),
    /// Closed by a fault rule: the proxy, the broker's side as the client
    /// sees it, closed first.
    ClosedByRule,
}

impl Loop {
    fn new(proxy: Arc<Proxy>, poll: Poll, rx: Receiver<Accepted>) -> Loop {
        Loop {
            proxy,
            poll,
            rx,
            conns: Vec::new(),
            free: Vec::new(),
            again: Vec::new(),
            timers: BinaryHeap::new(),
            buf: vec![0; CHUNK],
        }
    }

    fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = match self.again.is_empty() {
                true => (self.timers.peek())
                    .map(|Reverse((at, _))| at.saturating_duration_since(Instant::now())),
                false => Some(std::time::Duration::ZERO),
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                crate::stderr_line!("kwire: proxy: the connections' event loop failed: {e}");
                return;
            }
            for event in events.iter() {
                match event.token() {
                    WAKE => self.take_new(),
                    Token(t) => {
                        // A side with something to read (or an end, or an error) is read again.
                        let news =
                            event.is_readable() || event.is_read_closed() || event.is_error();
                        if let (true, Some(Some(conn))) = (news, self.conns.get_mut(t / 2)) {
                            conn.readable[t % 2] = true;
                        }
                        self.turn(t / 2)
                    }
                }
            }
            for i in std::mem::take(&mut self.again) {
                self.turn(i);
            }
            self.timers_due();
        }
    }

    /// Connections whose time has come: a connect that did not finish in
    /// time tries the next address or closes; a held request goes on.
    fn timers_due(&mut self) {
        let now = Instant::now();
        // All that are due first: a turn may arm another timer.
        let mut due = Vec::new();
        while let Some(&Reverse((at, i))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            due.push(i);
        }
        for i in due {
            let late = self
                .conns
                .get(i)
                .and_then(Option::as_ref)
                .and_then(|c| c.connecting.as_ref());
            match late {
                Some(k) if k.deadline <= now => {
                    if let Turn::Done(why) = self.next_address(i, "connection timed out".into()) {
                        self.close(i, why);
                    }
                }
                Some(_) => {}
                None => self.turn(i),
            }
        }
    }

    fn take_new(&mut self) {
        while let Ok(a) = self.rx.try_recv() {
            self.admit(a);
        }
    }

    fn admit(&mut self, a: Accepted) {
        let _ = a.client.set_nodelay(true);
        let (Ok(peer), Ok(local)) = (a.client.peer_addr(), a.client.local_addr()) else {
            return;
        };
        if a.client.set_nonblocking(true).is_err() {
            return;
        }
        let client_tls = match &self.proxy.cfg.client_tls {
            None => None,
            Some(cfg) => match rustls::ServerConnection::new(Arc::clone(cfg)) {
                Ok(c) => Some(rustls::Connection::Server(c)),
                Err(e) => {
                    crate::stderr_line!("kwire: proxy: TLS towards the client from {peer}: {e}");
                    return;
                }
            },
        };
        let mut addrs = a.addrs;
        addrs.reverse();
        let Some(first) = addrs.pop() else {
            self.refuse(&a.broker, peer, "resolves to no address".into());
            return;
        };
        let upstream = match TcpStream::connect(first) {
            Ok(s) => s,
            Err(e) => {
                self.refuse(&a.broker, peer, format!("connecting to {first}: {e}"));
                return;
            }
        };
        let i = self.free.pop().unwrap_or_else(|| {
            self.conns.push(None);
            self.conns.len() - 1
        });
        let deadline = Instant::now() + self.proxy.cfg.connect_timeout;
        let mut conn = Conn {
            id: 0,
            broker: a.broker,
            peer,
            local,
            client: Leg::plain(TcpStream::from_std(a.client)),
            upstream: Leg::plain(upstream),
            connecting: Some(Connecting {
                rest: addrs,
                current: first,
                deadline,
            }),
            requests: Pending::default(),
            responses: Pending::default(),
            cutter: FrameCutter::default(),
            in_flight: InFlight::default(),
            framing: Responses::default(),
            upstream_shut: false,
            readable: [true; 2],
            ended_by: None,
            rules: (self.proxy.cfg.faults.as_ref()).map(|f| Box::new(Rules::new(Arc::clone(f)))),
            _slot: a.slot,
        };
        let both = Interest::READABLE | Interest::WRITABLE;
        let registry = self.poll.registry();
        if let Some(tls) = client_tls {
            conn.client.start_tls(tls);
        }
        let registered = registry
            .register(&mut conn.client.sock, Token(2 * i), both)
            .and_then(|_| registry.register(&mut conn.upstream.sock, Token(2 * i + 1), both));
        if let Err(e) = registered {
            crate::stderr_line!("kwire: proxy: could not watch a connection from {peer}: {e}");
            self.free.push(i);
            return;
        }
        self.conns[i] = Some(conn);
        self.timers.push(Reverse((deadline, i)));
    }

    /// The broker could not be reached: the client's connection is closed, with a note.
    fn refuse(&self, broker: &str, peer: SocketAddr, why: String) {
        super::say_closing(broker, &why, Some(peer));
    }

    /// Whatever woke connection `i`: finish its connect, then move bytes both ways.
    fn turn(&mut self, i: usize) {
        let Some(Some(conn)) = self.conns.get_mut(i) else {
            return;
        };
        if conn.connecting.is_some() {
            match connect_outcome(&conn.upstream.sock) {
                None => return,
                Some(Err(e)) => {
                    if let Turn::Done(why) = self.next_address(i, e.to_string()) {
                        self.close(i, why);
                    }
                    return;
                }
                Some(Ok(())) => {
                    if let Err(why) = self.connected(i) {
                        self.close(i, Some(why));
                        return;
                    }
                }
            }
        }
        let proxy = Arc::clone(&self.proxy);
        let Some(Some(conn)) = self.conns.get_mut(i) else {
            return;
        };
        let turn = conn.pump(&proxy, &mut self.buf);
        // A request newly held wakes the connection when its delay ends
        // (once: a hold that outlives its time because the client is not
        // reading ends with the client's next event, not a timer).
        if let Some(until) = conn.rules.as_mut().and_then(|r| r.arm_timer()) {
            self.timers.push(Reverse((until, i)));
        }
        match turn {
            Turn::Open => {}
            Turn::Again => self.again.push(i),
            Turn::Done(why) => self.close(i, why),
            Turn::ClosedByRule => self.close_as(i, None, false),
        }
    }

    /// The broker accepted: TLS starts towards it when asked, and the
    /// recorder hears of the connection.
    fn connected(&mut self, i: usize) -> Result<(), String> {
        let Some(Some(conn)) = self.conns.get_mut(i) else {
            return Ok(());
        };
        // TLS first: a connection that fails here was never announced.
        if let Some(cfg) = &self.proxy.cfg.broker_tls {
            let tls = super::super::tls::server_name(&conn.broker).and_then(|name| {
                rustls::ClientConnection::new(Arc::clone(cfg), name).map_err(|e| e.to_string())
            });
            match tls {
                Ok(c) => conn.upstream.start_tls(rustls::Connection::Client(c)),
                Err(e) => return Err(format!("TLS: {e}")),
            }
        }
        conn.connecting = None;
        conn.readable[1] = true;
        let _ = conn.upstream.sock.set_nodelay(true);
        conn.id = self
            .proxy
            .next_conn
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if let Some(r) = &self.proxy.recorder {
            r.record(
                conn.id,
                Event::Open {
                    client: conn.peer,
                    server: conn.local,
                },
            );
        }
        Ok(())
    }

    /// Try the broker's next address after `why` ended the last try.
    fn next_address(&mut self, i: usize, why: String) -> Turn {
        let Some(Some(conn)) = self.conns.get_mut(i) else {
            return Turn::Open;
        };
        let Some(k) = conn.connecting.as_mut() else {
            return Turn::Open;
        };
        let mut failed = format!("connecting to {}: {why}", k.current);
        let (next, mut stream) = loop {
            let Some(next) = k.rest.pop() else {
                return Turn::Done(Some(failed));
            };
            match TcpStream::connect(next) {
                Ok(s) => break (next, s),
                Err(e) => failed = format!("connecting to {next}: {e}"),
            }
        };
        let registry = self.poll.registry();
        let _ = registry.deregister(&mut conn.upstream.sock);
        let both = Interest::READABLE | Interest::WRITABLE;
        if let Err(e) = registry.register(&mut stream, Token(2 * i + 1), both) {
            return Turn::Done(Some(e.to_string()));
        }
        conn.upstream = Leg::plain(stream);
        k.current = next;
        k.deadline = Instant::now() + self.proxy.cfg.connect_timeout;
        self.timers.push(Reverse((k.deadline, i)));
        Turn::Open
    }

    /// Close connection `i`: both sockets, a note when the broker's side
    /// ended first, and the recorder told who closed.
    fn close(&mut self, i: usize, ended_by: Option<String>) {
        let by_client = ended_by.is_none();
        self.close_as(i, ended_by, by_client);
    }

    /// [`Loop::close`], saying who closed first (`by_client`).
    fn close_as(&mut self, i: usize, ended_by: Option<String>, by_client: bool) {
        let Some(conn) = self.conns.get_mut(i).and_then(Option::take) else {
            return;
        };
        self.free.push(i);
        if let Some(why) = &ended_by {
            super::say_closing(&conn.broker, why, Some(conn.peer));
        }
        conn.client.shutdown();
        conn.upstream.shutdown();
        // A connection the broker never accepted was never announced.
        if conn.connecting.is_none() {
            if let Some(r) = &self.proxy.recorder {
                r.record(conn.id, Event::Close { by_client });
            }
        }
    }
}

/// Where a non-blocking connect stands: `None` while in progress.
fn connect_outcome(s: &TcpStream) -> Option<std::io::Result<()>> {
    match s.take_error() {
        Ok(Some(e)) | Err(e) => return Some(Err(e)),
        Ok(None) => {}
    }
    match s.peer_addr() {
        Ok(_) => Some(Ok(())),
        Err(e) if e.kind() == ErrorKind::NotConnected => None,
        Err(e) => Some(Err(e)),
    }
}

/// Write as much of `pending` as `to` takes now; `Err` when it failed.
fn write_some(to: &mut Leg, pending: &mut Bytes) -> std::io::Result<()> {
    while !pending.is_empty() {
        match to.write(pending) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(n) => {
                let _ = pending.split_to(n);
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Conn {
    /// Move bytes both ways until neither socket takes or gives more now
    /// (events are edge-triggered: what is left unread raises no new one).
    fn pump(&mut self, proxy: &Arc<Proxy>, buf: &mut [u8]) -> Turn {
        for _ in 0..ROUNDS_PER_TURN {
            // What waits for a socket first: TLS records, a shut write side.
            if self.client.flush().is_err() {
                return Turn::Done(None);
            }
            if self.upstream.flush().is_err() {
                self.requests.bytes.clear();
                self.requests.ended = true;
            }
            let ruled = self.rules.is_some();
            let requests = match ruled {
                false => self.pump_requests(proxy, buf),
                true => self.pump_ruled_requests(proxy, buf),
            };
            let responses = requests.and_then(|requests| {
                let responses = match ruled {
                    false => self.pump_responses(proxy, buf),
                    true => self.pump_ruled_responses(proxy, buf),
                };
                Ok((requests, responses?))
            });
            let (requests, responses) = match responses {
                Ok(moved) => moved,
                Err(done) => return done,
            };
            // A TLS session that took bytes may have let written plaintext go.
            let sessions = self.client.took_bytes() | self.upstream.took_bytes();
            if !requests && !responses && !sessions {
                return Turn::Open;
            }
        }
        Turn::Again
    }

    /// Client → broker: each request's header read on the way for the API
    /// and version of its response. Whether anything moved.
    fn pump_requests(&mut self, proxy: &Proxy, buf: &mut [u8]) -> Result<bool, Turn> {
        let mut moved = false;
        self.forward_requests();
        if self.requests.bytes.is_empty() && !self.requests.ended && self.readable[0] {
            match self.client.read(buf) {
                Ok(None) => self.readable[0] = false,
                Ok(Some(0)) | Err(_) => self.requests.ended = true,
                Ok(Some(n)) => {
                    let chunk = &buf[..n];
                    let in_flight = &mut self.in_flight;
                    self.cutter.feed(chunk, &mut |head| {
                        if let Some((api, version, corr)) = super::request_head(head) {
                            in_flight.sent(corr, api, version);
                        }
                    });
                    let bytes = Bytes::copy_from_slice(chunk);
                    // Recorded before it is forwarded: its response cannot be recorded before it.
                    self.record(proxy, true, &bytes);
                    self.requests.bytes = bytes;
                    // On at once: a round trip waits for no other socket.
                    self.forward_requests();
                    moved = true;
                }
            }
        }
        self.end_requests_when_done();
        Ok(moved)
    }

    /// Once the client's requests have ended and all went on, the broker hears the end.
    fn end_requests_when_done(&mut self) {
        let held = self.rules.as_ref().is_some_and(|r| r.held.is_some());
        if self.requests.ended && self.requests.bytes.is_empty() && !held && !self.upstream_shut {
            self.upstream_shut = true;
            self.upstream.end_writing();
        }
    }

    /// Client → broker under rules: a whole request at a time, each decided
    /// by the rules; the next waits until the broker took this one and the
    /// client took what it was sent (so a client that stops reading stops
    /// its requests, as a broker's full socket would).
    fn pump_ruled_requests(&mut self, proxy: &Arc<Proxy>, buf: &mut [u8]) -> Result<bool, Turn> {
        let mut moved = false;
        self.forward_requests();
        while let Some(rules) = self.rules.as_deref_mut() {
            if !self.requests.bytes.is_empty()
                || !rules.to_client.is_empty()
                || rules.owes_too_many()
            {
                break;
            }
            if let Some((_, until)) = &rules.held {
                if Instant::now() < *until {
                    break;
                }
                if let Some((frame, _)) = rules.held.take() {
                    self.requests.bytes = Bytes::from(frame);
                    self.forward_requests();
                    moved = true;
                }
                continue;
            }
            match rules.next_request(proxy, self.id, self.peer) {
                Ok(Some(Step::Forward(frame))) => {
                    self.requests.bytes = Bytes::from(frame);
                    self.forward_requests();
                }
                Ok(Some(Step::Hold(frame, until))) => rules.held = Some((frame, until)),
                Ok(Some(Step::Answered)) => {}
                Ok(Some(Step::Close)) => return Err(Turn::ClosedByRule),
                Err(e) => {
                    let said = format!("a client's request: {e}; closing");
                    proxy.warn(&format!("inject read {e}"), &said);
                    self.requests.ended = true;
                    break;
                }
                Ok(None) => {
                    if self.requests.ended || !self.readable[0] {
                        break;
                    }
                    match self.client.read(buf) {
                        Ok(None) => self.readable[0] = false,
                        Ok(Some(0)) | Err(_) => self.requests.ended = true,
                        Ok(Some(n)) => rules.take_requests(&buf[..n]),
                    }
                    if self.requests.ended || !self.readable[0] {
                        break;
                    }
                }
            }
            moved = true;
        }
        self.end_requests_when_done();
        Ok(moved)
    }

    /// Broker → client under rules: whole responses, delivered, dropped or
    /// sent twice as the rules owe, with the answers made up in their turn.
    fn pump_ruled_responses(&mut self, proxy: &Arc<Proxy>, buf: &mut [u8]) -> Result<bool, Turn> {
        let mut moved = false;
        loop {
            if write_some(&mut self.client, &mut self.responses.bytes).is_err() {
                return Err(Turn::Done(None));
            }
            if !self.responses.bytes.is_empty() {
                return Ok(moved);
            }
            match self
                .rules
                .as_deref_mut()
                .and_then(|r| r.to_client.pop_front())
            {
                Some(next) => {
                    self.responses.bytes = next;
                    moved = true;
                }
                None => break,
            }
        }
        if self.responses.ended {
            return self.end_responses();
        }
        if !self.readable[1] {
            return Ok(moved);
        }
        let n = match self.read_responses(buf) {
            Some(n) => n,
            None => return Ok(true),
        };
        let Some(rules) = self.rules.as_deref_mut() else {
            return Ok(true);
        };
        if let Err(e) = rules.take_responses(proxy, self.id, &self.broker, &buf[..n]) {
            self.responses.ended = true;
            if !self.requests.ended {
                self.ended_by = Some(e);
            }
        }
        Ok(true)
    }

    /// The broker's side has ended: the client's ends once all it is owed
    /// is sent (TLS records, a close_notify), then the connection closes.
    fn end_responses(&mut self) -> Result<bool, Turn> {
        self.client.end_writing();
        match self.client.write_done() {
            true => Err(Turn::Done(self.ended_by.take())),
            false => Ok(false),
        }
    }

    /// One read of the broker's side: the bytes read, or `None` when there
    /// were none now (marked) or the side ended (marked, with why).
    fn read_responses(&mut self, buf: &mut [u8]) -> Option<usize> {
        let why = match self.upstream.read(buf) {
            Ok(None) => {
                self.readable[1] = false;
                return None;
            }
            Ok(Some(0)) => "closed the connection".to_string(),
            Err(e) => format!("reading: {e}"),
            Ok(Some(n)) => return Some(n),
        };
        self.responses.ended = true;
        if !self.requests.ended {
            self.ended_by = Some(why);
        }
        None
    }

    /// The recorder's copy of bytes that pass.
    fn record(&self, proxy: &Proxy, from_client: bool, bytes: &Bytes) {
        if let Some(r) = &proxy.recorder {
            let bytes = bytes.clone();
            r.record(self.id, Event::Data { from_client, bytes });
        }
    }

    /// Write what the client sent on to the broker, as much as it takes now.
    fn forward_requests(&mut self) {
        if write_some(&mut self.upstream, &mut self.requests.bytes).is_err() {
            // The broker takes no more: the requests end here, as when the client ends them.
            self.requests.bytes.clear();
            self.requests.ended = true;
        }
    }

    /// Broker → client: responses stream through, except those rewritten.
    /// Whether anything moved, or `Err` with the end of the connection.
    fn pump_responses(&mut self, proxy: &Arc<Proxy>, buf: &mut [u8]) -> Result<bool, Turn> {
        if write_some(&mut self.client, &mut self.responses.bytes).is_err() {
            // The client is gone.
            return Err(Turn::Done(None));
        }
        if !self.responses.bytes.is_empty() {
            return Ok(false);
        }
        if self.responses.ended {
            return self.end_responses();
        }
        if !self.readable[1] {
            return Ok(false);
        }
        let Some(n) = self.read_responses(buf) else {
            return Ok(self.responses.ended);
        };
        let in_flight = &mut self.in_flight;
        let out = self
            .framing
            .feed(proxy, &self.broker, &buf[..n], &mut |corr| {
                in_flight.answered(corr)
            });
        if !out.is_empty() {
            let bytes = Bytes::from(out);
            // Recorded before it is forwarded: the client's next request cannot be recorded before it.
            self.record(proxy, false, &bytes);
            self.responses.bytes = bytes;
            if write_some(&mut self.client, &mut self.responses.bytes).is_err() {
                return Err(Turn::Done(None));
            }
        }
        Ok(true)
    }
}
