//! TLS in captures. A connection whose stream starts with a TLS record is
//! TLS (`detect`) and is never read as Kafka bytes. With the session's keys
//! (a key log, `keylog`, from `--tls-keylog` or the capture's Decryption
//! Secrets Blocks) its records are decrypted (`decrypt`: TLS 1.2 and 1.3
//! AEAD suites) and each direction's plaintext is handed to the frame layer
//! exactly as a plaintext connection's bytes (`session`). Without them, a
//! [`TlsNote`] says what was seen: version, cipher suite, server name, how
//! much application data went each way, and why nothing was decrypted.

pub mod decrypt;
pub mod detect;
pub mod keylog;
pub(crate) mod session;
pub mod synth;

pub use keylog::{KeyLog, Secrets};

use super::skips::StreamCut;
use crate::decode::Direction;
use std::net::SocketAddr;
use std::sync::Arc;

/// Where the keys of a session came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeySource {
    /// The key log given with `--tls-keylog`.
    KeyLog,
    /// A Decryption Secrets Block of the capture (pcapng).
    Capture,
}

impl KeySource {
    pub fn code(self) -> &'static str {
        match self {
            KeySource::KeyLog => "key_log",
            KeySource::Capture => "capture",
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            KeySource::KeyLog => "the key log",
            KeySource::Capture => "the capture's Decryption Secrets Block",
        }
    }
}

/// The keys a capture is read with: a key log file, and the secrets of the
/// capture's own Decryption Secrets Blocks, added as they are read.
#[derive(Clone, Debug, Default)]
pub(crate) struct TlsKeys {
    pub file: Option<Arc<KeyLog>>,
    pub embedded: KeyLog,
}

impl TlsKeys {
    /// The secrets for a session, and where they are from (the key log first).
    pub fn lookup(&self, client_random: &[u8; 32]) -> Option<(&Secrets, KeySource)> {
        if let Some(s) = self.file.as_ref().and_then(|k| k.get(client_random)) {
            return Some((s, KeySource::KeyLog));
        }
        self.embedded
            .get(client_random)
            .map(|s| (s, KeySource::Capture))
    }

    /// Whether any key was given (a key log, or secrets in the capture).
    pub fn any(&self) -> bool {
        self.file.is_some() || !self.embedded.is_empty()
    }
}

/// Why a TLS connection was not decrypted at all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotDecrypted {
    /// No key log was given and the capture holds no secrets.
    NoKeys,
    /// The keys given hold nothing for this session's client random.
    NoSecrets,
    /// The keys given lack the secret this session needs (its key log label).
    MissingSecret(&'static str),
    /// A cipher suite kwire does not decrypt.
    UnsupportedSuite(u16),
    /// A protocol version kwire does not decrypt (before TLS 1.2).
    UnsupportedVersion(u16),
    /// The capture has no ClientHello (it started after the handshake, or lost it).
    NoClientHello,
    /// The capture has no ServerHello (the handshake did not complete in it).
    NoServerHello,
    /// The key log has secrets for this session, but no protected record of
    /// its application data opened with them (wrong secrets).
    KeysDidNotOpen,
}

/// The option that gives the keys, for messages.
pub(crate) const KEYLOG_HINT: &str = "give the session keys with --tls-keylog FILE (an SSLKEYLOGFILE), or a pcapng with a Decryption Secrets Block (editcap --inject-secrets tls,FILE)";

