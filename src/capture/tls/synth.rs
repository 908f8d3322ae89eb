//! TLS byte streams made from plaintext, with their key log: a handshake
//! that has the shape of a real one (ClientHello with SNI, ServerHello, the
//! protected rest of the handshake, TLS 1.3 KeyUpdates) and application data
//! in records of at most 2^14 bytes, protected by `decrypt::RecordKeys::seal`
//! with secrets made up from the client random. For tests and benchmark
//! captures: nothing here is a TLS implementation (no key exchange, no
//! certificates, no verification).

use super::decrypt::{next_traffic_secret, prf12, suite, Hash, RecordKeys, Suite};
use super::detect::{APPLICATION_DATA, CHANGE_CIPHER_SPEC, FINISHED, HANDSHAKE, KEY_UPDATE};

/// Largest plaintext per record.
pub(crate) const MAX_PLAINTEXT: usize = 1 << 14;

/// One made-up session.
pub struct Synth {
    suite: Suite,
    client_random: [u8; 32],
    server_random: [u8; 32],
    secrets: [Vec<u8>; 5],
    /// Client and server keys now; TLS 1.3 traffic secrets (for KeyUpdate).
    keys: [Option<RecordKeys>; 2],
    traffic: [Vec<u8>; 2],
    /// TLS 1.2: the server's ChangeCipherSpec and Finished are sent.
    server_finished: bool,
}

fn handshake(ty: u8, body: &[u8]) -> Vec<u8> {
    let mut m = vec![
        ty,
        (body.len() >> 16) as u8,
        (body.len() >> 8) as u8,
        body.len() as u8,
    ];
    m.extend_from_slice(body);
    m
}

fn clear_record(ty: u8, version: u16, body: &[u8]) -> Vec<u8> {
    let mut r = vec![ty];
    r.extend(version.to_be_bytes());
    r.extend((body.len() as u16).to_be_bytes());
    r.extend_from_slice(body);
    r
}

impl Synth {
    /// A session of cipher suite `id` (one `decrypt::suite` knows; else TLS_AES_128_GCM_SHA256).
    pub fn new(id: u16, client_random: [u8; 32]) -> Synth {
        let suite = suite(id).unwrap_or(Suite {
            id: 0x1301,
            tls13: true,
            bulk: super::decrypt::Bulk::Aes128Gcm,
            hash: Hash::Sha256,
        });
        let mut server_random = client_random;
        server_random.reverse();
        server_random[0] ^= 0x5a;
        let n = if suite.tls13 {
            suite.hash.output_len()
        } else {
            48
        };
        let secret = |label: &[u8]| prf12(Hash::Sha256, &client_random, label, b"kwire synth", n);
        let secrets = [
            secret(b"master"),
            secret(b"c hs"),
            secret(b"s hs"),
            secret(b"c ap"),
            secret(b"s ap"),
        ];
        let (keys, traffic) = if suite.tls13 {
            ([None, None], [secrets[3].clone(), secrets[4].clone()])
        } else {
            let pair = RecordKeys::tls12(suite, &secrets[0], &client_random, &server_random);
            let (c, s) = match pair {
                Some((c, s)) => (Some(c), Some(s)),
                None => (None, None),
            };
            ([c, s], [Vec::new(), Vec::new()])
        };
        Synth {
            suite,
            client_random,
            server_random,
            secrets,
            keys,
            traffic,
            server_finished: false,
        }
    }

    pub fn tls13(&self) -> bool {
        self.suite.tls13
    }

    /// The key log lines of this session (NSS format).
    pub fn key_log(&self) -> String {
        let r = hex::encode(self.client_random);
        if !self.suite.tls13 {
            return format!("CLIENT_RANDOM {r} {}\n", hex::encode(&self.secrets[0]));
        }
        let labels = [
            "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
            "SERVER_HANDSHAKE_TRAFFIC_SECRET",
            "CLIENT_TRAFFIC_SECRET_0",
            "SERVER_TRAFFIC_SECRET_0",
        ];
        labels
            .iter()
            .zip(&self.secrets[1..])
            .map(|(l, s)| format!("{l} {r} {}\n", hex::encode(s)))
            .collect()
    }

