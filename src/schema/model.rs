//! The definitions model: messages, fields and types, as facts kwire decodes by.

use super::intern::intern;
use super::versions::Versions;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::sync::OnceLock;

/// What a definition file describes (its top-level `type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MessageKind {
    Request,
    Response,
    Header,
    Data,
    Metadata,
    CoordinatorKey,
    CoordinatorValue,
}

impl MessageKind {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "request" => Self::Request,
            "response" => Self::Response,
            "header" => Self::Header,
            "data" => Self::Data,
            "metadata" => Self::Metadata,
            "coordinator-key" => Self::CoordinatorKey,
            "coordinator-value" => Self::CoordinatorValue,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Request => "request",
            Self::Response => "response",
            Self::Header => "header",
            Self::Data => "data",
            Self::Metadata => "metadata",
            Self::CoordinatorKey => "coordinator-key",
            Self::CoordinatorValue => "coordinator-value",
        }
    }
}

/// Primitive wire types of the schema language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Primitive {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Uint32,
    Int64,
    Float64,
    String,
    Uuid,
    Bytes,
    Records,
}

impl Primitive {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "bool" => Self::Bool,
            "int8" => Self::Int8,
            "int16" => Self::Int16,
            "uint16" => Self::Uint16,
            "int32" => Self::Int32,
            "uint32" => Self::Uint32,
            "int64" => Self::Int64,
            "float64" => Self::Float64,
            "string" => Self::String,
            "uuid" => Self::Uuid,
            "bytes" => Self::Bytes,
            "records" => Self::Records,
            _ => return None,
        })
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Bool => "bool",
            Self::Int8 => "int8",
            Self::Int16 => "int16",
            Self::Uint16 => "uint16",
            Self::Int32 => "int32",
            Self::Uint32 => "uint32",
            Self::Int64 => "int64",
            Self::Float64 => "float64",
            Self::String => "string",
            Self::Uuid => "uuid",
            Self::Bytes => "bytes",
            Self::Records => "records",
        }
    }

    /// Byte width of fixed-size primitives.
    pub(crate) fn fixed_width(&self) -> Option<usize> {
        Some(match self {
            Self::Bool | Self::Int8 => 1,
            Self::Int16 | Self::Uint16 => 2,
            Self::Int32 | Self::Uint32 => 4,
            Self::Int64 | Self::Float64 => 8,
            Self::Uuid => 16,
            _ => return None,
        })
    }
}

/// A field's type: a primitive, a struct, or an array of either (no arrays of arrays).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    Primitive(Primitive),
    Struct(String),
    Array(Box<FieldType>),
}

impl FieldType {
    pub fn parse(s: &str) -> Result<Self, String> {
        if let Some(inner) = s.strip_prefix("[]") {
            let inner = FieldType::parse(inner)?;
            if matches!(inner, FieldType::Array(_)) {
                return Err(format!("arrays of arrays are not allowed: {s:?}"));
            }
            return Ok(FieldType::Array(Box::new(inner)));
        }
        if let Some(p) = Primitive::parse(s) {
            return Ok(FieldType::Primitive(p));
        }
        match s.chars().next() {
            Some(c) if c.is_ascii_uppercase() && s.chars().all(|c| c.is_ascii_alphanumeric()) => {
                Ok(FieldType::Struct(s.to_string()))
            }
            _ => Err(format!("unknown type {s:?}")),
        }
    }

    pub fn is_struct(&self) -> bool {
        matches!(self, FieldType::Struct(_))
    }

    /// The struct this type holds, directly or as array elements.
    pub(crate) fn struct_name(&self) -> Option<&str> {
        match self {
            FieldType::Struct(n) => Some(n),
            FieldType::Array(inner) => inner.struct_name(),
            FieldType::Primitive(_) => None,
        }
    }

    pub fn primitive(&self) -> Option<Primitive> {
        match self {
            FieldType::Primitive(p) => Some(*p),
            _ => None,
        }
    }
}

impl fmt::Display for FieldType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldType::Primitive(p) => f.write_str(p.as_str()),
            FieldType::Struct(n) => f.write_str(n),
            FieldType::Array(inner) => write!(f, "[]{inner}"),
        }
    }
}

