//! Which resource of one side is which resource of the other.
//!
//! A resource is identified by its app, API group, kind and name. The name
//! loses kustomize's generator hash suffix (ConfigMaps and Secrets), and,
//! between environments, the environment's `namePrefix`/`nameSuffix`; the
//! namespace is not part of the identity then.
//!
//! The affixes are found by matching, not read from kustomizations: the
//! committed output (`--rendered`) and chart apps carry no build history,
//! and a prefix set in a base shared by every overlay is not an environment
//! difference at all. For the resources of an app that no exact name
//! matches, every pair of the same group and kind proposes a transform (the
//! two names around their longest common substring, e.g. `dev-` + core on
//! one side, core + `-blue` on the other); the transform most pairs agree
//! on wins, is applied to every pair it explains, and the search repeats on
//! what is left. A transform proposed by one pair only is accepted when the
//! common core is at least half of the longer name, so two unrelated
//! resources are not taken for a renamed one.

use std::collections::HashMap;

use super::{Mode, Resource};

/// A matched pair (or a resource on one side only) and its identity name.
#[derive(Debug)]
pub(crate) struct Pair<'a> {
    pub from: Option<&'a Resource>,
    pub to: Option<&'a Resource>,
    pub name: String,
}

/// The pairs of one app, and each side's names mapped to identity names
/// (so references to renamed resources compare equal).
#[derive(Debug, Default)]
pub(crate) struct Matching<'a> {
    pub pairs: Vec<Pair<'a>>,
    pub names_from: HashMap<String, String>,
    pub names_to: HashMap<String, String>,
}

/// kustomize's hasher.encode: the first 10 hex digits with 0,1,3,a,e
/// replaced by g,h,k,m,t, appended with `-` by the generators.
pub(crate) fn strip_hash<'n>(kind: &str, name: &'n str) -> &'n str {
    if !matches!(kind, "ConfigMap" | "Secret") || name.len() < 12 {
        return name;
    }
    // The suffix is ASCII, so a cut inside a multi-byte character (a
    // non-ASCII name) means there is no suffix, not a panic.
    let Some((head, tail)) = name.split_at_checked(name.len() - 11) else {
        return name;
    };
    let hashed =
        tail.starts_with('-') && tail[1..].bytes().all(|b| b"bcdfghkmt2456789".contains(&b));
    if hashed && !head.is_empty() {
        head
    } else {
        name
    }
}

/// How the names of one side map to the other's: (prefix, suffix) on the
/// `from` side, then on the `to` side.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Transform {
    from: (String, String),
    to: (String, String),
}

impl Transform {
    fn len(&self) -> usize {
        self.from.0.len() + self.from.1.len() + self.to.0.len() + self.to.1.len()
    }
}

fn strip<'n>(name: &'n str, (pre, suf): &(String, String)) -> Option<&'n str> {
    let core = name
        .strip_prefix(pre.as_str())?
        .strip_suffix(suf.as_str())?;
    (!core.is_empty()).then_some(core)
}

/// The two names around their longest common substring (the first one in
/// `a` when several are as long), and that substring's length.
fn propose(a: &str, b: &str) -> Option<(Transform, usize)> {
    let (x, y) = (a.as_bytes(), b.as_bytes());
    let mut prev = vec![0usize; y.len() + 1];
    let (mut best, mut end_a, mut end_b) = (0, 0, 0);
    for i in 1..=x.len() {
        let mut cur = vec![0usize; y.len() + 1];
        for j in 1..=y.len() {
            if x[i - 1] == y[j - 1] {
                cur[j] = prev[j - 1] + 1;
                if cur[j] > best {
                    (best, end_a, end_b) = (cur[j], i, j);
                }
            }
        }
        prev = cur;
    }
    if best == 0 {
        return None;
    }
    let (sa, sb) = (end_a - best, end_b - best);
    if !a.is_char_boundary(sa) || !a.is_char_boundary(end_a) || !b.is_char_boundary(sb) {
        return None;
    }
    let t = Transform {
        from: (a[..sa].to_string(), a[end_a..].to_string()),
        to: (b[..sb].to_string(), b[end_b..].to_string()),
    };
    Some((t, best))
}

struct Entry<'a> {
    r: &'a Resource,
    base: &'a str,
    done: bool,
}

