//! The exchange tables: the same exchange asked again (same client id,
//! broker, API and version, outcome and error codes) is one row with its
//! count and period, times from the first request; the errors table is the
//! rows whose answer carries an error code or never came.

use super::{api_text, client_text, frame_link};
use crate::analysis::report::{percentile, Cadence, Collected, Repeat};
use crate::analysis::stats::error_text;
use crate::analysis::Outcome;
use crate::schema::Catalogue;
use crate::text::escape::html as esc;
use crate::text::{duration, duration_us};
use std::fmt::Write;

/// Rows of a table; the groups beyond are counted in a note.
pub const MAX_ROWS: usize = 2_000;

fn cadence_text(c: Cadence) -> String {
    match c {
        Cadence::Once => "-".into(),
        Cadence::Regular(p) => format!("every {}", duration(p)),
        Cadence::Irregular(p) => format!("median gap {}", duration(p)),
    }
}

/// What came back: latency (the median of a group), or why there is none.
fn outcome_text(c: &Collected, g: &Repeat) -> String {
    let first = &c.exchanges[g.members[0]];
    match first.outcome {
        Outcome::Answered { .. } => {
            let mut l: Vec<u64> = g
                .members
                .iter()
                .filter_map(|&i| c.exchanges[i].latency_us())
                .collect();
            l.sort_unstable();
            match (percentile(&l, 50.0), l.last()) {
                (Some(m), Some(&max)) if l.len() > 1 => {
                    format!("{} (median; max {})", duration_us(m), duration_us(max))
                }
                (Some(m), _) => duration_us(m),
                _ => "-".into(),
            }
        }
        Outcome::Unanswered { .. } => {
            let longest = g
                .members
                .iter()
                .filter_map(|&i| match c.exchanges[i].outcome {
                    Outcome::Unanswered { waited_us } => Some(waited_us),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            let most = if g.members.len() > 1 { "at most " } else { "" };
            format!("never answered (waited {most}{})", duration_us(longest))
        }
        Outcome::Unmatched => "response no request awaited".into(),
        Outcome::Pending => "-".into(),
    }
}

fn table(out: &mut String, cat: &Catalogue, c: &Collected, groups: &[&Repeat], t0: f64) {
    out.push_str("<table class=data><tr><th>first at</th><th>api</th><th>client id</th><th>broker</th><th>errors</th><th>latency</th><th>times</th><th>cadence</th><th>last at</th><th>frames</th></tr>\n");
    for g in groups.iter().take(MAX_ROWS) {
        let first = &c.exchanges[g.members[0]];
        let last = &c.exchanges[*g.members.last().unwrap_or(&g.members[0])];
        let errors: Vec<String> = first.errors.iter().map(|&x| error_text(x)).collect();
        let frames = if g.members.len() == 1 {
            format!(
                "{} {}",
                frame_link(first.request),
                frame_link(first.response)
            )
        } else {
            format!(
                "first {} · last {}",
                frame_link(first.request.or(first.response)),
                frame_link(last.request.or(last.response))
            )
        };
        let _ = writeln!(
            out,
            "<tr><td class=num>+{:.3} s</td><td>{}</td><td>{}</td><td>{}</td><td{}>{}</td><td class=num>{}</td><td class=num>{}</td><td>{}</td><td class=num>{}</td><td>{frames}</td></tr>",
            first.start() - t0,
            esc(&api_text(cat, first.api)),
            esc(&client_text(&c.names, first.client_id)),
            first.broker,
            if errors.is_empty() { "" } else { " class=err" },
            if errors.is_empty() { "-".into() } else { esc(&errors.join(" ")) },
            esc(&outcome_text(c, g)),
            g.members.len(),
            esc(&cadence_text(g.cadence(&c.exchanges))),
            if g.members.len() > 1 { format!("+{:.3} s", last.start() - t0) } else { "-".into() },
        );
    }
    out.push_str("</table>\n");
    if groups.len() > MAX_ROWS {
        let _ = writeln!(
            out,
            "<p class=note>The first {MAX_ROWS} rows of {} are listed.</p>",
            groups.len()
        );
    }
}

pub(crate) fn errors_section(
    out: &mut String,
    cat: &Catalogue,
    c: &Collected,
    groups: &[Repeat],
    t0: f64,
) {
    out.push_str("<section id=errors><h2>Errors and unanswered requests</h2>");
    let bad: Vec<&Repeat> = groups
        .iter()
        .filter(|g| {
            let e = &c.exchanges[g.members[0]];
            !e.errors.is_empty() || matches!(e.outcome, Outcome::Unanswered { .. })
        })
        .collect();
    if bad.is_empty() {
        out.push_str("<p class=note>Every request was answered, and no response carries an error code.</p></section>\n");
        return;
    }
    out.push_str("<p class=note>The same exchange again (same client id, broker, API and version, and errors) is one row.</p>");
    table(out, cat, c, &bad, t0);
    out.push_str("</section>\n");
}

pub(crate) fn exchanges_section(
    out: &mut String,
    cat: &Catalogue,
    c: &Collected,
    groups: &[Repeat],
    t0: f64,
) {
    out.push_str("<section id=exchanges><h2>Exchanges</h2>");
    let _ = write!(
        out,
        "<p class=note>{} in {}: the same exchange again (same client id, broker, API and version, outcome and errors) is one row with how many times and how often it came; times from the first request.",
        crate::text::count(c.exchanges.len(), "exchange", "exchanges"),
        crate::text::count(groups.len(), "row", "rows"),
    );
    if c.exchanges_not_kept > 0 {
        let _ = write!(
            out,
            " The first {} exchanges are here; {} more are counted in the stats only.",
            c.exchanges.len(),
            c.exchanges_not_kept
        );
    }
    out.push_str("</p>");
    let all: Vec<&Repeat> = groups.iter().collect();
    table(out, cat, c, &all, t0);
    out.push_str("</section>\n");
}
