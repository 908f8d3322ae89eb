//! `kwire capture FILE`: every Kafka frame in a pcap/pcapng, paired and decoded.

use super::decode_cmd::{write_frames, Format, OutputArgs};
use super::{exit, resolve_api_or_report};
use clap::Args;
use kwire::capture::{for_each_frame, CapturedFrame};
use kwire::decode::guess::guess_response;
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame, Value};
use kwire::render::escape::sanitize;
use kwire::schema::Catalogue;
use std::io::Write;

#[derive(Args, Debug, Clone)]
pub struct CaptureArgs {
    /// pcap or pcapng file; `-` for standard input.
    pub file: String,
    /// One line per frame instead of decoded trees.
    #[arg(long)]
    pub list: bool,
    /// Only frames of this API (name or key).
    #[arg(long)]
    pub api: Option<String>,
    /// Only frames with this correlation id.
    #[arg(long)]
    pub correlation_id: Option<i32>,
    /// Only frames of this connection (the number in --list).
    #[arg(long)]
    pub conn: Option<usize>,
    /// Only the frame with this number (the first column of --list).
    #[arg(long)]
    pub frame: Option<usize>,
    /// The broker's port: the side sending to it carries requests (default: found by plausibility).
    #[arg(long)]
    pub port: Option<u16>,
    /// Decode responses without a request in the capture by the best-ranked guess.
    #[arg(long)]
    pub guess: bool,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Open the selected frames in the terminal explorer.
    #[arg(long, conflicts_with_all = ["list", "format", "json", "full_docs"])]
    pub tui: bool,
}

struct Filter {
    api: Option<i16>,
    correlation_id: Option<i32>,
    conn: Option<usize>,
    frame: Option<usize>,
}

impl Filter {
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
    let mut opts = DecodeOptions { direction: Some(f.direction), release: release.map(str::to_string), header_only, ..Default::default() };
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

fn summary(frame: &Frame) -> String {
    if let Some(e) = &frame.error {
        return format!("!! {}", sanitize(&e.to_string()));
    }
    let mut errors = Vec::new();
    let mut client = None;
    frame.root.walk(&mut |n, _| {
        if n.key().is_some_and(|k| k == "ClientId") {
            if let Value::Str(Some(s)) = &n.value {
                client = Some(s.clone());
            }
        }
        if n.name.ends_with("ErrorCode") && !matches!(n.value, Value::Int(0)) {
            if let Some(note) = &n.note {
                errors.push(note.trim_matches(|c| c == '(' || c == ')').to_string());
            }
        }
    });
    errors.dedup();
    let body_decoded = frame.root.children.len() > 2;
    match (frame.direction, client) {
        (Direction::Request, Some(c)) => format!("client_id={}", kwire::render::escape::quote(&c)),
        (Direction::Request, None) => String::new(),
        (Direction::Response, _) if !body_decoded => "(large: body not decoded in the listing; select it with --frame)".into(),
        (Direction::Response, _) if errors.is_empty() => "ok".into(),
        (Direction::Response, _) => format!("errors: {}", errors.join(", ")),
    }
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs) -> i32 {
    let api = match &args.api {
        Some(a) => match resolve_api_or_report(cat, a) {
            Some(k) => Some(k),
            None => return exit::FAILURE,
        },
        None => None,
    };
    let input: Box<dyn std::io::Read> = if args.file == "-" {
        Box::new(std::io::stdin())
    } else {
        match std::fs::File::open(&args.file) {
            Ok(f) => Box::new(std::io::BufReader::with_capacity(1 << 20, f)),
            Err(e) => {
                eprintln!("kwire: {}: {e}", args.file);
                return exit::FAILURE;
            }
        }
    };
    run_on(cat, release, args, api, input)
}

/// Decode a capture already opened (`kwire decode` hands pcaps over here).
pub fn run_on(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs, api: Option<i16>, input: Box<dyn std::io::Read>) -> i32 {
    let filter = Filter { api, correlation_id: args.correlation_id, conn: args.conn, frame: args.frame };
    if args.tui {
        return explore_capture(cat, release, args, &filter, input);
    }
    let format = args.output.format();
    let mut out = std::io::stdout().lock();
    let mut status = exit::OK;
    let mut write_failed = false;
    let stats = for_each_frame(cat, input, args.port, |f| {
        if !filter.keeps(&f) {
            return true;
        }
        // Listings decode bodies only of small frames (for their error summary).
        let header_only = args.list && f.bytes.len() > LIST_BODY_LIMIT;
        let (frame, note) = decode_captured(cat, release, &f, args.guess, header_only);
        if frame.error.is_some() {
            status = exit::MALFORMED;
        }
        let arrow = if f.direction == Direction::Request { "→" } else { "←" };
        let (client, server) = if f.direction == Direction::Request { (f.from, f.to) } else { (f.to, f.from) };
        let api = frame.api_key.and_then(|k| cat.api_name(k)).unwrap_or("?");
        let ver = frame.api_version.map_or("?".to_string(), |v| v.to_string());
        let corr = f.correlation_id.map_or("?".to_string(), |c| c.to_string());
        let gap = if f.after_gap { " [after gap]" } else { "" };
        let res = if args.list {
            writeln!(out, "{:>5} {:>17.6} conn {} {client} {arrow} {server} {api} v{ver} corr={corr} {}B{gap} {}", f.index, f.timestamp, f.conn, f.bytes.len(), summary(&frame))
        } else if matches!(format, Format::Json | Format::TreeJson) {
            // JSON stays one object per line for scripts; where it came from goes to stderr.
            if let Some(n) = &note {
                eprintln!("kwire: frame {}: {n}", f.index);
            }
            write_frames(&mut out, std::slice::from_ref(&frame), format, args.output.full_docs, None)
        } else {
            let head = writeln!(out, "# frame {} conn {} {client} {arrow} {server} at {:.6}{gap}", f.index, f.conn, f.timestamp);
            let note = match &note {
                Some(n) => writeln!(out, "# {n}"),
                None => Ok(()),
            };
            head.and(note).and_then(|_| write_frames(&mut out, std::slice::from_ref(&frame), format, args.output.full_docs, None))
        };
        if res.is_err() {
            write_failed = true;
            return false;
        }
        true
    });
    match stats {
        Ok(s) => {
            if let Some(e) = &s.error {
                eprintln!("kwire: capture cut short after {} packets: {e}", s.packets);
                status = exit::MALFORMED;
            }
            if s.frames == 0 && !write_failed {
                eprintln!("kwire: no Kafka traffic found in {} packets ({} TCP segments); try --port", s.packets, s.tcp_segments);
                return exit::FAILURE;
            }
            status
        }
        Err(e) => {
            eprintln!("kwire: {}: {e}", args.file);
            exit::FAILURE
        }
    }
}

/// `--tui`: decode the selected frames, then explore them.
fn explore_capture(cat: &Catalogue, release: Option<&str>, args: &CaptureArgs, filter: &Filter, input: Box<dyn std::io::Read>) -> i32 {
    let mut frames = Vec::new();
    let stats = for_each_frame(cat, input, args.port, |f| {
        if filter.keeps(&f) {
            let (frame, _) = decode_captured(cat, release, &f, args.guess, false);
            frames.push(frame);
        }
        true
    });
    match stats {
        Ok(_) if frames.is_empty() => {
            eprintln!("kwire: no Kafka frames selected in {}", args.file);
            exit::FAILURE
        }
        Ok(_) => super::tui_cmd::explore(cat, release.map(str::to_string), frames),
        Err(e) => {
            eprintln!("kwire: {}: {e}", args.file);
            exit::FAILURE
        }
    }
}
