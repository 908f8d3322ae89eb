//! Telling TLS from Kafka at the start of a stream, and reading what the
//! handshake says in clear: record headers, the ClientHello (client random,
//! server name, ALPN) and the ServerHello (server random, cipher suite,
//! version). Every length is checked against the bytes there.

/// A record header: content type, version, length.
pub const HEADER: usize = 5;
/// The largest fragment a TLS 1.2 record may carry (RFC 5246 §6.2.3: 2^14 + 2048).
pub(crate) const MAX_FRAGMENT_12: usize = (1 << 14) + 2048;
/// The largest TLS 1.3 ciphertext (RFC 8446 §5.2: 2^14 + 256).
pub(crate) const MAX_FRAGMENT_13: usize = (1 << 14) + 256;

pub(crate) const CHANGE_CIPHER_SPEC: u8 = 20;
pub(crate) const HANDSHAKE: u8 = 22;
pub(crate) const APPLICATION_DATA: u8 = 23;
pub(crate) const HEARTBEAT: u8 = 24;

pub(crate) const CLIENT_HELLO: u8 = 1;
pub(crate) const SERVER_HELLO: u8 = 2;
pub(crate) const FINISHED: u8 = 20;
pub(crate) const KEY_UPDATE: u8 = 24;

/// A TLS record header, when these 5 bytes can be one: a content type of
/// TLS (20-24), version 3.x (x at most 4) and a length a record may have.
pub(crate) fn record_header(b: &[u8]) -> Option<(u8, u16, usize)> {
    let h = b.get(..HEADER)?;
    let version = u16::from_be_bytes([h[1], h[2]]);
    let len = usize::from(u16::from_be_bytes([h[3], h[4]]));
    ((CHANGE_CIPHER_SPEC..=HEARTBEAT).contains(&h[0])
        && h[1] == 3
        && h[2] <= 4
        && len <= MAX_FRAGMENT_12)
        .then_some((h[0], version, len))
}

/// What the first bytes of a stream say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Too few bytes to tell.
    Short,
    /// Not TLS.
    NotTls,
    /// A handshake record with a ClientHello: this side is the client.
    ClientHello,
    /// A handshake record with a ServerHello: this side is the server.
    ServerHello,
    /// Another TLS record (a capture that starts after the handshake).
    Record,
}

/// Whether a stream starting with `b` is TLS. Its first record must have
/// version 3.1 to 3.4 (TLS 1.0 to 1.3 as record versions) and a non-zero
/// length. No Kafka frame starts this way: its size prefix would be over
/// 300 MiB.
pub(crate) fn stream_start(b: &[u8]) -> Start {
    if b.len() < HEADER + 1 {
        return Start::Short;
    }
    match record_header(b) {
        Some((_, version, len)) if (0x0301..=0x0304).contains(&version) && len > 0 => {
            match (b[0], b[5]) {
                (HANDSHAKE, CLIENT_HELLO) => Start::ClientHello,
                (HANDSHAKE, SERVER_HELLO) => Start::ServerHello,
                _ => Start::Record,
            }
        }
        _ => Start::NotTls,
    }
}

/// A reader over bytes with every read checked.
struct Cursor<'a>(&'a [u8]);

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|b| b[0])
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|b| u16::from_be_bytes([b[0], b[1]]))
    }
    fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(n.into())
    }
    fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(n.into())
    }
    fn random(&mut self) -> Option<[u8; 32]> {
        let mut r = [0; 32];
        r.copy_from_slice(self.take(32)?);
        Some(r)
    }
}

/// Longest server name kept (DNS names have at most 253 characters).
const MAX_NAME: usize = 255;
/// ALPN protocols kept from a ClientHello.
const MAX_ALPN: usize = 8;

/// What a ClientHello says that kwire shows or uses.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClientHello {
    pub random: [u8; 32],
    /// The server name (SNI), as sent (shown escaped).
    pub sni: Option<String>,
    /// The application protocols offered (ALPN).
    pub alpn: Vec<String>,
}

