//! Work on a capture's frames spread over worker threads, with the results
//! handed on in the order the frames came: decoding and drawing a frame's
//! tree depends only on the frame and what the capture said before it
//! (pairing, topic names), which the calling thread works out in order.
//!
//! Jobs go in batches (one message and wake-up per frame cost more than a
//! small frame's decoding). Bounded: at most [`InOrder::MAX_IN_FLIGHT`]
//! batches per worker wait or run; a submit past that waits for the oldest. With no workers the jobs run on
//! the calling thread as they are submitted, for streams, where a result
//! must not wait for the next frame to arrive.

use std::collections::VecDeque;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;

/// Jobs handed to workers in batches and their results handed back, one by
/// one, in submission order.
pub struct InOrder<'w, J, R> {
    /// `None` without workers (and after [`InOrder::close`]).
    jobs: Option<Sender<(u64, Vec<J>)>>,
    results: Option<Receiver<(u64, Vec<R>)>>,
    work: &'w (dyn Fn(J) -> R + Sync),
    /// Jobs not yet sent, and their weight (a frame's bytes).
    pending: Vec<J>,
    pending_weight: usize,
    /// The sequence number of the next batch sent, and of the next one handed on.
    sent: u64,
    delivered: u64,
    /// Batches that came back before an earlier one, by `sequence - delivered`.
    waiting: VecDeque<Option<Vec<R>>>,
    limit: usize,
}

impl<J: Send, R: Send> InOrder<'_, J, R> {
    /// Batches a worker may have waiting or running: enough to keep it busy
    /// while the calling thread writes, few enough that results stay small.
    pub const MAX_IN_FLIGHT: usize = 3;
    /// A batch goes to the workers when it holds this many jobs or this much
    /// weight: one message and one wake-up per frame cost more than a small
    /// frame's decoding.
    pub(crate) const BATCH_JOBS: usize = 64;
    pub(crate) const BATCH_WEIGHT: usize = 256 << 10;

    /// Run `body` with `workers` threads doing `work` (none: on the calling thread).
    pub fn run<T>(
        workers: usize,
        work: &(dyn Fn(J) -> R + Sync),
        body: impl FnOnce(&mut InOrder<'_, J, R>) -> T,
    ) -> T {
        let new = |jobs, results, limit| InOrder {
            jobs,
            results,
            work,
            pending: Vec::new(),
            pending_weight: 0,
            sent: 0,
            delivered: 0,
            waiting: VecDeque::new(),
            limit,
        };
        if workers == 0 {
            return body(&mut new(None, None, 1));
        }
        let (job_tx, job_rx) = channel::<(u64, Vec<J>)>();
        let (result_tx, result_rx) = channel::<(u64, Vec<R>)>();
        let job_rx = Mutex::new(job_rx);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let (job_rx, result_tx) = (&job_rx, result_tx.clone());
                scope.spawn(move || loop {
                    // The lock is held only to take a batch, not to work on it.
                    let next = job_rx.lock().map_or(None, |rx| rx.recv().ok());
                    let Some((seq, jobs)) = next else { return };
                    if result_tx
                        .send((seq, jobs.into_iter().map(work).collect()))
                        .is_err()
                    {
                        return;
                    }
                });
            }
            drop(result_tx);
            let mut q = new(Some(job_tx), Some(result_rx), workers * Self::MAX_IN_FLIGHT);
            let out = body(&mut q);
            // Workers finish the batch in hand and stop; results not handed on are dropped.
            q.close();
            out
        })
    }

    /// Submit `job` (of `weight`); hand on, in order, every result ready.
    /// `deliver` returns false to stop (the output failed): then so does this.
    pub fn submit(&mut self, job: J, weight: usize, deliver: &mut impl FnMut(R) -> bool) -> bool {
        if self.jobs.is_none() {
            return deliver((self.work)(job));
        }
        self.pending.push(job);
        self.pending_weight += weight;
        if self.pending.len() < Self::BATCH_JOBS && self.pending_weight < Self::BATCH_WEIGHT {
            return true;
        }
        self.send_pending() && self.hand_on(deliver, false)
    }

    /// Hand on every result still to come, in order (before writing something
    /// that is not a job's result, or at the end).
    pub(crate) fn drain(&mut self, deliver: &mut impl FnMut(R) -> bool) -> bool {
        if !self.send_pending() {
            return false;
        }
        while self.in_flight() > 0 {
            if !self.hand_on(deliver, true) {
                return false;
            }
        }
        true
    }

    fn in_flight(&self) -> usize {
        (self.sent - self.delivered) as usize
    }

    /// Send the pending jobs as a batch, and while too many batches are out
    /// wait (results wait in order, handed on at the next chance).
    fn send_pending(&mut self) -> bool {
        let Some(jobs) = &self.jobs else { return true };
        if self.pending.is_empty() {
            return true;
        }
        let batch = std::mem::replace(&mut self.pending, Vec::with_capacity(Self::BATCH_JOBS));
        self.pending_weight = 0;
        if jobs.send((self.sent, batch)).is_err() {
            return false;
        }
        self.sent += 1;
        true
    }

    /// Take batches off the channel (waiting for the oldest when `block`, or
    /// when more than the limit are out) and hand on those next in order.
    fn hand_on(&mut self, deliver: &mut impl FnMut(R) -> bool, block: bool) -> bool {
        let mut block = block || self.in_flight() > self.limit;
        loop {
            while let Some(Some(_)) = self.waiting.front() {
                let Some(Some(batch)) = self.waiting.pop_front() else {
                    break;
                };
                self.delivered += 1;
                block = self.in_flight() > self.limit;
                for r in batch {
                    if !deliver(r) {
                        return false;
                    }
                }
            }
            let Some(results) = &self.results else {
                return true;
            };
            let got = if block && self.in_flight() > 0 {
                results.recv().ok()
            } else {
                results.try_recv().ok()
            };
            let Some((seq, batch)) = got else {
                // Nothing ready; or, blocking, every worker gone (they stop only when told).
                return !block || self.in_flight() == 0;
            };
            let slot = (seq - self.delivered) as usize;
            if self.waiting.len() <= slot {
                self.waiting.resize_with(slot + 1, || None);
            }
            self.waiting[slot] = Some(batch);
        }
    }

    /// Stop the workers: they see the job channel close.
    fn close(&mut self) {
        self.jobs = None;
    }
}

