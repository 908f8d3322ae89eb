//! Which header version goes with which body version.
//!
//! Derived as Kafka's generator does (`ApiMessageTypeGenerator.generateHeaderVersion`):
//! request header 2 for flexible bodies, else 1; response header 1 for flexible bodies,
//! else 0. Exceptions: ApiVersions responses always use header v0 (so any client can
//! read the version list), and ControlledShutdown v0 requests use header v0. Trunk's
//! explicit `headerVersions` map wins when a definition has one.

use crate::schema::MessageSpec;

pub const API_VERSIONS_KEY: i16 = 18;
pub const CONTROLLED_SHUTDOWN_KEY: i16 = 7;

pub fn request_header_version(spec: &MessageSpec, version: i16) -> i16 {
    if let Some(h) = explicit(spec, version) {
        return h;
    }
    if spec.api_key == Some(CONTROLLED_SHUTDOWN_KEY) && version == 0 {
        return 0;
    }
    if spec.is_flexible(version) {
        2
    } else {
        1
    }
}

pub fn response_header_version(spec: &MessageSpec, version: i16) -> i16 {
    if let Some(h) = explicit(spec, version) {
        return h;
    }
    if spec.api_key == Some(API_VERSIONS_KEY) {
        return 0;
    }
    if spec.is_flexible(version) {
        1
    } else {
        0
    }
}

fn explicit(spec: &MessageSpec, version: i16) -> Option<i16> {
    spec.header_versions.iter().find(|(r, _)| r.contains(version)).map(|(_, h)| *h)
}
