//! `kwire check`: every frame of a capture held against the protocol, one
//! finding per problem. What one frame's bytes break comes from the decoder's
//! typed problems (`ErrorKind`, `WarningKind`, record damage) and from
//! [`crate::decode::records::order`]; what only the conversation shows (versions the
//! broker advertised on the connection, correlation ids reused in flight,
//! responses without requests, requests never answered) is tracked here per
//! connection. Each finding names its rule; rules have a fixed severity.

use super::diagnosis::Diagnosis;
use super::inventory::{ApiVersionsReader, Range};
use crate::capture::{CapturedFrame, Skipped};
use crate::decode::{
    decode_frame, DecodeError, DecodeOptions, Direction, ErrorKind, Frame, Region, Role, Value,
    WarningKind,
};
use crate::protocol::headers::API_VERSIONS_KEY;
use crate::schema::model::FieldMeaning;
use crate::schema::{Catalogue, MessageKind};
use std::collections::{BTreeMap, HashMap};

const PRODUCE_KEY: i16 = 0;

/// How bad a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The bytes break the protocol.
    Error,
    /// Legal, but suspicious.
    Warning,
    /// Worth knowing.
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        }
    }
}

/// What a finding is about. [`Rule::ALL`] lists them with their ids and severities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Rule {
    TrailingBytes,
    Truncated,
    InvalidValue,
    UnknownVersion,
    NullNotNullable,
    TagOrder,
    TagVersion,
    TagSize,
    NonMinimalVarint,
    NotAdvertised,
    CorrelationReuse,
    UnmatchedResponse,
    Unanswered,
    BatchCrc,
    NotBatches,
    BatchLength,
    RecordsCount,
    UnknownCodec,
    Decompression,
    RecordInvalid,
    RecordLength,
    OffsetsBackwards,
    LastOffsetDelta,
    SequenceGap,
    EmbeddedInvalid,
    UnknownPayload,
    SkippedBytes,
    NotChecked,
    TlsNotDecrypted,
    TlsKeysWrong,
    TlsStopped,
    TlsRecordSkipped,
    // What only the conversation shows (`analysis::diagnosis`).
    RetryLoop,
    ErrorNotInVersion,
    ClosedUnanswered,
    ConnectionChurn,
    ProducerSequenceGap,
    ProducerDuplicate,
    ProducerEpochRegression,
    FetchSessionUnused,
    FetchSessionEpoch,
    RebalanceStorm,
    MemberFenced,
    ThrottleIgnored,
    MetadataStorm,
    TransactionOpen,
    LsoStuck,
    ErrorFromEveryClient,
}