impl NotDecrypted {
    pub fn code(self) -> &'static str {
        match self {
            NotDecrypted::NoKeys => "no_keys",
            NotDecrypted::NoSecrets => "no_secrets_for_session",
            NotDecrypted::MissingSecret(_) => "missing_secret",
            NotDecrypted::UnsupportedSuite(_) => "unsupported_cipher_suite",
            NotDecrypted::UnsupportedVersion(_) => "unsupported_version",
            NotDecrypted::NoClientHello => "no_client_hello",
            NotDecrypted::NoServerHello => "no_server_hello",
            NotDecrypted::KeysDidNotOpen => "keys_did_not_open",
        }
    }

    pub fn describe(self) -> String {
        match self {
            NotDecrypted::NoKeys => "no keys (give --tls-keylog)".into(),
            NotDecrypted::NoSecrets => "the keys given have no secrets for this session (its client random is not in them)".into(),
            NotDecrypted::MissingSecret(label) => format!("the keys given lack this session's {label}"),
            NotDecrypted::UnsupportedSuite(s) => format!("cipher suite {} is not one kwire decrypts (TLS 1.3 suites; TLS 1.2 with AES-GCM or ChaCha20-Poly1305)", suite_label(s)),
            NotDecrypted::UnsupportedVersion(v) => format!("{} is not decrypted (TLS 1.2 and 1.3 are)", detect::version_name(v)),
            NotDecrypted::NoClientHello => "the capture holds no ClientHello for this connection (it starts after the handshake)".into(),
            NotDecrypted::NoServerHello => "the capture holds no ServerHello for this connection (the handshake did not complete in it)".into(),
            NotDecrypted::KeysDidNotOpen => "the keys given did not open the records: the key log's secrets for this session are wrong (each direction's note says which secret)".into(),
        }
    }
}

/// A cipher suite's name, or its number when kwire has no name for it.
pub(crate) fn suite_label(id: u16) -> String {
    decrypt::suite_name(id).map_or_else(|| format!("0x{id:04x}"), str::to_string)
}

/// Why decryption of one direction stopped part-way. After it, the rest of
/// the direction is counted, not decrypted; the plaintext up to it was
/// handed on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlsProblem {
    /// A record did not authenticate (its number in this direction's
    /// protected records, from 0): a wrong key, or damaged bytes.
    Authentication { record: u64 },
    /// `records` protected records from `record` on did not open with keys
    /// that opened this direction's records before (or after) them: damaged
    /// bytes. They are passed over and decryption goes on.
    NotOpened { record: u64, records: u64 },
    /// No value the key log gives for this secret (its label) opened the
    /// direction's first record that needs it (its number): wrong secrets.
    KeysDidNotOpen { label: &'static str, record: u64 },
    /// A protected record with no room for its nonce and tag, or no content type.
    Malformed { record: u64 },
    /// Bytes where a record header should be that are not one.
    BadHeader { header: [u8; 5] },
    /// A record longer than TLS allows.
    TooLarge { len: usize, max: usize },
    /// A record cut short: `have` of its `declared` bytes (header included;
    /// `None` before its whole header) came before `cut_by`.
    Truncated {
        declared: Option<usize>,
        have: usize,
        cut_by: StreamCut,
    },
    /// Bytes the capture never saw: the records after them cannot be found.
    Gap { bytes: u64 },
    /// A secret the key log lacks (its label), needed from this record on.
    MissingSecret(&'static str),
    /// New keys negotiated inside the session (TLS 1.2 renegotiation).
    Renegotiation,
}

impl TlsProblem {
    pub fn code(self) -> &'static str {
        match self {
            TlsProblem::Authentication { .. } => "authentication_failed",
            TlsProblem::NotOpened { .. } => "record_not_opened",
            TlsProblem::KeysDidNotOpen { .. } => "keys_did_not_open",
            TlsProblem::Malformed { .. } => "malformed_record",
            TlsProblem::BadHeader { .. } => "bad_record_header",
            TlsProblem::TooLarge { .. } => "record_too_large",
            TlsProblem::Truncated { .. } => "truncated_record",
            TlsProblem::Gap { .. } => "gap",
            TlsProblem::MissingSecret(_) => "missing_secret",
            TlsProblem::Renegotiation => "renegotiation",
        }
    }

    pub fn describe(self) -> String {
        let rest = "the rest of this direction is not decrypted";
        match self {
            TlsProblem::Authentication { record } => format!("protected record {record} failed authentication (a wrong key, or damaged bytes); {rest}"),
            TlsProblem::NotOpened { record, records: 1 } => format!("protected record {record} did not open (damaged bytes: the records around it open with the same keys); passed over, and decryption goes on"),
            TlsProblem::NotOpened { record, records } => format!("protected records {record}-{} did not open (damaged bytes: the records around them open with the same keys); passed over, and decryption goes on", record + records - 1),
            TlsProblem::KeysDidNotOpen { label, record } => format!("the key log's {label} for this session did not open protected record {record}, the first that needs it (a wrong secret); {rest}"),
            TlsProblem::Malformed { record } => format!("protected record {record} is malformed (too short for its nonce and tag, or no content type); {rest}"),
            TlsProblem::BadHeader { header } => format!("{} is not a TLS record header; {rest}", hex::encode(header)),
            TlsProblem::TooLarge { len, max } => format!("a record of {len} bytes is over the {max} bytes TLS allows; {rest}"),
            TlsProblem::Truncated { declared, have, cut_by } => {
                let by = match cut_by {
                    StreamCut::Gap => "a gap",
                    StreamCut::Closed => "the end of the connection (FIN or RST)",
                    StreamCut::EndOfCapture => "the end of the capture",
                    StreamCut::Decryption => "the end of decryption",
                };
                match declared {
                    Some(d) => format!("a TLS record cut short by {by}: {have} of its {d} bytes"),
                    None => format!("a TLS record cut short by {by}: {have} bytes of its header"),
                }
            }
            TlsProblem::Gap { bytes } => format!("{bytes} bytes never captured (missing from the TCP stream); {rest}"),
            TlsProblem::MissingSecret(label) => format!("the keys given lack {label}; {rest}"),
            TlsProblem::Renegotiation => format!("the session renegotiated its keys, which kwire does not follow; {rest}"),
        }
    }
}

