//! Sprig v3.3.0 encodings and hashes (`strings.go`, `crypto.go`):
//! base64/base32 with Go's error texts, `sha1sum`/`sha256sum`/`sha512sum`,
//! `adler32sum`, `derivePassword` (Master Password), and the
//! non-deterministic generators, which work but warn.

use hmac::{Hmac, KeyInit, Mac};
use sha1::Digest;

use super::{ArgType, FuncCtx, FuncMap, Signature};
use crate::gotmpl::value::Value;

use ArgType::{Int, String as Str};

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

fn ok(v: impl Into<String>) -> Result<Value, String> {
    Ok(Value::from(v.into()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Registers encodings, hashes and the generators.
pub fn register(m: &mut FuncMap) {
    let one = Signature::fixed(&[Str]);
    m.insert("b64enc", one.clone(), |_, a| {
        ok(b64_encode(s(&a[0]).as_bytes()))
    });
    m.insert("b64dec", one.clone(), |_, a| {
        ok(match b64_decode(s(&a[0])) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        })
    });
    m.insert("b32enc", one.clone(), |_, a| {
        ok(b32_encode(s(&a[0]).as_bytes()))
    });
    m.insert("b32dec", one.clone(), |_, a| {
        ok(match b32_decode(s(&a[0])) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => e,
        })
    });
    m.insert("sha1sum", one.clone(), |_, a| {
        ok(hex(&sha1::Sha1::digest(s(&a[0]).as_bytes())))
    });
    m.insert("sha256sum", one.clone(), |_, a| {
        ok(hex(&sha2::Sha256::digest(s(&a[0]).as_bytes())))
    });
    m.insert("sha512sum", one.clone(), |_, a| {
        ok(hex(&sha2::Sha512::digest(s(&a[0]).as_bytes())))
    });
    m.insert("adler32sum", one, |_, a| {
        ok(adler32(s(&a[0]).as_bytes()).to_string())
    });
    m.insert(
        "derivePassword",
        Signature::fixed(&[ArgType::Int, Str, Str, Str, Str]),
        |_, a| {
            let counter = match a[0] {
                Value::Int(i) | Value::Int64(i) => i as u32,
                _ => 0,
            };
            ok(derive_password(
                counter,
                s(&a[1]),
                s(&a[2]),
                s(&a[3]),
                s(&a[4]),
            ))
        },
    );
    register_random(m);
}

/// Warns once per template that a non-deterministic function ran.
pub fn warn_random(ctx: &FuncCtx<'_>, name: &str) {
    ctx.shared.warn(crate::warning::Warning::new(
        crate::warning::WarningKind::NonDeterminism,
        format!("{name} is not deterministic; the output will change on every render"),
        Some(ctx.template.into()),
    ));
}

/// A small xorshift generator seeded from the clock: these functions are
/// random by contract, nothing else in a render reads the clock.
fn random_u64() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9E37_79B9, |d| d.as_nanos() as u64)
            | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    x
}

fn random_from(charset: &[u8], n: i64) -> String {
    (0..n.clamp(0, super::MAX_RESULT_BYTES as i64))
        .map(|_| char::from(charset[(random_u64() % charset.len() as u64) as usize]))
        .collect()
}

