//! Requests awaiting their answers, by key (a connection's correlation id):
//! the one pairing rule that the capture layer, the exchanges, `kwire check`
//! and the conversation model all follow. A broker answers a connection's
//! requests in the order they came, so when a client sends a correlation id
//! again before the answer under it came, the first answer goes to the first
//! request and the next to the next (first in, first out).

use foldhash::HashMap;
use std::collections::VecDeque;
use std::hash::Hash;

/// A connection's requests awaiting a response, as the capture layer pairs
/// them: correlation id → (api key, version).
pub(crate) type Outstanding = Awaiting<i32, (i16, i16)>;

/// What awaits an answer, by key, first in first out per key.
#[derive(Debug)]
pub(crate) struct Awaiting<K, V> {
    /// The first request awaiting under each key: all of them, as a rule.
    first: HashMap<K, V>,
    /// Those sent under a key while one awaited under it, in order: rare
    /// (a client reusing ids), so kept apart, not a queue per key, and
    /// boxed when first needed (a capture may hold thousands of
    /// connections, each with its own, `tests/capture_budgets.rs`).
    queued: Option<Box<HashMap<K, VecDeque<V>>>>,
}

impl<K, V> Default for Awaiting<K, V> {
    fn default() -> Self {
        Awaiting {
            first: HashMap::default(),
            queued: None,
        }
    }
}

impl<K: Hash + Eq + Copy, V> Awaiting<K, V> {
    /// `v` awaits under `k`, after any that await under it already.
    pub(crate) fn insert(&mut self, k: K, v: V) {
        match self.first.contains_key(&k) {
            true => (self.queued.get_or_insert_default())
                .entry(k)
                .or_default()
                .push_back(v),
            false => {
                self.first.insert(k, v);
            }
        }
    }

    /// The first that awaits under `k`: the one its next answer answers.
    pub(crate) fn get(&self, k: &K) -> Option<&V> {
        self.first.get(k)
    }

    /// The first that awaits under `k`, taken by its answer; the next under
    /// `k`, if any, awaits first then.
    pub(crate) fn take(&mut self, k: &K) -> Option<V> {
        let v = self.first.remove(k)?;
        self.next_up(k);
        Some(v)
    }

    /// The next under `k` awaits first (none awaits first under `k` now).
    fn next_up(&mut self, k: &K) {
        let Some(queued) = self.queued.as_mut() else {
            return;
        };
        if let Some(q) = queued.get_mut(k) {
            if let Some(next) = q.pop_front() {
                self.first.insert(*k, next);
            }
            if q.is_empty() {
                queued.remove(k);
            }
        }
    }

    /// Every key something awaits under (each once).
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> {
        self.first.keys()
    }

    /// Everything that awaits under `k`, in order, taken.
    pub(crate) fn take_all(&mut self, k: &K) -> Vec<V> {
        let mut all: Vec<V> = self.first.remove(k).into_iter().collect();
        let queued = self.queued.as_mut().and_then(|q| q.remove(k));
        all.extend(queued.into_iter().flatten());
        all
    }

    /// How many await, under every key.
    pub(crate) fn len(&self) -> usize {
        let queued = self.queued.iter().flat_map(|q| q.values());
        self.first.len() + queued.map(VecDeque::len).sum::<usize>()
    }

    /// Keeps only what `keep` says to (a queue's next moving up first).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&V) -> bool) {
        if let Some(queued) = self.queued.as_mut() {
            queued.retain(|_, q| {
                q.retain(&mut keep);
                !q.is_empty()
            });
        }
        let gone: Vec<K> = (self.first.iter())
            .filter(|(_, v)| !keep(v))
            .map(|(k, _)| *k)
            .collect();
        for k in gone {
            self.first.remove(&k);
            self.next_up(&k);
        }
    }

    /// Every value that awaits (in no order).
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> {
        let queued = self.queued.iter().flat_map(|q| q.values().flatten());
        self.first.values().chain(queued)
    }

    /// Everything that awaits, with its key (in no order; under one key in order).
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        let queued = (self.queued.iter())
            .flat_map(|q| q.iter())
            .flat_map(|(k, q)| q.iter().map(move |v| (k, v)));
        self.first.iter().chain(queued)
    }

    /// Everything that awaits, taken (in no order).
    pub(crate) fn drain(&mut self) -> impl Iterator<Item = (K, V)> + '_ {
        let queued = (self.queued.take().into_iter())
            .flat_map(|q| q.into_iter())
            .flat_map(|(k, q)| q.into_iter().map(move |v| (k, v)));
        self.first.drain().chain(queued)
    }
}

#[cfg(test)]
mod tests {
    use super::Awaiting;

    #[test]
    fn answers_under_one_key_go_first_in_first_out() {
        let mut a = Awaiting::default();
        a.insert(7, "first");
        a.insert(8, "other");
        a.insert(7, "second");
        a.insert(7, "third");
        assert_eq!(a.len(), 4);
        assert_eq!(a.get(&7), Some(&"first"));
        assert_eq!(a.take(&7), Some("first"));
        assert_eq!(a.take(&7), Some("second"));
        assert_eq!(a.get(&7), Some(&"third"));
        assert_eq!(a.take_all(&7), vec!["third"]);
        assert_eq!(a.take(&7), None);
        assert_eq!(a.drain().collect::<Vec<_>>(), vec![(8, "other")]);
        assert_eq!(a.drain().count(), 0);
    }

    #[test]
    fn what_is_kept_keeps_its_order() {
        let mut a = Awaiting::default();
        for (k, v) in [(1, 10), (1, 11), (1, 12), (2, 20), (2, 21)] {
            a.insert(k, v);
        }
        a.retain(|v| *v != 10 && *v != 21);
        assert_eq!(a.len(), 3);
        let mut values: Vec<i32> = a.values().copied().collect();
        values.sort();
        assert_eq!(values, vec![11, 12, 20]);
        assert_eq!(
            (a.take(&1), a.take(&1), a.take(&1)),
            (Some(11), Some(12), None)
        );
        assert_eq!((a.take(&2), a.take(&2)), (Some(20), None));
    }

    #[test]
    fn everything_awaiting_is_drained_once() {
        let mut a = Awaiting::default();
        for (k, v) in [(1, 'a'), (1, 'b'), (2, 'c'), (1, 'd')] {
            a.insert(k, v);
        }
        let mut all: Vec<(i32, char)> = a.drain().collect();
        all.sort();
        assert_eq!(all, vec![(1, 'a'), (1, 'b'), (1, 'd'), (2, 'c')]);
        assert_eq!(a.drain().count(), 0);
    }
}
