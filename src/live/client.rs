//! Asking a broker directly: one connection, requests encoded by kwire's
//! encoder, responses read back whole (bounded) and decoded by the decoder.
//! ApiVersions first tells which versions the broker serves on this connection.

use super::wire::{connect, read_frame, write_frame};
use crate::decode::{decode_frame, DecodeOptions, Direction, Frame};
use crate::encode::{encode_frame, FrameSpec};
use crate::protocol::headers::API_VERSIONS_KEY;
use crate::schema::{Catalogue, MessageKind};
use bytes::Bytes;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// The error code a broker answers an ApiVersions version it does not serve with.
const UNSUPPORTED_VERSION: i64 = 35;

/// A connection to one broker.
pub struct Session<'c> {
    cat: &'c Catalogue,
    release: Option<String>,
    stream: TcpStream,
    next_correlation_id: i32,
    pub client_id: String,
    /// Decode what is sent and answered onto values tapes, for the JSON
    /// contract, rather than into trees.
    pub values_only: bool,
    /// Largest response read whole.
    max_frame: usize,
}

/// One request sent and its response.
pub struct Answered {
    pub request: Frame,
    pub response: Frame,
    pub elapsed: Duration,
}

/// A request sent ([`Session::send`]): answered, or one that gets no answer
/// (a Produce with acks=0), as sent.
pub enum Sent {
    Answered(Box<Answered>),
    Unanswered(Box<Frame>),
}

/// What a broker's ApiVersions response said.
pub struct Advertised {
    /// The ApiVersions version it answered.
    pub version: i16,
    pub ranges: BTreeMap<i16, (i16, i16)>,
    pub exchange: Answered,
}

impl<'c> Session<'c> {
    pub fn connect(
        cat: &'c Catalogue,
        release: Option<&str>,
        broker: &str,
        timeout: Duration,
        max_frame: usize,
    ) -> Result<Self, String> {
        let stream = connect(broker, timeout)?;
        stream
            .set_read_timeout(Some(timeout))
            .and_then(|_| stream.set_write_timeout(Some(timeout)))
            .map_err(|e| e.to_string())?;
        Ok(Session {
            cat,
            release: release.map(str::to_string),
            stream,
            next_correlation_id: 1,
            client_id: "kwire".into(),
            values_only: false,
            max_frame,
        })
    }

    /// The version to send `api_key` at: `asked`, or else the newest that
    /// kwire and the broker both serve, asked of the broker (ApiVersions);
    /// why there is none, when there is none.
    pub fn version_to_send(&mut self, api_key: i16, asked: Option<i16>) -> Result<i16, String> {
        if let Some(v) = asked {
            return Ok(v);
        }
        let advertised = self
            .api_versions()
            .map_err(|e| format!("ApiVersions: {e}"))?;
        let release = self.release.clone();
        highest_common(self.cat, release.as_deref(), &advertised.ranges, api_key).ok_or_else(|| {
            let name = self.cat.api_name(api_key).unwrap_or("?");
            let theirs = advertised
                .ranges
                .get(&api_key)
                .map_or("none".to_string(), |(lo, hi)| format!("v{lo}-v{hi}"));
            let ours = self.cat.versions(MessageKind::Request, api_key, release.as_deref());
            format!("no version of {name} that both serve: the broker advertises {theirs}, kwire knows {ours:?}")
        })
    }

    /// Encode `body` as a request of `api_key` at `version`, send it, read and decode the response.
    fn exchange(
        &mut self,
        api_key: i16,
        version: i16,
        body: &Map<String, Value>,
    ) -> Result<Answered, String> {
        let encoded = self.encoded(api_key, version, body)?;
        self.exchange_encoded(encoded, (api_key, version))
    }

    /// Send a request encoded with correlation id `corr`; read and decode its response.
    fn exchange_encoded(
        &mut self,
        (corr, bytes): (i32, Vec<u8>),
        (api_key, version): (i16, i16),
    ) -> Result<Answered, String> {
        let started = Instant::now();
        write_frame(&mut self.stream, &bytes)?;
        let answer = read_frame(&mut self.stream, self.max_frame)?;
        let elapsed = started.elapsed();
        let got = answer
            .get(4..8)
            .map(|b| i32::from_be_bytes([b[0], b[1], b[2], b[3]]));
        if got != Some(corr) {
            return Err(format!(
                "the response carries correlation id {got:?}, not {corr}"
            ));
        }
        let request = self.decoded(bytes, Direction::Request, (api_key, version));
        let response = self.decoded(answer, Direction::Response, (api_key, version));
        Ok(Answered {
            request,
            response,
            elapsed,
        })
    }

