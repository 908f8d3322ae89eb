//! Captures: pcap/pcapng files → TCP segments → reassembled streams → Kafka
//! frames, responses paired with their requests, and notes for the bytes that
//! are in no frame.

pub(crate) mod awaiting;
pub mod candidates;
pub mod flows;
pub mod framing;
pub mod ip_fragments;
pub mod link;
pub mod pcap;
pub mod read_ahead;
mod sasl;
pub mod skips;
pub mod tcp;
pub mod tls;

pub(crate) use flows::cut_for_listing;
pub use flows::{
    Captured, CapturedFrame, ConnEvent, ConnEventKind, CutBodies, Flows, Side, SkipReason, Skipped,
    StreamCut, DEFAULT_MAX_REASSEMBLY,
};
pub use framing::{complete_prefix, Effort};

use crate::schema::Catalogue;
use std::io::Read;
use std::sync::Arc;
use tls::{KeyLog, TlsKeys, TlsTally};

/// Read a whole capture, calling `each` for every frame as soon as it completes
/// (memory stays bounded by the frames in flight, not by the file). Bytes in no
/// frame are counted in the stats; [`for_each_captured`] hands their notes on.
pub fn for_each_frame<R: Read>(
    cat: &Catalogue,
    input: R,
    port: Option<u16>,
    each: impl FnMut(CapturedFrame) -> bool,
) -> Result<CaptureStats, String> {
    for_each_frame_with(
        cat,
        input,
        &CaptureOptions {
            port,
            ..Default::default()
        },
        each,
    )
}

/// How a capture is read.
#[derive(Clone, Debug)]
pub struct CaptureOptions {
    /// The broker's port (`--port`); otherwise the client side is found by plausibility.
    pub port: Option<u16>,
    /// Hand on large frames cut to their header (for listings).
    pub cut_bodies: Option<CutBodies>,
    /// Cap on what reassembly holds at once, all connections together.
    pub max_reassembly: usize,
    /// Session keys for TLS connections (`--tls-keylog`); secrets in the
    /// capture's Decryption Secrets Blocks are used too.
    pub tls_keylog: Option<Arc<KeyLog>>,
}

impl Default for CaptureOptions {
    fn default() -> Self {
        CaptureOptions {
            port: None,
            cut_bodies: None,
            max_reassembly: DEFAULT_MAX_REASSEMBLY,
            tls_keylog: None,
        }
    }
}

/// `for_each_frame` with options.
pub(crate) fn for_each_frame_with<R: Read>(
    cat: &Catalogue,
    input: R,
    opts: &CaptureOptions,
    mut each: impl FnMut(CapturedFrame) -> bool,
) -> Result<CaptureStats, String> {
    for_each_captured(cat, input, opts, |c| match c {
        Captured::Frame(f) => each(f),
        Captured::Skipped(_) | Captured::Tls(_) | Captured::Conn(_) => true,
    })
}

/// Read a whole capture, calling `each` for every frame, every skip note
/// (bytes in no frame) and every TLS note as they come; `each` returns false
/// to stop. [`read_ahead::for_each_captured_ahead`] does the same with the
/// reading on a thread of its own.
pub fn for_each_captured<R: Read>(
    cat: &Catalogue,
    input: R,
    opts: &CaptureOptions,
    each: impl FnMut(Captured) -> bool,
) -> Result<CaptureStats, String> {
    let mut stats = CaptureStats::default();
    let mut each = HandOn {
        tally: CaptureStats::default(),
        each,
    };
    read_capture(cat, input, opts, &mut stats, &mut each)?;
    stats.add_handed_on(&each.tally);
    Ok(stats)
}

/// Where what the reading completes goes.
trait Deliver {
    /// A frame or note; false: stop reading.
    fn deliver(&mut self, c: Captured) -> bool;
    /// The next record is not yet in the read buffer: reading it may wait on a
    /// stream. False: stop reading.
    fn waiting(&mut self) -> bool {
        true
    }
}

/// Straight to the caller's `each`, counted.
struct HandOn<F> {
    tally: CaptureStats,
    each: F,
}

impl<F: FnMut(Captured) -> bool> Deliver for HandOn<F> {
    fn deliver(&mut self, c: Captured) -> bool {
        self.tally.hand_on(c, &mut self.each)
    }
}

