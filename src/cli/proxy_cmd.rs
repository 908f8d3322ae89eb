//! `kwire proxy`: a decoding proxy between clients and a broker. What
//! passes is recorded as a capture (see `kwire::live`) and printed by the
//! capture pipeline, so every `capture` format works on live traffic.

use super::capture_cmd::CaptureArgs;
use super::exit;
use super::frame_args::{BudgetArgs, Format, OutputArgs};
use clap::Args;
use kwire::live::proxy::{Proxy, Settings, SettingsError};
use kwire::live::recorder;
use kwire::live::synth::LINKTYPE_RAW;
use kwire::schema::Catalogue;
use kwire::text::escape::sanitize;
use std::io::IsTerminal;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire proxy --listen 127.0.0.1:19092 --broker kafka-1:9092\n  kwire proxy --listen 127.0.0.1:19092 --broker kafka-1:9092 --format json --write-pcap session.pcapng\n  kwire proxy --listen 0.0.0.0:19092 --advertise-host proxy.local --broker kafka-1:9092 --map kafka-2:9092=0.0.0.0:19200\n\nClients connect to --listen. Every broker a response names gets a listener of its own (ports above --listen's, or --map), and responses name those listeners instead. Ctrl-C closes everything and flushes the pcap."
)]
pub struct ProxyArgs {
    /// Where clients connect (for the bootstrap broker).
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: String,
    /// The bootstrap broker.
    #[arg(long, value_name = "HOST:PORT")]
    pub broker: String,
    /// A broker's listener, instead of the next free port: BROKER_HOST:PORT=LOCAL_HOST:PORT (repeatable).
    #[arg(long = "map", value_name = "BROKER=LOCAL")]
    pub maps: Vec<String>,
    /// The host name rewritten responses give clients (default: --listen's address).
    #[arg(long, value_name = "HOST")]
    pub advertise_host: Option<String>,
    /// What is printed (or shown with --tui, or written by --write-selected)
    /// is the exchanges these select, as `capture` selects them; everything
    /// is still forwarded, and --write-pcap still records everything.
    #[command(flatten)]
    pub filter: super::filter_args::FilterArgs,
    /// Decoded frames in this format instead of one line per frame.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Show the frames in the terminal explorer as they pass (q quits, and closes the proxy).
    #[arg(long, conflicts_with_all = ["format", "full_docs"])]
    pub tui: bool,
    /// Print `kwire check`'s findings as they happen instead of the frames:
    /// each frame's problems at once, a conversation's (loops, closes with
    /// requests in flight, producer sequences…) when decided, the rest when
    /// the proxy closes. With --format json, one JSON object per finding;
    /// with --filter, the findings about the frames it selects.
    #[arg(long, conflicts_with_all = ["tui", "full_docs"])]
    pub check: bool,
    /// Show descriptions in full in the tree.
    #[arg(long)]
    pub full_docs: bool,
    /// Also write the traffic as pcapng (what the clients sent and received, in synthesized TCP packets).
    #[arg(long, value_name = "FILE")]
    pub write_pcap: Option<String>,
    /// Also write the frames printed (those --filter and the selection words
    /// keep) to this pcapng file, credentials masked, as `capture
    /// --write-selected` does; --write-pcap keeps everything.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["tui", "check"])]
    pub write_selected: Option<String>,
    /// Responses up to this size that can carry broker endpoints are held whole to rewrite them; larger ones pass unchanged.
    #[arg(long, value_name = "BYTES", default_value = "16M", value_parser = kwire::budget::parse_bytes)]
    pub rewrite_max: u64,
    /// TLS towards clients: the proxy's certificate chain and private key (PEM files).
    #[arg(long, value_name = "CERT,KEY")]
    pub listen_tls: Option<String>,
    /// TLS towards the broker, trusting the certificates in this PEM file.
    #[arg(long, value_name = "CA")]
    pub broker_tls: Option<String>,
    /// Append the session keys of the proxy's own TLS connections to this file (NSS key log format).
    #[arg(long, value_name = "FILE")]
    pub tls_keylog_out: Option<String>,
    /// Client connections served at once; more are closed as they are accepted (all share one event-loop thread).
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Seconds to wait for a broker to accept a connection.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub timeout: f64,
    /// A fault on purpose (repeatable): API[:topic=NAME][:client=ID]:ACTION[:every=N|:rate=P],
    /// ACTION one of error=NAME (answered by the proxy in every partition,
    /// the request not forwarded), delay=MS, drop (forwarded, the response
    /// never delivered), close (the client's connection), duplicate (the
    /// response delivered twice). Each injection is said on standard error,
    /// and counted at exit; an error answer's ErrorMessage fields name its rule.
    #[arg(long, value_name = "RULE")]
    pub inject: Vec<String>,
    /// Seed of the `rate=P` rules' draws: the same seed picks the same requests.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    #[command(flatten)]
    pub budget: BudgetArgs,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &ProxyArgs) -> i32 {
    let selection = match args.filter.resolve(cat) {
        Ok(f) => f,
        Err(status) => return status,
    };
    // Live traffic cannot be read twice: `finding` is refused, with why.
    let no_second_reading = || None::<std::io::Empty>;
    let selection = match super::filter_args::with_findings(
        cat,
        release,
        selection,
        &Default::default(),
        no_second_reading,
    ) {
        Ok(f) => f,
        Err(status) => return status,
    };
    let settings = Settings {
        listen: args.listen.clone(),
        broker: args.broker.clone(),
        maps: args.maps.clone(),
        advertise_host: args.advertise_host.clone(),
        listen_tls: args.listen_tls.clone(),
        broker_tls: args.broker_tls.clone(),
        tls_keylog_out: args.tls_keylog_out.clone(),
        connect_timeout: args.timeout,
        rewrite_max: args.rewrite_max,
        max_connections: args.max_connections,
        inject: args.inject.clone(),
        seed: args.seed,
    };
    let cfg = match settings.config(cat, release) {
        Ok(c) => c,
        Err(SettingsError::Usage(e)) => return usage(&e),
        Err(SettingsError::Unusable(e)) => return failure(&e),
    };
    let faults = cfg.faults.clone();
    for r in faults.iter().flat_map(|f| &f.rules) {
        kwire::stderr_line!(
            "kwire: proxy: inject rule {}: {}",
            r.number,
            sanitize(&r.text)
        );
    }
    let (sinks, pipe_out) = match recorder::sinks(args.write_pcap.as_deref(), LINKTYPE_RAW) {
        Ok(s) => s,
        Err(e) => {
            kwire::stderr_line!("kwire: {}", sanitize(&e));
            return exit::FAILURE;
        }
    };
    let (rec, recording) = recorder::spawn(sinks);
    // The listener threads and the event loop live until the process ends.
    let cat: &'static Catalogue = Box::leak(Box::new(cat.clone()));
    let signals = match signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ]) {
        Ok(s) => s,
        Err(e) => {
            kwire::stderr_line!("kwire: cannot wait for Ctrl-C: {e}");
            return exit::FAILURE;
        }
    };
    if let Err(e) = Proxy::start(cat, cfg, Some(rec.clone())) {
        kwire::stderr_line!("kwire: proxy: {}", sanitize(&e));
        return exit::FAILURE;
    }
    let capture = CaptureArgs {
        file: Some("-".into()),
        interface: None,
        write_pcap: None,
        write_selected: args.write_selected.clone(),
        list: args.format.is_none(),
        correlation_id: None,
        filter: args.filter.clone(),
        frame: None,
        port: None,
        guess: false,
        output: OutputArgs {
            format: args.format.unwrap_or(Format::Tree),
            json: false,
            full_docs: args.full_docs,
        },
        budget: args.budget.clone(),
        tls: Default::default(),
        tui: false,
        provenance: true,
        streaming: true,
    };
    let release_owned = release.map(str::to_string);
    let printer = if args.tui {
        if !std::io::stdout().is_terminal() {
            return failure("the explorer needs a terminal; without --tui the frames are printed");
        }
        // The explorer reads the proxy's traffic as a capture, indexed as it passes; q closes the proxy.
        let explore = kwire::tui::capture::Explore {
            total: None,
            guess: false,
            budget: args.budget.budget(),
            filter: selection.clone(),
            topic_ids: Default::default(),
            opts: Default::default(),
        };
        let input = (
            Box::new(pipe_out) as Box<dyn std::io::Read + Send>,
            "the proxy's traffic",
        );
        let status = super::capture_cmd::explore_indexed(cat, release, input, explore, || {
            kwire::stderr_line!("kwire: proxy: closing");
            rec.shutdown();
        });
        drop(rec);
        let _ = recording.join();
        return status;
    } else if args.check {
        let format = match args.format {
            Some(Format::Json) => super::check_cmd::CheckFormat::Json,
            _ => super::check_cmd::CheckFormat::Text,
        };
        let selection = selection.clone();
        std::thread::Builder::new()
            .name("kwire-checker".into())
            .spawn(move || {
                super::check_cmd::run_on_stream(
                    cat,
                    release_owned.as_deref(),
                    Box::new(pipe_out),
                    format,
                    &selection,
                )
            })
    } else {
        std::thread::Builder::new()
            .name("kwire-printer".into())
            .spawn(move || {
                super::capture_cmd::run_on_stream(
                    cat,
                    release_owned.as_deref(),
                    &capture,
                    Box::new(pipe_out),
                )
            })
    };
    let mut signals = signals;
    let _ = signals.forever().next();
    kwire::stderr_line!("kwire: proxy: closing");
    for r in faults.iter().flat_map(|f| &f.rules) {
        let n = r.applied();
        kwire::stderr_line!(
            "kwire: proxy: rule {} ({}) applied {n} {}",
            r.number,
            sanitize(&r.text),
            if n == 1 { "time" } else { "times" }
        );
    }
    rec.shutdown();
    drop(rec);
    let recorded = recording.join();
    let mut printed = exit::OK;
    if let Ok(t) = printer {
        printed = t.join().unwrap_or(exit::FAILURE);
    }
    match recorded {
        // With --check, the status is check's: 3 when a finding is an error.
        Ok(Ok(())) if args.check => printed,
        Ok(Ok(())) => exit::OK,
        Ok(Err(e)) => {
            kwire::stderr_line!("kwire: writing the capture: {e}");
            exit::FAILURE
        }
        Err(_) => exit::FAILURE,
    }
}

fn failure(e: &str) -> i32 {
    kwire::stderr_line!("kwire: {}", sanitize(e));
    exit::FAILURE
}

fn usage(e: &str) -> i32 {
    kwire::stderr_line!("kwire: {}", sanitize(e));
    exit::USAGE
}
