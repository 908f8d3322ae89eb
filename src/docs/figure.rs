//! Figures: kwire encodes a message, then decodes the bytes it wrote, so every
//! grid and tree on a page is the decoder's own view of real bytes.

use super::Figure;
use crate::decode::fields::decode_embedded;
use crate::decode::{decode_frame, DecodeOptions, Direction, Node, Region, Role};
use crate::encode::example::{example_frame, smallest_struct};
use crate::encode::{encode_body, FrameSpec};
use crate::schema::{Catalogue, MessageSpec};
use bytes::Bytes;
use serde_json::{Map, Value};

/// The smallest legal instance of one direction of an API at `version`, as a frame.
pub fn frame_figure(cat: &Catalogue, direction: Direction, api_key: i16, version: i16, release: Option<&str>) -> Figure {
    let fs = FrameSpec { direction, api_key, version, release };
    let bytes = match example_frame(cat, &fs) {
        Ok(b) => Bytes::from(b),
        Err(e) => return failed(format!("{} v{version}", direction.as_str()), e),
    };
    let opts = DecodeOptions { direction: Some(direction), api_key: Some(api_key), api_version: Some(version), release: release.map(str::to_string), ..Default::default() };
    let frame = decode_frame(cat, bytes, 0, &opts);
    let header = frame.header_version.map_or(String::new(), |h| format!(", {} header v{h}", direction.as_str()));
    Figure {
        caption: format!("{} v{version}{header}, {} bytes on the wire", frame.root.name, frame.bytes.len()),
        bytes: frame.bytes,
        root: frame.root,
        header_version: frame.header_version,
        error: frame.error.map(|e| e.to_string()),
    }
}

/// A struct (a record key or value, a header, a data type) encoded alone: the
/// smallest instance with `values` laid over it (fields absent at `version` are skipped).
pub fn struct_figure(cat: &Catalogue, spec: &MessageSpec, version: i16, values: &Map<String, Value>, region: Region) -> Figure {
    let mut body = smallest_struct(&spec.fields, version);
    for (k, v) in values {
        if spec.fields.iter().any(|f| &f.name == k && f.versions.contains(version)) {
            body.insert(k.clone(), v.clone());
        }
    }
    let bytes = match encode_body(spec, version, &body) {
        Ok(b) => Bytes::from(b),
        Err(e) => return failed(format!("{} v{version}", spec.name), e.to_string()),
    };
    let caption = format!("{} v{version}, {} bytes", spec.name, bytes.len());
    match decode_embedded(cat, &bytes, spec, version, (0, bytes.len()), region) {
        Ok((root, warnings)) => Figure { caption, bytes, root, header_version: None, error: (!warnings.is_empty()).then(|| warnings.join("; ")) },
        Err(failed) => {
            let (root, e) = *failed;
            Figure { caption, bytes, root, header_version: None, error: Some(e.to_string()) }
        }
    }
}

/// A figure that could not be made: no bytes, and the reason.
pub fn failed(caption: String, error: String) -> Figure {
    Figure { caption, bytes: Bytes::new(), root: Node::new("(not encoded)", "", 0, Region::Frame, Role::Structure), header_version: None, error: Some(error) }
}
