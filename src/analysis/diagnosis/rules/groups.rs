//! Groups, from the answers to their members:
//! - `rebalance-storm`: a group's generation (classic groups, JoinGroup) or
//!   its members' epochs (consumer, share and streams groups) advancing
//!   [`STORM_STEPS`] times or more within [`STORM_WINDOW`] seconds;
//! - `member-fenced`: a member told it is unknown, of a stale generation or
//!   epoch, or fenced by a newer instance. A LeaveGroup answered so is not a
//!   finding: the member was leaving anyway.

use super::super::{Ctx, Ex, Found};
use super::error_text;
use crate::analysis::finding::Rule;
use foldhash::HashMap;

pub const STORM_STEPS: usize = 5;
pub const STORM_WINDOW: f64 = 60.0;

const OFFSET_COMMIT: i16 = 8;
const OFFSET_FETCH: i16 = 9;
const JOIN_GROUP: i16 = 11;
const HEARTBEAT: i16 = 12;
const SYNC_GROUP: i16 = 14;
const TXN_OFFSET_COMMIT: i16 = 28;
const CONSUMER_GROUP_HEARTBEAT: i16 = 68;
const SHARE_GROUP_HEARTBEAT: i16 = 76;
const STREAMS_GROUP_HEARTBEAT: i16 = 88;

/// Errors that tell a member it is out of its group.
const FENCING: &[i16] = &[
    22,  // ILLEGAL_GENERATION
    25,  // UNKNOWN_MEMBER_ID
    82,  // FENCED_INSTANCE_ID
    110, // FENCED_MEMBER_EPOCH
    113, // STALE_MEMBER_EPOCH
];

#[derive(Default)]
struct Group {
    /// Each new generation or epoch: (time, frame).
    steps: Vec<(f64, usize)>,
    last_value: Option<i64>,
    api: (i16, i16),
    conn: usize,
}

#[derive(Default)]
pub struct Groups {
    groups: HashMap<Box<[u8]>, Group>,
}

impl Groups {
    pub fn exchange(&mut self, ctx: &Ctx<'_>, ex: &Ex<'_>, out: &mut Vec<Found>) {
        let (Some(resp), Some(response)) = (ex.resp, ex.response) else {
            return;
        };
        let key = ex.api.0;
        let group_api = matches!(
            key,
            OFFSET_COMMIT
                | OFFSET_FETCH
                | JOIN_GROUP
                | HEARTBEAT
                | SYNC_GROUP
                | TXN_OFFSET_COMMIT
                | CONSUMER_GROUP_HEARTBEAT
                | SHARE_GROUP_HEARTBEAT
                | STREAMS_GROUP_HEARTBEAT
        );
        if !group_api {
            return;
        }
        let group = ex.req.str("GroupId").unwrap_or_default();
        let group_text = String::from_utf8_lossy(group);
        for &e in resp.error_set().iter().filter(|e| FENCING.contains(e)) {
            let member = ex
                .req
                .str("MemberId")
                .map(|m| format!("member {:?}", String::from_utf8_lossy(m)))
                .unwrap_or_else(|| "a member".into());
            out.push(Found::answer(
                Rule::MemberFenced,
                ex,
                response,
                format!(
                    "{member} of group {group_text:?} was answered {} to {}",
                    error_text(e),
                    ctx.api_text(ex.api)
                ),
            ));
        }
        let step = match key {
            JOIN_GROUP if resp.error_set().is_empty() => resp.int("GenerationId"),
            CONSUMER_GROUP_HEARTBEAT | SHARE_GROUP_HEARTBEAT | STREAMS_GROUP_HEARTBEAT
                if resp.error_set().is_empty() =>
            {
                resp.int("MemberEpoch")
            }
            _ => None,
        };
        let Some(value) = step.filter(|v| *v > 0) else {
            return;
        };
        let g = self.groups.entry(group.into()).or_default();
        if g.last_value.is_some_and(|v| v >= value) {
            return;
        }
        g.last_value = Some(value);
        g.api = ex.api;
        g.conn = ex.conn;
        g.steps.push((response.time, response.index));
    }

    pub fn finish(&mut self, ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut groups: Vec<(&Box<[u8]>, &Group)> = self.groups.iter().collect();
        groups.sort_by(|a, b| a.0.cmp(b.0));
        for (name, g) in groups {
            // The densest run of steps within the window.
            let (mut best, mut from) = ((0, 0), 0);
            for to in 0..g.steps.len() {
                while g.steps[to].0 - g.steps[from].0 > STORM_WINDOW {
                    from += 1;
                }
                if to + 1 - from > best.1 - best.0 {
                    best = (from, to + 1);
                }
            }
            let run = &g.steps[best.0..best.1];
            if run.len() < STORM_STEPS {
                continue;
            }
            let (first, last) = (run[0].0, run[run.len() - 1].0);
            let what = if g.api.0 == JOIN_GROUP {
                "generation"
            } else {
                "member epoch"
            };
            out.push(Found {
                rule: Rule::RebalanceStorm,
                frames: run.iter().map(|s| s.1).collect(),
                time: first,
                until: last,
                conn: Some(g.conn),
                client: None,
                api: Some(g.api),
                count: run.len() as u64,
                message: format!(
                    "group {:?}'s {what} advanced {} times in {} ({} answers)",
                    String::from_utf8_lossy(name),
                    run.len(),
                    super::super::duration_text(last - first),
                    ctx.api_name(g.api.0),
                ),
            });
        }
    }
}
