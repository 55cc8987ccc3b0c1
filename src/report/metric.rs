//! The metrics of `summary.*`: declared once, in [`crate::metrics`]'s rate table.

pub use crate::metrics::{FEATURES_VERIFIED, Metric};
