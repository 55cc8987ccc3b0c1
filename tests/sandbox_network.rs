//! An agent with network, as an attacker would use it, run as whoever runs the tests
//! (root in CI): its arm declares one service on the host's loopback, and the agent
//! reaches it through the harness's proxy and nothing else: not a second service on
//! another loopback port, not the host's own non-loopback address, not the cloud
//! metadata address, not a declared name that resolves to the loopback, not an abstract
//! Unix socket or a socket path of the host; neither by a raw connect nor through the
//! proxy. A connection it leaves open ends with its session, and the manifest records
//! what each arm could reach. `sandbox_network = true` with nothing declared is refused
//! at the key.

use crate::common;

use std::io::{Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::command::{arm, live_processes_with_arg, run_ok, script, sh_suite};
use common::loopbench;
use predicates::prelude::*;

fn require_bwrap() -> bool {
    assert!(
        loopbench::sandbox::find_program("bwrap", std::env::var_os("PATH").as_deref()).is_some(),
        "bwrap is not installed (apt-get install bubblewrap; .ci/run does)"
    );
    if !loopbench::sandbox::bwrap_works() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: bwrap cannot create namespaces on this machine"
        );
        eprintln!("skipping: bwrap cannot create namespaces on this machine");
        return false;
    }
    true
}

/// A service of the host: answers every request with its token, except a connection
/// that starts with `HOLD`, which it keeps until the other side closes it.
struct HostService {
    port: u16,
    token: String,
    answered: Arc<AtomicUsize>,
    open: Arc<AtomicUsize>,
    held: Arc<AtomicUsize>,
}

