//! A proxied connection under `--inject` rules. Frames are held whole in
//! both directions (a rule needs the whole request, and a response may have
//! to be dropped or sent twice), and what the client receives goes through
//! one queue in request order: a client matches responses to requests by
//! order, so an answer made up for a request must wait behind the broker's
//! answers to the requests before it.

use super::super::faults::{error_answer, topics_named, Action, Asked, Faults, Rule};
use super::super::recorder::Event;
use super::Proxy;
use crate::decode::{decode_frame, DecodeOptions, Direction};
use bytes::Bytes;
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The largest frame held whole under `--inject`, either way: a larger one
/// ends the connection, with a note.
const MAX_HELD: usize = 256 << 20;
const PRODUCE_KEY: i16 = 0;
const SASL_HANDSHAKE_KEY: i16 = 17;

/// What becomes of the broker's answer to a request, or the answer made up for it.
enum Fate {
    Deliver,
    Drop,
    /// Delivered twice, the second copy recorded with this comment.
    Duplicate(String),
    /// An answer the proxy made (the request was not forwarded), recorded with this comment.
    Made(Vec<u8>, String),
}

/// Answers the client is owed, in request order, and the client's stream.
struct ToClient {
    stream: TcpStream,
    owed: VecDeque<(Option<(i16, i16)>, Fate)>,
}

impl ToClient {
    /// Deliver the answers made up that are now first in line.
    fn flush_made(&mut self, proxy: &Proxy, conn: u64) -> bool {
        while let Some((_, Fate::Made(..))) = self.owed.front() {
            let Some((_, Fate::Made(bytes, comment))) = self.owed.pop_front() else {
                break;
            };
            if !self.send(proxy, conn, bytes, Some(comment)) {
                return false;
            }
        }
        true
    }

    fn send(&mut self, proxy: &Proxy, conn: u64, bytes: Vec<u8>, comment: Option<String>) -> bool {
        let bytes = Bytes::from(bytes);
        if let Some(r) = &proxy.recorder {
            r.record(conn, recorded(false, bytes.clone(), comment));
        }
        self.stream.write_all(&bytes).is_ok()
    }
}

/// What the recorder is told of bytes that passed, with what a rule did to them.
fn recorded(from_client: bool, bytes: Bytes, comment: Option<String>) -> Event {
    match comment {
        Some(comment) => Event::Commented {
            from_client,
            bytes,
            comment,
        },
        None => Event::Data { from_client, bytes },
    }
}

/// One whole frame, `None` at a clean end of stream before it.
fn read_whole(r: &mut impl Read, max: usize) -> Result<Option<Vec<u8>>, String> {
    let mut size = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut size[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err("the stream ended inside a frame's size".into()),
            Ok(n) => got += n,
            Err(e) => return Err(format!("reading: {e}")),
        }
    }
    let total = super::frame_total(&size);
    if total > max {
        return Err(format!(
            "a frame of {total} bytes, over the {max} bytes held whole under --inject"
        ));
    }
    let mut frame = vec![0u8; total];
    frame[..4].copy_from_slice(&size);
    r.read_exact(&mut frame[4..])
        .map_err(|e| format!("the stream ended inside a frame: {e}"))?;
    Ok(Some(frame))
}

/// A request's api key, version and correlation id (a frame shorter than a header has none).
fn head(frame: &[u8]) -> Option<(i16, i16, i32)> {
    (frame.len() >= 12).then(|| {
        (
            i16::from_be_bytes([frame[4], frame[5]]),
            i16::from_be_bytes([frame[6], frame[7]]),
            i32::from_be_bytes([frame[8], frame[9], frame[10], frame[11]]),
        )
    })
}

impl Proxy {
    /// Serve one connection with the rules applied; returns why the broker's
    /// side ended when the client had not ended first (as `pump_responses`).
    pub(super) fn faulty_connection(
        self: &Arc<Self>,
        conn: u64,
        faults: &Arc<Faults>,
        (client, upstream): (&TcpStream, &TcpStream),
        peer: SocketAddr,
        broker: &str,
    ) -> Option<String> {
        let (Ok(to_client), Ok(client_read), Ok(upstream_read)) =
            (client.try_clone(), client.try_clone(), upstream.try_clone())
        else {
            return Some("could not share the sockets between threads".into());
        };
        let out = Arc::new(Mutex::new(ToClient {
            stream: to_client,
            owed: VecDeque::new(),
        }));
        // Set when the client's side ended, or a rule closed the connection:
        // the broker's side closing after that is not news.
        let client_done = Arc::new(AtomicBool::new(false));
        let requests = {
            let me = Arc::clone(self);
            let out = Arc::clone(&out);
            let faults = Arc::clone(faults);
            let client_done = Arc::clone(&client_done);
            let (Ok(upstream_write), Ok(client_close)) = (upstream.try_clone(), client.try_clone())
            else {
                return Some("could not share the sockets between threads".into());
            };
            std::thread::Builder::new()
                .name("kwire-requests".into())
                .spawn(move || {
                    let closed =
                        me.faulty_requests(conn, &faults, client_read, &upstream_write, &out, peer);
                    client_done.store(true, Ordering::SeqCst);
                    let _ = upstream_write.shutdown(Shutdown::Write);
                    if closed {
                        let _ = upstream_write.shutdown(Shutdown::Both);
                        let _ = client_close.shutdown(Shutdown::Both);
                    }
                })
        };
        let ended = self.faulty_responses(conn, upstream_read, &out, broker);
        let _ = client.shutdown(Shutdown::Both);
        let _ = upstream.shutdown(Shutdown::Both);
        if let Ok(t) = requests {
            let _ = t.join();
        }
        ended.filter(|_| !client_done.load(Ordering::SeqCst))
    }

