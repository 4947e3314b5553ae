//! The `.` each template runs with. helm's `recAllTpls` makes one map per
//! chart (`Chart`, `Files`, `Release`, `Capabilities`, `Values`,
//! `Subcharts`) that all of the chart's templates share, and a parent's
//! `.Subcharts.<name>` is that same map. Before running each template,
//! `engine.render` sets `Template` on its chart's map. So a template sees,
//! on its own and on its subcharts' maps, the `Template` of the last one
//! run, and what a template `set`s on `$` stays there for later ones.
//!
//! Run one by one, templates get the shared maps ([`Scopes::shared`]).
//! Run at once (`execute.rs`), each gets copies made before the run
//! ([`Scopes::copies`]) showing `Template` as it would be at its turn; the
//! copies are older than the run's watermark, so a template that changes
//! them is stopped and run again alone, on the shared maps. It owns no
//! template execution and builds no scope entries but `Template` and
//! `Subcharts`: `render.rs` passes the rest in.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::gotmpl::value::Map;
use crate::gotmpl::Value;

/// One chart's shared map and where it sits in the chart tree.
struct ChartScope {
    map: Arc<Map>,
    parent: Option<usize>,
    /// `Subcharts` entries: name → chart index.
    subcharts: Vec<(String, usize)>,
}

/// The scopes of one render: a map per chart and, per executed template
/// in helm's order, its chart and its `Template` value.
#[derive(Default)]
pub(super) struct Scopes {
    charts: Vec<ChartScope>,
    jobs: Vec<(usize, Value)>,
    /// How many jobs' `Template` the shared maps show: one-by-one runs
    /// come in order but may start after a speculative run's first jobs.
    applied: Mutex<usize>,
}

impl Scopes {
    /// Adds a chart whose map has `entries` and whose subcharts (added
    /// before it) are `subcharts`; returns its index. Sets `Subcharts`.
    pub(super) fn add_chart(
        &mut self,
        mut entries: BTreeMap<String, Value>,
        subcharts: Vec<(String, usize)>,
    ) -> usize {
        let id = self.charts.len();
        let subs = subcharts
            .iter()
            .map(|(name, c)| (name.clone(), Value::Map(Arc::clone(&self.charts[*c].map))))
            .collect();
        entries.insert("Subcharts".into(), Value::map(subs));
        for (_, c) in &subcharts {
            self.charts[*c].parent = Some(id);
        }
        self.charts.push(ChartScope {
            map: Arc::new(Map::new(crate::gotmpl::Elem::Interface, entries)),
            parent: None,
            subcharts,
        });
        id
    }

    /// Chart `chart`'s shared map, as a value.
    pub(super) fn map(&self, chart: usize) -> Value {
        Value::Map(Arc::clone(&self.charts[chart].map))
    }

    /// Adds the next template to execute, in helm's order: it runs in
    /// chart `chart` as `name` under `base_path`.
    pub(super) fn add_job(&mut self, chart: usize, name: &str, base_path: &str) {
        // engine.render: vals["Template"] = chartutil.Values{"Name": ..., "BasePath": ...}
        let mut t = BTreeMap::new();
        t.insert("Name".to_string(), Value::from(name));
        t.insert("BasePath".to_string(), Value::from(base_path));
        self.jobs.push((chart, Value::map(t)));
    }

    /// The `.` of job `i` run one by one, in order: its chart's shared map,
    /// with `Template` set as helm sets it for this and every earlier job
    /// not yet applied.
    pub(super) fn shared(&self, i: usize) -> Value {
        let mut applied = self.applied.lock().unwrap_or_else(|e| e.into_inner());
        for (chart, template) in self.jobs.iter().take(i + 1).skip(*applied) {
            self.charts[*chart]
                .map
                .insert("Template".into(), template.clone());
        }
        *applied = (*applied).max(i + 1);
        self.map(self.jobs[i].0)
    }

