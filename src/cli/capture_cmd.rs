//! `kwire capture FILE`: every Kafka frame in a pcap/pcapng, paired and decoded.

use super::decode_cmd::{write_frames, Format, OutputArgs};
use super::exit;
use clap::Args;
use kwire::analysis::exchange::{learn_topic_ids, Exchange, Exchanges, Observer, TopicIdLearner};
use kwire::analysis::Filter as ExchangeFilter;
use kwire::capture::tls::TlsNote;
use kwire::capture::{complete_prefix, for_each_captured, CaptureOptions, Captured, CapturedFrame, CutBodies, Skipped};
use kwire::decode::guess::guess_response;
use kwire::decode::fields::TopicIds;
use kwire::decode::sasl::token_frame;
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame, FrameKind, Value};
use kwire::render::digits::{push_int, push_uint};
use kwire::text::escape::sanitize;
use kwire::schema::Catalogue;
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};

#[derive(Args, Debug, Clone)]
#[command(after_help = "Examples:\n  kwire capture samples/captures/confluent-kafka.pcap --list\n  kwire capture samples/captures/confluent-kafka.pcap --api Fetch\n  kwire capture samples/captures/kafka-python.pcap --json --error\n  kwire capture samples/captures/lone-response.pcap --port 19092 --guess --list\n  sudo kwire capture -i lo --port 9092 --list                       # live, until Ctrl-C\n  sudo tcpdump -U -w - port 9092 | kwire capture - --format json   # each frame as it completes")]
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
    #[arg(long, value_name = "FILE", requires = "interface", conflicts_with = "file")]
    pub write_pcap: Option<String>,
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
    pub budget: super::decode_cmd::BudgetArgs,
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

struct Filter {
    api: Option<i16>,
    correlation_id: Option<i32>,
    conn: Option<usize>,
    frame: Option<usize>,
    /// Criteria that need the frame's exchange (topic, client id, error, latency).
    exchanges: Option<ExchangeFilter>,
}

impl Filter {
    /// Whether the selection names frames (skip notes are then counted, not shown).
    fn names_frames(&self) -> bool {
        self.api.is_some() || self.correlation_id.is_some() || self.frame.is_some() || self.exchanges.is_some()
    }

    /// Whether any selection was asked for.
    fn selects(&self) -> bool {
        self.names_frames() || self.conn.is_some()
    }

    fn keeps(&self, f: &CapturedFrame) -> bool {
        self.api.is_none_or(|a| f.api_key == Some(a))
            && self.correlation_id.is_none_or(|c| f.correlation_id == Some(c))
            && self.conn.is_none_or(|c| f.conn == c)
            && self.frame.is_none_or(|n| f.index == n)
    }
}

/// Decode a captured frame: requests by their header, responses by their pair
/// (or by the best guess when asked).
pub fn decode_captured(cat: &Catalogue, release: Option<&str>, f: &CapturedFrame, guess: bool, header_only: bool) -> (Frame, Option<String>) {
    decode_captured_as(cat, release, f, guess, DecodeOptions { header_only, ..Default::default() })
}

/// [`decode_captured`] with more options (`values_only` for `--format json`).
/// A SASL token is never decoded: its frame is its size and its bytes.
fn decode_captured_as(cat: &Catalogue, release: Option<&str>, f: &CapturedFrame, guess: bool, base: DecodeOptions) -> (Frame, Option<String>) {
    if let FrameKind::SaslToken { mechanism } = &f.kind {
        return (token_frame(f.bytes.clone(), 0, f.direction, mechanism.clone()), None);
    }
    let mut opts = DecodeOptions { direction: Some(f.direction), release: release.map(str::to_string), ..base };
    let mut note = None;
    if f.direction == Direction::Response {
        match (f.api_key, f.api_version) {
            (Some(k), Some(v)) => {
                opts.api_key = Some(k);
                opts.api_version = Some(v);
            }
            _ if guess => {
                let ranked = guess_response(cat, &f.bytes, release);
                if let Some(best) = ranked.first() {
                    opts.api_key = Some(best.api_key);
                    opts.api_version = Some(best.version);
                    let top: Vec<String> = ranked.iter().take(5).map(|g| format!("{} v{} ({} warnings)", cat.api_name(g.api_key).unwrap_or("?"), g.version, g.warnings)).collect();
                    note = Some(format!("guessed among {} candidates: {}", ranked.len(), top.join(", ")));
                }
            }
            _ => note = Some("no request with this correlation id in the capture (try --guess)".into()),
        }
    }
    (decode_frame(cat, f.bytes.clone(), 0, &opts), note)
}

/// Frames above this size are listed from their header alone.
const LIST_BODY_LIMIT: usize = 16 * 1024;

/// Output buffer: lines go out in large writes, never one by one (a terminal
/// still gets each frame as it is decoded).
const OUT_BUFFER: usize = 1 << 20;

