//! Figures: kwire encodes a message, then decodes the bytes it wrote, so every
//! grid and tree on a page is the decoder's own view of real bytes.

use super::{anchor, field_paths, Figure};
use crate::decode::fields::{decode_embedded, Context};
use crate::decode::records::BatchDecoder;
use crate::decode::{decode_frame, DecodeOptions, Direction, Node, Region, Role};
use crate::encode::example::smallest_struct;
use crate::encode::frame::{encode_frame, example_header, message_spec};
use crate::encode::realistic::{realistic_header, realistic_struct};
use crate::encode::{encode_body, FrameSpec};
use crate::schema::{Catalogue, FieldSpec, FieldType, MessageSpec, Primitive};
use bytes::Bytes;
use serde_json::{Map, Value};
use std::collections::HashSet;

/// Which instance a figure shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Instance {
    /// The smallest legal one ([`smallest_struct`]).
    Smallest,
    /// One with the values a real client or broker sends ([`realistic_struct`]).
    Realistic,
}

/// One direction of an API at `version` as a frame: the smallest instance,
/// with `records` (a record batch's bytes) in every records field.
pub fn frame_figure(
    cat: &Catalogue,
    direction: Direction,
    api_key: i16,
    version: i16,
    release: Option<&str>,
    records: &[u8],
) -> Figure {
    instance_figure(
        cat,
        direction,
        api_key,
        version,
        release,
        records,
        Instance::Smallest,
    )
}

/// [`frame_figure`] of either instance.
pub(crate) fn instance_figure(
    cat: &Catalogue,
    direction: Direction,
    api_key: i16,
    version: i16,
    release: Option<&str>,
    records: &[u8],
    instance: Instance,
) -> Figure {
    let fs = FrameSpec {
        direction,
        api_key,
        version,
        release,
    };
    let bytes = match example_with_records(cat, &fs, records, instance) {
        Ok(b) => Bytes::from(b),
        Err(e) => return failed(format!("{} v{version}", direction.as_str()), e),
    };
    let opts = DecodeOptions {
        direction: Some(direction),
        api_key: Some(api_key),
        api_version: Some(version),
        release: release.map(str::to_string),
        ..Default::default()
    };
    let frame = decode_frame(cat, bytes, 0, &opts);
    let header = frame.header_version.map_or(String::new(), |h| {
        format!(", {} header v{h}", direction.as_str())
    });
    Figure {
        caption: format!(
            "{} v{version}{header}, {} bytes on the wire",
            frame.root.name,
            frame.bytes.len()
        ),
        bytes: frame.bytes,
        root: frame.root,
        header_version: frame.header_version,
        error: frame.error.map(|e| e.to_string()),
        links: Vec::new(),
    }
}

fn example_with_records(
    cat: &Catalogue,
    fs: &FrameSpec,
    records: &[u8],
    instance: Instance,
) -> Result<Vec<u8>, String> {
    let spec = message_spec(cat, fs).map_err(|e| e.to_string())?;
    let mut header = example_header(fs.direction);
    let mut body = match instance {
        Instance::Smallest => smallest_struct(&spec.fields, fs.version),
        Instance::Realistic => {
            realistic_header(&mut header);
            realistic_struct(&spec.fields, fs.version)
        }
    };
    put_records(
        &spec.fields,
        fs.version,
        &mut body,
        &Value::String(hex::encode(records)),
    );
    encode_frame(cat, fs, &header, &body).map_err(|e| e.to_string())
}

