//! Differential test against an independent implementation: the
//! `kafka-protocol` crate (code generated from the Kafka 4.1 message
//! definitions). For every API key, every 4.1 version and both directions,
//! kwire encodes a body; kafka-protocol decodes it at that version (it must
//! consume every byte) and encodes it again; the bytes must be identical.
//!
//! Versions or APIs that kafka-protocol does not define are skipped, counted
//! and printed (run with `--nocapture` to see the summary).

mod common;

use bytes::Bytes;
use kafka_protocol::protocol::{Decodable, Encodable, Message, Request};
use kwire::decode::Direction;
use kwire::encode::example::smallest_struct;
use kwire::encode::fields::default_value;
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_body, FrameSpec};
use kwire::schema::{Catalogue, FieldSpec, FieldType, MessageKind, MessageSpec, Primitive};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The release whose definitions both sides are generated from.
const RELEASE: &str = "4.1";

// ---------------------------------------------------------------------------
// The oracle: kafka-protocol, dispatched on the API key.
// ---------------------------------------------------------------------------

/// Decode `body` as `T` at `version`, check that nothing is left over, encode
/// it again. `None` when `T` does not define `version`.
fn roundtrip_as<T: Message + Decodable + Encodable>(
    version: i16,
    body: &[u8],
) -> Option<Result<Vec<u8>, String>> {
    if version < T::VERSIONS.min || version > T::VERSIONS.max {
        return None;
    }
    let run = || -> Result<Vec<u8>, String> {
        let mut buf = Bytes::copy_from_slice(body);
        let msg =
            T::decode(&mut buf, version).map_err(|e| format!("kafka-protocol decode: {e:#}"))?;
        if !buf.is_empty() {
            return Err(format!(
                "kafka-protocol decode left {} of {} bytes unread",
                buf.len(),
                body.len()
            ));
        }
        let mut out = Vec::with_capacity(body.len());
        msg.encode(&mut out, version)
            .map_err(|e| format!("kafka-protocol encode: {e:#}"))?;
        Ok(out)
    };
    Some(match catch_unwind(AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(p) => {
            let what = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("kafka-protocol panicked: {what}"))
        }
    })
}

/// One dispatch arm per kafka-protocol request type; the response type is
/// `Request::Response` and the key `Request::KEY`, so nothing is typed twice.
macro_rules! oracle_dispatch {
    ($($req:ident),* $(,)?) => {
        /// The API keys the dispatch below knows.
        const ORACLE_KEYS: &[i16] = &[$(<kafka_protocol::messages::$req as Request>::KEY),*];

        /// Decode then re-encode a message BODY (no size, no header) with
        /// kafka-protocol; `None` when it does not know the API key or version.
        fn oracle_roundtrip(api_key: i16, version: i16, is_request: bool, body: &[u8]) -> Option<Result<Vec<u8>, String>> {
            $(
                if api_key == <kafka_protocol::messages::$req as Request>::KEY {
                    return if is_request {
                        roundtrip_as::<kafka_protocol::messages::$req>(version, body)
                    } else {
                        roundtrip_as::<<kafka_protocol::messages::$req as Request>::Response>(version, body)
                    };
                }
            )*
            None
        }
    };
}

