//! What some numbers mean, which the definitions do not say: timestamps as
//! UTC date-times, durations, `Acks`, isolation levels and the ACL enums.
//! The decoder puts these next to the raw value as a note (`-1 (all)`); the
//! value itself is unchanged. Which fields they apply to is decided once per
//! field from its name and type (`schema::model::FieldMeaning`).

use crate::schema::model::FieldMeaning;

/// The note for a value of a field with this meaning, when it has one
/// (error codes and API keys are noted by the decoder, which shares them).
pub fn value_note(meaning: FieldMeaning, v: i64) -> Option<String> {
    match meaning {
        FieldMeaning::Timestamp => timestamp_note(v),
        FieldMeaning::Duration => duration_note(v),
        FieldMeaning::Acks => acks_note(v).map(str::to_string),
        FieldMeaning::IsolationLevel => isolation_level_note(v).map(str::to_string),
        FieldMeaning::AclOperation => acl_operation_note(v).map(str::to_string),
        FieldMeaning::AclPermission => acl_permission_note(v).map(str::to_string),
        FieldMeaning::AclPattern => acl_pattern_note(v).map(str::to_string),
        FieldMeaning::AclResourceType => acl_resource_type_note(v).map(str::to_string),
        _ => None,
    }
}

/// Milliseconds since the epoch as `2023-11-14T22:13:20.000Z`, for the
/// years 1970–9999; `None` outside them (a raw number is clearer than a
/// date nobody meant).
pub fn utc_millis(ms: i64) -> Option<String> {
    utc_millis_bytes(ms).map(|b| b.iter().map(|&c| char::from(c)).collect())
}

/// [`utc_millis`] as its 24 ASCII bytes, written digit by digit: a note on
/// every batch's timestamps, where formatting cost more than the decoding.
pub(crate) fn utc_millis_bytes(ms: i64) -> Option<[u8; 24]> {
    const MAX: i64 = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z
    if !(0..=MAX).contains(&ms) {
        return None;
    }
    let (days, rest) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1000 % 60,
        rest % 1000,
    );
    let mut out = *b"0000-00-00T00:00:00.000Z";
    for (at, width, v) in [
        (0, 4, y),
        (5, 2, i64::from(m)),
        (8, 2, i64::from(d)),
        (11, 2, h),
        (14, 2, min),
        (17, 2, s),
        (20, 3, milli),
    ] {
        let mut v = v;
        for i in (at..at + width).rev() {
            out[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    }
    Some(out)
}

/// Microseconds since the epoch as `2026-12-01T16:24:04.015891Z` (capture
/// times); `None` past the year 9999.
pub(crate) fn utc_micros(us: u64) -> Option<String> {
    let ms = i64::try_from(us / 1000).ok()?;
    let text = utc_millis(ms)?;
    // Keep the date-time to the second and write the six fraction digits.
    Some(format!("{}.{:06}Z", &text[..19], us % 1_000_000))
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian
/// calendar (Howard Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// A timestamp field's note: the date-time, or what -1 means.
pub(crate) fn timestamp_note(ms: i64) -> Option<String> {
    match ms {
        -1 => Some("(none)".into()),
        ms => utc_millis_bytes(ms).map(|t| {
            let mut note = String::with_capacity(26);
            note.push('(');
            note.extend(t.iter().map(|&c| char::from(c)));
            note.push(')');
            note
        }),
    }
}

/// A duration in milliseconds in the largest unit that keeps it short:
/// `250 ms`, `1.5 s`, `5 min`, `7 d`; `None` for negative values (which
/// mean "default" or "none" depending on the field).
pub(crate) fn duration_note(ms: i64) -> Option<String> {
    if ms < 0 {
        return None;
    }
    const UNITS: [(i64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "min"),
        (1000, "s"),
    ];
    for (size, unit) in UNITS {
        if ms >= size {
            let whole = ms / size;
            let tenths = ms % size * 10 / size;
            return Some(match tenths {
                0 if ms % size == 0 => format!("({whole} {unit})"),
                _ => format!("({whole}.{tenths} {unit})"),
            });
        }
    }
    Some(format!("({ms} ms)"))
}

/// Produce's `Acks`.
pub(crate) fn acks_note(v: i64) -> Option<&'static str> {
    Some(match v {
        -1 => "(all)",
        0 => "(none)",
        1 => "(leader)",
        _ => return None,
    })
}

/// Fetch's and ListOffsets' `IsolationLevel`.
pub(crate) fn isolation_level_note(v: i64) -> Option<&'static str> {
    Some(match v {
        0 => "(read_uncommitted)",
        1 => "(read_committed)",
        _ => return None,
    })
}

