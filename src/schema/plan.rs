//! A message's layout at one version, worked out once: which fields are on the
//! wire in which form (compact or not, nullable or not, tagged with which tag).
//! The values decoder walks these plans instead of asking the field specs the
//! same version questions at every field of every frame.

use super::length::LengthPrefix;
use super::model::{FieldMeaning, FieldSpec, FieldType, Primitive};

use super::intern::{intern, intern_thin};

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
    /// How its length (a string's, bytes', records') or its count (an
    /// array's) is written; a fixed-width value or a struct has none, and
    /// holds an array's.
    pub prefix: LengthPrefix,
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
    /// A string, or bytes (not record data), after its length
    /// ([`FieldPlan::prefix`]).
    String,
    Bytes,
    /// An array of fixed-width primitives.
    FixedArray,
    /// Anything else: structs, other arrays, record data.
    Other,
}

impl Op {
    fn of(shape: &Shape) -> Op {
        match shape {
            Shape::Primitive(p) if p.fixed_width().is_some() => Op::Fixed,
            Shape::Primitive(Primitive::String) => Op::String,
            Shape::Primitive(Primitive::Bytes) => Op::Bytes,
            Shape::Array(Element::Primitive(p)) if p.fixed_width().is_some() => Op::FixedArray,
            _ => Op::Other,
        }
    }
}

/// A struct's plan, shared: every use of one common struct in a message's
/// plan at a version refers to the one plan compiled for it.
pub(crate) type SharedPlan = std::sync::Arc<StructPlan>;

#[derive(Clone, Debug)]
pub enum Shape {
    Primitive(Primitive),
    Struct(SharedPlan),
    Array(Element),
}

#[derive(Clone, Debug)]
pub enum Element {
    Primitive(Primitive),
    Struct(SharedPlan),
    /// Arrays of arrays are not part of the schema language; reading one is an error.
    Array,
}

impl StructPlan {
    /// The plan of `fields` at `version` of a message flexible or not at that version.
    pub fn compile(fields: &[FieldSpec], version: i16, flexible: bool) -> StructPlan {
        Self::compile_sharing(fields, version, flexible, &mut CommonPlans::new())
    }

    /// `compile`, with the plans of the common structs compiled so far for
    /// this message and version: each is compiled once and referred to
    /// wherever it is used (a plan's size is its definition's, however
    /// often a struct is used inside another).
    fn compile_sharing(
        fields: &[FieldSpec],
        version: i16,
        flexible: bool,
        common: &mut CommonPlans,
    ) -> StructPlan {
        let mut regular: Box<[FieldPlan]> = fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.is_regular_in(version))
            .map(|(i, f)| FieldPlan::compile(f, (i as u16, false), version, flexible, common))
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
                .map(|(i, f)| FieldPlan::compile(f, (i as u16, true), version, flexible, common))
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

/// The plans of the common structs compiled for one message at one version, by name.
type CommonPlans = std::collections::HashMap<String, SharedPlan>;

impl FieldPlan {
    fn compile(
        f: &FieldSpec,
        (decl, in_tag): (u16, bool),
        version: i16,
        flexible: bool,
        common: &mut CommonPlans,
    ) -> FieldPlan {
        // A struct's plan depends on its fields, the version and whether the
        // message is flexible at it: one per common struct serves every use.
        let mut nested = || match &f.common_struct {
            Some(name) => match common.get(name) {
                Some(plan) => SharedPlan::clone(plan),
                None => {
                    let plan = SharedPlan::new(StructPlan::compile_sharing(
                        &f.fields, version, flexible, common,
                    ));
                    common.insert(name.clone(), SharedPlan::clone(&plan));
                    plan
                }
            },
            None => SharedPlan::new(StructPlan::compile_sharing(
                &f.fields, version, flexible, common,
            )),
        };
        let shape = match &f.ty {
            FieldType::Primitive(p) => Shape::Primitive(*p),
            FieldType::Struct(_) => Shape::Struct(nested()),
            FieldType::Array(inner) => Shape::Array(match &**inner {
                FieldType::Primitive(p) => Element::Primitive(*p),
                FieldType::Struct(_) => Element::Struct(nested()),
                FieldType::Array(_) => Element::Array,
            }),
        };
        let compact = f.is_compact_in(version, flexible, in_tag);
        FieldPlan {
            name: intern(&f.name),
            json_key: intern_thin(&format!("{}:", serde_json::Value::from(f.name.as_str()))),
            decl,
            tag: f.tag.unwrap_or(0),
            nullable: f.is_nullable_in(version),
            compact,
            prefix: match shape {
                Shape::Primitive(p) => LengthPrefix::of(p, compact),
                _ => LengthPrefix::of_array(compact),
            },
            in_tag,
            op: Op::of(&shape),
            shape,
            run: (0, 0),
        }
    }
}
