//! Whether an arm has enough sessions to detect the effect a suite declares
//! (`min_detectable_effect`), for the warning `loopbench run` prints.

use crate::report::summary_data::Summary;
use crate::stats::{self, StatsError};

/// Sessions per arm needed, and the message to print, when `n_per_arm` is too small.
#[derive(Debug, Clone, PartialEq)]
pub struct PowerWarning {
    /// Sessions per arm the design needs.
    pub required: u64,
    /// Sessions per arm it has.
    pub have: u64,
    /// One line for the user.
    pub message: String,
}

/// Returns a warning when `n_per_arm` sessions per arm are fewer than
/// [`stats::sessions_per_arm`] needs to detect a change of `min_detectable_effect`
/// (an absolute rate difference, e.g. 0.05 for five points) from `baseline_rate`,
/// two-sided at `alpha` with `power` (Cohen's h). The other rate is
/// `baseline_rate + min_detectable_effect`, or `baseline_rate − min_detectable_effect`
/// when that would pass 1.
///
/// Errors: a rate or effect outside [0, 1], `alpha` or `power` outside (0, 1), or a
/// zero effect.
pub fn underpowered(
    metric: &str,
    n_per_arm: u64,
    baseline_rate: f64,
    min_detectable_effect: f64,
    alpha: f64,
    power: f64,
) -> Result<Option<PowerWarning>, StatsError> {
    if !(min_detectable_effect > 0.0 && min_detectable_effect <= 1.0) {
        return Err(StatsError::InvalidInput(format!(
            "min_detectable_effect must be in (0, 1], got {min_detectable_effect}"
        )));
    }
    let other = if baseline_rate + min_detectable_effect <= 1.0 {
        baseline_rate + min_detectable_effect
    } else {
        baseline_rate - min_detectable_effect
    };
    let required = stats::sessions_per_arm(baseline_rate, other, alpha, power)?;
    Ok((n_per_arm < required).then(|| PowerWarning {
        required,
        have: n_per_arm,
        message: format!(
            "{metric}: {n_per_arm} sessions per arm cannot reliably detect a change of \
             {:.1} points from {:.1}%; {required} are needed for power {power} at alpha {alpha}",
            min_detectable_effect * 100.0,
            baseline_rate * 100.0,
        ),
    }))
}

/// The power warnings of a run's summary: one per arm whose premature-done sessions
/// are too few to detect `min_detectable_effect` from the baseline's rate (two-sided,
/// alpha 0.05, power 0.8), each "arm 'A': ...". None without a baseline rate.
pub fn underpowered_arms(summary: &Summary, min_detectable_effect: f64) -> Vec<String> {
    let rows: Vec<_> = summary
        .rows
        .iter()
        .filter(|r| r.metric == "premature_done")
        .collect();
    let baseline_rate = rows
        .iter()
        .find(|r| Some(&r.arm) == summary.baseline.as_ref())
        .and_then(|r| r.rate);
    let Some(baseline_rate) = baseline_rate else {
        return Vec::new();
    };
    rows.iter()
        .filter_map(|row| {
            let effect = min_detectable_effect;
            match underpowered("premature_done", row.n, baseline_rate, effect, 0.05, 0.8) {
                Ok(Some(warning)) => Some(format!("arm '{}': {}", row.arm, warning.message)),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_few_sessions_give_a_warning_naming_the_required_number() {
        let needed = stats::sessions_per_arm(0.092, 0.092 + 0.091, 0.05, 0.8).unwrap();
        let w = underpowered("premature_done", 100, 0.092, 0.091, 0.05, 0.8)
            .unwrap()
            .unwrap();
        assert_eq!(w.required, needed);
        assert!(w.message.contains(&needed.to_string()), "{}", w.message);
        assert_eq!(
            underpowered("premature_done", needed, 0.092, 0.091, 0.05, 0.8).unwrap(),
            None
        );
    }

    #[test]
    fn an_effect_that_would_pass_one_is_measured_downwards() {
        let w = underpowered("clean_exit", 10, 0.98, 0.1, 0.05, 0.8).unwrap();
        assert_eq!(
            w.unwrap().required,
            stats::sessions_per_arm(0.98, 0.88, 0.05, 0.8).unwrap()
        );
        assert!(underpowered("m", 10, 0.5, 0.0, 0.05, 0.8).is_err());
    }
}
