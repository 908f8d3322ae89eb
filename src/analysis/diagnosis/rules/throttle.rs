//! `throttle-ignored`: a client sending on a connection before the
//! `ThrottleTimeMs` it was just given has passed, at versions where the
//! broker answers at once and leaves the waiting to the client (KIP-219,
//! `protocol::error_rules::client_waits_out_throttle`). One finding per
//! connection, counting the requests sent early.

use super::super::{duration_text, ClientKey, Ctx, Ex, Found, Req};
use super::push_frame;
use crate::analysis::finding::Rule;
use crate::protocol::error_rules::client_waits_out_throttle;
use foldhash::HashMap;

/// Slack for clocks and the capture's timestamps.
const SLACK: f64 = 0.005;

#[derive(Default)]
struct Conn {
    /// Muted until this time, by the response at this frame.
    muted: Option<(f64, usize, i64)>,
    early: u64,
    windows: u64,
    longest_ms: i64,
    frames: Vec<usize>,
    first: f64,
    last: f64,
    client: Option<ClientKey>,
    api: Option<(i16, i16)>,
}

#[derive(Default)]
pub(crate) struct Throttle {
    conns: HashMap<usize, Conn>,
}

impl Throttle {
    pub fn exchange(&mut self, ex: &Ex<'_>) {
        let (Some(resp), Some(response)) = (ex.resp, ex.response) else {
            return;
        };
        let Some(ms) = resp.int("ThrottleTimeMs").filter(|ms| *ms > 0) else {
            return;
        };
        if !client_waits_out_throttle(ex.api.0, ex.api.1) {
            return;
        }
        let c = self.conns.entry(ex.conn).or_default();
        let until = response.time + ms as f64 / 1e3;
        if c.muted.is_none_or(|m| m.0 < until) {
            c.muted = Some((until, response.index, ms));
        }
        if c.client.is_none() {
            c.client = Some(ex.client.clone());
            c.api = Some(ex.api);
        }
    }

    pub fn request(&mut self, _ctx: &Ctx<'_>, req: &Req<'_>, _out: &mut Vec<Found>) {
        let Some(c) = self.conns.get_mut(&req.conn) else {
            return;
        };
        let Some((until, frame, ms)) = c.muted else {
            return;
        };
        if req.at.time >= until - SLACK {
            c.muted = None;
            return;
        }
        if c.frames.last() != Some(&frame) {
            if c.frames.is_empty() {
                c.first = req.at.time;
            }
            c.windows += 1;
            push_frame(&mut c.frames, frame);
        }
        c.longest_ms = c.longest_ms.max(ms);
        push_frame(&mut c.frames, req.at.index);
        c.early += 1;
        c.last = req.at.time;
    }

    pub fn finish(&mut self, ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut conns: Vec<(usize, Conn)> =
            self.conns.drain().filter(|(_, c)| c.early > 0).collect();
        conns.sort_by_key(|(k, _)| *k);
        for (conn, c) in conns {
            let client = c
                .client
                .as_ref()
                .map_or_else(|| "the client".into(), |k| k.describe());
            out.push(Found {
                rule: Rule::ThrottleIgnored,
                frames: c.frames,
                time: c.first,
                until: c.last,
                conn: Some(conn),
                client: c.client.clone(),
                api: c.api,
                count: c.early,
                message: format!(
                    "{client} sent {} {} while throttled, in {} throttle {} of up to {} ({} answers)",
                    c.early,
                    if c.early == 1 { "request" } else { "requests" },
                    c.windows,
                    if c.windows == 1 { "window" } else { "windows" },
                    duration_text(c.longest_ms as f64 / 1e3),
                    c.api.map_or_else(String::new, |a| ctx.api_name(a.0)),
                ),
            });
        }
    }
}
