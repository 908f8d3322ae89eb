//! `closed-unanswered`: a connection that closed (a FIN from either side,
//! or an RST) while requests on it awaited their responses. A long poll
//! (Fetch, ShareFetch) that the client closes within its own MaxWaitMs is
//! a consumer stopping, not a lost answer: it stays an `unanswered` note.
//! A capture that simply ends is not a close either.

use super::super::{duration_text, At, ClientKey, Ctx, Found, FETCH, PRODUCE};
use crate::analysis::check::Rule;
use crate::analysis::diagnosis::facts::Facts;
use crate::capture::{ConnEventKind, Side};

const SHARE_FETCH: i16 = 78;

/// Whether a request cut by a close was waiting for an answer that should
/// have come: acks=0 Produce requests expect none, and a long poll the
/// client leaves within its wait is a consumer stopping.
pub fn lost(api: (i16, i16), sent: f64, facts: &Facts, how: ConnEventKind, when: f64) -> bool {
    if api.0 == PRODUCE && facts.int("Acks") == Some(0) {
        return false;
    }
    if (api.0 == FETCH || api.0 == SHARE_FETCH) && how.side() == Side::Client {
        let wait = facts.int("MaxWaitMs").unwrap_or(0).max(0) as f64 / 1e3;
        return when - sent > wait + 1.0;
    }
    true
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
            "{} request #{} was never answered",
            ctx.api_text(first_api),
            first.index
        )
    } else {
        let names: Vec<String> = lost
            .iter()
            .take(4)
            .map(|(at, api, _)| format!("{} #{}", ctx.api_text(*api), at.index))
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
            "{what}: {closer} {} after the first was sent",
            duration_text((when - first.time).max(0.0))
        ),
    });
}
