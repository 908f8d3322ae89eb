//! `kwire primitive`: one primitive value to bytes (or bytes to a value), with
//! how the bytes make the value.

use super::exit;
use clap::Args;
use kwire::render::text_tree::{render_tree_annotated, TreeOptions};
use kwire::teach::explain::{count_bytes, explain, shown};
use kwire::teach::primitive::{decode, encode, parse_value, Decoded, WireType};
use kwire::text::escape::sanitize;
use std::io::Write;

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire primitive uvarint 300\n  kwire primitive varint --hex \"ac 02\"\n  kwire primitive tagged_fields '{\"0\": \"0a\"}'"
)]
pub struct PrimitiveArgs {
    /// bool, int8, int16, uint16, int32, uint32, int64, float64, uuid, uvarint,
    /// varint, varlong, string, compact_string, nullable_string,
    /// compact_nullable_string, bytes, compact_bytes, nullable_bytes,
    /// compact_nullable_bytes, tagged_fields (Kafka's names work too).
    #[arg(value_name = "TYPE")]
    pub ty: String,
    /// The value: a number, text, hex for bytes, `null` for nullable types,
    /// a JSON object of tag → hex for tagged fields ({"0": "0a"}).
    #[arg(
        required_unless_present = "hex",
        conflicts_with = "hex",
        allow_hyphen_values = true
    )]
    pub value: Option<String>,
    /// Read these bytes (hex) as the type instead.
    #[arg(long, value_name = "HEX")]
    pub hex: Option<String>,
}

pub fn run(args: &PrimitiveArgs) -> i32 {
    let Some(ty) = WireType::parse(&args.ty) else {
        let names: Vec<&str> = WireType::ALL.iter().map(|t| t.name()).collect();
        kwire::stderr_line!(
            "kwire: unknown primitive type {:?}; known: {}",
            args.ty,
            names.join(", ")
        );
        return exit::FAILURE;
    };
    let (bytes, heading) = match (&args.value, &args.hex) {
        (Some(text), _) => match parse_value(ty, text).and_then(|v| encode(ty, &v).map(|b| (b, v)))
        {
            Ok((b, v)) => {
                let heading = format!("{} {} → {}", ty.name(), cut(&v.to_string()), sized(&b));
                (b, heading)
            }
            Err(e) => {
                kwire::stderr_line!("kwire: {} {text:?}: {e}", ty.name());
                return exit::FAILURE;
            }
        },
        (None, Some(hex)) => match kwire::teach::primitive::parse_hex(hex) {
            Ok(b) => (b, String::new()),
            Err(e) => {
                kwire::stderr_line!("kwire: {e}");
                return exit::FAILURE;
            }
        },
        (None, None) => unreachable!("clap requires a value or --hex"),
    };
    // Encoded values are read back, so what is shown is what a decoder sees.
    let decoded = match decode(ty, &bytes) {
        Ok(d) => d,
        Err(e) => {
            kwire::stderr_line!("kwire: {} as {}: {e}", shown(&bytes), ty.name());
            return exit::MALFORMED;
        }
    };
    let heading = if heading.is_empty() {
        format!(
            "{} as {} → {}",
            sized(&bytes),
            ty.name(),
            cut(&decoded.value().to_string())
        )
    } else {
        heading
    };
    let _ = std::io::stdout()
        .lock()
        .write_all(render(&heading, &decoded).as_bytes());
    exit::OK
}

/// `ac 02 (2 bytes)`; long byte strings are cut (and say their length).
fn sized(b: &[u8]) -> String {
    let s = shown(b);
    if s.contains('…') {
        s
    } else {
        format!("{s} ({})", count_bytes(b.len()))
    }
}

/// Long values are cut in the heading; the tree below shows them.
fn cut(s: &str) -> String {
    const WIDTH: usize = 60;
    if s.chars().count() <= WIDTH {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(WIDTH).collect::<String>())
    }
}

fn render(heading: &str, d: &Decoded) -> String {
    let mut out = format!("{}\n", sanitize(heading));
    for node in &d.root.children {
        out.push_str(&render_tree_annotated(
            node,
            &d.bytes,
            // Fitted to the terminal as `decode --explain` is (`--wide`: whole lines).
            TreeOptions {
                width: super::width::stdout(),
                ..TreeOptions::default()
            },
            &|n, parent, buf| explain(n, parent, buf),
        ));
    }
    for w in &d.warnings {
        out.push_str(&format!("warning: {}\n", sanitize(w)));
    }
    out
}
