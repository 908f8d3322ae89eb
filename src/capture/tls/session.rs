//! One TLS connection, record by record in each direction: the handshake in
//! clear (ClientHello, ServerHello), the keys from the key log once the
//! ServerHello names the suite, then every protected record opened in turn,
//! following TLS 1.3's switch from handshake to application keys at each
//! side's Finished and its KeyUpdates, and TLS 1.2's ChangeCipherSpec. The
//! plaintext application data of each direction is handed back to the
//! caller, in order; a problem stops its direction (the rest is counted).
//! What is held: one record per direction (at most 5 + 2^14 + 2048 bytes)
//! and one handshake message being read (at most `detect::MAX_KEPT`).

use super::decrypt::{self, next_traffic_secret, suite, OpenError, RecordKeys, Suite};
use super::detect::{self, record_header, ClientHello, Messages, ServerHello, HEADER};
use super::{KeySource, NotDecrypted, TlsKeys, TlsProblem, TlsSession};
use crate::capture::skips::StreamCut;

/// TLS 1.3 with no handshake secret in the key log: protected records that
/// do not open with the application key are taken as the encrypted
/// handshake, up to this many (a side's encrypted handshake is a few
/// records: EncryptedExtensions to Finished, a certificate chain spanning a
/// few); then the traffic secret is taken to be wrong.
const MAX_TRIAL: usize = 8;

/// New keys that do not open the first record they should: one more record
/// is tried (the first may be damaged) before they are said to be wrong.
const NEW_KEYS_TRIAL: usize = 2;

/// Records in a row that may fail to open with keys that opened records
/// before them and still be taken as damaged (each passed over); one more
/// stops the direction.
const MAX_DAMAGED_RUN: u64 = 8;

/// Keys a direction may switch to, each tried on the next protected record;
/// the first that opens it is used from then on. Several when the key log
/// gives a secret more than one value.
struct Choices {
    label: &'static str,
    /// Records none of them opens before the secret is taken to be wrong
    /// (one more than the damaged records in a row it allows for).
    limit: usize,
    /// The keys, and for TLS 1.3 the traffic secret they come from (kept for KeyUpdate).
    keys: Vec<(RecordKeys, Option<Vec<u8>>)>,
}

#[derive(Default)]
struct Half {
    /// The record being collected: its header, then its fragment.
    rec: Vec<u8>,
    /// Stream offset of `rec[0]` (the next record's start when `rec` is empty).
    offset: u64,
    records: u64,
    app_bytes: u64,
    plain: u64,
    /// Handshake messages in clear, and inside protected records.
    clear: Messages,
    inner: Messages,
    /// Records are protected from now on (TLS 1.2: after ChangeCipherSpec;
    /// TLS 1.3: after the ServerHello).
    protected: bool,
    /// The keys records are opened with now, once one of `choices` opened a record.
    keys: Option<RecordKeys>,
    /// Keys to try on the next protected record.
    choices: Option<Choices>,
    /// TLS 1.2: the choices for after ChangeCipherSpec.
    pending: Option<Choices>,
    /// TLS 1.3: the application traffic secret in use (for KeyUpdate), the
    /// values the key log gives it and its label, whether application keys
    /// are in use, and the label of a secret the key log lacks when this
    /// direction has no keys at all.
    traffic: Option<Vec<u8>>,
    traffic_values: Vec<Vec<u8>>,
    traffic_label: &'static str,
    application: bool,
    missing: Option<&'static str>,
    /// The records that `choices` did not open so far (stream offset,
    /// plaintext room).
    trial: Vec<(u64, u64)>,
    /// A record of application data (TLS 1.2: any protected record) opened.
    opened_app: bool,
    /// Records in a row that did not open with keys that opened records before.
    damaged_run: u64,
    /// Protected records opened or tried (the number a problem names).
    protected_records: u64,
    /// Decryption stopped, and why.
    stopped: Option<TlsProblem>,
    /// Bytes not read as records after decryption stopped.
    passed_over: u64,
    ended: bool,
}

/// Why `feed` returned before taking all its bytes.
#[derive(Debug, PartialEq)]
pub(crate) enum Halt {
    /// Decryption of the direction stopped at this stream offset.
    Stopped(u64, TlsProblem),
    /// Records that did not open were passed over at this stream offset;
    /// about `lost` bytes of plaintext are missing from the stream after the
    /// first `at_plain` bytes handed back; `unread` bytes of the data fed
    /// are left to feed again.
    Skipped {
        offset: u64,
        problem: TlsProblem,
        lost: u64,
        at_plain: usize,
        unread: usize,
    },
}

/// What one record did to its direction, beyond its plaintext.
enum Outcome {
    Stop(TlsProblem),
    /// Records passed over, their stream offset and plaintext room; they come
    /// before the plaintext from `at_plain` on.
    Skip {
        offset: u64,
        problem: TlsProblem,
        lost: u64,
        at_plain: usize,
    },
}

/// TLS 1.3: the keys of each value the key log gives a traffic secret.
fn traffic_keys(s: Suite, values: &[Vec<u8>]) -> Vec<(RecordKeys, Option<Vec<u8>>)> {
    values
        .iter()
        .filter_map(|t| Some((RecordKeys::tls13(s, t)?, Some(t.clone()))))
        .collect()
}

