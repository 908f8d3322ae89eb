//! Facts about error codes that the definitions hold only as prose, or not
//! at all, written here in kwire's own words as data: which errors a client
//! may retry, which errors an API can return only from some version on, and
//! which versions of an API answer a quota violation before throttling
//! (KIP-219). The conversation rules (`analysis::diagnosis`) and the
//! documentation read them from here and nowhere else.

/// Error codes a client may retry as they are: the condition is expected to
/// pass (a leader moving, a coordinator loading, a session evicted).
/// Kafka's clients treat these as retriable.
pub(crate) const RETRIABLE: &[i16] = &[
    2,   // CORRUPT_MESSAGE
    3,   // UNKNOWN_TOPIC_OR_PARTITION
    5,   // LEADER_NOT_AVAILABLE
    6,   // NOT_LEADER_OR_FOLLOWER
    7,   // REQUEST_TIMED_OUT
    9,   // REPLICA_NOT_AVAILABLE
    13,  // NETWORK_EXCEPTION
    14,  // COORDINATOR_LOAD_IN_PROGRESS
    15,  // COORDINATOR_NOT_AVAILABLE
    16,  // NOT_COORDINATOR
    19,  // NOT_ENOUGH_REPLICAS
    20,  // NOT_ENOUGH_REPLICAS_AFTER_APPEND
    41,  // NOT_CONTROLLER
    51,  // CONCURRENT_TRANSACTIONS
    56,  // KAFKA_STORAGE_ERROR
    70,  // FETCH_SESSION_ID_NOT_FOUND
    71,  // INVALID_FETCH_SESSION_EPOCH
    72,  // LISTENER_NOT_FOUND
    74,  // FENCED_LEADER_EPOCH
    75,  // UNKNOWN_LEADER_EPOCH
    78,  // OFFSET_NOT_AVAILABLE
    80,  // PREFERRED_LEADER_NOT_AVAILABLE
    83,  // ELIGIBLE_LEADERS_NOT_AVAILABLE
    88,  // UNSTABLE_OFFSET_COMMIT
    89,  // THROTTLING_QUOTA_EXCEEDED
    100, // UNKNOWN_TOPIC_ID
    103, // INCONSISTENT_TOPIC_ID
    106, // FETCH_SESSION_TOPIC_ID_ERROR
];

/// REBALANCE_IN_PROGRESS: not retriable as such (the member must rejoin),
/// but a normal, passing state of a classic group.
pub const REBALANCE_IN_PROGRESS: i16 = 27;

/// Whether a client may retry `code` unchanged.
pub(crate) fn is_retriable(code: i16) -> bool {
    RETRIABLE.contains(&code)
}

/// Whether `code` usually passes by itself: retriable, or a rebalance.
pub fn is_transient(code: i16) -> bool {
    is_retriable(code) || code == REBALANCE_IN_PROGRESS
}

/// An error an API returns only from `since` on, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ErrorSince {
    pub api_key: i16,
    pub error: i16,
    pub since: i16,
    pub why: &'static str,
}

const fn since(api_key: i16, error: i16, since: i16, why: &'static str) -> ErrorSince {
    ErrorSince {
        api_key,
        error,
        since,
        why,
    }
}

/// Errors that an API can return only from a version on: below it, the
/// request has no field the error could be about, or the client does not
/// know the error (it was added with that version's bump).
pub const ERROR_SINCE: &[ErrorSince] = &[
    since(0, 56, 4, "Produce v4 added KAFKA_STORAGE_ERROR"),
    since(
        0,
        120,
        11,
        "TRANSACTION_ABORTABLE came with Produce v11 (KIP-890)",
    ),
    since(1, 70, 7, "fetch sessions start at Fetch v7 (KIP-227)"),
    since(1, 71, 7, "fetch sessions start at Fetch v7 (KIP-227)"),
    since(1, 74, 9, "Fetch carries a leader epoch from v9 (KIP-320)"),
    since(1, 75, 9, "Fetch carries a leader epoch from v9 (KIP-320)"),
    since(1, 100, 13, "Fetch names topics by id from v13 (KIP-516)"),
    since(1, 106, 13, "Fetch names topics by id from v13 (KIP-516)"),
    since(
        2,
        74,
        4,
        "ListOffsets carries a leader epoch from v4 (KIP-320)",
    ),
    since(
        2,
        75,
        4,
        "ListOffsets carries a leader epoch from v4 (KIP-320)",
    ),
    since(
        8,
        82,
        7,
        "OffsetCommit carries a group instance id from v7 (KIP-345)",
    ),
    since(
        8,
        110,
        7,
        "OffsetCommit returns FENCED_MEMBER_EPOCH from v7",
    ),
    since(
        8,
        69,
        9,
        "OffsetCommit serves consumer groups (KIP-848) from v9",
    ),
    since(
        8,
        113,
        9,
        "OffsetCommit serves consumer groups (KIP-848) from v9",
    ),
    since(8, 100, 10, "OffsetCommit names topics by id from v10"),
    since(
        9,
        88,
        7,
        "OffsetFetch reports pending transactional commits from v7 (KIP-447)",
    ),
    since(
        9,
        25,
        9,
        "OffsetFetch carries a member id from v9 (KIP-848)",
    ),
    since(
        9,
        113,
        9,
        "OffsetFetch carries a member epoch from v9 (KIP-848)",
    ),
    since(9, 100, 10, "OffsetFetch names topics by id from v10"),
    since(
        11,
        79,
        4,
        "JoinGroup asks a new member to rejoin with its id from v4 (KIP-394)",
    ),
    since(
        11,
        82,
        5,
        "JoinGroup carries a group instance id from v5 (KIP-345)",
    ),
    since(
        12,
        82,
        3,
        "Heartbeat carries a group instance id from v3 (KIP-345)",
    ),
    since(
        13,
        82,
        3,
        "LeaveGroup carries group instance ids from v3 (KIP-345)",
    ),
    since(
        14,
        82,
        3,
        "SyncGroup carries a group instance id from v3 (KIP-345)",
    ),
    since(
        19,
        89,
        6,
        "CreateTopics returns THROTTLING_QUOTA_EXCEEDED from v6 (KIP-599)",
    ),
    since(
        20,
        89,
        5,
        "DeleteTopics returns THROTTLING_QUOTA_EXCEEDED from v5 (KIP-599)",
    ),
    since(
        28,
        82,
        3,
        "TxnOffsetCommit carries a group instance id from v3 (KIP-447)",
    ),
    since(
        37,
        89,
        3,
        "CreatePartitions returns THROTTLING_QUOTA_EXCEEDED from v3 (KIP-599)",
    ),
    since(
        68,
        128,
        1,
        "ConsumerGroupHeartbeat takes regular expressions from v1",
    ),
];