fn entries<'a>(side: &[&'a Resource]) -> Vec<Entry<'a>> {
    side.iter()
        .map(|r| Entry {
            r,
            base: strip_hash(&r.kind, &r.name),
            done: false,
        })
        .collect()
}

fn same_type(a: &Resource, b: &Resource) -> bool {
    a.group == b.group && a.kind == b.kind
}

/// Matches the resources of one app on two sides.
pub(crate) fn match_resources<'a>(
    from: &[&'a Resource],
    to: &[&'a Resource],
    mode: Mode,
) -> Matching<'a> {
    let (mut a, mut b) = (entries(from), entries(to));
    let mut m = Matching::default();
    // Exact names: same namespace first, then (between environments) any.
    let passes: &[bool] = match mode {
        Mode::Environments => &[true, false],
        Mode::Revisions => &[true],
    };
    for &same_ns in passes {
        for x in a.iter_mut() {
            let hit = b.iter_mut().find(|y| {
                !x.done
                    && !y.done
                    && same_type(x.r, y.r)
                    && x.base == y.base
                    && (!same_ns || x.r.namespace == y.r.namespace)
            });
            if let Some(y) = hit {
                (x.done, y.done) = (true, true);
                m.pair(x.r, y.r, x.base);
            }
        }
    }
    let mut accepted: Vec<Transform> = Vec::new();
    if mode == Mode::Environments {
        while let Some(t) = best_transform(&a, &b) {
            let mut any = false;
            for x in a.iter_mut().filter(|x| !x.done) {
                let Some(core) = strip(x.base, &t.from) else {
                    continue;
                };
                let hit = b
                    .iter_mut()
                    .find(|y| !y.done && same_type(x.r, y.r) && strip(y.base, &t.to) == Some(core));
                if let Some(y) = hit {
                    (x.done, y.done, any) = (true, true, true);
                    m.pair(x.r, y.r, core);
                }
            }
            if !any {
                break;
            }
            accepted.push(t);
        }
    }
    // What is left exists on one side only; its name loses the side's
    // affixes when a transform was found.
    let name_of = |base: &'a str, from_side: bool| -> &'a str {
        accepted
            .iter()
            .find_map(|t| strip(base, if from_side { &t.from } else { &t.to }))
            .unwrap_or(base)
    };
    for x in a.iter().filter(|x| !x.done) {
        let name = name_of(x.base, true);
        m.names_from.insert(x.r.name.clone(), name.to_string());
        m.pairs.push(Pair {
            from: Some(x.r),
            to: None,
            name: name.to_string(),
        });
    }
    for y in b.iter().filter(|y| !y.done) {
        let name = name_of(y.base, false);
        m.names_to.insert(y.r.name.clone(), name.to_string());
        m.pairs.push(Pair {
            from: None,
            to: Some(y.r),
            name: name.to_string(),
        });
    }
    m
}

impl<'a> Matching<'a> {
    fn pair(&mut self, x: &'a Resource, y: &'a Resource, name: &str) {
        self.names_from.insert(x.name.clone(), name.to_string());
        self.names_to.insert(y.name.clone(), name.to_string());
        self.pairs.push(Pair {
            from: Some(x),
            to: Some(y),
            name: name.to_string(),
        });
    }
}

