//! Sprig's `urlParse`/`urlJoin` on a subset of Go's `net/url`: scheme,
//! `//userinfo@host`, path, raw query, fragment, opaque URLs; escaping
//! is limited to what `URL.String()` does for common characters.

use std::collections::BTreeMap;

use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::value::Value;

/// Go's `url.Parse` result (the fields Sprig reads).
#[derive(Debug, Default, PartialEq)]
struct Url {
    scheme: String,
    opaque: String,
    user: Option<String>,
    host: String,
    path: String,
    query: String,
    fragment: String,
}

fn parse(raw: &str) -> Result<Url, String> {
    let mut u = Url::default();
    let (rest, frag) = raw.split_once('#').unwrap_or((raw, ""));
    u.fragment = frag.to_string();
    let mut rest = rest;
    if let Some(i) = rest.find(':') {
        let s = &rest[..i];
        let valid = s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"+-.".contains(&b));
        if i == 0 {
            return Err(format!("parse {:?}: missing protocol scheme", raw));
        }
        if valid {
            u.scheme = s.to_ascii_lowercase();
            rest = &rest[i + 1..];
        }
    }
    if let Some((r, q)) = rest.split_once('?') {
        u.query = q.to_string();
        rest = r;
    }
    if !u.scheme.is_empty() && !rest.starts_with('/') {
        u.opaque = rest.to_string();
        return Ok(u);
    }
    if let Some(auth_rest) = rest.strip_prefix("//") {
        let (auth, path) = match auth_rest.find('/') {
            Some(i) => (&auth_rest[..i], &auth_rest[i..]),
            None => (auth_rest, ""),
        };
        let (user, host) = match auth.rfind('@') {
            Some(i) => (Some(auth[..i].to_string()), &auth[i + 1..]),
            None => (None, auth),
        };
        u.user = user;
        u.host = host.to_string();
        rest = path;
    }
    u.path = rest.to_string();
    Ok(u)
}

fn hostname(host: &str) -> String {
    if let Some(r) = host.strip_prefix('[') {
        return r.split(']').next().unwrap_or(r).to_string();
    }
    host.split(':').next().unwrap_or(host).to_string()
}

/// Percent-escapes the bytes Go escapes in paths and fragments.
fn escape(s: &str, extra_ok: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        let ok = b.is_ascii_alphanumeric()
            || b"-_.~!$&'()*+,;=:@/".contains(&b)
            || extra_ok.as_bytes().contains(&b);
        if ok {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Go's `URL.String()`.
fn join(u: &Url) -> String {
    let mut buf = String::new();
    if !u.scheme.is_empty() {
        buf.push_str(&u.scheme);
        buf.push(':');
    }
    if !u.opaque.is_empty() {
        buf.push_str(&u.opaque);
    } else {
        if !u.scheme.is_empty() || !u.host.is_empty() || u.user.is_some() {
            if !u.host.is_empty() || !u.path.is_empty() || u.user.is_some() {
                buf.push_str("//");
            }
            if let Some(user) = &u.user {
                buf.push_str(user);
                buf.push('@');
            }
            buf.push_str(&u.host);
        }
        let path = escape(&u.path, "");
        if !path.is_empty() && !path.starts_with('/') && !u.host.is_empty() {
            buf.push('/');
        }
        if buf.is_empty() && path.split('/').next().is_some_and(|s| s.contains(':')) {
            buf.push_str("./");
        }
        buf.push_str(&path);
    }
    if !u.query.is_empty() {
        buf.push('?');
        buf.push_str(&u.query);
    }
    if !u.fragment.is_empty() {
        buf.push('#');
        buf.push_str(&escape(&u.fragment, "?"));
    }
    buf
}

/// Registers `urlParse` and `urlJoin`.
pub fn register(m: &mut FuncMap) {
    m.insert("urlParse", Signature::fixed(&[ArgType::String]), |_, a| {
        let u = parse(a[0].as_str().unwrap_or_default())
            .map_err(|e| format!("unable to parse url: {e}"))?;
        let mut d = BTreeMap::new();
        let mut put = |k: &str, v: &str| {
            d.insert(k.to_string(), Value::from(v));
        };
        put("scheme", &u.scheme);
        put("host", &u.host);
        put("hostname", &hostname(&u.host));
        put("path", &u.path);
        put("query", &u.query);
        put("opaque", &u.opaque);
        put("fragment", &u.fragment);
        put("userinfo", u.user.as_deref().unwrap_or(""));
        Ok(Value::map(d))
    });
    m.insert("urlJoin", Signature::fixed(&[ArgType::Map]), |_, a| {
        let Value::Map(d) = &a[0] else {
            return Ok(Value::from(""));
        };
        let get = |k: &str| -> Result<String, String> {
            match d.get(k) {
                None => Ok(String::new()),
                Some(Value::Str(s)) => Ok(s.to_string()),
                Some(other) => Err(format!(
                    "unable to parse {k} key, must be of type string, but {} found",
                    if other.is_nil() {
                        "invalid"
                    } else {
                        other.kind_name()
                    }
                )),
            }
        };
        let user = get("userinfo")?;
        let u = Url {
            scheme: get("scheme")?,
            host: get("host")?,
            path: get("path")?,
            query: get("query")?,
            opaque: get("opaque")?,
            fragment: get("fragment")?,
            user: (!user.is_empty()).then_some(user),
        };
        Ok(Value::from(join(&u)))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_join() {
        let u = parse("proto://auth@host:80/path?query#fragment").unwrap_or_default();
        assert_eq!(
            (u.host.as_str(), u.path.as_str(), hostname(&u.host).as_str()),
            ("host:80", "/path", "host")
        );
        assert_eq!(u.user.as_deref(), Some("auth"));
        assert_eq!(join(&u), "proto://auth@host:80/path?query#fragment");
        let o = parse("mailto:a@b").unwrap_or_default();
        assert_eq!(o.opaque, "a@b");
        assert!(parse(":x").is_err());
    }
}
