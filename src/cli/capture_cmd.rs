//! `kwire capture FILE`: every Kafka frame in a pcap/pcapng, paired and decoded.

use super::exit;
use super::frame_args::{Format, OutputArgs};
use super::frames_out::{tree_options, write_frames};
use clap::Args;
use kwire::analysis::captured::decode_captured;
use kwire::analysis::in_order::{decoding_workers, InOrder};
use kwire::analysis::index::{index_capture, Progress, Spool};
use kwire::analysis::listing::{Lister, LIST_BODY_LIMIT};
use kwire::analysis::selection::{FrameFilter, Selection, TopicNames};
use kwire::analysis::Filter as ExchangeFilter;
use kwire::budget::Budget;
use kwire::capture::read_ahead::for_each_captured_ahead;
use kwire::capture::tls::TlsNote;
use kwire::capture::{
    for_each_captured, CaptureOptions, Captured, CapturedFrame, CutBodies, Skipped,
};
use kwire::decode::frame::DEFER_RECORDS_OVER;
use kwire::decode::topic_ids::TopicIds;
use kwire::decode::{DecodeOptions, Direction, Frame};
use kwire::live::frames_pcap::FramesPcap;
use kwire::render::digits::{push_socket_addr, push_uint};
use kwire::render::listing::{ConnPlace, LineWriter};
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use kwire::tui::app::CaptureState;
use kwire::tui::{App, Theme};
use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  kwire capture samples/captures/confluent-kafka.pcap --list\n  kwire capture samples/captures/confluent-kafka.pcap --api Fetch\n  kwire capture samples/captures/kafka-python.pcap --json --error\n  kwire capture samples/captures/lone-response.pcap --port 19092 --guess --list\n  sudo kwire capture -i lo --port 9092 --list                       # live, until Ctrl-C\n  sudo tcpdump -U -w - port 9092 | kwire capture - --format json   # each frame as it completes"
)]
pub struct CaptureArgs {
    /// pcap or pcapng file; `-` for standard input.
    #[arg(required_unless_present = "interface")]
    pub file: Option<String>,
    /// Capture live from this network interface (`lo`, `eth0`; `any` for
    /// all) instead of reading a file, printing each frame as it completes,
    /// until Ctrl-C. Needs root or CAP_NET_RAW; Linux only.
    #[arg(short = 'i', long = "interface", value_name = "IFACE", conflicts_with_all = ["file"])]
    pub interface: Option<String>,
    /// With -i: also write the packets captured to this pcapng file.
    #[arg(
        long,
        value_name = "FILE",
        requires = "interface",
        conflicts_with = "file"
    )]
    pub write_pcap: Option<String>,
    /// Also write the frames shown (those the selection keeps, or every
    /// frame) to this pcapng file, as TCP synthesized per connection, with
    /// credentials masked (`--show-secrets` writes them): a capture of only
    /// what matters, decrypted, that kwire and Wireshark read back.
    #[arg(long, value_name = "FILE", conflicts_with = "tui")]
    pub write_selected: Option<String>,
    /// One line per frame instead of decoded trees (a listing has one
    /// format: `--json` and `--format` are for decoded frames).
    #[arg(long, conflicts_with_all = ["json", "format", "full_docs"])]
    pub list: bool,
    /// Only frames with this correlation id.
    #[arg(long)]
    pub correlation_id: Option<i32>,
    // Only frames of exchanges that pass these: a request is shown once its
    // exchange is decided (with its response when that decides).
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
    /// Only the frame with this number (the first column of --list).
    #[arg(long)]
    pub frame: Option<usize>,
    /// The broker's port: the side sending to it carries requests (default:
    /// found by plausibility). With -i, only packets to or from it are captured.
    #[arg(long)]
    pub port: Option<u16>,
    /// Decode responses without a request in the capture by the best-ranked guess.
    #[arg(long)]
    pub guess: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    pub budget: super::frame_args::BudgetArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    /// Open the selected frames in the terminal explorer.
    #[arg(long, conflicts_with_all = ["list", "format", "json", "full_docs"])]
    pub tui: bool,
    /// Add where each frame came from (`"capture"`) to JSON objects; `kwire
    /// decode` of a capture leaves it out, so its output is the decoder's alone.
    #[arg(skip = true)]
    pub provenance: bool,
    /// The input is a stream (standard input, live traffic): each frame is
    /// written out as it completes, whatever the output is.
    #[arg(skip)]
    pub streaming: bool,
}

/// Output buffer: lines go out in large writes, never one by one (a terminal
/// still gets each frame as it is decoded).
const OUT_BUFFER: usize = 1 << 20;

/// Stdout behind a large buffer; to a terminal, flushed after every frame.
struct Out<'a> {
    w: std::io::BufWriter<std::io::StdoutLock<'a>>,
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

