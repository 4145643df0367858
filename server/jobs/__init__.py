"""What the CLI's commands run: batch jobs, backup, the daemon, hook install."""
