//! Whether an endpoint reaches a socket of this machine's loopback: every
//! spelling of an address that connects to the same listener.
//!
//! A URL's host is read as the WHATWG URL parser reads it (so `127.1`,
//! `0x7f.0.0.1` and `2130706433` are `127.0.0.1`). Then:
//!
//! * an IPv4-mapped IPv6 address (`[::ffff:127.0.0.1]`) is its IPv4
//!   address: a connection to it reaches the IPv4 listener;
//! * the unspecified address (`0.0.0.0`, `[::]`) connects to the local
//!   host's loopback (`127.0.0.1`, `[::1]`) on Linux and the BSDs;
//! * `localhost` (any case, a trailing dot, or a name under `.localhost`,
//!   RFC 6761) resolves to `127.0.0.1` and `::1`, and a client tries both:
//!   it reaches a listener on either;
//! * otherwise the two addresses must be the same: `127.0.0.2` is not
//!   `127.0.0.1`, `[::1]` is not `127.0.0.1` (another socket).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// Whether a connection to `endpoint` (a URL) reaches the listener on
/// `addr`.
pub(crate) fn reaches(endpoint: &str, addr: SocketAddr) -> bool {
    let Ok(url) = reqwest::Url::parse(endpoint.trim()) else {
        return false;
    };
    if url.port_or_known_default() != Some(addr.port()) {
        return false;
    }
    let listener = canonical(addr.ip());
    // The parser writes an IPv4 host in dotted form and an IPv6 one in
    // brackets.
    let Some(host) = url.host_str() else {
        return false;
    };
    if let Some(v6) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return v6
            .parse::<Ipv6Addr>()
            .is_ok_and(|ip| canonical(IpAddr::V6(ip)) == listener);
    }
    if let Ok(v4) = host.parse::<Ipv4Addr>() {
        return canonical(IpAddr::V4(v4)) == listener;
    }
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost"))
        && (listener == IpAddr::V4(Ipv4Addr::LOCALHOST)
            || listener == IpAddr::V6(Ipv6Addr::LOCALHOST))
}

/// The address a connection to `ip` reaches: IPv4-mapped IPv6 as IPv4, the
/// unspecified address as loopback.
fn canonical(ip: IpAddr) -> IpAddr {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    match ip {
        IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_of_the_receivers_socket_is_recognised() {
        let v4: SocketAddr = "127.0.0.1:4318".parse().unwrap();
        for same in [
            "http://127.0.0.1:4318/v1/traces",
            "http://[::ffff:127.0.0.1]:4318/v1/traces",
            "http://[::FFFF:7f00:1]:4318",
            "http://localhost:4318/v1/traces",
            "http://LOCALHOST.:4318",
            "http://agent.localhost:4318",
            "http://127.1:4318",
            "http://0x7f.0.0.1:4318",
            "http://2130706433:4318",
            "http://0.0.0.0:4318",
            " http://127.0.0.1:4318 ",
        ] {
            assert!(reaches(same, v4), "{same}");
        }
        for other in [
            "http://127.0.0.2:4318",
            "http://[::1]:4318",
            "http://127.0.0.1:4319",
            "http://127.0.0.1/v1/traces",
            "http://collector.example:4318",
            "http://[::ffff:10.0.0.1]:4318",
            "not a url",
        ] {
            assert!(!reaches(other, v4), "{other}");
        }
        let v6: SocketAddr = "[::1]:4318".parse().unwrap();
        assert!(reaches("http://[::1]:4318", v6));
        assert!(reaches("http://localhost:4318", v6));
        assert!(reaches("http://[::]:4318", v6));
        assert!(!reaches("http://127.0.0.1:4318", v6));
        // A listener on a mapped address is the IPv4 one.
        let mapped: SocketAddr = "[::ffff:127.0.0.1]:80".parse().unwrap();
        assert!(reaches("http://127.0.0.1", mapped));
    }
}