/// Set every records field of `obj` (and of the structs in it) to `records`.
fn put_records(fields: &[FieldSpec], version: i16, obj: &mut Map<String, Value>, records: &Value) {
    for f in fields.iter().filter(|f| f.is_regular_in(version)) {
        match (&f.ty, obj.get_mut(&f.name)) {
            (FieldType::Primitive(Primitive::Records), Some(v)) => *v = records.clone(),
            (FieldType::Struct(_), Some(Value::Object(o))) => {
                put_records(&f.fields, version, o, records)
            }
            (FieldType::Array(_), Some(Value::Array(items))) => {
                for item in items {
                    if let Value::Object(o) = item {
                        put_records(&f.fields, version, o, records);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A struct (a record key or value, a header, a data type) encoded alone: the
/// smallest instance with `values` laid over it (fields absent at `version` are skipped).
pub(crate) fn struct_figure(
    cat: &Catalogue,
    spec: &MessageSpec,
    version: i16,
    values: &Map<String, Value>,
    region: Region,
) -> Figure {
    let mut body = smallest_struct(&spec.fields, version);
    for (k, v) in values {
        if spec
            .fields
            .iter()
            .any(|f| &f.name == k && f.versions.contains(version))
        {
            body.insert(k.clone(), v.clone());
        }
    }
    let bytes = match encode_body(spec, version, &body) {
        Ok(b) => Bytes::from(b),
        Err(e) => return failed(format!("{} v{version}", spec.name), e.to_string()),
    };
    let caption = format!("{} v{version}, {} bytes", spec.name, bytes.len());
    match decode_embedded(cat, &bytes, spec, version, (0, bytes.len()), region) {
        Ok((root, warnings)) => Figure {
            caption,
            bytes,
            root,
            header_version: None,
            error: (!warnings.is_empty()).then(|| {
                warnings
                    .iter()
                    .map(|w| w.text.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
            links: Vec::new(),
        },
        Err(failed) => {
            let (root, e) = *failed;
            Figure {
                caption,
                bytes,
                root,
                header_version: None,
                error: Some(e.to_string()),
                links: Vec::new(),
            }
        }
    }
}

/// Record data (batches or legacy messages, as in a records field or a log
/// segment) decoded by kwire's record decoder.
pub(crate) fn records_figure(cat: &Catalogue, caption: String, bytes: Vec<u8>) -> Figure {
    let bytes = Bytes::from(bytes);
    let ctx = Context::default();
    let mut decoder = BatchDecoder::new(&bytes, cat, &ctx);
    let mut root = Node::new(
        "records",
        "records",
        0,
        Region::RecordBatch,
        Role::Structure,
    );
    root.len = bytes.len();
    decoder.decode_stream(0, bytes.len(), &mut root.children);
    let problems: Vec<String> = decoder
        .damage
        .iter()
        .map(|d| d.to_string())
        .chain(decoder.warnings.iter().map(|w| w.to_string()))
        .collect();
    let caption = format!("{caption}, {} bytes", bytes.len());
    Figure {
        caption,
        bytes,
        root,
        header_version: None,
        error: (!problems.is_empty()).then(|| problems.join("; ")),
        links: Vec::new(),
    }
}

/// Link each field node of `figure` to its row (`prefix` + field path, where
/// `rows` has that path) and, in frames, each header field to the encoding
/// page's section on `header_section`.
pub(crate) fn link_fields(
    figure: &mut Figure,
    prefix: &str,
    rows: &HashSet<String>,
    header_section: Option<&str>,
) {
    let mut headers = Vec::new();
    figure.root.walk(&mut |n, _| {
        headers.push(n.region == Region::RpcHeader && matches!(n.role, Role::Field { .. }))
    });
    figure.links = field_paths(&figure.root)
        .into_iter()
        .zip(headers)
        .map(|(path, header)| match path {
            Some(p) if rows.contains(&p) => Some(format!("#{}", anchor(prefix, &p))),
            _ if header => header_section.map(|s| format!("{}#{s}", super::links::ENCODING)),
            _ => None,
        })
        .collect();
}

/// A figure that could not be made: no bytes, and the reason.
pub fn failed(caption: String, error: String) -> Figure {
    Figure {
        caption,
        bytes: Bytes::new(),
        root: Node::new("(not encoded)", "", 0, Region::Frame, Role::Structure),
        header_version: None,
        error: Some(error),
        links: Vec::new(),
    }
}
