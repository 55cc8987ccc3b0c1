//! One place a sandboxed agent may reach, `HOST:PORT`, as a suite (`sandbox_network`)
//! or a wrapper's sandbox query (`net HOST:PORT`) declares it, and as a client names it
//! to the proxy (`CONNECT HOST:PORT`): both are read by the same parser, so that they
//! compare equal exactly when they name the same host and port.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `HOST:PORT`: a host name (lower case, no trailing dot) or an IP address, and a port.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NetTarget {
    host: String,
    port: u16,
}

/// What a target must look like, for messages.
pub const EXPECTED: &str = "expected HOST:PORT (a host name, an IPv4 address or an IPv6 \
                            address in brackets, and a port from 1 to 65535)";

impl NetTarget {
    /// Reads `HOST:PORT`, `IPV4:PORT` or `[IPV6]:PORT`. A host name is made of letters,
    /// digits, `-` and `_` in dot-separated labels, and its last label is not a number
    /// (so that `127.1` or `2130706433`, which resolvers read as addresses, is never
    /// taken for a name).
    pub fn parse(text: &str) -> std::result::Result<NetTarget, String> {
        let bad = |why: &str| format!("'{text}': {why}; {EXPECTED}");
        let (host, port) = if let Some(rest) = text.strip_prefix('[') {
            let (inside, port) = rest
                .split_once("]:")
                .ok_or_else(|| bad("no ']:PORT' after the IPv6 address"))?;
            let ip: Ipv6Addr = inside
                .parse()
                .map_err(|_| bad("not an IPv6 address in the brackets"))?;
            (ip.to_string(), port)
        } else {
            let (host, port) = text.rsplit_once(':').ok_or_else(|| bad("no port"))?;
            if host.contains(':') {
                return Err(bad("an IPv6 address goes in brackets"));
            }
            (host_name_or_v4(host).map_err(|why| bad(&why))?, port)
        };
        if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) || port.len() > 5 {
            return Err(bad("the port is not a number"));
        }
        let port: u16 = match port.parse() {
            Ok(p) if p > 0 => p,
            _ => return Err(bad("the port is out of range")),
        };
        Ok(NetTarget { host, port })
    }

    /// The host as declared (lower case; an IPv6 address without brackets).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address, when the host is written as one: declared that way, the target is
    /// reached at that address whatever range it lies in.
    pub fn literal(&self) -> Option<IpAddr> {
        self.host.parse().ok()
    }
}

impl std::fmt::Display for NetTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// A host name (lower-cased, without its trailing dot) or an IPv4 address.
fn host_name_or_v4(host: &str) -> std::result::Result<String, String> {
    if let Ok(ip) = host.parse::<Ipv4Addr>() {
        return Ok(ip.to_string());
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if name.is_empty() || name.len() > 253 {
        return Err("no host name".into());
    }
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if !name.split('.').all(label_ok) {
        return Err(format!("'{host}' is not a host name"));
    }
    let last = name.rsplit('.').next().unwrap_or(&name);
    if last.bytes().all(|b| b.is_ascii_digit()) || last.starts_with("0x") {
        return Err(format!(
            "'{host}' is neither a host name nor an IPv4 address in dotted decimal"
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_and_addresses_are_read_in_one_spelling() {
        let t = NetTarget::parse("API.Anthropic.com.:443").unwrap();
        assert_eq!((t.host(), t.port()), ("api.anthropic.com", 443));
        assert_eq!(t.to_string(), "api.anthropic.com:443");
        assert_eq!(t.literal(), None);
        let v4 = NetTarget::parse("127.0.0.1:8080").unwrap();
        assert_eq!(v4.literal(), Some(IpAddr::from([127, 0, 0, 1])));
        let v6 = NetTarget::parse("[0:0::1]:80").unwrap();
        assert_eq!(v6.host(), "::1");
        assert_eq!(v6.to_string(), "[::1]:80");
        assert_eq!(v6, NetTarget::parse("[::1]:80").unwrap());
        assert_eq!(
            NetTarget::parse("my_gw-1.corp.example:8443")
                .unwrap()
                .host(),
            "my_gw-1.corp.example"
        );
    }

    #[test]
    fn what_is_not_one_host_and_one_port_is_refused() {
        for bad in [
            "",
            "api.anthropic.com",
            "api.anthropic.com:",
            ":443",
            "api.anthropic.com:0",
            "api.anthropic.com:65536",
            "api.anthropic.com:+443",
            "api.anthropic.com:443/v1",
            "https://api.anthropic.com:443",
            "*.anthropic.com:443",
            "::1:80",
            "[::1]80",
            "[127.0.0.1]:80",
            "127.1:80",
            "2130706433:80",
            "0x7f000001:80",
            "-bad.example:80",
            "a..b:80",
            "user@host:80",
            "host name:80",
        ] {
            assert!(NetTarget::parse(bad).is_err(), "{bad:?} was accepted");
        }
        let err = NetTarget::parse("api.anthropic.com").unwrap_err();
        assert!(err.contains("expected HOST:PORT"), "{err}");
    }

    proptest! {
        #[test]
        fn the_parser_never_panics_and_reads_back_what_it_writes(text in "\\PC{0,40}") {
            if let Ok(t) = NetTarget::parse(&text) {
                prop_assert_eq!(NetTarget::parse(&t.to_string()), Ok(t));
            }
        }
    }
}
