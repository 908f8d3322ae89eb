//! SASL authentication on a Kafka connection (KIP-43, KIP-152), which the
//! definitions do not describe. A client names its mechanism in a
//! SaslHandshake request. With SaslHandshake v1 and later it then sends
//! SaslAuthenticate requests: ordinary Kafka frames. With SaslHandshake v0
//! (older Java clients, Sarama by default), once the broker answers with
//! error code 0, both sides send the mechanism's tokens as an int32 size and
//! the token's bytes, with no Kafka header, until authentication is over
//! (PLAIN: one token each way; SCRAM: two rounds; GSSAPI: several); then
//! Kafka frames resume.

/// SaslHandshake's api key.
pub(crate) const SASL_HANDSHAKE_KEY: i16 = 17;

/// The SaslHandshake version after which tokens go without a Kafka header.
pub(crate) const RAW_TOKENS_VERSION: i16 = 0;

/// SASL mechanism names are at most 20 characters (RFC 4422, 3.1); a name
/// sent longer than this is shown cut here, so that a hostile one repeated
/// on every token's line costs a bounded amount.
pub const MAX_MECHANISM_SHOWN: usize = 64;

/// A mechanism's name as sent, for showing: invalid UTF-8 replaced, cut at
/// [`MAX_MECHANISM_SHOWN`] bytes (with `…`). Not escaped: renderers escape it.
pub(crate) fn mechanism_text(bytes: &[u8]) -> String {
    let cut = bytes.len() > MAX_MECHANISM_SHOWN;
    let mut text =
        String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_MECHANISM_SHOWN)]).into_owned();
    if cut {
        text.push('…');
    }
    text
}

/// One part of a SASL message: where it is in the message, what it is,
/// and whether it is a credential (shown only with `--show-secrets`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub name: &'static str,
    pub at: usize,
    pub len: usize,
    pub secret: bool,
}

/// A SASL message read by its mechanism's grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub mechanism: &'static str,
    /// Which message of the exchange (`client-first`, `server-final`, ...).
    pub step: &'static str,
    pub parts: Vec<Part>,
}

/// Read `bytes`, a SASL message sent by the client (`from_client`) or the
/// broker, by the grammar of `mechanism` (as the handshake named it), or by
/// its shape when the mechanism is not known. `None`: no grammar fits, and
/// the whole message is a credential for all anyone can tell.
pub fn parse(mechanism: Option<&str>, from_client: bool, bytes: &[u8]) -> Option<Message> {
    let named = mechanism.map(|m| m.to_ascii_uppercase());
    match named.as_deref() {
        Some("PLAIN") => plain(bytes, from_client),
        Some(m) if m.starts_with("SCRAM-SHA-") => scram(bytes, from_client),
        Some("OAUTHBEARER") => oauthbearer(bytes, from_client),
        Some("GSSAPI") => Some(Message {
            mechanism: "GSSAPI",
            step: "token",
            parts: vec![Part {
                name: "gssapiToken",
                at: 0,
                len: bytes.len(),
                secret: true,
            }],
        }),
        Some(_) => None,
        // By shape: OAUTHBEARER's key-value pairs, SCRAM's attributes, PLAIN's two NULs.
        None if from_client && bytes.contains(&1) && bytes.starts_with(b"n,") => {
            oauthbearer(bytes, true)
        }
        None if from_client
            && (bytes.starts_with(b"n,")
                || bytes.starts_with(b"y,")
                || bytes.starts_with(b"c=")) =>
        {
            scram(bytes, true)
        }
        None if !from_client
            && (bytes.starts_with(b"r=")
                || bytes.starts_with(b"v=")
                || bytes.starts_with(b"e=")) =>
        {
            scram(bytes, false)
        }
        None if from_client && bytes.iter().filter(|&&b| b == 0).count() == 2 => plain(bytes, true),
        None => None,
    }
}

