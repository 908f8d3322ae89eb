//! Teaching the encoding: version and release diffs with their exact fields and
//! sizes, explanations checked against the decoder on the same bytes, and
//! primitives that round-trip over edge values.

mod common;

use common::frame_spec;

use bytes::Bytes;
use common::batches::{batch, compress, legacy_message, Rec};
use common::random_body::random_body;
use kwire::decode::fields::Context;
use kwire::decode::records::BatchDecoder;
use kwire::decode::{decode_frame, DecodeOptions, Direction, Frame, Node, Role, Value};
use kwire::encode::frame::message_spec;
use kwire::encode::{encode_frame, example_header, FrameSpec};
use kwire::schema::diff::{Change, FieldAt};
use kwire::schema::{Catalogue, MessageKind};
use kwire::teach::align::{byte_marks, Mark, Side};
use kwire::teach::compare::Cause;
use kwire::teach::explain::{explain_node, header_reason, render_explained};
use kwire::teach::primitive::{decode, encode, parse_value, WireType};
use kwire::teach::release_diff::{names_for, release_diff, DefinitionDiff, ReleaseDiff};
use kwire::teach::version_diff::{flexible_switch, version_diff, DirectionDiff, VersionDiff};
use serde_json::{json, Value as Json};

fn cat() -> &'static Catalogue {
    Catalogue::builtin()
}

/// A field of a flexible message as `schema::diff` lays it out.
fn field(
    path: &str,
    ty: &str,
    tag: Option<u32>,
    default: Option<&str>,
    ignorable: bool,
) -> FieldAt {
    FieldAt {
        path: path.into(),
        ty: ty.into(),
        nullable: false,
        tag,
        default: default.map(str::to_string),
        compact: true,
        ignorable,
    }
}

fn added(path: &str, ty: &str, tag: Option<u32>, default: Option<&str>, ignorable: bool) -> Change {
    Change::Added {
        field: field(path, ty, tag, default, ignorable),
    }
}

fn vdiff(api: &str, from: i16, to: i16, compare: bool) -> VersionDiff {
    version_diff(
        cat(),
        cat().resolve_api(api).unwrap(),
        from,
        to,
        None,
        compare,
    )
    .unwrap()
}

fn dir(d: &VersionDiff, kind: MessageKind) -> &DirectionDiff {
    d.directions.iter().find(|x| x.kind == kind).unwrap()
}

/// The leaves whose bytes differ: (path, mark).
fn marked(d: &DirectionDiff) -> Vec<(String, Mark)> {
    d.example
        .alignment
        .iter()
        .filter(|x| x.leaf && x.mark != Mark::Same)
        .map(|x| (x.path.clone(), x.mark))
        .collect()
}

fn owned(v: &[(&str, Mark)]) -> Vec<(String, Mark)> {
    v.iter().map(|(p, m)| (p.to_string(), *m)).collect()
}

#[test]
fn diff_write_share_group_state_v0_v1_adds_delivery_complete_count() {
    let d = vdiff("WriteShareGroupState", 0, 1, false);
    let req = dir(&d, MessageKind::Request);
    assert_eq!(
        req.changes,
        vec![added(
            "Topics.Partitions.DeliveryCompleteCount",
            "int32",
            None,
            Some("-1"),
            true
        )]
    );
    assert_eq!(
        (req.header.from, req.header.to, req.header.same_rule),
        (2, 2, true)
    );
    assert_eq!((req.example.from_size, req.example.to_size), (78, 82));
    assert_eq!(
        marked(req),
        owned(&[
            ("frame.size", Mark::Changed),
            ("header.request_api_version", Mark::Changed),
            (
                "body.Topics[0].Partitions[0].DeliveryCompleteCount",
                Mark::Added
            ),
        ])
    );
    let new = req
        .example
        .alignment
        .iter()
        .find(|x| x.mark == Mark::Added)
        .unwrap();
    let place = new.b.as_ref().unwrap();
    assert_eq!(
        (place.offset, place.len, place.hex.as_str()),
        (0x36, 4, "00 00 00 00")
    );
    let marks = byte_marks(&req.example.alignment, Side::B, 82);
    assert!(marks[0x36..0x3a].iter().all(|m| *m == Mark::Added));
    assert!(
        marks[0x3a..].iter().all(|m| *m == Mark::Same),
        "everything after the new field is the same bytes, shifted"
    );

    let resp = dir(&d, MessageKind::Response);
    assert!(resp.changes.is_empty());
    assert_eq!((resp.header.from, resp.header.to), (1, 1));
    assert_eq!((resp.example.from_size, resp.example.to_size), (37, 37));
    assert!(
        marked(resp).is_empty(),
        "the response is byte for byte the same"
    );
}

