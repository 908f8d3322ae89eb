//! Kafka protocol error codes (facts from the Errors enum: code and name only).
//!
//! Source: `org.apache.kafka.common.protocol.Errors` as shipped in Apache Kafka
//! 4.3 (codes -1..=133). Codes 134 and up exist only on trunk / 4.4 or in
//! forks and are deliberately not listed; `error_name` returns `None` for them.

/// (code, NAME) sorted by code.
pub const ERROR_CODES: &[(i16, &str)] = &[
    (-1, "UNKNOWN_SERVER_ERROR"),
    (0, "NONE"),
    (1, "OFFSET_OUT_OF_RANGE"),
    (2, "CORRUPT_MESSAGE"),
    (3, "UNKNOWN_TOPIC_OR_PARTITION"),
    (4, "INVALID_FETCH_SIZE"),
    (5, "LEADER_NOT_AVAILABLE"),
    (6, "NOT_LEADER_OR_FOLLOWER"),
    (7, "REQUEST_TIMED_OUT"),
    (8, "BROKER_NOT_AVAILABLE"),
    (9, "REPLICA_NOT_AVAILABLE"),
    (10, "MESSAGE_TOO_LARGE"),
    (11, "STALE_CONTROLLER_EPOCH"),
    (12, "OFFSET_METADATA_TOO_LARGE"),
    (13, "NETWORK_EXCEPTION"),
    (14, "COORDINATOR_LOAD_IN_PROGRESS"),
    (15, "COORDINATOR_NOT_AVAILABLE"),
    (16, "NOT_COORDINATOR"),
    (17, "INVALID_TOPIC_EXCEPTION"),
    (18, "RECORD_LIST_TOO_LARGE"),
    (19, "NOT_ENOUGH_REPLICAS"),
    (20, "NOT_ENOUGH_REPLICAS_AFTER_APPEND"),
    (21, "INVALID_REQUIRED_ACKS"),
    (22, "ILLEGAL_GENERATION"),
    (23, "INCONSISTENT_GROUP_PROTOCOL"),
    (24, "INVALID_GROUP_ID"),
    (25, "UNKNOWN_MEMBER_ID"),
    (26, "INVALID_SESSION_TIMEOUT"),
    (27, "REBALANCE_IN_PROGRESS"),
    (28, "INVALID_COMMIT_OFFSET_SIZE"),
    (29, "TOPIC_AUTHORIZATION_FAILED"),
    (30, "GROUP_AUTHORIZATION_FAILED"),
    (31, "CLUSTER_AUTHORIZATION_FAILED"),
    (32, "INVALID_TIMESTAMP"),
    (33, "UNSUPPORTED_SASL_MECHANISM"),
    (34, "ILLEGAL_SASL_STATE"),
    (35, "UNSUPPORTED_VERSION"),
    (36, "TOPIC_ALREADY_EXISTS"),
    (37, "INVALID_PARTITIONS"),
    (38, "INVALID_REPLICATION_FACTOR"),
    (39, "INVALID_REPLICA_ASSIGNMENT"),
    (40, "INVALID_CONFIG"),
    (41, "NOT_CONTROLLER"),
    (42, "INVALID_REQUEST"),
    (43, "UNSUPPORTED_FOR_MESSAGE_FORMAT"),
    (44, "POLICY_VIOLATION"),
    (45, "OUT_OF_ORDER_SEQUENCE_NUMBER"),
    (46, "DUPLICATE_SEQUENCE_NUMBER"),
    (47, "INVALID_PRODUCER_EPOCH"),
    (48, "INVALID_TXN_STATE"),
    (49, "INVALID_PRODUCER_ID_MAPPING"),
    (50, "INVALID_TRANSACTION_TIMEOUT"),
    (51, "CONCURRENT_TRANSACTIONS"),
    (52, "TRANSACTION_COORDINATOR_FENCED"),
    (53, "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"),
    (54, "SECURITY_DISABLED"),
    (55, "OPERATION_NOT_ATTEMPTED"),
    (56, "KAFKA_STORAGE_ERROR"),
    (57, "LOG_DIR_NOT_FOUND"),
    (58, "SASL_AUTHENTICATION_FAILED"),
    (59, "UNKNOWN_PRODUCER_ID"),
    (60, "REASSIGNMENT_IN_PROGRESS"),
    (61, "DELEGATION_TOKEN_AUTH_DISABLED"),
    (62, "DELEGATION_TOKEN_NOT_FOUND"),
    (63, "DELEGATION_TOKEN_OWNER_MISMATCH"),
    (64, "DELEGATION_TOKEN_REQUEST_NOT_ALLOWED"),
    (65, "DELEGATION_TOKEN_AUTHORIZATION_FAILED"),
    (66, "DELEGATION_TOKEN_EXPIRED"),
    (67, "INVALID_PRINCIPAL_TYPE"),
    (68, "NON_EMPTY_GROUP"),
    (69, "GROUP_ID_NOT_FOUND"),
    (70, "FETCH_SESSION_ID_NOT_FOUND"),
    (71, "INVALID_FETCH_SESSION_EPOCH"),
    (72, "LISTENER_NOT_FOUND"),
    (73, "TOPIC_DELETION_DISABLED"),
    (74, "FENCED_LEADER_EPOCH"),
    (75, "UNKNOWN_LEADER_EPOCH"),
    (76, "UNSUPPORTED_COMPRESSION_TYPE"),
    (77, "STALE_BROKER_EPOCH"),
    (78, "OFFSET_NOT_AVAILABLE"),
    (79, "MEMBER_ID_REQUIRED"),
    (80, "PREFERRED_LEADER_NOT_AVAILABLE"),
    (81, "GROUP_MAX_SIZE_REACHED"),
    (82, "FENCED_INSTANCE_ID"),
    (83, "ELIGIBLE_LEADERS_NOT_AVAILABLE"),
    (84, "ELECTION_NOT_NEEDED"),
    (85, "NO_REASSIGNMENT_IN_PROGRESS"),
    (86, "GROUP_SUBSCRIBED_TO_TOPIC"),
    (87, "INVALID_RECORD"),
    (88, "UNSTABLE_OFFSET_COMMIT"),
    (89, "THROTTLING_QUOTA_EXCEEDED"),
    (90, "PRODUCER_FENCED"),
    (91, "RESOURCE_NOT_FOUND"),
    (92, "DUPLICATE_RESOURCE"),
    (93, "UNACCEPTABLE_CREDENTIAL"),
    (94, "INCONSISTENT_VOTER_SET"),
    (95, "INVALID_UPDATE_VERSION"),
    (96, "FEATURE_UPDATE_FAILED"),
    (97, "PRINCIPAL_DESERIALIZATION_FAILURE"),
    (98, "SNAPSHOT_NOT_FOUND"),
    (99, "POSITION_OUT_OF_RANGE"),
    (100, "UNKNOWN_TOPIC_ID"),
    (101, "DUPLICATE_BROKER_REGISTRATION"),
    (102, "BROKER_ID_NOT_REGISTERED"),
    (103, "INCONSISTENT_TOPIC_ID"),
    (104, "INCONSISTENT_CLUSTER_ID"),
    (105, "TRANSACTIONAL_ID_NOT_FOUND"),
    (106, "FETCH_SESSION_TOPIC_ID_ERROR"),
    (107, "INELIGIBLE_REPLICA"),
    (108, "NEW_LEADER_ELECTED"),
    (109, "OFFSET_MOVED_TO_TIERED_STORAGE"),
    (110, "FENCED_MEMBER_EPOCH"),
    (111, "UNRELEASED_INSTANCE_ID"),
    (112, "UNSUPPORTED_ASSIGNOR"),
    (113, "STALE_MEMBER_EPOCH"),
    (114, "MISMATCHED_ENDPOINT_TYPE"),
    (115, "UNSUPPORTED_ENDPOINT_TYPE"),
    (116, "UNKNOWN_CONTROLLER_ID"),
    (117, "UNKNOWN_SUBSCRIPTION_ID"),
    (118, "TELEMETRY_TOO_LARGE"),
    (119, "INVALID_REGISTRATION"),
    (120, "TRANSACTION_ABORTABLE"),
    (121, "INVALID_RECORD_STATE"),
    (122, "SHARE_SESSION_NOT_FOUND"),
    (123, "INVALID_SHARE_SESSION_EPOCH"),
    (124, "FENCED_STATE_EPOCH"),
    (125, "INVALID_VOTER_KEY"),
    (126, "DUPLICATE_VOTER"),
    (127, "VOTER_NOT_FOUND"),
    (128, "INVALID_REGULAR_EXPRESSION"),
    (129, "REBOOTSTRAP_REQUIRED"),
    (130, "STREAMS_INVALID_TOPOLOGY"),
    (131, "STREAMS_INVALID_TOPOLOGY_EPOCH"),
    (132, "STREAMS_TOPOLOGY_FENCED"),
    (133, "SHARE_SESSION_LIMIT_REACHED"),
];

