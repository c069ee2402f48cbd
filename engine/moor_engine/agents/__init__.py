"""What agent surfaces share: framing memory text for a model, AGENTS.md and rule files,
Claude Code's hooks and their kept answers, and which files an output may go into."""
