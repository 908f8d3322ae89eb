//! The cryptography of TLS records: the cipher suites kwire decrypts, the
//! key schedules that turn a key log's secrets into record keys (TLS 1.2's
//! PRF over HMAC-SHA-256/384, TLS 1.3's HKDF-Expand-Label), and the AEADs
//! (AES-128-GCM, AES-256-GCM, ChaCha20-Poly1305, from RustCrypto) that open
//! a record with its nonce and additional data. `seal` is the inverse, for
//! tests and for making benchmark captures.

use aes_gcm::aead::generic_array::GenericArray;
use aes_gcm::aead::{AeadInPlace, KeyInit};
use aes_gcm::{Aes128Gcm, Aes256Gcm};
use chacha20poly1305::ChaCha20Poly1305;
use hmac::{Hmac, Mac};
use sha2::{Sha256, Sha384};

/// The AEAD of a cipher suite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bulk {
    Aes128Gcm,
    Aes256Gcm,
    ChaCha20Poly1305,
}

impl Bulk {
    pub(crate) fn key_len(self) -> usize {
        match self {
            Bulk::Aes128Gcm => 16,
            Bulk::Aes256Gcm | Bulk::ChaCha20Poly1305 => 32,
        }
    }
}

/// The hash of a suite's PRF (TLS 1.2) or HKDF (TLS 1.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hash {
    Sha256,
    Sha384,
}

impl Hash {
    /// The hash's output length in bytes.
    pub(crate) fn output_len(self) -> usize {
        match self {
            Hash::Sha256 => 32,
            Hash::Sha384 => 48,
        }
    }
}

/// A cipher suite kwire decrypts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suite {
    pub id: u16,
    pub tls13: bool,
    pub bulk: Bulk,
    pub hash: Hash,
}

/// The suite with this id, if kwire decrypts it: the three TLS 1.3 suites,
/// and the TLS 1.2 suites with AES-GCM or ChaCha20-Poly1305 (the key log
/// gives the master secret, so the key exchange does not matter: ECDHE, DHE
/// or RSA).
pub fn suite(id: u16) -> Option<Suite> {
    use Bulk::*;
    use Hash::*;
    let (tls13, bulk, hash) = match id {
        0x1301 => (true, Aes128Gcm, Sha256),
        0x1302 => (true, Aes256Gcm, Sha384),
        0x1303 => (true, ChaCha20Poly1305, Sha256),
        0xc02b | 0xc02f | 0x009c | 0x009e => (false, Aes128Gcm, Sha256),
        0xc02c | 0xc030 | 0x009d | 0x009f => (false, Aes256Gcm, Sha384),
        0xcca8..=0xccaa => (false, ChaCha20Poly1305, Sha256),
        _ => return None,
    };
    Some(Suite {
        id,
        tls13,
        bulk,
        hash,
    })
}

/// The IANA name of a cipher suite, for the common ones.
pub(crate) fn suite_name(id: u16) -> Option<&'static str> {
    Some(match id {
        0x1301 => "TLS_AES_128_GCM_SHA256",
        0x1302 => "TLS_AES_256_GCM_SHA384",
        0x1303 => "TLS_CHACHA20_POLY1305_SHA256",
        0x1304 => "TLS_AES_128_CCM_SHA256",
        0x1305 => "TLS_AES_128_CCM_8_SHA256",
        0xc02b => "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
        0xc02c => "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
        0xc02f => "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        0xc030 => "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        0xcca8 => "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        0xcca9 => "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
        0xccaa => "TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
        0x009c => "TLS_RSA_WITH_AES_128_GCM_SHA256",
        0x009d => "TLS_RSA_WITH_AES_256_GCM_SHA384",
        0x009e => "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
        0x009f => "TLS_DHE_RSA_WITH_AES_256_GCM_SHA384",
        0xc009 => "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
        0xc00a => "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
        0xc013 => "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
        0xc014 => "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
        0xc023 => "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
        0xc024 => "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384",
        0xc027 => "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256",
        0xc028 => "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
        0xc0ac => "TLS_ECDHE_ECDSA_WITH_AES_128_CCM",
        0xc0ad => "TLS_ECDHE_ECDSA_WITH_AES_256_CCM",
        0x002f => "TLS_RSA_WITH_AES_128_CBC_SHA",
        0x0035 => "TLS_RSA_WITH_AES_256_CBC_SHA",
        0x003c => "TLS_RSA_WITH_AES_128_CBC_SHA256",
        0x003d => "TLS_RSA_WITH_AES_256_CBC_SHA256",
        0x000a => "TLS_RSA_WITH_3DES_EDE_CBC_SHA",
        _ => return None,
    })
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let Ok(mut m) = <Hmac<Sha256> as Mac>::new_from_slice(key) else {
        return Vec::new();
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().to_vec()
}

