"""Command implementations: each a thin shell over a library function."""
