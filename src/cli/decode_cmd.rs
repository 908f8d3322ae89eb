//! `kwire decode`: frames from hex or binary, shown as tree, grid or JSON.
//! Its input options and reading are shared with `kwire tui`.

use super::exit;
use clap::{Args, ValueEnum};
use kwire::decode::{decode_frames, DecodeOptions, Direction, Frame};
use kwire::input::{read_source, to_bytes, InputKind};
use kwire::render::{grid, json, text_tree};
use kwire::schema::{Catalogue, MessageKind};
use kwire::teach::explain::render_explained;
use std::io::{IsTerminal, Write};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// The object tree, as on the seed pages.
    Tree,
    /// The byte layout: 16 bytes per row, coloured by region.
    Grid,
    /// Values only, keyed by schema field names (the JSON contract).
    Json,
    /// Every node with offset, length, value, note and region.
    TreeJson,
}

/// Where the frames come from and how to decode them (`decode` and `tui`).
#[derive(Args, Debug)]
pub struct InputArgs {
    /// Input file (hex text or binary); `-` or nothing for standard input.
    #[arg(default_value = "-")]
    pub file: String,
    /// The input is raw bytes, not hex text.
    #[arg(long, conflicts_with = "hex")]
    pub binary: bool,
    /// The input is hex text (default: detected).
    #[arg(long)]
    pub hex: bool,
    /// The frames are requests (default).
    #[arg(long, conflicts_with = "response")]
    pub request: bool,
    /// The frames are responses: needs --api and --version.
    #[arg(long)]
    pub response: bool,
    /// API name or key (required for responses; checked against a request's header).
    #[arg(long, value_name = "NAME|KEY")]
    pub api: Option<String>,
    /// API version (required for responses; checked against a request's header).
    #[arg(long, value_name = "N")]
    pub version: Option<i16>,
    /// Topic of the records, to decode internal topics' keys and values
    /// (__consumer_offsets, __share_group_state, __transaction_state, __cluster_metadata).
    #[arg(long)]
    pub topic: Option<String>,
    /// How frames are delimited: `auto` takes bytes that are no size-prefixed
    /// frames but read cleanly as one frame without its 4-byte size prefix
    /// for that frame (and says so); `prefixed` reads them as given; `bare`
    /// adds the prefix.
    #[arg(long, value_enum, default_value_t = FramingArg::Auto)]
    pub framing: FramingArg,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// `--framing`, as [`kwire::input::framing::Framing`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FramingArg {
    Auto,
    Prefixed,
    Bare,
}

/// What one input may cost (see `kwire::budget`).
#[derive(Args, Debug, Clone)]
pub struct BudgetArgs {
    /// Total bytes that decompressing record data may produce for this input
    /// (all batches and nested wrappers together); K, M, G suffixes allowed.
    #[arg(long, value_name = "BYTES", default_value = "256M", value_parser = kwire::budget::parse_bytes)]
    pub max_decompressed: u64,
    /// Bytes of decompressed data and the tree built from it held at once.
    #[arg(long, value_name = "BYTES", default_value = "12M", value_parser = kwire::budget::parse_bytes)]
    pub max_expanded: u64,
}

impl BudgetArgs {
    pub fn budget(&self) -> kwire::budget::Budget {
        kwire::budget::Budget::new(kwire::budget::Limits {
            decompressed: self.max_decompressed,
            expanded: self.max_expanded,
        })
    }
}

/// How decoded frames are printed (`decode` and `capture`).
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    #[arg(long, value_enum, default_value_t = Format::Tree)]
    pub format: Format,
    /// Same as --format json.
    #[arg(long)]
    pub json: bool,
    /// Show descriptions in full in the tree.
    #[arg(long)]
    pub full_docs: bool,
}

impl OutputArgs {
    pub fn format(&self) -> Format {
        if self.json {
            Format::Json
        } else {
            self.format
        }
    }
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire decode samples/produce-v9-request.hex\n  kwire decode --format grid samples/join-group-v9-request.hex\n  kwire decode --json samples/produce-v9-request.hex | kwire encode\n  kwire decode --response --api Fetch --version 12 samples/fetch-v12-response.hex\n  kwire decode --explain samples/join-group-v9-request.hex"
)]
pub struct DecodeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// For a capture: decrypt TLS connections with this key log (see `kwire capture`).
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Under every node of the tree, how its bytes make its value.
    #[arg(long, conflicts_with = "json")]
    pub explain: bool,
    /// Decode the input as this record type with its log prefix (e.g. OffsetCommitValue,
    /// ShareSnapshotValue, TopicRecord) instead of as request/response frames.
    #[arg(long = "type", value_name = "RECORD_TYPE", conflicts_with = "tui")]
    pub record_type: Option<String>,
    /// Open the terminal explorer instead of printing (same as `kwire tui`).
    #[arg(long, conflicts_with_all = ["format", "json", "full_docs", "explain"])]
    pub tui: bool,
}

