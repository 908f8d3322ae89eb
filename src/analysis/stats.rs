//! What a capture's exchanges add up to (`kwire stats`): per API and version,
//! and per client id, connection, broker or topic when asked; the text table
//! and the JSON object.
//!
//! Percentiles are exact nearest-rank ones, so every latency of a group must
//! be known at the end: a group keeps one count per distinct latency in
//! microseconds ([`Latencies`]). That is at most one entry per pair, and at
//! most one per microsecond of the span its latencies cover (a group whose
//! answers all take under a second holds at most a million entries, however
//! long the capture).

use super::diagnosis::Diagnosis;
use super::exchange::{
    read_capture, Exchange, Exchanges, Names, Needs, Observer, Outcome, Reading, Topic,
};
use super::filter::Filter;
use super::finding::{Finding, Rule};
use crate::capture::{CaptureOptions, Captured};
use crate::protocol::error_codes::error_name;
use crate::schema::Catalogue;
use crate::text::escape::{quote, sanitize};
use crate::text::table::Table;
use serde_json::{json, Map, Value as Json};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;

/// How rows are grouped besides by API and version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Grouping {
    Api,
    Client,
    Conn,
    Broker,
    Topic,
}

impl Grouping {
    /// What each grouping needs read from the frames.
    pub fn needs(groupings: &[Grouping]) -> Needs {
        Needs {
            client_id: groupings.contains(&Grouping::Client),
            topics: groupings.contains(&Grouping::Topic),
            errors: true,
            fields: None,
        }
    }
}

/// Latencies of one group, exactly: how many times each value (µs) occurred.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    counts: HashMap<u64, u64>,
    n: u64,
    sum: u128,
    min: u64,
    max: u64,
}

/// A group's latency figures, in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    pub min: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
    pub mean: f64,
}

impl Latencies {
    pub fn add(&mut self, us: u64) {
        if self.n == 0 || us < self.min {
            self.min = us;
        }
        self.max = self.max.max(us);
        self.n += 1;
        self.sum += u128::from(us);
        *self.counts.entry(us).or_insert(0) += 1;
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Min, nearest-rank p50, p90 and p99, max and mean; `None` without latencies.
    pub fn summary(&self) -> Option<Summary> {
        if self.n == 0 {
            return None;
        }
        let mut sorted: Vec<(u64, u64)> = self.counts.iter().map(|(&v, &c)| (v, c)).collect();
        sorted.sort_unstable();
        let at = |percent| nearest_rank(&sorted, self.n, percent);
        Some(Summary {
            min: self.min,
            p50: at(50),
            p90: at(90),
            p99: at(99),
            max: self.max,
            mean: self.sum as f64 / self.n as f64,
        })
    }
}

/// The nearest-rank percentile: the value at position ⌈percent/100 × n⌉
/// (counting from 1) of the `n` values that `sorted` holds as ascending
/// (value, count) pairs.
pub(crate) fn nearest_rank(sorted: &[(u64, u64)], n: u64, percent: u64) -> u64 {
    let rank = (u128::from(n) * u128::from(percent)).div_ceil(100).max(1);
    let mut seen = 0u128;
    for &(value, count) in sorted {
        seen += u128::from(count);
        if seen >= rank {
            return value;
        }
    }
    sorted.last().map_or(0, |&(value, _)| value)
}

/// One group's figures.
#[derive(Clone, Debug, Default)]
pub struct Row {
    pub requests: u64,
    /// Responses paired with a request of the group (a response without its
    /// request belongs to no group: its API is not known).
    pub responses: u64,
    /// Responses carrying each error code (once per response).
    pub errors: BTreeMap<i16, u64>,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub latency: Latencies,
}

impl Row {
    fn add(&mut self, ex: &Exchange<'_>) {
        let Some(request) = ex.request else { return };
        self.requests += 1;
        self.request_bytes += request.bytes as u64;
        if let Some(response) = ex.response {
            self.responses += 1;
            self.response_bytes += response.bytes as u64;
            for &e in ex.errors {
                *self.errors.entry(e).or_insert(0) += 1;
            }
        }
        if let Some(l) = ex.latency_us() {
            self.latency.add(l);
        }
    }

