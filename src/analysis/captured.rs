//! A captured frame decoded: a request by its own header, a response as the
//! message its paired request names (or, when asked, as the best guess among
//! every response that fits its bytes). A SASL token is never decoded.

use crate::capture::CapturedFrame;
use crate::decode::guess::guess_response;
use crate::decode::sasl::token_frame;
use crate::decode::{decode_frame, DecodeOptions, Direction, Frame, FrameKind};
use crate::schema::Catalogue;

/// Decode a captured frame with `base`'s options (budget, topic ids, values
/// only, header only); the note says how a response's API was chosen when
/// it was guessed, or that nothing names it.
pub fn decode_captured(
    cat: &Catalogue,
    release: Option<&str>,
    f: &CapturedFrame,
    guess: bool,
    base: DecodeOptions,
) -> (Frame, Option<String>) {
    if let FrameKind::SaslToken { mechanism } = &f.kind {
        let token = token_frame(f.bytes.clone(), 0, f.direction, mechanism.clone());
        return (token, None);
    }
    let mut opts = DecodeOptions {
        direction: Some(f.direction),
        release: release.map(str::to_string),
        ..base
    };
    let mut note = None;
    if f.direction == Direction::Response {
        match (f.api_key, f.api_version) {
            (Some(k), Some(v)) => {
                opts.api_key = Some(k);
                opts.api_version = Some(v);
            }
            _ if guess => {
                let ranked = guess_response(cat, &f.bytes, release);
                if let Some(best) = ranked.first() {
                    opts.api_key = Some(best.api_key);
                    opts.api_version = Some(best.version);
                    let top: Vec<String> = ranked
                        .iter()
                        .take(5)
                        .map(|g| {
                            format!(
                                "{} v{} ({} warnings)",
                                cat.api_name(g.api_key).unwrap_or("?"),
                                g.version,
                                g.warnings
                            )
                        })
                        .collect();
                    note = Some(format!(
                        "guessed among {} candidates: {}",
                        ranked.len(),
                        top.join(", ")
                    ));
                }
            }
            _ => {
                note =
                    Some("no request with this correlation id in the capture (try --guess)".into())
            }
        }
    }
    (decode_frame(cat, f.bytes.clone(), 0, &opts), note)
}

/// A captured frame's bytes as every view shows them: with its credentials
/// masked, when secrets are hidden and it may hold one (`None` when nothing
/// was masked). Written pcaps and display filters take these, so that
/// neither carries nor probes what the views mask.
pub(crate) fn shown_bytes(
    cat: &Catalogue,
    release: Option<&str>,
    f: &CapturedFrame,
) -> Option<bytes::Bytes> {
    if !crate::decode::secrets::hiding() {
        return None;
    }
    let may_hold = crate::decode::secrets::may_hold_bytes(
        &f.kind,
        f.direction,
        f.api_key.zip(f.api_version),
        &f.bytes,
        |kind, k, v| cat.message(kind, k, v, release),
    );
    if !may_hold {
        return None;
    }
    let (shown, _) = decode_captured(cat, release, f, false, DecodeOptions::default());
    (shown.bytes.len() == f.bytes.len() && shown.bytes != f.bytes).then_some(shown.bytes)
}
