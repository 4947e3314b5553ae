//! Regular expressions compiled once while they are in use: kustomize
//! compiles a selector's, an image name's or a replacement's pattern at
//! every use; compiling each distinct pattern once gives the same matches
//! for a fraction of the work (the same image and target patterns recur in
//! every overlay of a repository). The cache is bounded to the recently
//! used patterns. It owns only the cache, not what a pattern means.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::Regex;

use crate::lock::lock;

/// Distinct patterns kept in each of the cache's two generations. A
/// compiled pattern holds tens of kilobytes (an image name's one-pass DFA
/// about 30 KB), and an image pattern is usually one app's, used by its
/// few environments one after the other: a few hundred recent patterns are
/// what is reused, while thousands kept would make memory grow with the
/// number of apps (about 90 MB at 2,000 apps with 4,096 kept).
const GENERATION: usize = 256;

/// Recently used patterns in two generations: a lookup that finds a
/// pattern in the older one moves it to the newer; when the newer is full
/// it becomes the older and the oldest are dropped. So memory is bounded
/// and what is still in use survives, as with least-recently-used eviction.
#[derive(Default)]
struct Generations {
    new: HashMap<String, Regex>,
    old: HashMap<String, Regex>,
}

impl Generations {
    fn get(&mut self, pattern: &str) -> Option<Regex> {
        if let Some(re) = self.new.get(pattern) {
            return Some(re.clone());
        }
        let re = self.old.remove(pattern)?;
        self.put(pattern, re.clone());
        Some(re)
    }

    fn put(&mut self, pattern: &str, re: Regex) {
        if self.new.len() >= GENERATION {
            self.old = std::mem::take(&mut self.new);
        }
        self.new.insert(pattern.to_string(), re);
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.new.len() + self.old.len()
    }
}

/// `Regex::new(pattern)`, from the cache when compiled recently. A `Regex`
/// clone shares the compiled program.
pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    static CACHE: OnceLock<Mutex<Generations>> = OnceLock::new();
    let cache = CACHE.get_or_init(Mutex::default);
    if let Some(re) = lock(cache).get(pattern) {
        return Ok(re);
    }
    let re = Regex::new(pattern)?;
    lock(cache).put(pattern, re.clone());
    Ok(re)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_matches_as_a_fresh_regex() {
        let a = compile("^app-[0-9]+$").unwrap();
        let b = compile("^app-[0-9]+$").unwrap();
        assert!(a.is_match("app-12") && b.is_match("app-12"));
        assert!(!b.is_match("app-x"));
        // An invalid pattern fails with regex's own message, every time.
        let bad = String::from("(");
        let fresh = Regex::new(&bad).unwrap_err().to_string();
        assert_eq!(compile(&bad).unwrap_err().to_string(), fresh);
        assert_eq!(compile(&bad).unwrap_err().to_string(), fresh);
    }

    #[test]
    fn holds_at_most_two_generations_and_keeps_what_is_in_use() {
        let mut g = Generations::default();
        let re = Regex::new("x").unwrap();
        g.put("kept", re.clone());
        for i in 0..10 * GENERATION {
            g.put(&format!("p{i}"), re.clone());
            if i % (GENERATION / 2) == 0 {
                assert!(g.get("kept").is_some(), "used often: kept ({i})");
            }
            assert!(g.len() <= 2 * GENERATION);
        }
        assert!(g.get("p0").is_none(), "not used since: dropped");
        assert!(g.get(&format!("p{}", 10 * GENERATION - 1)).is_some());
    }
}
