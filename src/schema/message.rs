//! One message definition: its facts, and what kwire works out from it on
//! first use and keeps with it (its shared name, its layout at each version).

use super::intern::intern;
use super::model::{is_false, is_none_versions, none_versions, FieldSpec, MessageKind, SpecCache};
use super::plan::StructPlan;
use super::versions::Versions;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// One message definition (one JSON file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MessageSpec {
    pub name: String,
    pub kind: MessageKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key: Option<i16>,
    pub valid_versions: Versions,
    #[serde(default = "none_versions")]
    pub flexible_versions: Versions,
    #[serde(default = "none_versions", skip_serializing_if = "is_none_versions")]
    pub deprecated_versions: Versions,
    #[serde(default, skip_serializing_if = "is_false")]
    pub latest_version_unstable: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub listeners: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub common_structs: Vec<String>,
    /// Trunk's explicit body-version → header-version map, when the file has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub header_versions: Vec<(Versions, i16)>,
    pub fields: Vec<FieldSpec>,
    /// Upstream file text, only when loaded with `--defs` (never in the built-in catalogue).
    #[serde(skip)]
    pub source_text: Option<String>,
    /// The name as the decoder shares it between frames, made on first use.
    #[serde(skip)]
    pub shared_name: NameCache,
    /// The layout at each version, made on first use (see [`StructPlan`]).
    #[serde(skip)]
    pub plans: PlanCache,
}

/// A message name as the decoder shares it: interned like the field labels
/// (see [`intern`]) on first use. Like [`super::model::LabelCache`], not cloned and not part
/// of equality.
pub(crate) type NameCache = SpecCache<&'static str>;

impl SpecCache<&'static str> {
    /// `name` as a shared string; interned afresh if the cached one is not `name`.
    pub fn get(&self, name: &str) -> &'static str {
        let cached = *self.0.get_or_init(|| intern(name));
        if cached == name {
            cached
        } else {
            intern(name)
        }
    }
}

impl MessageSpec {
    pub fn is_flexible(&self, version: i16) -> bool {
        self.flexible_versions.contains(version)
    }

    /// Retired API stubs (`validVersions: "none"`) keep only their key and name.
    pub(crate) fn is_retired(&self) -> bool {
        self.valid_versions.is_empty()
    }

    /// Name without its Request/Response suffix: the API's name.
    pub fn api_name(&self) -> &str {
        self.name
            .strip_suffix("Request")
            .or_else(|| self.name.strip_suffix("Response"))
            .unwrap_or(&self.name)
    }
}

/// Versions below this have their plans kept with the spec; others are made per use.
const CACHED_VERSIONS: usize = 64;

/// A spec's plans, one per version, each made on first use.
pub(crate) type PlanCache = SpecCache<Box<[OnceLock<StructPlan>]>>;

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
    pub(crate) fn kept_plan(&self, version: i16) -> Option<&StructPlan> {
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
        plan.cut_batches_are_damage = self.kind == MessageKind::Request;
        plan
    }
}
