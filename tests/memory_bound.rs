//! The stated bound: with the budgets at their defaults, every command on
//! every hostile input peaks at most at 64 MiB plus a small multiple of the
//! input's size (`MULTIPLE` below, stated in FUZZING.md). Each run is the real
//! binary; `/usr/bin/time -f %M` gives its peak resident set.
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run

mod common;

use common::batches::{batch, batch_of, compress, legacy_message, produce, record_bytes, Rec};
use common::pcap_writer::{conversation, on_port, pcap, Link, Seg};
use kwire::capture::tls::synth::Synth;
use kwire::schema::Catalogue;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Peak RSS allowed: a fixed part (the binary, its catalogue, the budgets'
/// 32 MiB of expanded data) plus this many bytes per input byte (tree nodes
/// are 216 bytes; a tagged field or a header can be one node per byte or two).
const FIXED: u64 = 64 << 20;
const MULTIPLE: u64 = 600;

fn tiny_records(count: usize) -> Vec<Rec> {
    (0..count)
        .map(|_| Rec {
            key: None,
            value: None,
            headers: Vec::new(),
            timestamp_delta: 0,
        })
        .collect()
}

struct Inputs {
    dir: PathBuf,
}

impl Inputs {
    fn new() -> Inputs {
        let dir = std::env::temp_dir().join(format!("kwire-memory-bound-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Inputs { dir }
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let p = self.dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }
}

impl Drop for Inputs {
    fn drop(&mut self) {
        if std::env::var_os("KWIRE_KEEP_INPUTS").is_none() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Peak resident set of `kwire ARGS` in bytes, and its exit status.
fn peak_rss(args: &[&str], file: &Path) -> (u64, i32) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(env!("CARGO_BIN_EXE_kwire"))
        .args(args)
        .arg(file)
        .output()
        .expect("/usr/bin/time (Debian package time) runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let kb: u64 = stderr
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    (kb * 1024, out.status.code().unwrap_or(-1))
}

#[test]
fn every_command_on_hostile_input_stays_within_the_stated_bound() {
    if !Path::new("/usr/bin/time").exists() {
        panic!("/usr/bin/time is missing (apt-get install time); the bound cannot be measured");
    }
    let cat = Catalogue::builtin();
    let inputs = Inputs::new();
    // 8 MiB of 7-byte records in a gzip batch: a few kilobytes.
    let count = (8 << 20) / 7;
    let bomb_batch = batch_of(
        0,
        1,
        &record_bytes(&tiny_records(1)[0], 0).repeat(count),
        count as i32,
    );
    let bomb = produce(cat, "t", &bomb_batch);
    // 32 gzip batches of 8 MiB each.
    let big_value = vec![0u8; 8 << 20];
    let one = batch(
        0,
        1,
        &[Rec {
            key: None,
            value: Some(big_value),
            headers: Vec::new(),
            timestamp_delta: 0,
        }],
    );
    let many = produce(cat, "t", &one.repeat(32));
    // Nested legacy wrappers: 64 gzip wrappers of 4 MiB of zeros inside one.
    let inner_value = compress(1, &legacy_message(0, 1, 0, None, Some(&vec![0u8; 4 << 20])));
    let inner = legacy_message(0, 1, 1, None, Some(&inner_value));
    let nested = legacy_message(0, 1, 1, None, Some(&compress(1, &inner.repeat(64))));
    // 8 MiB of records whose keys and values are in Schema Registry framing
    // (three more nodes each) in a gzip batch.
    let framed_record = record_bytes(
        &Rec {
            key: Some(vec![0, 0, 0, 0, 1, b'k']),
            value: Some(vec![0, 0, 0, 0, 1, b'v']),
            headers: Vec::new(),
            timestamp_delta: 0,
        },
        0,
    );
    let framed_count = (8 << 20) / framed_record.len();
    let framed = produce(
        cat,
        "t",
        &batch_of(
            0,
            1,
            &framed_record.repeat(framed_count),
            framed_count as i32,
        ),
    );
    // The bomb frame in a capture.
    let capture = pcap(
        Link::EthernetV4,
        &conversation(&[(true, bomb.clone())], 1400),
    );
    let files = [
        ("bomb.bin", bomb.clone()),
        ("bomb.hex", hex::encode(&bomb).into_bytes()),
        ("many.bin", many),
        ("framed.bin", framed),
        ("nested.log", nested),
        ("zeros.log", vec![0u8; 1 << 20]),
        // The bomb's batch as a log segment, four times over.
        ("bomb-batches.log", bomb_batch.repeat(4)),
        ("bomb.pcap", capture),
        // A `hexdump -C` text whose `*` line repeats a row up to offset 64 MiB.
        ("repeat.txt", b"00000000  00 00 00 0c 00 03 00 01  00 00 00 01 00 00 00 00  |................|\n*\n04000000\n".to_vec()),
    ];
    let runs: &[(&str, &[&str])] = &[
        ("bomb.bin", &["decode", "--binary"]),
        ("bomb.bin", &["decode", "--binary", "--format", "tree-json"]),
        ("bomb.bin", &["decode", "--binary", "--format", "grid"]),
        ("bomb.bin", &["decode", "--binary", "--json"]),
        ("bomb.hex", &["decode"]),
        ("many.bin", &["decode", "--binary"]),
        ("many.bin", &["decode", "--binary", "--format", "tree-json"]),
        ("nested.log", &["records"]),
        ("nested.log", &["records", "--format", "dump"]),
        ("nested.log", &["records", "--format", "json"]),
        ("zeros.log", &["records"]),
        ("bomb-batches.log", &["records"]),
        ("bomb-batches.log", &["check"]),
        ("bomb.pcap", &["capture"]),
        ("bomb.pcap", &["capture", "--format", "tree-json"]),
        ("bomb.pcap", &["capture", "--list"]),
        ("bomb.pcap", &["records"]),
        ("bomb.pcap", &["records", "--format", "json"]),
        ("framed.bin", &["decode", "--binary"]),
        ("bomb.pcap", &["stats", "--by", "client,topic"]),
        ("bomb.pcap", &["inventory", "--target-release", "4.3"]),
        ("repeat.txt", &["decode"]),
    ];
    let mut report = Vec::new();
    for (name, args) in runs {
        let bytes = &files.iter().find(|(n, _)| n == name).expect("an input").1;
        let path = inputs.write(name, bytes);
        let (peak, status) = peak_rss(args, &path);
        let bound = FIXED + MULTIPLE * bytes.len() as u64;
        report.push(format!(
            "kwire {} {name} ({} bytes): peak {} KiB, bound {} KiB, exit {status}",
            args.join(" "),
            bytes.len(),
            peak >> 10,
            bound >> 10
        ));
        assert!(peak <= bound, "{}", report.last().unwrap());
        // Damage and budgets are never exit 0 where records are decoded (the
        // values-only JSON checks them too; a listing does not decode them).
        if !args.contains(&"--list") && !matches!(args[0], "stats" | "inventory") {
            assert_ne!(status, 0, "{}", report.last().unwrap());
        }
    }
    // The bomb frame over TLS 1.3, decrypted with its key log; and 500 TLS
    // connections, each holding a record cut short after half its 18 KiB.
    let mut s = Synth::new(0x1301, [7; 32]);
    let tls = [
        (true, s.client_hello(None)),
        (false, s.server_flight()),
        (true, s.client_finished()),
        (true, s.client_data(&bomb)),
    ];
    let tls_bomb = pcap(Link::EthernetV4, &conversation(&tls, 1400));
    let keylog = inputs
        .write("bomb.keylog", s.key_log().as_bytes())
        .display()
        .to_string();
    let mut record = vec![23, 3, 3, 0x48, 0x00];
    record.extend(vec![0x5a; 9000]);
    let opening = [
        (true, s.client_hello(None)),
        (false, s.server_flight()),
        (true, record),
    ];
    let segs: Vec<Seg> = (0..500)
        .flat_map(|i| on_port(conversation(&opening, 1400), 10_000 + i as u16))
        .collect();
    let cut_records = pcap(Link::EthernetV4, &segs);
    let tls_runs: [(&str, &[u8], Vec<&str>); 4] = [
        (
            "bomb-tls.pcap",
            &tls_bomb,
            vec!["capture", "--tls-keylog", &keylog],
        ),
        (
            "bomb-tls.pcap",
            &tls_bomb,
            vec!["stats", "--tls-keylog", &keylog],
        ),
        (
            "cut-records.pcap",
            &cut_records,
            vec!["capture", "--list", "--tls-keylog", &keylog],
        ),
        ("cut-records.pcap", &cut_records, vec!["capture", "--json"]),
    ];
    for (name, bytes, args) in &tls_runs {
        let path = inputs.write(name, bytes);
        let (peak, status) = peak_rss(args, &path);
        let bound = FIXED + MULTIPLE * bytes.len() as u64;
        report.push(format!(
            "kwire {} {name} ({} bytes): peak {} KiB, bound {} KiB, exit {status}",
            args.join(" "),
            bytes.len(),
            peak >> 10,
            bound >> 10
        ));
        assert!(peak <= bound, "{}", report.last().unwrap());
        // Over a budget, or records cut short; `stats` reads no record data.
        if args[0] != "stats" {
            assert_eq!(status, 2, "{}", report.last().unwrap());
        }
    }
    eprintln!("{}", report.join("\n"));
}
