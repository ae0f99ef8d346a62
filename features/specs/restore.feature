Feature: Rewind a VM to its tag
  When files alone cannot undo an agent's change, a person restores the VM from the change's tag by a
  journal VM restore: beside it as a new VM, or in place. Only a VPG whose journal is at the VM's own
  site can do it (web-01's web-local). The restore waits: only a person commits it or rolls it back,
  and one nobody commits rolls back by itself. An agent may propose one; only the human says yes.

  Scenario: Restored beside it, the new VM has what the agent broke and deleted, and the VM keeps the damage
    Given the operator has run `rewind guard web-01 --agent claude --action "tidy web" --change tidy-1`
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "broken = yes"
    And the agent then deletes the folder "sda1/var/www/html" on "web-01"
    When the operator runs `rewind restore vm web-01 --change tidy-1 --as web-01-restored --yes tidy-1`
    Then rewind succeeds
    And the restore waits for a person's commit
    And "web-01-restored" has "sda1/etc/app/app.conf" and the folder "sda1/var/www/html" as "web-01" had them at the tag
    And "web-01" still has the changed "sda1/etc/app/app.conf"
    And the journal records the restore of "web-01" for change "tidy-1" as "waiting"

  Scenario: Restored in place and committed, the VM is the tag's again
    Given the operator has run `rewind guard web-01 --agent claude --action "tidy web" --change tidy-2`
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "broken = yes"
    And the agent then deletes the folder "sda1/var/www/html" on "web-01"
    When the operator runs `rewind restore vm web-01 --change tidy-2 --in-place --yes tidy-2`
    Then rewind succeeds
    When the operator runs `rewind restore commit web-01 --yes web-01`
    Then rewind succeeds
    And "web-01" has "sda1/etc/app/app.conf" and the folder "sda1/var/www/html" as "web-01" had them at the tag
    And the journal records the restore of "web-01" for change "tidy-2" as "completed"
    When the operator runs `rewind restore status`
    Then no restore is listed as waiting

  Scenario: Restored in place and rolled back, the damage is back
    Given the operator has run `rewind guard web-01 --agent claude --action "tidy web" --change tidy-3`
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "broken = yes"
    When the operator runs `rewind restore vm web-01 --change tidy-3 --in-place --yes tidy-3`
    Then rewind succeeds
    When the operator runs `rewind restore rollback web-01 --yes web-01`
    Then rewind succeeds
    And "web-01" still has the changed "sda1/etc/app/app.conf"

  Scenario: A VM whose VPGs keep their journals at the peer site is refused before anything is sent
    Given the operator has run `rewind guard db-01 --agent ops --action "edit app.conf" --change db-1`
    When the operator runs `rewind restore vm db-01 --change db-1 --as db-01-back --yes db-1`
    Then rewind refuses with exit code 3
    And the answer says "needs a VPG whose journal is at the VM's own site"
    And the answer says "web-dr (journal at Denver)"
    And Zerto ran no restore

  Scenario: A VPG in a sync is refused before anything is sent
    Given the operator has run `rewind guard web-01 --agent claude --action "tidy web" --change sync-1`
    And Zerto shows VPG "web-local" in a delta sync
    When the operator runs `rewind restore vm web-01 --change sync-1 --in-place --yes sync-1`
    Then rewind refuses with exit code 3
    And the answer says "VPG web-local is not protecting now"
    And Zerto ran no restore

  Scenario: A tag that aged out of the journal is refused, saying what became of it
    Given the operator has run `rewind guard web-01 --agent claude --action "tidy web" --change old-1`
    When Zerto's clock moves on 130 minutes
    And the operator runs `rewind restore vm web-01 --change old-1 --in-place --yes old-1`
    Then rewind refuses with exit code 3
    And the answer says "aged out"
    And Zerto ran no restore

  Scenario: A second restore while the first waits is refused, naming how to end the first
    Given the operator has run `rewind guard web-01 --agent claude --action "tidy web" --change twice-1`
    And the operator has run `rewind restore vm web-01 --change twice-1 --as web-01-first --yes twice-1`
    When the operator runs `rewind restore vm web-01 --change twice-1 --in-place --yes twice-1`
    Then rewind refuses with exit code 3
    And the answer says "rewind restore commit web-01"

  Scenario: Without a terminal or --yes, nothing is sent
    Given the operator has run `rewind guard web-01 --agent claude --action "tidy web" --change ask-1`
    When the operator runs `rewind restore vm web-01 --change ask-1 --in-place`
    Then rewind refuses with exit code 2
    And the answer says "Nothing was sent"
    And the answer says "--yes CHANGE_ID"
    And Zerto ran no restore

  Scenario: The agent proposes a restore beside the VM; on the human's yes it is restored and waits for them
    Given the agent has guarded "web-01" for change "agent-1"
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "broken = yes"
    And the human will answer "yes"
    When the agent proposes restoring "web-01" from change "agent-1" as "web-01-back"
    Then the tool succeeds
    And the restore waits for a person's commit
    And "web-01" still has the changed "sda1/etc/app/app.conf"

  Scenario: The human dismisses the form: the VM is as it was, and the journal says it was declined
    Given the agent has guarded "web-01" for change "agent-2"
    And the agent then changes "sda1/etc/app/app.conf" on "web-01" to "broken = yes"
    And the human will answer "nothing, dismissing the form"
    When the agent proposes restoring "web-01" in place from change "agent-2"
    Then the tool reports an error
    And the answer says "nothing was restored"
    And "web-01" still has the changed "sda1/etc/app/app.conf"
    And the journal records the restore of "web-01" for change "agent-2" as "declined"
    And Zerto ran no restore