impl Rule {
    /// Every rule: id, severity and what it checks.
    pub const ALL: [(Rule, &'static str, Severity, &'static str); 48] = [
        (Rule::TrailingBytes, "trailing-bytes", Severity::Error, "bytes follow the body within the frame's size"),
        (Rule::Truncated, "truncated", Severity::Error, "the frame (or a length or count in it) ends before its body does"),
        (Rule::InvalidValue, "invalid-value", Severity::Error, "a value the encoding does not allow (a length below -1, a frame size below 0)"),
        (Rule::UnknownVersion, "unknown-version", Severity::Error, "an API key or version the definitions do not have"),
        (Rule::NullNotNullable, "null-not-nullable", Severity::Error, "null in a field that is not nullable at this version"),
        (Rule::TagOrder, "tag-order", Severity::Error, "tagged fields out of ascending order, or a tag repeated"),
        (Rule::TagVersion, "tag-version", Severity::Error, "a tag of a field outside its taggedVersions"),
        (Rule::TagSize, "tag-size", Severity::Error, "a tagged field whose size is not what its value used"),
        (Rule::NonMinimalVarint, "non-minimal-varint", Severity::Note, "a varint longer than its value needs"),
        (Rule::NotAdvertised, "version-not-advertised", Severity::Error, "a request version outside the range the broker advertised on this connection"),
        (Rule::CorrelationReuse, "correlation-reuse", Severity::Warning, "a correlation id reused while a request with it awaits its response"),
        (Rule::UnmatchedResponse, "unmatched-response", Severity::Note, "a response without a request in the capture"),
        (Rule::Unanswered, "unanswered", Severity::Note, "a request with no response by the end of the capture (acks=0 produce requests expect none)"),
        (Rule::BatchCrc, "batch-crc", Severity::Error, "a RecordBatch or message CRC that is not the bytes' checksum"),
        (Rule::NotBatches, "records-not-batches", Severity::Error, "a records field whose bytes are not record batches"),
        (Rule::BatchLength, "batch-length", Severity::Error, "a batchLength the format cannot have"),
        (Rule::RecordsCount, "records-count", Severity::Error, "a recordsCount (or batchLength) that disagrees with the records in the bytes"),
        (Rule::UnknownCodec, "unknown-codec", Severity::Error, "a compression codec the format does not define"),
        (Rule::Decompression, "decompression", Severity::Error, "compressed records that do not decompress"),
        (Rule::RecordInvalid, "record-invalid", Severity::Error, "a record whose fields do not decode"),
        (Rule::RecordLength, "record-length", Severity::Error, "a record length that is not what its fields used"),
        (Rule::OffsetsBackwards, "offsets-backwards", Severity::Error, "record offsets that do not rise within a batch, or go backwards across fetched batches"),
        (Rule::LastOffsetDelta, "last-offset-delta", Severity::Error, "a batch's lastOffsetDelta that is not its last record's offsetDelta (a fetched batch of a compacted topic may end past its last record)"),
        (Rule::SequenceGap, "sequence-gap", Severity::Warning, "a producer's baseSequence that does not go on from its batch before"),
        (Rule::EmbeddedInvalid, "embedded-invalid", Severity::Warning, "embedded bytes (consumer protocol, record payloads) that do not decode as their schema"),
        (Rule::UnknownPayload, "unknown-payload", Severity::Note, "a record payload of a type or version no schema describes"),
        (Rule::SkippedBytes, "skipped-bytes", Severity::Note, "stream bytes in no frame (a capture gap, a partial frame)"),
        (Rule::NotChecked, "not-checked", Severity::Warning, "data over an input budget, left unchecked"),
        (Rule::TlsNotDecrypted, "tls-not-decrypted", Severity::Note, "a TLS connection not decrypted (no keys, or a suite or version kwire does not decrypt), so not checked"),
        (Rule::TlsKeysWrong, "tls-keys-wrong", Severity::Warning, "a TLS connection whose key log secrets did not open its records (wrong secrets for its client random), so not checked"),
        (Rule::TlsStopped, "tls-stopped", Severity::Warning, "decryption of a TLS direction stopped part-way (a record that failed authentication, was cut short or not found)"),
        (Rule::TlsRecordSkipped, "tls-record-skipped", Severity::Warning, "TLS records that did not open with keys that open the records around them (damaged bytes), passed over; the frames in them are lost"),
        (Rule::RetryLoop, "retry-loop", Severity::Warning, "one client's request answered with the same error three or more times in a row"),
        (Rule::ErrorNotInVersion, "error-not-in-version", Severity::Error, "an error code the API cannot return at that version or for that request"),
        (Rule::ClosedUnanswered, "closed-unanswered", Severity::Warning, "a connection closed (FIN or RST) while requests on it awaited their responses"),
        (Rule::ConnectionChurn, "connection-churn", Severity::Warning, "a client opening connections far faster than its exchanges need"),
        (Rule::ProducerSequenceGap, "producer-sequence-gap", Severity::Warning, "a producer's batch whose sequence skips ahead of what it sent before to that partition"),
        (Rule::ProducerDuplicate, "producer-duplicate", Severity::Error, "one producer batch (id, epoch, sequence) appended twice at different offsets"),
        (Rule::ProducerEpochRegression, "producer-epoch-regression", Severity::Warning, "a producer id sending with an epoch lower than one it used before"),
        (Rule::FetchSessionUnused, "fetch-session-unused", Severity::Note, "Fetch requests that ask for a fetch session and never get one"),
        (Rule::FetchSessionEpoch, "fetch-session-epoch", Severity::Warning, "a fetch session whose epoch skips or goes back, or that the broker no longer knows"),
        (Rule::RebalanceStorm, "rebalance-storm", Severity::Warning, "a group's generation (or member epoch) advancing again and again in a short time"),
        (Rule::MemberFenced, "member-fenced", Severity::Warning, "a group member told it is unknown, fenced or of a stale generation or epoch"),
        (Rule::ThrottleIgnored, "throttle-ignored", Severity::Warning, "a client sending again on a connection before the throttle time it was given has passed"),
        (Rule::MetadataStorm, "metadata-storm", Severity::Warning, "a client sending Metadata requests many times a second"),
        (Rule::TransactionOpen, "transaction-open", Severity::Warning, "a transaction begun and not ended (no EndTxn) long after it began"),
        (Rule::LsoStuck, "lso-stuck", Severity::Warning, "a partition's last stable offset held behind its high watermark for a long time"),
        (Rule::ErrorFromEveryClient, "error-from-every-client", Severity::Warning, "the same error answered by one broker to several clients"),
    ];

