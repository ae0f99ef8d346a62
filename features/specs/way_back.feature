Feature: How long the way back lasts
  A tagged checkpoint lives only inside its VPG's journal history: Zerto cannot pin one, so a tag ages
  out like its neighbours. A guard says until when each tag can be recovered from; once the clock moves,
  the tag list says what became of each tag, and a recovery from a tag that is gone says so and names
  what is left. web-01's VPGs keep 60 (web-local, web-archive) and 120 (web-dr) minutes of history.

  Scenario: A guard says each VPG's recoverable-until and notes a way back shorter than four hours
    When the agent guards "web-01" for change "upgrade-nginx"
    Then the verdict is "guarded"
    And VPG "web-local" is recoverable for 60 minutes from its tag
    And VPG "web-archive" is recoverable for 60 minutes from its tag
    And VPG "web-dr" is recoverable for 120 minutes from its tag
    And the guard is recoverable until the end of its shortest way back
    And the guard's notes for VPG "web-dr" say "less than the 4 h asked for"
    And the answer says "The shortest way back is VPG"

  Scenario: A history shortened in Zerto after a guard ages its tag out sooner, and is reported so
    Given the operator has run `rewind guard web-01 --agent ops --action "edit app.conf" --change shortened`
    When someone sets VPG "web-dr" to keep 1 hour of history in Zerto
    And Zerto's clock moves on 61 minutes
    Then the operator sees the tag of change "shortened" on "web-01" in VPG "web-dr" as "aged_out"
    And the operator sees the tag of change "shortened" on "web-01" in VPG "web-local" as "aged_out"

  Scenario: A VPG deleted in Zerto after a guard: its tag is reported gone, the other VPGs' still listed
    Given the operator has run `rewind guard web-01 --agent ops --action "edit app.conf" --change deleted-under`
    When someone deletes VPG "web-archive" in Zerto
    Then the operator sees the tag of change "deleted-under" on "web-01" in VPG "web-archive" gone because "web-archive was deleted in Zerto after the guard"
    And the operator sees the tag of change "deleted-under" on "web-01" in VPG "web-dr" as "listed"
    And the journal records that VPG "web-archive" was removed after the guard of "web-01"

  Scenario: A VM whose only VPG is deleted after its guard has no way back: its tag is gone, the hook denies
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    And the agent has guarded "db-01" for change "only-vpg"
    When someone deletes VPG "web-dr" in Zerto
    Then the operator sees the tag of change "only-vpg" on "db-01" in VPG "web-dr" gone because "deleted in Zerto"
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "db-01", "command": "psql -f migrate.sql"}'
    Then the hook answers "deny"
    And the hook's reason says "no way back is left"

  Scenario: A journal a burst of writes filled says so at guard: its way back is a shorter estimate
    Given a burst of writes as big as 40 minutes of its usual writing fills the journal of VPG "web-local"
    When the agent guards "web-01" for change "after-burst"
    Then the verdict is "guarded"
    And VPG "web-local" is recoverable for about 50 minutes from its tag, an estimate because "HistoryNotMeetingSLA"
    And the guard's notes for VPG "web-local" say "the journal holds about 50 min of its configured 60 min"
    And VPG "web-dr" is recoverable for 120 minutes from its tag

  Scenario: A tag ages out of a 60-minute journal and is reported so, never as one that never existed
    Given the operator has run `rewind guard web-01 --agent ops --action "edit app.conf" --change aging`
    When Zerto's clock moves on 61 minutes
    Then the operator sees the tag of change "aging" on "web-01" in VPG "web-local" as "aged_out"
    And the operator sees the tag of change "aging" on "web-01" in VPG "web-dr" as "listed"
    And the agent sees the tag of change "aging" on "web-01" in VPG "web-archive" as "aged_out"
    When Zerto's clock moves on 60 minutes
    Then the agent sees the tag of change "aging" on "web-01" in VPG "web-dr" as "aged_out"
    When the agent recovers "sda1/etc/app/app.conf" of "web-01" from change "aging"
    Then the tool reports an error
    And the answer says "aged out"
    And the answer says "the earliest checkpoints left are"
    And the answer says "Nothing was recovered"
    And the answer does not show "Do not make the change"
    And Zerto received no FLR request

  Scenario: A cron job is told which open changes' ways back end soon, until a person says done
    Given the operator has run `rewind guard web-01 --agent ops --action "edit app.conf" --change soon-1`
    When the operator runs `rewind tags --expiring 2h`
    Then rewind refuses with exit code 3
    And the answer says "soon-1"
    When the operator runs `rewind tags --expiring 30m`
    Then rewind succeeds
    When the operator runs `rewind done soon-1`
    Then rewind succeeds
    When the operator runs `rewind tags --expiring 2h`
    Then rewind succeeds
    And no open change is listed as expiring
    And the journal records a done of "web-01" for change "soon-1"

  Scenario: A person keeps a change's tags; once the journal has lost them, a file comes back from the retention set
    Given the operator has run `rewind guard db-01 --agent ops --action "edit app.conf" --change kept-1`
    And the agent then changes "sda1/etc/app/app.conf" on "db-01" to "pool = 1"
    When the operator runs `rewind keep db-01 --change kept-1`
    Then rewind succeeds
    And the answer says "denver-ltr"
    When Zerto's clock moves on 121 minutes
    Then the operator sees the tag of change "kept-1" on "db-01" in VPG "web-dr" as "kept"
    When the operator runs `rewind recover file db-01 --change kept-1 --path sda1/etc/app/app.conf --to <recovery folder>`
    Then rewind succeeds
    And the recovered "sda1/etc/app/app.conf" holds the bytes "db-01" had before the change
    And Zerto ran a "FlrBackupMount" task, and it Completed
    When the operator runs `rewind recover test db-01 --change kept-1 start`
    Then rewind refuses with exit code 3
    And the answer says "only a file-level recovery can use a retention set"

  Scenario: A VPG without a repository is said so, with the offsite clone as the way to keep it instead
    Given the operator has run `rewind guard web-01 --agent ops --action "edit app.conf" --change no-repo`
    When the operator runs `rewind keep web-01 --change no-repo`
    Then rewind succeeds
    And the answer says "VPG web-archive has no Extended Journal Copy repository"
    And the answer says "rewind recover clone web-01 --change no-repo start"
