//! The command line: argument parsing and dispatch to the commands.

pub mod apis_cmd;
pub mod capture_cmd;
pub mod capture_live;
pub mod check_cmd;
pub mod color;
pub mod decode_cmd;
pub mod diff_cmd;
pub mod docs_cmd;
pub mod encode_cmd;
pub mod example_cmd;
pub mod explorer;
pub mod export_cmd;
pub mod filter_args;
pub mod filter_cmd;
pub mod frame_args;
pub mod frames_out;
pub mod inventory_cmd;
pub mod primitive_cmd;
pub mod proxy_cmd;
pub mod records_cmd;
pub mod replay_cmd;
pub mod report_cmd;
pub mod send_cmd;
pub mod shell_cmd;
pub mod stats_cmd;
pub mod tls_args;
pub mod tui_cmd;
pub mod width;

use clap::{Parser, Subcommand};
use kwire::schema::{source::load_definitions, Catalogue};
use std::path::PathBuf;

/// The heading the options of every command are listed under in `--help`.
const GLOBAL: &str = "Global options";

/// The global options a command has no use for: hidden from its `--help`
/// (and its completions and man page), so each help lists what works there.
/// Accepted all the same, so scripts that pass them everywhere keep working.
const UNUSED_GLOBALS: &[(&str, &[&str])] = &[
    (
        "primitive",
        &["defs", "kafka_release", "color", "show_secrets"],
    ),
    (
        "completions",
        &["defs", "kafka_release", "color", "show_secrets", "wide"],
    ),
    (
        "man",
        &["defs", "kafka_release", "color", "show_secrets", "wide"],
    ),
    (
        "import-defs",
        &["defs", "kafka_release", "color", "show_secrets", "wide"],
    ),
    ("probe", &["color", "show_secrets", "wide"]),
    ("stats", &["color", "show_secrets"]),
    ("inventory", &["color", "show_secrets"]),
    ("apis", &["color", "show_secrets"]),
    ("diff", &["show_secrets", "wide"]),
    ("encode", &["color", "show_secrets", "wide"]),
    ("check", &["color"]),
    ("report", &["color", "wide"]),
    ("docs", &["color", "wide"]),
    ("page", &["color", "wide"]),
    ("tui", &["color", "wide"]),
];

/// The command line as clap sees it: [`Cli`] with each command's unused
/// global options hidden.
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    for (name, hidden) in UNUSED_GLOBALS {
        // A subcommand that has a global option's id already keeps its own
        // copy when clap hands the globals down: a hidden one here.
        let copies: Vec<clap::Arg> = cmd
            .get_arguments()
            .filter(|a| hidden.contains(&a.get_id().as_str()))
            .map(|a| a.clone().hide(true))
            .collect();
        cmd = cmd.mut_subcommand(name, |sub| sub.args(copies));
    }
    cmd
}