    /// The ClientHello record, with a server name when given.
    pub fn client_hello(&self, sni: Option<&str>) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend(self.client_random);
        body.extend([0, 0, 2]);
        body.extend(self.suite.id.to_be_bytes());
        body.extend([1, 0]);
        let mut exts = Vec::new();
        if let Some(name) = sni {
            let name = &name.as_bytes()[..name.len().min(255)];
            let list_len = 3 + name.len() as u16;
            exts.extend([0, 0]);
            exts.extend((list_len + 2).to_be_bytes());
            exts.extend(list_len.to_be_bytes());
            exts.push(0);
            exts.extend((name.len() as u16).to_be_bytes());
            exts.extend(name);
        }
        if self.suite.tls13 {
            exts.extend([0, 43, 0, 3, 2, 3, 4]);
        }
        body.extend((exts.len() as u16).to_be_bytes());
        body.extend(exts);
        clear_record(HANDSHAKE, 0x0301, &handshake(1, &body))
    }

    /// The server's first flight: the ServerHello, and for TLS 1.3 the rest
    /// of its handshake (protected), after which it sends with its
    /// application keys; for TLS 1.2 a ServerHelloDone.
    pub fn server_flight(&mut self) -> Vec<u8> {
        let mut body = vec![3, 3];
        body.extend(self.server_random);
        body.extend([0]);
        body.extend(self.suite.id.to_be_bytes());
        body.push(0);
        if self.suite.tls13 {
            body.extend([0, 6, 0, 43, 0, 2, 3, 4]);
        } else {
            body.extend([0, 0]);
        }
        let mut out = clear_record(HANDSHAKE, 0x0303, &handshake(2, &body));
        if !self.suite.tls13 {
            out.extend(clear_record(HANDSHAKE, 0x0303, &handshake(14, &[])));
            return out;
        }
        out.extend(clear_record(CHANGE_CIPHER_SPEC, 0x0303, &[1]));
        let mut hs = RecordKeys::tls13(self.suite, &self.secrets[2]);
        let mut flight = handshake(8, &[0, 0]);
        flight.extend(handshake(11, &[0; 200]));
        flight.extend(handshake(15, &[0; 80]));
        flight.extend(handshake(FINISHED, &[0x11; 32]));
        if let Some(k) = hs.as_mut() {
            out.extend(k.seal(HANDSHAKE, &flight).unwrap_or_default());
        }
        self.keys[1] = RecordKeys::tls13(self.suite, &self.traffic[1]);
        out
    }

    /// The client's end of the handshake: TLS 1.3 its Finished under its
    /// handshake keys; TLS 1.2 its key exchange, ChangeCipherSpec and Finished.
    pub fn client_finished(&mut self) -> Vec<u8> {
        let mut out = clear_record(CHANGE_CIPHER_SPEC, 0x0303, &[1]);
        if self.suite.tls13 {
            if let Some(k) = RecordKeys::tls13(self.suite, &self.secrets[1]).as_mut() {
                out.extend(
                    k.seal(HANDSHAKE, &handshake(FINISHED, &[0x22; 32]))
                        .unwrap_or_default(),
                );
            }
            self.keys[0] = RecordKeys::tls13(self.suite, &self.traffic[0]);
            return out;
        }
        let mut first = clear_record(HANDSHAKE, 0x0303, &handshake(16, &[32; 33]));
        first.extend(out);
        first.extend(self.seal(0, HANDSHAKE, &handshake(FINISHED, &[0x33; 12])));
        first
    }

    fn seal(&mut self, side: usize, ty: u8, plain: &[u8]) -> Vec<u8> {
        self.keys[side]
            .as_mut()
            .and_then(|k| k.seal(ty, plain))
            .unwrap_or_default()
    }

    fn data(&mut self, side: usize, plain: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(plain.len() + plain.len() / 512 + 64);
        if side == 1 && !self.suite.tls13 && !self.server_finished {
            self.server_finished = true;
            out.extend(clear_record(CHANGE_CIPHER_SPEC, 0x0303, &[1]));
            out.extend(self.seal(1, HANDSHAKE, &handshake(FINISHED, &[0x44; 12])));
        }
        for chunk in plain.chunks(MAX_PLAINTEXT) {
            out.extend(self.seal(side, APPLICATION_DATA, chunk));
        }
        out
    }

    /// Application data from the client, in records.
    pub fn client_data(&mut self, plain: &[u8]) -> Vec<u8> {
        self.data(0, plain)
    }

    /// Application data from the server, in records.
    pub fn server_data(&mut self, plain: &[u8]) -> Vec<u8> {
        self.data(1, plain)
    }

    /// TLS 1.3: a KeyUpdate from one side, after which it sends with its
    /// next traffic secret (TLS 1.2: nothing).
    pub fn key_update(&mut self, client: bool) -> Vec<u8> {
        if !self.suite.tls13 {
            return Vec::new();
        }
        let side = usize::from(!client);
        let out = self.seal(side, HANDSHAKE, &handshake(KEY_UPDATE, &[0]));
        if let Some(next) = next_traffic_secret(self.suite.hash, &self.traffic[side]) {
            self.keys[side] = RecordKeys::tls13(self.suite, &next);
            self.traffic[side] = next;
        }
        out
    }
}