/// What one TLS connection showed, when it ended (or the capture did).
#[derive(Clone, Debug, PartialEq)]
pub struct TlsSession {
    /// The version the ServerHello chose (0x0303 TLS 1.2, 0x0304 TLS 1.3).
    pub version: Option<u16>,
    pub cipher_suite: Option<u16>,
    /// The client random of the ClientHello: the key a key log files the
    /// session's secrets under (public: it travels in clear).
    pub client_random: Option<[u8; 32]>,
    /// The server name the ClientHello asked for (SNI), as sent.
    pub sni: Option<String>,
    /// The application protocols the ClientHello offered (ALPN).
    pub alpn: Vec<String>,
    /// Per direction, requests (client → server) first: records, bytes of
    /// application_data records (their fragments, as on the wire; in TLS 1.3
    /// every protected record is one, the encrypted handshake too), and
    /// plaintext application data decrypted and handed on.
    pub records: [u64; 2],
    pub app_data_bytes: [u64; 2],
    pub decrypted_bytes: [u64; 2],
    /// Bytes of each TLS stream after decryption stopped (the record that
    /// stopped it included), not read as records.
    pub bytes_after_stop: [u64; 2],
    /// Where its keys came from, or why it was not decrypted.
    pub decryption: Result<KeySource, NotDecrypted>,
    /// Per direction: the problem that stopped decryption part-way.
    pub stopped: [Option<TlsProblem>; 2],
    /// Decrypted, and the plaintext is not Kafka.
    pub not_kafka: bool,
}

impl TlsSession {
    pub fn decrypted(&self) -> bool {
        self.decryption.is_ok()
    }
}

/// What happened to a TLS connection, typed.
#[derive(Clone, Debug, PartialEq)]
pub enum TlsEvent {
    /// Decryption of one direction stopped at this offset of its TLS stream.
    Stopped {
        direction: Direction,
        offset: u64,
        problem: TlsProblem,
    },
    /// Records of one direction that did not open were passed over from
    /// this offset of its TLS stream (`TlsProblem::NotOpened`); about `lost`
    /// bytes of plaintext are missing from the direction's stream there, and
    /// decryption went on.
    Skipped {
        direction: Direction,
        offset: u64,
        problem: TlsProblem,
        lost: u64,
    },
    /// The connection's summary, when it ended (or the capture did); boxed,
    /// so that what a capture yields stays as small as a frame.
    Session(Box<TlsSession>),
}

