//! Which addresses the proxy never connects to for a target declared by name: a name
//! is resolved on the host, where anyone who controls its DNS could point it at the
//! host's loopback, the cloud metadata service (169.254.169.254) or a machine of the
//! private network. Only an arm that declares the address itself reaches it.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address a declared name resolved to is refused, or `None` for a public
/// unicast address. IPv4 addresses carried inside IPv6 ones (mapped, compatible,
/// NAT64, 6to4) are judged as the IPv4 address they carry.
pub fn refused_address(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => refused_v4(v4),
        IpAddr::V6(v6) => refused_v6(v6),
    }
}

fn refused_v4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, c, _] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_link_local() {
        Some("a link-local address (the cloud metadata service among them)")
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) {
        Some("a private address")
    } else if a == 0 {
        Some("an address of 'this network' (0.0.0.0/8)")
    } else if ip.is_multicast() || a >= 240 {
        Some("a multicast, broadcast or reserved address")
    } else if ip.is_documentation()
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
    {
        Some("a reserved address")
    } else {
        None
    }
}

fn refused_v6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return refused_v4(v4);
    }
    let s = ip.segments();
    let embedded = |hi: u16, lo: u16| Ipv4Addr::from((u32::from(hi) << 16) | u32::from(lo));
    if ip.is_unspecified() {
        Some("the unspecified address")
    } else if ip.is_loopback() {
        Some("a loopback address")
    } else if s[..6] == [0; 6] {
        // ::a.b.c.d, the deprecated IPv4-compatible form: never a real destination.
        Some("a reserved address")
    } else if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        refused_v4(embedded(s[6], s[7]))
    } else if s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1 {
        Some("a private address (local-use NAT64)")
    } else if s[0] == 0x2002 {
        refused_v4(embedded(s[1], s[2]))
    } else if s[0] & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if s[0] & 0xffc0 == 0xfec0 || s[0] & 0xfe00 == 0xfc00 {
        Some("a private address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if (s[0] == 0x2001 && s[1] == 0xdb8) || s[..4] == [0x100, 0, 0, 0] {
        Some("a reserved address")
    } else {
        None
    }
}

/// The host's own addresses, every interface's, as the kernel lists them: IPv4 from
/// `/proc/net/fib_trie` (its `/32 host LOCAL` entries), IPv6 from `/proc/net/if_inet6`.
/// A service bound to `0.0.0.0` answers on each of them.
pub fn own_addresses() -> Vec<IpAddr> {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let mut found = local_v4(&read("/proc/net/fib_trie"));
    found.extend(local_v6(&read("/proc/net/if_inet6")));
    found.sort();
    found.dedup();
    found
}

/// The addresses followed by a `/32 host LOCAL` line in the text of `fib_trie`.
fn local_v4(fib_trie: &str) -> Vec<IpAddr> {
    let mut found = Vec::new();
    let mut last: Option<Ipv4Addr> = None;
    for line in fib_trie.lines() {
        let line = line.trim();
        if let Some(addr) = line.strip_prefix("|-- ") {
            last = addr.trim().parse().ok();
        } else if line.starts_with("/32 host LOCAL")
            && let Some(ip) = last
        {
            found.push(IpAddr::V4(ip));
        }
    }
    found
}

/// The addresses (32 hex digits, first on each line) of `if_inet6`.
fn local_v6(if_inet6: &str) -> Vec<IpAddr> {
    if_inet6
        .lines()
        .filter_map(|line| u128::from_str_radix(line.split_whitespace().next()?, 16).ok())
        .map(|bits| IpAddr::V6(Ipv6Addr::from(bits)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(text: &str) -> bool {
        refused_address(text.parse().unwrap()).is_some()
    }

    #[test]
    fn the_loopback_metadata_private_and_reserved_ranges_are_refused_in_every_spelling() {
        for addr in [
            "127.0.0.1",
            "127.255.0.9",
            "169.254.169.254",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "100.100.100.200",
            "0.0.0.0",
            "255.255.255.255",
            "224.0.0.1",
            "192.0.2.2",
            "198.18.0.1",
            "::",
            "::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "64:ff9b:1::1",
            "2002:7f00:1::1",
            "fe80::1",
            "fd00:ec2::254",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
        ] {
            assert!(refused(addr), "{addr} was let through");
        }
        for addr in [
            "160.79.104.10",
            "8.8.8.8",
            "100.128.0.1",
            "172.32.0.1",
            "2607:6bc0::10",
            "64:ff9b::808:808",
            "::ffff:8.8.8.8",
        ] {
            assert!(!refused(addr), "{addr} was refused");
        }
    }

    #[test]
    fn the_hosts_own_addresses_are_read_from_the_kernels_tables() {
        let fib = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 0.0.0.0\n        /0 universe UNICAST\n     \
                   +-- 192.0.2.0/24 2 0 2\n        |-- 192.0.2.2\n           /32 host LOCAL\n        \
                   |-- 192.0.2.255\n           /32 link BROADCAST\nLocal:\n     |-- 127.0.0.1\n        \
                   /32 host LOCAL\n";
        assert_eq!(
            local_v4(fib),
            ["192.0.2.2", "127.0.0.1"].map(|a| a.parse::<IpAddr>().unwrap())
        );
        let inet6 = "fd000000000000000000000000000002 04 40 00 82     eth0\n\
                     00000000000000000000000000000001 01 80 10 80       lo\n";
        assert_eq!(
            local_v6(inet6),
            ["fd00::2", "::1"].map(|a| a.parse::<IpAddr>().unwrap())
        );
        assert!(own_addresses().contains(&"127.0.0.1".parse().unwrap()));
    }
}
