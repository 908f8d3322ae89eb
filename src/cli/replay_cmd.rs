//! `kwire replay CAPTURE --broker HOST:PORT`: every client connection of a
//! capture sent again to a broker, each answer compared with the captured
//! one (`kwire::live::replay`), and what differs printed by API.

use super::exit;
use clap::{Args, ValueEnum};
use kwire::analysis::compare::Ignore;
use kwire::live::recorder;
use kwire::live::replay::{conversations, replay, verdicts, Conversation, Options, Verdict};
use kwire::live::synth::{PcapngWriter, LINKTYPE_RAW};
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::Write;
use std::time::Duration;

/// Status when some exchange differs or went unanswered.
const DIFFERS: i32 = 3;
/// Captured frame bytes held for a replay at most (requests and answers).
const MAX_HELD: usize = 1 << 30;

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ReplayFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire replay session.pcapng --broker 127.0.0.1:9092\n  kwire replay session.pcapng --broker new-cluster:9092 --map --format json\n  kwire replay session.pcapng --broker 127.0.0.1:9092 --fast --ignore Fetch:HighWatermark --write-pcap replayed.pcapng\n\nEvery client connection of the capture gets a connection of its own to --broker (all of them, whichever broker they went to), concurrently unless --serial; its requests go in capture order, each no earlier than its time in the capture unless --fast, and each answer is read before the next request; a request also waits for the other connections' exchanges the capture answered before it was sent. Correlation ids are our own. Answers are compared field by field, records record by record, leaving out what legitimately differs: times the broker stamps, node ids, hosts and ports, cluster, topic, producer, member and session ids, error messages (--ignore adds more). Exit status: 0 when every exchange is the same, 3 when some differ or go unanswered, 2 on an error."
)]
pub struct ReplayArgs {
    /// The capture (pcap or pcapng).
    pub file: String,
    /// The broker to send the capture's requests to.
    #[arg(long, value_name = "HOST:PORT")]
    pub broker: String,
    /// Connections one after another, each whole, not at once (so a request waits for no other connection)
    #[arg(long)]
    pub serial: bool,
    /// Carry the values the new broker hands out (producer ids and epochs,
    /// member ids, generations, fetch session ids) into the requests that
    /// follow, records data included, in place of the captured ones.
    #[arg(long)]
    pub map: bool,
    /// Also leave this field out of the comparison (repeatable): a name
    /// anywhere (HighWatermark), the end of a dotted path without indexes
    /// (Partitions.HighWatermark), optionally for one API (Fetch:HighWatermark).
    #[arg(long, value_name = "PATH")]
    pub ignore: Vec<String>,
    /// Send as fast as the broker answers, not at the capture's pace.
    #[arg(long)]
    pub fast: bool,
    /// Play the capture's time this many times faster (without --fast).
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0)]
    pub speed: f64,
    /// Seconds to wait for the connection and for each answer.
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    pub timeout: f64,
    /// SASL PLAIN credentials sent in place of the capture's (which are never sent).
    #[arg(long, value_name = "USER:PASSWORD")]
    pub sasl_plain: Option<String>,
    /// Write the replayed conversation as pcapng, to open like any capture.
    #[arg(long, value_name = "FILE")]
    pub write_pcap: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: ReplayFormat,
    /// The capture's broker port, when it cannot be told from the traffic.
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    #[command(flatten)]
    pub tls: super::tls_args::TlsArgs,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &ReplayArgs) -> i32 {
    let timeout = Duration::try_from_secs_f64(args.timeout).unwrap_or(Duration::from_secs(5));
    let sasl_plain = match &args.sasl_plain {
        Some(t) => match t.split_once(':') {
            Some((u, p)) => Some((u.to_string(), p.to_string())),
            None => return error("--sasl-plain takes USER:PASSWORD"),
        },
        None => None,
    };
    if !(args.speed > 0.0 && args.speed.is_finite()) {
        return error("--speed takes a positive factor");
    }
    let conversations = match read_conversations(cat, args) {
        Ok(c) => c,
        Err(e) => return error(&e),
    };
    // A broker nobody listens on is an error, not a page of no-answers.
    if let Err(e) = kwire::live::wire::connect(&args.broker, timeout) {
        return error(&format!("--broker {e}"));
    }
    let recording = match &args.write_pcap {
        Some(path) => {
            let file = match std::fs::File::create(path) {
                Ok(f) => f,
                Err(e) => return error(&format!("{path}: {e}")),
            };
            let writer = match PcapngWriter::new(
                Box::new(std::io::BufWriter::new(file)) as Box<dyn Write + Send>,
                LINKTYPE_RAW,
            ) {
                Ok(w) => w,
                Err(e) => return error(&format!("{path}: {e}")),
            };
            Some(recorder::spawn(vec![writer]))
        }
        None => None,
    };
    let opts = Options {
        broker: args.broker.clone(),
        timeout,
        serial: args.serial,
        map: args.map,
        paced: !args.fast,
        speed: args.speed,
        ignore: Ignore::with_defaults(&args.ignore),
        sasl_plain,
        max_frame: 256 << 20,
        release: release.map(str::to_string),
    };
    let outcomes = replay(cat, &conversations, &opts, recording.as_ref().map(|r| &r.0));
    if let Some((rec, thread)) = recording {
        rec.shutdown();
        drop(rec);
        if let Ok(Err(e)) = thread.join() {
            return error(&format!("writing the capture: {e}"));
        }
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let printed = match args.format {
        ReplayFormat::Json => verdicts::write_json(&mut out, cat, &outcomes),
        ReplayFormat::Text => verdicts::write_text(&mut out, cat, &outcomes),
    }
    .and_then(|_| out.flush());
    if let Err(e) = printed {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return exit::OK;
        }
        return error(&e.to_string());
    }
    if outcomes
        .iter()
        .any(|o| matches!(o.verdict, Verdict::Differs | Verdict::NoAnswer))
    {
        DIFFERS
    } else {
        exit::OK
    }
}

fn error(e: &str) -> i32 {
    kwire::stderr_line!("kwire: replay: {}", sanitize(e));
    exit::MALFORMED
}

/// The capture's client connections: each request with its captured answer.
fn read_conversations(cat: &Catalogue, args: &ReplayArgs) -> Result<Vec<Conversation>, String> {
    let input = std::fs::File::open(&args.file).map_err(|e| format!("{}: {e}", args.file))?;
    let capture_opts = args
        .tls
        .capture_options(args.port)
        .map_err(|_| "the TLS options are wrong".to_string())?;
    let read = conversations::read(cat, input, &capture_opts, MAX_HELD)
        .map_err(|e| format!("{}: {e}", args.file))?;
    if read.cut_short {
        kwire::stderr_line!(
            "kwire: replay: the capture holds more than {} MiB of frames; the replay stops at the frames read before",
            MAX_HELD >> 20
        );
    }
    let stats = &read.stats;
    if stats.frames == 0 && read.conversations.is_empty() {
        return Err(format!(
            "{}: no Kafka traffic found ({} packets, {} TCP segments; try --port)",
            args.file, stats.packets, stats.tcp_segments
        ));
    }
    Ok(read.conversations)
}
