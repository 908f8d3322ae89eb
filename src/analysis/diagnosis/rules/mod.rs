//! The conversation rules, one module each. A rule keeps what it needs of
//! the conversation and says what it found as [`Found`]s: as soon as it is
//! decided, or at the end of the capture for what only the whole capture
//! shows. Every rule has tests of its own in `tests/diagnosis.rs`: a
//! conversation that shows it, and the normal flows that look like it.

pub mod churn;
pub mod closed;
pub mod error_version;
pub mod everywhere;
pub mod fetch_session;
pub mod groups;
pub mod metadata_storm;
pub mod partitions;
pub(crate) mod poll_abandoned;
pub mod producer;
pub(crate) mod reconnects;
pub mod retry_loop;
pub mod throttle;
pub mod transactions;

use super::{Ctx, Ex, Found, Req};
use crate::capture::ConnEvent;

/// Every rule's state, told about each request, exchange and connection event.
#[derive(Default)]
pub struct Rules {
    /// Connections whose SYN was seen, and when.
    syn: foldhash::HashMap<usize, f64>,
    retry_loop: retry_loop::RetryLoop,
    churn: churn::Churn,
    polls_abandoned: poll_abandoned::PollsAbandoned,
    reconnects: reconnects::Reconnects,
    producer: producer::Producers,
    fetch_session: fetch_session::FetchSessions,
    groups: groups::Groups,
    throttle: throttle::Throttle,
    metadata_storm: metadata_storm::MetadataStorm,
    transactions: transactions::Transactions,
    partitions: partitions::Partitions,
    everywhere: everywhere::Everywhere,
}

impl Rules {
    pub fn request(&mut self, ctx: &Ctx<'_>, req: &Req<'_>, out: &mut Vec<Found>) {
        self.reconnects.request(req, &self.syn);
        self.throttle.request(ctx, req, out);
        self.metadata_storm.request(ctx, req, out);
        self.producer.request(ctx, req, out);
        self.fetch_session.request(ctx, req, out);
        self.transactions.request(req);
    }

    pub fn exchange(&mut self, ctx: &Ctx<'_>, ex: &Ex<'_>, out: &mut Vec<Found>) {
        error_version::exchange(ctx, ex, out);
        self.retry_loop.exchange(ctx, ex, out);
        self.churn.exchange(ex, &self.syn);
        self.polls_abandoned.exchange(ex);
        self.producer.exchange(ctx, ex, out);
        self.fetch_session.exchange(ctx, ex, out);
        self.groups.exchange(ctx, ex, out);
        self.throttle.exchange(ex);
        self.transactions.exchange(ex);
        self.partitions.exchange(ctx, ex, out);
        self.everywhere.exchange(ex);
    }

    pub(crate) fn conn_event(&mut self, _ctx: &Ctx<'_>, e: &ConnEvent, _out: &mut Vec<Found>) {
        if e.kind == crate::capture::ConnEventKind::Open {
            self.syn.insert(e.conn, e.timestamp);
        }
    }

    /// A connection is closing (its first FIN, or an RST) with `in_flight`
    /// awaiting answers.
    pub(crate) fn closing(
        &mut self,
        on: (usize, &super::ClientKey, std::net::SocketAddr),
        close: (crate::capture::ConnEventKind, f64),
        in_flight: &[closed::Cut<'_>],
    ) {
        self.reconnects.closing(on.0, close.1);
        self.polls_abandoned.closing(on, close, in_flight);
    }

    /// How soon after closing connection `closed` at `when` its client
    /// opened a new one to the broker to go on polling or producing, when it
    /// did (from `from`, within [`reconnects::RECONNECT_WITHIN`] of the
    /// close) while keeping another connection open.
    pub(crate) fn reconnected(
        &mut self,
        on: (&super::ClientKey, std::net::SocketAddr),
        (closed, when): (usize, f64),
        from: f64,
    ) -> Option<f64> {
        (self.reconnects)
            .after(on, (closed, when), from, reconnects::GoesOn::Working)
            .map(|r| r.after)
    }

    /// Requests cut by closes a finding explains (not `unanswered` notes).
    pub(crate) fn covered(&self) -> &foldhash::HashSet<usize> {
        self.polls_abandoned.covered()
    }

    pub fn finish(&mut self, ctx: &Ctx<'_>, end: f64, out: &mut Vec<Found>) {
        self.retry_loop.finish(ctx, out);
        // First: the reconnects it explains are not churn.
        self.polls_abandoned.finish(&mut self.reconnects, out);
        self.churn.finish(self.polls_abandoned.reopened(), out);
        self.fetch_session.finish(ctx, out);
        self.groups.finish(ctx, out);
        self.throttle.finish(ctx, out);
        self.metadata_storm.finish(ctx, out);
        self.producer.finish(ctx, out);
        self.transactions.finish(end, out);
        self.partitions.finish(ctx, out);
        self.everywhere.finish(ctx, out);
    }
}

/// `NAME (code)`, or the code alone when kwire does not know its name.
pub(crate) fn error_text(code: i16) -> String {
    match crate::protocol::error_codes::error_name(code) {
        Some(n) => format!("{n} ({code})"),
        None => format!("error {code}"),
    }
}

/// Error codes joined: `MEMBER_ID_REQUIRED (79)`, or several with `+`.
pub(crate) fn errors_text(codes: &[i16]) -> String {
    codes
        .iter()
        .map(|&c| error_text(c))
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Push a frame number unless the list is full (its finding's count still counts).
pub(crate) fn push_frame(frames: &mut Vec<usize>, frame: usize) {
    if frames.len() < crate::analysis::finding::MAX_FRAMES_NAMED {
        frames.push(frame);
    }
}
