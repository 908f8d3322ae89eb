// TEMPORARY STUB: helper-2 replaces this whole file with the real parser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HexError { pub line: usize, pub column: usize, pub message: String }
impl std::fmt::Display for HexError { fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { write!(f, "{}", self.message) } }
pub fn parse_hex_text(text: &str) -> Result<Vec<u8>, HexError> {
    let s: String = text.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    hex::decode(s).map_err(|e| HexError { line: 0, column: 0, message: e.to_string() })
}
