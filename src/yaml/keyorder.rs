//! go-yaml v2's "natural" mapping key order (sorter.go `keyList.Less`), which
//! is the order `kustomize build` and Helm's `toYaml` print keys in.

use std::cmp::Ordering;

/// Compares two string keys: at the first differing rune, two letters compare
/// by code point, a non-letter sorts before a letter, and runs of digits
/// compare as numbers (`a2` < `a10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    if less(a, b) {
        Ordering::Less
    } else if less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

fn less(a: &str, b: &str) -> bool {
    // Keys are nearly always ASCII: their bytes are their runes, and
    // comparing them allocates nothing (this runs for every key pair of
    // every printed mapping).
    if a.is_ascii() && b.is_ascii() {
        return less_runes(a.as_bytes(), b.as_bytes());
    }
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    less_runes(&ar, &br)
}

/// A rune: a `char`, or an ASCII byte.
trait Rune: Copy + PartialOrd {
    fn is_letter(self) -> bool;
    fn digit(self) -> Option<u8>;
}

impl Rune for char {
    fn is_letter(self) -> bool {
        self.is_alphabetic()
    }
    fn digit(self) -> Option<u8> {
        self.is_ascii_digit().then(|| self as u8 - b'0')
    }
}

impl Rune for u8 {
    fn is_letter(self) -> bool {
        self.is_ascii_alphabetic()
    }
    fn digit(self) -> Option<u8> {
        self.is_ascii_digit().then(|| self - b'0')
    }
}

/// sorter.go keyList.Less on rune slices.
fn less_runes<R: Rune>(ar: &[R], br: &[R]) -> bool {
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let al = ar[i].is_letter();
        let bl = br[i].is_letter();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i].digit() == Some(0) || br[i].digit() == Some(0) {
            // A zero inside a number that started earlier keeps its weight.
            let mut j = i;
            while j > 0 && ar[j - 1].digit().is_some() {
                j -= 1;
                if ar[j].digit() != Some(0) {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while let Some(d) = ar.get(ai).and_then(|r| r.digit()) {
            an = an.wrapping_mul(10).wrapping_add(i64::from(d));
            ai += 1;
        }
        let mut bi = i;
        while let Some(d) = br.get(bi).and_then(|r| r.digit()) {
            bn = bn.wrapping_mul(10).wrapping_add(i64::from(d));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(keys: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = keys.iter().map(|s| s.to_string()).collect();
        v.sort_by(|a, b| natural_cmp(a, b));
        v
    }

    #[test]
    fn letters_after_non_letters_and_numbers_by_value() {
        // configmaps__TestIssue3393: A_FIRST sorts before ANOTHER.
        assert_eq!(sorted(&["ANOTHER", "A_FIRST"]), ["A_FIRST", "ANOTHER"]);
        assert_eq!(sorted(&["a", "B"]), ["B", "a"]);
        assert_eq!(sorted(&["a10", "a2", "a1"]), ["a1", "a2", "a10"]);
        assert_eq!(sorted(&["b", "a", "ab"]), ["a", "ab", "b"]);
        assert_eq!(
            sorted(&["metadata", "apiVersion", "kind", "spec", "data"]),
            ["apiVersion", "data", "kind", "metadata", "spec"]
        );
        assert_eq!(sorted(&["x-1", "x.1", "x_1"]), ["x-1", "x.1", "x_1"]);
    }
}