/// The summary at the end of a listing line, written onto `line`.
fn write_summary(frame: &Frame, line: &mut Vec<u8>, quoted: &mut QuotedCache) {
    if let Some(e) = &frame.error {
        line.extend_from_slice(b"!! ");
        line.extend_from_slice(sanitize(&e.to_string()).as_bytes());
        return;
    }
    let mut errors: Vec<&str> = Vec::new();
    let mut client = None;
    frame.root.walk(&mut |n, _| {
        if n.key().is_some_and(|k| k == "ClientId") {
            if let Value::Str(Some(s)) = &n.value {
                client = Some(s.as_str());
            }
        }
        if n.name.ends_with("ErrorCode") && !matches!(n.value, Value::Int(0)) {
            if let Some(note) = &n.note {
                errors.push(note.trim_matches(|c| c == '(' || c == ')'));
            }
        }
    });
    errors.dedup();
    let body_decoded = frame.root.children.len() > 2;
    match (frame.direction, client) {
        (Direction::Request, Some(c)) => {
            line.extend_from_slice(b"client_id=");
            line.extend_from_slice(quoted.get(c).as_bytes());
        }
        (Direction::Request, None) => {}
        (Direction::Response, _) if !body_decoded => line.extend_from_slice(b"(large: body not decoded in the listing; select it with --frame)"),
        (Direction::Response, _) if errors.is_empty() => line.extend_from_slice(b"ok"),
        (Direction::Response, _) => {
            line.extend_from_slice(b"errors: ");
            for (i, e) in errors.iter().enumerate() {
                if i > 0 {
                    line.extend_from_slice(b", ");
                }
                line.extend_from_slice(e.as_bytes());
            }
        }
    }
}

/// The last client id quoted (clients send the same one every time).
#[derive(Default)]
struct QuotedCache {
    raw: String,
    quoted: String,
}

impl QuotedCache {
    fn get(&mut self, s: &str) -> &str {
        if self.raw != s || self.quoted.is_empty() {
            self.raw.clear();
            self.raw.push_str(s);
            self.quoted = kwire::text::escape::quote(s);
        }
        &self.quoted
    }
}

/// `{:>17.6}` of a timestamp: exact, as `format!` rounds it (the value's exact
/// binary expansion to the nearest sixth decimal), with `format!` itself for the
/// cases it does not cover (ties, negative, huge or tiny values).
fn push_timestamp(line: &mut Vec<u8>, x: f64) {
    // People read a date-time; scripts take `"capture": {"time"}` from the JSON.
    if let Some(text) = micros_exact(x).and_then(kwire::protocol::meanings::utc_micros) {
        line.extend_from_slice(text.as_bytes());
        return;
    }
    if let Some(micros) = micros_exact(x) {
        let int = micros / 1_000_000;
        let frac = micros % 1_000_000;
        let int_digits = if int == 0 { 1 } else { int.ilog10() as usize + 1 };
        for _ in int_digits + 7..17 {
            line.push(b' ');
        }
        push_uint(line, int, 0);
        line.push(b'.');
        let mut d = [b'0'; 6];
        let mut f = frac;
        for slot in d.iter_mut().rev() {
            *slot = b'0' + (f % 10) as u8;
            f /= 10;
        }
        line.extend_from_slice(&d);
    } else {
        let _ = write!(line, "{x:>17.6}");
    }
}

/// `x` × 10⁶ rounded to the nearest integer, computed exactly; `None` for a tie
/// or a value outside the plain range.
fn micros_exact(x: f64) -> Option<u64> {
    if !x.is_finite() || x.is_sign_negative() || x >= 1e12 {
        return None;
    }
    if x == 0.0 {
        return Some(0);
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        return None; // subnormal
    }
    let mantissa = u128::from((bits & ((1 << 52) - 1)) | (1 << 52));
    // x = mantissa × 2^shift
    let shift = exp - 1075;
    let n = mantissa * 1_000_000;
    if shift >= 0 {
        return u64::try_from(n << shift).ok();
    }
    let down = (-shift) as u32;
    if down >= 120 {
        return None;
    }
    let q = n >> down;
    let r = n & ((1u128 << down) - 1);
    let half = 1u128 << (down - 1);
    let q = match r.cmp(&half) {
        std::cmp::Ordering::Less => q,
        std::cmp::Ordering::Greater => q + 1,
        std::cmp::Ordering::Equal => return None,
    };
    u64::try_from(q).ok()
}

/// API names by key, looked up once.
struct ApiNames<'c> {
    cat: &'c Catalogue,
    names: Vec<Option<Option<&'c str>>>,
}

impl<'c> ApiNames<'c> {
    fn new(cat: &'c Catalogue) -> Self {
        ApiNames { cat, names: vec![None; 256] }
    }

    fn get(&mut self, key: i16) -> Option<&'c str> {
        let cat = self.cat;
        match usize::try_from(key).ok().and_then(|k| self.names.get_mut(k)) {
            Some(slot) => *slot.get_or_insert_with(|| cat.api_name(key)),
            None => cat.api_name(key),
        }
    }
}

/// The middle of listing lines, `conn 3 10.0.0.1:50000 → 10.0.0.2:9092 `, made
/// once per connection and direction (a small direct-mapped cache: bounded).
struct Endpoints {
    slots: Vec<Option<EndpointsSlot>>,
}

/// Connection, direction, source and destination, and the text for them.
type EndpointsSlot = (usize, Direction, std::net::SocketAddr, std::net::SocketAddr, String);

