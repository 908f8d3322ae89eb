//! The schema part of a page: a table of the fields present at the version
//! shown, with their descriptions and the upstream definition file when the
//! user loaded definitions (`--defs`: their prose is theirs, shown at run time
//! only).

use super::links::type_link;
use super::{anchor, Block, Cell, Table};
use crate::schema::diff::fields_at;
use crate::schema::MessageSpec;
use std::collections::HashSet;

pub(crate) const SOURCE_TITLE: &str = "kafka message schema (.json)";

/// The fields of `spec` at `version` as a table (each row anchored at
/// `prefix` + its path, each type linked to the encoding page, with the
/// definitions' descriptions when they were loaded), then the definition
/// file when it was loaded. `loaded` says whether the user loaded any
/// definitions: only when not does the page say how to see descriptions.
pub(crate) fn schema_blocks(
    spec: &MessageSpec,
    version: i16,
    prefix: &str,
    loaded: bool,
) -> Vec<Block> {
    let hint = if loaded || spec.source_text.is_some() {
        ""
    } else {
        " (pass --defs with upstream definitions to see their source and descriptions)"
    };
    let mut blocks = vec![
        Block::Para(format!(
            "schema: the fields of {} v{version}{hint}",
            spec.name
        )),
        Block::Table(facts_table(spec, version, prefix)),
    ];
    if let Some(text) = &spec.source_text {
        blocks.push(Block::Code {
            title: SOURCE_TITLE.into(),
            text: without_preamble(text).to_string(),
        });
    }
    blocks
}

/// The field paths that [`facts_table`] has a row for.
pub(crate) fn row_paths(spec: &MessageSpec, version: i16) -> HashSet<String> {
    fields_at(spec, version)
        .into_iter()
        .map(|(path, _)| path)
        .collect()
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

pub fn facts_table(spec: &MessageSpec, version: i16, prefix: &str) -> Table {
    let fields = fields_at(spec, version);
    let described = fields.iter().any(|(_, f)| f.about.is_some());
    let mut head: Vec<String> = [
        "field",
        "type",
        "versions",
        "nullable",
        "tag",
        "default",
        "entity type",
        "map key",
    ]
    .map(String::from)
    .to_vec();
    if described {
        head.push("description".into());
    }
    let mut table = Table {
        head,
        ..Default::default()
    };
    for (path, f) in fields {
        let tag = match (f.tag, f.tagged) {
            (Some(t), Some(v)) => format!("{t} (tagged {v})"),
            _ => String::new(),
        };
        let nullable = if f.nullable.is_empty() {
            String::new()
        } else {
            f.nullable.to_string()
        };
        let id = anchor(prefix, &path);
        let mut row = vec![
            Cell::link(&path, format!("#{id}")),
            Cell::link(f.ty.to_string(), type_link(&f.ty)),
            Cell::text(f.versions.to_string()),
            Cell::text(nullable),
            Cell::text(tag),
            Cell::text(f.default.clone().unwrap_or_default()),
            Cell::text(f.entity_type.clone().unwrap_or_default()),
            Cell::text(if f.map_key { "yes" } else { "" }),
        ];
        if described {
            row.push(Cell::text(f.about.clone().unwrap_or_default()));
        }
        table.rows.push(row);
        table.row_ids.push(Some(id));
    }
    table
}

#[cfg(test)]
mod tests {
    use super::without_preamble;

    #[test]
    fn the_licence_comment_is_left_out() {
        assert_eq!(
            without_preamble("// licence\n//\n{\n  \"a\": 1 // note\n}\n"),
            "{\n  \"a\": 1 // note\n}\n"
        );
        assert_eq!(without_preamble("no brace"), "no brace");
    }
}
