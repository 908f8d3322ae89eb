//! What one input may cost, in total.
//!
//! A few hundred hostile bytes can claim gigabytes: a compressed batch of
//! tiny records, many batches that each stay under a per-batch bound, nested
//! legacy wrappers. Bounds per object do not hold that; a budget per input
//! does. Every frame decoded from one input (one `DecodeOptions`, one
//! `records` run) draws on the same [`Budget`]:
//!
//! - **decompressed**: bytes produced by decompression, all batches and
//!   nested wrappers together, never given back (it bounds the work done);
//! - **expanded**: bytes held at once that the input itself does not pay
//!   for: decompressed data and the tree nodes built from it. A frame gives
//!   its share back when it is dropped ([`Held`]), so streaming a capture
//!   frame by frame never runs out, while holding every frame does.
//!
//! Everything else kwire builds is bounded by the input's own size (every
//! length and count is checked against the bytes that remain before anything
//! is allocated), so with these two budgets peak memory is a fixed amount
//! plus a multiple of the input. Over a budget, the decoder stops that part
//! with an error at its offset that names the option raising the budget, and
//! goes on with the rest.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Default total of decompressed bytes per input (`--max-decompressed`).
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 256 << 20;
/// Default bytes of decompressed data and trees built from it held at once (`--max-expanded`).
pub const DEFAULT_MAX_EXPANDED: u64 = 12 << 20;

/// The two limits of a [`Budget`], in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub decompressed: u64,
    pub expanded: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            decompressed: DEFAULT_MAX_DECOMPRESSED,
            expanded: DEFAULT_MAX_EXPANDED,
        }
    }
}

/// One input's budget, shared by its clones (cloning a `DecodeOptions` or a
/// decoding context shares it; [`Budget::new`] starts a fresh one).
#[derive(Clone, Debug, Default)]
pub struct Budget(Arc<Ledger>);

#[derive(Debug, Default)]
struct Ledger {
    limits: Limits,
    decompressed: AtomicU64,
    expanded: AtomicU64,
    /// Whether anything asked to decompress or to hold expanded bytes ([`Budget::was_asked`]).
    asked: AtomicBool,
    /// The most expanded bytes held at once, counting what a decompression
    /// produced before it was held ([`Budget::spent_ahead`]).
    peak: AtomicU64,
    /// Whether a part ran out of either budget, or failed where the room
    /// it was given may have decided how ([`Budget::outcome_depends_on_room`]).
    ran_out: AtomicBool,
}

/// What a frame decoded ahead of its turn against a budget of its own
/// spent ([`Budget::spent_ahead`]): what the input's budget must afford in
/// the frame's turn for the frame to have decoded the same there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Spent {
    decompressed: u64,
    peak: u64,
}

/// Which budget a part of the input ran out of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Exhausted {
    Decompressed,
    Expanded,
}

impl Budget {
    pub fn new(limits: Limits) -> Budget {
        Budget(Arc::new(Ledger {
            limits,
            ..Ledger::default()
        }))
    }

    pub fn limits(&self) -> Limits {
        self.0.limits
    }

    /// What has been decompressed and what is held, as [`Budget::as_it_was`] takes it.
    pub fn spent(&self) -> (u64, u64) {
        (self.decompressed(), self.expanded())
    }

    /// A ledger of its own under the same limits, standing where this one
    /// stood when it had `spent`: to walk a part again exactly as it was
    /// walked then (an explorer's stub opened later), without spending
    /// this one's budget twice.
    pub fn as_it_was(&self, (decompressed, expanded): (u64, u64)) -> Budget {
        Budget(Arc::new(Ledger {
            limits: self.0.limits,
            decompressed: AtomicU64::new(decompressed),
            expanded: AtomicU64::new(expanded),
            ..Ledger::default()
        }))
    }

    /// What a frame decoded against this budget, a fresh one of its own
    /// (on a worker thread, ahead of its turn), spent, when it asked for
    /// anything and nothing ran out; `None` when it asked nothing or ran
    /// out (it is then decoded again in its turn against the input's).
    pub(crate) fn spent_ahead(&self) -> Option<Spent> {
        let l = &self.0;
        let asked = l.asked.load(Ordering::Relaxed);
        (asked && !l.ran_out.load(Ordering::Relaxed)).then(|| Spent {
            decompressed: self.decompressed(),
            peak: l.peak.load(Ordering::Relaxed),
        })
    }

    /// Pay for a frame decoded ahead of its turn, in its turn, when this
    /// budget, as it stands, leaves room for all it spent: every
    /// decompression and hold of the frame then fits here as it did there,
    /// so decoding it here would give the same output. What it
    /// decompressed is spent; what it held was given back when it was
    /// dropped. False, with nothing spent, when it does not fit.
    pub(crate) fn afford(&self, s: Spent) -> bool {
        let l = self.0.limits;
        let fits = self.decompressed().saturating_add(s.decompressed) <= l.decompressed
            && self.expanded().saturating_add(s.peak) <= l.expanded;
        if fits {
            self.spend_decompressed(s.decompressed);
        }
        fits
    }