impl Endpoints {
    const SLOTS: usize = 512;

    fn new() -> Self {
        Endpoints { slots: vec![None; Self::SLOTS] }
    }

    fn get(&mut self, f: &CapturedFrame) -> &str {
        let slot = &mut self.slots[(f.conn * 2 + usize::from(f.direction == Direction::Response)) % Self::SLOTS];
        let hit = matches!(slot, Some((c, d, from, to, _)) if *c == f.conn && *d == f.direction && *from == f.from && *to == f.to);
        if !hit {
            let arrow = if f.direction == Direction::Request { "→" } else { "←" };
            let (client, server) = if f.direction == Direction::Request { (f.from, f.to) } else { (f.to, f.from) };
            *slot = Some((f.conn, f.direction, f.from, f.to, format!("conn {} {client} {arrow} {server} ", f.conn)));
        }
        slot.as_ref().map_or("", |s| s.4.as_str())
    }
}

/// Stdout behind a large buffer; to a terminal, flushed after every frame.
struct Out<'a> {
    w: std::io::BufWriter<std::io::StdoutLock<'a>>,
    /// Write out at the end of each frame (a terminal, or a streamed input).
    terminal: bool,
}

impl Write for Out<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.w.write_all(buf)
    }
    /// Only at the end of a frame, and only to a terminal (`write_frames` flushes after each call).
    fn flush(&mut self) -> std::io::Result<()> {
        if self.terminal {
            self.w.flush()
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

pub fn run(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs) -> i32 {
    if let Some(iface) = &args.interface {
        return super::capture_live::run(cat, release, args, iface);
    }
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
pub fn run_on(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs, api: Option<i16>, capture: Vec<u8>) -> i32 {
    run_selected(cat, release, args, ExchangeFilter { api, ..Default::default() }, Source::Memory(bytes::Bytes::from(capture)))
}

/// A capture streamed from elsewhere in the process (the proxy's traffic),
/// read once as it comes.
pub fn run_on_stream(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs, input: Box<dyn std::io::Read>) -> i32 {
    let selection = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    run_selected(cat, release, args, selection, Source::Stream(RefCell::new(Some(input))))
}

/// Where a capture is read from: standard input or a stream once, a file or
/// bytes in memory as often as needed.
enum Source<'a> {
    Stdin,
    File(&'a str),
    Memory(bytes::Bytes),
    Stream(RefCell<Option<Box<dyn std::io::Read>>>),
}

impl Source<'_> {
    /// Whether a second reading gives the same bytes (not a pipe or a FIFO).
    fn rereadable(&self) -> bool {
        match self {
            Source::Stdin | Source::Stream(_) => false,
            Source::File(path) => std::fs::metadata(path).is_ok_and(|m| m.is_file()),
            Source::Memory(_) => true,
        }
    }

    fn open(&self) -> Result<Box<dyn std::io::Read>, i32> {
        match self {
            Source::Stdin => super::open_input("-"),
            Source::File(path) => super::open_input(path),
            Source::Memory(b) => Ok(Box::new(std::io::Cursor::new(b.clone()))),
            Source::Stream(s) => s.borrow_mut().take().ok_or(exit::FAILURE),
        }
    }
}

/// The topic names a capture ties to topic ids, for the notes on TopicId
/// fields. A file or bytes in memory are read twice: a first pass decodes
/// only the responses that tie names to ids (`TopicIdLearner`), so a name
/// learned late in the capture names the frames before it too. Standard
/// input (or a pipe) is read once and never held: the names tied so far
/// name each frame.
struct TopicNames<'c> {
    /// From the first pass.
    whole: TopicIds,
    /// Learned as the capture goes (standard input).
    streaming: Option<RefCell<TopicIdLearner<'c>>>,
}

impl<'c> TopicNames<'c> {
    fn new(cat: &'c Catalogue, release: Option<&str>, source: &Source<'_>, opts: &CaptureOptions, needed: bool) -> Self {
        let mut names = TopicNames { whole: TopicIds::default(), streaming: None };
        if !needed {
            return names;
        }
        if !source.rereadable() {
            names.streaming = Some(RefCell::new(TopicIdLearner::new(cat, release)));
        } else if let Ok(input) = source.open() {
            names.whole = learn_topic_ids(cat, release, input, opts);
        }
        names
    }

    /// Take a frame of the capture (every one, selected or not), before it is shown.
    fn learn(&self, c: &Captured) {
        if let (Some(l), Captured::Frame(f)) = (&self.streaming, c) {
            l.borrow_mut().push(f);
        }
    }

    /// The names for decoding the frame at hand (a shared map: dropped with the
    /// decode options, so that learning goes on in place).
    fn now(&self) -> TopicIds {
        match &self.streaming {
            Some(l) => l.borrow().topic_ids().clone(),
            None => self.whole.clone(),
        }
    }
}

fn run_selected(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs, selection: ExchangeFilter, source: Source<'_>) -> i32 {
    let filter = Filter {
        api: selection.api,
        correlation_id: args.correlation_id,
        conn: selection.conn,
        frame: args.frame,
        exchanges: selection.needs_exchanges().then_some(selection),
    };
    let format = args.output.format();
    // Tree views note each TopicId with its topic; the listing, the grid and the JSON contract show no notes.
    let trees = args.tui || (!args.list && matches!(format, Format::Tree | Format::TreeJson));
    let tls_keylog = match args.tls.load() {
        Ok(k) => k,
        Err(status) => return status,
    };
    let base = CaptureOptions { port: args.port, tls_keylog, ..Default::default() };
    let names = TopicNames::new(cat, release, &source, &base, trees);
    let input = match source.open() {
        Ok(i) => i,
        Err(status) => return status,
    };
    if args.tui {
        return explore_capture(cat, release, args, &filter, input, &names, base);
    }
    let stdout = std::io::stdout();
    let terminal = stdout.is_terminal() || args.streaming || args.is_stdin();
    let mut out = Out { w: std::io::BufWriter::with_capacity(OUT_BUFFER, stdout.lock()), terminal };
    let mut status = exit::OK;
    let mut write_failed = false;
    let mut line: Vec<u8> = Vec::with_capacity(256);
    let mut endpoints = Endpoints::new();
    let mut quoted = QuotedCache::default();
    let mut api_names = ApiNames::new(cat);
    let mut listed = Listed::new();
    // Listings decode bodies only of small frames (for their error summary): the
    // bodies of larger ones are skipped as they arrive, never buffered.
    // (Not when the selection reads bodies: a cut frame keeps its header only.)
    let bodies_needed = filter.exchanges.as_ref().is_some_and(|x| x.needs().topics || x.needs().errors);
    let cut_bodies = (args.list && !bodies_needed).then(|| CutBodies { above: LIST_BODY_LIMIT, release: release.map(str::to_string) });
    let opts = CaptureOptions { cut_bodies, ..base };
    let mut skipped = SkipTally::default();
    let list_color = super::color::stdout();
    // One budget for the whole capture: its frames are dropped as they are
    // written, so what they held goes back; what they decompressed does not.
    let whole_capture = DecodeOptions { budget: args.budget.budget(), ..Default::default() };
    let mut selected = Selection::new(cat, release, &filter);
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
                if write_skipped(&mut out, &s, args.list, format).is_err() {
                    write_failed = true;
                    return false;
                }
                return true;
            }
            Captured::Tls(n) => {
                if filter.conn.is_some_and(|c| c != n.conn) || filter.names_frames() {
                    return true;
                }
                if write_tls(&mut out, &n, args.list, format).is_err() {
                    write_failed = true;
                    return false;
                }
                return true;
            }
        };
        let gap = if f.after_gap { " [after gap]" } else { "" };
        let res = if let (true, Some(mechanism)) = (args.list, f.kind.sasl_mechanism()) {
            // `{:>5} {:>17.6} conn {} {client} {arrow} {server} SASL token ({mechanism}) {}B{gap} auth_bytes={}B`:
            // the token's bytes (a password, for PLAIN) are not shown.
            line.clear();
            push_uint(&mut line, f.index as u64, 5);
            line.push(b' ');
            push_timestamp(&mut line, f.timestamp);
            line.push(b' ');
            line.extend_from_slice(endpoints.get(&f).as_bytes());
            line.extend_from_slice(b"SASL token (");
            line.extend_from_slice(sanitize(mechanism).as_bytes());
            line.extend_from_slice(b") ");
            push_uint(&mut line, f.len as u64, 0);
            line.push(b'B');
            line.extend_from_slice(gap.as_bytes());
            line.extend_from_slice(b" auth_bytes=");
            push_uint(&mut line, f.len.saturating_sub(4) as u64, 0);
            line.extend_from_slice(b"B\n");
            out.write_all(&line).and_then(|_| out.flush())
        } else if args.list {
            let entry = listed.entry(cat, release, &f, args.guess, &mut quoted);
            if entry.error {
                status = exit::MALFORMED;
            }
            // `{:>5} {:>17.6} conn {} {client} {arrow} {server} {api} v{ver} corr={corr} {}B{gap} {summary}`
            line.clear();
            push_uint(&mut line, f.index as u64, 5);
            line.push(b' ');
            push_timestamp(&mut line, f.timestamp);
            line.push(b' ');
            line.extend_from_slice(endpoints.get(&f).as_bytes());
            line.extend_from_slice(entry.api_key.and_then(|k| api_names.get(k)).unwrap_or("?").as_bytes());
            line.extend_from_slice(b" v");
            match entry.api_version {
                Some(v) => push_int(&mut line, v.into()),
                None => line.push(b'?'),
            }
            line.extend_from_slice(b" corr=");
            match f.correlation_id {
                Some(c) => push_int(&mut line, c.into()),
                None => line.push(b'?'),
            }
            line.push(b' ');
            push_uint(&mut line, f.len as u64, 0);
            line.push(b'B');
            line.extend_from_slice(gap.as_bytes());
            line.push(b' ');
            // A frame that did not decode stands out on a terminal.
            let red = entry.error && list_color;
            if red {
                line.extend_from_slice(b"\x1b[1;31m");
            }
            line.extend_from_slice(&entry.summary);
            if red {
                line.extend_from_slice(b"\x1b[0m");
            }
            line.push(b'\n');
            out.write_all(&line).and_then(|_| out.flush())
        } else {
            // The JSON contract needs values only (records stay hex).
            let values_only = format == Format::Json;
            let (frame, note) = decode_captured_as(cat, release, &f, args.guess, DecodeOptions { values_only, topic_ids: names.now(), ..whole_capture.clone() });
            if frame.error.is_some() {
                status = exit::MALFORMED;
            }
            for e in &frame.record_damage {
                eprintln!("kwire: frame {}: record data: {}", f.index, sanitize(&e.to_string()));
                status = exit::MALFORMED;
            }
            write_decoded(&mut out, &f, &frame, note.as_deref(), format, args.output.full_docs, gap, args.provenance)
        };
        if res.is_err() {
            write_failed = true;
            return false;
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
    if out.w.flush().is_err() {
        write_failed = true;
    }
    match stats {
        Ok(s) => {
            if let Some(e) = &s.error {
                eprintln!("kwire: capture cut short after {} packets: {e}", s.packets);
                status = exit::MALFORMED;
            }
            if s.frames == 0 && s.skips == 0 && s.tls.connections == 0 && !write_failed {
                eprintln!("kwire: no Kafka traffic found in {} packets ({} TCP segments); try --port", s.packets, s.tcp_segments);
                return exit::FAILURE;
            }
            if super::tls_args::report(&s.tls) {
                status = exit::MALFORMED;
            }
            if skipped.count > 0 {
                skipped.report(if filter.names_frames() { "; their notes are shown without --api, --correlation-id, --frame, --topic, --client-id, --error and --min-latency" } else { "; see the skipped notes" });
                status = exit::MALFORMED;
            }
            if filter.selects() && selected.shown == 0 && !write_failed {
                eprintln!("kwire: no frame matches {}", selected.describe(args));
                if status == exit::OK {
                    status = exit::FAILURE;
                }
            }
            status
        }
        Err(e) => {
            eprintln!("kwire: {}: {}", args.input_name(), sanitize(&e));
            exit::FAILURE
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
        eprintln!("kwire: {} bytes in {} {places} are in no frame (gaps, partial frames or bytes passed over){shown}", self.bytes, self.count);
    }
}

/// A skip note: a listing line, a `# skipped` line before trees, or a JSON
/// record (`"kind":"skipped"`) among the frames' objects.
fn write_skipped(out: &mut Out<'_>, s: &Skipped, list: bool, format: Format) -> std::io::Result<()> {
    let request = s.direction == Direction::Request;
    let arrow = if request { "→" } else { "←" };
    let (client, server) = if request { (s.from, s.to) } else { (s.to, s.from) };
    let what = s.reason.describe();
    if list {
        let mut line = Vec::with_capacity(160);
        line.extend_from_slice(b"    - ");
        push_timestamp(&mut line, s.timestamp);
        let _ = writeln!(line, " conn {} {client} {arrow} {server} skipped {}B at stream offset {}: {what}", s.conn, s.bytes, s.offset);
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
        writeln!(out, "# skipped conn {} {client} {arrow} {server} at {:.6}: {} bytes at stream offset {}: {what}", s.conn, s.timestamp, s.bytes, s.offset)?;
    }
    out.flush()
}

/// A TLS note: a listing line (`  tls` for the frame number), a `# tls`
/// line before trees, or a JSON object of its own kind (`"kind":"tls"`,
/// `"kind":"tls_stopped"`) among the frames' objects.
fn write_tls(out: &mut Out<'_>, n: &TlsNote, list: bool, format: Format) -> std::io::Result<()> {
    let what = kwire::render::tls::describe(n);
    let arrow = match &n.event {
        kwire::capture::tls::TlsEvent::Stopped { direction: Direction::Response, .. } => "←",
        _ => "→",
    };
    if list {
        let mut line = Vec::with_capacity(200);
        line.extend_from_slice(b"  tls ");
        push_timestamp(&mut line, n.timestamp);
        let _ = writeln!(line, " conn {} {} {arrow} {} {what}", n.conn, n.client, n.server);
        out.write_all(&line)?;
    } else if matches!(format, Format::Json | Format::TreeJson) {
        out.write_all(kwire::render::json::to_text(&kwire::render::tls::json(n)).as_bytes())?;
        out.write_all(b"\n")?;
    } else {
        writeln!(out, "# tls conn {} {} {arrow} {} at {:.6}: {what}", n.conn, n.client, n.server, n.timestamp)?;
    }
    out.flush()
}

/// One decoded frame as JSON (one object per line) or as a tree or grid under a
/// `# frame` line.
#[allow(clippy::too_many_arguments)]
fn write_decoded(out: &mut Out<'_>, f: &CapturedFrame, frame: &Frame, note: Option<&str>, format: Format, full_docs: bool, gap: &str, provenance: bool) -> std::io::Result<()> {
    if matches!(format, Format::Json | Format::TreeJson) {
        // JSON stays one object per line for scripts; where it came from goes to stderr.
        if let Some(n) = note {
            // Keep the note next to its frame's line when both go to one place.
            let _ = out.w.flush();
            eprintln!("kwire: frame {}: {n}", f.index);
        }
        if format == Format::Json {
            let mut line = Vec::with_capacity(2 * frame.bytes.len() + 256);
            kwire::render::json::write_contract(frame, &mut line);
            if provenance {
                add_capture_member(&mut line, f);
            }
            line.push(b'\n');
            out.write_all(&line)?;
        } else if provenance {
            // Streamed as it is written (a tree's JSON can be far larger than
            // its frame); only its closing `}\n` is held back to add the member.
            let mut held = HoldBack { inner: &mut *out, tail: Vec::with_capacity(HoldBack::<Out>::KEEP) };
            kwire::render::tree_json::write_frame_tree_json(&mut held, frame)?;
            let mut tail = std::mem::take(&mut held.tail);
            if tail.last() == Some(&b'\n') {
                tail.pop();
            }
            add_capture_member(&mut tail, f);
            tail.push(b'\n');
            out.write_all(&tail)?;
        } else {
            kwire::render::tree_json::write_frame_tree_json(&mut *out, frame)?;
        }
        out.flush()
    } else {
        let arrow = if f.direction == Direction::Request { "→" } else { "←" };
        let (client, server) = if f.direction == Direction::Request { (f.from, f.to) } else { (f.to, f.from) };
        writeln!(out, "# frame {} conn {} {client} {arrow} {server} at {:.6}{gap}", f.index, f.conn, f.timestamp)?;
        if let Some(n) = note {
            writeln!(out, "# {n}")?;
        }
        write_frames(out, std::slice::from_ref(frame), format, full_docs, None)
    }
}

/// `,"capture":{"frame","time","conn","src","dst"}` added as the last member
/// of the JSON object in `line`: where the frame came from (its number as
/// `--list` shows it, the time of the packet that completed it, epoch seconds
/// to the microsecond).
fn add_capture_member(line: &mut Vec<u8>, f: &CapturedFrame) {
    if line.last() != Some(&b'}') {
        return;
    }
    line.pop();
    line.extend_from_slice(b",\"capture\":{\"frame\":");
    push_uint(line, f.index as u64, 0);
    line.extend_from_slice(b",\"time\":");
    match micros_exact(f.timestamp) {
        Some(us) => {
            push_uint(line, us / 1_000_000, 0);
            line.push(b'.');
            let mut digits = [b'0'; 6];
            let mut frac = us % 1_000_000;
            for d in digits.iter_mut().rev() {
                *d = b'0' + (frac % 10) as u8;
                frac /= 10;
            }
            line.extend_from_slice(&digits);
        }
        None if f.timestamp.is_finite() => {
            let _ = write!(line, "{:.6}", f.timestamp);
        }
        None => line.extend_from_slice(b"null"),
    }
    line.extend_from_slice(b",\"conn\":");
    push_uint(line, f.conn as u64, 0);
    // Socket addresses are digits, dots, colons and brackets: nothing to escape.
    let _ = write!(line, ",\"src\":\"{}\",\"dst\":\"{}\"}}}}", f.from, f.to);
}

/// A writer passing everything on to `inner` but its last `KEEP` bytes,
/// which stay in `tail` (a JSON object's closing, to reopen it).
struct HoldBack<'w, W: Write> {
    inner: &'w mut W,
    tail: Vec<u8>,
}

