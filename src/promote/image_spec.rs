//! A `set-image` argument, in `kustomize edit set image`'s grammar
//! (kustomize v5.7.1 commands/edit/set/setimage.go `parse`, with
//! api/internal/image `Split`):
//!
//! - `NAME=NEWNAME[:TAG][@DIGEST]`: the entry named NAME gets NEWNAME, TAG
//!   and DIGEST;
//! - `NAME[:TAG][@DIGEST]` (at least one of TAG, DIGEST): the entry named
//!   NAME gets TAG and DIGEST, and no newName;
//! - `*` as NEWNAME, TAG or DIGEST keeps the entry's value (setimage.go
//!   `preserveSeparator`).
//!
//! Like kustomize, the argument says what the entry becomes: a part not
//! given is removed from it. Unlike kustomize, every part is checked
//! against the reference grammar (`image_ref`) and refused with the reason,
//! where kustomize writes whatever it splits (`NAME=` writes an entry with
//! a name only, `=web:1` an entry named `web`, `a:b:c` the tag `b:c`).

use super::image_ref::{check_digest, check_name, check_tag, RefError};

/// What an argument does to one field of the `images:` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Field {
    /// Write this value.
    Set(String),
    /// `*`: keep the entry's value (none if it has none).
    Keep,
    /// Not given: the field is removed.
    Remove,
}

impl Field {
    fn of(part: Option<&str>) -> Field {
        match part {
            None => Field::Remove,
            Some("*") => Field::Keep,
            Some(v) => Field::Set(v.to_string()),
        }
    }

    #[cfg(test)]
    fn text(&self) -> Option<&str> {
        match self {
            Field::Set(v) => Some(v),
            Field::Keep => Some("*"),
            Field::Remove => None,
        }
    }
}

/// A parsed `set-image` argument.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImageSpec {
    /// The `images:` entry's `name`.
    pub name: String,
    /// `newName`.
    pub new_name: Field,
    /// `newTag`.
    pub tag: Field,
    /// `digest`.
    pub digest: Field,
    /// As given.
    pub text: String,
}

/// Which part of the argument is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The entry's name (before `=`, or the whole image without `=`).
    Name,
    /// The image after `=`.
    NewName,
    /// After `:`.
    Tag,
    /// After `@`.
    Digest,
}

impl std::fmt::Display for Part {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Part::Name => "NAME",
            Part::NewName => "NEWNAME",
            Part::Tag => "TAG",
            Part::Digest => "DIGEST",
        })
    }
}

/// Why an argument is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// `NAME` alone: kustomize's errImageInvalidArgs.
    #[error("nothing to set: expected NAME=NEWNAME[:TAG][@DIGEST] or NAME[:TAG][@DIGEST] with a TAG or DIGEST")]
    NothingToSet,
    /// `=web:1`, `web=`, `web:`, `web@`.
    #[error("{0} is empty")]
    Empty(Part),
    /// `*` as NAME (it keeps a value of an entry; it names none).
    #[error("`*` keeps a NEWNAME, TAG or DIGEST; NAME must name the entry")]
    StarName,
    /// A part outside the reference grammar.
    #[error("{part}: {error}")]
    Reference {
        /// Which part.
        part: Part,
        /// Why.
        error: RefError,
    },
}

/// A refused argument, named as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("image `{}`: {problem}", .text.escape_debug())]
pub struct SpecError {
    /// The argument.
    pub text: String,
    /// Why.
    pub problem: Problem,
}

/// kustomize api/internal/image Split: after the first `/` (a registry's
/// `:port` comes before it), the first `@` starts the digest; a `:` before
/// it (or with no `@`) starts the tag.
fn split(image: &str) -> (String, Option<&str>, Option<&str>) {
    let (domain, search) = match image.split_once('/') {
        Some((d, rest)) if !d.is_empty() => (Some(d), rest),
        _ => (None, image),
    };
    let join = |name: &str| match domain {
        Some(d) => format!("{d}/{name}"),
        None => name.to_string(),
    };
    match search.chars().find(|c| matches!(c, '@' | ':')) {
        Some('@') => match search.split_once('@') {
            Some((n, d)) => (join(n), None, Some(d)),
            None => (join(search), None, None),
        },
        Some(_) => match search.split_once(':') {
            Some((n, rest)) => match rest.split_once('@') {
                Some((t, d)) => (join(n), Some(t), Some(d)),
                None => (join(n), Some(rest), None),
            },
            None => (join(search), None, None),
        },
        None => (join(search), None, None),
    }
}

impl ImageSpec {
    /// Parses and checks the command-line form.
    pub fn parse(text: &str) -> Result<ImageSpec, SpecError> {
        Self::parts(text).map_err(|problem| SpecError {
            text: text.to_string(),
            problem,
        })
    }

    fn parts(text: &str) -> Result<ImageSpec, Problem> {
        // setimage.go imageArgParse: strings.SplitN(arg, "=", 2).
        let (key, image) = match text.split_once('=') {
            Some(("", _)) => return Err(Problem::Empty(Part::Name)),
            Some((_, "")) => return Err(Problem::Empty(Part::NewName)),
            Some((k, v)) => (Some(k), v),
            None => (None, text),
        };
        let (name, tag, digest) = split(image);
        let empty = |v: Option<&str>, part| match v {
            Some("") => Err(Problem::Empty(part)),
            _ => Ok(()),
        };
        empty(tag, Part::Tag)?;
        empty(digest, Part::Digest)?;
        let refused = |part| move |error| Problem::Reference { part, error };
        let spec = ImageSpec {
            name: key.unwrap_or(&name).to_string(),
            new_name: match key {
                Some(_) => Field::of(Some(&name)),
                None => Field::Remove,
            },
            tag: Field::of(tag),
            digest: Field::of(digest),
            text: text.to_string(),
        };
        if key.is_none() && tag.is_none() && digest.is_none() {
            return Err(Problem::NothingToSet);
        }
        if spec.name == "*" {
            return Err(Problem::StarName);
        }
        check_name(&spec.name).map_err(refused(Part::Name))?;
        if let Field::Set(n) = &spec.new_name {
            check_name(n).map_err(refused(Part::NewName))?;
        }
        if let Field::Set(t) = &spec.tag {
            check_tag(t).map_err(refused(Part::Tag))?;
        }
        if let Field::Set(d) = &spec.digest {
            check_digest(d).map_err(refused(Part::Digest))?;
        }
        Ok(spec)
    }

    /// The argument that parses to this spec (`text` aside), in the form
    /// kustomize's example uses: `NAME=NEWNAME:TAG@DIGEST` or
    /// `NAME:TAG@DIGEST`.
    #[cfg(test)]
    pub fn to_arg(&self) -> String {
        let mut s = self.name.clone();
        if let Some(n) = self.new_name.text() {
            s = format!("{s}={n}");
        }
        if let Some(t) = self.tag.text() {
            s = format!("{s}:{t}");
        }
        if let Some(d) = self.digest.text() {
            s = format!("{s}@{d}");
        }
        s
    }
}

#[cfg(test)]
mod tests;
