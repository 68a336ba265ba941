"""The closed sets of outcomes the layers hand each other, as ``Literal`` types: mypy (strict
equality) rejects a comparison with a value outside the set."""

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal
else:
    # At run time these names appear only in annotations, which are never evaluated: a
    # stand-in spares a cold start the typing import.
    class Literal:
        def __class_getitem__(cls, _values: object) -> type[str]:
            return str


# What reading the state file found (storage.store.load, the snapshot, the resume decision).
StateStatus = Literal[
    "absent", "ok", "invalid", "corrupt", "needs_migration", "too_new", "bad_version", "refused"
]
# What a lease means now (core.lease.lease_state).
LeaseState = Literal["none", "live", "idle", "stale", "ended", "dead_owner", "unreadable"]
# What a write does about the lease (services.leases.plan_lease).
LeaseAction = Literal["keep", "create", "adopt", "takeover"]
# What `session start|end` and `ping` did (services.leases).
SessionAction = Literal["created", "kept", "adopted", "takeover", "ended", "refreshed", "none"]
# What `migrate` did to one file (storage.state_repair.migrate_session).
MigrateStatus = Literal["current", "migrated", "would_migrate", "refused"]
# What `recover` did (storage.state_repair.recover).
RecoverAction = Literal["none", "restored_backup", "recreated"]
