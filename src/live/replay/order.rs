//! The capture's order across connections. Each connection is replayed in
//! its own order, but connections run at once: without more, a consumer's
//! Fetch could reach the new broker before the Produce it read in the
//! capture, or a producer's first Produce before another connection's
//! CreateTopics, and the answers would differ for no fault of the broker.
//! So a request waits until every exchange the capture shows answered
//! before the request was sent is done (answered, failed or skipped): the
//! capture's happened-before, kept however fast the replay goes.

use super::Conversation;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

pub(super) struct Order {
    /// Every exchange's captured end, in time order: (time, conversation, request).
    ends: Vec<(f64, usize, usize)>,
    /// Each exchange's place in `ends`, by conversation then request.
    place: Vec<Vec<usize>>,
    state: Mutex<Done>,
    changed: Condvar,
}

struct Done {
    /// By place in `ends`.
    done: Vec<bool>,
    /// Every exchange before this place is done.
    watermark: usize,
}

impl Order {
    pub(super) fn new(conversations: &[Conversation]) -> Order {
        let mut ends = Vec::new();
        for (c, conv) in conversations.iter().enumerate() {
            // An exchange ends with its captured answer; one without (acks=0,
            // or the capture ended first) when it was sent. Answers on one
            // connection come in order, so the ends are made to rise.
            let mut last = f64::NEG_INFINITY;
            for (i, r) in conv.requests.iter().enumerate() {
                let end = r.answer.as_ref().map_or(r.sent.time, |a| a.time);
                // Never before its own request (clocks of merged captures can
                // disagree): a request must not wait for its own exchange.
                last = last.max(end).max(r.sent.time);
                ends.push((last, c, i));
            }
        }
        ends.sort_by(|a, b| a.0.total_cmp(&b.0).then((a.1, a.2).cmp(&(b.1, b.2))));
        let mut place: Vec<Vec<usize>> = conversations
            .iter()
            .map(|c| vec![0; c.requests.len()])
            .collect();
        for (p, &(_, c, i)) in ends.iter().enumerate() {
            place[c][i] = p;
        }
        let n = ends.len();
        Order {
            ends,
            place,
            state: Mutex::new(Done {
                done: vec![false; n],
                watermark: 0,
            }),
            changed: Condvar::new(),
        }
    }

    /// Wait until every exchange that ended before `time` in the capture is
    /// done, at most `limit`; false when the limit came first (a connection
    /// that has not started can hold it up when every worker is waiting).
    pub(super) fn wait_before(&self, time: f64, limit: Duration) -> bool {
        let needed = self.ends.partition_point(|e| e.0 < time);
        // A limit past what an Instant holds (`--timeout 1e19`) is a year.
        let deadline = Instant::now()
            .checked_add(limit)
            .unwrap_or_else(|| Instant::now() + Duration::from_secs(365 * 86_400));
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while state.watermark < needed {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        true
    }

    /// A conversation's request is done.
    pub(super) fn done(&self, conversation: usize, request: usize) {
        let Some(&p) = self.place.get(conversation).and_then(|c| c.get(request)) else {
            return;
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.done[p] = true;
        let before = state.watermark;
        while state.watermark < state.done.len() && state.done[state.watermark] {
            state.watermark += 1;
        }
        if state.watermark != before {
            self.changed.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Captured, Request};
    use super::*;
    use bytes::Bytes;
    use std::sync::Arc;

    fn conv(conn: usize, times: &[(f64, Option<f64>)]) -> Conversation {
        let at = |t: f64| Captured {
            frame: 0,
            time: t,
            bytes: Bytes::new(),
        };
        Conversation {
            conn,
            requests: times
                .iter()
                .map(|&(sent, answer)| Request {
                    sent: at(sent),
                    api_key: 0,
                    version: 9,
                    answer: answer.map(at),
                    sasl_token: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_request_waits_for_what_the_capture_answered_before_it_was_sent() {
        // A producer answered at 1.0 and 2.0; a consumer whose Fetch went at 2.5.
        let convs = [
            conv(1, &[(0.5, Some(1.0)), (1.5, Some(2.0))]),
            conv(2, &[(2.5, Some(3.0))]),
        ];
        let order = Arc::new(Order::new(&convs));
        // Nothing has to be done before the producer's first request.
        assert!(order.wait_before(0.5, Duration::ZERO));
        // The consumer's Fetch waits for both Produce exchanges.
        assert!(!order.wait_before(2.5, Duration::from_millis(10)));
        order.done(0, 0);
        assert!(!order.wait_before(2.5, Duration::from_millis(10)));
        let o = Arc::clone(&order);
        let waiter = std::thread::spawn(move || o.wait_before(2.5, Duration::from_secs(10)));
        order.done(0, 1);
        assert!(waiter.join().unwrap());
        // Done out of order: the watermark waits for the earlier one.
        let order = Order::new(&convs);
        order.done(1, 0);
        assert!(!order.wait_before(2.5, Duration::ZERO));
        order.done(0, 1);
        order.done(0, 0);
        assert!(order.wait_before(10.0, Duration::ZERO));
    }
}
