//! `kwire inventory CAPTURE [--target-release R]`: every client, its
//! software, connections and API versions, what the brokers advertised, and
//! what release R no longer serves.

use super::exit;
use super::filter_args::FilterArgs;
use clap::{Args, ValueEnum};
use kwire::analysis::inventory::{collect, Inventory};
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::Write;

/// Some API version a client used is not served by the target release.
pub const FLAGGED: i32 = 3;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  kwire inventory samples/captures/confluent-kafka.pcap\n  kwire inventory samples/captures/kafka-python.pcap --target-release 4.0\n  kwire inventory samples/captures/kcat.pcap --port 19092 --format json"
)]
pub struct InventoryArgs {
    /// pcap or pcapng file; `-` for standard input.
    pub file: String,
    /// Flag every API version used that this release (3.9 … 4.3) no longer
    /// serves, with the versions to move to; exit status 3 when any is.
    #[arg(long, value_name = "R")]
    pub target_release: Option<String>,
    /// Text per client, or one JSON object.
    #[arg(long, value_enum, default_value_t = InventoryFormat::Text)]
    pub format: InventoryFormat,
    /// The broker's port: the side sending to it carries requests (default: found by plausibility).
    #[arg(long)]
    pub port: Option<u16>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum InventoryFormat {
    Text,
    Json,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &InventoryArgs) -> i32 {
    // What a release serves is the built-in catalogue's: loaded definitions belong to no release.
    let builtin = Catalogue::builtin();
    if let Some(r) = &args.target_release {
        if !builtin.releases.iter().any(|x| x == r) {
            kwire::stderr_line!(
                "kwire: unknown release {}; known: {}",
                kwire::text::escape::quote(r),
                builtin.releases.join(", ")
            );
            return exit::FAILURE;
        }
    }
    let filter = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let input = match super::open_input(&args.file) {
        Ok(i) => i,
        Err(status) => return status,
    };
    let opts = match args.tls.capture_options(args.port) {
        Ok(o) => o,
        Err(status) => return status,
    };
    let reopen = || super::reopen_file(&args.file);
    let filter = match super::filter_args::with_findings(cat, release, filter, &opts, reopen) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let c = match collect(cat, release, input, &opts, &filter) {
        Ok(c) => c,
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", sanitize(&args.file), sanitize(&e));
            return exit::FAILURE;
        }
    };
    if super::filter_args::no_kafka_traffic(&c.reading) {
        return exit::FAILURE;
    }
    let inv = Inventory::new(
        cat,
        builtin,
        &c.facts,
        &c.names,
        args.target_release.as_deref(),
    );
    let tls = &c.reading.capture.tls;
    let text = match args.format {
        InventoryFormat::Json => {
            let mut v = inv.to_json();
            if let (Some(t), Some(o)) = (super::tls_args::json(tls), v.as_object_mut()) {
                o.insert("tls_connections".into(), t);
            }
            kwire::render::json::to_text(&v) + "\n"
        }
        InventoryFormat::Text => match super::tls_args::text_line(tls) {
            Some(line) => format!("{line}\n{}", inv.to_text(cat)),
            None => inv.to_text(cat),
        },
    };
    let mut out: Box<dyn Write> = match args.format {
        InventoryFormat::Json => Box::new(std::io::stdout().lock()),
        InventoryFormat::Text => Box::new(super::width::text_out()),
    };
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return exit::FAILURE;
    }
    let mut status = super::filter_args::Reported {
        reading: &c.reading,
        read_for: "their client id, software or advertised versions",
        nothing_matched: (!filter.is_empty() && c.facts.selected == 0).then_some(&args.filter),
    }
    .report();
    let flagged = inv.flagged();
    if flagged > 0 {
        if let Some(r) = &args.target_release {
            let (what, verb) = if flagged == 1 {
                ("API version", "is")
            } else {
                ("API versions", "are")
            };
            kwire::stderr_line!(
                "kwire: {flagged} {what} used {verb} not served by {}",
                sanitize(r)
            );
        }
        // The flags stand whatever else went wrong: what was read is still used.
        status = FLAGGED;
    }
    status
}
