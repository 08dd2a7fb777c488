"""Worktree sessions: a session in a git worktree of its own, on a branch of its own, so
that agents working in one repository at once never write each other's files or the
user's checkout. Every piece of git work goes through the `git` command (`git.py`); the
rules that need no git (a branch's name, where a worktree goes) are pure (`naming.py`)."""
