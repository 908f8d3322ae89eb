//! The exchange filter's options, shared by `capture` and `stats`
//! (`kwire::analysis::filter` says what each selects).

use super::{exit, resolve_api_or_report};
use clap::Args;
use kwire::analysis::filter::{error_code, Filter, Words};
use kwire::schema::Catalogue;
use kwire::text::escape::{quote, sanitize};

#[derive(Args, Debug, Clone, Default)]
pub struct FilterArgs {
    /// Only exchanges the expression selects (`kwire filter --help`; e.g.
    /// 'ErrorCode != 0', 'api == JoinGroup and version < 4', 'latency > 100ms').
    #[arg(long, short = 'Y', value_name = "EXPR")]
    pub filter: Option<String>,
    /// Only exchanges of this API (name or key): `api == NAME`.
    #[arg(long)]
    pub api: Option<String>,
    /// Only exchanges whose request or response names this topic (or topic id): `topic == "NAME"`.
    #[arg(long)]
    pub topic: Option<String>,
    /// Only exchanges whose request has this client id: `client_id == "ID"`.
    #[arg(long)]
    pub client_id: Option<String>,
    /// Only exchanges of this connection (the number in --list): `conn == N`.
    #[arg(long)]
    pub conn: Option<usize>,
    /// Only exchanges whose response has an error (this one: a name or code): `error`, `error == NAME`.
    #[arg(long, value_name = "NAME", num_args = 0..=1)]
    pub error: Option<Option<String>>,
    /// Only exchanges that took at least MS milliseconds (requests never answered: that waited as long): `latency >= MSms`.
    #[arg(long, value_name = "MS")]
    pub min_latency: Option<f64>,
}

impl FilterArgs {
    /// The filter, or the exit status after saying on stderr what is wrong.
    pub fn resolve(&self, cat: &Catalogue) -> Result<Filter, i32> {
        let api = match &self.api {
            Some(a) => Some(resolve_api_or_report(cat, a).ok_or(exit::FAILURE)?),
            None => None,
        };
        let error = match &self.error {
            None => None,
            Some(None) => Some(None),
            Some(Some(name)) => match error_code(name) {
                Some(c) => Some(Some(c)),
                None => {
                    kwire::stderr_line!("kwire: unknown error {}; give a name such as NOT_LEADER_OR_FOLLOWER or a code", quote(name));
                    return Err(exit::FAILURE);
                }
            },
        };
        let min_latency_us = match self.min_latency {
            None => None,
            Some(ms) if ms.is_finite() && ms >= 0.0 => Some((ms * 1000.0).round() as u64),
            Some(ms) => {
                kwire::stderr_line!("kwire: --min-latency {ms}: give milliseconds, 0 or more");
                return Err(exit::MALFORMED);
            }
        };
        let alone = match &self.filter {
            // Checked alone first, so that an error points into the text given.
            Some(expr) => match Filter::parse(cat, expr) {
                Ok(f) => Some(f),
                Err(e) => {
                    report_expression_error(expr, &e);
                    return Err(exit::MALFORMED);
                }
            },
            None => None,
        };
        let words = Words {
            api,
            topic: self.topic.clone(),
            client_id: self.client_id.clone(),
            conn: self.conn,
            error,
            min_latency_us,
        };
        if let (Some(f), true) = (alone, words.is_empty()) {
            return Ok(f);
        }
        Filter::from_words(cat, &words, self.filter.as_deref()).map_err(|e| {
            report_expression_error(&Filter::words_text(cat, &words, self.filter.as_deref()), &e);
            exit::MALFORMED
        })
    }

    /// The options given, as typed (escaped), for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(f) = &self.filter {
            parts.push(format!("--filter {}", quote(f)));
        }
        if let Some(a) = &self.api {
            parts.push(format!("--api {}", sanitize(a)));
        }
        if let Some(t) = &self.topic {
            parts.push(format!("--topic {}", quote(t)));
        }
        if let Some(c) = &self.client_id {
            parts.push(format!("--client-id {}", quote(c)));
        }
        if let Some(c) = self.conn {
            parts.push(format!("--conn {c}"));
        }
        match &self.error {
            Some(Some(e)) => parts.push(format!("--error {}", sanitize(e))),
            Some(None) => parts.push("--error".into()),
            None => {}
        }
        if let Some(ms) = self.min_latency {
            parts.push(format!("--min-latency {ms}"));
        }
        parts.join(" ")
    }
}

/// Say on stderr what is wrong with an expression, with a caret under the place.
pub fn report_expression_error(text: &str, e: &kwire::analysis::expr::syntax::SyntaxError) {
    // Escaped as a whole line by line: the caret line counts characters of the text as shown.
    let shown = sanitize(text);
    let e = kwire::analysis::expr::syntax::SyntaxError {
        at: sanitize(text.get(..e.at).unwrap_or(text)).len(),
        len: sanitize(text.get(e.at..(e.at + e.len).min(text.len())).unwrap_or("")).len(),
        message: sanitize(&e.message),
    };
    for line in e.show(&shown).lines() {
        // The expression and the caret under it keep their columns.
        match line.starts_with("  ") {
            true => kwire::stderr_laid_out!("{line}"),
            false => kwire::stderr_line!("kwire: --filter: {line}"),
        }
    }
}