/// The version from which `api_key` can return `error`, when it is not every version.
pub(crate) fn error_since(api_key: i16, error: i16) -> Option<&'static ErrorSince> {
    ERROR_SINCE
        .iter()
        .find(|e| e.api_key == api_key && e.error == error)
}

/// Produce errors about a producer's id, epoch or sequence: they can answer
/// only a batch written by an idempotent or transactional producer (a
/// producer id), which needs message format v2 (Produce v3 and later).
pub(crate) const PRODUCER_STATE_ERRORS: &[i16] = &[
    45, // OUT_OF_ORDER_SEQUENCE_NUMBER
    46, // DUPLICATE_SEQUENCE_NUMBER
    47, // INVALID_PRODUCER_EPOCH
    59, // UNKNOWN_PRODUCER_ID
];

/// The first version of each API whose broker answers a quota violation at
/// once and then stops reading the connection for `ThrottleTimeMs`: from it
/// on, the client must itself wait that long before its next request
/// (KIP-219). Below it the broker delayed the response instead. APIs not
/// listed here were added after KIP-219 and behave so at every version.
pub(crate) const THROTTLE_AFTER_RESPONSE: &[(i16, i16)] = &[
    (0, 6),  // Produce
    (1, 8),  // Fetch
    (2, 3),  // ListOffsets
    (3, 6),  // Metadata
    (8, 4),  // OffsetCommit
    (9, 4),  // OffsetFetch
    (10, 2), // FindCoordinator
    (11, 3), // JoinGroup
    (12, 2), // Heartbeat
    (13, 2), // LeaveGroup
    (14, 2), // SyncGroup
    (15, 2), // DescribeGroups
    (16, 2), // ListGroups
    (18, 2), // ApiVersions
    (19, 3), // CreateTopics
    (20, 2), // DeleteTopics
    (21, 1), // DeleteRecords
    (22, 1), // InitProducerId
    (24, 1), // AddPartitionsToTxn
    (25, 1), // AddOffsetsToTxn
    (26, 1), // EndTxn
    (28, 1), // TxnOffsetCommit
    (29, 1), // DescribeAcls
    (30, 1), // CreateAcls
    (31, 1), // DeleteAcls
    (32, 2), // DescribeConfigs
    (33, 1), // AlterConfigs
    (34, 1), // AlterReplicaLogDirs
    (35, 1), // DescribeLogDirs
    (37, 1), // CreatePartitions
    (38, 1), // CreateDelegationToken
    (39, 1), // RenewDelegationToken
    (40, 1), // ExpireDelegationToken
    (41, 1), // DescribeDelegationToken
    (42, 1), // DeleteGroups
];

/// Whether the client must wait out a `ThrottleTimeMs` given in a response
/// of `api_key` at `version` before it sends again on the connection.
pub fn client_waits_out_throttle(api_key: i16, version: i16) -> bool {
    match THROTTLE_AFTER_RESPONSE.iter().find(|(k, _)| *k == api_key) {
        Some(&(_, from)) => version >= from,
        None => api_key > 42,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::error_codes::error_name;

    #[test]
    fn every_code_named_here_exists() {
        for &c in RETRIABLE.iter().chain(PRODUCER_STATE_ERRORS) {
            assert!(error_name(c).is_some(), "{c}");
        }
        for e in ERROR_SINCE {
            let name = error_name(e.error).unwrap();
            assert!(e.since > 0, "{name}");
        }
    }

    #[test]
    fn known_facts() {
        assert!(is_retriable(6) && is_retriable(16) && !is_retriable(-1) && !is_retriable(79));
        assert!(is_transient(27) && !is_retriable(27));
        assert_eq!(error_since(11, 79).map(|e| e.since), Some(4));
        assert_eq!(error_since(11, 25), None);
        assert!(client_waits_out_throttle(0, 6) && !client_waits_out_throttle(0, 5));
        assert!(client_waits_out_throttle(68, 0));
    }
}
