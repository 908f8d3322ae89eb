//! Protocol facts that the definitions do not describe: error names, header
//! rules, SASL tokens after SaslHandshake v0.

pub mod crc32c;
pub mod error_codes;
pub mod error_rules;
pub mod headers;
pub mod meanings;
pub mod record_batch;
pub mod sasl;
pub mod varying;
