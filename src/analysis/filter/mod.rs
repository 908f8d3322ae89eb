//! Display filters: one expression language over the facts of an exchange
//! and every field of its frames, shared by `capture`, `stats`,
//! `inventory`, `report`, the proxy and the explorer. The command line's
//! words (`--api`, `--topic`, `--client-id`, `--conn`, `--error [NAME]`,
//! `--min-latency MS`) are shorthands, translated into the language
//! ([`Filter::from_words`]). The language is [`super::expr`]'s.
//!
//! The text is parsed once ([`syntax`]), compiled once against the
//! catalogue ([`compile`]: names to facts or to fields, values to what they
//! are compared as) and run on each frame's values tape ([`fields`]: each
//! message's tests laid over its plan once).
//!
//! What it means (the documentation site's page on the language says the same):
//! - An exchange is selected when its request or its response passes; facts
//!   of the exchange (api, version, conn, client_id, topic, error, latency,
//!   correlation_id) hold for both, `direction`, `size`, `frame` and
//!   `finding` are the frame's, and fields are the frame's own. `finding`
//!   reads [`RulesByFrame`], which the command gathers from the whole capture
//!   before it filters (`analysis::finding_filter::rules_by_frame`).
//! - A test of a field passes when some occurrence passes (an array's
//!   elements, a field of each struct of an array, a bare name anywhere):
//!   `ErrorCode != 0` is "some error code is not 0", and `not ErrorCode ==
//!   0` is "no error code is 0". A field alone passes when present, not null.
//! - Deciding waits for the response only while the answer depends on it:
//!   a request that passes is shown at once; one that cannot pass, and whose
//!   response cannot either (the fields tested are not in it), is dropped at once.

pub use super::expr::{compile, fields, syntax};

use super::exchange::{Exchange, Needs, Outcome, Topic};
use crate::protocol::error_codes::error_name;
use crate::schema::Catalogue;
use compile::{Expr, Fact, Node, Test, Value};
use fields::Passed;
use std::sync::Arc;
use syntax::{Op, SyntaxError};

/// A compiled filter (empty: selects everything).
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// The expression, as given (shorthands translated).
    text: String,
    expr: Option<Arc<Expr>>,
    /// For `finding`: the rules of the findings naming each frame, read from
    /// the whole capture before it is filtered ([`Filter::with_findings`]).
    findings: Option<Arc<RulesByFrame>>,
}

/// Frame number → a bit per rule (its place in `Rule::ALL`) of the findings naming it.
pub type RulesByFrame = foldhash::HashMap<usize, u64>;

impl PartialEq for Filter {
    fn eq(&self, other: &Filter) -> bool {
        self.text == other.text
    }
}

pub use compile::{error_code, error_code_by_name};

/// The command line's words, to be translated into the language.
#[derive(Clone, Debug, Default)]
pub struct Words {
    pub api: Option<i16>,
    pub topic: Option<String>,
    pub client_id: Option<String>,
    pub conn: Option<usize>,
    /// `--error`: any (`Some(None)`) or one code.
    pub error: Option<Option<i16>>,
    pub min_latency_us: Option<u64>,
}

impl Words {
    pub fn is_empty(&self) -> bool {
        self.api.is_none()
            && self.topic.is_none()
            && self.client_id.is_none()
            && self.conn.is_none()
            && self.error.is_none()
            && self.min_latency_us.is_none()
    }
}

/// A string as the language quotes it.
pub fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for b in text.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b' '..=b'~' => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

impl Filter {
    /// Parse and compile `text`; an empty text selects everything.
    pub fn parse(cat: &Catalogue, text: &str) -> Result<Filter, SyntaxError> {
        if text.trim().is_empty() {
            return Ok(Filter::default());
        }
        let ast = syntax::parse(text)?;
        let expr = compile::compile(cat, &ast)?;
        Ok(Filter {
            text: text.to_string(),
            expr: Some(Arc::new(expr)),
            findings: None,
        })
    }

