//! Sprig's `semver` and `semverCompare` on Masterminds/semver v3.3.0:
//! loose version parsing (`v` prefix, missing minor/patch), `*Version`
//! methods, and constraint checking with that library's operators,
//! wildcards, hyphen ranges, `,`/space AND and `||` OR, and its rule that
//! a pre-release version only matches constraints that carry a pre-release.

use std::cmp::Ordering;
use std::fmt;
use std::sync::{Arc, LazyLock};

use regex::Regex;

use super::{ArgType, FuncMap, Signature};
use crate::gotmpl::value::{Object, Value};

const CV: &str = r"v?([0-9|x|X|\*]+)(\.[0-9|x|X|\*]+)?(\.[0-9|x|X|\*]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?";
const OPS: &str = r"=||!=|>|<|>=|=>|<=|=<|~|~>|\^";

fn re(p: &str) -> Regex {
    // ASCII classes, as Go's regexp has them (`\s` is [\t\n\f\r ]); they
    // also compile far faster than Unicode ones, which matters per render.
    // The patterns are constants; an invalid one would be a bug caught by tests.
    Regex::new(&format!("(?-u){p}"))
        .unwrap_or_else(|_| Regex::new("$^").unwrap_or_else(|_| unreachable!()))
}

static VERSION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^v?([0-9]+)(\.[0-9]+)?(\.[0-9]+)?(-([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?(\+([0-9A-Za-z\-]+(\.[0-9A-Za-z\-]+)*))?$",
    )
});
/// Masterminds/semver v3.4.0's `semVerRegex` (no leading zeros), tried
/// before the loose one by [`Version::parse_v3_4`].
static STRICT_VERSION: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"^v?(0|[1-9][0-9]*)(?:\.(0|[1-9][0-9]*))?(?:\.(0|[1-9][0-9]*))?",
        r"(?:-((?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?",
        r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
    ))
});
static CONSTRAINT: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"^\s*({OPS})\s*({CV})\s*$")));
static RANGE: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"\s*({CV})\s+-\s+({CV})\s*")));
static FIND: LazyLock<Regex> = LazyLock::new(|| re(&format!(r"({OPS})\s*({CV})")));
static VALID: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"^(\s*({OPS})\s*({CV})\s*)((?:\s+|,\s*)({OPS})\s*({CV})\s*)*$"
    ))
});

/// A parsed `*semver.Version`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    metadata: String,
    original: String,
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.metadata.is_empty() {
            write!(f, "+{}", self.metadata)?;
        }
        Ok(())
    }
}

impl Version {
    /// `semver.NewVersion`.
    pub fn parse(v: &str) -> Result<Version, String> {
        let Some(c) = VERSION.captures(v) else {
            return Err("Invalid Semantic Version".into());
        };
        let seg = |i: usize| -> Result<u64, String> {
            match c.get(i) {
                None => Ok(0),
                Some(m) => m
                    .as_str()
                    .trim_start_matches('.')
                    .parse()
                    .map_err(|_| {
                        format!(
                            "Error parsing version segment: strconv.ParseUint: parsing {}: value out of range",
                            crate::gotmpl::fmt::quote(m.as_str().trim_start_matches('.'))
                        )
                    }),
            }
        };
        let pre = c.get(5).map_or("", |m| m.as_str()).to_string();
        for part in pre.split('.') {
            if part.len() > 1 && part.starts_with('0') && part.bytes().all(|b| b.is_ascii_digit()) {
                return Err("Version segment starts with 0".into());
            }
        }
        Ok(Version {
            major: seg(1)?,
            minor: seg(2)?,
            patch: seg(3)?,
            pre,
            metadata: c.get(8).map_or("", |m| m.as_str()).to_string(),
            original: v.to_string(),
        })
    }

