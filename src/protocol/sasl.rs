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
pub const SASL_HANDSHAKE_KEY: i16 = 17;

/// The SaslHandshake version after which tokens go without a Kafka header.
pub const RAW_TOKENS_VERSION: i16 = 0;

/// SASL mechanism names are at most 20 characters (RFC 4422, 3.1); a name
/// sent longer than this is shown cut here, so that a hostile one repeated
/// on every token's line costs a bounded amount.
pub const MAX_MECHANISM_SHOWN: usize = 64;

/// A mechanism's name as sent, for showing: invalid UTF-8 replaced, cut at
/// [`MAX_MECHANISM_SHOWN`] bytes (with `…`). Not escaped: renderers escape it.
pub fn mechanism_text(bytes: &[u8]) -> String {
    let cut = bytes.len() > MAX_MECHANISM_SHOWN;
    let mut text = String::from_utf8_lossy(&bytes[..bytes.len().min(MAX_MECHANISM_SHOWN)]).into_owned();
    if cut {
        text.push('…');
    }
    text
}
