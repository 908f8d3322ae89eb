//! `kwire diff API vA vB`: what changes between two versions of an API (its
//! fields and its header versions) and what that does to the bytes: the
//! smallest instance at both versions, aligned by field path.

use super::align::FramePair;
use super::compare::{same_values, SameValues};
use crate::decode::Direction;
use crate::encode::example::example_frame;
use crate::encode::FrameSpec;
use crate::protocol::headers::header_for;
use crate::schema::diff::{diff, Change};
use crate::schema::{Catalogue, MessageKind, MessageSpec};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct VersionDiff {
    pub api: String,
    pub api_key: i16,
    pub from: i16,
    pub to: i16,
    /// The release whose definitions were used (`None`: the newest of each version).
    pub release: Option<String>,
    pub directions: Vec<DirectionDiff>,
}

/// The request or the response.
#[derive(Clone, Debug, Serialize)]
pub struct DirectionDiff {
    pub kind: MessageKind,
    pub changes: Vec<Change>,
    pub header: HeaderChange,
    /// The smallest instance at both versions.
    pub example: FramePair,
    /// With `--compare`: the same values encoded at both versions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub same_values: Option<SameValues>,
}

#[derive(Clone, Debug, Serialize)]
pub struct HeaderChange {
    pub from: i16,
    pub to: i16,
    /// The same rule chose both versions.
    pub same_rule: bool,
    pub from_reason: String,
    pub to_reason: String,
}

/// The message definition of one direction at a version, or why there is none.
pub(crate) fn spec_at<'c>(
    cat: &'c Catalogue,
    kind: MessageKind,
    api_key: i16,
    version: i16,
    release: Option<&str>,
) -> Result<&'c MessageSpec, String> {
    cat.message(kind, api_key, version, release).ok_or_else(|| {
        format!(
            "{} has no {} version {version}{}; valid: {}",
            cat.api_name(api_key).unwrap_or("the API"),
            kind.as_str(),
            release.map_or(String::new(), |r| format!(" in Kafka {r}")),
            crate::decode::frame::compress_versions(&cat.versions(kind, api_key, release))
        )
    })
}

/// Compare `from` and `to` of an API; `compare` adds the same-values encoding.
pub fn version_diff(
    cat: &Catalogue,
    api_key: i16,
    from: i16,
    to: i16,
    release: Option<&str>,
    compare: bool,
) -> Result<VersionDiff, String> {
    let mut directions = Vec::new();
    for (kind, direction) in [
        (MessageKind::Request, Direction::Request),
        (MessageKind::Response, Direction::Response),
    ] {
        let (sa, sb) = (
            spec_at(cat, kind, api_key, from, release)?,
            spec_at(cat, kind, api_key, to, release)?,
        );
        let ((ha, ra), (hb, rb)) = (header_for(kind, sa, from), header_for(kind, sb, to));
        let fa = FrameSpec {
            direction,
            api_key,
            version: from,
            release,
        };
        let fb = FrameSpec {
            direction,
            api_key,
            version: to,
            release,
        };
        let example = FramePair::decode(
            cat,
            (&fa, example_frame(cat, &fa)?),
            (&fb, example_frame(cat, &fb)?),
        );
        let same_values = if compare {
            Some(same_values(cat, (&fa, sa), (&fb, sb))?)
        } else {
            None
        };
        directions.push(DirectionDiff {
            kind,
            changes: diff(sa, from, sb, to),
            header: HeaderChange {
                from: ha,
                to: hb,
                same_rule: ra == rb,
                from_reason: ra.reason(ha, sa, from),
                to_reason: rb.reason(hb, sb, to),
            },
            example,
            same_values,
        });
    }
    Ok(VersionDiff {
        api: cat.api_name(api_key).unwrap_or_default().to_string(),
        api_key,
        from,
        to,
        release: release.map(str::to_string),
        directions,
    })
}

/// The versions around an API's switch to flexible encodings: (last classic, first flexible).
pub fn flexible_switch(cat: &Catalogue, api_key: i16, release: Option<&str>) -> Option<(i16, i16)> {
    let versions = cat.versions(MessageKind::Request, api_key, release);
    let flexible = |v: i16| {
        cat.message(MessageKind::Request, api_key, v, release)
            .is_some_and(|s| s.is_flexible(v))
    };
    versions
        .windows(2)
        .find(|w| !flexible(w[0]) && flexible(w[1]))
        .map(|w| (w[0], w[1]))
}
