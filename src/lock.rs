//! A mutex's value even after another thread panicked while holding it.
//! hydrate's shared memos, caches and lists are only ever changed by whole
//! inserts and pushes, so a poisoned one is still consistent; and a
//! render's panic is an error of its own, so what the other renders found
//! stands.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// `m`'s guard, poisoned or not.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}
