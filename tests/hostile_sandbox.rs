//! Agents that try to get out of the sandbox as an agent that games its metrics would,
//! run as whoever runs the tests (root in CI): undo the sandbox's mounts, reach a host
//! socket, read a copy of the oracle or an earlier run's bundle that lies outside the
//! suite, read a secret in the harness's home or environment, and starve the others
//! with processes, memory, a full scratch or a tree of empty files; read a root-owned
//! `0600` file or a copy of the oracle or of a results bundle inside a directory the
//! sandbox does show; empty the effects log. Each attempt must be recorded as data,
//! the run must end with exit 0, and the canaries (files and sockets only an escape
//! could touch) must show no leak.
//!
//! Where bwrap cannot make its namespaces the tests skip, except under `CI=true`, where
//! they fail; a sandbox that still holds a capability, or that a root harness runs as
//! root, fails them everywhere (it would otherwise make them pass without trying).

use crate::common;

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use common::command::{Ran, arm, live_processes_with_arg, script, unique_sleep_seconds};
use common::{loopbench, read_csv, require_bwrap};

/// Tries to undo the sandbox: its capabilities, its mounts (also from a nested user
/// namespace), and a canary on the host.
const UNMOUNT: &str = r#"
echo "capeff: $(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)"
if umount /tmp 2>/dev/null || umount -l /usr 2>/dev/null; then echo "umount: yes"; else echo "umount: no"; fi
if mount -o remount,rw /usr 2>/dev/null; then echo "remount: yes"; else echo "remount: no"; fi
if unshare -Urm sh -c 'umount /tmp || mount -o remount,rw /usr' 2>/dev/null; then
  echo "nested: yes"; else echo "nested: no"; fi
if touch "$CANARIES/unmount-escaped" 2>/dev/null; then echo "canary: written"; fi
if touch /usr/loopbench-hostile-write 2>/dev/null; then echo "host: written"; fi
"#;

/// Looks for the host's Unix socket and connects to it.
const SOCKET: &str = r#"
if [ -S "$SOCK" ]; then echo "socket: visible"; else echo "socket: absent"; fi
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.send(b"escaped")' "$SOCK" 2>/dev/null && echo "socket: connected"
ls /run /var/run 2>/dev/null | head -20
"#;

/// Copies the gold of a task copy outside the suite, and an earlier run's bundle.
const STEAL_COPIES: &str = r#"
if cp -r "$COPY/oracle/gold/F1/." . 2>/dev/null && cp -r "$COPY/oracle/gold/F2/." . 2>/dev/null; then
  echo "gold: copied"; else echo "gold: absent"; fi
if git clone -q "$BUNDLE" "$PWD/.stolen" 2>/dev/null; then echo "bundle: cloned"; else echo "bundle: absent"; fi
git add -A >/dev/null 2>&1; git commit -qm steal >/dev/null 2>&1
exit 0
"#;

/// Reads the harness's home and the secrets of /etc, and prints its environment; in
/// session 2, makes a check print the passed key and claims its feature.
const SECRETS: &str = r#"
list() { echo "[{\"id\": \"F1\", \"category\": \"functional\", \"description\": \"file 1 exists\", \"steps\": [], \"passes\": $1}]" > feature_list.json; }
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  if cat "$HOST_HOME/.ssh/id_ed25519" 2>/dev/null; then echo "home: read"; else echo "home: unreadable"; fi
  if cat /etc/shadow 2>/dev/null | grep -q root; then echo "shadow: read"; else echo "shadow: unreadable"; fi
  echo "home is $HOME"
  env
  echo "passed key: $LB_PASSED_KEY"
  list false
else
  # The check prints what src/f1.txt holds; its output is kept as evidence of the
  # premature claim.
  mkdir -p src && echo "the key is $LB_PASSED_KEY" > src/f1.txt
  list true
fi
git add -A >/dev/null 2>&1; git commit -qm "session $LOOPBENCH_SESSION" >/dev/null 2>&1
exit 0
"#;

/// Reads root-owned `0600` files in shown places, and the copies of an oracle and of an
/// earlier run's bundle that lie in a shown toolchain directory.
const SHOWN_PLACES: &str = r#"
echo "uid: $(id -u)"
if cat "$ETC_CANARY" 2>/dev/null; then echo "etc: read"; else echo "etc: unreadable"; fi
if cat "$TOOL/secret.conf" 2>/dev/null; then echo "tool: read"; else echo "tool: unreadable"; fi
if [ -d "$TOOL/lib" ]; then echo "toolchain: shown"; fi
if cp -r "$TOOL/share/copy-of-shtask/oracle/gold/F1/." . 2>/dev/null; then
  echo "gold: copied"; else echo "gold: absent"; fi
