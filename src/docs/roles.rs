//! What each API is for, as the index groups them: kwire's own grouping
//! by API key (the definitions do not say it). An API not listed falls in
//! the last group.

/// Groups in the index's order, each with its API keys.
pub(crate) const ROLES: &[(&str, &[i16])] = &[
    ("Produce, fetch and offsets", &[0, 1, 2, 3, 21, 23, 75]),
    (
        "Connection and security",
        &[17, 18, 36, 38, 39, 40, 41, 29, 30, 31, 50, 51],
    ),
    (
        "Consumer groups",
        &[8, 9, 10, 11, 12, 13, 14, 15, 16, 42, 47, 68, 69],
    ),
    (
        "Transactions and idempotent producers",
        &[22, 24, 25, 26, 27, 28, 61, 65, 66, 67],
    ),
    (
        "Share groups",
        &[76, 77, 78, 79, 83, 84, 85, 86, 87, 90, 91, 92],
    ),
    ("Streams groups", &[88, 89]),
    (
        "Administration",
        &[
            19, 20, 32, 33, 34, 35, 37, 43, 44, 45, 46, 48, 49, 57, 60, 74,
        ],
    ),
    (
        "KRaft and controller (between brokers and controllers)",
        &[
            4, 5, 6, 7, 52, 53, 54, 55, 56, 58, 59, 62, 63, 64, 70, 73, 80, 81, 82,
        ],
    ),
    ("Client telemetry", &[71, 72]),
];

/// The last group: APIs this table does not know (newer definitions).
pub(crate) const OTHER: &str = "Other";

/// The group of an API key.
pub(crate) fn role_of(key: i16) -> &'static str {
    ROLES
        .iter()
        .find(|(_, keys)| keys.contains(&key))
        .map_or(OTHER, |(name, _)| name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Catalogue;

    #[test]
    fn every_known_api_has_one_group() {
        let mut seen = std::collections::BTreeSet::new();
        for (_, keys) in ROLES {
            for k in *keys {
                assert!(seen.insert(*k), "key {k} in two groups");
            }
        }
        for key in Catalogue::builtin().api_keys() {
            assert_ne!(role_of(key), OTHER, "API key {key} has no group");
        }
        assert_eq!(role_of(0), "Produce, fetch and offsets");
        assert_eq!(role_of(11), "Consumer groups");
        assert_eq!(role_of(1000), OTHER);
    }
}
