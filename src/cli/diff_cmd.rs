//! `kwire diff`: two versions of an API (fields, headers, bytes), the same
//! values at both (`--compare`), or two releases' definitions (`--releases`).
//! Names come from definitions, which `--defs` may load from anywhere: all
//! text is escaped before it is printed.

use super::{exit, resolve_api_or_report};
use clap::{Args, ValueEnum};
use kwire::render::json::to_text;
use kwire::schema::{Catalogue, MessageKind};
use kwire::teach::diff_view::{render_release_diff, render_version_diff};
use kwire::teach::release_diff::{names_for, release_diff};
use kwire::teach::version_diff::{flexible_switch, version_diff, VersionDiff};
use kwire::text::escape::{is_unsafe_char, sanitize, sanitize_lines};
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire diff Metadata 8 9\n  kwire diff Metadata --compare\n  kwire diff --releases 3.9 4.0"
)]
pub struct DiffArgs {
    /// API name or key; with --releases also a record type (ShareSnapshotValue),
    /// or nothing for every definition.
    pub name: Option<String>,
    /// The version to compare from.
    pub from: Option<i16>,
    /// The version to compare to.
    pub to: Option<i16>,
    /// Compare two releases' definitions instead (e.g. --releases 4.1 4.2).
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with_all = ["from", "to", "compare"])]
    pub releases: Option<Vec<String>>,
    /// Encode the same values at both versions and map their bytes by field
    /// path; without versions, the API's switch to flexible encodings.
    #[arg(long)]
    pub compare: bool,
    /// Only the request.
    #[arg(long, conflicts_with = "response")]
    pub request: bool,
    /// Only the response.
    #[arg(long)]
    pub response: bool,
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    pub format: DiffFormat,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &DiffArgs) -> i32 {
    let text = match &args.releases {
        Some(r) => releases(cat, args, &r[0], &r[1]),
        None => versions(cat, release, args),
    };
    match text {
        Ok(t) => {
            let _ = std::io::stdout().lock().write_all(t.as_bytes());
            exit::OK
        }
        Err(status) => status,
    }
}

fn releases(cat: &Catalogue, args: &DiffArgs, from: &str, to: &str) -> Result<String, i32> {
    let d = names_for(cat, args.name.as_deref())
        .and_then(|names| release_diff(cat, &names, from, to))
        .map_err(|e| {
            kwire::stderr_line!("kwire: {}", sanitize(&e.to_string()));
            exit::FAILURE
        })?;
    Ok(match args.format {
        DiffFormat::Json => format!(
            "{}\n",
            to_text(&serde_json::to_value(&d).unwrap_or_default())
        ),
        DiffFormat::Text => sanitize_lines(&render_release_diff(&d)),
    })
}

fn versions(cat: &Catalogue, release: Option<&str>, args: &DiffArgs) -> Result<String, i32> {
    let Some(name) = &args.name else {
        kwire::stderr_line!(
            "kwire: give an API and two versions (kwire diff Metadata 8 9), or --releases A B"
        );
        return Err(exit::MALFORMED);
    };
    let key = resolve_api_or_report(cat, name).ok_or(exit::FAILURE)?;
    let (from, to) = match (args.from, args.to) {
        (Some(a), Some(b)) => (a, b),
        (None, None) if args.compare => flexible_switch(cat, key, release).ok_or_else(|| {
            kwire::stderr_line!(
                "kwire: {} never switched to flexible encodings; give two versions to compare",
                sanitize(name)
            );
            exit::FAILURE
        })?,
        _ => {
            kwire::stderr_line!(
                "kwire: give two versions to compare (kwire diff {} 8 9)",
                sanitize(name)
            );
            return Err(exit::MALFORMED);
        }
    };
    let mut d = version_diff(cat, key, from, to, release, args.compare).map_err(|e| {
        kwire::stderr_line!("kwire: {}", sanitize(&e.to_string()));
        exit::FAILURE
    })?;
    let only = match (args.request, args.response) {
        (true, _) => Some(MessageKind::Request),
        (_, true) => Some(MessageKind::Response),
        _ => None,
    };
    d.directions.retain(|x| only.is_none_or(|k| x.kind == k));
    Ok(match args.format {
        DiffFormat::Json => format!(
            "{}\n",
            to_text(&serde_json::to_value(&d).unwrap_or_default())
        ),
        DiffFormat::Text => {
            let color = super::color::stdout();
            safe_version_diff(&d, color)
        }
    })
}

/// The version diff's text with nothing unsafe from the definitions in it.
/// Colour codes are kwire's own only when the text without them needs no
/// escapes; otherwise it is printed escaped and without colour.
fn safe_version_diff(d: &VersionDiff, color: bool) -> String {
    let plain = render_version_diff(d, false);
    if plain.chars().any(|c| c != '\n' && is_unsafe_char(c)) {
        return sanitize_lines(&plain);
    }
    if color {
        render_version_diff(d, true)
    } else {
        plain
    }
}