impl Out<'_> {
    fn new(lock: std::io::StdoutLock<'_>, terminal: bool) -> Out<'_> {
        Out {
            w: std::io::BufWriter::with_capacity(OUT_BUFFER, lock),
            terminal,
            owned: Vec::new(),
            owned_len: 0,
            gathering: false,
        }
    }

    /// A worker's output: written without copying when it is large.
    fn write_owned(&mut self, out: Vec<u8>) -> std::io::Result<()> {
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
    fn flush_all(&mut self) -> std::io::Result<()> {
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

impl Write for Out<'_> {
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

impl CaptureArgs {
    /// What is read, for messages: the file, `-`, or the interface.
    pub fn input_name(&self) -> String {
        match (&self.file, &self.interface) {
            (Some(f), _) => sanitize(f),
            (None, Some(i)) => format!("interface {}", sanitize(i)),
            (None, None) => "-".into(),
        }
    }

    /// Whether the input is standard input.
    fn is_stdin(&self) -> bool {
        self.file.as_deref() == Some("-")
    }
}

/// `kwire capture` on a file or standard input (`-i` is [`super::capture_live`]'s).
pub fn run(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs) -> i32 {
    let selection = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let source = match args.file.as_deref().unwrap_or("-") {
        "-" => Source::Stdin,
        path => Source::File(path),
    };
    run_selected(cat, release, args, selection, source)
}

/// Decode a capture already read (`kwire decode` hands pcaps over here).
pub fn run_on(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    api: Option<i16>,
    capture: Vec<u8>,
) -> i32 {
    run_selected(
        cat,
        release,
        args,
        ExchangeFilter::api(cat, api),
        Source::Memory(bytes::Bytes::from(capture)),
    )
}

/// A capture streamed from elsewhere in the process (the proxy's traffic),
/// read once as it comes.
pub fn run_on_stream(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    input: Box<dyn std::io::Read + Send>,
) -> i32 {
    let selection = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    run_selected(
        cat,
        release,
        args,
        selection,
        Source::Stream(RefCell::new(Some(input))),
    )
}

/// Where a capture is read from: standard input or a stream once, a file or
/// bytes in memory as often as needed.
enum Source<'a> {
    Stdin,
    File(&'a str),
    Memory(bytes::Bytes),
    Stream(RefCell<Option<Box<dyn std::io::Read + Send>>>),
}

impl Source<'_> {
    /// Whether a second reading gives the same bytes (not a pipe or a FIFO).
    fn rereadable(&self) -> bool {
        match self {
            Source::Stdin | Source::Stream(_) => false,
            Source::File(path) => super::is_regular_file(path),
            Source::Memory(_) => true,
        }
    }

    fn open(&self) -> Result<Box<dyn std::io::Read + Send>, i32> {
        match self {
            Source::Stdin => super::open_input("-"),
            Source::File(path) => super::open_input(path),
            Source::Memory(b) => Ok(Box::new(std::io::Cursor::new(b.clone()))),
            Source::Stream(s) => s.borrow_mut().take().ok_or(exit::FAILURE),
        }
    }
}

/// Tree views note each TopicId with its topic: a file (or bytes in memory)
/// is read a first time for the names when the first frame shown can hold a
/// topic id (opened again then: a file that changed in between gives what it
/// holds then), a stream learns them as it goes.
fn topic_names<'c>(
    cat: &'c Catalogue,
    release: Option<&str>,
    source: &'c Source<'_>,
    opts: &CaptureOptions,
    needed: bool,
) -> TopicNames<'c> {
    match (needed, source.rereadable()) {
        (false, _) => TopicNames::none(),
        (true, false) => TopicNames::as_they_come(cat, release),
        (true, true) => {
            TopicNames::read_when_needed(cat, release, move || source.open().ok(), opts)
        }
    }
}