    /// Client → broker, a whole request at a time, each looked at by the
    /// rules. Returns true when a rule closed the connection.
    fn faulty_requests(
        &self,
        conn: u64,
        faults: &Faults,
        mut from: TcpStream,
        mut to: &TcpStream,
        out: &Mutex<ToClient>,
        peer: SocketAddr,
    ) -> bool {
        // After a SaslHandshake v0 request, the client's next frame is a bare SASL token.
        let mut token_next = false;
        loop {
            let frame = match read_whole(&mut from, MAX_HELD) {
                Ok(Some(f)) => f,
                Ok(None) => return false,
                Err(e) => {
                    self.warn(
                        &format!("inject read {e}"),
                        &format!("a client's request: {e}; closing"),
                    );
                    return false;
                }
            };
            let record = |comment: Option<String>| {
                if let Some(r) = &self.recorder {
                    r.record(
                        conn,
                        recorded(true, Bytes::copy_from_slice(&frame), comment),
                    );
                }
            };
            let request = if std::mem::take(&mut token_next) {
                None
            } else {
                head(&frame)
            };
            let Some((api, version, corr)) = request else {
                record(None);
                // A SASL token is answered by one, without a correlation id.
                lock(out).owed.push_back((None, Fate::Deliver));
                if to.write_all(&frame).is_err() {
                    return false;
                }
                continue;
            };
            token_next = api == SASL_HANDSHAKE_KEY && version == 0;
            // Decoded only for a rule about its API; a Produce's acks read in place.
            let body = faults
                .about(api)
                .then(|| self.request_body(&frame))
                .flatten();
            let answered = !(api == PRODUCE_KEY
                && super::super::wire::produce_acks(&frame, version) == Some(0));
            let mut topics = Vec::new();
            let client_id = body.as_ref().and_then(|(h, b)| {
                if let Some(spec) = self.cat.message(
                    crate::schema::MessageKind::Request,
                    api,
                    version,
                    self.cfg.release.as_deref(),
                ) {
                    topics_named(&spec.fields, b, &mut topics);
                }
                h.get("ClientId")
                    .and_then(|c| c.as_str())
                    .map(str::to_string)
            });
            let rule = faults.about(api).then(|| {
                faults.decide(&Asked {
                    api_key: api,
                    client_id: client_id.as_deref(),
                    topics: &topics,
                })
            });
            let mut fate = Fate::Deliver;
            let mut comment = None;
            if let Some(rule) = rule.flatten() {
                if !matches!(rule.action, Action::Error(_)) {
                    self.injected(rule, (api, version, corr), peer, "");
                }
                let by = format!("kwire proxy rule {}", rule.number);
                match &rule.action {
                    Action::Delay(d) => {
                        comment =
                            Some(format!("{by}: held {} ms before forwarding", d.as_millis()));
                        record(comment.take());
                        std::thread::sleep(*d);
                    }
                    Action::Drop => {
                        comment = Some(format!("{by}: its response is not delivered"));
                        fate = Fate::Drop;
                    }
                    Action::Duplicate => {
                        fate = Fate::Duplicate(format!("{by}: the response sent again"));
                    }
                    Action::Close => {
                        record(Some(format!(
                            "{by}: not forwarded, the connection closed instead"
                        )));
                        return true;
                    }
                    Action::Error(code) => {
                        let message = format!("injected by kwire proxy (rule {})", rule.number);
                        let made = body.as_ref().map(|(_, b)| {
                            error_answer(
                                self.cat,
                                self.cfg.release.as_deref(),
                                (api, version, corr),
                                b,
                                *code,
                                &message,
                            )
                        });
                        match made {
                            Some(Ok(Some(bytes))) => {
                                let unanswered = "; acks=0, so nothing is sent back and the request is dropped";
                                let how = if answered { "" } else { unanswered };
                                self.injected(rule, (api, version, corr), peer, how);
                                let said = rule.action.done();
                                record(Some(if answered {
                                    format!("{by}: not forwarded, answered with {said}")
                                } else {
                                    format!("{by}: not forwarded, not answered (acks=0): {said}")
                                }));
                                if answered {
                                    let made = format!("{by}: made up, {said}");
                                    let mut o = lock(out);
                                    o.owed.push_back((Some((api, version)), Fate::Made(bytes, made)));
                                    if !o.flush_made(self, conn) {
                                        return false;
                                    }
                                }
                                // A SaslHandshake answered with an error was never accepted:
                                // the client's next frame is a request, not a token.
                                token_next = false;
                                continue;
                            }
                            Some(Ok(None)) => self.warn(
                                &format!("inject nowhere {api}"),
                                &format!("rule {}: this {} v{version} request's answer has no error code to carry it; such requests are forwarded", rule.number, self.cat.api_name(api).unwrap_or("?")),
                            ),
                            Some(Err(e)) => self.warn(
                                &format!("inject encode {api}/{version}"),
                                &format!("rule {}: no answer could be made for {} v{version} ({e}); such requests are forwarded", rule.number, self.cat.api_name(api).unwrap_or("?")),
                            ),
                            None => self.warn(
                                &format!("inject undecoded {api}/{version}"),
                                &format!("rule {}: a {} v{version} request did not decode; it is forwarded", rule.number, self.cat.api_name(api).unwrap_or("?")),
                            ),
                        }
                    }
                }
            }
            if !matches!(rule.flatten().map(|r| &r.action), Some(Action::Delay(_))) {
                record(comment);
            }
            if answered {
                lock(out).owed.push_back((Some((api, version)), fate));
            }
            if to.write_all(&frame).is_err() {
                return false;
            }
        }
    }

