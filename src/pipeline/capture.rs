//! The capture pipeline, what `kwire capture` runs: every Kafka frame of a
//! capture, selected, decoded (small frames on worker threads, in capture
//! order) and written to any `io::Write`, as a listing or as decoded frames.

use super::decoded::{
    decode_drawn, decode_one, drawn_later, write_drawing, Drawing, Findings, Sink,
};
use super::frames::{Format, Style};
use super::notes::{write_note, SkipTally};
use super::out::Out;
use crate::analysis::in_order::{decoding_workers, InOrder};
use crate::analysis::listing::{Lister, LIST_BODY_LIMIT};
use crate::analysis::pending::Pending;
use crate::analysis::selection::{FrameFilter, Selection, TopicNames};
use crate::budget::{Budget, Limits, Spent};
use crate::capture::read_ahead::for_each_captured_ahead;
use crate::capture::{
    for_each_captured, CaptureOptions, CaptureStats, Captured, CapturedFrame, CutBodies,
};
use crate::decode::DecodeOptions;
use crate::live::frames_pcap::FramesPcap;
use crate::render::listing::LineWriter;
use crate::schema::Catalogue;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A capture's bytes, read once for its frames (and a first time for topic
/// names or findings, when they can be read again).
pub type Input = Box<dyn Read + Send>;

/// Where a capture is read from: standard input or a stream once, a file or
/// bytes in memory as often as needed.
pub enum Source {
    Stdin,
    File(String),
    Memory(bytes::Bytes),
    Stream(RefCell<Option<Input>>),
}

impl Source {
    /// Whether a second reading gives the same bytes (not a pipe or a FIFO).
    pub fn rereadable(&self) -> bool {
        match self {
            Source::Stdin | Source::Stream(_) => false,
            Source::File(path) => std::fs::metadata(path).is_ok_and(|m| m.is_file()),
            Source::Memory(_) => true,
        }
    }

    /// The bytes from the start (unbuffered: the readers make large reads).
    pub fn open(&self) -> std::io::Result<Input> {
        match self {
            // Not locked: a lock cannot go to the explorer's index thread.
            Source::Stdin => Ok(Box::new(std::io::stdin())),
            Source::File(path) => Ok(Box::new(std::fs::File::open(path)?)),
            Source::Memory(b) => Ok(Box::new(std::io::Cursor::new(b.clone()))),
            Source::Stream(s) => s
                .borrow_mut()
                .take()
                .ok_or_else(|| std::io::Error::other("the stream was read already")),
        }
    }
}

/// Tree views note each TopicId with its topic: a file (or bytes in memory)
/// is read a first time for the names when the first frame shown can hold a
/// topic id (opened again then: a file that changed in between gives what it
/// holds then), a stream learns them as it goes.
pub fn topic_names<'c>(
    cat: &'c Catalogue,
    release: Option<&str>,
    source: &'c Source,
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

/// How a capture is shown. The default: every frame's tree, uncoloured
/// and uncut, in large writes, within the default budget.
#[derive(Default)]
pub struct Options {
    /// One line per frame (the listing) instead of decoded frames.
    pub list: bool,
    /// How decoded frames are drawn (not the listing's).
    pub format: Format,
    /// Descriptions in full in trees.
    pub full_docs: bool,
    /// Responses whose request is not in the capture decoded by the best-ranked guess.
    pub guess: bool,
    /// Where each frame came from (`"capture"`) added to JSON objects.
    pub provenance: bool,
    pub style: Style,
    /// Write out after every frame (to a terminal, or when the input is a
    /// stream); otherwise output goes out in large writes.
    pub flush_each_frame: bool,
    /// One budget for the whole capture: its frames are dropped as they are
    /// written, so what they held goes back; what they decompressed does not.
    pub budget: Budget,
    /// How the capture is read (ports, TLS keys).
    pub capture: CaptureOptions,
}

/// What a run found besides what it wrote.
#[derive(Debug)]
pub struct Outcome {
    /// The capture read to its end (with what it held), or why it was not.
    pub read: Result<CaptureStats, String>,
    /// A frame shown did not decode cleanly, or its records were damaged.
    pub malformed: bool,
    /// Writing the output failed (a closed pipe): the run stopped there.
    pub output_failed: bool,
    /// Skip notes in the connections shown.
    pub skipped: SkipTally,
    /// Frames the selection kept.
    pub shown: usize,
    /// The frames written to `selected` (a summary of what was written), or
    /// why writing them failed; `None` when none was asked for.
    pub selected: Option<Result<String, String>>,
}

/// A pcapng of the frames shown, written as they are.
pub type SelectedPcap = FramesPcap<Box<dyn Write>>;

