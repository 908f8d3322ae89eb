//! `poll-abandoned`: a client that closes its connection while its long
//! poll (Fetch, ShareFetch) is still inside the MaxWaitMs it asked the
//! broker for, opens a new connection to the same broker at once and polls
//! again, time after time. Its request timeout is shorter than its fetch
//! wait: every poll that finds no data ends in a close, a reconnect and a
//! lost fetch session.
//!
//! One such close is what a consumer stopping (or restarting) does, so it
//! takes [`MIN_ABANDONED`]. The close must be the client's, and the new
//! connection must be opened between the poll and [`RECONNECT_WITHIN`]
//! after the close, by the same client to the same broker, and poll again.
//! The requests those closes cut are this finding's, not `unanswered`
//! notes, and the new connections are not counted as `connection-churn`.

use super::super::{duration_text, At, ClientKey, Found, FETCH};
use super::closed::{long_poll, Cut, SHARE_FETCH};
use crate::analysis::finding::Rule;
use crate::capture::{ConnEvent, ConnEventKind, Side};
use foldhash::{HashMap, HashSet};
use std::net::SocketAddr;

/// Closes of a long poll before a client's findings say its timeout is short.
pub(crate) const MIN_ABANDONED: usize = 2;
/// How soon after its close a client's new connection reads as the reconnect.
pub(crate) const RECONNECT_WITHIN: f64 = 1.0;

/// A connection as the rule knows it: who opened it, when, and whether it polled.
struct Conn {
    client: ClientKey,
    broker: SocketAddr,
    opened: f64,
    polled: bool,
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
    /// Connections whose SYN was seen, and when.
    syn: HashMap<usize, f64>,
    conns: HashMap<usize, Conn>,
    abandons: Vec<Abandon>,
    /// What the findings took: the requests they cut, and the reconnects.
    covered: HashSet<usize>,
    reconnects: HashSet<usize>,
}

impl PollsAbandoned {
    pub(crate) fn conn_event(&mut self, e: &ConnEvent) {
        if e.kind == ConnEventKind::Open {
            self.syn.insert(e.conn, e.timestamp);
        }
    }

    pub(crate) fn request(&mut self, req: &super::super::Req<'_>) {
        let syn = self.syn.get(&req.conn).copied();
        let c = self.conns.entry(req.conn).or_insert_with(|| Conn {
            client: req.client.clone(),
            broker: req.broker,
            opened: syn.unwrap_or(req.at.time),
            polled: false,
        });
        c.polled |= is_poll(req.api.0);
    }

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

    /// The findings, one a client; what they cover is then [`Self::covered`]
    /// and [`Self::reconnects`].
    pub(crate) fn finish(&mut self, out: &mut Vec<Found>) {
        // Each client's polling connections to each broker, by when they opened.
        let mut opened: HashMap<(&ClientKey, SocketAddr), Vec<(f64, usize)>> = HashMap::default();
        for (&k, c) in self.conns.iter().filter(|(_, c)| c.polled) {
            opened
                .entry((&c.client, c.broker))
                .or_default()
                .push((c.opened, k));
        }
        for conns in opened.values_mut() {
            conns.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        }
        // A client's abandoned polls, each with the gap to its reconnect.
        let mut by_client: HashMap<&ClientKey, Vec<(&Abandon, f64, usize)>> = HashMap::default();
        for a in &self.abandons {
            let Some(conns) = opened.get(&(&a.client, a.broker)) else {
                continue;
            };
            let from = conns.partition_point(|(t, _)| *t < a.poll.time);
            let reconnect = conns[from..]
                .iter()
                .take_while(|(t, _)| *t <= a.closed + RECONNECT_WITHIN)
                .find(|(_, k)| *k != a.conn);
            if let Some(&(t, k)) = reconnect {
                by_client
                    .entry(&a.client)
                    .or_default()
                    .push((a, (t - a.closed).max(0.0), k));
            }
        }
        let mut clients: Vec<_> = by_client.into_iter().collect();
        clients.sort_by(|x, y| x.1[0].0.poll.time.total_cmp(&y.1[0].0.poll.time));
        for (client, abandons) in clients {
            if abandons.len() < MIN_ABANDONED {
                continue;
            }
            let mut frames = Vec::new();
            for (a, _, reconnect) in &abandons {
                super::push_frame(&mut frames, a.poll.index);
                self.covered.extend(&a.cut);
                self.reconnects.insert(*reconnect);
            }
            let spread = |f: &dyn Fn(&(&Abandon, f64, usize)) -> f64| {
                let (lo, hi) = abandons
                    .iter()
                    .map(f)
                    .fold((f64::INFINITY, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
                (lo, hi)
            };
            let (into_lo, into_hi) = spread(&|(a, ..)| a.closed - a.poll.time);
            let (wait_lo, wait_hi) = spread(&|(a, ..)| a.wait);
            let (_, gap_hi) = spread(&|(_, gap, _)| *gap);
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
    pub(crate) fn reconnects(&self) -> &HashSet<usize> {
        &self.reconnects
    }
}

fn is_poll(key: i16) -> bool {
    key == FETCH || key == SHARE_FETCH
}

/// `a` or `a–b` when the two read differently.
fn span(lo: f64, hi: f64, text: impl Fn(f64) -> String) -> String {
    let (lo, hi) = (text(lo), text(hi));
    match lo == hi {
        true => lo,
        false => format!("{lo}–{hi}"),
    }
}