    fn entry(self) -> &'static (Rule, &'static str, Severity, &'static str) {
        Rule::ALL
            .iter()
            .find(|(r, ..)| *r == self)
            .unwrap_or(&Rule::ALL[0])
    }

    pub fn id(self) -> &'static str {
        self.entry().1
    }

    pub fn severity(self) -> Severity {
        self.entry().2
    }

    /// What the rule checks.
    pub fn checks(self) -> &'static str {
        self.entry().3
    }

    /// Whether the rule reads the conversation (several frames, connection
    /// events) rather than one frame.
    pub fn is_conversation(self) -> bool {
        self.meaning().is_some()
    }

    /// What a conversation rule's finding usually means, for the reader who
    /// has to act on it: said once per group of findings.
    pub fn meaning(self) -> Option<&'static str> {
        Some(match self {
            Rule::RetryLoop => "the client retries without changing what it sends; unless the error is one that passes (a leader or coordinator moving), it will loop until someone steps in",
            Rule::ErrorNotInVersion => "the broker answered with an error the client cannot expect at this version: a broker bug, and the client may loop or fail in ways its authors never tested",
            Rule::ClosedUnanswered => "a side gave up on the connection: the client after its request timed out, or the broker (often after a request it could not parse or serve); the request's outcome is unknown to the client",
            Rule::ConnectionChurn => "the client reconnects for nearly every exchange: each connection costs a handshake, ApiVersions and often SASL or TLS; look for a client created per operation or a broker closing idle connections",
            Rule::ProducerSequenceGap => "batches in between were never sent or were lost: the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER, and the producer must reset its sequence or epoch",
            Rule::ProducerDuplicate => "the same batch is in the log twice: the broker did not deduplicate a retry (its producer state was lost or expired, or the batch moved to another leader)",
            Rule::ProducerEpochRegression => "two producer instances share the id, or a fenced producer keeps sending: the broker should fence the lower epoch",
            Rule::FetchSessionUnused => "every Fetch lists every partition (no incremental fetches, KIP-227): the broker's session cache is full, or it does not keep sessions",
            Rule::FetchSessionEpoch => "the client and broker disagree on the session: the broker evicted it or the client lost track; the next Fetch starts a new full session",
            Rule::RebalanceStorm => "members keep joining and leaving: look for members exceeding max.poll.interval.ms, session timeouts, or clients restarting",
            Rule::MemberFenced => "the member was removed from its group (session timeout, poll interval exceeded, or a newer member with its instance id) and must rejoin; its uncommitted work may be processed twice",
            Rule::ThrottleIgnored => "the client does not honour ThrottleTimeMs (KIP-219): the broker mutes the connection anyway, and requests sent meanwhile wait or time out",
            Rule::MetadataStorm => "Metadata refreshes this frequent usually follow errors that invalidate the client's metadata (a broker down, a leader moving) and load the brokers",
            Rule::TransactionOpen => "consumers reading committed see nothing past this transaction's first offset until it ends or the transaction timeout aborts it",
            Rule::LsoStuck => "an open transaction holds the last stable offset: read_committed consumers stall at it",
            Rule::ErrorFromEveryClient => "when every client gets the same error from a broker, the broker (or its configuration) is the likely cause, not the clients",
            _ => return None,
        })
    }

    fn of_error(kind: ErrorKind, in_records: bool) -> Rule {
        match kind {
            ErrorKind::TrailingBytes => Rule::TrailingBytes,
            ErrorKind::UnknownMessage => Rule::UnknownVersion,
            ErrorKind::Crc => Rule::BatchCrc,
            ErrorKind::BatchLength => Rule::BatchLength,
            ErrorKind::RecordsCount => Rule::RecordsCount,
            ErrorKind::Codec => Rule::UnknownCodec,
            ErrorKind::Decompression => Rule::Decompression,
            ErrorKind::Budget => Rule::NotChecked,
            ErrorKind::Truncated | ErrorKind::Invalid if in_records => Rule::RecordInvalid,
            ErrorKind::Truncated => Rule::Truncated,
            ErrorKind::Invalid => Rule::InvalidValue,
        }
    }

    /// The rule of a warning; `None` for what is no fault of the bytes (or
    /// is reported from the frame's record damage).
    fn of_warning(kind: WarningKind) -> Option<Rule> {
        Some(match kind {
            WarningKind::OverlongVarint => Rule::NonMinimalVarint,
            WarningKind::NullNotNullable => Rule::NullNotNullable,
            WarningKind::TagOrder => Rule::TagOrder,
            WarningKind::TagVersion => Rule::TagVersion,
            WarningKind::TagSize => Rule::TagSize,
            WarningKind::RecordLength => Rule::RecordLength,
            WarningKind::EmbeddedTrailing | WarningKind::EmbeddedInvalid => Rule::EmbeddedInvalid,
            WarningKind::UnknownPayload => Rule::UnknownPayload,
            WarningKind::NotBatches => Rule::NotBatches,
            WarningKind::RecordOffsets => Rule::OffsetsBackwards,
            WarningKind::LastOffsetDelta => Rule::LastOffsetDelta,
            WarningKind::RecordSequence => Rule::SequenceGap,
            WarningKind::RecordDamage
            | WarningKind::ApiVersionsV0
            | WarningKind::Override
            | WarningKind::Guessed => return None,
        })
    }
}

