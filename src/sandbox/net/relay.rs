//! `loopbench net-relay`, inside the sandbox: the agent's way out. The sandbox's network
//! namespace has only `lo`, so the relay listens on its 127.0.0.1 and hands each
//! connection, byte for byte, to the harness's proxy through the Unix socket bound into
//! the sandbox; the agent's environment names it as its HTTP proxy. The relay decides
//! nothing: a client that talks to the socket itself meets the same proxy.

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;

use tokio::net::{TcpListener, UnixStream};

use crate::error::{IoContext, Result, SandboxError};

/// The variables that name the relay as the agent's proxy (both spellings: curl reads
/// only the lower-case `http_proxy`, Node and Python read either).
pub const PROXY_VARIABLES: &[&str] = &[
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// The destinations a client reaches without the proxy when the sandbox's own loopback
/// serves something (the scripted model server).
const LOOPBACK: &str = "127.0.0.1,localhost,::1";

/// Runs `command` with [`PROXY_VARIABLES`] naming a listener on 127.0.0.1 that hands
/// every connection to the proxy at `socket`, and returns its exit code (128 + N when
/// signal N ended it). `direct_loopback`: `NO_PROXY` lets the agent reach the sandbox's
/// own loopback directly; otherwise `NO_PROXY` is removed, so that nothing it names
/// bypasses the proxy into a namespace where nothing else answers.
pub fn relay(socket: &Path, direct_loopback: bool, command: &[OsString]) -> Result<i32> {
    let Some((program, args)) = command.split_first() else {
        return Err(SandboxError::RelayWithoutCommand.into());
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .io_context(|| "cannot start the relay's runtime".into())?;
    runtime.block_on(async {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .io_context(|| "cannot listen on 127.0.0.1".into())?;
        let port = listener
            .local_addr()
            .io_context(|| "cannot read the relay's address".into())?
            .port();
        let url = format!("http://127.0.0.1:{port}");
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .stdin(Stdio::inherit())
            .stdout(Stdio::inherit())
            .stderr(Stdio::inherit());
        for name in PROXY_VARIABLES {
            cmd.env(name, &url);
        }
        for name in ["NO_PROXY", "no_proxy"] {
            if direct_loopback {
                cmd.env(name, LOOPBACK);
            } else {
                cmd.env_remove(name);
            }
        }
        let mut child = cmd.spawn().map_err(|e| SandboxError::RelayCannotStart {
            program: program.to_string_lossy().into_owned(),
            why: e.to_string(),
        })?;
        let socket = socket.to_path_buf();
        tokio::spawn(async move {
            while let Ok((mut tcp, _)) = listener.accept().await {
                let socket = socket.clone();
                tokio::spawn(async move {
                    if let Ok(mut unix) = UnixStream::connect(&socket).await {
                        let _ = tokio::io::copy_bidirectional(&mut tcp, &mut unix).await;
                    }
                });
            }
        });
        let status = child
            .wait()
            .await
            .io_context(|| format!("cannot wait for '{}'", program.to_string_lossy()))?;
        use std::os::unix::process::ExitStatusExt;
        Ok(status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(9)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn a_relay_without_a_command_or_with_one_that_cannot_start_is_refused() {
        let socket = Path::new("/nonexistent/proxy.sock");
        let refusal = |result: Result<i32>| match result {
            Err(Error::Sandbox(e)) => *e,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            refusal(relay(socket, false, &[])),
            SandboxError::RelayWithoutCommand
        );
        let missing = OsString::from("/nonexistent/loopbench-no-such-program");
        assert!(matches!(
            refusal(relay(socket, false, &[missing])),
            SandboxError::RelayCannotStart { program, .. }
                if program == "/nonexistent/loopbench-no-such-program"
        ));
    }
}