/// The mechanism whose client message `bytes` (a frame's body) has the
/// shape of, when nothing else could have it: PLAIN's two NULs between
/// text, SCRAM's or OAUTHBEARER's GS2 header, SCRAM's final `c=…,r=…,p=…`.
/// For a client frame read where no SaslHandshake was seen (a capture that
/// began after it): a Kafka request cannot have these shapes (its api key
/// would be 0x6e2c, `n,`; its header holds bytes below 0x20), and taking
/// the frame for a token keeps its credential masked.
pub(crate) fn client_token_shape(bytes: &[u8]) -> Option<&'static str> {
    let text = |b: &[u8]| b.iter().all(|&c| c >= 0x20 && c != 0x7f);
    let gs2 = bytes.starts_with(b"n,") || bytes.starts_with(b"y,") || bytes.starts_with(b"p=");
    if gs2 && bytes.contains(&1) && bytes.windows(5).any(|w| w == b"auth=") {
        return Some("OAUTHBEARER");
    }
    if gs2 && text(bytes) && scram(bytes, true).is_some_and(|m| m.step == "client-first") {
        let names = |k: &[u8]| bytes.windows(3).any(|w| w == k);
        return (names(b",n=") && names(b",r=")).then_some("SCRAM");
    }
    if bytes.starts_with(b"c=") && text(bytes) {
        let m = scram(bytes, true)?;
        let has = |name| m.parts.iter().any(|p| p.name == name);
        return (has("nonce") && has("clientProof")).then_some("SCRAM");
    }
    // PLAIN: the NULs found first (a byte at a time: a request's header
    // has them in its first bytes, an api key below 256, a version's high
    // byte, so the test ends there).
    let nul = |b: &[u8]| b.iter().position(|&c| c == 0);
    let first = nul(bytes)?;
    let second = first + 1 + nul(&bytes[first + 1..])?;
    let (authzid, user, password) = (
        &bytes[..first],
        &bytes[first + 1..second],
        &bytes[second + 1..],
    );
    let plain = !user.is_empty()
        && !password.is_empty()
        && nul(password).is_none()
        && text(authzid)
        && text(user)
        && text(password);
    plain.then_some("PLAIN")
}

/// PLAIN (RFC 4616): `authzid NUL authcid NUL passwd` from the client; the broker answers with nothing.
fn plain(bytes: &[u8], from_client: bool) -> Option<Message> {
    if !from_client {
        return bytes.is_empty().then(|| Message {
            mechanism: "PLAIN",
            step: "server-response",
            parts: Vec::new(),
        });
    }
    let first = bytes.iter().position(|&b| b == 0)?;
    let second = first + 1 + bytes[first + 1..].iter().position(|&b| b == 0)?;
    let parts = vec![
        Part {
            name: "authorizationId",
            at: 0,
            len: first,
            secret: false,
        },
        Part {
            name: "separator",
            at: first,
            len: 1,
            secret: false,
        },
        Part {
            name: "username",
            at: first + 1,
            len: second - first - 1,
            secret: false,
        },
        Part {
            name: "separator",
            at: second,
            len: 1,
            secret: false,
        },
        Part {
            name: "password",
            at: second + 1,
            len: bytes.len() - second - 1,
            secret: true,
        },
    ];
    Some(Message {
        mechanism: "PLAIN",
        step: "client-response",
        parts,
    })
}

/// SCRAM (RFC 5802): comma-separated `k=value` attributes, after a GS2
/// header in the client's first message. Proofs and signatures are secret.
fn scram(bytes: &[u8], from_client: bool) -> Option<Message> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut parts = Vec::new();
    let mut at = 0;
    let mut attrs = text;
    let gs2 =
        from_client && (text.starts_with("n,") || text.starts_with("y,") || text.starts_with("p="));
    if gs2 {
        // gs2-cbind-flag "," [authzid] ","
        let first = text.find(',')?;
        let second = first + 1 + text[first + 1..].find(',')?;
        parts.push(Part {
            name: "gs2Header",
            at: 0,
            len: second + 1,
            secret: false,
        });
        at = second + 1;
        attrs = &text[at..];
    }
    let mut keys = Vec::new();
    for attr in attrs.split(',') {
        let key = attr.as_bytes().first().copied()?;
        if attr.as_bytes().get(1) != Some(&b'=') {
            return None;
        }
        let (name, secret) = match key {
            b'n' => ("username", false),
            b'a' => ("authorizationId", false),
            b'r' => ("nonce", false),
            b's' => ("salt", false),
            b'i' => ("iterations", false),
            b'c' => ("channelBinding", false),
            b'p' => ("clientProof", true),
            b'v' => ("serverSignature", true),
            b'e' => ("serverError", false),
            b'm' => ("reserved", false),
            _ => ("extension", false),
        };
        keys.push(key);
        parts.push(Part {
            name,
            at,
            len: attr.len(),
            secret,
        });
        at += attr.len() + 1;
    }
    let step = match (from_client, keys.first()) {
        (true, _) if gs2 => "client-first",
        (true, _) => "client-final",
        (false, Some(b'r')) => "server-first",
        (false, _) => "server-final",
    };
    Some(Message {
        mechanism: "SCRAM",
        step,
        parts,
    })
}

