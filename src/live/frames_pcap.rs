//! Frames written back as a capture: each connection's TCP synthesized as raw
//! IP (handshake, the frames' bytes as data at their captured times, both FINs
//! at the end for each connection both sides closed), so `kwire capture` and Wireshark read the same
//! frames back. What `capture --write-selected` (and the proxy's) and the
//! explorer's `x pcap` write.
//!
//! Credentials are masked in the bytes written, as every view shows them
//! (each frame that may hold one is decoded for it), unless secrets are
//! shown: a pcap is shared more readily than a terminal.

use super::synth::{PcapngWriter, TcpFlow, LINKTYPE_RAW};
use crate::analysis::captured::shown_bytes;
use crate::capture::{CapturedFrame, ConnEvent, ConnEventKind, Side};
use crate::decode::Direction;
use crate::schema::Catalogue;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::io::{self, Write};

/// A pcapng of synthesized TCP carrying the frames handed to it.
pub struct FramesPcap<W: Write> {
    out: PcapngWriter<W>,
    /// Connections written so far and still open.
    flows: HashMap<usize, TcpFlow>,
    /// The side that closed first, of connections with one side closed.
    half_closed: HashMap<usize, Side>,
    /// Connections closed in the input (time, connection, first closer), in
    /// the order they closed, written at the end: a frame held by a selection
    /// until its exchange was decided may still come after its close.
    closed: std::collections::VecDeque<(u64, usize, Side)>,
    connections: usize,
    frames: usize,
    masked: usize,
}

impl<W: Write> FramesPcap<W> {
    pub fn new(out: W) -> io::Result<Self> {
        Ok(FramesPcap {
            out: PcapngWriter::new(out, LINKTYPE_RAW)?,
            flows: HashMap::new(),
            half_closed: HashMap::new(),
            closed: Default::default(),
            connections: 0,
            frames: 0,
            masked: 0,
        })
    }

    /// One frame, at its captured time, on its connection's flow (opened
    /// with a handshake the first time, so readers take the first bytes as a
    /// frame's). A frame of which only a prefix was kept cannot be written:
    /// the stream read back would be broken, so it is refused.
    pub fn frame(
        &mut self,
        cat: &Catalogue,
        release: Option<&str>,
        f: &CapturedFrame,
    ) -> io::Result<()> {
        if f.is_cut() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "frame {} was read without its body: it cannot be written",
                    f.index
                ),
            ));
        }
        let bytes = self.shown_bytes(cat, release, f);
        let micros = micros(f.timestamp);
        let from_client = f.direction == Direction::Request;
        let mut packets = Vec::new();
        let flow = match self.flows.entry(f.conn) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                let (client, server) = if from_client {
                    (f.from, f.to)
                } else {
                    (f.to, f.from)
                };
                self.connections += 1;
                let opened = v.insert(TcpFlow::new(client, server));
                packets.extend(opened.open());
                opened
            }
        };
        let first_data = packets.len();
        packets.extend(flow.data(from_client, &bytes));
        for (i, p) in packets.iter().enumerate() {
            // The frame's comment (what `proxy --inject` did to it) stays on its first packet.
            match f.comment.as_deref().filter(|_| i == first_data) {
                Some(text) => self.out.packet_commented(micros, p, text)?,
                None => self.out.packet(micros, p)?,
            }
        }
        self.frames += 1;
        Ok(())
    }

    /// A connection's FIN or RST: once both sides closed (or one reset), the
    /// connection closes with both FINs, the first closer's first, at the
    /// time it closed, written at the end (after every frame). A connection
    /// that never closes in the input stays open in the output.
    pub(crate) fn conn_event(&mut self, e: &ConnEvent) {
        let (side, reset) = match e.kind {
            ConnEventKind::Open => return,
            ConnEventKind::Fin(side) => (side, false),
            ConnEventKind::Reset(side) => (side, true),
        };
        let first = *self.half_closed.entry(e.conn).or_insert(side);
        if reset || first != side {
            self.half_closed.remove(&e.conn);
            self.closed.push_back((micros(e.timestamp), e.conn, first));
        }
    }

    /// Every close, once no frame can follow: a selection may hold a
    /// connection's frame past its close (a request waiting for what its
    /// response says), so a close written earlier could split a stream.
    fn write_closes(&mut self) -> io::Result<()> {
        while let Some((at, conn, first)) = self.closed.pop_front() {
            if let Some(mut flow) = self.flows.remove(&conn) {
                for p in flow.close(first == Side::Client) {
                    self.out.packet(at, &p)?;
                }
            }
        }
        Ok(())
    }

    /// Everything written out; a line on what was written (frames,
    /// connections, credentials masked).
    pub fn finish(mut self) -> io::Result<String> {
        self.write_closes()?;
        self.out.flush()?;
        let secrets = match self.masked {
            0 => String::new(),
            1 => "; credentials masked in 1 frame (--show-secrets writes them)".into(),
            n => format!("; credentials masked in {n} frames (--show-secrets writes them)"),
        };
        Ok(format!(
            "{} of {} (pcapng, TCP synthesized per connection{secrets})",
            crate::text::count(self.frames, "frame", "frames"),
            crate::text::count(self.connections, "connection", "connections"),
        ))
    }

    /// The frame's bytes with its credentials masked when secrets are hidden.
    fn shown_bytes(
        &mut self,
        cat: &Catalogue,
        release: Option<&str>,
        f: &CapturedFrame,
    ) -> bytes::Bytes {
        match shown_bytes(cat, release, f) {
            Some(masked) => {
                self.masked += 1;
                masked
            }
            None => f.bytes.clone(),
        }
    }
}

/// Microseconds since the epoch of a capture's time in seconds.
fn micros(seconds: f64) -> u64 {
    (seconds.max(0.0) * 1e6) as u64
}
