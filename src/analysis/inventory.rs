//! Who talks to the brokers of a capture (`kwire inventory`): every client
//! (client id, the software its ApiVersions v3+ requests name, its
//! connections), the API versions it used, the ranges each broker advertised
//! in its ApiVersions responses, the requests sent outside them, and, against
//! a target release, the versions that release no longer serves.
//!
//! Exchanges are paired and selected as `stats` does ([`Exchanges`],
//! [`Filter`]); the ApiVersions bodies are read here from the values-only
//! tape, every one of them whatever the selection (they are what the
//! selected exchanges are judged by). Fields are found by their specs: the
//! response's error code and API key by [`FieldMeaning`], the software name
//! and version and the version bounds by the definitions' field names.
//!
//! A client is a client id together with the software its connection named:
//! the same id from two programs is two clients. ApiVersions requests are
//! judged only below a range: a client sends its newest ApiVersions version
//! before it knows the broker's, and a broker answers a version it does not
//! serve with the versions it does (KIP-511), so a newer one is no fault.
//!
//! Memory: the requests awaiting a response, one entry per connection, per
//! (connection, client id, API version) used and per broker's advertised API.

use super::exchange::{
    read_capture, Exchange, Exchanges, Names, Needs, Observer, Outcome, Reading,
};
use super::filter::Filter;
use crate::capture::{CaptureOptions, CapturedFrame};
use crate::decode::tape::{Val, Values};
use crate::decode::values::{self};
use crate::decode::Direction;
use crate::protocol::headers::{request_header_version, response_header_version, API_VERSIONS_KEY};
use crate::schema::model::{FieldMeaning, FieldSpec, FieldType, Primitive};
use crate::schema::{Catalogue, MessageKind};
use crate::text::escape::{quote, sanitize};
use serde_json::{json, Map, Value as Json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::SocketAddr;

/// An API's version range, inclusive.
pub(crate) type Range = (i16, i16);

/// What one connection's client used, under one client id.
#[derive(Clone, Debug)]
struct Use {
    broker: SocketAddr,
    /// Requests per API key and version.
    versions: BTreeMap<(i16, i16), u64>,
}

/// The software an ApiVersions request names (bytes as on the wire).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Software {
    pub name: Option<Box<[u8]>>,
    pub version: Option<Box<[u8]>>,
}

/// What a capture's selected exchanges and its ApiVersions exchanges say.
#[derive(Debug, Default)]
pub struct Facts {
    /// By connection and client id (an index into [`Names`]; `None` when the
    /// header could not be read).
    uses: BTreeMap<(usize, Option<u32>), Use>,
    /// The software each connection's client named (its last ApiVersions v3+ request).
    software: HashMap<usize, Software>,
    /// The ranges each broker advertised (its last ApiVersions response
    /// without an error), by API key.
    advertised: BTreeMap<SocketAddr, BTreeMap<i16, Range>>,
    /// Exchanges selected.
    pub selected: u64,
}

impl Facts {
    fn add(&mut self, ex: &Exchange<'_>) {
        let Some(api) = ex.api else { return };
        if ex.request.is_none() {
            return;
        }
        self.selected += 1;
        let u = self
            .uses
            .entry((ex.conn, ex.client_id))
            .or_insert_with(|| Use {
                broker: ex.broker,
                versions: BTreeMap::new(),
            });
        *u.versions.entry(api).or_insert(0) += 1;
    }
}

/// Adds the selected exchanges up.
struct Adder<'f> {
    facts: Facts,
    filter: &'f Filter,
}

impl Observer for Adder<'_> {
    type Mark = ();

    fn request(&mut self, _: &Exchange<'_>) {}

    fn complete(&mut self, ex: &Exchange<'_>, _: Option<()>) {
        if ex.outcome != Outcome::Unmatched && self.filter.decide(ex) == Some(true) {
            self.facts.add(ex);
        }
    }
}

/// Where an ApiVersions message keeps its facts, by declaration index.
#[derive(Clone, Copy, Debug, Default)]
struct RequestDecls {
    name: Option<u16>,
    version: Option<u16>,
}