/// One problem, where it is and what was expected.
#[derive(Clone, Debug, PartialEq)]
pub struct Finding {
    /// The frame's number as `capture --list` shows it (`None` for a stretch of bytes in no frame).
    pub frame: Option<usize>,
    pub time: Option<f64>,
    pub conn: Option<usize>,
    pub direction: Option<Direction>,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub correlation_id: Option<i32>,
    /// Offset in the frame (for skipped bytes: in the direction's byte stream).
    pub offset: Option<u64>,
    pub rule: Rule,
    pub message: String,
    /// Every frame the finding rests on, ascending (at most
    /// [`MAX_FRAMES_NAMED`]); a frame's own finding names its frame.
    pub frames: Vec<usize>,
    /// The time of the last of them, when it is not `time`.
    pub until: Option<f64>,
    /// How many times it happened (a loop's answers, a churn's connections).
    pub count: u64,
    /// The client's id, when the finding is about one client.
    pub client_id: Option<String>,
}

/// Frames a finding names at most; `count` still counts them all.
pub const MAX_FRAMES_NAMED: usize = 10_000;

impl Finding {
    pub fn severity(&self) -> Severity {
        self.rule.severity()
    }
}

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
    in_flight: HashMap<i32, InFlight>,
}

/// Checks a capture frame by frame, keeping what each connection said.
pub struct Checker<'c> {
    cat: &'c Catalogue,
    opts: DecodeOptions,
    conns: HashMap<usize, Conn>,
    api_versions: ApiVersionsReader,
    /// What only the conversation shows (`analysis::diagnosis`).
    diagnosis: Diagnosis<'c>,
    /// Frames decoded and checked.
    pub frames: usize,
}

