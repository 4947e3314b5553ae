//! The on-disk format of one cache entry, self-checking so that a corrupt,
//! truncated or foreign file is recognised and never trusted:
//!
//! ```text
//! magic "HYDRATE-CACHE\n" | format u32 | kind u8 | key [32] | length u64 | sha256(payload) [32] | payload
//! ```
//!
//! (integers little-endian). Payloads are sequences of length-prefixed
//! fields written by [`Writer`] and read back by [`Reader`], which fails on
//! any short read instead of indexing out of bounds. It knows nothing about
//! where entries live; `cache/` decides that.

use sha2::{Digest, Sha256};

/// The first bytes of every entry.
const MAGIC: &[u8; 14] = b"HYDRATE-CACHE\n";
/// Bumped whenever the payload layout changes: older entries are then foreign.
const FORMAT: u32 = 1;
const HEADER: usize = MAGIC.len() + 4 + 1 + 32 + 8 + 32;

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The cache's index (see `index`).
    Index = 3,
    /// A rendered result (keyed by the job and its inputs' contents).
    Output = 2,
}

/// A 32-byte key (a SHA-256).
pub type Key = [u8; 32];

/// Lower-case hex of a key (an entry's file name).
pub fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of an entry of `kind` under `key` holding `payload` (what
/// [`Writer::seal`] makes in place).
#[cfg(test)]
pub fn seal(kind: Kind, key: &Key, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT.to_le_bytes());
    out.push(kind as u8);
    out.extend_from_slice(key);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

/// The payload of `bytes` when it is a whole, intact entry of `kind` under
/// `key`; `None` for anything else (another format, another key, a short
/// file, trailing bytes, a checksum mismatch).
pub fn open<'a>(bytes: &'a [u8], kind: Kind, key: &Key) -> Option<&'a [u8]> {
    let mut r = Reader { bytes, pos: 0 };
    if r.take(MAGIC.len())? != MAGIC
        || r.u32()? != FORMAT
        || r.take(1)? != [kind as u8]
        || r.take(32)? != key
    {
        return None;
    }
    let len = usize::try_from(r.u64()?).ok()?;
    let sum = r.take(32)?;
    let payload = r.take(len)?;
    if r.pos != bytes.len() || Sha256::digest(payload).as_slice() != sum {
        return None;
    }
    Some(payload)
}

/// Appends length-prefixed fields to a payload.
#[derive(Default)]
pub struct Writer {
    /// The payload so far.
    pub buf: Vec<u8>,
}

impl Writer {
    /// A writer whose buffer starts with room for an entry's header, so
    /// that [`Writer::seal`] makes the entry in place instead of copying
    /// the payload after a header ([`seal`]).
    pub fn for_entry(capacity: usize) -> Writer {
        let mut buf = Vec::with_capacity(HEADER + capacity);
        buf.resize(HEADER, 0);
        Writer { buf }
    }

    /// The bytes of an entry of `kind` under `key` holding what was written
    /// (the same bytes as [`seal`] of it). Only for a writer made by
    /// [`Writer::for_entry`].
    pub fn seal(mut self, kind: Kind, key: &Key) -> Vec<u8> {
        let payload = self.buf.get(HEADER..).unwrap_or_default();
        let mut header = Vec::with_capacity(HEADER);
        header.extend_from_slice(MAGIC);
        header.extend_from_slice(&FORMAT.to_le_bytes());
        header.push(kind as u8);
        header.extend_from_slice(key);
        header.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        header.extend_from_slice(&Sha256::digest(payload));
        if let Some(room) = self.buf.get_mut(..HEADER) {
            room.copy_from_slice(&header);
        }
        self.buf
    }

    /// One byte.
    pub fn byte(&mut self, b: u8) {
        self.buf.push(b);
    }

    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    /// A byte string (length, then bytes).
    pub fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// A string.
    pub fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    /// An optional string (a flag byte, then the string).
    pub fn opt_str(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.buf.push(1);
                self.str(s);
            }
            None => self.buf.push(0),
        }
    }
}

/// Reads the fields a [`Writer`] wrote; every method returns `None` at the
/// end of the input rather than panicking.
pub struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Reads `payload` from its start.
    pub fn new(payload: &'a [u8]) -> Reader<'a> {
        Reader {
            bytes: payload,
            pos: 0,
        }
    }

    /// Whether everything was read.
    pub fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// One byte.
    pub fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    /// A `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A count of items still to come: at most the bytes left, so a
    /// corrupt count cannot make the caller allocate without bound.
    pub fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= self.bytes.len() - self.pos).then_some(n)
    }

    /// A byte string.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }

    /// A UTF-8 string.
    pub fn str(&mut self) -> Option<&'a str> {
        std::str::from_utf8(self.bytes()?).ok()
    }

    /// An optional string.
    pub fn opt_str(&mut self) -> Option<Option<&'a str>> {
        match self.take(1)? {
            [0] => Some(None),
            [1] => Some(Some(self.str()?)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_entries_open_only_as_themselves() {
        let key = [7u8; 32];
        let e = seal(Kind::Output, &key, b"payload");
        assert_eq!(open(&e, Kind::Output, &key), Some(&b"payload"[..]));
        assert_eq!(open(&e, Kind::Index, &key), None, "another kind");
        assert_eq!(open(&e, Kind::Output, &[8u8; 32]), None, "another key");
        for cut in 0..e.len() {
            assert_eq!(open(&e[..cut], Kind::Output, &key), None, "cut at {cut}");
        }
        let mut longer = e.clone();
        longer.push(0);
        assert_eq!(open(&longer, Kind::Output, &key), None, "trailing bytes");
        let mut flipped = e.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert_eq!(open(&flipped, Kind::Output, &key), None, "payload changed");
        let mut format = e;
        format[MAGIC.len()] = 2;
        assert_eq!(open(&format, Kind::Output, &key), None, "other format");
    }

    #[test]
    fn sealed_in_place_is_the_same_entry() {
        let key = [3u8; 32];
        let mut w = Writer::for_entry(4);
        w.str("payload");
        w.u64(7);
        let mut plain = Writer::default();
        plain.str("payload");
        plain.u64(7);
        let e = w.seal(Kind::Output, &key);
        assert_eq!(e, seal(Kind::Output, &key, &plain.buf));
        assert_eq!(open(&e, Kind::Output, &key), Some(&plain.buf[..]));
        let empty = Writer::for_entry(0).seal(Kind::Index, &key);
        assert_eq!(open(&empty, Kind::Index, &key), Some(&b""[..]));
    }

    #[test]
    fn fields_round_trip_and_short_reads_fail() {
        let mut w = Writer::default();
        w.str("héllo");
        w.opt_str(None);
        w.opt_str(Some("x"));
        w.u64(42);
        let mut r = Reader::new(&w.buf);
        assert_eq!(r.str(), Some("héllo"));
        assert_eq!(r.opt_str(), Some(None));
        assert_eq!(r.opt_str(), Some(Some("x")));
        assert_eq!(r.u64(), Some(42));
        assert!(r.at_end());
        assert_eq!(r.u64(), None);
        let mut huge = Writer::default();
        huge.u64(u64::MAX);
        assert_eq!(Reader::new(&huge.buf).count(), None);
        assert_eq!(Reader::new(&huge.buf).bytes(), None);
    }
}
