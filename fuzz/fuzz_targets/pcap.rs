//! The pcap/pcapng reader, link layers, TCP reassembly and frame cutting.
#![no_main]
use kwire::capture::for_each_frame;
use kwire::schema::Catalogue;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = for_each_frame(Catalogue::builtin(), data, None, |f| {
        assert!(f.bytes.len() >= 4);
        true
    });
});
