//! Requests awaiting their responses, per connection and correlation id: what
//! pairs a response with its request for its latency (`capture --list`, the
//! explorer) and the explorer's `p`.

use crate::capture::awaiting::Awaiting;
use crate::capture::CapturedFrame;
use crate::decode::Direction;

use super::exchange::micros_between;

/// Requests remembered while they await their response; past this the
/// oldest half is forgotten (their responses then show no latency).
pub const MAX_PENDING: usize = 100_000;

/// A response's request: how long it waited, and the request's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Paired {
    pub latency_us: u64,
    pub request_row: usize,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    row: usize,
    time: f64,
}

/// The requests not answered yet, as the capture layer pairs them.
#[derive(Debug, Default)]
pub struct Pending {
    open: Awaiting<(usize, i32), Open>,
}

impl Pending {
    /// Takes the frame numbered `row` in order: a request is remembered, a
    /// response (whose request the capture layer matched) is paired with it.
    pub(crate) fn on_frame(&mut self, f: &CapturedFrame, row: usize) -> Option<Paired> {
        let corr = f.correlation_id?;
        match f.direction {
            Direction::Request => {
                if self.open.len() >= MAX_PENDING {
                    let mut rows: Vec<usize> = self.open.values().map(|p| p.row).collect();
                    rows.sort_unstable();
                    let cut = rows[rows.len() / 2];
                    self.open.retain(|p| p.row >= cut);
                }
                let open = Open {
                    row,
                    time: f.timestamp,
                };
                self.open.insert((f.conn, corr), open);
                None
            }
            Direction::Response if f.api_key.is_some() => {
                let open = self.open.take(&(f.conn, corr))?;
                Some(Paired {
                    latency_us: micros_between(open.time, f.timestamp),
                    request_row: open.row,
                })
            }
            Direction::Response => None,
        }
    }
}
