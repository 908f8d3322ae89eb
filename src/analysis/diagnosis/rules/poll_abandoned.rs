//! `poll-abandoned`: a client that closes its connection while its long
//! poll (Fetch, ShareFetch) is still inside the MaxWaitMs it asked the
//! broker for, opens a new connection to the same broker at once and polls
//! again, time after time. Its request timeout is shorter than its fetch
//! wait: every poll that finds no data ends in a close, a reconnect and a
//! lost fetch session.
//!
//! One such close is what a consumer stopping (or restarting) does, so it
//! takes [`MIN_ABANDONED`]. The close must be the client's, and the new
//! connection must be opened between the poll and
//! [`super::reconnects::RECONNECT_WITHIN`] after the close, by the same
//! client to the same broker, and poll, while another connection of the
//! client stays open (a client stopping closes them all:
//! [`super::reconnects`]).
//!
//! A consumer without a group has no other connection to keep: its one
//! connection to the broker is closed and opened again. Its closes read as
//! a timer's when there are [`MIN_TIMED`] of them, each closing no other
//! connection of the client, all at the same time into their polls (within
//! [`timer_spread`]) and at least [`MIN_TIMER`] into them, and no poll of
//! the client was answered after waiting as long (a timer would have cut
//! it). An application that stops and starts its consumer now and then
//! closes at any time into a poll; one that polls on a connection for
//! longer is answered after its wait; a busy one's polls are answered within
//! milliseconds, so its closes come milliseconds into them.
//! The requests those closes cut are this finding's, not `unanswered`
//! notes, and the new connections are not counted as `connection-churn`.

use super::super::{duration_text, At, ClientKey, Ex, Found};
use super::closed::{long_poll, Cut};
use super::reconnects::{is_poll, Around, GoesOn, Reconnects};
use crate::analysis::finding::Rule;
use crate::capture::{ConnEventKind, Side};
use foldhash::{HashMap, HashSet};
use std::net::SocketAddr;

/// Closes of a long poll before a client's findings say its timeout is short.
pub(crate) const MIN_ABANDONED: usize = 2;
/// Closes at the same time into their polls before a client's findings say
/// its timeout is short, when it kept no other connection open.
pub(crate) const MIN_TIMED: usize = 3;

/// How far into its poll in seconds a close must come to be a timer's: no
/// client's request timeout is shorter.
pub(crate) const MIN_TIMER: f64 = 0.1;

/// How far apart in seconds the times into their polls at which a client
/// closed may be and still be one timer's: 10 ms, or 2% of the longest
/// (kafka-python's 700 ms timeout closed 696.4 ms to 700.0 ms into its polls).
pub(crate) fn timer_spread(longest: f64) -> f64 {
    (0.02 * longest).max(0.010)
}

/// A client's close of a connection with a long poll inside its wait.
struct Abandon {
    conn: usize,
    client: ClientKey,
    broker: SocketAddr,
    poll: At,
    /// When the client closed, and the poll's MaxWaitMs in seconds.
    closed: f64,
    wait: f64,
    /// Every request in flight at the close (the poll, and what queued behind it).
    cut: Vec<usize>,
}

#[derive(Default)]
pub(crate) struct PollsAbandoned {
    abandons: Vec<Abandon>,
    /// What the findings took: the requests they cut, and the reconnects.
    covered: HashSet<usize>,
    reopened: HashSet<usize>,
    /// Connections the client closed (an answer after that came too late).
    closed_by_client: HashSet<usize>,
    /// Each client's longest wait for a poll answered on an open connection.
    longest_answered: HashMap<ClientKey, f64>,
}