    /// The words' expression, and `extra` (an expression given with them),
    /// all of which must hold.
    pub fn words_text(cat: &Catalogue, w: &Words, extra: Option<&str>) -> String {
        let mut t = Vec::new();
        if let Some(a) = w.api {
            t.push(format!(
                "api == {}",
                cat.api_name(a)
                    .map_or_else(|| a.to_string(), str::to_string)
            ));
        }
        if let Some(x) = &w.topic {
            t.push(format!("topic == {}", quoted(x)));
        }
        if let Some(x) = &w.client_id {
            t.push(format!("client_id == {}", quoted(x)));
        }
        if let Some(c) = w.conn {
            t.push(format!("conn == {c}"));
        }
        match w.error {
            Some(None) => t.push("error".into()),
            Some(Some(c)) => t.push(format!(
                "error == {}",
                error_name(c).map_or_else(|| c.to_string(), str::to_string)
            )),
            None => {}
        }
        if let Some(us) = w.min_latency_us {
            t.push(format!("latency >= {us}us"));
        }
        if let Some(e) = extra.filter(|e| !e.trim().is_empty()) {
            t.push(if t.is_empty() {
                e.to_string()
            } else {
                format!("({e})")
            });
        }
        t.join(" and ")
    }

    /// The filter of the command line's words (and an expression with them).
    pub fn from_words(
        cat: &Catalogue,
        w: &Words,
        extra: Option<&str>,
    ) -> Result<Filter, SyntaxError> {
        Filter::parse(cat, &Filter::words_text(cat, w, extra))
    }

    /// Only exchanges of API `api` (none: everything).
    pub fn api(cat: &Catalogue, api: Option<i16>) -> Filter {
        let words = Words {
            api,
            ..Words::default()
        };
        Filter::from_words(cat, &words, None).unwrap_or_default()
    }

    pub fn is_empty(&self) -> bool {
        self.expr.is_none()
    }

    /// Whether the expression tests `finding`: the findings of the whole
    /// capture are read before it selects ([`Filter::with_findings`]).
    pub fn needs_findings(&self) -> bool {
        self.expr
            .as_ref()
            .is_some_and(|e| e.facts.iter().any(|t| t.fact == Fact::Finding))
    }

    /// The filter, with the rules of the findings naming each frame.
    pub fn with_findings(self, rules: RulesByFrame) -> Filter {
        Filter {
            findings: Some(Arc::new(rules)),
            ..self
        }
    }

    /// The expression as given.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// What each name of the expression resolved to (`kwire filter EXPR`).
    pub fn explain(&self, cat: &Catalogue) -> String {
        self.expr
            .as_ref()
            .map_or_else(|| "selects everything".into(), |e| e.explain(cat))
    }

    /// What deciding needs read from the frames.
    pub fn needs(&self) -> Needs {
        let Some(e) = &self.expr else {
            return Needs::default();
        };
        let has = |f: Fact| e.facts.iter().any(|t| t.fact == f);
        Needs {
            client_id: has(Fact::ClientId),
            topics: has(Fact::Topic),
            errors: has(Fact::Error),
            fields: (!e.fields.is_empty()).then(|| e.clone()),
        }
    }

    /// The `api == K` and `conn == N` tests of the top-level `and`, and
    /// whether there is anything else.
    fn header_tests(&self) -> (Option<i16>, Option<usize>, bool) {
        fn walk(e: &Expr, n: &Node, out: &mut (Option<i16>, Option<usize>, bool)) {
            match n {
                Node::And(l, r) => {
                    walk(e, l, out);
                    walk(e, r, out);
                }
                Node::Fact(i) => match &e.facts[*i] {
                    compile::FactTest {
                        fact,
                        test: Test::Compare(Op::Eq, v),
                    } if v.len() == 1 => match (fact, v[0].int) {
                        (Fact::Api, Some(k)) if out.0.is_none() && i16::try_from(k).is_ok() => {
                            out.0 = i16::try_from(k).ok()
                        }
                        (Fact::Conn, Some(c)) if out.1.is_none() && usize::try_from(c).is_ok() => {
                            out.1 = usize::try_from(c).ok()
                        }
                        _ => out.2 = true,
                    },
                    _ => out.2 = true,
                },
                _ => out.2 = true,
            }
        }
        let mut out = (None, None, false);
        if let Some(e) = &self.expr {
            walk(e, &e.root, &mut out);
        }
        out
    }

    /// The API every selected frame has, when the expression says it in
    /// its top-level `and` (`api == Produce and …`).
    pub(crate) fn frame_api(&self) -> Option<i16> {
        self.header_tests().0
    }

    /// The connection every selected frame is on, likewise (`conn == 3 and …`).
    pub(crate) fn frame_conn(&self) -> Option<usize> {
        self.header_tests().1
    }

    /// Whether deciding takes more than a frame's own api and connection.
    pub(crate) fn needs_exchanges(&self) -> bool {
        self.header_tests().2
    }

