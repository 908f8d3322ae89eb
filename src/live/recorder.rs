//! What passes through the proxy, recorded off the forwarding path: the
//! pumps hand copies of the bytes to one recorder thread, which turns them
//! into synthesized TCP packets (see [`super::synth`]) for a pcapng file and
//! for the capture pipeline that prints them. [`pipe`] carries that pcapng
//! (and an interface's, [`super::interface`]) to the pipeline in process.

use super::synth::{PcapngWriter, TcpFlow};
use bytes::Bytes;
use std::collections::HashMap;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::time::{SystemTime, UNIX_EPOCH};

/// Events the recorder can hold before the pumps wait for it: a bound on
/// what recording may queue (each event is one read's bytes, at most 64 KiB).
const QUEUE: usize = 4096;

/// How long the recorder lets events gather once one wakes it. Waking a
/// thread for every read (and the printer after it) takes the cores the
/// forwarding needs, which round trips through the proxy then wait for;
/// gathered, the pumps hand events on without waking anyone, and the
/// recorder and printer wake about once per interval under load.
const GATHER: std::time::Duration = std::time::Duration::from_millis(1);

/// What happened on a recorded connection.
#[derive(Debug)]
pub enum Event {
    Open {
        client: SocketAddr,
        server: SocketAddr,
    },
    Data {
        from_client: bool,
        bytes: Bytes,
    },
    /// Data with a comment on its first packet: what the proxy did to it on
    /// purpose (`--inject`), shown beside the frame by kwire and Wireshark.
    Commented {
        from_client: bool,
        bytes: Bytes,
        comment: String,
    },
    /// The connection ended; `by_client` says which side ended it first.
    Close {
        by_client: bool,
    },
}

struct Timed {
    micros: u64,
    conn: u64,
    event: Option<Event>,
}

/// A handle the pumps record through; cheap to clone.
#[derive(Clone)]
pub struct Recorder {
    tx: SyncSender<Timed>,
}

pub(crate) fn now_micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Recorder {
    pub fn record(&self, conn: u64, event: Event) {
        // A recorder that has stopped (shutting down) records nothing more.
        let _ = self.tx.send(Timed {
            micros: now_micros(),
            conn,
            event: Some(event),
        });
    }

    /// Flush every sink and stop: the pipeline sees the end of its input.
    pub fn shutdown(&self) {
        let _ = self.tx.send(Timed {
            micros: now_micros(),
            conn: 0,
            event: None,
        });
    }
}

/// Where the packets go: pcapng writers (a file, the capture pipeline).
pub type Sink = PcapngWriter<Box<dyn Write + Send>>;

/// Start the recorder thread writing to `sinks`; it ends at [`Recorder::shutdown`]
/// or when every handle is dropped, having flushed and closed its sinks.
pub fn spawn(sinks: Vec<Sink>) -> (Recorder, std::thread::JoinHandle<io::Result<()>>) {
    let (tx, rx) = sync_channel(QUEUE);
    let handle = std::thread::Builder::new()
        .name("kwire-recorder".into())
        .spawn(move || run(rx, sinks))
        .expect("the recorder thread starts");
    (Recorder { tx }, handle)
}

fn run(rx: Receiver<Timed>, mut sinks: Vec<Sink>) -> io::Result<()> {
    let mut flows: HashMap<u64, TcpFlow> = HashMap::new();
    let mut result = Ok(());
    'events: loop {
        let Ok(mut t) = rx.recv() else { break };
        if t.event.is_some() {
            std::thread::sleep(GATHER);
        }
        loop {
            let Some(event) = t.event.take() else {
                break 'events;
            };
            let mut comment = None;
            let packets = match event {
                Event::Open { client, server } => {
                    let flow = TcpFlow::new(client, server);
                    let p = flow.open();
                    flows.insert(t.conn, flow);
                    p
                }
                Event::Data { from_client, bytes } => match flows.get_mut(&t.conn) {
                    Some(f) => f.data(from_client, &bytes),
                    None => Vec::new(),
                },
                Event::Commented {
                    from_client,
                    bytes,
                    comment: text,
                } => match flows.get_mut(&t.conn) {
                    Some(f) => {
                        comment = Some(text);
                        f.data(from_client, &bytes)
                    }
                    None => Vec::new(),
                },
                Event::Close { by_client } => flows
                    .remove(&t.conn)
                    .map(|mut f| f.close(by_client))
                    .unwrap_or_default(),
            };
            for s in &mut sinks {
                for (i, p) in packets.iter().enumerate() {
                    let written = match (&comment, i) {
                        (Some(text), 0) => s.packet_commented(t.micros, p, text),
                        _ => s.packet(t.micros, p),
                    };
                    if let Err(e) = written {
                        result = Err(e);
                    }
                }
            }
            // Write out when nothing more waits, so a burst becomes one write.
            match rx.try_recv() {
                Ok(next) => t = next,
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => break 'events,
            }
        }
        for s in &mut sinks {
            let _ = s.flush();
        }
    }
    for s in &mut sinks {
        if let Err(e) = s.flush() {
            result = Err(e);
        }
    }
    drop(sinks);
    result
}

