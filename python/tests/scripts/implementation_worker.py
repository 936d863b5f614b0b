"""A port of the seed document's "Example: Complete Implementation with Checkpoints", run as
a worker process that the tests kill (SIGKILL) partway and start again.

The only change an agent makes to switch is the import line. Two fixes to the seed's sketch,
which could not resume past its first subtask: `resume_agent_work` returns `None` data on a
fresh start (the seed then called `data.get`), and a worker that checkpointed a subtask has
cloned too (the seed re-cloned and then skipped every subtask).

Usage: implementation_worker.py OWNER REPO SESSION. Before each subtask's checkpoint it prints
`[GATE] i` and waits for a line on stdin, so a test can kill it at a known point; with stdin
closed it runs straight through. Output lines: `[DO] ...` for work done, `[SKIP] ...`.
"""

import sys

from forgestate.session_state import resume_agent_work, save_state

owner, repo, session_id = sys.argv[1:4]
agent_name = "implementation-worker"
issue_number = 42
subtasks = ["parse", "model", "api", "docs"]


def say(line):
    print(line, flush=True)


def clone_repository():
    say("[DO] clone")
    return "/work/issue-42"


def create_branch():
    say("[DO] branch")
    return "feat/issue-42"


def implement_subtask(i, subtask):
    say(f"[DO] subtask {i} {subtask}")


def implementation_with_checkpoints():
    # Check for resume
    data, phase = resume_agent_work(owner, repo, agent_name, session_id)
    data = data or {}

    if phase != "fresh_start":
        # Skip clone, restore state
        working_dir = data["working_dir"]
        branch_name = data["branch_name"]
    else:
        # Fresh start - do clone
        working_dir = clone_repository()
        branch_name = create_branch()

        # Checkpoint
        save_state(owner, repo, agent_name, session_id, "clone_complete",
                   working_dir=working_dir,
                   branch_name=branch_name,
                   issue_number=issue_number)

    # Continue with subtasks...
    if phase == "fresh_start" or phase == "clone_complete" or phase.startswith("subtask_"):
        completed = list(data.get("completed_subtasks", []))

        for i, subtask in enumerate(subtasks):
            if i in completed:
                say(f"[SKIP] Subtask {i} already completed")
                continue

            implement_subtask(subtask=subtask, i=i)
            completed.append(i)

            say(f"[GATE] {i}")
            sys.stdin.readline()

            # Checkpoint after each
            save_state(owner, repo, agent_name, session_id,
                       f"subtask_{i}_complete",
                       working_dir=working_dir,
                       branch_name=branch_name,
                       completed_subtasks=completed,
                       issue_number=issue_number)

    say("[DONE]")


implementation_with_checkpoints()