enum Keys {
    /// The ServerHello has not come yet.
    Pending,
    Ready(KeySource),
    Not(NotDecrypted),
}

pub(crate) struct TlsConn {
    /// The half carrying the ClientHello, once known.
    client: Option<usize>,
    hello: Option<ClientHello>,
    server: Option<ServerHello>,
    suite: Option<Suite>,
    keys: Keys,
    halves: [Half; 2],
    /// The summary was handed on.
    pub reported: bool,
}

impl TlsConn {
    pub fn new(client: Option<usize>) -> TlsConn {
        TlsConn {
            client,
            hello: None,
            server: None,
            suite: None,
            keys: Keys::Pending,
            halves: Default::default(),
            reported: false,
        }
    }

    /// The half that carries the client's records, once known.
    pub fn client(&self) -> Option<usize> {
        self.client
    }

    pub fn ended(&self, hi: usize) -> bool {
        self.halves[hi].ended
    }

    fn tls13(&self) -> bool {
        self.suite.is_some_and(|s| s.tls13)
    }

    /// Take bytes of one direction's TLS stream; its plaintext application
    /// data is appended to `plain`. Returns early when decryption of the
    /// direction stops (the rest is counted) or when records that did not
    /// open were passed over (feed the bytes it left unread again).
    pub fn feed(
        &mut self,
        hi: usize,
        mut data: &[u8],
        keys: &TlsKeys,
        plain: &mut Vec<u8>,
    ) -> Option<Halt> {
        if self.halves[hi].stopped.is_some() || self.halves[hi].ended {
            self.halves[hi].passed_over += data.len() as u64;
            return None;
        }
        loop {
            let h = &mut self.halves[hi];
            if h.rec.len() < HEADER {
                if data.is_empty() {
                    return None;
                }
                let n = (HEADER - h.rec.len()).min(data.len());
                h.rec.extend_from_slice(&data[..n]);
                data = &data[n..];
                if h.rec.len() < HEADER {
                    return None;
                }
                if record_header(&h.rec).is_none() {
                    let len = usize::from(u16::from_be_bytes([h.rec[3], h.rec[4]]));
                    let problem = if (20..=24).contains(&h.rec[0])
                        && h.rec[1] == 3
                        && len > detect::MAX_FRAGMENT_12
                    {
                        TlsProblem::TooLarge {
                            len,
                            max: detect::MAX_FRAGMENT_12,
                        }
                    } else {
                        let mut header = [0; 5];
                        header.copy_from_slice(&h.rec[..5]);
                        TlsProblem::BadHeader { header }
                    };
                    let (at, p) = self.stop(hi, problem, data.len());
                    return Some(Halt::Stopped(at, p));
                }
            }
            let len = usize::from(u16::from_be_bytes([h.rec[3], h.rec[4]]));
            let need = HEADER + len - h.rec.len();
            let n = need.min(data.len());
            h.rec.extend_from_slice(&data[..n]);
            data = &data[n..];
            if n < need {
                return None;
            }
            let mut rec = std::mem::take(&mut h.rec);
            let outcome = self.record(hi, &mut rec, keys, plain);
            let h = &mut self.halves[hi];
            match outcome {
                None => {}
                Some(Outcome::Stop(p)) => {
                    h.rec = rec;
                    let (at, p) = self.stop(hi, p, data.len());
                    return Some(Halt::Stopped(at, p));
                }
                Some(Outcome::Skip {
                    offset,
                    problem,
                    lost,
                    at_plain,
                }) => {
                    h.offset += rec.len() as u64;
                    rec.clear();
                    h.rec = rec;
                    return Some(Halt::Skipped {
                        offset,
                        problem,
                        lost,
                        at_plain,
                        unread: data.len(),
                    });
                }
            }
            h.offset += rec.len() as u64;
            rec.clear();
            h.rec = rec;
        }
    }

    /// Stop decrypting a direction: the record held and `rest` more bytes are passed over.
    fn stop(&mut self, hi: usize, problem: TlsProblem, rest: usize) -> (u64, TlsProblem) {
        let h = &mut self.halves[hi];
        h.stopped = Some(problem);
        h.passed_over += (h.rec.len() + rest) as u64;
        h.rec = Vec::new();
        h.keys = None;
        h.choices = None;
        h.pending = None;
        (h.offset, problem)
    }

    /// Bytes of a direction the capture never saw.
    pub fn gap(&mut self, hi: usize, bytes: u64) -> Option<(u64, TlsProblem)> {
        let h = &mut self.halves[hi];
        if h.stopped.is_some() || h.ended {
            h.passed_over += bytes;
            return None;
        }
        let (offset, problem) = self.stop(hi, TlsProblem::Gap { bytes }, 0);
        self.halves[hi].passed_over += bytes;
        Some((offset, problem))
    }

