//! The promotion parts of an environment file, decoded strictly on their
//! own: an app's `pins:` (helm value paths and declared file pins) and the
//! environment's `promotion:` block (policies, message template). It knows
//! the shape of these keys only; what a pin means lives in `promote/`.

use std::path::Path;

use super::Error;
use crate::yaml::{Node, Value};

/// One declared pin of an app.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PinDecl {
    /// A helm value path (`image.tag`), read where the environment sets it.
    Value(String),
    /// A value in a file: `{file: "{dir}/version.yaml", path: a.b.c}`;
    /// `{dir}` is the app's directory in that environment.
    File {
        /// The file, relative to the repository root, with `{dir}`.
        file: String,
        /// The dotted path inside it.
        path: String,
    },
}

/// `promotion:` of the environment promoted into.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Promotion {
    /// `block:` globs over `app` or `app/pin` never promoted automatically.
    pub block: Vec<String>,
    /// `commitMessage:` minijinja template for promotion commits.
    pub commit_message: Option<String>,
    /// `soak:` how long FROM must have carried the pins, in seconds.
    pub soak: Option<u64>,
    /// `freeze:` windows in which nothing is promoted into this environment.
    pub freeze: Vec<super::freeze::Freeze>,
    /// `requires:` roles that must have approved FROM's change.
    pub requires: Vec<String>,
    /// `after:` environments that must already carry the version, with
    /// each name's line.
    pub after: Vec<(String, u32)>,
}

/// An app's `promotion:`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppPromotion {
    /// `copy:` globs, relative to the app's directory in each environment:
    /// the files promotion copies whole from FROM's directory to TO's.
    pub copy: Vec<String>,
}

fn err(file: &Path, at: &Node, message: impl Into<String>) -> Error {
    Error::Config {
        path: file.to_path_buf(),
        line: at.pos.line,
        message: message.into(),
    }
}

fn string(file: &Path, n: &Node) -> Result<String, Error> {
    match n.as_scalar() {
        Some(s) if !n.is_null() && !s.text.is_empty() => Ok(s.text.clone()),
        _ => Err(err(file, n, "expected a non-empty string")),
    }
}

/// A pin's dotted path, checked as set-value checks its PATH (an empty
/// segment would otherwise be read as a neighbouring path).
fn value_path(file: &Path, n: &Node) -> Result<String, Error> {
    let text = string(file, n)?;
    crate::yaml::edit::try_parse_path(&text)
        .map_err(|e| err(file, n, format!("pin path `{}`: {e}", text.escape_debug())))?;
    Ok(text)
}

/// A file pin's path: a dotted path that may select list items as the
/// diff prints them (`containers[name=web].image`).
fn selector_path(file: &Path, n: &Node) -> Result<String, Error> {
    let text = string(file, n)?;
    crate::yaml::selector::parse(&text)
        .map_err(|e| err(file, n, format!("pin path `{}`: {e}", text.escape_debug())))?;
    Ok(text)
}

fn entries<'n>(
    file: &Path,
    n: &'n Node,
    known: &[&str],
) -> Result<Vec<(&'n str, &'n Node)>, Error> {
    let Value::Map(m) = &n.value else {
        return Err(err(
            file,
            n,
            format!("expected a mapping, found a {}", n.kind_name()),
        ));
    };
    let mut out = Vec::new();
    for (k, v) in m {
        let key = k.key_text().unwrap_or_default();
        if !known.contains(&key) {
            return Err(err(
                file,
                k,
                format!(
                    "unknown key `{key}` (expected one of: {})",
                    known.join(", ")
                ),
            ));
        }
        out.push((key, v));
    }
    Ok(out)
}

/// Decodes an app's `pins:` list.
pub fn decode_pins(file: &Path, n: &Node) -> Result<Vec<PinDecl>, Error> {
    let items = n
        .as_seq()
        .ok_or_else(|| err(file, n, "`pins` must be a list"))?;
    items
        .iter()
        .map(|item| {
            if item.as_scalar().is_some() {
                return Ok(PinDecl::Value(value_path(file, item)?));
            }
            let (mut f, mut p) = (None, None);
            for (k, v) in entries(file, item, &["file", "path"])? {
                match k {
                    "file" => f = Some(string(file, v)?),
                    _ => p = Some(selector_path(file, v)?),
                }
            }
            match (f, p) {
                (Some(file), Some(path)) => Ok(PinDecl::File { file, path }),
                _ => Err(err(file, item, "a file pin needs `file` and `path`")),
            }
        })
        .collect()
}