fn register_random(m: &mut FuncMap) {
    // Key and certificate generation is random by nature and not
    // implemented: the generators return clearly marked placeholder PEM
    // text (with a warning) so that charts which generate material they
    // then ignore still render; encryption and hashing with salts fail.
    for (name, arity) in [
        ("genCA", 2),
        ("genCAWithKey", 3),
        ("genSelfSignedCert", 4),
        ("genSelfSignedCertWithKey", 5),
        ("genSignedCert", 5),
        ("genSignedCertWithKey", 6),
        ("buildCustomCert", 2),
    ] {
        let params = vec![ArgType::Any; arity];
        m.insert(name, Signature::fixed(&params), move |ctx, _| {
            warn_random(ctx, name);
            let mut c = std::collections::BTreeMap::new();
            c.insert(
                "Cert".to_string(),
                Value::from(placeholder_pem("CERTIFICATE", name)),
            );
            c.insert(
                "Key".to_string(),
                Value::from(placeholder_pem("RSA PRIVATE KEY", name)),
            );
            Ok(Value::map(c))
        });
    }
    m.insert("genPrivateKey", Signature::fixed(&[Str]), |ctx, _| {
        warn_random(ctx, "genPrivateKey");
        ok(placeholder_pem("RSA PRIVATE KEY", "genPrivateKey"))
    });
    for (name, arity) in [("encryptAES", 2), ("decryptAES", 2)] {
        let params = vec![ArgType::Any; arity];
        m.insert(name, Signature::fixed(&params), move |ctx, _| {
            warn_random(ctx, name);
            Err(format!("{name} is not supported by hydrate"))
        });
    }
    const ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const NUM: &[u8] = b"0123456789";
    let sets: [(&str, Vec<u8>); 4] = [
        ("randAlphaNum", [ALPHA, NUM].concat()),
        ("randAlpha", ALPHA.to_vec()),
        ("randNumeric", NUM.to_vec()),
        ("randAscii", (32u8..127).collect()),
    ];
    for (name, set) in sets {
        m.insert(name, Signature::fixed(&[Int]), move |ctx, a| {
            warn_random(ctx, name);
            let n = match a[0] {
                Value::Int(i) => i,
                _ => 0,
            };
            ok(random_from(&set, n))
        });
    }
    m.insert("randBytes", Signature::fixed(&[Int]), |ctx, a| {
        warn_random(ctx, "randBytes");
        let n = match a[0] {
            Value::Int(i) => i.max(0),
            _ => 0,
        };
        let n = n.min(super::MAX_RESULT_BYTES as i64);
        let bytes: Vec<u8> = (0..n).map(|_| random_u64() as u8).collect();
        ok(b64_encode(&bytes))
    });
    m.insert("randInt", Signature::fixed(&[Int, Int]), |ctx, a| {
        warn_random(ctx, "randInt");
        let (lo, hi) = match (&a[0], &a[1]) {
            (Value::Int(x), Value::Int(y)) => (*x, *y),
            _ => (0, 0),
        };
        if hi <= lo {
            return Err("invalid argument to Intn".into());
        }
        Ok(Value::Int(lo + (random_u64() % (hi - lo) as u64) as i64))
    });
    m.insert("uuidv4", Signature::fixed(&[]), |ctx, _| {
        warn_random(ctx, "uuidv4");
        let mut b: Vec<u8> = (0..16).map(|_| random_u64() as u8).collect();
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        let h = hex(&b);
        ok(format!(
            "{}-{}-{}-{}-{}",
            &h[..8],
            &h[8..12],
            &h[12..16],
            &h[16..20],
            &h[20..]
        ))
    });
    m.insert("shuffle", Signature::fixed(&[Str]), |ctx, a| {
        warn_random(ctx, "shuffle");
        let mut c: Vec<char> = s(&a[0]).chars().collect();
        for i in (1..c.len()).rev() {
            let j = (random_u64() % (i as u64 + 1)) as usize;
            c.swap(i, j);
        }
        ok(c.into_iter().collect::<String>())
    });
}

/// PEM-shaped text that says it is not real key material.
fn placeholder_pem(kind: &str, func: &str) -> String {
    format!(
        "-----BEGIN {kind}-----\n{}\n-----END {kind}-----\n",
        b64_encode(
            format!("hydrate placeholder: {func} output is random and not generated").as_bytes()
        )
    )
}

