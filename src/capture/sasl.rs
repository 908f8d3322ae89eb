//! SASL tokens on a connection (`protocol::sasl`): after a SaslHandshake v0
//! request whose response has error code 0, frames go without a Kafka header
//! until authentication is over. The rule, per connection:
//!
//! - A SaslHandshake v0 request is remembered with its correlation id and the
//!   mechanism it names; its response (paired by correlation id) with error
//!   code 0 starts token mode. Any other answer (an error, a body that does
//!   not decode) does not.
//! - In token mode, a client frame is a token unless it is a Kafka request:
//!   a sane header of a known API and version that decodes cleanly (header,
//!   then the body's values) to its last byte. The first Kafka request ends
//!   token mode, on both sides.
//! - In token mode, a broker frame is a token unless it starts with the
//!   correlation id of a request awaiting its response.
//! - While the handshake's answer is awaited (lost to a gap, or not yet
//!   captured) or after it refused, a client frame that is not a Kafka
//!   request is taken for a token all the same: a client sends raw bytes
//!   only to authenticate, and a token read as a Kafka frame would show its
//!   credential. Awaited, that token starts token mode; after a refusal,
//!   the next Kafka request ends the watch.
//!
//! - With no handshake seen (a capture that began after it), a client
//!   frame that is not a Kafka request and has the shape of a PLAIN, SCRAM
//!   or OAUTHBEARER client message (`protocol::sasl::client_token_shape`)
//!   is a token, its mechanism guessed from that shape, and starts token
//!   mode: read as a Kafka frame, its credential would show.
//!
//! - A broker frame with nothing after its size is a token in any state:
//!   a Kafka response starts with a correlation id. It is the broker's
//!   empty answer to a PLAIN client message, seen without the handshake or
//!   the client's token (a capture begun just before it).
//!
//! So PLAIN (one token each way), SCRAM (two rounds) and GSSAPI (several)
//! all end when the client sends its first request after authentication.
//! A token is never decoded, nor cut to its header in listings.

use super::awaiting::Outstanding;
use super::candidates::{decodes_cleanly, request_header, Header};
use super::framing::Effort;
use crate::decode::tape::{Id, Val, Values};
use crate::decode::values::{self};
use crate::decode::SaslMechanism;
use crate::protocol::headers::{request_header_version, response_header_version};
use crate::protocol::sasl::{
    client_token_shape, mechanism_text, RAW_TOKENS_VERSION, SASL_HANDSHAKE_KEY,
};
use crate::schema::model::FieldMeaning;
use crate::schema::{Catalogue, MessageKind};
use std::sync::Arc;

/// Where a connection is in SASL authentication.
#[derive(Clone, Debug, Default)]
pub(super) enum Sasl {
    /// Kafka frames both ways.
    #[default]
    Off,
    /// A SaslHandshake v0 request awaits its response.
    Handshake {
        correlation_id: i32,
        mechanism: Arc<SaslMechanism>,
    },
    /// The broker accepted the handshake: tokens both ways (or no handshake
    /// was seen and a client token's shape started them: its mechanism is
    /// `guessed`).
    Tokens { mechanism: Arc<SaslMechanism> },
    /// The broker refused the handshake: a client frame that is not a
    /// Kafka request is still a token.
    Refused { mechanism: Arc<SaslMechanism> },
}

impl Sasl {
    /// In token mode: frames need telling apart, and none is cut.
    pub(super) fn tokens(&self) -> bool {
        matches!(self, Sasl::Tokens { .. })
    }