    /// Encode `body` as a request of `api_key` at `version` and send it; its
    /// response read and decoded unless the broker sends none (a Produce
    /// with acks=0, which waiting for would only time out).
    pub fn send(
        &mut self,
        api_key: i16,
        version: i16,
        body: &Map<String, Value>,
    ) -> Result<Sent, String> {
        let (corr, bytes) = self.encoded(api_key, version, body)?;
        if super::wire::is_answered(api_key, version, &bytes) {
            return self
                .exchange_encoded((corr, bytes), (api_key, version))
                .map(|a| Sent::Answered(Box::new(a)));
        }
        write_frame(&mut self.stream, &bytes)?;
        let request = self.decoded(bytes, Direction::Request, (api_key, version));
        Ok(Sent::Unanswered(Box::new(request)))
    }

    /// The request's frame with the next correlation id.
    fn encoded(
        &mut self,
        api_key: i16,
        version: i16,
        body: &Map<String, Value>,
    ) -> Result<(i32, Vec<u8>), String> {
        let corr = self.next_correlation_id;
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let fs = FrameSpec {
            direction: Direction::Request,
            api_key,
            version,
            release: self.release.as_deref(),
        };
        let mut header = Map::new();
        header.insert("CorrelationId".into(), json!(corr));
        header.insert("ClientId".into(), json!(self.client_id));
        let bytes = encode_frame(self.cat, &fs, &header, body)
            .map_err(|e| format!("encoding the request: {e}"))?;
        Ok((corr, bytes))
    }

    fn decoded(
        &self,
        bytes: Vec<u8>,
        direction: Direction,
        (api_key, version): (i16, i16),
    ) -> Frame {
        let opts = DecodeOptions {
            direction: Some(direction),
            api_key: Some(api_key),
            api_version: Some(version),
            release: self.release.clone(),
            values_only: self.values_only,
            ..Default::default()
        };
        decode_frame(self.cat, Bytes::from(bytes), 0, &opts)
    }

    /// ApiVersions at the newest version kwire knows, then at the version the
    /// broker names when it does not serve that one.
    pub fn api_versions(&mut self) -> Result<Advertised, String> {
        let ours = self.cat.versions(
            MessageKind::Request,
            API_VERSIONS_KEY,
            self.release.as_deref(),
        );
        let mut version = *ours
            .last()
            .ok_or("the catalogue has no ApiVersions request")?;
        for _ in 0..2 {
            let body = software(self.cat, version, self.release.as_deref());
            let exchange = self.exchange(API_VERSIONS_KEY, version, &body)?;
            let contract = crate::render::json::contract_of(
                &exchange.response,
                (self.cat, self.release.as_deref()),
            );
            if let Some(e) = &exchange.response.error {
                return Err(format!(
                    "the ApiVersions v{version} response does not decode: {e}"
                ));
            }
            let ranges = ranges_in(&contract["body"]);
            match contract["body"]["ErrorCode"].as_i64() {
                Some(0) => return Ok(Advertised { version, ranges, exchange }),
                Some(UNSUPPORTED_VERSION) => match ranges.get(&API_VERSIONS_KEY) {
                    Some(&(_, hi)) if hi < version => version = hi.max(0),
                    _ => return Err(format!("the broker does not serve ApiVersions v{version} and names no version it does")),
                },
                code => return Err(format!("the ApiVersions response has error code {code:?}")),
            }
        }
        Err("the broker refused ApiVersions twice".into())
    }
}

/// The body of an ApiVersions request naming kwire as the client software (v3 and later).
fn software(cat: &Catalogue, version: i16, pin: Option<&str>) -> Map<String, Value> {
    let mut body = Map::new();
    if let Some(spec) = cat.message(MessageKind::Request, API_VERSIONS_KEY, version, pin) {
        for f in spec.fields.iter().filter(|f| f.versions.contains(version)) {
            let v = match f.name.as_str() {
                "ClientSoftwareName" => json!("kwire"),
                "ClientSoftwareVersion" => json!(env!("CARGO_PKG_VERSION")),
                _ => continue,
            };
            body.insert(f.name.clone(), v);
        }
    }
    body
}

/// `ApiKeys` of an ApiVersions response body (the JSON contract): key → (min, max).
fn ranges_in(body: &Value) -> BTreeMap<i16, (i16, i16)> {
    let mut ranges = BTreeMap::new();
    for k in body["ApiKeys"].as_array().into_iter().flatten() {
        let num = |name: &str| k[name].as_i64().and_then(|n| i16::try_from(n).ok());
        if let (Some(key), Some(lo), Some(hi)) =
            (num("ApiKey"), num("MinVersion"), num("MaxVersion"))
        {
            ranges.insert(key, (lo, hi));
        }
    }
    ranges
}

