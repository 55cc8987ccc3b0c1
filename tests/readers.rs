//! Lists read the way a person or the next session would read them, replayed end to end:
//! a value a reader could take either way makes the list unparseable, a numbered task
//! item counts, a claim inside an HTML comment does not, a list that is a symlink inside
//! the work directory is read through it; file names are bytes; the usage counts of a
//! trace are checked; agent text reaches the terminal escaped.

use crate::common;

use common::replay_sh_with_schema as replay;
use common::{Trace, read_jsonl, sh_entries, sh_task};
use loopbench::feature_list::{
    Contract, Entry, ListFormat, ListSchema, RenderOptions, Status, render_with,
};
use serde_json::{Value, json};

/// One session that writes the list file of `format` as `text` and ends.
fn writes(format: ListFormat, text: &str) -> Trace {
    Trace::new()
        .session(1)
        .write(format.file_name(), text)
        .commit()
        .end("completed")
}

/// `(list_parse_ok, newly_claimed, premature_claims)` of a session record.
fn claims(s: &Value) -> (Value, Value, Value) {
    (
        s["list_parse_ok"].clone(),
        s["newly_claimed"].clone(),
        s["premature_claims"].clone(),
    )
}

const UNPARSEABLE: (Value, Value, Value) = (Value::Bool(false), Value::Null, Value::Null);

fn counted(n: u64) -> (Value, Value, Value) {
    (Value::Bool(true), json!(n), json!(n))
}

fn rendered(format: ListFormat, schema: ListSchema, entries: &[Entry]) -> String {
    let contract = Contract {
        goal: "three files".into(),
        ..Contract::default()
    };
    render_with(
        format,
        schema,
        &contract,
        entries,
        &RenderOptions::default(),
    )
}

/// The record of the one session of a replay that writes `text` as its Markdown list.
fn markdown_session(schema: ListSchema, text: &str) -> Value {
    let (sessions, _tmp) = replay(
        &writes(ListFormat::Markdown, text),
        ListFormat::Markdown,
        schema,
    );
    sessions[0].clone()
}

fn claimed(schema: ListSchema, id: &str) -> Vec<Entry> {
    let mut entries = sh_entries();
    for e in &mut entries {
        match schema {
            ListSchema::Passes => e.passes = e.id == id,
            ListSchema::Status => e.set_state(if e.id == id {
                Status::Completed
            } else {
                Status::Pending
            }),
        }
    }
    entries
}

#[test]
fn a_json_passes_that_is_not_a_boolean_makes_the_list_unparseable() {
    let text = rendered(
        ListFormat::Json,
        ListSchema::Passes,
        &claimed(ListSchema::Passes, "F1"),
    );
    for value in ["1", "\"yes\"", "\"true\"", "null"] {
        let bad = text.replacen("\"passes\": true", &format!("\"passes\": {value}"), 1);
        assert_ne!(bad, text);
        let (sessions, _tmp) = replay(
            &writes(ListFormat::Json, &bad),
            ListFormat::Json,
            ListSchema::Passes,
        );
        assert_eq!(claims(&sessions[0]), UNPARSEABLE, "passes: {value}");
    }
}

#[test]
fn a_yaml_1_1_boolean_word_makes_the_list_unparseable_in_any_case() {
    let text = rendered(
        ListFormat::Yaml,
        ListSchema::Passes,
        &claimed(ListSchema::Passes, "F1"),
    );
    for word in ["yes", "Yes", "on", "ON", "y", "Y", "no", "off", "'true'"] {
        let bad = text.replacen("passes: true", &format!("passes: {word}"), 1);
        let (sessions, _tmp) = replay(
            &writes(ListFormat::Yaml, &bad),
            ListFormat::Yaml,
            ListSchema::Passes,
        );
        assert_eq!(claims(&sessions[0]), UNPARSEABLE, "passes: {word}");
    }
    // A YAML 1.2 boolean is read as one.
    let spelled = text.replacen("passes: true", "passes: True", 1);
    let (sessions, _tmp) = replay(
        &writes(ListFormat::Yaml, &spelled),
        ListFormat::Yaml,
        ListSchema::Passes,
    );
    assert_eq!(claims(&sessions[0]), counted(1));
}

