//! The harness's side of a sandbox's network: an HTTP proxy on a Unix socket that the
//! sandbox is shown, which connects only to the targets its arm declares. A client asks
//! with `CONNECT HOST:PORT` (an HTTPS API; the tunnel then carries its TLS untouched) or
//! sends a plain-HTTP request in absolute form (`GET http://HOST:PORT/path`), which is
//! forwarded once, with `Connection: close`. Anything else, a target not declared, a
//! name that resolves only to refused addresses ([`super::refused_address`], or the
//! host's own), is answered with an error status and closed.
//!
//! The proxy lives as long as one try of a session: dropping it shuts its runtime down,
//! which closes every connection it holds, whatever the sandbox left open. What it let
//! through and what it refused is written, one line per connection, to the session's
//! network log (`agents/<trial>/session-N.net.log`).

use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};

use super::NetTarget;
use super::policy::{own_addresses, refused_address};
use crate::error::{IoContext, Result, SandboxError};

/// Connections a sandbox may hold open through the proxy at once; one more is closed
/// as soon as it is accepted. Each costs the harness a task and two sockets.
pub const MAX_CONNECTIONS: usize = 64;
/// The largest request head (request line and headers) the proxy reads.
const HEAD_LIMIT: usize = 16 * 1024;
/// How long a client may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long resolving a name, and then connecting, may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long dropping the proxy waits for its runtime to stop (a name being resolved
/// on a blocking thread cannot be cut short; nothing connects after it).
const SHUTDOWN_WAIT: Duration = Duration::from_secs(1);
/// Lines of the network log; past them only their number is written, at the end.
const LOG_LINES: usize = 10_000;
/// The longest path a Unix socket can be bound at (`sockaddr_un`'s `sun_path`, less
/// its terminating NUL).
const SOCKET_PATH_MAX: usize = 107;

/// A running proxy for one try of a session.
pub struct Proxy {
    socket: PathBuf,
    runtime: Option<tokio::runtime::Runtime>,
    log: Arc<NetLog>,
    _dir: tempfile::TempDir,
}

impl Proxy {
    /// Starts a proxy that connects to `allowed` only, on a Unix socket in a fresh
    /// directory of the scratch root (which every sandbox hides; the socket alone is
    /// bound into the one it serves). Each connection is logged to `log`, created anew.
    pub fn start(allowed: Vec<NetTarget>, log: &Path) -> Result<Proxy> {
        let dir = crate::fsutil::scratch_dir("loopbench-net-")?;
        let socket = dir.path().join("proxy.sock");
        if socket.as_os_str().len() > SOCKET_PATH_MAX {
            return Err(SandboxError::SocketPathTooLong {
                socket,
                max: SOCKET_PATH_MAX,
            }
            .into());
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(4)
            .thread_name("loopbench-proxy")
            .enable_all()
            .build()
            .io_context(|| "cannot start the network proxy's runtime".into())?;
        let listener = runtime
            .block_on(async { UnixListener::bind(&socket) })
            .io_context(|| format!("cannot bind '{}'", socket.display()))?;
        // The directory is the harness's alone; the sandbox's user (a root harness's
        // unprivileged one) must be able to connect to the socket bound into it.
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o666))
            .io_context(|| format!("cannot open '{}' to the sandbox", socket.display()))?;
        let log = Arc::new(NetLog::create(log)?);
        let policy = Arc::new(allowed);
        runtime.spawn(accept(listener, policy, log.clone()));
        Ok(Proxy {
            socket,
            runtime: Some(runtime),
            log,
            _dir: dir,
        })
    }

    /// The Unix socket to bind into the sandbox.
    pub fn socket(&self) -> &Path {
        &self.socket
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_timeout(SHUTDOWN_WAIT);
        }
        self.log.finish();
    }
}

/// Accepts connections until the runtime is shut down, at most [`MAX_CONNECTIONS`]
/// served at once.
async fn accept(listener: UnixListener, allowed: Arc<Vec<NetTarget>>, log: Arc<NetLog>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    loop {
        let client = match listener.accept().await {
            Ok((client, _)) => client,
            Err(_) => {
                // Out of descriptors, say: wait rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            log.line(&format!(
                "refused a connection: {MAX_CONNECTIONS} are open already"
            ));
            continue;
        };
        let (allowed, log) = (allowed.clone(), log.clone());
        tokio::spawn(async move {
            serve(client, &allowed, &log).await;
            drop(slot);
        });
    }
}