/// The parsed command line, or clap's exit for `--help` and errors.
pub fn parse() -> Cli {
    use clap::FromArgMatches;
    let matches = command().get_matches();
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

#[derive(Parser, Debug)]
#[command(
    name = "kwire",
    version,
    about = "Shows exactly what a Kafka protocol message looks like on the wire"
)]
pub struct Cli {
    /// Upstream definitions with their prose: a definitions folder, a Kafka source
    /// tree, a kafka-clients jar or a Kafka libs/ folder.
    #[arg(long, global = true, env = "KWIRE_DEFS", value_name = "PATH", help_heading = GLOBAL)]
    pub defs: Option<PathBuf>,
    /// Decode with one release's definitions only (e.g. 3.9, 4.1).
    #[arg(long, global = true, value_name = "R", help_heading = GLOBAL)]
    pub kafka_release: Option<String>,
    /// Colour on standard output: auto (a terminal, unless NO_COLOR is set;
    /// CLICOLOR_FORCE forces it), always, never.
    #[arg(long, global = true, value_enum, default_value_t = color::ColorChoice::Auto, value_name = "WHEN", help_heading = GLOBAL)]
    pub color: color::ColorChoice,
    /// Show credentials (SASL passwords, SCRAM proofs, bearer tokens, salts,
    /// SCRAM keys, token HMACs) instead of `<redacted, N bytes>`.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub show_secrets: bool,
    /// Text lines as long as they need: nothing cut with `…` to the
    /// terminal's width (else `COLUMNS`, else 120 columns when not a terminal).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub wide: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Decode frames from hex text or binary into an annotated tree, grid or JSON.
    Decode(decode_cmd::DecodeArgs),
    /// Explore frames in the terminal: hex grid, object tree and details, in sync.
    Tui(tui_cmd::TuiArgs),
    /// The smallest legal instance of an API's request and response.
    Example(example_cmd::ExampleArgs),
    /// Encode the JSON of `kwire decode --json` (whole, or just the body) as a frame.
    Encode(encode_cmd::EncodeArgs),
    /// Every API: key, versions, flexible and header versions, releases.
    Apis(apis_cmd::ApisArgs),
    /// Write the documentation site: a page per API, version and record type, an index and an encoding page.
    Docs(docs_cmd::DocsArgs),
    /// Print one documentation page (an API, a record type, or `encoding`).
    Page(docs_cmd::PageArgs),
    /// Decode a log segment or record-batch file, batch by batch; or list a capture's records.
    Records(records_cmd::RecordsArgs),
    /// Every Kafka frame in a pcap/pcapng capture, responses paired with requests.
    Capture(capture_cmd::CaptureArgs),
    /// Requests, responses, errors, bytes and latency per API (or client, connection, broker, topic) in a capture.
    Stats(stats_cmd::StatsArgs),
    /// Captures as tables (exchanges, partitions, connections, records, findings) in Parquet or JSON lines, for DuckDB and Spark.
    Export(export_cmd::ExportArgs),
    /// Every client: software, connections, API versions used, what the brokers advertised and what a release no longer serves.
    Inventory(inventory_cmd::InventoryArgs),
    /// One self-contained HTML page of a capture, as an incident report: what is wrong, one timeline, latency per API, stats, inventory, errors, exchanges and a frame viewer.
    Report(report_cmd::ReportArgs),
    /// Every frame of a capture (or file of frames), or every batch of a log segment, checked against the protocol: one finding per problem, exit 3 on errors.
    Check(check_cmd::CheckArgs),
    /// The display filter language (--filter): check an expression, list an API's fields or the facts.
    Filter(filter_cmd::FilterCmdArgs),
    /// A decoding proxy: clients talk to the broker through kwire, which prints every frame as it passes.
    Proxy(proxy_cmd::ProxyArgs),
    /// Send a capture's requests to another broker, connection by connection, and compare each answer with the captured one.
    Replay(replay_cmd::ReplayArgs),
    /// Send one request to a broker and print its response decoded, byte by byte.
    Send(send_cmd::SendArgs),
    /// A broker's ApiVersions next to kwire's catalogue: what it serves, what kwire decodes, which release it matches.
    Probe(send_cmd::ProbeArgs),
    /// What changes between two versions of an API, or between two releases.
    Diff(diff_cmd::DiffArgs),
    /// One primitive value as bytes (or bytes as a value), explained.
    Primitive(primitive_cmd::PrimitiveArgs),
    /// Shell completions: `kwire completions bash > /etc/bash_completion.d/kwire`.
    Completions(shell_cmd::CompletionsArgs),
    /// The manual page (roff): `kwire man | man -l -`, or one page per command with --out DIR.
    Man(shell_cmd::ManArgs),
    /// Rebuild the built-in catalogue from upstream definitions (<DIR>/<release>/...).
    #[command(hide = true)]
    ImportDefs {
        dir: PathBuf,
        #[arg(long, default_value = "src/catalogue/kafka.json")]
        out: PathBuf,
    },
}

/// Exit statuses: 0 success; 1 the input or a name could not be used; 2 a
/// message is malformed (or the command line is wrong, as clap reports it).
pub mod exit {
    pub const OK: i32 = 0;
    pub const FAILURE: i32 = 1;
    pub const MALFORMED: i32 = 2;
    /// The command line is wrong (clap's own status for its errors, and ours
    /// for an option a command needs but was not given).
    pub const USAGE: i32 = 2;
}