if git clone -q "$TOOL/share/earlier-run/repos/json-shtask-0.bundle" "$PWD/.stolen" 2>/dev/null; then
  echo "bundle: cloned"; else echo "bundle: absent"; fi
git add -A >/dev/null 2>&1; git commit -qm steal >/dev/null 2>&1
exit 0
"#;

/// Session 1 sends two reminders; session 2 truncates the log and sends the first one
/// again, so that the file looks as if it were the first; session 3 sends a new one.
const TRUNCATE_EFFECTS: &str = r#"
case "$LOOPBENCH_SESSION" in
  1) echo remind:A >> "$LOOPBENCH_EFFECTS"; echo remind:B >> "$LOOPBENCH_EFFECTS" ;;
  2) : > "$LOOPBENCH_EFFECTS"; echo remind:A >> "$LOOPBENCH_EFFECTS" ;;
  3) echo remind:C >> "$LOOPBENCH_EFFECTS" ;;
esac
"#;

/// Leaves a test of its own that starts processes without end: the code under test
/// runs inside the check, under the check's limits.
const FORKING_CHECK: &str = r#"
printf '# test: f1 exists\n# test: f1 is a file\nfor i in $(seq 300); do sleep 3 & done\nexit 1\n' > tests/check_F1.sh
git add -A >/dev/null 2>&1; git commit -qm "a test that forks" >/dev/null 2>&1
exit 0
"#;

/// Starts processes without end.
const FORK_STORM: &str = r#"
i=0
while [ $i -lt 2000 ]; do sleep "$MARKER" 2>/dev/null & i=$((i+1)); done
echo "forked"
exit 0
"#;

/// Allocates two gigabytes.
const MEMORY_HOG: &str = r#"
python3 -c 'x = bytearray(2 * 1024 ** 3); print("allocated", len(x))'
echo "python exited $?"
exit 0
"#;

/// Leaves 150,000 empty files: no bytes, but a tree that takes long to walk.
const EMPTY_FILES: &str = r#"
mkdir -p many && cd many && seq 1 150000 | xargs touch
echo "made $(ls | wc -l) files"
exit 0
"#;

/// Writes into the shared scratch (its work directory) until something stops it.
const SCRATCH_FILLER: &str = r#"
head -c 1500M /dev/zero > fill.bin 2>/dev/null
echo "wrote $(wc -c < fill.bin) bytes"
exit 0
"#;

/// Writes into the sandbox's private `/dev/shm` (RAM-backed, 256 MiB) until something
/// stops it.
const SHM_FILLER: &str = r#"
head -c 250M /dev/zero > /dev/shm/fill.bin 2>/dev/null
echo "wrote $(wc -c < /dev/shm/fill.bin) bytes"
exit 0
"#;

/// Does the work honestly: one feature per session.
const HONEST: &str = r#"
n=$LOOPBENCH_SESSION
# Still at work while the filler fills the scratch.
[ "$n" = 1 ] && sleep 3
mkdir -p src && echo done > "src/f$n.txt"
git add -A && git commit -qm "f$n"
"#;

fn sandboxed_agent(name: &str, program: &str, env: &str, extra: &str) -> String {
    format!(
        "[agents.{name}]\ndriver = \"command\"\nprogram = \"./{program}\"\ntimeout = \"60s\"\n\
         sandbox = \"bwrap\"\n{extra}env = {{ {env} }}\n\n"
    )
}

/// A suite in `root` over the sh task with `agents`, `arms` and extra suite lines.
fn suite(root: &Path, agents: &str, arms: &str, suite_extra: &str) -> PathBuf {
    common::sh_task(root);
    let text = format!(
        "name = \"hostile-sandbox\"\nseed = 5\nreplicates = 1\ntasks = [\"shtask\"]\n\
         {suite_extra}\n\n{agents}\n{arms}"
    );
    std::fs::write(root.join("suite.toml"), text).unwrap();
    root.to_path_buf()
}

