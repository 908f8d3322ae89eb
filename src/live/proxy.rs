//! The decoding proxy: clients connect to kwire, kwire forwards every byte
//! to the broker and back unchanged, except the broker endpoints in
//! responses (see [`super::endpoints`]), which point at kwire's own
//! listeners, one per broker the cluster names. Requests and responses
//! stream through as they arrive; only responses that can carry endpoints
//! (and are at most `rewrite_max` bytes) are held whole to be rewritten.
//! Copies of what the client sent and received go to the recorder, off the
//! forwarding path. Every connection is served by one event loop
//! (`event_loop`); `--inject` rules (`faulty`) hold frames whole both ways.

mod event_loop;
mod faulty;
mod leg;
mod settings;

use super::endpoints::{carries_endpoints, rewrite, Rewritten};
use super::faults::Faults;
use super::recorder::Recorder;
use crate::protocol::headers::PRODUCE_KEY;
use crate::schema::Catalogue;
use std::collections::{HashMap, VecDeque};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

pub use settings::{Settings, SettingsError};

/// Bytes read from a socket at once.
const CHUNK: usize = 64 * 1024;
/// Ports tried upward from the last one when a new broker needs a listener.
const PORT_TRIES: u16 = 64;

/// How the proxy is set up.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where clients connect for the bootstrap broker.
    pub listen: SocketAddr,
    /// The host name put in rewritten responses (default: the listen address).
    pub advertise_host: String,
    /// The bootstrap broker, HOST:PORT.
    pub broker: String,
    /// Explicit listeners for brokers: HOST:PORT as the cluster names it → local address.
    pub maps: Vec<(String, SocketAddr)>,
    pub connect_timeout: Duration,
    /// Largest response held whole to rewrite its endpoints; larger ones stream as they came.
    pub rewrite_max: usize,
    /// Client connections served at once, all listeners together; one more
    /// is closed as soon as it is accepted. All share one event-loop thread.
    pub max_connections: usize,
    pub release: Option<String>,
    /// TLS towards clients (the proxy's certificate and key).
    pub client_tls: Option<Arc<rustls::ServerConfig>>,
    /// TLS towards the broker (trusting the given CA).
    pub broker_tls: Option<Arc<rustls::ClientConfig>>,
    /// `--inject` rules: with any, frames are held whole both ways (see `faulty`).
    pub faults: Option<Arc<Faults>>,
}