#[derive(Clone, Copy, Debug, Default)]
struct ResponseDecls {
    error: Option<u16>,
    /// The array of (key, min, max) structs, and the three within it.
    keys: Option<u16>,
    key: Option<u16>,
    min: Option<u16>,
    max: Option<u16>,
}

fn decl_named(fields: &[FieldSpec], version: i16, name: &str) -> Option<u16> {
    fields
        .iter()
        .position(|f| f.name == name && (f.is_regular_in(version) || f.is_tagged_in(version)))
        .map(|i| i as u16)
}

fn is_int16(f: &FieldSpec) -> bool {
    matches!(f.ty, FieldType::Primitive(Primitive::Int16))
}

fn response_decls(fields: &[FieldSpec], version: i16) -> ResponseDecls {
    let on_wire = |f: &FieldSpec| f.is_regular_in(version) || f.is_tagged_in(version);
    let mut d = ResponseDecls::default();
    for (i, f) in fields.iter().enumerate().filter(|(_, f)| on_wire(f)) {
        if d.error.is_none() && is_int16(f) && FieldMeaning::of(f) == FieldMeaning::ErrorCode {
            d.error = Some(i as u16);
        }
        let FieldType::Array(inner) = &f.ty else {
            continue;
        };
        if !matches!(**inner, FieldType::Struct(_)) || d.keys.is_some() {
            continue;
        }
        let key = f
            .fields
            .iter()
            .position(|g| on_wire(g) && is_int16(g) && FieldMeaning::of(g) == FieldMeaning::ApiKey);
        let min = decl_named(&f.fields, version, "MinVersion");
        let max = decl_named(&f.fields, version, "MaxVersion");
        if let (Some(key), Some(min), Some(max)) = (key, min, max) {
            d = ResponseDecls {
                keys: Some(i as u16),
                key: Some(key as u16),
                min: Some(min),
                max: Some(max),
                ..d
            };
        }
    }
    d
}

/// Reads ApiVersions requests and responses from the values-only tape.
#[derive(Default)]
pub(crate) struct ApiVersionsReader {
    tape: Values,
    /// Frames that did not decode completely, and the first of them.
    undecoded: usize,
    first_undecoded: Option<usize>,
}

impl ApiVersionsReader {
    fn count_undecoded(&mut self, index: usize) {
        self.undecoded += 1;
        self.first_undecoded.get_or_insert(index);
    }

    /// The body's slot of frame `f`, a message of `kind` at `version`, decoded
    /// completely; `None` when it does not decode (or only a prefix was kept).
    fn body(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        f: &CapturedFrame,
        kind: MessageKind,
        version: i16,
    ) -> Option<u32> {
        if f.is_cut() {
            return None;
        }
        let spec = cat.message(kind, API_VERSIONS_KEY, version, pin)?;
        let hv = match kind {
            MessageKind::Request => request_header_version(spec, version),
            _ => response_header_version(spec, version),
        };
        let header = cat.header(kind, hv)?;
        let bytes: &[u8] = &f.bytes;
        self.tape.slots.clear();
        let (_, end, res) = values::decode_message(bytes, 4, &header.plan(hv), &mut self.tape);
        res.ok()?;
        let (slot, stop, res) =
            values::decode_message(bytes, end, &spec.plan(version), &mut self.tape);
        (res.is_ok() && stop == bytes.len()).then_some(slot)
    }

    /// The software named by an ApiVersions request (v3 and later).
    pub(crate) fn request(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        f: &CapturedFrame,
        version: i16,
    ) -> Option<Software> {
        let spec = cat.message(MessageKind::Request, API_VERSIONS_KEY, version, pin)?;
        let d = RequestDecls {
            name: decl_named(&spec.fields, version, "ClientSoftwareName"),
            version: decl_named(&spec.fields, version, "ClientSoftwareVersion"),
        };
        if d.name.is_none() && d.version.is_none() {
            return None;
        }
        let Some(body) = self.body(cat, pin, f, MessageKind::Request, version) else {
            self.count_undecoded(f.index);
            return None;
        };
        let bytes: &[u8] = &f.bytes;
        let mut sw = Software {
            name: None,
            version: None,
        };
        for (_, s) in self.tape.children(body) {
            let Val::Str(span) = s.value else { continue };
            let Some(decl) = s.decl() else { continue };
            if Some(decl) == d.name {
                sw.name = Some(span.of(bytes).into());
            } else if Some(decl) == d.version {
                sw.version = Some(span.of(bytes).into());
            }
        }
        Some(sw)
    }

