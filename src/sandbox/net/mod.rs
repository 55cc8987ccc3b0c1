//! The network of a sandboxed agent that needs one (an agent CLI calling its API): the
//! sandbox keeps a network namespace of its own, with only `lo`, so that no raw socket
//! reaches the host's loopback, its abstract Unix sockets or any other address. Inside
//! it a relay ([`relay`], `loopbench net-relay`) listens on the sandbox's 127.0.0.1 and
//! hands each connection through a Unix socket bound into the sandbox to a proxy in the
//! harness ([`Proxy`]), which connects only to the `HOST:PORT` pairs the arm declares
//! ([`NetTarget`]), resolves names on the host, and never to the host's loopback, its
//! own addresses, link-local, private or reserved ranges unless the arm declared that
//! very address ([`refused_address`]).
//!
//! | piece | where it runs | what it does |
//! | --- | --- | --- |
//! | [`Proxy`] | the harness, one per session try | HTTP `CONNECT` and plain-HTTP forwarding to declared targets only; every connection ends with the session |
//! | [`relay`] | the sandbox, in front of the agent | 127.0.0.1:PORT to the proxy's socket; `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` name it in the agent's environment |

mod policy;
mod proxy;
mod relay;
mod target;

pub use policy::refused_address;
pub use proxy::{MAX_CONNECTIONS, Proxy};
pub use relay::{PROXY_VARIABLES, relay};
pub use target::NetTarget;