    /// No more bytes will come in a direction: a record held is cut short.
    pub fn end(&mut self, hi: usize, cut_by: StreamCut) -> Option<(u64, TlsProblem)> {
        let h = &mut self.halves[hi];
        if h.ended {
            return None;
        }
        h.ended = true;
        // Nothing more comes: what was held for it goes.
        h.clear = Messages::default();
        h.inner = Messages::default();
        // New keys that opened none of the records they were tried on (with
        // a handshake's worth allowed, the summary says it instead).
        if let (None, Some(choices), Some(&(offset, _))) = (h.stopped, &h.choices, h.trial.first())
        {
            if choices.limit == NEW_KEYS_TRIAL {
                let problem = TlsProblem::KeysDidNotOpen {
                    label: choices.label,
                    record: h.protected_records - h.trial.len() as u64,
                };
                h.stopped = Some(problem);
                h.choices = None;
                h.rec = Vec::new();
                return Some((offset, problem));
            }
        }
        if h.stopped.is_some() || h.rec.is_empty() {
            h.rec = Vec::new();
            return None;
        }
        let declared = (h.rec.len() >= HEADER)
            .then(|| HEADER + usize::from(u16::from_be_bytes([h.rec[3], h.rec[4]])));
        let have = h.rec.len();
        Some(self.stop(
            hi,
            TlsProblem::Truncated {
                declared,
                have,
                cut_by,
            },
            0,
        ))
    }

    /// One whole record (header and fragment).
    fn record(
        &mut self,
        hi: usize,
        rec: &mut [u8],
        keys: &TlsKeys,
        plain: &mut Vec<u8>,
    ) -> Option<Outcome> {
        let ty = rec[0];
        let len = rec.len() - HEADER;
        let tls13 = self.tls13();
        let h = &mut self.halves[hi];
        h.records += 1;
        if ty == detect::APPLICATION_DATA {
            h.app_bytes += len as u64;
        }
        if tls13 && ty == detect::APPLICATION_DATA && len > detect::MAX_FRAGMENT_13 {
            return Some(Outcome::Stop(TlsProblem::TooLarge {
                len,
                max: detect::MAX_FRAGMENT_13,
            }));
        }
        match ty {
            detect::CHANGE_CIPHER_SPEC if tls13 => None, // middlebox compatibility: means nothing
            detect::CHANGE_CIPHER_SPEC => {
                if h.protected {
                    return Some(Outcome::Stop(TlsProblem::Renegotiation));
                }
                h.protected = true;
                h.choices = h.pending.take();
                if matches!(self.keys, Keys::Pending) {
                    self.keys = Keys::Not(if self.hello.is_none() {
                        NotDecrypted::NoClientHello
                    } else {
                        NotDecrypted::NoServerHello
                    });
                }
                None
            }
            // TLS 1.3 protects only application_data records; TLS 1.2 every record after ChangeCipherSpec.
            _ if h.protected && (!tls13 || ty == detect::APPLICATION_DATA) => {
                self.protected(hi, rec, plain)
            }
            detect::HANDSHAKE => {
                let mut hellos = Vec::new();
                h.clear.feed(
                    &rec[HEADER..],
                    |t| t == detect::CLIENT_HELLO || t == detect::SERVER_HELLO,
                    &mut |t, body| {
                        if let Some(b) = body {
                            hellos.push((t, b.to_vec()));
                        }
                    },
                );
                for (t, body) in hellos {
                    match t {
                        detect::CLIENT_HELLO => self.client_hello(hi, &body),
                        _ => self.server_hello(hi, &body, keys),
                    }
                }
                None
            }
            detect::APPLICATION_DATA => {
                // Application data before any keys: the capture missed the handshake.
                if matches!(self.keys, Keys::Pending) {
                    self.keys = Keys::Not(if self.hello.is_none() {
                        NotDecrypted::NoClientHello
                    } else {
                        NotDecrypted::NoServerHello
                    });
                }
                None
            }
            _ => None, // alerts and heartbeats in clear
        }
    }

    fn client_hello(&mut self, hi: usize, body: &[u8]) {
        let Some(hello) = detect::client_hello(body) else {
            return;
        };
        self.client.get_or_insert(hi);
        // A second ClientHello (after a HelloRetryRequest) has the same random.
        if self.hello.is_none() {
            self.hello = Some(hello);
        }
    }

    fn server_hello(&mut self, hi: usize, body: &[u8], keys: &TlsKeys) {
        let Some(sh) = detect::server_hello(body) else {
            return;
        };
        self.client.get_or_insert(1 - hi);
        if sh.retry || self.server.is_some() {
            return;
        }
        self.server = Some(sh);
        self.keys = match self.set_up(sh, keys) {
            Ok(source) => Keys::Ready(source),
            Err(why) => Keys::Not(why),
        };
    }