    /// The ranges an ApiVersions response advertises, when it has no error.
    /// A broker answers a version it does not serve with a v0 body, as the
    /// decoder reads it too.
    pub(crate) fn response(
        &mut self,
        cat: &Catalogue,
        pin: Option<&str>,
        f: &CapturedFrame,
        version: i16,
    ) -> Option<BTreeMap<i16, Range>> {
        let mut at = Some(version);
        let (body, version) = loop {
            let v = at?;
            if let Some(b) = self.body(cat, pin, f, MessageKind::Response, v) {
                break (b, v);
            }
            at = (v > 0).then_some(0);
            if at.is_none() {
                self.count_undecoded(f.index);
            }
        };
        let spec = cat.message(MessageKind::Response, API_VERSIONS_KEY, version, pin)?;
        let d = response_decls(&spec.fields, version);
        let mut ranges = BTreeMap::new();
        for (i, s) in self.tape.children(body) {
            let Some(decl) = s.decl() else { continue };
            if Some(decl) == d.error && s.value != Val::Int(0) {
                return None;
            }
            if Some(decl) != d.keys || !matches!(s.value, Val::Array(_)) {
                continue;
            }
            for (e, es) in self.tape.children(i) {
                if es.value != Val::Struct {
                    continue;
                }
                let (mut key, mut min, mut max) = (None, None, None);
                for (_, fs) in self.tape.children(e) {
                    let Val::Int(n) = fs.value else { continue };
                    let Ok(n) = i16::try_from(n) else { continue };
                    let Some(decl) = fs.decl() else { continue };
                    if Some(decl) == d.key {
                        key = Some(n);
                    } else if Some(decl) == d.min {
                        min = Some(n);
                    } else if Some(decl) == d.max {
                        max = Some(n);
                    }
                }
                if let (Some(k), Some(lo), Some(hi)) = (key, min, max) {
                    ranges.insert(k, (lo, hi));
                }
            }
        }
        Some(ranges)
    }
}

/// A capture's inventory facts, and what reading it found.
pub struct Collected {
    pub facts: Facts,
    pub names: Names,
    pub reading: Reading,
}

/// Read a capture: the exchanges that pass `filter`, and every ApiVersions
/// exchange's software and ranges.
pub fn collect<R: std::io::Read>(
    cat: &Catalogue,
    release: Option<&str>,
    input: R,
    opts: &CaptureOptions,
    filter: &Filter,
) -> Result<Collected, String> {
    let needs = Needs {
        client_id: true,
        ..Needs::default()
    }
    .union(filter.needs());
    let mut exchanges: Exchanges<'_, ()> = Exchanges::new(cat, release, needs);
    let mut adder = Adder {
        facts: Facts::default(),
        filter,
    };
    let mut reader = ApiVersionsReader::default();
    let mut software: HashMap<usize, Software> = HashMap::new();
    let mut advertised: BTreeMap<SocketAddr, BTreeMap<i16, Range>> = BTreeMap::new();
    let mut reading = read_capture(
        cat,
        input,
        opts,
        (&mut exchanges, &mut adder),
        filter.frame_conn(),
        |c| {
            let crate::capture::Captured::Frame(f) = c else {
                return;
            };
            if let (Some(API_VERSIONS_KEY), Some(v)) = (f.api_key, f.api_version) {
                match f.direction {
                    Direction::Request => {
                        if let Some(sw) = reader.request(cat, release, f, v) {
                            software.insert(f.conn, sw);
                        }
                    }
                    Direction::Response => {
                        if let Some(r) = reader.response(cat, release, f, v) {
                            advertised.insert(f.from, r);
                        }
                    }
                }
            }
        },
    )?;
    let mut facts = adder.facts;
    facts.software = software;
    facts.advertised = advertised;
    reading.add_undecoded(reader.undecoded, reader.first_undecoded);
    Ok(Collected {
        facts,
        names: exchanges.into_names(),
        reading,
    })
}