fn hmac_sha384(key: &[u8], parts: &[&[u8]]) -> Vec<u8> {
    let Ok(mut m) = <Hmac<Sha384> as Mac>::new_from_slice(key) else {
        return Vec::new();
    };
    for p in parts {
        m.update(p);
    }
    m.finalize().into_bytes().to_vec()
}

/// TLS 1.2's PRF (RFC 5246 §5): P_hash(secret, label + seed), `len` bytes.
pub(crate) fn prf12(hash: Hash, secret: &[u8], label: &[u8], seed: &[u8], len: usize) -> Vec<u8> {
    let mac = |parts: &[&[u8]]| match hash {
        Hash::Sha256 => hmac_sha256(secret, parts),
        Hash::Sha384 => hmac_sha384(secret, parts),
    };
    let mut out = Vec::with_capacity(len + hash.output_len());
    // A(1) = HMAC(secret, label + seed); A(i) = HMAC(secret, A(i-1)).
    let mut a = mac(&[label, seed]);
    while out.len() < len {
        out.extend(mac(&[&a, label, seed]));
        a = mac(&[&a]);
    }
    out.truncate(len);
    out
}

/// TLS 1.3's HKDF-Expand-Label (RFC 8446 §7.1), `len` bytes (at most 255).
pub(crate) fn expand_label(
    hash: Hash,
    secret: &[u8],
    label: &[u8],
    context: &[u8],
    len: usize,
) -> Option<Vec<u8>> {
    let mut info = Vec::with_capacity(4 + 6 + label.len() + context.len());
    info.extend_from_slice(&u16::try_from(len).ok()?.to_be_bytes());
    info.push(u8::try_from(6 + label.len()).ok()?);
    info.extend_from_slice(b"tls13 ");
    info.extend_from_slice(label);
    info.push(u8::try_from(context.len()).ok()?);
    info.extend_from_slice(context);
    let mut out = vec![0; len];
    match hash {
        Hash::Sha256 => hkdf::Hkdf::<Sha256>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
        Hash::Sha384 => hkdf::Hkdf::<Sha384>::from_prk(secret)
            .ok()?
            .expand(&info, &mut out)
            .ok()?,
    }
    Some(out)
}

/// The next application traffic secret after a KeyUpdate (RFC 8446 §7.2).
pub(crate) fn next_traffic_secret(hash: Hash, secret: &[u8]) -> Option<Vec<u8>> {
    expand_label(hash, secret, b"traffic upd", b"", hash.output_len())
}

enum Aead {
    Aes128(Box<Aes128Gcm>),
    Aes256(Box<Aes256Gcm>),
    ChaCha(Box<ChaCha20Poly1305>),
}

impl Aead {
    fn new(bulk: Bulk, key: &[u8]) -> Option<Aead> {
        if key.len() != bulk.key_len() {
            return None;
        }
        Some(match bulk {
            Bulk::Aes128Gcm => {
                Aead::Aes128(Box::new(Aes128Gcm::new(GenericArray::from_slice(key))))
            }
            Bulk::Aes256Gcm => {
                Aead::Aes256(Box::new(Aes256Gcm::new(GenericArray::from_slice(key))))
            }
            Bulk::ChaCha20Poly1305 => Aead::ChaCha(Box::new(ChaCha20Poly1305::new(
                GenericArray::from_slice(key),
            ))),
        })
    }

