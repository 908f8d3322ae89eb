//! What a check finds: a [`Finding`] names its [`Rule`], whose severity and
//! usual meaning are fixed; frame checks (`check`) and conversation rules
//! (`diagnosis`) both make them, and every view reads them.

use crate::decode::{Direction, ErrorKind, WarningKind};

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
    DuplicateResponse,
    AnsweredAcksZero,
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
    PollAbandoned,
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
    pub const ALL: [(Rule, &'static str, Severity, &'static str); 51] = [
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
        (Rule::DuplicateResponse, "duplicate-response", Severity::Error, "a second response under a correlation id whose request was answered already"),
        (Rule::AnsweredAcksZero, "answered-acks-0", Severity::Error, "a response to a Produce request sent with acks=0, which expects none"),
        (Rule::Unanswered, "unanswered", Severity::Note, "a request with no response by the end of the capture (acks=0 produce requests expect none)"),
        (Rule::BatchCrc, "batch-crc", Severity::Error, "a RecordBatch or message CRC that is not the bytes' checksum"),
        (Rule::NotBatches, "records-not-batches", Severity::Error, "a records field whose bytes are not record batches"),
        (Rule::BatchLength, "batch-length", Severity::Error, "a batchLength the format cannot have"),
        (Rule::RecordsCount, "records-count", Severity::Error, "a recordsCount (or batchLength) that disagrees with the records in the bytes"),
        (Rule::UnknownCodec, "unknown-codec", Severity::Error, "a compression codec the format does not define"),
        (Rule::Decompression, "decompression", Severity::Error, "compressed records that do not decompress"),
        (Rule::RecordInvalid, "record-invalid", Severity::Error, "a record whose fields do not decode"),
        (Rule::RecordLength, "record-length", Severity::Error, "a record length that is not what its fields used"),
        (Rule::OffsetsBackwards, "offsets-backwards", Severity::Error, "record offsets that do not rise within a batch, go backwards across fetched batches, or start a log segment below the base offset its file name gives"),
        (Rule::LastOffsetDelta, "last-offset-delta", Severity::Error, "a batch's lastOffsetDelta that is not its last record's offsetDelta (a fetched batch of a compacted topic may end past its last record)"),
        (Rule::SequenceGap, "sequence-gap", Severity::Warning, "a producer's baseSequence that does not follow its batch before (fetched: that goes back)"),
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
        (Rule::PollAbandoned, "poll-abandoned", Severity::Warning, "a client closing its connection inside its long poll's MaxWaitMs and reconnecting to poll again, time after time"),
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

    /// Its place in [`Rule::ALL`]: the bit a display filter's `finding == RULE` tests.
    pub fn bit(self) -> u32 {
        Rule::ALL.iter().position(|(r, ..)| *r == self).unwrap_or(0) as u32
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

    /// What a conversation rule's finding usually means, for the reader who
    /// has to act on it: said once per group of findings.
    pub fn meaning(self) -> Option<&'static str> {
        Some(match self {
            Rule::RetryLoop => "the client retries without changing what it sends; unless the error is one that passes (a leader or coordinator moving), it will loop until someone steps in",
            Rule::ErrorNotInVersion => "the broker answered with an error the client cannot expect at this version: a broker bug, and the client may loop or fail in ways its authors never tested",
            Rule::ClosedUnanswered => "a side gave up on the connection: the client after its request timed out, or the broker (often after a request it could not parse or serve); the request's outcome is unknown to the client",
            Rule::ConnectionChurn => "the client reconnects for nearly every exchange: each connection costs a handshake, ApiVersions and often SASL or TLS; look for a client created per operation or a broker closing idle connections",
            Rule::PollAbandoned => "the client's request timeout (request.timeout.ms; kafka-python's request_timeout_ms) runs out before the wait it asks the broker for (fetch.max.wait.ms): each poll that finds no new data ends in a closed connection, a new one and a lost fetch session; make the timeout longer than the wait",
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
            Rule::DuplicateResponse => "the broker, or something between it and the client, sent one answer twice: the Java client holds it against its next request's id and closes the connection on the mismatch; librdkafka drops it as an answer to an unknown id",
            Rule::AnsweredAcksZero => "a broker sends nothing back for acks=0: a client that tracks no answer for that request takes this one for its next request's answer (the Java client then closes the connection on the correlation id mismatch)",
            Rule::ErrorFromEveryClient => "when every client gets the same error from a broker, the broker (or its configuration) is the likely cause, not the clients",
            _ => return None,
        })
    }

    pub(super) fn of_error(kind: ErrorKind, in_records: bool) -> Rule {
        match kind {
            ErrorKind::TrailingBytes => Rule::TrailingBytes,
            ErrorKind::UnknownMessage => Rule::UnknownVersion,
            ErrorKind::Crc => Rule::BatchCrc,
            ErrorKind::BatchLength => Rule::BatchLength,
            ErrorKind::RecordsCount => Rule::RecordsCount,
            ErrorKind::RecordLength => Rule::RecordLength,
            ErrorKind::Codec => Rule::UnknownCodec,
            ErrorKind::Decompression => Rule::Decompression,
            ErrorKind::Budget => Rule::NotChecked,
            ErrorKind::Truncated | ErrorKind::Invalid if in_records => Rule::RecordInvalid,
            ErrorKind::Truncated => Rule::Truncated,
            ErrorKind::Invalid => Rule::InvalidValue,
        }
    }

    /// How bad what a frame's warning says is, as `check` rates it: the
    /// severity of its rule (record damage's too), else a warning. The tree
    /// views label each warning line with it.
    pub(crate) fn severity_of(w: &crate::decode::Warning) -> Severity {
        match w.kind {
            WarningKind::RecordDamage(kind) => Rule::of_error(kind, true).severity(),
            kind => Rule::of_warning(kind).map_or(Severity::Warning, Rule::severity),
        }
    }

    /// The rule of a warning; `None` for what is no fault of the bytes (or
    /// is reported from the frame's record damage).
    pub(super) fn of_warning(kind: WarningKind) -> Option<Rule> {
        Some(match kind {
            WarningKind::OverlongVarint => Rule::NonMinimalVarint,
            WarningKind::NullNotNullable => Rule::NullNotNullable,
            WarningKind::TagOrder => Rule::TagOrder,
            WarningKind::TagVersion => Rule::TagVersion,
            WarningKind::TagSize => Rule::TagSize,
            WarningKind::EmbeddedTrailing | WarningKind::EmbeddedInvalid => Rule::EmbeddedInvalid,
            WarningKind::UnknownPayload => Rule::UnknownPayload,
            WarningKind::NotBatches => Rule::NotBatches,
            WarningKind::RecordOffsets => Rule::OffsetsBackwards,
            WarningKind::LastOffsetDelta => Rule::LastOffsetDelta,
            WarningKind::RecordSequence => Rule::SequenceGap,
            WarningKind::RecordDamage(_)
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
