//! Protocol facts that the definitions do not describe: error names, header rules.

pub mod error_codes;
pub mod headers;
pub mod meanings;
pub mod crc32c;
pub mod record_batch;
