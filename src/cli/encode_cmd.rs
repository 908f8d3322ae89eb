//! `kwire encode`: the JSON contract of `kwire decode --json` → frame bytes.
//! Its input is untrusted: every message that quotes it (field names, values)
//! is escaped before it reaches the terminal.

use super::{exit, resolve_api_or_report};
use clap::Args;
use kwire::decode::Direction;
use kwire::encode::{encode_frame_exact, example_header, FrameSpec, RawValues};
use kwire::input::read_source;
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use serde_json::{Map, Value};
use std::io::Write;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire decode --json samples/produce-v9-request.hex | kwire encode\n  echo '{}' | kwire encode ApiVersions --version 3 --client-id me\n  kwire encode -i frame.json --binary > frame.bin"
)]
pub struct EncodeArgs {
    /// API name or key (default: from the JSON's api_key).
    pub api: Option<String>,
    /// Version (default: from the JSON's api_version).
    #[arg(long)]
    pub version: Option<i16>,
    /// Encode a request (default; a whole object's `kind` decides otherwise).
    #[arg(long, conflicts_with = "response")]
    pub request: bool,
    /// Encode a response (its header is the response header of that version).
    #[arg(long)]
    pub response: bool,
    /// The header's correlation id (replaces the JSON's, or the default 0).
    #[arg(long)]
    pub correlation_id: Option<i32>,
    /// The request header's client id (replaces the JSON's, or the default empty string).
    #[arg(long)]
    pub client_id: Option<String>,
    /// JSON file: a whole `kwire decode --json` object, or just the body; `-` for stdin.
    #[arg(long, short, default_value = "-")]
    pub input: String,
    /// Write raw bytes instead of hex.
    #[arg(long)]
    pub binary: bool,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &EncodeArgs) -> i32 {
    let raw = match read_source(&args.input) {
        Ok(r) => r,
        Err(e) => {
            kwire::stderr_line!("kwire: {}", sanitize(&e.to_string()));
            return exit::FAILURE;
        }
    };
    let json: Value = match serde_json::from_slice(&raw) {
        Ok(v) => v,
        Err(e) => {
            kwire::stderr_line!("kwire: the input is not JSON: {}", sanitize(&e.to_string()));
            return exit::FAILURE;
        }
    };
    let Some(obj) = json.as_object() else {
        kwire::stderr_line!("kwire: expected a JSON object");
        return exit::FAILURE;
    };
    if obj.contains_key(kwire::decode::secrets::REDACTED_KEY) {
        kwire::stderr_line!("kwire: this JSON has redacted credentials ({}): decode with --show-secrets to encode it", kwire::decode::secrets::REDACTED_KEY);
        return exit::FAILURE;
    }
    // A whole contract object has kind/header/body; anything else is the body alone.
    let whole =
        obj.contains_key("body") && (obj.contains_key("kind") || obj.contains_key("header"));
    // `kwire encode -` reads standard input, as `decode -` does: it is the default input.
    let api_key = match args.api.as_deref().filter(|a| *a != "-") {
        Some(a) => match resolve_api_or_report(cat, a) {
            Some(k) => Some(k),
            None => return exit::FAILURE,
        },
        None => whole.then(|| int16_member(obj, "api_key")).flatten(),
    };
    let version = args
        .version
        .or_else(|| whole.then(|| int16_member(obj, "api_version")).flatten());
    let direction = if args.response
        || (!args.request && whole && obj.get("kind") == Some(&Value::from("response")))
    {
        Direction::Response
    } else {
        Direction::Request
    };
    let (Some(api_key), Some(version)) = (api_key, version) else {
        kwire::stderr_line!("kwire: name the API and version (kwire encode API --version N), or pass a whole `kwire decode --json` object");
        return exit::USAGE;
    };
    let mut header: Map<String, Value> = if whole {
        obj.get("header")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_else(|| example_header(direction))
    } else {
        example_header(direction)
    };
    if let Some(c) = args.correlation_id {
        header.insert("CorrelationId".into(), Value::from(c));
    }
    if let Some(c) = &args.client_id {
        header.insert("ClientId".into(), Value::from(c.as_str()));
    }
    let body = if whole {
        obj.get("body").cloned().unwrap_or(Value::Null)
    } else {
        json.clone()
    };
    let Some(body) = body.as_object() else {
        kwire::stderr_line!("kwire: body: expected a JSON object");
        return exit::FAILURE;
    };
    // Only a whole contract object has `_raw`: its paths start at `header.` or `body.`.
    let exact = match obj.get(kwire::render::json::RAW_KEY).filter(|_| whole) {
        Some(r) => match RawValues::from_json(r) {
            Ok(r) => r,
            Err(e) => {
                kwire::stderr_line!("kwire: {}", sanitize(&e.to_string()));
                return exit::FAILURE;
            }
        },
        None => RawValues::default(),
    };
    let fs = FrameSpec {
        direction,
        api_key,
        version,
        release,
    };
    match encode_frame_exact(cat, &fs, &header, body, &exact) {
        Ok(bytes) => {
            let mut out = std::io::stdout().lock();
            let _ = if args.binary {
                out.write_all(&bytes)
            } else {
                writeln!(out, "{}", hex::encode(&bytes))
            };
            exit::OK
        }
        Err(e) => {
            kwire::stderr_line!("kwire: {}", sanitize(&e.to_string()));
            exit::FAILURE
        }
    }
}

/// A member that must be an int16; one out of range is no value (not a wrapped one).
fn int16_member(obj: &Map<String, Value>, key: &str) -> Option<i16> {
    obj.get(key)
        .and_then(Value::as_i64)
        .and_then(|v| i16::try_from(v).ok())
}
