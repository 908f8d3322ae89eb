//! The paste parser: any text, no panic; accepted hex round-trips.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(bytes) = kwire::input::hex_text::parse_hex_text(text) {
            // Plain hex of the result parses back to the same bytes.
            assert_eq!(kwire::input::hex_text::parse_hex_text(&hex_encode(&bytes)).ok(), Some(bytes));
        }
        let _ = kwire::input::to_bytes(data.to_vec(), kwire::input::InputKind::Auto);
    }
});

fn hex_encode(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
