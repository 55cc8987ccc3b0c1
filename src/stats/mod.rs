//! Statistics for comparing loopbench arms: rates, exact and asymptotic tests,
//! multiple comparisons, analyses stratified by task, bootstrap, descriptive summaries, power
//! and group-sequential designs.
//!
//! Every function is pure and names the scipy / statsmodels / numpy call whose
//! convention it follows; `tests/stats_vectors.rs` checks them against values
//! produced by those libraries (`scripts/gen_stats_vectors.py`).

mod bootstrap;
mod chisq;
mod cmh;
mod describe;
mod error;
mod fisher;
mod mannwhitney;
mod multiple;
mod power;
mod proportion;
mod sequential;
mod stratified;
mod stratum;
mod welch;

pub use bootstrap::{
    DEFAULT_RESAMPLES, cluster_bootstrap_rate, cluster_bootstrap_rates,
    cluster_bootstrap_rates_within,
};
pub use chisq::{ChiSquare, chi2_2xk};
pub use cmh::{Cmh, CmhExact, MANTEL_FLEISS_MIN, cmh, cmh_exact, mantel_fleiss};
pub use describe::{Describe, describe, percentile};
pub use error::{Result, StatsError};
pub use fisher::{Alternative, fisher_exact};
pub use mannwhitney::{MannWhitney, mann_whitney};
pub use multiple::holm;
pub use power::{power_at, proportion_effectsize, required_n_per_arm, sessions_per_arm};
pub use proportion::{Interval, clopper_pearson, newcombe_diff, wilson};
pub use sequential::{
    Crossing, LookCounts, LookDecision, MAX_LOOKS, MIN_REPEATED_P, SequentialDesign,
    SequentialSampleSize, ldof_spending, look_fractions, pooled_z, sequential_sessions_per_arm,
};
pub use stratified::{
    BreslowDay, MhOddsRatio, MhRiskDifference, Stratified, breslow_day, mh_odds_ratio,
    mh_risk_difference, stratified,
};
pub use stratum::{MAX_STRATUM_COUNT, Stratum};
pub use welch::{Welch, welch};
