//! The protecting-VPG rule: which VPG statuses and substatuses protect a VM, and why a VPG does
//! not.

use crate::codes::Code;

/// The substatuses that are a sync: a VPG in one of them is not protecting.
pub const SYNC_SUBSTATUSES: [i64; 8] = [1, 3, 4, 6, 11, 12, 13, 23];

/// The substatuses of a VPG whose replication is paused (by a person, or by the system): it writes
/// no checkpoint, so it is not protecting.
pub const PAUSED_SUBSTATUSES: [i64; 2] = [25, 26];

/// Why a VPG with this status and substatus is not protecting, or `None` when it is protecting.
///
/// Protecting: status MeetingSLA (1), NotMeetingSLA (2), RpoNotMeetingSLA (3) or HistoryNotMeetingSLA
/// (4), and a substatus that is not a sync or a pause.
pub fn not_protecting_reason(status: &Code, substatus: &Code) -> Option<String> {
    match status.code {
        1..=4 if PAUSED_SUBSTATUSES.contains(&substatus.code) => Some(format!(
            "the VPG's replication is paused ({substatus}): it writes no checkpoint, so no tag can be taken; resume it in Zerto, then guard again"
        )),
        1..=4 if SYNC_SUBSTATUSES.contains(&substatus.code) => Some(format!(
            "the VPG is syncing ({substatus}); a sync removes checkpoints and a tag taken now is not a point to go back to; guard again when the sync is over"
        )),
        1..=4 => None,
        0 => Some(format!(
            "the VPG is {status} ({substatus}): it is still being created and has no journal to tag yet"
        )),
        _ => Some(format!(
            "the VPG is {status} ({substatus}), not protecting; only VPGs that are MeetingSLA, NotMeetingSLA, RpoNotMeetingSLA or HistoryNotMeetingSLA are tagged"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(s: i64, ss: i64) -> Option<String> {
        not_protecting_reason(&Code::vpg_status(s), &Code::vpg_substatus(ss))
    }

    #[test]
    fn statuses_one_to_four_without_a_sync_are_protecting() {
        for s in 1..=4 {
            assert_eq!(reason(s, 0), None);
            assert_eq!(reason(s, 5), None, "RecoveryPossible is not a sync");
        }
    }

    #[test]
    fn a_sync_substatus_is_not_protecting_and_the_reason_names_it() {
        for ss in SYNC_SUBSTATUSES {
            let r = reason(2, ss).unwrap();
            assert!(r.contains(&Code::vpg_substatus(ss).name), "{r}");
            assert!(r.contains(&format!("({ss})")), "{r}");
        }
    }

    #[test]
    fn a_paused_vpg_is_not_protecting_and_the_reason_says_to_resume_it() {
        for ss in PAUSED_SUBSTATUSES {
            let r = reason(1, ss).unwrap();
            assert!(r.contains(&Code::vpg_substatus(ss).name), "{r}");
            assert!(r.contains("resume"), "{r}");
        }
    }

    #[test]
    fn initializing_and_failing_over_are_not_protecting() {
        assert!(reason(0, 1).unwrap().contains("Initializing (0)"));
        let failing_over = reason(5, 0).unwrap();
        assert!(failing_over.contains("FailingOver (5)"));
        assert!(
            failing_over.contains("RpoNotMeetingSLA or HistoryNotMeetingSLA are tagged"),
            "the reason names every protecting status: {failing_over}"
        );
        assert!(reason(-1, -1).unwrap().contains("Unknown(-1)"));
    }
}
