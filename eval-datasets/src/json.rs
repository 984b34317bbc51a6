//! JSON read strictly, by every reader of a JSON file (datasets,
//! manifests' JSON, price tables): an object that gives a key twice is an
//! error at the second one (`duplicate key `x` in one object`), where
//! serde_json would silently keep the last value.

pub use crate::formats::parse_strict;

/// A JSON document refused before it was built: what it would take in
/// memory once parsed is over the bound (see [`parse_within`]).
#[derive(Debug, thiserror::Error)]
pub enum BoundedJsonError {
    /// Not JSON (or nested deeper than serde_json's 128 levels).
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    /// Over the bound.
    #[error(
        "its {bytes} bytes would take more than {max} bytes of memory once parsed ({values} values and counting)"
    )]
    TooBig {
        /// The document's length.
        bytes: usize,
        /// The bound.
        max: usize,
        /// The values counted when the bound was passed.
        values: usize,
    },
}

/// Parses `bytes` as a [`serde_json::Value`] when what the value would take
/// in memory is within `max` bytes, and refuses it otherwise — without
/// building it: a first pass walks the document and counts, from above,
/// what each part costs once parsed (a value's slot in its array or object
/// twice over, as a growing `Vec` may hold, an object member's tree node,
/// the bytes of strings and keys). Bounds what a reply of `n` bytes builds:
/// `[[],[],…]` takes ~25 times its length as `Value`s, a cost the length
/// limit alone does not see.
pub fn parse_within(bytes: &[u8], max: usize) -> Result<serde_json::Value, BoundedJsonError> {
    use serde::de::DeserializeSeed;
    let mut cost = Cost {
        used: 0,
        values: 0,
        max,
    };
    let mut de = serde_json::Deserializer::from_slice(bytes);
    match (&mut cost).deserialize(&mut de).and_then(|()| de.end()) {
        Ok(()) => Ok(serde_json::from_slice(bytes)?),
        Err(_) if cost.used > max => Err(BoundedJsonError::TooBig {
            bytes: bytes.len(),
            max,
            values: cost.values,
        }),
        Err(e) => Err(e.into()),
    }
}

/// The running count of [`parse_within`]'s first pass.
struct Cost {
    used: usize,
    values: usize,
    max: usize,
}

/// A `Value`'s own size (its slot in an array or an object).
const SLOT: usize = std::mem::size_of::<serde_json::Value>();
/// What an object member takes besides its key's bytes: its entry (hash,
/// key `String`, value slot) in the map's growing entry list, counted twice
/// over, and its share of the hash index.
const MEMBER: usize = 2 * (8 + std::mem::size_of::<String>() + SLOT) + 16;

impl Cost {
    fn add<E: serde::de::Error>(&mut self, n: usize) -> Result<(), E> {
        self.used = self.used.saturating_add(n);
        if self.used > self.max {
            return Err(E::custom("over the memory bound"));
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for &mut Cost {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for &mut Cost {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<(), E> {
        self.values += 1;
        Ok(())
    }
    fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<(), E> {
        self.values += 1;
        Ok(())
    }
    fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<(), E> {
        self.values += 1;
        Ok(())
    }
    fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<(), E> {
        self.values += 1;
        Ok(())
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.values += 1;
        Ok(())
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.values += 1;
        self.add(v.len())
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.values += 1;
        loop {
            // Each element's slot, twice over: a growing Vec's spare room.
            self.add::<A::Error>(2 * SLOT)?;
            if seq.next_element_seed(&mut *self)?.is_none() {
                return Ok(());
            }
        }
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.values += 1;
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            self.add::<A::Error>(MEMBER + key.len())?;
            map.next_value_seed(&mut *self)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound as the clients use it: 16 times a reply's byte limit.
    #[test]
    fn a_nested_bomb_is_refused_and_a_real_reply_is_parsed() {
        // 1 MiB of `[],`: ~350,000 empty arrays, tens of MiB as Values.
        let mut bomb = b"[".to_vec();
        while bomb.len() < 1 << 20 {
            bomb.extend_from_slice(b"[],");
        }
        bomb.extend_from_slice(b"[]]");
        let e = parse_within(&bomb, 16 << 20).unwrap_err();
        assert!(matches!(e, BoundedJsonError::TooBig { .. }), "{e}");
        assert!(e.to_string().contains("more than 16777216 bytes"), "{e}");
        // A real embeddings reply (OpenAI's shape) of 64 vectors of 1,536.
        let vector: Vec<f64> = (0..1536).map(|i| f64::from(i) * 1.0e-4 - 0.07).collect();
        let data: Vec<_> = (0..64)
            .map(|i| serde_json::json!({"object": "embedding", "index": i, "embedding": vector}))
            .collect();
        let reply =
            serde_json::to_vec(&serde_json::json!({"object": "list", "data": data})).unwrap();
        let value = parse_within(&reply, 16 * reply.len()).unwrap();
        assert_eq!(
            value["data"][63]["embedding"].as_array().unwrap().len(),
            1536
        );
    }

    #[test]
    fn not_json_and_too_deep_are_json_errors() {
        assert!(matches!(
            parse_within(b"{\"a\": ", 1 << 20),
            Err(BoundedJsonError::Json(_))
        ));
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        assert!(matches!(
            parse_within(deep.as_bytes(), 1 << 30),
            Err(BoundedJsonError::Json(_))
        ));
        assert_eq!(
            parse_within(br#"{"k": "v", "n": [1, 2.5, null, true]}"#, 1 << 12).unwrap(),
            serde_json::json!({"k": "v", "n": [1, 2.5, null, true]})
        );
    }
}