    /// Whether a decompression or expanded bytes were asked for.
    pub(crate) fn was_asked(&self) -> bool {
        self.0.asked.load(Ordering::Relaxed)
    }

    /// Decompressed bytes used so far.
    pub fn decompressed(&self) -> u64 {
        self.0.decompressed.load(Ordering::Relaxed)
    }

    /// Expanded bytes held now.
    #[inline]
    pub fn expanded(&self) -> u64 {
        self.0.expanded.load(Ordering::Relaxed)
    }

    /// How many bytes one decompression may still produce, and which budget
    /// sets that bound.
    pub(crate) fn decompress_room(&self) -> (usize, Exhausted) {
        self.0.asked.store(true, Ordering::Relaxed);
        let l = self.0.limits;
        let total = l.decompressed.saturating_sub(self.decompressed());
        let held = l.expanded.saturating_sub(self.expanded());
        let (room, by) = if held < total {
            (held, Exhausted::Expanded)
        } else {
            (total, Exhausted::Decompressed)
        };
        (usize::try_from(room).unwrap_or(usize::MAX), by)
    }

    /// `n` bytes were decompressed (whether or not they are kept).
    pub(crate) fn spend_decompressed(&self, n: u64) {
        self.0.decompressed.fetch_add(n, Ordering::Relaxed);
        // Produced before they are held: they were there at once with what is held.
        let at_once = self.expanded().saturating_add(n);
        self.0.peak.fetch_max(at_once, Ordering::Relaxed);
    }

    /// Hold `n` more expanded bytes if they fit; `false` (nothing held) if not.
    pub fn hold(&self, n: u64) -> bool {
        let ledger = &self.0;
        if n > 0 {
            ledger.asked.store(true, Ordering::Relaxed);
        }
        let fits = |held: u64| held.checked_add(n).filter(|&t| t <= ledger.limits.expanded);
        match ledger
            .expanded
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, fits)
        {
            Ok(before) => {
                ledger.peak.fetch_max(before + n, Ordering::Relaxed);
                true
            }
            Err(_) => {
                ledger.ran_out.store(true, Ordering::Relaxed);
                false
            }
        }
    }

    /// Give back `n` expanded bytes (their holder was dropped).
    pub fn release(&self, n: u64) {
        let _ = self
            .0
            .expanded
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                Some(held.saturating_sub(n))
            });
    }

    /// What a part that ran out of `which` is told: what was expected, that
    /// more was found, and the option. The same words whatever was used before (a frame decoded
    /// twice says the same thing twice).
    /// A part failed in a way the room it was given may have decided (data
    /// damaged past what a smaller room would have read is over that room
    /// instead): a frame decoded ahead of its turn is decoded again in it.
    pub(crate) fn outcome_depends_on_room(&self) {
        self.0.ran_out.store(true, Ordering::Relaxed);
    }

    /// Called where a part runs out: the budget notes that it did.
    pub(crate) fn exhausted_message(&self, which: Exhausted, what: &str) -> String {
        self.0.ran_out.store(true, Ordering::Relaxed);
        let l = self.0.limits;
        match which {
            Exhausted::Decompressed => {
                format!("{what} within this input's decompression budget of {}, found more (--max-decompressed raises it)", size_text(l.decompressed))
            }
            Exhausted::Expanded => format!(
                "{what} within the budget of {} for decompressed data and its tree held at once, found more (--max-expanded raises it)",
                size_text(l.expanded)
            ),
        }
    }
}

/// A byte count as people write the options: `12 MiB` when it is whole
/// mebibytes (or KiB, GiB), else bytes.
pub(crate) fn size_text(n: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if n >= 1 << shift && n.is_multiple_of(1 << shift) {
            return format!("{} {unit}", n >> shift);
        }
    }
    format!("{n} bytes")
}

/// Expanded bytes a frame holds, given back to its budget when it is dropped.
#[derive(Debug, Default)]
pub struct Held {
    budget: Option<Budget>,
    bytes: u64,
}