/// A version a broker did not advertise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outside {
    pub version: i16,
    pub broker: SocketAddr,
    /// The broker's range for the API; `None` when it advertised none.
    pub advertised: Option<Range>,
}

/// A version the target release does not serve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub version: i16,
    /// The versions the target release serves (empty: it no longer has the API).
    pub target_serves: Vec<i16>,
}

#[derive(Clone, Debug)]
pub struct ApiUse {
    pub api_key: i16,
    pub api_name: Option<String>,
    pub versions: Vec<i16>,
    pub requests: u64,
    /// Each broker it went to whose ranges the capture holds, with its range
    /// for this API (`None`: not advertised).
    pub advertised: BTreeMap<SocketAddr, Option<Range>>,
    pub outside_advertised: Vec<Outside>,
    pub unsupported_in_target: Vec<Unsupported>,
}

#[derive(Clone, Debug)]
pub struct Client {
    /// `None` for a null client id (or one that could not be read).
    pub client_id: Option<Vec<u8>>,
    /// `None` when no ApiVersions v3+ request of its connections was read.
    pub software: Option<Software>,
    pub conns: Vec<usize>,
    pub apis: Vec<ApiUse>,
}

#[derive(Clone, Debug)]
pub struct Broker {
    pub address: SocketAddr,
    /// `None` when the capture holds no ApiVersions response of it.
    pub advertised: Option<BTreeMap<i16, Range>>,
}

/// The inventory: clients and the brokers they used.
#[derive(Clone, Debug)]
pub struct Inventory {
    pub target_release: Option<String>,
    pub clients: Vec<Client>,
    pub brokers: Vec<Broker>,
}

/// Whether version `v` of `api` is judged against a range that does not hold
/// it: below always, above except for ApiVersions (see the module's note).
fn outside(api: i16, v: i16, lo: i16, hi: i16) -> bool {
    v < lo || (v > hi && api != API_VERSIONS_KEY)
}

/// Whether `target_serves` (ascending) leaves `v` of `api` out, in the same sense.
fn not_served(api: i16, v: i16, target_serves: &[i16]) -> bool {
    if target_serves.contains(&v) {
        return false;
    }
    match (target_serves.first(), target_serves.last()) {
        (Some(_), Some(&hi)) if api == API_VERSIONS_KEY => v <= hi,
        _ => true,
    }
}

impl Inventory {
    /// The inventory of `facts`; `target` is a release of `served` (the
    /// built-in catalogue) whose served versions the used ones are checked against.
    pub fn new(
        cat: &Catalogue,
        served: &Catalogue,
        facts: &Facts,
        names: &Names,
        target: Option<&str>,
    ) -> Inventory {
        /// One API of a client: versions, requests, and (broker, version) sent.
        #[derive(Default)]
        struct Sent {
            versions: BTreeSet<i16>,
            requests: u64,
            to: BTreeSet<(SocketAddr, i16)>,
        }
        type Key = (Option<Vec<u8>>, Option<Software>);
        let mut groups: BTreeMap<Key, (BTreeSet<usize>, BTreeMap<i16, Sent>)> = BTreeMap::new();
        let mut brokers: BTreeSet<SocketAddr> = BTreeSet::new();
        for (&(conn, client_id), u) in &facts.uses {
            let id = client_id
                .and_then(|c| names.client_id(c))
                .map(<[u8]>::to_vec);
            let key = (id, facts.software.get(&conn).cloned());
            let g = groups.entry(key).or_default();
            g.0.insert(conn);
            brokers.insert(u.broker);
            for (&(k, v), &n) in &u.versions {
                let a = g.1.entry(k).or_default();
                a.versions.insert(v);
                a.requests += n;
                a.to.insert((u.broker, v));
            }
        }
        let mut target_cache: HashMap<i16, Vec<i16>> = HashMap::new();
        let clients = groups
            .into_iter()
            .map(|((client_id, software), (conns, apis))| {
                let apis = apis
                    .into_iter()
                    .map(
                        |(
                            api_key,
                            Sent {
                                versions,
                                requests,
                                to: sent,
                            },
                        )| {
                            let mut advertised = BTreeMap::new();
                            let mut outside_advertised = Vec::new();
                            for &(broker, v) in &sent {
                                let Some(ranges) = facts.advertised.get(&broker) else {
                                    continue;
                                };
                                let range = ranges.get(&api_key).copied();
                                advertised.insert(broker, range);
                                let out = match range {
                                    Some((lo, hi)) => outside(api_key, v, lo, hi),
                                    None => true,
                                };
                                if out {
                                    outside_advertised.push(Outside {
                                        version: v,
                                        broker,
                                        advertised: range,
                                    });
                                }
                            }
                            let unsupported_in_target = match target {
                                None => Vec::new(),
                                Some(r) => {
                                    let serves = target_cache.entry(api_key).or_insert_with(|| {
                                        served.versions(MessageKind::Request, api_key, Some(r))
                                    });
                                    versions
                                        .iter()
                                        .filter(|&&v| not_served(api_key, v, serves))
                                        .map(|&v| Unsupported {
                                            version: v,
                                            target_serves: serves.clone(),
                                        })
                                        .collect()
                                }
                            };
                            ApiUse {
                                api_key,
                                api_name: cat.api_name(api_key).map(str::to_string),
                                versions: versions.into_iter().collect(),
                                requests,
                                advertised,
                                outside_advertised,
                                unsupported_in_target,
                            }
                        },
                    )
                    .collect();
                Client {
                    client_id,
                    software,
                    conns: conns.into_iter().collect(),
                    apis,
                }
            })
            .collect();
        let brokers = brokers
            .into_iter()
            .map(|address| Broker {
                address,
                advertised: facts.advertised.get(&address).cloned(),
            })
            .collect();
        Inventory {
            target_release: target.map(str::to_string),
            clients,
            brokers,
        }
    }

