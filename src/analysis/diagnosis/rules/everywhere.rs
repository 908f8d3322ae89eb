//! `error-from-every-client`: one broker answering the same error to
//! [`MIN_CLIENTS`] or more clients. Errors that usually pass by themselves
//! and answers that are a normal step of a flow (MEMBER_ID_REQUIRED to a
//! JoinGroup v4+, TOPIC_ALREADY_EXISTS to a CreateTopics) are left out.

use super::super::{duration_text, ClientKey, Ctx, Ex, Found};
use super::{error_text, push_frame};
use crate::analysis::finding::Rule;
use crate::protocol::error_rules::is_transient;
use foldhash::HashMap;
use std::collections::BTreeSet;
use std::net::SocketAddr;

pub const MIN_CLIENTS: usize = 3;

/// (api key, error) answers that are a step of a normal flow.
const NORMAL_STEPS: &[(i16, i16)] = &[
    (11, 79), // JoinGroup: MEMBER_ID_REQUIRED, then join with the id (KIP-394)
    (19, 36), // CreateTopics: TOPIC_ALREADY_EXISTS
    (13, 25), // LeaveGroup: UNKNOWN_MEMBER_ID, the member was gone already
];

struct Seen {
    clients: BTreeSet<ClientKey>,
    apis: BTreeSet<i16>,
    frames: Vec<usize>,
    first: f64,
    last: f64,
    count: u64,
}

#[derive(Default)]
pub(crate) struct Everywhere {
    seen: HashMap<(SocketAddr, i16), Seen>,
}

impl Everywhere {
    pub fn exchange(&mut self, ex: &Ex<'_>) {
        let (Some(resp), Some(response)) = (ex.resp, ex.response) else {
            return;
        };
        for &e in resp.error_set() {
            if is_transient(e) || NORMAL_STEPS.contains(&(ex.api.0, e)) {
                continue;
            }
            let s = self.seen.entry((ex.broker, e)).or_insert_with(|| Seen {
                clients: BTreeSet::new(),
                apis: BTreeSet::new(),
                frames: Vec::new(),
                first: response.time,
                last: response.time,
                count: 0,
            });
            // Kept small: only the first clients' keys are needed to count to the threshold.
            if s.clients.len() < 64 {
                s.clients.insert(ex.client.clone());
            }
            s.apis.insert(ex.api.0);
            push_frame(&mut s.frames, response.index);
            s.last = response.time;
            s.count += 1;
        }
    }

    pub fn finish(&mut self, ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut all: Vec<((SocketAddr, i16), Seen)> = self
            .seen
            .drain()
            .filter(|(_, s)| s.clients.len() >= MIN_CLIENTS)
            .collect();
        all.sort_by(|a, b| a.1.first.total_cmp(&b.1.first));
        for ((broker, e), s) in all {
            let apis: Vec<String> = s.apis.iter().map(|&k| ctx.api_name(k)).collect();
            let clients = if s.clients.len() >= 64 {
                "64 or more".to_string()
            } else {
                s.clients.len().to_string()
            };
            out.push(Found {
                rule: Rule::ErrorFromEveryClient,
                frames: s.frames,
                time: s.first,
                until: s.last,
                conn: None,
                client: None,
                api: None,
                count: s.count,
                message: format!(
                    "{broker} answered {} to {clients} clients, {} times in {} ({})",
                    error_text(e),
                    s.count,
                    duration_text(s.last - s.first),
                    apis.join(", ")
                ),
            });
        }
    }
}
