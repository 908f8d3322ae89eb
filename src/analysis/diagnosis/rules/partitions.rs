//! `lso-stuck`: a partition whose last stable offset, as Fetch answers give
//! it, stays at one value behind the high watermark for [`STUCK_FOR`]
//! seconds or more: an open transaction holds it, and read_committed
//! consumers stop there.

use super::super::facts::TopicKey;
use super::super::{duration_text, Ctx, Ex, Found, FETCH};
use super::push_frame;
use crate::analysis::finding::Rule;
use foldhash::HashMap;

pub const STUCK_FOR: f64 = 60.0;

struct Held {
    lso: i64,
    high_watermark: i64,
    since: f64,
    last: f64,
    frames: Vec<usize>,
    count: u64,
    conn: usize,
    api: (i16, i16),
}

#[derive(Default)]
pub struct Partitions {
    held: HashMap<(Option<TopicKey>, i32), Held>,
}

impl Partitions {
    pub fn exchange(&mut self, ctx: &Ctx<'_>, ex: &Ex<'_>, out: &mut Vec<Found>) {
        let (FETCH, Some(resp), Some(response)) = (ex.api.0, ex.resp, ex.response) else {
            return;
        };
        for p in &resp.partitions {
            let (Some(lso), Some(hw)) = (p.last_stable_offset, p.high_watermark) else {
                continue;
            };
            if p.error != 0 || lso < 0 || hw < 0 {
                continue;
            }
            let key = (ctx.topic_key(p.topic.as_ref()), p.partition);
            match self.held.get_mut(&key) {
                Some(h) if h.lso == lso && lso < hw => {
                    h.last = response.time;
                    h.high_watermark = h.high_watermark.max(hw);
                    h.count += 1;
                    push_frame(&mut h.frames, response.index);
                }
                _ => {
                    if let Some(h) = self.held.remove(&key) {
                        report(ctx, &key, h, out);
                    }
                    if lso < hw {
                        self.held.insert(
                            key,
                            Held {
                                lso,
                                high_watermark: hw,
                                since: response.time,
                                last: response.time,
                                frames: vec![response.index],
                                count: 1,
                                conn: ex.conn,
                                api: ex.api,
                            },
                        );
                    }
                }
            }
        }
    }

    pub fn finish(&mut self, ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut left: Vec<((Option<TopicKey>, i32), Held)> = self.held.drain().collect();
        left.sort_by(|a, b| a.1.since.total_cmp(&b.1.since));
        for (key, h) in left {
            report(ctx, &key, h, out);
        }
    }
}

fn report(ctx: &Ctx<'_>, key: &(Option<TopicKey>, i32), h: Held, out: &mut Vec<Found>) {
    if h.last - h.since < STUCK_FOR {
        return;
    }
    out.push(Found {
        rule: Rule::LsoStuck,
        frames: h.frames,
        time: h.since,
        until: h.last,
        conn: Some(h.conn),
        client: None,
        api: Some(h.api),
        count: h.count,
        message: format!(
            "{}-{}: last stable offset held at {} for {} while the high watermark reached {} ({} Fetch answers)",
            ctx.topic_text(key.0.as_ref()),
            key.1,
            h.lso,
            duration_text(h.last - h.since),
            h.high_watermark,
            h.count
        ),
    });
}
