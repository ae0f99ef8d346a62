//! A VPG's status set by the simulator's levers and its syncs: a status pinned through `/_sim`, a
//! sync (a resync that wipes the journal, a force sync, a new VPG's initial sync) and its end, and
//! the journal writing again. Each changes the journal, so its history alerts are settled around
//! the change.

use super::clock::SimTime;
use super::inventory::Resync;
use super::model::World;
use super::schedule::Event;
use crate::decisions;
use crate::enums::{status, substatus};

impl World {
    /// `POST /_sim/vpgs/{id}/resync`: removes every checkpoint of the VPG and shows a sync for
    /// `seconds`, then MeetingSLA / None.
    pub fn resync(&mut self, vpg: usize, seconds: f64, sync_substatus: u8, now: SimTime) -> Resync {
        let until = now.plus_millis((seconds * 1000.0).round() as i64);
        let wiped = self.vpgs[vpg].journal.contents(now);
        let resync = self.sync(vpg, until, sync_substatus, true, now);
        self.trace_resync(vpg, sync_substatus, &wiped, resync, now);
        resync
    }

    /// Starts a sync until `until`: NotMeetingSLA with `sync_substatus`, no checkpoints written (a
    /// resync also removes every checkpoint, `wipe`), then MeetingSLA / None. Bumps the VPG's
    /// generation.
    pub(crate) fn sync(
        &mut self,
        vpg: usize,
        until: SimTime,
        sync_substatus: u8,
        wipe: bool,
        now: SimTime,
    ) -> Resync {
        self.changing_journal(vpg, now, |world| {
            let journal = &mut world.vpgs[vpg].journal;
            if wipe {
                journal.wipe(now);
            } else {
                journal.stop_writing(now);
            }
        });
        let v = &mut self.vpgs[vpg];
        v.status = status::NOT_MEETING_SLA;
        v.sub_status = sync_substatus;
        v.generation += 1;
        let resync = Resync {
            started: now,
            until,
        };
        v.resync = Some(resync);
        let generation = v.generation;
        self.schedule(until, Event::ResyncEnds { vpg, generation });
        resync
    }

    /// A resync of `generation` ends: the VPG meets its SLA and writes again (a later change to the
    /// VPG, which bumps its generation, leaves this end without effect).
    pub(super) fn end_resync(&mut self, vpg: usize, generation: u64, at: SimTime) {
        let v = &mut self.vpgs[vpg];
        if v.generation != generation {
            return;
        }
        v.resync = None;
        v.status = status::MEETING_SLA;
        v.sub_status = substatus::NONE;
        self.resume_writing(vpg, at);
    }

    /// `POST /_sim/vpgs/{id}/status`: shows this status until changed. A running resync is
    /// cancelled; the VPG writes checkpoints from now on if the new state is one that does, and
    /// stops (keeping what it wrote) if not.
    pub fn pin_status(&mut self, vpg: usize, new_status: u8, new_substatus: u8, now: SimTime) {
        self.changing_journal(vpg, now, |world| {
            if decisions::writes_checkpoints(new_status, new_substatus) {
                world.resume_writing(vpg, now);
            } else {
                world.vpgs[vpg].journal.stop_writing(now);
            }
            let v = &mut world.vpgs[vpg];
            v.status = new_status;
            v.sub_status = new_substatus;
            v.resync = None;
            v.generation += 1;
        });
    }

    /// The VPG writes checkpoints from `at` on; the RPO alerts it raised meanwhile turn off.
    fn resume_writing(&mut self, vpg: usize, at: SimTime) {
        self.changing_journal(vpg, at, |world| {
            world.end_rpo_episode(vpg, at);
            world.vpgs[vpg].journal.start_writing(at);
        });
    }
}