    fn open(&self, nonce: &[u8; 12], aad: &[u8], data: &mut [u8], tag: &[u8]) -> bool {
        let n = GenericArray::from_slice(nonce);
        let t = GenericArray::from_slice(tag);
        match self {
            Aead::Aes128(c) => c.decrypt_in_place_detached(n, aad, data, t).is_ok(),
            Aead::Aes256(c) => c.decrypt_in_place_detached(n, aad, data, t).is_ok(),
            Aead::ChaCha(c) => c.decrypt_in_place_detached(n, aad, data, t).is_ok(),
        }
    }

    fn seal(&self, nonce: &[u8; 12], aad: &[u8], data: &mut [u8]) -> Option<[u8; TAG]> {
        let n = GenericArray::from_slice(nonce);
        let tag = match self {
            Aead::Aes128(c) => c.encrypt_in_place_detached(n, aad, data).ok()?,
            Aead::Aes256(c) => c.encrypt_in_place_detached(n, aad, data).ok()?,
            Aead::ChaCha(c) => c.encrypt_in_place_detached(n, aad, data).ok()?,
        };
        let mut t = [0; TAG];
        t.copy_from_slice(&tag);
        Some(t)
    }
}

/// Every AEAD here has a 16-byte tag.
pub(crate) const TAG: usize = 16;
/// TLS 1.2 AES-GCM records carry this much of their nonce (RFC 5288).
pub(crate) const EXPLICIT_NONCE: usize = 8;

/// The most plaintext a protected record of this suite with a fragment of
/// `fragment` bytes can hold: what a record that does not open takes from
/// its direction's stream.
pub(crate) fn plaintext_room(suite: Suite, fragment: usize) -> u64 {
    let overhead = match (suite.tls13, suite.bulk) {
        (true, _) => TAG + 1, // the inner content type
        (false, Bulk::ChaCha20Poly1305) => TAG,
        (false, _) => TAG + EXPLICIT_NONCE,
    };
    fragment.saturating_sub(overhead) as u64
}

/// How a record's nonce and additional data are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// TLS 1.2 AES-GCM: a 4-byte implicit salt and an 8-byte explicit nonce in
    /// the record; AAD is seq, type, version, plaintext length.
    Tls12Gcm,
    /// TLS 1.2 ChaCha20-Poly1305 (RFC 7905): the 12-byte IV XOR the sequence
    /// number; AAD as for GCM.
    Tls12Xor,
    /// TLS 1.3: the IV XOR the sequence number; AAD is the record header.
    Tls13,
}

/// One direction's record protection: its key, IV and the sequence number of
/// the next record.
pub struct RecordKeys {
    aead: Aead,
    iv: [u8; 12],
    layout: Layout,
    pub seq: u64,
}

/// Why a record did not open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenError {
    /// Shorter than its nonce and tag.
    TooShort,
    /// The tag does not match: a wrong key, or damaged bytes.
    Authentication,
    /// TLS 1.3: the inner plaintext is all zeros (no content type).
    NoContentType,
}

impl RecordKeys {
    /// TLS 1.3 keys from a traffic secret.
    pub fn tls13(suite: Suite, secret: &[u8]) -> Option<RecordKeys> {
        let key = expand_label(suite.hash, secret, b"key", b"", suite.bulk.key_len())?;
        let iv = expand_label(suite.hash, secret, b"iv", b"", 12)?;
        let mut v = [0; 12];
        v.copy_from_slice(&iv);
        Some(RecordKeys {
            aead: Aead::new(suite.bulk, &key)?,
            iv: v,
            layout: Layout::Tls13,
            seq: 0,
        })
    }

