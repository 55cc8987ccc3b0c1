//! The sentences every report of a simulated run or of one shard carries.

/// The sentence every report of a simulated run carries.
pub const SIMULATED_NOTE: &str = "simulated agent: these numbers are synthetic";

/// The sentence every report of one shard carries: its tables compare the arms on a
/// slice of the trials, which is not the study.
pub fn shard_note(shard: &str) -> String {
    format!(
        "shard {shard}: these numbers are of this shard's slice of the trials, not of the \
         study; `loopbench merge` the shards for its verdict"
    )
}