fn run_selected(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    selection: ExchangeFilter,
    source: Source<'_>,
) -> i32 {
    let base = match args.tls.capture_options(args.port) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let reopen = || source.rereadable().then(|| source.open().ok()).flatten();
    let selection = match super::filter_args::with_findings(cat, release, selection, &base, reopen)
    {
        Ok(f) => f,
        Err(status) => return status,
    };
    let filter = FrameFilter {
        correlation_id: args.correlation_id,
        frame: args.frame,
        ..FrameFilter::of(&selection)
    };
    // Written from the frames handed on and the closes read (two closures).
    let selected_pcap = match open_selected_pcap(args, &source) {
        Ok(w) => RefCell::new(w),
        Err(status) => return status,
    };
    let mut selected_pcap_failed = None;
    let format = args.output.format();
    // Tree views note each TopicId with its topic; the listing, the grid and the JSON contract show no notes.
    // The capture explorer learns them as its index thread reads (a first
    // pass would delay its first screen by a whole reading of the file);
    // with --frame or --correlation-id it decodes its few frames first.
    let explorer_indexes = args.tui && filter.frame.is_none() && filter.correlation_id.is_none();
    let trees = (args.tui && !explorer_indexes)
        || (!args.tui && !args.list && matches!(format, Format::Tree | Format::TreeJson));
    let names = topic_names(cat, release, &source, &base, trees);
    let input = match source.open() {
        Ok(i) => i,
        Err(status) => return status,
    };
    if args.tui {
        return explore_capture(cat, release, args, &filter, input, &names, base);
    }
    let stdout = std::io::stdout();
    let terminal = stdout.is_terminal() || args.streaming || args.is_stdin();
    let mut out = Out::new(stdout.lock(), terminal);
    let mut status = exit::OK;
    let mut write_failed = false;
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut lines = LineWriter::new(cat).naming_connections();
    let mut listed = Lister::new(cat, release, args.guess);
    // Listings decode bodies only of small frames (for their error summary): the
    // bodies of larger ones are skipped as they arrive, never buffered.
    // (Not when the selection reads bodies: a cut frame keeps its header only.)
    let bodies_needed = filter.exchanges.as_ref().is_some_and(|x| {
        let n = x.needs();
        n.topics || n.errors || n.fields.is_some()
    });
    let cut_bodies =
        (args.list && !bodies_needed && selected_pcap.borrow().is_none()).then(|| CutBodies {
            above: LIST_BODY_LIMIT,
            release: release.map(str::to_string),
        });
    let opts = CaptureOptions { cut_bodies, ..base };
    let mut skipped = SkipTally::default();
    let list_color = super::color::stdout();
    // One budget for the whole capture: its frames are dropped as they are
    // written, so what they held goes back; what they decompressed does not.
    let whole_capture = DecodeOptions {
        budget: args.budget.budget(),
        ..Default::default()
    };
    let mut selected = Selection::new(cat, release, &filter);
    if args.list {
        selected = selected.listing(cat, LIST_BODY_LIMIT, release);
    }
    // `--list`: responses' latencies by frame number, from the pairing of
    // every frame (`take`), read when the response is listed (`handle`).
    let mut pending = kwire::analysis::pending::Pending::default();
    let latencies = std::cell::RefCell::new(std::collections::BTreeMap::new());
    // Frames of a file are decoded and drawn on worker threads, written out in
    // capture order; a stream's on this one, as each completes.
    let workers = if source.rereadable() && !args.list {
        decoding_workers()
    } else {
        0
    };
    let held = AtomicUsize::new(0);
    let work = |(f, mut opts): (CapturedFrame, DecodeOptions)| {
        if workers == 0 || held.load(Ordering::Relaxed) >= HELD_OUTPUT || drawn_later(&f, format) {
            // On this thread every frame is decoded in its turn; and so are
            // a worker's while the writing falls behind.
            return Written::InItsTurn(Box::new((f, opts)));
        }
        // The frame's bytes in a buffer of this worker's own: the nodes' slices
        // of them count references on it, not on the stream's buffer, whose
        // count every worker's slices would otherwise share (a cache line
        // passed between cores at each slice made or dropped).
        let f = CapturedFrame {
            bytes: bytes::Bytes::copy_from_slice(&f.bytes),
            ..f
        };
        // Ahead of its turn a frame may not spend the input's budget: one that
        // asks for any (compressed records) is decoded again in its turn.
        let probe = Budget::probe();
        // The input's budget is set aside, not cloned: its count is shared by every thread.
        let budget = std::mem::replace(&mut opts.budget, probe.clone());
        let decoded = decode_one(cat, release, &f, args.guess, opts.clone(), format);
        if probe.was_asked() {
            return Written::InItsTurn(Box::new((f, DecodeOptions { budget, ..opts })));
        }
        let stdout = decoded.drawn(&f, format, args.output.full_docs, args.provenance);
        held.fetch_add(stdout.len(), Ordering::Relaxed);
        Written::Done {
            findings: decoded.findings,
            stdout,
        }
    };
    // A frame decoded and written here, in its turn: streamed, not held.
    let write_here =
        |out: &mut Out<'_>, status: &mut i32, f: &CapturedFrame, opts: DecodeOptions| {
            if drawn_later(f, format) {
                return write_drawing(
                    out,
                    status,
                    (cat, release, args.guess),
                    f,
                    opts,
                    (&args.output, args.provenance),
                );
            }
            let decoded = decode_one(cat, release, f, args.guess, opts, format);
            decoded.findings.report(out, status);
            if format == Format::Tree && f.bytes.len() <= HELD_FRAME {
                // A small frame's tree is drawn into memory and handed over whole,
                // as a worker's is: drawing it through a second buffer copied every line.
                return out.write_owned(decoded.drawn(
                    f,
                    format,
                    args.output.full_docs,
                    args.provenance,
                ));
            }
            decoded
                .write(out, f, format, args.output.full_docs, args.provenance)
                .and_then(|_| out.flush())
        };
    let stats = InOrder::run(workers, &work, |pool| {
        let mut handle = |c| {
            let f = match c {
                Captured::Frame(f) => f,
                Captured::Skipped(s) => {
                    if filter.conn.is_some_and(|c| c != s.conn) {
                        return true;
                    }
                    skipped.count += 1;
                    skipped.bytes += s.bytes;
                    if filter.names_frames() {
                        return true;
                    }
                    if !pool.drain(&mut |w| pass_on(&mut out, &mut status, w, (&write_here, &held)))
                        || write_skipped(&mut out, &s, args.list.then_some(&mut lines), format)
                            .is_err()
                    {
                        write_failed = true;
                        return false;
                    }
                    return true;
                }
                Captured::Tls(n) => {
                    if filter.conn.is_some_and(|c| c != n.conn) || filter.names_frames() {
                        return true;
                    }
                    if !pool.drain(&mut |w| pass_on(&mut out, &mut status, w, (&write_here, &held)))
                        || write_tls(&mut out, &n, args.list.then_some(&mut lines), format).is_err()
                    {
                        write_failed = true;
                        return false;
                    }
                    return true;
                }
                // Opens and closes are rows of the listing; other formats show frames.
                Captured::Conn(e) => {
                    if !args.list
                        || filter.conn.is_some_and(|c| c != e.conn)
                        || filter.names_frames()
                    {
                        return true;
                    }
                    line.clear();
                    lines.push_conn_event(&mut line, &e);
                    line.push(b'\n');
                    fit_rows(&mut line);
                    if !pool.drain(&mut |w| pass_on(&mut out, &mut status, w, (&write_here, &held)))
                        || out.write_all(&line).and_then(|_| out.flush()).is_err()
                    {
                        write_failed = true;
                        return false;
                    }
                    return true;
                }
            };
            let failed =
                (selected_pcap.borrow_mut().as_mut()).and_then(|w| w.frame(cat, release, &f).err());
            if let Some(err) = failed {
                selected_pcap_failed = Some(err.to_string());
                *selected_pcap.borrow_mut() = None;
            }
            let res = if let (true, Some(mechanism)) = (args.list, f.kind.sasl_mechanism()) {
                line.clear();
                lines.push_token(&mut line, &f, mechanism);
                line.push(b'\n');
                fit_rows(&mut line);
                out.write_all(&line).and_then(|_| out.flush())
            } else if args.list {
                let entry = listed.entry(&f);
                if entry.is_malformed() {
                    status = exit::MALFORMED;
                }
                line.clear();
                // A frame that did not decode stands out on a terminal.
                let latency_us = listed_latency(&latencies, f.index);
                lines.push_frame(&mut line, &f, entry, latency_us, list_color);
                line.push(b'\n');
                fit_rows(&mut line);
                out.write_all(&line).and_then(|_| out.flush())
            } else {
                // The JSON contract needs values only (records stay hex).
                let values_only = format == Format::Json;
                let opts = DecodeOptions {
                    values_only,
                    topic_ids: names.for_frame(&f),
                    ..whole_capture.clone()
                };
                if f.bytes.len() <= HELD_FRAME {
                    let weight = f.bytes.len();
                    return pool.submit((f, opts), weight, &mut |w| {
                        pass_on(&mut out, &mut status, w, (&write_here, &held))
                    }) || {
                        write_failed = true;
                        false
                    };
                }
                // A large frame's output is streamed here, not held (a 1 MB Fetch response's tree is about 30 MB of text).
                if !pool.drain(&mut |w| pass_on(&mut out, &mut status, w, (&write_here, &held))) {
                    write_failed = true;
                    return false;
                }
                write_here(&mut out, &mut status, &f, opts)
            };
            if res.is_err() {
                write_failed = true;
                return false;
            }
            true
        };
        let mut take = |c| {
            names.learn(&c);
            // Closes are written with the frames, whatever the selection shows.
            if let (Some(w), Captured::Conn(e)) = (selected_pcap.borrow_mut().as_mut(), &c) {
                w.conn_event(e);
            }
            if let (true, Captured::Frame(f)) = (args.list, &c) {
                // Every frame pairs, before the selection drops any: a
                // response shown alone still has its latency.
                if let Some(p) = pending.on_frame(f, f.index) {
                    latencies.borrow_mut().insert(f.index, p.latency_us);
                }
            }
            selected.take(c, &mut handle)
        };
        // A file is read ahead on a thread of its own while this one lists,
        // decodes and writes; a stream is not (after the output stops, that thread
        // could wait on it indefinitely).
        let stats = match source.rereadable() {
            true => for_each_captured_ahead(cat, input, &opts, &mut take),
            false => for_each_captured(cat, input, &opts, &mut take),
        };
        if stats.is_ok() {
            selected.finish(&mut handle);
        }
        if !pool.drain(&mut |w| pass_on(&mut out, &mut status, w, (&write_here, &held))) {
            write_failed = true;
        }
        stats
    });
    if out.flush_all().is_err() {
        write_failed = true;
    }
    if let Some(path) = &args.write_selected {
        let written = match selected_pcap.into_inner().map(|w| w.finish()) {
            Some(Ok(written)) => Ok(written),
            Some(Err(e)) => Err(e.to_string()),
            None => Err(selected_pcap_failed.unwrap_or_default()),
        };
        match written {
            Ok(written) => kwire::stderr_line!("kwire: wrote {written} to {}", sanitize(path)),
            Err(e) => {
                kwire::stderr_line!("kwire: {}: {}", sanitize(path), sanitize(&e));
                status = exit::FAILURE;
            }
        }
    }
    match stats {
        Ok(s) => {
            if let Some(e) = &s.error {
                kwire::stderr_line!("kwire: capture cut short after {} packets: {e}", s.packets);
                status = exit::MALFORMED;
            }
            super::filter_args::report_unrecognised(&s);
            if s.frames == 0 && s.skips == 0 && s.tls.connections == 0 && !write_failed {
                kwire::stderr_line!(
                    "kwire: no Kafka traffic found in {} packets ({} TCP segments); try --port",
                    s.packets,
                    s.tcp_segments
                );
                return exit::FAILURE;
            }
            if super::tls_args::report(&s.tls) {
                status = exit::MALFORMED;
            }
            if skipped.count > 0 {
                skipped.report(if filter.names_frames() {
                    "; their notes are shown without --api, --correlation-id, --frame, --topic, --client-id, --error and --min-latency"
                } else {
                    "; see the skipped notes"
                });
                status = exit::MALFORMED;
            }
            if filter.selects() && selected.shown() == 0 && !write_failed {
                kwire::stderr_line!("kwire: no frame matches {}", describe(&filter, args));
                if status == exit::OK {
                    status = exit::FAILURE;
                }
            }
            status
        }
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", args.input_name(), sanitize(&e));
            exit::FAILURE
        }
    }
}