    /// TLS 1.2 keys of both directions (client, server) from the master
    /// secret: the key block of RFC 5246 §6.3 (AEAD suites have no MAC keys).
    pub fn tls12(
        suite: Suite,
        master: &[u8],
        client_random: &[u8; 32],
        server_random: &[u8; 32],
    ) -> Option<(RecordKeys, RecordKeys)> {
        let key_len = suite.bulk.key_len();
        let (iv_len, layout) = match suite.bulk {
            Bulk::ChaCha20Poly1305 => (12, Layout::Tls12Xor),
            _ => (4, Layout::Tls12Gcm),
        };
        let mut seed = Vec::with_capacity(64);
        seed.extend_from_slice(server_random);
        seed.extend_from_slice(client_random);
        let block = prf12(
            suite.hash,
            master,
            b"key expansion",
            &seed,
            2 * (key_len + iv_len),
        );
        let (ck, rest) = block.split_at(key_len);
        let (sk, rest) = rest.split_at(key_len);
        let (civ, siv) = rest.split_at(iv_len);
        let keys = |k: &[u8], iv: &[u8]| {
            let mut v = [0; 12];
            v[..iv.len()].copy_from_slice(iv);
            Some(RecordKeys {
                aead: Aead::new(suite.bulk, k)?,
                iv: v,
                layout,
                seq: 0,
            })
        };
        Some((keys(ck, civ)?, keys(sk, siv)?))
    }

    /// Open one record in place: `header` is its 5-byte header as on the
    /// wire, `fragment` what follows it. On success, the plaintext's range in
    /// `fragment` and its content type (TLS 1.3: the inner type; padding
    /// removed). The sequence number moves on either way.
    pub fn open(
        &mut self,
        header: &[u8; 5],
        fragment: &mut [u8],
    ) -> Result<(std::ops::Range<usize>, u8), OpenError> {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        let explicit = if self.layout == Layout::Tls12Gcm {
            EXPLICIT_NONCE
        } else {
            0
        };
        if fragment.len() < explicit + TAG + usize::from(self.layout == Layout::Tls13) {
            return Err(OpenError::TooShort);
        }
        let end = fragment.len() - TAG;
        let (nonce, aad_len) = match self.layout {
            Layout::Tls12Gcm => {
                let mut n = [0; 12];
                n[..4].copy_from_slice(&self.iv[..4]);
                n[4..].copy_from_slice(&fragment[..EXPLICIT_NONCE]);
                (n, 13)
            }
            Layout::Tls12Xor => (NonceOnly { iv: self.iv, seq }.xor_nonce(), 13),
            Layout::Tls13 => (NonceOnly { iv: self.iv, seq }.xor_nonce(), 5),
        };
        let mut aad = [0u8; 13];
        if self.layout == Layout::Tls13 {
            aad[..5].copy_from_slice(header);
        } else {
            aad[..8].copy_from_slice(&seq.to_be_bytes());
            aad[8..11].copy_from_slice(&header[..3]);
            aad[11..13].copy_from_slice(&((end - explicit) as u16).to_be_bytes());
        }
        let (data, tag) = fragment[explicit..].split_at_mut(end - explicit);
        if !self.aead.open(&nonce, &aad[..aad_len], data, tag) {
            return Err(OpenError::Authentication);
        }
        if self.layout != Layout::Tls13 {
            return Ok((explicit..end, header[0]));
        }
        // The inner plaintext: content, then its type, then zeros.
        let Some(last) = fragment[..end].iter().rposition(|&b| b != 0) else {
            return Err(OpenError::NoContentType);
        };
        Ok((0..last, fragment[last]))
    }

