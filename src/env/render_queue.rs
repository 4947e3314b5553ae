//! Running a run's jobs in a chosen order on every rayon thread: each
//! thread takes the next job from one shared queue, so the heaviest jobs
//! (first in the order [`super::Cache::order`] gives: the last run's render times) start first on
//! whichever core is free, and the run does not end with one core
//! finishing a long render alone. (`par_iter` would split the list in
//! halves, and the second core would start in the middle.) It knows
//! nothing about what a job is.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `f(i)` for every `i` of `order` (each index of `0..order.len()` once),
/// taken in that order by all rayon threads; the results by index.
pub fn run<T: Send>(order: &[usize], f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let slots: Vec<Mutex<Option<T>>> = order.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || loop {
        let n = next.fetch_add(1, Ordering::Relaxed);
        let Some(&i) = order.get(n) else { break };
        let out = f(i);
        if let Some(slot) = slots.get(i) {
            if let Ok(mut s) = slot.lock() {
                *s = Some(out);
            }
        }
    };
    let threads = rayon::current_num_threads().clamp(1, order.len().max(1));
    rayon::scope(|s| {
        for _ in 0..threads {
            s.spawn(|_| worker());
        }
    });
    slots
        .into_iter()
        .filter_map(|s| s.into_inner().ok().flatten())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_once_results_by_index_started_in_order() {
        let order = vec![3, 0, 4, 1, 2];
        let started = Mutex::new(Vec::new());
        let out = run(&order, |i| {
            started.lock().unwrap().push(i);
            i * 10
        });
        assert_eq!(out, vec![0, 10, 20, 30, 40]);
        let mut s = started.into_inner().unwrap();
        s.sort();
        assert_eq!(s, vec![0, 1, 2, 3, 4]);
        assert!(run(&[], |i| i).is_empty());
    }
}
