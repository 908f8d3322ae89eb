//! Which frames of a capture a command shows: by the frame's own header
//! (api, correlation id, connection, number) and, when the criteria need the
//! exchange (topic, client id, error, latency), by the exchange it belongs
//! to, decided when its response arrives (the request waits until then and
//! comes out just before it). Also the topic names a capture ties to topic
//! ids, for the notes of the frames shown.

use super::exchange::{learn_topic_ids, Exchange, Exchanges, Observer, TopicIdLearner};
use super::Filter as ExchangeFilter;
use crate::capture::{CaptureOptions, Captured, CapturedFrame};
use crate::decode::topic_ids::TopicIds;
use crate::schema::Catalogue;
use std::cell::RefCell;
use std::io::Read;

/// What a command selects.
#[derive(Default)]
pub struct FrameFilter {
    pub api: Option<i16>,
    pub correlation_id: Option<i32>,
    pub conn: Option<usize>,
    /// The frame's number in the capture.
    pub frame: Option<usize>,
    /// Criteria that need the frame's exchange (topic, client id, error, latency).
    pub exchanges: Option<ExchangeFilter>,
}

impl FrameFilter {
    /// Whether the selection names frames (skip notes are then counted, not shown).
    pub fn names_frames(&self) -> bool {
        self.api.is_some() || self.correlation_id.is_some() || self.frame.is_some() || self.exchanges.is_some()
    }

    /// Whether any selection was asked for.
    pub fn selects(&self) -> bool {
        self.names_frames() || self.conn.is_some()
    }

    /// Whether the frame's own header and place are selected.
    pub fn keeps(&self, f: &CapturedFrame) -> bool {
        self.api.is_none_or(|a| f.api_key == Some(a))
            && self.correlation_id.is_none_or(|c| f.correlation_id == Some(c))
            && self.conn.is_none_or(|c| f.conn == c)
            && self.frame.is_none_or(|n| f.index == n)
    }
}

/// What is kept with a request until its exchange is decided.
enum Mark {
    /// Shown when it came; its response follows it.
    Shown,
    /// Not selected, nor its response.
    Dropped,
    /// Waiting for its response to decide.
    Held(CapturedFrame),
}

/// Frames selected by their exchange, ready to show in the order decided: a
/// request held until its response decides comes out just before it.
struct Selector<'f> {
    filter: &'f ExchangeFilter,
    /// The frame being taken.
    current: Option<CapturedFrame>,
    ready: Vec<CapturedFrame>,
}

impl Observer for Selector<'_> {
    type Mark = Mark;

    fn request(&mut self, ex: &Exchange<'_>) -> Mark {
        let Some(f) = self.current.take() else {
            return Mark::Dropped;
        };
        match self.filter.decide(ex) {
            Some(true) => {
                self.ready.push(f);
                Mark::Shown
            }
            Some(false) => Mark::Dropped,
            None => Mark::Held(f),
        }
    }

    fn complete(&mut self, ex: &Exchange<'_>, mark: Option<Mark>) {
        // The frame being taken is this exchange's response, if it has one
        // (an unanswered request completes without).
        let response = if ex.response.is_some() { self.current.take() } else { None };
        match mark {
            Some(Mark::Shown) => self.ready.extend(response),
            Some(Mark::Dropped) => {}
            Some(Mark::Held(request)) => {
                if self.filter.decide(ex) == Some(true) {
                    self.ready.push(request);
                    self.ready.extend(response);
                }
            }
            None => {
                if self.filter.decide(ex) == Some(true) {
                    self.ready.extend(response);
                }
            }
        }
    }
}

/// The frames the selection keeps, handed on in order, and every skip and TLS note.
pub struct Selection<'c, 'f> {
    filter: &'f FrameFilter,
    exchanges: Option<(Exchanges<'c, Mark>, Selector<'f>)>,
    /// Frames handed on.
    shown: usize,
}

