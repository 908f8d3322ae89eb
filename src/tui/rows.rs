//! The explorer's list of frames, kept in chunks of a fixed size: a capture
//! of millions of frames grows the list a chunk at a time instead of copying
//! it into an allocation twice its size, which for 1.75 million rows of 184
//! bytes held both, 580 MB, at the moment of the copy.

use std::ops::{Index, IndexMut};

/// Rows per chunk (3 MB of explorer rows); the first chunk grows up to it as
/// a vector does, so a list of a few frames takes a few rows' room.
const CHUNK: usize = 1 << 14;

/// A growable list indexed like a vector, stored as chunks of `CHUNK`.
#[derive(Debug)]
pub struct Chunked<T> {
    chunks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Chunked<T> {
    fn default() -> Self {
        Chunked {
            chunks: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Chunked<T> {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn push(&mut self, value: T) {
        match self.chunks.last_mut() {
            Some(last) if last.len() < CHUNK => last.push(value),
            // The first chunk starts small; later ones are allocated whole, once.
            Some(_) => {
                let mut chunk = Vec::with_capacity(CHUNK);
                chunk.push(value);
                self.chunks.push(chunk);
            }
            None => self.chunks.push(vec![value]),
        }
        self.len += 1;
    }

    pub fn get(&self, i: usize) -> Option<&T> {
        self.chunks.get(i / CHUNK)?.get(i % CHUNK)
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        self.chunks.get_mut(i / CHUNK)?.get_mut(i % CHUNK)
    }

    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.chunks.iter().flatten()
    }
}

impl<T> Index<usize> for Chunked<T> {
    type Output = T;
    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(v) => v,
            None => panic!("row {i} of {}", self.len),
        }
    }
}

impl<T> IndexMut<usize> for Chunked<T> {
    fn index_mut(&mut self, i: usize) -> &mut T {
        let len = self.len;
        match self.get_mut(i) {
            Some(v) => v,
            None => panic!("row {i} of {len}"),
        }
    }
}

impl<T> Extend<T> for Chunked<T> {
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        for v in items {
            self.push(v);
        }
    }
}

impl<T> FromIterator<T> for Chunked<T> {
    fn from_iter<I: IntoIterator<Item = T>>(items: I) -> Self {
        let mut c = Chunked::default();
        c.extend(items);
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_across_chunks_are_where_a_vector_would_have_them() {
        let n = 3 * CHUNK + 5;
        let mut c: Chunked<usize> = (0..n).collect();
        assert_eq!(c.len(), n);
        assert_eq!(c.chunks.len(), 4);
        // Every chunk after the first was allocated whole, once.
        assert!(c.chunks[1..].iter().all(|ch| ch.capacity() == CHUNK));
        assert!(c.iter().copied().eq(0..n));
        assert_eq!(
            (c[CHUNK - 1], c[CHUNK], c[n - 1]),
            (CHUNK - 1, CHUNK, n - 1)
        );
        assert_eq!(c.get(n), None);
        c[CHUNK + 1] = 7;
        *c.get_mut(2 * CHUNK).unwrap() += 1;
        assert_eq!((c[CHUNK + 1], c[2 * CHUNK]), (7, 2 * CHUNK + 1));
        assert!(Chunked::<u8>::default().is_empty());
    }
}