/// The transform most unmatched pairs of the same type propose (fewest
/// affix characters on a tie), if it is trustworthy.
fn best_transform(a: &[Entry], b: &[Entry]) -> Option<Transform> {
    let mut votes: HashMap<Transform, (usize, usize, usize)> = HashMap::new();
    for x in a.iter().filter(|x| !x.done) {
        for y in b.iter().filter(|y| !y.done && same_type(x.r, y.r)) {
            if let Some((t, core)) = propose(x.base, y.base) {
                let longer = x.base.len().max(y.base.len());
                let v = votes.entry(t).or_insert((0, core, longer));
                v.0 += 1;
            }
        }
    }
    let (t, (n, core, longer)) = votes.into_iter().max_by(|(t1, v1), (t2, v2)| {
        v1.0.cmp(&v2.0)
            .then(t2.len().cmp(&t1.len()))
            .then(t2.cmp(t1))
    })?;
    (n >= 2 || core * 2 >= longer).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn res(kind: &str, name: &str, ns: &str) -> Resource {
        Resource {
            app: "web".into(),
            group: String::new(),
            version: "v1".into(),
            kind: kind.into(),
            namespace: ns.into(),
            name: name.into(),
            node: Arc::new(crate::yaml::Node::map()),
        }
    }

    fn names(m: &Matching) -> Vec<(Option<String>, Option<String>, String)> {
        let mut v: Vec<_> = m
            .pairs
            .iter()
            .map(|p| {
                (
                    p.from.map(|r| r.name.clone()),
                    p.to.map(|r| r.name.clone()),
                    p.name.clone(),
                )
            })
            .collect();
        v.sort();
        v
    }

    #[test]
    fn generator_hashes_come_off_configmaps_and_secrets_only() {
        assert_eq!(
            strip_hash("ConfigMap", "web-config-5b2m7tk9hg"),
            "web-config"
        );
        assert_eq!(strip_hash("Secret", "db-h8dk72mt4c"), "db");
        assert_eq!(strip_hash("Deployment", "web-5b2m7tk9hg"), "web-5b2m7tk9hg");
        // `a` and `e` never appear in a kustomize hash.
        assert_eq!(strip_hash("ConfigMap", "web-aaaaaaaaaa"), "web-aaaaaaaaaa");
    }

    #[test]
    fn strip_hash_keeps_a_name_whose_cut_falls_inside_a_character() {
        // 12 bytes: the 11-byte suffix would start inside `é`.
        assert_eq!(strip_hash("ConfigMap", "é0123456789"), "é0123456789");
        assert_eq!(strip_hash("ConfigMap", "é-5b2m7tk9hg"), "é");
    }

    #[test]
    fn prefix_on_one_side_and_suffix_on_the_other() {
        let a = [
            res("Service", "dev-api", "dev"),
            res("Service", "dev-api-metrics", "dev"),
            res("ConfigMap", "dev-api-config-5b2m7tk9hg", "dev"),
        ];
        let b = [
            res("Service", "api-blue", "prod"),
            res("Service", "api-metrics-blue", "prod"),
            res("ConfigMap", "api-config-blue-h8dk72mt4c", "prod"),
            res("PodDisruptionBudget", "api-blue", "prod"),
        ];
        let (ra, rb): (Vec<&Resource>, Vec<&Resource>) = (a.iter().collect(), b.iter().collect());
        let m = match_resources(&ra, &rb, Mode::Environments);
        let s = |x: &str| Some(x.to_string());
        assert_eq!(
            names(&m),
            [
                (None, s("api-blue"), "api".to_string()),
                (s("dev-api"), s("api-blue"), "api".to_string()),
                (
                    s("dev-api-config-5b2m7tk9hg"),
                    s("api-config-blue-h8dk72mt4c"),
                    "api-config".to_string()
                ),
                (
                    s("dev-api-metrics"),
                    s("api-metrics-blue"),
                    "api-metrics".to_string()
                ),
            ]
        );
        assert_eq!(m.names_from["dev-api-config-5b2m7tk9hg"], "api-config");
    }

    #[test]
    fn unrelated_single_resources_are_not_a_rename() {
        let a = [res("ConfigMap", "feature-flags", "x")];
        let b = [res("ConfigMap", "flags-v2-experimental", "x")];
        let (ra, rb): (Vec<&Resource>, Vec<&Resource>) = (a.iter().collect(), b.iter().collect());
        let m = match_resources(&ra, &rb, Mode::Environments);
        assert_eq!(m.pairs.len(), 2);
        assert!(m.pairs.iter().all(|p| p.from.is_none() || p.to.is_none()));
    }

    #[test]
    fn revisions_keep_renames_and_moves_as_remove_and_add() {
        let a = [
            res("Service", "api", "a"),
            res("ConfigMap", "api-config", "a"),
            res("Service", "web", "a"),
        ];
        let b = [
            res("Service", "dev-api", "a"),
            res("ConfigMap", "dev-api-config", "a"),
            res("Service", "web", "b"),
        ];
        let (ra, rb): (Vec<&Resource>, Vec<&Resource>) = (a.iter().collect(), b.iter().collect());
        let m = match_resources(&ra, &rb, Mode::Revisions);
        assert!(m.pairs.iter().all(|p| p.from.is_none() || p.to.is_none()));
        let m = match_resources(&ra, &rb, Mode::Environments);
        assert!(m.pairs.iter().all(|p| p.from.is_some() && p.to.is_some()));
    }
}
