//! The one stable hash of the crate: FNV-1a, 64 bits.
//!
//! Stable across platforms, Rust versions and runs (unlike
//! `std::hash::DefaultHasher`), so it can name things that must not change:
//! test names ([`short_hash`]) and index files.

const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0100_0000_01b3;

/// FNV-1a (64-bit) over `parts`, one after the other: the hash of their
/// concatenation (add your own separators between parts that could run
/// together).
pub fn fnv1a64(parts: &[&[u8]]) -> u64 {
    let mut h = OFFSET_BASIS;
    for part in parts {
        for b in *part {
            h ^= u64::from(*b);
            h = h.wrapping_mul(PRIME);
        }
    }
    h
}

/// The top 24 bits of `hash` as 6 lowercase hex digits.
pub fn short_hex(hash: u64) -> String {
    format!("{:06x}", hash >> 40)
}

/// 6 hex digits of FNV-1a (64-bit) over the UTF-8 bytes of `text`: the hash
/// test names carry (see [`crate::naming`]).
pub fn short_hash(text: &str) -> String {
    short_hex(fnv1a64(&[text.as_bytes()]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // FNV-1a 64 test vectors.
        assert_eq!(fnv1a64(&[]), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(&[b"a"]), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(&[b"foobar"]), 0x8594_4171_f739_67e8);
        // Parts hash as their concatenation.
        assert_eq!(fnv1a64(&[b"foo", b"", b"bar"]), fnv1a64(&[b"foobar"]));
        // Test names depend on these: they must never change.
        assert_eq!(short_hash(""), "cbf29c");
        assert_eq!(short_hash("a-b"), short_hex(fnv1a64(&[b"a-", b"b"])));
    }
}
