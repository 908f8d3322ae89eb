//! Label strings kept for the life of the process. A catalogue's field names,
//! spellings and types are bounded by its definitions (a few thousand strings,
//! whatever the input), and as `&'static str` the nodes that carry them need
//! no reference counting: no atomic increment per node made, nor decrement per
//! node dropped. Loading the same definitions again reuses the same strings.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

pub fn intern(s: &str) -> &'static str {
    static STRINGS: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = STRINGS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(&kept) = set.get(s) {
        return kept;
    }
    let kept: &'static str = Box::leak(s.into());
    set.insert(kept);
    kept
}

/// [`intern`] behind a thin pointer: 8 bytes where a `&str` takes 16, for the
/// keys of tape slots, which are many.
pub(crate) fn intern_thin(s: &str) -> &'static &'static str {
    static THIN: OnceLock<Mutex<HashMap<&'static str, &'static &'static str>>> = OnceLock::new();
    let kept = intern(s);
    let mut map = THIN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.entry(kept).or_insert_with(|| Box::leak(Box::new(kept)))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_same_text_is_kept_once() {
        let a = super::intern(&String::from("GroupId"));
        let b = super::intern("GroupId");
        assert_eq!(a, "GroupId");
        assert!(std::ptr::eq(a, b));
        let (c, d) = (
            super::intern_thin("GroupId"),
            super::intern_thin(&String::from("GroupId")),
        );
        assert_eq!(*c, "GroupId");
        assert!(std::ptr::eq(c, d) && std::ptr::eq(*c, a));
    }
}
