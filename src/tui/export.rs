//! `x`: what the explorer shows, written to a file named in a prompt: the
//! selected node's bytes as hex text (`kwire decode` reads it back), the
//! frame as the JSON contract (`kwire encode` makes its bytes again), or the
//! frames the list shows as a pcapng (each connection's TCP synthesized as
//! raw IP, as the proxy records: `kwire capture` reads it back). An existing
//! file is never overwritten.

use crate::analysis::index::{IndexedFrame, Spool};
use crate::decode::Frame;
use crate::live::frames_pcap::FramesPcap;
use crate::schema::Catalogue;
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

/// A frame whose big records fields are held as stubs, as the JSON
/// contract on one line: decoded again values-only (the records as their
/// bytes, as `kwire decode --format json` writes them), never holding every
/// batch's nodes; within a budget of `limits` of its own.
pub(crate) fn json_values(
    path: &str,
    cat: &Catalogue,
    release: Option<&str>,
    frame: &Frame,
    limits: crate::budget::Limits,
) -> Result<String, String> {
    let opts = crate::decode::DecodeOptions {
        direction: Some(frame.direction),
        api_key: frame.api_key,
        api_version: frame.api_version,
        release: release.map(str::to_string),
        budget: crate::budget::Budget::new(limits),
        values_only: true,
        ..Default::default()
    };
    let values = crate::decode::decode_frame(cat, frame.bytes.clone(), frame.input_offset, &opts);
    let mut line = Vec::with_capacity(values.bytes.len() * 2 + 256);
    crate::render::json::write_contract(&values, &mut line);
    line.push(b'\n');
    let mut out = create(path)?;
    out.write_all(&line)
        .and_then(|_| out.flush())
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(format!(
        "wrote the frame as JSON to {path} (on one line, decoded again values-only: its records held as batches)"
    ))
}

/// The rows' frames, read from the spool, as a pcapng of synthesized TCP
/// (`live::frames_pcap`: credentials masked unless `--show-secrets`).
pub fn pcap<'r>(
    path: &str,
    spool: &Spool,
    rows: impl Iterator<Item = &'r IndexedFrame>,
    cat: &Catalogue,
    release: Option<&str>,
) -> Result<String, String> {
    let io = |e: std::io::Error| format!("{path}: {e}");
    let mut out = FramesPcap::new(create(path)?).map_err(io)?;
    for row in rows {
        let f = spool.frame(row).map_err(|e| format!("the spool: {e}"))?;
        out.frame(cat, release, &f).map_err(io)?;
    }
    let written = out.finish().map_err(io)?;
    Ok(format!("wrote {written} to {path}"))
}
