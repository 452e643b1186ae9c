//! The declared properties of a compiled object node: name → node, in declaration order.
//!
//! Most objects declare a handful of properties (a tool's parameters, a nested record), and
//! for those a hash table costs more than it saves: building it hashes every name and
//! allocates the table, and a lookup that misses the validator's in-order guess is a scan
//! of a few short names either way. So the entries are one boxed slice, read by position
//! without a branch (the validator's common access), and only an object of more than
//! [`SCAN_LIMIT`] properties gets a hashed index of positions beside them (the names are
//! not stored twice).
//!
//! Names are `SmolStr`s: a name of up to 23 bytes (nearly every property name) is held
//! inline, so compiling an object allocates nothing per property.

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;
use smol_str::SmolStr;

/// A node's index in the compiled arena (`compile::NodeId`; spelled out here so that this
/// module, which the compile module uses, does not use it back).
type NodeId = u32;

/// The most properties an object keeps without a hashed index.
const SCAN_LIMIT: usize = 8;

/// Declared properties of an object node, in declaration order (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct PropertyMap {
    entries: Box<[(SmolStr, NodeId)]>,
    /// Positions in `entries`, hashed by name; only past [`SCAN_LIMIT`] entries.
    index: Option<HashTable<u32>>,
}

/// The hash of a name (as `str`), for the index.
fn hash(name: &str) -> u64 {
    FixedState::default().hash_one(name)
}

impl PropertyMap {
    /// The map of `entries`, in their order. The names must be distinct (they are the keys
    /// of one JSON object; a debug build asserts it).
    pub(crate) fn from_entries(entries: Vec<(SmolStr, NodeId)>) -> PropertyMap {
        debug_assert!(
            {
                // Linear, so that a debug build compiles a schema of many properties in time.
                let mut seen = std::collections::HashSet::with_capacity(entries.len());
                entries.iter().all(|(name, _)| seen.insert(name.as_str()))
            },
            "property names must be distinct"
        );
        let entries = entries.into_boxed_slice();
        let index = (entries.len() > SCAN_LIMIT).then(|| {
            let mut index = HashTable::with_capacity(entries.len());
            // Distinct names: each is inserted without looking for it first. (Were one
            // repeated, either of its positions could be found; nothing unsafe follows.)
            for (position, (name, _)) in (0_u32..).zip(entries.iter()) {
                index.insert_unique(hash(name), position, |&at: &u32| {
                    entries.get(at as usize).map_or(0, |(own, _)| hash(own))
                });
            }
            index
        });
        PropertyMap { entries, index }
    }

    /// The number of declared properties.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The name and node of the property at `index` in declaration order.
    #[inline]
    pub(crate) fn get_index(&self, index: usize) -> Option<(&SmolStr, &NodeId)> {
        self.entries.get(index).map(|(name, id)| (name, id))
    }

    /// The position of the property called `name`.
    #[inline]
    pub(crate) fn get_index_of(&self, name: &str) -> Option<usize> {
        match &self.index {
            None => self.entries.iter().position(|(own, _)| own == name),
            Some(index) => index
                .find(hash(name), |&at| {
                    self.entries
                        .get(at as usize)
                        .is_some_and(|(own, _)| own == name)
                })
                .map(|&at| at as usize),
        }
    }

    /// The properties' nodes, in declaration order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &NodeId> {
        self.entries.iter().map(|(_, id)| id)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use indexmap::IndexMap;
    use proptest::prelude::*;

    use super::*;

    fn entries(names: &[String]) -> Vec<(SmolStr, NodeId)> {
        names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                (
                    SmolStr::from(name.as_str()),
                    NodeId::try_from(i).unwrap() + 7,
                )
            })
            .collect()
    }

    #[test]
    fn small_maps_scan_and_large_ones_hash() {
        let small: Vec<String> = (0..SCAN_LIMIT).map(|i| format!("p{i}")).collect();
        assert!(PropertyMap::from_entries(entries(&small)).index.is_none());
        let large: Vec<String> = (0..=SCAN_LIMIT).map(|i| format!("p{i}")).collect();
        assert!(PropertyMap::from_entries(entries(&large)).index.is_some());
        assert_eq!(PropertyMap::default().len(), 0);
        assert_eq!(PropertyMap::default().get_index_of(""), None);
    }

    proptest! {
        /// Either representation answers every question as an `IndexMap` of the same
        /// entries does.
        #[test]
        fn both_representations_answer_as_an_index_map(
            names in prop::collection::hash_set("[a-z]{0,3}|[a-z]{20,30}", 0..20),
            probes in prop::collection::vec("[a-z]{0,3}", 0..10),
        ) {
            let names: Vec<String> = names.into_iter().collect();
            let map = PropertyMap::from_entries(entries(&names));
            let reference: IndexMap<SmolStr, NodeId> = entries(&names).into_iter().collect();
            prop_assert_eq!(map.len(), reference.len());
            for index in 0..=names.len() {
                prop_assert_eq!(map.get_index(index), reference.get_index(index));
            }
            for name in names.iter().chain(&probes) {
                prop_assert_eq!(map.get_index_of(name), reference.get_index_of(name.as_str()));
            }
            let values: Vec<NodeId> = map.values().copied().collect();
            let expected: Vec<NodeId> = reference.values().copied().collect();
            prop_assert_eq!(values, expected);
        }
    }
}
