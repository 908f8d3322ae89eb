//! Write the benchmark inputs to a folder: `cargo run --release --example
//! make_bench_inputs -- DIR [PCAP_MB]`. The capture mixes the other inputs'
//! requests and responses over many connections, cut into TCP segments.
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run
#[path = "../benches/inputs.rs"]
mod inputs;

use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(args.get(1).map_or("bench-inputs", String::as_str));
    let pcap_mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    std::fs::create_dir_all(&dir).unwrap();
    let produce = inputs::produce_1000();
    let fetch = inputs::fetch_1mb();
    let metadata = inputs::metadata_5000();
    let heartbeats = inputs::heartbeats_100k();
    for (name, bytes) in [
        ("produce.bin", &produce),
        ("fetch.bin", &fetch),
        ("metadata.bin", &metadata),
        ("heartbeats.bin", &heartbeats),
        ("fetch-400k.bin", &inputs::fetch_small_records(400_000)),
    ] {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    // The 22 MB Fetch response of 400,000 records once in a capture.
    let mut big =
        std::io::BufWriter::new(std::fs::File::create(dir.join("fetch-400k.pcap")).unwrap());
    let fetch_400k = inputs::fetch_small_records(400_000);
    inputs::write_mixed_pcap(&mut big, 1, &produce, &fetch_400k, &heartbeats).unwrap();
    big.flush().unwrap();
    // An 8.4 MB Metadata response of 200,000 partitions, alone and in a capture.
    let metadata_200k = inputs::metadata(200, 1_000);
    std::fs::write(dir.join("metadata-200k.bin"), &metadata_200k).unwrap();
    let mut md =
        std::io::BufWriter::new(std::fs::File::create(dir.join("metadata-200k.pcap")).unwrap());
    inputs::write_metadata_pcap(&mut md, &metadata_200k).unwrap();
    md.flush().unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("mixed.pcap")).unwrap());
    let (written, frames) =
        inputs::write_mixed_pcap(&mut f, pcap_mb, &produce, &fetch, &heartbeats).unwrap();
    f.flush().unwrap();
    // The listing's and the explorer's capture: 40,000 Produce v8 frames.
    let mut p =
        std::io::BufWriter::new(std::fs::File::create(dir.join("produce-40k.pcap")).unwrap());
    inputs::write_produce_pcap(&mut p, 20_000).unwrap();
    p.flush().unwrap();
    eprintln!(
        "wrote {} ({} MB pcap, {} frames per repeat)",
        dir.display(),
        written >> 20,
        frames
    );
}