    /// API versions the target release does not serve, over every client.
    pub fn flagged(&self) -> usize {
        self.clients
            .iter()
            .flat_map(|c| &c.apis)
            .map(|a| a.unsupported_in_target.len())
            .sum()
    }

    /// Requests' versions outside what their broker advertised, over every client.
    pub fn outside_advertised(&self) -> usize {
        self.clients
            .iter()
            .flat_map(|c| &c.apis)
            .map(|a| a.outside_advertised.len())
            .sum()
    }

    pub fn to_json(&self) -> Json {
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let range = |r: &Range| json!([r.0, r.1]);
        let clients: Vec<Json> = self
            .clients
            .iter()
            .map(|c| {
                let sw = c.software.as_ref();
                let apis: Vec<Json> = c
                    .apis
                    .iter()
                    .map(|a| {
                        let outside: Vec<Json> = a
                            .outside_advertised
                            .iter()
                            .map(|o| json!({"version": o.version, "broker": o.broker.to_string(), "advertised": o.advertised.as_ref().map(range)}))
                            .collect();
                        let unsupported: Vec<Json> = a
                            .unsupported_in_target
                            .iter()
                            .map(|u| json!({"version": u.version, "target_serves": ranges(&u.target_serves).iter().map(range).collect::<Vec<_>>()}))
                            .collect();
                        json!({
                            "api_key": a.api_key,
                            "api_name": a.api_name,
                            "versions": a.versions,
                            "requests": a.requests,
                            "outside_advertised": outside,
                            "unsupported_in_target": unsupported,
                        })
                    })
                    .collect();
                json!({
                    "client_id": c.client_id.as_deref().map(text),
                    "software_name": sw.and_then(|s| s.name.as_deref()).map(text),
                    "software_version": sw.and_then(|s| s.version.as_deref()).map(text),
                    "conns": c.conns,
                    "apis": apis,
                })
            })
            .collect();
        let brokers: Vec<Json> = self
            .brokers
            .iter()
            .map(|b| {
                let advertised = b.advertised.as_ref().map(|m| {
                    Json::Object(
                        m.iter()
                            .map(|(k, r)| (k.to_string(), range(r)))
                            .collect::<Map<String, Json>>(),
                    )
                });
                json!({"address": b.address.to_string(), "advertised": advertised})
            })
            .collect();
        json!({"clients": clients, "brokers": brokers, "target_release": self.target_release})
    }