    /// Protect one record (the inverse of `open`): `content_type` and
    /// `plaintext` → the whole record, header included. TLS 1.2 GCM records
    /// take the sequence number as their explicit nonce, as OpenSSL does.
    pub fn seal(&mut self, content_type: u8, plaintext: &[u8]) -> Option<Vec<u8>> {
        let seq = self.seq;
        self.seq = self.seq.wrapping_add(1);
        let inner_len = plaintext.len() + usize::from(self.layout == Layout::Tls13);
        let explicit = if self.layout == Layout::Tls12Gcm {
            EXPLICIT_NONCE
        } else {
            0
        };
        let len = u16::try_from(explicit + inner_len + TAG).ok()?;
        let outer_type = if self.layout == Layout::Tls13 {
            23
        } else {
            content_type
        };
        let header = [outer_type, 3, 3, (len >> 8) as u8, len as u8];
        let mut out = Vec::with_capacity(5 + usize::from(len));
        out.extend_from_slice(&header);
        let nonce = match self.layout {
            Layout::Tls12Gcm => {
                out.extend_from_slice(&seq.to_be_bytes());
                let mut n = [0; 12];
                n[..4].copy_from_slice(&self.iv[..4]);
                n[4..].copy_from_slice(&seq.to_be_bytes());
                n
            }
            _ => NonceOnly { iv: self.iv, seq }.xor_nonce(),
        };
        let mut aad = [0u8; 13];
        let aad_len = if self.layout == Layout::Tls13 {
            aad[..5].copy_from_slice(&header);
            5
        } else {
            aad[..8].copy_from_slice(&seq.to_be_bytes());
            aad[8..11].copy_from_slice(&header[..3]);
            aad[11..13].copy_from_slice(&(plaintext.len() as u16).to_be_bytes());
            13
        };
        let at = out.len();
        out.extend_from_slice(plaintext);
        if self.layout == Layout::Tls13 {
            out.push(content_type);
        }
        let tag = self.aead.seal(&nonce, &aad[..aad_len], &mut out[at..])?;
        out.extend_from_slice(&tag);
        Some(out)
    }
}

/// An IV and a sequence number: the XOR nonce.
#[derive(Clone, Copy)]
struct NonceOnly {
    iv: [u8; 12],
    seq: u64,
}

