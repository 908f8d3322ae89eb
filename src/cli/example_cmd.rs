//! `kwire example`: the smallest legal instance of a request and/or response.

use super::frame_args::Format;
use super::frames_out::{explain_with, write_frames};
use super::{exit, resolve_api_or_report};
use bytes::Bytes;
use clap::{Args, ValueEnum};
use kwire::decode::{decode_frame, DecodeOptions, Direction};
use kwire::encode::example::{default_version, example_frame};
use kwire::encode::FrameSpec;
use kwire::schema::Catalogue;
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExampleFormat {
    Hex,
    Tree,
    Grid,
    Json,
    TreeJson,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire example WriteShareGroupState --version 0\n  kwire example Produce --request --format hex\n  kwire example TopicRecord --format hex | kwire decode --type TopicRecord"
)]
pub struct ExampleArgs {
    /// API name or key.
    pub api: String,
    /// Version (default: the latest stable one).
    #[arg(long)]
    pub version: Option<i16>,
    /// Only the request (default: request and response).
    #[arg(long, conflicts_with = "response")]
    pub request: bool,
    /// Only the response.
    #[arg(long)]
    pub response: bool,
    #[arg(long, value_enum, default_value_t = ExampleFormat::Tree)]
    pub format: ExampleFormat,
    /// Show descriptions in full in the tree.
    #[arg(long)]
    pub full_docs: bool,
    /// Under every node of the tree, how its bytes make its value.
    #[arg(long)]
    pub explain: bool,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &ExampleArgs) -> i32 {
    if cat.resolve_api(&args.api).is_none() && is_record_type(cat, &args.api) {
        return record_example(cat, args);
    }
    let explain = match explain_with(
        cat,
        release,
        args.explain,
        args.format == ExampleFormat::Tree,
    ) {
        Ok(e) => e,
        Err(status) => return status,
    };
    let Some(api_key) = resolve_api_or_report(cat, &args.api) else {
        return exit::FAILURE;
    };
    let Some(version) = args
        .version
        .or_else(|| default_version(cat, api_key, release))
    else {
        kwire::stderr_line!(
            "kwire: {} has no decodable versions (retired API)",
            args.api
        );
        return exit::FAILURE;
    };
    let directions: Vec<Direction> = match (args.request, args.response) {
        (true, _) => vec![Direction::Request],
        (_, true) => vec![Direction::Response],
        _ => vec![Direction::Request, Direction::Response],
    };
    let mut frames = Vec::new();
    for direction in directions {
        let fs = FrameSpec {
            direction,
            api_key,
            version,
            release,
        };
        let bytes = match example_frame(cat, &fs) {
            Ok(b) => b,
            Err(e) => {
                kwire::stderr_line!("kwire: {e}");
                return exit::FAILURE;
            }
        };
        if args.format == ExampleFormat::Hex {
            let _ = writeln!(std::io::stdout().lock(), "{}", hex::encode(&bytes));
            continue;
        }
        let opts = DecodeOptions {
            direction: Some(direction),
            api_key: Some(api_key),
            api_version: Some(version),
            release: release.map(str::to_string),
            // The JSON contract is written from a values tape.
            values_only: args.format == ExampleFormat::Json,
            ..Default::default()
        };
        frames.push(decode_frame(cat, Bytes::from(bytes), 0, &opts));
    }
    let format = match args.format {
        ExampleFormat::Hex => return exit::OK,
        ExampleFormat::Tree => Format::Tree,
        ExampleFormat::Grid => Format::Grid,
        ExampleFormat::Json => Format::Json,
        ExampleFormat::TreeJson => Format::TreeJson,
    };
    let _ = write_frames(
        &mut std::io::stdout().lock(),
        &frames,
        format,
        (super::frames_out::style(), args.full_docs),
        explain,
    );
    if frames.iter().any(|f| f.error.is_some()) {
        exit::MALFORMED
    } else {
        exit::OK
    }
}

/// Coordinator keys and values, metadata records and data types are examples too.
fn is_record_type(cat: &Catalogue, name: &str) -> bool {
    cat.entries_named(name).next().is_some_and(|e| {
        !matches!(
            e.spec().kind,
            kwire::schema::MessageKind::Request | kwire::schema::MessageKind::Response
        )
    })
}

fn record_example(cat: &Catalogue, args: &ExampleArgs) -> i32 {
    let name = cat
        .entries_named(&args.api)
        .next()
        .map(|e| e.spec().name.clone())
        .unwrap_or_default();
    let (bytes, version) = match kwire::encode::example::example_payload(cat, &name, args.version) {
        Ok(x) => x,
        Err(e) => {
            kwire::stderr_line!("kwire: {e}");
            return exit::FAILURE;
        }
    };
    super::frames_out::write_payload(
        cat,
        &name,
        &bytes::Bytes::from(bytes),
        Some(version),
        args.format_as_decode(),
        args.full_docs,
    )
}

impl ExampleArgs {
    fn format_as_decode(&self) -> Option<Format> {
        match self.format {
            ExampleFormat::Hex => None,
            ExampleFormat::Tree => Some(Format::Tree),
            ExampleFormat::Grid => Some(Format::Grid),
            ExampleFormat::Json => Some(Format::Json),
            ExampleFormat::TreeJson => Some(Format::TreeJson),
        }
    }
}
