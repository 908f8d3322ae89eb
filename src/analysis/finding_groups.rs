//! Findings gathered into groups, as `check`, the report and the explorer
//! show them: one group per rule, API version and client, with how many
//! findings it holds, every frame they name, their connections and their
//! time span. Sorted by severity, then by time. Memory is one group per
//! kind of finding (at most [`MAX_GROUPS`]), never one per finding.

use super::finding::{Finding, Rule, Severity, MAX_FRAMES_NAMED};
use foldhash::HashMap;
use std::collections::BTreeSet;

/// Groups kept apart at most; past it, findings of a rule and API join the
/// group without a client.
pub const MAX_GROUPS: usize = 10_000;
/// Connections a group names at most.
const MAX_CONNS: usize = 64;

type Key = (Rule, Option<i16>, Option<i16>, Option<String>);

/// Findings of one rule, about one API version and one client.
#[derive(Clone, Debug)]
pub struct Group {
    pub rule: Rule,
    pub api_key: Option<i16>,
    pub api_version: Option<i16>,
    pub client_id: Option<String>,
    /// Findings in the group.
    pub findings: u64,
    /// What they counted together (a loop's answers, a churn's connections).
    pub count: u64,
    /// The first finding's message, and whether later ones said otherwise.
    pub message: String,
    pub messages_differ: bool,
    /// Every frame named, ascending, at most [`MAX_FRAMES_NAMED`].
    pub frames: BTreeSet<usize>,
    pub frames_dropped: bool,
    /// The connections named, at most 64; `conns_dropped`: more
    /// were named than it keeps.
    pub conns: BTreeSet<usize>,
    pub conns_dropped: bool,
    pub first: Option<f64>,
    pub last: Option<f64>,
    /// The first finding's offset in its frame (a frame's finding).
    pub offset: Option<u64>,
    /// Where in the input the findings that name no frame are (a log
    /// segment's), ascending, at most [`MAX_FRAMES_NAMED`].
    pub places: BTreeSet<u64>,
}

impl Group {
    pub fn severity(&self) -> Severity {
        self.rule.severity()
    }

    pub fn frames(&self) -> Vec<usize> {
        self.frames.iter().copied().collect()
    }
}

#[derive(Default)]
pub struct Groups {
    groups: HashMap<Key, Group>,
}

impl Groups {
    pub fn add(&mut self, f: &Finding) {
        let mut key: Key = (f.rule, f.api_key, f.api_version, f.client_id.clone());
        if self.groups.len() >= MAX_GROUPS && !self.groups.contains_key(&key) {
            key.3 = None;
        }
        let g = self.groups.entry(key).or_insert_with(|| Group {
            rule: f.rule,
            api_key: f.api_key,
            api_version: f.api_version,
            client_id: f.client_id.clone(),
            findings: 0,
            count: 0,
            message: f.message.clone(),
            messages_differ: false,
            frames: BTreeSet::new(),
            frames_dropped: false,
            conns: BTreeSet::new(),
            conns_dropped: false,
            first: None,
            last: None,
            offset: f.offset,
            places: BTreeSet::new(),
        });
        g.findings += 1;
        g.count += f.count;
        if !g.messages_differ && g.message != f.message {
            g.messages_differ = true;
        }
        for &n in &f.frames {
            if g.frames.len() < MAX_FRAMES_NAMED {
                g.frames.insert(n);
            } else {
                g.frames_dropped = true;
            }
        }
        if let (None, Some(at)) = (f.frame, f.offset) {
            if g.places.len() < MAX_FRAMES_NAMED {
                g.places.insert(at);
            } else {
                g.frames_dropped = true;
            }
        }
        if let Some(c) = f.conn {
            if g.conns.len() < MAX_CONNS {
                g.conns.insert(c);
            } else if !g.conns.contains(&c) {
                g.conns_dropped = true;
            }
        }
        if let Some(t) = f.time {
            g.first = Some(g.first.map_or(t, |x| x.min(t)));
            let end = f.until.unwrap_or(t);
            g.last = Some(g.last.map_or(end, |x| x.max(end)));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// The rules of the findings naming each frame (a group's first
    /// [`MAX_FRAMES_NAMED`] frames): what the explorer's filter's `finding` reads.
    pub fn rules_by_frame(&self) -> super::filter::RulesByFrame {
        let mut rules = super::filter::RulesByFrame::default();
        for g in self.groups.values() {
            for &i in &g.frames {
                *rules.entry(i).or_default() |= 1 << g.rule.bit();
            }
        }
        rules
    }

    /// The groups so far, sorted as [`Groups::sorted`] sorts them, keeping these.
    pub(crate) fn to_sorted(&self) -> Vec<Group> {
        Groups {
            groups: self.groups.clone(),
        }
        .sorted()
    }

    /// The groups, most severe first, then by their first time (groups
    /// without a time, a file of frames', by their first frame).
    pub fn sorted(self) -> Vec<Group> {
        let mut all: Vec<Group> = self.groups.into_values().collect();
        all.sort_by(|a, b| {
            a.severity()
                .cmp(&b.severity())
                .then(
                    a.first
                        .unwrap_or(f64::INFINITY)
                        .total_cmp(&b.first.unwrap_or(f64::INFINITY)),
                )
                .then(a.frames.first().cmp(&b.frames.first()))
                .then(a.rule.id().cmp(b.rule.id()))
        });
        all
    }
}

/// What checking a whole capture found, gathered: the groups and the tally.
pub struct Checked {
    pub groups: Vec<Group>,
    pub tally: super::finding::Tally,
    /// Frames decoded and checked.
    pub frames: usize,
}

/// Check a whole capture (`kwire check`'s findings) and gather them into
/// groups: for views that lead with what went wrong (the report, `stats`).
pub fn check_capture<R: std::io::Read>(
    cat: &crate::schema::Catalogue,
    opts: crate::decode::DecodeOptions,
    input: R,
    capture: &crate::capture::CaptureOptions,
) -> Result<Checked, String> {
    let mut checker = super::check::Checker::new(cat, opts);
    let (mut groups, mut tally, mut found) = (
        Groups::default(),
        super::finding::Tally::default(),
        Vec::new(),
    );
    let mut gather = |found: &mut Vec<Finding>| {
        for f in found.drain(..) {
            tally.add(&f);
            groups.add(&f);
        }
    };
    crate::capture::for_each_captured(cat, input, capture, |c| {
        checker.take(&c, &mut found);
        gather(&mut found);
        true
    })?;
    checker.finish(&mut found);
    gather(&mut found);
    Ok(Checked {
        groups: groups.sorted(),
        tally,
        frames: checker.frames,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_of_more_connections_than_it_keeps_says_so() {
        let mut groups = Groups::default();
        let finding = |conn: usize| Finding {
            frame: Some(conn),
            time: Some(1.0),
            conn: Some(conn),
            direction: None,
            api_key: Some(0),
            api_version: Some(9),
            correlation_id: None,
            offset: None,
            rule: Rule::Unanswered,
            message: "never answered".into(),
            frames: vec![conn],
            until: None,
            count: 1,
            client_id: None,
        };
        for conn in 0..MAX_CONNS {
            groups.add(&finding(conn));
        }
        // One seen again is no more.
        groups.add(&finding(0));
        let g = &groups.to_sorted()[0];
        assert_eq!((g.conns.len(), g.conns_dropped), (MAX_CONNS, false));
        groups.add(&finding(MAX_CONNS + 5));
        let g = &groups.to_sorted()[0];
        assert_eq!((g.conns.len(), g.conns_dropped), (MAX_CONNS, true));
    }
}
