//! Test support: locating `../shared` (skip with a reason when absent, fail when
//! KWIRE_REQUIRE_SHARED=1) and decoding helpers.
#![allow(dead_code)]

use std::path::PathBuf;

/// The shared reference folder beside the repository, if present.
/// Returns `None` (after printing why) when it is absent and not required.
pub fn shared_dir(what: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    let path = dir.join(what);
    if path.exists() {
        return Some(path);
    }
    if std::env::var("KWIRE_REQUIRE_SHARED").is_ok_and(|v| v == "1") {
        panic!("KWIRE_REQUIRE_SHARED=1 but {} is missing", path.display());
    }
    eprintln!("SKIP: {} is absent (set KWIRE_REQUIRE_SHARED=1 to make this a failure)", path.display());
    None
}

/// Read every file of a .tar.gz into memory: (path, contents).
pub fn read_tar_gz(path: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    use std::io::Read;
    let f = std::fs::File::open(path).expect("open archive");
    let mut ar = tar::Archive::new(flate2::read::GzDecoder::new(f));
    let mut out = Vec::new();
    for e in ar.entries().expect("tar entries") {
        let mut e = e.expect("tar entry");
        if !e.header().entry_type().is_file() {
            continue;
        }
        let p = e.path().expect("path").to_string_lossy().to_string();
        let mut buf = Vec::new();
        e.read_to_end(&mut buf).expect("read entry");
        out.push((p, buf));
    }
    out
}
pub mod random_body;
pub mod batches;
pub mod pcap_writer;
pub mod seed;

/// Every (direction, api key, version) that the catalogue decodes.
pub fn all_messages(cat: &kwire::schema::Catalogue) -> Vec<(kwire::decode::Direction, i16, i16)> {
    use kwire::decode::Direction;
    use kwire::schema::MessageKind;
    let mut out = Vec::new();
    for key in cat.api_keys() {
        for (d, kind) in [(Direction::Request, MessageKind::Request), (Direction::Response, MessageKind::Response)] {
            for v in cat.versions(kind, key, None) {
                out.push((d, key, v));
            }
        }
    }
    out
}