/// Frames up to this size are decoded on a worker and their output held
/// until their turn; larger ones are decoded here and streamed out.
const HELD_FRAME: usize = 16 << 10;
/// Output that workers may hold at once, waiting for its turn; past it a
/// worker leaves its frames to be decoded in their turn. Memory held is at
/// most this plus one frame's output per worker (a frame of [`HELD_FRAME`]
/// bytes draws at most a few MB of tree JSON, about 15 KB of text usually).
const HELD_OUTPUT: usize = 8 << 20;
/// The budget of a frame decoded ahead of its turn, for each of the two
/// (bytes decompressed; decompressed data and the tree from it held at
/// once): its output is held until its turn. About 470 small records'
/// trees; a client's compressed batches (16 KiB to 1 MiB) fit, a
/// decompression bomb does not (it runs out, and is decoded in its turn).
const AHEAD: u64 = 1 << 20;
// A zstd window the worker's room accepts is accepted in any room.
const _: () = assert!(AHEAD <= crate::decode::records::compression::MIN_ZSTD_WINDOW);

/// What a worker did with a frame, for the calling thread to pass on.
enum Written {
    /// Decoded and written into memory.
    Done { findings: Findings, stdout: Vec<u8> },
    /// Decoded and written into memory against a budget of its own, which
    /// it spent: kept when the input's budget affords what it spent in its
    /// turn ([`Budget::afford`]), else decoded again there.
    Afforded {
        findings: Findings,
        stdout: Vec<u8>,
        spent: Spent,
        turn: Box<(CapturedFrame, DecodeOptions)>,
    },
    /// Left to be decoded in its turn (it spends the input's budget).
    InItsTurn(Box<(CapturedFrame, DecodeOptions)>),
}

