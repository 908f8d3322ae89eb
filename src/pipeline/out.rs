//! The capture pipeline's output: large buffered writes, and workers'
//! outputs handed over whole in vectored writes.

use std::io::Write;

/// Output buffer: lines go out in large writes, never one by one (a terminal
/// still gets each frame as it is decoded).
const OUT_BUFFER: usize = 1 << 20;

/// An output behind a large buffer; to a terminal, flushed after every frame.
pub(super) struct Out<W: Write> {
    w: std::io::BufWriter<W>,
    /// Write out at the end of each frame (a terminal, or a streamed input).
    terminal: bool,
    /// Workers' outputs waiting to go out together in one vectored write,
    /// after what `w` holds: copying them into `w` first was the writing
    /// thread's main work.
    owned: Vec<Vec<u8>>,
    owned_len: usize,
    /// The last of `owned` gathers small outputs (copied in): a small output
    /// written through `w` sent what was waiting first, a system call or two
    /// a frame when large and small frames alternate (requests and responses).
    gathering: bool,
}

/// Outputs shorter than this are copied together instead of being buffers of their own.
const OWNED_MIN: usize = 4 << 10;
/// Buffers in one vectored write (within every system's `IOV_MAX`).
const OWNED_MAX: usize = 512;
/// What a buffer that gathers small outputs holds at most.
const GATHER: usize = 64 << 10;

impl<W: Write> Out<W> {
    pub(super) fn new(inner: W, terminal: bool) -> Out<W> {
        Out {
            w: std::io::BufWriter::with_capacity(OUT_BUFFER, inner),
            terminal,
            owned: Vec::new(),
            owned_len: 0,
            gathering: false,
        }
    }

    /// A worker's output: written without copying when it is large.
    pub(super) fn write_owned(&mut self, out: Vec<u8>) -> std::io::Result<()> {
        if self.terminal {
            // Out now, after what the buffer holds, without a copy into it.
            self.flush_all()?;
            return self.w.get_mut().write_all(&out);
        }
        if self.owned.is_empty() {
            // What the buffer holds goes out first.
            self.w.flush()?;
        }
        self.owned_len += out.len();
        match self.owned.last_mut() {
            Some(last)
                if out.len() < OWNED_MIN && self.gathering && last.len() + out.len() <= GATHER =>
            {
                last.extend_from_slice(&out)
            }
            // The output itself gathers those after it (growing as they come).
            _ if out.len() < OWNED_MIN => {
                self.owned.push(out);
                self.gathering = true;
            }
            _ => {
                self.owned.push(out);
                self.gathering = false;
            }
        }
        if self.owned_len >= OUT_BUFFER || self.owned.len() >= OWNED_MAX {
            self.send_owned()?;
        }
        Ok(())
    }

    fn send_owned(&mut self) -> std::io::Result<()> {
        if self.owned.is_empty() {
            return Ok(());
        }
        let sent = write_all_vectored(self.w.get_mut(), &self.owned);
        // After an error nothing is sent again: the writing stops with it.
        self.owned.clear();
        (self.owned_len, self.gathering) = (0, false);
        sent
    }

    /// Everything written so far, out now.
    pub(super) fn flush_all(&mut self) -> std::io::Result<()> {
        self.send_owned()?;
        self.w.flush()
    }
}

/// `bufs` written whole, in vectored writes (retried when interrupted).
fn write_all_vectored(w: &mut impl Write, bufs: &[Vec<u8>]) -> std::io::Result<()> {
    let mut slices: Vec<std::io::IoSlice<'_>> =
        bufs.iter().map(|b| std::io::IoSlice::new(b)).collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match w.write_vectored(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl<W: Write> Write for Out<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.send_owned()?;
        self.w.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.send_owned()?;
        self.w.write_all(buf)
    }
    /// Only at the end of a frame, and only to a terminal (`write_frames` flushes after each call).
    fn flush(&mut self) -> std::io::Result<()> {
        if self.terminal {
            self.flush_all()
        } else {
            Ok(())
        }
    }
}