    /// Whether connection `conn`'s open and close show as rows among the
    /// frames this filter selects: when it names no more than a connection
    /// (that one), as `capture --list` shows them.
    pub fn shows_conn_events(&self, conn: usize) -> bool {
        matches!(self.header_tests(), (None, c, false) if c.is_none_or(|c| c == conn))
    }

    /// Whether the exchange is selected; `None` while it depends on a
    /// response still to come.
    pub fn decide(&self, ex: &Exchange<'_>) -> Option<bool> {
        self.decide_on(ex)
    }

    /// [`Self::decide`] over anything that answers as an exchange does.
    pub(crate) fn decide_on(&self, s: &dyn Subject) -> Option<bool> {
        let Some(e) = &self.expr else {
            return Some(true);
        };
        let rules = self.findings.as_deref();
        let request = eval(e, &e.root, s, Side::Request, rules);
        let mut response = eval(e, &e.root, s, Side::Response, rules);
        // A response still to come may never come: whatever it would
        // pass, it has not passed yet (`direction == response` included).
        if matches!(s.frame(Side::Response), Frame::ToCome { .. }) {
            response = response.and(Tri::Maybe);
        }
        match request.or(response) {
            Tri::Yes => Some(true),
            Tri::No => Some(false),
            Tri::Maybe => None,
        }
    }
}

/// The facts a filter of records (`kwire records --filter`) can test: a
/// record's row knows its frame, not the frame's exchange.
const RECORD_FACTS: &[Fact] = &[
    Fact::Api,
    Fact::Direction,
    Fact::Conn,
    Fact::Topic,
    Fact::Frame,
];

/// One record as a filter of records sees it: where it came from and its parts.
pub(crate) struct RecordSubject<'a> {
    pub api: i16,
    pub conn: usize,
    pub frame: usize,
    pub side: Side,
    pub topic: Option<&'a Topic>,
    pub parts: &'a crate::decode::records::each::RecordParts<'a>,
}

impl Filter {
    /// Why this filter cannot select records, if it cannot: it tests a
    /// fact a record's row does not know, or a field other than a record's part.
    pub fn records_only(&self) -> Result<(), String> {
        let Some(e) = &self.expr else { return Ok(()) };
        if let Some(t) = e.facts.iter().find(|t| !RECORD_FACTS.contains(&t.fact)) {
            return Err(format!(
                "a filter of records tests record parts (record.key, record.value, record.headers.key, record.headers.value, record.offset, record.timestamp) and api, direction, conn, frame, topic; not {}",
                compile::fact_name(t.fact)
            ));
        }
        if e.fields
            .iter()
            .any(|t| !matches!(t.anchor, compile::Anchor::Record(_)))
        {
            return Err("a filter of records tests record parts and api, direction, conn, frame, topic; not fields of the frame (`kwire capture --filter` selects frames by them)".into());
        }
        Ok(())
    }

    /// Whether one record is selected ([`Self::records_only`] said yes).
    pub(crate) fn selects_record(&self, r: &RecordSubject<'_>) -> bool {
        let Some(e) = &self.expr else { return true };
        let mut passed: Passed = 0;
        for (i, t) in e.fields.iter().enumerate() {
            if let compile::Anchor::Record(part) = t.anchor {
                if fields::record_passes(&t.test, part, r.parts) {
                    passed |= 1 << i;
                }
            }
        }
        let one = OneFrame { r, passed };
        eval(e, &e.root, &one, r.side, None) == Tri::Yes
    }
}

/// A record's frame, alone: the side it is on, nothing of its exchange.
struct OneFrame<'a, 'r> {
    r: &'a RecordSubject<'r>,
    passed: Passed,
}

impl Subject for OneFrame<'_, '_> {
    fn api(&self) -> Option<(i16, i16)> {
        Some((self.r.api, -1))
    }
    fn conn(&self) -> usize {
        self.r.conn
    }
    fn correlation_id(&self) -> Option<i32> {
        None
    }
    fn client_id(&self) -> Option<Option<&[u8]>> {
        None
    }
    fn any_topic(&self, test: &mut dyn FnMut(&Topic) -> bool) -> bool {
        self.r.topic.is_some_and(test)
    }
    fn errors(&self) -> Option<&[i16]> {
        Some(&[])
    }
    fn latency(&self) -> Latency {
        Latency::Unknown
    }
    fn frame(&self, side: Side) -> Frame {
        match side == self.r.side {
            true => Frame::Here {
                index: self.r.frame,
                bytes: 0,
                passed: self.passed,
            },
            false => Frame::Absent,
        }
    }
}