pub fn run(cli: Cli) -> i32 {
    color::set(cli.color);
    width::set(cli.wide);
    kwire::decode::secrets::hide(!cli.show_secrets);
    let cat = match catalogue(&cli) {
        Ok(c) => c,
        Err(e) => {
            kwire::stderr_line!("kwire: {}", kwire::text::escape::sanitize(&e.to_string()));
            return exit::FAILURE;
        }
    };
    match cli.command {
        Command::Decode(args) => decode_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Tui(args) => tui_cmd::run(&cat, cli.kafka_release.as_deref(), &args.input),
        Command::Example(args) => example_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Encode(args) => encode_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Apis(args) => apis_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Records(args) => records_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Capture(args) => match &args.interface {
            Some(iface) => capture_live::run(&cat, cli.kafka_release.as_deref(), &args, iface),
            None => capture_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        },
        Command::Stats(args) => stats_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Export(args) => export_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Inventory(args) => inventory_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Report(args) => report_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Docs(args) => docs_cmd::run_docs(&cat, cli.kafka_release.as_deref(), &args),
        Command::Page(args) => docs_cmd::run_page(&cat, cli.kafka_release.as_deref(), &args),
        Command::Check(args) => check_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Filter(args) => filter_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Proxy(args) => proxy_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Replay(args) => replay_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Send(args) => send_cmd::run_send(&cat, cli.kafka_release.as_deref(), &args),
        Command::Probe(args) => send_cmd::run_probe(&cat, cli.kafka_release.as_deref(), &args),
        Command::Diff(args) => diff_cmd::run(&cat, cli.kafka_release.as_deref(), &args),
        Command::Primitive(args) => primitive_cmd::run(&args),
        Command::Completions(args) => shell_cmd::run_completions(&args),
        Command::Man(args) => shell_cmd::run_man(&args),
        Command::ImportDefs { dir, out } => match Catalogue::import_releases(&dir) {
            Ok(c) => match std::fs::write(&out, c.to_json()) {
                Ok(()) => {
                    kwire::stderr_line!(
                        "kwire: wrote {} definitions of releases {} to {}",
                        c.entries.len(),
                        c.releases.join(", "),
                        out.display()
                    );
                    exit::OK
                }
                Err(e) => {
                    kwire::stderr_line!("kwire: {}: {e}", out.display());
                    exit::FAILURE
                }
            },
            Err(e) => {
                kwire::stderr_line!("kwire: {}", kwire::text::escape::sanitize(&e.to_string()));
                exit::FAILURE
            }
        },
    }
}

/// The built-in catalogue as it is (parsed once, never copied: a copy costs more
/// than many commands' whole work), or a copy with the `--defs` definitions added.
fn catalogue(cli: &Cli) -> Result<std::borrow::Cow<'static, Catalogue>, String> {
    let builtin = Catalogue::builtin();
    if let Some(r) = &cli.kafka_release {
        if !builtin.releases.iter().any(|x| x == r) {
            return Err(format!(
                "unknown release {r:?}; known: {}",
                builtin.releases.join(", ")
            ));
        }
    }
    match &cli.defs {
        None => Ok(std::borrow::Cow::Borrowed(builtin)),
        Some(p) => Ok(std::borrow::Cow::Owned(
            builtin.with_loaded(load_definitions(p)?),
        )),
    }
}

/// Resolve an API name or key, or explain (with suggestions) why not.
/// A file, or standard input for `-`, unbuffered (the readers do their own
/// large reads); an unreadable file is reported and its exit status returned.
pub fn open_input(path: &str) -> Result<Box<dyn std::io::Read + Send>, i32> {
    if path == "-" {
        // Not locked: a lock cannot go to the explorer's index thread (reads are large anyway).
        return Ok(Box::new(std::io::stdin()));
    }
    match std::fs::File::open(path) {
        Ok(f) => Ok(Box::new(f)),
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {e}", kwire::text::escape::sanitize(path));
            Err(exit::FAILURE)
        }
    }
}

/// Whether `path` names a regular file (not `-`, a pipe or a FIFO): such an
/// input is read ahead on a thread of its own, as it can never keep that
/// thread waiting after the output stopped.
pub fn is_regular_file(path: &str) -> bool {
    path != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// The input opened a second time, when it is a file that reads the same
/// twice (not a stream, a pipe or a device): what `finding` needs.
pub fn reopen_file(path: &str) -> Option<Box<dyn std::io::Read + Send>> {
    is_regular_file(path)
        .then(|| open_input(path).ok())
        .flatten()
}

pub fn resolve_api_or_report(cat: &Catalogue, text: &str) -> Option<i16> {
    let k = cat.resolve_api(text);
    if k.is_none() {
        let hint = cat.suggest_api(text);
        // Names may come from --defs, the text from the command line: both escaped.
        let hint = if hint.is_empty() {
            String::new()
        } else {
            format!(
                " (did you mean {}?)",
                kwire::text::escape::sanitize(&hint.join(", "))
            )
        };
        kwire::stderr_line!(
            "kwire: unknown API \"{}\"{hint}; `kwire apis` lists them",
            kwire::text::escape::sanitize(text)
        );
    }
    k
}
