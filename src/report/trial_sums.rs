//! The session-level counts of each trial, summed over the batches of `sessions.csv` as
//! each batch is reduced (a trial's sessions may be in two), held in the order of the
//! bootstrap's clusters: arm, task, then trial id, each by its bytes. Summed here as
//! they arrive, the batches' per-trial frames are never stacked, grouped again and
//! sorted: three copies of every trial's counts at the end of a large run.

use std::collections::BTreeMap;

use polars::prelude::*;

use crate::rates::Metric;

/// Per arm, per task, per trial id: the k and n of every session-level metric, in
/// [`TrialSums::metrics`] order (k, n, k, n, ...). A trial's count is at most its
/// sessions, so 32 bits hold it, at half the bytes a trial of 64.
type ByArm = BTreeMap<String, BTreeMap<String, BTreeMap<String, Box<[u32]>>>>;

/// The session-level counts of every trial seen so far.
pub struct TrialSums {
    metrics: Vec<Metric>,
    by_arm: ByArm,
}

impl Default for TrialSums {
    fn default() -> TrialSums {
        TrialSums {
            metrics: Metric::ALL
                .into_iter()
                .filter(|m| m.is_session_level())
                .collect(),
            by_arm: BTreeMap::new(),
        }
    }
}

impl TrialSums {
    /// The session-level metrics, in the order of each trial's counts.
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// Adds one batch's per-trial sums: a frame with `arm`, `task`, `trial_id` and, named
    /// by `columns` (k then n of each metric of [`TrialSums::metrics`], in order), the
    /// UInt64 counts of every session-level metric, one row a trial. A null count adds
    /// nothing; a trial's sum past `u32::MAX` is an error.
    pub fn add(&mut self, batch: &DataFrame, columns: &[String]) -> PolarsResult<()> {
        let arms = batch.column("arm")?.str()?;
        let tasks = batch.column("task")?.str()?;
        let ids = batch.column("trial_id")?.str()?;
        if columns.len() != 2 * self.metrics.len() {
            return Err(PolarsError::ComputeError(
                format!(
                    "{} count columns for {} session-level metrics",
                    columns.len(),
                    self.metrics.len()
                )
                .into(),
            ));
        }
        let counts = columns
            .iter()
            .map(|name| batch.column(name)?.u64())
            .collect::<PolarsResult<Vec<_>>>()?;
        for row in 0..batch.height() {
            let (arm, task, id) = (
                arms.get(row).unwrap_or(""),
                tasks.get(row).unwrap_or(""),
                ids.get(row).unwrap_or(""),
            );
            let sums = self.trial(arm, task, id);
            for (sum, column) in sums.iter_mut().zip(&counts) {
                *sum = u32::try_from(column.get(row).unwrap_or(0))
                    .ok()
                    .and_then(|v| sum.checked_add(v))
                    .ok_or_else(|| {
                        PolarsError::ComputeError(
                            format!("trial '{id}' counts more than {} sessions", u32::MAX).into(),
                        )
                    })?;
            }
        }
        Ok(())
    }

    /// The counts of trial `id`, zeros when it is new.
    fn trial(&mut self, arm: &str, task: &str, id: &str) -> &mut [u32] {
        let width = 2 * self.metrics.len();
        self.by_arm
            .entry(arm.to_string())
            .or_default()
            .entry(task.to_string())
            .or_default()
            .entry(id.to_string())
            .or_insert_with(|| vec![0; width].into_boxed_slice())
    }

    /// The arms with a trial, in order.
    pub fn arms(&self) -> impl Iterator<Item = &str> {
        self.by_arm.keys().map(String::as_str)
    }

    /// Takes `arm`'s tasks out, by task and then trial id, each trial with its counts:
    /// what is taken is no longer held here, so that the counts are never held twice
    /// while they are moved into the report's lists.
    pub fn take_arm(&mut self, arm: &str) -> BTreeMap<String, BTreeMap<String, Box<[u32]>>> {
        self.by_arm.remove(arm).unwrap_or_default()
    }

    /// How many trials `arm` has.
    pub fn trials_of(&self, arm: &str) -> usize {
        self.by_arm
            .get(arm)
            .map_or(0, |tasks| tasks.values().map(BTreeMap::len).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count columns of the test's batches, k then n of each metric.
    fn names() -> Vec<String> {
        let metrics = TrialSums::default().metrics().len();
        (0..2 * metrics).map(|i| format!("c{i}")).collect()
    }

    fn batch(rows: &[(&str, &str, &str, u64)]) -> DataFrame {
        let mut columns = vec![
            Column::new("arm".into(), rows.iter().map(|r| r.0).collect::<Vec<_>>()),
            Column::new("task".into(), rows.iter().map(|r| r.1).collect::<Vec<_>>()),
            Column::new(
                "trial_id".into(),
                rows.iter().map(|r| r.2).collect::<Vec<_>>(),
            ),
        ];
        for (i, name) in names().into_iter().enumerate() {
            // k, then n = k + 1.
            let counts: Vec<u64> = rows.iter().map(|r| r.3 + (i % 2) as u64).collect();
            columns.push(Column::new(name.into(), counts));
        }
        DataFrame::new(rows.len(), columns).unwrap()
    }

    #[test]
    fn a_trial_in_two_batches_sums_once_and_trials_come_in_byte_order() {
        let mut sums = TrialSums::default();
        sums.add(
            &batch(&[("b", "t", "b-2", 1), ("a", "u", "a-1", 2)]),
            &names(),
        )
        .unwrap();
        let second = [
            ("b", "t", "b-2", 3),
            ("b", "t", "B-9", 0),
            ("a", "t", "a-3", 1),
        ];
        sums.add(&batch(&second), &names()).unwrap();
        assert_eq!(sums.arms().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(sums.trials_of("a"), 2);
        assert_eq!(sums.trials_of("b"), 2);
        assert_eq!(sums.trials_of("c"), 0);
        // Taken out by task and trial id, and no longer held.
        let taken = |sums: &mut TrialSums, arm: &str| -> Vec<(String, Vec<Box<[u32]>>)> {
            sums.take_arm(arm)
                .into_iter()
                .map(|(t, trials)| (t, trials.into_values().collect()))
                .collect()
        };
        let b = taken(&mut sums, "b");
        assert_eq!(b.len(), 1);
        // "B-9" before "b-2": bytes, not case-folded.
        assert_eq!(b[0].1[0][..2], [0, 1]);
        assert_eq!(b[0].1[1][..2], [4, 6]);
        assert_eq!(sums.trials_of("b"), 0);
        assert_eq!(sums.arms().collect::<Vec<_>>(), ["a"]);
        let a_tasks: Vec<String> = taken(&mut sums, "a").into_iter().map(|(t, _)| t).collect();
        assert_eq!(a_tasks, ["t", "u"]);
        assert_eq!(sums.arms().count(), 0);
    }

    #[test]
    fn a_trial_counting_past_32_bits_is_an_error_naming_it() {
        let mut sums = TrialSums::default();
        let most = u64::from(u32::MAX) - 1;
        sums.add(&batch(&[("a", "t", "a-1", most)]), &names())
            .unwrap();
        let err = sums
            .add(&batch(&[("a", "t", "a-1", 1)]), &names())
            .unwrap_err();
        assert!(
            err.to_string().contains("trial 'a-1' counts more than"),
            "{err}"
        );
        let err = TrialSums::default()
            .add(&batch(&[("a", "t", "a-2", 1 << 32)]), &names())
            .unwrap_err();
        assert!(err.to_string().contains("trial 'a-2'"), "{err}");
    }
}
