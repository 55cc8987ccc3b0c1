//! Unit tests of the counts: which sessions each metric counts, the per-arm sums for
//! pooling runs, and the errors of files that do not fit.

use super::*;
use crate::error::ResultsDirError;
use crate::report::csv_batches::SESSION_BATCH_ROWS;
use crate::store::open_run_dir;

fn write(file: &Path, text: &str) {
    std::fs::write(file, text).unwrap();
}

fn sessions_csv(dir: &Path) -> std::path::PathBuf {
    open_run_dir(dir).sessions_csv()
}

fn trials_csv(dir: &Path) -> std::path::PathBuf {
    open_run_dir(dir).trials_csv()
}

const SESSION_HEADER: &str = "trial_id,arm,task,replicate,session,kind,outcome,premature_claims,desc_edits,step_edits,entries_removed,told_false,tests_removed,tests_weakened,dup_side_effects,clean_tree,progress_updated,resumed,resume_success\n";
const TRIAL_HEADER: &str = "trial_id,arm,task,replicate,features_verified,premature_victory\n";

#[test]
fn null_list_fields_leave_a_session_out_of_n_and_the_initializer_is_not_counted() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &sessions_csv(dir.path()),
        &format!(
            "{SESSION_HEADER}\
             a:t:0,a,t,0,0,initializer,completed,5,5,5,5,5,5,5,5,true,true,false,\n\
             a:t:0,a,t,0,1,coding,completed,1,0,0,0,0,2,0,0,true,true,false,\n\
             a:t:0,a,t,0,2,coding,interrupted,,,,,,0,1,0,false,true,false,\n\
             a:t:0,a,t,0,3,coding,completed,0,1,,0,2,0,0,1,true,false,true,true\n"
        ),
    );
    write(
        &trials_csv(dir.path()),
        &format!("{TRIAL_HEADER}a:t:0,a,t,0,3,true\n"),
    );
    let agg = aggregate(&open_run_dir(dir.path())).unwrap();
    let a = &agg.by_arm["a"];
    let c = |m: Metric| (a.get(m).k, a.get(m).n);
    assert_eq!(c(Metric::PrematureDone), (1, 2));
    assert_eq!(c(Metric::SpuriousDescEdit), (1, 2));
    assert_eq!(c(Metric::SpuriousStepEdit), (0, 1));
    assert_eq!(c(Metric::ToldFalse), (1, 2));
    assert_eq!(c(Metric::TestRemoval), (1, 3));
    assert_eq!(c(Metric::TestWeakening), (1, 3));
    assert_eq!(c(Metric::DupSideEffect), (1, 3));
    assert_eq!(c(Metric::CleanExit), (1, 3));
    assert_eq!(c(Metric::ResumeSuccess), (1, 1));
    assert_eq!(c(Metric::PrematureVictory), (1, 1));
    assert_eq!(a.features_verified, vec![3.0]);
    assert_eq!(a.clusters[Metric::PrematureDone.index()], vec![(1, 2)]);
    assert_eq!(a.cluster_tasks, ["t"]);
    assert_eq!(agg.by_arm_task[&("a".into(), "t".into())].rates, a.rates);
}

#[test]
fn arm_sums_are_the_per_arm_counts_of_aggregate_for_every_metric() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &sessions_csv(dir.path()),
        &format!(
            "{SESSION_HEADER}\
             a:t:0,a,t,0,0,initializer,completed,5,5,5,5,5,5,5,5,true,true,false,\n\
             a:t:0,a,t,0,1,coding,completed,1,0,0,0,0,2,0,0,true,true,false,\n\
             a:u:0,a,u,0,1,coding,interrupted,,,,,,0,1,0,false,true,false,\n\
             b:t:0,b,t,0,1,coding,completed,0,1,,0,2,0,0,1,true,false,true,true\n\
             c:t:0,c,t,0,0,initializer,completed,1,1,1,1,1,1,1,1,true,true,false,\n"
        ),
    );
    write(
        &trials_csv(dir.path()),
        &format!("{TRIAL_HEADER}a:t:0,a,t,0,3,true\na:u:0,a,u,0,1,false\nd:t:0,d,t,0,0,true\n"),
    );
    let agg = aggregate(&open_run_dir(dir.path())).unwrap();
    let sums = arm_sums(RunTables::read(&open_run_dir(dir.path())).unwrap()).unwrap();
    let arms = strings(&sums, "arm");
    // c has only an initializer: no coding session and no trial, so no arm.
    assert_eq!(arms, ["a", "b", "d"]);
    assert_eq!(agg.arms(), arms);
    for (row, arm) in arms.iter().enumerate() {
        for metric in Metric::ALL {
            assert_eq!(
                count_at(&sums, metric, row),
                agg.by_arm[arm].get(metric),
                "{arm} {metric}"
            );
        }
    }
    assert_eq!(
        count_at(&sums, Metric::PrematureVictory, 2),
        Count { k: 1, n: 1 }
    );
}

