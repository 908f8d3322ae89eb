//! A capture's frame index, for the explorer: the capture is read once, on
//! its own thread, and each frame becomes a row (what `capture --list` says
//! of it, its latency and its pair) while its bytes go to a spool file; the
//! explorer decodes a frame from the spool only when it shows or searches it.
//!
//! A connection's open and close (SYN, FIN, RST) are rows of their own
//! ([`ConnRow`]), placed before the frame that came after them.
//!
//! Memory: the rows (184 bytes a frame in the explorer: neither the frame's
//! bytes nor its addresses, which are its connection's, kept once in the
//! spool's table), the names interned for them, and the requests awaiting
//! their response (bounded by [`MAX_PENDING`]). The spool holds the frames'
//! bytes on disk, in an unlinked temporary file that goes away with the
//! process.

use super::exchange::Topic;
use super::listing::{ListEntry, Lister};
use super::pending::Pending;
use crate::capture::{for_each_captured, CaptureOptions, CaptureStats, Captured, CapturedFrame};
use crate::decode::fields::TopicIds;
use crate::decode::{Direction, FrameKind};
use crate::schema::Catalogue;
use bytes::Bytes;

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::net::SocketAddr;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

pub use super::pending::MAX_PENDING;

/// Rows are handed on at least this often while the capture is read (and
/// every [`BATCH_ROWS`] rows), so the list grows as the file is read.
const BATCH_EVERY: Duration = Duration::from_millis(50);
const BATCH_ROWS: usize = 4096;

/// One frame of the capture.
#[derive(Clone, Debug)]
pub struct IndexedFrame {
    /// The frame as the capture layer gave it, without its bytes and addresses.
    pub frame: RowFrame,
    /// What the listing says of it.
    pub entry: ListEntry,
    /// Where its bytes are in the spool.
    pub spooled_at: u64,
    /// A response: the time since its request, and the request's row.
    pub latency_us: Option<u64>,
    /// The row of the frame it pairs with: a response's request; a request's
    /// response is set when the response comes ([`IndexEvent::Rows`]).
    pub pair: Option<usize>,
}

/// A captured frame as a row keeps it: without its bytes (in the spool) or
/// its addresses (its connection's, kept once in the spool's table), so that
/// a row of a capture of millions of frames stays small (80 bytes here, 192
/// for the captured frame; `tests/tui.rs` holds a row to 200 bytes).
#[derive(Clone, Debug)]
pub struct RowFrame {
    pub index: usize,
    pub timestamp: f64,
    pub conn: usize,
    pub kind: FrameKind,
    pub offset: u64,
    pub len: usize,
    pub correlation_id: Option<i32>,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub direction: Direction,
    pub after_gap: bool,
    /// A second answer under a correlation id: the frame it repeats (its
    /// number in 32 bits, for the row's size: beyond, the mark is left out).
    pub repeats: Option<u32>,
}

impl RowFrame {
    fn of(f: CapturedFrame) -> (RowFrame, Endpoints) {
        let at = Endpoints::of(&f);
        let row = RowFrame {
            index: f.index,
            timestamp: f.timestamp,
            conn: f.conn,
            kind: f.kind,
            offset: f.offset,
            len: f.len,
            correlation_id: f.correlation_id,
            api_key: f.api_key,
            api_version: f.api_version,
            direction: f.direction,
            after_gap: f.after_gap,
            repeats: f.repeats.and_then(|r| u32::try_from(r).ok()),
        };
        (row, at)
    }

    /// The captured frame again, between `at`'s addresses, holding `bytes`.
    fn captured(&self, at: Endpoints, bytes: Bytes) -> CapturedFrame {
        let (from, to) = match self.direction {
            Direction::Request => (at.client, at.broker),
            Direction::Response => (at.broker, at.client),
        };
        CapturedFrame {
            index: self.index,
            timestamp: self.timestamp,
            conn: self.conn,
            from,
            to,
            direction: self.direction,
            kind: self.kind.clone(),
            bytes,
            correlation_id: self.correlation_id,
            api_key: self.api_key,
            api_version: self.api_version,
            after_gap: self.after_gap,
            offset: self.offset,
            len: self.len,
            // The explorer's rows do not keep packet comments (16 bytes a row).
            comment: None,
            repeats: self.repeats.map(|r| r as usize),
        }
    }
}

