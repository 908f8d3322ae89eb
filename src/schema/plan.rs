//! A message's layout at one version, worked out once: which fields are on the
//! wire in which form (compact or not, nullable or not, tagged with which tag).
//! The values decoder walks these plans instead of asking the field specs the
//! same version questions at every field of every frame.

use super::model::{FieldMeaning, FieldSpec, FieldType, MessageSpec, Primitive};

use super::intern::{intern, intern_thin};
use std::sync::OnceLock;

/// The fields of a struct at one version.
#[derive(Clone, Debug)]
pub struct StructPlan {
    /// The fields in the fixed layout, in declaration order.
    pub regular: Box<[FieldPlan]>,
    /// The fields that may appear in the tagged section, in declaration order;
    /// `None` when the version is not flexible (no tagged section at all).
    pub tagged: Option<Box<[FieldPlan]>>,
    /// Whether the struct holds record data at this version, nested structs included.
    pub holds_records: bool,
    /// Whether it holds a credential (a field whose meaning is a secret or
    /// SASL auth bytes), nested structs included: such frames are redacted.
    pub holds_secrets: bool,
    /// Whether it holds a topic id, nested structs included: only such frames
    /// show the topic names a capture ties to ids.
    pub holds_topic_ids: bool,
    /// A record batch cut short by the end of its records field is damage:
    /// a request's (a producer sends whole batches), not a response's, where
    /// a fetch's size limit cuts the last batch. Set on a message's own plan.
    pub cut_batches_are_damage: bool,
}

#[derive(Clone, Debug)]
pub struct FieldPlan {
    /// The schema name, as error messages give it.
    pub name: &'static str,
    /// The name as a JSON object key with its colon (`"GroupId":`), escaped once here.
    pub json_key: &'static &'static str,
    /// Position in the struct's declaration (the JSON contract's key order).
    pub decl: u16,
    /// The tag, for fields of the tagged section.
    pub tag: u32,
    pub nullable: bool,
    /// Compact (uvarint-prefixed) strings, bytes and arrays.
    pub compact: bool,
    /// A tagged field: a nullable struct's marker is a uvarint, not an int8.
    pub in_tag: bool,
    pub shape: Shape,
    /// The run of fixed-width fields that starts here (this one included): how
    /// many, and their bytes. A decoder can check the run's bytes once and read
    /// its fields without a check each. `(0, 0)` when this field is not fixed-width.
    pub run: (u16, u32),
    /// How a decoder reads it on its quick path, worked out from the above once.
    pub op: Op,
}

/// The quick read of a field, so that a decoder tells the usual fields apart
/// with one match instead of asking shape, compactness and width at every field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// A fixed-width primitive; `run` says how many follow.
    Fixed,
    /// A string or bytes (not record data) with a uvarint length (n+1, 0 null).
    CompactString,
    CompactBytes,
    /// A string with an int16 length, bytes with an int32 length (-1 null).
    String,
    Bytes,
    /// An array of fixed-width primitives.
    FixedArray,
    /// Anything else: structs, other arrays, record data.
    Other,
}

impl Op {
    fn of(shape: &Shape, compact: bool) -> Op {
        match (shape, compact) {
            (Shape::Primitive(p), _) if p.fixed_width().is_some() => Op::Fixed,
            (Shape::Primitive(Primitive::String), true) => Op::CompactString,
            (Shape::Primitive(Primitive::String), false) => Op::String,
            (Shape::Primitive(Primitive::Bytes), true) => Op::CompactBytes,
            (Shape::Primitive(Primitive::Bytes), false) => Op::Bytes,
            (Shape::Array(Element::Primitive(p)), _) if p.fixed_width().is_some() => Op::FixedArray,
            _ => Op::Other,
        }
    }
}

#[derive(Clone, Debug)]
pub enum Shape {
    Primitive(Primitive),
    Struct(Box<StructPlan>),
    Array(Element),
}

#[derive(Clone, Debug)]
pub enum Element {
    Primitive(Primitive),
    Struct(Box<StructPlan>),
    /// Arrays of arrays are not part of the schema language; reading one is an error.
    Array,
}

