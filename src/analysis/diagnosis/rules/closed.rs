//! `closed-unanswered`: a connection that closed (a FIN from either side,
//! or an RST) while requests on it awaited their responses. A client that
//! closes within [`CLIENT_GAVE_UP`] of its request, or within a long poll's
//! own MaxWaitMs (Fetch, ShareFetch), or within the wait of a long poll
//! sent before it on the connection (a broker answers a connection's
//! requests in order, so those queue behind the poll), is stopping, not
//! giving up on an answer: that stays an `unanswered` note. A capture that
//! simply ends is not a close either.

use super::super::{duration_text, At, ClientKey, Ctx, Found, FETCH, PRODUCE};
use crate::analysis::diagnosis::facts::Facts;
use crate::analysis::finding::Rule;
use crate::capture::{ConnEventKind, Side};

pub(crate) const SHARE_FETCH: i16 = 78;

/// How long a client waits before its close reads as giving up on the
/// answer: a client shutting down closes its connections at once (librdkafka
/// closes 20 µs after a last Metadata request), one that timed out after
/// its request timeout (seconds).
pub const CLIENT_GAVE_UP: f64 = 1.0;

/// A request cut by a close: where it was sent, its API and its facts.
pub(crate) type Cut<'f> = (At, (i16, i16), &'f Facts);

/// Which requests of `cut` (in the order sent) were waiting for an answer
/// that should have come, by [`lost`].
pub(crate) fn lost_of(cut: &[Cut<'_>], how: ConnEventKind, when: f64) -> Vec<bool> {
    let mut polls_until = f64::NEG_INFINITY;
    cut.iter()
        .map(|(at, api, facts)| {
            let lost = lost(*api, (at.time, polls_until), facts, how, when);
            polls_until = polls_until.max(at.time + long_poll(*api, facts));
            lost
        })
        .collect()
}

/// Whether a request cut by a close was waiting for an answer that should
/// have come: acks=0 Produce requests expect none, and a client that
/// closes soon after its request could be answered (its own long poll's
/// wait over, and that of every poll sent before it, `polls_until`) is
/// stopping.
fn lost(
    api: (i16, i16),
    (sent, polls_until): (f64, f64),
    facts: &Facts,
    how: ConnEventKind,
    when: f64,
) -> bool {
    if api.0 == PRODUCE && facts.int("Acks") == Some(0) {
        return false;
    }
    if how.side() == Side::Broker {
        return true;
    }
    let answerable = (sent + long_poll(api, facts)).max(polls_until);
    when - answerable >= CLIENT_GAVE_UP
}

/// How long the broker may hold a request's answer: a long poll's MaxWaitMs.
pub(crate) fn long_poll(api: (i16, i16), facts: &Facts) -> f64 {
    match api.0 {
        FETCH | SHARE_FETCH => facts.int("MaxWaitMs").unwrap_or(0).max(0) as f64 / 1e3,
        _ => 0.0,
    }
}

pub fn closed(
    ctx: &Ctx<'_>,
    conn: usize,
    client: &ClientKey,
    (how, when): (ConnEventKind, f64),
    _now: f64,
    cut: &[Cut<'_>],
    out: &mut Vec<Found>,
) {
    let lost: Vec<&Cut<'_>> = cut
        .iter()
        .zip(lost_of(cut, how, when))
        .filter_map(|(c, lost)| lost.then_some(c))
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
        message: match lost.iter().position(|(at, ..)| at.time > when) {
            // Sent on a connection already closed: no close cut it.
            Some(0) => format!(
                "{what}: sent {} after {closer}",
                duration_text(first.time - when)
            ),
            Some(late) => format!(
                "{what}: {closer} {} after the first was sent, and {} sent after that",
                duration_text((when - first.time).max(0.0)),
                match lost.len() - late {
                    1 => format!("frame {} was", lost[late].0.index),
                    n => format!("{n} were"),
                }
            ),
            None => format!(
                "{what}: {closer} {} after {} sent",
                duration_text((when - first.time).max(0.0)),
                if lost.len() == 1 {
                    "it was"
                } else {
                    "the first was"
                }
            ),
        },
    });
}