#[test]
fn diff_metadata_v8_v9_is_the_flexible_switch() {
    assert_eq!(flexible_switch(cat(), 3, None), Some((8, 9)));
    let d = vdiff("Metadata", 8, 9, true);
    let flexible = vec![Change::FlexibleChanged {
        from: false,
        to: true,
    }];
    let req = dir(&d, MessageKind::Request);
    assert_eq!(req.changes, flexible);
    assert_eq!((req.header.from, req.header.to), (1, 2));
    assert!(
        req.header
            .to_reason
            .contains("client_id keeps its int16 length"),
        "{}",
        req.header.to_reason
    );
    assert_eq!((req.example.from_size, req.example.to_size), (23, 22));
    assert_eq!(
        marked(req),
        owned(&[
            ("frame.size", Mark::Changed),
            ("header.request_api_version", Mark::Changed),
            ("header.tagged_fields", Mark::Added),
            ("body.Topics.length", Mark::Changed),
            ("body.Topics[0].Name", Mark::Changed),
            ("body.Topics[0].tagged_fields", Mark::Added),
            ("body.tagged_fields", Mark::Added),
        ])
    );
    // The same values at both versions: where the -1 byte comes from.
    let same = req.same_values.as_ref().unwrap();
    assert_eq!((same.pair.from_size, same.pair.to_size), (23, 22));
    assert_eq!(
        same.body,
        json!({"Topics": [{"Name": ""}], "AllowAutoTopicCreation": false, "IncludeClusterAuthorizedOperations": false, "IncludeTopicAuthorizedOperations": false})
    );
    let cause = |what: &str, bytes| Cause {
        what: what.into(),
        bytes,
    };
    assert_eq!(
        same.causes,
        vec![
            cause("tagged-field sections", 3),
            cause("length and count prefixes", -4)
        ]
    );
    let topics = same
        .pair
        .alignment
        .iter()
        .find(|x| x.path == "body.Topics.length")
        .unwrap();
    let (a, b) = (topics.a.as_ref().unwrap(), topics.b.as_ref().unwrap());
    assert_eq!(
        (a.offset, a.hex.as_str(), b.offset, b.hex.as_str()),
        (0x0e, "00 00 00 01", 0x0f, "02"),
        "int32 count 1 → uvarint n+1 = 2"
    );

    let resp = dir(&d, MessageKind::Response);
    assert_eq!(resp.changes, flexible);
    assert_eq!((resp.header.from, resp.header.to), (0, 1));
    assert_eq!((resp.example.from_size, resp.example.to_size), (93, 76));
    let same = resp.same_values.as_ref().unwrap();
    assert_eq!(
        same.causes,
        vec![
            cause("tagged-field sections", 5),
            cause("length and count prefixes", -22)
        ]
    );
}

