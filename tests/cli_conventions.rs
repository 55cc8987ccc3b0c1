//! Conventions of the command line a user knows from other tools: shell completions and
//! a man page generated from the same definition as `--help`, and examples in every
//! subcommand's help.

use crate::common;

use clap::CommandFactory;
use common::loopbench;

/// The visible subcommands, as the binary's own definition has them.
fn subcommands() -> Vec<String> {
    loopbench::cli::Cli::command()
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect()
}

fn stdout_of(args: &[&str]) -> String {
    let out = loopbench().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

#[test]
fn bash_completion_script_offers_every_subcommand() {
    let script = stdout_of(&["completions", "bash"]);
    assert!(script.contains("complete -F _loopbench"), "{script}");
    let subcommands = subcommands();
    assert!(subcommands.len() > 10, "{subcommands:?}");
    for name in &subcommands {
        assert!(
            script.contains(&format!("loopbench,{name})")),
            "bash completion lacks `{name}`"
        );
    }
    // The completion of a subcommand's flags, not only of its name.
    assert!(script.contains("--max-increase"));
}

#[test]
fn zsh_and_fish_completion_scripts_name_every_subcommand() {
    let zsh = stdout_of(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef loopbench"), "{zsh}");
    let fish = stdout_of(&["completions", "fish"]);
    for name in subcommands() {
        assert!(zsh.contains(&format!("'{name}:")), "zsh lacks `{name}`");
        assert!(
            fish.contains(&format!("-a \"{name}\"")),
            "fish lacks `{name}`"
        );
    }
}

#[test]
fn no_completion_script_offers_the_internal_supervise_command() {
    let hidden: Vec<String> = loopbench::cli::Cli::command()
        .get_subcommands()
        .filter(|s| s.is_hide_set())
        .map(|s| s.get_name().to_string())
        .collect();
    assert_eq!(hidden, ["supervise", "batch-supervise", "net-relay"]);
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = stdout_of(&["completions", shell]);
        for internal in &hidden {
            assert!(
                !script.contains(internal.as_str()),
                "{shell} offers {internal}"
            );
        }
        // fish spells it `-l version`.
        assert!(script.contains("version"), "{shell} lost --version");
    }
}

#[test]
fn completions_for_an_unknown_shell_are_refused_with_exit_2() {
    loopbench()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("bash"));
}

/// `man -l FILE` renders `file` as a terminal page when man is installed; without it,
/// the roff title line is checked.
fn assert_man_page(file: &std::path::Path, title: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!(".TH {title} 1 "))),
        "{}: no .TH line for {title}",
        file.display()
    );
    let Ok(out) = std::process::Command::new("man")
        .arg("-l")
        .arg(file)
        .env("MANWIDTH", "80")
        .output()
    else {
        return;
    };
    assert!(out.status.success(), "man -l {}: {out:?}", file.display());
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.contains("SYNOPSIS"), "{page}");
    assert!(page.contains(title), "{page}");
}

#[test]
fn man_page_renders_and_lists_every_subcommand() {
    let tmp = tempfile::tempdir().unwrap();
    let page = stdout_of(&["man"]);
    let file = tmp.path().join("loopbench.1");
    std::fs::write(&file, &page).unwrap();
    assert_man_page(&file, "loopbench");
    for name in subcommands() {
        // roff escapes every hyphen of a name.
        let roff_name = format!("loopbench-{name}(1)").replace('-', "\\-");
        assert!(
            page.contains(&roff_name),
            "loopbench(1) does not name loopbench-{name}(1)"
        );
    }
}

#[test]
fn man_out_writes_the_page_of_every_subcommand_it_names() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("man1");
    loopbench()
        .args(["man", "--out"])
        .arg(&dir)
        .assert()
        .success()
        .stdout("");
    assert_man_page(&dir.join("loopbench.1"), "loopbench");
    for name in subcommands() {
        assert_man_page(
            &dir.join(format!("loopbench-{name}.1")),
            &format!("loopbench-{name}"),
        );
    }
}
