//! The order gold is applied in: dependencies first, ties by id in natural order
//! (`F2` before `F10`), and the `depends_on` closure of a feature.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::suite::Task;

/// Compares two feature ids the way a person reads them: runs of digits as numbers.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    fn chunks(s: &str) -> Vec<(bool, &str)> {
        let mut out = Vec::new();
        let mut start = 0;
        let bytes = s.as_bytes();
        for i in 1..=bytes.len() {
            if i == bytes.len() || bytes[i].is_ascii_digit() != bytes[start].is_ascii_digit() {
                out.push((bytes[start].is_ascii_digit(), &s[start..i]));
                start = i;
            }
        }
        out
    }
    let (ca, cb) = (chunks(a), chunks(b));
    for ((da, xa), (db, xb)) in ca.iter().zip(&cb) {
        let by = if *da && *db {
            let (ta, tb) = (xa.trim_start_matches('0'), xb.trim_start_matches('0'));
            ta.len().cmp(&tb.len()).then(ta.cmp(tb))
        } else {
            xa.cmp(xb)
        };
        if by != Ordering::Equal {
            return by;
        }
    }
    ca.len().cmp(&cb.len()).then(a.cmp(b))
}

/// Indices of `task.features` in dependency order, ties by id. The task loader has
/// refused cycles, so every feature is placed.
pub fn dependency_order(task: &Task) -> Vec<usize> {
    let mut placed: Vec<usize> = Vec::new();
    let mut done: BTreeSet<&str> = BTreeSet::new();
    while placed.len() < task.features.len() {
        let next = task
            .features
            .iter()
            .enumerate()
            .filter(|(_, f)| !done.contains(f.id.as_str()))
            .filter(|(_, f)| f.depends_on.iter().all(|d| done.contains(d.as_str())))
            .min_by(|(_, a), (_, b)| natural_cmp(&a.id, &b.id))
            .map(|(i, _)| i);
        let Some(i) = next else { break };
        done.insert(task.features[i].id.as_str());
        placed.push(i);
    }
    placed
}

/// Indices of the features `feature` needs by `depends_on`, transitively, in
/// dependency order (itself not included).
pub fn closure(task: &Task, order: &[usize], feature: usize) -> Vec<usize> {
    let mut needed: BTreeSet<&str> = BTreeSet::new();
    let mut stack: Vec<&str> = task.features[feature]
        .depends_on
        .iter()
        .map(String::as_str)
        .collect();
    while let Some(id) = stack.pop() {
        if needed.insert(id)
            && let Some(f) = task.feature(id)
        {
            stack.extend(f.depends_on.iter().map(String::as_str));
        }
    }
    order
        .iter()
        .copied()
        .filter(|&i| needed.contains(task.features[i].id.as_str()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order_reads_digit_runs_as_numbers() {
        let mut ids = vec!["F10", "F2", "F1", "G1", "F02"];
        ids.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(ids, ["F1", "F02", "F2", "F10", "G1"]);
    }

    fn task(toml: &str) -> (tempfile::TempDir, Task) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        std::fs::create_dir_all(dir.path().join("oracle/tests")).unwrap();
        std::fs::write(dir.path().join("task.toml"), toml).unwrap();
        let task = Task::load(dir.path()).unwrap();
        (dir, task)
    }

    #[test]
    fn dependencies_come_first_and_ties_go_by_id() {
        let mut toml = String::from(
            "name = \"t\"\ngoal = \"g\"\ntests = { glob = \"tests/*.py\", count_pattern = 'x' }\n",
        );
        for (id, deps) in [("F10", ""), ("F3", "\"F10\""), ("F2", ""), ("F1", "\"F3\"")] {
            toml += &format!(
                "[[feature]]\nid = \"{id}\"\ndescription = \"d\"\nverify = \"true\"\ndepends_on = [{deps}]\n"
            );
        }
        let (_dir, task) = task(&toml);
        let order = dependency_order(&task);
        let ids: Vec<&str> = order
            .iter()
            .map(|&i| task.features[i].id.as_str())
            .collect();
        assert_eq!(ids, ["F2", "F10", "F3", "F1"]);
        let needs: Vec<&str> = closure(&task, &order, 3)
            .iter()
            .map(|&i| task.features[i].id.as_str())
            .collect();
        assert_eq!(needs, ["F10", "F3"]);
    }
}
