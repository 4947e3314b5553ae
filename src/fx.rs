//! rustc's FxHash for in-memory maps keyed by paths and names from the
//! repository: a multiply and a rotate per eight bytes. SipHash's flood
//! resistance buys nothing for keys that only index this process's memory,
//! and it was 1-2% of a run wherever paths are looked up by the thousand
//! (the input hasher's memo, the resolver's, kustomize's parsed files).
//! Content identity (every key stored on disk) stays SHA-256.

use std::hash::BuildHasherDefault;

/// `HashMap` and `HashSet`'s hasher parameter for [`Fx`].
pub type FxBuild = BuildHasherDefault<Fx>;

/// The hasher (see the module).
#[derive(Clone, Copy, Default)]
pub struct Fx(u64);

impl Fx {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for Fx {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }

    fn write_u8(&mut self, b: u8) {
        self.add(u64::from(b));
    }

    fn finish(&self) -> u64 {
        self.0
    }
}
