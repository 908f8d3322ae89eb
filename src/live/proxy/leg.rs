//! One side of a connection on the proxy's event loop, as plaintext: a
//! non-blocking socket, with rustls on it when that side speaks TLS. The
//! loop reads and writes plaintext whichever it is; TLS records (the
//! handshake, data, alerts) go out as the socket takes them.

use mio::net::TcpStream;
use std::io::{ErrorKind, Read, Write};
use std::net::Shutdown;

pub(super) struct Leg {
    pub sock: TcpStream,
    tls: Option<Box<rustls::Connection>>,
    /// No more plaintext comes: the write side shuts once what waits is sent
    /// (with TLS: once the handshake has carried what was written before it,
    /// and a close_notify).
    ending: bool,
    close_sent: bool,
    shut: bool,
    /// A TLS read took bytes from the socket since last asked: the session
    /// may have moved on (a handshake that ended lets written plaintext go).
    took: bool,
}

/// One read from `from` into `buf`: `Ok(None)` when nothing is there now.
fn read_some(from: &mut impl Read, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
    loop {
        match from.read(buf) {
            Ok(n) => return Ok(Some(n)),
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Send the TLS records waiting, as far as the socket takes them.
fn send_records(tls: &mut rustls::Connection, sock: &mut TcpStream) -> std::io::Result<()> {
    while tls.wants_write() {
        match tls.write_tls(sock) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

impl Leg {
    pub fn plain(sock: TcpStream) -> Leg {
        Leg {
            sock,
            tls: None,
            ending: false,
            close_sent: false,
            shut: false,
            took: false,
        }
    }

    /// Speak TLS from now on (a client's hello goes out at the next flush).
    pub(crate) fn start_tls(&mut self, conn: rustls::Connection) {
        self.tls = Some(Box::new(conn));
    }

    /// Plaintext into `buf`: `Ok(Some(0))` at the end of the stream,
    /// `Ok(None)` when none is there now.
    pub fn read(&mut self, buf: &mut [u8]) -> std::io::Result<Option<usize>> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return read_some(&mut self.sock, buf);
        };
        loop {
            match tls.reader().read(buf) {
                // 0 after the peer's close_notify.
                Ok(n) => return Ok(Some(n)),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                // The socket ended without a close_notify: an end all the same.
                Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Ok(Some(0)),
                Err(e) => return Err(e),
            }
            match tls.read_tls(&mut self.sock) {
                Ok(0) => {
                    // Marks the end, which the reader says next.
                    let _ = tls.process_new_packets();
                    return Ok(Some(0));
                }
                Ok(_) => {
                    self.took = true;
                    let closed =
                        rustls::Error::AlertReceived(rustls::AlertDescription::CloseNotify);
                    match tls.process_new_packets() {
                        // A peer that gave up before the handshake ended: an end, not trouble.
                        Err(e) if e == closed => return Ok(Some(0)),
                        Err(e) => {
                            crate::stderr_line!("kwire: proxy: TLS: {e}");
                            // The alert that says why, if the socket takes it.
                            let _ = send_records(tls, &mut self.sock);
                            return Err(std::io::Error::other(e));
                        }
                        Ok(_) => {}
                    }
                    // The handshake's answers go out as they are made.
                    send_records(tls, &mut self.sock)?;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Write what of `data` the leg takes now (`WouldBlock` when none).
    pub fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let Some(tls) = self.tls.as_deref_mut() else {
            return self.sock.write(data);
        };
        // Records still waiting for the socket go first.
        send_records(tls, &mut self.sock)?;
        if tls.wants_write() {
            return Err(ErrorKind::WouldBlock.into());
        }
        let n = tls.writer().write(data)?;
        if n == 0 && !data.is_empty() {
            // rustls holds as much plaintext as it will until the handshake ends.
            return Err(ErrorKind::WouldBlock.into());
        }
        send_records(tls, &mut self.sock)?;
        Ok(n)
    }

    /// Send what waits (TLS records), and shut the write side once the
    /// plaintext has ended and all of it is sent.
    pub fn flush(&mut self) -> std::io::Result<()> {
        if let Some(tls) = self.tls.as_deref_mut() {
            send_records(tls, &mut self.sock)?;
            if tls.wants_write() || !self.ending {
                return Ok(());
            }
            // Plaintext written during the handshake goes out when it ends:
            // shutting before would lose it.
            if tls.is_handshaking() {
                return Ok(());
            }
            if !self.close_sent {
                self.close_sent = true;
                tls.send_close_notify();
                send_records(tls, &mut self.sock)?;
                if tls.wants_write() {
                    return Ok(());
                }
            }
        }
        if self.ending && !self.shut {
            self.shut = true;
            let _ = self.sock.shutdown(Shutdown::Write);
        }
        Ok(())
    }

    /// No more plaintext will be written: the write side shuts when all is
    /// sent, after a close_notify with TLS ([`Self::flush`]).
    pub(crate) fn end_writing(&mut self) {
        if !self.ending {
            self.ending = true;
            let _ = self.flush();
        }
    }

    /// Whether the write side has shut, all that was written sent.
    pub(crate) fn write_done(&self) -> bool {
        self.shut
    }

    /// Whether a TLS read took bytes from the socket since last asked.
    pub(crate) fn took_bytes(&mut self) -> bool {
        std::mem::take(&mut self.took)
    }

    pub fn shutdown(&self) {
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}
