//! Go's `path/filepath.Match` with `/` as separator, which `helm template
//! --show-only` matches template paths with: `*` (any run without `/`), `?`
//! (one character but `/`), `[...]`/`[^...]` classes with ranges, and `\`
//! escapes. There are no braces and no `**` (two stars are two `*`). A
//! malformed pattern matches nothing: helm drops `Match`'s ErrBadPattern.

#[derive(Clone, Debug)]
enum Tok {
    Lit(char),
    Star,
    One,
    Class(bool, Vec<(char, char)>),
}

/// Whether `name` matches `pattern` as Go's `filepath.Match` decides
/// (`false` for a malformed pattern).
pub fn path_match(pattern: &str, name: &str) -> bool {
    Pattern::new(pattern).matches(name)
}

/// A pattern read once, to match many names (`.helmignore` rules are
/// tried against every file of a chart: parsed for each, they were 2% of
/// kube-prometheus-stack's render).
#[derive(Clone, Debug)]
pub struct Pattern {
    /// `None`: malformed, matches nothing.
    toks: Option<Vec<Tok>>,
}

impl Pattern {
    pub fn new(pattern: &str) -> Pattern {
        Pattern {
            toks: parse(pattern),
        }
    }

    /// [`path_match`] of this pattern and `name`.
    pub fn matches(&self, name: &str) -> bool {
        let Some(toks) = &self.toks else {
            return false;
        };
        let name: Vec<char> = name.chars().collect();
        matches(toks, &name)
    }
}

/// Whether Go's `filepath.Match` accepts `pattern` (returns no
/// `ErrBadPattern`), as `.helmignore` parsing checks each rule.
pub fn valid_pattern(pattern: &str) -> bool {
    parse(pattern).is_some()
}

/// `getEsc`: one class character, `\` escaping the next; `-` and `]` bare
/// are malformed here.
fn class_char(p: &[char], i: &mut usize) -> Option<char> {
    let c = *p.get(*i)?;
    if c == '-' || c == ']' {
        return None;
    }
    *i += 1;
    if c == '\\' {
        let e = *p.get(*i)?;
        *i += 1;
        return Some(e);
    }
    Some(c)
}

fn parse(pattern: &str) -> Option<Vec<Tok>> {
    let p: Vec<char> = pattern.chars().collect();
    let mut toks = Vec::new();
    let mut i = 0;
    while let Some(&c) = p.get(i) {
        i += 1;
        toks.push(match c {
            '*' => Tok::Star,
            '?' => Tok::One,
            '\\' => {
                let e = *p.get(i)?;
                i += 1;
                Tok::Lit(e)
            }
            '[' => {
                let negated = p.get(i) == Some(&'^');
                if negated {
                    i += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    if p.get(i) == Some(&']') && !ranges.is_empty() {
                        i += 1;
                        break;
                    }
                    let lo = class_char(&p, &mut i)?;
                    let mut hi = lo;
                    if p.get(i) == Some(&'-') {
                        i += 1;
                        hi = class_char(&p, &mut i)?;
                        if lo > hi {
                            return None;
                        }
                    }
                    ranges.push((lo, hi));
                }
                Tok::Class(negated, ranges)
            }
            c => Tok::Lit(c),
        });
    }
    Some(toks)
}

fn matches(toks: &[Tok], name: &[char]) -> bool {
    let Some((tok, rest)) = toks.split_first() else {
        return name.is_empty();
    };
    match tok {
        Tok::Star => {
            // Any run without `/`, shortest first.
            let stop = name.iter().position(|&c| c == '/').unwrap_or(name.len());
            (0..=stop).any(|k| matches(rest, name.get(k..).unwrap_or_default()))
        }
        _ => {
            let Some((&c, tail)) = name.split_first() else {
                return false;
            };
            let ok = match tok {
                Tok::Lit(l) => *l == c,
                Tok::One => c != '/',
                Tok::Class(negated, ranges) => {
                    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != *negated
                }
                Tok::Star => false,
            };
            ok && matches(rest, tail)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::path_match;

    #[test]
    fn go_filepath_match_rules() {
        assert!(path_match("templates/*.yaml", "templates/a.yaml"));
        assert!(!path_match("templates/*.yaml", "templates/x/a.yaml"));
        assert!(path_match("templates/**.yaml", "templates/a.yaml"));
        assert!(!path_match("templates/{a,b}.yaml", "templates/a.yaml"));
        assert!(path_match("templates/{a,b}.yaml", "templates/{a,b}.yaml"));
        assert!(path_match("templates/[ab].yaml", "templates/b.yaml"));
        assert!(path_match("templates/[^ab].yaml", "templates/c.yaml"));
        assert!(path_match("templates/?.yaml", "templates/é.yaml"));
        assert!(path_match("t/\\*", "t/*"));
        assert!(!path_match("t/[", "t/["));
        assert!(!path_match("t/[]", "t/]"));
        assert!(!path_match("t/[z-a]", "t/b"));
    }
}
