//! An instance with values a real client or broker would send, beside the
//! smallest legal one ([`super::example`]): topic and group names, acks -1,
//! a 30 s timeout, offsets and epochs past zero, timestamps near the
//! documentation's date. A field gets its value from its entity type when
//! the definitions give one (a topic name, a group id), else from the
//! table of field names below; any other field keeps its smallest value.

use super::example::smallest_struct;
use crate::schema::{FieldSpec, FieldType, Primitive};
use serde_json::{json, Map, Value};

/// 2026-12-01T12:00:00Z: the examples' "now", fixed so pages do not change
/// from one build to the next.
pub const NOW_MS: i64 = 1_796_126_400_000;

/// Values by the definitions' entity types.
const BY_ENTITY: &[(&str, &str)] = &[
    ("topicName", "\"orders\""),
    ("groupId", "\"payments-service\""),
    ("transactionalId", "\"orders-txn-1\""),
    ("producerId", "4001"),
    ("brokerId", "1"),
];

/// Values by field name (the same name means the same thing across the
/// definitions); `NOW` stands for [`NOW_MS`].
const BY_NAME: &[(&str, &str)] = &[
    ("Acks", "-1"),
    ("TimeoutMs", "30000"),
    ("MaxWaitMs", "500"),
    ("MinBytes", "1"),
    ("MaxBytes", "52428800"),
    ("PartitionMaxBytes", "1048576"),
    ("IsolationLevel", "1"),
    ("SessionTimeoutMs", "45000"),
    ("RebalanceTimeoutMs", "300000"),
    ("GenerationId", "3"),
    ("MemberEpoch", "3"),
    ("LeaderEpoch", "5"),
    ("CurrentLeaderEpoch", "5"),
    ("LastFetchedEpoch", "5"),
    ("ProducerEpoch", "0"),
    (
        "MemberId",
        "\"consumer-1-7d1c2f0e-5b0a-4d43-9a57-3f1c8e2b6a10\"",
    ),
    ("ProtocolType", "\"consumer\""),
    ("ProtocolName", "\"range\""),
    ("ClientId", "\"orders-service\""),
    ("ClientSoftwareName", "\"apache-kafka-java\""),
    ("ClientSoftwareVersion", "\"3.9.0\""),
    ("Host", "\"broker-1.example.com\""),
    ("Port", "9092"),
    ("NodeId", "1"),
    ("LeaderId", "1"),
    ("ControllerId", "1"),
    ("Rack", "\"eu-west-1a\""),
    ("ClusterId", "\"kwire-docs-cluster\""),
    ("HighWatermark", "1042"),
    ("LastStableOffset", "1042"),
    ("LogStartOffset", "0"),
    ("BaseOffset", "1040"),
    ("FetchOffset", "1040"),
    ("CommittedOffset", "1040"),
    ("Offset", "1040"),
    ("Timestamp", "NOW"),
    ("LogAppendTimeMs", "NOW"),
    ("MaxTimestamp", "NOW"),
    ("CommitTimestamp", "NOW"),
    ("TopicId", "\"7c0ec6c1-6e4b-4a8e-9a4f-0b3c0f6b2d11\""),
];

/// A header as a client sends it: its client id and a correlation id past zero.
pub(crate) fn realistic_header(header: &mut Map<String, Value>) {
    header.insert("CorrelationId".into(), json!(7));
    if header.contains_key("ClientId") {
        header.insert("ClientId".into(), json!("orders-service"));
    }
}

/// The instance of a struct's untagged fields at `version` with realistic values.
pub fn realistic_struct(fields: &[FieldSpec], version: i16) -> Map<String, Value> {
    let mut obj = smallest_struct(fields, version);
    for f in fields.iter().filter(|f| f.is_regular_in(version)) {
        let value = match &f.ty {
            FieldType::Primitive(p) => value_of(f, *p),
            FieldType::Struct(_) => Some(Value::Object(realistic_struct(&f.fields, version))),
            FieldType::Array(inner) => match inner.as_ref() {
                FieldType::Struct(_) => Some(json!([realistic_struct(&f.fields, version)])),
                FieldType::Primitive(p) => value_of(f, *p).map(|v| json!([v])),
                FieldType::Array(_) => None,
            },
        };
        if let Some(v) = value {
            obj.insert(f.name.clone(), v);
        }
    }
    obj
}

/// A primitive field's value from the tables, when they have one that fits its type.
fn value_of(f: &FieldSpec, p: Primitive) -> Option<Value> {
    let text = f
        .entity_type
        .as_deref()
        .and_then(|e| BY_ENTITY.iter().find(|(k, _)| *k == e))
        .or_else(|| BY_NAME.iter().find(|(k, _)| *k == f.name))
        .map(|(_, v)| *v)?;
    let value: Value = if text == "NOW" {
        json!(NOW_MS)
    } else {
        serde_json::from_str(text).ok()?
    };
    let n = value.as_i64();
    let fits = match p {
        Primitive::String => value.is_string(),
        Primitive::Uuid => value
            .as_str()
            .is_some_and(|u| uuid::Uuid::parse_str(u).is_ok()),
        Primitive::Int8 => n.is_some_and(|n| i8::try_from(n).is_ok()),
        Primitive::Int16 => n.is_some_and(|n| i16::try_from(n).is_ok()),
        Primitive::Uint16 => n.is_some_and(|n| u16::try_from(n).is_ok()),
        Primitive::Int32 => n.is_some_and(|n| i32::try_from(n).is_ok()),
        Primitive::Uint32 => n.is_some_and(|n| u32::try_from(n).is_ok()),
        Primitive::Int64 => n.is_some(),
        _ => false,
    };
    fits.then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Catalogue, MessageKind};

    #[test]
    fn a_produce_request_reads_like_one() {
        let spec = Catalogue::builtin()
            .message(MessageKind::Request, 0, 9, None)
            .unwrap();
        let body = Value::Object(realistic_struct(&spec.fields, 9));
        assert_eq!(body["Acks"], -1);
        assert_eq!(body["TimeoutMs"], 30000);
        assert_eq!(body["TransactionalId"], "orders-txn-1");
        assert_eq!(body["TopicData"][0]["Name"], "orders");
        assert_eq!(body["TopicData"][0]["PartitionData"][0]["Index"], 0);
    }

    #[test]
    fn values_that_do_not_fit_the_type_are_left_smallest() {
        // An int8 cannot hold 52428800; a bool takes nothing from the table.
        let f: FieldSpec =
            serde_json::from_value(json!({"name": "MaxBytes", "type": "int8", "versions": "0+"}))
                .unwrap();
        assert_eq!(value_of(&f, Primitive::Int8), None);
        let f: FieldSpec =
            serde_json::from_value(json!({"name": "MaxBytes", "type": "int32", "versions": "0+"}))
                .unwrap();
        assert_eq!(value_of(&f, Primitive::Int32), Some(json!(52428800)));
    }
}