    /// The ServerHello names the suite: the keys of both directions.
    fn set_up(&mut self, sh: ServerHello, keys: &TlsKeys) -> Result<KeySource, NotDecrypted> {
        let Some(hello) = &self.hello else {
            return Err(NotDecrypted::NoClientHello);
        };
        if sh.version != 0x0303 && sh.version != 0x0304 {
            return Err(NotDecrypted::UnsupportedVersion(sh.version));
        }
        let tls13 = sh.version == 0x0304;
        let s = suite(sh.cipher_suite)
            .filter(|s| s.tls13 == tls13)
            .ok_or(NotDecrypted::UnsupportedSuite(sh.cipher_suite))?;
        self.suite = Some(s);
        let Some((secrets, source)) = keys.lookup(&hello.random) else {
            return Err(if keys.any() {
                NotDecrypted::NoSecrets
            } else {
                NotDecrypted::NoKeys
            });
        };
        let client = self.client.unwrap_or(0);
        if !tls13 {
            let mut sides = [Vec::new(), Vec::new()];
            for master in &secrets.master {
                if let Some((c, sv)) = RecordKeys::tls12(s, master, &hello.random, &sh.random) {
                    sides[0].push((c, None));
                    sides[1].push((sv, None));
                }
            }
            if sides[0].is_empty() {
                return Err(NotDecrypted::MissingSecret("CLIENT_RANDOM"));
            }
            let [c, sv] = sides;
            for (i, keys) in [(client, c), (1 - client, sv)] {
                self.halves[i].pending = Some(Choices {
                    label: "CLIENT_RANDOM",
                    limit: NEW_KEYS_TRIAL,
                    keys,
                });
            }
            return Ok(source);
        }
        let sides = [
            (
                client,
                &secrets.client_handshake,
                &secrets.client_traffic,
                "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
                "CLIENT_TRAFFIC_SECRET_0",
            ),
            (
                1 - client,
                &secrets.server_handshake,
                &secrets.server_traffic,
                "SERVER_HANDSHAKE_TRAFFIC_SECRET",
                "SERVER_TRAFFIC_SECRET_0",
            ),
        ];
        if sides
            .iter()
            .all(|(_, hs, ap, ..)| hs.is_empty() && ap.is_empty())
        {
            return Err(NotDecrypted::MissingSecret("CLIENT_TRAFFIC_SECRET_0"));
        }
        for (i, hs, ap, hs_label, ap_label) in sides {
            let h = &mut self.halves[i];
            h.protected = true;
            h.traffic_values = ap.clone();
            h.traffic_label = ap_label;
            let keys: Vec<_> = hs
                .iter()
                .filter_map(|secret| Some((RecordKeys::tls13(s, secret)?, None)))
                .collect();
            h.choices = if !keys.is_empty() {
                Some(Choices {
                    label: hs_label,
                    limit: NEW_KEYS_TRIAL,
                    keys,
                })
            } else {
                // Without the handshake secret, the first record that opens
                // with the application key ends the encrypted handshake.
                Some(Choices {
                    label: ap_label,
                    limit: MAX_TRIAL,
                    keys: traffic_keys(s, ap),
                })
                .filter(|c| !c.keys.is_empty())
            };
            if h.choices.is_none() {
                h.missing = Some(if ap.is_empty() { ap_label } else { hs_label });
            }
        }
        Ok(source)
    }

