//! SASL tokens: after a SaslHandshake v0 that the broker accepted, each side
//! sends the mechanism's tokens as an int32 size and the token's bytes, with no
//! Kafka header (the capture layer tells them apart, `capture::flows`). A token
//! is shown, never decoded: its tree is the size prefix and the bytes.

use super::tree::{
    add_to_note, framing_node, leaf, DecodeError, Direction, Frame, FrameKind, Node, Region, Role,
    SaslMechanism, Value,
};
use crate::decode::Wire;
use bytes::Bytes;
use std::sync::Arc;

/// The root node's name of a token.
pub(crate) const TOKEN_ROOT: &str = "SaslToken";

/// The frame of a SASL token: `bytes` is the whole frame, size prefix included.
/// Nothing is read but the size; a size that disagrees with the bytes is the
/// frame's error, as for any frame.
pub(crate) fn token_frame(
    bytes: Bytes,
    input_offset: usize,
    direction: Direction,
    mechanism: Arc<SaslMechanism>,
) -> Frame {
    let mut root = Node::new(TOKEN_ROOT, "message", 0, Region::Frame, Role::Structure);
    root.set_note(format!("({})", mechanism.name));
    root.doc = Some(match mechanism.guessed {
        false => "SASL token after SaslHandshake v0: no Kafka header".into(),
        true => "SASL token by its shape (no SaslHandshake in the capture): no Kafka header".into(),
    });
    root.len = bytes.len();
    let mut error = None;
    match bytes.first_chunk::<4>().map(|b| i32::from_be_bytes(*b)) {
        Some(declared) => {
            root.children.push(framing_node(Some(declared), 4));
            let have = bytes.len() - 4;
            if usize::try_from(declared).ok() != Some(have) {
                error = Some(DecodeError {
                    kind: crate::decode::ErrorKind::Truncated,
                    offset: 0,
                    expected: format!(
                        "a token of {declared} bytes, as its size says; {have} follow"
                    ),
                });
            }
        }
        None => {
            let mut framing = framing_node(None, bytes.len());
            framing.set_error("a 4-byte size prefix");
            root.children.push(framing);
            error = Some(DecodeError {
                kind: crate::decode::ErrorKind::Truncated,
                offset: 0,
                expected: "a 4-byte size prefix".into(),
            });
        }
    }
    if bytes.len() >= 4 {
        let region = match direction {
            Direction::Request => Region::RequestBody,
            Direction::Response => Region::ResponseBody,
        };
        let mut auth = leaf(
            "authBytes",
            Wire::Bytes,
            4,
            bytes.len() - 4,
            Value::Bytes(Some(bytes.slice(4..))),
            region,
        );
        auth.doc = Some("the mechanism's bytes: no api key, no correlation id".into());
        sasl_parts(
            &mut auth,
            &bytes,
            bytes.len(),
            (!mechanism.guessed).then_some(&*mechanism.name),
            direction == Direction::Request,
        );
        root.children.push(auth);
    }
    let mut frame = Frame {
        direction,
        kind: FrameKind::SaslToken { mechanism },
        api_key: None,
        api_version: None,
        header_version: None,
        input_offset,
        bytes,
        root,
        values: None,
        error,
        warnings: Default::default(),
        record_damage: Default::default(),
        redacted: Default::default(),
        held: Default::default(),
        deferred: Vec::new(),
    };
    if crate::decode::secrets::hiding() {
        crate::decode::secrets::redact(&mut frame);
    }
    frame
}

/// The parts of the SASL message that `node` (bytes ending at `end` in
/// `frame`) holds, read by `mechanism`'s grammar (or by shape when it is not
/// known), as its children; credentials are marked secret. A message no
/// grammar fits is a credential as a whole.
pub(crate) fn sasl_parts(
    node: &mut Node,
    frame: &Bytes,
    end: usize,
    mechanism: Option<&str>,
    from_client: bool,
) {
    // The value's bytes end at `end` (the node's length may not be set yet).
    let Value::Bytes(Some(b)) = &node.value else {
        return;
    };
    let len = b.len();
    let at = end.saturating_sub(len);
    let Some(bytes) = frame.get(at..at + len) else {
        return;
    };
    if bytes.is_empty() {
        return;
    }
    let Some(message) = crate::protocol::sasl::parse(mechanism, from_client, bytes) else {
        match mechanism {
            Some(m) => add_to_note(node, &format!("{m}: a mechanism kwire does not read")),
            None => add_to_note(node, "SASL message of an unknown mechanism"),
        }
        node.set_secret();
        return;
    };
    add_to_note(node, &format!("{} {}", message.mechanism, message.step));
    for p in &message.parts {
        let value = match std::str::from_utf8(&bytes[p.at..p.at + p.len]) {
            Ok(t) => Value::Str(Some(t.to_string().into())),
            Err(_) => Value::Bytes(Some(frame.slice(at + p.at..at + p.at + p.len))),
        };
        let mut n = leaf(p.name, Wire::String, at + p.at, p.len, value, node.region);
        if p.secret {
            n.set_secret();
        }
        node.children.push(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_its_size_and_its_bytes() {
        let bytes = Bytes::from_static(b"\x00\x00\x00\x05\x00u\x00pw");
        let f = token_frame(bytes, 0, Direction::Request, SaslMechanism::named("PLAIN"));
        assert!(f.error.is_none());
        assert_eq!(f.kind.sasl_mechanism(), Some("PLAIN"));
        let auth = &f.root.children[1];
        assert_eq!(
            (auth.name.text().as_str(), auth.offset, auth.len),
            ("authBytes", 4, 5)
        );
        assert_eq!(f.root.children[0].children[0].value, Value::Int(5));
        // Cut short, or no size at all: an error, never a panic.
        assert!(token_frame(
            Bytes::from_static(b"\x00\x00\x00\x09ab"),
            0,
            Direction::Response,
            SaslMechanism::named("X")
        )
        .error
        .is_some());
        let f = token_frame(
            Bytes::from_static(b"\x00\x00"),
            0,
            Direction::Response,
            SaslMechanism::named("X"),
        );
        assert!(f.error.is_some() && f.root.children.len() == 1);
    }
}