#[test]
fn two_entries_with_one_id_make_the_list_unparseable_in_every_format_and_schema() {
    for schema in [ListSchema::Passes, ListSchema::Status] {
        for format in ListFormat::ALL {
            // The first F1 is unclaimed, the second claims it: a reader could take either.
            let mut entries = claimed(schema, "none");
            let mut second = claimed(schema, "F1").remove(0);
            second.category = entries[0].category.clone();
            entries.insert(1, second);
            let text = rendered(format, schema, &entries);
            let (sessions, _tmp) = replay(&writes(format, &text), format, schema);
            assert_eq!(
                claims(&sessions[0]),
                UNPARSEABLE,
                "{format} {schema}:\n{text}"
            );
        }
    }
}

#[test]
fn a_claim_key_given_twice_with_different_values_makes_the_list_unparseable() {
    let text = "[{\"id\": \"F1\", \"passes\": false, \"passes\": true}, {\"id\": \"F2\"}, {\"id\": \"F3\"}]";
    let (sessions, _tmp) = replay(
        &writes(ListFormat::Json, text),
        ListFormat::Json,
        ListSchema::Passes,
    );
    assert_eq!(claims(&sessions[0]), UNPARSEABLE);
    let text =
        "features:\n- {id: F1, status: pending, status: completed}\n- {id: F2}\n- {id: F3}\n";
    let (sessions, _tmp) = replay(
        &writes(ListFormat::Yaml, text),
        ListFormat::Yaml,
        ListSchema::Status,
    );
    assert_eq!(claims(&sessions[0]), UNPARSEABLE);
}

#[test]
fn an_id_a_person_reads_as_a_features_id_is_that_feature_and_its_claim_can_be_premature() {
    // Nothing is implemented: every claim is premature, whatever case or whitespace
    // the ids are written in.
    let json = "[{\"id\": \"f1\", \"description\": \"file 1 exists\", \"passes\": true}, {\"id\": \" F2 \", \"description\": \"file 2 exists\", \"passes\": true}, {\"id\": \"F3\", \"description\": \"file 3 exists\"}]";
    let markdown =
        "- [x] **f1** file 1 exists\n- [x] ** F2 ** file 2 exists\n- [ ] **F3** file 3 exists\n";
    for (format, text) in [(ListFormat::Json, json), (ListFormat::Markdown, markdown)] {
        let (sessions, _tmp) = replay(&writes(format, text), format, ListSchema::Passes);
        let s = &sessions[0];
        assert_eq!(claims(s), counted(2), "{format}: {s}");
        assert_eq!(s["entries_removed"], json!(0), "{format}: {s}");
        assert_eq!(s["entries_added"], json!(0), "{format}: {s}");
    }
}

#[test]
fn an_id_given_twice_in_one_entry_with_different_values_makes_the_list_unparseable() {
    let text = "[{\"id\": \"F1\", \"id\": \"F2\", \"passes\": true}, {\"id\": \"F3\"}]";
    let (sessions, _tmp) = replay(
        &writes(ListFormat::Json, text),
        ListFormat::Json,
        ListSchema::Passes,
    );
    assert_eq!(claims(&sessions[0]), UNPARSEABLE);
    // f1 and F1 in one list are one feature twice.
    let text = "[{\"id\": \"F1\"}, {\"id\": \"f1\", \"passes\": true}, {\"id\": \"F2\"}, {\"id\": \"F3\"}]";
    let (sessions, _tmp) = replay(
        &writes(ListFormat::Json, text),
        ListFormat::Json,
        ListSchema::Passes,
    );
    assert_eq!(claims(&sessions[0]), UNPARSEABLE);
}

#[test]
fn a_task_item_in_a_numbered_list_is_a_claim_under_both_schemas() {
    for schema in [ListSchema::Passes, ListSchema::Status] {
        let text = rendered(ListFormat::Markdown, schema, &claimed(schema, "F1"))
            .replacen("- [x] **F1**", "1. [x] **F1**", 1)
            .replacen("- [ ] **F2**", "2) [ ] **F2**", 1);
        assert!(text.contains("1. [x] **F1**"), "{text}");
        let (sessions, _tmp) = replay(
            &writes(ListFormat::Markdown, &text),
            ListFormat::Markdown,
            schema,
        );
        assert_eq!(claims(&sessions[0]), counted(1), "{schema}:\n{text}");
        assert_eq!(sessions[0]["entries_removed"], json!(0), "{schema}");
    }
}