impl Serialize for FieldType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for FieldType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        FieldType::parse(&s).map_err(serde::de::Error::custom)
    }
}

pub(super) fn is_false(b: &bool) -> bool {
    !*b
}

pub(super) fn is_none_versions(v: &Versions) -> bool {
    v.is_empty()
}

/// One field of a struct. Struct-typed fields carry their member fields inline
/// (common structs are resolved by the importer, shared where used), so decoding needs no registry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: FieldType,
    pub versions: Versions,
    #[serde(default = "none_versions", skip_serializing_if = "is_none_versions")]
    pub nullable: Versions,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tagged: Option<Versions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<u32>,
    /// Override of the message's flexible versions (only strings and bytes may have one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flexible: Option<Versions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub ignorable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity_type: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub map_key: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub zero_copy: bool,
    /// Name of the common struct this field's type refers to, when it is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub common_struct: Option<String>,
    /// Its fields; a common struct's are the struct's own, shared by every
    /// field that uses it (not a copy each).
    #[serde(default, skip_serializing_if = "no_fields")]
    pub fields: Fields,
    /// Upstream prose; only present when definitions were loaded with `--defs`.
    #[serde(skip)]
    pub about: Option<String>,
    /// The decoder's labels for this field, made on first use.
    #[serde(skip)]
    pub labels: LabelCache,
}

/// A struct's fields, shared by every use of a common struct.
pub type Fields = std::sync::Arc<[FieldSpec]>;

fn no_fields(f: &Fields) -> bool {
    f.is_empty()
}

/// The strings the decoder puts on every node of a field, made once per spec
/// and shared by the nodes, so decoding allocates no name or type per node.
#[derive(Debug)]
pub struct FieldLabels {
    /// The schema name (`GroupId`).
    pub name: &'static str,
    /// The header spelling (`group_id`).
    pub snake: &'static str,
    /// The type as shown (`[]WriteStateData`); for primitives, their static name.
    pub ty: &'static str,
    /// The struct name of a struct or an array of structs (an element's type).
    pub struct_name: Option<&'static str>,
    /// What a decoded value of this field means to the decoder, worked out
    /// once here rather than by comparing names at every node.
    pub meaning: FieldMeaning,
    /// The field's description (`about`), shared by its nodes' docs.
    pub about: Option<crate::text::Text>,
    /// An element's name's base: the struct's name, else the field's.
    element_base: &'static &'static str,
    /// Whether the name, spelling, type and struct name are all plain
    /// (printable ASCII without quotes or backslashes, as definitions' are),
    /// so that the views write them as they are.
    pub clean: bool,
}

impl FieldLabels {
    fn of(f: &FieldSpec) -> FieldLabels {
        let (name, snake, ty) = (
            intern(&f.name),
            intern(&crate::text::snake_case(&f.name)),
            intern(&f.ty.to_string()),
        );
        let struct_name = f.ty.struct_name().map(intern);
        let clean = [name, snake, ty, struct_name.unwrap_or_default()]
            .iter()
            .all(|t| crate::text::name::is_plain(t));
        FieldLabels {
            name,
            snake,
            ty,
            struct_name,
            meaning: FieldMeaning::of(f),
            about: f
                .about
                .as_deref()
                .map(|a| crate::text::Text::from(std::sync::Arc::<str>::from(a))),
            element_base: super::intern::intern_thin(f.ty.struct_name().unwrap_or(&f.name)),
            clean,
        }
    }

    /// `s`, one of these labels (checked in debug builds: only they were
    /// found plain), as a node's text.
    pub(crate) fn text(&self, s: &'static str) -> crate::text::Text {
        debug_assert!(
            [self.name, self.snake, self.ty].contains(&s) || self.struct_name == Some(s),
            "{s:?} is not one of the labels of {}",
            self.name
        );
        if self.clean {
            crate::text::Text::own_words(s)
        } else {
            crate::text::Text::from_static(s)
        }
    }

