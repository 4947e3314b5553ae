//! Running a chart's parsed templates as helm's engine does
//! (`engine.render`: one after another in `sortTemplates` order, stopping
//! at the first error), but on every core when that gives the same result.
//!
//! In helm all templates of a render share `.Values` and the other maps by
//! reference, and sprig's `set`, `unset` and `merge*` change maps in place,
//! so a template can change what later ones see. Templates therefore run
//! at once *speculatively*: each may change only maps made after they all
//! started ([`ExecShared::guarded`]); one that tries to change an older map
//! is stopped before it does. Every template before the first stopped one
//! in helm's order saw exactly what it would have seen running alone, so
//! its output (or error) stands; from the stopped one on, the templates
//! run again one by one on the untouched maps. It owns no scope building
//! or error wording: `render.rs` passes both in.

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::funcs::{TPL_BYTES, TPL_MAX_BYTES};
use super::Error;
use crate::gotmpl::value::map_watermark;
use crate::gotmpl::ExecShared;

/// A template's output or the render's error.
pub(super) type Run<'a> = dyn Fn(usize, &ExecShared) -> Result<String, Error> + Sync + 'a;

/// Runs templates `0..count` in order with `shared` as helm does and
/// returns their outputs, or the error of the first that fails. `run`
/// executes one template with the given state. `serial` (kept by the
/// caller per chart) says a previous render found that these templates
/// change shared maps: then they run one by one straight away.
pub(super) fn run_all(
    count: usize,
    run: &Run<'_>,
    shared: &ExecShared,
    serial: &AtomicBool,
) -> Result<Vec<String>, Error> {
    let mut out = Vec::with_capacity(count);
    let mut start = 0;
    if speculates(count, serial) {
        start = speculate(count, run, shared, &mut out)?;
        if start < count {
            serial.store(true, Ordering::Relaxed);
        }
    }
    for i in start..count {
        out.push(run(i, shared)?);
    }
    Ok(out)
}

/// Whether [`run_all`] first runs the templates at once: there are
/// several, several threads, and no earlier render found they change
/// shared maps. A caller makes the data for such a run before it starts.
pub(super) fn speculates(count: usize, serial: &AtomicBool) -> bool {
    count > 1 && rayon::current_num_threads() > 1 && !serial.load(Ordering::Relaxed)
}

