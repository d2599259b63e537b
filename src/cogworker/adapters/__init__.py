"""The shell's hands: Redis, user code, process memory, logging. Thin: they decide nothing."""
