//! A message's plan at each version says what it holds (records, credentials,
//! topic ids) as its fields do: the facts the decoder skips frames by.

use kwire::schema::model::{FieldMeaning, FieldSpec, FieldType, Primitive};
use kwire::schema::{Catalogue, MessageKind};

/// The fields present at `v`, nested ones included, walked from the specs.
fn any_field(fields: &[FieldSpec], v: i16, what: &dyn Fn(&FieldSpec) -> bool) -> bool {
    fields
        .iter()
        .filter(|f| f.versions.contains(v))
        .any(|f| what(f) || any_field(&f.fields, v, what))
}

#[test]
fn what_a_plan_holds_agrees_with_its_fields_at_every_version() {
    let cat = Catalogue::builtin();
    let (mut records, mut secrets, mut topic_ids) = (0, 0, 0);
    for e in &cat.entries {
        let spec = e.spec();
        for v in spec.valid_versions.lo.max(0)..=spec.valid_versions.hi {
            let plan = spec.plan(v);
            let want_records = any_field(&spec.fields, v, &|f| {
                matches!(f.ty, FieldType::Primitive(Primitive::Records))
            });
            let want_secrets = any_field(&spec.fields, v, &|f| {
                matches!(
                    FieldMeaning::of(f),
                    FieldMeaning::Secret | FieldMeaning::SaslAuthBytes
                )
            });
            let want_ids = any_field(&spec.fields, v, &|f| {
                FieldMeaning::of(f) == FieldMeaning::TopicId
            });
            assert_eq!(
                (plan.holds_records, plan.holds_secrets, plan.holds_topic_ids),
                (want_records, want_secrets, want_ids),
                "{} v{v}",
                spec.name
            );
            records += usize::from(want_records);
            secrets += usize::from(want_secrets);
            topic_ids += usize::from(want_ids);
        }
    }
    assert!(
        records > 20 && secrets > 5 && topic_ids > 20,
        "{records} plans hold records, {secrets} credentials, {topic_ids} topic ids"
    );
    let plan = |kind, key, v| {
        cat.message(kind, key, v, None)
            .expect("defined")
            .plan(v)
            .into_owned()
    };
    assert!(
        plan(MessageKind::Request, 0, 9).holds_records
            && !plan(MessageKind::Request, 0, 9).holds_secrets,
        "Produce v9"
    );
    assert!(
        plan(MessageKind::Request, 36, 2).holds_secrets,
        "SaslAuthenticate v2: its auth bytes"
    );
    assert!(
        plan(MessageKind::Response, 1, 13).holds_topic_ids
            && !plan(MessageKind::Response, 1, 12).holds_topic_ids,
        "Fetch v13 names topics by id, v12 by name"
    );
    assert!(
        !plan(MessageKind::Request, 12, 4).holds_records
            && !plan(MessageKind::Request, 12, 4).holds_secrets,
        "Heartbeat v4"
    );
}