    /// Requests that got no response.
    pub fn unanswered(&self) -> u64 {
        self.requests - self.responses
    }
}

/// A connection's row, with its ends.
#[derive(Clone, Debug)]
pub struct ConnRow {
    pub client: SocketAddr,
    pub broker: SocketAddr,
    pub row: Row,
}

/// Everything `kwire stats` prints.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    /// Frames of the exchanges counted (requests, responses, lone responses).
    pub frames: u64,
    pub pairs: u64,
    pub unanswered_requests: u64,
    pub unmatched_responses: u64,
    pub by_api: BTreeMap<(i16, i16), Row>,
    pub by_client: Option<HashMap<u32, Row>>,
    pub by_conn: Option<BTreeMap<usize, ConnRow>>,
    pub by_broker: Option<BTreeMap<SocketAddr, Row>>,
    pub by_topic: Option<HashMap<u32, Row>>,
}

impl Stats {
    /// Rows by API and version, and by each grouping asked for.
    pub fn new(groupings: &[Grouping]) -> Stats {
        let has = |g| groupings.contains(&g);
        Stats {
            by_client: has(Grouping::Client).then(HashMap::new),
            by_conn: has(Grouping::Conn).then(BTreeMap::new),
            by_broker: has(Grouping::Broker).then(BTreeMap::new),
            by_topic: has(Grouping::Topic).then(HashMap::new),
            ..Stats::default()
        }
    }

    /// Count one complete exchange. Answered and unanswered ones go in the
    /// rows; a response without its request only in `unmatched_responses`.
    pub fn add(&mut self, ex: &Exchange<'_>) {
        match ex.outcome {
            Outcome::Pending => return,
            Outcome::Answered { .. } => self.pairs += 1,
            Outcome::Unanswered { .. } => self.unanswered_requests += 1,
            Outcome::Unmatched => {
                self.frames += ex.frames();
                self.unmatched_responses += 1;
                return;
            }
        }
        self.frames += ex.frames();
        if let Some(api) = ex.api {
            self.by_api.entry(api).or_default().add(ex);
        }
        if let (Some(rows), Some(c)) = (&mut self.by_client, ex.client_id) {
            rows.entry(c).or_default().add(ex);
        }
        if let Some(rows) = &mut self.by_conn {
            rows.entry(ex.conn)
                .or_insert_with(|| ConnRow {
                    client: ex.client,
                    broker: ex.broker,
                    row: Row::default(),
                })
                .row
                .add(ex);
        }
        if let Some(rows) = &mut self.by_broker {
            rows.entry(ex.broker).or_default().add(ex);
        }
        if let Some(rows) = &mut self.by_topic {
            for &t in ex.topics {
                rows.entry(t).or_default().add(ex);
            }
        }
    }