oracle_dispatch!(
    ProduceRequest,
    FetchRequest,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetCommitRequest,
    OffsetFetchRequest,
    FindCoordinatorRequest,
    JoinGroupRequest,
    HeartbeatRequest,
    LeaveGroupRequest,
    SyncGroupRequest,
    DescribeGroupsRequest,
    ListGroupsRequest,
    SaslHandshakeRequest,
    ApiVersionsRequest,
    CreateTopicsRequest,
    DeleteTopicsRequest,
    DeleteRecordsRequest,
    InitProducerIdRequest,
    OffsetForLeaderEpochRequest,
    AddPartitionsToTxnRequest,
    AddOffsetsToTxnRequest,
    EndTxnRequest,
    WriteTxnMarkersRequest,
    TxnOffsetCommitRequest,
    DescribeAclsRequest,
    CreateAclsRequest,
    DeleteAclsRequest,
    DescribeConfigsRequest,
    AlterConfigsRequest,
    AlterReplicaLogDirsRequest,
    DescribeLogDirsRequest,
    SaslAuthenticateRequest,
    CreatePartitionsRequest,
    CreateDelegationTokenRequest,
    RenewDelegationTokenRequest,
    ExpireDelegationTokenRequest,
    DescribeDelegationTokenRequest,
    DeleteGroupsRequest,
    ElectLeadersRequest,
    IncrementalAlterConfigsRequest,
    AlterPartitionReassignmentsRequest,
    ListPartitionReassignmentsRequest,
    OffsetDeleteRequest,
    DescribeClientQuotasRequest,
    AlterClientQuotasRequest,
    DescribeUserScramCredentialsRequest,
    AlterUserScramCredentialsRequest,
    VoteRequest,
    BeginQuorumEpochRequest,
    EndQuorumEpochRequest,
    DescribeQuorumRequest,
    AlterPartitionRequest,
    UpdateFeaturesRequest,
    EnvelopeRequest,
    FetchSnapshotRequest,
    DescribeClusterRequest,
    DescribeProducersRequest,
    BrokerRegistrationRequest,
    BrokerHeartbeatRequest,
    UnregisterBrokerRequest,
    DescribeTransactionsRequest,
    ListTransactionsRequest,
    AllocateProducerIdsRequest,
    ConsumerGroupHeartbeatRequest,
    ConsumerGroupDescribeRequest,
    ControllerRegistrationRequest,
    GetTelemetrySubscriptionsRequest,
    PushTelemetryRequest,
    AssignReplicasToDirsRequest,
    ListConfigResourcesRequest,
    DescribeTopicPartitionsRequest,
    ShareGroupHeartbeatRequest,
    ShareGroupDescribeRequest,
    ShareFetchRequest,
    ShareAcknowledgeRequest,
    AddRaftVoterRequest,
    RemoveRaftVoterRequest,
    UpdateRaftVoterRequest,
    InitializeShareGroupStateRequest,
    ReadShareGroupStateRequest,
    WriteShareGroupStateRequest,
    DeleteShareGroupStateRequest,
    ReadShareGroupStateSummaryRequest,
    DescribeShareGroupOffsetsRequest,
    AlterShareGroupOffsetsRequest,
    DeleteShareGroupOffsetsRequest,
);

// ---------------------------------------------------------------------------
// The comparison loop.
// ---------------------------------------------------------------------------

#[derive(Default)]
struct Tally {
    /// (api, version, direction, body) combinations whose bytes matched.
    compared: usize,
    /// Combinations kafka-protocol does not define: "Name request" → versions.
    skipped: BTreeMap<String, Vec<i16>>,
    skipped_count: usize,
    failures: Vec<String>,
}

impl Tally {
    fn report(&self, test: &str) {
        println!(
            "{test}: {} bodies identical after the kafka-protocol round trip",
            self.compared
        );
        println!(
            "{test}: {} skipped (kafka-protocol does not define them):",
            self.skipped_count
        );
        for (what, versions) in &self.skipped {
            println!(
                "  {what}: v{}",
                versions
                    .iter()
                    .map(i16::to_string)
                    .collect::<Vec<_>>()
                    .join(", v")
            );
        }
        println!("{test}: {} failures", self.failures.len());
    }

    fn assert_clean(&self, min_compared: usize) {
        // Failures shown in full; `KWIRE_ORACLE_SHOW` overrides the default 5.
        let show = std::env::var("KWIRE_ORACLE_SHOW")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(5);
        if !self.failures.is_empty() {
            panic!(
                "{} of {} bodies differ from kafka-protocol; the first {}:\n\n{}",
                self.failures.len(),
                self.failures.len() + self.compared,
                self.failures.len().min(show),
                self.failures
                    .iter()
                    .take(show)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("\n\n")
            );
        }
        assert!(
            self.compared >= min_compared,
            "only {} bodies compared (expected at least {min_compared}): is the catalogue or the oracle missing APIs?",
            self.compared
        );
    }
}

