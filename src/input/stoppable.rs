//! A reader that can be told to stop while its source has nothing to give.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// Bytes read from the source at a time, and chunks waiting at most: the
/// reading thread stays at most 256 KiB ahead.
const CHUNK: usize = 64 << 10;
const CHUNKS_WAITING: usize = 4;

/// How often a waiting read looks at the stop flag: a quit is felt within it.
const STOP_POLL: Duration = Duration::from_millis(50);

/// A reader whose reads end as at the end of the input once `stop` is set,
/// even while its source blocks (standard input left open, a pipe nobody
/// writes): the source is read on a thread of its own, which is left
/// blocked when the reader stops and ends with the process.
pub(crate) struct Stoppable {
    chunks: Receiver<io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    at: usize,
    stop: Arc<AtomicBool>,
}

/// `source` read on its own thread, stopped by `stop`.
pub(crate) fn stoppable(mut source: Box<dyn Read + Send>, stop: Arc<AtomicBool>) -> Stoppable {
    let (tx, chunks) = sync_channel(CHUNKS_WAITING);
    std::thread::spawn(move || {
        let mut buf = vec![0u8; CHUNK];
        loop {
            let chunk = match source.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            let failed = chunk.is_err();
            if tx.send(chunk).is_err() || failed {
                return;
            }
        }
    });
    Stoppable {
        chunks,
        pending: Vec::new(),
        at: 0,
        stop,
    }
}

impl Read for Stoppable {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.stop.load(Ordering::Relaxed) {
                return Ok(0);
            }
            if self.at < self.pending.len() {
                let n = buf.len().min(self.pending.len() - self.at);
                buf[..n].copy_from_slice(&self.pending[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            match self.chunks.recv_timeout(STOP_POLL) {
                Ok(chunk) => (self.pending, self.at) = (chunk?, 0),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(0),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn reads_everything_then_ends() {
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let stop = Arc::new(AtomicBool::new(false));
        let mut r = stoppable(Box::new(io::Cursor::new(data.clone())), stop);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
    }

    /// A source that never answers, like standard input left open.
    struct Silent;
    impl Read for Silent {
        fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
            std::thread::sleep(Duration::from_secs(3600));
            Ok(0)
        }
    }

    #[test]
    fn a_stop_ends_a_read_that_waits_on_a_silent_source() {
        let stop = Arc::new(AtomicBool::new(false));
        let mut r = stoppable(Box::new(Silent), stop.clone());
        let setter = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            stop.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        assert_eq!(r.read(&mut [0u8; 16]).unwrap(), 0);
        assert!(started.elapsed() < Duration::from_secs(2));
        setter.join().unwrap();
    }
}
