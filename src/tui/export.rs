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

/// The frame as the JSON contract (decoded again values-only, within a
/// budget of `limits` of its own: records stay their bytes): pretty-printed, or on one line
/// when `one_line` (a frame whose big records fields the explorer holds as
/// stubs, whose contract may be megabytes of hex).
pub(crate) fn json(
    path: &str,
    (cat, release): (&Catalogue, Option<&str>),
    frame: &Frame,
    limits: crate::budget::Limits,
    one_line: bool,
) -> Result<String, String> {
    let mut text = Vec::with_capacity(frame.bytes.len() * 2 + 256);
    crate::render::json::write_contract_of(frame, (cat, release), limits, &mut text);
    if !one_line {
        let pretty = serde_json::from_slice(&text)
            .map(|v: serde_json::Value| crate::render::json::to_text_pretty(&v))
            .map_err(|e| format!("{path}: {e}"))?;
        text = pretty.into_bytes();
    }
    text.push(b'\n');
    let mut out = create(path)?;
    out.write_all(&text)
        .and_then(|_| out.flush())
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(if one_line {
        format!("wrote the frame as JSON to {path} (on one line: it is too big to hold whole)")
    } else {
        format!("wrote the frame as JSON to {path}")
    })
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