impl<'c> Checker<'c> {
    /// `opts` carries the release pin and the input's budget.
    pub fn new(cat: &'c Catalogue, opts: DecodeOptions) -> Self {
        let diagnosis = Diagnosis::new(cat, opts.release.as_deref());
        Checker {
            cat,
            // Record batches are read for their findings, not built into nodes.
            opts: DecodeOptions {
                findings_only: true,
                ..opts
            },
            conns: HashMap::new(),
            api_versions: ApiVersionsReader::default(),
            diagnosis,
            frames: 0,
        }
    }

    /// Check one frame of a capture, in capture order.
    pub fn frame(&mut self, f: &CapturedFrame, out: &mut Vec<Finding>) {
        // A SASL token after SaslHandshake v0 has no Kafka header to check.
        if f.kind != crate::decode::FrameKind::Kafka {
            return;
        }
        let at = At::of(f);
        match f.direction {
            Direction::Request => self.request(f, at, out),
            Direction::Response => self.response(f, at, out),
        }
        self.diagnosis.frame(f, out);
    }

    /// A connection opened or closed.
    pub fn conn_event(&mut self, e: &crate::capture::ConnEvent, out: &mut Vec<Finding>) {
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
        let frame = decode_frame(self.cat, f.bytes.clone(), 0, &opts);
        self.frames += 1;
        let expects_response = !acks_zero(self.cat, &frame, self.opts.release.as_deref());
        frame_findings(&frame, &at, out);
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
        let paired = f.correlation_id.and_then(|c| conn.in_flight.remove(&c));
        let (Some(k), Some(v), Some(_)) = (f.api_key, f.api_version, paired) else {
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
        let frame = decode_frame(self.cat, f.bytes.clone(), 0, &opts);
        self.frames += 1;
        frame_findings(&frame, &at, out);
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
            out.push(at.finding(Rule::Unanswered, None, message));
        }
    }
}

/// Findings of one frame on its own: where its decoding stopped, its
/// warnings, its record damage and its record batches' order (last: from
/// the tree's batches, or among the warnings when the batches were read for
/// their findings only, [`DecodeOptions::findings_only`]).
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
    let fetched = frame.direction == Direction::Response;
    let order = crate::decode::records::order::check_tree(&frame.root, fetched);
    out.extend(order.iter().filter_map(warning));
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
    let Some(body) = frame
        .root
        .children
        .iter()
        .find(|n| n.region == Region::RequestBody && n.role == Role::Structure)
    else {
        return false;
    };
    body.children.iter().any(|n| match n.role {
        Role::Field { decl } => {
            spec.fields
                .get(usize::from(decl))
                .is_some_and(|f| FieldMeaning::of(f) == FieldMeaning::Acks)
                && matches!(n.value, Value::Int(0))
        }
        _ => false,
    })
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

/// The counts of a check's findings by severity.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub errors: usize,
    pub warnings: usize,
    pub notes: usize,
}

impl Tally {
    pub fn add(&mut self, f: &Finding) {
        match f.severity() {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
            Severity::Note => self.notes += 1,
        }
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
