"""The shell's hands: Redis, user code, the process's own memory, logging. Thin: they decide nothing."""