/// A frame decoded and written on the calling thread, in its turn.
type WriteHere<'a, W> =
    dyn Fn(&mut Sink<'_, W>, &CapturedFrame, DecodeOptions) -> std::io::Result<()> + 'a;

/// Pass a worker's frame on: its findings, then its output.
fn pass_on<W: Write>(
    sink: &mut Sink<'_, W>,
    w: Written,
    (write_here, held): (&WriteHere<'_, W>, &AtomicUsize),
) -> bool {
    match w {
        Written::Done { findings, stdout } => {
            findings.report(sink);
            held.fetch_sub(stdout.len(), Ordering::Relaxed);
            sink.out.write_owned(stdout).is_ok()
        }
        Written::Afforded {
            findings,
            stdout,
            spent,
            turn,
        } => {
            held.fetch_sub(stdout.len(), Ordering::Relaxed);
            let (f, opts) = *turn;
            if opts.budget.afford(spent) {
                findings.report(sink);
                return sink.out.write_owned(stdout).is_ok();
            }
            write_here(sink, &f, opts).is_ok()
        }
        Written::InItsTurn(turn) => {
            let (f, opts) = *turn;
            write_here(sink, &f, opts).is_ok()
        }
    }
}

/// The latency of the response numbered `index`, when it has one. The
/// selection hands frames on in order, so the latencies of lower-numbered
/// frames it dropped are forgotten here.
fn listed_latency(latencies: &RefCell<BTreeMap<usize, u64>>, index: usize) -> Option<u64> {
    let mut latencies = latencies.borrow_mut();
    let later = latencies.split_off(&index);
    *latencies = later;
    latencies.remove(&index)
}

/// The capture from `source`, the frames `filter` keeps, written to `out`
/// as `options` say; what a frame says on the side (record damage, how its
/// API was chosen) goes to `say`, line by line, after the output before it.
/// `selected` receives the frames shown. An error opening the source is the
/// only error returned: the rest is in the outcome.
pub fn run<W: Write>(
    cat: &Catalogue,
    release: Option<&str>,
    (source, filter): (&Source, &FrameFilter),
    options: &Options,
    selected: Option<SelectedPcap>,
    out: W,
    say: &mut dyn FnMut(&str),
) -> std::io::Result<Outcome> {
    let format = options.format;
    let list = options.list;
    // Tree views note each TopicId with its topic; the listing, the grid and
    // the JSON contract show no notes.
    let trees = !list && matches!(format, Format::Tree | Format::TreeJson);
    let names = topic_names(cat, release, source, &options.capture, trees);
    let input = source.open()?;
    let selected_pcap = RefCell::new(selected);
    let mut selected_pcap_failed = None;
    let wrote_selected = selected_pcap.borrow().is_some();
    let drawing = Drawing {
        format,
        full_docs: options.full_docs,
        provenance: options.provenance,
        style: options.style,
    };
    let guess = options.guess;
    let mut sink = Sink {
        out: Out::new(out, options.flush_each_frame),
        say,
        malformed: false,
    };
    let mut write_failed = false;
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut lines = LineWriter::new(cat).naming_connections();
    let mut listed = Lister::new(cat, release, guess);
    // Listings decode bodies only of small frames (for their error summary): the
    // bodies of larger ones are skipped as they arrive, never buffered.
    // (Not when the selection reads bodies: a cut frame keeps its header only.)
    let bodies_needed = filter.exchanges.as_ref().is_some_and(|x| {
        let n = x.needs();
        n.topics || n.errors || n.fields.is_some()
    });
    let cut_bodies = (list && !bodies_needed && !wrote_selected).then(|| CutBodies {
        above: LIST_BODY_LIMIT,
        release: release.map(str::to_string),
    });
    let opts = CaptureOptions {
        cut_bodies,
        ..options.capture.clone()
    };
    let mut skipped = SkipTally::default();
    let style = options.style;
    let whole_capture = DecodeOptions {
        budget: options.budget.clone(),
        ..Default::default()
    };
    let mut selection = Selection::new(cat, release, filter);
    if list {
        selection = selection.listing(cat, LIST_BODY_LIMIT, release);
    }
    // The listing: responses' latencies by frame number, from the pairing of
    // every frame (`take`), read when the response is listed (`handle`).
    let mut pending = Pending::default();
    let latencies = RefCell::new(BTreeMap::new());
    // Frames of a file are decoded and drawn on worker threads, written out in
    // capture order; a stream's on this one, as each completes.
    let rereadable = source.rereadable();
    let workers = if rereadable && !list {
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
        // Ahead of its turn a frame may not spend the input's budget: it is
        // decoded against one of its own, and what it spends is paid in its
        // turn if the input's budget can (else it is decoded again there),
        // so that what runs out where does not depend on threads. Its own
        // is small: a frame that needs more (a decompression bomb) draws
        // much, and is drawn in its turn, streamed, not held here.
        let limits = opts.budget.limits();
        let own = Budget::new(Limits {
            decompressed: limits.decompressed.min(AHEAD),
            expanded: limits.expanded.min(AHEAD),
        });
        // The input's budget is set aside, not cloned: its count is shared by every thread.
        let budget = std::mem::replace(&mut opts.budget, own.clone());
        let (decoded, stdout) = decode_drawn((cat, release, guess), &f, opts.clone(), drawing);
        let findings = decoded.findings;
        let in_its_turn = || Box::new((f, DecodeOptions { budget, ..opts }));
        if !own.was_asked() {
            held.fetch_add(stdout.len(), Ordering::Relaxed);
            return Written::Done { findings, stdout };
        }
        match own.spent_ahead() {
            Some(spent) => {
                held.fetch_add(stdout.len(), Ordering::Relaxed);
                Written::Afforded {
                    findings,
                    stdout,
                    spent,
                    turn: in_its_turn(),
                }
            }
            None => Written::InItsTurn(in_its_turn()),
        }
    };
    // A frame decoded and written here, in its turn: streamed, not held.
    let write_here = |sink: &mut Sink<'_, W>, f: &CapturedFrame, opts: DecodeOptions| {
        if drawn_later(f, format) || format == Format::TreeJson {
            // A tree JSON streams here: a small frame's records can decompress
            // to megabytes of hex (a worker hands such a frame over to be
            // written here, as it asks the budget).
            return write_drawing(sink, (cat, release, guess), f, opts, drawing);
        }
        if format == Format::Tree && f.bytes.len() <= HELD_FRAME {
            // A small frame's tree is drawn into memory and handed over whole,
            // as a worker's is: drawing it through a second buffer copied every line.
            let (decoded, stdout) = decode_drawn((cat, release, guess), f, opts, drawing);
            decoded.findings.report(sink);
            return sink.out.write_owned(stdout);
        }
        let decoded = decode_one(cat, release, f, guess, opts, format);
        decoded.findings.report(sink);
        decoded
            .write(&mut sink.out, f, drawing)
            .and_then(|_| sink.out.flush())
    };
    let stats = InOrder::run(workers, &work, |pool| {
        let mut handle = |c| {
            let f = match c {
                Captured::Frame(f) => f,
                note => {
                    let conn = match &note {
                        Captured::Skipped(s) => s.conn,
                        Captured::Tls(n) => n.conn,
                        Captured::Conn(e) => e.conn,
                        Captured::Frame(f) => f.conn,
                    };
                    if filter.conn.is_some_and(|c| c != conn) {
                        return true;
                    }
                    if let Captured::Skipped(s) = &note {
                        skipped.count += 1;
                        skipped.bytes += s.bytes;
                    }
                    // Opens and closes are rows of the listing; other formats show frames.
                    if filter.names_frames() || (matches!(note, Captured::Conn(_)) && !list) {
                        return true;
                    }
                    // What the workers hold goes out before the note.
                    let written = pool.drain(&mut |w| pass_on(&mut sink, w, (&write_here, &held)))
                        && write_note(&mut sink.out, &note, list.then_some(&mut lines), drawing)
                            .is_ok();
                    write_failed |= !written;
                    return written;
                }
            };
            let failed =
                (selected_pcap.borrow_mut().as_mut()).and_then(|w| w.frame(cat, release, &f).err());
            if let Some(err) = failed {
                selected_pcap_failed = Some(err.to_string());
                *selected_pcap.borrow_mut() = None;
            }
            let res = if let (true, Some(mechanism)) = (list, f.kind.sasl_mechanism()) {
                line.clear();
                lines.push_token(&mut line, &f, mechanism);
                line.push(b'\n');
                style.fit_rows(&mut line);
                sink.out.write_all(&line).and_then(|_| sink.out.flush())
            } else if list {
                let entry = listed.entry(&f);
                if entry.is_malformed() {
                    sink.malformed = true;
                }
                line.clear();
                // A frame that did not decode stands out on a terminal.
                let latency_us = listed_latency(&latencies, f.index);
                lines.push_frame(&mut line, &f, entry, latency_us, style.color);
                line.push(b'\n');
                style.fit_rows(&mut line);
                sink.out.write_all(&line).and_then(|_| sink.out.flush())
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
                        pass_on(&mut sink, w, (&write_here, &held))
                    }) || {
                        write_failed = true;
                        false
                    };
                }
                // A large frame's output is streamed here, not held (a 1 MB
                // Fetch response's tree is about 30 MB of text).
                if !pool.drain(&mut |w| pass_on(&mut sink, w, (&write_here, &held))) {
                    write_failed = true;
                    return false;
                }
                write_here(&mut sink, &f, opts)
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
            if let (true, Captured::Frame(f)) = (list, &c) {
                // Every frame pairs, before the selection drops any: a
                // response shown alone still has its latency.
                if let Some(p) = pending.on_frame(f, f.index) {
                    latencies.borrow_mut().insert(f.index, p.latency_us);
                }
            }
            selection.take(c, &mut handle)
        };
        // A file is read ahead on a thread of its own while this one lists,
        // decodes and writes; a stream is not (after the output stops, that thread
        // could wait on it indefinitely).
        let stats = match rereadable {
            true => for_each_captured_ahead(cat, input, &opts, &mut take),
            false => for_each_captured(cat, input, &opts, &mut take),
        };
        if stats.is_ok() {
            selection.finish(&mut handle);
        }
        if !pool.drain(&mut |w| pass_on(&mut sink, w, (&write_here, &held))) {
            write_failed = true;
        }
        stats
    });
    if sink.out.flush_all().is_err() {
        write_failed = true;
    }
    let selected = wrote_selected.then(|| match selected_pcap.into_inner().map(|w| w.finish()) {
        Some(Ok(written)) => Ok(written),
        Some(Err(e)) => Err(e.to_string()),
        None => Err(selected_pcap_failed.unwrap_or_default()),
    });
    Ok(Outcome {
        read: stats,
        malformed: sink.malformed,
        output_failed: write_failed,
        skipped,
        shown: selection.shown(),
        selected,
    })
}