const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/// Go's `base64.StdEncoding.EncodeToString`.
pub fn b64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk.len();
        let v = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= n {
                out.push(char::from(B64[((v >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// Go's `base64.StdEncoding.DecodeString` (newlines ignored, strict
/// padding), with Go's error text.
pub fn b64_decode(text: &str) -> Result<Vec<u8>, String> {
    decode_blocks(text, B64, 4, 6, "illegal base64 data at input byte")
}

/// Go's `base32.StdEncoding.EncodeToString`.
fn b32_encode(data: &[u8]) -> String {
    let mut out = String::new();
    for chunk in data.chunks(5) {
        let mut buf = [0u8; 5];
        buf[..chunk.len()].copy_from_slice(chunk);
        let v = buf.iter().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(char::from(B32[((v >> (35 - 5 * i)) & 31) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn b32_decode(text: &str) -> Result<Vec<u8>, String> {
    decode_blocks(text, B32, 8, 5, "illegal base32 data at input byte")
}

/// Shared block decoder: `quantum` characters of `bits` bits each; the
/// last block may be padded with `=`. Errors name the first bad byte.
fn decode_blocks(
    text: &str,
    alphabet: &[u8],
    quantum: usize,
    bits: u32,
    msg: &str,
) -> Result<Vec<u8>, String> {
    // Go strips \r and \n before decoding and reports offsets in the input.
    let chars: Vec<(usize, u8)> = text
        .bytes()
        .enumerate()
        .filter(|(_, b)| *b != b'\n' && *b != b'\r')
        .collect();
    let err = |i: usize| format!("{msg} {i}");
    let mut out = Vec::new();
    let mut acc: u64 = 0;
    let mut nbits = 0u32;
    let mut k = 0;
    while k < chars.len() {
        let (pos, c) = chars[k];
        if c == b'=' {
            // Padding: must complete the current quantum and end the input.
            let in_quantum = k % quantum;
            if in_quantum < 2 {
                return Err(err(pos));
            }
            let pad = quantum - in_quantum;
            for j in 0..pad {
                match chars.get(k + j) {
                    Some((_, b'=')) => {}
                    Some((p, _)) => return Err(err(*p)),
                    None => return Err(err(text.len())),
                }
            }
            if let Some((p, _)) = chars.get(k + pad) {
                return Err(err(*p));
            }
            if quantum == 8 && ![2, 4, 5, 7].contains(&in_quantum) {
                return Err(err(pos));
            }
            break;
        }
        let Some(v) = alphabet.iter().position(|a| *a == c) else {
            return Err(err(pos));
        };
        acc = (acc << bits) | v as u64;
        nbits += bits;
        if nbits >= 8 {
            nbits -= 8;
            out.push((acc >> nbits) as u8);
            acc &= (1 << nbits) - 1;
        }
        k += 1;
    }
    if k == chars.len() && chars.len() % quantum != 0 {
        return Err(err(text.len()));
    }
    Ok(out)
}

/// Go's `hash/adler32.Checksum`.
fn adler32(data: &[u8]) -> u32 {
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + u32::from(x)) % 65521;
        b = (b + a) % 65521;
    }
    (b << 16) | a
}

/// Sprig's `derivePassword`: the Master Password algorithm (scrypt key
/// from the user, HMAC-SHA256 seed from the site, template characters).
fn derive_password(counter: u32, kind: &str, password: &str, user: &str, site: &str) -> String {
    const SEED: &str = "com.lyndir.masterpassword";
    let templates: &[&str] = match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return format!("cannot find password template {kind}"),
    };
    let mut salt = SEED.as_bytes().to_vec();
    salt.extend_from_slice(&(user.len() as u32).to_be_bytes());
    salt.extend_from_slice(user.as_bytes());
    let mut key = [0u8; 64];
    let params = match scrypt::Params::new(15, 8, 2) {
        Ok(p) => p,
        Err(e) => return format!("failed to derive password: {e}"),
    };
    if let Err(e) = scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key) {
        return format!("failed to derive password: {e}");
    }
    let mut msg = SEED.as_bytes().to_vec();
    msg.extend_from_slice(&(site.len() as u32).to_be_bytes());
    msg.extend_from_slice(site.as_bytes());
    msg.extend_from_slice(&counter.to_be_bytes());
    let Ok(mut mac) = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key) else {
        return "failed to derive password".into();
    };
    mac.update(&msg);
    let seed = mac.finalize().into_bytes();
    let template = templates[usize::from(seed[0]) % templates.len()];
    template
        .bytes()
        .enumerate()
        .map(|(i, t)| {
            let chars: &[u8] = match t {
                b'V' => b"AEIOU",
                b'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
                b'v' => b"aeiou",
                b'c' => b"bcdfghjklmnpqrstvwxyz",
                b'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
                b'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
                b'n' => b"0123456789",
                b'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
                _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
            };
            let byte = seed.get(i + 1).copied().unwrap_or(0);
            char::from(chars[usize::from(byte) % chars.len()])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trip_and_errors() {
        assert_eq!(b64_encode(b"abc"), "YWJj");
        assert_eq!(b64_encode(b"ab"), "YWI=");
        assert_eq!(b64_decode("YWI=").as_deref(), Ok(&b"ab"[..]));
        assert_eq!(
            b64_decode("YW!=").err().as_deref(),
            Some("illegal base64 data at input byte 2")
        );
        assert_eq!(
            b64_decode("YWJ").err().as_deref(),
            Some("illegal base64 data at input byte 3")
        );
    }

    #[test]
    fn base32_and_checksums() {
        assert_eq!(b32_encode(b"abc"), "MFRGG===");
        assert_eq!(b32_decode("MFRGG===").as_deref(), Ok(&b"abc"[..]));
        assert_eq!(adler32(b"abc"), 38_600_999);
        assert_eq!(
            hex(&sha2::Sha256::digest(b"")),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn derive_password_matches_sprig_test() {
        // sprig crypto_test.go: derivePassword 1 "long" "password" "user" "example.com"
        assert_eq!(
            derive_password(1, "long", "password", "user", "example.com"),
            "ZedaFaxcZaso9*"
        );
        assert_eq!(
            derive_password(1, "x", "p", "u", "s"),
            "cannot find password template x"
        );
    }
}
