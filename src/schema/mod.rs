//! Protocol definitions: the schema language, the importer and the catalogue.

pub mod catalogue;
pub mod diff;
pub mod import;
pub mod intern;
pub mod jsonc;
pub mod length;
pub mod message;
pub mod model;
pub mod plan;
pub mod source;
pub mod versions;

pub use catalogue::Catalogue;
pub use length::LengthPrefix;
pub use message::MessageSpec;
pub use model::{FieldSpec, FieldType, MessageKind, Primitive};
pub use versions::Versions;