impl NonceOnly {
    fn xor_nonce(self) -> [u8; 12] {
        let mut n = self.iv;
        for (b, s) in n[4..].iter_mut().zip(self.seq.to_be_bytes()) {
            *b ^= s;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(s: &str) -> Vec<u8> {
        let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
        digits
            .chunks(2)
            .map(|p| u8::from_str_radix(std::str::from_utf8(p).unwrap(), 16).unwrap())
            .collect()
    }

    // RFC 8448 §3 (a simple 1-RTT handshake, TLS_AES_128_GCM_SHA256): secrets,
    // the keys and IVs they give, and records protected with them.
    const C_HS: &str = "b3 ed db 12 6e 06 7f 35 a7 80 b3 ab f4 5e 2d 8f 3b 1a 95 07 38 f5 2e 96 00 74 6a 0e 27 a5 5a 21";
    const S_HS: &str = "b6 7b 7d 69 0c c1 6c 4e 75 e5 42 13 cb 2d 37 b4 e9 c9 12 bc de d9 10 5d 42 be fd 59 d3 91 ad 38";
    const C_AP: &str = "9e 40 64 6c e7 9a 7f 9d c0 5a f8 88 9b ce 65 52 87 5a fa 0b 06 df 00 87 f7 92 eb b7 c1 75 04 a5";
    const S_AP: &str = "a1 1a f9 f0 55 31 f8 56 ad 47 11 6b 45 a9 50 32 82 04 b4 f4 4b fb 6b 3a 4b 4f 1f 3f cb 63 16 43";

    fn record(keys: &mut RecordKeys, rec: &str) -> Result<(Vec<u8>, u8), OpenError> {
        let rec = h(rec);
        let header: [u8; 5] = rec[..5].try_into().unwrap();
        let mut frag = rec[5..].to_vec();
        keys.open(&header, &mut frag)
            .map(|(r, t)| (frag[r].to_vec(), t))
    }

    #[test]
    fn rfc8448_keys_and_ivs() {
        let s = suite(0x1301).unwrap();
        assert_eq!(
            expand_label(s.hash, &h(S_HS), b"key", b"", 16).unwrap(),
            h("3f ce 51 60 09 c2 17 27 d0 f2 e4 e8 6e e4 03 bc")
        );
        assert_eq!(
            expand_label(s.hash, &h(S_HS), b"iv", b"", 12).unwrap(),
            h("5d 31 3e b2 67 12 76 ee 13 00 0b 30")
        );
        assert_eq!(
            expand_label(s.hash, &h(C_AP), b"key", b"", 16).unwrap(),
            h("17 42 2d da 59 6e d5 d9 ac d8 90 e3 c6 3f 50 51")
        );
        assert_eq!(
            expand_label(s.hash, &h(C_AP), b"iv", b"", 12).unwrap(),
            h("5b 78 92 3d ee 08 57 90 33 e5 23 d9")
        );
        assert_eq!(
            expand_label(s.hash, &h(S_AP), b"key", b"", 16).unwrap(),
            h("9f 02 28 3b 6c 9c 07 ef c2 6b b9 f2 ac 92 e3 56")
        );
        assert_eq!(
            expand_label(s.hash, &h(S_AP), b"iv", b"", 12).unwrap(),
            h("cf 78 2b 88 dd 83 54 9a ad f1 e9 84")
        );
    }

    #[test]
    fn rfc8448_records_open() {
        let s = suite(0x1301).unwrap();
        // The client's Finished, under its handshake keys.
        let mut c_hs = RecordKeys::tls13(s, &h(C_HS)).unwrap();
        let (fin, ty) = record(
            &mut c_hs,
            "17 03 03 00 35 75 ec 4d c2 38 cc e6 0b 29 80 44 a7 1e 21 9c 56 cc 77 b0 51 7f e9 b9 3c 7a 4b fc 44 d8 7f 38 f8 03 38 ac 98 fc 46 de b3 84 bd 1c ae ac ab 68 67 d7 26 c4 05 46",
        )
        .unwrap();
        assert_eq!((ty, fin.len(), &fin[..4]), (22, 36, &[20, 0, 0, 32][..]));
        // Application data, 00 01 .. 31, each way: the server's is its second
        // record under its application keys (after a NewSessionTicket).
        let payload: Vec<u8> = (0..50).collect();
        let mut c_ap = RecordKeys::tls13(s, &h(C_AP)).unwrap();
        let c_rec = "17 03 03 00 43 a2 3f 70 54 b6 2c 94 d0 af fa fe 82 28 ba 55 cb ef ac ea 42 f9 14 aa 66 bc ab 3f 2b 98 19 a8 a5 b4 6b 39 5b d5 4a 9a 20 44 1e 2b 62 97 4e 1f 5a 62 92 a2 97 70 14 bd 1e 3d ea e6 3a ee bb 21 69 49 15 e4";
        assert_eq!(record(&mut c_ap, c_rec).unwrap(), (payload.clone(), 23));
        let mut s_ap = RecordKeys::tls13(s, &h(S_AP)).unwrap();
        s_ap.seq = 1;
        let s_rec = "17 03 03 00 43 2e 93 7e 11 ef 4a c7 40 e5 38 ad 36 00 5f c4 a4 69 32 fc 32 25 d0 5f 82 aa 1b 36 e3 0e fa f9 7d 90 e6 df fc 60 2d cb 50 1a 59 a8 fc c4 9c 4b f2 e5 f0 a2 1c 00 47 c2 ab f3 32 54 0d d0 32 e1 67 c2 95 5d";
        assert_eq!(record(&mut s_ap, s_rec).unwrap(), (payload.clone(), 23));
        // close_notify alerts, the records after them.
        assert_eq!(
            record(
                &mut c_ap,
                "17 03 03 00 13 c9 87 27 60 65 56 66 b7 4d 7f f1 15 3e fd 6d b6 d0 b0 e3"
            )
            .unwrap(),
            (vec![1, 0], 21)
        );
        assert_eq!(
            record(
                &mut s_ap,
                "17 03 03 00 13 b5 8f d6 71 66 eb f5 99 d2 47 20 cf be 7e fa 7a 88 64 a9"
            )
            .unwrap(),
            (vec![1, 0], 21)
        );
        // The wrong sequence number, a flipped bit, a record cut short.
        let mut again = RecordKeys::tls13(s, &h(C_AP)).unwrap();
        again.seq = 1;
        assert_eq!(record(&mut again, c_rec), Err(OpenError::Authentication));
        let mut again = RecordKeys::tls13(s, &h(C_AP)).unwrap();
        assert_eq!(
            record(&mut again, &c_rec.replace("e4", "e5")),
            Err(OpenError::Authentication)
        );
        assert_eq!(
            record(
                &mut again,
                "17 03 03 00 10 00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f"
            ),
            Err(OpenError::TooShort)
        );
        // What seal makes, open reads back.
        let mut a = RecordKeys::tls13(s, &h(C_AP)).unwrap();
        let sealed = a.seal(23, &payload).unwrap();
        assert_eq!(
            hex::encode(&sealed),
            h(c_rec)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect::<String>()
        );
    }

    #[test]
    fn tls12_prf_vector() {
        let out = prf12(
            Hash::Sha256,
            &h("9b be 43 6b a9 40 f0 17 b1 76 52 84 9a 71 db 35"),
            b"test label",
            &h("a0 ba 9f 93 6c da 31 18 27 a6 f7 96 ff d5 19 8c"),
            100,
        );
        let want = h("e3 f2 29 ba 72 7b e1 7b 8d 12 26 20 55 7c d4 53 c2 aa b2 1d 07 c3 d4 95 32 9b 52 d4 e6 1e db 5a
                      6b 30 17 91 e9 0d 35 c9 c9 a4 6b 4e 14 ba f9 af 0f a0 22 f7 07 7d ef 17 ab fd 37 97 c0 56 4b ab
                      4f bc 91 66 6e 9d ef 9b 97 fc e3 4f 79 67 89 ba a4 80 82 d1 22 ee 42 c5 a7 2e 5a 51 10 ff f7 01
                      87 34 7b 66");
        assert_eq!(out, want);
    }

    #[test]
    fn every_suite_seals_and_opens_each_layout() {
        for id in [
            0x1301, 0x1302, 0x1303, 0xc02f, 0xc030, 0xcca8, 0xc02b, 0xc02c, 0xcca9,
        ] {
            let s = suite(id).unwrap();
            let (mut seal_c, mut seal_s, mut open_c, mut open_s) = if s.tls13 {
                let k = |b: u8| RecordKeys::tls13(s, &vec![b; s.hash.output_len()]).unwrap();
                (k(1), k(2), k(1), k(2))
            } else {
                let k = || RecordKeys::tls12(s, &[9; 48], &[1; 32], &[2; 32]).unwrap();
                let (a, b) = k();
                let (c, d) = k();
                (a, b, c, d)
            };
            for (seal, open) in [(&mut seal_c, &mut open_c), (&mut seal_s, &mut open_s)] {
                for n in [0usize, 1, 100, 1 << 14] {
                    let plain: Vec<u8> = (0..n).map(|i| i as u8).collect();
                    let rec = seal.seal(23, &plain).unwrap();
                    let header: [u8; 5] = rec[..5].try_into().unwrap();
                    let mut frag = rec[5..].to_vec();
                    let (r, ty) = open
                        .open(&header, &mut frag)
                        .unwrap_or_else(|e| panic!("suite {id:04x}, {n} bytes: {e:?}"));
                    assert_eq!((&frag[r], ty), (&plain[..], 23));
                }
            }
            // The directions' keys differ.
            let rec = seal_c.seal(23, b"x").unwrap();
            let mut frag = rec[5..].to_vec();
            assert_eq!(
                open_s.open(&rec[..5].try_into().unwrap(), &mut frag),
                Err(OpenError::Authentication),
                "suite {id:04x}"
            );
        }
    }

    #[test]
    fn key_update_changes_the_keys() {
        let s = suite(0x1303).unwrap();
        let next = next_traffic_secret(s.hash, &h(C_AP)).unwrap();
        assert_eq!(next.len(), 32);
        assert_ne!(next, h(C_AP));
        let mut a = RecordKeys::tls13(s, &next).unwrap();
        let rec = a.seal(23, b"after the update").unwrap();
        let mut old = RecordKeys::tls13(s, &h(C_AP)).unwrap();
        let mut frag = rec[5..].to_vec();
        assert_eq!(
            old.open(&rec[..5].try_into().unwrap(), &mut frag),
            Err(OpenError::Authentication)
        );
    }
}
