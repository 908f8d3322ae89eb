//! What `kwire check` runs on a capture (and `proxy --check` on live
//! traffic): every finding about its frames and conversations, decided as
//! the capture is read, with a display filter's selection of the frames
//! they are about.

use crate::analysis::check::Checker;
use crate::analysis::finding::Finding;
use crate::analysis::finding_filter::FindingFilter;
use crate::analysis::selection::{FrameFilter, Selection};
use crate::capture::read_ahead::for_each_captured_ahead;
use crate::capture::{for_each_captured, CaptureOptions, CaptureStats};
use crate::decode::DecodeOptions;
use crate::schema::Catalogue;

/// What checking a capture went through.
#[derive(Debug)]
pub struct Checked {
    /// Frames checked.
    pub frames: usize,
    /// The capture read to its end (with what it held), or why it was not.
    pub read: Result<CaptureStats, String>,
}

/// How a capture is read and checked.
pub struct Options<'f> {
    /// How each frame is decoded (the release, the budget).
    pub decode: DecodeOptions,
    pub capture: CaptureOptions,
    /// Read on a thread of its own while the findings are decided (a file;
    /// never a stream, which could keep that thread waiting after the output
    /// stopped).
    pub read_ahead: bool,
    /// Only findings about the frames this selects, decided as `capture`
    /// selects them (a finding waits until its frame is decided).
    pub filter: Option<&'f FrameFilter>,
}

/// Every finding about the capture `input`, handed to `show` as they are
/// decided (it takes them from the list); the findings about whole
/// conversations come when the reading ends, however it ends. An error
/// from `show` (a closed output) stops the reading and is returned.
pub fn check_capture(
    cat: &Catalogue,
    release: Option<&str>,
    input: super::capture::Input,
    options: Options<'_>,
    show: &mut dyn FnMut(&mut Vec<Finding>) -> std::io::Result<()>,
) -> std::io::Result<Checked> {
    let mut checker = Checker::new(cat, options.decode);
    // Frames the filter holds back are cut to their header: only numbers are kept.
    let mut sifted = options
        .filter
        .map(|f| FindingFilter::new(Selection::new(cat, release, f).listing(cat, 0, release), f));
    let (mut found, mut kept) = (Vec::new(), Vec::new());
    let mut failed = None;
    let mut each = |c| {
        checker.take(&c, &mut found);
        let shown = match &mut sifted {
            Some(s) => {
                s.take(c);
                s.sift(&mut found, &mut kept);
                &mut kept
            }
            None => &mut found,
        };
        match show(shown) {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    };
    let read = match options.read_ahead {
        true => for_each_captured_ahead(cat, input, &options.capture, &mut each),
        false => for_each_captured(cat, input, &options.capture, &mut each),
    };
    if let Some(e) = failed {
        return Err(e);
    }
    checker.finish(&mut found);
    if let Some(s) = &mut sifted {
        s.finish();
        s.sift(&mut found, &mut kept);
        found = std::mem::take(&mut kept);
    }
    show(&mut found)?;
    Ok(Checked {
        frames: checker.frames,
        read,
    })
}
