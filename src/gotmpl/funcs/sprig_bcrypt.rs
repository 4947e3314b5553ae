//! Sprig v3.3.0's `bcrypt` and `htpasswd` (`crypto.go`): a bcrypt hash
//! with a random salt at Go's default cost, `$2a$10$...`, as
//! golang.org/x/crypto/bcrypt's `GenerateFromPassword` writes it. Random
//! by contract, so each call warns; the hashing is the `bcrypt` crate's.
//! Failures are returned as text, as sprig does, never as errors.

use super::sprig_encoding::warn_random;
use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::value::Value;

/// x/crypto/bcrypt's `DefaultCost`.
const DEFAULT_COST: u32 = 10;

/// x/crypto/bcrypt refuses longer passwords (`ErrPasswordTooLong`).
const MAX_PASSWORD: usize = 72;

/// Registers `bcrypt` and `htpasswd`.
pub fn register(m: &mut FuncMap) {
    m.insert("bcrypt", Signature::fixed(&[ArgType::String]), |ctx, a| {
        warn_random(ctx, "bcrypt");
        Ok(Value::from(hash(text(&a[0]))))
    });
    let two = Signature::fixed(&[ArgType::String, ArgType::String]);
    m.insert("htpasswd", two, |ctx, a| {
        warn_random(ctx, "htpasswd");
        Ok(Value::from(htpasswd(text(&a[0]), text(&a[1]))))
    });
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// sprig `htpasswd`: `user:hash`, or its message for a user with a colon.
fn htpasswd(user: &str, password: &str) -> String {
    if user.contains(':') {
        return format!("invalid username: {user}");
    }
    format!("{user}:{}", hash(password))
}

/// sprig `bcrypt`: the hash, or sprig's message wrapping bcrypt's error.
fn hash(password: &str) -> String {
    let fail = |e: &str| format!("failed to encrypt string with bcrypt: {e}");
    // Go hashes up to 72 bytes (with its NUL terminator cut off at 72, as
    // the crate's truncating hash does) and refuses more.
    if password.len() > MAX_PASSWORD {
        return fail("bcrypt: password length exceeds 72 bytes");
    }
    match bcrypt::hash_with_result(password, DEFAULT_COST) {
        Ok(parts) => parts.format_for_version(bcrypt::Version::TwoA),
        Err(e) => fail(&e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn htpasswd_is_user_and_a_2a_cost_10_hash_of_the_password() {
        for (user, password) in [
            ("user", "pass"),
            ("", ""),
            ("ü", "päss"),
            ("u", &"x".repeat(72)),
        ] {
            let line = htpasswd(user, password);
            let (u, h) = line.split_once(':').unwrap_or_default();
            assert_eq!(u, user);
            assert!(h.starts_with("$2a$10$") && h.len() == 60, "{line}");
            assert!(bcrypt::verify(password, h).unwrap_or(false), "{line}");
            assert!(!bcrypt::verify("wrong", h).unwrap_or(true), "{line}");
        }
        // Random salts: two hashes of one password differ.
        assert_ne!(hash("pass"), hash("pass"));
    }

    #[test]
    fn failures_are_text_as_sprig_returns_them() {
        assert_eq!(htpasswd("us:er", "p"), "invalid username: us:er");
        assert_eq!(
            htpasswd("u", &"x".repeat(73)),
            "u:failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes"
        );
    }
}
