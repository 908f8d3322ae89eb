//! A lone response names neither its API nor its version: try every one and
//! rank those under which the bytes parse cleanly to the end.

use super::fields::for_each_element;
use super::frame::{decode_frame, DecodeOptions, DEFER_ELEMENTS_OVER, DEFER_RECORDS_OVER};
use super::problem::{Warning, WarningKind};
use super::records::deferred::{for_each_item, Hold};
use super::tree::{Deferred, Direction, Frame, Node};
use crate::budget::Budget;
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;
use std::convert::Infallible;

/// Frames of one input tried as responses at most (each try decodes the
/// frame under every response schema).
pub const MAX_GUESSED: usize = 16;

/// A frame taken for a request whose reading failed after its size prefix
/// (a bad size is no frame at all, and is reported as it is): it may be a
/// response.
pub(crate) fn not_a_request(f: &Frame) -> bool {
    f.direction == Direction::Request && f.error.as_ref().is_some_and(|e| e.offset >= 4)
}

/// A frame that did not read as a request, read as the response it fits best.
#[derive(Debug)]
pub(crate) struct AsResponse {
    /// Decoded as the best-ranked response, with a `Guessed` warning first.
    pub frame: Frame,
    /// How many responses it fits.
    pub fits: usize,
    /// The best five, as `Name vN`.
    pub best: Vec<String>,
}

/// `f` decoded as the best-ranked response it parses cleanly as; `None` when
/// it parses as none.
pub(crate) fn as_guessed_response(
    cat: &Catalogue,
    release: Option<&str>,
    f: &Frame,
    opts: &DecodeOptions,
) -> Option<AsResponse> {
    let ranked = guess_response(cat, &f.bytes, release);
    let chosen = ranked.first()?;
    let name = |k: i16| cat.api_name(k).unwrap_or("?");
    let best: Vec<String> = ranked
        .iter()
        .take(5)
        .map(|g| format!("{} v{}", name(g.api_key), g.version))
        .collect();
    let as_response = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(chosen.api_key),
        api_version: Some(chosen.version),
        ..opts.clone()
    };
    let mut frame = decode_frame(cat, f.bytes.clone(), f.input_offset, &as_response);
    // Records fields left for later count their warnings' places from the
    // frame's list: one more warning goes before them.
    super::tree::shift_deferred(&mut frame.root, (1, 0));
    for d in &mut frame.deferred {
        d.warnings_at += 1;
    }
    frame.warnings.insert(
        0,
        Warning::new(
            WarningKind::Guessed,
            None,
            format!(
                "not a request: decoded as the best-ranked response of {} that fit ({})",
                ranked.len(),
                best.join(", ")
            ),
        ),
    );
    Some(AsResponse {
        frame,
        fits: ranked.len(),
        best,
    })
}

/// Frames taken for requests because nothing said otherwise (`decode` and
/// `check` of hex or binary frames): each that does not read as a request
/// (the first [`MAX_GUESSED`]) is tried as every response and replaced by
/// the one it fits best, never shown or checked as a made-up request.
/// Either way a line says so to `say`; each frame read again is handed to
/// `then`.
pub fn reread_as_responses(
    cat: &Catalogue,
    release: Option<&str>,
    frames: &mut [Frame],
    (opts, then): (&DecodeOptions, &mut dyn FnMut(&mut Frame)),
    say: &mut dyn FnMut(&str),
) {
    for f in frames
        .iter_mut()
        .filter(|f| not_a_request(f))
        .take(MAX_GUESSED)
    {
        let why = crate::text::escape::sanitize(
            &f.error.as_ref().map(|e| e.to_string()).unwrap_or_default(),
        );
        let at = f.input_offset;
        let Some(guessed) = as_guessed_response(cat, release, f, opts) else {
            say(&format!("frame at input offset {at} does not decode as a request ({why}); if it is a response, give --response --api NAME --version N"));
            continue;
        };
        say(&format!(
            "frame at input offset {at} does not decode as a request ({why}); it reads as a response: taken for {}, the best of {} that fit ({}); --response --api NAME --version N reads it as another",
            guessed.best[0],
            guessed.fits,
            guessed.best.join(", ")
        ));
        *f = guessed.frame;
        then(f);
    }
}

#[derive(Clone, Debug)]
pub struct Guess {
    pub api_key: i16,
    pub version: i16,
    pub warnings: usize,
    /// Nodes decoded: more structure explained ranks higher.
    pub nodes: usize,
}

/// Every (api, version) under which `frame` decodes as a response without error,
/// best first: fewest warnings, then most structure, then newest version.
/// Each is decoded as a view that draws as it goes decodes it (large
/// records fields and arrays left for drawing), and what was left is
/// walked a piece at a time to count: a response of 200,000 partitions
/// tried as every Metadata version is never held whole.
pub fn guess_response(cat: &Catalogue, frame: &Bytes, release: Option<&str>) -> Vec<Guess> {
    let mut out = Vec::new();
    for key in cat.api_keys() {
        for version in cat.versions(MessageKind::Response, key, release) {
            let opts = DecodeOptions {
                direction: Some(Direction::Response),
                api_key: Some(key),
                api_version: Some(version),
                release: release.map(str::to_string),
                defer_records_over: Some(DEFER_RECORDS_OVER),
                defer_elements_over: Some(DEFER_ELEMENTS_OVER),
                defer_record_arrays: true,
                fits_only: true,
                ..Default::default()
            };
            let f = decode_frame(cat, frame.clone(), 0, &opts);
            if f.error.is_none() {
                let whole = Whole::of(cat, &f, &opts.budget);
                out.push(Guess {
                    api_key: key,
                    version: f.api_version.unwrap_or(version),
                    warnings: f.warnings.len() + whole.record_warnings,
                    nodes: whole.nodes,
                });
            }
        }
    }
    out.sort_by_key(|g| {
        (
            g.warnings,
            std::cmp::Reverse(g.nodes),
            std::cmp::Reverse(g.version),
            g.api_key,
        )
    });
    out.dedup_by_key(|g| (g.api_key, g.version));
    out
}

/// What a frame's whole tree holds, counted where its decode left parts
/// for drawing by walking them a piece at a time, as the views draw them.
#[derive(Debug, Default, PartialEq, Eq)]
struct Whole {
    nodes: usize,
    /// The warnings of records fields left for drawing, which the frame's
    /// warnings lack until they are walked (a left array's elements' are
    /// the frame's already).
    record_warnings: usize,
}

impl Whole {
    fn of(cat: &Catalogue, f: &Frame, budget: &Budget) -> Whole {
        let mut whole = Whole::default();
        whole.count(cat, (&f.bytes, budget), std::slice::from_ref(&f.root));
        whole
    }

    fn count(&mut self, cat: &Catalogue, (bytes, budget): (&Bytes, &Budget), nodes: &[Node]) {
        for n in nodes {
            self.nodes += 1;
            match n.deferred() {
                Some(Deferred::Records(d)) => {
                    // Held as the whole tree holds them, for its warnings.
                    let held = (budget, Hold::ByFrame);
                    let Ok(found) = for_each_item(cat, bytes, d, held, |items, _| {
                        self.count(cat, (bytes, budget), items);
                        Ok::<(), Infallible>(())
                    });
                    self.record_warnings += found.warnings.len();
                }
                Some(Deferred::Elements(d)) => {
                    let Ok(()) = for_each_element(cat, bytes, d, |elements, _| {
                        self.count(cat, (bytes, budget), elements);
                        Ok::<(), Infallible>(())
                    });
                }
                None => {}
            }
            self.count(cat, (bytes, budget), &n.children);
        }
    }
}