impl<W: Write> HoldBack<'_, W> {
    const KEEP: usize = 2;
}

impl<W: Write> Write for HoldBack<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() >= Self::KEEP {
            let (pass, keep) = buf.split_at(buf.len() - Self::KEEP);
            self.inner.write_all(&self.tail)?;
            self.inner.write_all(pass)?;
            self.tail.clear();
            self.tail.extend_from_slice(keep);
        } else {
            self.tail.extend_from_slice(buf);
            let over = self.tail.len().saturating_sub(Self::KEEP);
            self.inner.write_all(&self.tail[..over])?;
            self.tail.drain(..over);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// What `capture` keeps with a request until its exchange is decided.
enum Mark {
    /// Shown when it came; its response follows it.
    Shown,
    /// Not selected, nor its response.
    Dropped,
    /// Waiting for its response to decide.
    Held(CapturedFrame),
}

/// Frames selected by their exchange, ready to show in the order decided: a
/// request held until its response decides comes out just before it.
struct Selector<'f> {
    filter: &'f ExchangeFilter,
    /// The frame being taken.
    current: Option<CapturedFrame>,
    ready: Vec<CapturedFrame>,
}

impl Observer for Selector<'_> {
    type Mark = Mark;

    fn request(&mut self, ex: &Exchange<'_>) -> Mark {
        let Some(f) = self.current.take() else { return Mark::Dropped };
        match self.filter.decide(ex) {
            Some(true) => {
                self.ready.push(f);
                Mark::Shown
            }
            Some(false) => Mark::Dropped,
            None => Mark::Held(f),
        }
    }

    fn complete(&mut self, ex: &Exchange<'_>, mark: Option<Mark>) {
        // The frame being taken is this exchange's response, if it has one
        // (an unanswered request completes without).
        let response = if ex.response.is_some() { self.current.take() } else { None };
        match mark {
            Some(Mark::Shown) => self.ready.extend(response),
            Some(Mark::Dropped) => {}
            Some(Mark::Held(request)) => {
                if self.filter.decide(ex) == Some(true) {
                    self.ready.push(request);
                    self.ready.extend(response);
                }
            }
            None => {
                if self.filter.decide(ex) == Some(true) {
                    self.ready.extend(response);
                }
            }
        }
    }
}

