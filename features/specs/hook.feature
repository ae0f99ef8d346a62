Feature: The Claude Code hook
  Claude Code hands every tool call to `rewind hook pre-tool-use` before it runs. The hook allows
  read-only tools, puts unknown ones to the human, allows a mutating tool only when the VM it changes
  was guarded within the hook's window, and blocks what it cannot read: it fails closed.

  Scenario: Claude Code's own reading tools are allowed
    When Claude Code asks the hook about "Read" with input '{"file_path": "/etc/hosts"}'
    Then the hook answers "allow"
    And the hook's reason says "read-only"

  Scenario: An unknown tool is put to the human with the catalog's question
    When Claude Code asks the hook about "mcp__ansible__run_playbook" with input '{"hosts": "web-01"}'
    Then the hook answers "ask"
    And the hook's reason says "run_playbook"

  Scenario: A mutating tool on a VM nobody guarded is denied, telling the agent to guard it first
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "web-01", "command": "systemctl restart nginx"}'
    Then the hook answers "deny"
    And the hook's reason says "web-01"
    And the hook's reason says "zerto_guard_before_mutate"

  Scenario: A mutating tool is allowed once the agent has guarded that VM, and only that VM
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    And the agent has guarded "web-01" for change "nginx-conf"
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "web-01", "command": "systemctl restart nginx"}'
    Then the hook answers "allow"
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "db-01", "command": "systemctl restart postgres"}'
    Then the hook answers "deny"
    And the hook's reason says "db-01"

  Scenario: A VM guarded by name is known to the hook by its IP address too
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    And the agent has guarded "web-01" for change "by-address"
    When Claude Code asks the hook about "mcp__ssh__run" for the IP address of "web-01"
    Then the hook answers "allow"

  Scenario: A name that two guarded VMs share is put to the human, naming both
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    And the operator has guarded every VM named "build-agent", each by its vmIdentifier
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "build-agent", "command": "apt-get upgrade"}'
    Then the hook answers "ask"
    And the hook's reason says "build-agent"
    And the hook's reason says "Boston"
    And the hook's reason says "Denver"

  Scenario: A guard that was not guarded does not open the way
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    And Zerto shows VPG "web-dr" as Initializing
    And the operator runs `rewind guard db-01 --agent ops --action "migrate" --change mig-1`
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "db-01", "command": "psql -f migrate.sql"}'
    Then the hook answers "deny"

  Scenario: A VPG added to a guarded VM in Zerto makes the hook deny until the VM is guarded again
    Given the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    And the agent has guarded "db-01" for change "before-added"
    When someone adds VM "db-01" to VPG "app-tier" in Zerto
    And the operator runs `rewind find db-01`
    Then the answer says "app-tier began protecting db-01 after the guard of change before-added"
    And the journal records that VPG "app-tier" was added after the guard of "db-01"
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "db-01", "command": "psql -f migrate.sql"}'
    Then the hook answers "deny"
    And the hook's reason says "VPG app-tier began protecting db-01"
    When the agent guards "db-01" for change "after-added"
    And Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "db-01", "command": "psql -f migrate.sql"}'
    Then the hook answers "allow"

  Scenario: A guard older than the hook's window does not count
    Given the hook's window is 10 minutes
    And the operator has run `rewind catalog add-mutating ssh run --vm-arg host`
    And the operator has run `rewind guard web-01 --agent ops --action "edit app.conf" --change old-1`
    And that guard was 11 minutes ago
    When Claude Code asks the hook about "mcp__ssh__run" with input '{"host": "web-01"}'
    Then the hook answers "deny"
    And the hook's reason says "last 10 min"

  Scenario Outline: Input the hook cannot read is blocked
    When Claude Code sends the hook <input>
    Then the hook answers "deny"
    And the hook exits with 2
    And the hook's reason says "fail closed"

    Examples:
      | input                                                          |
      | ''                                                             |
      | '{not json'                                                    |
      | '{"hook_event_name": "PreToolUse"}'                            |
      | '{"hook_event_name": "PreToolUse", "tool_name": "", "tool_input": {}}' |

  Scenario: A catalog the hook cannot read blocks even a reading tool
    Given the tool catalog is damaged
    When Claude Code asks the hook about "Read" with input '{"file_path": "/etc/hosts"}'
    Then the hook answers "deny"
    And the hook exits with 2
    And the hook's reason says "fail closed"