/// Workers for decoding a capture's frames: the other cores, at most 8 (the
/// calling thread reads, pairs and writes; a file's reading thread is light).
pub(crate) fn decoding_workers() -> usize {
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs that take longer the earlier they come still come out in order.
    fn run_with(workers: usize, n: u64) -> Vec<u64> {
        let work = |j: u64| {
            std::thread::sleep(std::time::Duration::from_micros((n - j) % 7 * 50));
            j * 10
        };
        let mut got = Vec::new();
        InOrder::run(workers, &work, |q| {
            let mut deliver = |r| {
                got.push(r);
                true
            };
            for j in 0..n {
                assert!(q.submit(j, (j % 5) as usize * 20_000, &mut deliver));
                assert!(
                    q.in_flight() <= q.limit,
                    "at most {} batches in flight, {} are",
                    q.limit,
                    q.in_flight()
                );
            }
            assert!(q.drain(&mut deliver));
            assert_eq!(q.in_flight(), 0);
        });
        got
    }

    #[test]
    fn results_come_in_submission_order() {
        let expected: Vec<u64> = (0..2000).map(|j| j * 10).collect();
        for workers in [0, 1, 2, 3, 8] {
            assert_eq!(run_with(workers, 2000), expected, "{workers} workers");
        }
    }

    #[test]
    fn without_workers_each_result_is_handed_on_at_once() {
        let work = |j: u32| j + 1;
        InOrder::run(0, &work, |q| {
            let mut last = None;
            for j in 0..5 {
                q.submit(j, 1, &mut |r| {
                    last = Some(r);
                    true
                });
                assert_eq!(last, Some(j + 1));
            }
        });
    }

    #[test]
    fn a_refused_result_stops_submitting() {
        let work = |j: u32| j;
        for workers in [0, 2] {
            let mut seen = Vec::new();
            let stopped_at = InOrder::run(workers, &work, |q| {
                let mut deliver = |r| {
                    seen.push(r);
                    r < 3
                };
                (0..1000).find(|&j| {
                    !q.submit(j, 1, &mut deliver) || (j == 999 && !q.drain(&mut deliver))
                })
            });
            assert!(stopped_at.is_some(), "{workers} workers: never stopped");
            assert_eq!(
                seen,
                [0, 1, 2, 3],
                "{workers} workers: nothing after the refused result"
            );
        }
    }
}
