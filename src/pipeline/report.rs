//! The frames `kwire report` embeds for its frame viewer: each frame of the
//! exchanges kept, decoded and drawn as a figure under a heading that says
//! what it is, until the page's frame data is full.

use crate::analysis::report::{for_each_frame_of, ExchangeFacts};
use crate::capture::CaptureOptions;
use crate::decode::{decode_frame, DecodeOptions, Direction};
use crate::docs::Figure;
use crate::render::report::{api_text, FrameData, MAX_VIEW_BYTES};
use crate::schema::Catalogue;
use std::collections::{BTreeMap, BTreeSet};

/// What the frame viewer says above a frame.
struct FrameHeading {
    api: Option<(i16, i16)>,
    dir: Direction,
    conn: usize,
    bytes: usize,
    /// The frame's request or response.
    other: Option<usize>,
}

impl FrameHeading {
    fn text(&self, cat: &Catalogue, index: usize) -> String {
        let api = api_text(cat, self.api);
        let other = match (self.other, self.dir) {
            (Some(o), Direction::Request) => format!(" (its response: frame {o})"),
            (Some(o), Direction::Response) => format!(" (its request: frame {o})"),
            _ => String::new(),
        };
        format!(
            "Frame {index}: {api} {} on connection {}, {} bytes{other}",
            self.dir.as_str(),
            self.conn,
            self.bytes
        )
    }
}

/// The frames of `exchanges`, in capture order, read from the capture
/// `open` gives (opened only when some frame is small enough to embed),
/// each decoded and added to the page's frame data until it is full; what
/// was too large, or beyond the data's budget, is counted in it.
pub fn frame_views<R: std::io::Read>(
    cat: &Catalogue,
    release: Option<&str>,
    exchanges: &[ExchangeFacts],
    (open, opts): (impl FnOnce() -> Result<R, String>, &CaptureOptions),
) -> Result<FrameData, String> {
    let mut all: BTreeMap<usize, FrameHeading> = BTreeMap::new();
    for e in exchanges {
        for (f, dir, other) in [
            (e.request, Direction::Request, e.response),
            (e.response, Direction::Response, e.request),
        ] {
            if let Some(f) = f {
                all.insert(
                    f.index,
                    FrameHeading {
                        api: e.api,
                        dir,
                        conn: e.conn,
                        bytes: f.bytes,
                        other: other.map(|o| o.index),
                    },
                );
            }
        }
    }
    let mut frames = FrameData::default();
    frames.too_large = all.values().filter(|h| h.bytes > MAX_VIEW_BYTES).count();
    let wanted: BTreeSet<usize> = all
        .iter()
        .filter(|(_, h)| h.bytes <= MAX_VIEW_BYTES)
        .map(|(&i, _)| i)
        .collect();
    if wanted.is_empty() {
        return Ok(frames);
    }
    let base = DecodeOptions {
        release: release.map(str::to_string),
        ..Default::default()
    };
    for_each_frame_of(cat, open()?, opts, &wanted, |f| {
        if frames.full() {
            return false;
        }
        let mut o = DecodeOptions {
            direction: Some(f.direction),
            ..base.clone()
        };
        if f.direction == Direction::Response {
            o.api_key = f.api_key;
            o.api_version = f.api_version;
        }
        let frame = decode_frame(cat, f.bytes.clone(), 0, &o);
        let dir = f.direction.as_str();
        let header = frame
            .header_version
            .map_or(String::new(), |h| format!(", {dir} header v{h}"));
        let figure = Figure {
            caption: format!("{}{header}, {} bytes", frame.root.name, frame.bytes.len()),
            bytes: frame.bytes,
            root: frame.root,
            header_version: frame.header_version,
            error: frame.error.map(|e| e.to_string()),
            links: Vec::new(),
        };
        let heading = all
            .get(&f.index)
            .map_or_else(|| format!("Frame {}", f.index), |h| h.text(cat, f.index));
        frames.add(f.index, &heading, &figure)
    })?;
    frames.over_budget = wanted.len() - frames.len();
    Ok(frames)
}
