//! Seeds: every random choice derives from the suite seed and the names of what it is
//! for, never from scheduling order, so results do not depend on `--jobs` or sharding.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A seed derived from `base` and a path of labels (arm, task, replicate, session, ...).
pub fn derive(base: u64, labels: &[&str]) -> u64 {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"loopbench-seed-v1");
    hasher.update(&base.to_le_bytes());
    for label in labels {
        hasher.update(&(label.len() as u64).to_le_bytes());
        hasher.update(label.as_bytes());
    }
    let bytes = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&bytes.as_bytes()[..8]);
    u64::from_le_bytes(first)
}

/// The seed of one trial: (suite seed, arm, task, replicate).
pub fn trial_seed(suite_seed: u64, arm: &str, task: &str, replicate: u32) -> u64 {
    derive(suite_seed, &[arm, task, &replicate.to_string()])
}

/// A reproducible random stream for `labels` under `base`.
pub fn rng(base: u64, labels: &[&str]) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(derive(base, labels))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_depend_on_every_label_and_not_on_concatenation() {
        let a = derive(1, &["json", "ledgerly", "3"]);
        assert_eq!(a, derive(1, &["json", "ledgerly", "3"]));
        assert_ne!(a, derive(2, &["json", "ledgerly", "3"]));
        assert_ne!(a, derive(1, &["json", "ledgerly", "4"]));
        assert_ne!(derive(1, &["ab", "c"]), derive(1, &["a", "bc"]));
    }
}