/// A connection's client and broker addresses.
#[derive(Clone, Copy, Debug)]
struct Endpoints {
    client: SocketAddr,
    broker: SocketAddr,
}

impl Endpoints {
    fn of(f: &CapturedFrame) -> Self {
        let (client, broker) = match f.direction {
            Direction::Request => (f.from, f.to),
            Direction::Response => (f.to, f.from),
        };
        Endpoints { client, broker }
    }
}

impl Default for Endpoints {
    fn default() -> Self {
        let none = SocketAddr::from(([0, 0, 0, 0], 0));
        Endpoints {
            client: none,
            broker: none,
        }
    }
}

/// A connection opened or closed, shown in the list before frame row `before`
/// (the number the next frame gets: the rows so far when it happened).
#[derive(Clone, Debug)]
pub struct ConnRow {
    pub before: usize,
    pub event: crate::capture::ConnEvent,
}

/// What the index thread hands on, in order.
#[derive(Debug)]
pub enum IndexEvent {
    /// New rows, numbered on from the last; topics named for the first time
    /// (to extend the receiver's table: rows index it); the topic names tied
    /// to ids so far, for decoding.
    Rows {
        rows: Vec<IndexedFrame>,
        /// Connections opened and closed since the last rows.
        conns: Vec<ConnRow>,
        new_topics: Vec<Topic>,
        topic_ids: TopicIds,
    },
    /// A skip or TLS note's count went up.
    Notes {
        skipped: usize,
        skipped_bytes: u64,
        tls: usize,
    },
    /// What `kwire check` finds, found since the last such event: the
    /// frames' own findings and the conversation's (`analysis::check`, run
    /// over the same reading).
    Findings(Vec<super::finding::Finding>),
    /// The capture was read to its end (or stopped); its stats or error.
    Done(Result<CaptureStats, String>),
}

/// How far the index thread has read.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    pub read: Arc<AtomicU64>,
    /// The input's size when it is a file.
    pub total: Option<u64>,
    /// Set by the receiver to stop the thread (the user quit).
    pub stop: Arc<AtomicBool>,
}

/// The frames' bytes, written by the index thread and read by the explorer.
#[derive(Clone, Debug)]
pub struct Spool {
    file: Arc<File>,
    /// Each connection's addresses, by connection number (the rows keep none).
    endpoints: Arc<RwLock<Vec<Endpoints>>>,
}

/// The index thread's side of a [`Spool`]: the file it writes the frames'
/// bytes to, and the connections' addresses it records.
pub struct SpoolWriter {
    file: File,
    endpoints: Arc<RwLock<Vec<Endpoints>>>,
}

/// Connection `conn` is between `at`'s addresses (its first frame says).
fn record_endpoints(table: &RwLock<Vec<Endpoints>>, conn: usize, at: Endpoints) {
    let mut table = table.write().unwrap_or_else(|e| e.into_inner());
    if table.len() <= conn {
        table.resize(conn + 1, Endpoints::default());
    }
    table[conn] = at;
}