    /// `semver.NewVersion` of Masterminds/semver v3.4.0 (helm 4's): the
    /// strict pattern first (a leading zero in a segment is refused); on a
    /// miss, the loose one only to say why (`validateVersion`), in that
    /// release's lower-case wording.
    pub fn parse_v3_4(v: &str) -> Result<Version, String> {
        let segment = |text: &str| -> Result<u64, String> {
            text.parse().map_err(|_| {
                format!(
                    "error parsing version segment: strconv.ParseUint: parsing {}: value out of range",
                    crate::gotmpl::fmt::quote(text)
                )
            })
        };
        let starts_zero = |text: &str| text.len() > 1 && text.starts_with('0');
        let Some(c) = STRICT_VERSION.captures(v) else {
            let Some(c) = VERSION.captures(v) else {
                return Err("invalid semantic version".into());
            };
            for i in 1..=3 {
                if let Some(m) = c.get(i) {
                    let text = m.as_str().trim_start_matches('.');
                    if starts_zero(text) {
                        return Err("version segment starts with 0".into());
                    }
                    segment(text)?;
                }
            }
            let pre = c.get(5).map_or("", |m| m.as_str());
            if pre
                .split('.')
                .any(|p| starts_zero(p) && p.bytes().all(|b| b.is_ascii_digit()))
            {
                return Err("version segment starts with 0".into());
            }
            return Err("invalid semantic version".into());
        };
        let seg = |i: usize| c.get(i).map_or(Ok(0), |m| segment(m.as_str()));
        Ok(Version {
            major: seg(1)?,
            minor: seg(2)?,
            patch: seg(3)?,
            pre: c.get(4).map_or("", |m| m.as_str()).to_string(),
            metadata: c.get(5).map_or("", |m| m.as_str()).to_string(),
            original: v.to_string(),
        })
    }

    /// `Version.Compare`.
    pub fn compare(&self, o: &Version) -> Ordering {
        let base = (self.major, self.minor, self.patch).cmp(&(o.major, o.minor, o.patch));
        if base != Ordering::Equal {
            return base;
        }
        match (self.pre.is_empty(), o.pre.is_empty()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => compare_pre(&self.pre, &o.pre),
        }
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    let (pa, pb): (Vec<&str>, Vec<&str>) = (a.split('.').collect(), b.split('.').collect());
    for i in 0..pa.len().max(pb.len()) {
        let (s, o) = (
            pa.get(i).copied().unwrap_or(""),
            pb.get(i).copied().unwrap_or(""),
        );
        let d = compare_pre_part(s, o);
        if d != Ordering::Equal {
            return d;
        }
    }
    Ordering::Equal
}

fn compare_pre_part(s: &str, o: &str) -> Ordering {
    if s == o {
        return Ordering::Equal;
    }
    if s.is_empty() {
        return Ordering::Less;
    }
    if o.is_empty() {
        return Ordering::Greater;
    }
    match (s.parse::<u64>(), o.parse::<u64>()) {
        (Ok(x), Ok(y)) => x.cmp(&y),
        (Err(_), Err(_)) => {
            if s > o {
                Ordering::Greater
            } else {
                Ordering::Less
            }
        }
        (Ok(_), Err(_)) => Ordering::Less,
        (Err(_), Ok(_)) => Ordering::Greater,
    }
}

impl Object for Version {
    fn type_name(&self) -> String {
        "*semver.Version".into()
    }

    fn has_method(&self, name: &str) -> bool {
        matches!(
            name,
            "Major"
                | "Minor"
                | "Patch"
                | "Prerelease"
                | "Metadata"
                | "Original"
                | "String"
                | "Compare"
                | "LessThan"
                | "GreaterThan"
                | "Equal"
        )
    }

    fn call_method(&self, name: &str, args: &[Value]) -> Result<Value, String> {
        let other = || -> Result<Version, String> {
            match args.first() {
                Some(Value::Object(o)) => o
                    .to_go_string()
                    .and_then(|s| Version::parse(&s).ok())
                    .ok_or_else(|| "wrong argument type".into()),
                _ => Err("wrong argument type".into()),
            }
        };
        Ok(match name {
            "Major" => Value::Int64(self.major as i64),
            "Minor" => Value::Int64(self.minor as i64),
            "Patch" => Value::Int64(self.patch as i64),
            "Prerelease" => Value::from(self.pre.clone()),
            "Metadata" => Value::from(self.metadata.clone()),
            "Original" => Value::from(self.original.clone()),
            "String" => Value::from(self.to_string()),
            "Compare" => Value::Int(self.compare(&other()?) as i64),
            "LessThan" => Value::Bool(self.compare(&other()?) == Ordering::Less),
            "GreaterThan" => Value::Bool(self.compare(&other()?) == Ordering::Greater),
            "Equal" => Value::Bool(self.compare(&other()?) == Ordering::Equal),
            _ => return Err(format!("can't call method {name}")),
        })
    }

    fn to_go_string(&self) -> Option<String> {
        Some(self.to_string())
    }