    /// The groupings' rows in output order, each with its key as JSON members
    /// and as table cells.
    fn groups<'s>(&'s self, cat: &Catalogue, names: &Names) -> Vec<Group<'s>> {
        let mut groups = Vec::new();
        let api_rows = self
            .by_api
            .iter()
            .map(|(&(key, version), row)| {
                let name = cat.api_name(key);
                let members = vec![
                    ("api_key", json!(key)),
                    ("api_name", json!(name)),
                    ("api_version", json!(version)),
                ];
                let cells = vec![
                    name.map_or_else(|| format!("api {key}"), sanitize),
                    format!("v{version}"),
                ];
                (members, cells, row)
            })
            .collect();
        groups.push(Group {
            by: By::Api,
            heads: &["api", "version"],
            rows: api_rows,
        });
        if let Some(rows) = &self.by_client {
            let mut keyed: Vec<(Option<&[u8]>, &Row)> = rows
                .iter()
                .map(|(&c, row)| (names.client_id(c), row))
                .collect();
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            let rows = keyed
                .into_iter()
                .map(|(id, row)| {
                    let text = id.map(|b| String::from_utf8_lossy(b).into_owned());
                    let cell = text.as_deref().map_or_else(|| "null".to_string(), quote);
                    (vec![("client_id", json!(text))], vec![cell], row)
                })
                .collect();
            groups.push(Group {
                by: By::Client,
                heads: &["client_id"],
                rows,
            });
        }
        if let Some(rows) = &self.by_conn {
            let rows = rows
                .iter()
                .map(|(&conn, c)| {
                    (
                        vec![("conn", json!(conn))],
                        vec![conn.to_string(), format!("{} → {}", c.client, c.broker)],
                        &c.row,
                    )
                })
                .collect();
            groups.push(Group {
                by: By::Conn,
                heads: &["conn", "client → broker"],
                rows,
            });
        }
        if let Some(rows) = &self.by_broker {
            let rows = rows
                .iter()
                .map(|(broker, row)| {
                    (
                        vec![("broker", json!(broker.to_string()))],
                        vec![broker.to_string()],
                        row,
                    )
                })
                .collect();
            groups.push(Group {
                by: By::Broker,
                heads: &["broker"],
                rows,
            });
        }
        if let Some(rows) = &self.by_topic {
            let mut keyed: Vec<(&Topic, &Row)> = rows
                .iter()
                .filter_map(|(&t, row)| Some((names.topic(t)?, row)))
                .collect();
            keyed.sort_by(|a, b| topic_order(a.0).cmp(&topic_order(b.0)));
            let rows = keyed
                .into_iter()
                .map(|(t, row)| {
                    (
                        vec![("topic", json!(t.text()))],
                        vec![sanitize(&t.text())],
                        row,
                    )
                })
                .collect();
            groups.push(Group {
                by: By::Topic,
                heads: &["topic"],
                rows,
            });
        }
        groups
    }

    /// The JSON object: counts, then `by_api` and the groupings asked for.
    pub fn to_json(&self, cat: &Catalogue, names: &Names) -> Json {
        let mut top = Map::new();
        top.insert("frames".into(), json!(self.frames));
        top.insert("pairs".into(), json!(self.pairs));
        top.insert(
            "unanswered_requests".into(),
            json!(self.unanswered_requests),
        );
        top.insert(
            "unmatched_responses".into(),
            json!(self.unmatched_responses),
        );
        for g in self.groups(cat, names) {
            let rows = g
                .rows
                .into_iter()
                .map(|(members, _, row)| row_json(members, row))
                .collect();
            top.insert(g.by.key().into(), Json::Array(rows));
        }
        Json::Object(top)
    }

    /// The text: a line of counts, then a table per grouping (the one by API
    /// when `by_api`).
    /// Each table fits `columns` by leaving out the numbers a reader can best
    /// spare (`SPARE_FIRST`), said in a line under it.
    pub fn to_text(
        &self,
        cat: &Catalogue,
        names: &Names,
        by_api: bool,
        columns: Option<usize>,
    ) -> String {
        let mut out = format!(
            "frames {}, pairs {}, unanswered requests {}, unmatched responses {}\n",
            self.frames, self.pairs, self.unanswered_requests, self.unmatched_responses
        );
        if self.unmatched_responses > 0 {
            out.push_str(
                "(responses without their request are in no row: their API is not known)\n",
            );
        }
        for g in self
            .groups(cat, names)
            .into_iter()
            .filter(|g| by_api || g.by != By::Api)
        {
            out.push('\n');
            let left = g.heads.len();
            let mut head: Vec<String> = g.heads.iter().map(|h| h.to_string()).collect();
            head.extend(NUMBER_HEADS.iter().map(|h| h.to_string()));
            head.push("errors".into());
            let mut table = Table {
                rows: vec![head],
                left,
                spare: SPARE_FIRST
                    .iter()
                    .filter_map(|h| NUMBER_HEADS.iter().position(|n| n == h))
                    .map(|i| left + i)
                    .collect(),
            };
            for (_, mut cells, row) in g.rows {
                cells.extend(row_cells(row));
                table.rows.push(cells);
            }
            let hidden = table.render(columns, &mut out);
            out.push_str(&crate::text::table::hidden_line(&hidden, columns));
        }
        out
    }
}

/// Topics by name first, then ids, each in byte order.
fn topic_order(t: &Topic) -> (u8, &[u8]) {
    match t {
        Topic::Name(b) => (0, b),
        Topic::Id(u) => (1, u),
    }
}

/// What a group's rows are per.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum By {
    Api,
    Client,
    Conn,
    Broker,
    Topic,
}

impl By {
    /// The group's key in the JSON object.
    fn key(self) -> &'static str {
        match self {
            By::Api => "by_api",
            By::Client => "by_client",
            By::Conn => "by_conn",
            By::Broker => "by_broker",
            By::Topic => "by_topic",
        }
    }
}

