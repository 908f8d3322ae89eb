//! A connection under `--inject` rules, on the event loop. Frames are held
//! whole in both directions (a rule needs the whole request, and a response
//! may have to be dropped or sent twice), and what the client receives goes
//! through one queue in request order: a client matches responses to
//! requests by order, so an answer made up for a request must wait behind
//! the broker's answers to the requests before it.

use super::super::faults::{error_answer, topics_named, Action, Asked, Faults, Rule};
use super::super::recorder::Event;
use super::Proxy;
use crate::decode::{decode_frame, DecodeOptions, Direction};
use crate::protocol::sasl::SASL_HANDSHAKE_KEY;
use bytes::Bytes;
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

/// The largest frame held whole under `--inject`, either way: a larger one
/// ends the connection, with a note.
const MAX_HELD: usize = 256 << 20;

/// What becomes of the broker's answer to a request, or the answer made up for it.
enum Fate {
    Deliver,
    Drop,
    /// Delivered twice, the second copy recorded with this comment.
    Duplicate(String),
    /// An answer the proxy made (the request was not forwarded), recorded with this comment.
    Made(Vec<u8>, String),
}

/// What the rules made of the client's next whole request.
pub(super) enum Step {
    /// Forward it to the broker now.
    Forward(Vec<u8>),
    /// Forward it to the broker at this time (a `delay` rule); the requests
    /// after it wait behind it, as they would behind a slow broker.
    Hold(Vec<u8>, Instant),
    /// Answered by the proxy, or not at all: nothing goes to the broker.
    Answered,
    /// A `close` rule: the connection ends here.
    Close,
}

/// A connection's rules and what they hold.
pub(super) struct Rules {
    faults: Arc<Faults>,
    /// The bytes of the client's next whole request so far, and of the broker's next response.
    request: Vec<u8>,
    response: Vec<u8>,
    /// After a SaslHandshake v0 request, the client's next frame is a bare SASL token.
    token_next: bool,
    /// What each request forwarded or answered is owed, in request order.
    owed: VecDeque<(Option<(i16, i16)>, Fate)>,
    /// For the client, in order: frames recorded and not yet written.
    pub to_client: VecDeque<Bytes>,
    /// A request a `delay` rule holds, and when it goes on.
    pub held: Option<(Vec<u8>, Instant)>,
    /// The end of the hold a timer was set for.
    armed: Option<Instant>,
}

/// Requests owed an answer at most on one connection: the client's next
/// requests wait until the broker has answered some (as `InFlight`'s bound).
pub(super) const MAX_OWED: usize = 4096;

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

/// The next whole frame at the start of `buf`, taken out of it; `None` until all of it is there.
fn whole_frame(buf: &mut Vec<u8>) -> Result<Option<Vec<u8>>, String> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let total = super::frame_total(buf);
    if total > MAX_HELD {
        return Err(format!(
            "a frame of {total} bytes, over the {MAX_HELD} bytes held whole under --inject"
        ));
    }
    if buf.len() < total {
        return Ok(None);
    }
    let rest = buf.split_off(total);
    Ok(Some(std::mem::replace(buf, rest)))
}

impl Rules {
    pub fn new(faults: Arc<Faults>) -> Rules {
        Rules {
            faults,
            request: Vec::new(),
            response: Vec::new(),
            token_next: false,
            owed: VecDeque::new(),
            to_client: VecDeque::new(),
            held: None,
            armed: None,
        }
    }

    /// When a timer should wake the connection for the request held now, if
    /// none was set for it yet.
    pub(crate) fn arm_timer(&mut self) -> Option<Instant> {
        let until = self.held.as_ref().map(|(_, until)| *until)?;
        (self.armed != Some(until)).then(|| {
            self.armed = Some(until);
            until
        })
    }

    /// Whether the next request must wait for answers owed to come first.
    pub(crate) fn owes_too_many(&self) -> bool {
        self.owed.len() >= MAX_OWED
    }

    /// Bytes the client sent.
    pub(crate) fn take_requests(&mut self, data: &[u8]) {
        self.request.extend_from_slice(data);
    }