#[test]
fn diff_api_versions_v2_v3_keeps_the_response_header_at_v0() {
    let d = vdiff("ApiVersions", 2, 3, false);
    let req = dir(&d, MessageKind::Request);
    assert_eq!(
        req.changes,
        vec![
            Change::FlexibleChanged {
                from: false,
                to: true
            },
            added("ClientSoftwareName", "string", None, None, true),
            added("ClientSoftwareVersion", "string", None, None, true),
        ]
    );
    assert_eq!(
        (
            req.header.from,
            req.header.to,
            req.example.from_size,
            req.example.to_size
        ),
        (1, 2, 14, 18)
    );
    let resp = dir(&d, MessageKind::Response);
    assert_eq!(
        (resp.header.from, resp.header.to, resp.header.same_rule),
        (0, 0, true)
    );
    assert!(
        resp.header
            .to_reason
            .contains("ApiVersions responses always use header v0"),
        "{}",
        resp.header.to_reason
    );
    assert_eq!((resp.example.from_size, resp.example.to_size), (24, 23));
    let tagged: Vec<(&str, Option<u32>)> = resp
        .changes
        .iter()
        .filter_map(|c| match c {
            Change::Added { field } if !field.path.contains('.') => {
                Some((field.path.as_str(), field.tag))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        tagged,
        vec![
            ("SupportedFeatures", Some(0)),
            ("FinalizedFeaturesEpoch", Some(1)),
            ("FinalizedFeatures", Some(2)),
            ("ZkMigrationReady", Some(3))
        ]
    );
}

fn rdiff(name: Option<&str>, from: &str, to: &str) -> ReleaseDiff {
    release_diff(cat(), &names_for(cat(), name).unwrap(), from, to).unwrap()
}

fn def<'a>(d: &'a ReleaseDiff, name: &str) -> &'a DefinitionDiff {
    d.definitions
        .iter()
        .find(|x| x.name == name)
        .unwrap_or_else(|| panic!("{name} does not differ"))
}

#[test]
fn releases_4_1_to_4_2_write_share_group_state_gains_v1() {
    let d = rdiff(Some("WriteShareGroupState"), "4.1", "4.2");
    let names: Vec<&str> = d.definitions.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "WriteShareGroupStateRequest",
            "WriteShareGroupStateResponse"
        ]
    );
    for (name, changes, size) in [
        (
            "WriteShareGroupStateRequest",
            // Ignorable: 4.2 writes it as the string "true", which Kafka reads as true.
            vec![added(
                "Topics.Partitions.DeliveryCompleteCount",
                "int32",
                None,
                Some("-1"),
                true,
            )],
            67,
        ),
        ("WriteShareGroupStateResponse", vec![], 28),
    ] {
        let x = def(&d, name);
        assert_eq!(
            (x.versions_from.as_slice(), x.versions_to.as_slice()),
            (&[0][..], &[0, 1][..]),
            "{name}"
        );
        assert_eq!(
            (x.added_versions.as_slice(), x.removed_versions.as_slice()),
            (&[1][..], &[][..])
        );
        assert!(x.now_stable.is_empty() && x.now_unstable.is_empty());
        assert_eq!(x.versions.len(), 1, "{name}: v0 is unchanged");
        let v1 = &x.versions[0];
        assert_eq!(
            (v1.version, v1.new, v1.against, &v1.changes),
            (1, true, Some(0), &changes),
            "{name}"
        );
        assert_eq!(
            (v1.body_size_from, v1.body_size_to),
            (None, Some(size)),
            "{name}: smallest body"
        );
    }
}

#[test]
fn releases_4_2_to_4_3_write_share_group_state_is_unchanged() {
    // 4.2 writes DeliveryCompleteCount's ignorable as the string "true" and
    // 4.3 as the boolean: Kafka reads both as true, so nothing changed.
    let d = rdiff(Some("WriteShareGroupState"), "4.2", "4.3");
    assert!(d.definitions.is_empty(), "{:?}", d.definitions);
}

#[test]
fn releases_4_0_to_4_1_write_share_group_state_becomes_stable() {
    let d = rdiff(Some("WriteShareGroupState"), "4.0", "4.1");
    for name in [
        "WriteShareGroupStateRequest",
        "WriteShareGroupStateResponse",
    ] {
        let x = def(&d, name);
        assert_eq!(
            (
                x.now_stable.as_slice(),
                x.added_versions.len(),
                x.versions.len()
            ),
            (&[0][..], 0, 0),
            "{name}"
        );
    }
}