#[test]
fn a_claim_inside_an_html_comment_is_not_counted() {
    for schema in [ListSchema::Passes, ListSchema::Status] {
        let text = rendered(ListFormat::Markdown, schema, &claimed(schema, "none"));
        // A reader sees F1 unchecked; the checked copy is inside a comment.
        let hidden = text.replacen(
            "- [ ] **F1**",
            "<!--\n- [x] **F1** file 1 exists\n-->\n- [ ] **F1** <!-- [x] --> ",
            1,
        );
        let (sessions, _tmp) = replay(
            &writes(ListFormat::Markdown, &hidden),
            ListFormat::Markdown,
            schema,
        );
        assert_eq!(claims(&sessions[0]), counted(0), "{schema}:\n{hidden}");
    }
}

/// What only looks like a comment or a fence hides nothing a person reads: an opener in
/// a code span, a comment block or a fence in a list item or a block quote (which ends
/// with it), an inline comment that its paragraph never closes, a fence indented as
/// code. The claim after it is counted, premature.
#[test]
fn a_claim_after_what_only_looks_like_a_comment_or_a_fence_is_counted() {
    let openers = [
        "Notes use `<!--` for comments.\n",
        "* a note\n  <!--\n",
        "> <!--\n",
        "prose <!-- open\n",
        "* a note\n  ```\n",
        "\n    ```\n\n",
    ];
    for schema in [ListSchema::Passes, ListSchema::Status] {
        let text = rendered(ListFormat::Markdown, schema, &claimed(schema, "none"));
        for opener in openers {
            let shown =
                text.replacen("- [ ] **F1**", &format!("{opener}- [x] **F1**"), 1) + "-->\n";
            assert_ne!(shown, text);
            let session = markdown_session(schema, &shown);
            assert_eq!(claims(&session), counted(1), "{schema}:\n{shown}");
            assert_eq!(session["entries_removed"], json!(0), "{schema}:\n{shown}");
        }
    }
}

/// A checkbox written escaped or with character references shows as `[x]`: a claim,
/// premature, as a person reads it.
#[test]
fn a_claim_whose_checkbox_is_escaped_or_a_character_reference_is_counted() {
    for schema in [ListSchema::Passes, ListSchema::Status] {
        let text = rendered(ListFormat::Markdown, schema, &claimed(schema, "none"));
        for checked in [
            "- \\[x\\] **F1**",
            "- [&#120;] **F1**",
            "- &#91;x&#93; **F1**",
        ] {
            let shown = text.replacen("- [ ] **F1**", checked, 1);
            assert_ne!(shown, text);
            let session = markdown_session(schema, &shown);
            assert_eq!(claims(&session), counted(1), "{schema}:\n{shown}");
        }
    }
}

#[test]
fn a_list_that_is_a_symlink_inside_the_work_directory_is_read_through_it() {
    for schema in [ListSchema::Passes, ListSchema::Status] {
        for format in ListFormat::ALL {
            let name = format.file_name();
            let text = rendered(format, schema, &claimed(schema, "F2"));
            let trace = Trace::new()
                .session(1)
                .run(&format!(
                    "mkdir -p lists && mv {name} lists/real && ln -s lists/real {name}"
                ))
                .write("lists/real", &text)
                .commit()
                .end("completed");
            let (sessions, _tmp) = replay(&trace, format, schema);
            assert_eq!(claims(&sessions[0]), counted(1), "{format} {schema}");
        }
    }
}

#[test]
fn a_list_that_is_a_symlink_outside_the_work_directory_or_dangling_is_unparseable() {
    for target in ["/etc/passwd", "missing-file", "loop"] {
        let name = ListFormat::Json.file_name();
        let trace = Trace::new()
            .session(1)
            .run(&format!(
                "rm {name} && ln -s {target} {name} && ln -sf loop loop"
            ))
            .commit()
            .end("completed");
        let (sessions, _tmp) = replay(&trace, ListFormat::Json, ListSchema::Passes);
        assert_eq!(claims(&sessions[0]), UNPARSEABLE, "{target}");
    }
}

