//! The on-disk format of one cache entry, authenticated so that an entry
//! not written under this run's [`Secret`] (forged, altered, corrupt or
//! written with another key) is recognised and never trusted:
//!
//! ```text
//! magic "HYDRATE-CACHE\n" | format u32 | kind u8 | key [32] | length u64 | mac [32] | payload
//! ```
//!
//! (integers little-endian). `mac` is HMAC-SHA256 under the secret of
//! everything else: magic, format, kind, key, length and payload, so an
//! entry cannot be edited, moved to another key or kind, or cut short
//! without the secret. (Format 1 carried a SHA-256 of the payload: a
//! checksum anyone could recompute; those entries are now foreign.)
//! Payloads are sequences of length-prefixed fields written by [`Writer`]
//! and read back by [`Reader`], which fails on any short read instead of
//! indexing out of bounds. It knows nothing about where entries live;
//! `cache/` decides that.

use hmac::Mac;

use super::secret::Secret;

/// The first bytes of every entry.
const MAGIC: &[u8; 14] = b"HYDRATE-CACHE\n";
/// Bumped whenever the layout changes: older entries are then foreign.
const FORMAT: u32 = 2;
/// The bytes before the MAC, which it covers.
const SIGNED_HEADER: usize = MAGIC.len() + 4 + 1 + 32 + 8;
const HEADER: usize = SIGNED_HEADER + 32;

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The cache's index (see `index`).
    Index = 3,
    /// A rendered result (keyed by the job and its inputs' contents).
    Output = 2,
    /// What validation found in a rendered result (keyed by the result's
    /// key and what it was validated under), opaque to the cache.
    Findings = 4,
    /// What an environment's last clean run left (see `settled`), keyed
    /// by the environment's configuration and jobs.
    Settled = 5,
}

/// A 32-byte key (a SHA-256).
pub type Key = [u8; 32];

/// Lower-case hex of a key (an entry's file name).
pub fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why [`open`] did not return a payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Not a whole entry of this format, kind and key (an older format, a
    /// short file, trailing bytes, another entry's bytes): ignored quietly.
    Foreign,
    /// Shaped as the entry asked for, but its MAC does not verify under
    /// this run's secret: written with another key, or altered.
    Unauthentic,
}

/// The header of an entry of `kind` under `key` holding `len` bytes, up to
/// (not including) the MAC.
fn signed_header(kind: Kind, key: &Key, len: usize) -> [u8; SIGNED_HEADER] {
    let mut h = [0u8; SIGNED_HEADER];
    let fields: [&[u8]; 5] = [
        MAGIC,
        &FORMAT.to_le_bytes(),
        &[kind as u8],
        key,
        &(len as u64).to_le_bytes(),
    ];
    let mut at = 0;
    for f in fields {
        if let Some(room) = h.get_mut(at..at + f.len()) {
            room.copy_from_slice(f);
        }
        at += f.len();
    }
    h
}

/// The MAC of an entry: its signed header, then its payload.
fn mac(secret: &Secret, header: &[u8], payload: &[u8]) -> hmac::Hmac<sha2::Sha256> {
    let mut m = secret.mac();
    m.update(header);
    m.update(payload);
    m
}

/// The bytes of an entry of `kind` under `key` holding `payload` (what
/// [`Writer::seal`] makes in place).
#[cfg(test)]
pub fn seal(kind: Kind, key: &Key, payload: &[u8], secret: &Secret) -> Vec<u8> {
    let header = signed_header(kind, key, payload.len());
    let mut out = Vec::with_capacity(HEADER + payload.len());
    out.extend_from_slice(&header);
    out.extend_from_slice(&mac(secret, &header, payload).finalize().into_bytes());
    out.extend_from_slice(payload);
    out
}