#[test]
fn releases_4_1_to_4_2_share_state_records_gain_a_tagged_delivery_complete_count() {
    for (name, size) in [("ShareSnapshotValue", 58), ("ShareUpdateValue", 38)] {
        let d = rdiff(Some(name), "4.1", "4.2");
        assert_eq!(d.definitions.len(), 1, "{name}");
        let x = def(&d, name);
        assert_eq!(
            (x.kind_to, x.versions_to.as_slice(), x.added_versions.len()),
            (Some(MessageKind::CoordinatorValue), &[0][..], 0)
        );
        assert_eq!(x.versions.len(), 1);
        let v0 = &x.versions[0];
        assert_eq!(
            v0.changes,
            vec![added(
                "DeliveryCompleteCount",
                "int32",
                Some(0),
                Some("-1"),
                false
            )],
            "{name}"
        );
        // Absent at its default, a tagged field costs nothing.
        assert_eq!(
            (v0.new, v0.body_size_from, v0.body_size_to),
            (false, Some(size), Some(size)),
            "{name}"
        );
    }
}

#[test]
fn releases_3_9_to_4_0_remove_old_versions_and_the_zookeeper_apis() {
    let d = rdiff(None, "3.9", "4.0");
    let produce = def(&d, "ProduceRequest");
    assert_eq!(
        (
            produce.removed_versions.as_slice(),
            produce.added_versions.as_slice()
        ),
        (&[0, 1, 2][..], &[12][..])
    );
    assert_eq!(
        produce
            .versions
            .iter()
            .map(|v| (v.version, v.changes.len()))
            .collect::<Vec<_>>(),
        vec![(12, 0)],
        "v12 changes no field"
    );
    let fetch = def(&d, "FetchRequest");
    assert_eq!(
        (
            fetch.removed_versions.as_slice(),
            fetch.added_versions.as_slice()
        ),
        (&[0, 1, 2, 3][..], &[][..])
    );
    let retired: Vec<&str> = d
        .definitions
        .iter()
        .filter(|x| !x.versions_from.is_empty() && x.versions_to.is_empty())
        .map(|x| x.name.as_str())
        .collect();
    assert_eq!(
        retired,
        [
            "LeaderAndIsrRequest",
            "StopReplicaRequest",
            "UpdateMetadataRequest",
            "ControlledShutdownRequest",
            "LeaderAndIsrResponse",
            "StopReplicaResponse",
            "UpdateMetadataResponse",
            "ControlledShutdownResponse",
        ]
    );
    let lost: Vec<(&str, Vec<i16>)> = d
        .definitions
        .iter()
        .filter(|x| {
            x.kind_from == Some(MessageKind::Request)
                && !x.removed_versions.is_empty()
                && !x.versions_to.is_empty()
        })
        .map(|x| {
            (
                x.name.strip_suffix("Request").unwrap(),
                x.removed_versions.clone(),
            )
        })
        .collect();
    let expected: Vec<(&str, Vec<i16>)> = vec![
        ("Produce", vec![0, 1, 2]),
        ("Fetch", vec![0, 1, 2, 3]),
        ("ListOffsets", vec![0]),
        ("OffsetCommit", vec![0, 1]),
        ("OffsetFetch", vec![0]),
        ("CreateTopics", vec![0, 1]),
        ("DeleteTopics", vec![0]),
        ("OffsetForLeaderEpoch", vec![0, 1]),
        ("WriteTxnMarkers", vec![0]),
        ("DescribeAcls", vec![0]),
        ("CreateAcls", vec![0]),
        ("DeleteAcls", vec![0]),
        ("DescribeConfigs", vec![0]),
        ("AlterReplicaLogDirs", vec![0]),
        ("DescribeLogDirs", vec![0]),
        ("CreateDelegationToken", vec![0]),
        ("RenewDelegationToken", vec![0]),
        ("ExpireDelegationToken", vec![0]),
        ("DescribeDelegationToken", vec![0]),
        ("AlterPartition", vec![0, 1]),
    ];
    assert_eq!(lost, expected);
}

