//! Error type shared by every function in [`crate::stats`], plus input checks.

/// Why a statistics function refused its input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StatsError {
    /// The input is outside the function's domain (k > n, n = 0, confidence
    /// outside (0, 1), an empty or NaN-containing sample, ...).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// The input is valid but the statistic is undefined for it (both Welch
    /// samples constant, a zero expected count in a chi-square table, ...).
    /// scipy returns NaN or raises in these cases.
    #[error("statistic undefined: {0}")]
    Undefined(String),
}

/// Result alias used throughout [`crate::stats`].
pub type Result<T> = std::result::Result<T, StatsError>;

pub(crate) fn invalid<T>(msg: impl Into<String>) -> Result<T> {
    Err(StatsError::InvalidInput(msg.into()))
}

/// Checks that a confidence level lies strictly inside (0, 1).
pub(crate) fn check_confidence(confidence: f64) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        invalid(format!("confidence must be in (0, 1), got {confidence}"))
    }
}

/// Checks that a probability lies in [0, 1] (and is not NaN).
pub(crate) fn check_probability(name: &str, p: f64) -> Result<()> {
    if (0.0..=1.0).contains(&p) {
        Ok(())
    } else {
        invalid(format!("{name} must be in [0, 1], got {p}"))
    }
}

/// Checks that a count k of n is possible and n > 0.
pub(crate) fn check_count(k: u64, n: u64) -> Result<()> {
    if n == 0 {
        invalid("n must be positive")
    } else if k > n {
        invalid(format!("k = {k} exceeds n = {n}"))
    } else {
        Ok(())
    }
}

/// Checks that a sample is non-empty and has only finite values.
pub(crate) fn check_sample(name: &str, x: &[f64]) -> Result<()> {
    if x.is_empty() {
        invalid(format!("sample {name} is empty"))
    } else if x.iter().any(|v| !v.is_finite()) {
        invalid(format!("sample {name} contains a NaN or infinite value"))
    } else {
        Ok(())
    }
}
