//! `/v1/vpgs` and what is read of one VPG: its checkpoints, and how much history its journal keeps,
//! with the alerts and events that say why.

use chrono::{DateTime, Utc};

use crate::error::RewindError;
use crate::way_back::{JOURNAL_ALERTS, VpgHistory, Wipe};
use crate::zvm::client::{ZvmClient, segment};
use crate::zvm::wire::{Alert, Checkpoint, Event, Vpg, format_query_time};

impl ZvmClient {
    /// `GET /v1/vpgs`.
    pub async fn vpgs(&self) -> Result<Vec<Vpg>, RewindError> {
        self.get_list("/v1/vpgs", &[]).await
    }

    /// `GET /v1/vpgs/{id}` (an object, or a one-element array on some versions).
    pub async fn vpg(&self, vpg_id: &str) -> Result<Vpg, RewindError> {
        let path = format!("/v1/vpgs/{}", segment(vpg_id));
        self.get_one(&path, "VPG").await
    }

    /// `GET /v1/vpgs/{id}/checkpoints`, from `since` on when given (the ZVM's clock).
    pub async fn checkpoints(
        &self,
        vpg_id: &str,
        since: Option<DateTime<Utc>>,
    ) -> Result<Vec<Checkpoint>, RewindError> {
        let query: Vec<(&str, String)> = since
            .map(|t| vec![("startDate", format_query_time(t))])
            .unwrap_or_default();
        let checkpoints: Vec<Checkpoint> = self
            .get_list(&format!("/v1/vpgs/{}/checkpoints", segment(vpg_id)), &query)
            .await?;
        // The filter is also applied here, so a ZVM that ignores it cannot widen the answer.
        Ok(match since {
            Some(t) => checkpoints
                .into_iter()
                .filter(|c| c.time_stamp.is_none_or(|ts| ts >= t))
                .collect(),
            None => checkpoints,
        })
    }

    /// How much history one VPG's journal keeps: `GET /v1/vpgs/{id}` and its alerts, read at once.
    /// Alerts that cannot be read count as none: the status says the same, a little later.
    pub async fn vpg_history(&self, vpg_id: &str) -> Result<VpgHistory, RewindError> {
        let (vpg, alerts) = tokio::join!(self.vpg(vpg_id), self.alerts_of_vpg(vpg_id));
        Ok(history_of(&vpg?, &alerts.unwrap_or_default()))
    }

    /// The removals of every checkpoint of a VPG since `since`, read from its events: an event
    /// whose words say checkpoints were removed (a resync's, or a journal emptied). Events that
    /// cannot be read count as none; the journal's own start then tells a wipe from an ageing.
    pub async fn wipes(&self, vpg_id: &str, since: DateTime<Utc>) -> Vec<Wipe> {
        let events = self.events_of_vpg(vpg_id, since).await.unwrap_or_default();
        let mut wipes: Vec<Wipe> = events
            .into_iter()
            .filter_map(|e| {
                let by = e.description?;
                let words = by.to_lowercase();
                let removed = ["remov", "delet", "wipe", "lost"]
                    .iter()
                    .any(|w| words.contains(w));
                (words.contains("checkpoint") && removed).then_some(Wipe {
                    at: e.occurred_on?,
                    by: first_clause(&by),
                })
            })
            .filter(|w| w.at >= since)
            .collect();
        wipes.sort_by_key(|w| w.at);
        wipes
    }

    /// `GET /v1/alerts?vpgIdentifier={id}`: the alerts on now about one VPG.
    pub async fn alerts_of_vpg(&self, vpg_id: &str) -> Result<Vec<Alert>, RewindError> {
        self.get_list("/v1/alerts", &[("vpgIdentifier", vpg_id.to_string())])
            .await
    }

    /// `GET /v1/events?vpgIdentifier={id}&startDate=..`: one VPG's events since `since`.
    pub async fn events_of_vpg(
        &self,
        vpg_id: &str,
        since: DateTime<Utc>,
    ) -> Result<Vec<Event>, RewindError> {
        self.get_list(
            "/v1/events",
            &[
                ("vpgIdentifier", vpg_id.to_string()),
                ("startDate", format_query_time(since)),
            ],
        )
        .await
    }
}

/// The history of `vpg`, with those of `alerts` that are journal alerts.
fn history_of(vpg: &Vpg, alerts: &[Alert]) -> VpgHistory {
    let history = vpg.history_status_api.clone().unwrap_or_default();
    let mut journal_alerts: Vec<String> = alerts
        .iter()
        .filter_map(|a| a.help_identifier.clone())
        .filter(|id| JOURNAL_ALERTS.contains(&id.as_str()))
        .collect();
    journal_alerts.sort();
    journal_alerts.dedup();
    VpgHistory {
        status: vpg.status,
        configured_minutes: history.configured_history_in_minutes,
        actual_minutes: history.actual_history_in_minutes,
        earliest: history.earliest_checkpoint.and_then(|c| c.time_stamp),
        alerts: journal_alerts,
    }
}

/// An event's description up to its first `:` or `.`, at most 120 characters: what happened,
/// without the detail a list of tags would add.
fn first_clause(text: &str) -> String {
    let end = text.find([':', '.']).unwrap_or(text.len());
    text[..end]
        .chars()
        .take(120)
        .collect::<String>()
        .trim()
        .to_string()
}
