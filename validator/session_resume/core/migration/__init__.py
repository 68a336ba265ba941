"""Migration of state files between schema versions: one module per version step
(``v1_to_v2``, ``v2_to_v3``), the repair pass of a version's known defects (``repair_v3``),
and the chain that runs them (:func:`migrate`), all registered in
:data:`session_resume.core.versions.REGISTRY`."""

from session_resume.core.migration.chain import chain, migrate, repair_command
from session_resume.core.migration.context import LEGACY, MigrationError, MigrationResult

__all__ = ["LEGACY", "MigrationError", "MigrationResult", "chain", "migrate", "repair_command"]
