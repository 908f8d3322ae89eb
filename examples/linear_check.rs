//! Decode time against input size for random and zero-filled inputs (a quick check
//! that nothing is quadratic): `cargo run --release --example linear_check`.
use bytes::Bytes;
use kwire::decode::{decode_frames, DecodeOptions, Direction};
use kwire::schema::Catalogue;

fn main() {
    let cat = Catalogue::builtin();
    let mut seed = 0x1234_5678_9abc_def0u64;
    for size in [1 << 12, 1 << 14, 1 << 16, 1 << 18] {
        let random: Vec<u8> = (0..size)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        for (name, data) in [
            ("random", random.clone()),
            ("zeros", vec![0u8; size]),
            ("ff", vec![0xffu8; size]),
        ] {
            let mut worst = std::time::Duration::ZERO;
            let mut worst_api = 0;
            for key in cat.api_keys() {
                for v in cat.versions(kwire::schema::MessageKind::Response, key, None) {
                    let mut d = data.clone();
                    d[..4].copy_from_slice(&((size - 4) as i32).to_be_bytes());
                    let opts = DecodeOptions {
                        direction: Some(Direction::Response),
                        api_key: Some(key),
                        api_version: Some(v),
                        ..Default::default()
                    };
                    let t = std::time::Instant::now();
                    let _ = decode_frames(cat, &Bytes::from(d), &opts);
                    if t.elapsed() > worst {
                        worst = t.elapsed();
                        worst_api = key * 100 + v;
                    }
                }
            }
            println!(
                "{size:>7} {name:>6}: slowest response decode {worst:?} (api*100+v = {worst_api})"
            );
        }
    }
}