/// First differing byte offset of two byte strings.
fn first_difference(a: &[u8], b: &[u8]) -> usize {
    a.iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()))
}

/// For every API key, every version in 4.1 and both directions, encode the
/// bodies `bodies` makes with kwire and compare with kafka-protocol's round trip.
fn compare_all(bodies: impl Fn(&MessageSpec, i16) -> Vec<(String, Map<String, Value>)>) -> Tally {
    let cat = Catalogue::builtin();
    let mut t = Tally::default();
    for key in cat.api_keys() {
        for direction in [Direction::Request, Direction::Response] {
            let (kind, is_request) = match direction {
                Direction::Request => (MessageKind::Request, true),
                Direction::Response => (MessageKind::Response, false),
            };
            for version in cat.versions(kind, key, Some(RELEASE)) {
                let fs = FrameSpec {
                    direction,
                    api_key: key,
                    version,
                    release: Some(RELEASE),
                };
                let spec = match message_spec(cat, &fs) {
                    Ok(s) => s,
                    Err(e) => {
                        t.failures.push(format!(
                            "key {key} {} v{version}: no message spec: {}",
                            kind.as_str(),
                            e.message
                        ));
                        continue;
                    }
                };
                let what = format!("{} (key {key}) v{version}", spec.name);
                for (label, body) in bodies(spec, version) {
                    let bytes = match encode_body(spec, version, &body) {
                        Ok(b) => b,
                        Err(e) => {
                            t.failures.push(format!(
                                "{what} [{label}]: kwire cannot encode its own body: {} {}\n  body: {}",
                                e.path,
                                e.message,
                                Value::Object(body.clone())
                            ));
                            continue;
                        }
                    };
                    match oracle_roundtrip(key, version, is_request, &bytes) {
                        None => {
                            t.skipped_count += 1;
                            let v = t.skipped.entry(format!("{} (key {key})", spec.name)).or_default();
                            if !v.contains(&version) {
                                v.push(version);
                            }
                        }
                        Some(Ok(again)) if again == bytes => t.compared += 1,
                        Some(Ok(again)) => t.failures.push(format!(
                            "{what} [{label}]: re-encoded bytes differ at offset {} ({} vs {} bytes)\n  kwire:          {}\n  kafka-protocol: {}\n  body: {}",
                            first_difference(&bytes, &again),
                            bytes.len(),
                            again.len(),
                            hex::encode(&bytes),
                            hex::encode(&again),
                            Value::Object(body.clone())
                        )),
                        Some(Err(e)) => t.failures.push(format!(
                            "{what} [{label}]: {e}\n  kwire: {}\n  body: {}",
                            hex::encode(&bytes),
                            Value::Object(body.clone())
                        )),
                    }
                }
            }
        }
    }
    t
}

// ---------------------------------------------------------------------------
// Tests.
// ---------------------------------------------------------------------------

/// The dispatch table covers every API key kafka-protocol itself enumerates
/// (so a new kafka-protocol release cannot silently shrink the comparison).
#[test]
fn oracle_dispatch_covers_every_kafka_protocol_api_key() {
    let missing: Vec<i16> = kafka_protocol::messages::ApiKey::iter()
        .map(|k| k as i16)
        .filter(|k| !ORACLE_KEYS.contains(k))
        .collect();
    assert!(
        missing.is_empty(),
        "oracle_dispatch! lacks kafka-protocol API keys {missing:?}"
    );
}

#[test]
fn every_example_body_round_trips_through_kafka_protocol() {
    let t = compare_all(|spec, version| {
        vec![(
            "smallest".to_string(),
            smallest_struct(&spec.fields, version),
        )]
    });
    t.report("smallest bodies");
    // 4.1 defines 584 (api, version, direction) triples; kafka-protocol 0.18
    // lacks 7 (StreamsGroup*, and the unstable InitProducerId v6, OffsetCommit
    // v10 and OffsetFetch v10 requests), leaving 577 compared.
    t.assert_clean(550);
}

