"""Alembic migrations of the Sleuth schema (run by `storage.db.migrate`)."""