impl Spool {
    /// A new spool: a temporary file, unlinked at once (it lives as long as its handles).
    pub fn create() -> std::io::Result<(Spool, SpoolWriter)> {
        let dir = std::env::temp_dir();
        for attempt in 0..100u32 {
            let path = dir.join(format!("kwire-spool-{}-{attempt}", std::process::id()));
            match std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(f) => {
                    let _ = std::fs::remove_file(&path);
                    let endpoints = Arc::new(RwLock::new(Vec::new()));
                    let writer = SpoolWriter {
                        file: f.try_clone()?,
                        endpoints: endpoints.clone(),
                    };
                    let spool = Spool {
                        file: Arc::new(f),
                        endpoints,
                    };
                    return Ok((spool, writer));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other(
            "no spool file name free in the temporary directory",
        ))
    }

    /// `len` bytes from `at`.
    pub fn read(&self, at: u64, len: usize) -> std::io::Result<Bytes> {
        let mut buf = vec![0; len];
        self.file.read_exact_at(&mut buf, at)?;
        Ok(Bytes::from(buf))
    }

    /// The frame of a row, bytes and all.
    pub fn frame(&self, row: &IndexedFrame) -> std::io::Result<CapturedFrame> {
        let bytes = self.read(row.spooled_at, row.frame.len)?;
        Ok(row.frame.captured(self.endpoints_of(row.frame.conn), bytes))
    }

    /// The frame of a row without its bytes, for its list line.
    pub fn listed(&self, row: &IndexedFrame) -> CapturedFrame {
        row.frame
            .captured(self.endpoints_of(row.frame.conn), Bytes::new())
    }

    fn endpoints_of(&self, conn: usize) -> Endpoints {
        let table = self.endpoints.read().unwrap_or_else(|e| e.into_inner());
        table.get(conn).copied().unwrap_or_default()
    }
}

/// Counts what is read.
struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// How the index thread reads a capture: with which definitions (the
/// release pinned, if one is), whether it names an unpaired response's API
/// by a guess (`--guess`), and how it takes packets apart.
pub struct IndexReading<'a> {
    pub cat: &'a Catalogue,
    pub release: Option<&'a str>,
    pub guess: bool,
    pub opts: &'a CaptureOptions,
}

