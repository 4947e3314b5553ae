//! `--shard i/n`: which jobs of a plan one of n CI runners renders. Jobs
//! are dealt out round-robin in a stable order (a hash of `env/app`),
//! kustomize apps first and charts after, so shards differ by at most one
//! render of each kind and every runner of one commit agrees on the split.
//! It renders nothing.

use super::{Job, Source};

/// A stable hash of `env/app` (FNV-1a, 64-bit: the same on every platform
/// and release).
pub fn hash(env: &str, app: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in env.bytes().chain([b'/']).chain(app.bytes()) {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The jobs of shard `i` (1-based) of `n`, in plan order.
pub fn select(jobs: Vec<Job>, i: u32, n: u32) -> Vec<Job> {
    let n = u64::from(n.max(1));
    let mut order: Vec<(bool, u64, &str, &str, usize)> = jobs
        .iter()
        .enumerate()
        .map(|(k, j)| {
            let chart = matches!(j.source, Source::Helm(_));
            (
                chart,
                hash(&j.env, &j.app),
                j.env.as_str(),
                j.app.as_str(),
                k,
            )
        })
        .collect();
    order.sort_unstable();
    let mut mine = vec![false; jobs.len()];
    for (rank, (.., k)) in order.into_iter().enumerate() {
        mine[k] = rank as u64 % n == u64::from(i) - 1;
    }
    jobs.into_iter()
        .zip(mine)
        .filter_map(|(j, m)| m.then_some(j))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn job(env: &str, app: &str, chart: bool) -> Job {
        let source = if chart {
            Source::Helm(Box::default())
        } else {
            Source::Kustomize(PathBuf::from(app))
        };
        Job {
            env: env.into(),
            app: app.into(),
            source,
        }
    }

    #[test]
    fn shards_partition_the_plan_evenly_per_kind() {
        let jobs: Vec<Job> = (0..50)
            .flat_map(|i| ["dev", "prod"].map(|e| job(e, &format!("app{i}"), i % 5 == 0)))
            .collect();
        for n in 1..=4u32 {
            let mut seen = Vec::new();
            for i in 1..=n {
                let s = select(jobs.clone(), i, n);
                let charts = s
                    .iter()
                    .filter(|j| matches!(j.source, Source::Helm(_)))
                    .count();
                let apps = s.len() - charts;
                assert!(
                    apps.abs_diff(80 / n as usize) <= 1,
                    "{i}/{n}: {apps} kustomize"
                );
                assert!(
                    charts.abs_diff(20 / n as usize) <= 1,
                    "{i}/{n}: {charts} charts"
                );
                seen.extend(s.into_iter().map(|j| format!("{}/{}", j.env, j.app)));
            }
            seen.sort();
            let mut all: Vec<String> = jobs
                .iter()
                .map(|j| format!("{}/{}", j.env, j.app))
                .collect();
            all.sort();
            assert_eq!(seen, all, "n = {n}: every job exactly once");
        }
        let again = select(jobs.clone(), 2, 3);
        assert_eq!(
            again.iter().map(|j| &j.app).collect::<Vec<_>>(),
            select(jobs, 2, 3)
                .iter()
                .map(|j| &j.app)
                .collect::<Vec<_>>()
        );
    }
}
