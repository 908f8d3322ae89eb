//! Version ranges as the definitions spell them: "N", "A-B", "N+", "none".

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Highest version an open-ended range ("N+") reaches.
pub(crate) const MAX_VERSION: i16 = i16::MAX;

/// An inclusive range of versions; empty when `lo > hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Versions {
    pub lo: i16,
    pub hi: i16,
}

impl Versions {
    pub const NONE: Versions = Versions { lo: 1, hi: 0 };
    pub const ALL: Versions = Versions {
        lo: 0,
        hi: MAX_VERSION,
    };

    pub fn new(lo: i16, hi: i16) -> Self {
        Versions { lo, hi }
    }

    pub fn is_empty(&self) -> bool {
        self.lo > self.hi
    }

    pub fn contains(&self, v: i16) -> bool {
        !self.is_empty() && v >= self.lo && v <= self.hi
    }

    /// Iterate the versions; open-ended ranges stop at `cap`.
    pub fn iter_capped(&self, cap: i16) -> impl Iterator<Item = i16> {
        let hi = self.hi.min(cap);
        let lo = self.lo;
        (lo..=hi).filter(move |_| lo <= hi)
    }

    /// Parse the definitions' spelling. An empty string is `None` (contextual default).
    pub fn parse(s: &str) -> Result<Option<Versions>, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(None);
        }
        if s == "none" {
            return Ok(Some(Versions::NONE));
        }
        let num = |t: &str| {
            t.trim()
                .parse::<i16>()
                .map_err(|_| format!("bad version number {t:?} in {s:?}"))
        };
        if let Some(lo) = s.strip_suffix('+') {
            return Ok(Some(Versions::new(num(lo)?, MAX_VERSION)));
        }
        if let Some((lo, hi)) = s.split_once('-') {
            let (lo, hi) = (num(lo)?, num(hi)?);
            if lo > hi {
                return Err(format!("empty version range {s:?}"));
            }
            return Ok(Some(Versions::new(lo, hi)));
        }
        let v = num(s)?;
        Ok(Some(Versions::new(v, v)))
    }
}

impl fmt::Display for Versions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            write!(f, "none")
        } else if self.hi == MAX_VERSION {
            write!(f, "{}+", self.lo)
        } else if self.lo == self.hi {
            write!(f, "{}", self.lo)
        } else {
            write!(f, "{}-{}", self.lo, self.hi)
        }
    }
}

impl Serialize for Versions {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Versions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Versions::parse(&s)
            .map_err(serde::de::Error::custom)?
            .ok_or_else(|| serde::de::Error::custom("empty version range"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_spelling() {
        assert_eq!(Versions::parse("3").unwrap(), Some(Versions::new(3, 3)));
        assert_eq!(Versions::parse("3-12").unwrap(), Some(Versions::new(3, 12)));
        assert_eq!(
            Versions::parse("9+").unwrap(),
            Some(Versions::new(9, MAX_VERSION))
        );
        assert_eq!(Versions::parse("none").unwrap(), Some(Versions::NONE));
        assert_eq!(Versions::parse("").unwrap(), None);
        assert!(Versions::parse("x").is_err());
        assert!(Versions::parse("5-2").is_err());
    }

    #[test]
    fn displays_as_parsed() {
        for s in ["0+", "3-12", "7", "none"] {
            assert_eq!(Versions::parse(s).unwrap().unwrap().to_string(), s);
        }
    }

    #[test]
    fn contains_and_iterates() {
        let v = Versions::new(2, 5);
        assert!(v.contains(2) && v.contains(5) && !v.contains(6) && !v.contains(1));
        assert!(!Versions::NONE.contains(0));
        assert_eq!(
            Versions::new(1, 3).iter_capped(10).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert_eq!(Versions::NONE.iter_capped(10).count(), 0);
    }
}
