//! `transaction-open`: a transactional producer that began a transaction
//! (AddPartitionsToTxn, AddOffsetsToTxn, or a transactional batch in a
//! Produce request) and did not end it with EndTxn, though the capture goes
//! on for [`OPEN_FOR`] seconds after it began (the default
//! `transaction.timeout.ms`).

use super::super::{duration_text, ClientKey, Ex, Found, Req, PRODUCE};
use crate::analysis::finding::Rule;
use foldhash::HashMap;

pub const OPEN_FOR: f64 = 60.0;

const ADD_PARTITIONS_TO_TXN: i16 = 24;
const ADD_OFFSETS_TO_TXN: i16 = 25;
const END_TXN: i16 = 26;

struct Open {
    began: f64,
    frame: usize,
    producer_id: Option<i64>,
    conn: usize,
    client: ClientKey,
    api: (i16, i16),
}

#[derive(Default)]
pub(crate) struct Transactions {
    open: HashMap<Box<[u8]>, Open>,
}

impl Transactions {
    pub fn request(&mut self, req: &Req<'_>) {
        let Some(tid) = req.facts.str("TransactionalId") else {
            return;
        };
        let begins = match req.api.0 {
            ADD_PARTITIONS_TO_TXN | ADD_OFFSETS_TO_TXN => true,
            PRODUCE => req
                .facts
                .partitions
                .iter()
                .flat_map(|p| &p.batches)
                .any(|b| b.is_transactional() && !b.is_control()),
            _ => false,
        };
        if begins && !self.open.contains_key(tid) {
            self.open.insert(
                tid.into(),
                Open {
                    began: req.at.time,
                    frame: req.at.index,
                    producer_id: req.facts.int("ProducerId"),
                    conn: req.conn,
                    client: req.client.clone(),
                    api: req.api,
                },
            );
        }
    }

    pub fn exchange(&mut self, ex: &Ex<'_>) {
        if ex.api.0 != END_TXN {
            return;
        }
        // Ended when the coordinator took the EndTxn (an error leaves it open).
        if let (Some(tid), Some(resp)) = (ex.req.str("TransactionalId"), ex.resp) {
            if resp.error_set().is_empty() {
                self.open.remove(tid);
            }
        }
    }

    pub fn finish(&mut self, end: f64, out: &mut Vec<Found>) {
        let mut open: Vec<(Box<[u8]>, Open)> = self.open.drain().collect();
        open.sort_by(|a, b| a.1.began.total_cmp(&b.1.began));
        for (tid, o) in open {
            if end - o.began < OPEN_FOR {
                continue;
            }
            let pid = o
                .producer_id
                .map_or_else(String::new, |p| format!(" (producer id {p})"));
            out.push(Found {
                rule: Rule::TransactionOpen,
                frames: vec![o.frame],
                time: o.began,
                until: end,
                conn: Some(o.conn),
                client: Some(o.client),
                api: Some(o.api),
                count: 1,
                message: format!(
                    "transactional id {:?}{pid} began a transaction at frame #{} and sent no EndTxn in the {} the capture went on",
                    String::from_utf8_lossy(&tid),
                    o.frame,
                    duration_text(end - o.began)
                ),
            });
        }
    }
}
