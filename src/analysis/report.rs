//! What `kwire report` shows of a capture: the stats (by API and version and
//! by connection, from [`super::stats::Stats`]), and each selected exchange's
//! facts (times, latency, client id, error codes) for the latency chart, the
//! timeline and the exchange tables, where [`repeats`] folds the same
//! exchange asked again into one row. The inventory comes
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
        stats: Stats::new(&[Grouping::Api, Grouping::Client, Grouping::Conn]),
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
/// order; stops once every one was seen, or when `each` returns `false`.
pub fn for_each_frame_of<R: std::io::Read>(
    cat: &crate::schema::Catalogue,
    input: R,
    opts: &CaptureOptions,
    wanted: &BTreeSet<usize>,
    mut each: impl FnMut(&CapturedFrame) -> bool,
) -> Result<CaptureStats, String> {
    let mut left = wanted.len();
    for_each_captured(cat, input, opts, |c| {
        if left == 0 {
            return false;
        }
        if let Captured::Frame(f) = c {
            if wanted.contains(&f.index) {
                left -= 1;
                if !each(&f) {
                    left = 0;
                }
            }
        }
        left > 0
    })
}

/// Exchanges the report folds into one row: the same client id, broker, API
/// and version, answered or not, with the same error codes. Connections do
/// not split a group: a client that reconnects and asks again is the same
/// story ("JoinGroup answered MEMBER_ID_REQUIRED, every 1.0 s").
#[derive(Clone, Debug)]
pub struct Repeat {
    /// Indices into the exchanges, by start time.
    pub members: Vec<usize>,
}

/// How often a group's exchanges started.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Cadence {
    Once,
    /// Every gap within a quarter of the median gap (seconds).
    Regular(f64),
    /// Gaps that vary; their median (seconds).
    Irregular(f64),
}

/// The folding key: which exchanges are "the same exchange again".
type RepeatKey<'a> = (Option<u32>, SocketAddr, Option<(i16, i16)>, u8, &'a [i16]);

fn outcome_kind(o: Outcome) -> u8 {
    match o {
        Outcome::Answered { .. } => 0,
        Outcome::Unanswered { .. } => 1,
        Outcome::Unmatched => 2,
        Outcome::Pending => 3,
    }
}

/// The exchanges folded into groups, each ordered by start time; groups in
/// the order of their first exchange.
pub fn repeats(exchanges: &[ExchangeFacts]) -> Vec<Repeat> {
    let mut order: Vec<usize> = (0..exchanges.len()).collect();
    order.sort_by(|&a, &b| {
        exchanges[a]
            .start()
            .total_cmp(&exchanges[b].start())
            .then(a.cmp(&b))
    });
    let mut at: std::collections::HashMap<RepeatKey<'_>, usize> = std::collections::HashMap::new();
    let mut out: Vec<Repeat> = Vec::new();
    for i in order {
        let e = &exchanges[i];
        let key = (
            e.client_id,
            e.broker,
            e.api,
            outcome_kind(e.outcome),
            &*e.errors,
        );
        match at.get(&key) {
            Some(&g) => out[g].members.push(i),
            None => {
                at.insert(key, out.len());
                out.push(Repeat { members: vec![i] });
            }
        }
    }
    out
}

impl Repeat {
    /// How regularly the group's exchanges started.
    pub(crate) fn cadence(&self, exchanges: &[ExchangeFacts]) -> Cadence {
        let mut gaps: Vec<f64> = self
            .members
            .windows(2)
            .map(|w| exchanges[w[1]].start() - exchanges[w[0]].start())
            .filter(|g| g.is_finite())
            .collect();
        if gaps.is_empty() {
            return Cadence::Once;
        }
        gaps.sort_by(f64::total_cmp);
        let mid = gaps.len() / 2;
        let median = if gaps.len().is_multiple_of(2) {
            (gaps[mid - 1] + gaps[mid]) / 2.0
        } else {
            gaps[mid]
        };
        let regular = gaps.len() >= 2
            && median > 0.0
            && gaps.iter().all(|g| (g - median).abs() <= median / 4.0);
        if regular {
            Cadence::Regular(median)
        } else {
            Cadence::Irregular(median)
        }
    }
}

/// The `p`-th percentile (0–100) of ascending values: the smallest value
/// with at least `p` percent of the values at or below it.
pub fn percentile(sorted: &[u64], p: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ex(conn: usize, t: f64, api: (i16, i16), errors: &[i16]) -> ExchangeFacts {
        let at = |time| FrameAt {
            index: (t * 10.0) as usize,
            time,
            bytes: 10,
        };
        ExchangeFacts {
            conn,
            client: "127.0.0.1:5000".parse().unwrap(),
            broker: "127.0.0.1:9092".parse().unwrap(),
            api: Some(api),
            request: Some(at(t)),
            response: Some(at(t + 0.001)),
            outcome: Outcome::Answered { latency_us: 1000 },
            client_id: Some(0),
            errors: errors.into(),
        }
    }

    #[test]
    fn the_same_exchange_again_is_one_group_across_connections() {
        let list = vec![
            ex(0, 0.0, (11, 0), &[79]),
            ex(0, 0.5, (3, 1), &[]),
            ex(1, 1.0, (11, 0), &[79]),
            ex(2, 4.0, (11, 0), &[79]),
            ex(2, 4.5, (11, 0), &[]),
        ];
        let groups = repeats(&list);
        let members: Vec<Vec<usize>> = groups.iter().map(|g| g.members.clone()).collect();
        assert_eq!(members, vec![vec![0, 2, 3], vec![1], vec![4]]);
        assert_eq!(groups[0].cadence(&list), Cadence::Irregular(2.0));
        assert_eq!(groups[1].cadence(&list), Cadence::Once);
    }

    #[test]
    fn a_steady_retry_has_a_period() {
        let list: Vec<_> = (0..15)
            .map(|i| {
                ex(
                    i,
                    f64::from(i as u32) * 1.0 + if i % 2 == 0 { 0.01 } else { 0.0 },
                    (11, 0),
                    &[79],
                )
            })
            .collect();
        match repeats(&list)[0].cadence(&list) {
            Cadence::Regular(p) => assert!((p - 1.0).abs() < 0.02, "{p}"),
            c => panic!("{c:?}"),
        }
    }

    #[test]
    fn percentiles_are_values_of_the_list() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), Some(50));
        assert_eq!(percentile(&v, 99.0), Some(99));
        assert_eq!(percentile(&v, 100.0), Some(100));
        assert_eq!(percentile(&[7], 50.0), Some(7));
        assert_eq!(percentile(&[], 50.0), None);
    }
}