/// Runs all templates at once, each guarded, and keeps the outputs of
/// those before the first that was stopped (or whose `tpl` bytes, added to
/// the earlier ones', could reach helm's limit), folding their counters
/// and warnings into `shared` in order. Returns where the one-by-one run
/// must start (`count` when none was stopped), or the first error in order.
fn speculate(
    count: usize,
    run: &Run<'_>,
    shared: &ExecShared,
    out: &mut Vec<String>,
) -> Result<usize, Error> {
    // Every map the templates can reach now was made before this mark.
    let watermark = map_watermark();
    let states: Vec<ExecShared> = (0..count).map(|_| shared.guarded(watermark)).collect();
    let results: Vec<Result<String, Error>> = states
        .par_iter()
        .enumerate()
        .map(|(i, state)| run(i, state))
        .collect();
    let mut tpl_bytes = 0;
    for (i, (state, result)) in states.iter().zip(results).enumerate() {
        let bytes = state.count(TPL_BYTES, 0);
        if state.blocked() || tpl_bytes + bytes > TPL_MAX_BYTES {
            shared.count(TPL_BYTES, tpl_bytes);
            return Ok(i);
        }
        tpl_bytes += bytes;
        for w in state.warnings() {
            shared.warn(w);
        }
        out.push(result?);
    }
    shared.count(TPL_BYTES, tpl_bytes);
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gotmpl::value::Map;
    use crate::gotmpl::{Elem, Value};
    use std::collections::BTreeMap;

    /// Template `i` prints the shared map's size, then template 2 (and only
    /// it) adds a key: run one by one, templates after 2 see the new key.
    #[test]
    fn a_template_changing_shared_maps_runs_again_alone() {
        let values = Map::new(Elem::Interface, BTreeMap::new());
        let run = |i: usize, s: &ExecShared| -> Result<String, Error> {
            let n = values.len();
            if i == 2 {
                if !s.may_mutate(&values) {
                    return Err(Error::Chart("stopped".into()));
                }
                values.insert(format!("k{i}"), Value::Int(1));
            }
            Ok(format!("{i}:{n}"))
        };
        let serial = AtomicBool::new(false);
        let out = run_all(5, &run, &ExecShared::default(), &serial);
        let want = ["0:0", "1:0", "2:0", "3:1", "4:1"].map(String::from);
        assert_eq!(out.ok(), Some(want.to_vec()));
        assert_eq!(values.len(), 1, "changed once, by the one-by-one run");
        assert!(serial.load(Ordering::Relaxed), "next render: one by one");
    }

    /// Every function of helm 3 and helm 4, called in a speculative run
    /// on maps that all templates share, leaves them as they were: it is
    /// refused before it writes, or it does not write maps. A function
    /// added later that writes a map in place without asking
    /// `ExecShared::may_mutate` makes speculation unsound and fails here.
    #[test]
    fn no_function_changes_a_shared_map_while_speculating() {
        use crate::gotmpl::fmt::to_string;
        use crate::gotmpl::{ExecOptions, TemplateSet};
        use crate::helm::HelmVersion;
        let calls = [
            "FN .m",
            "FN .m \"a\"",
            "FN .m \"a\" \"z\"",
            "FN .m \"nested\" \"z\"",
            "FN .m .n",
            "FN .m.nested .n",
            "FN .m .m.nested",
            "FN (dict) .m",
            "FN (dict) .m.nested",
            "FN \"a\" .m",
            "FN .l .m",
            "FN .l",
        ];
        for version in [HelmVersion::V3, HelmVersion::V4] {
            let funcs = std::sync::Arc::new(super::super::funcs::func_map(version));
            let mut checked = 0;
            for name in funcs.names() {
                for call in calls {
                    let text = format!("{{{{ $_ := {} }}}}", call.replace("FN", name));
                    let mut set = TemplateSet::new("gotpl", std::sync::Arc::clone(&funcs));
                    if set.parse("t", &text).is_err() {
                        continue;
                    }
                    let data = shared_data();
                    let before = to_string(&data);
                    let shared = ExecShared::default().guarded(map_watermark());
                    let _ = set.execute_shared("t", data.clone(), &ExecOptions::default(), &shared);
                    assert_eq!(to_string(&data), before, "{text} changed a shared map");
                    checked += 1;
                }
            }
            // The writers are among them, and were refused.
            assert!(checked > 1000, "{checked}");
        }
    }

    /// A speculative run's shared data: maps (one nested) and a list
    /// holding a map, all made before the run's watermark.
    fn shared_data() -> Value {
        let nested = BTreeMap::from([("b".to_string(), Value::Int(2))]);
        let m = BTreeMap::from([
            ("a".to_string(), Value::Int(1)),
            ("nested".to_string(), Value::map(nested)),
        ]);
        let n = BTreeMap::from([
            ("a".to_string(), Value::Int(7)),
            ("c".to_string(), Value::Int(3)),
        ]);
        let mut top = BTreeMap::new();
        top.insert("m".to_string(), Value::map(m));
        top.insert("n".to_string(), Value::map(n.clone()));
        top.insert("l".to_string(), Value::list(vec![Value::map(n)]));
        Value::map(top)
    }

    /// With several failing templates the first in order is reported.
    #[test]
    fn the_first_error_in_order_wins() {
        let run = |i: usize, _: &ExecShared| -> Result<String, Error> {
            match i {
                3 | 6 => Err(Error::Chart(format!("t{i}"))),
                _ => Ok(i.to_string()),
            }
        };
        for _ in 0..20 {
            let r = run_all(8, &run, &ExecShared::default(), &AtomicBool::new(false));
            assert!(matches!(r, Err(Error::Chart(m)) if m == "t3"));
        }
    }
}
