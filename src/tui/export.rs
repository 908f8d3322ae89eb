//! `x`: what the explorer shows, written to a file named in a prompt: the
//! selected node's bytes as hex text (`kwire decode` reads it back), the
//! frame as the JSON contract (`kwire encode` makes its bytes again), or the
//! frames the list shows as a pcapng (each connection's TCP synthesized as
//! raw IP, as the proxy records: `kwire capture` reads it back). An existing
//! file is never overwritten.

use crate::analysis::captured::decode_captured;
use crate::analysis::index::{IndexedFrame, Spool};
use crate::decode::{DecodeOptions, Direction, Frame};
use crate::live::synth::{PcapngWriter, TcpFlow, LINKTYPE_RAW};
use crate::schema::Catalogue;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::{BufWriter, Write};

/// A new file at `path` (none there yet).
fn create(path: &str) -> Result<BufWriter<std::fs::File>, String> {
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(f) => Ok(BufWriter::new(f)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            Err(format!("{path} exists: name a new file"))
        }
        Err(e) => Err(format!("{path}: {e}")),
    }
}

/// `bytes` as hex text, 16 bytes a line.
pub fn hex(path: &str, bytes: &[u8]) -> Result<String, String> {
    let mut out = create(path)?;
    for row in bytes.chunks(16) {
        let line: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
        writeln!(out, "{}", line.join(" ")).map_err(|e| format!("{path}: {e}"))?;
    }
    out.flush().map_err(|e| format!("{path}: {e}"))?;
    Ok(format!("wrote {} bytes as hex to {path}", bytes.len()))
}

/// The frame as the JSON contract.
pub fn json(path: &str, frame: &Frame) -> Result<String, String> {
    let mut out = create(path)?;
    let text = crate::render::json::to_text_pretty(&crate::render::json::frame_contract(frame));
    out.write_all(text.as_bytes())
        .and_then(|_| out.write_all(b"\n"))
        .and_then(|_| out.flush())
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(format!("wrote the frame as JSON to {path}"))
}

/// The rows' frames, read from the spool, as a pcapng of synthesized TCP.
/// Credentials are masked in the bytes written, as every view shows them
/// (each frame that may hold one decoded for it), unless `--show-secrets`: a pcap is shared
/// more readily than a terminal.
pub fn pcap<'r>(
    path: &str,
    spool: &Spool,
    rows: impl Iterator<Item = &'r IndexedFrame>,
    cat: &Catalogue,
    release: Option<&str>,
) -> Result<String, String> {
    let io = |e: std::io::Error| format!("{path}: {e}");
    let mut out = PcapngWriter::new(create(path)?, LINKTYPE_RAW).map_err(io)?;
    let mut flows: HashMap<usize, TcpFlow> = HashMap::new();
    let (mut count, mut masked) = (0, 0);
    for row in rows {
        let mut f = spool.frame(row).map_err(|e| format!("the spool: {e}"))?;
        let may_hold = crate::decode::secrets::may_hold_bytes(
            &f.kind,
            f.direction,
            f.api_key.zip(f.api_version),
            &f.bytes,
            |kind, k, v| cat.message(kind, k, v, release),
        );
        if may_hold && crate::decode::secrets::hiding() {
            let (shown, _) = decode_captured(cat, release, &f, false, DecodeOptions::default());
            if shown.bytes.len() == f.bytes.len() && shown.bytes != f.bytes {
                masked += 1;
                f.bytes = shown.bytes;
            }
        }
        let micros = (f.timestamp.max(0.0) * 1e6) as u64;
        let from_client = f.direction == Direction::Request;
        let mut packets = Vec::new();
        let flow = match flows.entry(f.conn) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                // A connection starts with its handshake, so readers take its first bytes as a frame's.
                let (client, server) = if from_client {
                    (f.from, f.to)
                } else {
                    (f.to, f.from)
                };
                let flow = v.insert(TcpFlow::new(client, server));
                packets.extend(flow.open());
                flow
            }
        };
        packets.extend(flow.data(from_client, &f.bytes));
        for p in packets {
            out.packet(micros, &p).map_err(io)?;
        }
        count += 1;
    }
    out.flush().map_err(io)?;
    let secrets = match masked {
        0 => String::new(),
        1 => "; credentials masked in 1 frame (--show-secrets writes them)".into(),
        n => format!("; credentials masked in {n} frames (--show-secrets writes them)"),
    };
    Ok(format!(
        "wrote {} to {path} (pcapng, TCP synthesized per connection{secrets})",
        crate::text::count(count, "frame", "frames")
    ))
}
