//! Broker endpoints in responses, rewritten so that clients keep talking
//! through the proxy. Which responses carry endpoints is read from the
//! definitions: any struct, at any depth, with a `Host` string and a `Port`
//! int32 at the version (Metadata, FindCoordinator, DescribeCluster, the
//! NodeEndpoints of Produce, Fetch, ShareFetch and ShareAcknowledge, and any
//! newer one). A response is rewritten through the JSON contract and
//! re-encoded by kwire's encoder, and only when the encoder gives back the
//! broker's exact bytes for it unchanged: nothing is ever mangled.

use crate::decode::reader::Reader;
use crate::decode::tape::{Val, Values};
use crate::decode::values::decode_message;
use crate::decode::{decode_frame, DecodeOptions, Direction};
use crate::encode::{encode_frame_exact, FrameSpec, RawValues};
use crate::protocol::headers::response_header_version;
use crate::schema::model::{FieldSpec, FieldType};
use crate::schema::{Catalogue, MessageKind, Primitive};
use bytes::Bytes;
use serde_json::Value;

/// Whether a response of `api_key` at `version` can carry a broker endpoint.
pub(crate) fn carries_endpoints(
    cat: &Catalogue,
    pin: Option<&str>,
    api_key: i16,
    version: i16,
) -> bool {
    cat.message(MessageKind::Response, api_key, version, pin)
        .is_some_and(|spec| has_endpoint(&spec.fields, version))
}

fn on_wire(f: &FieldSpec, v: i16) -> bool {
    f.is_regular_in(v) || f.is_tagged_in(v)
}

fn has_endpoint(fields: &[FieldSpec], v: i16) -> bool {
    let named = |name: &str, p: Primitive| {
        fields.iter().any(|f| {
            f.name == name && on_wire(f, v) && matches!(f.ty, FieldType::Primitive(q) if q == p)
        })
    };
    if named("Host", Primitive::String) && named("Port", Primitive::Int32) {
        return true;
    }
    fields
        .iter()
        .filter(|f| on_wire(f, v) && !f.fields.is_empty())
        .any(|f| has_endpoint(&f.fields, v))
}

/// Host and port as the broker named them → as the client should see them (`None`: keep them).
pub(crate) type EndpointMap<'a> = dyn FnMut(&str, i32) -> Option<(String, i32)> + 'a;

/// What rewriting one response did.
#[derive(Debug, PartialEq, Eq)]
pub enum Rewritten {
    /// No endpoint in it: forward the bytes as they came.
    Unchanged,
    /// The new frame (size prefix fixed), and how many endpoints changed.
    Frame(Vec<u8>, usize),
}

/// Rewrite the endpoints of `frame` (a whole response of `api_key` at
/// `version`) with `map` (host and port as the broker named them → as the
/// client should see them). An error says why the frame must go as it came.
pub fn rewrite(
    cat: &Catalogue,
    pin: Option<&str>,
    (api_key, version): (i16, i16),
    frame: &[u8],
    map: &mut EndpointMap<'_>,
) -> Result<Rewritten, String> {
    // Most responses that may carry endpoints carry none (Fetch and Produce
    // name them only when the leader moved) or only ones already pointing at
    // the proxy: a values-only decode, which leaves record data as bytes,
    // tells, without the tree, the JSON and the encoder.
    if let Some(found) = endpoints_in(cat, pin, (api_key, version), frame) {
        if found
            .iter()
            .all(|(h, p)| map(h, *p).is_none_or(|(nh, np)| (nh.as_str(), np) == (h.as_str(), *p)))
        {
            return Ok(Rewritten::Unchanged);
        }
    }
    let opts = DecodeOptions {
        direction: Some(Direction::Response),
        api_key: Some(api_key),
        api_version: Some(version),
        release: pin.map(str::to_string),
        values_only: true,
        ..Default::default()
    };
    let decoded = decode_frame(cat, Bytes::copy_from_slice(frame), 0, &opts);
    if let Some(e) = &decoded.error {
        return Err(format!("it does not decode: {e}"));
    }
    // The version the body was read as (ApiVersions may answer in the v0 layout).
    let version = decoded.api_version.unwrap_or(version);
    let mut contract = crate::render::json::frame_contract(&decoded);
    let fs = FrameSpec {
        direction: Direction::Response,
        api_key,
        version,
        release: pin,
    };
    let encode = |c: &Value| -> Result<Vec<u8>, String> {
        let raw = match c.get(crate::render::json::RAW_KEY) {
            Some(r) => RawValues::from_json(r).map_err(|e| e.to_string())?,
            None => RawValues::default(),
        };
        let (Some(header), Some(body)) = (c["header"].as_object(), c["body"].as_object()) else {
            return Err("no header or body".into());
        };
        encode_frame_exact(cat, &fs, header, body, &raw).map_err(|e| e.to_string())
    };
    if encode(&contract)? != frame {
        return Err("kwire's encoder does not give back its exact bytes".into());
    }
    let mut changed = 0;
    swap_endpoints(&mut contract["body"], map, &mut changed);
    if changed == 0 {
        return Ok(Rewritten::Unchanged);
    }
    Ok(Rewritten::Frame(encode(&contract)?, changed))
}

