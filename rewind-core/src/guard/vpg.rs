//! One VPG's guard through its port: the insert (`insert`) and, while Zerto runs it, how long the
//! tag will last, read from the VPG's journal history.

use std::time::Duration;

use super::insert::{self, Place};
use super::note::GuardNote;
use super::record::Earlier;
use super::report::Outcome;
use crate::error::RewindError;
use crate::progress::ProgressSink;
use crate::way_back::{VpgHistory, WayBack};
use crate::zvm::port::InsertPort;
use crate::zvm::timings::SiteTimings;

/// Tags one VPG at `at` through `port`: the insert's outcome, the tag's way back when it was
/// tagged, and the notes of both, in order.
pub(super) async fn tag(
    at: Place<'_>,
    port: &impl InsertPort,
    timings: &SiteTimings,
    earlier: Option<&Earlier>,
    sink: &dyn ProgressSink,
) -> (Outcome, Option<WayBack>, Vec<GuardNote>) {
    let (vpg_id, minimum) = (at.vpg.vpg_id.as_str(), at.ctx.settings.min_way_back);
    // The VPG's history is read while Zerto runs the insert, so saying how long the tag lasts costs
    // the guard no time; not before, when it would compete with the guards still sending theirs,
    // and not at all when no insert was sent (a ZVM that refused one would only be asked in vain).
    // The place, and with it the sender, goes when the insert ends: a history never asked for.
    let mut was_sent = at.sent.subscribe();
    let insert = async move { insert::run(&at, port, timings, earlier, sink).await };
    let history = async {
        was_sent.wait_for(|sent| *sent).await.ok()?;
        Some(port.history(vpg_id).await)
    };
    let ((outcome, mut notes), history) = tokio::join!(insert, history);
    let history = match history {
        Some(read) => Some(read),
        // A tag found without an insert is an earlier attempt's.
        None if outcome.is_tagged() => Some(port.history(vpg_id).await),
        None => None,
    };
    let way_back = history.and_then(|h| way_back_of(&outcome, h, minimum, &mut notes));
    (outcome, way_back, notes)
}

/// How long a tagged VPG's tag lasts, noting a way back shorter than `minimum` and a history that
/// could not be read.
fn way_back_of(
    outcome: &Outcome,
    history: Result<VpgHistory, RewindError>,
    minimum: Duration,
    notes: &mut Vec<GuardNote>,
) -> Option<WayBack> {
    let Outcome::Tagged {
        timestamp: Some(at),
        ..
    } = outcome
    else {
        return None;
    };
    let history = match history {
        Ok(h) => h,
        Err(e) => {
            notes.push(GuardNote::WayBackUnknown {
                error: e.to_string(),
            });
            return None;
        }
    };
    let way_back = WayBack::of(*at, &history)?;
    let minimum_minutes = (minimum.as_secs() / 60) as i64;
    if minimum_minutes > 0 && way_back.lasts() < chrono::Duration::minutes(minimum_minutes) {
        notes.push(GuardNote::ShortWayBack {
            way_back: way_back.clone(),
            minimum_minutes,
        });
    }
    Some(way_back)
}
