//! `metadata-storm`: one client sending [`STORM_RATE`] or more Metadata
//! requests within a second, over all its connections. One finding per
//! storm: from the first request of the second it began in to the last
//! before the rate fell.

use super::super::{duration_text, ClientKey, Ctx, Found, Req, METADATA};
use super::push_frame;
use crate::analysis::finding::Rule;
use foldhash::HashMap;
use std::collections::VecDeque;

pub const STORM_RATE: usize = 10;

struct Storm {
    frames: Vec<usize>,
    first: f64,
    last: f64,
    count: u64,
    /// The connection every request of the storm was sent on; none when
    /// they were spread over several (a client reconnecting as it asks).
    conn: Option<usize>,
    api: (i16, i16),
}

#[derive(Default)]
struct Client {
    /// The last second's requests: when, their frame and their connection.
    recent: VecDeque<(f64, usize, usize)>,
    storm: Option<Storm>,
}

#[derive(Default)]
pub(crate) struct MetadataStorm {
    clients: HashMap<ClientKey, Client>,
}

impl MetadataStorm {
    pub fn request(&mut self, _ctx: &Ctx<'_>, req: &Req<'_>, out: &mut Vec<Found>) {
        if req.api.0 != METADATA {
            return;
        }
        let c = self.clients.entry(req.client.clone()).or_default();
        let now = req.at.time;
        while c.recent.front().is_some_and(|(t, _, _)| now - t > 1.0) {
            c.recent.pop_front();
        }
        c.recent.push_back((now, req.at.index, req.conn));
        match &mut c.storm {
            Some(s) => {
                push_frame(&mut s.frames, req.at.index);
                s.last = now;
                s.count += 1;
                s.conn = s.conn.filter(|c| *c == req.conn);
            }
            None if c.recent.len() >= STORM_RATE => {
                c.storm = Some(Storm {
                    frames: c.recent.iter().map(|r| r.1).collect(),
                    first: c.recent[0].0,
                    last: now,
                    count: c.recent.len() as u64,
                    conn: Some(req.conn).filter(|on| c.recent.iter().all(|r| r.2 == *on)),
                    api: req.api,
                });
            }
            None => {}
        }
        if c.recent.len() < STORM_RATE / 2 {
            if let Some(s) = c.storm.take() {
                report(req.client, s, out);
            }
        }
    }

    pub fn finish(&mut self, _ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut left: Vec<(ClientKey, Storm)> = self
            .clients
            .drain()
            .filter_map(|(k, c)| c.storm.map(|s| (k, s)))
            .collect();
        left.sort_by(|a, b| a.1.first.total_cmp(&b.1.first));
        for (k, s) in left {
            report(&k, s, out);
        }
    }
}

fn report(client: &ClientKey, s: Storm, out: &mut Vec<Found>) {
    let span = (s.last - s.first).max(0.0);
    let rate = if span > 0.0 {
        s.count as f64 / span
    } else {
        s.count as f64
    };
    out.push(Found {
        rule: Rule::MetadataStorm,
        frames: s.frames,
        time: s.first,
        until: s.last,
        conn: s.conn,
        client: Some(client.clone()),
        api: Some(s.api),
        count: s.count,
        message: format!(
            "{} sent {} Metadata requests in {} ({rate:.0} a second)",
            client.describe(),
            s.count,
            duration_text(span)
        ),
    });
}
