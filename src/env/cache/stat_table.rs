//! Paths and their stats, sorted by path, each once: the inputs a
//! [`super::settled::Settled`] record vouches for, and the cache's table of
//! the inputs a run trusted ([`super::TrustedInputs`]). The stat encoding
//! ([`write_stat`]) is the index's too.
//!
//! The paths live in one buffer, not one allocation each: at 10,000 apps
//! the three environments' records name about 650,000 inputs, which as
//! shared strings with their stats beside them were 120 MB of a settled
//! run's 250 MB peak. Stored, each path is the length it shares with the
//! one before and the rest, and each stat the difference from the one
//! before, field by field, as small numbers (git's index v4 does the
//! former): sorted neighbours share most of both.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;

use super::entry::{Reader, Writer};
use super::inputs::Stat;

/// Paths (UTF-8; a record cannot hold others) and their stats, in the
/// order pushed (see [`StatTable::is_sorted`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatTable {
    /// Every path, one after the other.
    text: String,
    /// Where each path ends in `text`.
    ends: Vec<u32>,
    stats: Vec<Stat>,
}

impl StatTable {
    /// An empty table with room for `paths` paths of `text` bytes in all
    /// (grown by doubling, a large table's buffer was up to twice its
    /// size).
    pub fn with_capacity(paths: usize, text: usize) -> StatTable {
        StatTable {
            text: String::with_capacity(text),
            ends: Vec::with_capacity(paths),
            stats: Vec::with_capacity(paths),
        }
    }

    /// How many paths it holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Appends `path` with `stat`; `None` (nothing appended) when the
    /// buffer would pass 4 GiB.
    pub fn push(&mut self, path: &str, stat: Stat) -> Option<()> {
        let end = u32::try_from(self.text.len().checked_add(path.len())?).ok()?;
        self.text.push_str(path);
        self.ends.push(end);
        self.stats.push(stat);
        Some(())
    }

    /// The `i`th path and its stat.
    pub fn get(&self, i: usize) -> Option<(&str, &Stat)> {
        let start = match i.checked_sub(1) {
            Some(before) => *self.ends.get(before)?,
            None => 0,
        };
        let end = *self.ends.get(i)?;
        let path = self
            .text
            .get(usize::try_from(start).ok()?..usize::try_from(end).ok()?)?;
        Some((path, self.stats.get(i)?))
    }

    /// Each path and its stat, in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Stat)> + '_ {
        (0..self.len()).filter_map(|i| self.get(i))
    }

    /// The first position whose path is not before `name` (all of them
    /// are, the length): where `name` is or would go in a sorted table.
    pub fn position(&self, name: &str) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.get(mid) {
                Some((p, _)) if p < name => lo = mid + 1,
                _ => hi = mid,
            }
        }
        lo
    }

    /// Whether the paths are in byte order, each once (as a record holds
    /// them; any other order is not trusted to compare).
    pub fn is_sorted(&self) -> bool {
        let mut paths = self.iter().map(|(p, _)| p);
        let Some(mut last) = paths.next() else {
            return true;
        };
        paths.all(|p| {
            let ascending = last < p;
            last = p;
            ascending
        })
    }

    /// Writes the table: its length and the bytes of all its paths, then
    /// each path as the length it shares with the one before and the
    /// rest, and its stat as the difference from the one before
    /// ([`write_stat`]).
    pub(super) fn write(&self, w: &mut Writer) {
        w.varint(self.len() as u64);
        w.varint(self.text.len() as u64);
        let mut last: (&[u8], Stat) = (&[], Stat::default());
        for (path, st) in self.iter() {
            let path = path.as_bytes();
            let shared = path.iter().zip(last.0).take_while(|(a, b)| a == b).count();
            w.varint(shared as u64);
            w.bytes(path.get(shared..).unwrap_or_default());
            write_stat(w, &last.1, st);
            last = (path, *st);
        }
    }

    /// A table [`StatTable::write`] wrote; `None` when it is cut short or
    /// a path is not UTF-8.
    pub(super) fn read(r: &mut Reader) -> Option<StatTable> {
        let n = r.count_varint()?;
        let text = usize::try_from(r.varint()?).ok()?;
        // Shared prefixes make the paths longer than what stores them, but
        // not without bound: a corrupt length cannot reserve much more.
        let room = text.min(r.remaining().saturating_mul(64));
        let mut t = StatTable::with_capacity(n, room);
        let mut path: Vec<u8> = Vec::new();
        let mut last = Stat::default();
        for _ in 0..n {
            let shared = usize::try_from(r.varint()?).ok()?;
            if shared > path.len() {
                return None;
            }
            path.truncate(shared);
            path.extend_from_slice(r.bytes()?);
            last = read_stat(r, &last)?;
            t.push(std::str::from_utf8(&path).ok()?, last)?;
        }
        (t.text.len() == text).then_some(t)
    }
}

/// The paths of `tables`, each sorted ([`StatTable::is_sorted`]), merged
/// into one sorted list, each once (a table out of order is left out).
/// Environments share bases, charts and components: each path is then
/// stated once for all of them, and merging sorted tables costs a compare
/// or two a path where sorting all of them again cost twenty.
#[cfg(test)]
pub fn merged<'t>(tables: &[&'t StatTable]) -> Vec<&'t str> {
    let sorted: Vec<&StatTable> = tables.iter().copied().filter(|t| t.is_sorted()).collect();
    let spans: Vec<_> = sorted.iter().map(|t| 0..t.len()).collect();
    merged_spans(&sorted, &spans)
}

