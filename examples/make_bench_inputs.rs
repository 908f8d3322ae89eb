//! Write the benchmark inputs to a folder: `cargo run --release --example
//! make_bench_inputs -- DIR [PCAP_MB]`. The capture mixes the other inputs'
//! requests and responses over many connections, cut into TCP segments.
#[path = "../benches/inputs.rs"]
mod inputs;
#[path = "../tests/common/pcap_writer.rs"]
#[allow(dead_code)] // shared with the tests, which use more of it
mod pcap_writer;

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
    for (name, bytes) in [("produce.bin", &produce), ("fetch.bin", &fetch), ("metadata.bin", &metadata), ("heartbeats.bin", &heartbeats)] {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    // One conversation: a Produce request, then the Fetch response paired with a Fetch
    // request, and a run of heartbeats with their responses; repeated until the size is reached.
    let cat = kwire::schema::Catalogue::builtin();
    let fetch_req = kwire::encode::example::example_frame(cat, &kwire::encode::FrameSpec { direction: kwire::decode::Direction::Request, api_key: 1, version: 12, release: None }).unwrap();
    let hb_resp = kwire::encode::example::example_frame(cat, &kwire::encode::FrameSpec { direction: kwire::decode::Direction::Response, api_key: 12, version: 4, release: None }).unwrap();
    let hb_req = &heartbeats[..heartbeats.len() / 100_000];
    let with_corr = |frame: &[u8], corr: i32, request: bool| {
        let mut f = frame.to_vec();
        let at = if request { 8 } else { 4 };
        f[at..at + 4].copy_from_slice(&corr.to_be_bytes());
        f
    };
    let mut conversation = Vec::new();
    let mut corr = 0;
    let mut push = |req: &[u8], resp: Option<&[u8]>, conv: &mut Vec<(bool, Vec<u8>)>| {
        corr += 1;
        conv.push((true, with_corr(req, corr, true)));
        if let Some(r) = resp {
            conv.push((false, with_corr(r, corr, false)));
        }
    };
    push(&produce, None, &mut conversation);
    push(&fetch_req, Some(&fetch), &mut conversation);
    for _ in 0..200 {
        push(hb_req, Some(&hb_resp), &mut conversation);
    }
    let segs = pcap_writer::conversation(&conversation, 1448);
    let one = pcap_writer::pcap(pcap_writer::Link::EthernetV4, &segs);
    // Repeat the packet records (not the file header) until the target size.
    let header = &one[..24];
    let packets = &one[24..];
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("mixed.pcap")).unwrap());
    f.write_all(header).unwrap();
    // Each repeat is a new connection (another client port), so nothing looks retransmitted.
    let mut written = 24;
    let mut repeat: u16 = 0;
    while written < pcap_mb << 20 {
        let mut copy = packets.to_vec();
        let port = (20000 + repeat % 40000).to_be_bytes();
        let mut at = 0;
        while at + 16 <= copy.len() {
            let len = u32::from_le_bytes(copy[at + 8..at + 12].try_into().unwrap()) as usize;
            let tcp = at + 16 + 34; // record header, Ethernet, IPv4
            let side = if copy[tcp..tcp + 2] == 50000u16.to_be_bytes() { tcp } else { tcp + 2 };
            copy[side..side + 2].copy_from_slice(&port);
            at += 16 + len;
        }
        f.write_all(&copy).unwrap();
        written += copy.len();
        repeat = repeat.wrapping_add(1);
    }
    f.flush().unwrap();
    eprintln!("wrote {} ({} MB pcap, {} frames per repeat)", dir.display(), written >> 20, conversation.len());
}
