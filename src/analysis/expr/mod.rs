//! The display filter language itself, below the exchanges that use it:
//! text to a tree ([`syntax`]), names and values resolved against the
//! catalogue ([`compile`]), and field tests run on a frame's values tape
//! ([`fields`]). What an expression means over an exchange, and the
//! commands' filter, are [`super::filter`]'s.

pub mod compile;
pub mod fields;
pub mod syntax;