impl Held {
    /// What `budget` came to hold since `before` (its [`Budget::expanded`] then).
    /// Nothing held holds no budget (most frames: no reference count to move).
    #[inline]
    pub fn since(budget: &Budget, before: u64) -> Held {
        match budget.expanded().saturating_sub(before) {
            0 => Held::default(),
            bytes => Held {
                budget: Some(budget.clone()),
                bytes,
            },
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// `other`'s bytes held with these (of the same budget), given back together.
    pub fn join(&mut self, mut other: Held) {
        if other.bytes == 0 {
            return;
        }
        self.bytes += std::mem::take(&mut other.bytes);
        if self.budget.is_none() {
            self.budget = other.budget.take();
        }
    }
}

impl Clone for Held {
    /// A copy holds nothing: the budget counts the first tree only, and the
    /// original gives its share back once.
    fn clone(&self) -> Self {
        Held::default()
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(b) = &self.budget {
            b.release(self.bytes);
        }
    }
}

/// Parse a byte count from the command line: digits with an optional binary
/// suffix (`K`, `M`, `G`, with or without `i`/`iB`), never wrapping.
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("a byte count like 268435456 or 256M, found {s:?}"))?;
    let shift = match suffix.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KI" | "KIB" | "KB" => 10,
        "M" | "MI" | "MIB" | "MB" => 20,
        "G" | "GI" | "GIB" | "GB" => 30,
        "T" | "TI" | "TIB" | "TB" => 40,
        _ => {
            return Err(format!(
                "a byte count with a suffix K, M, G or T, found {s:?}"
            ))
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("a byte count below 2^64, found {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: Limits = Limits {
        decompressed: 1000,
        expanded: 300,
    };

    #[test]
    fn a_frame_decoded_ahead_says_what_it_spent_unless_it_asked_nothing_or_ran_out() {
        let own = Budget::new(LIMITS);
        assert!(own.hold(0), "holding nothing is not asking");
        assert!(!own.was_asked());
        assert_eq!(own.spent_ahead(), None);
        // 100 bytes decompressed and held, then 50 bytes of their tree, all given back.
        let _ = own.decompress_room();
        own.spend_decompressed(100);
        assert!(own.hold(100) && own.hold(50));
        own.release(150);
        // A second decompression: 120 bytes there at once, never held.
        own.spend_decompressed(120);
        let spent = own.spent_ahead().expect("it asked, and nothing ran out");
        assert_eq!((spent.decompressed, spent.peak), (220, 150));
        // Clones share the ledger, as a frame's parts share its budget.
        let clone = own.clone();
        assert!(!clone.hold(301));
        assert_eq!(own.spent_ahead(), None, "it ran out");
        let other = Budget::new(LIMITS);
        let _ = other.exhausted_message(Exhausted::Decompressed, "data");
        assert_eq!(other.spent_ahead(), None);
    }

    #[test]
    fn the_input_affords_a_frame_decoded_ahead_only_with_room_for_all_it_spent() {
        let spent = Spent {
            decompressed: 100,
            peak: 150,
        };
        let input = Budget::new(LIMITS);
        assert!(input.hold(150));
        assert!(
            input.afford(spent),
            "150 held and 150 at its peak fit in 300"
        );
        assert_eq!(input.spent(), (100, 150), "what it decompressed is spent");
        assert!(input.hold(1));
        assert!(!input.afford(spent), "151 held leave no room for its peak");
        assert_eq!(input.spent(), (100, 151), "nothing spent");
        let input = Budget::new(LIMITS);
        input.spend_decompressed(901);
        assert!(!input.afford(spent), "only 99 bytes left to decompress");
        assert_eq!(input.decompressed(), 901);
    }

    #[test]
    fn room_is_the_smaller_budget() {
        let b = Budget::new(Limits {
            decompressed: 1000,
            expanded: 300,
        });
        assert_eq!(b.decompress_room(), (300, Exhausted::Expanded));
        b.spend_decompressed(200);
        assert!(b.hold(200));
        assert_eq!(b.decompress_room(), (100, Exhausted::Expanded));
        b.release(200);
        assert_eq!(b.decompress_room(), (300, Exhausted::Expanded));
        b.spend_decompressed(700);
        assert_eq!(b.decompress_room(), (100, Exhausted::Decompressed));
    }

    #[test]
    fn hold_refuses_past_the_limit_and_held_gives_back_on_drop() {
        let b = Budget::new(Limits {
            decompressed: 0,
            expanded: 100,
        });
        assert!(b.hold(60));
        assert!(!b.hold(41));
        assert!(b.hold(40));
        let held = Held::since(&b, 0);
        assert_eq!(held.bytes(), 100);
        let copy = held.clone();
        drop(held);
        assert_eq!(b.expanded(), 0);
        drop(copy);
        assert_eq!(b.expanded(), 0);
        assert!(!b.hold(u64::MAX));
    }

    #[test]
    fn sizes_are_written_in_the_largest_whole_unit() {
        assert_eq!(size_text(12 << 20), "12 MiB");
        assert_eq!(size_text(256 << 20), "256 MiB");
        assert_eq!(size_text(1 << 30), "1 GiB");
        assert_eq!(size_text(1536), "1536 bytes");
        assert_eq!(size_text(2048), "2 KiB");
        assert_eq!(size_text(0), "0 bytes");
    }

    #[test]
    fn byte_counts_parse_without_wrapping() {
        assert_eq!(parse_bytes("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(parse_bytes("256M"), Ok(256 << 20));
        assert_eq!(parse_bytes("1GiB"), Ok(1 << 30));
        assert_eq!(parse_bytes("0"), Ok(0));
        assert!(parse_bytes("18446744073709551616").is_err());
        assert!(parse_bytes("17179869184G").is_err());
        assert!(parse_bytes("-1").is_err());
        assert!(parse_bytes("12X").is_err());
    }
}
