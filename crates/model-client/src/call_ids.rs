//! Tool call ids.
//!
//! Mistral's chat templates (and `mistral_common`'s validator) reject any id that is not 9
//! ASCII alphanumerics ("Tool call IDs should be alphanumeric strings with length 9!"),
//! while every other server seen takes any string. So ids we make up are 9 alphanumerics, and
//! for a Mistral model ids made by another provider (`call_…`, `functions.shell:0`) are mapped
//! to 9 alphanumerics when the history is sent.

use std::collections::HashMap;

const ALPHABET: &[u8; 62] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const LEN: usize = 9;

/// `n` as 9 base-62 digits (only the low 9 digits are kept).
fn base62(mut n: u64) -> String {
    let mut out = [0u8; LEN];
    for slot in out.iter_mut().rev() {
        *slot = ALPHABET[(n % 62) as usize];
        n /= 62;
    }
    out.iter().map(|b| char::from(*b)).collect()
}

/// A fresh id for a call the server sent without one.
pub(crate) fn synthesize() -> String {
    // UUIDv7's low 62 bits are random; 62^9 (~1.4e16) ids leave collisions within a thread
    // out of reach.
    let random = (uuid::Uuid::now_v7().as_u128() & ((1u128 << 62) - 1)) as u64;
    base62(random)
}

/// A short id derived from `text`, the same in every request (for items the server wants an
/// id on but we never got one for).
pub(crate) fn stable(text: &str) -> String {
    base62(fnv1a(text.as_bytes()))
}

/// Whether every provider accepts `id` as it is.
pub(crate) fn is_portable(id: &str) -> bool {
    id.len() == LEN && id.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Maps ids that Mistral templates would reject to 9 alphanumerics, the same one for every
/// occurrence of an id (the call and its output must still match) and the same across
/// requests (so a prompt cache still hits).
#[derive(Debug, Default)]
pub(crate) struct PortableIds {
    mapped: HashMap<String, String>,
    taken: std::collections::HashSet<String>,
}

impl PortableIds {
    pub(crate) fn id_for(&mut self, id: &str) -> String {
        if let Some(m) = self.mapped.get(id) {
            return m.clone();
        }
        let mut candidate = if is_portable(id) {
            id.to_string()
        } else {
            base62(fnv1a(id.as_bytes()))
        };
        // Two ids may hash alike, or a mapped id may equal a portable one already in use.
        let mut salt = 0u64;
        while self.taken.contains(&candidate) {
            salt += 1;
            candidate = base62(fnv1a(format!("{id}#{salt}").as_bytes()));
        }
        self.taken.insert(candidate.clone());
        self.mapped.insert(id.to_string(), candidate.clone());
        candidate
    }
}

/// FNV-1a: stable across runs and platforms, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthesized_ids_are_nine_alphanumerics_and_differ() {
        let a = synthesize();
        let b = synthesize();
        assert!(is_portable(&a) && is_portable(&b), "{a} {b}");
        assert_ne!(a, b);
    }

    #[test]
    fn foreign_ids_map_stably_and_portable_ones_stay() {
        let mut ids = PortableIds::default();
        let x = ids.id_for("call_0198c1f2a3b4c5d6e7f8");
        assert!(is_portable(&x), "{x}");
        assert_eq!(ids.id_for("call_0198c1f2a3b4c5d6e7f8"), x);
        assert_eq!(ids.id_for("Ab3dE5gH9"), "Ab3dE5gH9");
        let kimi = ids.id_for("functions.shell:0");
        assert!(is_portable(&kimi) && kimi != x);
        // The same mapping in a later request.
        assert_eq!(
            PortableIds::default().id_for("call_0198c1f2a3b4c5d6e7f8"),
            x
        );
    }
}