/// Serves one client: reads its request, connects where it may go, and relays bytes
/// both ways until either side closes.
async fn serve(mut client: UnixStream, allowed: &[NetTarget], log: &NetLog) {
    let Ok(Ok((head, rest))) = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client)).await
    else {
        return;
    };
    let request = match Request::parse(&head) {
        Ok(request) => request,
        Err(why) => {
            log.line(&format!("refused a request: {why}"));
            answer(&mut client, "400 Bad Request", &why).await;
            return;
        }
    };
    let said = format!("{} {}", request.method, request.target);
    if !allowed.contains(&request.target) {
        let why = format!("{} is not declared for this agent", request.target);
        log.line(&format!("refused {said}: not declared"));
        answer(&mut client, "403 Forbidden", &why).await;
        return;
    }
    let (mut upstream, address) = match connect(&request.target).await {
        Ok(connected) => connected,
        Err((status, why)) => {
            log.line(&format!("refused {said}: {why}"));
            answer(&mut client, status, &why).await;
            return;
        }
    };
    log.line(&format!("allowed {said} ({address})"));
    let sent = match &request.forward {
        None => {
            client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
        }
        Some(head) => upstream.write_all(head).await,
    };
    if sent.is_err() || upstream.write_all(&rest).await.is_err() {
        return;
    }
    let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
}

/// Reads up to the end of the request head: the head, and what came after it.
async fn read_head(client: &mut UnixStream) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(at) = buf[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            let end = from + at + 4;
            let rest = buf.split_off(end);
            return Ok((buf, rest));
        }
        if buf.len() > HEAD_LIMIT {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// Writes an error answer and lets the client go.
async fn answer(client: &mut UnixStream, status: &str, why: &str) {
    let body = format!("loopbench sandbox: {why}\n");
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = client.write_all(text.as_bytes()).await;
    let _ = client.shutdown().await;
}

/// Connects to `target`: its address as declared, else what its name resolves to on
/// the host, refused addresses left out. On failure, the status to answer and why.
async fn connect(
    target: &NetTarget,
) -> std::result::Result<(TcpStream, SocketAddr), (&'static str, String)> {
    let by_name = target.literal().is_none();
    let candidates: Vec<SocketAddr> = match target.literal() {
        Some(ip) => vec![SocketAddr::new(ip, target.port())],
        None => resolve(target)
            .await
            .map_err(|why| ("403 Forbidden", why))?,
    };
    let mut last = String::from("no address to connect to");
    for address in candidates {
        match tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await {
            Ok(Ok(stream)) => {
                // Both ends one address: the host itself, whatever the tables said.
                let local = stream.local_addr().ok().map(|a| a.ip());
                if by_name && local == Some(address.ip()) {
                    last = format!("{} is the host's own address", address.ip());
                    continue;
                }
                return Ok((stream, address));
            }
            Ok(Err(e)) => last = format!("cannot connect to {address}: {e}"),
            Err(_) => last = format!("cannot connect to {address}: no answer in time"),
        }
    }
    Err(("502 Bad Gateway", last))
}

/// The addresses `target`'s name resolves to on the host that a sandbox may reach.
async fn resolve(target: &NetTarget) -> std::result::Result<Vec<SocketAddr>, String> {
    let found = tokio::time::timeout(
        CONNECT_TIMEOUT,
        tokio::net::lookup_host((target.host(), target.port())),
    )
    .await
    .map_err(|_| format!("{} did not resolve in time", target.host()))?
    .map_err(|e| format!("{} does not resolve: {e}", target.host()))?;
    let own = own_addresses();
    let mut refused = None;
    let mut reachable = Vec::new();
    for address in found {
        let ip = address.ip();
        let why = refused_address(ip).or_else(|| own.contains(&ip).then_some("the host's own"));
        match why {
            Some(why) => {
                refused.get_or_insert_with(|| format!("{ip} is {why}"));
            }
            None => reachable.push(address),
        }
    }
    if reachable.is_empty() {
        return Err(match refused {
            Some(r) => format!(
                "{} resolves only to addresses no sandbox reaches by name ({r}; declare the \
                 address itself to reach it)",
                target.host()
            ),
            None => format!("{} resolves to no address", target.host()),
        });
    }
    Ok(reachable)
}

/// What a client asked for.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    /// The method, as sent (`CONNECT`, `GET`, ...).
    method: String,
    /// Where to.
    target: NetTarget,
    /// A plain-HTTP request: the head to send on, in origin form, with `Connection:
    /// close`; `None` for `CONNECT`.
    forward: Option<Vec<u8>>,
}