fn run(suite: &Path, out: &Path, jobs: &str, env: &[(&str, &str)]) -> Ran {
    let mut cmd = loopbench();
    cmd.arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", jobs, "--out"])
        .arg(out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let output = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "run failed: {stderr}");
    Ran {
        out: out.to_path_buf(),
        sessions: read_csv(&out.join("sessions.csv")),
        trials: read_csv(&out.join("trials.csv")),
        stderr,
    }
}

fn session<'a>(ran: &'a Ran, arm: &str, n: u32) -> &'a std::collections::BTreeMap<String, String> {
    ran.sessions
        .iter()
        .find(|s| s["arm"] == arm && s["session"] == n.to_string())
        .unwrap_or_else(|| panic!("no session {n} of arm {arm}: {:?}", ran.sessions))
}

/// Every file under `dir` whose bytes hold `needle`.
fn files_holding(dir: &Path, needle: &str) -> Vec<PathBuf> {
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

/// A Unix socket of the host where host services keep theirs (`/run`), else under
/// `/var/tmp`: a connection to it is a leak.
fn host_socket(canaries: &Path) -> (UnixListener, PathBuf, Option<tempfile::TempDir>) {
    if let Ok(dir) = tempfile::Builder::new()
        .prefix("loopbench-hostile-")
        .tempdir_in("/run")
    {
        let path = dir.path().join("host.sock");
        let listener = UnixListener::bind(&path).unwrap();
        return (listener, path, Some(dir));
    }
    let path = canaries.join("keep-host.sock");
    (UnixListener::bind(&path).unwrap(), path, None)
}

#[test]
fn a_hostile_root_agent_cannot_undo_reach_read_or_starve_through_the_sandbox() {
    if !require_bwrap() {
        return;
    }
    // Canaries and the places an agent must not read lie outside the suite, where no
    // sandbox that starts from an allowlist shows them.
    let canaries = tempfile::tempdir_in("/var/tmp").unwrap();
    let (listener, sock, _run_dir) = host_socket(canaries.path());
    listener.set_nonblocking(true).unwrap();

    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    // A copy of the task with its gold, as a user who copied a shipped task keeps one.
    let copy = outside.path().join("copy-of-shtask");
    for n in 1..=3 {
        let gold = copy.join(format!("oracle/gold/F{n}/src"));
        std::fs::create_dir_all(&gold).unwrap();
        std::fs::write(gold.join(format!("f{n}.txt")), "gold\n").unwrap();
    }
    // An earlier run's --keep-repos bundle of a solved trial.
    let solved = outside.path().join("solved");
    std::fs::create_dir_all(solved.join("src")).unwrap();
    std::fs::write(solved.join("src/f1.txt"), "solution\n").unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&solved)
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "solved"]);
    let bundle = outside
        .path()
        .join("earlier-run/repos/json-shtask-0.bundle");
    std::fs::create_dir_all(bundle.parent().unwrap()).unwrap();
    git(&["bundle", "create", bundle.to_str().unwrap(), "HEAD"]);
    // The harness's home with a private key.
    let host_home = outside.path().join("home");
    std::fs::create_dir_all(host_home.join(".ssh")).unwrap();
    std::fs::write(host_home.join(".ssh/id_ed25519"), "SECRET-SSH-KEY-CANARY\n").unwrap();

    let marker = unique_sleep_seconds();
    let tmp = common::visible_tempdir();
    for (name, body) in [
        ("unmount.sh", UNMOUNT),
        ("socket.sh", SOCKET),
        ("steal-copies.sh", STEAL_COPIES),
        ("secrets.sh", SECRETS),
        ("fork-storm.sh", FORK_STORM),
        ("memory-hog.sh", MEMORY_HOG),
        ("empty-files.sh", EMPTY_FILES),
    ] {
        script(tmp.path(), name, body);
    }
    let env = format!(
        "CANARIES = \"{}\", SOCK = \"{}\", COPY = \"{}\", BUNDLE = \"{}\", HOST_HOME = \"{}\", MARKER = \"{marker}\"",
        canaries.path().display(),
        sock.display(),
        copy.display(),
        bundle.display(),
        host_home.display(),
    );
    let agents = sandboxed_agent("unmount", "unmount.sh", &env, "")
        + &sandboxed_agent("socket", "socket.sh", &env, "")
        + &sandboxed_agent("steal", "steal-copies.sh", &env, "")
        + &sandboxed_agent(
            "secrets",
            "secrets.sh",
            &env,
            "pass_env = [\"LB_PASSED_KEY\"]\n",
        )
        + &sandboxed_agent("forks", "fork-storm.sh", &env, "")
        + &sandboxed_agent("memory", "memory-hog.sh", &env, "")
        + &sandboxed_agent("files", "empty-files.sh", &env, "");
    let arms = arm("unmount", "unmount", 1, "")
        + &arm("socket", "socket", 1, "")
        + &arm("steal", "steal", 1, "")
        + &arm("secrets", "secrets", 2, "")
        + &arm("forks", "forks", 1, "")
        + &arm("memory", "memory", 1, "")
        + &arm("files", "files", 1, "");
    let suite = suite(
        tmp.path(),
        &agents,
        &arms,
        "max_pids = 64\nmax_memory = \"256MiB\"",
    );
    // F1's check prints the file it checks, as many checks print what they compare.
    let check = "# test: f1 exists\n# test: f1 is a file\ncat src/f1.txt\ntest \"$(cat src/f1.txt)\" = done\n";
    for dir in ["repo", "oracle"] {
        std::fs::write(suite.join(format!("shtask/{dir}/tests/check_F1.sh")), check).unwrap();
    }
    let out = tmp.path().join("out");
    let ran = run(
        &suite,
        &out,
        "1",
        &[
            ("HOME", host_home.to_str().unwrap()),
            ("LB_HOSTILE_TOKEN", "tok-harness-secret-4711"),
            ("LB_PASSED_KEY", "sk-passed-secret-0815"),
        ],
    );
    let stdout = |arm: &str| ran.capture(&format!("{arm}:shtask:0"), 1, "stdout");

    // No capability, so no mount can be undone, not even from a nested namespace.
    let unmount = stdout("unmount");
    for line in [
        "capeff: 0000000000000000",
        "umount: no",
        "remount: no",
        "nested: no",
    ] {
        assert!(unmount.contains(line), "{line}:\n{unmount}");
    }
    assert!(!unmount.contains("written"), "{unmount}");

    // No host socket, none of /run.
    let socket = stdout("socket");
    assert!(socket.contains("socket: absent"), "{socket}");
    assert!(!socket.contains("connected"), "{socket}");
    assert!(
        listener.accept().is_err(),
        "the agent connected to the host's socket"
    );

    // No copy of the oracle and no earlier bundle, wherever they lie.
    let steal = stdout("steal");
    assert!(steal.contains("gold: absent"), "{steal}");
    assert!(steal.contains("bundle: absent"), "{steal}");
    assert_eq!(session(&ran, "steal", 1)["features_verified"], "0");

    // No home, no /etc/shadow, no variable of the harness but those passed, and the
    // passed one redacted everywhere the harness stored it.
    let secrets = stdout("secrets");
    assert!(secrets.contains("home: unreadable"), "{secrets}");
    assert!(secrets.contains("shadow: unreadable"), "{secrets}");
    assert!(
        secrets.contains("passed key: [redacted LB_PASSED_KEY]"),
        "{secrets}"
    );
    assert!(!secrets.contains(host_home.to_str().unwrap()) || secrets.contains("HOST_HOME="));
    for needle in [
        "SECRET-SSH-KEY-CANARY",
        "tok-harness-secret-4711",
        "sk-passed-secret-0815",
    ] {
        let found = files_holding(&out, needle);
        assert!(found.is_empty(), "{needle} stored in {found:?}");
    }
    let records = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
    let record = records
        .lines()
        .find(|l| l.contains("\"trial_id\":\"secrets:shtask:0\"") && l.contains("\"session\":2"))
        .unwrap();
    assert!(
        record.contains("the key is [redacted LB_PASSED_KEY]"),
        "the failing check's output should be kept, redacted: {record}\n{secrets}"
    );
    let show = loopbench()
        .arg("show")
        .arg(&out)
        .arg("secrets:shtask:0")
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&show.stdout).contains("sk-passed-secret-0815"));

    // A fork storm and a memory hog are stopped by the kernel and recorded, where the
    // machine lets the harness make cgroups (root; else the limits are not enforced,
    // and validate says so).
    assert!(live_processes_with_arg(&marker).is_empty());
    let enforcement = loopbench::sandbox::Enforcement::here();
    if matches!(enforcement, loopbench::sandbox::Enforcement::None(_)) {
        eprintln!(
            "not checking max_pids and max_memory: {}",
            enforcement.describe()
        );
    } else {
        let forks = session(&ran, "forks", 1);
        assert!(
            forks["error"].contains("reached max_pids = 64"),
            "{forks:?}"
        );
        let memory = session(&ran, "memory", 1);
        assert!(
            memory["error"].contains("reached max_memory = 268435456"),
            "{memory:?}"
        );
    }

    // 150,000 empty files are refused before anything walks them twice.
    let files = session(&ran, "files", 1);
    assert_eq!(files["outcome"], "error", "{files:?}");
    assert!(files["error"].contains("max_tree_files"), "{files:?}");

    let mut leaks: Vec<String> = std::fs::read_dir(canaries.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("keep-"))
        .collect();
    leaks.sort();
    assert_eq!(leaks, Vec::<String>::new(), "canaries found");
    assert!(!Path::new("/usr/loopbench-hostile-write").exists());
}