    /// A block per client: id, software, connections, then a line per API with
    /// the versions used, what the brokers serve and what is flagged; then the brokers.
    pub fn to_text(&self, cat: &Catalogue) -> String {
        let mut out = String::new();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        for c in &self.clients {
            let id = c
                .client_id
                .as_deref()
                .map_or_else(|| "null".to_string(), |b| quote(&text(b)));
            out.push_str(&format!("client {id}\n"));
            let software = match &c.software {
                Some(s) => {
                    let part = |b: &Option<Box<[u8]>>| {
                        b.as_deref()
                            .map_or_else(|| "?".to_string(), |b| sanitize(&text(b)))
                    };
                    format!("{} {}", part(&s.name), part(&s.version))
                }
                None => "unknown (no ApiVersions v3+ request read)".to_string(),
            };
            out.push_str(&format!("  software  {software}\n"));
            let conns = crate::text::number_ranges(&c.conns, MOST_CONN_RANGES);
            out.push_str(&format!("  conns     {conns}\n"));
            let versions_of = |a: &ApiUse| {
                a.versions
                    .iter()
                    .map(|v| format!("v{v}"))
                    .collect::<Vec<String>>()
                    .join(", ")
            };
            let width = c
                .apis
                .iter()
                .map(|a| api_text(cat, a.api_key).chars().count())
                .max()
                .unwrap_or(0);
            let vwidth = c
                .apis
                .iter()
                .map(|a| versions_of(a).chars().count())
                .max()
                .unwrap_or(0);
            for a in &c.apis {
                let name = api_text(cat, a.api_key);
                let versions = versions_of(a);
                let pad = " ".repeat(width - name.chars().count());
                let vpad = " ".repeat(vwidth - versions.chars().count());
                out.push_str(&format!(
                    "  {name}{pad}  {versions}{vpad}  ({})\n",
                    serves_text(a)
                ));
                for o in &a.outside_advertised {
                    match o.advertised {
                        Some(r) => out.push_str(&format!(
                            "    ! v{} is outside what {} advertised ({})\n",
                            o.version,
                            o.broker,
                            range_text(r)
                        )),
                        None => out.push_str(&format!(
                            "    ! v{} sent to {}, which does not advertise {name}\n",
                            o.version, o.broker
                        )),
                    }
                }
                if let Some(r) = &self.target_release {
                    for u in &a.unsupported_in_target {
                        let r = sanitize(r);
                        match u.target_serves.is_empty() {
                            true => out.push_str(&format!("    ! v{} is not served by {r}, which has no {name}: stop using it\n", u.version)),
                            false => {
                                let to: Vec<String> = ranges(&u.target_serves).iter().map(|&r| range_text(r)).collect();
                                out.push_str(&format!("    ! v{} is not served by {r}: move to {}\n", u.version, to.join(", ")));
                            }
                        }
                    }
                }
            }
            out.push('\n');
        }
        out.push_str("brokers\n");
        for b in &self.brokers {
            match &b.advertised {
                None => out.push_str(&format!(
                    "  {}  (no ApiVersions response in the capture)\n",
                    b.address
                )),
                Some(m) => {
                    out.push_str(&format!("  {}  advertises {} APIs:\n", b.address, m.len()));
                    let items: Vec<String> = m
                        .iter()
                        .map(|(&k, &r)| format!("{} {}", api_text(cat, k), range_text(r)))
                        .collect();
                    let mut line = String::from("   ");
                    for (i, item) in items.iter().enumerate() {
                        let piece = if i + 1 < items.len() {
                            format!(" {item},")
                        } else {
                            format!(" {item}")
                        };
                        if line.chars().count() + piece.chars().count() > 100 && line.len() > 3 {
                            out.push_str(&line);
                            out.push('\n');
                            line = String::from("   ");
                        }
                        line.push_str(&piece);
                    }
                    out.push_str(&line);
                    out.push('\n');
                }
            }
        }
        let flagged = self.flagged();
        let outside = self.outside_advertised();
        out.push('\n');
        let count = crate::text::count;
        out.push_str(&format!(
            "{}, {}; {} outside what their broker advertised",
            count(self.clients.len(), "client", "clients"),
            count(self.brokers.len(), "broker", "brokers"),
            count(outside, "request version", "request versions")
        ));
        if let Some(r) = &self.target_release {
            out.push_str(&format!(
                "; {} not served by {}",
                count(flagged, "API version", "API versions"),
                sanitize(r)
            ));
        }
        out.push('\n');
        out
    }
}