/// Name of an error code, e.g. 16 -> "NOT_COORDINATOR".
pub fn error_name(code: i16) -> Option<&'static str> {
    ERROR_CODES
        .binary_search_by_key(&code, |&(c, _)| c)
        .ok()
        .map(|i| ERROR_CODES[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_codes() {
        assert_eq!(error_name(-1), Some("UNKNOWN_SERVER_ERROR"));
        assert_eq!(error_name(0), Some("NONE"));
        assert_eq!(error_name(3), Some("UNKNOWN_TOPIC_OR_PARTITION"));
        assert_eq!(error_name(16), Some("NOT_COORDINATOR"));
        assert_eq!(error_name(35), Some("UNSUPPORTED_VERSION"));
        assert_eq!(error_name(69), Some("GROUP_ID_NOT_FOUND"));
        assert_eq!(error_name(118), Some("TELEMETRY_TOO_LARGE"));
        assert_eq!(error_name(119), Some("INVALID_REGISTRATION"));
        assert_eq!(error_name(121), Some("INVALID_RECORD_STATE"));
        assert_eq!(error_name(130), Some("STREAMS_INVALID_TOPOLOGY"));
        assert_eq!(error_name(133), Some("SHARE_SESSION_LIMIT_REACHED"));
    }

    #[test]
    fn unknown_codes() {
        assert_eq!(error_name(9999), None);
        assert_eq!(error_name(-2), None);
        assert_eq!(error_name(134), None);
    }

    #[test]
    fn sorted_unique_and_contiguous() {
        for w in ERROR_CODES.windows(2) {
            assert!(
                w[0].0 < w[1].0,
                "not sorted/unique at {:?} {:?}",
                w[0],
                w[1]
            );
        }
        let mut names: Vec<&str> = ERROR_CODES.iter().map(|&(_, n)| n).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ERROR_CODES.len(), "duplicate names");
        // -1 followed by 0..=133 with no gaps.
        assert_eq!(ERROR_CODES.len(), 135);
        for (i, &(c, _)) in ERROR_CODES.iter().enumerate() {
            assert_eq!(c, i as i16 - 1);
        }
    }
}