/// One grouping's rows: the JSON members and table cells of each key.
struct Group<'s> {
    by: By,
    heads: &'static [&'static str],
    rows: Vec<Keyed<'s>>,
}

/// A row with its key as JSON members and as table cells.
type Keyed<'s> = (Vec<(&'static str, Json)>, Vec<String>, &'s Row);

/// The numbers' column heads, in text and in the report alike.
pub const NUMBER_HEADS: [&str; 11] = [
    "requests",
    "responses",
    "unanswered",
    "req_bytes",
    "resp_bytes",
    "min",
    "p50",
    "p90",
    "p99",
    "max",
    "mean",
];

/// The numbers a narrow table leaves out, the first first: what the others
/// tell (responses and unanswered from requests and the line above the
/// table) or a reader asks for least (the mean beside the percentiles).
const SPARE_FIRST: [&str; 7] = [
    "mean",
    "p90",
    "min",
    "unanswered",
    "responses",
    "req_bytes",
    "resp_bytes",
];

fn row_json(members: Vec<(&'static str, Json)>, row: &Row) -> Json {
    let mut m = Map::new();
    for (k, v) in members {
        m.insert(k.into(), v);
    }
    m.insert("requests".into(), json!(row.requests));
    m.insert("responses".into(), json!(row.responses));
    m.insert(
        "errors".into(),
        Json::Object(
            row.errors
                .iter()
                .map(|(&code, &n)| (error_text(code), json!(n)))
                .collect(),
        ),
    );
    m.insert("request_bytes".into(), json!(row.request_bytes));
    m.insert("response_bytes".into(), json!(row.response_bytes));
    let latency = match row.latency.summary() {
        Some(s) => {
            json!({"min": s.min, "p50": s.p50, "p90": s.p90, "p99": s.p99, "max": s.max, "mean": s.mean})
        }
        None => {
            json!({"min": null, "p50": null, "p90": null, "p99": null, "max": null, "mean": null})
        }
    };
    m.insert("latency_us".into(), latency);
    Json::Object(m)
}

fn row_cells(row: &Row) -> Vec<String> {
    let mut cells = number_cells(row);
    cells.push(errors_cell(row));
    cells
}

/// A row's errors cell: each error code answered and how often
/// (`MEMBER_ID_REQUIRED=1 NOT_COORDINATOR=3`), or `-`.
pub(crate) fn errors_cell(row: &Row) -> String {
    let errors: Vec<String> = row
        .errors
        .iter()
        .map(|(&code, n)| format!("{}={n}", error_text(code)))
        .collect();
    if errors.is_empty() {
        "-".into()
    } else {
        errors.join(" ")
    }
}

/// A row's numbers under [`NUMBER_HEADS`]: counts, bytes, and latencies
/// with their unit (JSON keeps microseconds, `latency_us`).
pub(crate) fn number_cells(row: &Row) -> Vec<String> {
    let mut cells = vec![
        row.requests.to_string(),
        row.responses.to_string(),
        row.unanswered().to_string(),
        row.request_bytes.to_string(),
        row.response_bytes.to_string(),
    ];
    match row.latency.summary() {
        Some(s) => cells.extend(
            [s.min, s.p50, s.p90, s.p99, s.max]
                .map(crate::text::duration_us)
                .into_iter()
                .chain([crate::text::duration(s.mean / 1e6)]),
        ),
        None => cells.extend(std::iter::repeat_n("-".to_string(), 6)),
    }
    cells
}

/// An error code's name; a code kwire has no name for as its number.
pub(crate) fn error_text(code: i16) -> String {
    error_name(code).map_or_else(|| code.to_string(), str::to_string)
}

/// A capture's stats, and what reading it found.
pub struct Collected {
    pub stats: Stats,
    pub names: Names,
    pub reading: Reading,
    /// The conversation rules' findings (`analysis::diagnosis`) by API
    /// version and rule: how many, over the whole capture.
    pub findings: FindingCounts,
}

/// Findings counted by API version (none for findings about no API) and rule.
pub(crate) type FindingCounts = BTreeMap<(Option<(i16, i16)>, Rule), u64>;

/// The findings counted per API and rule, as text lines after the table.
pub fn findings_text(cat: &Catalogue, findings: &FindingCounts) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let mut out = String::from("\nfindings (kwire check tells them):\n");
    for ((api, rule), n) in findings {
        let api = match api {
            Some((k, v)) => format!(
                "{} v{v}",
                cat.api_name(*k)
                    .map_or_else(|| format!("api {k}"), sanitize)
            ),
            None => "(no API)".into(),
        };
        out += &format!(
            "  {api:<24} {:<8} {:<26} {n}\n",
            rule.severity().as_str(),
            rule.id()
        );
    }
    out
}