/// The frames a selection keeps, each decoded whole (with `decode`'s
/// options, topic ids as `names` knows them then, a lone response by a
/// guess when `guess`), and the skip notes in the connections it keeps.
#[derive(Debug)]
pub struct Selected {
    pub frames: Vec<crate::decode::Frame>,
    pub skipped: SkipTally,
    /// The capture read to its end (with what it held), or why it was not.
    pub read: Result<CaptureStats, String>,
}

/// The frames of the capture `input` that `filter` keeps, decoded and held
/// (what the explorer opens with `--frame` or `--correlation-id`).
pub fn decode_selected(
    cat: &Catalogue,
    release: Option<&str>,
    (input, capture): (Input, &CaptureOptions),
    filter: &FrameFilter,
    (names, guess, decode): (&TopicNames<'_>, bool, DecodeOptions),
) -> Selected {
    let mut frames = Vec::new();
    let mut skipped = SkipTally::default();
    let mut selection = Selection::new(cat, release, filter);
    let mut handle = |c| {
        match c {
            Captured::Frame(f) => {
                let opts = DecodeOptions {
                    topic_ids: names.now(),
                    ..decode.clone()
                };
                let (frame, _) =
                    crate::analysis::captured::decode_captured(cat, release, &f, guess, opts);
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
    let read = for_each_captured(cat, input, capture, |c| {
        names.learn(&c);
        selection.take(c, &mut handle)
    });
    if read.is_ok() {
        selection.finish(&mut handle);
    }
    Selected {
        frames,
        skipped,
        read,
    }
}
