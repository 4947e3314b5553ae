//! Secret masking: every value under `data` and `stringData` of a Secret
//! (or of a resource a rule marks secret) becomes
//! `<sha256:1a2b3c4d, 12 bytes>` before anything is compared or printed, so
//! a changed secret shows as changed without showing its value. A Secret's
//! `data` is base64: the hash and length are of the decoded bytes, so the
//! same value in `data` and `stringData` masks the same. Another kind marked
//! secret has its `data` (text) and `binaryData` (base64) masked.

use sha2::{Digest, Sha256};

use super::Resource;
use crate::yaml::{Node, Value};

/// A core-group Secret.
pub(crate) fn is_secret(r: &Resource) -> bool {
    r.group.is_empty() && r.kind == "Secret"
}

/// Replaces the values under `data` and `stringData` (base64 `data` in a
/// Secret), or `data` and `binaryData` (base64) of another kind.
pub(crate) fn mask(node: &mut Node, secret: bool) {
    let fields = if secret {
        [("data", true), ("stringData", false)]
    } else {
        [("data", false), ("binaryData", true)]
    };
    for (field, base64) in fields {
        let Some(Value::Map(entries)) = node.get_mut(field).map(|n| &mut n.value) else {
            continue;
        };
        for (_, v) in entries.iter_mut() {
            let Some(s) = v.as_scalar() else {
                continue;
            };
            let decoded = if base64 { decode(&s.text) } else { None };
            let bytes = decoded.unwrap_or_else(|| s.text.as_bytes().to_vec());
            *v = Node::string(masked(&bytes));
        }
    }
}

/// `<sha256:1a2b3c4d, 12 bytes>`.
pub(crate) fn masked(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    format!("<sha256:{hex}, {} bytes>", bytes.len())
}

/// Standard base64 (line breaks allowed), as Kubernetes stores `data`.
fn decode(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    let mut padding = 0;
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace()) {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => {
                padding += 1;
                continue;
            }
            _ => return None,
        };
        if padding > 0 {
            return None;
        }
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    #[test]
    fn data_and_string_data_mask_alike() {
        let mut n = parse_one(
            "data: {password: aHVudGVyMg==}\nstringData: {password: hunter2}\n",
            Resolver::V3,
        )
        .unwrap();
        mask(&mut n, true);
        let (a, b) = (
            n.get_path(&["data", "password"]).and_then(Node::as_str),
            n.get_path(&["stringData", "password"])
                .and_then(Node::as_str),
        );
        assert_eq!(a, b);
        assert_eq!(a, Some("<sha256:f52fbd32, 7 bytes>"));
        assert_eq!(decode("aGk=\n"), Some(b"hi".to_vec()));
        assert_eq!(decode("a*"), None);
    }
}