/// The findings counted per API and rule, as JSON rows.
pub fn findings_json(cat: &Catalogue, findings: &FindingCounts) -> Json {
    Json::Array(
        findings
            .iter()
            .map(|((api, rule), n)| {
                json!({
                    "api_key": api.map(|a| a.0),
                    "api_name": api.and_then(|a| cat.api_name(a.0)),
                    "api_version": api.map(|a| a.1),
                    "rule": rule.id(),
                    "severity": rule.severity().as_str(),
                    "count": n,
                })
            })
            .collect(),
    )
}

/// Adds up the exchanges that pass a filter.
struct Adder<'f> {
    stats: Stats,
    filter: &'f Filter,
}

impl Observer for Adder<'_> {
    type Mark = ();

    fn request(&mut self, _: &Exchange<'_>) {}

    fn complete(&mut self, ex: &Exchange<'_>, _: Option<()>) {
        if self.filter.decide(ex) == Some(true) {
            self.stats.add(ex);
        }
    }
}

/// Read a capture and add up its exchanges that pass `filter`, grouped by API
/// and version and by `groupings`. Memory: the requests in flight and the
/// groups' rows.
pub fn collect<R: std::io::Read>(
    cat: &Catalogue,
    release: Option<&str>,
    input: R,
    opts: &CaptureOptions,
    groupings: &[Grouping],
    filter: &Filter,
) -> Result<Collected, String> {
    let needs = Grouping::needs(groupings).union(filter.needs());
    let mut exchanges: Exchanges<'_, ()> = Exchanges::new(cat, release, needs);
    let mut adder = Adder {
        stats: Stats::new(groupings),
        filter,
    };
    // The conversation rules read the same walk (values-only tapes, no tree).
    let mut diagnosis = Diagnosis::new(cat, release);
    let (mut found, mut findings) = (Vec::new(), BTreeMap::new());
    let mut count = |found: &mut Vec<Finding>| {
        for f in found.drain(..) {
            let api = f.api_key.zip(f.api_version);
            *findings.entry((api, f.rule)).or_insert(0u64) += 1;
        }
    };
    let reading = read_capture(
        cat,
        input,
        opts,
        (&mut exchanges, &mut adder),
        filter.frame_conn(),
        |c| {
            match c {
                Captured::Frame(f) => diagnosis.frame(f, &mut found),
                Captured::Conn(e) => diagnosis.conn_event(e, &mut found),
                Captured::Skipped(_) | Captured::Tls(_) => {}
            }
            count(&mut found);
        },
    )?;
    diagnosis.finish(&mut found);
    count(&mut found);
    Ok(Collected {
        stats: adder.stats,
        names: exchanges.into_names(),
        reading,
        findings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(values: &[u64]) -> Summary {
        let mut l = Latencies::default();
        values.iter().for_each(|&v| l.add(v));
        l.summary().unwrap()
    }

    #[test]
    fn nearest_rank_takes_the_value_at_the_ceiling_of_q_times_n() {
        let s = summary(&(1..=10).map(|ms| ms * 1000).rev().collect::<Vec<_>>());
        assert_eq!(
            (s.min, s.p50, s.p90, s.p99, s.max, s.mean),
            (1000, 5000, 9000, 10000, 10000, 5500.0)
        );
        // 100 values: ranks 50, 90, 99 exactly.
        let s = summary(&(1..=100).collect::<Vec<_>>());
        assert_eq!((s.p50, s.p90, s.p99), (50, 90, 99));
        // One value is every percentile.
        let s = summary(&[7]);
        assert_eq!((s.min, s.p50, s.p90, s.p99, s.max), (7, 7, 7, 7, 7));
        // Repeated values: 3 × 1, 1 × 100 → rank 2 of 4 is 1, rank 4 is 100.
        let s = summary(&[1, 100, 1, 1]);
        assert_eq!((s.p50, s.p90, s.p99), (1, 100, 100));
        assert!(Latencies::default().summary().is_none());
    }
}