/// The `Host`/`Port` pairs of a response, from a values-only decode of its
/// body (record data left as bytes, never checked or decompressed); `None`
/// when it does not decode so (the whole rewrite then says why).
fn endpoints_in(
    cat: &Catalogue,
    pin: Option<&str>,
    (api_key, version): (i16, i16),
    frame: &[u8],
) -> Option<Vec<(String, i32)>> {
    let spec = cat.message(MessageKind::Response, api_key, version, pin)?;
    // The size, the correlation id, and in header v1 a tagged section.
    let mut r = Reader::new(frame);
    r.seek(8);
    if response_header_version(spec, version) >= 1 {
        for _ in 0..r.uvarint("tags").ok()?.value {
            r.uvarint("tag").ok()?;
            let size = r.uvarint("size").ok()?.value;
            r.take(usize::try_from(size).ok()?, "tagged field").ok()?;
        }
    }
    let mut values = Values::default();
    let (_, end, res) = decode_message(frame, r.pos(), &spec.plan(version), &mut values);
    if res.is_err() || end != frame.len() {
        return None;
    }
    let mut found = Vec::new();
    for (i, slot) in values.slots.iter().enumerate() {
        if slot.value != Val::Struct {
            continue;
        }
        let (mut host, mut port) = (None, None);
        for (_, c) in values.children(i as u32) {
            match (*c.key, c.value) {
                ("\"Host\":", Val::Str(span)) => host = std::str::from_utf8(span.of(frame)).ok(),
                ("\"Port\":", Val::Int(p)) => port = i32::try_from(p).ok(),
                _ => {}
            }
        }
        if let (Some(h), Some(p)) = (host, port) {
            found.push((h.to_string(), p));
        }
    }
    Some(found)
}

