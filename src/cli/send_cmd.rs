//! `kwire send` (one request to a broker, its response decoded) and
//! `kwire probe` (the broker's ApiVersions next to kwire's catalogue).

use super::exit;
use super::frame_args::{Format, OutputArgs};
use super::frames_out::{explain_with, write_frames};
use clap::{Args, ValueEnum};
use kwire::live::client::{request_body, request_json, HeaderAndBody, Probe, Sent, Session};
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use serde_json::{Map, Value};
use std::io::Write;
use std::time::Duration;

#[derive(Args, Debug, Clone)]
pub struct BrokerArgs {
    /// The broker: HOST:PORT.
    #[arg(long, value_name = "HOST:PORT")]
    pub broker: String,
    /// Seconds to wait for the connection and for each response.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,
    /// Largest response read whole (K, M, G suffixes allowed).
    #[arg(long, value_name = "BYTES", default_value = "100M", value_parser = kwire::budget::parse_bytes)]
    pub max_frame: u64,
}

impl BrokerArgs {
    fn connect<'c>(&self, cat: &'c Catalogue, release: Option<&str>) -> Result<Session<'c>, i32> {
        let timeout = Duration::try_from_secs_f64(self.timeout).unwrap_or(Duration::from_secs(10));
        Session::connect(
            cat,
            release,
            &self.broker,
            timeout,
            usize::try_from(self.max_frame).unwrap_or(usize::MAX),
        )
        .map_err(|e| {
            kwire::stderr_line!("kwire: {}", sanitize(&e));
            exit::FAILURE
        })
    }
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire send --broker 127.0.0.1:9092 Metadata\n  kwire send --broker 127.0.0.1:9092 ListGroups --version 4 --format json\n  kwire send --broker 127.0.0.1:9092 Metadata -i body.json --explain"
)]
pub struct SendArgs {
    #[command(flatten)]
    pub broker: BrokerArgs,
    /// API name or key.
    pub api: String,
    /// Request version (default: the newest that kwire and the broker both serve, from ApiVersions).
    #[arg(long, value_name = "N")]
    pub version: Option<i16>,
    /// The request as JSON: the body, or `kwire decode --json` output (its header's ClientId is kept);
    /// default: the smallest legal request.
    #[arg(short = 'i', long = "input", value_name = "FILE")]
    pub input: Option<String>,
    #[command(flatten)]
    pub output: OutputArgs,
    /// Under every node of the tree, how its bytes make its value.
    #[arg(long, conflicts_with = "json")]
    pub explain: bool,
    /// Print the request before the response.
    #[arg(long)]
    pub show_request: bool,
}

pub fn run_send(cat: &Catalogue, release: Option<&str>, args: &SendArgs) -> i32 {
    let Some(api_key) = super::resolve_api_or_report(cat, &args.api) else {
        return exit::FAILURE;
    };
    let name = cat.api_name(api_key).unwrap_or("?").to_string();
    let (header, body) = match &args.input {
        Some(path) => match read_request_json(path) {
            Ok(hb) => hb,
            Err(e) => {
                kwire::stderr_line!("kwire: {}: {}", sanitize(path), sanitize(&e));
                return exit::FAILURE;
            }
        },
        None => (Map::new(), Map::new()),
    };
    let format = args.output.format();
    let explain = match explain_with(cat, release, args.explain, format == Format::Tree) {
        Ok(e) => e,
        Err(status) => return status,
    };
    let mut session = match args.broker.connect(cat, release) {
        Ok(s) => s,
        Err(status) => return status,
    };
    session.values_only = format == Format::Json;
    if let Some(id) = header.get("ClientId").and_then(Value::as_str) {
        session.client_id = id.to_string();
    }
    let version = match session.version_to_send(api_key, args.version) {
        Ok(v) => v,
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", sanitize(&args.broker.broker), sanitize(&e));
            return exit::FAILURE;
        }
    };
    let given = args.input.is_some().then_some(body);
    let body = match request_body(cat, release, (api_key, version), given) {
        Ok(b) => b,
        Err(e) => {
            kwire::stderr_line!("kwire: {e}");
            return exit::FAILURE;
        }
    };
    let answered = match session.send(api_key, version, &body) {
        Ok(Sent::Answered(a)) => *a,
        Ok(Sent::Unanswered(request)) => {
            kwire::stderr_line!(
                "kwire: sent {name} v{version} ({} B) to {}; with acks=0 a broker sends no response",
                request.bytes.len(),
                sanitize(&args.broker.broker)
            );
            let mut out = std::io::stdout().lock();
            let _ = write_frames(
                &mut out,
                &[*request],
                format,
                (super::frames_out::style(), args.output.full_docs),
                explain,
            );
            return exit::OK;
        }
        Err(e) => {
            kwire::stderr_line!(
                "kwire: {}: {name} v{version}: {}",
                sanitize(&args.broker.broker),
                sanitize(&e)
            );
            return exit::FAILURE;
        }
    };
    kwire::stderr_line!(
        "kwire: sent {name} v{version} ({} B) to {}; the response ({} B) came in {:.3} ms",
        answered.request.bytes.len(),
        sanitize(&args.broker.broker),
        answered.response.bytes.len(),
        answered.elapsed.as_secs_f64() * 1e3
    );
    let mut frames = Vec::new();
    if args.show_request {
        frames.push(answered.request);
    }
    let status = if answered.response.error.is_some() || !answered.response.record_damage.is_empty()
    {
        exit::MALFORMED
    } else {
        exit::OK
    };
    if let Some(e) = &answered.response.error {
        kwire::stderr_line!("kwire: the response: {e}");
    }
    frames.push(answered.response);
    let mut out = std::io::stdout().lock();
    let _ = write_frames(
        &mut out,
        &frames,
        format,
        (super::frames_out::style(), args.output.full_docs),
        explain,
    );
    status
}

fn read_request_json(path: &str) -> Result<HeaderAndBody, String> {
    request_json(&kwire::input::read_source(path)?)
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire probe --broker 127.0.0.1:9092\n  kwire probe --broker 127.0.0.1:9092 --format json"
)]
pub struct ProbeArgs {
    #[command(flatten)]
    pub broker: BrokerArgs,
    #[arg(long, value_enum, default_value_t = ProbeFormat::Text)]
    pub format: ProbeFormat,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ProbeFormat {
    Text,
    Json,
}

pub fn run_probe(cat: &Catalogue, release: Option<&str>, args: &ProbeArgs) -> i32 {
    let mut session = match args.broker.connect(cat, release) {
        Ok(s) => s,
        Err(status) => return status,
    };
    let probe = match Probe::ask(&mut session, &args.broker.broker) {
        Ok(p) => p,
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", sanitize(&args.broker.broker), sanitize(&e));
            return exit::FAILURE;
        }
    };
    let text = match args.format {
        ProbeFormat::Json => kwire::render::json::to_text(&probe.to_json()) + "\n",
        ProbeFormat::Text => probe.to_text(),
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    exit::OK
}
