//! Captures: pcap/pcapng files → TCP segments → reassembled streams → Kafka
//! frames, responses paired with their requests.

pub mod flows;
pub mod link;
pub mod pcap;
pub mod tcp;

pub use flows::{complete_prefix, CapturedFrame, CutBodies, Flows};

use crate::schema::Catalogue;
use std::io::Read;

/// Read a whole capture, calling `each` for every frame as soon as it completes
/// (memory stays bounded by the frames in flight, not by the file).
pub fn for_each_frame<R: Read>(cat: &Catalogue, input: R, port: Option<u16>, each: impl FnMut(CapturedFrame) -> bool) -> Result<CaptureStats, String> {
    for_each_frame_with(cat, input, &CaptureOptions { port, cut_bodies: None }, each)
}

/// How a capture is read.
#[derive(Clone, Debug, Default)]
pub struct CaptureOptions {
    /// The broker's port (`--port`); otherwise the client side is found by plausibility.
    pub port: Option<u16>,
    /// Hand on large frames cut to their header (for listings).
    pub cut_bodies: Option<CutBodies>,
}

/// `for_each_frame` with options.
pub fn for_each_frame_with<R: Read>(cat: &Catalogue, input: R, opts: &CaptureOptions, mut each: impl FnMut(CapturedFrame) -> bool) -> Result<CaptureStats, String> {
    let mut reader = pcap::Reader::new(input)?;
    let mut flows = Flows::new(cat, opts.port);
    if let Some(cut) = &opts.cut_bodies {
        flows.cut_bodies(cut.clone());
    }
    let mut stats = CaptureStats::default();
    let mut last_ts = 0.0;
    let mut error = None;
    // Frames completed by one segment; reused, so a packet costs no allocation.
    let mut done = Vec::new();
    loop {
        let packet = match reader.read_packet() {
            Ok(Some(p)) => p,
            Ok(None) => break,
            Err(e) => {
                error = Some(e);
                break;
            }
        };
        stats.packets += 1;
        last_ts = packet.timestamp;
        let Some(seg) = link::tcp_segment(packet.link_type, packet.data) else { continue };
        stats.tcp_segments += 1;
        flows.push_into(packet.timestamp, &seg, &mut done);
        for f in done.drain(..) {
            stats.frames += 1;
            if !each(f) {
                return Ok(stats);
            }
        }
    }
    for f in flows.finish(last_ts) {
        stats.frames += 1;
        if !each(f) {
            break;
        }
    }
    stats.connections = flows.connections();
    stats.error = error;
    Ok(stats)
}

#[derive(Clone, Debug, Default)]
pub struct CaptureStats {
    pub packets: usize,
    pub tcp_segments: usize,
    pub frames: usize,
    pub connections: usize,
    /// The file was corrupt or cut short after the packets counted.
    pub error: Option<String>,
}