// ---- explanations, checked against the decoder ----

/// Whether a node holds a value of its own (not a container).
fn scalar(v: &Value) -> bool {
    !matches!(v, Value::None | Value::Array(_) | Value::Struct(_))
}

/// Every node with a value of its own is explained, and the explanation,
/// worked out from its bytes, arrives at the decoder's value.
fn check(node: &Node, parent: Option<&Node>, buf: &[u8], what: &str, checked: &mut usize) {
    if node.error().is_none() && scalar(&node.value) && node.role != Role::Decompressed {
        let e = explain_node(node, parent, buf).unwrap_or_else(|| {
            panic!(
                "{what}: {} {} at 0x{:x} is not explained",
                node.name, node.ty, node.offset
            )
        });
        assert_eq!(
            e.value, node.value,
            "{what}: {} {} at 0x{:x}: {:?}",
            node.name, node.ty, node.offset, e.lines
        );
        assert!(!e.lines.is_empty());
        *checked += 1;
    }
    let inner: &[u8] = match (&node.value, node.role) {
        (Value::Bytes(Some(b)), Role::Decompressed) => b,
        _ => buf,
    };
    for c in &node.children {
        check(c, Some(node), inner, what, checked);
    }
}

fn check_frame(f: &Frame, what: &str) -> usize {
    let mut n = 0;
    check(&f.root, None, &f.bytes, what, &mut n);
    n
}

fn opts(d: Direction, key: i16, v: i16) -> DecodeOptions {
    DecodeOptions {
        direction: Some(d),
        api_key: Some(key),
        api_version: Some(v),
        ..Default::default()
    }
}

#[test]
fn explanations_match_the_decoder_on_every_sample() {
    let samples: &[(&str, Option<(&str, i16)>)] = &[
        ("write-share-group-state-v0-request", None),
        (
            "write-share-group-state-v0-response",
            Some(("WriteShareGroupState", 0)),
        ),
        ("delete-share-group-state-v0-request", None),
        (
            "delete-share-group-state-v0-response",
            Some(("DeleteShareGroupState", 0)),
        ),
        ("produce-v9-request", None),
        ("produce-v9-consumer-offsets-request", None),
        ("fetch-v12-response", Some(("Fetch", 12))),
        ("join-group-v9-request", None),
    ];
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, response) in samples {
        let text = std::fs::read_to_string(root.join(format!("samples/{name}.hex"))).unwrap();
        let bytes = Bytes::from(kwire::input::hex_text::parse_hex_text(&text).unwrap());
        let o = match response {
            None => DecodeOptions::default(),
            Some((api, v)) => opts(Direction::Response, cat().resolve_api(api).unwrap(), *v),
        };
        let f = decode_frame(cat(), bytes, 0, &o);
        assert!(f.error.is_none(), "{name}");
        assert!(check_frame(&f, name) > 10, "{name}");
    }
}

#[test]
fn explanations_match_the_decoder_on_random_bodies_of_every_api() {
    let cat = cat();
    let mut checked = 0;
    for key in cat.api_keys() {
        for (d, kind) in [
            (Direction::Request, MessageKind::Request),
            (Direction::Response, MessageKind::Response),
        ] {
            for v in cat.versions(kind, key, None) {
                let fs = frame_spec(d, key, v);
                let spec = message_spec(cat, &fs).unwrap();
                for seed in 1..3 {
                    let body = random_body(spec, v, seed * 1000 + v as u64);
                    let bytes = encode_frame(cat, &fs, &example_header(d), &body).unwrap();
                    let f = decode_frame(cat, Bytes::from(bytes), 0, &opts(d, key, v));
                    checked += check_frame(&f, &format!("{} v{v} seed {seed}", spec.name));
                }
            }
        }
    }
    assert!(checked > 10_000, "only {checked} nodes checked");
}