/// A client connection's place among [`Config::max_connections`], given back when dropped.
struct Slot(Arc<Proxy>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The listeners and what each forwards to.
pub struct Proxy {
    cat: &'static Catalogue,
    cfg: Config,
    /// Broker (HOST:PORT as named) → the local address that forwards to it.
    routes: Mutex<HashMap<String, SocketAddr>>,
    recorder: Option<Recorder>,
    next_conn: AtomicU64,
    /// Client connections being served now.
    open: AtomicUsize,
    /// Connections refused over [`Config::max_connections`] since it was last said.
    refused: AtomicUsize,
    /// Warnings go to standard error once per kind of trouble and API.
    warned: Mutex<std::collections::HashSet<String>>,
    /// The event loop that serves the connections (set once started).
    event_loop: OnceLock<event_loop::Handle>,
}

impl Proxy {
    /// Bind the bootstrap listener and the explicit ones; serve them on threads of their own.
    pub fn start(
        cat: &'static Catalogue,
        cfg: Config,
        recorder: Option<Recorder>,
    ) -> Result<Arc<Proxy>, String> {
        let proxy = Arc::new(Proxy {
            cat,
            cfg: cfg.clone(),
            routes: Mutex::new(HashMap::new()),
            recorder,
            next_conn: AtomicU64::new(0),
            open: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
            warned: Mutex::new(Default::default()),
            event_loop: OnceLock::new(),
        });
        raise_open_files_limit();
        let handle = event_loop::Handle::start(Arc::clone(&proxy))
            .map_err(|e| format!("the connections' event loop: {e}"))?;
        let _ = proxy.event_loop.set(handle);
        let bootstrap =
            TcpListener::bind(cfg.listen).map_err(|e| format!("--listen {}: {e}", cfg.listen))?;
        proxy.route(cfg.broker.clone(), bootstrap)?;
        for (broker, local) in &cfg.maps {
            if proxy
                .routes
                .lock()
                .map(|r| r.contains_key(broker))
                .unwrap_or(false)
            {
                continue;
            }
            let l = TcpListener::bind(local).map_err(|e| format!("--map {broker}={local}: {e}"))?;
            proxy.route(broker.clone(), l)?;
        }
        Ok(proxy)
    }

    #[cfg(test)]
    /// The local addresses and the brokers they forward to.
    fn routes(&self) -> Vec<(SocketAddr, String)> {
        let mut r: Vec<(SocketAddr, String)> = self
            .routes
            .lock()
            .map(|r| r.iter().map(|(b, l)| (*l, b.clone())).collect())
            .unwrap_or_default();
        r.sort();
        r
    }

    #[cfg(test)]
    /// Client connections being served now.
    fn open_connections(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    fn route(
        self: &Arc<Self>,
        broker: String,
        listener: TcpListener,
    ) -> Result<SocketAddr, String> {
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        if let Ok(mut r) = self.routes.lock() {
            r.insert(broker.clone(), local);
        }
        crate::stderr_line!("kwire: proxy: {local} forwards to {broker}");
        let me = Arc::clone(self);
        std::thread::Builder::new()
            .name(format!("kwire-listen-{local}"))
            .spawn(move || me.serve(listener, broker))
            .map_err(|e| e.to_string())?;
        Ok(local)
    }

    /// The local address for `broker`: its listener, started on the first port free above the last one.
    fn local_for(self: &Arc<Self>, broker: &str) -> Option<SocketAddr> {
        let mut routes = self.routes.lock().ok()?;
        if let Some(l) = routes.get(broker) {
            return Some(*l);
        }
        let highest = routes
            .values()
            .map(SocketAddr::port)
            .max()
            .unwrap_or(self.cfg.listen.port());
        drop(routes);
        for port in (1..=PORT_TRIES).filter_map(|k| highest.checked_add(k)) {
            let addr = SocketAddr::new(self.cfg.listen.ip(), port);
            if let Ok(l) = TcpListener::bind(addr) {
                routes = self.routes.lock().ok()?;
                // Another connection may have started one meanwhile: keep theirs.
                if let Some(l) = routes.get(broker) {
                    return Some(*l);
                }
                drop(routes);
                return self.route(broker.to_string(), l).ok();
            }
        }
        self.warn(&format!("no free port for {broker}"), &format!("no free local port above {highest} for broker {broker}: its endpoint is forwarded unchanged"));
        None
    }

    fn serve(self: Arc<Self>, listener: TcpListener, broker: String) {
        for client in listener.incoming() {
            match client {
                Ok(c) => {
                    let Some(slot) = self.admit(&c) else {
                        continue;
                    };
                    if let Some(event_loop) = self.event_loop.get() {
                        self.to_event_loop(event_loop, c, &broker, slot);
                    }
                }
                Err(e) => {
                    crate::stderr_line!("kwire: proxy: accepting a connection for {broker}: {e}")
                }
            }
        }
    }

    /// Hand a client to the event loop, with the broker's addresses.
    fn to_event_loop(
        &self,
        event_loop: &event_loop::Handle,
        client: TcpStream,
        broker: &str,
        slot: Slot,
    ) {
        let addrs = match broker.to_socket_addrs() {
            Ok(a) => a.collect(),
            Err(e) => {
                say_closing(broker, &e.to_string(), client.peer_addr().ok());
                let _ = client.shutdown(Shutdown::Both);
                return;
            }
        };
        let accepted = event_loop::Accepted {
            client,
            broker: broker.to_string(),
            addrs,
            slot,
        };
        if !event_loop.add(accepted) {
            crate::stderr_line!("kwire: proxy: the connections' event loop has stopped");
        }
    }

    /// A slot for a new client connection, or `None` when
    /// [`Config::max_connections`] are open: the client is closed at once,
    /// and standard error says so (once, then how many more every second).
    fn admit(self: &Arc<Self>, client: &TcpStream) -> Option<Slot> {
        let open = self.open.fetch_add(1, Ordering::AcqRel);
        if open < self.cfg.max_connections {
            return Some(Slot(Arc::clone(self)));
        }
        self.open.fetch_sub(1, Ordering::AcqRel);
        let refused = self.refused.fetch_add(1, Ordering::AcqRel) + 1;
        let _ = client.shutdown(Shutdown::Both);
        if refused.is_power_of_two() {
            crate::stderr_line!(
                "kwire: proxy: refused a connection{}: {} connections are open (--max-connections); {refused} refused so far",
                client.peer_addr().map(|p| format!(" from {p}")).unwrap_or_default(),
                self.cfg.max_connections
            );
        }
        None
    }

    /// A whole response rewritten when it can carry endpoints and is within `rewrite_max`.
    fn rewritten_if_needed(
        self: &Arc<Self>,
        frame: Vec<u8>,
        api: (i16, i16),
        broker: &str,
    ) -> Vec<u8> {
        if frame.len() <= self.cfg.rewrite_max
            && carries_endpoints(self.cat, self.cfg.release.as_deref(), api.0, api.1)
        {
            self.rewritten(frame, api, broker)
        } else {
            frame
        }
    }

    /// A whole response with its endpoints pointed at the proxy, or as it came when that cannot be done.
    fn rewritten(
        self: &Arc<Self>,
        frame: Vec<u8>,
        (api, version): (i16, i16),
        broker: &str,
    ) -> Vec<u8> {
        let host = self.cfg.advertise_host.clone();
        let mut map = |h: &str, p: i32| {
            let named = format!("{h}:{p}");
            let local = self.local_for(&named)?;
            Some((host.clone(), i32::from(local.port())))
        };
        match rewrite(
            self.cat,
            self.cfg.release.as_deref(),
            (api, version),
            &frame,
            &mut map,
        ) {
            Ok(Rewritten::Frame(new, _)) => new,
            Ok(Rewritten::Unchanged) => frame,
            Err(why) => {
                let name = self.cat.api_name(api).unwrap_or("?");
                self.warn(
                    &format!("{api}/{version}"),
                    &format!(
                        "a {name} v{version} response from {broker} is forwarded as it came: {why}"
                    ),
                );
                frame
            }
        }
    }

    fn warn(&self, key: &str, message: &str) {
        if self
            .warned
            .lock()
            .map(|mut w| w.insert(key.to_string()))
            .unwrap_or(true)
        {
            crate::stderr_line!("kwire: proxy: {}", crate::text::escape::sanitize(message));
        }
    }
}

/// Raise the soft limit on open files to the hard one: each proxied
/// connection holds two descriptors, and a soft limit of 1,024 would refuse
/// clients long before `--max-connections`.
fn raise_open_files_limit() {
    #[cfg(unix)]
    // SAFETY: getrlimit and setrlimit only read and write the struct given.
    unsafe {
        let mut lim = std::mem::zeroed::<libc::rlimit>();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// A frame's whole length from its first 4 bytes (a negative size counts as 0).
fn frame_total(head: &[u8]) -> usize {
    usize::try_from(i32::from_be_bytes([head[0], head[1], head[2], head[3]]))
        .unwrap_or(0)
        .saturating_add(4)
}

/// Requests awaiting their responses on one connection, in the order sent.
#[derive(Default)]
struct InFlight {
    /// Correlation id, api key, version.
    sent: VecDeque<(i32, i16, i16)>,
}

/// Requests remembered per connection at most: beyond, the oldest are forgotten
/// (their responses then pass as they come, endpoints unchanged).
const IN_FLIGHT_MAX: usize = 4096;

impl InFlight {
    fn sent(&mut self, corr: i32, api: i16, version: i16) {
        if self.sent.len() >= IN_FLIGHT_MAX {
            self.sent.pop_front();
        }
        self.sent.push_back((corr, api, version));
    }

    /// The API and version of the request `corr` answers. A broker answers
    /// in order, and only Produce requests with acks=0 go unanswered: the
    /// Produce requests sent before this one are forgotten with it.
    fn answered(&mut self, corr: i32) -> Option<(i16, i16)> {
        let i = self.sent.iter().position(|&(c, _, _)| c == corr)?;
        let (_, api, version) = self.sent.remove(i)?;
        let mut k = 0;
        self.sent.retain(|&(_, a, _)| {
            k += 1;
            k > i || a != PRODUCE_KEY
        });
        Some((api, version))
    }
}

/// A request's api key, version and correlation id from the first 12 bytes
/// of its frame (a frame shorter than a request header has none).
fn request_head(frame: &[u8]) -> Option<(i16, i16, i32)> {
    (frame.len() >= 12).then(|| {
        (
            i16::from_be_bytes([frame[4], frame[5]]),
            i16::from_be_bytes([frame[6], frame[7]]),
            i32::from_be_bytes([frame[8], frame[9], frame[10], frame[11]]),
        )
    })
}

/// Said on stderr when the broker's side ends a client's connection (or never opened).
fn say_closing(broker: &str, why: &str, peer: Option<SocketAddr>) {
    crate::stderr_line!(
        "kwire: proxy: broker {broker}: {why}; closing the client's connection{}",
        peer.map(|p| format!(" from {p}")).unwrap_or_default()
    );
}

/// Finds frame boundaries in a byte stream read in chunks, handing on the
/// first 12 bytes of each frame (size, api key, version, correlation id).
#[derive(Default)]
struct FrameCutter {
    head: Vec<u8>,
    /// Bytes of the current frame's body still to skip.
    skip: usize,
}

impl FrameCutter {
    fn feed(&mut self, mut chunk: &[u8], on_head: &mut dyn FnMut(&[u8])) {
        while !chunk.is_empty() {
            if self.skip > 0 {
                let k = self.skip.min(chunk.len());
                self.skip -= k;
                chunk = &chunk[k..];
                continue;
            }
            // The size first, then as much of a request header as the frame holds.
            let want = if self.head.len() < 4 {
                4
            } else {
                frame_total(&self.head).min(12)
            };
            let k = (want - self.head.len()).min(chunk.len());
            self.head.extend_from_slice(&chunk[..k]);
            chunk = &chunk[k..];
            if self.head.len() < 4 {
                continue;
            }
            let total = frame_total(&self.head);
            if self.head.len() < total.min(12) {
                continue;
            }
            // A frame shorter than a request header (a SASL token) is skipped whole (its bytes still pass).
            if total >= 12 {
                on_head(&self.head);
            }
            self.skip = total - self.head.len();
            self.head.clear();
        }
    }
}

/// Broker → client bytes cut into responses as they come: each streams
/// through, except one that may carry endpoints (and is at most
/// `rewrite_max` bytes), which is held whole and rewritten.
#[derive(Default)]
struct Responses {
    /// A response's size and correlation id until its API is known, or a whole response to rewrite.
    held: Vec<u8>,
    /// Bytes of the current response still to pass, once decided.
    streaming: usize,
    /// The size and API of the response being held whole.
    whole: Option<(usize, (i16, i16))>,
}

impl Responses {
    /// What of `chunk` (and of what was held before it) passes on now;
    /// `answered` names the API and version of the request a correlation id answers.
    fn feed(
        &mut self,
        proxy: &Arc<Proxy>,
        broker: &str,
        mut chunk: &[u8],
        answered: &mut dyn FnMut(i32) -> Option<(i16, i16)>,
    ) -> Vec<u8> {
        let mut out: Vec<u8> = Vec::new();
        let held = &mut self.held;
        while !chunk.is_empty() {
            if self.streaming > 0 {
                let k = self.streaming.min(chunk.len());
                out.extend_from_slice(&chunk[..k]);
                self.streaming -= k;
                chunk = &chunk[k..];
                continue;
            }
            if let Some((total, api)) = self.whole {
                let k = (total - held.len()).min(chunk.len());
                held.extend_from_slice(&chunk[..k]);
                chunk = &chunk[k..];
                if held.len() == total {
                    let frame = std::mem::take(held);
                    out.extend_from_slice(&proxy.rewritten(frame, api, broker));
                    self.whole = None;
                }
                continue;
            }
            // The size first: a frame too short for a correlation id (an
            // empty SASL token, after SaslHandshake v0) passes as it is,
            // and the next frame starts after it.
            let want = if held.len() < 4 {
                4
            } else {
                frame_total(held).min(8)
            };
            let k = (want - held.len()).min(chunk.len());
            held.extend_from_slice(&chunk[..k]);
            chunk = &chunk[k..];
            if held.len() < 4 {
                continue;
            }
            let total = frame_total(held);
            if total < 8 {
                out.append(held);
                self.streaming = total - 4;
                continue;
            }
            if held.len() < 8 {
                continue;
            }
            let corr = i32::from_be_bytes([held[4], held[5], held[6], held[7]]);
            let api = answered(corr);
            let (cat, release) = (proxy.cat, proxy.cfg.release.as_deref());
            match api {
                Some(api)
                    if total <= proxy.cfg.rewrite_max
                        && carries_endpoints(cat, release, api.0, api.1) =>
                {
                    held.reserve_exact(total - held.len());
                    self.whole = Some((total, api));
                    if held.len() == total {
                        let frame = std::mem::take(held);
                        out.extend_from_slice(&proxy.rewritten(frame, api, broker));
                        self.whole = None;
                    }
                }
                _ => {
                    if let Some(api) = api.filter(|a| carries_endpoints(cat, release, a.0, a.1)) {
                        proxy.warn(&format!("large {api:?}"), &format!("a response of api {} v{} over --rewrite-max ({total} bytes) passes unchanged: endpoints in it are the broker's", api.0, api.1));
                    }
                    out.append(held);
                    self.streaming = total - 8;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    /// A proxy on a free local port for the broker at `broker`.
    fn test_config(broker: SocketAddr, max_connections: usize) -> Config {
        Config {
            faults: None,
            listen: "127.0.0.1:0".parse().unwrap(),
            advertise_host: "127.0.0.1".into(),
            broker: broker.to_string(),
            maps: Vec::new(),
            connect_timeout: Duration::from_secs(5),
            rewrite_max: 1 << 20,
            max_connections,
            release: None,
            client_tls: None,
            broker_tls: None,
        }
    }

    /// A Metadata v12 request header with correlation id `corr` and `body` zero bytes after it.
    fn request(corr: i32, body: usize) -> Vec<u8> {
        let mut f = (8 + body as i32).to_be_bytes().to_vec();
        f.extend_from_slice(&3i16.to_be_bytes());
        f.extend_from_slice(&12i16.to_be_bytes());
        f.extend_from_slice(&corr.to_be_bytes());
        f.resize(f.len() + body, 0);
        f
    }

    /// The correlation ids the cutter finds in `stream`, fed in chunks of every given size.
    fn assert_cut(stream: &[u8], chunk_lens: &[usize], expected: &[i32]) {
        for &chunk_len in chunk_lens {
            let mut cut = FrameCutter::default();
            let mut seen = Vec::new();
            for c in stream.chunks(chunk_len) {
                cut.feed(c, &mut |h| {
                    seen.push(i32::from_be_bytes([h[8], h[9], h[10], h[11]]))
                });
            }
            assert_eq!(seen, expected, "chunks of {chunk_len}");
        }
    }

    #[test]
    fn the_cutter_finds_each_frame_s_header_across_chunks() {
        let stream: Vec<u8> = [1, 2, 3]
            .into_iter()
            .flat_map(|corr| request(corr, 12))
            .collect();
        assert_cut(&stream, &[1, 5, 13, 100], &[1, 2, 3]);
    }

    #[test]
    fn frames_shorter_than_a_header_do_not_shift_the_next_ones() {
        // A SASL token of 5 bytes, an empty one, then requests.
        let mut stream = request(1, 2);
        stream.extend_from_slice(&[0, 0, 0, 5, 0, b'a', 0, b'b', 0]);
        stream.extend_from_slice(&[0, 0, 0, 0]);
        stream.extend(request(2, 2));
        stream.extend(request(3, 2));
        assert_cut(&stream, &[1, 3, 7, 100], &[1, 2, 3]);
    }

    #[test]
    fn unanswered_produce_requests_are_forgotten_when_a_later_request_is_answered() {
        let mut m = InFlight::default();
        m.sent(1, 0, 9); // Produce acks=0: never answered
        m.sent(2, 3, 12);
        m.sent(3, 0, 9);
        m.sent(4, 18, 3);
        assert_eq!(m.answered(2), Some((3, 12)));
        assert_eq!(
            m.sent.len(),
            2,
            "the Produce request before it is forgotten"
        );
        assert_eq!(m.answered(1), None);
        assert_eq!(m.answered(4), Some((18, 3)));
        assert!(m.sent.is_empty());
        for c in 0..(IN_FLIGHT_MAX as i32 + 10) {
            m.sent(c, 0, 9);
        }
        assert_eq!(m.sent.len(), IN_FLIGHT_MAX);
    }

    /// A broker on a socket of the test's own: it answers a SASL token with an
    /// empty one, then a Metadata request with a response naming itself.
    #[test]
    fn a_metadata_response_after_sasl_tokens_is_still_rewritten() {
        use crate::decode::{decode_frame, DecodeOptions, Direction};
        use crate::encode::{encode_frame, FrameSpec};
        use serde_json::json;
        let cat = Catalogue::builtin();
        let broker = TcpListener::bind("127.0.0.1:0").unwrap();
        let broker_addr = broker.local_addr().unwrap();
        let response = {
            let fs = FrameSpec {
                direction: Direction::Response,
                api_key: 3,
                version: 1,
                release: None,
            };
            let body = json!({"Brokers": [{"NodeId": 1, "Host": "127.0.0.1", "Port": broker_addr.port(), "Rack": null}], "ControllerId": 1, "Topics": []});
            encode_frame(
                cat,
                &fs,
                json!({"CorrelationId": 2}).as_object().unwrap(),
                body.as_object().unwrap(),
            )
            .unwrap()
        };
        let request = {
            let fs = FrameSpec {
                direction: Direction::Request,
                api_key: 3,
                version: 1,
                release: None,
            };
            encode_frame(
                cat,
                &fs,
                json!({"CorrelationId": 2, "ClientId": "t"})
                    .as_object()
                    .unwrap(),
                json!({"Topics": null}).as_object().unwrap(),
            )
            .unwrap()
        };
        let (req_len, resp) = (request.len(), response.clone());
        let served = std::thread::spawn(move || {
            let (mut s, _) = broker.accept().unwrap();
            let mut token = [0u8; 9];
            s.read_exact(&mut token).unwrap();
            s.write_all(&[0, 0, 0, 0]).unwrap();
            let mut req = vec![0u8; req_len];
            s.read_exact(&mut req).unwrap();
            s.write_all(&resp).unwrap();
            let _ = s.read(&mut [0u8; 1]);
        });
        let cfg = test_config(broker_addr, 64);
        let proxy = Proxy::start(cat, cfg, None).unwrap();
        let local = proxy.routes()[0].0;
        let mut c = TcpStream::connect(local).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(&[0, 0, 0, 5, 0, b'a', 0, b'b', 0]).unwrap();
        let mut empty = [0u8; 4];
        c.read_exact(&mut empty).unwrap();
        assert_eq!(empty, [0, 0, 0, 0]);
        c.write_all(&request).unwrap();
        let mut size = [0u8; 4];
        c.read_exact(&mut size).unwrap();
        let mut got = size.to_vec();
        got.resize(4 + i32::from_be_bytes(size) as usize, 0);
        c.read_exact(&mut got[4..]).unwrap();
        drop(c);
        served.join().unwrap();
        let opts = DecodeOptions {
            direction: Some(Direction::Response),
            api_key: Some(3),
            api_version: Some(1),
            values_only: true,
            ..Default::default()
        };
        let v = crate::render::json::frame_contract(&decode_frame(cat, got.into(), 0, &opts));
        assert_eq!(
            v["body"]["Brokers"][0]["Port"],
            i64::from(local.port()),
            "{v}"
        );
    }

    /// Bytes a broker that sends 64 KiB responses without end got through
    /// to a client that reads nothing, once its writes stopped: the proxy
    /// stops reading from the broker once its buffer and the sockets' are
    /// full, instead of holding everything the broker sends.
    fn taken_from_an_endless_broker(faults: Option<Arc<Faults>>) -> usize {
        let cat = Catalogue::builtin();
        let broker = TcpListener::bind("127.0.0.1:0").unwrap();
        let broker_addr = broker.local_addr().unwrap();
        let sent = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&sent);
        std::thread::spawn(move || {
            let (mut s, _) = broker.accept().unwrap();
            let mut frame = vec![0u8; 64 << 10];
            frame[..4].copy_from_slice(&((64 << 10) - 4i32).to_be_bytes());
            while s.write_all(&frame).is_ok() {
                counted.fetch_add(frame.len(), Ordering::Relaxed);
            }
        });
        let cfg = Config {
            faults,
            ..test_config(broker_addr, 8)
        };
        let proxy = Proxy::start(cat, cfg, None).unwrap();
        let client = TcpStream::connect(proxy.routes()[0].0).unwrap();
        // Until the broker's writes stop going through.
        let mut last = usize::MAX;
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(100));
            let now = sent.load(Ordering::Relaxed);
            if now == last && now > 0 {
                break;
            }
            last = now;
        }
        let sent = sent.load(Ordering::Relaxed);
        assert_eq!(sent, last, "the broker's writes never stopped");
        drop(client);
        sent
    }

    #[test]
    fn a_client_that_stops_reading_stops_the_broker_s_sending() {
        // What the sockets' buffers hold on both legs, and one read's worth in the proxy.
        let sent = taken_from_an_endless_broker(None);
        assert!(sent < 64 << 20, "{sent} bytes taken from the broker");
    }

    /// Under rules too: the next response is read only once the client took the last.
    #[test]
    fn a_client_that_stops_reading_under_rules_stops_the_broker_s_sending() {
        let cat = Catalogue::builtin();
        let rule = super::super::faults::parse_rule(cat, "Produce:drop", 1, 0).unwrap();
        let faults = Arc::new(Faults { rules: vec![rule] });
        let sent = taken_from_an_endless_broker(Some(faults));
        assert!(sent < 64 << 20, "{sent} bytes taken from the broker");
    }

    /// A stand-in broker on a free port: each connection served on a thread by `serve`.
    fn broker_serving(serve: fn(TcpStream)) -> SocketAddr {
        let broker = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = broker.local_addr().unwrap();
        std::thread::spawn(move || {
            for s in broker.incoming().flatten() {
                std::thread::spawn(move || serve(s));
            }
        });
        addr
    }

    /// A request header of `api` v0 with correlation id `corr` and no body.
    fn bare_request(api: i16, corr: i32) -> Vec<u8> {
        let mut f = 8i32.to_be_bytes().to_vec();
        f.extend_from_slice(&api.to_be_bytes());
        f.extend_from_slice(&0i16.to_be_bytes());
        f.extend_from_slice(&corr.to_be_bytes());
        f
    }

    /// A request held by a delay rule whose time comes while its client,
    /// reading nothing, still has answers waiting: the loop goes on serving
    /// the other connections (it once took the due timer again and again).
    #[test]
    fn a_delay_that_ends_while_its_client_reads_nothing_does_not_stop_the_loop() {
        let cat = Catalogue::builtin();
        // Answers every request in turn: ApiVersions with 32 MiB, others with 8 bytes.
        let broker_addr = broker_serving(|mut s| {
            let mut head = [0u8; 12];
            while s.read_exact(&mut head).is_ok() {
                let big = i16::from_be_bytes([head[4], head[5]]) == 18;
                let mut answer = vec![0u8; if big { 32 << 20 } else { 12 }];
                let size = answer.len() as i32 - 4;
                answer[..4].copy_from_slice(&size.to_be_bytes());
                answer[4..8].copy_from_slice(&head[8..12]);
                if s.write_all(&answer).is_err() {
                    return;
                }
            }
        });
        let rules = ["ApiVersions:duplicate", "Metadata:delay=100"]
            .iter()
            .enumerate()
            .map(|(i, r)| super::super::faults::parse_rule(cat, r, i + 1, 0).unwrap())
            .collect();
        let cfg = Config {
            faults: Some(Arc::new(Faults { rules })),
            ..test_config(broker_addr, 8)
        };
        let proxy = Proxy::start(cat, cfg, None).unwrap();
        let local = proxy.routes()[0].0;
        // 64 MiB owed to a client that reads nothing (more than the sockets
        // hold), then a request held 100 ms.
        let mut stuck = TcpStream::connect(local).unwrap();
        stuck.write_all(&bare_request(18, 1)).unwrap();
        stuck.write_all(&bare_request(3, 2)).unwrap();
        std::thread::sleep(Duration::from_millis(400));
        // Another client is still answered.
        let mut other = TcpStream::connect(local).unwrap();
        other
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        other.write_all(&bare_request(3, 7)).unwrap();
        let mut answer = [0u8; 12];
        other.read_exact(&mut answer).unwrap();
        assert_eq!(answer[4..8], 7i32.to_be_bytes());
        drop(stuck);
    }

    /// A broker that refuses the connection: the client's is closed at once.
    #[test]
    fn a_refused_broker_closes_the_client_s_connection() {
        let cat = Catalogue::builtin();
        let gone = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let proxy = Proxy::start(cat, test_config(gone, 8), None).unwrap();
        let mut client = TcpStream::connect(proxy.routes()[0].0).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let read = client.read(&mut [0u8; 8]);
        assert!(
            matches!(read, Ok(0))
                || read
                    .as_ref()
                    .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionReset),
            "{read:?}"
        );
        for _ in 0..500 {
            if proxy.open_connections() == 0 {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the refused connection's slot did not come back");
    }

    #[test]
    fn connections_over_the_limit_are_closed_and_their_slots_come_back() {
        use std::io::Read;
        let cat = Catalogue::builtin();
        // A broker that holds every connection until its client's side ends.
        let broker_addr = broker_serving(|mut s| {
            let _ = std::io::copy(&mut s, &mut std::io::sink());
        });
        let cfg = test_config(broker_addr, 2);
        let proxy = Proxy::start(cat, cfg, None).unwrap();
        let local = proxy.routes()[0].0;
        let wait_for = |open: usize| {
            for _ in 0..500 {
                if proxy.open_connections() == open {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            panic!("{} open, not {open}", proxy.open_connections());
        };
        let first = TcpStream::connect(local).unwrap();
        let second = TcpStream::connect(local).unwrap();
        wait_for(2);
        // The third is closed at once: its read ends, no bytes.
        let mut third = TcpStream::connect(local).unwrap();
        third
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        assert_eq!(third.read(&mut [0u8; 8]).map_err(|e| e.kind()), Ok(0));
        assert_eq!(proxy.refused.load(Ordering::Acquire), 1);
        // The first two are still served.
        let mut still = second.try_clone().unwrap();
        still
            .set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        assert!(
            still.read(&mut [0u8; 8]).is_err(),
            "a connection under the limit was closed"
        );
        // A client that leaves gives its slot back.
        drop(first);
        wait_for(1);
        let _fourth = TcpStream::connect(local).unwrap();
        wait_for(2);
        drop(second);
    }
}