    /// The name of element `i` of this array field: `Struct[i]` for arrays of
    /// structs, `Field[i]` for arrays of primitives.
    pub(crate) fn element_name(&self, i: usize) -> crate::text::name::Name {
        crate::text::name::Name::element(self.element_base, i, self.clean)
    }

    /// Whether these labels still describe `f` (its fields are public and may change).
    fn describe(&self, f: &FieldSpec) -> bool {
        self.name == f.name
            && self.about.as_deref() == f.about.as_deref()
            && match &f.ty {
                FieldType::Primitive(p) => self.ty == p.as_str(),
                FieldType::Struct(n) => self.ty == n,
                FieldType::Array(inner) => {
                    self.ty.strip_prefix("[]").is_some_and(|t| match &**inner {
                        FieldType::Primitive(p) => t == p.as_str(),
                        FieldType::Struct(n) => t == n,
                        FieldType::Array(_) => false,
                    })
                }
            }
    }
}

/// The fields whose values the decoder acts on or names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldMeaning {
    Plain,
    /// A topic name: records further on belong to it.
    TopicName,
    /// A topic id (a uuid, or each uuid of an array, named `TopicId`): the
    /// definitions give ids no entity type. Shown with the name a capture
    /// tied to it; records further on belong to that topic.
    TopicId,
    /// The group's protocol type (`consumer` makes member metadata decodable).
    ProtocolType,
    /// The client's id (the request header's `ClientId`): who sent a request.
    ClientId,
    /// An error code, shown with its name.
    ErrorCode,
    /// An API key, shown with the API's name.
    ApiKey,
    /// Milliseconds since the epoch, shown as a UTC date-time.
    Timestamp,
    /// Milliseconds, shown in the largest unit that keeps them short.
    Duration,
    /// Produce's acknowledgements (-1 all, 0 none, 1 leader).
    Acks,
    /// Read uncommitted or committed.
    IsolationLevel,
    /// The ACL APIs' operation, permission type and pattern type.
    AclOperation,
    AclPermission,
    AclPattern,
    AclResourceType,
    /// SaslAuthenticate's `AuthBytes`: a SASL mechanism's message, read by
    /// its grammar; its credentials are redacted unless asked for.
    SaslAuthBytes,
    /// A credential (salts, salted passwords, SCRAM keys, delegation-token
    /// HMACs): redacted unless asked for.
    Secret,
}

impl FieldMeaning {
    /// From the field's name and type: the definitions have no such types,
    /// so the names Kafka gives these fields are the protocol fact here.
    pub fn of(f: &FieldSpec) -> FieldMeaning {
        let int = |p: Primitive| matches!(&f.ty, FieldType::Primitive(q) if *q == p);
        let name = f.name.as_str();
        let uuids = match &f.ty {
            FieldType::Array(inner) => matches!(**inner, FieldType::Primitive(Primitive::Uuid)),
            t => matches!(t, FieldType::Primitive(Primitive::Uuid)),
        };
        if f.entity_type.as_deref() == Some("topicName") {
            FieldMeaning::TopicName
        } else if uuids && name.eq_ignore_ascii_case("TopicId") {
            FieldMeaning::TopicId
        } else if name.eq_ignore_ascii_case("ProtocolType") {
            FieldMeaning::ProtocolType
        } else if int(Primitive::String) && name == "ClientId" {
            FieldMeaning::ClientId
        } else if name.ends_with("ErrorCode") {
            FieldMeaning::ErrorCode
        } else if name == "ApiKey" || name == "RequestApiKey" {
            FieldMeaning::ApiKey
        } else if int(Primitive::Int64)
            && (name.ends_with("Timestamp")
                || name.ends_with("TimestampMs")
                || name == "LogAppendTimeMs")
        {
            FieldMeaning::Timestamp
        } else if (int(Primitive::Int32) || int(Primitive::Int64)) && name.ends_with("Ms") {
            FieldMeaning::Duration
        } else if int(Primitive::Int16) && name == "Acks" {
            FieldMeaning::Acks
        } else if int(Primitive::Int8) && name == "IsolationLevel" {
            FieldMeaning::IsolationLevel
        } else if int(Primitive::Int8) && name == "Operation" {
            FieldMeaning::AclOperation
        } else if int(Primitive::Int8) && name == "PermissionType" {
            FieldMeaning::AclPermission
        } else if int(Primitive::Int8)
            && matches!(
                name,
                "PatternType" | "ResourcePatternType" | "PatternTypeFilter"
            )
        {
            FieldMeaning::AclPattern
        } else if int(Primitive::Int8) && name == "ResourceTypeFilter" {
            FieldMeaning::AclResourceType
        } else if int(Primitive::Bytes) && name == "AuthBytes" {
            FieldMeaning::SaslAuthBytes
        } else if int(Primitive::Bytes)
            && matches!(
                name,
                "Salt" | "SaltedPassword" | "StoredKey" | "ServerKey" | "Hmac"
            )
        {
            FieldMeaning::Secret
        } else {
            FieldMeaning::Plain
        }
    }
}