/// The payload of `bytes` when it is a whole entry of `kind` under `key`
/// whose MAC verifies under `secret` (compared in constant time).
pub fn open<'a>(
    bytes: &'a [u8],
    kind: Kind,
    key: &Key,
    secret: &Secret,
) -> Result<&'a [u8], Refused> {
    let header = bytes.get(..SIGNED_HEADER).ok_or(Refused::Foreign)?;
    let tag = bytes.get(SIGNED_HEADER..HEADER).ok_or(Refused::Foreign)?;
    let payload = bytes.get(HEADER..).ok_or(Refused::Foreign)?;
    if header != signed_header(kind, key, payload.len()) {
        return Err(Refused::Foreign);
    }
    mac(secret, header, payload)
        .verify_slice(tag)
        .map_err(|_| Refused::Unauthentic)?;
    Ok(payload)
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
    /// (the same bytes as [`seal`] of it), authenticated under `secret`.
    /// Only for a writer made by [`Writer::for_entry`].
    pub fn seal(mut self, kind: Kind, key: &Key, secret: &Secret) -> Vec<u8> {
        let payload = self.buf.get(HEADER..).unwrap_or_default();
        let header = signed_header(kind, key, payload.len());
        let tag = mac(secret, &header, payload).finalize().into_bytes();
        if let Some(room) = self.buf.get_mut(..SIGNED_HEADER) {
            room.copy_from_slice(&header);
        }
        if let Some(room) = self.buf.get_mut(SIGNED_HEADER..HEADER) {
            room.copy_from_slice(&tag);
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

    /// A `u64` as LEB128: seven bits a byte, low first, the high bit set
    /// on every byte but the last (a byte for values below 128).
    pub fn varint(&mut self, mut v: u64) {
        loop {
            let low = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.buf.push(low);
                return;
            }
            self.buf.push(low | 0x80);
        }
    }

    /// An `i64` as [`Writer::varint`] of its zigzag form (small magnitudes,
    /// either sign, take few bytes).
    pub fn signed(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
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

    /// How many bytes are left.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Whether everything was read.
    pub fn at_end(&self) -> bool {
        self.pos == self.bytes.len()
    }

    /// The next `n` bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.bytes.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// One byte.
    pub fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    /// A `u64`.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// A [`Writer::varint`]; `None` when it runs past the input or past
    /// 64 bits.
    pub fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            // The tenth byte may carry only the top bit.
            if shift == 63 && bits > 1 {
                return None;
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// A [`Writer::signed`].
    pub fn signed(&mut self) -> Option<i64> {
        let z = self.varint()?;
        Some(((z >> 1) as i64) ^ -((z & 1) as i64))
    }

    /// A count written as a [`Writer::varint`], bounded as [`Reader::count`].
    pub fn count_varint(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.bytes.len() - self.pos).then_some(n)
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

    fn secret(b: u8) -> Secret {
        Secret::from_text(&[b; 32]).unwrap()
    }

    #[test]
    fn varints_round_trip_and_overlong_ones_are_refused() {
        let values = [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX - 1, u64::MAX];
        let signed = [0i64, 1, -1, 63, -64, 64, i64::MIN, i64::MAX];
        let mut w = Writer::default();
        for v in values {
            w.varint(v);
        }
        for v in signed {
            w.signed(v);
        }
        let mut r = Reader::new(&w.buf);
        for v in values {
            assert_eq!(r.varint(), Some(v));
        }
        for v in signed {
            assert_eq!(r.signed(), Some(v));
        }
        assert!(r.at_end());
        assert_eq!(w.buf[..1], [0], "zero is one byte");
        for bad in [
            &[0x80u8][..],
            &[0xff; 10],
            &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02],
        ] {
            assert_eq!(Reader::new(bad).varint(), None, "{bad:?}");
        }
    }

    #[test]
    fn sealed_entries_open_only_as_themselves() {
        let key = [7u8; 32];
        let s = secret(b'a');
        let e = seal(Kind::Output, &key, b"payload", &s);
        assert_eq!(open(&e, Kind::Output, &key, &s), Ok(&b"payload"[..]));
        let foreign = Err(Refused::Foreign);
        assert_eq!(open(&e, Kind::Index, &key, &s), foreign, "another kind");
        assert_eq!(
            open(&e, Kind::Output, &[8u8; 32], &s),
            foreign,
            "another key"
        );
        for cut in 0..e.len() {
            assert_eq!(
                open(&e[..cut], Kind::Output, &key, &s),
                foreign,
                "cut at {cut}"
            );
        }
        let mut longer = e.clone();
        longer.push(0);
        assert_eq!(
            open(&longer, Kind::Output, &key, &s),
            foreign,
            "trailing bytes"
        );
        let mut format = e.clone();
        format[MAGIC.len()] = 1;
        assert_eq!(open(&format, Kind::Output, &key, &s), foreign, "format 1");
        let unauthentic = Err(Refused::Unauthentic);
        for at in [HEADER, e.len() - 1, SIGNED_HEADER, HEADER - 1] {
            let mut flipped = e.clone();
            flipped[at] ^= 1;
            assert_eq!(
                open(&flipped, Kind::Output, &key, &s),
                unauthentic,
                "byte {at}"
            );
        }
        let other = secret(b'b');
        assert_eq!(
            open(&e, Kind::Output, &key, &other),
            unauthentic,
            "another secret"
        );
    }

    /// Format 1's forgery: a payload edited and its SHA-256 written where
    /// the checksum was. Without the secret the MAC cannot be made.
    #[test]
    fn an_edited_payload_with_a_recomputed_checksum_is_refused() {
        use sha2::{Digest, Sha256};
        let key = [1u8; 32];
        let s = secret(b'a');
        let e = seal(Kind::Output, &key, b"image: app:1.0", &s);
        let mut forged = e[..SIGNED_HEADER].to_vec();
        forged.extend_from_slice(&Sha256::digest(b"image: evil:1"));
        forged.extend_from_slice(b"image: evil:1");
        forged[SIGNED_HEADER - 8..SIGNED_HEADER].copy_from_slice(&13u64.to_le_bytes());
        assert_eq!(
            open(&forged, Kind::Output, &key, &s),
            Err(Refused::Unauthentic)
        );
        let resealed = seal(Kind::Output, &key, b"image: evil:1", &s);
        assert_eq!(resealed[..SIGNED_HEADER], forged[..SIGNED_HEADER]);
        assert_eq!(
            open(&resealed, Kind::Output, &key, &s),
            Ok(&b"image: evil:1"[..]),
            "the same edit under the secret opens"
        );
    }

    #[test]
    fn sealed_in_place_is_the_same_entry() {
        let key = [3u8; 32];
        let s = secret(b'c');
        let mut w = Writer::for_entry(4);
        w.str("payload");
        w.u64(7);
        let mut plain = Writer::default();
        plain.str("payload");
        plain.u64(7);
        let e = w.seal(Kind::Output, &key, &s);
        assert_eq!(e, seal(Kind::Output, &key, &plain.buf, &s));
        assert_eq!(open(&e, Kind::Output, &key, &s), Ok(&plain.buf[..]));
        let empty = Writer::for_entry(0).seal(Kind::Index, &key, &s);
        assert_eq!(open(&empty, Kind::Index, &key, &s), Ok(&b""[..]));
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
