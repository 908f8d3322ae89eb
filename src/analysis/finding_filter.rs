//! `kwire check --filter`: the findings about the frames a display filter
//! selects. The capture goes through the same [`Selection`] as
//! `capture --list`, in the same pass as the checks; a finding is kept when
//! some frame it names is selected, and is decided once every frame it names
//! is (a request waits for its response, as the listing's does). A finding
//! that names no frame (bytes in no frame, TLS notes) is kept when the filter
//! names no frames, as the listing shows its notes.
//!
//! Memory: a bit per frame for "selected", and the findings still waiting
//! on a request held for its response.
//!
//! Also the other way round: a display filter's `finding` fact reads the
//! rules of the findings naming each frame ([`rules_by_frame`]), gathered
//! from a whole reading of the capture before the filter selects.

use super::filter::RulesByFrame;
use super::finding::Finding;
use super::selection::{FrameFilter, Selection};
use crate::capture::{CaptureOptions, Captured};
use crate::decode::DecodeOptions;
use crate::schema::Catalogue;

/// Note the rule of `f` on every frame it names.
pub(crate) fn note_rules(rules: &mut RulesByFrame, f: &Finding) {
    for &i in &f.frames {
        *rules.entry(i).or_default() |= 1 << f.rule.bit();
    }
}

/// Check a whole capture (as `kwire check` does) for the rules of the
/// findings naming each frame. A finding names at most
/// [`super::finding::MAX_FRAMES_NAMED`] frames: a longer loop's later frames
/// are not marked.
pub fn rules_by_frame<R: std::io::Read>(
    cat: &Catalogue,
    opts: DecodeOptions,
    input: R,
    capture: &CaptureOptions,
) -> Result<RulesByFrame, String> {
    let mut checker = super::check::Checker::new(cat, opts);
    let (mut rules, mut found) = (RulesByFrame::default(), Vec::new());
    crate::capture::for_each_captured(cat, input, capture, |c| {
        checker.take(&c, &mut found);
        found.drain(..).for_each(|f| note_rules(&mut rules, &f));
        true
    })?;
    checker.finish(&mut found);
    found.drain(..).for_each(|f| note_rules(&mut rules, &f));
    Ok(rules)
}

pub(crate) struct FindingFilter<'c, 'f> {
    selection: Selection<'c, 'f>,
    filter: &'f FrameFilter,
    /// Bit `i`: frame `i` was selected.
    selected: Vec<u64>,
    /// The highest frame number taken so far.
    taken: Option<usize>,
    /// The capture ended: every frame is decided.
    ended: bool,
    waiting: Vec<Finding>,
    /// The first undecided frame, and whether the capture had ended, when
    /// `waiting` was last looked through.
    looked_at: (Option<usize>, bool),
}

impl<'c, 'f> FindingFilter<'c, 'f> {
    pub fn new(selection: Selection<'c, 'f>, filter: &'f FrameFilter) -> Self {
        FindingFilter {
            selection,
            filter,
            selected: Vec::new(),
            taken: None,
            ended: false,
            waiting: Vec::new(),
            looked_at: (None, false),
        }
    }

    /// Take what the capture hands on, after the checks have seen it.
    pub fn take(&mut self, c: Captured) {
        if let Captured::Frame(f) = &c {
            self.taken = self.taken.max(Some(f.index));
        }
        let selected = &mut self.selected;
        self.selection.take(c, &mut |shown| {
            if let Captured::Frame(f) = shown {
                mark(selected, f.index);
            }
            true
        });
    }

    /// The capture ended: requests still held are decided as never answered.
    pub fn finish(&mut self) {
        let selected = &mut self.selected;
        self.selection.finish(&mut |shown| {
            if let Captured::Frame(f) = shown {
                mark(selected, f.index);
            }
            true
        });
        self.ended = true;
    }

    /// Move the findings of `found` that are selected into `kept`, in the
    /// order found; those not decided yet wait, and go with a later call.
    pub(crate) fn sift(&mut self, found: &mut Vec<Finding>, kept: &mut Vec<Finding>) {
        let now = (self.selection.undecided_from(), self.ended);
        if now != self.looked_at && !self.waiting.is_empty() {
            let waiting = std::mem::take(&mut self.waiting);
            self.looked_at = now;
            self.sort(waiting, kept);
        }
        let found = std::mem::take(found);
        self.sort(found, kept);
    }

    fn sort(&mut self, findings: Vec<Finding>, kept: &mut Vec<Finding>) {
        for f in findings {
            match self.decide(&f) {
                Some(true) => kept.push(f),
                Some(false) => {}
                None => self.waiting.push(f),
            }
        }
    }

    /// Whether a finding is selected; `None` while a frame it names is not decided.
    fn decide(&self, f: &Finding) -> Option<bool> {
        if f.frames.is_empty() {
            return Some(
                !self.filter.names_frames() && self.filter.conn.is_none_or(|c| f.conn == Some(c)),
            );
        }
        if f.frames.iter().any(|&i| is_marked(&self.selected, i)) {
            return Some(true);
        }
        if self.ended {
            return Some(false);
        }
        let frontier = self.selection.undecided_from();
        let decided =
            |i: usize| self.taken.is_some_and(|t| i <= t) && frontier.is_none_or(|u| i < u);
        // Frames at or past the first held request may still be shown with it
        // (a held request's own number is never decided before its exchange).
        f.frames.iter().all(|&i| decided(i)).then_some(false)
    }
}

fn mark(bits: &mut Vec<u64>, i: usize) {
    let word = i / 64;
    if bits.len() <= word {
        bits.resize(word + 1, 0);
    }
    bits[word] |= 1 << (i % 64);
}

fn is_marked(bits: &[u64], i: usize) -> bool {
    bits.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}
