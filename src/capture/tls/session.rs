//! One TLS connection, record by record in each direction: the handshake in
//! clear (ClientHello, ServerHello), the keys from the key log once the
//! ServerHello names the suite, then every protected record opened in turn,
//! following TLS 1.3's switch from handshake to application keys at each
//! side's Finished and its KeyUpdates, and TLS 1.2's ChangeCipherSpec. The
//! plaintext application data of each direction is handed back to the
//! caller, in order; a problem stops its direction (the rest is counted).
//! What is held: one record per direction (at most 5 + 2^14 + 2048 bytes)
//! and one handshake message being read (at most `detect::MAX_KEPT`).

use super::decrypt::{next_traffic_secret, suite, OpenError, RecordKeys, Suite};
use super::detect::{self, record_header, ClientHello, Messages, ServerHello, HEADER};
use super::{KeySource, NotDecrypted, TlsKeys, TlsProblem, TlsSession};
use crate::capture::skips::StreamCut;

/// TLS 1.3 with no handshake secret in the key log: protected records that
/// do not open with the application key are taken as the encrypted
/// handshake, up to this many.
const MAX_TRIAL: u64 = 64;

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
    /// The keys records are opened with now.
    keys: Option<RecordKeys>,
    /// TLS 1.2: the keys for after ChangeCipherSpec.
    pending: Option<RecordKeys>,
    /// TLS 1.3: the application traffic secret (for Finished and KeyUpdate),
    /// its key log label, whether it is in use, and the handshake secret's
    /// label when the key log lacks it.
    traffic: Option<Vec<u8>>,
    traffic_label: &'static str,
    application: bool,
    no_handshake_secret: Option<&'static str>,
    /// Protected records opened or tried (the number a problem names).
    protected_records: u64,
    /// Decryption stopped, and why.
    stopped: Option<TlsProblem>,
    /// Bytes not read as records after decryption stopped.
    passed_over: u64,
    ended: bool,
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
    /// data is appended to `plain`. A problem that stops the direction is
    /// returned with the stream offset it is at.
    pub fn feed(
        &mut self,
        hi: usize,
        mut data: &[u8],
        keys: &TlsKeys,
        plain: &mut Vec<u8>,
    ) -> Option<(u64, TlsProblem)> {
        if self.halves[hi].stopped.is_some() || self.halves[hi].ended {
            self.halves[hi].passed_over += data.len() as u64;
            return None;
        }
        while !data.is_empty() {
            let h = &mut self.halves[hi];
            if h.rec.len() < HEADER {
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
                    return Some(self.stop(hi, problem, data.len()));
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
            let problem = self.record(hi, &mut rec, keys, plain);
            let h = &mut self.halves[hi];
            if let Some(p) = problem {
                h.rec = rec;
                return Some(self.stop(hi, p, data.len()));
            }
            h.offset += rec.len() as u64;
            rec.clear();
            h.rec = rec;
        }
        None
    }

    /// Stop decrypting a direction: the record held and `rest` more bytes are passed over.
    fn stop(&mut self, hi: usize, problem: TlsProblem, rest: usize) -> (u64, TlsProblem) {
        let h = &mut self.halves[hi];
        h.stopped = Some(problem);
        h.passed_over += (h.rec.len() + rest) as u64;
        h.rec = Vec::new();
        h.keys = None;
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
    ) -> Option<TlsProblem> {
        let ty = rec[0];
        let len = rec.len() - HEADER;
        let tls13 = self.tls13();
        let h = &mut self.halves[hi];
        h.records += 1;
        if ty == detect::APPLICATION_DATA {
            h.app_bytes += len as u64;
        }
        if tls13 && ty == detect::APPLICATION_DATA && len > detect::MAX_FRAGMENT_13 {
            return Some(TlsProblem::TooLarge {
                len,
                max: detect::MAX_FRAGMENT_13,
            });
        }
        match ty {
            detect::CHANGE_CIPHER_SPEC if tls13 => None, // middlebox compatibility: means nothing
            detect::CHANGE_CIPHER_SPEC => {
                if h.protected {
                    return Some(TlsProblem::Renegotiation);
                }
                h.protected = true;
                h.keys = h.pending.take();
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
            let master = secrets
                .master
                .as_ref()
                .ok_or(NotDecrypted::MissingSecret("CLIENT_RANDOM"))?;
            let (c, sv) = RecordKeys::tls12(s, master, &hello.random, &sh.random)
                .ok_or(NotDecrypted::MissingSecret("CLIENT_RANDOM"))?;
            self.halves[client].pending = Some(c);
            self.halves[1 - client].pending = Some(sv);
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
            .all(|(_, hs, ap, ..)| hs.is_none() && ap.is_none())
        {
            return Err(NotDecrypted::MissingSecret("CLIENT_TRAFFIC_SECRET_0"));
        }
        for (i, hs, ap, hs_label, ap_label) in sides {
            let h = &mut self.halves[i];
            h.protected = true;
            h.traffic = ap.clone();
            h.traffic_label = ap_label;
            h.keys = hs.as_ref().and_then(|secret| RecordKeys::tls13(s, secret));
            if h.keys.is_none() {
                h.no_handshake_secret = Some(hs_label);
            }
        }
        Ok(source)
    }

    /// A protected record: open it and take what it holds.
    fn protected(&mut self, hi: usize, rec: &mut [u8], plain: &mut Vec<u8>) -> Option<TlsProblem> {
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
        if h.keys.is_none() {
            // TLS 1.3 without the handshake secret: the first record that opens
            // with the application key ends the encrypted handshake.
            let Some(hs_label) = h.no_handshake_secret else {
                return Some(TlsProblem::MissingSecret(h.traffic_label));
            };
            let Some(mut app) = h.traffic.as_ref().and_then(|t| RecordKeys::tls13(s, t)) else {
                return Some(TlsProblem::MissingSecret(h.traffic_label));
            };
            let mut copy = frag.to_vec();
            if app.open(&header, &mut copy).is_err() {
                return (record + 1 >= MAX_TRIAL).then_some(TlsProblem::MissingSecret(hs_label));
            }
            app.seq = 0;
            h.keys = Some(app);
            h.application = true;
        }
        let keys = h.keys.as_mut()?;
        let (range, inner) = match keys.open(&header, frag) {
            Ok(x) => x,
            Err(OpenError::Authentication) => return Some(TlsProblem::Authentication { record }),
            Err(OpenError::TooShort | OpenError::NoContentType) => {
                return Some(TlsProblem::Malformed { record })
            }
        };
        let data = &frag[range];
        match inner {
            detect::APPLICATION_DATA => {
                plain.extend_from_slice(data);
                h.plain += data.len() as u64;
                None
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
                    let Some(next) = h.traffic.as_ref().and_then(|t| RecordKeys::tls13(s, t))
                    else {
                        return Some(TlsProblem::MissingSecret(h.traffic_label));
                    };
                    h.keys = Some(next);
                    h.application = true;
                } else if update {
                    let Some(next) = h
                        .traffic
                        .as_ref()
                        .and_then(|t| next_traffic_secret(s.hash, t))
                    else {
                        return Some(TlsProblem::MissingSecret(h.traffic_label));
                    };
                    h.keys = RecordKeys::tls13(s, &next);
                    h.traffic = Some(next);
                }
                None
            }
            _ => None, // TLS 1.2 Finished, alerts, heartbeats
        }
    }

    /// The connection's summary; directions in the session are client → server first.
    pub fn session(&self, not_kafka: bool) -> TlsSession {
        let c = self.client.unwrap_or(0);
        let pair = |f: &dyn Fn(&Half) -> u64| [f(&self.halves[c]), f(&self.halves[1 - c])];
        let decryption = match self.keys {
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
            for chunk in bytes.chunks(piece) {
                if let Some((off, p)) = conn.feed(*hi, chunk, keys, &mut plain[*hi]) {
                    problems.push((*hi, off, p));
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
    fn a_wrong_key_stops_at_the_first_record() {
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
                (1, TlsProblem::Authentication { record: 0 }),
                (0, TlsProblem::Authentication { record: 0 })
            ]
        );
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
        assert_eq!(conn.feed(0, &flights[4].1, &k, &mut p), None);
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