/// The decode options the input arguments ask for, checked against the
/// catalogue. On failure the reason is printed and the exit status returned.
pub fn decode_options(
    cat: &Catalogue,
    release: Option<&str>,
    args: &InputArgs,
) -> Result<DecodeOptions, i32> {
    let api_key = match &args.api {
        None => None,
        Some(a) => Some(super::resolve_api_or_report(cat, a).ok_or(exit::FAILURE)?),
    };
    let direction = if args.response {
        Direction::Response
    } else {
        Direction::Request
    };
    if direction == Direction::Response {
        let (Some(k), Some(v)) = (api_key, args.version) else {
            kwire::stderr_line!("kwire: a response does not name its API or version: give --api NAME and --version N");
            return Err(exit::USAGE);
        };
        let versions = cat.versions(MessageKind::Response, k, release);
        if !versions.contains(&v) {
            kwire::stderr_line!(
                "kwire: {} has no response version {v}; valid: {}",
                cat.api_name(k).unwrap_or("?"),
                kwire::decode::frame::compress_versions(&versions)
            );
            return Err(exit::FAILURE);
        }
    }
    Ok(DecodeOptions {
        direction: Some(direction),
        api_key,
        api_version: args.version,
        release: release.map(str::to_string),
        topic: args.topic.clone(),
        budget: args.budget.budget(),
        header_only: false,
        values_only: false,
        annotated_tape: false,
        topic_ids: Default::default(),
        findings_only: false,
    })
}

/// Read the input file (or standard input) and decode its frames.
pub fn read_frames(
    cat: &Catalogue,
    args: &InputArgs,
    opts: &DecodeOptions,
) -> Result<Vec<Frame>, i32> {
    let raw = read_source(&args.file).map_err(report)?;
    frames_from(cat, args, raw, opts)
}

pub fn frames_from(
    cat: &Catalogue,
    args: &InputArgs,
    raw: Vec<u8>,
    opts: &DecodeOptions,
) -> Result<Vec<Frame>, i32> {
    let kind = if args.binary {
        InputKind::Binary
    } else if args.hex {
        InputKind::Hex
    } else {
        InputKind::Auto
    };
    let bytes = to_bytes(raw, kind).map_err(report)?;
    let bytes = framed(cat, bytes, args.framing, opts)?;
    let frames = decode_frames(cat, &bytes, opts);
    // Decoding stops at a frame whose size cannot be trusted: what follows is
    // said, not dropped (that frame's error already makes the status 2).
    let end = frames.last().map_or(0, |f| f.input_offset + f.bytes.len());
    if end < bytes.len() {
        kwire::stderr_line!("kwire: {} bytes after input offset {end} were not decoded: the frame before them has no size to trust", bytes.len() - end);
    }
    Ok(frames)
}

/// The input's bytes as `--framing` asks: with a size prefix added when it
/// is missing (said on stderr, with the way to read the bytes as given).
fn framed(
    cat: &Catalogue,
    bytes: bytes::Bytes,
    framing: FramingArg,
    opts: &DecodeOptions,
) -> Result<bytes::Bytes, i32> {
    use kwire::input::framing::{missing_size_prefix, with_size_prefix};
    match framing {
        FramingArg::Prefixed => Ok(bytes),
        FramingArg::Bare => with_size_prefix(&bytes)
            .ok_or_else(|| report("the input is too long for one frame".to_string())),
        FramingArg::Auto => {
            let Some(added) = missing_size_prefix(cat, &bytes, opts) else {
                return Ok(bytes);
            };
            let claimed = added.claimed.map_or_else(
                || "they are fewer than the 4 bytes of a size".to_string(),
                |size| {
                    format!(
                        "as given, the first 4 bytes would be a size of {size} where {} bytes follow",
                        bytes.len().saturating_sub(4)
                    )
                },
            );
            kwire::stderr_line!("kwire: the input reads as one frame without its 4-byte size prefix ({claimed}): decoded with the prefix added, so offsets count it; --framing prefixed reads the bytes as given");
            Ok(added.bytes)
        }
    }
}