/// A client's connections are written as ranges (`0-299`); past this many
/// ranges the rest are counted (`… 12 more`), so the line stays short.
const MOST_CONN_RANGES: usize = 12;

/// An API's name (escaped: names may come from `--defs`), or its key.
fn api_text(cat: &Catalogue, key: i16) -> String {
    cat.api_name(key)
        .map_or_else(|| format!("api {key}"), sanitize)
}

fn range_text((lo, hi): Range) -> String {
    if lo == hi {
        format!("v{lo}")
    } else {
        format!("v{lo}-{hi}")
    }
}

/// Ascending versions as runs of consecutive ones.
pub fn ranges(versions: &[i16]) -> Vec<Range> {
    let mut out: Vec<Range> = Vec::new();
    for &v in versions {
        match out.last_mut() {
            Some((_, hi)) if i32::from(*hi) + 1 == i32::from(v) => *hi = v,
            _ => out.push((v, v)),
        }
    }
    out
}

/// What the brokers an API went to serve of it.
fn serves_text(a: &ApiUse) -> String {
    if a.advertised.is_empty() {
        return "broker's ranges not in the capture".into();
    }
    let distinct: BTreeSet<Option<Range>> = a.advertised.values().copied().collect();
    let one = |r: Option<Range>| r.map_or_else(|| "does not advertise it".to_string(), range_text);
    if distinct.len() == 1 {
        let r = *distinct.iter().next().unwrap_or(&None);
        let who = if a.advertised.len() == 1 {
            "broker"
        } else {
            "brokers"
        };
        return match r {
            Some(r) => format!(
                "{who} {} {}",
                if a.advertised.len() == 1 {
                    "serves"
                } else {
                    "serve"
                },
                range_text(r)
            ),
            None => format!(
                "{who} {}",
                if a.advertised.len() == 1 {
                    "does not advertise it"
                } else {
                    "do not advertise it"
                }
            ),
        };
    }
    let each: Vec<String> = a
        .advertised
        .iter()
        .map(|(b, &r)| format!("{b} {}", one(r)))
        .collect();
    format!("brokers: {}", each.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_make_runs() {
        assert_eq!(ranges(&[3, 4, 5, 7, 9, 10]), vec![(3, 5), (7, 7), (9, 10)]);
        assert_eq!(ranges(&[]), vec![]);
        assert_eq!(ranges(&[i16::MAX]), vec![(i16::MAX, i16::MAX)]);
    }

    #[test]
    fn api_versions_newer_than_served_is_no_fault() {
        assert!(!outside(API_VERSIONS_KEY, 5, 0, 4));
        assert!(outside(0, 12, 0, 11));
        assert!(outside(0, 2, 3, 11));
        assert!(!not_served(API_VERSIONS_KEY, 9, &[0, 1, 2, 3, 4]));
        assert!(not_served(0, 2, &[3, 4, 5]));
        assert!(not_served(0, 2, &[]));
        assert!(!not_served(0, 4, &[3, 4, 5]));
    }

    #[test]
    fn the_catalogue_finds_the_api_versions_fields() {
        let cat = Catalogue::builtin();
        for v in cat.versions(MessageKind::Response, API_VERSIONS_KEY, None) {
            let spec = cat
                .message(MessageKind::Response, API_VERSIONS_KEY, v, None)
                .unwrap();
            let d = response_decls(&spec.fields, v);
            assert!(
                d.error.is_some()
                    && d.keys.is_some()
                    && d.key.is_some()
                    && d.min.is_some()
                    && d.max.is_some(),
                "v{v}: {d:?}"
            );
        }
        let spec = cat
            .message(MessageKind::Request, API_VERSIONS_KEY, 3, None)
            .unwrap();
        assert!(decl_named(&spec.fields, 3, "ClientSoftwareName").is_some());
        assert!(decl_named(&spec.fields, 2, "ClientSoftwareName").is_none());
    }
}
