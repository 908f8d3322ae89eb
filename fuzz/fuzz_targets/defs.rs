//! Definition files (`--defs`): any text as one definition, and as a file
//! whose common structs use each other. Never a panic; what loads stays
//! within the import's limits.
#![no_main]
use kwire::schema::import::{parse_definition, MAX_DEPTH, MAX_EXPANDED_FIELDS};
use kwire::schema::model::FieldSpec;
use libfuzzer_sys::fuzz_target;

fn count(fields: &[FieldSpec], depth: usize, deepest: &mut usize) -> usize {
    *deepest = (*deepest).max(depth);
    fields
        .iter()
        .map(|f| 1 + count(&f.fields, depth + 1, deepest))
        .sum()
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(spec) = parse_definition(text, "fuzz.json") {
        let mut deepest = 0;
        let n = count(&spec.fields, 1, &mut deepest);
        assert!(n <= MAX_EXPANDED_FIELDS, "{n} fields");
        assert!(deepest <= MAX_DEPTH + 1, "{deepest} deep");
        // Its plans, at every version it declares (capped), are made.
        for v in spec.valid_versions.iter_capped(32) {
            let _ = spec.plan(v);
        }
    }
});