fn report(e: String) -> i32 {
    kwire::stderr_line!("kwire: {e}");
    exit::FAILURE
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &DecodeArgs) -> i32 {
    if args.tui {
        return super::tui_cmd::run(cat, release, &args.input);
    }
    if args.input.file == "-" && std::io::stdin().is_terminal() {
        // Waiting on a terminal without a word looks like a hang.
        kwire::stderr_line!("kwire: reading frames (hex text or binary) from standard input; end with Ctrl-D, or name a file: kwire decode FILE");
    }
    if let Some(name) = &args.record_type {
        let raw = match read_source(&args.input.file) {
            Ok(r) => r,
            Err(e) => return report(e),
        };
        let kind = if args.input.binary {
            InputKind::Binary
        } else if args.input.hex {
            InputKind::Hex
        } else {
            InputKind::Auto
        };
        return match to_bytes(raw, kind) {
            Ok(b) => write_payload(
                cat,
                name,
                &b,
                args.input.version,
                Some(args.output.format()),
                args.output.full_docs,
            ),
            Err(e) => report(e),
        };
    }
    let mut opts = match decode_options(cat, release, &args.input) {
        Ok(o) => o,
        Err(status) => return status,
    };
    // The JSON contract needs values only: no annotations, records left as hex.
    opts.values_only = args.output.format() == Format::Json;
    let raw = match read_source(&args.input.file) {
        Ok(r) => r,
        Err(e) => return report(e),
    };
    if kwire::capture::pcap::sniff(&raw).is_some() {
        // A capture: hand it to `kwire capture` with this command's output options.
        let cap = super::capture_cmd::CaptureArgs {
            file: Some(args.input.file.clone()),
            interface: None,
            write_pcap: None,
            list: false,
            correlation_id: None,
            filter: Default::default(),
            frame: None,
            port: None,
            guess: false,
            output: OutputArgs {
                format: args.output.format(),
                json: false,
                full_docs: args.output.full_docs,
            },
            budget: args.input.budget.clone(),
            tls: args.tls.clone(),
            tui: false,
            provenance: false,
            streaming: false,
        };
        return super::capture_cmd::run_on(cat, release, &cap, opts.api_key, raw);
    }
    let mut frames = match frames_from(cat, &args.input, raw, &opts) {
        Ok(f) => f,
        Err(status) => return status,
    };
    // Frames were taken for requests because nothing said otherwise: one that
    // does not read as a request is tried as every response, never shown as a
    // made-up request tree without a word.
    if !args.input.response && !args.input.request {
        for f in frames
            .iter_mut()
            .filter(|f| not_a_request(f))
            .take(MAX_GUESSED)
        {
            if let Some(guessed) = as_guessed_response(cat, release, f, &opts) {
                *f = guessed;
            }
        }
    }
    let format = args.output.format();
    let explain = match explain_with(cat, release, args.explain, format == Format::Tree) {
        Ok(e) => e,
        Err(status) => return status,
    };
    let mut out = std::io::stdout().lock();
    let _ = write_frames(&mut out, &frames, format, args.output.full_docs, explain);
    let mut status = exit::OK;
    for f in &frames {
        if let Some(e) = &f.error {
            kwire::stderr_line!("kwire: frame at input offset {}: {e}", f.input_offset);
            status = exit::MALFORMED;
        }
        // Damaged records do not stop the frame, but the input is not what it claims.
        for e in &f.record_damage {
            kwire::stderr_line!(
                "kwire: frame at input offset {}: record data: {}",
                f.input_offset,
                kwire::text::escape::sanitize(&e.to_string())
            );
            status = exit::MALFORMED;
        }
    }
    status
}

/// The catalogue and release that `--explain` needs (for header reasons), or
/// an exit status when `--explain` is given with a format other than the tree.
pub fn explain_with<'c>(
    cat: &'c Catalogue,
    release: Option<&'c str>,
    explain: bool,
    tree: bool,
) -> Result<Explain<'c>, i32> {
    match (explain, tree) {
        (false, _) => Ok(None),
        (true, true) => Ok(Some((cat, release))),
        (true, false) => {
            kwire::stderr_line!("kwire: --explain annotates the tree (the default format); it does not combine with other formats");
            Err(exit::MALFORMED)
        }
    }
}

/// Frames tried as responses at most (each try decodes it under every
/// response schema).
const MAX_GUESSED: usize = 16;

/// A frame whose request reading failed after its size prefix (a bad size is
/// no frame at all, and is reported as it is).
fn not_a_request(f: &Frame) -> bool {
    f.direction == Direction::Request && f.error.as_ref().is_some_and(|e| e.offset >= 4)
}