#[test]
fn explanations_match_the_decoder_on_record_batches_of_every_codec_and_legacy_sets() {
    let recs = vec![
        Rec {
            key: None,
            value: Some(b"hello".to_vec()),
            headers: vec![("h".into(), None)],
            timestamp_delta: -300,
        },
        Rec {
            key: Some(vec![0xab; 200]),
            value: None,
            headers: vec![],
            timestamp_delta: 1 << 40,
        },
    ];
    let mut data = Vec::new();
    for codec in 0..=4 {
        data.extend(batch(codec as i64 * 10, codec, &recs));
    }
    data.extend(legacy_message(100, 0, 0, None, Some(b"v0")));
    data.extend(legacy_message(101, 1, 0, Some(b"k"), None));
    let inner = [
        legacy_message(0, 1, 0, None, Some(b"a")),
        legacy_message(1, 1, 0, Some(b"b"), Some(b"c")),
    ]
    .concat();
    data.extend(legacy_message(103, 1, 1, None, Some(&compress(1, &inner))));
    let buf = Bytes::from(data);
    let ctx = Context::default();
    let mut bd = BatchDecoder::new(&buf, cat(), &ctx);
    let mut root = Node::new(
        "records",
        "",
        0,
        kwire::decode::Region::RecordBatch,
        Role::Structure,
    );
    bd.decode_stream(0, buf.len(), &mut root.children);
    assert!(bd.warnings.is_empty(), "{:?}", bd.warnings);
    let mut n = 0;
    check(&root, None, &buf, "batches", &mut n);
    assert!(n > 150, "only {n} nodes checked");
}

#[test]
fn headers_say_why_they_have_their_version() {
    let example = |api: &str, d: Direction, v: i16, release: Option<&str>| -> String {
        let key = cat().resolve_api(api).unwrap();
        let fs = FrameSpec {
            direction: d,
            api_key: key,
            version: v,
            release,
        };
        let bytes = kwire::encode::example::example_frame(cat(), &fs).unwrap();
        let f = decode_frame(
            cat(),
            Bytes::from(bytes),
            0,
            &DecodeOptions {
                release: release.map(str::to_string),
                ..opts(d, key, v)
            },
        );
        header_reason(cat(), &f, release).unwrap()
    };
    assert!(
        example("ControlledShutdown", Direction::Request, 0, Some("3.9"))
            .starts_with("header v0 (api key, version, correlation id; no client id)")
    );
    assert!(
        example("ControlledShutdown", Direction::Request, 1, Some("3.9"))
            .starts_with("header v1: ControlledShutdownRequest v1 is not flexible")
    );
    assert!(example("ApiVersions", Direction::Response, 3, None)
        .starts_with("header v0 (no tagged fields) although ApiVersionsResponse v3 is flexible"));
    assert!(example("Metadata", Direction::Request, 9, None)
        .starts_with("header v2: MetadataRequest v9 is flexible"));
    assert!(example("Metadata", Direction::Response, 8, None)
        .starts_with("header v0: MetadataResponse v8 is not flexible"));
    assert!(example("Metadata", Direction::Response, 9, None)
        .starts_with("header v1: MetadataResponse v9 is flexible"));
}