/// Index `input` (a pcap or pcapng stream) into rows sent on `tx`, spooling
/// each frame's bytes to `spool`; until the input ends, `progress.stop` is
/// set, or the receiver is gone. Run it on its own thread.
pub fn index_capture(
    reading: IndexReading,
    input: impl Read,
    spool: SpoolWriter,
    progress: &Progress,
    tx: &Sender<IndexEvent>,
) {
    let IndexReading {
        cat,
        release,
        guess,
        opts,
    } = reading;
    yield_to_the_screen();
    let mut lister = Lister::new(cat, release, guess).with_topics();
    let mut learner = super::exchange::TopicIdLearner::new(cat, release);
    // Every finding `kwire check` would give, the frames' own with the
    // conversation's: the explorer's `!` list and `finding` filter read them.
    let mut checker = super::check::Checker::new(
        cat,
        crate::decode::DecodeOptions {
            release: release.map(str::to_string),
            ..Default::default()
        },
    );
    let mut found = Vec::new();
    let SpoolWriter { file, endpoints } = spool;
    let mut recorded: Vec<bool> = Vec::new();
    let mut spool = BufWriter::with_capacity(1 << 20, file);
    let mut spooled: u64 = 0;
    let mut pending = Pending::default();
    let mut rows = Vec::new();
    let mut conns = Vec::new();
    let mut topics_sent = 0;
    let mut next_row = 0usize;
    let (mut skipped, mut skipped_bytes, mut tls) = (0usize, 0u64, 0usize);
    let mut notes_changed = false;
    let mut last_sent = Instant::now();
    let mut failed = None;
    let input = Counting {
        inner: input,
        read: progress.read.clone(),
    };
    // Rows go out once their bytes are in the spool: `Err(Some(why))` when the
    // spool cannot be written, `Err(None)` when the explorer is gone.
    let send = |(rows, conns): (&mut Vec<IndexedFrame>, &mut Vec<ConnRow>),
                lister: &Lister<'_>,
                learner: &super::exchange::TopicIdLearner<'_>,
                spool: &mut BufWriter<File>,
                topics_sent: &mut usize|
     -> Result<(), Option<String>> {
        spool.flush().map_err(|e| Some(format!("spool: {e}")))?;
        let names = lister.names();
        let new_topics = (*topics_sent..names.topic_count())
            .filter_map(|i| names.topic(i as u32).cloned())
            .collect();
        *topics_sent = names.topic_count();
        tx.send(IndexEvent::Rows {
            rows: std::mem::take(rows),
            conns: std::mem::take(conns),
            new_topics,
            topic_ids: learner.topic_ids().clone(),
        })
        .map_err(|_| None)
    };
    let result = for_each_captured(cat, input, opts, |c| {
        if progress.stop.load(Ordering::Relaxed) {
            return false;
        }
        checker.take(&c, &mut found);
        match c {
            Captured::Frame(f) => {
                learner.push(&f);
                let entry = match f.kind.sasl_mechanism() {
                    Some(_) => ListEntry::default(),
                    None => lister.entry(&f).clone(),
                };
                if let Err(e) = spool.write_all(&f.bytes) {
                    failed = Some(format!("spool: {e}"));
                    return false;
                }
                let at = spooled;
                spooled += f.bytes.len() as u64;
                let row = next_row;
                next_row += 1;
                let paired = pending.on_frame(&f, row);
                let (latency_us, pair) =
                    (paired.map(|p| p.latency_us), paired.map(|p| p.request_row));
                // The row keeps neither bytes nor addresses: its connection's go in the table once.
                let (frame, between) = RowFrame::of(f);
                if !recorded.get(frame.conn).copied().unwrap_or(false) {
                    record_endpoints(&endpoints, frame.conn, between);
                    if recorded.len() <= frame.conn {
                        recorded.resize(frame.conn + 1, false);
                    }
                    recorded[frame.conn] = true;
                }
                rows.push(IndexedFrame {
                    frame,
                    entry,
                    spooled_at: at,
                    latency_us,
                    pair,
                });
            }
            Captured::Skipped(s) => {
                skipped += 1;
                skipped_bytes += s.bytes;
                notes_changed = true;
            }
            Captured::Tls(_) => {
                tls += 1;
                notes_changed = true;
            }
            Captured::Conn(e) => {
                conns.push(ConnRow {
                    before: next_row,
                    event: e,
                });
            }
        }
        // A stream (standard input, live traffic) may pause for good after
        // any frame: its rows go at once, not when the next frame comes.
        let streaming = progress.total.is_none();
        if streaming || rows.len() >= BATCH_ROWS || last_sent.elapsed() >= BATCH_EVERY {
            last_sent = Instant::now();
            if notes_changed
                && tx
                    .send(IndexEvent::Notes {
                        skipped,
                        skipped_bytes,
                        tls,
                    })
                    .is_err()
            {
                return false;
            }
            notes_changed = false;
            if !found.is_empty()
                && tx
                    .send(IndexEvent::Findings(std::mem::take(&mut found)))
                    .is_err()
            {
                return false;
            }
            if !rows.is_empty() || !conns.is_empty() {
                if let Err(why) = send(
                    (&mut rows, &mut conns),
                    &lister,
                    &learner,
                    &mut spool,
                    &mut topics_sent,
                ) {
                    failed = why;
                    return false;
                }
            }
        }
        true
    });
    let _ = tx.send(IndexEvent::Notes {
        skipped,
        skipped_bytes,
        tls,
    });
    if let Err(Some(why)) = send(
        (&mut rows, &mut conns),
        &lister,
        &learner,
        &mut spool,
        &mut topics_sent,
    ) {
        failed.get_or_insert(why);
    }
    checker.finish(&mut found);
    let _ = tx.send(IndexEvent::Findings(found));
    let _ = tx.send(IndexEvent::Done(match failed {
        Some(e) => Err(e),
        None => result,
    }));
}

