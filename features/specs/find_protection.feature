Feature: Find protection
  Before an agent changes a VM, rewind must know which VM a name means and every VPG that VM is in.
  A name must resolve to exactly one VM; no match, or more than one, is a hard stop that lists what was
  found, and nothing is tagged.

  Scenario: A VM in one VPG is found with that VPG
    When the operator runs `rewind find db-01`
    Then rewind succeeds
    And the VM found is "db-01" at site "Boston"
    And its VPGs are:
      | VPG    | protecting | recovery site | locally replicated |
      | web-dr | yes        | Denver        | no                 |

  Scenario: A VM in three VPGs is found with all three, one locally replicated and two to the peer
    When the operator runs `rewind find web-01`
    Then rewind succeeds
    And the VM found is "web-01" at site "Boston"
    And its VPGs are:
      | VPG         | protecting | recovery site | locally replicated |
      | web-local   | yes        | Boston        | yes                |
      | web-dr      | yes        | Denver        | no                 |
      | web-archive | yes        | Denver        | no                 |
    And each VPG's protecting flag follows the rule on its status and substatus

  Scenario: An Initializing VPG and a syncing VPG are found, but not as protecting
    When the operator runs `rewind find sql-01`
    Then rewind succeeds
    And its VPGs are:
      | VPG       | protecting | recovery site | locally replicated |
      | sql-local | yes        | Boston        | yes                |
      | sql-init  | no         | Denver        | no                 |
    And VPG "sql-init" is not protecting because "Initializing"
    When the operator runs `rewind find files-01`
    Then VPG "files-dr" is not protecting because "syncing"
    And each VPG's protecting flag follows the rule on its status and substatus

  Scenario: A VM is found by its vmIdentifier as well as by its name
    Given the operator has looked up "erp-01"
    When the operator looks it up again by its vmIdentifier
    Then rewind succeeds
    And the VM found is "erp-01" at site "Denver"

  Scenario: The agent finds protection through MCP with the same answer as the operator
    When the agent finds the protection of "web-01"
    Then the tool succeeds
    And the VM found is "web-01" at site "Boston"
    And VPGs "web-local, web-dr, web-archive" are listed

  Scenario: A name that matches no VM is a hard stop
    When the operator runs `rewind find web-99`
    Then rewind refuses with exit code 3
    And the answer says 'no VM named or identified "web-99"'
    And the answer says "check the spelling"
    And Zerto ran no tagged-checkpoint insert

  Scenario: A name that matches two VMs is a hard stop that lists both
    When the operator runs `rewind find build-agent`
    Then rewind refuses with exit code 3
    And the refusal lists these candidates:
      | VM          | site   | VPGs      |
      | build-agent | Boston | ci-boston |
      | build-agent | Denver | ci-denver |
    And the answer says "repeat with the vmIdentifier"

  Scenario: A guard of an ambiguous name tags nothing
    When the operator runs `rewind guard build-agent --agent ops --action "patch the kernel" --change kernel-7`
    Then rewind refuses with exit code 3
    And the refusal lists 2 candidates
    And Zerto ran no tagged-checkpoint insert
    And the journal has no record

  Scenario: A VM that no VPG protects is a hard stop, for the agent too
    When the operator runs `rewind find report-01`
    Then rewind refuses with exit code 3
    And the answer says "no VPG protects it"
    When the agent guards "report-01" for change "report-fix"
    Then the tool reports an error
    And the answer says "no VPG protects it"
    And Zerto ran no tagged-checkpoint insert