/// The frames the selection keeps, handed on in order, and every skip note.
struct Selection<'c, 'f> {
    filter: &'f Filter,
    exchanges: Option<(Exchanges<'c, Mark>, Selector<'f>)>,
    /// Frames handed on.
    shown: usize,
}

impl<'c, 'f> Selection<'c, 'f> {
    fn new(cat: &'c Catalogue, release: Option<&str>, filter: &'f Filter) -> Self {
        let exchanges = filter.exchanges.as_ref().map(|x| (Exchanges::new(cat, release, x.needs()), Selector { filter: x, current: None, ready: Vec::new() }));
        Selection { filter, exchanges, shown: 0 }
    }

    /// Take what the capture hands on: a skip note goes on at once, a frame
    /// when its exchange is decided. False when `each` asks to stop.
    fn take(&mut self, c: Captured, each: &mut impl FnMut(Captured) -> bool) -> bool {
        let f = match c {
            Captured::Frame(f) => f,
            Captured::Skipped(s) => {
                if let Some((tracker, _)) = &mut self.exchanges {
                    tracker.saw(s.timestamp);
                }
                return each(Captured::Skipped(s));
            }
            Captured::Tls(n) => {
                if let Some((tracker, _)) = &mut self.exchanges {
                    tracker.saw(n.timestamp);
                }
                return each(Captured::Tls(n));
            }
        };
        match &mut self.exchanges {
            None if self.filter.keeps(&f) => {
                self.shown += 1;
                each(Captured::Frame(f))
            }
            None => true,
            Some((tracker, selector)) => {
                selector.current = Some(f.clone());
                tracker.push(&f, selector);
                selector.current = None;
                self.hand_on(each)
            }
        }
    }