impl StructPlan {
    /// The plan of `fields` at `version` of a message flexible or not at that version.
    pub fn compile(fields: &[FieldSpec], version: i16, flexible: bool) -> StructPlan {
        let mut regular: Box<[FieldPlan]> = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_regular_in(version))
            .map(|(i, f)| FieldPlan::compile(f, i as u16, version, flexible, false))
            .collect();
        let mut run = (0u16, 0u32);
        for f in regular.iter_mut().rev() {
            run = match f.shape {
                Shape::Primitive(p) => match p.fixed_width() {
                    Some(w) => (run.0 + 1, run.1 + w as u32),
                    None => (0, 0),
                },
                _ => (0, 0),
            };
            f.run = run;
        }
        let tagged = flexible.then(|| {
            fields
                .iter()
                .enumerate()
                .filter(|(_, f)| f.is_tagged_in(version))
                .map(|(i, f)| FieldPlan::compile(f, i as u16, version, flexible, true))
                .collect()
        });
        let fields_with = |what: &dyn Fn(&FieldPlan) -> bool| {
            regular.iter().chain(tagged.iter().flatten()).any(what)
        };
        let holds_records = fields_with(&|f| match &f.shape {
            Shape::Primitive(p) => *p == Primitive::Records,
            Shape::Struct(s) | Shape::Array(Element::Struct(s)) => s.holds_records,
            Shape::Array(_) => false,
        });
        // A field of a meaning here, or in a nested struct that holds one.
        let holds = |nested: &dyn Fn(&StructPlan) -> bool, meant: &dyn Fn(FieldMeaning) -> bool| {
            fields_with(
                &|f| matches!(&f.shape, Shape::Struct(s) | Shape::Array(Element::Struct(s)) if nested(s)),
            ) || fields
                .iter()
                .filter(|f| f.versions.contains(version))
                .any(|f| meant(FieldMeaning::of(f)))
        };
        let holds_secrets = holds(&|s| s.holds_secrets, &|m| {
            matches!(m, FieldMeaning::Secret | FieldMeaning::SaslAuthBytes)
        });
        let holds_topic_ids = holds(&|s| s.holds_topic_ids, &|m| m == FieldMeaning::TopicId);
        StructPlan {
            regular,
            tagged,
            holds_records,
            holds_secrets,
            holds_topic_ids,
            cut_batches_are_damage: false,
        }
    }
}

impl FieldPlan {
    fn compile(f: &FieldSpec, decl: u16, version: i16, flexible: bool, in_tag: bool) -> FieldPlan {
        let nested =
            |fields: &[FieldSpec]| Box::new(StructPlan::compile(fields, version, flexible));
        let shape = match &f.ty {
            FieldType::Primitive(p) => Shape::Primitive(*p),
            FieldType::Struct(_) => Shape::Struct(nested(&f.fields)),
            FieldType::Array(inner) => Shape::Array(match &**inner {
                FieldType::Primitive(p) => Element::Primitive(*p),
                FieldType::Struct(_) => Element::Struct(nested(&f.fields)),
                FieldType::Array(_) => Element::Array,
            }),
        };
        let compact = in_tag || f.flexible.map_or(flexible, |v| v.contains(version));
        FieldPlan {
            name: intern(&f.name),
            json_key: intern_thin(&format!("{}:", serde_json::Value::from(f.name.as_str()))),
            decl,
            tag: f.tag.unwrap_or(0),
            nullable: f.is_nullable_in(version),
            compact,
            in_tag,
            op: Op::of(&shape, compact),
            shape,
            run: (0, 0),
        }
    }
}

/// Versions below this have their plans kept with the spec; others are made per use.
const CACHED_VERSIONS: usize = 64;

/// A spec's plans, one per version, each made on first use.
pub type PlanCache = super::model::SpecCache<Box<[OnceLock<StructPlan>]>>;

impl PlanCache {
    #[inline]
    fn get(&self, spec: &MessageSpec, version: i16) -> Option<&StructPlan> {
        let slots = self.0.get_or_init(|| {
            let n = usize::try_from(spec.valid_versions.hi)
                .map_or(0, |hi| (hi + 1).min(CACHED_VERSIONS));
            (0..n).map(|_| OnceLock::new()).collect()
        });
        let slot = slots.get(usize::try_from(version).ok()?)?;
        Some(slot.get_or_init(|| spec.compile_plan(version)))
    }
}

impl MessageSpec {
    /// The layout of this message at `version` when kept with the spec (the
    /// versions it defines), borrowed without the [`Self::plan`]'s `Cow`.
    #[inline]
    pub fn kept_plan(&self, version: i16) -> Option<&StructPlan> {
        self.plans.get(self, version)
    }

    /// The layout of this message at `version`: kept for the versions the spec
    /// defines, else made for this one call.
    #[inline]
    pub fn plan(&self, version: i16) -> std::borrow::Cow<'_, StructPlan> {
        match self.plans.get(self, version) {
            Some(p) => std::borrow::Cow::Borrowed(p),
            None => std::borrow::Cow::Owned(self.compile_plan(version)),
        }
    }

    /// A new plan of this message at `version`, with what only the message
    /// (not its fields) tells.
    fn compile_plan(&self, version: i16) -> StructPlan {
        let mut plan = StructPlan::compile(&self.fields, version, self.is_flexible(version));
        plan.cut_batches_are_damage = self.kind == super::model::MessageKind::Request;
        plan
    }
}

#[cfg(test)]
mod tests {
    use crate::schema::model::{FieldMeaning, FieldSpec, FieldType, Primitive};
    use crate::schema::{Catalogue, MessageKind};

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
}