/// OAUTHBEARER (RFC 7628): a GS2 header, then `key=value` pairs separated by
/// 0x01 and ended by two; the bearer token is secret. The broker answers
/// with nothing, or with a JSON error.
fn oauthbearer(bytes: &[u8], from_client: bool) -> Option<Message> {
    if !from_client {
        let step = if bytes.is_empty() {
            "server-response"
        } else {
            "server-error"
        };
        let parts = if bytes.is_empty() {
            Vec::new()
        } else {
            vec![Part {
                name: "error",
                at: 0,
                len: bytes.len(),
                secret: false,
            }]
        };
        return Some(Message {
            mechanism: "OAUTHBEARER",
            step,
            parts,
        });
    }
    let header_end = bytes.iter().position(|&b| b == 1)?;
    let mut parts = vec![Part {
        name: "gs2Header",
        at: 0,
        len: header_end,
        secret: false,
    }];
    let mut at = header_end + 1;
    for kv in bytes[header_end + 1..].split(|&b| b == 1) {
        if !kv.is_empty() {
            let is_auth = kv.starts_with(b"auth=");
            parts.push(Part {
                name: if is_auth { "auth" } else { "keyValue" },
                at,
                len: kv.len(),
                secret: is_auth,
            });
        }
        at += kv.len() + 1;
    }
    Some(Message {
        mechanism: "OAUTHBEARER",
        step: "client-first",
        parts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown<'a>(bytes: &'a [u8], m: &Message) -> Vec<(&'static str, &'a str, bool)> {
        m.parts
            .iter()
            .map(|p| {
                (
                    p.name,
                    std::str::from_utf8(&bytes[p.at..p.at + p.len]).unwrap(),
                    p.secret,
                )
            })
            .collect()
    }

    #[test]
    fn plain_names_the_user_and_hides_the_password() {
        let b = b"\0alice\0s3cret";
        let m = parse(Some("PLAIN"), true, b).unwrap();
        assert_eq!(
            shown(b, &m),
            [
                ("authorizationId", "", false),
                ("separator", "\0", false),
                ("username", "alice", false),
                ("separator", "\0", false),
                ("password", "s3cret", true)
            ]
        );
        assert_eq!(parse(None, true, b), Some(m), "known by its shape too");
    }

    #[test]
    fn scram_messages_by_their_attributes() {
        let first = b"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL";
        let m = parse(Some("SCRAM-SHA-256"), true, first).unwrap();
        assert_eq!(m.step, "client-first");
        assert_eq!(
            shown(first, &m),
            [
                ("gs2Header", "n,,", false),
                ("username", "n=alice", false),
                ("nonce", "r=fyko+d2lbbFgONRv9qkxdawL", false)
            ]
        );
        let fin = b"c=biws,r=abc,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=";
        let m = parse(Some("SCRAM-SHA-512"), true, fin).unwrap();
        assert_eq!(
            (m.step, m.parts[2].name, m.parts[2].secret),
            ("client-final", "clientProof", true)
        );
        let server = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=";
        let m = parse(None, false, server).unwrap();
        assert_eq!((m.step, m.parts[0].secret), ("server-final", true));
        assert_eq!(
            parse(None, false, b"r=abc,s=QSXCR+Q6sek8bf92,i=4096")
                .unwrap()
                .step,
            "server-first"
        );
    }

    #[test]
    fn oauthbearer_hides_the_token() {
        let b = b"n,a=alice,\x01auth=Bearer eyJhbGciOi.x.y\x01host=kafka\x01\x01";
        let m = parse(Some("OAUTHBEARER"), true, b).unwrap();
        assert_eq!(
            shown(b, &m),
            [
                ("gs2Header", "n,a=alice,", false),
                ("auth", "auth=Bearer eyJhbGciOi.x.y", true),
                ("keyValue", "host=kafka", false)
            ]
        );
        assert_eq!(parse(None, true, b), Some(m));
    }

    #[test]
    fn unknown_grammars_give_nothing() {
        assert_eq!(parse(Some("X-CUSTOM"), true, b"whatever"), None);
        assert_eq!(parse(None, true, b"\x60\x82\x01\x00"), None);
        assert_eq!(parse(Some("PLAIN"), true, b"no nuls"), None);
    }

    #[test]
    fn a_client_token_is_told_by_its_shape_and_a_kafka_request_never_is() {
        let shapes: [(&[u8], Option<&str>); 9] = [
            (b"\0alice\0secret", Some("PLAIN")),
            (b"admin\0alice\0secret", Some("PLAIN")),
            (b"n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL", Some("SCRAM")),
            (b"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=", Some("SCRAM")),
            (b"n,,\x01auth=Bearer eyJ\x01\x01", Some("OAUTHBEARER")),
            // Empty user or password, a third NUL, control bytes: not PLAIN.
            (b"\0\0secret", None),
            (b"\0alice\0se\0cret", None),
            (b"\0al\x01ice\0secret", None),
            // A Metadata v12 request's body start: api key 3, version 12, ...
            (b"\x00\x03\x00\x0c\x00\x00\x00\x01\x00\x01c", None),
        ];
        for (bytes, want) in shapes {
            assert_eq!(
                client_token_shape(bytes),
                want,
                "{:?}",
                String::from_utf8_lossy(bytes)
            );
        }
    }
}
