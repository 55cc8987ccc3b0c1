//! What the verify cache holds: the answers of verify commands keyed by what they
//! checked, shared by the trials of a run, in a fixed memory budget whatever the run's
//! size.
//!
//! The cache answers a check on a tree it has seen; a failing answer keeps the end of
//! its output (up to [`super::OUTPUT_TAIL_BYTES`]). The simulated agent's trees repeat
//! (the default suite's json arm ran 2,842 checks at 500 trials and 4,924 at 2,000, and
//! answered the other 95% from the cache), but a real agent's rarely do, and a cache
//! that kept every answer grew with such a run's sessions. It keeps two generations
//! instead: answers go into the current one; when that reaches its budget it becomes
//! the previous one and the one before is dropped; an answer found in the previous
//! generation moves back into the current. What trials keep asking (the task's starting
//! tree, the gold) stays; an answer dropped is only asked again, never answered wrong:
//! a check's answer depends on the key alone, or the suite turns the cache off.

use std::collections::HashMap;

/// What an answer holds in memory beside its key, for the budget.
pub trait Held {
    /// Bytes on the heap and in the answer itself.
    fn held_bytes(&self) -> usize;
}

/// The two generations of answers, and the bytes the current one holds.
#[derive(Debug)]
pub struct Generations<V> {
    current: HashMap<blake3::Hash, V>,
    previous: HashMap<blake3::Hash, V>,
    current_bytes: usize,
    budget: usize,
}

impl<V: Clone + Held> Generations<V> {
    /// Generations of about `budget` bytes each: two are at most twice that.
    pub fn new(budget: usize) -> Generations<V> {
        Generations {
            current: HashMap::new(),
            previous: HashMap::new(),
            current_bytes: 0,
            budget,
        }
    }

    /// The answer under `key`, moved into the current generation.
    pub fn get(&mut self, key: &blake3::Hash) -> Option<V> {
        if let Some(found) = self.current.get(key) {
            return Some(found.clone());
        }
        let found = self.previous.remove(key)?;
        self.put(*key, found.clone());
        Some(found)
    }

    /// Whether `key` has an answer.
    pub fn contains(&self, key: &blake3::Hash) -> bool {
        self.current.contains_key(key) || self.previous.contains_key(key)
    }

    /// Keeps `answer` under `key`.
    pub fn put(&mut self, key: blake3::Hash, answer: V) {
        let bytes = entry_bytes(&answer);
        if let Some(replaced) = self.current.insert(key, answer) {
            self.current_bytes = self.current_bytes.saturating_sub(entry_bytes(&replaced));
        }
        self.current_bytes += bytes;
        if self.current_bytes >= self.budget {
            self.previous = std::mem::take(&mut self.current);
            self.current_bytes = 0;
        }
    }

    /// How many answers are held.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.current.len() + self.previous.len()
    }
}

/// What an answer holds with its key and the map's own bookkeeping.
fn entry_bytes<V: Held>(answer: &V) -> usize {
    std::mem::size_of::<blake3::Hash>() + 1 + answer.held_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, PartialEq)]
    struct Answer(String);

    impl Held for Answer {
        fn held_bytes(&self) -> usize {
            std::mem::size_of::<Answer>() + self.0.len()
        }
    }

    fn key(n: u32) -> blake3::Hash {
        blake3::hash(&n.to_le_bytes())
    }

    fn failed(n: u32) -> Answer {
        Answer(format!("{n:>2000}"))
    }

    #[test]
    fn an_answer_comes_back_as_it_was_put() {
        let mut memo = Generations::new(4 << 20);
        memo.put(key(1), Answer("passed".into()));
        memo.put(key(2), failed(2));
        assert_eq!(memo.get(&key(1)), Some(Answer("passed".into())));
        assert_eq!(memo.get(&key(2)), Some(failed(2)));
        assert_eq!(memo.get(&key(3)), None);
        assert!(memo.contains(&key(2)) && !memo.contains(&key(3)));
    }

    #[test]
    fn a_long_run_of_new_answers_stays_within_two_generations() {
        let budget = 64 << 10;
        let mut memo = Generations::new(budget);
        let per_answer = entry_bytes(&failed(0));
        for n in 0..10_000 {
            memo.put(key(n), failed(n));
        }
        // Each generation ends at its first answer past the budget.
        let most = 2 * (budget / per_answer + 1);
        assert!(memo.len() <= most, "{} answers, at most {most}", memo.len());
        assert!(memo.len() >= budget / per_answer, "{} answers", memo.len());
        // The newest are there; the oldest were dropped, and are not answered.
        assert_eq!(memo.get(&key(9_999)), Some(failed(9_999)));
        assert_eq!(memo.get(&key(0)), None);
    }

    #[test]
    fn an_answer_asked_for_again_outlives_the_generations() {
        let mut memo = Generations::new(16 << 10);
        memo.put(key(0), failed(0));
        for n in 1..5_000 {
            memo.put(key(n), failed(n));
            // The task's starting tree, asked by every trial.
            assert_eq!(memo.get(&key(0)), Some(failed(0)), "lost after {n} answers");
        }
    }
}