/// The file `--write-selected` names, created (never the input itself).
fn open_selected_pcap(
    args: &CaptureArgs,
    source: &Source<'_>,
) -> Result<Option<FramesPcap<std::io::BufWriter<std::fs::File>>>, i32> {
    let Some(path) = &args.write_selected else {
        return Ok(None);
    };
    let same = |input: &str| {
        let canonical = |p: &str| std::fs::canonicalize(p).ok();
        canonical(input).is_some_and(|i| Some(i) == canonical(path))
    };
    if let Source::File(input) = source {
        if same(input) {
            kwire::stderr_line!(
                "kwire: --write-selected {}: that is the capture being read; name another file",
                sanitize(path)
            );
            return Err(exit::USAGE);
        }
    }
    let created =
        std::fs::File::create(path).and_then(|f| FramesPcap::new(std::io::BufWriter::new(f)));
    match created {
        Ok(w) => Ok(Some(w)),
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {e}", sanitize(path));
            Err(exit::FAILURE)
        }
    }
}

/// Skip notes seen (in the selected connections).
#[derive(Default)]
struct SkipTally {
    count: usize,
    bytes: u64,
}

impl SkipTally {
    /// One line on stderr, so that skipped bytes never pass unremarked (the
    /// exit status says so too).
    fn report(&self, shown: &str) {
        let places = if self.count == 1 { "place" } else { "places" };
        kwire::stderr_line!("kwire: {} bytes in {} {places} are in no frame (gaps, partial frames or bytes passed over){shown}", self.bytes, self.count);
    }
}

/// Rows of the listing (a connection's name line and its row) cut to the
/// terminal's width.
fn fit_rows(rows: &mut Vec<u8>) {
    if let Some(columns) = super::width::stdout() {
        kwire::text::width::fit_each_line(rows, 0, columns);
    }
}

