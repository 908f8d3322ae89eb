//! The options every command that reads frames from hex or binary shares
//! (`decode`, `tui`, `check` on frames), the budget and output options, and
//! reading the input's frames by them.

use super::exit;
use clap::{Args, ValueEnum};
use kwire::decode::{DecodeOptions, Direction, Frame};
use kwire::input::framing::Framing;
use kwire::input::InputKind;
use kwire::pipeline::frames::decode_input;
use kwire::schema::{Catalogue, MessageKind};

pub use kwire::pipeline::frames::Format;

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
        defer_records_over: None,
        defer_elements_over: None,
        defer_record_arrays: false,
        leave_in_frames_over: 0,
        fits_only: false,
    })
}

/// Whether an input already read is a log segment or a file of record
/// batches rather than frames: it starts with a whole record batch whose
/// CRC-32C holds (no Kafka frame does), and frames were not asked for by
/// name (`--request`, `--response`, `--api`) nor hex text given.
pub fn is_segment(input: &InputArgs, raw: &[u8]) -> bool {
    !input.request
        && !input.response
        && input.api.is_none()
        && !input.hex
        && kwire::protocol::record_batch::starts_with_batch(raw)
}

/// What a log segment's batches are read with: its topic (given, or its
/// directory's, `<topic>-<partition>`, so internal topics' records are
/// read through their schemas) and the input's budget.
/// `partition_dir`: the directory the segment is in, when it is a file.
pub fn segment_context(
    opts: &DecodeOptions,
    partition_dir: Option<&std::path::Path>,
) -> kwire::decode::context::Context {
    use kwire::decode::records::segment::topic_of_partition_dir;
    let topic = opts
        .topic
        .clone()
        .or_else(|| topic_of_partition_dir(partition_dir?));
    kwire::decode::context::Context {
        topic_forced: topic.is_some(),
        topic,
        budget: opts.budget.clone(),
        ..Default::default()
    }
}

/// The directory a segment file is in (none for standard input, `-`).
pub fn log_dir(file: &str) -> Option<&std::path::Path> {
    (file != "-")
        .then(|| std::path::Path::new(file).parent())
        .flatten()
}

/// Says that `file` holds record batches, not frames, and that `kwire
/// records` reads it (`here`: what this command would need instead); the
/// exit status of a usage error.
pub fn segment_refused(file: &str, here: &str) -> i32 {
    let what = match file {
        "-" => "standard input".to_string(),
        path => kwire::text::escape::sanitize(path),
    };
    kwire::stderr_line!(
        "kwire: {what} holds record batches (a log segment?), not frames: `kwire records` shows it as a tree, JSON or dump; {here}"
    );
    super::exit::USAGE
}

/// The frames of an input already read (a file's or standard input's bytes).
pub fn frames_from(
    cat: &Catalogue,
    args: &InputArgs,
    raw: Vec<u8>,
    (opts, then): (&DecodeOptions, &mut dyn FnMut(&mut Frame)),
) -> Result<Vec<Frame>, i32> {
    let kind = if args.binary {
        InputKind::Binary
    } else if args.hex {
        InputKind::Hex
    } else {
        InputKind::Auto
    };
    let framing = match args.framing {
        FramingArg::Auto => Framing::Auto,
        FramingArg::Prefixed => Framing::Prefixed,
        FramingArg::Bare => Framing::Bare,
    };
    let mut say = |line: &str| kwire::stderr_line!("kwire: {line}");
    decode_input(cat, raw, (kind, framing), (opts, then), &mut say).map_err(report)
}

/// Frames taken for requests because neither `--request` nor `--response`
/// was given: each that does not decode as one is read as the response it
/// fits best, as `decode` and `check` read them, and stderr says so.
pub fn reread_as_responses(
    cat: &Catalogue,
    release: Option<&str>,
    args: &InputArgs,
    frames: &mut [Frame],
    (opts, then): (&DecodeOptions, &mut dyn FnMut(&mut Frame)),
) {
    if !args.response && !args.request {
        let mut say = |line: &str| kwire::stderr_line!("kwire: {line}");
        kwire::decode::guess::reread_as_responses(cat, release, frames, (opts, then), &mut say);
    }
}

pub fn report(e: String) -> i32 {
    kwire::stderr_line!("kwire: {e}");
    exit::FAILURE
}
