//! The container image reference grammar, as distribution/reference's
//! `Parse` checks it (reference.go, regexp.go) with go-digest's digest
//! validation: the parts a set-image argument writes into an `images:`
//! entry (a repository name, a tag, a digest) are checked one by one and
//! refused with the reason. It checks text only; it never normalises
//! (`nginx` stays `nginx`, not `docker.io/library/nginx`).
//!
//! ```text
//! name      := [domain '/'] path-component ['/' path-component]*
//! domain    := host [':' port]           host := domain-name | '[' ipv6 ']'
//! component := [a-z0-9]+ ([._] | '__' | '-'+ [a-z0-9]+)*
//! tag       := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
//! digest    := sha256:<64 hex> | sha384:<96 hex> | sha512:<128 hex>  (lowercase)
//! ```

/// distribution/reference RepositoryNameTotalLengthMax: the path's limit
/// (the domain does not count).
pub const NAME_PATH_MAX: usize = 255;

/// reference regexp.go `tag`: one word character and up to 127 more.
pub const TAG_MAX: usize = 128;

/// Why a part of a reference is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RefError {
    /// reference.go ErrNameEmpty.
    #[error("the repository name is empty")]
    EmptyName,
    /// reference.go ErrNameContainsUppercase.
    #[error("repository name `{0}` must be lowercase")]
    Uppercase(String),
    /// reference.go ErrNameTooLong.
    #[error("repository name `{0}` is longer than {NAME_PATH_MAX} characters")]
    NameTooLong(String),
    /// A character the part cannot have (whitespace, a line break, `#`, a
    /// `:` in a tag…).
    #[error("{what} `{}` contains {}", .text.escape_debug(), describe(*.ch))]
    Character {
        /// `repository name`, `tag` or `digest`.
        what: &'static str,
        /// The part.
        text: String,
        /// The first such character.
        ch: char,
    },
    /// An empty component: `a//b`, `/a`, `a/`.
    #[error("repository name `{0}` has an empty path component")]
    EmptyComponent(String),
    /// A path component outside `[a-z0-9]+` joined by `.`, `_`, `__` or dashes.
    #[error("`{component}` in `{name}` is not a path component (lowercase letters and digits, joined by one `.`, `_`, `__` or dashes)")]
    Component {
        /// The name.
        name: String,
        /// The component.
        component: String,
    },
    /// The part before the first `/` looks like a registry and is not one.
    #[error("`{domain}` in `{name}` is not a registry host[:port]")]
    Domain {
        /// The name.
        name: String,
        /// The domain.
        domain: String,
    },
    /// reference.go ErrTagInvalidFormat.
    #[error("tag `{}` is not 1 to {TAG_MAX} letters, digits, `_`, `.` or `-` starting with a letter, digit or `_`", .0.escape_debug())]
    Tag(String),
    /// go-digest ErrDigestInvalidFormat.
    #[error("digest `{}` is not ALGORITHM:HEX (as sha256: and 64 hex digits)", .0.escape_debug())]
    DigestFormat(String),
    /// go-digest ErrDigestUnsupported.
    #[error("digest `{0}`: unsupported algorithm (sha256, sha384 or sha512)")]
    DigestAlgorithm(String),
    /// go-digest ErrDigestInvalidLength, or upper-case hex.
    #[error("digest `{text}`: {algorithm} takes {want} lowercase hex digits")]
    DigestHex {
        /// The digest.
        text: String,
        /// Its algorithm.
        algorithm: String,
        /// The hex length it takes.
        want: usize,
    },
}

fn describe(c: char) -> String {
    match c {
        ' ' => "a space".into(),
        '\n' => "a line break".into(),
        c if c.is_control() || c.is_whitespace() => format!("U+{:04X}", u32::from(c)),
        c => format!("`{c}`"),
    }
}

/// Characters that appear somewhere in a valid name or digest (regexp.go).
fn reference_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '[' | ']' | '@' | '+')
}

/// The first character of `text` that `allowed` refuses, as the error.
fn odd_char(what: &'static str, text: &str, allowed: fn(char) -> bool) -> Result<(), RefError> {
    match text.chars().find(|c| !allowed(*c)) {
        Some(ch) => Err(RefError::Character {
            what,
            text: text.to_string(),
            ch,
        }),
        None => Ok(()),
    }
}

fn tag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')
}

/// Checks a repository name (`nginx`, `ghcr.io/acme/web`,
/// `localhost:5000/web`): reference.go Parse's name part.
pub fn check_name(name: &str) -> Result<(), RefError> {
    if name.is_empty() {
        return Err(RefError::EmptyName);
    }
    odd_char("repository name", name, reference_char)?;
    if let Some(path) = matched_path(name) {
        if path.chars().count() > NAME_PATH_MAX {
            return Err(RefError::NameTooLong(name.to_string()));
        }
        return Ok(());
    }
    if matched_path(&name.to_ascii_lowercase()).is_some() {
        return Err(RefError::Uppercase(name.to_string()));
    }
    Err(name_problem(name))
}