/// A skip note: a listing row (`list`), a `# skipped` line before trees, or
/// a JSON record (`"kind":"skipped"`) among the frames' objects.
fn write_skipped(
    out: &mut Out<'_>,
    s: &Skipped,
    list: Option<&mut LineWriter<'_>>,
    format: Format,
) -> std::io::Result<()> {
    let request = s.direction == Direction::Request;
    let arrow = if request { "→" } else { "←" };
    let (client, server) = if request {
        (s.from, s.to)
    } else {
        (s.to, s.from)
    };
    let what = s.reason.describe();
    if let Some(lines) = list {
        let mut line = Vec::with_capacity(160);
        let place = ConnPlace {
            conn: s.conn,
            client,
            broker: server,
            arrow,
        };
        let what = format!("skipped {}B at stream offset {}: {what}", s.bytes, s.offset);
        lines.push_conn_row(&mut line, "-", s.timestamp, place, &what);
        line.push(b'\n');
        fit_rows(&mut line);
        out.write_all(&line)?;
    } else if matches!(format, Format::Json | Format::TreeJson) {
        let mut record = serde_json::json!({
            "kind": "skipped",
            "conn": s.conn,
            "direction": if request { "request" } else { "response" },
            "from": s.from.to_string(),
            "to": s.to.to_string(),
            "timestamp": s.timestamp,
            "offset": s.offset,
            "bytes": s.bytes,
            "reason": s.reason.code(),
            "note": what,
        });
        if let Some(d) = s.reason.declared() {
            record["declared"] = d.into();
        }
        serde_json::to_writer(&mut *out, &record)?;
        out.write_all(b"\n")?;
    } else {
        let line = format!("# skipped conn {} {client} {arrow} {server} at {:.6}: {} bytes at stream offset {}: {what}", s.conn, s.timestamp, s.bytes, s.offset);
        writeln!(out, "{}", super::width::fit_text(line))?;
    }
    out.flush()
}

/// A TLS note: a listing line (`  tls` for the frame number), a `# tls`
/// line before trees, or a JSON object of its own kind (`"kind":"tls"`,
/// `"kind":"tls_stopped"`) among the frames' objects.
/// A TLS note as a row of the listing (`list`), a JSON object or a `#` line.
fn write_tls(
    out: &mut Out<'_>,
    n: &TlsNote,
    list: Option<&mut LineWriter<'_>>,
    format: Format,
) -> std::io::Result<()> {
    let what = kwire::render::tls::describe(n);
    use kwire::capture::tls::TlsEvent;
    let arrow = match &n.event {
        TlsEvent::Stopped {
            direction: Direction::Response,
            ..
        }
        | TlsEvent::Skipped {
            direction: Direction::Response,
            ..
        } => "←",
        _ => "→",
    };
    if let Some(lines) = list {
        let mut line = Vec::with_capacity(200);
        let place = ConnPlace {
            conn: n.conn,
            client: n.client,
            broker: n.server,
            arrow,
        };
        lines.push_conn_row(&mut line, "tls", n.timestamp, place, &what);
        line.push(b'\n');
        fit_rows(&mut line);
        out.write_all(&line)?;
    } else if matches!(format, Format::Json | Format::TreeJson) {
        out.write_all(kwire::render::json::to_text(&kwire::render::tls::json(n)).as_bytes())?;
        out.write_all(b"\n")?;
    } else {
        let line = format!(
            "# tls conn {} {} {arrow} {} at {:.6}: {what}",
            n.conn, n.client, n.server, n.timestamp
        );
        writeln!(out, "{}", super::width::fit_text(line))?;
    }
    out.flush()
}

/// Frames up to this size are decoded on a worker and their output held
/// until their turn; larger ones are decoded here and streamed out.
const HELD_FRAME: usize = 16 << 10;
/// Output that workers may hold at once, waiting for its turn; past it a
/// worker leaves its frames to be decoded in their turn. Memory held is at
/// most this plus one frame's output per worker (a frame of [`HELD_FRAME`]
/// bytes draws at most a few MB of tree JSON, about 15 KB of text usually).
const HELD_OUTPUT: usize = 8 << 20;

/// A captured frame decoded: the frame, how its API was chosen, and what it
/// says on stderr.
struct Decoded {
    frame: Frame,
    note: Option<String>,
    findings: Findings,
}

/// What a decoded frame says beside its output: lines for stderr (before its
/// output) and whether it makes the exit status malformed.
struct Findings {
    stderr: Vec<String>,
    malformed: bool,
}

impl Findings {
    fn report(&self, out: &mut Out<'_>, status: &mut i32) {
        if self.malformed {
            *status = exit::MALFORMED;
        }
        if !self.stderr.is_empty() {
            // Keep the lines next to their frame's output when both go to one place.
            let _ = out.flush_all();
            for line in &self.stderr {
                kwire::stderr_line!("{line}");
            }
        }
    }
}

/// What a worker did with a frame, for the calling thread to pass on.
enum Written {
    /// Decoded and written into memory.
    Done { findings: Findings, stdout: Vec<u8> },
    /// Left to be decoded in its turn (it spends the input's budget).
    InItsTurn(Box<(CapturedFrame, DecodeOptions)>),
}

