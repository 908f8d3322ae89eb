//! The TLS benchmark's inputs: `cargo run --release --example make_tls_bench
//! -- DIR [MB]` writes DIR/tls.pcap (the benchmark's mixed conversation of
//! Produce, Fetch and heartbeats, over TLS 1.3 with TLS_AES_128_GCM_SHA256,
//! repeated on new connections until MB megabytes, default 100), DIR/tls.keylog
//! (its keys) and DIR/clear.pcap (the same conversations, as many, in clear).
//! The records are protected by `kwire::capture::tls::synth` (one client
//! random for every connection: each starts its sequence numbers over).
#![allow(clippy::disallowed_macros)] // test and tool output: a closed stderr may end the run
#[path = "../benches/inputs.rs"]
mod inputs;

use inputs::RepeatUntil;
use kwire::capture::tls::synth::Synth;
use std::io::Write;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = std::path::PathBuf::from(args.get(1).map_or("bench-inputs", String::as_str));
    let mb: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(100);
    std::fs::create_dir_all(&dir).unwrap();
    let plain = inputs::mixed_conversation(
        &inputs::produce_1000(),
        &inputs::fetch_1mb(),
        &inputs::heartbeats_100k(),
    );
    let mut s = Synth::new(0x1301, [0x42; 32]);
    let mut tls = vec![
        (true, s.client_hello(Some("kafka-bench.example"))),
        (false, s.server_flight()),
        (true, s.client_finished()),
    ];
    for (from_client, frame) in &plain {
        tls.push((
            *from_client,
            if *from_client {
                s.client_data(frame)
            } else {
                s.server_data(frame)
            },
        ));
    }
    std::fs::write(dir.join("tls.keylog"), s.key_log()).unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("tls.pcap")).unwrap());
    let (tls_bytes, repeats) =
        inputs::write_repeated(&mut f, &tls, RepeatUntil::Bytes(mb << 20)).unwrap();
    f.flush().unwrap();
    let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join("clear.pcap")).unwrap());
    let (clear_bytes, _) =
        inputs::write_repeated(&mut f, &plain, RepeatUntil::Times(repeats)).unwrap();
    f.flush().unwrap();
    eprintln!(
        "wrote {}: tls.pcap {} MB, clear.pcap {} MB, {repeats} connections of {} frames",
        dir.display(),
        tls_bytes >> 20,
        clear_bytes >> 20,
        plain.len()
    );
}