impl<'c, 'f> Selection<'c, 'f> {
    pub fn new(cat: &'c Catalogue, release: Option<&str>, filter: &'f FrameFilter) -> Self {
        let exchanges = filter.exchanges.as_ref().map(|x| (Exchanges::new(cat, release, x.needs()), Selector { filter: x, current: None, ready: Vec::new() }));
        Selection { filter, exchanges, shown: 0 }
    }

    /// Frames handed on so far.
    pub fn shown(&self) -> usize {
        self.shown
    }

    /// Take what the capture hands on: a note goes on at once, a frame when
    /// its exchange is decided. False when `each` asks to stop.
    pub fn take(&mut self, c: Captured, each: &mut impl FnMut(Captured) -> bool) -> bool {
        let f = match c {
            Captured::Frame(f) => f,
            Captured::Skipped(s) => {
                if let Some((tracker, _)) = &mut self.exchanges {
                    tracker.saw(s.timestamp);
                }
                return each(Captured::Skipped(s));
            }
            Captured::Tls(n) => {
                if let Some((tracker, _)) = &mut self.exchanges {
                    tracker.saw(n.timestamp);
                }
                return each(Captured::Tls(n));
            }
        };
        match &mut self.exchanges {
            None if self.filter.keeps(&f) => {
                self.shown += 1;
                each(Captured::Frame(f))
            }
            None => true,
            Some((tracker, selector)) => {
                selector.current = Some(f.clone());
                tracker.push(&f, selector);
                selector.current = None;
                self.hand_on(each)
            }
        }
    }

    /// The capture ended: requests still held are decided as never answered.
    pub fn finish(&mut self, each: &mut impl FnMut(Captured) -> bool) -> bool {
        if let Some((tracker, selector)) = &mut self.exchanges {
            tracker.finish(selector);
        }
        self.hand_on(each)
    }

    fn hand_on(&mut self, each: &mut impl FnMut(Captured) -> bool) -> bool {
        let Some((_, selector)) = &mut self.exchanges else {
            return true;
        };
        for f in selector.ready.drain(..) {
            if !self.filter.keeps(&f) {
                continue;
            }
            self.shown += 1;
            if !each(Captured::Frame(f)) {
                return false;
            }
        }
        true
    }
}

/// The topic names a capture ties to topic ids, for the notes on TopicId
/// fields. A capture that can be read twice is read first for them: only the
/// responses that tie names to ids are decoded (`TopicIdLearner`), so a name
/// learned late in the capture names the frames before it too. A stream is
/// read once and never held: the names tied so far name each frame.
pub struct TopicNames<'c> {
    /// From the first pass.
    whole: TopicIds,
    /// Learned as the capture goes (a stream).
    streaming: Option<RefCell<TopicIdLearner<'c>>>,
}

impl<'c> TopicNames<'c> {
    /// No names (views that show no notes).
    pub fn none() -> Self {
        TopicNames { whole: TopicIds::default(), streaming: None }
    }

    /// The names of the whole capture, read from `input` first.
    pub fn read_first(cat: &Catalogue, release: Option<&str>, input: impl Read, opts: &CaptureOptions) -> Self {
        TopicNames { whole: learn_topic_ids(cat, release, input, opts), streaming: None }
    }

    /// Names learned as the capture streams by ([`Self::learn`]).
    pub fn as_they_come(cat: &'c Catalogue, release: Option<&str>) -> Self {
        TopicNames { whole: TopicIds::default(), streaming: Some(RefCell::new(TopicIdLearner::new(cat, release))) }
    }

    /// Take a frame of the capture (every one, selected or not), before it is shown.
    pub fn learn(&self, c: &Captured) {
        if let (Some(l), Captured::Frame(f)) = (&self.streaming, c) {
            l.borrow_mut().push(f);
        }
    }

    /// The names for decoding the frame at hand (a shared map: dropped with the
    /// decode options, so that learning goes on in place).
    pub fn now(&self) -> TopicIds {
        match &self.streaming {
            Some(l) => l.borrow().topic_ids().clone(),
            None => self.whole.clone(),
        }
    }
}