/// The sinks of live traffic: a pcapng file when asked for (`--write-pcap`),
/// and the pipe the capture pipeline reads (returned), both of `link_type`.
pub fn sinks(write_pcap: Option<&str>, link_type: u32) -> Result<(Vec<Sink>, PipeReader), String> {
    let mut sinks: Vec<Sink> = Vec::new();
    if let Some(path) = write_pcap {
        let file = std::fs::File::create(path).map_err(|e| format!("{path}: {e}"))?;
        sinks.push(
            PcapngWriter::new(
                Box::new(std::io::BufWriter::new(file)) as Box<dyn Write + Send>,
                link_type,
            )
            .map_err(|e| format!("{path}: {e}"))?,
        );
    }
    let (pipe_in, pipe_out) = pipe();
    sinks.push(
        PcapngWriter::new(Box::new(pipe_in) as Box<dyn Write + Send>, link_type)
            .map_err(|e| e.to_string())?,
    );
    Ok((sinks, pipe_out))
}

/// An in-process pipe: bytes written (and flushed) on one side are read on
/// the other, in order; the reader sees the end when the writer is dropped.
pub fn pipe() -> (PipeWriter, PipeReader) {
    let (tx, rx) = sync_channel(QUEUE);
    (
        PipeWriter {
            tx,
            buf: Vec::new(),
        },
        PipeReader {
            rx,
            chunk: Vec::new(),
            pos: 0,
        },
    )
}

pub struct PipeWriter {
    tx: SyncSender<Vec<u8>>,
    buf: Vec<u8>,
}

impl Write for PipeWriter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        // The next chunk gets as much room as this one took, instead of growing to it again.
        let room = self.buf.len();
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(room));
        self.tx
            .send(chunk)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the capture pipeline stopped"))
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

pub struct PipeReader {
    rx: Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl io::Read for PipeReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.chunk.len() {
            match self.rx.recv() {
                Ok(c) => {
                    self.chunk = c;
                    self.pos = 0;
                }
                Err(_) => return Ok(0),
            }
        }
        let n = out.len().min(self.chunk.len() - self.pos);
        out[..n].copy_from_slice(&self.chunk[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn a_recorded_conversation_reads_back_as_a_capture() {
        let (w, mut r) = pipe();
        let sink = PcapngWriter::new(
            Box::new(w) as Box<dyn Write + Send>,
            crate::live::synth::LINKTYPE_RAW,
        )
        .unwrap();
        let (rec, handle) = spawn(vec![sink]);
        let (client, server) = (
            "127.0.0.1:40000".parse().unwrap(),
            "127.0.0.1:9092".parse().unwrap(),
        );
        rec.record(1, Event::Open { client, server });
        rec.record(
            1,
            Event::Data {
                from_client: true,
                bytes: Bytes::from_static(b"hello"),
            },
        );
        rec.record(1, Event::Close { by_client: true });
        rec.shutdown();
        handle.join().unwrap().unwrap();
        let mut all = Vec::new();
        r.read_to_end(&mut all).unwrap();
        let mut reader = crate::capture::pcap::Reader::new(&all[..]).unwrap();
        let mut payloads = Vec::new();
        while let Some(p) = reader.read_packet().unwrap() {
            let seg =
                crate::capture::link::tcp_segment(p.link_type, p.data).expect("a TCP segment");
            payloads.push(seg.payload.to_vec());
        }
        assert_eq!(payloads.len(), 3 + 1 + 2);
        assert_eq!(payloads[3], b"hello");
    }
}
