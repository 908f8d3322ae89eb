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
pub fn for_each_captured_ahead<R: Read + Send>(
    cat: &Catalogue,
    input: R,
    opts: &CaptureOptions,
    mut each: impl FnMut(Captured) -> bool,
) -> Result<CaptureStats, String> {
    let (tx, rx) = mpsc::sync_channel::<Vec<Captured>>(IN_FLIGHT);
    std::thread::scope(|scope| {
        let reading = scope.spawn(move || {
            let mut stats = CaptureStats::default();
            let mut batch = Batch {
                items: Vec::new(),
                bytes: 0,
                tx,
            };
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
        let mut stats = reading
            .join()
            .map_err(|_| "the capture's reading thread failed".to_string())??;
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
        self.tx
            .send(std::mem::replace(&mut self.items, Vec::with_capacity(room)))
            .is_ok()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::for_each_captured;

    fn sample() -> Vec<u8> {
        std::fs::read("samples/captures/confluent-kafka.pcap").expect("the shipped capture")
    }

    /// What each frame and note is, in order: the serial reading's sequence.
    fn sequence(
        read: impl FnOnce(&mut dyn FnMut(Captured) -> bool) -> Result<CaptureStats, String>,
    ) -> (Vec<String>, CaptureStats) {
        let mut seen = Vec::new();
        let stats = read(&mut |c| {
            seen.push(match c {
                Captured::Frame(f) => format!(
                    "frame {} conn {} corr {:?} {} bytes",
                    f.index,
                    f.conn,
                    f.correlation_id,
                    f.bytes.len()
                ),
                Captured::Skipped(s) => format!("skipped {} at {}", s.bytes, s.offset),
                Captured::Tls(n) => format!("tls conn {}", n.conn),
                Captured::Conn(e) => format!("{} conn {}", e.kind.flag(), e.conn),
            });
            true
        })
        .unwrap();
        (seen, stats)
    }

    #[test]
    fn hands_on_what_the_serial_reading_does_in_the_same_order() {
        let cat = Catalogue::builtin();
        let bytes = sample();
        let opts = CaptureOptions::default();
        let (serial, s1) = sequence(|each| for_each_captured(cat, &bytes[..], &opts, each));
        let (ahead, s2) = sequence(|each| for_each_captured_ahead(cat, &bytes[..], &opts, each));
        assert!(serial.len() > 100, "{} items", serial.len());
        assert_eq!(serial, ahead);
        assert_eq!(
            (
                s1.packets,
                s1.tcp_segments,
                s1.frames,
                s1.connections,
                s1.skips
            ),
            (
                s2.packets,
                s2.tcp_segments,
                s2.frames,
                s2.connections,
                s2.skips
            )
        );
    }

    #[test]
    fn stops_when_each_says_so() {
        let cat = Catalogue::builtin();
        let bytes = sample();
        let mut taken = 0;
        let stats = for_each_captured_ahead(cat, &bytes[..], &CaptureOptions::default(), |_| {
            taken += 1;
            taken < 3
        })
        .unwrap();
        assert_eq!(taken, 3);
        assert!(
            stats.frames <= 3,
            "{} frames counted as handed on",
            stats.frames
        );
    }

    #[test]
    fn a_file_that_is_no_capture_is_an_error() {
        let cat = Catalogue::builtin();
        let err = for_each_captured_ahead(
            cat,
            &b"not a capture at all"[..],
            &CaptureOptions::default(),
            |_| true,
        )
        .unwrap_err();
        assert!(err.contains("not a pcap"), "{err}");
    }

    /// Bytes that arrive in pieces, each when the test sends it (a live stream).
    struct Arriving {
        pieces: mpsc::Receiver<Vec<u8>>,
        at: std::io::Cursor<Vec<u8>>,
    }

    impl Read for Arriving {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            loop {
                let n = self.at.read(buf)?;
                if n > 0 {
                    return Ok(n);
                }
                match self.pieces.recv() {
                    Ok(piece) => self.at = std::io::Cursor::new(piece),
                    Err(_) => return Ok(0),
                }
            }
        }
    }

    /// Frames of a stream are handed on when the bytes run out, not when a
    /// batch fills: the first half's frames come before the second half is sent.
    #[test]
    fn a_stream_s_frames_come_before_more_bytes_arrive() {
        let cat = Catalogue::builtin();
        let bytes = sample();
        let (send, pieces) = mpsc::channel();
        let (half, rest) = bytes.split_at(bytes.len() / 2);
        send.send(half.to_vec()).unwrap();
        let (first_frame, seen_first) = mpsc::channel();
        let rest = rest.to_vec();
        let feeder = std::thread::spawn(move || {
            // Had the first frames been held back until more bytes came, none would arrive.
            let in_time = seen_first
                .recv_timeout(std::time::Duration::from_secs(10))
                .is_ok();
            send.send(rest).unwrap();
            in_time
        });
        let mut frames = 0;
        let stats = for_each_captured_ahead(
            cat,
            Arriving {
                pieces,
                at: Default::default(),
            },
            &CaptureOptions::default(),
            |c| {
                if matches!(c, Captured::Frame(_)) {
                    frames += 1;
                    let _ = first_frame.send(());
                }
                true
            },
        )
        .unwrap();
        assert!(
            feeder.join().unwrap(),
            "no frame was handed on before the rest of the stream arrived"
        );
        assert_eq!(frames, stats.frames);
        assert!(frames > 50, "{frames} frames");
    }
}