/// The body of a ClientHello handshake message (after its 4-byte header).
pub fn client_hello(body: &[u8]) -> Option<ClientHello> {
    let mut c = Cursor(body);
    c.u16()?;
    let random = c.random()?;
    c.vec8()?; // session id
    c.vec16()?; // cipher suites
    c.vec8()?; // compression methods
    let mut hello = ClientHello {
        random,
        ..Default::default()
    };
    // Extensions are optional; a body cut short ([`MAX_KEPT`]) gives those it holds.
    let exts = c.vec16().unwrap_or(c.0);
    let mut e = Cursor(exts);
    while let (Some(ty), Some(data)) = (e.u16(), e.vec16()) {
        let mut d = Cursor(data);
        match ty {
            0 => {
                // server_name: a list of (type, name); type 0 is a host name.
                if let Some(list) = d.vec16() {
                    let mut l = Cursor(list);
                    while let (Some(kind), Some(name)) = (l.u8(), l.vec16()) {
                        if kind == 0 {
                            let name = &name[..name.len().min(MAX_NAME)];
                            hello.sni = Some(String::from_utf8_lossy(name).into_owned());
                            break;
                        }
                    }
                }
            }
            16 => {
                if let Some(list) = d.vec16() {
                    let mut l = Cursor(list);
                    while let Some(p) = l.vec8() {
                        if hello.alpn.len() < MAX_ALPN {
                            hello.alpn.push(String::from_utf8_lossy(p).into_owned());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    Some(hello)
}

/// The random of a HelloRetryRequest (RFC 8446 §4.1.3): SHA-256 of "HelloRetryRequest".
pub(crate) const HELLO_RETRY_REQUEST: [u8; 32] = [
    0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
    0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
];

/// What a ServerHello says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerHello {
    pub random: [u8; 32],
    pub cipher_suite: u16,
    /// The version chosen: `supported_versions` when present (TLS 1.3), else the legacy version.
    pub version: u16,
    /// A HelloRetryRequest: another ClientHello and ServerHello follow.
    pub retry: bool,
}

/// The body of a ServerHello handshake message.
pub(crate) fn server_hello(body: &[u8]) -> Option<ServerHello> {
    let mut c = Cursor(body);
    let legacy = c.u16()?;
    let random = c.random()?;
    c.vec8()?;
    let cipher_suite = c.u16()?;
    c.u8()?;
    let mut version = legacy;
    if let Some(exts) = c.vec16() {
        let mut e = Cursor(exts);
        while let (Some(ty), Some(data)) = (e.u16(), e.vec16()) {
            if ty == 43 && data.len() == 2 {
                version = u16::from_be_bytes([data[0], data[1]]);
            }
        }
    }
    Some(ServerHello {
        random,
        cipher_suite,
        version,
        retry: random == HELLO_RETRY_REQUEST,
    })
}

/// A protocol version as people name it.
pub(crate) fn version_name(v: u16) -> String {
    match v {
        0x0300 => "SSL 3.0".into(),
        0x0301 => "TLS 1.0".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        _ => format!("0x{v:04x}"),
    }
}

/// Of a handshake message longer than this only its first bytes are kept
/// for reading: a ClientHello padded past it (post-quantum key shares, a
/// padding extension) still gives its random, which names its keys, and
/// whatever else its first bytes hold.
pub const MAX_KEPT: usize = 64 << 10;

/// Handshake messages cut from a direction's handshake bytes, which may
/// span records: a message's type and, for the types asked for, its body
/// (its first [`MAX_KEPT`] bytes when longer; the readers take a body cut
/// short as far as it goes).
#[derive(Default)]
pub struct Messages {
    head: [u8; 4],
    have_head: usize,
    /// Body bytes still to come of the message being read.
    remaining: usize,
    body: Vec<u8>,
    keep: bool,
}

impl Messages {
    /// Take handshake bytes; `each(type, body)` for every message that
    /// completes (`body` is `None` unless `want(type)`).
    pub fn feed(
        &mut self,
        mut data: &[u8],
        want: impl Fn(u8) -> bool,
        each: &mut impl FnMut(u8, Option<&[u8]>),
    ) {
        while !data.is_empty() {
            if self.have_head < 4 {
                let n = (4 - self.have_head).min(data.len());
                self.head[self.have_head..self.have_head + n].copy_from_slice(&data[..n]);
                self.have_head += n;
                data = &data[n..];
                if self.have_head < 4 {
                    return;
                }
                self.remaining = (usize::from(self.head[1]) << 16)
                    | (usize::from(self.head[2]) << 8)
                    | usize::from(self.head[3]);
                self.keep = want(self.head[0]);
                self.body.clear();
            }
            let n = self.remaining.min(data.len());
            if self.keep {
                let room = MAX_KEPT - self.body.len();
                self.body.extend_from_slice(&data[..n.min(room)]);
            }
            self.remaining -= n;
            data = &data[n..];
            if self.remaining > 0 {
                return;
            }
            each(self.head[0], self.keep.then_some(&self.body[..]));
            self.have_head = 0;
            self.body = Vec::new();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_starts() {
        assert_eq!(stream_start(&[22, 3, 1, 0, 200, 1]), Start::ClientHello);
        assert_eq!(stream_start(&[22, 3, 3, 0, 90, 2]), Start::ServerHello);
        assert_eq!(stream_start(&[23, 3, 3, 0, 90, 0]), Start::Record);
        assert_eq!(stream_start(&[22, 3, 1, 0, 200]), Start::Short);
        // A Kafka frame, SSL 3.0, an empty record, a record too long.
        assert_eq!(stream_start(&[0, 0, 0, 20, 0, 18, 0, 3]), Start::NotTls);
        assert_eq!(stream_start(&[22, 3, 0, 0, 200, 1]), Start::NotTls);
        assert_eq!(stream_start(&[22, 3, 1, 0, 0, 1]), Start::NotTls);
        assert_eq!(stream_start(&[22, 3, 1, 0x48, 0x01, 1]), Start::NotTls);
    }

    #[test]
    fn hellos_read_and_cut_anywhere() {
        // A ClientHello with an SNI and ALPN.
        let mut exts = Vec::new();
        let name = b"broker-1.example";
        let mut sni = vec![0];
        sni.extend((name.len() as u16).to_be_bytes());
        sni.extend(name);
        let mut list = (sni.len() as u16).to_be_bytes().to_vec();
        list.extend(sni);
        exts.extend(0u16.to_be_bytes());
        exts.extend((list.len() as u16).to_be_bytes());
        exts.extend(list);
        exts.extend([0, 16, 0, 5, 0, 3, 2, b'h', b'2']);
        let mut body = vec![3, 3];
        body.extend([7; 32]);
        body.extend([0, 0, 2, 0x13, 0x01, 1, 0]);
        body.extend((exts.len() as u16).to_be_bytes());
        body.extend(&exts);
        let hello = client_hello(&body).unwrap();
        assert_eq!(
            (hello.random, hello.sni.as_deref(), hello.alpn.clone()),
            ([7; 32], Some("broker-1.example"), vec!["h2".to_string()])
        );
        for cut in 0..body.len() {
            // Never a panic on a cut message; the fixed part must be whole.
            let h = client_hello(&body[..cut]);
            assert_eq!(h.is_some(), cut >= 2 + 32 + 1 + 4 + 2);
        }
        let mut sh = vec![3, 3];
        sh.extend(HELLO_RETRY_REQUEST);
        sh.extend([0, 0x13, 0x02, 0, 0, 6, 0, 43, 0, 2, 3, 4]);
        assert_eq!(
            server_hello(&sh),
            Some(ServerHello {
                random: HELLO_RETRY_REQUEST,
                cipher_suite: 0x1302,
                version: 0x0304,
                retry: true
            })
        );
        for cut in 0..sh.len() {
            let _ = server_hello(&sh[..cut]);
        }
    }

    #[test]
    fn a_client_hello_past_the_kept_length_gives_its_random_and_first_extensions() {
        let mut body = vec![3, 3];
        body.extend_from_slice(&[7; 32]);
        // No session id, 4,000 cipher suites (a list that long makes the hello
        // longer than is kept), null compression.
        body.push(0);
        body.extend_from_slice(&8000u16.to_be_bytes());
        body.extend_from_slice(&[0x13; 8000]);
        body.extend_from_slice(&[1, 0]);
        let name = b"kafka.example";
        let mut sni = vec![0, 0];
        sni.extend_from_slice(&((name.len() + 5) as u16).to_be_bytes());
        sni.extend_from_slice(&((name.len() + 3) as u16).to_be_bytes());
        sni.push(0);
        sni.extend_from_slice(&(name.len() as u16).to_be_bytes());
        sni.extend_from_slice(name);
        let mut padding = vec![0, 21];
        padding.extend_from_slice(&60_000u16.to_be_bytes());
        padding.extend_from_slice(&[0; 60_000]);
        let exts = [sni, padding].concat();
        body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
        body.extend_from_slice(&exts);
        assert!(body.len() > MAX_KEPT);
        let mut message = vec![1, 0, (body.len() >> 8) as u8, body.len() as u8];
        message[1] = (body.len() >> 16) as u8;
        message.extend_from_slice(&body);
        let mut m = Messages::default();
        let mut got = Vec::new();
        for record in message.chunks(1 << 14) {
            m.feed(record, |t| t == 1, &mut |t, b| {
                got.push((t, b.map(<[u8]>::to_vec)))
            });
        }
        let [(1, Some(kept))] = &got[..] else {
            panic!(
                "{:?}",
                got.iter()
                    .map(|(t, b)| (t, b.as_ref().map(Vec::len)))
                    .collect::<Vec<_>>()
            )
        };
        assert_eq!(kept.len(), MAX_KEPT);
        let hello = client_hello(kept).unwrap();
        assert_eq!(
            (hello.random, hello.sni.as_deref()),
            ([7; 32], Some("kafka.example"))
        );
    }

    #[test]
    fn messages_span_pieces() {
        let stream = [1, 0, 0, 3, 9, 9, 9, 20, 0, 0, 0, 11, 0, 0, 1, 5];
        for piece in 1..stream.len() {
            let mut m = Messages::default();
            let mut got = Vec::new();
            for chunk in stream.chunks(piece) {
                m.feed(chunk, |t| t == 1, &mut |t, b| {
                    got.push((t, b.map(<[u8]>::to_vec)))
                });
            }
            assert_eq!(
                got,
                vec![(1, Some(vec![9, 9, 9])), (20, None), (11, None)],
                "pieces of {piece}"
            );
        }
    }
}