/// A request's body: `given`, or the smallest legal instance of `api_key`'s
/// request at `version`; none when the catalogue has no such version.
pub fn request_body(
    cat: &Catalogue,
    release: Option<&str>,
    (api_key, version): (i16, i16),
    given: Option<serde_json::Map<String, serde_json::Value>>,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    if let Some(body) = given {
        return Ok(body);
    }
    let Some(spec) = cat.message(MessageKind::Request, api_key, version, release) else {
        return Err(format!(
            "{} has no request version {version}; valid: {:?}",
            cat.api_name(api_key).unwrap_or("?"),
            cat.versions(MessageKind::Request, api_key, release)
        ));
    };
    Ok(crate::encode::example::smallest_struct(
        &spec.fields,
        version,
    ))
}

/// The newest request version of `api_key` that both kwire and the broker serve.
pub(crate) fn highest_common(
    cat: &Catalogue,
    pin: Option<&str>,
    ranges: &BTreeMap<i16, (i16, i16)>,
    api_key: i16,
) -> Option<i16> {
    let (lo, hi) = *ranges.get(&api_key)?;
    cat.versions(MessageKind::Request, api_key, pin)
        .into_iter()
        .filter(|v| (lo..=hi).contains(v))
        .max()
}

/// A request's header and body, as JSON objects.
pub type HeaderAndBody = (Map<String, Value>, Map<String, Value>);

/// A request's header and body from JSON text: `kwire decode --format json`
/// output (an object with a `body` object; its header, if any), or the body
/// alone (no header).
pub fn request_json(text: &[u8]) -> Result<HeaderAndBody, String> {
    let v: Value = serde_json::from_slice(text).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut o) = v else {
        return Err(
            "a JSON object is needed (the request body, or kwire decode --json output)".into(),
        );
    };
    if !o.get("body").is_some_and(Value::is_object) {
        return Ok((Map::new(), o));
    }
    let header = match o.remove("header") {
        Some(Value::Object(h)) => h,
        _ => Map::new(),
    };
    let body = match o.remove("body") {
        Some(Value::Object(b)) => b,
        _ => Map::new(),
    };
    Ok((header, body))
}

/// One API as `kwire probe` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbedApi {
    pub api_key: i16,
    pub name: Option<String>,
    pub broker: (i16, i16),
    /// The broker's versions kwire has definitions for.
    pub decoded: Vec<i16>,
    /// Releases of the catalogue whose request versions of this API are exactly the broker's range.
    pub releases: Vec<String>,
}

/// The broker's ranges next to kwire's catalogue.
pub(crate) fn probe_table(cat: &Catalogue, ranges: &BTreeMap<i16, (i16, i16)>) -> Vec<ProbedApi> {
    ranges
        .iter()
        .map(|(&k, &(lo, hi))| {
            let decoded = cat
                .versions(MessageKind::Request, k, None)
                .into_iter()
                .filter(|v| (lo..=hi).contains(v))
                .collect();
            let releases = cat
                .releases
                .iter()
                .filter(|r| {
                    let v = cat.versions(MessageKind::Request, k, Some(r));
                    v.first() == Some(&lo) && v.last() == Some(&hi)
                })
                .cloned()
                .collect();
            ProbedApi {
                api_key: k,
                name: cat.api_name(k).map(str::to_string),
                broker: (lo, hi),
                decoded,
                releases,
            }
        })
        .collect()
}

/// What `kwire probe` shows: the broker's ApiVersions answer next to
/// kwire's catalogue.
pub struct Probe {
    pub broker: String,
    /// The ApiVersions version the broker answered.
    pub api_versions_version: i16,
    pub apis: Vec<ProbedApi>,
    /// The catalogue's releases whose ranges match the broker's on every API.
    pub releases: Vec<String>,
}

impl Probe {
    /// Ask `session`'s broker (`broker`, as the user named it) for its
    /// versions, set beside the session's catalogue.
    pub fn ask(session: &mut Session, broker: &str) -> Result<Probe, String> {
        let advertised = session
            .api_versions()
            .map_err(|e| format!("ApiVersions: {e}"))?;
        let apis = probe_table(session.cat, &advertised.ranges);
        let releases = matching_releases(session.cat, &apis);
        Ok(Probe {
            broker: broker.to_string(),
            api_versions_version: advertised.version,
            apis,
            releases,
        })
    }

    pub fn to_json(&self) -> Value {
        let apis: Vec<Value> = self
            .apis
            .iter()
            .map(|a| json!({"api_key": a.api_key, "api_name": a.name, "min_version": a.broker.0, "max_version": a.broker.1, "kwire_decodes": a.decoded, "releases": a.releases}))
            .collect();
        json!({"broker": self.broker, "api_versions_version": self.api_versions_version, "apis": apis, "releases": self.releases})
    }

