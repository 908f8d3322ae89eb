//! What `kwire report` shows of a capture: the stats (by API and version and
//! by connection, from [`super::stats::Stats`]), and each selected exchange's
//! facts (times, latency, client id, error codes) for the latency histograms,
//! the timelines, the error list and the frame index. The inventory comes
//! from [`super::inventory::collect`]; frames are decoded for their annotated
//! views in a later pass ([`for_each_frame_of`]).
//!
//! Memory: the stats' groups and at most [`MAX_EXCHANGES`] exchanges' facts;
//! the exchanges beyond are counted in the stats but listed nowhere.

use super::exchange::{
    read_capture, Exchange, Exchanges, FrameAt, Names, Needs, Observer, Outcome, Reading,
};
use super::filter::Filter;
use super::stats::{Grouping, Stats};
use crate::capture::{for_each_captured, CaptureOptions, CaptureStats, Captured, CapturedFrame};
use std::collections::BTreeSet;
use std::net::SocketAddr;

/// The exchanges whose facts are kept (the stats count every one).
pub const MAX_EXCHANGES: usize = 100_000;

/// One selected exchange's facts.
#[derive(Clone, Debug)]
pub struct ExchangeFacts {
    pub conn: usize,
    pub client: SocketAddr,
    pub broker: SocketAddr,
    /// API key and version; `None` for a response without its request.
    pub api: Option<(i16, i16)>,
    pub request: Option<FrameAt>,
    pub response: Option<FrameAt>,
    pub outcome: Outcome,
    /// An index into [`Collected::names`].
    pub client_id: Option<u32>,
    /// Non-zero error codes of the response, ascending.
    pub errors: Box<[i16]>,
}

impl ExchangeFacts {
    /// When the exchange started (its request, or its lone response).
    pub fn start(&self) -> f64 {
        self.request.or(self.response).map_or(0.0, |f| f.time)
    }

    /// When it ended: the response, or for a request never answered the
    /// moment it stopped waiting.
    pub fn end(&self) -> f64 {
        match (self.outcome, self.request, self.response) {
            (Outcome::Unanswered { waited_us }, Some(r), _) => r.time + waited_us as f64 / 1e6,
            (_, Some(r), Some(p)) => p.time.max(r.time),
            _ => self.start(),
        }
    }

    pub fn latency_us(&self) -> Option<u64> {
        match self.outcome {
            Outcome::Answered { latency_us } => Some(latency_us),
            _ => None,
        }
    }
}

/// What the report's first pass read.
pub struct Collected {
    /// By API and version, and by connection.
    pub stats: Stats,
    pub names: Names,
    /// The selected exchanges in the order they completed (at most [`MAX_EXCHANGES`]).
    pub exchanges: Vec<ExchangeFacts>,
    /// Selected exchanges beyond [`MAX_EXCHANGES`].
    pub exchanges_not_kept: u64,
    pub reading: Reading,
}

struct Keeper<'f> {
    stats: Stats,
    filter: &'f Filter,
    exchanges: Vec<ExchangeFacts>,
    not_kept: u64,
}

impl Observer for Keeper<'_> {
    type Mark = ();

    fn request(&mut self, _: &Exchange<'_>) {}

    fn complete(&mut self, ex: &Exchange<'_>, _: Option<()>) {
        if matches!(ex.outcome, Outcome::Pending) || self.filter.decide(ex) != Some(true) {
            return;
        }
        self.stats.add(ex);
        if self.exchanges.len() >= MAX_EXCHANGES {
            self.not_kept += 1;
            return;
        }
        self.exchanges.push(ExchangeFacts {
            conn: ex.conn,
            client: ex.client,
            broker: ex.broker,
            api: ex.api,
            request: ex.request,
            response: ex.response,
            outcome: ex.outcome,
            client_id: ex.client_id,
            errors: ex.errors.into(),
        });
    }
}

/// Read a capture: the stats and facts of the exchanges that pass `filter`.
pub fn collect<R: std::io::Read>(
    cat: &crate::schema::Catalogue,
    release: Option<&str>,
    input: R,
    opts: &CaptureOptions,
    filter: &Filter,
) -> Result<Collected, String> {
    let needs = Needs {
        client_id: true,
        topics: false,
        errors: true,
        fields: None,
    }
    .union(filter.needs());
    let mut exchanges: Exchanges<'_, ()> = Exchanges::new(cat, release, needs);
    let mut keeper = Keeper {
        stats: Stats::new(&[Grouping::Api, Grouping::Conn]),
        filter,
        exchanges: Vec::new(),
        not_kept: 0,
    };
    let reading = read_capture(
        cat,
        input,
        opts,
        (&mut exchanges, &mut keeper),
        filter.frame_conn(),
        |_| {},
    )?;
    Ok(Collected {
        stats: keeper.stats,
        names: exchanges.into_names(),
        exchanges: keeper.exchanges,
        exchanges_not_kept: keeper.not_kept,
        reading,
    })
}

/// Hand on the frames of a capture whose numbers are in `wanted`, in capture
/// order; stops once every one was seen.
pub fn for_each_frame_of<R: std::io::Read>(
    cat: &crate::schema::Catalogue,
    input: R,
    opts: &CaptureOptions,
    wanted: &BTreeSet<usize>,
    mut each: impl FnMut(&CapturedFrame),
) -> Result<CaptureStats, String> {
    let mut left = wanted.len();
    for_each_captured(cat, input, opts, |c| {
        if left == 0 {
            return false;
        }
        if let Captured::Frame(f) = c {
            if wanted.contains(&f.index) {
                left -= 1;
                each(&f);
            }
        }
        left > 0
    })
}
