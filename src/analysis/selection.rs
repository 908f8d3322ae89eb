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
use crate::decode::Direction;
use crate::schema::{Catalogue, MessageKind};
use std::cell::{Cell, OnceCell, RefCell};
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
    /// What a display filter selects: the frame's own api and connection when
    /// the expression says them in its top-level `and`, the exchange for the rest.
    pub fn of(filter: &ExchangeFilter) -> FrameFilter {
        FrameFilter {
            api: filter.frame_api(),
            correlation_id: None,
            conn: filter.frame_conn(),
            frame: None,
            exchanges: filter.needs_exchanges().then(|| filter.clone()),
        }
    }

    /// Whether the selection names frames (skip notes are then counted, not shown).
    pub fn names_frames(&self) -> bool {
        self.api.is_some()
            || self.correlation_id.is_some()
            || self.frame.is_some()
            || self.exchanges.is_some()
    }

    /// Whether any selection was asked for.
    pub fn selects(&self) -> bool {
        self.names_frames() || self.conn.is_some()
    }

    /// Whether the frame's own header and place are selected.
    pub fn keeps(&self, f: &CapturedFrame) -> bool {
        self.api.is_none_or(|a| f.api_key == Some(a))
            && self
                .correlation_id
                .is_none_or(|c| f.correlation_id == Some(c))
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
struct Selector<'c, 'f> {
    filter: &'f ExchangeFilter,
    /// Requests held are cut to their header when over this many bytes
    /// ([`Selection::listing`]).
    cut_held: Option<(&'c Catalogue, usize, Option<String>)>,
    /// The frame being taken.
    current: Option<CapturedFrame>,
    ready: Vec<CapturedFrame>,
    /// The numbers of the requests held: every other frame taken is decided.
    held: std::collections::BTreeSet<usize>,
}

impl Observer for Selector<'_, '_> {
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
            None => Mark::Held({
                self.held.insert(f.index);
                match &self.cut_held {
                    Some((cat, above, release)) => {
                        crate::capture::cut_for_listing(cat, f, *above, release.as_deref())
                    }
                    None => f,
                }
            }),
        }
    }

    fn complete(&mut self, ex: &Exchange<'_>, mark: Option<Mark>) {
        // The frame being taken is this exchange's response, if it has one
        // (an unanswered request completes without).
        let response = if ex.response.is_some() {
            self.current.take()
        } else {
            None
        };
        match mark {
            Some(Mark::Shown) => self.ready.extend(response),
            Some(Mark::Dropped) => {}
            Some(Mark::Held(request)) => {
                self.held.remove(&request.index);
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
    exchanges: Option<(Exchanges<'c, Mark>, Selector<'c, 'f>)>,
    /// Frames handed on.
    shown: usize,
}

impl<'c, 'f> Selection<'c, 'f> {
    pub fn new(cat: &'c Catalogue, release: Option<&str>, filter: &'f FrameFilter) -> Self {
        let exchanges = filter.exchanges.as_ref().map(|x| {
            (
                Exchanges::new(cat, release, x.needs()),
                Selector {
                    filter: x,
                    cut_held: None,
                    current: None,
                    ready: Vec::new(),
                    held: Default::default(),
                },
            )
        });
        Selection {
            filter,
            exchanges,
            shown: 0,
        }
    }

    /// For a listing: a request held until its response decides keeps only
    /// a prefix holding its header when it is over `above` bytes, so that
    /// requests never answered (a capture's acks=0 producers, or responses
    /// it lost) cost their header, not their records.
    pub fn listing(mut self, cat: &'c Catalogue, above: usize, release: Option<&str>) -> Self {
        if let Some((_, selector)) = &mut self.exchanges {
            selector.cut_held = Some((cat, above, release.map(str::to_string)));
        }
        self
    }

    /// The first frame not decided yet: a request held for its response
    /// (`None`: every frame taken is decided).
    pub(crate) fn undecided_from(&self) -> Option<usize> {
        self.exchanges
            .as_ref()
            .and_then(|(_, s)| s.held.first().copied())
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
            // Shown like skip notes: when no frames are named, for the connection asked for.
            Captured::Conn(e) => {
                if let Some((tracker, _)) = &mut self.exchanges {
                    tracker.conn_event(&e);
                }
                if self.filter.names_frames() || self.filter.conn.is_some_and(|c| c != e.conn) {
                    return true;
                }
                return each(Captured::Conn(e));
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
/// learned late in the capture names the frames before it too. That first
/// reading waits for the first frame shown that can hold a topic id, so a
/// capture of messages without any is read once. A stream is read once and
/// never held: the names tied so far name each frame.
pub struct TopicNames<'c> {
    /// Fixed names (none: the views that show no notes).
    whole: TopicIds,
    /// Learned as the capture goes (a stream).
    streaming: Option<RefCell<TopicIdLearner<'c>>>,
    /// The first pass, read when a frame first needs its names.
    deferred: Option<Deferred<'c>>,
}

struct Deferred<'c> {
    cat: &'c Catalogue,
    release: Option<String>,
    /// Reads the whole capture for its names, with this release pinned
    /// (`None`: it could not be opened again).
    read: Box<ReadNames<'c>>,
    learned: OnceCell<TopicIds>,
    /// The last message asked about in each direction (requests and
    /// responses alternate) and whether it holds topic ids.
    last: [Cell<Option<(Message, bool)>>; 2],
}

/// Reads a capture for its names, a release pinned or not.
type ReadNames<'c> = dyn Fn(Option<&str>) -> Option<TopicIds> + 'c;

/// A message: its direction, api key and version.
type Message = (MessageKind, i16, i16);

impl<'c> TopicNames<'c> {
    /// No names (views that show no notes).
    pub fn none() -> Self {
        TopicNames {
            whole: TopicIds::default(),
            streaming: None,
            deferred: None,
        }
    }

    /// The names of the whole capture, read from what `open` gives when a
    /// frame first needs them ([`Self::for_frame`]).
    pub(crate) fn read_when_needed<R: Read + 'c>(
        cat: &'c Catalogue,
        release: Option<&str>,
        open: impl Fn() -> Option<R> + 'c,
        opts: &CaptureOptions,
    ) -> Self {
        let opts = opts.clone();
        let read = Box::new(move |pin: Option<&str>| {
            open().map(|input| learn_topic_ids(cat, pin, input, &opts))
        });
        let deferred = Deferred {
            cat,
            release: release.map(str::to_string),
            read,
            learned: OnceCell::new(),
            last: [Cell::new(None), Cell::new(None)],
        };
        TopicNames {
            whole: TopicIds::default(),
            streaming: None,
            deferred: Some(deferred),
        }
    }

    /// Names learned as the capture streams by ([`Self::learn`]).
    pub(crate) fn as_they_come(cat: &'c Catalogue, release: Option<&str>) -> Self {
        TopicNames {
            whole: TopicIds::default(),
            streaming: Some(RefCell::new(TopicIdLearner::new(cat, release))),
            deferred: None,
        }
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
        match (&self.streaming, &self.deferred) {
            (Some(l), _) => l.borrow().topic_ids().clone(),
            (None, Some(d)) => d
                .learned
                .get_or_init(|| (d.read)(d.release.as_deref()).unwrap_or_default())
                .clone(),
            (None, None) => self.whole.clone(),
        }
    }

    /// [`Self::now`] for frame `f`: no names for a frame whose message holds
    /// no topic id (the first pass is not read for it).
    pub fn for_frame(&self, f: &CapturedFrame) -> TopicIds {
        match &self.deferred {
            Some(d) if d.learned.get().is_none() && !d.may_hold_topic_ids(f) => TopicIds::default(),
            _ => self.now(),
        }
    }
}

impl Deferred<'_> {
    /// Whether `f`'s message can hold a topic id at its version (a frame
    /// whose message is not known yet, a response to be guessed, can).
    fn may_hold_topic_ids(&self, f: &CapturedFrame) -> bool {
        if f.kind.sasl_mechanism().is_some() {
            return false;
        }
        let kind = if f.direction == Direction::Request {
            MessageKind::Request
        } else {
            MessageKind::Response
        };
        let (Some(key), Some(version)) = (f.api_key, f.api_version) else {
            return true;
        };
        let last = &self.last[usize::from(kind == MessageKind::Response)];
        match last.get() {
            Some((seen, holds)) if seen == (kind, key, version) => holds,
            _ => {
                let holds = self
                    .cat
                    .message(kind, key, version, self.release.as_deref())
                    .is_some_and(|spec| spec.plan(version).holds_topic_ids);
                last.set(Some(((kind, key, version), holds)));
                holds
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::FrameKind;

    fn frame(direction: Direction, api: Option<(i16, i16)>, kind: FrameKind) -> CapturedFrame {
        let addr = "127.0.0.1:9092".parse().unwrap();
        let (api_key, api_version) = (api.map(|a| a.0), api.map(|a| a.1));
        CapturedFrame {
            index: 0,
            timestamp: 0.0,
            conn: 0,
            from: addr,
            to: addr,
            direction,
            kind,
            bytes: Default::default(),
            correlation_id: Some(1),
            api_key,
            api_version,
            after_gap: false,
            comment: None,
            offset: 0,
            len: 0,
            repeats: None,
        }
    }

    #[test]
    fn a_capture_is_read_for_its_names_at_the_first_frame_that_can_hold_a_topic_id() {
        let cat = Catalogue::builtin();
        let opened = Cell::new(0);
        let open = || {
            opened.set(opened.get() + 1);
            None::<std::io::Empty>
        };
        let names = TopicNames::read_when_needed(cat, None, open, &CaptureOptions::default());
        let (request, response) = (Direction::Request, Direction::Response);
        let sasl = FrameKind::SaslToken {
            mechanism: crate::decode::SaslMechanism::named("PLAIN"),
        };
        // Produce v8, Fetch v12 (topics by name), Heartbeat, a SASL token: not read.
        for f in [
            frame(request, Some((0, 8)), FrameKind::Kafka),
            frame(response, Some((1, 12)), FrameKind::Kafka),
            frame(request, Some((12, 4)), FrameKind::Kafka),
            frame(request, None, sasl),
        ] {
            assert!(names.for_frame(&f).is_empty());
        }
        assert_eq!(opened.get(), 0);
        // Fetch v13 names topics by id: read, once.
        names.for_frame(&frame(response, Some((1, 13)), FrameKind::Kafka));
        names.for_frame(&frame(request, Some((1, 13)), FrameKind::Kafka));
        assert_eq!(opened.get(), 1);
        // A response whose request is not in the capture (to be guessed) may hold one.
        let guessed = TopicNames::read_when_needed(cat, None, open, &CaptureOptions::default());
        guessed.for_frame(&frame(response, None, FrameKind::Kafka));
        assert_eq!(opened.get(), 2);
    }
}