impl Request {
    /// Reads a request head: `CONNECT HOST:PORT HTTP/1.x`, or `METHOD
    /// http://HOST[:PORT][/PATH] HTTP/1.x` with its headers.
    fn parse(head: &[u8]) -> std::result::Result<Request, String> {
        let text = std::str::from_utf8(head).map_err(|_| "a request head that is not text")?;
        let mut lines = text.split("\r\n");
        let first = lines.next().unwrap_or_default();
        let mut words = first.split(' ');
        let (Some(method), Some(uri), Some(version), None) =
            (words.next(), words.next(), words.next(), words.next())
        else {
            return Err("a request line that is not METHOD TARGET VERSION".into());
        };
        let token = |w: &str| !w.is_empty() && w.bytes().all(|b| b.is_ascii_alphabetic());
        if !token(method) || !version.starts_with("HTTP/1.") {
            return Err("a request line that is not METHOD TARGET HTTP/1.x".into());
        }
        if method.eq_ignore_ascii_case("CONNECT") {
            let target =
                NetTarget::parse(uri).map_err(|_| "a CONNECT target that is not HOST:PORT")?;
            return Ok(Request {
                method: "CONNECT".into(),
                target,
                forward: None,
            });
        }
        let scheme_end = uri
            .find("://")
            .ok_or("a request that is neither CONNECT nor to an http:// URL")?;
        if !uri[..scheme_end].eq_ignore_ascii_case("http") {
            return Err("a request to a URL that is not http://".into());
        }
        let after = &uri[scheme_end + 3..];
        let split = after.find(['/', '?', '#']).unwrap_or(after.len());
        let (authority, path) = after.split_at(split);
        if authority.contains('@') {
            return Err("a URL with credentials in it".into());
        }
        let with_port = if authority.ends_with(']') || !authority.contains(':') {
            format!("{authority}:80")
        } else {
            authority.to_string()
        };
        let target = NetTarget::parse(&with_port).map_err(|_| "a URL whose host is not a host")?;
        let path = match path {
            "" => "/".to_string(),
            p if p.starts_with('/') => p.to_string(),
            p => format!("/{p}"),
        };
        let mut forward = format!("{method} {path} {version}\r\n");
        for line in lines.filter(|l| !l.is_empty()) {
            let name = line.split(':').next().unwrap_or_default().trim();
            let hop = [
                "connection",
                "proxy-connection",
                "proxy-authorization",
                "keep-alive",
            ];
            if !hop.iter().any(|h| name.eq_ignore_ascii_case(h)) {
                forward.push_str(line);
                forward.push_str("\r\n");
            }
        }
        forward.push_str("Connection: close\r\n\r\n");
        Ok(Request {
            method: method.to_string(),
            target,
            forward: Some(forward.into_bytes()),
        })
    }
}

/// The session's network log: one line per connection, at most [`LOG_LINES`].
struct NetLog {
    file: Mutex<(std::fs::File, usize)>,
}

impl NetLog {
    fn create(path: &Path) -> Result<NetLog> {
        let file = std::fs::File::create(path)
            .io_context(|| format!("cannot create '{}'", path.display()))?;
        Ok(NetLog {
            file: Mutex::new((file, 0)),
        })
    }

    /// Appends `line`, its characters outside printable ASCII replaced (a target
    /// comes from the agent).
    fn line(&self, line: &str) {
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        let (file, count) = &mut *guard;
        *count += 1;
        if *count <= LOG_LINES {
            let clean: String = line
                .chars()
                .take(400)
                .map(|c| {
                    if c.is_ascii_graphic() || c == ' ' {
                        c
                    } else {
                        '?'
                    }
                })
                .collect();
            let _ = writeln!(file, "{clean}");
        }
    }

    /// Says how many lines were left out, if any.
    fn finish(&self) {
        if let Ok(mut guard) = self.file.lock() {
            let (file, count) = &mut *guard;
            if *count > LOG_LINES {
                let _ = writeln!(file, "... and {} more connections", *count - LOG_LINES);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(head: &str) -> std::result::Result<Request, String> {
        Request::parse(head.as_bytes())
    }

    #[test]
    fn a_connect_names_its_target_and_forwards_nothing() {
        let r = parse("CONNECT API.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        assert_eq!(r.target, NetTarget::parse("api.anthropic.com:443").unwrap());
        assert_eq!(r.forward, None);
        assert!(parse("CONNECT [::1]:22 HTTP/1.1\r\n\r\n").is_ok());
    }

    #[test]
    fn a_plain_request_goes_on_in_origin_form_with_the_connection_closed() {
        let r = parse(
            "GET http://127.0.0.1:8080/token?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n\
             Proxy-Connection: keep-alive\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n",
        )
        .unwrap();
        assert_eq!(r.target, NetTarget::parse("127.0.0.1:8080").unwrap());
        assert_eq!(
            String::from_utf8(r.forward.unwrap()).unwrap(),
            "GET /token?x=1 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        let bare = parse("POST http://example.com HTTP/1.0\r\n\r\n").unwrap();
        assert_eq!(bare.target, NetTarget::parse("example.com:80").unwrap());
        assert!(bare.forward.unwrap().starts_with(b"POST / HTTP/1.0\r\n"));
        assert_eq!(
            parse("GET http://[::1]/ HTTP/1.1\r\n\r\n").unwrap().target,
            NetTarget::parse("[::1]:80").unwrap()
        );
    }

    #[test]
    fn anything_but_connect_or_an_http_url_is_malformed() {
        for bad in [
            "GET / HTTP/1.1\r\n\r\n",
            "GET https://example.com/ HTTP/1.1\r\n\r\n",
            "GET http://user:pw@example.com/ HTTP/1.1\r\n\r\n",
            "CONNECT example.com HTTP/1.1\r\n\r\n",
            "CONNECT example.com:443 SSH-2.0\r\n\r\n",
            "CONNECT  example.com:443 HTTP/1.1\r\n\r\n",
            "\u{1b}[2J example.com:443 HTTP/1.1\r\n\r\n",
            "GET ftp://example.com/ HTTP/1.1\r\n\r\n",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(Request::parse(b"CONNECT \xff:443 HTTP/1.1\r\n\r\n").is_err());
    }
}
