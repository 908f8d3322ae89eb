//! The schema part of a page: the upstream definition file when the user loaded
//! one (`--defs`: its prose is theirs, shown at run time only), else a table of
//! the catalogue's facts for the fields present at the version shown.

use super::{Block, Cell, Table};
use crate::schema::diff::fields_at;
use crate::schema::MessageSpec;

pub const SOURCE_TITLE: &str = "kafka message schema (.json)";

pub fn schema_blocks(spec: &MessageSpec, version: i16) -> Vec<Block> {
    match &spec.source_text {
        Some(text) => vec![Block::Code { title: SOURCE_TITLE.into(), text: without_preamble(text).to_string() }],
        None => vec![
            Block::Para(format!(
                "schema: the fields of {} v{version} as kwire's catalogue records them (pass --defs with upstream definitions to see their source and descriptions)",
                spec.name
            )),
            Block::Table(facts_table(spec, version)),
        ],
    }
}

/// The definition from its opening brace: the licence comment above it is the
/// same in every file and says nothing about the message.
fn without_preamble(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return &text[at..];
        }
        at += line.len();
    }
    text
}

pub fn facts_table(spec: &MessageSpec, version: i16) -> Table {
    let head = ["field", "type", "versions", "nullable", "tag", "default", "entity type", "map key"];
    let rows = fields_at(spec, version)
        .into_iter()
        .map(|(path, f)| {
            let tag = match (f.tag, f.tagged) {
                (Some(t), Some(v)) => format!("{t} (tagged {v})"),
                _ => String::new(),
            };
            let nullable = if f.nullable.is_empty() { String::new() } else { f.nullable.to_string() };
            [
                path,
                f.ty.to_string(),
                f.versions.to_string(),
                nullable,
                tag,
                f.default.clone().unwrap_or_default(),
                f.entity_type.clone().unwrap_or_default(),
                if f.map_key { "yes".into() } else { String::new() },
            ]
            .into_iter()
            .map(Cell::text)
            .collect()
        })
        .collect();
    Table { head: head.iter().map(|s| s.to_string()).collect(), rows }
}

#[cfg(test)]
mod tests {
    use super::without_preamble;

    #[test]
    fn the_licence_comment_is_left_out() {
        assert_eq!(without_preamble("// licence\n//\n{\n  \"a\": 1 // note\n}\n"), "{\n  \"a\": 1 // note\n}\n");
        assert_eq!(without_preamble("no brace"), "no brace");
    }
}