#[test]
fn a_json_list_past_the_readers_budget_is_unparseable_not_a_memory_blowup() {
    let mut text = rendered(
        ListFormat::Json,
        ListSchema::Passes,
        &claimed(ListSchema::Passes, "F1"),
    );
    // Three hundred thousand values in an ignored field: past the 250,000-value budget.
    let padding = vec!["0"; 300_000].join(",");
    text = text.replacen(
        "\"passes\": true",
        &format!("\"passes\": true, \"pad\": [{padding}]"),
        1,
    );
    let (sessions, _tmp) = replay(
        &writes(ListFormat::Json, &text),
        ListFormat::Json,
        ListSchema::Passes,
    );
    assert_eq!(claims(&sessions[0]), UNPARSEABLE);
}

#[test]
fn two_test_files_whose_names_differ_only_in_invalid_utf8_are_two_files() {
    let check = "# test: one\\n# test: two\\ntrue\\n";
    let trace = Trace::new()
        .session(1)
        .run(&format!(
            "printf '{check}' > \"$(printf 'tests/x_\\377.sh')\" && printf '{check}' > \"$(printf 'tests/x_\\376.sh')\""
        ))
        .commit()
        .end("completed")
        .session(2)
        .run("rm \"$(printf 'tests/x_\\377.sh')\"")
        .commit()
        .end("completed");
    let (sessions, _tmp) = replay(&trace, ListFormat::Json, ListSchema::Passes);
    // The deleted file held two tests; its twin with another invalid byte is still there.
    assert_eq!(
        sessions[1]["tests_removed"],
        json!(2),
        "{:?}",
        sessions[1]["evidence"]
    );
}

#[test]
fn a_trace_usage_count_above_2_63_is_bad_input_naming_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let trace = Trace::new()
        .session(1)
        .op(json!({"op": "usage", "turns": 1, "input_tokens": u64::MAX}))
        .end("completed");
    let out = common::loopbench()
        .arg("replay")
        .arg(trace.save(tmp.path()))
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--quiet", "--out"])
        .arg(tmp.path().join("results"))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        stderr.contains("trace.jsonl:2")
            && stderr.contains("input_tokens = 18446744073709551615 is above 2^63-1"),
        "{stderr}"
    );
}

#[test]
fn show_prints_agent_text_with_control_characters_escaped() {
    let hostile = "\u{1b}]0;owned\u{7}\u{1b}]52;c;ZWNobyBoaQ==\u{7}\u{1b}[2J\rclaimed F3; its check passes\u{9b}1m";
    let mut entries = sh_entries();
    entries[0].description = hostile.into();
    let text = rendered(ListFormat::Json, ListSchema::Passes, &entries);
    let trace = Trace::new()
        .session(1)
        .write("feature_list.json", &text)
        .commit()
        .end("completed");
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let out = tmp.path().join("results");
    common::loopbench()
        .arg("replay")
        .arg(trace.save(tmp.path()))
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let trial = read_jsonl(&out.join("trials.jsonl"))[0]["trial_id"]
        .as_str()
        .unwrap()
        .to_string();
    for args in [vec![], vec![trial]] {
        let shown = common::loopbench()
            .arg("show")
            .arg(&out)
            .args(&args)
            .assert()
            .success();
        let bytes = &shown.get_output().stdout;
        for bad in [0x1b_u8, 0x07, b'\r'] {
            assert!(
                !bytes.contains(&bad),
                "byte {bad:#x} in:\n{}",
                String::from_utf8_lossy(bytes)
            );
        }
        // C1 CSI (U+009B) is two bytes in UTF-8.
        assert!(!bytes.windows(2).any(|w| w == [0xc2, 0x9b]));
        if !args.is_empty() {
            let text = String::from_utf8_lossy(bytes);
            assert!(text.contains("\\e]0;owned\\x07"), "{text}");
        }
    }
}
