//! `closed-unanswered`: a connection that closed (a FIN from either side,
//! or an RST) while requests on it awaited their responses. A client that
//! closes within [`CLIENT_GAVE_UP`] of its request, or within a long poll's
//! own MaxWaitMs (Fetch, ShareFetch), is stopping, not giving up on an
//! answer: that stays an `unanswered` note. A capture that simply ends is
//! not a close either.

use super::super::{duration_text, At, ClientKey, Ctx, Found, FETCH, PRODUCE};
use crate::analysis::diagnosis::facts::Facts;
use crate::analysis::finding::Rule;
use crate::capture::{ConnEventKind, Side};

const SHARE_FETCH: i16 = 78;

/// How long a client waits before its close reads as giving up on the
/// answer: a client shutting down closes its connections at once (librdkafka
/// closes 20 µs after a last Metadata request), one that timed out after
/// its request timeout (seconds).
pub const CLIENT_GAVE_UP: f64 = 1.0;

/// Whether a request cut by a close was waiting for an answer that should
/// have come: acks=0 Produce requests expect none, and a client that
/// closes soon after its request (within a long poll's wait) is stopping.
pub fn lost(api: (i16, i16), sent: f64, facts: &Facts, how: ConnEventKind, when: f64) -> bool {
    if api.0 == PRODUCE && facts.int("Acks") == Some(0) {
        return false;
    }
    if how.side() == Side::Broker {
        return true;
    }
    let long_poll = match api.0 {
        FETCH | SHARE_FETCH => facts.int("MaxWaitMs").unwrap_or(0).max(0) as f64 / 1e3,
        _ => 0.0,
    };
    when - sent >= long_poll + CLIENT_GAVE_UP
}

pub fn closed(
    ctx: &Ctx<'_>,
    conn: usize,
    client: &ClientKey,
    (how, when): (ConnEventKind, f64),
    _now: f64,
    cut: &[(At, (i16, i16), &Facts)],
    out: &mut Vec<Found>,
) {
    let lost: Vec<&(At, (i16, i16), &Facts)> = cut
        .iter()
        .filter(|(at, api, facts)| lost(*api, at.time, facts, how, when))
        .collect();
    let Some(&&(first, first_api, _)) = lost.first() else {
        return;
    };
    let closer = match how {
        ConnEventKind::Reset(side) => format!("the {} reset the connection (RST)", side.as_str()),
        ConnEventKind::Fin(side) => format!("the {} closed the connection (FIN)", side.as_str()),
        ConnEventKind::Open => return,
    };
    let what = if lost.len() == 1 {
        format!(
            "{} request (frame {}) was never answered",
            ctx.api_text(first_api),
            first.index
        )
    } else {
        let names: Vec<String> = lost
            .iter()
            .take(4)
            .map(|(at, api, _)| format!("{} in frame {}", ctx.api_text(*api), at.index))
            .collect();
        let more = if lost.len() > 4 {
            format!(" and {} more", lost.len() - 4)
        } else {
            String::new()
        };
        format!(
            "{} requests were never answered ({}{more})",
            lost.len(),
            names.join(", ")
        )
    };
    out.push(Found {
        rule: Rule::ClosedUnanswered,
        frames: lost.iter().map(|(at, ..)| at.index).collect(),
        time: first.time,
        until: when,
        conn: Some(conn),
        client: Some(client.clone()),
        api: Some(first_api),
        count: lost.len() as u64,
        message: format!(
            "{what}: {closer} {} after {} sent",
            duration_text((when - first.time).max(0.0)),
            if lost.len() == 1 {
                "it was"
            } else {
                "the first was"
            }
        ),
    });
}