/// A frame decoded and written on the calling thread, in its turn.
type WriteHere<'a> =
    dyn Fn(&mut Out<'_>, &mut i32, &CapturedFrame, DecodeOptions) -> std::io::Result<()> + 'a;

/// Pass a worker's frame on: its findings, then its output.
fn pass_on(
    out: &mut Out<'_>,
    status: &mut i32,
    w: Written,
    (write_here, held): (&WriteHere<'_>, &AtomicUsize),
) -> bool {
    match w {
        Written::Done { findings, stdout } => {
            findings.report(out, status);
            held.fetch_sub(stdout.len(), Ordering::Relaxed);
            out.write_owned(stdout).is_ok()
        }
        Written::InItsTurn(turn) => {
            let (f, opts) = *turn;
            write_here(out, status, &f, opts).is_ok()
        }
    }
}

/// Whether a frame's tree is drawn in its turn, straight to the output, with
/// its records walked a batch at a time as they are drawn: a large frame's
/// (`DecodeOptions::defer_records_over`), whose whole tree would not fit in memory.
fn drawn_later(f: &CapturedFrame, format: Format) -> bool {
    matches!(format, Format::Tree | Format::TreeJson) && f.bytes.len() > DEFER_RECORDS_OVER
}

/// A frame's JSON line written by `write` (streamed as it is written: a
/// tree's JSON can be far larger than its frame), with the capture's member
/// added when `provenance`: only the closing `}\n` is held back for it.
fn with_capture_member<W: Write>(
    out: &mut W,
    f: &CapturedFrame,
    provenance: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if !provenance {
        return write(out);
    }
    let mut held = HoldBack {
        inner: &mut *out,
        tail: Vec::with_capacity(HOLD_BACK),
    };
    write(&mut held)?;
    let mut tail = std::mem::take(&mut held.tail);
    if tail.last() == Some(&b'\n') {
        tail.pop();
    }
    add_capture_member(&mut tail, f);
    tail.push(b'\n');
    out.write_all(&tail)
}

/// A large frame's tree (text or JSON) written as its records are walked
/// and drawn; what the walks find goes to stderr after it.
fn write_drawing(
    out: &mut Out<'_>,
    status: &mut i32,
    (cat, release, guess): (&Catalogue, Option<&str>, bool),
    f: &CapturedFrame,
    opts: DecodeOptions,
    (output, provenance): (&OutputArgs, bool),
) -> std::io::Result<()> {
    let opts = DecodeOptions {
        defer_records_over: Some(DEFER_RECORDS_OVER),
        ..opts
    };
    let budget = opts.budget.clone();
    let format = output.format();
    let mut decoded = decode_one(cat, release, f, guess, opts, format);
    if format == Format::TreeJson {
        let frame = &mut decoded.frame;
        with_capture_member(out, f, provenance, |mut w| {
            kwire::render::tree_json::write_frame_tree_json_drawing(&mut w, frame, (cat, &budget))
        })?;
    } else {
        decoded.write_heading(out, f)?;
        let tree = tree_options(output.full_docs);
        kwire::render::text_tree::write_frame_drawing(
            out,
            &mut decoded.frame,
            tree,
            (cat, &budget),
        )?;
    }
    findings_of(&decoded.frame, f, None).report(out, status);
    out.flush()
}

/// Decode a captured frame; record damage, and a JSON frame's note, go to stderr.
fn decode_one(
    cat: &Catalogue,
    release: Option<&str>,
    f: &CapturedFrame,
    guess: bool,
    opts: DecodeOptions,
    format: Format,
) -> Decoded {
    let (frame, note) = decode_captured(cat, release, f, guess, opts);
    // JSON stays one object per line for scripts; where it came from goes to stderr.
    let json_note = note
        .as_deref()
        .filter(|_| matches!(format, Format::Json | Format::TreeJson));
    let findings = findings_of(&frame, f, json_note);
    Decoded {
        frame,
        note,
        findings,
    }
}

/// What a decoded frame says on stderr (its record damage, and a note) and
/// whether it makes the exit status malformed.
fn findings_of(frame: &Frame, f: &CapturedFrame, note: Option<&str>) -> Findings {
    let mut stderr: Vec<String> = frame
        .record_damage
        .iter()
        .map(|e| {
            format!(
                "kwire: frame {}: record data: {}",
                f.index,
                sanitize(&e.to_string())
            )
        })
        .collect();
    if let Some(n) = note {
        stderr.push(format!("kwire: frame {}: {n}", f.index));
    }
    let malformed = frame.error.is_some() || !frame.record_damage.is_empty();
    Findings { stderr, malformed }
}

impl Decoded {
    /// The frame as JSON (one object per line) or as a tree or grid under a `# frame` line.
    fn write(
        &self,
        out: &mut impl Write,
        f: &CapturedFrame,
        format: Format,
        full_docs: bool,
        provenance: bool,
    ) -> std::io::Result<()> {
        let frame = &self.frame;
        if format == Format::Json {
            let mut line = Vec::with_capacity(2 * frame.bytes.len() + 256);
            kwire::render::json::write_contract(frame, &mut line);
            if provenance {
                add_capture_member(&mut line, f);
            }
            line.push(b'\n');
            out.write_all(&line)
        } else if format == Format::TreeJson {
            with_capture_member(out, f, provenance, |mut w| {
                kwire::render::tree_json::write_frame_tree_json(&mut w, frame)
            })
        } else {
            self.write_heading(out, f)?;
            write_frames(out, std::slice::from_ref(frame), format, full_docs, None)
        }
    }

    /// [`Decoded::push`] into a buffer of its own, sized for a tree of the frame.
    fn drawn(
        &self,
        f: &CapturedFrame,
        format: Format,
        full_docs: bool,
        provenance: bool,
    ) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 * self.frame.bytes.len() + 256);
        self.push(&mut out, f, format, full_docs, provenance);
        out
    }

    /// [`Decoded::write`] into memory, on a worker: a tree is drawn straight
    /// into the buffer, not through another.
    fn push(
        &self,
        out: &mut Vec<u8>,
        f: &CapturedFrame,
        format: Format,
        full_docs: bool,
        provenance: bool,
    ) {
        // Writing into memory does not fail.
        if format == Format::Tree {
            self.push_heading(out, f);
            kwire::render::text_tree::push_frame(
                out,
                &self.frame,
                kwire::render::text_tree::TreeOptions {
                    full_docs,
                    color: super::color::stdout(),
                    // Whole descriptions are asked for whole lines.
                    width: super::width::stdout().filter(|_| !full_docs),
                },
            );
        } else {
            let _ = self.write(out, f, format, full_docs, provenance);
        }
    }

    /// The `# frame` line above a tree or grid, and the `# note` line.
    fn write_heading(&self, out: &mut impl Write, f: &CapturedFrame) -> std::io::Result<()> {
        let mut line = Vec::with_capacity(128);
        self.push_heading(&mut line, f);
        out.write_all(&line)
    }

    /// [`Decoded::write_heading`] into memory: written piece by piece, as
    /// formatting it cost as much as decoding a small frame.
    fn push_heading(&self, line: &mut Vec<u8>, f: &CapturedFrame) {
        let arrow = if f.direction == Direction::Request {
            "→"
        } else {
            "←"
        };
        let (client, server) = if f.direction == Direction::Request {
            (f.from, f.to)
        } else {
            (f.to, f.from)
        };
        line.extend_from_slice(b"# frame ");
        push_uint(line, f.index as u64, 0);
        line.extend_from_slice(b" conn ");
        push_uint(line, f.conn as u64, 0);
        line.push(b' ');
        push_socket_addr(line, client);
        line.push(b' ');
        line.extend_from_slice(arrow.as_bytes());
        line.push(b' ');
        push_socket_addr(line, server);
        line.extend_from_slice(b" at ");
        push_seconds(line, f.timestamp);
        if f.after_gap {
            line.extend_from_slice(b" [after gap]");
        }
        line.push(b'\n');
        if let Some(n) = &self.note {
            line.extend_from_slice(b"# ");
            line.extend_from_slice(n.as_bytes());
            line.push(b'\n');
        }
        if let Some(c) = &f.comment {
            line.extend_from_slice(b"# comment: ");
            kwire::text::escape::sanitize_into(line, c);
            line.push(b'\n');
        }
    }
}