#[test]
fn only_an_arm_every_session_of_which_ended_in_error_has_no_usable_sessions() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &sessions_csv(dir.path()),
        &format!(
            "{SESSION_HEADER}\
             a:t:0,a,t,0,1,coding,error,,,,,,,,,false,false,false,\n\
             a:t:1,a,t,1,1,coding,error,,,,,,,,,false,false,false,\n\
             b:t:0,b,t,0,1,coding,error,,,,,,,,,false,false,false,\n\
             b:t:0,b,t,0,2,coding,completed,0,0,0,0,0,0,0,0,true,true,false,\n"
        ),
    );
    write(
        &trials_csv(dir.path()),
        &format!("{TRIAL_HEADER}a:t:0,a,t,0,0,false\na:t:1,a,t,1,0,false\nb:t:0,b,t,0,0,false\n"),
    );
    let agg = aggregate(&open_run_dir(dir.path())).unwrap();
    assert_eq!(agg.errored["b"], Count { k: 1, n: 2 });
    assert_eq!(
        agg.arms_without_usable_sessions(),
        vec![("a".to_string(), 2)]
    );
}

#[test]
fn an_all_empty_nullable_column_reads_as_nulls() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &sessions_csv(dir.path()),
        &format!(
            "{SESSION_HEADER}\
             a:t:0,a,t,0,1,coding,completed,,,,,,0,0,0,true,true,false,\n\
             a:t:1,a,t,1,1,coding,completed,,,,,,1,0,0,false,true,false,\n"
        ),
    );
    write(&trials_csv(dir.path()), TRIAL_HEADER);
    let agg = aggregate(&open_run_dir(dir.path())).unwrap();
    let a = &agg.by_arm["a"];
    assert_eq!(a.get(Metric::PrematureDone), Count { k: 0, n: 0 });
    assert_eq!(a.get(Metric::ResumeSuccess), Count { k: 0, n: 0 });
    assert_eq!(a.get(Metric::TestRemoval), Count { k: 1, n: 2 });
    assert_eq!(
        a.clusters[Metric::TestRemoval.index()],
        vec![(0, 1), (1, 1)]
    );
}

#[test]
fn a_missing_column_is_bad_input_naming_file_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &sessions_csv(dir.path()),
        &SESSION_HEADER.replace("told_false,", ""),
    );
    write(&trials_csv(dir.path()), TRIAL_HEADER);
    let err = aggregate(&open_run_dir(dir.path())).unwrap_err();
    assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
    assert!(
        matches!(
            &err,
            Error::ResultsDir(ResultsDirError::MissingColumn { path, column, .. })
                if path == &sessions_csv(dir.path()) && column == "told_false"
        ),
        "{err:?}"
    );
}

#[test]
fn a_missing_file_and_a_missing_directory_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    write(&sessions_csv(dir.path()), SESSION_HEADER);
    let err = aggregate(&open_run_dir(dir.path())).unwrap_err();
    assert!(
        matches!(
            &err,
            Error::ResultsDir(ResultsDirError::TableMissing { path })
                if path == &trials_csv(dir.path())
        ),
        "{err:?}"
    );
    let nope = dir.path().join("nope");
    let err = aggregate(&open_run_dir(&nope)).unwrap_err();
    assert!(
        matches!(&err, Error::ResultsDir(ResultsDirError::RunMissing { dir }) if dir == &nope),
        "{err:?}"
    );
}

#[test]
fn an_unparsable_cell_is_bad_input_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    write(
        &sessions_csv(dir.path()),
        &format!(
            "{SESSION_HEADER}a:t:0,a,t,0,1,coding,completed,x,0,0,0,0,0,0,0,true,true,false,\n"
        ),
    );
    write(&trials_csv(dir.path()), TRIAL_HEADER);
    let err = aggregate(&open_run_dir(dir.path())).unwrap_err();
    assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT, "{err}");
    assert!(
        matches!(
            &err,
            Error::BadLine { file, line: 2, message }
                if file == &sessions_csv(dir.path())
                    && message.starts_with("column 8 (premature_claims): 'x' is not a whole number")
        ),
        "{err:?}"
    );
}

