//! A capture read on a thread of its own: packets, reassembly, framing and
//! pairing there, while the caller's `each` (decoding, listing, writing) runs
//! on the calling thread. Together the two halves of the work take about as
//! long as the larger one alone when a second core is free.
//!
//! What completes travels in batches, so the threads meet once per batch, not
//! once per frame. A batch goes when it is full or when the next record is not
//! yet in the read buffer, so that frames of a live stream are handed on as
//! soon as they arrive, not when a batch fills.
//!
//! Memory: at most [`IN_FLIGHT`] batches wait, each up to [`BATCH_BYTES`]
//! of frame bytes (plus one frame) and [`BATCH_ITEMS`] frames and notes.

use super::{read_capture, CaptureOptions, CaptureStats, Captured, Deliver};
use crate::schema::Catalogue;
use std::io::Read;
use std::sync::mpsc;

/// Frames and notes in one batch at most.
pub const BATCH_ITEMS: usize = 512;
/// Frame bytes in one batch at most (the frame that crosses it completes the batch).
pub const BATCH_BYTES: usize = 4 << 20;
/// Batches waiting for the caller at most, besides the one it works on.
pub const IN_FLIGHT: usize = 4;

/// [`super::for_each_captured`], reading on a thread of its own.
///
/// For files: when `each` stops, the reading thread stops at its next batch,
/// and this returns when it has; on a live stream that sends nothing more it
/// would wait for the stream's next bytes.
pub fn for_each_captured_ahead<R: Read + Send>(cat: &Catalogue, input: R, opts: &CaptureOptions, mut each: impl FnMut(Captured) -> bool) -> Result<CaptureStats, String> {
    let (tx, rx) = mpsc::sync_channel::<Vec<Captured>>(IN_FLIGHT);
    std::thread::scope(|scope| {
        let reading = scope.spawn(move || {
            let mut stats = CaptureStats::default();
            let mut batch = Batch { items: Vec::new(), bytes: 0, tx };
            let res = read_capture(cat, input, opts, &mut stats, &mut batch);
            batch.send();
            res.map(|_| stats)
        });
        let mut tally = CaptureStats::default();
        'batches: for batch in rx.iter() {
            for c in batch {
                if !tally.hand_on(c, &mut each) {
                    break 'batches;
                }
            }
        }
        // The reading thread's next send fails: it stops there.
        drop(rx);
        let mut stats = reading.join().map_err(|_| "the capture's reading thread failed".to_string())??;
        stats.add_handed_on(&tally);
        Ok(stats)
    })
}

/// What completed since the last send.
struct Batch {
    items: Vec<Captured>,
    bytes: usize,
    tx: mpsc::SyncSender<Vec<Captured>>,
}

impl Batch {
    /// Hand the batch on (nothing to send is a success); false when the caller stopped.
    fn send(&mut self) -> bool {
        if self.items.is_empty() {
            return true;
        }
        self.bytes = 0;
        // Room for as many as the last batch held: growing a vector of frames copies them.
        let room = self.items.len().max(16);
        self.tx.send(std::mem::replace(&mut self.items, Vec::with_capacity(room))).is_ok()
    }
}

impl Deliver for Batch {
    fn deliver(&mut self, c: Captured) -> bool {
        if let Captured::Frame(f) = &c {
            self.bytes += f.bytes.len();
        }
        self.items.push(c);
        let full = self.items.len() >= BATCH_ITEMS || self.bytes >= BATCH_BYTES;
        !full || self.send()
    }

    fn waiting(&mut self) -> bool {
        self.send()
    }
}
