//! A lone response names neither its API nor its version: try every one and
//! rank those under which the bytes parse cleanly to the end.

use super::frame::{decode_frame, DecodeOptions};
use super::problem::{Warning, WarningKind};
use super::tree::{Direction, Frame};
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;

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
/// Either way a line says so to `say`.
pub fn reread_as_responses(
    cat: &Catalogue,
    release: Option<&str>,
    frames: &mut [Frame],
    opts: &DecodeOptions,
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
pub fn guess_response(cat: &Catalogue, frame: &Bytes, release: Option<&str>) -> Vec<Guess> {
    let mut out = Vec::new();
    for key in cat.api_keys() {
        for version in cat.versions(MessageKind::Response, key, release) {
            let opts = DecodeOptions {
                direction: Some(Direction::Response),
                api_key: Some(key),
                api_version: Some(version),
                release: release.map(str::to_string),
                ..Default::default()
            };
            let f = decode_frame(cat, frame.clone(), 0, &opts);
            if f.error.is_none() {
                out.push(Guess {
                    api_key: key,
                    version: f.api_version.unwrap_or(version),
                    warnings: f.warnings.len(),
                    nodes: count_nodes(&f),
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

fn count_nodes(f: &Frame) -> usize {
    let mut n = 0;
    f.root.walk(&mut |_, _| n += 1);
    n
}
