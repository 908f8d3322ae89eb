//! `kwire send` (one request to a broker, its response decoded) and
//! `kwire probe` (the broker's ApiVersions next to kwire's catalogue).

use super::exit;
use super::frame_args::{Format, OutputArgs};
use super::frames_out::{explain_with, write_frames};
use clap::{Args, ValueEnum};
use kwire::live::client::{matching_releases, probe_table, request_body, Session};
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use serde_json::{json, Map, Value};
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
    // A Produce with acks=0 (the smallest instance's) gets no response: waiting would only time out.
    if api_key == 0 && body.get("Acks").and_then(Value::as_i64) == Some(0) {
        return match session.send_unanswered(api_key, version, &body) {
            Ok(request) => {
                kwire::stderr_line!(
                    "kwire: sent {name} v{version} ({} B) to {}; with acks=0 a broker sends no response",
                    request.bytes.len(),
                    sanitize(&args.broker.broker)
                );
                let mut out = std::io::stdout().lock();
                let _ = write_frames(
                    &mut out,
                    &[request],
                    format,
                    (super::frames_out::style(), args.output.full_docs),
                    explain,
                );
                exit::OK
            }
            Err(e) => {
                kwire::stderr_line!(
                    "kwire: {}: {name} v{version}: {}",
                    sanitize(&args.broker.broker),
                    sanitize(&e)
                );
                exit::FAILURE
            }
        };
    }
    let answered = match session.exchange(api_key, version, &body) {
        Ok(a) => a,
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

/// A request's header and body from a JSON file: `kwire decode --json` output, or the body alone.
/// A request's header and body.
type HeaderAndBody = (Map<String, Value>, Map<String, Value>);

fn read_request_json(path: &str) -> Result<HeaderAndBody, String> {
    let text = kwire::input::read_source(path)?;
    let v: Value = serde_json::from_slice(&text).map_err(|e| format!("not JSON: {e}"))?;
    match v {
        Value::Object(mut o) if o.get("body").is_some_and(Value::is_object) => {
            let header = o
                .remove("header")
                .and_then(|h| {
                    if let Value::Object(h) = h {
                        Some(h)
                    } else {
                        None
                    }
                })
                .unwrap_or_default();
            let Some(Value::Object(body)) = o.remove("body") else {
                unreachable!("checked above")
            };
            Ok((header, body))
        }
        Value::Object(body) => Ok((Map::new(), body)),
        _ => {
            Err("a JSON object is needed (the request body, or kwire decode --json output)".into())
        }
    }
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
    let advertised = match session.api_versions() {
        Ok(a) => a,
        Err(e) => {
            kwire::stderr_line!(
                "kwire: {}: ApiVersions: {}",
                sanitize(&args.broker.broker),
                sanitize(&e)
            );
            return exit::FAILURE;
        }
    };
    let table = probe_table(cat, &advertised.ranges);
    let releases = matching_releases(cat, &table);
    let range = |(lo, hi): (i16, i16)| {
        if lo == hi {
            format!("v{lo}")
        } else {
            format!("v{lo}-v{hi}")
        }
    };
    let text = match args.format {
        ProbeFormat::Json => {
            let apis: Vec<Value> = table
                .iter()
                .map(|a| json!({"api_key": a.api_key, "api_name": a.name, "min_version": a.broker.0, "max_version": a.broker.1, "kwire_decodes": a.decoded, "releases": a.releases}))
                .collect();
            kwire::render::json::to_text(
                &json!({"broker": args.broker.broker, "api_versions_version": advertised.version, "apis": apis, "releases": releases}),
            ) + "\n"
        }
        ProbeFormat::Text => {
            let mut s = format!(
                "{} answered ApiVersions v{}: {} APIs\n",
                sanitize(&args.broker.broker),
                advertised.version,
                table.len()
            );
            s += &format!(
                "{:>4}  {:<32} {:<10} {:<22} {}\n",
                "key", "api", "broker", "kwire decodes", "same range in"
            );
            for a in &table {
                let all =
                    a.decoded.len() as i64 == i64::from(a.broker.1) - i64::from(a.broker.0) + 1;
                let decodes = match (a.decoded.first(), a.decoded.last()) {
                    _ if all => "all".to_string(),
                    (Some(&lo), Some(&hi)) => format!("{} only", range((lo, hi))),
                    _ => "none".to_string(),
                };
                let name = a.name.as_deref().unwrap_or("(unknown to kwire)");
                s += &format!(
                    "{:>4}  {:<32} {:<10} {:<22} {}\n",
                    a.api_key,
                    name,
                    range(a.broker),
                    decodes,
                    if a.releases.is_empty() {
                        "-".to_string()
                    } else {
                        a.releases.join(", ")
                    }
                );
            }
            s += &match releases.as_slice() {
                [] => "no release of kwire's catalogue has exactly these ranges\n".to_string(),
                r => format!("every range matches release {}\n", r.join(", ")),
            };
            s
        }
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    exit::OK
}
