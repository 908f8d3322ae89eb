//! What `kwire apis` lists: each API's versions, flexible, deprecated and
//! unstable versions, header versions, listeners and the releases defining
//! it, gathered over the catalogue.

use crate::decode::frame::compress_versions;
use crate::protocol::headers::{request_header_version, response_header_version};
use crate::schema::{Catalogue, MessageKind, MessageSpec};
use serde_json::{json, Value};

/// Facts about one API, gathered over every release that defines it.
pub fn api_facts(cat: &Catalogue, key: i16, release: Option<&str>) -> Option<Value> {
    let name = cat.api_name(key)?;
    let req: Vec<&MessageSpec> = cat
        .entries_for(MessageKind::Request, key, release)
        .map(|e| e.spec())
        .collect();
    let newest = req.first()?;
    let req_versions = cat.versions(MessageKind::Request, key, release);
    let resp_versions = cat.versions(MessageKind::Response, key, release);
    let mut releases: Vec<String> = cat
        .entries_for(MessageKind::Request, key, release)
        .filter(|e| !e.spec().is_retired())
        .flat_map(|e| e.releases.clone())
        .filter(|r| release.is_none_or(|p| p == r))
        .collect();
    releases.sort_by_key(|r| crate::schema::catalogue::release_order(r));
    releases.dedup();
    let spec_at = |kind, v| cat.message(kind, key, v, release);
    let header_range = |kind: MessageKind, versions: &[i16]| -> Value {
        let hv: Vec<i16> = versions
            .iter()
            .filter_map(|&v| {
                spec_at(kind, v).map(|s| {
                    if kind == MessageKind::Request {
                        request_header_version(s, v)
                    } else {
                        response_header_version(s, v)
                    }
                })
            })
            .collect();
        json!(compress_versions(&{
            let mut h = hv.clone();
            h.sort_unstable();
            h.dedup();
            h
        }))
    };
    let flexible: Vec<i16> = req_versions
        .iter()
        .copied()
        .filter(|&v| spec_at(MessageKind::Request, v).is_some_and(|s| s.is_flexible(v)))
        .collect();
    let deprecated: Vec<i16> = req_versions
        .iter()
        .copied()
        .filter(|&v| {
            spec_at(MessageKind::Request, v).is_some_and(|s| s.deprecated_versions.contains(v))
        })
        .collect();
    // A version is unstable when the newest definition of it says its top version is.
    let unstable: Vec<i16> = req_versions
        .iter()
        .copied()
        .filter(|&v| {
            spec_at(MessageKind::Request, v)
                .is_some_and(|s| s.latest_version_unstable && s.valid_versions.hi == v)
        })
        .collect();
    Some(json!({
        "api_key": key,
        "api_name": name,
        "request_versions": compress_versions(&req_versions),
        "response_versions": compress_versions(&resp_versions),
        "flexible_versions": compress_versions(&flexible),
        "request_header_versions": header_range(MessageKind::Request, &req_versions),
        "response_header_versions": header_range(MessageKind::Response, &resp_versions),
        "deprecated_versions": compress_versions(&deprecated),
        "unstable_versions": compress_versions(&unstable),
        "listeners": newest.listeners,
        "releases": releases,
        "retired": req_versions.is_empty(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn produce_over_every_release_and_in_kafka_4_0() {
        let cat = Catalogue::builtin();
        let all = api_facts(cat, 0, None).unwrap();
        assert_eq!(all["api_name"], "Produce");
        assert_eq!(all["request_versions"], "0-13");
        assert_eq!(all["flexible_versions"], "9-13");
        assert_eq!(all["request_header_versions"], "1-2");
        assert_eq!(all["response_header_versions"], "0-1");
        assert_eq!(all["deprecated_versions"], "0-2");
        assert_eq!(all["releases"], json!(["3.9", "4.0", "4.1", "4.2", "4.3"]));
        // Kafka 4.0 removed Produce v0-v2 and did not yet define v13.
        let four = api_facts(cat, 0, Some("4.0")).unwrap();
        assert_eq!(four["request_versions"], "3-12");
        assert_eq!(four["deprecated_versions"], "");
        assert_eq!(four["releases"], json!(["4.0"]));
        assert!(api_facts(cat, i16::MAX, None).is_none());
    }
}
