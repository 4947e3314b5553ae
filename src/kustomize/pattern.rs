//! Regular expressions compiled once per process: kustomize compiles a
//! selector's, an image name's or a replacement's pattern at every use;
//! compiling each distinct pattern once gives the same matches for a
//! fraction of the work (the same image and target patterns recur in every
//! overlay of a repository). It owns only the cache, not what a pattern means.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use regex::Regex;

/// Distinct patterns kept; past this the cache starts over (patterns come
/// from the input, so the cache must not grow without bound).
const CAPACITY: usize = 4096;

/// `Regex::new(pattern)`, from the cache when compiled before. A `Regex`
/// clone shares the compiled program.
pub fn compile(pattern: &str) -> Result<Regex, regex::Error> {
    static CACHE: OnceLock<Mutex<HashMap<String, Regex>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(re) = lock(cache).get(pattern) {
        return Ok(re.clone());
    }
    let re = Regex::new(pattern)?;
    let mut map = lock(cache);
    if map.len() >= CAPACITY {
        map.clear();
    }
    map.insert(pattern.to_string(), re.clone());
    Ok(re)
}

/// The map, even when another thread panicked while holding it (the map is
/// only ever inserted into whole, so it stays consistent).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
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
}