    /// The capture ended: requests still held are decided as never answered.
    fn finish(&mut self, each: &mut impl FnMut(Captured) -> bool) -> bool {
        if let Some((tracker, selector)) = &mut self.exchanges {
            tracker.finish(selector);
        }
        self.hand_on(each)
    }

    fn hand_on(&mut self, each: &mut impl FnMut(Captured) -> bool) -> bool {
        let Some((_, selector)) = &mut self.exchanges else { return true };
        for f in selector.ready.drain(..) {
            if !self.filter.keeps(&f) {
                continue;
            }
            self.shown += 1;
            if !each(Captured::Frame(f)) {
                return false;
            }
        }
        true
    }

    /// The selection as given on the command line, for messages.
    fn describe(&self, args: &CaptureArgs) -> String {
        let mut parts = vec![args.filter.describe()];
        if let Some(c) = args.correlation_id {
            parts.push(format!("--correlation-id {c}"));
        }
        if let Some(n) = args.frame {
            parts.push(format!("--frame {n}"));
        }
        if args.filter.api.is_none() {
            if let Some(k) = self.filter.api {
                parts.push(format!("--api {k}"));
            }
        }
        parts.retain(|p| !p.is_empty());
        parts.join(" ")
    }
}

/// What a listing line says of a frame after its timestamp and endpoints.
#[derive(Clone, Debug, Default)]
struct ListEntry {
    api_key: Option<i16>,
    api_version: Option<i16>,
    /// The frame did not decode (the exit status says so).
    error: bool,
    summary: Vec<u8>,
}

