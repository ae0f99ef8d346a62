Feature: The agent's tools
  The agent meets rewind as an MCP server named zerto-rewind: ten tools, each marked for the host as
  read-only, additive or destructive, so a host can decide what to confirm. The agent reads back what
  it did (its tags and the journal), and may record a tool it uses as mutating, which the hook then
  enforces.

  Scenario: The agent sees every rewind tool, each marked as it acts
    When the agent lists rewind's tools
    Then it sees exactly these tools:
      | tool                      | read-only | destructive |
      | zerto_find_protection     | yes       | no          |
      | zerto_guard_before_mutate | no        | no          |
      | zerto_list_tags           | yes       | no          |
      | zerto_check_tool          | yes       | no          |
      | zerto_add_mutating_tool   | no        | no          |
      | zerto_add_read_only_tool  | no        | no          |
      | zerto_journal             | yes       | no          |
      | zerto_diff_since_tag      | yes       | no          |
      | zerto_recover_file        | no        | no          |
      | zerto_failover_test       | no        | yes         |
      | zerto_clone               | no        | yes         |
      | zerto_keep_way_back       | no        | no          |
      | zerto_restore_vm          | no        | yes         |

  Scenario: The agent reads back its change: the tags and the journal
    Given the agent has guarded "web-01" for change "read-back"
    When the agent lists the tags of "web-01" for change "read-back"
    Then the tool succeeds
    And VPGs "web-local, web-dr, web-archive" each hold one tag of change "read-back"
    When the agent reads the journal of change "read-back"
    Then the tool succeeds
    And the journal it read holds one guard of "web-01" with verdict "guarded"

  Scenario: A tool the agent records as mutating is denied by the hook until its VM is guarded
    When the agent records tool "exec" of server "k8s" as mutating, its VM in argument "target.vm"
    And Claude Code asks the hook about "mcp__k8s__exec" with input '{"target": {"vm": "app-01"}, "command": "reboot"}'
    Then the hook answers "deny"
    When the agent guards "app-01" for change "k8s-reboot"
    And Claude Code asks the hook about "mcp__k8s__exec" with input '{"target": {"vm": "app-01"}, "command": "reboot"}'
    Then the hook answers "allow"

  Scenario: Recording a mutating tool as read-only does not weaken it
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    When the agent records tool "run" of server "ssh" as read-only
    Then the tool reports an error
    And the answer says "an agent cannot mark it read-only"
    And the catalog still calls tool "run" of server "ssh" "mutating"
