//! Live traffic: asking a broker directly (`client`, over `wire`), the
//! decoding proxy (`proxy`, rewriting broker endpoints with `endpoints`),
//! and recording what passes as a capture (`recorder`, `synth`) that the
//! capture pipeline prints in every format and `--write-pcap` keeps;
//! capturing an interface's packets into the same pipeline (`interface`);
//! frames written back as a capture (`frames_pcap`).

pub mod client;
pub mod endpoints;
pub mod faults;
pub mod frames_pcap;
pub mod interface;
pub mod proxy;
pub mod recorder;
pub mod replay;
pub mod synth;
pub mod tls;
pub mod wire;
