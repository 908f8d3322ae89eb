//! `kwire filter`: the display filter language — check an expression, list
//! the fields an API's frames have (`--fields API`) or the facts of an
//! exchange (`--facts`).

use super::exit;
use super::filter_args::report_expression_error;
use clap::Args;
use kwire::analysis::expr::compile::{field_paths, FACTS};
use kwire::analysis::filter::Filter;
use kwire::schema::{Catalogue, MessageKind};
use kwire::text::escape::sanitize;
use std::io::Write;

const LANGUAGE: &str = "\
An expression selects exchanges (a request and its response): it holds when
it holds on the request or on the response.

  Tests     NAME                  a fact that holds, or a field that is there (not null)
            NAME OP VALUE         OP: == != < <= > >= contains matches
            NAME in {V1, V2, ...}
  Logic     and  or  not  ( )     (also && || !)
  Names     a field by its schema name anywhere in the message (ErrorCode),
            a path ending so (Partitions.ErrorCode), or from the top
            (header.ClientId, body.Topics.Partitions.ErrorCode); an array
            matches when any element does. Facts: api, version, direction,
            latency, size, conn, client_id, topic, error, correlation_id, frame,
            finding.
            Records: record.key, record.value, record.headers.key,
            record.headers.value, record.offset, record.timestamp.
  Values    numbers (-1, 0x1f, 2.5), \"strings\" (\\\" \\\\ \\n \\t \\xHH),
            error names (NOT_COORDINATOR), API names (Produce), request,
            response, true, false; latency takes us, ms, s; size B, KiB, MB.

Examples:
  kwire capture c.pcap --list --filter 'ErrorCode != 0'
  kwire capture c.pcap --list -Y 'api == JoinGroup and ErrorCode == MEMBER_ID_REQUIRED and version < 4'
  kwire stats c.pcap --filter 'api == Fetch and MaxWaitMs > 500'
  kwire capture c.pcap --list -Y 'client_id matches \"^console-\" and latency > 100ms'
  kwire filter --fields Produce";

#[derive(Args, Debug)]
#[command(after_help = LANGUAGE)]
pub struct FilterCmdArgs {
    /// An expression to check: what each name resolves to, or where it is wrong.
    #[arg(value_name = "EXPR", conflicts_with_all = ["fields", "facts"])]
    pub expr: Option<String>,
    /// The field paths of this API's request and response, with their types and versions.
    #[arg(long, value_name = "API")]
    pub fields: Option<String>,
    /// The facts of an exchange a filter can test.
    #[arg(long)]
    pub facts: bool,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &FilterCmdArgs) -> i32 {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.facts {
        for (name, _, about) in FACTS {
            let _ = writeln!(out, "{name:<15} {about}");
        }
        return exit::OK;
    }
    if let Some(api) = &args.fields {
        let Some(key) = super::resolve_api_or_report(cat, api) else {
            return exit::FAILURE;
        };
        let name = cat.api_name(key).unwrap_or("?").to_string();
        for kind in [MessageKind::Request, MessageKind::Response] {
            let paths = field_paths(cat, kind, key, release);
            let side = if kind == MessageKind::Request {
                "request"
            } else {
                "response"
            };
            let _ = writeln!(out, "{} {side}", sanitize(&name));
            let width = paths.iter().map(|p| p.path.len()).max().unwrap_or(0);
            let ty_width = paths.iter().map(|p| p.ty.len()).max().unwrap_or(0);
            for p in paths {
                let _ = writeln!(
                    out,
                    "  {:<width$}  {:<ty_width$}  v{}",
                    sanitize(&p.path),
                    sanitize(&p.ty),
                    p.versions
                );
            }
        }
        let _ = writeln!(
            out,
            "header (every request): header.RequestApiKey, header.RequestApiVersion, header.CorrelationId, header.ClientId; (every response): header.CorrelationId"
        );
        return exit::OK;
    }
    let Some(expr) = &args.expr else {
        let _ = writeln!(out, "{LANGUAGE}");
        return exit::OK;
    };
    match Filter::parse(cat, expr) {
        Ok(f) => {
            let _ = writeln!(out, "{}", f.explain(cat));
            exit::OK
        }
        Err(e) => {
            report_expression_error(expr, &e);
            exit::MALFORMED
        }
    }
}