    /// The client's next whole request decided by the rules (and recorded),
    /// `None` until one is all there; `Err` when it is too large to hold.
    pub(crate) fn next_request(
        &mut self,
        proxy: &Proxy,
        conn: u64,
        peer: SocketAddr,
    ) -> Result<Option<Step>, String> {
        let Some(frame) = whole_frame(&mut self.request)? else {
            return Ok(None);
        };
        Ok(Some(self.decide(proxy, conn, peer, frame)))
    }

    fn decide(&mut self, proxy: &Proxy, conn: u64, peer: SocketAddr, frame: Vec<u8>) -> Step {
        let record = |comment: Option<String>| {
            if let Some(r) = &proxy.recorder {
                r.record(
                    conn,
                    recorded(true, Bytes::copy_from_slice(&frame), comment),
                );
            }
        };
        let request = if std::mem::take(&mut self.token_next) {
            None
        } else {
            super::request_head(&frame)
        };
        let Some((api, version, corr)) = request else {
            record(None);
            // A SASL token is answered by one, without a correlation id.
            self.owed.push_back((None, Fate::Deliver));
            return Step::Forward(frame);
        };
        self.token_next = api == SASL_HANDSHAKE_KEY && version == 0;
        let faults = Arc::clone(&self.faults);
        // Decoded only for a rule about its API; a Produce's acks read in place.
        let body = faults
            .about(api)
            .then(|| proxy.request_body(&frame))
            .flatten();
        let answered = super::super::wire::is_answered(api, version, &frame);
        let mut topics = Vec::new();
        let client_id = body.as_ref().and_then(|(h, b)| {
            if let Some(spec) = proxy.cat.message(
                crate::schema::MessageKind::Request,
                api,
                version,
                proxy.cfg.release.as_deref(),
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
        let owe = |fate| answered.then_some((Some((api, version)), fate));
        let Some(rule) = rule.flatten() else {
            record(None);
            self.owed.extend(owe(Fate::Deliver));
            return Step::Forward(frame);
        };
        if !matches!(rule.action, Action::Error(_)) {
            proxy.injected(rule, (api, version, corr), peer, "");
        }
        let by = format!("kwire proxy rule {}", rule.number);
        match &rule.action {
            Action::Delay(d) => {
                record(Some(format!(
                    "{by}: held {} ms before forwarding",
                    d.as_millis()
                )));
                self.owed.extend(owe(Fate::Deliver));
                let until = Instant::now() + *d;
                return Step::Hold(frame, until);
            }
            Action::Drop => {
                record(Some(format!("{by}: its response is not delivered")));
                self.owed.extend(owe(Fate::Drop));
                return Step::Forward(frame);
            }
            Action::Duplicate => {
                record(None);
                self.owed.extend(owe(Fate::Duplicate(format!(
                    "{by}: the response sent again"
                ))));
                return Step::Forward(frame);
            }
            Action::Close => {
                record(Some(format!(
                    "{by}: not forwarded, the connection closed instead"
                )));
                return Step::Close;
            }
            Action::Error(code) => {
                if let Some(step) = self.answer(
                    proxy,
                    (rule, *code),
                    (api, version, corr),
                    (&body, answered),
                    peer,
                ) {
                    record(Some(step.1));
                    // After the request it answers, in its turn among the answers owed.
                    self.flush_made(proxy, conn);
                    return step.0;
                }
            }
        }
        // An error rule that could not answer this request: forwarded.
        record(None);
        self.owed.extend(owe(Fate::Deliver));
        Step::Forward(frame)
    }

    /// An `error` rule's answer made and owed to the client in its turn
    /// (none under acks=0), with the request's comment; `None` when no
    /// answer could be made (said once on stderr), so the request goes on.
    fn answer(
        &mut self,
        proxy: &Proxy,
        (rule, code): (&Rule, i16),
        (api, version, corr): (i16, i16, i32),
        (body, answered): (&Option<RequestJson>, bool),
        peer: SocketAddr,
    ) -> Option<(Step, String)> {
        let by = format!("kwire proxy rule {}", rule.number);
        let message = format!("injected by kwire proxy (rule {})", rule.number);
        let made = body.as_ref().map(|(_, b)| {
            error_answer(
                proxy.cat,
                proxy.cfg.release.as_deref(),
                (api, version, corr),
                b,
                code,
                &message,
            )
        });
        let name = proxy.cat.api_name(api).unwrap_or("?");
        match made {
            Some(Ok(Some(bytes))) => {
                let unanswered = "; acks=0, so nothing is sent back and the request is dropped";
                let how = if answered { "" } else { unanswered };
                proxy.injected(rule, (api, version, corr), peer, how);
                let said = rule.action.done();
                let comment = if answered {
                    format!("{by}: not forwarded, answered with {said}")
                } else {
                    format!("{by}: not forwarded, not answered (acks=0): {said}")
                };
                if answered {
                    let made = format!("{by}: made up, {said}");
                    self.owed
                        .push_back((Some((api, version)), Fate::Made(bytes, made)));
                }
                // A SaslHandshake answered with an error was never accepted:
                // the client's next frame is a request, not a token.
                self.token_next = false;
                Some((Step::Answered, comment))
            }
            Some(Ok(None)) => {
                proxy.warn(
                    &format!("inject nowhere {api}"),
                    &format!("rule {}: this {name} v{version} request's answer has no error code to carry it; such requests are forwarded", rule.number),
                );
                None
            }
            Some(Err(e)) => {
                proxy.warn(
                    &format!("inject encode {api}/{version}"),
                    &format!("rule {}: no answer could be made for {name} v{version} ({e}); such requests are forwarded", rule.number),
                );
                None
            }
            None => {
                proxy.warn(
                    &format!("inject undecoded {api}/{version}"),
                    &format!(
                        "rule {}: a {name} v{version} request did not decode; it is forwarded",
                        rule.number
                    ),
                );
                None
            }
        }
    }

    /// Bytes the broker sent: each whole response goes to the client as
    /// the queue says (with endpoints pointed at the proxy, as without
    /// rules); `Err` when one is too large to hold.
    pub(crate) fn take_responses(
        &mut self,
        proxy: &Arc<Proxy>,
        conn: u64,
        broker: &str,
        data: &[u8],
    ) -> Result<(), String> {
        self.response.extend_from_slice(data);
        while let Some(frame) = whole_frame(&mut self.response)? {
            let (api, fate) = self.owed.pop_front().unwrap_or((None, Fate::Deliver));
            let frame = match api {
                Some(a) => proxy.rewritten_if_needed(frame, a, broker),
                None => frame,
            };
            match fate {
                Fate::Drop => {}
                Fate::Duplicate(again) => {
                    self.send(proxy, conn, frame.clone(), None);
                    self.send(proxy, conn, frame, Some(again));
                }
                Fate::Deliver | Fate::Made(..) => self.send(proxy, conn, frame, None),
            }
            self.flush_made(proxy, conn);
        }
        Ok(())
    }

    /// Queue the answers made up that are now first in line.
    fn flush_made(&mut self, proxy: &Proxy, conn: u64) {
        while let Some((_, Fate::Made(..))) = self.owed.front() {
            let Some((_, Fate::Made(bytes, comment))) = self.owed.pop_front() else {
                break;
            };
            self.send(proxy, conn, bytes, Some(comment));
        }
    }

    /// Queue a frame for the client, recorded first.
    fn send(&mut self, proxy: &Proxy, conn: u64, bytes: Vec<u8>, comment: Option<String>) {
        let bytes = Bytes::from(bytes);
        if let Some(r) = &proxy.recorder {
            r.record(conn, recorded(false, bytes.clone(), comment));
        }
        self.to_client.push_back(bytes);
    }
}

/// A request's header and body as the contract's JSON.
type RequestJson = (
    serde_json::Map<String, serde_json::Value>,
    serde_json::Map<String, serde_json::Value>,
);

impl Proxy {
    /// The request's header and body as the contract's JSON.
    fn request_body(&self, frame: &[u8]) -> Option<RequestJson> {
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