    /// A `.` for every job run at once: copies of its chart's map and of
    /// its subcharts' maps, `Template` as it would be at the job's turn.
    /// Jobs share the copies of charts that no job between them touched.
    pub(super) fn copies(&self) -> Vec<Value> {
        let mut last: Vec<Option<usize>> = vec![None; self.charts.len()];
        let mut cache: Vec<Option<Value>> = vec![None; self.charts.len()];
        let mut out = Vec::with_capacity(self.jobs.len());
        for (i, (chart, _)) in self.jobs.iter().enumerate() {
            last[*chart] = Some(i);
            // The copies that show this chart's `Template` are stale.
            let mut up = Some(*chart);
            while let Some(c) = up {
                cache[c] = None;
                up = self.charts[c].parent;
            }
            out.push(self.copy(*chart, &last, &mut cache));
        }
        out
    }

    /// Chart `c`'s map as `last` says it is, its subcharts' from `cache`
    /// where they are there.
    fn copy(&self, c: usize, last: &[Option<usize>], cache: &mut [Option<Value>]) -> Value {
        if let Some(v) = &cache[c] {
            return v.clone();
        }
        let scope = &self.charts[c];
        let mut entries: BTreeMap<String, Value> = scope.map.entries().into_iter().collect();
        let subs = scope
            .subcharts
            .iter()
            .map(|(name, s)| (name.clone(), self.copy(*s, last, cache)))
            .collect();
        entries.insert("Subcharts".into(), Value::map(subs));
        match last[c] {
            Some(j) => entries.insert("Template".into(), self.jobs[j].1.clone()),
            None => entries.remove("Template"),
        };
        let v = Value::map(entries);
        cache[c] = Some(v.clone());
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template_name(scope: &Value, path: &[&str]) -> String {
        let mut v = scope.clone();
        for key in path {
            v = match v {
                Value::Map(m) => m.get(key).unwrap_or(Value::Nil),
                _ => Value::Nil,
            };
        }
        match v {
            Value::Map(m) => match m.get("Name") {
                Some(Value::Str(s)) => s.to_string(),
                _ => "?".into(),
            },
            _ => "-".into(),
        }
    }

    /// A parent with one subchart; helm's order runs `sub/b`, `top/deep`,
    /// `sub/a`, `top/x`: copies and shared maps agree on what each sees.
    #[test]
    fn copies_show_what_the_shared_maps_show_in_order() {
        let mut s = Scopes::default();
        let sub = s.add_chart(BTreeMap::new(), vec![]);
        let top = s.add_chart(BTreeMap::new(), vec![("sub".into(), sub)]);
        for (c, n) in [
            (sub, "sub/b"),
            (top, "top/deep"),
            (sub, "sub/a"),
            (top, "top/x"),
        ] {
            s.add_job(c, n, "");
        }
        let copies = s.copies();
        let seen = |v: &Value| {
            (
                template_name(v, &["Template"]),
                template_name(v, &["Subcharts", "sub", "Template"]),
            )
        };
        let want = [
            ("sub/b", "-"),
            ("top/deep", "sub/b"),
            ("sub/a", "-"),
            ("top/x", "sub/a"),
        ];
        for (i, (own, sub_t)) in want.iter().enumerate() {
            let (a, b) = seen(&copies[i]);
            assert_eq!((a.as_str(), b.as_str()), (*own, *sub_t), "copy {i}");
            let (a, b) = seen(&s.shared(i));
            assert_eq!((a.as_str(), b.as_str()), (*own, *sub_t), "shared {i}");
        }
        // The copies of jobs 2 and 3 are of separate maps; the shared one
        // is the one the parent's `Subcharts` holds.
        assert!(!Arc::ptr_eq(
            match &copies[2] {
                Value::Map(m) => m,
                _ => unreachable!(),
            },
            &s.charts[sub].map
        ));
    }

    /// One-by-one runs that start after a speculative run's first jobs
    /// see those jobs' `Template`s.
    #[test]
    fn shared_maps_catch_up_with_skipped_jobs() {
        let mut s = Scopes::default();
        let sub = s.add_chart(BTreeMap::new(), vec![]);
        let top = s.add_chart(BTreeMap::new(), vec![("sub".into(), sub)]);
        s.add_job(sub, "sub/b", "");
        s.add_job(top, "top/x", "");
        let v = s.shared(1);
        assert_eq!(
            template_name(&v, &["Subcharts", "sub", "Template"]),
            "sub/b"
        );
        assert_eq!(template_name(&v, &["Template"]), "top/x");
    }
}
