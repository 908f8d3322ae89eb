//! `kwire apis`: every API with its versions, flexible versions, header
//! versions, deprecated and unstable versions, and the releases defining it.

use super::exit;
use clap::{Args, ValueEnum};
use kwire::render::apis::{apis_facts, write_table};
use kwire::render::json::to_text;
use kwire::schema::Catalogue;
use std::io::Write;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ApisFormat {
    Text,
    Json,
}

#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  kwire apis\n  kwire apis --format json\n  kwire --kafka-release 4.0 apis"
)]
pub struct ApisArgs {
    #[arg(long, value_enum, default_value_t = ApisFormat::Text)]
    pub format: ApisFormat,
}

pub fn run(cat: &Catalogue, release: Option<&str>, args: &ApisArgs) -> i32 {
    let facts = apis_facts(cat, release);
    // Output errors (a closed pipe) end the listing quietly.
    let _ = match args.format {
        ApisFormat::Json => writeln!(
            std::io::stdout().lock(),
            "{}",
            to_text(&serde_json::to_value(&facts).unwrap_or_default())
        ),
        ApisFormat::Text => write_table(&mut super::width::text_out(), &facts),
    };
    exit::OK
}
