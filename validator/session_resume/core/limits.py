"""The size limits of the readers, shared by the pure parsers and the file readers."""

DEFAULT_MAX_SIZE = 8 * 1024 * 1024  # bytes a state file may have
