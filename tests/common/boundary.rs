//! What the boundary tests (`hostile_descriptors`, `hostile_keyrings`) share: a task
//! whose check runs the agent's code, the attacks an agent and that code make (on every
//! descriptor they hold, on every kernel keyring they can name), and a look at what a
//! run stored.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::command::arm;

pub fn require_bwrap() -> bool {
    if !loopbench::sandbox::bwrap_works() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: bwrap cannot create namespaces on this machine"
        );
        eprintln!("skipping: bwrap cannot create namespaces on this machine");
        return false;
    }
    assert_eq!(loopbench::sandbox::check_confined(), Ok(()));
    true
}

/// `keyctl` (keyutils), which the attacks use; `.ci/run` installs it.
pub fn require_keyctl() -> bool {
    let found =
        loopbench::sandbox::find_program("keyctl", std::env::var_os("PATH").as_deref()).is_some();
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: keyctl is not installed (apt-get install keyutils; .ci/run does)"
        );
        eprintln!("skipping: keyctl is not installed (apt-get install keyutils)");
    }
    found
}

/// A text no file holds unless an attack carried it there.
pub fn nonce(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    format!("{what}-{}-{nanos}", std::process::id())
}

/// A task whose one check sources the agent's `src/lib.sh`, so that the agent's code
/// runs in every check, the check against the pristine tests too; the pristine test
/// holds a line (`hidden`) that the agent's copy lacks. Its `oracle/` also holds a file
/// named `oracle_name`, which only a listing of the oracle could show.
pub fn boundary_task(root: &Path, hidden: &str, oracle_name: &str) -> PathBuf {
    let dir = root.join("bound");
    for sub in ["repo/src", "repo/tests", "oracle/tests"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("repo/src/lib.sh"), "f1() { return 1; }\n").unwrap();
    let check = "# test: f1 works\n. ./src/lib.sh\nf1\n";
    std::fs::write(dir.join("repo/tests/check_F1.sh"), check).unwrap();
    std::fs::write(
        dir.join("oracle/tests/check_F1.sh"),
        format!("# test: f1 works\n# {hidden}\n. ./src/lib.sh\nf1\n"),
    )
    .unwrap();
    std::fs::write(dir.join("oracle").join(oracle_name), "").unwrap();
    std::fs::write(
        dir.join("task.toml"),
        "name = \"bound\"\ngoal = \"f1\"\ntests = { glob = \"tests/**/*.sh\", count_pattern = '^# test' }\n\n\
         [[feature]]\nid = \"F1\"\ncategory = \"functional\"\ndescription = \"f1 works\"\n\
         verify = \"sh tests/check_F1.sh\"\nverify_runner = \"exit\"\n",
    )
    .unwrap();
    dir
}

/// What the agent and the code its checks run try, as shell functions: `descriptors
/// WHO` reads, lists and appends to every descriptor the shell holds (listing
/// `$CANARY_DIR` through a directory's, as `/proc/self/fd/N/...`); `keys WHO TEXT`
/// reads every key it can name (the pristine test a check stored, the agent's note, the
/// harness's key), then stores TEXT in its session, user and persistent keyrings.
pub const ATTACKS: &str = r#"
descriptors() {
  for fd in /proc/$$/fd/*; do
    n=${fd##*/}
    echo "$1 fd $n -> $(readlink "$fd")"
    case $n in 0|1|2) continue ;; esac
    timeout 2 head -c 100 "$fd" 2>/dev/null | tr -cd '[:alnum:]-'; echo
    echo "APPENDED BY $1" 2>/dev/null >> "$fd" && echo "$1 appended to fd $n"
    case $n in ?)
      ( eval "timeout 2 head -c 100 <&$n" ) 2>/dev/null | tr -cd '[:alnum:]-'; echo
      ( eval "echo 'APPENDED BY $1' >&$n" ) 2>/dev/null && echo "$1 appended to fd $n" ;;
    esac
    ls "$fd/" "$fd$CANARY_DIR/" 2>/dev/null | head -5
  done
}
keys() {
  for name in lb-pristine lb-note lb-harness-key; do
    echo "$1 read $name: $(keyctl pipe "%user:$name" 2>&1 | tr -c '[:print:]' ' ' | head -c 300)"
    echo "$1 search $name in @u: $(keyctl search @u user "$name" 2>&1)"
  done
  persistent=$(keyctl get_persistent @s 2>&1)
  echo "$1 persistent: $persistent"
  echo "$1 search in persistent: $(keyctl search "$persistent" user lb-pristine 2>&1)"
  grep -c . /proc/keys 2>&1 | sed "s/^/$1 keys listed: /"
  grep -o 'lb-[a-z-]*' /proc/keys 2>/dev/null | sed "s/^/$1 key seen: /"
  for ring in @s @u "$persistent"; do
    echo "$1 add $ring: $(keyctl add user "$2" "$3" "$ring" 2>&1)"
  done
}
"#;

/// The agent: attacks in each session, then (session 1) leaves a `src/lib.sh` that
/// attacks from inside every check and stores the test it runs under (in the check
/// against the pristine tests: the pristine test), and claims F1.
pub fn agent_script(canary_dir: &Path) -> String {
    format!(
        r#"CANARY_DIR='{canary}'
{ATTACKS}
descriptors agent
keys agent lb-note "AGENT-NOTE-$LOOPBENCH_TRIAL_SEED"
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  {{ printf "CANARY_DIR='%s'\n" "$CANARY_DIR"; cat <<'LIB'
{ATTACKS}
f1() {{
  descriptors check
  keys check lb-pristine "$(cat tests/check_F1.sh)"
  return 1
}}
LIB
  }} > src/lib.sh
fi
echo '[{{"id": "F1", "category": "functional", "description": "f1 works", "steps": [], "passes": true}}]' > feature_list.json
git add -A >/dev/null 2>&1; git commit -qm "session $LOOPBENCH_SESSION" >/dev/null 2>&1
exit 0
"#,
        canary = canary_dir.display()
    )
}

/// A suite over [`boundary_task`] with one sandboxed agent running `agent.sh`.
pub fn boundary_suite(root: &Path, replicates: u32, sessions: u32) -> PathBuf {
    let text = format!(
        "name = \"boundary\"\nseed = 9\nreplicates = {replicates}\ntasks = [\"bound\"]\n\n\
         [agents.attacker]\ndriver = \"command\"\nprogram = \"./agent.sh\"\ntimeout = \"60s\"\n\
         sandbox = \"bwrap\"\n\n{}",
        arm("attacker", "attacker", sessions, "")
    );
    std::fs::write(root.join("suite.toml"), text).unwrap();
    root.to_path_buf()
}

/// Every file under `dir` whose bytes hold `needle`.
pub fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .filter(|e| {
            std::fs::read(e.path())
                .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
        })
        .map(|e| e.path().to_path_buf())
        .collect()
}

/// Every captured output of the agents of a run, concatenated.
pub fn captures(out: &Path) -> String {
    let mut all = String::new();
    for entry in walkdir::WalkDir::new(out.join("agents"))
        .into_iter()
        .flatten()
    {
        let name = entry.file_name().to_string_lossy();
        if entry.file_type().is_file() && (name.ends_with(".stdout") || name.ends_with(".stderr")) {
            all += &std::fs::read_to_string(entry.path()).unwrap_or_default();
        }
    }
    all
}

pub fn binary() -> &'static str {
    env!("CARGO_BIN_EXE_loopbench")
}

/// A file only its owner can read or write (root's, as root), holding `text`.
pub fn private_file(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}