/// A capture time as every JSON output writes it (`render::json::capture_time`).
fn push_seconds(line: &mut Vec<u8>, t: f64) {
    let _ = write!(line, "{}", kwire::render::json::capture_time(t));
}

fn add_capture_member(line: &mut Vec<u8>, f: &CapturedFrame) {
    if line.last() != Some(&b'}') {
        return;
    }
    line.pop();
    line.extend_from_slice(b",\"capture\":{\"frame\":");
    push_uint(line, f.index as u64, 0);
    line.extend_from_slice(b",\"time\":");
    match f.timestamp.is_finite() {
        true => push_seconds(line, f.timestamp),
        false => line.extend_from_slice(b"null"),
    }
    line.extend_from_slice(b",\"conn\":");
    push_uint(line, f.conn as u64, 0);
    // Socket addresses are digits, dots, colons and brackets: nothing to escape.
    let _ = write!(line, ",\"src\":\"{}\",\"dst\":\"{}\"", f.from, f.to);
    if let Some(c) = &f.comment {
        // serde_json escapes control characters, so none reaches a terminal.
        let text = serde_json::to_string(&**c).unwrap_or_default();
        let _ = write!(line, ",\"comment\":{text}");
    }
    line.extend_from_slice(b"}}");
}

/// A writer passing everything on to `inner` but its last [`HOLD_BACK`] bytes,
/// which stay in `tail` (a JSON object's closing, to reopen it).
struct HoldBack<'w, W: Write> {
    inner: &'w mut W,
    tail: Vec<u8>,
}

/// The bytes a [`HoldBack`] keeps.
const HOLD_BACK: usize = 2;