    fn marshal(&self) -> Option<Value> {
        Some(Value::from(self.to_string()))
    }
}

struct Constraint {
    op: String,
    con: Version,
    minor_dirty: bool,
    patch_dirty: bool,
    dirty: bool,
}

fn is_x(s: &str) -> bool {
    matches!(s, "x" | "*" | "X")
}

fn parse_constraint(c: &str) -> Result<Constraint, String> {
    let Some(m) = CONSTRAINT.captures(c) else {
        return Err(format!("improper constraint: {c}"));
    };
    let g = |i: usize| m.get(i).map_or("", |x| x.as_str());
    let (mut minor_dirty, mut patch_dirty, mut dirty) = (false, false, false);
    let ver = if is_x(g(3)) || g(3).is_empty() {
        dirty = true;
        format!("0.0.0{}", g(6))
    } else if is_x(g(4).trim_start_matches('.')) || g(4).is_empty() {
        minor_dirty = true;
        dirty = true;
        format!("{}.0.0{}", g(3), g(6))
    } else if is_x(g(5).trim_start_matches('.')) || g(5).is_empty() {
        dirty = true;
        patch_dirty = true;
        format!("{}{}.0{}", g(3), g(4), g(6))
    } else {
        g(2).to_string()
    };
    let con = Version::parse(&ver).map_err(|_| "constraint Parser Error".to_string())?;
    Ok(Constraint {
        op: g(1).to_string(),
        con,
        minor_dirty,
        patch_dirty,
        dirty,
    })
}

impl Constraint {
    fn check(&self, v: &Version) -> bool {
        let c = &self.con;
        // Every operator rejects a pre-release against a release constraint.
        if !v.pre.is_empty() && c.pre.is_empty() {
            return false;
        }
        let cmp = v.compare(c);
        match self.op.as_str() {
            "" | "=" => {
                if self.dirty {
                    self.tilde(v)
                } else {
                    cmp == Ordering::Equal
                }
            }
            "!=" => self.not_equal(v),
            ">" => {
                if !self.dirty {
                    cmp == Ordering::Greater
                } else if v.major != c.major {
                    v.major > c.major
                } else if self.minor_dirty {
                    false
                } else if self.patch_dirty {
                    v.minor > c.minor
                } else {
                    cmp == Ordering::Greater
                }
            }
            "<" => cmp == Ordering::Less,
            ">=" | "=>" => cmp != Ordering::Less,
            "<=" | "=<" => {
                if !self.dirty {
                    return cmp != Ordering::Greater;
                }
                !(v.major > c.major || v.major == c.major && v.minor > c.minor && !self.minor_dirty)
            }
            "~" | "~>" => self.tilde(v),
            "^" => self.caret(v),
            _ => false,
        }
    }

    fn tilde(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major == 0 && c.minor == 0 && c.patch == 0 && !self.minor_dirty && !self.patch_dirty {
            return true;
        }
        v.major == c.major && (v.minor == c.minor || self.minor_dirty)
    }

    fn caret(&self, v: &Version) -> bool {
        let c = &self.con;
        if v.compare(c) == Ordering::Less {
            return false;
        }
        if c.major > 0 || self.minor_dirty {
            return v.major == c.major;
        }
        if v.major > 0 {
            return false;
        }
        if c.minor > 0 || self.patch_dirty {
            return v.minor == c.minor;
        }
        if v.minor > 0 {
            return false;
        }
        c.patch == v.patch
    }