    /// A table a line per API (the broker's name escaped for a terminal).
    pub fn to_text(&self) -> String {
        let range = |(lo, hi): (i16, i16)| match lo == hi {
            true => format!("v{lo}"),
            false => format!("v{lo}-v{hi}"),
        };
        let mut s = format!(
            "{} answered ApiVersions v{}: {} APIs\n",
            crate::text::escape::sanitize(&self.broker),
            self.api_versions_version,
            self.apis.len()
        );
        s += &format!(
            "{:>4}  {:<32} {:<10} {:<22} {}\n",
            "key", "api", "broker", "kwire decodes", "same range in"
        );
        for a in &self.apis {
            let all = a.decoded.len() as i64 == i64::from(a.broker.1) - i64::from(a.broker.0) + 1;
            let decodes = match (a.decoded.first(), a.decoded.last()) {
                _ if all => "all".to_string(),
                (Some(&lo), Some(&hi)) => format!("{} only", range((lo, hi))),
                _ => "none".to_string(),
            };
            let name = a.name.as_deref().unwrap_or("(unknown to kwire)");
            let releases = match a.releases.is_empty() {
                true => "-".to_string(),
                false => a.releases.join(", "),
            };
            s += &format!(
                "{:>4}  {:<32} {:<10} {:<22} {}\n",
                a.api_key,
                name,
                range(a.broker),
                decodes,
                releases
            );
        }
        s += &match self.releases.as_slice() {
            [] => "no release of kwire's catalogue has exactly these ranges\n".to_string(),
            r => format!("every range matches release {}\n", r.join(", ")),
        };
        s
    }
}

/// Releases that match the broker on every API it advertised that the release knows.
pub(crate) fn matching_releases(cat: &Catalogue, table: &[ProbedApi]) -> Vec<String> {
    cat.releases
        .iter()
        .filter(|r| table.iter().all(|a| a.releases.contains(r)))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_read_from_decode_output_or_from_its_body_alone() {
        let decoded = br#"{"kind":"request","header":{"ClientId":"me"},"body":{"Acks":0}}"#;
        let (header, body) = request_json(decoded).unwrap();
        assert_eq!(
            (header["ClientId"].as_str(), body["Acks"].as_i64()),
            (Some("me"), Some(0))
        );
        let (header, body) = request_json(br#"{"body":{"TimeoutMs":5}}"#).unwrap();
        assert!(header.is_empty());
        assert_eq!(body["TimeoutMs"], 5);
        // A body whose field is called body: not decode output.
        let (header, body) = request_json(br#"{"body":"x","Acks":1}"#).unwrap();
        assert!(header.is_empty());
        assert_eq!(
            (body["body"].as_str(), body["Acks"].as_i64()),
            (Some("x"), Some(1))
        );
        assert!(request_json(b"[1]")
            .unwrap_err()
            .contains("a JSON object is needed"));
        assert!(request_json(b"{").unwrap_err().starts_with("not JSON"));
    }

    #[test]
    fn the_highest_common_version_is_within_both() {
        let cat = Catalogue::builtin();
        let mut ranges = BTreeMap::new();
        ranges.insert(3, (0, 9));
        assert_eq!(highest_common(cat, None, &ranges, 3), Some(9));
        ranges.insert(3, (0, 99));
        let ours = *cat.versions(MessageKind::Request, 3, None).last().unwrap();
        assert_eq!(highest_common(cat, None, &ranges, 3), Some(ours));
        assert_eq!(
            highest_common(cat, None, &ranges, 0),
            None,
            "not advertised"
        );
    }

    #[test]
    fn a_request_body_is_the_one_given_or_the_smallest() {
        let cat = Catalogue::builtin();
        let given: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(r#"{"Topics": null}"#).unwrap();
        let body = request_body(cat, None, (3, 12), Some(given.clone())).unwrap();
        assert_eq!(body, given);
        let smallest = request_body(cat, None, (3, 12), None).unwrap();
        let spec = cat.message(MessageKind::Request, 3, 12, None).unwrap();
        assert_eq!(
            smallest,
            crate::encode::example::smallest_struct(&spec.fields, 12)
        );
        let none = request_body(cat, None, (3, 999), None).unwrap_err();
        assert!(
            none.starts_with("Metadata has no request version 999; valid: "),
            "{none}"
        );
    }

    #[test]
    fn a_release_matches_when_its_ranges_are_the_brokers() {
        let cat = Catalogue::builtin();
        let release = cat.releases[0].clone();
        let ranges: BTreeMap<i16, (i16, i16)> = [0i16, 3, 18]
            .iter()
            .map(|&k| {
                let v = cat.versions(MessageKind::Request, k, Some(&release));
                (k, (v[0], *v.last().unwrap()))
            })
            .collect();
        let table = probe_table(cat, &ranges);
        assert!(
            matching_releases(cat, &table).contains(&release),
            "{table:?}"
        );
        assert!(table
            .iter()
            .all(|a| a.decoded.len() as i16 == a.broker.1 - a.broker.0 + 1));
    }
}