impl<W: Write> Write for HoldBack<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() >= HOLD_BACK {
            let (pass, keep) = buf.split_at(buf.len() - HOLD_BACK);
            self.inner.write_all(&self.tail)?;
            self.inner.write_all(pass)?;
            self.tail.clear();
            self.tail.extend_from_slice(keep);
        } else {
            self.tail.extend_from_slice(buf);
            let over = self.tail.len().saturating_sub(HOLD_BACK);
            self.inner.write_all(&self.tail[..over])?;
            self.tail.drain(..over);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The selection as given on the command line, for messages.
/// The latency of the response numbered `index`, when it has one. The
/// selection hands frames on in order, so the latencies of lower-numbered
/// frames it dropped are forgotten here.
fn listed_latency(
    latencies: &std::cell::RefCell<std::collections::BTreeMap<usize, u64>>,
    index: usize,
) -> Option<u64> {
    let mut latencies = latencies.borrow_mut();
    let later = latencies.split_off(&index);
    *latencies = later;
    latencies.remove(&index)
}

fn describe(filter: &FrameFilter, args: &CaptureArgs) -> String {
    let mut parts = vec![args.filter.describe()];
    if let Some(c) = args.correlation_id {
        parts.push(format!("--correlation-id {c}"));
    }
    if let Some(n) = args.frame {
        parts.push(format!("--frame {n}"));
    }
    // `kwire decode --api` hands its API over as the selection's.
    if args.filter.api.is_none() && args.filter.filter.is_none() {
        if let Some(k) = filter.api {
            parts.push(format!("--api {k}"));
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.join(" ")
}

/// `--tui`: the explorer over the capture's index (built as the explorer
/// runs, frames decoded when shown), the selection as its filter; with
/// `--frame` or `--correlation-id`, over the frames they name, decoded first.
fn explore_capture(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    filter: &FrameFilter,
    input: Box<dyn std::io::Read + Send>,
    names: &TopicNames<'_>,
    opts: CaptureOptions,
) -> i32 {
    if filter.frame.is_some() || filter.correlation_id.is_some() {
        return explore_selected(cat, release, args, filter, input, names, opts);
    }
    let total = match &args.file {
        Some(path) if path != "-" => std::fs::metadata(path)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len()),
        _ => None,
    };
    let explore = Explore {
        total,
        guess: args.guess,
        budget: args.budget.budget(),
        // The selection as given, or the api and connection it came down to.
        filter: filter.exchanges.clone().unwrap_or_else(|| {
            let words = kwire::analysis::filter::Words {
                api: filter.api,
                conn: filter.conn,
                ..Default::default()
            };
            ExchangeFilter::from_words(cat, &words, None).unwrap_or_default()
        }),
        topic_ids: names.now(),
        opts,
        input_name: args.input_name(),
    };
    explore_indexed(cat, release, input, explore, || {})
}

/// What the capture explorer is opened with besides its input.
pub struct Explore {
    /// The input's size, when it is a file (for the progress figure).
    pub total: Option<u64>,
    pub guess: bool,
    pub budget: kwire::budget::Budget,
    /// The filter it starts with (empty: every frame).
    pub filter: ExchangeFilter,
    pub topic_ids: TopicIds,
    pub opts: CaptureOptions,
    /// For messages: the file, `-`, or the live source.
    pub input_name: String,
}

/// The explorer over a capture read by the index thread as it runs (a file,
/// standard input, or live traffic's pcapng pipe): rows join the list as
/// frames complete. When the user quits, `on_quit` ends the input (live
/// sources close their pipe) before the index thread is waited for.
pub fn explore_indexed(
    cat: &Catalogue,
    release: Option<&str>,
    input: Box<dyn std::io::Read + Send>,
    e: Explore,
    on_quit: impl FnOnce(),
) -> i32 {
    if !std::io::stdout().is_terminal() {
        kwire::stderr_line!(
            "kwire: the explorer needs a terminal; without --tui the frames are printed"
        );
        return exit::FAILURE;
    }
    let (spool, spool_writer) = match Spool::create() {
        Ok(s) => s,
        Err(err) => {
            kwire::stderr_line!(
                "kwire: the explorer's spool file in {}: {err}",
                std::env::temp_dir().display()
            );
            return exit::FAILURE;
        }
    };
    let progress = Progress {
        total: e.total,
        ..Default::default()
    };
    // Quitting must not wait for input that does not come (`sleep 60 |
    // kwire capture - --tui`): the index thread's reads end when it stops.
    let input = kwire::input::stoppable::stoppable(input, progress.stop.clone());
    let capture = CaptureState {
        topic_ids: e.topic_ids,
        ..CaptureState::new(spool, progress.clone(), e.guess, e.budget)
    };
    let mut app = App::for_capture(cat, release.map(str::to_string), capture, Theme::from_env());
    if !e.filter.is_empty() {
        app.set_filter(e.filter.text().to_string(), e.filter);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let (guess, opts) = (e.guess, e.opts);
    let shown = std::thread::scope(|s| {
        let indexer = s.spawn(|| {
            index_capture(
                cat,
                release,
                guess,
                input,
                &opts,
                spool_writer,
                &progress,
                &tx,
            )
        });
        let shown = kwire::tui::run_indexing(&mut app, &rx);
        progress
            .stop
            .store(true, std::sync::atomic::Ordering::Relaxed);
        drop(rx);
        on_quit();
        let _ = indexer.join();
        shown
    });
    if let Err(err) = shown {
        kwire::stderr_line!("kwire: terminal: {err}");
        return exit::FAILURE;
    }
    let cap = app.capture.as_ref();
    if let Some(err) = cap.and_then(|c| c.error.as_ref()) {
        kwire::stderr_line!("kwire: {}: {}", sanitize(&e.input_name), sanitize(err));
        return exit::MALFORMED;
    }
    match cap {
        Some(c) if c.skipped > 0 => {
            kwire::stderr_line!("kwire: {} bytes of the capture are in no frame ({} skip notes); `kwire capture --list` shows where", c.skipped_bytes, c.skipped);
            exit::MALFORMED
        }
        _ => exit::OK,
    }
}

/// `--tui` with `--frame` or `--correlation-id`: decode the selected frames, then explore them.
fn explore_selected(
    cat: &Catalogue,
    release: Option<&str>,
    args: &CaptureArgs,
    filter: &FrameFilter,
    input: Box<dyn std::io::Read + Send>,
    names: &TopicNames<'_>,
    opts: CaptureOptions,
) -> i32 {
    let mut frames = Vec::new();
    let mut skipped = SkipTally::default();
    // The explorer holds every frame: their expanded share stays held, within one budget.
    let whole_capture = DecodeOptions {
        budget: args.budget.budget(),
        // Big records fields are held as a stub per batch, each walked when opened.
        defer_records_over: Some(kwire::tui::app::STUB_RECORDS_OVER),
        ..Default::default()
    };
    let mut selected = Selection::new(cat, release, filter);
    let mut handle = |c| {
        match c {
            Captured::Frame(f) => {
                let (frame, _) = decode_captured(
                    cat,
                    release,
                    &f,
                    args.guess,
                    DecodeOptions {
                        topic_ids: names.now(),
                        ..whole_capture.clone()
                    },
                );
                frames.push(frame);
            }
            Captured::Skipped(s) if filter.conn.is_none_or(|c| c == s.conn) => {
                skipped.count += 1;
                skipped.bytes += s.bytes;
            }
            _ => {}
        }
        true
    };
    let stats = for_each_captured(cat, input, &opts, |c| {
        names.learn(&c);
        selected.take(c, &mut handle)
    });
    if stats.is_ok() {
        selected.finish(&mut handle);
    }
    match stats {
        Ok(s) if frames.is_empty() => {
            super::filter_args::report_unrecognised(&s);
            super::tls_args::report(&s.tls);
            kwire::stderr_line!("kwire: no Kafka frames selected in {}", args.input_name());
            exit::FAILURE
        }
        Ok(s) => {
            let mut status = super::tui_cmd::explore(
                cat,
                release.map(str::to_string),
                frames,
                whole_capture.budget.clone(),
            );
            // After the explorer gives the terminal back.
            if super::tls_args::report(&s.tls) && status == exit::OK {
                status = exit::MALFORMED;
            }
            if skipped.count > 0 {
                skipped.report("; `kwire capture --list` shows where");
                if status == exit::OK {
                    return exit::MALFORMED;
                }
            }
            status
        }
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", args.input_name(), sanitize(&e));
            exit::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hold_back_passes_on_all_but_the_last_two_bytes() {
        let text = b"{\"a\":[1,2,3],\"b\":\"x\"}\n";
        for split in [1, 2, 3, 5, text.len()] {
            let mut sink = Vec::new();
            let mut held = HoldBack {
                inner: &mut sink,
                tail: Vec::new(),
            };
            for chunk in text.chunks(split) {
                held.write_all(chunk).unwrap();
            }
            let tail = std::mem::take(&mut held.tail);
            assert_eq!(
                (sink.as_slice(), tail.as_slice()),
                (&text[..text.len() - 2], &b"}\n"[..]),
                "writes of {split}"
            );
        }
    }
}