/// The capture read packet by packet into `stats`, what completes delivered as it completes.
fn read_capture<R: Read>(
    cat: &Catalogue,
    input: R,
    opts: &CaptureOptions,
    stats: &mut CaptureStats,
    to: &mut impl Deliver,
) -> Result<(), String> {
    let mut reader = pcap::Reader::new(input)?;
    let mut flows = Flows::new(cat, opts.port);
    if let Some(cut) = &opts.cut_bodies {
        flows.cut_bodies(cut.clone());
    }
    flows.max_reassembly(opts.max_reassembly);
    flows.tls_keys(TlsKeys {
        file: opts.tls_keylog.clone(),
        ..Default::default()
    });
    let mut last_ts = 0.0;
    let mut error = None;
    // What one segment completed; reused, so a packet costs no allocation.
    let mut done = Vec::new();
    let mut stopped = false;
    let mut fragments = ip_fragments::Fragments::default();
    loop {
        if !reader.next_is_buffered() && !to.waiting() {
            stopped = true;
            break;
        }
        let packet = match reader.read_record() {
            Ok(Some(pcap::Record::Packet(p))) => p,
            Ok(Some(pcap::Record::TlsKeyLog(text))) => {
                stats.secrets_blocks += 1;
                flows.add_secrets(text);
                continue;
            }
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        };
        stats.packets += 1;
        last_ts = packet.timestamp;
        let whole;
        let seg = match fragments.take(packet.link_type, packet.data) {
            ip_fragments::Defragmented::Whole => link::tcp_segment(packet.link_type, packet.data),
            ip_fragments::Defragmented::Held => None,
            ip_fragments::Defragmented::Complete(ip) => {
                whole = ip;
                link::tcp_segment(link::LINKTYPE_RAW, &whole)
            }
        };
        let Some(seg) = seg else {
            continue;
        };
        stats.tcp_segments += 1;
        flows.comment_next(packet.comment);
        flows.push_into(packet.timestamp, &seg, &mut done);
        for c in done.drain(..) {
            if !to.deliver(c) {
                stopped = true;
                break;
            }
        }
        if stopped {
            break;
        }
    }
    if !stopped {
        for c in flows.finish(last_ts) {
            if !to.deliver(c) {
                break;
            }
        }
    }
    fragments.finish();
    stats.fragments = fragments.counts;
    stats.connections = flows.connections();
    (stats.unrecognised_connections, stats.unrecognised_bytes) = flows.unrecognised();
    (stats.conflicting_segments, stats.first_conflict) = flows.conflicts();
    stats.uncompared = flows.uncompared();
    stats.effort = flows.effort();
    stats.error = error;
    Ok(())
}

#[derive(Clone, Debug, Default)]
pub struct CaptureStats {
    pub packets: usize,
    pub tcp_segments: usize,
    pub frames: usize,
    pub connections: usize,
    /// TCP connections with data not taken for Kafka, and their bytes
    /// (`Flows::unrecognised`).
    pub unrecognised_connections: usize,
    pub unrecognised_bytes: u64,
    /// TCP segments whose bytes differed from the copy kwire already held
    /// for the same stream bytes (a retransmission or overlap with other
    /// bytes; the first copy is decoded), and the first: connection,
    /// direction, stream offset.
    pub conflicting_segments: u64,
    pub first_conflict: Option<(usize, Option<crate::decode::Direction>, u64)>,
    /// Segments that repeated stream bytes already decoded when no copy of
    /// them was kept to compare with (`flows::Uncompared`).
    pub uncompared: flows::Uncompared,
    /// Skip notes handed on, and the bytes they cover.
    pub skips: usize,
    pub skipped_bytes: u64,
    /// Candidate decodes, resync positions and peak reassembly memory.
    pub effort: Effort,
    /// TLS connections, by what their notes said.
    pub tls: TlsTally,
    /// Decryption Secrets Blocks read (TLS key logs in a pcapng).
    pub secrets_blocks: usize,
    /// IP fragments put back together, and those whose datagram never completed.
    pub fragments: ip_fragments::FragmentCounts,
    /// The file was corrupt or cut short after the packets counted.
    pub error: Option<String>,
}

impl CaptureStats {
    /// Add what another tally counted of the frames and notes handed on.
    fn add_handed_on(&mut self, other: &CaptureStats) {
        self.frames += other.frames;
        self.skips += other.skips;
        self.skipped_bytes += other.skipped_bytes;
        self.tls.merge(&other.tls);
    }

    fn hand_on(&mut self, c: Captured, each: &mut impl FnMut(Captured) -> bool) -> bool {
        match &c {
            Captured::Frame(_) => self.frames += 1,
            Captured::Skipped(s) => {
                self.skips += 1;
                self.skipped_bytes += s.bytes;
            }
            Captured::Tls(n) => self.tls.add(n),
            Captured::Conn(_) => {}
        }
        each(c)
    }
}
