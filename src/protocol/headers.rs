//! Which header version goes with which body version.
//!
//! Derived as Kafka's generator does (`ApiMessageTypeGenerator.generateHeaderVersion`):
//! request header 2 for flexible bodies, else 1; response header 1 for flexible bodies,
//! else 0. Exceptions: ApiVersions responses always use header v0 (so any client can
//! read the version list), and ControlledShutdown v0 requests use header v0. Trunk's
//! explicit `headerVersions` map wins when a definition has one.

use crate::schema::MessageSpec;

pub(crate) const PRODUCE_KEY: i16 = 0;
pub(crate) const API_VERSIONS_KEY: i16 = 18;
pub(crate) const CONTROLLED_SHUTDOWN_KEY: i16 = 7;

/// Which rule chose a header version; `kwire decode --explain` and `kwire diff` say it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderRule {
    /// The definition's own `headerVersions` map.
    Explicit,
    /// ControlledShutdown v0 requests predate the client id.
    ControlledShutdownV0,
    /// ApiVersions responses keep header v0 even for flexible bodies (KIP-511).
    ApiVersionsResponse,
    /// The body is flexible, so the header is too (it ends with tagged fields).
    Flexible,
    /// The body is not flexible.
    NotFlexible,
}

impl HeaderRule {
    /// Why the header has version `hv`, in one sentence.
    pub fn reason(&self, hv: i16, spec: &MessageSpec, version: i16) -> String {
        let body = format!("{} v{version}", spec.name);
        match self {
            HeaderRule::Explicit => format!("header v{hv}: the definition of {} maps v{version} to it (headerVersions)", spec.name),
            HeaderRule::ControlledShutdownV0 => {
                "header v0 (api key, version, correlation id; no client id): ControlledShutdown v0 is the one request older than the client id".into()
            }
            HeaderRule::ApiVersionsResponse => format!(
                "header v0 (no tagged fields) although {body} is {}: ApiVersions responses always use header v0, \
                 so a client can read the broker's version list whatever version it asked for (KIP-511)",
                if spec.is_flexible(version) { "flexible" } else { "not flexible" }
            ),
            HeaderRule::Flexible if hv >= 2 => format!(
                "header v2: {body} is flexible, so the header is too: v1's fields plus a tagged-fields section \
                 (client_id keeps its int16 length so that any broker can read it)"
            ),
            HeaderRule::Flexible => format!("header v{hv}: {body} is flexible, so the header ends with a tagged-fields section"),
            HeaderRule::NotFlexible if hv >= 1 => {
                format!("header v{hv}: {body} is not flexible, so the header has no tagged fields (api key, version, correlation id, client id)")
            }
            HeaderRule::NotFlexible => format!("header v{hv}: {body} is not flexible, so the header is just the correlation id"),
        }
    }
}

/// The request header version for a body version, and the rule that chose it.
pub fn request_header(spec: &MessageSpec, version: i16) -> (i16, HeaderRule) {
    if let Some(h) = explicit(spec, version) {
        return (h, HeaderRule::Explicit);
    }
    if spec.api_key == Some(CONTROLLED_SHUTDOWN_KEY) && version == 0 {
        return (0, HeaderRule::ControlledShutdownV0);
    }
    if spec.is_flexible(version) {
        (2, HeaderRule::Flexible)
    } else {
        (1, HeaderRule::NotFlexible)
    }
}

/// The response header version for a body version, and the rule that chose it.
pub(crate) fn response_header(spec: &MessageSpec, version: i16) -> (i16, HeaderRule) {
    if let Some(h) = explicit(spec, version) {
        return (h, HeaderRule::Explicit);
    }
    if spec.api_key == Some(API_VERSIONS_KEY) {
        return (0, HeaderRule::ApiVersionsResponse);
    }
    if spec.is_flexible(version) {
        (1, HeaderRule::Flexible)
    } else {
        (0, HeaderRule::NotFlexible)
    }
}

pub(crate) fn request_header_version(spec: &MessageSpec, version: i16) -> i16 {
    request_header(spec, version).0
}

pub(crate) fn response_header_version(spec: &MessageSpec, version: i16) -> i16 {
    response_header(spec, version).0
}

fn explicit(spec: &MessageSpec, version: i16) -> Option<i16> {
    spec.header_versions
        .iter()
        .find(|(r, _)| r.contains(version))
        .map(|(_, h)| *h)
}

/// The header version for a request or response body.
pub(crate) fn header_for(
    kind: crate::schema::MessageKind,
    spec: &MessageSpec,
    version: i16,
) -> (i16, HeaderRule) {
    if kind == crate::schema::MessageKind::Response {
        response_header(spec, version)
    } else {
        request_header(spec, version)
    }
}
