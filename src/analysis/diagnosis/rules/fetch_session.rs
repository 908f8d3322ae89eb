//! Fetch sessions (KIP-227, Fetch v7 and later), per connection:
//! - `fetch-session-unused`: a client asking again and again for a new
//!   session (SessionId 0, SessionEpoch 0) and answered SessionId 0 each
//!   time: every Fetch then lists every partition;
//! - `fetch-session-epoch`: a request on an established session whose epoch
//!   is not the one after the last, or an answer saying the broker no
//!   longer knows the session or its epoch.

use super::super::{ClientKey, Ctx, Ex, Found, Req, FETCH};
use super::{error_text, push_frame};
use crate::analysis::finding::Rule;
use foldhash::HashMap;

/// Asks refused before the sessions count as unused.
pub(crate) const MIN_REFUSED: u64 = 3;

const FETCH_SESSION_ID_NOT_FOUND: i16 = 70;
const INVALID_FETCH_SESSION_EPOCH: i16 = 71;

#[derive(Default)]
struct Conn {
    /// The session the broker gave, and the epoch the next request should carry.
    session: Option<(i64, i64)>,
    refused: u64,
    given: bool,
    frames: Vec<usize>,
    first: f64,
    last: f64,
    client: Option<ClientKey>,
    api: (i16, i16),
}

#[derive(Default)]
pub(crate) struct FetchSessions {
    conns: HashMap<usize, Conn>,
}

impl FetchSessions {
    pub fn request(&mut self, ctx: &Ctx<'_>, req: &Req<'_>, out: &mut Vec<Found>) {
        if req.api.0 != FETCH || req.api.1 < 7 {
            return;
        }
        let (Some(id), Some(epoch)) = (req.facts.int("SessionId"), req.facts.int("SessionEpoch"))
        else {
            return;
        };
        let c = self.conns.entry(req.conn).or_default();
        let Some((session, expected)) = c.session else {
            return;
        };
        if id != session || epoch <= 0 {
            // A new session asked for, or this one closed (epoch -1).
            c.session = None;
            return;
        }
        if epoch != expected {
            out.push(Found::request(Rule::FetchSessionEpoch, req, format!(
                    "{} sent fetch session {session} with epoch {epoch} where epoch {expected} comes next",
                    ctx.api_text(req.api)
                )));
        }
        c.session = Some((session, next_epoch(epoch)));
    }

    pub fn exchange(&mut self, ctx: &Ctx<'_>, ex: &Ex<'_>, out: &mut Vec<Found>) {
        if ex.api.0 != FETCH || ex.api.1 < 7 {
            return;
        }
        let (Some(resp), Some(response)) = (ex.resp, ex.response) else {
            return;
        };
        let asked = (ex.req.int("SessionId"), ex.req.int("SessionEpoch"));
        let c = self.conns.entry(ex.conn).or_default();
        let top = resp.int("ErrorCode").unwrap_or(0) as i16;
        if top == FETCH_SESSION_ID_NOT_FOUND || top == INVALID_FETCH_SESSION_EPOCH {
            c.session = None;
            out.push(Found::answer(
                Rule::FetchSessionEpoch,
                ex,
                response,
                format!(
                    "{} for session {} epoch {} answered {}",
                    ctx.api_text(ex.api),
                    asked.0.unwrap_or(0),
                    asked.1.unwrap_or(0),
                    error_text(top)
                ),
            ));
            return;
        }
        if top != 0 {
            return;
        }
        let given = resp.int("SessionId").unwrap_or(0);
        if asked == (Some(0), Some(0)) {
            if given != 0 {
                c.given = true;
                c.session = Some((given, 1));
                return;
            }
            c.refused += 1;
            if c.frames.is_empty() {
                c.first = ex.request.time;
                c.client = Some(ex.client.clone());
                c.api = ex.api;
            }
            push_frame(&mut c.frames, response.index);
            c.last = response.time;
        }
    }

    pub fn finish(&mut self, ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut conns: Vec<(usize, Conn)> = self.conns.drain().collect();
        conns.sort_by_key(|(k, _)| *k);
        for (conn, c) in conns {
            if c.given || c.refused < MIN_REFUSED {
                continue;
            }
            let client = c
                .client
                .as_ref()
                .map_or_else(String::new, |k| format!(" from {}", k.describe()));
            out.push(Found {
                rule: Rule::FetchSessionUnused,
                frames: c.frames,
                time: c.first,
                until: c.last,
                conn: Some(conn),
                client: c.client.clone(),
                api: Some(c.api),
                count: c.refused,
                message: format!(
                    "{} {} requests asked for a new fetch session{client} and the broker gave none (SessionId 0 each time)",
                    c.refused,
                    ctx.api_name(FETCH),
                ),
            });
        }
    }
}

/// The epoch after `e`: epochs wrap from i32::MAX to 1 (0 starts a session).
fn next_epoch(e: i64) -> i64 {
    if e >= i64::from(i32::MAX) {
        1
    } else {
        e + 1
    }
}
