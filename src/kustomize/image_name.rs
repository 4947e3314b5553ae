//! Whether an image reference is the one an `images:` entry names.
//!
//! kustomize's `IsImageMatched` (api/filters/imagetag/updater.go, through
//! image.IsImageMatched) compiles
//! `^NAME(:[a-zA-Z0-9_.{}-]*)?(@sha256:[a-zA-Z0-9_.{}-]*)?$` with the
//! configured name as a regular expression. Nearly every name is a plain
//! image name (`registry.example.com/team/app`), whose only metacharacter
//! is `.`; such a name matches exactly as many characters as it has, so
//! the match is decided without a regular expression. A compiled pattern
//! held about 40 KB (its one-pass DFA), a fifth of a 500-app render's
//! heap in the pattern cache; names with other metacharacters still go
//! through `regex`, as kustomize's do.

use regex::Regex;

/// A configured image name, ready to test references against.
#[derive(Debug, Clone)]
pub enum ImageName {
    /// A name of ASCII letters, digits and `_-/:@.`, where `.` matches any
    /// one character but a newline (as in the regular expression) and
    /// every other character itself.
    Plain(String),
    /// Any other name, as kustomize compiles it.
    Pattern(Regex),
}

impl ImageName {
    /// The matcher for configured name `name`, or the error `regex` gives
    /// for kustomize's pattern of it.
    pub fn new(name: &str) -> Result<ImageName, regex::Error> {
        if name.bytes().all(plain_byte) {
            return Ok(ImageName::Plain(name.to_string()));
        }
        super::pattern::compile(&pattern(name)).map(ImageName::Pattern)
    }

    /// Whether `value` (a container's `image`) is an image of this name,
    /// with or without a tag and a digest.
    pub fn is_match(&self, value: &str) -> bool {
        match self {
            ImageName::Plain(name) => plain_match(name, value),
            ImageName::Pattern(re) => re.is_match(value),
        }
    }
}

/// kustomize's pattern for configured name `name`.
fn pattern(name: &str) -> String {
    format!("^{name}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$")
}

/// Bytes that stand for themselves in a regular expression, and `.`.
fn plain_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"_-/:@.".contains(&b)
}

/// The pattern's match for a plain name: the name's characters (each `.`
/// any character but a newline), then an optional `:` and tag characters,
/// then an optional `@sha256:` and digest characters, and nothing after.
/// Neither group's characters include `:` or `@`, so each group either
/// must be taken or cannot be, and one pass decides.
fn plain_match(name: &str, value: &str) -> bool {
    let mut chars = value.chars();
    for n in name.chars() {
        match chars.next() {
            Some(c) if n == '.' && c != '\n' => {}
            Some(c) if c == n => {}
            _ => return false,
        }
    }
    let mut rest = chars.as_str();
    if let Some(tag) = rest.strip_prefix(':') {
        rest = tag.trim_start_matches(tag_char);
    }
    if let Some(digest) = rest.strip_prefix("@sha256:") {
        rest = digest.trim_start_matches(tag_char);
    }
    rest.is_empty()
}

/// `[a-zA-Z0-9_.{}-]`.
fn tag_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "_.{}-".contains(c)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_names_match_as_kustomize_matches() {
        let n = ImageName::new("registry.example.com/team/app").unwrap();
        assert!(matches!(n, ImageName::Plain(_)));
        assert!(n.is_match("registry.example.com/team/app"));
        assert!(n.is_match("registry.example.com/team/app:1.2"));
        assert!(n.is_match("registry.example.com/team/app@sha256:abc"));
        assert!(n.is_match("registry.example.com/team/app:v1@sha256:abc"));
        // `.` is any character.
        assert!(n.is_match("registryXexample.com/team/app"));
        assert!(!n.is_match("registry.example.com/team/app2"));
        assert!(!n.is_match("registry.example.com/team/app:1.2:3"));
        assert!(!n.is_match("registry.example.com/team/ap"));
    }

    #[test]
    fn other_names_are_regular_expressions() {
        let n = ImageName::new("nginx|redis").unwrap();
        assert!(matches!(n, ImageName::Pattern(_)));
        assert!(n.is_match("redis:7"));
        assert!(ImageName::new("(").is_err());
    }

    proptest! {
        /// The plain matcher gives the compiled pattern's answer, for
        /// references made from the name with characters swapped (for a
        /// newline, a non-ASCII letter, another letter) and a suffix.
        #[test]
        fn plain_match_is_the_patterns(
            name in "[a.:@/_-]{0,5}",
            swaps in proptest::collection::vec(0..8u8, 5),
            suffix in "(:[a.{}:-]{0,2})?(@sha256:[a.:]{0,2})?[a:@\n]{0,1}",
        ) {
            let value: String = name
                .chars()
                .zip(&swaps)
                .map(|(c, s)| match s {
                    1 => '\n',
                    2 => '\u{e9}',
                    3 => 'b',
                    _ => c,
                })
                .chain(suffix.chars())
                .collect();
            let re = Regex::new(&pattern(&name)).unwrap();
            prop_assert_eq!(plain_match(&name, &value), re.is_match(&value));
        }
    }
}