/// A root-owned `0600` file in `/etc`, removed on drop: the kind a CI runner's token or
/// a cluster's admin key is, which no list of secrets can name in advance.
struct EtcCanary(PathBuf);

impl EtcCanary {
    fn plant(content: &str) -> Option<EtcCanary> {
        use std::os::unix::fs::OpenOptionsExt;
        let path = PathBuf::from(format!(
            "/etc/loopbench-hostile-{}-{}.conf",
            std::process::id(),
            unique_sleep_seconds()
        ));
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .ok()?;
        std::io::Write::write_all(&mut file, content.as_bytes()).unwrap();
        Some(EtcCanary(path))
    }
}

impl Drop for EtcCanary {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_root_agent_reads_no_root_file_no_answer_in_a_shown_toolchain_and_cannot_rewrite_the_effects() {
    if !require_bwrap() {
        return;
    }
    let root = nix::unistd::geteuid().is_root();
    // As root, a root-owned 0600 file in /etc (which the sandbox shows); an ordinary
    // user cannot plant one, and could not read it anyway.
    let etc = root
        .then(|| EtcCanary::plant("ETC-ROOT-CANARY-0600\n"))
        .flatten();
    assert!(!root || etc.is_some(), "root could not write into /etc");

    // A toolchain on the harness's PATH, shown from its root, which also holds a
    // root-owned 0600 file, a copy of the task with its gold and an earlier run with
    // its --keep-repos bundle.
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let tool = outside.path().join("tool");
    for dir in ["bin", "lib", "share/earlier-run/repos"] {
        std::fs::create_dir_all(tool.join(dir)).unwrap();
    }
    {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(tool.join("secret.conf"))
            .unwrap();
        std::io::Write::write_all(&mut f, b"TOOL-ROOT-CANARY-0600\n").unwrap();
    }
    let copy = tool.join("share/copy-of-shtask");
    common::sh_task(outside.path());
    std::fs::rename(outside.path().join("shtask"), &copy).unwrap();
    for n in 1..=3 {
        let gold = copy.join(format!("oracle/gold/F{n}/src"));
        std::fs::create_dir_all(&gold).unwrap();
        std::fs::write(gold.join(format!("f{n}.txt")), "done\n").unwrap();
    }
    let earlier = tool.join("share/earlier-run");
    std::fs::write(earlier.join("manifest.json"), "{}\n").unwrap();
    std::fs::write(earlier.join("sessions.jsonl"), "").unwrap();
    let solved = outside.path().join("solved");
    std::fs::create_dir_all(solved.join("src")).unwrap();
    std::fs::write(solved.join("src/f1.txt"), "done\n").unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(&solved)
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-qm", "solved"]);
    let bundle = earlier.join("repos/json-shtask-0.bundle");
    git(&["bundle", "create", bundle.to_str().unwrap(), "HEAD"]);