#[test]
fn the_explained_tree_spells_out_multi_byte_varints() {
    let fs = FrameSpec {
        direction: Direction::Request,
        api_key: 3,
        version: 12,
        release: None,
    };
    let name = "t".repeat(200);
    let body = json!({"Topics": [{"TopicId": "00000000-0000-0000-0000-000000000000", "Name": name}], "AllowAutoTopicCreation": true});
    let bytes = encode_frame(
        cat(),
        &fs,
        &example_header(Direction::Request),
        body.as_object().unwrap(),
    )
    .unwrap();
    let f = decode_frame(cat(), Bytes::from(bytes), 0, &DecodeOptions::default());
    let text = render_explained(cat(), None, &f, Default::default());
    // 201 = n+1 for 200 bytes: c9 01.
    assert!(text.contains("· c9 01 → unsigned varint, 7 bits a byte, low group first; top bit 1 = another byte follows: c9 = 1|1001001, 01 = 0|0000001"), "{text}");
    assert!(text.contains("· 1001001 + 0000001<<7 = 73 + 128 = 201"));
    assert!(text.contains("· compact length n+1 = 201, so n = 200"));
    assert!(text.contains("· 01 → bool: 1 = true"));
    assert!(text.contains("· header v2: MetadataRequest v12 is flexible"));
}

// ---- primitives ----

/// Values at the edges of every type: zero, -1, min, max, and the varint
/// length boundaries 127/128 and 16383/16384.
fn edge_values() -> Vec<(WireType, Json)> {
    let s = |n: usize| Json::String("x".repeat(n));
    let h = |n: usize| Json::String("ab".repeat(n));
    let mut v: Vec<(WireType, Json)> = vec![
        (WireType::Bool, json!(false)),
        (WireType::Bool, json!(true)),
    ];
    let ints: [(WireType, i128, i128); 9] = [
        (WireType::Int8, i8::MIN.into(), i8::MAX.into()),
        (WireType::Int16, i16::MIN.into(), i16::MAX.into()),
        (WireType::Uint16, 0, u16::MAX.into()),
        (WireType::Int32, i32::MIN.into(), i32::MAX.into()),
        (WireType::Uint32, 0, u32::MAX.into()),
        (WireType::Int64, i64::MIN.into(), i64::MAX.into()),
        (WireType::Uvarint, 0, u32::MAX.into()),
        (WireType::Varint, i32::MIN.into(), i32::MAX.into()),
        (WireType::Varlong, i64::MIN.into(), i64::MAX.into()),
    ];
    for (t, lo, hi) in ints {
        for n in [
            0,
            -1,
            1,
            lo,
            hi,
            63,
            64,
            -64,
            -65,
            127,
            128,
            16383,
            16384,
            (1 << 21) - 1,
            1 << 21,
        ] {
            if n >= lo && n <= hi {
                v.push((
                    t,
                    if n < 0 {
                        json!(n as i64)
                    } else {
                        json!(n as u64)
                    },
                ));
            }
        }
    }
    for f in [
        0.0,
        -0.0,
        -1.0,
        1.5,
        f64::MAX,
        f64::MIN,
        f64::MIN_POSITIVE,
        5e-324,
    ] {
        v.push((WireType::Float64, json!(f)));
    }
    for f in ["inf", "-inf"] {
        v.push((WireType::Float64, json!(f)));
    }
    for u in [
        "00000000-0000-0000-0000-000000000000",
        "00000000-0000-0000-0000-000000000001",
        "ffffffff-ffff-ffff-ffff-ffffffffffff",
    ] {
        v.push((WireType::Uuid, json!(u)));
    }
    for t in [
        WireType::String,
        WireType::CompactString,
        WireType::NullableString,
        WireType::CompactNullableString,
    ] {
        for n in [0, 1, 126, 127, 128, 16382, 16383, 16384, i16::MAX as usize] {
            v.push((t, s(n)));
        }
        v.push((t, json!("日本 🚀 \u{1b}[31m")));
    }
    for t in [
        WireType::Bytes,
        WireType::CompactBytes,
        WireType::NullableBytes,
        WireType::CompactNullableBytes,
    ] {
        for n in [0, 1, 126, 127, 128, 16382, 16383, 16384, 70_000] {
            v.push((t, h(n)));
        }
    }
    for t in [
        WireType::NullableString,
        WireType::CompactNullableString,
        WireType::NullableBytes,
        WireType::CompactNullableBytes,
    ] {
        v.push((t, Json::Null));
    }
    v.push((WireType::TaggedFields, json!({})));
    v.push((WireType::TaggedFields, json!({"0": "0a"})));
    v.push((
        WireType::TaggedFields,
        json!({"0": "", "127": "ff", "128": "ab".repeat(127), "16384": "ab".repeat(128)}),
    ));
    v
}