/// One of an exchange's frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Request,
    Response,
}

/// What a side of an exchange is, as far as the tests go.
#[derive(Clone, Copy, Debug)]
pub enum Frame {
    /// No such frame, nor will there be.
    Absent,
    /// Still to come; `may` are the field tests it could pass.
    ToCome { may: Passed },
    /// Its number, its bytes (size prefix included) and the field tests it passed.
    Here {
        index: usize,
        bytes: usize,
        passed: Passed,
    },
}

/// The latency, as far as it is known.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Latency {
    ToCome,
    Answered(u64),
    /// Never answered: it waited this long.
    Waited(u64),
    /// A response without its request.
    Unknown,
}

/// What a filter asks of an exchange (as [`Exchange`] and the explorer's rows answer).
pub(crate) trait Subject {
    fn api(&self) -> Option<(i16, i16)>;
    fn conn(&self) -> usize;
    fn correlation_id(&self) -> Option<i32>;
    /// The request's client id (`Some(None)`: null); `None` without a request.
    fn client_id(&self) -> Option<Option<&[u8]>>;
    /// Whether some topic named passes `test`.
    fn any_topic(&self, test: &mut dyn FnMut(&Topic) -> bool) -> bool;
    /// The response's non-zero error codes; `None` while it is to come.
    fn errors(&self) -> Option<&[i16]>;
    fn latency(&self) -> Latency;
    fn frame(&self, side: Side) -> Frame;
    /// The topic name the capture tied to topic id `id`, if it did.
    fn id_name(&self, _id: &[u8; 16]) -> Option<&[u8]> {
        None
    }
    /// Whether the response may still come (topics it names are not known yet).
    fn awaiting(&self) -> bool {
        matches!(self.latency(), Latency::ToCome)
    }
}

impl Subject for Exchange<'_> {
    fn api(&self) -> Option<(i16, i16)> {
        self.api
    }
    fn conn(&self) -> usize {
        self.conn
    }
    fn correlation_id(&self) -> Option<i32> {
        self.correlation_id
    }
    fn client_id(&self) -> Option<Option<&[u8]>> {
        self.request?;
        Some(self.client_id.and_then(|c| self.names.client_id(c)))
    }
    fn any_topic(&self, test: &mut dyn FnMut(&Topic) -> bool) -> bool {
        self.topics
            .iter()
            .any(|&t| self.names.topic(t).is_some_and(&mut *test))
    }
    fn id_name(&self, id: &[u8; 16]) -> Option<&[u8]> {
        self.names.id_name(id)
    }
    fn errors(&self) -> Option<&[i16]> {
        (self.outcome != Outcome::Pending).then_some(self.errors)
    }
    fn latency(&self) -> Latency {
        match self.outcome {
            Outcome::Pending => Latency::ToCome,
            Outcome::Answered { latency_us } => Latency::Answered(latency_us),
            Outcome::Unanswered { waited_us } => Latency::Waited(waited_us),
            Outcome::Unmatched => Latency::Unknown,
        }
    }
    fn frame(&self, side: Side) -> Frame {
        let (at, passed) = match side {
            Side::Request => (self.request, self.tested.request),
            Side::Response => (self.response, self.tested.response),
        };
        match (at, side, self.outcome) {
            (Some(at), _, _) => Frame::Here {
                index: at.index,
                bytes: at.bytes,
                passed,
            },
            (None, Side::Response, Outcome::Pending) => Frame::ToCome {
                may: self.tested.response_may,
            },
            (None, _, _) => Frame::Absent,
        }
    }
}

/// Kleene's three values: a test of what is still to come is `Maybe`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tri {
    No,
    Maybe,
    Yes,
}

impl Tri {
    fn of(b: bool) -> Tri {
        if b {
            Tri::Yes
        } else {
            Tri::No
        }
    }
    fn and(self, o: Tri) -> Tri {
        self.min(o)
    }
    fn or(self, o: Tri) -> Tri {
        self.max(o)
    }
    fn not(self) -> Tri {
        match self {
            Tri::No => Tri::Yes,
            Tri::Maybe => Tri::Maybe,
            Tri::Yes => Tri::No,
        }
    }
}