/// The paths of `tables` (each sorted), only those in each one's span of
/// positions, merged as [`merged`] merges them: spans that cover one range
/// of names in every table make the part of the merged list for that
/// range, so that the parts can be merged on every core.
pub fn merged_spans<'t>(tables: &[&'t StatTable], spans: &[Range<usize>]) -> Vec<&'t str> {
    let mut cursors: Vec<_> = tables
        .iter()
        .zip(spans)
        .map(|(t, span)| span.clone().filter_map(|i| t.get(i).map(|(p, _)| p)))
        .collect();
    let mut heads: BinaryHeap<Reverse<(&str, usize)>> = BinaryHeap::new();
    for (i, c) in cursors.iter_mut().enumerate() {
        if let Some(p) = c.next() {
            heads.push(Reverse((p, i)));
        }
    }
    let mut out: Vec<&str> = Vec::new();
    while let Some(Reverse((p, i))) = heads.pop() {
        if out.last() != Some(&p) {
            out.push(p);
        }
        if let Some(next) = cursors.get_mut(i).and_then(Iterator::next) {
            heads.push(Reverse((next, i)));
        }
    }
    out
}

/// `st` as the difference of each of its fields from `prev`'s, zigzag
/// LEB128: device, mode and the seconds of neighbours are mostly equal (a
/// byte each), inodes and sizes close.
pub(super) fn write_stat(w: &mut Writer, prev: &Stat, st: &Stat) {
    for (v, p) in st.id.iter().zip(prev.id) {
        w.signed(v.wrapping_sub(p) as i64);
    }
    for ((s, ns), (ps, pns)) in st.times.iter().zip(prev.times) {
        w.signed(s.wrapping_sub(ps));
        w.signed(ns.wrapping_sub(pns));
    }
}

/// A stat [`write_stat`] wrote after `prev`.
pub(super) fn read_stat(r: &mut Reader, prev: &Stat) -> Option<Stat> {
    let mut st = *prev;
    for v in &mut st.id {
        *v = v.wrapping_add(r.signed()? as u64);
    }
    for (s, ns) in &mut st.times {
        *s = s.wrapping_add(r.signed()?);
        *ns = ns.wrapping_add(r.signed()?);
    }
    Some(st)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stat(n: u64) -> Stat {
        Stat {
            id: [1, n, 10 + n, 0o100644],
            times: [(1_700_000_000, 5), (-3, 999_999_999)],
        }
    }

    fn table(paths: &[&str]) -> StatTable {
        let mut t = StatTable::default();
        for (p, n) in paths.iter().zip(1..) {
            t.push(p, stat(n)).unwrap();
        }
        t
    }

    #[test]
    fn a_table_reads_back_as_written_and_refuses_damage() {
        let t = table(&[
            "apps/web",
            "apps/web/k.yaml",
            "apps/wéb",
            "apps/wéc",
            "charts",
        ]);
        let mut w = Writer::default();
        t.write(&mut w);
        let mut r = Reader::new(&w.buf);
        assert_eq!(StatTable::read(&mut r), Some(t.clone()));
        assert!(r.at_end());
        for cut in 0..w.buf.len() {
            let mut r = Reader::new(&w.buf[..cut]);
            assert_eq!(StatTable::read(&mut r), None, "cut at {cut}");
        }
        // A one-path table as written by hand: its paths' total length,
        // the length it shares with the (absent) path before, the rest.
        let one = |total: u64, shared: u64| {
            let mut w = Writer::default();
            w.varint(1);
            w.varint(total);
            w.varint(shared);
            w.bytes(b"x");
            write_stat(&mut w, &Stat::default(), &stat(1));
            StatTable::read(&mut Reader::new(&w.buf))
        };
        assert!(one(1, 0).is_some(), "well formed");
        assert_eq!(one(1, 3), None, "shares more than the path before has");
        assert_eq!(one(5, 0), None, "total length not what the paths add up to");
        assert_eq!(t.get(2).map(|(p, _)| p), Some("apps/wéb"));
        assert_eq!(t.get(5), None);
    }

    #[test]
    fn merging_keeps_each_path_once_in_order_and_skips_unsorted_tables() {
        let a = table(&["a", "b/x", "c"]);
        let b = table(&["b", "b/x", "d"]);
        let unsorted = table(&["z", "a0"]);
        assert_eq!(merged(&[&a, &b, &unsorted]), ["a", "b", "b/x", "c", "d"]);
        assert!(!unsorted.is_sorted());
        assert!(!table(&["a", "a"]).is_sorted(), "each once");
        assert_eq!(merged(&[]), Vec::<&str>::new());
    }

    fn any_stat() -> impl Strategy<Value = Stat> {
        (any::<[u64; 4]>(), any::<[(i64, i64); 2]>()).prop_map(|(id, times)| Stat { id, times })
    }

    proptest! {
        #[test]
        fn any_table_round_trips(
            rows in proptest::collection::vec(("[a-zé/]{0,12}", any_stat()), 0..40)
        ) {
            let mut t = StatTable::default();
            for (p, st) in &rows {
                t.push(p, *st).unwrap();
            }
            let mut w = Writer::default();
            t.write(&mut w);
            let mut r = Reader::new(&w.buf);
            prop_assert_eq!(StatTable::read(&mut r), Some(t));
            prop_assert!(r.at_end());
        }
    }
}