    /// A protected record: open it and take what it holds.
    fn protected(&mut self, hi: usize, rec: &mut [u8], plain: &mut Vec<u8>) -> Option<Outcome> {
        if !matches!(self.keys, Keys::Ready(_)) {
            return None; // counted, not decrypted: the summary says why
        }
        let s = self.suite?;
        let h = &mut self.halves[hi];
        let record = h.protected_records;
        h.protected_records += 1;
        let (head, frag) = rec.split_at_mut(HEADER);
        let mut header = [0; HEADER];
        header.copy_from_slice(head);
        let room = decrypt::plaintext_room(s, frag.len());
        let at_plain = plain.len();
        // Records passed over before this one, said once this one is read.
        let mut passed = None;
        if let Some(mut choices) = h.choices.take() {
            // New keys: the first choice that opens this record is the one. The
            // records before it that none opened may have been damaged records
            // of those keys: each choice is tried at the sequence numbers
            // they would have taken.
            let mut found = None;
            'search: for seq in 0..=h.trial.len() as u64 {
                for (i, (k, _)) in choices.keys.iter_mut().enumerate() {
                    let mut copy = frag.to_vec();
                    k.seq = seq;
                    let opens = k.open(&header, &mut copy).is_ok();
                    k.seq = seq;
                    if opens {
                        found = Some((i, seq));
                        break 'search;
                    }
                }
            }
            let Some((i, seq)) = found else {
                h.trial.push((h.offset, room));
                if h.trial.len() >= choices.limit {
                    return Some(Outcome::Stop(TlsProblem::KeysDidNotOpen {
                        label: choices.label,
                        record: record + 1 - h.trial.len() as u64,
                    }));
                }
                h.choices = Some(choices);
                return None;
            };
            let (keys, traffic) = choices.keys.swap_remove(i);
            h.keys = Some(keys);
            if traffic.is_some() {
                h.traffic = traffic;
                h.application = true;
            }
            let damaged = &h.trial[h.trial.len() - seq as usize..];
            if let Some(&(offset, _)) = damaged.first() {
                passed = Some(Outcome::Skip {
                    offset,
                    problem: TlsProblem::NotOpened {
                        record: record - seq,
                        records: seq,
                    },
                    lost: damaged.iter().map(|d| d.1).sum(),
                    at_plain,
                });
            }
            h.trial = Vec::new();
        }
        if let (None, Some(label)) = (&h.keys, h.missing) {
            return Some(Outcome::Stop(TlsProblem::MissingSecret(label)));
        }
        let keys = h.keys.as_mut()?;
        let (range, inner) = match keys.open(&header, frag) {
            Ok(x) => x,
            Err(OpenError::Authentication | OpenError::TooShort | OpenError::NoContentType) => {
                // Keys that opened records before: this one is damaged, unless
                // too many in a row fail.
                h.damaged_run += 1;
                if h.damaged_run > MAX_DAMAGED_RUN {
                    return Some(Outcome::Stop(TlsProblem::Authentication { record }));
                }
                return Some(Outcome::Skip {
                    offset: h.offset,
                    problem: TlsProblem::NotOpened { record, records: 1 },
                    lost: room,
                    at_plain,
                });
            }
        };
        h.damaged_run = 0;
        if h.application || !s.tls13 {
            h.opened_app = true;
        }
        let data = &frag[range];
        let stop = |p| Some(Outcome::Stop(p));
        match inner {
            detect::APPLICATION_DATA => {
                plain.extend_from_slice(data);
                h.plain += data.len() as u64;
            }
            detect::HANDSHAKE if s.tls13 => {
                let (mut finished, mut update) = (false, false);
                let application = h.application;
                h.inner.feed(data, |_| false, &mut |t, _| match t {
                    detect::FINISHED if !application => finished = true,
                    detect::KEY_UPDATE if application => update = true,
                    _ => {}
                });
                // Keys change at the record after the message (RFC 8446 §5.1).
                if finished {
                    let keys = traffic_keys(s, &h.traffic_values);
                    if keys.is_empty() {
                        return stop(TlsProblem::MissingSecret(h.traffic_label));
                    }
                    h.keys = None;
                    h.choices = Some(Choices {
                        label: h.traffic_label,
                        limit: NEW_KEYS_TRIAL,
                        keys,
                    });
                } else if update {
                    let Some(next) = h
                        .traffic
                        .as_ref()
                        .and_then(|t| next_traffic_secret(s.hash, t))
                    else {
                        return stop(TlsProblem::MissingSecret(h.traffic_label));
                    };
                    h.keys = RecordKeys::tls13(s, &next);
                    h.traffic = Some(next);
                }
            }
            _ => {} // TLS 1.2 Finished, alerts, heartbeats
        }
        passed
    }

    /// The connection's summary; directions in the session are client → server first.
    pub fn session(&self, not_kafka: bool) -> TlsSession {
        let c = self.client.unwrap_or(0);
        let pair = |f: &dyn Fn(&Half) -> u64| [f(&self.halves[c]), f(&self.halves[1 - c])];
        // Keys that opened no application data while records were refused
        // them are wrong keys, whatever opened the handshake.
        let refused = |h: &Half| {
            matches!(h.stopped, Some(TlsProblem::KeysDidNotOpen { .. })) || !h.trial.is_empty()
        };
        let decryption = match self.keys {
            Keys::Ready(_)
                if !self.halves.iter().any(|h| h.opened_app) && self.halves.iter().any(refused) =>
            {
                Err(NotDecrypted::KeysDidNotOpen)
            }
            Keys::Ready(source) => Ok(source),
            Keys::Not(why) => Err(why),
            Keys::Pending if self.hello.is_none() => Err(NotDecrypted::NoClientHello),
            Keys::Pending => Err(NotDecrypted::NoServerHello),
        };
        TlsSession {
            version: self.server.map(|s| s.version),
            cipher_suite: self.server.map(|s| s.cipher_suite),
            client_random: self.hello.as_ref().map(|h| h.random),
            sni: self.hello.as_ref().and_then(|h| h.sni.clone()),
            alpn: self
                .hello
                .as_ref()
                .map(|h| h.alpn.clone())
                .unwrap_or_default(),
            records: pair(&|h| h.records),
            app_data_bytes: pair(&|h| h.app_bytes),
            decrypted_bytes: pair(&|h| h.plain),
            bytes_after_stop: pair(&|h| h.passed_over),
            decryption,
            stopped: [self.halves[c].stopped, self.halves[1 - c].stopped],
            not_kafka,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::synth::Synth;
    use super::super::{KeyLog, TlsKeys};
    use super::*;
    use std::sync::Arc;

    fn keys(log: &str) -> TlsKeys {
        TlsKeys {
            file: Some(Arc::new(KeyLog::parse(log.as_bytes()))),
            ..Default::default()
        }
    }

    /// Problems as (half, offset, problem).
    type Problems = Vec<(usize, u64, TlsProblem)>;
    /// Flights as (half, bytes).
    type Flights = Vec<(usize, Vec<u8>)>;

    /// Both streams of a session fed in pieces of `piece` bytes, client first
    /// for each flight: the plaintext of each direction and the problems.
    fn run(
        conn: &mut TlsConn,
        flights: &[(usize, Vec<u8>)],
        keys: &TlsKeys,
        piece: usize,
    ) -> ([Vec<u8>; 2], Problems) {
        let mut plain = [Vec::new(), Vec::new()];
        let mut problems = Vec::new();
        for (hi, bytes) in flights {
            for mut chunk in bytes.chunks(piece) {
                loop {
                    match conn.feed(*hi, chunk, keys, &mut plain[*hi]) {
                        None => break,
                        Some(Halt::Stopped(off, p)) => {
                            problems.push((*hi, off, p));
                            break;
                        }
                        Some(Halt::Skipped {
                            offset,
                            problem,
                            lost,
                            at_plain,
                            unread,
                        }) => {
                            problems.push((*hi, offset, problem));
                            // The lost plaintext as a run of '?' in its place.
                            let after = plain[*hi].split_off(at_plain);
                            plain[*hi].extend(std::iter::repeat_n(b'?', lost as usize));
                            plain[*hi].extend(after);
                            chunk = &chunk[chunk.len() - unread..];
                        }
                    }
                }
            }
        }
        (plain, problems)
    }

    fn session_flights(s: &mut Synth, with_update: bool) -> (Flights, [Vec<u8>; 2]) {
        let request: Vec<u8> = (0..40_000u32).map(|i| (i * 7) as u8).collect();
        let response: Vec<u8> = (0..3000u32).map(|i| (i * 13) as u8).collect();
        let mut flights = vec![
            (0, s.client_hello(Some("broker.example"))),
            (1, s.server_flight()),
        ];
        flights.push((0, s.client_finished()));
        flights.push((0, s.client_data(&request[..20_000])));
        if with_update {
            flights.push((0, s.key_update(true)));
        }
        flights.push((0, s.client_data(&request[20_000..])));
        flights.push((1, s.server_data(&response)));
        if with_update {
            flights.push((1, s.key_update(false)));
            flights.push((1, s.server_data(&response)));
        }
        let mut resp = response.clone();
        if with_update {
            resp.extend(&response);
        }
        (flights, [request, resp])
    }

    #[test]
    fn every_suite_decrypts_in_any_pieces() {
        for id in [0x1301, 0x1302, 0x1303, 0xc02f, 0xc030, 0xcca8] {
            for piece in [1, 7, 1000, 1 << 20] {
                let mut s = Synth::new(id, [id as u8; 32]);
                let tls13 = s.tls13();
                let (flights, want) = session_flights(&mut s, tls13);
                let mut conn = TlsConn::new(None);
                let (plain, problems) = run(&mut conn, &flights, &keys(&s.key_log()), piece);
                assert_eq!(problems, vec![], "suite {id:04x} pieces of {piece}");
                assert!(plain == want, "suite {id:04x} pieces of {piece}");
                let sum = conn.session(false);
                assert_eq!(sum.decryption, Ok(KeySource::KeyLog));
                assert_eq!(
                    (sum.cipher_suite, sum.version, sum.sni.as_deref()),
                    (
                        Some(id),
                        Some(if tls13 { 0x0304 } else { 0x0303 }),
                        Some("broker.example")
                    )
                );
                assert_eq!(
                    sum.decrypted_bytes,
                    [want[0].len() as u64, want[1].len() as u64]
                );
            }
        }
    }

    #[test]
    fn without_keys_the_summary_says_why() {
        let mut s = Synth::new(0x1301, [3; 32]);
        let (flights, _) = session_flights(&mut s, false);
        for (keys, why) in [
            (TlsKeys::default(), NotDecrypted::NoKeys),
            (
                keys(&Synth::new(0x1301, [4; 32]).key_log()),
                NotDecrypted::NoSecrets,
            ),
            (
                keys(
                    &s.key_log()
                        .lines()
                        .filter(|l| l.starts_with("CLIENT_RANDOM"))
                        .collect::<Vec<_>>()
                        .join("\n"),
                ),
                NotDecrypted::NoSecrets,
            ),
        ] {
            let mut conn = TlsConn::new(None);
            let (plain, problems) = run(&mut conn, &flights, &keys, 1000);
            assert_eq!((plain[0].len(), plain[1].len(), problems.len()), (0, 0, 0));
            let sum = conn.session(false);
            assert_eq!(sum.decryption, Err(why));
            assert!(
                sum.app_data_bytes[0] > 40_000 && sum.app_data_bytes[1] > 3000,
                "{:?}",
                sum.app_data_bytes
            );
        }
    }

    #[test]
    fn wrong_keys_stop_at_the_second_record_they_do_not_open() {
        let mut s = Synth::new(0x1303, [5; 32]);
        let (flights, _) = session_flights(&mut s, false);
        // Flip one digit of every secret.
        let log: String = s
            .key_log()
            .lines()
            .map(|l| {
                format!(
                    "{}{}\n",
                    &l[..l.len() - 1],
                    if l.ends_with('0') { '1' } else { '0' }
                )
            })
            .collect();
        let mut conn = TlsConn::new(None);
        let (plain, problems) = run(&mut conn, &flights, &keys(&log), 100);
        assert!(plain[0].is_empty() && plain[1].is_empty());
        assert_eq!(
            problems.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(),
            vec![
                (
                    0,
                    TlsProblem::KeysDidNotOpen {
                        label: "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
                        record: 0
                    }
                ),
                (
                    1,
                    TlsProblem::KeysDidNotOpen {
                        label: "SERVER_HANDSHAKE_TRAFFIC_SECRET",
                        record: 0
                    }
                )
            ]
        );
        assert_eq!(
            conn.session(false).decryption,
            Err(NotDecrypted::KeysDidNotOpen)
        );
    }

    /// A key log with every line of `labels` given a wrong value (one digit
    /// changed), the others as they are.
    fn wrong(log: &str, labels: &[&str]) -> String {
        log.lines()
            .map(|l| {
                if labels.iter().any(|w| l.starts_with(&format!("{w} "))) {
                    let flip = if l.ends_with('0') { '1' } else { '0' };
                    format!("{}{flip}\n", &l[..l.len() - 1])
                } else {
                    format!("{l}\n")
                }
            })
            .collect()
    }

    const TRAFFIC: [&str; 2] = ["CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0"];
    const HANDSHAKE: [&str; 2] = [
        "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
        "SERVER_HANDSHAKE_TRAFFIC_SECRET",
    ];

    #[test]
    fn wrong_traffic_secrets_are_said_at_the_first_application_record() {
        let mut s = Synth::new(0x1301, [7; 32]);
        let (flights, _) = session_flights(&mut s, false);
        let log = wrong(&s.key_log(), &TRAFFIC);
        let mut conn = TlsConn::new(None);
        let (plain, mut problems) = run(&mut conn, &flights, &keys(&log), 1000);
        assert!(plain[0].is_empty() && plain[1].is_empty());
        // The client's two records after its Finished did not open: said at
        // the second (the first alone could be damaged); the server's one
        // record, when its direction ends.
        for hi in [0, 1] {
            if let Some((at, p)) = conn.end(hi, StreamCut::Closed) {
                problems.push((hi, at, p));
            }
        }
        // The handshake opened (record 0 of each side); the first record after it did not.
        assert_eq!(
            problems.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(),
            vec![
                (
                    0,
                    TlsProblem::KeysDidNotOpen {
                        label: "CLIENT_TRAFFIC_SECRET_0",
                        record: 1
                    }
                ),
                (
                    1,
                    TlsProblem::KeysDidNotOpen {
                        label: "SERVER_TRAFFIC_SECRET_0",
                        record: 1
                    }
                )
            ]
        );
        let sum = conn.session(false);
        assert_eq!(sum.decryption, Err(NotDecrypted::KeysDidNotOpen));
        assert_eq!(sum.decrypted_bytes, [0, 0]);
    }

    #[test]
    fn wrong_traffic_secrets_without_handshake_secrets_stop_after_a_handshake_s_worth() {
        let mut s = Synth::new(0x1302, [8; 32]);
        let (mut flights, _) = session_flights(&mut s, false);
        // Twelve more client records, so that more than a handshake's worth do not open.
        let more: Vec<u8> = (0..12).flat_map(|_| s.client_data(b"0123456789")).collect();
        flights.push((0, more));
        let log: String = wrong(&s.key_log(), &TRAFFIC)
            .lines()
            .filter(|l| !HANDSHAKE.iter().any(|h| l.starts_with(h)))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut conn = TlsConn::new(None);
        let (plain, problems) = run(&mut conn, &flights, &keys(&log), 700);
        assert!(plain[0].is_empty() && plain[1].is_empty());
        assert!(
            problems.contains(&(
                0,
                problems.iter().find(|p| p.0 == 0).map_or(0, |p| p.1),
                TlsProblem::KeysDidNotOpen {
                    label: "CLIENT_TRAFFIC_SECRET_0",
                    record: 0
                }
            )),
            "{problems:?}"
        );
        assert_eq!(
            conn.session(false).decryption,
            Err(NotDecrypted::KeysDidNotOpen)
        );
    }

    #[test]
    fn of_duplicate_key_log_lines_the_one_that_opens_wins() {
        for id in [0x1301, 0xc02f] {
            let mut s = Synth::new(id, [9; 32]);
            let tls13 = s.tls13();
            let (flights, want) = session_flights(&mut s, tls13);
            let right = s.key_log();
            let labels = [
                "CLIENT_RANDOM",
                HANDSHAKE[0],
                HANDSHAKE[1],
                TRAFFIC[0],
                TRAFFIC[1],
            ];
            // A wrong value before the right one, and another after it.
            let bad = wrong(&right, &labels);
            let mut other = Synth::new(id, [9; 32]);
            let _ = session_flights(&mut other, false);
            let log = format!("{bad}{right}{}", wrong(&bad, &labels));
            let mut conn = TlsConn::new(None);
            let (plain, problems) = run(&mut conn, &flights, &keys(&log), 1000);
            assert_eq!(problems, vec![], "suite {id:04x}");
            assert!(plain == want, "suite {id:04x}");
            assert_eq!(conn.session(false).decryption, Ok(KeySource::KeyLog));
        }
    }

    /// The flights with one byte of the first record of flight `flight` changed.
    fn damage(flights: &mut Flights, flight: usize, at: usize) {
        flights[flight].1[5 + at] ^= 0x40;
    }

    #[test]
    fn a_damaged_record_is_passed_over_and_decryption_goes_on() {
        for id in [0x1301, 0x1303, 0xc02f, 0xc030, 0xcca8] {
            let mut s = Synth::new(id, [10; 32]);
            let tls13 = s.tls13();
            let (mut flights, want) = session_flights(&mut s, tls13);
            // Flight 3: the client's first 20,000 bytes, in records of 16,384 and 3,616.
            let first = flights[3].1.clone();
            damage(&mut flights, 3, 100);
            for piece in [1, 999, 1 << 20] {
                let mut conn = TlsConn::new(None);
                let (plain, problems) = run(&mut conn, &flights, &keys(&s.key_log()), piece);
                let record = 1; // record 0 is the Finished, in both versions
                assert_eq!(
                    problems.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(),
                    vec![(0, TlsProblem::NotOpened { record, records: 1 })],
                    "suite {id:04x} pieces of {piece}"
                );
                // In its place, as many bytes as it held; everything else decrypted.
                let mut expect = want[0].clone();
                expect[..16_384].fill(b'?');
                assert!(plain[0] == expect, "suite {id:04x} pieces of {piece}");
                assert!(plain[1] == want[1], "suite {id:04x} pieces of {piece}");
                let at: u64 = flights[..3]
                    .iter()
                    .filter(|f| f.0 == 0)
                    .map(|f| f.1.len() as u64)
                    .sum();
                assert_eq!(problems[0].1, at, "the damaged record's stream offset");
                assert_eq!(conn.session(false).decryption, Ok(KeySource::KeyLog));
            }
            assert_ne!(first, flights[3].1);
        }
    }

    #[test]
    fn records_damaged_in_a_row_stop_the_direction() {
        let mut s = Synth::new(0x1301, [11; 32]);
        let (mut flights, _) = session_flights(&mut s, false);
        let records: Vec<Vec<u8>> = (0..12).map(|_| s.client_data(b"abcdefgh")).collect();
        for mut r in records {
            r[10] ^= 1;
            flights.push((0, r));
        }
        let mut conn = TlsConn::new(None);
        let (_, problems) = run(&mut conn, &flights, &keys(&s.key_log()), 1000);
        let kinds: Vec<_> = problems.iter().map(|p| p.2.code()).collect();
        assert_eq!(
            kinds,
            [vec!["record_not_opened"; 8], vec!["authentication_failed"]].concat()
        );
    }

    #[test]
    fn without_handshake_secrets_a_damaged_first_application_record_is_found_later() {
        let mut s = Synth::new(0x1301, [12; 32]);
        let (mut flights, want) = session_flights(&mut s, false);
        damage(&mut flights, 3, 7);
        let log: String = s
            .key_log()
            .lines()
            .filter(|l| !HANDSHAKE.iter().any(|h| l.starts_with(h)))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut conn = TlsConn::new(None);
        let (plain, problems) = run(&mut conn, &flights, &keys(&log), 1000);
        // Record 0 is the Finished (taken for handshake); record 1 did not
        // open; record 2 opened as the application key's second record.
        assert_eq!(
            problems.iter().map(|p| (p.0, p.2)).collect::<Vec<_>>(),
            vec![(
                0,
                TlsProblem::NotOpened {
                    record: 1,
                    records: 1
                }
            )]
        );
        let mut expect = want[0].clone();
        expect[..16_384].fill(b'?');
        assert!(plain[0] == expect);
        assert!(plain[1] == want[1]);
    }

    #[test]
    fn a_truncated_record_and_a_gap() {
        let mut s = Synth::new(0x1301, [6; 32]);
        let (mut flights, want) = session_flights(&mut s, false);
        let last = flights.last_mut().unwrap();
        let cut = last.1.len() - 10;
        last.1.truncate(cut);
        let mut conn = TlsConn::new(None);
        let (plain, problems) = run(&mut conn, &flights, &keys(&s.key_log()), 1000);
        assert_eq!(problems, vec![]);
        assert_eq!(plain[0], want[0]);
        assert!(want[1].starts_with(&plain[1]) && plain[1].len() < want[1].len());
        match conn.end(1, StreamCut::EndOfCapture) {
            Some((
                _,
                TlsProblem::Truncated {
                    declared: Some(d),
                    have,
                    cut_by: StreamCut::EndOfCapture,
                },
            )) => assert_eq!(have + 10, d),
            other => panic!("{other:?}"),
        }
        assert_eq!(conn.end(0, StreamCut::Closed), None);
        // A gap stops the direction; what came before it was decrypted.
        let mut conn = TlsConn::new(None);
        let k = keys(&s.key_log());
        let (_, problems) = run(&mut conn, &flights[..4], &k, 1000);
        assert_eq!(problems, vec![]);
        assert!(matches!(
            conn.gap(0, 100),
            Some((_, TlsProblem::Gap { bytes: 100 }))
        ));
        let mut p = Vec::new();
        assert!(conn.feed(0, &flights[4].1, &k, &mut p).is_none());
        assert!(p.is_empty());
    }

    #[test]
    fn hostile_headers_stop_without_holding_more() {
        let k = TlsKeys::default();
        for bad in [
            &[23u8, 3, 3, 0xff, 0xff][..],
            &[99, 3, 3, 0, 1],
            &[23, 2, 3, 0, 1],
        ] {
            let mut conn = TlsConn::new(Some(0));
            let mut p = Vec::new();
            let got = conn.feed(0, bad, &k, &mut p);
            assert!(got.is_some(), "{bad:?}");
            assert!(conn.halves[0].rec.is_empty());
        }
    }
}
