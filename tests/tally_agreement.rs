//! Each rate's counting rule exists twice: on JSON records (`Tally::tally_row`, which
//! `counts_against`, the HTML report's filter and the sequential looks use) and as polars
//! expressions over the CSV tables (the report's aggregation). This property holds the
//! two equal on generated rows: for every arm and every rate, summing `tally_row` over
//! the arm's records gives the k and n that `report::aggregate` counts from the CSVs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use loopbench::rates::{Metric, Unit};
use loopbench::report::aggregate;
use proptest::prelude::*;
use serde_json::{Map, Value};

const ARMS: [&str; 2] = ["a", "b"];
const REPLICATES: u32 = 3;

/// The columns the rates of `unit` read, each once, with whether each is boolean.
fn columns(unit: Unit) -> Vec<(&'static str, bool)> {
    let mut out: Vec<(&'static str, bool)> = Vec::new();
    for m in Metric::ALL.into_iter().filter(|m| m.def().unit == unit) {
        for column in m.def().tally.columns() {
            if !out.iter().any(|(c, _)| *c == column.0) {
                out.push(column);
            }
        }
    }
    out
}

/// One cell: empty, or a value of the column's kind near the rates' thresholds.
fn cell(boolean: bool) -> BoxedStrategy<Value> {
    if boolean {
        prop_oneof![Just(Value::Null), any::<bool>().prop_map(Value::Bool)].boxed()
    } else {
        prop_oneof![Just(Value::Null), (0i64..4).prop_map(Value::from)].boxed()
    }
}

/// A row of generated cells for `columns`.
fn cells(columns: Vec<(&'static str, bool)>) -> impl Strategy<Value = Map<String, Value>> {
    let names: Vec<&'static str> = columns.iter().map(|(c, _)| *c).collect();
    columns
        .into_iter()
        .map(|(_, boolean)| cell(boolean))
        .collect::<Vec<_>>()
        .prop_map(move |values| {
            names
                .iter()
                .zip(values)
                .map(|(name, value)| (name.to_string(), value))
                .collect()
        })
}

/// A session row: its arm, replicate, whether it is the initializer, and its cells.
fn session() -> impl Strategy<Value = (usize, u32, bool, Map<String, Value>)> {
    (
        0..ARMS.len(),
        0..REPLICATES,
        prop::bool::weighted(0.2),
        cells(columns(Unit::Session)),
    )
}

fn csv_cell(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn write_tables(
    dir: &Path,
    sessions: &[(usize, u32, bool, Map<String, Value>)],
    trials: &[Map<String, Value>],
) {
    let session_columns = columns(Unit::Session);
    let mut text = String::from("trial_id,arm,task,replicate,session,kind,outcome");
    for (c, _) in &session_columns {
        let _ = write!(text, ",{c}");
    }
    text.push('\n');
    for (i, (arm, replicate, initializer, row)) in sessions.iter().enumerate() {
        let arm = ARMS[*arm];
        let kind = if *initializer {
            "initializer"
        } else {
            "coding"
        };
        let _ = write!(
            text,
            "{arm}:t:{replicate},{arm},t,{replicate},{i},{kind},completed"
        );
        for (c, _) in &session_columns {
            let _ = write!(text, ",{}", csv_cell(&row[*c]));
        }
        text.push('\n');
    }
    std::fs::write(dir.join("sessions.csv"), text).unwrap();

    let trial_columns = columns(Unit::Trial);
    let mut text = String::from("trial_id,arm,task,replicate,features_verified");
    for (c, _) in &trial_columns {
        let _ = write!(text, ",{c}");
    }
    text.push('\n');
    for (i, row) in trials.iter().enumerate() {
        let (arm, replicate) = trial_at(i);
        let _ = write!(text, "{arm}:t:{replicate},{arm},t,{replicate},1");
        for (c, _) in &trial_columns {
            let _ = write!(text, ",{}", csv_cell(&row[*c]));
        }
        text.push('\n');
    }
    std::fs::write(dir.join("trials.csv"), text).unwrap();
}

/// The arm and replicate of the `i`th trial row: every (arm, replicate) once.
fn trial_at(i: usize) -> (&'static str, u32) {
    let replicates = REPLICATES as usize;
    (ARMS[i / replicates], u32::try_from(i % replicates).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn tally_row_on_records_and_the_polars_aggregation_count_the_same(
        sessions in prop::collection::vec(session(), 1..24),
        trials in prop::collection::vec(
            cells(columns(Unit::Trial)),
            ARMS.len() * REPLICATES as usize,
        ),
    ) {
        let dir = tempfile::tempdir().unwrap();
        write_tables(dir.path(), &sessions, &trials);
        let counted = aggregate(&loopbench::store::open_run_dir(dir.path())).unwrap();

        // (arm, metric) → (k, n) summed over the records, by the JSON rule.
        let mut by_rows: BTreeMap<(&str, Metric), (u64, u64)> = BTreeMap::new();
        for metric in Metric::ALL {
            for arm in ARMS {
                by_rows.insert((arm, metric), (0, 0));
            }
            let tally = metric.def().tally;
            let rows: Vec<(&str, &Map<String, Value>)> = match metric.def().unit {
                // The initializer's session is never one of a rate's units.
                Unit::Session => sessions
                    .iter()
                    .filter(|(_, _, initializer, _)| !initializer)
                    .map(|(arm, _, _, row)| (ARMS[*arm], row))
                    .collect(),
                Unit::Trial => trials.iter().enumerate().map(|(i, row)| (trial_at(i).0, row)).collect(),
            };
            for (arm, row) in rows {
                let (k, n) = tally.tally_row(row);
                let sum = by_rows.get_mut(&(arm, metric)).unwrap();
                *sum = (sum.0 + k, sum.1 + n);
            }
        }
        for ((arm, metric), (k, n)) in by_rows {
            let polars = counted.by_arm.get(arm).map(|c| c.get(metric)).unwrap_or_default();
            prop_assert_eq!(
                (polars.k, polars.n),
                (k, n),
                "arm {} metric {}",
                arm,
                metric
            );
        }
    }
}