#[test]
fn every_primitive_round_trips_over_edge_values_and_explains_itself() {
    let values = edge_values();
    for t in WireType::ALL {
        assert!(
            values.iter().any(|(x, _)| *x == t),
            "{} has no edge values",
            t.name()
        );
    }
    for (t, v) in values {
        let what = format!(
            "{} {}",
            t.name(),
            v.to_string().chars().take(40).collect::<String>()
        );
        let bytes = encode(t, &v).unwrap_or_else(|e| panic!("{what}: {e}"));
        let d = decode(t, &bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(d.warnings.is_empty(), "{what}: {:?}", d.warnings);
        let back = d.value();
        let same = match (&v, &back) {
            // Non-finite floats are strings in the JSON contract: compare as numbers.
            (Json::String(a), Json::String(b)) if t == WireType::Float64 => {
                a.parse::<f64>().unwrap() == b.parse::<f64>().unwrap()
            }
            _ => back == v,
        };
        assert!(same, "{what}: decoded {back}");
        assert_eq!(encode(t, &back).unwrap(), bytes, "{what}: re-encoding");
        let mut n = 0;
        check(&d.root, None, &d.bytes, &what, &mut n);
        assert!(n > 0, "{what}: nothing explained");
    }
}

#[test]
fn primitive_bytes_at_the_varint_boundaries() {
    let hex =
        |t: WireType, text: &str| hex::encode(encode(t, &parse_value(t, text).unwrap()).unwrap());
    for (n, h) in [
        ("0", "00"),
        ("127", "7f"),
        ("128", "8001"),
        ("300", "ac02"),
        ("16383", "ff7f"),
        ("16384", "808001"),
        ("4294967295", "ffffffff0f"),
    ] {
        assert_eq!(hex(WireType::Uvarint, n), h, "uvarint {n}");
    }
    for (n, h) in [
        ("0", "00"),
        ("-1", "01"),
        ("1", "02"),
        ("-64", "7f"),
        ("64", "8001"),
        ("2147483647", "feffffff0f"),
        ("-2147483648", "ffffffff0f"),
    ] {
        assert_eq!(hex(WireType::Varint, n), h, "varint {n}");
    }
    assert_eq!(
        hex(WireType::Varlong, "-9223372036854775808"),
        "ffffffffffffffffff01"
    );
    assert_eq!(
        &hex(WireType::CompactString, &"x".repeat(126))[..2],
        "7f",
        "n+1 = 127 still fits one byte"
    );
    assert_eq!(
        &hex(WireType::CompactString, &"x".repeat(127))[..4],
        "8001",
        "n+1 = 128 takes two"
    );
    assert_eq!(
        &hex(WireType::CompactBytes, &"ab".repeat(16383))[..6],
        "808001",
        "n+1 = 16384 takes three"
    );
    assert_eq!(hex(WireType::NullableString, "null"), "ffff");
    assert_eq!(hex(WireType::CompactNullableString, "null"), "00");
    assert_eq!(hex(WireType::NullableBytes, "null"), "ffffffff");
    assert_eq!(hex(WireType::Int16, "-1"), "ffff");
    assert_eq!(
        hex(WireType::Uuid, "00000000-0000-0000-0000-000000000001"),
        "00000000000000000000000000000001"
    );
    assert_eq!(
        hex(WireType::TaggedFields, r#"{"0": "0a"}"#),
        "0100010a",
        "count 1 (not n+1), tag 0, size 1, 0a"
    );
    assert!(encode(WireType::String, &Json::String("x".repeat(32768)))
        .unwrap_err()
        .contains("int16"));
}
