//! Whole frames: header, body, and the int32 size prefix patched after encoding.

use super::fields::{EncodeError, FieldEncoder, RawValues};
use crate::decode::Direction;
use crate::protocol::headers::{request_header_version, response_header_version};
use crate::schema::{Catalogue, MessageKind, MessageSpec};
use serde_json::{Map, Value};

/// What identifies the message to encode.
#[derive(Clone, Debug)]
pub struct FrameSpec<'a> {
    pub direction: Direction,
    pub api_key: i16,
    pub version: i16,
    pub release: Option<&'a str>,
}

/// The message definition for a frame spec, or a clear error.
pub fn message_spec<'c>(
    cat: &'c Catalogue,
    fs: &FrameSpec,
) -> Result<&'c MessageSpec, EncodeError> {
    let kind = if fs.direction == Direction::Request {
        MessageKind::Request
    } else {
        MessageKind::Response
    };
    cat.message(kind, fs.api_key, fs.version, fs.release)
        .ok_or_else(|| EncodeError {
            path: String::new(),
            message: format!(
                "{} has no {} version {}; valid: {}",
                cat.api_name(fs.api_key).unwrap_or("the API"),
                kind.as_str(),
                fs.version,
                crate::decode::frame::compress_versions(
                    &cat.versions(kind, fs.api_key, fs.release)
                )
            ),
        })
}

/// Encode the body alone.
pub fn encode_body(
    spec: &MessageSpec,
    version: i16,
    body: &Map<String, Value>,
) -> Result<Vec<u8>, EncodeError> {
    let mut e = FieldEncoder::new(version, spec.is_flexible(version));
    e.write_struct(&spec.fields, body, "")?;
    Ok(e.w.buf)
}

/// Encode a whole frame. `header` holds RequestHeader/ResponseHeader fields by
/// schema name; missing ones default (api key and version come from `fs`).
pub fn encode_frame(
    cat: &Catalogue,
    fs: &FrameSpec,
    header: &Map<String, Value>,
    body: &Map<String, Value>,
) -> Result<Vec<u8>, EncodeError> {
    encode_frame_exact(cat, fs, header, body, &RawValues::default())
}

/// [`encode_frame`] with the contract's `_raw` entries: each names a field by
/// its path (`body.Topics[0].Name`) and gives its bytes on the wire, written
/// instead of the value when they agree with it. An entry that disagrees with
/// its field's value, or names no field that was encoded, is an error.
pub fn encode_frame_exact(
    cat: &Catalogue,
    fs: &FrameSpec,
    header: &Map<String, Value>,
    body: &Map<String, Value>,
    raw: &RawValues,
) -> Result<Vec<u8>, EncodeError> {
    let spec = message_spec(cat, fs)?;
    let (hname, hv) = match fs.direction {
        Direction::Request => ("RequestHeader", request_header_version(spec, fs.version)),
        Direction::Response => ("ResponseHeader", response_header_version(spec, fs.version)),
    };
    let hspec = cat.by_name(hname, hv, None).ok_or_else(|| EncodeError {
        path: "header".into(),
        message: format!("{hname} v{hv} is not in the catalogue"),
    })?;
    let mut header = header.clone();
    if fs.direction == Direction::Request {
        header.insert("RequestApiKey".into(), Value::from(fs.api_key));
        header.insert("RequestApiVersion".into(), Value::from(fs.version));
        if hv == 0 {
            header.remove("ClientId");
        }
    }
    let mut he = FieldEncoder::with_raw(hv, hspec.is_flexible(hv), raw, "");
    he.write_struct(&hspec.fields, &header, "header")?;
    let mut be = FieldEncoder::with_raw(fs.version, spec.is_flexible(fs.version), raw, "body.");
    be.write_struct(&spec.fields, body, "")
        .map_err(|e| EncodeError {
            path: if e.path.is_empty() {
                e.path
            } else {
                format!("body.{}", e.path)
            },
            message: e.message,
        })?;
    raw.check_all_used()?;
    let body = be.w.buf;
    let size = he.w.len() + body.len();
    let size = i32::try_from(size).map_err(|_| EncodeError {
        path: String::new(),
        message: "frame larger than 2 GiB".into(),
    })?;
    let mut out = Vec::with_capacity(4 + size as usize);
    out.extend_from_slice(&size.to_be_bytes());
    out.extend_from_slice(&he.w.buf);
    out.extend_from_slice(&body);
    Ok(out)
}

/// The header the seed pages use for examples: correlation id 0, empty client id.
pub fn example_header(direction: Direction) -> Map<String, Value> {
    let mut h = Map::new();
    h.insert("CorrelationId".into(), Value::from(0));
    if direction == Direction::Request {
        h.insert("ClientId".into(), Value::from(""));
    }
    h
}
