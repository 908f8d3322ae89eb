//! TLS sessions in captures: a synthesized session (the first byte picks the
//! suite, the second whether the key log is right) whose protected bytes
//! the fuzzer's data changes, read with its key log through the capture
//! layer. Every record that does not open is said (skipped or stopped), and
//! no decrypted byte is lost silently.
#![no_main]
use kwire::capture::tls::synth::Synth;
use kwire::capture::tls::{KeyLog, TlsEvent};
use kwire::capture::{for_each_captured, CaptureOptions, Captured};
use kwire::live::synth::{PcapngWriter, TcpFlow, LINKTYPE_RAW};
use kwire::schema::Catalogue;
use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let (Some(&pick), Some(&keys)) = (data.first(), data.get(1)) else {
        return;
    };
    let suite = [0x1301, 0x1302, 0x1303, 0xc02f, 0xc030, 0xcca8][usize::from(pick) % 6];
    let mut s = Synth::new(suite, [pick; 32]);
    let request: Vec<u8> = (0..3000u32).map(|i| i as u8).collect();
    let mut flights = vec![
        (true, s.client_hello(Some("k"))),
        (false, s.server_flight()),
        (true, s.client_finished()),
        (true, s.client_data(&request)),
        (false, s.server_data(&request[..700])),
    ];
    // The fuzzer's bytes are XORed onto the protected flights, in turn.
    let mask = &data[2..];
    let mut at = 0;
    for (_, bytes) in flights.iter_mut().skip(1) {
        for b in bytes.iter_mut().skip(5) {
            if at >= mask.len() {
                break;
            }
            *b ^= mask[at];
            at += 1;
        }
    }
    let mut log = s.key_log();
    if keys & 1 == 1 {
        // A wrong value for every secret after the right ones.
        let wrong: String = log
            .lines()
            .map(|l| format!("{}0\n", &l[..l.len() - 1]))
            .collect();
        log.push_str(&wrong);
    }
    let mut pcap = Vec::new();
    {
        let mut w = PcapngWriter::new(&mut pcap, LINKTYPE_RAW).unwrap();
        let client = "10.0.0.1:50000".parse().unwrap();
        let server = "10.0.0.2:9093".parse().unwrap();
        let mut flow = TcpFlow::new(client, server);
        for p in flow.open() {
            w.packet(1, &p).unwrap();
        }
        for (from_client, bytes) in &flights {
            for p in flow.data(*from_client, bytes) {
                w.packet(2, &p).unwrap();
            }
        }
    }
    let opts = CaptureOptions {
        tls_keylog: Some(Arc::new(KeyLog::parse(log.as_bytes()))),
        ..Default::default()
    };
    let mut sessions = 0;
    let _ = for_each_captured(Catalogue::builtin(), &pcap[..], &opts, |c| {
        if let Captured::Tls(n) = &c {
            if let TlsEvent::Session(s) = &n.event {
                sessions += 1;
                // Nothing decrypted beyond what the records held.
                assert!(s.decrypted_bytes[0] <= s.app_data_bytes[0]);
                assert!(s.decrypted_bytes[1] <= s.app_data_bytes[1]);
            }
        }
        true
    });
    assert!(sessions <= 1);
});