impl PartialOrd for Tri {
    fn partial_cmp(&self, o: &Tri) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

impl Ord for Tri {
    fn cmp(&self, o: &Tri) -> std::cmp::Ordering {
        (*self as u8).cmp(&(*o as u8))
    }
}

/// The expression on one side of the exchange: `No` when that frame is absent.
fn eval(e: &Expr, n: &Node, s: &dyn Subject, side: Side, rules: Option<&RulesByFrame>) -> Tri {
    let frame = s.frame(side);
    if matches!(frame, Frame::Absent) {
        return Tri::No;
    }
    let on = On {
        s,
        side,
        frame,
        rules,
    };
    eval_at(e, n, &on)
}

/// One side of an exchange as the expression sees it.
struct On<'a> {
    s: &'a dyn Subject,
    side: Side,
    frame: Frame,
    /// The rules of the findings that name each frame, when the filter tests them.
    rules: Option<&'a RulesByFrame>,
}

fn eval_at(e: &Expr, n: &Node, on: &On<'_>) -> Tri {
    match n {
        Node::And(l, r) => {
            let a = eval_at(e, l, on);
            if a == Tri::No {
                return a;
            }
            a.and(eval_at(e, r, on))
        }
        Node::Or(l, r) => {
            let a = eval_at(e, l, on);
            if a == Tri::Yes {
                return a;
            }
            a.or(eval_at(e, r, on))
        }
        Node::Not(x) => eval_at(e, x, on).not(),
        Node::Field(i) => match on.frame {
            Frame::Here { passed, .. } => Tri::of(passed & (1 << i) != 0),
            Frame::ToCome { may } if may & (1 << i) != 0 => Tri::Maybe,
            _ => Tri::No,
        },
        Node::Fact(i) => {
            let t = &e.facts[*i];
            fact(t.fact, &t.test, on)
        }
    }
}

/// An integer fact: `None` when the subject has none.
fn int_test(test: &Test, v: Option<i128>) -> bool {
    let Some(v) = v else { return false };
    match test {
        Test::Present => true,
        Test::Compare(op, values) => values
            .iter()
            .any(|w| fields::ordered(*op, w.int.map(|w| v.cmp(&w)))),
        Test::Contains(_) | Test::Matches(_) => false,
    }
}

fn text_test(test: &Test, v: &[u8]) -> bool {
    match test {
        Test::Present => true,
        Test::Compare(op, values) => values
            .iter()
            .any(|w: &Value| fields::ordered(*op, w.text.as_deref().map(|w| v.cmp(w)))),
        Test::Contains(needle) => memchr::memmem::find(v, needle).is_some(),
        Test::Matches(re) => re.is_match(v),
    }
}

