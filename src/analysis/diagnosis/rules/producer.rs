//! Producer sequences and epochs, per producer id and partition, from the
//! record batches' headers (`decode::records::peek`):
//! - `producer-sequence-gap`: a batch whose base sequence is ahead of the
//!   sequence after the producer's previous batch to that partition at the
//!   same epoch (a resend, behind it, is a normal retry);
//! - `producer-epoch-regression`: a producer id sending with an epoch lower
//!   than one it used before;
//! - `producer-duplicate`: the broker acknowledging the same batch (producer
//!   id, epoch, partition, base sequence) twice at different offsets: the
//!   data is in the log twice.

use super::super::facts::{PartitionFacts, TopicKey};
use super::super::{Ctx, Ex, Found, Req, PRODUCE};
use super::push_frame;
use crate::analysis::finding::Rule;
use foldhash::HashMap;
use std::collections::VecDeque;

/// Acknowledged batches kept per producer partition (the broker's own
/// deduplication window is five batches).
const ACKED_KEPT: usize = 8;

type PartitionKey = (i64, Option<TopicKey>, i32);

struct Sequence {
    epoch: i16,
    /// The sequence after the last batch sent.
    next: i64,
    /// The frame that sent it.
    frame: usize,
}

struct Acked {
    epoch: i16,
    base_sequence: i32,
    base_offset: i64,
    frame: usize,
}

struct Regression {
    frames: Vec<usize>,
    first: f64,
    last: f64,
    count: u64,
    high: i16,
    low: i16,
    conn: usize,
    client: super::super::ClientKey,
}

#[derive(Default)]
pub(crate) struct Producers {
    sequences: HashMap<PartitionKey, Sequence>,
    highest_epoch: HashMap<i64, (i16, usize)>,
    acked: HashMap<PartitionKey, VecDeque<Acked>>,
    regressions: HashMap<i64, Regression>,
}

impl Producers {
    pub fn request(&mut self, ctx: &Ctx<'_>, req: &Req<'_>, out: &mut Vec<Found>) {
        if req.api.0 != PRODUCE {
            return;
        }
        for p in &req.facts.partitions {
            let topic = ctx.topic_key(p.topic.as_ref());
            for b in p
                .batches
                .iter()
                .filter(|b| b.has_producer() && b.base_sequence >= 0)
            {
                let pid = b.producer_id;
                let high = self
                    .highest_epoch
                    .entry(pid)
                    .or_insert((b.producer_epoch, req.at.index));
                if b.producer_epoch < high.0 {
                    let r = self.regressions.entry(pid).or_insert_with(|| Regression {
                        frames: vec![high.1],
                        first: req.at.time,
                        last: req.at.time,
                        count: 0,
                        high: high.0,
                        low: b.producer_epoch,
                        conn: req.conn,
                        client: req.client.clone(),
                    });
                    push_frame(&mut r.frames, req.at.index);
                    r.last = req.at.time;
                    r.count += 1;
                    r.low = r.low.min(b.producer_epoch);
                    continue;
                }
                *high = (b.producer_epoch, req.at.index);
                let key = (pid, topic.clone(), p.partition);
                let next = i64::from(b.base_sequence) + i64::from(b.records_count.max(0));
                match self.sequences.get_mut(&key) {
                    Some(s) if s.epoch == b.producer_epoch => {
                        let base = i64::from(b.base_sequence);
                        // Sequences wrap at i32::MAX back to 0.
                        if base > s.next && s.next < i64::from(i32::MAX) {
                            out.push(Found {
                                rule: Rule::ProducerSequenceGap,
                                frames: vec![s.frame, req.at.index],
                                time: req.at.time,
                                until: req.at.time,
                                conn: Some(req.conn),
                                client: Some(req.client.clone()),
                                api: Some(req.api),
                                count: 1,
                                message: format!(
                                    "producer id {pid} epoch {} sent {}-{} sequence {base} after sequence {} (frame #{}): {} records' sequences skipped",
                                    b.producer_epoch,
                                    ctx.topic_text(p.topic.as_ref()),
                                    p.partition,
                                    s.next - 1,
                                    s.frame,
                                    base - s.next,
                                ),
                            });
                        }
                        if next > s.next {
                            s.next = next;
                            s.frame = req.at.index;
                        }
                    }
                    _ => {
                        self.sequences.insert(
                            key,
                            Sequence {
                                epoch: b.producer_epoch,
                                next,
                                frame: req.at.index,
                            },
                        );
                    }
                }
            }
        }
    }

    pub fn exchange(&mut self, ctx: &Ctx<'_>, ex: &Ex<'_>, out: &mut Vec<Found>) {
        let (PRODUCE, Some(resp), Some(response)) = (ex.api.0, ex.resp, ex.response) else {
            return;
        };
        for answered in &resp.partitions {
            let Some(base_offset) = answered.base_offset.filter(|o| *o >= 0) else {
                continue;
            };
            if answered.error != 0 {
                continue;
            }
            let topic = ctx.topic_key(answered.topic.as_ref());
            let Some(sent) = sent_partition(ctx, ex, &topic, answered.partition) else {
                continue;
            };
            let Some(b) = sent
                .batches
                .iter()
                .find(|b| b.has_producer() && b.base_sequence >= 0)
            else {
                continue;
            };
            let key = (b.producer_id, topic, answered.partition);
            let acked = self.acked.entry(key).or_default();
            if let Some(first) = acked
                .iter()
                .find(|a| a.epoch == b.producer_epoch && a.base_sequence == b.base_sequence)
            {
                if first.base_offset != base_offset {
                    let mut found = Found::answer(
                        Rule::ProducerDuplicate,
                        ex,
                        response,
                        format!(
                            "{}-{}: the batch of producer id {} epoch {} sequence {} was appended at offset {} (frame #{}) and again at offset {base_offset}",
                            ctx.topic_text(answered.topic.as_ref()),
                            answered.partition,
                            b.producer_id,
                            b.producer_epoch,
                            b.base_sequence,
                            first.base_offset,
                            first.frame,
                        ),
                    );
                    found.frames.insert(0, first.frame);
                    out.push(found);
                }
                continue;
            }
            if acked.len() == ACKED_KEPT {
                acked.pop_front();
            }
            acked.push_back(Acked {
                epoch: b.producer_epoch,
                base_sequence: b.base_sequence,
                base_offset,
                frame: response.index,
            });
        }
    }

    pub fn finish(&mut self, _ctx: &Ctx<'_>, out: &mut Vec<Found>) {
        let mut left: Vec<(i64, Regression)> = self.regressions.drain().collect();
        left.sort_by(|a, b| a.1.first.total_cmp(&b.1.first));
        for (pid, r) in left {
            out.push(Found {
                rule: Rule::ProducerEpochRegression,
                frames: r.frames,
                time: r.first,
                until: r.last,
                conn: Some(r.conn),
                client: Some(r.client),
                api: None,
                count: r.count,
                message: format!(
                    "producer id {pid} sent {} batches with epoch {} after it had used epoch {}",
                    r.count, r.low, r.high
                ),
            });
        }
    }
}

/// The request's partition that an answered partition answers.
fn sent_partition<'a>(
    ctx: &Ctx<'_>,
    ex: &'a Ex<'_>,
    topic: &Option<TopicKey>,
    partition: i32,
) -> Option<&'a PartitionFacts> {
    ex.req
        .partitions
        .iter()
        .find(|p| p.partition == partition && ctx.topic_key(p.topic.as_ref()) == *topic)
}
