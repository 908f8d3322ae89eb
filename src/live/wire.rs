//! Talking to a broker directly: connecting within a time limit, and
//! size-prefixed frames in and out, each read bounded by a maximum size.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Connect to `addr` (HOST:PORT), trying each address it resolves to within `timeout`.
pub fn connect(addr: &str, timeout: Duration) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("{addr}: {e}"))?
        .collect();
    let mut last = format!("{addr}: resolves to no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = format!("{addr} ({a}): {e}"),
        }
    }
    Err(last)
}

/// Write one frame (its size prefix included).
pub fn write_frame(s: &mut TcpStream, frame: &[u8]) -> Result<(), String> {
    s.write_all(frame)
        .and_then(|_| s.flush())
        .map_err(|e| format!("sending: {e}"))
}

/// Read one frame (size prefix included) of at most `max` bytes, within the stream's read timeout.
pub(crate) fn read_frame(s: &mut TcpStream, max: usize) -> Result<Vec<u8>, String> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size)
        .map_err(|e| read_error("a response's size", e))?;
    let n = i32::from_be_bytes(size);
    let n = usize::try_from(n).map_err(|_| format!("the broker sent a frame size of {n}"))?;
    if n.saturating_add(4) > max {
        return Err(format!(
            "the broker's frame declares {n} bytes, more than --max-frame ({max})"
        ));
    }
    let mut frame = Vec::with_capacity(4 + n);
    frame.extend_from_slice(&size);
    frame.resize(4 + n, 0);
    s.read_exact(&mut frame[4..])
        .map_err(|e| read_error("the rest of a response", e))?;
    Ok(frame)
}

fn read_error(what: &str, e: std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("no answer in time while reading {what}")
        }
        std::io::ErrorKind::UnexpectedEof => {
            format!("the broker closed the connection before {what}")
        }
        _ => format!("reading {what}: {e}"),
    }
}

/// Whether a broker answers the request `frame` of `api_key` v`version`:
/// every request but a Produce with acks=0.
pub(crate) fn is_answered(api_key: i16, version: i16, frame: &[u8]) -> bool {
    api_key != crate::protocol::headers::PRODUCE_KEY || produce_acks(frame, version) != Some(0)
}

/// A Produce request's `Acks`, read from its frame (size prefix included)
/// without decoding it: the proxy, `replay` and `send` need it for every Produce
/// (acks=0 gets no answer), and decoding a large Produce whole to find one
/// int16 costs more than forwarding it. The layout is the definitions':
/// header v1 (v0–8) or v2 (v9+: a tagged section after the client id), then
/// from v3 a transactional id (nullable string, compact from v9), then Acks.
/// `None` when the frame is too short to hold it. A test holds it to the
/// decoder for every version.
pub(crate) fn produce_acks(frame: &[u8], version: i16) -> Option<i16> {
    let i16_at = |at: usize| Some(i16::from_be_bytes(frame.get(at..at + 2)?.try_into().ok()?));
    let uvarint_at = |mut at: usize| -> Option<(u64, usize)> {
        let mut v = 0u64;
        for shift in (0..35).step_by(7) {
            let b = *frame.get(at)?;
            at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some((v, at));
            }
        }
        None
    };
    let flexible = version >= 9;
    // The client id: a nullable int16-length string in every header version.
    let mut at = 14 + usize::try_from(i16_at(12)?.max(0)).ok()?;
    if flexible {
        let (count, mut next) = uvarint_at(at)?;
        for _ in 0..count {
            let (_tag, after_tag) = uvarint_at(next)?;
            let (size, after_size) = uvarint_at(after_tag)?;
            next = after_size.checked_add(usize::try_from(size).ok()?)?;
        }
        at = next;
    }
    if version >= 3 {
        at = if flexible {
            let (len_plus_one, after) = uvarint_at(at)?;
            after.checked_add(usize::try_from(len_plus_one.saturating_sub(1)).ok()?)?
        } else {
            at + 2 + usize::try_from(i16_at(at)?.max(0)).ok()?
        };
    }
    i16_at(at)
}

#[cfg(test)]
mod tests {
    use super::produce_acks;
    use crate::encode::{encode_frame, FrameSpec};
    use crate::schema::{Catalogue, MessageKind};
    use serde_json::{json, Map};

    #[test]
    fn produce_acks_reads_what_the_encoder_wrote_at_every_version() {
        let cat = Catalogue::builtin();
        for version in cat.versions(MessageKind::Request, 0, None) {
            let spec = cat.message(MessageKind::Request, 0, version, None).unwrap();
            for (acks, txn, client) in [
                (0, None, "c"),
                (-1, Some("orders-txn-1"), ""),
                (1, Some(""), "a-longer-client-id"),
            ] {
                let mut body = crate::encode::realistic::realistic_struct(&spec.fields, version);
                body.insert("Acks".into(), json!(acks));
                if body.contains_key("TransactionalId") {
                    body.insert("TransactionalId".into(), json!(txn));
                }
                let mut header = Map::new();
                header.insert("CorrelationId".into(), json!(7));
                header.insert("ClientId".into(), json!(client));
                let fs = FrameSpec {
                    direction: crate::decode::Direction::Request,
                    api_key: 0,
                    version,
                    release: None,
                };
                let frame = encode_frame(cat, &fs, &header, &body).unwrap();
                assert_eq!(
                    produce_acks(&frame, version),
                    Some(acks),
                    "v{version} {txn:?} {client:?}"
                );
                assert_eq!(produce_acks(&frame[..frame.len().min(13)], version), None);
            }
        }
    }
}