/// What reading a capture for an analysis (`stats`, `inventory`, `report`)
/// left out, said on stderr, and the exit status it makes: 2 when the
/// capture was cut short, bytes were in no frame, TLS connections were not
/// (wholly) decrypted or frames read for facts did not decode (`read_for`
/// says what they were read for); 1 when a selection matched nothing; else 0.
pub struct Reported<'a> {
    pub reading: &'a kwire::analysis::exchange::Reading,
    pub read_for: &'a str,
    /// The filter given, when it selected nothing.
    pub nothing_matched: Option<&'a FilterArgs>,
}

impl Reported<'_> {
    pub fn report(&self) -> i32 {
        let r = self.reading;
        let mut status = exit::OK;
        if let Some(e) = &r.capture.error {
            kwire::stderr_line!(
                "kwire: capture cut short after {} packets: {}",
                r.capture.packets,
                sanitize(e)
            );
            status = exit::MALFORMED;
        }
        if r.skips > 0 {
            let places = if r.skips == 1 { "place" } else { "places" };
            kwire::stderr_line!(
                "kwire: {} bytes in {} {places} are in no frame (gaps, partial frames or bytes passed over); `kwire capture --list` shows where",
                r.skipped_bytes, r.skips
            );
            status = exit::MALFORMED;
        }
        if super::tls_args::report(&r.capture.tls) {
            status = exit::MALFORMED;
        }
        if let Some(first) = r.first_undecoded {
            let frames = if r.undecoded == 1 { "frame" } else { "frames" };
            kwire::stderr_line!(
                "kwire: {} {frames} read for {} did not decode completely (the first: frame {first}, `kwire capture --frame {first}` shows it); what was read before the error is used",
                r.undecoded, self.read_for
            );
            status = exit::MALFORMED;
        }
        if let Some(filter) = self.nothing_matched {
            kwire::stderr_line!("kwire: no exchange matches {}", filter.describe());
            if status == exit::OK {
                status = exit::FAILURE;
            }
        }
        status
    }
}

/// Whether the capture held no Kafka traffic at all (no frame, no skip
/// note, no TLS connection); if so, it is said with the hint to name the
/// broker's port.
pub fn no_kafka_traffic(r: &kwire::analysis::exchange::Reading) -> bool {
    let c = &r.capture;
    report_unrecognised(c);
    let none = c.frames == 0 && c.skips == 0 && c.tls.connections == 0;
    if none {
        kwire::stderr_line!(
            "kwire: no Kafka traffic found in {} packets ({} TCP segments); try --port",
            c.packets,
            c.tcp_segments
        );
    }
    none
}

/// Say on stderr how many connections carried bytes not taken for Kafka, so
/// that no connection is left out without a word (their traffic may be
/// Kafka that kwire could not recognise: name the broker's port).
pub fn report_unrecognised(stats: &kwire::capture::CaptureStats) {
    let lost = stats.fragments;
    if lost.lost > 0 {
        kwire::stderr_line!(
            "kwire: {} IP fragments ({} bytes) belong to datagrams the capture never completed: what they carried is missing (a gap where it was TCP)",
            lost.lost,
            lost.lost_bytes
        );
    }
    if let Some((conn, direction, offset)) = stats.first_conflict {
        let side = match direction {
            Some(kwire::decode::Direction::Request) => "the client's stream",
            Some(kwire::decode::Direction::Response) => "the broker's stream",
            None => "a stream",
        };
        kwire::stderr_line!(
            "kwire: {} carried bytes other than the copy already read for the same stream bytes (first: conn {conn}, {side} at offset {offset}); the first copy was decoded",
            kwire::text::count(stats.conflicting_segments as usize, "TCP segment", "TCP segments")
        );
    }
    let u = stats.uncompared;
    if u.segments > 0 {
        kwire::stderr_line!(
            "kwire: {} repeated {} already decoded without being compared with them (the first retransmission on its side of a connection: later ones are compared); the first copy was decoded",
            kwire::text::count(u.segments as usize, "TCP segment", "TCP segments"),
            kwire::text::count(u.bytes as usize, "stream byte", "stream bytes")
        );
    }
    let n = stats.unrecognised_connections;
    if n == 0 {
        return;
    }
    let conns = if n == 1 {
        "TCP connection was"
    } else {
        "TCP connections were"
    };
    kwire::stderr_line!(
        "kwire: {n} {conns} not taken for Kafka ({} bytes): neither side's first bytes are a Kafka request; if they are Kafka, name the broker port with --port",
        stats.unrecognised_bytes
    );
}

/// The filter, with the findings of the whole capture when it tests
/// `finding` (a first reading, as `kwire check` reads it). `reopen` opens
/// the capture for that reading; `None` when it cannot be read twice (a
/// stream), which `finding` then cannot be used on: said, status 2.
pub fn with_findings<R: std::io::Read>(
    cat: &Catalogue,
    release: Option<&str>,
    filter: Filter,
    capture: &kwire::capture::CaptureOptions,
    reopen: impl FnOnce() -> Option<R>,
) -> Result<Filter, i32> {
    if !filter.needs_findings() {
        return Ok(filter);
    }
    let Some(input) = reopen() else {
        kwire::stderr_line!(
            "kwire: --filter: `finding` reads the capture's findings first, so it needs a capture that can be read twice (a file, not a stream)"
        );
        return Err(exit::MALFORMED);
    };
    let opts = kwire::decode::DecodeOptions {
        release: release.map(str::to_string),
        ..Default::default()
    };
    match kwire::analysis::finding_filter::rules_by_frame(cat, opts, input, capture) {
        Ok(rules) => Ok(filter.with_findings(rules)),
        Err(e) => {
            kwire::stderr_line!("kwire: --filter: reading the findings: {}", sanitize(&e));
            Err(exit::FAILURE)
        }
    }
}