    /// Broker → client, a whole response at a time, as the queue says.
    fn faulty_responses(
        self: &Arc<Self>,
        conn: u64,
        mut from: TcpStream,
        out: &Mutex<ToClient>,
        broker: &str,
    ) -> Option<String> {
        loop {
            let frame = match read_whole(&mut from, MAX_HELD) {
                Ok(Some(f)) => f,
                Ok(None) => return Some("closed the connection".into()),
                Err(e) => return Some(e),
            };
            let mut o = lock(out);
            let (api, fate) = o.owed.pop_front().unwrap_or((None, Fate::Deliver));
            // Endpoints are pointed at the proxy, as without rules.
            let frame = match api {
                Some(a) => self.rewritten_if_needed(frame, a, broker),
                None => frame,
            };
            let sent = match fate {
                Fate::Drop => true,
                Fate::Duplicate(again) => {
                    o.send(self, conn, frame.clone(), None)
                        && o.send(self, conn, frame, Some(again))
                }
                Fate::Deliver | Fate::Made(..) => o.send(self, conn, frame, None),
            };
            if !sent || !o.flush_made(self, conn) {
                return None;
            }
        }
    }

    /// The request's header and body as the contract's JSON.
    fn request_body(
        &self,
        frame: &[u8],
    ) -> Option<(
        serde_json::Map<String, serde_json::Value>,
        serde_json::Map<String, serde_json::Value>,
    )> {
        let opts = DecodeOptions {
            direction: Some(Direction::Request),
            release: self.cfg.release.clone(),
            values_only: true,
            ..Default::default()
        };
        let decoded = decode_frame(self.cat, Bytes::copy_from_slice(frame), 0, &opts);
        if decoded.error.is_some() {
            return None;
        }
        let mut text = Vec::new();
        crate::render::json::write_contract(&decoded, &mut text);
        let mut contract: serde_json::Value = serde_json::from_slice(&text).ok()?;
        let header = contract
            .get_mut("header")?
            .as_object_mut()
            .map(std::mem::take)?;
        let body = contract
            .get_mut("body")?
            .as_object_mut()
            .map(std::mem::take)?;
        Some((header, body))
    }

    /// Count what a rule did and say it on standard error.
    fn injected(
        &self,
        rule: &Rule,
        (api, version, corr): (i16, i16, i32),
        peer: SocketAddr,
        how: &str,
    ) {
        rule.count_applied();
        crate::stderr_line!(
            "kwire: proxy: injected (rule {}) {}: {} v{version} correlation id {corr} from {peer}{how}",
            rule.number,
            rule.action.done(),
            self.cat.api_name(api).unwrap_or("?")
        );
    }
}

fn lock(out: &Mutex<ToClient>) -> std::sync::MutexGuard<'_, ToClient> {
    out.lock().unwrap_or_else(|e| e.into_inner())
}