impl PollsAbandoned {
    /// Connection `conn` is closing as `how` at `when`, with `in_flight`
    /// awaiting answers (the broker may still answer them before it closes
    /// its side: tansu does).
    pub(crate) fn closing(
        &mut self,
        (conn, client, broker): (usize, &ClientKey, SocketAddr),
        (how, when): (ConnEventKind, f64),
        in_flight: &[Cut<'_>],
    ) {
        if how.side() != Side::Client {
            return;
        }
        self.closed_by_client.insert(conn);
        // The poll the close came inside of: sent before it, its wait not over.
        let inside = in_flight.iter().find(|(at, api, facts)| {
            is_poll(api.0) && at.time <= when && when < at.time + long_poll(*api, facts)
        });
        if let Some((poll, api, facts)) = inside {
            self.abandons.push(Abandon {
                conn,
                client: client.clone(),
                broker,
                poll: *poll,
                closed: when,
                wait: long_poll(*api, facts),
                cut: in_flight.iter().map(|(at, ..)| at.index).collect(),
            });
        }
    }

    /// A poll answered on a connection its client had not closed: how long
    /// it waited.
    pub(crate) fn exchange(&mut self, ex: &Ex<'_>) {
        let Some(response) = ex.response else {
            return;
        };
        if !is_poll(ex.api.0) || self.closed_by_client.contains(&ex.conn) {
            return;
        }
        let waited = response.time - ex.request.time;
        let longest = self.longest_answered.entry(ex.client.clone()).or_default();
        *longest = longest.max(waited);
    }

    /// The findings, one a client; what they cover is then [`Self::covered`]
    /// and [`Self::reopened`].
    pub(crate) fn finish(&mut self, reconnects: &mut Reconnects, out: &mut Vec<Found>) {
        // A client's abandoned polls, each with the gap to its reconnect and
        // what became of the client's other connections.
        let mut by_client: HashMap<&ClientKey, Vec<Reopened<'_>>> = HashMap::default();
        for a in &self.abandons {
            let on = (&a.client, a.broker);
            let closed = (a.conn, a.closed);
            if let Some(r) = reconnects.reopened(on, closed, a.poll.time, GoesOn::Polling) {
                let around = reconnects.around(&a.client, closed);
                (by_client.entry(&a.client).or_default()).push((a, r.after, r.conn, around));
            }
        }
        let mut clients: Vec<_> = by_client
            .into_iter()
            .filter_map(|(client, all)| {
                let longest = self.longest_answered.get(client).copied();
                Some((client, given_up(all, longest)?))
            })
            .collect();
        clients.sort_by(|x, y| x.1[0].0.poll.time.total_cmp(&y.1[0].0.poll.time));
        for (client, abandons) in clients {
            let mut frames = Vec::new();
            for (a, _, reconnect, _) in &abandons {
                super::push_frame(&mut frames, a.poll.index);
                self.covered.extend(&a.cut);
                self.reopened.insert(*reconnect);
            }
            let (into_lo, into_hi) = bounds(abandons.iter().map(|(a, ..)| a.closed - a.poll.time));
            let (wait_lo, wait_hi) = bounds(abandons.iter().map(|(a, ..)| a.wait));
            let (_, gap_hi) = bounds(abandons.iter().map(|(_, gap, ..)| *gap));
            let first = abandons[0].0;
            let brokers: HashSet<SocketAddr> = abandons.iter().map(|(a, ..)| a.broker).collect();
            let to = match brokers.len() {
                1 => first.broker.to_string(),
                n => format!("{n} brokers"),
            };
            let last = abandons.iter().map(|(a, ..)| a.closed).fold(0f64, f64::max);
            let others = abandons
                .iter()
                .map(|(a, ..)| a.cut.len() - 1)
                .sum::<usize>();
            out.push(Found {
                rule: Rule::PollAbandoned,
                frames,
                time: first.poll.time,
                until: last,
                conn: None,
                client: Some(client.clone()),
                api: None,
                count: abandons.len() as u64,
                message: format!(
                    "{} closed its connection to {} {} times while its long poll waited (MaxWaitMs {}), {} into it, and reconnected within {} to poll again{}: its request timeout is shorter than its fetch wait",
                    client.describe(),
                    to,
                    abandons.len(),
                    span(wait_lo * 1e3, wait_hi * 1e3, |ms| format!("{ms:.0}")),
                    span(into_lo, into_hi, duration_text),
                    duration_text(gap_hi),
                    match others {
                        0 => String::new(),
                        1 => " (1 request queued behind a poll was cut too)".into(),
                        n => format!(" ({n} requests queued behind the polls were cut too)"),
                    },
                ),
            });
        }
    }

    /// The requests cut by the closes the findings report.
    pub(crate) fn covered(&self) -> &HashSet<usize> {
        &self.covered
    }

    /// The connections opened to poll again after those closes.
    pub(crate) fn reopened(&self) -> &HashSet<usize> {
        &self.reopened
    }
}

/// An abandoned poll with the reconnect after it: how soon, which
/// connection, and what became of the client's others.
type Reopened<'a> = (&'a Abandon, f64, usize, Around);

/// The closes of one client that say it gave up on its polls, if they do:
/// those that left another of its connections open, when there are
/// [`MIN_ABANDONED`]; else all of them, when they are a timer's (each closing
/// no other connection, [`MIN_TIMED`] of them at the same time into their
/// polls and at least [`MIN_TIMER`] into them, and no poll of the client
/// answered after waiting as long).
fn given_up(all: Vec<Reopened<'_>>, longest_answered: Option<f64>) -> Option<Vec<Reopened<'_>>> {
    let kept: Vec<Reopened<'_>> = all
        .iter()
        .filter(|(.., around)| around.others_stay_open)
        .cloned()
        .collect();
    if kept.len() >= MIN_ABANDONED {
        return Some(kept);
    }
    if all.len() < MIN_TIMED || !all.iter().all(|(.., around)| around.closed_alone) {
        return None;
    }
    let (lo, hi) = bounds(all.iter().map(|(a, ..)| a.closed - a.poll.time));
    // A busy consumer's polls are answered within milliseconds, so any
    // close of it comes a few milliseconds into one: alike, and no timer's.
    let timed =
        lo >= MIN_TIMER && hi - lo <= timer_spread(hi) && longest_answered.is_none_or(|w| w < lo);
    timed.then_some(all)
}

/// The least and the greatest of `values`.
fn bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// `a` or `a–b` when the two read differently.
fn span(lo: f64, hi: f64, text: impl Fn(f64) -> String) -> String {
    let (lo, hi) = (text(lo), text(hi));
    match lo == hi {
        true => lo,
        false => format!("{lo}–{hi}"),
    }
}