/// A note on a TLS connection (a `Captured::Tls`).
#[derive(Clone, Debug, PartialEq)]
pub struct TlsNote {
    pub timestamp: f64,
    pub conn: usize,
    pub client: SocketAddr,
    pub server: SocketAddr,
    pub event: TlsEvent,
}

/// TLS connections of a capture, counted as their summaries come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TlsTally {
    pub connections: usize,
    pub decrypted: usize,
    /// Not decrypted: no key, or the reason the summary gives.
    pub not_decrypted: usize,
    /// Of those, for want of keys: none given.
    pub without_keys: usize,
    /// Of those, with keys given that hold no secret for the session (a
    /// key log of another run), or not every one it needs.
    pub secrets_missing: usize,
    /// Of those, with keys that did not open the records (wrong secrets).
    pub wrong_keys: usize,
    /// Directions whose decryption stopped part-way.
    pub stopped: usize,
    /// Damaged records passed over (decryption went on after them).
    pub skipped_records: u64,
}

impl TlsTally {
    /// Both tallies' counts.
    pub(crate) fn merge(&mut self, other: &TlsTally) {
        self.connections += other.connections;
        self.decrypted += other.decrypted;
        self.not_decrypted += other.not_decrypted;
        self.without_keys += other.without_keys;
        self.secrets_missing += other.secrets_missing;
        self.wrong_keys += other.wrong_keys;
        self.stopped += other.stopped;
        self.skipped_records += other.skipped_records;
    }

    pub fn add(&mut self, n: &TlsNote) {
        match &n.event {
            TlsEvent::Stopped { .. } => self.stopped += 1,
            TlsEvent::Skipped { problem, .. } => {
                if let TlsProblem::NotOpened { records, .. } = problem {
                    self.skipped_records += records;
                }
            }
            TlsEvent::Session(s) => {
                self.connections += 1;
                match s.decryption {
                    Ok(_) => self.decrypted += 1,
                    Err(e) => {
                        self.not_decrypted += 1;
                        if e == NotDecrypted::KeysDidNotOpen {
                            self.wrong_keys += 1;
                        }
                        match e {
                            NotDecrypted::NoKeys => self.without_keys += 1,
                            NotDecrypted::NoSecrets | NotDecrypted::MissingSecret(_) => {
                                self.secrets_missing += 1
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }

    /// What to say on stderr of a capture with TLS connections not (wholly) decrypted.
    pub fn summary(&self) -> Option<String> {
        if self.not_decrypted == 0 && self.stopped == 0 && self.skipped_records == 0 {
            return None;
        }
        let mut parts = Vec::new();
        if self.not_decrypted > 0 {
            let conns = if self.not_decrypted == 1 {
                "connection was"
            } else {
                "connections were"
            };
            let mut why = Vec::new();
            if self.wrong_keys > 0 {
                why.push(format!(
                    "{} with keys that did not open their records",
                    self.wrong_keys
                ));
            }
            if self.secrets_missing > 0 {
                why.push(format!(
                    "{} whose secrets the keys given do not hold: give the key log of the run that was captured",
                    self.secrets_missing
                ));
            }
            if self.without_keys > 0 {
                why.push(format!(
                    "{} for want of keys: {KEYLOG_HINT}",
                    self.without_keys
                ));
            }
            let hint = if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join("; "))
            };
            parts.push(format!(
                "{} TLS {conns} not decrypted, so not decoded{hint}",
                self.not_decrypted
            ));
        }
        if self.stopped > 0 {
            let dirs = if self.stopped == 1 {
                "direction"
            } else {
                "directions"
            };
            parts.push(format!(
                "decryption stopped part-way in {} TLS {dirs}",
                self.stopped
            ));
        }
        if self.skipped_records > 0 {
            let records = if self.skipped_records == 1 {
                "record"
            } else {
                "records"
            };
            parts.push(format!(
                "{} damaged TLS {records} did not open and were passed over",
                self.skipped_records
            ));
        }
        Some(parts.join("; ") + "; `kwire capture --list` shows each")
    }
}