/// The ACL APIs' `Operation` (AclOperation).
pub(crate) fn acl_operation_note(v: i64) -> Option<&'static str> {
    const NAMES: [&str; 15] = [
        "(unknown)",
        "(any)",
        "(all)",
        "(read)",
        "(write)",
        "(create)",
        "(delete)",
        "(alter)",
        "(describe)",
        "(cluster_action)",
        "(describe_configs)",
        "(alter_configs)",
        "(idempotent_write)",
        "(create_tokens)",
        "(describe_tokens)",
    ];
    usize::try_from(v).ok().and_then(|i| NAMES.get(i)).copied()
}

/// The ACL APIs' resource type filter (ResourceType in ACL bindings). A
/// field named plain `ResourceType` is not given names: the config APIs use
/// the same name with another numbering (2 topic, 4 broker, 8 broker logger).
pub(crate) fn acl_resource_type_note(v: i64) -> Option<&'static str> {
    const NAMES: [&str; 8] = [
        "(unknown)",
        "(any)",
        "(topic)",
        "(group)",
        "(cluster)",
        "(transactional_id)",
        "(delegation_token)",
        "(user)",
    ];
    usize::try_from(v).ok().and_then(|i| NAMES.get(i)).copied()
}

/// The ACL APIs' `PermissionType` (AclPermissionType).
pub(crate) fn acl_permission_note(v: i64) -> Option<&'static str> {
    Some(match v {
        0 => "(unknown)",
        1 => "(any)",
        2 => "(deny)",
        3 => "(allow)",
        _ => return None,
    })
}

/// The ACL APIs' `PatternType` (PatternType).
pub(crate) fn acl_pattern_note(v: i64) -> Option<&'static str> {
    Some(match v {
        0 => "(unknown)",
        1 => "(any)",
        2 => "(match)",
        3 => "(literal)",
        4 => "(prefixed)",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_and_exact() {
        assert_eq!(utc_millis(0).as_deref(), Some("1970-01-01T00:00:00.000Z"));
        assert_eq!(
            utc_millis(1_700_000_000_000).as_deref(),
            Some("2023-11-14T22:13:20.000Z")
        );
        assert_eq!(
            utc_millis(951_782_400_123).as_deref(),
            Some("2000-02-29T00:00:00.123Z")
        );
        assert_eq!(
            utc_millis(253_402_300_799_999).as_deref(),
            Some("9999-12-31T23:59:59.999Z")
        );
        assert_eq!(utc_millis(253_402_300_800_000), None);
        assert_eq!(utc_millis(-1), None);
        assert_eq!(timestamp_note(-1).as_deref(), Some("(none)"));
        assert_eq!(
            utc_micros(1_796_142_244_015_891).as_deref(),
            Some("2026-12-01T16:24:04.015891Z")
        );
        assert_eq!(
            utc_micros(5).as_deref(),
            Some("1970-01-01T00:00:00.000005Z")
        );
    }

    #[test]
    fn durations_in_the_largest_unit() {
        assert_eq!(duration_note(250).as_deref(), Some("(250 ms)"));
        assert_eq!(duration_note(30_000).as_deref(), Some("(30 s)"));
        assert_eq!(duration_note(1500).as_deref(), Some("(1.5 s)"));
        assert_eq!(duration_note(300_000).as_deref(), Some("(5 min)"));
        assert_eq!(duration_note(604_800_000).as_deref(), Some("(7 d)"));
        assert_eq!(duration_note(0).as_deref(), Some("(0 ms)"));
        assert_eq!(duration_note(-1), None);
    }

    #[test]
    fn enums_by_name() {
        assert_eq!(acks_note(-1), Some("(all)"));
        assert_eq!(isolation_level_note(1), Some("(read_committed)"));
        assert_eq!(acl_operation_note(3), Some("(read)"));
        assert_eq!(acl_operation_note(15), None);
        assert_eq!(acl_permission_note(3), Some("(allow)"));
        assert_eq!(acl_pattern_note(4), Some("(prefixed)"));
        assert_eq!(acl_resource_type_note(2), Some("(topic)"));
        assert_eq!(acl_resource_type_note(8), None);
    }
}