/// A run of three arms whose trials' sessions lie across batches of three rows: trial
/// a:t:0 has rows in the first two batches, and b:t:0's rows are split by a:u:0's.
fn write_run_of_many_batches(dir: &Path) {
    write(
        &sessions_csv(dir),
        &format!(
            "{SESSION_HEADER}\
             a:t:0,a,t,0,0,initializer,completed,5,5,5,5,5,5,5,5,true,true,false,\n\
             a:t:0,a,t,0,1,coding,completed,1,0,0,0,0,2,0,0,true,true,false,\n\
             a:t:0,a,t,0,2,coding,error,,,,,,,,,false,false,false,\n\
             a:t:0,a,t,0,3,coding,completed,0,1,,0,2,0,0,1,true,false,true,true\n\
             b:t:0,b,t,0,1,coding,completed,1,1,1,1,1,1,1,1,true,true,false,\n\
             a:u:0,a,u,0,1,coding,interrupted,,,,,,0,1,0,false,true,false,\n\
             b:t:0,b,t,0,2,coding,completed,0,0,0,0,0,0,0,0,false,true,true,false\n\
             c:t:0,c,t,0,0,initializer,error,1,1,1,1,1,1,1,1,true,true,false,\n\
             a:t:1,a,t,1,1,coding,completed,2,0,0,0,0,0,0,0,true,true,false,\n\
             b:t:0,b,t,0,3,coding,error,,,,,,,,,false,false,false,\n"
        ),
    );
    write(
        &trials_csv(dir),
        &format!(
            "{TRIAL_HEADER}a:t:0,a,t,0,3,true\na:u:0,a,u,0,1,false\n\
             b:t:0,b,t,0,2,true\na:t:1,a,t,1,0,false\n"
        ),
    );
}

fn tables_in_batches_of(dir: &Path, rows: usize) -> RunTables {
    let mut tables = RunTables::read(&open_run_dir(dir)).unwrap();
    tables.sessions.batch_rows = rows;
    tables
}

#[test]
fn counts_read_in_batches_of_three_rows_are_those_read_in_one_batch() {
    let dir = tempfile::tempdir().unwrap();
    write_run_of_many_batches(dir.path());
    let whole = aggregate(&open_run_dir(dir.path())).unwrap();
    for rows in [1, 2, 3, 4] {
        let batched = aggregate_tables(tables_in_batches_of(dir.path(), rows)).unwrap();
        assert_eq!(batched, whole, "batches of {rows}");
        let sums = arm_task_sums(tables_in_batches_of(dir.path(), rows)).unwrap();
        assert_eq!(
            sums,
            arm_task_sums(RunTables::read(&open_run_dir(dir.path())).unwrap()).unwrap(),
            "batches of {rows}"
        );
    }
    // What the batches add up to, counted by hand: a:t:0's coding sessions 1 to 3 (in
    // two batches) and a:t:1's, whose `premature_claims` (1, null, 0, 2) give k 2 of n 3.
    let a = &whole.by_arm["a"];
    assert_eq!(
        a.clusters[Metric::PrematureDone.index()],
        vec![(1, 2), (1, 1), (0, 0)]
    );
    assert_eq!(a.cluster_tasks, ["t", "t", "u"]);
    assert_eq!(whole.errored["a"], Count { k: 1, n: 6 });
    assert_eq!(whole.errored["b"], Count { k: 1, n: 3 });
    assert_eq!(whole.errored["c"], Count { k: 1, n: 1 });
    assert_eq!(
        whole.by_arm["b"].get(Metric::CleanExit),
        Count { k: 1, n: 3 }
    );
}

#[test]
fn a_second_row_for_a_session_in_a_later_batch_is_refused_naming_both_lines() {
    let dir = tempfile::tempdir().unwrap();
    write_run_of_many_batches(dir.path());
    let text = std::fs::read_to_string(sessions_csv(dir.path())).unwrap();
    // Line 3 (a:t:0 session 1) again as line 12, three batches of three rows later.
    let repeated = text.lines().nth(2).unwrap();
    write(&sessions_csv(dir.path()), &format!("{text}{repeated}\n"));
    let want = "sessions.csv:12: a second row for trial_id 'a:t:0', session '1' (the first is \
                on line 3); each (trial_id, session) has one row";
    for rows in [3, SESSION_BATCH_ROWS] {
        let err = aggregate_tables(tables_in_batches_of(dir.path(), rows)).unwrap_err();
        assert!(matches!(err, Error::BadLine { .. }), "{err}");
        assert!(err.to_string().ends_with(want), "batches of {rows}: {err}");
        let err = arm_task_sums(tables_in_batches_of(dir.path(), rows)).unwrap_err();
        assert!(err.to_string().ends_with(want), "batches of {rows}: {err}");
    }
}

#[test]
fn a_bad_cell_in_a_later_batch_is_named_by_its_line_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write_run_of_many_batches(dir.path());
    let text = std::fs::read_to_string(sessions_csv(dir.path())).unwrap();
    // Line 10 (a:t:1), in the third batch, with a negative count.
    let text = text.replace(
        "a:t:1,a,t,1,1,coding,completed,2,",
        "a:t:1,a,t,1,1,coding,completed,-2,",
    );
    write(&sessions_csv(dir.path()), &text);
    let err = aggregate_tables(tables_in_batches_of(dir.path(), 3)).unwrap_err();
    assert!(
        err.to_string()
            .contains("sessions.csv:10: column 8 (premature_claims): '-2' is negative"),
        "{err}"
    );
}
