//! `MethodTable`: method name → handler slot, an open-addressing hash table that looks up
//! a borrowed `&str` without allocating and in constant time however many methods there are.

/// A multiply-rotate hash over 8-byte words (the FxHash scheme rustc uses): a few
/// instructions per word, good enough spread for method names, no allocation, no state.
#[inline]
fn hash(name: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h = name.len() as u64;
    let mut chunks = name.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    let rest = chunks.remainder();
    if !rest.is_empty() {
        let mut word = [0u8; 8];
        word[..rest.len()].copy_from_slice(rest);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    // Fold the high bits (the best mixed ones) into the low bits used for the index.
    h ^ (h >> 29)
}

/// Names and values in insertion order, plus a power-of-two index table of positions into
/// them (`u32::MAX` = empty), kept at most half full so probes stay short.
#[derive(Debug)]
pub(crate) struct MethodTable<V> {
    entries: Vec<(Box<str>, V)>,
    index: Vec<u32>,
}

const EMPTY: u32 = u32::MAX;

impl<V> Default for MethodTable<V> {
    fn default() -> Self {
        MethodTable {
            entries: Vec::new(),
            index: vec![EMPTY; 8],
        }
    }
}

impl<V> MethodTable<V> {
    fn slot_of(&self, name: &str) -> (usize, Option<usize>) {
        let mask = self.index.len() - 1;
        let mut slot = hash(name.as_bytes()) as usize & mask;
        loop {
            match self.index[slot] {
                EMPTY => return (slot, None),
                at if *self.entries[at as usize].0 == *name => return (slot, Some(at as usize)),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// The value registered for `name`.
    #[inline]
    pub(crate) fn get(&self, name: &str) -> Option<&V> {
        self.slot_of(name).1.map(|at| &self.entries[at].1)
    }

    /// Registers `value` for `name`, replacing an earlier registration.
    pub(crate) fn insert(&mut self, name: &str, value: V) -> Option<V> {
        if let (_, Some(at)) = self.slot_of(name) {
            return Some(std::mem::replace(&mut self.entries[at].1, value));
        }
        if (self.entries.len() + 1) * 2 > self.index.len() {
            self.grow();
        }
        let (slot, _) = self.slot_of(name);
        let at = u32::try_from(self.entries.len()).expect("fewer than 2^32 methods");
        self.index[slot] = at;
        self.entries.push((name.into(), value));
        None
    }

    fn grow(&mut self) {
        self.index = vec![EMPTY; self.index.len() * 2];
        let mask = self.index.len() - 1;
        for (at, (name, _)) in self.entries.iter().enumerate() {
            let mut slot = hash(name.as_bytes()) as usize & mask;
            while self.index[slot] != EMPTY {
                slot = (slot + 1) & mask;
            }
            self.index[slot] = at as u32;
        }
    }

    /// The number of registered names.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The registered names, in registration order.
    pub(crate) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(name, _)| &**name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_every_name_among_hundreds_and_nothing_else() {
        let mut table = MethodTable::default();
        let names: Vec<String> = (0..700).map(|i| format!("ns{}/method_{i}", i % 7)).collect();
        for (i, name) in names.iter().enumerate() {
            table.insert(name, i);
        }
        assert_eq!(table.len(), 700);
        for (i, name) in names.iter().enumerate() {
            assert_eq!(table.get(name), Some(&i), "{name}");
        }
        for missing in [
            "",
            "ns0/method_",
            "ns0/method_7000",
            "NS0/method_0",
            "ns0/method_0 ",
        ] {
            assert_eq!(table.get(missing), None, "{missing:?}");
        }
        assert_eq!(table.names().count(), 700);
    }

    #[test]
    fn a_second_registration_replaces_the_first() {
        let mut table = MethodTable::default();
        table.insert("a", 1);
        table.insert("a", 2);
        assert_eq!(table.len(), 1);
        assert_eq!(table.get("a"), Some(&2));
    }

    #[test]
    fn names_differing_only_after_eight_bytes_are_distinct() {
        let mut table = MethodTable::default();
        table.insert("abcdefgh1", 1);
        table.insert("abcdefgh2", 2);
        table.insert("abcdefgh", 3);
        assert_eq!(table.get("abcdefgh1"), Some(&1));
        assert_eq!(table.get("abcdefgh2"), Some(&2));
        assert_eq!(table.get("abcdefgh"), Some(&3));
    }
}