/// Every object with a `Host` string and a `Port` number, at any depth.
fn swap_endpoints(v: &mut Value, map: &mut EndpointMap<'_>, changed: &mut usize) {
    match v {
        Value::Object(o) => {
            let endpoint = match (
                o.get("Host").and_then(Value::as_str),
                o.get("Port")
                    .and_then(Value::as_i64)
                    .and_then(|p| i32::try_from(p).ok()),
            ) {
                (Some(h), Some(p)) => Some((h.to_string(), p)),
                _ => None,
            };
            if let Some((host, port)) = endpoint {
                if let Some((h, p)) = map(&host, port) {
                    if (h.as_str(), p) != (host.as_str(), port) {
                        o.insert("Host".into(), Value::from(h));
                        o.insert("Port".into(), Value::from(p));
                        *changed += 1;
                    }
                }
            }
            for (_, child) in o.iter_mut() {
                swap_endpoints(child, map, changed);
            }
        }
        Value::Array(a) => {
            for child in a {
                swap_endpoints(child, map, changed);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encode::encode_frame;
    use serde_json::json;

    #[test]
    fn the_definitions_say_which_responses_carry_endpoints() {
        let cat = Catalogue::builtin();
        assert!(carries_endpoints(cat, None, 3, 12), "Metadata");
        assert!(
            carries_endpoints(cat, None, 10, 4),
            "FindCoordinator v4 (Coordinators)"
        );
        assert!(carries_endpoints(cat, None, 10, 0), "FindCoordinator v0");
        assert!(
            carries_endpoints(cat, None, 1, 16),
            "Fetch v16 NodeEndpoints"
        );
        assert!(!carries_endpoints(cat, None, 1, 15), "Fetch v15 has none");
        assert!(!carries_endpoints(cat, None, 18, 3), "ApiVersions");
    }

    #[test]
    fn a_metadata_response_gets_the_proxy_s_endpoints_and_nothing_else_changes() {
        let cat = Catalogue::builtin();
        let fs = FrameSpec {
            direction: Direction::Response,
            api_key: 3,
            version: 12,
            release: None,
        };
        let body = |host: &str, port: i32| json!({"ThrottleTimeMs": 0, "Brokers": [{"NodeId": 1, "Host": host, "Port": port, "Rack": null}], "ClusterId": "c", "ControllerId": 1, "Topics": []});
        let header = json!({"CorrelationId": 7});
        let original = encode_frame(
            cat,
            &fs,
            header.as_object().unwrap(),
            body("broker-1.internal", 9092).as_object().unwrap(),
        )
        .unwrap();
        let mut map = |h: &str, p: i32| {
            (h == "broker-1.internal" && p == 9092).then(|| ("127.0.0.1".to_string(), 19093))
        };
        let Rewritten::Frame(new, 1) = rewrite(cat, None, (3, 12), &original, &mut map).unwrap()
        else {
            panic!("one endpoint changes")
        };
        let expected = encode_frame(
            cat,
            &fs,
            header.as_object().unwrap(),
            body("127.0.0.1", 19093).as_object().unwrap(),
        )
        .unwrap();
        assert_eq!(new, expected);
        let mut none = |_: &str, _: i32| None;
        assert_eq!(
            rewrite(cat, None, (3, 12), &original, &mut none).unwrap(),
            Rewritten::Unchanged
        );
        assert!(
            rewrite(
                cat,
                None,
                (3, 12),
                &original[..original.len() - 1],
                &mut map
            )
            .is_err(),
            "a frame that does not decode is refused"
        );
        // Already the proxy's: nothing to do.
        let mut same = |h: &str, p: i32| Some((h.to_string(), p));
        assert_eq!(
            rewrite(cat, None, (3, 12), &original, &mut same).unwrap(),
            Rewritten::Unchanged
        );
    }

    #[test]
    fn a_fetch_response_is_rewritten_only_when_it_names_a_node() {
        let cat = Catalogue::builtin();
        let fs = FrameSpec {
            direction: Direction::Response,
            api_key: 1,
            version: 16,
            release: None,
        };
        let spec = cat.message(MessageKind::Response, 1, 16, None).unwrap();
        let mut body = crate::encode::example::smallest_struct(&spec.fields, 16);
        let header = json!({"CorrelationId": 3});
        let plain = encode_frame(cat, &fs, header.as_object().unwrap(), &body).unwrap();
        let calls = std::cell::Cell::new(0);
        let mut map = |_: &str, _: i32| {
            calls.set(calls.get() + 1);
            Some(("127.0.0.1".to_string(), 19093))
        };
        assert_eq!(
            rewrite(cat, None, (1, 16), &plain, &mut map).unwrap(),
            Rewritten::Unchanged
        );
        assert_eq!(calls.get(), 0, "no endpoint, nothing asked");
        body.insert(
            "NodeEndpoints".into(),
            json!([{"NodeId": 2, "Host": "broker-2", "Port": 9092, "Rack": null}]),
        );
        let named = encode_frame(cat, &fs, header.as_object().unwrap(), &body).unwrap();
        let Rewritten::Frame(new, 1) = rewrite(cat, None, (1, 16), &named, &mut map).unwrap()
        else {
            panic!("the node is rewritten")
        };
        body.insert(
            "NodeEndpoints".into(),
            json!([{"NodeId": 2, "Host": "127.0.0.1", "Port": 19093, "Rack": null}]),
        );
        assert_eq!(
            new,
            encode_frame(cat, &fs, header.as_object().unwrap(), &body).unwrap()
        );
        assert_eq!(
            endpoints_in(cat, None, (1, 16), &new),
            Some(vec![("127.0.0.1".to_string(), 19093)])
        );
    }
}
