Feature: Bounded recover
  When a change went wrong, a human recovers from the change's tagged checkpoint in bounded ways only,
  all of which leave the production VM running: file-level recovery (FLR) at the VPG's recovery site,
  a failover test, or an offsite clone. Failover Live and Move are never used.

  Scenario: A file changed after the guard comes back from the tag by local FLR, while the VM keeps the change
    Given the agent has guarded "web-01" for change "edit-conf"
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "listen = 0.0.0.0:9999"
    When the agent recovers "sda1/etc/app/app.conf" of "web-01" from change "edit-conf"
    Then the tool succeeds
    And the recovered "sda1/etc/app/app.conf" holds the bytes "web-01" had before the change
    And "web-01" still has the changed "sda1/etc/app/app.conf"
    And the FLR ran at "Boston" from VPG "web-local", and its mount and unmount tasks Completed
    And the journal records a recovery of "web-01" for change "edit-conf"

  Scenario: A VM whose VPG recovers to the peer site is recovered through the peer's ZVM
    Given the operator has run `rewind guard db-01 --agent ops --action "edit app.conf" --change db-conf`
    And the agent then changes "sda1/etc/app/app.conf" on "db-01" to "pool = 1"
    When the operator runs `rewind recover file db-01 --change db-conf --path sda1/etc/app/app.conf --to <recovery folder>`
    Then rewind succeeds
    And the recovered "sda1/etc/app/app.conf" holds the bytes "db-01" had before the change
    And the FLR ran at "Denver" from VPG "web-dr", and its mount and unmount tasks Completed

  Scenario: Without the peer site configured, remote FLR is refused before anything is sent, naming the site to add
    Given rewind is configured with the site "boston" only
    And the operator has run `rewind guard db-01 --agent ops --action "edit app.conf" --change db-conf`
    When the operator runs `rewind recover file db-01 --change db-conf --path sda1/etc/app/app.conf --to <recovery folder>`
    Then rewind refuses with exit code 3
    And the answer says "the ZVM of Denver is not configured, so nothing was sent"
    And the answer says "[sites.denver]"
    And Zerto received no FLR request
    And the recovery folder is empty

  Scenario: The Operator role is refused FLR, and the answer names the Administrator workaround
    Given the operator has run `rewind guard db-01 --agent ops --action "edit app.conf" --change db-conf`
    And rewind signs in as the ZVM user "operator" with password "operator"
    When the operator runs `rewind recover file db-01 --change db-conf --path sda1/etc/app/app.conf --to <recovery folder>`
    Then rewind refuses with exit code 3
    And the answer says "Operator"
    And the answer says "Administrator"
    And the recovery folder is empty

  Scenario: A guest path that climbs out of its partition is refused, and nothing is mounted or written
    Given the agent has guarded "web-01" for change "edit-conf"
    When the agent recovers "sda1/../../etc/shadow" of "web-01" from change "edit-conf"
    Then the tool reports an error
    And the answer says "sda1/../../etc/shadow"
    And the answer says "`..`"
    And Zerto received no FLR request
    And the recovery folder is empty

  Scenario: A recovered file never replaces one already in the folder
    Given the operator has run `rewind guard web-01 --agent ops --action "edit hosts" --change hosts-2`
    And the operator has run `rewind recover file web-01 --change hosts-2 --path sda1/etc/hosts --to <recovery folder>`
    And the recovered "sda1/etc/hosts" is then edited by hand to "127.0.0.1 kept"
    When the operator runs `rewind recover file web-01 --change hosts-2 --path sda1/etc/hosts --to <recovery folder>`
    Then rewind refuses with exit code 2
    And the answer says "overwriting was not asked for"
    And the recovered "sda1/etc/hosts" still holds "127.0.0.1 kept"
    And no FLR session is left mounted at Zerto

  Scenario: The agent's destination must be an absolute folder
    Given the agent has guarded "web-01" for change "edit-conf"
    When the agent recovers "sda1/etc/app/app.conf" of "web-01" from change "edit-conf" into "restored/here"
    Then the tool reports an error
    And the answer says "absolute"
    And Zerto received no FLR request

  Scenario: The operator's absolute guest path is refused the same way
    Given the operator has run `rewind guard web-01 --agent ops --action "edit hosts" --change hosts-1`
    When the operator runs `rewind recover file web-01 --change hosts-1 --path /etc/hosts --to <recovery folder>`
    Then rewind refuses with exit code 2
    And the answer says "partition-rooted"
    And Zerto received no FLR request

  Scenario: A failover test starts from the tag and stops with its result, and Failover Live is never called
    Given the operator has run `rewind guard web-01 --agent ops --action "upgrade nginx" --change ft-1`
    When the operator runs `rewind recover test web-01 --change ft-1 start`
    Then rewind succeeds
    And the recovery's verdict is "completed"
    And Zerto ran a "FailOverTest" task from the checkpoint tagged for change "ft-1", and it Completed
    When the operator runs `rewind recover test web-01 --change ft-1 stop --passed --summary "nginx answers on 443"`
    Then rewind succeeds
    And Zerto ran a "StopFailOverTest" task, and it Completed
    And Zerto never received a Failover or Move request

  Scenario: The agent starts a failover test through MCP and stops it as failed
    Given the agent has guarded "web-01" for change "ft-2"
    When the agent starts a failover test of "web-01" from change "ft-2"
    Then the tool succeeds
    And Zerto ran a "FailOverTest" task from the checkpoint tagged for change "ft-2", and it Completed
    When the agent stops the failover test of "web-01" for change "ft-2", recording it failed with "login page 500"
    Then the tool succeeds
    And Zerto ran a "StopFailOverTest" task, and it Completed
    And Zerto recorded the test as failed with "login page 500"
    And Zerto never received a Failover or Move request

  Scenario: An offsite clone starts from the tag and can be aborted while it runs
    Given the operator has run `rewind guard web-01 --agent ops --action "drop table" --change clone-1`
    And each Zerto task takes 20000 ms
    When the operator starts `rewind recover clone web-01 --change clone-1 start` as "the clone"
    And Zerto shows the clone running from the checkpoint tagged for change "clone-1"
    And each Zerto task takes 50 ms
    And the operator runs `rewind recover clone web-01 --change clone-1 abort`
    Then rewind succeeds
    And the recovery's verdict is "completed"
    And "the clone" ends with exit code 4
    And the answer says "Stopped"
    And Zerto's "Clone" task ended Stopped
    And Zerto never received a Failover or Move request

  Scenario: An offsite clone that runs to its end makes the clone VM with the files of the tag
    Given the operator has run `rewind guard db-01 --agent ops --action "edit app.conf" --change clone-2`
    And the agent then changes "sda1/etc/app/app.conf" on "db-01" to "pool = 0"
    When the operator runs `rewind recover clone db-01 --change clone-2 start`
    Then rewind succeeds
    And the recovery's verdict is "completed"
    And Zerto ran a "Clone" task from the checkpoint tagged for change "clone-2", and it Completed
    And the clone "db-01-clone" has the "sda1/etc/app/app.conf" that "db-01" had before the change