impl HostService {
    fn start(bind: &str, token: &str) -> HostService {
        let listener = TcpListener::bind(bind).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (answered, open, held) =
            <(Arc<AtomicUsize>, Arc<AtomicUsize>, Arc<AtomicUsize>)>::default();
        let service = HostService {
            port,
            token: token.to_string(),
            answered: answered.clone(),
            open: open.clone(),
            held: held.clone(),
        };
        let token = token.to_string();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(mut conn) = conn else { continue };
                let (answered, open, held, token) =
                    (answered.clone(), open.clone(), held.clone(), token.clone());
                open.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut head = Vec::new();
                    let mut byte = [0u8; 1];
                    while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                        head.push(byte[0]);
                    }
                    if head.starts_with(b"HOLD") {
                        held.fetch_add(1, Ordering::SeqCst);
                        let mut sink = [0u8; 64];
                        while conn.read(&mut sink).unwrap_or(0) > 0 {}
                    } else if !head.is_empty() {
                        answered.fetch_add(1, Ordering::SeqCst);
                        let body = format!("{token}\n");
                        let _ = write!(
                            conn,
                            "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        service
    }
}

/// The address the host uses to reach the outside, if it has a route: a service bound
/// to 0.0.0.0 answers there.
fn host_address() -> Option<String> {
    let probe = UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.200:9").ok()?;
    let ip = probe.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then(|| ip.to_string())
}

/// Tries every way out, raw and through the proxy its environment names, and prints
/// one line per try.
const PROBE: &str = r#"exec python3 - <<'PY'
import os, socket, urllib.request
env = os.environ
proxy = env.get("http_proxy", "")
print("proxy:", "relay" if proxy.startswith("http://127.0.0.1:") else "none", flush=True)
phost, pport = proxy[len("http://"):].rsplit(":", 1) if proxy else ("127.0.0.1", "1")

def raw(host, port):
    try:
        socket.create_connection((host, int(port)), 2).close()
        return "reachable"
    except OSError:
        return "unreachable"

def connect(target):
    try:
        s = socket.create_connection((phost, int(pport)), 5)
        s.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
        return s, (head.split(b" ", 2)[1].decode() if head else "closed")
    except OSError as e:
        return None, "error " + type(e).__name__

def tunnel(target):
    s, status = connect(target)
    if status != "200":
        return status
    s.sendall(b"GET /token HTTP/1.0\r\n\r\n")
    data = b""
    while True:
        c = s.recv(4096)
        if not c:
            break
        data += c
    return "200 " + data.split(b"\r\n\r\n", 1)[-1].decode().strip()

def get(url):
    try:
        return "200 " + urllib.request.urlopen(url, timeout=5).read().decode().strip()
    except Exception as e:
        return str(getattr(e, "code", type(e).__name__))

def unix(address):
    try:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(2)
        s.connect(address)
        return "reachable"
    except OSError:
        return "unreachable"

A = "127.0.0.1:" + env["PA"]
B = "127.0.0.1:" + env["PB"]
print("declared get:", get("http://%s/token" % A))
print("declared tunnel:", tunnel(A))
print("declared raw:", raw("127.0.0.1", env["PA"]))
print("other-port get:", get("http://%s/token" % B))
print("other-port tunnel:", tunnel(B))
print("other-port raw:", raw("127.0.0.1", env["PB"]))
print("by-name tunnel:", tunnel("localhost:" + env["PA"]))
if env.get("HOST_ADDR"):
    print("host-address tunnel:", tunnel(env["HOST_ADDR"] + ":" + env["PC"]))
    print("host-address get:", get("http://%s:%s/token" % (env["HOST_ADDR"], env["PC"])))
    print("host-address raw:", raw(env["HOST_ADDR"], env["PC"]))
print("metadata tunnel:", tunnel("169.254.169.254:80"))
print("metadata raw:", raw("169.254.169.254", 80))
print("abstract:", unix("\0" + env["ABSTRACT"]))
print("unix-path:", unix(env["UNIX_PATH"]))
# A tunnel left open in a process of its own: the harness must close it with the session.
s, status = connect(A)
if status == "200":
    s.sendall(b"HOLD\r\n\r\n")
print("held:", status, flush=True)
if os.fork() == 0:
    import time
    time.sleep(600)
    os._exit(0)
PY
"#;

/// A wrapper that declares, through its sandbox query, the host service its
/// environment names, and calls it.
const WRAPPER: &str = r#"# loopbench: sandbox-query
if [ -n "${LOOPBENCH_SANDBOX_QUERY:-}" ]; then
  echo "net 127.0.0.1:$PA"
  exit 0
fi
exec python3 -c 'import os, urllib.request; print("wrapped get:", urllib.request.urlopen("http://127.0.0.1:%s/token" % os.environ["PA"], timeout=5).read().decode().strip())'
"#;

/// The host's services and sockets, and a suite whose arm `listed` runs [`PROBE`] with
/// the first service declared (by address, and by a name that resolves to the
/// loopback), and whose arm `wrapped` runs [`WRAPPER`] with `sandbox_network = true`.
struct Scene {
    tmp: tempfile::TempDir,
    suite: std::path::PathBuf,
    declared: HostService,
    other: HostService,
    everywhere: HostService,
    host_addr: String,
    _abstract_socket: std::os::unix::net::UnixListener,
    _path_socket: std::os::unix::net::UnixListener,
    _sockets: tempfile::TempDir,
}

impl Scene {
    /// The scene in `tmp`.
    fn new(tmp: tempfile::TempDir) -> Scene {
        let declared = HostService::start("127.0.0.1:0", "TOKEN-DECLARED");
        let other = HostService::start("127.0.0.1:0", "TOKEN-OTHER-PORT");
        let everywhere = HostService::start("0.0.0.0:0", "TOKEN-HOST-ADDRESS");
        let abstract_name = format!(
            "loopbench-net-test-{}-{}",
            std::process::id(),
            declared.port
        );
        let abstract_socket = {
            use std::os::linux::net::SocketAddrExt;
            let address =
                std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
            std::os::unix::net::UnixListener::bind_addr(&address).unwrap()
        };
        // Open to every user: only the sandbox's not showing it keeps the agent out.
        let sockets = tempfile::tempdir_in("/var/tmp").unwrap();
        let unix_path = sockets.path().join("host.sock");
        let path_socket = std::os::unix::net::UnixListener::bind(&unix_path).unwrap();
        for (path, mode) in [(sockets.path(), 0o755), (unix_path.as_path(), 0o777)] {
            std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))
                .unwrap();
        }
        let host_addr = host_address().unwrap_or_default();
        script(tmp.path(), "probe.sh", PROBE);
        script(tmp.path(), "wrapped.sh", WRAPPER);
        let env = format!(
            "env = {{ PA = \"{}\", PB = \"{}\", PC = \"{}\", HOST_ADDR = \"{host_addr}\", ABSTRACT = \"{abstract_name}\", UNIX_PATH = \"{}\" }}",
            declared.port,
            other.port,
            everywhere.port,
            unix_path.display()
        );
        let agents = format!(
            "[agents.listed]\ndriver = \"command\"\nprogram = \"./probe.sh\"\ntimeout = \"60s\"\nsandbox = \"bwrap\"\n\
             sandbox_network = [\"127.0.0.1:{port}\", \"localhost:{port}\"]\n{env}\n\n\
             [agents.wrapped]\ndriver = \"command\"\nprogram = \"./wrapped.sh\"\ntimeout = \"60s\"\nsandbox = \"bwrap\"\n\
             sandbox_network = true\n{env}\n",
            port = declared.port,
        );
        let arms = arm("listed", "listed", 1, "") + &arm("wrapped", "wrapped", 1, "");
        let suite = sh_suite(tmp.path(), &agents, &arms);
        Scene {
            tmp,
            suite,
            declared,
            other,
            everywhere,
            host_addr,
            _abstract_socket: abstract_socket,
            _path_socket: path_socket,
            _sockets: sockets,
        }
    }

    /// Checks what the run in `out` (its probe's `stdout`) found, stored and left.
    fn check(
        &self,
        out: &Path,
        probe: &str,
        sessions: &[std::collections::BTreeMap<String, String>],
    ) {
        let mut expected = vec![
            "proxy: relay".to_string(),
            "declared get: 200 TOKEN-DECLARED".into(),
            "declared tunnel: 200 TOKEN-DECLARED".into(),
            // The sandbox's own loopback: nothing of the host listens there.
            "declared raw: unreachable".into(),
            "other-port get: 403".into(),
            "other-port tunnel: 403".into(),
            "other-port raw: unreachable".into(),
            // Declared by name, resolved on the host to its loopback: refused.
            "by-name tunnel: 403".into(),
            "metadata tunnel: 403".into(),
            "metadata raw: unreachable".into(),
            "abstract: unreachable".into(),
            "unix-path: unreachable".into(),
            "held: 200".into(),
        ];
        if !self.host_addr.is_empty() {
            expected.extend([
                "host-address tunnel: 403".to_string(),
                "host-address get: 403".into(),
                "host-address raw: unreachable".into(),
            ]);
        }
        for line in &expected {
            assert!(
                probe.lines().any(|l| l == line),
                "'{line}' missing from the probe's output:\n{probe}"
            );
        }
        for row in sessions {
            assert_eq!(row["outcome"], "completed", "{row:?}");
            assert_eq!(row["error"], "", "{row:?}");
        }
        // Two answers to the probe, one to the wrapped agent.
        assert_eq!(self.declared.answered.load(Ordering::SeqCst), 3);
        assert_eq!(self.declared.held.load(Ordering::SeqCst), 1);
        for service in [&self.other, &self.everywhere] {
            assert_eq!(
                service.answered.load(Ordering::SeqCst),
                0,
                "{}",
                service.token
            );
        }
        // Every token but the declared one is nowhere in what the run stored.
        for entry in walkdir::WalkDir::new(out) {
            let entry = entry.unwrap();
            if entry.file_type().is_file() {
                let text =
                    String::from_utf8_lossy(&std::fs::read(entry.path()).unwrap()).into_owned();
                for secret in [&self.other.token, &self.everywhere.token] {
                    assert!(
                        !text.contains(secret.as_str()),
                        "{secret} in {}",
                        entry.path().display()
                    );
                }
            }
        }
        // The wrapper's `net` line, read with the agent's own environment, was enough.
        let wrapped = capture(out, "wrapped:shtask:0", "stdout");
        assert!(wrapped.contains("wrapped get: TOKEN-DECLARED"), "{wrapped}");

        // The tunnel left open ended with its session, and neither the relay nor the
        // agent is left (the relay's command line names the agent's program).
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.declared.open.load(Ordering::SeqCst) > 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(
            self.declared.open.load(Ordering::SeqCst),
            0,
            "a connection outlived its session"
        );
        let program = std::fs::canonicalize(self.tmp.path().join("probe.sh")).unwrap();
        assert!(live_processes_with_arg(program.to_str().unwrap()).is_empty());

        // The network log says what went through and what was refused.
        let log = capture(out, "listed:shtask:0", "net.log");
        let port = self.declared.port;
        assert!(
            log.contains(&format!("allowed CONNECT 127.0.0.1:{port}")),
            "{log}"
        );
        assert!(
            log.contains(&format!(
                "refused CONNECT 127.0.0.1:{}: not declared",
                self.other.port
            )),
            "{log}"
        );
        assert!(log.contains("a loopback address"), "{log}");

        // The manifest records what each arm could reach.
        let manifest: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
        assert_eq!(
            manifest["network"],
            serde_json::json!({
                "listed": [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
                "wrapped": [format!("127.0.0.1:{port}")],
            })
        );
    }
}

