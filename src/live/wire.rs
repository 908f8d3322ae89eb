//! Talking to a broker directly: connecting within a time limit, and
//! size-prefixed frames in and out, each read bounded by a maximum size.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Connect to `addr` (HOST:PORT), trying each address it resolves to within `timeout`.
pub fn connect(addr: &str, timeout: Duration) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("{addr}: {e}"))?
        .collect();
    let mut last = format!("{addr}: resolves to no address");
    for a in addrs {
        match TcpStream::connect_timeout(&a, timeout) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Err(e) => last = format!("{addr} ({a}): {e}"),
        }
    }
    Err(last)
}

/// Write one frame (its size prefix included).
pub fn write_frame(s: &mut TcpStream, frame: &[u8]) -> Result<(), String> {
    s.write_all(frame)
        .and_then(|_| s.flush())
        .map_err(|e| format!("sending: {e}"))
}

/// Read one frame (size prefix included) of at most `max` bytes, within the stream's read timeout.
pub fn read_frame(s: &mut TcpStream, max: usize) -> Result<Vec<u8>, String> {
    let mut size = [0u8; 4];
    s.read_exact(&mut size)
        .map_err(|e| read_error("a response's size", e))?;
    let n = i32::from_be_bytes(size);
    let n = usize::try_from(n).map_err(|_| format!("the broker sent a frame size of {n}"))?;
    if n.saturating_add(4) > max {
        return Err(format!(
            "the broker's frame declares {n} bytes, more than --max-frame ({max})"
        ));
    }
    let mut frame = Vec::with_capacity(4 + n);
    frame.extend_from_slice(&size);
    frame.resize(4 + n, 0);
    s.read_exact(&mut frame[4..])
        .map_err(|e| read_error("the rest of a response", e))?;
    Ok(frame)
}

fn read_error(what: &str, e: std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
            format!("no answer in time while reading {what}")
        }
        std::io::ErrorKind::UnexpectedEof => {
            format!("the broker closed the connection before {what}")
        }
        _ => format!("reading {what}: {e}"),
    }
}