    /// Whether the whole frame `bytes` (or a prefix of a longer one, `cut`),
    /// sent by the client (`is_request`) or the broker, is a SASL token: its
    /// mechanism when it is. A client frame that is a Kafka request ends token mode.
    pub(super) fn token(
        &mut self,
        cat: &Catalogue,
        is_request: bool,
        bytes: &[u8],
        cut: bool,
        outstanding: &Outstanding,
        effort: &mut Effort,
    ) -> Option<Arc<SaslMechanism>> {
        let is_kafka_request = |effort: &mut Effort| {
            // A cut frame's header was checked before its body was skipped.
            cut || match request_header(cat, bytes) {
                Header::Frame(len, opts) if len == bytes.len() => {
                    decodes_cleanly(cat, bytes, opts, effort).0
                }
                _ => false,
            }
        };
        // Nothing after its size: no Kafka response (it would start with a
        // correlation id), but a SASL token, the broker's empty answer to a
        // PLAIN client message, whatever came before it.
        if !is_request && !cut && bytes.len() == 4 {
            return Some(match self {
                Sasl::Tokens { mechanism }
                | Sasl::Handshake { mechanism, .. }
                | Sasl::Refused { mechanism } => mechanism.clone(),
                Sasl::Off => Arc::new(SaslMechanism {
                    name: "an empty answer, by its shape".into(),
                    guessed: true,
                }),
            });
        }
        let (mechanism, watching) = match self {
            Sasl::Tokens { mechanism } => (mechanism.clone(), false),
            // Only the client's frames can be tokens before the broker accepts.
            Sasl::Handshake { mechanism, .. } | Sasl::Refused { mechanism } if is_request => {
                (mechanism.clone(), true)
            }
            Sasl::Off if is_request && !cut => {
                // The shape first: it rules out nearly every frame at a glance.
                let shape = bytes.get(4..).and_then(client_token_shape)?;
                if is_kafka_request(effort) {
                    return None;
                }
                let mechanism = Arc::new(SaslMechanism {
                    name: format!("{shape}, by its shape").into(),
                    guessed: true,
                });
                *self = Sasl::Tokens {
                    mechanism: mechanism.clone(),
                };
                return Some(mechanism);
            }
            _ => return None,
        };
        let kafka = if is_request {
            is_kafka_request(effort)
        } else {
            bytes.get(4..8).is_some_and(|c| {
                outstanding
                    .get(&i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                    .is_some()
            })
        };
        if !kafka {
            if watching && matches!(self, Sasl::Handshake { .. }) {
                *self = Sasl::Tokens {
                    mechanism: mechanism.clone(),
                };
            }
            return Some(mechanism);
        }
        // A Kafka request while the handshake's answer is awaited leaves the wait as it is.
        if is_request && !matches!(self, Sasl::Handshake { .. }) {
            *self = Sasl::Off;
        }
        None
    }

    /// A Kafka request went out: a SaslHandshake v0 is remembered.
    pub(super) fn request(
        &mut self,
        cat: &Catalogue,
        api: Option<(i16, i16)>,
        correlation_id: Option<i32>,
        bytes: &[u8],
    ) {
        if api != Some((SASL_HANDSHAKE_KEY, RAW_TOKENS_VERSION)) {
            return;
        }
        *self = match (correlation_id, handshake_mechanism(cat, bytes)) {
            (Some(correlation_id), Some(mechanism)) => Sasl::Handshake {
                correlation_id,
                mechanism,
            },
            _ => Sasl::Off,
        };
    }

    /// A Kafka response came, answering the request `api` (when known): the
    /// handshake's answer starts token mode or ends the handshake.
    pub(super) fn response(
        &mut self,
        cat: &Catalogue,
        api: Option<(i16, i16)>,
        correlation_id: Option<i32>,
        bytes: &[u8],
    ) {
        let Sasl::Handshake {
            correlation_id: waiting,
            mechanism,
        } = self
        else {
            return;
        };
        if correlation_id != Some(*waiting) || api != Some((SASL_HANDSHAKE_KEY, RAW_TOKENS_VERSION))
        {
            return;
        }
        *self = match handshake_accepted(cat, bytes) {
            true => Sasl::Tokens {
                mechanism: mechanism.clone(),
            },
            false => Sasl::Refused {
                mechanism: mechanism.clone(),
            },
        };
    }
}

/// Whether `buf` starts with a whole frame (its size prefix and its bytes)
/// whose bytes have the shape of a SASL client message
/// ([`client_token_shape`]).
pub(super) fn token_at_start(buf: &[u8]) -> bool {
    let Some(size) = buf.first_chunk::<4>().map(|b| i32::from_be_bytes(*b)) else {
        return false;
    };
    let end = usize::try_from(size).map_or(0, |s| s.saturating_add(4));
    end > 4 && buf.get(4..end).and_then(client_token_shape).is_some()
}

/// The mechanism a SaslHandshake v0 request names, when it decodes cleanly.
fn handshake_mechanism(cat: &Catalogue, frame: &[u8]) -> Option<Arc<SaslMechanism>> {
    let spec = cat.message(
        MessageKind::Request,
        SASL_HANDSHAKE_KEY,
        RAW_TOKENS_VERSION,
        None,
    )?;
    let (tape, slot) = body_of(cat, MessageKind::Request, frame)?;
    let decl = spec.fields.iter().position(|f| f.name == "Mechanism")? as u16;
    let value = tape
        .children(slot)
        .find(|(_, s)| s.id == Id::Field(decl))
        .map(|(_, s)| s.value);
    match value {
        Some(Val::Str(span)) => Some(SaslMechanism::named(&mechanism_text(span.of(frame)))),
        _ => None,
    }
}

/// Whether a SaslHandshake v0 response decodes cleanly with error code 0.
fn handshake_accepted(cat: &Catalogue, frame: &[u8]) -> bool {
    let Some(spec) = cat.message(
        MessageKind::Response,
        SASL_HANDSHAKE_KEY,
        RAW_TOKENS_VERSION,
        None,
    ) else {
        return false;
    };
    let Some((tape, slot)) = body_of(cat, MessageKind::Response, frame) else {
        return false;
    };
    let errors: Vec<u16> = spec
        .fields
        .iter()
        .enumerate()
        .filter(|(_, f)| FieldMeaning::of(f) == FieldMeaning::ErrorCode)
        .map(|(i, _)| i as u16)
        .collect();
    let mut codes = tape
        .children(slot)
        .filter(|(_, s)| s.decl().is_some_and(|d| errors.contains(&d)))
        .peekable();
    codes.peek().is_some() && codes.all(|(_, s)| s.value == Val::Int(0))
}

/// A SaslHandshake v0 frame's body on a values tape (its slot), when the
/// header and the body decode cleanly to the frame's last byte.
fn body_of(cat: &Catalogue, kind: MessageKind, frame: &[u8]) -> Option<(Values, u32)> {
    let spec = cat.message(kind, SASL_HANDSHAKE_KEY, RAW_TOKENS_VERSION, None)?;
    let hv = match kind {
        MessageKind::Request => request_header_version(spec, RAW_TOKENS_VERSION),
        _ => response_header_version(spec, RAW_TOKENS_VERSION),
    };
    let header = cat.header(kind, hv)?;
    let mut tape = Values::default();
    let (_, end, res) = values::decode_message(frame, 4, &header.plan(hv), &mut tape);
    res.ok()?;
    let (slot, stop, res) =
        values::decode_message(frame, end, &spec.plan(RAW_TOKENS_VERSION), &mut tape);
    (res.is_ok() && stop == frame.len()).then_some((tape, slot))
}