    fn not_equal(&self, v: &Version) -> bool {
        let c = &self.con;
        if self.dirty {
            if c.major != v.major {
                return true;
            }
            if c.minor != v.minor && !self.minor_dirty {
                return true;
            } else if self.minor_dirty {
                return false;
            } else if c.patch != v.patch && !self.patch_dirty {
                return true;
            } else if self.patch_dirty {
                if !v.pre.is_empty() || !c.pre.is_empty() {
                    return compare_pre(&v.pre, &c.pre) != Ordering::Equal;
                }
                return false;
            }
        }
        v.compare(c) != Ordering::Equal
    }
}

type Constraints = Vec<Vec<Constraint>>;

/// `semver.NewConstraint`.
fn parse_constraints(constraint: &str) -> Result<Constraints, String> {
    let mut text = constraint.to_string();
    for m in RANGE.captures_iter(constraint) {
        let (Some(all), Some(a), Some(b)) = (m.get(0), m.get(1), m.get(11)) else {
            continue;
        };
        text = text.replacen(
            all.as_str(),
            &format!(">= {}, <= {} ", a.as_str(), b.as_str()),
            1,
        );
    }
    let mut groups = Vec::new();
    for or in text.split("||") {
        if !VALID.is_match(or) {
            return Err(format!("improper constraint: {or}"));
        }
        let found: Vec<&str> = FIND.find_iter(or).map(|m| m.as_str()).collect();
        let parts = if found.is_empty() { vec![or] } else { found };
        let mut group = Vec::new();
        for p in parts {
            group.push(parse_constraint(p)?);
        }
        groups.push(group);
    }
    Ok(groups)
}

/// `semver.NewConstraint` + `Check`.
pub fn constraint_check(constraint: &str, version: &Version) -> Result<bool, String> {
    let groups = parse_constraints(constraint)?;
    Ok(groups.iter().any(|g| g.iter().all(|c| c.check(version))))
}

/// Registers `semver` and `semverCompare` (Masterminds/semver v3.3.0).
pub fn register(m: &mut FuncMap) {
    m.insert("semver", Signature::fixed(&[ArgType::String]), |_, a| {
        let v = Version::parse(a[0].as_str().unwrap_or_default())?;
        Ok(Value::Object(Arc::new(v)))
    });
    m.insert(
        "semverCompare",
        Signature::fixed(&[ArgType::String, ArgType::String]),
        |_, a| semver_compare(a, Version::parse),
    );
}

/// Registers `semver` and `semverCompare` over Masterminds/semver v3.4.0's
/// version parsing (helm 4's build), replacing [`register`]'s.
pub fn register_v3_4(m: &mut FuncMap) {
    m.insert("semver", Signature::fixed(&[ArgType::String]), |_, a| {
        let v = Version::parse_v3_4(a[0].as_str().unwrap_or_default())?;
        Ok(Value::Object(Arc::new(v)))
    });
    m.insert(
        "semverCompare",
        Signature::fixed(&[ArgType::String, ArgType::String]),
        |_, a| semver_compare(a, Version::parse_v3_4),
    );
}

/// sprig's `semverCompare`: the constraint first, then the version.
fn semver_compare(
    a: &[Value],
    parse: fn(&str) -> Result<Version, String>,
) -> Result<Value, String> {
    let (c, v) = (
        a[0].as_str().unwrap_or_default(),
        a[1].as_str().unwrap_or_default(),
    );
    let groups = parse_constraints(c)?;
    let v = parse(v)?;
    Ok(Value::Bool(
        groups.iter().any(|g| g.iter().all(|c| c.check(&v))),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v3_4_words_its_errors_in_lower_case_and_refuses_leading_zeros() {
        assert_eq!(
            Version::parse("badVersion"),
            Err("Invalid Semantic Version".into())
        );
        assert_eq!(
            Version::parse_v3_4("badVersion"),
            Err("invalid semantic version".into())
        );
        assert_eq!(
            Version::parse_v3_4("01.2.3"),
            Err("version segment starts with 0".into())
        );
        assert_eq!(
            Version::parse_v3_4("1.2.3-01"),
            Err("version segment starts with 0".into())
        );
        assert_eq!(
            Version::parse_v3_4("é1.2"),
            Err("invalid semantic version".into())
        );
        assert!(Version::parse("01.2.3").is_ok());
        let v = Version::parse_v3_4("v1.2.3-rc.1+b.2").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.to_string(), "1.2.3-rc.1+b.2");
        assert_eq!(
            Version::parse_v3_4("1.2").map(|v| v.to_string()),
            Ok("1.2.0".into())
        );
    }

    fn check(c: &str, v: &str) -> bool {
        let v = Version::parse(v).unwrap_or_else(|e| panic!("{e}"));
        constraint_check(c, &v).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn versions_parse_loosely() {
        let v = Version::parse("v1.2").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(v.to_string(), "1.2.0");
        assert!(Version::parse("badVersion").is_err());
        assert!(Version::parse("1.2.3-01").is_err());
        let a = Version::parse("1.2.3-beta.2").unwrap_or_else(|e| panic!("{e}"));
        let b = Version::parse("1.2.3-beta.11").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(a.compare(&b), Ordering::Less);
    }

    #[test]
    fn constraints() {
        assert!(check("^1.2.0", "1.4.0"));
        assert!(!check("~1.2.0", "1.3.0"));
        assert!(check(">=1.21-0", "v1.32.0"));
        assert!(!check("<1.19", "1.32.0"));
        assert!(!check(">=1.0.0", "1.2.0-beta"));
        assert!(check("1.2 - 1.4.5", "1.3.0"));
        assert!(check(">1.0 <2.0 || =3.0.0", "3.0.0"));
        assert!(check("1.2.x", "1.2.9"));
        assert!(check("!=1.2.3", "1.2.4"));
        assert!(check("*", "5.0.0"));
        assert!(!check("^0.2.3", "0.3.0"));
        let v = Version::parse("1.0.0").unwrap_or_else(|e| panic!("{e}"));
        assert!(constraint_check("badConstraint", &v).is_err());
    }
}