/// `f` decoded as the best-ranked response it parses cleanly as, with a note
/// naming the candidates; `None` (and a hint) when it parses as none.
fn as_guessed_response(
    cat: &Catalogue,
    release: Option<&str>,
    f: &Frame,
    opts: &DecodeOptions,
) -> Option<Frame> {
    let request_error = f.error.as_ref().map(|e| e.to_string()).unwrap_or_default();
    let ranked = kwire::decode::guess::guess_response(cat, &f.bytes, release);
    let Some(best) = ranked.first() else {
        kwire::stderr_line!(
            "kwire: frame at input offset {} is not a request ({}); if it is a response, give --response --api NAME --version N",
            f.input_offset,
            kwire::text::escape::sanitize(&request_error)
        );
        return None;
    };
    let name = |k: i16| cat.api_name(k).unwrap_or("?");
    let top: Vec<String> = ranked
        .iter()
        .take(5)
        .map(|g| format!("{} v{}", name(g.api_key), g.version))
        .collect();
    kwire::stderr_line!(
        "kwire: frame at input offset {} is not a request ({}); it reads as a response: shown as {} v{}, the best of {} that fit ({}); --response --api NAME --version N decodes it as another",
        f.input_offset,
        kwire::text::escape::sanitize(&request_error),
        name(best.api_key),
        best.version,
        ranked.len(),
        top.join(", ")
    );
    let as_response = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(best.api_key),
        api_version: Some(best.version),
        ..opts.clone()
    };
    let mut guessed =
        kwire::decode::decode_frame(cat, f.bytes.clone(), f.input_offset, &as_response);
    guessed.warnings.insert(
        0,
        kwire::decode::Warning::new(
            kwire::decode::WarningKind::Guessed,
            None,
            format!(
                "not a request: decoded as the best-ranked response of {} that fit ({})",
                ranked.len(),
                top.join(", ")
            ),
        ),
    );
    Some(guessed)
}

/// `--explain`: explain every node, with this catalogue and release.
pub type Explain<'c> = Option<(&'c Catalogue, Option<&'c str>)>;

pub fn write_frames(
    out: &mut impl Write,
    frames: &[Frame],
    format: Format,
    full_docs: bool,
    explain: Explain,
) -> std::io::Result<()> {
    let color = super::color::stdout();
    let many = frames.len() > 1;
    for (i, f) in frames.iter().enumerate() {
        match format {
            Format::Json => {
                let mut line = Vec::with_capacity(f.bytes.len() * 2 + 256);
                json::write_contract(f, &mut line);
                line.push(b'\n');
                out.write_all(&line)?;
            }
            Format::TreeJson => kwire::render::tree_json::write_frame_tree_json(out, f)?,
            Format::Tree | Format::Grid => {
                if many {
                    if i > 0 {
                        writeln!(out)?;
                    }
                    writeln!(
                        out,
                        "# frame {} at input offset 0x{:04x}",
                        i + 1,
                        f.input_offset
                    )?;
                }
                let opts = text_tree::TreeOptions {
                    full_docs,
                    color,
                    // Whole descriptions are asked for whole lines.
                    width: super::width::stdout().filter(|_| !full_docs),
                };
                if let Some((cat, release)) = explain {
                    write!(out, "{}", render_explained(cat, release, f, opts))?;
                } else if format == Format::Tree {
                    text_tree::write_frame(out, f, opts)?;
                } else {
                    write!(out, "{}", grid::render_grid(f, color))?;
                }
            }
        }
    }
    out.flush()
}

/// Decode and print a standalone record payload; `None` format prints hex.
pub fn write_payload(
    cat: &Catalogue,
    name: &str,
    bytes: &bytes::Bytes,
    version: Option<i16>,
    format: Option<Format>,
    full_docs: bool,
) -> i32 {
    use kwire::decode::payload::read_payload;
    let mut out = std::io::stdout().lock();
    let Some(format) = format else {
        let _ = writeln!(out, "{}", hex::encode(bytes));
        return exit::OK;
    };
    let decoded = read_payload(cat, name, bytes, version);
    let (root, error, warnings) = (decoded.root, decoded.error, decoded.warnings);
    let res = match format {
        Format::Tree => write!(
            out,
            "{}",
            text_tree::render_tree(
                &root,
                text_tree::TreeOptions {
                    full_docs,
                    color: super::color::stdout(),
                    width: super::width::stdout().filter(|_| !full_docs),
                }
            )
        ),
        Format::TreeJson => writeln!(out, "{}", json::tree_json(&root)),
        Format::Json => writeln!(out, "{}", json::payload_json(&root, decoded.version)),
        Format::Grid => {
            let frame = kwire::decode::Frame {
                direction: Direction::Request,
                kind: Default::default(),
                api_key: None,
                api_version: None,
                header_version: None,
                input_offset: 0,
                bytes: decoded.bytes.clone(),
                root: root.clone(),
                values: None,
                error: error.clone(),
                warnings: Vec::new(),
                record_damage: Vec::new(),
                held: Default::default(),
            };
            write!(out, "{}", grid::render_grid(&frame, super::color::stdout()))
        }
    };
    let _ = res;
    for w in warnings {
        kwire::stderr_line!("kwire: warning: {w}");
    }
    match error {
        Some(e) => {
            kwire::stderr_line!("kwire: {e}");
            exit::MALFORMED
        }
        None => exit::OK,
    }
}