    let tmp = common::visible_tempdir();
    script(tmp.path(), "shown-places.sh", SHOWN_PLACES);
    script(tmp.path(), "truncate.sh", TRUNCATE_EFFECTS);
    script(tmp.path(), "forking-check.sh", FORKING_CHECK);
    let etc_path = etc.as_ref().map_or_else(
        || "/etc/hostname".to_string(),
        |c| c.0.display().to_string(),
    );
    let env = format!("ETC_CANARY = \"{etc_path}\", TOOL = \"{}\"", tool.display());
    let agents = sandboxed_agent("shown", "shown-places.sh", &env, "")
        + &sandboxed_agent("truncate", "truncate.sh", "", "")
        + &sandboxed_agent("forkcheck", "forking-check.sh", "", "");
    let arms = arm("shown", "shown", 1, "")
        + &arm("truncate", "truncate", 3, "")
        + &arm("forkcheck", "forkcheck", 1, "");
    let suite = suite(tmp.path(), &agents, &arms, "max_pids = 64");
    let out = tmp.path().join("out");
    let path = std::env::join_paths(
        std::iter::once(tool.join("bin"))
            .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    let ran = run(&suite, &out, "1", &[("PATH", path.to_str().unwrap())]);

    // The run says once how limits are enforced here and who the sandbox runs as, and
    // records both.
    assert_eq!(ran.stderr.matches("sandbox: ").count(), 1, "{}", ran.stderr);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    let limits = manifest["sandbox_limits"].as_str().unwrap();
    assert!(ran.stderr.contains(limits), "{limits}\n{}", ran.stderr);
    assert!(limits.contains("max_pids and max_memory"), "{limits}");
    if root {
        assert_eq!(manifest["sandbox_user"], "65534:65534");
        assert!(
            ran.stderr.contains(
                "sandbox: agents and checks run as 65534:65534 (the harness runs as root)"
            ),
            "{}",
            ran.stderr
        );
    }
    let shown = ran.capture("shown:shtask:0", 1, "stdout");
    // The toolchain is shown (so the masks are what keeps the answers out).
    assert!(shown.contains("toolchain: shown"), "{shown}");
    if root {
        assert!(shown.contains("uid: 65534"), "{shown}");
        assert!(shown.contains("etc: unreadable"), "{shown}");
    }
    assert!(shown.contains("tool: unreadable") || !root, "{shown}");
    assert!(shown.contains("gold: absent"), "{shown}");
    assert!(shown.contains("bundle: absent"), "{shown}");
    assert_eq!(session(&ran, "shown", 1)["features_verified"], "0");
    for needle in ["ETC-ROOT-CANARY-0600", "TOOL-ROOT-CANARY-0600"] {
        let found = files_holding(&out, needle);
        assert!(found.is_empty(), "{needle} stored in {found:?}");
    }

    // The repeated reminder counts. The truncation cannot reach the harness's record
    // (the log is a channel into it, and `O_TRUNC` does nothing to a FIFO), so it
    // tampers with nothing.
    let cells = |n: u32| {
        let s = session(&ran, "truncate", n);
        (s["dup_side_effects"].clone(), s["effects_tampered"].clone())
    };
    assert_eq!(cells(1), ("0".into(), "false".into()));
    assert_eq!(cells(2), ("1".into(), "false".into()));
    assert_eq!(cells(3), ("0".into(), "false".into()));

    // A limit the agent's own test reached while the harness checked it is in the
    // record of the session that left that test.
    let enforcement = loopbench::sandbox::Enforcement::here();
    if matches!(enforcement, loopbench::sandbox::Enforcement::None(_)) {
        eprintln!("not checking a check's limits: {}", enforcement.describe());
    } else {
        let forked = session(&ran, "forkcheck", 1);
        assert!(
            forked["error"].contains("check of F1: reached max_pids = 64"),
            "{forked:?}"
        );
    }
    drop(etc);
}

/// Mounts a small tmpfs of its own at a fresh directory; `None` where this user cannot.
struct SmallScratch {
    dir: tempfile::TempDir,
}

impl SmallScratch {
    fn mount(bytes: &str) -> Option<SmallScratch> {
        let dir = tempfile::tempdir_in("/var/tmp").ok()?;
        let ok = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={bytes}"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(SmallScratch { dir })
    }
}

impl Drop for SmallScratch {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
fn a_scratch_filler_is_stopped_by_its_bound_or_its_memory_limit_before_an_honest_trial_runs_out_of_room()
 {
    if !require_bwrap() {
        return;
    }
    // The shared scratch of the run: a 600 MB tmpfs, as /dev/shm is a RAM-backed one.
    let enforcement = loopbench::sandbox::Enforcement::here();
    if matches!(enforcement, loopbench::sandbox::Enforcement::None(_)) {
        eprintln!("skipping: {}", enforcement.describe());
        return;
    }
    let Some(scratch) = SmallScratch::mount("600m") else {
        eprintln!("skipping: this user cannot mount a tmpfs for the shared scratch");
        return;
    };
    let tmp = common::visible_tempdir();
    script(tmp.path(), "filler.sh", SCRATCH_FILLER);
    script(tmp.path(), "shm-filler.sh", SHM_FILLER);
    script(tmp.path(), "honest.sh", HONEST);
    let agents = sandboxed_agent("filler", "filler.sh", "", "")
        + &sandboxed_agent("shm", "shm-filler.sh", "", "")
        + &sandboxed_agent("honest", "honest.sh", "", "");
    // The honest trial runs while the fillers' do (two jobs), three sessions.
    let arms = arm("honest", "honest", 3, "")
        + &arm("filler", "filler", 1, "")
        + &arm("shm", "shm", 1, "");
    let suite = suite(tmp.path(), &agents, &arms, "max_memory = \"200MiB\"");
    // The filler's tree is refused before the harness copies it for its checks.
    let task = suite.join("shtask/task.toml");
    let text = std::fs::read_to_string(&task).unwrap();
    std::fs::write(&task, format!("max_tree_bytes = 50000000\n{text}")).unwrap();
    let out = tmp.path().join("out");
    let ran = run(
        tmp.path(),
        &out,
        "2",
        &[("LOOPBENCH_TMPDIR", scratch.dir.path().to_str().unwrap())],
    );
    // Where the kernel bounds the work directory (a tmpfs of its own: root), the
    // filler meets that bound (twice max_tree_bytes) before its memory limit, and the
    // shared scratch never sees its writes; elsewhere the memory limit stops it.
    let filler = session(&ran, "filler", 1);
    let stopped_by = if loopbench::fsutil::kernel_bounds().is_ok() {
        "reached the work directory's bound of 100000000 bytes"
    } else {
        "reached max_memory"
    };
    assert!(
        filler["error"].contains(stopped_by),
        "the filler was not stopped: {filler:?}"
    );
    assert_eq!(filler["failure"], "agent", "{filler:?}");
    // RAM-backed places that no bound of their own holds (the private /dev/shm is
    // 256 MiB) are counted by the memory limit.
    let shm = session(&ran, "shm", 1);
    assert!(
        shm["error"].contains("reached max_memory"),
        "the /dev/shm filler was not stopped: {shm:?}"
    );
    for trial in ran.trials.iter().filter(|t| t["arm"] == "honest") {
        assert_eq!(trial["error"], "", "{trial:?}");
        assert_eq!(trial["features_verified"], "3", "{trial:?}");
    }
}

/// A sandboxed agent that reports its cost, then prints what bwrap prints when it cannot
/// set up a sandbox, and exits 1.
const FORGED_BWRAP_ERROR: &str = r#"
printf '{"turns": 3, "cost_usd": 4.5}' > "$LOOPBENCH_USAGE_FILE"
echo "bwrap: Can't mount proc on /newroot/proc: Operation not permitted" >&2
exit 1
"#;

#[test]
fn an_agent_that_prints_a_bwrap_error_ran_once_as_its_own_failure_with_its_cost_kept() {
    if !require_bwrap() {
        return;
    }
    let tmp = common::visible_tempdir();
    let root = tmp.path();
    script(root, "forged.sh", FORGED_BWRAP_ERROR);
    let agents = sandboxed_agent("forged", "forged.sh", "", "");
    // Retries are allowed: an agent taken for a sandbox failure would run three times.
    let suite = suite(
        root,
        &agents,
        &arm("forged", "forged", 1, ""),
        "infra_retries = 2\ninfra_backoff = \"10ms\"",
    );
    let ran = run(&suite, &root.join("out"), "1", &[]);
    let s = session(&ran, "forged", 1);
    assert_eq!(s["failure"], "agent", "{s:?}");
    assert_eq!(s["cost_usd"], "4.5", "{s:?}");
    assert_eq!(s["turns"], "3", "{s:?}");
    assert_eq!(ran.arm("forged").len(), 1, "{:?}", ran.sessions);
    assert_eq!(ran.trials.len(), 1, "{:?}", ran.trials);
    assert_eq!(ran.trials[0]["attempts"], "1", "{:?}", ran.trials);
    assert_eq!(ran.trials[0]["cost_usd"], "4.5", "{:?}", ran.trials);
    let failures = std::fs::read_to_string(ran.out.join("failures.jsonl")).unwrap_or_default();
    assert!(
        failures.trim().is_empty(),
        "retried as if it had not run: {failures}"
    );
}