/// Decodes an app's `promotion:`. A copy glob stays inside the app's
/// directory: no absolute path, no `..`.
pub fn decode_app_promotion(file: &Path, n: &Node) -> Result<AppPromotion, Error> {
    let mut p = AppPromotion::default();
    for (_, v) in entries(file, n, &["copy"])? {
        let items = v
            .as_seq()
            .ok_or_else(|| err(file, v, "`copy` must be a list of globs"))?;
        for x in items {
            let glob = string(file, x)?;
            let escapes = glob.starts_with('/') || glob.split(['/', '\\']).any(|part| part == "..");
            if escapes {
                return Err(err(
                    file,
                    x,
                    format!("copy glob `{glob}` leaves the app's directory"),
                ));
            }
            if let Err(e) = globset::Glob::new(&glob) {
                return Err(err(file, x, format!("copy glob `{glob}`: {e}")));
            }
            p.copy.push(glob);
        }
    }
    Ok(p)
}

/// `24h`, `90m`, `2d`, `1h30m`, `45s` as seconds (a positive sum of
/// whole numbers with units d, h, m, s).
fn duration(text: &str) -> Option<u64> {
    let (mut total, mut digits) = (0u64, String::new());
    for c in text.trim().chars() {
        if c.is_ascii_digit() {
            digits.push(c);
            continue;
        }
        let unit = match c {
            'd' => 86_400,
            'h' => 3_600,
            'm' => 60,
            's' => 1,
            _ => return None,
        };
        let n: u64 = digits.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?)?;
        digits.clear();
    }
    (digits.is_empty() && total > 0).then_some(total)
}

/// Decodes `promotion:`.
pub fn decode_promotion(file: &Path, n: &Node) -> Result<Promotion, Error> {
    let mut p = Promotion::default();
    let known = [
        "block",
        "commitMessage",
        "soak",
        "freeze",
        "requires",
        "after",
    ];
    for (k, v) in entries(file, n, &known)? {
        let list = |what: &str| {
            v.as_seq()
                .ok_or_else(|| err(file, v, format!("`{k}` must be a list of {what}")))
        };
        match k {
            "soak" => {
                let text = string(file, v)?;
                p.soak = Some(duration(&text).ok_or_else(|| {
                    err(
                        file,
                        v,
                        format!("soak `{text}`: expected a duration such as `24h`, `90m`, `2d` or `1h30m`"),
                    )
                })?);
            }
            "freeze" => {
                for x in list("windows")? {
                    let text = string(file, x)?;
                    let w = super::freeze::Freeze::parse(&text, x.pos.line)
                        .map_err(|m| err(file, x, m))?;
                    p.freeze.push(w);
                }
            }
            "requires" => {
                for x in list("roles")? {
                    p.requires.push(string(file, x)?);
                }
            }
            "after" => {
                for x in list("environments")? {
                    p.after.push((string(file, x)?, x.pos.line));
                }
            }
            "block" => {
                let items = v
                    .as_seq()
                    .ok_or_else(|| err(file, v, "`block` must be a list of globs"))?;
                p.block = items
                    .iter()
                    .map(|x| string(file, x))
                    .collect::<Result<_, _>>()?;
            }
            _ => p.commit_message = Some(string(file, v)?),
        }
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::{parse_one, Resolver};

    fn node(src: &str) -> Node {
        parse_one(src, Resolver::V3).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn pins_and_promotion() {
        let f = Path::new("e.yaml");
        let pins = decode_pins(
            f,
            &node("- image.tag\n- {file: \"{dir}/v.yaml\", path: spec.version}\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pins[0], PinDecl::Value("image.tag".into()));
        assert!(matches!(&pins[1], PinDecl::File { path, .. } if path == "spec.version"));
        assert!(decode_pins(f, &node("- {file: x}\n")).is_err());
        let e = decode_pins(f, &node("- {file: x, path: y, other: 1}\n")).unwrap_err();
        assert!(e.to_string().contains("unknown key `other`"), "{e}");
        let p = decode_promotion(f, &node("block: [api, \"web/*\"]\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.block, ["api", "web/*"]);
        assert!(decode_promotion(f, &node("block: api\n")).is_err());
        let p = decode_promotion(
            f,
            &node("soak: 1h30m\nrequires: [qa]\nafter: [canary]\nfreeze:\n- 2026-12-20 – 2027-01-04\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.soak, Some(5_400));
        assert_eq!(
            (p.requires.len(), p.after[0].1, p.freeze[0].line),
            (1, 3, 5)
        );
        for bad in ["soak: 24\n", "soak: 1x\n", "soak: 0h\n", "freeze: [Fri]\n"] {
            assert!(decode_promotion(f, &node(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_pin_path_with_an_empty_segment_is_refused_at_its_line() {
        let f = Path::new("e.yaml");
        let e = decode_pins(f, &node("- image.tag\n- image..tag\n")).unwrap_err();
        assert_eq!(
            e.to_string(),
            "e.yaml:2: pin path `image..tag`: segment 2 is empty (a path is KEY.KEY…, as `image.tag`; no leading, trailing or doubled `.`)"
        );
        let e = decode_pins(f, &node("- {file: v.yaml, path: .spec}\n")).unwrap_err();
        assert!(
            e.to_string()
                .contains("pin path `.spec`: segment 1 is empty"),
            "{e}"
        );
    }
}
