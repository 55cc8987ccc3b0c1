//! Python virtual environments for the tests that read loopbench's exports with other
//! tools' own Python packages (the `python_interop` tests): each made once, from PyPI,
//! under a cache directory, by the first test that asks for it, under a file lock so
//! that tests running at once do not race; the others wait and reuse it.
//!
//! A test skips, saying so on its output with the reason, only when PyPI cannot be
//! reached; any other failure (no `python3`, a package that does not install) fails it.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A virtual environment with its packages installed.
pub struct Venv {
    /// Its directory.
    pub dir: PathBuf,
}

impl Venv {
    /// Its `python`.
    pub fn python(&self) -> PathBuf {
        self.dir.join("bin/python")
    }

    /// A program it installed (`inspect`).
    pub fn program(&self, name: &str) -> PathBuf {
        self.dir.join("bin").join(name)
    }

    /// Runs `script` with its `python` and `args`; panics with the script's output when
    /// it fails, else returns its stdout.
    pub fn run_script(&self, script: &str, args: &[&std::ffi::OsStr]) -> String {
        let out = Command::new(self.python())
            .arg("-c")
            .arg(script)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "python failed ({}):\nstdout:\n{}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Where the environments are kept: `$LOOPBENCH_VENV_CACHE`, else
/// `~/.cache/loopbench-venvs`, else (no `HOME`) beside the build's target directory.
fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("LOOPBENCH_VENV_CACHE") {
        return PathBuf::from(dir);
    }
    match std::env::var_os("HOME") {
        Some(home) => Path::new(&home).join(".cache/loopbench-venvs"),
        None => Path::new(env!("CARGO_TARGET_TMPDIR")).join("python-venvs"),
    }
}

/// The environment `name` holding `packages` (each pinned, `NAME==VERSION`), made once;
/// `None`, after printing why, when PyPI cannot be reached to make it. `test` names the
/// test in that message.
pub fn venv(test: &str, name: &str, packages: &[&str]) -> Option<Venv> {
    venv_of(test, name, Path::new("python3"), packages)
}

/// A Python of at least 3.`minor`: on `PATH` (`python3.13`, `python3.12`... as the
/// distributions name them, else `python3` when it is recent enough), else one pyenv
/// installed (`$PYENV_ROOT`, else `~/.pyenv`, `versions/*/bin/python3`: pyenv's shims
/// answer only for the versions it selected); `None`, after printing why `test` skips,
/// when there is none.
pub fn python_at_least(test: &str, minor: u32) -> Option<PathBuf> {
    let mut names: Vec<PathBuf> = (minor..=20)
        .rev()
        .map(|m| PathBuf::from(format!("python3.{m}")))
        .chain([PathBuf::from("python3")])
        .collect();
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pyenv")));
    if let Some(Ok(versions)) = pyenv.map(|p| std::fs::read_dir(p.join("versions"))) {
        let mut found: Vec<PathBuf> = versions
            .filter_map(|e| Some(e.ok()?.path().join("bin/python3")))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        names.extend(found.into_iter().rev());
    }
    for name in &names {
        let Ok(out) = Command::new(name)
            .args(["-c", "import sys; print(sys.version_info[1])"])
            .output()
        else {
            continue;
        };
        let found = String::from_utf8_lossy(&out.stdout).trim().parse::<u32>();
        if out.status.success() && found.is_ok_and(|m| m >= minor) {
            return Some(name.clone());
        }
    }
    eprintln!(
        "SKIPPED {test}: no Python 3.{minor} or later (looked for python3.{minor} to \
         python3.20 and python3 on PATH, and pyenv's versions), which the packages it \
         runs need"
    );
    None
}

/// [`venv`] made with the interpreter `python` (its key includes the interpreter's
/// name).
pub fn venv_of(test: &str, name: &str, python: &Path, packages: &[&str]) -> Option<Venv> {
    let root = cache_root();
    std::fs::create_dir_all(&root).unwrap();
    let mut hasher = blake3::Hasher::new();
    if python != Path::new("python3") {
        hasher.update(python.as_os_str().as_encoded_bytes());
        hasher.update(b"\n");
    }
    for p in packages {
        hasher.update(p.as_bytes());
        hasher.update(b"\n");
    }
    let key = format!("{name}-{}", &hasher.finalize().to_hex()[..12]);
    let dir = root.join(&key);
    let lock = File::create(root.join(format!("{key}.lock"))).unwrap();
    lock.lock().unwrap();
    let made = dir.join("complete");
    if !made.exists() {
        if let Err(reason) = pypi_reachable() {
            lock.unlock().unwrap();
            eprintln!(
                "SKIPPED {test}: PyPI cannot be reached ({reason}), so the Python packages \
                 {packages:?} it checks the export with cannot be installed"
            );
            return None;
        }
        // A venv's scripts name its python by absolute path, so it is made where it
        // stays; one left half made by a test that died is made again.
        if dir.exists() {
            std::fs::remove_dir_all(&dir).unwrap();
        }
        let status = Command::new(python)
            .args(["-m", "venv"])
            .arg(&dir)
            .status()
            .expect("python3 is needed to make a virtual environment");
        assert!(
            status.success(),
            "{} -m venv {}: {status}",
            python.display(),
            dir.display()
        );
        let out = Command::new(dir.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(packages)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "pip install {packages:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(&made, packages.join("\n")).unwrap();
    }
    lock.unlock().unwrap();
    Some(Venv { dir })
}

/// Whether PyPI answers: a TCP connection to its index (`$PIP_INDEX_URL`'s host, else
/// pypi.org) within 10 seconds.
fn pypi_reachable() -> Result<(), String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let host = std::env::var("PIP_INDEX_URL")
        .ok()
        .and_then(|url| {
            let rest = url.split("://").nth(1)?.to_string();
            let host = rest.split(['/', '@']).next()?.to_string();
            Some(if host.contains(':') {
                host
            } else {
                format!("{host}:443")
            })
        })
        .unwrap_or_else(|| "pypi.org:443".to_string());
    let addrs = host
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?;
    let mut last = format!("{host} has no address");
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, Duration::from_secs(10)) {
            Ok(_) => return Ok(()),
            Err(e) => last = format!("cannot connect to {host} ({addr}): {e}"),
        }
    }
    Err(last)
}