/// The path of a matching name: regexp.go anchoredNameRegexp prefers a
/// domain when the first component is one and the rest is a path.
fn matched_path(name: &str) -> Option<&str> {
    if let Some((domain, rest)) = name.split_once('/') {
        if is_domain(domain) && is_remote_name(rest) {
            return Some(rest);
        }
    }
    is_remote_name(name).then_some(name)
}

/// Why a name that does not match fails, for the message.
fn name_problem(name: &str) -> RefError {
    let (domain, path) = match name.split_once('/') {
        // normalize.go splitDockerDomain: a first part with `.` or `:`,
        // `localhost`, or upper case is meant as a registry.
        Some((d, rest))
            if d.contains(['.', ':', '[']) || d == "localhost" || d.to_lowercase() != d =>
        {
            (Some(d), rest)
        }
        _ => (None, name),
    };
    if let Some(d) = domain.filter(|d| !is_domain(d)) {
        return RefError::Domain {
            name: name.to_string(),
            domain: d.to_string(),
        };
    }
    match path.split('/').find(|c| !is_component(c)) {
        Some("") | None => RefError::EmptyComponent(name.to_string()),
        Some(c) => RefError::Component {
            name: name.to_string(),
            component: c.to_string(),
        },
    }
}

/// regexp.go remoteName: components joined by `/`.
fn is_remote_name(s: &str) -> bool {
    s.split('/').all(is_component)
}

/// regexp.go pathComponent: `[a-z0-9]+` runs joined by `.`, `_`, `__`
/// or one or more `-`.
fn is_component(s: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    if !s.starts_with(alnum) || !s.ends_with(alnum) {
        return false;
    }
    // What lies between the alphanumeric characters: nothing, or one
    // separator.
    s.split(alnum).all(|sep| {
        sep.is_empty() || matches!(sep, "." | "_" | "__") || sep.chars().all(|c| c == '-')
    })
}

/// regexp.go domainAndPort: a host (DNS name, IPv4, `[ipv6]`) and an
/// optional `:port`.
fn is_domain(s: &str) -> bool {
    let (host_ok, port) = match s.strip_prefix('[') {
        Some(v6) => {
            let Some((addr, after)) = v6.split_once(']') else {
                return false;
            };
            let port = match after {
                "" => None,
                p => match p.strip_prefix(':') {
                    Some(p) => Some(p),
                    None => return false,
                },
            };
            let hex = |c: char| c.is_ascii_hexdigit() || c == ':';
            (!addr.is_empty() && addr.chars().all(hex), port)
        }
        None => {
            let (host, port) = match s.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (s, None),
            };
            (host.split('.').all(is_domain_component), port)
        }
    };
    let port_ok = port.is_none_or(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    host_ok && port_ok
}

/// regexp.go domainNameComponent: letters, digits and inner dashes.
fn is_domain_component(s: &str) -> bool {
    !s.is_empty()
        && s.starts_with(|c: char| c.is_ascii_alphanumeric())
        && s.ends_with(|c: char| c.is_ascii_alphanumeric())
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Checks a tag: regexp.go `tag`.
pub fn check_tag(tag: &str) -> Result<(), RefError> {
    odd_char("tag", tag, tag_char)?;
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    if tag.starts_with(word) && tag.chars().count() <= TAG_MAX {
        return Ok(());
    }
    Err(RefError::Tag(tag.to_string()))
}

/// Checks a digest: regexp.go digestPat, then go-digest Digest.Validate
/// for the algorithms it knows (lowercase hex of the hash's length).
pub fn check_digest(digest: &str) -> Result<(), RefError> {
    let format = || RefError::DigestFormat(digest.to_string());
    let (algorithm, hex) = digest.split_once(':').ok_or_else(format)?;
    let algorithm_ok = algorithm.split(['-', '_', '+', '.']).all(|c| {
        c.starts_with(|c: char| c.is_ascii_alphabetic())
            && c.chars().all(|c| c.is_ascii_alphanumeric())
    });
    if !algorithm_ok || hex.chars().count() < 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        odd_char("digest", digest, reference_char)?;
        return Err(format());
    }
    let want = match algorithm {
        "sha256" => 64,
        "sha384" => 96,
        "sha512" => 128,
        _ => return Err(RefError::DigestAlgorithm(digest.to_string())),
    };
    if hex.len() != want || hex.chars().any(|c| c.is_ascii_uppercase()) {
        return Err(RefError::DigestHex {
            text: digest.to_string(),
            algorithm: algorithm.to_string(),
            want,
        });
    }
    Ok(())
}