/// A captured file of session 1 of `trial` in the run `out`.
fn capture(out: &Path, trial: &str, what: &str) -> String {
    let path = out
        .join("agents")
        .join(trial)
        .join(format!("session-1.{what}"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn an_agent_with_network_reaches_what_its_arm_declares_and_nothing_of_the_host() {
    if !require_bwrap() {
        return;
    }
    let scene = Scene::new(common::visible_tempdir());
    let out = scene.tmp.path().join("out");
    let ran = run_ok(&scene.suite, &out);
    let probe = ran.capture("listed:shtask:0", 1, "stdout");
    scene.check(&out, &probe, &ran.sessions);
}

/// The same attack with the harness run by an ordinary user (`nobody`, from a root
/// test): its sandbox is a user namespace of that user, whose network namespace the
/// same relay and proxy lead out of.
#[test]
fn an_ordinary_users_agent_with_network_is_held_the_same() {
    if !require_bwrap() || !nix::unistd::geteuid().is_root() {
        return;
    }
    let user = loopbench::sandbox::SandboxUser::default();
    // A place of that user's own, which an ordinary user's sandbox shows as it is.
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let scene = Scene::new(tmp);
    user.hand_over(&[scene.tmp.path()]).unwrap();
    let out = scene.tmp.path().join("out");
    let ran = std::process::Command::new("setpriv")
        .arg(format!("--reuid={}", user.uid))
        .arg(format!("--regid={}", user.gid))
        .args(["--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&scene.suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("HOME", scene.tmp.path())
        .current_dir(scene.tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    if !ran.status.success() && stderr.contains("bwrap") && stderr.contains("namespace") {
        // This machine lets no ordinary user make namespaces.
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{stderr}");
        eprintln!("skipping: {stderr}");
        return;
    }
    assert!(ran.status.success(), "run as {}: {stderr}", user.spelled());
    // The harness ran as that user, so its sandbox was a user namespace.
    assert!(!stderr.contains("the harness runs as root"), "{stderr}");
    let probe = capture(&out, "listed:shtask:0", "stdout");
    scene.check(&out, &probe, &common::read_csv(&out.join("sessions.csv")));
}

#[test]
fn network_with_nothing_declared_or_a_target_that_is_not_one_is_refused_at_the_key() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        ("true", "nothing says what it may reach"),
        ("[]", "an empty list reaches nothing"),
        ("[\"api.anthropic.com\"]", "expected HOST:PORT"),
        ("[\"127.1:80\"]", "neither a host name nor an IPv4 address"),
        ("\"yes\"", "expected true, false or a list"),
    ];
    for (value, message) in cases {
        let agents = format!(
            "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nsandbox = \"bwrap\"\nsandbox_network = {value}\n"
        );
        let suite = sh_suite(tmp.path(), &agents, &arm("x", "x", 1, ""));
        let line = common::line_of(&suite.join("suite.toml"), "sandbox_network");
        let assert = loopbench().arg("validate").arg(&suite).assert().code(2);
        if value == "true" && !loopbench::sandbox::bwrap_works() {
            // Checked after bwrap, which does not work here.
            continue;
        }
        assert
            .stderr(predicate::str::contains(format!("suite.toml:{line}:")))
            .stderr(predicate::str::contains("sandbox_network"))
            .stderr(predicate::str::contains(message));
    }
}

/// Real Claude Code with `sandbox_network = true` and its API on the host's loopback
/// (the scripted model server, started outside the sandbox): the wrapper declares the
/// host of `ANTHROPIC_BASE_URL`, and the CLI follows the proxy variables to it; what
/// else it calls (api.anthropic.com) is refused, and the session still completes.
#[test]
fn real_claude_code_reaches_its_declared_api_through_the_proxy() {
    let Some(path) = common::clis::available("claude") else {
        return;
    };
    let tmp = common::visible_tempdir();
    let served = tmp.path().join("served.jsonl");
    let mut server = std::process::Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("mock-model")
        .arg("--scenario")
        .arg(common::repo_root().join("suites/real-cli-dryrun/scenario.jsonl"))
        .args(["--session", "1", "--log"])
        .arg(&served)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // "mock-model: serving session 1 of '...' at http://127.0.0.1:PORT (Ctrl-C ends)"
    let mut said = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.stderr.take().unwrap()),
        &mut said,
    )
    .unwrap();
    let port: u16 = said
        .split("http://127.0.0.1:")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {said:?}"));
    let suite = tmp.path().join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        format!(
            "name = \"net-claude\"\nseed = 1\nreplicates = 1\ntasks = [\"{task}\"]\n\n\
             [agents.claude]\ndriver = \"command\"\nprogram = \"{wrapper}\"\n\
             args = [\"--model\", \"claude-sonnet-4-5\"]\ntimeout = \"2m\"\nsandbox = \"bwrap\"\n\
             sandbox_network = true\n\
             env = {{ ANTHROPIC_BASE_URL = \"http://127.0.0.1:{port}\", ANTHROPIC_API_KEY = \"loopbench-mock-key\" }}\n\n\
             [[arm]]\nname = \"claude\"\nagent = \"claude\"\nlist_format = \"markdown\"\n\
             initializer = false\nmax_sessions = 1\nsession_turns = 40\n",
            task = common::repo_root()
                .join("suites/examples/tasks/latefees")
                .display(),
            wrapper = common::repo_root()
                .join("scripts/agents/claude.sh")
                .display(),
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let ran = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--out"])
        .arg(&out)
        .env("PATH", &path)
        .output()
        .unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert!(
        ran.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let sessions = common::read_csv(&out.join("sessions.csv"));
    let row = &sessions[0];
    assert_eq!(row["outcome"], "completed", "{row:?}");
    assert_eq!(row["error"], "", "{row:?}");
    assert_ne!(row["turns"], "0", "{row:?}");
    let calls = std::fs::read_to_string(&served).unwrap();
    assert!(calls.contains("\"kind\":\"main\""), "{calls}");
    let log_path = out
        .join("agents")
        .join(&row["trial_id"])
        .join("session-1.net.log");
    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        log.lines()
            .any(|l| l.starts_with("allowed ") && l.contains(&format!("127.0.0.1:{port} "))),
        "{log}"
    );
    assert!(
        !log.lines()
            .any(|l| l.starts_with("refused ") && l.contains(&format!("127.0.0.1:{port}"))),
        "{log}"
    );
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["network"]["claude"],
        serde_json::json!([format!("127.0.0.1:{port}")])
    );
}

/// A service's socket inside a place the sandbox shows (a toolchain on `PATH`): a
/// read-only bind would still let a client connect, so the socket is masked; in a
/// place the suite declares, it is refused.
#[test]
fn a_host_socket_inside_a_shown_place_is_masked_or_refused() {
    if !require_bwrap() {
        return;
    }
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let tool = tmp.path().join("tool");
    std::fs::create_dir_all(tool.join("bin")).unwrap();
    std::fs::create_dir_all(tool.join("share")).unwrap();
    let socket_path = tool.join("share/daemon.sock");
    let _socket = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    for (path, mode) in [
        (tmp.path(), 0o755),
        (tool.as_path(), 0o755),
        (&tool.join("share"), 0o755),
        (socket_path.as_path(), 0o777),
    ] {
        std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode)).unwrap();
    }
    let suite_dir = tmp.path().join("suite");
    std::fs::create_dir_all(&suite_dir).unwrap();
    script(
        &suite_dir,
        "probe.sh",
        "python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"socket: connected\")' \"$SOCK\" 2>/dev/null || echo 'socket: refused'\n",
    );
    let agents = format!(
        "[agents.x]\ndriver = \"command\"\nprogram = \"./probe.sh\"\nsandbox = \"bwrap\"\nenv = {{ SOCK = \"{}\" }}\n",
        socket_path.display()
    );
    let suite = sh_suite(&suite_dir, &agents, &arm("x", "x", 1, ""));
    let path = format!(
        "{}:{}",
        tool.join("bin").display(),
        std::env::var("PATH").unwrap()
    );
    let out = tmp.path().join("out");
    let ran = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let probe = capture(&out, "x:shtask:0", "stdout");
    assert_eq!(probe.trim(), "socket: refused");

    let agents = format!(
        "[agents.x]\ndriver = \"command\"\nprogram = \"./probe.sh\"\nsandbox = \"bwrap\"\nsandbox_ro = [\"{}\"]\n",
        tool.join("share").display()
    );
    let suite = sh_suite(&suite_dir, &agents, &arm("x", "x", 1, ""));
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("a host socket"));
}