// ---------------------------------------------------------------------------
// Default-valued tagged fields.
//
// Kafka's encoders (Java's generated code and kafka-protocol alike) write a
// tagged field only when its value differs from the field's default, so a
// body that spells out a tagged field AT its default cannot survive a decode
// and re-encode byte for byte: the oracle drops it. That is the protocol's
// canonical form, not a kwire bug (kwire writes what it is given), so the
// random bodies are normalised before encoding: such tagged fields are removed.
// ---------------------------------------------------------------------------

/// Whether `v` is field `f`'s default at `version`, as Kafka's encoders judge it
/// (a struct is default when every member is absent or default).
fn is_default(f: &FieldSpec, version: i16, v: &Value) -> bool {
    let d = default_value(f, version);
    if v.is_null() || d.is_null() {
        return v.is_null() && d.is_null();
    }
    match &f.ty {
        FieldType::Array(_) => v.as_array().is_some_and(|a| a.is_empty()),
        FieldType::Struct(_) => v.as_object().is_some_and(|o| {
            o.get("_unknown_tags")
                .and_then(Value::as_object)
                .is_none_or(|u| u.is_empty())
                && f.fields
                    .iter()
                    .filter(|sub| sub.versions.contains(version))
                    .all(|sub| o.get(&sub.name).is_none_or(|x| is_default(sub, version, x)))
        }),
        FieldType::Primitive(Primitive::Uuid) => {
            let parse = |x: &Value| x.as_str().and_then(|s| uuid::Uuid::try_parse(s).ok());
            parse(v).is_some() && parse(v) == parse(&d)
        }
        FieldType::Primitive(Primitive::Bytes | Primitive::Records) => {
            v.as_str().is_some_and(|s| s.trim().is_empty())
        }
        FieldType::Primitive(_) => match (v, &d) {
            (Value::Number(a), Value::Number(b)) => {
                if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
                    x == y
                } else if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
                    x == y
                } else {
                    a.as_f64() == b.as_f64()
                }
            }
            _ => v == &d,
        },
    }
}

/// Remove, at every depth, tagged fields whose value is their default; counts them.
fn strip_default_tagged(
    fields: &[FieldSpec],
    version: i16,
    obj: &mut Map<String, Value>,
    stripped: &Cell<usize>,
) {
    for f in fields.iter().filter(|f| f.versions.contains(version)) {
        let tagged = f.is_tagged_in(version);
        if tagged && obj.get(&f.name).is_some_and(|v| is_default(f, version, v)) {
            obj.remove(&f.name);
            stripped.set(stripped.get() + 1);
            continue;
        }
        match (&f.ty, obj.get_mut(&f.name)) {
            (FieldType::Struct(_), Some(Value::Object(o))) => {
                strip_default_tagged(&f.fields, version, o, stripped)
            }
            (FieldType::Array(inner), Some(Value::Array(items))) if inner.is_struct() => {
                for item in items.iter_mut() {
                    if let Value::Object(o) = item {
                        strip_default_tagged(&f.fields, version, o, stripped);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Seeds per (api, version, direction); `KWIRE_ORACLE_SEEDS` overrides.
fn seed_count() -> u64 {
    std::env::var("KWIRE_ORACLE_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
}

#[test]
fn random_bodies_round_trip_through_kafka_protocol() {
    let n = seed_count();
    let stripped = Cell::new(0usize);
    let t = compare_all(|spec, version| {
        (0..n)
            .map(|i| {
                // Distinct, reproducible seeds per message, version and direction.
                let dir = if spec.kind == MessageKind::Request {
                    0
                } else {
                    1
                };
                let seed = ((spec.api_key.unwrap_or(-1) as u16 as u64) << 32)
                    | ((version as u16 as u64) << 16)
                    | (dir << 8)
                    | i;
                let mut body = common::random_body::random_body(spec, version, seed);
                strip_default_tagged(&spec.fields, version, &mut body, &stripped);
                (format!("seed {seed:#x}"), body)
            })
            .collect()
    });
    t.report("random bodies");
    println!(
        "random bodies: {} default-valued tagged fields removed before encoding",
        stripped.get()
    );
    t.assert_clean(550 * n as usize);
}