/// Listing entries, decoded once per distinct small frame: a frame's entry
/// depends only on its bytes (its correlation id aside), its direction and the
/// request it answers, and clients send the same small frames again and again
/// (heartbeats, metadata, offset commits). Bounded: small frames only, and the
/// memo starts over when full.
struct Listed {
    memo: HashMap<Vec<u8>, ListEntry>,
    key: Vec<u8>,
    last: ListEntry,
}

impl Listed {
    /// Frames up to this size are remembered.
    const MEMO_FRAME: usize = 512;
    const MEMO_ENTRIES: usize = 4096;

    fn new() -> Self {
        Listed { memo: HashMap::new(), key: Vec::with_capacity(Self::MEMO_FRAME + 8), last: ListEntry::default() }
    }

    fn entry(&mut self, cat: &Catalogue, release: Option<&str>, f: &CapturedFrame, guess: bool, quoted: &mut QuotedCache) -> &ListEntry {
        let memo = !f.is_cut() && f.bytes.len() <= Self::MEMO_FRAME;
        if memo {
            // The key: direction, the paired request, the bytes with the correlation id blanked.
            self.key.clear();
            self.key.push(u8::from(f.direction == Direction::Request));
            for v in [f.api_key, f.api_version] {
                self.key.push(u8::from(v.is_some()));
                self.key.extend_from_slice(&v.unwrap_or(0).to_be_bytes());
            }
            self.key.extend_from_slice(&f.bytes);
            let corr_at = 8 + if f.direction == Direction::Request { 8 } else { 4 };
            if let Some(c) = self.key.get_mut(corr_at..corr_at + 4) {
                c.fill(0);
            }
            if self.memo.contains_key(&self.key[..]) {
                return &self.memo[&self.key[..]];
            }
        }
        let header_only = f.len > LIST_BODY_LIMIT;
        let (frame, _) = if f.is_cut() {
            // Its header, decoded from the prefix kept.
            let head = CapturedFrame { bytes: complete_prefix(&f.bytes), ..f.clone() };
            decode_captured(cat, release, &head, guess, header_only)
        } else {
            decode_captured(cat, release, f, guess, header_only)
        };
        self.last.api_key = frame.api_key;
        self.last.api_version = frame.api_version;
        self.last.summary.clear();
        if f.direction == Direction::Response && f.api_key.is_none() && frame.api_key.is_none() {
            // A response whose request is not in the capture (it started
            // mid-connection): not malformed, but nothing names its API.
            self.last.error = false;
            self.last.summary.extend_from_slice(b"unmatched response: its request is not in the capture (--guess names the likely API)");
        } else {
            self.last.error = frame.error.is_some();
            write_summary(&frame, &mut self.last.summary, quoted);
        }
        if !memo {
            return &self.last;
        }
        if self.memo.len() >= Self::MEMO_ENTRIES {
            self.memo.clear();
        }
        self.memo.entry(self.key.clone()).or_insert_with(|| self.last.clone())
    }
}