/// Something the decoder works out from a spec on first use and keeps with
/// it. Not cloned with its spec (a clone may be edited) and not part of a
/// spec's equality.
pub struct SpecCache<T>(pub(crate) OnceLock<T>);

impl<T> Default for SpecCache<T> {
    fn default() -> Self {
        SpecCache(OnceLock::new())
    }
}

impl<T> Clone for SpecCache<T> {
    fn clone(&self) -> Self {
        SpecCache::default()
    }
}

impl<T> PartialEq for SpecCache<T> {
    fn eq(&self, _: &SpecCache<T>) -> bool {
        true
    }
}

impl<T> fmt::Debug for SpecCache<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SpecCache")
    }
}

/// A field's [`FieldLabels`], made on first use.
pub type LabelCache = SpecCache<FieldLabels>;

pub(super) fn none_versions() -> Versions {
    Versions::NONE
}

impl FieldSpec {
    /// Whether this field is sent as a tagged field at `version`.
    pub fn is_tagged_in(&self, version: i16) -> bool {
        self.tagged.is_some_and(|t| t.contains(version)) && self.tag.is_some()
    }

    /// Whether the field is part of the fixed (untagged) layout at `version`.
    pub fn is_regular_in(&self, version: i16) -> bool {
        self.versions.contains(version) && !self.is_tagged_in(version)
    }

    pub fn is_nullable_in(&self, version: i16) -> bool {
        self.nullable.contains(version)
    }

    /// Whether this field's lengths are compact (uvarint, n+1) at `version`
    /// in a message that is `flexible` there: the one place the rule is
    /// written. A tagged field's value always is; a field may set its own
    /// flexible versions; otherwise it follows its message.
    ///
    /// ```
    /// use kwire::schema::{Catalogue, MessageKind};
    /// let cat = Catalogue::builtin();
    /// let heartbeat = cat.message(MessageKind::Request, 12, 4, None).unwrap();
    /// let group_id = &heartbeat.fields[0];
    /// for (version, compact) in [(3, false), (4, true)] {
    ///     let flexible = heartbeat.is_flexible(version);
    ///     assert_eq!(group_id.is_compact_in(version, flexible, false), compact);
    /// }
    /// ```
    pub fn is_compact_in(&self, version: i16, flexible: bool, in_tag: bool) -> bool {
        in_tag || self.flexible.map_or(flexible, |v| v.contains(version))
    }

    /// The decoder's labels for this field, made on first use. Specs are not
    /// edited once decoding starts (a clone starts with no labels), so the
    /// check that they still describe the field runs in debug builds only: in
    /// release it would cost more than the rest of reading a small field.
    pub fn labels(&self) -> Option<&FieldLabels> {
        let l = self.labels.0.get_or_init(|| FieldLabels::of(self));
        if cfg!(debug_assertions) && !l.describe(self) {
            return None;
        }
        Some(l)
    }

    /// What the field's value means (from its labels when they describe it).
    pub fn meaning(&self) -> FieldMeaning {
        self.labels()
            .map_or_else(|| FieldMeaning::of(self), |l| l.meaning)
    }
}