fn fact(f: Fact, test: &Test, on: &On<'_>) -> Tri {
    let (s, side, frame) = (on.s, on.side, on.frame);
    let here = |pick: fn(usize, usize) -> usize| match frame {
        Frame::Here { index, bytes, .. } => Some(pick(index, bytes)),
        _ => None,
    };
    match f {
        Fact::Api => Tri::of(int_test(test, s.api().map(|a| a.0.into()))),
        Fact::Version => Tri::of(int_test(test, s.api().map(|a| a.1.into()))),
        Fact::Conn => Tri::of(int_test(test, Some(s.conn() as i128))),
        Fact::CorrelationId => Tri::of(int_test(test, s.correlation_id().map(i128::from))),
        Fact::Direction => Tri::of(int_test(test, Some(i128::from(side == Side::Response)))),
        Fact::Size | Fact::Frame => {
            if matches!(frame, Frame::ToCome { .. }) {
                return Tri::Maybe;
            }
            let v = if f == Fact::Size {
                here(|_, b| b)
            } else {
                here(|i, _| i)
            };
            Tri::of(int_test(test, v.map(|v| v as i128)))
        }
        Fact::Latency => match s.latency() {
            Latency::ToCome => Tri::Maybe,
            // A request never answered (the connection closed, or the capture
            // ended) has the time it waited for its latency, in every test:
            // `not latency > 20ms` and `latency <= 20ms` select the same.
            Latency::Answered(us) | Latency::Waited(us) => Tri::of(int_test(test, Some(us.into()))),
            Latency::Unknown => Tri::No,
        },
        Fact::ClientId => Tri::of(match s.client_id() {
            Some(Some(id)) => text_test(test, id),
            _ => false,
        }),
        Fact::Topic => {
            let hit = s.any_topic(&mut |t: &Topic| match (test, t) {
                (Test::Present, _) => true,
                // An id counts as either way Kafka prints it.
                (Test::Compare(Op::Eq | Op::In, values), _) => values.iter().any(|w| {
                    // An id the capture tied to a name is that name (the exchange holds the name).
                    let tied = match (t, &w.uuid) {
                        (Topic::Name(n), Some(id)) => s.id_name(id) == Some(&**n),
                        _ => false,
                    };
                    tied || w
                        .text
                        .as_deref()
                        .and_then(|w| std::str::from_utf8(w).ok())
                        .is_some_and(|w| t.is(w))
                }),
                (_, Topic::Name(n)) => text_test(test, n),
                (_, Topic::Id(_)) => text_test(test, t.text().as_bytes()),
            });
            if hit {
                Tri::Yes
            } else if s.awaiting() {
                Tri::Maybe
            } else {
                Tri::No
            }
        }
        Fact::Finding => match frame {
            Frame::Here { index, .. } => {
                let bits = on.rules.and_then(|r| r.get(&index)).copied().unwrap_or(0);
                Tri::of(match test {
                    Test::Present => bits != 0,
                    // Each rule that names the frame, by its place in `Rule::ALL`.
                    _ => (0..64)
                        .filter(|b| bits & (1 << b) != 0)
                        .any(|b| int_test(test, Some(b))),
                })
            }
            Frame::ToCome { .. } => Tri::Maybe,
            Frame::Absent => Tri::No,
        },
        Fact::Error => match s.errors() {
            None => Tri::Maybe,
            Some(codes) => Tri::of(match test {
                Test::Present => !codes.is_empty(),
                _ => codes.iter().any(|&c| int_test(test, Some(c.into()))),
            }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An exchange as the tests set it up.
    struct Fake {
        api: Option<(i16, i16)>,
        client_id: Option<Option<&'static [u8]>>,
        topics: Vec<Topic>,
        errors: Option<Vec<i16>>,
        latency: Latency,
        request: Frame,
        response: Frame,
    }

    impl Default for Fake {
        fn default() -> Fake {
            Fake {
                api: Some((0, 9)),
                client_id: Some(Some(b"app")),
                topics: Vec::new(),
                errors: None,
                latency: Latency::ToCome,
                request: Frame::Here {
                    index: 4,
                    bytes: 100,
                    passed: 0,
                },
                response: Frame::ToCome { may: 0 },
            }
        }
    }

    impl Subject for Fake {
        fn api(&self) -> Option<(i16, i16)> {
            self.api
        }
        fn conn(&self) -> usize {
            2
        }
        fn correlation_id(&self) -> Option<i32> {
            Some(7)
        }
        fn client_id(&self) -> Option<Option<&[u8]>> {
            self.client_id
        }
        fn any_topic(&self, test: &mut dyn FnMut(&Topic) -> bool) -> bool {
            self.topics.iter().any(test)
        }
        fn errors(&self) -> Option<&[i16]> {
            self.errors.as_deref()
        }
        fn latency(&self) -> Latency {
            self.latency
        }
        fn frame(&self, side: Side) -> Frame {
            match side {
                Side::Request => self.request,
                Side::Response => self.response,
            }
        }
    }

    fn filter(text: &str) -> Filter {
        Filter::parse(Catalogue::builtin(), text).unwrap_or_else(|e| panic!("{}", e.show(text)))
    }

    fn answered(passed: (Passed, Passed), errors: &[i16], latency_us: u64) -> Fake {
        Fake {
            errors: Some(errors.to_vec()),
            latency: Latency::Answered(latency_us),
            request: Frame::Here {
                index: 4,
                bytes: 100,
                passed: passed.0,
            },
            response: Frame::Here {
                index: 5,
                bytes: 60,
                passed: passed.1,
            },
            ..Fake::default()
        }
    }

    #[test]
    fn a_request_waits_only_while_its_response_could_decide() {
        let f = filter("ErrorCode != 0");
        // Produce's response has error codes: the request waits for it.
        let waiting = Fake {
            response: Frame::ToCome { may: 1 },
            ..Fake::default()
        };
        assert_eq!(f.decide_on(&waiting), None);
        // A response that cannot have the field: decided at once.
        assert_eq!(f.decide_on(&Fake::default()), Some(false));
        assert_eq!(f.decide_on(&answered((0, 1), &[6], 10)), Some(true));
        assert_eq!(f.decide_on(&answered((0, 0), &[], 10)), Some(false));
        // A request's own field decides at once.
        let g = filter("api == Fetch or Acks == -1");
        let passed_request = Fake {
            request: Frame::Here {
                index: 4,
                bytes: 100,
                passed: 1,
            },
            response: Frame::ToCome { may: 0 },
            ..Fake::default()
        };
        assert_eq!(g.decide_on(&passed_request), Some(true));
    }

    #[test]
    fn a_response_to_come_passes_nothing_yet() {
        // Its request is held, not shown: the response may never come.
        for text in [
            "direction == response",
            "not api == Fetch and direction == response",
        ] {
            assert_eq!(filter(text).decide_on(&Fake::default()), None, "{text}");
        }
        // Once unanswered, there is no response to pass.
        let unanswered = Fake {
            latency: Latency::Waited(5_000_000),
            response: Frame::Absent,
            ..Fake::default()
        };
        assert_eq!(
            filter("direction == response").decide_on(&unanswered),
            Some(false)
        );
        // The request alone can still decide at once.
        assert_eq!(
            filter("direction == request").decide_on(&Fake::default()),
            Some(true)
        );
    }

    #[test]
    fn facts_of_the_exchange_and_of_the_frame() {
        let ex = answered((0, 0), &[16, 79], 2500);
        for (text, want) in [
            ("api == Produce", true),
            ("api == \"Produce\"", true),
            ("direction == \"request\"", true),
            ("api == 0 and version == 9", true),
            ("api in {Fetch, Metadata}", false),
            ("version >= 10", false),
            ("conn == 2 and correlation_id == 7", true),
            ("error", true),
            ("error == NOT_COORDINATOR", true),
            ("error == 79", true),
            ("error == UNKNOWN_SERVER_ERROR", false),
            ("latency > 2ms and latency < 2.6ms", true),
            ("latency >= 2500us and latency <= 0.0025s", true),
            ("latency > 3", false),
            ("client_id == app", true),
            ("client_id matches \"^a.p$\"", true),
            ("client_id contains \"x\"", false),
            ("direction == response and size < 64", true),
            ("direction == request and size > 1KiB", false),
            ("frame == 5", true),
            ("not frame in {4, 5}", false),
            ("topic", false),
        ] {
            assert_eq!(filter(text).decide_on(&ex), Some(want), "{text}");
        }
    }

    #[test]
    fn never_answered_requests_have_the_time_they_waited_for_latency() {
        let ex = Fake {
            errors: Some(Vec::new()),
            latency: Latency::Waited(30_000),
            response: Frame::Absent,
            ..Fake::default()
        };
        for (text, want) in [
            ("latency > 20ms", true),
            ("latency < 20ms", false),
            ("latency == 30ms", true),
            ("latency", true),
            ("latency > 29ms and latency < 31ms", true),
            ("not latency > 31ms", true),
            ("latency <= 31ms", true),
        ] {
            assert_eq!(filter(text).decide_on(&ex), Some(want), "{text}");
        }
        assert_eq!(filter("direction == response").decide_on(&ex), Some(false));
        assert_eq!(filter("error").decide_on(&ex), Some(false));
    }

    #[test]
    fn topics_are_any_named_and_wait_for_the_response() {
        let id = [7u8; 16];
        let ex = Fake {
            topics: vec![Topic::Name((*b"orders").into()), Topic::Id(id)],
            ..Fake::default()
        };
        assert_eq!(filter("topic == orders").decide_on(&ex), Some(true));
        assert_eq!(filter("topic contains \"der\"").decide_on(&ex), Some(true));
        let kafka = crate::text::kafka_uuid_text(&id);
        assert_eq!(
            filter(&format!("topic == \"{kafka}\"")).decide_on(&ex),
            Some(true)
        );
        let hyphenated = crate::text::uuid_text(&id);
        assert_eq!(
            filter(&format!("topic == \"{hyphenated}\"")).decide_on(&ex),
            Some(true)
        );
        // Not named by the request: its response may name it.
        assert_eq!(filter("topic == payments").decide_on(&ex), None);
        let done = Fake {
            latency: Latency::Answered(1),
            errors: Some(Vec::new()),
            ..ex
        };
        assert_eq!(filter("topic == payments").decide_on(&done), Some(false));
    }

    #[test]
    fn not_of_what_is_to_come_is_still_to_come() {
        let waiting = Fake {
            response: Frame::ToCome { may: 1 },
            ..Fake::default()
        };
        // The request has no error code, so none is 0: it passes at once.
        assert_eq!(filter("not ErrorCode == 0").decide_on(&waiting), Some(true));
        assert_eq!(
            filter("not ErrorCode == 0 and direction == response").decide_on(&waiting),
            None
        );
        assert_eq!(filter("not error").decide_on(&waiting), None);
        // The request alone passes: no need to wait.
        assert_eq!(
            filter("not error or api == Produce").decide_on(&waiting),
            Some(true)
        );
    }

    #[test]
    fn words_translate_into_the_language() {
        let cat = Catalogue::builtin();
        let words = Words {
            api: Some(11),
            topic: Some("a \"b\"".into()),
            client_id: Some("c\u{1}".into()),
            conn: Some(3),
            error: Some(Some(79)),
            min_latency_us: Some(2500),
        };
        let text = Filter::words_text(cat, &words, Some("ErrorCode != 0 or x"));
        assert_eq!(
            text,
            "api == JoinGroup and topic == \"a \\\"b\\\"\" and client_id == \"c\\x01\" and conn == 3 and error == MEMBER_ID_REQUIRED and latency >= 2500us and (ErrorCode != 0 or x)"
        );
        let f = Filter::from_words(
            cat,
            &Words {
                conn: Some(3),
                ..Words::default()
            },
            None,
        )
        .unwrap();
        assert!(!f.needs_exchanges());
        assert_eq!((f.frame_api(), f.frame_conn()), (None, Some(3)));
        assert!(f.shows_conn_events(3) && !f.shows_conn_events(4));
        let g = filter("api == Produce and conn == 1 and ErrorCode");
        assert!(g.needs_exchanges());
        assert_eq!((g.frame_api(), g.frame_conn()), (Some(0), Some(1)));
        assert!(filter("api == Produce or conn == 1").frame_api().is_none());
    }

    #[test]
    fn values_are_read_as_the_name_takes_them() {
        let cat = Catalogue::builtin();
        let wrong = |text: &str| Filter::parse(cat, text).unwrap_err().message;
        assert!(wrong("latency > 5KiB").contains("latency takes us, ms or s"));
        assert!(wrong("size > 5ms").contains("size takes B"));
        assert!(wrong("direction == sideways").contains("request or response"));
        assert!(wrong("direction > request").contains("compared with == or !="));
        assert!(wrong("api contains \"x\"").contains("takes text"));
        assert!(wrong("ErrorCode contains \"x\"").contains("`contains` takes text"));
        assert!(wrong("ErrorCode == NOT_AN_ERROR").contains("cannot be compared"));
        assert!(wrong("ErrorCode == 5ms").contains("units go with latency"));
        assert!(wrong("ClientId matches \"(\"").contains("not a regular expression"));
        assert!(wrong("record.kez contains \"x\"").contains("a record's parts are record.key"));
        assert!(wrong("record.offset contains \"x\"").contains("`contains` takes text"));
        assert!(Filter::parse(cat, "record.key contains \"x\" or record.offset > 5").is_ok());
        assert!(wrong("body.Partitions.ErrorCode").contains("is at body."));
        assert!(wrong("Body.GroupId")
            .contains("no field of any message is at Body.GroupId; GroupId is at body."));
        assert!(wrong("GroupIdd")
            .contains("no field or fact is named GroupIdd; did you mean GroupId, GroupIds?"));
        // Error and API names, uuids both ways, bools.
        for ok in [
            "ErrorCode == COORDINATOR_NOT_AVAILABLE",
            "ApiKey == Produce",
            "TopicId == \"AAAAAAAAAAAAAAAAAAAAAA\"",
            "TopicId == \"00000000-0000-0000-0000-000000000000\"",
            "IsInternal == false",
            "GroupId == my-group",
        ] {
            assert!(Filter::parse(cat, ok).is_ok(), "{ok}");
        }
        assert_eq!(compile::parse_uuid("AAAAAAAAAAAAAAAAAAAAAA"), Some([0; 16]));
        let id = [0xfbu8; 16];
        assert_eq!(
            compile::parse_uuid(&crate::text::kafka_uuid_text(&id)),
            Some(id)
        );
        assert_eq!(compile::parse_uuid("AAAAAAAAAAAAAAAAAAAAAB"), None);
    }

    #[test]
    fn error_names_and_numbers_resolve() {
        assert_eq!(error_code("NOT_COORDINATOR"), Some(16));
        assert_eq!(error_code("not_coordinator"), Some(16));
        assert_eq!(error_code("16"), Some(16));
        assert_eq!(error_code("-1"), Some(-1));
        assert_eq!(error_code("NO_SUCH_ERROR"), None);
    }
}