/// `--tui`: decode the selected frames, then explore them.
fn explore_capture(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs, filter: &Filter, input: Box<dyn std::io::Read>, names: &TopicNames<'_>, opts: CaptureOptions) -> i32 {
    let mut frames = Vec::new();
    let mut skipped = SkipTally::default();
    // The explorer holds every frame: their expanded share stays held, within one budget.
    let whole_capture = DecodeOptions { budget: args.budget.budget(), ..Default::default() };
    let mut selected = Selection::new(cat, release, filter);
    let mut handle = |c| {
        match c {
            Captured::Frame(f) => {
                let (frame, _) = decode_captured_as(cat, release, &f, args.guess, DecodeOptions { topic_ids: names.now(), ..whole_capture.clone() });
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
            super::tls_args::report(&s.tls);
            eprintln!("kwire: no Kafka frames selected in {}", args.input_name());
            exit::FAILURE
        }
        Ok(s) => {
            let mut status = super::tui_cmd::explore(cat, release.map(str::to_string), frames);
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
            eprintln!("kwire: {}: {}", args.input_name(), sanitize(&e));
            exit::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_print_as_format_does() {
        let mut rng: u64 = 0x1234_5678_9abc_def1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // The microseconds are those `format!` rounds to; the listing writes
        // them as a UTC date-time, or as `format!` does past what it can date.
        let check = |x: f64| {
            let mut line = Vec::new();
            push_timestamp(&mut line, x);
            let line = String::from_utf8(line).unwrap();
            match micros_exact(x).and_then(kwire::protocol::meanings::utc_micros) {
                Some(date) => {
                    let us = micros_exact(x).unwrap_or_default();
                    assert_eq!(format!("{}.{:06}", us / 1_000_000, us % 1_000_000), format!("{x:.6}"), "{x:e}");
                    assert_eq!(line, date, "{x:e}");
                }
                None => assert_eq!(line, format!("{x:>17.6}"), "{x:e}"),
            }
        };
        for _ in 0..20_000 {
            let r = next();
            check(f64::from((r >> 32) as u32) + f64::from(r as u32 % 1_000_000) / 1e6);
            check(f64::from((r >> 32) as u32) + f64::from(r as u32 % 1_000_000_000) / 1e9);
            check(f64::from_bits(next() >> 2));
            check((next() % 10_000_000) as f64 / 8.0 / 1e6); // ties
        }
        for x in [0.0, 0.5, 5e-7, 1700000000.04, 999999.9999995, 1e11, 123456789012.5, 1e300, 5e-324] {
            check(x);
        }
    }

    #[test]
    fn hold_back_passes_on_all_but_the_last_two_bytes() {
        let text = b"{\"a\":[1,2,3],\"b\":\"x\"}\n";
        for split in [1, 2, 3, 5, text.len()] {
            let mut sink = Vec::new();
            let mut held = HoldBack { inner: &mut sink, tail: Vec::new() };
            for chunk in text.chunks(split) {
                held.write_all(chunk).unwrap();
            }
            let tail = std::mem::take(&mut held.tail);
            assert_eq!((sink.as_slice(), tail.as_slice()), (&text[..text.len() - 2], &b"}\n"[..]), "writes of {split}");
        }
    }

    #[test]
    fn numbers_print_as_format_does() {
        for n in [0u64, 7, 42, 12345, 123456, u64::MAX] {
            let mut line = Vec::new();
            push_uint(&mut line, n, 5);
            assert_eq!(String::from_utf8(line).unwrap(), format!("{n:>5}"));
        }
        for n in [0i64, -1, 2147483647, -2147483648, i64::MIN] {
            let mut line = Vec::new();
            push_int(&mut line, n);
            assert_eq!(String::from_utf8(line).unwrap(), n.to_string());
        }
    }
}
