//! `kwire stats CAPTURE`: requests, responses, errors, bytes and latency per
//! API and version (and per client id, connection, broker or topic).

use super::exit;
use super::filter_args::FilterArgs;
use clap::{Args, ValueEnum};
use kwire::analysis::stats::collect;
use kwire::analysis::Grouping;
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::Write;

#[derive(Args, Debug, Clone)]
#[command(
    after_help = "Examples:\n  kwire stats samples/captures/confluent-kafka.pcap\n  kwire stats samples/captures/confluent-kafka.pcap --by client,topic --format json\n  kwire stats samples/captures/kafka-python.pcap --api Fetch --min-latency 100"
)]
pub struct StatsArgs {
    /// pcap or pcapng file; `-` for standard input.
    pub file: String,
    /// Rows by API and version (the default), client id, connection, broker or
    /// topic; repeat or separate with commas. JSON always has `by_api`.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub by: Vec<By>,
    /// A text table, or one JSON object.
    #[arg(long, value_enum, default_value_t = StatsFormat::Text)]
    pub format: StatsFormat,
    /// The broker's port: the side sending to it carries requests (default: found by plausibility).
    #[arg(long)]
    pub port: Option<u16>,
    #[command(flatten)]
    pub filter: FilterArgs,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum By {
    Api,
    Client,
    Conn,
    Broker,
    Topic,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StatsFormat {
    Text,
    Json,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &StatsArgs) -> i32 {
    let filter = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let groupings: Vec<Grouping> = args
        .by
        .iter()
        .map(|b| match b {
            By::Api => Grouping::Api,
            By::Client => Grouping::Client,
            By::Conn => Grouping::Conn,
            By::Broker => Grouping::Broker,
            By::Topic => Grouping::Topic,
        })
        .collect();
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
    let c = match collect(cat, release, input, &opts, &groupings, &filter) {
        Ok(c) => c,
        Err(e) => {
            kwire::stderr_line!("kwire: {}: {}", sanitize(&args.file), sanitize(&e));
            return exit::FAILURE;
        }
    };
    if super::filter_args::no_kafka_traffic(&c.reading) {
        return exit::FAILURE;
    }
    let tls = &c.reading.capture.tls;
    let text = match args.format {
        StatsFormat::Json => {
            let mut v = c.stats.to_json(cat, &c.names);
            if let (Some(t), Some(o)) = (super::tls_args::json(tls), v.as_object_mut()) {
                o.insert("tls_connections".into(), t);
            }
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "findings".into(),
                    kwire::analysis::stats::findings_json(cat, &c.findings),
                );
            }
            kwire::render::json::to_text(&v) + "\n"
        }
        StatsFormat::Text => {
            let text = c.stats.to_text(
                cat,
                &c.names,
                groupings.is_empty() || groupings.contains(&Grouping::Api),
                super::width::stdout(),
            );
            let text = match (super::tls_args::text_line(tls), text.split_once('\n')) {
                (Some(line), Some((first, rest))) => format!("{first}\n{line}\n{rest}"),
                _ => text,
            };
            text + &kwire::analysis::stats::findings_text(cat, &c.findings)
        }
    };
    let mut out: Box<dyn Write> = match args.format {
        StatsFormat::Json => Box::new(std::io::stdout().lock()),
        StatsFormat::Text => Box::new(super::width::text_out()),
    };
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        return exit::FAILURE;
    }
    super::filter_args::Reported {
        reading: &c.reading,
        read_for: "their errors, topics or client id",
        nothing_matched: (!filter.is_empty() && c.stats.frames == 0).then_some(&args.filter),
    }
    .report()
}
