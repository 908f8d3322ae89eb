//! `closed-unanswered`: a connection that closed (a FIN from either side,
//! or an RST) while requests on it awaited their responses. A client that
//! closes within [`CLIENT_GAVE_UP`] of when its request could be answered
//! (its own long poll's MaxWaitMs over, Fetch or ShareFetch, and the wait of
//! every long poll in flight before it on the connection: a broker answers
//! a connection's requests in order, so those queue behind the poll) is
//! stopping, and that stays an `unanswered` note, unless it opens a new
//! connection to the broker at once and goes on with its work there
//! (`rules::reconnects`): then it gave up waiting. The polls are those in
//! flight at the close, not at the connection's end: a broker may still
//! answer a poll on a connection the client half-closed. A capture that
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

/// A long poll in flight when a connection began to close: when it was
/// sent, and until when the broker may hold its answer. Taken at the close,
/// not at the connection's end: a broker may answer a poll on a connection
/// the client half-closed (tansu does), and what queued behind it still
/// waited for it.
pub(crate) type Poll = (f64, f64);

/// The long polls among requests in flight.
pub(crate) fn polls(in_flight: &[Cut<'_>]) -> Vec<Poll> {
    in_flight
        .iter()
        .filter(|(_, api, facts)| long_poll(*api, facts) > 0.0)
        .map(|(at, api, facts)| (at.time, at.time + long_poll(*api, facts)))
        .collect()
}

/// Which requests of `cut` (in the order sent) were waiting for an answer
/// that should have come, by [`lost`]; `polls`: the long polls in flight at
/// the close.
pub(crate) fn lost_of(cut: &[Cut<'_>], polls: &[Poll], how: ConnEventKind, when: f64) -> Vec<bool> {
    cut.iter()
        .map(|(at, api, facts)| {
            // Polls sent before it: the broker answers them first.
            let polls_until = (polls.iter())
                .filter(|(sent, _)| *sent < at.time)
                .map(|(_, until)| *until)
                .fold(f64::NEG_INFINITY, f64::max);
            lost(*api, (at.time, polls_until), facts, how, when)
        })
        .collect()
}

/// Whether a request cut by a close was waiting for an answer that should
/// have come: acks=0 Produce requests expect none, and a client that
/// closes soon after its request could be answered (its own long poll's
/// wait over, and that of every poll sent before it, `polls_until`) is
/// stopping, or gave up on it (which only a reconnect after tells).
fn lost(
    api: (i16, i16),
    (sent, polls_until): (f64, f64),
    facts: &Facts,
    how: ConnEventKind,
    when: f64,
) -> bool {
    if !expects_answer(api, facts) {
        return false;
    }
    if how.side() == Side::Broker {
        return true;
    }
    let answerable = (sent + long_poll(api, facts)).max(polls_until);
    when - answerable >= CLIENT_GAVE_UP
}

/// Every request but an acks=0 Produce request expects an answer.
pub(crate) fn expects_answer(api: (i16, i16), facts: &Facts) -> bool {
    !(api.0 == PRODUCE && facts.int("Acks") == Some(0))
}

/// How long the broker may hold a request's answer: a long poll's MaxWaitMs.
pub(crate) fn long_poll(api: (i16, i16), facts: &Facts) -> f64 {
    match api.0 {
        FETCH | SHARE_FETCH => facts.int("MaxWaitMs").unwrap_or(0).max(0) as f64 / 1e3,
        _ => 0.0,
    }
}

/// A client that gave up on requests: how soon after its close it opened a
/// new connection to the broker, and whether they waited behind a long poll
/// whose wait the close came inside of.
#[derive(Clone, Copy)]
pub(crate) struct GaveUp {
    pub reconnected: f64,
    pub behind_poll: bool,
}

/// Whether a request sent at `sent` waited, at a close at `when`, behind a
/// long poll of `polls` sent before it whose wait was not over.
pub(crate) fn behind_poll(polls: &[Poll], sent: f64, when: f64) -> bool {
    polls.iter().any(|&(at, until)| at < sent && until > when)
}

/// A close that cut requests: which connection, whose, how and when.
pub(crate) struct Close<'k> {
    pub conn: usize,
    pub client: &'k ClientKey,
    pub how: ConnEventKind,
    pub when: f64,
}

/// The `closed-unanswered` finding of `lost` (requests in the order sent,
/// none empty), cut by `close`; `gave_up`: when the client gave up on the
/// requests rather than stopped (it opened a new connection soon after).
pub(crate) fn closed(
    ctx: &Ctx<'_>,
    close: &Close<'_>,
    lost: &[(At, (i16, i16))],
    gave_up: Option<GaveUp>,
) -> Option<Found> {
    let &(first, first_api) = lost.first()?;
    let Close {
        conn,
        client,
        how,
        when,
    } = *close;
    let closer = match how {
        ConnEventKind::Reset(side) => format!("the {} reset the connection (RST)", side.as_str()),
        ConnEventKind::Fin(side) => format!("the {} closed the connection (FIN)", side.as_str()),
        ConnEventKind::Open => return None,
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
            .map(|(at, api)| format!("{} in frame {}", ctx.api_text(*api), at.index))
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
    let gave_up = match gave_up {
        Some(g) => format!(
            ", and opened a new connection {} later: it gave up waiting, it did not stop{}",
            duration_text(g.reconnected),
            match (g.behind_poll, lost.len()) {
                (false, _) => "",
                (true, 1) => " (the request waited behind a long poll whose wait was not over: the client's request timeout is shorter than the poll's wait)",
                (true, _) => " (the requests waited behind a long poll whose wait was not over: the client's request timeout is shorter than the poll's wait)",
            }
        ),
        None => String::new(),
    };
    Some(Found {
        rule: Rule::ClosedUnanswered,
        frames: lost.iter().map(|(at, ..)| at.index).collect(),
        time: first.time,
        until: when,
        conn: Some(conn),
        client: Some(client.clone()),
        api: Some(first_api),
        count: lost.len() as u64,
        message: match lost.iter().position(|(at, _)| at.time > when) {
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
                "{what}: {closer} {} after {} sent{gave_up}",
                duration_text((when - first.time).max(0.0)),
                if lost.len() == 1 {
                    "it was"
                } else {
                    "the first was"
                }
            ),
        },
    })
}