/// Whether `filter` selects row `i` (`row` gives each row by number): it
/// decides on the row's exchange (the request and its response, joined by
/// [`IndexedFrame::pair`]), as [`super::filter`] says for `capture`;
/// `topics` is the table the rows' topics index, `passed` the field tests a
/// row's frame passes (by row number; asked only when the filter tests fields).
/// A request without its response is decided as it stands: the explorer
/// decides again when rows come.
pub fn selects<'r>(
    filter: &super::filter::Filter,
    row: impl Fn(usize) -> Option<&'r IndexedFrame>,
    i: usize,
    topics: &'r [Topic],
    passed: &dyn Fn(usize) -> super::expr::fields::Passed,
) -> bool {
    let Some(this) = row(i) else { return false };
    let other = this.pair.and_then(|j| row(j).map(|r| (j, r)));
    let (request, response) = match this.frame.direction {
        Direction::Request => (Some((i, this)), other),
        Direction::Response => (other, Some((i, this))),
    };
    let pair = RowPair {
        request,
        response,
        topics,
        passed,
    };
    filter.decide_on(&pair) == Some(true)
}

/// A request row and its response row, as a filter asks of an exchange.
struct RowPair<'r, 'p> {
    request: Option<(usize, &'r IndexedFrame)>,
    response: Option<(usize, &'r IndexedFrame)>,
    topics: &'r [Topic],
    passed: &'p dyn Fn(usize) -> super::expr::fields::Passed,
}

impl RowPair<'_, '_> {
    fn either(&self) -> &IndexedFrame {
        self.request
            .or(self.response)
            .map(|(_, r)| r)
            .expect("a pair has a row")
    }
}

impl super::filter::Subject for RowPair<'_, '_> {
    fn api(&self) -> Option<(i16, i16)> {
        [self.request, self.response]
            .into_iter()
            .flatten()
            .find_map(|(_, r)| r.entry.api_key.zip(r.entry.api_version))
    }
    fn conn(&self) -> usize {
        self.either().frame.conn
    }
    fn correlation_id(&self) -> Option<i32> {
        self.either().frame.correlation_id
    }
    fn client_id(&self) -> Option<Option<&[u8]>> {
        use super::listing::Summary;
        let (_, r) = self.request?;
        Some(match &r.entry.summary {
            Summary::Request { client_id } => client_id.as_deref().map(str::as_bytes),
            _ => None,
        })
    }
    fn any_topic(&self, test: &mut dyn FnMut(&Topic) -> bool) -> bool {
        [self.request, self.response]
            .into_iter()
            .flatten()
            .flat_map(|(_, r)| r.entry.topics.iter())
            .any(|&t| self.topics.get(t as usize).is_some_and(&mut *test))
    }
    fn errors(&self) -> Option<&[i16]> {
        use super::listing::Summary;
        Some(match self.response.map(|(_, r)| &r.entry.summary) {
            Some(Summary::Errors(c)) => c,
            _ => &[],
        })
    }
    fn latency(&self) -> super::filter::Latency {
        match self.response.and_then(|(_, r)| r.latency_us) {
            Some(us) => super::filter::Latency::Answered(us),
            None => super::filter::Latency::Unknown,
        }
    }
    fn frame(&self, side: super::filter::Side) -> super::filter::Frame {
        let at = match side {
            super::filter::Side::Request => self.request,
            super::filter::Side::Response => self.response,
        };
        match at {
            Some((i, r)) => super::filter::Frame::Here {
                index: r.frame.index,
                bytes: r.frame.len,
                passed: (self.passed)(i),
            },
            None => super::filter::Frame::Absent,
        }
    }
}

/// Lower this thread's scheduling priority (nice 10): when the index and the
/// explorer's drawing want the same core, a key's redraw goes first (with a
/// compiler on the other core, keys took up to 22 ms while indexing, against
/// 5 ms on a quiet machine). Linux keeps a nice value per thread; elsewhere
/// this does nothing.
fn yield_to_the_screen() {
    #[cfg(target_os = "linux")]
    // SAFETY: gettid and setpriority take plain integers and touch no memory of ours.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, 10);
    }
}
